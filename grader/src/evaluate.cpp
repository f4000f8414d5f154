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
#include "lesson_host.hpp"
#include "prompt_fill.hpp"
#include "suggest.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "device_summary.hpp"
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

// Physics: a rate may exceed what the device can do on paper (its datasheet, or a CPU's
// theoretical FMA peak from configs/cpu_microarchitectures.yaml) by this much, for the rounding
// of clocks and datasheets. Bandwidth gets more against a datasheet: a workload whose working
// set partly fits a cache is counted as DRAM traffic but served faster.
constexpr double kPhysicsSlack = 1.10;
constexpr double kDatasheetBandwidthSlack = 1.5;
// A CPU's theoretical peak rests on the core clock measured at calibration: one moment's clock,
// which turbo and the load of the moment move (a calibration beside a busy build read 2.98 GHz on
// a core that ran the lesson at 3.5). The run's own ceilings still bound every rate to the margin.
constexpr double kMeasuredClockSlack = 1.5;

std::string rate(double v, const std::string& unit) { return units::format(v, unit); }

bool within(double claim, double expected, const Tolerance& t, double scale) {
    if (t.factor) {
        if (claim <= 0 || expected <= 0) return claim == expected;
        double f = std::pow(*t.factor, scale);
        return claim <= expected * f && claim >= expected / f;
    }
    double abs = t.abs.value_or(0) * scale, rel = t.rel.value_or(0) * scale;
    // A hair of relative slack absorbs the rounding of a value written to the precision shown.
    return std::fabs(claim - expected) <= abs + rel * std::fabs(expected) + 1e-12 * std::fabs(expected);
}

// The tolerance in words, `scale` times as wide as within() widens it (the partial band).
std::string describe_tolerance(const Question& q, const std::string& unit, double scale = 1) {
    const Tolerance& t = q.tolerance;
    const std::string dim = units::dimension_of(unit).value_or("");
    if (t.factor) return "within x/÷ " + units::format(std::pow(*t.factor, scale), "") + " of the expected value";
    if (t.steps) {
        const double steps = *t.steps * scale;
        return "within " + format::number(steps) + (steps == 1 ? " step" : " steps") + " of the sweep";
    }
    std::string s;
    if (t.rel && *t.rel > 0) s += "±" + units::format(*t.rel * scale, "ratio");
    // An absolute tolerance on a percentage is in points: "±3%" would read as 3% of the value.
    if (t.abs && *t.abs > 0) {
        const double abs = *t.abs * scale;
        s += (s.empty() ? "±" : " + ") +
             (unit == "%" ? format::number(100 * abs) + " percentage point" + (100 * abs == 1 ? "" : "s") : units::format(abs, dim));
    }
    return s.empty() ? "exactly" : "within " + s;
}

// What a number's verdict means, in words that cannot be misread: a wrong answer is never
// "accepted within ...", and a partial one says both bands and the credit. Nothing here tells
// the distance to the expected value (the report shows that value when the spec allows).
std::string verdict_words(Verdict v, const Question& q, const std::string& unit) {
    const std::string full = describe_tolerance(q, unit);
    const bool band = q.partial.within > 0;
    const std::string partial = band ? describe_tolerance(q, unit, q.partial.within) : "";
    const std::string credit = band ? format::percent(q.partial.credit) + " of the points" : "";
    if (v == Verdict::correct) return "accepted: " + full;
    if (v == Verdict::partial) return "partial credit (" + credit + "): not " + full + " (full marks), but " + partial;
    return "not " + full + (band ? ", nor " + partial + " (" + credit + ")" : "");
}

// A value in the question's unit, as the student wrote it ("91 KiB", "512").
std::string in_unit(double si_value, const std::string& unit) {
    return format::number(units::to_unit(si_value, unit)) + (unit.empty() ? "" : " " + unit);
}

std::vector<double> sweep_points(const Question& q, const RawRun& raw) {
    std::vector<double> pts = q.tolerance.sweep;
    if (!q.tolerance.sweep_param.empty())
        for (const auto& m : raw.measurements)
            for (const auto& p : m.workload.params)
                if (p.name == q.tolerance.sweep_param) pts.push_back(p.value);
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    return pts;
}

bool parse_bool(std::string s, bool& out) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "yes" || s == "true" || s == "y") return out = true, true;
    if (s == "no" || s == "false" || s == "n") return out = false, true;
    return false;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The band within() accepts around `expected` (at scale 1), as [lo, hi].
