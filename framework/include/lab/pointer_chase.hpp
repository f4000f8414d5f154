// Pointer chasing (opt-in): a random cyclic permutation of equally spaced cache lines, the first
// 8 bytes of each holding the address of the next, so every load depends on the one before and
// no prefetcher can guess it: time per hop is the load-to-use latency of the level the working
// set fits in. Also the plateaus and knees of a latency curve, and the kernels of a memory-
// hierarchy sweep behind one interface, lab::ChaseKernels: lab::cpu::ChaseKernelsCpu
// (cpu_pointer_chase.hpp) and lab::cuda::ChaseKernelsGpu (cuda_pointer_chase.cuh). C++17.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lab/device.hpp"

#if !defined(LAB_HOST_DEVICE)
#if defined(__CUDACC__)
#define LAB_HOST_DEVICE __host__ __device__
#else
#define LAB_HOST_DEVICE
#endif
#endif

namespace lab {

// The kernels of a memory-hierarchy sweep. Counts stay with the lesson: a chase moves one line
// per hop, a read `reps` x n x 4 bytes (x pointer_chase::read_passes on a GPU), a register chain
// none.
struct ChaseKernels {
    static constexpr const char* kInterface = "lab::ChaseKernels/2";  // /2: a read splits a set only past 2x SMs x L1
    virtual ~ChaseKernels() = default;
    // One thread follows `hops` links of a pointer cycle from *cursor (device memory) and leaves
    // *cursor where it stopped: the next invocation goes on around the cycle.
    virtual Launch chase(void** cursor, std::int64_t hops) = 0;
    // Every thread reads its share of a[0, n) `reps` times (a 64-byte aligned array, n a
    // multiple of 16); the sums are kept in the kernels' own sink. On a GPU, a set is read whole
    // by every block unless it has at least as many 16 B elements as the grid's threads and one
    // SM's share of it is over twice the SM's reported L1 (pointer_chase::read_grid, from the
    // device facts; read_passes counts its bytes by the same rule).
    virtual Launch read(const float* a, std::size_t n, std::int64_t reps) = 0;
    // One thread runs a chain of `ops` dependent integer adds in a register.
    virtual Launch register_chain(std::int64_t ops) = 0;
    // GPU only (a CPU's launch throws when run): one thread follows `hops` links of a cycle of
    // kSharedChaseLinks 4-byte links in shared memory.
    virtual Launch shared_chase(std::int64_t hops) = 0;
};
inline constexpr int kSharedChaseLinks = 4096;

namespace pointer_chase {

// ---- The GPU read sweep: who reads what, counted on the host as the kernel walks it -------------
// Host and device code alike (cuda_pointer_chase.cuh's read kernel walks by these), so the bytes a
// lesson declares are the loads the kernel issues.

// The read kernel's grid: kReadBlocksPerSm blocks of kReadThreads threads per SM.
inline constexpr int kReadThreads = 256, kReadBlocksPerSm = 4;
inline int read_blocks(int sms) { return kReadBlocksPerSm * std::max(1, sms); }

// The reported size of the data cache at `level` (0 when none is reported).
inline std::uint64_t reported_cache(const DeviceFacts& f, int level) {
    for (const auto& c : f.caches)
        if (c.level == level && c.type != "Instruction") return c.bytes;
    return 0;
}

// How the read kernel covers a set: decided once, on the host, from the device facts, and passed
// to the kernel, so its walk and the bytes a record states (read_passes) follow the same rule.
struct ReadGrid {
    int blocks = 1;              // of kReadThreads threads
    std::size_t split_from = 0;  // 16 B elements: a set of this many or more is split across the grid
};
// A set is split across the grid only when both hold; otherwise every block reads it whole:
// - the grid's threads do not outnumber its elements (split, a 4 KiB set was one block's on one
//   SM, and small sets read at a fraction of DRAM's speed);
// - one SM's share, set / SMs, is over twice its reported L1. Split, each SM reads only its share,
//   pass after pass: on an H200 the shares of 2-30 MiB sets fit the SMs' L1s, and the curve read
//   L1 -> L2 -> L1 -> L2 -> HBM. Twice, as the L1/shared array can be larger than the reported L1
//   (256 KiB against 228 on an H200) and a cyclic walk over about its capacity still hits some.
// Without a reported L1 (0), the threads alone.
inline std::size_t read_split_from(int blocks, int sms, std::uint64_t l1_bytes) {
    const std::size_t by_threads = std::size_t(std::max(1, blocks)) * kReadThreads;
    // The fewest elements n4 with 16 x n4 > 2 x L1 x SMs.
    const std::size_t by_l1 = l1_bytes ? 2 * std::size_t(l1_bytes) * std::size_t(std::max(1, sms)) / 16 + 1 : 0;
    return std::max(by_threads, by_l1);
}
inline ReadGrid read_grid(const DeviceFacts& f) {
    const int blocks = read_blocks(f.compute_units);
    return {blocks, read_split_from(blocks, f.compute_units, reported_cache(f, 1))};
}

// Whether every block walks the whole set of n4 16-byte elements (read_split_from says when not).
LAB_HOST_DEVICE inline bool read_whole_per_block(std::size_t n4, std::size_t split_from) { return n4 < split_from; }
// One thread's share of one pass: elements start, start + step, ... below n4.
struct ReadWalk {
    std::size_t start = 0, step = 1, n4 = 0;
};
LAB_HOST_DEVICE inline ReadWalk read_walk(std::size_t n4, std::size_t split_from, unsigned blocks, unsigned threads, unsigned block,
                                          unsigned thread) {
    if (read_whole_per_block(n4, split_from)) return {thread, threads, n4};  // the block's own pass
    return {std::size_t{block} * threads + thread, std::size_t{blocks} * threads, n4};  // a share of the grid's
}
LAB_HOST_DEVICE inline std::size_t read_loads(const ReadWalk& w) { return w.start < w.n4 ? (w.n4 - 1 - w.start) / w.step + 1 : 0; }
// The element after i in the thread's walk, back to its first after its last (the next pass).
LAB_HOST_DEVICE inline std::size_t read_next(const ReadWalk& w, std::size_t i) { return i + w.step < w.n4 ? i + w.step : w.start; }
// A thread's `reps` passes, as one run of loads four at a time: `load(i)` reads element i and
// `add(v)` takes its value. The four loads are issued before their values are used, so even a
// thread with one element per pass (a 4 KiB set) has four 16-byte loads in flight, the next
// pass's among them.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class Load, class Add>
LAB_HOST_DEVICE inline void walk_reads(const ReadWalk& w, long long reps, Load&& load, Add&& add) {
    const long long total = reps * static_cast<long long>(read_loads(w));
    std::size_t i = w.start;
    long long k = 0;
    for (; k + 4 <= total; k += 4) {
        const std::size_t i1 = read_next(w, i), i2 = read_next(w, i1), i3 = read_next(w, i2);
        const auto v0 = load(i), v1 = load(i1), v2 = load(i2), v3 = load(i3);
        add(v0), add(v1), add(v2), add(v3);
        i = read_next(w, i3);
    }
    for (; k < total; ++k, i = read_next(w, i)) add(load(i));
}
// How many times one rep reads the whole set: once when split across the grid, once per block
// when every block walks it. The bytes a read states are reps x set x this.
inline std::int64_t read_passes(std::size_t n4, const ReadGrid& g) { return read_whole_per_block(n4, g.split_from) ? g.blocks : 1; }

// The memory level ("l1", "l2", "l3" or "dram") a working set fits in, per the reported data
// caches: each instance's size times the instances `units` reach (a CPU's threads, a GPU's SMs,
// as the facts count shared_by).
inline std::string level_of(std::size_t bytes, const DeviceFacts& f, int units) {
    static const char* const names[] = {"l1", "l2", "l3"};
    for (int l = 1; l <= 3; ++l)
        for (const auto& c : f.caches)
            if (c.level == l && c.type != "Instruction" &&
                bytes <= c.bytes * static_cast<std::size_t>(std::max(1, units / std::max(1, c.shared_by))))
                return names[l - 1];
    return "dram";
}
// A read's level: past the caches, "dram" only from 4x the last-level cache, as find_levels reads
// the chase's DRAM. A set between, read over and over, still partly hits the last-level cache (a
// 64 MiB set over a 50 MiB L2), and as "dram" it could raise the run's DRAM roof above what DRAM
// gives; "cache" is held to no roof and raises none.
inline std::string read_level(std::size_t bytes, const DeviceFacts& f, int units) {
    const std::string l = level_of(bytes, f, units);
    return l == "dram" && bytes < 4 * f.last_level_cache_bytes() ? "cache" : l;
}
// A read sweep's point: `reps` reads of a `bytes` set (ChaseKernels::read). On a GPU, a set is
// read whole by every block unless the grid's threads do not outnumber it and one SM's share is
// over twice its L1 (read_grid). Read whole, its bytes are every block's, the SMs' caches
// together, and its level where one SM's copy fits; on a GPU its passes are a parameter (a CPU's
// records, one pass, have none).
inline Workload read_workload(const Device& dev, const std::string& name, std::size_t bytes, std::int64_t reps, double max_time_s) {
    const bool gpu = dev.kind() == DeviceKind::cuda;
    const std::int64_t passes = gpu ? read_passes(bytes / 16, read_grid(dev.facts())) : 1;
    Workload w;
    w.name = name;
    w.description = passes > 1 ? "every block reads all of it, " + std::to_string(reps) + " times (" + std::to_string(passes) +
                                     " blocks: the SMs' caches together; a set is split across the grid only when it has "
                                     "as many 16 B elements as the grid has threads, or more, and one SM's share is over twice its L1)"
                               : "every thread reads its share, " + std::to_string(reps) + " times";
    w.params = {{"bytes", double(bytes)}, {"reps", double(reps)}};
    if (gpu) w.params.push_back({"passes", double(passes)});
    w.bytes = 1.0 * reps * bytes * passes;  // its adds are not the point: no FLOP stated
    w.level = read_level(bytes, dev.facts(), !gpu ? dev.threads() : passes > 1 ? 1 : dev.facts().compute_units);
    w.max_time_s = max_time_s;
    return w;
}
// Whether a recorded read states the bytes its kernel loads: reps x set x passes (a GPU's record
// states its passes; a CPU's is one).
inline bool read_bytes_stated(const Workload& w, DeviceKind kind) {
    const bool has_passes = std::any_of(w.params.begin(), w.params.end(), [](const Param& p) { return p.name == "passes"; });
    const double passes = kind == DeviceKind::cuda ? (has_passes ? w.param("passes") : 0) : 1;
    return w.bytes == w.param("bytes") * w.param("reps") * passes;
}

// splitmix64: a fixed generator, so a cycle is the same on every machine and library.
inline std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The order in which a chase visits `lines` lines: line 0 first, then a uniformly random
// permutation of the others (Fisher-Yates); the last returns to line 0. One cycle through all.
inline std::vector<std::uint32_t> cycle_order(std::size_t lines, std::uint64_t seed) {
    std::vector<std::uint32_t> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    for (std::size_t i = lines; i-- > 2;) std::swap(order[i], order[1 + next_random(seed) % i]);
    return order;
}

// Writes the cycle into `host` (lines x stride bytes): line order[k] holds base + order[k+1] *
// stride, the address the chase finds there (on a GPU, `base` is the device buffer `host` is
// copied to; on a CPU both are the same). The chase starts at `base`.
inline void write_cycle(void* host, std::uintptr_t base, std::size_t lines, std::size_t stride, std::uint64_t seed) {
    const std::vector<std::uint32_t> order = cycle_order(lines, seed);
    auto* bytes = static_cast<unsigned char*>(host);
    for (std::size_t k = 0; k < lines; ++k) {
        const std::uintptr_t to = base + order[(k + 1) % lines] * stride;
        *reinterpret_cast<std::uintptr_t*>(bytes + order[k] * stride) = to;
    }
}

// Puts a cycle of `lines` lines `stride` bytes apart in `buf` and the cursor at its start. On a
// GPU the cycle is written in `staging` (pinned host memory, at least lines x stride bytes) and
// copied; on a CPU (`staging` null) it is written in place. A copy from pinned memory is
// asynchronous: the staging buffer is reused for the cursor only once the cycle's copy is done
// (written at once, the cursor landed in line 0's link before the copy engine read it: line 0
// pointed at itself, and every chase timed an L1 hit).
inline void place_cycle(Device& dev, Buffer& buf, Buffer& cursor, Buffer* staging, std::size_t lines, std::size_t stride,
                        std::uint64_t seed) {
    void* start = buf.data();
    void* host = staging ? staging->data() : buf.data();
    write_cycle(host, reinterpret_cast<std::uintptr_t>(start), lines, stride, seed);
    if (!staging) {
        std::memcpy(cursor.data(), &start, sizeof start);
        return;
    }
    dev.copy(dev.stream(), buf.data(), host, lines * stride);
    dev.stream().synchronize();
    std::memcpy(host, &start, sizeof start);
    dev.copy(dev.stream(), cursor.data(), host, sizeof start);
    dev.stream().synchronize();
}

// Follows `hops` links from `p` on the calling thread and returns where it stopped.
inline const void* follow(const void* p, std::int64_t hops) {
    for (std::int64_t h = 0; h < hops; ++h) p = *static_cast<const void* const*>(p);
    return p;
}

// ---- Levels from a latency curve (latency per hop against working set, in size order) ----------

// A plateau: at least two consecutive points within `tolerance` (0.25 = 25%, either way) of its
// first point; its latency is the median of its points (the lower one of an even count: noise
// from other work and TLB misses only ever add time, so of two middle points the lower is the
// nearer the level's own latency). Adjacent plateaus within `tolerance` of each other are merged.
struct Plateau {
    std::size_t first = 0, last = 0;  // indices of its first and last point
    double latency = 0;
};
// The lower median of latency[first, last] (see Plateau); the upper with `upper`.
inline double lower_median(const std::vector<double>& latency, std::size_t first, std::size_t last, bool upper = false) {
    std::vector<double> v(latency.begin() + static_cast<std::ptrdiff_t>(first), latency.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(upper ? v.size() / 2 : (v.size() - 1) / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}
inline std::vector<Plateau> plateaus(const std::vector<double>& latency, double tolerance) {
    std::vector<Plateau> out;
    for (std::size_t i = 0; i < latency.size();) {
        std::size_t j = i;
        while (j + 1 < latency.size() && std::fabs(std::log(latency[j + 1] / latency[i])) <= std::log(1 + tolerance)) ++j;
        if (j > i) out.push_back({i, j, lower_median(latency, i, j)});
        i = j + 1;
    }
    // A slow climb splits one level into adjacent runs: adjacent plateaus whose latencies are
    // within `tolerance` of each other are one (its latency the median of all their points). Which
    // runs are one is judged on their upper medians: a climb's lower halves sit further apart.
    for (std::size_t k = 1; k < out.size();) {
        const double a = lower_median(latency, out[k - 1].first, out[k - 1].last, true), b = lower_median(latency, out[k].first, out[k].last, true);
        if (out[k].first != out[k - 1].last + 1 || std::fabs(std::log(b / a)) > std::log(1 + tolerance)) {
            ++k;
            continue;
        }
        const std::size_t first = out[k - 1].first, last = out[k].last;
        out[k - 1] = {first, last, lower_median(latency, first, last)};
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return out;
}

// The points at working sets of `from` bytes or more (`size` ascending), taken as one plateau at
// their median (the lower one of an even count, as a plateau's: a --quick run has two points past
// 4x the LLC, and the larger is the slower from TLB misses or noise, which only add time): a level
// read where it must be, such as DRAM past 4x the last-level cache, however its latency climbs
// there. nullopt with fewer than two points.
inline std::optional<Plateau> shelf_from(const std::vector<double>& size, const std::vector<double>& latency, double from) {
    std::size_t first = 0;
    while (first < size.size() && size[first] < from) ++first;
    if (size.size() != latency.size() || size.size() - first < 2) return std::nullopt;
    return Plateau{first, size.size() - 1, lower_median(latency, first, size.size() - 1)};
}

// A level's capacity: from the last point of its plateau, the working set where the latency first
// reaches the geometric mean of the plateau's latency and the next level's (`next`), interpolated
// on log-log axes; the plateau's last size when it never does.
inline double level_capacity(const std::vector<double>& size, const std::vector<double>& latency, const Plateau& p, double next) {
    const double mid = std::sqrt(p.latency * next);
    for (std::size_t i = p.last; i + 1 < size.size() && i + 1 < latency.size(); ++i)
        if (latency[i + 1] >= mid) {
            const double f = latency[i + 1] > latency[i] ? std::clamp(std::log(mid / latency[i]) / std::log(latency[i + 1] / latency[i]), 0.0, 1.0) : 1.0;
            return std::exp(std::log(size[i]) + f * std::log(size[i + 1] / size[i]));
        }
    return p.last < size.size() ? size[p.last] : 0.0;
}

// The reported cache sizes (bytes per instance; 0: not reported) that guide find_levels.
struct ReportedCaches {
    double l1 = 0, l2 = 0, l3 = 0, llc = 0;
};
// The levels of a latency curve, L1 to DRAM, each a plateau (or one point where it had none).
struct Levels {
    Plateau l1, l2, l3, dram;
    bool l2_plateau = false, l3_plateau = false;  // found as a plateau, not read at a reported size
};
// A level above another is at least this many times its latency: two plateaus nearer than 25% are
// merged (plateaus()), so a step must be clearly more than the spread allowed within one.
inline constexpr double kLevelStep = 1.3;

// How far below DRAM's latency a cache level must be, per device kind. A CPU's caches sit far
// below its DRAM (L2 ~4 ns against ~90 ns): a quarter keeps a slow climb into DRAM from being taken
// for a cache. A GPU's do not: Hopper's L2 hit is ~200-300 cycles against HBM's ~500-700, a ratio
// of 2-3, so a quarter rejected the L2 plateau of nearly every H200-like curve and L2 was read at
// one point; there the general step between levels (kLevelStep) applies.
inline double dram_gap(DeviceKind kind) { return kind == DeviceKind::cpu ? 4.0 : kLevelStep; }

// The levels, by this rule (02.03 states it to students):
// - L1 is the fastest point at working sets up to the reported L1 size: every one of them hits L1,
//   and other work only adds time (on a busy machine they alternate, 1.2 and 1.9 ns, and form no
//   plateau). Its range runs from the smallest set to the last of those points below halfway (log
//   scale) to L2's latency (a GPU's L1 may be smaller than the size it reports). When the device
//   reports no L1 size (or no point fits it), L1 is the first plateau;
// - the plateaus of the curve within 25% (plateaus());
// - DRAM is the points at or past 4x the LLC (shelf_from, two or more), else the last plateau, else the
//   last point alone;
// - L2 is the first plateau with a point past L1's points and before the last, at kLevelStep x L1's
//   latency or more and DRAM's / dram_gap(kind) or less (a quarter on a CPU, DRAM's / kLevelStep on
//   a GPU), with a point in (reported L1, reported L2] (the sizes that fit L2 and not L1: a bump
//   inside L1, or the L3's plateau, is not L2; any point when the sizes are not reported); without
//   one, L2 is read at the largest working set within half its reported size;
// - a CPU: L3 is the longest such plateau after L2 at kLevelStep x L2's latency or more and
//   DRAM's / 4 or less, with a point in (reported L2, reported L3] (of equals, the nearest DRAM);
//   without one, read at the largest working set within twice the reported L2. A GPU has no L3.
// So the levels rise in latency and working set: L1 < L2 < L3 < DRAM, each found one clear of
// the level below where the device says it should be.
inline Levels find_levels(const std::vector<double>& size, const std::vector<double>& latency, const ReportedCaches& r, DeviceKind kind) {
    const bool with_l3 = kind == DeviceKind::cpu;
    Levels out;
    if (latency.empty() || size.size() != latency.size()) return out;
    std::vector<Plateau> ps = plateaus(latency, 0.25);
    const std::size_t n = latency.size();
    if (ps.empty() || ps.back().last + 1 != n) ps.push_back({n - 1, n - 1, latency.back()});
    out.dram = r.llc > 0 ? shelf_from(size, latency, 4 * r.llc).value_or(ps.back()) : ps.back();
    std::size_t in_l1 = 0;  // the points at working sets within the reported L1
    while (r.l1 > 0 && in_l1 < n && size[in_l1] <= r.l1) ++in_l1;
    const std::size_t fastest = in_l1 ? std::size_t(std::min_element(latency.begin(), latency.begin() + std::ptrdiff_t(in_l1)) - latency.begin()) : 0;
    out.l1 = in_l1 ? Plateau{0, in_l1 - 1, latency[fastest]} : ps.front();
    const std::size_t past_l1 = out.l1.last + 1;  // the first point a higher level may hold
    auto at = [&](double target) {
        std::size_t i = 0;
        while (i + 1 < n && size[i + 1] <= target) ++i;
        return Plateau{i, i, latency[i]};
    };
    auto inside = [&](const Plateau& p, double lo, double hi) {  // a point in (lo, hi]; any when not reported
        if (!(hi > 0)) return true;
        for (std::size_t i = p.first; i <= p.last; ++i)
            if (size[i] > lo && size[i] <= hi) return true;
        return false;
    };
    auto above = [&](const Plateau& p, double below) { return p.latency >= kLevelStep * below && p.latency <= out.dram.latency / dram_gap(kind); };
    std::optional<std::size_t> i2;  // L2's plateau
    for (std::size_t i = 0; i + 1 < ps.size() && !i2; ++i)
        if (ps[i].last >= past_l1 && above(ps[i], out.l1.latency) && inside(ps[i], r.l1, r.l2)) i2 = i;
    out.l2_plateau = i2.has_value();
    out.l2 = i2 ? ps[*i2] : at(r.l2 / 2);
    // L1's range ends at its last point below halfway to L2 (the points past a GPU's smaller L1 read L2's latency).
    if (in_l1)
        while (out.l1.last > fastest && latency[out.l1.last] >= std::sqrt(out.l1.latency * out.l2.latency)) --out.l1.last;
    if (!with_l3) return out;
    std::optional<std::size_t> i3;
    for (std::size_t i = i2 ? *i2 + 1 : 0; i + 1 < ps.size(); ++i)
        if (ps[i].first > out.l2.last && above(ps[i], out.l2.latency) && inside(ps[i], r.l2, r.l3) &&
            (!i3 || ps[i].last - ps[i].first >= ps[*i3].last - ps[*i3].first))
            i3 = i;
    out.l3_plateau = i3.has_value();
    out.l3 = i3 ? ps[*i3] : at(2 * r.l2);
    return out;
}
// The same, by the rule's old switch (kept for lessons written against it): with_l3 is a CPU's
// rule, without it a GPU's.
inline Levels find_levels(const std::vector<double>& size, const std::vector<double>& latency, const ReportedCaches& r, bool with_l3) {
    return find_levels(size, latency, r, with_l3 ? DeviceKind::cpu : DeviceKind::cuda);
}

}  // namespace pointer_chase
}  // namespace lab
