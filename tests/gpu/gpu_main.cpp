// The GPU tests' main: they run only where a CUDA device works. Elsewhere (no CUDA backend in
// this build, no driver, no device) the executable says why and exits 77, which meson counts as
// a skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

#include "gpu_fixture.hpp"

int main(int argc, char** argv) {
    std::string why = lab_gpu_test::why_no_gpu();
    if (!why.empty()) {
        std::cout << "skipping the GPU tests: " << why << "\n";
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