std::pair<double, double> accepted_band(double expected, const Tolerance& t) {
    if (t.factor) return expected > 0 ? std::pair{expected / *t.factor, expected * *t.factor} : std::pair{expected, expected};
    const double half = t.abs.value_or(0) + (t.rel.value_or(0) + 1e-12) * std::fabs(expected);
    return {expected - half, expected + half};
}

// A unit slip is the right digits in the wrong unit. The scaled answer landing in the accepted
// band shows that only where the band is narrow: no wider than this factor and clear of 0. A band
// that reaches 0 or is wider (abs: 1 around an expected 0.625%, where 2%, 6% and 60% all land once
// divided by 100; factor: 2, most of a decade) holds some power of ten of many a wrong answer;
// there the scaled answer must also carry the expected value's digits, to the rounding a student
// copies them with.
constexpr double kSlipBandRatio = 2;
constexpr double kSlipDigits = 0.02;

// Decimal and binary byte prefixes, each with its twin: GB and GiB differ by 7%, more than most
// tolerances, and a student who knows the number may still pick the wrong one.
constexpr std::pair<const char*, const char*> kBytePrefixTwins[] = {
    {"kB", "KiB"}, {"MB", "MiB"}, {"GB", "GiB"}, {"TB", "TiB"}, {"PB", "PiB"},
};

// How many bytes one of a byte unit is, in words: "10^9", "2^30".
std::string byte_unit_size(const std::string& unit) {
    const double f = units::from_unit(1, unit);
    const int ten = static_cast<int>(std::lround(std::log10(f))), two = static_cast<int>(std::lround(std::log2(f)));
    return std::pow(10.0, ten) == f ? fmt::format("10^{}", ten) : fmt::format("2^{}", two);
}

