// lab/quantize.hpp: the branch-free decoders equal the formats' definitions code by code, the
// layouts hold the bytes the SDK's storage_bytes states, and each encoder's rounding error stays
// within what its format can represent.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "lab/quantize.hpp"

using namespace lab;
namespace qz = lab::quantize;

TEST_CASE("the decoders agree with the formats' definitions for every code", "[quantize]") {
    for (std::uint32_t c = 0; c < 16; ++c) CHECK(qz::e2m1_value(c) == qz::kE2M1[c]);
    for (std::uint32_t h = 0; h < 65536; ++h) {
        if ((h & 0x7C00) == 0x7C00) continue;  // infinities and NaNs: weights never hold them
        const std::uint16_t bits = static_cast<std::uint16_t>(h);
        INFO(h);
        // The definition: (-1)^s 2^(e-15) (1 + m/1024), or 2^-14 m/1024 when e = 0.
        const int e = (h >> 10) & 31, m = h & 1023;
        const double v = (h & 0x8000 ? -1 : 1) * (e ? std::ldexp(1 + m / 1024.0, e - 15) : std::ldexp(m / 1024.0, -14));
        CHECK(qz::half_value(bits) == static_cast<float>(v));
        CHECK(qz::half_bits(qz::half_value(bits)) == bits);  // every half encodes back to itself
    }
    // Rounding: halfway cases to even, the largest half, overflow, and the compiler's own
    // conversion where it has one.
    CHECK(qz::half_bits(1.0f + 0x1p-11f) == 0x3C00);                // a tie, to the even 1.0
    CHECK(qz::half_bits(1.0f + 3 * 0x1p-11f) == 0x3C02);            // a tie, to the even 1 + 2^-9
    CHECK(qz::half_bits(65519.0f) == 0x7BFF);
    CHECK(qz::half_bits(65520.0f) == 0x7C00);
    CHECK(qz::half_bits(0x1p-25f) == 0x0000);                       // half the smallest subnormal: to even (0)
    CHECK(qz::half_bits(0x1p-25f * 3) == 0x0002);
#ifdef __FLT16_MAX__
    std::mt19937 gen(11);
    std::uniform_int_distribution<std::uint32_t> any;
    for (int i = 0; i < 100000; ++i) {
        std::uint32_t u = any(gen) & 0xBFFFFFFF;  // |f| < 2: exponents around the half's range
        u = (u & 0x807FFFFF) | ((100 + (u >> 23) % 50) << 23);
        float f;
        std::memcpy(&f, &u, 4);
        const _Float16 h = static_cast<_Float16>(f);
        std::uint16_t bits;
        std::memcpy(&bits, &h, 2);
        INFO(f);
        CHECK(qz::half_bits(f) == bits);
    }
#endif
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7F) == 0x7F) continue;  // NaN
        const double v = qz::e4m3_value(static_cast<std::uint8_t>(c));
        INFO(c);
        CHECK(qz::e4m3_float(static_cast<std::uint8_t>(c)) == static_cast<float>(v));
        CHECK(qz::e4m3_code(v) == c);
    }
    CHECK(qz::e4m3_code(-1e-9) == 0x80);  // too small, negative: -0, as __nv_fp8_e4m3 gives
    CHECK(qz::e4m3_code(1e-9) == 0x00);
    CHECK(qz::e4m3_value(0x7E) == 448);
    CHECK(qz::e4m3_code(1e6) == 0x7E);  // saturates
    CHECK(qz::bf16_value(qz::bf16_bits(1.0f + 1.0f / 256)) == 1.0f);  // a tie rounds to even
    CHECK(qz::bf16_value(qz::bf16_bits(3.140625f)) == 3.140625f);
}

TEST_CASE("each layout stores the bytes storage_bytes states, and decodes within its precision", "[quantize]") {
    const int rows = 8, cols = 256;
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0, 0.02f);
    std::vector<float> w(std::size_t(rows) * cols);
    for (auto& v : w) v = normal(gen);
    w[5] = 0.3f;  // an outlier: it sets its block's scale
    for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::int8, Dtype::fp8_e4m3, Dtype::mxfp4, Dtype::nvfp4}) {
        INFO(to_string(d));
        const qz::Encoded e = qz::encode(d, w.data(), rows, cols);
        CHECK(e.data.size() == qz::value_bytes(d, rows, cols));
        CHECK(e.scales.size() == qz::scale_bytes(d, rows, cols));
        if (d != Dtype::int8)  // int8's per-row scales are the lesson's choice, not a block format
            CHECK(e.bytes() - (d == Dtype::fp8_e4m3 || d == Dtype::nvfp4 ? 4 : 0) == storage_bytes(d, double(rows) * cols));
        // Each value within half a step of the format at its scale (relative: mantissa bits).
        const double rel = d == Dtype::fp32 ? 0 : d == Dtype::fp16 ? 0x1p-11 : d == Dtype::bf16 ? 0x1p-8 : d == Dtype::fp8_e4m3 ? 0x1p-4 : 0;
        double worst = 0;
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < cols; ++j) {
                const double v = w[std::size_t(r) * cols + j], got = qz::decode(e, r, j);
                if (rel > 0 || d == Dtype::fp32) CHECK(std::fabs(got - v) <= rel * std::fabs(v) + 1e-9);
                worst = std::max(worst, std::fabs(got - v));
            }
        if (d == Dtype::int8) CHECK(worst <= 0.3 / 127 / 2 + 1e-7);  // half a step of row 0's scale (its absmax is the outlier)
        if (d == Dtype::mxfp4 || d == Dtype::nvfp4) CHECK(worst <= 0.3 / 6 * 2);  // E2M1's steps are at most 2 units of its scale
        CHECK(qz::decode(e, 0, 5) == Approx(0.3).epsilon(d == Dtype::mxfp4 ? 0.34 : 0.07));
    }
}
