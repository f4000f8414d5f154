// Running and deriving a lesson (see lesson_session.hpp).
#include "lesson_session.hpp"

#include <chrono>
#include <ctime>
#include <iostream>

#include "course.hpp"
#include "lesson_host.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"

namespace lab::cli {

LessonOutcome run_lesson(const LessonRequest& r) {
    check_device_name(r.device);
    if (r.threads < 0) throw UsageError("--threads must be positive");
    Catalog cat = discover(paths::plugin_dirs());
    for (const auto& w : cat.warnings) std::cerr << "warning: " << w << "\n";
    const PluginIdentity& ident = find_lesson(cat, r.id);
    LessonOutcome out{load_lesson(ident.file), {}, {}, {}, 0, {}};

    CourseConfig course = load_course(paths::config_dir() / "course.yaml");
    std::string student = normalise_student(resolve_student(r.student));
    if (student.empty()) {
        student = "anonymous";
        std::cerr << "note: no student ID (--student, $LAB_STUDENT or ~/.config/lab/config.yaml): "
                     "recording as 'anonymous'; such a run cannot be submitted for grading\n";
    }
    Seed seed = student_seed(course, r.id, student);

    ChildRequest req;
    req.action = "run";
    req.device = r.device;
    req.threads = r.threads;
    req.quick = r.quick;
    req.lesson_file = ident.file.string();
    req.options = {r.quick, student, seed.value, seed.hex};
    req.lesson_budget_s = r.quick ? out.lesson.info.budget_quick_s : out.lesson.info.budget_full_s;
    req.timeout_s = r.timeout_s;
    req.trace_file = r.trace_file;
    req.trace_final_name = r.trace_final_name;

    out.started_at = format::utc_iso8601(std::time(nullptr));
    auto t0 = std::chrono::steady_clock::now();
    out.result = execute(req);
    out.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    out.raw.lesson_id = r.id;
    out.raw.options = req.options;
    out.raw.device_kind = out.result.kind;
    out.raw.facts = out.result.facts;
    out.raw.ceilings_at_start = out.result.ceilings;
    out.raw.ceiling_measurements = out.result.ceiling_measurements;
    out.raw.measurements = out.result.measurements;
    out.raw.skipped = out.result.skipped;
    out.raw.ceilings = effective_ceilings(out.raw.ceilings_at_start, out.raw.ceiling_measurements, out.raw.measurements);
    out.derivation = derive_run(out.lesson, out.raw, "this run (no run record written)");
    return out;
}

}  // namespace lab::cli
