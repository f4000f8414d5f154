// Time limits and memory sizes as people write them, read one way wherever lab takes them (an
// option, an environment variable): `--timeout 1e3` and `LAB_TIMEOUT=1e3` mean the same, or are
// refused the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lab {

// Seconds: a decimal number, an exponent allowed (600, 2.5, .5, 1e3); from 0.1 to a week
// (604800), or 0 for the command's default. UsageError naming `as_given` ("--timeout 0x10",
// "LAB_TIMEOUT=abc"), with its fix line, for anything else: hexadecimal, inf, nan, a unit, a
// blank, a negative number, one below 0.1.
double parse_time_limit(const std::string& text, const std::string& as_given);

// $LAB_TIMEOUT read with parse_time_limit; nullopt when unset or empty.
std::optional<double> time_limit_from_environment();

// Bytes: a plain decimal number and a unit, blanks between allowed: none or B (bytes); K, M, G, T
// (binary, as a memory limit has always read them: 8G is 8 GiB); KiB, MiB, GiB, TiB (binary);
// kB/KB, MB, GB, TB (decimal: 8GB is 8 x 10^9 bytes). At most 1 PiB. UsageError naming
// `as_given` (LAB_MEMORY_LIMIT='8 gigs'), with its fix line, for anything else.
std::uint64_t parse_memory_size(const std::string& text, const std::string& as_given);

}  // namespace lab
