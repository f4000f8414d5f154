// The grading commands: `lab answers` (a template bound to a run), `lab submit` (grade one
// submission; --results writes Gradescope's results.json, also when grading fails), `lab grade`
// (a class's submissions, a CSV gradebook) and `lab check-spec` (validate a grading spec).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "answers.hpp"
#include "atomic_file.hpp"
#include "batch.hpp"
#include "class_report.hpp"
#include "grading_outputs.hpp"
#include "consistency.hpp"
#include "course_token.hpp"
#include "command_files.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "lesson_plan.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "progress_bar.hpp"
#include "reports.hpp"
#include "roster.hpp"
#include "run_record.hpp"
#include "submission.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// Course mode when a key is configured (--key, else $LAB_COURSE_KEY), practice mode otherwise.
std::optional<CourseKey> course_key(const std::string& flag) {
    auto file = configured_key_file(flag);
    if (!file) return std::nullopt;
    return load_course_key(*file);
}

}  // namespace

namespace {

// `--spec FILE`: lesson ID's spec from FILE, not the configuration folder; a missing file is an
// error here rather than "lesson has no grading spec".
void use_spec_option(grader::GradingContext& ctx, const std::string& id, const po::variables_map& vm) {
    if (!vm.count("spec")) return;
    const fs::path file = vm["spec"].as<std::string>();
    if (!fs::is_regular_file(file)) throw InputError(file.string(), "no such grading spec", "give the spec's path (e.g. 02.13.yaml)");
    ctx.use_spec_file(id, file);
}

}  // namespace

int cmd_answers(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID")(
        "run", po::value<std::string>()->required(), "the run record the answers are for")(
        "spec", po::value<std::string>(), "the grading spec to use instead of the installed one (an instructor's draft)");
    po::positional_options_description pos;
    pos.add("id", 1);
    po::variables_map vm;
    if (!parse("answers", "lab answers ID --run RUN.json [--spec SPEC.yaml]", args, opts, pos, vm)) return 0;
    const std::string id = vm["id"].as<std::string>();
    grader::GradingContext ctx;
    ctx.lesson(id);  // an unknown ID ("02.13", "02.05 ") said as such, not as another lesson's run
    nlohmann::json rec = record::read_record(vm["run"].as<std::string>());
    std::string rec_lesson = rec["lesson"].value("id", "");
    if (rec_lesson != id)
        throw InputError(vm["run"].as<std::string>(), "the run is of lesson " + rec_lesson + ", not " + id,
                         "use lab answers " + rec_lesson + " --run ...");
    // No template for a record `lab show` refuses and `lab submit` will not grade (a review).
    grader::require_consistent(rec, record::raw_run_from_record(rec), vm["run"].as<std::string>());
    use_spec_option(ctx, id, vm);
    std::cout << grader::answers_template(ctx.spec(id), rec);
    // On stderr: the template itself stays clean YAML for `> answers.yaml`.
    if (rec.value("quick", false) && !ctx.spec(id).accept_quick)
        std::cerr << "note: this is a quick run, and lesson " << id << " grades full runs only: `lab submit` will refuse it; "
                  << "record a full run (`lab run " << id << "`) and make the answers for that one\n";
    // A run of another major version of the lesson: its questions may differ from this one's.
    const std::string recorded = rec["lesson"].value("plugin_version", ""), installed = ctx.lesson(id).info.version;
    if (!same_plugin_major(recorded, installed))
        std::cerr << "note: this run was recorded with lesson plugin " << recorded << ", but the installed plugin is " << installed
                  << ": `lab submit` will refuse it; record the run again (`lab run " << id << "`) and make the answers for that one\n";
    return 0;
}

