// Measuring a CUDA device's ceilings (see cuda_calibrate.cpp).
#pragma once

#include <functional>
#include <string>

#include "cuda_device.hpp"
#include "lab/backend.hpp"

namespace lab::cuda {

Ceilings calibrate_cuda(CudaDevice& device, bool quick, const MeasureFn& measure,
                        const std::function<void(const std::string&)>& progress);

}  // namespace lab::cuda
