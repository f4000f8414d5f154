// Lesson 02.07's GPU kernels (its CUDA companion): lab's transformer kernels, as 02.02's.
#include <lab/companion.hpp>
#include <lab/cuda_transformer_kernels.cuh>

LAB_COMPANION(lab::TransformerKernels, lab::cuda::TransformerKernelsGpu)
