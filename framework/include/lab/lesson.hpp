// The lesson interface: what a lesson plugin implements (Lesson), what the host hands it while
// it runs (Session), and what its derivation turns raw measurements into (Derivation).
//
// A lesson has three parts, each a plain function of its inputs:
//   info()    static declarations, read without running anything;
//   run()     measures workloads on the session's device (the child process calls it);
//   derive()  raw measurements -> metrics; the same code runs after `lab run` and when the grader
//             re-derives a recorded run, so graded values never come from a stored copy.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
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

// Enqueues one invocation of a workload's kernel on the stream.
using Launch = std::function<void(Stream&)>;

class Session {
public:
    virtual ~Session() = default;
    virtual Device& device() = 0;
    virtual const Ceilings& ceilings() const = 0;
    virtual const RunOptions& options() const = 0;
    // Times `launch` by the engine's method (warm-up, stopping rules, cold/hot), records it and
    // returns a copy: a lesson may keep it and adapt what it measures next to what it saw.
    virtual Measurement measure(const Workload& workload, const Launch& launch) = 0;
    // A progress line (stderr, only when it is a terminal).
    virtual void progress(const std::string& line) = 0;
    // A symbol of the lesson's device companion (lab_<ID>_cuda.so), loaded by the CUDA backend;
    // nullptr on a CPU device. Lessons use companion<T>() below.
    virtual void* companion_symbol(const std::string& name) = 0;

