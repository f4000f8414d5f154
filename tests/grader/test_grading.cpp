// Grading one submission: claims against values re-derived from the student's recorded run by
// the lesson's own code (never a measured number written here), every tolerance kind, units,
// refusals that are bad input (file:line), plausibility (runs that are not graded and why), void
// questions, either-side-of-the-ridge, and what the console and JSON reports let a student see.
//
// Runs come from tests/fixtures/runs/cpu/ (real --quick runs of student "alice"); specs are
// written by each test (accept_quick: true) or taken from tests/fixtures/grading/. Expected values
// come from lesson->derive() on the fixture, so a re-recorded fixture keeps these tests true.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "answers.hpp"
#include "course.hpp"
#include "errors.hpp"
#include "evaluate.hpp"
#include "plugin_loader.hpp"
#include "reports.hpp"
#include "run_record.hpp"
#include "spec.hpp"
#include "submission.hpp"
#include "derived_values.hpp"
#include "test_support.hpp"
#include "units.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace lab::grader;

namespace {

// The lesson plugins, loaded once (plugins are never unloaded).
const lab::LoadedLesson& lesson(const std::string& id) {
    static std::map<std::string, std::unique_ptr<lab::LoadedLesson>> loaded;
    auto it = loaded.find(id);
    if (it == loaded.end()) {
        std::string dir = id.substr(0, 2) + "_" + id.substr(3);  // "02.05" -> "02_05"
        fs::path so = lab_test::build_root() / "labs" / dir / ("lab_" + dir + ".so");
        it = loaded.emplace(id, std::make_unique<lab::LoadedLesson>(lab::load_lesson(so))).first;
    }
    return *it->second;
}

fs::path fixture_run_file(const std::string& name) { return lab_test::source_root() / "tests/fixtures/runs/cpu" / name; }

// A run record with its raw run and its derivation by the lesson's own code.
struct Run {
    json record;
    lab::RawRun raw;
    lab::Derivation derived;

    explicit Run(json r) : record(std::move(r)) { refresh(); }
    void refresh() {
        raw = lab::record::raw_run_from_record(record);
        derived = lesson(raw.lesson_id).lesson->derivation(raw);
    }
    // After an edit: a valid digest again, so only the grader's other defences can catch it.
    void reseal() {
        lab::record::seal(record);
        refresh();
    }
    double number(const std::string& name) const { return lab_test::derived_number(derived, name); }
    std::string text(const std::string& name) const { return lab_test::derived_text(derived, name); }
    std::string digest() const { return record.value("digest", ""); }
    json& workload(const std::string& name) {
        for (auto& w : record["workloads"])
            if (w["name"] == name) return w;
        FAIL("the fixture has no workload " << name);
        throw;
    }
    // Rewrites the stored display copies (metrics, per-workload derived values) from the derivation.
    void restore_stored_values() {
        if (record.contains("metrics"))
            for (auto& [name, stored] : record["metrics"].items())
                if (const lab::MetricValue* m = derived.find(name)) stored["value"] = lab::record::to_json(*m)["value"];
        for (auto& w : record["workloads"])
            if (w.contains("derived"))
                for (auto& [key, stored] : w["derived"].items())
                    if (const lab::MetricValue* m = derived.find(w["name"].get<std::string>() + "." + key))
                        stored = lab::record::to_json(*m)["value"];
    }
};

Run fixture_run(const std::string& name = "02.05-quick-reveal.json") {
    return Run(lab::record::read_record(fixture_run_file(name)));
}

// The record as another student would have recorded it: their name, their per-student seed (from
// the course salt), the stored values their seed gives, sealed.
void restudent(Run& run, const std::string& student) {
    lab::CourseConfig course = lab::load_course(lab_test::source_root() / "configs/course.yaml");
    run.record["student"] = student;
    run.record["seed"] = lab::student_seed(course, run.raw.lesson_id, student).hex;
    run.refresh();
    run.restore_stored_values();
    run.reseal();
}

// Three significant digits and more: a claim as a student would write it.
std::string num(double v) { return fmt::format("{:.5g}", v); }

// The message an InputError carried, or "" when none was thrown.
std::string input_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

// Writes specs and answers files into a temporary folder and grades them.
struct Grading {
    lab_test::TempDir dir;
    int files = 0;

    fs::path write(const std::string& name, const std::string& text) {
        fs::path p = dir / name;
        lab_test::write_file(p, text);
        return p;
    }
    // Loads a spec and checks it against its lesson's declarations, as the grader does.
    GradingSpec spec(const std::string& yaml, bool check = true) {
        fs::path p = write("spec" + std::to_string(files++) + ".yaml", yaml);
        GradingSpec s = load_spec(p, false, "after_due_date");
        if (check) check_spec_against(s, lesson(s.lesson).info);
        return s;
    }
    std::string answers_text(const Run& run, const std::vector<std::pair<std::string, std::string>>& claims,
                             const std::string& student = "") {
        std::string out = fmt::format("lesson: \"{}\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers:\n", run.raw.lesson_id,
                                      student.empty() ? run.raw.options.student : student, run.digest());
        for (const auto& [id, claim] : claims) out += "  " + id + ":" + (claim.empty() ? "" : " " + claim) + "\n";
        return out;
    }
    AnswersFile answers(const Run& run, const std::vector<std::pair<std::string, std::string>>& claims,
                        const std::string& student = "") {
        return load_answers(write("answers" + std::to_string(files++) + ".yaml", answers_text(run, claims, student)));
    }
    GradeReport grade_file(const GradingSpec& spec, const Run& run, const AnswersFile& answers) {
        const lab::LoadedLesson& l = lesson(run.raw.lesson_id);
        Submission s{spec, l.info, run.record, run.raw, run.derived, answers};
        check_binding(s);
        return lab::grader::grade(s);
    }
    GradeReport grade(const GradingSpec& spec, const Run& run, const std::vector<std::pair<std::string, std::string>>& claims) {
        return grade_file(spec, run, answers(run, claims));
    }
};

const QuestionResult& result(const GradeReport& r, const std::string& id) {
    for (const auto& q : r.results)
        if (q.question.id == id) return q;
    FAIL("no result for question " << id);
    throw;
}

// A spec of one lesson, grading quick runs, with the given questions (YAML list items).
std::string spec_yaml(const std::string& questions, const std::string& lesson_id = "02.05",
                      const std::string& show_expected = "always", const std::string& extra = "") {
    return "lesson: \"" + lesson_id + "\"\naccept_quick: true\nshow_expected: " + show_expected + "\n" + extra +
           "questions:\n" + questions;
}

const std::string kRidge = R"(  - id: ridge_point
    prompt: "What is the fp32 ridge point of your device?"
    type: number
    unit: FLOP/B
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
    partial: {within: 3, credit: 0.5}
    points: 2
    hint: "peak FLOP/s over peak bandwidth"
)";

const std::string kAttainable = R"(  - id: attainable
    prompt: "What FLOP/s can a kernel of AI question_ai attain at most?"
    unit: GFLOP/s
    expected: {metric: attainable_flops_per_s}
    tolerance: {rel: 0.05}
    points: 2
)";

const std::string kTriadSide = R"(  - id: triad_side
    prompt: "On which side of the ridge is the triad?"
    type: regime
    expected: {metric: triad.predicted_regime}
)";

const std::string kTriadFraction = R"(  - id: triad_roof_fraction
    prompt: "What fraction of its roof does the triad achieve?"
    unit: "%"
    expected: {metric: triad.roof_fraction}
    tolerance: {abs: 3}
    partial: {within: 3, credit: 0.5}
    points: 2
)";

// A lesson nobody compiled, for the cases a real run cannot pin down (sweeps, the ridge band):
// its record, raw run and derivation are written here.
struct Synthetic {
    lab::LessonInfo info;
    json record;
    lab::RawRun raw;
    lab::Derivation derived;

