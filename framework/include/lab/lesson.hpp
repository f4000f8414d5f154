// The lesson interface: what a lesson plugin implements (Lesson), what the host hands it while
// it runs (Session), and what its derivation turns raw measurements into (Derivation).
//
// A lesson has three parts, each a plain function of its inputs:
//   info()    static declarations, read without running anything;
//   run()     measures workloads on the session's device (the child process calls it). Its
//             requests are a pure function of the device's facts, the ceilings, the options and
//             what it measured so far: that is the lesson's plan, which the host can replay
//             against a recorded run without any device (lab validate, the grader);
//   derive()  raw measurements -> metrics; the same code runs after `lab run` and when the grader
//             re-derives a recorded run, so graded values never come from a stored copy. The SDK
//             derives the standard metrics of every placed workload first.
#pragma once

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lab/counters.hpp"
#include "lab/device.hpp"
#include "lab/roofline.hpp"
#include "lab/types.hpp"
#include "lab/version.hpp"

namespace lab {

struct RunOptions {
    bool quick = false;
    std::string student;       // normalised student ID ("" when anonymous)
    std::uint64_t seed = 0;    // first 8 bytes of SHA-256(course salt | lesson | student)
    std::string seed_hex;      // the whole digest, as recorded
};

class Session {
public:
    virtual ~Session() = default;
    virtual Device& device() = 0;
    virtual const Ceilings& ceilings() const = 0;
    virtual const RunOptions& options() const = 0;
    // Times `launch` by the engine's method (warm-up, stopping rules, cold/hot), records it and
    // returns a copy: a lesson may keep it and adapt what it measures next to what it saw.
    virtual Measurement measure(const Workload& workload, const Launch& launch) = 0;
    // Records that `workload` is not measured on this device, and why ("tf32 needs tensor
    // cores"): the run record says so, and the plan includes it.
    virtual void skip(const std::string& workload, const std::string& reason) = 0;
    // A progress line (stderr, only when it is a terminal).
    virtual void progress(const std::string& line) = 0;
    // A symbol of the lesson's device companion (lab_<ID>_cuda.so), loaded by the CUDA backend;
    // nullptr on a CPU device. Lessons use kernels<I, Cpu>() below.
    virtual void* companion_symbol(const std::string& name) = 0;
    // True while the host replays the lesson's plan (no kernel is launched; measure() answers
    // from a recorded run or a model). A lesson never needs to ask: buffers are real address
    // space and launches are not run. Only work outside launches may want to skip itself.
    virtual bool replaying() const = 0;

    // The lesson's kernels on this session's device: the CUDA companion's implementation of
    // interface I (exported with LAB_COMPANION(I, Impl), lab/companion.hpp) on a GPU, else
    // `Cpu` constructed from the device. Launch geometry stays inside each implementation;
    // counts (FLOP, bytes) are stated by the lesson from the device's facts, never by a kernel
    // implementation, so a recorded run replays anywhere. Throws naming what is missing.
    template <class I, class Cpu>
    std::unique_ptr<I> kernels() {
        if (device().kind() != DeviceKind::cuda || replaying()) return std::make_unique<Cpu>(device());
        auto iface = reinterpret_cast<const char* (*)()>(companion_symbol("lab_companion_interface"));
        auto create = reinterpret_cast<I* (*)(Device&)>(companion_symbol("lab_companion_create"));
        if (!iface || !create)
            throw std::runtime_error("the lesson's CUDA companion exports no kernels: add LAB_COMPANION(Interface, Impl) to its .cu");
        if (std::string(iface()) != I::kInterface)
            throw std::runtime_error(std::string("the lesson's CUDA companion implements ") + iface() + ", the lesson asks for " +
                                     I::kInterface + ": rebuild the lesson and its companion together");
        return std::unique_ptr<I>(create(device()));
    }
};

// A run's raw data, as recorded: what derive() works from.
struct RawRun {
    std::string lesson_id;
    RunOptions options;
    DeviceKind device_kind = DeviceKind::cpu;
    DeviceFacts facts;
    // The ceilings the run holds its workloads against: those it started with, raised by every
    // ceiling it measured while running (effective_ceilings). Derive from these.
    Ceilings ceilings;
    Ceilings ceilings_at_start;                          // as calibrated or cached, before the run
    std::vector<CeilingMeasurement> ceiling_measurements; // measured during the run (raw)
    std::vector<Measurement> measurements;
    std::vector<Skip> skipped;          // workloads run() chose not to measure, and why
    bool skips_recorded = true;         // false for records written before skips were recorded

