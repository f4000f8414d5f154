// `lab run --slurm` (see slurm_run.hpp).
#include "slurm_run.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <ctime>
#include <iostream>

#include "atomic_file.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "options.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

std::optional<ClusterRun> run_on_cluster(const LessonRequest& req, const slurm::Request& cluster) {
    if (cluster.partitions.size() > 1) throw UsageError("a run with --slurm runs on one partition: give one to --partition");
    const std::string partition = cluster.partitions.empty() ? "" : cluster.partitions[0];

    // The student and token are resolved here, as a run here would: the job must not depend on
    // the node's own configuration, and a bad token is refused before anything is queued.
    std::vector<std::string> args = {"run", req.id, "--device", req.device};
    if (req.replay) {
        throw UsageError("--replay does not go with --slurm: use `lab audit --slurm`, which re-measures recorded runs on the cluster");
    } else {
        const std::string token = resolve_token(req.token);
        if (!token.empty()) {
            if (!parse_token(token)) throw UsageError("the course token '" + token + "' is not shaped like one: copy it exactly as your instructor gave it");
            args.insert(args.end(), {"--token", token});
        }
        const std::string student = resolve_student(req.student);
        if (!student.empty() && token.empty()) args.insert(args.end(), {"--student", student});
    }
    if (req.quick) args.push_back("--quick");
    if (req.threads > 0) args.insert(args.end(), {"--threads", std::to_string(req.threads)});
    if (req.timeout_s > 0) args.insert(args.end(), {"--timeout", fmt::format("{:g}", req.timeout_s)});

    const std::string stamp = req.id + "-" + format::utc_stamp(std::time(nullptr));
    const fs::path work = cluster.work;
    const fs::path record_file = work / (stamp + ".json"), log = work / (stamp + ".out"), script_file = work / (stamp + ".sbatch");
    args.insert(args.end(), {"--out", record_file.string()});
    fs::path trace_in_work;
    if (!req.trace_final_name.empty()) {
        const std::string ext = req.trace_final_name.size() > 3 && req.trace_final_name.substr(req.trace_final_name.size() - 3) == ".gz"
                                    ? ".trace.json.gz" : ".trace.json";
        trace_in_work = work / (stamp + ext);
        args.insert(args.end(), {"--trace", trace_in_work.string()});
    }

    slurm::Script script;
    script.options.push_back({"--job-name", "lab-run-" + req.id});
    slurm::add_request_options(script, cluster, partition);
    script.options.push_back({"--nodes", "1"});
    script.options.push_back({"--ntasks", "1"});
    script.options.push_back({"--output", log.string()});
    std::string command = slurm::shell_quote(slurm::lab_executable().string());
    for (const auto& a : args) command += " " + slurm::shell_quote(a);
    script.body =
        "# lab run as a job: the same lab, measuring on this node; the record goes to the shared work folder.\n"
        "set -u\n"
        "export LAB_NO_PROGRESS=1\n"
        "echo \"lab run on $(hostname) (job $SLURM_JOB_ID)\"\n" +
        command + "\n";
    if (cluster.dry_run) {
        if (req.on_going_ahead) req.on_going_ahead();
        std::cout << "# " << script_file.string() << "\n" << script.text() << "\n# submitted with:\n" << script.sbatch_line(script_file) << "\n";
        return std::nullopt;
    }

    slurm::require_slurm();
    slurm::require_partitions(cluster.partitions);
    slurm::make_work_folder(work);
    if (req.on_going_ahead) req.on_going_ahead();
    // The script holds the student's token: readable by its owner only.
    write_file_atomically(script_file, script.text());
    ::chmod(script_file.c_str(), 0700);
    const std::string job = slurm::submit(script_file);
    std::cerr << fmt::format("submitted job {}{} ({}); waiting for it (Ctrl-C leaves it queued; `scancel {}` cancels it)\n", job,
                             partition.empty() ? "" : " to partition " + partition, script_file.string(), job);
    const auto states = slurm::wait_for(job, [&](const std::vector<slurm::JobState>& s) {
        std::string line = "job " + job + ": " + slurm::summarize(s);
        if (!s.empty() && s[0].state == "PENDING")
            if (auto pos = slurm::queue_position(job, partition))
                line += fmt::format(", {} of {} waiting in the queue", pos->first, pos->second);
        std::cerr << line << "\n";
    });

    std::error_code ec;
    if (!fs::exists(record_file, ec)) {
        std::string tail;
        for (const auto& line : slurm::log_tail(log, 6)) tail += "\n    " + line;
        throw DeviceError(fmt::format("job {} {}; its log {}:{}", job, slurm::how_it_ended(job, states.empty() ? "" : states.back().state),
                                      log.string(), tail.empty() ? " (empty or missing)" : tail));
    }
    ClusterRun r;
    r.job = job;
    r.record = record::read_record(record_file);
    r.raw = record::raw_run_from_record(r.record);
    r.host = std::make_unique<LessonHost>();
    r.lesson = &r.host->lesson(r.raw.lesson_id);
    check_plugin_version(*r.lesson, r.record, record_file.string());
    r.derivation = derive_run(*r.lesson, r.raw, record_file.string());
    // A student sent to the cluster for its GPU: on a cluster that gives GPUs only to jobs asking
    // for them (GRES), a job without --gres sees none, and `--device auto` measured the node's CPU.
    if (r.raw.device_kind == DeviceKind::cpu && req.device != "cpu" && cluster.gres.empty())
        std::cerr << fmt::format("note: job {} ran on the node's CPU: it saw no GPU. If you meant to use a GPU, run again with "
                                 "--gres gpu:1 (a cluster gives GPUs only to jobs that ask for them), or the partition your course "
                                 "names for GPUs\n",
                                 job);
    if (!trace_in_work.empty() && fs::exists(trace_in_work, ec)) {
        fs::copy_file(trace_in_work, req.trace_file, fs::copy_options::overwrite_existing, ec);
        if (ec) throw InputError(req.trace_file, "cannot copy the job's trace (" + ec.message() + ")");
    }
    return r;
}

}  // namespace lab::cli