    Synthetic() {
        info.id = "99.01";
        info.version = "1.0.0";
        info.metrics = {{"crossover_batch", "", lab::MetricKind::integer, "first batch that is compute bound"},
                        {"tile_bytes", "B", lab::MetricKind::number, "the best tile size"},
                        {"near.predicted_regime", "", lab::MetricKind::category, "a kernel near the ridge"},
                        {"far.predicted_regime", "", lab::MetricKind::category, "a kernel far from the ridge"}};
        raw.lesson_id = "99.01";
        raw.options.quick = true;
        raw.options.student = "alice";
        // The student's own variant, as `lab run` records it (the grader checks it).
        raw.options.seed_hex =
            lab::student_seed(lab::load_course(lab_test::source_root() / "configs/course.yaml"), "99.01", "alice").hex;
        raw.facts.name = "Synthetic CPU";
        for (double b : {1, 2, 4, 8, 16, 32, 64}) {
            lab::Measurement m;
            m.workload.name = fmt::format("decode_b{}", b);
            m.workload.params = {{"batch", b}};
            m.time.median = 1e-3;
            raw.measurements.push_back(m);
        }
        derived.integer("crossover_batch", 16);
        derived.number("tile_bytes", 8192, "B");
        record = {{"schema", "lab.run/1"},
                  {"digest", "sha256:synthetic"},
                  {"lesson", {{"id", "99.01"}, {"plugin_version", "1.0.0"}}},
                  {"device", {{"kind", "cpu"}}},
                  {"student", "alice"},
                  {"quick", true}};
    }
    // A kernel at `ai_over_ridge` times the ridge, predicted on the side its AI says.
    void place(const std::string& name, double ai_over_ridge) {
        lab::roofline::Placement p;
        p.ridge = 10;
        p.ai = 10 * ai_over_ridge;
        derived.workloads.push_back({name, p});
        derived.category(name + ".predicted_regime", ai_over_ridge < 1 ? "memory_bound" : "compute_bound");
    }
    GradeReport grade(Grading& g, const std::string& questions, const std::vector<std::pair<std::string, std::string>>& claims) {
        GradingSpec spec = g.spec(spec_yaml(questions, "99.01"), false);
        check_spec_against(spec, info);
        std::string text = "lesson: \"99.01\"\nstudent: alice\nrun: \"sha256:synthetic\"\nanswers:\n";
        for (const auto& [id, c] : claims) text += "  " + id + ": " + c + "\n";
        AnswersFile a = load_answers(g.write("synthetic-answers" + std::to_string(g.files++) + ".yaml", text));
        Submission s{spec, info, record, raw, derived, a};
        check_binding(s);
        return lab::grader::grade(s);
    }
};

// Sets an environment variable for the life of the object.
struct ScopedEnv {
    std::string name;
    ScopedEnv(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }
    ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Verdicts and points

TEST_CASE("a right answer earns the question's points and a wrong one earns none", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    const double ridge = run.number("ridge_point");

    GradeReport right = g.grade(spec, run, {{"ridge_point", num(ridge * 1.02)}});
    REQUIRE(right.graded);
    CHECK(result(right, "ridge_point").verdict == Verdict::correct);
    CHECK(result(right, "ridge_point").points == 2);
    CHECK(right.score == 2);
    CHECK(right.max_score == 2);

    GradeReport wrong = g.grade(spec, run, {{"ridge_point", num(ridge * 1.5)}});
    REQUIRE(wrong.graded);
    CHECK(result(wrong, "ridge_point").verdict == Verdict::wrong);
    CHECK(result(wrong, "ridge_point").points == 0);
    CHECK(wrong.score == 0);
    CHECK(wrong.max_score == 2);
}

TEST_CASE("an answer within the partial band earns the partial credit, and one beyond it nothing", "[grading]") {
    // rel 0.05 with partial {within: 3, credit: 0.5}: half the points from 5% to 15% off.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    const double ridge = run.number("ridge_point");
    auto [factor, verdict, points] = GENERATE(table<double, Verdict, double>({
        {1.04, Verdict::correct, 2},
        {0.96, Verdict::correct, 2},
        {1.10, Verdict::partial, 1},
        {0.90, Verdict::partial, 1},
        {1.14, Verdict::partial, 1},
        {1.17, Verdict::wrong, 0},
        {0.83, Verdict::wrong, 0},
    }));
    CAPTURE(factor);
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(ridge * factor)}});
    CHECK(result(r, "ridge_point").verdict == verdict);
    CHECK(result(r, "ridge_point").points == points);
    CHECK(r.score == points);
    if (verdict == Verdict::partial) CHECK_THAT(result(r, "ridge_point").feedback, Catch::Contains("partial"));
}

TEST_CASE("an absolute tolerance is in the question's unit: abs 3 on a % question is 3 percentage points", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kTriadFraction));
    const double pct = 100 * run.number("triad.roof_fraction");
    auto [claim, verdict] = GENERATE_COPY(table<std::string, Verdict>({
        {num(pct + 2.5) + "%", Verdict::correct},
        {num(pct - 2.9) + " %", Verdict::correct},
        {num(pct + 2), Verdict::correct},            // a bare number is read in %
        {num(pct / 100 + 0.02) + " ratio", Verdict::correct},
        {num(pct + 5) + "%", Verdict::partial},      // within 3 x 3 points
        {num(pct - 8.5) + "%", Verdict::partial},
        {num(pct + 10) + "%", Verdict::wrong},       // 10 points off; 0.1 would pass if abs were read as a ratio
        {num(pct / 100), Verdict::wrong},            // a fraction where % is asked: 0.48 means 0.48%
    }));
    CAPTURE(claim, pct);
    GradeReport r = g.grade(spec, run, {{"triad_roof_fraction", claim}});
    CHECK(result(r, "triad_roof_fraction").verdict == verdict);
}

TEST_CASE("an absolute tolerance in a time unit is converted too", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: triad_time
    prompt: "How long does one triad take?"
    unit: us
    expected: {metric: triad.time_s}
    tolerance: {abs: 500}
)"));
    const double us = run.number("triad.time_s") * 1e6;
    CHECK(result(g.grade(spec, run, {{"triad_time", num(us + 400)}}), "triad_time").verdict == Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"triad_time", num((us - 400) / 1000) + " ms"}}), "triad_time").verdict ==
          Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"triad_time", num(us + 600)}}), "triad_time").verdict == Verdict::wrong);
}

TEST_CASE("a factor tolerance accepts x/÷ the factor, and its partial band the factor to the power within", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: attainable
    prompt: "Attainable FLOP/s at question_ai?"
    unit: GFLOP/s
    expected: {metric: attainable_flops_per_s}
    tolerance: {factor: 2}
    partial: {within: 2, credit: 0.25}
    points: 4
)"));
    const double gflops = run.number("attainable_flops_per_s") / 1e9;
    auto [times, verdict, points] = GENERATE(table<double, Verdict, double>({
        {1.0, Verdict::correct, 4},
        {1.9, Verdict::correct, 4},
        {1 / 1.9, Verdict::correct, 4},
        {3.0, Verdict::partial, 1},      // within 2^2
        {1 / 3.5, Verdict::partial, 1},
        {4.5, Verdict::wrong, 0},
        {1 / 4.5, Verdict::wrong, 0},
        {0.0, Verdict::wrong, 0},
    }));
    CAPTURE(times);
    GradeReport r = g.grade(spec, run, {{"attainable", num(gflops * times)}});
    CHECK(result(r, "attainable").verdict == verdict);
    CHECK(result(r, "attainable").points == points);
}

TEST_CASE("a steps tolerance counts points of a sweep taken from a workload parameter", "[grading]") {
    // The sweep is the runs' batch parameter: 1 2 4 8 16 32 64; the answer is 16.
    Grading g;
    Synthetic syn;
    const std::string q = R"(  - id: crossover
    prompt: "At which batch does decode become compute bound?"
    type: integer
    expected: {metric: crossover_batch}
    tolerance: {steps: 1, sweep_param: batch}
    partial: {within: 2, credit: 0.5}
)";
    auto [claim, verdict] = GENERATE(table<std::string, Verdict>({
        {"16", Verdict::correct},
        {"8", Verdict::correct},
        {"32", Verdict::correct},
        {"64", Verdict::partial},   // two steps
        {"4", Verdict::partial},
        {"2", Verdict::wrong},      // three steps
        {"1", Verdict::wrong},
        {"20", Verdict::wrong},     // not a point of the sweep
        {"16.5", Verdict::invalid}, // not a whole number
    }));
    CAPTURE(claim);
    GradeReport r = syn.grade(g, q, {{"crossover", claim}});
    REQUIRE(r.graded);
    CHECK(result(r, "crossover").verdict == verdict);
    if (claim == "20") CHECK_THAT(result(r, "crossover").feedback, Catch::Contains("not one of the sweep's points"));
}

