// Lesson 02.04, "Arithmetic Intensity": predict the regime before running.
// mixbench's sweep: one kernel doing k fused multiply-adds per element it loads, in place, over
// an array at least 4x the last-level cache (L2 on a GPU), k = 1, 2, 4 ... 1024 (128 with
// --quick), in each dtype the device has FMA units for (fp32 and fp64; fp16 and bf16 pairs on a
// GPU). Its AI is k/e FLOP/B (2k FLOP per element, e bytes read and e written), so one k sweeps
// the kernel across the ridge: the FLOP/s grow with k while bandwidth limits them, then flatten.
// The knee is found from the data (where the rising FLOP/s meet their plateau) and reported next
// to the ridge point (peak FLOP/s / peak bandwidth) it is predicted by.
// Questions: the AI and predicted regime of a (per-student) named kernel, and the measured knee.
#include <lab/cpu_kernels.hpp>
#include <lab/lab.hpp>

#include <algorithm>
#include <cmath>

#include "kernels_02_04.hpp"

namespace {

using namespace lab;
using lab_02_04::IntensityKernels;

class IntensityCpu : public IntensityKernels {
public:
    explicit IntensityCpu(Device& dev) : simd_(dev.facts().simd) {}
    Launch fma_sweep(void* a, std::size_t n, int k, Dtype dtype) override {
        const cpu::Simd s = simd_ == "avx512" ? cpu::Simd::avx512 : simd_ == "avx2" ? cpu::Simd::avx2 : cpu::Simd::scalar;
        if (dtype == Dtype::fp64)
            return [=](Stream& st) { st.launch([=](int t, int nt) { cpu::fma_per_element(s, static_cast<double*>(a), n, k, t, nt); }); };
        if (dtype != Dtype::fp32)  // thrown when run, not when planned: a plan replays a GPU's sweep here
            return [](Stream&) { throw std::invalid_argument("lab_02_04: a CPU sweeps fp32 and fp64 only"); };
        return [=](Stream& st) { st.launch([=](int t, int nt) { cpu::fma_per_element(s, static_cast<float*>(a), n, k, t, nt); }); };
    }

private:
    std::string simd_;  // the variant the device chose (its facts say which)
};

constexpr int kMaxK = 1024, kMaxQuickK = 128;
constexpr double kKneeTolerance = 0.15;
struct Sweep { Dtype dtype; std::vector<std::string> devices; };
const Sweep kSweeps[] = {{Dtype::fp32, {"cpu", "cuda"}}, {Dtype::fp64, {"cpu", "cuda"}}, {Dtype::fp16, {"cuda"}}, {Dtype::bf16, {"cuda"}}};
std::string point(Dtype t, int k) { return std::string(to_string(t)) + "_k" + std::to_string(k); }
std::string pipe_of(Dtype t) { return std::string(to_string(t)) + ".simt"; }
bool runs_on(const Sweep& s, DeviceKind kind) { return std::find(s.devices.begin(), s.devices.end(), to_string(kind)) != s.devices.end(); }

// Named kernels and their analytic AI (every operand moved once; docs/arithmetic.md).
struct Named { std::string kernel; Dtype dtype; double n; };
double named_ai(const Named& q) {
    const double e = bytes_per_element(q.dtype);
    if (q.kernel == "vector_add") return 1 / (3 * e);  // c = a + b: 1 FLOP, 3 elements moved
    if (q.kernel == "saxpy") return 2 / (3 * e);       // y = a x + y: 2 FLOP; x, y read, y written
    if (q.kernel == "dot") return 2 / (2 * e);         // sum x y: 2 FLOP, 2 elements read
    if (q.kernel == "gemv") return gemv_counts(q.n, q.n, q.dtype, q.dtype).ai();
    return gemm_counts(q.n, q.n, q.n, q.dtype, q.dtype).ai();
}
// The student's named kernel: one the seed picks among those whose AI is not within 1.5x of
// this device's ridge in its dtype, so the regime question has one fair answer.
Named question_for(const RawRun& run) {
    std::vector<Named> all, fair;
    for (Dtype t : {Dtype::fp32, Dtype::fp64}) {
        for (const char* k : {"vector_add", "saxpy", "dot"}) all.push_back({k, t, 1 << 20});
        all.push_back({"gemv", t, 4096});
        for (double n : {8, 16, 32, 64, 128, 256, 1024}) all.push_back({"gemm", t, n});
    }
    for (const auto& q : all) {
        const double ridge = run.ceilings.peak_flops(pipe_of(q.dtype)) / run.ceilings.peak_bandwidth();
        if (!(ridge > 0) || std::fabs(std::log(named_ai(q) / ridge)) > std::log(1.5)) fair.push_back(q);
    }
    const auto& from = fair.empty() ? all : fair;
    return from[run.options.seed % from.size()];
}

class ArithmeticIntensity : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.04", .title = "Arithmetic Intensity", .version = "1.0.1"};
        i.objectives = {"Compute a kernel's arithmetic intensity from its FLOPs and its minimum bytes moved.",
                        "Predict a kernel's regime from its AI and the ridge point, then find the turn in measured data."};
        i.experiments = {{"sweep", "k FMAs per element loaded, k = 1 .. 1024 (128 with --quick), over >= 4x the LLC/L2, "
                                   "in fp32 and fp64 (and fp16, bf16 pairs on a GPU)"}};
        for (const auto& s : kSweeps) {
            for (int k = 1; k <= kMaxK; k *= 2) i.placed.push_back({.name = point(s.dtype, k), .devices = s.devices, .quick = k <= kMaxQuickK});
            const std::string t = to_string(s.dtype);
            i.metrics.push_back({.name = t + ".knee_ai", .unit = "FLOP/B", .description = "where the " + t + " sweep's FLOP/s stop growing with AI (measured)",
                                 .graded = s.dtype == Dtype::fp32, .devices = s.devices});
            i.metrics.push_back({.name = t + ".ridge_ai", .unit = "FLOP/B", .description = "the " + t + " ridge point: peak " + t + " FLOP/s / peak bandwidth", .devices = s.devices});
            if (s.dtype != Dtype::fp32)  // fp32's would give its graded knee away (times the ridge, which is shown)
                i.metrics.push_back({.name = t + ".knee_over_ridge", .unit = "ratio", .description = "measured knee / ridge point", .devices = s.devices});
        }
        i.metrics.push_back({.name = "check.sweep_counts", .kind = MetricKind::integer, .description = "1 when every sweep point states 2kn FLOP and 2en bytes"});
        i.metrics.push_back({.name = "question_kernel", .kind = MetricKind::category, .description = "the named kernel of your questions"});
        i.metrics.push_back({.name = "question_dtype", .kind = MetricKind::category, .description = "its dtype"});
        i.metrics.push_back({.name = "question_n", .kind = MetricKind::integer, .description = "its size (n elements; n x n for gemv and gemm)"});
        i.metrics.push_back({.name = "question_ai", .unit = "FLOP/B", .description = "its arithmetic intensity", .graded = true});
        i.metrics.push_back({.name = "question_regime", .kind = MetricKind::category, .description = "its predicted regime on this device", .graded = true});
        i.expectations = {
            {.metric = "check.sweep_counts", .min = 1, .max = 1, .why = "each point's counts follow from k and the dtype"},
            {.metric = "fp32_k1.predicted_regime", .equals = "memory_bound", .why = "AI 0.25 FLOP/B is left of any ridge"},
            {.metric = "fp32_k1.measured_regime", .equals = "memory_bound", .performance = true, .why = "one FMA per 8 bytes waits on memory"},
            {.metric = "fp32_k128.measured_regime", .equals = "compute_bound", .performance = true, .why = "AI 32 FLOP/B is right of the ridge"},
        };
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        auto k = s.kernels<IntensityKernels, IntensityCpu>();
        // One array, at least 4x the LLC (and 64 MiB), reused by every point: each dtype fills it.
        const std::size_t bytes = std::max<std::size_t>(4 * dev.facts().last_level_cache_bytes(), std::size_t{64} << 20) / 8192 * 8192;
        BufferPtr a = dev.allocate(bytes);
        const int max_k = s.options().quick ? kMaxQuickK : kMaxK;
        for (const auto& sw : kSweeps) {
            if (!runs_on(sw, dev.kind())) continue;
            const double e = bytes_per_element(sw.dtype);
            const std::size_t n = static_cast<std::size_t>(bytes / e);
            for (int kk = 1; kk <= max_k; kk *= 2) {
                if (sw.dtype == Dtype::bf16 && compute_capability(dev.facts()) < 80) {
                    s.skip(point(sw.dtype, kk), "bf16 FMA pairs need sm_80 or newer");
                    continue;
                }
                s.measure({.name = point(sw.dtype, kk), .description = std::to_string(kk) + " chained " + to_string(sw.dtype) + " FMAs per element, in place",
                           .params = {param("k", kk), param("n", n)}, .flops = 2.0 * kk * n, .bytes = 2 * e * n, .pipe = pipe_of(sw.dtype)},
                          k->fma_sweep(a->data(), n, kk, sw.dtype));
            }
        }
    }

    void derive(const RawRun& run, Derivation& d) const override {
        bool counts = true;
        Plot plot{.name = "intensity", .title = "FLOP/s against arithmetic intensity",
                  .x = {.label = "arithmetic intensity", .unit = "FLOP/B", .log = true}, .y = {.label = "achieved", .unit = "FLOP/s", .log = true}};
        const double bw = run.ceilings.peak_bandwidth();
        for (const auto& sw : kSweeps) {
            if (!runs_on(sw, run.device_kind)) continue;
            const std::string t = to_string(sw.dtype);
            const double e = bytes_per_element(sw.dtype), peak = run.ceilings.peak_flops(pipe_of(sw.dtype));
            PlotSeries measured{.name = t}, roof{.name = t + " roof"};
            for (int kk = 1; kk <= kMaxK; kk *= 2)
                if (const Measurement* m = run.find(point(sw.dtype, kk))) {
                    const double n = m->workload.param("n");
                    counts = counts && m->workload.flops == 2.0 * kk * n && m->workload.bytes == 2 * e * n;
                    measured.x.push_back(kk / e), measured.y.push_back(d.placement(m->workload.name).flops_per_s);
                    roof.x.push_back(kk / e), roof.y.push_back(std::min(peak, kk / e * bw));
                }
            if (measured.x.empty()) continue;
            const double ridge = peak > 0 && bw > 0 ? peak / bw : 0;
            // The roof bends at the ridge: drawn through it, not as a chord between two sampled AIs.
            if (auto at = std::lower_bound(roof.x.begin(), roof.x.end(), ridge); at > roof.x.begin() && at < roof.x.end() && *at != ridge)
                roof.y.insert(roof.y.begin() + (at - roof.x.begin()), peak), roof.x.insert(at, ridge);
            // The knee: where the rising FLOP/s, extended, meet their plateau (within 15% of the best
            // point: a busy machine's plateau is ragged); the first AI when the sweep starts on it.
            double knee = measured.x.front();
            if (auto kn = find_knee(measured.x, measured.y, kKneeTolerance)) knee = kn->x;
            d.set(t + ".knee_ai", knee);
            d.set(t + ".ridge_ai", ridge);
            if (sw.dtype != Dtype::fp32) d.set(t + ".knee_over_ridge", ridge > 0 ? knee / ridge : 0.0);
            plot.series.push_back(measured);
            if (peak > 0) plot.series.push_back(roof);
            if (sw.dtype == Dtype::fp32) {
                plot.marks.push_back({.label = "fp32 knee", .x = knee, .vertical = true, .metric = "fp32.knee_ai"});
                plot.marks.push_back({.label = "fp32 ridge", .x = ridge, .vertical = true});
            }
        }
        d.plots = {plot};
        d.set("check.sweep_counts", counts);
        const Named q = question_for(run);
        const double ai = named_ai(q), ridge = run.ceilings.peak_flops(pipe_of(q.dtype)) / bw;
        d.set("question_kernel", q.kernel);
        d.set("question_dtype", std::string(to_string(q.dtype)));
        d.set("question_n", q.n);
        d.set("question_ai", ai);
        d.set("question_regime", std::string(ai < ridge ? "memory_bound" : "compute_bound"));
        d.teaching = {
            "The sweep's AI is k/e: k FMAs (2k FLOP) per element of e bytes read and written.",
            "fp32: the FLOP/s stop growing at AI {fp32.knee_ai}; the ridge point (peak FLOP/s / peak bandwidth) predicts {fp32.ridge_ai}.",
            "fp64: they stop at {fp64.knee_ai}, against a ridge of {fp64.ridge_ai} (the knee at {fp64.knee_over_ridge} times the ridge).",
            "The knee sits near, not on, the ridge: at the ridge a kernel needs both roofs at once, and memory and",
            "  arithmetic do not overlap perfectly, so the turn is rounded; a busy machine moves it too.",
            "Yours: the AI of {question_kernel} in {question_dtype} (n = {question_n}), and its regime on this device.",
        };
    }
};

}  // namespace

LAB_LESSON(ArithmeticIntensity, "02.04")
