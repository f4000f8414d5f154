// Host-side launchers of the CUDA backend's own kernels (device_kernels.cu): the pieces of the
// measurement method that run on the GPU (the stream-holding spin kernel, the SM-clock sampler)
// and the calibration kernels. Plain C++: host files include this without nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fma_counts.hpp"
#include "lab/device.hpp"

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

// FmaType and the FMA peak's FLOP and byte counts: fma_counts.hpp.
void launch_fma_peak(cudaStream_t s, FmaType t, void* out, long long iterations, unsigned blocks);
// The read, copy and triad kernels keep this many 16-byte loads in flight per thread
// (cuda_kernels::kLoadsInFlight; the ceilings' methods say it).
constexpr int kStreamLoadsInFlight = 4;
void launch_read(cudaStream_t s, const float* a, std::size_t n, float* sink, unsigned blocks);
void launch_copy(cudaStream_t s, float* a, const float* b, std::size_t n, unsigned blocks);
void launch_triad(cudaStream_t s, float* a, const float* b, const float* c, float q, std::size_t n, unsigned blocks);

// Fills `elements` values of `dtype` (fp64, fp32/tf32, fp16, bf16, fp8 e4m3, int8) with
// pseudo-random numbers that depend only on `seed` and the index: uniform in [-1, 1) for the
// floating types, all of [-128, 127] for int8. GEMM ceilings are measured on such data, because
// tensor cores multiply zeros ~13% faster (less switching, less power) than any real data.
void launch_fill_random(cudaStream_t s, void* data, std::size_t elements, Dtype dtype, std::uint64_t seed);

// Captures `kernels` empty-kernel launches into a CUDA graph and returns its executable form.
cudaGraphExec_t make_empty_kernel_graph(cudaStream_t s, int kernels);

}  // namespace lab::cuda
