// Grading specs, configs/grading/<ID>.yaml (DESIGN.md, "Grading"): the schema, declared once
// with each key's meaning and default; loading with file:line errors; and checking a spec
// against the lesson plugin's static declarations, so a spec that names a metric the lesson
// cannot produce is refused before any student is graded with it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lab/types.hpp"

namespace lab {
class Lesson;  // lab/lesson.hpp: only check_spec_sweeps needs it, by reference
}

namespace lab::grader {

enum class QuestionType { number, integer, choice, regime, boolean };
const char* to_string(QuestionType t);

struct Tolerance {
    std::optional<double> rel;      // |claim - expected| <= abs + rel*|expected|
    std::optional<double> abs;      //   (in the question's unit; converted to SI on loading)
    std::optional<double> factor;   // within x/÷ factor (quantities spanning decades)
    std::optional<int> steps;       // within N points of a sweep
    std::vector<double> sweep;      // the sweep's points (SI), when `steps` is used
    std::string sweep_param;        //   or the workload parameter whose values form the sweep
};

struct Partial {
    double within = 0;   // partial credit when within `within` times the tolerance (0: none)
    double credit = 0;   // fraction of the points given then
};

struct Expected {
    std::string metric;                 // a metric the lesson declares, or
    std::optional<std::string> value;   // a constant (its YAML text)
};

struct Question {
    std::string id;
    std::string prompt;
    QuestionType type = QuestionType::number;
    std::vector<std::string> options;   // choice; regime: the regimes it offers (regime_choices)
    Expected expected;
    Tolerance tolerance;
    Partial partial;
    double near_ridge_either = 0;       // regime: either regime passes when AI is within x/÷ this of the ridge
    double points = 1;
    bool hidden = false;
    std::string hint;
    std::string unit;                   // the unit a bare number is read in ("GB/s", "us", "%")
    std::string noun;                   // a count's noun ("token"): "12853 tokens" reads as 12853
    std::vector<std::string> nouns;     // every noun the count may end with (noun first): "41 sync events"
    std::vector<std::string> applies_to;  // device kinds; empty = all
    // Number questions worked out from earlier answers (02.03's cycles = latency x clock): each
    // earlier question's id with the power its value enters with (dram_over_l1: dram_latency 1,
    // l1_latency -1). An answer consistent with the student's own earlier answers earns the
    // points: an error is charged once, where it was made ("error carried forward").
    std::vector<std::pair<std::string, double>> carried_from;
    int line = 0;                       // where it starts in the spec file (its `- id:` line)
    // The line of each key the question writes ("type", "unit", "tolerance", ...; nested ones as
    // "expected.metric", "tolerance.sweep_param", "applies_to.cuda"), so a check against the
    // lesson points at the key at fault. A nested key shared through an alias (`tolerance: *t`)
    // is recorded at the line of its parent key in this question.
    std::map<std::string, int> key_lines;
    // The line of `key`, else of the nearest parent key written ("expected" for
    // "expected.metric"), else the question's own line (the fault is a key left out).
    int line_of(const std::string& key) const;
};

struct GradingSpec {
    std::string lesson;
    bool accept_quick = false;
    std::string show_expected = "after_due_date";   // never | after_due_date | always
    std::string due;                                // ISO date (YYYY-MM-DD); "" = no due date
    std::vector<Question> questions;
    std::string file;
    std::string sha256;                             // of the file's bytes as load_spec read them: which spec graded
    int lesson_line = 0;                            // the line of `lesson:` (0: unknown)
    int show_expected_line = 0;                     // the line of `show_expected:` (0: not written)
};

// One key of the schema: what it means and its default, for `lab check-spec --keys` and docs.
struct KeyDoc {
    const char* where;     // "spec", "question", "tolerance", "partial", "expected"
    const char* key;
    const char* meaning;
    const char* default_value;
};
const std::vector<KeyDoc>& schema();

// Loads and checks a spec's syntax and values. Course defaults fill accept_quick and
// show_expected when the file leaves them out. InputError (file:line) on any problem, including
// the instructor mistakes that would mark honest answers wrong: rel of 1 (100%) or more, abs over
// 100 in a % question, a sweep that is not a list of two or more numbers, fractional steps, a key
// written twice, a due date not in the calendar; and what the input limits refuse (yaml_file.hpp).
GradingSpec load_spec(const std::filesystem::path& file, bool default_accept_quick,
                      const std::string& default_show_expected);

// A word answer's words as the grader reads them: case does not matter, and runs of spaces,
// hyphens and underscores are one `_`, as in regimes (`Overhead-bound` is `overhead_bound`).
std::string option_key(const std::string& s);

// A choice's option as the grader matches it: option_key with the separators dropped, so
// `MX-FP4`, `mx fp4` and `mx_fp4` are the option `mxfp4`, as `throughput bound` is `throughput_bound`.
std::string choice_key(const std::string& s);

// The regimes a regime question offers (the answers template lists them): its `options`, written
// as the regimes' names; else, for a predicted regime (a side of the ridge: *.predicted_regime),
// memory_bound and compute_bound; else all four.
std::vector<std::string> regime_choices(const Question& q);

// "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& items);

// Whether a number question accepts anything but the exact value: rel or abs above 0, a factor
// above 1, or steps of a sweep (whose points are exact by nature).
bool has_tolerance(const Tolerance& t);

// Checks the spec against the lesson's declarations: the lesson ID, every metric named exists,
// the question type fits the metric's kind, the unit's dimension fits the metric's unit, and a
// number question on a number metric (a measured value) has a tolerance.
// <ID>.yaml beside a lesson plugin or in the folder above it (an out-of-tree lesson's source
// folder, with the plugin in build/), or nullopt when neither exists.
std::optional<std::filesystem::path> spec_beside_plugin(const std::filesystem::path& plugin, const std::string& id);

void check_spec_against(const GradingSpec& spec, const LessonInfo& info);

// Checks each `sweep_param` against the parameter names the lesson's workloads carry
// (lesson_plan.hpp, plan_param_names): a misspelt name would leave the sweep empty and no answer
// could be graded. InputError at the question's line, listing the names there are. The plan is
// replayed only when a question names a sweep_param.
void check_spec_sweeps(const GradingSpec& spec, lab::Lesson& lesson);

// What `lab check-spec` warns of without refusing: a question on a metric the lesson does not
// mark graded, so `lab run` prints its answer to every student. One line each, with file:line.
std::vector<std::string> spec_warnings(const GradingSpec& spec, const LessonInfo& info);

}  // namespace lab::grader
