// `lab validate`'s look at a lesson's declarations (declaration_problems) before anything runs:
// expectations that no run can meet, or that `lab check` would compare wrongly, and the words a
// student is shown missing. Each case is one mistake an instructor made in a review.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "lesson_host.hpp"

using namespace lab;

namespace {

// A lesson's declarations with nothing wrong: one placed workload, one graded metric.
LessonInfo sound() {
    LessonInfo i{.id = "99.02", .title = "Sums"};
    i.objectives = {"test"};
    i.experiments = {{"vsum", "sum a vector"}};
    i.metrics = {{.name = "vsum.predicted_regime", .kind = MetricKind::category, .description = "its side of the ridge"},
                 {.name = "vsum.bytes_per_s", .unit = "B/s", .description = "its bandwidth"},
                 {.name = "sum_ratio", .unit = "ratio", .description = "dot time over sum time", .graded = true}};
    i.expectations = {{.metric = "vsum.predicted_regime", .equals = "memory_bound", .why = "it streams"},
                      {.metric = "vsum.bytes_per_s", .min = 0.5, .relative_to = "bandwidth.best", .performance = true, .why = "near the roof"}};
    return i;
}

std::vector<std::string> problems(const LessonInfo& i) {
    return declaration_problems(i, [](const std::string& u) { return u == "B/s" || u == "ratio" || u.empty(); });
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + "\n";
    return s;
}

}  // namespace

TEST_CASE("sound declarations have no problems", "[declarations]") { CHECK(problems(sound()).empty()); }

TEST_CASE("an expectation no value can meet, or one lab check would compare wrongly, is refused", "[declarations]") {
    LessonInfo i = sound();
    SECTION("min above max") {
        i.expectations[1].min = 1.4, i.expectations[1].max = 0.7;
        CHECK_THAT(joined(problems(i)), Catch::Contains("expectation 1 (on 'vsum.bytes_per_s') has min 1.4 above max 0.7: no value meets it"));
    }
    SECTION("a regime spelt as a student may write it, which lab check compares exactly") {
        i.expectations[0].equals = "memory-bound";
        CHECK_THAT(joined(problems(i)), Catch::Contains("equals 'memory-bound', which is not a regime as lab writes it (did you mean 'memory_bound'?)"));
        i.expectations[0].equals = "fast";
        CHECK_THAT(joined(problems(i)), Catch::Contains("equals 'fast', which is not a regime"));
    }
    SECTION("a relative bound written as a percentage") {
        i.expectations[1].min = 50;
        CHECK_THAT(joined(problems(i)), Catch::Contains("asks for at least 50x bandwidth.best: relative bounds are fractions of the ceiling"));
        // Relative to the launch cost a bound is a multiple of it: 3x a launch is fine.
        i.expectations[1].min = 3, i.expectations[1].relative_to = "launch";
        CHECK(problems(i).empty());
    }
    SECTION("a misspelt metric, with the near name") {
        i.expectations[0].metric = "vsum.predicted_regimes";
        CHECK_THAT(joined(problems(i)), Catch::Contains("expectation 0 is on 'vsum.predicted_regimes', which the lesson does not declare "
                                                        "(did you mean 'vsum.predicted_regime'?)"));
    }
    SECTION("no why") {
        i.expectations[0].why.clear();
        CHECK_THAT(joined(problems(i)), Catch::Contains("expectation 0 (on 'vsum.predicted_regime') has no 'why'"));
    }
}

TEST_CASE("a graded metric or an experiment without words for the student is refused", "[declarations]") {
    LessonInfo i = sound();
    i.metrics[2].description.clear();
    i.experiments[0].description.clear();
    const std::string p = joined(problems(i));
    CHECK_THAT(p, Catch::Contains("graded metric 'sum_ratio' has no description"));
    CHECK_THAT(p, Catch::Contains("experiment 'vsum' has no description"));
    // A shown metric without a description is the lesson's own business.
    LessonInfo shown = sound();
    shown.metrics[1].description.clear();
    CHECK(problems(shown).empty());
}
