// `lab report RUN.json [--out FILE.html] [--reveal]`: a recorded run as one self-contained HTML
// page (run_html.hpp), re-derived from its raw measurements as `lab show` does and withholding
// what `lab show` withholds. The page is written atomically, beside the run by default.
#include <filesystem>
#include <iostream>

#include "atomic_file.hpp"
#include "commands.hpp"
#include "consistency.hpp"
#include "course.hpp"
#include "errors.hpp"
#include "lesson_host.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "run_html.hpp"
#include "run_record.hpp"
#include "run_report.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

int cmd_report(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("run", po::value<std::string>()->required(), "a run record written by `lab run`")(
        "out", po::value<std::string>(), "the page to write (default: the run's name with .html, beside it)")(
        "reveal", "show graded values too (if the course allows it, or the run was recorded with --reveal)");
    po::positional_options_description pos;
    pos.add("run", 1);
    po::variables_map vm;
    if (!parse("report", "lab report RUN.json [--out FILE.html] [--reveal]", args, opts, pos, vm)) return 0;
    const std::string file = vm["run"].as<std::string>();
    const fs::path out = report_path("--out", vm.count("out") ? fs::path(vm["out"].as<std::string>())
                                                              : fs::path(file).replace_extension(".html"), file);

    const nlohmann::json rec = record::read_record(file);
    const RawRun raw = record::raw_run_from_record(rec);
    LessonHost host;
    for (const auto& w : host.warnings()) std::cerr << "warning: " << w << "\n";
    const LoadedLesson& lesson = host.lesson(raw.lesson_id);
    check_plugin_version(lesson, rec, file);
    grader::require_consistent(rec, raw, file);
    // As `lab show`: revealing needs the course's leave. A run recorded with --reveal already
    // holds every value, so its page may show them too.
    const bool reveal = vm.count("reveal") > 0;
    if (reveal && !rec.value("revealed", false)) require_reveal_allowed(paths::config_dir() / "course.yaml");
    const Derivation d = derive_run(lesson, raw, file);
    const auto withheld = record::withheld_metrics(lesson.info, reveal, raw.device_kind);
    write_file_atomically(out, render_run_html(RunPage{lesson.info, raw, d, withheld, rec, file}));
    std::cout << "report: " << out.string() << "\n";
    return 0;
}

}  // namespace lab::cli
