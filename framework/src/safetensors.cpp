// Safetensors headers -> lab::safetensors::Checkpoint (see safetensors.hpp). Reads the 8-byte
// header length and the header with pread; the data buffer is never read.
#include "safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"

namespace lab::safetensors {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct DtypeBits {
    const char* name;
    unsigned bits;
};
// Upstream's Dtype enum and bitsize() (huggingface/safetensors, safetensors/src/tensor.rs at 24b0b28, May 2026).
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},         {"F4", 4},     {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},   {"I8", 8},
    {"F8_E5M2", 8},      {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
    {"I16", 16},         {"U16", 16},   {"F16", 16},    {"BF16", 16},   {"I32", 32}, {"U32", 32},
    {"F32", 32},         {"C64", 64},   {"F64", 64},    {"I64", 64},    {"U64", 64},
};

const char* kRewrite = "the file is damaged or was not written by a safetensors writer: download or export it again";
const char* kTruncated = "the file is incomplete (an interrupted download or copy?): download or copy it again";

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// A JSON value for a message: its text, cut to 60 characters.
std::string brief(const json& v) {
    std::string t = v.dump();
    return t.size() <= 60 ? t : t.substr(0, 57) + "...";
}

// The byte offset of the first byte that is not part of well-formed UTF-8, or npos.
std::size_t invalid_utf8_at(const std::string& s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = p[i];
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > n || (len == 2 && c < 0xC2)) return i;
        for (std::size_t k = 1; k < len; ++k)
            if ((p[i + k] & 0xC0) != 0x80) return i;
        if (len == 3 && ((c == 0xE0 && p[i + 1] < 0xA0) || (c == 0xED && p[i + 1] >= 0xA0))) return i;  // overlong, surrogate
        if (len == 4 && ((c == 0xF0 && p[i + 1] < 0x90) || c > 0xF4 || (c == 0xF4 && p[i + 1] >= 0x90))) return i;
        i += len;
    }
    return std::string::npos;
}

// Parses JSON text, refusing a name that appears twice in one object (nlohmann keeps the last
// silently). Throws InputError naming `where`, and the byte of the file where the text starts at
// byte `starts_at` (the header after its 8-byte length, the index from 0).
json parse_json(const std::string& text, const std::string& where, const std::string& what_it_is, const char* fix, std::size_t starts_at) {
    // Bounded before a tree is built: copying or printing a deeper tree would recurse.
    if (nesting_depth(text) > kMaxHeaderDepth)
        throw InputError(where, "the " + what_it_is + " nests arrays and objects deeper than " + std::to_string(kMaxHeaderDepth) +
                                    " levels", fix);
    // A number beyond a double (1e400): nlohmann's own words name no place; said with its byte.
    if (const auto big = first_overflowing_number(text))
        throw InputError(where, "the " + what_it_is + " is refused at byte " + std::to_string(starts_at + big->offset) + " of the file: " + big->problem, fix);
    try {
        json j = json::parse(text);
        // Checked on the text, in one pass: nlohmann's parse callback is quadratic in the size of
        // an object, and a header of 200k tensors is one object.
        if (const auto dup = first_duplicate_key(text)) throw InputError(where, "the " + what_it_is + " names '" + dup->key + "' twice", fix);
        return j;
    } catch (const json::parse_error& e) {
        // nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: " says
        // again what the byte says: the reason alone, with the byte (counted from 0).
        std::string reason = e.what();
        if (const auto colon = reason.find(": ", reason.find("column")); colon != std::string::npos) reason = reason.substr(colon + 2);
        throw InputError(where, "the " + what_it_is + " is not valid JSON (byte " + std::to_string(starts_at + (e.byte > 0 ? e.byte - 1 : 0)) +
                                    " of the file: " + reason + ")", fix);
    } catch (const json::exception& e) {
        // A number beyond a double (found by fuzzing) is nlohmann's out_of_range, not a parse error.
        throw InputError(where, "the " + what_it_is + " holds a value lab cannot read: " + e.what(), fix);
    }
}

