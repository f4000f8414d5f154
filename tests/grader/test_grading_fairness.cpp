// What an honest student writes must be read as they meant it (the review walk of all twelve
// lessons): an interpolated value on a sweep, the "%" slip advice, choices spelt like regimes,
// counts with lab's own prefixes and their nouns, hand-computed integers, and a run that is not
// graded showing no verdicts.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "format.hpp"
#include "grading_fixtures.hpp"
#include "reports.hpp"
#include "spec.hpp"
#include "sweep.hpp"
#include "units.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

// ---------------------------------------------------------------------------------------------
// Sweeps: the expected value between points (02.06's crossover 701.3 on 1..1024)

TEST_CASE("a sweep's scale: powers of two and 02.03's mixed sweep are geometric, 1..8 is not", "[grading]") {
    CHECK(geometric_sweep({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
    CHECK(geometric_sweep({4096, 6144, 8192, 11264, 16384, 23552, 32768, 46080, 65536, 93184, 131072}));
    CHECK_FALSE(geometric_sweep({1, 2, 3, 4, 5, 6, 7, 8}));
    CHECK_FALSE(geometric_sweep({0, 1, 2, 4}));
    const std::vector<double> pow2 = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    CHECK(pow2[nearest_point(pow2, 701.3)] == 512);    // log: 701 is 1.37x 512, 1024 is 1.46x 701
    CHECK(pow2[nearest_point(pow2, 730)] == 1024);     // past the log midpoint 724
    CHECK(nearest_point({1, 2, 3, 4}, 1.45) == 0);     // linear: nearer 1
}

namespace {

// A synthetic lesson whose crossover is interpolated between the sweep's points.
struct Interpolated : Synthetic {
    explicit Interpolated(double crossover) {
        info.metrics.push_back({"crossover_interp", "", lab::MetricKind::number, "interpolated crossover"});
        derived.number("crossover_interp", crossover, "");
    }
};

std::string crossover_question(int steps) {
    return fmt::format(R"(  - id: crossover
    prompt: "At which batch of the sweep do the FLOP/s stop growing?"
    expected: {{metric: crossover_interp}}
    tolerance: {{steps: {}, sweep: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]}}
    partial: {{within: 2, credit: 0.5}}
)",
                       steps);
}

}  // namespace

TEST_CASE("an answer between two sweep points counts as the nearest, so the revealed value scores", "[grading]") {
    Grading g;
    Interpolated syn(701.3);
    auto [claim, verdict] = GENERATE(table<std::string, Verdict>({
        {"701.3", Verdict::correct},   // as lab show --reveal prints it
        {"701", Verdict::correct},
        {"700", Verdict::correct},
        {"512", Verdict::correct},
        {"1024", Verdict::correct},    // one step from 512
        {"256", Verdict::correct},
        {"128", Verdict::partial},     // two steps
        {"64", Verdict::wrong},
    }));
    CAPTURE(claim);
    GradeReport r = syn.grade(g, crossover_question(1), {{"crossover", claim}});
    REQUIRE(r.graded);
    const auto& q = result(r, "crossover");
    CHECK(q.verdict == verdict);
    if (claim == "701" || claim == "700") {
        // Shown in the notes, not only the hint.
        CHECK(q.advises);
        CHECK_THAT(q.feedback, Catch::Contains(claim + " is not a point of the sweep: it counts as 512"));
        CHECK_THAT(console_report(r), Catch::Contains("counts as 512"));
    }
    if (claim == "512") CHECK_FALSE(q.advises);
}

TEST_CASE("the revealed value scores even where rounding tips it past the midway between points", "[grading]") {
    // 724.2 is past the log midpoint of 512 and 1024 (724.08); written as 724 it would be nearer 512.
    Grading g;
    Interpolated syn(724.2);
    GradeReport r = syn.grade(g, crossover_question(0), {{"crossover", "724"}});
    CHECK(result(r, "crossover").verdict == Verdict::correct);
    CHECK(result(syn.grade(g, crossover_question(0), {{"crossover", "512"}}), "crossover").verdict == Verdict::wrong);
}

TEST_CASE("02.06's crossover and 02.03's L2 capacity score as lab prints them", "[grading]") {
    Grading g;
    SECTION("02.06: batch") {
        Run run = fixture_run("02.06-quick-reveal.json");
        const std::string q = R"(  - id: crossover_batch
    prompt: "At which batch of the sweep does the GEMM's time start to grow with the batch (the crossover)?"
    type: number
    expected: {metric: crossover_batch}
    tolerance: {steps: 1, sweep_param: batch}
)";
        const double v = run.number("crossover_batch");
        GradeReport r = g.grade(g.spec(spec_yaml(q, "02.06")), run, {{"crossover_batch", fmt::format("{:.4g}", v)}});
        CHECK(result(r, "crossover_batch").verdict == Verdict::correct);
    }
    SECTION("02.03: KiB") {
        Run run = fixture_run("02.03-quick-reveal.json");
        const std::string q = R"(  - id: l2_capacity
    prompt: "What L2 capacity does your latency curve show, in KiB?"
    type: number
    unit: KiB
    expected: {metric: l2.capacity_bytes}
    tolerance: {steps: 1, sweep_param: bytes}
)";
        const double kib = run.number("l2.capacity_bytes") / 1024;
        for (const std::string& claim : {fmt::format("{:.4g}", kib), fmt::format("{:.4g} KiB", kib), fmt::format("{:.0f}", kib)}) {
            CAPTURE(claim);
            GradeReport r = g.grade(g.spec(spec_yaml(q, "02.03")), run, {{"l2_capacity", claim}});
            CHECK(result(r, "l2_capacity").verdict == Verdict::correct);
        }
    }
}

