// Lesson 02.05, "The Roofline": draw it, place kernels on it, find the ridge.
//
// The ceilings come from calibration (FMA peaks per dtype, best of read/copy/triad bandwidth).
// The lesson measures kernels on both sides of the ridge and places them:
//   read, copy, triad (streaming, AI 0 to 1/6), the k-FMA-per-element kernel at k = 8 and 64
//   (AI 2 and 16: either side of a CPU's ridge), OpenBLAS SGEMM and DGEMM (AI n/6 and n/12),
//   and the FMA peak kernels (on the flat roof).
// Questions: the ridge point; the attainable FLOP/s at a per-student AI; which side of the ridge
// each kernel sits on; the fraction of roof a kernel achieves.
#include <lab/lab.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace lab;
using namespace lab::cpu;

// The kernels placed on the roofline, in the order they are measured.
const std::vector<std::string> kKernels = {"read", "copy", "triad", "fma_k8", "fma_k64", "sgemm", "dgemm", "fma_peak_fp32"};

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
            {"ceilings", "peak FLOP/s per dtype (FMA kernels) and peak bandwidth (best of read/copy/triad), from calibration"},
            {"streaming", "read, copy and triad over at least 4x the last-level cache"},
            {"fma_per_element", "k FMAs per element loaded, k = 8 and 64: the same kernel either side of the ridge"},
            {"gemm", "OpenBLAS SGEMM and DGEMM (cuBLASLt on a GPU): compute bound"},
        };
        for (const auto& k : kKernels)
            declare_workload_metrics(i.metrics, k, {"predicted_regime", "measured_regime", "roof_fraction"});
        i.metrics.push_back({"ridge_point", "FLOP/B", MetricKind::number,
                             "fp32 ridge: peak fp32 FLOP/s / peak bandwidth", true, true});
        i.metrics.push_back({"ridge_point_fp64", "FLOP/B", MetricKind::number, "fp64 ridge", true, false});
        i.metrics.push_back({"question_ai", "FLOP/B", MetricKind::number, "the AI your attainable-FLOP/s question is about"});
        i.metrics.push_back({"attainable_flops_per_s", "FLOP/s", MetricKind::number,
                             "roof(question_ai) on the fp32 roofline", true, true});
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        i.roofline = true;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const Simd simd = dev.facts().simd == "avx512" ? Simd::avx512 : dev.facts().simd == "avx2" ? Simd::avx2 : Simd::scalar;
        const bool quick = s.options().quick;
        const int threads = dev.threads();

        // Streaming kernels: each one's own working set is at least 4x the last-level cache, so
        // read streams 4x LLC from one array, copy 2x + 2x, triad 3 x (4/3)x. Buffers come
        // zero-filled, which suits every kernel here (no denormals: 0*x + y is normal).
        const std::size_t llc = dev.facts().last_level_cache_bytes();
        const std::size_t dram = std::max<std::size_t>(4 * llc, std::size_t{256} << 20);
        auto elements = [](std::size_t bytes) { return (bytes / 4 + 127) / 128 * 128; };
        const std::size_t n_read = elements(dram), n_copy = elements(dram / 2), n_triad = elements(dram / 3);
        BufferPtr a = dev.allocate(n_read * 4), b = dev.allocate(n_copy * 4), c = dev.allocate(n_triad * 4);
        BufferPtr sink = dev.allocate(64 * 4 * static_cast<std::size_t>(threads));
        float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>(), *ps = sink->as<float>();
        auto stream_workload = [&](const std::string& name, std::size_t n, double flops_per, double bytes_per,
                                   const std::string& what) {
            Workload w;
            w.name = name;
            w.description = what;
            w.flops = flops_per * static_cast<double>(n);
            w.bytes = bytes_per * static_cast<double>(n);
            w.params = {{"n", static_cast<double>(n)}};
            return w;
        };
        // read: one add per element loaded; 4 bytes in.
        s.measure(stream_workload("read", n_read, 1, 4, "sum += a[i]"), [=](Stream& st) {
            st.launch([=](int t, int nt) { ps[16 * t] = stream_read(simd, pa, n_read, t, nt); });
        });
        // copy: no arithmetic; 4 bytes in, 4 out.
        s.measure(stream_workload("copy", n_copy, 0, 8, "a[i] = b[i]"), [=](Stream& st) {
            st.launch([=](int t, int nt) { stream_copy(simd, pa, pb, n_copy, t, nt); });
        });
        // triad: a multiply and an add; 8 bytes in, 4 out.
        s.measure(stream_workload("triad", n_triad, 2, 12, "a[i] = b[i] + s*c[i]"), [=](Stream& st) {
            st.launch([=](int t, int nt) { stream_triad(simd, pa, pb, pc, 3.0f, n_triad, t, nt); });
        });
        // k FMAs per element, in place: 2k FLOP per 8 bytes (read and write back), over 4x LLC.
        for (int k : {8, 64}) {
            Workload w = stream_workload("fma_k" + std::to_string(k), n_copy, 2.0 * k, 8,
                                         "a[i] = k chained FMAs of a[i], k = " + std::to_string(k));
            w.params.push_back({"k", static_cast<double>(k)});
            s.measure(w, [=](Stream& st) { st.launch([=](int t, int nt) { fma_per_element(simd, pa, n_copy, k, t, nt); }); });
        }

        // GEMM: 2n^3 FLOP; minimum traffic reads A and B and writes C once: 3 n^2 elements.
        for (Dtype dt : {Dtype::fp32, Dtype::fp64}) {
            if (!dev.supports(dt)) continue;
            const int m = dt == Dtype::fp32 ? (quick ? 1024 : 2048) : (quick ? 768 : 1536);
            const std::size_t elem = dt == Dtype::fp32 ? 4 : 8;
            const std::size_t bytes = static_cast<std::size_t>(m) * m * elem;
            BufferPtr ga = dev.allocate(bytes), gb = dev.allocate(bytes), gc = dev.allocate(bytes);
            Workload w;
            w.name = dt == Dtype::fp32 ? "sgemm" : "dgemm";
            w.description = std::string("BLAS GEMM C = A B, ") + to_string(dt) + ", square";
            w.flops = 2.0 * m * m * m;
            w.bytes = 3.0 * static_cast<double>(bytes);
            w.pipe = std::string(to_string(dt)) + ".simt";
            w.params = {{"n", static_cast<double>(m)}};
            Gemm g{dt, m, m, m, ga->data(), gb->data(), gc->data(), 1.0, 0.0};
            s.measure(w, [&dev, g](Stream& st) { dev.gemm(st, g); });
        }

        // The FMA peak kernel: on the flat roof by construction.
        {
            const std::int64_t it = quick ? 1'000'000 : 3'000'000;
            Workload w;
            w.name = "fma_peak_fp32";
            w.description = "12 independent FMA chains per thread (the calibration kernel)";
            w.flops = fma_peak_flops<float>(simd, it, threads);
            w.bytes = 4.0 * threads;
            w.params = {{"iterations", static_cast<double>(it)}};
            s.measure(w, [=](Stream& st) { st.launch([=](int t, int) { fma_peak<float>(simd, it, ps, t); }); });
        }
    }

    Derivation derive(const RawRun& run) const override {
        Derivation d;
        for (const auto& k : kKernels)
            if (run.find(k)) place_workload(run, k, d);
        const double bw = run.ceilings.peak_bandwidth();
        const double p32 = run.ceilings.peak_flops("fp32.simt");
        const double p64 = run.ceilings.peak_flops("fp64.simt");
        d.number("ridge_point", roofline::ridge(p32, bw), "FLOP/B");
        if (p64 > 0) d.number("ridge_point_fp64", roofline::ridge(p64, bw), "FLOP/B");
        const double ai = question_ai(run.options.seed);
        d.number("question_ai", ai, "FLOP/B");
        d.number("attainable_flops_per_s", roofline::roof(ai, p32, bw), "FLOP/s");

        d.teaching = {
            "The roof: min(peak FLOP/s, AI x peak bandwidth). The fp32 ridge, where the two meet, is at {ridge_point}",
            "  (fp64: {ridge_point_fp64}). Left of it a kernel is memory bound; right of it, compute bound.",
            "A kernel of AI {question_ai} can reach at most {attainable_flops_per_s} here.",
            "The same k-FMA kernel sits either side: k = 8 is {fma_k8.predicted_regime}, k = 64 is {fma_k64.predicted_regime}.",
            "Triad achieves {triad.roof_fraction} of its roof; SGEMM {sgemm.roof_fraction}.",
        };
        return d;
    }
};

}  // namespace

LAB_LESSON(TheRoofline, "02.05")