// An open file, closed on scope exit.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// Reads exactly `n` bytes at `offset`.
void read_exact(int fd, char* buf, std::size_t n, std::uint64_t offset, const std::string& where) {
    std::size_t done = 0;
    while (done < n) {
        const ssize_t r = ::pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw InputError(where, std::string("cannot read the file: ") + std::strerror(errno), "check its permissions");
        if (r == 0) throw InputError(where, "the file ended while its header was being read", kTruncated);
        done += static_cast<std::size_t>(r);
    }
}

// a * b, or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

std::vector<std::uint64_t> non_negative_ints(const json& v, const std::string& where, const std::string& what) {
    if (!v.is_array()) throw InputError(where, what + " must be an array of non-negative integers, got " + brief(v), kRewrite);
    std::vector<std::uint64_t> out;
    for (const auto& e : v) {
        if (!e.is_number_unsigned())
            throw InputError(where, what + " must hold non-negative integers, got " + brief(e), kRewrite);
        out.push_back(e.get<std::uint64_t>());
    }
    return out;
}

Tensor read_tensor(const std::string& name, const json& info, const std::string& where) {
    const std::string t = "tensor '" + name + "'";
    if (!info.is_object())
        throw InputError(where, t + ": its entry must be an object {dtype, shape, data_offsets}, got " + brief(info), kRewrite);
    for (const char* key : {"dtype", "shape", "data_offsets"})
        if (!info.contains(key)) throw InputError(where, t + ": key '" + key + "' is missing", kRewrite);
    Tensor x;
    x.name = name;
    x.shard = where;
    const json& dtype = info.at("dtype");
    if (!dtype.is_string()) throw InputError(where, t + ": dtype must be a string, got " + brief(dtype), kRewrite);
    x.dtype = dtype.get<std::string>();
    const auto bits = dtype_bits(x.dtype);
    if (!bits) {
        std::string names;
        for (const auto& d : dtype_names()) names += (names.empty() ? "" : " ") + d;
        throw InputError(where, t + ": unknown dtype '" + x.dtype + "'; safetensors defines " + names,
                         "write the tensor in one of those dtypes (a newer safetensors dtype is not known to lab yet)");
    }
    x.shape = non_negative_ints(info.at("shape"), where, t + ": shape");
    const auto offsets = non_negative_ints(info.at("data_offsets"), where, t + ": data_offsets");
    if (offsets.size() != 2)
        throw InputError(where, t + ": data_offsets must be [BEGIN, END], got " + brief(info.at("data_offsets")), kRewrite);
    x.begin = offsets[0];
    x.end = offsets[1];
    if (x.end < x.begin)
        throw InputError(where, t + ": data_offsets [" + std::to_string(x.begin) + ", " + std::to_string(x.end) +
                                    "] end before they begin", kRewrite);
    std::optional<std::uint64_t> numel = 1;
    for (auto d : x.shape)
        if (numel) numel = mul(*numel, d);
    const auto nbits = numel ? mul(*numel, *bits) : std::nullopt;
    if (!nbits)
        throw InputError(where, t + ": shape " + shape_text(x.shape) + " has more elements than 64 bits count", kRewrite);
    x.numel = *numel;
    if (*nbits % 8 != 0)
        throw InputError(where, t + ": " + std::to_string(x.numel) + " elements of " + x.dtype + " (" +
                                    std::to_string(*bits) + " bits) are not a whole number of bytes",
                         "safetensors refuses such a tensor too (MisalignedSlice): pad the tensor to a whole byte");
    if (x.bytes() != *nbits / 8)
        throw InputError(where, t + ": data_offsets [" + std::to_string(x.begin) + ", " + std::to_string(x.end) + "] hold " +
                                    std::to_string(x.bytes()) + " bytes, but " + x.dtype + " " + shape_text(x.shape) +
                                    " needs " + std::to_string(*nbits / 8),
                         kRewrite);
    return x;
}

}  // namespace

