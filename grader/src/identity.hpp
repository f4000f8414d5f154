// Whose run is it, and may it count? The checks of a run's student, token, seed and reveal flag,
// in the grader's two modes (docs/gradescope.md):
//  - course mode (a course key is configured): the run must carry a token the key issued to its
//    student, its seed must be the token's, and anonymous or revealed runs are refused;
//  - practice mode (no key): any run is scored, labelled practice; a run's seed must still be the
//    one its student (or its token) gives, so a renamed record is caught in both modes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "course.hpp"
#include "course_token.hpp"
#include "lab/lesson.hpp"

namespace lab::grader {

// One plain-language reason per problem; empty when the run may be graded.
std::vector<std::string> identity_problems(const nlohmann::json& record, const RawRun& raw, const CourseConfig& course,
                                           const std::optional<CourseKey>& key);

}  // namespace lab::grader
