// Lesson 02.01, "Why the GPU Waits": the three textbook regimes, measured.
//
// Three mystery kernels, shuffled per student, each measured at 1x and 2x work:
//   - an FMA kernel with independent vector chains on every thread (compute bound),
//   - a triad a = b + s*c over at least 4x the last-level cache (memory bound),
//   - a tiny triad launched back to back (overhead bound: doubling it barely costs more).
// For contrast, a single dependent FMA chain (latency bound: far from every roof), and the time
// per element of one triad at n = 1 and n = 2^26 (2^24 with --quick; latency vs throughput).
// The student names each mystery's regime from its time, counts and the ceilings.
#include <lab/cpu_stream_kernels.hpp>
#include <lab/lab.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace {

using namespace lab;

constexpr std::array<const char*, 3> kMysteries = {"mystery_a", "mystery_b", "mystery_c"};
enum Kind { kCompute = 0, kMemory = 1, kOverhead = 2 };

// The seed's permutation of {compute, memory, overhead} onto mysteries A, B, C. Plain integer
// arithmetic (no std distribution) so the grader re-derives it on any platform.
std::array<int, 3> shuffle(std::uint64_t seed) {
    static const std::array<std::array<int, 3>, 6> perms = {{{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                             {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
    return perms[seed % 6];
}

class WhyTheGpuWaits : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.01", .title = "Why the GPU Waits", .version = "2.0.0"};
        i.objectives = {
            "Understand the GPU as a throughput machine working against a latency-optimized CPU.",
            "Explain the three performance regimes: compute bound, memory bandwidth bound, and overhead bound.",
        };
        i.experiments = {
            {"mysteries", "three mystery kernels (FMA peak, large triad, tiny triad), shuffled per student, at 1x and 2x work"},
            {"chain", "a single dependent FMA chain on one thread: latency bound"},
            {"per_element", "one triad at n = 1 and at n = 2^26 (2^24 with --quick): time per element, latency vs throughput"},
        };
        // Graded = asked by configs/grading/02.01.yaml (and so withheld): each mystery's measured
        // regime, mystery C's doubling ratio and the per-element ratio.
        i.placed = {
            {.name = "mystery_a", .graded = {"measured_regime"}, .doubled = true},
            {.name = "mystery_b", .graded = {"measured_regime"}, .doubled = true},
            {.name = "mystery_c", .graded = {"measured_regime", "doubling_ratio"}, .doubled = true},
            {.name = "chain"},
        };
        i.metrics = {
            {.name = "per_element.small_s", .unit = "s", .description = "time per element of a triad at n = 1"},
            {.name = "per_element.large_s", .unit = "s", .description = "time per element of a triad at n = 2^26 (full runs) or 2^24 (--quick runs)"},
            {.name = "per_element_ratio", .unit = "ratio", .description = "how many times cheaper per element the large launch is", .graded = true},
            // For `lab check`: which kernel is which depends on the student. Not graded (no question
            // asks them), but withheld all the same, as every `check.*` helper is
            // (record::withheld_metrics): they would tell which mystery is which.
            {.name = "check.regimes", .kind = MetricKind::category, .description = "the three mysteries' measured regimes, sorted (for lab check)"},
            {.name = "check.compute_roof_fraction", .unit = "ratio", .description = "roof fraction of the compute-bound mystery (for lab check)"},
            {.name = "check.memory_roof_fraction", .unit = "ratio", .description = "roof fraction of the memory-bound mystery (for lab check)"},
        };
        // Measured regimes and speeds depend on how busy the machine is: reported, failing only with --strict.
        i.expectations = {
            {.metric = "check.regimes", .equals = "compute_bound,memory_bound,overhead_bound", .performance = true,
             .why = "the three mysteries show the three textbook regimes"},
            {.metric = "chain.measured_regime", .equals = "latency_bound", .performance = true, .why = "one dependent chain is latency bound"},
            {.metric = "check.compute_roof_fraction", .min = 0.8, .performance = true, .why = "the FMA kernel reaches at least 0.8 of its peak"},
            {.metric = "check.memory_roof_fraction", .min = 0.6, .performance = true,
             .why = "the large triad reaches at least 0.6 of the bandwidth ceiling"},
            {.metric = "per_element_ratio", .min = 100, .performance = true,
             .why = "a large launch is at least 100x cheaper per element than a one-element launch"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool quick = s.options().quick, gpu = dev.kind() == DeviceKind::cuda;
        auto k = s.kernels<StreamKernels, cpu::StreamKernelsCpu>();
        // Sizes: the large triad's 12 n bytes are >= 4x the last-level cache; the FMA kernel runs
        // ~5-10 ms; the tiny triad is a few cache lines per thread.
        const std::size_t triad_n = (std::max<std::size_t>(4 * dev.facts().last_level_cache_bytes() / 12, 1 << 24) + 1023) / 1024 * 1024;
        const std::int64_t fma_it = gpu ? (quick ? 16384 : 65536) : (quick ? 1'000'000 : 3'000'000);
        const std::size_t tiny_n = gpu ? 1024 : 64 * static_cast<std::size_t>(std::max(1, dev.threads()));
        const std::size_t per_element_n = std::size_t{1} << (quick ? 24 : 26);
        const std::int64_t chain_it = gpu ? (quick ? 250'000 : 1'000'000) : (quick ? 1'000'000 : 4'000'000);

        // Three triad arrays of 2n floats serve the 1x and 2x large triads and both per-element
        // runs; the tiny triad gets its own. Zero-filled is all a triad needs.
        const std::size_t big = std::max(2 * triad_n, per_element_n);
        BufferPtr a = dev.allocate(big * 4), b = dev.allocate(big * 4), c = dev.allocate(big * 4);
        BufferPtr ta = dev.allocate(2 * tiny_n * 4), tb = dev.allocate(2 * tiny_n * 4), tc = dev.allocate(2 * tiny_n * 4);
        BufferPtr out = dev.allocate(std::size_t{64} << 20);  // per-thread results of the FMA kernels
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>();

        const auto order = shuffle(s.options().seed);
        for (int m = 0; m < 3; ++m) {
            for (int scale = 1; scale <= 2; ++scale) {
                const std::string name = std::string(kMysteries[m]) + (scale == 1 ? "" : "_x2");
                Workload w{.name = name, .description = "mystery kernel " + std::string(1, static_cast<char>('A' + m)) +
                                                        (scale == 1 ? "" : ", twice the work"),
                           .doubles = scale == 1 ? "" : kMysteries[m], .telemetry = true};
                Launch launch;
                if (order[m] == kCompute) {
                    const std::int64_t it = fma_it * scale;
                    w.params = {param("work", it)};
                    w.flops = stream_kernels::fma_peak_flops(dev.kind(), dev.facts(), dev.threads(), it);
                    w.bytes = stream_kernels::fma_peak_bytes(dev.kind(), dev.facts(), dev.threads());
                    launch = k->fma_peak(out->as<float>(), it);
                } else {
                    // A triad: one multiply and one add per element; read b and c, write a.
                    const std::size_t n = (order[m] == kMemory ? triad_n : tiny_n) * scale;
                    w.params = {param("work", n)};
                    w.flops = 2.0 * n;
                    w.bytes = 12.0 * n;
                    launch = order[m] == kMemory ? k->triad(pa, pb, pc, 3.0f, n)
                                                 : k->triad(ta->as<float>(), tb->as<float>(), tc->as<float>(), 3.0f, n);
                }
                s.measure(w, launch);
            }
        }

        // A single dependent chain: each FMA waits for the last (about 4 cycles).
        s.measure({.name = "chain", .description = stream_kernels::chain_description(dev.kind()),
                   .params = {param("iterations", chain_it)}, .flops = 2.0 * chain_it, .bytes = 8,
                   .pipe = stream_kernels::chain_pipe(dev.kind())},
                  k->dependent_chain(out->data(), chain_it));

        // Latency vs throughput: the same triad on 1 element and on 2^26 (2^24 with --quick).
        for (std::size_t n : {std::size_t{1}, per_element_n})
            s.measure({.name = n == 1 ? "per_element.small" : "per_element.large", .description = "one triad launch over n elements",
                       .params = {param("n", n)}, .flops = 2.0 * n, .bytes = 12.0 * n},
                      k->triad(pa, pb, pc, 3.0f, n));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        // For `lab check`: the regimes found, and the fractions of roof of the compute and memory kernels.
        std::vector<std::string> regimes;
        const auto order = shuffle(run.options.seed);
        for (int m = 0; m < 3; ++m) {
            const auto& p = d.placement(kMysteries[m]);
            regimes.push_back(roofline::to_text(p.measured));
            if (order[m] == kCompute) d.set("check.compute_roof_fraction", p.roof_fraction);
            if (order[m] == kMemory) d.set("check.memory_roof_fraction", p.roof_fraction);
        }
        std::sort(regimes.begin(), regimes.end());
        d.set("check.regimes", regimes[0] + "," + regimes[1] + "," + regimes[2]);
        const Measurement& small = run.at("per_element.small");
        const Measurement& large = run.at("per_element.large");
        const double per_small = small.time.median / small.workload.param("n");
        const double per_large = large.time.median / large.workload.param("n");
        d.set("per_element.small_s", per_small);
        d.set("per_element.large_s", per_large);
        d.set("per_element_ratio", per_small / per_large);

        d.teaching = {
            "Ceilings: compare each mystery's FLOP/s with the fp32 roof and its B/s with the DRAM roof (the ref",
            "  column: the ceilings measured right after it, which judge its regime; on a busy machine the roof",
            "  column reads lower), then look at what doubling its work did to its time (mystery_X_x2).",
            "Mystery A is {mystery_a.measured_regime}, B is {mystery_b.measured_regime}, C is {mystery_c.measured_regime}.",
            "Doubling the work multiplied the time by A {mystery_a.doubling_ratio}, B {mystery_b.doubling_ratio}, "
            "C {mystery_c.doubling_ratio}: a time that barely rises is paying for the launch, not the work.",
            "A single dependent FMA chain reaches {chain.flops_per_s}, {chain.roof_fraction} of its roof: every FMA",
            "  waits for the one before it, so the core idles: a latency-bound kernel (this run measured it as {chain.measured_regime}).",
            "One element alone costs {per_element.small_s}; in one launch of 2^" + std::to_string(std::ilogb(large.workload.param("n"))) +
                " (this run's n) each costs {per_element.large_s}:",
            "  the large launch is {per_element_ratio} times cheaper per element. Throughput machines need work in bulk.",
        };
    }
};

}  // namespace

LAB_LESSON(WhyTheGpuWaits, "02.01")
