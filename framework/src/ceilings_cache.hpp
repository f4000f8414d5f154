// The ceilings cache: `lab calibrate` writes the measured ceilings of a device (per device and
// thread count) under $XDG_CACHE_HOME/lab/ceilings/, and `lab run` reads them instead of
// measuring again. A corrupt or foreign cache file is ignored (and re-measured), never trusted.
#pragma once

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

void store_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& ceilings);

}  // namespace lab
