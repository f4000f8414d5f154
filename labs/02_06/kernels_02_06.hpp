// Lesson 02.06's own kernel, implemented for CPUs in lab_02_06.cpp and for GPUs in
// lab_02_06_cuda.cu: the decode step's matrix-vector product, the reference the BLAS GEMM family
// is compared with at batch 1. (C++17: the companion includes it.)
#pragma once

#include <lab/device.hpp>

namespace lab_02_06 {

struct DecodeKernels {
    static constexpr const char* kInterface = "lab_02_06::DecodeKernels/1";
    virtual ~DecodeKernels() = default;
    // y[d] = x[d] W[d,d], W row-major. CPU: fp32 throughout. GPU: bf16 W and x, fp32 y.
    virtual lab::Launch gemv(const void* w, const void* x, float* y, int d) = 0;
};

}  // namespace lab_02_06
