// Batch grading (`lab grade SUBMISSIONS_DIR`): one folder per submission holding answers files
// and run records, found by content whatever their names (submission_folder.hpp: each answers
// file graded against the run it names; one row per lesson); a CSV gradebook; the questions most
// students missed; and flags for the instructor: near-copies across the class (runs of different
// students whose medians agree within kNearCopyTolerance on every workload), the same run handed
// in twice, a folder whose name is another student's, a student graded in more than one row. A
// flag never changes a score. A row is its folder's owner's where the export's metadata or the
// roster tells who that is (submission_folder.hpp), so a classmate's run handed in there is
// refused in the copier's row, never filed under its victim. Each folder is graded on its own:
// one unreadable file or folder is reported, the rest graded. An export with one more level
// (DIR/export/{alice,bob}) is descended.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "submission.hpp"
#include "submission_folder.hpp"

namespace lab::grader {

// Two honest runs never agree this closely on every workload: run-to-run noise is ~1% or more.
inline constexpr double kNearCopyTolerance = 1e-3;

struct BatchEntry {
    std::string folder;
    std::string run_file;         // the run record found in the folder ("" when none)
    std::string student;          // whose row it is: the folder's owner where known ("" when lab cannot say)
    std::string run_student;      // whom the run was recorded for, as recorded ("" when no run could be read)
    std::string lesson;
    bool ok = false;              // graded (or reported not gradable) rather than failed
    std::string error;            // why it could not be graded at all
    GradeReport report;
    // "near_copy:G2", "same_digest:G1", "folder_mismatch", "duplicate_student", "group_member",
    // "run_in_other_folder:G1" on the row of a student whose run another folder holds (information),
    // and "bound_to_other_folder" on a row whose answers were made from a run another folder holds
    std::string answers_run;      // the digest the answers are bound to ("" when none)
    std::vector<std::string> flags;
    bool missing = false;             // a roster student with no submission (no folder)
    std::string error_kind;           // when not ok: tampered (digest mismatch) | unreadable | incomplete
    std::vector<std::string> ignored; // other runs of the lesson in the folder (older resubmissions)
    std::string latest_doubt;         // the runs' clocks and the files' times disagree on the latest ("" when not)
    // duplicate_student: the student's other rows of the lesson and how they stand ("heidi has
    // another row for lesson 02.08: folder 'xavier' (graded 6/6)"); part of reason() when this
    // row was not graded ("" when not a duplicate)
    std::string duplicate_note;

    // graded (course mode), practice (graded without a course key), refused (not gradable:
    // implausible, a quick run, another lesson than --lesson, ...), error (could not be read or
    // bound), missing (a roster student who handed in nothing)
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

// The grading spec a lesson of the class was graded with: a regrade after the spec was edited
// reads differently in every output that names it (the console, --json, the class page).
struct SpecUsed {
    std::string lesson;
    std::string file;
    std::string sha256;            // of the spec's bytes
    std::string plugin_version;    // the lesson plugin that derived the graded values
};
inline constexpr std::size_t kShortSha256 = 12;   // hex characters shown to a reader (the JSON has all 64)
// "lesson 02.08: spec configs/grading/02.08.yaml (sha256 1a2b3c4d5e6f), lesson plugin 1.0.0"
std::string spec_used_text(const SpecUsed& s);

struct BatchResult {
    std::vector<BatchEntry> entries;
    std::vector<FlagGroup> groups;
    std::vector<std::pair<std::string, double>> most_missed;  // question -> fraction of students not correct
    // The gradebook's question columns: by lesson, then in the spec's order.
    std::vector<std::pair<std::string, std::string>> questions;   // lesson, question id
    std::filesystem::path graded_dir;     // the folder whose subfolders were graded
    std::vector<std::string> notes;       // said once to the operator (a level descended, anonymous folders)
    // What the operator should look at before importing the gradebook: a roster that matches
    // none or only some of the students who handed in (likely the wrong --identity column), a
    // copy whose row was left without a student.
    std::vector<std::string> warnings;
    std::vector<SpecUsed> specs;          // one per lesson with question columns, whose spec could be read
};

struct BatchOptions {
    std::string lesson;                   // "": any; else other lessons' submissions are refused
    std::vector<std::string> roster;      // students expected (normalised); each without a row gets `missing`
    std::string roster_rule;              // how the roster's IDs were read (Roster::rule), for the warnings
};

// `progress` (may be empty) is told each folder as it starts: its name, and how many of how many.
using BatchProgress = std::function<void(const std::string& folder, std::size_t done, std::size_t total)>;
// Throws InputError (exit 2) for a path that is not a folder or holds no submission folders, and
// when a lesson handed in (answers and run naming it), or options.lesson, has no usable grading
// spec: that is the operator's to fix, not a row's error.
BatchResult grade_directory(GradingContext& ctx, const std::filesystem::path& dir, const BatchProgress& progress = {},
                            const BatchOptions& options = {});

// folder, student, lesson, score, max, status, reason, flags, then one column per question
// (points; "LESSON:id" when the gradebook holds several lessons). Cells a spreadsheet would run
// as a formula (= + - @ first) are quoted with '. Reasons are one line.
std::string gradebook_csv(const BatchResult& r);

}  // namespace lab::grader
