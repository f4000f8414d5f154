// What the grading tests share (see grading_fixtures.hpp).
#include "grading_fixtures.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "course.hpp"
#include "derived_values.hpp"
#include "errors.hpp"
#include "run_record.hpp"

namespace lab_test::grading {

using namespace lab::grader;

const lab::LoadedLesson& lesson(const std::string& id) {
    static std::map<std::string, std::unique_ptr<lab::LoadedLesson>> loaded;
    auto it = loaded.find(id);
    if (it == loaded.end()) {
        std::string dir = id.substr(0, 2) + "_" + id.substr(3);  // "02.05" -> "02_05"
        fs::path so = lab_test::build_root() / "labs" / dir / ("lab_" + dir + ".so");
        it = loaded.emplace(id, std::make_unique<lab::LoadedLesson>(lab::load_lesson(so))).first;
    }
    return *it->second;
}

fs::path fixture_run_file(const std::string& name) { return lab_test::source_root() / "tests/fixtures/runs/cpu" / name; }

void Run::refresh() {
    raw = lab::record::raw_run_from_record(record);
    derived = lesson(raw.lesson_id).lesson->derivation(raw);
}

void Run::reseal() {
    lab::record::seal(record);
    refresh();
}

double Run::number(const std::string& name) const { return lab_test::derived_number(derived, name); }

std::string Run::text(const std::string& name) const { return lab_test::derived_text(derived, name); }

json& Run::workload(const std::string& name) {
    for (auto& w : record["workloads"])
        if (w["name"] == name) return w;
    FAIL("the fixture has no workload " << name);
    throw;
}

void Run::restore_stored_values() {
    if (record.contains("metrics"))
        for (auto& [name, stored] : record["metrics"].items())
            if (const lab::MetricValue* m = derived.find(name)) stored["value"] = lab::record::to_json(*m)["value"];
    for (auto& w : record["workloads"])
        if (w.contains("derived"))
            for (auto& [key, stored] : w["derived"].items())
                if (const lab::MetricValue* m = derived.find(w["name"].get<std::string>() + "." + key))
                    stored = lab::record::to_json(*m)["value"];
}

Run fixture_run(const std::string& name) { return Run(lab::record::read_record(fixture_run_file(name))); }

void restudent(Run& run, const std::string& student) {
    lab::CourseConfig course = lab::load_course(lab_test::source_root() / "configs/course.yaml");
    run.record["student"] = student;
    run.record["seed"] = lab::student_seed(course, run.raw.lesson_id, student).hex;
    run.refresh();
    run.restore_stored_values();
    run.reseal();
}

std::string num(double v) { return fmt::format("{:.5g}", v); }

std::string input_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

fs::path Grading::write(const std::string& name, const std::string& text) {
    fs::path p = dir / name;
    lab_test::write_file(p, text);
    return p;
}

GradingSpec Grading::spec(const std::string& yaml, bool check) {
    fs::path p = write("spec" + std::to_string(files++) + ".yaml", yaml);
    GradingSpec s = load_spec(p, false, "after_due_date");
    if (check) {
        check_spec_against(s, lesson(s.lesson).info);
        check_spec_sweeps(s, *lesson(s.lesson).lesson);
    }
    return s;
}

std::string Grading::answers_text(const Run& run, const Claims& claims, const std::string& student) {
    std::string out = fmt::format("lesson: \"{}\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers:\n", run.raw.lesson_id,
                                  student.empty() ? run.raw.options.student : student, run.digest());
    for (const auto& [id, claim] : claims) out += "  " + id + ":" + (claim.empty() ? "" : " " + claim) + "\n";
    return out;
}

AnswersFile Grading::answers(const Run& run, const Claims& claims, const std::string& student) {
    return load_answers(write("answers" + std::to_string(files++) + ".yaml", answers_text(run, claims, student)));
}

GradeReport Grading::grade_file(const GradingSpec& spec, const Run& run, const AnswersFile& answers) {
    const lab::LoadedLesson& l = lesson(run.raw.lesson_id);
    Submission s{spec, l.info, run.record, run.raw, run.derived, answers};
    check_binding(s);
    return lab::grader::grade(s);
}

GradeReport Grading::grade(const GradingSpec& spec, const Run& run, const Claims& claims) {
    return grade_file(spec, run, answers(run, claims));
}

const QuestionResult& result(const GradeReport& r, const std::string& id) {
    for (const auto& q : r.results)
        if (q.question.id == id) return q;
    FAIL("no result for question " << id);
    throw;
}

std::string spec_yaml(const std::string& questions, const std::string& lesson_id, const std::string& show_expected,
                      const std::string& extra) {
    return "lesson: \"" + lesson_id + "\"\naccept_quick: true\nshow_expected: " + show_expected + "\n" + extra +
           "questions:\n" + questions;
}

const std::string kRidge = R"(  - id: ridge_point
    prompt: "What is the fp32 ridge point of your device?"
    type: number
    unit: FLOP/B
    expected: {metric: ridge_point}
    tolerance: {rel: 0.05}
    partial: {within: 3, credit: 0.5}
    points: 2
    hint: "peak FLOP/s over peak bandwidth"
)";

