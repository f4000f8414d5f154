// Units for the grader. Students write claims with units in their answers files ("1.2 TB/s",
// "350 ns", "6.5 GiB", "80%") and each grading question names a unit ("GB/s", "us", "%"); this
// file reads both, converts them to the SI base unit of their dimension (the unit run records
// use) and renders SI values back for reports. It is strict on purpose: every accepted spelling
// means exactly one thing, and anything else is refused with a message saying what to write,
// because a silently misread unit costs a student the points of a right answer. A spelling that
// is not lab's but can mean one thing only (plain_spelling: "GB/sec", "FLOP per byte",
// "gigaflops") is read, with a note saying how.
//
// The rules (all spellings case-sensitive, as SI writes them):
// - time: s, ms, us, µs (U+00B5 or U+03BC), ns, ps, min, h;
// - bytes: B, byte, bytes; kB MB GB TB PB are decimal (1e3...), KiB MiB GiB TiB PiB binary
//   (1024...); "KB" is refused (JEDEC reads it as 1024) and so is "Gb" and every other b (bits);
// - bandwidth: any byte unit followed by "/s" ("/sec", "per second" read as /s, with a note);
// - FLOP: FLOP and FLOPs (a plural count) with k M G T P; rate: the same followed by "/s", or
//   FLOPS, kFLOPS ... PFLOPS (capital S: per second, as datasheets write it);
// - intensity: FLOP/B, FLOP/byte, FLOPs/B, FLOPs/byte; frequency Hz kHz MHz GHz; power mW W kW;
//   energy mJ J kJ; ratio: a bare fraction, "%", or an "x"/"×" suffix ("2.5x"); counts: no unit,
//   or a decimal prefix alone, as `lab` prints them (k M G T P: "78.7 k").
// - numbers: optional sign, digits with optional thousands commas or spaces (groups of three,
//   before the decimal point only) or underscores between digits, one decimal point, an exponent (e9, or
//   written out: ×10^9, x 10^9, *10**9); then optional whitespace and the unit; a closing full
//   stop and working in brackets after the answer are set aside (parse_claim). "~" / "≈", inf, NaN and numbers a double cannot hold are
//   refused.
#include "units.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "format.hpp"

