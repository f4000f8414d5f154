// The ceilings cache: `lab calibrate` writes the measured ceilings of a device (per device and
// thread count) under $XDG_CACHE_HOME/lab/ceilings/, and `lab run` reads them instead of
// measuring again. A corrupt or foreign cache file is ignored (and re-measured), never trusted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "lab/device.hpp"

namespace lab {

// One file per device identity, thread count and quality (quick calibrations apart).
std::filesystem::path ceilings_cache_file(DeviceKind kind, const DeviceFacts& facts, int threads, bool quick);

// nullopt when missing, unreadable, or not for this device; `problem` says why when it exists
// but was refused.
std::optional<Ceilings> load_cached_ceilings(const std::filesystem::path& file, const DeviceFacts& facts,
                                             std::string* problem = nullptr);

// Cached ceilings found without opening a device, for calculators such as `lab model` that
// never calibrate and never initialise CUDA.
struct CachedCeilings {
    std::filesystem::path file;
    DeviceKind kind = DeviceKind::cpu;
    std::string device_name;          // as the device reported it when calibrated
    std::uint64_t memory_bytes = 0;
    bool quick = false;
    Ceilings ceilings;
};

// The sound cache entry in `dir` (ceilings_cache_file's folder) of a device this machine has: a
// GPU's before the CPU's (as --device auto), a full calibration before a quick one, then the most
// threads, then the most recent. A device counts as present when its name is this machine's CPU
// model name (/proc/cpuinfo) or a GPU model the NVIDIA driver lists
// (/proc/driver/nvidia/gpus/*/information); the rest of its identity needs the device opened and
// is not checked. nullopt when there is none.
std::optional<CachedCeilings> find_cached_ceilings_here(const std::filesystem::path& dir);

void store_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& ceilings);

// A run's ceilings as the cache keeps them: what the run re-measured or raised says which lesson's
// run it was and when (`at`, ISO 8601), so a later run or `lab device` does not read "in this run".
Ceilings provenance_for_cache(Ceilings ceilings, const std::string& lesson_id, const std::string& at);

}  // namespace lab
