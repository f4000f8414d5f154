// gzip compression and decompression in memory (zlib): traces are large and compress tenfold,
// and PyTorch writes its traces as .json.gz.
#pragma once

#include <string>

namespace lab {

std::string gzip_compress(const std::string& data);
// Throws std::runtime_error on data that is not gzip (or zlib) or is truncated.
std::string gzip_decompress(const std::string& data);

}  // namespace lab
