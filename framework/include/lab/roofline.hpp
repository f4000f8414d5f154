// The one definition of arithmetic intensity, roof, ridge and regimes (DESIGN.md, "Roofline and
// regimes"), used by lessons, the host, plots and the grader alike. Header-only so that a lesson's
// derivation and the grader's recomputation run the very same code.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <cstdio>
#include <string>
#include <vector>

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

// How sure a verdict must be: a test (say "at least 30% of a roof") is decided only when the
// measured value stays on one side of its threshold by this many standard errors.
inline constexpr double kDecisionSigmas = 2.0;
// The smallest relative uncertainty any measured quantity is given: even a perfectly quiet
// median carries a few percent of systematic doubt (clock drift, a neighbour's cache use).
inline constexpr double kMinRelativeError = 0.03;
// Other processes using at least this many CPUs make a measurement "under load" (the host's
// machine_load.hpp measures it; a run's notes and a verdict's doubt follow it).
inline constexpr double kLoadedMachineCpus = 0.3;
// A workload may beat its roof by this factor before the run re-measures the ceiling: the
// stated margin of DESIGN.md ("no record holds a roof fraction above 1.10").
inline constexpr double kRoofMargin = 1.10;

enum class Regime { compute_bound, memory_bound, overhead_bound, latency_bound, undecided };

inline const char* to_string(Regime r) {
    switch (r) {
        case Regime::compute_bound: return "compute_bound";
        case Regime::memory_bound: return "memory_bound";
        case Regime::overhead_bound: return "overhead_bound";
        case Regime::latency_bound: return "latency_bound";
        case Regime::undecided: return "undecided";
    }
    return "?";
}

