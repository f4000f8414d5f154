// `lab show RUN.json`: a recorded run shown as `lab run` showed it, re-derived from its raw
// measurements by the lesson's own code (the stored derived values are not trusted). It is how a
// student without a GPU reads a recorded GPU run, and how anyone checks a record is intact.
#include <iostream>

#include "commands.hpp"
#include "consistency.hpp"
#include "course.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "lesson_host.hpp"
#include "run_record.hpp"
#include "run_report.hpp"

namespace lab::cli {

int cmd_show(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("run", po::value<std::string>()->required(), "a run record written by `lab run`")(
        "reveal", "show graded values too (if the course allows it)")("json", "print the re-derived metrics as JSON")(
        "plots", po::value<std::string>(), "also write the run's plots (SVG: its roofline and the lesson's own) into this folder");
    po::positional_options_description pos;
    pos.add("run", 1);
    po::variables_map vm;
    if (!parse("show", "lab show RUN.json [--reveal] [--json] [--plots DIR]", args, opts, pos, vm)) return 0;
    const std::string file = vm["run"].as<std::string>();
    const bool reveal = vm.count("reveal") > 0;
    // Before the table is printed: a folder lab cannot write in is said alone, not after it.
    if (vm.count("plots")) check_plots_writable(vm["plots"].as<std::string>());

    nlohmann::json rec = record::read_record(file);
    RawRun raw = record::raw_run_from_record(rec);
    LessonHost host;
    for (const auto& w : host.warnings()) std::cerr << "warning: " << w << "\n";
    const LoadedLesson& lesson = host.lesson(raw.lesson_id);
    check_plugin_version(lesson, rec, file);
    grader::require_consistent(rec, raw, file);
    if (reveal) require_reveal_allowed(paths::config_dir() / "course.yaml");
    const Derivation d = derive_run(lesson, raw, file);
    const auto withheld = record::withheld_metrics(lesson.info, reveal, raw.device_kind);
    if (vm.count("json")) {
        nlohmann::json metrics = nlohmann::json::object();
        for (const auto& m : d.metrics)
            if (!withheld.count(m.name)) metrics[m.name] = record::to_json(m);
        std::cout << nlohmann::json{{"run", file}, {"lesson", raw.lesson_id}, {"student", raw.options.student},
                                    {"digest", rec["digest"]}, {"metrics", metrics}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    const RunView view{lesson.info, raw, d, withheld, "(recorded " + rec.value("started_at", "") + ")"};
    print_run(std::cout, view);
    std::cout << "run record: " << file << " (digest intact)\n";
    if (vm.count("plots"))
        for (const auto& line : write_plot_files(vm["plots"].as<std::string>(), view)) std::cout << "plot: " << line << "\n";
    return 0;
}

}  // namespace lab::cli
