// Reporters: the same GradeReport for each audience, peers behind plain functions. What a
// student may see (expected values, hidden questions) is decided here, never while scoring.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "evaluate.hpp"

namespace lab::grader {

// The table a student reads after `lab submit`: question, claim, verdict, points, hint; the
// expected value only when the spec's show_expected allows it; hidden questions masked.
std::string console_report(const GradeReport& r);

// `lab submit --json`: the same data as the console, as JSON.
nlohmann::json json_report(const GradeReport& r);

// Gradescope's results.json: one test per question (name, number "1.n", score, max_score,
// status, output, visibility; hidden questions "after_published").
nlohmann::json gradescope_results(const GradeReport& r, double execution_time_s);

// A results.json for when grading itself failed or the submission was refused as bad input:
// score 0, the message for the student, the diagnostic in a test only instructors see, the time
// taken, and `extra_data` saying it was not graded and why (in the student's words). With the
// lesson's spec, each question is listed at 0 of its points, so the student sees what the
// assignment was worth and that nothing was graded.
nlohmann::json gradescope_failure(const std::string& student_message, const std::string& diagnostic,
                                  double execution_time_s = 0, const GradingSpec* spec = nullptr);

}  // namespace lab::grader
