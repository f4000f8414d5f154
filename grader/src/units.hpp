// Quantities with units, as students write them in answers files ("1.2 TB/s", "350 ns",
// "6.5 GiB", "2.1 µs", "80%") and as grading specs name them ("GB/s", "us", "%"). Everything is
// converted to the SI base unit of its dimension, the unit run records use: s, B, B/s, FLOP,
// FLOP/s, FLOP/B, Hz, W, ratio. GB and GiB differ; a wrong dimension is an error, not a wrong
// answer.
#pragma once

#include <optional>
#include <stdexcept>
#include <cstddef>
#include <string>
#include <string_view>

namespace lab::units {

// A claim or unit that cannot be read, or one of the wrong dimension. The message says what was
// expected ("expected a bandwidth such as 1.2 TB/s or 900 GB/s, got '3 ms' (a time)").
class UnitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The dimensions, named by their SI base unit: "s", "B", "B/s", "FLOP", "FLOP/s", "FLOP/B", "Hz",
// "W", "J", "ratio", and "" for plain counts.
struct Quantity {
    double value = 0;        // in the SI base unit of `dimension`
    std::string dimension;
    double number = 0;       // the number as written ("16" of "16 GB")
    std::string unit;        // the unit as written ("GB"), "" for a bare number
    // How the claim was read where it was read leniently ("10.9 GFLOPs" in a rate question read
    // as GFLOP/s): the student is told, and the grade is of that reading. "" otherwise.
    std::string note;
};

// The dimension of a unit string ("GB/s" -> "B/s", "us" -> "s", "%" -> "ratio", "TFLOP/s" ->
// "FLOP/s", "" -> ""), or nullopt for a unit this module does not know.
std::optional<std::string> dimension_of(const std::string& unit);

// What an unknown unit was likely meant to be ("Gb/s is gigabits per second; write GB/s ...",
// "write 'GB/s' (per second as /s)"), or "" when nothing is likely.
std::string unit_hint(const std::string& unit);

// The byte length of the blank at the front of `s` (0: none): ASCII blanks and the no-break,
// thin and narrow no-break spaces that copy-paste out of documents carries.
std::size_t leading_blank(std::string_view s);
// The length of a space that groups a number's digits in threes, as the SI writes numbers, at
// the start of `s` (0 when none): a plain, no-break, thin or narrow no-break space followed by
// exactly three digits. Never a tab or a line break.
std::size_t leading_group_space(std::string_view s);

// Whether a unit is the SI base unit of its dimension, as run records and metric declarations
// hold values: "B/s", "s", "ratio", "" (a count) are; "GB/s", "us", "%" are not.
bool is_base_unit(const std::string& unit);

// value [unit] -> the SI base unit: from_unit(1.2, "TB/s") == 1.2e12, from_unit(80, "%") == 0.8,
// from_unit(6.5, "GiB") == 6.5 * 2^30. Throws UnitError for an unknown unit.
double from_unit(double value, const std::string& unit);
// The inverse: to_unit(1.2e12, "TB/s") == 1.2.
double to_unit(double si_value, const std::string& unit);

// Parses a claim. A bare number ("1.5e9", "42", or a fraction of two plain numbers, "1/4") is
// read in `default_unit`; a number with a unit must have the dimension of `default_unit` (when
// default_unit is "" any known unit is accepted and its dimension returned). Two spellings are
// read by what the question asks, with a note: a count's decimal prefix alone ("552 M", as `lab`
// prints FLOP counts) in a FLOP question, and "FLOPs" / "FLOPS" (count / rate, told apart by the
// case of one letter) where the other is asked. Throws UnitError on malformed text, an unknown
// unit, or a wrong dimension.
Quantity parse_claim(const std::string& text, const std::string& default_unit);

// Working shown after an answer, in brackets and after a space ("12.4 FLOP/B (195 GFLOP/s /
// 15.7 GB/s)", "compute bound (59% of the FLOP roof)"): the answer before it, and the bracketed
// aside in `aside` ("" when there is none: nothing before the brackets, or none at the end). A
// full stop ending the sentence, after the brackets or before them, is no part of the answer.
std::string_view without_aside(std::string_view claim, std::string_view& aside);

// "1.2 TB/s", "350 ns", "6.5 GiB" (binary prefixes only when `binary` is asked for bytes),
// "80 %" for ratios when percent is true: a readable rendering of an SI base value.
std::string format(double si_value, const std::string& dimension, int digits = 3);

}  // namespace lab::units