TEST_CASE("a steps tolerance with a sweep written in the question's unit", "[grading]") {
    // sweep [1..32] KiB; the answer is 8192 B = 8 KiB.
    Grading g;
    Synthetic syn;
    const std::string q = R"(  - id: tile
    prompt: "Which tile size is fastest?"
    unit: KiB
    expected: {metric: tile_bytes}
    tolerance: {steps: 1, sweep: [1, 2, 4, 8, 16, 32]}
)";
    auto [claim, verdict] = GENERATE(table<std::string, Verdict>({
        {"8 KiB", Verdict::correct},
        {"8", Verdict::correct},        // bare: KiB
        {"8192 B", Verdict::correct},
        {"16 KiB", Verdict::correct},   // one step
        {"4 KiB", Verdict::correct},
        {"32 KiB", Verdict::wrong},     // two steps, no partial credit
        {"8 kB", Verdict::wrong},       // 8000 B: not on the sweep (kB is not KiB)
        {"8 ms", Verdict::invalid},     // a time
    }));
    CAPTURE(claim);
    CHECK(result(syn.grade(g, q, {{"tile", claim}}), "tile").verdict == verdict);
}

// ---------------------------------------------------------------------------------------------
// Units

TEST_CASE("a claim in another unit of the question's dimension is converted before it is judged", "[grading]") {
    // The question is in GFLOP/s; "0.0165 TFLOP/s" is the same as 16.5 GFLOP/s.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kAttainable));
    const double flops = run.number("attainable_flops_per_s");
    auto [claim, verdict] = GENERATE_COPY(table<std::string, Verdict>({
        {fmt::format("{:.4g} TFLOP/s", flops / 1e12), Verdict::correct},
        {fmt::format("{:.4g} GFLOP/s", flops / 1e9), Verdict::correct},
        {fmt::format("{:.4g}", flops / 1e9), Verdict::correct},             // bare: GFLOP/s
        {fmt::format("{:.6g} MFLOP/s", flops / 1e6), Verdict::correct},
        {fmt::format("{:.6g} FLOP/s", flops), Verdict::correct},
        {fmt::format("{:.4g} TFLOP/s", flops / 1e9), Verdict::wrong},      // right digits, wrong prefix: 1000x
        {fmt::format("{:.4g}", flops / 1e12), Verdict::wrong},              // bare TFLOP/s figure read as GFLOP/s
    }));
    CAPTURE(claim);
    GradeReport r = g.grade(spec, run, {{"attainable", claim}});
    CHECK(result(r, "attainable").verdict == verdict);
}

TEST_CASE("a claim of the wrong dimension is an unreadable answer with a message, not a wrong one", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kAttainable + kRidge));
    const double gflops = run.number("attainable_flops_per_s") / 1e9;
    GradeReport r = g.grade(spec, run, {{"attainable", num(gflops) + " GB/s"}, {"ridge_point", num(run.number("ridge_point")) + " ms"}});
    REQUIRE(r.graded);
    for (const char* id : {"attainable", "ridge_point"}) {
        CAPTURE(id);
        const QuestionResult& q = result(r, id);
        CHECK(q.verdict == Verdict::invalid);
        CHECK(q.points == 0);
        CHECK_FALSE(q.feedback.empty());
        CHECK_THAT(q.feedback, Catch::Contains("expected"));
    }
    CHECK_THAT(result(r, "attainable").feedback, Catch::Contains("GB/s"));
    CHECK(std::string(to_string(Verdict::invalid)) != to_string(Verdict::wrong));
    // The console shows the reason beside the answer.
    CHECK_THAT(console_report(r), Catch::Contains(result(r, "attainable").feedback));
}

TEST_CASE("GB and GiB differ: a GB/s figure written as GiB/s is wrong, the GiB/s figure right", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: triad_bw
    prompt: "What bandwidth does the triad reach?"
    unit: GB/s
    expected: {metric: triad.bytes_per_s}
    tolerance: {rel: 0.05}
)"));
    const double bw = run.number("triad.bytes_per_s");
    CHECK(result(g.grade(spec, run, {{"triad_bw", fmt::format("{:.4g} GB/s", bw / 1e9)}}), "triad_bw").verdict ==
          Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"triad_bw", fmt::format("{:.4g} GiB/s", bw / 1e9)}}), "triad_bw").verdict ==
          Verdict::wrong);  // 7.4% too high
    CHECK(result(g.grade(spec, run, {{"triad_bw", fmt::format("{:.4g} GiB/s", bw / (1024.0 * 1024 * 1024))}}), "triad_bw")
              .verdict == Verdict::correct);
}

TEST_CASE("a question without a unit still refuses a claim of another dimension than its metric's", "[grading]") {
    // The schema documents the default unit as "the metric's SI unit"; the evaluator reads
    // claims in "" (a plain count, any unit accepted), so "11.5 s" is compared with 11.5 FLOP/B.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: ridge_point
    prompt: "What is the fp32 ridge point?"
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
)"));
    const double ridge = run.number("ridge_point");
    CHECK(result(g.grade(spec, run, {{"ridge_point", num(ridge)}}), "ridge_point").verdict == Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"ridge_point", num(ridge) + " FLOP/B"}}), "ridge_point").verdict == Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"ridge_point", num(ridge) + " s"}}), "ridge_point").verdict == Verdict::invalid);
    CHECK(result(g.grade(spec, run, {{"ridge_point", num(ridge) + " GB"}}), "ridge_point").verdict == Verdict::invalid);
}

// ---------------------------------------------------------------------------------------------
// Regimes, choices, yes/no, missing answers

TEST_CASE("\"bandwidth bound\" and other spellings are accepted for memory_bound", "[grading]") {
    Grading g;
    Run run = fixture_run();
    REQUIRE(run.text("triad.predicted_regime") == "memory_bound");
    GradingSpec spec = g.spec(spec_yaml(kTriadSide));
    auto [claim, verdict] = GENERATE(table<std::string, Verdict>({
        {"memory_bound", Verdict::correct},
        {"bandwidth bound", Verdict::correct},
        {"Bandwidth-bound", Verdict::correct},
        {"memory bound", Verdict::correct},
        {"compute_bound", Verdict::wrong},
        {"latency_bound", Verdict::wrong},
        {"slow", Verdict::invalid},
    }));
    CAPTURE(claim);
    CHECK(result(g.grade(spec, run, {{"triad_side", claim}}), "triad_side").verdict == verdict);
}

TEST_CASE("choice and yes/no questions with constant expected values", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: roof
    prompt: "Which roof limits the triad?"
    type: choice
    options: [flat, slanted]
    expected: {value: slanted}
  - id: fits
    prompt: "Does the triad's working set fit in the last-level cache?"
    type: bool
    expected: {value: "no"}
)"));
    GradeReport r = g.grade(spec, run, {{"roof", "Slanted"}, {"fits", "no"}});
    CHECK(result(r, "roof").verdict == Verdict::correct);
    CHECK(result(r, "fits").verdict == Verdict::correct);
    r = g.grade(spec, run, {{"roof", "flat"}, {"fits", "yes"}});
    CHECK(result(r, "roof").verdict == Verdict::wrong);
    CHECK(result(r, "fits").verdict == Verdict::wrong);
    r = g.grade(spec, run, {{"roof", "curved"}, {"fits", "perhaps"}});
    CHECK(result(r, "roof").verdict == Verdict::invalid);
    CHECK(result(r, "fits").verdict == Verdict::invalid);
}

