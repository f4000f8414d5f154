// Lesson 02.08's GPU kernels (its CUDA companion): lab's quantized GEMV.
#include <lab/companion.hpp>
#include <lab/cuda_quantized_gemv.cuh>

LAB_COMPANION(lab::QuantizedGemv, lab::cuda::QuantizedGemvGpu)
