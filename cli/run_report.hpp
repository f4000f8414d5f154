// How a run is shown on the console (and drawn as a roofline), shared by `lab run`, which just
// measured it, and `lab show`, which re-derives a recorded one.
#pragma once

#include <ostream>
#include <set>
#include <string>

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

plot::RooflineChart roofline_chart(const RunView& view);

}  // namespace lab::cli
