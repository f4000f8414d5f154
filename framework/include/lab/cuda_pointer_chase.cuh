// lab::ChaseKernels on a GPU (pointer_chase.hpp): one-thread chases (global memory through L1
// and L2; shared memory), a grid-wide read (4 blocks of 256 threads per SM; a set is read whole
// by every block until it outnumbers the grid's threads and one SM's share is over twice its L1:
// pointer_chase::read_grid), and a register-resident dependent chain. For a lesson's CUDA
// companion (.cu files only).
#pragma once

#include <cuda_runtime.h>

#include "lab/cuda_check.hpp"
#include "lab/pointer_chase.hpp"

namespace lab::cuda {
namespace chase_detail {

constexpr int kStep = 1237;  // coprime to kSharedChaseLinks: i -> i + kStep is one cycle through all

__global__ void chase(void** cursor, long long hops) {
    void* p = *cursor;
    for (long long h = 0; h < hops; ++h) p = *static_cast<void**>(p);
    *cursor = p;
}
// One block of kSharedFillThreads: they write the cycle together (16 stores each, where one thread
// writing all 4096 links took ~16-32k cycles of a 4096-hop chase's ~135k, timed as latency), then
// thread 0 alone chases it.
constexpr int kSharedFillThreads = 256;
__global__ void shared_chase(long long hops, unsigned* out) {
    __shared__ unsigned next[kSharedChaseLinks];
    for (int i = threadIdx.x; i < kSharedChaseLinks; i += blockDim.x) next[i] = (i + kStep) % kSharedChaseLinks;  // one cycle through all
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned p = 0;
    for (long long h = 0; h < hops; ++h) p = next[p];
    out[0] = p;
}
__global__ void register_chain(long long ops, unsigned* out) {
    unsigned x = out[1];
    for (long long i = 0; i < ops; ++i) asm volatile("add.u32 %0, %0, 40503;" : "+r"(x));
    out[1] = x;
}
// One 16-byte load, issued as written: asm volatile is neither merged with another nor hoisted
// out of the passes (every pass reads the same values, which a compiler may otherwise read once).
__device__ inline float4 load16(const float4* p) {
    float4 v;
    asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
// `reps` passes over a[0, n4), each thread's share as pointer_chase::read_walk says (the whole set
// per block below `split_from` elements, decided on the host: pointer_chase::read_grid), four
// loads in flight per thread.
__global__ void read(const float4* a, size_t n4, size_t split_from, long long reps, float* out) {
    const pointer_chase::ReadWalk w = pointer_chase::read_walk(n4, split_from, gridDim.x, blockDim.x, blockIdx.x, threadIdx.x);
    float s = 0;
    pointer_chase::walk_reads(w, reps, [&](size_t i) { return load16(a + i); }, [&](const float4& v) { s += v.x + v.y + v.z + v.w; });
    if (s == 1.0f) out[2] = s;  // never (the array is zeros), but the compiler cannot know
}

}  // namespace chase_detail

struct ChaseKernelsGpu : ChaseKernels {
    explicit ChaseKernelsGpu(lab::Device& d) : sink(d.allocate(64)), grid(pointer_chase::read_grid(d.facts())) {}
    static cudaStream_t st(lab::Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }
    lab::Launch chase(void** cursor, std::int64_t hops) override {
        return [=](lab::Stream& s) { chase_detail::chase<<<1, 1, 0, st(s)>>>(cursor, hops); LAB_CUDA(cudaGetLastError()); };
    }
    lab::Launch read(const float* a, std::size_t n, std::int64_t reps) override {
        float* out = sink->as<float>();
        const pointer_chase::ReadGrid g = grid;
        return [=](lab::Stream& s) {
            chase_detail::read<<<g.blocks, pointer_chase::kReadThreads, 0, st(s)>>>(reinterpret_cast<const float4*>(a), n / 4, g.split_from,
                                                                                    reps, out);
            LAB_CUDA(cudaGetLastError());
        };
    }
    lab::Launch register_chain(std::int64_t ops) override {
        unsigned* out = sink->as<unsigned>();
        return [=](lab::Stream& s) { chase_detail::register_chain<<<1, 1, 0, st(s)>>>(ops, out); LAB_CUDA(cudaGetLastError()); };
    }
    lab::Launch shared_chase(std::int64_t hops) override {
        unsigned* out = sink->as<unsigned>();
        return [=](lab::Stream& s) { chase_detail::shared_chase<<<1, chase_detail::kSharedFillThreads, 0, st(s)>>>(hops, out); LAB_CUDA(cudaGetLastError()); };
    }
    lab::BufferPtr sink;
    // The read's grid and where it splits a set, from the device facts: read_workload counts its
    // bytes (read_passes) from the same facts by the same function.
    pointer_chase::ReadGrid grid;
};

}  // namespace lab::cuda

