// Lesson 02.04's own kernel, implemented for CPUs in lab_02_04.cpp and for GPUs in
// lab_02_04_cuda.cu: mixbench's sweep kernel, k chained fused multiply-adds per element loaded,
// in place, in one dtype. (C++17: the companion includes it.)
#pragma once

#include <lab/device.hpp>

namespace lab_02_04 {

struct IntensityKernels {
    static constexpr const char* kInterface = "lab_02_04::IntensityKernels/1";
    virtual ~IntensityKernels() = default;
    // a[i] = (...(a[i] x + y) x + y ...), k times, for i < n elements of `dtype` (fp32 and fp64;
    // fp16 and bf16 on a GPU, as pairs). FLOP 2kn; bytes 2en (each element read and written once,
    // e bytes each): AI = k / e. n is a multiple of 1024.
    virtual lab::Launch fma_sweep(void* a, std::size_t n, int k, lab::Dtype dtype) = 0;
};

}  // namespace lab_02_04