TEST_CASE("a sweep_param no workload has is refused where the spec is checked, and never marks an answer wrong", "[grading]") {
    Grading g;
    Run run = fixture_run("02.06-quick-reveal.json");
    const std::string q = R"(  - id: crossover_batch
    prompt: "At which batch of the sweep does the GEMM's time start to grow with the batch (the crossover)?"
    type: number
    expected: {metric: crossover_batch}
    tolerance: {steps: 1, sweep_param: batches}
    points: 2
)";
    const std::string refused = input_error([&] { g.spec(spec_yaml(q, "02.06")); });
    CHECK_THAT(refused, Catch::Contains(".yaml:9: question 'crossover_batch' reads its sweep from parameter 'batches'") &&
                            Catch::Contains("did you mean 'batch'?") && Catch::Contains("the workloads' parameters: ") &&
                            Catch::Contains("batch"));
    // A spec loaded without the lesson's plan (as an old grader did): the question is void, not wrong.
    GradeReport r = g.grade(g.spec(spec_yaml(q, "02.06"), false), run, {{"crossover_batch", "512"}});
    CHECK(result(r, "crossover_batch").verdict == Verdict::void_question);
    CHECK(result(r, "crossover_batch").max_points == 0);
    CHECK_THAT(result(r, "crossover_batch").feedback, Catch::Contains("no 'batches' sweep") && Catch::Contains("grading spec mistake"));
}

// ---------------------------------------------------------------------------------------------
// The "%" slip

TEST_CASE("a fraction written in a % question is offered as the percent it is", "[grading]") {
    // 0.241 read as 0.241%: the advice is 24.1%, not 0.241% again.
    Grading g;
    Run run = fixture_run();
    const double fraction = run.number("triad.roof_fraction");
    const std::string claim = num(fraction);
    GradeReport r = g.grade(g.spec(spec_yaml(kTriadFraction)), run, {{"triad_roof_fraction", claim}});
    const auto& q = result(r, "triad_roof_fraction");
    REQUIRE(q.verdict == Verdict::wrong);
    CHECK_THAT(q.feedback, Catch::Contains("did you mean " + lab::format::percent(std::stod(claim)) + "?"));
    CHECK_THAT(q.feedback, !Catch::Contains("did you mean " + claim + "%"));
}

// ---------------------------------------------------------------------------------------------
// Choices, counts and their nouns

TEST_CASE("a choice is read like a regime: case, spaces, hyphens and underscores do not matter", "[grading]") {
    Grading g;
    Run run = fixture_run("02.11-quick-reveal.json");
    const std::string q = R"(  - id: small_verdict
    prompt: "What does the small update's doubling ratio say it is: overhead_bound or throughput_bound?"
    type: choice
    options: [overhead_bound, throughput_bound]
    expected: {metric: small_verdict}
)";
    GradingSpec spec = g.spec(spec_yaml(q, "02.11"));
    std::string want = run.text("small_verdict");
    want = want.substr(0, want.find(" or "));
    const std::string word = want.substr(0, want.find('_'));   // overhead or throughput
    for (const std::string& claim : {want, word + " bound", word + "-bound", word + "  Bound"}) {
        CAPTURE(claim);
        CHECK(result(g.grade(spec, run, {{"small_verdict", claim}}), "small_verdict").verdict == Verdict::correct);
    }
    const GradeReport report = g.grade(spec, run, {{"small_verdict", "launch bound"}});  // `bad` refers into it
    const auto& bad = result(report, "small_verdict");
    CHECK(bad.verdict == Verdict::invalid);
    CHECK_THAT(bad.feedback, Catch::Contains("overhead_bound, throughput_bound"));
}

TEST_CASE("a constant choice is one of the options as the grader compares them", "[grading]") {
    // The spec's constant answer is compared like a student's: written 'Memory-Bound' it is the
    // option 'memory bound', and a student's 'memory_bound' scores.
    Grading g;
    Run run = fixture_run();
    const std::string q = R"(  - id: side
    prompt: "Which side?"
    type: choice
    options: [memory bound, compute bound]
    expected: {value: Memory-Bound}
)";
    GradingSpec spec = g.spec(spec_yaml(q));
    CHECK(result(g.grade(spec, run, {{"side", "memory_bound"}}), "side").verdict == Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"side", "compute bound"}}), "side").verdict == Verdict::wrong);
}

