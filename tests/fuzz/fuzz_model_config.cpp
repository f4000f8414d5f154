// libFuzzer target: a Hugging Face config.json, as lab model reads it.
#include "fuzz_entries.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string name = "model_config";
    return lab_fuzz::with_file(data, size, lab_fuzz::suffix(name), lab_fuzz::entries().at(name));
}
