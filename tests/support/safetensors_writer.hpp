// Small safetensors files for the tests of framework/src/safetensors.cpp and `lab checkpoint`:
// a header built entry by entry (offsets laid out contiguously unless a test sets them, JSON text
// assembled by hand so a test can repeat a name or write garbage), then the data as a sparse
// stretch of zeros (resize_file), so a multi-GB file costs nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace lab_test {

class SafetensorsWriter {
public:
    // Bits per element of the dtypes the tests use (kept here, apart from the reader's table).
    static std::uint64_t bits(const std::string& dtype) {
        static const std::map<std::string, std::uint64_t> b = {
            {"BOOL", 8},     {"U8", 8},      {"I8", 8},      {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8},
            {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16},
            {"I32", 32},     {"U32", 32},    {"F32", 32},    {"I64", 64},    {"U64", 64},    {"F64", 64},
            {"C64", 64},     {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}};
        return b.at(dtype);
    }
    static std::uint64_t numel(const std::vector<std::uint64_t>& shape) {
        std::uint64_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }

    // A tensor laid out after the previous one, with the bytes its dtype and shape need.
    SafetensorsWriter& add(const std::string& name, const std::string& dtype, const std::vector<std::uint64_t>& shape) {
        const std::uint64_t bytes = numel(shape) * bits(dtype) / 8;
        return add_at(name, dtype, shape, at_, at_ + bytes);
    }
    // A tensor with the given data_offsets; the data buffer grows to cover them.
    SafetensorsWriter& add_at(const std::string& name, const std::string& dtype, const std::vector<std::uint64_t>& shape,
                              std::uint64_t begin, std::uint64_t end) {
        nlohmann::json e = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
        return raw(name, e.dump(), end);
    }
    // Any entry: `value` is JSON text written as is; `end` extends the data buffer.
    SafetensorsWriter& raw(const std::string& name, const std::string& value, std::uint64_t end = 0) {
        entries_.emplace_back(name, value);
        if (end > at_) at_ = end;
        return *this;
    }
    SafetensorsWriter& metadata(const std::string& key, const std::string& value) {
        metadata_[key] = value;
        return *this;
    }

    std::string header() const {
        std::string h = "{";
        if (!metadata_.empty()) h += "\"__metadata__\":" + nlohmann::json(metadata_).dump();
        for (const auto& [name, value] : entries_) h += (h.size() > 1 ? "," : "") + nlohmann::json(name).dump() + ":" + value;
        h += "}";
        while (h.size() % 8) h += ' ';  // as upstream pads
        return h;
    }
    std::uint64_t data_bytes() const { return at_; }

    // Writes the file: 8-byte little-endian length, `header_text` (default: header()), then
    // data_bytes() + `extra` bytes of sparse zeros (extra < 0 truncates).
    void write(const std::filesystem::path& file, std::int64_t extra = 0,
               const std::optional<std::string>& header_text = std::nullopt) const {
        write_raw(file, header_text.value_or(header()), static_cast<std::uint64_t>(static_cast<std::int64_t>(at_) + extra));
    }
    static void write_raw(const std::filesystem::path& file, const std::string& header, std::uint64_t data,
                          std::optional<std::uint64_t> length = std::nullopt) {
        {
            std::ofstream out(file, std::ios::binary | std::ios::trunc);
            std::uint64_t n = length.value_or(header.size());
            for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
            out << header;
        }
        std::filesystem::resize_file(file, 8 + header.size() + data);
    }

private:
    std::vector<std::pair<std::string, std::string>> entries_;
    std::map<std::string, std::string> metadata_;
    std::uint64_t at_ = 0;
};

// model.safetensors.index.json text: {"metadata": {"total_size": N}, "weight_map": {...}}.
inline std::string safetensors_index(const std::vector<std::pair<std::string, std::string>>& weight_map,
                                     std::optional<std::uint64_t> total_size = std::nullopt) {
    std::string map = "{";
    for (const auto& [t, shard] : weight_map)
        map += (map.size() > 1 ? "," : "") + nlohmann::json(t).dump() + ":" + nlohmann::json(shard).dump();
    map += "}";
    std::string meta = total_size ? "{\"total_size\":" + std::to_string(*total_size) + "}" : "{}";
    return "{\"metadata\":" + meta + ",\"weight_map\":" + map + "}";
}

}  // namespace lab_test
