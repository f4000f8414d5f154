// Lesson 02.12's GPU kernels (its CUDA companion): lab's streaming and FMA kernels.
#include <lab/companion.hpp>
#include <lab/cuda_stream_kernels.cuh>

LAB_COMPANION(lab::StreamKernels, lab::cuda::StreamKernelsGpu)
