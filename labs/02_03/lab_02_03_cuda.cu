// Lesson 02.03's GPU kernels (its CUDA companion): lab's memory-hierarchy kernels.
#include <lab/companion.hpp>
#include <lab/cuda_pointer_chase.cuh>

LAB_COMPANION(lab::ChaseKernels, lab::cuda::ChaseKernelsGpu)
