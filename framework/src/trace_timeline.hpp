// The timeline questions of a trace summary (trace_summary.hpp), asked of compact records the
// reader keeps while streaming: how busy each stream was, where the device sat idle longest and
// what the host did meanwhile, and which launches found their stream idle. Names are held once
// (an index into a table), so a trace of millions of host events costs a few words per event.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace_summary.hpp"

namespace lab::trace {

enum class GpuKind : std::uint8_t { kernel, copy, memset };

struct DeviceEvent {
    double start = 0, end = 0;
    std::uint32_t name = 0, stream = 0;  // indices into the name and stream tables
    GpuKind kind = GpuKind::kernel;
};

struct HostEvent {
    double start = 0, end = 0;
    std::uint32_t name = 0;
    bool call = false;  // a runtime/driver call or a sync; otherwise an op or an annotation
};

// A kernel whose launch call is in the trace: the kernel (an index into the device events) and
// the call's start.
struct MatchedLaunch {
    std::size_t event = 0;
    double call_start = 0;
};

// Busy time and event counts per stream, most busy first.
std::vector<StreamStats> stream_stats(const std::vector<DeviceEvent>& events, const std::vector<std::string>& streams);

// The `count` largest idle gaps between the device events (sorted by start), untraced time taken
// out of each, with the host events overlapping them. Neighbours' and host events' names are
// whole here; the caller adds short names.
std::vector<IdleGap> largest_gaps(const std::vector<DeviceEvent>& sorted, const std::vector<std::pair<double, double>>& untraced,
                                  const std::vector<HostEvent>& host, const std::vector<std::string>& names, std::size_t count);

// Splits the matched launches' latencies by whether the kernel's stream was still running
// earlier work when the launch call began.
void split_launches(const std::vector<DeviceEvent>& events, const std::vector<MatchedLaunch>& launches, LatencyStats& idle,
                    LatencyStats& queued);

// The median (the mean of the middle two for an even count) and nearest-rank p90 of `values`.
LatencyStats latency_stats(std::vector<double> values);

}  // namespace lab::trace
