// Console output (see console.hpp).
#include "console.hpp"

#include <fmt/format.h>

#include "format.hpp"
#include "run_table.hpp"

namespace lab::cli {

namespace {
// Figures as every other lab output writes them (format::quantity).
std::string si(double v, const std::string& unit) { return format::quantity(v, unit); }
}  // namespace

void print_device(std::ostream& out, DeviceKind kind, const DeviceFacts& f) {
    out << fmt::format("device    {}: {}\n", to_string(kind), f.name);
    std::string caches;
    for (const auto& c : f.caches) {
        if (c.type == "Instruction") continue;
        caches += fmt::format("{}L{} {} KiB{}", caches.empty() ? "" : ", ", c.level, c.bytes >> 10,
                              c.shared_by > 1 ? fmt::format(" (shared by {})", c.shared_by) : std::string());
    }
    out << fmt::format("          {} cores, {} threads used, {} kernels; {}; memory {:.1f} GiB\n", f.compute_units,
                       f.threads, f.simd.empty() ? "-" : f.simd, caches,
                       static_cast<double>(f.memory_bytes) / (1ull << 30));
    if (auto v = f.extra.find("virtualised"); v != f.extra.end()) out << "          virtualised: " << v->second << "\n";
    if (auto b = f.extra.find("blas"); b != f.extra.end()) out << "          BLAS: " << b->second << "\n";
}

void print_ceilings(std::ostream& out, const Ceilings& c) {
    out << fmt::format("ceilings  clock {}   launch {}{}{}{}\n", si(c.clock_hz.value, "Hz"), format::duration(c.launch_s.value),
                       c.launch_graph_s.value > 0 ? "   graph launch " + format::duration(c.launch_graph_s.value) + " per kernel" : "",
                       c.threads > 1 ? fmt::format("   ({} threads)", c.threads) : "", c.quick ? "   (quick calibration)" : "");
    // Where a ceiling's value comes from, when it is not a trusted calibration.
    auto status = [](const Ceiling& v) -> std::string {
        const std::string why = ceiling_status(v);
        return why.empty() ? "" : "[" + why + "] ";
    };
    for (const auto& [k, v] : c.flops_per_s)
        out << fmt::format("          {:<12} {:>14}   {}{}\n", k, si(v.value, v.unit.empty() ? "FLOP/s" : v.unit), status(v),
                           v.method);
    for (const auto& [k, v] : c.bandwidth_bytes_per_s)
        out << fmt::format("          {:<12} {:>14}   {}{}\n", "bw." + k, si(v.value, "B/s"), status(v), v.method);
    for (const auto& [k, why] : c.skipped) out << fmt::format("          {:<12} {:>14}   {}\n", k, "not measured", why);
    if (!c.clock_hz.measured_at.empty()) out << "          measured " << c.clock_hz.measured_at << "\n";
}

void print_spec(std::ostream& out, const nlohmann::json& spec) {
    std::string kind = spec.value("kind", "none");
    if (kind == "none") {
        out << "spec      " << spec.value("note", "none") << "\n";
        return;
    }
    out << "spec      " << kind << ": ";
    bool first = true;
    const nlohmann::json flops = spec.value("flops_per_s", nlohmann::json::object());
    for (const auto& [k, v] : flops.items()) {
        out << (first ? "" : ", ") << k << " " << si(v.get<double>(), "FLOP/s");
        first = false;
    }
    if (spec.contains("bandwidth_bytes_per_s") && spec["bandwidth_bytes_per_s"].is_number())
        out << ", DRAM " << si(spec["bandwidth_bytes_per_s"].get<double>(), "B/s");
    out << "\n";
    if (spec.contains("basis")) out << "          " << spec["basis"].get<std::string>() << "\n";
}

void print_workloads(std::ostream& out, const RawRun& run, const Derivation& d,
                     const std::set<std::string>& withheld) {
    out << fmt::format("{:<18} {:<22} {:>11} {:>7} {:>10} {:>10} {:>13} {:>12} {:>9} {:>7}  {}\n", "workload",
                       "params", "time", "noise", "FLOP", "bytes", "FLOP/s", "B/s", "AI", "roof", "regime");
    for (const WorkloadRow& r : workload_rows(run, d, withheld)) {
        out << fmt::format("{:<18} {:<22} {:>11} {:>7} {:>10} {:>10}", r.name, r.params, r.time, r.noise + (r.noise_met ? "" : "*"),
                           r.flops, r.bytes);
        if (r.regime)
            out << fmt::format(" {:>13} {:>12} {:>9} {:>7}  {}", r.flops_per_s->text, r.bytes_per_s->text, r.ai->text,
                               r.roof_fraction->text, r.regime->text);
        out << "\n";
    }
    out << "(time: median per invocation; noise: relative stddev, * = noise target not met within the time limit)\n";
}

}  // namespace lab::cli
