// Lesson 02.01's GPU kernels (the CUDA companion): the shared ceiling kernels of
// lab/cuda_kernels.cuh launched the way the lesson needs them. Loaded only by the CUDA backend.
#include "kernels_02_01.hpp"
#include "lab/cuda_check.hpp"
#include "lab/cuda_kernels.cuh"

namespace {

using namespace lab::cuda_kernels;

void fma(void* s, float* out, long long it, unsigned blocks) {
    fma_peak<float><<<blocks, kBlock, 0, static_cast<cudaStream_t>(s)>>>(out, it, 0.999f, 0.001f);
    LAB_CUDA(cudaGetLastError());
}

double fma_flops(long long it, unsigned blocks) { return fma_peak_flops<float>(it, static_cast<long long>(blocks) * kBlock); }

void triad(void* s, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks) {
    auto st = static_cast<cudaStream_t>(s);
    if (n % 4 == 0) {
        std::size_t n4 = n / 4;
        unsigned need = static_cast<unsigned>((n4 + kBlock - 1) / kBlock);
        stream_triad<<<need < blocks ? need : blocks, kBlock, 0, st>>>(
            reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<const float4*>(c), q, n4);
    } else {
        unsigned need = static_cast<unsigned>((n + kBlock - 1) / kBlock);
        scalar_triad<<<need < blocks ? need : blocks, kBlock, 0, st>>>(a, b, c, q, n);
    }
    LAB_CUDA(cudaGetLastError());
}

void chain(void* s, float* out, long long it) {
    dependent_chain<<<1, 1, 0, static_cast<cudaStream_t>(s)>>>(out, it, 0.999f, 0.001f);
    LAB_CUDA(cudaGetLastError());
}

const lab_02_01::CudaKernels kKernels{fma, fma_flops, triad, chain};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lab_02_01::CudaKernels* lab_02_01_cuda_kernels() {
    return &kKernels;
}
