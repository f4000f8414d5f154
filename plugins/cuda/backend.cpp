// Registration of the CUDA backend. The child process loads it; it decides "a GPU works" from
// the driver probe and cudaGetDeviceCount, and otherwise says why, so the host falls back to
// the CPU with that reason.
#include <boost/dll/alias.hpp>
#include <cuda_runtime_api.h>

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
        return lab::cuda::calibrate_cuda(kernels(device), quick, measure, progress);
    }
    std::optional<lab::Measurement> probe_ceiling(lab::Device& device, const std::string& ceiling,
                                                  const lab::MeasureFn& measure) override {
        lab::cuda::CeilingKernels* k = nullptr;
        try {
            k = &kernels(device);
        } catch (const std::exception&) {
            // Its small buffers could not be allocated beside the lesson's: no reference this
            // time, and the allocation's error cleared so no unrelated launch reports it.
            cudaGetLastError();
            return std::nullopt;
        }
        return lab::cuda::probe_cuda(*k, ceiling, measure);
    }

private:
    // The ceilings' kernels keep their small outputs between probes of the same device, and free
    // them when another device comes.
    lab::cuda::CeilingKernels& kernels(lab::Device& device) {
        auto& cuda = dynamic_cast<lab::cuda::CudaDevice&>(device);
        // The address alone could match a new device made where a freed one was.
        if (!kernels_ || &kernels_->device() != &cuda || kernels_->device_index() != cuda.index()) {
            kernels_.reset();  // the old device's buffers go before the new device's are allocated
            kernels_ = std::make_unique<lab::cuda::CeilingKernels>(cuda);
        }
        return *kernels_;
    }
    std::unique_ptr<lab::cuda::CeilingKernels> kernels_;
};

}  // namespace

LAB_DEVICE_BACKEND(CudaBackend, "cuda")
