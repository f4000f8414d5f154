// Reading a file a person handed to lab (an answers file, a run record, a grading spec): its
// size bounded before it is read, so a huge file is refused by name instead of exhausting
// memory, and the helpers that point at a byte of it in messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace lab {

// A size limit as a message says it: "64 MiB" for a whole number of KiB, MiB or GiB, else
// "N bytes". Computed from the limit itself, so a message cannot drift from the constant.
std::string byte_limit_text(std::uintmax_t bytes);

// The file's text, at most `max_bytes` of it: InputError when unreadable or larger.
std::string read_input_file(const std::filesystem::path& file, const std::string& what, std::uintmax_t max_bytes,
                            const std::string& unreadable_fix);

// read_input_file's text as UTF-8 with line feeds: a byte-order mark dropped, UTF-16 (Windows
// PowerShell 5's `>` writes it) converted (text_encoding.hpp), lone CRs made LFs. For every text
// file a person hands to lab (YAML, CSV): the same text however their editor saved it.
std::string read_input_text(const std::filesystem::path& file, const std::string& what, std::uintmax_t max_bytes,
                            const std::string& unreadable_fix);

// `text` with each lone CR (a classic Mac OS line end; Excel for Mac's "CSV" writes them) made a
// LF: YAML 1.2 and RFC 4180 count it as a line break, and line-based reading and line numbers
// count LFs. CR LF stays as it is. For text files only: never a gzip stream's bytes.
std::string with_line_feeds(std::string text);

// The byte offset of the first byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included), or npos when all of `text` is UTF-8.
std::size_t first_invalid_utf8(const std::string& text);

// A piece of an input file quoted in a message: at most `max_bytes`, cut at a character boundary
// ("..." added), control characters and bytes that are not UTF-8 shown as '?'. Messages end up
// in JSON (Gradescope's results.json), which must be UTF-8, and on terminals.
std::string excerpt(const std::string& text, std::size_t max_bytes = 60);

// The 1-based line of a byte offset.
std::size_t line_of_offset(const std::string& text, std::size_t offset);

}  // namespace lab
