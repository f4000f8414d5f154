// Slurm's client commands, driven (see slurm.hpp).
#include "slurm.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "errors.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace lab::cli::slurm {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::istringstream in(s);
    for (std::string p; std::getline(in, p, sep);)
        if (!p.empty()) parts.push_back(p);
    return parts;
}

std::string trimmed(std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r\n"));
    s.erase(s.find_last_not_of(" \t\r\n") + 1);
    return s;
}

// The first line of a command's complaint, for a message.
std::string first_line(const CommandResult& r) {
    std::string text = trimmed(r.err.empty() ? r.out : r.err);
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    return text.empty() ? fmt::format("exit status {}", r.status) : text;
}

bool on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    for (const auto& dir : split(path ? path : "", ':'))
        if (::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
    return false;
}

// A field of scontrol's one-line output ("JobState=COMPLETED Reason=None ExitCode=0:0").
std::string field(const std::string& line, const std::string& key) {
    const std::string k = key + "=";
    for (std::size_t at = line.find(k); at != std::string::npos; at = line.find(k, at + 1))
        if (at == 0 || line[at - 1] == ' ') {
            const std::size_t start = at + k.size();
            return line.substr(start, line.find(' ', start) - start);
        }
    return "";
}

double poll_interval_s() {
    if (const char* v = std::getenv("LAB_SLURM_POLL_S")) {
        char* end = nullptr;
        const double s = std::strtod(v, &end);
        if (end != v && s >= 0.05 && s <= 600) return s;
    }
    return 2.0;
}

}  // namespace

void add_options(po::options_description& opts, bool several_partitions, const std::string& work_default) {
    opts.add_options()("slurm", "run it as a job on the cluster's Slurm (docs/cluster.md)")(
        "partition", po::value<std::string>(),
        several_partitions ? "with --slurm: the partitions to check on, comma-separated (one job each)"
                           : "with --slurm: the partition (default: the cluster's)")(
        "gres", po::value<std::string>(), "with --slurm: generic resources, e.g. gpu:1")(
        "account", po::value<std::string>(), "with --slurm: the account to charge")(
        "time", po::value<std::string>(), "with --slurm: the job's time limit, as sbatch takes it (30:00)")(
        "work", po::value<std::string>(), ("with --slurm: a folder the cluster's nodes share, for the jobs' scripts, logs and results (default: " + work_default +
                           "/ in the current folder)").c_str())(
        "dry-run", "with --slurm: print the script and the sbatch command, submit nothing");
}

Request request_from(const po::variables_map& vm, const std::string& work_default) {
    Request r;
    if (vm.count("partition")) r.partitions = split(vm["partition"].as<std::string>(), ',');
    if (vm.count("gres")) r.gres = vm["gres"].as<std::string>();
    if (vm.count("account")) r.account = vm["account"].as<std::string>();
    if (vm.count("time")) r.time_limit = vm["time"].as<std::string>();
    r.dry_run = vm.count("dry-run") > 0;
    const std::string work = vm.count("work") ? vm["work"].as<std::string>() : work_default;
    if (!work.empty()) r.work = fs::absolute(work).lexically_normal();
    for (const char* flag : {"partition", "gres", "account", "time", "work", "dry-run"})
        if (vm.count(flag) && !vm.count("slurm")) throw UsageError(std::string("--") + flag + " goes with --slurm");
    for (const std::string& s : {r.gres, r.account, r.time_limit})
        if (s.find_first_of(" \t\n'\"\\$`") != std::string::npos) throw UsageError("--slurm options take plain values, not '" + s + "'");
    for (const std::string& p : r.partitions)
        if (p.find_first_of(" \t\n'\"\\$`") != std::string::npos) throw UsageError("not a partition name: '" + p + "'");
    // An empty name wrote no #SBATCH --partition line (or an empty one): the job went to the
    // default partition, which the user had meant to choose.
    if (const std::string given = vm.count("partition") ? vm["partition"].as<std::string>() : "x";
        given.empty() || given.front() == ',' || given.back() == ',' || given.find(",,") != std::string::npos)
        throw UsageError("--partition '" + vm["partition"].as<std::string>() + "' holds an empty partition name\n"
                         "  fix: name the partition (`sinfo -s` lists them), comma-separated for several, or leave --partition out for the cluster's default");
    // sbatch refuses a time it cannot read only when the job is submitted (and --dry-run printed
    // the script as if it were fine): its formats, checked here.
    static const std::regex slurm_time(R"(\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|UNLIMITED|INFINITE)");
    if (vm.count("time") && !std::regex_match(r.time_limit, slurm_time))
        throw UsageError("--time '" + r.time_limit + "' is not a time limit Slurm reads\n"
                         "  fix: write minutes (30), MM:SS, HH:MM:SS (1:30:00), D-HH, D-HH:MM or D-HH:MM:SS (1-12:00:00)");
    return r;
}

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string Script::text() const {
    std::string t = "#!/bin/bash\n";
    for (const auto& [option, value] : options) t += "#SBATCH " + option + (value.empty() ? "" : "=" + value) + "\n";
    return t + body;
}

