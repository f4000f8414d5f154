// What students see: hidden questions masked in the console and JSON reports (totals included),
// show_expected policies, the answers template bound to a run, and a console table that stays
// aligned whatever the answers.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "grading_fixtures.hpp"
#include "lab/utc_time.hpp"
#include "prompt_fill.hpp"
#include "run_record.hpp"
#include "reports.hpp"
#include "units.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

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

TEST_CASE("show_expected after_due_date: hidden on the due day itself, shown the day after", "[grading]") {
    Grading g;
    // Today's UTC date as the grader reads it, taken on either side of the checks so that a run
    // across midnight tries again rather than failing.
    for (int attempt = 0; attempt < 3; ++attempt) {
        const std::time_t now = std::time(nullptr);
        const std::string today = lab::format::utc_date(now), yesterday = lab::format::utc_date(now - 24 * 3600);
        CAPTURE(today, yesterday);
        const bool due_today_shown = expected_visible(g.spec(spec_yaml(kRidge, "02.05", "after_due_date", "due: \"" + today + "\"\n")));
        const bool due_yesterday_shown =
            expected_visible(g.spec(spec_yaml(kRidge, "02.05", "after_due_date", "due: \"" + yesterday + "\"\n")));
        if (lab::format::utc_date(std::time(nullptr)) != today) continue;  // midnight passed meanwhile
        CHECK_FALSE(due_today_shown);
        CHECK(due_yesterday_shown);
        return;
    }
    FAIL("the date changed during every attempt");
}

// ---------------------------------------------------------------------------------------------
// The answers template

TEST_CASE("a prompt's question_<name> words become the run's own variant, never a graded value", "[grading]") {
    const std::map<std::string, std::string> run = {{"question_seq", "2048"}, {"question_dtype", "nvfp4"}};
    auto value_of = [&](const std::string& n) -> std::optional<std::string> {
        auto it = run.find(n);
        return it == run.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    CHECK(fill_prompt("prefill of question_seq tokens, weights in question_dtype?", value_of) == "prefill of 2048 tokens, weights in nvfp4?");
    CHECK(fill_prompt("(question_seq)", value_of) == "(2048)");
    CHECK(fill_prompt("in question_dtype", [](const std::string&) { return std::optional<std::string>("x\nanswers: {}"); }) ==
          "in question_dtype");  // never a second line in the template's comment
    CHECK(fill_prompt("question_flops stays, myquestion_seq and question_seqs too", value_of) ==
          "question_flops stays, myquestion_seq and question_seqs too");

    // 02.02's spec on its recorded run: the template and the graded report both name the
    // student's sequence length and dtype; its graded FLOPs stay unnamed.
    Run r = fixture_run("02.02-quick-reveal.json");
    GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.02.yaml", true, "never");
    const std::string t = answers_template(spec, r.record);
    const std::string seq = lab::record::format_value(*r.derived.find("question_seq"));
    CHECK_THAT(t, Catch::Contains("prefill of " + seq + " tokens") && !Catch::Contains("question_seq"));
    Grading g;
    GradeReport rep = g.grade(spec, r, {});
    bool filled = false;
    for (const auto& q : rep.results) {
        CHECK_THAT(q.question.prompt, !Catch::Contains("question_seq") && !Catch::Contains("question_dtype"));
        filled |= q.question.prompt.find(seq + " tokens") != std::string::npos;
    }
    CHECK(filled);
}

TEST_CASE("the answers template names a count's noun, so '567 cycles' is known to be accepted", "[grading]") {
    Run r = fixture_run("02.03-quick-reveal.json");
    GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.03.yaml", true, "never");
    const std::string t = answers_template(spec, r.record);
    CHECK_THAT(t, Catch::Contains("at the clock lab measured (printed under ceilings)? [cycles]\n  l1_cycles:"));
    CHECK_THAT(t, Catch::Contains("[ns]\n  l1_latency:"));
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
        // The prompt, with the run's own AI in place of question_ai (prompt_fill.hpp).
        const std::string ai = lab::record::format_value(*run.derived.find("question_ai"));
        CHECK_THAT(t, Catch::Contains(std::regex_replace(q.prompt, std::regex("\\bquestion_ai\\b"), ai)));
    }
    CHECK_THAT(t, !Catch::Contains("question_ai"));
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
// The console table

namespace {

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
    const std::size_t verdict_col = lab_test::display_columns(h.substr(0, h.find("verdict")));
    const std::size_t points_end = lab_test::display_columns(h.substr(0, h.find("points") + 6));
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
