// Lesson 02.05, "The Roofline": draw it, place kernels on it, find the ridge.
//
// The ceilings come from calibration (FMA peaks per dtype, best of read/copy/triad bandwidth).
// The lesson measures kernels on both sides of the ridge and places them:
//   read, copy, triad (streaming, AI 0 to 1/4), the k-FMA-per-element kernel with few and many
//   FMAs (either side of the fp32 ridge), SGEMM and DGEMM (OpenBLAS on a CPU; cuBLASLt on a GPU,
//   with TF32 and BF16 tensor-core GEMMs too), and the FMA peak kernel (on the flat roof).
// Questions: the ridge point; the attainable FLOP/s at a per-student AI; which side of the ridge
// each kernel sits on; the fraction of roof a kernel achieves.
#include <lab/cpu_kernels.hpp>
#include <lab/lab.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels_02_05.hpp"

namespace {

using namespace lab;
using namespace lab::cpu;

// The kernels placed on the roofline, in the order they are measured, and the devices that run
// them (tensor-core GEMMs need a GPU).
struct Placed {
    const char* name;
    bool gpu_only;
};
const std::vector<Placed> kKernels = {{"read", false},     {"copy", false},      {"triad", false},
                                      {"fma_few", false},  {"fma_many", false},  {"sgemm", false},
                                      {"tf32gemm", true},  {"bf16gemm", true},   {"dgemm", false},
                                      {"fma_peak_fp32", false}};

// k FMAs per element: few keeps the kernel left of every fp32 ridge (AI 2), many puts it right of
// it (a CPU's fp32 ridge is near 10 FLOP/B, a GPU's near 15-20: AI 16 and 64).
// The kernels a GPU also places from hardware counters (GEMMs run on tensor cores, which these
// counters do not see).
bool counted(const std::string& name) {
    return name == "read" || name == "triad" || name == "fma_few" || name == "fma_many" || name == "fma_peak_fp32";
}

int fma_many_k(DeviceKind kind) { return kind == DeviceKind::cuda ? 256 : 64; }
constexpr int kFmaFewK = 8;

// The lesson's streaming and FMA kernels on one device, each returning a Launch.
struct Kernels {
    std::function<Launch(const float* a, std::size_t n)> read;
    std::function<Launch(float* a, const float* b, std::size_t n)> copy;
    std::function<Launch(float* a, const float* b, const float* c, std::size_t n)> triad;
    std::function<Launch(float* a, std::size_t n, int k)> fma_per_element;
    std::function<Launch(std::int64_t iterations)> fma_peak;
    std::function<double(std::int64_t iterations)> fma_peak_flops;
    double fma_peak_bytes = 0;
};

Kernels cpu_kernels(Device& dev, float* sink) {
    const Simd simd = detect_simd();
    const int threads = dev.threads();
    Kernels k;
    k.read = [=](const float* a, std::size_t n) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int nt) { sink[16 * t] = stream_read(simd, a, n, t, nt); }); };
    };
    k.copy = [=](float* a, const float* b, std::size_t n) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int nt) { stream_copy(simd, a, b, n, t, nt); }); };
    };
    k.triad = [=](float* a, const float* b, const float* c, std::size_t n) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int nt) { stream_triad(simd, a, b, c, 3.0f, n, t, nt); }); };
    };
    k.fma_per_element = [=](float* a, std::size_t n, int kk) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int nt) { fma_per_element(simd, a, n, kk, t, nt); }); };
    };
    k.fma_peak = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) { st.launch([=](int t, int) { fma_peak<float>(simd, it, sink, t); }); };
    };
    k.fma_peak_flops = [=](std::int64_t it) { return fma_peak_flops<float>(simd, it, threads); };
    k.fma_peak_bytes = 4.0 * threads;
    return k;
}