// Parses a regime as a student may write it: "bandwidth bound" and "bandwidth_bound" mean
// memory_bound; case, spaces and hyphens do not matter; "limited" reads as "bound" (NVIDIA's
// performance guides write "math limited" and "memory limited"); the memory a kernel waits on may
// be named ("DRAM bound", "HBM bound", "mem bound"), compute may be called math, FLOP or
// arithmetic, overhead launch or host, and a side of the ridge ("left of the ridge") names its regime.
inline std::optional<Regime> parse_regime(std::string s) {
    std::string n;
    for (char c : s) {
        if (c == ' ' || c == '-') c = '_';
        if (c == '_' && !n.empty() && n.back() == '_') continue;
        n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (const std::string limited = "_limited"; n.size() > limited.size() && n.ends_with(limited))
        n = n.substr(0, n.size() - limited.size()) + "_bound";
    for (const char* w : {"compute", "math", "flop", "flops", "arithmetic"})
        if (n == w || n == std::string(w) + "_bound") return Regime::compute_bound;
    for (const char* w : {"memory", "mem", "dram", "hbm", "bandwidth", "memory_bandwidth"})
        if (n == w || n == std::string(w) + "_bound") return Regime::memory_bound;
    // Launch-bound (and host-bound, as PyTorch's guides say it) is the overhead of starting work.
    for (const char* w : {"overhead", "launch", "launch_overhead", "host"})
        if (n == w || n == std::string(w) + "_bound" || n == std::string(w) + "_dominated") return Regime::overhead_bound;
    if (n == "latency_bound" || n == "latency") return Regime::latency_bound;
    // The roofline's sides, as 02.05's prompts name them: left of the ridge is memory-bound.
    for (const char* w : {"", "_side", "_of_ridge", "_of_the_ridge", "_side_of_the_ridge", "_of_the_ridge_point"}) {
        if (n == std::string("left") + w) return Regime::memory_bound;
        if (n == std::string("right") + w) return Regime::compute_bound;
    }
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

// A measured quantity with its relative standard error.
struct Uncertain {
    double value = 0;
    double rel_err = kMinRelativeError;
};

// The doubt a comparison of two times measured at different moments carries beyond their
// samples' noise (the batch-doubling ratio):
//  - beside other work (other processes using `others_cpus` of the `cpus` a CPU device may run
//    on, as the host's load meter counts them over the same CPUs), each
//    moment's share of the CPUs differs: a busy 2-CPU VM gave ratios from 0.54 to 3.4 for kernels
//    whose time doubles on a quiet one. The share of the machine the others used is taken as the
//    relative doubt (loads under kLoadedMachineCpus, or unknown: none).
//  - twice the work cannot take less time: a ratio r below 1 is wrong by at least 1/r - 1.
// The two add in quadrature with the samples' own error.
inline double comparison_rel_err(double samples_rel_err, double ratio, double others_cpus, int cpus) {
    double busy = 0;
    if (cpus > 0 && others_cpus >= kLoadedMachineCpus) busy = std::min(1.0, others_cpus / cpus);
    const double impossible = ratio > 0 && ratio < 1 ? 1 / ratio - 1 : 0;
    return std::sqrt(samples_rel_err * samples_rel_err + busy * busy + impossible * impossible);
}

// The relative standard error of a median of `samples` samples whose relative standard
// deviation is `noise` (1.25 sigma / sqrt(n) for a normal distribution), at least
// kMinRelativeError. Unknown sample counts (0) get a generous 10%.
inline double median_rel_err(double noise, int samples) {
    if (samples <= 0) return 0.10;
    return std::max(kMinRelativeError, 1.25 * noise / std::sqrt(static_cast<double>(samples)));
}

// The measured regime, as a verdict: a regime, or `undecided` between two named candidates
// with the reason.
struct Verdict {
    Regime regime = Regime::latency_bound;
    Regime first = Regime::latency_bound, second = Regime::latency_bound;  // candidates when undecided
    std::string reason;  // why it is undecided ("" when decided)
};

// "compute_bound", or "undecided: compute_bound or latency_bound" (the metric text).
inline std::string to_text(const Verdict& v) {
    if (v.regime != Regime::undecided) return to_string(v.regime);
    return std::string("undecided: ") + to_string(v.first) + " or " + to_string(v.second);
}

// The candidates of a verdict text: one regime, or the two named by "undecided: A or B".
inline std::vector<Regime> regimes_in(const std::string& text) {
    const std::string prefix = "undecided: ";
    if (text.rfind(prefix, 0) != 0) {
        auto r = parse_regime(text);
        return r ? std::vector<Regime>{*r} : std::vector<Regime>{};
    }
    std::string rest = text.substr(prefix.size());
    std::size_t sep = rest.find(" or ");
    if (sep == std::string::npos) return {};
    std::vector<Regime> out;
    for (const std::string& part : {rest.substr(0, sep), rest.substr(sep + 4)})
        if (auto r = parse_regime(part)) out.push_back(*r);
    return out;
}

// What the measured regime is decided from (DESIGN.md, "Roofline and regimes"). The fractions
// are of the ceilings measured closest in time to the workload (its references, when the run
// measured them), so a machine that is busy slows the workload and its roof alike.
struct VerdictInputs {
    Uncertain time;                       // s per invocation
    Uncertain launch;                     // s, the dispatch cost of an empty kernel
    std::optional<Uncertain> doubling;    // time(2x work) / time(1x work)
    Uncertain compute_fraction;           // achieved FLOP/s / peak FLOP/s of the pipe
    Uncertain memory_fraction;            // achieved B/s / peak bandwidth
};

// The verdict, in the order DESIGN.md states it:
//  1. overhead_bound when the time per invocation is within kOverheadLaunchFactor of the launch
//     cost, or the batch-doubling ratio is below kDoublingRatioMax;
//  2. else memory_bound or compute_bound by the larger roof fraction, when it is at least
//     kSubstantialRoofFraction;
//  3. else latency_bound.
// Each comparison is made with the quantities' uncertainties: it is decided when the value lies
// kDecisionSigmas standard errors clear of its threshold. When one is not, the verdict is
// `undecided` between the regime its central value gives and the one the other side gives,
// unless both sides give the same regime.
inline Verdict decide_regime(const VerdictInputs& in) {
    struct Test {
        const char* what;
        double ratio;    // value / threshold: the test is true below 1 (or above, see `above`)
        double rel_err;
        bool above;      // true: the test holds when ratio >= 1
    };
    auto combined = [](double a, double b) { return std::sqrt(a * a + b * b); };
    std::vector<Test> tests;
    const double l = in.launch.value > 0 ? in.time.value / (kOverheadLaunchFactor * in.launch.value) : 1e300;
    tests.push_back({"time per invocation against twice the launch cost", l,
                     combined(in.time.rel_err, in.launch.rel_err), false});
    tests.push_back({"the batch-doubling ratio against 1.2",
                     in.doubling ? in.doubling->value / kDoublingRatioMax : 1e300,
                     in.doubling ? in.doubling->rel_err : 0, false});
    const bool compute_larger = in.compute_fraction.value >= in.memory_fraction.value;
    const Uncertain& best = compute_larger ? in.compute_fraction : in.memory_fraction;
    tests.push_back({"the larger roof fraction against 30%", best.value / kSubstantialRoofFraction, best.rel_err, true});
    tests.push_back({"the compute roof fraction against the memory one",
                     in.memory_fraction.value > 0 ? in.compute_fraction.value / in.memory_fraction.value : 1e300,
                     combined(in.compute_fraction.rel_err, in.memory_fraction.rel_err), true});

    // Each test's central outcome, and whether it is decided.
    auto holds = [](const Test& t) { return t.above ? t.ratio >= 1 : t.ratio < 1; };
    auto decided = [](const Test& t) {
        double margin = kDecisionSigmas * t.rel_err;
        return !(t.ratio > 1 / (1 + margin) && t.ratio < 1 + margin);
    };
    auto outcome = [](const std::vector<bool>& h) {
        if (h[0] || h[1]) return Regime::overhead_bound;
        if (h[2]) return h[3] ? Regime::compute_bound : Regime::memory_bound;
        return Regime::latency_bound;
    };
    std::vector<bool> central;
    for (const auto& t : tests) central.push_back(holds(t));
    Verdict v;
    v.regime = outcome(central);
    // The undecided test closest to its threshold (in standard errors) that changes the outcome.
    // The doubling test (index 1) only when no other is open: its doubt holds the machine's load,
    // which a busy machine makes wide, and it would otherwise take the place of a roof test a
    // student weighs from the same table (compute_bound or memory_bound).
    int pick = -1;
    double closest = 1e300;
    auto consider = [&](std::size_t i) {
        if (decided(tests[i])) return;
        std::vector<bool> flipped = central;
        flipped[i] = !flipped[i];
        if (outcome(flipped) == v.regime) return;
        double distance = std::fabs(std::log(tests[i].ratio)) / std::max(1e-9, std::log1p(tests[i].rel_err));
        if (distance < closest) closest = distance, pick = static_cast<int>(i);
    };
    for (std::size_t i = 0; i < tests.size(); ++i)
        if (i != 1) consider(i);
    if (pick < 0) consider(1);
    if (pick >= 0) {
        std::vector<bool> flipped = central;
        flipped[pick] = !flipped[pick];
        v.first = v.regime;
        v.second = outcome(flipped);
        v.regime = Regime::undecided;
        char buf[96];
        // The doubling ratio's doubt is more than its samples' noise (comparison_rel_err).
        std::snprintf(buf, sizeof buf, pick == 1 ? " is %.2f of its threshold, within its doubt (noise, load; ±%.0f%%)"
                                                 : " is %.2f of its threshold, within its noise (±%.0f%%)",
                      tests[pick].ratio, 100 * kDecisionSigmas * tests[pick].rel_err);
        v.reason = std::string(tests[pick].what) + buf;
    }
    return v;
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
    Verdict measured;
    std::optional<double> doubling_ratio;  // time(2x work) / time(1x), when measured
    double doubling_rel_err = 0;           // its relative uncertainty, as the verdict weighed it
};

// The ceilings one workload is placed against: the device's (the roofline everyone sees) and,
// for the verdict, the ones measured closest in time to it, each with its uncertainty.
struct PlacementCeilings {
    double peak_flops = 0;         // of the workload's pipe
    double peak_bandwidth = 0;     // of its memory level
    Uncertain local_flops;         // for the verdict (value 0: use peak_flops)
    Uncertain local_bandwidth;     // (value 0: use peak_bandwidth)
    Uncertain launch;              // dispatch cost
};

inline Placement place(double flops, double bytes, Uncertain time, const PlacementCeilings& c,
                       std::optional<Uncertain> doubling = std::nullopt) {
    Placement p;
    double t = time.value;
    p.flops_per_s = t > 0 ? flops / t : 0;
    p.bytes_per_s = t > 0 ? bytes / t : 0;
    p.ai = arithmetic_intensity(flops, bytes);
    p.compute_fraction = c.peak_flops > 0 ? p.flops_per_s / c.peak_flops : 0;
    p.memory_fraction = c.peak_bandwidth > 0 ? p.bytes_per_s / c.peak_bandwidth : 0;
    p.roof_fraction = std::max(p.compute_fraction, p.memory_fraction);
    p.ridge = ridge(c.peak_flops, c.peak_bandwidth);
    p.predicted = predicted_regime(p.ai, p.ridge);
    if (doubling) p.doubling_ratio = doubling->value, p.doubling_rel_err = doubling->rel_err;

    auto fraction = [&](double achieved, Uncertain local, double peak, double peak_err) {
        Uncertain f;
        double roof = local.value > 0 ? local.value : peak;
        f.value = roof > 0 ? achieved / roof : 0;
        f.rel_err = std::sqrt(time.rel_err * time.rel_err +
                              std::pow(local.value > 0 ? local.rel_err : peak_err, 2));
        return f;
    };
    VerdictInputs in;
    in.time = time;
    in.launch = c.launch;
    in.doubling = doubling;
    in.compute_fraction = fraction(p.flops_per_s, c.local_flops, c.peak_flops, kMinRelativeError);
    in.memory_fraction = fraction(p.bytes_per_s, c.local_bandwidth, c.peak_bandwidth, kMinRelativeError);
    p.measured = decide_regime(in);
    return p;
}

// The same placement from plain numbers, every quantity at the smallest uncertainty: for tests
// and for callers without sample statistics.
inline Placement place(double flops, double bytes, double seconds_per_invocation, double peak_flops,
                       double peak_bandwidth, double launch_s, std::optional<double> doubling_ratio = std::nullopt) {
    PlacementCeilings c;
    c.peak_flops = peak_flops;
    c.peak_bandwidth = peak_bandwidth;
    c.launch = {launch_s, kMinRelativeError};
    std::optional<Uncertain> d;
    if (doubling_ratio) d = Uncertain{*doubling_ratio, kMinRelativeError * std::sqrt(2.0)};
    return place(flops, bytes, Uncertain{seconds_per_invocation, kMinRelativeError}, c, d);
}

}  // namespace lab::roofline
