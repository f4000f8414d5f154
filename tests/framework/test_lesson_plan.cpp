// `lab validate`'s plan replay on model devices warns of a graded value that a shown metric
// carries under another name (so `lab run` prints the answer beside its '?'), and only where the
// two are equal on every replay that produces both: a coincidence on one model device is not a
// leak, nor two workloads the model times alike, nor a check.* helper (withheld too), nor two zeros.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "lab/lesson.hpp"
#include "lab/workloads.hpp"
#include "lesson_plan.hpp"

using namespace lab;

namespace {

// One placed workload, a graded ridge point and whatever copies of it a case asks for.
class RidgeLesson : public Lesson {
public:
    // twins: two workloads of the same counts, one graded time and the other shown, alike on a
    // model device (which times by the counts) but two measurements on a real one.
    // seed_variant: 02.07's old mistake, a graded question whose variant follows the seed and, for
    // one seed in seven (not the model's), equals a value the lesson prints for everyone.
    enum class Copy { none, shown, graded, check_helper, cpu_only_coincidence, zeros, twins, seed_variant };
    Copy copy = Copy::none;
    bool copy_bandwidth = false;  // a graded own metric equal to the placement's shown bytes_per_s
    std::vector<std::string> teaching = {"the ridge is {ridge_ai}"};  // the teaching text derive() writes
    std::string mark_metric;  // when set, a plot with a mark at the ridge hidden while this metric is withheld

    LessonInfo info() const override {
        LessonInfo i{.id = "99.01", .title = "Ridge"};
        i.objectives = {"test"};
        i.experiments = {{"scale", "b = s a"}};
        i.placed = {{.name = "scale"}};
        i.metrics = {{.name = "ridge_ai", .unit = "FLOP/B", .description = "the ridge", .graded = true}};
        const std::string copy_name = copy == Copy::check_helper ? "check.ridge_copy" : "ridge_copy";
        if (copy == Copy::seed_variant) {
            i.metrics.push_back({.name = "question_span", .unit = "FLOP/B", .description = "your variant's ridge multiple", .graded = true});
            i.metrics.push_back({.name = "ridge_doubled", .unit = "FLOP/B", .description = "twice the ridge, for everyone"});
        }
        if (copy != Copy::none && copy != Copy::twins && copy != Copy::seed_variant)
            i.metrics.push_back({.name = copy_name, .unit = "FLOP/B", .description = "the ridge again", .graded = copy == Copy::graded});
        if (copy == Copy::zeros) {
            i.metrics.push_back({.name = "zero_graded", .unit = "s", .description = "nothing", .graded = true});
            i.metrics.push_back({.name = "zero_shown", .unit = "s", .description = "nothing"});
        }
        if (copy == Copy::twins) {
            i.metrics.push_back({.name = "near_time_s", .unit = "s", .description = "one", .graded = true});
            i.metrics.push_back({.name = "far_time_s", .unit = "s", .description = "the other"});
        }
        if (copy_bandwidth) i.metrics.push_back({.name = "scale_bandwidth", .unit = "B/s", .description = "its bandwidth", .graded = true});
        i.expectations = {{.metric = "scale.predicted_regime", .equals = "memory_bound", .why = "streams"}};
        return i;
    }
    void run(Session& s) override {
        const double n = 1 << 20;
        s.measure({.name = "scale", .params = {param("n", n)}, .flops = n, .bytes = 8 * n}, [](Stream&) {});
        if (copy == Copy::twins)
            for (const char* name : {"near", "far"}) s.measure({.name = name, .flops = n, .bytes = 4 * n}, [](Stream&) {});
    }
    void derive(const RawRun& run, Derivation& d) const override {
        const double ridge = run.ceilings.peak_flops("fp32.simt") / run.ceilings.peak_bandwidth();
        d.set("ridge_ai", ridge);
        switch (copy) {
            case Copy::none: break;
            case Copy::shown:
            case Copy::graded: d.set("ridge_copy", ridge); break;
            case Copy::check_helper: d.set("check.ridge_copy", ridge); break;
            // The ridge on the model CPU (7.5 FLOP/B); on the model GPU, whose ridge is 20, still 7.5.
            case Copy::cpu_only_coincidence: d.set("ridge_copy", run.device_kind == DeviceKind::cpu ? ridge : 7.5); break;
            case Copy::seed_variant:
                d.set("question_span", ridge * double(2 + run.options.seed % 7)), d.set("ridge_doubled", 2 * ridge);
                break;
            case Copy::twins:
                d.set("near_time_s", run.at("near").time.median), d.set("far_time_s", run.at("far").time.median);
                break;
            case Copy::zeros:
                d.set("ridge_copy", 2 * ridge);
                d.set("zero_graded", 0.0), d.set("zero_shown", 0.0);
                break;
        }
        if (copy_bandwidth) d.set("scale_bandwidth", d.find("scale.bytes_per_s")->number);
        d.teaching = teaching;
        if (!mark_metric.empty())
            d.plots = {{.name = "ridge", .title = "the ridge", .x = {.label = "AI", .unit = "FLOP/B", .log = true}, .y = {.label = "rate", .unit = "FLOP/s", .log = true},
                        .series = {{.name = "roof", .x = {1, 100}, .y = {1e9, 1e11}}},
                        .marks = {{.label = "ridge", .x = ridge, .vertical = true, .metric = mark_metric}}}};
    }
};

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + "\n";
    return s;
}

}  // namespace

