// Roofline pictures: an SVG (log-log axes, ticks with units, one horizontal ceiling per pipe and
// dtype, the bandwidth slope, the ridge, kernels as labelled points, each with a dashed drop line
// up to the roof above it) and a small terminal sketch.
// Pure functions of a RooflineChart: no I/O, so tests can parse what they return. Both draw from
// one Layout (roofline_layout.hpp); they are written in roofline_svg.cpp and roofline_terminal.cpp.
#pragma once

#include <string>
#include <vector>

namespace lab::plot {

struct ComputeCeiling {
    std::string name;          // "fp32.simt"
    double flops_per_s = 0;    // > 0
    // Why this roof is not a plain calibrated one ("not trusted", "raised to dgemm's rate"): the
    // roof is drawn dashed and its label says so, so it does not look authoritative.
    std::string note = "";
};

struct Point {
    std::string label;         // workload name
    double ai = 0;             // FLOP/B; +inf allowed (drawn at the right edge, marked "AI -> inf").
                               // An outlier, more than 3 decades beyond the ridges and the other
                               // points, is off scale: the x axis is clipped to the rest and it is
                               // drawn at the axis's edge with an arrow and its AI.
    double flops_per_s = 0;    // achieved
    std::string regime;        // measured regime, "" when withheld (drawn neutral)
    // False where the value is a graded answer the reader must work out: the point is still drawn
    // where it lies, but no label, tooltip or attribute states the number ("AI ?").
    bool ai_shown = true;
    bool flops_shown = true;
    // The compute ceiling it is held against (its drop line rises to min(that, AI x bandwidth));
    // "" = the chart's ridge_pipe.
    std::string pipe = "";
    // False where its roof fraction is a graded answer: no drop line is drawn to its roof (the
    // line's length on a log axis is that fraction, read off with a ruler).
    bool roof_fraction_shown = true;
};

struct RooflineChart {
    std::string title;
    std::vector<ComputeCeiling> compute;   // at least one
    double bandwidth_bytes_per_s = 0;      // DRAM ceiling (> 0)
    std::string bandwidth_label;           // "DRAM (best of read/copy/triad)"
    std::string ridge_pipe;                // which compute ceiling the ridge marker uses
    bool show_ridge_value = true;          // false: the marked ridge is drawn but its value withheld ("?");
                                           // the fp64 ridge beside it always says its value
    std::vector<Point> points;
};

// A standalone SVG document.
std::string render_svg(const RooflineChart& chart);

// Why the chart is not worth drawing, "" when it is: no point can be placed on its log axes
// ("no workload can be placed on its log axes: chase_4k (0 FLOP), read_4k (0 FLOP) and 9 more").
// A roofline without points shows only the roofs; callers say this instead of drawing it.
std::string not_drawable(const RooflineChart& chart);

// A plain-text sketch (ASCII only), `width` x `height` characters of plot area plus axis labels.
std::string render_terminal(const RooflineChart& chart, int width = 64, int height = 16);

}  // namespace lab::plot
