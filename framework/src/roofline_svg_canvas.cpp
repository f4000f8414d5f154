// The SVG page of a roofline (see roofline_svg_canvas.hpp).
#include "roofline_svg_canvas.hpp"

#include "roofline_text.hpp"

namespace lab::plot::detail {

void Svg::text(double x, double y, Anchor a, std::string_view raw, std::string_view cls, std::string_view extra) {
    put("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}{}>{}</text>\n", cls, x, y,
        anchor_name(a), extra.empty() ? "" : " ", extra, xml_escape(raw));
}

}  // namespace lab::plot::detail
