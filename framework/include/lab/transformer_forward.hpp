// A small transformer's forward pass on a device (opt-in), op by op: the weights (random, from a
// fixed LCG: values do not change the speed), the KV cache and the activations of one sequence
// of up to `max_seq` tokens, and each op of forward_ops' naming as launches of lab's
// TransformerKernels, with the projections as fp32 GEMMs of the device's BLAS (OpenBLAS,
// cuBLASLt: what a real framework gets, not a teaching loop). Lessons 02.02 (each op timed) and
// 02.10 (the pass traced) run it; the counts of each op come from transformer::forward_ops.
#pragma once

#include <string>
#include <vector>

#include "lab/transformer.hpp"
#include "lab/transformer_kernels.hpp"

namespace lab::transformer {

// y (n x out) = a (n x in) . w (in x out), row-major fp32, as one launch of the device's BLAS
// GEMM: the projections of every forward pass lab runs (02.02, 02.07, 02.10).
inline Launch blas_matmul(Device& dev, const float* a, const float* w, float* y, int n, int in, int out) {
    return [d = &dev, g = Gemm{Dtype::fp32, n, out, in, a, w, y, 1.0, 0.0}](Stream& st) { d->gemm(st, g); };
}

class TinyForward {
public:
    TinyForward(Device& dev, TransformerKernels& k, const ModelConfig& m, int max_seq)
        : dev_(dev), k_(k), m_(m), h_(int(m.hidden)), I_(int(m.intermediate)), V_(int(m.vocab)), L_(int(m.layers)), d_(int(m.head_dim)),
          qw_(int(m.heads) * d_), kvw_(int(m.kv_heads) * d_) {
        const std::size_t S = std::size_t(max_seq), h = std::size_t(h_), I = std::size_t(I_), V = std::size_t(V_);
        for (int l = 0; l < L_; ++l)
            layer_.push_back({weights(h), weights(h * qw_), weights(h * kvw_), weights(h * kvw_), weights(std::size_t(qw_) * h), weights(h),
                              weights(h * I), weights(h * I), weights(I * h), scratch((S + 1) * kvw_), scratch((S + 1) * kvw_)});
        table_ = weights(V * h), final_norm_ = weights(h), lm_ = weights(h * V);
        keep_.push_back(dev.allocate(4 * S));  // token ids: zero-filled, token 0 (the speed does not care)
        tokens_ = keep_.back()->as<std::int32_t>();
        x_ = scratch(S * h), xn_ = scratch(S * h), q_ = scratch(S * qw_), kk_ = scratch(S * kvw_), v_ = scratch(S * kvw_);
        att_ = scratch(S * qw_), o_ = scratch(S * h), up_ = scratch(S * I), gate_ = scratch(S * I), act_ = scratch(S * I);
        logits_ = scratch(S * V), scores_ = scratch(std::size_t(m.heads) * S * (S + 1));
    }

    // Op `name` (forward_ops' names; "attention" is scores, softmax and weighted values in one
    // kernel) of layer l over n tokens at position `past` (n = S, past = 0: a prefill).
    std::vector<Launch> op(const std::string& name, int l, int n, int past) {
        const Layer& y = layer_[std::size_t(l)];
        const std::size_t nh = std::size_t(n) * h_, ni = std::size_t(n) * I_;
        const int heads = int(m_.heads), kv_heads = int(m_.kv_heads);
        if (name == "embedding") return {k_.embedding(tokens_, table_, x_, n, h_)};
        if (name == "attn_norm") return {k_.rms_norm(x_, y.an, xn_, n, h_)};
        if (name == "qkv") return {matmul(xn_, y.wq, q_, n, h_, qw_), matmul(xn_, y.wk, kk_, n, h_, kvw_), matmul(xn_, y.wv, v_, n, h_, kvw_)};
        if (name == "rope") return {k_.rope(q_, n, heads, d_, past), k_.rope(kk_, n, kv_heads, d_, past)};
        if (name == "kv_cache_write") return {k_.cache_write(kk_, y.kc, n, kvw_, past), k_.cache_write(v_, y.vc, n, kvw_, past)};
        if (name == "attention") return {k_.attention(q_, y.kc, y.vc, scores_, att_, n, past, heads, kv_heads, d_)};
        if (name == "attn_out") return {matmul(att_, y.wo, o_, n, qw_, h_)};
        if (name == "residual") return {k_.add(x_, o_, nh)};
        if (name == "mlp_norm") return {k_.rms_norm(x_, y.mn, xn_, n, h_)};
        if (name == "mlp_up") return {matmul(xn_, y.up, up_, n, h_, I_)};
        if (name == "mlp_gate") return {matmul(xn_, y.gate, gate_, n, h_, I_)};
        if (name == "mlp_act") return {k_.silu_gate(gate_, up_, act_, ni)};
        if (name == "mlp_down") return {matmul(act_, y.down, o_, n, I_, h_)};
        if (name == "final_norm") return {k_.rms_norm(x_, final_norm_, xn_, n, h_)};
        return {matmul(xn_, lm_, logits_, n, h_, V_)};  // lm_head
    }
    // Ops that run once per pass, not per layer.
    static bool once(const std::string& name) { return name == "embedding" || name == "final_norm" || name == "lm_head"; }
    static Launch all(std::vector<Launch> ls) { return [ls](Stream& st) { for (const auto& l : ls) l(st); }; }

