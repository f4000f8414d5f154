// Whether a run record could have come from this lab on a real device, before any answer is
// graded against it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"
#include "run_record.hpp"

namespace lab::grader {

// Plausibility (DESIGN.md): every achieved rate at most the roof of the level it declares
// (+10%); the ceilings at most the datasheet's (+10%); counts and AI consistent; stored
// derived values (when present) equal the recomputed ones. Each problem is one line.
std::vector<std::string> plausibility_problems(const nlohmann::json& record, const RawRun& raw, const Derivation& derived);

}  // namespace lab::grader
