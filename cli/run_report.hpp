// How a run is shown on the console (and drawn as a roofline), shared by `lab run`, which just
// measured it, and `lab show`, which re-derives a recorded one.
#pragma once

#include <filesystem>
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

// The roofline of the run (run_plots.hpp says what it withholds).
plot::RooflineChart roofline_chart(const RunView& view);

// The graded metrics this view withholds, in declaration order: what `lab answers` asks for
// (the `check.*` helpers, withheld but never asked, are not among them).
std::vector<std::string> withheld_graded(const RunView& view);

// Writes the run's plots (its roofline and the lesson's own) as DIR/<plot>-<ID>.svg, creating
// DIR: each line a written file, or why a plot was not drawn. `lab run --plots`, `lab show --plots`.
std::vector<std::string> write_plot_files(const std::filesystem::path& dir, const RunView& view);

// InputError (naming DIR and --plots) when DIR cannot be created or written in: tried before the
// work whose plots go there, so that a bad folder stops the command before it prints or measures.
void check_plots_writable(const std::filesystem::path& dir);

// Where an HTML page of a run goes (`lab report --out`, `lab run --report`): `out`, checked to be
// a file name and not the run record `run` itself. UsageError naming `flag` otherwise.
std::filesystem::path report_path(const std::string& flag, const std::filesystem::path& out, const std::filesystem::path& run);

}  // namespace lab::cli
