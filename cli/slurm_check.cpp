// `lab check --slurm` (see slurm_check.hpp).
#include "slurm_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "atomic_file.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "json_input.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

int check_on_cluster(const CheckJobRequest& req, const slurm::Request& cluster) {
    if (cluster.partitions.empty())
        throw UsageError("--slurm needs --partition A,B,...: the partitions (GPU types) to check the lesson on");
    std::vector<std::string> args = {"check", req.id, "--device", req.device, "--json"};
    if (req.quick) args.push_back("--quick");
    if (req.strict) args.push_back("--strict");
    if (req.threads > 0) args.insert(args.end(), {"--threads", std::to_string(req.threads)});
    if (req.timeout_s > 0) args.insert(args.end(), {"--timeout", fmt::format("{:g}", req.timeout_s)});
    std::string command = slurm::shell_quote(slurm::lab_executable().string());
    for (const auto& a : args) command += " " + slurm::shell_quote(a);

    struct Job {
        std::string partition, id;
        fs::path script, log, result;
    };
    const std::string stamp = req.id + "-" + format::utc_stamp(std::time(nullptr));
    std::vector<Job> jobs;
    std::vector<std::pair<Job, slurm::Script>> scripts;
    for (const auto& p : cluster.partitions) {
        Job j{p, "", cluster.work / ("check-" + stamp + "-" + p + ".sbatch"), cluster.work / ("check-" + stamp + "-" + p + ".out"),
              cluster.work / ("check-" + stamp + "-" + p + ".json")};
        slurm::Script s;
        s.options.push_back({"--job-name", "lab-check-" + req.id});
        slurm::add_request_options(s, cluster, p);
        s.options.push_back({"--nodes", "1"});
        s.options.push_back({"--ntasks", "1"});
        s.options.push_back({"--output", j.log.string()});
        const std::string partial = slurm::shell_quote(j.result.string() + ".partial"), result = slurm::shell_quote(j.result.string());
        // lab check exits 1 when it misses an expectation; its JSON is the report either way, so
        // it is kept whenever it was written whole, and the job's exit status says the rest.
        s.body = "# lab check on partition " + p + ": its JSON report goes to the shared work folder.\n"
                 "set -u\n"
                 "export LAB_NO_PROGRESS=1\n"
                 "echo \"lab check on $(hostname) (job $SLURM_JOB_ID)\"\n" +
                 command + " > " + partial + "\nstatus=$?\n[ -s " + partial + " ] && mv -f " + partial + " " + result +
                 "\nexit $status\n";
        scripts.push_back({j, s});
    }
    if (cluster.dry_run) {
        for (const auto& [j, s] : scripts)
            std::cout << "# " << j.script.string() << "\n" << s.text() << "# submitted with:\n" << s.sbatch_line(j.script) << "\n\n";
        return 0;
    }
    slurm::require_slurm();
    slurm::require_partitions(cluster.partitions);
    slurm::make_work_folder(cluster.work);
    for (auto& [j, s] : scripts) {
        write_file_atomically(j.script, s.text());
        j.id = slurm::submit(j.script);
        std::cerr << fmt::format("submitted job {} to partition {}\n", j.id, j.partition);
        jobs.push_back(j);
    }
    for (const auto& j : jobs)
        slurm::wait_for(j.id, [&](const std::vector<slurm::JobState>& s) {
            std::cerr << fmt::format("job {} ({}): {}\n", j.id, j.partition, slurm::summarize(s));
        });

    // One combined report.
    nlohmann::json out = {{"lesson", req.id}, {"quick", req.quick}, {"strict", req.strict}, {"partitions", nlohmann::json::array()}};
    bool failed = false;
    std::string table = fmt::format("{:<14} {:<10} {:<36} {:>4} {:>7} {:>7}  {}\n", "partition", "job", "device", "met", "missed", "differ", "status");
    std::string details;
    auto job_failed = [&](nlohmann::json& row, const std::string& what) {
        row["status"] = "job_failed";
        row["detail"] = what;
        table += fmt::format("{:<14} {:<10} {:<36} {:>4} {:>7} {:>7}  {}\n", row["partition"].get<std::string>(), row["job"].get<std::string>(),
                             "", "", "", "", what);
        failed = true;
    };
    for (const auto& j : jobs) {
        nlohmann::json row = {{"partition", j.partition}, {"job", j.id}, {"log", j.log.string()}};
        std::error_code ec;
        if (!fs::exists(j.result, ec)) {
            job_failed(row, "the job " + slurm::how_it_ended(j.id) + ": " + j.log.string());
            out["partitions"].push_back(row);
            continue;
        }
        try {
            const JsonLimits limits{.max_bytes = 16u << 20, .max_depth = 64};
            const nlohmann::json r = load_json_input(j.result, "the check's report", limits, "", "run the check again");
            const int met = r.value("met", 0), missed = r.value("missed", 0), differs = r.value("differs", 0);
            const bool bad = missed > 0 || (req.strict && differs > 0);
            std::string misses;
            for (const auto& e : r.value("expectations", nlohmann::json::array()))
                if (e.value("result", "") != "met")
                    misses += fmt::format("  {:<12} {:<8} {:<32} expected {:<20} measured {:<20} {}\n", j.partition, e.value("result", ""),
                                          e.value("metric", ""), e.value("expected", ""), e.value("measured", ""), e.value("why", ""));
            table += fmt::format("{:<14} {:<10} {:<36} {:>4} {:>7} {:>7}  {}\n", j.partition, j.id, r.value("device", ""), met, missed,
                                 differs, bad ? "MISSED" : "ok");
            details += misses;
            failed = failed || bad;
            row["status"] = bad ? "missed" : "ok";
            row["report"] = r;
        } catch (const std::exception& e) {
            // A report cut short or not lab's: that partition's check failed, the others stand.
            std::string why = e.what();
            std::replace(why.begin(), why.end(), '\n', ' ');
            job_failed(row, "its report cannot be read: " + why);
        }
        out["partitions"].push_back(row);
    }
    if (req.json) {
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << fmt::format("lab check {} on {} partition{}{}\n\n", req.id, jobs.size(), jobs.size() == 1 ? "" : "s", req.quick ? " (quick)" : "")
                  << table;
        if (!details.empty()) std::cout << "\nexpectations not met:\n" << details;
        std::cout << "\nreports and logs: " << cluster.work.string() << "\n";
    }
    return failed ? 1 : 0;
}

}  // namespace lab::cli
