// Running a lesson in a child process (DESIGN.md, "Processes"): the parent `lab` never
// initialises CUDA; it starts `lab` itself (posix_spawn) with a hidden subcommand, reads what the
// child streams back on a pipe (fd 3, one JSON object per line), and enforces a time budget. A
// child that crashes, hangs or is killed is reported, never waited on forever.
#pragma once

#include <functional>
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
    std::vector<nlohmann::json> messages;  // every line the child sent
    double wall_s = 0;
    std::string describe() const;          // "crashed with SIGSEGV", "exceeded its 30 s budget", ...
};

// `on_message` may return a new deadline in seconds from now (> 0) to extend or shorten the budget.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s,
                       const std::function<double(const nlohmann::json&)>& on_message);

// Child side: sends one message to the parent (no-op when fd 3 is not a pipe to a parent).
void send_to_parent(const nlohmann::json& message);

}  // namespace lab
