// The "spec" beside a device's measured ceilings: for a GPU the datasheet entry matched from
// configs/devices; for a CPU the theoretical peak from its microarchitecture's FMA throughput
// (configs/cpu_microarchitectures.yaml) and its measured clock, stated as such, or nothing when
// the table does not know the CPU (a wrong peak is worse than none).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/device.hpp"

namespace lab {

// FMA instructions one core retires per cycle on one SIMD path, as the table gives it.
struct FmaPerCycle {
    enum class Kind { known, unknown, unsupported };
    Kind kind = Kind::unknown;
    double value = 0;  // when known: 256-bit (avx2 path) or 512-bit (avx512 path) FMAs per cycle
};

// One row of configs/cpu_microarchitectures.yaml (see the file's header for each key).
struct CpuMicroarchitecture {
    std::string name;                             // "AMD Zen 4"
    std::string vendor;                           // cpuid vendor: "GenuineIntel", "AuthenticAMD"
    int family = 0;                               // cpuid display family (0x19)
    std::vector<std::pair<int, int>> models;      // inclusive ranges of display models
    FmaPerCycle fma256;                           // the avx2 path
    FmaPerCycle fma512;                           // the avx512 path
    std::string why;                              // why a path is unknown
    std::string source;                           // document and section
    std::string where;                            // "file:line" of the row
};

// Loads the table. Throws lab::InputError naming file and 1-based line for a missing or
// malformed file, an unknown or missing key, a model that is not hexadecimal, a bad count, or
// two rows claiming one model.
std::vector<CpuMicroarchitecture> load_cpu_microarchitectures(const std::filesystem::path& file);

// The row for a CPU, or nullptr.
const CpuMicroarchitecture* find_cpu_microarchitecture(const std::vector<CpuMicroarchitecture>& table,
                                                      const std::string& vendor, int family, int model);

struct CpuTheoreticalPeak {
    double fp32_flops_per_s = 0, fp64_flops_per_s = 0;
    std::string microarchitecture, basis, source;
};

// The theoretical FP32/FP64 peak of `threads` threads of the CPU `facts` describes, at `clock_hz`,
// on the SIMD path facts.simd, from configs/cpu_microarchitectures.yaml (under
// paths::config_dir()). The CPU is identified by facts.extra's cpu_vendor_id, cpu_family and
// cpu_model (decimal, as /proc/cpuinfo prints them). Never throws.
// nullopt when the microarchitecture is not in configs/cpu_microarchitectures.yaml, its FMA width for this SIMD path is unknown, or the path is scalar; `why` says which.
std::optional<CpuTheoreticalPeak> cpu_theoretical_peak(const DeviceFacts& facts, double clock_hz, int threads, std::string* why = nullptr);

nlohmann::json device_spec_json(DeviceKind kind, const DeviceFacts& facts, const Ceilings& ceilings);

// How far a measured ceiling may exceed the device on paper (device_spec_json): a datasheet by
// kPaperSlack, for the rounding of clocks and datasheets; a CPU's theoretical peak by
// kMeasuredClockSlack, because it rests on the core clock measured at calibration, one moment's
// clock that turbo and load move (a calibration beside a busy build read 2.98 GHz on a core that
// ran the lesson at 3.5). The grader refuses a record beyond them, and the ceilings cache refuses
// to start a run with one.
constexpr double kPaperSlack = 1.10;
constexpr double kMeasuredClockSlack = 1.5;

}  // namespace lab
