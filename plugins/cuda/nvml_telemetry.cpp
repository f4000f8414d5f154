// NVML telemetry for one GPU (see nvml_telemetry.hpp): utilisation, clocks, clock-event reasons,
// power, energy and memory, sampled on a background thread while a workload runs, and reported
// in SI units. libnvidia-ml.so.1 comes with the driver, not the toolkit, so it is opened with
// dlopen and the handful of types and functions used are declared below. Strictly read only:
// no nvmlDeviceSet* (clocks, power limits, modes) is even looked up. A function this driver
// lacks, or a reading the GPU does not support, is skipped; it never fails the run.
#include "nvml_telemetry.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace lab::cuda {

namespace {

// --- The subset of nvml.h used here. Values and layouts from NVIDIA's nvml.h, NVML API version
// 12 (file version 12.2.140, as vendored in NVIDIA/go-nvml gen/nvml/nvml.h); unchanged since in
// the fields used. Only the _v2 entry points and v1 structs that every driver >= 535 exports.
using nvmlReturn_t = int;                 // enum nvmlReturn_enum
using nvmlDevice_t = struct nvmlDevice_st*;  // opaque handle
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;

struct nvmlUtilization_t {  // nvmlUtilization_st
    unsigned int gpu;       // % of the sample period during which one or more kernels ran
    unsigned int memory;    // % of the sample period during which device memory was read or written
};
struct nvmlMemory_t {  // nvmlMemory_st (v1, the one nvmlDeviceGetMemoryInfo fills)
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
using nvmlClockType_t = int;  // enum nvmlClockType_enum
constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;

constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using HandleByPciBusIdFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using UtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);  // mhz
using ReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);          // bitmask
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using UIntFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);        // power mW, limit mW
using ULongLongFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);  // energy mJ
using StringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using DriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);

// Every function pointer used; null where this driver's NVML lacks the symbol.
struct Api {
    InitFn init = nullptr;
    ShutdownFn shutdown = nullptr;
    ErrorStringFn error_string = nullptr;
    HandleByPciBusIdFn handle_by_pci_bus_id = nullptr;
    UtilizationFn utilization = nullptr;
    ClockFn clock = nullptr;
    ClockFn max_clock = nullptr;
    ReasonsFn clock_event_reasons = nullptr;
    MemoryFn memory = nullptr;
    UIntFn power = nullptr;
    ULongLongFn energy = nullptr;
    UIntFn power_limit = nullptr;
    StringFn name = nullptr;
    StringFn uuid = nullptr;
    DriverVersionFn driver_version = nullptr;
};

template <class Fn> Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

// Every reading is optional: count what this driver lacks so facts() can say so.
template <class Fn> Fn optional_symbol(void* lib, const char* name, std::string& missing) {
    Fn fn = symbol<Fn>(lib, name);
    if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
    return fn;
}

// Running summary of one reading: enough for mean / min / max without keeping samples.
struct Stat {
    double sum = 0.0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    std::size_t n = 0;
    void add(double x) {
        sum += x;
        min = std::min(min, x);
        max = std::max(max, x);
        ++n;
    }
    double mean() const { return sum / static_cast<double>(n); }
};

// Shortest decimal that reads back the same number: facts are strings, "700" not "700.000000".
std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", x);
    return buf;
}

// NVML's own text for a code when the library offers it.
std::string describe(const Api& api, nvmlReturn_t r) {
    const char* s = api.error_string ? api.error_string(r) : nullptr;
    return s ? std::string(s) + " (NVML error " + std::to_string(r) + ")" : "NVML error " + std::to_string(r);
}

// A reading that answered "not supported" on this GPU will answer the same forever: stop asking
// (a sampler at 50 Hz would otherwise pay for the failed call every tick).
bool gone_for_good(nvmlReturn_t r) {
    return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NO_PERMISSION;
}

