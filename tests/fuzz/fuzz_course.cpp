// libFuzzer target: course.yaml, as every command that seeds or grades reads it.
#include "fuzz_entries.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string name = "course";
    return lab_fuzz::with_file(data, size, lab_fuzz::suffix(name), lab_fuzz::entries().at(name));
}
