// The CUDA backend's kernels and their launchers (see device_kernels.hpp).
#include "device_kernels.hpp"

#include "lab/cuda_check.hpp"
#include "lab/cuda_kernels.cuh"

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

double fma_peak_flops(FmaType t, long long iterations, unsigned blocks) {
    long long threads = static_cast<long long>(blocks) * cuda_kernels::kBlock;
    switch (t) {
        case FmaType::fp32: return cuda_kernels::fma_peak_flops<float>(iterations, threads);
        case FmaType::fp64: return cuda_kernels::fma_peak_flops<double>(iterations, threads);
        case FmaType::fp16x2: return cuda_kernels::fma_peak_flops<__half2>(iterations, threads);
        case FmaType::bf16x2: return cuda_kernels::fma_peak_flops<__nv_bfloat162>(iterations, threads);
    }
    return 0;
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