TEST_CASE("the right value rounded too far is said to be so, in place of the hint", "[grading]") {
    // 02.04's kernel AI 1.333 written "1.3": half credit, and the hint pointed at the formula.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: ai
    prompt: "AI?"
    unit: FLOP/B
    expected: {value: 1.3333}
    tolerance: {rel: 0.01}
    partial: {within: 5, credit: 0.5}
    hint: "FLOPs over the minimum bytes"
)"));
    auto res = [&](const std::string& claim) { return result(g.grade(spec, run, {{"ai", claim}}), "ai"); };
    const auto two = res("1.3");
    CHECK(two.verdict == Verdict::partial);
    CHECK_THAT(two.feedback, Catch::Contains("your answer is the expected value to 2 significant figures: write 3 or more"));
    CHECK(two.advises);
    CHECK(res("1.33").verdict == Verdict::correct);
    // A different value, or one figure that is not the rounding: no such note.
    CHECK_THAT(res("1.29").feedback, !Catch::Contains("significant figure"));
    CHECK_THAT(res("1.2").feedback, !Catch::Contains("significant figure"));
}

// 02.09's capture reads 19818 MiB, graded to 1 MiB; "19.35 GiB" is that value converted and
// rounded to 4 figures, and its feedback only explained what a MiB is (a student's review).
TEST_CASE("the right value converted and rounded past a tight tolerance is said to be so, in the answer's own unit", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: mem
    prompt: "Memory used?"
    unit: MiB
    expected: {value: 19818}
    tolerance: {abs: 1}
    hint: "memory.used: MiB, 2^20 bytes"
)"));
    auto res = [&](const std::string& claim) { return result(g.grade(spec, run, {{"mem", claim}}), "mem"); };
    const auto gib = res("19.35 GiB");
    CHECK(gib.verdict == Verdict::wrong);
    CHECK_THAT(gib.feedback, Catch::Contains("your answer is the expected value to 4 significant figures") &&
                                 Catch::Contains("too coarse to be within ±") && Catch::Contains("or answer in MiB"));
    CHECK(gib.advises);
    CHECK_THAT(res("19800 MiB").feedback, Catch::Contains("to 3 significant figures") && !Catch::Contains("or answer in"));
    CHECK(res("19818 MiB").verdict == Verdict::correct);
    CHECK_THAT(res("19.36 GiB").feedback, !Catch::Contains("significant figure"));
}

TEST_CASE("a number grouped by spaces counts its significant figures as written without them", "[grading]") {
    // "1 400" is 1400: two figures, as "1400" and "1,400" are, not the one before the space.
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(R"(  - id: n
    prompt: "How many?"
    expected: {value: 1357}
    tolerance: {rel: 0.01}
    partial: {within: 5, credit: 0.5}
)"));
    auto res = [&](const std::string& claim) { return result(g.grade(spec, run, {{"n", claim}}), "n"); };
    for (const char* claim : {"1400", "1,400", "1 400", "1\u202f400"}) {
        INFO(claim);
        CHECK_THAT(res(claim).feedback, Catch::Contains("to 2 significant figures"));
    }
}

TEST_CASE("FLOP written as a word reads whatever its case; a ratio may say times or carry a count's prefix", "[grading]") {
    using lab::units::parse_claim;
    // TOP500 writes Gflop/s; the word's case means nothing (a byte's B and a milli's m do).
    CHECK(parse_claim("202 Gflop/s", "GFLOP/s").value == Approx(202e9));
    CHECK(parse_claim("202 GFlop/s", "GFLOP/s").value == Approx(202e9));
    CHECK(parse_claim("202 gflop/s", "GFLOP/s").value == Approx(202e9));
    CHECK_THAT(parse_claim("202 Gflop/s", "GFLOP/s").note, Catch::Contains("was read as 202 GFLOP/s"));
    CHECK(parse_claim("1.33 flop/B", "FLOP/B").value == Approx(1.33));
    CHECK(parse_claim("6.4 flops/byte", "FLOP/B").value == Approx(6.4));
    CHECK(parse_claim("14 Tflop", "TFLOP").value == Approx(14e12));
    CHECK(parse_claim("3 mflops", "FLOP").value == Approx(3e6));  // no milli-FLOP: mega
    // "Gflops" in a rate question: read as the rate, with the FLOPs/FLOPS note.
    CHECK(parse_claim("202 Gflops", "GFLOP/s").value == Approx(202e9));
    CHECK_THAT(parse_claim("202 Gflops", "GFLOP/s").note, Catch::Contains("FLOPs (lower-case s) is a count"));
    // Not FLOP: still refused.
    CHECK_THAT([] { try { parse_claim("5 Gflip/s", "GFLOP/s"); } catch (const std::exception& e) { return std::string(e.what()); } return std::string(); }(),
               Catch::Contains("unknown unit"));
    // 02.01's per-element ratio ("how many times cheaper"): 4.3k, 4255 times.
    CHECK(parse_claim("4.3k", "ratio").value == Approx(4300));
    CHECK(parse_claim("4255 times", "ratio").value == Approx(4255));
    CHECK(parse_claim("4,250x", "ratio").value == Approx(4250));
    // In a % question a count's prefix stays refused: 4.3k% is no answer anyone means.
    CHECK_THROWS(parse_claim("4.3 k", "%"));
}

