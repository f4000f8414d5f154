// The instructor's commands: `lab validate PLUGIN.so` (load it and check its declarations
// without running anything), `lab check ID` (run it and compare with the expectations it
// declares) and `lab new ID --title T` (scaffold a lesson that builds against the installed SDK).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <regex>
#include <set>

#include "child_process.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "lesson_host.hpp"
#include "lesson_plan.hpp"
#include "lesson_session.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "scaffold.hpp"
#include "slurm_check.hpp"
#include "evaluate.hpp"
#include "spec.hpp"
#include "course.hpp"
#include "units.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// A number as the console writes it, from its SI unit.
std::string format_number(double value, const std::string& unit) {
    return units::format(value, units::dimension_of(unit).value_or(""));
}

// The grading spec `lab validate` reads: --spec, else <ID>.yaml beside the plugin or in the
// folder above it (an out-of-tree lesson's source folder, with the plugin in build/), else the
// course's configs/grading/<ID>.yaml.
fs::path find_spec(const fs::path& plugin, const std::string& id) {
    return grader::spec_beside_plugin(plugin, id).value_or(paths::config_dir() / "grading" / (id + ".yaml"));
}

std::string read_file_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Another lesson lab finds under the same ID (another title): "\"The Roofline\" (PATH)", or "".
// A rebuild of this lesson (same title) is not another lesson. Each plugin folder is looked in
// on its own: with LAB_PLUGIN_PATH naming the instructor's build folder first (as authoring.md
// says), the plugin being validated shadows the installed lesson it would replace.
std::string other_lesson_with_id(const fs::path& file, const LessonInfo& info) {
    for (const fs::path& dir : paths::plugin_dirs()) {
        try {
            const Catalog cat = discover({dir});
            auto it = cat.lessons.find(info.id);
            std::error_code ec;
            if (it == cat.lessons.end() || fs::equivalent(it->second.file, file, ec)) continue;
            const std::string title = load_lesson(it->second.file).info.title;
            if (title != info.title) return "\"" + title + "\" (" + it->second.file.string() + ")";
        } catch (const std::exception&) {
            // an unreadable plugin folder is `lab list`'s to report
        }
    }
    return "";
}

}  // namespace

// `lab validate` runs the instructor's run() and derive() on model devices: in a child process,
// as `lab run` does, so that a plugin that crashes, hangs or eats memory is reported (exit 3)
// rather than taking lab down with it. The child is `lab validate` itself, told by this variable.
constexpr const char* kValidateChild = "LAB_VALIDATE_CHILD";
constexpr double kValidateLimitS = 300;

int validate_in_child(const Args& args) {
    std::vector<std::string> argv = {paths::self_executable().string(), "validate"};
    argv.insert(argv.end(), args.begin(), args.end());
    // LAB_TIMEOUT, read and refused as for a lesson's run, else (unset or 0) 5 minutes: a plan
    // replay takes seconds.
    const double from_env = timeout_from_environment().value_or(0);
    const double limit = from_env > 0 ? from_env : kValidateLimitS;
    struct ChildMark {
        ChildMark() { ::setenv(kValidateChild, "1", 1); }
        ~ChildMark() { ::unsetenv(kValidateChild); }
    };
    const ChildOutcome out = [&] {
        ChildMark mark;
        return run_child(argv, limit, [](const nlohmann::json&) { return 0.0; }, child_memory_limit());
    }();
    if (out.exited && !out.timed_out && !out.memory_exceeded) return out.exit_code;
    throw PluginError("lab validate stopped: the lesson plugin " + out.describe() +
                      " while its declarations were read or its plan replayed on model devices (info(), run() or derive())\n"
                      "  fix: run the plugin's own tests under a debugger (gdb --args lab validate ...) with " +
                      std::string(kValidateChild) + "=1 set, which keeps lab validate in one process");
}