namespace lab::units {
namespace {

struct Unit {
    std::string_view spelling;
    std::string_view dimension;
    double factor;  // 1 <spelling> = factor <SI base unit of dimension>
};

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024;
constexpr double kGi = kMi * 1024;
constexpr double kTi = kGi * 1024;
constexpr double kPi = kTi * 1024;

// Every unit this module reads, declared once. Rates of bytes and FLOP ("GB/s", "TFLOP/s") are
// not listed: known_units() derives them from the byte and FLOP rows, so the two can't drift.
constexpr Unit kUnits[] = {
    // Time. Micro comes in two code points: U+00B5 (micro sign: keyboards, Kineto) and U+03BC
    // (Greek mu: what some editors and fonts substitute). Both look identical to a student.
    {"s", "s", 1},
    {"ms", "s", 1e-3},
    {"us", "s", 1e-6},
    {"\u00b5s", "s", 1e-6},
    {"\u03bcs", "s", 1e-6},
    {"ns", "s", 1e-9},
    {"ps", "s", 1e-12},
    {"min", "s", 60},
    {"h", "s", 3600},
    // Bytes. SI prefixes are decimal with a lower-case k; IEC prefixes are binary. The two differ
    // by 7% at G, which is the kind of difference a question may be about.
    {"B", "B", 1},
    {"byte", "B", 1},
    {"bytes", "B", 1},
    {"kB", "B", 1e3},
    {"MB", "B", 1e6},
    {"GB", "B", 1e9},
    {"TB", "B", 1e12},
    {"PB", "B", 1e15},
    {"KiB", "B", kKi},
    {"MiB", "B", kMi},
    {"GiB", "B", kGi},
    {"TiB", "B", kTi},
    {"PiB", "B", kPi},
    // FLOP counts. "FLOPs" with a lower-case s is the plural ("13.5 GFLOPs per token").
    {"FLOP", "FLOP", 1},
    {"kFLOP", "FLOP", 1e3},
    {"MFLOP", "FLOP", 1e6},
    {"GFLOP", "FLOP", 1e9},
    {"TFLOP", "FLOP", 1e12},
    {"PFLOP", "FLOP", 1e15},
    {"FLOPs", "FLOP", 1},
    {"kFLOPs", "FLOP", 1e3},
    {"MFLOPs", "FLOP", 1e6},
    {"GFLOPs", "FLOP", 1e9},
    {"TFLOPs", "FLOP", 1e12},
    {"PFLOPs", "FLOP", 1e15},
    // "FLOPS" with a capital S is the datasheet's rate: 312 TFLOPS means 312 TFLOP/s.
    {"FLOPS", "FLOP/s", 1},
    {"kFLOPS", "FLOP/s", 1e3},
    {"MFLOPS", "FLOP/s", 1e6},
    {"GFLOPS", "FLOP/s", 1e9},
    {"TFLOPS", "FLOP/s", 1e12},
    {"PFLOPS", "FLOP/s", 1e15},
    // Arithmetic intensity: unprefixed only; roofline plots write FLOP/B or FLOP/byte.
    {"FLOP/B", "FLOP/B", 1},
    {"FLOP/byte", "FLOP/B", 1},
    {"FLOPs/B", "FLOP/B", 1},
    {"FLOPs/byte", "FLOP/B", 1},
    {"Hz", "Hz", 1},
    {"kHz", "Hz", 1e3},
    {"MHz", "Hz", 1e6},
    {"GHz", "Hz", 1e9},
    {"mW", "W", 1e-3},
    {"W", "W", 1},
    {"kW", "W", 1e3},
    {"mJ", "J", 1e-3},
    {"J", "J", 1},
    {"kJ", "J", 1e3},
    // Ratios. "ratio" is listed so that a grading spec can name the dimension as its unit; a bare
    // number in a ratio question is a fraction, in a "%" question a percent (parse_claim).
    {"ratio", "ratio", 1},
    {"%", "ratio", 0.01},
    {"x", "ratio", 1},
    {"times", "ratio", 1},
    {"\u00d7", "ratio", 1},
    // Plain counts have no unit, but may carry the decimal prefix `lab` prints them with
    // ("78.7 k", "8.39 M" in a run table).
    {"", "", 1},
    {"k", "", 1e3},
    {"M", "", 1e6},
    {"G", "", 1e9},
    {"T", "", 1e12},
    {"P", "", 1e15},
};

struct Known {
    std::string dimension;
    double factor;
};

// All accepted spellings: kUnits plus "<byte or FLOP unit>/s".
const std::map<std::string, Known, std::less<>>& known_units() {
    static const auto table = [] {
        std::map<std::string, Known, std::less<>> t;
        for (const Unit& u : kUnits) {
            t.emplace(std::string(u.spelling), Known{std::string(u.dimension), u.factor});
            if (u.dimension == "B" || u.dimension == "FLOP")
                t.emplace(std::string(u.spelling) + "/s", Known{std::string(u.dimension) + "/s", u.factor});
        }
        return t;
    }();
    return table;
}

// What each dimension is called in messages, and the decimal prefixes format() writes it with
// (powers of ten, lowest and highest; the unit itself is the dimension's name).
struct DimensionInfo {
    std::string_view dimension;
    std::string_view noun;
    std::string_view examples;
    int lowest_prefix = 0;
    int highest_prefix = 0;
};

const std::vector<DimensionInfo>& dimension_infos() {
    static const std::vector<DimensionInfo> infos = {
        // Times from ps to s; bytes (decimal: GB, never GiB), rates and counts from the unit to P.
        // The examples are in every message a student gets for a misread answer, so none may be an
        // answer a lesson asks (13.48 GB is Llama-2-7B's fp16 weights, 0.25 FLOP/B an fp32 dot's
        // AI, 41 the syncs of 02.10's trace): round figures no lesson's arithmetic gives
        // (tests/grader/test_unit_examples.cpp checks them against every lesson's answers).
        {.dimension = "s", .noun = "a time", .examples = "500 ns or 2 ms", .lowest_prefix = -12},
        {.dimension = "B", .noun = "a size in bytes", .examples = "9 GiB or 500 MB", .highest_prefix = 15},
        {.dimension = "B/s", .noun = "a bandwidth", .examples = "2 TB/s or 500 GB/s", .highest_prefix = 15},
        {.dimension = "FLOP", .noun = "a FLOP count", .examples = "5 TFLOP or 2e9 FLOP", .highest_prefix = 15},
        {.dimension = "FLOP/s", .noun = "a compute rate", .examples = "1 TFLOP/s or 500 GFLOPS", .highest_prefix = 15},
        {.dimension = "FLOP/B", .noun = "an arithmetic intensity", .examples = "7 FLOP/B or 0.3 FLOP/byte"},
        {.dimension = "Hz", .noun = "a frequency", .examples = "1.5 GHz or 800 MHz", .highest_prefix = 9},
        {.dimension = "W", .noun = "a power", .examples = "400 W or 1.2 kW", .lowest_prefix = -3, .highest_prefix = 3},
        {.dimension = "J", .noun = "an energy", .examples = "3 J or 200 mJ", .lowest_prefix = -3, .highest_prefix = 3},
        {.dimension = "ratio", .noun = "a ratio", .examples = "35% or 2.5"},
        {.dimension = "", .noun = "a plain count", .examples = "250 or 1,000,000"},
    };
    return infos;
}

const DimensionInfo& info_of(std::string_view dimension) {
    for (const auto& info : dimension_infos())
        if (info.dimension == dimension) return info;
    throw UnitError(fmt::format("unknown dimension '{}'", dimension));
}

std::string expected_phrase(const DimensionInfo& info) { return fmt::format("{} such as {}", info.noun, info.examples); }

// Whitespace as it arrives from YAML and from copy-paste out of documents: ASCII blanks, the
// no-break space (U+00A0), the thin space (U+2009) and the narrow no-break space (U+202F) that
// typeset "350 ns" often carries. Returns the byte length of the blank at the front of s, or 0.
std::size_t blank_length(std::string_view s) {
    if (s.empty()) return 0;
    if (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') return 1;
    if (s.substr(0, 2) == "\u00a0") return 2;
    if (s.substr(0, 3) == "\u2009" || s.substr(0, 3) == "\u202f") return 3;
    return 0;
}

std::string_view trim(std::string_view s) {
    while (std::size_t n = blank_length(s)) s.remove_prefix(n);
    // Trailing blanks: the multi-byte ones end in 0xA0, 0x89 or 0xAF, so test each suffix.
    for (bool changed = true; changed && !s.empty();) {
        changed = false;
        for (std::size_t n : {1u, 2u, 3u})
            if (s.size() >= n && blank_length(s.substr(s.size() - n)) == n) {
                s.remove_suffix(n);
                changed = true;
                break;
            }
    }
    return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ascii_lower(std::string_view s) {
    std::string out;
    for (char c : s) out += ascii_lower(c);
    return out;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

const Known* find_unit(std::string_view unit) {
    const auto& table = known_units();
    auto it = table.find(unit);
    return it == table.end() ? nullptr : &it->second;
}

// `unit` without its blanks (blank_length's: the no-break and thin spaces too).
std::string without_blanks(std::string_view unit) {
    std::string out;
    for (std::string_view rest = unit; !rest.empty();) {
        if (std::size_t n = blank_length(rest)) rest.remove_prefix(n);
        else out += rest[0], rest.remove_prefix(1);
    }
    return out;
}

// Why an unknown unit is unknown, when there is a likely intended one; "" otherwise. The common
// slips are bits for bytes, KB, "sec", stray spaces and the wrong letter case.
std::string hint_for(std::string_view unit) {
    // Bits: a lower-case b after a byte prefix. The grader never reads bits: Gb/s is 8x off from
    // GB/s, and guessing which one a student meant would mark some right answers wrong.
    static const std::pair<std::string_view, std::string_view> kBitPrefixes[] = {
        {"", ""},         {"k", "kilo"},    {"K", "kilo"},    {"M", "mega"},    {"G", "giga"},
        {"T", "tera"},    {"P", "peta"},    {"Ki", "kibi"},   {"Mi", "mebi"},   {"Gi", "gibi"},
        {"Ti", "tebi"},   {"Pi", "pebi"},
    };
    for (const auto& [prefix, name] : kBitPrefixes) {
        const std::string bits = std::string(prefix) + "b";
        const std::string bytes = std::string(prefix == "K" ? "k" : prefix) + "B";
        if (unit == bits) return fmt::format("{} is {}bits; write {} for {}bytes", bits, name, bytes, name);
        if (unit == bits + "/s")
            return fmt::format("{}/s is {}bits per second; write {}/s for {}bytes per second", bits, name, bytes, name);
    }
    if (unit == "KB" || unit == "KB/s")
        return fmt::format("{} is ambiguous (1000 or 1024 bytes); write kB for 1000 bytes or KiB for 1024 bytes{}",
                           unit, unit == "KB/s" ? ", followed by /s" : "");

    // "sec", "/sec", "msec", "seconds": the grader writes seconds as s.
    for (std::string_view word : {"seconds", "second", "secs", "sec"})
        if (unit.size() >= word.size() && unit.substr(unit.size() - word.size()) == word) {
            std::string fixed = std::string(unit.substr(0, unit.size() - word.size())) + "s";
            if (find_unit(fixed)) return fmt::format("write '{}' ('s' for seconds)", fixed);
        }
    const std::string squeezed = without_blanks(unit);
    if (squeezed != unit && find_unit(squeezed)) return fmt::format("write '{}' without spaces", squeezed);
    // "GBps", "MBps": per second spelt "ps".
    if (unit.size() > 2 && unit.substr(unit.size() - 2) == "ps") {
        const std::string per = std::string(unit.substr(0, unit.size() - 2)) + "/s";
        if (find_unit(per)) return fmt::format("write '{}' (per second as /s)", per);
    }
    std::vector<std::string> candidates;
    for (const auto& [spelling, known] : known_units())
        // A count's bare prefix is no likely meaning of another unit's slip ("m" is not "M").
        if (!known.dimension.empty() && equal_ignoring_case(spelling, unit))
            candidates.push_back(fmt::format("'{}' ({})", spelling, info_of(known.dimension).noun));
    if (candidates.empty()) return "";
    std::string listed = candidates.front();
    for (std::size_t k = 1; k < candidates.size(); ++k) listed += " or " + candidates[k];
    return fmt::format("did you mean {}? Units are case-sensitive (B bytes, b bits; m milli, M mega)", listed);
}

// FLOP written as a word ("Gflop/s", "GFlop/s", "flop/B", "flops/byte", "Mflops"): TOP500 and many
// texts write it so, and unlike a byte's b or a milli's m the word's case means nothing. The
// spelling lab reads ("GFLOP/s", "FLOP/B", "MFLOPs"), or "" when `unit` is not FLOP so written. A
// prefix's case is read the one way a FLOP count can mean (no milli-FLOP: "mflops" is mega).
std::string flop_spelling(std::string_view unit) {
    const std::string lower = ascii_lower(unit);
    const std::size_t at = lower.find("flop");
    if (at == std::string::npos || at > 1) return "";
    std::string prefix;
    if (at == 1) {
        static const std::string_view kPrefixes = "kmgtp";
        if (kPrefixes.find(lower[0]) == std::string_view::npos) return "";
        prefix = lower[0] == 'k' ? "k" : std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(lower[0]))));
    }
    std::string_view rest = std::string_view(lower).substr(at + 4);
    const bool plural = !rest.empty() && rest[0] == 's';
    if (plural) rest.remove_prefix(1);
    if (rest.empty()) return prefix + (plural ? "FLOPs" : "FLOP");
    if (rest == "/s" || rest == "/sec") return prefix + "FLOP/s";
    if (prefix.empty() && (rest == "/b" || rest == "/byte" || rest == "/bytes")) return "FLOP/B";
    return "";
}

// A unit written another way that can mean one thing only: "GB/sec", "GB per second", "FLOP per
// byte", "G FLOP/s", "GBps", "gigaflops", "gigabytes/s". The spelling lab reads, or "" when `unit`
// is none of these (bits, KB and letter-case slips stay refused: each could mean two things).
std::string plain_spelling(std::string_view unit) {
    std::string u(unit);
    auto replace_all = [&](std::string_view from, std::string_view to) {
        for (std::size_t at = u.find(from); at != std::string::npos; at = u.find(from, at + to.size())) u.replace(at, from.size(), to);
    };
    replace_all(" per ", "/");
    u = without_blanks(u);
    for (std::string_view word : {"seconds", "second", "secs", "sec"})
        if (u.ends_with(word) && find_unit(u.substr(0, u.size() - word.size()) + "s")) {
            u.replace(u.size() - word.size(), word.size(), "s");
            break;
        }
    // SI prefixes and byte units spelt as words (case aside): "gigabytes", "Mebibyte", "kilobytes".
    static const std::pair<std::string_view, std::string_view> kWords[] = {
        {"kilo", "k"}, {"mega", "M"}, {"giga", "G"}, {"tera", "T"}, {"peta", "P"},
        {"kibi", "Ki"}, {"mebi", "Mi"}, {"gibi", "Gi"}, {"tebi", "Ti"}, {"pebi", "Pi"}};
    const std::string lower = ascii_lower(u);
    for (const auto& [word, prefix] : kWords)
        if (lower.starts_with(word) && lower.size() > word.size() && std::isalpha(static_cast<unsigned char>(lower[word.size()]))) {
            const std::string_view tail = std::string_view(lower).substr(word.size());
            if (tail.starts_with("flop")) u = std::string(prefix) + "FLOP" + u.substr(word.size() + 4);
            else if (tail.starts_with("bytes")) u = std::string(prefix) + "B" + u.substr(word.size() + 5);
            else if (tail.starts_with("byte")) u = std::string(prefix) + "B" + u.substr(word.size() + 4);
            break;
        }
    if (u.size() > 2 && u.ends_with("ps") && find_unit(u.substr(0, u.size() - 2) + "/s")) u = u.substr(0, u.size() - 2) + "/s";
    if (find_unit(u)) return u;
    if (std::string flop = flop_spelling(u); !flop.empty() && find_unit(flop)) return flop;
    return "";
}

std::string unknown_unit_message(std::string_view unit) {
    std::string hint = hint_for(unit);
    return hint.empty() ? fmt::format("unknown unit '{}'", unit) : fmt::format("unknown unit '{}': {}", unit, hint);
}

const Known& require_unit(const std::string& unit) {
    const Known* known = find_unit(trim(unit));
    if (!known) throw UnitError(unknown_unit_message(trim(unit)));
    return *known;
}

// The number at the front of a claim, and the rest of the text (the unit, not yet trimmed).
struct NumberAndRest {
    double number;
    std::string_view rest;
};

// Reads the number at the front of `claim` (already trimmed and non-empty); `examples` only goes
// into messages.
NumberAndRest read_number(std::string_view claim, std::string_view examples) {
    const std::string_view text = claim;
    auto fail = [&](std::string_view why) { return UnitError(fmt::format("'{}' is not a number: {}", claim, why)); };

    // Approximations: a claim is compared within a tolerance already, and an approximate claim
    // would otherwise have to be read as something it does not say.
    for (std::string_view approx : {"~", "\u2248"})
        if (text.substr(0, approx.size()) == approx)
            throw fail(fmt::format("write the number without '{}' ('{}')", approx, trim(text.substr(approx.size()))));

    std::size_t i = 0;
    bool negative = false;
    if (text[0] == '+' || text[0] == '-') {
        negative = text[0] == '-';
        i = 1;
    }
    const bool digit_first = i < text.size() && is_digit(text[i]);
    const bool point_first = i + 1 < text.size() && text[i] == '.' && is_digit(text[i + 1]);
    if (!digit_first && !point_first) {
        const std::string_view word = text.substr(i, 3);
        if (equal_ignoring_case(word, "inf") || equal_ignoring_case(word, "nan"))
            throw UnitError(fmt::format("'{}' is not a finite number: write a number such as {}", claim, examples));
        throw UnitError(fmt::format("'{}' does not start with a number: write a number such as {}", claim, examples));
    }

    // SI's grouping of thousands by spaces, as the SI Brochure writes numbers and as a European
    // student does: "13 476 831 232 B" (a space, a no-break or a thin space). Only in threes after
    // a first group of one to three digits that does not start with 0, so "0 962" and "12 34"
    // stay what they were (a number and a unit the unit check refuses).
    std::string space_grouped;
    {
        std::size_t j = i;
        while (j < text.size() && is_digit(text[j])) ++j;
        const std::size_t first = j - i;
        if (first >= 1 && first <= 3 && text[i] != '0') {
            std::string joined(text.substr(i, first));
            for (;;) {
                const std::size_t blank = leading_group_space(text.substr(j));
                const std::size_t g = j + blank;
                if (!blank || (g + 3 < text.size() && (text[g + 3] == ',' || text[g + 3] == '_'))) break;
                joined += text.substr(g, 3);
                j = g + 3;
            }
            if (joined.size() > first) space_grouped = joined, i = j;
        }
    }
    // The mantissa: digits, grouping separators and decimal points, taken greedily so that
    // "1.2.3" and "1,5" are refused as a whole rather than read as "1.2" plus a unit ".3".
    const std::size_t start = i;
    while (i < text.size() && (is_digit(text[i]) || text[i] == '.' || text[i] == ',' || text[i] == '_')) ++i;
    const std::string mantissa_text = space_grouped + std::string(text.substr(start, i - start));
    const std::string_view mantissa = mantissa_text;

    const std::size_t point = mantissa.find('.');
    if (point != std::string_view::npos && mantissa.find('.', point + 1) != std::string_view::npos)
        throw fail("it has more than one decimal point");
    const bool commas = mantissa.find(',') != std::string_view::npos;
    const bool underscores = mantissa.find('_') != std::string_view::npos;
    if (commas && underscores) throw fail("group digits with commas or with underscores, not both");

    std::string digits(negative ? "-" : "");
    if (commas) {
        // Thousands only: "1,234,567.5". Anything else is more likely a decimal comma ("1,5")
        // or a list, and reading either as thousands would be off by orders of magnitude.
        const std::string_view integer = mantissa.substr(0, point);
        const std::string_view grouping_rule =
            "commas group thousands (1,234,567.5) in threes before the decimal point; write a decimal point for a "
            "fraction (1.5)";
        if (point != std::string_view::npos && mantissa.find(',', point) != std::string_view::npos)
            throw fail(grouping_rule);
        // "0,962" is no thousands group (no number is written with a leading zero before its
        // first comma): it is a decimal comma, refused as "1,5" is.
        if (integer.size() > 1 && integer[0] == '0')
            throw fail(fmt::format("a leading 0 never starts a group of thousands, so this is a decimal comma; write a decimal "
                                   "point ({}{})", negative ? "-" : "", [&] {
                                       std::string decimal(mantissa);
                                       if (const std::size_t c = decimal.find(','); c != std::string::npos) decimal[c] = '.';
                                       return decimal;
                                   }()));
        std::size_t group_start = 0;
        for (std::size_t g = 0;; ++g) {
            const std::size_t comma = integer.find(',', group_start);
            const std::string_view group = integer.substr(group_start, comma - group_start);
            const bool ok = g == 0 ? (!group.empty() && group.size() <= 3) : group.size() == 3;
            if (!ok) throw fail(grouping_rule);
            digits += group;
            if (comma == std::string_view::npos) break;
            group_start = comma + 1;
        }
        if (point != std::string_view::npos) digits += mantissa.substr(point);
    } else {
        for (std::size_t k = 0; k < mantissa.size(); ++k) {
            if (mantissa[k] != '_') {
                digits += mantissa[k];
                continue;
            }
            // Python's and C++'s rule: an underscore sits between two digits.
            if (k == 0 || k + 1 == mantissa.size() || !is_digit(mantissa[k - 1]) || !is_digit(mantissa[k + 1]))
                throw fail("an underscore goes between two digits (1_000_000)");
        }
    }

    // The exponent, only when digits follow: "2e9" is a number, "2 e" a number and a unit.
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        std::size_t j = i + 1;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < text.size() && is_digit(text[j])) {
            while (j < text.size() && is_digit(text[j])) ++j;
            digits += text.substr(i, j - i);
            i = j;
        }
    }

