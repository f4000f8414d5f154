// Lesson 02.02, "FLOPs and Bytes": the resource accounting of a transformer forward pass.
//
// The built-in tiny model (lab/transformer.hpp) runs a prefill of S tokens with random weights,
// op by op, each op over all its layers a workload whose FLOP and byte counts are
// transformer::forward_ops' (the arithmetic `lab model` prints): the ops sum exactly to the
// model's totals. Then the whole prefill, and one decode step at context S, each end to end.
// Questions (from the same arithmetic): Llama-2-7B's prefill FLOPs at a per-student S, its weight
// bytes at a per-student dtype, and which op group dominates its FLOPs at short and long context.
#include <lab/cpu_transformer_kernels.hpp>
#include <lab/lab.hpp>
#include <lab/transformer.hpp>
#include <lab/transformer_forward.hpp>

#include <array>

namespace {

using namespace lab;
namespace tf = lab::transformer;

// The prefill's ops, as forward_ops names them; attention's three (scores, softmax, weighted
// values) are one kernel here, so one workload: "attention".
const std::array<const char*, 15> kOps = {"embedding", "attn_norm", "qkv",     "rope",     "kv_cache_write",
                                          "attention", "attn_out",  "residual", "mlp_norm", "mlp_up",
                                          "mlp_gate",  "mlp_act",   "mlp_down", "final_norm", "lm_head"};
int seq_for(bool quick) { return quick ? 128 : 512; }

// Counts of one named op of a pass (attention: its three ops together).
tf::Op counts(const std::vector<tf::Op>& ops, const std::string& name) {
    tf::Op sum;
    for (const auto& o : ops)
        if (o.name == name || (name == "attention" && (o.name == "attn_scores" || o.name == "softmax" || o.name == "attn_av"))) {
            sum.matmul_flops += o.matmul_flops, sum.elementwise_flops += o.elementwise_flops;
            sum.weight_bytes += o.weight_bytes, sum.kv_bytes += o.kv_bytes, sum.activation_bytes += o.activation_bytes;
        }
    return sum;
}

// The per-student questions: S in 256..4096 tokens, a weight dtype, from the seed.
std::uint64_t question_seq(std::uint64_t seed) { return 256 * (1 + seed % 16); }
Dtype question_dtype(std::uint64_t seed) {
    const Dtype d[] = {Dtype::fp32, Dtype::bf16, Dtype::int8, Dtype::fp8_e4m3, Dtype::int4, Dtype::mxfp4, Dtype::nvfp4};
    return d[(seed / 16) % 7];
}
// Op groups: attention is its scores, softmax and weighted values; the MLP its projections and
// activation; every other op is its own group (qkv, attn_out, lm_head, the norms, ...).
std::string group_of(const std::string& op) {
    if (op == "attn_scores" || op == "softmax" || op == "attn_av") return "attention";
    if (op == "mlp_up" || op == "mlp_gate" || op == "mlp_act" || op == "mlp_down") return "mlp";
    return op;
}
// The op group with the most FLOPs in Llama-2-7B's prefill of S tokens.
std::string dominant_group(std::uint64_t seq) {
    std::map<std::string, std::uint64_t> group;
    for (const auto& o : tf::forward_ops(tf::llama_2_7b(), tf::precision(Dtype::fp16), tf::prefill(1, seq))) group[group_of(o.name)] += o.flops();
    return std::max_element(group.begin(), group.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

class FlopsAndBytes : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.02", .title = "FLOPs and Bytes", .version = "1.1.0"};
        i.objectives = {"Account for the FLOPs and bytes of a transformer forward pass, op by op, per layer and in total.",
                        "Predict which op dominates at short and at long context."};
        i.experiments = {{"ops", "the tiny model's prefill of S tokens (128 quick, 512 full), op by op over all layers"},
                         {"passes", "the whole prefill, and one decode step at context S, end to end"}};
        for (const char* op : kOps) i.placed.push_back({.name = op});
        i.placed.push_back({.name = "forward"});
        i.placed.push_back({.name = "decode_step"});
        i.metrics = {
            {.name = "forward_flops", .unit = "FLOP", .description = "the tiny model's prefill FLOPs (lab model tiny --seq S)"},
            {.name = "check.ops_sum_to_model", .kind = MetricKind::integer, .description = "1 when the ops' counts sum to lab model's totals"},
            {.name = "question_seq", .kind = MetricKind::integer, .description = "the S of your FLOPs question"},
            {.name = "question_flops", .unit = "FLOP", .description = "Llama-2-7B's prefill FLOPs at question_seq tokens", .graded = true},
            {.name = "question_dtype", .kind = MetricKind::category, .description = "the weight dtype of your bytes question"},
            {.name = "question_weight_bytes", .unit = "B", .description = "Llama-2-7B's weight bytes in question_dtype", .graded = true},
            {.name = "dominant_short", .kind = MetricKind::category, .description = "the op group with the most FLOPs at 512 tokens", .graded = true},
            {.name = "dominant_long", .kind = MetricKind::category, .description = "the op group with the most FLOPs at 65,536 tokens", .graded = true},
        };
        i.expectations = {
            {.metric = "check.ops_sum_to_model", .min = 1, .max = 1, .why = "the ops' counts sum to lab model's totals"},
            {.metric = "lm_head.predicted_regime", .equals = "compute_bound", .performance = true, .why = "the LM head is a GEMM over S tokens"},
        };
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        auto k = s.kernels<TransformerKernels, cpu::TransformerKernelsCpu>();
        const tf::ModelConfig m = tf::tiny_model();
        const int S = seq_for(s.options().quick), L = int(m.layers);
        tf::TinyForward model(dev, *k, m, S);
        const auto prefill = tf::forward_ops(m, tf::precision(Dtype::fp32), tf::prefill(1, S));
        for (const char* name : kOps) {
            std::vector<Launch> ls;
            const int repeats = tf::TinyForward::once(name) ? 1 : (std::string(name) == "residual" ? 2 : 1) * L;
            for (int r = 0; r < repeats; ++r)
                for (auto& launch : model.op(name, tf::TinyForward::once(name) ? 0 : r % L, S, 0)) ls.push_back(launch);
            const tf::Op c = counts(prefill, name);
            s.measure({.name = name, .description = std::string(name) + " of the tiny model's prefill, all layers",
                       .params = {param("seq", S), param("repeats", repeats)}, .flops = double(c.flops()), .bytes = double(c.bytes())},
                      tf::TinyForward::all(ls));
        }
        const tf::Totals whole = tf::totals(prefill);
        s.measure({.name = "forward", .description = "the tiny model's whole prefill", .params = {param("seq", S)},
                   .flops = double(whole.flops()), .bytes = double(whole.bytes)}, model.pass(S, 0));
        const tf::Totals step = tf::totals(tf::forward_ops(m, tf::precision(Dtype::fp32), tf::decode(1, S)));
        s.measure({.name = "decode_step", .description = "one decode step of the tiny model at context S", .params = {param("context", S)},
                   .flops = double(step.flops()), .bytes = double(step.bytes)}, model.pass(1, S));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const auto whole = run.at("forward").workload;
        double flops = 0, bytes = 0;
        for (const char* op : kOps) flops += run.at(op).workload.flops, bytes += run.at(op).workload.bytes;
        const auto model = tf::totals(tf::forward_ops(tf::tiny_model(), tf::precision(Dtype::fp32), tf::prefill(1, std::uint64_t(whole.param("seq")))));
        d.set("forward_flops", double(model.flops()));
        d.set("check.ops_sum_to_model", flops == double(model.flops()) && bytes == double(model.bytes) && whole.flops == flops);
        const std::uint64_t S = question_seq(run.options.seed);
        const Dtype dt = question_dtype(run.options.seed);
        d.set("question_seq", double(S));
        d.set("question_flops", double(tf::prefill_flops(tf::llama_2_7b(), 1, S)));
        d.set("question_dtype", std::string(to_string(dt)));
        d.set("question_weight_bytes", double(tf::weight_bytes(tf::llama_2_7b(), dt)));
        d.set("dominant_short", dominant_group(512));
        d.set("dominant_long", dominant_group(65536));
        d.teaching = {
            // The command with this run's S: without --seq it prints another S's count (a review).
            "The tiny model's prefill: {forward_flops} in all, the ops' counts summing exactly to `lab model tiny --dtype fp32 --seq " +
                std::to_string(std::llround(whole.param("seq"))) + "`'s.",
            "Its LM head alone is {lm_head.flops_per_s}; its attention {attention.flops_per_s}; the whole pass {forward.time_s}.",
            "One decode step at the same context takes {decode_step.time_s} for one token: it reads every weight for it.",
            "Yours to work out with `lab model llama-2-7b`: its FLOPs at {question_seq} tokens, its weights in {question_dtype},",
            "  and which op group has the most FLOPs at 512 and at 65,536 tokens.",
        };
    }
};

}  // namespace

LAB_LESSON(FlopsAndBytes, "02.02")
