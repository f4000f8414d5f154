// The CPU vector-matrix band (lab/cpu_vector_matrix.hpp, lesson 02.06's decode GEMV) in each SIMD variant this CPU
// runs: a band of rows summed into the partial y, against a double-precision reference, with a
// row count and width that leave a remainder for every vector width.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "lab/cpu_kernels.hpp"
#include "lab/cpu_vector_matrix.hpp"

TEST_CASE("the CPU vector-matrix band matches a double-precision sum in every SIMD variant", "[decode_gemv]") {
    const std::size_t n = 77, rows = 41, r0 = 5, r1 = 38;
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0, 1);
    std::vector<float> W(rows * n), X(rows), acc(n, -1.0f);
    for (auto& v : W) v = normal(gen);
    for (auto& v : X) v = normal(gen);
    for (lab::cpu::Simd s : {lab::cpu::Simd::scalar, lab::cpu::Simd::avx2, lab::cpu::Simd::avx512}) {
        if (!lab::cpu::simd_supported(s)) continue;
        INFO(lab::cpu::to_string(s));
        lab::cpu::vector_matrix_band_for(lab::cpu::to_string(s))(W.data(), X.data(), acc.data(), n, r0, r1);
        for (std::size_t j = 0; j < n; ++j) {
            double want = 0, size = 0;
            for (std::size_t r = r0; r < r1; ++r) want += double(X[r]) * W[r * n + j], size += std::fabs(double(X[r]) * W[r * n + j]);
            INFO("column " << j);
            CHECK(std::fabs(acc[j] - want) <= 1e-5 * size);
        }
    }
}
