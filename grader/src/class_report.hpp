// The instructor's page of a graded class (`lab grade DIR --report class.html`): the score
// distribution, each question's share right / partial / wrong / unanswered / unreadable (most
// missed first), the class's devices (every readable run's ceilings on one roofline, graded or
// refused), the flagged groups with their evidence, and every submission with a link to its
// run's page (run_html.hpp), written beside it in <class>-reports/. All of it self-contained,
// all links relative.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "batch.hpp"
#include "lab/types.hpp"
#include "submission.hpp"

namespace lab::grader {

// One readable run's device and the ceilings its roofline is drawn from.
struct ClassDevice {
    std::string folder;
    std::string device;          // "cpu: AMD EPYC", "cuda: NVIDIA H200"
    double peak_flops = 0;       // fp32.simt, else the run's largest FLOP/s ceiling
    std::string peak_pipe;       // which ceiling peak_flops is
    double bandwidth = 0;        // bandwidth.best
};

// What the page shows beyond the batch result.
struct ClassPage {
    const BatchResult& result;
    std::string title;                            // "Class report: submissions/"
    std::string mode;                             // "course" or "practice"
    std::vector<ClassDevice> devices;             // every readable run, in folder order
    std::map<std::string, std::string> links;     // row key -> relative href of its page
    std::map<std::string, std::string> no_page;   // row key -> why it has no page
};

// A row's key in ClassPage's maps: its folder, with its lesson when the folder holds several
// lessons (one row each).
std::string row_key(const BatchResult& r, const BatchEntry& e);

// The device's peak and bandwidth as the class page compares them (0 for a ceiling the run
// lacks: such a run is listed, not drawn).
ClassDevice class_device(const std::string& folder, const RawRun& raw);

// The class's devices on one roofline: one line per kind of device (its median ceilings; the
// seven most common kinds), and every run's ridge point, so the spread within a kind shows.
Plot class_devices_plot(const std::vector<ClassDevice>& devices);

// The scores of graded (and practice) submissions as an SVG histogram: ten bins of 10% of the
// maximum.
std::string score_histogram_svg(const BatchResult& r);

std::string render_class_html(const ClassPage& page);

// The class page and each run's page, made and not yet written (grading_outputs.hpp writes them,
// with the gradebook, so that a grading stopped half-way is never taken for a whole one).
struct ClassReportFiles {
    std::filesystem::path out;                                  // the class page
    std::filesystem::path pages_dir;                            // <stem>-reports/ beside it
    std::string class_html;
    std::vector<std::pair<std::string, std::string>> pages;     // file name in pages_dir, its HTML
};

// Makes the class page and, for every submission whose run is readable and derivable, its page
// (<stem>-reports/<folder>.html). Student pages withhold what the grading spec's show_expected
// withholds from students now.
ClassReportFiles render_class_report(GradingContext& ctx, const BatchResult& r, const std::filesystem::path& submissions,
                                     const std::filesystem::path& out);

}  // namespace lab::grader
