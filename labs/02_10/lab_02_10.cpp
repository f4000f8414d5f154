// Lesson 02.10, "Profiling a Forward Pass": read a trace.
//
// 02.02's tiny model runs its prefill twice: as is, and with a deliberate host synchronisation
// and a host-to-device copy halfway through its layers, the two things a trace shows most
// plainly and a training loop most often hides. `lab run 02.10 --trace t.json.gz` records every
// kernel, copy, synchronisation and launch (CUPTI on a GPU; the CPU device's stream on a CPU), for
// Perfetto or `lab trace t.json.gz`. The run measures what the sync and copy cost; the graded
// trace questions are on a recorded PyTorch trace shipped with lab (a100_simple_add.json.gz, from
// HolisticTraceAnalysis, MIT): its synchronisations, its costliest kernel, its GPU idle fraction
// and its copies' bandwidth, the answers being what `lab trace` reads (a test keeps them equal).
#include <lab/cpu_transformer_kernels.hpp>
#include <lab/lab.hpp>
#include <lab/transformer.hpp>
#include <lab/transformer_forward.hpp>

namespace {

using namespace lab;
namespace tf = lab::transformer;

class ProfilingAForwardPass : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.10", .title = "Profiling a Forward Pass", .version = "1.0.0"};
        i.objectives = {"Read a trace: kernels by time, launches, synchronisations, copies, and where the device sat idle.",
                        "See what a host synchronisation and a host-to-device copy inside a forward pass cost."};
        i.experiments = {{"passes", "the tiny model's prefill of S tokens (64 quick, 256 full), as is and with a sync and an HtoD copy midway; trace it with --trace"}};
        i.placed = {{.name = "forward"}, {.name = "forward_sync_copy"}};
        i.metrics = {
            {.name = "slowdown_ratio", .unit = "ratio", .description = "time of the pass with the sync and copy / time of the pass as is", .graded = true},
            {.name = "copy_bytes", .unit = "B", .description = "the bytes the midway copy moves"},
        };
        i.expectations = {{.metric = "forward.predicted_regime", .equals = "compute_bound", .performance = true, .why = "a prefill is GEMMs over S tokens"}};
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        auto k = s.kernels<TransformerKernels, cpu::TransformerKernelsCpu>();
        const tf::ModelConfig m = tf::tiny_model();
        const int S = s.options().quick ? 64 : 256;
        tf::TinyForward model(dev, *k, m, S);
        // The copy: a new batch of S tokens' hidden states, from pinned host memory.
        const std::size_t copy = std::size_t(4) * S * m.hidden;
        BufferPtr host = dev.allocate_host(copy);
        float *dst = model.hidden();
        const void* src = host->data();
        const std::vector<Launch> midway = {[&dev, dst, src, copy](Stream& st) { dev.copy(st, dst, src, copy); },
                                            [](Stream& st) { st.synchronize(); }};
        const tf::Totals whole = tf::totals(tf::forward_ops(m, tf::precision(Dtype::fp32), tf::prefill(1, std::uint64_t(S))));
        s.measure({.name = "forward", .description = "the tiny model's prefill", .params = {param("seq", S)},
                   .flops = double(whole.flops()), .bytes = double(whole.bytes)}, model.pass(S, 0));
        s.measure({.name = "forward_sync_copy", .description = "the same, with an HtoD copy and a host synchronisation midway",
                   .params = {param("seq", S), param("copy_bytes", copy)}, .flops = double(whole.flops()), .bytes = double(whole.bytes)},
                  model.pass(S, 0, midway));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const Measurement &plain = run.at("forward"), &with = run.at("forward_sync_copy");
        d.set("slowdown_ratio", with.time.median / plain.time.median);
        d.set("copy_bytes", with.workload.param("copy_bytes"));
        // Said as measured: the times are shown, so the sentence gives nothing away, and a pass
        // that came out faster with the sync (a busy machine's noise) must not read as the cost.
        const bool slower = with.time.median > plain.time.median;
        d.teaching = {
            "The prefill takes {forward.time_s}; with a copy of {copy_bytes} and a host synchronisation halfway, {forward_sync_copy.time_s}",
            slower ? "  ({slowdown_ratio} times as long): the host waits for the device to drain, then the device waits for the host."
                   : "  ({slowdown_ratio} times as long: no slower, so this run's noise hid the cost; on a quiet machine",
        };
        if (!slower) d.teaching.push_back("  the host waits for the device to drain, then the device waits for the host).");
        d.teaching.insert(d.teaching.end(), {
            "Run it with --trace t.json.gz and read it with `lab trace t.json.gz` (or open it in Perfetto): find the sync,",
            "  the copy, and the gap they leave in the device's timeline.",
            "The graded trace questions are on a recorded PyTorch trace, shipped with lab (`lab trace a100_simple_add.json.gz`",
            "  finds it by name): {shipped:a100_simple_add.json.gz}",
        });
    }
};

}  // namespace

LAB_LESSON(ProfilingAForwardPass, "02.10")
