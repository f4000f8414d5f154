// Lesson 02.05, "The Roofline": draw it, place kernels on it, find the ridge.
//
// The ceilings come from calibration (FMA peaks per dtype, best of read/copy/triad bandwidth, and
// the in-place update on a CPU).
// The lesson measures kernels on both sides of the ridge and places them: read, copy, triad
// (streaming, AI 0 to 1/4), the k-FMA-per-element kernel with few and many FMAs (either side of
// the fp32 ridge), SGEMM and DGEMM (OpenBLAS on a CPU; cuBLASLt on a GPU, with TF32 and BF16
// tensor-core GEMMs too), and the FMA peak kernel (on the flat roof).
// Questions: the ridge point; the attainable FLOP/s at a per-student AI; which side of the ridge
// each kernel sits on; the fraction of roof a kernel achieves.
#include <lab/cpu_stream_kernels.hpp>
#include <lab/lab.hpp>
#include <lab/random_fill.hpp>

#include <cmath>

namespace {

using namespace lab;

// k FMAs per element: few keeps the kernel left of every fp32 ridge (AI 2); many puts it right
// of it (a CPU's fp32 ridge is near 10 FLOP/B, a GPU's near 15-20: AI 16 and 64).
constexpr int kFmaFewK = 8;
int fma_many_k(DeviceKind kind) { return kind == DeviceKind::cuda ? 256 : 64; }

// The AI a student is asked about: log-uniform in [0.3, 30] FLOP/B, two significant digits,
// from integer arithmetic on the seed so the grader re-derives it anywhere.
double question_ai(std::uint64_t seed) {
    double u = static_cast<double>(seed % 1000000) / 1e6;
    double ai = std::pow(10.0, -0.5 + 2.0 * u);
    double scale = std::pow(10.0, std::floor(std::log10(ai)) - 1);
    return std::round(ai / scale) * scale;
}

class TheRoofline : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.05", .title = "The Roofline", .version = "1.0.0"};
        i.objectives = {
            "Draw and read a roofline plot.",
            "Place a kernel on it, identify the ridge point, and determine which side of the ridge it sits on.",
        };
        i.experiments = {
            {"ceilings", "peak FLOP/s per dtype (FMA kernels) and peak bandwidth (best of read/copy/triad, and an in-place update on a CPU), from calibration"},
            {"streaming", "read, copy and triad over at least 4x the last-level cache"},
            {"fma_per_element", "k FMAs per element loaded (k = 8, and 64 on a CPU or 256 on a GPU): one kernel either side of the ridge"},
            {"gemm", "OpenBLAS SGEMM and DGEMM (cuBLASLt on a GPU): compute bound"},
        };
        // Graded = asked by configs/grading/02.05.yaml (and so withheld): the side of the ridge of
        // triad, fma_few, fma_many and sgemm, and triad's roof fraction. The other kernels'
        // regimes and roof fractions are shown: they are what the student reasons from.
        // `counted`: a GPU places it from hardware counters too (tensor cores escape the counters).
        i.placed = {
            {.name = "read", .counted = true},
            {.name = "copy"},
            {.name = "triad", .graded = {"predicted_regime", "roof_fraction"}, .counted = true},
            {.name = "fma_few", .graded = {"predicted_regime"}, .counted = true},
            {.name = "fma_many", .graded = {"predicted_regime"}, .counted = true},
            {.name = "sgemm", .graded = {"predicted_regime"}},
            {.name = "tf32gemm", .devices = {"cuda"}},
            {.name = "bf16gemm", .devices = {"cuda"}},
            {.name = "dgemm"},
            {.name = "fma_peak_fp32", .counted = true},
        };
        i.metrics = {
            {.name = "ridge_point", .unit = "FLOP/B", .description = "fp32 ridge: peak fp32 FLOP/s / peak bandwidth", .graded = true},
            {.name = "ridge_point_fp64", .unit = "FLOP/B", .description = "fp64 ridge"},
            {.name = "ridge_point_bf16_tensor", .unit = "FLOP/B", .description = "bf16 tensor-core ridge", .devices = {"cuda"}},
            {.name = "question_ai", .unit = "FLOP/B", .description = "the AI your attainable-FLOP/s question is about"},
            {.name = "attainable_flops_per_s", .unit = "FLOP/s", .description = "roof(question_ai) on the fp32 roofline", .graded = true},
        };
        i.expectations = {
            {.metric = "triad.predicted_regime", .equals = "memory_bound", .why = "triad sits left of the ridge"},
            // The ridge is measured (peak FLOP/s over bandwidth), and fma_few's AI of 2 is within a
            // factor of two of it on many CPUs: which side it falls on moves with the machine.
            {.metric = "fma_few.predicted_regime", .equals = "memory_bound", .performance = true, .why = "few FMAs per element: left of the ridge"},
            {.metric = "fma_many.predicted_regime", .equals = "compute_bound", .performance = true, .why = "many FMAs per element: right of the ridge"},
            {.metric = "sgemm.predicted_regime", .equals = "compute_bound", .why = "SGEMM sits right of the ridge"},
            // Measured regimes depend on how busy the machine is: reported, failing only with --strict.
            {.metric = "read.measured_regime", .equals = "memory_bound", .performance = true, .why = "a large read is memory bound"},
            {.metric = "fma_peak_fp32.measured_regime", .equals = "compute_bound", .performance = true, .why = "the FMA peak kernel is compute bound"},
            {.metric = "triad.bytes_per_s", .min = 0.6, .relative_to = "bandwidth.best", .performance = true, .why = "triad reaches 60% of the bandwidth ceiling"},
            {.metric = "fma_peak_fp32.flops_per_s", .min = 0.8, .relative_to = "flops.fp32.simt", .performance = true, .why = "the FMA kernel reaches 80% of the fp32 peak"},
            {.metric = "sgemm.flops_per_s", .min = 0.4, .relative_to = "flops.fp32.simt", .performance = true, .why = "SGEMM reaches 40% of the fp32 peak"},
            {.metric = "bf16gemm.flops_per_s", .min = 0.6, .relative_to = "flops.bf16.tensor", .devices = {"cuda"}, .performance = true, .why = "BF16 GEMM reaches 60% of the bf16 tensor peak"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        i.roofline = true;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool quick = s.options().quick, gpu = dev.kind() == DeviceKind::cuda;
        auto k = s.kernels<StreamKernels, cpu::StreamKernelsCpu>();
        const auto counters = counters::roofline_metric_names();

        // Streaming kernels: each one's own working set is at least 4x the last-level cache, so
        // read streams 4x LLC from one array, copy 2x + 2x, triad 3 x (4/3)x. Buffers come
        // zero-filled, which suits every kernel here (no denormals: 0*x + y is normal).
        const std::size_t dram = std::max<std::size_t>(4 * dev.facts().last_level_cache_bytes(), std::size_t{256} << 20);
        auto elements = [](std::size_t bytes) { return (bytes / 4 + 1023) / 1024 * 1024; };
        const std::size_t n_read = elements(dram), n_copy = elements(dram / 2), n_triad = elements(dram / 3);
        BufferPtr a = dev.allocate(n_read * 4), b = dev.allocate(n_copy * 4), c = dev.allocate(n_triad * 4);
        BufferPtr sink = dev.allocate(std::size_t{64} << 20);
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>(), *out = sink->as<float>();

        s.measure({.name = "read", .description = "sum += a[i]", .params = {param("n", n_read)},
                   .flops = 1.0 * n_read, .bytes = 4.0 * n_read, .counters = counters},
                  k->read(pa, n_read, out));
        s.measure({.name = "copy", .description = "a[i] = b[i]", .params = {param("n", n_copy)}, .flops = 0, .bytes = 8.0 * n_copy},
                  k->copy(pa, pb, n_copy));
        s.measure({.name = "triad", .description = "a[i] = b[i] + s*c[i]", .params = {param("n", n_triad)},
                   .flops = 2.0 * n_triad, .bytes = 12.0 * n_triad, .counters = counters},
                  k->triad(pa, pb, pc, 3.0f, n_triad));
        // k FMAs per element, in place: 2k FLOP per 8 bytes (read and write back), over 4x LLC.
        for (auto [name, kk] : {std::pair<const char*, int>{"fma_few", kFmaFewK}, {"fma_many", fma_many_k(dev.kind())}})
            s.measure({.name = name, .description = "a[i] = k chained FMAs of a[i], k = " + std::to_string(kk),
                       .params = {param("n", n_read), param("k", kk)}, .flops = 2.0 * kk * n_read, .bytes = 8.0 * n_read,
                       .counters = counters},
                      k->fma_per_element(pa, n_read, kk));

        // GEMM: 2n^3 FLOP; minimum traffic reads A and B and writes C once: 3 n^2 elements. On a
        // GPU the tensor-core dtypes too; FP64 GEMM runs on tensor cores where the device has them.
        struct G { const char* name; Dtype dtype; const char* pipe; int n_cpu, n_gpu; };
        const std::string dpipe = s.ceilings().has_flops("fp64.tensor") ? "fp64.tensor" : "fp64.simt";
        const G gemms[] = {{"sgemm", Dtype::fp32, "fp32.simt", 2048, 4096},
                           {"tf32gemm", Dtype::tf32, "tf32.tensor", 0, 8192},
                           {"bf16gemm", Dtype::bf16, "bf16.tensor", 0, 8192},
                           {"dgemm", Dtype::fp64, dpipe.c_str(), 1536, 4096}};
        for (const auto& g : gemms) {
            const int n = (gpu ? g.n_gpu : g.n_cpu) / (quick ? 2 : 1);
            if (n == 0 || !dev.supports(g.dtype)) {
                s.skip(g.name, std::string(to_string(g.dtype)) + " GEMM needs " + (gpu ? "a newer GPU" : "a GPU's tensor cores"));
                continue;
            }
            const std::size_t bytes = static_cast<std::size_t>(storage_bytes(g.dtype, 1.0 * n * n));
            BufferPtr ga = dev.allocate(bytes), gb = dev.allocate(bytes), gc = dev.allocate(bytes);
            fill_random(s, *ga, g.dtype, 1), fill_random(s, *gb, g.dtype, 2);  // tensor cores run faster on zeros
            const Counts counts = gemm_counts(n, n, n, g.dtype, g.dtype);
            const Gemm spec{g.dtype, n, n, n, ga->data(), gb->data(), gc->data(), 1.0, 0.0};
            s.measure({.name = g.name, .description = std::string("BLAS GEMM C = A B, ") + to_string(g.dtype) + ", square",
                       .params = {param("n", n)}, .flops = counts.flops, .bytes = counts.bytes, .pipe = g.pipe},
                      [&dev, spec](Stream& st) { dev.gemm(st, spec); });
        }

        // The FMA peak kernel: on the flat roof by construction.
        const std::int64_t it = gpu ? (quick ? 16384 : 65536) : (quick ? 1'000'000 : 3'000'000);
        s.measure({.name = "fma_peak_fp32", .description = "independent FMA chains on every thread (the calibration kernel)",
                   .params = {param("iterations", it)},
                   .flops = stream_kernels::fma_peak_flops(dev.kind(), dev.facts(), dev.threads(), it),
                   .bytes = stream_kernels::fma_peak_bytes(dev.kind(), dev.facts(), dev.threads()), .counters = counters},
                  k->fma_peak(out, it));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const double bw = run.ceilings.peak_bandwidth();
        const double p32 = run.ceilings.peak_flops("fp32.simt"), p64 = run.ceilings.peak_flops("fp64.simt");
        d.set("ridge_point", roofline::ridge(p32, bw));
        if (p64 > 0) d.set("ridge_point_fp64", roofline::ridge(p64, bw));
        if (run.ceilings.has_flops("bf16.tensor")) d.set("ridge_point_bf16_tensor", roofline::ridge(run.ceilings.peak_flops("bf16.tensor"), bw));
        const double ai = question_ai(run.options.seed);
        d.set("question_ai", ai);
        d.set("attainable_flops_per_s", roofline::roof(ai, p32, bw));

        d.teaching = {
            "The roof: min(peak FLOP/s, AI x peak bandwidth). The fp32 ridge, where the two meet, is at {ridge_point}",
            "  (fp64: {ridge_point_fp64}). Left of it a kernel is memory bound; right of it, compute bound.",
            "A kernel of AI {question_ai} can reach at most {attainable_flops_per_s} here.",
            "The same k-FMA kernel sits either side: few FMAs is {fma_few.predicted_regime}, many is {fma_many.predicted_regime}.",
            "Triad achieves {triad.roof_fraction} of its roof; SGEMM {sgemm.roof_fraction}.",
        };
        if (d.find("triad.counted_ai"))
            d.teaching.push_back("Hardware counters agree? Triad's counted AI is {triad.counted_ai} (analytic {triad.ai}); "
                                 "many-FMA's {fma_many.counted_ai} (analytic {fma_many.ai}).");
    }
};

}  // namespace

LAB_LESSON(TheRoofline, "02.05")
