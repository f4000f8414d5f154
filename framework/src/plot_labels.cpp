// Where a plot's labels go (see plot_labels.hpp).
#include "plot_labels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

double area(const Box& a) { return (a.x1 - a.x0) * (a.y1 - a.y0); }

// How far above and below its baseline a line of text reaches, as fractions of the font size.
constexpr double kAscent = 0.8, kDescent = 0.25;
// A leader starts this far from its point's centre: outside the marker and the box around it.
constexpr double kLeaderClear = 8;

}  // namespace

std::string_view anchor_name(Anchor a) {
    switch (a) {
        case Anchor::start: return "start";
        case Anchor::middle: return "middle";
        case Anchor::end: return "end";
    }
    return "start";
}

double overlap(const Box& a, const Box& b) {
    const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    return (w > 0 && h > 0) ? w * h : 0;
}

bool intersects(const Box& a, const Box& b) { return overlap(a, b) > 0; }

double text_width(std::string_view s, double size) {
    return static_cast<double>(code_points(s)) * kCharWidth * size / kFontSize;
}

Box text_box(double x, double baseline, Anchor a, double width, double size) {
    const double x0 = a == Anchor::start ? x : a == Anchor::end ? x - width : x - width / 2;
    return {x0, baseline - size * kAscent, x0 + width, baseline + size * kDescent};
}

std::vector<Box> line_boxes(double x0, double y0, double x1, double y1, double pad) {
    const double len = std::hypot(x1 - x0, y1 - y0);
    const double slant = std::min(std::fabs(x1 - x0), std::fabs(y1 - y0));
    // Pieces no longer than 6 px: their boxes then stray at most a few px off the line.
    const int pieces = slant < 1 ? 1 : std::max(1, static_cast<int>(std::ceil(len / 6)));
    std::vector<Box> out;
    for (int i = 0; i < pieces; ++i) {
        const double t0 = static_cast<double>(i) / pieces, t1 = static_cast<double>(i + 1) / pieces;
        const double ax = x0 + (x1 - x0) * t0, ay = y0 + (y1 - y0) * t0;
        const double bx = x0 + (x1 - x0) * t1, by = y0 + (y1 - y0) * t1;
        out.push_back({std::min(ax, bx) - pad, std::min(ay, by) - pad, std::max(ax, bx) + pad, std::max(ay, by) + pad});
    }
    return out;
}

std::vector<Box> rotated_text_boxes(double x, double y, double width, double angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    // The middle of the glyphs' height, above the baseline: perpendicular to it, "up" the page.
    const double mid = kFontSize * (kAscent - kDescent) / 2;
    const double cx = x + s * mid, cy = y - c * mid;
    const double height = kFontSize * (kAscent + kDescent);
    const int pieces = std::max(1, static_cast<int>(std::ceil(width / 10)));
    const double piece = width / pieces;
    // The axis-aligned box around one rotated piece, piece x height.
    const double hw = (piece * std::fabs(c) + height * std::fabs(s)) / 2;
    const double hh = (piece * std::fabs(s) + height * std::fabs(c)) / 2;
    std::vector<Box> out;
    for (int i = 0; i < pieces; ++i) {
        const double along = -width / 2 + piece * (i + 0.5);
        const double px = cx + c * along, py = cy + s * along;
        out.push_back({px - hw, py - hh, px + hw, py + hh});
    }
    return out;
}

std::vector<Offset> ring_offsets(double r, int rings, bool prefer_left) {
    const double height = kFontSize * (kAscent + kDescent);
    // Directions on the page, y down: right, up-right, down-right, up, down, then the left side
    // likewise; the left side first when asked. A diagonal spot has its corner at (gap, gap), so
    // that it clears a marker as well as the straight ones do.
    static constexpr std::array<std::array<int, 2>, 8> kRight = {{{1, 0}, {1, -1}, {1, 1}, {0, -1}, {0, 1}, {-1, 0}, {-1, -1}, {-1, 1}}};
    static constexpr std::array<std::array<int, 2>, 8> kLeft = {{{-1, 0}, {-1, -1}, {-1, 1}, {0, -1}, {0, 1}, {1, 0}, {1, -1}, {1, 1}}};
    const auto& dirs = prefer_left ? kLeft : kRight;
    std::vector<Offset> out;
    for (int ring = 0; ring < rings; ++ring) {
        // The label's nearest edge this far from the marker's centre.
        const double gap = r + 4 + 13.0 * ring;
        for (const auto& [sx, sy] : dirs) {
            const Anchor a = sx > 0 ? Anchor::start : sx < 0 ? Anchor::end : Anchor::middle;
            // The box's middle, moved so that its near edge (top or bottom) is at the gap.
            const double centre_y = sy * (gap + height / 2);
            const double baseline = centre_y + height / 2 - kFontSize * kDescent;
            out.push_back({sx * gap, baseline, a, ring > 0});
        }
    }
    return out;
}

