// Console output shared by the subcommands: device summaries, ceilings and the run table.
#pragma once

#include <ostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab::cli {

// Columns of the terminal standard output goes to: $COLUMNS, else the terminal's width, else 0
// (a pipe or a file: lines are not wrapped).
int terminal_columns();

// `line` word-wrapped to `columns` (0: as is), continuation lines indented by `indent` spaces:
// the text after a fixed-width head stays in its column.
std::string wrap_hanging(const std::string& line, std::size_t indent, int columns);

// From here on, standard output shows control characters other than newline and tab as '?':
// folder names, student IDs, answers and tensor names come from files other people wrote, and an
// escape sequence among them would drive the reader's terminal (clear it, retitle it). lab writes
// none of its own to standard output; JSON escapes them anyway.
void guard_standard_output();

void print_device(std::ostream& out, DeviceKind kind, const DeviceFacts& facts);
// How much a ceilings block says: `full` (lab device, lab calibrate) gives each ceiling's method;
// `brief` (a run's view) one short line each: value, samples and spread, trust.
enum class CeilingDetail { full, brief };
void print_ceilings(std::ostream& out, const Ceilings& c, CeilingDetail detail);
void print_spec(std::ostream& out, const nlohmann::json& spec);

// The measured workloads with their derived values; withheld values print as "?".
void print_workloads(std::ostream& out, const RawRun& run, const Derivation& d,
                     const std::set<std::string>& withheld);

}  // namespace lab::cli
