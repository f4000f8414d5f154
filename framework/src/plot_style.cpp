// The shared look of lab's SVG plots (see plot_style.hpp).
#include "plot_style.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

namespace lab::plot::detail {
namespace {

using Pt = std::pair<double, double>;

// A closed path through `pts`, offset to (x, y).
std::string polygon(const std::vector<Pt>& pts, double x, double y) {
    std::string d;
    for (std::size_t i = 0; i < pts.size(); ++i)
        d += fmt::format("{}{:.1f} {:.1f} ", i == 0 ? "M " : "L ", x + pts[i].first, y + pts[i].second);
    return d + "Z";
}

// A plus sign of arm length `arm` and half thickness `t`, turned by `turn` radians (pi/4: an x).
std::vector<Pt> plus_points(double arm, double t, double turn) {
    const std::array<Pt, 12> base = {{{-t, -arm}, {t, -arm}, {t, -t}, {arm, -t}, {arm, t}, {t, t},
                                      {t, arm}, {-t, arm}, {-t, t}, {-arm, t}, {-arm, -t}, {-t, -t}}};
    std::vector<Pt> out;
    const double c = std::cos(turn), s = std::sin(turn);
    for (const auto& [px, py] : base) out.push_back({px * c - py * s, px * s + py * c});
    return out;
}

// The outline of each shape around (0, 0). Sizes give each about the circle's area, so that no
// regime looks more important than another.
std::vector<Pt> outline(Shape shape, double r) {
    switch (shape) {
        case Shape::square: {
            const double h = 0.89 * r;
            return {{-h, -h}, {h, -h}, {h, h}, {-h, h}};
        }
        case Shape::triangle:
        case Shape::triangle_down: {
            const double side = 2.6 * r, height = side * std::sqrt(3.0) / 2;
            const double sign = shape == Shape::triangle ? 1 : -1;  // the apex up, or down
            return {{0, -sign * 2 * height / 3}, {side / 2, sign * height / 3}, {-side / 2, sign * height / 3}};
        }
        case Shape::diamond: {
            const double d = 1.25 * r;
            return {{0, -d}, {d, 0}, {0, d}, {-d, 0}};
        }
        case Shape::cross: return plus_points(1.35 * r, 0.42 * r, std::numbers::pi / 4);
        case Shape::plus: return plus_points(1.2 * r, 0.42 * r, 0);
        case Shape::star: {
            std::vector<Pt> pts;
            const double outer = 1.45 * r, inner = 0.6 * r;
            for (int k = 0; k < 10; ++k) {
                const double a = -std::numbers::pi / 2 + k * std::numbers::pi / 5;
                const double rad = k % 2 ? inner : outer;
                pts.push_back({rad * std::cos(a), rad * std::sin(a)});
            }
            return pts;
        }
        case Shape::circle: break;
    }
    return {};
}

}  // namespace

std::string_view shape_name(Shape s) {
    switch (s) {
        case Shape::circle: return "circle";
        case Shape::square: return "square";
        case Shape::triangle: return "triangle";
        case Shape::diamond: return "diamond";
        case Shape::cross: return "cross";
        case Shape::triangle_down: return "triangle-down";
        case Shape::plus: return "plus";
        case Shape::star: return "star";
    }
    return "circle";
}

std::string series_colour(std::size_t i) {
    static constexpr std::array<const char*, 7> kSeries = {kOkabeIto[0], kOkabeIto[1], kOkabeIto[2], kOkabeIto[3],
                                                           kOkabeIto[4], kOkabeIto[5], kOkabeIto[7]};
    return kSeries[i % kSeries.size()];
}

Shape series_shape(std::size_t i) { return static_cast<Shape>(i % kShapeCount); }

std::string marker(Shape s, double x, double y, double r, std::string_view attrs, std::string_view inner) {
    const char* tag = s == Shape::circle ? "circle" : "path";
    std::string out = s == Shape::circle
                          ? fmt::format("<circle {} data-shape=\"circle\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"", attrs, x, y, r)
                          : fmt::format("<path {} data-shape=\"{}\" data-x=\"{:.1f}\" data-y=\"{:.1f}\" d=\"{}\"", attrs,
                                        shape_name(s), x, y, polygon(outline(s, r), x, y));
    return inner.empty() ? out + "/>" : fmt::format("{}>{}</{}>", out, inner, tag);
}

std::string axis_title(std::string_view label, std::string_view unit, bool log) {
    std::string t(label);
    if (!unit.empty() && log) return t + " (" + std::string(unit) + ", log)";
    if (!unit.empty()) return t + " (" + std::string(unit) + ")";
    return log ? t + " (log)" : t;
}

}  // namespace lab::plot::detail
