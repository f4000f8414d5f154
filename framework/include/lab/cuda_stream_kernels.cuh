// lab::StreamKernels on a GPU, for a lesson's CUDA companion: the kernels of
// <lab/cuda_kernels.cuh> launched with the geometry lab/stream_kernels.hpp states (8 blocks of
// 256 threads per SM), every launch checked with LAB_CUDA.
#pragma once

#include "lab/cuda_check.hpp"
#include "lab/cuda_kernels.cuh"
#include "lab/stream_kernels.hpp"

namespace lab::cuda {

class StreamKernelsGpu : public StreamKernels {
public:
    explicit StreamKernelsGpu(Device& dev) : blocks_(stream_kernels::gpu_blocks(dev.facts())) {}

    Launch read(const float* a, std::size_t n, float* sink) override {
        const unsigned g = blocks_;
        return [=](Stream& s) {
            cuda_kernels::stream_read<<<g, cuda_kernels::kBlock, 0, native(s)>>>(reinterpret_cast<const float4*>(a), n / 4, sink);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch copy(float* a, const float* b, std::size_t n) override {
        const unsigned g = blocks_;
        return [=](Stream& s) {
            cuda_kernels::stream_copy<<<g, cuda_kernels::kBlock, 0, native(s)>>>(reinterpret_cast<float4*>(a),
                                                                                 reinterpret_cast<const float4*>(b), n / 4);
            LAB_CUDA(cudaGetLastError());
        };
    }
    // 16-byte accesses when n is a multiple of 4, else plain floats (n = 1); never more blocks
    // than the data fills.
    Launch triad(float* a, const float* b, const float* c, float q, std::size_t n) override {
        const unsigned g = blocks_;
        return [=](Stream& s) {
            const std::size_t items = n % 4 == 0 ? n / 4 : n;
            const unsigned need = static_cast<unsigned>((items + cuda_kernels::kBlock - 1) / cuda_kernels::kBlock);
            const unsigned grid = need < g ? need : g;
            if (n % 4 == 0)
                cuda_kernels::stream_triad<<<grid, cuda_kernels::kBlock, 0, native(s)>>>(
                    reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<const float4*>(c), q, n / 4);
            else
                cuda_kernels::scalar_triad<<<grid, cuda_kernels::kBlock, 0, native(s)>>>(a, b, c, q, n);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch fma_per_element(float* a, std::size_t n, int k) override {
        const unsigned g = blocks_;
        return [=](Stream& s) {
            cuda_kernels::fma_per_element<<<g, cuda_kernels::kBlock, 0, native(s)>>>(reinterpret_cast<float4*>(a), n / 4, k);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch fma_peak(float* out, std::int64_t iterations) override {
        const unsigned g = blocks_;
        return [=](Stream& s) {
            cuda_kernels::fma_peak<float><<<g, cuda_kernels::kBlock, 0, native(s)>>>(out, iterations, 0.999f, 0.001f);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch dependent_chain(void* out, std::int64_t iterations) override {
        return [=](Stream& s) {
            cuda_kernels::dependent_chain<<<1, 1, 0, native(s)>>>(static_cast<float*>(out), iterations, 0.999f, 0.001f);
            LAB_CUDA(cudaGetLastError());
        };
    }

private:
    static cudaStream_t native(Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }
    static_assert(cuda_kernels::kBlock == stream_kernels::kGpuBlock, "the FMA peak's count states the block size");
    static_assert(cuda_kernels::kChains == stream_kernels::kGpuFmaChains, "the FMA peak's count states the chains");
    unsigned blocks_;
};

}  // namespace lab::cuda
