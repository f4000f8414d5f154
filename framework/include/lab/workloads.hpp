// Helpers for stating a workload's counts and shaping a sweep, shared by every lesson:
// bytes per element of each dtype (block scales included), GEMM and GEMV FLOP and traffic,
// geometric sweeps with the knee or crossover found from the measured data, and buffer
// rotation so a working set is a multiple of the last-level cache.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lab/device.hpp"
#include "lab/types.hpp"

namespace lab {

// A sweep parameter from any arithmetic value: param("n", n) (braces would refuse size_t -> double).
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
Param param(const std::string& name, T value) {
    return {name, static_cast<double>(value)};
}

// ---- Bytes per element -------------------------------------------------------------------

// A block-scaled format: `block` elements share one scale of `scale_bytes`.
struct BlockScale {
    int block = 0;
    double scale_bytes = 0;
};

// MXFP4 (OCP Microscaling): 32 FP4 E2M1 elements share an E8M0 scale byte. NVFP4: 16 FP4 E2M1
// elements share an FP8 E4M3 scale byte (plus one fp32 per tensor, not counted per element).
inline std::optional<BlockScale> block_scale(Dtype d) {
    if (d == Dtype::mxfp4) return BlockScale{32, 1};
    if (d == Dtype::nvfp4) return BlockScale{16, 1};
    return std::nullopt;
}

// Bits of one element's value, scales excluded.
inline int bits_per_value(Dtype d) {
    switch (d) {
        case Dtype::fp64: return 64;
        case Dtype::fp32: case Dtype::tf32: return 32;  // tf32 is stored as fp32
        case Dtype::fp16: case Dtype::bf16: return 16;
        case Dtype::fp8_e4m3: case Dtype::fp8_e5m2: case Dtype::int8: return 8;
        case Dtype::int4: case Dtype::mxfp4: case Dtype::nvfp4: return 4;
    }
    return 0;
}

// Bytes per element averaged over a block, scales included: fp16 2, int4 0.5, MXFP4 0.53125
// (4.25 bits), NVFP4 0.5625 (4.5 bits).
inline double bytes_per_element(Dtype d) {
    double b = bits_per_value(d) / 8.0;
    if (auto s = block_scale(d)) b += s->scale_bytes / s->block;
    return b;
}

// Exact bytes of n elements stored in `d`: whole bytes of packed values plus one scale per
// (possibly partial) block.
inline double storage_bytes(Dtype d, double n) {
    double b = std::ceil(n * bits_per_value(d) / 8.0);
    if (auto s = block_scale(d)) b += std::ceil(n / s->block) * s->scale_bytes;
    return b;
}

// ---- FLOP and minimum traffic --------------------------------------------------------------

struct Counts {
    double flops = 0;
    double bytes = 0;
    double ai() const { return bytes > 0 ? flops / bytes : INFINITY; }
};

// C[m,n] = A[m,k] B[k,n] (+ C when `accumulate`): 2mnk FLOP; A and B read once and C written
// once (and read when accumulating): the minimum traffic, which a large GEMM approaches.
inline Counts gemm_counts(double m, double n, double k, Dtype in, Dtype out, bool accumulate = false) {
    Counts c;
    c.flops = 2 * m * n * k;
    c.bytes = storage_bytes(in, m * k) + storage_bytes(in, k * n) + storage_bytes(out, m * n) * (accumulate ? 2 : 1);
    return c;
}

// y[m] = W[m,n] x[n], for `batch` vectors at once: 2mn FLOP per vector; W read once (it is what
// decode pays for), x read and y written per vector.
inline Counts gemv_counts(double m, double n, Dtype weights, Dtype activations, double batch = 1) {
    Counts c;
    c.flops = 2 * m * n * batch;
    c.bytes = storage_bytes(weights, m * n) + batch * (storage_bytes(activations, n) + storage_bytes(activations, m));
    return c;
}

// ---- Sweeps ------------------------------------------------------------------------------------

// from, from*step, ... up to `to` (inclusive within rounding), step > 1.
inline std::vector<double> geometric_sweep(double from, double to, double step) {
    std::vector<double> v;
    if (!(from > 0) || !(step > 1)) return v;
    for (double x = from; x <= to * (1 + 1e-9); x *= step) v.push_back(x);
    return v;
}

// Where a rising curve flattens (FLOP/s against AI, bandwidth against working-set size): the
// plateau is the largest y; the first point within `tolerance` of it is the first on the plateau;
// the knee is where the rising part, extended (a straight line on log-log axes through the two
// points before the plateau), meets the plateau, kept between the points around it. With one
// point before the plateau, the knee is interpolated on a log x axis. nullopt with fewer than two
// points, or when the first point is already on the plateau (the knee is left of the sweep).
struct Knee {
    double x = 0;        // where the curve meets the plateau
    double plateau = 0;  // the largest y
    std::size_t index = 0;  // the first measured point on the plateau
};
inline std::optional<Knee> find_knee(const std::vector<double>& xs, const std::vector<double>& ys, double tolerance = 0.1) {
    if (xs.size() != ys.size() || xs.size() < 2) return std::nullopt;
    const double plateau = *std::max_element(ys.begin(), ys.end());
    const double level = (1 - tolerance) * plateau;
    std::size_t i = 0;
    while (i < ys.size() && ys[i] < level) ++i;
    if (i == 0 || !(plateau > 0)) return std::nullopt;
    const double lx0 = std::log(xs[i - 1]), lx1 = std::log(xs[i]);
    double x = std::exp(lx0 + (level - ys[i - 1]) / (ys[i] - ys[i - 1]) * (lx1 - lx0));
    if (i >= 2 && ys[i - 2] > 0 && ys[i - 1] > ys[i - 2]) {
        const double slope = (std::log(ys[i - 1]) - std::log(ys[i - 2])) / (lx0 - std::log(xs[i - 2]));
        if (slope > 0) x = std::exp(lx0 + (std::log(plateau) - std::log(ys[i - 1])) / slope);
    }
    return Knee{std::clamp(x, xs[i - 1], xs[i]), plateau, i};
}

// Where curve a stops being below (or above) curve b: the first sign change of a - b,
// interpolated on a log x axis. nullopt when they never cross within the sweep.
inline std::optional<double> find_crossover(const std::vector<double>& xs, const std::vector<double>& a,
                                            const std::vector<double>& b) {
    if (xs.size() != a.size() || xs.size() != b.size()) return std::nullopt;
    for (std::size_t i = 1; i < xs.size(); ++i) {
        const double d0 = a[i - 1] - b[i - 1], d1 = a[i] - b[i];
        if (d0 == 0) return xs[i - 1];
        if ((d0 < 0) == (d1 < 0) && d1 != 0) continue;
        const double f = d0 / (d0 - d1);
        return std::exp(std::log(xs[i - 1]) + f * (std::log(xs[i]) - std::log(xs[i - 1])));
    }
    return std::nullopt;
}

// ---- Working sets past the caches --------------------------------------------------------

// How many copies of a `bytes`-sized operand a hot loop must rotate through so that consecutive
// invocations touch at least `factor` x the last-level cache: nothing of the previous
// invocations is left in cache when one starts (at least 1).
inline std::size_t rotation_copies(std::size_t bytes, std::size_t last_level_cache, double factor = 4) {
    if (bytes == 0) return 1;
    const double need = factor * static_cast<double>(last_level_cache) / static_cast<double>(bytes);
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(need)));
}

// One Launch that runs the given launches in turn, one per invocation: with one launch per
// rotated copy of the operands, each invocation reads data the last ones did not.
inline Launch rotating(std::vector<Launch> launches) {
    auto next = std::make_shared<std::size_t>(0);
    return [launches = std::move(launches), next](Stream& s) { launches[(*next)++ % launches.size()](s); };
}

}  // namespace lab
