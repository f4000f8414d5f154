// lab::QuantizedGemv on a GPU (opt-in, for a lesson's CUDA companion): one block per row; its
// threads stride over the row in coalesced steps, dequantising each weight as
// lab::quantize::decode reads it, and meet in a shared-memory sum. (C++17, compiled by nvcc.)
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "lab/cuda_check.hpp"
#include "lab/quantized_gemv.hpp"

namespace lab::cuda {

namespace quantized_gemv_detail {

constexpr int kBlock = 256;
__constant__ float kE2M1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};

__device__ float e4m3(unsigned char c) {
    __nv_fp8_e4m3 v;
    v.__x = c;
    return static_cast<float>(v);
}

// Value j of row r, as lab::quantize::decode reads it.
template <Dtype D> __device__ float value(const QuantizedWeights& w, size_t r, int j) {
    const size_t i = r * w.cols + j;
    const auto* u8 = static_cast<const unsigned char*>(w.data);
    if (D == Dtype::fp32) return static_cast<const float*>(w.data)[i];
    if (D == Dtype::fp16) return __half2float(static_cast<const __half*>(w.data)[i]);
    if (D == Dtype::bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(w.data)[i]);
    if (D == Dtype::int8) return static_cast<signed char>(u8[i]) * static_cast<const float*>(w.scales)[r];
    if (D == Dtype::fp8_e4m3) return e4m3(u8[i]) * w.global;
    const int B = D == Dtype::mxfp4 ? 32 : 16;
    const size_t b = i / B, k = i % B;
    const unsigned char byte = u8[b * (B / 2) + k % (B / 2)], code = k < static_cast<size_t>(B / 2) ? (byte & 15) : (byte >> 4);
    const unsigned char s = static_cast<const unsigned char*>(w.scales)[b];
    return kE2M1[code] * (D == Dtype::mxfp4 ? __uint_as_float(static_cast<unsigned>(s) << 23) : e4m3(s) * w.global);
}

template <Dtype D> __global__ void gemv_kernel(QuantizedWeights w, const float* x, float* y) {
    __shared__ float part[kBlock];
    float acc = 0;
    for (int j = threadIdx.x; j < w.cols; j += kBlock) acc += value<D>(w, blockIdx.x, j) * x[j];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kBlock / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}

}  // namespace quantized_gemv_detail

struct QuantizedGemvGpu : QuantizedGemv {
    explicit QuantizedGemvGpu(Device&) {}
    Launch gemv(const QuantizedWeights& w, const float* x, float* y) override {
        return [=](Stream& s) {
            auto st = static_cast<cudaStream_t>(s.native_handle());
            switch (w.dtype) {
                case Dtype::fp16: quantized_gemv_detail::gemv_kernel<Dtype::fp16><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                case Dtype::bf16: quantized_gemv_detail::gemv_kernel<Dtype::bf16><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                case Dtype::int8: quantized_gemv_detail::gemv_kernel<Dtype::int8><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                case Dtype::fp8_e4m3: quantized_gemv_detail::gemv_kernel<Dtype::fp8_e4m3><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                case Dtype::mxfp4: quantized_gemv_detail::gemv_kernel<Dtype::mxfp4><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                case Dtype::nvfp4: quantized_gemv_detail::gemv_kernel<Dtype::nvfp4><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y); break;
                default: quantized_gemv_detail::gemv_kernel<Dtype::fp32><<<w.rows, quantized_gemv_detail::kBlock, 0, st>>>(w, x, y);
            }
            LAB_CUDA(cudaGetLastError());
        };
    }
};

}  // namespace lab::cuda
