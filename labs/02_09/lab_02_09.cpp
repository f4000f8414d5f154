// Lesson 02.09, "Reading the Device": what GPU-Util (and a CPU's busy %) does and does not say.
//
// (a) One thread chasing pointers through DRAM: the device's own telemetry (a CPU: /proc, the
// busiest core's busy share; a GPU: NVML's GPU-Util) reports its unit 100% busy, while it uses one
// thread of the CPU's team (one SM of a GPU's) and a sliver of the memory roof. (b) Every thread
// reading at full bandwidth, for contrast. The samplers read at the two ends of each workload's
// timed samples and report their cost. Then a real nvidia-smi capture (shipped with lab, a
// per-student one of eight; `lab smi` reads them) whose power, memory, P-state and SM clock the
// student reads off. Questions: the reported busy share in (a), the share of the machine's units
// (a) used, its fraction of the memory roof, and the four capture readings.
#include <lab/cpu_pointer_chase.hpp>
#include <lab/lab.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>

namespace {

using namespace lab;

// The captures in labs/02_09/captures (installed as share/lab/nvidia-smi), with what `lab smi`
// reads from them (a test keeps the two equal): power draw (W; -q: the average), memory used
// (MiB, as nvidia-smi prints it), P-state, SM clock (MHz). The metrics are in SI units (B, Hz).
constexpr double kMiB = 1048576, kMHz = 1e6;
struct Capture {
    const char* file;
    double power_w, memory_mib;
    const char* pstate;
    double sm_clock_mhz;
};
constexpr std::array<Capture, 8> kCaptures = {{{"h100_idle_q.txt", 69.85, 0, "P0", 345},
                                               {"h100_load_q.txt", 629.45, 19818, "P0", 1980},
                                               {"l40s_idle_q.txt", 183.28, 0, "P0", 2520},
                                               {"l40s_load_q.txt", 110.24, 1235, "P0", 2520},
                                               {"h100_idle_query_gpu.csv", 69.85, 0, "P0", 345},
                                               {"h100_load_query_gpu.csv", 631.95, 19818, "P0", 1980},
                                               {"l40s_idle_query_gpu.csv", 144.97, 0, "P0", 2520},
                                               {"l40s_load_query_gpu.csv", 110.23, 1235, "P0", 2520}}};
const Capture& capture_for(std::uint64_t seed) { return kCaptures[seed % kCaptures.size()]; }

// A workload's telemetry readings, as the device reported them: a CPU's /proc busy shares (percent)
// and its process's CPU time (100% = one core); a GPU's NVML GPU-Util and memory utilisation (ratios).
std::string readings(const std::map<std::string, double>& t, bool gpu) {
    auto pct = [&](const char* key, double scale) {
        char s[32];
        std::snprintf(s, sizeof s, "%.1f%%", t.count(key) ? t.at(key) * scale : 0.0);
        return t.count(key) ? std::string(s) : std::string("n/a");
    };
    if (gpu) return "GPU-Util " + pct("utilization_gpu.mean", 100) + " (mean of its samples; max " + pct("utilization_gpu.max", 100) +
                    "), memory utilisation " + pct("utilization_memory.mean", 100) + ".";
    const int cores = t.count("cores") ? static_cast<int>(t.at("cores")) : 0;
    return "busiest core " + pct("cpu_busy_pct.max_core", 1) + " busy, all " + std::to_string(cores) + " cores " +
           pct("cpu_busy_pct.machine", 1) + ", this process " + pct("process_cpu_pct", 1) + " of one core.";
}

class ReadingTheDevice : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.09", .title = "Reading the Device", .version = "1.1.0"};
        i.objectives = {"Read what utilisation counters measure (time something was scheduled) and what they do not (work done).",
                        "Read power, memory, P-state and clocks off nvidia-smi's output."};
        i.experiments = {{"chase", "one thread chasing pointers through 4x the last-level cache (L2), telemetry sampled"},
                         {"read_all", "every thread reading 4x the last-level cache at full bandwidth, telemetry sampled"}};
        i.placed = {{.name = "chase", .graded = {"roof_fraction"}}, {.name = "read_all"}};
        i.metrics = {
            {.name = "chase.telemetry_busy_fraction", .unit = "ratio", .description = "the busy share telemetry reports for the chase's unit (a CPU's busiest core; GPU-Util)", .graded = true},
            {.name = "read_all.telemetry_busy_fraction", .unit = "ratio", .description = "the same while every thread reads"},
            {.name = "chase.telemetry_machine_fraction", .unit = "ratio", .description = "a CPU's busy share over all its cores during the chase", .devices = {"cpu"}},
            {.name = "chase.sampler_cost_s", .unit = "s", .description = "what reading the telemetry cost during the chase", .devices = {"cpu"}},
            {.name = "chase.units_used_fraction", .unit = "ratio", .description = "the share of the device's threads (SMs) the chase runs on", .graded = true},
            {.name = "question_capture", .kind = MetricKind::category, .description = "your nvidia-smi capture (share/lab/nvidia-smi)"},
            {.name = "capture.power_draw_w", .unit = "W", .description = "its power draw", .graded = true},
            {.name = "capture.memory_used", .unit = "B", .description = "its memory used (nvidia-smi prints MiB, 2^20 B)", .graded = true},
            {.name = "capture.pstate", .kind = MetricKind::category, .description = "its performance state", .graded = true},
            {.name = "capture.sm_clock", .unit = "Hz", .description = "its SM clock (nvidia-smi prints MHz)", .graded = true},
        };
        i.expectations = {
            {.metric = "chase.predicted_regime", .equals = "memory_bound", .why = "a chase moves bytes and does no arithmetic"},
            {.metric = "chase.telemetry_busy_fraction", .min = 0.8, .performance = true, .why = "one waiting thread reads as a busy unit"},
            {.metric = "chase.roof_fraction", .max = 0.2, .performance = true, .why = "one dependent load at a time uses a sliver of the bandwidth"},
        };
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool gpu = dev.kind() == DeviceKind::cuda, quick = s.options().quick;
        auto k = s.kernels<ChaseKernels, cpu::ChaseKernelsCpu>();
        std::size_t bytes = std::size_t{64} << 20;
        while (bytes < 4 * dev.facts().last_level_cache_bytes()) bytes *= 2;
        BufferPtr buf = dev.allocate(bytes), cursor = dev.allocate(64);
        BufferPtr staging = gpu ? dev.allocate_host(bytes) : nullptr;  // the cycle is written on the host
        // The cycle through every 64 B line, the cursor at its start.
        if (!s.replaying()) pointer_chase::place_cycle(dev, *buf, *cursor, staging.get(), bytes / 64, 64, 9);
        // Long enough per invocation (tens of ms) that the samplers' 10 ms ticks resolve it.
        const std::int64_t hops = gpu ? (quick ? 1 << 16 : 1 << 18) : (quick ? 1 << 18 : 1 << 20);
        s.measure({.name = "chase", .description = "one thread follows a random cycle of 64 B lines",
                   .params = {param("bytes", bytes), param("hops", hops)}, .bytes = 64.0 * hops, .telemetry = true},
                  k->chase(static_cast<void**>(cursor->data()), hops));
        const std::int64_t reps = quick ? 2 : 8;
        s.measure({.name = "read_all", .description = "every thread reads its share of the same buffer",
                   .params = {param("bytes", bytes), param("reps", reps)}, .bytes = 1.0 * reps * bytes, .telemetry = true},
                  k->read(buf->as<float>(), bytes / 4, reps));
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const bool gpu = run.device_kind == DeviceKind::cuda;
        // The CUDA backend's NVML summary is a ratio (0..1); /proc's busy shares are percent.
        const char* busy = gpu ? "utilization_gpu.mean" : "cpu_busy_pct.max_core";
        const double per = gpu ? 1 : 100;
        for (const char* w : {"chase", "read_all"})
            if (const Measurement* m = run.find(w); m && m->telemetry.count(busy)) d.set(std::string(w) + ".telemetry_busy_fraction", m->telemetry.at(busy) / per);
        if (const Measurement* m = run.find("chase"); m && m->telemetry.count("cpu_busy_pct.machine")) {
            d.set("chase.telemetry_machine_fraction", m->telemetry.at("cpu_busy_pct.machine") / 100);
            d.set("chase.sampler_cost_s", m->telemetry.count("sampler_cost_s") ? m->telemetry.at("sampler_cost_s") : 0.0);
        }
        const int units = gpu ? run.facts.compute_units : run.facts.threads;
        d.set("chase.units_used_fraction", units > 0 ? 1.0 / units : 1.0);
        const Capture& c = capture_for(run.options.seed);
        d.set("question_capture", std::string(c.file));
        d.set("capture.power_draw_w", c.power_w);
        d.set("capture.memory_used", c.memory_mib * kMiB);
        d.set("capture.pstate", std::string(c.pstate));
        d.set("capture.sm_clock", c.sm_clock_mhz * kMHz);
        d.teaching = {
            "(a) One thread chasing pointers: telemetry says its unit was {chase.telemetry_busy_fraction} busy (read it off the telemetry lines below),",
            "  yet it runs on {chase.units_used_fraction} of the device's units and reaches {chase.roof_fraction} of the memory roof:",
            "  busy means something was scheduled there, waiting on memory counts as busy.",
            "(b) Every thread reading: {read_all.telemetry_busy_fraction} busy, and {read_all.roof_fraction} of the roof.",
            "Reading the telemetry cost {chase.sampler_cost_s} over the chase (two reads of /proc at its ends).",
            "Yours to read: the capture {question_capture}, shipped with lab (`lab smi {question_capture}` finds it by name):",
            "  {shipped:question_capture}",
        };
        // What the telemetry read over each workload's samples, as it reported it (the run record
        // keeps the same under workloads[].telemetry): the busy share is read off here.
        for (const char* w : {"chase", "read_all"})
            if (const Measurement* m = run.find(w); m && !m->telemetry.empty()) d.teaching.push_back(std::string("Telemetry over ") + w + ": " + readings(m->telemetry, gpu));
        // A busy share counts whatever ran on the core, as GPU-Util counts any process's kernels:
        // beside other work, part of it is theirs (a review read "100% busy" at 48% of one core).
        if (const Measurement* m = run.find("chase"); m && !gpu && m->load >= roofline::kLoadedMachineCpus) {
            char line[200];
            std::snprintf(line, sizeof line, "Other processes used %.1f CPUs during the chase: part of its busy share is theirs, as GPU-Util "
                          "counts any process's kernels (this process's own share is the last figure of its telemetry).", m->load);
            d.teaching.push_back(line);
        }
    }
};

}  // namespace

LAB_LESSON(ReadingTheDevice, "02.09")
