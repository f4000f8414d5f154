// Grading a word answer (see evaluate.hpp for the whole submission): a regime (either of two when
// the run could not decide, the rule applied to the ceilings shown, either side near the ridge),
// a choice ("A or B" on a boundary), yes or no. Each sets the result's expected value, verdict and
// feedback from the question and the metric the lesson's code re-derived (nullptr: the spec's value).
#pragma once

#include <string>

#include "evaluate.hpp"

namespace lab::grader {

// A word answer as it is matched: case, blanks, hyphens, underscores and a closing full stop
// aside ("Memory bound." reads as "memory bound").
std::string answer_key(const std::string& claim);
// yes/true/y or no/false/n, any case; false when `s` is neither.
bool parse_bool(std::string s, bool& out);

void grade_regime(QuestionResult& r, const Question& q, const MetricValue* metric, const Submission& s);
void grade_choice(QuestionResult& r, const Question& q, const MetricValue* metric);
void grade_yes_no(QuestionResult& r, const Question& q, const MetricValue* metric);

}  // namespace lab::grader