TEST_CASE("a question left out or left blank is \"no answer\" and scores 0 of its points", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable + kTriadSide));
    GradeReport r = g.grade(spec, run, {{"ridge_point", ""}, {"triad_side", "memory_bound"}});  // attainable left out
    REQUIRE(r.graded);
    for (const char* id : {"ridge_point", "attainable"}) {
        CAPTURE(id);
        CHECK(result(r, id).verdict == Verdict::missing);
        CHECK(std::string(to_string(result(r, id).verdict)) == "no answer");
        CHECK(result(r, id).points == 0);
        CHECK(result(r, id).max_points == 2);
    }
    CHECK(r.score == 1);
    CHECK(r.max_score == 5);
    CHECK_THAT(console_report(r), Catch::Contains("no answer"));
}

// ---------------------------------------------------------------------------------------------
// Bad answers files and bad specs: InputError naming file and line

TEST_CASE("a malformed answers file is an InputError naming its file and line", "[grading]") {
    fs::path fixture = lab_test::source_root() / "tests/fixtures/answers/02.05-malformed.yaml";
    std::string msg = input_error([&] { load_answers(fixture); });
    REQUIRE_FALSE(msg.empty());
    // The unclosed list starts on line 6; yaml-cpp may notice on the next line.
    CHECK_THAT(msg, Catch::StartsWith(fixture.string() + ":6:") || Catch::StartsWith(fixture.string() + ":7:"));
    CHECK_THAT(msg, Catch::Contains("YAML"));

    Grading g;
    auto [text, line, fragment] = GENERATE(table<std::string, int, std::string>({
        {"lesson: \"02.05\"\nstudent: alice\nrun: \"sha256:x\"\nanswers:\n  ridge_point: 11\n  colour: blue\nextra: 1\n", 7,
         "unknown key 'extra'"},
        {"lesson: \"02.05\"\nstudent: alice\nrun: \"sha256:x\"\nanswers:\n  ridge_point: [11, 12]\n", 5, "list or mapping"},
        {"lesson: \"02.05\"\nstudent: alice\nrun: \"sha256:x\"\nanswers:\n  ridge_point: 11\n  ridge_point: 12\n", 6,
         "answered twice"},
        {"lesson: \"02.05\"\nstudent: alice\nrun: \"sha256:x\"\nanswers:\n  ridge_point: {11\n  attainable: 3\n", 5, "YAML"},
    }));
    fs::path p = g.write("answers.yaml", text);
    msg = input_error([&] { load_answers(p); });
    CAPTURE(text);
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":" + std::to_string(line) + ":") || Catch::StartsWith(p.string() + ":" + std::to_string(line + 1) + ":"));
    CHECK_THAT(msg, Catch::Contains(fragment));
}

TEST_CASE("an answers file without its lesson, student, run or answers is refused naming the file", "[grading]") {
    Grading g;
    auto [text, missing] = GENERATE(table<std::string, std::string>({
        {"student: alice\nrun: x\nanswers: {a: 1}\n", "lesson"},
        {"lesson: \"02.05\"\nrun: x\nanswers: {a: 1}\n", "student"},
        {"lesson: \"02.05\"\nstudent: alice\nanswers: {a: 1}\n", "run"},
        {"lesson: \"02.05\"\nstudent: alice\nrun: x\n", "answers"},
    }));
    fs::path p = g.write("answers.yaml", text);
    std::string msg = input_error([&] { load_answers(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string()));
    CHECK_THAT(msg, Catch::Contains("'" + missing + "'"));
}

TEST_CASE("each kind of spec error is an InputError naming the spec file and the line", "[grading]") {
    // Line numbers: 1 lesson, 2 accept_quick, 3 questions, 4 "- id:", then the question's keys.
    const std::string head = "lesson: \"02.05\"\naccept_quick: true\nquestions:\n";
    const std::string ridge = "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n";
    auto [name, yaml, line, fragment] = GENERATE_COPY(table<std::string, std::string, int, std::string>({
        {"unknown key in a question", head + ridge + "    tolerence: {rel: 0.05}\n", 8, "unknown key 'tolerence'"},
        {"unknown key in a tolerance", head + ridge + "    tolerance: {rel: 0.05, relative: 0.1}\n", 8,
         "unknown key 'relative'"},
        {"unknown key at the top", "lesson: \"02.05\"\naccept_quik: true\nquestions:\n" + ridge, 2, "unknown key 'accept_quik'"},
        {"metric the lesson does not declare",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_pointt}\n", 4,
         "does not declare"},
        {"value of the wrong type", head + ridge + "    points: two\n", 8, "wrong type"},
        {"question type that does not fit the metric",
         head + "  - id: side\n    prompt: \"Side?\"\n    type: regime\n    expected: {metric: ridge_point}\n", 4, "is a number"},
        {"number question on a category metric",
         head + "  - id: side\n    prompt: \"Side?\"\n    expected: {metric: triad.predicted_regime}\n", 4, "is a category"},
        {"negative relative tolerance", head + ridge + "    tolerance: {rel: -0.05}\n", 8, "non-negative"},
        {"negative absolute tolerance", head + ridge + "    tolerance:\n      abs: -1\n", 9, "non-negative"},
        {"unit of the wrong dimension",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: GB/s\n    expected: {metric: ridge_point}\n", 4,
         "another dimension"},
        {"unknown unit", head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: furlongs\n    expected: {metric: ridge_point}\n",
         6, "unknown unit"},
        {"duplicate id", head + ridge + ridge, 8, "two questions have the id 'ridge_point'"},
        {"partial credit above 1", head + ridge + "    tolerance: {rel: 0.05}\n    partial:\n      within: 3\n      credit: 1.5\n", 11,
         "'credit' must be between 0 and 1"},
        {"partial credit of 0", head + ridge + "    tolerance: {rel: 0.05}\n    partial:\n      within: 3\n      credit: 0\n", 11,
         "'credit' must be between 0 and 1"},
        {"partial band inside the tolerance", head + ridge + "    partial:\n      within: 0.5\n      credit: 0.5\n", 9,
         "'within' must be more than 1"},
        {"factor below 1", head + ridge + "    tolerance: {factor: 0.5}\n", 8, "'factor' must be at least 1"},
        {"steps without a sweep", head + ridge + "    tolerance: {steps: 1}\n", 8, "'steps' needs the sweep"},
        {"two kinds of tolerance", head + ridge + "    tolerance: {rel: 0.1, factor: 2}\n", 8, "one kind of tolerance"},
        {"choice without options", head + "  - id: c\n    prompt: \"?\"\n    type: choice\n    expected: {value: a}\n", 4,
         "needs 'options'"},
        {"unknown device kind", head + ridge + "    applies_to: [tpu]\n", 8, "unknown device kind 'tpu'"},
        {"near_ridge_either on a number question", head + ridge + "    near_ridge_either: 1.2\n", 8, "regime questions only"},
        {"applies_to a device that lacks the metric",
         head + "  - id: r\n    prompt: \"?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point_bf16_tensor}\n    applies_to: [cpu]\n",
         4, "not produced there"},
        {"bad show_expected", "lesson: \"02.05\"\nshow_expected: sometimes\nquestions:\n" + ridge, 2, "show_expected"},
    }));
    CAPTURE(name);
    Grading g;
    fs::path p = g.write("spec.yaml", yaml);
    std::string msg = input_error([&] {
        GradingSpec s = load_spec(p, false, "after_due_date");
        check_spec_against(s, lesson("02.05").info);
    });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":" + std::to_string(line) + ":"));
    CHECK_THAT(msg, Catch::Contains(fragment));
}

TEST_CASE("a spec for another lesson than its plugin is refused", "[grading]") {
    Grading g;
    GradingSpec s = g.spec(spec_yaml(kRidge, "02.05"), false);
    CHECK_THAT(input_error([&] { check_spec_against(s, lesson("02.01").info); }), Catch::Contains("02.01"));
}

