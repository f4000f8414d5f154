// The SVG page a roofline is drawn on: its geometry (plot area), the mapping from decades to
// pixels and text output with escaping. Labels are placed with plot_labels.hpp, in the shared
// look of plot_style.hpp. Internal to roofline_plot; roofline_svg*.cpp draw with it.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plot_labels.hpp"
#include "roofline_layout.hpp"

namespace lab::plot::detail {

inline constexpr double kWidth = 760;
inline constexpr double kHeight = 520;
inline constexpr double kLeft = 110;   // room for "100 GFLOP/s" and the axis title
inline constexpr double kRight = 728;  // points at infinite AI sit on this edge
inline constexpr double kTop = 50;
inline constexpr double kBottom = 442;
inline constexpr double kPointRadius = 5;
inline constexpr std::size_t kNoteLineChars = 112;
inline constexpr double kKeyLeft = 20;  // the key table and the notes under the plot start here
// Lines are obstacles this wide either side, so that no label is printed across one.
inline constexpr double kLinePad = 2;

// The document being written, with the layout's axes mapped onto the plot area.
class Svg {
public:
    explicit Svg(const Layout& m) : m_(m) {}

    double px(double log_x) const {
        return kLeft + (log_x - m_.xlo) / (m_.xhi - m_.xlo) * (kRight - kLeft);
    }
    double py(double log_y) const {
        return kBottom - (log_y - m_.ylo) / (m_.yhi - m_.ylo) * (kBottom - kTop);
    }
    double x_of(double ai) const { return std::isinf(ai) ? kRight : px(std::log10(ai)); }
    double y_of(double flops) const { return py(std::log10(flops)); }
    double px_per_x_decade() const { return (kRight - kLeft) / (m_.xhi - m_.xlo); }
    double px_per_y_decade() const { return (kBottom - kTop) / (m_.yhi - m_.ylo); }

    template <typename... Args>
    void put(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(std::back_inserter(out_), f, std::forward<Args>(args)...);
    }

    // A <text> element; `raw` is escaped, `extra` holds further attributes as they are.
    void text(double x, double y, Anchor a, std::string_view raw, std::string_view cls,
              std::string_view extra = "");

    std::string& out() { return out_; }

private:
    const Layout& m_;
    std::string out_;
};

}  // namespace lab::plot::detail
