// Whether a CUDA device works here, and if not, why: "no NVIDIA driver", "driver 550 is older
// than CUDA 13 needs (580)", "no CUDA device". libcuda is opened with dlopen (nothing links
// -lcuda), so a machine without a driver loads this backend and falls back to the CPU.
#pragma once

#include <string>

namespace lab::cuda {

// The driver's CUDA version as cuDriverGetVersion reports it (13000 = 13.0), or 0 without a driver.
int driver_cuda_version();

// "" when cudaGetDeviceCount() succeeds with at least one device; else the reason.
std::string why_no_cuda_device();

}  // namespace lab::cuda
