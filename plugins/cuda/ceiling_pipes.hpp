// Which ceilings the CUDA backend has a kernel for, and on which devices: the FMA pipes, the
// tensor pipes (cuBLASLt GEMM) and the bandwidth kernels, in plain C++ so that the rule is
// tested on a machine without a GPU. Calibration and a probe of one ceiling (cuda_calibrate.cpp)
// both go by these tables.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "fma_counts.hpp"
#include "lab/device.hpp"

namespace lab::cuda {

struct SimtPipe {
    const char* pipe;
    FmaType type;
    int min_cc;  // the oldest compute capability with it (86 = 8.6); 0 for all
};
inline constexpr SimtPipe kSimtPipes[] = {{"fp32.simt", FmaType::fp32, 0},
                                          {"fp64.simt", FmaType::fp64, 0},
                                          {"fp16.simt", FmaType::fp16x2, 0},
                                          {"bf16.simt", FmaType::bf16x2, 80}};

struct TensorPipe {
    const char* pipe;
    Dtype dtype;
    std::size_t in_bytes, out_bytes;  // per element of A and B, and of C
    const char* unit;
};
inline constexpr TensorPipe kTensorPipes[] = {{"tf32.tensor", Dtype::tf32, 4, 4, "FLOP/s"},
                                              {"fp16.tensor", Dtype::fp16, 2, 2, "FLOP/s"},
                                              {"bf16.tensor", Dtype::bf16, 2, 2, "FLOP/s"},
                                              {"fp8.tensor", Dtype::fp8_e4m3, 1, 2, "FLOP/s"},
                                              {"int8.tensor", Dtype::int8, 1, 4, "OP/s"},
                                              {"fp64.tensor", Dtype::fp64, 8, 8, "FLOP/s"}};

// The bandwidth roofs. cudaMemcpy's rate is calibrated too, as the reference the copy kernel is
// compared with, but it is not a roof and has no kernel of its own to probe.
inline constexpr const char* kBandwidthKernels[] = {"read", "copy", "triad"};

inline bool on_device(const SimtPipe& p, int cc) { return cc >= p.min_cc; }

// `gemm_supported`: whether the device's GEMM takes the pipe's dtype (CudaDevice::supports).
inline bool on_device(const TensorPipe& t, int cc, bool gemm_supported) {
    // FP64 GEMM runs on tensor cores (DMMA) only on sm_80 and sm_90.
    return gemm_supported && (t.dtype != Dtype::fp64 || cc == 80 || cc == 90);
}

inline const SimtPipe* find_simt_pipe(std::string_view pipe) {
    for (const auto& p : kSimtPipes)
        if (pipe == p.pipe) return &p;
    return nullptr;
}

inline const TensorPipe* find_tensor_pipe(std::string_view pipe) {
    for (const auto& t : kTensorPipes)
        if (pipe == t.pipe) return &t;
    return nullptr;
}

// Whether a device of compute capability `cc` whose GEMM takes the dtypes `gemm_supports` says
// has a kernel for the ceiling `key`: "launch", "flops.<pipe>" or "bandwidth.<read|copy|triad>"
// (Backend::probe_ceiling's keys).
inline bool has_ceiling_kernel(const std::string& key, int cc, const std::function<bool(Dtype)>& gemm_supports) {
    if (key == "launch") return true;
    const std::string_view k = key;
    if (k.rfind("flops.", 0) == 0) {
        const std::string_view pipe = k.substr(6);
        if (const SimtPipe* p = find_simt_pipe(pipe)) return on_device(*p, cc);
        if (const TensorPipe* t = find_tensor_pipe(pipe)) return on_device(*t, cc, gemm_supports(t->dtype));
        return false;
    }
    if (k.rfind("bandwidth.", 0) == 0) {
        for (const char* kernel : kBandwidthKernels)
            if (k.substr(10) == kernel) return true;
    }
    return false;
}

}  // namespace lab::cuda
