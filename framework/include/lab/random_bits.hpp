// The bits and values of lab's pseudo-random fills (lab/random_fill.hpp), callable from host
// and CUDA device code alike (C++17, no other header), so a fill made on the GPU equals one made
// on the host. Element i of the fill with seed s comes from splitmix64's finaliser of
// (s * FNV prime ^ (i mod 2^20)): 24 of its bits as a float in [-1, 1) (exact in fp32), 53 as a
// double, the top byte as an int8. The period lets a host make one piece and copy it over a
// buffer of any size (a tensor core's speed depends on the values' statistics, which a 2^20-element
// period keeps, not on their never repeating).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define LAB_HOST_DEVICE __host__ __device__
#else
#define LAB_HOST_DEVICE
#endif

namespace lab::random_fill {

// splitmix64's finaliser: a different, well-mixed 64-bit value for every input.
LAB_HOST_DEVICE inline std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// Elements in one period of a fill.
inline constexpr std::uint64_t kPeriod = std::uint64_t{1} << 20;
// The random bits of element i of the fill with `seed`.
LAB_HOST_DEVICE inline std::uint64_t bits(std::uint64_t seed, std::uint64_t i) { return mix(seed * 0x100000001b3ull ^ (i & (kPeriod - 1))); }
// 24 random bits as a float in [-1, 1), in steps of 2^-23.
LAB_HOST_DEVICE inline float unit(std::uint64_t r) { return static_cast<float>(r >> 40) * 0x1p-23f - 1.0f; }
// 53 random bits as a double in [-1, 1).
LAB_HOST_DEVICE inline double unit_double(std::uint64_t r) { return static_cast<double>(r >> 11) * 0x1p-52 - 1.0; }
LAB_HOST_DEVICE inline std::int8_t int8_value(std::uint64_t r) { return static_cast<std::int8_t>(r >> 56); }

}  // namespace lab::random_fill
