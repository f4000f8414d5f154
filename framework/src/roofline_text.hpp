// Label text for both roofline renderers. Labels are untrusted (workload and student-chosen
// names), so they are cleaned before they reach XML or a terminal; numbers are written as the
// plot writes them (lab::format with the plot's style). Internal to roofline_plot.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lab::plot::detail {

// Escaped for XML text and attributes; invalid UTF-8 and control characters become '?'.
std::string xml_escape(std::string_view raw);
// The terminal sketch promises bytes < 128: each non-ASCII character becomes one '?'.
std::string ascii_only(std::string_view raw);
// Characters as a reader counts them (UTF-8 code points).
std::size_t code_points(std::string_view s);

// A plain number such as an arithmetic intensity: "0.01", "9.28", "1000", "1.5e7"; whole numbers
// up to a million keep every digit ("1024", not "1020").
std::string plain(double v);
// An arithmetic intensity in a label, a key or a tooltip, written as the run's table writes it
// ("9.28", "2.5e5", "9.6e7"), so that the plot and the table read the same.
std::string ai_number(double v);
// A value with a decimal SI prefix: "181 GFLOP/s", "19.5 GB/s", "1 TFLOP/s"; three digits are
// enough to read off a plot and short enough to fit beside a line. `ascii`: "u" for micro.
std::string si(double v, std::string_view unit, bool ascii);

}  // namespace lab::plot::detail
