// Evaluation of claims and plausibility of runs (see evaluate.hpp).
#include "evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <utility>

#include "ceiling_trust.hpp"
#include "consistency.hpp"
#include "course.hpp"
#include "format.hpp"
#include "identity.hpp"
#include "input_file.hpp"
#include "lesson_host.hpp"
#include "lesson_plan.hpp"
#include "prompt_fill.hpp"
#include "suggest.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "device_summary.hpp"
#include "grade_number.hpp"
#include "grade_words.hpp"
#include "paths.hpp"
#include "errors.hpp"
#include "lab/roofline.hpp"
#include "sweep.hpp"
#include "units.hpp"

namespace lab::grader {

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::correct: return "correct";
        case Verdict::partial: return "partly correct";
        case Verdict::wrong: return "wrong";
        case Verdict::missing: return "no answer";
        case Verdict::invalid: return "unreadable answer";
        case Verdict::void_question: return "void";
    }
    return "?";
}


namespace {

// A digest in a message beside another it differs from: "sha256:" and 12 hex digits, or as far as
// a few characters past where the two first differ, so that they never read the same.
std::string digest_shown(const std::string& digest, const std::string& other) {
    constexpr std::size_t kShort = 19, kPastDifference = 4;
    std::size_t differ = 0;
    while (differ < digest.size() && differ < other.size() && digest[differ] == other[differ]) ++differ;
    const std::size_t shown = std::max(kShort, differ + kPastDifference);
    return digest.size() > shown ? digest.substr(0, shown) + "…" : digest;
}

// The longest answer read as one: a sentence-long regime or a number with its working in brackets
// fits many times over.
constexpr std::size_t kLongestAnswer = 500;

// A key YAML read as one word because the space after its colon is missing: `max_batch:22` is
// the key 'max_batch:22' with no value, not max_batch: 22. Where the text before the first ':' is a
// question id (`question`), or a near miss of one (`near`), and a value follows, this says so.
struct UnspacedAnswer {
    std::string key;       // the text before the ':'
    std::string value;     // the text after it, trimmed
    std::string question;  // the question it answers; "" when key is only near one
    std::string near;      // did_you_mean's question when key is no question id
};

std::optional<UnspacedAnswer> without_space_after_colon(const std::string& id, const Claim& claim, const std::vector<std::string>& ids) {
    const std::size_t colon = id.find(':');
    if (colon == std::string::npos || !claim.empty) return std::nullopt;
    auto trim = [](const std::string& t) {
        const std::size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
    };
    UnspacedAnswer a{trim(id.substr(0, colon)), trim(id.substr(colon + 1)), "", ""};
    if (a.key.empty() || a.value.empty()) return std::nullopt;
    if (std::find(ids.begin(), ids.end(), a.key) != ids.end()) a.question = a.key;
    else a.near = did_you_mean(a.key, ids);
    if (a.question.empty() && a.near.empty()) return std::nullopt;
    return a;
}


}  // namespace

bool expected_visible(const GradingSpec& spec) {
    if (spec.show_expected == "always") return true;
    if (spec.show_expected == "never" || spec.due.empty()) return false;
    return format::utc_date(std::time(nullptr)) > spec.due;
}

void check_binding(const Submission& s) {
    const AnswersFile& a = s.answers;
    if (a.lesson != s.spec.lesson)
        throw InputError(a.file, "the answers are for lesson '" + a.lesson + "' but are being graded as " + s.spec.lesson,
                         "submit them for lesson " + a.lesson);
    if (s.raw.lesson_id != s.spec.lesson)
        throw InputError("", "the run record is of lesson '" + s.raw.lesson_id + "', not " + s.spec.lesson,
                         "submit the run of lesson " + s.spec.lesson);
    const std::string digest = s.record.value("digest", "");
    const std::string run_given = "the run given" + (s.run_file.empty() ? std::string() : " (" + s.run_file.string() + ")");
    // A digest cut short (copied by hand, a line wrapped) that begins the run's: shown cut to the
    // same length as the other, the two looked equal.
    if (!a.run.empty() && a.run.size() < digest.size() && digest.compare(0, a.run.size(), a.run) == 0)
        throw InputError(a.file, "the answers' run: digest is cut short: its " + std::to_string(a.run.size()) + " characters (" + a.run +
                                     ") begin the digest of " + run_given + ", which has " + std::to_string(digest.size()) + " (" +
                                     digest + ")",
                         "copy the whole run: line as `lab answers` wrote it, or make a new template with `lab answers`");
    if (a.run != digest) {
        throw InputError(a.file, "the answers are bound to run " + digest_shown(a.run, digest) + ", but " + run_given + " is " +
                                     digest_shown(digest, a.run),
                         "submit the run the answers were written for, or make a new template with `lab answers`");
    }
    if (normalise_student(a.student) != normalise_student(s.raw.options.student))
        throw InputError(a.file, "the answers are from '" + a.student + "' but the run was recorded by '" +
                                     s.raw.options.student + "'",
                         "each student submits their own run");
}

