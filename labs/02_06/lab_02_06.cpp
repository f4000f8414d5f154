// Lesson 02.06, "Why Decode Is Memory Bound": y = x W at batch 1, 2, 4, ... 1024.
//
// Decode reads W once per step whatever the batch B: at small B a step costs streaming W and the
// FLOP/s grow with B for free, until the arithmetic catches up (the crossover). W cycles through
// distinct d x d matrices >= 4x the LLC (L2 on a GPU); OpenBLAS SGEMM on a CPU, cuBLASLt BF16 on a
// GPU, and the lesson's own GEMV at B = 1. Questions: AI and regime at B = 1, the crossover, and
// a Llama-2-7B fp16 decode step's lower bound at a per-student context (lab model's formula).
#include <lab/lab.hpp>
#include <lab/cpu_vector_matrix.hpp>
#include <lab/random_fill.hpp>
#include <lab/transformer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels_02_06.hpp"

namespace {

using namespace lab;
using lab_02_06::DecodeKernels;

// The CPU GEMV: each thread streams a contiguous band of W's rows, front to back, into its own
// partial y, then one pass adds the partials: W is read exactly once, sequentially.
class DecodeCpu : public DecodeKernels {
public:
    explicit DecodeCpu(Device& dev) : dev_(dev) {}
    Launch gemv(const void* w, const void* x, float* y, int d) override {
        const std::size_t n = static_cast<std::size_t>(d);
        const int threads = dev_.threads();
        scratch_.push_back(dev_.allocate(sizeof(float) * n * static_cast<std::size_t>(threads)));
        float* partial = scratch_.back()->as<float>();
        const float *W = static_cast<const float*>(w), *X = static_cast<const float*>(x);
        const auto band = cpu::vector_matrix_band_for(dev_.facts().simd);
        return [=](Stream& st) {
            st.launch([=](int t, int nt) {
                std::size_t r0, r1;
                cpu::share(n, t, nt, r0, r1);
                band(W, X, partial + static_cast<std::size_t>(t) * n, n, r0, r1);
            });
            st.launch([=](int t, int nt) {  // y = the sum of the threads' partials, each its columns
                std::size_t j0, j1;
                cpu::share(n, t, nt, j0, j1);
                for (std::size_t j = j0; j < j1; ++j) {
                    float sum = 0;
                    for (int p = 0; p < threads; ++p) sum += partial[static_cast<std::size_t>(p) * n + j];
                    y[j] = sum;
                }
            });
        };
    }

private:
    Device& dev_;
    std::vector<BufferPtr> scratch_;
};

constexpr int kMaxBatch = 1024, kMaxQuickBatch = 256;

// The context (tokens already in the KV cache) of the student's decode-bound question: 512 to
// 4096 in steps of 512, from the seed.
std::uint64_t question_context(std::uint64_t seed) { return 512 * (1 + seed % 8); }
std::string gemm_name(int b) { return "gemm_b" + std::to_string(b); }

// What a device multiplies in: fp32 on a CPU (OpenBLAS), bf16 on a GPU's tensor cores.
struct Setup { Dtype dtype; int d; std::string pipe; };
Setup setup_for(DeviceKind kind) {
    return kind == DeviceKind::cuda ? Setup{Dtype::bf16, 8192, "bf16.tensor"} : Setup{Dtype::fp32, 2048, "fp32.simt"};
}

// The batch at which the GEMM's AI, 2Bd / (e (d + 2B)) with e bytes per element, reaches the
// ridge r: B = r e d / (2 (d - r e)); beyond d / (r e) never.
double ridge_batch(double ridge, double e, double d) { return d > ridge * e ? ridge * e * d / (2 * (d - ridge * e)) : INFINITY; }

class WhyDecodeIsMemoryBound : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.06", .title = "Why Decode Is Memory Bound", .version = "2.0.3"};
        i.objectives = {
            "Explain why LLM decode at small batch is memory bound: every weight is read once per step whatever the batch.",
            "Find the batch where a GEMM turns compute bound, from the measured time curve and from the ridge point.",
        };
        i.experiments = {
            {"gemm", "y = x W at batch 1, 2, 4, ... 1024 (256 with --quick), W cycling through a stack of d x d matrices >= 4x the LLC/L2: OpenBLAS fp32 on a CPU, cuBLASLt bf16 on a GPU"},
            {"gemv", "the lesson's own GEMV at batch 1, over the same stack"},
        };
        // Graded (configs/grading/02.06.yaml): the AI and side of the ridge at batch 1, the crossover.
        for (int b = 1; b <= kMaxBatch; b *= 2)
            i.placed.push_back({.name = gemm_name(b), .graded = b == 1 ? std::vector<std::string>{"ai", "predicted_regime"} : std::vector<std::string>{},
                                .quick = b <= kMaxQuickBatch});
        i.placed.push_back({.name = "gemv_b1"});
        i.metrics = {
            {.name = "crossover_batch", .description = "the batch where the GEMM's time starts to grow with the batch: the flat streaming time (the fastest step) meets the arithmetic's B x FLOP(1) / best FLOP/s (measured)", .graded = true},
            {.name = "ridge_batch", .description = "the batch where the GEMM's AI reaches the ridge (predicted)"},
            {.name = "question_context", .kind = MetricKind::integer, .description = "tokens in the KV cache for your decode-bound question"},
            {.name = "decode_bound_7b_s", .unit = "s", .description = "lower bound of one Llama-2-7B fp16 decode step at batch 1 and question_context: (weights + KV cache) / peak bandwidth", .graded = true},
            {.name = "check.crossover_over_prediction", .unit = "ratio", .description = "measured crossover / predicted ridge batch (for lab check)"},
        };
        i.expectations = {
            {.metric = "gemm_b1.predicted_regime", .equals = "memory_bound", .why = "at batch 1 a GEMM reads each weight for 2 FLOP"},
            {.metric = "gemv_b1.predicted_regime", .equals = "memory_bound", .why = "a GEMV reads each weight for 2 FLOP"},
            {.metric = "gemm_b256.predicted_regime", .equals = "compute_bound", .performance = true, .why = "at batch 256 the weights are reused enough"},
            {.metric = "gemv_b1.measured_regime", .equals = "memory_bound", .performance = true, .why = "the GEMV streams W from DRAM"},
            {.metric = "check.crossover_over_prediction", .min = 0.25, .max = 4, .performance = true,
             .why = "the measured crossover is within 4x of the ridge-point prediction"},
        };
        i.budget_quick_s = 15, i.budget_full_s = 60, i.roofline = true;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const Setup u = setup_for(dev.kind());
        auto k = s.kernels<DecodeKernels, DecodeCpu>();
        // The stack of distinct weight matrices: consecutive steps never find W in cache.
        const std::size_t matrix = static_cast<std::size_t>(storage_bytes(u.dtype, 1.0 * u.d * u.d));
        const std::size_t copies = rotation_copies(matrix, dev.facts().last_level_cache_bytes());
        std::vector<BufferPtr> stack;
        for (std::size_t c = 0; c < copies; ++c)  // random: tensor cores run faster on zeros
            stack.push_back(dev.allocate(matrix)), fill_random(s, *stack.back(), u.dtype, 3 + c);
        const int max_batch = s.options().quick ? kMaxQuickBatch : kMaxBatch;
        const std::size_t act = static_cast<std::size_t>(storage_bytes(u.dtype, 1.0 * max_batch * u.d));
        BufferPtr x = dev.allocate(act), y = dev.allocate(act), yv = dev.allocate(4 * static_cast<std::size_t>(u.d));
        fill_random(s, *x, u.dtype, 2);

