// The CUDA backend's kernels and their launchers (see device_kernels.hpp).
#include "device_kernels.hpp"

#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

#include "lab/cuda_check.hpp"
#include "lab/cuda_kernels.cuh"
#include "lab/random_bits.hpp"

namespace lab::cuda {

namespace {

__device__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_until_released(const volatile int* flag, unsigned long long timeout_ns) {
    unsigned long long start = global_timer_ns();
    while (*flag == 0 && global_timer_ns() - start < timeout_ns) {
    }
}

__global__ void clock_sample(unsigned long long* slots, int which) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid >= static_cast<unsigned>(kMaxSms)) return;
    unsigned long long* slot = slots + (static_cast<std::size_t>(which) * kMaxSms + smid) * 2;
    slot[0] = clock64();
    slot[1] = global_timer_ns();
}

void check_launch() { LAB_CUDA(cudaGetLastError()); }

// The counts fma_counts.hpp states are the kernels' own.
static_assert(cuda_kernels::kChains == stream_kernels::kGpuFmaChains && cuda_kernels::kBlock == stream_kernels::kGpuBlock,
              "fma_counts.hpp states the FMA peak's chains and block size");
static_assert(fma_stored_bytes(FmaType::fp32) == sizeof(float) && fma_stored_bytes(FmaType::fp64) == sizeof(double) &&
                  fma_stored_bytes(FmaType::fp16x2) == sizeof(__half2) &&
                  fma_stored_bytes(FmaType::bf16x2) == sizeof(__nv_bfloat162),
              "fma_counts.hpp states the bytes each FMA peak thread stores");
static_assert(kStreamLoadsInFlight == cuda_kernels::kLoadsInFlight, "device_kernels.hpp states the loads in flight");
static_assert(fma_lanes(FmaType::fp16x2) == cuda_kernels::Lanes<__half2>::value &&
                  fma_lanes(FmaType::bf16x2) == cuda_kernels::Lanes<__nv_bfloat162>::value &&
                  fma_lanes(FmaType::fp32) == cuda_kernels::Lanes<float>::value,
              "fma_counts.hpp states the FMA peak's lanes");

// The values of lab/random_bits.hpp, so a fill made here equals lab::fill_random's on the host.
using random_fill::unit;
template <class T> __device__ inline T random_value(std::uint64_t r) { return static_cast<T>(unit(r)); }
template <> __device__ inline double random_value<double>(std::uint64_t r) { return random_fill::unit_double(r); }
template <> __device__ inline __half random_value<__half>(std::uint64_t r) { return __float2half_rn(unit(r)); }
template <> __device__ inline __nv_bfloat16 random_value<__nv_bfloat16>(std::uint64_t r) { return __float2bfloat16_rn(unit(r)); }
template <> __device__ inline __nv_fp8_e4m3 random_value<__nv_fp8_e4m3>(std::uint64_t r) { return __nv_fp8_e4m3(unit(r)); }
template <> __device__ inline std::int8_t random_value<std::int8_t>(std::uint64_t r) { return random_fill::int8_value(r); }

template <class T>
__global__ void fill_random(T* out, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[i] = random_value<T>(random_fill::bits(seed, i));
}

template <class T> void fill(cudaStream_t s, void* data, std::size_t n, std::uint64_t seed) {
    const unsigned blocks = static_cast<unsigned>(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096);
    fill_random<T><<<blocks, 256, 0, s>>>(static_cast<T*>(data), n, seed);
    check_launch();
}

}  // namespace

void launch_spin_until_released(cudaStream_t s, const volatile int* flag, unsigned long long timeout_ns) {
    spin_until_released<<<1, 1, 0, s>>>(flag, timeout_ns);
    check_launch();
}

void launch_clock_sample(cudaStream_t s, unsigned long long* slots, int which, unsigned blocks) {
    clock_sample<<<blocks, 1, 0, s>>>(slots, which);
    check_launch();
}

void launch_empty(cudaStream_t s) {
    cuda_kernels::empty_kernel<<<1, 1, 0, s>>>();
    check_launch();
}

void launch_fma_peak(cudaStream_t s, FmaType t, void* out, long long iterations, unsigned blocks) {
    using namespace cuda_kernels;
    // x just below 1 and a small y keep every chain finite and normal in every type.
    switch (t) {
        case FmaType::fp32: fma_peak<float><<<blocks, kBlock, 0, s>>>(static_cast<float*>(out), iterations, 0.999f, 0.001f); break;
        case FmaType::fp64: fma_peak<double><<<blocks, kBlock, 0, s>>>(static_cast<double*>(out), iterations, 0.999f, 0.001f); break;
        case FmaType::fp16x2: fma_peak<__half2><<<blocks, kBlock, 0, s>>>(static_cast<__half2*>(out), iterations, 0.999f, 0.001f); break;
        case FmaType::bf16x2:
            fma_peak<__nv_bfloat162><<<blocks, kBlock, 0, s>>>(static_cast<__nv_bfloat162*>(out), iterations, 0.999f, 0.001f);
            break;
    }
    check_launch();
}

void launch_read(cudaStream_t s, const float* a, std::size_t n, float* sink, unsigned blocks) {
    cuda_kernels::stream_read<<<blocks, cuda_kernels::kBlock, 0, s>>>(reinterpret_cast<const float4*>(a), n / 4, sink);
    check_launch();
}

void launch_copy(cudaStream_t s, float* a, const float* b, std::size_t n, unsigned blocks) {
    cuda_kernels::stream_copy<<<blocks, cuda_kernels::kBlock, 0, s>>>(reinterpret_cast<float4*>(a),
                                                                      reinterpret_cast<const float4*>(b), n / 4);
    check_launch();
}

void launch_triad(cudaStream_t s, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks) {
    cuda_kernels::stream_triad<<<blocks, cuda_kernels::kBlock, 0, s>>>(
        reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<const float4*>(c), q, n / 4);
    check_launch();
}

void launch_fill_random(cudaStream_t s, void* data, std::size_t elements, Dtype dtype, std::uint64_t seed) {
    switch (dtype) {
        case Dtype::fp64: return fill<double>(s, data, elements, seed);
        case Dtype::fp32:
        case Dtype::tf32: return fill<float>(s, data, elements, seed);
        case Dtype::fp16: return fill<__half>(s, data, elements, seed);
        case Dtype::bf16: return fill<__nv_bfloat16>(s, data, elements, seed);
        case Dtype::fp8_e4m3: return fill<__nv_fp8_e4m3>(s, data, elements, seed);
        case Dtype::int8: return fill<std::int8_t>(s, data, elements, seed);
        default: break;
    }
    throw std::invalid_argument(std::string("no random fill for ") + to_string(dtype));
}

cudaGraphExec_t make_empty_kernel_graph(cudaStream_t s, int kernels) {
    cudaGraph_t graph;
    LAB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kernels; ++i) cuda_kernels::empty_kernel<<<1, 1, 0, s>>>();
    LAB_CUDA(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    LAB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    LAB_CUDA(cudaGraphDestroy(graph));
    return exec;
}

}  // namespace lab::cuda
