// Transformer arithmetic: the one implementation of the parameter, byte and FLOP counts of a
// decoder-only transformer (Llama-style: Llama, Mistral, Qwen2; and GPT-2), used by `lab model`,
// by the lessons 02.02, 02.06 and 02.07 and by their grading alike. The conventions (what counts
// as a FLOP, which bytes an op moves, what the activation peak holds) are written once in
// docs/arithmetic.md; every formula below follows it, and a change to one changes the other.
//
// Opt-in and header-only, C++17 so a CUDA companion may include it; no JSON or YAML here (the
// host reads HuggingFace config.json files into a ModelConfig, framework/src/model_config.hpp).
// Counts are exact integers (std::uint64_t); a count that would not fit throws
// std::overflow_error rather than wrap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/workloads.hpp"

namespace lab::transformer {

// ---- The model -----------------------------------------------------------------------------

// llama: the Llama style (rotary positions, RMSNorm, gated SiLU MLP, no biases unless asked):
// Llama, Mistral, Qwen2. gpt2: learned positions, LayerNorm with bias, GELU MLP, biases everywhere.
enum class Family { llama, gpt2 };
enum class Norm { rms_norm, layer_norm };

inline const char* to_string(Family f) { return f == Family::llama ? "llama" : "gpt2"; }
inline const char* to_string(Norm n) { return n == Norm::rms_norm ? "rms_norm" : "layer_norm"; }

struct ModelConfig {
    std::string name{};                // display only: "llama-2-7b"
    Family family = Family::llama;
    std::string model_type{};          // HuggingFace's model_type: "llama", "mistral", "qwen2", "gpt2"
    std::uint64_t hidden = 0;          // h
    std::uint64_t intermediate = 0;    // I, the MLP's inner width
    std::uint64_t layers = 0;          // L
    std::uint64_t heads = 0;           // n_q, query heads
    std::uint64_t kv_heads = 0;        // n_kv (GQA: fewer than n_q; MHA: equal)
    std::uint64_t head_dim = 0;        // d_h (usually h / n_q)
    std::uint64_t vocab = 0;           // V
    bool tied_embeddings = false;      // the LM head reuses the embedding matrix
    bool qkv_bias = false;             // q, k, v projections carry biases (Qwen2, GPT-2, Llama's attention_bias)
    bool out_bias = false;             // the attention output projection carries a bias (GPT-2, attention_bias)
    bool mlp_bias = false;             // the MLP's projections carry biases (GPT-2, Llama's mlp_bias)
    bool gated_mlp = true;             // up, gate and down (SiLU-gated) vs up and down (GELU)
    Norm norm = Norm::rms_norm;
    bool norm_bias = false;            // LayerNorm with a bias (GPT-2)
    std::uint64_t n_positions = 0;     // learned position embeddings (GPT-2); 0: rotary (RoPE)
    std::uint64_t sliding_window = 0;  // attention window in tokens (Mistral); 0: none

