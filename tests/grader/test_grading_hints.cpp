// What a careless student or instructor is told (issue 16's rough edges): a misspelt question id
// or key gets "did you mean", a number off by a power of ten gets "check the unit" (graded as
// written), a template offers only the regimes a question can have, and check-spec warns of a
// question whose answer `lab run` prints to everyone.
#include <catch2/catch.hpp>

#include <algorithm>

#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "reports.hpp"
#include "suggest.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

TEST_CASE("did you mean: slips are near, other words are not", "[grading]") {
    CHECK(lab::edit_distance("ridge_piont", "ridge_point") == 1);
    CHECK(lab::did_you_mean("ridge_piont", {"attainable", "ridge_point"}) == "ridge_point");
    CHECK(lab::did_you_mean("studnet", {"student", "token"}) == "student");
    CHECK(lab::did_you_mean("sgem_side", {"sgemm_side", "triad_side"}) == "sgemm_side");
    CHECK(lab::did_you_mean("colour", {"student", "token"}).empty());
    CHECK(lab::did_you_mean("ab", {"xy"}).empty());
}

TEST_CASE("an answer to no question is named, with the question it was probably meant for", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradeReport r = g.grade(g.spec(spec_yaml(kRidge + kTriadSide)), run, {{"ridge_piont", num(run.number("ridge_point"))}, {"triad_side", "memory_bound"}});
    REQUIRE(r.notes.size() == 1);
    CHECK_THAT(r.notes[0], Catch::Contains("'ridge_piont' is not a question") && Catch::Contains("did you mean 'ridge_point'?"));
    CHECK(result(r, "ridge_point").verdict == Verdict::missing);
    CHECK_THAT(result(r, "ridge_point").feedback, Catch::Contains("you answered 'ridge_piont'"));
    CHECK_THAT(console_report(r), Catch::Contains("note: line") && Catch::Contains("you answered 'ridge_piont'"));
    CHECK(json_report(r)["notes"].size() == 1);
}

TEST_CASE("a number off by a power of ten says to check the unit, and is graded as written", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kAttainable + kTriadFraction));
    const double pct = 100 * run.number("triad.roof_fraction");
    SECTION("a fraction where percent is asked") {
        GradeReport r = g.grade(spec, run, {{"triad_roof_fraction", num(pct / 100)}});
        const auto& q = result(r, "triad_roof_fraction");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("was read as " + num(pct / 100) + "%: did you mean"));
    }
    SECTION("FLOP/s written where GFLOP/s is asked") {
        GradeReport r = g.grade(spec, run, {{"attainable", num(run.number("attainable_flops_per_s"))}});
        const auto& q = result(r, "attainable");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("off by exactly 10^9") && Catch::Contains("read in GFLOP/s"));
        CHECK_THAT(console_report(r), Catch::Contains("off by exactly 10^9"));
    }
    SECTION("a plain wrong answer gets no unit hint") {
        GradeReport r = g.grade(spec, run, {{"attainable", num(run.number("attainable_flops_per_s") / 1e9 * 3.7)}});
        CHECK(result(r, "attainable").feedback.find("off by") == std::string::npos);
    }
}

