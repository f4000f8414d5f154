// Lesson 02.07, "Where the Memory Went": the memory budget of serving a transformer.
// Calculator (lab/transformer.hpp, as `lab model`): Llama-2-7B's weights, KV cache and activation
// peak over batch x context; where the KV cache overtakes the weights; the largest batch in a memory
// size (GB = 1e9 B, GiB = 2^30 B). Experiment: the tiny model (fp32) prefills B sequences of T
// tokens, every buffer from a ledger tagging it weights, kv_cache, activations (a caching pool: it
// knows the peak of live bytes) or other; recorded as the workload's parameters, held against the
// calculator (docs/student.md). No cudaMemGetInfo deltas: a plan must replay without a device.
#include <lab/cpu_transformer_kernels.hpp>
#include <lab/lab.hpp>
#include <lab/transformer_forward.hpp>  // and lab/transformer.hpp

#include <array>
#include <cstdio>
#include <map>

namespace {

using namespace lab;
namespace tf = lab::transformer;
using u64 = std::uint64_t;

enum Part { kWeights, kKv, kActivations, kOther };

// Every allocation of a point goes through here, tagged by component. held: bytes allocated from
// the device; live and peak: bytes in use now and at most (activations return blocks to a pool).
struct Ledger {
    Device& dev;
    std::array<u64, 4> held{}, live{}, peak{};  // by Part
    std::vector<BufferPtr> bufs{};
    std::multimap<u64, float*> pool{};           // freed activation blocks, by size
    std::map<float*, u64> size{};
    float* get(Part part, std::size_t floats) {
        const u64 b = 4 * u64(floats);
        float* p = nullptr;
        if (auto it = pool.find(b); part == kActivations && it != pool.end()) p = it->second, pool.erase(it);
        else bufs.push_back(dev.allocate(b)), p = bufs.back()->as<float>(), held[part] += b;
        size[p] = b, peak[part] = std::max(peak[part], live[part] += b);
        return p;
    }
    void put(float* p) { live[kActivations] -= size[p], pool.emplace(size[p], p); }
};

struct Point { int batch, context; bool quick; };
const std::array<Point, 5> kPoints = {{{1, 128, true}, {4, 128, true}, {1, 512, true}, {2, 512, false}, {8, 128, false}}};
std::string point_name(const Point& p) { return "prefill_b" + std::to_string(p.batch) + "_t" + std::to_string(p.context); }
const tf::Precision kFp32 = tf::precision(Dtype::fp32), kFp16 = tf::precision(Dtype::fp16);

// The per-student questions, from the seed.
u64 q_kv_batch(u64 seed) { return u64{1} << (seed % 6); }               // 1 .. 32
u64 q_kv_context(u64 seed) { return 1024 * (1 + (seed / 6) % 8); }       // 1,024 .. 8,192 tokens
Dtype q_kv_dtype(u64 seed) { return std::array{Dtype::fp16, Dtype::fp8_e4m3, Dtype::fp32}[(seed / 48) % 3]; }
Dtype q_overtake_dtype(u64 seed) { return (seed / 5) % 2 ? Dtype::fp8_e4m3 : Dtype::fp16; }
// 2 .. 32 with an fp16 KV cache, 4 .. 64 with fp8: fp8 at batch 2 holds the bytes of fp16 at batch 1,
// whose crossing the lesson prints (kv_exceeds_weights_7b_context), so it would give the answer away.
u64 q_overtake_batch(u64 seed) { return (q_overtake_dtype(seed) == Dtype::fp8_e4m3 ? u64{4} : u64{2}) << (seed % 5); }
u64 q_memory_context(u64 seed) { return 1024 * (1 + (seed / 3) % 4); } // 1,024 .. 4,096 tokens
struct Memory { std::string text; u64 bytes; };
Memory q_memory(u64 seed) {  // 24, 32, 48 or 80, in GB (1e9 B) or in GiB (2^30 B)
    const u64 i = (seed / 7) % 8, n = std::array<u64, 4>{24, 32, 48, 80}[i / 2];
    return i % 2 ? Memory{std::to_string(n) + " GiB", n << 30} : Memory{std::to_string(n) + " GB", n * 1'000'000'000};
}

std::string fixed(double v, const char* f) { char s[32]; std::snprintf(s, sizeof s, f, v); return s; }
std::string commas(u64 v) { std::string s = std::to_string(v); for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ","); return s; }
std::string pad(std::string s, std::size_t w) { return s.size() < w ? std::string(w - s.size(), ' ') + s : s; }
u64 param_of(const Workload& w, const std::string& name) {
    return u64(w.param(name));
}

class WhereTheMemoryWent : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.07", .title = "Where the Memory Went", .version = "2.1.1"};
        i.objectives = {"Budget a model's memory: weights, KV cache and activations, over batch and context.",
                        "Find where the KV cache overtakes the weights, and the largest batch that fits a memory size."};
        i.experiments = {{"prefill", "the tiny model (fp32) prefills B x T tokens, allocations accounted: (B, T) = (1, 128), (4, 128), (1, 512); full: + (2, 512), (8, 128)"}};
        for (const auto& p : kPoints) i.placed.push_back({.name = point_name(p), .quick = p.quick});
        i.metrics = {
            {.name = "weights_7b_bytes", .unit = "B", .description = "Llama-2-7B's weights in fp16"},
            {.name = "kv_per_token_7b_bytes", .unit = "B", .description = "Llama-2-7B's KV cache per token in fp16 (2 L n_kv d_h x 2 B)"},
            {.name = "kv_exceeds_weights_7b_context", .kind = MetricKind::integer, .description = "tokens: the smallest context at which Llama-2-7B's fp16 KV cache exceeds its fp16 weights, batch 1"},
            {.name = "kv_per_token_8b_bytes", .unit = "B", .description = "Llama-3-8B's KV cache per token in fp16 (8 KV heads)"},
            {.name = "check.weights_exact", .kind = MetricKind::integer, .description = "1 when every point's accounted weight bytes equal the calculator's"},
            {.name = "check.kv_exact", .kind = MetricKind::integer, .description = "1 when every point's accounted KV-cache bytes equal the calculator's"},
            {.name = "check.activations_within", .kind = MetricKind::integer, .description = "1 when every point's activation peak is the calculator's, or above it by at most N n_q d_h fp32 elements"},
            {.name = "activations_ratio_max", .unit = "ratio", .description = "the largest accounted / calculated activation peak over the points"},
            {.name = "question_kv_batch", .kind = MetricKind::integer, .description = "sequences in your Llama-3-8B KV question"},
            {.name = "question_kv_context", .kind = MetricKind::integer, .description = "tokens per sequence in your Llama-3-8B KV question"},
            {.name = "question_kv_dtype", .kind = MetricKind::category, .description = "the KV dtype of your Llama-3-8B KV question"},
            {.name = "question_kv_bytes", .unit = "B", .description = "Llama-3-8B's KV cache at question_kv_batch x question_kv_context in question_kv_dtype", .graded = true},
            {.name = "question_overtake_batch", .kind = MetricKind::integer, .description = "the batch of your KV-exceeds-weights question"},
            {.name = "question_overtake_kv_dtype", .kind = MetricKind::category, .description = "the KV dtype of your KV-exceeds-weights question (weights fp16)"},
            {.name = "question_overtake_context", .kind = MetricKind::integer, .description = "tokens: the smallest context at which Llama-2-7B's KV cache at question_overtake_batch exceeds its fp16 weights", .graded = true},
            {.name = "question_memory", .kind = MetricKind::category, .description = "the memory size of your max-batch question (GB = 1e9 B, GiB = 2^30 B)"},
            {.name = "question_memory_bytes", .unit = "B", .description = "question_memory in bytes"},
            {.name = "question_memory_context", .kind = MetricKind::integer, .description = "tokens: the prompt (prefill) and context of your max-batch question"},
            {.name = "question_max_batch", .kind = MetricKind::integer, .description = "the largest batch of Llama-2-7B fp16 whose weights + KV cache + activation peak fit question_memory", .graded = true},
        };
        i.expectations = {
            {.metric = "check.weights_exact", .min = 1, .max = 1, .why = "the weights allocated are exactly the calculator's parameter count x 4 B"},
            {.metric = "check.kv_exact", .min = 1, .max = 1, .why = "the KV cache allocated is exactly B x T x 2 L n_kv d_h x 4 B"},
            {.metric = "check.activations_within", .min = 1, .max = 1, .why = "the pool's activation peak is the calculator's, plus at most the q the fused attention holds"},
        };
        return i;
    }

    void run(Session& s) override {
        auto k = s.kernels<TransformerKernels, cpu::TransformerKernelsCpu>();
        // The projections are the device's BLAS GEMM, as in 02.02's pass (a loop made it 27x slower).
        auto matmul = [&s](auto... args) { return tf::blas_matmul(s.device(), args...); };
        const tf::ModelConfig m = tf::tiny_model();
        const int h = int(m.hidden), I = int(m.intermediate), V = int(m.vocab), d = int(m.head_dim), heads = int(m.heads),
                  kvh = int(m.kv_heads), qw = heads * d, kvw = kvh * d;
        for (const auto& p : kPoints) {
            if (s.options().quick && !p.quick) continue;
            Ledger g{s.device()};
            const int B = p.batch, S = p.context, n = B * S;
            const std::size_t N = std::size_t(n), Sq = std::size_t(S) * qw, Skv = std::size_t(S) * kvw,
                              scores = std::size_t(heads) * S * S;  // per sequence, the masked half included
            auto W = [&](std::size_t floats) { return g.get(kWeights, floats); };
            auto A = [&](std::size_t floats) { return g.get(kActivations, floats); };
            // Token ids and weights zero-filled (token 0): values change neither bytes nor work.
            const auto* tokens = reinterpret_cast<const std::int32_t*>(g.get(kOther, N));
            struct Layer { float *an, *wq, *wk, *wv, *wo, *mn, *up, *gate, *down, *kc, *vc; };
            std::vector<Layer> layer;
            for (u64 l = 0; l < m.layers; ++l)  // the cache: each sequence's T rows, one after another
                layer.push_back({W(h), W(std::size_t(h) * qw), W(std::size_t(h) * kvw), W(std::size_t(h) * kvw), W(std::size_t(qw) * h),
                                 W(h), W(std::size_t(h) * I), W(std::size_t(h) * I), W(std::size_t(I) * h), g.get(kKv, B * Skv), g.get(kKv, B * Skv)});
            float *table = W(std::size_t(V) * h), *final_norm = W(h), *lm = W(std::size_t(h) * V);
            // The prefill in dataflow order, each tensor taken from the pool when made and put back
            // when dead. Row-wise ops run over all N = B T tokens; RoPE, cache and attention per sequence.
            std::vector<Launch> ls;  // go(launch): the next launch of the pass
            auto go = [&](Launch l) { ls.push_back(std::move(l)); };
            float* x = A(N * h);  // the residual stream, live throughout
            go(k->embedding(tokens, table, x, n, h));
            for (const Layer& y : layer) {
                float* xn = A(N * h);
                go(k->rms_norm(x, y.an, xn, n, h));
                float *q = A(B * Sq), *kk = A(B * Skv), *v = A(B * Skv);
                go(matmul(xn, y.wq, q, n, h, qw)), go(matmul(xn, y.wk, kk, n, h, kvw)), go(matmul(xn, y.wv, v, n, h, kvw));
                g.put(xn);
                for (int b = 0; b < B; ++b) {
                    go(k->rope(q + b * Sq, S, heads, d, 0)), go(k->rope(kk + b * Skv, S, kvh, d, 0));
                    go(k->cache_write(kk + b * Skv, y.kc + b * Skv, S, kvw, 0)), go(k->cache_write(v + b * Skv, y.vc + b * Skv, S, kvw, 0));
                }
                g.put(kk), g.put(v);
                float *sc = A(B * scores), *att = A(B * Sq);
                for (int b = 0; b < B; ++b)
                    go(k->attention(q + b * Sq, y.kc + b * Skv, y.vc + b * Skv, sc + b * scores, att + b * Sq, S, 0, heads, kvh, d));
                g.put(sc), g.put(q);
                float* o = A(N * h);
                go(matmul(att, y.wo, o, n, qw, h)), g.put(att);
                go(k->add(x, o, N * h)), g.put(o);
                xn = A(N * h);
                go(k->rms_norm(x, y.mn, xn, n, h));
                float *up = A(N * I), *gate = A(N * I);
                go(matmul(xn, y.up, up, n, h, I)), go(matmul(xn, y.gate, gate, n, h, I)), g.put(xn);
                float* act = A(N * I);
                go(k->silu_gate(gate, up, act, N * I)), g.put(up), g.put(gate);
                o = A(N * h);
                go(matmul(act, y.down, o, n, I, h)), g.put(act);
                go(k->add(x, o, N * h)), g.put(o);
            }
            float *xn = A(N * h), *logits = A(N * V);
            go(k->rms_norm(x, final_norm, xn, n, h)), go(matmul(xn, lm, logits, n, h, V));
            g.put(xn), g.put(logits), g.put(x);
            const tf::Totals c = tf::totals(tf::forward_ops(m, kFp32, tf::prefill(u64(B), u64(S))));
            s.measure({.name = point_name(p), .description = "the tiny model's prefill of B sequences of T tokens (fp32), allocations accounted",
                       .params = {param("batch", B), param("context", S), param("weights_B", g.held[kWeights]), param("kv_B", g.held[kKv]),
                                  param("act_peak_B", g.peak[kActivations]), param("act_held_B", g.held[kActivations]),
                                  param("other_B", g.held[kOther])},
                       .flops = double(c.flops()), .bytes = double(c.bytes)},
                      [ls](Stream& st) { for (const auto& l : ls) l(st); });
        }
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const tf::ModelConfig tiny = tf::tiny_model(), l2 = tf::llama_2_7b(), l3 = tf::llama_3_8b();
        // The experiment: each point's ledger against the calculator.
        bool weights_exact = true, kv_exact = true, within = true;
        double ratio_max = 0;  // and the rows of the teaching table:
        std::vector<std::string> rows;
        for (const auto& p : kPoints) {
            const Measurement* mm = run.find(point_name(p));
            if (!mm) continue;
            const u64 B = u64(p.batch), T = u64(p.context), w = tf::weight_bytes(tiny, Dtype::fp32),
                      kv = tf::kv_cache_bytes(tiny, Dtype::fp32, B, T), act = tf::activation_peak_bytes(tiny, kFp32, tf::prefill(B, T)),
                      q = 4 * B * T * tiny.heads * tiny.head_dim;  // fp32 q of all B T tokens
            const auto got = [&](const char* name) { return param_of(mm->workload, name); };
            weights_exact = weights_exact && got("weights_B") == w, kv_exact = kv_exact && got("kv_B") == kv;
            within = within && got("act_peak_B") >= act && got("act_peak_B") - act <= q;
            const double ratio = double(got("act_peak_B")) / double(act);  // >= 1 when within
            ratio_max = std::max(ratio_max, ratio);
            rows.push_back("  " + pad(point_name(p), 16) + pad(commas(got("weights_B")) + " / " + commas(w), 25) +
                           pad(commas(got("kv_B")) + " / " + commas(kv), 25) + pad(commas(got("act_peak_B")) + " / " + commas(act), 25) +
                           pad(fixed(ratio, "%.3f"), 7) + pad(commas(got("act_held_B")), 13) + pad(commas(got("other_B")), 8));
        }
        d.set("check.weights_exact", weights_exact), d.set("check.kv_exact", kv_exact);
        d.set("check.activations_within", within), d.set("activations_ratio_max", ratio_max);
        // The calculator.
        const u64 w7 = tf::weight_bytes(l2, Dtype::fp16), cross = tf::kv_exceeds_weights_context(l2, kFp16, 1);
        d.set("weights_7b_bytes", double(w7)), d.set("kv_exceeds_weights_7b_context", double(cross));
        d.set("kv_per_token_7b_bytes", double(tf::kv_bytes_per_token(l2, Dtype::fp16))), d.set("kv_per_token_8b_bytes", double(tf::kv_bytes_per_token(l3, Dtype::fp16)));
        // The questions, from the seed.
        const u64 seed = run.options.seed, B1 = q_kv_batch(seed), T1 = q_kv_context(seed), B2 = q_overtake_batch(seed), T3 = q_memory_context(seed);
        const Dtype kv1 = q_kv_dtype(seed), kv2 = q_overtake_dtype(seed);
        const Memory mem = q_memory(seed);
        d.set("question_kv_batch", double(B1)), d.set("question_kv_context", double(T1)), d.set("question_kv_dtype", to_string(kv1));
        d.set("question_kv_bytes", double(tf::kv_cache_bytes(l3, kv1, B1, T1)));
        d.set("question_overtake_batch", double(B2)), d.set("question_overtake_kv_dtype", to_string(kv2));
        d.set("question_overtake_context", double(tf::kv_exceeds_weights_context(l2, tf::precision(Dtype::fp16, kv2), B2)));
        d.set("question_memory", mem.text), d.set("question_memory_bytes", double(mem.bytes)), d.set("question_memory_context", double(T3));
        d.set("question_max_batch", double(tf::max_batch(l2, kFp16, T3, T3, mem.bytes)));

        // Bytes against context at batch 1, the crossing marked.
        Plot plot{.name = "memory_vs_context", .title = "Llama-2-7B fp16 at batch 1: bytes against context",
                  .x = {.label = "context (tokens)", .log = true}, .y = {.label = "memory", .unit = "B", .log = true}};
        std::vector<double> ctx, wb, kvb, actb;  // at 256 .. 131,072 tokens
        for (u64 t = 256; t <= 131072; t *= 2)
            ctx.push_back(double(t)), wb.push_back(double(w7)), kvb.push_back(double(tf::kv_cache_bytes(l2, Dtype::fp16, 1, t))),
                actb.push_back(double(tf::activation_peak_bytes(l2, kFp16, 1, t, t)));
        plot.series = {{.name = "weights", .x = ctx, .y = wb}, {.name = "KV cache", .x = ctx, .y = kvb}, {.name = "activation peak (prefill of the whole context)", .x = ctx, .y = actb}};
        plot.marks = {{.label = "KV cache > weights", .x = double(cross), .vertical = true, .metric = "kv_exceeds_weights_7b_context"}}, d.plots = {plot};

        d.teaching = {"The tiny model in fp32, every allocation accounted (B; accounted / calculator):",
                      "  " + pad("point", 16) + pad("weights", 25) + pad("KV cache", 25) + pad("activation peak", 25) + pad("ratio", 7) +
                          pad("act. held", 13) + pad("other", 8)};
        d.teaching.insert(d.teaching.end(), rows.begin(), rows.end());
        d.teaching.insert(d.teaching.end(), {
            "  Weights and KV cache: exact arithmetic. The activation peak is the calculator's while the logits are the largest",
            "  tensor; from T = 512 the fused attention holds q beside its scores and output (up to {activations_ratio_max}).",
            "  'act. held': what the pool took from the device (it reuses a block only at its size); 'other': the token ids.",
            "Llama-2-7B in fp16 (GB = 1e9 B): weights {weights_7b_bytes} at any batch and context; per token of context",
            "  {kv_per_token_7b_bytes} of KV cache (Llama-3-8B, 8 KV heads for 32: {kv_per_token_8b_bytes}). KV cache / activation",
            "  peak of a prefill of T tokens (score matrices whole), GB:",
            "  " + pad("batch", 6) + pad("T = 512", 18) + pad("T = 4,096", 18) + pad("T = 32,768", 18)});
        for (u64 b : {1, 8, 32}) {
            std::string row = "  " + pad(std::to_string(b), 6);
            for (u64 t : {512, 4096, 32768})
                row += pad(fixed(tf::kv_cache_bytes(l2, Dtype::fp16, b, t) / 1e9, "%.2f") + " / " + fixed(tf::activation_peak_bytes(l2, kFp16, b, t, t) / 1e9, "%.2f"), 18);
            d.teaching.push_back(row);
        }
        const u64 G = 141'000'000'000, Gi = u64{141} << 30;
        d.teaching.insert(d.teaching.end(), {
            "  At batch 1 the KV cache exceeds the weights from {kv_exceeds_weights_7b_context} tokens of context on.",
            "  The largest batch at T = S = 8,192 in 141 GB: " + std::to_string(tf::max_batch(l2, kFp16, 8192, 8192, G)) +
                "; in 141 GiB: " + std::to_string(tf::max_batch(l2, kFp16, 8192, 8192, Gi)) + ".",
            "Yours (`lab model`, docs/student.md): Llama-3-8B's KV cache at {question_kv_batch} x {question_kv_context} tokens in {question_kv_dtype};",
            "  the context where Llama-2-7B's KV cache at batch {question_overtake_batch} in {question_overtake_kv_dtype} exceeds its fp16 weights;",
            "  the largest batch of Llama-2-7B (fp16) at T = S = {question_memory_context} in {question_memory}."});
    }
};

}  // namespace

LAB_LESSON(WhereTheMemoryWent, "02.07")