    // A power of ten written out, as on paper or in code: "8.95×10^10", "8.95 x 10^10",
    // "8.95*10**10". Only with the caret (or **) and digits: "2.5x" stays a ratio.
    if (digits.find_first_of("eE") == std::string::npos) {
        auto skip_blanks = [&](std::size_t j) {
            while (j < text.size())
                if (const std::size_t n = blank_length(text.substr(j))) j += n;
                else break;
            return j;
        };
        const std::size_t j = skip_blanks(i);
        for (std::string_view times : {"\u00d7", "x", "X", "*", "\u00b7", "\u22c5"}) {
            if (text.substr(j, times.size()) != times) continue;
            std::size_t k = skip_blanks(j + times.size());
            std::size_t power = 0;
            if (text.substr(k, 3) == "10^") power = 3;
            else if (text.substr(k, 4) == "10**") power = 4;
            if (!power) break;
            k += power;
            const std::size_t sign = k;
            if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
            const std::size_t first = k;
            while (k < text.size() && is_digit(text[k])) ++k;
            if (k == first) break;
            digits += "e" + std::string(text.substr(sign, k - sign));
            i = k;
            break;
        }
    }

    // std::from_chars: locale-independent, unlike strtod and streams ("1.5" stays 1.5 under a
    // German locale).
    double value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range)
        throw UnitError(fmt::format("'{}' is out of the range the grader can read", claim));
    if (ec != std::errc() || end != digits.data() + digits.size())
        throw fail(fmt::format("write a number such as {}", examples));
    return {value, text.substr(i)};
}

}  // namespace

