// Bounded pseudo-random contents for a lesson's GEMM operands, the same for a seed on every
// machine. Why not zeros (what Device::allocate gives): tensor cores run measurably faster on
// zeros (an H200's bf16 8192^3 GEMM: 894 TFLOP/s on zeros, 769-798 on random data), so a lesson
// timing zeros would beat the calibrated ceiling, which is measured on data like this.
//
// The values are lab/random_bits.hpp's, stored in the buffer's dtype (rounded to nearest);
// the CUDA backend's calibration fills its operands on the GPU with the same functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "lab/device.hpp"
#include "lab/lesson.hpp"
#include "lab/quantize.hpp"
#include "lab/random_bits.hpp"

namespace lab::random_fill {

// Bytes of one stored element: the dtypes a fill knows (whole-byte types a GEMM takes).
inline std::size_t element_bytes(Dtype d) {
    switch (d) {
        case Dtype::fp64: return 8;
        case Dtype::fp32: case Dtype::tf32: return 4;
        case Dtype::fp16: case Dtype::bf16: return 2;
        case Dtype::fp8_e4m3: case Dtype::int8: return 1;
        default: break;
    }
    throw std::invalid_argument(std::string("no random fill for ") + to_string(d) + ": it fills fp64, fp32, tf32, fp16, bf16, fp8 and int8");
}

// Writes elements [first, first + count) of the fill with `seed` to `out`, stored as `d`.
inline void fill_host(void* out, std::size_t first, std::size_t count, Dtype d, std::uint64_t seed) {
    auto* bytes = static_cast<unsigned char*>(out);
    const std::size_t size = element_bytes(d);
    for (std::size_t e = 0; e < count; ++e) {
        const std::uint64_t r = bits(seed, first + e);
        unsigned char* at = bytes + e * size;
        switch (d) {
            case Dtype::fp64: { const double v = unit_double(r); std::memcpy(at, &v, 8); break; }
            case Dtype::fp32: case Dtype::tf32: { const float v = unit(r); std::memcpy(at, &v, 4); break; }
            case Dtype::fp16: { const std::uint16_t v = quantize::half_bits(unit(r)); std::memcpy(at, &v, 2); break; }
            case Dtype::bf16: { const std::uint16_t v = quantize::bf16_bits(unit(r)); std::memcpy(at, &v, 2); break; }
            case Dtype::fp8_e4m3: *at = quantize::e4m3_code(unit(r)); break;
            default: { const std::int8_t v = int8_value(r); std::memcpy(at, &v, 1); break; }
        }
    }
}

}  // namespace lab::random_fill

namespace lab {

// Fills all of `buffer` (device memory) with the pseudo-random fill of `seed`, stored as `dtype`:
// one period made on the host, copied over the buffer; returns when the data is in place. While
// the plan is replayed (grading) it does nothing: no kernel will read the data.
inline void fill_random(Session& s, Buffer& buffer, Dtype dtype, std::uint64_t seed) {
    const std::size_t size = random_fill::element_bytes(dtype), elements = buffer.bytes() / size;
    if (s.replaying() || elements == 0) return;
    Device& dev = s.device();
    const std::size_t piece = std::min<std::size_t>(elements, random_fill::kPeriod);
    BufferPtr period = dev.allocate_host(piece * size);
    random_fill::fill_host(period->data(), 0, piece, dtype, seed);
    auto* to = static_cast<unsigned char*>(buffer.data());
    for (std::size_t first = 0; first < elements; first += piece)
        dev.copy(dev.stream(), to + first * size, period->data(), std::min(piece, elements - first) * size);
    dev.stream().synchronize();  // the period's host buffer is freed on return
}

}  // namespace lab
