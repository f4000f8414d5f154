// lab::TransformerKernels on a GPU, for a lesson's CUDA companion:
//     LAB_COMPANION(lab::TransformerKernels, lab::cuda::TransformerKernelsGpu)
// Plain, readable kernels whose results match lab/cpu_transformer_kernels.hpp to float rounding;
// they are the reference a lesson's faster kernels are held against, so each is written to be
// obviously right rather than fast. Every launch is checked with LAB_CUDA; an empty op (n = 0)
// launches nothing, since a zero-sized grid is a CUDA error. Include only from .cu files (nvcc).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lab/cuda_check.hpp"
#include "lab/transformer_kernels.hpp"

namespace lab::cuda::transformer_kernels {

constexpr int kBlock = 256;      // threads per block of every 1-D kernel (a multiple of 32)
constexpr int kTile = 16;        // matmul tiles are kTile x kTile
constexpr unsigned kMaxGrid = 65535;  // grid-stride kernels loop over whatever one grid does not cover

// Blocks for `items` threads' worth of grid-stride work: never zero for items > 0, never more
// than the work fills.
inline unsigned grid_for(std::size_t items) {
    const std::size_t blocks = (items + kBlock - 1) / kBlock;
    return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

// Kernels live in an unnamed namespace: every .cu that includes this header gets its own copy,
// so two companions (or two files) never clash over one symbol.
namespace {

__device__ inline std::size_t global_thread() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::size_t grid_threads() { return gridDim.x * static_cast<std::size_t>(blockDim.x); }

// Reductions over a full warp: every lane must call them (no lane may have returned).
__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum (or max) over the whole block, returned to every thread. Every thread of the block must
// call it; the leading barrier lets one kernel call it twice without a race on `part`.
template <bool kMax>
__device__ float block_reduce(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = kMax ? warp_max(v) : warp_sum(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float r = lane < warps ? part[lane] : (kMax ? -INFINITY : 0.0f);
        r = kMax ? warp_max(r) : warp_sum(r);
        if (lane == 0) part[0] = r;
    }
    __syncthreads();
    return part[0];
}

// One block per row: x[i] = table[tokens[i]].
__global__ void tk_embedding(const std::int32_t* tokens, const float* table, float* x, int h) {
    const float* src = table + static_cast<std::size_t>(tokens[blockIdx.x]) * h;
    float* dst = x + static_cast<std::size_t>(blockIdx.x) * h;
    for (int j = threadIdx.x; j < h; j += blockDim.x) dst[j] = src[j];
}

// One block per row: y = x / sqrt(mean(x^2) + 1e-5) * w. Each thread writes only the elements
// it read, after the reduction, so y may be x.
__global__ void tk_rms_norm(const float* x, const float* w, float* y, int h) {
    const float* xi = x + static_cast<std::size_t>(blockIdx.x) * h;
    float* yi = y + static_cast<std::size_t>(blockIdx.x) * h;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < h; j += blockDim.x) ss += xi[j] * xi[j];
    ss = block_reduce<false>(ss);
    const float inv = 1.0f / sqrtf(ss / h + 1e-5f);
    for (int j = threadIdx.x; j < h; j += blockDim.x) yi[j] = xi[j] * inv * w[j];
}

// y[n, out] = x[n, in] W[in, out], one kTile x kTile block of y per block of kTile x kTile
// threads (x: column of y, y: row). Tiles past the edges load zeros, so any sizes work.
__global__ void tk_matmul(const float* x, const float* w, float* y, int n, int in, int out) {
    __shared__ float xs[kTile][kTile];  // xs[row][k]
    __shared__ float ws[kTile][kTile];  // ws[k][col]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r = blockIdx.y * kTile + ty, c = blockIdx.x * kTile + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in; k0 += kTile) {
        const int xk = k0 + tx, wk = k0 + ty;
        xs[ty][tx] = (r < n && xk < in) ? x[static_cast<std::size_t>(r) * in + xk] : 0.0f;
        ws[ty][tx] = (wk < in && c < out) ? w[static_cast<std::size_t>(wk) * out + c] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kTile; ++k) acc += xs[ty][k] * ws[k][tx];
        __syncthreads();
    }
    if (r < n && c < out) y[static_cast<std::size_t>(r) * out + c] = acc;
}

// One thread per pair (token i, head, j): rotates (q[2j], q[2j+1]) by (first + i) * 10000^(-2j/d).
// The angle, cos and sin are computed in double, as the CPU side does.
__global__ void tk_rope(float* q, int n, int heads, int d, int first) {
    const int half = d / 2;
    const std::size_t pairs = static_cast<std::size_t>(n) * heads * half;
    for (std::size_t e = global_thread(); e < pairs; e += grid_threads()) {
        const int j = static_cast<int>(e % half);
        const std::size_t head_row = e / half;  // = i * heads + head
        const int i = static_cast<int>(head_row / heads);
        const double angle = static_cast<double>(first + i) * pow(10000.0, -2.0 * j / d);
        double s, c;
        sincos(angle, &s, &c);
        float* p = q + head_row * d + 2 * j;
        const float a = p[0], b = p[1], cf = static_cast<float>(c), sf = static_cast<float>(s);
        p[0] = a * cf - b * sf;
        p[1] = a * sf + b * cf;
    }
}

