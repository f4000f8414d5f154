// Measuring the CPU device's ceilings (see cpu_calibrate.cpp).
#pragma once

#include <functional>
#include <string>

#include "cpu_device.hpp"
#include "lab/backend.hpp"

namespace lab::cpu {

Ceilings calibrate_cpu(CpuDevice& device, bool quick, const MeasureFn& measure,
                       const std::function<void(const std::string&)>& progress);

}  // namespace lab::cpu
