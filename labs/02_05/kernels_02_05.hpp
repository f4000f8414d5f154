// The GPU kernels of lesson 02.05, exported by its CUDA companion (lab_02_05_cuda.so) as plain
// function pointers, so the lesson plugin holds no CUDA code.
#pragma once

#include <cstddef>

namespace lab_02_05 {

struct CudaKernels {
    // Streaming kernels over n floats (n a multiple of 4), 16-byte accesses, `blocks` blocks.
    void (*read)(void* stream, const float* a, std::size_t n, float* sink, unsigned blocks);
    void (*copy)(void* stream, float* a, const float* b, std::size_t n, unsigned blocks);
    void (*triad)(void* stream, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks);
    // k FFMAs per element, in place.
    void (*fma_per_element)(void* stream, float* a, std::size_t n, int k, unsigned blocks);
    // FFMA peak: 8 chains per thread, `blocks` x 256 threads.
    void (*fma_peak)(void* stream, float* out, long long iterations, unsigned blocks);
    double (*fma_peak_flops)(long long iterations, unsigned blocks);
};

}  // namespace lab_02_05

#define LAB_02_05_KERNELS_SYMBOL "lab_02_05_cuda_kernels"
