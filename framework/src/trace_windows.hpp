// A lesson's trace (`lab run --trace`), taken in windows so that every workload shows in it.
//
// Traced whole, a lesson's trace is mostly the measurement engine repeating each kernel
// thousands of times: a quick 02.05 on a CPU made 370,000 events, filled the tracer's cap before
// its GEMMs ran and dropped everything after. So the engine's warm-up and timed samples are not
// traced; after them each workload gets one traced window of back-to-back invocations (a hot
// sample's shape, at most kWindowEvents events), and everything the lesson does between
// workloads (allocations, fills, copies) is traced as it happens. lab's own track in the trace
// says what each window is and where measuring went untraced, so a gap on the device track is
// never mistaken for idle time (`lab trace` leaves untraced spans out of the span).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "lab/device.hpp"

namespace lab {

class TraceWindows {
public:
    // Events of one workload's window, at most (a window has at least one invocation).
    static constexpr std::size_t kWindowEvents = 2000;

    explicit TraceWindows(Device& device) : device_(device) {}
    // Starts tracing; false, with `why`, when the device cannot.
    bool begin(std::string& why);
    bool active() const { return started_ && !failed_; }
    // Stops the device's tracer and keeps what it recorded, on the trace's one time axis.
    void pause();
    // Starts the device's tracer again (a new segment). A pause no "untraced" range accounts for
    // (between a window's first invocation and the rest; after a window, lab's counter
    // measurements) gets one of its own, "tracer stopped (not traced)": not the lesson's idle time.
    void resume();
    // Seconds since the trace began, on the host's steady clock.
    double now() const;
    // Events the last segment recorded (what pause() kept).
    std::size_t last_segment_events() const { return last_segment_; }
    // Events kept so far (an index for name_device_events_from).
    std::size_t events_kept() const { return events_.size(); }
    // Names every device event kept since `first` `owner`, keeping the device's own name in the
    // event's "kernel" argument: the kernels of lab's own ceiling re-measures ("calibrate.read")
    // are told apart from the lesson's by that prefix, and a GPU's kernels come named by the GPU
    // ("stream_read", cuBLASLt's), not after the workload that launched them as a CPU's do.
    void name_device_events_from(std::size_t first, const std::string& owner);
    // An event of lab's own, on its track (host side, kLabTrack).
    void add_range(const std::string& name, const std::string& category, double start_s, double end_s,
                   std::map<std::string, std::string> args = {});
    // Ends tracing: every event in start order, and a "dropped N events" marker when the device's
    // tracer had to drop some.
    std::vector<TraceEvent> finish();

private:
    using Clock = std::chrono::steady_clock;
    Device& device_;
    bool started_ = false, running_ = false, failed_ = false;
    Clock::time_point origin_{};
    double segment_offset_s_ = 0;
    double paused_at_s_ = 0;          // when the last pause had stopped the tracer
    double untraced_until_s_ = -1;    // the end of the latest "untraced" range added
    double lab_track_end_s_ = 0;      // where the last range on lab's track ends
    std::size_t last_segment_ = 0, dropped_ = 0;
    unsigned long long correlation_base_ = 0;  // the largest correlation number kept so far
    std::vector<TraceEvent> events_;
};

// The host-side track of lab's own events in a trace (chrome_trace names it).
inline constexpr int kLabTrack = 1000;

}  // namespace lab
