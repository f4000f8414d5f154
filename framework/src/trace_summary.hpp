// A profiler trace read back and summarised: PyTorch's Kineto traces (.json or .json.gz, from
// NVIDIA or AMD GPUs) and lab's own Chrome traces (`lab run --trace`). The file is parsed as a
// stream, one event at a time, into compact records: the text is held once, never a DOM of it.
//
// Definitions (docs/trace.md): GPU events are kernels, memcpys and memsets; span = last GPU event
// end - first GPU event start; busy = the length of the union of GPU event intervals over all
// streams; idle = span - busy (a lab trace's untraced spans, where lab measured without tracing,
// and its device setup, are left out of the span: `untraced_us`, `setup_us`); launch latency =
// the median of (kernel start - start of the runtime/driver call with the same correlation id),
// split into launches onto an idle stream and launches queued behind the stream's earlier work;
// syncs count cuda_sync events (lab: "sync") in the whole trace, and the host's time in them (and
// apart, those within the span). Idle gaps: the stretches between GPU events, largest first, with
// what the host was doing meanwhile; in a lab trace also per workload window, so that the gap a
// sync or copy inside a workload leaves is not crowded out by those between workloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lab::trace {

struct KernelStats {
    std::string name;  // whole
    std::uint64_t count = 0;
    double total_us = 0;
    std::string short_name;  // for a table: distinct kernels keep distinct short names (kernel_names.hpp)
};

// GPU work on one stream (Kineto's args.stream; lab's traces: the thread, one per stream).
struct StreamStats {
    std::string stream;
    std::uint64_t kernels = 0, copies = 0, memsets = 0;
    double busy_us = 0;  // the union of its events' intervals
};

// Host activity during an idle gap: an op or annotation (cpu_op, user_annotation,
// python_function; lab: workload) or a runtime/driver call or sync, by name.
struct HostShare {
    std::string name;
    std::uint64_t count = 0;
    double overlap_us = 0;  // of the gap
};

// A stretch with no kernel, copy or memset on any stream (untraced and setup time left out).
struct IdleGap {
    double start_ts_us = 0;  // the trace's own timestamp, to find it in Perfetto
    double offset_us = 0;    // after the first GPU event's start
    double dur_us = 0;
    std::string after, before;              // the GPU events either side, whole names
    std::string after_short, before_short;  // kernels' short names; copies and memsets as they are
    std::optional<HostShare> host_op;       // the innermost op covering at least half the gap, else the one covering most
    std::vector<HostShare> host_calls;      // runtime/driver calls and syncs, most overlap first, at most 3
    // What made the device wait, where the trace shows it: a copy either side of the gap, or a
    // host-blocking sync that returned in it (the host waited for the device to drain, then had
    // to launch the next work: the device waited for the host).
    bool next_to_copy = false, next_to_sync = false;
    double window_offset_us = 0;  // a workload window's gap: after the window's start
};

// A lab trace's workload window (`cat: workload` on lab's track, trace_windows.hpp): one
// workload's traced invocations. Its own gaps are those between device events that both start
// inside it: the gap before its first event (the tracer starting, lab's work between
// workloads) is not the workload's.
struct Window {
    std::string name;
    double start_ts_us = 0, offset_us = 0, dur_us = 0;  // offset: after the first GPU event's start
    std::uint64_t kernels = 0, copies = 0, memsets = 0;
    std::uint64_t syncs = 0;   // sync events that start in the window, every kind
    double sync_host_us = 0;   // the host's time blocked in them (not stream wait events)
    std::uint64_t gaps = 0;    // idle gaps between its own device events
    double idle_us = 0;        // their idle time in all
    // The largest of them, and the largest next to a copy or sync when that is another: at most
    // kWindowGaps. The one a lesson's deliberate sync or copy leaves is seldom the largest.
    std::vector<IdleGap> idle_gaps;
};

// Kernel start - its launch call's start, over a set of launches: nearest-rank p90.
struct LatencyStats {
    std::uint64_t count = 0;
    std::optional<double> median_us, p90_us;
};

struct CopyStats {
    std::uint64_t count = 0;
    double bytes = 0, total_us = 0;
    // Of them, those whose host side Kineto names (`Memcpy HtoD (Pageable -> Device)`, `(Device ->
    // Pinned)`): pageable memory is staged through a pinned buffer and reaches a fraction of a
    // pinned copy's bandwidth, so a kind's bandwidth means little without it.
    std::uint64_t pageable = 0, pinned = 0;
};

// One hardware-counter range (Kineto's cuda_profiler_range): FLOP from instruction counts (an FMA
// is 2 FLOP; a packed half2 instruction is counted once, as the counters count it).
struct CounterRange {
    std::string name;
    double start_us = 0, dur_us = 0;
    double flop_fp32 = 0, flop_fp64 = 0, flop_fp16 = 0;
    std::optional<double> dram_bytes;  // when the counters include DRAM reads and writes
};

