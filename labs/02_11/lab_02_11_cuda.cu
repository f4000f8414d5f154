// Lesson 02.11's GPU kernels (its CUDA companion): an empty kernel, a grid-stride in-place update
// launched once per task, and the same launches captured once into a CUDA graph and replayed.
#include <lab/companion.hpp>
#include <lab/cuda_check.hpp>

#include <vector>

#include "kernels_02_11.hpp"

namespace {

constexpr unsigned kBlock = 256;

__global__ void empty_kernel() {}

__global__ void update_kernel(float* a, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) a[i] = 0.999f * a[i] + 0.001f;
}

cudaStream_t native(lab::Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

struct LaunchGpu : lab_02_11::LaunchKernels {
    explicit LaunchGpu(lab::Device& d) : dev(d), cap(static_cast<unsigned>(d.facts().compute_units > 0 ? d.facts().compute_units : 1) * 8) {}
    ~LaunchGpu() override { for (cudaGraphExec_t g : graphs) cudaGraphExecDestroy(g); }
    unsigned grid(size_t n) const {
        const size_t need = (n + kBlock - 1) / kBlock;
        return static_cast<unsigned>(need < cap ? need : cap);
    }
    lab::Launch empty() override {
        return [](lab::Stream& s) {
            empty_kernel<<<1, 1, 0, native(s)>>>();
            LAB_CUDA(cudaGetLastError());
        };
    }
    lab::Launch update(float* a, std::size_t n, int tasks) override {
        const unsigned g = grid(n);
        return [=](lab::Stream& s) {
            for (int k = 0; k < tasks; ++k) update_kernel<<<g, kBlock, 0, native(s)>>>(a, n);
            LAB_CUDA(cudaGetLastError());
        };
    }
    // Captured here, once, on the measurement stream (as lab's calibration captures its graph of
    // empty kernels), instantiated and uploaded before any timing; each invocation replays it.
    lab::Launch update_batched(float* a, std::size_t n, int tasks) override {
        const unsigned g = grid(n);
        cudaStream_t st = native(dev.stream());
        cudaGraph_t graph;
        LAB_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int k = 0; k < tasks; ++k) update_kernel<<<g, kBlock, 0, st>>>(a, n);
        LAB_CUDA(cudaStreamEndCapture(st, &graph));
        cudaGraphExec_t exec;
        LAB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        LAB_CUDA(cudaGraphDestroy(graph));
        graphs.push_back(exec);
        LAB_CUDA(cudaGraphUpload(exec, st));
        LAB_CUDA(cudaStreamSynchronize(st));
        return [exec](lab::Stream& s) { LAB_CUDA(cudaGraphLaunch(exec, native(s))); };
    }
    lab::Device& dev;
    unsigned cap;  // 8 blocks per SM, then grid-stride
    std::vector<cudaGraphExec_t> graphs;
};

}  // namespace

LAB_COMPANION(lab_02_11::LaunchKernels, LaunchGpu)
