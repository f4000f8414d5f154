// Registration of the CUDA backend. The child process loads it; it decides "a GPU works" from
// the driver probe and cudaGetDeviceCount, and otherwise says why, so the host falls back to
// the CPU with that reason.
#include <boost/dll/alias.hpp>

#include "cuda_calibrate.hpp"
#include "cuda_device.hpp"
#include "driver_probe.hpp"
#include "lab/backend.hpp"

namespace {

class CudaBackend : public lab::Backend {
public:
    std::string unavailable_reason() override { return lab::cuda::why_no_cuda_device(); }
    std::unique_ptr<lab::Device> open(const lab::BackendOptions& o) override {
        return std::make_unique<lab::cuda::CudaDevice>(o.device_index);
    }
    lab::Ceilings calibrate(lab::Device& device, bool quick, const lab::MeasureFn& measure,
                            const std::function<void(const std::string&)>& progress) override {
        return lab::cuda::calibrate_cuda(dynamic_cast<lab::cuda::CudaDevice&>(device), quick, measure, progress);
    }
};

}  // namespace

LAB_DEVICE_BACKEND(CudaBackend, "cuda")
