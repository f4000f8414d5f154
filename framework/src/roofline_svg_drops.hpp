// Drop lines on the SVG roofline: from each point a thin dashed line, in its regime's colour,
// straight up to the roof that bounds it at its AI (min of its pipe's ceiling and AI x
// bandwidth, lab/roofline.hpp), so that how far below its roof a kernel runs reads as a length,
// as on Nsight Compute's roofline. Internal to roofline_plot; roofline_svg.cpp draws them right
// after the roofs, under every marker and label; labels avoid them where they can.
#pragma once

#include <vector>

#include "roofline_svg_canvas.hpp"

namespace lab::plot::detail {

// Draws the drop lines and returns boxes covering them, for labels to avoid. None for a point
// whose AI is withheld, that lies off the x axis or at infinite AI (not drawn at its AI), whose
// pipe has no ceiling on the chart, or that sits on or above its roof.
std::vector<Box> draw_drop_lines(Svg& s, const Layout& m);

}  // namespace lab::plot::detail
