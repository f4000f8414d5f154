// Lesson 02.01, "Why the GPU Waits": the three textbook regimes, measured.
//
// Three mystery kernels, shuffled per student, each measured at 1x and 2x work:
//   - an FMA kernel with 12 independent vector chains per thread (compute bound),
//   - a triad a = b + s*c over at least 4x the last-level cache (memory bound),
//   - a tiny triad launched back to back (overhead bound: doubling it barely costs more).
// For contrast, a single dependent FMA chain (latency bound: far from every roof), and the time
// per element of one triad at n = 1 and n = 2^26 (latency vs throughput).
// The student names each mystery's regime from its time, counts and the ceilings.
#include <lab/lab.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace {

using namespace lab;
using namespace lab::cpu;

constexpr std::array<const char*, 3> kMysteries = {"mystery_a", "mystery_b", "mystery_c"};
enum Kind { kCompute = 0, kMemory = 1, kOverhead = 2 };

// The seed's permutation of {compute, memory, overhead} onto mysteries A, B, C. Plain integer
// arithmetic (no std distribution) so the grader re-derives it on any platform.
std::array<int, 3> shuffle(std::uint64_t seed) {
    static const std::array<std::array<int, 3>, 6> perms = {{{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                             {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
    return perms[seed % 6];
}

struct Sizes {
    std::size_t triad_n;          // large triad: 12 n bytes >= 4x LLC
    std::int64_t fma_iterations;  // ~5-10 ms per invocation
    std::size_t tiny_n;           // a few cache lines per thread
    std::size_t per_element_n;    // the "n = 2^26" of the latency-vs-throughput pair
    std::int64_t chain_iterations;
};

Sizes sizes_for(const Device& dev, bool quick) {
    Sizes s;
    std::size_t llc = dev.facts().last_level_cache_bytes();
    std::size_t need = std::max<std::size_t>(4 * llc / 12, std::size_t{1} << 24);
    s.triad_n = (need + 63) / 64 * 64;
    s.fma_iterations = quick ? 1'000'000 : 3'000'000;
    s.tiny_n = 64 * static_cast<std::size_t>(std::max(1, dev.threads()));
    s.per_element_n = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
    s.chain_iterations = quick ? 1'000'000 : 4'000'000;
    return s;
}

class WhyTheGpuWaits : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i;
        i.id = "02.01";
        i.title = "Why the GPU Waits";
        i.version = "1.0.0";
        i.objectives = {
            "Understand the GPU as a throughput machine working against a latency-optimized CPU.",
            "Explain the three performance regimes: compute bound, memory bandwidth bound, and overhead bound.",
        };
        i.experiments = {
            {"mysteries", "three mystery kernels (FMA peak, large triad, tiny triad), shuffled per student, at 1x and 2x work"},
            {"chain", "a single dependent FMA chain on one thread: latency bound"},
            {"per_element", "one triad at n = 1 and at n = 2^26: time per element, latency vs throughput"},
        };
        for (const char* m : kMysteries)
            declare_workload_metrics(i.metrics, m, {"predicted_regime", "measured_regime", "roof_fraction", "doubling_ratio"},
                                     true);
        declare_workload_metrics(i.metrics, "chain");
        i.metrics.push_back({"per_element.small_s", "s", MetricKind::number, "time per element of a triad at n = 1"});
        i.metrics.push_back({"per_element.large_s", "s", MetricKind::number, "time per element of a triad at n = 2^26"});
        i.metrics.push_back({"per_element_ratio", "ratio", MetricKind::number,
                             "how many times cheaper per element the large launch is", true, true});
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const Simd simd = dev.facts().simd == "avx512" ? Simd::avx512 : dev.facts().simd == "avx2" ? Simd::avx2 : Simd::scalar;
        const bool quick = s.options().quick;
        const Sizes z = sizes_for(dev, quick);
        const int threads = dev.threads();

        // Buffers: three triad arrays of 2n floats serve the 1x and 2x large triads and both
        // per-element runs; the tiny triad gets its own small arrays.
        const std::size_t big = std::max(2 * z.triad_n, z.per_element_n);
        BufferPtr a = dev.allocate(big * 4), b = dev.allocate(big * 4), c = dev.allocate(big * 4);
        BufferPtr ta = dev.allocate(2 * z.tiny_n * 4), tb = dev.allocate(2 * z.tiny_n * 4), tc = dev.allocate(2 * z.tiny_n * 4);
        BufferPtr out = dev.allocate(64 * 8 * static_cast<std::size_t>(threads));
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>();
        float *qa = ta->as<float>(), *qb = tb->as<float>(), *qc = tc->as<float>();
        float* po = out->as<float>();
        double* pd = out->as<double>();
        // The buffers come zero-filled, which is all a triad needs: the values do not change its
        // speed, and touching 2 GB once more would only lengthen the run.

        auto triad = [=](float* x, const float* y, const float* w, std::size_t n) -> Launch {
            return [=](Stream& st) { st.launch([=](int t, int nt) { stream_triad(simd, x, y, w, 3.0f, n, t, nt); }); };
        };
        auto triad_workload = [](const std::string& name, std::size_t n) {
            Workload w;
            w.name = name;
            w.flops = 2.0 * n;   // one multiply and one add per element
            w.bytes = 12.0 * n;  // read b and c, write a (no write-allocate counted)
            w.pipe = "fp32.simt";
            w.params = {{"work", static_cast<double>(n)}};
            return w;
        };

        const auto order = shuffle(s.options().seed);
        for (int m = 0; m < 3; ++m) {
            const std::string name = kMysteries[m];
            for (int scale = 1; scale <= 2; ++scale) {
                Workload w;
                Launch launch;
                switch (order[m]) {
                    case kCompute: {
                        std::int64_t it = z.fma_iterations * scale;
                        w = triad_workload("", 0);
                        w.flops = fma_peak_flops<float>(simd, it, threads);
                        w.bytes = 4.0 * threads;  // each thread stores its one result
                        w.params = {{"work", static_cast<double>(it)}};
                        launch = [=](Stream& st) { st.launch([=](int t, int) { fma_peak<float>(simd, it, po, t); }); };
                        break;
                    }
                    case kMemory:
                        w = triad_workload("", z.triad_n * scale);
                        launch = triad(pa, pb, pc, z.triad_n * scale);
                        break;
                    case kOverhead:
                        w = triad_workload("", z.tiny_n * scale);
                        launch = triad(qa, qb, qc, z.tiny_n * scale);
                        break;
                }
                w.name = scale == 1 ? name : name + "_x2";
                w.doubles = scale == 1 ? "" : name;
                w.description = "mystery kernel " + std::string(1, static_cast<char>('A' + m)) +
                                (scale == 1 ? "" : ", twice the work");
                s.measure(w, launch);
            }
        }

        // A single dependent chain: each FMA waits ~4 cycles for the last.
        {
            Workload w;
            w.name = "chain";
            w.description = "one dependent chain of scalar fp64 FMAs on one thread";
            w.flops = 2.0 * z.chain_iterations;
            w.bytes = 8;
            w.pipe = "fp64.simt";
            w.params = {{"iterations", static_cast<double>(z.chain_iterations)}};
            const std::int64_t it = z.chain_iterations;
            s.measure(w, [=](Stream& st) {
                st.launch([=](int t, int) {
                    if (t == 0) pd[0] = dependent_chain(simd, it);
                });
            });
        }

        // Latency vs throughput: the same triad on 1 element and on 2^26.
        for (std::size_t n : {std::size_t{1}, z.per_element_n}) {
            Workload w = triad_workload(n == 1 ? "per_element.small" : "per_element.large", n);
            w.params = {{"n", static_cast<double>(n)}};
            w.description = "one triad launch over n elements";
            s.measure(w, triad(pa, pb, pc, n));
        }
    }

    Derivation derive(const RawRun& run) const override {
        Derivation d;
        for (const char* m : kMysteries) place_workload(run, m, d);
        place_workload(run, "chain", d);
        const Measurement& small = run.at("per_element.small");
        const Measurement& large = run.at("per_element.large");
        double n_small = small.workload.params.at(0).value, n_large = large.workload.params.at(0).value;
        double per_small = small.time.median / n_small, per_large = large.time.median / n_large;
        d.number("per_element.small_s", per_small, "s");
        d.number("per_element.large_s", per_large, "s");
        d.number("per_element_ratio", per_small / per_large, "ratio");

        d.teaching = {
            "Ceilings: compare each mystery's FLOP/s with the fp32 roof and its B/s with the DRAM roof, then",
            "  look at what doubling its work did to its time (mystery_X_x2).",
            "Mystery A is {mystery_a.measured_regime}, B is {mystery_b.measured_regime}, C is {mystery_c.measured_regime}.",
            "Doubling the work multiplied the time by A {mystery_a.doubling_ratio}, B {mystery_b.doubling_ratio}, "
            "C {mystery_c.doubling_ratio}: a time that barely rises is paying for the launch, not the work.",
            "A single dependent FMA chain reaches {chain.flops_per_s}, {chain.roof_fraction} of its roof: every FMA",
            "  waits for the one before it, so the core idles. That is latency bound: {chain.measured_regime}.",
            "One element alone costs {per_element.small_s}; in one launch of 2^26 (2^24 with --quick) each costs {per_element.large_s}:",
            "  the large launch is {per_element_ratio} times cheaper per element. Throughput machines need work in bulk.",
        };
        return d;
    }
};

}  // namespace

LAB_LESSON(WhyTheGpuWaits, "02.01")