std::string unit_hint(const std::string& unit) { return hint_for(trim(unit)); }

std::size_t leading_blank(std::string_view s) { return blank_length(s); }

std::size_t leading_group_space(std::string_view s) {
    const std::size_t n = s.empty() || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ? 0 : blank_length(s);
    auto digit_at = [&](std::size_t k) { return k < s.size() && is_digit(s[k]); };
    return n && digit_at(n) && digit_at(n + 1) && digit_at(n + 2) && !digit_at(n + 3) ? n : 0;
}

std::optional<std::string> dimension_of(const std::string& unit) {
    const Known* known = find_unit(trim(unit));
    if (!known) return std::nullopt;
    return known->dimension;
}

bool is_base_unit(const std::string& unit) {
    const Known* known = find_unit(trim(unit));
    return known && known->factor == 1 && trim(unit) == known->dimension;
}

double from_unit(double value, const std::string& unit) { return value * require_unit(unit).factor; }

double to_unit(double si_value, const std::string& unit) { return si_value / require_unit(unit).factor; }

namespace {
std::string_view per_second(const DimensionInfo& info) { return info.dimension == "B/s" ? "/s" : ""; }
}  // namespace

namespace {
Quantity read_claim(std::string_view claim, const std::string& default_unit);
}  // namespace

