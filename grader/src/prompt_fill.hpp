// A question's prompt with the student's own variant filled in. Specs name a run's per-student
// parameters by their metric names ("the prefill of question_seq tokens"); each whole word
// question_<name> that the run has as a metric is replaced by its value as lab prints it ("the
// prefill of 512 tokens"). Graded metrics are never filled in: only the run's parameters.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace lab::grader {

// `value_of(name)`: the printed value of metric `name` when the run has it and it may be shown.
std::string fill_prompt(const std::string& prompt, const std::function<std::optional<std::string>(const std::string&)>& value_of);

}  // namespace lab::grader
