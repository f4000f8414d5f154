// The GPU kernels of lesson 02.01, as the lesson's CPU code sees them: plain function pointers
// exported by the CUDA companion (lab_02_01_cuda.so, built from lab_02_01_cuda.cu), so the lesson
// plugin itself holds no CUDA code and loads on machines without a GPU.
#pragma once

#include <cstddef>

namespace lab_02_01 {

struct CudaKernels {
    // FFMA peak: 8 independent chains per thread, `blocks` x 256 threads; stores one float per thread.
    void (*fma_peak)(void* stream, float* out, long long iterations, unsigned blocks);
    double (*fma_peak_flops)(long long iterations, unsigned blocks);
    // a = b + q*c over n floats (16-byte accesses when n is a multiple of 4), `blocks` blocks.
    void (*triad)(void* stream, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks);
    // One thread, one dependent chain of `iterations` FFMAs; stores one float.
    void (*chain)(void* stream, float* out, long long iterations);
};

}  // namespace lab_02_01

// The companion's one export, found by Session::companion_symbol.
#define LAB_02_01_KERNELS_SYMBOL "lab_02_01_cuda_kernels"