        for (int b = 1; b <= max_batch; b *= 2) {
            if (!dev.supports(u.dtype)) {
                s.skip(gemm_name(b), std::string(to_string(u.dtype)) + " GEMM needs a newer GPU");
                continue;
            }
            std::vector<Launch> steps;
            for (auto& w : stack) {
                const Gemm g{u.dtype, b, u.d, u.d, x->data(), w->data(), y->data(), 1.0, 0.0};
                steps.push_back([&dev, g](Stream& st) { dev.gemm(st, g); });
            }
            const Counts c = gemm_counts(b, u.d, u.d, u.dtype, u.dtype);
            s.measure({.name = gemm_name(b), .description = std::string("BLAS GEMM y[B,d] = x[B,d] W[d,d], ") + to_string(u.dtype),
                       .params = {param("batch", b), param("d", u.d), param("matrices", copies)},
                       .flops = c.flops, .bytes = c.bytes, .pipe = u.pipe},
                      rotating(std::move(steps)));
        }
        // The GEMV: W and x in the GEMM's dtype, y in fp32; on the FMA pipes.
        std::vector<Launch> steps;
        for (auto& w : stack) steps.push_back(k->gemv(w->data(), x->data(), yv->as<float>(), u.d));
        s.measure({.name = "gemv_b1", .description = "the lesson's GEMV y[d] = x[d] W[d,d]",
                   .params = {param("batch", 1), param("d", u.d), param("matrices", copies)},
                   .flops = 2.0 * u.d * u.d, .bytes = storage_bytes(u.dtype, 1.0 * u.d * u.d + u.d) + 4.0 * u.d},
                  rotating(std::move(steps)));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const Setup u = setup_for(run.device_kind);
        Plot time{.name = "batch_time", .title = "Time of one step against batch",
                  .x = {.label = "batch", .log = true}, .y = {.label = "time", .unit = "s", .log = true}};
        Plot rate{.name = "batch_flops", .title = "FLOP/s against batch",
                  .x = {.label = "batch", .log = true}, .y = {.label = "achieved", .unit = "FLOP/s", .log = true}};
        PlotSeries t{.name = std::string("GEMM (") + to_string(u.dtype) + ")"}, f = t;
        for (int b = 1; b <= kMaxBatch; b *= 2)
            if (const Measurement* m = run.find(gemm_name(b))) {
                t.x.push_back(b), t.y.push_back(m->time.median);
                f.x.push_back(b), f.y.push_back(d.placement(gemm_name(b)).flops_per_s);
            }
        // The crossover, where the time starts to grow: the time plot's flat line (streaming W, the
        // fastest step) meets its rising one (B x FLOP(1) / the best FLOP/s); a FLOP/s knee read
        // 256 on a CPU's slowly bending curve whose time grew from 32. Kept within the sweep.
        double crossover = f.x.empty() ? 0 : f.x.front();
        if (const Measurement* one = run.find(gemm_name(1)); one && one->workload.flops > 0 && !t.y.empty())
            crossover = std::clamp(*std::min_element(t.y.begin(), t.y.end()) * *std::max_element(f.y.begin(), f.y.end()) / one->workload.flops,
                                   f.x.front(), f.x.back());
        const double ridge = roofline::ridge(run.ceilings.peak_flops(u.pipe), run.ceilings.peak_bandwidth());
        const double predicted = ridge_batch(ridge, bytes_per_element(u.dtype), u.d);
        d.set("crossover_batch", crossover);
        d.set("ridge_batch", std::isfinite(predicted) ? predicted : 0.0);
        const std::uint64_t context = question_context(run.options.seed);
        d.set("question_context", static_cast<double>(context));
        d.set("decode_bound_7b_s", transformer::decode_step_lower_bound_s(transformer::llama_2_7b(), transformer::precision(Dtype::fp16), 1,
                                                                           context, run.ceilings.peak_bandwidth()));
        d.set("check.crossover_over_prediction", predicted > 0 && std::isfinite(predicted) ? crossover / predicted : 0.0);
        for (Plot* p : {&time, &rate}) {
            p->series = {p == &time ? t : f};
            p->marks = {{.label = "crossover", .x = crossover, .vertical = true, .metric = "crossover_batch"},
                        {.label = "ridge batch", .x = predicted, .vertical = true}};
        }
        if (const Measurement* g = run.find("gemv_b1")) time.series.push_back({.name = "own GEMV", .x = {1}, .y = {g->time.median}, .line = false});
        d.plots = {time, rate};