TEST_CASE("applies_to written as one device kind rather than a list still restricts the question", "[grading]") {
    // `applies_to: cuda` (a scalar) iterates as nothing in yaml-cpp, so the question silently
    // applies to every device. It should mean [cuda] or be refused.
    Grading g;
    Run run = fixture_run();
    const std::string q = R"(  - id: ridge_point
    prompt: "Ridge?"
    unit: FLOP/B
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
    applies_to: cuda
)";
    fs::path p = g.write("scalar-applies.yaml", spec_yaml(q));
    bool refused = !input_error([&] { load_spec(p, false, "never"); }).empty();
    if (!refused) {
        GradingSpec spec = load_spec(p, false, "never");
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
        CHECK(result(r, "ridge_point").verdict == Verdict::void_question);
    }
}

TEST_CASE("the shipped and the test grading specs load and fit their lessons", "[grading]") {
    for (const fs::path& dir : {lab_test::source_root() / "configs/grading", lab_test::source_root() / "tests/fixtures/grading"})
        for (const char* id : {"02.01", "02.05"}) {
            CAPTURE(dir, id);
            GradingSpec s = load_spec(dir / (std::string(id) + ".yaml"), false, "after_due_date");
            CHECK(s.lesson == id);
            CHECK_NOTHROW(check_spec_against(s, lesson(id).info));
            CHECK(s.accept_quick == (dir.filename() == "grading" && dir.parent_path().filename() == "fixtures"));
        }
}

// ---------------------------------------------------------------------------------------------
// Runs: digest, binding, plausibility

TEST_CASE("a run record whose digest does not match its content is refused as bad input", "[grading]") {
    Grading g;
    json rec = lab::record::read_record(fixture_run_file("02.05-quick-reveal.json"));
    for (auto& w : rec["workloads"])
        if (w["name"] == "triad") w["time_s"]["median"] = w["time_s"]["median"].get<double>() / 2;
    fs::path p = g.write("tampered.json", rec.dump(2));
    std::string msg = input_error([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string()));
    CHECK_THAT(msg, Catch::Contains("digest"));
}

TEST_CASE("a rate above its roof makes the run implausible even with a valid digest: reported, not graded", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kTriadSide));
    Run run = fixture_run();
    const double bw = run.raw.ceilings.peak_bandwidth();
    const double peak = run.raw.ceilings.peak_flops("fp32.simt");
    SECTION("a triad faster than the DRAM roof") {
        json& w = run.workload("triad");
        w["time_s"]["median"] = w["bytes"].get<double>() / (3 * bw);
        run.reseal();
        fs::path p = g.write("faster.json", run.record.dump());
        REQUIRE_NOTHROW(lab::record::read_record(p));  // the digest is intact: only plausibility can tell
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}, {"triad_side", "memory_bound"}});
        CHECK_FALSE(r.graded);
        CHECK(r.score == 0);
        bool named = false;
        for (const auto& prob : r.problems)
            named = named || (prob.find("implausible") != std::string::npos && prob.find("'triad'") != std::string::npos &&
                              prob.find("DRAM roof") != std::string::npos);
        CHECK(named);
        std::string console = console_report(r);
        CHECK_THAT(console, Catch::Contains("Not graded"));
        CHECK_THAT(console, Catch::Contains("triad"));
        CHECK(json_report(r)["graded"] == false);
        CHECK(json_report(r)["score"] == 0);
        CHECK_FALSE(json_report(r)["problems"].empty());
    }
    SECTION("an FMA kernel faster than the fp32 roof") {
        json& w = run.workload("fma_many");
        w["time_s"]["median"] = w["flops"].get<double>() / (2 * peak);
        run.reseal();
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
        CHECK_FALSE(r.graded);
        bool named = false;
        for (const auto& prob : r.problems)
            named = named || (prob.find("'fma_many'") != std::string::npos && prob.find("fp32.simt roof") != std::string::npos);
        CHECK(named);
    }
}

TEST_CASE("a stored derived value edited and re-sealed makes the run implausible", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    Run run = fixture_run();
    REQUIRE(run.record["metrics"].contains("ridge_point"));
    run.record["metrics"]["ridge_point"]["value"] = run.number("ridge_point") * 1.5;
    run.reseal();
    // The grader grades the re-derived value, not the stored copy, and reports the edit.
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    CHECK(r.score == 0);
    REQUIRE(r.problems.size() == 1);
    CHECK_THAT(r.problems[0], Catch::Contains("ridge_point") && Catch::Contains("differs"));
}

TEST_CASE("an unedited fixture is plausible", "[grading]") {
    // ...-before-conditions: recorded by lab 0.1 before ceilings carried their conditions and runs
    // their in-run ceiling measurements; such records still read, re-derive and grade.
    for (const char* f : {"02.05-quick-reveal.json", "02.01-quick.json", "02.05-quick-reveal-before-conditions.json"}) {
        CAPTURE(f);
        Run run = fixture_run(f);
        CHECK(plausibility_problems(run.record, run.raw, run.derived).empty());
    }
}

TEST_CASE("answers bound to another run, student or lesson are refused as bad input", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    const std::string claim = num(run.number("ridge_point"));
    SECTION("another student's name") {
        AnswersFile a = g.answers(run, {{"ridge_point", claim}}, "bob");
        std::string msg = input_error([&] { g.grade_file(spec, run, a); });
        CHECK_THAT(msg, Catch::StartsWith(a.file));
        CHECK_THAT(msg, Catch::Contains("bob") && Catch::Contains("alice"));
    }
    SECTION("the same student written differently is the same student") {
        AnswersFile a = g.answers(run, {{"ridge_point", claim}}, "  Alice ");
        CHECK(g.grade_file(spec, run, a).graded);
    }
    SECTION("another run's digest") {
        std::string text = g.answers_text(run, {{"ridge_point", claim}});
        text = std::regex_replace(text, std::regex("sha256:[0-9a-f]+"), "sha256:" + std::string(64, '0'));
        AnswersFile a = load_answers(g.write("other-run.yaml", text));
        std::string msg = input_error([&] { g.grade_file(spec, run, a); });
        CHECK_THAT(msg, Catch::StartsWith(a.file));
        CHECK_THAT(msg, Catch::Contains("bound to run"));
    }
    SECTION("another lesson") {
        std::string text = g.answers_text(run, {{"ridge_point", claim}});
        text.replace(text.find("02.05"), 5, "02.01");
        AnswersFile a = load_answers(g.write("other-lesson.yaml", text));
        CHECK_THAT(input_error([&] { g.grade_file(spec, run, a); }), Catch::Contains("02.01"));
    }
}

TEST_CASE("a run recorded under another student's seed is not graded for this student", "[grading]") {
    // DESIGN.md: seed = SHA-256(course salt | lesson | student), re-derived by the grader. A
    // record whose student was changed (and re-sealed) keeps the other student's seed and
    // variant; the grader never compares the record's seed with the student's.
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable));
    Run run = fixture_run();
    run.record["student"] = "bob";
    run.reseal();
    bool refused = false;
    try {
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))},
                                            {"attainable", num(run.number("attainable_flops_per_s") / 1e9)}});
        refused = !r.graded;
    } catch (const lab::InputError&) {
        refused = true;
    }
    CHECK(refused);
}

TEST_CASE("a run recorded by another student with their own seed grades with that student's variant", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable));
    Run alice = fixture_run();
    Run bob = fixture_run();
    restudent(bob, "bob");
    CHECK(bob.record["seed"] != alice.record["seed"]);
    GradeReport r = g.grade(spec, bob, {{"ridge_point", num(bob.number("ridge_point"))},
                                        {"attainable", num(bob.number("attainable_flops_per_s") / 1e9)}});
    CHECK(r.graded);
    CHECK(r.student == "bob");
    CHECK(r.score == r.max_score);
}

TEST_CASE("a quick run where the spec does not accept quick runs is not graded, and says why", "[grading]") {
    Grading g;
    Run run = fixture_run();
    REQUIRE(run.raw.options.quick);
    const std::string yaml = "lesson: \"02.05\"\naccept_quick: false\nquestions:\n" + kRidge;
    GradingSpec spec = g.spec(yaml);
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    CHECK(r.score == 0);
    CHECK(r.max_score == 2);
    REQUIRE(r.problems.size() == 1);
    CHECK_THAT(r.problems[0], Catch::Contains("--quick") && Catch::Contains("lab run 02.05"));
    CHECK_THAT(console_report(r), Catch::Contains("--quick"));
    // The course default applies when the spec is silent.
    fs::path silent = g.write("silent.yaml", "lesson: \"02.05\"\nquestions:\n" + kRidge);
    CHECK_FALSE(load_spec(silent, false, "never").accept_quick);
    CHECK(load_spec(silent, true, "never").accept_quick);
}

