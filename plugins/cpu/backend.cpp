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
        return lab::cpu::calibrate_cpu(dynamic_cast<lab::cpu::CpuDevice&>(device), quick, measure, progress);
    }
};

}  // namespace

LAB_DEVICE_BACKEND(CpuBackend, "cpu")
