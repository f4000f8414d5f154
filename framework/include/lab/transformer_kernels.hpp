// The kernels of a transformer forward pass (opt-in), one interface with a CPU side
// (<lab/cpu_transformer_kernels.hpp>) and a CUDA side (<lab/cuda_transformer_kernels.cuh>, for a
// companion: LAB_COMPANION(lab::TransformerKernels, lab::cuda::TransformerKernelsGpu)). Lessons
// that run a small model (02.02's forward pass, 02.07's allocations) call them op by op; the
// counts of each op come from lab/transformer.hpp's forward_ops, never from here.
//
// Everything is fp32, row-major, one sequence (batch 1): x[n, h] holds n tokens' hidden states.
// Heads are laid out head-major within a row: q[n, heads * d], k/v cache[t, kv_heads * d].
// (C++17: the companion includes it.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "lab/device.hpp"

namespace lab {

struct TransformerKernels {
    static constexpr const char* kInterface = "lab::TransformerKernels/1";
    virtual ~TransformerKernels() = default;
    // x[i] = table[tokens[i]] (h floats per row): a gather, no FLOP.
    virtual Launch embedding(const std::int32_t* tokens, const float* table, float* x, int n, int h) = 0;
    // y[i] = x[i] / rms(x[i]) * w, rms = sqrt(mean(x^2) + 1e-5).
    virtual Launch rms_norm(const float* x, const float* w, float* y, int n, int h) = 0;
    // y[n, out] = x[n, in] W[in, out].
    virtual Launch matmul(const float* x, const float* w, float* y, int n, int in, int out) = 0;
    // Rotates pairs (2j, 2j+1) of every head of q[n, heads * d] by position (first + i) * theta^(-2j/d),
    // theta = 10000; cos and sin computed in the kernel.
    virtual Launch rope(float* q, int n, int heads, int d, int first) = 0;
    // Copies n rows of width w from src into cache rows first .. first + n.
    virtual Launch cache_write(const float* src, float* cache, int n, int w, int first) = 0;
    // Causal attention of n new tokens (positions past .. past + n - 1) over the cache's first
    // past + n rows: scores = q k / sqrt(d), softmax, times v. Grouped heads: query head j reads
    // KV head j / (heads / kv_heads). scores is scratch of heads x n x (past + n) floats.
    virtual Launch attention(const float* q, const float* k_cache, const float* v_cache, float* scores, float* out,
                             int n, int past, int heads, int kv_heads, int d) = 0;
    // out = silu(gate) * up, n elements.
    virtual Launch silu_gate(const float* gate, const float* up, float* out, std::size_t n) = 0;
    // x += y, n elements.
    virtual Launch add(float* x, const float* y, std::size_t n) = 0;
};

}  // namespace lab
