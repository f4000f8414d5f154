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

// setup: a lab trace's device work that is not the lesson's (first touch, cache flushes), kept
// apart from the others: neither busy nor idle time.
enum class GpuKind : std::uint8_t { kernel, copy, memset, setup };

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

// Time intervals [start, end), in µs.
using Intervals = std::vector<std::pair<double, double>>;

// Sorted by start, overlapping and touching intervals joined.
Intervals merged(Intervals intervals);

// How much of [from, to) the merged intervals cover.
double covered(const Intervals& merged, double from, double to);

// A kernel whose launch call is in the trace: the kernel (an index into the device events) and
// the call's start.
struct MatchedLaunch {
    std::size_t event = 0;
    double call_start = 0;
};

// Busy time and event counts per stream, most busy first.
std::vector<StreamStats> stream_stats(const std::vector<DeviceEvent>& events, const std::vector<std::string>& streams);

// What a gap's description reads besides the device events: the stretches that are neither busy
// nor idle (`excluded`, merged: a lab trace's untraced time and its device setup), the host's
// events, the name table, and the host-blocking syncs (merged) that mark a gap next_to_sync.
struct GapContext {
    const Intervals& excluded;
    const std::vector<HostEvent>& host;
    const std::vector<std::string>& names;
    const Intervals& host_syncs;
};

// The `count` largest idle gaps between the device events (sorted by start), the excluded
// stretches taken out of each, with the host events overlapping what is left. Neighbours' and
// host events' names are whole here; the caller adds short names.
std::vector<IdleGap> largest_gaps(const std::vector<DeviceEvent>& sorted, const GapContext& context, std::size_t count);

// Fills each workload window's device event counts and its own idle gaps (see Window): between
// device events that both start inside it; the largest, and the largest next to a copy or a
// sync when that is another (kWindowGaps at most). `windows` holds names and times already.
void window_gaps(std::vector<Window>& windows, const std::vector<DeviceEvent>& sorted, const GapContext& context);

// Splits the matched launches' latencies by whether the kernel's stream was still running
// earlier work when the launch call began. `setup` (a lab trace's first touch and cache flushes)
// is not busy time but holds its stream all the same: a kernel launched behind it waited.
//
// A stream made to wait on another (cudaStreamWaitEvent: Kineto's `Stream Wait Event`, with
// `wait_on_stream`) is not free either while the other stream still runs the work enqueued on it
// before the event it waits on was recorded: a launch behind such a wait waited for that work.
// `enqueued[i]` is when work[i]'s own call began (NaN where the trace has no call for it: its
// start is used).
struct StreamWait {
    std::uint32_t stream = 0, on_stream = 0;  // indices into the stream table
    double ts = 0;                            // the wait call's start
    // The other stream's work enqueued before this time is waited for: the start of the
    // cudaEventRecord call the wait names (Kineto's wait_on_cuda_event_record_corr_id), else,
    // where the trace does not say, the wait call's own start (all the work enqueued before it).
    double covers_until = 0;
};
void split_launches(const std::vector<DeviceEvent>& work, const std::vector<double>& enqueued, const std::vector<DeviceEvent>& setup,
                    const std::vector<StreamWait>& waits, const std::vector<MatchedLaunch>& launches, LatencyStats& idle,
                    LatencyStats& queued);

// The median (the mean of the middle two for an even count) and nearest-rank p90 of `values`.
LatencyStats latency_stats(std::vector<double> values);

}  // namespace lab::trace
