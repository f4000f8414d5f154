// Weights in reduced precision (opt-in): how a matrix is stored in each dtype a lesson compares,
// the encoders that produce that storage from fp32 on the host, and the reference decoder (one
// element, exactly as a kernel must read it). Lesson 02.08's kernels read these layouts; its
// derivation measures each format's error with decode().
//
// Layouts, row-major, `rows` rows of `cols` values (cols a multiple of 32):
//   fp32, fp16, bf16   the values (IEEE binary32, binary16, bfloat16), no scale;
//   fp8 (e4m3)         one byte per value (OCP E4M3FN: no infinities, max 448), one fp32 scale for
//                      the tensor (`global`: value = e4m3 x global);
//   int8               one signed byte per value, one fp32 scale per row (symmetric: absmax / 127);
//   mxfp4              blocks of 32: 16 bytes of E2M1 nibbles and one E8M0 scale byte (2^(s-127),
//                      OCP MX: the block's largest power of two less E2M1's largest exponent, 2);
//   nvfp4              blocks of 16: 8 bytes of E2M1 nibbles and one E4M3 scale byte, times one
//                      fp32 `global` for the tensor (absmax / (448 x 6)), as NVIDIA's NVFP4.
// In a 4-bit block of B values, byte i holds value i in its low nibble and value i + B/2 in its
// high nibble (llama.cpp's Q4 order: a kernel reads two contiguous halves of x).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "lab/workloads.hpp"

namespace lab::quantize {

// E2M1 (FP4) magnitudes of codes 0..7; bit 3 is the sign.
inline constexpr std::array<float, 16> kE2M1 = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};

inline double e4m3_value(std::uint8_t code) {
    const int e = (code >> 3) & 15, m = code & 7;
    if (e == 15 && m == 7) return NAN;
    const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
    return code & 0x80 ? -v : v;
}
// The E4M3 code nearest to v, ties to the even code as the hardware rounds (saturating at 448),
// the sign kept as the hardware keeps it (a negative value too small for E4M3 is -0, 0x80):
// codes 0..126 are the finite non-negative values in increasing order, so a binary search finds
// the neighbours.
inline std::uint8_t e4m3_code(double v) {
    static const std::array<double, 127> values = [] {
        std::array<double, 127> t{};
        for (int c = 0; c < 127; ++c) t[c] = e4m3_value(static_cast<std::uint8_t>(c));
        return t;
    }();
    const double a = std::fabs(v);
    const auto hi = std::lower_bound(values.begin(), values.end(), a);
    std::size_t c = hi == values.end() ? 126 : static_cast<std::size_t>(hi - values.begin());
    if (c > 0) {
        const double below = a - values[c - 1], above = values[c] - a;
        if (below < above || (below == above && (c & 1))) --c;
    }
    return static_cast<std::uint8_t>(c | (std::signbit(v) ? 0x80 : 0));
}
inline std::uint8_t e2m1_code(double v) {
    std::uint8_t best = 0;
    for (std::uint8_t c = 1; c < 8; ++c)
        if (std::fabs(std::fabs(v) - kE2M1[c]) < std::fabs(std::fabs(v) - kE2M1[best])) best = c;
    return static_cast<std::uint8_t>(best | (v < 0 && best ? 8 : 0));
}

// Branch-free decoders a compiler vectorises (table lookups and branches it would not): the
// value of an E2M1 code, of an IEEE half's bits (finite values; subnormals without subnormal
// arithmetic) and of an E4M3 code (finite; the block scales of NVFP4). `pick` selects by mask.
inline std::uint32_t pick(bool first, std::uint32_t a, std::uint32_t b) {
    const std::uint32_t mask = 0u - static_cast<std::uint32_t>(first);
    return (a & mask) | (b & ~mask);
}
inline float e2m1_value(std::uint32_t c) {
    const std::uint32_t e = (c >> 1) & 3, m = c & 1;  // 2^(e-1) (1 + m/2), or m/2 when e = 0
    return std::bit_cast<float>(pick(e != 0, (e + 126) << 23 | m << 22, m * 0x3F000000u) | (c & 8) << 28);
}
inline float half_value(std::uint16_t h) {
    const std::uint32_t o = static_cast<std::uint32_t>(h & 0x7FFF) << 13;
    const float subnormal = std::bit_cast<float>(o + (113u << 23)) - std::bit_cast<float>(113u << 23);  // 2^-14 (1 + m) - 2^-14
    return std::bit_cast<float>(pick((o & 0x0F800000) != 0, o + (112u << 23), std::bit_cast<std::uint32_t>(subnormal)) |
                                static_cast<std::uint32_t>(h & 0x8000) << 16);
}
inline float e4m3_float(std::uint32_t c) {
    const std::uint32_t e = (c >> 3) & 15, m = c & 7;  // 2^(e-7) (1 + m/8), or m 2^-9 when e = 0
    const float subnormal = static_cast<float>(m) * 0x1p-9f;
    return std::bit_cast<float>(pick(e != 0, (e + 120) << 23 | m << 20, std::bit_cast<std::uint32_t>(subnormal)) | (c & 0x80) << 24);
}

