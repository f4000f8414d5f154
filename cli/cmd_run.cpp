// `lab run ID`: measure a lesson on this machine's device (in a child process), derive its
// metrics with the lesson's own code, write the run record atomically and show the results,
// withholding graded values unless --reveal is given and the course allows it.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "atomic_file.hpp"
#include "commands.hpp"
#include "console.hpp"
#include "course.hpp"
#include "device_summary.hpp"
#include "errors.hpp"
#include "lesson_runner.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "roofline_plot.hpp"
#include "run_record.hpp"
#include "run_report.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

std::string utc_now(const char* format) {
    std::time_t t = std::time(nullptr);
    char buf[40];
    std::strftime(buf, sizeof buf, format, std::gmtime(&t));
    return buf;
}

}  // namespace

int cmd_run(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID, e.g. 02.05")(
        "device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all this process may use)")(
        "quick", "smaller sizes and fewer samples: seconds, not a minute")(
        "student", po::value<std::string>()->default_value(""), "your student ID (default: $LAB_STUDENT or ~/.config/lab/config.yaml)")(
        "out", po::value<std::string>(), "run record path (default: runs/<ID>-<time>.json)")(
        "json", "print the run record as JSON on stdout, nothing else")(
        "plots", po::value<std::string>(), "write plots (roofline SVG) into this folder")(
        "trace", po::value<std::string>(), "write a Chrome trace of the lesson (Perfetto, chrome://tracing) to FILE")(
        "reveal", "show graded values too (if the course allows it)");
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    const char* usage =
        "lab run ID [--device D] [--quick] [--student NAME] [--out RUN.json] [--json] [--plots DIR] [--trace FILE[.gz]] [--reveal]";
    if (!parse("run", usage, args, opts, pos, vm)) return 0;

    const std::string id = vm["id"].as<std::string>();
    const bool json_out = vm.count("json") > 0;
    const bool reveal = vm.count("reveal") > 0;
    ChildRequest req;
    req.action = "run";
    req.device = vm["device"].as<std::string>();
    check_device_name(req.device);
    req.threads = vm["threads"].as<int>();
    if (req.threads < 0) throw UsageError("--threads must be positive");
    req.quick = vm.count("quick") > 0;

    Catalog cat = discover(paths::plugin_dirs());
    for (const auto& w : cat.warnings) std::cerr << "warning: " << w << "\n";
    const PluginIdentity& ident = find_lesson(cat, id);
    LoadedLesson lesson = load_lesson(ident.file);

    CourseConfig course = load_course(paths::config_dir() / "course.yaml");
    if (reveal && !course.allow_reveal)
        throw UsageError("this course does not allow --reveal (allow_reveal: false in " + course.file + ")");
    std::string student = normalise_student(resolve_student(vm["student"].as<std::string>()));
    if (student.empty()) {
        student = "anonymous";
        std::cerr << "note: no student ID (--student, $LAB_STUDENT or ~/.config/lab/config.yaml): "
                     "recording as 'anonymous'; such a run cannot be submitted for grading\n";
    }
    Seed seed = student_seed(course, id, student);
    req.lesson_file = ident.file.string();
    req.options = {req.quick, student, seed.value, seed.hex};
    req.lesson_budget_s = req.quick ? lesson.info.budget_quick_s : lesson.info.budget_full_s;

    // Check the outputs can be written before spending a minute measuring.
    fs::path out = vm.count("out") ? fs::path(vm["out"].as<std::string>())
                                   : fs::path("runs") / (id + "-" + utc_now("%Y%m%d-%H%M%S") + ".json");
    if (fs::is_directory(out)) throw UsageError("--out " + out.string() + " is a folder: give a file name");
    for (const fs::path& dir : {out.parent_path(), vm.count("plots") ? fs::path(vm["plots"].as<std::string>()) : fs::path()}) {
        std::error_code ec;
        if (!dir.empty()) fs::create_directories(dir, ec);
        if (ec) throw InputError(dir.string(), "cannot create the folder (" + ec.message() + ")", "choose another path");
    }

    // The child writes the trace beside its final name; it is renamed only when the run succeeds,
    // so a failed run leaves no half a trace.
    fs::path trace;
    if (vm.count("trace")) {
        trace = vm["trace"].as<std::string>();
        std::error_code ec;
        if (!trace.parent_path().empty()) fs::create_directories(trace.parent_path(), ec);
        if (ec) throw InputError(trace.parent_path().string(), "cannot create the folder (" + ec.message() + ")", "choose another --trace path");
        req.trace_file = (trace.parent_path() / ("." + trace.filename().string() + ".partial")).string();
        req.trace_final_name = trace.string();
    }
    struct RemovePartial {
        std::string path;
        ~RemovePartial() {
            std::error_code ec;
            if (!path.empty()) fs::remove(path, ec);
        }
    } remove_partial{req.trace_file};

    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    auto t0 = std::chrono::steady_clock::now();
    ChildResult result = execute(req);
    double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    RawRun raw;
    raw.lesson_id = id;
    raw.options = req.options;
    raw.device_kind = result.kind;
    raw.facts = result.facts;
    raw.ceilings = result.ceilings;
    raw.measurements = result.measurements;
    Derivation derivation;
    try {
        derivation = lesson.lesson->derive(raw);
    } catch (const std::exception& e) {
        throw PluginError(ident.file.string() + ": the lesson's derivation failed: " + e.what() + "; no run record written");
    }

    // A kernel far above its roof means the cached ceilings understate this machine (they were
    // measured while something else ran): say so, since grading holds rates to the roof.
    for (const auto& wd : derivation.workloads)
        if (wd.placement.roof_fraction > 1.1)
            std::cerr << fmt::format("note: {} ran at {:.2f}x its roof: the ceilings were probably measured on a busier "
                                     "machine; `lab calibrate` measures them again\n",
                                     wd.workload, wd.placement.roof_fraction);

    record::RecordInputs in{lesson.info, raw, derivation, reveal, started, duration,
                            device_spec_json(result.kind, result.facts, result.ceilings), result.engine, result.notes};
    nlohmann::json rec = record::make_record(in);
    record::seal(rec);

    const auto withheld = record::withheld_metrics(lesson.info, reveal);
    RunView view{lesson.info, raw, derivation, withheld,
                 result.calibrated_now ? "" : "(cached; `lab calibrate` measures them again)"};
    std::string svg_path;
    if (vm.count("plots")) {
        fs::path svg = fs::path(vm["plots"].as<std::string>()) / ("roofline-" + id + ".svg");
        write_file_atomically(svg, plot::render_svg(roofline_chart(view)));
        svg_path = svg.string();
    }
    write_file_atomically(out, rec.dump(2) + "\n");
    std::string trace_note;
    if (!trace.empty()) {
        std::error_code ec;
        if (fs::exists(req.trace_file)) {
            fs::rename(req.trace_file, trace, ec);
            if (ec) throw InputError(trace.string(), "cannot write the trace (" + ec.message() + ")");
            trace_note = "trace: " + trace.string() + " (open it in https://ui.perfetto.dev or chrome://tracing)";
        }
    }

    if (json_out) {
        std::cout << rec.dump(2) << "\n";
        return 0;
    }
    print_run(std::cout, view);
    if (!svg_path.empty()) std::cout << "roofline plot: " << svg_path << "\n";
    if (!trace_note.empty()) std::cout << trace_note << "\n";
    std::cout << "run record: " << out.string() << "\n";
    return 0;
}

}  // namespace lab::cli
