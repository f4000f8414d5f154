// lab::TransformerKernels on a CPU (opt-in): plain loops the compiler vectorises, each op split
// over the device's thread team by rows (or by output columns where one row is all there is).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lab/cpu_share.hpp"
#include "lab/transformer_kernels.hpp"

namespace lab::cpu {

class TransformerKernelsCpu : public TransformerKernels {
public:
    explicit TransformerKernelsCpu(Device&) {}

    Launch embedding(const std::int32_t* tokens, const float* table, float* x, int n, int h) override {
        return rows(n, [=](int i) { std::memcpy(x + row(i, h), table + row(tokens[i], h), sizeof(float) * h); });
    }
    Launch rms_norm(const float* x, const float* w, float* y, int n, int h) override {
        return rows(n, [=](int i) {
            const float* xi = x + row(i, h);
            float ss = 0;
            for (int j = 0; j < h; ++j) ss += xi[j] * xi[j];
            const float inv = 1.0f / std::sqrt(ss / h + 1e-5f);
            for (int j = 0; j < h; ++j) y[row(i, h) + j] = xi[j] * inv * w[j];
        });
    }
    // Split by output columns: a decode step's single row still uses every thread. Each thread
    // streams W's rows front to back over its columns.
    Launch matmul(const float* x, const float* w, float* y, int n, int in, int out) override {
        return [=](Stream& st) {
            st.launch([=](int t, int threads) {
                std::size_t c0, c1;
                share(static_cast<std::size_t>(out), t, threads, c0, c1);
                for (int i = 0; i < n; ++i) {
                    float* __restrict yi = y + row(i, out);
                    std::fill(yi + c0, yi + c1, 0.0f);
                    for (int k = 0; k < in; ++k) {
                        const float xk = x[row(i, in) + k];
                        const float* __restrict wk = w + row(k, out);
                        for (std::size_t c = c0; c < c1; ++c) yi[c] += xk * wk[c];
                    }
                }
            });
        };
    }
    Launch rope(float* q, int n, int heads, int d, int first) override {
        // The angle depends on the position and the pair, not the head: one cos and sin per pair.
        return rows(n, [=](int i) {
            for (int j = 0; j < d / 2; ++j) {
                const double angle = (first + i) * std::pow(10000.0, -2.0 * j / d);
                const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
                for (int hd = 0; hd < heads; ++hd) {
                    float* p = q + row(i, heads * d) + static_cast<std::size_t>(hd) * d + 2 * j;
                    const float a = p[0], b = p[1];
                    p[0] = a * c - b * s;
                    p[1] = a * s + b * c;
                }
            }
        });
    }
    Launch cache_write(const float* src, float* cache, int n, int w, int first) override {
        return rows(n, [=](int i) { std::memcpy(cache + row(first + i, w), src + row(i, w), sizeof(float) * w); });
    }
    Launch attention(const float* q, const float* k_cache, const float* v_cache, float* scores, float* out, int n, int past,
                     int heads, int kv_heads, int d) override {
        return rows(n * heads, [=](int r) {  // one (token, head) pair per "row"
            const int i = r / heads, hd = r % heads, g = hd / (heads / kv_heads), seen = past + i + 1, ctx = past + n;
            const float* qi = q + row(i, heads * d) + static_cast<std::size_t>(hd) * d;
            float* s = scores + (static_cast<std::size_t>(hd) * n + i) * ctx;
            const float scale = 1.0f / std::sqrt(static_cast<float>(d));
            float top = -INFINITY;
            for (int t = 0; t < seen; ++t) {
                const float* kt = k_cache + row(t, kv_heads * d) + static_cast<std::size_t>(g) * d;
                float dot = 0;
                for (int j = 0; j < d; ++j) dot += qi[j] * kt[j];
                s[t] = dot * scale;
                top = std::max(top, s[t]);
            }
            float sum = 0;
            for (int t = 0; t < seen; ++t) sum += (s[t] = std::exp(s[t] - top));
            float* o = out + row(i, heads * d) + static_cast<std::size_t>(hd) * d;
            std::fill(o, o + d, 0.0f);
            for (int t = 0; t < seen; ++t) {
                const float p = s[t] / sum;
                const float* vt = v_cache + row(t, kv_heads * d) + static_cast<std::size_t>(g) * d;
                for (int j = 0; j < d; ++j) o[j] += p * vt[j];
            }
        });
    }
    Launch silu_gate(const float* gate, const float* up, float* out, std::size_t n) override {
        return elements(n, [=](std::size_t e) { out[e] = gate[e] / (1.0f + std::exp(-gate[e])) * up[e]; });
    }
    Launch add(float* x, const float* y, std::size_t n) override {
        return elements(n, [=](std::size_t e) { x[e] += y[e]; });
    }

private:
    static std::size_t row(long i, long width) { return static_cast<std::size_t>(i) * static_cast<std::size_t>(width); }
    template <class F> static Launch rows(int n, F f) {
        return [=](Stream& st) {
            st.launch([=](int t, int threads) {
                for (int i = t; i < n; i += threads) f(i);
            });
        };
    }
    template <class F> static Launch elements(std::size_t n, F f) {
        return [=](Stream& st) {
            st.launch([=](int t, int threads) {
                std::size_t b, e;
                share(n, t, threads, b, e);
                for (std::size_t k = b; k < e; ++k) f(k);
            });
        };
    }
};

}  // namespace lab::cpu
