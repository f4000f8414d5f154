// What every libFuzzer target shares: the input is written to a file and handed to the entry
// point the CLI uses for that file (they read files, so what is fuzzed is what ships). A clear
// InputError is the right answer to a bad file; anything else (a crash, a sanitizer report, an
// uncaught exception of another type, which `lab` would report as an internal error) is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "errors.hpp"

namespace lab_fuzz {

inline int with_file(const std::uint8_t* data, std::size_t size, const std::string& suffix,
                     const std::function<void(const std::filesystem::path&)>& entry) {
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("lab-fuzz-" + std::to_string(getpid()) + suffix);
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        entry(file);
    } catch (const lab::InputError&) {
        // The expected refusal of a bad file.
    }
    return 0;
}

}  // namespace lab_fuzz
