// The "spec" beside a device's measured ceilings: for a GPU the datasheet entry matched from
// configs/devices; for a CPU the theoretical peak computed from its measured clock, stated as
// such (no datasheet knows a VM's share of a CPU).
#pragma once

#include <nlohmann/json.hpp>

#include "lab/device.hpp"

namespace lab {

// FMA units per core assumed by the CPU's theoretical peak (every AVX2/AVX-512 server core since
// Haswell and Zen 2 has two; some AVX-512 client parts have one, which the measurement shows).
inline constexpr int kAssumedFmaUnitsPerCore = 2;

nlohmann::json device_spec_json(DeviceKind kind, const DeviceFacts& facts, const Ceilings& ceilings);

}  // namespace lab
