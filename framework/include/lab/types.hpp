// Plain data that crosses the plugin boundary: what a lesson declares (metrics, experiments),
// what it measures (workloads and their time statistics) and what it derives (metrics).
// Units are SI throughout: s, B, B/s, FLOP, FLOP/s, FLOP/B, Hz, ratio.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace lab {

enum class MetricKind { number, integer, category };

// Every metric a lesson can produce, declared before anything runs, so grading specs and
// `lab validate` are checked without measuring.
struct MetricDecl {
    std::string name{};         // dotted, stable: "mystery_a.measured_regime", "ridge_point"
    std::string unit{};         // SI unit, "" for categories, "ratio" for ratios
    MetricKind kind = MetricKind::number;
    std::string description{};
    bool quick = true;        // produced by a --quick run too
    bool graded = false;      // a graded answer: withheld from students unless --reveal
    std::vector<std::string> devices{"cpu", "cuda"};  // device kinds that produce it
};

// A workload placed on the roofline. Declaring it once in LessonInfo::placed is all a lesson does
// for its standard metrics: the SDK declares "<name>.time_s", ".flops_per_s", ".bytes_per_s",
// ".ai", ".roof_fraction", ".predicted_regime", ".measured_regime" (and ".doubling_ratio",
// ".counted_*" as asked) and derives them from every run that measured it.
struct PlacedWorkload {
    std::string name{};                              // the Workload::name run() measures
    std::vector<std::string> graded{};             // suffixes that are graded answers: {"measured_regime"}
    std::vector<std::string> devices{"cpu", "cuda"};  // device kinds that measure it
    bool doubled = false;   // the run also measures a workload that doubles it (Workload::doubles)
    bool counted = false;   // it asks for hardware counters (a GPU places it from them too)
    bool quick = true;      // a --quick run measures it too
};

// A workload run() chose not to measure, and why (nvbench's state.skip): part of the run record
// and of the lesson's plan, so a missing measurement is never silent.
struct Skip {
    std::string workload{};
    std::string reason{};
};

struct ExperimentDecl {
    std::string name{};
    std::string description{};
};

// What a lesson expects to measure, checked by `lab check ID` (how an instructor verifies a
// lesson on a new device before assigning it). Structural expectations (a regime, a count) must
// hold; performance ones (a fraction of a ceiling) are reported, since shared machines are noisy.
struct Expectation {
    std::string metric{};                  // a declared metric: "triad.measured_regime", "triad.bytes_per_s"
    std::string equals{};                  // for categories: the expected value ("memory_bound")
    double min = -1e308, max = 1e308;    // for numbers: the accepted range (SI, or fractions of `relative_to`)
    std::string relative_to{};             // "" or a ceiling: "bandwidth.best", "flops.fp32.simt", "launch"
    std::vector<std::string> devices{"cpu", "cuda"};
    bool performance = false;            // a speed expectation: reported, never a failure
    std::string why{};                     // one line shown in the report
};

struct LessonInfo {
    std::string id{};                       // "02.05"
    std::string title{};
    std::string version = "1.0.0";        // the plugin's own semantic version
    std::vector<std::string> objectives{};  // from the syllabus
    std::vector<ExperimentDecl> experiments{};
    std::vector<PlacedWorkload> placed{};   // workloads whose standard metrics the SDK declares and derives
    std::vector<MetricDecl> metrics{};      // the lesson's own metrics (Lesson::declarations() adds placed's)
    double budget_quick_s = 10;           // wall-clock budget of a --quick run, calibration excluded
    double budget_full_s = 60;
    bool roofline = false;                // `lab run` draws this lesson's roofline (terminal, --plots)
    std::vector<Expectation> expectations{};
};

// A sweep axis value: {"n", 67108864}.
struct Param {
    std::string name{};
    double value = 0;
};

// Cold: caches flushed before every sample, one invocation per sample. Hot: back-to-back
// invocations in a batch, time per invocation = batch time / batch size.
enum class TimingMode { cold, hot };

