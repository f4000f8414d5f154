// What the grading tests (test_grading_*.cpp) share: runs from tests/fixtures/runs/cpu/ (real
// --quick runs of student "alice") with their derivation by the lesson's own code, specs written
// by each test (accept_quick: true) from the question snippets below, answers files written into
// a temporary folder, and a synthetic lesson for what a real run cannot pin down. Expected values
// come from lesson->derive() on the fixture, so a re-recorded fixture keeps the tests true.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "answers.hpp"
#include "evaluate.hpp"
#include "plugin_loader.hpp"
#include "spec.hpp"
#include "test_support.hpp"

namespace lab_test::grading {

namespace fs = std::filesystem;
using nlohmann::json;
using Claims = std::vector<std::pair<std::string, std::string>>;  // question id, claim as written

// The lesson plugins, loaded once (plugins are never unloaded).
const lab::LoadedLesson& lesson(const std::string& id);

fs::path fixture_run_file(const std::string& name);

// A run record with its raw run and its derivation by the lesson's own code.
struct Run {
    json record;
    lab::RawRun raw;
    lab::Derivation derived;

    explicit Run(json r) : record(std::move(r)) { refresh(); }
    void refresh();
    // After an edit: a valid digest again, so only the grader's other defences can catch it.
    void reseal();
    double number(const std::string& name) const;
    std::string text(const std::string& name) const;
    std::string digest() const { return record.value("digest", ""); }
    json& workload(const std::string& name);
    // Rewrites the stored display copies (metrics, per-workload derived values) from the derivation.
    void restore_stored_values();
};

Run fixture_run(const std::string& name = "02.05-quick-reveal.json");

// The record as another student would have recorded it: their name, their per-student seed (from
// the course salt), the stored values their seed gives, sealed.
void restudent(Run& run, const std::string& student);

// Three significant digits and more: a claim as a student would write it.
std::string num(double v);

// The message an InputError carried, or "" when none was thrown.
std::string input_error(const std::function<void()>& f);

// Writes specs and answers files into a temporary folder and grades them.
struct Grading {
    lab_test::TempDir dir;
    int files = 0;

    fs::path write(const std::string& name, const std::string& text);
    // Loads a spec and checks it against its lesson's declarations, as the grader does.
    lab::grader::GradingSpec spec(const std::string& yaml, bool check = true);
    std::string answers_text(const Run& run, const Claims& claims, const std::string& student = "");
    lab::grader::AnswersFile answers(const Run& run, const Claims& claims, const std::string& student = "");
    lab::grader::GradeReport grade_file(const lab::grader::GradingSpec& spec, const Run& run,
                                        const lab::grader::AnswersFile& answers);
    lab::grader::GradeReport grade(const lab::grader::GradingSpec& spec, const Run& run, const Claims& claims);
};

const lab::grader::QuestionResult& result(const lab::grader::GradeReport& r, const std::string& id);

// A spec of one lesson, grading quick runs, with the given questions (YAML list items).
std::string spec_yaml(const std::string& questions, const std::string& lesson_id = "02.05",
                      const std::string& show_expected = "always", const std::string& extra = "");

// Questions of lesson 02.05, as YAML list items for spec_yaml.
extern const std::string kRidge;           // ridge_point: rel 5%, partial within 3x for half, 2 points
extern const std::string kAttainable;      // attainable: GFLOP/s, rel 5%, 2 points
extern const std::string kTriadSide;       // triad_side: a regime
extern const std::string kTriadFraction;   // triad_roof_fraction: %, abs 3, partial within 3x, 2 points

// A lesson nobody compiled, for the cases a real run cannot pin down (sweeps, the ridge band):
// its record, raw run and derivation are written here.
struct Synthetic {
    lab::LessonInfo info;
    json record;
    lab::RawRun raw;
    lab::Derivation derived;

    Synthetic();
    // A kernel at `ai_over_ridge` times the ridge, predicted on the side its AI says.
    void place(const std::string& name, double ai_over_ridge);
    lab::grader::GradeReport grade(Grading& g, const std::string& questions, const Claims& claims);
};

// Sets an environment variable for the life of the object.
struct ScopedEnv {
    std::string name;
    ScopedEnv(const std::string& n, const std::string& value);
    ~ScopedEnv();
};

}  // namespace lab_test::grading
