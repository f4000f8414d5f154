// Host-side launchers of the CUDA backend's own kernels (device_kernels.cu): the pieces of the
// measurement method that run on the GPU (the stream-holding spin kernel, the SM-clock sampler)
// and the calibration kernels. Plain C++: host files include this without nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace lab::cuda {

// Holds the stream until *flag (host-mapped) becomes non-zero, or timeout_ns passes (so a host
// that dies cannot wedge the GPU).
void launch_spin_until_released(cudaStream_t s, const volatile int* flag, unsigned long long timeout_ns);
// Per-SM clock samples: each of `blocks` one-thread blocks writes {clock64(), %globaltimer ns}
// of the SM it runs on into slots[(which * kMaxSms + smid) * 2 ...]. clock64 counters of
// different SMs are not synchronised, so a clock rate is only taken between two samples of the
// same SM.
constexpr int kMaxSms = 512;
void launch_clock_sample(cudaStream_t s, unsigned long long* slots, int which, unsigned blocks);
void launch_empty(cudaStream_t s);

enum class FmaType { fp32, fp64, fp16x2, bf16x2 };
// FLOP of one launch_fma_peak with this grid.
double fma_peak_flops(FmaType t, long long iterations, unsigned blocks);
void launch_fma_peak(cudaStream_t s, FmaType t, void* out, long long iterations, unsigned blocks);
void launch_read(cudaStream_t s, const float* a, std::size_t n, float* sink, unsigned blocks);
void launch_copy(cudaStream_t s, float* a, const float* b, std::size_t n, unsigned blocks);
void launch_triad(cudaStream_t s, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks);

// Captures `kernels` empty-kernel launches into a CUDA graph and returns its executable form.
cudaGraphExec_t make_empty_kernel_graph(cudaStream_t s, int kernels);

}  // namespace lab::cuda