std::string_view without_aside(std::string_view text, std::string_view& aside) {
    std::string_view claim = trim(text);
    aside = {};
    // A sentence's full stop ("89.5 GFLOP/s."): no part of the unit. After a digit it is the
    // number's own point ("12."), read as such.
    auto drop_full_stop = [&] {
        if (claim.size() > 1 && claim.back() == '.' && !is_digit(claim[claim.size() - 2])) claim = trim(claim.substr(0, claim.size() - 1));
    };
    drop_full_stop();
    if (claim.size() > 1 && claim.back() == ')') {
        int depth = 0;
        std::size_t open = std::string_view::npos;
        for (std::size_t k = claim.size(); k-- > 0;) {
            if (claim[k] == ')') ++depth;
            else if (claim[k] == '(' && --depth == 0) {
                open = k;
                break;
            }
        }
        if (open != std::string_view::npos && open > 0 && claim[open - 1] == ' ' && !trim(claim.substr(0, open)).empty()) {
            aside = claim.substr(open), claim = trim(claim.substr(0, open));
            drop_full_stop();  // "Memory bound. (22% of the roof)"
        }
    }
    return claim;
}

Quantity parse_claim(const std::string& text, const std::string& default_unit) {
    // The brackets are not read, and the note says so.
    std::string_view aside;
    const std::string_view claim = without_aside(text, aside);
    Quantity q = read_claim(claim, default_unit);
    if (!aside.empty())
        q.note = (q.note.empty() ? "" : q.note + "; ") + fmt::format("'{}' after the answer was not read (the answer is '{}')", aside, claim);
    return q;
}

