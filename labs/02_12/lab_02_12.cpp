// Lesson 02.12, "Naming Your Bottleneck": the module's synthesis.
//
// Four mystery workloads per student, drawn from a pool of seven: two memory-bound streams over
// 4x the last-level cache (an elementwise triad, a reduction), two compute-bound kernels (a BLAS
// GEMM, FMA chains on every thread) and three others (tiny launches: overhead bound; one dependent
// chain: latency bound; k FMAs per element with k set so its AI sits near the ridge: mixed).
// (A GEMV is 02.06's subject: a BLAS GEMV at batch 1 is no fair mystery on a CPU, where OpenBLAS
// 0.3.21 packs it as a GEMM.) Each is measured at 1x and 2x work. For each, the student states its AI, its
// fraction of roof and its measured regime, from the run table, the ceilings and the doubling.
// (Questions on a recorded hardware-counter trace come with the trace reader.)
#include <lab/cpu_stream_kernels.hpp>
#include <lab/lab.hpp>
#include <lab/random_fill.hpp>

#include <algorithm>
#include <array>

namespace {

using namespace lab;

enum Kind { kTriad, kReduction, kGemm, kFma, kTiny, kChain, kMixed };
const char* const kKindNames[] = {"elementwise", "reduction", "gemm", "fma", "tiny_launches", "dependent_chain", "mixed"};
constexpr int kMysteries = 4;
std::string mystery(int m) { return "mystery_" + std::to_string(m + 1); }

// The student's four, from the seed by integer arithmetic (the grader re-derives it anywhere): one
// memory-bound stream, one compute-bound kernel and two of the others, in a shuffled order.
std::array<Kind, kMysteries> draw(std::uint64_t seed) {
    const Kind memory[] = {kTriad, kReduction}, compute[] = {kGemm, kFma}, other[] = {kTiny, kChain, kMixed};
    const int skip = static_cast<int>((seed / 4) % 3);  // the one "other" left out
    std::array<Kind, kMysteries> set = {memory[seed % 2], compute[(seed / 2) % 2], other[(skip + 1) % 3], other[(skip + 2) % 3]};
    for (std::uint64_t i = kMysteries - 1, r = seed / 12; i > 0; r /= i + 1, --i) std::swap(set[i], set[r % (i + 1)]);
    return set;
}

class NamingTheBottleneck : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.12", .title = "Naming Your Bottleneck", .version = "2.0.0"};
        i.objectives = {"Name a workload's bottleneck from its counts, its roofline position and a doubling test, and say how sure you are."};
        i.experiments = {{"mysteries", "four mystery workloads drawn per student from seven, each at 1x and 2x work"}};
        for (int m = 0; m < kMysteries; ++m)
            i.placed.push_back({.name = mystery(m), .graded = {"ai", "roof_fraction", "measured_regime"}, .doubled = true});
        i.metrics = {{.name = "check.kinds", .kind = MetricKind::category, .description = "the student's four kinds, in order (for lab check and instructors)"},
                     {.name = "check.counts", .kind = MetricKind::integer, .description = "1 when every mystery's x2 states twice its work"}};
        i.expectations = {{.metric = "check.counts", .min = 1, .max = 1, .why = "each doubled workload states exactly twice the work"}};
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool gpu = dev.kind() == DeviceKind::cuda, quick = s.options().quick;
        auto k = s.kernels<StreamKernels, cpu::StreamKernelsCpu>();
        const std::size_t llc = dev.facts().last_level_cache_bytes();
        const std::size_t stream_n = (std::max<std::size_t>(4 * llc / 4, std::size_t{1} << 24) + 1023) / 1024 * 1024;  // 4 B elements
        const int gemm_n = gpu ? 4096 : 1024;
        const std::int64_t fma_it = gpu ? (quick ? 16384 : 65536) : (quick ? 500'000 : 1'500'000), chain_it = gpu ? 250'000 : 1'000'000;
        const std::size_t tiny_n = gpu ? 1024 : 64 * static_cast<std::size_t>(std::max(1, dev.threads()));
        const int mixed_k = gpu ? 64 : 16;  // AI k/4: near a GPU's fp32 ridge (about 10-15) and a CPU's (about 3-6)
        const auto kinds = draw(s.options().seed);
        auto drawn = [&](Kind kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); };
        // Only what the draw needs: stream arrays for x2 (twice the elements), GEMM operands (A and
        // C twice the rows).
        const std::size_t sn = drawn(kTriad) || drawn(kReduction) || drawn(kMixed) ? stream_n : tiny_n, gn = drawn(kGemm) ? gemm_n : 1;
        BufferPtr a = dev.allocate(8 * sn), b = dev.allocate(8 * sn), c = dev.allocate(8 * sn);
        BufferPtr out = dev.allocate(std::size_t{64} << 20);
        BufferPtr ga = dev.allocate(8 * gn * gn), gb = dev.allocate(4 * gn * gn), gc = dev.allocate(8 * gn * gn);
        fill_random(s, *ga, Dtype::fp32, 1), fill_random(s, *gb, Dtype::fp32, 2);  // GEMM operands: not zeros, as calibrated
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>();

