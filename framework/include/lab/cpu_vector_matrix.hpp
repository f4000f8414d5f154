// A row vector times a row-major fp32 matrix on a CPU, one thread's share (lesson 02.06's decode
// GEMV, y = x W): its band of W's rows r0..r1 into its own partial y, acc[:] = sum over r of
// X[r] * W[r, :], W read once, front to back. Built per SIMD variant (target attributes; build the
// including plugin with -O3: meson's override_options: ['optimization=3']): at -O2 the loop stayed
// scalar, and 02.06's GEMV read W at half OpenBLAS's rate, too slow to show the memory roof.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace lab::cpu {

[[gnu::always_inline]] inline void vector_matrix_band(const float* __restrict W, const float* __restrict X, float* __restrict acc, std::size_t n,
                                             std::size_t r0, std::size_t r1) {
    std::fill(acc, acc + n, 0.0f);
    for (std::size_t r = r0; r < r1; ++r) {
        const float xr = X[r];
        const float* __restrict row = W + r * n;
        for (std::size_t j = 0; j < n; ++j) acc[j] += xr * row[j];
    }
}
__attribute__((target("avx512f,fma"))) inline void vector_matrix_band_avx512(const float* W, const float* X, float* acc, std::size_t n,
                                                                      std::size_t r0, std::size_t r1) {
    vector_matrix_band(W, X, acc, n, r0, r1);
}
__attribute__((target("avx2,fma"))) inline void vector_matrix_band_avx2(const float* W, const float* X, float* acc, std::size_t n, std::size_t r0,
                                                               std::size_t r1) {
    vector_matrix_band(W, X, acc, n, r0, r1);
}
inline void vector_matrix_band_plain(const float* W, const float* X, float* acc, std::size_t n, std::size_t r0, std::size_t r1) {
    vector_matrix_band(W, X, acc, n, r0, r1);
}

using VectorMatrixBand = void (*)(const float*, const float*, float*, std::size_t, std::size_t, std::size_t);

// The variant for the device's SIMD choice (DeviceFacts::simd: "avx512", "avx2", else scalar).
inline VectorMatrixBand vector_matrix_band_for(const std::string& simd) {
    return simd == "avx512" ? vector_matrix_band_avx512 : simd == "avx2" ? vector_matrix_band_avx2 : vector_matrix_band_plain;
}

}  // namespace lab::cpu
