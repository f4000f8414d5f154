// The one definition of arithmetic intensity, roof, ridge and regimes (DESIGN.md, "Roofline and
// regimes"), used by lessons, the host, plots and the grader alike. Header-only so that a lesson's
// derivation and the grader's recomputation run the very same code.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace lab::roofline {

// Named thresholds; every run record carries them (see thresholds_json in the host).
// A kernel whose time per invocation is within this factor of the measured launch (dispatch)
// cost spends most of its time being launched: overhead bound.
inline constexpr double kOverheadLaunchFactor = 2.0;
// Batch-doubling test: doubling the work raises the time by less than this factor -> overhead.
inline constexpr double kDoublingRatioMax = 1.2;
// A kernel achieving at least this fraction of a roof is bound by that roof; one reaching less of
// every roof is latency bound (dependent chains, too little parallelism, poor access patterns).
inline constexpr double kSubstantialRoofFraction = 0.3;

enum class Regime { compute_bound, memory_bound, overhead_bound, latency_bound };

inline const char* to_string(Regime r) {
    switch (r) {
        case Regime::compute_bound: return "compute_bound";
        case Regime::memory_bound: return "memory_bound";
        case Regime::overhead_bound: return "overhead_bound";
        case Regime::latency_bound: return "latency_bound";
    }
    return "?";
}

// Parses a regime as a student may write it: "bandwidth bound" and "bandwidth_bound" mean
// memory_bound; case, spaces and hyphens do not matter.
inline std::optional<Regime> parse_regime(std::string s) {
    std::string n;
    for (char c : s) {
        if (c == ' ' || c == '-') c = '_';
        n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (n == "compute_bound" || n == "compute") return Regime::compute_bound;
    if (n == "memory_bound" || n == "memory" || n == "bandwidth_bound" || n == "bandwidth" ||
        n == "memory_bandwidth_bound")
        return Regime::memory_bound;
    if (n == "overhead_bound" || n == "overhead") return Regime::overhead_bound;
    if (n == "latency_bound" || n == "latency") return Regime::latency_bound;
    return std::nullopt;
}

// AI = flops / bytes (bytes: minimum traffic to the modelled level). Infinite when no bytes move.
inline double arithmetic_intensity(double flops, double bytes) {
    if (bytes <= 0) return std::numeric_limits<double>::infinity();
    return flops / bytes;
}

// roof(AI) = min(peak_flops, AI * peak_bandwidth)
inline double roof(double ai, double peak_flops, double peak_bandwidth) {
    if (std::isinf(ai)) return peak_flops;
    return std::min(peak_flops, ai * peak_bandwidth);
}

// ridge = peak_flops / peak_bandwidth: the AI where the two roofs meet.
inline double ridge(double peak_flops, double peak_bandwidth) {
    return peak_bandwidth > 0 ? peak_flops / peak_bandwidth : std::numeric_limits<double>::infinity();
}

// Before running, from counts alone.
inline Regime predicted_regime(double ai, double ridge_point) {
    return ai < ridge_point ? Regime::memory_bound : Regime::compute_bound;
}

// Everything derived from one workload's counts, its time and the device's ceilings.
struct Placement {
    double flops_per_s = 0;        // achieved
    double bytes_per_s = 0;        // achieved
    double ai = 0;
    double compute_fraction = 0;   // achieved FLOP/s / peak FLOP/s of the workload's pipe
    double memory_fraction = 0;    // achieved B/s / peak bandwidth
    double roof_fraction = 0;      // achieved / roof(AI) = max of the two fractions
    double ridge = 0;
    Regime predicted = Regime::memory_bound;
    Regime measured = Regime::latency_bound;
    std::optional<double> doubling_ratio;  // time(2x work) / time(1x), when measured
};

// measured_regime, in the order DESIGN.md states it:
//  1. overhead_bound when the time per invocation is within kOverheadLaunchFactor of the launch
//     cost, or the batch-doubling ratio is below kDoublingRatioMax;
//  2. else memory_bound or compute_bound by the larger roof fraction, when it is at least
//     kSubstantialRoofFraction;
//  3. else latency_bound.
inline Regime measured_regime(double seconds_per_invocation, double launch_s,
                              std::optional<double> doubling_ratio, double compute_fraction,
                              double memory_fraction) {
    if (launch_s > 0 && seconds_per_invocation <= kOverheadLaunchFactor * launch_s)
        return Regime::overhead_bound;
    if (doubling_ratio && *doubling_ratio < kDoublingRatioMax) return Regime::overhead_bound;
    double best = std::max(compute_fraction, memory_fraction);
    if (best >= kSubstantialRoofFraction)
        return compute_fraction >= memory_fraction ? Regime::compute_bound : Regime::memory_bound;
    return Regime::latency_bound;
}

inline Placement place(double flops, double bytes, double seconds_per_invocation,
                       double peak_flops, double peak_bandwidth, double launch_s,
                       std::optional<double> doubling_ratio = std::nullopt) {
    Placement p;
    double t = seconds_per_invocation;
    p.flops_per_s = t > 0 ? flops / t : 0;
    p.bytes_per_s = t > 0 ? bytes / t : 0;
    p.ai = arithmetic_intensity(flops, bytes);
    p.compute_fraction = peak_flops > 0 ? p.flops_per_s / peak_flops : 0;
    p.memory_fraction = peak_bandwidth > 0 ? p.bytes_per_s / peak_bandwidth : 0;
    p.roof_fraction = std::max(p.compute_fraction, p.memory_fraction);
    p.ridge = ridge(peak_flops, peak_bandwidth);
    p.predicted = predicted_regime(p.ai, p.ridge);
    p.doubling_ratio = doubling_ratio;
    p.measured = measured_regime(t, launch_s, doubling_ratio, p.compute_fraction, p.memory_fraction);
    return p;
}

}  // namespace lab::roofline