int cmd_validate(const Args& args) {
    if (const char* child = std::getenv(kValidateChild); !child || std::string(child) != "1") {
        // --help needs no child.
        if (std::find(args.begin(), args.end(), "--help") == args.end() && std::find(args.begin(), args.end(), "-h") == args.end())
            return validate_in_child(args);
    }
    die_with_parent();
    po::options_description opts("options");
    opts.add_options()("plugin", po::value<std::string>()->required(), "a lesson plugin (lab_<ID>.so), or the ID of one lab finds")(
        "spec", po::value<std::string>(), "its grading spec (default: configs/grading/<ID>.yaml when there is one)");
    po::positional_options_description pos;
    pos.add("plugin", 1);
    po::variables_map vm;
    if (!parse("validate", "lab validate PLUGIN.so|ID [--spec FILE]", args, opts, pos, vm)) return 0;
    fs::path file = vm["plugin"].as<std::string>();
    // An ID ("02.05") names the plugin lab finds in its plugin folders, as `lab run` would.
    if (!fs::exists(file) && file.string().find('/') == std::string::npos && file.extension() != ".so")
        file = find_lesson(discover(paths::plugin_dirs()), file.string()).file;
    // Every path printed below, and in the loader's and the spec's messages, as a person writes
    // it: `dir/lab_02_14.so`, not `dir/./lab_02_14.so` or `build/../build/lab_02_14.so`.
    file = file.lexically_normal();
    if (!fs::exists(file)) throw InputError(file.string(), "no such file", "give a plugin's path (lab_<ID>.so) or a lesson ID `lab list` shows");
    LoadedLesson l = load_lesson(file);
    const LessonInfo& i = l.info;
    std::vector<std::string> problems = declaration_problems(i, [](const std::string& u) { return units::is_base_unit(u); });
    int graded = 0;
    for (const auto& m : i.metrics) graded += m.graded;
    // The plan on model devices, derived: every declared metric produced, nothing undeclared;
    // and, as warnings, graded values a shown metric gives away.
    const PlanCheck plan = check_plan_and_leaks(*l.lesson, i);
    for (const auto& p : plan.problems) problems.push_back(p);

    const fs::path spec_file = (vm.count("spec") ? fs::path(vm["spec"].as<std::string>()) : find_spec(file, i.id)).lexically_normal();
    std::string spec_line = "no grading spec found (" + spec_file.string() + ")";
    std::vector<std::string> spec_problems;  // the spec's, kept apart: their fix is in the YAML, not the plugin
    if (fs::exists(spec_file)) {
        CourseConfig course = load_course(paths::config_dir() / "course.yaml");
        grader::GradingSpec spec = grader::load_spec(spec_file, course.accept_quick, course.show_expected);
        try {
            grader::check_spec_against(spec, i);
            grader::check_spec_sweeps(spec, *l.lesson);
            spec_line = fmt::format("grading spec {}: {} questions, every metric declared", spec_file.string(), spec.questions.size());
            for (const auto& w : grader::spec_warnings(spec, i)) spec_line += "\n  warning: " + w;
            for (const auto& w : grader::model_value_warnings(spec, model_values(*l.lesson, i.id))) spec_line += "\n  warning: " + w;
            // The spec beside the plugin is the one being written; students are graded with the
            // course's copy. An instructor who edits one and not the other is told which is used.
            const fs::path installed = (paths::config_dir() / "grading" / (i.id + ".yaml")).lexically_normal();
            std::error_code ec;
            if (!vm.count("spec") && !fs::equivalent(spec_file, installed, ec)) {
                if (!fs::exists(installed))
                    // They fall back to the spec beside the plugin (a documentation review found the
                    // note saying they find none).
                    spec_line += "\n  note: no spec of " + i.id + " is installed in " + installed.parent_path().string() +
                                 ": lab submit and lab check-spec read this one, beside the plugin, until one is (meson install "
                                 "installs it with the plugin)";
                else if (read_file_text(installed) != read_file_text(spec_file))
                    spec_line += "\n  warning: lab submit and lab check-spec " + i.id + " grade with " + installed.string() +
                                 ", which differs from this spec: install this one (meson install) before students submit";
            }
        } catch (const InputError& e) {
            spec_problems.push_back(e.what());
            spec_line = "grading spec " + spec_file.string() + ": does not fit the lesson (below)";
        }
    } else if (vm.count("spec")) {
        throw InputError(spec_file.string(), "no such grading spec");
    }
    fs::path companion = file.parent_path() / (file.stem().string() + "_cuda.so");

    std::cout << fmt::format("{}: lesson {} \"{}\" {}, plugin API {}.{}, ABI {}\n", file.string(), i.id, i.title, i.version,
                             l.identity.api_major, l.identity.api_minor, l.identity.abi_tag);
    std::cout << fmt::format("  {} objectives, {} experiments, {} placed workloads, {} metrics ({} graded), {} expectations\n",
                             i.objectives.size(), i.experiments.size(), i.placed.size(), i.metrics.size(), graded, i.expectations.size());
    std::cout << "  plan replayed on a model CPU and GPU, quick and full: "
              << (problems.empty() ? "every declared metric produced, none undeclared" : "see the problems below") << "\n";
    for (const auto& w : plan.warnings) std::cout << "  warning: " << w << "\n";
    if (const std::string other = other_lesson_with_id(file, i); !other.empty())
        std::cout << "  warning: lesson " << i.id << " is also " << other << ": installed, this plugin and its spec would replace "
                  << "that lesson's; give this one a free ID (`lab list` shows the taken ones)\n";
    std::cout << "  " << spec_line << "\n";
    std::cout << "  CUDA companion: " << (fs::exists(companion) ? companion.string() : "none (the lesson runs on CPUs only)") << "\n";
    std::string all;
    for (const auto& p : problems) all += "\n  - " + p;
    for (const auto& p : spec_problems) all += "\n  - " + p;  // each carries its own file:line and fix
    if (!problems.empty())
        throw InputError(file.string(), std::string("the plugin's declarations have problems") + (spec_problems.empty() ? "" : ", and its grading spec") + ":" + all,
                         "each problem says what is wrong and where (info(), run() or derive()): fix it there, rebuild, and run "
                         "`lab validate` again");
    if (!spec_problems.empty()) throw InputError(spec_file.string(), "the grading spec does not fit lesson " + i.id + ":" + all);
    std::cout << "valid\n";
    return 0;
}

