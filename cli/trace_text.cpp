// `lab trace`'s text (see trace_text.hpp). Every line stays within the terminal's width (in a
// file, 100 columns; never under 64): long names are cut, never wrapped (a gap's list of calls
// goes on to a next line between two calls), and the JSON keeps them whole.
#include "trace_text.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "console.hpp"
#include "format.hpp"
#include "kernel_names.hpp"
#include "trace_summary.hpp"

namespace lab::cli {

namespace {

using json = nlohmann::json;

// Workload windows the text lists (calibrate.* ones aside); --json has them all.
constexpr std::size_t kTextWindows = 10;

std::string us(double v) { return format::duration(v * 1e-6); }
std::string us(const json& v) { return v.is_null() ? "-" : us(v.get<double>()); }
std::uint64_t count(const json& v) { return v.get<std::uint64_t>(); }
std::string plural(std::uint64_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }
std::string cut(const std::string& s, std::size_t width) { return s.size() <= width ? s : s.substr(0, width - 3) + "..."; }

// The columns the text may use: the terminal's, or 100 in a file; under 64 the fixed-width rows
// (launch latency's) would fold anyway, so names are not cut shorter than that leaves them.
std::size_t text_width() {
    const int terminal = terminal_columns();
    return std::max<std::size_t>(64, terminal > 0 ? static_cast<std::size_t>(terminal) : 100);
}

// Prose, folded to the width under a hanging indent (wrap_hanging).
std::string fold(const std::string& text, std::size_t indent) { return wrap_hanging(text, indent, static_cast<int>(text_width())); }

// Columns a UTF-8 string takes ("µs" is 3 bytes, 2 columns): continuation bytes take none.
std::size_t columns(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A table row and the remark that explains it: beside it where the width allows, else on the
// next line under the row's values.
std::string row_with_remark(const std::string& row, const std::string& remark, std::size_t indent) {
    if (remark.empty()) return row + "\n";
    if (columns(row) + 2 + columns(remark) <= text_width()) return row + "  " + remark + "\n";
    return row + "\n" + fold(std::string(indent, ' ') + remark, indent) + "\n";
}

// lab's traces are often of a CPU device, which a reader would not take for a GPU.
std::string device_word(const json& j) { return j["format"] == "lab" ? "device" : "GPU"; }

void span(std::ostream& o, const json& j) {
    if (j["gpu_busy_us"].get<double>() <= 0) {
        o << "\n\nno kernel, copy or memset in this trace: no " << device_word(j) << " timeline to measure idle time on\n";
        return;
    }
    o << fmt::format("\n\n{} span {}: busy {}, idle {} ({} idle)\n", device_word(j), us(j["span_us"]), us(j["gpu_busy_us"]), us(j["gpu_idle_us"]),
                     format::percent(j["idle_fraction"].get<double>()));
    // What the busy time was spent on: a trace whose "busy" is mostly copies is no kernel story.
    // Sums over events, so streams running at once count twice: said.
    const double calibrate_us = j["kernels"].value("calibrate_us", 0.0);
    if (const double copies = j["memcpy"]["total_us"].get<double>(); copies > 0)
        o << fold(fmt::format("  (busy by kind, summed over events: kernels {}{}, copies {}{})", us(j["kernels"]["total_us"]),
                              calibrate_us > 0 ? fmt::format(" (lab's calibrate.* {})", us(calibrate_us)) : "", us(copies),
                              j["streams"].size() > 1 ? "; streams that ran at once count twice" : ""),
                  3)
          << "\n";
    if (j["untraced_us"].get<double>() > 0)
        o << fold(fmt::format("  (lab measured for {} more without tracing: left out of the span; each workload has a traced window)",
                              us(j["untraced_us"])),
                  3)
          << "\n";
    // Counted as idle, lab's first touch made a quick 02.05 look a third idle: the device was
    // busy, on lab's preparation rather than the lesson's work, and the host was waiting for it.
    if (j["setup_us"].get<double>() > 0) {
        std::string names;
        for (const auto& n : j["setup_names"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
        o << fold(fmt::format("  (lab's own setup on the device, {}: {}; left out of the span: the device was preparing buffers, neither "
                              "running the lesson's work nor idle)",
                              us(j["setup_us"]), cut(names, 40)),
                  3)
          << "\n";
    }
    // One stream: its busy time is the line above.
    if (j["streams"].size() < 2) return;
    for (const auto& s : j["streams"]) {
        std::string what = plural(count(s["kernels"]), "kernel", "kernels");
        if (count(s["copies"])) what += ", " + plural(count(s["copies"]), "copy", "copies");
        if (count(s["memsets"])) what += ", " + plural(count(s["memsets"]), "memset", "memsets");
        o << fmt::format("  stream {:<8} busy {:>9}  {}\n", cut(s["stream"].get<std::string>(), 8), us(s["busy_us"]), what);
    }
}

// The host's calls during a gap, on as many lines as the width needs: none is cut off.
void gap_calls(std::ostream& o, const json& calls, const std::string& pad) {
    std::string line;
    const char* head = "calls  ";
    for (const auto& c : calls) {
        std::string call = cut(c["name"].get<std::string>(), 28) + " " + us(c["overlap_us"]);
        if (count(c["count"]) > 1) call += fmt::format(" ({} calls)", count(c["count"]));
        if (!line.empty() && pad.size() + 7 + columns(line) + 2 + columns(call) > text_width()) {
            o << pad << head << line << ",\n";
            line.clear(), head = "       ";
        }
        line += (line.empty() ? "" : ", ") + call;
    }
    if (!line.empty()) o << pad << head << line << "\n";
}

// One gap: its idle time and offset (`offset_key`), its neighbours, what the host did. In a
// workload's window (`window` its name) the host's op is the window itself, which says nothing
// more, and what made the device wait is said outright when a copy or a sync is next to the gap.
void gap(std::ostream& o, const json& g, const char* offset_key, const std::string& window = "") {
    const std::string pad(25, ' ');  // under "after"
    const double dur = g["dur_us"].get<double>();
    const std::size_t name_w = text_width() - pad.size() - 7;
    o << fmt::format("  {:>8} at +{:<9} after  {}\n", us(dur), us(g[offset_key]), cut(g["after"]["short_name"].get<std::string>(), name_w));
    o << pad << "before " << cut(g["before"]["short_name"].get<std::string>(), name_w) << "\n";
    const double share = g["host_op"].is_null() ? 0 : std::min(1.0, g["host_op"]["overlap_us"].get<double>() / dur);
    if (!window.empty()) {
        const bool copy = g.value("next_to_copy", false), sync = g.value("next_to_sync", false);
        const char* cause = sync && copy ? "a host sync and a copy beside it: the device waited for the host"
                            : sync        ? "a host sync: the device drained, then waited for the host to launch"
                            : copy        ? "a copy beside it"
                                          : nullptr;
        if (cause) {
            // Folded with the label's columns as leading blanks (which fold keeps), then labelled:
            // "cause  " keeps its two spaces, under "calls  " and "host   ".
            const std::string label = pad + "cause  ";
            std::string text = fold(std::string(label.size(), ' ') + cause, label.size());
            o << text.replace(0, label.size(), label) << "\n";
        }
        if (share >= trace::kHostOpMinShare && g["host_op"]["name"] == window) return gap_calls(o, g["host_calls"], pad);
    }
    if (share >= trace::kHostOpMinShare)
        o << pad << fmt::format("host   {} ({} of the gap)\n", cut(g["host_op"]["name"].get<std::string>(), name_w - 16), format::percent(share));
    else
        o << pad << fmt::format("host   no traced op covers {} of the gap\n", format::percent(trace::kHostOpMinShare));
    gap_calls(o, g["host_calls"], pad);
}

bool calibrate_name(const std::string& name) { return name.rfind("calibrate.", 0) == 0; }

// A lab trace's workload windows, each with its own gaps: the whole trace's largest can all lie
// in model loading and between workloads, and leave out the one a lesson's sync or copy makes.
void windows(std::ostream& o, const json& j) {
    if (!j.contains("windows") || j["windows"].empty()) return;
    std::size_t shown = 0, more = 0, calibrate = 0;
    for (const auto& w : j["windows"]) {
        if (calibrate_name(w["name"].get<std::string>())) {
            ++calibrate;
            continue;
        }
        if (shown == kTextWindows) {
            ++more;
            continue;
        }
        if (shown++ == 0) {
            o << "\n" << fold("idle gaps in each workload's traced window, between its own " + device_word(j) + " events: the largest, "
                               "and the largest next to a copy or a sync (at +T: T after the window's start):", 0) << "\n";
        }
        std::string what = plural(count(w["kernels"]), "kernel", "kernels") + ", " + plural(count(w["copies"]), "copy", "copies");
        if (count(w["memsets"])) what += ", " + plural(count(w["memsets"]), "memset", "memsets");
        what += ", " + plural(count(w["syncs"]), "sync", "syncs");
        const std::string idle = count(w["gaps"]) ? fmt::format("idle {} in {}", us(w["idle_us"]), plural(count(w["gaps"]), "gap", "gaps"))
                                                   : std::string("no idle gap");
        o << fold(fmt::format("  {}: {} traced, {}; {}", cut(w["name"].get<std::string>(), 32), us(w["dur_us"]), what, idle), 4) << "\n";
        for (const auto& g : w["idle_gaps"]) gap(o, g, "window_offset_us", w["name"].get<std::string>());
    }
    if (more) o << fmt::format("  ... and {} more: lab trace --json (windows)\n", plural(more, "window", "windows"));
    if (calibrate && shown)
        o << fmt::format("  (and {} of calibrate.*, lab re-measuring the device's ceilings: --json)\n", plural(calibrate, "window", "windows"));
}

void gaps(std::ostream& o, const json& j) {
    if (j["idle_gaps"].empty()) return;
    // With workload windows, the reader is told that this list is not theirs: between workloads,
    // loading the model, lab's own work.
    if (j.contains("windows") && !j["windows"].empty())
        o << "\n" << fold("largest idle gaps in the whole trace, loading and the time between workloads included (no kernel, copy or "
                           "memset on any stream), with what the host was doing:", 0) << "\n";
    else
        o << "\n" << fold("largest idle gaps (no kernel, copy or memset on any stream), with what the host was doing:", 0) << "\n";
    // In a lab trace the span leaves untraced time out but the offsets, to find a gap in a viewer,
    // cannot: a gap "at +10 s" of a 2.5 s span is not an error.
    if (j["untraced_us"].get<double>() > 0 || j["setup_us"].get<double>() > 0)
        o << fold("  (at +T: T after the first " + device_word(j) + " event, on the trace's clock, untraced and setup time included)", 3)
          << "\n";
    for (const auto& g : j["idle_gaps"]) gap(o, g, "offset_us");
}

void launches(std::ostream& o, const json& j) {
    if (j["launch_latency_us"].is_null()) {
        const std::uint64_t calls = j.value("launch_calls", std::uint64_t{0});
        // A trace of launch calls without kernel records lost its kernels (CUPTI's range profiler
        // replaces them with its ranges); the program did launch.
        if (count(j["kernels"]["count"]) == 0 && calls > 0)
            o << "\n" << fold(fmt::format("launch latency: - (the trace has {} but no kernel records to match {} with: the kernels' own records "
                                          "are missing, as when CUPTI's range profiler replaces them)",
                                          plural(calls, "launch call", "launch calls"), calls == 1 ? "it" : "them"),
                              2) << "\n";
        else if (count(j["kernels"]["count"]) == 0)
            o << "\nlaunch latency: - (no kernel in the trace)\n";
        else
            o << "\nlaunch latency: - (no kernel's launch call is in the trace)\n";
        return;
    }
    o << "\n" << fold(fmt::format("launch latency (median of a kernel's start - its launch call's start): {} over {}", us(j["launch_latency_us"]),
                                   plural(count(j["launches_matched"]), "kernel", "kernels")), 2) << "\n";
    if (const auto left = j.value("launches_left_out_calibrate", 0); left > 0)
        o << fold(fmt::format("  (over the lesson's kernels: {} of lab's calibrate.*, re-measuring the ceilings, left out)",
                              plural(left, "launch", "launches")),
                  3)
          << "\n";
    // The median mixes two things a student should not compare: the cost of a launch, and the
    // time a kernel waited for the work queued before it.
    auto row = [&](const char* what, const json& l, const char* means) {
        o << row_with_remark(fmt::format("  {:<19} {:>5}  median {:>8}  p90 {:>8}", what, count(l["count"]), us(l["median_us"]), us(l["p90_us"])),
                             means, 4);
    };
    row("onto an idle stream", j["launch_latency_idle"], "call to start, nothing queued");
    row("behind earlier work", j["launch_latency_queued"], "queue delay: waited for earlier work");
    o << fold("  (onto an idle stream: the stream's earlier work had ended when the launch call began)", 3) << "\n";
    // 02.11's launch overhead is an empty kernel's time per launch, launched back to back without
    // tracing: a reader who set the two side by side compared different measurements.
    o << fold("  (one traced launch's delay from call to start: not `lab run 02.11`'s launch overhead, an empty kernel's time per "
              "launch, launched back to back untraced; the two do not compare)",
              3)
      << "\n";
}

void kernels(std::ostream& o, const json& j) {
    const auto& k = j["kernels"];
    const std::string head = fmt::format("kernels: {} of {}, {} in all", plural(count(k["count"]), "launch", "launches"),
                                         plural(count(k["distinct"]), "kernel", "kernels"), us(k["total_us"]));
    if (k["top"].empty()) {
        o << "\n" << head << "\n";
        return;
    }
    o << "\n" << fold(head + "; busy: share of the " + device_word(j) + "'s busy time", 2) << "\n";
    o << fmt::format("  {:>9} {:>7} {:>9} {:>7}  {}\n", "total", "count", "mean", "busy", "kernel");
    bool calibrate = false;
    for (const auto& t : k["top"]) {
        o << fmt::format("  {:>9} {:>7} {:>9} {:>7}  {}\n", us(t["total_us"]), count(t["count"]), us(t["mean_us"]),
                         t["busy_fraction"].is_null() ? "-" : format::percent(t["busy_fraction"].get<double>()),
                         cut(t["short_name"].get<std::string>(), text_width() - 39));
        calibrate = calibrate || t["name"].get<std::string>().rfind("calibrate.", 0) == 0;
    }
    // They can top a lab trace's table, and a reader of the lesson would take them for its kernels.
    if (calibrate && j["format"] == "lab")
        o << fold("  calibrate.*: lab re-measuring the device's ceilings during the run, not the lesson's work", 4) << "\n";
}

void copies(std::ostream& o, const json& j) {
    const auto& m = j["memcpy"];
    o << fmt::format("\nmemcpy: {}, {} in {}\n", plural(count(m["count"]), "copy", "copies"), format::quantity(m["bytes"].get<double>(), "B"),
                     us(m["total_us"]));
    // Bytes and time per direction; the bandwidth they give is left to the reader (lesson 02.10
    // asks for it: the division is the point, pageable memory far below the link's peak). --json
    // carries bytes_per_s for scripts.
    for (const auto& [kind, c] : m["by_kind"].items()) {
        // Which host memory: pageable copies are staged by the driver and reach a fraction of a
        // pinned copy's bandwidth, so the reader needs it to judge the division.
        const std::uint64_t n = count(c["count"]), pageable = c.value("pageable", std::uint64_t{0}), pinned = c.value("pinned", std::uint64_t{0});
        std::string memory;
        if (pageable == n) memory = n == 1 ? "pageable host memory" : "all pageable host memory";
        else if (pinned == n) memory = n == 1 ? "pinned host memory" : "all pinned host memory";
        else if (pageable + pinned > 0) memory = fmt::format("{} pageable, {} pinned", pageable, pinned);
        o << row_with_remark(fmt::format("  {:<6} {:>5}  {:>9} in {:>9}", kind, n, format::quantity(c["bytes"].get<double>(), "B"), us(c["total_us"])),
                             memory, 4);
    }
    o << fmt::format("memset: {}\n", count(j["memset"]["count"]));
}

void syncs(std::ostream& o, const json& j) {
    const auto& s = j["syncs"];
    // The whole trace's, as the lesson's question counts them; the span, where the idle fraction
    // is measured, can hold fewer.
    std::string scope = "in the whole trace";
    if (s.contains("in_span") && count(s["count"]) > 0) {
        const std::uint64_t in = count(s["in_span"]["count"]);
        scope += in == count(s["count"]) ? fmt::format(", all in the {} span", device_word(j))
                                         : fmt::format(", {} of them in the {} span", in, device_word(j));
    }
    std::string line = fmt::format("syncs: {} {}; the host blocked in them for {}", count(s["count"]), scope, us(s["host_us"]));
    // Most of a lab trace's sync time can be its allocations waiting for their first touch.
    if (s["host_setup_us"].get<double>() > 0) {
        const std::string setup = fmt::format("{} of it while lab's setup ran", us(s["host_setup_us"]));
        line += ", " + setup;
    }
    o << fold(line, 2) << "\n";
    // No sync activity recorded, yet the program called synchronize: the profiler was not asked
    // for CUDA sync events. The calls say what the count cannot.
    if (count(s["count"]) == 0 && s.contains("calls") && count(s["calls"]["count"]) > 0) {
        std::string names;
        for (const auto& [name, n] : s["calls"]["by_name"].items()) names += fmt::format("{}{} {}", names.empty() ? "" : ", ", name, count(n));
        o << fold(fmt::format("  (no CUDA sync activity was recorded, but the host called synchronize {}: {}; {} in them)",
                              plural(count(s["calls"]["count"]), "time", "times"), names, us(s["calls"]["host_us"])),
                  3)
          << "\n";
    }
    for (const auto& [kind, n] : s["by_kind"].items()) {
        const bool device_side = !trace::host_waits(kind);
        o << row_with_remark(fmt::format("  {:<28} {:>5}  {:>9}", cut(kind, 28), count(n), us(s["us_by_kind"][kind])),
                             device_side ? "a stream waits on the device: the host does not" : "", 4);
    }
}

void counters(std::ostream& o, const json& j) {
    if (j["counter_ranges"].empty()) return;
    double f32 = 0, f64 = 0, f16 = 0;
    for (const auto& r : j["counter_ranges"]) f32 += r["flop_fp32"].get<double>(), f64 += r["flop_fp64"].get<double>(), f16 += r["flop_fp16"].get<double>();
    const double all = f32 + f64 + f16;
    std::string text = fmt::format("hardware-counter ranges: {}; FLOP from FMA/add/mul instruction counts (an FMA is 2): {} in all",
                                   j["counter_ranges"].size(), format::quantity(all, "FLOP"));
    // Each precision as a count, not only a share: a 0.7% share of 80 GFLOP is 560 M give or take 40 M.
    auto part = [&](const char* name, double v) {
        return fmt::format("{} {}{}", name, format::quantity(v, "FLOP"), all > 0 ? fmt::format(" ({:.1f}%)", 100 * v / all) : "");
    };
    text += ": " + part("fp32", f32) + ", " + part("fp64", f64) + ", " + part("fp16", f16);
    o << "\n" << fold(text, 2) << "\n";
    // Ranges that count no FLOP at all: tensor-core work, or kernels that only move data. Which
    // kernels they are says which of the two.
    std::map<std::string, int> zero;  // full kernel name -> ranges
    int zeros = 0;
    for (const auto& r : j["counter_ranges"])
        if (r["flop_fp32"].get<double>() + r["flop_fp64"].get<double>() + r["flop_fp16"].get<double>() == 0)
            ++zeros, ++zero[r["name"].get<std::string>()];
    if (zeros > 0) {
        std::vector<std::string> full;
        for (const auto& [name, n] : zero) full.push_back(name);
        const std::vector<std::string> shorts = trace::short_kernel_names(full, 48);
        std::string which;
        for (std::size_t i = 0; i < full.size(); ++i)
            which += (which.empty() ? "" : ", ") + shorts[i] + (zero[full[i]] > 1 ? fmt::format(" x{}", zero[full[i]]) : "");
        o << fold(fmt::format("  no FLOP counted in {} of {} ranges: {}", zeros, j["counter_ranges"].size(), which), 4) << "\n";
    }
    if (!j.value("counter_durations_measured", true))
        o << fold(fmt::format("  no FLOP/s per range: the ranges' durations are not measured (the trace gives each the same {}, back to back: "
                              "the profiler's span divided evenly); time each kernel from a trace without counters",
                              us(j["counter_ranges"][0]["dur_us"])),
                  2)
          << "\n";
    o << "  per range: lab trace --json (counter_ranges)\n";
    o << fold("  tensor-core work does not show in these counters; without DRAM byte counters there is no AI.", 2) << "\n";
}

}  // namespace

void print_trace(std::ostream& o, const json& j, const std::string& file) {
    const std::string head = "trace " + file + " (" + j["format"].get<std::string>() + ")";
    std::string device;
    if (!j["device"]["name"].is_null()) device = "device " + j["device"]["name"].get<std::string>();
    if (!j["device"]["sms"].is_null()) device += fmt::format(", {} SMs", j["device"]["sms"].get<int>());
    // A long path puts the device on a line of its own rather than past the width.
    o << head << (device.empty() ? "" : columns(head) + 3 + columns(device) > text_width() ? "\n" + device : "   " + device);
    // Said first: every figure below is of the events that were read.
    if (const auto left = j["events_left_out"]["count"].get<std::uint64_t>(); left > 0)
        o << "\n"
          << fold(fmt::format("warning: {} left out, whose ts or dur is not a time (or is missing), or whose name is missing (the first: {}); "
                              "the figures below are of the other {}: the trace is damaged, capture it again",
                              plural(left, "event", "events"), j["events_left_out"]["first"].get<std::string>(), j["events"].get<std::uint64_t>()),
                  2);
    if (j["unclosed_array"].get<bool>())
        o << "\n"
          << fold("note: the trace's list of events has no closing ']' (a profiler that stopped before it finished writing?): the events "
                  "before its end are read, any it had not written yet are missing",
                  2);
    span(o, j);
    windows(o, j);
    gaps(o, j);
    launches(o, j);
    kernels(o, j);
    copies(o, j);
    syncs(o, j);
    counters(o, j);
}

}  // namespace lab::cli