TEST_CASE("a count may carry the decimal prefix lab prints counts with", "[grading]") {
    using lab::units::parse_claim;
    CHECK(parse_claim("78.7 k", "").value == Approx(78700));
    CHECK(parse_claim("8.39 M", "").value == Approx(8.39e6));
    CHECK(parse_claim("1.2G", "").value == Approx(1.2e9));
    // Not a bytes prefix: "5 k" in a bytes question is a count, of the wrong dimension.
    CHECK_THROWS_WITH(parse_claim("5 k", "GB"), Catch::Contains("plain count"));
    // A count's prefix is no suggestion for another unit's slip.
    CHECK_THROWS_WITH(parse_claim("5 m", "s"), !Catch::Contains("plain count"));
    // A word after a count: what to write instead.
    CHECK_THROWS_WITH(parse_claim("12853 tokens", ""), Catch::Contains("plain count") && Catch::Contains("(12853)"));
    // An intensity worked from such counts ("2 M" FLOP over "8 B" in 02.12's table) is that many
    // FLOP/B, as a bare number in an AI question is; in a time it is still refused.
    CHECK(parse_claim("250 k", "FLOP/B").value == Approx(250000));
    CHECK(parse_claim("24M", "FLOP/B").value == Approx(24e6));
    CHECK(parse_claim("250 k", "FLOP/B").dimension == "FLOP/B");
    CHECK_THROWS_WITH(parse_claim("250 k", "s"), Catch::Contains("expected"));
}

TEST_CASE("02.11's threshold takes 78.7 k and its noun; another word or unit is unreadable, with a reason", "[grading]") {
    Grading g;
    Run run = fixture_run("02.11-quick-reveal.json");
    const std::string q = R"(  - id: threshold_elements
    prompt: "How many elements must an update touch?"
    type: number
    noun: element
    expected: {metric: threshold_elements}
    tolerance: {rel: 0.1}
)";
    GradingSpec spec = g.spec(spec_yaml(q, "02.11"));
    const double n = run.number("threshold_elements");
    auto verdict = [&](const std::string& claim) { return result(g.grade(spec, run, {{"threshold_elements", claim}}), "threshold_elements"); };
    CHECK(verdict(fmt::format("{:.3g} k", n / 1e3)).verdict == Verdict::correct);
    CHECK(verdict(num(n) + " elements").verdict == Verdict::correct);
    CHECK(verdict(num(n) + " Element").verdict == Verdict::correct);
    CHECK_THAT(verdict(num(n) + " tokens").feedback, Catch::Contains("plain count"));
    CHECK(verdict(num(n) + " GB").verdict == Verdict::invalid);

    // A list of nouns: each, alone or two together ("41 sync events"); the first names the count.
    GradingSpec several = g.spec(spec_yaml(R"(  - id: threshold_elements
    prompt: "How many elements must an update touch?"
    type: number
    noun: [element, value]
    expected: {metric: threshold_elements}
    tolerance: {rel: 0.1}
)", "02.11"));
    REQUIRE(several.questions[0].noun == "element");
    for (const char* words : {" values", " element values", " Value"}) {
        CAPTURE(words);
        CHECK(result(g.grade(several, run, {{"threshold_elements", num(n) + words}}), "threshold_elements").verdict == Verdict::correct);
    }
    CHECK(result(g.grade(several, run, {{"threshold_elements", num(n) + " values values values"}}), "threshold_elements").verdict ==
          Verdict::invalid);
}

TEST_CASE("a noun is for counts only", "[grading]") {
    Grading g;
    const std::string q = R"(  - id: attainable
    prompt: "What is attainable?"
    unit: GFLOP/s
    noun: flop
    expected: {metric: attainable_flops_per_s}
    tolerance: {rel: 0.05}
)";
    CHECK_THAT(input_error([&] { g.spec(spec_yaml(q)); }), Catch::Contains("'noun' applies to plain counts"));
    CHECK_THAT(input_error([&] { g.spec(spec_yaml(kRidge + "    noun: two words\n")); }), Catch::Contains("not one word"));
    CHECK_THAT(input_error([&] { g.spec(spec_yaml(kRidge + "    noun: [sync, two words]\n")); }), Catch::Contains("not one word"));
}