GradeReport grade(const Submission& s) {
    GradeReport rep;
    rep.lesson = s.spec.lesson;
    rep.student = s.raw.options.student;
    rep.run_digest = s.record.value("digest", "");
    rep.device = std::string(lab::to_string(s.raw.device_kind)) + ": " + s.raw.facts.name;
    rep.show_expected = expected_visible(s.spec);
    rep.mode = s.key ? "course" : "practice";

    if (s.raw.options.quick && !s.spec.accept_quick)
        rep.problems.push_back("this run was made with --quick, and lesson " + s.spec.lesson +
                               " grades full runs only: run `lab run " + s.spec.lesson + "` without --quick");
    if (!same_plugin_major(s.record["lesson"].value("plugin_version", ""), s.info.version))
        rep.problems.push_back("the run was recorded with lesson plugin " + s.record["lesson"].value("plugin_version", "") +
                               " but grading uses " + s.info.version + ": record the run again");
    for (auto& p : consistency_problems(s.record, s.raw)) rep.problems.push_back("inconsistent record: " + p);
    for (auto& p : plausibility_problems(s.record, s.raw, s.derivation)) rep.problems.push_back("implausible: " + p);
    // A record of this very lesson version stores every metric its lesson derives but the withheld
    // ones; with a stored value deleted, the check above would pass an edited measurement (a
    // red-team review halved a kernel's times and deleted the metrics).
    if (const std::string made_by = s.record["lesson"].value("plugin_version", ""); made_by == s.info.version && rep.problems.empty()) {
        const bool revealed = s.record.value("revealed", false);
        const auto withheld = record::withheld_metrics(s.info, revealed, s.raw.device_kind);
        const auto& stored = s.record.contains("metrics") && s.record["metrics"].is_object() ? s.record["metrics"] : nlohmann::json::object();
        for (const auto& m : s.derivation.metrics)
            if (!withheld.count(m.name) && !stored.contains(m.name)) {
                rep.problems.push_back("implausible: the record stores no " + m.name + ", which lesson plugin " + made_by +
                                       " stores in every run it records (an edited record?): record the run again with `lab run " +
                                       s.spec.lesson + "`");
                break;
            }
    }
    for (const auto& p : s.plan_problems)
        rep.problems.push_back("the run's workloads are not what lesson " + s.spec.lesson + " measures on its device: " + p);
    // Whose run it is: its token, seed and flags (identity.hpp).
    {
        CourseConfig loaded;
        if (!s.course) loaded = load_course(paths::config_dir() / "course.yaml");
        for (auto& p : identity_problems(s.record, s.raw, s.course ? *s.course : loaded, s.key)) rep.problems.push_back(p);
    }
    rep.graded = rep.problems.empty();
    // Said, never held against the student: the answers are checked against what this run measured.
    if (const auto loaded = under_load(s.raw); loaded && rep.graded)
        rep.notes.push_back("this run was measured on a busy machine: " + *loaded +
                            ". Your answers are graded against the figures it measured, so this costs you nothing, but "
                            "they may not be your device's: run again with nothing else running to learn those.");

    for (const auto& n : s.answers.notes) rep.notes.push_back(n);
    // Answers to no question: a misspelt id would otherwise vanish as "no answer".
    std::vector<std::string> ids;
    for (const auto& q : s.spec.questions) ids.push_back(q.id);
    std::map<std::string, std::string> misspelt;   // question id -> the id the student wrote
    std::map<std::string, Claim> answers = s.answers.answers;
    for (const auto& [id, claim] : s.answers.answers) {
        if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
        if (const auto unspaced = without_space_after_colon(id, claim, ids)) {
            const std::string line = "line " + std::to_string(claim.line) + ": '" + id + "'";
            const std::string why = " (YAML needs a space after ':')";
            if (!unspaced->question.empty()) {
                auto [given, fresh] = answers.try_emplace(unspaced->question, Claim{unspaced->value, claim.line, false});
                // An answer written properly elsewhere wins; a blank one gives way.
                if (fresh || given->second.empty) {
                    given->second = Claim{unspaced->value, claim.line, false};
                    rep.notes.push_back(line + " read as " + unspaced->question + ": " + unspaced->value + why);
                } else {
                    rep.notes.push_back(line + " is " + unspaced->question + ": " + unspaced->value + why + ", but line " +
                                        std::to_string(given->second.line) + " answers " + unspaced->question +
                                        " too: that answer is graded, this one is not");
                }
                continue;
            }
            // A misspelt id is not graded when written properly, so it is not here either.
            rep.notes.push_back(line + " is " + unspaced->key + ": " + unspaced->value + why + ", and '" + unspaced->key +
                                "' is not a question of lesson " + s.spec.lesson + " (did you mean '" + unspaced->near +
                                "'?): not graded");
            misspelt.emplace(unspaced->near, id);
            rep.unasked.push_back(unspaced->key);
            continue;
        }
        const std::string near = did_you_mean(id, ids);
        rep.notes.push_back("line " + std::to_string(claim.line) + ": '" + id + "' is not a question of lesson " + s.spec.lesson +
                            (near.empty() ? ": not graded" : " (did you mean '" + near + "'?): not graded"));
        if (!near.empty()) misspelt[near] = id;
        rep.unasked.push_back(id);
    }

    const std::string kind = lab::to_string(s.raw.device_kind);
    NumberAnswers number_answers;
    for (const auto& q : s.spec.questions) {
        QuestionResult r;
        r.question = q;
        // The student's own variant in the prompt (question_seq -> 2048): the run's parameters,
        // never a graded value.
        r.question.prompt = fill_prompt(q.prompt, [&](const std::string& name) -> std::optional<std::string> {
            const auto decl = std::find_if(s.info.metrics.begin(), s.info.metrics.end(), [&](const MetricDecl& m) { return m.name == name; });
            const MetricValue* v = s.derivation.find(name);
            if (decl == s.info.metrics.end() || decl->graded || !v) return std::nullopt;
            return record::format_value(*v);
        });
        r.max_points = q.points;
        auto claim = answers.find(q.id);
        if (claim != answers.end() && !claim->second.empty) r.claim = claim->second.text;

        // Void: the question does not apply to this device, or the run cannot have its metric.
        bool applies = q.applies_to.empty() ||
                       std::find(q.applies_to.begin(), q.applies_to.end(), kind) != q.applies_to.end();
        const MetricValue* metric = q.expected.metric.empty() ? nullptr : s.derivation.find(q.expected.metric);
        if (!applies || (!q.expected.metric.empty() && !metric)) {
            r.verdict = Verdict::void_question;
            r.max_points = 0;
            // A metric the lesson should have set in this run and did not is the lesson's fault,
            // not the device's (a metric of another device, or one its device read no counters
            // for, is): said so, for the report.
            const bool lesson_fault = applies && unset_by_lesson(s.info, s.derivation, s.raw, q.expected.metric);
            r.feedback = !applies       ? "does not apply to a " + kind + " run"
                         : lesson_fault ? "the run has no " + q.expected.metric + ": the lesson did not set it in this run (no fault of the answer)"
                                        : "the run has no " + q.expected.metric + " on this device";
            rep.results.push_back(r);
            continue;
        }
        if (r.claim.empty()) {
            r.verdict = Verdict::missing;
            r.advises = misspelt.count(q.id) > 0;
            const std::string& wrote = misspelt[q.id];
            // `max_bach:22` (no space after the colon): the fix is the whole line, not the key.
            const std::size_t value = wrote.find(':') == std::string::npos ? std::string::npos
                                                                             : wrote.find_first_not_of(" \t", wrote.find(':') + 1);
            const std::string fix = value == std::string::npos ? "rename it " + q.id : "write " + q.id + ": " + wrote.substr(value);
            r.feedback = r.advises ? "no answer (you answered '" + wrote + "': " + fix + ")" : "no answer";
        } else if (r.claim.size() > kLongestAnswer) {
            // No value is written that long; quoted whole, one was printed twice in a 211 kB report.
            r.verdict = Verdict::invalid;
            r.feedback = fmt::format("an answer of {} characters is no single value: write one, such as the template's comment shows",
                                     r.claim.size());
            r.claim = excerpt(r.claim, 60);
        } else if (q.type == QuestionType::number || q.type == QuestionType::integer) {
            double expected = metric ? metric->number : units::parse_claim(*q.expected.value, q.unit).value;
            double claim_si = std::nan("");
            grade_number(r, q, expected, s.raw, metric ? metric->unit : q.unit, &claim_si);
            accept_reference_fraction(r, q, s, metric);
            accept_carried_forward(r, q, expected, s, metric ? metric->unit : q.unit, number_answers);
            if (r.verdict != Verdict::invalid && r.verdict != Verdict::void_question && std::isfinite(claim_si))
                number_answers[q.id] = {claim_si, expected};
        } else if (q.type == QuestionType::regime) {
            grade_regime(r, q, metric, s);
        } else if (q.type == QuestionType::choice) {
            grade_choice(r, q, metric);
        } else {
            grade_yes_no(r, q, metric);
        }
        r.points = r.verdict == Verdict::correct ? q.points : r.verdict == Verdict::partial ? q.points * q.partial.credit : 0;
        rep.results.push_back(r);
    }
    for (const auto& r : rep.results) {
        rep.max_score += r.max_points;
        if (rep.graded) rep.score += r.points;
    }
    return rep;
}

