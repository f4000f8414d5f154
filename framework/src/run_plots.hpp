// The plots of a run: its roofline and every plot the lesson's derive() drew, as SVG documents.
// `lab run --plots` writes them to files and `lab report` puts them in its page: one function
// draws both, so the page shows exactly the files. Nothing here is lesson-specific: a new
// lesson's plots appear wherever its derive() adds them.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lab/lesson.hpp"
#include "roofline_plot.hpp"

namespace lab {

// The roofline of the run. Regimes the lesson withholds are drawn neutral, and withheld AIs and
// FLOP/s are drawn where they lie but written "?"; the ridge's value is
// shown only when nothing is withheld in a lesson that withholds something (a revealed view): it
// is a graded answer (02.05's ridge_point), and every lesson's plot shows the same device's ridge.
plot::RooflineChart roofline_chart(const LessonInfo& info, const RawRun& raw, const Derivation& derivation,
                                   const std::set<std::string>& withheld);

struct RunPlot {
    std::string name;       // "roofline" or the lesson's plot name: file-name safe
    std::string title;
    std::string svg;        // a standalone SVG document; empty when the plot is not drawn
    std::string not_drawn;  // why it is not drawn ("" when it is): what the reader is told instead
};

// The roofline first, then the lesson's plots in the order derive() drew them. Marks that show
// a withheld metric are left out. A roofline none of whose workloads can be placed on it (02.03
// measures loads, no FLOP) is not drawn: an empty plot would look like a failure, so its entry
// says why instead.
std::vector<RunPlot> run_plots(const LessonInfo& info, const RawRun& raw, const Derivation& derivation,
                               const std::set<std::string>& withheld);

}  // namespace lab
