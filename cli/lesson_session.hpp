// Running a lesson and deriving its metrics, as `lab run` and `lab check` both do: find the
// plugin, bind the student's seed, measure in a child process, derive with the lesson's code.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"
#include "lesson_runner.hpp"
#include "plugin_loader.hpp"

namespace lab::cli {

struct LessonRequest {
    std::string id;
    std::string device = "auto";
    int threads = 0;
    bool quick = false;
    std::string student;          // as given (--student); resolved and normalised here
    std::string token;            // as given (--token); resolved here (course_token.hpp)
    // An audit re-measures a submission as it was made: its student, seed and quick flag (and
    // its token, recorded again), instead of resolving them here.
    std::optional<RunOptions> replay;
    std::string replay_token;
    double timeout_s = 0;         // 0: the lesson's budget x the runner's slack
    std::string trace_file;       // for the child (a partial name), "" = none
    std::string trace_final_name;
    // Called once the run goes ahead: here, when the child has opened the device with these
    // options; with --slurm, just before the job is queued (or, with --dry-run, shown).
    std::function<void()> on_going_ahead;
};

struct LessonOutcome {
    LoadedLesson lesson;
    ChildResult result;
    RawRun raw;
    Derivation derivation;
    double duration_s = 0;
    std::string started_at;
    std::string token;            // the token the run was made with, "" = none
};

LessonOutcome run_lesson(const LessonRequest& request);

// The request that measures a recorded run again as it was made (`lab run --replay`, `lab audit`):
// its lesson, device kind, student, seed, quick flag and token.
LessonRequest replay_request(const nlohmann::json& record);

}  // namespace lab::cli
