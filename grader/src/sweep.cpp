// Placing values on a sweep (see sweep.hpp).
#include "sweep.hpp"

#include <algorithm>
#include <cmath>

namespace lab::grader {

bool geometric_sweep(const std::vector<double>& pts) {
    if (pts.empty() || pts.front() <= 0) return false;
    double min_ratio = HUGE_VAL, max_ratio = 0, min_diff = HUGE_VAL, max_diff = 0;
    for (std::size_t i = 1; i < pts.size(); ++i) {
        min_ratio = std::min(min_ratio, pts[i] / pts[i - 1]);
        max_ratio = std::max(max_ratio, pts[i] / pts[i - 1]);
        min_diff = std::min(min_diff, pts[i] - pts[i - 1]);
        max_diff = std::max(max_diff, pts[i] - pts[i - 1]);
    }
    // One point, or two: nothing tells the scales apart; a positive sweep reads as geometric.
    return pts.size() < 3 || max_ratio / min_ratio <= max_diff / min_diff;
}

int nearest_point(const std::vector<double>& pts, double v) {
    const bool log_scale = geometric_sweep(pts) && v > 0;
    auto distance = [&](double p) { return log_scale ? std::fabs(std::log(p / v)) : std::fabs(p - v); };
    int best = 0;
    for (int i = 1; i < static_cast<int>(pts.size()); ++i)
        if (distance(pts[i]) < distance(pts[best])) best = i;
    return best;
}

bool on_sweep(const std::vector<double>& pts, double v) {
    const double p = pts[nearest_point(pts, v)];
    return std::fabs(p - v) <= 1e-9 * std::fabs(v);
}

}  // namespace lab::grader
