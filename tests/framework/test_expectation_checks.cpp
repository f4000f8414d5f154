// `lab check`'s verdicts on a run (lesson_host.hpp, check_expectations): here, the row that tells a
// lesson's author a workload outran the ceiling kernels measured beside it, which the run itself
// forgives (its roof is raised to the workload's rate) and no relative expectation can catch.
#include <catch2/catch.hpp>

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
