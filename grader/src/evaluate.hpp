// Grading one submission: plausibility of the run first, then every question's claim against
// the value re-derived from the run's raw measurements by the lesson's own code. The result is
// plain data; reporters (console, JSON, Gradescope) decide what each audience sees.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "answers.hpp"
#include "course.hpp"
#include "course_token.hpp"
#include "lab/lesson.hpp"
#include "lesson_plan.hpp"
#include "plausibility.hpp"
#include "spec.hpp"

namespace lab::grader {

enum class Verdict { correct, partial, wrong, missing, invalid, void_question };
const char* to_string(Verdict v);

struct QuestionResult {
    Question question;
    Verdict verdict = Verdict::missing;
    double points = 0;
    double max_points = 0;         // 0 when void
    std::string claim;             // as written
    std::string expected;          // formatted, for reports that may show it
    std::string feedback;          // why (the tolerance, the unit error, "either regime accepted near the ridge")
    bool advises = false;          // the feedback tells the student about their own answer (a unit slip, a misspelt id)
};

struct GradeReport {
    std::string lesson;
    std::string student;
    std::string run_digest;
    std::string device;            // "cpu: Intel(R) ..." / "cuda: NVIDIA H200"
    bool graded = false;           // false: not graded (implausible run, quick run not accepted, ...)
    std::vector<std::string> problems;   // why it was not graded
    std::vector<QuestionResult> results;
    std::vector<std::string> notes;      // said to the student, not held against them ("'ridge_piont' is not a question")
    std::vector<std::string> unasked;    // the answers' keys that are no question of the spec (each said in notes)
    double score = 0;
    double max_score = 0;
    bool show_expected = false;    // the spec's policy, resolved for now
    // "course" when a course key checked the run's token, else "practice" (identity.hpp): a
    // practice grade is for the student's own use, never a course's gradebook of record.
    std::string mode = "practice";
};


struct Submission {
    const GradingSpec& spec;
    const LessonInfo& info;
    const nlohmann::json& record;   // already read (digest checked)
    const RawRun& raw;
    const Derivation& derivation;   // re-derived by the lesson's code
    const AnswersFile& answers;
    // The course (its salt re-derives each student's seed); nullptr: configs/course.yaml.
    const CourseConfig* course = nullptr;
    // What differs between the run's workloads and the lesson's plan replayed against it
    // (replay_plan): a run the lesson as installed would not have measured is not graded.
    std::vector<std::string> plan_problems = {};
    // The course key (course mode); none: practice mode.
    std::optional<CourseKey> key = std::nullopt;
    // The run record's file, named in messages about the run ("" when it was not read from one).
    std::filesystem::path run_file = {};
};

// Refusals that are bad input, not a grade (exit 2): answers for another lesson, run or student.
void check_binding(const Submission& s);

GradeReport grade(const Submission& s);

// What `lab validate` and `lab check-spec` warn of by holding the spec against the lesson's values
// on its model devices (lesson_plan.hpp, model_values), or against recorded runs (`check-spec
// --run`): a tolerance narrower than the value as lab prints it (3 significant figures), more than
// 10x the value everywhere (abs written in base units), or reaching 0 everywhere (a student who
// measured nothing passes); a choice or yes/no question on a category value no answer can match.
// `everywhere` names the values' set in the messages. One line each, with file:line and a fix.
std::vector<std::string> model_value_warnings(const GradingSpec& spec, const std::map<std::string, std::vector<ModelValue>>& values,
                                              const std::string& everywhere = "every model device");

// show_expected resolved against the due date and today (UTC).
bool expected_visible(const GradingSpec& spec);

}  // namespace lab::grader
