// Lesson 02.11, "Launch Overhead": the batch-doubling test and graphs.
// An empty kernel gives the launch (dispatch) cost. A small in-place update over n elements, from
// a few per thread to 4x the last-level cache, is timed at 2n too at both ends: a time that barely
// grows pays for the launch (overhead bound), one that doubles pays for the work (throughput
// bound). Then 100 small updates, one dispatch each, against the same 100 in one dispatch
// (`batched`): a CUDA graph replayed on a GPU; on a CPU, which has no graphs, a pre-built task list.
#include <lab/lab.hpp>

#include <cmath>
#include <memory>

#include "kernels_02_11.hpp"

namespace {

using namespace lab;
using lab_02_11::LaunchKernels;

void update_share(float* a, std::size_t n, int t, int nt) {
    std::size_t lo, hi;
    cpu::share(n, t, nt, lo, hi);
    for (std::size_t i = lo; i < hi; ++i) a[i] = 0.999f * a[i] + 0.001f;
}

// The CPU side: a kernel is a task dispatched to the device's thread team (every thread does its
// share); one dispatch costs a trip through the stream's queue and a fork/join of the team.
class LaunchCpu : public LaunchKernels {
public:
    explicit LaunchCpu(Device&) {}
    Launch empty() override { return [](Stream& st) { st.launch([](int, int) {}); }; }
    Launch update(float* a, std::size_t n, int tasks) override {
        return [=](Stream& st) {
            for (int k = 0; k < tasks; ++k) st.launch([=](int t, int nt) { update_share(a, n, t, nt); });
        };
    }
    // The task list is built here, once; one dispatch runs it: each thread does its share of every
    // task in turn (the same share each time, so each element still sees the tasks in order).
    Launch update_batched(float* a, std::size_t n, int tasks) override {
        auto list = std::make_shared<std::vector<HostKernel>>(tasks, [=](int t, int nt) { update_share(a, n, t, nt); });
        return [list](Stream& st) {
            st.launch([list](int t, int nt) { for (const auto& task : *list) task(t, nt); });
        };
    }
};

constexpr int kTasks = 100;
std::size_t sweep_step(bool quick) { return quick ? 64 : 16; }  // the sweep's n grows 16x a step (64x quick)
std::string sweep_name(std::size_t n) { return "sweep_n" + std::to_string(n); }

// The student's share of the time the launch may take: 5%, 10% or 20%, from the seed.
double question_fraction(std::uint64_t seed) {
    static const double fractions[] = {0.05, 0.10, 0.20};
    return fractions[seed % 3];
}

// A doubling ratio's verdict (< 1.2: the launch dominates); "A or B" (either is fair) where 1.2 is
// within the ratio's doubt as the SDK's regime verdict weighs it (noise, load, a ratio below 1).
std::string verdict(const roofline::Placement& p) {
    const double r = p.doubling_ratio.value_or(0) / roofline::kDoublingRatioMax, m = roofline::kDecisionSigmas * p.doubling_rel_err;
    const bool near = std::fabs(r - 1) < 0.05 / roofline::kDoublingRatioMax || (r > 1 / (1 + m) && r < 1 + m);
    return near ? "overhead_bound or throughput_bound" : r < 1 ? "overhead_bound" : "throughput_bound";
}

class LaunchOverhead : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.11", .title = "Launch Overhead", .version = "2.0.0"};
        i.objectives = {
            "Measure what launching a kernel costs, and tell an overhead-bound kernel from a throughput-bound one by doubling its work.",
            "Amortise launches: batch many small kernels into one dispatch (a CUDA graph; a pre-built task list on a CPU).",
        };
        i.experiments = {
            {"empty", "an empty kernel: its time is the launch (dispatch) cost"},
            {"doubling", "a small and a large in-place update (a few elements per thread; 4x the LLC/L2), each also at twice the elements"},
            {"sweep", "the update at n growing 16x a step (64x with --quick) between the two: time against elements"},
            {"batching", "100 small updates back to back, one dispatch each, against the same 100 in one dispatch: "
                         "a CUDA graph replayed on a GPU, a pre-built task list on a CPU"},
        };
        // Placed: the two doubled updates, whose doubling ratios the SDK publishes (graded, as asked
        // by configs/grading/02.11.yaml). The other rows are read raw in derive().
        i.placed = {
            {.name = "small", .graded = {"doubling_ratio"}, .doubled = true},
            {.name = "large", .graded = {"doubling_ratio"}, .doubled = true},
        };
        i.metrics = {
            {.name = "launch_overhead_s", .unit = "s", .description = "the launch cost: the empty kernel's median time", .graded = true},
            {.name = "small_verdict", .kind = MetricKind::category, .description = "the small update's doubling verdict: overhead_bound (ratio < 1.2) or throughput_bound", .graded = true},
            {.name = "large_verdict", .kind = MetricKind::category, .description = "the large update's doubling verdict", .graded = true},
            {.name = "per_launch_s", .unit = "s", .description = "time per kernel of 100 small updates dispatched one by one"},
            {.name = "per_batched_task_s", .unit = "s", .description = "time per kernel of the same 100 in one dispatch"},
            {.name = "batched_speedup", .unit = "ratio", .description = "separate.time_s / batched.time_s: what one dispatch (a graph; a task list) saves", .graded = true},
            {.name = "per_element_s", .unit = "s", .description = "time per element of the large update: large.time_s / its n"},
            {.name = "question_launch_fraction", .unit = "ratio", .description = "the share of a kernel's time the launch may take, in your question"},
            {.name = "threshold_elements", .description = "elements a kernel must touch before the launch is under question_launch_fraction of its time: "
                                                          "L (1 - p) / (p c), L = launch_overhead_s, c = per_element_s", .graded = true},
            {.name = "check.task_counts", .kind = MetricKind::integer, .description = "1 when both batching workloads state 100 tasks and 100x one task's counts"},
        };
        i.expectations = {
            {.metric = "check.task_counts", .min = 1, .max = 1, .why = "the one dispatch runs the same 100 tasks as the 100 dispatches"},
            {.metric = "small_verdict", .equals = "overhead_bound", .performance = true, .why = "a few elements per thread cost little more than the launch"},
            {.metric = "large_verdict", .equals = "throughput_bound", .performance = true, .why = "4x the cache at 2x the elements takes 2x the time"},
            {.metric = "launch_overhead_s", .min = 0.5, .max = 2, .relative_to = "launch", .performance = true, .why = "the empty kernel costs what calibration measured"},
            {.metric = "batched_speedup", .min = 1.5, .performance = true, .why = "one dispatch of 100 tasks beats 100 dispatches"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool gpu = dev.kind() == DeviceKind::cuda, quick = s.options().quick;
        auto k = s.kernels<LaunchKernels, LaunchCpu>();
        // Small: a few elements per thread (64 per CPU thread, 4 blocks of 256 on a GPU); large: an
        // array of 4x the last-level cache (L2), so its 2n passes stream from memory.
        const std::size_t small = gpu ? 1024 : 64 * static_cast<std::size_t>(std::max(1, dev.threads()));
        const std::size_t large = (std::max<std::size_t>(dev.facts().last_level_cache_bytes(), std::size_t{1} << 22) + 1023) / 1024 * 1024;
        BufferPtr buf = dev.allocate(2 * large * sizeof(float));
        float* a = buf->as<float>();
        // Below the large n the bytes may come from a cache (level "cache": not held to the DRAM
        // roof), and the short kernels get short time limits, so a quick run stays in its budget.
        const double limit = quick ? 0.1 : 1.0;
        auto update = [&](const std::string& name, const std::string& what, std::size_t n, int tasks, const std::string& doubles, Launch l) {
            s.measure({.name = name, .description = what, .params = {param("n", n), param("tasks", tasks)}, .flops = 2.0 * n * tasks,
                       .bytes = 8.0 * n * tasks, .level = n < large ? "cache" : "dram", .doubles = doubles, .max_time_s = n < large ? limit : 0.0},
                      std::move(l));
        };
        s.measure({.name = "empty", .description = "an empty kernel: nothing but its launch", .flops = 0, .bytes = 0, .max_time_s = limit}, k->empty());
        update("small", "one update of a few elements", small, 1, "", k->update(a, small, 1));
        update("small_x2", "the small update at twice the elements", 2 * small, 1, "small", k->update(a, 2 * small, 1));
        for (std::size_t n = small * sweep_step(quick); n < large; n *= sweep_step(quick))
            update(sweep_name(n), "one update, between small and large", n, 1, "", k->update(a, n, 1));
        update("large", "one update of 4x the last-level cache", large, 1, "", k->update(a, large, 1));
        update("large_x2", "the large update at twice the elements", 2 * large, 1, "large", k->update(a, 2 * large, 1));
        update("separate", "100 small updates, one dispatch each", small, kTasks, "", k->update(a, small, kTasks));
        update("batched", gpu ? "the same 100 updates, captured once in a CUDA graph and replayed"
                              : "the same 100 updates as a pre-built task list, one dispatch of the thread team",
               small, kTasks, "", k->update_batched(a, small, kTasks));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        auto n_of = [&](const std::string& w) { return run.at(w).workload.param("n"); };
        for (const std::string w : {"small", "large"}) d.set(w + "_verdict", verdict(d.placement(w)));
        const Measurement &sep = run.at("separate"), &bat = run.at("batched");
        const double tasks = sep.workload.param("tasks");
        d.set("per_launch_s", sep.time.median / tasks);
        d.set("per_batched_task_s", bat.time.median / bat.workload.param("tasks"));
        d.set("batched_speedup", sep.time.median / bat.time.median);
        bool counts = true;
        for (const Measurement* m : {&sep, &bat})
            counts = counts && m->workload.param("tasks") == kTasks && m->workload.flops == 2.0 * n_of("small") * kTasks &&
                     m->workload.bytes == 8.0 * n_of("small") * kTasks;
        d.set("check.task_counts", counts);

        // The threshold: t(n) = L + c n, and L <= p t(n) from n = L (1 - p) / (p c).
        const double launch = run.at("empty").time.median, c = run.at("large").time.median / n_of("large");
        const double p = question_fraction(run.options.seed), threshold = launch * (1 - p) / (p * c);
        d.set("launch_overhead_s", launch), d.set("per_element_s", c);
        d.set("question_launch_fraction", p), d.set("threshold_elements", threshold);

        PlotSeries measured{.name = "one update"}, model{.name = "launch + c n"}, floor{.name = "launch (empty kernel)"};
        for (const auto& m : run.measurements)
            if (m.workload.params.size() == 2 && m.workload.param("tasks") == 1)
                measured.x.push_back(m.workload.param("n")), measured.y.push_back(m.time.median);
        // The model at each measured size, to set beside each point (two ends joined by one chord
        // on log axes read 50 µs where the model gives 7.5).
        for (double x : measured.x) model.x.push_back(x), model.y.push_back(launch + c * x);
        floor.x = {measured.x.front(), measured.x.back()}, floor.y = {launch, launch};
        d.plots = {{.name = "launch_elements", .title = "Time of one update against the elements it touches", .x = {.label = "elements", .log = true},
                    .y = {.label = "time", .unit = "s", .log = true}, .series = {measured, model, floor},
                    .marks = {{.label = "launch under " + std::to_string(std::lround(100 * p)) + "% of the time", .x = threshold, .vertical = true, .metric = "threshold_elements"}}}};

        d.teaching = {
            "An empty kernel takes {launch_overhead_s}: that is the launch (dispatch) cost, work or no work.",
            "The doubling test: twice the elements took {small.doubling_ratio} times as long for the small update ({small_verdict})",
            "  and {large.doubling_ratio} times for the large one ({large_verdict}). Below 1.2 the launch dominates.",
            "100 small updates dispatched one by one cost {per_launch_s} each; in one dispatch, {per_batched_task_s} each:",
            "  batching them (a CUDA graph on a GPU, a pre-built task list on a CPU) is {batched_speedup} times faster.",
            "Each element of the large update costs {per_element_s}; for the launch to be under {question_launch_fraction} of a",
            "  kernel's time, it must touch at least {threshold_elements} elements (t(n) = launch + c n).",
        };
    }
};

}  // namespace

LAB_LESSON(LaunchOverhead, "02.11")
