// The lessons' derivations on recorded runs (tests/fixtures/runs/cpu): every metric produced is
// declared and every declared metric is produced; values follow from the raw measurements by the
// formulas the lessons state; per-student variants follow the seed.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
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
    Derivation d = l.lesson->derivation(run);
    check_declared_matches_produced(l.info, d, run);
}

TEST_CASE("02.01's mysteries are the seed's permutation of the three regimes", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derivation(run);
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
    Derivation d = l.lesson->derivation(run);
    const auto& s = run.at("per_element.small");
    const auto& g = run.at("per_element.large");
    double n = g.workload.params.at(0).value;
    CHECK_THAT(d.find("per_element_ratio")->number, WithinRel((s.time.median / 1) / (g.time.median / n), 1e-12));
    CHECK(d.find("chain.measured_regime")->text == "latency_bound");
}

TEST_CASE("02.05 derives the ridge and the attainable FLOP/s from the recorded ceilings", "[lessons]") {
    auto l = lesson("02_05");
    RawRun run = fixture_run("02.05-quick-reveal.json");
    Derivation d = l.lesson->derivation(run);
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
    Derivation d = l.lesson->derivation(record::raw_run_from_record(rec));
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

// What a student is asked and what `lab run` withholds and counts as '?' are one set: a lesson's
// graded metric declarations (for each device kind) are exactly the metrics its grading spec's
// questions ask on that device. (Withheld `check.*` helpers are not graded: no question asks them.)
TEST_CASE("every lesson with a grading spec grades exactly the metrics its questions ask", "[lessons]") {
    int specs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(lab_test::source_root() / "configs/grading")) {
        if (entry.path().extension() != ".yaml") continue;
        const YAML::Node spec = YAML::LoadFile(entry.path().string());
        const std::string id = spec["lesson"].as<std::string>();
        INFO(entry.path().string() << " (lesson " << id << ")");
        const std::string dir = id.substr(0, 2) + "_" + id.substr(3);  // "02.05" -> "02_05"
        auto l = lesson(dir);
        ++specs;
        for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
            INFO("device " << to_string(kind));
            std::set<std::string> asked, graded;
            for (const auto& q : spec["questions"]) {
                if (!q["expected"] || !q["expected"]["metric"]) continue;
                bool applies = !q["applies_to"];
                if (q["applies_to"] && q["applies_to"].IsScalar()) applies = q["applies_to"].as<std::string>() == to_string(kind);
                else if (q["applies_to"])
                    for (const auto& k : q["applies_to"]) applies = applies || k.as<std::string>() == to_string(kind);
                const std::string metric = q["expected"]["metric"].as<std::string>();
                const auto decl = std::find_if(l.info.metrics.begin(), l.info.metrics.end(),
                                               [&](const MetricDecl& m) { return m.name == metric; });
                REQUIRE(decl != l.info.metrics.end());
                if (applies && runs_on(*decl, kind)) asked.insert(metric);
            }
            for (const auto& m : l.info.metrics)
                if (m.graded && runs_on(m, kind)) graded.insert(m.name);
            CHECK(graded == asked);
            // The run withholds the graded metrics, and the check.* helpers besides; nothing else.
            std::set<std::string> withheld = record::withheld_metrics(l.info, false, kind), expected = graded;
            for (const auto& m : l.info.metrics)
                if (record::is_check_helper(m.name) && runs_on(m, kind)) expected.insert(m.name);
            CHECK(withheld == expected);
            CHECK(record::withheld_metrics(l.info, true, kind).empty());
        }
        // A check.* helper is never graded: it is withheld without being asked.
        for (const auto& m : l.info.metrics) {
            INFO(m.name);
            if (record::is_check_helper(m.name)) CHECK_FALSE(m.graded);
        }
    }
    CHECK(specs >= 2);
}

TEST_CASE("fractions of a ceiling are shown in percent, other ratios as plain numbers", "[lessons]") {
    auto value = [](const std::string& name, double v, const std::string& unit) {
        return record::format_value(MetricValue{name, MetricKind::number, unit, v, {}});
    };
    CHECK(value("triad.roof_fraction", 0.292, "ratio") == "29.2%");
    CHECK(value("triad.roof_fraction", 1.0, "ratio") == "100%");
    CHECK(value("chain.roof_fraction", 0.00808, "ratio") == "0.808%");
    CHECK(value("check.memory_roof_fraction", 0.85, "ratio") == "85%");
    CHECK(value("mystery_c.doubling_ratio", 1.05, "ratio") == "1.05");
    CHECK(value("per_element_ratio", 1234.4, "ratio") == "1234");
    CHECK(value("ridge_point", 11.0, "FLOP/B") == "11 FLOP/B");
    // In teaching lines too, and in every lesson's table of metrics.
    Derivation d;
    d.number("triad.roof_fraction", 0.292, "ratio");
    CHECK(record::render_teaching("Triad achieves {triad.roof_fraction} of its roof.", d, {}) ==
          "Triad achieves 29.2% of its roof.");
    CHECK(record::render_teaching("Triad achieves {triad.roof_fraction} of its roof.", d, {"triad.roof_fraction"}) ==
          "Triad achieves ? of its roof.");
    for (const char* dir : {"02_01", "02_05"})
        for (const auto& m : lesson(dir).info.metrics) {
            INFO(m.name);
            if (m.name.find("fraction") != std::string::npos) CHECK(record::shown_as_percent(m.name, m.unit));
            if (m.name.find("_ratio") != std::string::npos) CHECK_FALSE(record::shown_as_percent(m.name, m.unit));
        }
}
