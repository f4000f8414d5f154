// `lab check`'s verdicts on a run (lesson_host.hpp, check_expectations): the row that tells a
// lesson's author a workload outran the ceiling kernels measured beside it, which the run itself
// forgives (its roof is raised to the workload's rate) and no relative expectation can catch; and
// each kind of declared expectation against synthetic derived values.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "lab/lesson.hpp"
#include "lesson_host.hpp"

using namespace lab;

namespace {

Measurement stream(const std::string& name, double bytes, double seconds, double load = 0) {
    Measurement m;
    m.workload.name = name;
    m.workload.bytes = bytes;
    m.workload.level = "dram";
    m.time.median = seconds;
    m.time.samples = 10;
    m.time.noise_met = true;
    m.load = load;
    return m;
}

// A run whose workload "scale" moved `workload_gbs` while the read kernel, re-measured twice
// beside it (under `load` CPUs of other work), reached 10 GB/s; the run raised the roof to the
// workload's rate, as InRunCeilings does.
RawRun raised_run(double workload_gbs, double load = 0) {
    RawRun raw;
    raw.device_kind = DeviceKind::cpu;
    Ceiling read;
    read.value = 10e9;
    read.unit = "B/s";
    raw.ceilings_at_start.bandwidth_bytes_per_s["read"] = read;
    set_best_bandwidth(raw.ceilings_at_start);
    raw.measurements = {stream("scale", workload_gbs * 1e9 * 0.01, 0.01)};
    for (int i = 0; i < 2; ++i)
        raw.ceiling_measurements.push_back({"bandwidth.read", "remeasure", {"scale"}, stream("read", 10e9 * 0.01, 0.01, load)});
    raw.ceiling_measurements.push_back({"bandwidth.best", "evidence", {"scale"}, {}});
    raw.ceilings = effective_ceilings(raw.ceilings_at_start, raw.ceiling_measurements, raw.measurements);
    return raw;
}

ExpectationReport check(const RawRun& raw) {
    LessonInfo info;
    Derivation d;
    return check_expectations(info, raw, d, [](double v, const std::string&) { return std::to_string(v); });
}

}  // namespace

TEST_CASE("a workload far faster than the ceiling kernels beside it is a miss for lab check", "[check]") {
    const RawRun raw = raised_run(45);  // 4.5x: a byte count ten times too large, on a VM's roof
    REQUIRE(raw.ceilings.peak_bandwidth() == Approx(45e9));  // the run forgave it
    const ExpectationReport r = check(raw);
    REQUIRE(r.rows.size() == 1);
    CHECK(r.missed == 1);
    CHECK(r.rows[0].result == "MISSED");
    CHECK(r.rows[0].metric == "scale (rate)");
    CHECK(r.rows[0].measured == "4.50x bandwidth.best");
    CHECK_THAT(r.rows[0].why, Catch::Contains("count more bytes than it moves"));
}

TEST_CASE("a workload a little above the kernels, or above kernels re-measured under load, only differs", "[check]") {
    for (const RawRun& raw : {raised_run(14), raised_run(45, /*load=*/1.0)}) {
        const ExpectationReport r = check(raw);
        REQUIRE(r.rows.size() == 1);
        CHECK(r.missed == 0);
        CHECK(r.differs == 1);
        CHECK(r.rows[0].result == "differs");
        CHECK(r.rows[0].performance);
    }
    CHECK_THAT(check(raised_run(45, 1.0)).rows[0].why, Catch::Contains("under load"));
}

TEST_CASE("a run whose workloads stayed under their roofs gets no rate rows", "[check]") {
    RawRun raw = raised_run(45);
    raw.ceiling_measurements.pop_back();  // no evidence: nothing was raised to a workload's rate
    CHECK(check(raw).rows.empty());
}

// ---------------------------------------------------------------------------------------------
// The lesson's declared expectations, each kind against synthetic derived values.

