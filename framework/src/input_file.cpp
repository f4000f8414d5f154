// Reading input files within a size limit, and pointing into them (see input_file.hpp).
#include "input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "command_files.hpp"
#include "errors.hpp"
#include "text_encoding.hpp"

namespace lab {

std::string with_line_feeds(std::string text) {
    for (std::size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) text[i] = '\n';
    return text;
}

std::string byte_limit_text(std::uintmax_t bytes) {
    constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    std::string text = fmt::format("{} bytes", bytes);
    std::uintmax_t value = bytes;
    for (const char* unit : kUnits) {
        if (value == 0 || value % 1024 != 0) break;
        value /= 1024;
        text = fmt::format("{} {}", value, unit);
    }
    return text;
}

std::string read_input_text(const std::filesystem::path& file, const std::string& what, std::uintmax_t max_bytes,
                            const std::string& unreadable_fix) {
    return with_line_feeds(utf8_text(read_input_file(file, what, max_bytes, unreadable_fix), file));
}

std::string read_input_file(const std::filesystem::path& file, const std::string& what, std::uintmax_t max_bytes,
                            const std::string& unreadable_fix) {
    note_input(file);
    const std::string too_large = what + " is larger than " + byte_limit_text(max_bytes) + ", the limit for it";
    const std::string too_large_fix = "give the file lab wrote or its template; nothing of that kind is that large";
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw InputError(file.string(), what + " is a folder, not a file", unreadable_fix);
    // The size first, so an oversized file is refused without being read; the read is bounded
    // too, for files whose size is not known in advance (a pipe).
    if (std::filesystem::is_regular_file(file, ec)) {
        const std::uintmax_t size = std::filesystem::file_size(file, ec);
        if (!ec && size > max_bytes)
            throw InputError(file.string(), fmt::format("{} ({} bytes)", too_large, size), too_large_fix);
    }
    std::ifstream in(file, std::ios::binary);
    // The reason, as the system gives it: "No such file or directory" and "Permission denied"
    // call for different fixes.
    if (!in) throw InputError(file.string(), "cannot read " + what + " (" + std::strerror(errno) + ")", unreadable_fix);
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_bytes) throw InputError(file.string(), too_large, too_large_fix);
    }
    if (in.bad()) throw InputError(file.string(), "cannot read " + what, unreadable_fix);
    return text;
}

std::size_t first_invalid_utf8(const std::string& text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        // The lead byte says how many continuation bytes follow and what the second may be
        // (RFC 3629, table 3-7 of the Unicode standard): that excludes overlong forms, UTF-16
        // surrogates and code points past U+10FFFF.
        std::size_t more = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) more = 1;
        else if (c == 0xE0) more = 2, lo = 0xA0;
        else if (c >= 0xE1 && c <= 0xEC) more = 2;
        else if (c == 0xED) more = 2, hi = 0x9F;
        else if (c >= 0xEE && c <= 0xEF) more = 2;
        else if (c == 0xF0) more = 3, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) more = 3;
        else if (c == 0xF4) more = 3, hi = 0x8F;
        else return i;
        if (i + more >= n) return i;  // cut off at the end of the text
        for (std::size_t k = 1; k <= more; ++k) {
            const unsigned char b = s[i + k];
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
        }
        i += more + 1;
    }
    return std::string::npos;
}

std::string excerpt(const std::string& text, std::size_t max_bytes) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        // The length of the character starting here, when it is well-formed UTF-8.
        std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (len > 1 && (i + len > text.size() || first_invalid_utf8(text.substr(i, len)) != std::string::npos)) len = 0;
        const std::size_t width = len == 0 ? 1 : len;
        if (out.size() + width > max_bytes) return out + "...";
        if (len == 0 || (len == 1 && (c < 0x20 || c == 0x7f))) out += '?';
        else out += text.substr(i, len);
        i += width;
    }
    return out;
}

std::size_t line_of_offset(const std::string& text, std::size_t offset) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < std::min(offset, text.size()); ++i) line += text[i] == '\n';
    return line;
}

}  // namespace lab
