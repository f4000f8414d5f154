// Numbers as lab writes them for people: values with decimal SI prefixes and their unit
// ("181 GFLOP/s", "350 ns", "6.74 GB"), plain numbers ("9.28", "1e-4"), percentages ("29.2%"),
// exact counts ("6,738,415,616"), and (from <lab/utc_time.hpp>) UTC timestamps. One engine
// serves the run record, the console, the plots and the grader's reports, so a value reads the
// same wherever it is printed; where their conventions differ (how many digits, which prefixes,
// when to switch to scientific notation) the caller says so with a Style, by name.
#pragma once

#include <string>
#include <string_view>

#include "lab/utc_time.hpp"

namespace lab::format {

// How si() and number() write a value. The defaults are printf's "%.3g" without prefixes:
// three significant digits, plain digits from 1e-4 up to 999, scientific notation beyond.
struct Style {
    // Significant digits; trailing zeros are dropped ("1.2", not "1.20").
    int digits = 3;
    // The decimal prefixes the value may take, as powers of ten (multiples of 3 within -24..24):
    // -12 and 0 allow p, n, µ, m and none; 0 and 15 none, k, M, G, T, P; 0 and 0 no prefix. The
    // prefix is chosen after rounding, so 999.7 B with prefixes is "1 kB", not "1000 B".
    int lowest_prefix = 0;
    int highest_prefix = 0;
    // The number keeps plain digits while its leading digit sits between 10^min_exponent and
    // 10^max_exponent of the prefixed unit; outside that it is written in scientific notation
    // in the unprefixed unit ("2e21 FLOP", "1.5e-5").
    int min_exponent = -4;
    int max_exponent = 2;
    // From 10^digits - 0.5 up to this, a number keeps every integer digit instead of being
    // rounded ("1234", not "1.23e3"); 0: never.
    double whole_below = 0;
    // "u" instead of "µ" for micro, for text that must stay ASCII.
    bool ascii = false;
};

// A value and its unit: "181 GFLOP/s", "0 B/s", "inf FLOP/s", "2.15 G" (unit ""), "nan s".
std::string si(double value, std::string_view unit, const Style& style = {});
// The same without a unit: "9.28", "1e-4", "1234".
std::string number(double value, const Style& style = {});

// A measured value as lab prints it in records, tables and teaching lines: times in s down to
// ps ("527 ns", "8.85 ms"), rates, sizes and counts with k..P ("7.58 GFLOP/s", "268 MB",
// "67.1 M" for unit ""), small unitless numbers to four digits ("3.142"), ratios and
// intensities plain ("1.05", "1200", "9.28 FLOP/B").
std::string quantity(double value, std::string_view unit);
// A time in seconds, as quantity(seconds, "s").
std::string duration(double seconds);

// A fraction as a percentage with three significant digits: 0.292 -> "29.2%", 1 -> "100%",
// 12.5 -> "1250%" (every integer digit from 1000% up), 2e-6 -> "<0.001%".
std::string percent(double fraction);
// The relative spread of samples, to a tenth of a percent: 0.049 -> "4.9%".
std::string spread(double fraction);

// An exact count with thousands separated: 6738415616 -> "6,738,415,616".
std::string thousands(double count);

}  // namespace lab::format
