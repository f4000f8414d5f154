// HuggingFace config.json -> transformer::ModelConfig (see model_config.hpp). The keys each family
// reads and their defaults are those of the transformers library's LlamaConfig, MistralConfig,
// Qwen2Config and GPT2Config; docs/arithmetic.md lists them.
#include "model_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"
#include "input_file.hpp"

namespace lab {

namespace {

using json = nlohmann::json;
using transformer::Family;
using transformer::ModelConfig;

// Keys that change the parameter or FLOP counts in ways lab/transformer.hpp does not model.
struct RefusedKey {
    const char* key;
    const char* what;
};
constexpr RefusedKey kRefused[] = {
    {"num_local_experts", "a mixture of experts (Mixtral style)"},
    {"num_experts", "a mixture of experts (Qwen-MoE style)"},
    {"n_routed_experts", "a mixture of experts (DeepSeek style)"},
    {"num_experts_per_tok", "a mixture of experts (experts per token)"},
    {"kv_lora_rank", "multi-head latent attention (compressed KV)"},
    {"q_lora_rank", "multi-head latent attention (compressed queries)"},
    {"add_cross_attention", "cross-attention layers"},
};

// How a value is described in a message: its JSON type and, when short, the value itself.
std::string describe(const json& v) {
    std::string kind = v.is_number_float() ? "a fractional number" : v.is_number() ? "a number" : std::string("a ") + v.type_name();
    if (v.is_null()) kind = "null";
    if (v.is_array() || v.is_object()) return kind;
    const std::string text = v.dump();
    return text.size() <= 40 ? kind + " (" + text + ")" : kind;
}

// A JSON number with a whole value as a count: 4096, and 4096.0 or 4.096e3 alike (JSON has one
// number type; Python's json.dump of a float and some converters write sizes so). nullopt for a
// fraction, a negative number, one past 64 bits, and anything not a number.
std::optional<std::uint64_t> whole_number(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (!v.is_number_float()) return std::nullopt;
    const double d = v.get<double>();
    // 2^64 is exact in a double; every double below it that is whole converts exactly.
    if (d >= 0 && d < 18446744073709551616.0 && std::trunc(d) == d) return static_cast<std::uint64_t>(d);
    return std::nullopt;
}

// Reads the keys of one config object, each error naming the file, the key's line and the fix.
class Reader {
public:
    Reader(const json& j, const std::string& file, const std::string& text) : j_(j), file_(file), text_(text) {}

    // file:line of the first `"key":` in the text (nested objects may hold the same key; a
    // config's own keys come first in practice), or the file alone.
    std::string where(const std::string& key) const {
        const std::string quoted = "\"" + key + "\"";
        for (std::size_t pos = text_.find(quoted); pos != std::string::npos; pos = text_.find(quoted, pos + 1)) {
            std::size_t after = pos + quoted.size();
            while (after < text_.size() && std::isspace(static_cast<unsigned char>(text_[after]))) ++after;
            if (after < text_.size() && text_[after] == ':')
                return file_ + ":" + std::to_string(1 + std::count(text_.begin(), text_.begin() + static_cast<long>(pos), '\n'));
        }
        return file_;
    }

    [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& fix) const {
        throw InputError(where(key), what, fix);
    }

    bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
    const json& at(const std::string& key) const { return j_.at(key); }

    // A required positive integer, for a model of `family`.
    std::uint64_t size(const std::string& key, const std::string& family) const {
        if (!has(key))
            fail(key, "key '" + key + "' is missing" + (j_.contains(key) ? " (it is null)" : "") + "; a " + family +
                          " config needs it",
                 "add \"" + key + "\": <integer> as the model's published config.json has it");
        return positive(key);
    }
    // An optional positive integer (absent or null: nullopt).
    std::optional<std::uint64_t> optional_size(const std::string& key) const {
        if (!has(key)) return std::nullopt;
        return positive(key);
    }
    // An optional integer that may be 0 (absent or null: `fallback`).
    std::uint64_t count(const std::string& key, std::uint64_t fallback) const {
        if (!has(key)) return fallback;
        if (const auto n = whole_number(j_.at(key))) return *n;
        return positive(key);  // says what is wrong with it
    }
    bool flag(const std::string& key, bool fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (!v.is_boolean())
            fail(key, "key '" + key + "' must be true or false, got " + describe(v),
                 "write \"" + key + "\": true or \"" + key + "\": false");
        return v.get<bool>();
    }
    std::string text(const std::string& key) const {
        const json& v = j_.at(key);
        if (!v.is_string())
            fail(key, "key '" + key + "' must be a string, got " + describe(v), "write it as a JSON string");
        return v.get<std::string>();
    }

private:
    std::uint64_t positive(const std::string& key) const {
        const json& v = j_.at(key);
        const auto n = whole_number(v);
        if (n && *n > 0) return *n;
        const bool whole = v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
        if (whole && (n || v.get<double>() < 0))
            fail(key, "key '" + key + "' must be positive, got " + v.dump(),
                 "correct \"" + key + "\"; sizes and counts are at least 1");
        if (whole)
            fail(key, "key '" + key + "' is " + v.dump() + ", more than lab counts (at most 2^64 - 1)",
                 "correct \"" + key + "\" to the model's published value");
        // The example is the value written, where it is a whole number in quotes ("32").
        std::string example = "32";
        if (v.is_string() && !v.get<std::string>().empty() && v.get<std::string>().find_first_not_of("0123456789") == std::string::npos)
            example = v.get<std::string>();
        fail(key, "key '" + key + "' must be an integer, got " + describe(v),
             "write it as a JSON integer, without quotes or a fraction, e.g. \"" + key + "\": " + example);
    }

