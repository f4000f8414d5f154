// Plausibility of a run record (see plausibility.hpp).
#include "plausibility.hpp"

#include <algorithm>
#include <cmath>

#include "ceiling_trust.hpp"
#include "device_summary.hpp"
#include "lab/roofline.hpp"
#include "run_table.hpp"
#include "units.hpp"

namespace lab::grader {

namespace {

// Physics: a rate may exceed what the device can do on paper (its datasheet, or a CPU's
// theoretical FMA peak from configs/cpu_microarchitectures.yaml) by kPaperSlack, or
// kMeasuredClockSlack against a theoretical peak (device_summary.hpp says why). Bandwidth gets
// more against a datasheet: a workload whose working set partly fits a cache is counted as DRAM
// traffic but served faster.
constexpr double kPhysicsSlack = kPaperSlack;
constexpr double kDatasheetBandwidthSlack = 1.5;

std::string rate(double v, const std::string& unit) { return units::format(v, unit); }

}  // namespace

std::vector<std::string> plausibility_problems(const nlohmann::json& record, const RawRun& raw, const Derivation& d) {
    std::vector<std::string> problems;
    const std::string again = "record the run again with `lab run " + raw.lesson_id + "`";
    // The ceilings the workloads are held against: as the run started, raised by what it measured
    // while running (RawRun::ceilings, recomputed from the raw data by effective_ceilings).
    const Ceilings& ceilings = raw.ceilings;
    const double bw = ceilings.peak_bandwidth();

    // What the device can do on paper, from the grader's own configs (never the record's copy).
    const nlohmann::json paper = device_spec_json(raw.device_kind, raw.facts, raw.ceilings_at_start);
    const std::string paper_kind = paper.value("kind", "none");
    auto paper_flops = [&](const std::string& pipe) -> double {
        const auto& f = paper.value("flops_per_s", nlohmann::json::object());
        return f.contains(pipe) && f[pipe].is_number() ? f[pipe].get<double>() : 0.0;
    };
    const double paper_bw = paper.contains("bandwidth_bytes_per_s") && paper["bandwidth_bytes_per_s"].is_number()
                                ? paper["bandwidth_bytes_per_s"].get<double>() : 0.0;
    const std::string paper_name = paper_kind == "datasheet" ? "the datasheet's" : "the theoretical peak's";
    const double flops_slack = paper_kind == "datasheet" ? kPhysicsSlack : kMeasuredClockSlack;

    for (const auto& m : raw.measurements) {
        const Workload& w = m.workload;
        if (!(m.time.median > 0) || !std::isfinite(m.time.median)) {
            problems.push_back("workload '" + w.name + "' has no positive median time");
            continue;
        }
        if (w.flops < 0 || w.bytes < 0) problems.push_back("workload '" + w.name + "' has negative counts");
        if (w.name.rfind("calibrate.", 0) == 0) continue;
        const double fps = w.flops / m.time.median, bps = w.bytes / m.time.median;
        // Physics first: no run, however measured, beats the device on paper.
        if (double p = paper_flops(w.pipe); p > 0 && fps > flops_slack * p)
            problems.push_back("workload '" + w.name + "' claims " + rate(fps, "FLOP/s") + ", above " + paper_name + " " + w.pipe +
                               " figure of " + rate(p, "FLOP/s") + ": no device does that; " + again);
        if (w.level == "dram" && paper_bw > 0 && bps > kDatasheetBandwidthSlack * paper_bw)
            problems.push_back("workload '" + w.name + "' claims " + rate(bps, "B/s") + ", above the datasheet's DRAM bandwidth of " +
                               rate(paper_bw, "B/s") + "; " + again);
        // Then the run's own ceilings: a run re-measures a ceiling a workload beats by more than
        // the margin (or raises it to the workload's rate), so an honest record never shows one.
        const double peak = ceilings.peak_flops(w.pipe);
        if (peak > 0 && fps > roofline::kRoofMargin * peak)
            problems.push_back("workload '" + w.name + "' claims " + rate(fps, "FLOP/s") + ", above its " + w.pipe + " roof of " +
                               rate(peak, "FLOP/s") + " even with the ceilings the run measured; a run of this lab never "
                               "records that (an older lab, or an edited record): " + again);
        if (held_to_dram_roof(w, raw.facts) && bw > 0 && bps > roofline::kRoofMargin * bw)
            problems.push_back("workload '" + w.name + "' claims " + rate(bps, "B/s") + ", above the DRAM roof of " + rate(bw, "B/s") +
                               " even with the ceilings the run measured; a run of this lab never records that (an older "
                               "lab, or an edited record): " + again);
    }

    // The in-run ceiling measurements are raw data like any workload's.
    for (const auto& cm : raw.ceiling_measurements) {
        if (cm.purpose == "evidence") {
            if (cm.workloads.empty() || !raw.find(cm.workloads.front()))
                problems.push_back("the ceiling " + cm.ceiling + " is raised by a workload the run does not hold");
        } else if (!(cm.measurement.time.median > 0) || !std::isfinite(cm.measurement.time.median)) {
            problems.push_back("an in-run measurement of the " + cm.ceiling + " ceiling has no positive median time");
        }
    }

    // bandwidth.best is the largest of the bandwidth ceilings the record carries.
    {
        double largest = 0;
        for (const auto& [k, v] : raw.ceilings_at_start.bandwidth_bytes_per_s)
            if (is_bandwidth_roof_kernel(k)) largest = std::max(largest, v.value);
        const double best = raw.ceilings_at_start.peak_bandwidth();
        if (largest > 0 && std::fabs(best - largest) > 1e-9 * largest)
            problems.push_back("the record's bandwidth.best ceiling (" + rate(best, "B/s") +
                               ") is not the largest of its bandwidth-kernel ceilings (" + rate(largest, "B/s") + "); " + again);
    }

    // Ceilings against the device on paper: a forged ceiling would lift every roof.
    for (const auto& [pipe, c] : ceilings.flops_per_s)
        if (double p = paper_flops(pipe); p > 0 && c.value > flops_slack * p)
            problems.push_back("the measured " + pipe + " ceiling " + rate(c.value, "FLOP/s") + " exceeds " + paper_name + " " +
                               rate(p, "FLOP/s") + ": run `lab calibrate`, then " + again +
                               "; if it happens again, show your instructor (configs/ may not know this device)");
    if (paper_kind == "datasheet" && paper_bw > 0 && bw > kPhysicsSlack * paper_bw)
        problems.push_back("the measured bandwidth ceiling " + rate(bw, "B/s") + " exceeds the datasheet's " + rate(paper_bw, "B/s") +
                           ": run `lab calibrate`, then " + again);

    // Stored derived values must be what the lesson's code derives from the raw measurements.
    const auto& stored = record.value("metrics", nlohmann::json::object());
    for (const auto& m : d.metrics) {
        if (!stored.contains(m.name)) continue;
        const auto& v = stored[m.name]["value"];
        bool same = m.kind == MetricKind::category ? (v.is_string() && v.get<std::string>() == m.text)
                    : v.is_number()               ? std::fabs(v.get<double>() - m.number) <= 1e-9 * std::fabs(m.number) + 1e-300
                                                  : v.is_null();
        if (!same) problems.push_back("the record's stored " + m.name + " differs from the value its measurements give");
    }
    return problems;
}

}  // namespace lab::grader