    bool rotary() const { return n_positions == 0; }
};

// The first thing wrong with a config ("" when none): a zero size, a head_dim that is not even
// (RoPE rotates pairs), kv_heads not dividing heads.
inline std::string check_model(const ModelConfig& m) {
    if (m.hidden == 0) return "hidden size is 0";
    if (m.intermediate == 0) return "intermediate size is 0";
    if (m.layers == 0) return "layer count is 0";
    if (m.heads == 0) return "head count is 0";
    if (m.kv_heads == 0) return "KV head count is 0";
    if (m.head_dim == 0) return "head_dim is 0";
    if (m.vocab == 0) return "vocabulary size is 0";
    if (m.heads % m.kv_heads != 0)
        return "KV heads (" + std::to_string(m.kv_heads) + ") do not divide the heads (" + std::to_string(m.heads) + ")";
    if (m.rotary() && m.head_dim % 2 != 0) return "head_dim (" + std::to_string(m.head_dim) + ") is odd; RoPE rotates pairs";
    return "";
}

// Llama-2-7B (configs/models/llama-2-7b.json holds the same; a test keeps them equal): the "7B
// model" lessons ask about (02.06's decode lower bound), usable in a plugin that reads no files.
inline ModelConfig llama_2_7b() {
    ModelConfig m;
    m.name = "llama-2-7b";
    m.model_type = "llama";
    m.hidden = 4096;
    m.intermediate = 11008;
    m.layers = 32;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 128;
    m.vocab = 32000;
    return m;
}

// Llama-3-8B (configs/models/llama-3-8b.json holds the same; a test keeps them equal): a GQA
// model (8 KV heads for 32 query heads) beside Llama-2-7B's MHA, for 02.07's KV-cache questions.
inline ModelConfig llama_3_8b() {
    ModelConfig m;
    m.name = "llama-3-8b";
    m.model_type = "llama";
    m.hidden = 4096;
    m.intermediate = 14336;
    m.layers = 32;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.vocab = 128256;
    return m;
}

// The built-in tiny model (configs/models/tiny.json holds the same; a test keeps them equal):
// small enough that lesson 02.02 runs its forward pass in well under a second on one CPU core,
// shaped like a real one (GQA, gated MLP, untied head).
inline ModelConfig tiny_model() {
    ModelConfig m;
    m.name = "tiny";
    m.family = Family::llama;
    m.model_type = "llama";
    m.hidden = 256;
    m.intermediate = 688;
    m.layers = 4;
    m.heads = 4;
    m.kv_heads = 2;
    m.head_dim = 64;
    m.vocab = 2048;
    return m;
}

// The element types of weights, KV cache and activations. Everything a pass reads or writes
// that is neither a weight nor the KV cache (hidden states, q, scores, logits) is an activation.
struct Precision {
    Dtype weights = Dtype::fp16;
    Dtype kv = Dtype::fp16;
    Dtype activations = Dtype::fp16;
};

// The activations that go with a weight dtype: the weight dtype itself for fp64/fp32/tf32/fp16/
// bf16; fp16 for 8- and 4-bit weights, which inference kernels dequantise into 16-bit math.
inline Dtype activation_dtype_for(Dtype weights) {
    switch (weights) {
        case Dtype::fp64: case Dtype::fp32: case Dtype::tf32: case Dtype::fp16: case Dtype::bf16: return weights;
        default: return Dtype::fp16;
    }
}
inline Precision precision(Dtype weights, std::optional<Dtype> kv = std::nullopt) {
    return Precision{weights, kv.value_or(weights), activation_dtype_for(weights)};
}

// ---- Exact arithmetic --------------------------------------------------------------------------

namespace detail {
inline std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("transformer arithmetic: a count exceeds 64 bits");
    return r;
}
inline std::uint64_t mul(std::uint64_t a, std::uint64_t b, std::uint64_t c) { return mul(mul(a, b), c); }
inline std::uint64_t mul(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) { return mul(mul(a, b, c), d); }
inline std::uint64_t add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("transformer arithmetic: a count exceeds 64 bits");
    return r;
}
// lab::storage_bytes for n elements, as an exact integer: storage_bytes works in doubles, exact
// while n * bits stays below 2^53.
inline std::uint64_t bytes(Dtype d, std::uint64_t n) {
    if (n > (std::uint64_t{1} << 46)) throw std::overflow_error("transformer arithmetic: a tensor exceeds 2^46 elements");
    return static_cast<std::uint64_t>(storage_bytes(d, static_cast<double>(n)));
}
}  // namespace detail

// ---- Parameters and the bytes they take -----------------------------------------------------

// Parameters by kind. embedding: token embeddings plus learned position embeddings; attention:
// q, k, v, o and their biases; mlp: up, gate, down and their biases; norm: every norm's weight
// and bias, the final norm included; lm_head: 0 when tied to the embedding.
struct ParamCounts {
    std::uint64_t embedding = 0, attention = 0, mlp = 0, norm = 0, lm_head = 0;
    std::uint64_t total() const { return embedding + attention + mlp + norm + lm_head; }
};

