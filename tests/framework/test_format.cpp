// Numbers and timestamps for people (format.hpp): the engine's rules (significant digits, the
// prefix chosen after rounding, where scientific notation starts), each caller's style as it
// reads in lab's output, and the UTC stamps shared with plugins.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "format.hpp"

namespace format = lab::format;
using Catch::Generators::table;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

TEST_CASE("si picks the prefix after rounding and writes three significant digits", "[format]") {
    const format::Style prefixed{.highest_prefix = 15};
    auto [value, text] = GENERATE(table<double, std::string>({
        {1.23e9, "1.23 GB/s"},
        {181e9, "181 GB/s"},
        {1.555e12, "1.56 TB/s"},
        {999.4, "999 B/s"},
        {999.7, "1 kB/s"},  // not "1000 B/s", nor "1e+03 B/s"
        {999.6e9, "1 TB/s"},
        {1.2000000000000002e9, "1.2 GB/s"},  // no binary noise
        {-3.5e6, "-3.5 MB/s"},
        {0.5, "0.5 B/s"},  // below the lowest prefix: plain digits in the unit
        {0, "0 B/s"},
    }));
    CAPTURE(value);
    CHECK(format::si(value, "B/s", prefixed) == text);
}

TEST_CASE("si falls back to scientific notation in the unprefixed unit beyond its prefixes", "[format]") {
    CHECK(format::si(2e21, "FLOP", {.highest_prefix = 15}) == "2e21 FLOP");
    CHECK(format::si(1.5e-5, "B") == "1.5e-5 B");
    CHECK(format::si(5e-13, "s", {.lowest_prefix = -12, .min_exponent = 0}) == "5e-13 s");
    CHECK(format::si(1e-300, "FLOP/s", {.lowest_prefix = -24, .highest_prefix = 24, .min_exponent = 0}) ==
          "1e-300 FLOP/s");
}

TEST_CASE("si shows non-finite values with their unit and micro in ASCII on request", "[format]") {
    CHECK(format::si(std::nan(""), "s") == "nan s");
    CHECK(format::si(kInf, "FLOP/s") == "inf FLOP/s");
    CHECK(format::si(-kInf, "B") == "-inf B");
    const format::Style micro{.lowest_prefix = -6};
    CHECK(format::si(2.1e-6, "s", micro) == "2.1 \u00b5s");
    CHECK(format::si(2.1e-6, "s", {.lowest_prefix = -6, .ascii = true}) == "2.1 us");
    CHECK(format::si(2.15e9, "", {.highest_prefix = 15}) == "2.15 G");  // a unitless count
}

TEST_CASE("number follows printf's %g switch points by default, and a style moves them", "[format]") {
    auto [value, style, text] = GENERATE(table<double, format::Style, std::string>({
        {9.28205, {}, "9.28"},
        {0.0001, {}, "0.0001"},
        {1.5e-5, {}, "1.5e-5"},
        {123.4, {}, "123"},
        {1234, {}, "1.23e3"},
        {1234, {.whole_below = 1e6}, "1234"},  // every integer digit
        {1.5e7, {.whole_below = 1e6}, "1.5e7"},
        {3.14159, {.digits = 4, .max_exponent = 3}, "3.142"},
        {0.0001, {.min_exponent = -3, .max_exponent = 5}, "1e-4"},
        {123000, {.min_exponent = -3, .max_exponent = 5}, "123000"},
        {-0.0, {}, "0"},
    }));
    CAPTURE(value);
    CHECK(format::number(value, style) == text);
}

TEST_CASE("quantity writes a measured value as lab's tables and teaching lines show it", "[format]") {
    auto [value, unit, text] = GENERATE(table<double, std::string, std::string>({
        {7.58e9, "FLOP/s", "7.58 GFLOP/s"},
        {30e9, "B/s", "30 GB/s"},
        {268435456, "B", "268 MB"},
        {67108864, "", "67.1 M"},
        {3.14159, "", "3.142"},
        {350e-9, "s", "350 ns"},
        {8.85e-3, "s", "8.85 ms"},
        {12, "s", "12 s"},
        {1.05, "ratio", "1.05"},
        {1200, "ratio", "1200"},
        {9.3, "FLOP/B", "9.3 FLOP/B"},
        {3.69e9, "Hz", "3.69 GHz"},
        {0, "FLOP/s", "0 FLOP/s"},
    }));
    CAPTURE(value, unit);
    CHECK(format::quantity(value, unit) == text);
    if (unit == "s") CHECK(format::duration(value) == text);
}

TEST_CASE("percent writes fractions with three digits, spread to a tenth", "[format]") {
    CHECK(format::percent(0.292) == "29.2%");
    CHECK(format::percent(1) == "100%");
    CHECK(format::percent(0.0123) == "1.23%");
    CHECK(format::percent(12.5) == "1250%");
    CHECK(format::percent(0) == "0%");
    CHECK(format::percent(2e-8) == "<0.001%");
    CHECK(format::percent(-0.05) == "-5%");
    CHECK(format::percent(kInf) == "inf%");
    CHECK(format::spread(0.049) == "4.9%");
    CHECK(format::spread(0) == "0.0%");
}

TEST_CASE("thousands groups an exact count", "[format]") {
    CHECK(format::thousands(6738415616.0) == "6,738,415,616");
    CHECK(format::thousands(42) == "42");
    CHECK(format::thousands(-1000) == "-1,000");
}

TEST_CASE("UTC stamps: ISO 8601, a date, and a file-name stamp", "[format]") {
    const std::time_t t = 1796016061;  // 2026-11-30 05:21:01 UTC
    CHECK(format::utc_iso8601(t) == "2026-11-30T05:21:01Z");
    CHECK(format::utc_date(t) == "2026-11-30");
    CHECK(format::utc_stamp(t) == "20261130-052101");
    CHECK(format::utc_iso8601(0) == "1970-01-01T00:00:00Z");
    // Dates compare as text, as expected_visible compares today with a spec's due date.
    CHECK(format::utc_date(t) > "2026-11-29");
}