std::pair<double, double> leader_end(double x, double y, const Box& b) {
    return {std::clamp(x, b.x0, b.x1), std::clamp(y, b.y0, b.y1)};
}

namespace {

double distance(double x, double y, const Box& b) {
    const auto [tx, ty] = leader_end(x, y, b);
    return std::hypot(tx - x, ty - y);
}

// The part of a label's box at its anchor: the first 24 px of it, the last, or the middle.
Box anchor_end(const Box& b, Anchor a) {
    constexpr double kHead = 24;
    if (b.x1 - b.x0 <= kHead) return b;
    if (a == Anchor::start) return {b.x0, b.y0, b.x0 + kHead, b.y1};
    if (a == Anchor::end) return {b.x1 - kHead, b.y0, b.x1, b.y1};
    const double mid = (b.x0 + b.x1) / 2;
    return {mid - kHead / 2, b.y0, mid + kHead / 2, b.y1};
}

// How much of a leader line from (x, y) to the box runs over obstacles: a leader across a roof or
// another label would tie the label to the wrong thing. Checked from just outside the marker.
double leader_blocked(double x, double y, const Box& b, const std::vector<Box>& obstacles) {
    const auto [tx, ty] = leader_end(x, y, b);
    const double len = std::hypot(tx - x, ty - y);
    double hits = 0;
    for (double d = kLeaderClear; d < len; d += 2) {
        const double sx = x + (tx - x) * d / len, sy = y + (ty - y) * d / len;
        for (const auto& o : obstacles)
            if (sx > o.x0 && sx < o.x1 && sy > o.y0 && sy < o.y1) hits += 1;
    }
    return hits;
}

}  // namespace

Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const Box& bounds, const std::vector<std::pair<double, double>>& rivals) {
    return place_label(x, y, width, candidates, obstacles, {}, bounds, rivals);
}

Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const std::vector<Box>& faint, const Box& bounds,
                      const std::vector<std::pair<double, double>>& rivals) {
    Placement best{x, y, Anchor::start, text_box(x, y, Anchor::start, width), HUGE_VAL, false};
    double best_score = HUGE_VAL;
    std::optional<Placement> free_spot;  // the first clear of all but faint lines, crossing the least of them
    double least_crossed = HUGE_VAL;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        const Box b = text_box(x + c.dx, y + c.dy, c.anchor, width);
        double shared = 4 * (area(b) - overlap(b, bounds));
        for (const auto& o : obstacles) shared += overlap(b, o);
        if (c.far) shared += 20 * leader_blocked(x, y, b, obstacles);
        // A label as near another point as its own (without a leader to say which) reads as
        // that point's.
        // A reader ties a label to what is near the end it starts from (its anchor), so only
        // that end counts.
        if (!c.far) {
            const Box head = anchor_end(b, c.anchor);
            const double own = distance(x, y, head);
            for (const auto& [rx, ry] : rivals)
                if ((rx != x || ry != y) && distance(rx, ry, head) < own + 3) shared += 30;
        }
        double crossed = 0;
        for (const auto& o : faint) crossed += overlap(b, o);
        if (shared == 0 && crossed == 0) return {x + c.dx, y + c.dy, c.anchor, b, 0, c.far};
        if (shared == 0 && crossed < least_crossed) {
            least_crossed = crossed;
            free_spot = Placement{x + c.dx, y + c.dy, c.anchor, b, 0, c.far};
        }
        // Of spots that overlap, a nearer one wins a tie.
        const double score = shared + 0.01 * static_cast<double>(i);
        if (score < best_score) {
            best_score = score;
            best = {x + c.dx, y + c.dy, c.anchor, b, shared, c.far};
        }
    }
    return free_spot ? *free_spot : best;
}

}  // namespace lab::plot::detail
