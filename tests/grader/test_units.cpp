// Units in claims and grading specs: every accepted spelling converts to the right SI value and
// dimension, bare numbers take the question's unit, every refusal says what to write instead, and
// format() renders values that parse back to themselves.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <tuple>

#include "units.hpp"

using namespace lab::units;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::WithinRel;

namespace {

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024;
constexpr double kGi = kMi * 1024;
constexpr double kTi = kGi * 1024;
constexpr double kPi = kTi * 1024;

// What parse_claim threw, or "" when it did not throw.
std::string error_of(const std::string& text, const std::string& default_unit) {
    try {
        parse_claim(text, default_unit);
    } catch (const UnitError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a claim with a unit is read in the SI base unit of its dimension", "[units]") {
    // (claim, question unit, SI value, dimension). The question unit is the base unit of the
    // dimension, so these check the claim's own unit.
    auto [text, question, si, dimension] = GENERATE(table<std::string, std::string, double, std::string>({
        // time
        {"2 s", "s", 2, "s"},
        {"2 ms", "s", 2e-3, "s"},
        {"2 us", "s", 2e-6, "s"},
        {"2 \u00b5s", "s", 2e-6, "s"},  // micro sign
        {"2 \u03bcs", "s", 2e-6, "s"},  // Greek mu
        {"350 ns", "s", 350e-9, "s"},
        {"350ns", "s", 350e-9, "s"},
        {"2 ps", "s", 2e-12, "s"},
        {"2 min", "s", 120, "s"},
        {"2 h", "s", 7200, "s"},
        // bytes: decimal SI prefixes, binary IEC prefixes
        {"2 B", "B", 2, "B"},
        {"1 byte", "B", 1, "B"},
        {"2 bytes", "B", 2, "B"},
        {"2 kB", "B", 2e3, "B"},
        {"2 MB", "B", 2e6, "B"},
        {"13.48 GB", "B", 13.48e9, "B"},
        {"2 TB", "B", 2e12, "B"},
        {"2 PB", "B", 2e15, "B"},
        {"512 KiB", "B", 512 * kKi, "B"},
        {"2 MiB", "B", 2 * kMi, "B"},
        {"6.5 GiB", "B", 6.5 * kGi, "B"},
        {"2 TiB", "B", 2 * kTi, "B"},
        {"2 PiB", "B", 2 * kPi, "B"},
        // bandwidth: any byte unit per second
        {"2 B/s", "B/s", 2, "B/s"},
        {"2 bytes/s", "B/s", 2, "B/s"},
        {"2 kB/s", "B/s", 2e3, "B/s"},
        {"2 MB/s", "B/s", 2e6, "B/s"},
        {"900 GB/s", "B/s", 900e9, "B/s"},
        {"1.2 TB/s", "B/s", 1.2e12, "B/s"},
        {"1.555TB/s", "B/s", 1.555e12, "B/s"},
        {"2 PB/s", "B/s", 2e15, "B/s"},
        {"2 KiB/s", "B/s", 2 * kKi, "B/s"},
        {"2 GiB/s", "B/s", 2 * kGi, "B/s"},
        {"2 TiB/s", "B/s", 2 * kTi, "B/s"},
        // FLOP counts; FLOPs (lower-case s) is the plural of FLOP
        {"2 FLOP", "FLOP", 2, "FLOP"},
        {"2 kFLOP", "FLOP", 2e3, "FLOP"},
        {"2 MFLOP", "FLOP", 2e6, "FLOP"},
        {"13.5 GFLOP", "FLOP", 13.5e9, "FLOP"},
        {"2 TFLOP", "FLOP", 2e12, "FLOP"},
        {"2 PFLOP", "FLOP", 2e15, "FLOP"},
        {"2 FLOPs", "FLOP", 2, "FLOP"},
        {"13.5 GFLOPs", "FLOP", 13.5e9, "FLOP"},
        {"2 PFLOPs", "FLOP", 2e15, "FLOP"},
        // FLOP rates: per second, or FLOPS with a capital S as datasheets write it
        {"2 FLOP/s", "FLOP/s", 2, "FLOP/s"},
        {"2 kFLOP/s", "FLOP/s", 2e3, "FLOP/s"},
        {"2 MFLOP/s", "FLOP/s", 2e6, "FLOP/s"},
        {"2 GFLOP/s", "FLOP/s", 2e9, "FLOP/s"},
        {"19.5 TFLOP/s", "FLOP/s", 19.5e12, "FLOP/s"},
        {"2 PFLOP/s", "FLOP/s", 2e15, "FLOP/s"},
        {"2 GFLOPs/s", "FLOP/s", 2e9, "FLOP/s"},
        {"2 FLOPS", "FLOP/s", 2, "FLOP/s"},
        {"2 MFLOPS", "FLOP/s", 2e6, "FLOP/s"},
        {"2 GFLOPS", "FLOP/s", 2e9, "FLOP/s"},
        {"312 TFLOPS", "FLOP/s", 312e12, "FLOP/s"},
        {"2 PFLOPS", "FLOP/s", 2e15, "FLOP/s"},
        // arithmetic intensity
        {"9.3 FLOP/B", "FLOP/B", 9.3, "FLOP/B"},
        {"0.25 FLOP/byte", "FLOP/B", 0.25, "FLOP/B"},
        {"2 FLOPs/byte", "FLOP/B", 2, "FLOP/B"},
        {"2 FLOPs/B", "FLOP/B", 2, "FLOP/B"},
        // frequency, power, energy
        {"2 Hz", "Hz", 2, "Hz"},
        {"2 kHz", "Hz", 2e3, "Hz"},
        {"1410 MHz", "Hz", 1410e6, "Hz"},
        {"1.41 GHz", "Hz", 1.41e9, "Hz"},
        {"250 mW", "W", 0.25, "W"},
        {"400 W", "W", 400, "W"},
        {"1.2 kW", "W", 1200, "W"},
        {"120 mJ", "J", 0.12, "J"},
        {"3.5 J", "J", 3.5, "J"},
        {"2 kJ", "J", 2000, "J"},
        // ratios
        {"80%", "ratio", 0.8, "ratio"},
        {"80 %", "ratio", 0.8, "ratio"},
        {"2.5x", "ratio", 2.5, "ratio"},
        {"2.5 x", "ratio", 2.5, "ratio"},
        {"2.5\u00d7", "ratio", 2.5, "ratio"},
        {"2.5 times", "ratio", 2.5, "ratio"},
        {"0.8 ratio", "ratio", 0.8, "ratio"},
    }));
    CAPTURE(text, question);
    const Quantity q = parse_claim(text, question);
    CHECK_THAT(q.value, WithinRel(si, 1e-12));
    CHECK(q.dimension == dimension);
}

TEST_CASE("a claim in another unit of the question's dimension is converted", "[units]") {
    auto [text, question, si] = GENERATE(table<std::string, std::string, double>({
        {"1.2 TB/s", "GB/s", 1.2e12},
        {"2.1 \u00b5s", "ns", 2.1e-6},
        {"6.5 GiB", "GB", 6.5 * kGi},
        {"312 TFLOPS", "TFLOP/s", 312e12},
        {"80%", "%", 0.8},
        {"0.8 ratio", "%", 0.8},
        {"3x", "%", 3},
    }));
    CAPTURE(text, question);
    CHECK_THAT(parse_claim(text, question).value, WithinRel(si, 1e-12));
}

TEST_CASE("a bare number is read in the question's unit", "[units]") {
    auto [text, question, si, dimension] = GENERATE(table<std::string, std::string, double, std::string>({
        {"350", "ns", 350e-9, "s"},
        {"2.1", "us", 2.1e-6, "s"},
        {"900", "GB/s", 900e9, "B/s"},
        {"13.48", "GB", 13.48e9, "B"},
        {"6.5", "GiB", 6.5 * kGi, "B"},
        {"312", "TFLOPS", 312e12, "FLOP/s"},
        {"9.3", "FLOP/B", 9.3, "FLOP/B"},
        {"1.41", "GHz", 1.41e9, "Hz"},
        {"400", "W", 400, "W"},
        {"1.5e9", "FLOP", 1.5e9, "FLOP"},
        // a ratio question reads a fraction, a percent question a percent
        {"0.8", "ratio", 0.8, "ratio"},
        {"80", "%", 0.8, "ratio"},
        {"0.8", "%", 0.008, "ratio"},
        {"2.5", "x", 2.5, "ratio"},
        {"2.5", "times", 2.5, "ratio"},
        // counts
        {"42", "", 42, ""},
        {"6,738,415,616", "", 6738415616.0, ""},
        {"1_000", "", 1000, ""},
    }));
    CAPTURE(text, question);
    const Quantity q = parse_claim(text, question);
    CHECK_THAT(q.value, WithinRel(si, 1e-12));
    CHECK(q.dimension == dimension);
}

TEST_CASE("a metric's unit must be its dimension's SI base unit", "[units]") {
    for (const char* base : {"s", "B", "B/s", "FLOP", "FLOP/s", "FLOP/B", "Hz", "W", "ratio", ""}) CHECK(is_base_unit(base));
    for (const char* other : {"GB/s", "us", "ms", "%", "GiB", "GFLOP/s", "MHz", "furlong"}) CHECK_FALSE(is_base_unit(other));
}

TEST_CASE("GB and GiB differ by 7%", "[units]") {
    const double gb = parse_claim("80 GB", "GB").value;
    const double gib = parse_claim("80 GiB", "GB").value;
    CHECK(gb == 80e9);
    CHECK(gib == 80 * kGi);
    CHECK_THAT(gib / gb, WithinRel(1.073741824, 1e-12));
    CHECK(parse_claim("1 kB", "B").value == 1000);
    CHECK(parse_claim("1 KiB", "B").value == 1024);
}

TEST_CASE("micro is read in both of its code points", "[units]") {
    const double micro_sign = parse_claim("2.1 \u00b5s", "s").value;  // U+00B5, UTF-8 C2 B5
    const double greek_mu = parse_claim("2.1 \u03bcs", "s").value;    // U+03BC, UTF-8 CE BC
    CHECK(micro_sign == greek_mu);
    CHECK(micro_sign == parse_claim("2.1 us", "s").value);
    CHECK_THAT(micro_sign, WithinRel(2.1e-6, 1e-12));
}

TEST_CASE("numbers: signs, exponents, separators and spacing", "[units]") {
    auto [text, question, si] = GENERATE(table<std::string, std::string, double>({
        {"1.5e9", "FLOP", 1.5e9},
        {"1.5E+9 FLOP", "FLOP", 1.5e9},
        {"2e-3 s", "s", 2e-3},
        {"2e3ms", "s", 2},
        {".5", "s", 0.5},
        {"-3", "s", -3},         // the grader decides whether a negative claim makes sense
        {"-3 ms", "s", -3e-3},
        {"+3", "s", 3},
        {"  350 ns  ", "s", 350e-9},
        {"350\u00a0ns", "s", 350e-9},  // no-break space, as pasted from a document
        {"350\u202fns", "s", 350e-9},  // narrow no-break space
        {"1,000", "", 1000},
        {"6,738,415,616", "", 6738415616.0},
        {"1,555.5 GB/s", "B/s", 1555.5e9},
        {"1_000_000", "", 1e6},
        {"6_738_415_616 B", "B", 6738415616.0},
        {"0", "W", 0},
        // SI's thousands spaces: plain, no-break, thin and narrow no-break
        {"13 476 831 232 B", "B", 13476831232.0},
        {"13\u00a0476\u00a0831\u00a0232", "B", 13476831232.0},
        {"1\u2009000.5 GB/s", "B/s", 1000.5e9},
        {"4\u202f096 B", "B", 4096},
        {"-2 048", "", -2048},
        {"10 000x", "ratio", 1e4},
        {"2 100 W", "W", 2100},
    }));
    CAPTURE(text, question);
    CHECK_THAT(parse_claim(text, question).value, WithinRel(si, 1e-12));
}

TEST_CASE("a simple fraction of two plain numbers is the number it is", "[units]") {
    CHECK(parse_claim("1/4", "").value == 0.25);
    CHECK(parse_claim(" 3/4 ", "ratio").value == 0.75);
    CHECK(parse_claim("1/8", "GiB").value == kGi / 8);  // a bare number, in the question's unit
    CHECK(parse_claim("1/4", "").note.empty());
}

TEST_CASE("a FLOP count written as lab prints it: the decimal prefix alone", "[units]") {
    // The run table's FLOP column: "768 M", "1.07 G", "33.6 M".
    auto [text, si] = GENERATE(table<std::string, double>({
        {"552 M", 552e6},
        {"552M", 552e6},
        {"1.07 G", 1.07e9},
        {"33.6 M", 33.6e6},
        {"2 T", 2e12},
    }));
    CAPTURE(text);
    const Quantity q = parse_claim(text, "TFLOP");
    CHECK_THAT(q.value, WithinRel(si, 1e-12));
    CHECK(q.dimension == "FLOP");
    CHECK(q.note.empty());
}

TEST_CASE("FLOPs and FLOPS, one letter's case apart, are read as the question asks, with a note", "[units]") {
    SECTION("FLOPs (a count) where a rate is asked") {
        const Quantity q = parse_claim("10.9 GFLOPs", "GFLOP/s");
        CHECK(q.value == 10.9e9);
        CHECK(q.dimension == "FLOP/s");
        CHECK_THAT(q.note, Contains("'10.9 GFLOPs' was read as 10.9 GFLOP/s") && Contains("GFLOPs (lower-case s) is a count") &&
                               Contains("write GFLOP/s"));
    }
    SECTION("FLOPS (a rate) where a count is asked") {
        const Quantity q = parse_claim("3.5 TFLOPS", "TFLOP");
        CHECK(q.value == 3.5e12);
        CHECK(q.dimension == "FLOP");
        CHECK_THAT(q.note, Contains("was read as 3.5 TFLOP") && Contains("write TFLOP to be unambiguous"));
    }
    SECTION("the spelling the question asks for, and the unambiguous ones, carry no note") {
        CHECK(parse_claim("10.9 GFLOPS", "GFLOP/s").note.empty());
        CHECK(parse_claim("10.9 GFLOP/s", "GFLOP/s").note.empty());
        CHECK(parse_claim("10.9 GFLOPs", "TFLOP").note.empty());
    }
    SECTION("a singular FLOP is a count, never a rate") {
        CHECK_THAT(error_of("10.9 GFLOP", "GFLOP/s"), Contains("got '10.9 GFLOP' (a FLOP count)"));
    }
}

// Spellings a careful student writes that can mean one thing only (a red-team review found each
// refused as unreadable, a resubmission on Gradescope and the points lost in an offline grade).
TEST_CASE("unambiguous other spellings are read, with a note saying how", "[units]") {
    auto [text, question, value, note] = GENERATE(table<std::string, std::string, double, std::string>({
        {"3 GB/sec", "B/s", 3e9, "'3 GB/sec' was read as 3 GB/s"},
        {"3 GB per second", "B/s", 3e9, "was read as 3 GB/s"},
        {"3 GB / s", "B/s", 3e9, "was read as 3 GB/s"},
        {"3 GBps", "B/s", 3e9, "was read as 3 GB/s"},
        {"3 gigabytes/s", "B/s", 3e9, "was read as 3 GB/s"},
        {"3 gibibytes", "B", 3.0 * 1024 * 1024 * 1024, "was read as 3 GiB"},
        {"3 msec", "s", 3e-3, ""},
        {"12.4 FLOP per byte", "FLOP/B", 12.4, "was read as 12.4 FLOP/byte"},
        {"89.5 G FLOP/s", "FLOP/s", 89.5e9, "was read as 89.5 GFLOP/s"},
        {"89.5 gigaflops", "FLOP/s", 89.5e9, "'89.5 gigaflops' was read as 89.5 GFLOP/s (this question asks for a compute rate)"},
        {"89.5 GFLOP/s.", "FLOP/s", 89.5e9, ""},
        {"8.95\u00d710^10 FLOP/s", "FLOP/s", 8.95e10, ""},
        {"8.95 x 10^10 FLOP/s", "FLOP/s", 8.95e10, ""},
        {"8.95*10**10", "FLOP/s", 8.95e10, ""},
        {"3.2 \u00d7 10^-9 s", "s", 3.2e-9, ""},
        {"12.4 FLOP/B (195 GFLOP/s / 15.7 GB/s)", "FLOP/B", 12.4, "'(195 GFLOP/s / 15.7 GB/s)' after the answer was not read"},
        {"28.7% (of the roof)", "%", 0.287, "after the answer was not read"},
    }));
    CAPTURE(text);
    const Quantity q = parse_claim(text, question);
    CHECK_THAT(q.value, WithinRel(value, 1e-12));
    if (!note.empty()) CHECK_THAT(q.note, Contains(note));
}

TEST_CASE("spellings that could mean two things stay refused", "[units]") {
    CHECK_THROWS_AS(parse_claim("10 Gb/s", "B/s"), UnitError);     // bits
    CHECK_THROWS_AS(parse_claim("12 KB", "B"), UnitError);          // 1000 or 1024
    CHECK_THROWS_AS(parse_claim("3 mB/s", "B/s"), UnitError);       // milli or mega
    CHECK_THROWS_AS(parse_claim("2.5 x 10 s", "s"), UnitError);     // no power written
    CHECK(parse_claim("2.5x", "ratio").value == 2.5);               // a ratio's x, not a product
    CHECK(parse_claim("12.", "FLOP/B").value == 12);                // a number's own point
    CHECK_THROWS_AS(parse_claim("(12.4)", "FLOP/B"), UnitError);    // nothing before the brackets
}

TEST_CASE("a count question accepts any known unit and reports its dimension", "[units]") {
    const Quantity q = parse_claim("13.48 GB", "");
    CHECK(q.value == 13.48e9);
    CHECK(q.dimension == "B");
    CHECK(parse_claim("80%", "").dimension == "ratio");
    CHECK(parse_claim("42", "").dimension.empty());
}

TEST_CASE("dimension_of names the SI base unit, or nothing for an unknown unit", "[units]") {
    auto [unit, dimension] = GENERATE(table<std::string, std::string>({
        {"GB/s", "B/s"},   {"us", "s"},          {"\u00b5s", "s"},    {"min", "s"},       {"%", "ratio"},
        {"x", "ratio"},    {"ratio", "ratio"},   {"TFLOP/s", "FLOP/s"}, {"TFLOPS", "FLOP/s"}, {"GFLOPs", "FLOP"},
        {"FLOP/byte", "FLOP/B"}, {"GiB", "B"},   {"bytes", "B"},      {"MHz", "Hz"},      {"kW", "W"},
        {"mJ", "J"},       {"", ""},             {"B/s", "B/s"},      {"FLOP/B", "FLOP/B"},
    }));
    CAPTURE(unit);
    REQUIRE(dimension_of(unit).has_value());
    CHECK(*dimension_of(unit) == dimension);
}

TEST_CASE("dimension_of refuses the spellings that are refused in claims", "[units]") {
    auto unit = GENERATE(as<std::string>{}, "Gb", "Gb/s", "KB", "gb", "GB/sec", "sec", "flops", "m", "furlong",
                         "\u00b5W", "EB");
    CAPTURE(unit);
    CHECK_FALSE(dimension_of(unit).has_value());
}

TEST_CASE("from_unit and to_unit convert to and from the SI base unit", "[units]") {
    CHECK_THAT(from_unit(1.2, "TB/s"), WithinRel(1.2e12, 1e-12));
    CHECK_THAT(from_unit(80, "%"), WithinRel(0.8, 1e-12));
    CHECK(from_unit(6.5, "GiB") == 6.5 * kGi);
    CHECK_THAT(to_unit(1.2e12, "TB/s"), WithinRel(1.2, 1e-12));
    CHECK_THAT(to_unit(0.8, "%"), WithinRel(80, 1e-12));
    CHECK_THAT(to_unit(350e-9, "ns"), WithinRel(350, 1e-12));
    CHECK(from_unit(42, "") == 42);
    // A multiplier is a plain ratio in every spelling.
    for (const char* times : {"x", "times", "\u00d7", "ratio"}) {
        CAPTURE(times);
        CHECK(from_unit(3, times) == 3);
        CHECK(to_unit(3, times) == 3);
    }
    CHECK_THROWS_AS(from_unit(1, "furlong"), UnitError);
    CHECK_THROWS_WITH(to_unit(1, "Gb"), Contains("Gb is gigabits; write GB for gigabytes"));
}

TEST_CASE("a claim that cannot be read is refused with a message saying what to write", "[units]") {
    auto [text, question, message] = GENERATE(table<std::string, std::string, std::string>({
        // unknown units, with the likely intended one where there is one
        {"3 furlongs", "s", "unknown unit 'furlongs'; expected a time such as 500 ns or 2 ms"},
        {"1.2 TB/s measured", "B/s", "unknown unit 'TB/s measured'"},
        {"12 KB", "B", "KB is ambiguous (1000 or 1024 bytes); write kB for 1000 bytes or KiB for 1024 bytes"},
        {"12 gb", "B", "did you mean 'GB' (a size in bytes)?"},
        {"3 Gflops", "B/s", "expected a bandwidth"},  // FLOP spelt as a word is read (a count here), of the wrong dimension
        // bits are never read as bytes
        {"10 Gb", "GB", "Gb is gigabits; write GB for gigabytes"},
        {"10 Gb/s", "GB/s", "Gb/s is gigabits per second; write GB/s for gigabytes per second"},
        {"8 b", "B", "b is bits; write B for bytes"},
        {"4 Mib", "B", "Mib is mebibits; write MiB for mebibytes"},
        // wrong dimension
        {"3 ms", "GB/s", "expected a bandwidth such as 2 TB/s or 500 GB/s, got '3 ms' (a time)"},
        {"80%", "B/s", "got '80%' (a ratio)"},
        {"2.5x", "s", "expected a time such as 500 ns or 2 ms, got '2.5x' (a ratio)"},
        {"312 TFLOP/s", "FLOP", "expected a FLOP count such as 5 TFLOP or 2e9 FLOP, got '312 TFLOP/s' (a compute rate)"},
        {"6.5 GiB", "GB/s", "got '6.5 GiB' (a size in bytes)"},
        {"9.3 FLOP/B", "FLOP", "(an arithmetic intensity)"},
        {"1 GHz", "W", "expected a power such as 400 W or 1.2 kW, got '1 GHz' (a frequency)"},
        // malformed numbers
        {"", "s", "the answer is empty: write a time such as 500 ns or 2 ms"},
        {"   ", "B/s", "the answer is empty"},
        {"~1.2", "s", "'~1.2' is not a number: write the number without '~' ('1.2')"},
        {"\u22481.2 TB/s", "B/s", "write the number without '\u2248' ('1.2 TB/s')"},
        {"1.2.3", "s", "'1.2.3' is not a number: it has more than one decimal point"},
        {"inf", "s", "'inf' is not a finite number"},
        {"-inf", "s", "'-inf' is not a finite number"},
        {"NaN", "ratio", "'NaN' is not a finite number"},
        {"Infinity GB", "B", "is not a finite number"},
        {"1e999", "s", "'1e999' is out of the range the grader can read"},
        {"1e308 TB", "B", "'1e308 TB' is out of the range the grader can read"},
        {"about 3 ms", "s", "'about 3 ms' does not start with a number: write a number such as 500 ns or 2 ms"},
        {"1,5", "", "commas group thousands (1,234,567.5) in threes before the decimal point"},
        // "0," never starts a thousands group: a decimal comma, refused as 1,5 is
        {"0,962", "", "'0,962' is not a number: a leading 0 never starts a group of thousands, so this is a decimal comma; "
                      "write a decimal point (0.962)"},
        {"-0,962 s", "s", "write a decimal point (-0.962)"},
        {"0,962", "ratio", "write a decimal point (0.962)"},
        // fractions: alone, and never a trap in a percent question
        {"1/4", "%", "cannot read '1/4' in a question asked in %: write 25% (a bare number here is percent, so 0.25 would be 0.25%)"},
        {"1/4 GB", "B", "a fraction is read only alone (1/4); write it as a decimal (0.25 GB)"},
        {"1/0", "", "'1/0' divides by zero"},
        // a count's prefix alone is no size in bytes: MB or MiB?
        {"552 M", "B", "cannot read '552 M': 'M' alone is a plain count's prefix, and does not say decimal or binary bytes; "
                       "write 552 MB (decimal) or 552 MiB (binary)"},
        {"2 k", "GB/s", "write 2 kB/s (decimal) or 2 KiB/s (binary)"},
        // nor a time
        {"552 M", "s", "got '552 M' (a plain count)"},
        {"1,0000", "", "commas group thousands"},
        {"1000,000", "", "commas group thousands"},
        {"1,000.000,5", "", "commas group thousands"},
        {"1__000", "", "an underscore goes between two digits"},
        {"1000_", "", "an underscore goes between two digits"},
        {"1,000_000", "", "group digits with commas or with underscores, not both"},
        // the question's own unit is a grading-spec error, said as such
        {"3 ms", "furlong", "the question's unit is not readable (unknown unit 'furlong'); fix the grading spec"},
    }));
    CAPTURE(text, question);
    CHECK_THAT(error_of(text, question), Contains(message));
}

TEST_CASE("the wrong-dimension message is exactly the one the header promises", "[units]") {
    CHECK_THAT(error_of("3 ms", "GB/s"), Equals("expected a bandwidth such as 2 TB/s or 500 GB/s, got '3 ms' (a time)"));
}

TEST_CASE("format renders three significant digits with decimal SI prefixes", "[units]") {
    auto [si, dimension, text] = GENERATE(table<double, std::string, std::string>({
        {1.2e12, "B/s", "1.2 TB/s"},
        {900e9, "B/s", "900 GB/s"},
        {1.555e12, "B/s", "1.56 TB/s"},  // the A100-40GB's bandwidth, to three digits
        {350e-9, "s", "350 ns"},
        {2.1e-6, "s", "2.1 \u00b5s"},
        {8.67e-3, "s", "8.67 ms"},
        {12, "s", "12 s"},
        {3600, "s", "3600 s"},
        {9.3, "FLOP/B", "9.3 FLOP/B"},
        {0.25, "FLOP/B", "0.25 FLOP/B"},
        {0.8, "ratio", "80%"},
        {0.8123, "ratio", "81.2%"},
        {1.05, "ratio", "105%"},
        {3.2, "ratio", "3.2x"},
        {6738415616.0, "B", "6.74 GB"},
        {6.5 * kGi, "B", "6.98 GB"},  // bytes always in decimal prefixes
        {512 * kKi, "B", "524 kB"},
        {0.53125, "B", "0.531 B"},
        {999.4, "B", "999 B"},
        {999.7, "B", "1 kB"},  // rounded before choosing the prefix
        {312e12, "FLOP/s", "312 TFLOP/s"},
        {13.5e9, "FLOP", "13.5 GFLOP"},
        {2e21, "FLOP", "2e21 FLOP"},  // beyond the last prefix: scientific in the base unit
        {1.41e9, "Hz", "1.41 GHz"},
        {400, "W", "400 W"},
        {0.25, "W", "250 mW"},
        {0.12, "J", "120 mJ"},
        {0, "B/s", "0 B/s"},
        {0, "ratio", "0%"},
        {-0.05, "ratio", "-5%"},
        {-3e-3, "s", "-3 ms"},
        {6738415616.0, "", "6,738,415,616"},  // integral counts are exact
        {42, "", "42"},
        {0.5, "", "0.5"},
    }));
    CAPTURE(si, dimension);
    CHECK(format(si, dimension) == text);
}

TEST_CASE("format shows non-finite values and refuses an unknown dimension", "[units]") {
    CHECK(format(std::nan(""), "s") == "nan");
    CHECK(format(INFINITY, "B/s") == "inf");
    CHECK_THROWS_AS(format(1, "furlong"), UnitError);
}

TEST_CASE("what format writes parses back within 0.5%", "[units]") {
    const std::string dimension =
        GENERATE(as<std::string>{}, "s", "B", "B/s", "FLOP", "FLOP/s", "FLOP/B", "Hz", "W", "J", "ratio", "");
    const double mantissa = GENERATE(1.0, 1.005, 1.23456, 4.9951, 9.996, -2.5);
    const int exponent = GENERATE(range(-16, 23));
    const double si = mantissa * std::pow(10.0, exponent);
    const std::string text = format(si, dimension);
    CAPTURE(si, dimension, text);
    const Quantity back = parse_claim(text, dimension);
    CHECK(back.dimension == dimension);
    CHECK_THAT(back.value, WithinRel(si, 0.005));
}

TEST_CASE("spaces group thousands only in threes after a first group of one to three digits", "[units]") {
    // Not groups: these are a number and a unit, refused by the unit check as before.
    // A tab or a line break groups nothing ("64\n128 B" is two numbers, not 64128).
    for (const char* text : {"12 34", "1234 567", "0 962", "1 0000", "1 000,000", "1 00", "1\t000", "64\n128 B"}) {
        INFO(text);
        CHECK_THROWS_AS(parse_claim(text, "B"), UnitError);
    }
    // A grouped number with its unit, and with a decimal part after the last group.
    CHECK(parse_claim("1 234 567.25 s", "s").value == 1234567.25);
    CHECK(parse_claim("999 999", "").value == 999999);
}
