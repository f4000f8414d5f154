// Drop lines on the SVG roofline (see roofline_svg_drops.hpp).
#include "roofline_svg_drops.hpp"

#include <lab/roofline.hpp>

#include <cmath>

#include "roofline_svg_points.hpp"
#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

// A line shorter than this (px) would hide under its own marker: the point is on its roof.
constexpr double kShortestDrop = kPointRadius + 2;

// The ceiling a point is held against: its pipe's, or the ridge's when it names none; nullptr
// when its pipe has no ceiling on the chart (its roof is unknown here, so none is drawn).
const Ceiling* held_against(const Layout& m, const Point& p) {
    if (p.pipe.empty()) return m.ridge_index >= 0 ? &m.ceilings[static_cast<std::size_t>(m.ridge_index)] : nullptr;
    for (const auto& c : m.ceilings)
        if (c.name == p.pipe) return &c;
    return nullptr;
}

}  // namespace

std::vector<Box> draw_drop_lines(Svg& s, const Layout& m) {
    std::vector<Box> covered;
    std::string lines;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point& p = *m.drawn[i];
        // A withheld AI gets none: a line ending on the slope reads as AI x bandwidth, a second
        // reading of the number the student is asked for.
        if (!p.ai_shown || m.off_scale[i] != 0 || std::isinf(p.ai)) continue;
        const Ceiling* c = held_against(m, p);
        if (!c) continue;
        const double roof = m.bandwidth > 0 ? roofline::roof(p.ai, c->flops, m.bandwidth) : c->flops;
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