std::string Script::sbatch_line(const fs::path& file) const { return "sbatch --parsable " + shell_quote(file.string()); }

void add_request_options(Script& s, const Request& r, const std::string& partition) {
    // The job sees the submitting shell's environment (LAB_CONFIG_DIR, LAB_PLUGIN_PATH, LAB_TOKEN):
    // sbatch's default, said here so a site's SBATCH_EXPORT=NONE cannot silently change it.
    s.options.push_back({"--export", "ALL"});
    if (!partition.empty()) s.options.push_back({"--partition", partition});
    if (!r.gres.empty()) s.options.push_back({"--gres", r.gres});
    if (!r.account.empty()) s.options.push_back({"--account", r.account});
    if (!r.time_limit.empty()) s.options.push_back({"--time", r.time_limit});
}

void make_work_folder(const fs::path& dir, const std::vector<std::string>& subfolders) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    for (const auto& sub : subfolders)
        if (!ec) fs::create_directories(dir / sub, ec);
    if (ec) throw InputError(dir.string(), "cannot create the work folder (" + ec.message() + ")", "give --work a folder the cluster's nodes share");
}

std::vector<std::string> log_tail(const fs::path& log, int lines) {
    std::ifstream in(log);
    std::vector<std::string> last;
    for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        last.push_back(line);
        if (static_cast<int>(last.size()) > lines) last.erase(last.begin());
    }
    return last;
}

fs::path lab_executable() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path("lab") : self;
}

CommandResult run_command(const std::vector<std::string>& argv) {
    CommandResult r;
    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) return r;
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
        ::close(out_pipe[0]), ::close(out_pipe[1]);
        return r;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]), ::close(err_pipe[1]);
    if (rc != 0) {
        ::close(out_pipe[0]), ::close(err_pipe[0]);
        r.err = std::string("cannot start ") + argv[0];
        return r;
    }
    // Both pipes drained together, so a command that fills one while we read the other never
    // blocks; a controller that stops answering is given two minutes (Slurm retries for ~60 s).
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    int open = 2;
    while (open > 0 && std::chrono::steady_clock::now() < deadline) {
        if (::poll(fds, 2, 1000) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) ::close(f.fd);
    if (open > 0) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    r.status = open > 0 ? 124 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (open > 0) r.err += fmt::format("\n{} did not answer within 120 s", argv[0]);
    return r;
}

void require_slurm() {
    std::vector<std::string> missing;
    for (const char* p : {"sbatch", "squeue", "scontrol"})
        if (!on_path(p)) missing.push_back(p);
    if (!missing.empty())
        throw UsageError(fmt::format("--slurm: Slurm's {} not found on PATH: run this on the cluster's login node (where `sbatch` "
                                     "works), or without --slurm to run here",
                                     fmt::join(missing, ", ")));
    const CommandResult ping = run_command({"scontrol", "ping"});
    if (ping.status != 0 || ping.out.find("is UP") == std::string::npos)
        throw UsageError("--slurm: the Slurm controller does not answer (`scontrol ping`: " + first_line(ping) +
                         "): ask the cluster's admin, or run without --slurm");
}

void require_partitions(const std::vector<std::string>& names) {
    if (names.empty()) return;
    const CommandResult r = run_command({"sinfo", "-h", "-o", "%R"});
    if (r.status != 0) throw UsageError("--slurm: cannot list the cluster's partitions (sinfo: " + first_line(r) + ")");
    std::set<std::string> have;
    for (const auto& line : split(r.out, '\n')) have.insert(trimmed(line));
    for (const auto& n : names)
        if (!have.count(n))
            throw UsageError(fmt::format("--partition {}: the cluster has no such partition; it has: {}", n, fmt::join(have, ", ")));
}

std::string submit(const fs::path& script_file) {
    const CommandResult r = run_command({"sbatch", "--parsable", script_file.string()});
    if (r.status != 0) throw UsageError("--slurm: sbatch refused the job: " + first_line(r) + "\n  the script: " + script_file.string());
    // --parsable prints "JOBID" or "JOBID;CLUSTER".
    std::string id = trimmed(r.out);
    if (auto semi = id.find(';'); semi != std::string::npos) id.resize(semi);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("--slurm: sbatch printed no job ID ('" + trimmed(r.out) + "')");
    return id;
}

bool JobState::finished() const {
    static const std::set<std::string> waiting = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
                                                  "RESIZING", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD", "REQUEUE_FED",
                                                  "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED"};
    return !waiting.count(state);
}