    // The table of GPU kernels a lesson's companion exports: `symbol` names an extern "C"
    // function returning `const T*`. Throws, naming
    // the symbol, when the companion or the symbol is missing.
    template <class T>
    const T& companion(const std::string& symbol) {
        using Get = const T* (*)();
        void* f = companion_symbol(symbol);
        if (!f) throw std::runtime_error("the lesson's CUDA companion does not export '" + symbol + "'");
        const T* table = reinterpret_cast<Get>(f)();
        if (!table) throw std::runtime_error("the lesson's CUDA companion returned no kernels from '" + symbol + "'");
        return *table;
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
            target.source = cm.purpose == "evidence" ? "raised to the rate of workload '" + cm.workloads.front() + "'"
                                                     : "re-measured in this run (" + cm.purpose + ")";
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
    // value and unit, or by "?" when the metric is a graded answer being withheld.
    std::vector<std::string> teaching;

    void number(const std::string& name, double value, const std::string& unit) {
        metrics.push_back({name, MetricKind::number, unit, value, {}});
    }
    void integer(const std::string& name, long long value, const std::string& unit = "") {
        metrics.push_back({name, MetricKind::integer, unit, static_cast<double>(value), {}});
    }
    void category(const std::string& name, const std::string& value) {
        metrics.push_back({name, MetricKind::category, "", 0, value});
    }
    const MetricValue* find(const std::string& name) const {
        for (const auto& m : metrics)
            if (m.name == name) return &m;
        return nullptr;
    }
};

// Places a recorded workload on the roofline of the run's ceilings, and publishes the standard
// per-workload metrics "<name>.time_s", ".flops_per_s", ".bytes_per_s", ".ai",
// ".roof_fraction", ".predicted_regime", ".measured_regime" (and ".doubling_ratio" when the run
// holds a workload that doubles this one; ".counted_flops", ".counted_bytes", ".counted_ai" when
// the device read hardware counters for it).
inline const WorkloadDerivation& place_workload(const RawRun& run, const std::string& name,
                                                Derivation& out) {
    using roofline::Uncertain;
    const Measurement& m = run.at(name);
    const Workload& w = m.workload;
    auto err = [](const TimeStats& t) { return roofline::median_rel_err(t.noise, t.samples); };
    std::optional<Uncertain> doubling;
    for (const auto& other : run.measurements)
        if (other.workload.doubles == name && m.time.median > 0)
            doubling = Uncertain{other.time.median / m.time.median, std::hypot(err(other.time), err(m.time))};
    roofline::PlacementCeilings pc;
    pc.peak_flops = run.ceilings.peak_flops(w.pipe);
    pc.peak_bandwidth = run.ceilings.peak_bandwidth();
    const Ceiling& launch = run.ceilings.launch_s;
    pc.launch = {launch.value, roofline::median_rel_err(launch.spread, launch.samples)};
    // The verdict compares with the ceilings measured right after this workload, where the run
    // measured them (its references): the same statistic, close together in time.
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
    auto p = roofline::place(w.flops, w.bytes, Uncertain{m.time.median, err(m.time)}, pc, doubling);
    out.workloads.push_back({name, p});
    out.number(name + ".time_s", m.time.median, "s");
    out.number(name + ".flops_per_s", p.flops_per_s, "FLOP/s");
    out.number(name + ".bytes_per_s", p.bytes_per_s, "B/s");
    if (std::isfinite(p.ai)) out.number(name + ".ai", p.ai, "FLOP/B");
    out.number(name + ".roof_fraction", p.roof_fraction, "ratio");
    out.category(name + ".predicted_regime", roofline::to_string(p.predicted));
    out.category(name + ".measured_regime", roofline::to_text(p.measured));
    if (doubling) out.number(name + ".doubling_ratio", doubling->value, "ratio");
    // Placed from hardware counters too, where the device measured them.
    if (!m.counters.empty()) {
        counters::Counted c = counters::from_counters(m.counters);
        if (c.has_flops) out.number(name + ".counted_flops", c.flops, "FLOP");
        if (c.has_bytes) out.number(name + ".counted_bytes", c.bytes, "B");
        if (c.has_flops && c.has_bytes && c.bytes > 0) out.number(name + ".counted_ai", c.flops / c.bytes, "FLOP/B");
    }
    return out.workloads.back();
}

// The declarations matching place_workload's metrics, for LessonInfo::metrics. `graded` lists
// the suffixes ("measured_regime", "roof_fraction", ...) that are graded answers.
inline void declare_workload_metrics(std::vector<MetricDecl>& out, const std::string& name,
                                     const std::vector<std::string>& graded = {},
                                     bool doubling = false, bool counted = false) {
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
        std::string suffix = s.suffix;
        if (suffix == "doubling_ratio" && !doubling) continue;
        MetricDecl d;
        d.name = name + "." + suffix;
        d.unit = s.unit;
        d.kind = s.kind;
        d.description = std::string(s.what) + " of " + name;
        for (const auto& g : graded)
            if (g == suffix) d.graded = true;
        out.push_back(d);
    }
    if (counted) {
        struct C { const char* suffix; const char* unit; const char* what; };
        static const C cs[] = {{"counted_flops", "FLOP", "FLOP counted by hardware counters"},
                               {"counted_bytes", "B", "DRAM bytes counted by hardware counters"},
                               {"counted_ai", "FLOP/B", "arithmetic intensity from hardware counters"}};
        for (const auto& c : cs) {
            MetricDecl d;
            d.name = name + "." + c.suffix;
            d.unit = c.unit;
            d.description = std::string(c.what) + " for one invocation of " + name;
            d.devices = {"cuda"};
            out.push_back(d);
        }
    }
}

class Lesson {
public:
    virtual ~Lesson() = default;
    virtual LessonInfo info() const = 0;
    virtual void run(Session& session) = 0;
    virtual Derivation derive(const RawRun& run) const = 0;
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

// Registration: one line at the bottom of a plugin's source.
//   LAB_LESSON(MyLesson, "02.05")      a lesson plugin
// It exports the manifest (C symbol `lab_plugin_manifest`) and a factory under the Boost.DLL
// alias `lab_create_lesson`.
#define LAB_PLUGIN_MANIFEST_(KIND, NAME)                                                        \
    extern "C" __attribute__((visibility("default"))) const ::lab::PluginManifest*             \
    lab_plugin_manifest() {                                                                     \
        static const ::lab::PluginManifest m{::lab::kApiMajor, ::lab::kApiMinor, ::lab::kAbiTag, \
                                             KIND, NAME};                                       \
        return &m;                                                                              \
    }

#define LAB_LESSON(CLASS, ID)                                                                \
    LAB_PLUGIN_MANIFEST_("lesson", ID)                                                       \
    namespace lab_lesson_factory_ {                                                          \
    std::unique_ptr<::lab::Lesson> create() { return std::make_unique<CLASS>(); }            \
    }                                                                                        \
    BOOST_DLL_ALIAS(lab_lesson_factory_::create, lab_create_lesson)