TEST_CASE("a run of another major plugin version is not graded", "[grading]") {
    Grading g;
    Run run = fixture_run();
    run.record["lesson"]["plugin_version"] = "2.0.0";
    run.reseal();
    GradeReport r = g.grade(g.spec(spec_yaml(kRidge)), run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    REQUIRE_FALSE(r.problems.empty());
    CHECK_THAT(r.problems[0], Catch::Contains("2.0.0"));
}

// ---------------------------------------------------------------------------------------------
// Void questions and the ridge band

TEST_CASE("a question that does not apply to the run's device is void and leaves the maximum", "[grading]") {
    Grading g;
    Run run = fixture_run();
    REQUIRE(run.raw.device_kind == lab::DeviceKind::cpu);
    GradingSpec spec = g.spec(spec_yaml(kRidge + R"(  - id: ridge_gpu
    prompt: "The ridge, on a GPU?"
    unit: FLOP/B
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
    applies_to: [cuda]
    points: 3
  - id: ridge_bf16
    prompt: "The bf16 tensor-core ridge?"
    unit: FLOP/B
    expected: {metric: ridge_point_bf16_tensor}
    tolerance: {rel: 0.05}
    points: 5
)"));
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}, {"ridge_gpu", "11"}});
    REQUIRE(r.graded);
    CHECK(result(r, "ridge_gpu").verdict == Verdict::void_question);
    CHECK(result(r, "ridge_gpu").max_points == 0);
    CHECK(result(r, "ridge_gpu").points == 0);
    CHECK_THAT(result(r, "ridge_gpu").feedback, Catch::Contains("cpu"));
    // A CPU run has no bf16 tensor-core ridge: void too.
    CHECK(result(r, "ridge_bf16").verdict == Verdict::void_question);
    CHECK(result(r, "ridge_bf16").max_points == 0);
    CHECK(r.max_score == 2);
    CHECK(r.score == 2);
    CHECK_THAT(console_report(r), Catch::Contains("void"));
    CHECK_THAT(console_report(r), Catch::Contains("Score: 2 / 2"));
}

TEST_CASE("near the ridge either regime is accepted; far from it only the right one", "[grading]") {
    Grading g;
    Synthetic syn;
    syn.place("near", 1.1);   // AI 1.1 x ridge: predicted compute_bound
    syn.place("far", 2.0);
    const std::string q = R"(  - id: near_side
    prompt: "Which side of the ridge is the near kernel on?"
    type: regime
    expected: {metric: near.predicted_regime}
    near_ridge_either: 1.25
  - id: far_side
    prompt: "Which side of the ridge is the far kernel on?"
    type: regime
    expected: {metric: far.predicted_regime}
    near_ridge_either: 1.25
)";
    GradeReport r = syn.grade(g, q, {{"near_side", "memory_bound"}, {"far_side", "memory_bound"}});
    CHECK(result(r, "near_side").verdict == Verdict::correct);
    CHECK_THAT(result(r, "near_side").feedback, Catch::Contains("either regime"));
    CHECK(result(r, "far_side").verdict == Verdict::wrong);
    r = syn.grade(g, q, {{"near_side", "compute_bound"}, {"far_side", "compute_bound"}});
    CHECK(result(r, "near_side").verdict == Verdict::correct);
    CHECK(result(r, "far_side").verdict == Verdict::correct);
    // Only the two sides of the ridge: a latency_bound claim is wrong even there.
    r = syn.grade(g, q, {{"near_side", "latency_bound"}});
    CHECK(result(r, "near_side").verdict == Verdict::wrong);
    // Without the band the wrong side is wrong.
    const std::string strict = R"(  - id: near_side
    prompt: "Which side?"
    type: regime
    expected: {metric: near.predicted_regime}
)";
    CHECK(result(syn.grade(g, strict, {{"near_side", "memory_bound"}}), "near_side").verdict == Verdict::wrong);
    // A band narrower than the kernel's distance from the ridge does not reach it.
    const std::string narrow = R"(  - id: near_side
    prompt: "Which side?"
    type: regime
    expected: {metric: near.predicted_regime}
    near_ridge_either: 1.05
)";
    CHECK(result(syn.grade(g, narrow, {{"near_side", "memory_bound"}}), "near_side").verdict == Verdict::wrong);
}

TEST_CASE("a measured regime the run could not decide accepts either of its two candidates, and says why", "[grading]") {
    Grading g;
    Synthetic syn;
    syn.info.metrics.push_back({"noisy.measured_regime", "", lab::MetricKind::category, "a kernel near the 30% line"});
    lab::roofline::Placement p;
    p.measured.regime = lab::roofline::Regime::undecided;
    p.measured.first = lab::roofline::Regime::compute_bound;
    p.measured.second = lab::roofline::Regime::latency_bound;
    p.measured.reason = "the larger roof fraction against 30% is 1.04 of its threshold, within its noise (+-9%)";
    syn.derived.workloads.push_back({"noisy", p});
    syn.derived.category("noisy.measured_regime", lab::roofline::to_text(p.measured));
    const std::string q = R"(  - id: noisy
    prompt: "Which regime is the noisy kernel in?"
    type: regime
    expected: {metric: noisy.measured_regime}
)";
    for (const char* claim : {"compute_bound", "latency bound"}) {
        GradeReport r = syn.grade(g, q, {{"noisy", claim}});
        CAPTURE(claim);
        CHECK(result(r, "noisy").verdict == Verdict::correct);
        CHECK_THAT(result(r, "noisy").feedback, Catch::Contains("could not decide") && Catch::Contains("30%"));
    }
    CHECK(result(syn.grade(g, q, {{"noisy", "memory_bound"}}), "noisy").verdict == Verdict::wrong);
    CHECK(result(syn.grade(g, q, {{"noisy", "undecided"}}), "noisy").verdict == Verdict::invalid);
}

TEST_CASE("a record whose bandwidth.best is not the largest of its bandwidth ceilings is implausible", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    Run run = fixture_run();
    auto& bw = run.record["device"]["ceilings"]["bandwidth_bytes_per_s"];
    bw["best"]["value"] = bw["best"]["value"].get<double>() * 2;
    run.reseal();
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    bool named = false;
    for (const auto& prob : r.problems) named = named || prob.find("bandwidth.best") != std::string::npos;
    CHECK(named);
}

TEST_CASE("in-run ceiling measurements raise the roofs the grader holds workloads against", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kTriadSide));
    Run run = fixture_run();
    // The run as if it had started from a stale cache (a calibration made under load: a third of
    // the fp32 ceiling) and measured nothing while running: its FMA kernels beat that roof.
    auto& fp32 = run.record["device"]["ceilings"]["flops_per_s"]["fp32.simt"];
    const double stale = fp32["value"].get<double>() / 3;
    fp32["value"] = stale;
    run.record["device"]["ceiling_measurements"] = json::array();
    run.refresh();
    run.restore_stored_values();
    run.reseal();
    const json& many = run.workload("fma_many");
    REQUIRE(many["flops"].get<double>() / many["time_s"]["median"].get<double>() > 1.1 * stale);
    auto claims = [&] {
        return std::vector<std::pair<std::string, std::string>>{{"ridge_point", num(run.number("ridge_point"))},
                                                                {"triad_side", "memory_bound"}};
    };
    CHECK_FALSE(g.grade(spec, run, claims()).graded);

    // What this lab does instead: the run measures the ceiling again and keeps that as raw data
    // (here the FMA peak kernel's own recorded measurement); the roofs follow it.
    json fma = run.workload("fma_peak_fp32");
    fma.erase("derived");
    run.record["device"]["ceiling_measurements"] =
        json::array({{{"ceiling", "flops.fp32.simt"}, {"purpose", "remeasure"}, {"workloads", {"fma_many"}}, {"measurement", fma}}});
    run.refresh();
    run.restore_stored_values();
    run.reseal();
    const double remeasured = fma["flops"].get<double>() / fma["time_s"]["median"].get<double>();
    CHECK(run.raw.ceilings.peak_flops("fp32.simt") == Approx(std::max(stale, remeasured)));
    CHECK(run.raw.ceilings_at_start.peak_flops("fp32.simt") == Approx(stale));
    GradeReport r = g.grade(spec, run, claims());
    std::string problems;
    for (const auto& prob : r.problems) problems += prob + "\n";
    INFO(problems);
    CHECK(r.graded);
    CHECK(r.score == r.max_score);

    // An evidence entry naming a workload the run does not hold is refused.
    run.record["device"]["ceiling_measurements"].push_back(
        {{"ceiling", "flops.fp32.simt"}, {"purpose", "evidence"}, {"workloads", {"no_such_kernel"}}});
    run.refresh();
    run.reseal();
    CHECK_FALSE(g.grade(spec, run, claims()).graded);
}

