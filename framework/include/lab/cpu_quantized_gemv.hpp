// lab::QuantizedGemv on a CPU (opt-in): each thread streams a contiguous band of rows and
// dequantises every weight as it reads it, in plain loops the compiler vectorises per SIMD
// variant (build the including plugin with -O3: meson's override_options: ['optimization=3']).
#pragma once

#include <bit>
#include <string>

#include "lab/cpu_share.hpp"
#include "lab/quantize.hpp"
#include "lab/quantized_gemv.hpp"

namespace lab::cpu {

namespace quantized_gemv_detail {

// One row's dot product, 16 lanes of partial sums (the compiler vectorises across lanes).
template <Dtype D> [[gnu::always_inline]] inline float row_dot(const QuantizedWeights& w, int r, const float* __restrict x) {
    constexpr int L = 16;
    float acc[L] = {};
    const std::size_t n = static_cast<std::size_t>(w.cols), row = static_cast<std::size_t>(r) * n;
    const auto* u8 = static_cast<const std::uint8_t*>(w.data);
    if constexpr (D == Dtype::mxfp4 || D == Dtype::nvfp4) {
        constexpr int B = D == Dtype::mxfp4 ? 32 : 16;
        const std::uint8_t *q = u8 + row / 2, *sc = static_cast<const std::uint8_t*>(w.scales) + row / B;
        for (std::size_t b = 0; b < n / B; ++b) {
            const float s = D == Dtype::mxfp4 ? std::bit_cast<float>(static_cast<std::uint32_t>(sc[b]) << 23) : quantize::e4m3_float(sc[b]);
            for (int l = 0; l < B / 2; ++l) {
                const std::uint8_t byte = q[b * B / 2 + l];
                acc[l] += s * (quantize::kE2M1[byte & 15] * x[b * B + l] + quantize::kE2M1[byte >> 4] * x[b * B + B / 2 + l]);
            }
        }
    } else {
        for (std::size_t j = 0; j < n; j += L)
            for (int l = 0; l < L; ++l) {
                const std::size_t i = row + j + l;
                float v;
                if constexpr (D == Dtype::fp32) v = static_cast<const float*>(w.data)[i];
                if constexpr (D == Dtype::fp16) v = quantize::half_value(static_cast<const std::uint16_t*>(w.data)[i]);
                if constexpr (D == Dtype::bf16) v = std::bit_cast<float>(static_cast<std::uint32_t>(static_cast<const std::uint16_t*>(w.data)[i]) << 16);
                if constexpr (D == Dtype::int8) v = static_cast<float>(static_cast<const std::int8_t*>(w.data)[i]);
                acc[l] += v * x[j + l];
            }
    }
    float sum = 0;
    for (float a : acc) sum += a;
    if constexpr (D == Dtype::int8) sum *= static_cast<const float*>(w.scales)[r];
    return sum * w.global;
}
[[gnu::always_inline]] inline void gemv_rows(const QuantizedWeights& w, const float* x, float* y, std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
        const int i = static_cast<int>(r);
        switch (w.dtype) {
            case Dtype::fp16: y[r] = row_dot<Dtype::fp16>(w, i, x); break;
            case Dtype::bf16: y[r] = row_dot<Dtype::bf16>(w, i, x); break;
            case Dtype::int8: y[r] = row_dot<Dtype::int8>(w, i, x); break;
            case Dtype::mxfp4: y[r] = row_dot<Dtype::mxfp4>(w, i, x); break;
            case Dtype::nvfp4: y[r] = row_dot<Dtype::nvfp4>(w, i, x); break;
            default: y[r] = row_dot<Dtype::fp32>(w, i, x);
        }
    }
}
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,fma"))) inline void gemv_avx512(const QuantizedWeights& w, const float* x, float* y, std::size_t r0, std::size_t r1) { gemv_rows(w, x, y, r0, r1); }
__attribute__((target("avx2,f16c,fma"))) inline void gemv_avx2(const QuantizedWeights& w, const float* x, float* y, std::size_t r0, std::size_t r1) { gemv_rows(w, x, y, r0, r1); }
inline void gemv_plain(const QuantizedWeights& w, const float* x, float* y, std::size_t r0, std::size_t r1) { gemv_rows(w, x, y, r0, r1); }

}  // namespace quantized_gemv_detail

class QuantizedGemvCpu : public QuantizedGemv {
public:
    explicit QuantizedGemvCpu(Device& dev) : simd_(dev.facts().simd) {}
    Launch gemv(const QuantizedWeights& w, const float* x, float* y) override {
        using namespace quantized_gemv_detail;
        auto f = simd_ == "avx512" ? gemv_avx512 : simd_ == "avx2" ? gemv_avx2 : gemv_plain;
        return [=](Stream& st) {
            st.launch([=](int t, int nt) {
                std::size_t r0, r1;
                share(static_cast<std::size_t>(w.rows), t, nt, r0, r1);
                f(w, x, y, r0, r1);
            });
        };
    }

private:
    std::string simd_;
};

}  // namespace lab::cpu