namespace {

// `lab submit ID --refuse REASON --results FILE`: an autograder that refuses a submission before
// lab can grade it (a file missing, answers bound to no uploaded run, no course key) still gives
// the student the results file a refused grade gets: every question listed at 0 of its points,
// the reason, and the instructors' diagnostic. Exit 1: nothing was graded.
int refuse_submission(const std::string& id, const po::variables_map& vm) {
    if (!vm.count("results")) throw UsageError("--refuse writes a results.json: give --results FILE");
    if (vm.count("answers") || vm.count("run") || vm.count("as"))
        throw UsageError("--refuse grades nothing: give no answers file, --run or --as with it");
    const std::string reason = vm["refuse"].as<std::string>();
    if (reason.find_first_not_of(" \t\n") == std::string::npos) throw UsageError("--refuse needs the reason the student will read");
    const std::string diagnostic = vm.count("diagnostic") ? vm["diagnostic"].as<std::string>() : reason;
    // An unknown lesson or an unreadable spec is the operator's error: said, and nothing written.
    grader::GradingContext ctx;
    use_spec_option(ctx, id, vm);
    const grader::GradingSpec spec = ctx.spec(id);
    claim_output(vm["results"].as<std::string>(), "--results");
    write_file_atomically(vm["results"].as<std::string>(), grader::gradescope_failure(reason, diagnostic, 0, &spec).dump(2) + "\n");
    std::cerr << "refused (results.json written, every question at 0): " << reason << "\n";
    return 1;
}

// Where `lab submit` without --run looks for the run the answers are bound to: the folder `lab run`
// writes its records to by default (runs/ID-TIME.json) and the current folder, not their subfolders.
const std::vector<fs::path> kRunFolders = {"runs", "."};

// `lab submit ID ANSWERS.yaml` without --run: the record whose digest the answers name (their
// `run:`), found in kRunFolders. None is bad input, said before anything else happens; the
// grader then checks the record as it checks any other.
std::string find_bound_run(const std::string& answers_file) {
    const grader::AnswersFile answers = grader::load_answers(answers_file);
    std::string looked;
    for (const auto& dir : kRunFolders) looked += (looked.empty() ? "" : " and ") + (dir.string() == "." ? std::string("the current folder") : dir.string() + "/");
    if (answers.run.empty())
        throw InputError(answers_file, "the answers name no run (run: is empty), so no run record in " + looked + " can be theirs",
                         "pass --run RUN.json, and make the answers from that run's template (lab answers ID --run RUN.json)");
    int records = 0;
    for (const auto& dir : kRunFolders) {
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".json" && e.is_regular_file(ec) && e.file_size(ec) <= record::kMaxRecordBytes) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::ifstream in(f, std::ios::binary);
            const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
            if (text.find("\"lab.run/1\"") == std::string::npos) continue;  // not a run record
            ++records;
            if (text.find(answers.run) == std::string::npos) continue;
            const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
            if (j.is_object() && j.contains("digest") && j["digest"] == answers.run) return (dir.string() == "." ? f.filename() : f).string();
        }
    }
    throw InputError(answers_file,
                     fmt::format("no run record has the digest these answers are bound to (run: {}); looked at the {} run "
                                 "record{} in {}",
                                 answers.run, records, records == 1 ? "" : "s", looked),
                     "pass --run RUN.json: the record you made the answers from (lab answers ID --run RUN.json)");
}

}  // namespace

