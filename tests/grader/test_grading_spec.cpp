// Grading specs: each kind of spec error is an InputError naming the spec file and line, a spec
// must fit its lesson's plugin, applies_to may be one kind or a list, and the shipped and test
// specs load and fit their lessons.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "grading_fixtures.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Bad specs: InputError naming file and line

TEST_CASE("each kind of spec error is an InputError naming the spec file and the line", "[grading]") {
    // Line numbers: 1 lesson, 2 accept_quick, 3 questions, 4 "- id:", then the question's keys.
    const std::string head = "lesson: \"02.05\"\naccept_quick: true\nquestions:\n";
    const std::string ridge = "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n";
    auto [name, yaml, line, fragment] = GENERATE_COPY(table<std::string, std::string, int, std::string>({
        {"unknown key in a question", head + ridge + "    tolerence: {rel: 0.05}\n", 8, "unknown key 'tolerence'"},
        // 1e308 points summed to an infinite total, written as null in results.json.
        {"points past any question's worth", head + ridge + "    tolerance: {rel: 0.05}\n    points: 1e308\n", 9,
         "points: 1e308 is more than any question is worth (at most 1000)"},
        {"unknown key in a tolerance", head + ridge + "    tolerance: {rel: 0.05, relative: 0.1}\n", 8,
         "unknown key 'relative'"},
        {"unknown key at the top", "lesson: \"02.05\"\naccept_quik: true\nquestions:\n" + ridge, 2, "unknown key 'accept_quik'"},
        {"metric the lesson does not declare",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_pointt}\n", 7,
         "does not declare (did you mean 'ridge_point'?)"},
        {"metric the lesson does not declare, written on its own line",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected:\n      metric: ridge_pointt\n", 8,
         "does not declare"},
        {"value of the wrong type", head + ridge + "    points: two\n", 8, "wrong type"},
        {"question type that does not fit the metric",
         head + "  - id: side\n    prompt: \"Side?\"\n    type: regime\n    expected: {metric: ridge_point}\n", 6, "is a number"},
        {"integer question on a number metric",
         head + "  - id: side\n    prompt: \"Side?\"\n    type: integer\n    expected: {metric: ridge_point}\n", 6, "asks for an integer"},
        {"number question on a category metric",
         head + "  - id: side\n    prompt: \"Side?\"\n    expected: {metric: triad.predicted_regime}\n", 4, "is a category"},  // type: left out
        {"number question on a category metric, type written",
         head + "  - id: side\n    prompt: \"Side?\"\n    expected: {metric: triad.predicted_regime}\n    type: number\n", 7, "is a category"},
        {"negative relative tolerance", head + ridge + "    tolerance: {rel: -0.05}\n", 8, "non-negative"},
        {"negative absolute tolerance", head + ridge + "    tolerance:\n      abs: -1\n", 9, "non-negative"},
        {"unit of the wrong dimension",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: GB/s\n    expected: {metric: ridge_point}\n", 6,
         "another dimension"},
        {"a noun on a quantity with a unit",
         head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    expected: {metric: ridge_point}\n    tolerance: {rel: 0.05}\n    noun: flop\n",
         8, "has a noun ('flop')"},
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
        {"choice options that are one answer to the grader",
         head + "  - id: c\n    prompt: \"?\"\n    type: choice\n    options: [\"Memory bound\", memory-bound]\n    expected: {value: memory-bound}\n",
         7, "are one answer to the grader"},
        {"choice options that differ only in a separator",
         head + "  - id: c\n    prompt: \"?\"\n    type: choice\n    options: [mxfp4, mx-fp4]\n    expected: {value: mxfp4}\n",
         7, "are one answer to the grader"},
        {"a regime question offering something that is not a regime",
         head + "  - id: s\n    prompt: \"?\"\n    type: regime\n    options: [memory_bound, sideways]\n    expected: {metric: triad.predicted_regime}\n",
         7, "option 'sideways' of regime question 's' is not a regime"},
        {"a regime question offering one regime under two names",
         head + "  - id: s\n    prompt: \"?\"\n    type: regime\n    options: [memory_bound, left]\n    expected: {metric: triad.predicted_regime}\n",
         7, "options 'memory_bound' and 'left' of regime question 's' are one regime (memory_bound)"},
        {"a regime question offering one regime",
         head + "  - id: s\n    prompt: \"?\"\n    type: regime\n    options: [memory_bound]\n    expected: {metric: triad.predicted_regime}\n",
         7, "offers one regime"},
        {"a regime question expecting a regime it does not offer",
         head + "  - id: s\n    prompt: \"?\"\n    type: regime\n    options: [memory_bound, compute_bound]\n    expected: {value: latency_bound}\n",
         8, "not one of the regimes the question offers"},
        {"unknown device kind", head + ridge + "    applies_to: [tpu]\n", 8, "unknown device kind 'tpu'"},
        {"near_ridge_either on a number question", head + ridge + "    near_ridge_either: 1.2\n", 8, "regime questions only"},
        {"applies_to a device that lacks the metric",
         head + "  - id: r\n    prompt: \"?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point_bf16_tensor}\n    applies_to: [cpu]\n",
         8, "not produced there"},
        {"applies_to a device that lacks the metric, as a block list",
         head + "  - id: r\n    prompt: \"?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point_bf16_tensor}\n    applies_to:\n      - cuda\n      - cpu\n",
         10, "applies to cpu"},
        // A measured value compared exactly: at the zero tolerance written, or the question's line
        // where none is written.
        {"no tolerance on a measured value", head + ridge, 4, "compares metric 'ridge_point' exactly"},
        {"rel: 0 on its own line", head + ridge + "    points: 2\n    tolerance:\n      rel: 0\n", 10, "compares metric 'ridge_point' exactly"},
        {"factor: 1", head + ridge + "    tolerance: {factor: 1}\n", 8, "compares metric 'ridge_point' exactly"},
        {"rel: 0 and abs: 0", head + ridge + "    tolerance:\n      rel: 0\n      abs: 0\n", 8, "compares metric 'ridge_point' exactly"},
        {"a zero tolerance shared through an anchor",
         head + "  - {id: c, prompt: p, type: integer, expected: {value: 41}, tolerance: &t {rel: 0}}\n" + ridge + "    tolerance: *t\n", 9,
         "question 'ridge_point' compares metric 'ridge_point' exactly"},
        // An anchored tolerance fine where written (150 of a count) but not where an alias uses it
        // (150 percentage points): the alias's line, not the anchor's, in another question.
        {"a tolerance shared through an anchor that does not fit the alias's question",
         head + "  - {id: c, prompt: p, type: integer, expected: {value: 41}, tolerance: &t {abs: 150}}\n" +
             "  - id: share\n    prompt: \"Share?\"\n    unit: \"%\"\n    expected: {value: 50}\n    tolerance: *t\n",
         9, "through the alias of line 4: abs: 150 is 150 percentage points"},
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
    // Each says what to do, once.
    CHECK(count_of(msg, "\n  fix: ") == 1);
}

// The mistakes an instructor's walkthrough made, each refused at its line with what to write
// instead: a percentage where rel reads a fraction, a word for a number, a negative or inverted
// band, a question without its prompt or expected value, or with a blank prompt (which the answers
// template would show as a bare "# "), and a spec with no questions.
TEST_CASE("a spec error says what to write instead, at the line at fault", "[grading]") {
    const std::string head = "lesson: \"02.05\"\naccept_quick: true\nquestions:\n";
    const std::string ridge = "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n";
    const std::string no_prompt = "  - id: ridge_point\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n    tolerance: {rel: 0.05}\n";
    auto [name, yaml, line, fragments] = GENERATE_COPY(table<std::string, std::string, int, std::vector<std::string>>({
        {"rel: 10%", head + ridge + "    tolerance: {rel: 10%}\n", 8,
         {"'rel' has a value of the wrong type ('10%'); did you mean rel: 0.1?", "fix: write a number, e.g. rel: 0.1 for 10%"}},
        {"points: one", head + ridge + "    tolerance: {rel: 0.05}\n    points: one\n", 9,
         {"'points' has a value of the wrong type ('one')", "fix: write a number, e.g. points: 2"}},
        {"rel: -0.1", head + ridge + "    tolerance: {rel: -0.1}\n", 8, {"'rel' must be a non-negative number, not -0.1", "fix: write a number, e.g. rel: 0.1"}},
        {"abs: -1", head + ridge + "    tolerance:\n      abs: -1\n", 9, {"'abs' must be a non-negative number, not -1", "fix: write a number, e.g. abs: 2"}},
        {"factor: 0.5", head + ridge + "    tolerance: {factor: 0.5}\n", 8,
         {"'factor' must be at least 1", "did you mean factor: 2?", "fix: write a factor above 1"}},
        {"credit: -0.5", head + ridge + "    tolerance: {rel: 0.05}\n    partial:\n      within: 2\n      credit: -0.5\n", 11,
         {"'credit' must be between 0 and 1 (a fraction of the points), not -0.5", "fix: write 0.5 for half the points"}},
        {"within: 0.5", head + ridge + "    tolerance: {rel: 0.05}\n    partial:\n      within: 0.5\n      credit: 0.5\n", 10,
         {"'within' must be more than 1", "fix: write a multiple above 1, e.g. within: 2"}},
        {"no prompt", head + no_prompt, 4, {"question 'ridge_point' has no 'prompt'", "fix: add one: write the question as the student reads it"}},
        {"an empty prompt", head + "  - id: ridge_point\n    prompt: \"\"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n", 5,
         {"question 'ridge_point' has an empty 'prompt'", "fix: write the question as the student reads it"}},
        {"a blank prompt", head + "  - id: ridge_point\n    prompt: \"   \"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n", 5,
         {"has an empty 'prompt'"}},
        {"a prompt key with nothing after it", head + "  - id: ridge_point\n    prompt:\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n", 5,
         {"has an empty 'prompt'"}},
        {"no expected", head + "  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n", 4,
         {"question 'ridge_point' has no 'expected'", "fix: write expected: {metric: NAME}", "or expected: {value: CONSTANT}"}},
        {"questions: []", "lesson: \"02.05\"\naccept_quick: true\nquestions: []\n", 3,
         {"'questions' is empty", "fix: add at least one question"}},
        {"questions: with nothing after it", "lesson: \"02.05\"\naccept_quick: true\nquestions:\n", 3, {"'questions' is empty"}},
        {"questions as a mapping", "lesson: \"02.05\"\nquestions:\n  ridge_point: {prompt: p}\n", 2, {"'questions' must be a list"}},
    }));
    CAPTURE(name);
    Grading g;
    const fs::path p = g.write("spec.yaml", yaml);
    const std::string msg = input_error([&] {
        GradingSpec s = load_spec(p, false, "after_due_date");
        check_spec_against(s, lesson("02.05").info);
    });
    CAPTURE(msg);
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":" + std::to_string(line) + ": "));
    for (const auto& f : fragments) CHECK_THAT(msg, Catch::Contains(f));
    CHECK(count_of(msg, "\n  fix: ") == 1);
}

