// Files no grader may crash on: every input a student or an instructor hands to lab (a run
// record, an answers file, a grading spec), built hostile here in a temporary folder, is refused
// as bad input (InputError, exit 2) naming the file and where in it, never as an internal error.
// Each case is one a tester reproduced as a crash, a stall or an "internal error": a 10^5-deep
// array, a number beyond a double, fields of the wrong type in a record sealed again, complex
// YAML keys, Latin-1 text, huge files, aliases that multiply. The large inputs stay just over
// their limits (or sparse), so the whole file runs in about a second.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "answers.hpp"
#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "input_file.hpp"
#include "run_record.hpp"
#include "units.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

namespace {

// The fixture record, as text, with `insert` added as its last member (not re-sealed: the
// limits are checked before the digest).
std::string record_text_with(const std::string& insert) {
    std::string text = lab_test::read_file(fixture_run_file("02.05-quick-reveal.json"));
    const std::size_t close = text.rfind('}');
    return text.substr(0, close) + ", " + insert + "}";
}

// A valid answers file for the fixture run, then `extra` lines.
std::string answers_head(const Run& run) {
    return "lesson: \"02.05\"\nstudent: \"alice\"\nrun: \"" + run.digest() + "\"\nanswers:\n";
}

// The message of the InputError `f` throws; fails the test on any other exception.
std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const lab::InputError& e) {
        return e.what();
    }
    FAIL("no InputError was thrown");
    return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Run records

TEST_CASE("a run record nested 10^5 deep is refused by its depth, before anything recurses", "[hostile]") {
    Grading g;
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    fs::path p = g.write("deep.json", record_text_with("\"deep\": " + deep));
    std::string msg = refusal([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":"));
    CHECK_THAT(msg, Catch::Contains("nested deeper than 64 levels"));
    CHECK_THAT(msg, !Catch::Contains("kMax"));  // the limit in words and numbers, not a constant's name
    CHECK_THAT(msg, Catch::Contains("(byte "));
}

TEST_CASE("a number beyond a double in a run record is refused with its byte offset", "[hostile]") {
    Grading g;
    for (const std::string& number : std::vector<std::string>{"1e400", "-1e400", "1" + std::string(400, '0')}) {
        CAPTURE(number);
        const std::string text = record_text_with("\"huge\": " + number);
        fs::path p = g.write("huge.json", text);
        std::string msg = refusal([&] { lab::record::read_record(p); });
        CHECK_THAT(msg, Catch::Contains("beyond the range of a double"));
        CHECK_THAT(msg, Catch::Contains("(byte " + std::to_string(text.rfind(number)) + ")"));
    }
    // Underflow reads as 0, as nlohmann reads it: the record is refused for its digest only.
    fs::path tiny = g.write("tiny.json", record_text_with("\"tiny\": 1e-400"));
    CHECK_THAT(refusal([&] { lab::record::read_record(tiny); }), Catch::Contains("digest"));
}

TEST_CASE("malformed JSON names the line and the byte, and quotes nothing unprintable", "[hostile]") {
    Grading g;
    fs::path p = g.write("bad.json", "{\n  \"schema\": \"lab.run/1\",\n  \"x\": \xB5\xFF\n}\n");
    std::string msg = refusal([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":3:"));
    CHECK_THAT(msg, Catch::Contains("not valid JSON (byte 34"));
    for (unsigned char ch : msg.substr(p.string().size())) CHECK((ch == '\n' || (ch >= 0x20 && ch < 0x7f)));
}

TEST_CASE("a run record over 64 MiB is refused by its size without being read", "[hostile]") {
    Grading g;
    fs::path p = g.dir / "huge.json";
    { std::ofstream(p.string()) << "{"; }
    fs::resize_file(p, lab::record::kMaxRecordBytes + 1);  // sparse: nothing is written
    std::string msg = refusal([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":"));
    CHECK_THAT(msg, Catch::Contains("larger than 64 MiB"));
}

