// How the host-side calculators (`lab model`, `lab checkpoint`) write their tables: four
// significant digits with decimal SI prefixes (memory in GB = 10^9 B, never GiB), exact byte
// counts beside sizes, labels in a 34-column first column, right-aligned cells.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "format.hpp"

namespace lab::cli::calc_text {

inline std::string si(double value, const char* unit) {
    format::Style s;
    s.digits = 4;
    s.highest_prefix = 18;
    return format::si(value, unit, s);
}
// Memory with its exact byte count beside it: "13.48 GB (13,476,831,232 B)".
inline std::string bytes_text(const nlohmann::json& b) {
    return si(b.get<double>(), "B") + " (" + format::thousands(b.get<double>()) + " B)";
}
// A device spec may leave its bandwidth out (configs/devices/README.md): said, with what that
// leaves out, rather than printed as "0 B/s" beside an infinite bound.
inline constexpr const char* kNoBandwidth = "the device states no bandwidth (bandwidth_bytes_per_s)";
inline std::string bandwidth_text(double bytes_per_s) { return bytes_per_s > 0 ? si(bytes_per_s, "B/s") : "not stated"; }
// "  label<padding>value\n".
inline std::string row(const std::string& label, const std::string& value) {
    std::string l = "  " + label;
    if (l.size() < 34) l.resize(34, ' ');
    return l + value + "\n";
}
// `s` right-aligned in `width` columns (one space before it when it is wider).
inline std::string right(const std::string& s, std::size_t width) {
    return s.size() < width ? std::string(width - s.size(), ' ') + s : " " + s;
}

}  // namespace lab::cli::calc_text