// A power of ten is a unit slip only where it shows the right digits in the wrong unit. 0.625% asked
// with abs: 1 (a percentage point): divided by 100, 2%, 6% and 60% all land within a point of it,
// so landing there says nothing; 62.5% is 0.625% written a hundred times too large.
TEST_CASE("a unit hint is given for the right digits in the wrong unit, not for any answer a wide tolerance holds", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const GradingSpec spec = g.spec(spec_yaml(R"(  - id: miss_share
    prompt: "What share of the accesses miss?"
    unit: "%"
    expected: {value: "0.625"}
    tolerance: {abs: 1}
  - id: weights
    prompt: "How large are the weights?"
    unit: GB
    expected: {value: "13.5"}
    tolerance: {rel: 0.05}
  - id: weights_rough
    prompt: "Roughly how large are the weights?"
    unit: GB
    expected: {value: "13.5"}
    tolerance: {factor: 2}
  - id: busy
    prompt: "How busy is the GPU?"
    unit: "%"
    expected: {value: "80"}
    tolerance: {abs: 5}
)"));
    auto feedback = [&](const std::string& id, const std::string& claim) {
        const GradeReport r = g.grade(spec, run, {{id, claim}});
        CHECK(result(r, id).verdict == Verdict::wrong);
        return result(r, id).feedback;
    };
    SECTION("wrong answers that a wide band holds once scaled get no hint") {
        for (const std::string claim : {"2%", "6%", "60%", "160%", "2"}) {
            CAPTURE(claim);
            const std::string f = feedback("miss_share", claim);
            CHECK_THAT(f, !Catch::Contains("off by") && !Catch::Contains("did you mean"));
        }
        // x/÷ 2 spans most of a decade: 20 GB is in it, and 20e9 (in GB) is no slip of 13.5 GB.
        CHECK_THAT(feedback("weights_rough", "20e9"), !Catch::Contains("off by"));
    }
    SECTION("the expected value's digits in the wrong unit get the hint, whatever the band") {
        CHECK_THAT(feedback("miss_share", "62.5%"), Catch::Contains("off by exactly 10^2: check the unit"));
        CHECK_THAT(feedback("miss_share", "62%"), Catch::Contains("off by exactly 10^2"));
        CHECK_THAT(feedback("weights_rough", "13.6e9"), Catch::Contains("off by exactly 10^9"));
    }
    SECTION("in a narrow band, landing there is the slip: 13.5 GB written in bytes, 80% as a fraction") {
        CHECK_THAT(feedback("weights", "13.5e9"), Catch::Contains("off by exactly 10^9: check the unit (a bare number is read in GB)"));
        CHECK_THAT(feedback("weights", "14e9"), Catch::Contains("off by exactly 10^9"));   // within the question's 5%
        CHECK_THAT(feedback("weights", "13.5 MB"), Catch::Contains("off by exactly 10^-3") && !Catch::Contains("bare number"));
        CHECK_THAT(feedback("busy", "0.8"), Catch::Contains("0.8 was read as 0.8%: did you mean 80%?"));
    }
}

// "1,125" is 1125 (a comma groups thousands, docs/student.md); a student who writes a decimal
// comma meant 1.125. Graded as written, told which reading was taken.
TEST_CASE("a decimal comma read as a thousands separator is said, not called a unit slip", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const GradingSpec spec = g.spec(spec_yaml(R"(  - id: speedup
    prompt: "How much faster is the int8 GEMV than the fp16 one?"
    unit: "x"
    expected: {value: "1.125"}
    tolerance: {rel: 0.05}
)"));
    const GradeReport r = g.grade(spec, run, {{"speedup", "1,125"}});
    CHECK(result(r, "speedup").verdict == Verdict::wrong);
    CHECK_THAT(result(r, "speedup").feedback, Catch::Contains("1,125 was read as 1125 (a comma groups thousands): if you meant 1.125, write "
                                                              "a decimal point") &&
                                                  !Catch::Contains("check the unit"));
    // A thousands separator in a number that is right as written is graded right, no hint.
    const GradeReport big = g.grade(g.spec(spec_yaml(R"(  - id: tokens
    prompt: "From what context on does the KV cache exceed the weights?"
    type: integer
    noun: token
    expected: {value: "25706"}
    tolerance: {rel: 0.01}
)")), run, {{"tokens", "25,706"}});
    CHECK(result(big, "tokens").verdict == Verdict::correct);
}

TEST_CASE("a template offers a side of the ridge as two choices, a measured regime as four", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const std::string t = answers_template(g.spec(spec_yaml(kTriadSide)), run.record);
    CHECK_THAT(t, Catch::Contains("(memory_bound or compute_bound)"));
    CHECK_THAT(t, !Catch::Contains("overhead_bound"));
}

TEST_CASE("a misspelt key in a spec is refused with the key it was probably meant to be", "[grading]") {
    Grading g;
    const std::string bad = spec_yaml(R"(  - id: ridge_point
    prompt: "What is the ridge?"
    expected: {metric: ridge_point}
    tolerence: {rel: 0.05}
)");
    CHECK_THAT(input_error([&] { g.spec(bad); }), Catch::Contains("unknown key 'tolerence'") && Catch::Contains("did you mean 'tolerance'?"));
}

TEST_CASE("check-spec warns of a question on a metric the lesson does not withhold", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    lab::LessonInfo info = lesson("02.05").info;
    CHECK(spec_warnings(spec, info).empty());
    for (auto& m : info.metrics)
        if (m.name == "ridge_point") m.graded = false;
    const auto w = spec_warnings(spec, info);
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains("ridge_point") && Catch::Contains("shows its value to every student") &&
                         Catch::Contains("MetricDecl::graded"));
    CHECK_THAT(w[0], Catch::Contains(".yaml:9: question 'ridge_point' grades metric"));  // at its `expected:` line

    // A placed workload's metric is marked graded on its placement: the fix names that list.
    GradingSpec placed = g.spec(spec_yaml(R"(  - id: few_ai
    prompt: "What is fma_few's AI?"
    expected: {metric: fma_few.ai}
    tolerance: {rel: 0.05}
)"));
    const auto wp = spec_warnings(placed, lesson("02.05").info);
    REQUIRE(wp.size() == 1);
    CHECK_THAT(wp[0], Catch::Contains("add \"ai\" to the placement's graded list (PlacedWorkload::graded of 'fma_few')"));

    // A lesson metric named after a placed workload but not one of its standard metrics is the
    // lesson's own: the fix is its MetricDecl, not the placement's list (which would refuse it).
    lab::LessonInfo own = lesson("02.05").info;
    own.metrics.push_back({.name = "fma_few.useful_bytes_per_s", .unit = "B/s", .description = "bytes the kernel needed"});
    GradingSpec on_own = g.spec(spec_yaml(R"(  - id: useful
    prompt: "How many useful bytes per second?"
    expected: {metric: fma_few.useful_bytes_per_s}
    tolerance: {rel: 0.05}
)"), false);
    const auto wo_own = spec_warnings(on_own, own);
    REQUIRE(wo_own.size() == 1);
    CHECK_THAT(wo_own[0], Catch::Contains("MetricDecl::graded") && !Catch::Contains("placement's graded list"));

    // Options on a question that is neither a choice nor a regime are read by nothing: said, not
    // silently kept. (A regime question's options are the regimes it offers.)
    GradingSpec options = g.spec(spec_yaml(R"(  - id: ridge
    prompt: "Ridge?"
    unit: FLOP/B
    options: [low, high]
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
)"));
    const auto wo = spec_warnings(options, lesson("02.05").info);
    REQUIRE(wo.size() == 1);
    CHECK_THAT(wo[0], Catch::Contains("lists options, which only choice and regime questions read"));
    CHECK_THAT(wo[0], Catch::Contains(".yaml:8: question 'ridge' lists options"));  // at its `options:` line
    GradingSpec regime_options = g.spec(spec_yaml(R"(  - id: few_regime
    prompt: "Which side of the ridge is fma_few?"
    type: regime
    options: [memory_bound, compute_bound]
    expected: {metric: fma_few.predicted_regime}
)"));
    CHECK(spec_warnings(regime_options, lesson("02.05").info).empty());
}

TEST_CASE("an unclosed [ or { is reported on the line that opened it", "[grading]") {
    Grading g;
    const fs::path f = g.write("unclosed.yaml",
                               "lesson: \"02.05\"\nstudent: alice\nrun: \"x\"\nanswers:\n  a: 1\n  b: [1, 2  # a comment with ] in it\n"
                               "  c: \"text with [ in it\"\n  d: 4\n");
    const std::string e = input_error([&] { load_answers(f); });
    CHECK_THAT(e, Catch::Contains("unclosed.yaml:6: malformed YAML: the '[' opened on line 6 is never closed"));
    CHECK_THAT(e, Catch::Contains("close it with ']' on line 6"));
    // Nested and never closed: the parser handed the inner '[' over as a complex key first, and
    // the message spoke of keys (a fuzzing review).
    const std::string nested = input_error([&] {
        load_answers(g.write("nested.yaml", "lesson: \"02.05\"\nstudent: alice\nrun: \"x\"\nanswers:\n  a: [[[[\n"));
    });
    CHECK_THAT(nested, Catch::Contains("nested.yaml:5: malformed YAML: the '[' opened on line 5 is never closed"));
}

TEST_CASE("a quote never closed is refused on its line, not read to the end of the file", "[grading]") {
    // yaml-cpp folds every later line into such a value: the answers after it would be missing.
    Grading g;
    const std::string head = "lesson: \"02.05\"\nstudent: alice\nrun: \"x\"\nanswers:\n  a: 1\n";
    for (const std::string& open : {std::string("  b: \"4.5\n"), std::string("  b: '4.5\n")}) {
        CAPTURE(open);
        const fs::path f = g.write("open-quote.yaml", head + open + "  c: 3\n  d: 4\n");
        const std::string e = input_error([&] { load_answers(f); });
        CHECK_THAT(e, Catch::Contains("open-quote.yaml:6:") && Catch::Contains("quote opened on line 6 is never closed"));
        CHECK_THAT(e, Catch::Contains("close the quote on line 6"));
    }
    // Closed quotes, escaped quotes inside them and a quoted value on two lines are all fine.
    const fs::path ok = g.write("quotes.yaml", head + "  b: \"say \\\"4.5\\\"\"\n  c: 'it''s'\n  d: \"two\n    lines\"\n");
    CHECK(input_error([&] { load_answers(ok); }).empty());
}

TEST_CASE("malformed YAML says what to do: a tab in the indentation by its line, else where to look", "[grading]") {
    Grading g;
    const std::string head = "lesson: \"02.05\"\naccept_quick: true\nquestions:\n  - id: ridge\n    prompt: \"p\"\n";
    // A key indented one space too far: yaml-cpp says "end of sequence not found" or the like.
    const fs::path shifted = g.write("shifted.yaml", head + "    type: number\n     points: 2\n");
    const std::string e1 = input_error([&] { load_spec(shifted, true, "never"); });
    CHECK_THAT(e1, Catch::Contains("shifted.yaml:") && Catch::Contains("malformed YAML") &&
                       Catch::Contains("fix: check the indentation on line"));
    const fs::path tabbed = g.write("tabbed.yaml", head + "\tpoints: 2\n");
    const std::string e2 = input_error([&] { load_spec(tabbed, true, "never"); });
    CHECK_THAT(e2, Catch::Contains("tabbed.yaml:") && Catch::Contains("fix: line 6 is indented with a tab"));
}

// An answers file has a fix of its own (compare with the template): the likely cause comes first
// all the same, since "end of map not found" alone does not say that a tab, which an editor shows
// as spaces, is the fault.
TEST_CASE("a malformed answers file names a tab or the indentation, then the template", "[grading]") {
    Grading g;
    const std::string head = "lesson: \"02.05\"\nstudent: alice\nrun: \"x\"\nanswers:\n  ridge_point: 1\n";
    const std::string tmpl = "compare with the template `lab answers ID --run RUN.json` prints";
    const fs::path tabbed = g.write("tabbed.yaml", head + "\tattainable: 2\n  triad_side: memory_bound\n");
    const std::string e1 = input_error([&] { load_answers(tabbed); });
    CHECK_THAT(e1, Catch::Contains("tabbed.yaml:") && Catch::Contains("malformed YAML"));
    CHECK_THAT(e1, Catch::Contains("fix: line 6 is indented with a tab: YAML indents with spaces only") && Catch::Contains(tmpl));
    // A tab elsewhere on the lines around the one the parser stopped at is named after the indentation.
    const fs::path after = g.write("after.yaml", head + "  attainable:\t2\n   triad_side: memory_bound\n");
    const std::string e2 = input_error([&] { load_answers(after); });
    CHECK_THAT(e2, Catch::Contains("after.yaml:7: malformed YAML"));
    CHECK_THAT(e2, Catch::Contains("fix: check the indentation on line 7") && Catch::Contains("; line 6 holds a tab") && Catch::Contains(tmpl));
    const fs::path shifted = g.write("shifted.yaml", head + "   attainable: 2\n  triad_side: memory_bound\n");
    const std::string e3 = input_error([&] { load_answers(shifted); });
    CHECK_THAT(e3, Catch::Contains("shifted.yaml:") && Catch::Contains("malformed YAML"));
    CHECK_THAT(e3, Catch::Contains("fix: check the indentation on line") && Catch::Contains(tmpl));
}

TEST_CASE("an empty answers file, or one of comments only, says so and how to make it", "[grading]") {
    Grading g;
    for (const std::string& text : {std::string(), std::string("\n  \n"), std::string("# my answers\n")}) {
        CAPTURE(text);
        const fs::path f = g.write("answers.yaml", text);
        const std::string e = input_error([&] { load_answers(f); });
        CHECK_THAT(e, Catch::StartsWith(f.string() + ": the answers file is empty"));
        CHECK_THAT(e, Catch::Contains("\n  fix: write your run's template into it (lab answers ID --run RUN.json > " + f.string() + ")"));
    }
    // Any YAML input: a grading spec too.
    const fs::path spec = g.write("empty-spec.yaml", "# nothing yet\n");
    const std::string e = input_error([&] { load_spec(spec, true, "never"); });
    CHECK_THAT(e, Catch::StartsWith(spec.string() + ": the grading spec is empty") && Catch::Contains("\n  fix: write its keys"));
}

// 02.07's KV cache question as shipped (unit GiB, a hint about KV heads): an answer that is the
// right size in the wrong byte unit is graded as written, and told the slip instead of the hint.
TEST_CASE("a byte answer right in another byte unit says which, instead of the question's hint", "[grading]") {
    Grading g;
    Run run = fixture_run("02.07-quick-reveal.json");
    const GradingSpec spec = g.spec(lab_test::read_file(lab_test::source_root() / "configs/grading/02.07.yaml"));
    const double kv = run.number("question_kv_bytes");
    REQUIRE(kv == 2.0 * (1u << 30));  // 2 GiB: 2.147 GB
    auto graded = [&](const std::string& claim) {
        GradeReport r = g.grade(spec, run, {{"kv_cache_bytes", claim}});
        return std::pair{result(r, "kv_cache_bytes"), console_report(r)};
    };
    SECTION("the GiB figure written with GB") {
        const auto [q, console] = graded("2 GB");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("2 GB is 2 x 10^9 bytes: 2 GiB (2^30 bytes each) would be right"));
        CHECK(q.advises);
        CHECK_THAT(console, Catch::Contains("2 GiB (2^30 bytes each) would be right") && !Catch::Contains("KV heads"));
    }
    SECTION("the GB figure written with GiB") {
        const auto [q, console] = graded("2.147 GiB");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("2.147 GiB is 2.147 x 2^30 bytes: 2.147 GB (10^9 bytes each) would be right"));
    }
    SECTION("a bare GB figure, read in the question's GiB") {
        const auto [q, console] = graded("2.147");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("2.147 was read as 2.147 GiB (a bare number is read in the question's unit, GiB): "
                                               "did you mean 2.147 GB?"));
        CHECK_THAT(console, !Catch::Contains("KV heads"));
    }
    SECTION("a bare count of bytes, read in GiB") {
        const auto [q, console] = graded("2147483648");
        CHECK(q.verdict == Verdict::wrong);
        CHECK_THAT(q.feedback, Catch::Contains("did you mean 2147483648 B (bytes)?"));
    }
    SECTION("right as written: no note; wrong in every unit: the question's hint") {
        CHECK(graded("2 GiB").first.verdict == Verdict::correct);
        CHECK(graded("2147483648 B").first.verdict == Verdict::correct);
        const auto [q, console] = graded("8 GiB");  // 32 KV heads instead of 8
        CHECK(q.verdict == Verdict::wrong);
        CHECK_FALSE(q.advises);
        CHECK_THAT(console, Catch::Contains("KV heads"));
    }
}

TEST_CASE("FLOPs written for a rate is read as the rate asked, and the note says so", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const GradeReport r = g.grade(g.spec(spec_yaml(kAttainable)), run,
                                  {{"attainable", num(run.number("attainable_flops_per_s") / 1e9) + " GFLOPs"}});
    const auto& q = result(r, "attainable");
    CHECK(q.verdict == Verdict::correct);
    CHECK_THAT(q.feedback, Catch::StartsWith("accepted") && Catch::Contains("GFLOPs' was read as") && Catch::Contains("write GFLOP/s"));
    CHECK_THAT(console_report(r), Catch::Contains("write GFLOP/s"));
}

TEST_CASE("a count of cycles may name them, as a count of tokens does", "[grading]") {
    Grading g;
    Run run = fixture_run("02.03-quick-reveal.json");
    std::string yaml = lab_test::read_file(lab_test::source_root() / "configs/grading/02.03.yaml");
    yaml.replace(yaml.find("accept_quick: false"), 19, "accept_quick: true");
    const GradingSpec spec = g.spec(yaml);
    const double l1 = run.number("l1.latency_cycles"), dram = run.number("dram.latency_cycles");
    const GradeReport r = g.grade(spec, run, {{"l1_cycles", num(l1) + " cycles"}, {"dram_cycles", num(dram) + " Cycles"}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::correct);
    CHECK(result(r, "dram_cycles").verdict == Verdict::correct);
    // Another word is still no count of cycles.
    CHECK(result(g.grade(spec, run, {{"l1_cycles", num(l1) + " ns"}}), "l1_cycles").verdict == Verdict::invalid);
}

// `max_batch:22`: YAML reads one key, 'max_batch:22', with no value.
TEST_CASE("an answer without the space after its colon is read as that answer, with a note", "[grading]") {
    Grading g;
    Run run = fixture_run("02.07-quick-reveal.json");
    const GradingSpec spec = g.spec(lab_test::read_file(lab_test::source_root() / "configs/grading/02.07.yaml"));
    // As in a template: another question, left blank, before the answers.
    const std::string head = g.answers_text(run, {{"kv_cache_bytes", ""}});
    const int first = 1 + static_cast<int>(std::count(head.begin(), head.end(), '\n'));  // the line after it
    auto graded = [&](const std::string& lines) { return g.grade_file(spec, run, load_answers(g.write("unspaced.yaml", head + lines))); };
    SECTION("a question id") {
        const GradeReport r = graded("  max_batch:6\n");
        CHECK(result(r, "max_batch").claim == "6");
        CHECK(result(r, "max_batch").verdict == Verdict::correct);
        REQUIRE(r.notes.size() == 1);
        CHECK(r.notes[0] == "line " + std::to_string(first) + ": 'max_batch:6' read as max_batch: 6 (YAML needs a space after ':')");
    }
    SECTION("an answer written properly wins, and the note says both were given") {
        const GradeReport r = graded("  max_batch: 5\n  max_batch:6\n");
        CHECK(result(r, "max_batch").claim == "5");
        REQUIRE(r.notes.size() == 1);
        CHECK_THAT(r.notes[0], Catch::Contains("'max_batch:6' is max_batch: 6 (YAML needs a space after ':'), but line " +
                                               std::to_string(first) + " answers max_batch too: that answer is graded, this one is not"));
    }
    SECTION("a blank answer gives way to it") {
        const GradeReport r = graded("  max_batch:\n  max_batch:6\n");
        CHECK(result(r, "max_batch").claim == "6");
    }
    SECTION("a misspelt id is not graded, as it is not with its space") {
        const GradeReport r = graded("  max_bach:6\n");
        CHECK(result(r, "max_batch").verdict == Verdict::missing);
        CHECK_THAT(result(r, "max_batch").feedback, Catch::Contains("you answered 'max_bach:6': write max_batch: 6"));
        REQUIRE(r.notes.size() == 1);
        CHECK_THAT(r.notes[0], Catch::Contains("(did you mean 'max_batch'?): not graded"));
    }
    SECTION("the only answer (YAML reads `answers` as one word) or one before others (YAML refuses the file): read, with a note") {
        const std::string base = g.answers_text(run, {});
        const int line = 1 + static_cast<int>(std::count(base.begin(), base.end(), '\n'));
        const GradeReport alone = g.grade_file(spec, run, load_answers(g.write("alone.yaml", base + "  max_batch:6\n")));
        CHECK(result(alone, "max_batch").verdict == Verdict::correct);
        REQUIRE(alone.notes.size() == 1);
        CHECK(alone.notes[0] == "line " + std::to_string(line) + ": 'max_batch:6' read as max_batch: 6 (YAML needs a space after ':')");
        // A documentation review found this refused as malformed YAML, the fix naming indentation.
        const GradeReport before = g.grade_file(spec, run, load_answers(g.write("before.yaml", base + "  max_batch:6\n  kv_cache_bytes: 1\n")));
        CHECK(result(before, "max_batch").verdict == Verdict::correct);
        CHECK(result(before, "kv_cache_bytes").claim == "1");
        REQUIRE(before.notes.size() == 1);
        CHECK_THAT(before.notes[0], Catch::StartsWith("line " + std::to_string(line) + ": 'max_batch:6' read as max_batch: 6"));
    }
    SECTION("a file malformed for another reason too is refused with that reason") {
        const std::string msg = input_error([&] { load_answers(g.write("bad.yaml", g.answers_text(run, {}) + "  max_batch:6\n  x: [\n")); });
        CHECK_THAT(msg, Catch::Contains("malformed YAML"));
    }
}

// A fuzzing review's 100,000-digit answer was quoted whole, twice, in a 211 kB report.
TEST_CASE("an answer too long to be one value is unreadable, and quoted in part", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const GradeReport r = g.grade(g.spec(spec_yaml(kRidge)), run, {{"ridge_point", std::string(100000, '9')}});
    const auto& q = result(r, "ridge_point");
    CHECK(q.verdict == Verdict::invalid);
    CHECK_THAT(q.feedback, Catch::Contains("an answer of 100000 characters is no single value"));
    CHECK(q.claim.size() < 100);
    CHECK(console_report(r).size() < 10000);
}