constexpr double kMHz = 1e6;          // NVML clocks are MHz
constexpr double kMilli = 1e-3;       // NVML power is mW, energy mJ
constexpr double kPercent = 1e-2;     // NVML utilisation is percent
constexpr double kDefaultPeriodS = 0.02;
constexpr double kMinPeriodS = 0.001;  // below this the NVML calls themselves dominate

}  // namespace

struct NvmlTelemetry::State {
    Api api;
    nvmlDevice_t device = nullptr;
    bool initialized = false;  // nvmlInit_v2 succeeded: nvmlShutdown in the destructor
    std::string pci_bus_id;
    std::string missing;  // names of functions this driver lacks
    unsigned long long memory_total = 0;  // read once at open: facts() must not race the sampler

    // Sampling. The aggregates are written by one thread at a time: the sampler while it runs,
    // the caller of begin()/end() before it starts and after it is joined.
    std::thread sampler;
    std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;  // guarded by `mutex`
    std::chrono::duration<double> period{kDefaultPeriodS};

    std::size_t samples = 0;
    Stat util_gpu, util_mem, sm_clock, mem_clock, power;
    double memory_used_max = -1.0;
    unsigned long long reasons_any = 0;
    bool reasons_seen = false;
    bool energy_start_ok = false;
    unsigned long long energy_start_mj = 0;

    ~State() {
        halt();
        // nvmlInit/nvmlShutdown are reference counted, so other users in the process are safe.
        // The library stays mapped (no dlclose): NVML may keep internal threads alive.
        if (initialized && api.shutdown) (void)api.shutdown();
    }

    void reset() {
        samples = 0;
        util_gpu = util_mem = sm_clock = mem_clock = power = Stat{};
        memory_used_max = -1.0;
        reasons_any = 0;
        reasons_seen = false;
        energy_start_ok = false;
    }

    // One reading of everything available. Each call is checked; a failure skips that reading.
    void sample_once() {
        ++samples;
        if (api.utilization) {
            nvmlUtilization_t u{};
            const nvmlReturn_t r = api.utilization(device, &u);
            if (r == NVML_SUCCESS) {
                util_gpu.add(u.gpu * kPercent);
                util_mem.add(u.memory * kPercent);
            } else if (gone_for_good(r)) {
                api.utilization = nullptr;
            }
        }
        if (api.clock) {
            unsigned int mhz = 0;
            nvmlReturn_t r = api.clock(device, NVML_CLOCK_SM, &mhz);
            if (r == NVML_SUCCESS) sm_clock.add(mhz * kMHz);
            r = api.clock(device, NVML_CLOCK_MEM, &mhz);
            if (r == NVML_SUCCESS) mem_clock.add(mhz * kMHz);
        }
        if (api.clock_event_reasons) {
            unsigned long long bits = 0;
            const nvmlReturn_t r = api.clock_event_reasons(device, &bits);
            if (r == NVML_SUCCESS) {
                reasons_any |= bits;
                reasons_seen = true;
            } else if (gone_for_good(r)) {
                api.clock_event_reasons = nullptr;
            }
        }
        if (api.power) {
            unsigned int mw = 0;
            const nvmlReturn_t r = api.power(device, &mw);
            if (r == NVML_SUCCESS) power.add(mw * kMilli);
            else if (gone_for_good(r)) api.power = nullptr;
        }
        if (api.memory) {
            nvmlMemory_t m{};
            const nvmlReturn_t r = api.memory(device, &m);
            if (r == NVML_SUCCESS) memory_used_max = std::max(memory_used_max, static_cast<double>(m.used));
            else if (gone_for_good(r)) api.memory = nullptr;
        }
    }

    bool read_energy(unsigned long long& mj) {
        if (!api.energy) return false;
        const nvmlReturn_t r = api.energy(device, &mj);
        if (r != NVML_SUCCESS && gone_for_good(r)) api.energy = nullptr;
        return r == NVML_SUCCESS;
    }

