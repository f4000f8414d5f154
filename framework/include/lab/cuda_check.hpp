// LAB_CUDA(call): every CUDA runtime call is checked; a failure throws with the call's text, the
// file, the line and the error's name, so a sticky error mid-run reaches the host as one clear
// message (exit 3, no run record). Part of the SDK: the CUDA backend and the lessons' `_cuda`
// companions (.cu files) use the same check; after a kernel launch, LAB_CUDA(cudaGetLastError()).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace lab::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
    std::string what = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                       cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    if (e == cudaErrorMemoryAllocation) what += "; the device is out of memory: try --quick, or close other GPU programs";
    throw std::runtime_error(what);
}

}  // namespace lab::cuda

#define LAB_CUDA(call)                                                                       \
    do {                                                                                     \
        cudaError_t lab_cuda_status_ = (call);                                               \
        if (lab_cuda_status_ != cudaSuccess)                                                 \
            ::lab::cuda::throw_cuda_error(lab_cuda_status_, #call, __FILE__, __LINE__);      \
    } while (0)
