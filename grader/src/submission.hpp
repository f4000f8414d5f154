// The grading pipeline for one submission, and what it needs across many: lesson plugins,
// grading specs and the course config, loaded once and kept. read run record (digest) -> re-derive
// with the lesson's code -> bind answers to the run -> plausibility -> evaluate.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "course.hpp"
#include "course_token.hpp"
#include "evaluate.hpp"
#include "lesson_host.hpp"
#include "spec.hpp"

namespace lab::grader {

class GradingContext {
public:
    // `key`: the course key (course mode), none: practice mode (identity.hpp).
    explicit GradingContext(std::optional<CourseKey> key = std::nullopt);
    // The lesson plugin and its grading spec (configs/grading/<ID>.yaml), checked against each
    // other on first use.
    const LoadedLesson& lesson(const std::string& id);
    const GradingSpec& spec(const std::string& id);
    const CourseConfig& course() const { return course_; }
    const std::optional<CourseKey>& key() const { return key_; }
    // --spec's file; else configs/grading/<ID>.yaml; else, where that is missing, <ID>.yaml beside
    // the lesson's plugin or in the folder above it (an instructor's lesson not yet installed, as
    // `lab validate` finds it).
    std::filesystem::path spec_file(const std::string& id);
    // Reads lesson `id`'s spec from `file` instead of the configuration folder (`--spec`: an
    // instructor trying a spec before installing it). Before the first spec(id).
    void use_spec_file(const std::string& id, std::filesystem::path file) { spec_files_[id] = std::move(file); }

private:
    std::map<std::string, std::filesystem::path> spec_files_;
    CourseConfig course_;
    std::optional<CourseKey> key_;
    LessonHost host_;
    std::map<std::string, GradingSpec> specs_;
};

// Grades `answers` against `run`. `lesson` ("" = the answers' lesson) must match both.
// Throws InputError for bad input (unreadable files, a broken digest, answers bound to another
// run or student), PluginError when the lesson's derivation fails.
// `submitter` (Gradescope's identity of who uploaded, `lab submit --as`): when given, the run
// must be that student's; an empty, anonymous or other student's run is refused (fails closed).
GradeReport grade_files(GradingContext& ctx, const std::string& lesson, const std::filesystem::path& answers,
                        const std::filesystem::path& run, const std::optional<std::string>& submitter = std::nullopt);

// The same, for a run already read (record::read_record, raw_run_from_record): a class's batch
// reads each record once, for its fingerprint and its grade.
GradeReport grade_read_run(GradingContext& ctx, const std::string& lesson, const std::filesystem::path& answers,
                           const nlohmann::json& record, const RawRun& raw, const std::filesystem::path& run_file,
                           const std::optional<std::string>& submitter = std::nullopt);

}  // namespace lab::grader
