// In-memory gzip through zlib (see gzip.hpp).
#include "gzip.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <stdexcept>

#include "input_file.hpp"

namespace lab {

namespace {
constexpr int kGzipWindow = 15 + 16;      // 15-bit window, gzip header
constexpr int kAutoDetectWindow = 15 + 32; // gzip or zlib, detected from the header
}  // namespace

std::string gzip_compress(const std::string& data) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("zlib deflateInit2 failed");
    std::string out;
    out.resize(deflateBound(&z, data.size()) + 32);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("zlib deflate failed");
    return out;
}

std::string gzip_decompress(const std::string& data, const GzipLimits& limits) {
    z_stream z{};
    if (inflateInit2(&z, kAutoDetectWindow) != Z_OK) throw std::runtime_error("zlib inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    std::string out;
    char chunk[1 << 16];
    // A gzip file is a series of members, each its own header, data and trailer (RFC 1952 2.2):
    // `cat a.gz b.gz`, pigz and bgzip write several. Each is inflated in turn until the input
    // ends; zeros after the last (a tape's or a block device's padding) end it too.
    for (;;) {
        int rc = Z_OK;
        while (rc != Z_STREAM_END) {
            z.next_out = reinterpret_cast<Bytef*>(chunk);
            z.avail_out = sizeof chunk;
            rc = inflate(&z, Z_NO_FLUSH);
            if (rc != Z_OK && rc != Z_STREAM_END) {
                inflateEnd(&z);
                throw std::runtime_error(rc == Z_BUF_ERROR ? "the compressed data is truncated" : "the data is not valid gzip");
            }
            out.append(chunk, sizeof chunk - z.avail_out);
            // What was read so far over all members (inflateReset zeroes z.total_in at each).
            const std::size_t read_in = data.size() - z.avail_in;
            const bool too_large = out.size() > limits.max_bytes;
            const bool bomb = out.size() > limits.ratio_after &&
                              static_cast<double>(out.size()) > limits.max_ratio * static_cast<double>(std::max<std::size_t>(read_in, 1));
            if (too_large || bomb) {
                const std::string read_so_far = std::to_string(read_in), out_so_far = std::to_string(out.size());
                inflateEnd(&z);
                if (too_large)
                    throw GzipLimitExceeded("it expands past " + byte_limit_text(limits.max_bytes) + ", the limit for it");
                throw GzipLimitExceeded(fmt::format("it expands more than {:g}-fold (", limits.max_ratio) + read_so_far +
                                        " compressed bytes gave " + out_so_far + "): a compression bomb, not a real file");
            }
        }
        const char* rest = reinterpret_cast<const char*>(z.next_in);
        if (std::all_of(rest, rest + z.avail_in, [](char b) { return b == 0; })) break;
        inflateReset(&z);
    }
    inflateEnd(&z);
    return out;
}

}  // namespace lab
