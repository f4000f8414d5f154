// SHA-256 through OpenSSL's EVP interface.
#include "digest.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace lab {

std::string sha256_hex(const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
    static const char* hex = "0123456789abcdef";
    std::string s;
    s.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        s += hex[out[i] >> 4];
        s += hex[out[i] & 15];
    }
    return s;
}

}  // namespace lab
