// Console output shared by the subcommands: device summaries, ceilings and the run table.
#pragma once

#include <ostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab::cli {

void print_device(std::ostream& out, DeviceKind kind, const DeviceFacts& facts);
void print_ceilings(std::ostream& out, const Ceilings& c);
void print_spec(std::ostream& out, const nlohmann::json& spec);

// The measured workloads with their derived values; withheld values print as "?".
void print_workloads(std::ostream& out, const RawRun& run, const Derivation& d,
                     const std::set<std::string>& withheld);

}  // namespace lab::cli