std::optional<unsigned> dtype_bits(std::string_view dtype) {
    for (const auto& d : kDtypes)
        if (dtype == d.name) return d.bits;
    return std::nullopt;
}

const std::vector<std::string>& dtype_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& d : kDtypes) v.push_back(d.name);
        return v;
    }();
    return names;
}

Checkpoint read_file(const fs::path& file) {
    const std::string where = file.string();
    Fd f;
    f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0)
        throw InputError(where, std::string("cannot open the file: ") + std::strerror(errno),
                         "check the path and its permissions");
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw InputError(where, "not a regular file", "give a .safetensors file or a checkpoint folder");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < 8)
        throw InputError(where, "the file is " + std::to_string(size) +
                                    " bytes, shorter than the 8-byte header length every safetensors file starts with",
                         kTruncated);
    unsigned char len[8];
    read_exact(f.fd, reinterpret_cast<char*>(len), 8, 0, where);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];  // little-endian
    if (n > kMaxHeaderBytes)
        throw InputError(where, "the header length is " + std::to_string(n) + " bytes, over safetensors' limit of " +
                                    std::to_string(kMaxHeaderBytes) + " (100 MB): this is not a safetensors file, or it is damaged",
                         kRewrite);
    if (8 + n > size)
        throw InputError(where, "the header length says " + std::to_string(n) + " bytes but the file has only " +
                                    std::to_string(size - 8) + " after the 8-byte length",
                         kTruncated);
    std::string text(n, '\0');
    read_exact(f.fd, text.data(), n, 8, where);
    if (const auto at = invalid_utf8_at(text); at != std::string::npos)
        throw InputError(where, "the header is not valid UTF-8 (byte " + std::to_string(8 + at) + " of the file)", kRewrite);
    const json header = parse_json(text, where, "header", kRewrite, 8);
    if (!header.is_object())
        throw InputError(where, "the header must be a JSON object {name: {dtype, shape, data_offsets}}, got " +
                                    std::string(header.type_name()),
                         kRewrite);

    Checkpoint c;
    c.path = where;
    c.shards = {where};
    c.file_bytes = size;
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") {
            if (!value.is_object())
                throw InputError(where, "__metadata__ must be an object of strings, got " + std::string(value.type_name()), kRewrite);
            for (const auto& [k, v] : value.items()) {
                if (!v.is_string())
                    throw InputError(where, "__metadata__ '" + k + "' must be a string, got " + brief(v),
                                     "safetensors metadata maps strings to strings: write the value as a string");
                c.metadata[k] = v.get<std::string>();
            }
            continue;
        }
        c.tensors.push_back(read_tensor(name, value, where));
    }
    std::sort(c.tensors.begin(), c.tensors.end(), [](const Tensor& a, const Tensor& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
    });
    std::uint64_t at = 0;
    const Tensor* previous = nullptr;
    for (const auto& t : c.tensors) {
        if (t.begin != at) {
            const std::string range = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
            if (!previous)
                throw InputError(where, "tensor '" + t.name + "': data_offsets " + range +
                                            " leave a gap: the first tensor must begin at 0",
                                 kRewrite);
            throw InputError(where, "tensor '" + t.name + "': data_offsets " + range + (t.begin > at ? " leave a gap after" : " overlap") +
                                        " tensor '" + previous->name + "', which ends at " + std::to_string(at) +
                                        "; tensors must be contiguous, in order of their offsets",
                             kRewrite);
        }
        at = t.end;
        previous = &t;
    }
    if (8 + n + at != size) {
        const std::string expected = std::to_string(8 + n + at);
        throw InputError(where, "the file is " + std::to_string(size) + " bytes but its header describes " + expected +
                                    " (8 + " + std::to_string(n) + " header + " + std::to_string(at) + " data)" +
                                    (size < 8 + n + at ? ": tensor data is missing" : ": there are bytes after the last tensor"),
                         size < 8 + n + at ? kTruncated : kRewrite);
    }
    for (const auto& t : c.tensors) {
        auto& d = c.by_dtype[t.dtype];
        ++d.tensors;
        d.params += t.numel;
        d.bytes += t.bytes();
        c.params += t.numel;
        c.bytes += t.bytes();
    }
    return c;
}