TEST_CASE("02.07's shipped spec: the hand-worked context to 3 s.f. or one token, the batch exactly", "[grading]") {
    Grading g;
    Run run = fixture_run("02.07-quick-reveal.json");
    GradingSpec spec = g.spec(lab_test::read_file(lab_test::source_root() / "configs/grading/02.07.yaml"));
    const double t = run.number("question_overtake_context");
    const double b = run.number("question_max_batch");
    auto verdict = [&](const std::string& id, const std::string& claim) { return result(g.grade(spec, run, {{id, claim}}), id).verdict; };
    const double three_sf = std::round(t / std::pow(10, std::floor(std::log10(t)) - 2)) * std::pow(10, std::floor(std::log10(t)) - 2);
    CHECK(verdict("kv_exceeds_weights_context", fmt::format("{:.0f}", t)) == Verdict::correct);
    CHECK(verdict("kv_exceeds_weights_context", fmt::format("{:.0f}", t + 1)) == Verdict::correct);
    CHECK(verdict("kv_exceeds_weights_context", fmt::format("{:.0f}", three_sf)) == Verdict::correct);
    CHECK(verdict("kv_exceeds_weights_context", fmt::format("{:.0f} tokens", t)) == Verdict::correct);
    CHECK(verdict("kv_exceeds_weights_context", fmt::format("{:.0f}", std::round(t * 1.02))) == Verdict::wrong);
    CHECK(verdict("max_batch", fmt::format("{:.0f} sequences", b)) == Verdict::correct);
    CHECK(verdict("max_batch", fmt::format("{:.0f}", b + 1)) == Verdict::wrong);
    // The KV cache's bytes: three figures right, two figures half right (a student's 3.2 GB for
    // 3.22 GB scored 0 under a 0.5% tolerance the prompt never stated), GB taken for GiB wrong.
    const double kv = run.number("question_kv_bytes");
    auto figures = [](double v, int n) { const double p = std::pow(10, std::floor(std::log10(v)) - (n - 1)); return std::round(v / p) * p; };
    CHECK(verdict("kv_cache_bytes", fmt::format("{:g} GB", figures(kv, 3) / 1e9)) == Verdict::correct);
    const Verdict two = verdict("kv_cache_bytes", fmt::format("{:g} GB", figures(kv, 2) / 1e9));
    CHECK((two == Verdict::correct || two == Verdict::partial));
    CHECK(verdict("kv_cache_bytes", fmt::format("{:g} GB", figures(kv / 1.073741824, 3) / 1e9)) == Verdict::wrong);
    CHECK(verdict("kv_cache_bytes", fmt::format("{:g} GB", figures(kv * 4, 3) / 1e9)) == Verdict::wrong);
}

TEST_CASE("02.10's and 02.12's shipped trace counts read what the thing counted is called", "[grading]") {
    Grading g;
    Run r10 = fixture_run("02.10-quick-reveal.json");
    GradingSpec s10 = g.spec(lab_test::read_file(lab_test::source_root() / "configs/grading/02.10.yaml"));
    for (const char* claim : {"41", "41 syncs", "41 events", "41 sync events"}) {
        CAPTURE(claim);
        CHECK(result(g.grade(s10, r10, {{"trace_syncs", claim}}), "trace_syncs").verdict == Verdict::correct);
    }
    // lab trace prints 99.7%: "100%" is two figures of it, half right.
    CHECK(result(g.grade(s10, r10, {{"trace_idle", "99.7%"}}), "trace_idle").verdict == Verdict::correct);
    CHECK(result(g.grade(s10, r10, {{"trace_idle", "100 %"}}), "trace_idle").verdict == Verdict::partial);
    CHECK(result(g.grade(s10, r10, {{"trace_idle", "98%"}}), "trace_idle").verdict == Verdict::wrong);
    Run r12 = fixture_run("02.12-quick-reveal.json");
    GradingSpec s12 = g.spec(lab_test::read_file(lab_test::source_root() / "configs/grading/02.12.yaml"));
    for (const char* claim : {"14", "14 ranges", "14 kernels", "14 kernel ranges"}) {
        CAPTURE(claim);
        CHECK(result(g.grade(s12, r12, {{"trace_zero_flop_ranges", claim}}), "trace_zero_flop_ranges").verdict == Verdict::correct);
    }
}

// ---------------------------------------------------------------------------------------------
// A run that is not graded

TEST_CASE("a run that is not graded shows no verdicts, hints or points", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge + kTriadSide));
    spec.accept_quick = false;   // the fixture is a quick run
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}, {"triad_side", "compute_bound"}});
    REQUIRE_FALSE(r.graded);
    const std::string console = console_report(r);
    CHECK_THAT(console, Catch::Contains("Not graded"));
    CHECK_THAT(console, Catch::Contains("\u2014/2") && Catch::Contains("\u2014/1"));
    CHECK_THAT(console, !Catch::Contains("correct") && !Catch::Contains("wrong") && !Catch::Contains("hint:"));
    const auto j = json_report(r);
    for (const auto& q : j["questions"]) {
        CHECK(q["verdict"] == "not graded");
        CHECK(q["hint"] == "");
    }
    const auto results = gradescope_results(r, 0.1);
    for (const auto& t : results["tests"])
        CHECK_THAT(t["output"].get<std::string>(), Catch::Contains("Verdict: not graded") && !Catch::Contains("Hint:"));
}

// ---------------------------------------------------------------------------------------------
// A measured regime is decided against the ceilings measured right after the kernel; a student
// applies the documented rule to the roof fractions the run shows. On a busy machine the two
// can disagree (the helper's walk: a reference launch of 32 ms beside a 15 ms kernel made it
// overhead_bound, while the shown launch cost was 10 µs). Either reading is accepted.

// 02.01's question on mystery kernel A's measured regime.
const std::string kMysteryA = R"(  - id: mystery_a
    prompt: "Which regime is mystery kernel A in?"
    type: regime
    expected: {metric: mystery_a.measured_regime}
    points: 2
)";

