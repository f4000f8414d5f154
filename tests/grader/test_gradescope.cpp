// Gradescope's results.json (REFERENCES.md, "Gradescope autograder contract"), field by field:
// the top level (score, execution_time, output, visibility, stdout_visibility), one test per
// question (name, number "1.n", score, max_score, status, output, visibility; hidden questions
// after_published; void questions left out), runs that are not graded, and the results written
// when grading itself failed (score 0, a message for the student, the diagnostic hidden).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "answers.hpp"
#include "evaluate.hpp"
#include "plugin_loader.hpp"
#include "reports.hpp"
#include "run_record.hpp"
#include "spec.hpp"
#include "derived_values.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace lab::grader;

namespace {

const lab::LoadedLesson& lesson_02_05() {
    static const lab::LoadedLesson l = lab::load_lesson(lab_test::build_root() / "labs/02_05/lab_02_05.so");
    return l;
}

// The 02.05 fixture, its raw run and its derivation by the lesson's own code.
struct Run {
    json record = lab::record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    lab::RawRun raw = lab::record::raw_run_from_record(record);
    lab::Derivation derived = lesson_02_05().lesson->derivation(raw);
    double number(const std::string& name) const { return lab_test::derived_number(derived, name); }
    std::string text(const std::string& name) const { return lab_test::derived_text(derived, name); }
};

std::string num(double v) { return fmt::format("{:.5g}", v); }

// Seven questions, one of each outcome: correct, partial, wrong, no answer, unreadable, hidden
// (answered right), and void (applies to CUDA runs only), in that order.
std::string questions(bool accept_quick, const std::string& show_expected) {
    return fmt::format(R"(lesson: "02.05"
accept_quick: {}
show_expected: {}
questions:
  - id: ridge_point
    prompt: "What is the fp32 ridge point of your device?"
    unit: FLOP/B
    expected: {{metric: ridge_point}}
    tolerance: {{rel: 0.05}}
    partial: {{within: 3, credit: 0.5}}
    points: 2
    hint: "peak FLOP/s over peak bandwidth"
  - id: attainable
    prompt: "What FLOP/s can a kernel of AI question_ai attain at most?"
    unit: GFLOP/s
    expected: {{metric: attainable_flops_per_s}}
    tolerance: {{rel: 0.05}}
    partial: {{within: 3, credit: 0.5}}
    points: 2
    hint: "the lower of the two roofs"
  - id: triad_side
    prompt: "On which side of the ridge is the triad?"
    type: regime
    expected: {{metric: triad.predicted_regime}}
    hint: "compare the triad's AI with your ridge"
  - id: triad_roof_fraction
    prompt: "What fraction of its roof does the triad achieve?"
    unit: "%"
    expected: {{metric: triad.roof_fraction}}
    tolerance: {{abs: 3}}
    points: 2
  - id: triad_time
    prompt: "How long does one triad take?"
    unit: ms
    expected: {{metric: triad.time_s}}
    tolerance: {{rel: 0.1}}
  - id: sgemm_side
    prompt: "On which side of the ridge is SGEMM?"
    type: regime
    expected: {{metric: sgemm.predicted_regime}}
    hidden: true
    points: 3
  - id: ridge_gpu
    prompt: "What is the ridge point on a GPU?"
    unit: FLOP/B
    expected: {{metric: ridge_point}}
    tolerance: {{rel: 0.05}}
    applies_to: [cuda]
    points: 4
)",
                       accept_quick ? "true" : "false", show_expected);
}

struct Graded {
    lab_test::TempDir dir;
    Run run;
    GradingSpec spec;
    AnswersFile answers;
    GradeReport report;

