// The SVG page of a roofline (see roofline_svg_canvas.hpp).
#include "roofline_svg_canvas.hpp"

#include <algorithm>

#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

double overlap(const Box& a, const Box& b) {
    const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    return (w > 0 && h > 0) ? w * h : 0;
}

double area(const Box& a) { return (a.x1 - a.x0) * (a.y1 - a.y0); }

std::string_view anchor_name(Anchor a) {
    switch (a) {
        case Anchor::start: return "start";
        case Anchor::middle: return "middle";
        case Anchor::end: return "end";
    }
    return "start";
}

}  // namespace

double text_width(std::string_view s) { return static_cast<double>(code_points(s)) * kCharWidth; }

Box text_box(double x, double baseline, Anchor a, double width) {
    const double x0 = a == Anchor::start ? x : a == Anchor::end ? x - width : x - width / 2;
    return {x0, baseline - kFontSize * 0.8, x0 + width, baseline + kFontSize * 0.25};
}

Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const Box& bounds) {
    Placement best{x, y, Anchor::start, text_box(x, y, Anchor::start, width)};
    double best_score = HUGE_VAL;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        const Box b = text_box(x + c.dx, y + c.dy, c.anchor, width);
        double score = static_cast<double>(i);  // ties go to the earlier, preferred spot
        for (const auto& o : obstacles) score += overlap(b, o);
        score += 4 * (area(b) - overlap(b, bounds));
        if (score < best_score) {
            best_score = score;
            best = {x + c.dx, y + c.dy, c.anchor, b};
        }
    }
    return best;
}

void Svg::text(double x, double y, Anchor a, std::string_view raw, std::string_view cls, std::string_view extra) {
    put("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}{}>{}</text>\n", cls, x, y,
        anchor_name(a), extra.empty() ? "" : " ", extra, xml_escape(raw));
}

}  // namespace lab::plot::detail
