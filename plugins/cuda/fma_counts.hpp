// What the CUDA backend's FMA peak kernels (lab/cuda_kernels.cuh's fma_peak) do per launch, in
// plain C++ so the counts are checked by a test on a machine without a GPU. FLOP = 2 x lanes x
// chains x iterations x threads (lanes 2 for the packed 16-bit pairs); bytes = the one value each
// thread stores at the end: 8 for fp64, 4 for fp32 and for a half2/bfloat162 pair.
// device_kernels.cu checks these against the kernels' own types and constants.
#pragma once

#include "lab/stream_kernels.hpp"

namespace lab::cuda {

enum class FmaType { fp32, fp64, fp16x2, bf16x2 };

constexpr int fma_lanes(FmaType t) { return t == FmaType::fp16x2 || t == FmaType::bf16x2 ? 2 : 1; }
constexpr int fma_stored_bytes(FmaType t) { return t == FmaType::fp64 ? 8 : 4; }

inline double fma_peak_threads(unsigned blocks) { return static_cast<double>(blocks) * stream_kernels::kGpuBlock; }

// FLOP of one launch_fma_peak with this grid.
inline double fma_peak_flops(FmaType t, long long iterations, unsigned blocks) {
    return 2.0 * fma_lanes(t) * stream_kernels::kGpuFmaChains * static_cast<double>(iterations) * fma_peak_threads(blocks);
}
// Bytes of one launch_fma_peak with this grid (DRAM writes; it reads nothing).
inline double fma_peak_bytes(FmaType t, unsigned blocks) { return fma_stored_bytes(t) * fma_peak_threads(blocks); }

}  // namespace lab::cuda