int cmd_check(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID")(
        "device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all)")("quick", "check a --quick run")(
        "timeout", po::value<std::string>()->default_value("0"),
        "stop the lesson after this many seconds (default: $LAB_TIMEOUT, else 3x its budget)")(
        "json", "print the results as JSON")(
        "strict", "fail on measured expectations too (speeds, measured regimes): for a quiet machine");
    slurm::add_options(opts, true, slurm::kRunWork);
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    if (!parse("check",
               "lab check ID [--device D] [--threads N] [--quick] [--timeout S] [--strict] [--json] "
               "[--slurm --partition A,B,... [--gres G] [--account A] [--time T] [--work DIR] [--dry-run]]",
               args, opts, pos, vm))
        return 0;
    if (vm.count("slurm")) {
        CheckJobRequest job{vm["id"].as<std::string>(), vm["device"].as<std::string>(), vm.count("quick") > 0, vm.count("strict") > 0,
                            vm["threads"].as<int>(), timeout_seconds(vm), vm.count("json") > 0};
        return check_on_cluster(job, slurm::request_from(vm, slurm::kRunWork));
    }
    slurm::request_from(vm, "");  // refuses --partition and the like without --slurm
    LessonRequest req;
    req.id = vm["id"].as<std::string>();
    req.device = vm["device"].as<std::string>();
    req.threads = vm["threads"].as<int>();
    req.quick = vm.count("quick") > 0;
    req.student = "lab-check";
    req.timeout_s = timeout_seconds(vm);
    const bool strict = vm.count("strict") > 0;
    LessonOutcome run = run_lesson(req);
    const std::string kind = to_string(run.raw.device_kind);

    const ExpectationReport report = check_expectations(run.lesson.info, run.raw, run.derivation, format_number);
    nlohmann::json rows = nlohmann::json::array();
    std::string table = fmt::format("{:<8} {:<34} {:<24} {:<24} {}\n", "result", "metric", "expected", "measured", "why");
    for (const auto& r : report.rows) {
        table += fmt::format("{:<8} {:<34} {:<24} {:<24} {}\n", r.result, r.metric, r.expected, r.measured, r.why);
        rows.push_back({{"metric", r.metric}, {"result", r.result}, {"expected", r.expected}, {"measured", r.measured},
                        {"performance", r.performance}, {"why", r.why}});
    }
    // The run's own derivation against the declarations: every declared metric of this device
    // and run type produced, nothing undeclared. Each problem is a structural miss.
    const auto declared = declared_vs_produced(run.lesson.info, run.derivation, run.raw);
    for (const auto& p : declared) {
        table += fmt::format("{:<8} {:<34} {:<24} {:<24} {}\n", "MISSED", "(declarations)", "", "", p);
        rows.push_back({{"metric", ""}, {"result", "MISSED"}, {"expected", "declared = produced"}, {"measured", p},
                        {"performance", false}, {"why", "every declared metric is produced, and only those"}});
    }
    const int met = report.met, missed_structural = report.missed + static_cast<int>(declared.size()),
              missed_performance = report.differs, skipped = report.other_devices;
    if (vm.count("json")) {
        std::cout << nlohmann::json{{"lesson", req.id}, {"device", kind + ": " + run.raw.facts.name}, {"quick", req.quick},
                                    {"met", met}, {"missed", missed_structural}, {"differs", missed_performance}, {"strict", strict},
                                    {"skipped", skipped}, {"expectations", rows}}
                         .dump(2)
                  << "\n";
    } else {
        std::cout << fmt::format("lab check {} on {}: {}{}\n\n", req.id, kind, run.raw.facts.name, req.quick ? " (quick)" : "")
                  << table
                  << fmt::format("\n{} met, {} missed, {} measured expectations differ ({}), {} for other devices\n",
                                 met, missed_structural, missed_performance,
                                 strict ? "--strict: each is a failure"
                                        : "speeds and measured regimes move with the machine's load: reported, not failures "
                                          "unless --strict",
                                 skipped);
    }
    return missed_structural > 0 || (strict && missed_performance > 0) ? 1 : 0;
}

