// Running a lesson in a child process (DESIGN.md, "Processes"): the parent `lab` never
// initialises CUDA; it starts `lab` itself (posix_spawn) with a hidden subcommand, reads what the
// child streams back on a pipe (fd 3, one JSON object per line), and enforces a time budget. A
// child that crashes, hangs or is killed is reported, never waited on forever.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lab {

inline constexpr int kChildResultFd = 3;

struct ChildOutcome {
    bool exited = false;       // exited normally (else killed by a signal)
    int exit_code = 0;
    int signal = 0;
    bool timed_out = false;
    bool memory_exceeded = false;          // its resident memory passed the limit: stopped
    std::uint64_t peak_rss_bytes = 0;
    std::vector<nlohmann::json> messages;  // every line the child sent
    double wall_s = 0;
    std::string describe() const;          // "crashed with SIGSEGV", "exceeded its 30 s budget", ...
};

// `on_message` may return a new deadline in seconds from now (> 0) to extend or shorten the budget.
// A watchdog reads the child's resident memory every 100 ms and stops it past
// `memory_limit_bytes` (0: no limit): an address-space limit would break CUDA, which reserves
// far more address space than it uses.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s,
                       const std::function<double(const nlohmann::json&)>& on_message,
                       std::uint64_t memory_limit_bytes = 0);

// The memory limit for lesson children: $LAB_MEMORY_LIMIT (parse_memory_size: "8G", "8GiB",
// "8GB", "512M", bytes), else default_child_memory_limit of this machine's physical memory and
// its cgroup's memory limit (lab/cgroup_limits.hpp). Throws UsageError for an unreadable value.
std::uint64_t child_memory_limit();
// 80% of the smaller of physical memory and a cgroup memory limit (a container's --memory), so a
// child in a 4 GiB container is stopped by lab, not OOM-killed. 0 where neither is known.
std::uint64_t default_child_memory_limit(std::uint64_t physical_bytes, std::optional<std::uint64_t> cgroup_limit_bytes);

// Child side, first thing: the child is killed when the `lab` that started it dies (a `kill` of
// that process alone, a closed terminal), rather than measuring on unseen beside the student's
// next run or holding the GPU. A no-op in a process `run_child` did not start.
void die_with_parent();

// Child side: sends one message to the parent (no-op when fd 3 is not a pipe to a parent).
void send_to_parent(const nlohmann::json& message);

}  // namespace lab
