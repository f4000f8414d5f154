// libFuzzer target: a run record, as lab submit / show / grade read it (read_record, then the raw run).
#include "fuzz_entries.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string name = "run_record";
    return lab_fuzz::with_file(data, size, lab_fuzz::suffix(name), lab_fuzz::entries().at(name));
}
