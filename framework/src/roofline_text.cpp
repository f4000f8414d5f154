// Label text for the roofline renderers (see roofline_text.hpp).
#include "roofline_text.hpp"

#include <algorithm>

#include "format.hpp"

namespace lab::plot::detail {
namespace {

// One stray byte in a label would make the whole SVG unparseable, so invalid UTF-8, control
// characters and the two non-characters XML forbids become '?'.
std::string clean_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    auto cont = [&](std::size_t k) {
        return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
    };
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            out += (c < 0x20 || c == 0x7F) ? (c == '\t' ? ' ' : '?') : static_cast<char>(c);
            ++i;
            continue;
        }
        std::size_t len = 0;
        if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c >= 0xE0 && c <= 0xEF) len = 3;
        else if (c >= 0xF0 && c <= 0xF4) len = 4;
        bool ok = len > 0;
        for (std::size_t k = 1; ok && k < len; ++k) ok = cont(i + k);
        if (ok && len >= 3) {
            const auto c1 = static_cast<unsigned char>(s[i + 1]);
            // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) ||
                (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
                ok = false;
            // U+FFFE and U+FFFF are not XML characters.
            if (ok && c == 0xEF && c1 == 0xBF && static_cast<unsigned char>(s[i + 2]) >= 0xBE)
                ok = false;
        }
        if (!ok) {
            out += '?';
            ++i;
            continue;
        }
        out.append(s.substr(i, len));
        i += len;
    }
    return out;
}

}  // namespace

std::string xml_escape(std::string_view raw) {
    const std::string s = clean_utf8(raw);
    std::string out;
    out.reserve(s.size() + 16);
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string ascii_only(std::string_view raw) {
    const std::string s = clean_utf8(raw);
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x80) out += ch;
        else if (c >= 0xC0) out += '?';  // continuation bytes vanish with their lead byte
    }
    return out;
}

std::size_t code_points(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string plain(double v) { return format::number(v, {.whole_below = 1e6}); }

std::string ai_number(double v) { return format::number(v); }

std::string si(double v, std::string_view unit, bool ascii) {
    return format::si(v, unit, {.lowest_prefix = -24, .highest_prefix = 24, .min_exponent = 0, .ascii = ascii});
}

}  // namespace lab::plot::detail
