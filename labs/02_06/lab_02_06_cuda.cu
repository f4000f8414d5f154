// Lesson 02.06's GPU kernel (its CUDA companion): a bf16 GEMV, y = x W, split over rows so that
// every SM streams weights; partial sums meet in y with atomics.
#include <cuda_bf16.h>

#include <lab/companion.hpp>
#include <lab/cuda_check.hpp>

#include "kernels_02_06.hpp"

namespace {

constexpr int kBlock = 256, kRowsPerBlock = 64;

// Thread t of block (bx, by) owns columns 2t, 2t+1 of the block's 512 and rows by*64 .. +64.
__global__ void gemv_bf16(const __nv_bfloat162* w, const __nv_bfloat16* x, float* y, int d) {
    const int pair = blockIdx.x * kBlock + threadIdx.x;  // column pair
    if (2 * pair >= d) return;
    const int r0 = blockIdx.y * kRowsPerBlock, r1 = min(d, r0 + kRowsPerBlock);
    float a = 0, b = 0;
    for (int r = r0; r < r1; ++r) {
        const float xr = __bfloat162float(x[r]);
        const float2 v = __bfloat1622float2(w[static_cast<size_t>(r) * (d / 2) + pair]);
        a += xr * v.x, b += xr * v.y;
    }
    atomicAdd(&y[2 * pair], a);
    atomicAdd(&y[2 * pair + 1], b);
}

struct DecodeGpu : lab_02_06::DecodeKernels {
    explicit DecodeGpu(lab::Device&) {}
    lab::Launch gemv(const void* w, const void* x, float* y, int d) override {
        return [=](lab::Stream& s) {
            auto st = static_cast<cudaStream_t>(s.native_handle());
            LAB_CUDA(cudaMemsetAsync(y, 0, sizeof(float) * d, st));
            const dim3 grid((d / 2 + kBlock - 1) / kBlock, (d + kRowsPerBlock - 1) / kRowsPerBlock);
            gemv_bf16<<<grid, kBlock, 0, st>>>(static_cast<const __nv_bfloat162*>(w), static_cast<const __nv_bfloat16*>(x), y, d);
            LAB_CUDA(cudaGetLastError());
        };
    }
};

}  // namespace

LAB_COMPANION(lab_02_06::DecodeKernels, DecodeGpu)