std::vector<std::string> model_value_warnings(const GradingSpec& spec, const std::map<std::string, std::vector<ModelValue>>& values,
                                              const std::string& everywhere) {
    std::vector<std::string> out;
    for (const auto& q : spec.questions) {
        const auto found = values.find(q.expected.metric);
        if (q.expected.metric.empty() || found == values.end()) continue;
        const std::string at = spec.file + ":" + std::to_string(q.line_of("tolerance")) + ": question '" + q.id + "'";
        const bool numeric = q.type == QuestionType::number || q.type == QuestionType::integer;
        if (numeric && !q.tolerance.steps && (q.tolerance.rel || q.tolerance.abs || q.tolerance.factor)) {
            // The value as `lab` prints it (3 significant figures in the question's unit) must pass:
            // a band narrower than that rounding marks a student who copies it wrong.
            bool wide_everywhere = true, zero_passes_everywhere = true, checked = false;
            std::string zero_example;
            for (const ModelValue& v : found->second) {
                if (v.value.kind == MetricKind::category || !std::isfinite(v.value.number) || v.value.number == 0) continue;
                checked = true;
                const std::string unit = q.unit.empty() ? v.value.unit : q.unit;
                // Whole units are kept: 1235 MiB is read off as 1235, not 1.24e3.
                const double in_q = units::to_unit(v.value.number, unit);
                const int digits = std::max(3, static_cast<int>(std::floor(std::log10(std::fabs(in_q)))) + 1);
                const double shown = units::from_unit(round_to_digits(in_q, digits), unit);
                if (!within(shown, v.value.number, q.tolerance, 1)) {
                    out.push_back(fmt::format("{}: its tolerance is narrower than the value as lab prints it: on {}, {} (3 significant "
                                              "figures or whole units) is marked wrong against {}\n  fix: widen it, e.g. rel: 0.01",
                                              at, v.where, in_unit(shown, unit == "ratio" ? "" : unit), format::number(units::to_unit(v.value.number, unit), {.digits = 9})));
                    wide_everywhere = zero_passes_everywhere = false;
                    break;
                }
                const double wide = q.tolerance.factor ? std::fabs(v.value.number) * (*q.tolerance.factor - 1)
                                                       : q.tolerance.abs.value_or(0) + q.tolerance.rel.value_or(0) * std::fabs(v.value.number);
                wide_everywhere = wide_everywhere && wide >= 10 * std::fabs(v.value.number);
                // A band reaching 0 passes an answer of 0, and with it any smaller value a classmate
                // measured: 02.09's {abs: 1} point around a 0.4-0.9% roof fraction did.
                zero_passes_everywhere = zero_passes_everywhere && within(0, v.value.number, q.tolerance, 1);
                if (zero_example.empty())
                    zero_example = fmt::format("on {} the value is {}", v.where, in_unit(shown, unit == "ratio" ? "" : unit));
            }
            if (wide_everywhere && checked)
                out.push_back(at + ": its tolerance is more than 10 times the value on " + everywhere + ", so almost any answer passes (abs "
                                   "is in the question's unit" + (q.unit.empty() ? "" : ", " + q.unit) + ")\n  fix: " +
                              (everywhere == "every model device" ? "write abs in the question's unit, or use rel" : "an abs below the value, or rel (rel: 0.15 is ±15%)"));
            else if (zero_passes_everywhere && checked)
                out.push_back(at + ": its tolerance accepts an answer of 0 on " + everywhere + " (" + zero_example +
                              "), so a student who measured nothing passes (abs is in the question's unit" + (q.unit.empty() ? "" : ", " + q.unit) +
                              ")\n  fix: an abs below the value, or rel (rel: 0.15 is ±15%)");
        }
        // A metric declared without a unit is a plain count: an SDK review's bandwidth, set in B/s
        // and declared with no `.unit`, refused "8.81 GB/s" as a quantity where a count is asked
        // and marked 8.81 wrong by 10^9. A count of millions asked with no noun is most likely that.
        if (numeric && q.unit.empty() && q.noun.empty())
            for (const ModelValue& v : found->second) {
                const double x = std::fabs(v.value.number);
                if (v.value.kind == MetricKind::category || !v.value.unit.empty() || !std::isfinite(x) || x == 0 || (x < 1e6 && x >= 1e-3)) continue;
                out.push_back(fmt::format("{}:{}: question '{}': metric '{}' has no unit, so it is graded as a plain count, yet on {} its value is "
                                          "{}: an answer written with a unit is refused, and one without is read in base units\n  fix: "
                                          "if it is a quantity, declare its SI unit in the lesson's info() (.unit = \"B/s\"); if it is a count, "
                                          "give the question the noun it counts (noun: element)",
                                          spec.file, q.line_of("expected.metric"), q.id, q.expected.metric, v.where, format::number(v.value.number)));
                break;
            }
        if (q.type != QuestionType::choice && q.type != QuestionType::boolean) continue;
        // A choice or yes/no question on a category: each value the lesson can produce must be
        // answerable, or no student can score.
        for (const ModelValue& v : found->second) {
            if (v.value.kind != MetricKind::category) continue;
            std::vector<std::string> missing;
            for (std::size_t b = 0, e; b <= v.value.text.size(); b = e + 4) {
                e = std::min(v.value.text.find(" or ", b), v.value.text.size());
                const std::string part = v.value.text.substr(b, e - b);
                bool ok = false, yes = false;
                if (q.type == QuestionType::boolean) ok = parse_bool(part, yes);
                else ok = std::any_of(q.options.begin(), q.options.end(), [&](const std::string& o) { return choice_key(o) == choice_key(part); });
                if (!ok) missing.push_back(part);
            }
            if (missing.empty()) continue;
            out.push_back(spec.file + ":" + std::to_string(q.line_of(q.type == QuestionType::choice ? "options" : "type")) + ": question '" + q.id +
                          "': on " + v.where + " the lesson gives '" + missing.front() + "', which " +
                          (q.type == QuestionType::choice ? "is not one of its options" : "is not yes or no") +
                          ": no answer can score\n  fix: " + (q.type == QuestionType::choice ? "list the values the metric takes as options" : "use type: choice"));
            break;
        }
    }
    return out;
}

}  // namespace lab::grader
