// The GNU build ID of an ELF shared library (the linker's hash of what it linked, kept by
// `meson install` and `strip`): tells two copies of one build from two different builds.
#pragma once

#include <filesystem>
#include <string>

namespace lab {

// Lower-case hex of the NT_GNU_BUILD_ID note; "" when the file has none or is not a readable
// 64-bit ELF file.
std::string gnu_build_id(const std::filesystem::path& file);

// Why a 64-bit ELF file is cut short, or "" when it is whole (or not such a file: the loader
// says why then): the file is shorter than its loadable segments or its section headers reach.
// dlopen maps a truncated library past its end, and the first touch of the missing pages kills
// the process with SIGBUS, before any message.
std::string elf_truncation(const std::filesystem::path& file);

// Whether two plugin files are the same build: the same build ID, or (without one) the same bytes.
bool same_build(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace lab