// A regime question offers the regimes its answer can be: the answers template lists them, and the
// prompt names the same ones. 02.04's kernel_regime is computed from the AI and the ridge (a side
// of the ridge): memory_bound or compute_bound, never overhead_bound or latency_bound.
TEST_CASE("a regime question offers what its prompt names: its options, the two sides for a predicted regime, else all four",
          "[grading]") {
    const std::vector<std::string> sides = {"memory_bound", "compute_bound"};
    const std::vector<std::string> all = {"compute_bound", "memory_bound", "overhead_bound", "latency_bound"};
    Question q;
    q.type = QuestionType::regime;
    q.expected.metric = "triad.predicted_regime";
    CHECK(regime_choices(q) == sides);
    q.expected.metric = "mystery_a.measured_regime";
    CHECK(regime_choices(q) == all);
    q.options = {"Memory bound", "compute-bound"};
    CHECK(regime_choices(q) == sides);
    CHECK(or_list(all) == "compute_bound, memory_bound, overhead_bound or latency_bound");
    // Every shipped regime question: each regime its prompt names is offered, and a prompt that
    // names two ("A or B") offers those two only.
    int regime_questions = 0;
    for (const auto& entry : fs::directory_iterator(lab_test::source_root() / "configs/grading")) {
        if (entry.path().extension() != ".yaml") continue;
        const GradingSpec spec = load_spec(entry.path(), true, "never");
        for (const auto& sq : spec.questions) {
            if (sq.type != QuestionType::regime) continue;
            ++regime_questions;
            INFO(entry.path().filename().string() << " " << sq.id << ": " << sq.prompt);
            const std::vector<std::string> offered = regime_choices(sq);
            std::vector<std::string> named;
            for (const auto& r : all)
                if (sq.prompt.find(r) != std::string::npos) named.push_back(r);
            for (const auto& r : named) CHECK(std::find(offered.begin(), offered.end(), r) != offered.end());
            if (named.size() == 2 && sq.prompt.find(named[0] + " or " + named[1]) != std::string::npos)
                CHECK(std::set<std::string>(offered.begin(), offered.end()) == std::set<std::string>(named.begin(), named.end()));
        }
    }
    CHECK(regime_questions >= 10);
    // 02.04's, in the template and when graded.
    const GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.04.yaml", true, "never");
    const auto kernel_regime = std::find_if(spec.questions.begin(), spec.questions.end(), [](const Question& x) { return x.id == "kernel_regime"; });
    REQUIRE(kernel_regime != spec.questions.end());
    CHECK(regime_choices(*kernel_regime) == sides);
    const Run run = fixture_run("02.04-quick-reveal.json");
    const std::string tmpl = answers_template(spec, run.record);
    const auto at = tmpl.find("\n  kernel_regime:");
    REQUIRE(at != std::string::npos);
    const std::string comment = tmpl.substr(tmpl.rfind("  # ", at), at - tmpl.rfind("  # ", at));
    CHECK_THAT(comment, Catch::EndsWith("(memory_bound or compute_bound)") && !Catch::Contains("overhead_bound"));
    Grading g;
    GradingSpec quick_ok = spec;   // the fixture is a quick run; 02.04 grades full runs only
    quick_ok.accept_quick = true;
    const std::string other = run.text("question_regime") == "memory_bound" ? "compute_bound" : "memory_bound";
    for (const auto& [claim, verdict, note] : std::vector<std::tuple<std::string, Verdict, std::string>>{
             {run.text("question_regime"), Verdict::correct, ""},
             {other, Verdict::wrong, ""},
             {"latency_bound", Verdict::wrong, "this question is answered with memory_bound or compute_bound"},
             {"sideways", Verdict::invalid, "not a regime: write memory_bound or compute_bound"},
             // The side of the ridge, as the prompt names it (a student review: "left" was unreadable).
             {"left of the ridge", run.text("question_regime") == "memory_bound" ? Verdict::correct : Verdict::wrong, ""}}) {
        CAPTURE(claim);
        const GradeReport r = g.grade(quick_ok, run, {{"kernel_regime", claim}});
        CHECK(result(r, "kernel_regime").verdict == verdict);
        if (!note.empty()) CHECK_THAT(result(r, "kernel_regime").feedback, Catch::Contains(note));
    }
}

