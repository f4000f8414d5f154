// How a run is shown on the console (and drawn as a roofline), shared by `lab run`, which just
// measured it, and `lab show`, which re-derives a recorded one.
#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "lab/lesson.hpp"
#include "roofline_plot.hpp"

namespace lab::cli {

struct RunView {
    const LessonInfo& info;
    const RawRun& raw;
    const Derivation& derivation;
    const std::set<std::string>& withheld;
    std::string ceilings_note;   // e.g. "(cached; `lab calibrate` measures them again)"
};

void print_run(std::ostream& out, const RunView& view);

// The roofline of the run. Regimes the lesson withholds are drawn neutral; the ridge's value is
// shown only when the view is revealed (it is a graded answer, 02.05's ridge_point, and every
// lesson's plot shows the same device's ridge).
plot::RooflineChart roofline_chart(const RunView& view);

// The graded metrics this view withholds, in declaration order: what `lab answers` asks for
// (the `check.*` helpers, withheld but never asked, are not among them).
std::vector<std::string> withheld_graded(const RunView& view);

}  // namespace lab::cli
