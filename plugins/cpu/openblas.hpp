// OpenBLAS, opened at run time so the CPU backend can choose its kernels first. OpenBLAS 0.3.21
// (Debian 12) does not recognise recent CPUs such as Sapphire Rapids and falls back to its
// generic SSE3 ("Prescott") kernels, a quarter of the machine's GEMM speed; OpenBLAS reads
// OPENBLAS_CORETYPE once, when it loads. So unless the user set it, the backend names the kernel
// family matching the ISA it detected (SkylakeX for AVX-512, Haswell for AVX2) before loading.
#pragma once

#include <string>

#include "lab/cpu_kernels.hpp"

namespace lab::cpu {

struct OpenBlas {
    using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
    using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
    Sgemm sgemm = nullptr;
    Dgemm dgemm = nullptr;
    void (*set_num_threads)(int) = nullptr;
    std::string core;       // openblas_get_corename()
    std::string config;     // openblas_get_config()
    std::string how_chosen; // "detected by OpenBLAS", "OPENBLAS_CORETYPE set by the user", ...
};

// Loads libopenblas.so.0 once per process; throws std::runtime_error when it is missing.
const OpenBlas& openblas(Simd simd);

}  // namespace lab::cpu