TEST_CASE("a spec for another lesson than its plugin is refused", "[grading]") {
    Grading g;
    GradingSpec s = g.spec(spec_yaml(kRidge, "02.05"), false);
    const std::string msg = input_error([&] { check_spec_against(s, lesson("02.01").info); });
    CHECK_THAT(msg, Catch::Contains("02.01"));
    CHECK_THAT(msg, Catch::StartsWith(s.file + ":1: "));  // at its `lesson:` line
}

TEST_CASE("a question on a metric declared in a prefixed unit or in % is refused: the grader compares base units", "[grading]") {
    // A metric declared in GB/s (or %) showed right everywhere and graded a correct '7.14 GB/s'
    // "off by exactly 10^9": the grader reads a declared value as its dimension's base unit.
    Grading g;
    for (const char* unit : {"GB/s", "%", "us"}) {
        CAPTURE(unit);
        lab::LessonInfo info = lesson("02.05").info;
        for (auto& m : info.metrics)
            if (m.name == "ridge_point") m.unit = unit;
        const std::string q = std::string(R"(  - id: ridge_point
    prompt: "Ridge?"
    unit: ")") + unit + R"("
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
)";
        GradingSpec s = g.spec(spec_yaml(q, "02.05"), false);
        const std::string msg = input_error([&] { check_spec_against(s, info); });
        CHECK_THAT(msg, Catch::Contains("declares in '" + std::string(unit) + "', not in its SI base unit") &&
                            Catch::Contains("fix: declare the metric in"));
    }
}