// Width of the fused q, k, v projection's output: (n_q + 2 n_kv) d_h.
inline std::uint64_t qkv_width(const ModelConfig& m) { return detail::mul(m.heads + 2 * m.kv_heads, m.head_dim); }
// Parameters of one norm: its weight (and bias).
inline std::uint64_t norm_params(const ModelConfig& m) { return m.hidden * (m.norm_bias ? 2 : 1); }

inline ParamCounts param_counts(const ModelConfig& m) {
    using detail::mul;
    const std::uint64_t h = m.hidden, I = m.intermediate, L = m.layers;
    const std::uint64_t qkv = qkv_width(m), q_width = mul(m.heads, m.head_dim);
    const std::uint64_t attention = mul(h, qkv) + (m.qkv_bias ? qkv : 0) + mul(q_width, h) + (m.out_bias ? h : 0);
    const std::uint64_t mats = m.gated_mlp ? 3 : 2;
    const std::uint64_t mlp = mul(mats, h, I) + (m.mlp_bias ? (mats - 1) * I + h : 0);
    ParamCounts p;
    p.embedding = mul(m.vocab, h) + mul(m.n_positions, h);
    p.attention = mul(L, attention);
    p.mlp = mul(L, mlp);
    p.norm = mul(2 * L + 1, norm_params(m));  // two per layer and the final one
    p.lm_head = m.tied_embeddings ? 0 : mul(m.vocab, h);
    return p;
}
inline std::uint64_t param_count(const ModelConfig& m) { return param_counts(m).total(); }

// Every parameter stored in `d` (lab::storage_bytes: block scales included).
inline std::uint64_t weight_bytes(const ModelConfig& m, Dtype d) { return detail::bytes(d, param_count(m)); }

// ---- KV cache --------------------------------------------------------------------------------

// One token's keys and values in every layer: 2 L n_kv d_h elements.
inline std::uint64_t kv_bytes_per_token(const ModelConfig& m, Dtype kv) {
    return detail::bytes(kv, detail::mul(2 * m.layers, m.kv_heads, m.head_dim));
}
// Tokens of a sequence the cache holds at context T: T, or the window when one caps it.
inline std::uint64_t cached_tokens(const ModelConfig& m, std::uint64_t context) {
    return m.sliding_window > 0 ? std::min(context, m.sliding_window) : context;
}
// batch x cached_tokens(context) x kv_bytes_per_token.
inline std::uint64_t kv_cache_bytes(const ModelConfig& m, Dtype kv, std::uint64_t batch, std::uint64_t context) {
    return detail::mul(batch, cached_tokens(m, context), kv_bytes_per_token(m, kv));
}

// The smallest context T at which the KV cache of `batch` sequences holds more bytes than the
// weights, B x cached_tokens(T) x kv_bytes_per_token > weight_bytes: floor(W / (B k)) + 1; 0 when
// a sliding window caps the cache below the weights (or the batch is 0).
inline std::uint64_t kv_exceeds_weights_context(const ModelConfig& m, const Precision& pr, std::uint64_t batch) {
    if (batch == 0) return 0;
    const std::uint64_t t = weight_bytes(m, pr.weights) / detail::mul(batch, kv_bytes_per_token(m, pr.kv)) + 1;
    return m.sliding_window > 0 && t > m.sliding_window ? 0 : t;
}

// ---- Per-op FLOPs and bytes of a forward pass ---------------------------------------------------

// FLOP per element of the elementwise ops (docs/arithmetic.md lists what each counts).
inline constexpr std::uint64_t kRmsNormFlops = 4;     // square, accumulate, times 1/rms, times weight
inline constexpr std::uint64_t kLayerNormFlops = 6;   // + bias: 7. accumulate (mean), subtract, square, accumulate, times 1/std, times weight
inline constexpr std::uint64_t kSoftmaxFlops = 6;     // per unmasked score: scale by 1/sqrt(d_h), max, subtract, exp, sum, normalise
inline constexpr std::uint64_t kRopeFlops = 3;        // per rotated element: two multiplies and an add
inline constexpr std::uint64_t kSiluGateFlops = 5;    // per element of I: exp, add, divide (sigmoid), times x, times up
inline constexpr std::uint64_t kGeluFlops = 9;        // per element of I (tanh form): x^3 (2), *c, +x, *sqrt(2/pi), tanh, +1, *x, *0.5
inline constexpr std::uint64_t kAddFlops = 1;         // residual add, bias add, position-embedding add