struct Summary {
    std::string format;       // "kineto" | "lab"
    std::string device_name;  // "" when the trace does not say
    std::optional<int> sms;
    std::uint64_t events = 0;  // every complete ("X") event read
    // Complete events left out because their ts or dur is missing or no time (text, negative,
    // infinite, or a duration past 30 days), or their name is missing (or neither text nor a
    // number): counted and said, so a damaged trace does not read as an idle one.
    std::uint64_t events_left_out = 0;
    std::string first_left_out;  // the first such event, as "'name': dur -5"
    // A trace in JSON array form whose closing ']' is missing (a profiler that stopped before it
    // wrote it): read, as Chrome's importer reads it, and said.
    bool unclosed_array = false;
    double span_us = 0, gpu_busy_us = 0;
    double untraced_us = 0;    // lab traces: time inside the span lab measured without tracing
    // lab's CPU traces: time inside the span the device spent on lab's own setup (first touch of
    // new buffers, cache flushes), less what was busy or untraced anyway: the device was neither
    // running the lesson's work nor waiting for the host, so this too is left out of the span.
    double setup_us = 0;
    std::vector<std::string> setup_names;  // those setup tasks' names, most time first
    std::uint64_t kernel_count = 0;
    double kernel_total_us = 0;
    std::vector<KernelStats> kernels;  // by total time, largest first
    CopyStats memcpy;
    std::map<std::string, CopyStats> memcpy_by_kind;  // HtoD, DtoH, DtoD, ...
    std::uint64_t memset_count = 0;
    std::uint64_t sync_count = 0;
    std::map<std::string, std::uint64_t> syncs_by_kind;
    std::map<std::string, double> sync_us_by_kind;
    double sync_host_us = 0;  // the syncs' time but stream-wait-event ones' (a stream waits, not the host)
    // The part of it while lab's setup ran on the device (lab's allocations wait for their first
    // touch): host time the lesson's own synchronisations did not cost.
    double sync_host_setup_us = 0;
    // The syncs that start within the span (between the first GPU event's start and the last's
    // end), where the idle fraction is measured; the figures above are the whole trace's.
    std::uint64_t sync_in_span_count = 0;
    double sync_in_span_host_us = 0;
    std::optional<double> launch_latency_us;  // none when no kernel's launch call is in the trace
    std::uint64_t launches_matched = 0;
    // Lab traces: matched launches of lab's calibrate.* kernels, left out of the figures above.
    std::uint64_t launches_left_out = 0;
    // The same latencies split: the stream had finished its earlier work when the launch call
    // began (the latency is launch overhead), or had not (the latency includes queueing).
    LatencyStats launch_idle, launch_queued;
    std::vector<StreamStats> streams;  // most busy first
    std::vector<IdleGap> idle_gaps;    // largest first, at most kMaxIdleGaps
    std::vector<Window> windows;       // lab traces: the workloads' traced windows, in time order
    std::vector<CounterRange> counter_ranges;
    // False when the ranges' durations are not measured ones: Kineto gives each range of CUPTI's
    // range profiler the profiler's whole span divided evenly (every range the same length, back to
    // back), so a FLOP/s per range would be FLOP over an arbitrary share of the run.
    bool counter_durations_measured = true;
    // Runtime/driver calls that synchronise (cudaDeviceSynchronize, cudaStreamSynchronize, ...) by
    // name, with the host's time in them: a trace captured without CUDA sync activity has these
    // but no cuda_sync events, and "syncs: 0" alone would read as a program that never waited.
    std::map<std::string, std::uint64_t> sync_calls_by_name;
    std::uint64_t sync_call_count = 0;
    double sync_call_host_us = 0;
    // Runtime/driver calls that launch a kernel (names holding "Launch": cudaLaunchKernel,
    // cuLaunchKernel, cudaGraphLaunch, ...): with no kernel records, the trace lost its kernels
    // (the range profiler replaces them), the program did not launch none.
    std::uint64_t launch_call_count = 0;
    double gpu_idle_us() const { return span_us - gpu_busy_us; }
    double idle_fraction() const { return span_us > 0 ? gpu_idle_us() / span_us : 0; }
    bool has_device_events() const { return kernel_count + memcpy.count + memset_count > 0; }
};

// What a hostile trace cannot exceed, each named in the refusal. Real traces: a few MB to a few
// hundred MB of JSON, compressing 10 to 30-fold, nested 4 or 5 levels.
inline constexpr std::size_t kMaxTraceBytes = std::size_t{2} << 30;  // the file, and its text once decompressed
inline constexpr double kMaxGzipRatio = 200;                          // decompressed / compressed bytes...
inline constexpr std::size_t kGzipRatioAfter = std::size_t{16} << 20; // ...once 16 MiB have come out
inline constexpr int kMaxTraceDepth = 64;
inline constexpr std::size_t kMaxIdleGaps = 5;
inline constexpr std::size_t kWindowGaps = 2;  // per workload window
// The least share of a gap's idle time a host op must cover for `lab trace` to name it as what the
// host was doing: an op over a tenth of the gap is a fair part of the answer, while one that only
// brushes it (a workload's annotation that ends just after the gap begins: 0.02% of it) would point
// the reader at the wrong thing. --json keeps the op with its overlap for scripts to judge.
inline constexpr double kHostOpMinShare = 0.10;

// Whether a sync of this kind blocks the host: all but CUPTI's "stream wait event" (Kineto:
// "Stream Wait Event"), which makes a stream wait on the device while the host call returns.
bool host_waits(const std::string& kind);

// Reads and summarises `file` (gzip when it starts with gzip's magic bytes). Throws InputError
// for a truncated .gz, a limit above passed, text that is not JSON (with the byte offset where it broke), or JSON that
// is neither a Kineto nor a Chrome trace.
Summary read(const std::filesystem::path& file);

}  // namespace lab::trace