namespace {

Quantity read_claim(std::string_view claim, const std::string& default_unit) {
    const Known* question = find_unit(trim(default_unit));
    if (!question)
        throw UnitError(fmt::format("the question's unit is not readable ({}); fix the grading spec",
                                    unknown_unit_message(trim(default_unit))));
    const DimensionInfo& want = info_of(question->dimension);
    const std::string expected = expected_phrase(want);

    if (claim.empty()) throw UnitError(fmt::format("the answer is empty: write {}", expected));

    auto [number, rest] = read_number(claim, want.examples);
    // A fraction of two plain numbers ("1/4"): the number it is. Anything after it (a unit, a
    // third number) is refused with the decimal to write instead.
    if (rest.size() > 1 && rest[0] == '/' && (is_digit(rest[1]) || rest[1] == '.')) {
        const auto [denominator, after] = read_number(rest.substr(1), want.examples);
        const double fraction = number / denominator;
        if (denominator == 0 || !std::isfinite(fraction))
            throw UnitError(fmt::format("'{}' divides by zero: write a number such as {}", claim, want.examples));
        if (!trim(after).empty())
            throw UnitError(fmt::format("cannot read '{}': a fraction is read only alone (1/4); write it as a decimal ({:g} {})",
                                        claim, fraction, trim(after)));
        // A bare number in a "%" question is percent: 1/4 there would be 0.25%, surely not meant.
        if (trim(default_unit) == "%")
            throw UnitError(fmt::format("cannot read '{}' in a question asked in %: write {:g}% (a bare number here is percent, "
                                        "so {:g} would be {:g}%)", claim, 100 * fraction, fraction, fraction));
        number = fraction;
        rest = after;
    }
    const std::string_view unit = trim(rest);

    Quantity q;
    q.number = number;
    q.unit = std::string(unit);
    if (unit.empty()) {
        // A bare number is in the question's unit: "80" in a "%" question is 80%, in a "ratio"
        // question 80x.
        q.value = number * question->factor;
        q.dimension = question->dimension;
    } else {
        const Known* known = find_unit(unit);
        std::string spelled(unit);  // the unit as lab spells it
        if (const std::string plain = known ? std::string() : plain_spelling(unit); !plain.empty()) {
            known = find_unit(plain);
            spelled = plain;
            q.note = fmt::format("'{}' was read as {} {}", claim, trim(claim.substr(0, claim.size() - rest.size())), plain);
        }
        const std::string_view number_text = trim(claim.substr(0, claim.size() - rest.size()));
        if (!known && want.dimension.empty() && hint_for(unit).empty())
            // A word after a count is usually what is counted ("12853 tokens"): say what to write.
            throw UnitError(fmt::format("cannot read '{}': '{}' is not a unit, and the question asks for a plain count: write "
                                        "the number alone ({}), with k, M or G for thousands, millions, billions if you like",
                                        claim, unit, number_text));
        if (!known)
            throw UnitError(fmt::format("cannot read '{}': {}{}", claim, unknown_unit_message(unit),
                                        want.dimension.empty() ? "" : "; expected " + expected));
        // A count's decimal prefix alone is how `lab` prints FLOP counts ("768 M", "1.07 G"): in a
        // FLOP question it is that many FLOP. Bytes carry their unit in every table, and "552 M"
        // of bytes could mean MB or MiB: the student is asked to say which.
        if (known->dimension.empty() && want.dimension == "FLOP") known = find_unit(std::string(unit) + "FLOP");
        // An intensity worked from such counts ("2 M" FLOP over "8 B") is "250 k": that many
        // FLOP/B, as a bare number in an AI question is (02.12's mysteries).
        // So is a ratio worked from two counts ("4.3 k" times cheaper), where the question is not in %.
        if (known->dimension.empty() && known->factor != 1 &&
            (want.dimension == "FLOP/B" || (want.dimension == "ratio" && trim(default_unit) != "%"))) {
            q.value = number * known->factor;
            q.dimension = want.dimension;
            q.note = fmt::format("'{}' was read as {:g}{}", claim, q.value, want.dimension == "FLOP/B" ? " FLOP/B" : "");
            if (!std::isfinite(q.value)) throw UnitError(fmt::format("'{}' is out of the range the grader can read", claim));
            return q;
        }
        if (known->dimension.empty() && (want.dimension == "B" || want.dimension == "B/s"))
            throw UnitError(fmt::format("cannot read '{}': '{}' alone is a plain count's prefix, and does not say decimal or "
                                        "binary bytes; write {} {}B{} (decimal) or {} {}iB{} (binary)",
                                        claim, unit, number_text, unit, per_second(want), number_text,
                                        unit == "k" ? "K" : unit, per_second(want)));
        // "FLOPs" (a plural count) and "FLOPS" (a rate) differ by the case of one letter, and
        // many a text writes one for the other. Where the other one is asked, the question's
        // reading is taken, and the note says how it was read: GFLOP or GFLOP/s is unambiguous.
        if (const std::string_view u = spelled; u.size() >= 5) {
            const std::string_view tail = u.substr(u.size() - 5), prefix = u.substr(0, u.size() - 5);
            const bool count_as_rate = tail == "FLOPs" && want.dimension == "FLOP/s";
            const bool rate_as_count = tail == "FLOPS" && want.dimension == "FLOP";
            const std::string read_as = std::string(prefix) + (count_as_rate ? "FLOP/s" : "FLOP");
            if (const Known* k = find_unit(read_as); k && (count_as_rate || rate_as_count)) {
                known = k;
                // Written as a word ("gigaflops"), the student wrote neither spelling: the case
                // lesson is not theirs to learn.
                const bool as_written = ascii_lower(unit).find(ascii_lower(u)) != std::string::npos;
                q.note = as_written ? fmt::format("'{}' was read as {} {}: {}FLOPs (lower-case s) is a count of operations and {}FLOPS "
                                                  "(capital S) a rate; this question asks for {}, so write {} to be unambiguous",
                                                  claim, number_text, read_as, prefix, prefix, want.noun, read_as)
                                    : fmt::format("'{}' was read as {} {} (this question asks for {}); write {} to be unambiguous",
                                                  claim, number_text, read_as, want.noun, read_as);
            }
        }
        // A plain-count question takes any unit (the header's contract: the caller sees the
        // dimension); every other question wants its own dimension, and a wrong one is an error
        // rather than a wrong answer, so the student learns which quantity was asked for.
        if (!want.dimension.empty() && known->dimension != want.dimension)
            throw UnitError(fmt::format("expected {}, got '{}' ({})", expected, claim, info_of(known->dimension).noun));
        q.value = number * known->factor;
        q.dimension = known->dimension;
    }
    if (!std::isfinite(q.value))
        throw UnitError(fmt::format("'{}' is out of the range the grader can read", claim));
    return q;
}

}  // namespace

std::string format(double si_value, const std::string& dimension, int digits) {
    const DimensionInfo& info = info_of(dimension);
    if (!std::isfinite(si_value)) return fmt::format("{}", si_value);  // "nan", "inf": shown, not hidden
    // Three digits (or as asked), plain from 0.001 to 999999 of the prefixed unit: a student
    // compares an expected value with a claim without decoding an exponent.
    const lab::format::Style style{.digits = digits, .lowest_prefix = info.lowest_prefix, .highest_prefix = info.highest_prefix,
                              .min_exponent = -3, .max_exponent = 5};
    if (dimension == "ratio") {
        // Fractions of peak read best as percent ("80%"), speedups as factors ("3.2x"); 2 is
        // where one stops being natural and the other starts.
        if (std::fabs(si_value) < 2) return lab::format::number(si_value * 100, style) + "%";
        return lab::format::number(si_value, style) + "x";
    }
    // Counts (parameters, kernels, bytes of a file) are exact.
    if (dimension.empty() && std::fabs(si_value) < 1e15 && si_value == std::floor(si_value))
        return lab::format::thousands(si_value);
    return lab::format::si(si_value, dimension, style);
}

}  // namespace lab::units
