// Batch grading (`lab grade SUBMISSIONS_DIR`): one folder per student holding an answers file
// and a run record, found by content whatever their names; a CSV gradebook; the questions most
// students missed; and flags for the instructor: near-copies across the class (runs of different
// students whose medians agree within kNearCopyTolerance on every workload), the same run handed
// in twice, a folder whose name disagrees with its run's student. A flag never changes a score.
// Each folder is graded on its own: one unreadable file or folder is reported, the rest graded.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "submission.hpp"

namespace lab::grader {

// Two honest runs never agree this closely on every workload: run-to-run noise is ~1% or more.
inline constexpr double kNearCopyTolerance = 1e-3;

struct BatchEntry {
    std::string folder;
    std::string run_file;         // the run record found in the folder ("" when none)
    std::string student;
    std::string lesson;
    bool ok = false;              // graded (or reported not gradable) rather than failed
    std::string error;            // why it could not be graded at all
    GradeReport report;
    std::vector<std::string> flags;   // "near_copy:G2", "same_digest:G1", "folder_mismatch"

    // graded (course mode), practice (graded without a course key), refused (not gradable:
    // implausible, a quick run, ...), error (could not be read or bound)
    std::string status() const;
    std::string reason() const;   // why refused or in error; "" when graded
};

// A group of flagged submissions, with the evidence an instructor needs to decide.
struct FlagGroup {
    std::string id;                   // "G1"
    std::string kind;                 // near_copy | same_digest
    std::vector<std::string> folders;
    std::string evidence;
};

struct BatchResult {
    std::vector<BatchEntry> entries;
    std::vector<FlagGroup> groups;
    std::vector<std::pair<std::string, double>> most_missed;  // question -> fraction of students not correct
};

// `progress` (may be empty) is told each folder as it starts: its name, and how many of how many.
using BatchProgress = std::function<void(const std::string& folder, std::size_t done, std::size_t total)>;
BatchResult grade_directory(GradingContext& ctx, const std::filesystem::path& dir, const BatchProgress& progress = {});

// folder, student, lesson, score, max, status, reason, flags, then one column per question
// (points). Cells a spreadsheet would run as a formula (= + - @ first) are quoted with '.
std::string gradebook_csv(const BatchResult& r);

}  // namespace lab::grader
