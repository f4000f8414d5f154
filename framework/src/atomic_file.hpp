// Writing files so that a reader sees the old content or the new, never half of either:
// write a temporary file beside the target, flush it to disk, rename it over the target.
#pragma once

#include <filesystem>
#include <string>

namespace lab {

// Throws InputError naming the path when the folder cannot be created or written.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace lab