// One thing measured, with the analytic counts stated beside its kernel.
struct Workload {
    std::string name{};                // "triad", "gemv_b1", "mystery_a"
    std::string description{};
    std::vector<Param> params{};
    double flops = 0;                // per invocation, analytic
    double bytes = 0;                // per invocation: minimum traffic to `level`, analytic
    std::string pipe = "fp32.simt";  // the compute ceiling it is held against
    std::string level = "dram";      // the memory level `bytes` counts
    TimingMode mode = TimingMode::hot;
    std::string doubles{};             // batch-doubling test: the workload this one doubles, or ""
    double max_time_s = 0;           // per-workload sampling limit; 0 = the engine's default
    // Hardware counters to read over one extra invocation after timing (device metric names,
    // e.g. "dram__bytes_read.sum"); empty = none. Devices without counters say so and go on.
    std::vector<std::string> counters{};
    bool telemetry = false;          // sample device telemetry while this workload is timed

    // A parameter's value by name. A recorded run gives parameters back in name order, so read
    // them by name, never by position. Throws std::out_of_range naming the workload and the name.
    double param(const std::string& param_name) const {
        for (const Param& p : params)
            if (p.name == param_name) return p.value;
        throw std::out_of_range("workload '" + name + "' has no parameter '" + param_name + "'");
    }
};

struct TimeStats {
    double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
    double noise = 0;         // relative standard deviation, stddev / mean
    int samples = 0;
    int batch = 1;            // invocations per sample (hot mode)
    int discarded = 0;        // samples thrown away (throttled clock)
    double total_s = 0;       // time spent sampling, warm-up included
    bool noise_met = false;   // the noise target was reached before the time limit
    // Every sample ran below the throttle ratio, through all the back-offs: the clock this device
    // holds under this load (a power cap), so the samples were kept rather than discarded.
    bool clock_held_low = false;
};

struct Measurement {
    Workload workload;
    TimeStats time;                               // seconds per invocation
    std::map<std::string, double> counters{};       // per invocation, by metric name
    std::string counters_note{};                    // why counters are missing, when asked for
    std::map<std::string, double> telemetry{};      // summaries over the timed samples
    // Other processes' CPU use while the samples were taken, in CPUs (steal time included);
    // -1 when unknown. A busy machine is told apart from a slow kernel by it.
    double load = -1;
};

// A ceiling measured during a lesson's run, kept as raw data in the run record (DESIGN.md,
// "Trusting ceilings"). Its rate is work / median time, the statistic workloads are judged by:
// flops / median for "flops.<pipe>", bytes / median for "bandwidth.<kernel>", the median itself
// for "launch".
struct CeilingMeasurement {
    std::string ceiling{};                 // "flops.fp32.simt", "bandwidth.read", "launch"
    // "reference": measured right after the workloads it names, so their regimes are judged
    //   against what the device did at that moment (a busy machine slows both alike);
    // "remeasure": a workload beat the ceiling by more than the stated margin, so it was measured
    //   again;
    // "evidence": even the re-measure stayed below the workload, so the workload's own rate
    //   raises the ceiling (`measurement` is empty; the rate is that of workloads[0]).
    std::string purpose{};
    std::vector<std::string> workloads{};  // the workloads it serves or that caused it
    Measurement measurement;
};

// A plot a lesson's derive() draws from its measurements (latency against working-set size,
// FLOP/s against AI): series of points on two axes, with marked points such as a knee or a
// crossover. The framework draws it in the terminal and as SVG, the same way for every lesson.
struct PlotAxis {
    std::string label{};    // "working set", "arithmetic intensity"
    std::string unit{};     // SI unit of the values: "B", "s", "FLOP/s", "FLOP/B" ("" for plain numbers)
    bool log = false;       // a log10 axis (values must be > 0)
};
struct PlotSeries {
    std::string name{};               // legend entry: "pointer chase", "read bandwidth"
    std::vector<double> x{}, y{};     // points, in SI units, same length
    bool line = true;                 // join the points (measured sweeps); false: points only
};
struct PlotMark {
    std::string label{};    // "L1 -> L2 knee", "ridge 9.3 FLOP/B"
    double x = 0, y = 0;    // where (y ignored when `vertical`)
    bool vertical = false;  // a dashed line across the plot at x, not a point
    std::string metric{};   // the metric it shows: not drawn while that metric is withheld
};
struct Plot {
    std::string name{};     // file-name safe, unique in the lesson: "latency"
    std::string title{};
    PlotAxis x{}, y{};
    std::vector<PlotSeries> series{};
    std::vector<PlotMark> marks{};
};

// A derived metric. Numbers in `number`, categories in `text`.
struct MetricValue {
    std::string name{};
    MetricKind kind = MetricKind::number;
    std::string unit{};
    double number = 0;
    std::string text{};
};

}  // namespace lab
