// The look every SVG plot of lab shares, the roofline and the lessons' x-y plots alike: one font
// (family and sizes), one frame and tick style, one way of titling an axis, and one set of
// markers. Colours come from the Okabe-Ito palette, which stays distinct under the common forms
// of colour blindness, and every series or regime also gets its own marker shape, so that
// nothing is told by colour alone (a grey-scale print keeps the distinction too).
// Internal to the plots.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lab::plot::detail {

inline constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";
inline constexpr double kFontSize = 11;       // tick labels, point labels, legends
inline constexpr double kAxisTitleSize = 12;
inline constexpr double kTitleSize = 15;
inline constexpr double kCharWidth = 6.3;     // a typical glyph of kFontFamily at kFontSize
inline constexpr const char* kFrameColour = "#888";
inline constexpr const char* kGridColour = "#dadada";
inline constexpr double kTickLength = 6;

// Okabe & Ito (2008), "Color universal design": the eight colours, black last.
inline constexpr const char* kOkabeIto[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                            "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
inline constexpr const char* kNeutralGrey = "#8c8c8c";

enum class Shape { circle, square, triangle, diamond, cross, triangle_down, plus, star };
inline constexpr int kShapeCount = 8;

std::string_view shape_name(Shape s);

// The i-th series' colour and shape. Yellow (#F0E442) is skipped for series: thin lines of it
// vanish on white.
std::string series_colour(std::size_t i);
Shape series_shape(std::size_t i);

// One marker centred on (x, y), `r` its radius (the circle's; other shapes are sized to look as
// heavy). `attrs` are further attributes written as they are (class, data-*, fill, stroke);
// `inner`, markup inside the element (a <title> tooltip). A circle is a <circle>, every other
// shape a <path> with its centre in data-x and data-y; both carry data-shape.
std::string marker(Shape s, double x, double y, double r, std::string_view attrs, std::string_view inner = "");

// An axis title as every plot writes it: "arithmetic intensity (FLOP/B, log)",
// "batch (log)", "time (s)", "threads".
std::string axis_title(std::string_view label, std::string_view unit, bool log);

}  // namespace lab::plot::detail