TEST_CASE("a sealed run record with a field of the wrong type is bad input naming the field", "[hostile]") {
    Run run = fixture_run();
    auto [name, edit, fragment] = GENERATE(table<std::string, std::function<void(json&)>, std::string>({
        {"device: null", [](json& r) { r["device"] = nullptr; }, "\"device\" is null"},
        {"device.spec a number", [](json& r) { r["device"]["spec"] = 5; }, "\"device.spec\""},
        {"lesson a string", [](json& r) { r["lesson"] = "02.05"; }, "\"lesson\" is a string"},
        {"lesson.id missing", [](json& r) { r["lesson"].erase("id"); }, "lacks \"lesson.id\""},
        {"plugin_version a number", [](json& r) { r["lesson"]["plugin_version"] = 1; }, "\"lesson.plugin_version\""},
        {"metrics null", [](json& r) { r["metrics"] = nullptr; }, "\"metrics\" is null"},
        {"a metric a number", [](json& r) { r["metrics"]["ridge_point"] = 5; }, "metric \"ridge_point\""},
        {"a metric without a value", [](json& r) { r["metrics"]["ridge_point"].erase("value"); }, "metric \"ridge_point\""},
        {"workloads an object", [](json& r) { r["workloads"] = json::object(); }, "\"workloads\" is an object"},
        {"a workload a string", [](json& r) { r["workloads"][0] = "x"; }, "workloads[0]"},
        {"params a string", [](json& r) { r["workloads"][1]["params"] = "x"; }, "workloads[1]"},
        {"a median a string", [](json& r) { r["workloads"][2]["time_s"]["median"] = "x"; }, "workloads[2]"},
        {"flops null", [](json& r) { r["workloads"][0]["flops"] = nullptr; }, "workloads[0]"},
        {"ceilings null", [](json& r) { r["device"]["ceilings"] = nullptr; }, "\"device.ceilings\" is null"},
        {"a ceiling a string", [](json& r) { r["device"]["ceilings"]["clock_hz"] = "x"; }, "device.ceilings"},
        {"facts null", [](json& r) { r["device"]["facts"] = nullptr; }, "\"device.facts\" is null"},
        {"caches a string", [](json& r) { r["device"]["facts"]["caches"] = "x"; }, "device.facts"},
        {"device kind a number", [](json& r) { r["device"]["kind"] = 5; }, "\"device.kind\" is a number"},
        {"device kind unknown", [](json& r) { r["device"]["kind"] = "tpu"; }, "neither cpu nor cuda"},
        {"skipped null", [](json& r) { r["skipped"] = nullptr; }, "\"skipped\" is null"},
        {"a skip without its reason", [](json& r) { r["skipped"] = json::array({{{"workload", "w"}}}); }, "skipped[0]"},
        {"student a number", [](json& r) { r["student"] = 5; }, "\"student\" is a number"},
        {"token a number", [](json& r) { r["token"] = 5; }, "\"token\" is a number"},
        {"revealed a string", [](json& r) { r["revealed"] = "no"; }, "\"revealed\" is a string"},
        {"seed not hexadecimal", [](json& r) { r["seed"] = std::string(20, 'z'); }, "seed is not hexadecimal"},
        {"quick a string", [](json& r) { r["quick"] = "yes"; }, "\"quick\" is a string"},
        {"started_at a number", [](json& r) { r["started_at"] = 5; }, "\"started_at\""},
        {"ceiling_measurements null", [](json& r) { r["device"]["ceiling_measurements"] = nullptr; },
         "\"device.ceiling_measurements\" is null"},
    }));
    CAPTURE(name);
    json r = run.record;
    edit(r);
    lab::record::seal(r);
    Grading g;
    fs::path p = g.write("run.json", r.dump(1));
    std::string msg = refusal([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ": "));
    CHECK_THAT(msg, Catch::Contains(fragment));
    CHECK_THAT(msg, Catch::Contains("fix:"));
}

// ---------------------------------------------------------------------------------------------
// Answers files

