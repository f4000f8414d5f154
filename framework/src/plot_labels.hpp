// Where a plot's labels go: text boxes estimated from the font, what a label must avoid (other
// labels, markers, lines, a rotated label along a slope), and a greedy search for a free spot
// around what it labels, in rings further and further out. The search says how much overlap its
// best spot leaves, so that a caller can fall back (to a letter key) rather than print one label
// over another. Internal to the plots; the roofline and the x-y plots both place with it.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "plot_style.hpp"

namespace lab::plot::detail {

struct Box {
    double x0, y0, x1, y1;
};

enum class Anchor { start, middle, end };

std::string_view anchor_name(Anchor a);

// The area two boxes share (0 when they only touch).
double overlap(const Box& a, const Box& b);
bool intersects(const Box& a, const Box& b);

// The width a label takes at `size` (kFontSize by default), and the box around it from its
// anchor and baseline.
double text_width(std::string_view s, double size = kFontSize);
Box text_box(double x, double baseline, Anchor a, double width, double size = kFontSize);

// Boxes that together cover a straight line from (x0, y0) to (x1, y1), `pad` pixels either side:
// one box for a horizontal or vertical line, short pieces along a slanted one (a single box
// around a slanted line would cover the whole triangle under it).
std::vector<Box> line_boxes(double x0, double y0, double x1, double y1, double pad);

// Boxes that cover a label of `width` whose baseline's middle is at (x, y), turned by `angle`
// radians (negative: rising to the right), the whole of it, in pieces along the baseline.
std::vector<Box> rotated_text_boxes(double x, double y, double width, double angle);

// A spot for a label, relative to what it labels.
struct Offset {
    double dx, dy;
    Anchor anchor;
    bool far = false;  // far enough from its point to need a leader line back to it
};

// Spots around a marker of radius `r` at (0, 0): the eight directions on rings further and
// further out (`rings` of them), each ring tried whole before the next; a label on any but the
// first ring is `far`. `prefer_left`: the left side first on each ring (a point on the right
// edge, whose label would leave the plot on the right).
std::vector<Offset> ring_offsets(double r, int rings, bool prefer_left);

struct Placement {
    double x, y;
    Anchor anchor;
    Box box;
    double overlap = 0;  // what the spot shares with the obstacles and leaves outside the bounds
    bool far = false;
};

// Where a leader line from (x, y) meets the label's box: the box's nearest point.
std::pair<double, double> leader_end(double x, double y, const Box& b);

// The first candidate that overlaps nothing, lies inside `bounds`, and is plainly its own
// point's: nearer (x, y) than any of the `rivals` (other points' centres), or else `far` with a
// leader line that crosses nothing. Failing that, the one that overlaps least, with its overlap
// said.
Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const Box& bounds,
                      const std::vector<std::pair<double, double>>& rivals = {});

// The same with `faint` obstacles too (the roofline's dashed drop lines): a spot clear of them
// and of everything else if there is one, else of the spots clear of everything else the one
// that crosses them least, since a label over a faint line still reads and one that gives up its
// spot (becomes a letter key, or lands on another label) reads worse. The overlap said is that
// with the other obstacles.
Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const std::vector<Box>& faint, const Box& bounds,
                      const std::vector<std::pair<double, double>>& rivals = {});

}  // namespace lab::plot::detail
