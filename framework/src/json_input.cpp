// Parsing JSON input files within limits (see json_input.hpp).
#include "json_input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "errors.hpp"
#include "input_file.hpp"
#include "text_encoding.hpp"

namespace lab {

namespace {

struct Problem {
    std::size_t offset;
    std::string what;
    std::string fix;
};

bool number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// One pass over the text, skipping strings: the nesting depth at every bracket, and every number
// that could overflow a double (one with an exponent, or more digits than a double's range has).
// Malformed text is left to the parser, which says what is wrong with it.
std::optional<Problem> scan(const std::string& text, const JsonLimits& limits) {
    int depth = 0;
    const std::size_t n = text.size();
    for (std::size_t i = 0; i < n; ++i) {
        const char c = text[i];
        if (c == '"') {
            for (++i; i < n && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
        } else if (c == '[' || c == '{') {
            if (++depth > limits.max_depth)
                return Problem{i, fmt::format("arrays and objects nested deeper than {} levels", limits.max_depth),
                               "no file lab writes nests that deep: use the file as lab wrote it"};
        } else if (c == ']' || c == '}') {
            --depth;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t start = i;
            while (i + 1 < n && number_char(text[i + 1])) ++i;
            const std::string token = text.substr(start, i - start + 1);
            // nlohmann reads numbers with strtod too, and refuses an infinite result; saying so
            // here gives the offset and the number itself. Underflow (1e-400) reads as 0, as there.
            if (token.find_first_of("eE") != std::string::npos || token.size() > 300) {
                const double v = std::strtod(token.c_str(), nullptr);
                if (std::isinf(v))
                    return Problem{start, fmt::format("the number {} is beyond the range of a double (about 1.8e308)", excerpt(token, 40)),
                                   "use the file as lab wrote it: lab never writes such a number"};
            }
        }
    }
    return std::nullopt;
}

// Parser messages quote the text near the error; keep them printable ASCII, so that a message
// about a hostile file can itself be written as JSON (Gradescope's results.json) and shown.
std::string printable(const std::string& s) {
    std::string out;
    for (char c : s) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out.size() > 240 ? out.substr(0, 240) + "..." : out;
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." ->
// "syntax error ...": the position is given in lab's own form.
std::string parser_reason(const std::string& message) {
    const std::size_t colon = message.find(": ", message.find("column"));
    return printable(colon == std::string::npos ? message : message.substr(colon + 2));
}

// Builds nothing: a set of names per open object, and each name's count over the whole text (to
// find the second one in the text afterwards).
struct KeyChecker : nlohmann::json_sax<nlohmann::json> {
    std::vector<std::set<std::string>> open;
    std::map<std::string, std::size_t> seen;
    std::optional<std::string> duplicate;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open.emplace_back(), true; }
    bool end_object() override { return open.pop_back(), true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool key(string_t& k) override {
        ++seen[k];
        if (!open.empty() && !open.back().insert(k).second) return duplicate = k, false;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

std::optional<OverflowingNumber> first_overflowing_number(const std::string& text) {
    // scan() with no depth limit finds only numbers.
    const JsonLimits unlimited{.max_bytes = 0, .max_depth = std::numeric_limits<int>::max()};
    if (auto p = scan(text, unlimited)) return OverflowingNumber{p->offset, p->what};
    return std::nullopt;
}

int nesting_depth(const std::string& text) {
    int depth = 0, deepest = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

std::optional<DuplicateKey> first_duplicate_key(const std::string& text) {
    KeyChecker checker;
    nlohmann::json::sax_parse(text, &checker, nlohmann::json::input_format_t::json, false);
    if (!checker.duplicate) return std::nullopt;
    // A name may be written with escapes (\u0061 for a): then the n-th plain spelling need not be
    // the n-th key, and no line is better than a wrong one.
    if (text.find("\\u") != std::string::npos) return DuplicateKey{*checker.duplicate, std::string::npos};
    // The n-th time the name is written as a key (a quoted string followed by a colon).
    const std::string quoted = nlohmann::json(*checker.duplicate).dump();
    std::size_t nth = checker.seen[*checker.duplicate], at = 0;
    for (std::size_t from = 0; nth > 0; from = at + 1) {
        at = text.find(quoted, from);
        if (at == std::string::npos) return DuplicateKey{*checker.duplicate, std::string::npos};
        std::size_t after = at + quoted.size();
        while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r')) ++after;
        if (after < text.size() && text[after] == ':') --nth;
    }
    return DuplicateKey{*checker.duplicate, at};
}

nlohmann::json parse_json_input(const std::string& text, const std::filesystem::path& file, const std::string& what,
                                const JsonLimits& limits, const std::string& fix) {
    auto at = [&](std::size_t offset) { return file.string() + ":" + std::to_string(line_of_offset(text, offset)); };
    if (auto problem = scan(text, limits))
        throw InputError(at(problem->offset), fmt::format("{} (byte {}): {}", what, problem->offset, problem->what), problem->fix);
    try {
        nlohmann::json j = nlohmann::json::parse(text);
        if (const auto dup = first_duplicate_key(text))
            throw InputError(dup->offset == std::string::npos ? file.string() : at(dup->offset),
                             fmt::format("{} names '{}' twice in one object{}: JSON keeps only one of them", what, printable(dup->key),
                                         dup->offset == std::string::npos ? "" : fmt::format(" (byte {})", dup->offset)),
                             fix);
        return j;
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann counts bytes from 1; lab's offsets count from 0, as `cmp` and editors do.
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        throw InputError(at(offset), fmt::format("{} is not valid JSON (byte {}: {}); truncated or corrupted?", what, offset,
                                                 parser_reason(e.what())),
                         fix);
    } catch (const nlohmann::json::exception& e) {
        // Out-of-range numbers the scan did not foresee, and anything else the parser refuses.
        throw InputError(file.string(), fmt::format("{} cannot be read as JSON: {}", what, printable(e.what())), fix);
    }
}

nlohmann::json load_json_input(const std::filesystem::path& file, const std::string& what, const JsonLimits& limits,
                               const std::string& unreadable_fix, const std::string& malformed_fix) {
    std::string text = read_input_file(file, what, limits.max_bytes, unreadable_fix);
    // UTF-16 with its mark (`lab run --json > run.json` in Windows PowerShell 5) is the same
    // record: converted, as every text file is (its digest is over the parsed JSON, not the bytes).
    // Other text is parsed as it is, so byte offsets in messages are the file's.
    if (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0) text = utf8_text(text, file);
    return parse_json_input(text, file, what, limits, malformed_fix);
}

}  // namespace lab
