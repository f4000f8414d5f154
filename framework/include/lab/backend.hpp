// The device-backend interface: what plugins/cpu and plugins/cuda implement. The host opens a
// device through it and asks it to calibrate (measure) the device's ceilings. Lessons never see
// this header; they see only Device.
#pragma once

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

}  // namespace lab

//   LAB_DEVICE_BACKEND(CpuBackend, "cpu")
#define LAB_DEVICE_BACKEND(CLASS, KIND)                                                 \
    LAB_PLUGIN_MANIFEST_("device", KIND)                                                \
    namespace lab_backend_factory_ {                                                    \
    std::unique_ptr<::lab::Backend> create() { return std::make_unique<CLASS>(); }      \
    }                                                                                   \
    BOOST_DLL_ALIAS(lab_backend_factory_::create, lab_create_backend)
