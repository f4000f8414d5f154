// `lab trace TRACE.json[.gz]`: what a profiler trace says (framework/src/trace_summary.hpp reads
// Kineto's and lab's own): kernels by total time, copies by direction, syncs, how much of the
// span the GPU was busy, launch latency, and per hardware-counter range the FLOP its instruction
// counts imply (with AI and the roofline position where the counters hold DRAM bytes and a device
// is given). The --json keys are a contract (docs/trace.md). Kernel names: shortened in the
// table, whole in JSON.
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

namespace lab::cli {

namespace {

using json = nlohmann::json;
const char* kUsage = "lab trace TRACE.json[.gz] [--device-spec NAME] [--top N] [--json]";

json to_json(const trace::Summary& s, std::size_t top, const std::optional<DeviceChoice>& dev) {
    json kernels = json::array();
    for (std::size_t i = 0; i < s.kernels.size() && i < top; ++i) {
        const auto& k = s.kernels[i];
        kernels.push_back({{"name", k.name}, {"count", k.count}, {"total_us", k.total_us}, {"mean_us", k.total_us / double(k.count)}});
    }
    json by_kind = json::object();
    for (const auto& [kind, c] : s.memcpy_by_kind) by_kind[kind] = {{"count", c.count}, {"bytes", c.bytes}, {"total_us", c.total_us}};
    json ranges = json::array();
    for (const auto& r : s.counter_ranges) {
        const double flop = r.flop_fp32 + r.flop_fp64 + r.flop_fp16;
        json j = {{"name", r.name}, {"dur_us", r.dur_us}, {"flop", flop}, {"flop_fp32", r.flop_fp32}, {"flop_fp64", r.flop_fp64},
                  {"flop_fp16", r.flop_fp16}, {"flop_per_s", r.dur_us > 0 ? json(flop / (r.dur_us * 1e-6)) : json(nullptr)},
                  {"dram_bytes", r.dram_bytes ? json(*r.dram_bytes) : json(nullptr)}};
        if (r.dram_bytes && *r.dram_bytes > 0) {
            j["ai"] = flop / *r.dram_bytes;
            if (dev && dev->bandwidth > 0 && dev->flops_per_s.count("fp32.simt") && r.dur_us > 0) {
                const double roof = std::min(dev->flops_per_s.at("fp32.simt"), flop / *r.dram_bytes * dev->bandwidth);
                j["roof_flop_per_s"] = roof, j["roof_fraction"] = flop / (r.dur_us * 1e-6) / roof;
            }
        }
        ranges.push_back(j);
    }
    json out = {{"format", s.format},
                {"device", {{"name", s.device_name.empty() ? json(nullptr) : json(s.device_name)}, {"sms", s.sms ? json(*s.sms) : json(nullptr)}}},
                {"events", s.events},
                {"span_us", s.span_us},
                {"untraced_us", s.untraced_us},
                {"kernels", {{"count", s.kernel_count}, {"total_us", s.kernel_total_us}, {"distinct", s.kernels.size()}, {"top", kernels}}},
                {"memcpy", {{"count", s.memcpy.count}, {"bytes", s.memcpy.bytes}, {"total_us", s.memcpy.total_us}, {"by_kind", by_kind}}},
                {"memset", {{"count", s.memset_count}}},
                {"syncs", {{"count", s.sync_count}, {"by_kind", s.syncs_by_kind}}},
                {"gpu_busy_us", s.gpu_busy_us},
                {"gpu_idle_us", s.gpu_idle_us()},
                {"idle_fraction", s.idle_fraction()},
                {"launch_latency_us", s.launch_latency_us ? json(*s.launch_latency_us) : json(nullptr)},
                {"launches_matched", s.launches_matched},
                {"counter_ranges", ranges}};
    if (dev) out["device_spec"] = {{"name", dev->name}, {"source", dev->source}};
    return out;
}

// "void at::native::(anonymous namespace)::elementwise_kernel<128, 2, ...>(...)" -> its name
// before the template arguments, with the start of them: enough to tell kernels apart.
std::string short_name(const std::string& n, std::size_t width = 60) {
    std::string s = n;
    if (s.rfind("void ", 0) == 0) s = s.substr(5);
    return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

void print(std::ostream& o, const json& j, const std::string& file) {
    o << "trace " << file << " (" << j["format"].get<std::string>() << ")";
    if (!j["device"]["name"].is_null()) o << "   device " << j["device"]["name"].get<std::string>();
    if (!j["device"]["sms"].is_null()) o << ", " << j["device"]["sms"].get<int>() << " SMs";
    if (j["gpu_busy_us"].get<double>() <= 0)
        o << "\n\nno kernel, copy or memset in this trace: no GPU timeline to measure idle time on\n";
    else
        o << fmt::format("\n\nGPU span {:.1f} us: busy {:.1f} us, idle {:.1f} us ({:.1f}% idle)\n", j["span_us"].get<double>(),
                         j["gpu_busy_us"].get<double>(), j["gpu_idle_us"].get<double>(), 100 * j["idle_fraction"].get<double>());
    if (j["untraced_us"].get<double>() > 0)
        o << fmt::format("  (lab measured for {:.1f} us more without tracing: left out of the span; each workload has a traced window)\n",
                         j["untraced_us"].get<double>());
    o << "launch latency (median kernel start - its launch call): "
      << (j["launch_latency_us"].is_null() ? "- (no launch call in the trace)" : fmt::format("{:.1f} us", j["launch_latency_us"].get<double>()))
      << fmt::format(" over {} kernels\n", j["launches_matched"].get<std::uint64_t>());
    const auto& k = j["kernels"];
    o << fmt::format("\nkernels: {} launches of {} kernels, {:.1f} us in all\n", k["count"].get<std::uint64_t>(), k["distinct"].get<std::uint64_t>(),
                     k["total_us"].get<double>());
    o << fmt::format("  {:>10} {:>7} {:>10}  {}\n", "total us", "count", "mean us", "kernel");
    for (const auto& t : k["top"])
        o << fmt::format("  {:>10.1f} {:>7} {:>10.2f}  {}\n", t["total_us"].get<double>(), t["count"].get<std::uint64_t>(), t["mean_us"].get<double>(),
                         short_name(t["name"].get<std::string>()));
    const auto& m = j["memcpy"];
    o << fmt::format("\nmemcpy: {} copies, {:.0f} bytes, {:.1f} us", m["count"].get<std::uint64_t>(), m["bytes"].get<double>(), m["total_us"].get<double>());
    for (const auto& [kind, c] : m["by_kind"].items())
        o << fmt::format("; {} {} ({:.0f} B)", kind, c["count"].get<std::uint64_t>(), c["bytes"].get<double>());
    o << fmt::format("\nmemset: {}   syncs: {}", j["memset"]["count"].get<std::uint64_t>(), j["syncs"]["count"].get<std::uint64_t>());
    for (const auto& [kind, n] : j["syncs"]["by_kind"].items()) o << fmt::format("; {} {}", kind, n.get<std::uint64_t>());
    o << "\n";
    if (!j["counter_ranges"].empty()) {
        double f32 = 0, f64 = 0, f16 = 0;
        for (const auto& r : j["counter_ranges"]) f32 += r["flop_fp32"].get<double>(), f64 += r["flop_fp64"].get<double>(), f16 += r["flop_fp16"].get<double>();
        const double all = f32 + f64 + f16;
        o << fmt::format("\nhardware-counter ranges: {}; FLOP from FMA/add/mul instruction counts (an FMA is 2): {:.3g} in all", j["counter_ranges"].size(), all);
        if (all > 0) o << fmt::format(" (fp32 {:.1f}%, fp64 {:.1f}%, fp16 {:.1f}%)", 100 * f32 / all, 100 * f64 / all, 100 * f16 / all);
        o << "\n  tensor-core work does not show in these counters; without DRAM byte counters there is no AI.\n";
    }
}

}  // namespace

int cmd_trace(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("trace", po::value<std::string>()->required(), "a Kineto (PyTorch profiler) or lab trace, .json or .json.gz")(
        "device-spec", po::value<std::string>(), "a datasheet spec (configs/devices) for the roofline position of counter ranges")(
        "top", po::value<std::size_t>()->default_value(20), "how many kernels to list")("json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("trace", 1);
    po::variables_map vm;
    if (!parse("trace", kUsage, args, opts, pos, vm)) return 0;
    std::optional<DeviceChoice> dev;
    if (vm.count("device-spec")) {
        std::string why;
        dev = choose_device("trace", vm["device-spec"].as<std::string>(), why);
    }
    std::string file = vm["trace"].as<std::string>();
    // A bare name the lessons mention ("read l40s_idle_query_gpu.csv with lab smi") is the shipped file.
    if (std::error_code ec; !std::filesystem::exists(file, ec))
        if (const auto shipped = paths::shipped_file(file); !shipped.empty()) file = shipped.string();
    const json out = to_json(trace::read(file), vm["top"].as<std::size_t>(), dev);
    if (vm.count("json")) std::cout << out.dump(2) << "\n";
    else print(std::cout, out, file);
    return 0;
}

}  // namespace lab::cli