std::optional<std::vector<JobState>> job_states(const std::string& job) {
    // -r: one line per array task, pending ones included; -t all: ended ones the controller
    // still remembers (MinJobAge). A forgotten job is an error ("Invalid job id"): no states.
    const CommandResult r = run_command({"squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%i|%T|%r"});
    std::vector<JobState> states;
    if (r.status != 0) {
        if ((r.err + r.out).find("Invalid job id") != std::string::npos) return states;
        return std::nullopt;  // the controller did not answer: not the same as a finished job
    }
    for (const auto& line : split(r.out, '\n')) {
        const auto parts = split(line + "|", '|');
        if (parts.size() < 2) continue;
        states.push_back({trimmed(parts[0]), trimmed(parts[1]), parts.size() > 2 ? trimmed(parts[2]) : "", ""});
    }
    return states;
}

std::optional<JobState> job_detail(const std::string& id) {
    const CommandResult r = run_command({"scontrol", "show", "job", "-o", id});
    if (r.status != 0) return std::nullopt;
    for (const auto& line : split(r.out, '\n')) {
        const std::string job = field(line, "JobId"), array = field(line, "ArrayJobId"), task = field(line, "ArrayTaskId");
        const std::string name = array.empty() || task.empty() ? job : array + "_" + task;
        if (name == id || job == id) return JobState{id, field(line, "JobState"), field(line, "Reason"), field(line, "ExitCode")};
    }
    return std::nullopt;
}

std::optional<std::pair<int, int>> queue_position(const std::string& job, const std::string& partition) {
    std::vector<std::string> argv = {"squeue", "-h", "-t", "PENDING", "--sort=-p,i", "-o", "%i"};
    if (!partition.empty()) argv.insert(argv.end(), {"-p", partition});
    const CommandResult r = run_command(argv);
    if (r.status != 0) return std::nullopt;
    const auto ids = split(r.out, '\n');
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (trimmed(ids[i]) == job) return std::make_pair(static_cast<int>(i) + 1, static_cast<int>(ids.size()));
    return std::nullopt;
}

std::vector<JobState> wait_for(const std::string& job, const std::function<void(const std::vector<JobState>&)>& on_change) {
    const auto interval = std::chrono::duration<double>(poll_interval_s());
    std::vector<JobState> last;
    std::string last_summary;
    int forgotten = 0;
    auto unanswered_since = std::chrono::steady_clock::now();
    bool answering = true;
    for (;;) {
        const std::optional<std::vector<JobState>> asked = job_states(job);
        if (!asked) {
            // slurmctld restarting or overloaded: keep waiting, for a while.
            const auto now = std::chrono::steady_clock::now();
            if (answering) unanswered_since = now, answering = false;
            if (now - unanswered_since > std::chrono::minutes(5))
                throw DeviceError("the Slurm controller has not answered squeue for 5 minutes; job " + job +
                                  " may still run: look with `squeue -j " + job + "`, and run the command again when it is over");
            std::this_thread::sleep_for(interval);
            continue;
        }
        answering = true;
        const std::vector<JobState>& now = *asked;
        if (now.empty()) {
            // Between submission and the first squeue, or after MinJobAge: asked again once so a
            // slow controller is not mistaken for a finished job.
            if (++forgotten >= 2) return last;
        } else {
            forgotten = 0;
            const std::string s = summarize(now);
            if (s != last_summary) on_change(now), last_summary = s;
            last = now;
            if (std::all_of(now.begin(), now.end(), [](const JobState& j) { return j.finished(); })) return last;
        }
        std::this_thread::sleep_for(interval);
    }
}

std::string how_it_ended(const std::string& id, const std::string& last_seen) {
    const auto d = job_detail(id);
    if (!d && last_seen.empty()) return "ended without writing its result (Slurm no longer remembers how)";
    const std::string state = d ? d->state : last_seen;
    if (state == "CANCELLED") return "was cancelled";
    if (state == "TIMEOUT") return "ran out of time (--time)";
    if (state == "COMPLETED") return "ended without writing its result";
    const bool exit = d && !d->exit_code.empty() && d->exit_code != "0:0";
    return "failed (" + state + (exit ? ", exit " + d->exit_code : "") + ")";
}

void cancel(const std::string& job) { run_command({"scancel", job}); }

std::string summarize(const std::vector<JobState>& states) {
    std::map<std::string, int> count;
    std::map<std::string, std::set<std::string>> reasons;
    for (const auto& s : states) {
        ++count[s.state];
        if (s.state == "PENDING" && !s.reason.empty() && s.reason != "None") reasons[s.state].insert(s.reason);
    }
    std::vector<std::string> parts;
    auto add = [&](const std::string& state, const std::string& word) {
        if (!count.count(state)) return;
        std::string p = fmt::format("{} {}", count[state], word);
        if (reasons.count(state)) p += " (" + fmt::format("{}", fmt::join(reasons[state], ", ")) + ")";
        parts.push_back(p);
        count.erase(state);
    };
    add("PENDING", "waiting");
    add("CONFIGURING", "starting");
    add("RUNNING", "running");
    add("COMPLETING", "finishing");
    add("COMPLETED", "done");
    for (const auto& [state, n] : count) {
        std::string lower = state;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        parts.push_back(fmt::format("{} {}", n, lower));
    }
    return parts.empty() ? "no tasks" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace lab::cli::slurm
