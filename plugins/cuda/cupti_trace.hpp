// Tracing with the CUPTI Activity API: kernels, memcpys, memsets, runtime API calls and
// synchronisations of this process, turned into lab::TraceEvents (Chrome/Perfetto-ready).
#pragma once

#include <string>
#include <vector>

#include "lab/device.hpp"

namespace lab::cuda {

class ActivityTracer {
public:
    ActivityTracer() = default;
    ~ActivityTracer();
    ActivityTracer(const ActivityTracer&) = delete;
    ActivityTracer& operator=(const ActivityTracer&) = delete;

    // Enables the activity kinds. False, with `note` saying why, when CUPTI refuses
    // (e.g. another profiler holds it); the run goes on untraced.
    bool start(std::string& note);
    // Flushes, disables and converts. Event times are seconds from start(). At most
    // kMaxEvents are kept; `truncated` says how many were dropped for want of room, `untimed`
    // how many CUPTI handed back without times (work still running: the caller synchronises
    // the device first, so there should be none).
    std::vector<TraceEvent> stop(std::size_t* truncated = nullptr, std::size_t* untimed = nullptr);

    static constexpr std::size_t kMaxEvents = 200000;

private:
    bool running_ = false;
};

}  // namespace lab::cuda