    const Measurement* find(const std::string& name) const {
        for (const auto& m : measurements)
            if (m.workload.name == name) return &m;
        return nullptr;
    }
    const Measurement& at(const std::string& name) const {
        if (auto* m = find(name)) return *m;
        throw std::runtime_error("the run has no workload named '" + name + "'");
    }
};

// The rate a ceiling measurement shows: work / median for FLOP/s and B/s, the median for the
// launch cost; 0 when it cannot tell. An "evidence" entry shows the rate of the workload it names.
inline double ceiling_rate(const CeilingMeasurement& c, const std::vector<Measurement>& workloads) {
    const Measurement* m = &c.measurement;
    if (c.purpose == "evidence") {
        m = nullptr;
        for (const auto& w : workloads)
            if (!c.workloads.empty() && w.workload.name == c.workloads.front()) m = &w;
        if (!m) return 0;
    }
    const double t = m->time.median;
    if (!(t > 0) || !std::isfinite(t)) return 0;
    if (c.ceiling == "launch") return t;
    if (c.ceiling.rfind("flops.", 0) == 0) return m->workload.flops / t;
    if (c.ceiling.rfind("bandwidth.", 0) == 0) return m->workload.bytes / t;
    return 0;
}

// The bandwidth kernels whose best is the DRAM roof ("bandwidth.best"): read, copy, triad and,
// where the device measures it, an in-place update (which pays no write-allocate reads). Others
// (a GPU's memcpy) are references, not roofs.
inline bool is_bandwidth_roof_kernel(const std::string& kernel) {
    return kernel == "read" || kernel == "copy" || kernel == "triad" || kernel == "update";
}

// The roof bandwidth kernel with the largest ceiling ("" when there is none).
inline std::string best_bandwidth_kernel(const Ceilings& c) {
    std::string best;
    double value = 0;
    for (const auto& [k, v] : c.bandwidth_bytes_per_s)
        if (is_bandwidth_roof_kernel(k) && v.value > value) value = v.value, best = k;
    return best;
}

// Sets "best" to the largest roof bandwidth kernel's ceiling, naming it: what every calibration
// does once its bandwidth kernels are measured.
inline void set_best_bandwidth(Ceilings& c) {
    const std::string kernel = best_bandwidth_kernel(c);
    if (kernel.empty()) return;
    Ceiling best = c.bandwidth_bytes_per_s[kernel];
    best.method = "best sustained bandwidth kernel: " + kernel;
    c.bandwidth_bytes_per_s["best"] = best;
}

// A ceiling's source when a workload's own rate raised it: "raised to the rate of workload 'x'".
inline constexpr std::string_view kRaisedSourcePrefix = "raised to the rate of workload '";
// The workload that raised a ceiling to its own rate, or "" when none did.
inline std::string raising_workload(const Ceiling& c) {
    if (c.source.rfind(kRaisedSourcePrefix, 0) != 0 || c.source.size() <= kRaisedSourcePrefix.size()) return "";
    return c.source.substr(kRaisedSourcePrefix.size(), c.source.size() - kRaisedSourcePrefix.size() - 1);
}

// The ceilings a run holds its workloads against (DESIGN.md, "Trusting ceilings"): a ceiling is
// never below what the same machine was seen to do, so each FLOP/s and bandwidth ceiling is the
// largest of its starting value and every in-run measurement of it, and "bandwidth.best" is the
// largest bandwidth of all. (The launch cost, a cost not a ceiling, keeps its calibrated value.)
inline Ceilings effective_ceilings(const Ceilings& start, const std::vector<CeilingMeasurement>& in_run,
                                   const std::vector<Measurement>& workloads) {
    Ceilings c = start;
    for (const auto& cm : in_run) {
        double rate = ceiling_rate(cm, workloads);
        if (!(rate > 0)) continue;
        std::map<std::string, Ceiling>* table = nullptr;
        std::string key;
        if (cm.ceiling.rfind("flops.", 0) == 0) table = &c.flops_per_s, key = cm.ceiling.substr(6);
        else if (cm.ceiling.rfind("bandwidth.", 0) == 0) table = &c.bandwidth_bytes_per_s, key = cm.ceiling.substr(10);
        if (!table || (table == &c.bandwidth_bytes_per_s && !is_bandwidth_roof_kernel(key) && key != "best")) continue;
        Ceiling& target = (*table)[key];
        if (rate > target.value) {
            target.value = rate;
            target.unit = table == &c.flops_per_s ? "FLOP/s" : "B/s";
            target.source = cm.purpose == "evidence" ? std::string(kRaisedSourcePrefix) + cm.workloads.front() + "'"
                                                     : "re-measured in this run (" + cm.purpose + ")";
            // The method says how this value was measured, not how the one it replaces was: the
            // kernel's description stays, its statistics are the re-measure's.
            const std::string kernel = target.method.substr(0, target.method.find("; median of"));
            if (cm.purpose == "evidence") {
                target.method = "the rate workload '" + cm.workloads.front() + "' reached in this run";
            } else {
                char stats[160];
                std::snprintf(stats, sizeof stats, "median of %d samples%s, spread %.1f%%%s", cm.measurement.time.samples,
                              cm.measurement.time.batch > 1 ? (" of " + std::to_string(cm.measurement.time.batch) + " back-to-back invocations").c_str() : "",
                              100 * cm.measurement.time.noise, cm.measurement.time.noise_met ? "" : " (noise target not met)");
                target.method = (kernel.empty() ? "" : kernel + "; ") + stats;
            }
            target.samples = cm.purpose == "evidence" ? 0 : cm.measurement.time.samples;
            target.spread = cm.purpose == "evidence" ? 0 : cm.measurement.time.noise;
            target.noise_met = cm.purpose == "evidence" || cm.measurement.time.noise_met;
            target.load = cm.measurement.load;
            target.trusted = true;
        }
    }
    if (in_run.empty()) return c;
    // "best" is the largest of the roof kernels, or of a workload's rate that raised it.
    Ceiling best;
    std::string best_kernel;
    for (const auto& [k, v] : c.bandwidth_bytes_per_s)
        if ((is_bandwidth_roof_kernel(k) || (k == "best" && !v.source.empty() && v.source.rfind("raised", 0) == 0)) &&
            v.value > best.value)
            best = v, best_kernel = k;
    if (best.value > 0) {
        if (best_kernel != "best") best.method = "best sustained bandwidth kernel: " + best_kernel + "; " + best.method;
        c.bandwidth_bytes_per_s["best"] = best;
    }
    return c;
}

// Per-workload derived values (DESIGN.md's roofline definition applied to one workload).
struct WorkloadDerivation {
    std::string workload;
    roofline::Placement placement;
};

struct Derivation {
    std::vector<WorkloadDerivation> workloads;
    std::vector<MetricValue> metrics;
    // The lesson's teaching output. `{metric.name}` placeholders are replaced by the metric's
    // value and unit, or by "?" when the metric is a graded answer being withheld;
    // `{shipped:NAME}` by the path where lab finds NAME, a file the lessons ship for students
    // (NAME: the file's name, or a metric whose value is one).
    std::vector<std::string> teaching;
    // The lesson's plots (lab run shows them in the terminal; --plots writes each as SVG).
    std::vector<Plot> plots;
    // What the lesson declares (Lesson::declarations()), filled before derive() runs: set()
    // takes each metric's unit and kind from here, so a metric is described once.
    std::vector<MetricDecl> declared;