TEST_CASE("a measured regime is accepted by the run's shown ceilings too when a busy reference disagrees", "[grading]") {
    Grading g;
    Run run = fixture_run("02.01-quick.json");
    const std::string shown = run.text("mystery_a.measured_regime");
    REQUIRE(shown == "memory_bound");  // the fixture's kernel: 42% of the bandwidth roof
    // The launch measured beside mystery_a, as a loaded machine can measure it: 100,000x slower.
    for (auto& cm : run.record["device"]["ceiling_measurements"])
        if (cm["ceiling"] == "launch" && cm["workloads"][0] == "mystery_a")
            for (const char* k : {"median", "min", "max", "mean", "stddev", "total"})
                cm["measurement"]["time_s"][k] = cm["measurement"]["time_s"][k].get<double>() * 1e5;
    run.refresh();  // derive again, then store what the edited measurements give, sealed
    run.restore_stored_values();
    run.reseal();
    REQUIRE(run.text("mystery_a.measured_regime") == "overhead_bound");
    const GradingSpec spec = g.spec(spec_yaml(kMysteryA, "02.01"));
    auto by_rule = g.grade(spec, run, {{"mystery_a", "memory_bound"}});
    INFO(result(by_rule, "mystery_a").feedback);
    CHECK(result(by_rule, "mystery_a").verdict == Verdict::correct);
    CHECK_THAT(result(by_rule, "mystery_a").feedback, Catch::Contains("roof fractions the run shows") && Catch::Contains("either is accepted"));
    // Said on the console, not only in --json (a student review: a bare "correct" hid it).
    CHECK(result(by_rule, "mystery_a").advises);
    CHECK(result(g.grade(spec, run, {{"mystery_a", "overhead_bound"}}), "mystery_a").verdict == Verdict::correct);
    CHECK(result(g.grade(spec, run, {{"mystery_a", "compute_bound"}}), "mystery_a").verdict == Verdict::wrong);
}

TEST_CASE("a run measured on a busy machine is graded as measured, with a note that says so", "[grading]") {
    Grading g;
    Run run = fixture_run("02.01-quick.json");
    const GradingSpec spec = g.spec(spec_yaml(kMysteryA, "02.01"));
    const Claims claims = {{"mystery_a", run.text("mystery_a.measured_regime")}};
    auto busy_note = [](const GradeReport& r) {
        return std::count_if(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("busy machine") != std::string::npos; });
    };
    // The fixture ran quiet (every workload under 0.1 CPUs of others' use): nothing to say.
    const GradeReport quiet = g.grade(spec, run, claims);
    CHECK(busy_note(quiet) == 0);
    // Two workloads measured while others used 0.4 and 1.7 CPUs: the same score, and a note that
    // counts them, names the worst and says the grade does not suffer.
    int edited = 0;
    for (auto& w : run.record["workloads"])
        if (edited < 2) w["load"] = edited++ == 0 ? 0.4 : 1.7;
    run.refresh();
    run.reseal();
    const GradeReport busy = g.grade(spec, run, claims);
    REQUIRE(busy.graded);
    CHECK(busy.score == quiet.score);
    REQUIRE(busy_note(busy) == 1);
    const std::string note = *std::find_if(busy.notes.begin(), busy.notes.end(), [](const std::string& n) { return n.find("busy machine") != std::string::npos; });
    CHECK_THAT(note, Catch::Contains(fmt::format("2 of {} workloads", run.raw.measurements.size())) && Catch::Contains("up to 1.7") &&
                         Catch::Contains("costs you nothing"));
}

// The shipped 02.09 spec graded the chase's share of the roof (about 0.4% on a CPU) to within 1
// percentage point: 0% was right, and so was any other student's value (an instructor review).
TEST_CASE("02.09's chase roof fraction is graded relative to its size: 0% is not within it", "[grading][fairness]") {
    Grading g;
    Run run = fixture_run("02.09-quick-reveal.json");
    const GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.09.yaml", true, "never");
    const double roof = run.number("chase.roof_fraction");
    REQUIRE(roof < 0.01);
    const auto graded = [&](const std::string& claim) { return result(g.grade(spec, run, {{"chase_roof", claim}}), "chase_roof"); };
    CHECK(graded(num(100 * roof) + "%").verdict == Verdict::correct);
    CHECK(graded(fmt::format("{:.2g}%", 100 * roof)).verdict == Verdict::correct);   // as a student rounds the table's cell
    CHECK(graded("0%").verdict == Verdict::wrong);
    CHECK(graded(num(100 * roof + 0.9) + "%").verdict != Verdict::correct);
}

// The tolerance is said in the question's unit: 02.09's capture_memory, asked in MiB with
// {abs: 1}, said "not within ±1.05 MB" (a student review).
TEST_CASE("an absolute tolerance is said in the question's unit", "[grading][fairness]") {
    Grading g;
    Run run = fixture_run("02.09-quick-reveal.json");
    const GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.09.yaml", true, "never");
    const double mib = run.number("capture.memory_used") / 1048576;
    const auto graded = [&](double claim) { return result(g.grade(spec, run, {{"capture_memory", num(claim) + " MiB"}}), "capture_memory"); };
    CHECK(graded(mib).feedback == "accepted: within ±1 MiB");
    CHECK_THAT(graded(mib + 50).feedback, Catch::StartsWith("not within ±1 MiB"));
}

