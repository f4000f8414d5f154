// The GPU tests' main: they run only where a CUDA device works. Elsewhere (no CUDA backend in
// this build, no driver, no device) the executable says why and exits 77, which meson counts as
// a skip. A packed build on a lent GPU machine (LAB_PLUGIN_PATH set, backend_lookup.hpp) never
// skips: a backend that is missing, does not load or finds no GPU there fails, exit 1.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "gpu_fixture.hpp"

int main(int argc, char** argv) {
    using lab_gpu_test::BackendLookup;
    const BackendLookup& backend = lab_gpu_test::cuda_backend();
    const bool packed = lab_gpu_test::from_plugin_path();
    std::string why = backend.verdict == BackendLookup::Verdict::found ? lab_gpu_test::why_no_gpu() : backend.why;
    if (!why.empty()) {
        if (packed || backend.verdict == BackendLookup::Verdict::fail) {
            std::cerr << "the GPU tests cannot run: " << why << "\n";
            return 1;
        }
        std::cout << "skipping the GPU tests: " << why << "\n";
        return 77;
    }
    std::cout << "GPU tests with the CUDA backend " << backend.file.string() << "\n";
    return Catch::Session().run(argc, argv);
}
