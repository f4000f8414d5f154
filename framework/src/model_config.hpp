// HuggingFace config.json files read into the SDK's transformer::ModelConfig (lab/transformer.hpp),
// for `lab model` and anything else on the host that needs a model's shape. Families: Llama,
// Mistral and Qwen2 style keys, and GPT-2 style keys; the family comes from `model_type`, else
// from `architectures`. Keys that change the counts but are not modelled (mixture of experts,
// multi-head latent attention) are refused by name; keys that do not change them (rope_theta,
// dropouts, token ids, GPT-2's summary_*, ...) are accepted and ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lab/transformer.hpp"

namespace lab {

// What a hostile config cannot exceed, each named in the refusal (a real config.json: a few KB,
// nested two or three levels).
inline constexpr std::uintmax_t kMaxModelConfigBytes = 4u << 20;
inline constexpr int kMaxModelConfigDepth = 32;

// Reads `file`. Throws lab::InputError naming the file (and line where the key is found), the key
// and the fix for: text that is not JSON (with its line), a value of the wrong type, a zero or
// negative size, heads that do not divide the hidden size (with no head_dim), KV heads that do
// not divide the heads, an unknown family, a missing key, a refused key, a limit above passed.
transformer::ModelConfig read_model_config(const std::filesystem::path& file);

// The same from text; `where` names it in messages (a file name).
transformer::ModelConfig parse_model_config(const std::string& text, const std::string& where);

// A size key as a config file writes it: its name, its value and its place (file:line).
struct ModelSizeKey {
    std::string key;
    std::uint64_t value = 0;
    std::string where;
};

// The size key of `file` (which `m` was read from) to blame when `too_large(m)` holds, i.e. the
// counts a command works out from the model pass what lab counts: of the sizes `file` writes,
// largest first, the first one that alone set to 1 brings the counts back in range, else the
// largest. nullopt when `file` writes none (or cannot be read again).
std::optional<ModelSizeKey> size_key_to_blame(const std::filesystem::path& file, const transformer::ModelConfig& m,
                                              const std::function<bool(const transformer::ModelConfig&)>& too_large);

// The built-in models: the stems of configs/models/*.json under `dir`, sorted.
std::vector<std::string> builtin_model_names(const std::filesystem::path& dir);

// What `lab model ARG` reads: ARG itself when it is a file, ARG/config.json when it is a folder,
// else the built-in dir/ARG.json. Throws lab::UsageError listing the built-in names when ARG is
// none of them.
std::filesystem::path resolve_model_config(const std::string& arg, const std::filesystem::path& dir);

}  // namespace lab
