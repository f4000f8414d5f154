// Lesson 02.08, "Precision": bytes, speed, error.
//
// A memory-bound GEMV y = W x (4096 x 4096) whose weights are stored in fp32, fp16, bf16, int8,
// fp8 (GPUs from sm_89), MXFP4 and NVFP4 (<lab/quantize.hpp>'s layouts) and dequantised in the
// kernel, cycling through copies of W >= 4x the LLC/L2: time tracks the bytes moved, while the
// dequantising arithmetic is cheap enough. Each format's error against an fp64 reference on the
// same data; a compute-bound GEMM in each dtype the device's BLAS has.
// Questions: bytes per parameter of a (per-student) dtype, block scales included; the GEMV
// speedup from fp16 to int8; which format's error is largest; a (per-student) checkpoint's bytes.
#include <lab/cpu_quantized_gemv.hpp>
#include <lab/lab.hpp>
#include <lab/random_fill.hpp>
#include <lab/quantize.hpp>
#include <lab/transformer.hpp>

#include <bit>
#include <cmath>
#include <map>


namespace {

using namespace lab;
namespace qz = lab::quantize;

constexpr int kN = 4096;
const Dtype kFormats[] = {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::int8, Dtype::fp8_e4m3, Dtype::mxfp4, Dtype::nvfp4};
const Dtype kGemms[] = {Dtype::fp64, Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::int8};
std::string gemv_name(Dtype d) { return std::string("gemv_") + to_string(d); }
std::string gemm_name(Dtype d) { return std::string("gemm_") + to_string(d); }
bool gpu_only(Dtype d) { return d == Dtype::fp8_e4m3; }
// The lesson's weights: w(i) ~ the sum of three uniforms (bell-shaped), from a hash of i, so any
// block of them is reproduced exactly in derive().
float weight(std::uint64_t i) {
    float s = 0;
    for (std::uint64_t k = 0; k < 3; ++k) {
        std::uint64_t z = (3 * i + k) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull, z ^= z >> 31;
        s += static_cast<float>(z >> 40) / 16777216.0f;
    }
    return (s - 1.5f) * 0.05f;
}
std::vector<float> weights(std::size_t n, std::uint64_t first) {
    std::vector<float> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = weight(first + i);
    return w;
}
// The error of a format on the lesson's data: ||W_q x - W x|| / ||W x||, both in fp64, over the
// first 64 rows of W (x: the lesson's x). The same on every machine: computed once per process
// (a grader derives many records), not once per derivation.
double rel_error(Dtype d) {
    static const std::map<Dtype, double> errors = [] {
        constexpr int rows = 64;
        const auto w = weights(std::size_t(rows) * kN, 0), x = weights(kN, std::uint64_t(kN) * kN);
        std::map<Dtype, double> out;
        for (Dtype f : kFormats) {
            const qz::Encoded e = qz::encode(f, w.data(), rows, kN);
            double num = 0, den = 0;
            for (int r = 0; r < rows; ++r) {
                double exact = 0, stored = 0;
                for (int j = 0; j < kN; ++j) exact += double(w[std::size_t(r) * kN + j]) * x[j], stored += qz::decode(e, r, j) * x[j];
                num += (stored - exact) * (stored - exact), den += exact * exact;
            }
            out[f] = std::sqrt(num / den);
        }
        return out;
    }();
    return errors.at(d);
}
Dtype question_dtype(std::uint64_t seed) { return kFormats[1 + seed % 6]; }
// The checkpoint's linear layers: never bf16 (the rest of the model is bf16: the split would be
// moot) and never the bytes question's dtype (its bytes per parameter would be given away).
Dtype checkpoint_dtype(std::uint64_t seed) {
    std::vector<Dtype> from;
    for (Dtype d : {Dtype::fp8_e4m3, Dtype::int8, Dtype::int4, Dtype::mxfp4, Dtype::nvfp4})
        if (d != question_dtype(seed)) from.push_back(d);
    return from[(seed / 6) % from.size()];
}

class Precision : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.08", .title = "Precision", .version = "2.0.0"};  // 2: the checkpoint variant redrawn (never bf16 twice)
        i.objectives = {"Relate a dtype's bytes per parameter to the speed of a memory-bound kernel.",
                        "Measure what each dtype costs in error, against an fp64 reference on the same data."};
        i.experiments = {{"gemv", "y = W x, W 4096 x 4096 in each format, dequantised in the kernel, over copies >= 4x the LLC/L2"},
                         {"gemm", "a 2048^3 (CPU) or 8192^3 (GPU) GEMM in each dtype the device's BLAS has"}};
        for (Dtype d : kFormats) {
            const std::vector<std::string> dev = gpu_only(d) ? std::vector<std::string>{"cuda"} : std::vector<std::string>{"cpu", "cuda"};
            i.placed.push_back({.name = gemv_name(d), .devices = dev});
            i.metrics.push_back({.name = std::string(to_string(d)) + ".rel_error", .unit = "ratio", .description = "||W_q x - W x|| / ||W x||, fp64", .devices = dev});
        }
        for (Dtype d : kGemms) i.placed.push_back({.name = gemm_name(d), .devices = d == Dtype::fp32 || d == Dtype::fp64 ? std::vector<std::string>{"cpu", "cuda"} : std::vector<std::string>{"cuda"}});
        i.metrics.push_back({.name = "question_dtype", .kind = MetricKind::category, .description = "the dtype of your bytes question"});
        i.metrics.push_back({.name = "question_bytes_per_param", .unit = "B", .description = "its bytes per parameter, block scales included", .graded = true});
        i.metrics.push_back({.name = "speedup_fp16_int8", .unit = "ratio", .description = "time of the fp16 GEMV / time of the int8 GEMV", .graded = true});
        i.metrics.push_back({.name = "largest_error", .kind = MetricKind::category, .description = "the format with the largest rel_error", .graded = true});
        i.metrics.push_back({.name = "question_ckpt_dtype", .kind = MetricKind::category, .description = "your checkpoint's linear-layer dtype"});
        i.metrics.push_back({.name = "question_ckpt_bytes", .unit = "B", .description = "Llama-2-7B with attention and MLP weights in question_ckpt_dtype, the rest bf16", .graded = true});
        i.expectations = {
            {.metric = "gemv_fp32.predicted_regime", .equals = "memory_bound", .performance = true, .why = "a GEMV reads each weight for 2 FLOP (AI 0.5: left of any ridge but a scalar-only CPU's)"},
            {.metric = "gemv_int8.measured_regime", .equals = "memory_bound", .performance = true, .why = "dequantising one byte costs less than reading it"},
        };
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        auto k = s.kernels<QuantizedGemv, cpu::QuantizedGemvCpu>();
        // Replaying the plan launches nothing: the weights are neither made nor encoded then.
        const auto w32 = s.replaying() ? std::vector<float>{} : weights(std::size_t(kN) * kN, 0), xs = weights(kN, std::uint64_t(kN) * kN);
        BufferPtr x = dev.allocate(4 * kN), y = dev.allocate(4 * kN);
        dev.copy(dev.stream(), x->data(), xs.data(), 4 * kN);
        for (Dtype d : kFormats) {
            if (gpu_only(d) && (dev.kind() != DeviceKind::cuda || compute_capability(dev.facts()) < 89)) {
                s.skip(gemv_name(d), dev.kind() == DeviceKind::cuda ? "fp8 needs sm_89 or newer" : "fp8 GEMV runs on a GPU only");
                continue;
            }
            const qz::Encoded e = s.replaying() ? qz::Encoded{d, kN, kN, {}, {}, 1} : qz::encode(d, w32.data(), kN, kN);
            std::vector<BufferPtr> keep;
            std::vector<Launch> steps;
            for (std::size_t c = 0; c < rotation_copies(static_cast<std::size_t>(e.bytes()), dev.facts().last_level_cache_bytes()); ++c) {
                keep.push_back(dev.allocate(qz::value_bytes(d, kN, kN))), keep.push_back(dev.allocate(std::max<std::size_t>(qz::scale_bytes(d, kN, kN), 4)));
                if (!e.data.empty()) dev.copy(dev.stream(), keep[keep.size() - 2]->data(), e.data.data(), e.data.size());
                if (!e.scales.empty()) dev.copy(dev.stream(), keep.back()->data(), e.scales.data(), e.scales.size());
                steps.push_back(k->gemv({keep[keep.size() - 2]->data(), keep.back()->data(), e.global, kN, kN, d}, x->as<float>(), y->as<float>()));
            }
            dev.stream().synchronize();
            s.measure({.name = gemv_name(d), .description = std::string("y = W x, W in ") + to_string(d) + ", dequantised in the kernel",
                       .params = {param("n", kN), param("copies", keep.size() / 2)}, .flops = 2.0 * kN * kN, .bytes = e.bytes() + 8.0 * kN},
                      rotating(std::move(steps)));
        }
        const int n = dev.kind() == DeviceKind::cuda ? 8192 : 2048;
        for (Dtype d : kGemms) {
            if (!gemm_supported(dev.kind(), dev.facts(), d)) {
                if (dev.kind() == DeviceKind::cuda) s.skip(gemm_name(d), std::string(to_string(d)) + " GEMM needs a newer GPU");
                continue;
            }
            const Dtype out = d == Dtype::fp8_e4m3 ? Dtype::bf16 : d == Dtype::int8 ? Dtype::fp32 : d;  // int8 -> int32: 4 bytes
            BufferPtr a = dev.allocate(std::size_t(storage_bytes(d, 1.0 * n * n))), b = dev.allocate(std::size_t(storage_bytes(d, 1.0 * n * n))),
                      c = dev.allocate(std::size_t(storage_bytes(out, 1.0 * n * n)));
            fill_random(s, *a, d, 1), fill_random(s, *b, d, 2);  // tensor cores run faster on zeros
            const Gemm g{d, n, n, n, a->data(), b->data(), c->data(), 1.0, 0.0};
            const Counts cnt = gemm_counts(n, n, n, d, out);
            const bool simt = dev.kind() == DeviceKind::cpu || d == Dtype::fp32 || (d == Dtype::fp64 && !s.ceilings().has_flops("fp64.tensor"));
            s.measure({.name = gemm_name(d), .description = std::string("BLAS GEMM, ") + to_string(d), .params = {param("n", n)},
                       .flops = cnt.flops, .bytes = cnt.bytes, .pipe = std::string(to_string(d)) + (simt ? ".simt" : ".tensor")},
                      [&dev, g](Stream& st) { dev.gemm(st, g); });
        }
    }

    void derive(const RawRun& run, Derivation& d) const override {
        std::string worst;
        double worst_error = -1;
        for (Dtype f : kFormats)
            if (run.find(gemv_name(f))) {
                const double e = rel_error(f);
                d.set(std::string(to_string(f)) + ".rel_error", e);
                if (e > worst_error) worst_error = e, worst = to_string(f);
            }
        d.set("largest_error", worst);
        const Dtype q = question_dtype(run.options.seed), c = checkpoint_dtype(run.options.seed);
        d.set("question_dtype", std::string(to_string(q)));
        d.set("question_bytes_per_param", bytes_per_element(q));
        d.set("speedup_fp16_int8", run.at(gemv_name(Dtype::fp16)).time.median / run.at(gemv_name(Dtype::int8)).time.median);
        const auto p = transformer::param_counts(transformer::llama_2_7b());
        d.set("question_ckpt_dtype", std::string(to_string(c)));
        d.set("question_ckpt_bytes", storage_bytes(c, double(p.attention + p.mlp)) + 2.0 * double(p.embedding + p.norm + p.lm_head));
        std::string rates, errors;  // every format this run measured
        for (Dtype f : kFormats)
            if (run.find(gemv_name(f))) {
                const std::string t = to_string(f);
                rates += (rates.empty() ? "" : ", ") + t + " {" + gemv_name(f) + ".bytes_per_s}";
                errors += (errors.empty() ? "" : ", ") + t + " {" + t + ".rel_error}";
            }
        d.teaching = {
            "Each GEMV moves its weights once: compare their B/s:",
            "  " + rates + ".",
            "  Equal B/s means time tracks bytes; a format whose B/s falls is paying for its dequantising arithmetic",
            "  instead (4-bit lookups on a CPU).",
            "Storage errors (||W_q x - W x|| / ||W x||: each format's decoded weights against the fp32 ones, products in fp64;",
            "  what the format loses, not the timed kernels' rounding): " + errors + ".",
            "Yours: bytes per parameter of {question_dtype}; the fp16 -> int8 GEMV speedup; the format with the largest error;",
            "  and the bytes of Llama-2-7B with its attention and MLP weights in {question_ckpt_dtype}, the rest in bf16.",
        };
    }
};

}  // namespace

LAB_LESSON(Precision, "02.08")