    explicit Graded(bool accept_quick = true, const std::string& show_expected = "never") {
        lab_test::write_file(dir / "spec.yaml", questions(accept_quick, show_expected));
        spec = load_spec(dir / "spec.yaml", false, "never");
        check_spec_against(spec, lesson_02_05().info);
        std::string text = fmt::format("lesson: \"02.05\"\nstudent: alice\nrun: \"{}\"\nanswers:\n", run.record["digest"].get<std::string>());
        text += "  ridge_point: " + num(run.number("ridge_point")) + " FLOP/B\n";
        text += "  attainable: " + num(run.number("attainable_flops_per_s") / 1e9 * 1.1) + " GFLOP/s\n";  // partial
        text += "  triad_side: compute_bound\n";                                                          // wrong
        text += "  triad_roof_fraction:\n";                                                               // blank
        text += "  triad_time: 3 GB\n";                                                                   // unreadable
        text += "  sgemm_side: " + run.text("sgemm.predicted_regime") + "\n";                            // hidden, right
        text += "  ridge_gpu: 11\n";                                                                      // void
        lab_test::write_file(dir / "answers.yaml", text);
        answers = load_answers(dir / "answers.yaml");
        Submission s{spec, lesson_02_05().info, run.record, run.raw, run.derived, answers};
        check_binding(s);
        report = grade(s);
    }
};

const json& test_named(const json& results, const std::string& id) {
    for (const auto& t : results["tests"])
        if (t["name"].get<std::string>().rfind(id + ":", 0) == 0) return t;
    FAIL("no test for question " << id);
    throw;
}