inline std::uint64_t norm_flops_per_element(const ModelConfig& m) {
    return m.norm == Norm::rms_norm ? kRmsNormFlops : kLayerNormFlops + (m.norm_bias ? 1 : 0);
}

// A forward pass over `new_tokens` tokens of each of `batch` sequences whose first `past_tokens`
// are already in the KV cache. Prefill of S tokens: prefill(B, S); one decode step at context T:
// decode(B, T).
struct Pass {
    std::uint64_t batch = 1;
    std::uint64_t new_tokens = 1;
    std::uint64_t past_tokens = 0;
    // The LM head over every new token (what a profiler of model(input_ids) shows), or over the
    // last token of each sequence only (all that generation needs).
    bool logits_for_all = true;
};
inline Pass prefill(std::uint64_t batch, std::uint64_t seq) { return Pass{batch, seq, 0, true}; }
inline Pass decode(std::uint64_t batch, std::uint64_t context) { return Pass{batch, 1, context, true}; }

// Scores one head of one sequence computes in the pass: new token i (1-based) sees past + i
// tokens (causal: itself and those before it), at most the window. Prefill, no window: S(S+1)/2.
inline std::uint64_t scores_per_head(const ModelConfig& m, const Pass& p) {
    using detail::mul;
    const std::uint64_t n = p.new_tokens, past = p.past_tokens, w = m.sliding_window;
    if (w == 0) return detail::add(mul(n, past), mul(n, n + 1) / 2);
    // The first k new tokens see fewer than w tokens; the rest see exactly w.
    const std::uint64_t k = w > past ? std::min(n, w - past) : 0;
    return detail::add(detail::add(mul(k, past), mul(k, k + 1) / 2), mul(n - k, w));
}
// Tokens of one sequence whose K and V the pass reads from the cache: every token some new
// token attends to (past + new, less those older than every new token's window).
inline std::uint64_t attended_tokens(const ModelConfig& m, const Pass& p) {
    const std::uint64_t all = p.past_tokens + p.new_tokens;
    if (m.sliding_window == 0 || p.past_tokens + 1 <= m.sliding_window) return all;
    return all - (p.past_tokens + 1 - m.sliding_window);
}

// One op of the pass, over all layers (`repeats` times: L for an op of every layer, 2L for the
// two residual adds, 1 for embedding, final norm and LM head). Bytes are the minimum traffic:
// each weight read once per pass, each activation written once and read once per op that uses
// it, K and V read from the cache by the attention ops. `live_elements` are the activation
// elements the op holds while it runs besides the residual stream (activation_peak_bytes).
struct Op {
    std::string name{};
    std::uint64_t repeats = 1;
    std::uint64_t matmul_flops = 0;
    std::uint64_t elementwise_flops = 0;
    std::uint64_t weight_bytes = 0;
    std::uint64_t kv_bytes = 0;
    std::uint64_t activation_bytes = 0;
    std::uint64_t live_elements = 0;
    std::uint64_t flops() const { return matmul_flops + elementwise_flops; }
    std::uint64_t bytes() const { return weight_bytes + kv_bytes + activation_bytes; }
};

namespace detail {
// An op of one layer (or of the model, repeats 1), scaled to all its repeats.
inline Op op(const char* name, std::uint64_t repeats, std::uint64_t matmul, std::uint64_t elementwise,
             std::uint64_t weight_b, std::uint64_t kv_b, std::uint64_t act_b, std::uint64_t live) {
    Op o;
    o.name = name;
    o.repeats = repeats;
    o.matmul_flops = mul(repeats, matmul);
    o.elementwise_flops = mul(repeats, elementwise);
    o.weight_bytes = mul(repeats, weight_b);
    o.kv_bytes = mul(repeats, kv_b);
    o.activation_bytes = mul(repeats, act_b);
    o.live_elements = live;
    return o;
}
}  // namespace detail

