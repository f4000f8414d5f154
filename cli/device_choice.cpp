// The device of `lab model` and `lab checkpoint` (see device_choice.hpp).
#include "device_choice.hpp"

#include <cctype>

#include "ceilings_cache.hpp"
#include "device_specs.hpp"
#include "errors.hpp"
#include "paths.hpp"

namespace lab::cli {

std::optional<DeviceChoice> choose_device(const std::string& device_spec, std::string& why_none) {
    if (!device_spec.empty()) {
        const auto specs = load_device_specs(paths::config_dir() / "devices");
        std::string want = device_spec, ids;
        for (char& c : want) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const auto& s : specs) {
            ids += (ids.empty() ? "" : ", ") + s.id;
            if (s.id != want) continue;
            DeviceChoice dev;
            dev.name = s.name;
            dev.source = "datasheet " + s.file;
            dev.bandwidth = s.bandwidth_bytes_per_s;
            dev.memory_bytes = s.memory_bytes;
            dev.flops_per_s = s.flops_per_s;
            return dev;
        }
        throw UsageError("unknown --device-spec '" + device_spec + "'\n  fix: use one of " + ids +
                         " (configs/devices/)");
    }
    auto cached = find_cached_ceilings_here(paths::cache_dir() / "ceilings");
    if (!cached) {
        why_none = "no device: give --device-spec NAME (configs/devices/), or run `lab calibrate` once to cache this "
                   "machine's ceilings";
        return std::nullopt;
    }
    DeviceChoice dev;
    dev.name = cached->device_name;
    dev.source = std::string("ceilings cached by lab calibrate") + (cached->quick ? " (--quick)" : "") + ": " +
                 cached->file.string();
    dev.bandwidth = cached->ceilings.peak_bandwidth();
    if (auto best = cached->ceilings.bandwidth_bytes_per_s.find("best"); best != cached->ceilings.bandwidth_bytes_per_s.end())
        dev.bandwidth_trusted = best->second.trusted;
    dev.memory_bytes = cached->memory_bytes;
    for (const auto& [k, c] : cached->ceilings.flops_per_s) dev.flops_per_s[k] = c.value;
    return dev;
}

}  // namespace lab::cli
