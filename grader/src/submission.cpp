// The grading pipeline (see submission.hpp).
#include "submission.hpp"

#include "answers.hpp"
#include "errors.hpp"
#include "lesson_plan.hpp"
#include "paths.hpp"
#include "run_record.hpp"

namespace lab::grader {

GradingContext::GradingContext(std::optional<CourseKey> key)
    : course_(load_course(paths::config_dir() / "course.yaml")), key_(std::move(key)) {}

const LoadedLesson& GradingContext::lesson(const std::string& id) { return host_.lesson(id); }

std::filesystem::path GradingContext::spec_file(const std::string& id) {
    if (auto it = spec_files_.find(id); it != spec_files_.end()) return it->second;
    const std::filesystem::path installed = paths::config_dir() / "grading" / (id + ".yaml");
    if (std::filesystem::exists(installed)) return installed;
    try {
        if (auto beside = spec_beside_plugin(lesson(id).identity.file, id)) return *beside;
    } catch (const std::exception&) {
        // no such lesson: spec() says so, naming the installed path
    }
    return installed;
}

const GradingSpec& GradingContext::spec(const std::string& id) {
    auto it = specs_.find(id);
    if (it != specs_.end()) return it->second;
    auto file = spec_file(id);
    // Most often the spec exists, in the lesson's source folder, and lab is not looking there:
    // say each way of pointing at it.
    if (!std::filesystem::exists(file))
        throw InputError(file.string(), "lesson " + id + " has no grading spec",
                         "point lab at it: --spec FILE (lab answers, submit and grade take one), `meson install -C build` in the "
                         "lesson's folder (installs " + id + ".yaml into lab's configs/grading/), or LAB_CONFIG_DIR set to a copy "
                         "of lab's configs/ holding grading/" + id + ".yaml");
    GradingSpec s = load_spec(file, course_.accept_quick, course_.show_expected);
    check_spec_against(s, lesson(id).info);
    check_spec_sweeps(s, *lesson(id).lesson);
    return specs_.emplace(id, std::move(s)).first->second;
}

GradeReport grade_files(GradingContext& ctx, const std::string& lesson_id, const std::filesystem::path& answers_file,
                        const std::filesystem::path& run_file, const std::optional<std::string>& submitter) {
    const nlohmann::json record = record::read_record(run_file);
    return grade_read_run(ctx, lesson_id, answers_file, record, record::raw_run_from_record(record), run_file, submitter);
}

GradeReport grade_read_run(GradingContext& ctx, const std::string& lesson_id, const std::filesystem::path& answers_file,
                           const nlohmann::json& record, const RawRun& raw, const std::filesystem::path& run_file,
                           const std::optional<std::string>& submitter) {
    AnswersFile answers = load_answers(answers_file);
    const std::string id = lesson_id.empty() ? answers.lesson : lesson_id;
    // Which lesson, before anything lesson-specific runs: a run of another lesson is bad input.
    if (answers.lesson != id) {
        // `lesson: 2.02` is lesson 02.02 with its leading zero lost (or never written).
        const bool zero_lost = id.size() == answers.lesson.size() + 1 && id[0] == '0' && id.substr(1) == answers.lesson;
        // Answers and run both of another lesson: a submission to the wrong assignment. Correcting
        // the lesson: line would only bring the next refusal (an operator's review followed it).
        if (!zero_lost && raw.lesson_id == answers.lesson)
            throw InputError(answers.file, "the answers and the run are of lesson " + answers.lesson + ", and this grades lesson " + id,
                             "submit them where lesson " + answers.lesson + " is graded; for lesson " + id + ", record `lab run " + id +
                                 "`, make its answers with `lab answers " + id + " --run RUN.json` and submit those");
        throw InputError(answers.file, "the answers are for lesson '" + answers.lesson + "' but are being graded as " + id,
                         zero_lost ? "write the lesson as lab does, in quotes: lesson: \"" + id + "\""
                                   : "submit them for lesson " + answers.lesson + ", or correct their lesson: line");
    }
    if (raw.lesson_id != id)
        throw InputError(run_file.string(), "the run record is of lesson '" + raw.lesson_id + "', not " + id,
                         "submit the run of lesson " + id);
    if (submitter) {
        const std::string who = normalise_student(*submitter), recorded = normalise_student(raw.options.student);
        if (who.empty() || who == "anonymous")
            throw InputError("", "the grader was not told who submitted (--as is empty)",
                             "the operator: check how run_autograder reads the submitter's identity");
        if (recorded.empty() || recorded == "anonymous")
            throw InputError(run_file.string(), "the run record names no student (anonymous run)",
                             "record your own run with `lab run " + id + " --token YOUR_TOKEN` and resubmit");
        if (recorded != who)
            throw InputError(run_file.string(), "this run was recorded for '" + recorded + "', but you are '" + who + "'",
                             "record your own run with `lab run " + id + " --token YOUR_TOKEN` and resubmit");
    }
    const LoadedLesson& lesson = ctx.lesson(id);
    const GradingSpec& spec = ctx.spec(id);
    // The lesson's plan, replayed against the record's own device facts, options and
    // measurements: the workloads, their sizes and counts must be the ones it requests.
    std::vector<std::string> plan_problems = replay_plan(*lesson.lesson, raw);
    // A record the plan does not give may not derive at all (a workload renamed): it is graded
    // as implausible, with the plan's differences, not refused as a plugin failure.
    Derivation derived;
    try {
        derived = lesson.lesson->derivation(raw);
    } catch (const std::exception&) {
        if (plan_problems.empty()) derived = derive_run(lesson, raw, run_file.string());  // the plugin's failure: said as such
    }
    Submission s{spec, lesson.info, record, raw, derived, answers, &ctx.course(), std::move(plan_problems), ctx.key(), run_file};
    check_binding(s);
    return grade(s);
}

}  // namespace lab::grader
