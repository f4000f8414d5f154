// Trusting ceilings (DESIGN.md, "Trusting ceilings"): a calibration that misses its noise target
// or runs under load is retried and, if it still misses, stored as untrusted; during a run every
// workload gets reference ceilings measured right after it (its regime is judged against what
// the device did at that moment), and a workload that beats its roof by more than
// roofline::kRoofMargin makes the run re-measure that ceiling, or raise it from the workload's
// own rate. Everything measured is kept as raw data (CeilingMeasurement) for the run record.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lab/backend.hpp"

namespace lab {

using NoteFn = std::function<void(const std::string&)>;

// The ceilings a calibration may vouch for: FLOP/s per pipe and the roof bandwidth kernels, as
// "flops.<pipe>" and "bandwidth.<kernel>" keys.
std::vector<std::string> ceiling_keys(const Ceilings& c);
Ceiling* find_ceiling(Ceilings& c, const std::string& key);

// Whether a workload's bytes are held to the DRAM roof when it beats it: a DRAM-level workload
// whose bytes per invocation exceed the last-level cache, or that is timed cold (its caches
// flushed before each invocation). One that fits and runs hot can run from the cache, invocation
// after invocation (02.02's 262 kB embedding at 4x DRAM): that says nothing about DRAM, so the
// run does not raise the roof to its rate, and the grader does not call it forged.
inline bool held_to_dram_roof(const Workload& w, const DeviceFacts& facts) {
    const std::uint64_t llc = facts.last_level_cache_bytes();
    const bool from_cache = w.mode == TimingMode::hot && llc > 0 && w.bytes <= static_cast<double>(llc);
    return w.level == "dram" && w.bytes > 0 && !from_cache;
}

// Why a ceiling is not to be trusted ("" when it is): missed noise target, ran under load.
std::string distrust_reason(const Ceiling& c);

// Calibrates, then retries every ceiling that missed its noise target or ran under load (once,
// after a pause, where the backend can measure it alone), keeping the higher value; what still
// misses is marked untrusted and said in a note.
Ceilings calibrate_with_conditions(Backend& backend, Device& device, bool quick, const MeasureFn& measure,
                                   const std::function<void(const std::string&)>& progress, const NoteFn& note);

// The in-run side, held by the child's session.
class InRunCeilings {
public:
    InRunCeilings(Backend& backend, Device& device, Ceilings start, MeasureFn measure, NoteFn note);
    // Re-measures the starting ceilings that are not trusted (calibrated under load or noisy).
    void recheck_untrusted();
    // After a workload is measured: its references, then the roof-margin check.
    void after_workload(const Measurement& m, const std::vector<Measurement>& workloads);
    const Ceilings& start() const { return start_; }
    const Ceilings& current() const { return current_; }
    const std::vector<CeilingMeasurement>& measurements() const { return measured_; }
    // Ceilings that were stale (a re-measure beat them by more than the margin): worth caching.
    bool raised_beyond_margin() const { return raised_beyond_margin_; }

private:
    std::optional<Measurement> probe(const std::string& key);
    void add(CeilingMeasurement cm, const std::vector<Measurement>& workloads);

    Backend& backend_;
    Device& device_;
    Ceilings start_, current_;
    MeasureFn measure_;
    NoteFn note_;
    std::vector<CeilingMeasurement> measured_;
    bool raised_beyond_margin_ = false;
    std::set<std::string> probed_, failed_noted_;  // ceilings a probe measured; those said to fail since
    std::set<std::string> stale_noted_;  // ceilings a reference already found stale (said once)
    // The latest reference of each ceiling: when it ended and its index in measured_.
    std::map<std::string, std::pair<std::chrono::steady_clock::time_point, std::size_t>> last_reference_;
};

}  // namespace lab
