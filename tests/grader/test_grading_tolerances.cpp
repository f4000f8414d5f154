// Grading claims: verdicts and points under each tolerance kind (relative, absolute in the
// question's unit, factor, steps of a sweep, partial bands), claims in other units of the
// question's dimension or of the wrong one, regime spellings, choices, void questions and
// either side of the ridge, and fractions of a ceiling read as lab shows them.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <string>

#include "grade_number.hpp"
#include "grading_fixtures.hpp"
#include "lab/roofline.hpp"
#include "reports.hpp"
#include "run_record.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

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
    // The words say which band the answer is in and what each is worth; a wrong answer's never
    // reads "accepted".
    const std::string& said = result(r, "ridge_point").feedback;
    if (verdict == Verdict::correct) CHECK(said == "accepted: within ±5%");
    if (verdict == Verdict::partial) CHECK(said == "partial credit (50% of the points): not within ±5% (full marks), but within ±15%");
    if (verdict == Verdict::wrong) CHECK(said == "not within ±5%, nor within ±15% (50% of the points)");
}

TEST_CASE("the expected value is shown to enough digits to judge the tolerance by", "[grading]") {
    // rel 0.05: 4 significant digits (3 cannot tell a claim 1% off from one 5% off near 9.99).
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    const std::string shown = result(g.grade(spec, run, {{"ridge_point", "1"}}), "ridge_point").expected;
    CAPTURE(shown);
    std::size_t digits = 0;
    for (char c : shown.substr(0, shown.find(' '))) digits += c >= '0' && c <= '9';
    const double ridge = run.number("ridge_point");
    // Trailing zeros are dropped, so a value may show fewer; it is never rounded coarser than 4.
    CHECK(std::fabs(std::stod(shown) - ridge) <= 5e-4 * ridge);
    CHECK(digits <= 4);
}

TEST_CASE("a claim exactly at the tolerance's edge is within it, though its difference rounds a hair over", "[grading]") {
    // In exact arithmetic each claim is exactly at the edge; in binary floating point the
    // difference comes out a few ulps over the band (|1.0 - 1.1| = 0.10000000000000009 > 0.1).
    Tolerance abs;
    abs.abs = 0.1;
    CHECK(within(1.0, 1.1, abs, 1));
    CHECK(within(1.2, 1.1, abs, 1));
    Tolerance rel;
    rel.rel = 0.1;
    CHECK(within(0.99, 1.1, rel, 1));   // 1.1 - 0.99 = 0.1100000000000001 > 0.1 * 1.1
    CHECK(within(0.77, 0.7, rel, 1));   // 0.77 - 0.7 = 0.07000000000000006 > 0.1 * 0.7
    // The slack is a hair, not a widening: a real step past the edge is outside.
    CHECK_FALSE(within(1.0 - 1e-9, 1.1, abs, 1));
    CHECK_FALSE(within(0.99 - 1e-9, 1.1, rel, 1));
    CHECK_FALSE(within(0.77 + 1e-9, 0.7, rel, 1));
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
    // Said in points: "±3%" would read as 3% of the value.
    CHECK_THAT(result(r, "triad_roof_fraction").feedback, Catch::Contains("±3 percentage points"));
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
        {"20", Verdict::correct},   // not a point of the sweep: counts as 16, its nearest
        {"16.5", Verdict::invalid}, // not a whole number
    }));
    CAPTURE(claim);
    GradeReport r = syn.grade(g, q, {{"crossover", claim}});
    REQUIRE(r.graded);
    CHECK(result(r, "crossover").verdict == verdict);
    if (claim == "20") CHECK_THAT(result(r, "crossover").feedback, Catch::Contains("20 is not a point of the sweep: it counts as 16"));
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
        {"8 kB", Verdict::correct},     // 8000 B: not on the sweep (kB is not KiB), nearest 8 KiB
        {"12 KiB", Verdict::correct},   // between 8 and 16: nearest 16 on the log scale, one step
        {"23 KiB", Verdict::wrong},     // nearest 32: two steps
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
// Regimes, choices, yes/no

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
        // Blanks around it, runs of them inside it and a sentence's full stop do not matter either
        // (quoted: YAML keeps a quoted scalar's blanks).
        {"\"memory_bound \"", Verdict::correct},
        {"\" Memory-bound\"", Verdict::correct},
        {"memory  bound", Verdict::correct},
        {"Memory Bound.", Verdict::correct},
        {"\"memory -  bound \"", Verdict::correct},
        // Pasted from a document: a no-break space, a non-breaking hyphen, an en dash.
        {"memory\u00a0bound", Verdict::correct},
        {"\"memory bound\u00a0\"", Verdict::correct},
        {"memory\u2011bound", Verdict::correct},
        {"Compute\u2013bound", Verdict::wrong},
        {"compute_bound", Verdict::wrong},
        {"Compute bound.", Verdict::wrong},
        {"latency_bound", Verdict::wrong},
        {"slow", Verdict::invalid},
    }));
    CAPTURE(claim);
    CHECK(result(g.grade(spec, run, {{"triad_side", claim}}), "triad_side").verdict == verdict);
}

