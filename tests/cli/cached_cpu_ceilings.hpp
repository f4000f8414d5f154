// This machine's CPU ceilings stored in an empty cache, as a calibration would leave them: for the
// calculator tests (`lab model`, `lab checkpoint`), which read the cache and must never calibrate.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>

#include "ceilings_cache.hpp"
#include "lab_json.hpp"

namespace lab_test {

struct StoredCeilings {
    lab::DeviceFacts facts;
    lab::Ceilings ceilings;
};

// fp32 100 GFLOP/s, 20 GB/s, 2 threads, 16 GB, under this CPU's model name; returned as stored.
inline StoredCeilings store_cpu_ceilings(const EmptyCache& cache) {
    const std::string cpu = cpu_model_name();
    REQUIRE_FALSE(cpu.empty());
    std::filesystem::create_directories(cache.dir.path() / "lab" / "ceilings");
    lab::DeviceFacts facts;
    facts.name = cpu;
    facts.memory_bytes = 16'000'000'000ull;
    lab::Ceilings ceilings;
    ceilings.flops_per_s["fp32.simt"].value = 1e11;
    ceilings.bandwidth_bytes_per_s["best"].value = 2e10;
    ceilings.threads = 2;
    lab::store_ceilings(cache.dir.path() / "lab" / "ceilings" / "cpu-test-000000000000-t2.json", facts, ceilings);
    return {facts, ceilings};
}

}  // namespace lab_test