namespace {

MetricValue number(const std::string& name, double v, const std::string& unit = "B/s") {
    return {name, MetricKind::number, unit, v, {}};
}
MetricValue category(const std::string& name, const std::string& text) { return {name, MetricKind::category, "", 0, text}; }

Expectation equals(const std::string& metric, const std::string& value, bool performance = false) {
    Expectation e;
    e.metric = metric;
    e.equals = value;
    e.performance = performance;
    e.why = "why " + metric;
    return e;
}
Expectation range(const std::string& metric, double min, double max, const std::string& relative_to = "", bool performance = false) {
    Expectation e;
    e.metric = metric;
    e.min = min;
    e.max = max;
    e.relative_to = relative_to;
    e.performance = performance;
    return e;
}

// A CPU run with a 10 GB/s bandwidth.best and no in-run ceiling measurements (so no rate rows).
RawRun plain_cpu_run() {
    RawRun raw;
    raw.device_kind = DeviceKind::cpu;
    Ceiling best;
    best.value = 10e9;
    best.unit = "B/s";
    raw.ceilings.bandwidth_bytes_per_s["best"] = best;
    raw.ceilings_at_start = raw.ceilings;
    return raw;
}

// The one row `e` gives against `metrics`, with the report's counts.
struct One {
    ExpectationReport report;
    const ExpectationRow& row() const { return report.rows.at(0); }
};
One check_one(const Expectation& e, const std::vector<MetricValue>& metrics) {
    LessonInfo info;
    info.expectations = {e};
    Derivation d;
    d.metrics = metrics;
    One o{check_expectations(info, plain_cpu_run(), d, [](double v, const std::string& unit) { return fmt::format("{:g} {}", v, unit); })};
    REQUIRE(o.report.rows.size() == 1);
    CHECK(o.report.met + o.report.missed + o.report.differs == 1);
    CHECK(o.report.other_devices == 0);
    return o;
}

}  // namespace

TEST_CASE("an equals expectation is met by its value and MISSED by another, or by a metric not produced", "[check]") {
    const One met = check_one(equals("triad.measured_regime", "memory_bound"), {category("triad.measured_regime", "memory_bound")});
    CHECK(met.row().result == "met");
    CHECK(met.report.met == 1);
    CHECK(met.row().metric == "triad.measured_regime");
    CHECK(met.row().expected == "memory_bound");
    CHECK(met.row().measured == "memory_bound");
    CHECK(met.row().why == "why triad.measured_regime");
    CHECK_FALSE(met.row().performance);

    const One missed = check_one(equals("triad.measured_regime", "memory_bound"), {category("triad.measured_regime", "compute_bound")});
    CHECK(missed.row().result == "MISSED");
    CHECK(missed.report.missed == 1);
    CHECK(missed.row().measured == "compute_bound");

    const One absent = check_one(equals("triad.measured_regime", "memory_bound"), {category("other", "memory_bound")});
    CHECK(absent.row().result == "MISSED");
    CHECK(absent.row().measured == "(not produced)");
}

TEST_CASE("an undecided verdict meets an equals expectation only when the expected regime is one of its candidates", "[check]") {
    CHECK(check_one(equals("k.measured_regime", "memory_bound"), {category("k.measured_regime", "undecided: compute_bound or memory_bound")})
              .row().result == "met");
    CHECK(check_one(equals("k.measured_regime", "compute_bound"), {category("k.measured_regime", "undecided: compute_bound or memory_bound")})
              .row().result == "met");
    const One other = check_one(equals("k.measured_regime", "memory_bound"), {category("k.measured_regime", "undecided: compute_bound or latency_bound")});
    CHECK(other.row().result == "MISSED");
    CHECK(other.row().measured == "undecided: compute_bound or latency_bound");
    // A text that is no regime is no candidate, even when it names the expected one.
    CHECK(check_one(equals("k.measured_regime", "memory_bound"), {category("k.measured_regime", "memory_bound?")}).row().result == "MISSED");
    // A lesson's own category the run left open (02.11's verdicts) meets an expectation of either
    // of its words, and no other.
    CHECK(check_one(equals("v", "overhead_bound"), {category("v", "overhead_bound or throughput_bound")}).row().result == "met");
    CHECK(check_one(equals("v", "throughput_bound"), {category("v", "overhead_bound or throughput_bound")}).row().result == "met");
    CHECK(check_one(equals("v", "overhead"), {category("v", "overhead_bound or throughput_bound")}).row().result == "MISSED");
}