    void loop() {
        auto next = std::chrono::steady_clock::now();
        const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
        std::unique_lock lock(mutex);
        while (!stop) {
            lock.unlock();
            sample_once();
            lock.lock();
            // Fixed schedule, not "period after the last sample": NVML calls take time. When
            // behind (a slow call), skip the missed ticks instead of sampling in a burst.
            next += step;
            const auto now = std::chrono::steady_clock::now();
            if (next < now) next = now + step;
            wake.wait_until(lock, next, [this] { return stop; });
        }
    }

    void start(double period_s) {
        halt();
        reset();
        if (!std::isfinite(period_s) || period_s <= 0) period_s = kDefaultPeriodS;
        period_s = std::max(period_s, kMinPeriodS);
        period = std::chrono::duration<double>(period_s);
        energy_start_ok = read_energy(energy_start_mj);
        {
            std::lock_guard lock(mutex);
            stop = false;
        }
        try {
            sampler = std::thread([this] { loop(); });
        } catch (const std::system_error&) {
            // No thread: end() still takes a final sample and the energy difference.
        }
    }

    void halt() {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        wake.notify_all();
        if (sampler.joinable()) sampler.join();
    }

    std::map<std::string, double> finish() {
        halt();
        sample_once();  // the state at the end of the run; also the only sample of a short one
        std::map<std::string, double> out;
        out["samples"] = static_cast<double>(samples);
        if (util_gpu.n) {
            out["utilization_gpu.mean"] = util_gpu.mean();
            out["utilization_gpu.max"] = util_gpu.max;
            out["utilization_memory.mean"] = util_mem.mean();
        }
        if (sm_clock.n) {
            out["sm_clock_hz.mean"] = sm_clock.mean();
            out["sm_clock_hz.min"] = sm_clock.min;
        }
        if (mem_clock.n) out["mem_clock_hz.mean"] = mem_clock.mean();
        if (power.n) {
            out["power_w.mean"] = power.mean();
            out["power_w.max"] = power.max;
        }
        if (memory_used_max >= 0) out["memory_used_bytes.max"] = memory_used_max;
        if (reasons_seen) out["clock_event_reasons.any"] = static_cast<double>(reasons_any);
        unsigned long long energy_end_mj = 0;
        // The counter is monotonic since the driver loaded; a smaller end value means it was
        // reset (driver reload) and the difference means nothing.
        if (energy_start_ok && read_energy(energy_end_mj) && energy_end_mj >= energy_start_mj)
            out["energy_j"] = static_cast<double>(energy_end_mj - energy_start_mj) * kMilli;
        return out;
    }
};

NvmlTelemetry::NvmlTelemetry() : state_(std::make_unique<State>()) {}

NvmlTelemetry::~NvmlTelemetry() = default;