bool has_test(const json& results, const std::string& id) {
    for (const auto& t : results["tests"])
        if (t["name"].get<std::string>().rfind(id + ":", 0) == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("results.json has the top-level fields Gradescope reads", "[gradescope]") {
    Graded g;
    REQUIRE(g.report.graded);
    json r = gradescope_results(g.report, 1.25);
    // score: 2 (ridge) + 1 (attainable, half) + 3 (hidden sgemm) = 6 of 2+2+1+2+1+3 = 11. With a
    // hidden question the top-level score is left out: Gradescope sums the tests and holds the
    // hidden one back until results are published.
    CHECK_FALSE(r.contains("score"));
    CHECK(g.report.score == 6.0);
    double sum = 0;
    for (const auto& t : r["tests"]) sum += t["score"].get<double>();
    CHECK(sum == g.report.score);
    REQUIRE(r.contains("execution_time"));
    CHECK(r["execution_time"].is_number());
    CHECK(r["execution_time"] == 1.25);
    REQUIRE(r["output"].is_string());
    CHECK_THAT(r["output"].get<std::string>(), Catch::Contains("02.05"));
    CHECK_THAT(r["output"].get<std::string>(), Catch::Contains("Score: 3 / 8 (+ 1 hidden question"));
    CHECK(r["visibility"] == "visible");
    CHECK(r["stdout_visibility"] == "hidden");
    if (r.contains("output_format")) CHECK(r["output_format"] == "text");
    REQUIRE(r["tests"].is_array());
    CHECK(r["tests"].size() == 6);  // seven questions, one void
    // Nothing Gradescope does not know at the top level.
    const std::set<std::string> known = {"score",      "execution_time",     "output",        "output_format",
                                         "test_output_format", "test_name_format", "visibility", "stdout_visibility",
                                         "extra_data", "tests",              "leaderboard"};
    for (const auto& [key, value] : r.items()) {
        CAPTURE(key);
        CHECK(known.count(key) == 1);
    }
}

TEST_CASE("each question is one test with name, number, score, max_score, status, output and visibility", "[gradescope]") {
    Graded g;
    json r = gradescope_results(g.report, 0.5);
    const std::set<std::string> known = {"score",  "max_score",     "status", "name",       "name_format", "number",
                                         "output", "output_format", "tags",   "visibility", "extra_data"};
    std::set<std::string> numbers;
    int position = 0;
    for (const auto& t : r["tests"]) {
        ++position;
        CAPTURE(t.dump());
        for (const auto& [key, value] : t.items()) CHECK(known.count(key) == 1);
        REQUIRE(t["name"].is_string());
        REQUIRE(t["number"].is_string());
        CHECK(std::regex_match(t["number"].get<std::string>(), std::regex(R"(1\.[0-9]+)")));
        CHECK(t["number"] == "1." + std::to_string(position));  // the void question is last
        CHECK(numbers.insert(t["number"].get<std::string>()).second);
        CHECK(t["score"].is_number());
        CHECK(t["max_score"].is_number());
        CHECK((t["status"] == "passed" || t["status"] == "failed"));
        CHECK(t["output"].is_string());
        CHECK((t["visibility"] == "visible" || t["visibility"] == "after_published"));
    }

    const json& ridge = test_named(r, "ridge_point");
    CHECK(ridge["name"] == "ridge_point: What is the fp32 ridge point of your device?");
    CHECK(ridge["score"] == 2.0);
    CHECK(ridge["max_score"] == 2.0);
    CHECK(ridge["status"] == "passed");
    CHECK(ridge["visibility"] == "visible");
    CHECK_THAT(ridge["output"].get<std::string>(), Catch::Contains("Your answer: " + num(g.run.number("ridge_point")) + " FLOP/B"));
    CHECK_THAT(ridge["output"].get<std::string>(), Catch::Contains("correct"));
    CHECK_THAT(ridge["output"].get<std::string>(), !Catch::Contains("Hint"));

    const json& attainable = test_named(r, "attainable");  // partial: half the points, not passed
    CHECK(attainable["score"] == 1.0);
    CHECK(attainable["max_score"] == 2.0);
    CHECK(attainable["status"] == "failed");
    CHECK_THAT(attainable["output"].get<std::string>(), Catch::Contains("partly correct"));
    CHECK_THAT(attainable["output"].get<std::string>(), Catch::Contains("Hint: the lower of the two roofs"));

    const json& side = test_named(r, "triad_side");  // wrong
    CHECK(side["score"] == 0.0);
    CHECK(side["max_score"] == 1.0);
    CHECK(side["status"] == "failed");
    CHECK_THAT(side["output"].get<std::string>(), Catch::Contains("Verdict: wrong"));
    CHECK_THAT(side["output"].get<std::string>(), Catch::Contains("Hint: compare the triad's AI with your ridge"));

    const json& blank = test_named(r, "triad_roof_fraction");  // no answer
    CHECK(blank["score"] == 0.0);
    CHECK(blank["max_score"] == 2.0);
    CHECK(blank["status"] == "failed");
    CHECK_THAT(blank["output"].get<std::string>(), Catch::Contains("(none)"));
    CHECK_THAT(blank["output"].get<std::string>(), Catch::Contains("no answer"));

    const json& unreadable = test_named(r, "triad_time");  // a bytes figure for a time
    CHECK(unreadable["score"] == 0.0);
    CHECK(unreadable["status"] == "failed");
    CHECK_THAT(unreadable["output"].get<std::string>(), Catch::Contains("unreadable answer"));
    CHECK_THAT(unreadable["output"].get<std::string>(), Catch::Contains("3 GB"));
    CHECK_THAT(unreadable["output"].get<std::string>(), Catch::Contains("expected"));  // the unit error says what to write

    const json& hidden = test_named(r, "sgemm_side");
    CHECK(hidden["visibility"] == "after_published");
    CHECK(hidden["score"] == 3.0);
    CHECK(hidden["max_score"] == 3.0);
    CHECK(hidden["status"] == "passed");

    // The void question is not a test and adds nothing to the maximum.
    CHECK_FALSE(has_test(r, "ridge_gpu"));
    double max = 0;
    for (const auto& t : r["tests"]) max += t["max_score"].get<double>();
    CHECK(max == 11.0);
    CHECK(g.report.max_score == 11.0);
}

TEST_CASE("a run that is not graded scores 0 in every test and says why", "[gradescope]") {
    Graded g(/*accept_quick=*/false);
    REQUIRE_FALSE(g.report.graded);
    json r = gradescope_results(g.report, 0.1);
    CHECK(r["score"] == 0.0);
    CHECK_THAT(r["output"].get<std::string>(), Catch::Contains("Not graded"));
    CHECK_THAT(r["output"].get<std::string>(), Catch::Contains("--quick"));
    // Its first line does not call it graded against the run.
    CHECK_THAT(r["output"].get<std::string>(), Catch::Contains(" not graded: your run on ") && !Catch::Contains("graded against"));
    CHECK(r["visibility"] == "visible");
    REQUIRE(r["tests"].size() == 6);
    for (const auto& t : r["tests"]) {
        CAPTURE(t.dump());
        CHECK(t["score"] == 0.0);
        CHECK(t["status"] == "failed");
        CHECK(t["max_score"].get<double>() > 0);
    }
}

TEST_CASE("expected values appear in a test's output only when show_expected allows", "[gradescope]") {
    for (const std::string policy : {"never", "always"}) {
        CAPTURE(policy);
        Graded g(true, policy);
        json r = gradescope_results(g.report, 0.1);
        const std::string out = test_named(r, "triad_side")["output"].get<std::string>();
        CHECK((out.find("Expected: " + g.run.text("triad.predicted_regime")) != std::string::npos) == (policy == "always"));
        CHECK((test_named(r, "ridge_point")["output"].get<std::string>().find("Expected:") != std::string::npos) ==
              (policy == "always"));
    }
}

TEST_CASE("the top-level output does not give away a hidden question's result", "[gradescope]") {
    // The visible top-level output holds "Score: x / y", which counts the after_published test.
    Graded right;
    lab_test::write_file(right.dir / "answers.yaml",
                         std::regex_replace(lab_test::read_file(right.dir / "answers.yaml"), std::regex("sgemm_side: .*"),
                                            "sgemm_side: latency_bound"));
    AnswersFile wrong_answers = load_answers(right.dir / "answers.yaml");
    Submission s{right.spec, lesson_02_05().info, right.run.record, right.run.raw, right.run.derived, wrong_answers};
    GradeReport wrong = grade(s);
    REQUIRE(wrong.score != right.report.score);
    CHECK(gradescope_results(wrong, 0.1)["output"] == gradescope_results(right.report, 0.1)["output"]);
}

TEST_CASE("a failed grading still gives Gradescope a result: score 0, a message, the diagnostic hidden", "[gradescope]") {
    json r = gradescope_failure("The autograder failed while grading your submission.", "autograder failure: std::bad_alloc at step 3");
    CHECK(r["score"].is_number());
    CHECK(r["score"] == 0);
    CHECK(r["output"] == "The autograder failed while grading your submission.");
    CHECK_THAT(r["output"].get<std::string>(), !Catch::Contains("bad_alloc"));
    CHECK(r["visibility"] == "visible");
    CHECK(r["stdout_visibility"] == "hidden");
    REQUIRE(r["tests"].is_array());
    REQUIRE(r["tests"].size() == 1);
    const json& t = r["tests"][0];
    CHECK(t["visibility"] == "hidden");
    CHECK(t["output"] == "autograder failure: std::bad_alloc at step 3");
    CHECK(t["score"] == 0);
    CHECK(t["max_score"] == 0);
    CHECK(t["status"] == "failed");
    CHECK(t["name"].is_string());
    // Nothing the student sees holds the diagnostic.
    json seen = r;
    seen.erase("tests");
    CHECK_THAT(seen.dump(), !Catch::Contains("bad_alloc"));
}

TEST_CASE("a failed grading names each question without the spec's placeholders for a student's own values", "[gradescope]") {
    // An instructor review: a refused results.json named 02.02's first test "prefill of
    // question_seq tokens" (a graded one says "512 tokens"): no run was graded to fill it in.
    const GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.02.yaml", true, "never");
    REQUIRE(std::any_of(spec.questions.begin(), spec.questions.end(), [](const Question& q) { return q.prompt.find("question_seq") != std::string::npos; }));
    const json r = gradescope_failure("Your submission could not be graded: ...", "...", 0.1, &spec);
    bool filled = false;
    for (const auto& t : r["tests"]) {
        const std::string name = t["name"];
        CHECK_THAT(name, !Catch::Contains("question_"));
        filled = filled || name.find("prefill of (your run's value) tokens") != std::string::npos;
    }
    CHECK(filled);
}

TEST_CASE("results.json is plain JSON that survives a round trip", "[gradescope]") {
    Graded g(true, "always");
    json r = gradescope_results(g.report, 2.0);
    CHECK(json::parse(r.dump(2)) == r);
    // The claims students wrote, units and all, come back unchanged.
    CHECK_THAT(r.dump(), Catch::Contains("3 GB"));
}
