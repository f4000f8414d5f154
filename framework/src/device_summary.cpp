// Device specs beside measurements (see device_summary.hpp).
#include "device_summary.hpp"

#include <fmt/format.h>

#include "device_specs.hpp"
#include "paths.hpp"

namespace lab {

namespace {

nlohmann::json cpu_theoretical(const DeviceFacts& f, const Ceilings& c) {
    int lanes32 = f.simd == "avx512" ? 16 : f.simd == "avx2" ? 8 : 1;
    int fma = f.simd == "scalar" ? 1 : kAssumedFmaUnitsPerCore;
    double hz = c.clock_hz.value;
    double per_core32 = hz * lanes32 * 2.0 * fma;
    nlohmann::json spec;
    spec["kind"] = "theoretical";
    spec["name"] = f.name;
    spec["basis"] = fmt::format(
        "measured clock {:.3g} GHz x {} cores x {} fp32 lanes ({}) x 2 FLOP per FMA x {} FMA units per core "
        "(assumed); fp64 has half the lanes. Not a datasheet figure.",
        hz / 1e9, f.compute_units, lanes32, f.simd, fma);
    spec["flops_per_s"] = {{"fp32.simt", per_core32 * f.compute_units},
                           {"fp64.simt", per_core32 / 2 * f.compute_units}};
    spec["bandwidth_bytes_per_s"] = nullptr;
    spec["bandwidth_note"] = "unknown: the memory configuration is not visible from here";
    return spec;
}

}  // namespace

nlohmann::json device_spec_json(DeviceKind kind, const DeviceFacts& facts, const Ceilings& ceilings) {
    if (kind == DeviceKind::cpu) return cpu_theoretical(facts, ceilings);
    auto specs = load_device_specs(paths::config_dir() / "devices");
    if (auto s = match_device_spec(specs, facts.name, facts.memory_bytes)) {
        auto j = to_json(*s);
        j["kind"] = "datasheet";
        return j;
    }
    return {{"kind", "none"},
            {"note", "no datasheet in configs/devices matches '" + facts.name +
                         "': the measured ceilings are all there is"}};
}

}  // namespace lab
