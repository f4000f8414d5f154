// The CPU device under a container's limits (plugins/cpu/container_limits.hpp): the team's size
// under a CPU quota, with --threads and without, and the memory the facts report under a memory
// limit, each with the facts note that explains it.
#include <catch2/catch.hpp>

#include <numeric>

#include "container_limits.hpp"

using namespace lab;
using namespace lab::cpu;
using Catch::Contains;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kPeriodUs = 100000;

std::vector<int> cpus(int n) {
    std::vector<int> ids(static_cast<std::size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    return ids;
}

cgroup::CpuQuota quota(double cpus) { return {static_cast<std::uint64_t>(cpus * kPeriodUs), kPeriodUs}; }

}  // namespace

TEST_CASE("without a CPU quota the team takes every allowed CPU, or the first --threads", "[cpu_limits]") {
    auto plan = plan_team(cpus(16), 0, std::nullopt);
    CHECK(plan.cpus == cpus(16));
    CHECK(plan.facts.empty());
    CHECK(plan_team(cpus(16), 4, std::nullopt).cpus == cpus(4));
    CHECK_THROWS_WITH(plan_team(cpus(2), 3, std::nullopt), Contains("--threads 3 exceeds the 2 CPUs") && Contains("fix:"));
    CHECK_THROWS_WITH(plan_team(cpus(2), -1, std::nullopt), Contains("--threads must be positive"));
}

TEST_CASE("by default the team is as large as the CPU quota keeps busy, and the facts say why", "[cpu_limits]") {
    auto plan = plan_team(cpus(16), 0, quota(2), "/sys/fs/cgroup/cpu.max");
    CHECK(plan.cpus == cpus(2));
    REQUIRE(plan.facts.count(kCpuQuotaFact));
    CHECK_THAT(plan.facts[kCpuQuotaFact], Contains("2 CPUs of time") && Contains("2 threads of the 16") &&
                                              Contains("/sys/fs/cgroup/cpu.max"));
    CHECK(plan.facts.count(kThreadsOverQuotaFact) == 0);

    CHECK(plan_team(cpus(16), 0, quota(1.5)).cpus == cpus(1));  // 2 would both be stopped every period
    CHECK(plan_team(cpus(16), 2, quota(1.5)).facts.count(kThreadsOverQuotaFact) == 1);
    const auto quarter = plan_team(cpus(16), 0, quota(0.25));
    CHECK(quarter.cpus == cpus(1));
    // Even one thread is stopped every period under a quarter of a CPU: the facts warn, without
    // naming a --threads nobody gave.
    REQUIRE(quarter.facts.count(kThreadsOverQuotaFact));
    CHECK_THAT(quarter.facts.at(kThreadsOverQuotaFact), Contains("one thread is more than") && !Contains("--threads"));
}

TEST_CASE("a quota above the allowed CPUs leaves the team whole", "[cpu_limits]") {
    auto plan = plan_team(cpus(4), 0, quota(8));
    CHECK(plan.cpus == cpus(4));
    CHECK_THAT(plan.facts[kCpuQuotaFact], Contains("8 CPUs of time"));
    CHECK(plan.facts.count(kThreadsOverQuotaFact) == 0);
}

TEST_CASE("an explicit --threads above the quota is honoured, with a warning in the facts", "[cpu_limits]") {
    auto plan = plan_team(cpus(16), 8, quota(2));
    CHECK(plan.cpus == cpus(8));
    REQUIRE(plan.facts.count(kThreadsOverQuotaFact));
    CHECK_THAT(plan.facts[kThreadsOverQuotaFact], Contains("--threads 8") && Contains("stopped for part of every period"));
    CHECK(plan_team(cpus(16), 2, quota(2)).facts.count(kThreadsOverQuotaFact) == 0);
}

TEST_CASE("a memory limit below the machine's memory is said in the facts; memory_bytes stays the machine's", "[cpu_limits]") {
    // memory_bytes is part of the identity the ceilings are cached under: a container's or a
    // Slurm job's memory limit must not make every run calibrate again.
    DeviceFacts f;
    f.memory_bytes = 64 * GiB;
    note_memory_limit(f, std::nullopt);
    note_memory_limit(f, 128 * GiB);
    CHECK(f.extra.count(kMemoryLimitFact) == 0);

    note_memory_limit(f, 4 * GiB, "/sys/fs/cgroup/memory.max");
    CHECK(f.memory_bytes == 64 * GiB);
    CHECK_THAT(f.extra[kMemoryLimitFact], Contains("4.0 GiB") && Contains("64.0 GiB") && Contains("memory.max"));
}
