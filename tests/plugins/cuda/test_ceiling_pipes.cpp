// Which ceilings the CUDA backend has a kernel for on which GPU (plugins/cuda/ceiling_pipes.hpp),
// checked without a GPU: calibration measures, and Backend::probe_ceiling measures again, exactly
// these; any other key is nullopt to a probe.
#include <catch2/catch.hpp>

#include "ceiling_pipes.hpp"

using namespace lab;
using namespace lab::cuda;

namespace {

// Every dtype cuBLASLt takes on a GPU of this compute capability, as CudaDevice::supports says.
std::function<bool(Dtype)> gemm_of(int cc) {
    return [cc](Dtype d) {
        DeviceFacts f;
        f.features = {"sm_" + std::to_string(cc)};
        return gemm_supported(DeviceKind::cuda, f, d);
    };
}

}  // namespace

TEST_CASE("an H100/H200 has a kernel for the launch cost, every pipe and the read, copy and triad roofs", "[cuda_ceilings]") {
    for (const char* key : {"launch", "flops.fp32.simt", "flops.fp64.simt", "flops.fp16.simt", "flops.bf16.simt",
                            "flops.tf32.tensor", "flops.fp16.tensor", "flops.bf16.tensor", "flops.fp8.tensor",
                            "flops.int8.tensor", "flops.fp64.tensor", "bandwidth.read", "bandwidth.copy", "bandwidth.triad"}) {
        INFO(key);
        CHECK(has_ceiling_kernel(key, 90, gemm_of(90)));
    }
}

TEST_CASE("keys without a CUDA ceiling kernel have none: memcpy, the CPU's update, best, the graph launch", "[cuda_ceilings]") {
    for (const char* key : {"bandwidth.memcpy", "bandwidth.update", "bandwidth.best", "bandwidth.", "launch_graph", "flops.",
                            "flops.nonsense", "flops.fp32", "fp32.simt", "read", ""}) {
        INFO("'" << key << "'");
        CHECK_FALSE(has_ceiling_kernel(key, 90, gemm_of(90)));
    }
}

TEST_CASE("a pipe the GPU lacks has no ceiling kernel there", "[cuda_ceilings]") {
    // bf16 FMA from sm_80.
    CHECK_FALSE(has_ceiling_kernel("flops.bf16.simt", 75, gemm_of(75)));
    CHECK(has_ceiling_kernel("flops.bf16.simt", 80, gemm_of(80)));
    // fp64 GEMM runs on tensor cores only on sm_80 and sm_90, though cuBLASLt takes fp64 from sm_75.
    for (int cc : {75, 86, 89}) {
        INFO("sm_" << cc);
        CHECK(gemm_of(cc)(Dtype::fp64));
        CHECK_FALSE(has_ceiling_kernel("flops.fp64.tensor", cc, gemm_of(cc)));
    }
    CHECK(has_ceiling_kernel("flops.fp64.tensor", 80, gemm_of(80)));
    // A dtype the device's GEMM does not take: fp8 before sm_89, bf16 and tf32 before sm_80.
    CHECK_FALSE(has_ceiling_kernel("flops.fp8.tensor", 86, gemm_of(86)));
    CHECK(has_ceiling_kernel("flops.fp8.tensor", 89, gemm_of(89)));
    CHECK_FALSE(has_ceiling_kernel("flops.bf16.tensor", 75, gemm_of(75)));
    CHECK_FALSE(has_ceiling_kernel("flops.tf32.tensor", 75, gemm_of(75)));
    CHECK_FALSE(has_ceiling_kernel("flops.bf16.tensor", 90, [](Dtype) { return false; }));
    // The simt pipes and the bandwidth kernels need no GEMM.
    for (const char* key : {"launch", "flops.fp32.simt", "flops.fp64.simt", "bandwidth.read"}) {
        INFO(key);
        CHECK(has_ceiling_kernel(key, 75, [](Dtype) { return false; }));
    }
}
