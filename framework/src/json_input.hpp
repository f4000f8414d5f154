// Parsing JSON that lab did not write itself (a run record handed in by a student, then read by
// the grader): the limits that keep a hostile file from crashing or stalling lab, checked before
// any tree is built, and every parser error turned into an InputError naming the file, the line
// and the byte offset.
//
// nlohmann::json parses nesting of any depth without recursion, but copying, dumping and
// comparing a tree recurse, so a 10^5-deep array that parses fine would overflow the stack the
// moment a digest is computed. The depth is therefore checked on the text first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace lab {

struct JsonLimits {
    std::uintmax_t max_bytes;      // checked on the file's size, before it is read
    int max_depth;                 // nested arrays and objects (the message says the number)
};

// Parses `text` (from `file`; `what` names its role, "the run record") within `limits`.
// InputError with file:line and the byte offset on malformed JSON, nesting past the limit, or a
// number beyond a double's range (1e400; JSON has no NaN or infinity to begin with).
nlohmann::json parse_json_input(const std::string& text, const std::filesystem::path& file, const std::string& what,
                                const JsonLimits& limits, const std::string& fix);

// The first name written twice in one object of `text` (JSON the parser accepts): nlohmann
// keeps the last of the two silently. `offset` is the byte of the second one's opening quote,
// or npos where it cannot be told. Linear in the text (a SAX pass; nlohmann's parse callback
// is quadratic in an object's size: a 200k-tensor safetensors header took minutes).
struct DuplicateKey {
    std::string key;
    std::size_t offset;
};
std::optional<DuplicateKey> first_duplicate_key(const std::string& text);

// The first number in `text` beyond a double's range (1e400), which nlohmann refuses in its own
// words ("[json.exception.out_of_range.406] number overflow parsing '1e400'") without a byte:
// `offset` is its first byte, `problem` says it plainly ("the number 1e400 is beyond the range
// of a double (about 1.8e308)"). Strings are skipped.
struct OverflowingNumber {
    std::size_t offset;
    std::string problem;
};
std::optional<OverflowingNumber> first_overflowing_number(const std::string& text);

// The deepest nesting of arrays and objects in `text`, counted on the text (strings skipped), so
// that a tree too deep to copy or print is refused before one is built.
int nesting_depth(const std::string& text);

// Reads `file` (bounded by limits.max_bytes, see read_input_file) and parses it as above.
nlohmann::json load_json_input(const std::filesystem::path& file, const std::string& what, const JsonLimits& limits,
                               const std::string& unreadable_fix, const std::string& malformed_fix);

}  // namespace lab