Kernels gpu_kernels(Session& s, float* sink) {
    const auto* g = &s.companion<lab_02_05::CudaKernels>(LAB_02_05_KERNELS_SYMBOL);
    const unsigned blocks = static_cast<unsigned>(std::max(1, s.device().facts().compute_units)) * 8;
    Kernels k;
    k.read = [=](const float* a, std::size_t n) -> Launch {
        return [=](Stream& st) { g->read(st.native_handle(), a, n, sink, blocks); };
    };
    k.copy = [=](float* a, const float* b, std::size_t n) -> Launch {
        return [=](Stream& st) { g->copy(st.native_handle(), a, b, n, blocks); };
    };
    k.triad = [=](float* a, const float* b, const float* c, std::size_t n) -> Launch {
        return [=](Stream& st) { g->triad(st.native_handle(), a, b, c, 3.0f, n, blocks); };
    };
    k.fma_per_element = [=](float* a, std::size_t n, int kk) -> Launch {
        return [=](Stream& st) { g->fma_per_element(st.native_handle(), a, n, kk, blocks); };
    };
    k.fma_peak = [=](std::int64_t it) -> Launch {
        return [=](Stream& st) { g->fma_peak(st.native_handle(), sink, it, blocks); };
    };
    k.fma_peak_flops = [=](std::int64_t it) { return g->fma_peak_flops(it, blocks); };
    k.fma_peak_bytes = 4.0 * blocks * 256;
    return k;
}

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
        LessonInfo i;
        i.id = "02.05";
        i.title = "The Roofline";
        i.version = "1.0.0";
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
        auto graded = [](const std::string& name) -> std::vector<std::string> {
            if (name == "triad") return {"predicted_regime", "roof_fraction"};
            if (name == "fma_few" || name == "fma_many" || name == "sgemm") return {"predicted_regime"};
            return {};
        };
        for (const auto& k : kKernels) {
            std::size_t first = i.metrics.size();
            declare_workload_metrics(i.metrics, k.name, graded(k.name), false, counted(k.name));
            if (k.gpu_only)
                for (std::size_t j = first; j < i.metrics.size(); ++j) i.metrics[j].devices = {"cuda"};
        }
        i.metrics.push_back({"ridge_point", "FLOP/B", MetricKind::number,
                             "fp32 ridge: peak fp32 FLOP/s / peak bandwidth", true, true});
        i.metrics.push_back({"ridge_point_fp64", "FLOP/B", MetricKind::number, "fp64 ridge", true, false});
        i.metrics.push_back({"ridge_point_bf16_tensor", "FLOP/B", MetricKind::number, "bf16 tensor-core ridge", true, false,
                             {"cuda"}});
        i.metrics.push_back({"question_ai", "FLOP/B", MetricKind::number, "the AI your attainable-FLOP/s question is about"});
        i.metrics.push_back({"attainable_flops_per_s", "FLOP/s", MetricKind::number,
                             "roof(question_ai) on the fp32 roofline", true, true});
        i.expectations = {
            {"triad.predicted_regime", "memory_bound", -1e308, 1e308, "", {"cpu", "cuda"}, false, "triad sits left of the ridge"},
            // The ridge is measured (peak FLOP/s over bandwidth), and fma_few's AI of 2 is within a
            // factor of two of it on many CPUs: which side it falls on moves with the machine.
            {"fma_few.predicted_regime", "memory_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true, "few FMAs per element: left of the ridge"},
            {"fma_many.predicted_regime", "compute_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true, "many FMAs per element: right of the ridge"},
            {"sgemm.predicted_regime", "compute_bound", -1e308, 1e308, "", {"cpu", "cuda"}, false, "SGEMM sits right of the ridge"},
            // Measured regimes depend on how busy the machine is: reported, failing only with --strict.
            {"read.measured_regime", "memory_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true, "a large read is memory bound"},
            {"fma_peak_fp32.measured_regime", "compute_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true, "the FMA peak kernel is compute bound"},
            {"triad.bytes_per_s", "", 0.6, 1e308, "bandwidth.best", {"cpu", "cuda"}, true, "triad reaches 60% of the bandwidth ceiling"},
            {"fma_peak_fp32.flops_per_s", "", 0.8, 1e308, "flops.fp32.simt", {"cpu", "cuda"}, true, "the FMA kernel reaches 80% of the fp32 peak"},
            {"sgemm.flops_per_s", "", 0.4, 1e308, "flops.fp32.simt", {"cpu", "cuda"}, true, "SGEMM reaches 40% of the fp32 peak"},
            {"bf16gemm.flops_per_s", "", 0.6, 1e308, "flops.bf16.tensor", {"cuda"}, true, "BF16 GEMM reaches 60% of the bf16 tensor peak"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        i.roofline = true;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool quick = s.options().quick;
        const bool gpu = dev.kind() == DeviceKind::cuda;

        // Streaming kernels: each one's own working set is at least 4x the last-level cache, so
        // read streams 4x LLC from one array, copy 2x + 2x, triad 3 x (4/3)x. Buffers come
        // zero-filled, which suits every kernel here (no denormals: 0*x + y is normal).
        const std::size_t llc = dev.facts().last_level_cache_bytes();
        const std::size_t dram = std::max<std::size_t>(4 * llc, std::size_t{256} << 20);
        auto elements = [](std::size_t bytes) { return (bytes / 4 + 1023) / 1024 * 1024; };
        const std::size_t n_read = elements(dram), n_copy = elements(dram / 2), n_triad = elements(dram / 3);
        BufferPtr a = dev.allocate(n_read * 4), b = dev.allocate(n_copy * 4), c = dev.allocate(n_triad * 4);
        BufferPtr sink = dev.allocate(std::size_t{64} << 20);
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>();
        const Kernels k = gpu ? gpu_kernels(s, sink->as<float>()) : cpu_kernels(dev, sink->as<float>());

        auto stream_workload = [&](const std::string& name, std::size_t n, double flops_per, double bytes_per,
                                   const std::string& what) {
            Workload w;
            w.name = name;
            w.description = what;
            w.flops = flops_per * static_cast<double>(n);
            w.bytes = bytes_per * static_cast<double>(n);
            w.params = {{"n", static_cast<double>(n)}};
            if (counted(name)) w.counters = counters::roofline_metric_names();
            return w;
        };
        // read: one add per element loaded; 4 bytes in.
        s.measure(stream_workload("read", n_read, 1, 4, "sum += a[i]"), k.read(pa, n_read));
        // copy: no arithmetic; 4 bytes in, 4 out.
        s.measure(stream_workload("copy", n_copy, 0, 8, "a[i] = b[i]"), k.copy(pa, pb, n_copy));
        // triad: a multiply and an add; 8 bytes in, 4 out.
        s.measure(stream_workload("triad", n_triad, 2, 12, "a[i] = b[i] + s*c[i]"), k.triad(pa, pb, pc, n_triad));
        // k FMAs per element, in place: 2k FLOP per 8 bytes (read and write back), over 4x LLC.
        for (auto [name, kk] : {std::pair<const char*, int>{"fma_few", kFmaFewK}, {"fma_many", fma_many_k(dev.kind())}}) {
            Workload w = stream_workload(name, n_read, 2.0 * kk, 8, "a[i] = k chained FMAs of a[i], k = " + std::to_string(kk));
            w.params.push_back({"k", static_cast<double>(kk)});
            s.measure(w, k.fma_per_element(pa, n_read, kk));
        }

        // GEMM: 2n^3 FLOP; minimum traffic reads A and B and writes C once: 3 n^2 elements. On a
        // GPU the tensor-core dtypes too; FP64 GEMM runs on tensor cores where the device has them.
        struct G { const char* name; Dtype dtype; std::size_t elem; const char* pipe; int n_cpu, n_gpu; };
        const std::string dpipe = s.ceilings().has_flops("fp64.tensor") ? "fp64.tensor" : "fp64.simt";
        const G gemms[] = {{"sgemm", Dtype::fp32, 4, "fp32.simt", 2048, 4096},
                           {"tf32gemm", Dtype::tf32, 4, "tf32.tensor", 0, 8192},
                           {"bf16gemm", Dtype::bf16, 2, "bf16.tensor", 0, 8192},
                           {"dgemm", Dtype::fp64, 8, dpipe.c_str(), 1536, 4096}};
        for (const auto& g : gemms) {
            int m = gpu ? g.n_gpu : g.n_cpu;
            if (m == 0 || !dev.supports(g.dtype)) continue;
            if (quick) m /= 2;
            const std::size_t bytes = static_cast<std::size_t>(m) * m * g.elem;
            BufferPtr ga = dev.allocate(bytes), gb = dev.allocate(bytes), gc = dev.allocate(bytes);
            Workload w;
            w.name = g.name;
            w.description = std::string("BLAS GEMM C = A B, ") + to_string(g.dtype) + ", square";
            w.flops = 2.0 * m * m * m;
            w.bytes = 3.0 * static_cast<double>(bytes);
            w.pipe = g.pipe;
            w.params = {{"n", static_cast<double>(m)}};
            Gemm spec{g.dtype, m, m, m, ga->data(), gb->data(), gc->data(), 1.0, 0.0};
            s.measure(w, [&dev, spec](Stream& st) { dev.gemm(st, spec); });
        }

        // The FMA peak kernel: on the flat roof by construction.
        {
            const std::int64_t it = gpu ? (quick ? 16384 : 65536) : (quick ? 1'000'000 : 3'000'000);
            Workload w;
            w.name = "fma_peak_fp32";
            w.description = "independent FMA chains on every thread (the calibration kernel)";
            w.flops = k.fma_peak_flops(it);
            w.bytes = k.fma_peak_bytes;
            w.params = {{"iterations", static_cast<double>(it)}};
            w.counters = counters::roofline_metric_names();
            s.measure(w, k.fma_peak(it));
        }
    }

    Derivation derive(const RawRun& run) const override {
        Derivation d;
        for (const auto& k : kKernels)
            if (run.find(k.name)) place_workload(run, k.name, d);
        const double bw = run.ceilings.peak_bandwidth();
        const double p32 = run.ceilings.peak_flops("fp32.simt");
        const double p64 = run.ceilings.peak_flops("fp64.simt");
        d.number("ridge_point", roofline::ridge(p32, bw), "FLOP/B");
        if (p64 > 0) d.number("ridge_point_fp64", roofline::ridge(p64, bw), "FLOP/B");
        if (run.ceilings.has_flops("bf16.tensor"))
            d.number("ridge_point_bf16_tensor", roofline::ridge(run.ceilings.peak_flops("bf16.tensor"), bw), "FLOP/B");
        const double ai = question_ai(run.options.seed);
        d.number("question_ai", ai, "FLOP/B");
        d.number("attainable_flops_per_s", roofline::roof(ai, p32, bw), "FLOP/s");

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
        return d;
    }
};

}  // namespace

LAB_LESSON(TheRoofline, "02.05")
