// gzip compression and decompression in memory (zlib): traces are large and compress tenfold,
// and PyTorch writes its traces as .json.gz.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace lab {

// What a compressed file handed to lab may expand to: a gzip bomb (1 MB that inflates to 1 GB)
// is refused once it passes either bound, before the memory is spent.
struct GzipLimits {
    std::size_t max_bytes;        // decompressed size
    double max_ratio;             // decompressed bytes per compressed byte read so far...
    std::size_t ratio_after;      // ...checked once this much has come out (small files may be any ratio)
};

// A limit of GzipLimits was passed; what() names it.
struct GzipLimitExceeded : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string gzip_compress(const std::string& data);
// Every member of a gzip file of several (`cat a.gz b.gz`, pigz, bgzip), one after the other.
// Throws std::runtime_error on data that is not gzip (or zlib) or is truncated, and
// GzipLimitExceeded when the output passes a limit.
std::string gzip_decompress(const std::string& data, const GzipLimits& limits);

}  // namespace lab
