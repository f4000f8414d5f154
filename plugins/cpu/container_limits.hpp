// How the CPU device fits the limits of the container it runs in (lab/cgroup_limits.hpp): the
// team's size under a CPU quota, and the memory a lesson may plan for under a memory limit. Pure
// functions of what was read, header-only so the tests call them with any limits they like.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/cgroup_limits.hpp"
#include "lab/device.hpp"

namespace lab::cpu {

// Facts keys: why the team has the size it has, and a warning the run passes on to the student.
inline constexpr const char* kCpuQuotaFact = "cpu_quota";
inline constexpr const char* kThreadsOverQuotaFact = "threads_over_quota";
inline constexpr const char* kMemoryLimitFact = "memory_limit";

struct TeamPlan {
    std::vector<int> cpus;                     // the CPU ids the team runs on
    std::map<std::string, std::string> facts;  // facts.extra entries that explain the choice
};

namespace detail {
inline std::string cpus_text(double cpus) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", cpus);
    return buf;
}
inline std::string gib_text(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30));
    return buf;
}
}  // namespace detail

// `requested` is --threads: 0 takes every allowed CPU, or as many as a CPU quota keeps busy (more
// threads than the quota's CPUs are throttled every period, and every rate reads low and noisy).
// An explicit count above the quota is the user's to make; the facts warn that it is throttled.
inline TeamPlan plan_team(std::vector<int> allowed, int requested, const std::optional<cgroup::CpuQuota>& quota,
                          const std::string& quota_file = "") {
    if (requested < 0) throw std::invalid_argument("--threads must be positive");
    const std::size_t available = allowed.size();
    if (static_cast<std::size_t>(requested) > available)
        throw std::invalid_argument("--threads " + std::to_string(requested) + " exceeds the " + std::to_string(available) +
                                    " CPUs this process may use\n  fix: give at most " + std::to_string(available) +
                                    ", or 0 (the default) for all of them");
    TeamPlan plan{std::move(allowed), {}};
    if (requested > 0) plan.cpus.resize(static_cast<std::size_t>(requested));
    if (!quota) return plan;
    const std::size_t quota_cpus = static_cast<std::size_t>(quota->whole_cpus());
    const std::string quota_text = "the cgroup CPU quota is " + detail::cpus_text(quota->cpus()) + " CPUs of time (" +
                                   std::to_string(quota->quota_us) + " us every " + std::to_string(quota->period_us) + " us" +
                                   (quota_file.empty() ? "" : ", " + quota_file) + ")";
    if (requested == 0 && quota_cpus < available) {
        plan.cpus.resize(quota_cpus);
        plan.facts[kCpuQuotaFact] = quota_text + ": " + std::to_string(quota_cpus) + " threads of the " +
                                    std::to_string(available) + " CPUs this process may run on (--threads N to choose)";
    } else {
        plan.facts[kCpuQuotaFact] = quota_text;
    }
    // Also one thread under a quota of less than one CPU: it is stopped every period.
    if (static_cast<double>(plan.cpus.size()) > quota->cpus())
        plan.facts[kThreadsOverQuotaFact] =
            (requested > 0 ? "--threads " + std::to_string(plan.cpus.size()) + " is more than "
                           : std::string("one thread is more than ")) +
            quota_text + ": " + (plan.cpus.size() > 1 ? "the threads are" : "it is") +
            " stopped for part of every period, so rates read low and noisy";
    return plan;
}

// A cgroup memory limit below the machine's memory is said in the facts (`lab device`, the run
// page), and lessons' children are stopped at 80% of it (child_memory_limit). memory_bytes stays
// the machine's: it is part of the device identity the ceilings are cached under, and a memory
// limit (a container's, a Slurm job's --mem) changes no ceiling.
inline void note_memory_limit(DeviceFacts& facts, const std::optional<std::uint64_t>& limit, const std::string& limit_file = "") {
    if (!limit || (facts.memory_bytes > 0 && *limit >= facts.memory_bytes)) return;
    facts.extra[kMemoryLimitFact] = "the cgroup memory limit, " + detail::gib_text(*limit) +
                                    (limit_file.empty() ? "" : " (" + limit_file + ")") + ", is below the machine's " +
                                    (facts.memory_bytes > 0 ? detail::gib_text(facts.memory_bytes) : std::string("memory")) +
                                    ": a lesson is stopped at 80% of it";
}

}  // namespace lab::cpu
