// Tests for the transformer arithmetic (framework/include/lab/transformer.hpp, docs/arithmetic.md)
// on the shipped model configs (configs/models/*.json, read by framework/src/model_config.cpp):
// exact published parameter totals of four families, KV and weight bytes, the decode lower bound
// of REFERENCES.md's worked case, per-op counts summing to the totals, causal and windowed
// attention counting, the activation peak, the ridge batch and max_batch.
#include <cstdint>
#include <filesystem>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "lab/transformer.hpp"
#include "model_config.hpp"

namespace {

namespace fs = std::filesystem;
namespace tf = lab::transformer;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

tf::ModelConfig shipped(const std::string& name) {
    return lab::read_model_config(fs::path(LAB_SOURCE_ROOT) / "configs" / "models" / (name + ".json"));
}

const tf::Precision kFp16 = tf::precision(lab::Dtype::fp16);

}  // namespace

TEST_CASE("Llama-2-7B: 6,738,415,616 parameters, 512 KiB of fp16 KV per token, 13.48 GB of fp16 weights, 8.67 ms per decode step at 1.555 TB/s",
          "[transformer]") {
    // configs/models/llama-2-7b.json is a copy of testdata/models/llama-2-7b.config.json.
    const auto m = shipped("llama-2-7b");
    const auto p = tf::param_counts(m);
    CHECK(p.total() == 6'738'415'616ull);
    CHECK(p.embedding == 131'072'000ull);      // 32000 x 4096
    CHECK(p.attention == 2'147'483'648ull);    // 32 x 4 x 4096^2
    CHECK(p.mlp == 4'328'521'728ull);          // 32 x 3 x 4096 x 11008
    CHECK(p.norm == 266'240ull);               // (2 x 32 + 1) x 4096
    CHECK(p.lm_head == 131'072'000ull);        // untied
    CHECK(tf::kv_bytes_per_token(m, lab::Dtype::fp16) == 524'288ull);  // 2 x 32 x 32 x 128 x 2 B
    CHECK(tf::weight_bytes(m, lab::Dtype::fp16) == 13'476'831'232ull); // 13.48 GB
    CHECK(tf::weight_bytes(m, lab::Dtype::int4) == 3'369'207'808ull);
    CHECK(tf::weight_bytes(m, lab::Dtype::mxfp4) ==
          static_cast<std::uint64_t>(lab::storage_bytes(lab::Dtype::mxfp4, 6'738'415'616.0)));
    // Batch 1, nothing cached yet: the weights alone, 13,476,831,232 B / 1.555e12 B/s.
    const double bound = tf::decode_step_lower_bound_s(m, kFp16, 1, 0, 1.555e12);
    CHECK_THAT(bound, WithinAbs(8.67e-3, 0.005e-3));
    // Each cached token adds its 524,288 B: 4096 of them, 2.15 GB more, 10.05 ms.
    CHECK_THAT(tf::decode_step_lower_bound_s(m, kFp16, 1, 4096, 1.555e12), WithinAbs(10.05e-3, 0.005e-3));
    CHECK(tf::kv_cache_bytes(m, lab::Dtype::fp16, 8, 4096) == 8ull * 4096 * 524'288);
}

TEST_CASE("GPT-2 small: 124,439,808 parameters with a tied head and 1024 learned positions", "[transformer]") {
    const auto m = shipped("gpt2");
    REQUIRE(m.family == tf::Family::gpt2);
    CHECK(m.tied_embeddings);
    CHECK(m.n_positions == 1024);
    CHECK(m.intermediate == 3072);  // n_inner absent: 4 x n_embd
    const auto p = tf::param_counts(m);
    CHECK(p.embedding == 39'383'808ull);   // wte 50257 x 768 + wpe 1024 x 768
    CHECK(p.attention == 28'348'416ull);   // 12 x (768 x 2304 + 2304 + 768 x 768 + 768)
    CHECK(p.mlp == 56'669'184ull);         // 12 x (2 x 768 x 3072 + 3072 + 768)
    CHECK(p.norm == 38'400ull);            // 25 LayerNorms x (weight + bias) x 768
    CHECK(p.lm_head == 0);
    CHECK(p.total() == 124'439'808ull);    // the published count of GPT-2 small
}

TEST_CASE("GQA models: Llama-3-8B's 8,030,261,248 and Mistral-7B's 7,241,732,096 parameters", "[transformer]") {
    // Per layer (h 4096, 32 query and 8 KV heads of 128, I 14336): attention 4096 x (32 + 16) x 128
    // + 4096 x 4096 = 41,943,040; MLP 3 x 4096 x 14336 = 176,160,768; norms 8,192: 218,112,000,
    // times 32 = 6,979,584,000. Plus the final norm, 4,096, and untied embedding and head:
    //   Llama-3-8B, V 128256: 2 x 525,336,576 -> 8,030,261,248, half the 16,060,522,496 bytes
    //   its bf16 checkpoint index lists (total_size);
    //   Mistral-7B-v0.1, V 32000: 2 x 131,072,000 -> 7,241,732,096, half of its 14,483,464,192.
    const auto llama3 = shipped("llama-3-8b");
    CHECK(tf::param_count(llama3) == 8'030'261'248ull);
    CHECK(tf::param_counts(llama3).attention == 32ull * 41'943'040);
    CHECK(tf::kv_bytes_per_token(llama3, lab::Dtype::fp16) == 131'072ull);  // 2 x 32 x 8 x 128 x 2: a quarter of MHA's
    const auto mistral = shipped("mistral-7b");
    CHECK(tf::param_count(mistral) == 7'241'732'096ull);
    CHECK(mistral.sliding_window == 4096);
}

TEST_CASE("Qwen2-0.5B: q, k and v biases, tied head, 494,032,768 parameters", "[transformer]") {
    // h 896, 14 query heads and 2 KV heads of 64, I 4864, 24 layers, V 151936, tied. Per layer:
    // q 896 x 896 + 896, k and v 896 x 128 + 128 each, o 896 x 896 (no bias): 1,836,160;
    // MLP 3 x 896 x 4864 = 13,074,432; norms 1,792: 14,912,384, times 24 = 357,897,216.
    // Embedding 151936 x 896 = 136,134,656; final norm 896. Total 494,032,768 (the "0.49B" of
    // Qwen's model card).
    const auto m = shipped("qwen2-0.5b");
    CHECK(m.qkv_bias);
    CHECK_FALSE(m.out_bias);
    CHECK(m.sliding_window == 0);  // use_sliding_window: false
    const auto p = tf::param_counts(m);
    CHECK(p.attention == 24ull * 1'836'160);
    CHECK(p.lm_head == 0);
    CHECK(p.total() == 494'032'768ull);
    // Without the biases, 24 x (896 + 128 + 128) fewer.
    auto no_bias = m;
    no_bias.qkv_bias = false;
    CHECK(p.total() - tf::param_count(no_bias) == 24ull * 1152);
}

TEST_CASE("every op's FLOPs and bytes sum to the pass's totals, and matmul FLOPs are 2 x tokens x weights plus attention",
          "[transformer]") {
    const auto name = GENERATE(as<std::string>{}, "llama-2-7b", "gpt2", "qwen2-0.5b", "mistral-7b", "tiny");
    const auto m = shipped(name);
    const std::uint64_t B = 3, S = 100, T = 700;
    for (const auto& pass : {tf::prefill(B, S), tf::decode(B, T)}) {
        const auto ops = tf::forward_ops(m, kFp16, pass);
        std::uint64_t mm = 0, ew = 0, bytes = 0;
        for (const auto& o : ops) {
            mm += o.matmul_flops;
            ew += o.elementwise_flops;
            bytes += o.bytes();
            CHECK(o.bytes() > 0);
        }
        const auto t = tf::totals(ops);
        CHECK(t.matmul_flops == mm);
        CHECK(t.elementwise_flops == ew);
        CHECK(t.bytes == bytes);
        // Matmul FLOPs: 2 per token per weight of every projection (the embedding is a gather
        // and the LM head, tied or not, is a V x h matmul) plus QK^T and AV, 2 d each per score.
        const auto p = tf::param_counts(m);
        const std::uint64_t N = pass.batch * pass.new_tokens;
        std::uint64_t matmul_weights = m.layers * (m.hidden * tf::qkv_width(m) + m.heads * m.head_dim * m.hidden +
                                                   (m.gated_mlp ? 3 : 2) * m.hidden * m.intermediate) +
                                       m.vocab * m.hidden;
        const std::uint64_t scores = pass.batch * m.heads * tf::scores_per_head(m, pass);
        CHECK(t.matmul_flops == 2 * N * matmul_weights + m.layers * 2 * 2 * m.head_dim * scores);
        CHECK(p.total() > matmul_weights);  // embeddings, norms and biases are not matmul weights
    }
    CHECK(tf::prefill_flops(m, B, S) == tf::totals(tf::forward_ops(m, kFp16, tf::prefill(B, S))).flops());
    // FLOPs are per token of the batch: a step at batch 3 is three steps at batch 1.
    CHECK(tf::totals(tf::forward_ops(m, kFp16, tf::decode(B, T))).flops() == B * tf::decode_flops_per_token(m, T));
}

TEST_CASE("causal attention counts S(S+1)/2 scores per head in a prefill and T + 1 at a decode step", "[transformer]") {
    const auto m = shipped("llama-2-7b");
    CHECK(tf::scores_per_head(m, tf::prefill(1, 1)) == 1);
    CHECK(tf::scores_per_head(m, tf::prefill(1, 512)) == 512ull * 513 / 2);
    CHECK(tf::scores_per_head(m, tf::decode(1, 0)) == 1);
    CHECK(tf::scores_per_head(m, tf::decode(1, 4096)) == 4097);
    CHECK(tf::attended_tokens(m, tf::decode(1, 4096)) == 4097);
    const auto ops = tf::forward_ops(m, kFp16, tf::prefill(2, 512));
    for (const auto& o : ops)
        if (o.name == "attn_scores" || o.name == "attn_av")  // 32 layers x 2 x 128 x 32 heads x 2 sequences x 131,328
            CHECK(o.matmul_flops == 32ull * 2 * 128 * 32 * 2 * (512ull * 513 / 2));
    // The LM head on all 2 x 512 tokens, or on the last of each: 2 x 1022 x 4096 x 32000 apart.
    CHECK(tf::prefill_flops(m, 2, 512) - tf::prefill_flops_last_token_only(m, 2, 512) == 2ull * 1022 * 4096 * 32000);
}

TEST_CASE("a sliding window caps the KV cache and the scores at the window", "[transformer]") {
    const auto m = shipped("mistral-7b");  // window 4096
    const std::uint64_t kv = tf::kv_bytes_per_token(m, lab::Dtype::fp16);
    CHECK(tf::kv_cache_bytes(m, lab::Dtype::fp16, 2, 1000) == 2 * 1000 * kv);
    CHECK(tf::kv_cache_bytes(m, lab::Dtype::fp16, 2, 32768) == 2 * 4096 * kv);
    CHECK(tf::scores_per_head(m, tf::decode(1, 4095)) == 4096);
    CHECK(tf::scores_per_head(m, tf::decode(1, 10'000)) == 4096);
    CHECK(tf::attended_tokens(m, tf::decode(1, 10'000)) == 4096);
    // A prefill longer than the window: the first 4096 tokens see 1..4096, the rest 4096 each.
    CHECK(tf::scores_per_head(m, tf::prefill(1, 5000)) == 4096ull * 4097 / 2 + 904ull * 4096);
    CHECK(tf::attended_tokens(m, tf::prefill(1, 5000)) == 5000);
    // The decode bound reads the window's tokens, however long the context.
    CHECK(tf::decode_step_lower_bound_s(m, kFp16, 1, 100'000, 1e12) == tf::decode_step_lower_bound_s(m, kFp16, 1, 4096, 1e12));
    // Without the window the cache grows with the context.
    auto unwindowed = m;
    unwindowed.sliding_window = 0;
    CHECK(tf::kv_cache_bytes(unwindowed, lab::Dtype::fp16, 1, 32768) == 32768 * kv);
}

TEST_CASE("the KV dtype sets the KV bytes alone, block scales included", "[transformer]") {
    const auto m = shipped("llama-2-7b");
    CHECK(tf::kv_bytes_per_token(m, lab::Dtype::fp8_e4m3) == 262'144ull);
    CHECK(tf::kv_bytes_per_token(m, lab::Dtype::fp32) == 1'048'576ull);
    // 262,144 values of 4 bits in 8,192 blocks of 32, each with a scale byte.
    CHECK(tf::kv_bytes_per_token(m, lab::Dtype::mxfp4) == 131'072ull + 8'192ull);
    const auto p = tf::precision(lab::Dtype::int4);
    CHECK(p.kv == lab::Dtype::int4);
    CHECK(p.activations == lab::Dtype::fp16);
    CHECK(tf::precision(lab::Dtype::bf16, lab::Dtype::fp8_e4m3).kv == lab::Dtype::fp8_e4m3);
}

TEST_CASE("the activation peak is the residual stream plus the largest op's live tensors", "[transformer]") {
    const auto m = tf::tiny_model();  // h 256, I 688, 4 heads of 64, V 2048
    // Prefill of 8 tokens: the LM head holds 8 x 256 inputs and 8 x 2048 logits (18,432), more
    // than the gated MLP's 3 x 8 x 688 (16,512) or attention's 8 x 256 + 4 x 8 x 8 (2,304);
    // plus the residual stream, 8 x 256: 20,480 elements of 2 bytes.
    CHECK(tf::activation_peak_bytes(m, kFp16, tf::prefill(1, 8)) == 40'960ull);
    // Decode at context 100: LM head 256 + 2048 = 2,304 > MLP 2,064; plus 256 -> 2,560 elements.
    CHECK(tf::activation_peak_bytes(m, kFp16, tf::decode(1, 100)) == 5'120ull);
    CHECK(tf::activation_peak_bytes(m, kFp16, 1, 8, 100) == 40'960ull);
    // A long prompt: the 4 x 4096 x 4096 score matrix dominates.
    const std::uint64_t S = 4096, N = S;
    CHECK(tf::activation_peak_bytes(m, kFp16, tf::prefill(1, S)) == 2 * (N * 256 + 4 * S * S + N * 256));
}

TEST_CASE("the ridge batch is where a decode step's arithmetic intensity meets the ridge", "[transformer]") {
    const auto m = shipped("llama-3-8b");
    const double peak = 312e12, bw = 1.555e12, ridge = peak / bw;
    const std::uint64_t T = 256;
    const auto b = tf::ridge_batch(m, kFp16, T, peak, bw);
    REQUIRE(b.has_value());
    const double f = static_cast<double>(tf::decode_flops_per_token(m, T));
    const double w = static_cast<double>(tf::weight_bytes(m, lab::Dtype::fp16));
    const double k = static_cast<double>(tf::kv_cache_bytes(m, lab::Dtype::fp16, 1, T));
    CHECK_THAT(*b * f / (w + *b * k), WithinRel(ridge, 1e-9));
    // Nothing cached: ridge x W / F, a little above the ridge itself: a step does 2 FLOP per
    // 2-byte weight, except for the embedding, which is a gather.
    const auto b0 = tf::ridge_batch(m, kFp16, 0, peak, bw);
    REQUIRE(b0.has_value());
    CHECK_THAT(*b0, WithinRel(ridge * w / static_cast<double>(tf::decode_flops_per_token(m, 0)), 1e-12));
    CHECK(*b0 > ridge);
    CHECK(*b0 < 1.1 * ridge);
    // Attention over the cache does 4 n_q d FLOP per 4 n_kv d bytes of fp16 K and V: an AI of
    // n_q / n_kv, 4 for Llama-3-8B, whatever the batch. Once the cache outweighs the weights'
    // share (here from about 580 tokens: 2 x 7.5e9 / (4 x 32 x 8 x 128 x (200.6 - 4))), no batch
    // reaches a ridge of 200 FLOP/B; with as many KV heads as query heads (Llama-2-7B) still less.
    CHECK_FALSE(tf::ridge_batch(m, kFp16, 1024, peak, bw).has_value());
    CHECK_FALSE(tf::ridge_batch(shipped("llama-2-7b"), kFp16, 4096, peak, bw).has_value());
}

TEST_CASE("max_batch is the largest batch whose weights, KV cache and activations fit", "[transformer]") {
    const auto m = shipped("llama-2-7b");
    const std::uint64_t S = 512, T = 4096, memory = 80ull << 30;  // 80 GiB
    const std::uint64_t b = tf::max_batch(m, kFp16, S, T, memory);
    REQUIRE(b > 0);
    CHECK(tf::memory_needed_bytes(m, kFp16, b, S, T) <= memory);
    CHECK(tf::memory_needed_bytes(m, kFp16, b + 1, S, T) > memory);
    CHECK(tf::memory_needed_bytes(m, kFp16, 1, S, T) ==
          tf::weight_bytes(m, lab::Dtype::fp16) + tf::kv_cache_bytes(m, lab::Dtype::fp16, 1, T) +
              tf::activation_peak_bytes(m, kFp16, 1, S, T));
    CHECK(tf::max_batch(m, kFp16, S, T, 10'000'000'000ull) == 0);  // 13.48 GB of weights do not fit in 10 GB
}

TEST_CASE("the KV cache exceeds the weights from floor(W / (B k)) + 1 tokens on; a window may keep it below", "[transformer]") {
    const auto m = shipped("llama-2-7b");
    // 13,476,831,232 / 524,288 = 25,705.02: 25,705 tokens of fp16 KV are still less than the weights.
    const std::uint64_t t = tf::kv_exceeds_weights_context(m, kFp16, 1);
    CHECK(t == 25'706);
    CHECK(tf::kv_cache_bytes(m, lab::Dtype::fp16, 1, t) > tf::weight_bytes(m, lab::Dtype::fp16));
    CHECK(tf::kv_cache_bytes(m, lab::Dtype::fp16, 1, t - 1) <= tf::weight_bytes(m, lab::Dtype::fp16));
    for (std::uint64_t b : {2, 3, 8, 32})
        for (lab::Dtype kv : {lab::Dtype::fp16, lab::Dtype::fp8_e4m3, lab::Dtype::fp32}) {
            const auto pr = tf::precision(lab::Dtype::fp16, kv);
            const std::uint64_t c = tf::kv_exceeds_weights_context(m, pr, b);
            INFO("batch " << b << ", KV " << lab::to_string(kv));
            CHECK(tf::kv_cache_bytes(m, kv, b, c) > tf::weight_bytes(m, lab::Dtype::fp16));
            CHECK(tf::kv_cache_bytes(m, kv, b, c - 1) <= tf::weight_bytes(m, lab::Dtype::fp16));
        }
    CHECK(tf::kv_exceeds_weights_context(m, kFp16, 4) == 6'427);  // 13,476,831,232 / 2,097,152 = 6,426.3
    // Llama-3-8B: 16,060,522,496 B of fp16 weights over 131,072 B per token (8 KV heads).
    CHECK(tf::kv_exceeds_weights_context(shipped("llama-3-8b"), kFp16, 1) == 122'533);
    // Mistral-7B's 4,096-token window caps its cache at 4,096 x 131,072 B at batch 1, below its weights.
    CHECK(tf::kv_exceeds_weights_context(shipped("mistral-7b"), kFp16, 1) == 0);
    CHECK(tf::kv_exceeds_weights_context(m, kFp16, 0) == 0);
}

TEST_CASE("the SDK's built-in models are the same as configs/models/tiny.json, llama-2-7b.json and llama-3-8b.json", "[transformer]") {
    const int which = GENERATE(0, 1, 2);
    const bool tiny = which == 0;
    const auto file = shipped(which == 0 ? "tiny" : which == 1 ? "llama-2-7b" : "llama-3-8b");
    const auto sdk = which == 0 ? tf::tiny_model() : which == 1 ? tf::llama_2_7b() : tf::llama_3_8b();
    INFO(sdk.name);
    CHECK(tf::param_count(file) == tf::param_count(sdk));
    CHECK(file.hidden == sdk.hidden);
    CHECK(file.intermediate == sdk.intermediate);
    CHECK(file.layers == sdk.layers);
    CHECK(file.heads == sdk.heads);
    CHECK(file.kv_heads == sdk.kv_heads);
    CHECK(file.head_dim == sdk.head_dim);
    CHECK(file.vocab == sdk.vocab);
    CHECK(file.tied_embeddings == sdk.tied_embeddings);
    CHECK(file.qkv_bias == sdk.qkv_bias);
    CHECK(file.gated_mlp == sdk.gated_mlp);
    CHECK(file.sliding_window == sdk.sliding_window);
    // tiny: 4 x (196,608 + 528,384 + 512) + 2 x 524,288 + 256; Llama-2-7B's published count;
    // Llama-3-8B: 32 x (41,943,040 + 176,160,768 + 8,192) + 2 x 525,336,576 + 4,096.
    CHECK(tf::param_count(sdk) == (tiny ? 3'950'848ull : which == 1 ? 6'738'415'616ull : 8'030'261'248ull));
    if (which == 2) CHECK(tf::kv_bytes_per_token(sdk, lab::Dtype::fp16) == 131'072);  // 2 x 32 x 8 x 128 x 2: 128 KiB
    CHECK(tf::check_model(sdk).empty());
}

TEST_CASE("a count beyond 64 bits throws instead of wrapping", "[transformer]") {
    const auto m = shipped("llama-2-7b");
    CHECK_THROWS_AS(tf::kv_cache_bytes(m, lab::Dtype::fp16, 1ull << 40, 1ull << 30), std::overflow_error);
    CHECK_THROWS_AS(tf::prefill_flops(m, 1ull << 20, 1ull << 24), std::overflow_error);
}
