// Reading a submission: answers left out or blank, malformed answers files and missing fields
// (InputError naming the file and line), and the whole pipeline as `lab submit` runs it (read,
// re-derive, bind, grade), refusing a run or answers of another lesson as bad input.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "reports.hpp"
#include "submission.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

// ---------------------------------------------------------------------------------------------
// Missing answers

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
// Bad answers files: InputError naming file and line

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
         "'ridge_point' is written twice in the same mapping (lines 5 and 6)"},
        {"lesson: \"02.05\"\nstudent: alice\nrun: \"sha256:x\"\nanswers:\n  ridge_point: {11\n  attainable: 3\n", 5, "YAML"},
    }));
    fs::path p = g.write("answers.yaml", text);
    msg = input_error([&] { load_answers(p); });
    CAPTURE(text);
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":" + std::to_string(line) + ":") || Catch::StartsWith(p.string() + ":" + std::to_string(line + 1) + ":"));
    CHECK_THAT(msg, Catch::Contains(fragment));
}

// YAML 1.2 counts a lone CR as a line break (classic Mac OS editors write them): read as one
// line, the whole file was its first comment and "empty", and the fix offered overwrote it.
TEST_CASE("an answers file with classic Mac line ends (a lone CR) is read, its lines counted", "[grading]") {
    Grading g;
    const fs::path p = g.write("answers.yaml", "# answers\rlesson: \"02.05\"\rstudent: alice\rrun: \"sha256:x\"\ranswers:\r  ridge_point: 11\r");
    const lab::grader::AnswersFile a = load_answers(p);
    CHECK(a.lesson == "02.05");
    CHECK(a.student == "alice");
    const fs::path bad = g.write("bad.yaml", "lesson: \"02.05\"\rstudent: alice\rrun: \"sha256:x\"\ranswers:\r  ridge_point: 11\rextra: 1\r");
    CHECK_THAT(input_error([&] { load_answers(bad); }), Catch::StartsWith(bad.string() + ":6:"));
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
    // Both of 02.05: submitted to the wrong assignment. The fix is the right lesson's run and
    // answers, not editing the lesson: line (an operator's review followed it into a refusal).
    try {
        grade_files(ctx, "02.01", answers, fixture_run_file("02.05-quick-reveal.json"));
    } catch (const lab::InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("the answers and the run are of lesson 02.05, and this grades lesson 02.01") &&
                                 Catch::Contains("record `lab run 02.01`") && !Catch::Contains("correct their lesson: line"));
    }
    // Answers of 02.01 with a run of 02.05, graded as 02.01.
    std::string text = g.answers_text(run, {{"mystery_a", "memory_bound"}});
    text.replace(text.find("02.05"), 5, "02.01");
    fs::path a01 = g.write("a01.yaml", text);
    CHECK_THROWS_AS(grade_files(ctx, "", a01, fixture_run_file("02.05-quick-reveal.json")), lab::InputError);
}

TEST_CASE("answers bound to another run name the run file given, not only the two digests", "[grading]") {
    lab_test::TempDir configs;
    fs::copy(lab_test::source_root() / "configs", configs / "configs", fs::copy_options::recursive);
    ScopedEnv env("LAB_CONFIG_DIR", (configs / "configs").string());
    Grading g;
    Run run = fixture_run();
    std::string text = g.answers_text(run, {{"ridge_point", "11"}});
    text.replace(text.find(run.digest()), run.digest().size(), "sha256:" + std::string(64, '0'));
    const fs::path answers = g.write("answers.yaml", text);
    const fs::path run_file = fixture_run_file("02.05-quick-reveal.json");
    GradingContext ctx;
    const std::string msg = input_error([&] { grade_files(ctx, "02.05", answers, run_file); });
    CHECK_THAT(msg, Catch::Contains("the answers are bound to run sha256:000000000000…, but the run given (" + run_file.string() +
                                    ") is " + run.digest().substr(0, 19) + "…"));
    CHECK_THAT(msg, Catch::Contains("make a new template with `lab answers`"));
}

// A review: a run: digest cut short was refused as bound to another run, both shown cut to the same
// 19 characters, so that they read the same.
TEST_CASE("answers whose run digest is cut short, or differs late, say so with digests that differ", "[grading]") {
    lab_test::TempDir configs;
    fs::copy(lab_test::source_root() / "configs", configs / "configs", fs::copy_options::recursive);
    ScopedEnv env("LAB_CONFIG_DIR", (configs / "configs").string());
    Grading g;
    Run run = fixture_run();
    const std::string digest = run.digest();
    const fs::path run_file = fixture_run_file("02.05-quick-reveal.json");
    GradingContext ctx;
    auto refusal = [&](const std::string& written) {
        std::string text = g.answers_text(run, {{"ridge_point", "11"}});
        text.replace(text.find(digest), digest.size(), written);
        const fs::path answers = g.write("answers.yaml", text);
        return input_error([&] { grade_files(ctx, "02.05", answers, run_file); });
    };
    const std::string cut = digest.substr(0, 30);
    std::string msg = refusal(cut);
    CHECK_THAT(msg, Catch::Contains("the answers' run: digest is cut short: its 30 characters (" + cut + ") begin the digest of the run given (" +
                                    run_file.string() + "), which has " + std::to_string(digest.size()) + " (" + digest + ")"));
    CHECK_THAT(msg, Catch::Contains("fix: copy the whole run: line"));

    std::string late = digest;
    late[40] = late[40] == '0' ? '1' : '0';
    msg = refusal(late);
    CHECK_THAT(msg, Catch::Contains("bound to run " + late.substr(0, 44) + "…, but the run given (" + run_file.string() + ") is " +
                                    digest.substr(0, 44) + "…"));
}