const std::string kAttainable = R"(  - id: attainable
    prompt: "What FLOP/s can a kernel of AI question_ai attain at most?"
    unit: GFLOP/s
    expected: {metric: attainable_flops_per_s}
    tolerance: {rel: 0.05}
    points: 2
)";

const std::string kTriadSide = R"(  - id: triad_side
    prompt: "On which side of the ridge is the triad?"
    type: regime
    expected: {metric: triad.predicted_regime}
)";

const std::string kTriadFraction = R"(  - id: triad_roof_fraction
    prompt: "What fraction of its roof does the triad achieve?"
    unit: "%"
    expected: {metric: triad.roof_fraction}
    tolerance: {abs: 3}
    partial: {within: 3, credit: 0.5}
    points: 2
)";

Synthetic::Synthetic() {
    info.id = "99.01";
    info.version = "1.0.0";
    info.metrics = {{"crossover_batch", "", lab::MetricKind::integer, "first batch that is compute bound"},
                    {"tile_bytes", "B", lab::MetricKind::number, "the best tile size"},
                    {"near.predicted_regime", "", lab::MetricKind::category, "a kernel near the ridge"},
                    {"far.predicted_regime", "", lab::MetricKind::category, "a kernel far from the ridge"}};
    raw.lesson_id = "99.01";
    raw.options.quick = true;
    raw.options.student = "alice";
    // The student's own variant, as `lab run` records it (the grader checks it).
    raw.options.seed_hex =
        lab::student_seed(lab::load_course(lab_test::source_root() / "configs/course.yaml"), "99.01", "alice").hex;
    raw.facts.name = "Synthetic CPU";
    for (double b : {1, 2, 4, 8, 16, 32, 64}) {
        lab::Measurement m;
        m.workload.name = fmt::format("decode_b{}", b);
        m.workload.params = {{"batch", b}};
        m.time.median = m.time.min = m.time.max = m.time.mean = 1e-3;   // one sample, as a record holds it
        m.time.samples = 1;
        raw.measurements.push_back(m);
    }
    derived.integer("crossover_batch", 16);
    derived.number("tile_bytes", 8192, "B");
    record = {{"schema", "lab.run/1"},
              {"lab_version", LAB_VERSION},
              {"digest", "sha256:synthetic"},
              {"lesson", {{"id", "99.01"}, {"plugin_version", "1.0.0"}}},
              {"device", {{"kind", "cpu"}}},
              {"student", "alice"},
              {"quick", true}};
}

void Synthetic::place(const std::string& name, double ai_over_ridge) {
    lab::roofline::Placement p;
    p.ridge = 10;
    p.ai = 10 * ai_over_ridge;
    derived.workloads.push_back({name, p});
    derived.category(name + ".predicted_regime", ai_over_ridge < 1 ? "memory_bound" : "compute_bound");
}

GradeReport Synthetic::grade(Grading& g, const std::string& questions, const Claims& claims) {
    GradingSpec spec = g.spec(spec_yaml(questions, "99.01"), false);
    check_spec_against(spec, info);
    std::string text = "lesson: \"99.01\"\nstudent: alice\nrun: \"sha256:synthetic\"\nanswers:\n";
    for (const auto& [id, c] : claims) text += "  " + id + ": " + c + "\n";
    AnswersFile a = load_answers(g.write("synthetic-answers" + std::to_string(g.files++) + ".yaml", text));
    // Its metrics stored, as `lab run` stores them (none of them is declared graded, so none is
    // withheld): a record of the lesson's own version without them is refused.
    record["metrics"] = nlohmann::json::object();
    for (const auto& m : derived.metrics) record["metrics"][m.name] = lab::record::to_json(m);
    Submission s{spec, info, record, raw, derived, a};
    check_binding(s);
    return lab::grader::grade(s);
}

ScopedEnv::ScopedEnv(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }

ScopedEnv::~ScopedEnv() { unsetenv(name.c_str()); }

}  // namespace lab_test::grading
