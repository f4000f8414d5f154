// Grading a number answer (see grade_number.hpp).
#include "grade_number.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "format.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "sweep.hpp"
#include "units.hpp"

namespace lab::grader {

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

// A value in the question's unit, as the student wrote it ("91 KiB", "512").
std::string in_unit(double si_value, const std::string& unit) {
    // Whole units up to a million are kept whole: "1448 KiB", not "1.45e3 KiB" (a review).
    return format::number(units::to_unit(si_value, unit), {.whole_below = 1e6}) + (unit.empty() ? "" : " " + unit);
}

// `v` rounded to `digits` significant digits.
double round_to_digits(double v, int digits) {
    if (v == 0 || !std::isfinite(v)) return v;
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
    return std::round(v * scale) / scale;
}

namespace {

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
        // In the question's unit, as the answer was asked: "±1 MiB", not "±1.05 MB".
        s += (s.empty() ? "±" : " + ") +
             (unit == "%"                         ? format::number(100 * abs) + " percentage point" + (100 * abs == 1 ? "" : "s")
              : !q.unit.empty() && q.unit == unit ? format::number(units::to_unit(abs, unit)) + (unit == "ratio" ? "" : " " + unit)
                                                  : units::format(abs, dim));
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
        else if (const std::size_t n = point ? 0 : units::leading_group_space(std::string_view(claim).substr(i))) i += n - 1;  // "1 400"
        else break;
    }
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
    if (!point) digits.erase(std::min(digits.find_last_not_of('0') + 1, digits.size()));
    return static_cast<int>(digits.size());
}

// How a claim read leniently was read ("10.9 GFLOPs" as GFLOP/s): said whatever the verdict, so a
// student learns the spelling that cannot be misread.
void add_reading_note(QuestionResult& r, const units::Quantity& claim) {
    if (claim.note.empty()) return;
    r.feedback += "; " + claim.note;
    r.advises = true;
}

}  // namespace

void grade_number(QuestionResult& r, const Question& q, double expected, const RawRun& raw, const std::string& default_unit,
                  double* claim_si) {
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
    // The right value rounded too far ("1.3" for 1.33, "14 TFLOP" for 13.8, "19.35 GiB" for a
    // capture's 19818 MiB read to 1 MiB): said as such, in place of the hint, which would send the
    // student looking for a mistake in their method. Rounded in the unit the answer is written in.
    if (r.verdict != Verdict::correct && expected != 0 && claim.number != 0 && claim.value != 0) {
        const int digits = significant_digits(r.claim);
        const double unit_si = claim.value / claim.number;  // the answer's unit, in SI
        if (digits > 0 && std::fabs(round_to_digits(expected / unit_si, digits) - claim.number) <= 1e-9 * std::fabs(claim.number)) {
            if (digits < 3)
                r.feedback += fmt::format("; your answer is the expected value to {} significant figure{}: write 3 or more, as lab prints "
                                          "them",
                                          digits, digits == 1 ? "" : "s");
            else {
                double asked = 0;  // the question's unit, in SI (0: none to name)
                try {
                    if (!unit.empty()) asked = units::from_unit(1, unit);
                } catch (const units::UnitError&) {
                }
                const bool other_unit = asked > 0 && std::fabs(unit_si - asked) > 1e-9 * asked;
                r.feedback += fmt::format("; your answer is the expected value to {} significant figures, too coarse to be {}: "
                                          "write more figures{}",
                                          digits, describe_tolerance(q, unit), other_unit ? ", or answer in " + unit : "");
            }
            r.advises = true;
        }
    }
    if (r.verdict == Verdict::wrong)
        if (const std::string hint = unit_slip_hint(r.claim, claim, expected, q, unit); !hint.empty()) {
            r.feedback += hint;
            r.advises = true;
        }
}


namespace {

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


// How far off an earlier answer may be and still carry: within x/÷ this of its expected value. A
// misread plateau (1.83 ns for 1.28) carries; an invented one (1000 ns) does not, or any two
// made-up latencies divided would earn a ratio question's points.
constexpr double kCarryWithin = 3;

}  // namespace

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


}  // namespace lab::grader
