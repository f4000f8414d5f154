// The driver probe (see driver_probe.hpp).
#include "driver_probe.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace lab::cuda {

namespace {
// CUDA 13 needs a driver that supports it: R580 or newer (CUDA version 13000).
constexpr int kRequiredDriverCudaVersion = 13000;
constexpr const char* kRequiredDriverRelease = "580";
}  // namespace

int driver_cuda_version() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    using GetVersion = int (*)(int*);  // CUresult cuDriverGetVersion(int*)
    auto get = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion"));
    int v = 0;
    if (!get || get(&v) != 0) v = 0;
    // The handle stays open: the runtime will use the same library.
    return v;
}

std::string why_no_cuda_device() {
    int driver = driver_cuda_version();
    if (driver == 0) return "no NVIDIA driver (libcuda.so.1 not found)";
    if (driver < kRequiredDriverCudaVersion)
        return "the NVIDIA driver supports CUDA " + std::to_string(driver / 1000) + "." +
               std::to_string(driver % 1000 / 10) + ", older than CUDA 13 needs (driver " + kRequiredDriverRelease +
               " or newer)";
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    if (count == 0) return "the driver sees no CUDA device";
    // lab's kernels are built for compute capability 7.5 and newer (sm_75 ... sm_90, compute_90 PTX).
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    if (major * 10 + minor < 75)
        return "GPU found (compute capability " + std::to_string(major) + "." + std::to_string(minor) +
               "), but lab needs 7.5 or newer";
    return "";
}

}  // namespace lab::cuda
