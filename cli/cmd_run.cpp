// `lab run ID`: measure a lesson on this machine's device (in a child process), derive its
// metrics with the lesson's own code, write the run record atomically and show the results,
// withholding graded values unless --reveal is given and the course allows it. With --slurm the
// measuring is a job on the course's cluster (slurm_run.cpp) and the rest happens here, from the
// record the job wrote. With --replay a recorded run is measured again as it was made.
#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <iostream>

#include "atomic_file.hpp"
#include "command_files.hpp"
#include "commands.hpp"
#include "course.hpp"
#include "device_summary.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "lesson_session.hpp"
#include "interrupt_cleanup.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "run_html.hpp"
#include "run_plots.hpp"
#include "run_record.hpp"
#include "run_report.hpp"
#include "slurm_run.hpp"
#include "spec.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// Creates an output's folder, unless `dry_run` (`--slurm --dry-run` writes nothing).
// Folders made for a run's outputs before it measures: a run that fails leaves none of them
// behind empty (its record, page, plots and trace were never written).
struct MadeFolders {
    std::vector<fs::path> made;  // deepest last
    bool kept = false;
    ~MadeFolders() {
        forget_folders_on_signal();
        if (kept) return;
        std::error_code ec;
        for (auto it = made.rbegin(); it != made.rend(); ++it)
            if (fs::is_empty(*it, ec)) fs::remove(*it, ec);
    }
};

void make_folder(const fs::path& dir, const char* flag, bool dry_run, MadeFolders& made) {
    if (dry_run || dir.empty()) return;
    std::error_code ec;
    std::vector<fs::path> missing;  // the folders create_directories will make, outermost last
    for (fs::path p = fs::absolute(dir, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec) && p != p.parent_path(); p = p.parent_path())
        missing.push_back(p);
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir.string(), "cannot create the folder (" + ec.message() + ")", std::string("choose another ") + flag + " path");
    made.made.insert(made.made.end(), missing.rbegin(), missing.rend());
    // A Ctrl-C or kill runs no destructor: the signal removes them instead, while still empty.
    if (!missing.empty()) remove_folders_on_signal(made.made);
}

// A quick run of a lesson whose grading spec grades full runs only is refused at submission;
// said before measuring (once the device has opened), so the student knows before a minute is spent. The spec is read as the
// grader reads it; an unreadable spec says nothing here (the grader will say what is wrong).
void warn_quick_not_graded(const std::string& id) {
    try {
        const fs::path spec_file = paths::config_dir() / "grading" / (id + ".yaml");
        if (!fs::exists(spec_file)) return;
        const CourseConfig course = load_course(paths::config_dir() / "course.yaml");
        if (grader::load_spec(spec_file, course.accept_quick, course.show_expected).accept_quick) return;
        std::cerr << fmt::format("note: lesson {} grades full runs only ({}): this quick run is for practice; "
                                 "run `lab run {}` without --quick for the run you submit\n",
                                 id, spec_file.string(), id);
    } catch (const std::exception&) {
    }
}

// runs/<ID>-<UTC time to the second>.json, with -2, -3, ... where that file exists: two runs
// started in one second (a script, two terminals) each keep their record.
fs::path unused_run_name(const std::string& id) {
    const std::string stem = id + "-" + format::utc_stamp(std::time(nullptr));
    fs::path name = fs::path("runs") / (stem + ".json");
    for (int n = 2; fs::exists(name); ++n) name = fs::path("runs") / (stem + "-" + std::to_string(n) + ".json");
    return name;
}

}  // namespace

