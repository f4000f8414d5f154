// The lesson interface: what a lesson plugin implements (Lesson), what the host hands it while
// it runs (Session), and what its derivation turns raw measurements into (Derivation).
//
// A lesson has three parts, each a plain function of its inputs:
//   info()    static declarations, read without running anything;
//   run()     measures workloads on the session's device (the child process calls it);
//   derive()  raw measurements -> metrics; the same code runs after `lab run` and when the grader
//             re-derives a recorded run, so graded values never come from a stored copy.
#pragma once

#include <cmath>
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
    // Times `launch` by the engine's method (warm-up, stopping rules, cold/hot) and records it.
    virtual const Measurement& measure(const Workload& workload, const Launch& launch) = 0;
    // A progress line (stderr, only when it is a terminal).
    virtual void progress(const std::string& line) = 0;
    // A symbol of the lesson's device companion (lab_<ID>_cuda.so), loaded by the CUDA backend;
    // nullptr on a CPU device.
    virtual void* companion_symbol(const std::string& name) = 0;
};

// A run's raw data, as recorded: what derive() works from.
struct RawRun {
    std::string lesson_id;
    RunOptions options;
    DeviceKind device_kind = DeviceKind::cpu;
    DeviceFacts facts;
    Ceilings ceilings;
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
    const Measurement& m = run.at(name);
    const Workload& w = m.workload;
    std::optional<double> doubling;
    for (const auto& other : run.measurements)
        if (other.workload.doubles == name && m.time.median > 0)
            doubling = other.time.median / m.time.median;
    double peak_flops = run.ceilings.peak_flops(w.pipe);
    auto p = roofline::place(w.flops, w.bytes, m.time.median, peak_flops,
                             run.ceilings.peak_bandwidth(), run.ceilings.launch_s.value, doubling);
    out.workloads.push_back({name, p});
    out.number(name + ".time_s", m.time.median, "s");
    out.number(name + ".flops_per_s", p.flops_per_s, "FLOP/s");
    out.number(name + ".bytes_per_s", p.bytes_per_s, "B/s");
    if (std::isfinite(p.ai)) out.number(name + ".ai", p.ai, "FLOP/B");
    out.number(name + ".roof_fraction", p.roof_fraction, "ratio");
    out.category(name + ".predicted_regime", roofline::to_string(p.predicted));
    out.category(name + ".measured_regime", roofline::to_string(p.measured));
    if (doubling) out.number(name + ".doubling_ratio", *doubling, "ratio");
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
