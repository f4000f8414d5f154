// Where the GPU tests find the CUDA backend (backend_lookup.hpp): the packed build's
// LAB_PLUGIN_PATH first and alone, else the build folder; a pack without the backend fails
// instead of skipping. Runs everywhere: it needs no GPU.
#include <catch2/catch.hpp>

#include "backend_lookup.hpp"
#include "test_support.hpp"

using lab_gpu_test::BackendLookup;
using lab_gpu_test::find_cuda_backend;

namespace {

void touch(const std::filesystem::path& p) {
    std::filesystem::create_directories(p.parent_path());
    lab_test::write_file(p, "");
}

}  // namespace

TEST_CASE("the GPU tests take the CUDA backend from LAB_PLUGIN_PATH when it is set", "[gpu_lookup]") {
    lab_test::TempDir t;
    touch(t / "build/plugins/cuda/labdevice_cuda.so");
    touch(t / "carry/plugins/cuda/labdevice_cuda.so");
    const std::string path = (t / "carry/labs").string() + "::" + (t / "carry/plugins/cuda").string();
    BackendLookup r = find_cuda_backend(path.c_str(), t / "build");
    CHECK(r.verdict == BackendLookup::Verdict::found);
    CHECK(r.file == t / "carry/plugins/cuda/labdevice_cuda.so");
}

TEST_CASE("a LAB_PLUGIN_PATH without the CUDA backend fails the GPU tests instead of skipping them", "[gpu_lookup]") {
    lab_test::TempDir t;
    touch(t / "build/plugins/cuda/labdevice_cuda.so");  // not used: the path says where to look
    const std::string path = (t / "carry/plugins/cpu").string();
    BackendLookup r = find_cuda_backend(path.c_str(), t / "build");
    CHECK(r.verdict == BackendLookup::Verdict::fail);
    CHECK_THAT(r.why, Catch::Contains("LAB_PLUGIN_PATH is set") && Catch::Contains(path) &&
                          Catch::Contains("labdevice_cuda.so"));
}

TEST_CASE("without LAB_PLUGIN_PATH the GPU tests use the build folder's backend, or skip without one", "[gpu_lookup]") {
    lab_test::TempDir t;
    for (const char* unset : {static_cast<const char*>(nullptr), ""}) {
        BackendLookup none = find_cuda_backend(unset, t / "build");
        CHECK(none.verdict == BackendLookup::Verdict::skip);
        CHECK_THAT(none.why, Catch::Contains("no CUDA backend"));
    }
    touch(t / "build/plugins/cuda/labdevice_cuda.so");
    BackendLookup r = find_cuda_backend(nullptr, t / "build");
    CHECK(r.verdict == BackendLookup::Verdict::found);
    CHECK(r.file == t / "build/plugins/cuda/labdevice_cuda.so");
}
