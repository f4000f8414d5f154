// `lab list` and `lab info ID`: what lessons exist and what each one measures and asks.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"

namespace lab::cli {

namespace {

Catalog discover_and_warn() {
    Catalog cat = discover(paths::plugin_dirs());
    for (const auto& w : cat.warnings) std::cerr << "warning: " << w << "\n";
    return cat;
}

nlohmann::json info_json(const LoadedLesson& l) {
    nlohmann::json experiments = nlohmann::json::array(), metrics = nlohmann::json::array();
    for (const auto& e : l.info.experiments) experiments.push_back({{"name", e.name}, {"description", e.description}});
    for (const auto& m : l.info.metrics) metrics.push_back(record::to_json(m));
    return {{"id", l.info.id},
            {"title", l.info.title},
            {"version", l.info.version},
            {"file", l.identity.file.string()},
            {"api", std::to_string(l.identity.api_major) + "." + std::to_string(l.identity.api_minor)},
            {"objectives", l.info.objectives},
            {"experiments", experiments},
            {"metrics", metrics},
            {"budget_s", {{"quick", l.info.budget_quick_s}, {"full", l.info.budget_full_s}}}};
}

}  // namespace

int cmd_list(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("json", "print one JSON document");
    po::variables_map vm;
    if (!parse("list", "lab list [--json]", args, opts, {}, vm)) return 0;
    Catalog cat = discover_and_warn();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [key, conflict] : cat.conflicts) std::cerr << "warning: " << conflict << "\n";
    for (const auto& [id, ident] : cat.lessons) {
        // One broken plugin must not hide the others: it is reported, and the list goes on.
        LoadedLesson l;
        try {
            l = load_lesson(ident.file);
        } catch (const std::exception& e) {
            std::cerr << "warning: skipped " << e.what() << "\n";
            continue;
        }
        if (vm.count("json")) out.push_back({{"id", id}, {"title", l.info.title}, {"file", ident.file.string()}});
        else std::cout << fmt::format("{:<7} {:<45} {}\n", id, l.info.title, ident.file.string());
    }
    if (vm.count("json")) std::cout << out.dump(2) << "\n";
    else if (cat.lessons.empty()) std::cout << "no lessons found; plugin path: set LAB_PLUGIN_PATH or build lab\n";
    return 0;
}

int cmd_info(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID, e.g. 02.05")("json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    if (!parse("info", "lab info ID [--json]", args, opts, pos, vm)) return 0;
    Catalog cat = discover_and_warn();
    LoadedLesson l = load_lesson(find_lesson(cat, vm["id"].as<std::string>()).file);
    if (vm.count("json")) {
        std::cout << info_json(l).dump(2) << "\n";
        return 0;
    }
    std::cout << l.info.id << "  " << l.info.title << "  (plugin " << l.info.version << ", " << l.identity.file.string() << ")\n\n";
    std::cout << "Objectives\n";
    for (const auto& o : l.info.objectives) std::cout << "  - " << o << "\n";
    std::cout << "\nExperiments\n";
    for (const auto& e : l.info.experiments) std::cout << fmt::format("  {:<20} {}\n", e.name, e.description);
    // Marked: the graded metrics, exactly what the lesson's questions ask (withheld as '?' by
    // `lab run`). Fractions of a ceiling are listed in %, the unit they are shown and asked in.
    std::cout << "\nMetrics (graded answers marked *)\n";
    for (const auto& m : l.info.metrics)
        std::cout << fmt::format("  {}{:<34} {:<8} {}{}{}\n", m.graded ? "*" : " ", m.name,
                                 record::shown_as_percent(m.name, m.unit) ? "%" : m.unit, m.description,
                                 m.quick ? "" : " (not in --quick runs)",
                                 record::is_check_helper(m.name) && !m.graded ? " [withheld, not graded]" : "");
    std::cout << fmt::format("\nBudget: --quick {:g} s, full {:g} s (calibration excluded)\n", l.info.budget_quick_s,
                             l.info.budget_full_s);
    return 0;
}

}  // namespace lab::cli