// The ops of a pass in the order they run within a layer. Names are stable (docs/arithmetic.md):
// embedding, attn_norm, qkv, rope (rotary models), kv_cache_write, attn_scores, softmax, attn_av,
// attn_out, residual, mlp_norm, mlp_up, mlp_gate (gated MLP), mlp_act, mlp_down, final_norm,
// lm_head.
inline std::vector<Op> forward_ops(const ModelConfig& m, const Precision& pr, const Pass& p) {
    using detail::bytes;
    using detail::mul;
    using detail::op;
    const Dtype w = pr.weights, a = pr.activations, c = pr.kv;
    const std::uint64_t L = m.layers, h = m.hidden, I = m.intermediate, V = m.vocab, d = m.head_dim;
    const std::uint64_t B = p.batch, N = mul(p.batch, p.new_tokens);  // tokens the pass computes
    const std::uint64_t Nl = p.logits_for_all ? N : B;                  // tokens the LM head sees
    const std::uint64_t qkv = qkv_width(m), q_w = mul(m.heads, d), kv_w = mul(m.kv_heads, d);
    const std::uint64_t scores = mul(B, m.heads, scores_per_head(m, p));       // all heads, all sequences
    const std::uint64_t attended = attended_tokens(m, p);
    const std::uint64_t score_matrix = mul(B, m.heads, p.new_tokens, attended);  // allocated, masked part included
    const std::uint64_t cache_read = bytes(c, mul(B, attended, kv_w));           // K (or V) of the attended tokens
    const std::uint64_t norm_w = bytes(w, norm_params(m)), norm_fl = mul(N, h, norm_flops_per_element(m));

    std::vector<Op> ops;
    ops.push_back(op("embedding", 1, 0, m.rotary() ? 0 : mul(N, h),
                     bytes(w, mul(N, h)) + (m.rotary() ? 0 : bytes(w, mul(N, h))), 0, bytes(a, mul(N, h)), 0));
    ops.push_back(op("attn_norm", L, 0, norm_fl, norm_w, 0, 2 * bytes(a, mul(N, h)), mul(N, h)));
    ops.push_back(op("qkv", L, mul(2, N, h, qkv), m.qkv_bias ? mul(N, qkv) : 0,
                     bytes(w, mul(h, qkv)) + (m.qkv_bias ? bytes(w, qkv) : 0), 0,
                     bytes(a, mul(N, h)) + bytes(a, mul(N, qkv)), mul(N, h) + mul(N, qkv)));
    if (m.rotary()) {
        const std::uint64_t rotated = mul(N, q_w + kv_w);  // q and k
        ops.push_back(op("rope", L, 0, mul(kRopeFlops, rotated), 0, 0,
                         2 * bytes(a, rotated) + bytes(a, mul(p.new_tokens, d)),  // + cos/sin tables, d per position
                         mul(N, qkv)));
    }
    ops.push_back(op("kv_cache_write", L, 0, 0, 0, bytes(c, mul(2, N, kv_w)), bytes(a, mul(2, N, kv_w)), mul(N, qkv)));
    ops.push_back(op("attn_scores", L, mul(2, d, scores), 0, 0, cache_read,
                     bytes(a, mul(N, q_w)) + bytes(a, scores), mul(N, q_w) + score_matrix));
    ops.push_back(op("softmax", L, 0, mul(kSoftmaxFlops, scores), 0, 0, 2 * bytes(a, scores), score_matrix));
    ops.push_back(op("attn_av", L, mul(2, d, scores), 0, 0, cache_read,
                     bytes(a, scores) + bytes(a, mul(N, q_w)), score_matrix + mul(N, q_w)));
    ops.push_back(op("attn_out", L, mul(2, N, q_w, h), m.out_bias ? mul(N, h) : 0,
                     bytes(w, mul(q_w, h)) + (m.out_bias ? bytes(w, h) : 0), 0,
                     bytes(a, mul(N, q_w)) + bytes(a, mul(N, h)), mul(N, q_w) + mul(N, h)));
    ops.push_back(op("residual", 2 * L, 0, mul(kAddFlops, N, h), 0, 0, 3 * bytes(a, mul(N, h)), mul(N, h)));
    ops.push_back(op("mlp_norm", L, 0, norm_fl, norm_w, 0, 2 * bytes(a, mul(N, h)), mul(N, h)));
    const std::uint64_t proj_w = bytes(w, mul(h, I)) + (m.mlp_bias ? bytes(w, I) : 0);
    const std::uint64_t proj_a = bytes(a, mul(N, h)) + bytes(a, mul(N, I));
    ops.push_back(op("mlp_up", L, mul(2, N, h, I), m.mlp_bias ? mul(N, I) : 0, proj_w, 0, proj_a, mul(N, h) + mul(N, I)));
    if (m.gated_mlp)
        ops.push_back(op("mlp_gate", L, mul(2, N, h, I), m.mlp_bias ? mul(N, I) : 0, proj_w, 0, proj_a,
                         mul(N, h) + mul(2, N, I)));
    if (m.gated_mlp)
        ops.push_back(op("mlp_act", L, 0, mul(kSiluGateFlops, N, I), 0, 0, 3 * bytes(a, mul(N, I)), mul(3, N, I)));
    else
        ops.push_back(op("mlp_act", L, 0, mul(kGeluFlops, N, I), 0, 0, 2 * bytes(a, mul(N, I)), mul(2, N, I)));
    ops.push_back(op("mlp_down", L, mul(2, N, I, h), m.mlp_bias ? mul(N, h) : 0,
                     bytes(w, mul(I, h)) + (m.mlp_bias ? bytes(w, h) : 0), 0,
                     bytes(a, mul(N, I)) + bytes(a, mul(N, h)), mul(N, I) + mul(N, h)));
    ops.push_back(op("final_norm", 1, 0, norm_fl, norm_w, 0, 2 * bytes(a, mul(N, h)), mul(N, h)));
    ops.push_back(op("lm_head", 1, mul(2, Nl, h, V), 0, bytes(w, mul(V, h)), 0,
                     bytes(a, mul(Nl, h)) + bytes(a, mul(Nl, V)), mul(Nl, h) + mul(Nl, V)));
    return ops;
}

