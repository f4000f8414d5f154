// Measuring the CPU device's ceilings (see cpu_calibrate.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cpu_device.hpp"
#include "lab/backend.hpp"

namespace lab::cpu {

// The ceilings' kernels on one device, with the buffers they stream kept for the device's life,
// so a run can measure one ceiling again (a reference, a re-measure) as calibration did.
class CeilingKernels {
public:
    explicit CeilingKernels(CpuDevice& device);
    // The keys this device measures: "launch", "flops.fp32.simt", "flops.fp64.simt",
    // "bandwidth.read", "bandwidth.copy", "bandwidth.triad", "bandwidth.update".
    static bool knows(const std::string& ceiling);
    // Measures the ceiling's kernel; `quick` picks the shorter FMA kernels.
    Measurement measure(const std::string& ceiling, bool quick, const MeasureFn& measure);
    // The ceiling the measurement shows, with its method in words.
    Ceiling ceiling(const std::string& ceiling, const Measurement& m) const;
    CpuDevice& device() { return dev_; }

private:
    CpuDevice& dev_;
    BufferPtr stream_, sink_;   // allocated on first use
    std::size_t stream_bytes_ = 0;
};

Ceilings calibrate_cpu(CeilingKernels& kernels, bool quick, const MeasureFn& measure,
                       const std::function<void(const std::string&)>& progress);

}  // namespace lab::cpu
