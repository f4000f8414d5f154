// Time limits and memory sizes as people write them (see quantity_text.hpp).
#include "quantity_text.hpp"

#include <cmath>
#include <cstdlib>
#include <regex>

#include "errors.hpp"

namespace lab {

namespace {

constexpr double kWeek = 7 * 24 * 3600.0;
// The shortest limit lab keeps: a lesson's child needs some tens of ms to start and load its
// plugin, so a limit of 1e-9 s stopped every lesson before it began, said as a time-out.
constexpr double kShortestTimeout = 0.1;
// More memory than any machine has: not a limit, a typo (and past 2^64 bytes, no number at all).
constexpr double kMostBytes = 1125899906842624.0;  // 1 PiB

}  // namespace

double parse_time_limit(const std::string& text, const std::string& as_given) {
    // Decimal, with an exponent: what --timeout took when Boost read it as a double, and now the
    // one reading for LAB_TIMEOUT too. strtod alone would also take hexadecimal ("0x10" as 16 s),
    // "inf" and "nan", which no one means by a number of seconds. A sign is read so that "-5" is
    // refused as a negative time, not as something unreadable.
    static const std::regex decimal(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
    if (!std::regex_match(text, decimal))
        throw UsageError(as_given + " is not a number of seconds\n  fix: write the limit in decimal seconds (600, 2.5, 1e3), or leave it out for the default");
    const double t = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(t) || t < 0 || t > kWeek || (t > 0 && t < kShortestTimeout))
        throw UsageError(as_given + " is not a time limit lab can keep\n  fix: give seconds, at least 0.1 and at most a week (604800), or 0 for the default (lab run: the lesson's own budget x 3; lab validate: 5 minutes)");
    return t;
}

std::optional<double> time_limit_from_environment() {
    const char* env = std::getenv("LAB_TIMEOUT");
    if (!env || !*env) return std::nullopt;
    return parse_time_limit(env, std::string("LAB_TIMEOUT=") + env);
}

std::uint64_t parse_memory_size(const std::string& text, const std::string& as_given) {
    // A plain decimal number: strtod alone also took hexadecimal, exponents and "inf", and 1e400
    // or 99999999999999999999999 overflowed the conversion to bytes. The bare letters stay binary
    // (8G was 8 GiB before the others were read); KB, MB, GB say decimal as disks and datasheets
    // do, KiB, MiB, GiB binary.
    static const std::regex size(R"(\s*([0-9]+\.?[0-9]*|\.[0-9]+)\s*([A-Za-z]*)\s*)");
    std::smatch m;
    double scale = -1;
    if (std::regex_match(text, m, size)) {
        const std::string unit = m[2];
        constexpr double Ki = 1024.0, Mi = Ki * Ki, Gi = Mi * Ki, Ti = Gi * Ki;
        if (unit.empty() || unit == "B") scale = 1;
        else if (unit == "K" || unit == "KiB") scale = Ki;
        else if (unit == "M" || unit == "MiB") scale = Mi;
        else if (unit == "G" || unit == "GiB") scale = Gi;
        else if (unit == "T" || unit == "TiB") scale = Ti;
        else if (unit == "kB" || unit == "KB") scale = 1e3;
        else if (unit == "MB") scale = 1e6;
        else if (unit == "GB") scale = 1e9;
        else if (unit == "TB") scale = 1e12;
    }
    const double v = scale > 0 ? std::strtod(m[1].str().c_str(), nullptr) : 0;
    if (!(v > 0))
        throw UsageError(as_given + " is not a size\n  fix: write bytes, or a number and a unit: K, M, G (binary: 8G is 8 GiB), KiB, MiB, GiB, "
                                    "or KB, MB, GB (decimal: 8GB is 8 x 10^9 bytes)");
    if (v * scale > kMostBytes)
        throw UsageError(as_given + " is more memory than any machine has (over 1 PiB)\n  fix: write the limit with a unit (8G, 512MiB), or unset it for 80% of the memory this machine (or its container) allows");
    return static_cast<std::uint64_t>(v * scale);
}

}  // namespace lab
