// Lesson 02.04's GPU kernel (its CUDA companion): k chained FMAs per element in fp32, fp64, and
// fp16 and bf16 as pairs (one HFMA2 is two FMAs), a grid-stride loop of coalesced loads and
// stores. Many elements per SM in flight hide the chain's latency, as in mixbench.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <lab/companion.hpp>
#include <lab/cuda_check.hpp>

#include <stdexcept>

#include "kernels_02_04.hpp"

namespace {

constexpr int kBlock = 256;

template <class T> __device__ T fma_step(T v, T x, T y) { return v * x + y; }
template <> __device__ __half2 fma_step(__half2 v, __half2 x, __half2 y) { return __hfma2(v, x, y); }
// bf16 pairs have an HFMA2 from sm_80 (the lesson skips bf16 below it; older targets still compile).
template <> __device__ __nv_bfloat162 fma_step(__nv_bfloat162 v, __nv_bfloat162 x, __nv_bfloat162 y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __hfma2(v, x, y);
#else
    const float2 a = __bfloat1622float2(v), b = __bfloat1622float2(x), c = __bfloat1622float2(y);
    return __floats2bfloat162_rn(a.x * b.x + c.x, a.y * b.y + c.y);
#endif
}

// x = 0.999, y = 0.001: a contracting map towards 1, so values stay normal in every dtype.
template <class T> __global__ void fma_sweep(T* a, size_t items, int k, T x, T y) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < items; i += stride) {
        T v = a[i];
        #pragma unroll 8
        for (int r = 0; r < k; ++r) v = fma_step(v, x, y);
        a[i] = v;
    }
}

template <class T> void launch(lab::Stream& s, void* a, size_t items, int k, T x, T y) {
    const size_t need = (items + kBlock - 1) / kBlock, cap = 1 << 16;  // then grid-stride
    const unsigned grid = static_cast<unsigned>(need < cap ? need : cap);
    fma_sweep<T><<<grid, kBlock, 0, static_cast<cudaStream_t>(s.native_handle())>>>(static_cast<T*>(a), items, k, x, y);
    LAB_CUDA(cudaGetLastError());
}

struct IntensityGpu : lab_02_04::IntensityKernels {
    explicit IntensityGpu(lab::Device&) {}
    lab::Launch fma_sweep(void* a, std::size_t n, int k, lab::Dtype dtype) override {
        switch (dtype) {
            case lab::Dtype::fp32: return [=](lab::Stream& s) { launch<float>(s, a, n, k, 0.999f, 0.001f); };
            case lab::Dtype::fp64: return [=](lab::Stream& s) { launch<double>(s, a, n, k, 0.999, 0.001); };
            case lab::Dtype::fp16:
                return [=](lab::Stream& s) { launch<__half2>(s, a, n / 2, k, __float2half2_rn(0.999f), __float2half2_rn(0.001f)); };
            case lab::Dtype::bf16:
                return [=](lab::Stream& s) {
                    launch<__nv_bfloat162>(s, a, n / 2, k, __float2bfloat162_rn(0.999f), __float2bfloat162_rn(0.001f));
                };
            default: throw std::invalid_argument("lab_02_04: no FMA sweep in this dtype");
        }
    }
};

}  // namespace

LAB_COMPANION(lab_02_04::IntensityKernels, IntensityGpu)
