// Lesson 02.01, "Why the GPU Waits": the three textbook regimes, measured.
//
// Three mystery kernels, shuffled per student, each measured at 1x and 2x work:
//   - an FMA kernel with 12 independent vector chains per thread (compute bound),
//   - a triad a = b + s*c over at least 4x the last-level cache (memory bound),
//   - a tiny triad launched back to back (overhead bound: doubling it barely costs more).
// For contrast, a single dependent FMA chain (latency bound: far from every roof), and the time
// per element of one triad at n = 1 and n = 2^26 (latency vs throughput).
// The student names each mystery's regime from its time, counts and the ceilings.
#include <lab/cpu_kernels.hpp>
#include <lab/lab.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "kernels_02_01.hpp"

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

// The lesson's kernels on one device: each returns a Launch and states its counts.
struct Kernels {
    std::function<Launch(std::int64_t iterations)> fma;         // compute bound
    std::function<double(std::int64_t iterations)> fma_flops;
    double fma_bytes = 0;                                        // the results it stores
    std::function<Launch(float* a, const float* b, const float* c, std::size_t n)> triad;
    std::function<Launch(std::int64_t iterations)> chain;        // latency bound
    std::string chain_pipe;                                      // the roof the chain is held against
    std::string chain_what;
};

struct Sizes {
    std::size_t triad_n;          // large triad: 12 n bytes >= 4x the last-level cache
    std::int64_t fma_iterations;  // ~5-10 ms per invocation
    std::size_t tiny_n;           // a few cache lines per thread
    std::size_t per_element_n;    // the "n = 2^26" of the latency-vs-throughput pair
    std::int64_t chain_iterations;
};

Sizes sizes_for(const Device& dev, bool quick) {
    const bool gpu = dev.kind() == DeviceKind::cuda;
    Sizes s;
    std::size_t llc = dev.facts().last_level_cache_bytes();
    std::size_t need = std::max<std::size_t>(4 * llc / 12, std::size_t{1} << 24);
    s.triad_n = (need + 1023) / 1024 * 1024;
    s.fma_iterations = gpu ? (quick ? 16384 : 65536) : (quick ? 1'000'000 : 3'000'000);
    s.tiny_n = gpu ? 1024 : 64 * static_cast<std::size_t>(std::max(1, dev.threads()));
    s.per_element_n = quick ? (std::size_t{1} << 24) : (std::size_t{1} << 26);
    s.chain_iterations = gpu ? (quick ? 250'000 : 1'000'000) : (quick ? 1'000'000 : 4'000'000);
    return s;
}

Kernels cpu_kernels(Device& dev, float* fma_out, double* chain_out) {
    const Simd simd = detect_simd();
    const int threads = dev.threads();
    Kernels k;
    k.fma = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int) { fma_peak<float>(simd, it, fma_out, t); }); };
    };
    k.fma_flops = [=](std::int64_t it) { return fma_peak_flops<float>(simd, it, threads); };
    k.fma_bytes = 4.0 * threads;
    k.triad = [=](float* a, const float* b, const float* c, std::size_t n) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int nt) { stream_triad(simd, a, b, c, 3.0f, n, t, nt); }); };
    };
    k.chain = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) {
            st.launch([=](int t, int) {
                if (t == 0) chain_out[0] = dependent_chain(simd, it);
            });
        };
    };
    k.chain_pipe = "fp64.simt";
    k.chain_what = "one dependent chain of scalar fp64 FMAs on one thread";
    return k;
}

