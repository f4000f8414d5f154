// Comparing a submission with its re-measure (see audit.hpp).
#include "audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace lab::cli {

namespace {

std::string workload_key(const Workload& w) {
    std::string key = w.name;
    for (const auto& p : w.params) key += fmt::format(" {}={:g}", p.name, p.value);
    return key;
}

AuditRow row(const std::string& what, double submitted, double audited, double allowed) {
    AuditRow r{what, submitted, audited, 0, allowed, false};
    if (submitted > 0 && audited > 0 && std::isfinite(submitted) && std::isfinite(audited)) {
        r.ratio = submitted / audited;
        r.within = r.ratio <= allowed && r.ratio >= 1 / allowed;
    }
    return r;
}

double distance(const AuditRow& r) { return r.ratio > 0 ? std::fabs(std::log(r.ratio)) / std::log(r.allowed) : INFINITY; }

}  // namespace

const AuditRow* AuditComparison::worst() const {
    const AuditRow* w = nullptr;
    for (const auto& r : rows)
        if (!w || distance(r) > distance(*w)) w = &r;
    return w;
}

AuditComparison compare_runs(const RawRun& submitted, const RawRun& audited, double tolerance) {
    AuditComparison c;
    std::map<std::string, const Measurement*> mine;
    for (const auto& m : audited.measurements) mine[workload_key(m.workload)] = &m;
    for (const auto& m : submitted.measurements) {
        const std::string key = workload_key(m.workload);
        auto it = mine.find(key);
        if (it == mine.end()) {
            c.problems.push_back("workload '" + key + "' is in the submission but not in the re-measure");
            continue;
        }
        const double allowed = std::max(tolerance, 1 + 3 * (m.time.noise + it->second->time.noise));
        c.rows.push_back(row(key, m.time.median, it->second->time.median, allowed));
        mine.erase(it);
    }
    for (const auto& [key, m] : mine) c.problems.push_back("workload '" + key + "' is in the re-measure but not in the submission");
    // The ceilings the run was judged against: a forged or borrowed ceiling lifts every roof.
    for (const auto& [pipe, ceiling] : submitted.ceilings.flops_per_s)
        if (double a = audited.ceilings.peak_flops(pipe); a > 0)
            c.rows.push_back(row("ceiling " + pipe, ceiling.value, a, tolerance));
    if (double s = submitted.ceilings.peak_bandwidth(), a = audited.ceilings.peak_bandwidth(); s > 0 && a > 0)
        c.rows.push_back(row("ceiling bandwidth.best", s, a, tolerance));
    for (const auto& r : c.rows)
        if (!r.within)
            c.problems.push_back(r.ratio > 0 ? fmt::format("{}: {:.3g}x the re-measure (allowed x/÷ {:.2g})", r.what, r.ratio, r.allowed)
                                             : r.what + ": not a positive number in one of the runs");
    c.reproduces = c.problems.empty() && !c.rows.empty();
    return c;
}

std::string hardware_mismatch(const RawRun& submitted, const RawRun& audited) {
    if (submitted.device_kind != audited.device_kind)
        return std::string("the run was made on a ") + to_string(submitted.device_kind) + " device, this audit ran on a " +
               to_string(audited.device_kind);
    if (submitted.facts.name != audited.facts.name)
        return "the run was made on '" + submitted.facts.name + "', this machine is '" + audited.facts.name + "'";
    return "";
}

}  // namespace lab::cli
