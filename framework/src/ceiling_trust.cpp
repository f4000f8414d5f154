// Trusting ceilings (see ceiling_trust.hpp).
#include "ceiling_trust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "format.hpp"
#include "machine_load.hpp"

namespace lab {

namespace {

// A reference measured less than this long ago still describes the device "now": consecutive
// short workloads share one instead of measuring it again.
constexpr double kReferenceReuse_s = 1.5;
// A workload that still beats its re-measured ceiling gets this many re-measures before its own
// rate raises the ceiling.
constexpr int kRemeasureAttempts = 2;
// Before retrying a ceiling calibrated under load, give a passing burst of work time to end.
constexpr auto kRetryPause = std::chrono::milliseconds(1000);

double rate_of(const std::string& key, const Measurement& m) {
    CeilingMeasurement cm{key, "reference", {}, m};
    return ceiling_rate(cm, {});
}

}  // namespace

std::vector<std::string> ceiling_keys(const Ceilings& c) {
    std::vector<std::string> keys;
    for (const auto& [pipe, v] : c.flops_per_s) keys.push_back("flops." + pipe);
    for (const auto& [kernel, v] : c.bandwidth_bytes_per_s)
        if (is_bandwidth_roof_kernel(kernel)) keys.push_back("bandwidth." + kernel);
    return keys;
}

Ceiling* find_ceiling(Ceilings& c, const std::string& key) {
    if (key == "launch") return &c.launch_s;
    if (key.rfind("flops.", 0) == 0) {
        auto it = c.flops_per_s.find(key.substr(6));
        return it == c.flops_per_s.end() ? nullptr : &it->second;
    }
    if (key.rfind("bandwidth.", 0) == 0) {
        auto it = c.bandwidth_bytes_per_s.find(key.substr(10));
        return it == c.bandwidth_bytes_per_s.end() ? nullptr : &it->second;
    }
    return nullptr;
}

std::string distrust_reason(const Ceiling& c) {
    std::string why;
    if (!c.noise_met) why = "its samples missed the noise target (spread " + format::spread(c.spread) + ")";
    if (c.load >= kLoadedMachineCpus)
        why += (why.empty() ? "" : " and ") + fmt::format("other processes used {:.1f} CPUs while it ran", c.load);
    return why;
}

Ceilings calibrate_with_conditions(Backend& backend, Device& device, bool quick, const MeasureFn& measure,
                                   const std::function<void(const std::string&)>& progress, const NoteFn& note) {
    Ceilings c = backend.calibrate(device, quick, measure, progress);
    // The launch cost is judged as the ceilings are (a busy machine makes it read high), but a
    // cost is better when lower. It is not one of ceiling_keys: a run measures it beside every
    // workload and never carries the calibrated one into a verdict.
    std::vector<std::string> keys = ceiling_keys(c);
    if (c.launch_s.value > 0) keys.push_back("launch");
    std::vector<std::string> suspect;
    for (const auto& key : keys)
        if (!distrust_reason(*find_ceiling(c, key)).empty()) suspect.push_back(key);
    if (!suspect.empty()) {
        std::this_thread::sleep_for(kRetryPause);
        for (const auto& key : suspect) {
            progress("calibrating again: " + key);
            std::optional<Measurement> m = backend.probe_ceiling(device, key, measure);
            Ceiling& old = *find_ceiling(c, key);
            if (!m) continue;
            double rate = rate_of(key, *m);
            // The better of the two: a busy machine only ever slows a ceiling's kernel down.
            const bool better = key == "launch" ? rate > 0 && rate < old.value : rate > old.value;
            if (better) {
                std::string method = old.method.substr(0, old.method.find("; median of"));
                const double work = key == "launch" ? 0 : key.rfind("flops.", 0) == 0 ? m->workload.flops : m->workload.bytes;
                old = ceiling_from(*m, work, old.unit, method);
                old.source = "calibration (retried)";
            }
        }
    }
    std::string untrusted;
    for (const auto& key : keys) {
        Ceiling& v = *find_ceiling(c, key);
        std::string why = distrust_reason(v);
        v.trusted = why.empty();
        if (!v.trusted) untrusted += fmt::format("\n  {} {}: {}", key, format::quantity(v.value, v.unit), why);
    }
    // One ceiling a line: a busy machine can distrust all seven, each with its own reason.
    if (!untrusted.empty())
        note("ceilings stored as not trusted, even after measuring them again (each run measures them again before use; run "
             "`lab calibrate` when the machine is quiet):" + untrusted);
    set_best_bandwidth(c);  // "best" follows the roof kernels it is the best of
    return c;
}

InRunCeilings::InRunCeilings(Backend& backend, Device& device, Ceilings start, MeasureFn measure, NoteFn note)
    : backend_(backend), device_(device), start_(std::move(start)), current_(start_), measure_(std::move(measure)),
      note_(std::move(note)) {}

// Asked every time: nullopt may be a passing failure (a GPU probe out of memory beside the
// lesson's buffers), and a backend answers "no kernel for this" without measuring anything. A
// ceiling measured earlier in the run that cannot be now is said, once: its references are
// missing from there on where it fails.
std::optional<Measurement> InRunCeilings::probe(const std::string& key) {
    std::optional<Measurement> m = backend_.probe_ceiling(device_, key, measure_);
    if (m) probed_.insert(key);
    else if (probed_.count(key) && failed_noted_.insert(key).second)
        note_("the " + key + " ceiling, measured earlier in this run, could not be measured again (the device may be short of "
              "memory beside the lesson's buffers); where that happens its reference is left out and the run judges against "
              "the ceiling it has");
    return m;
}

void InRunCeilings::add(CeilingMeasurement cm, const std::vector<Measurement>& workloads) {
    // A reference that finds a starting ceiling stale (beaten by more than the margin) says so
    // once: the run acts on it at once, since every later roof is the raised one.
    if (cm.purpose == "reference" && cm.ceiling != "launch" && !stale_noted_.count(cm.ceiling)) {
        const Ceiling* start = find_ceiling(start_, cm.ceiling);
        const double rate = ceiling_rate(cm, workloads);
        if (start && start->value > 0 && rate > roofline::kRoofMargin * start->value) {
            stale_noted_.insert(cm.ceiling);
            raised_beyond_margin_ = true;
            note_(fmt::format("the {} ceiling of {} was stale: measured beside '{}' it reached {} ({:.2f}x); from here on "
                              "the run uses the highest rate it measures (the ceilings shown with the results)",
                              cm.ceiling, format::quantity(start->value, start->unit), cm.workloads.empty() ? "" : cm.workloads.front(),
                              format::quantity(rate, start->unit), rate / start->value));
        }
    }
    measured_.push_back(std::move(cm));
    current_ = effective_ceilings(start_, measured_, workloads);
}

void InRunCeilings::recheck_untrusted() {
    std::string story;
    bool lower = false;
    for (const auto& key : ceiling_keys(start_)) {
        const Ceiling& c = *find_ceiling(start_, key);
        if (c.trusted) continue;
        std::optional<Measurement> m = probe(key);
        if (!m) continue;
        double rate = rate_of(key, *m);
        lower = lower || rate < c.value;
        story += fmt::format("{}{} {} -> {}{}", story.empty() ? "" : ", ", key, format::quantity(c.value, c.unit), format::quantity(rate, c.unit),
                             rate < c.value ? " (kept)" : "");
        if (rate > roofline::kRoofMargin * c.value) raised_beyond_margin_ = true;
        add({key, "remeasure", {}, *m}, {});
    }
    // The rule once, not after each ceiling it applies to.
    if (!story.empty())
        note_("cached ceilings that were not trusted, measured again before the lesson: " + story +
              (lower ? "; kept: a run never lowers a ceiling, it only raises it" : ""));
}

void InRunCeilings::after_workload(const Measurement& m, const std::vector<Measurement>& workloads) {
    const Workload& w = m.workload;
    using clock = std::chrono::steady_clock;
    auto& last = last_reference_;

    // References: the compute ceiling of its pipe, the best bandwidth kernel, the launch cost.
    std::vector<std::string> keys = {"launch"};
    if (w.flops > 0) keys.push_back("flops." + w.pipe);
    if (w.bytes > 0 && w.level == "dram") {
        const std::string best = best_bandwidth_kernel(current_);
        keys.push_back("bandwidth." + (best.empty() ? std::string("read") : best));
    }
    for (const auto& key : keys) {
        auto it = last.find(key);
        if (it != last.end() && it->second.second < measured_.size() &&
            std::chrono::duration<double>(clock::now() - it->second.first).count() < kReferenceReuse_s) {
            measured_[it->second.second].workloads.push_back(w.name);
            continue;
        }
        std::optional<Measurement> r = probe(key);
        if (!r) continue;
        add({key, "reference", {w.name}, *r}, workloads);
        last[key] = {clock::now(), measured_.size() - 1};
    }

    // The roof-margin check: a workload may not beat its roof by more than kRoofMargin.
    auto over = [&](std::string& key, double& rate, double& roof) {
        const double t = m.time.median;
        if (!(t > 0)) return false;
        rate = w.flops / t;
        roof = current_.peak_flops(w.pipe);
        if (w.flops > 0 && roof > 0 && rate > roofline::kRoofMargin * roof) return key = "flops." + w.pipe, true;
        rate = w.bytes / t;
        roof = current_.peak_bandwidth();
        if (w.level == "dram" && w.bytes > 0 && roof > 0 && rate > roofline::kRoofMargin * roof) {
            key = "bandwidth.best";
            return true;
        }
        return false;
    };
    std::string key;
    double rate = 0, roof = 0;
    if (!over(key, rate, roof)) return;
    // A workload that fits in the last-level cache (held_to_dram_roof) may beat the DRAM roof:
    // raising the roof to its rate would judge every other workload against a cache's bandwidth
    // and show bw.best above every bandwidth kernel.
    if (key == "bandwidth.best" && !held_to_dram_roof(w, device_.facts())) {
        note_(fmt::format("'{}' ran at {}, {:.2f}x the DRAM ceiling of {}: its {} fit in the {} last-level cache, so it ran from "
                          "cache; the DRAM ceiling is left as it is",
                          w.name, format::quantity(rate, "B/s"), rate / roof, format::quantity(roof, "B/s"), format::quantity(w.bytes, "B"),
                          format::quantity(double(device_.facts().last_level_cache_bytes()), "B")));
        return;
    }
    const double first_roof = roof;
    const std::string unit = key == "bandwidth.best" ? "B/s" : "FLOP/s";
    std::string story = fmt::format("'{}' ran at {}, {:.2f}x the {} ceiling of {}: that ceiling was stale", w.name,
                                    format::quantity(rate, unit), rate / roof, key, format::quantity(roof, unit));
    int tries = 0;
    double remeasured = 0;  // the best rate the re-measures themselves reached
    for (; tries < kRemeasureAttempts && over(key, rate, roof); ++tries) {
        std::vector<std::string> probes = {key};
        if (key == "bandwidth.best")
            probes = {"bandwidth.read", "bandwidth.copy", "bandwidth.triad", "bandwidth.update"};
        bool any = false;
        for (const auto& p : probes)
            if (std::optional<Measurement> r = probe(p)) {
                remeasured = std::max(remeasured, rate_of(p, *r));
                add({p, "remeasure", {w.name}, *r}, workloads);
                any = true;
            }
        if (!any) break;
    }
    const double after = key == "bandwidth.best" ? current_.peak_bandwidth() : current_.peak_flops(w.pipe);
    if (tries > 0) {
        // What the re-measures reached, and, when an earlier measurement of this run stands higher,
        // the roof the run keeps: the re-measure's figure is not the kept one.
        story += fmt::format("; measured again ({}x): {}", tries, format::quantity(remeasured, unit));
        if (after > remeasured) story += fmt::format(" (the run's roof stays {}, its highest so far)", format::quantity(after, unit));
        if (after > roofline::kRoofMargin * first_roof) raised_beyond_margin_ = true;
    }
    if (over(key, rate, roof)) {
        story += fmt::format("; {}, so the ceiling is raised to the workload's own rate",
                             tries > 0 ? "still below the workload (a busy machine slows a re-measure; or the workload "
                                         "moves memory in a way the ceiling kernels do not, such as an in-place update)"
                                       : "this device cannot measure it alone");
        add({key, "evidence", {w.name}, {}}, workloads);
    }
    note_(story);
}

}  // namespace lab