TEST_CASE("the fma_few question of the test spec takes the other side only when the kernel is near the ridge", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = load_spec(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml", false, "never");
    const std::string right = run.text("fma_few.predicted_regime");
    const std::string other = right == "memory_bound" ? "compute_bound" : "memory_bound";
    double ai = 0, ridge = 0;
    for (const auto& w : run.derived.workloads)
        if (w.workload == "fma_few") ai = w.placement.ai, ridge = w.placement.ridge;
    REQUIRE(ridge > 0);
    const bool near = ai <= ridge * 1.25 && ai >= ridge / 1.25;
    GradeReport r = g.grade(spec, run, {{"fma_few_side", other}});
    CHECK(result(r, "fma_few_side").verdict == (near ? Verdict::correct : Verdict::wrong));
    r = g.grade(spec, run, {{"fma_few_side", right}});
    CHECK(result(r, "fma_few_side").verdict == Verdict::correct);
}

// ---------------------------------------------------------------------------------------------
// What students see

TEST_CASE("hidden questions are masked in the console and JSON reports", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const std::string hidden_attainable = kAttainable + "    hidden: true\n    hint: \"min of the two roofs\"\n";
    GradingSpec spec = g.spec(spec_yaml(kRidge + hidden_attainable, "02.05", "always"));
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}, {"attainable", "1 GFLOP/s"}});
    REQUIRE(r.graded);
    REQUIRE(result(r, "attainable").verdict == Verdict::wrong);  // graded all the same

    std::string console = console_report(r);
    std::string row;
    for (std::size_t at = 0, end; at < console.size(); at = end + 1) {
        end = console.find('\n', at);
        if (end == std::string::npos) end = console.size();
        if (console.compare(at, 10, "attainable") == 0) row = console.substr(at, end - at);
    }
    REQUIRE_FALSE(row.empty());
    CHECK_THAT(row, Catch::Contains("hidden"));
    CHECK_THAT(row, Catch::Contains("?/2"));
    CHECK_THAT(row, !Catch::Contains("wrong"));
    CHECK_THAT(row, !Catch::Contains("expected"));
    CHECK_THAT(console, !Catch::Contains("min of the two roofs"));
    CHECK_THAT(console, !Catch::Contains(result(r, "attainable").expected));
    // The visible question still shows its expected value (show_expected: always).
    CHECK_THAT(console, Catch::Contains("expected " + result(r, "ridge_point").expected));

    json j = json_report(r);
    json hidden, visible;
    for (const auto& q : j["questions"]) (q["id"] == "attainable" ? hidden : visible) = q;
    CHECK(hidden["verdict"] == "hidden");
    CHECK(hidden["points"].is_null());
    CHECK(hidden["feedback"] == "");
    CHECK(hidden["hint"] == "");
    CHECK_FALSE(hidden.contains("expected"));
    CHECK(hidden["max_points"] == 2);
    CHECK(visible["verdict"] == "correct");
    CHECK(visible["points"] == 2);
    CHECK(visible.contains("expected"));
    CHECK_THAT(j.dump(), !Catch::Contains("min of the two roofs"));
}

TEST_CASE("the totals shown to a student do not give away a hidden question's result", "[grading]") {
    // The console's "Score: x / y" and the JSON's "score" add the hidden question's points, so a
    // student learns its verdict by subtraction.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable + "    hidden: true\n", "02.05", "never"));
    const std::string ridge = num(run.number("ridge_point"));
    GradeReport right = g.grade(spec, run, {{"ridge_point", ridge}, {"attainable", num(run.number("attainable_flops_per_s") / 1e9)}});
    GradeReport wrong = g.grade(spec, run, {{"ridge_point", ridge}, {"attainable", "1"}});
    REQUIRE(right.score != wrong.score);  // graded all the same
    auto last_line = [](const std::string& s) {
        std::string t = s.substr(0, s.find_last_not_of('\n') + 1);
        return t.substr(t.rfind('\n') + 1);
    };
    CHECK(last_line(console_report(right)) == last_line(console_report(wrong)));
    CHECK(json_report(right)["score"] == json_report(wrong)["score"]);
}

TEST_CASE("show_expected: never hides expected values, always shows them, after_due_date follows the date", "[grading]") {
    Grading g;
    Run run = fixture_run();
    auto [policy, due, shown] = GENERATE(table<std::string, std::string, bool>({
        {"never", "", false},
        {"never", "2000-01-01", false},
        {"always", "", true},
        {"always", "2999-12-31", true},
        {"after_due_date", "", false},
        {"after_due_date", "2000-01-01", true},
        {"after_due_date", "2999-12-31", false},
    }));
    CAPTURE(policy, due);
    GradingSpec spec = g.spec(spec_yaml(kRidge, "02.05", policy, due.empty() ? "" : "due: \"" + due + "\"\n"));
    CHECK(expected_visible(spec) == shown);
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point") * 2)}});
    CHECK(r.show_expected == shown);
    const std::string expected = result(r, "ridge_point").expected;
    REQUIRE_FALSE(expected.empty());
    CHECK(expected == lab::units::format(run.number("ridge_point"), "FLOP/B"));
    std::string console = console_report(r);
    CHECK((console.find("expected " + expected) != std::string::npos) == shown);
    CHECK(json_report(r)["questions"][0].contains("expected") == shown);
    if (shown) CHECK(json_report(r)["questions"][0]["expected"] == expected);
    // The hint is shown for a wrong answer whatever the policy.
    CHECK_THAT(console, Catch::Contains("hint: peak FLOP/s over peak bandwidth"));
}

// ---------------------------------------------------------------------------------------------
// The whole pipeline, as `lab submit` runs it

TEST_CASE("grade_files reads, re-derives, binds and grades a submission with the configured spec", "[grading]") {
    lab_test::TempDir configs;
    fs::copy(lab_test::source_root() / "configs", configs / "configs", fs::copy_options::recursive);
    for (const char* id : {"02.01.yaml", "02.05.yaml"})
        fs::copy_file(lab_test::source_root() / "tests/fixtures/grading" / id, configs / "configs/grading" / id,
                      fs::copy_options::overwrite_existing);
    ScopedEnv env("LAB_CONFIG_DIR", (configs / "configs").string());

    Grading g;
    Run run = fixture_run();
    const fs::path run_file = fixture_run_file("02.05-quick-reveal.json");
    const double ridge = run.number("ridge_point");
    const double fraction = run.number("triad.roof_fraction");
    fs::path answers = g.write("my answers.yaml", g.answers_text(run, {
        {"ridge_point", num(ridge * 1.02) + " FLOP/B"},
        {"attainable", fmt::format("{:.4g} TFLOP/s", run.number("attainable_flops_per_s") / 1e12)},
        {"triad_side", "bandwidth bound"},
        {"fma_few_side", run.text("fma_few.predicted_regime")},
        {"fma_many_side", run.text("fma_many.predicted_regime")},
        {"sgemm_side", run.text("sgemm.predicted_regime")},
        {"triad_roof_fraction", num(100 * fraction + 1) + "%"},
    }));
    GradingContext ctx;
    GradeReport r = grade_files(ctx, "02.05", answers, run_file);
    CHECK(r.graded);
    CHECK(r.student == "alice");
    CHECK(r.run_digest == run.digest());
    CHECK(r.score == 10);
    CHECK(r.max_score == 10);
    for (const auto& q : r.results) {
        CAPTURE(q.question.id, q.claim, q.feedback);
        CHECK(q.verdict == Verdict::correct);
    }
    // The same submission under the lesson the answers name ("" = the answers' lesson).
    CHECK(grade_files(ctx, "", answers, run_file).score == 10);
    // The shipped 02.01 fixture grades too (its graded values are withheld in the record).
    Run r01 = fixture_run("02.01-quick.json");
    fs::path a01 = g.write("a01.yaml", g.answers_text(r01, {{"mystery_a", r01.text("mystery_a.measured_regime")}}));
    GradeReport rep01 = grade_files(ctx, "02.01", a01, fixture_run_file("02.01-quick.json"));
    CHECK(rep01.graded);
    CHECK(result(rep01, "mystery_a").verdict == Verdict::correct);
    CHECK(result(rep01, "mystery_b").verdict == Verdict::missing);
}

