// Numbers for people (see format.hpp). Rounding is fmt's: correctly rounded and independent of
// the locale, so a value never shows binary noise (1.2000000000000002) and reads the same on
// every machine; the prefix is chosen from the rounded digits, so rounding never leaves a
// mantissa of 1000.
#include "format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace lab::format {
namespace {

// ±d.dd x 10^exponent, rounded to `digits` significant digits.
struct Rounded {
    bool negative;
    std::string digits;  // "12" for 1.2e9: at least one digit, trailing zeros trimmed
    int exponent;
};

Rounded round_to(double v, int digits) {
    const std::string s = fmt::format("{:.{}e}", std::fabs(v), std::max(1, digits) - 1);  // "1.20e+09"
    const std::size_t e = s.find('e');
    Rounded r{v < 0, {}, 0};
    for (std::size_t k = 0; k < e; ++k)
        if (s[k] != '.') r.digits += s[k];
    std::from_chars(s.data() + e + 2, s.data() + s.size(), r.exponent);
    if (s[e + 1] == '-') r.exponent = -r.exponent;
    while (r.digits.size() > 1 && r.digits.back() == '0') r.digits.pop_back();
    return r;
}

// The digits with the leading one at 10^lead: "12" at lead 1 is "12", at 3 "1200", at -2 "0.012".
std::string place(const Rounded& r, int lead) {
    std::string out = r.negative ? "-" : "";
    const int n = static_cast<int>(r.digits.size());
    if (lead < 0)
        out += "0." + std::string(static_cast<std::size_t>(-lead - 1), '0') + r.digits;
    else if (lead + 1 >= n)
        out += r.digits + std::string(static_cast<std::size_t>(lead + 1 - n), '0');
    else
        out += r.digits.substr(0, static_cast<std::size_t>(lead + 1)) + "." +
               r.digits.substr(static_cast<std::size_t>(lead + 1));
    return out;
}

// "1.23e7", "1e-300": no '+' and no leading zeros in the exponent, which read worse in a label.
std::string scientific(const Rounded& r) {
    std::string out = r.negative ? "-" : "";
    out += r.digits.substr(0, 1);
    if (r.digits.size() > 1) out += "." + r.digits.substr(1);
    return out + fmt::format("e{}", r.exponent);
}

// The prefix for 10^power (a multiple of 3 within -24..24).
std::string_view prefix(int power, bool ascii) {
    static constexpr std::array<std::string_view, 17> kPrefix = {
        "y", "z", "a", "f", "p", "n", "\u00b5", "m", "", "k", "M", "G", "T", "P", "E", "Z", "Y"};
    if (power == -6 && ascii) return "u";
    return kPrefix[static_cast<std::size_t>(std::clamp(power / 3 + 8, 0, 16))];
}

// The multiple of 3 at or below e: -4 -> -6, 5 -> 3.
int floor3(int e) { return (e >= 0 ? e / 3 : -((-e + 2) / 3)) * 3; }

std::string with_unit(const std::string& number, std::string_view spelling) {
    return spelling.empty() ? number : number + " " + std::string(spelling);
}

}  // namespace

std::string si(double value, std::string_view unit, const Style& style) {
    if (std::isnan(value)) return with_unit("nan", unit);
    if (std::isinf(value)) return with_unit(value > 0 ? "inf" : "-inf", unit);
    if (value == 0) return with_unit("0", unit);
    const double a = std::fabs(value);
    if (a >= std::pow(10.0, style.digits) - 0.5 && a < style.whole_below)
        return with_unit(fmt::format("{:.0f}", value), unit);

    const Rounded r = round_to(value, style.digits);
    const int power = std::clamp(floor3(r.exponent), style.lowest_prefix, style.highest_prefix);
    const int lead = r.exponent - power;
    if (lead < style.min_exponent || lead > style.max_exponent) return with_unit(scientific(r), unit);
    return with_unit(place(r, lead), std::string(prefix(power, style.ascii)) + std::string(unit));
}

std::string number(double value, const Style& style) { return si(value, "", style); }

std::string quantity(double value, std::string_view unit) {
    // Times: a kernel takes nanoseconds to seconds, and minutes read worse than seconds.
    if (unit == "s") return si(value, unit, {.lowest_prefix = -12, .min_exponent = 0});
    // Factors and intensities are not SI multiples: "1200", not "1.2 kratio"; "9.28 FLOP/B".
    if (unit == "ratio") return number(value, {.whole_below = 1e15});
    if (unit == "FLOP/B") return si(value, unit);
    // A small unitless number is often a ratio of counts: four digits ("3.142").
    if (unit.empty() && std::fabs(value) < 1e3) return number(value, {.digits = 4, .max_exponent = 3});
    return si(value, unit, {.highest_prefix = 15});
}

std::string duration(double seconds) { return quantity(seconds, "s"); }

std::string percent(double fraction) {
    const double p = 100 * fraction;
    if (!std::isfinite(p)) return fmt::format("{}%", p);
    if (p > 0 && p < 0.001) return "<0.001%";
    return number(p, {.whole_below = HUGE_VAL}) + "%";
}

std::string spread(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string thousands(double count) {
    const std::string digits = fmt::format("{:.0f}", std::fabs(count));
    std::string out;
    for (std::size_t k = 0; k < digits.size(); ++k) {
        if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
        out += digits[k];
    }
    return (count < 0 ? "-" : "") + out;
}

}  // namespace lab::format
