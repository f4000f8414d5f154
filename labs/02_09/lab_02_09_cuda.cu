// Lesson 02.09's GPU kernels (its CUDA companion): lab's pointer chase and reads.
#include <lab/companion.hpp>
#include <lab/cuda_pointer_chase.cuh>

LAB_COMPANION(lab::ChaseKernels, lab::cuda::ChaseKernelsGpu)