TEST_CASE("an answers file that is not UTF-8 is refused with its line and what to do", "[hostile]") {
    Grading g;
    Run run = fixture_run();
    // Latin-1's µ (0xB5), as an editor set to Latin-1 saves "350 µs".
    fs::path p = g.write("answers.yaml", answers_head(run) + "  ridge_point: 11\n  attainable: 350 \xB5s\n");
    std::string msg = refusal([&] { load_answers(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ":6: not UTF-8 text (byte 0xB5)"));
    CHECK_THAT(msg, !Catch::Contains("line 6"));   // the line is said once, in file:line
    CHECK_THAT(msg, Catch::Contains("save the file as UTF-8"));
    // The same answer in UTF-8 is read.
    fs::path ok = g.write("answers-utf8.yaml", answers_head(run) + "  ridge_point: 11\n  attainable: 350 \xC2\xB5s\n");
    CHECK(load_answers(ok).answers.at("attainable").text == "350 \xC2\xB5s");
}

TEST_CASE("UTF-8 is checked strictly: overlong forms, surrogates, truncated sequences", "[hostile]") {
    using lab::first_invalid_utf8;
    CHECK(first_invalid_utf8("plain ascii") == std::string::npos);
    CHECK(first_invalid_utf8("\xC2\xB5s \xE2\x89\x88 \xF0\x9F\x98\x80") == std::string::npos);  // µ ≈ and an emoji
    CHECK(first_invalid_utf8("ab\xB5") == 2);                // a lone continuation byte (Latin-1 µ)
    CHECK(first_invalid_utf8("a\xC0\x80") == 1);             // overlong NUL
    CHECK(first_invalid_utf8("a\xE0\x80\xAF") == 1);         // overlong '/'
    CHECK(first_invalid_utf8("a\xED\xA0\x80") == 1);         // a UTF-16 surrogate
    CHECK(first_invalid_utf8("a\xF4\x90\x80\x80") == 1);     // past U+10FFFF
    CHECK(first_invalid_utf8("ab\xE2\x82") == 2);            // cut off at the end
    CHECK(first_invalid_utf8("\xFF\xFE" "a\0b") == 0);       // a UTF-16 byte-order mark
}

TEST_CASE("a claim beyond a double, or not a number at all, is an unreadable answer, not a crash", "[hostile]") {
    for (const char* claim : {"1e400", "-1e400 s", "1e308 h", "nan", "inf"}) {
        CAPTURE(claim);
        CHECK_THROWS_AS(lab::units::parse_claim(claim, "s"), lab::units::UnitError);
    }
    CHECK_THROWS_WITH(lab::units::parse_claim("1e400", "GB/s"), Catch::Contains("out of the range"));
}

TEST_CASE("input quoted in a message is cut at a character and never carries unprintable bytes", "[hostile]") {
    using lab::excerpt;
    CHECK(excerpt("ridge_point") == "ridge_point");
    CHECK(excerpt("a\nb\x7f") == "a?b?");
    CHECK(excerpt("350 \xB5s") == "350 ?s");                       // not UTF-8
    CHECK(excerpt("\xC2\xB5\xC2\xB5\xC2\xB5", 5) == "\xC2\xB5\xC2\xB5...");  // never half a character
    CHECK(excerpt(std::string(1000, 'x')).size() == 63);
}

TEST_CASE("answers files that would crash or stall the grader are refused with their line", "[hostile]") {
    Grading g;
    Run run = fixture_run();
    const std::string head = answers_head(run);  // 4 lines
    std::string laughs = "lol0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; ++i)
        laughs += "lol" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + std::string("*a") + std::to_string(i - 1) +
                  ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
    auto [name, text, line, fragment] = GENERATE_COPY(table<std::string, std::string, int, std::string>({
        {"a complex key among the answers", head + "  ? [ridge_point, attainable]\n  : 11\n", 5, "a key that is a list or mapping"},
        {"a complex key at the top", "? [a, b]\n: 1\n" + head, 1, "complex key"},
        {"a mapping as a key", head + "  ? {a: 1}\n  : 2\n", 5, "complex key"},
        {"a key with no name", head + "  : 11\n", 5, "a key YAML reads as null"},
        {"a key named null", head + "  null: 11\n", 5, "a key YAML reads as null"},
        {"an answer written twice", head + "  ridge_point: 11\n  ridge_point: 12\n", 6, "(lines 5 and 6)"},
        {"a top-level key written twice", head + "  ridge_point: 11\nlesson: \"02.05\"\n", 6, "'lesson' is written twice"},
        {"an anchor and an alias", head + "  ridge_point: &r 11\n  attainable: *r\n", 5, "takes no anchors or aliases"},
        {"a billion laughs", laughs + head, 1, "takes no anchors or aliases"},
        {"nesting deeper than an answers file has", head + "  ridge_point: " + std::string(20, '[') + std::string(20, ']') + "\n", 5,
         "nested deeper than 8 levels"},
        {"nesting 10^5 deep", head + "  ridge_point: " + std::string(100000, '[') + std::string(100000, ']') + "\n", 5,
         "nested deeper than 8 levels"},
        {"a second document", head + "  ridge_point: 11\n---\nlesson: \"02.05\"\n", 0, "more than one YAML document"},
    }));
    CAPTURE(name);
    fs::path p = g.write("answers.yaml", text);
    std::string msg = refusal([&] { load_answers(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + (line > 0 ? ":" + std::to_string(line) + ": " : ": ")));
    CHECK_THAT(msg, Catch::Contains(fragment));
}

TEST_CASE("an answers file over 1 MiB is refused by its size, unread", "[hostile]") {
    Grading g;
    Run run = fixture_run();
    std::string text = answers_head(run) + "  ridge_point: 11\n# ";
    text += std::string(kMaxAnswersBytes + 1 - text.size(), 'x');
    REQUIRE(text.size() == kMaxAnswersBytes + 1);
    fs::path p = g.write("answers.yaml", text);
    std::string msg = refusal([&] { load_answers(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + ": "));
    CHECK_THAT(msg, Catch::Contains("larger than 1 MiB"));
    // A batch still takes it for an answers file, so the student is told why it was refused.
    CHECK(looks_like_answers(text));
    // Just at the limit it is read.
    text.resize(kMaxAnswersBytes);
    CHECK_NOTHROW(load_answers(g.write("answers-at-limit.yaml", text)));
}

TEST_CASE("looks_like_answers never throws and never expands aliases", "[hostile]") {
    CHECK(looks_like_answers("lesson: \"02.05\"\nanswers:\n  a: 1\n"));
    CHECK_FALSE(looks_like_answers("{\"schema\": \"lab.run/1\"}"));
    CHECK(looks_like_answers("lesson: x\nanswers: {a: [\n"));          // malformed, plainly meant
    CHECK(looks_like_answers("lesson: \xB5\nanswers:\n  a: 1\n"));      // not UTF-8, plainly meant
    CHECK_FALSE(looks_like_answers("? [a, b]\n: 1\nanswers: 2\n"));
    CHECK_FALSE(looks_like_answers(std::string(100000, '[')));
}

// ---------------------------------------------------------------------------------------------
// Grading specs: hostile files, and the instructor mistakes that would mark honest answers wrong

TEST_CASE("grading specs that would crash the grader or mark honest answers wrong are refused with their line",
          "[hostile]") {
    // Line numbers: 1 lesson, 2 accept_quick, 3 show_expected, 4 questions, 5 "- id:", 6 prompt,
    // 7 type, 8 unit, 9 expected, 10 tolerance (kRidge).
    const std::string ridge =
        "  - id: ridge_point\n    prompt: \"Ridge?\"\n    type: number\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n";
    const std::string fraction =
        "  - id: fraction\n    prompt: \"Fraction?\"\n    type: number\n    unit: \"%\"\n    expected: {metric: triad.roof_fraction}\n";
    auto spec = [](const std::string& questions, const std::string& extra = "") { return spec_yaml(questions, "02.05", "always", extra); };
    auto [name, yaml, line, fragment] = GENERATE_COPY(table<std::string, std::string, int, std::string>({
        // Hostile files.
        {"a complex key", spec(ridge + "    ? [rel, abs]\n    : 0.05\n"), 10, "complex key"},
        {"a question key written twice", spec(ridge + "    tolerance: {rel: 0.05}\n    tolerance: {rel: 0.5}\n"), 11,
         "'tolerance' is written twice in the same mapping (lines 10 and 11)"},
        {"a top-level key written twice", spec(ridge + "    tolerance: {rel: 0.05}\n", "accept_quick: false\n"), 4,
         "(lines 2 and 4)"},
        {"a tolerance key written twice", spec(ridge + "    tolerance: {rel: 0.05, rel: 0.5}\n"), 10, "'rel' is written twice"},
        {"rel beyond a double", spec(ridge + "    tolerance: {rel: 1e400}\n"), 10, "beyond the range of a number"},
        {"rel not a number", spec(ridge + "    tolerance: {rel: .nan}\n"), 10, "must be a finite number"},
        {"points infinite", spec(ridge + "    tolerance: {rel: 0.05}\n    points: .inf\n"), 11, "must be a finite number"},
        {"a sweep point infinite", spec(ridge + "    tolerance: {steps: 1, sweep: [1, .inf]}\n"), 10, "must be a finite number"},
        {"a question nested 10^5 deep", spec(ridge + "    hint: " + std::string(100000, '[') + std::string(100000, ']') + "\n"), 10,
         "nested deeper than 32 levels"},
        {"more aliases than a spec needs", spec(ridge + "    tolerance: &t {rel: 0.05}\n" + [] {
             std::string s;
             for (int i = 0; i < 70; ++i) s += "  - {id: q" + std::to_string(i) + ", prompt: p, expected: {value: 1}, tolerance: *t}\n";
             return s;
         }()), 74, "more than 64 anchors and aliases"},
        {"a Latin-1 byte", spec(ridge + "    hint: \"350 \xB5s\"\n"), 10, "not UTF-8 text"},
        // Instructor mistakes.
        {"rel meant as a percentage", spec(ridge + "    tolerance: {rel: 5}\n"), 10, "rel: 5 is 500%"},
        {"rel of 100%", spec(ridge + "    tolerance: {rel: 1}\n"), 10, "did you mean 0.01?"},
        {"abs beyond every fraction", spec(fraction + "    tolerance: {abs: 300}\n"), 10, "300 percentage points"},
        {"a scalar sweep", spec(ridge + "    tolerance: {steps: 1, sweep: 4}\n"), 10, "a list of at least two numbers"},
        {"a sweep of one point", spec(ridge + "    tolerance: {steps: 1, sweep: [4]}\n"), 10, "a list of at least two numbers"},
        {"a sweep of one point twice", spec(ridge + "    tolerance: {steps: 1, sweep: [4, 4]}\n"), 10, "two different points"},
        {"a sweep without steps", spec(ridge + "    tolerance: {rel: 0.1, sweep: [1, 2]}\n"), 10, "without 'steps' is never used"},
        {"sweep and sweep_param both", spec(ridge + "    tolerance: {steps: 1, sweep: [1, 2], sweep_param: n}\n"), 10,
         "both 'sweep' and 'sweep_param'"},
        {"fractional steps", spec(ridge + "    tolerance: {steps: 1.7, sweep: [1, 2, 4]}\n"), 10,
         "steps: 1.7 is not a whole number"},
        {"a due month 13", spec(ridge + "    tolerance: {rel: 0.05}\n", "due: 2026-13-45\n"), 4, "due: 2026-13-45 is not a date"},
        {"a due day the month lacks", spec(ridge + "    tolerance: {rel: 0.05}\n", "due: 2026-02-29\n"), 4, "not a date"},
        {"a due date that is no date", spec(ridge + "    tolerance: {rel: 0.05}\n", "due: next friday\n"), 4, "not a date"},
        {"no tolerance on a measured value", spec(ridge), 5, "compares metric 'ridge_point' exactly, a number"},
        {"rel: 0 on a measured value", spec(ridge + "    tolerance: {rel: 0}\n"), 10, "add a tolerance such as rel: 0.05"},
        {"rel: 0 and abs: 0", spec(ridge + "    tolerance: {rel: 0, abs: 0}\n"), 10, "exactly"},
        {"factor 1", spec(ridge + "    tolerance: {factor: 1}\n"), 10, "exactly"},
    }));
    CAPTURE(name);
    Grading g;
    fs::path p = g.write("spec.yaml", yaml);
    std::string msg = refusal([&] {
        GradingSpec s = load_spec(p, false, "after_due_date");
        check_spec_against(s, lesson("02.05").info);
    });
    CHECK_THAT(msg, Catch::StartsWith(p.string() + (line > 0 ? ":" + std::to_string(line) + ": " : ": ")));
    CHECK_THAT(msg, Catch::Contains(fragment));
}

TEST_CASE("what the spec checks refuse stays allowed where it is exact or meant", "[hostile]") {
    Grading g;
    const std::string ridge =
        "  - id: ridge_point\n    prompt: \"Ridge?\"\n    type: number\n    unit: FLOP/B\n    expected: {metric: ridge_point}\n";
    for (const std::string& ok : {
             // A constant compared exactly; a real leap day; anchors for a shared tolerance.
             spec_yaml("  - {id: c, prompt: p, type: integer, expected: {value: 41}}\n", "02.05", "always", "due: 2028-02-29\n"),
             spec_yaml(ridge + "    tolerance: &t {rel: 0.05}\n  - {id: a, prompt: p, unit: GFLOP/s, "
                               "expected: {metric: attainable_flops_per_s}, tolerance: *t}\n"),
             // steps: 0 on a sweep (the points are exact), rel just under 1, abs 100 in a % question.
             spec_yaml(ridge + "    tolerance: {steps: 0, sweep: [1, 2, 4]}\n"),
             spec_yaml(ridge + "    tolerance: {rel: 0.99}\n"),
             spec_yaml("  - {id: f, prompt: p, unit: \"%\", expected: {metric: triad.roof_fraction}, tolerance: {abs: 100}}\n"),
         }) {
        CAPTURE(ok);
        CHECK_NOTHROW(g.spec(ok));
    }
}

TEST_CASE("every shipped grading spec loads and fits its lesson under the spec checks", "[hostile]") {
    for (const auto& entry : fs::directory_iterator(lab_test::source_root() / "configs/grading")) {
        if (entry.path().extension() != ".yaml") continue;
        CAPTURE(entry.path());
        GradingSpec s = load_spec(entry.path(), false, "after_due_date");
        CHECK_NOTHROW(check_spec_against(s, lesson(s.lesson).info));
    }
}

// ---------------------------------------------------------------------------------------------
// End to end: `lab` exits 2 with the file named, never "internal error" (exit 3)

TEST_CASE("lab submit and lab check-spec refuse hostile files as bad input, exit 2", "[hostile]") {
    // The case is generated first: each one runs the test afresh, with its own temporary folder.
    const std::string name = GENERATE(as<std::string>{}, "a 10^5-deep record", "1e400 in a record",
                                      "a record whose device spec is a string", "Latin-1 answers", "a complex key in answers",
                                      "a complex key in a spec");
    CAPTURE(name);
    Grading g;
    Run run = fixture_run();
    const std::string good_run = fixture_run_file("02.05-quick-reveal.json").string();
    const std::string good_answers = g.write("answers.yaml", answers_head(run) + "  ridge_point: 11\n").string();
    json string_spec = run.record;
    string_spec["device"]["spec"] = "none";
    lab::record::seal(string_spec);

    std::vector<std::string> args;
    fs::path file;
    if (name == "a 10^5-deep record") {
        file = g.write("deep.json", record_text_with("\"deep\": " + std::string(100000, '[') + std::string(100000, ']')));
        args = {"submit", "02.05", good_answers, "--run", file.string()};
    } else if (name == "1e400 in a record") {
        file = g.write("huge.json", record_text_with("\"huge\": 1e400"));
        args = {"submit", "02.05", good_answers, "--run", file.string()};
    } else if (name == "a record whose device spec is a string") {
        file = g.write("string-spec.json", string_spec.dump());
        args = {"submit", "02.05", good_answers, "--run", file.string()};
    } else if (name == "Latin-1 answers") {
        file = g.write("latin1.yaml", answers_head(run) + "  attainable: 350 \xB5s\n");
        args = {"submit", "02.05", file.string(), "--run", good_run};
    } else if (name == "a complex key in answers") {
        file = g.write("complex.yaml", answers_head(run) + "  ? [a, b]\n  : 1\n");
        args = {"submit", "02.05", file.string(), "--run", good_run};
    } else {
        file = g.write("spec.yaml", "lesson: \"02.05\"\n? [a, b]\n: 1\nquestions: []\n");
        args = {"check-spec", file.string()};
    }
    auto r = lab_test::run_lab(args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file.string() + ":"));
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
    CHECK_THAT(r.err, !Catch::Contains("cannot read"));
}