TEST_CASE("the plan replay warns of a shown metric that carries a graded value on every model device", "[plan]") {
    RidgeLesson lesson;
    lesson.copy = RidgeLesson::Copy::shown;
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    INFO(joined(c.problems) + joined(c.warnings));
    CHECK(c.problems.empty());  // a warning: validate still says valid (exit 0)
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("shown metric 'ridge_copy' carries the value of graded metric 'ridge_ai'") &&
                                  Catch::Contains("mark it graded too (MetricDecl::graded), or drop it"));
    CHECK(check_plan(lesson, lesson.declarations()).empty());
}

TEST_CASE("the plan replay names the placement's graded list for a placed workload's standard metric", "[plan]") {
    RidgeLesson lesson;
    lesson.copy_bandwidth = true;
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    INFO(joined(c.problems) + joined(c.warnings));
    CHECK(c.problems.empty());
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("shown metric 'scale.bytes_per_s' carries the value of graded metric 'scale_bandwidth'") &&
                                  Catch::Contains("add \"bytes_per_s\" to PlacedWorkload::graded of 'scale'"));
}

TEST_CASE("the plan replay finds a leak that only some students' seeds give", "[plan]") {
    RidgeLesson lesson;
    lesson.copy = RidgeLesson::Copy::seed_variant;
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    INFO(joined(c.problems) + joined(c.warnings));
    CHECK(c.problems.empty());
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("shown metric 'ridge_doubled' carries the value of graded metric 'question_span'") &&
                                  Catch::Contains("for some students: equal on every model replay derived with seed 0x"));
    // The seed it names is one that gives the leak.
    const auto at = c.warnings[0].find("seed 0x") + 5;
    CHECK(std::stoull(c.warnings[0].substr(at, 18), nullptr, 16) % 7 == 0);
}

TEST_CASE("no leak is warned of where nothing is given away", "[plan]") {
    auto copy = GENERATE(RidgeLesson::Copy::none, RidgeLesson::Copy::graded, RidgeLesson::Copy::check_helper,
                         RidgeLesson::Copy::cpu_only_coincidence, RidgeLesson::Copy::zeros, RidgeLesson::Copy::twins);
    CAPTURE(static_cast<int>(copy));
    RidgeLesson lesson;
    lesson.copy = copy;
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    INFO(joined(c.problems) + joined(c.warnings));
    CHECK(c.problems.empty());
    CHECK(c.warnings.empty());
}

// render_teaching prints "n/a" for a {name} no metric has (as it does for a metric of another
// device), so a misspelt placeholder would read as a missing measurement in every student's run.
TEST_CASE("the plan replay refuses a teaching placeholder that names no declared metric, with the near name", "[plan]") {
    RidgeLesson lesson;
    lesson.teaching = {"the ridge is {ridge_ia} and scale moved {scale.bytes_per_s}", "see {shipped:no_such_capture.json}",
                       "see {shipped:a100_simple_add.json.gz}, ridge {ridge_ai}, {scale.measured_regime}"};
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    INFO(joined(c.problems));
    REQUIRE(c.problems.size() == 2);
    CHECK_THAT(c.problems[0], Catch::Contains("names {ridge_ia}, which is no metric info() declares: `lab run` would print n/a there "
                                              "(did you mean 'ridge_ai'?)") &&
                                  Catch::Contains("(on every model device and run type)"));
    CHECK_THAT(c.problems[1], Catch::Contains("names {shipped:no_such_capture.json}, which is neither a declared metric nor a file lab "
                                              "ships"));
}

TEST_CASE("the plan replay refuses a plot mark whose metric is misspelt: it would be drawn while the value is withheld", "[plan]") {
    RidgeLesson lesson;
    lesson.mark_metric = "ridge_ia";
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    REQUIRE(c.problems.size() == 1);
    CHECK_THAT(c.problems[0], Catch::Contains("plot 'ridge': mark 'ridge' names metric 'ridge_ia', which the lesson does not declare, so it is "
                                              "drawn even while that value is withheld (did you mean 'ridge_ai'?)"));
    lesson.mark_metric = "ridge_ai";
    INFO(joined(check_plan_and_leaks(lesson, lesson.declarations()).problems));
    CHECK(check_plan_and_leaks(lesson, lesson.declarations()).problems.empty());
}

TEST_CASE("the plan replay refuses a lesson that writes no teaching text", "[plan]") {
    RidgeLesson lesson;
    lesson.teaching.clear();
    const PlanCheck c = check_plan_and_leaks(lesson, lesson.declarations());
    REQUIRE(c.problems.size() == 1);
    CHECK_THAT(c.problems[0], Catch::Contains("derive() writes no teaching text"));
}

TEST_CASE("the model values a spec is held against come from every model device, as modelled and varied", "[plan]") {
    RidgeLesson lesson;
    const auto values = model_values(lesson, "99.01");
    REQUIRE(values.count("ridge_ai"));
    const auto& ridge = values.at("ridge_ai");
    CHECK(ridge.size() == 8);
    CHECK(std::any_of(ridge.begin(), ridge.end(), [](const ModelValue& v) { return v.where == "a model GPU --quick (times varied)"; }));
    CHECK(std::all_of(ridge.begin(), ridge.end(), [](const ModelValue& v) { return v.value.number > 0; }));
}
