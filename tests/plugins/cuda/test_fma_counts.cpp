// The CUDA backend's FMA peak counts (plugins/cuda/fma_counts.hpp), checked without a GPU:
// every thread stores one value of its type, so fp64 counts 8 bytes per thread, not 4.
#include <catch2/catch.hpp>

#include "fma_counts.hpp"

using namespace lab::cuda;

TEST_CASE("the FMA peak stores one value of its own type per thread", "[cuda_counts]") {
    const unsigned blocks = 132 * 8;  // an H100/H200's grid: 8 blocks of 256 threads per SM
    const double threads = blocks * 256.0;
    CHECK(fma_peak_bytes(FmaType::fp64, blocks) == 8 * threads);
    CHECK(fma_peak_bytes(FmaType::fp32, blocks) == 4 * threads);
    CHECK(fma_peak_bytes(FmaType::fp16x2, blocks) == 4 * threads);  // one half2 pair
    CHECK(fma_peak_bytes(FmaType::bf16x2, blocks) == 4 * threads);
}

TEST_CASE("the FMA peak counts 2 FLOP per lane per FMA on every chain", "[cuda_counts]") {
    const unsigned blocks = 10;
    const double per_thread_fp32 = 2.0 * 8 * 1000;  // 8 chains, 1000 iterations
    CHECK(fma_peak_flops(FmaType::fp32, 1000, blocks) == per_thread_fp32 * blocks * 256);
    CHECK(fma_peak_flops(FmaType::fp64, 1000, blocks) == per_thread_fp32 * blocks * 256);
    CHECK(fma_peak_flops(FmaType::fp16x2, 1000, blocks) == 2 * per_thread_fp32 * blocks * 256);
    CHECK(fma_peak_flops(FmaType::bf16x2, 1000, blocks) == 2 * per_thread_fp32 * blocks * 256);
    // The lessons' fp32 count (lab/stream_kernels.hpp) is the same kernel's.
    lab::DeviceFacts f;
    f.compute_units = 132;
    CHECK(fma_peak_flops(FmaType::fp32, 4096, 132 * 8) == lab::stream_kernels::fma_peak_flops(lab::DeviceKind::cuda, f, 1, 4096));
    CHECK(fma_peak_bytes(FmaType::fp32, 132 * 8) == lab::stream_kernels::fma_peak_bytes(lab::DeviceKind::cuda, f, 1));
}
