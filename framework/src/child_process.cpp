// Child processes (see child_process.hpp).
#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "errors.hpp"
#include "lab/cgroup_limits.hpp"
#include "quantity_text.hpp"

extern char** environ;

namespace lab {

std::string ChildOutcome::describe() const {
    if (memory_exceeded) return "exceeded its memory limit and was stopped";
    if (timed_out) return "exceeded its time limit and was stopped";
    if (!exited) {
        const char* name = sigabbrev_np(signal);
        return std::string("crashed (signal SIG") + (name ? name : std::to_string(signal).c_str()) + ")";
    }
    return "exited with status " + std::to_string(exit_code);
}

namespace {

std::uint64_t resident_bytes(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/statm");
    std::uint64_t size = 0, resident = 0;
    f >> size >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::uint64_t default_child_memory_limit(std::uint64_t physical_bytes, std::optional<std::uint64_t> cgroup_limit_bytes) {
    // 80%: the rest is the parent's, the kernel's and the page cache's, so the watchdog stops the
    // child with its message before the kernel's OOM killer ends it as a crash.
    constexpr double kChildShare = 0.8;
    std::uint64_t memory = physical_bytes;
    if (cgroup_limit_bytes && (memory == 0 || *cgroup_limit_bytes < memory)) memory = *cgroup_limit_bytes;
    return static_cast<std::uint64_t>(kChildShare * static_cast<double>(memory));
}

std::uint64_t child_memory_limit() {
    if (const char* env = std::getenv("LAB_MEMORY_LIMIT"); env && *env)
        return parse_memory_size(env, std::string("LAB_MEMORY_LIMIT='") + env + "'");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const std::uint64_t physical = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
    return default_child_memory_limit(physical, cgroup::read_limits().memory_bytes);
}

constexpr const char* kParentPidVariable = "LAB_PARENT_PID";

ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s,
                       const std::function<double(const nlohmann::json&)>& on_message, std::uint64_t memory_limit) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw DeviceError(std::string("pipe failed: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The child's fd 3 is the pipe's write end; dup2 clears close-on-exec on the copy.
    posix_spawn_file_actions_adddup2(&actions, fds[1], kChildResultFd);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // Who the child's parent is, for die_with_parent: the parent may die before the child asks.
    setenv(kParentPidVariable, std::to_string(getpid()).c_str(), 1);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    unsetenv(kParentPidVariable);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        throw DeviceError("cannot start " + argv[0] + ": " + std::strerror(rc));
    }

    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    auto deadline = start + std::chrono::duration<double>(timeout_s);
    ChildOutcome out;
    std::string buffer;
    char chunk[65536];
    bool open = true;
    while (open) {
        double left = std::chrono::duration<double>(deadline - clock::now()).count();
        if (left <= 0) {
            out.timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        if (memory_limit) {
            std::uint64_t rss = resident_bytes(pid);
            out.peak_rss_bytes = std::max(out.peak_rss_bytes, rss);
            if (rss > memory_limit) {
                out.memory_exceeded = true;
                kill(pid, SIGKILL);
                break;
            }
        }
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, static_cast<int>(std::min(left * 1000, 100.0)) + 1);
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        ssize_t got = ::read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            open = false;
            break;
        }
        buffer.append(chunk, static_cast<std::size_t>(got));
        std::size_t nl;
        while ((nl = buffer.find('\n')) != std::string::npos) {
            std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            auto msg = nlohmann::json::parse(line, nullptr, false);
            if (msg.is_discarded()) continue;
            out.messages.push_back(msg);
            if (on_message) {
                double extend = on_message(msg);
                if (extend > 0) deadline = clock::now() + std::chrono::duration<double>(extend);
            }
        }
    }
    ::close(fds[0]);
    int status = 0;
    if (!out.timed_out && !out.memory_exceeded) {
        // The pipe closed: the child is exiting. Give it the rest of the budget to do so.
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) break;
            if (clock::now() > deadline) {
                out.timed_out = true;
                kill(pid, SIGKILL);
                break;
            }
            usleep(2000);
        }
    }
    if (out.timed_out || out.memory_exceeded) waitpid(pid, &status, 0);
    out.exited = WIFEXITED(status);
    out.exit_code = out.exited ? WEXITSTATUS(status) : 0;
    out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    out.wall_s = std::chrono::duration<double>(clock::now() - start).count();
    return out;
}

void die_with_parent() {
    const char* parent = std::getenv(kParentPidVariable);
    if (!parent) return;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Asked too late: the parent died before prctl, so no signal will come.
    if (std::to_string(getppid()) != parent) _exit(128 + SIGKILL);
}

void send_to_parent(const nlohmann::json& message) {
    static bool has_parent = fcntl(kChildResultFd, F_GETFD) != -1;
    if (!has_parent) return;
    std::string line = message.dump() + "\n";
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        ssize_t w = ::write(kChildResultFd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        p += w;
        left -= static_cast<std::size_t>(w);
    }
}

}  // namespace lab
