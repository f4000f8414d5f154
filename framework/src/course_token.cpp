// Keyed student tokens (see course_token.hpp).
#include "course_token.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "digest.hpp"
#include "command_files.hpp"
#include "errors.hpp"
#include "text_encoding.hpp"

namespace lab {

namespace {

constexpr std::size_t kMacChars = 20;   // 100 bits of the HMAC: beyond guessing, short to type

std::string base32(const unsigned char* data, std::size_t n) {
    static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";   // RFC 4648
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
        buffer = (buffer << 8) | data[i];
        bits += 8;
        while (bits >= 5) {
            out += alphabet[(buffer >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
    return out;
}

std::string mac_for(const CourseKey& key, const std::string& course, const std::string& student) {
    const std::string message = course + "|" + normalise_student(student);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
              reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len))
        throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
    return base32(out, len).substr(0, kMacChars);
}

std::string trimmed(const std::string& s) {
    std::size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::optional<std::filesystem::path> configured_key_file(const std::string& flag) {
    if (!flag.empty()) return std::filesystem::path(flag);
    if (const char* env = std::getenv("LAB_COURSE_KEY"); env && *env) return std::filesystem::path(env);
    return std::nullopt;
}

CourseKey load_course_key(const std::filesystem::path& file) {
    note_input(file);
    if (std::error_code ec; std::filesystem::is_directory(file, ec))
        throw InputError(file.string(), "the course key is a folder, not a file", "give the key file --new-key wrote, with --key or $LAB_COURSE_KEY");
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw InputError(file.string(), std::string("cannot read the course key (") + std::strerror(errno) + ")",
                         "check the path given with --key or $LAB_COURSE_KEY");
    std::stringstream ss;
    ss << in.rdbuf();
    // An editor's byte-order mark (Windows Notepad saved UTF-8 with one) is not part of the key:
    // read as key bytes it made every token differ, and every honest student was refused.
    CourseKey k{trimmed(utf8_text(ss.str(), file)), file.string()};
    // A key is one line. A roster or the tokens file (`lab token --out`) given in its place was
    // read as a long key, and then every student's token failed to verify, each row blaming the
    // student.
    if (const auto lines = std::count(k.secret.begin(), k.secret.end(), '\n') + 1; lines > 1)
        throw InputError(file.string(), "this is not a course key: it has " + std::to_string(lines) +
                                            " lines (a course key is one line; is this a roster or the tokens file?)",
                         "give the key `lab token --new-key FILE` wrote (64 hex digits) with --key or $LAB_COURSE_KEY");
    if (k.secret.size() < kMinKeyChars)
        throw InputError(file.string(), "the course key is " + std::to_string(k.secret.size()) + " characters; at least " +
                                            std::to_string(kMinKeyChars) + " are needed",
                         "make one with `lab token --new-key FILE` and keep it private");
    return k;
}

std::string random_course_key() {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes from OpenSSL (RAND_bytes)");
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (unsigned char b : bytes) s += {hex[b >> 4], hex[b & 15]};
    return s;
}

std::optional<Token> parse_token(const std::string& text) {
    const std::string t = trimmed(text);
    const std::size_t dot = t.rfind('.');
    if (dot == std::string::npos || dot == 0) return std::nullopt;
    Token token{normalise_student(t.substr(0, dot)), t.substr(dot + 1)};
    if (token.student.empty() || token.mac.size() != kMacChars) return std::nullopt;
    for (char& c : token.mac) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (!((c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7'))) return std::nullopt;
    }
    return token;
}

std::string to_string(const Token& t) { return t.student + "." + t.mac; }

Token issue_token(const CourseKey& key, const std::string& course, const std::string& student) {
    return {normalise_student(student), mac_for(key, course, student)};
}

bool token_verifies(const CourseKey& key, const std::string& course, const Token& token) {
    const std::string want = mac_for(key, course, token.student);
    // Constant time: a grader's answer time says nothing of how many characters were right.
    return want.size() == token.mac.size() && CRYPTO_memcmp(want.data(), token.mac.data(), want.size()) == 0;
}

Seed token_seed(const Token& token, const std::string& lesson_id) {
    Seed s;
    s.hex = sha256_hex(token.mac + "|" + lesson_id);
    s.value = std::stoull(s.hex.substr(0, 16), nullptr, 16);
    return s;
}

}  // namespace lab
