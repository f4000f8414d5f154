// Lesson 02.10's GPU kernels (its CUDA companion): lab's transformer kernels.
#include <lab/companion.hpp>
#include <lab/cuda_transformer_kernels.cuh>

LAB_COMPANION(lab::TransformerKernels, lab::cuda::TransformerKernelsGpu)
