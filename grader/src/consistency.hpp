// A run record's internal consistency: what every record `lab run` writes satisfies, whatever the
// machine, so a record that breaks it was edited (re-sealing an edit is easy: the digest is not a
// signature). The ceilings are positive and finite, a CPU's clock is one a CPU can have, each time
// statistic is ordered (min <= median <= max, the mean between, noise = stddev / mean, the time
// spent sampling at least the samples' sum), and the record was written by a lab this grader
// knows. Not checked here: a ceiling against the run's own in-run measurement of its kernel. An
// honest 02.11 run on a busy 2-core VM re-measured copy at 1/4.4 of its calibrated ceiling, so
// no factor both spares honest runs and catches a forged one; `lab audit` re-measures instead.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab::grader {

// A CPU clock above this is not a clock any CPU runs (the fastest boost to 2026 is ~6.2 GHz): a
// CPU's theoretical peak is computed from the record's clock, so a forged clock is refused first.
inline constexpr double kMaxCpuClockHz = 7.0e9;

std::vector<std::string> consistency_problems(const nlohmann::json& record, const RawRun& raw);

// InputError naming `file` and the first problem when there is one: `lab show` and `lab report`
// print no run that `lab submit` would call edited (a median of 0 s printed "inf FLOP/s").
void require_consistent(const nlohmann::json& record, const RawRun& raw, const std::string& file);

}  // namespace lab::grader
