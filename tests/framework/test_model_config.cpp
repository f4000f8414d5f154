// Tests for reading HuggingFace config.json files (framework/src/model_config.cpp): each family's
// keys and defaults, the family from model_type or architectures, keys that do not change the
// counts accepted, and every kind of bad input refused with the file, the line of the key and the
// key named.
#include <algorithm>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "errors.hpp"
#include "model_config.hpp"

namespace {

namespace tf = lab::transformer;
using Catch::Matchers::Contains;

const char* kLlama = R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 11008,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "vocab_size": 32000
})";

// The InputError message parsing `text` throws, or "" when it parses.
std::string error_of(const std::string& text) {
    try {
        lab::parse_model_config(text, "models/bad.json");
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

// `s` with `key` set to the JSON `value` (added when missing).
std::string with(std::string s, const std::string& key, const std::string& value) {
    const std::string quoted = "\"" + key + "\": ";
    if (auto at = s.find(quoted); at != std::string::npos) {
        const auto end = s.find_first_of(",\n", at + quoted.size());
        return s.replace(at + quoted.size(), end - at - quoted.size(), value);
    }
    return s.insert(s.rfind('}'), ",  \"" + key + "\": " + value + "\n");
}
std::string llama_with(const std::string& key, const std::string& value) { return with(kLlama, key, value); }

}  // namespace

TEST_CASE("a Llama config takes its defaults from transformers' LlamaConfig", "[model_config]") {
    const auto m = lab::parse_model_config(kLlama, "llama.json");
    CHECK(m.family == tf::Family::llama);
    CHECK(m.kv_heads == 32);   // num_key_value_heads absent: as many as the heads
    CHECK(m.head_dim == 128);  // head_dim absent: hidden / heads
    CHECK_FALSE(m.tied_embeddings);
    CHECK_FALSE(m.qkv_bias);
    CHECK_FALSE(m.mlp_bias);
    CHECK(m.gated_mlp);
    CHECK(m.norm == tf::Norm::rms_norm);
    CHECK(m.rotary());
    SECTION("attention_bias adds q, k, v and o biases; mlp_bias the MLP's") {
        auto b = lab::parse_model_config(llama_with("attention_bias", "true"), "b.json");
        CHECK(b.qkv_bias);
        CHECK(b.out_bias);
        CHECK(lab::parse_model_config(llama_with("mlp_bias", "true"), "b.json").mlp_bias);
    }
    SECTION("an explicit head_dim wins over hidden / heads, and need not divide") {
        auto d = lab::parse_model_config(llama_with("num_attention_heads", "24").insert(1, "\"head_dim\": 160,"), "d.json");
        CHECK(d.head_dim == 160);
    }
    SECTION("null means absent") {
        CHECK(lab::parse_model_config(llama_with("head_dim", "null"), "n.json").head_dim == 128);
        CHECK(lab::parse_model_config(llama_with("sliding_window", "null"), "n.json").sliding_window == 0);
    }
}

// A review: "hidden_size": 4096.0 (as Python's json.dump writes a float) was called fractional.
TEST_CASE("a size written as a whole number with a point or an exponent is that integer", "[model_config]") {
    const auto m = lab::parse_model_config(with(llama_with("hidden_size", "4096.0"), "vocab_size", "3.2e4"), "f.json");
    CHECK(m.hidden == 4096);
    CHECK(m.vocab == 32000);
    const std::string qwen = with(with(llama_with("model_type", "\"qwen2\""), "use_sliding_window", "true"), "sliding_window", "4096");
    CHECK(lab::parse_model_config(with(qwen, "max_window_layers", "32.0"), "f.json").sliding_window == 0);  // a count that may be 0
    CHECK_THAT(error_of(llama_with("hidden_size", "4096.5")), Contains("key 'hidden_size' must be an integer, got a fractional number (4096.5)"));
    CHECK_THAT(error_of(llama_with("hidden_size", "0.0")), Contains("key 'hidden_size' must be positive, got 0.0"));
    CHECK_THAT(error_of(llama_with("hidden_size", "-4096.0")), Contains("key 'hidden_size' must be positive"));
    CHECK_THAT(error_of(llama_with("hidden_size", "1e30")), Contains("more than lab counts") && Contains("fix:"));
}

TEST_CASE("the family comes from model_type, else from architectures", "[model_config]") {
    std::string by_arch = kLlama;
    by_arch.replace(by_arch.find("\"model_type\": \"llama\""), 21, "\"architectures\": [\"MistralForCausalLM\"]");
    CHECK(lab::parse_model_config(by_arch, "a.json").model_type == "mistral");
    by_arch.replace(by_arch.find("MistralForCausalLM"), 18, "Qwen2ForCausalLM");
    const auto q = lab::parse_model_config(by_arch, "a.json");
    CHECK(q.model_type == "qwen2");
    CHECK(q.qkv_bias);  // Qwen2 always has them
    CHECK_FALSE(q.out_bias);
}

TEST_CASE("sliding_window applies to Mistral unless turned off, and to Qwen2 only when turned on", "[model_config]") {
    const std::string mistral = with(llama_with("model_type", "\"mistral\""), "sliding_window", "4096");
    CHECK(lab::parse_model_config(mistral, "m.json").sliding_window == 4096);
    CHECK(lab::parse_model_config(with(mistral, "use_sliding_window", "false"), "m.json").sliding_window == 0);
    const std::string qwen = with(mistral, "model_type", "\"qwen2\"");
    CHECK(lab::parse_model_config(qwen, "q.json").sliding_window == 0);
    // With use_sliding_window, transformers' Qwen2 windows the layers from max_window_layers on.
    const std::string qwen_on = with(qwen, "use_sliding_window", "true");
    CHECK(lab::parse_model_config(with(qwen_on, "max_window_layers", "0"), "q.json").sliding_window == 4096);
    CHECK(lab::parse_model_config(with(qwen_on, "max_window_layers", "32"), "q.json").sliding_window == 0);
    // The window on layers 20..31 only (or 28..31 by the default): not modelled.
    CHECK_THAT(error_of(with(qwen_on, "max_window_layers", "20")), Contains("max_window_layers 20 of 32 layers"));
    CHECK_THAT(error_of(qwen_on), Contains("max_window_layers 28 of 32 layers"));
}

TEST_CASE("keys that do not change the counts are accepted", "[model_config]") {
    std::string s = kLlama;
    s.insert(1, R"("rope_theta": 500000.0, "rope_scaling": {"type": "linear", "factor": 2.0}, "attention_dropout": 0.1,
  "use_sliding_window": false, "bos_token_id": 1, "eos_token_id": [2, 3], "torch_dtype": "bfloat16",
  "summary_type": "cls_index", "num_experts": 0, "q_lora_rank": null, "transformers_version": "4.40.0",)");
    CHECK(lab::parse_model_config(s, "ok.json").hidden == 4096);
}

TEST_CASE("GPT-2 keys: n_inner defaults to 4 x n_embd, biases and LayerNorm everywhere, tied by default", "[model_config]") {
    const auto m = lab::parse_model_config(
        R"({"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16, "n_positions": 1024, "vocab_size": 50257,
            "n_inner": null, "activation_function": "gelu_new", "summary_use_proj": true})",
        "gpt2-medium.json");
    CHECK(m.family == tf::Family::gpt2);
    CHECK(m.intermediate == 4096);
    CHECK(m.head_dim == 64);
    CHECK(m.tied_embeddings);
    CHECK(m.qkv_bias);
    CHECK(m.out_bias);
    CHECK(m.mlp_bias);
    CHECK_FALSE(m.gated_mlp);
    CHECK(m.norm == tf::Norm::layer_norm);
    CHECK(m.norm_bias);
    CHECK(tf::param_count(m) == 354'823'168ull);  // GPT-2 medium's published 355M (345M in the paper's erratum)
}