// Attention, step 1 of 3: one warp per score (head, token i, cache row t), lanes across d.
// scores[(head * n + i) * ctx + t] = q_i . k_t * scale for t <= past + i; masked entries
// (t > past + i) are left for the softmax to zero and are never read.
__global__ void tk_attention_scores(const float* q, const float* k_cache, float* scores, int n, int past, int heads,
                                    int kv_heads, int d, float scale) {
    const int ctx = past + n, group = heads / kv_heads, lane = threadIdx.x & 31;
    const std::size_t total = static_cast<std::size_t>(heads) * n * ctx;
    // The warp's index is the same for all its lanes, so every branch below is warp-uniform.
    for (std::size_t e = global_thread() / 32; e < total; e += grid_threads() / 32) {
        const int t = static_cast<int>(e % ctx);
        const std::size_t head_row = e / ctx;  // = head * n + i
        const int i = static_cast<int>(head_row % n), head = static_cast<int>(head_row / n);
        if (t > past + i) continue;
        const float* qi = q + (static_cast<std::size_t>(i) * heads + head) * d;
        const float* kt = k_cache + (static_cast<std::size_t>(t) * kv_heads + head / group) * d;
        float dot = 0.0f;
        for (int j = lane; j < d; j += 32) dot += qi[j] * kt[j];
        dot = warp_sum(dot);
        if (lane == 0) scores[e] = dot * scale;
    }
}

// Attention, step 2 of 3: one block per (head, token i) row of scores: softmax over the
// past + i + 1 visible entries (max subtracted first), zeros over the masked rest. Each thread
// rewrites only the entries it read.
__global__ void tk_attention_softmax(float* scores, int n, int past) {
    const int ctx = past + n, i = static_cast<int>(blockIdx.x % n), seen = past + i + 1;
    float* s = scores + static_cast<std::size_t>(blockIdx.x) * ctx;
    float top = -INFINITY;
    for (int t = threadIdx.x; t < seen; t += blockDim.x) top = fmaxf(top, s[t]);
    top = block_reduce<true>(top);
    float sum = 0.0f;
    for (int t = threadIdx.x; t < seen; t += blockDim.x) {
        const float e = expf(s[t] - top);
        s[t] = e;
        sum += e;
    }
    sum = block_reduce<false>(sum);  // >= 1: the maximum contributes exp(0)
    for (int t = threadIdx.x; t < ctx; t += blockDim.x) s[t] = t < seen ? s[t] / sum : 0.0f;
}

// Attention, step 3 of 3: one thread per output element (token i, head, j):
// out[i, head * d + j] = sum over visible t of p[head, i, t] * v[t, kv_head * d + j].
// Neighbouring threads read neighbouring v elements.
__global__ void tk_attention_values(const float* scores, const float* v_cache, float* out, int n, int past, int heads,
                                    int kv_heads, int d) {
    const int ctx = past + n, group = heads / kv_heads;
    const std::size_t total = static_cast<std::size_t>(n) * heads * d;
    for (std::size_t e = global_thread(); e < total; e += grid_threads()) {
        const int j = static_cast<int>(e % d);
        const std::size_t row_head = e / d;  // = i * heads + head
        const int head = static_cast<int>(row_head % heads), i = static_cast<int>(row_head / heads);
        const float* p = scores + (static_cast<std::size_t>(head) * n + i) * ctx;
        const float* v = v_cache + static_cast<std::size_t>(head / group) * d + j;
        const std::size_t v_row = static_cast<std::size_t>(kv_heads) * d;
        float acc = 0.0f;
        for (int t = 0; t <= past + i; ++t) acc += p[t] * v[t * v_row];
        out[e] = acc;
    }
}

__global__ void tk_silu_gate(const float* gate, const float* up, float* out, std::size_t n) {
    for (std::size_t e = global_thread(); e < n; e += grid_threads()) out[e] = gate[e] / (1.0f + expf(-gate[e])) * up[e];
}

__global__ void tk_add(float* x, const float* y, std::size_t n) {
    for (std::size_t e = global_thread(); e < n; e += grid_threads()) x[e] += y[e];
}

}  // namespace
}  // namespace lab::cuda::transformer_kernels

namespace lab::cuda {

class TransformerKernelsGpu : public TransformerKernels {
public:
    explicit TransformerKernelsGpu(Device&) {}

