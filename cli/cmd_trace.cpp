// `lab trace TRACE.json[.gz]`: what a profiler trace says (framework/src/trace_summary.hpp reads
// Kineto's and lab's own): kernels by total time, copies by direction, syncs, how much of the
// span the GPU was busy, launch latency, and per hardware-counter range the FLOP its instruction
// counts imply (with AI and the roofline position where the counters hold DRAM bytes and a device
// is given). The --json keys are a contract (docs/trace.md): keys are added, never renamed, and
// their numbers stay raw (µs, bytes); the text (trace_text.cpp) writes them with units. Kernel
// names: shortened in the table, whole in JSON.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "device_choice.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "trace_summary.hpp"
#include "trace_text.hpp"

namespace lab::cli {

namespace {

using json = nlohmann::json;
const char* kUsage = "lab trace TRACE.json[.gz] [--device-spec NAME] [--top N] [--json]";

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json ratio(double a, double b) { return b > 0 ? json(a / b) : json(nullptr); }
json latency(const trace::LatencyStats& l) { return {{"count", l.count}, {"median_us", opt(l.median_us)}, {"p90_us", opt(l.p90_us)}}; }
json share(const trace::HostShare& h) { return {{"name", h.name}, {"count", h.count}, {"overlap_us", h.overlap_us}}; }

json gap(const trace::IdleGap& g) {
    json calls = json::array();
    for (const auto& c : g.host_calls) calls.push_back(share(c));
    return {{"start_ts_us", g.start_ts_us}, {"offset_us", g.offset_us}, {"dur_us", g.dur_us},
            {"after", {{"name", g.after}, {"short_name", g.after_short}}},
            {"before", {{"name", g.before}, {"short_name", g.before_short}}},
            {"host_op", g.host_op ? share(*g.host_op) : json(nullptr)}, {"host_calls", calls},
            {"next_to_copy", g.next_to_copy}, {"next_to_sync", g.next_to_sync}};
}

// The timeline keys: busy time per stream, the largest idle gaps (and a lab trace's per workload
// window), the launch latency split.
void timeline(const trace::Summary& s, json& out) {
    json streams = json::array();
    for (const auto& st : s.streams)
        streams.push_back({{"stream", st.stream}, {"busy_us", st.busy_us}, {"kernels", st.kernels}, {"copies", st.copies}, {"memsets", st.memsets}});
    out["streams"] = streams;
    json gaps = json::array();
    for (const auto& g : s.idle_gaps) gaps.push_back(gap(g));
    out["idle_gaps"] = gaps;
    json windows = json::array();
    for (const auto& w : s.windows) {
        json own = json::array();
        for (const auto& g : w.idle_gaps) {
            json j = gap(g);
            j["window_offset_us"] = g.window_offset_us;
            own.push_back(j);
        }
        windows.push_back({{"name", w.name}, {"start_ts_us", w.start_ts_us}, {"offset_us", w.offset_us}, {"dur_us", w.dur_us},
                           {"kernels", w.kernels}, {"copies", w.copies}, {"memsets", w.memsets}, {"syncs", w.syncs},
                           {"sync_host_us", w.sync_host_us}, {"gaps", w.gaps}, {"idle_us", w.idle_us}, {"idle_gaps", own}});
    }
    out["windows"] = windows;
    out["launch_latency_idle"] = latency(s.launch_idle);
    out["launch_latency_queued"] = latency(s.launch_queued);
}

json to_json(const trace::Summary& s, std::size_t top, const std::optional<DeviceChoice>& dev) {
    json kernels = json::array();
    for (std::size_t i = 0; i < s.kernels.size() && i < top; ++i) {
        const auto& k = s.kernels[i];
        kernels.push_back({{"name", k.name}, {"short_name", k.short_name}, {"count", k.count}, {"total_us", k.total_us},
                           {"mean_us", k.total_us / double(k.count)}, {"busy_fraction", ratio(k.total_us, s.gpu_busy_us)}});
    }
    json by_kind = json::object();
    for (const auto& [kind, c] : s.memcpy_by_kind)
        by_kind[kind] = {{"count", c.count},     {"bytes", c.bytes},     {"total_us", c.total_us}, {"bytes_per_s", ratio(c.bytes, c.total_us * 1e-6)},
                         {"pageable", c.pageable}, {"pinned", c.pinned}};
    json ranges = json::array();
    for (const auto& r : s.counter_ranges) {
        const double flop = r.flop_fp32 + r.flop_fp64 + r.flop_fp16;
        // No rate over a duration the trace made up (Summary::counter_durations_measured).
        const bool timed = s.counter_durations_measured && r.dur_us > 0;
        json j = {{"name", r.name}, {"dur_us", r.dur_us}, {"flop", flop}, {"flop_fp32", r.flop_fp32}, {"flop_fp64", r.flop_fp64},
                  {"flop_fp16", r.flop_fp16}, {"flop_per_s", timed ? json(flop / (r.dur_us * 1e-6)) : json(nullptr)},
                  {"dram_bytes", r.dram_bytes ? json(*r.dram_bytes) : json(nullptr)}};
        if (r.dram_bytes && *r.dram_bytes > 0) {
            j["ai"] = flop / *r.dram_bytes;
            if (dev && dev->bandwidth > 0 && dev->flops_per_s.count("fp32.simt") && timed) {
                const double roof = std::min(dev->flops_per_s.at("fp32.simt"), flop / *r.dram_bytes * dev->bandwidth);
                j["roof_flop_per_s"] = roof, j["roof_fraction"] = flop / (r.dur_us * 1e-6) / roof;
            }
        }
        ranges.push_back(j);
    }
    // lab's own re-measuring of the ceilings (calibrate.*), in a lab trace: part of the busy time,
    // not the lesson's work.
    double calibrate_us = 0;
    if (s.format == "lab")
        for (const auto& k : s.kernels)
            if (k.name.rfind("calibrate.", 0) == 0) calibrate_us += k.total_us;
    json out = {{"format", s.format},
                {"device", {{"name", s.device_name.empty() ? json(nullptr) : json(s.device_name)}, {"sms", s.sms ? json(*s.sms) : json(nullptr)}}},
                {"events", s.events},
                {"events_left_out", {{"count", s.events_left_out}, {"first", s.first_left_out}}},
                {"unclosed_array", s.unclosed_array},
                {"span_us", s.span_us},
                {"untraced_us", s.untraced_us},
                {"setup_us", s.setup_us},
                {"setup_names", s.setup_names},
                {"kernels", {{"count", s.kernel_count}, {"total_us", s.kernel_total_us}, {"distinct", s.kernels.size()}, {"top", kernels},
                             {"calibrate_us", calibrate_us}}},
                {"memcpy", {{"count", s.memcpy.count}, {"bytes", s.memcpy.bytes}, {"total_us", s.memcpy.total_us},
                            {"bytes_per_s", ratio(s.memcpy.bytes, s.memcpy.total_us * 1e-6)}, {"by_kind", by_kind}}},
                {"memset", {{"count", s.memset_count}}},
                {"syncs", {{"count", s.sync_count}, {"by_kind", s.syncs_by_kind}, {"us_by_kind", s.sync_us_by_kind}, {"host_us", s.sync_host_us},
                           {"host_setup_us", s.sync_host_setup_us},
                           {"in_span", {{"count", s.sync_in_span_count}, {"host_us", s.sync_in_span_host_us}}},
                           {"calls", {{"count", s.sync_call_count}, {"host_us", s.sync_call_host_us}, {"by_name", s.sync_calls_by_name}}}}},
                {"gpu_busy_us", s.gpu_busy_us},
                {"gpu_idle_us", s.gpu_idle_us()},
                {"idle_fraction", s.has_device_events() ? json(s.idle_fraction()) : json(nullptr)},
                {"launch_latency_us", s.launch_latency_us ? json(*s.launch_latency_us) : json(nullptr)},
                {"launches_matched", s.launches_matched},
                {"launch_calls", s.launch_call_count},
                {"launches_left_out_calibrate", s.launches_left_out},
                {"counter_ranges", ranges},
                {"counter_durations_measured", s.counter_durations_measured}};
    timeline(s, out);
    if (dev) out["device_spec"] = {{"name", dev->name}, {"source", dev->source}};
    return out;
}

}  // namespace

int cmd_trace(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("trace", po::value<std::string>()->required(), "a Kineto (PyTorch profiler) or lab trace, .json or .json.gz")(
        "device-spec", po::value<std::string>(), "a datasheet spec (configs/devices) for the roofline position of counter ranges")(
        "top", po::value<long long>()->default_value(20), "how many kernels to list")("json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("trace", 1);
    po::variables_map vm;
    if (!parse("trace", kUsage, args, opts, pos, vm)) return 0;
    std::optional<DeviceChoice> dev;
    if (vm.count("device-spec")) {
        std::string why;
        dev = choose_device(vm["device-spec"].as<std::string>(), why);
    }
    std::string file = vm["trace"].as<std::string>();
    // A bare name the lessons mention ("read l40s_idle_query_gpu.csv with lab smi") is the shipped file.
    if (std::error_code ec; !std::filesystem::exists(file, ec))
        if (const auto shipped = paths::shipped_file(file); !shipped.empty()) file = shipped.string();
    // Read as a signed number: boost reads "-5" as an unsigned one wrapped round (every kernel
    // listed), so a negative count must get here to be refused.
    const long long top = vm["top"].as<long long>();
    if (top < 1)
        throw UsageError(fmt::format("--top {} is not a number of kernels to list\n  fix: give a whole number of 1 or more (--top 20 is the default)", top));
    const trace::Summary summary = trace::read(file);
    // Valid JSON with a traceEvents list, but nothing in it lab reads: every figure would be a
    // zero that looks measured.
    if (summary.events == 0 && summary.events_left_out == 0)
        std::cerr << "warning: " << file << " holds no complete events (ph \"X\": kernels, copies, runtime calls), so every figure below is "
                     "zero\n  fix: pass a profiler trace of a program that ran (PyTorch profiler, `lab run --trace`)\n";
    const json out = to_json(summary, static_cast<std::size_t>(top), dev);
    if (vm.count("json")) std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // an input's stray non-UTF-8 byte as U+FFFD, not a crash
    else print_trace(std::cout, out, file);
    return 0;
}

}  // namespace lab::cli
