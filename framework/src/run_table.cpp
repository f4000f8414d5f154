// A run as text for people (see run_table.hpp).
#include "run_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "format.hpp"
#include "machine_load.hpp"
#include "run_record.hpp"

namespace lab {

namespace {

// A workload's parameters for the table: a count of a million or more with a decimal prefix, a
// byte count (a name ending "_B") as a size, so a row keeps its width (02.07's allocation ledger:
// "weights_B=13.5 GB", not "weights_B=13476839424"); the record keeps every digit.
std::string params_text(const Workload& w) {
    std::string params;
    for (const auto& p : w.params) {
        const bool integral = std::fabs(p.value) < 1e15 && p.value == std::floor(p.value);
        const bool bytes = p.name.size() > 2 && p.name.compare(p.name.size() - 2, 2, "_B") == 0;
        std::string value;
        if (integral && std::fabs(p.value) >= 1e6)
            value = format::si(p.value, bytes ? "B" : "", {.digits = 3, .lowest_prefix = 0, .highest_prefix = 15});
        else
            value = integral ? fmt::format("{}", static_cast<long long>(p.value)) : fmt::format("{:g}", p.value);
        value.erase(std::remove(value.begin(), value.end(), ' '), value.end());  // one token per parameter
        params += fmt::format("{}{}={}", params.empty() ? "" : " ", p.name, value);
    }
    return params;
}

// The ceilings measured right after a workload that its verdict used (placement_ceilings):
// launch, its pipe's FLOP/s, and the DRAM bandwidth reference it was held to.
std::string references_text(const RawRun& run, const Workload& w, const roofline::PlacementCeilings& pc) {
    bool launch = false, flops = false;
    std::string bandwidth;
    for (const auto& cm : run.ceiling_measurements) {
        if (cm.purpose != "reference" || std::find(cm.workloads.begin(), cm.workloads.end(), w.name) == cm.workloads.end()) continue;
        if (cm.ceiling == "launch") launch = pc.launch.value > 0;
        else if (cm.ceiling == "flops." + w.pipe) flops = pc.local_flops.value > 0;
        else if (cm.ceiling.rfind("bandwidth.", 0) == 0 && w.level == "dram" && pc.local_bandwidth.value > 0 &&
                 ceiling_rate(cm, run.measurements) == pc.local_bandwidth.value)
            bandwidth = "bw." + cm.ceiling.substr(10);
    }
    std::string out;
    auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
    if (launch) add("launch " + format::duration(pc.launch.value));
    if (flops) add(w.pipe + " " + format::quantity(pc.local_flops.value, "FLOP/s"));
    if (!bandwidth.empty()) add(bandwidth + " " + format::quantity(pc.local_bandwidth.value, "B/s"));
    return out;
}

}  // namespace

const char* const kReferenceAboveRoofNote =
    "a ref above 100%: the kernel ran faster than a ceiling measured right after it, which other work on the machine "
    "slowed (or whose kernel uses the memory less well than this one): read it as at its roof, not past it";

double reference_roof_fraction(const RawRun& run, const std::string& workload, const roofline::Placement& p) {
    return reference_roof_fraction(placement_ceilings(run, workload), p);
}

double reference_roof_fraction(const roofline::PlacementCeilings& pc, const roofline::Placement& p) {
    const double flops_roof = pc.local_flops.value > 0 ? pc.local_flops.value : pc.peak_flops;
    const double bytes_roof = pc.local_bandwidth.value > 0 ? pc.local_bandwidth.value : pc.peak_bandwidth;
    return std::max(flops_roof > 0 ? p.flops_per_s / flops_roof : 0, bytes_roof > 0 ? p.bytes_per_s / bytes_roof : 0);
}

std::vector<WorkloadRow> workload_rows(const RawRun& run, const Derivation& d, const std::set<std::string>& withheld) {
    std::vector<WorkloadRow> rows;
    for (const auto& m : run.measurements) {
        const Workload& w = m.workload;
        WorkloadRow r{w.name, params_text(w), format::duration(m.time.median),
                      // One sample has no spread: "0.0%" would read as perfectly steady.
                      m.time.samples == 1 ? std::string("1 sample") : format::spread(m.time.noise),
                      format::quantity(w.flops, ""), format::quantity(w.bytes, "B"), m.time.noise_met, {}, {}, {}, {}, {}, {}, false, {}};
        const roofline::Placement* p = nullptr;
        for (const auto& wd : d.workloads)
            if (wd.workload == w.name) p = &wd.placement;
        if (p) {
            auto cell = [&](const std::string& field, const std::string& text) {
                const std::string metric = w.name + "." + field;
                const bool hidden = withheld.count(metric) > 0;
                return DerivedCell{hidden ? "?" : text, metric, hidden};
            };
            const MetricValue* regime = d.find(w.name + ".measured_regime");
            r.flops_per_s = cell("flops_per_s", format::quantity(p->flops_per_s, "FLOP/s"));
            r.bytes_per_s = cell("bytes_per_s", format::quantity(p->bytes_per_s, "B/s"));
            r.ai = cell("ai", format::number(p->ai));
            r.roof_fraction = cell("roof_fraction", format::percent(p->roof_fraction));
            r.regime = cell("measured_regime", regime ? regime->text : std::string("-"));
            const roofline::PlacementCeilings pc = placement_ceilings(run, w.name);
            const double reference = reference_roof_fraction(pc, *p);
            r.reference_fraction = cell("roof_fraction", format::percent(reference));
            // Above 100% by more than the printed rounding.
            r.reference_above_roof = !r.reference_fraction->withheld && reference > 1.005;
            r.references = references_text(run, w, pc);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

std::optional<std::string> under_load(const RawRun& run) {
    int loaded = 0;
    double most = 0;
    for (const auto& m : run.measurements) {
        if (m.load < kLoadedMachineCpus) continue;
        ++loaded;
        most = std::max(most, m.load);
    }
    if (loaded == 0) return std::nullopt;
    return fmt::format("{} of {} workloads ran while other processes used {:g} CPUs or more (up to {:.1f})", loaded,
                       run.measurements.size(), kLoadedMachineCpus, most);
}

std::optional<std::string> busy_machine_note(const RawRun& run) {
    const auto loaded = under_load(run);
    if (!loaded) return std::nullopt;
    return "busy machine: " + *loaded +
           ". Their times may be longer than on a quiet machine, and a sweep's steps blurred; answers are graded against this "
           "run's own figures, but to learn the device's, run again with nothing else running.";
}

std::string ceiling_status(const Ceiling& c) {
    // "re-measured in this run (reference)", "raised to the rate of workload 'x'", or, read back
    // from the cache, "re-measured in a run of lesson 02.05 (reference)": each says where it came from.
    if (c.source.rfind("raised", 0) == 0 || c.source.rfind("re-measured", 0) == 0) return c.source;
    if (!c.trusted) return "not trusted: measured under load or noisy; runs re-measure it";
    return "";
}

std::vector<std::string> withheld_graded(const LessonInfo& info, const std::set<std::string>& withheld, const Derivation& run) {
    std::vector<std::string> out;
    for (const auto& d : info.metrics)
        if (d.graded && withheld.count(d.name) && run.find(d.name)) out.push_back(d.name);
    return out;
}

std::vector<std::string> withheld_twins(const LessonInfo& info, const std::set<std::string>& withheld) {
    std::set<std::string> graded;
    for (const auto& d : info.metrics)
        if (d.graded) graded.insert(d.name);
    std::vector<std::string> out;
    for (const auto& name : withheld)
        if (!graded.count(name) && !record::is_check_helper(name)) out.push_back(name);
    return out;
}

std::string caches_text(const DeviceFacts& f) {
    auto size = [](std::uint64_t bytes) {
        const char* units[] = {"B", "KiB", "MiB", "GiB"};
        int u = 0;
        while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) bytes /= 1024, ++u;
        return fmt::format("{} {}", bytes, units[u]);
    };
    std::string caches;
    for (const auto& c : f.caches) {
        if (c.type == "Instruction") continue;
        caches += fmt::format("{}L{} {}{}", caches.empty() ? "" : ", ", c.level, size(c.bytes),
                              c.shared_by > 1 ? fmt::format(" (shared by {})", c.shared_by) : std::string());
    }
    return caches.empty() ? "-" : caches;
}

}  // namespace lab
