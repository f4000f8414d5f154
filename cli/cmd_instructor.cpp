// The instructor's commands: `lab validate PLUGIN.so` (load it and check its declarations
// without running anything), `lab check ID` (run it and compare with the expectations it
// declares) and `lab new ID --title T` (scaffold a lesson that builds against the installed SDK).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <regex>
#include <set>

#include "commands.hpp"
#include "errors.hpp"
#include "lesson_session.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "scaffold.hpp"
#include "spec.hpp"
#include "course.hpp"
#include "units.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// Value of a ceiling named as expectations name them: "bandwidth.best", "flops.fp32.simt", "launch".
std::optional<double> ceiling_value(const Ceilings& c, const std::string& name) {
    if (name == "launch") return c.launch_s.value;
    if (name.rfind("bandwidth.", 0) == 0) {
        auto it = c.bandwidth_bytes_per_s.find(name.substr(10));
        if (it != c.bandwidth_bytes_per_s.end()) return it->second.value;
    }
    if (name.rfind("flops.", 0) == 0) {
        auto it = c.flops_per_s.find(name.substr(6));
        if (it != c.flops_per_s.end()) return it->second.value;
    }
    return std::nullopt;
}

bool valid_ceiling_name(const std::string& n) {
    static const std::regex ok("launch|bandwidth\\.(read|copy|triad|best|memcpy)|flops\\.[a-z0-9]+\\.(simt|tensor)");
    return std::regex_match(n, ok);
}

}  // namespace

int cmd_validate(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("plugin", po::value<std::string>()->required(), "a lesson plugin (lab_<ID>.so)")(
        "spec", po::value<std::string>(), "its grading spec (default: configs/grading/<ID>.yaml when there is one)");
    po::positional_options_description pos;
    pos.add("plugin", 1);
    po::variables_map vm;
    if (!parse("validate", "lab validate PLUGIN.so [--spec FILE]", args, opts, pos, vm)) return 0;
    const fs::path file = vm["plugin"].as<std::string>();
    if (!fs::exists(file)) throw InputError(file.string(), "no such file");
    LoadedLesson l = load_lesson(file);
    const LessonInfo& i = l.info;
    std::vector<std::string> problems;
    static const std::regex id_ok("[0-9]{2}\\.[0-9]{2}"), name_ok("[a-z0-9_]+(\\.[a-z0-9_]+)*");
    if (!std::regex_match(i.id, id_ok)) problems.push_back("lesson ID '" + i.id + "' is not of the form NN.NN");
    if (i.title.empty()) problems.push_back("the title is empty");
    if (i.objectives.empty()) problems.push_back("no objectives: state what the lesson teaches");
    if (i.experiments.empty()) problems.push_back("no experiments declared");
    if (i.budget_quick_s <= 0 || i.budget_full_s <= 0) problems.push_back("time budgets must be positive");
    std::set<std::string> names;
    int graded = 0;
    for (const auto& m : i.metrics) {
        if (!names.insert(m.name).second) problems.push_back("metric '" + m.name + "' is declared twice");
        if (!std::regex_match(m.name, name_ok)) problems.push_back("metric name '" + m.name + "' is not dotted lower-case words");
        if (m.kind != MetricKind::category && !units::dimension_of(m.unit))
            problems.push_back("metric '" + m.name + "' has unit '" + m.unit + "', which is not an SI unit lab knows");
        if (m.devices.empty()) problems.push_back("metric '" + m.name + "' is produced on no device");
        graded += m.graded;
    }
    for (const auto& e : i.expectations) {
        const MetricDecl* m = nullptr;
        for (const auto& d : i.metrics)
            if (d.name == e.metric) m = &d;
        if (!m) {
            problems.push_back("expectation on '" + e.metric + "', which the lesson does not declare");
            continue;
        }
        if (m->kind == MetricKind::category && e.equals.empty())
            problems.push_back("expectation on category '" + e.metric + "' needs 'equals'");
        if (m->kind != MetricKind::category && !e.equals.empty())
            problems.push_back("expectation on number '" + e.metric + "' uses 'equals'; give min/max");
        if (!e.relative_to.empty() && !valid_ceiling_name(e.relative_to))
            problems.push_back("expectation on '" + e.metric + "' is relative to '" + e.relative_to +
                               "': use launch, bandwidth.<kernel> or flops.<dtype>.<pipe>");
    }
    if (i.expectations.empty()) problems.push_back("no expected measurements declared (LessonInfo::expectations)");

    fs::path spec_file = vm.count("spec") ? fs::path(vm["spec"].as<std::string>()) : paths::config_dir() / "grading" / (i.id + ".yaml");
    std::string spec_line = "no grading spec found (" + spec_file.string() + ")";
    if (fs::exists(spec_file)) {
        CourseConfig course = load_course(paths::config_dir() / "course.yaml");
        grader::GradingSpec spec = grader::load_spec(spec_file, course.accept_quick, course.show_expected);
        try {
            grader::check_spec_against(spec, i);
            spec_line = fmt::format("grading spec {}: {} questions, every metric declared", spec_file.string(), spec.questions.size());
        } catch (const InputError& e) {
            problems.push_back(e.what());
        }
    } else if (vm.count("spec")) {
        throw InputError(spec_file.string(), "no such grading spec");
    }
    fs::path companion = file.parent_path() / (file.stem().string() + "_cuda.so");

    std::cout << fmt::format("{}: lesson {} \"{}\" {}, plugin API {}.{}, ABI {}\n", file.string(), i.id, i.title, i.version,
                             l.identity.api_major, l.identity.api_minor, l.identity.abi_tag);
    std::cout << fmt::format("  {} objectives, {} experiments, {} metrics ({} graded), {} expectations\n", i.objectives.size(),
                             i.experiments.size(), i.metrics.size(), graded, i.expectations.size());
    std::cout << "  " << spec_line << "\n";
    std::cout << "  CUDA companion: " << (fs::exists(companion) ? companion.string() : "none (the lesson runs on CPUs only)") << "\n";
    if (!problems.empty()) {
        std::string all;
        for (const auto& p : problems) all += "\n  - " + p;
        throw InputError(file.string(), "the plugin's declarations have problems:" + all, "fix them in the lesson's info()");
    }
    std::cout << "valid\n";
    return 0;
}

