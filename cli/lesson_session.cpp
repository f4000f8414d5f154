// Running and deriving a lesson (see lesson_session.hpp).
#include "lesson_session.hpp"

#include <chrono>
#include <ctime>
#include <iostream>

#include "course.hpp"
#include "course_token.hpp"
#include "lesson_host.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "run_record.hpp"

namespace lab::cli {

LessonOutcome run_lesson(const LessonRequest& r) {
    check_device_name(r.device);
    check_threads(r.threads);
    Catalog cat = discover(paths::plugin_dirs());
    // Found first: a lesson whose plugin was refused fails with that refusal, said once, not
    // also as the catalog's warning about skipping it.
    const PluginIdentity& ident = find_lesson(cat, r.id);
    for (const auto& w : cat.warnings) std::cerr << "warning: " << w << "\n";
    LessonOutcome out{load_lesson(ident.file), {}, {}, {}, 0, {}, {}};

    CourseConfig course = load_course(paths::config_dir() / "course.yaml");
    RunOptions options;
    bool anonymous = false;  // said once the run goes ahead, as the notes of on_going_ahead are
    if (r.replay) {
        options = *r.replay;
        out.token = r.replay_token;
    } else {
        options.quick = r.quick;
        options.student = normalise_student(resolve_student(r.student));
        const std::string token_text = resolve_token(r.token);
        Seed seed;
        if (!token_text.empty()) {
            auto token = parse_token(token_text);
            if (!token)
                throw UsageError("the course token '" + token_text + "' (--token, $LAB_TOKEN or token: in ~/.config/lab/config.yaml) "
                                 "is not shaped like one: STUDENT.XXXXXXXXXXXXXXXXXXXX\n  fix: copy it exactly as your instructor gave it");
            if (!options.student.empty() && options.student != token->student)
                throw UsageError("the course token is " + token->student + "'s, but the student is '" + options.student +
                                 "' (--student, $LAB_STUDENT or ~/.config/lab/config.yaml)\n  fix: use your own token, or drop the "
                                 "student setting: the token names you");
            options.student = token->student;
            seed = token_seed(*token, r.id);
            out.token = to_string(*token);
        } else {
            if (options.student.empty()) {
                options.student = "anonymous";
                anonymous = true;
            }
            seed = student_seed(course, r.id, options.student);
        }
        options.seed = seed.value;
        options.seed_hex = seed.hex;
    }

    ChildRequest req;
    req.action = "run";
    req.device = r.device;
    req.threads = r.threads;
    req.quick = options.quick;
    req.lesson_file = ident.file.string();
    req.options = options;
    req.lesson_budget_s = options.quick ? out.lesson.info.budget_quick_s : out.lesson.info.budget_full_s;
    req.timeout_s = r.timeout_s;
    req.trace_file = r.trace_file;
    req.trace_final_name = r.trace_final_name;

    out.started_at = format::utc_iso8601(std::time(nullptr));
    auto t0 = std::chrono::steady_clock::now();
    out.result = execute(req, [&] {
        if (anonymous) {
            // The config file where lab looks ($XDG_CONFIG_HOME's when set), so that a student who
            // writes one writes it there, not in a ~/.config lab never reads.
            const bool xdg = !paths::xdg_home("XDG_CONFIG_HOME").empty();
            std::cerr << "note: no student ID (--token, --student, $LAB_STUDENT or "
                      << (xdg ? paths::user_config_file().string() : std::string("~/.config/lab/config.yaml")) << "): "
                         "recording as 'anonymous'; such a run is graded for practice only\n";
        }
        if (r.on_going_ahead) r.on_going_ahead();
    });
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

namespace lab::cli {

LessonRequest replay_request(const nlohmann::json& record) {
    const RawRun raw = record::raw_run_from_record(record);
    LessonRequest req;
    req.id = raw.lesson_id;
    req.device = to_string(raw.device_kind);
    req.quick = raw.options.quick;
    req.replay = raw.options;
    req.replay_token = record.value("token", "");
    return req;
}

}  // namespace lab::cli
