// libFuzzer target: a ceilings cache file, as every run reads it (a damaged cache is refused, never trusted).
#include "fuzz_entries.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string name = "ceilings_cache";
    return lab_fuzz::with_file(data, size, lab_fuzz::suffix(name), lab_fuzz::entries().at(name));
}
