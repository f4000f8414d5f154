// Writing what `lab grade` makes (the gradebook, and with --report the class page and the run
// pages in <stem>-reports/) so that a grading stopped at any moment (kill -9, a full disk) is
// never taken for a whole one. Each file is replaced atomically; the pages folder is made aside
// (.<pages>.lab-new-XXXXXX) and swapped in whole, so it holds the old grading's pages or the new
// one's, never some of each; while the folder, the class page and the gradebook are replaced one
// after the other, a marker beside the gradebook (<gradebook>.incomplete) says that they may be of
// two gradings, until the last is written. The next run removes what a stopped one left (the
// marker, temporary files and folders) and writes the whole set again. (docs/gradescope.md, "The
// class page".)
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "batch.hpp"
#include "class_report.hpp"

namespace lab::grader {

struct GradingOutputs {
    std::filesystem::path gradebook;
    std::string gradebook_csv;
    std::optional<ClassReportFiles> report;   // with --report
};

struct OutputsWritten {
    std::size_t student_pages = 0;
    std::size_t stale_removed = 0;        // pages of the last report whose submission is gone
    bool earlier_interrupted = false;     // a marker of a grading stopped half-way was found (and, with a report, repaired)
    std::size_t leftovers_removed = 0;    // temporary files and folders a stopped grading left
};

// The marker of a grading being written: <gradebook>.incomplete, beside it.
std::filesystem::path incomplete_marker(const std::filesystem::path& gradebook);

// Told the name of each step before it is taken ("pages", "swap", "class page", "gradebook",
// "done"): a test stops the writing there, as a kill would.
using WriteStep = std::function<void(const std::string& step)>;

// Writes the outputs. The pages folder may hold the operator's own files: they are kept (linked,
// else copied, into the new folder); the pages lab wrote are known by .lab-pages in the folder,
// and a page of the last report that is not written again is gone with the old folder (counted
// in stale_removed). Throws InputError when a file cannot be written; where that is before
// anything was replaced, the old set is left as it was, with no marker.
OutputsWritten write_grading_outputs(const GradingOutputs& outputs, const WriteStep& step = {});

}  // namespace lab::grader