struct Totals {
    std::uint64_t matmul_flops = 0, elementwise_flops = 0, bytes = 0;
    std::uint64_t flops() const { return matmul_flops + elementwise_flops; }
};
inline Totals totals(const std::vector<Op>& ops) {
    Totals t;
    for (const auto& o : ops) {
        t.matmul_flops = detail::add(t.matmul_flops, o.matmul_flops);
        t.elementwise_flops = detail::add(t.elementwise_flops, o.elementwise_flops);
        t.bytes = detail::add(t.bytes, o.bytes());
    }
    return t;
}

// FLOPs do not depend on precision; these use the default one.
// A prefill of S tokens in each of B sequences, the LM head over all B x S tokens.
inline std::uint64_t prefill_flops(const ModelConfig& m, std::uint64_t batch, std::uint64_t seq) {
    return totals(forward_ops(m, Precision{}, prefill(batch, seq))).flops();
}
// The same with the LM head over the last token of each sequence only.
inline std::uint64_t prefill_flops_last_token_only(const ModelConfig& m, std::uint64_t batch, std::uint64_t seq) {
    Pass p = prefill(batch, seq);
    p.logits_for_all = false;
    return totals(forward_ops(m, Precision{}, p)).flops();
}
// One decode step at context T (T cached tokens plus the new one), per sequence of the batch.
inline std::uint64_t decode_flops_per_token(const ModelConfig& m, std::uint64_t context) {
    return totals(forward_ops(m, Precision{}, decode(1, context))).flops();
}

// ---- Memory, bounds and batches -----------------------------------------------------------------

