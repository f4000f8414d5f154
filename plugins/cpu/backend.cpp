// Registration of the CPU backend: always available.
#include <boost/dll/alias.hpp>

#include "cpu_calibrate.hpp"
#include "cpu_device.hpp"
#include "lab/backend.hpp"

namespace {

class CpuBackend : public lab::Backend {
public:
    std::string unavailable_reason() override { return ""; }
    std::unique_ptr<lab::Device> open(const lab::BackendOptions& o) override {
        return std::make_unique<lab::cpu::CpuDevice>(o.threads);
    }
    lab::Ceilings calibrate(lab::Device& device, bool quick, const lab::MeasureFn& measure,
                            const std::function<void(const std::string&)>& progress) override {
        return lab::cpu::calibrate_cpu(kernels(device), quick, measure, progress);
    }
    std::optional<lab::Measurement> probe_ceiling(lab::Device& device, const std::string& ceiling,
                                                  const lab::MeasureFn& measure) override {
        if (!lab::cpu::CeilingKernels::knows(ceiling)) return std::nullopt;
        return kernels(device).measure(ceiling, true, measure);
    }

private:
    // The ceilings' kernels keep their buffers between probes of the same device.
    lab::cpu::CeilingKernels& kernels(lab::Device& device) {
        auto& cpu = dynamic_cast<lab::cpu::CpuDevice&>(device);
        if (!kernels_ || &kernels_->device() != &cpu) kernels_ = std::make_unique<lab::cpu::CeilingKernels>(cpu);
        return *kernels_;
    }
    std::unique_ptr<lab::cpu::CeilingKernels> kernels_;
};

}  // namespace

LAB_DEVICE_BACKEND(CpuBackend, "cpu")

// The host's trace label, so a traced kernel is named after the workload that launched it
// (lab/backend.hpp, kTraceLabelSourceSymbol).
extern "C" __attribute__((visibility("default"))) void lab_trace_label_source(lab::TraceLabelSource source) {
    lab::cpu::set_trace_label_source(source);
}
