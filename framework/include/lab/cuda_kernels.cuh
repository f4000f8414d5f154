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
// iterations * threads; bytes = one T stored per thread (sizeof(T): 8 for double). `x` and `y`
// come from the host so the compiler cannot fold the chains.
// The k loop is unrolled kFmaUnroll times: a loop's counter, compare and branch take issue slots
// the FMAs would use: nvcc's default (x4, 32 FMAs per trip) leaves 5-7 of every 37-39 sm_90
// instructions to them (0.82-0.87 of the peak); at x32 it is 5-9 of 261-265 (0.97-0.98). A
// trip count that is not a multiple of 32 runs its remainder in a short loop after it.
constexpr int kFmaUnroll = 32;
template <class T>
__global__ void fma_peak(T* out, long long iterations, float x, float y) {
    T acc[kChains];
#pragma unroll
    for (int i = 0; i < kChains; ++i) acc[i] = from_float<T>(1.0f + 0.001f * i + 1e-6f * threadIdx.x);
    const T tx = from_float<T>(x), ty = from_float<T>(y);
#pragma unroll kFmaUnroll
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
// Each trip of a thread issues kLoadsInFlight independent 16-byte loads (elements i, i + stride,
// ...: every warp access stays coalesced) before it uses any: with one load in flight
// per thread too few bytes are on their way to cover DRAM latency, and the kernels reach only
// 0.8-0.9 of cudaMemcpy's rate. A tail loop takes the elements that do not fill a whole trip.
constexpr int kLoadsInFlight = 4;

__global__ void stream_read(const float4* a, std::size_t n4, float* sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    float s = 0;
    for (; i + (kLoadsInFlight - 1) * stride < n4; i += kLoadsInFlight * stride) {
        float4 v[kLoadsInFlight];
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) v[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += stride) {
        float4 v = a[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    if (s == -1.2345e-38f) sink[0] = s;  // never true for real data: keeps the loads alive
}

__global__ void stream_copy(float4* a, const float4* b, std::size_t n4) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    for (; i + (kLoadsInFlight - 1) * stride < n4; i += kLoadsInFlight * stride) {
        float4 v[kLoadsInFlight];
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) v[u] = b[i + u * stride];
#pragma unroll
        for (int u = 0; u < kLoadsInFlight; ++u) a[i + u * stride] = v[u];
    }
    for (; i < n4; i += stride) a[i] = b[i];
}

// Triad has two inputs: kLoadsInFlight / 2 elements per trip keep its loads in flight at
// kLoadsInFlight and its registers at 32 or fewer, so 8 blocks of 256 threads fit on an SM (with
// 4 elements per trip it needs 40 and only 6 fit).
__global__ void stream_triad(float4* a, const float4* b, const float4* c, float q, std::size_t n4) {
    constexpr int kTrip = kLoadsInFlight / 2;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    for (; i + (kTrip - 1) * stride < n4; i += kTrip * stride) {
        float4 x[kTrip], y[kTrip];
#pragma unroll
        for (int u = 0; u < kTrip; ++u) {
            x[u] = b[i + u * stride];
            y[u] = c[i + u * stride];
        }
#pragma unroll
        for (int u = 0; u < kTrip; ++u)
            a[i + u * stride] = make_float4(x[u].x + q * y[u].x, x[u].y + q * y[u].y, x[u].z + q * y[u].z, x[u].w + q * y[u].w);
    }
    for (; i < n4; i += stride) {
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
