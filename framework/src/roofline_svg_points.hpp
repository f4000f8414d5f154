// The kernels on the SVG roofline: one marker per point (its regime's colour and shape), a label
// beside each where one fits without touching anything else, a leader line when the label had
// to move away from its point, a letter key where no label fits or the points are too many, and
// the key table under the plot that the letters refer to. Points drawn on the same spot share
// one label. Internal to roofline_plot; roofline_svg.cpp calls it after the roofs and their
// labels, so that point labels are placed around everything else.
#pragma once

#include <string>
#include <vector>

#include "roofline_svg_canvas.hpp"

namespace lab::plot::detail {

// Where each point's marker sits: at its AI, or on the edge of the x axis when it is off scale.
double point_x(const Svg& s, const Layout& m, std::size_t i);

// The markers' boxes: known before any label is placed, so that no label covers a point.
std::vector<Box> point_boxes(const Svg& s, const Layout& m);

// A row of the key table: the point's letter and what its letter stands for.
struct KeyRow {
    std::size_t point;   // index into Layout::drawn
    std::string text;    // "sgemm: AI 42.7 FLOP/B, 120 GFLOP/s, compute bound"
};

// Draws the points with their labels or letters; `taken` holds what labels must avoid and
// grows with each label, `faint` what they avoid where they can (the drop lines). Returns the
// rows the key table must hold (none when every point has its own label).
std::vector<KeyRow> draw_points(Svg& s, const Layout& m, std::vector<Box>& taken, const std::vector<Box>& faint);

// The key table's height, and the table itself from `top` down.
double key_table_height(const std::vector<KeyRow>& rows);
void draw_key_table(Svg& s, const Layout& m, const std::vector<KeyRow>& rows, double top);

}  // namespace lab::plot::detail
