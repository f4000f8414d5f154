// Chrome trace JSON from a device's TraceEvents (see chrome_trace.hpp). The layout follows what
// the PyTorch profiler (Kineto) writes, so a student who has read one can read the other: device
// work in one process with a thread per stream, host calls in another, and flow arrows from each
// host launch to the device work it caused.
#include "chrome_trace.hpp"

#include "trace_windows.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

namespace lab {

namespace {

// Not 0: Perfetto takes pid 0 for the kernel's swapper (idle) process and treats its tracks
// apart. Host above device, as the sort indices below say too.
constexpr int kHostPid = 1;
constexpr int kDevicePid = 2;
// lab's own re-measures of the ceilings during a run (calibrate.read, calibrate.fma...): most of
// a quick run's kernels, in a process of their own so the lesson's work reads on its own tracks.
constexpr int kCalibrationPid = 3;

bool calibration(const TraceEvent& e) { return !e.host && e.name.rfind("calibrate.", 0) == 0; }
int pid_of(const TraceEvent& e) { return e.host ? kHostPid : calibration(e) ? kCalibrationPid : kDevicePid; }

// Seconds to microseconds, rounded to whole nanoseconds first: the devices time in ns, and
// going through an integer count of ns makes 1.5e-6 s come out as exactly 1.5 µs rather than
// 1.4999999999999998, so a trace compares equal to the figures a table printed.
double to_us(double seconds) { return std::llround(seconds * 1e9) / 1000.0; }

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
    return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

// An arg as Kineto writes it: a whole number (a correlation, also as a flow ID; bytes; a count)
// as an integer, anything else as the text it is (the trace format accepts either).
nlohmann::json integer_or_text(const std::string& text) {
    std::uint64_t n = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec == std::errc() && p == end && !text.empty() && (text.size() == 1 || text[0] != '0')) return n;
    return text;
}

}  // namespace

nlohmann::json chrome_trace(const std::vector<TraceEvent>& events, const TraceMetadata& meta) {
    nlohmann::json out = nlohmann::json::array();

    // Process and thread names first: viewers label tracks from them whatever their position,
    // but a reader scanning the file finds them at the top.
    out.push_back(metadata("process_name", kHostPid, 0, "host"));
    out.push_back(metadata("process_name", kDevicePid, 0, meta.device_name.empty() ? "device" : meta.device_name));
    // Host above device, as in Kineto's traces.
    out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kHostPid}, {"tid", 0}, {"args", {{"sort_index", 0}}}});
    out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kDevicePid}, {"tid", 0}, {"args", {{"sort_index", 1}}}});
    std::set<int> host_tracks, device_tracks, calibration_tracks;
    for (const auto& e : events) (e.host ? host_tracks : calibration(e) ? calibration_tracks : device_tracks).insert(e.track);
    if (!calibration_tracks.empty()) {
        out.push_back(metadata("process_name", kCalibrationPid, 0, "lab's ceiling re-measures (calibrate.*), on the same device"));
        out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kCalibrationPid}, {"tid", 0}, {"args", {{"sort_index", 2}}}});
        for (int t : calibration_tracks) out.push_back(metadata("thread_name", kCalibrationPid, t, "stream " + std::to_string(t)));
    }
    for (int t : host_tracks)
        out.push_back(metadata("thread_name", kHostPid, t,
                               t == kLabTrack ? "lab: workloads, and what was not traced"
                                              : "host thread " + std::to_string(t) + ": launches, copies, syncs"));
    for (int t : device_tracks) out.push_back(metadata("thread_name", kDevicePid, t, "stream " + std::to_string(t)));

    // Sorting by start keeps the file readable and lets a streaming reader assume order; stable,
    // so events that start together keep the device's order.
    std::vector<const TraceEvent*> sorted;
    sorted.reserve(events.size());
    for (const auto& e : events) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const TraceEvent* a, const TraceEvent* b) { return a->start_s < b->start_s; });

    nlohmann::json timed = nlohmann::json::array();
    // A launch is linked to the first device event carrying its correlation (a launch causes one
    // kernel, copy or memset); a correlation seen on one side only draws no arrow.
    std::map<std::string, const TraceEvent*> launch_of, work_of;
    for (const TraceEvent* e : sorted) {
        nlohmann::json args = nlohmann::json::object();
        // A whole number (a correlation, bytes, a sample count) is written as one, as Kineto does:
        // a viewer sums and sorts numbers, not strings. Anything else stays text.
        for (const auto& [k, v] : e->args) args[k] = integer_or_text(v);
        timed.push_back({{"ph", "X"},
                         {"cat", e->category},
                         {"name", e->name},
                         {"pid", pid_of(*e)},
                         {"tid", e->track},
                         {"ts", to_us(e->start_s)},
                         {"dur", to_us(std::max(0.0, e->duration_s))},
                         {"args", std::move(args)}});
        auto c = e->args.find("correlation");
        if (c != e->args.end()) (e->host ? launch_of : work_of).emplace(c->second, e);
    }
    for (const auto& [correlation, launch] : launch_of) {
        auto w = work_of.find(correlation);
        if (w == work_of.end()) continue;
        const TraceEvent* work = w->second;
        nlohmann::json id = integer_or_text(correlation);
        timed.push_back({{"ph", "s"}, {"cat", "launch"}, {"name", "launch"}, {"id", id},
                         {"pid", kHostPid}, {"tid", launch->track}, {"ts", to_us(launch->start_s)}});
        // "bp": "e" binds the arrow's head to the slice enclosing it (the kernel), not the next one.
        timed.push_back({{"ph", "f"}, {"bp", "e"}, {"cat", "launch"}, {"name", "launch"}, {"id", id},
                         {"pid", pid_of(*work)}, {"tid", work->track}, {"ts", to_us(work->start_s)}});
    }
    // Flow ends interleave with the slices they belong to; a stable sort keeps each flow event
    // after the slice it starts or ends in when both share a timestamp.
    std::vector<nlohmann::json> ordered(timed.begin(), timed.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a["ts"].get<double>() < b["ts"].get<double>();
    });
    for (auto& j : ordered) out.push_back(std::move(j));

    return {{"traceEvents", std::move(out)},
            // chrome://tracing's default, said outright: "ns" showed a 1.15 s kernel as
            // 1,148,203,082 ns. Perfetto ignores it.
            {"displayTimeUnit", "ms"},
            {"otherData",
             {{"device", meta.device_name}, {"kind", meta.device_kind}, {"lesson", meta.lesson}, {"dropped", meta.dropped}}}};
}

}  // namespace lab