// 02.12 graded each mystery's roof fraction to within 3 percentage points: a latency-bound
// mystery reaches under 1% of its roof, so 0% passed (`lab check-spec 02.12 --run` on the fixture
// warned of it). Relative now: the fraction a student works out from the table passes, 0% fails.
TEST_CASE("02.12's roof fractions are graded relative to their size, the small ones too", "[grading][fairness]") {
    Grading g;
    Run run = fixture_run("02.12-quick-reveal.json");
    const GradingSpec spec = load_spec(lab_test::source_root() / "configs/grading/02.12.yaml", true, "never");
    std::vector<double> roofs;
    for (int m = 1; m <= 4; ++m) roofs.push_back(run.number(fmt::format("mystery_{}.roof_fraction", m)));
    REQUIRE(*std::min_element(roofs.begin(), roofs.end()) < 0.01);
    for (int m = 1; m <= 4; ++m) {
        const std::string id = fmt::format("mystery_{}_roof_fraction", m);
        CAPTURE(id, roofs[m - 1]);
        const auto graded = [&](const std::string& claim) { return result(g.grade(spec, run, {{id, claim}}), id).verdict; };
        CHECK(graded(fmt::format("{:.3g}%", 100 * roofs[m - 1])) == Verdict::correct);
        CHECK(graded(fmt::format("{:.2g}%", 100 * roofs[m - 1] * 1.004)) == Verdict::correct);  // worked from 3-figure cells, rounded
        CHECK(graded("0%") == Verdict::wrong);
        CHECK(graded(num(100 * roofs[m - 1] * 1.5) + "%") == Verdict::wrong);
    }
}

// Every run's table shows a workload's roof fraction twice: `roof`, of the run's ceilings (the
// graded metric), and `ref`, of the ceilings measured right after the kernel, which its regime is
// decided by and which the student guide says to read. A student review under load read the ref
// column (55.4% against a graded 44.6%) and got 0 points: both are measured, both are accepted.
TEST_CASE("a roof fraction read from the ref column is accepted, said as such", "[grading][fairness]") {
    Grading g;
    Run run = fixture_run("02.09-quick-reveal.json");
    const std::string q = R"(  - id: read_roof
    prompt: "What fraction of the memory roof did read_all reach?"
    type: number
    unit: "%"
    expected: {metric: read_all.roof_fraction}
    tolerance: {abs: 3}
    points: 2
)";
    const GradingSpec spec = g.spec(spec_yaml(q, "02.09"));
    const double roof = run.number("read_all.roof_fraction");
    REQUIRE(roof == Approx(0.331).epsilon(0.01));  // the fixture's table: roof 33.1%, ref 62.7%
    const auto graded = [&](const std::string& claim) { return result(g.grade(spec, run, {{"read_roof", claim}}), "read_roof"); };
    const auto by_roof = graded("33.1%");
    CHECK(by_roof.verdict == Verdict::correct);
    CHECK_THAT(by_roof.feedback, !Catch::Contains("ref column"));
    const auto by_ref = graded("62.7%");
    CHECK(by_ref.verdict == Verdict::correct);
    CHECK_THAT(by_ref.feedback, Catch::Contains("ref column") && Catch::Contains("either is accepted"));
    CHECK(by_ref.points == 2);
    CHECK(graded("48%").verdict == Verdict::wrong);  // between the two: neither
    // The ref value written as a bare ratio gets the x100 advice the roof value would (a review:
    // '0.745' got only the method hint, while '0.603' for the roof column was told 'did you mean').
    const auto slip = graded("0.627");
    CHECK(slip.verdict == Verdict::wrong);
    CHECK(slip.advises);
    CHECK_THAT(slip.feedback, Catch::Contains("did you mean 62.7%"));
}