// The peak of one pass's transient activations: the residual stream (N x h) plus the largest
// live_elements of its ops, in the activation dtype.
inline std::uint64_t activation_peak_bytes(const ModelConfig& m, const Precision& pr, const Pass& p) {
    std::uint64_t live = 0;
    for (const auto& o : forward_ops(m, pr, p)) live = std::max(live, o.live_elements);
    return detail::bytes(pr.activations, detail::add(detail::mul(p.batch, p.new_tokens, m.hidden), live));
}
// What `lab model` reports: the larger of the peaks of the prefill of S tokens and of the decode
// step at context T, at batch B.
inline std::uint64_t activation_peak_bytes(const ModelConfig& m, const Precision& pr, std::uint64_t batch,
                                           std::uint64_t seq, std::uint64_t context) {
    return std::max(activation_peak_bytes(m, pr, prefill(batch, seq)), activation_peak_bytes(m, pr, decode(batch, context)));
}

// The fastest one decode step at batch B and context T can be on a device streaming
// `bandwidth` B/s: every weight read once plus every sequence's cached K and V, nothing else:
// (weight_bytes + B x cached_tokens(T) x kv_bytes_per_token) / bandwidth.
inline double decode_step_lower_bound_s(const ModelConfig& m, const Precision& pr, std::uint64_t batch,
                                        std::uint64_t context, double bandwidth) {
    const double b = static_cast<double>(weight_bytes(m, pr.weights)) +
                     static_cast<double>(kv_cache_bytes(m, pr.kv, batch, context));
    return b / bandwidth;
}

// The batch at which a decode step's arithmetic intensity reaches the device's ridge
// (peak_flops / bandwidth, as lab/roofline.hpp defines it). With F = decode_flops_per_token(T),
// W = weight bytes and K = cached_tokens(T) x kv_bytes_per_token, a step at batch B does B F
// FLOP over W + B K bytes, so AI(B) = B F / (W + B K), rising towards F / K; it equals the
// ridge R at B = R W / (F - R K). nullopt when F <= R K: the KV reads grow with the batch
// as fast as the FLOPs, and no batch reaches the ridge at this context.
inline std::optional<double> ridge_batch(const ModelConfig& m, const Precision& pr, std::uint64_t context,
                                         double peak_flops, double bandwidth) {
    if (!(peak_flops > 0) || !(bandwidth > 0)) return std::nullopt;
    const double ridge = peak_flops / bandwidth;
    const double f = static_cast<double>(decode_flops_per_token(m, context));
    const double w = static_cast<double>(weight_bytes(m, pr.weights));
    const double k = static_cast<double>(kv_cache_bytes(m, pr.kv, 1, context));
    if (f <= ridge * k) return std::nullopt;
    return ridge * w / (f - ridge * k);
}

// Memory one batch needs: weights + KV cache at context T + the activation peak (prefill of S
// tokens or decode step at T, whichever is larger).
inline std::uint64_t memory_needed_bytes(const ModelConfig& m, const Precision& pr, std::uint64_t batch,
                                         std::uint64_t seq, std::uint64_t context) {
    return detail::add(detail::add(weight_bytes(m, pr.weights), kv_cache_bytes(m, pr.kv, batch, context)),
                       activation_peak_bytes(m, pr, batch, seq, context));
}

// The largest batch whose memory_needed_bytes fits `memory_bytes`; 0 when not even one does
// (or the weights alone do not fit).
inline std::uint64_t max_batch(const ModelConfig& m, const Precision& pr, std::uint64_t seq, std::uint64_t context,
                               std::uint64_t memory_bytes) {
    const std::uint64_t weights = weight_bytes(m, pr.weights);
    if (memory_needed_bytes(m, pr, 1, seq, context) > memory_bytes) return 0;
    // The need grows linearly in B (up to rounding of sub-byte dtypes): estimate, then step to
    // the exact answer.
    const std::uint64_t per_sequence = memory_needed_bytes(m, pr, 1, seq, context) - weights;
    std::uint64_t b = per_sequence > 0 ? (memory_bytes - weights) / per_sequence : 1;
    b = std::max<std::uint64_t>(b, 1);
    while (b > 1 && memory_needed_bytes(m, pr, b, seq, context) > memory_bytes) --b;
    while (memory_needed_bytes(m, pr, b + 1, seq, context) <= memory_bytes) ++b;
    return b;
}

}  // namespace lab::transformer
