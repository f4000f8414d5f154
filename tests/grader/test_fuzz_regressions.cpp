// Every saved fuzzing finding (tests/fixtures/fuzz_regressions/<target>/) replayed through the
// entry point its fuzz target calls: read, or refused with an InputError; never a crash or another
// exception (which lab would report as an internal error).
#include <catch2/catch.hpp>

#include "errors.hpp"
#include "fuzz_entries.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("every saved fuzzing finding is read or refused with a clear input error", "[fuzz_regressions]") {
    const fs::path root = lab_test::source_root() / "tests/fixtures/fuzz_regressions";
    int replayed = 0;
    for (const auto& dir : fs::directory_iterator(root)) {
        if (!dir.is_directory()) continue;
        const std::string target = dir.path().filename().string();
        REQUIRE(lab_fuzz::entries().count(target) == 1);
        for (const auto& f : fs::directory_iterator(dir.path())) {
            CAPTURE(target, f.path().filename().string());
            // Read under the suffix its target reads files with, as the fuzzer hands them over.
            lab_test::TempDir tmp;
            const fs::path file = tmp / ("input" + lab_fuzz::suffix(target));
            fs::copy_file(f.path(), file);
            try {
                lab_fuzz::entries().at(target)(file);
            } catch (const lab::InputError& e) {
                CHECK(std::string(e.what()).find(file.string()) != std::string::npos);   // it names the file
            } catch (const std::exception& e) {
                FAIL("not an input error: " << e.what());
            }
            ++replayed;
        }
    }
    CHECK(replayed >= 6);
}