TEST_CASE("bad configs are refused naming the file, the line and the key", "[model_config]") {
    using Row = std::tuple<std::string, std::string, std::string>;  // what, config text, words the message holds
    const auto [what, text, expected] = GENERATE(table<std::string, std::string, std::string>({
        Row{"not JSON", "{\n  \"hidden_size\": 4096,\n  \"vocab_size\" 32000\n}", "models/bad.json:3: not JSON"},
        Row{"not an object", "[1, 2]", "one JSON object"},
        // A fuzzing review: this said nlohmann's "[json.exception.out_of_range.406]" words.
        Row{"a number beyond a double", llama_with("rope_theta", "1e400"), "the number 1e400 is beyond the range of a double"},
        Row{"a string for a size", llama_with("hidden_size", "\"4096\""), "models/bad.json:3: key 'hidden_size' must be an integer, got a string"},
        Row{"a fraction for a size", llama_with("num_hidden_layers", "32.5"), "'num_hidden_layers' must be an integer"},
        Row{"a number for a flag", llama_with("tie_word_embeddings", "1"), "'tie_word_embeddings' must be true or false"},
        Row{"a zero size", llama_with("num_hidden_layers", "0"), "models/bad.json:5: key 'num_hidden_layers' must be positive, got 0"},
        Row{"a negative size", llama_with("vocab_size", "-32000"), "key 'vocab_size' must be positive, got -32000"},
        Row{"heads not dividing hidden", llama_with("num_attention_heads", "30"), "num_attention_heads (30) does not divide hidden_size (4096)"},
        Row{"KV heads not dividing heads", llama_with("num_key_value_heads", "5"), "num_key_value_heads (5) does not divide num_attention_heads (32)"},
        Row{"GPT-2 heads not dividing", R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 7, "n_positions": 1024, "vocab_size": 50257})",
            "n_head (7) does not divide n_embd (768)"},
        Row{"an unknown family", llama_with("model_type", "\"falcon\""), "models/bad.json:2: model_type 'falcon' is not a family"},
        Row{"an unknown architecture", R"({"architectures": ["GemmaForCausalLM"], "hidden_size": 1})", "architecture 'GemmaForCausalLM'"},
        Row{"no family at all", R"({"hidden_size": 4096})", "key 'model_type' is missing"},
        Row{"a missing key", R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "vocab_size": 32000})",
            "key 'num_attention_heads' is missing"},
        Row{"a missing GPT-2 key", R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257})",
            "key 'n_positions' is missing"},
        Row{"mixture of experts", llama_with("num_local_experts", "8"), "key 'num_local_experts' (8) makes this a mixture of experts"},
        Row{"experts per token", llama_with("num_experts_per_tok", "2"), "key 'num_experts_per_tok'"},
        Row{"routed experts", llama_with("n_routed_experts", "64"), "key 'n_routed_experts'"},
        Row{"Qwen-MoE experts", llama_with("num_experts", "60"), "key 'num_experts'"},
        Row{"latent attention", llama_with("kv_lora_rank", "512"), "key 'kv_lora_rank' (512) makes this multi-head latent attention"},
        Row{"latent queries", llama_with("q_lora_rank", "1536"), "key 'q_lora_rank'"},
    }));
    INFO(what);
    const std::string message = error_of(text);
    CHECK_THAT(message, Contains("models/bad.json"));
    CHECK_THAT(message, Contains(expected));
    CHECK_THAT(message, Contains("fix:"));
    CHECK_THAT(message, !Contains("json.exception"));
}

TEST_CASE("a config file is read from a path, a model folder or a built-in name", "[model_config]") {
    const auto dir = std::filesystem::path(LAB_SOURCE_ROOT) / "configs" / "models";
    CHECK(lab::resolve_model_config("llama-2-7b", dir) == dir / "llama-2-7b.json");
    const auto names = lab::builtin_model_names(dir);
    for (const char* n : {"gpt2", "llama-2-7b", "llama-3-8b", "mistral-7b", "qwen2-0.5b", "tiny"})
        CHECK(std::find(names.begin(), names.end(), n) != names.end());
    CHECK_THROWS_AS(lab::resolve_model_config("llama-9b", dir), lab::UsageError);
    CHECK_THROWS_AS(lab::resolve_model_config("/nonexistent/config.json", dir), lab::InputError);
    CHECK(lab::read_model_config(dir / "llama-2-7b.json").name == "llama-2-7b");
}
