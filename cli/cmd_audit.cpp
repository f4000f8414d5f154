// `lab audit DIR --sample 10%`: re-measure a random sample of a class's submissions (and every
// flagged one) on this machine and report which reproduce (audit.hpp). Each submission is re-run
// as it was made (its student, seed, token, quick flag, device kind), in lab's child process like
// any run; one that cannot be re-run is reported, never fatal to the audit. With --slurm the
// re-measures are a job array on the course's cluster (slurm_audit.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <random>
#include <set>

#include "atomic_file.hpp"
#include "audit.hpp"
#include "batch.hpp"
#include "command_files.hpp"
#include "commands.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "lesson_host.hpp"
#include "lesson_session.hpp"
#include "options.hpp"
#include "progress_bar.hpp"
#include "run_record.hpp"
#include "slurm_audit.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// "10%" of `n` (at least one when there is any), or a count ("5").
std::size_t sample_size(const std::string& text, std::size_t n) {
    try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        const bool percent = used < text.size() && text.substr(used) == "%";
        // 0 (or 0%) would audit nothing: an audit re-measures at least one run.
        if ((used != text.size() && !percent) || !(v > 0) || !std::isfinite(v) || (percent && v > 100)) throw std::invalid_argument(text);
        const double k = std::max(1.0, percent ? std::ceil(v / 100 * n) : std::floor(v));
        return std::min(n, static_cast<std::size_t>(k));
    } catch (const std::exception&) {
        throw UsageError("--sample takes a share such as 10% or a count such as 5 (more than 0), not '" + text + "'");
    }
}

// Each task re-run here, one after another, in lab's child process like any run.
std::vector<Audited> audit_here(const std::vector<AuditTask>& tasks, double tolerance, const MeasurementsThatDecide& deciding) {
    std::vector<Audited> results;
    int n = 0;
    for (const AuditTask& t : tasks) {
        Audited a{t, "", "", {}, 0};
        // One line per re-measure (each run draws its own bar below it), with the audit's estimate.
        const double spent = std::accumulate(results.begin(), results.end(), 0.0, [](double s, const Audited& x) { return s + x.seconds; });
        std::cerr << fmt::format("audit {}/{}: re-measuring {} ({}, lesson {}){}\n", ++n, tasks.size(), t.folder, t.student, t.lesson,
                                 results.empty() ? "" : fmt::format(", about {:.0f} s left", spent / results.size() * (tasks.size() - results.size())));
        const auto t0 = std::chrono::steady_clock::now();
        try {
            const nlohmann::json record = record::read_record(t.run_file);
            const RawRun submitted = record::raw_run_from_record(record);
            LessonOutcome again = run_lesson(replay_request(record));
            judge(a, submitted, again.raw, tolerance, deciding(t.lesson, submitted));
        } catch (const std::exception& ex) {
            a.verdict = "not_audited";
            a.detail = ex.what();
            std::replace(a.detail.begin(), a.detail.end(), '\n', ' ');
        }
        a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        results.push_back(std::move(a));
    }
    return results;
}

// Which submissions the audit re-measures, and which grading refused (stderr, before any run).
// The refused are listed one by one where no report follows (--dry-run); else the report does.
void print_selection(std::ostream& err, const std::vector<AuditTask>& tasks, const std::vector<std::pair<std::string, std::string>>& refused,
                     std::size_t gradable, unsigned seed, bool list_refused) {
    err << fmt::format("lab audit: {} of {} gradable submission{} chosen (sample seed {}):\n", tasks.size(), gradable,
                       gradable == 1 ? "" : "s", seed);
    for (const auto& t : tasks) err << fmt::format("  {} ({}, lesson {}): {}\n", t.folder, t.student, t.lesson, t.why_sampled);
    if (refused.empty()) return;
    err << fmt::format("{} left out, refused by grading (a re-measure cannot change their grade){}\n", refused.size(),
                       list_refused ? ":" : "; the report lists them");
    if (list_refused)
        for (const auto& [folder, why] : refused) err << fmt::format("  {}: {}\n", folder, why);
}

}  // namespace

