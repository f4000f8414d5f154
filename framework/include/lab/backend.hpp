// The device-backend interface: what plugins/cpu and plugins/cuda implement. The host opens a
// device through it and asks it to calibrate (measure) the device's ceilings. Lessons never see
// this header; they see only Device.
#pragma once

#include <ctime>
#include <functional>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "lab/device.hpp"
#include "lab/lesson.hpp"
#include "lab/register.hpp"
#include "lab/utc_time.hpp"

namespace lab {

struct BackendOptions {
    int threads = 0;          // CPU: team size (0 = every CPU this process may run on)
    int device_index = 0;     // CUDA: cuda:N
};

// Measures a workload with the host's engine; the backend's calibration uses the same method as
// lessons do.
using MeasureFn = std::function<Measurement(const Workload&, const Launch&)>;

// Optional, and outside Backend, so no class a plugin implements changed: a backend that records
// its own trace events may name a kernel launched without a name (Stream::launch(HostKernel))
// after what launched it. It exports
//   extern "C" void lab_trace_label_source(lab::TraceLabelSource source);
// and the host calls it once, right after loading the backend, with a function that returns the
// calling thread's current label: the workload the engine is measuring ("read",
// "calibrate.empty_kernel"), or nullptr when there is none. The text is valid during the launch
// only: copy it. An older host never calls it (kernels stay unnamed); a backend without it (CUDA,
// whose kernels CUPTI names) is not asked. Neither side needs the other's version for this.
using TraceLabelSource = const char* (*)();
inline constexpr const char* kTraceLabelSourceSymbol = "lab_trace_label_source";

class Backend {
public:
    virtual ~Backend() = default;
    // "" when a device of this kind works here, else why not ("no NVIDIA driver").
    virtual std::string unavailable_reason() = 0;
    virtual std::unique_ptr<Device> open(const BackendOptions& options) = 0;
    // Measures clock, launch cost, FLOP/s per pipe and bandwidth per kernel.
    virtual Ceilings calibrate(Device& device, bool quick, const MeasureFn& measure,
                               const std::function<void(const std::string&)>& progress) = 0;
    // Measures one ceiling's kernel again, by the same method as calibrate: "flops.<pipe>"
    // (workload.flops set), "bandwidth.<read|copy|triad>" (workload.bytes set) or "launch" (an
    // empty kernel). A run uses it to re-measure a ceiling a workload beat, to retry a ceiling
    // calibrated under load, and as the reference a workload's regime is judged against.
    // nullopt when this backend cannot measure that ceiling on its own.
    virtual std::optional<Measurement> probe_ceiling(Device& device, const std::string& ceiling,
                                                     const MeasureFn& measure) {
        (void)device;
        (void)ceiling;
        (void)measure;
        return std::nullopt;
    }
};

// "2026-11-30T05:21:01Z": when a ceiling was measured.
inline std::string utc_now_iso() { return format::utc_iso8601(std::time(nullptr)); }

// How a ceiling came out of its samples. A ceiling is work / the median sample time: the same
// statistic workloads are judged by, so a kernel that matches a ceiling's kernel reads 100% of
// it, and a ceiling measured twice reproduces (the best sample of hundreds on a shared machine
// picks the moments the neighbours were idle). A cost, such as the launch cost, is the median too.
inline std::string describe_samples(const Measurement& m) {
    char spread[32];
    std::snprintf(spread, sizeof spread, "%.1f%%", 100 * m.time.noise);
    return "median of " + std::to_string(m.time.samples) + " samples" +
           (m.time.batch > 1 ? " of " + std::to_string(m.time.batch) + " back-to-back invocations" : "") +
           ", spread " + spread +
           (m.time.discarded ? ", " + std::to_string(m.time.discarded) + " throttled samples discarded" : "") +
           (m.time.clock_held_low ? ", every sample below the throttle ratio of the nominal clock, rests between them included: "
                                    "kept, as the clock the device holds under this load (a power cap)"
                                  : "") +
           (m.time.noise_met ? "" : " (noise target not met)");
}

// A ceiling measured without the engine (the clock), stamped now; its sample conditions unknown.
inline Ceiling plain_ceiling(double value, const std::string& unit, const std::string& how) {
    Ceiling c;
    c.value = value;
    c.unit = unit;
    c.method = how;
    c.measured_at = utc_now_iso();
    c.source = "calibration";
    return c;
}

// A ceiling from the measurement of its kernel: `work` (FLOP or bytes per invocation; 0 for a
// cost in seconds) over the median, with the conditions it was measured under.
inline Ceiling ceiling_from(const Measurement& m, double work, const std::string& unit, const std::string& how) {
    Ceiling c;
    c.value = work > 0 ? (m.time.median > 0 ? work / m.time.median : 0) : m.time.median;
    c.unit = unit;
    c.method = how + "; " + describe_samples(m);
    c.measured_at = utc_now_iso();
    c.spread = m.time.noise;
    c.samples = m.time.samples;
    c.noise_met = m.time.noise_met;
    c.load = m.load;
    c.source = "calibration";
    return c;
}

// Measures one ceiling: `measure_it` measures it and stores it in `c`. When that throws, the
// ceiling is skipped: `c.skipped[key]` says why and the calibration goes on, because one ceiling
// a device cannot measure (cuBLASLt has no algorithm for a dtype, every sample of a workload ran
// throttled) must not cost every other ceiling and every lesson run. `check_device` runs first
// and throws when the failure broke the device itself (a sticky CUDA error): that aborts the
// calibration, since nothing after it could be measured. Returns whether it was measured.
inline bool measure_or_skip(Ceilings& c, const std::string& key, const std::function<void()>& measure_it,
                            const std::function<void()>& check_device,
                            const std::function<void(const std::string&)>& progress) {
    try {
        measure_it();
        return true;
    } catch (const std::exception& e) {
        check_device();
        c.skipped[key] = e.what();
        progress("skipped " + key + ": " + e.what());
        return false;
    }
}

}  // namespace lab

//   LAB_DEVICE_BACKEND(CpuBackend, "cpu")
#define LAB_DEVICE_BACKEND(CLASS, KIND)                                                 \
    LAB_PLUGIN_MANIFEST_("device", KIND)                                                \
    namespace lab_backend_factory_ {                                                    \
    std::unique_ptr<::lab::Backend> create() { return std::make_unique<CLASS>(); }      \
    }                                                                                   \
    BOOST_DLL_ALIAS(lab_backend_factory_::create, lab_create_backend)
