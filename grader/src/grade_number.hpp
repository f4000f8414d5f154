// Grading a number answer (see evaluate.hpp for the whole submission): the tolerance band and its
// partial band, a sweep's steps, and what a fair grader says or accepts besides: a unit slip or a
// byte-prefix slip said (never graded up), the ref column's roof fraction, an error carried forward
// from the student's own earlier answers (Question::carried_from).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "evaluate.hpp"

namespace lab::grader {

// `claim` within the tolerance of `expected`, the band `scale` times as wide (the partial band).
bool within(double claim, double expected, const Tolerance& t, double scale);
// A value in the question's unit, as the student wrote it ("91 KiB", "512").
std::string in_unit(double si_value, const std::string& unit);
// `v` rounded to `digits` significant digits.
double round_to_digits(double v, int digits);

// Grades r.claim against `expected` (SI) under q's tolerance: sets verdict, expected, feedback.
// `default_unit` is the metric's, for a question without `unit:`; `claim_si` receives the claim read.
void grade_number(QuestionResult& r, const Question& q, double expected, const RawRun& raw, const std::string& default_unit,
                  double* claim_si = nullptr);

// A roof-fraction question also accepts the ref column's value (the share of the ceilings
// measured right after the kernel), said in the feedback.
void accept_reference_fraction(QuestionResult& r, const Question& q, const Submission& s, const MetricValue* metric);

// A number answer and its expected value, both in SI, by question id: what a later question
// carried from it compares with.
using NumberAnswers = std::map<std::string, std::pair<double, double>>;

// An answer worked out right from the student's own earlier answers (within x/÷ 3 of theirs) is
// graded against the expected value scaled as those were off, said in the feedback.
void accept_carried_forward(QuestionResult& r, const Question& q, double expected, const Submission& s, const std::string& unit,
                            const NumberAnswers& earlier);

}  // namespace lab::grader
