// The lessons' derivations on recorded runs (tests/fixtures/runs/cpu): every metric produced is
// declared and every declared metric is produced; values follow from the raw measurements by the
// formulas the lessons state; per-student variants follow the seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "plugin_loader.hpp"
#include "run_record.hpp"
#include "test_support.hpp"

using namespace lab;
using Catch::Matchers::WithinRel;

namespace {

LoadedLesson lesson(const std::string& dir) {
    return load_lesson(lab_test::build_root() / "labs" / dir / ("lab_" + dir + ".so"));
}

RawRun fixture_run(const std::string& name) {
    return record::raw_run_from_record(record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu" / name));
}

bool runs_on(const MetricDecl& m, DeviceKind kind) {
    return std::find(m.devices.begin(), m.devices.end(), to_string(kind)) != m.devices.end();
}

void check_declared_matches_produced(const LessonInfo& info, const Derivation& d, const RawRun& run) {
    std::set<std::string> declared, produced;
    for (const auto& m : info.metrics)
        if (!run.options.quick || m.quick) declared.insert(m.name);
    for (const auto& m : d.metrics) produced.insert(m.name);
    for (const auto& p : produced) {
        INFO("produced but not declared: " << p);
        CHECK(declared.count(p) == 1);
    }
    for (const auto& m : info.metrics) {
        INFO("declared but not produced: " << m.name);
        // An AI is not produced when it is infinite (a kernel that moves no bytes); a metric of
        // another device kind is not produced on this one.
        if (m.name.size() > 3 && m.name.compare(m.name.size() - 3, 3, ".ai") == 0) continue;
        if (!runs_on(m, run.device_kind)) continue;
        CHECK(produced.count(m.name) == 1);
    }
}

}  // namespace

TEST_CASE("02.01 derives every metric it declares from a recorded run", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derive(run);
    check_declared_matches_produced(l.info, d, run);
}

TEST_CASE("02.01's mysteries are the seed's permutation of the three regimes", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derive(run);
    // The permutations, in the order the lesson documents; kinds 0 compute, 1 memory, 2 overhead.
    const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const char* expected[3] = {"compute_bound", "memory_bound", "overhead_bound"};
    const char* names[3] = {"mystery_a", "mystery_b", "mystery_c"};
    for (int m = 0; m < 3; ++m) {
        int kind = perms[run.options.seed % 6][m];
        INFO(names[m]);
        CHECK(d.find(std::string(names[m]) + ".measured_regime")->text == expected[kind]);
        // The compute kernel is the one that moves only its result (a few bytes per thread).
        CHECK((run.at(names[m]).workload.bytes < 1024) == (kind == 0));
    }
}

TEST_CASE("02.01's per-element ratio is (t(1)/1) / (t(n)/n)", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derive(run);
    const auto& s = run.at("per_element.small");
    const auto& g = run.at("per_element.large");
    double n = g.workload.params.at(0).value;
    CHECK_THAT(d.find("per_element_ratio")->number, WithinRel((s.time.median / 1) / (g.time.median / n), 1e-12));
    CHECK(d.find("chain.measured_regime")->text == "latency_bound");
}

TEST_CASE("02.05 derives the ridge and the attainable FLOP/s from the recorded ceilings", "[lessons]") {
    auto l = lesson("02_05");
    RawRun run = fixture_run("02.05-quick-reveal.json");
    Derivation d = l.lesson->derive(run);
    check_declared_matches_produced(l.info, d, run);
    double peak = run.ceilings.peak_flops("fp32.simt"), bw = run.ceilings.peak_bandwidth();
    CHECK_THAT(d.find("ridge_point")->number, WithinRel(peak / bw, 1e-12));
    double ai = d.find("question_ai")->number;
    CHECK(ai >= 0.3);
    CHECK(ai <= 32);
    CHECK_THAT(d.find("attainable_flops_per_s")->number, WithinRel(std::min(peak, ai * bw), 1e-12));
    CHECK(d.find("triad.predicted_regime")->text == "memory_bound");
    CHECK(d.find("sgemm.predicted_regime")->text == "compute_bound");
    CHECK(d.find("fma_few.predicted_regime")->text == "memory_bound");
}

TEST_CASE("re-deriving a revealed record reproduces the values it carries", "[lessons]") {
    auto l = lesson("02_05");
    auto rec = record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    Derivation d = l.lesson->derive(record::raw_run_from_record(rec));
    int compared = 0;
    for (const auto& m : d.metrics) {
        INFO(m.name);
        REQUIRE(rec["metrics"].contains(m.name));
        const auto& stored = rec["metrics"][m.name]["value"];
        if (m.kind == MetricKind::category) CHECK(stored.get<std::string>() == m.text);
        else if (stored.is_number()) CHECK(stored.get<double>() == m.number);
        ++compared;
    }
    CHECK(compared > 20);
}