    // One pass in dataflow order: per layer norm, qkv, rope, cache, attention, out, residual,
    // norm, MLP, residual; then the final norm and the LM head. `midway` runs after the first
    // half of the layers (02.10 puts a synchronisation and a copy there).
    Launch pass(int n, int past, const std::vector<Launch>& midway = {}) {
        std::vector<Launch> ls = op("embedding", 0, n, past);
        for (int l = 0; l < L_; ++l) {
            if (l == L_ / 2) ls.insert(ls.end(), midway.begin(), midway.end());
            for (const char* name : {"attn_norm", "qkv", "rope", "kv_cache_write", "attention", "attn_out", "residual", "mlp_norm", "mlp_up",
                                     "mlp_gate", "mlp_act", "mlp_down", "residual"})
                for (auto& launch : op(name, l, n, past)) ls.push_back(launch);
        }
        for (const char* name : {"final_norm", "lm_head"})
            for (auto& launch : op(name, 0, n, past)) ls.push_back(launch);
        return all(ls);
    }
    int layers() const { return L_; }
    float* hidden() { return x_; }  // the residual stream, [n, hidden]

private:
    struct Layer { float *an, *wq, *wk, *wv, *wo, *mn, *up, *gate, *down, *kc, *vc; };
    float* weights(std::size_t n) {
        BufferPtr host = dev_.allocate_host(4 * n), buf = dev_.allocate(4 * n);
        std::uint32_t state = 12345;
        for (std::size_t e = 0; e < n; ++e) host->as<float>()[e] = ((state = state * 1664525u + 1013904223u) >> 8) * (0.1f / 16777216.0f) - 0.05f;
        dev_.copy(dev_.stream(), buf->data(), host->data(), 4 * n);
        dev_.stream().synchronize();
        keep_.push_back(std::move(buf));
        return keep_.back()->as<float>();
    }
    float* scratch(std::size_t n) {
        keep_.push_back(dev_.allocate(4 * n));
        return keep_.back()->as<float>();
    }
    Launch matmul(const float* a, const float* w, float* y, int n, int in, int out) { return blas_matmul(dev_, a, w, y, n, in, out); }

    Device& dev_;
    TransformerKernels& k_;
    ModelConfig m_;
    int h_, I_, V_, L_, d_, qw_, kvw_;
    std::vector<BufferPtr> keep_;
    std::vector<Layer> layer_;
    float *table_ = nullptr, *final_norm_ = nullptr, *lm_ = nullptr;
    const std::int32_t* tokens_ = nullptr;
    float *x_ = nullptr, *xn_ = nullptr, *q_ = nullptr, *kk_ = nullptr, *v_ = nullptr, *att_ = nullptr, *o_ = nullptr;
    float *up_ = nullptr, *gate_ = nullptr, *act_ = nullptr, *logits_ = nullptr, *scores_ = nullptr;
};

}  // namespace lab::transformer