// An IEEE half's bits for `f`, rounded to nearest even (past 65504 to infinity, subnormals kept):
// the SDK's own, so a lesson builds with compilers that have no _Float16 (clang before 15 on x86).
inline std::uint16_t half_bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
    x &= 0x7FFFFFFF;
    if (x >= 0x7F800000) return sign | (x > 0x7F800000 ? 0x7E00 : 0x7C00);  // NaN, infinity
    if (x >= 0x477FF000) return sign | 0x7C00;                             // rounds to 65536 or more
    if (x < 0x38800000) {  // under 2^-14: a subnormal half, in units of 2^-24 (exact in float)
        const float units = std::fabs(f) * 16777216.0f;
        return sign | static_cast<std::uint16_t>(std::nearbyint(units));  // ties to even; 1024 is 2^-14's bits
    }
    std::uint32_t h = (x - 0x38000000) >> 13;  // exponent rebiased 127 -> 15, 10 mantissa bits
    const std::uint32_t dropped = x & 0x1FFF;
    if (dropped > 0x1000 || (dropped == 0x1000 && (h & 1))) ++h;  // a carry moves into the exponent, as it should
    return sign | static_cast<std::uint16_t>(h);
}

inline std::uint16_t bf16_bits(float f) {  // round to nearest even
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
inline float bf16_value(std::uint16_t b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline int block_of(Dtype d) { return d == Dtype::mxfp4 ? 32 : d == Dtype::nvfp4 ? 16 : 1; }
// Bytes of the layout: values, scales, and the tensor's own scale (fp8, nvfp4).
inline std::size_t value_bytes(Dtype d, int rows, int cols) {
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    return d == Dtype::fp32 ? 4 * n : d == Dtype::fp16 || d == Dtype::bf16 ? 2 * n : d == Dtype::mxfp4 || d == Dtype::nvfp4 ? n / 2 : n;
}
inline std::size_t scale_bytes(Dtype d, int rows, int cols) {
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    return d == Dtype::int8 ? 4 * static_cast<std::size_t>(rows) : d == Dtype::mxfp4 || d == Dtype::nvfp4 ? n / block_of(d) : 0;
}
inline double stored_bytes(Dtype d, int rows, int cols) {
    return static_cast<double>(value_bytes(d, rows, cols) + scale_bytes(d, rows, cols)) + (d == Dtype::fp8_e4m3 || d == Dtype::nvfp4 ? 4 : 0);
}

struct Encoded {
    Dtype dtype = Dtype::fp32;
    int rows = 0, cols = 0;
    std::vector<std::uint8_t> data;    // rows x row_bytes
    std::vector<std::uint8_t> scales;  // rows x scale_bytes per row (int8: fp32 per row; mx/nv: one byte per block)
    float global = 1;                  // fp8 and nvfp4: the tensor's scale
    std::size_t row_bytes() const { return data.size() / static_cast<std::size_t>(rows); }
    std::size_t row_scale_bytes() const { return scales.size() / static_cast<std::size_t>(rows); }
    double bytes() const { return stored_bytes(dtype, rows, cols); }
};

inline bool supported(Dtype d) {
    return d == Dtype::fp32 || d == Dtype::fp16 || d == Dtype::bf16 || d == Dtype::int8 || d == Dtype::fp8_e4m3 || d == Dtype::mxfp4 ||
           d == Dtype::nvfp4;
}
// W (rows x cols, fp32) stored in `d`.
inline Encoded encode(Dtype d, const float* w, int rows, int cols) {
    if (!supported(d) || cols % 32 != 0) throw std::invalid_argument("lab::quantize: no layout for this dtype or width");
    Encoded e{d, rows, cols, {}, {}, 1};
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    double absmax = 0;
    for (std::size_t i = 0; i < n; ++i) absmax = std::max(absmax, std::fabs(double(w[i])));
    if (d == Dtype::fp32) e.data.resize(4 * n), std::memcpy(e.data.data(), w, 4 * n);
    if (d == Dtype::fp16 || d == Dtype::bf16) {
        e.data.resize(2 * n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t b = d == Dtype::bf16 ? bf16_bits(w[i]) : half_bits(w[i]);
            std::memcpy(&e.data[2 * i], &b, 2);
        }
    }
    if (d == Dtype::fp8_e4m3) {
        e.global = absmax > 0 ? static_cast<float>(absmax / 448) : 1.0f;
        e.data.resize(n);
        for (std::size_t i = 0; i < n; ++i) e.data[i] = e4m3_code(w[i] / e.global);
    }
    if (d == Dtype::int8) {
        e.data.resize(n), e.scales.resize(4 * static_cast<std::size_t>(rows));
        for (int r = 0; r < rows; ++r) {
            const float* row = w + static_cast<std::size_t>(r) * cols;
            float m = 0;
            for (int j = 0; j < cols; ++j) m = std::max(m, std::fabs(row[j]));
            const float s = m > 0 ? m / 127 : 1;
            std::memcpy(&e.scales[4 * static_cast<std::size_t>(r)], &s, 4);
            for (int j = 0; j < cols; ++j)
                e.data[static_cast<std::size_t>(r) * cols + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(std::lround(row[j] / s), -127L, 127L)));
        }
    }
    if (d == Dtype::mxfp4 || d == Dtype::nvfp4) {
        const int B = block_of(d);
        if (d == Dtype::nvfp4) e.global = absmax > 0 ? static_cast<float>(absmax / (448.0 * 6)) : 1.0f;
        e.data.resize(value_bytes(d, rows, cols)), e.scales.resize(scale_bytes(d, rows, cols));
        for (std::size_t b = 0; b < n / B; ++b) {
            const float* v = w + b * B;
            double m = 0;
            for (int i = 0; i < B; ++i) m = std::max(m, std::fabs(double(v[i])));
            double scale;
            if (d == Dtype::mxfp4) {
                const int x = m > 0 ? std::clamp(static_cast<int>(std::floor(std::log2(m))) - 2 + 127, 0, 254) : 0;
                e.scales[b] = static_cast<std::uint8_t>(x), scale = std::ldexp(1.0, x - 127);
            } else {
                e.scales[b] = e4m3_code(m / 6 / e.global), scale = e4m3_value(e.scales[b]) * e.global;
            }
            for (int i = 0; i < B / 2; ++i) {
                const std::uint8_t lo = scale > 0 ? e2m1_code(v[i] / scale) : 0, hi = scale > 0 ? e2m1_code(v[i + B / 2] / scale) : 0;
                e.data[b * B / 2 + i] = static_cast<std::uint8_t>(lo | hi << 4);
            }
        }
    }
    return e;
}

// Value (r, j) as stored: what a kernel reading the layout must compute, in double.
inline double decode(const Encoded& e, int r, int j) {
    const std::size_t i = static_cast<std::size_t>(r) * e.cols + j;
    switch (e.dtype) {
        case Dtype::fp32: { float f; std::memcpy(&f, &e.data[4 * i], 4); return f; }
        case Dtype::fp16: { std::uint16_t h; std::memcpy(&h, &e.data[2 * i], 2); return half_value(h); }
        case Dtype::bf16: { std::uint16_t b; std::memcpy(&b, &e.data[2 * i], 2); return bf16_value(b); }
        case Dtype::fp8_e4m3: return e4m3_value(e.data[i]) * e.global;
        case Dtype::int8: { float s; std::memcpy(&s, &e.scales[4 * static_cast<std::size_t>(r)], 4); return static_cast<std::int8_t>(e.data[i]) * double(s); }
        default: {
            const int B = block_of(e.dtype);
            const std::size_t b = i / B, k = i % B;
            const std::uint8_t byte = e.data[b * B / 2 + k % (B / 2)], code = k < std::size_t(B / 2) ? byte & 15 : byte >> 4;
            const double scale = e.dtype == Dtype::mxfp4 ? std::ldexp(1.0, e.scales[b] - 127) : e4m3_value(e.scales[b]) * e.global;
            return e2m1_value(code) * scale;
        }
    }
}

}  // namespace lab::quantize
