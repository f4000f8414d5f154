// A matrix-vector product over weights in reduced precision (opt-in): W in one of the layouts of
// <lab/quantize.hpp>, dequantised as the kernel reads it; one interface with a CPU side
// (<lab/cpu_quantized_gemv.hpp>) and a CUDA side (<lab/cuda_quantized_gemv.cuh>, for a
// companion: LAB_COMPANION(lab::QuantizedGemv, lab::cuda::QuantizedGemvGpu)). Lesson 02.08
// compares the formats with it. (C++17: the companion includes it.)
#pragma once

#include "lab/device.hpp"

namespace lab {

// A weight matrix in device memory, laid out as lab::quantize::Encoded says.
struct QuantizedWeights {
    const void* data = nullptr;
    const void* scales = nullptr;  // int8: fp32 per row; mxfp4/nvfp4: one byte per block
    float global = 1;              // fp8 and nvfp4: the tensor's scale
    int rows = 0, cols = 0;
    Dtype dtype = Dtype::fp32;     // fp32, fp16, bf16, int8, fp8_e4m3, mxfp4, nvfp4
};

struct QuantizedGemv {
    static constexpr const char* kInterface = "lab::QuantizedGemv/1";
    virtual ~QuantizedGemv() = default;
    // y[rows] = W x, x and y fp32, each weight dequantised as it is read.
    virtual Launch gemv(const QuantizedWeights& w, const float* x, float* y) = 0;
};

}  // namespace lab
