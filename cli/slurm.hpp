// Running lessons on a course's cluster through its Slurm: `lab run --slurm`, `lab check --slurm`
// and `lab audit --slurm` write a batch script the user can read (`--dry-run` prints it), submit
// it with `sbatch --parsable`, follow it with `squeue` and `scontrol` (never `sacct`: a cluster
// without accounting has none), and read what the jobs wrote into a folder the nodes share.
// Slurm schedules; lab never does. docs/cluster.md says what a cluster's admin sets up.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"

namespace lab::cli::slurm {

// What the user asked of the cluster (--partition, --gres, ...). Empty means the cluster's default.
struct Request {
    std::vector<std::string> partitions;  // `lab check` takes several (A,B); the others one
    std::string gres;                     // "gpu:1"
    std::string account;
    std::string time_limit;               // sbatch's --time, "30:00"
    int throttle = 0;                     // an array's %N: tasks running at once (0 = kDefaultThrottle)
    bool dry_run = false;
    bool share_nodes = false;             // audits: CPU re-measures may share a node (else --exclusive)
    std::filesystem::path work;           // the shared folder jobs write into
};

inline constexpr int kDefaultThrottle = 20;
// The shared folders jobs write into when --work is not given: a lesson's run or check, an audit.
inline constexpr const char* kRunWork = "lab-slurm";
inline constexpr const char* kAuditWork = "lab-audit";

// The --slurm options of a command, and the request they make. `work_default` names the shared
// folder when --work is not given (relative to the current folder, which jobs see as theirs).
void add_options(po::options_description& opts, bool several_partitions, const std::string& work_default);
Request request_from(const po::variables_map& vm, const std::string& work_default);

// A batch script: #SBATCH lines (option, value; "" = a flag) and the shell that runs.
struct Script {
    std::vector<std::pair<std::string, std::string>> options;
    std::string body;
    std::string text() const;
    std::string sbatch_line(const std::filesystem::path& file) const;  // the command that submits it
};

// The #SBATCH options a request adds (partition, gres, account, time).
void add_request_options(Script& s, const Request& r, const std::string& partition);

// A path or argument quoted for the shell ('...').
std::string shell_quote(const std::string& s);

// Creates the shared work folder (and `subfolders` in it); InputError naming it when it cannot.
void make_work_folder(const std::filesystem::path& dir, const std::vector<std::string>& subfolders = {});

// The last `lines` non-blank lines of a job's log (fewer when it is shorter; none when missing).
std::vector<std::string> log_tail(const std::filesystem::path& log, int lines);

// This `lab` executable's absolute path: jobs run the same build on the nodes (a shared install).
std::filesystem::path lab_executable();

// --- Talking to Slurm -----------------------------------------------------------------------

struct CommandResult {
    int status = -1;  // the exit status; -1 when it could not be started
    std::string out, err;
};

// Runs a Slurm client command (argv[0] found on PATH), capturing its output.
CommandResult run_command(const std::vector<std::string>& argv);

// UsageError (exit 2) naming what is missing when sbatch, squeue or scontrol are not on PATH or
// slurmctld does not answer.
void require_slurm();

// UsageError listing the cluster's partitions when one of `names` is not among them.
void require_partitions(const std::vector<std::string>& names);

// Submits `script_file`; returns the job ID. UsageError with sbatch's own message when refused.
std::string submit(const std::filesystem::path& script_file);

// One job, or one task of an array ("123_4"), as squeue or scontrol report it.
struct JobState {
    std::string id;      // "123" or "123_4"
    std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    std::string reason;  // why it waits or why it ended ("Priority", "NonZeroExitCode", "None")
    std::string exit_code;  // "0:0" (scontrol's status:signal), "" when not known
    bool finished() const;
};

// The job's tasks still known to the controller (squeue -r -t all): waiting, running, or ended
// within MinJobAge. Empty once the controller has forgotten the job; nullopt when it did not
// answer (a restart, a timeout), which is not the same.
std::optional<std::vector<JobState>> job_states(const std::string& job);

// scontrol's view of one job or task (JobState, Reason, ExitCode), when it still knows it.
std::optional<JobState> job_detail(const std::string& id);

// A pending job's place among the pending jobs of its partition, by priority (1 = next).
std::optional<std::pair<int, int>> queue_position(const std::string& job, const std::string& partition);

// Calls `on_change` with the job's tasks whenever they change, every `poll` until none is waiting
// or running; returns the last states seen. The interval is LAB_SLURM_POLL_S when set. A
// controller that stops answering is waited for up to 5 minutes, then DeviceError.
std::vector<JobState> wait_for(const std::string& job, const std::function<void(const std::vector<JobState>&)>& on_change);

// How a job or task that wrote nothing ended, from scontrol's JobState (or `last_seen`, the state
// squeue showed last, when scontrol has forgotten it): "was cancelled", "ran out of time (--time)",
// "ended without writing its result", "failed (FAILED, exit 3:0)".
std::string how_it_ended(const std::string& id, const std::string& last_seen = "");

// Cancels a job (scancel), as Ctrl-C on a waiting `lab` does.
void cancel(const std::string& job);

// "3 pending (Priority), 2 running, 15 done": a one-line summary of the states.
std::string summarize(const std::vector<JobState>& states);

}  // namespace lab::cli::slurm
