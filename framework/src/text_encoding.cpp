// Byte-order marks and UTF-16, to UTF-8 (see text_encoding.hpp).
#include "text_encoding.hpp"

#include <fmt/format.h>

#include "errors.hpp"

namespace lab {

namespace {

constexpr char kUtf8Mark[] = "\xEF\xBB\xBF";

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

// UTF-16 after its 2-byte mark: code units of two bytes in the mark's order, a surrogate pair
// making one code point past U+FFFF (RFC 2781).
std::string from_utf16(const std::string& bytes, bool little_endian, const std::filesystem::path& file) {
    const std::string fix = "convert it to UTF-8: `iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8` (or in PowerShell, "
                            "`Out-File -Encoding utf8`), or save it again as UTF-8";
    if (bytes.size() % 2 != 0)
        throw InputError(file.string(), "UTF-16 text (its byte-order mark says so) with an odd number of bytes: it is cut short", fix);
    auto unit = [&](std::size_t i) -> char32_t {
        const auto a = static_cast<unsigned char>(bytes[i]), b = static_cast<unsigned char>(bytes[i + 1]);
        return little_endian ? (b << 8 | a) : (a << 8 | b);
    };
    std::string out;
    out.reserve(bytes.size() / 2);
    for (std::size_t i = 2; i < bytes.size(); i += 2) {
        char32_t c = unit(i);
        const bool high = c >= 0xD800 && c <= 0xDBFF, low = c >= 0xDC00 && c <= 0xDFFF;
        if (high && i + 3 < bytes.size() && unit(i + 2) >= 0xDC00 && unit(i + 2) <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (unit(i + 2) - 0xDC00);
            i += 2;
        } else if (high || low) {
            throw InputError(file.string(), fmt::format("UTF-16 text with a lone surrogate (0x{:04X}) at byte {}: it is damaged",
                                                        static_cast<unsigned>(c), i),
                             fix);
        }
        append_utf8(out, c);
    }
    return out;
}

}  // namespace

std::string utf8_text(const std::string& bytes, const std::filesystem::path& file) {
    if (bytes.rfind(kUtf8Mark, 0) == 0) return bytes.substr(3);
    if (bytes.rfind("\xFF\xFE", 0) == 0) return from_utf16(bytes, true, file);
    if (bytes.rfind("\xFE\xFF", 0) == 0) return from_utf16(bytes, false, file);
    return bytes;
}

}  // namespace lab
