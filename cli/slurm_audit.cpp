// `lab audit --slurm` (see slurm_audit.hpp).
#include "slurm_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "atomic_file.hpp"
#include "errors.hpp"
#include "json_input.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

constexpr const char* kPlanSchema = "lab.audit-plan/1";
const JsonLimits kWorkLimits{.max_bytes = 64u << 20, .max_depth = 16};

struct PlannedTask {
    AuditTask task;
    std::string device_kind;  // the submission's: the task runs on that kind of node
};

struct Work {
    fs::path dir;
    fs::path plan() const { return dir / "plan.json"; }
    fs::path state() const { return dir / "state.json"; }
    fs::path log(std::size_t i) const { return dir / "logs" / (std::to_string(i) + ".out"); }
    fs::path result(std::size_t i) const { return dir / "results" / (std::to_string(i) + ".json"); }
};

// "0-3,7,9-10": an array's indices as sbatch's --array takes them.
std::string index_ranges(const std::vector<std::size_t>& ids) {
    std::string s;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + (j == i ? std::to_string(ids[i]) : fmt::format("{}-{}", ids[i], ids[j]));
        i = j + 1;
    }
    return s;
}

std::vector<PlannedTask> plan_tasks(const std::vector<AuditTask>& sample) {
    std::vector<PlannedTask> tasks;
    for (const auto& t : sample) {
        std::string kind = "cpu";
        try {
            kind = to_string(record::raw_run_from_record(record::read_record(t.run_file)).device_kind);
        } catch (const std::exception&) {
            // Unreadable: its task fails on the node and is reported with the reason.
        }
        tasks.push_back({t, kind});
    }
    return tasks;
}

nlohmann::json plan_json(const std::vector<PlannedTask>& tasks, const fs::path& submissions, unsigned seed) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : tasks)
        list.push_back({{"folder", p.task.folder}, {"student", p.task.student}, {"lesson", p.task.lesson},
                        {"why", p.task.why_sampled}, {"run", p.task.run_file}, {"device", p.device_kind}});
    return {{"schema", kPlanSchema}, {"submissions", submissions.string()}, {"seed", seed}, {"tasks", list}};
}