int cmd_submit(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("id", po::value<std::string>()->required(), "lesson ID")(
        "answers", po::value<std::string>(), "your answers file (YAML)")(
        "run", po::value<std::string>(),
        "the run record to grade (default: the one the answers are bound to, by its digest, found in runs/ or the current folder)")(
        "results", po::value<std::string>(), "write Gradescope's results.json here (needs --run)")(
        "key", po::value<std::string>()->default_value(""),
        "the course key (course mode: tokens checked); default $LAB_COURSE_KEY, else practice mode")(
        "as", po::value<std::string>(), "who submitted (the autograder's identity): the run must be theirs")(
        "refuse", po::value<std::string>(),
        "with --results and no answers: refuse the submission for this reason (an autograder's own check), every question at 0")(
        "diagnostic", po::value<std::string>(), "with --refuse: what only instructors see (default: the reason)")(
        "spec", po::value<std::string>(), "the grading spec to use instead of the installed one (an instructor's draft)")(
        "json", "print the grade as JSON");
    po::positional_options_description pos;
    pos.add("id", 1).add("answers", 1);
    po::variables_map vm;
    if (!parse("submit",
               "lab submit ID ANSWERS.yaml [--run RUN.json] [--results results.json] [--key FILE] [--as STUDENT] [--spec SPEC.yaml] [--json]"
               " (an autograder's refusal: lab submit ID --refuse REASON [--diagnostic TEXT] --results results.json)",
               args, opts, pos, vm))
        return 0;
    const std::string id = vm["id"].as<std::string>();
    const bool results = vm.count("results") > 0;
    if (vm.count("refuse")) return refuse_submission(id, vm);
    if (vm.count("diagnostic")) throw UsageError("--diagnostic goes with --refuse");
    if (!vm.count("answers")) throw UsageError("the answers file is missing: lab submit " + id + " answers.yaml [--run RUN.json]");
    const std::string answers = vm["answers"].as<std::string>();
    if (results && !vm.count("run"))
        throw UsageError("--results needs --run: a grader must grade the student's own recorded run, never one it makes itself");
    // The files it will read, named before any is read: a results.json written over the run
    // record (or the course key) would destroy what it graded.
    if (results) {
        for (const char* in : {"answers", "run", "key", "spec"})
            if (vm.count(in)) note_input(vm[in].as<std::string>());
        if (const auto key = configured_key_file(vm.count("key") ? vm["key"].as<std::string>() : "")) note_input(*key);
        claim_output(vm["results"].as<std::string>(), "--results");
    }

    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    // With --results every failure still leaves a results.json: score 0 for the student, the
    // diagnostic for instructors, each question at 0 of its points when the spec can be read.
    auto fail_results = [&](std::string student_msg, const std::string& diagnostic) {
        if (!results) return;
        // The student sees their files by name, not the grading server's folders.
        for (const std::string& file : {answers, vm.count("run") ? vm["run"].as<std::string>() : std::string()}) {
            const std::string dir = fs::path(file).parent_path().string();
            if (dir.empty()) continue;
            for (std::size_t at; (at = student_msg.find(dir + "/")) != std::string::npos;) student_msg.erase(at, dir.size() + 1);
        }
        std::optional<grader::GradingSpec> spec;
        try {
            grader::GradingContext ctx;
            use_spec_option(ctx, id, vm);
            spec = ctx.spec(id);
        } catch (const std::exception&) {
            // The spec itself may be what failed: the results file goes without the questions.
        }
        write_file_atomically(vm["results"].as<std::string>(),
                              grader::gradescope_failure(student_msg, diagnostic, elapsed(), spec ? &*spec : nullptr).dump(2) + "\n");
    };
    // What the grader brings is checked before the student's files: the lesson (named first: ""
    // graded the answers' own lesson, and an unknown ID was said only as a mismatch with the
    // answers'), the course key and the grading spec. A broken spec on an autograder is the
    // instructor's: the student was told "your submission could not be graded: <the spec's path,
    // line and question>", blamed and shown what the spec asks (an instructor review). They get
    // "the autograder failed"; the error goes to the instructors' test.
    std::optional<grader::GradingContext> ctx;
    try {
        grader::GradingContext(std::nullopt).lesson(id);
        ctx.emplace(course_key(vm["key"].as<std::string>()));
        use_spec_option(*ctx, id, vm);
        ctx->spec(id);
    } catch (const std::exception& e) {
        fail_results("The autograder failed while grading your submission; your instructor has been given the details.",
                     std::string("autograder set-up error (the lesson, course key or grading spec, not the submission): ") + e.what());
        throw;
    }
    try {
        std::string run;
        if (vm.count("run")) {
            run = vm["run"].as<std::string>();
        } else {
            // Answers name the run they were made from: a run made now could never be it.
            run = find_bound_run(answers);
            std::cerr << "no --run given: grading the run " << answers << " is bound to, " << run << "\n";
        }
        std::optional<std::string> submitter;
        if (vm.count("as")) submitter = vm["as"].as<std::string>();
        grader::GradeReport report = grader::grade_files(*ctx, id, answers, run, submitter);
        if (results)
            write_file_atomically(vm["results"].as<std::string>(), grader::gradescope_results(report, elapsed()).dump(2) + "\n");
        if (vm.count("json")) std::cout << grader::json_report(report).dump(2) << "\n";
        else std::cout << grader::console_report(report);
        return report.graded ? 0 : 1;
    } catch (const InputError& e) {
        fail_results("Your submission could not be graded: " + std::string(e.what()), e.what());
        throw;
    } catch (const UsageError& e) {
        fail_results("Your submission could not be graded: " + std::string(e.what()), e.what());
        throw;
    } catch (const std::exception& e) {
        fail_results("The autograder failed while grading your submission; your instructor has been given the details.",
                     std::string("autograder failure: ") + e.what());
        throw;
    }
}