        const Measurement *b1 = run.find(gemm_name(1)), *b16 = run.find(gemm_name(16));
        const double r = b1 && b16 ? b16->time.median / b1->time.median : 0;  // the time 1 -> 16: the sentence follows it
        char grew[160];
        std::snprintf(grew, sizeof grew, "From batch 1 to 16 its time went from {gemm_b1.time_s} to {gemm_b16.time_s}, %.1fx for 16x the work:", r);
        char ridge_text[64];  // to 3 figures: "batch 4.863" claims more than the ridge's inputs know
        std::snprintf(ridge_text, sizeof ridge_text, std::isfinite(predicted) ? "batch %.3g" : "no batch (the GEMM's AI never reaches the ridge)", predicted);
        d.teaching = {
            "At batch 1 the GEMM does 2 FLOP per weight it reads: AI {gemm_b1.ai}, predicted regime {gemm_b1.predicted_regime}.",
            grew,
            r < 1.5 ? "  it barely moves (it is the time to stream W), so the FLOP/s grow with the batch for free: batching is the lever."
            : r < 8 ? "  it grows far slower than the batch, so the FLOP/s still grow with it: batching is the lever."
                    : "  the FLOP/s grew little or not at all with the batch here (a busy machine does that too).",
            "The time starts to grow at the crossover, batch {crossover_batch}: extend the time plot's flat stretch (streaming W)",
            "  and its rising one (the arithmetic at the best FLOP/s) as straight lines; they meet there. The ridge point predicts " +
                std::string(ridge_text) + ".",
            "The lesson's own GEMV at batch 1 reaches {gemv_b1.bytes_per_s} ({gemv_b1.roof_fraction} of its roof).",
            "A decode step of a 7B model reads all its weights (and its KV cache) once: at a context of {question_context}",
            "  tokens, no step on this device can take less than {decode_bound_7b_s} (`lab model llama-2-7b` shows the terms).",
        };
    }
};

}  // namespace

LAB_LESSON(WhyDecodeIsMemoryBound, "02.06")