std::vector<PlannedTask> tasks_of(const nlohmann::json& plan, const fs::path& file) {
    std::vector<PlannedTask> tasks;
    try {
        for (const auto& t : plan.at("tasks"))
            tasks.push_back({{t.at("folder").get<std::string>(), t.at("student").get<std::string>(), t.at("lesson").get<std::string>(),
                              t.at("why").get<std::string>(), t.at("run").get<std::string>()},
                             t.at("device").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file.string(), std::string("not an audit plan lab wrote: ") + e.what(), "delete the work folder, or give another --work");
    }
    return tasks;
}

// state.json: the attempts of each task and the job arrays submitted, round by round.
struct SubmittedJob {
    std::string job, device_kind;
    std::vector<std::size_t> tasks;
};
struct AuditState {
    std::map<std::size_t, int> attempts;
    std::vector<SubmittedJob> jobs;
    int attempts_of(std::size_t task) const {
        auto it = attempts.find(task);
        return it == attempts.end() ? 0 : it->second;
    }
};

nlohmann::json state_json(const AuditState& st) {
    nlohmann::json attempts = nlohmann::json::object(), jobs = nlohmann::json::array();
    for (const auto& [task, n] : st.attempts) attempts[std::to_string(task)] = n;
    for (const auto& j : st.jobs) jobs.push_back({{"job", j.job}, {"device", j.device_kind}, {"tasks", j.tasks}});
    return {{"attempts", attempts}, {"jobs", jobs}};
}

AuditState read_state(const fs::path& file) {
    const char* fix = "delete state.json to submit every unfinished task again, or the work folder to start over";
    const nlohmann::json j = load_json_input(file, "the audit state", kWorkLimits, "check the work folder's permissions", fix);
    AuditState st;
    try {
        if (!j.at("attempts").is_object() || !j.at("jobs").is_array())
            throw std::runtime_error("'attempts' must be an object of counts and 'jobs' a list");
        for (const auto& [task, n] : j.at("attempts").items()) st.attempts[std::stoul(task)] = n.get<int>();
        for (const auto& x : j.at("jobs"))
            st.jobs.push_back({x.at("job").get<std::string>(), x.at("device").get<std::string>(), x.at("tasks").get<std::vector<std::size_t>>()});
    } catch (const std::exception& e) {  // nlohmann's type errors, stoul's
        throw InputError(file.string(), std::string("not an audit state lab wrote: ") + e.what(), fix);
    }
    return st;
}

// Text for a shell comment: one line (a folder name could hold a line break and end the comment).
std::string comment_safe(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

// The script of one round for one device kind: a case per task, each re-measured as made.
slurm::Script array_script(const Work& w, const slurm::Request& r, const std::vector<PlannedTask>& tasks,
                           const std::vector<std::size_t>& ids, const std::string& kind) {
    slurm::Script s;
    s.options.push_back({"--job-name", "lab-audit"});
    s.options.push_back({"--array", index_ranges(ids) + "%" + std::to_string(r.throttle)});
    slurm::add_request_options(s, r, r.partitions.empty() ? "" : r.partitions[0]);
    if (kind == "cuda" && r.gres.empty()) s.options.push_back({"--gres", "gpu:1"});
    // A CPU re-measure wants its node to itself, as the student's run had its laptop.
    if (kind == "cpu" && !r.share_nodes) s.options.push_back({"--exclusive", ""});
    s.options.push_back({"--nodes", "1"});
    s.options.push_back({"--ntasks", "1"});
    s.options.push_back({"--output", (w.dir / "logs" / "%a.out").string()});
    s.options.push_back({"--open-mode", "append"});  // a retried task's log follows its first attempt's
    std::string cases;
    for (std::size_t i : ids)
        cases += fmt::format("  {}) lesson={} run={} ;;  # {}\n", i, slurm::shell_quote(tasks[i].task.lesson),
                             slurm::shell_quote(tasks[i].task.run_file), comment_safe(tasks[i].task.folder + ": " + tasks[i].task.why_sampled));
    s.body = "# lab audit: task N re-measures submission N of plan.json as it was made (its student, seed, token,\n"
             "# quick flag and device kind) and writes the record to results/N.json.\n"
             "set -u\n"
             "export LAB_NO_PROGRESS=1\n"
             "case \"$SLURM_ARRAY_TASK_ID\" in\n" + cases +
             "  *) echo \"lab audit: task $SLURM_ARRAY_TASK_ID is not in this script\" >&2; exit 2 ;;\n"
             "esac\n"
             "echo \"lab audit task $SLURM_ARRAY_TASK_ID on $(hostname), job $SLURM_JOB_ID: $run\"\n"
             "exec " + slurm::shell_quote(slurm::lab_executable().string()) + " run \"$lesson\" --replay \"$run\" --out " +
             slurm::shell_quote((w.dir / "results").string() + "/") + "\"$SLURM_ARRAY_TASK_ID.json\"\n";
    return s;
}

}  // namespace

ClusterAudit audit_on_cluster(const std::vector<AuditTask>& sample, const fs::path& submissions, unsigned seed,
                              const slurm::Request& r, double tolerance, const MeasurementsThatDecide& deciding) {
    const Work w{r.work};
    ClusterAudit out;
    std::error_code ec;

    // The plan: this call's sample, or the one a first call fixed (resuming).
    std::vector<PlannedTask> tasks;
    AuditState state;
    if (fs::exists(w.plan(), ec)) {
        const nlohmann::json plan = load_json_input(w.plan(), "the audit plan", kWorkLimits, "check the work folder's permissions",
                                                    "delete the work folder, or give another --work");
        if (plan.value("schema", "") != kPlanSchema || plan.value("submissions", "") != submissions.string())
            throw UsageError(fmt::format("--work {} holds an audit of {}, not of {}: give another --work (or delete it to start over)",
                                         w.dir.string(), plan.value("submissions", "?"), submissions.string()));
        tasks = tasks_of(plan, w.plan());
        if (fs::exists(w.state(), ec)) state = read_state(w.state());
        std::cerr << fmt::format("resuming the audit in {} (its sample of {}, seed {}, fixed by its first call: not this call's; delete the folder to "
                                 "draw a new one)\n",
                                 w.dir.string(), tasks.size(), plan.value("seed", 0u));
    } else {
        tasks = plan_tasks(sample);
        if (!r.dry_run) {
            slurm::make_work_folder(w.dir, {"logs", "results"});
            write_file_atomically(w.plan(), plan_json(tasks, submissions, seed).dump(2) + "\n");
        }
    }

    // This round: every task without a readable result that has attempts left, by device kind.
    std::map<std::string, std::vector<std::size_t>> round;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (fs::exists(w.result(i), ec)) {
            try {
                record::read_record(w.result(i));
                continue;
            } catch (const std::exception&) {
                fs::remove(w.result(i), ec);  // a damaged result is measured again
            }
        }
        if (state.attempts_of(i) < kAuditAttempts) round[tasks[i].device_kind].push_back(i);
    }
    const int round_no = static_cast<int>(state.jobs.size()) + 1;
    std::vector<std::pair<std::string, slurm::Script>> scripts;
    for (const auto& [kind, ids] : round) scripts.push_back({kind, array_script(w, r, tasks, ids, kind)});
    if (r.dry_run) {
        for (const auto& [kind, s] : scripts) {
            const fs::path file = w.dir / fmt::format("audit-{}-{}.sbatch", round_no, kind);
            std::cout << "# " << file.string() << "\n" << s.text() << "# submitted with:\n" << s.sbatch_line(file) << "\n\n";
        }
        if (tasks.empty()) std::cout << "# nothing to submit: the sample is empty\n";
        else if (scripts.empty()) std::cout << "# nothing to submit: every task has finished or used its attempts\n";
        return out;
    }

    std::vector<std::string> jobs;
    if (!scripts.empty()) {
        slurm::require_slurm();
        slurm::require_partitions(r.partitions);
    }
    for (const auto& [kind, s] : scripts) {
        const fs::path file = w.dir / fmt::format("audit-{}-{}.sbatch", round_no, kind);
        write_file_atomically(file, s.text());
        const std::string job = slurm::submit(file);
        for (std::size_t i : round[kind]) ++state.attempts[i];
        state.jobs.push_back({job, kind, round[kind]});
        write_file_atomically(w.state(), state_json(state).dump(2) + "\n");
        jobs.push_back(job);
        std::cerr << fmt::format("submitted job array {} ({} {} task{}, at most {} at once): {}\n", job, round[kind].size(), kind,
                                 round[kind].size() == 1 ? "" : "s", r.throttle, file.string());
    }
    for (const auto& job : jobs)
        slurm::wait_for(job, [&](const std::vector<slurm::JobState>& s) { std::cerr << "audit job " << job << ": " << slurm::summarize(s) << "\n"; });

    // Collected: each result compared with its submission, each missing one explained.
    std::map<std::size_t, std::string> job_of;
    for (const auto& j : state.jobs)
        for (std::size_t i : j.tasks) job_of[i] = j.job;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        Audited a{tasks[i].task, "", "", {}, 0};
        try {
            if (fs::exists(w.result(i), ec)) {
                const nlohmann::json again = record::read_record(w.result(i));
                const RawRun submitted = record::raw_run_from_record(record::read_record(a.task.run_file));
                judge(a, submitted, record::raw_run_from_record(again), tolerance, deciding(a.task.lesson, submitted));
                a.seconds = again.value("duration_s", 0.0);
            } else {
                a.verdict = "not_audited";
                std::string how = "its task never ran";
                if (job_of.count(i)) {
                    const std::string id = job_of[i] + "_" + std::to_string(i);
                    how = "task " + id + " " + slurm::how_it_ended(id);
                }
                const auto line = slurm::log_tail(w.log(i), 1);
                const int tried = state.attempts_of(i);
                a.detail = how + (line.empty() ? "" : ": " + line[0]) +
                           (tried < kAuditAttempts ? "; run the audit again to retry it"
                                                   : fmt::format("; failed {} times, not retried (log: {})", tried, w.log(i).string()));
            }
        } catch (const std::exception& e) {
            a.verdict = "not_audited";
            a.detail = e.what();
            std::replace(a.detail.begin(), a.detail.end(), '\n', ' ');
        }
        out.results.push_back(std::move(a));
    }
    std::vector<std::string> all_jobs;
    for (const auto& j : state.jobs) all_jobs.push_back(j.job);
    out.where = all_jobs.empty() ? "on the cluster" : fmt::format("on the cluster (job{} {})", all_jobs.size() == 1 ? "" : "s", fmt::join(all_jobs, ", "));
    out.ran = true;
    return out;
}

}  // namespace lab::cli