TEST_CASE("a run and answers of another lesson than the one graded are bad input, not a plugin failure", "[grading]") {
    // grade_files derives the run with the requested lesson's plugin before it checks that the
    // run (and the answers) are of that lesson, so `lab submit 02.01 ... --run <02.05 run>` fails
    // in the 02.01 plugin ("the run has no workload named 'mystery_a'", PluginError, exit 3)
    // instead of check_binding's InputError ("the run record is of lesson '02.05'", exit 2).
    lab_test::TempDir configs;
    fs::copy(lab_test::source_root() / "configs", configs / "configs", fs::copy_options::recursive);
    ScopedEnv env("LAB_CONFIG_DIR", (configs / "configs").string());
    Grading g;
    Run run = fixture_run();
    fs::path answers = g.write("answers.yaml", g.answers_text(run, {{"ridge_point", "11"}}));
    GradingContext ctx;
    CHECK_THROWS_AS(grade_files(ctx, "02.01", answers, fixture_run_file("02.05-quick-reveal.json")), lab::InputError);
    // Answers of 02.01 with a run of 02.05, graded as 02.01.
    std::string text = g.answers_text(run, {{"mystery_a", "memory_bound"}});
    text.replace(text.find("02.05"), 5, "02.01");
    fs::path a01 = g.write("a01.yaml", text);
    CHECK_THROWS_AS(grade_files(ctx, "", a01, fixture_run_file("02.05-quick-reveal.json")), lab::InputError);
}

TEST_CASE("the answers template names every question, the student and the run's digest", "[grading]") {
    Run run = fixture_run();
    GradingSpec spec = load_spec(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml", false, "never");
    std::string t = answers_template(spec, run.record);
    CHECK_THAT(t, Catch::Contains("run: \"" + run.digest() + "\""));
    CHECK_THAT(t, Catch::Contains("student: \"alice\""));
    CHECK_THAT(t, Catch::Contains("lesson: \"02.05\""));
    for (const auto& q : spec.questions) {
        CHECK_THAT(t, Catch::Contains("  " + q.id + ":\n"));
        CHECK_THAT(t, Catch::Contains(q.prompt));
    }
    CHECK_THAT(t, Catch::Contains("[GFLOP/s]"));
    // Filled in as it is, it is a valid answers file with every answer blank.
    Grading g;
    AnswersFile a = load_answers(g.write("template.yaml", t));
    CHECK(a.run == run.digest());
    CHECK(a.answers.size() == spec.questions.size());
    for (const auto& [id, c] : a.answers) CHECK(c.empty);
    CHECK(looks_like_answers(t));
    GradeReport r = g.grade_file(spec, run, a);
    CHECK(r.score == 0);
}

// ---------------------------------------------------------------------------------------------
// One convention for fractions of a ceiling: shown in %, read in % or as a fraction

TEST_CASE("a roof fraction as lab shows it (29.2%) is read back right, in a % or a ratio question", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const lab::MetricValue* m = run.derived.find("triad.roof_fraction");
    REQUIRE(m);
    const std::string shown = lab::record::format_value(*m);  // what lab run --reveal and lab show print
    REQUIRE(shown.back() == '%');
    const std::string pct = shown.substr(0, shown.size() - 1);
    std::string ratio_question = kTriadFraction;
    ratio_question.replace(ratio_question.find("unit: \"%\""), 9, "unit: ratio");
    ratio_question.replace(ratio_question.find("abs: 3"), 6, "abs: 0.03");
    for (const std::string& q : {kTriadFraction, ratio_question}) {
        GradingSpec spec = g.spec(spec_yaml(q));
        const bool percent = spec.questions.at(0).unit == "%";
        CAPTURE(spec.questions.at(0).unit);
        for (const std::string& claim : {shown, pct + " %", percent ? pct : num(m->number)}) {
            CAPTURE(claim);
            GradeReport r = g.grade(spec, run, {{"triad_roof_fraction", claim}});
            CHECK(result(r, "triad_roof_fraction").verdict == Verdict::correct);
        }
        // The expected value, where shown, is written the same way.
        GradeReport r = g.grade(spec, run, {{"triad_roof_fraction", "1%"}});
        CHECK(result(r, "triad_roof_fraction").expected == shown);
    }
}

// ---------------------------------------------------------------------------------------------
// The console table

namespace {

// Code points, as a terminal counts columns ("µ" is one).
std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

// The text of `line` from code-point column `col` on.
std::string from_column(const std::string& line, std::size_t col) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;  // inside a character
        if (n++ == col) return line.substr(i);
    }
    return "";
}

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t at = 0, end; at < s.size(); at = end + 1) {
        end = s.find('\n', at);
        if (end == std::string::npos) end = s.size();
        out.push_back(s.substr(at, end - at));
    }
    return out;
}

}  // namespace

TEST_CASE("the console table stays aligned whatever the length of an answer", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kAttainable + kRidge + kTriadSide + kTriadFraction));
    const std::string exact = fmt::format("{:.17g} FLOP/s", run.number("attainable_flops_per_s"));  // 20+ characters
    const std::string very_long = "the triad is memory bound because its arithmetic intensity is far below the ridge";
    GradeReport r = g.grade(spec, run, {{"attainable", exact},
                                        {"ridge_point", "350 \u00b5s"},  // a wrong dimension, with a two-byte µ
                                        {"triad_side", very_long},
                                        {"triad_roof_fraction", ""}});
    REQUIRE(r.graded);
    CHECK(result(r, "attainable").verdict == Verdict::correct);
    const std::string console = console_report(r);
    INFO(console);
    const auto lines = split_lines(console);
    std::size_t header = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].rfind("question ", 0) == 0) header = i;
    REQUIRE(header < lines.size());
    const std::string& h = lines[header];
    const std::size_t verdict_col = code_points(h.substr(0, h.find("verdict")));
    const std::size_t points_end = code_points(h.substr(0, h.find("points") + 6));
    for (const auto& q : r.results) {
        CAPTURE(q.question.id);
        std::string row;
        for (const auto& l : lines)
            if (l.rfind(q.question.id + " ", 0) == 0) row = l;
        REQUIRE_FALSE(row.empty());
        // The verdict starts in its column, after a blank: the answer never runs into it.
        const std::string verdict = to_string(q.verdict);
        CHECK(from_column(row, verdict_col).rfind(verdict, 0) == 0);
        CHECK(from_column(row, verdict_col - 1).rfind(" " + verdict, 0) == 0);
        // The points, right-aligned, end where the header's "points" ends.
        const std::string pts = q.verdict == Verdict::void_question ? "void" : "/" + fmt::format("{:g}", q.max_points);
        const std::string after = from_column(row, points_end - pts.size());
        CHECK(after.rfind(pts, 0) == 0);
    }
    // A long number is shown whole; an answer too long for its column is cut, and given in full
    // in the notes.
    CHECK_THAT(console, Catch::Contains(exact + " "));
    CHECK_THAT(console, Catch::Contains("\u2026"));
    CHECK_THAT(console, Catch::Contains("your answer: " + very_long));
}
