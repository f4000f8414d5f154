// The device a host-side calculator (`lab model`, `lab checkpoint`) quotes its bounds for: the
// datasheet spec named by --device-spec (configs/devices/), else the ceilings `lab calibrate`
// cached for a device this machine has. Neither command ever measures or calibrates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace lab::cli {

struct DeviceChoice {
    std::string name;
    std::string source;                          // "datasheet configs/devices/a100_40gb.yaml", "ceilings cached by lab calibrate: FILE"
    double bandwidth = 0;                        // peak DRAM bandwidth, B/s
    bool bandwidth_trusted = true;               // false: a cached ceiling measured under load or noisy
    std::uint64_t memory_bytes = 0;
    std::map<std::string, double> flops_per_s;   // "fp16.tensor", ... (dense)
};

// `device_spec` non-empty: that spec (case and '-' vs '_' do not matter), else lab::UsageError
// "unknown --device-spec" listing the specs. Empty: this machine's cached ceilings,
// else nullopt with `why_none` saying how to get a device.
std::optional<DeviceChoice> choose_device(const std::string& device_spec, std::string& why_none);

}  // namespace lab::cli