TEST_CASE("check-spec's warnings: after_due_date with no due date, a question worth 0 points", "[grading]") {
    Grading g;
    const std::string q = R"(  - id: ridge_point
    prompt: "Ridge?"
    unit: FLOP/B
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
    points: 0
)";
    GradingSpec s = g.spec(spec_yaml(q, "02.05", "after_due_date"), false);
    const auto w = spec_warnings(s, lesson("02.05").info);
    REQUIRE(w.size() == 2);
    CHECK_THAT(w[0], Catch::Contains("show_expected: after_due_date, but the spec has no due date, so expected values are never shown"));
    CHECK_THAT(w[1], Catch::Contains("question 'ridge_point' is worth 0 points"));
    // With a due date and points, nothing to say.
    std::string paid = q;
    paid.replace(paid.find("points: 0"), 9, "points: 2");
    CHECK(spec_warnings(g.spec(spec_yaml(paid, "02.05", "after_due_date", "due: \"2026-12-31\"\n"), false), lesson("02.05").info).empty());
}

TEST_CASE("a decimal comma in a tolerance and a unit spelt GBps or Gb/s are named", "[grading]") {
    Grading g;
    auto msg = [&](const std::string& tolerance, const std::string& unit) {
        return input_error([&] {
            g.spec(spec_yaml("  - id: ridge_point\n    prompt: \"Ridge?\"\n    unit: \"" + unit + "\"\n    expected: {metric: ridge_point}\n    tolerance: " +
                                 tolerance + "\n", "02.05"), false);
        });
    };
    CHECK_THAT(msg("{rel: 0,05}", "FLOP/B"), Catch::Contains("'0,05' in a tolerance reads as 0 and a key '05': a decimal comma") &&
                                                 Catch::Contains("fix: write a decimal point: 0.05"));
    CHECK_THAT(msg("{rel: 0.05}", "GBps"), Catch::Contains("unknown unit 'GBps': write 'GB/s' (per second as /s)"));
    CHECK_THAT(msg("{rel: 0.05}", "Gb/s"), Catch::Contains("Gb/s is gigabits per second; write GB/s"));
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

// An instructor's review: a yes/no or choice question on a regime matches only its exact text
// (no answer scored on `options: [memory, compute]`), and a yes/no question on a measured
// quantity reads yes for any value but zero (`yes` was right for an AI of 0.25).
TEST_CASE("a yes/no or choice question on a regime, or yes/no on a quantity, is refused at its type", "[grading]") {
    Grading g;
    auto refusal = [&](const std::string& q) {
        return input_error([&] { check_spec_against(g.spec(spec_yaml(q, "02.05"), false), lesson("02.05").info); });
    };
    CHECK_THAT(refusal("  - id: side\n    prompt: \"Side?\"\n    type: choice\n    options: [memory, compute]\n    expected: {metric: triad.predicted_regime}\n"),
               Catch::Contains(":7: question 'side' is a choice question on regime 'triad.predicted_regime'") && Catch::Contains("fix: use type: regime"));
    CHECK_THAT(refusal("  - id: side\n    prompt: \"Memory bound?\"\n    type: bool\n    expected: {metric: triad.predicted_regime}\n"),
               Catch::Contains("is a bool question on regime"));
    CHECK_THAT(refusal("  - id: ridge\n    prompt: \"Ridge?\"\n    type: bool\n    expected: {metric: ridge_point}\n"),
               Catch::Contains("is a yes/no question on metric 'ridge_point', a quantity in 'FLOP/B': it would read yes for any value but zero"));
}

TEST_CASE("a constant written to many figures with no tolerance is warned of", "[grading]") {
    Grading g;
    auto warnings = [&](const std::string& value) {
        const std::string q = "  - id: third\n    prompt: \"AI?\"\n    unit: FLOP/B\n    expected: {value: " + value + "}\n";
        return spec_warnings(g.spec(spec_yaml(q, "02.05"), false), lesson("02.05").info);
    };
    const auto w = warnings("0.3333333");
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains("question 'third' compares the constant 0.3333333 exactly") && Catch::Contains("fix: add a tolerance"));
    CHECK(warnings("0.25").empty());
    CHECK(warnings("4096").empty());
}

