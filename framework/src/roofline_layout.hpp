// The shared reading of a RooflineChart, before anything is drawn: which ceilings and points can
// be placed on log axes (and why the others cannot), which decades the axes span, which points
// lie off the x axis, how densely ticks are labelled, which colour and marker each regime gets,
// and which letter keys each point. The SVG and the terminal renderers both draw from this one
// Layout, so the two pictures never disagree.
// Internal to roofline_plot.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plot_style.hpp"
#include "roofline_plot.hpp"

namespace lab::plot::detail {

struct Ceiling {
    std::string name;
    double flops = 0;
    double ridge = 0;  // FLOP/B where the slope meets this ceiling; 0 without a bandwidth ceiling
    std::string note;  // ComputeCeiling::note
};

struct Layout {
    std::vector<Ceiling> ceilings;       // placeable ones, in the chart's order
    int ridge_index = -1;                // the ceiling whose ridge is marked
    int fp64_ridge_index = -1;           // an fp64 ceiling whose ridge is marked too (-1: none)
    int top_index = -1;                  // the highest ceiling: the slope ends at its ridge
    double bandwidth = 0;                // 0 when the chart has no usable bandwidth
    std::vector<const Point*> drawn;     // placeable points, in the chart's order
    std::vector<int> off_scale;          // per drawn point: -1 left of the x axis, +1 right of it, 0 on it
    std::vector<std::string> not_drawn;  // raw text: each renderer escapes it its own way
    int xlo = -2, xhi = 3;               // axis ranges in decades (log10)
    int ylo = 9, yhi = 13;
};

// The layout of `chart`; it points into chart.points, so the chart must outlive it.
Layout lay_out(const RooflineChart& chart);

// Labels every `step`-th decade so that at most about `max_labels` labels crowd an axis.
int decade_step(int lo, int hi, int max_labels);
bool on_step(int e, int step);

struct RegimeStyle {
    std::string key;     // which regime: "compute_bound", "undecided", "regime not shown", or the name given
    std::string label;   // what the legend says: "compute bound"
    std::string color;   // from the Okabe-Ito palette; grey when the regime is withheld
    Shape shape = Shape::circle;
    int rank = 0;        // the legend's order
};

// One colour and one marker shape per regime, recognising the synonyms students may write
// ("bandwidth bound"): the shape alone tells the regimes apart where colours do not.
RegimeStyle regime_style(const std::string& regime);

// Where the i-th drawn point's drop line ends: its roof, min(its ceiling, AI x bandwidth), against
// its pipe's ceiling (the marked ridge's when it names none). nullopt when none is drawn: its AI
// withheld (a line ending on the slope reads as AI x bandwidth, a second reading of the number
// asked for) or its roof fraction withheld (the line's length is it), off the x axis or infinite,
// or its pipe has no ceiling on the chart.
struct Drop {
    const Ceiling* ceiling = nullptr;  // the ceiling it is held against
    double roof = 0;                   // FLOP/s where the line ends
};
std::optional<Drop> drop_roof(const Layout& m, std::size_t i);

// The letter that keys the i-th drawn point, in the terminal's grid and the SVG's key table
// alike: A..Z, a..z, then '*'.
char point_letter(std::size_t i);

}  // namespace lab::plot::detail