int cmd_run(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID, e.g. 02.05")(
        "device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all this process may use)")(
        "quick", "smaller sizes and fewer samples: seconds, not a minute")(
        "student", po::value<std::string>()->default_value(""), "your student ID (default: $LAB_STUDENT or ~/.config/lab/config.yaml)")(
        "token", po::value<std::string>()->default_value(""),
        "your course token, if your course gives them (default: $LAB_TOKEN or token: in ~/.config/lab/config.yaml)")(
        "out", po::value<std::string>(), "run record path (default: runs/<ID>-<time>.json)")(
        "json", "print the run record as JSON on stdout, nothing else")(
        "plots", po::value<std::string>(), "write the lesson's plots (SVG: its roofline and its own plots) into this folder")(
        "trace", po::value<std::string>(), "write a Chrome trace of the lesson (Perfetto, chrome://tracing); .gz compresses")(
        "timeout", po::value<std::string>()->default_value("0"), "stop the lesson after this many seconds (default: $LAB_TIMEOUT, else 3x its budget)")(
        "report", po::value<std::string>(), "also write the run as one HTML page (as `lab report` does)")(
        "reveal", "show graded values too (if the course allows it)")(
        "replay", po::value<std::string>(), "measure again as this run record was made (its student, seed, token, quick flag, device kind)");
    slurm::add_options(opts, false, slurm::kRunWork);
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    const char* usage =
        "lab run ID [--device D] [--threads N] [--quick] [--student NAME | --token TOKEN] [--out RUN.json] [--json] [--plots DIR] "
        "[--trace FILE[.gz]] [--report FILE.html] [--timeout S] [--reveal] [--replay RUN.json] "
        "[--slurm [--partition P] [--gres G] [--account A] [--time T] [--work DIR] [--dry-run]]";
    if (!parse("run", usage, args, opts, pos, vm)) return 0;

    LessonRequest req;
    req.id = vm["id"].as<std::string>();
    req.device = vm["device"].as<std::string>();
    req.threads = vm["threads"].as<int>();
    req.quick = vm.count("quick") > 0;
    req.student = vm["student"].as<std::string>();
    req.token = vm["token"].as<std::string>();
    // Given but empty (an unset shell variable, `--token "$TOKEN"`): the run was recorded as
    // 'anonymous', graded for practice only, without a word about the flag.
    for (const char* flag : {"student", "token"})
        if (!vm[flag].defaulted() && vm[flag].as<std::string>().find_first_not_of(" \t") == std::string::npos)
            throw UsageError(std::string("--") + flag + " is empty (a shell variable not set?)\n  fix: give your " +
                             (std::string(flag) == "token" ? "course token (--token TOKEN)" : "student ID (--student NAME)") +
                             ", or leave the option out");
    req.timeout_s = timeout_seconds(vm);
    // run_lesson checks these too; a --slurm run is checked here, before a job is written.
    check_device_name(req.device);
    check_threads(req.threads);
    if (vm.count("replay")) {
        for (const char* flag : {"student", "token", "quick"})
            if (!vm[flag].defaulted() && vm.count(flag))
                throw UsageError(std::string("--replay takes the run's own --") + flag + ": give one or the other");
        const LessonRequest as_made = replay_request(record::read_record(vm["replay"].as<std::string>()));
        if (as_made.id != req.id)
            throw UsageError("--replay " + vm["replay"].as<std::string>() + " is a run of lesson " + as_made.id + ", not " + req.id);
        req.replay = as_made.replay;
        req.replay_token = as_made.replay_token;
        req.quick = as_made.quick;
        if (vm["device"].defaulted()) req.device = as_made.device;
    }
    const bool reveal = vm.count("reveal") > 0;
    if (reveal) require_reveal_allowed(paths::config_dir() / "course.yaml");
    // The note about a quick run is said once the run goes ahead, not before an option that stops
    // it (--out a folder, --device tpu, more --threads than CPUs): the error is then all there is.
    if (req.quick && !vm.count("json")) req.on_going_ahead = [id = req.id] { warn_quick_not_graded(id); };

    const bool dry_run = vm.count("slurm") && vm.count("dry-run");
    // Check the outputs can be written before spending a minute measuring.
    const bool default_out = !vm.count("out");
    fs::path out = default_out ? unused_run_name(req.id) : fs::path(vm["out"].as<std::string>());
    if (fs::is_directory(out)) throw UsageError("--out " + out.string() + " is a folder: give a file name");
    MadeFolders made;
    make_folder(out.parent_path(), "--out", dry_run, made);
    if (vm.count("plots")) make_folder(vm["plots"].as<std::string>(), "--plots", dry_run, made);
    fs::path report;
    if (vm.count("report")) {
        report = report_path("--report", vm["report"].as<std::string>(), out);
        make_folder(report.parent_path(), "--report", dry_run, made);
    }
    // The child writes the trace beside its final name; it is renamed only when the run succeeds,
    // so a failed run leaves no half a trace.
    fs::path trace;
    // The record, its page and its trace are three files: one path for two would keep only one.
    claim_output(out, "--out");
    if (!report.empty()) claim_output(report, "--report");
    if (vm.count("replay")) note_input(vm["replay"].as<std::string>());
    if (vm.count("trace")) {
        trace = vm["trace"].as<std::string>();
        // Found only after the run, a folder here left the record, page and plots written and
        // the command failing (a fuzzing review).
        if (fs::is_directory(trace)) throw UsageError("--trace " + trace.string() + " is a folder: give a file name (such as " + (trace / "trace.json.gz").string() + ")");
        claim_output(trace, "--trace");
        make_folder(trace.parent_path(), "--trace", dry_run, made);
        req.trace_file = (trace.parent_path() / ("." + trace.filename().string() + ".partial")).string();
        req.trace_final_name = trace.string();
    }
    // A folder lab may not write in is said now, not after the measuring (a review lost a full
    // run's minute, and its table, to a read-only --out folder).
    if (!dry_run) {
        check_writable(out, "--out");
        if (!report.empty()) check_writable(report, "--report");
        if (!trace.empty()) check_writable(trace, "--trace");
        if (vm.count("plots")) check_plots_writable(vm["plots"].as<std::string>());
    }
    struct RemovePartial {
        std::string path;
        ~RemovePartial() {
            std::error_code ec;
            if (!path.empty()) fs::remove(path, ec);
        }
    } remove_partial{req.trace_file};

    // What was measured: here, or by a job on the cluster whose record is read back.
    std::optional<LessonOutcome> here;
    std::optional<ClusterRun> there;
    if (vm.count("slurm")) {
        there = run_on_cluster(req, slurm::request_from(vm, slurm::kRunWork));
        if (!there) return 0;  // --dry-run
    } else {
        slurm::request_from(vm, "");  // refuses --partition and the like without --slurm
        here = run_lesson(req);
    }
    const LessonInfo& info = here ? here->lesson.info : there->lesson->info;
    const RawRun& raw = here ? here->raw : there->raw;
    const Derivation& derivation = here ? here->derivation : there->derivation;
    nlohmann::json rec;
    if (here) {
        // A kernel that beat its roof made the run measure the ceiling again (its notes say so), so
        // no placement here exceeds roofline::kRoofMargin, but a cache-sized one's bandwidth
        // (held_to_dram_roof).
        record::RecordInputs in{info, here->raw, here->derivation, reveal, here->started_at, here->duration_s,
                                device_spec_json(here->result.kind, here->result.facts, here->result.ceilings), here->result.engine,
                                here->result.notes, here->token};
        rec = record::make_record(in);
        record::seal(rec);
    } else {
        rec = there->record;
    }

    const auto withheld = record::withheld_metrics(info, reveal, raw.device_kind);
    RunView view{info, raw, derivation, withheld,
                 there ? "(measured by job " + there->job + " on the cluster)"
                 : here->result.calibrated_now ? "" : "(cached; `lab calibrate` measures them again)"};
    // A written file, or why a plot was not drawn.
    const std::vector<std::string> plot_lines = vm.count("plots") ? write_plot_files(vm["plots"].as<std::string>(), view) : std::vector<std::string>{};
    // Another run from this folder may have taken the name since (runs started in one second).
    if (default_out && fs::exists(out)) out = unused_run_name(req.id);
    write_file_atomically(out, rec.dump(2) + "\n");
    made.kept = true;
    // The page names the record it was made from, so it is written after it.
    if (!report.empty()) write_file_atomically(report, render_run_html(RunPage{info, raw, derivation, withheld, rec, out.string()}));
    std::string trace_note;
    if (!trace.empty() && fs::exists(req.trace_file)) {
        std::error_code ec;
        fs::rename(req.trace_file, trace, ec);
        if (ec) throw InputError(trace.string(), "cannot write the trace (" + ec.message() + ")");
        trace_note = "trace: " + trace.string() + " (open it in https://ui.perfetto.dev or chrome://tracing)";
    }

    if (vm.count("json")) {
        std::cout << rec.dump(2) << "\n";
        return 0;
    }
    print_run(std::cout, view);
    for (const auto& svg : plot_lines) std::cout << "plot: " << svg << "\n";
    if (!report.empty()) std::cout << "report: " << report.string() << "\n";
    if (!trace_note.empty()) std::cout << trace_note << "\n";
    std::cout << "run record: " << out.string() << "\n";
    return 0;
}

}  // namespace lab::cli
