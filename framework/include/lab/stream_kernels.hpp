// The streaming and FMA kernels several lessons place on the roofline (opt-in): one interface,
// implemented for CPUs by <lab/cpu_stream_kernels.hpp> and for GPUs by
// <lab/cuda_stream_kernels.cuh> (a lesson's companion exports it with LAB_COMPANION). A lesson
// gets the device's implementation with
//     auto k = session.kernels<lab::StreamKernels, lab::cpu::StreamKernelsCpu>();
// and states each workload's counts with the functions below, from the device's facts only, so a
// recorded run's plan replays on any machine. (C++17: a companion's .cu includes it.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "lab/device.hpp"

namespace lab {

struct StreamKernels {
    static constexpr const char* kInterface = "lab::StreamKernels/1";
    virtual ~StreamKernels() = default;
    // sum of a[0..n): FLOP n, bytes 4n. `sink` receives per-thread sums (64 floats per thread on
    // a CPU; 1 float on a GPU) so the loads cannot be optimised away.
    virtual Launch read(const float* a, std::size_t n, float* sink) = 0;
    // a = b: FLOP 0, bytes 8n.
    virtual Launch copy(float* a, const float* b, std::size_t n) = 0;
    // a = b + q c: FLOP 2n, bytes 12n (no write-allocate counted).
    virtual Launch triad(float* a, const float* b, const float* c, float q, std::size_t n) = 0;
    // k chained FMAs per element, in place: FLOP 2kn, bytes 8n, AI k/4.
    virtual Launch fma_per_element(float* a, std::size_t n, int k) = 0;
    // Independent FMA chains on every thread (the calibration kernel): counts from fma_peak_counts.
    // `out` holds one float per thread (64 MiB is plenty).
    virtual Launch fma_peak(float* out, std::int64_t iterations) = 0;
    // One dependent chain of FMAs on one thread: latency bound. `out` holds 8 bytes.
    virtual Launch dependent_chain(void* out, std::int64_t iterations) = 0;
};

namespace stream_kernels {

// Launch geometry the GPU implementation uses, stated here because the FMA peak's FLOP count
// depends on it: 8 blocks of 256 threads per SM, 8 independent chains per thread.
inline constexpr int kGpuBlock = 256;
inline constexpr int kGpuBlocksPerSm = 8;
inline constexpr int kGpuFmaChains = 8;
// The CPU implementation: 12 independent vector chains per thread (lab::cpu::kFmaChains).
inline constexpr int kCpuFmaChains = 12;

inline unsigned gpu_blocks(const DeviceFacts& f) { return static_cast<unsigned>(std::max(1, f.compute_units) * kGpuBlocksPerSm); }

// fp32 lanes of the CPU kernel variant the device chose ("avx512" 16, "avx2" 8, else 1).
inline int cpu_fp32_lanes(const DeviceFacts& f) { return f.simd == "avx512" ? 16 : f.simd == "avx2" ? 8 : 1; }

// FMA peak: 2 x lanes x chains x iterations per thread; one float stored per thread.
inline double fma_peak_flops(DeviceKind kind, const DeviceFacts& f, int threads, std::int64_t iterations) {
    if (kind == DeviceKind::cuda)
        return 2.0 * kGpuFmaChains * static_cast<double>(iterations) * gpu_blocks(f) * kGpuBlock;
    return 2.0 * cpu_fp32_lanes(f) * kCpuFmaChains * static_cast<double>(iterations) * threads;
}
inline double fma_peak_bytes(DeviceKind kind, const DeviceFacts& f, int threads) {
    return kind == DeviceKind::cuda ? 4.0 * gpu_blocks(f) * kGpuBlock : 4.0 * threads;
}

// The dependent chain: scalar fp64 on a CPU, fp32 on a GPU; 2 FLOP per FMA, 8 bytes stored.
inline std::string chain_pipe(DeviceKind kind) { return kind == DeviceKind::cuda ? "fp32.simt" : "fp64.simt"; }
inline std::string chain_description(DeviceKind kind) {
    return kind == DeviceKind::cuda ? "one thread running one dependent chain of FFMAs"
                                    : "one dependent chain of scalar fp64 FMAs on one thread";
}

}  // namespace stream_kernels
}  // namespace lab
