// Lesson 02.05's GPU kernels (the CUDA companion): the shared ceiling kernels of
// lab/cuda_kernels.cuh, launched for the roofline's kernels. Loaded only by the CUDA backend.
#include "kernels_02_05.hpp"
#include "lab/cuda_check.hpp"
#include "lab/cuda_kernels.cuh"

namespace {

using namespace lab::cuda_kernels;

cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }

void read(void* s, const float* a, std::size_t n, float* sink, unsigned blocks) {
    stream_read<<<blocks, kBlock, 0, st(s)>>>(reinterpret_cast<const float4*>(a), n / 4, sink);
    LAB_CUDA(cudaGetLastError());
}

void copy(void* s, float* a, const float* b, std::size_t n, unsigned blocks) {
    stream_copy<<<blocks, kBlock, 0, st(s)>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b), n / 4);
    LAB_CUDA(cudaGetLastError());
}

void triad(void* s, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks) {
    stream_triad<<<blocks, kBlock, 0, st(s)>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                               reinterpret_cast<const float4*>(c), q, n / 4);
    LAB_CUDA(cudaGetLastError());
}

void per_element(void* s, float* a, std::size_t n, int k, unsigned blocks) {
    fma_per_element<<<blocks, kBlock, 0, st(s)>>>(reinterpret_cast<float4*>(a), n / 4, k);
    LAB_CUDA(cudaGetLastError());
}

void fma(void* s, float* out, long long it, unsigned blocks) {
    fma_peak<float><<<blocks, kBlock, 0, st(s)>>>(out, it, 0.999f, 0.001f);
    LAB_CUDA(cudaGetLastError());
}

double fma_flops(long long it, unsigned blocks) { return fma_peak_flops<float>(it, static_cast<long long>(blocks) * kBlock); }

const lab_02_05::CudaKernels kKernels{read, copy, triad, per_element, fma, fma_flops};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lab_02_05::CudaKernels* lab_02_05_cuda_kernels() {
    return &kKernels;
}