namespace {

// `lab grade --help`: the layout is the contract an operator most often gets wrong.
constexpr const char* kGradeUsage =
    "lab grade SUBMISSIONS_DIR [--out gradebook.csv] [--report class.html] [--key FILE] [--lesson ID] [--spec SPEC.yaml] [--roster ROSTER.csv [--identity COLUMN]] [--json]\n\n"
    "SUBMISSIONS_DIR holds one folder per submission (SUBMISSIONS_DIR/alice/, SUBMISSIONS_DIR/bob_1234/, or Gradescope's\n"
    "submission_1001/), each with the student's answers file(s) and run record(s), found by content whatever their names.\n"
    "Each answers file is graded against the run it names (its run: digest), so resubmissions in one folder are fine; a\n"
    "folder holding several lessons gives one gradebook row per lesson. A folder holding several students' files is\n"
    "refused: give each student their own folder. An export with one more level (DIR/export/{alice,bob}) is descended.";

bool flagged(const grader::BatchEntry& e, const std::string& flag) { return std::find(e.flags.begin(), e.flags.end(), flag) != e.flags.end(); }

}  // namespace

int cmd_grade(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("dir", po::value<std::string>()->required(), "one folder per submission, each with answers and a run record")(
        "out", po::value<std::string>()->default_value("gradebook.csv"), "the CSV gradebook")(
        "report", po::value<std::string>(), "also write the class's HTML page, and each run's page in <name>-reports/ beside it")(
        "key", po::value<std::string>()->default_value(""),
        "the course key (course mode: tokens checked); default $LAB_COURSE_KEY, else practice mode")(
        "lesson", po::value<std::string>(), "the assignment's lesson: submissions of another lesson are refused, row by row")(
        "spec", po::value<std::string>(), "a grading spec to use instead of the installed one for the lesson its `lesson:` names")(
        "roster", po::value<std::string>(), "the class roster, read as lab token reads it: a `missing` row per student with no submission")(
        "identity", po::value<std::string>()->default_value(""), "with --roster: which column is the student ID, as for lab token")(
        "json", "print the summary, and every row, as JSON");
    po::positional_options_description pos;
    pos.add("dir", 1);
    po::variables_map vm;
    if (!parse("grade", kGradeUsage, args, opts, pos, vm)) return 0;
    const fs::path report = vm.count("report") ? fs::path(vm["report"].as<std::string>()) : fs::path();
    if (const fs::path out = vm["out"].as<std::string>(); fs::is_directory(out) || out.filename().empty())
        throw UsageError("--out " + out.string() + " is a folder: give the gradebook a file name\n  fix: --out " + (out / "gradebook.csv").string());
    if (!report.empty() && (fs::is_directory(report) || report.filename().empty()))
        throw UsageError("--report " + report.string() + " is a folder: give a file name, e.g. class.html");
    if (!report.empty() && report.lexically_normal() == fs::path(vm["out"].as<std::string>()).lexically_normal())
        throw UsageError("--report and --out are both " + report.string() + ": give the page its own name, e.g. class.html");
    // Both outputs tried before grading: a report that cannot be written must not leave a
    // gradebook already replaced behind an exit 2.
    claim_output(vm["out"].as<std::string>(), "--out");
    if (!report.empty()) claim_output(report, "--report");
    check_writable(vm["out"].as<std::string>(), "--out");
    if (!report.empty()) check_writable(report, "--report");
    grader::BatchOptions options;
    if (vm.count("lesson")) options.lesson = vm["lesson"].as<std::string>();
    if (vm.count("roster")) {
        const grader::Roster roster = grader::read_roster(vm["roster"].as<std::string>(), vm["identity"].as<std::string>());
        for (const auto& student : roster.students) options.roster.push_back(student.id);
        options.roster_rule = roster.rule;
        if (!roster.warning.empty()) std::cerr << "warning: " << roster.warning << "\n";
    }
    grader::GradingContext ctx(course_key(vm["key"].as<std::string>()));
    if (vm.count("spec")) {
        // The spec says which lesson it grades; a class may hold several lessons, and only that
        // one's spec is replaced.
        const fs::path file = vm["spec"].as<std::string>();
        if (!fs::is_regular_file(file)) throw InputError(file.string(), "no such grading spec", "give the spec's path (e.g. 02.13.yaml)");
        const grader::GradingSpec draft = grader::load_spec(file, ctx.course().accept_quick, ctx.course().show_expected);
        if (!options.lesson.empty() && draft.lesson != options.lesson)
            throw InputError(file.string() + (draft.lesson_line > 0 ? ":" + std::to_string(draft.lesson_line) : ""),
                             "the spec is for lesson " + draft.lesson + ", but --lesson is " + options.lesson,
                             "give lesson " + options.lesson + "'s spec, or --lesson " + draft.lesson);
        ctx.use_spec_file(draft.lesson, file);
        ctx.spec(draft.lesson);   // checked against its lesson before any grading
    }
    auto t0 = std::chrono::steady_clock::now();
    stderr_progress().start("grading", 0);
    grader::BatchResult r;
    try {
        r = grader::grade_directory(ctx, vm["dir"].as<std::string>(), [](const std::string& folder, std::size_t done, std::size_t total) {
            stderr_progress().update(folder, done, total);
        }, options);
    } catch (...) {
        stderr_progress().clear();
        throw;
    }
    stderr_progress().clear();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (vm.count("json"))   // the summary below says them otherwise; stdout holds only the JSON
        for (const auto& n : r.notes) std::cerr << "note: " << n << "\n";
    for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    // Checked again now that the class's files are read: --out class/alice/run.json is one of them.
    claim_output(vm["out"].as<std::string>(), "--out");
    if (!report.empty()) claim_output(report, "--report");
    // Every output made before any is written, then written as one set: a grading stopped
    // half-way (kill -9) leaves the old set, or a marker saying the files may disagree, which
    // the next run repairs (grading_outputs.hpp).
    grader::GradingOutputs outputs{vm["out"].as<std::string>(), grader::gradebook_csv(r), std::nullopt};
    if (!report.empty()) outputs.report = grader::render_class_report(ctx, r, r.graded_dir, report);
    const grader::OutputsWritten w = grader::write_grading_outputs(outputs);
    std::string report_line;
    if (outputs.report)
        report_line = fmt::format("class report: {} ({} run page{} in {}{})", report.string(), w.student_pages,
                                  w.student_pages == 1 ? "" : "s", outputs.report->pages_dir.string(),
                                  w.stale_removed == 0 ? std::string()
                                                       : fmt::format("; removed {} page{} of the last report whose submission is gone",
                                                                     w.stale_removed, w.stale_removed == 1 ? "" : "s"));
    if (w.earlier_interrupted)
        std::cerr << "note: an earlier `lab grade` stopped while writing " << vm["out"].as<std::string>()
                  << (outputs.report ? " and its class report: this one wrote them all again"
                                     : " and its class report (" + grader::incomplete_marker(vm["out"].as<std::string>()).string() +
                                           " says so): give --report again to write the class report again")
                  << "\n";
    int graded = 0, not_graded = 0, errors = 0, practice = 0, missing = 0;
    for (const auto& e : r.entries) {
        if (e.missing) {
            missing++;
            continue;
        }
        (e.ok ? (e.report.graded ? graded : not_graded) : errors)++;
        practice += e.status() == "practice";
    }
    const std::size_t submissions = r.entries.size() - missing;
    if (vm.count("json")) {
        nlohmann::json missed = nlohmann::json::array();
        for (const auto& [q, f] : r.most_missed) missed.push_back({{"question", q}, {"missed_fraction", f}});
        nlohmann::json errs = nlohmann::json::array(), rows = nlohmann::json::array();
        for (const auto& e : r.entries) {
            if (!e.ok && !e.missing) errs.push_back({{"folder", e.folder}, {"lesson", e.lesson}, {"error", e.error}, {"kind", e.error_kind}});
            const bool scored = e.ok && e.report.graded;
            rows.push_back({{"folder", e.folder}, {"student", e.student}, {"lesson", e.lesson}, {"score", scored ? e.report.score : 0.0},
                            {"max", e.report.max_score > 0 ? nlohmann::json(e.report.max_score) : nlohmann::json(nullptr)},
                            {"status", e.status()}, {"reason", e.reason()}, {"flags", e.flags},
                            {"run", e.run_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.run_file)}, {"ignored", e.ignored}, {"latest_doubt", e.latest_doubt.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.latest_doubt)}});
        }
        nlohmann::json flags = nlohmann::json::array();
        for (const auto& g : r.groups)
            flags.push_back({{"group", g.id}, {"kind", g.kind}, {"folders", g.folders}, {"evidence", g.evidence}});
        nlohmann::json specs = nlohmann::json::array();
        for (const auto& sp : r.specs)
            specs.push_back({{"lesson", sp.lesson}, {"file", sp.file}, {"sha256", sp.sha256}, {"plugin_version", sp.plugin_version}});
        nlohmann::json mismatched = nlohmann::json::array();
        for (const auto& e : r.entries)
            if (flagged(e, "folder_mismatch")) mismatched.push_back({{"folder", e.folder}, {"student", e.run_student}});
        std::cout << nlohmann::json{{"submissions", submissions}, {"graded", graded}, {"practice", practice},
                                    {"not_graded", not_graded}, {"missing", missing}, {"errors", errs}, {"most_missed", missed},
                                    {"flags", flags}, {"folder_mismatch", mismatched}, {"rows", rows}, {"notes", r.notes},
                                    {"warnings", r.warnings},
                                    {"mode", ctx.key() ? "course" : "practice"}, {"specs", specs},
                                    {"gradebook", vm["out"].as<std::string>()}, {"seconds", secs},
                                    {"report", report.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.string())}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    std::cout << fmt::format("{} submissions in {:.2f} s: {} graded, {} not graded (implausible or refused), {} could not be read\n",
                             submissions, secs, graded, not_graded, errors);
    if (missing) std::cout << fmt::format("{} student{} on the roster handed in nothing (status missing)\n", missing, missing == 1 ? "" : "s");
    // Which spec graded: a regrade after the spec was edited is told apart by its sha256.
    for (const auto& sp : r.specs) std::cout << "graded with " << grader::spec_used_text(sp) << "\n";
    for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
    if (!ctx.key())
        std::cout << "practice mode: no course key (--key FILE or $LAB_COURSE_KEY), so no token was checked\n";
    // Each row not graded with its reason, the unreadable and the refused alike: a count alone
    // sends the operator to the gradebook to find which rows, and why.
    for (const auto& e : r.entries) {
        if (e.missing || (e.ok && e.report.graded)) continue;
        const std::string where = "  " + e.folder + (e.lesson.empty() ? "" : " (" + e.lesson + ")") + ": ";
        if (!e.ok) std::cout << where << e.error << "\n";
        else std::cout << where << "refused: " << e.reason() << "\n";
    }
    for (const auto& e : r.entries)
        if (!e.ignored.empty()) {
            std::string list;
            for (const auto& f : e.ignored) list += (list.empty() ? "" : ", ") + f;
            // "graded" only of a row that was: a refused one's run was chosen, not graded.
            const std::string file = fs::path(e.run_file).filename().string();
            const std::string chosen = e.ok && e.report.graded ? "graded " + file : fmt::format("chose {} ({}, not graded)", file, e.status());
            std::cout << fmt::format("  {}: {}; not graded: {} (another run of lesson {})\n", e.folder, chosen, list, e.lesson);
            if (!e.latest_doubt.empty()) std::cout << "    note: " << e.latest_doubt << "\n";
        }
    if (!r.most_missed.empty()) {
        std::cout << "\nMost missed questions\n";
        // One column for the percentages, as wide as the longest question ID
        // (kv_exceeds_weights_context is 26 characters).
        std::size_t width = 0;
        for (const auto& m : r.most_missed) width = std::max(width, m.first.size());
        for (const auto& [q, f] : r.most_missed) std::cout << fmt::format("  {:<{}} {:>3.0f}% not correct\n", q, width, 100 * f);
    }
    if (!r.groups.empty()) {
        std::cout << "\nFlagged for the instructor (scores unchanged: you decide)\n";
        for (const auto& g : r.groups) {
            std::string folders;
            for (const auto& f : g.folders) folders += (folders.empty() ? "" : ", ") + f;
            std::cout << fmt::format("  {} {}: {}\n      {}\n", g.id, g.kind, folders, g.evidence);
        }
    }
    for (const auto& e : r.entries)
        if (flagged(e, "folder_mismatch"))
            std::cout << fmt::format("  folder_mismatch: folder '{}' holds the run of '{}'\n", e.folder, e.run_student);
    for (const auto& e : r.entries)
        if (flagged(e, "duplicate_student"))
            std::cout << fmt::format("  duplicate_student: folder '{}' ({}): {} (the gradebook keeps every row: decide which counts)\n", e.folder,
                                     e.status(), e.duplicate_note);
    std::cout << "\ngradebook: " << vm["out"].as<std::string>() << "\n";
    if (!report_line.empty()) std::cout << report_line << "\n";
    return 0;
}

