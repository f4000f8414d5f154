// A text file's bytes as UTF-8 whatever byte-order mark it starts with. Windows tools write
// them: Notepad a UTF-8 mark, Windows PowerShell 5's `>` UTF-16 with its mark; the text in them
// is the same text, and a reader that looks for its markers at the start of the file must not
// see the mark first.
#pragma once

#include <filesystem>
#include <string>

namespace lab {

// `bytes` with a UTF-8 byte-order mark dropped, or UTF-16 (little- or big-endian, told by its
// mark) converted to UTF-8; other text unchanged. UTF-16 that does not decode (an odd number of
// bytes, a lone surrogate) is an InputError naming `file` and how to convert it.
std::string utf8_text(const std::string& bytes, const std::filesystem::path& file);

}  // namespace lab