int cmd_check(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID")(
        "device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all)")("quick", "check a --quick run")(
        "timeout", po::value<double>()->default_value(0), "stop the lesson after this many seconds")(
        "json", "print the results as JSON")(
        "strict", "fail on measured expectations too (speeds, measured regimes): for a quiet machine");
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    if (!parse("check", "lab check ID [--device D] [--threads N] [--quick] [--strict] [--json]", args, opts, pos, vm)) return 0;
    LessonRequest req;
    req.id = vm["id"].as<std::string>();
    req.device = vm["device"].as<std::string>();
    req.threads = vm["threads"].as<int>();
    req.quick = vm.count("quick") > 0;
    req.student = "lab-check";
    req.timeout_s = vm["timeout"].as<double>();
    const bool strict = vm.count("strict") > 0;
    LessonOutcome run = run_lesson(req);
    const std::string kind = to_string(run.raw.device_kind);

    int missed_structural = 0, missed_performance = 0, met = 0, skipped = 0;
    nlohmann::json rows = nlohmann::json::array();
    std::string table = fmt::format("{:<8} {:<34} {:<24} {:<24} {}\n", "result", "metric", "expected", "measured", "why");
    for (const auto& e : run.lesson.info.expectations) {
        std::string result, expected, measured;
        if (std::find(e.devices.begin(), e.devices.end(), kind) == e.devices.end()) {
            ++skipped;
            continue;
        }
        const MetricValue* v = run.derivation.find(e.metric);
        bool ok = false;
        if (!e.equals.empty()) {
            expected = e.equals;
            measured = v ? v->text : "(not produced)";
            ok = v && v->text == e.equals;
            // A verdict the run could not decide, with the expected regime among its candidates.
            if (v && !ok) {
                auto candidates = roofline::regimes_in(v->text);
                auto want = roofline::parse_regime(e.equals);
                ok = candidates.size() > 1 && want && std::find(candidates.begin(), candidates.end(), *want) != candidates.end();
            }
        } else {
            double scale = 1;
            std::string unit = v ? v->unit : "";
            if (!e.relative_to.empty()) {
                auto c = ceiling_value(run.raw.ceilings, e.relative_to);
                if (!c) {
                    ++skipped;
                    continue;
                }
                scale = *c;
            }
            std::string dim = units::dimension_of(unit).value_or("");
            // Fractions of a ceiling read as percentages, as everywhere else lab prints them.
            auto bound = [&](double x) {
                return e.relative_to.empty() ? units::format(x, dim) : fmt::format("{:g}% of {}", 100 * x, e.relative_to);
            };
            expected = e.min > -1e300 && e.max < 1e300 ? bound(e.min) + " .. " + bound(e.max)
                       : e.min > -1e300                 ? ">= " + bound(e.min)
                                                        : "<= " + bound(e.max);
            measured = v ? (e.relative_to.empty() ? units::format(v->number, dim)
                                                  : fmt::format("{:.0f}% of {}", 100 * v->number / scale, e.relative_to))
                         : "(not produced)";
            ok = v && v->number >= e.min * scale && v->number <= e.max * scale;
        }
        if (ok) {
            ++met;
            result = "met";
        } else if (e.performance) {
            ++missed_performance;
            result = "differs";
        } else {
            ++missed_structural;
            result = "MISSED";
        }
        table += fmt::format("{:<8} {:<34} {:<24} {:<24} {}\n", result, e.metric, expected, measured, e.why);
        rows.push_back({{"metric", e.metric}, {"result", result}, {"expected", expected}, {"measured", measured},
                        {"performance", e.performance}, {"why", e.why}});
    }
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
    fs::path folder = scaffold_lesson(vm["id"].as<std::string>(), vm["title"].as<std::string>(), vm["dir"].as<std::string>());
    std::cout << "created " << folder.string() << "\n"
              << "next:\n  cd " << folder.string() << " && meson setup build && meson compile -C build\n"
              << "  LAB_PLUGIN_PATH=$PWD/build lab validate build/lab_" << scaffold_stem(vm["id"].as<std::string>()) << ".so\n"
              << "  LAB_PLUGIN_PATH=$PWD/build lab run " << vm["id"].as<std::string>() << " --quick\n";
    return 0;
}

}  // namespace lab::cli