namespace {

// Each metric's values in recorded runs of `lesson_id`, re-derived as the grader derives them, with
// where ("the run r.json"): what `lab check-spec --run` holds a spec's tolerances against. A
// question whose metric a run lacks, on a device the question applies to, adds a warning to
// `missing`: the grader voids it for that run, and the student loses its points without a word.
std::map<std::string, std::vector<ModelValue>> run_values(grader::GradingContext& ctx, const grader::GradingSpec& spec,
                                                          const std::vector<std::string>& files, std::vector<std::string>& missing) {
    const std::string& lesson_id = spec.lesson;
    std::map<std::string, std::vector<ModelValue>> out;
    for (const auto& file : files) {
        const nlohmann::json rec = record::read_record(file);
        const RawRun raw = record::raw_run_from_record(rec);
        if (raw.lesson_id != lesson_id)
            throw InputError(file, fmt::format("a run of lesson {}, where the spec grades lesson {}", raw.lesson_id, lesson_id),
                             "give runs of lesson " + lesson_id + " with --run");
        const LoadedLesson& lesson = ctx.lesson(lesson_id);
        check_plugin_version(lesson, rec, file);
        grader::require_consistent(rec, raw, file);
        const Derivation d = derive_run(lesson, raw, file);
        for (const auto& m : d.metrics) out[m.name].push_back({"the run " + file, m});
        const std::string kind = to_string(raw.device_kind);
        for (const auto& q : spec.questions) {
            const bool applies = q.applies_to.empty() || std::find(q.applies_to.begin(), q.applies_to.end(), kind) != q.applies_to.end();
            if (!applies || q.expected.metric.empty() || d.find(q.expected.metric)) continue;
            // A quick run of a spec that grades full runs only is refused, not voided.
            if (raw.options.quick && !spec.accept_quick) continue;
            // check_spec_against has refused a metric the lesson does not declare.
            const auto decl = std::find_if(lesson.info.metrics.begin(), lesson.info.metrics.end(),
                                           [&](const MetricDecl& m) { return m.name == q.expected.metric; });
            const std::vector<std::string> on = decl != lesson.info.metrics.end() ? decl->devices : std::vector<std::string>{};
            std::string fix;
            if (std::find(on.begin(), on.end(), kind) == on.end())
                fix = fmt::format("the lesson declares it for {0} runs only: add `applies_to: [{0}]` to the question", fmt::join(on, ", "));
            else if (raw.options.quick && decl != lesson.info.metrics.end() && !decl->quick)
                fix = "the lesson declares it for full runs only: grade full runs only (accept_quick: false), or leave the question out";
            else if (unset_by_lesson(lesson.info, d, raw, q.expected.metric))
                fix = "the lesson declares it for " + kind + " runs but its derive() did not set it in this one: set it on every run";
            else
                fix = "this run's device did not produce it (a skipped workload, or no hardware counters or telemetry read): "
                      "such runs void the question; add `applies_to` if only some devices can answer it";
            missing.push_back(fmt::format("{}:{}: question '{}': the {} run {} has no value for metric '{}', so the grader voids the question "
                                          "for it (its points are not counted)\n  fix: {}",
                                          spec.file, q.line_of("expected.metric"), q.id, kind, file, q.expected.metric, fix));
        }
    }
    return out;
}

}  // namespace

