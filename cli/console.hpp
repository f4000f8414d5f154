// Console output shared by the subcommands: device summaries, ceilings and the run table.
#pragma once

#include <ostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab::cli {

// "1.23 GB/s" etc. (SI prefixes, as the record's units are SI).
std::string si(double value, const std::string& unit);

void print_device(std::ostream& out, DeviceKind kind, const DeviceFacts& facts);
void print_ceilings(std::ostream& out, const Ceilings& c);
void print_spec(std::ostream& out, const nlohmann::json& spec);

// The measured workloads with their derived values; withheld values print as "?".
void print_workloads(std::ostream& out, const RawRun& run, const Derivation& d,
                     const std::set<std::string>& withheld);

}  // namespace lab::cli