    Launch embedding(const std::int32_t* tokens, const float* table, float* x, int n, int h) override {
        return [=](Stream& s) {
            if (n <= 0 || h <= 0) return;
            transformer_kernels::tk_embedding<<<n, transformer_kernels::kBlock, 0, native(s)>>>(tokens, table, x, h);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch rms_norm(const float* x, const float* w, float* y, int n, int h) override {
        return [=](Stream& s) {
            if (n <= 0 || h <= 0) return;
            transformer_kernels::tk_rms_norm<<<n, transformer_kernels::kBlock, 0, native(s)>>>(x, w, y, h);
            LAB_CUDA(cudaGetLastError());
        };
    }
    // Row tiles run along grid.y, so n is at most 65535 * kTile rows.
    Launch matmul(const float* x, const float* w, float* y, int n, int in, int out) override {
        return [=](Stream& s) {
            if (n <= 0 || out <= 0) return;
            constexpr int t = transformer_kernels::kTile;
            const dim3 grid(static_cast<unsigned>((out + t - 1) / t), static_cast<unsigned>((n + t - 1) / t));
            transformer_kernels::tk_matmul<<<grid, dim3(t, t), 0, native(s)>>>(x, w, y, n, in, out);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch rope(float* q, int n, int heads, int d, int first) override {
        return [=](Stream& s) {
            const std::size_t pairs = static_cast<std::size_t>(n > 0 ? n : 0) * (heads > 0 ? heads : 0) * (d > 1 ? d / 2 : 0);
            if (pairs == 0) return;
            transformer_kernels::tk_rope<<<transformer_kernels::grid_for(pairs), transformer_kernels::kBlock, 0, native(s)>>>(
                q, n, heads, d, first);
            LAB_CUDA(cudaGetLastError());
        };
    }
    // Rows of width w are contiguous on both sides, so the n rows are one copy.
    Launch cache_write(const float* src, float* cache, int n, int w, int first) override {
        return [=](Stream& s) {
            if (n <= 0 || w <= 0) return;
            const std::size_t width = static_cast<std::size_t>(w);
            LAB_CUDA(cudaMemcpyAsync(cache + static_cast<std::size_t>(first) * width, src,
                                     static_cast<std::size_t>(n) * width * sizeof(float), cudaMemcpyDeviceToDevice, native(s)));
        };
    }
    // Three kernels: scores, softmax, weighted sum of V (see their comments).
    Launch attention(const float* q, const float* k_cache, const float* v_cache, float* scores, float* out, int n, int past,
                     int heads, int kv_heads, int d) override {
        if (kv_heads <= 0 || heads % kv_heads != 0)
            throw std::invalid_argument("TransformerKernelsGpu::attention: heads (" + std::to_string(heads) +
                                        ") must be a multiple of kv_heads (" + std::to_string(kv_heads) +
                                        "); check the model's configuration");
        return [=](Stream& st) {
            if (n <= 0 || heads <= 0 || d <= 0) return;
            namespace tk = transformer_kernels;
            const std::size_t score_threads = static_cast<std::size_t>(heads) * n * (past + n) * 32;  // a warp per score
            const float scale = 1.0f / std::sqrt(static_cast<float>(d));
            tk::tk_attention_scores<<<tk::grid_for(score_threads), tk::kBlock, 0, native(st)>>>(q, k_cache, scores, n, past,
                                                                                              heads, kv_heads, d, scale);
            LAB_CUDA(cudaGetLastError());
            tk::tk_attention_softmax<<<static_cast<unsigned>(heads) * static_cast<unsigned>(n), tk::kBlock, 0, native(st)>>>(
                scores, n, past);
            LAB_CUDA(cudaGetLastError());
            const std::size_t outputs = static_cast<std::size_t>(n) * heads * d;
            tk::tk_attention_values<<<tk::grid_for(outputs), tk::kBlock, 0, native(st)>>>(scores, v_cache, out, n, past, heads,
                                                                                        kv_heads, d);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch silu_gate(const float* gate, const float* up, float* out, std::size_t n) override {
        return [=](Stream& s) {
            if (n == 0) return;
            transformer_kernels::tk_silu_gate<<<transformer_kernels::grid_for(n), transformer_kernels::kBlock, 0, native(s)>>>(
                gate, up, out, n);
            LAB_CUDA(cudaGetLastError());
        };
    }
    Launch add(float* x, const float* y, std::size_t n) override {
        return [=](Stream& s) {
            if (n == 0) return;
            transformer_kernels::tk_add<<<transformer_kernels::grid_for(n), transformer_kernels::kBlock, 0, native(s)>>>(x, y, n);
            LAB_CUDA(cudaGetLastError());
        };
    }

private:
    static cudaStream_t native(Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }
};

}  // namespace lab::cuda
