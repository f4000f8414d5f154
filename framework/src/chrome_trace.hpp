// Chrome trace JSON (the "Trace Event Format" that Perfetto and chrome://tracing open) from the
// TraceEvents a device recorded: device work on one process track per stream, host API calls and
// ranges on another, launches linked to their kernels by flow arrows where a correlation ID says so.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/device.hpp"

namespace lab {

struct TraceMetadata {
    std::string device_name;   // "NVIDIA H200", "Intel(R) Xeon(R) Processor"
    std::string device_kind;   // "cuda" | "cpu"
    std::string lesson;        // "02.05"
    std::size_t dropped = 0;   // events the tracer could not keep
};

nlohmann::json chrome_trace(const std::vector<TraceEvent>& events, const TraceMetadata& meta);

}  // namespace lab
