// Lesson 02.11's kernels: CPU side in lab_02_11.cpp, GPU side in lab_02_11_cuda.cu. (C++17.)
#pragma once

#include <lab/device.hpp>

namespace lab_02_11 {

struct LaunchKernels {
    static constexpr const char* kInterface = "lab_02_11::LaunchKernels/1";
    virtual ~LaunchKernels() = default;
    // One kernel that does nothing: what is left is its launch.
    virtual lab::Launch empty() = 0;
    // `tasks` kernels back to back, one dispatch each: a[i] = 0.999 a[i] + 0.001 for i < n
    // (2 FLOP and 8 bytes per element and task).
    virtual lab::Launch update(float* a, std::size_t n, int tasks) = 0;
    // The same `tasks` kernels in one dispatch, prepared once outside the timing: a CUDA graph
    // captured and replayed on a GPU, a pre-built task list run by one dispatch of the thread team
    // on a CPU.
    virtual lab::Launch update_batched(float* a, std::size_t n, int tasks) = 0;
};

}  // namespace lab_02_11