TEST_CASE("a min/max expectation is met inside its range, bounds included, and MISSED outside it", "[check]") {
    const Expectation e = range("triad.bytes_per_s", 1e9, 5e9);
    for (double v : {1e9, 3e9, 5e9}) {
        CAPTURE(v);
        const One o = check_one(e, {number("triad.bytes_per_s", v)});
        CHECK(o.row().result == "met");
        CHECK(o.row().expected == "1e+09 B/s .. 5e+09 B/s");
    }
    for (double v : {0.99e9, 5.01e9}) {
        CAPTURE(v);
        const One o = check_one(e, {number("triad.bytes_per_s", v)});
        CHECK(o.row().result == "MISSED");
        CHECK(o.report.missed == 1);
        CHECK(o.row().measured == fmt::format("{:g} B/s", v));
    }
    // One-sided ranges say which side.
    CHECK(check_one(range("t", 2, 1e308), {number("t", 1, "s")}).row().expected == ">= 2 s");
    CHECK(check_one(range("t", 2, 1e308), {number("t", 1, "s")}).row().result == "MISSED");
    CHECK(check_one(range("t", -1e308, 2), {number("t", 1, "s")}).row().expected == "<= 2 s");
    CHECK(check_one(range("t", -1e308, 2), {number("t", 1, "s")}).row().result == "met");
    CHECK(check_one(range("t", -1e308, 2), {}).row().result == "MISSED");
    CHECK(check_one(range("t", -1e308, 2), {}).row().measured == "(not produced)");
}

TEST_CASE("a range relative_to a ceiling is in fractions of the run's ceiling, shown as percentages", "[check]") {
    // bandwidth.best is 10 GB/s: 6 GB/s is 60% of it.
    const One met = check_one(range("triad.bytes_per_s", 0.5, 1e308, "bandwidth.best"), {number("triad.bytes_per_s", 6e9)});
    CHECK(met.row().result == "met");
    CHECK(met.row().expected == ">= 50% of bandwidth.best");
    CHECK(met.row().measured == "60% of bandwidth.best");
    const One low = check_one(range("triad.bytes_per_s", 0.7, 0.9, "bandwidth.best"), {number("triad.bytes_per_s", 6e9)});
    CHECK(low.row().result == "MISSED");
    CHECK(low.row().expected == "70% of bandwidth.best .. 90% of bandwidth.best");
    // The bounds are fractions of 10 GB/s (0.6 is in 0.5 .. 0.9); read as B/s, 6e9 would be above 0.9.
    CHECK(check_one(range("triad.bytes_per_s", 0.5, 0.9, "bandwidth.best"), {number("triad.bytes_per_s", 6e9)}).row().result == "met");
}

TEST_CASE("a performance expectation not met only differs; a structural one is MISSED", "[check]") {
    const One perf = check_one(range("triad.bytes_per_s", 0.7, 1e308, "bandwidth.best", /*performance=*/true), {number("triad.bytes_per_s", 6e9)});
    CHECK(perf.row().result == "differs");
    CHECK(perf.report.differs == 1);
    CHECK(perf.report.missed == 0);
    CHECK(perf.row().performance);
    const One perf_met = check_one(range("triad.bytes_per_s", 0.5, 1e308, "bandwidth.best", true), {number("triad.bytes_per_s", 6e9)});
    CHECK(perf_met.row().result == "met");
    CHECK(perf_met.report.met == 1);
    const One perf_equals = check_one(equals("k.measured_regime", "memory_bound", true), {category("k.measured_regime", "compute_bound")});
    CHECK(perf_equals.row().result == "differs");
    const One structural = check_one(range("triad.bytes_per_s", 0.7, 1e308, "bandwidth.best"), {number("triad.bytes_per_s", 6e9)});
    CHECK(structural.row().result == "MISSED");
    CHECK(structural.report.missed == 1);
}

TEST_CASE("expectations for another device, or relative to a ceiling the device lacks, are left out, not failed", "[check]") {
    LessonInfo info;
    Expectation gpu_only = equals("k.measured_regime", "memory_bound");
    gpu_only.devices = {"cuda"};
    const Expectation no_such_ceiling = range("k.flops_per_s", 0.5, 1e308, "flops.fp64.tensor");
    Expectation cpu = equals("k.measured_regime", "memory_bound");
    cpu.devices = {"cpu"};
    info.expectations = {gpu_only, no_such_ceiling, cpu};
    Derivation d;
    d.metrics = {category("k.measured_regime", "compute_bound"), number("k.flops_per_s", 1, "FLOP/s")};
    const ExpectationReport r = check_expectations(info, plain_cpu_run(), d, [](double v, const std::string&) { return std::to_string(v); });
    CHECK(r.other_devices == 2);
    REQUIRE(r.rows.size() == 1);   // only the CPU's own expectation is checked
    CHECK(r.rows[0].result == "MISSED");
    CHECK(r.missed == 1);
    CHECK(r.met == 0);
}
