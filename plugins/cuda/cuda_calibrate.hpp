// Measuring a CUDA device's ceilings (see cuda_calibrate.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "ceiling_pipes.hpp"
#include "cuda_device.hpp"
#include "lab/backend.hpp"

namespace lab::cuda {

// The ceilings' kernels on one device, so a run can measure one ceiling again (a reference, a
// re-measure) as calibration did. Their small outputs are kept for the device's life; the large
// buffers (the >= 1 GiB bandwidth buffer, GEMM operands) only while a ceiling is measured: a
// lesson has the device's memory to itself, as before calibration went through this class.
class CeilingKernels {
public:
    explicit CeilingKernels(CudaDevice& device);
    // Whether this device has the ceiling's kernel: "launch", "flops.<pipe>" for the pipes it
    // has (ceiling_pipes.hpp), "bandwidth.read", "bandwidth.copy", "bandwidth.triad".
    bool measures(const std::string& ceiling) const;
    // Measures the ceiling's kernel; `quick` picks the shorter FMA kernels and smaller GEMMs.
    Measurement measure(const std::string& ceiling, bool quick, const MeasureFn& measure);
    // The ceiling the measurement shows, with its method in words (`quick` as it was measured).
    Ceiling ceiling(const std::string& ceiling, bool quick, const Measurement& m) const;
    // The bandwidth kernels' buffer: at least 4x the L2 and 1 GiB, allocated on first use and
    // held until release_buffers().
    std::size_t bandwidth_buffer_bytes() const { return stream_bytes_; }
    float* bandwidth_buffer();
    void release_buffers() { stream_.reset(); }
    CudaDevice& device() { return dev_; }
    int device_index() const { return device_index_; }
    // Calibration's size setting in this process, if it calibrated: a probe measures at the same
    // size (a retry of a quick calibration's ceiling stays a quick one, its method text true);
    // without one, at the full size, so that a reference never reads under the roof a quick
    // size would miss (a 4096^3 GEMM runs ~5-10% under an 8192^3 one; milliseconds either way).
    bool probe_quick() const { return calibrated_quick_.value_or(false); }
    void calibrated(bool quick) { calibrated_quick_ = quick; }

private:
    Measurement measure_fma(const SimtPipe& pipe, bool quick, const MeasureFn& measure);
    Measurement measure_gemm(const TensorPipe& pipe, bool quick, const MeasureFn& measure);
    Measurement measure_bandwidth(const std::string& kernel, const MeasureFn& measure);

    CudaDevice& dev_;
    int device_index_;
    unsigned blocks_;            // the FMA and bandwidth kernels' grid
    BufferPtr fma_out_, sink_;   // what the FMA and read kernels store
    BufferPtr stream_;           // the bandwidth buffer, allocated on first use
    std::size_t stream_bytes_;
    std::optional<bool> calibrated_quick_;
};

Ceilings calibrate_cuda(CeilingKernels& kernels, bool quick, const MeasureFn& measure,
                        const std::function<void(const std::string&)>& progress);

// Backend::probe_ceiling: the ceiling's kernel measured at CeilingKernels::probe_quick's size;
// nullopt when this device has no kernel for it. When the measurement throws, a GPU it left in a
// sticky error state stops everything, as in calibration; any other error propagates as it is.
std::optional<Measurement> probe_cuda(CeilingKernels& kernels, const std::string& ceiling, const MeasureFn& measure);

}  // namespace lab::cuda