// The spec held against the lesson's values on its model devices (lesson_plan.hpp, model_values):
// values a test writes by hand here, as the replays would give them.
TEST_CASE("a tolerance narrower than the value as printed, or far wider than the value, and an unanswerable choice are warned of",
          "[grading]") {
    Grading g;
    auto number = [](const std::string& name, double v, const std::string& unit) {
        lab::MetricValue m{.name = name, .unit = unit, .number = v};
        return std::vector<lab::ModelValue>{{"a model CPU", m}};
    };
    const std::string ridge = "  - id: ridge\n    prompt: \"Ridge?\"\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n    tolerance: ";
    auto warnings = [&](const std::string& tolerance, double value) {
        return model_value_warnings(g.spec(spec_yaml(ridge + tolerance + "\n", "02.05"), false), {{"ridge_point", number("ridge_point", value, "FLOP/B")}});
    };
    const auto narrow = warnings("{abs: 0.0000001}", 7.51234);
    REQUIRE(narrow.size() == 1);
    CHECK_THAT(narrow[0], Catch::Contains("question 'ridge': its tolerance is narrower than the value as lab prints it: on a model CPU, 7.51 FLOP/B"));
    CHECK(warnings("{rel: 0.01}", 7.51234).empty());
    // abs written in base units on a question read in another unit: everything passes.
    const auto wide = warnings("{abs: 500}", 7.51234);
    REQUIRE(wide.size() == 1);
    CHECK_THAT(wide[0], Catch::Contains("its tolerance is more than 10 times the value on every model device"));
    CHECK(warnings("{abs: 5}", 7.51234).empty());
    // A band reaching 0 passes a student who measured nothing (02.09's {abs: 1} point around a
    // 0.4-0.9% roof fraction did); one that stops short of 0 is no concern, nor is a factor.
    const auto zero = warnings("{abs: 8}", 7.51234);
    REQUIRE(zero.size() == 1);
    CHECK_THAT(zero[0], Catch::Contains("question 'ridge': its tolerance accepts an answer of 0 on every model device (on a model CPU the value "
                                        "is 7.51 FLOP/B)") &&
                            Catch::Contains("fix: an abs below the value, or rel"));
    CHECK(warnings("{factor: 10}", 7.51234).empty());
    // Held against recorded runs (`lab check-spec --run`), the set is named as such.
    const auto on_runs = model_value_warnings(g.spec(spec_yaml(ridge + "{abs: 8}\n", "02.05"), false),
                                              {{"ridge_point", {{"the run r.json", {.name = "ridge_point", .unit = "FLOP/B", .number = 7.5}}}}},
                                              "every run given");
    REQUIRE(on_runs.size() == 1);
    CHECK_THAT(on_runs[0], Catch::Contains("accepts an answer of 0 on every run given (on the run r.json the value is 7.5 FLOP/B)"));
    // A factor's partial band is factor^within: 2^4 is x/÷ 16 (a red-team review found 02.04's);
    // a lint of the spec alone, with no values needed.
    auto loose = [&](const std::string& within) {
        return spec_warnings(g.spec(spec_yaml(ridge + "{factor: 2}\n    partial: {within: " + within + ", credit: 0.5}\n", "02.05"), false),
                             lesson("02.05").info);
    };
    REQUIRE(loose("4").size() == 1);
    CHECK_THAT(loose("4")[0], Catch::Contains("question 'ridge': its partial band is x/÷ 16 (factor 2 to the power within: 4)"));
    CHECK(loose("2").empty());
    // Whole units are read off whole: 1235 MiB within abs 1 is no narrower than printed.
    CHECK(model_value_warnings(g.spec(spec_yaml("  - id: mem\n    prompt: \"Used?\"\n    unit: MiB\n    expected: {metric: ridge_point}\n    "
                                                "tolerance: {abs: 1}\n", "02.05"), false),
                               {{"ridge_point", number("ridge_point", 1235.0 * 1048576, "B")}})
              .empty());

    // A metric declared with no unit is graded as a plain count: a bandwidth in B/s declared so
    // (an SDK review) refused "8.81 GB/s". A count of billions asked with no noun is warned of.
    auto unitless = [&](const std::string& extra, double value) {
        return model_value_warnings(g.spec(spec_yaml("  - id: bw\n    prompt: \"Bandwidth?\"\n    expected: {metric: ridge_point}\n    tolerance: {rel: 0.05}\n" + extra,
                                                     "02.05"), false),
                                    {{"ridge_point", number("ridge_point", value, "")}});
    };
    const auto no_unit = unitless("", 8.81e9);
    REQUIRE(no_unit.size() == 1);
    CHECK_THAT(no_unit[0], Catch::Contains("question 'bw': metric 'ridge_point' has no unit, so it is graded as a plain count, yet on a model CPU its value is 8.81e9") &&
                               Catch::Contains("fix: if it is a quantity, declare its SI unit in the lesson's info()"));
    CHECK(unitless("    noun: element\n", 8.81e9).empty());  // a count, said to be one
    CHECK(unitless("", 64).empty());                          // a count of a likely size
    CHECK(unitless("", 2e-6).size() == 1);                    // seconds in a count

    const std::string choice = "  - id: kind\n    prompt: \"Kind?\"\n    type: choice\n    options: [cold, warm]\n    expected: {metric: ridge_point}\n";
    lab::MetricValue text{.name = "ridge_point", .kind = lab::MetricKind::category, .text = "hot"};
    const auto unanswerable = model_value_warnings(g.spec(spec_yaml(choice, "02.05"), false), {{"ridge_point", {{"a model GPU", text}}}});
    REQUIRE(unanswerable.size() == 1);
    CHECK_THAT(unanswerable[0], Catch::Contains("question 'kind': on a model GPU the lesson gives 'hot', which is not one of its options: no answer can score"));
    text.text = "cold or warm";
    CHECK(model_value_warnings(g.spec(spec_yaml(choice, "02.05"), false), {{"ridge_point", {{"a model GPU", text}}}}).empty());
}
