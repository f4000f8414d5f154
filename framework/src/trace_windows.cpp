// A lesson's trace taken in windows (see trace_windows.hpp).
#include "trace_windows.hpp"

#include <algorithm>
#include <cstdlib>

namespace lab {

bool TraceWindows::begin(std::string& why) {
    origin_ = Clock::now();
    if (!device_.trace_begin(why)) return false;
    // A device's trace counts from the end of its trace_begin (CUPTI reads its clock after its
    // set-up, which can take milliseconds the first time): the host's clock is read to match.
    segment_offset_s_ = now();
    started_ = running_ = true;
    return true;
}

double TraceWindows::now() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

void TraceWindows::pause() {
    if (!running_) return;
    running_ = false;
    std::vector<TraceEvent> got = device_.trace_end();
    last_segment_ = 0;
    unsigned long long segment_max = correlation_base_;
    for (auto& e : got) {
        // The device's own marker of what it dropped: summed over segments into one at the end.
        if (e.category == "marker" && e.name.rfind("dropped ", 0) == 0) {
            dropped_ += std::strtoull(e.name.c_str() + 8, nullptr, 10);
            continue;
        }
        // Each segment's times count from the end of its own trace_begin, which was
        // segment_offset_s_ into the trace on the host's clock (read just after it returned).
        e.start_s += segment_offset_s_;
        // A device may number launches from 1 again in each trace (the CPU's does): numbers are
        // moved past every earlier segment's, so a launch pairs only with its own work.
        if (auto c = e.args.find("correlation"); c != e.args.end()) {
            char* end = nullptr;
            const unsigned long long n = std::strtoull(c->second.c_str(), &end, 10);
            if (end != c->second.c_str() && *end == '\0') {
                c->second = std::to_string(n + correlation_base_);
                segment_max = std::max(segment_max, n + correlation_base_);
            }
        }
        events_.push_back(std::move(e));
        ++last_segment_;
    }
    correlation_base_ = segment_max;
    // After trace_end: the device has finished all it was given, so no traced work lies after this.
    paused_at_s_ = now();
}

void TraceWindows::resume() {
    if (!started_ || running_ || failed_) return;
    std::string why;
    if (!device_.trace_begin(why)) {
        // It traced a moment ago; if it now refuses, the trace ends here and says so.
        failed_ = true;
        const double at = now();
        add_range("tracing stopped: " + why, "marker", at, at);
        return;
    }
    segment_offset_s_ = now();  // as in begin(): the device's segment counts from here
    running_ = true;
    // Stopped and started again with no range saying why: the stretch is lab's, not idle time.
    // It starts where lab's track is free: a workload's window, closed just after the pause, ends
    // a few µs past it, and a track's slices must nest or follow, never half-overlap.
    const double from = std::max(paused_at_s_, lab_track_end_s_);
    if (untraced_until_s_ < paused_at_s_ && segment_offset_s_ > from)
        add_range("tracer stopped (not traced)", "untraced", from, segment_offset_s_,
                  {{"note", "lab stopped the device's tracer and started it again: between a window's first invocation and the "
                            "rest, or after a window for lab's own measuring (hardware counters)"}});
}

void TraceWindows::name_device_events_from(std::size_t first, const std::string& owner) {
    for (std::size_t i = first; i < events_.size(); ++i) {
        TraceEvent& e = events_[i];
        if (e.host || e.name == owner) continue;
        e.args.emplace("kernel", e.name);
        e.name = owner;
    }
}

void TraceWindows::add_range(const std::string& name, const std::string& category, double start_s, double end_s,
                             std::map<std::string, std::string> args) {
    TraceEvent e;
    e.name = name;
    e.category = category;
    e.start_s = start_s;
    e.duration_s = std::max(0.0, end_s - start_s);
    e.track = kLabTrack;
    e.host = true;
    e.args = std::move(args);
    if (category == "untraced") untraced_until_s_ = std::max(untraced_until_s_, end_s);
    lab_track_end_s_ = std::max(lab_track_end_s_, start_s + e.duration_s);
    events_.push_back(std::move(e));
}

std::vector<TraceEvent> TraceWindows::finish() {
    pause();
    std::stable_sort(events_.begin(), events_.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_s < b.start_s; });
    if (dropped_ > 0) {
        TraceEvent d;
        d.name = "dropped " + std::to_string(dropped_) + " events";
        d.category = "marker";
        for (const auto& e : events_) d.start_s = std::max(d.start_s, e.start_s + e.duration_s);
        d.args["dropped"] = std::to_string(dropped_);
        events_.push_back(std::move(d));
    }
    started_ = false;
    return std::move(events_);
}

}  // namespace lab
