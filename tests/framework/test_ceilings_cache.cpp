// The ceilings cache keeps "bandwidth.best" equal to the best bandwidth kernel. A run may raise
// its own best to a workload's rate (an in-place update can beat read, copy and triad), but a
// cache that kept that raised value would start every later run with a best above all of its
// kernels, a record the grader refuses as implausible: an honest student's run, ungraded.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "ceilings_cache.hpp"
#include "test_support.hpp"

namespace {

lab::Ceilings raised_by_evidence() {
    lab::Ceilings c;
    c.threads = 2;
    c.flops_per_s["fp32.simt"].value = 2e11;
    c.bandwidth_bytes_per_s["read"].value = 5.2e10;
    c.bandwidth_bytes_per_s["copy"].value = 4.9e10;
    c.bandwidth_bytes_per_s["triad"].value = 4.2e10;
    lab::Ceiling& best = c.bandwidth_bytes_per_s["best"];
    best.value = 9.1e10;
    best.source = "raised to the rate of workload 'fma_few'";
    return c;
}

}  // namespace

TEST_CASE("the cache stores and loads the kernels' best bandwidth, never a run's raised one", "[ceilings_cache]") {
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test CPU";
    const auto file = dir / "cpu-test.json";
    lab::store_ceilings(file, facts, raised_by_evidence());
    std::string problem;
    auto loaded = lab::load_cached_ceilings(file, facts, &problem);
    INFO(problem);
    REQUIRE(loaded);
    CHECK(loaded->peak_bandwidth() == 5.2e10);
    CHECK(loaded->bandwidth_bytes_per_s.at("best").source.empty());
    CHECK(loaded->bandwidth_bytes_per_s.at("read").value == 5.2e10);

    // A cache written before the rule (the raised best on disk) is healed when read.
    auto j = nlohmann::json::parse(lab_test::read_file(file));
    j["ceilings"]["bandwidth_bytes_per_s"]["best"]["value"] = 9.1e10;
    lab_test::write_file(file, j.dump());
    loaded = lab::load_cached_ceilings(file, facts, &problem);
    REQUIRE(loaded);
    CHECK(loaded->peak_bandwidth() == 5.2e10);
}

TEST_CASE("the cache keeps the ceilings a calibration skipped, with their reasons", "[ceilings_cache]") {
    // `lab device` after `lab calibrate` reads the cache: a skipped pipe must still say why.
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test GPU";
    lab::Ceilings c = raised_by_evidence();
    c.skipped["flops.fp8.tensor"] = "cuBLASLt has no GEMM algorithm for fp8 8192x8192x8192 on this device";
    const auto file = dir / "cuda-test.json";
    lab::store_ceilings(file, facts, c);
    auto loaded = lab::load_cached_ceilings(file, facts);
    REQUIRE(loaded);
    CHECK(loaded->skipped == c.skipped);
}
