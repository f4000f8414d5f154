// Drop lines on the SVG roofline (see roofline_svg_drops.hpp).
#include "roofline_svg_drops.hpp"

#include <cmath>

#include "roofline_svg_points.hpp"
#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

// A line shorter than this (px) would hide under its own marker: the point is on its roof.
constexpr double kShortestDrop = kPointRadius + 2;

}  // namespace

std::vector<Box> draw_drop_lines(Svg& s, const Layout& m) {
    std::vector<Box> covered;
    std::string lines;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point& p = *m.drawn[i];
        const auto drop = drop_roof(m, i);  // none where the AI is withheld, off the axis or has no roof here
        if (!drop) continue;
        const double roof = drop->roof;
        const Ceiling* c = drop->ceiling;
        const double x = point_x(s, m, i), y = s.y_of(p.flops_per_s), top = s.y_of(roof);
        if (y - top < kShortestDrop) continue;
        lines += fmt::format("<line class=\"drop-line\" data-label=\"{}\" data-pipe=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
                             "x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1\" stroke-opacity=\"0.55\" "
                             "stroke-dasharray=\"3 3\"/>\n",
                             xml_escape(p.label), xml_escape(c->name), x, y, x, top, regime_style(p.regime).color);
        for (const Box& b : line_boxes(x, top, x, y, kLinePad)) covered.push_back(b);
    }
    if (!lines.empty()) s.put("<g class=\"drop-lines\" clip-path=\"url(#plot-area)\">\n{}</g>\n", lines);
    return covered;
}

}  // namespace lab::plot::detail