std::unique_ptr<NvmlTelemetry> NvmlTelemetry::open(const std::string& pci_bus_id, std::string& note) {
    // RTLD_LOCAL: NVML's symbols stay out of the global namespace of the lab process.
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* why = dlerror();
        note = "GPU telemetry off: NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) could not be "
               "loaded" + (why ? std::string(": ") + why : std::string());
        return nullptr;
    }
    // From here on `lib` is never closed (see ~State): a failed open just leaves it mapped,
    // and a later dlopen of the same file returns the same handle.

    std::unique_ptr<NvmlTelemetry> t(new NvmlTelemetry());
    State& s = *t->state_;
    Api& api = s.api;
    api.init = symbol<InitFn>(lib, "nvmlInit_v2");
    api.shutdown = symbol<ShutdownFn>(lib, "nvmlShutdown");
    api.handle_by_pci_bus_id = symbol<HandleByPciBusIdFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    api.error_string = symbol<ErrorStringFn>(lib, "nvmlErrorString");
    if (api.init == nullptr || api.shutdown == nullptr || api.handle_by_pci_bus_id == nullptr) {
        note = "GPU telemetry off: libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or "
               "nvmlDeviceGetHandleByPciBusId_v2 (driver far older than this lab supports)";
        return nullptr;
    }

    if (const nvmlReturn_t r = api.init(); r != NVML_SUCCESS) {
        note = "GPU telemetry off: nvmlInit_v2 failed: " + describe(api, r);
        return nullptr;
    }
    s.initialized = true;  // from here the destructor calls nvmlShutdown

    if (const nvmlReturn_t r = api.handle_by_pci_bus_id(pci_bus_id.c_str(), &s.device); r != NVML_SUCCESS) {
        note = "GPU telemetry off: NVML has no device at PCI bus ID '" + pci_bus_id + "': " + describe(api, r);
        return nullptr;
    }
    s.pci_bus_id = pci_bus_id;

    api.utilization = optional_symbol<UtilizationFn>(lib, "nvmlDeviceGetUtilizationRates", s.missing);
    api.clock = optional_symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo", s.missing);
    api.max_clock = optional_symbol<ClockFn>(lib, "nvmlDeviceGetMaxClockInfo", s.missing);
    // Renamed in NVML 12.2 (driver 535); the old name remains as a deprecated alias.
    api.clock_event_reasons = symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (api.clock_event_reasons == nullptr)
        api.clock_event_reasons =
            optional_symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", s.missing);
    api.memory = optional_symbol<MemoryFn>(lib, "nvmlDeviceGetMemoryInfo", s.missing);
    api.power = optional_symbol<UIntFn>(lib, "nvmlDeviceGetPowerUsage", s.missing);
    api.energy = optional_symbol<ULongLongFn>(lib, "nvmlDeviceGetTotalEnergyConsumption", s.missing);
    api.power_limit = optional_symbol<UIntFn>(lib, "nvmlDeviceGetEnforcedPowerLimit", s.missing);
    api.name = optional_symbol<StringFn>(lib, "nvmlDeviceGetName", s.missing);
    api.uuid = optional_symbol<StringFn>(lib, "nvmlDeviceGetUUID", s.missing);
    api.driver_version = optional_symbol<DriverVersionFn>(lib, "nvmlSystemGetDriverVersion", s.missing);
    if (api.memory) {
        nvmlMemory_t m{};
        if (api.memory(s.device, &m) == NVML_SUCCESS) s.memory_total = m.total;
    }
    return t;
}

void NvmlTelemetry::begin(double period_s) { state_->start(period_s); }

std::map<std::string, double> NvmlTelemetry::end() { return state_->finish(); }

std::map<std::string, std::string> NvmlTelemetry::facts() {
    State& s = *state_;
    const Api& api = s.api;
    std::map<std::string, std::string> out;
    out["pci_bus_id"] = s.pci_bus_id;
    if (api.driver_version) {
        char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
        if (api.driver_version(buf, sizeof buf) == NVML_SUCCESS) out["driver_version"] = buf;
    }
    if (api.name) {
        char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
        if (api.name(s.device, buf, sizeof buf) == NVML_SUCCESS) out["name"] = buf;
    }
    if (api.uuid) {
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
        if (api.uuid(s.device, buf, sizeof buf) == NVML_SUCCESS) out["uuid"] = buf;
    }
    if (api.power_limit) {
        unsigned int mw = 0;
        if (api.power_limit(s.device, &mw) == NVML_SUCCESS) out["power_limit_w"] = number(mw * kMilli);
    }
    if (api.max_clock) {
        unsigned int mhz = 0;
        if (api.max_clock(s.device, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) out["max_sm_clock_hz"] = number(mhz * kMHz);
        if (api.max_clock(s.device, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS) out["max_mem_clock_hz"] = number(mhz * kMHz);
        if (api.max_clock(s.device, NVML_CLOCK_GRAPHICS, &mhz) == NVML_SUCCESS)
            out["max_graphics_clock_hz"] = number(mhz * kMHz);
    }
    if (s.memory_total > 0) out["memory_total_bytes"] = number(static_cast<double>(s.memory_total));
    if (!s.missing.empty()) out["nvml_missing"] = s.missing;
    return out;
}

}  // namespace lab::cuda