    // A declared metric's value: a number or integer (by its declaration), or a category.
    // Throws std::logic_error for a metric info() does not declare, or of the other kind. Set
    // again, the later value replaces the earlier one: a metric has one value, which the teaching
    // text, the run record and the grader all read.
    void set(const std::string& name, double value) {
        const MetricDecl& d = declaration(name, false);
        put({name, d.kind, d.unit, d.kind == MetricKind::integer ? std::round(value) : value, {}});
    }
    void set(const std::string& name, const std::string& text) {
        const MetricDecl& d = declaration(name, true);
        put({name, d.kind, "", 0, text});
    }
    const MetricValue* find(const std::string& name) const {
        for (const auto& m : metrics)
            if (m.name == name) return &m;
        return nullptr;
    }
    // A placed workload's position on the roofline (throws when the run did not measure it).
    const roofline::Placement& placement(const std::string& workload) const {
        for (const auto& w : workloads)
            if (w.workload == workload) return w.placement;
        throw std::logic_error("no placed workload '" + workload + "' in this derivation");
    }

    // Unchecked, with the unit stated here: for the SDK's standard metrics and for tests that
    // build a derivation by hand. A lesson uses set().
    void number(const std::string& name, double value, const std::string& unit) {
        metrics.push_back({name, MetricKind::number, unit, value, {}});
    }
    void integer(const std::string& name, long long value, const std::string& unit = "") {
        metrics.push_back({name, MetricKind::integer, unit, static_cast<double>(value), {}});
    }
    void category(const std::string& name, const std::string& value) {
        metrics.push_back({name, MetricKind::category, "", 0, value});
    }

private:
    void put(MetricValue v) {
        for (auto& m : metrics)
            if (m.name == v.name) {
                m = std::move(v);
                return;
            }
        metrics.push_back(std::move(v));
    }
    const MetricDecl& declaration(const std::string& name, bool category) const {
        for (const auto& d : declared)
            if (d.name == name) {
                if ((d.kind == MetricKind::category) != category)
                    throw std::logic_error("derive() sets '" + name + "' as a " + (category ? "category" : "number") +
                                           ", but info() declares it a " + (category ? "number" : "category"));
                return d;
            }
        throw std::logic_error("derive() sets '" + name + "', which info() does not declare: add it to LessonInfo::metrics");
    }
};

// The ceilings a recorded workload is placed against: the run's (its roofline, the roof fraction
// everyone sees) and, for the verdict, the references measured right after it, where the run
// measured them: the same statistic, close together in time.
inline roofline::PlacementCeilings placement_ceilings(const RawRun& run, const std::string& name) {
    using roofline::Uncertain;
    const Workload& w = run.at(name).workload;
    auto err = [](const TimeStats& t) { return roofline::median_rel_err(t.noise, t.samples); };
    roofline::PlacementCeilings pc;
    pc.peak_flops = run.ceilings.peak_flops(w.pipe);
    pc.peak_bandwidth = run.ceilings.peak_bandwidth();
    const Ceiling& launch = run.ceilings.launch_s;
    pc.launch = {launch.value, roofline::median_rel_err(launch.spread, launch.samples)};
    for (const auto& cm : run.ceiling_measurements) {
        if (cm.purpose != "reference" || std::find(cm.workloads.begin(), cm.workloads.end(), name) == cm.workloads.end())
            continue;
        Uncertain u{ceiling_rate(cm, run.measurements), err(cm.measurement.time)};
        if (!(u.value > 0)) continue;
        if (cm.ceiling == "flops." + w.pipe) pc.local_flops = u;
        else if (cm.ceiling == "launch") pc.launch = u;
        else if (cm.ceiling.rfind("bandwidth.", 0) == 0 && w.level == "dram" && u.value > pc.local_bandwidth.value)
            pc.local_bandwidth = u;
    }
    return pc;
}

// Where a recorded workload sits on the roofline of the run's ceilings (DESIGN.md): its rates,
// AI, roof fraction and regimes, with the uncertainty of its own timing and of the ceilings.
inline roofline::Placement placement_of(const RawRun& run, const std::string& name) {
    using roofline::Uncertain;
    const Measurement& m = run.at(name);
    auto err = [](const TimeStats& t) { return roofline::median_rel_err(t.noise, t.samples); };
    std::optional<Uncertain> doubling;
    // Other processes compete for a CPU device's logical CPUs (those the run may use, over which
    // the load is counted); a GPU's kernels run beside them.
    const int cpus = run.device_kind == DeviceKind::cpu ? run.facts.threads : 0;
    for (const auto& other : run.measurements)
        if (other.workload.doubles == name && m.time.median > 0 && other.time.median > 0) {
            const double ratio = other.time.median / m.time.median;
            doubling = Uncertain{ratio, roofline::comparison_rel_err(std::hypot(err(other.time), err(m.time)), ratio,
                                                                     std::max(other.load, m.load), cpus)};
        }
    return roofline::place(m.workload.flops, m.workload.bytes, Uncertain{m.time.median, err(m.time)}, placement_ceilings(run, name),
                           doubling);
}

// Places a recorded workload and publishes its standard metrics "<name>.time_s",
// ".flops_per_s", ".bytes_per_s", ".ai" (when finite), ".roof_fraction", ".predicted_regime",
// ".measured_regime" (".doubling_ratio" when the run holds a workload that doubles it;
// ".counted_flops", ".counted_bytes", ".counted_ai" when the device read hardware counters).
// Lessons do not call it: the SDK does, for every workload in LessonInfo::placed.
inline const WorkloadDerivation& place_workload(const RawRun& run, const std::string& name, Derivation& out) {
    const Measurement& m = run.at(name);
    const roofline::Placement p = placement_of(run, name);
    out.workloads.push_back({name, p});
    out.number(name + ".time_s", m.time.median, "s");
    out.number(name + ".flops_per_s", p.flops_per_s, "FLOP/s");
    out.number(name + ".bytes_per_s", p.bytes_per_s, "B/s");
    if (std::isfinite(p.ai)) out.number(name + ".ai", p.ai, "FLOP/B");
    out.number(name + ".roof_fraction", p.roof_fraction, "ratio");
    out.category(name + ".predicted_regime", roofline::to_string(p.predicted));
    out.category(name + ".measured_regime", roofline::to_text(p.measured));
    if (p.doubling_ratio) out.number(name + ".doubling_ratio", *p.doubling_ratio, "ratio");
    // Placed from hardware counters too, where the device measured them.
    if (!m.counters.empty()) {
        counters::Counted c = counters::from_counters(m.counters);
        if (c.has_flops) out.number(name + ".counted_flops", c.flops, "FLOP");
        if (c.has_bytes) out.number(name + ".counted_bytes", c.bytes, "B");
        if (c.has_flops && c.has_bytes && c.bytes > 0) out.number(name + ".counted_ai", c.flops / c.bytes, "FLOP/B");
    }
    return out.workloads.back();
}

// The declarations of a placed workload's standard metrics (what place_workload publishes).
inline void declare_placed_metrics(std::vector<MetricDecl>& out, const PlacedWorkload& w) {
    struct S { const char* suffix; const char* unit; MetricKind kind; const char* what; };
    static const S standard[] = {
        {"time_s", "s", MetricKind::number, "median time per invocation"},
        {"flops_per_s", "FLOP/s", MetricKind::number, "achieved FLOP/s"},
        {"bytes_per_s", "B/s", MetricKind::number, "achieved bandwidth"},
        {"ai", "FLOP/B", MetricKind::number, "arithmetic intensity"},
        {"roof_fraction", "ratio", MetricKind::number, "achieved fraction of roof(AI)"},
        {"predicted_regime", "", MetricKind::category, "regime predicted from AI vs ridge"},
        {"measured_regime", "", MetricKind::category, "regime measured from the run"},
        {"doubling_ratio", "ratio", MetricKind::number, "time(2x work) / time(1x work)"},
    };
    for (const auto& s : standard) {
        const std::string suffix = s.suffix;
        if (suffix == "doubling_ratio" && !w.doubled) continue;
        MetricDecl d;
        d.name = w.name + "." + suffix;
        d.unit = s.unit;
        d.kind = s.kind;
        d.description = std::string(s.what) + " of " + w.name;
        d.graded = std::find(w.graded.begin(), w.graded.end(), suffix) != w.graded.end();
        d.devices = w.devices;
        d.quick = w.quick;
        out.push_back(d);
    }
    if (!w.counted || std::find(w.devices.begin(), w.devices.end(), "cuda") == w.devices.end()) return;
    struct C { const char* suffix; const char* unit; const char* what; };
    static const C cs[] = {{"counted_flops", "FLOP", "FLOP counted by hardware counters"},
                           {"counted_bytes", "B", "DRAM bytes counted by hardware counters"},
                           {"counted_ai", "FLOP/B", "arithmetic intensity from hardware counters"}};
    for (const auto& c : cs) {
        MetricDecl d;
        d.name = w.name + "." + c.suffix;
        d.unit = c.unit;
        d.description = std::string(c.what) + " for one invocation of " + w.name;
        d.devices = {"cuda"};
        d.quick = w.quick;
        out.push_back(d);
    }
}

class Lesson {
public:
    virtual ~Lesson() = default;
    // What the lesson is and declares: its placed workloads and its own metrics, once.
    virtual LessonInfo info() const = 0;
    virtual void run(Session& session) = 0;
    // The lesson's own metrics and teaching text, from the raw run. `d` arrives holding the
    // standard metrics of every placed workload the run measured (d.placement(name)).
    virtual void derive(const RawRun& run, Derivation& d) const = 0;

    // info() with every metric declared: the placed workloads' standard metrics, then the
    // lesson's own. What the host, the grader and `lab validate` read.
    LessonInfo declarations() const {
        LessonInfo i = info();
        std::vector<MetricDecl> all;
        for (const auto& w : i.placed) declare_placed_metrics(all, w);
        all.insert(all.end(), i.metrics.begin(), i.metrics.end());
        i.metrics = std::move(all);
        return i;
    }
    // The whole derivation of a raw run: placed workloads, then derive(). The one entry point
    // the host calls (after `lab run`, in `lab show`, in the grader).
    Derivation derivation(const RawRun& run) const {
        const LessonInfo i = declarations();
        Derivation d;
        d.declared = i.metrics;
        for (const auto& w : i.placed)
            if (run.find(w.name)) place_workload(run, w.name, d);
        derive(run, d);
        return d;
    }
};

// What the loader reads first, through a plain C symbol, before it trusts anything else.
struct PluginManifest {
    int api_major;
    int api_minor;
    const char* abi_tag;
    const char* kind;   // "lesson" or "device"
    const char* name;   // lesson ID ("02.05") or device kind ("cpu")
};

}  // namespace lab