// A byte answer that is right in another byte unit: the decimal prefix for the binary one (16 GB
// where 16 GiB is right), or a bare number right in another unit (17179869184 where the question
// reads GiB: bytes meant). The power-of-ten check below misses both (1.024^3, 2^30). "" otherwise.
std::string byte_unit_slip(const std::string& text, const units::Quantity& claim, const std::string& unit,
                           const std::function<bool(double)>& right_digits) {
    const std::string dim = units::dimension_of(unit).value_or("");
    if (dim != "B" && dim != "B/s") return "";
    const std::string per_s = dim == "B/s" ? "/s" : "";
    if (!claim.unit.empty()) {
        // The number as written: the claim less its unit.
        std::string n = text.size() >= claim.unit.size() ? text.substr(0, text.size() - claim.unit.size()) : text;
        n = n.substr(0, n.find_last_not_of(" \t") + 1);
        for (const auto& [decimal, binary] : kBytePrefixTwins) {
            const std::string d = decimal + per_s, b = binary + per_s;
            if (claim.unit != d && claim.unit != b) continue;
            const std::string twin = claim.unit == d ? b : d;
            if (!right_digits(units::from_unit(claim.number, twin))) return "";
            return fmt::format("; {} {} is {} x {} bytes{}: {} {} ({} bytes each) would be right", n,
                               claim.unit, n, byte_unit_size(claim.unit), per_s, n, twin, byte_unit_size(twin));
        }
        return "";
    }
    for (const char* u : {"B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}) {
        const std::string other = u + per_s;
        // A power of ten apart (GB and B), the "off by exactly 10^n" note below says it.
        const double ratio = std::log10(units::from_unit(1, other) / units::from_unit(1, unit));
        if (std::fabs(ratio - std::round(ratio)) < 1e-9) continue;
        if (!right_digits(units::from_unit(claim.number, other))) continue;
        return fmt::format("; {} was read as {} {} (a bare number is read in the question's unit, {}): did you mean {} {}{}?", text,
                           text, unit, unit, text, other, std::string(u) == "B" ? " (bytes)" : "");
    }
    return "";
}

// A wrong number that is right but for a power of ten is usually a unit slip (a fraction where
// percent is asked, GFLOP/s written as FLOP/s): say so. The grade stays as written.
std::string unit_slip_hint(const std::string& text, const units::Quantity& claim, double expected, const Question& q,
                           const std::string& unit) {
    const double value = claim.value;
    const std::string trimmed = text.substr(0, text.find_last_not_of(" \t") + 1);
    const bool bare = claim.unit.empty();
    // One comma and three digits after it ("1,125") groups thousands, as the docs say; a student
    // who writes a decimal comma meant a thousandth of it. Where that reading is right, say so
    // (the grade stays as written: the answer is ambiguous, and a resubmission settles it).
    if (const std::size_t comma = trimmed.find(','); comma != std::string::npos && trimmed.find(',', comma + 1) == std::string::npos &&
                                                     trimmed.find('.') == std::string::npos) {
        std::size_t digits = 0;
        while (comma + 1 + digits < trimmed.size() && std::isdigit(static_cast<unsigned char>(trimmed[comma + 1 + digits]))) ++digits;
        if (digits == 3 && within(value / 1000, expected, q.tolerance, 1)) {
            std::string decimal = trimmed;
            decimal[comma] = '.';
            return "; " + trimmed + " was read as " + fmt::format("{:g}", value) + " (a comma groups thousands): if you meant " + decimal +
                   ", write a decimal point";
        }
    }
    const auto [lo, hi] = accepted_band(expected, q.tolerance);
    const bool narrow = (lo > 0 && hi <= kSlipBandRatio * lo) || (hi < 0 && -lo <= kSlipBandRatio * -hi);
    // Would `v` (SI) be right, and show the right digits rather than land in a wide band?
    auto right_digits = [&](double v) {
        return within(v, expected, q.tolerance, 1) && (narrow || std::fabs(v - expected) <= kSlipDigits * std::fabs(expected));
    };
    if (const std::string bytes = byte_unit_slip(trimmed, claim, unit, right_digits); !bytes.empty()) return bytes;
    for (int k : {2, -2, 3, -3, 6, -6, 9, -9, 12, -12}) {
        const double f = std::pow(10.0, k);
        if (!right_digits(value * f)) continue;
        // `value` is already SI (0.241 read as 0.241% is 0.00241): the fraction meant is value * f.
        if (unit == "%" && k == 2 && bare)
            return "; " + trimmed + " was read as " + trimmed + "%: did you mean " + format::percent(value * f) + "?";
        return fmt::format("; your answer is off by exactly 10^{}: check the unit{}", -k,
                           bare && !unit.empty() ? " (a bare number is read in " + unit + ")" : "");
    }
    return "";
}

// A word answer (a regime, a choice) as it is matched: option_key's reading (case, blanks, hyphens
// and underscores do not matter; runs of them count as one) of the answer less a full stop a
// sentence ends with ("Memory bound.").
std::string answer_key(const std::string& claim) {
    std::string key = option_key(claim);
    if (!key.empty() && key.back() == '.') key.pop_back();
    if (!key.empty() && key.back() == '_') key.pop_back();
    return key;
}

// "12853 tokens" in a question whose noun is token: the claim without its last word when that is
// one of the nouns (singular or plural, any case), else the claim as written.
std::string without_last_noun(const std::string& claim, const std::vector<std::string>& nouns) {
    const std::size_t end = claim.find_last_not_of(" \t");
    if (end == std::string::npos) return claim;
    const std::size_t blank = claim.find_last_of(" \t", end);
    if (blank == std::string::npos) return claim;
    const std::string word = lower(claim.substr(blank + 1, end - blank));
    for (const auto& noun : nouns) {
        const std::string n = lower(noun);
        const bool plural_y = n.size() > 1 && n.back() == 'y' && word == n.substr(0, n.size() - 1) + "ies";
        if (word == n || word == n + "s" || word == n + "es" || plural_y) return claim.substr(0, blank);
    }
    return claim;
}

// The claim without its nouns: one ("41 syncs") or two ("41 sync events", "14 kernel ranges").
std::string without_noun(const std::string& claim, const std::vector<std::string>& nouns) {
    if (nouns.empty()) return claim;
    const std::string once = without_last_noun(claim, nouns);
    return once == claim ? claim : without_last_noun(once, nouns);
}

// The significant digits of the number a claim starts with ("1.30 GB": 3, "0.0045": 2, "14": 2;
// "1400" counts 2, its zeros taken as placeholders); 0 when it starts with none.
int significant_digits(const std::string& claim) {
    std::size_t i = claim.find_first_not_of(" \t+-");
    std::string digits;
    bool point = false;
    for (; i < claim.size(); ++i) {
        const char c = claim[i];
        if (c >= '0' && c <= '9') digits += c;
        else if (c == '.' && !point) point = true;
        else if (c == ',' || c == '_') continue;
        else break;
    }
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
    if (!point) digits.erase(std::min(digits.find_last_not_of('0') + 1, digits.size()));
    return static_cast<int>(digits.size());
}

// `v` rounded to `digits` significant digits.
double round_to_digits(double v, int digits) {
    if (v == 0 || !std::isfinite(v)) return v;
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
    return std::round(v * scale) / scale;
}

// How a claim read leniently was read ("10.9 GFLOPs" as GFLOP/s): said whatever the verdict, so a
// student learns the spelling that cannot be misread.
void add_reading_note(QuestionResult& r, const units::Quantity& claim) {
    if (claim.note.empty()) return;
    r.feedback += "; " + claim.note;
    r.advises = true;
}

void grade_number(QuestionResult& r, const Question& q, double expected, const RawRun& raw, const std::string& default_unit,
                  double* claim_si = nullptr) {
    // A question without `unit:` reads answers in the metric's own SI unit, so a claim of
    // another dimension is still refused.
    const std::string unit = q.unit.empty() ? default_unit : q.unit;
    const std::string dim = units::dimension_of(unit).value_or("");
    // The expected value is shown in the question's unit: a "%" question in percent, a ratio
    // question as a plain factor (a doubling ratio of 1.05 is not "105%").
    const bool fraction = record::shown_as_percent(q.expected.metric, "ratio");
    // Shown to enough digits to judge the tolerance by: 3.4 TFLOP cannot tell a claim 1% off.
    int digits = 3;
    if (const double slack = q.tolerance.rel.value_or(0) + (expected != 0 ? q.tolerance.abs.value_or(0) / std::fabs(expected) : 0);
        slack > 0 && !q.tolerance.factor && !q.tolerance.steps)
        digits = std::clamp(static_cast<int>(std::ceil(-std::log10(slack))) + 2, 3, 6);
    if (unit == "%" || (dim == "ratio" && fraction)) r.expected = format::percent(expected);
    else if (dim == "ratio") r.expected = format::number(expected, {.digits = digits});
    else r.expected = units::format(expected, dim, digits);
    units::Quantity claim;
    try {
        claim = units::parse_claim(without_noun(r.claim, q.nouns), unit);
    } catch (const units::UnitError& e) {
        r.verdict = Verdict::invalid;
        r.feedback = e.what();
        return;
    }
    // parse_claim lets a plain count take any unit and says which it got: "6 GB" is no count.
    if (dim.empty() && !claim.dimension.empty()) {
        r.verdict = Verdict::invalid;
        r.feedback = "a plain count is asked for, not a quantity in " + claim.dimension + ": write the number alone";
        return;
    }
    if (claim_si) *claim_si = claim.value;
    if (q.type == QuestionType::integer && claim.value != std::floor(claim.value)) {
        r.verdict = Verdict::invalid;
        r.feedback = "a whole number is asked for";
        return;
    }
    if (q.tolerance.steps) {
        auto pts = sweep_points(q, raw);
        if (pts.empty()) {
            // The spec's mistake (check_spec_sweeps refuses it where the lesson's plan is known),
            // never the student's: the question is void, worth nothing either way.
            r.verdict = Verdict::void_question;
            r.max_points = 0;
            r.feedback = "not graded: the run holds no '" + q.tolerance.sweep_param + "' sweep to compare with (a grading spec mistake)";
            return;
        }
        // Claim and expected value are each placed on their nearest point (sweep.hpp). A claim
        // written to the precision `lab` prints the expected value in is that value, even where
        // rounding would tip it over the midway between two points.
        const int want = nearest_point(pts, expected);
        const bool as_shown = std::fabs(claim.value - expected) <= 1e-3 * std::fabs(expected);
        const int nearest = nearest_point(pts, claim.value);
        const bool tipped = as_shown && nearest != want;
        const int got = tipped ? want : nearest;
        const int d = std::abs(got - want);
        if (d <= *q.tolerance.steps) r.verdict = Verdict::correct;
        else if (q.partial.within > 0 && d <= *q.tolerance.steps * q.partial.within) r.verdict = Verdict::partial;
        else r.verdict = Verdict::wrong;
        r.feedback = verdict_words(r.verdict, q, unit);
        add_reading_note(r, claim);
        if (!on_sweep(pts, claim.value)) {
            // Said whatever the verdict: the student learns how their answer was read, and
            // nothing about the expected value.
            r.feedback += "; " + r.claim + " is not a point of the sweep: ";
            r.feedback += tipped ? std::string("it is the value itself, to the precision `lab` prints it")
                                   : "it counts as " + in_unit(pts[got], unit) + ", the point nearest to it" +
                                         (geometric_sweep(pts) ? " on the sweep's log scale" : "");
            r.advises = true;
        }
        return;
    }
    if (within(claim.value, expected, q.tolerance, 1)) r.verdict = Verdict::correct;
    else if (q.partial.within > 0 && within(claim.value, expected, q.tolerance, q.partial.within)) r.verdict = Verdict::partial;
    else r.verdict = Verdict::wrong;
    r.feedback = verdict_words(r.verdict, q, unit);
    add_reading_note(r, claim);
    // The right value rounded too far ("1.3" for 1.33, "14 TFLOP" for 13.8): said as such, in
    // place of the hint, which would send the student looking for a mistake in their method.
    if (r.verdict != Verdict::correct && expected != 0) {
        const int digits = significant_digits(r.claim);
        if (digits > 0 && digits < 3 && claim.value != 0 &&
            std::fabs(round_to_digits(expected, digits) - claim.value) <= 1e-9 * std::fabs(claim.value)) {
            r.feedback += fmt::format("; your answer is the expected value to {} significant figure{}: write 3 or more, as lab prints "
                                      "them",
                                      digits, digits == 1 ? "" : "s");
            r.advises = true;
        }
    }
    if (r.verdict == Verdict::wrong)
        if (const std::string hint = unit_slip_hint(r.claim, claim, expected, q, unit); !hint.empty()) {
            r.feedback += hint;
            r.advises = true;
        }
}

// How good a verdict is, to keep the better of two readings.
int rank(Verdict v) { return v == Verdict::correct ? 2 : v == Verdict::partial ? 1 : 0; }

// Grades the answer again against another value a fair reading gives (`other`), and keeps that
// verdict where it is better, said to the student (advises: a bare "correct" would not tell them
// which reading earned it): `reading` says what the answer was read as, `rule` why that counts.
// Where the other reading is no better but its grading has advice of its own (a x100 slip against
// that value: "0.745 was read as 0.745%"), that advice is kept: the answer is nearer that reading.
void accept_other_reading(QuestionResult& r, const Question& q, double other, const RawRun& raw, const std::string& unit,
                          const std::string& reading, const std::string& rule) {
    QuestionResult alt = r;
    grade_number(alt, q, other, raw, unit);
    if (rank(alt.verdict) > rank(r.verdict)) {
        r.verdict = alt.verdict;
        r.feedback = alt.verdict == Verdict::correct ? "accepted: " + reading + "; " + rule
                                                     : "partly correct, read as " + reading + " (within partial credit of that value)";
        r.advises = true;
    } else if (alt.advises && !r.advises) {
        r.feedback = alt.feedback;
        r.advises = true;
    }
}

// A workload's roof fraction has two columns in every run's table: `roof`, of the run's ceilings
// (the graded metric), and `ref`, of the ceilings measured right after the kernel, which its
// regime is decided by and which the student guide tells a student to read. On a busy machine the
// two differ by 20 to 50 points; a student who worked out the ref column's share was marked wrong
// (a student review). Both are measured; either is accepted, as the regime questions accept either.
void accept_reference_fraction(QuestionResult& r, const Question& q, const Submission& s, const MetricValue* metric) {
    const std::string suffix = ".roof_fraction";
    const std::string& m = q.expected.metric;
    if (!metric || rank(r.verdict) == 2 || r.verdict == Verdict::invalid || m.size() <= suffix.size() ||
        m.compare(m.size() - suffix.size(), suffix.size(), suffix) != 0)
        return;
    const std::string workload = m.substr(0, m.size() - suffix.size());
    for (const auto& wd : s.derivation.workloads) {
        if (wd.workload != workload) continue;
        const double ref = reference_roof_fraction(s.raw, workload, wd.placement);
        if (ref > 0 && std::fabs(ref - metric->number) > 1e-9 * std::fabs(metric->number))
            accept_other_reading(r, q, ref, s.raw, metric->unit, "the ref column, the share of the ceilings measured right after the kernel",
                                 "the graded value is the roof column's, of the run's ceilings shown above the table (the two differ on a "
                                 "busy machine): either is accepted");
        return;
    }
}

// A number answer and its expected value, both in SI, by question id: what a later question
// carried from it compares with.
using NumberAnswers = std::map<std::string, std::pair<double, double>>;

// How far off an earlier answer may be and still carry: within x/÷ this of its expected value. A
// misread plateau (1.83 ns for 1.28) carries; an invented one (1000 ns) does not, or any two
// made-up latencies divided would earn a ratio question's points.
constexpr double kCarryWithin = 3;

// Question::carried_from: an answer worked out correctly from the student's own earlier answers
// (02.03's l1_cycles from their l1_latency) is not charged again for the earlier one's error: it is
// graded against the expected value scaled as the earlier answers were off.
void accept_carried_forward(QuestionResult& r, const Question& q, double expected, const Submission& s, const std::string& unit,
                            const NumberAnswers& earlier) {
    if (q.carried_from.empty() || rank(r.verdict) == 2 || r.verdict == Verdict::invalid) return;
    double scale = 1;
    std::string from, too_far;
    for (const auto& [id, power] : q.carried_from) {
        const auto it = earlier.find(id);
        // An earlier answer missing, unreadable or of the other sign carries nothing.
        if (it == earlier.end() || !(it->second.second != 0)) return;
        const double off = it->second.first / it->second.second;
        if (!(off > 0) || !std::isfinite(off)) return;
        if (off < 1 / kCarryWithin || off > kCarryWithin) too_far += (too_far.empty() ? "" : " and ") + id;
        scale *= std::pow(off, power);
        from += (from.empty() ? "" : " and ") + id;
    }
    if (!std::isfinite(scale) || std::fabs(scale - 1) <= 1e-9) return;
    const bool many = q.carried_from.size() > 1;
    const std::string yours = std::string("your answer") + (many ? "s" : "") + " to " + from;
    if (!too_far.empty()) {
        // Worked out right from an answer too far off to carry: the method hint would blame a
        // method the student applied; say why it does not score instead.
        QuestionResult alt = r;
        grade_number(alt, q, expected * scale, s.raw, unit);
        if (rank(alt.verdict) > rank(r.verdict)) {
            r.feedback = "consistent with " + yours + ", but " + too_far + " is more than " + fmt::format("{:g}", kCarryWithin) +
                         " times off its expected value: a worked answer scores only when the answers it uses are within x/÷ " +
                         fmt::format("{:g}", kCarryWithin) + " of theirs";
            r.advises = true;
        }
        return;
    }
    accept_other_reading(r, q, expected * scale, s.raw, unit, "consistent with " + yours,
                         std::string(many ? "they are" : "it is") + " graded on " + (many ? "their" : "its") +
                             " own: an error is charged once, where it was made");
}

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

std::vector<std::string> plausibility_problems(const nlohmann::json& record, const RawRun& raw, const Derivation& d) {
    std::vector<std::string> problems;
    const std::string again = "record the run again with `lab run " + raw.lesson_id + "`";
    // The ceilings the workloads are held against: as the run started, raised by what it measured
    // while running (RawRun::ceilings, recomputed from the raw data by effective_ceilings).
    const Ceilings& ceilings = raw.ceilings;
    const double bw = ceilings.peak_bandwidth();

    // What the device can do on paper, from the grader's own configs (never the record's copy).
    const nlohmann::json paper = device_spec_json(raw.device_kind, raw.facts, raw.ceilings_at_start);
    const std::string paper_kind = paper.value("kind", "none");
    auto paper_flops = [&](const std::string& pipe) -> double {
        const auto& f = paper.value("flops_per_s", nlohmann::json::object());
        return f.contains(pipe) && f[pipe].is_number() ? f[pipe].get<double>() : 0.0;
    };
    const double paper_bw = paper.contains("bandwidth_bytes_per_s") && paper["bandwidth_bytes_per_s"].is_number()
                                ? paper["bandwidth_bytes_per_s"].get<double>() : 0.0;
    const std::string paper_name = paper_kind == "datasheet" ? "the datasheet's" : "the theoretical peak's";
    const double flops_slack = paper_kind == "datasheet" ? kPhysicsSlack : kMeasuredClockSlack;

    for (const auto& m : raw.measurements) {
        const Workload& w = m.workload;
        if (!(m.time.median > 0) || !std::isfinite(m.time.median)) {
            problems.push_back("workload '" + w.name + "' has no positive median time");
            continue;
        }
        if (w.flops < 0 || w.bytes < 0) problems.push_back("workload '" + w.name + "' has negative counts");
        if (w.name.rfind("calibrate.", 0) == 0) continue;
        const double fps = w.flops / m.time.median, bps = w.bytes / m.time.median;
        // Physics first: no run, however measured, beats the device on paper.
        if (double p = paper_flops(w.pipe); p > 0 && fps > flops_slack * p)
            problems.push_back("workload '" + w.name + "' claims " + rate(fps, "FLOP/s") + ", above " + paper_name + " " + w.pipe +
                               " figure of " + rate(p, "FLOP/s") + ": no device does that; " + again);
        if (w.level == "dram" && paper_bw > 0 && bps > kDatasheetBandwidthSlack * paper_bw)
            problems.push_back("workload '" + w.name + "' claims " + rate(bps, "B/s") + ", above the datasheet's DRAM bandwidth of " +
                               rate(paper_bw, "B/s") + "; " + again);
        // Then the run's own ceilings: a run re-measures a ceiling a workload beats by more than
        // the margin (or raises it to the workload's rate), so an honest record never shows one.
        const double peak = ceilings.peak_flops(w.pipe);
        if (peak > 0 && fps > roofline::kRoofMargin * peak)
            problems.push_back("workload '" + w.name + "' claims " + rate(fps, "FLOP/s") + ", above its " + w.pipe + " roof of " +
                               rate(peak, "FLOP/s") + " even with the ceilings the run measured; a run of this lab never "
                               "records that (an older lab, or an edited record): " + again);
        if (held_to_dram_roof(w, raw.facts) && bw > 0 && bps > roofline::kRoofMargin * bw)
            problems.push_back("workload '" + w.name + "' claims " + rate(bps, "B/s") + ", above the DRAM roof of " + rate(bw, "B/s") +
                               " even with the ceilings the run measured; a run of this lab never records that (an older "
                               "lab, or an edited record): " + again);
    }

    // The in-run ceiling measurements are raw data like any workload's.
    for (const auto& cm : raw.ceiling_measurements) {
        if (cm.purpose == "evidence") {
            if (cm.workloads.empty() || !raw.find(cm.workloads.front()))
                problems.push_back("the ceiling " + cm.ceiling + " is raised by a workload the run does not hold");
        } else if (!(cm.measurement.time.median > 0) || !std::isfinite(cm.measurement.time.median)) {
            problems.push_back("an in-run measurement of the " + cm.ceiling + " ceiling has no positive median time");
        }
    }

    // bandwidth.best is the largest of the bandwidth ceilings the record carries.
    {
        double largest = 0;
        for (const auto& [k, v] : raw.ceilings_at_start.bandwidth_bytes_per_s)
            if (is_bandwidth_roof_kernel(k)) largest = std::max(largest, v.value);
        const double best = raw.ceilings_at_start.peak_bandwidth();
        if (largest > 0 && std::fabs(best - largest) > 1e-9 * largest)
            problems.push_back("the record's bandwidth.best ceiling (" + rate(best, "B/s") +
                               ") is not the largest of its bandwidth-kernel ceilings (" + rate(largest, "B/s") + "); " + again);
    }

    // Ceilings against the device on paper: a forged ceiling would lift every roof.
    for (const auto& [pipe, c] : ceilings.flops_per_s)
        if (double p = paper_flops(pipe); p > 0 && c.value > flops_slack * p)
            problems.push_back("the measured " + pipe + " ceiling " + rate(c.value, "FLOP/s") + " exceeds " + paper_name + " " +
                               rate(p, "FLOP/s") + ": run `lab calibrate`, then " + again +
                               "; if it happens again, show your instructor (configs/ may not know this device)");
    if (paper_kind == "datasheet" && paper_bw > 0 && bw > kPhysicsSlack * paper_bw)
        problems.push_back("the measured bandwidth ceiling " + rate(bw, "B/s") + " exceeds the datasheet's " + rate(paper_bw, "B/s") +
                           ": run `lab calibrate`, then " + again);

    // Stored derived values must be what the lesson's code derives from the raw measurements.
    const auto& stored = record.value("metrics", nlohmann::json::object());
    for (const auto& m : d.metrics) {
        if (!stored.contains(m.name)) continue;
        const auto& v = stored[m.name]["value"];
        bool same = m.kind == MetricKind::category ? (v.is_string() && v.get<std::string>() == m.text)
                    : v.is_number()               ? std::fabs(v.get<double>() - m.number) <= 1e-9 * std::fabs(m.number) + 1e-300
                                                  : v.is_null();
        if (!same) problems.push_back("the record's stored " + m.name + " differs from the value its measurements give");
    }
    return problems;
}

void check_binding(const Submission& s) {
    const AnswersFile& a = s.answers;
    if (a.lesson != s.spec.lesson)
        throw InputError(a.file, "the answers are for lesson '" + a.lesson + "' but are being graded as " + s.spec.lesson,
                         "submit them for lesson " + a.lesson);
    if (s.raw.lesson_id != s.spec.lesson)
        throw InputError("", "the run record is of lesson '" + s.raw.lesson_id + "', not " + s.spec.lesson,
                         "submit the run of lesson " + s.spec.lesson);
    std::string digest = s.record.value("digest", "");
    if (a.run != digest)
        throw InputError(a.file, "the answers are bound to run " + a.run.substr(0, 19) + "…, but the run given" +
                                     (s.run_file.empty() ? "" : " (" + s.run_file.string() + ")") + " is " +
                                     digest.substr(0, 19) + "…",
                         "submit the run the answers were written for, or make a new template with `lab answers`");
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
            continue;
        }
        const std::string near = did_you_mean(id, ids);
        rep.notes.push_back("line " + std::to_string(claim.line) + ": '" + id + "' is not a question of lesson " + s.spec.lesson +
                            (near.empty() ? ": not graded" : " (did you mean '" + near + "'?): not graded"));
        if (!near.empty()) misspelt[near] = id;
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
            r.feedback = applies ? "the run has no " + q.expected.metric + " on this device" : "does not apply to a " + kind + " run";
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
        } else if (q.type == QuestionType::number || q.type == QuestionType::integer) {
            double expected = metric ? metric->number : units::parse_claim(*q.expected.value, q.unit).value;
            double claim_si = std::nan("");
            grade_number(r, q, expected, s.raw, metric ? metric->unit : q.unit, &claim_si);
            accept_reference_fraction(r, q, s, metric);
            accept_carried_forward(r, q, expected, s, metric ? metric->unit : q.unit, number_answers);
            if (r.verdict != Verdict::invalid && r.verdict != Verdict::void_question && std::isfinite(claim_si))
                number_answers[q.id] = {claim_si, expected};
        } else if (q.type == QuestionType::regime) {
            std::string want = metric ? metric->text : *q.expected.value;
            r.expected = want;
            auto c = roofline::parse_regime(answer_key(r.claim));
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
                if (candidates.size() > 1) {
                    std::string why;
                    std::string wl = q.expected.metric.substr(0, q.expected.metric.rfind('.'));
                    for (const auto& wd : s.derivation.workloads)
                        if (wd.workload == wl && !wd.placement.measured.reason.empty()) why = " (" + wd.placement.measured.reason + ")";
                    r.feedback = "the run could not decide between " + std::string(roofline::to_string(candidates[0])) + " and " +
                                 roofline::to_string(candidates[1]) + why + ": either is accepted";
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
        } else if (q.type == QuestionType::choice) {
            std::string want = metric ? metric->text : *q.expected.value;
            r.expected = want;
            bool known = false;
            std::string listed;
            for (const auto& o : q.options) {
                known = known || choice_key(o) == choice_key(answer_key(r.claim));
                listed += (listed.empty() ? "" : ", ") + o;
            }
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
                r.verdict = std::find(accepted.begin(), accepted.end(), choice_key(answer_key(r.claim))) != accepted.end()
                                ? Verdict::correct
                                : Verdict::wrong;
                if (accepted.size() > 1) r.feedback = "the run sits on the boundary between " + want + ": either is accepted";
            }
        } else {
            bool want = false, got = false;
            std::string w = metric ? (metric->kind == MetricKind::category ? metric->text : (metric->number != 0 ? "yes" : "no"))
                                   : *q.expected.value;
            parse_bool(w, want);
            r.expected = want ? "yes" : "no";
            if (!parse_bool(r.claim, got)) {
                r.verdict = Verdict::invalid;
                r.feedback = "write yes or no";
            } else {
                r.verdict = got == want ? Verdict::correct : Verdict::wrong;
            }
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

std::vector<std::string> model_value_warnings(const GradingSpec& spec, const std::map<std::string, std::vector<ModelValue>>& values) {
    std::vector<std::string> out;
    for (const auto& q : spec.questions) {
        const auto found = values.find(q.expected.metric);
        if (q.expected.metric.empty() || found == values.end()) continue;
        const std::string at = spec.file + ":" + std::to_string(q.line_of("tolerance")) + ": question '" + q.id + "'";
        const bool numeric = q.type == QuestionType::number || q.type == QuestionType::integer;
        if (numeric && !q.tolerance.steps && (q.tolerance.rel || q.tolerance.abs || q.tolerance.factor)) {
            // The value as `lab` prints it (3 significant figures in the question's unit) must pass:
            // a band narrower than that rounding marks a student who copies it wrong.
            bool wide_everywhere = true, checked = false;
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
                    wide_everywhere = false;
                    break;
                }
                const double wide = q.tolerance.factor ? std::fabs(v.value.number) * (*q.tolerance.factor - 1)
                                                       : q.tolerance.abs.value_or(0) + q.tolerance.rel.value_or(0) * std::fabs(v.value.number);
                wide_everywhere = wide_everywhere && wide >= 10 * std::fabs(v.value.number);
            }
            if (wide_everywhere && checked)
                out.push_back(at + ": its tolerance is more than 10 times the value on every model device, so almost any answer passes (abs "
                                   "is in the question's unit" + (q.unit.empty() ? "" : ", " + q.unit) + ")\n  fix: write abs in the question's unit, or use rel");
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