int cmd_new(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "the new lesson's ID, NN.NN")(
        "title", po::value<std::string>()->required(), "its title")(
        "dir", po::value<std::string>()->default_value("."), "where to create the lesson's folder");
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    if (!parse("new", "lab new ID --title TITLE [--dir DIR]", args, opts, pos, vm)) return 0;
    // An ID lab already has (a shipped lesson, or one installed before) is refused: installed, the
    // new lesson would replace that one's plugin and grading spec, and runs recorded with it would
    // no longer grade.
    const std::string id = vm["id"].as<std::string>();
    const Catalog cat = discover(paths::plugin_dirs());
    const fs::path spec = paths::config_dir() / "grading" / (id + ".yaml");
    if (auto it = cat.lessons.find(id); it != cat.lessons.end() || fs::exists(spec)) {
        std::string taken = it != cat.lessons.end() ? it->second.file.string() : spec.string();
        try {
            if (it != cat.lessons.end()) taken = "\"" + load_lesson(it->second.file).info.title + "\" (" + taken + ")";
        } catch (const std::exception&) {
            // the path alone says which lesson it is
        }
        throw InputError("", "lesson ID " + id + " is taken: " + taken,
                         "choose a free ID (`lab list` shows the taken ones); installed under a taken ID, a new lesson would "
                         "replace that lesson and its grading spec");
    }
    fs::path folder = scaffold_lesson(id, vm["title"].as<std::string>(), vm["dir"].as<std::string>());
    std::cout << "created " << folder.string() << "\n"
              << "next:\n  cd " << folder.string() << " && meson setup build && meson compile -C build\n"
              << "  LAB_PLUGIN_PATH=$PWD/build lab validate build/lab_" << scaffold_stem(vm["id"].as<std::string>()) << ".so\n"
              << "  LAB_PLUGIN_PATH=$PWD/build lab run " << vm["id"].as<std::string>() << " --quick --student you --out /tmp/"
              << scaffold_stem(vm["id"].as<std::string>()) << "-run.json\n";
    return 0;
}

}  // namespace lab::cli