Checkpoint read_index(const fs::path& index) {
    const std::string where = index.string();
    const char* fix_index = "the index is damaged: download it again, or write it again with the shards it belongs to";
    std::error_code ec;
    const auto size = fs::file_size(index, ec);
    if (ec) throw InputError(where, "cannot read the index: " + ec.message(), "check the path and its permissions");
    if (size > kMaxHeaderBytes)
        throw InputError(where, "the index is " + std::to_string(size) + " bytes, over 100 MB: not a safetensors index", fix_index);
    std::string text(size, '\0');
    {
        Fd f;
        f.fd = ::open(index.c_str(), O_RDONLY | O_CLOEXEC);
        if (f.fd < 0) throw InputError(where, std::string("cannot open the index: ") + std::strerror(errno), "check its permissions");
        read_exact(f.fd, text.data(), text.size(), 0, where);
    }
    const json j = parse_json(text, where, "index", fix_index, 0);
    if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object())
        throw InputError(where, "the index must be a JSON object with a \"weight_map\": {tensor: shard file}", fix_index);
    std::map<std::string, std::string> weight_map;  // tensor -> shard name as written
    std::map<std::string, std::vector<std::string>> shard_tensors;
    for (const auto& [tensor, shard] : j.at("weight_map").items()) {
        if (!shard.is_string())
            throw InputError(where, "weight_map: tensor '" + tensor + "' must map to a shard file name, got " + brief(shard), fix_index);
        weight_map[tensor] = shard.get<std::string>();
        shard_tensors[shard.get<std::string>()].push_back(tensor);
    }

    Checkpoint c;
    c.path = where;
    c.index = where;
    if (j.contains("metadata") && j.at("metadata").is_object() && j.at("metadata").contains("total_size")) {
        const json& ts = j.at("metadata").at("total_size");
        if (ts.is_number_unsigned()) c.index_total_size = ts.get<std::uint64_t>();
        else if (ts.is_number_float() && ts.get<double>() >= 0) c.index_total_size = static_cast<std::uint64_t>(ts.get<double>());
    }
    const fs::path dir = index.parent_path();
    std::map<std::string, std::string> found_in;  // tensor -> shard file whose header holds it
    std::map<std::string, std::string> metadata_from;  // metadata key -> shard it came from
    for (const auto& [shard, tensors] : shard_tensors) {
        const fs::path rel(shard);
        const std::string names_it = "weight_map names shard '" + shard + "' (for tensor '" + tensors.front() + "'" +
                                     (tensors.size() > 1 ? " and " + std::to_string(tensors.size() - 1) + " more" : "") + ")";
        if (shard.empty() || rel.is_absolute() || std::find(rel.begin(), rel.end(), "..") != rel.end())
            throw InputError(where, names_it + ", which is not a file name inside the checkpoint's folder", fix_index);
        const fs::path file = dir / rel;
        if (!fs::is_regular_file(file))
            throw InputError(where, names_it + " but " + file.string() + " does not exist",
                             "download the missing shard into " + (dir.empty() ? std::string(".") : dir.string()) +
                                 ", or correct the index");
        Checkpoint s = read_file(file);
        c.shards.push_back(file.string());
        for (auto& t : s.tensors) {
            if (auto it = found_in.find(t.name); it != found_in.end())
                throw InputError(file.string(), "tensor '" + t.name + "' is also in " + it->second +
                                                     ": a tensor may be in one shard only",
                                 "the shards come from different checkpoints or exports: download the checkpoint again");
            found_in[t.name] = file.string();
            const auto mapped = weight_map.find(t.name);
            if (mapped == weight_map.end())
                throw InputError(file.string(), "tensor '" + t.name + "' is in this shard but not in the index's weight_map (" +
                                                     where + ")",
                                 "the index and the shards do not belong together: download them again, or write the index again");
            if (mapped->second != shard)
                throw InputError(file.string(), "tensor '" + t.name + "' is in this shard but the index (" + where +
                                                     ") puts it in '" + mapped->second + "'",
                                 "the index and the shards do not belong together: download them again, or write the index again");
        }
        for (const auto& [k, v] : s.metadata) {
            auto [it, fresh] = c.metadata.emplace(k, v);
            if (fresh) metadata_from[k] = file.string();
            else if (it->second != v)
                c.notes.push_back("__metadata__ '" + k + "' differs between shards: '" + it->second + "' in " + metadata_from[k] +
                                  ", '" + v + "' in " + file.string() + " (the first is shown)");
        }
        c.tensors.insert(c.tensors.end(), std::make_move_iterator(s.tensors.begin()), std::make_move_iterator(s.tensors.end()));
        c.file_bytes += s.file_bytes;
        for (const auto& [d, totals] : s.by_dtype) {
            auto& mine = c.by_dtype[d];
            mine.tensors += totals.tensors;
            mine.params += totals.params;
            mine.bytes += totals.bytes;
        }
        c.params += s.params;
        c.bytes += s.bytes;
    }
    for (const auto& [tensor, shard] : weight_map)
        if (!found_in.count(tensor))
            throw InputError(where, "weight_map puts tensor '" + tensor + "' in '" + shard + "', but that shard's header has no such tensor",
                             "the index and the shards do not belong together: download them again, or write the index again");
    if (c.index_total_size && *c.index_total_size != c.bytes)
        c.notes.push_back("the index's metadata.total_size is " + std::to_string(*c.index_total_size) +
                          " bytes; the shards' tensors hold " + std::to_string(c.bytes));
    return c;
}