    const json& j_;
    std::string file_;
    const std::string& text_;
};

const char* const kFamilies = "llama, mistral, qwen2 or gpt2";

// The keys each family reads a size from, and the field each sets: what a count too large for
// lab is blamed on (size_key_to_blame).
struct SizeField {
    const char* key;
    std::uint64_t ModelConfig::*field;
};
constexpr SizeField kLlamaSizes[] = {
    {"hidden_size", &ModelConfig::hidden},      {"intermediate_size", &ModelConfig::intermediate},
    {"num_hidden_layers", &ModelConfig::layers}, {"num_attention_heads", &ModelConfig::heads},
    {"num_key_value_heads", &ModelConfig::kv_heads}, {"head_dim", &ModelConfig::head_dim},
    {"vocab_size", &ModelConfig::vocab},         {"sliding_window", &ModelConfig::sliding_window},
};
constexpr SizeField kGpt2Sizes[] = {
    {"n_embd", &ModelConfig::hidden}, {"n_inner", &ModelConfig::intermediate}, {"n_layer", &ModelConfig::layers},
    {"n_head", &ModelConfig::heads},  {"vocab_size", &ModelConfig::vocab},     {"n_positions", &ModelConfig::n_positions},
};

// HuggingFace's model_type of the config: from `model_type`, else from `architectures`.
std::string model_type(const Reader& r) {
    if (r.has("model_type")) {
        const std::string t = r.text("model_type");
        if (t == "llama" || t == "mistral" || t == "qwen2" || t == "gpt2") return t;
        r.fail("model_type", "model_type '" + t + "' is not a family `lab model` knows (" + kFamilies + ")",
               "use a config of a Llama-, Mistral-, Qwen2- or GPT-2-style model; other families' parameter counts differ");
    }
    if (r.has("architectures")) {
        const json& a = r.at("architectures");
        if (!a.is_array() || a.empty() || !a.front().is_string())
            r.fail("architectures", "key 'architectures' must be a list of class names, got " + describe(a),
                   "write e.g. \"architectures\": [\"LlamaForCausalLM\"], or add \"model_type\"");
        const std::string arch = a.front().get<std::string>();
        for (const auto& [prefix, type] : {std::pair{"Llama", "llama"}, {"Mistral", "mistral"}, {"Qwen2", "qwen2"}, {"GPT2", "gpt2"}}) {
            const std::string p = prefix;
            if (arch.rfind(p, 0) == 0 && (arch.size() == p.size() || std::isupper(static_cast<unsigned char>(arch[p.size()]))))
                return type;
        }
        r.fail("architectures", "architecture '" + arch + "' is not a family `lab model` knows (" + kFamilies + ")",
               "use a config of a Llama-, Mistral-, Qwen2- or GPT-2-style model");
    }
    r.fail("model_type", "key 'model_type' is missing (and no 'architectures'): the model family is unknown",
           "add \"model_type\": \"llama\" (or mistral, qwen2, gpt2) as the model's published config.json has it");
}

void refuse_unmodelled(const Reader& r) {
    for (const auto& k : kRefused) {
        if (!r.has(k.key)) continue;
        const json& v = r.at(k.key);
        if (v == 0 || v == false) continue;  // 0 experts, no cross-attention: a dense model
        r.fail(k.key, std::string("key '") + k.key + "' (" + v.dump() + ") makes this " + k.what +
                          ", which `lab model` does not model: its parameter and FLOP counts would be wrong",
               "use the config of a dense model (Llama, Mistral, Qwen2, GPT-2 style)");
    }
}

ModelConfig read_llama_style(const Reader& r, const std::string& type) {
    const std::string family = type + "-style";
    ModelConfig m;
    m.family = Family::llama;
    m.model_type = type;
    m.hidden = r.size("hidden_size", family);
    m.intermediate = r.size("intermediate_size", family);
    m.layers = r.size("num_hidden_layers", family);
    m.heads = r.size("num_attention_heads", family);
    m.vocab = r.size("vocab_size", family);
    m.kv_heads = r.optional_size("num_key_value_heads").value_or(m.heads);
    if (m.heads % m.kv_heads != 0)
        r.fail("num_key_value_heads", "num_key_value_heads (" + std::to_string(m.kv_heads) +
                                          ") does not divide num_attention_heads (" + std::to_string(m.heads) + ")",
               "correct the head counts; each KV head serves a whole group of query heads");
    if (auto d = r.optional_size("head_dim")) {
        m.head_dim = *d;
    } else {
        if (m.hidden % m.heads != 0)
            r.fail("num_attention_heads", "num_attention_heads (" + std::to_string(m.heads) + ") does not divide hidden_size (" +
                                              std::to_string(m.hidden) + ") and there is no head_dim",
                   "correct the head count, or add \"head_dim\" as the model's published config.json has it");
        m.head_dim = m.hidden / m.heads;
    }
    m.tied_embeddings = r.flag("tie_word_embeddings", false);
    if (type == "qwen2") {
        // Qwen2 always has q, k, v biases and none on the output projection (transformers'
        // Qwen2Attention hard-codes them; Qwen2Config has no attention_bias).
        m.qkv_bias = true;
    } else {
        m.qkv_bias = m.out_bias = r.flag("attention_bias", false);
    }
    m.mlp_bias = r.flag("mlp_bias", false);
    // Mistral applies `sliding_window` when it is set. Qwen2 only with use_sliding_window, and then
    // on the layers from max_window_layers on (transformers' Qwen2: layer_idx >= max_window_layers,
    // default 28): every layer or none is modelled, some of them is not.
    const bool use_window = r.flag("use_sliding_window", type != "qwen2");
    const bool window_set = r.has("sliding_window") && r.at("sliding_window") != 0;
    if (use_window && window_set) {
        m.sliding_window = *r.optional_size("sliding_window");
        if (type == "qwen2") {
            const std::uint64_t first = r.count("max_window_layers", 28);
            if (first >= m.layers) m.sliding_window = 0;
            else if (first > 0)
                r.fail("max_window_layers", "use_sliding_window with max_window_layers " + std::to_string(first) + " of " +
                                                std::to_string(m.layers) + " layers puts the window on some layers only, "
                                                "which `lab model` does not model",
                       "set \"use_sliding_window\": false (as the published Qwen2 configs do), or max_window_layers 0");
        }
    }
    return m;
}

ModelConfig read_gpt2(const Reader& r) {
    const std::string family = "gpt2";
    ModelConfig m;
    m.family = Family::gpt2;
    m.model_type = "gpt2";
    m.hidden = r.size("n_embd", family);
    m.layers = r.size("n_layer", family);
    m.heads = r.size("n_head", family);
    m.vocab = r.size("vocab_size", family);
    m.n_positions = r.size("n_positions", family);
    m.intermediate = r.optional_size("n_inner").value_or(4 * m.hidden);
    if (m.hidden % m.heads != 0)
        r.fail("n_head", "n_head (" + std::to_string(m.heads) + ") does not divide n_embd (" + std::to_string(m.hidden) + ")",
               "correct n_head or n_embd");
    m.kv_heads = m.heads;
    m.head_dim = m.hidden / m.heads;
    m.tied_embeddings = r.flag("tie_word_embeddings", true);
    m.qkv_bias = m.out_bias = m.mlp_bias = true;
    m.gated_mlp = false;
    m.norm = transformer::Norm::layer_norm;
    m.norm_bias = true;
    return m;
}

std::string read_config_text(const std::filesystem::path& file) {
    return read_input_file(file, "the model config", kMaxModelConfigBytes,
                           "check the path and its permissions");
}

// 1-based line of byte offset `byte` in `text`.
std::size_t line_of(const std::string& text, std::size_t byte) {
    byte = std::min(byte, text.size());
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

}  // namespace

ModelConfig parse_model_config(const std::string& text, const std::string& where) {
    json j;
    // A number beyond a double (1e400) is refused by nlohmann in its own words and without a
    // place: said here with its line and byte.
    if (const auto big = first_overflowing_number(text))
        throw InputError(where + ":" + std::to_string(line_of(text, big->offset)), "byte " + std::to_string(big->offset) + ": " + big->problem,
                         "a HuggingFace config.json holds ordinary numbers: correct the one named");
    try {
        // The nesting is bounded as it is parsed: copying or printing a deeper tree would recurse.
        j = json::parse(text, [&](int depth, json::parse_event_t, json&) {
            if (depth > kMaxModelConfigDepth)
                throw InputError(where, "arrays and objects nested deeper than " + std::to_string(kMaxModelConfigDepth) +
                                            " levels",
                                 "a HuggingFace config.json nests two or three levels: give the model's own file");
            return true;
        });
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);  // drop "[json.exception...] parse error at line N, column M"
        throw InputError(where + ":" + std::to_string(line_of(text, e.byte > 0 ? e.byte - 1 : 0)), "not JSON: " + what,
                         "a HuggingFace config.json is one JSON object; correct the line named");
    } catch (const json::exception& e) {
        // A number beyond a double (1e400: found by fuzzing) is nlohmann's out_of_range, not a parse error.
        throw InputError(where, std::string("not JSON lab can read: ") + e.what(), "correct the number or value it names");
    }
    // Two values for one key (vocab_size twice): JSON keeps the last, and the model would be sized
    // by whichever that is.
    if (const auto dup = first_duplicate_key(text))
        throw InputError(dup->offset == std::string::npos ? where : where + ":" + std::to_string(line_of(text, dup->offset)),
                         "'" + dup->key + "' is written twice in one object: JSON keeps only the last",
                         "keep the one value the model has");
    if (!j.is_object())
        throw InputError(where, std::string("expected one JSON object of model keys, got a ") + j.type_name(),
                         "give the model's config.json (HuggingFace format)");
    Reader r(j, where, text);
    refuse_unmodelled(r);
    const std::string type = model_type(r);
    ModelConfig m = type == "gpt2" ? read_gpt2(r) : read_llama_style(r, type);
    if (std::string problem = transformer::check_model(m); !problem.empty())
        throw InputError(where, "the config describes no model lab can count: " + problem, "correct the config");
    return m;
}

std::optional<ModelSizeKey> size_key_to_blame(const std::filesystem::path& file, const ModelConfig& m,
                                              const std::function<bool(const ModelConfig&)>& too_large) {
    std::string text;
    try {
        text = read_config_text(file);
    } catch (const InputError&) {
        return std::nullopt;  // gone since it was read: the caller says what it can without a key
    }
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    const Reader r(j, file.string(), text);
    struct Candidate {
        ModelSizeKey key;
        std::uint64_t ModelConfig::*field;
    };
    std::vector<Candidate> written;
    for (const auto& [key, field] : m.family == Family::gpt2 ? std::vector<SizeField>(std::begin(kGpt2Sizes), std::end(kGpt2Sizes))
                                                             : std::vector<SizeField>(std::begin(kLlamaSizes), std::end(kLlamaSizes))) {
        // Only a key whose value the model holds: a size derived from others (head_dim from
        // hidden_size) or turned off (Qwen2's window) is not the file's to blame.
        if (r.has(key) && whole_number(r.at(key)) == m.*field && m.*field > 0)
            written.push_back({{key, m.*field, r.where(key)}, field});
    }
    if (written.empty()) return std::nullopt;
    std::stable_sort(written.begin(), written.end(), [](const Candidate& a, const Candidate& b) { return a.key.value > b.key.value; });
    for (const auto& c : written) {
        ModelConfig smaller = m;
        smaller.*(c.field) = 1;
        if (!too_large(smaller)) return c.key;
    }
    return written.front().key;
}

ModelConfig read_model_config(const std::filesystem::path& file) {
    const std::string text = read_config_text(file);
    ModelConfig m = parse_model_config(text, file.string());
    m.name = file.filename() == "config.json" && file.has_parent_path() ? file.parent_path().filename().string()
                                                                        : file.stem().string();
    return m;
}

std::vector<std::string> builtin_model_names(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::filesystem::path resolve_model_config(const std::string& arg, const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    const fs::path p(arg);
    if (fs::is_directory(p)) {
        if (fs::is_regular_file(p / "config.json")) return p / "config.json";
        throw InputError(arg, "the folder holds no config.json", "give the model's config.json or its folder");
    }
    if (fs::exists(p)) return p;
    const bool looks_like_path = arg.find('/') != std::string::npos || p.extension() == ".json";
    if (!looks_like_path && fs::is_regular_file(dir / (arg + ".json"))) return dir / (arg + ".json");
    std::string names;
    for (const auto& n : builtin_model_names(dir)) names += (names.empty() ? "" : ", ") + n;
    if (looks_like_path) throw InputError(arg, "no such file", "give the path of a HuggingFace config.json, or a built-in name: " + names);
    throw UsageError("unknown model '" + arg + "': neither a file nor a built-in name\n  fix: give a config.json, or one of: " + names);
}

}  // namespace lab
