// The grading pipeline for one submission, and what it needs across many: lesson plugins,
// grading specs and the course config, loaded once and kept. read run record (digest) -> re-derive
// with the lesson's code -> bind answers to the run -> plausibility -> evaluate.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "course.hpp"
#include "evaluate.hpp"
#include "lesson_host.hpp"
#include "spec.hpp"

namespace lab::grader {

class GradingContext {
public:
    GradingContext();
    // The lesson plugin and its grading spec (configs/grading/<ID>.yaml), checked against each
    // other on first use.
    const LoadedLesson& lesson(const std::string& id);
    const GradingSpec& spec(const std::string& id);
    const CourseConfig& course() const { return course_; }
    std::filesystem::path spec_file(const std::string& id) const;

private:
    CourseConfig course_;
    LessonHost host_;
    std::map<std::string, GradingSpec> specs_;
};

// Grades `answers` against `run`. `lesson` ("" = the answers' lesson) must match both.
// Throws InputError for bad input (unreadable files, a broken digest, answers bound to another
// run or student), PluginError when the lesson's derivation fails.
GradeReport grade_files(GradingContext& ctx, const std::string& lesson, const std::filesystem::path& answers,
                        const std::filesystem::path& run);

}  // namespace lab::grader