int cmd_audit(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("dir", po::value<std::string>()->required(), "one folder per student, as for lab grade")(
        "sample", po::value<std::string>()->default_value("10%"), "how many to re-measure: a share (10%) or a count (5)")(
        "seed", po::value<unsigned>(), "the sample's random seed (default: a fresh one, printed)")(
        "tolerance", po::value<double>()->default_value(kAuditTolerance), "x/÷ factor a median may differ by (at least 1.05)")(
        "key", po::value<std::string>()->default_value(""), "the course key (default $LAB_COURSE_KEY), as for lab grade")(
        "lesson", po::value<std::string>(), "audit runs of this lesson only, as lab grade --lesson grades them")(
        "out", po::value<std::string>(), "write the audit as JSON here")("json", "print the audit as JSON")(
        "throttle", po::value<int>()->default_value(slurm::kDefaultThrottle), "with --slurm: tasks running at once (the array's %N)")(
        "share-nodes", "with --slurm: let re-measures on CPUs share a node (faster; noisier than --exclusive, the default)");
    slurm::add_options(opts, false, slurm::kAuditWork);
    po::positional_options_description pos;
    pos.add("dir", 1);
    po::variables_map vm;
    if (!parse("audit",
               "lab audit SUBMISSIONS_DIR [--lesson ID] [--sample 10%|N] [--seed N] [--tolerance F] [--key FILE] [--out audit.json] [--json] "
               "[--slurm [--partition P] [--gres G] [--account A] [--time T] [--throttle N] [--share-nodes] [--work DIR] [--dry-run]]",
               args, opts, pos, vm))
        return 0;
    slurm::Request cluster = slurm::request_from(vm, slurm::kAuditWork);
    cluster.throttle = vm["throttle"].as<int>();
    if (cluster.throttle < 1) throw UsageError("--throttle is at least 1");
    cluster.share_nodes = vm.count("share-nodes") > 0;
    for (const char* flag : {"throttle", "share-nodes"})
        if (vm.count(flag) && !vm[flag].defaulted() && !vm.count("slurm")) throw UsageError(std::string("--") + flag + " goes with --slurm");
    const double tolerance = vm["tolerance"].as<double>();
    if (!(tolerance >= 1.05) || !std::isfinite(tolerance))
        throw UsageError("--tolerance is a factor of at least 1.05 and finite (1.5 means within x/÷ 1.5)");
    sample_size(vm["sample"].as<std::string>(), 1);  // a bad --sample refused before the class is read
    std::optional<CourseKey> key;
    if (auto file = configured_key_file(vm["key"].as<std::string>())) key = load_course_key(*file);
    grader::GradingContext ctx(key);
    // The lesson graded: a run of another one (a student's upload to the wrong assignment) earns
    // nothing under `lab grade --lesson`, so re-measuring it spends a sample on no grade.
    const std::string only_lesson = vm.count("lesson") ? vm["lesson"].as<std::string>() : "";
    if (!only_lesson.empty()) ctx.lesson(only_lesson), ctx.spec(only_lesson);  // an unknown ID, then an unusable spec, said before the class is read
    stderr_progress().start("reading the submissions", 0);
    // Graded as `lab grade --lesson` grades: another lesson's rows refused with its reason, and
    // no other lesson's spec needed (one upload to the wrong assignment stopped the audit).
    grader::BatchResult batch = grader::grade_directory(ctx, vm["dir"].as<std::string>(), [](const std::string& folder, std::size_t done, std::size_t total) {
        stderr_progress().update(folder, done, total);
    }, grader::BatchOptions{.lesson = only_lesson});
    stderr_progress().clear();

    // The sample: every flagged submission, and a random share of the other gradable runs. A run
    // grading refuses (a token that does not verify, a quick run of a lesson that grades full runs,
    // answers bound to another run) earns no points, so re-measuring it cannot change a grade: it
    // is left out, and listed with the reason.
    std::vector<std::size_t> readable, chosen;
    std::map<std::size_t, std::string> why;
    std::vector<std::pair<std::string, std::string>> refused;
    for (std::size_t i = 0; i < batch.entries.size(); ++i) {
        const auto& e = batch.entries[i];
        if (e.run_file.empty() || e.lesson.empty()) continue;
        if (const std::string st = e.status(); st == "refused" || st == "error") {
            refused.push_back({e.folder, st + ": " + e.reason()});
        } else if (!e.flags.empty()) {
            std::string f;
            for (const auto& x : e.flags) f += (f.empty() ? "" : " ") + x;
            why[i] = "flagged: " + f;
        } else {
            readable.push_back(i);
        }
    }
    const unsigned seed = vm.count("seed") ? vm["seed"].as<unsigned>() : std::random_device{}();
    std::mt19937 rng(seed);
    std::shuffle(readable.begin(), readable.end(), rng);
    const std::size_t gradable = readable.size() + why.size();
    const std::size_t k = sample_size(vm["sample"].as<std::string>(), gradable);
    for (std::size_t i = 0; i < readable.size() && i < k; ++i) why[readable[i]] = "sampled";
    for (const auto& [i, w] : why) chosen.push_back(i);

    std::vector<AuditTask> tasks;
    for (std::size_t i : chosen) {
        const auto& e = batch.entries[i];
        // The run's own student: a sampled row's run was read, and its row may be left unnamed (a copy).
        tasks.push_back({e.folder, e.run_student, e.lesson, why[i], fs::absolute(e.run_file).lexically_normal().string()});
    }
    print_selection(std::cerr, tasks, refused, gradable, seed, vm.count("slurm") && cluster.dry_run);
    // --out is checked before any re-measure is spent on it (found unwritable only at the end, the
    // audit's minutes of measuring were lost), once the submissions it must not overwrite are read.
    if (vm.count("out")) {
        claim_output(vm["out"].as<std::string>(), "--out");
        if (!(vm.count("slurm") && cluster.dry_run)) check_writable(vm["out"].as<std::string>(), "--out");
    }
    // Which ceilings decide, per submission: those its graded values depend on (audit.hpp).
    const MeasurementsThatDecide deciding = [&ctx](const std::string& lesson, const RawRun& submitted) -> DecidingMeasurements {
        try {
            std::vector<std::string> graded;
            for (const auto& q : ctx.spec(lesson).questions)
                if (!q.expected.metric.empty()) graded.push_back(q.expected.metric);
            const LoadedLesson& l = ctx.lesson(lesson);
            return deciding_measurements(submitted, graded, [&l](const RawRun& r) { return derive_run(l, r); });
        } catch (const std::exception&) {
            return std::nullopt;  // no spec or derivation here: every ceiling decides, as before
        }
    };
    AuditSummary summary{batch.entries.size(), seed, tolerance, "here", refused};
    std::vector<Audited> results;
    if (vm.count("slurm")) {
        ClusterAudit on = audit_on_cluster(tasks, fs::absolute(vm["dir"].as<std::string>()).lexically_normal(), seed, cluster, tolerance,
                                          deciding);
        if (!on.ran) return 0;  // --dry-run
        results = std::move(on.results);
        summary.where = on.where;
    } else {
        results = audit_here(tasks, tolerance, deciding);
    }
    const nlohmann::json doc = audit_json(results, summary);
    if (vm.count("out")) {
        write_file_atomically(vm["out"].as<std::string>(), doc.dump(2) + "\n");
    }
    if (vm.count("json")) std::cout << doc.dump(2) << "\n";
    else print_audit(std::cout, results, summary);
    return audit_exit_code(results);
}

}  // namespace lab::cli
