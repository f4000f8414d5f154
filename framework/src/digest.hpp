// SHA-256 (OpenSSL's libcrypto): run-record digests and per-student seeds.
#pragma once

#include <string>

namespace lab {

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(const std::string& data);

}  // namespace lab
