// Safetensors checkpoints, read for `lab checkpoint`: what a checkpoint holds (tensors, dtypes,
// parameters, bytes, __metadata__) from its headers alone. A file's 8-byte header length and its
// JSON header are read; its data buffer never is (the file's size comes from stat), so a
// multi-GB checkpoint costs a few reads and the header's size in memory. One .safetensors file,
// or a sharded checkpoint: a folder (or the index itself) with model.safetensors.index.json,
// whose weight_map names each tensor's shard. The format: huggingface/safetensors
// (safetensors/src/tensor.rs); the checks are those REFERENCES.md ("safetensors") lists, each
// refused with lab::InputError (exit 2) naming the file, the tensor and the fix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lab::safetensors {

// Bits per element of a safetensors dtype name ("BF16" -> 16, "F4" -> 4), as upstream's
// Dtype::bitsize; nullopt for a name safetensors does not define.
std::optional<unsigned> dtype_bits(std::string_view dtype);
// Every dtype name safetensors defines, in upstream's order (increasing alignment).
const std::vector<std::string>& dtype_names();

// The header may not be larger than this (upstream's MAX_HEADER_SIZE).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// The header's nesting (a real one: {name: {dtype, shape: [..], data_offsets: [..]}}, three levels).
constexpr int kMaxHeaderDepth = 16;

struct Tensor {
    std::string name;
    std::string dtype;                   // safetensors' own name: "BF16"
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0, end = 0;    // data_offsets, relative to the shard's data buffer; end exclusive
    std::uint64_t numel = 0;             // product of the shape (1 for a scalar, shape [])
    std::string shard;                   // the file it lives in (a path as found)
    std::uint64_t bytes() const { return end - begin; }
};

struct DtypeTotals {
    std::uint64_t tensors = 0, params = 0, bytes = 0;
};

struct Checkpoint {
    std::string path;                            // what was read: the .safetensors file or the index
    std::optional<std::string> index;            // the index file of a sharded checkpoint
    std::vector<std::string> shards;             // the .safetensors files, sorted
    std::vector<Tensor> tensors;                 // by shard, then by offset
    // __metadata__ of the files; for shards, merged (the first shard's value where they differ,
    // with a note).
    std::map<std::string, std::string> metadata;
    std::map<std::string, DtypeTotals> by_dtype;  // keyed by dtype name
    std::uint64_t params = 0, bytes = 0;          // sum of numel, sum of tensor bytes
    std::uint64_t file_bytes = 0;                 // sum of the files' sizes (headers included)
    std::optional<std::uint64_t> index_total_size;  // the index's metadata.total_size
    std::vector<std::string> notes;              // oddities that are not errors
};

// Reads one .safetensors file's header. Throws lab::InputError for: a file shorter than 8 bytes,
// a header length over kMaxHeaderBytes or past the end of the file, a header that is not UTF-8
// JSON or not an object, a duplicate name, __metadata__ that is not {string: string}, a tensor
// entry without a valid dtype, shape or data_offsets, a shape whose size overflows, an element
// count that is not a whole number of bytes, data_offsets whose length is not dtype x shape,
// offsets not contiguous from 0 (a gap or an overlap), and a file size other than 8 + header +
// the last offset.
Checkpoint read_file(const std::filesystem::path& file);

// Reads a sharded checkpoint from its index (model.safetensors.index.json): every shard the
// weight_map names (each header as read_file checks it), plus: the index is a JSON object with a
// weight_map of {tensor: shard file}, each named shard exists, no tensor is in two shards, each
// tensor is in the shard the index names and each shard tensor is in the index.
Checkpoint read_index(const std::filesystem::path& index);

// `lab checkpoint ARG`: a file ending in .json is an index; another file is a .safetensors file; a
// folder is read through its model.safetensors.index.json, else its model.safetensors, else its
// only *.safetensors file. Throws lab::InputError when there is nothing to read.
Checkpoint read_checkpoint(const std::filesystem::path& arg);

// The `count` largest tensors by bytes (ties by name).
std::vector<Tensor> largest(const Checkpoint& c, std::size_t count);

}  // namespace lab::safetensors
