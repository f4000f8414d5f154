// CUDA kernels that reach a GPU's ceilings, shared by the CUDA backend (calibration) and the
// lessons' _cuda companions, as lab/cpu_kernels.hpp is for CPUs: a lesson's "FFMA kernel" and the
// ceiling it is held against are the same code. Each kernel states its FLOP and byte counts.
// Include only from .cu files (nvcc); keep fmt and Boost out of them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace lab::cuda_kernels {

// Independent FMA chains per thread. With 4-cycle FMA latency and >= 16 warps per SM (4 per
// sub-partition), 8 chains keep every FMA pipe busy.
constexpr int kChains = 8;
constexpr int kBlock = 256;

// Lanes per FMA instruction: 1 for float/double, 2 for half2/bfloat162 (HFMA2).
template <class T> struct Lanes { static constexpr int value = 1; };
template <> struct Lanes<__half2> { static constexpr int value = 2; };
template <> struct Lanes<__nv_bfloat162> { static constexpr int value = 2; };

template <class T> __device__ inline T fma_op(T a, T x, T y) { return a * x + y; }
template <> __device__ inline float fma_op(float a, float x, float y) { return __fmaf_rn(a, x, y); }
template <> __device__ inline double fma_op(double a, double x, double y) { return __fma_rn(a, x, y); }
template <> __device__ inline __half2 fma_op(__half2 a, __half2 x, __half2 y) { return __hfma2(a, x, y); }
template <> __device__ inline __nv_bfloat162 fma_op(__nv_bfloat162 a, __nv_bfloat162 x, __nv_bfloat162 y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __hfma2(a, x, y);
#else
    return a;  // no native bf16 FMA before sm_80: the backend does not measure bf16.simt there
#endif
}

template <class T> __device__ inline T from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline double from_float<double>(float v) { return v; }
template <> __device__ inline __half2 from_float<__half2>(float v) { return __float2half2_rn(v); }
template <> __device__ inline __nv_bfloat162 from_float<__nv_bfloat162>(float v) { return __float2bfloat162_rn(v); }

// FMA peak: every thread runs kChains chains `iterations` long. FLOP = 2 * lanes * kChains *
// iterations * threads; bytes = one T stored per thread. `x` and `y` come from the host so the
// compiler cannot fold the chains.
template <class T>
__global__ void fma_peak(T* out, long long iterations, float x, float y) {
    T acc[kChains];
#pragma unroll
    for (int i = 0; i < kChains; ++i) acc[i] = from_float<T>(1.0f + 0.001f * i + 1e-6f * threadIdx.x);
    const T tx = from_float<T>(x), ty = from_float<T>(y);
    for (long long k = 0; k < iterations; ++k) {
#pragma unroll
        for (int i = 0; i < kChains; ++i) acc[i] = fma_op(acc[i], tx, ty);
    }
    T s = acc[0];
#pragma unroll
    for (int i = 1; i < kChains; ++i) s = s + acc[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <class T> inline double fma_peak_flops(long long iterations, long long threads) {
    return 2.0 * Lanes<T>::value * kChains * static_cast<double>(iterations) * static_cast<double>(threads);
}

// Non-template kernels live in an unnamed namespace: every .cu that includes this header gets
// its own copy, so two plugins (or two files) never clash over one symbol.
namespace {

// One thread, one dependent chain: each FMA waits for the last (latency bound).
// FLOP = 2 * iterations; bytes = one float stored.
__global__ void dependent_chain(float* out, long long iterations, float x, float y) {
    float a = 1.0f;
    for (long long k = 0; k < iterations; ++k) a = __fmaf_rn(a, x, y);
    out[0] = a;
}

// Streaming kernels over float4 (16-byte accesses), grid-stride; n4 = elements / 4.
//   read:  sum of a            FLOP n,  bytes 4n (the sum is stored only if it is impossible)
//   copy:  a = b               FLOP 0,  bytes 8n
//   triad: a = b + s*c         FLOP 2n, bytes 12n (no write-allocate counted)
__global__ void stream_read(const float4* a, std::size_t n4, float* sink) {
    float s = 0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float4 v = a[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    if (s == -1.2345e-38f) sink[0] = s;  // never true for real data: keeps the loads alive
}

__global__ void stream_copy(float4* a, const float4* b, std::size_t n4) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        a[i] = b[i];
}

__global__ void stream_triad(float4* a, const float4* b, const float4* c, float q, std::size_t n4) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + q * y.x, x.y + q * y.y, x.z + q * y.z, x.w + q * y.w);
    }
}

// A triad on plain floats, for sizes that are not multiples of 4 (n = 1).
__global__ void scalar_triad(float* a, const float* b, const float* c, float q, std::size_t n) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        a[i] = b[i] + q * c[i];
}

// k FMAs per element loaded, in place (mixbench): FLOP 2kn, bytes 8n, AI = k/4.
__global__ void fma_per_element(float4* a, std::size_t n4, int k) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float4 v = a[i];
        for (int r = 0; r < k; ++r) {
            v.x = __fmaf_rn(v.x, 0.999f, 0.001f);
            v.y = __fmaf_rn(v.y, 0.999f, 0.001f);
            v.z = __fmaf_rn(v.z, 0.999f, 0.001f);
            v.w = __fmaf_rn(v.w, 0.999f, 0.001f);
        }
        a[i] = v;
    }
}

__global__ void empty_kernel() {}

}  // namespace

// Grid for streaming kernels: enough blocks to fill every SM several times over.
inline unsigned stream_grid(int sms) { return static_cast<unsigned>(sms > 0 ? sms * 8 : 1024); }

}  // namespace lab::cuda_kernels