// 02.03's cycles and ratio are worked out from the student's own latencies. A student review
// misread the L1 plateau under load (1.83 ns) and worked the rest out right from it, and lost the
// follow-on points too: an error is charged once, where it was made (carried_from).
TEST_CASE("an answer worked out right from the student's own wrong earlier answer is accepted once", "[grading][fairness]") {
    Grading g;
    Run run = fixture_run("02.03-quick-reveal.json");
    const std::string qs = R"(  - id: l1_latency
    prompt: "L1 latency?"
    type: number
    unit: ns
    expected: {metric: l1.latency_s}
    tolerance: {rel: 0.15}
    points: 2
  - id: dram_latency
    prompt: "DRAM latency?"
    type: number
    unit: ns
    expected: {metric: dram.latency_s}
    tolerance: {rel: 0.15}
    points: 2
  - id: l1_cycles
    prompt: "L1 cycles?"
    type: number
    noun: cycle
    expected: {metric: l1.latency_cycles}
    tolerance: {rel: 0.15}
    partial: {within: 2, credit: 0.5}
    carried_from: {l1_latency: 1}
    points: 1
  - id: dram_over_l1
    prompt: "DRAM / L1?"
    type: number
    expected: {metric: dram_over_l1}
    tolerance: {rel: 0.2}
    carried_from: {dram_latency: 1, l1_latency: -1}
    points: 2
)";
    const GradingSpec spec = g.spec(spec_yaml(qs, "02.03"));
    const double l1 = run.number("l1.latency_s"), dram = run.number("dram.latency_s"), cycles = run.number("l1.latency_cycles");
    const double ratio = run.number("dram_over_l1");
    // L1 misread 1.6x high; the rest worked out right from it.
    GradeReport r = g.grade(spec, run, {{"l1_latency", num(1.6 * l1 * 1e9) + " ns"}, {"dram_latency", num(dram * 1e9) + " ns"},
                                        {"l1_cycles", num(1.6 * cycles)}, {"dram_over_l1", num(ratio / 1.6)}});
    CHECK(result(r, "l1_latency").verdict == Verdict::wrong);
    CHECK(result(r, "l1_cycles").verdict == Verdict::correct);
    CHECK_THAT(result(r, "l1_cycles").feedback, Catch::Contains("consistent with your answer to l1_latency") && Catch::Contains("charged once"));
    CHECK(result(r, "dram_over_l1").verdict == Verdict::correct);
    CHECK_THAT(result(r, "dram_over_l1").feedback, Catch::Contains("answers to dram_latency and l1_latency"));
    CHECK(r.score == 2 + 1 + 2);
    // The right value stays right whatever the earlier answer; one consistent with neither is wrong.
    r = g.grade(spec, run, {{"l1_latency", num(1.6 * l1 * 1e9) + " ns"}, {"l1_cycles", num(cycles)}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::correct);
    CHECK_THAT(result(r, "l1_cycles").feedback, !Catch::Contains("consistent"));
    r = g.grade(spec, run, {{"l1_latency", num(1.6 * l1 * 1e9) + " ns"}, {"l1_cycles", num(4 * cycles)}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::wrong);
    // No earlier answer (or an unreadable one) carries nothing.
    r = g.grade(spec, run, {{"l1_latency", "fast"}, {"l1_cycles", num(1.6 * cycles)}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::wrong);
    // Invented earlier answers (a review: 1000x off, DRAM faster than L1) carry nothing: past x/÷ 3
    // of its expected value an earlier answer is no misreading.
    r = g.grade(spec, run, {{"l1_latency", num(1000 * l1 * 1e9) + " ns"}, {"dram_latency", num(dram * 1e9 / 1000) + " ns"},
                            {"l1_cycles", num(1000 * cycles)}, {"dram_over_l1", num(ratio / 1e6)}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::wrong);
    CHECK(result(r, "dram_over_l1").verdict == Verdict::wrong);
    CHECK(r.score == 0);
    // Worked out right from an answer 10x off: not scored, and told why rather than given the
    // method hint, whose method the student applied.
    r = g.grade(spec, run, {{"l1_latency", num(10 * l1 * 1e9) + " ns"}, {"l1_cycles", num(10 * cycles)}});
    CHECK(result(r, "l1_cycles").verdict == Verdict::wrong);
    CHECK(result(r, "l1_cycles").advises);
    CHECK_THAT(result(r, "l1_cycles").feedback, Catch::Contains("consistent with your answer to l1_latency, but l1_latency is more than 3 times off"));
    // Accepted another way is said to the student (the console shows advice only).
    r = g.grade(spec, run, {{"l1_latency", num(1.6 * l1 * 1e9) + " ns"}, {"l1_cycles", num(1.6 * cycles)}});
    CHECK(result(r, "l1_cycles").advises);
}

TEST_CASE("carried_from must name an earlier number question, with a power from -3 to 3", "[grading][spec]") {
    Grading g;
    const std::string base = R"(  - id: a
    prompt: "A?"
    type: number
    expected: {value: 2}
    points: 1
  - id: side
    prompt: "Side?"
    type: choice
    options: [x, y]
    expected: {value: x}
)";
    auto refusal = [&](const std::string& extra_question) { return input_error([&] { g.spec(spec_yaml(base + extra_question), false); }); };
    const std::string head = "  - id: b\n    prompt: \"B?\"\n    type: number\n    expected: {value: 4}\n";
    CHECK_THAT(refusal(head + "    carried_from: {c: 1}\n"), Catch::Contains("carried_from names 'c', which is no question before 'b'"));
    CHECK_THAT(refusal(head + "    carried_from: {side: 1}\n"), Catch::Contains("'side', which is not a number question"));
    CHECK_THAT(refusal(head + "    carried_from: {a: 0}\n"), Catch::Contains("is not a power from -3 to 3"));
    CHECK_THAT(refusal(head + "    carried_from: [a]\n"), Catch::Contains("must be a mapping"));
    CHECK_THAT(refusal("  - id: r\n    prompt: \"R?\"\n    type: choice\n    options: [x, y]\n    expected: {value: x}\n    carried_from: {a: 1}\n"),
               Catch::Contains("number and integer questions only"));
    CHECK(refusal(head + "    carried_from: {a: 1}\n").empty());
    // A hidden question's answer would show through a visible one's verdict.
    const std::string hidden_a = "  - id: h\n    prompt: \"H?\"\n    type: number\n    expected: {value: 2}\n    hidden: true\n";
    CHECK_THAT(refusal(hidden_a + head + "    carried_from: {h: 1}\n"), Catch::Contains("'h', a hidden question, from 'b', which students see"));
    CHECK(refusal(hidden_a + head + "    hidden: true\n    carried_from: {h: 1}\n").empty());
    // A sweep answer counts as its nearest point: no ratio to carry.
    CHECK_THAT(refusal(head + "    tolerance: {steps: 1, sweep: [1, 2, 4]}\n    carried_from: {a: 1}\n"), Catch::Contains("on a sweep question ('b'"));
}