Kernels gpu_kernels(Session& s, float* fma_out) {
    const auto* g = &s.companion<lab_02_01::CudaKernels>(LAB_02_01_KERNELS_SYMBOL);
    // 8 blocks of 256 threads per SM: 64 warps, 16 per sub-partition (the lesson asks for >= 4).
    const unsigned blocks = static_cast<unsigned>(std::max(1, s.device().facts().compute_units)) * 8;
    Kernels k;
    k.fma = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) { g->fma_peak(st.native_handle(), fma_out, it, blocks); };
    };
    k.fma_flops = [=](std::int64_t it) { return g->fma_peak_flops(it, blocks); };
    k.fma_bytes = 4.0 * blocks * 256;
    k.triad = [=](float* a, const float* b, const float* c, std::size_t n) -> Launch {
        return [=](Stream& st) { g->triad(st.native_handle(), a, b, c, 3.0f, n, blocks); };
    };
    k.chain = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) { g->chain(st.native_handle(), fma_out, it); };
    };
    k.chain_pipe = "fp32.simt";
    k.chain_what = "one thread running one dependent chain of FFMAs";
    return k;
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
        // Graded = asked by configs/grading/02.01.yaml (and so withheld): each mystery's measured
        // regime, mystery C's doubling ratio and the per-element ratio.
        for (const char* m : kMysteries)
            declare_workload_metrics(i.metrics, m,
                                     std::string(m) == "mystery_c" ? std::vector<std::string>{"measured_regime", "doubling_ratio"}
                                                                   : std::vector<std::string>{"measured_regime"},
                                     true);
        declare_workload_metrics(i.metrics, "chain");
        i.metrics.push_back({"per_element.small_s", "s", MetricKind::number, "time per element of a triad at n = 1"});
        i.metrics.push_back({"per_element.large_s", "s", MetricKind::number, "time per element of a triad at n = 2^26"});
        i.metrics.push_back({"per_element_ratio", "ratio", MetricKind::number,
                             "how many times cheaper per element the large launch is", true, true});
        // For `lab check`: which kernel is which depends on the student. Not graded (no question
        // asks them), but withheld all the same, as every `check.*` helper is
        // (record::withheld_metrics): they would tell which mystery is which.
        i.metrics.push_back({"check.regimes", "", MetricKind::category,
                             "the three mysteries' measured regimes, sorted (for lab check)", true, false});
        i.metrics.push_back({"check.compute_roof_fraction", "ratio", MetricKind::number,
                             "roof fraction of the compute-bound mystery (for lab check)", true, false});
        i.metrics.push_back({"check.memory_roof_fraction", "ratio", MetricKind::number,
                             "roof fraction of the memory-bound mystery (for lab check)", true, false});
        i.expectations = {
            // Measured regimes depend on how busy the machine is: reported, failing only with --strict.
            {"check.regimes", "compute_bound,memory_bound,overhead_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true,
             "the three mysteries show the three textbook regimes"},
            {"chain.measured_regime", "latency_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true,
             "one dependent chain is latency bound"},
            {"check.compute_roof_fraction", "", 0.8, 1e308, "", {"cpu", "cuda"}, true,
             "the FMA kernel reaches at least 0.8 of its peak"},
            {"check.memory_roof_fraction", "", 0.6, 1e308, "", {"cpu", "cuda"}, true,
             "the large triad reaches at least 0.6 of the bandwidth ceiling"},
            {"per_element_ratio", "", 100, 1e308, "", {"cpu", "cuda"}, true,
             "a large launch is at least 100x cheaper per element than a one-element launch"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool quick = s.options().quick;
        const Sizes z = sizes_for(dev, quick);

        // Buffers: three triad arrays of 2n floats serve the 1x and 2x large triads and both
        // per-element runs; the tiny triad gets its own small arrays. They come zero-filled,
        // which is all a triad needs: values do not change its speed.
        const std::size_t big = std::max(2 * z.triad_n, z.per_element_n);
        BufferPtr a = dev.allocate(big * 4), b = dev.allocate(big * 4), c = dev.allocate(big * 4);
        BufferPtr ta = dev.allocate(2 * z.tiny_n * 4), tb = dev.allocate(2 * z.tiny_n * 4), tc = dev.allocate(2 * z.tiny_n * 4);
        BufferPtr out = dev.allocate(std::size_t{64} << 20);  // per-thread results of the FMA kernels
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>();
        float *qa = ta->as<float>(), *qb = tb->as<float>(), *qc = tc->as<float>();
        const Kernels k = dev.kind() == DeviceKind::cuda ? gpu_kernels(s, out->as<float>())
                                                         : cpu_kernels(dev, out->as<float>(), out->as<double>());

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
                        w.flops = k.fma_flops(it);
                        w.bytes = k.fma_bytes;
                        w.params = {{"work", static_cast<double>(it)}};
                        launch = k.fma(it);
                        break;
                    }
                    case kMemory:
                        w = triad_workload("", z.triad_n * scale);
                        launch = k.triad(pa, pb, pc, z.triad_n * scale);
                        break;
                    case kOverhead:
                        w = triad_workload("", z.tiny_n * scale);
                        launch = k.triad(qa, qb, qc, z.tiny_n * scale);
                        break;
                }
                w.name = scale == 1 ? name : name + "_x2";
                w.telemetry = true;  // clocks and power while it runs, where the device reports them
                w.doubles = scale == 1 ? "" : name;
                w.description = "mystery kernel " + std::string(1, static_cast<char>('A' + m)) +
                                (scale == 1 ? "" : ", twice the work");
                s.measure(w, launch);
            }
        }

        // A single dependent chain: each FMA waits for the last (about 4 cycles).
        {
            Workload w;
            w.name = "chain";
            w.description = k.chain_what;
            w.flops = 2.0 * z.chain_iterations;
            w.bytes = 8;
            w.pipe = k.chain_pipe;
            w.params = {{"iterations", static_cast<double>(z.chain_iterations)}};
            s.measure(w, k.chain(z.chain_iterations));
        }

        // Latency vs throughput: the same triad on 1 element and on 2^26.
        for (std::size_t n : {std::size_t{1}, z.per_element_n}) {
            Workload w = triad_workload(n == 1 ? "per_element.small" : "per_element.large", n);
            w.params = {{"n", static_cast<double>(n)}};
            w.description = "one triad launch over n elements";
            s.measure(w, k.triad(pa, pb, pc, n));
        }
    }

    Derivation derive(const RawRun& run) const override {
        Derivation d;
        for (const char* m : kMysteries) place_workload(run, m, d);
        place_workload(run, "chain", d);
        // For `lab check`: the regimes found, and the fractions of roof of the compute and memory kernels.
        {
            // place_workload ran for the mysteries first, in order: d.workloads[0..2].
            std::vector<std::string> regimes;
            for (std::size_t m = 0; m < kMysteries.size(); ++m) regimes.push_back(roofline::to_text(d.workloads[m].placement.measured));
            std::sort(regimes.begin(), regimes.end());
            d.category("check.regimes", regimes[0] + "," + regimes[1] + "," + regimes[2]);
            const auto order = shuffle(run.options.seed);
            for (int m = 0; m < 3; ++m) {
                const auto& p = d.workloads[static_cast<std::size_t>(m)].placement;
                if (order[m] == kCompute) d.number("check.compute_roof_fraction", p.roof_fraction, "ratio");
                if (order[m] == kMemory) d.number("check.memory_roof_fraction", p.roof_fraction, "ratio");
            }
        }
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