Checkpoint read_checkpoint(const fs::path& arg) {
    std::error_code ec;
    const auto status = fs::status(arg, ec);
    if (!fs::exists(status))
        throw InputError(arg.string(), "no such file or folder",
                         "give a .safetensors file, a model.safetensors.index.json, or a checkpoint folder");
    if (fs::is_directory(status)) {
        if (const auto index = arg / "model.safetensors.index.json"; fs::exists(index)) return read_index(index);
        if (const auto single = arg / "model.safetensors"; fs::exists(single)) return read_file(single);
        std::vector<fs::path> found;
        for (const auto& e : fs::directory_iterator(arg, ec))
            if (e.path().extension() == ".safetensors") found.push_back(e.path());
        if (found.size() == 1) return read_file(found.front());
        if (found.empty())
            throw InputError(arg.string(), "the folder has no model.safetensors.index.json, no model.safetensors and no *.safetensors file",
                             "give the folder the checkpoint was downloaded to, or a .safetensors file");
        std::sort(found.begin(), found.end());
        std::string names;
        for (const auto& p : found) names += (names.empty() ? "" : ", ") + p.filename().string();
        throw InputError(arg.string(), "the folder has several .safetensors files (" + names + ") and no model.safetensors.index.json",
                         "give one of the files, or the index that ties them together");
    }
    if (arg.extension() == ".json") return read_index(arg);
    return read_file(arg);
}

std::vector<Tensor> largest(const Checkpoint& c, std::size_t count) {
    std::vector<const Tensor*> order;
    for (const auto& t : c.tensors) order.push_back(&t);
    const std::size_t k = std::min(count, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(k), order.end(), [](const Tensor* a, const Tensor* b) {
        return a->bytes() != b->bytes() ? a->bytes() > b->bytes() : a->name < b->name;
    });
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < k; ++i) out.push_back(*order[i]);
    return out;
}

}  // namespace lab::safetensors
