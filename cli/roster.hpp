// A class roster: a CSV of `student[,email]` rows (a header row, blank lines and # comments
// skipped; a spreadsheet's byte-order mark and CRLF line ends read as well). Read by `lab token`
// (a token per student) and `lab grade --roster` (a `missing` row per student who handed in
// nothing), so both commands read one roster the same way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lab::cli {

// The roster's students, normalised, in file order. InputError (file:line) for a row that is
// 'anonymous', holds a quote or comma, or repeats a student; for an unreadable or empty roster.
std::vector<std::string> read_roster(const std::filesystem::path& roster);

}  // namespace lab::cli