        for (int m = 0; m < kMysteries; ++m)
            for (int scale = 1; scale <= 2; ++scale) {
                Workload w{.name = mystery(m) + (scale == 1 ? "" : "_x2"), .description = "mystery workload " + std::to_string(m + 1) + (scale == 1 ? "" : ", twice the work"),
                           .doubles = scale == 1 ? "" : mystery(m)};
                Launch launch;
                const std::size_t n = stream_n * scale;
                switch (kinds[static_cast<std::size_t>(m)]) {
                    case kTriad:  // a = b + s c: 2 FLOP, 12 bytes per element
                        w.params = {param("n", n)}, w.flops = 2.0 * n, w.bytes = 12.0 * n, launch = k->triad(pa, pb, pc, 3.0f, n);
                        break;
                    case kReduction:  // sum of a: 1 FLOP, 4 bytes per element
                        w.params = {param("n", n)}, w.flops = 1.0 * n, w.bytes = 4.0 * n, launch = k->read(pa, n, out->as<float>());
                        break;
                    case kMixed:  // k FMAs per element in place: 2k FLOP, 8 bytes
                        w.params = {param("n", n), param("k", mixed_k)}, w.flops = 2.0 * mixed_k * n, w.bytes = 8.0 * n,
                        launch = k->fma_per_element(pa, n, mixed_k);
                        break;
                    case kTiny:  // a triad of a few cache lines per thread
                        w.params = {param("n", tiny_n * scale)}, w.flops = 2.0 * tiny_n * scale, w.bytes = 12.0 * tiny_n * scale,
                        launch = k->triad(pa, pb, pc, 3.0f, tiny_n * scale);
                        break;
                    case kFma:
                        w.params = {param("iterations", fma_it * scale)}, w.flops = stream_kernels::fma_peak_flops(dev.kind(), dev.facts(), dev.threads(), fma_it * scale),
                        w.bytes = stream_kernels::fma_peak_bytes(dev.kind(), dev.facts(), dev.threads()), launch = k->fma_peak(out->as<float>(), fma_it * scale);
                        break;
                    case kChain:
                        w.params = {param("iterations", chain_it * scale)}, w.flops = 2.0 * chain_it * scale, w.bytes = 8, w.pipe = stream_kernels::chain_pipe(dev.kind()),
                        launch = k->dependent_chain(out->data(), chain_it * scale);
                        break;
                    case kGemm: {  // C = A B, m = scale x n: twice the rows is twice the work
                        const Gemm g{Dtype::fp32, gemm_n * scale, gemm_n, gemm_n, ga->data(), gb->data(), gc->data(), 1.0, 0.0};
                        const Counts cnt = gemm_counts(gemm_n * scale, gemm_n, gemm_n, Dtype::fp32, Dtype::fp32);
                        w.params = {param("m", gemm_n * scale), param("n", gemm_n), param("k", gemm_n)}, w.flops = cnt.flops, w.bytes = cnt.bytes;
                        launch = [&dev, g](Stream& st) { dev.gemm(st, g); };
                        break;
                    }
                }
                s.measure(w, launch);
            }
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const auto kinds = draw(run.options.seed);
        std::string names;
        bool counts = true;
        for (int m = 0; m < kMysteries; ++m) {
            names += std::string(m ? "," : "") + kKindNames[kinds[static_cast<std::size_t>(m)]];
            const Measurement *one = run.find(mystery(m)), *two = run.find(mystery(m) + "_x2");
            counts = counts && one && two && two->workload.flops == 2 * one->workload.flops &&
                     (kinds[static_cast<std::size_t>(m)] == kFma || kinds[static_cast<std::size_t>(m)] == kChain || two->workload.bytes == 2 * one->workload.bytes ||
                      kinds[static_cast<std::size_t>(m)] == kGemm);
        }
        d.set("check.kinds", names);
        d.set("check.counts", counts);
        d.teaching = {
            "For each mystery: its AI (FLOP / bytes) against the ridge says which roof it is under; its fraction of that",
            "  roof says whether it reaches it; doubling its work says whether it pays for work or for launches.",
            "Mystery 1: AI {mystery_1.ai}, {mystery_1.roof_fraction} of its roof, {mystery_1.measured_regime}; x2 took {mystery_1.doubling_ratio}x the time.",
            "Mystery 2: AI {mystery_2.ai}, {mystery_2.roof_fraction} of its roof, {mystery_2.measured_regime}; x2 took {mystery_2.doubling_ratio}x the time.",
            "Mystery 3: AI {mystery_3.ai}, {mystery_3.roof_fraction} of its roof, {mystery_3.measured_regime}; x2 took {mystery_3.doubling_ratio}x the time.",
            "Mystery 4: AI {mystery_4.ai}, {mystery_4.roof_fraction} of its roof, {mystery_4.measured_regime}; x2 took {mystery_4.doubling_ratio}x the time.",
            "Far below both roofs with a time that doubles is latency: each step waits on the last. Near the ridge,",
            "  both roofs are close and the verdict can go either way: say which numbers you read it from.",
            "The trace questions are on a recorded A100 trace with hardware counters, shipped with lab",
            "  (`lab trace a100_cupti_counters.json.gz` finds it by name): {shipped:a100_cupti_counters.json.gz}",
        };
    }
};

}  // namespace

LAB_LESSON(NamingTheBottleneck, "02.12")
