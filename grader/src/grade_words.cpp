// Grading a word answer: a regime, a choice, yes or no (see grade_words.hpp).
#include "grade_words.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "lab/roofline.hpp"
#include "run_table.hpp"
#include "units.hpp"

namespace lab::grader {

namespace {

bool is_measured_regime(const std::string& metric) {
    const std::string suffix = ".measured_regime";
    return metric.size() > suffix.size() && metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A workload's measured regime decided against the run's ceilings (those its roof fraction and
// every table and plot use) instead of the references measured right after it: the rule applied
// to what the student was shown. nullopt when the run has no such placed workload.
std::optional<roofline::Verdict> verdict_by_shown_ceilings(const RawRun& run, const std::string& workload) {
    RawRun shown = run;
    std::erase_if(shown.ceiling_measurements, [&](const CeilingMeasurement& cm) {
        return cm.purpose == "reference" && std::find(cm.workloads.begin(), cm.workloads.end(), workload) != cm.workloads.end();
    });
    try {
        return placement_of(shown, workload).measured;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// A word answer, less working shown after it in brackets ("compute_bound (59% of the FLOP roof;
// x2 took 1.73x)"), as a number's may be: a run's lines ask students to say which numbers they
// read, and the reason scored the answer 0 as unreadable. The whole answer is tried first, for
// options that hold brackets themselves.
struct WordAnswer {
    std::string text;   // what is graded
    std::string aside;  // the brackets left unread, "" when none
};
WordAnswer word_answer(const std::string& claim, const std::function<bool(const std::string&)>& readable) {
    if (readable(claim)) return {claim, ""};
    std::string_view aside;
    std::string text(units::without_aside(claim, aside));
    if (!aside.empty() && readable(text)) return {text, std::string(aside)};
    return {claim, ""};
}
// Said with the verdict, as a number's unread brackets are.
void note_aside(QuestionResult& r, const WordAnswer& a) {
    if (a.aside.empty() || r.verdict == Verdict::invalid) return;
    r.feedback += fmt::format("{}'{}' after the answer was not read (the answer is '{}')", r.feedback.empty() ? "" : "; ", a.aside, a.text);
    r.advises = true;
}

}  // namespace

// A word answer (a regime, a choice) as it is matched: option_key's reading (case, blanks, hyphens
// and underscores do not matter; runs of them count as one) of the answer less a full stop a
// sentence ends with ("Memory bound.").
std::string answer_key(const std::string& claim) {
    std::string key = option_key(claim);
    if (!key.empty() && key.back() == '.') key.pop_back();
    if (!key.empty() && key.back() == '_') key.pop_back();
    return key;
}

bool parse_bool(std::string s, bool& out) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "yes" || s == "true" || s == "y") return out = true, true;
    if (s == "no" || s == "false" || s == "n") return out = false, true;
    return false;
}

void grade_regime(QuestionResult& r, const Question& q, const MetricValue* metric, const Submission& s) {
    std::string want = metric ? metric->text : *q.expected.value;
    r.expected = want;
    const WordAnswer answer = word_answer(r.claim, [](const std::string& s) { return roofline::parse_regime(answer_key(s)).has_value(); });
    auto c = roofline::parse_regime(answer_key(answer.text));
    // A verdict the run could not decide names two candidates; either is a fair answer.
    const std::vector<roofline::Regime> candidates = roofline::regimes_in(want);
    const std::vector<std::string> choices = regime_choices(q);
    if (!c) {
        r.verdict = Verdict::invalid;
        r.feedback = "'" + r.claim + "' is not a regime: write " + or_list(choices);
    } else {
        // A regime the question does not offer is wrong, and the note says which it offers.
        if (std::none_of(choices.begin(), choices.end(), [&](const std::string& o) { return roofline::parse_regime(o) == c; }))
            r.feedback = "this question is answered with " + or_list(choices);
        r.verdict = std::find(candidates.begin(), candidates.end(), *c) != candidates.end() ? Verdict::correct
                                                                                              : Verdict::wrong;
        // Said to a correct answer only: to a wrong one it would name the accepted regimes, which
        // a spec withholding its expected values keeps from the student (a code review).
        if (candidates.size() > 1 && r.verdict == Verdict::correct) {
            std::string why;
            std::string wl = q.expected.metric.substr(0, q.expected.metric.rfind('.'));
            for (const auto& wd : s.derivation.workloads)
                if (wd.workload == wl && !wd.placement.measured.reason.empty()) why = " (" + wd.placement.measured.reason + ")";
            r.feedback = "the run could not decide between " + std::string(roofline::to_string(candidates[0])) + " and " +
                         roofline::to_string(candidates[1]) + why + ": either is accepted";
            // Said on the console too (a student review: a bare "correct" hid that the run was
            // undecided, and what would have decided it).
            r.advises = true;
        }
        // The verdict is decided against the ceilings measured beside the workload (its
        // references); a student reads the roof fractions of the run's ceilings, the ones
        // every table and plot shows. On a busy machine the two can disagree (a kernel at
        // 12% of the shown roof and 89% of the one measured beside it). The documented rule
        // applied to what was shown is a fair answer too.
        if (r.verdict == Verdict::wrong && is_measured_regime(q.expected.metric)) {
            const std::string wl = q.expected.metric.substr(0, q.expected.metric.rfind('.'));
            if (auto shown = verdict_by_shown_ceilings(s.raw, wl)) {
                const std::vector<roofline::Regime> by_shown = roofline::regimes_in(roofline::to_text(*shown));
                if (std::find(by_shown.begin(), by_shown.end(), *c) != by_shown.end()) {
                    r.verdict = Verdict::correct;
                    r.feedback = "accepted: by the roof fractions the run shows (its ceilings) it is " + roofline::to_text(*shown) +
                                 "; by the ceilings measured right after the kernel it is " + want +
                                 " (the two differ when the machine was busy): either is accepted";
                    // A reading of the shown column only: the console says so, so that a student
                    // who called an FMA kernel latency-bound on a busy machine learns the other.
                    r.advises = true;
                }
            }
        }
        // Near the ridge either side of it is a fair reading of a noisy measurement.
        if (r.verdict == Verdict::wrong && q.near_ridge_either > 0 && !q.expected.metric.empty() &&
            (*c == roofline::Regime::memory_bound || *c == roofline::Regime::compute_bound)) {
            std::string wl = q.expected.metric.substr(0, q.expected.metric.rfind('.'));
            for (const auto& wd : s.derivation.workloads)
                if (wd.workload == wl && wd.placement.ridge > 0 && std::isfinite(wd.placement.ai) &&
                    wd.placement.ai <= wd.placement.ridge * q.near_ridge_either &&
                    wd.placement.ai >= wd.placement.ridge / q.near_ridge_either) {
                    r.verdict = Verdict::correct;
                    r.feedback = "either regime accepted: the kernel sits near the ridge";
                }
        }
    }
    note_aside(r, answer);
}

void grade_choice(QuestionResult& r, const Question& q, const MetricValue* metric) {
    std::string want = metric ? metric->text : *q.expected.value;
    r.expected = want;
    auto is_option = [&q](const std::string& s) {
        return std::any_of(q.options.begin(), q.options.end(), [&](const std::string& o) { return choice_key(o) == choice_key(answer_key(s)); });
    };
    const WordAnswer answer = word_answer(r.claim, is_option);
    const bool known = is_option(answer.text);
    std::string listed;
    for (const auto& o : q.options) listed += (listed.empty() ? "" : ", ") + o;
    if (!known) {
        r.verdict = Verdict::invalid;
        r.feedback = "not one of the options: write one of " + listed;
    } else {
        // "A or B": the run sat on the boundary between two options (02.11's doubling
        // verdict at a ratio of 1.2); either is a fair reading of it.
        std::vector<std::string> accepted;
        for (std::size_t b = 0, e; b <= want.size(); b = e + 4) {
            e = std::min(want.find(" or ", b), want.size());
            accepted.push_back(choice_key(want.substr(b, e - b)));
        }
        r.verdict = std::find(accepted.begin(), accepted.end(), choice_key(answer_key(answer.text))) != accepted.end()
                        ? Verdict::correct
                        : Verdict::wrong;
        if (accepted.size() > 1 && r.verdict == Verdict::correct)  // a wrong answer is not told the accepted ones
            r.feedback = "the run sits on the boundary between " + want + ": either is accepted", r.advises = true;
    }
    note_aside(r, answer);
}

void grade_yes_no(QuestionResult& r, const Question& q, const MetricValue* metric) {
    bool want = false, got = false;
    std::string w = metric ? (metric->kind == MetricKind::category ? metric->text : (metric->number != 0 ? "yes" : "no"))
                           : *q.expected.value;
    parse_bool(w, want);
    r.expected = want ? "yes" : "no";
    const WordAnswer answer = word_answer(r.claim, [](const std::string& s) {
        bool b = false;
        return parse_bool(answer_key(s), b);
    });
    if (!parse_bool(answer_key(answer.text), got)) {
        r.verdict = Verdict::invalid;
        r.feedback = "write yes or no";
    } else {
        r.verdict = got == want ? Verdict::correct : Verdict::wrong;
    }
    note_aside(r, answer);
}

}  // namespace lab::grader
