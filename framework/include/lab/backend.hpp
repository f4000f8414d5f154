// The device-backend interface: what plugins/cpu and plugins/cuda implement. The host opens a
// device through it and asks it to calibrate (measure) the device's ceilings. Lessons never see
// this header; they see only Device.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "lab/device.hpp"
#include "lab/lesson.hpp"

namespace lab {

struct BackendOptions {
    int threads = 0;          // CPU: team size (0 = every CPU this process may run on)
    int device_index = 0;     // CUDA: cuda:N
};

// Measures a workload with the host's engine; the backend's calibration uses the same method as
// lessons do.
using MeasureFn = std::function<Measurement(const Workload&, const Launch&)>;

class Backend {
public:
    virtual ~Backend() = default;
    // "" when a device of this kind works here, else why not ("no NVIDIA driver").
    virtual std::string unavailable_reason() = 0;
    virtual std::unique_ptr<Device> open(const BackendOptions& options) = 0;
    // Measures clock, launch cost, FLOP/s per pipe and bandwidth per kernel.
    virtual Ceilings calibrate(Device& device, bool quick, const MeasureFn& measure,
                               const std::function<void(const std::string&)>& progress) = 0;
};

// "2026-11-30T05:21:01Z": when a ceiling was measured.
inline std::string utc_now_iso() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// How a ceiling came out of its samples. A ceiling is what the device can do, so it comes from
// the best sample (on a shared machine the median also measures the neighbours); a cost, such as
// the launch cost, takes the median.
inline std::string describe_samples(const Measurement& m, bool best = true) {
    return std::string(best ? "best" : "median") + " of " + std::to_string(m.time.samples) + " samples" +
           (m.time.batch > 1 ? " of " + std::to_string(m.time.batch) + " back-to-back invocations" : "") +
           (m.time.discarded ? ", " + std::to_string(m.time.discarded) + " throttled samples discarded" : "") +
           (m.time.noise_met ? "" : " (noise target not met)");
}

}  // namespace lab

//   LAB_DEVICE_BACKEND(CpuBackend, "cpu")
#define LAB_DEVICE_BACKEND(CLASS, KIND)                                                 \
    LAB_PLUGIN_MANIFEST_("device", KIND)                                                \
    namespace lab_backend_factory_ {                                                    \
    std::unique_ptr<::lab::Backend> create() { return std::make_unique<CLASS>(); }      \
    }                                                                                   \
    BOOST_DLL_ALIAS(lab_backend_factory_::create, lab_create_backend)
