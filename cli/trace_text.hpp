// `lab trace`'s text: the --json document (cmd_trace.cpp) written for a student, in the order a
// timeline viewer (Perfetto, Nsight Systems) answers the questions: how busy the device was and
// on which stream, where and why it sat idle, what a launch cost, which kernels took the time,
// copies and syncs. Times, sizes and rates with their units (lab::format); kernels by short name.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace lab::cli {

void print_trace(std::ostream& o, const nlohmann::json& j, const std::string& file);

}  // namespace lab::cli
