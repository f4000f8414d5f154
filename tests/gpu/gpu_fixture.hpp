// The CUDA device the GPU tests share, opened through the backend plugin as the child process
// opens it.
#pragma once

#include <memory>
#include <string>

#include "backend_lookup.hpp"
#include "lab/backend.hpp"
#include "plugin_loader.hpp"

namespace lab_gpu_test {

// The CUDA backend the tests load, by backend_lookup.hpp's rules (found once).
const BackendLookup& cuda_backend();
// True when LAB_PLUGIN_PATH chose it: a packed build, run where a GPU is expected.
bool from_plugin_path();

// "" when the CUDA backend loads and reports a working device; else why not.
std::string why_no_gpu();

struct Gpu {
    lab::LoadedBackend backend;
    std::unique_ptr<lab::Device> device;
};
Gpu& gpu();

}  // namespace lab_gpu_test
