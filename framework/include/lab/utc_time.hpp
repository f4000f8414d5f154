// UTC timestamps as lab writes them: in run records and ceiling caches ("2026-11-30T05:21:01Z"),
// for due dates ("2026-11-30") and in default file names ("20261130-052101"). Header-only, so
// that a backend plugin, which links nothing of the host's, stamps a ceiling with the same text
// the host stamps a run with. The host's other formatting (SI values, percentages) is in
// framework/src/format.hpp, which includes this header.
#pragma once

#include <ctime>
#include <string>

namespace lab::format {

namespace detail {
// gmtime_r, not gmtime: the host formats from several threads.
inline std::string utc(std::time_t t, const char* pattern) {
    std::tm tm{};
    if (!gmtime_r(&t, &tm)) return "";
    char buf[40];
    return std::string(buf, std::strftime(buf, sizeof buf, pattern, &tm));
}
}  // namespace detail

// "2026-11-30T05:21:01Z"
inline std::string utc_iso8601(std::time_t t) { return detail::utc(t, "%Y-%m-%dT%H:%M:%SZ"); }
// "2026-11-30": compares as text with the dates grading specs hold.
inline std::string utc_date(std::time_t t) { return detail::utc(t, "%Y-%m-%d"); }
// "20261130-052101": sorts by time and needs no quoting in a file name.
inline std::string utc_stamp(std::time_t t) { return detail::utc(t, "%Y%m%d-%H%M%S"); }

}  // namespace lab::format