int cmd_check_spec(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("file", po::value<std::string>(), "a grading spec (configs/grading/<ID>.yaml), or a lesson ID for the one lab grades it with")(
        "keys", "list the spec's keys, each with its meaning and default")(
        "run", po::value<std::vector<std::string>>()->composing(),
        "a run record of the lesson (repeatable): hold the tolerances against its values too, as the model devices' are");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse("check-spec", "lab check-spec FILE|ID [--run RUN.json ...] | --keys", args, opts, pos, vm)) return 0;
    if (vm.count("keys")) {
        for (const auto& k : grader::schema())
            std::cout << fmt::format("{:<10} {:<18} {}  (default: {})\n", k.where, k.key, k.meaning, k.default_value);
        return 0;
    }
    if (!vm.count("file")) throw UsageError("give a spec file (or a lesson ID), or --keys: lab check-spec FILE|ID | --keys");
    grader::GradingContext ctx;
    std::string file = vm["file"].as<std::string>();
    // A lesson ID ("02.10") names the spec lab grades that lesson with, as `lab submit` finds it.
    if (const std::filesystem::path as_given = file;
        !std::filesystem::exists(as_given) && file.find('/') == std::string::npos && as_given.extension() != ".yaml" && as_given.extension() != ".yml") {
        ctx.lesson(file);  // an unknown ID is said as such, not as a spec file that does not exist
        file = ctx.spec_file(file).string();
    }
    grader::GradingSpec spec = grader::load_spec(file, ctx.course().accept_quick, ctx.course().show_expected);
    try {
        ctx.lesson(spec.lesson);
    } catch (const UsageError& e) {
        // Most often a typo in the spec's `lesson:`: point at that line, then say what lab found.
        // The loader's message ends with its own fix line, for `lab run ID`; one fix is said here,
        // the spec's.
        const int line = spec.lesson_line;
        std::string found = e.what();
        found = found.substr(0, found.find("\n"));
        throw InputError(file + (line > 0 ? ":" + std::to_string(line) : ""), "lesson '" + spec.lesson + "' is not one lab finds: " + found,
                         "correct `lesson:` in the spec (`lab list` lists the lessons), or add the lesson plugin's folder to LAB_PLUGIN_PATH");
    }
    grader::check_spec_against(spec, ctx.lesson(spec.lesson).info);
    grader::check_spec_sweeps(spec, *ctx.lesson(spec.lesson).lesson);
    auto warnings = grader::spec_warnings(spec, ctx.lesson(spec.lesson).info);
    for (const auto& w : grader::model_value_warnings(spec, model_values(*ctx.lesson(spec.lesson).lesson, spec.lesson))) warnings.push_back(w);
    // The model devices are no student's: a latency-bound chase reaches most of a model's roof and
    // under 1% of a real one. Real runs (the instructor's own) show what a tolerance does to
    // values students will have.
    if (vm.count("run")) {
        const auto runs = vm["run"].as<std::vector<std::string>>();
        std::vector<std::string> missing;
        const auto values = run_values(ctx, spec, runs, missing);
        for (const auto& w : grader::model_value_warnings(spec, values, runs.size() == 1 ? "the run given" : "every run given")) warnings.push_back(w);
        warnings.insert(warnings.end(), missing.begin(), missing.end());
    }
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
    double points = 0;
    for (const auto& q : spec.questions) points += q.points;
    // load_spec and check_spec_against refuse (exit 2) every mistake they find, the lint included:
    // a spec that prints this line is one the grader will load as it is.
    std::cout << fmt::format("{}: lesson {}, {} questions, {:g} points; every metric is declared by the plugin and every "
                             "measured value has a tolerance\n",
                             file, spec.lesson, spec.questions.size(), points);
    return 0;
}

}  // namespace lab::cli
