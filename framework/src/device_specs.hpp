// Datasheet specs of devices (configs/devices/*.yaml): what the vendor says a device can do,
// shown beside what `lab calibrate` measured. Never used as a ceiling in place of a measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lab {

struct DeviceSpec {
    std::string id;                              // file stem: "h200_sxm"
    std::string name;                            // "NVIDIA H200 SXM"
    std::string file;                            // where it was read from
    std::vector<std::string> match;              // case-insensitive ECMAScript regexes on the device name
    std::uint64_t memory_bytes = 0;              // 0 = any size matches
    int sms = 0;
    std::map<std::string, double> flops_per_s;   // "fp32.simt", "bf16.tensor", ... (dense)
    double bandwidth_bytes_per_s = 0;            // DRAM
    std::uint64_t l2_bytes = 0;
    std::string source;                          // where the figures come from
    std::vector<std::string> notes;
};

// Loads every *.yaml in `dir`, sorted by name. Throws lab::InputError naming file and line for
// a malformed file, an unknown key, a missing required key, a negative figure, a bad regex.
std::vector<DeviceSpec> load_device_specs(const std::filesystem::path& dir);

// The spec whose pattern matches `device_name` and whose memory size is within 10% of
// `memory_bytes` (memory 0 in the spec matches any size). Several matches: the first by file name.
std::optional<DeviceSpec> match_device_spec(const std::vector<DeviceSpec>& specs,
                                            const std::string& device_name,
                                            std::uint64_t memory_bytes);

nlohmann::json to_json(const DeviceSpec& spec);

}  // namespace lab