// A run's lines ask students to say which numbers they read a regime from; an honest student's
// "compute_bound (59% of the FLOP roof)" scored 0 as unreadable (a student's review). Working in
// brackets after the answer is not read, as a number's is, and the feedback says so.
TEST_CASE("a word answer with its working in brackets after it is graded on the answer", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(std::string(kTriadSide) + R"Y(  - id: roof
    prompt: "Which roof limits the triad?"
    type: choice
    options: [flat, slanted, "slanted (bandwidth)"]
    expected: {value: slanted}
  - id: fits
    prompt: "Does the triad's working set fit in the last-level cache?"
    type: bool
    expected: {value: "no"}
)Y"));
    auto [question, claim, verdict] = GENERATE(table<std::string, std::string, Verdict>({
        {"triad_side", "memory bound (22% of the FLOP roof; x2 took 2.0x)", Verdict::correct},
        {"triad_side", "Memory bound. (AI 0.083 < ridge 2.2)", Verdict::correct},
        {"triad_side", "\"memory_bound (left of the ridge).\"", Verdict::correct},
        {"triad_side", "compute bound (right of the ridge)", Verdict::wrong},
        {"triad_side", "(memory bound)", Verdict::invalid},
        {"triad_side", "slow (memory bound)", Verdict::invalid},
        {"roof", "slanted (the bandwidth roof)", Verdict::correct},
        {"roof", "flat (compute)", Verdict::wrong},
        {"fits", "no (256 MiB > 32 MiB)", Verdict::correct},
        {"fits", "No.", Verdict::correct},
    }));
    CAPTURE(question, claim);
    const GradeReport r = g.grade(spec, run, {{question, claim}});
    const auto& res = result(r, question);
    CHECK(res.verdict == verdict);
    if (verdict != Verdict::invalid && claim.find(" (") != std::string::npos)
        CHECK_THAT(res.feedback, Catch::Contains("after the answer was not read"));
    // An option holding brackets itself is matched whole, with nothing said of them.
    const GradeReport whole = g.grade(spec, run, {{"roof", "slanted (bandwidth)"}});
    CHECK(result(whole, "roof").verdict == Verdict::wrong);
    CHECK_THAT(result(whole, "roof").feedback, !Catch::Contains("not read"));
}

TEST_CASE("an answer that is no regime is quoted as written, blanks visible", "[grading]") {
    Grading g;
    Run run = fixture_run();
    const GradeReport r = g.grade(g.spec(spec_yaml(kTriadSide)), run, {{"triad_side", "\"memory bond \""}});
    CHECK(result(r, "triad_side").verdict == Verdict::invalid);
    CHECK(result(r, "triad_side").feedback == "'memory bond ' is not a regime: write memory_bound or compute_bound");
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
    CHECK(result(g.grade(spec, run, {{"roof", "Slanted."}}), "roof").verdict == Verdict::correct);
    r = g.grade(spec, run, {{"roof", "flat"}, {"fits", "yes"}});
    CHECK(result(r, "roof").verdict == Verdict::wrong);
    CHECK(result(r, "fits").verdict == Verdict::wrong);
    r = g.grade(spec, run, {{"roof", "curved"}, {"fits", "perhaps"}});
    CHECK(result(r, "roof").verdict == Verdict::invalid);
    CHECK(result(r, "fits").verdict == Verdict::invalid);

    // An expected "A or B" (a run on the boundary between two options) accepts either, and only them.
    GradingSpec both = g.spec(spec_yaml(R"(  - id: verdict
    prompt: "Overhead or throughput bound?"
    type: choice
    options: [overhead_bound, throughput_bound, latency_bound]
    expected: {value: "overhead_bound or throughput_bound"}
)"));
    for (const char* claim : {"overhead_bound", "Throughput_Bound"}) {
        const auto report = g.grade(both, run, {{"verdict", claim}});  // kept: res refers into it (ASan found the dangling one)
        const auto& res = result(report, "verdict");
        CHECK(res.verdict == Verdict::correct);
        CHECK(res.feedback.find("either is accepted") != std::string::npos);
        CHECK(res.advises);
    }
    const auto off = g.grade(both, run, {{"verdict", "latency_bound"}});
    CHECK(result(off, "verdict").verdict == Verdict::wrong);
    CHECK_THAT(result(off, "verdict").feedback, !Catch::Contains("overhead_bound") && !Catch::Contains("throughput_bound"));

    // An option written without separators (02.08's mxfp4) is matched with them too, as
    // docs/student.md says: spaces, hyphens and underscores do not matter.
    GradingSpec formats = g.spec(spec_yaml(R"(  - id: largest
    prompt: "Which format lost most?"
    type: choice
    options: [fp16, mxfp4, nvfp4]
    expected: {value: mxfp4}
)"));
    for (const char* claim : {"MX-FP4", "mx fp4", "mx_fp4", "MXFP4.", "mx\u2011fp4"})
        CHECK(result(g.grade(formats, run, {{"largest", claim}}), "largest").verdict == Verdict::correct);
    CHECK(result(g.grade(formats, run, {{"largest", "NV-FP4"}}), "largest").verdict == Verdict::wrong);
    CHECK(result(g.grade(formats, run, {{"largest", "fp 8"}}), "largest").verdict == Verdict::invalid);
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
        CHECK(result(r, "noisy").advises);  // said on the console too
    }
    const GradeReport wrong = syn.grade(g, q, {{"noisy", "memory_bound"}});
    CHECK(result(wrong, "noisy").verdict == Verdict::wrong);
    // A wrong answer is not told which two were accepted (a code review: it named them).
    CHECK_THAT(result(wrong, "noisy").feedback, !Catch::Contains("compute_bound") && !Catch::Contains("latency_bound"));
    CHECK(result(syn.grade(g, q, {{"noisy", "undecided"}}), "noisy").verdict == Verdict::invalid);
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
