// The ceilings cache: `lab calibrate` writes the measured ceilings of a device (per device and
// thread count) under $XDG_CACHE_HOME/lab/ceilings/, and `lab run` reads them instead of
// measuring again. A corrupt or foreign cache file is ignored (and re-measured), never trusted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lab/device.hpp"

namespace lab {

// One file per device identity, thread count and quality (quick calibrations apart).
std::filesystem::path ceilings_cache_file(DeviceKind kind, const DeviceFacts& facts, int threads, bool quick);

// nullopt when missing, unreadable, or not for this device; `problem` says why when it exists
// but was refused. Refused too: a file, or a cache folder, another user owns (a shared /tmp would
// let them plant ceilings). Refused too: a ceiling that is not positive, or beyond belief (above any
// device, or above the `kind` device's paper peak from configs by more than the grader allows).
std::optional<Ceilings> load_cached_ceilings(const std::filesystem::path& file, const DeviceFacts& facts,
                                             std::string* problem = nullptr, DeviceKind kind = DeviceKind::cpu);

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

// Throws InputError when the file cannot be written.
void store_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& ceilings);

// store_ceilings for a run or a calibration that has its ceilings either way: a cache that cannot
// be written (a read-only HOME, HOME=/ under a container's random UID, a folder another user
// owns) is no reason to throw the measurements away. "" when stored, else a note saying they were
// not cached, why, and how to give the cache a writable home.
std::string cache_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& ceilings);

// What a run hands the cache when it found its starting ceilings stale: the ceilings it ends
// with, except that a raise is kept only where a ceiling kernel's re-measure earned trust (met
// its noise target, the machine quiet: distrust_reason); a noisy or loaded re-measure, and a
// workload's own rate, fall back to the starting value. What is kept says which lesson's run it
// was and when (`at`, ISO 8601), so a later run or `lab device` does not read "in this run".
struct CacheUpdate {
    Ceilings ceilings;
    std::vector<std::string> kept;      // "bandwidth.copy 20 GB/s"
    std::vector<std::string> left_out;  // "bandwidth.update 76.3 GB/s (its samples missed the noise target (spread 36%))"
};
CacheUpdate ceilings_for_cache(const Ceilings& start, const Ceilings& run_end, const std::string& lesson_id, const std::string& at);

}  // namespace lab
