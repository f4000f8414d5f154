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
        AuditRow r = row(key, m.time.median, it->second->time.median, allowed);
        r.slower_load = r.ratio >= 1 ? m.load : it->second->load;
        c.rows.push_back(r);
        mine.erase(it);
    }
    for (const auto& [key, m] : mine) c.problems.push_back("workload '" + key + "' is in the re-measure but not in the submission");
    // The ceilings the run was judged against: a forged or borrowed ceiling lifts every roof.
    for (const auto& [pipe, ceiling] : submitted.ceilings.flops_per_s)
        if (double a = audited.ceilings.peak_flops(pipe); a > 0)
            c.rows.push_back(row("ceiling " + pipe, ceiling.value, a, tolerance));
    if (double s = submitted.ceilings.peak_bandwidth(), a = audited.ceilings.peak_bandwidth(); s > 0 && a > 0)
        c.rows.push_back(row("ceiling bandwidth.best", s, a, tolerance));
    const bool structural = !c.problems.empty();
    bool unexplained = false;
    for (const auto& r : c.rows) {
        if (r.within) continue;
        unexplained = unexplained || !r.loaded();
        std::string p = r.ratio > 0 ? fmt::format("{}: {:.3g}x the re-measure (allowed x/÷ {:.2g})", r.what, r.ratio, r.allowed)
                                    : r.what + ": not a positive number in one of the runs";
        if (r.loaded())
            p += fmt::format(", but the {} ran slower while other processes used {:.2g} CPUs", r.ratio >= 1 ? "submission" : "re-measure",
                             r.slower_load);
        c.problems.push_back(p);
    }
    c.reproduces = c.problems.empty() && !c.rows.empty();
    c.inconclusive = !c.reproduces && !structural && !unexplained && !c.rows.empty();
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

void judge(Audited& a, const RawRun& submitted, const RawRun& again, double tolerance) {
    a.comparison = compare_runs(submitted, again, tolerance);
    if (std::string other = hardware_mismatch(submitted, again); !other.empty()) {
        a.verdict = "other_hardware";
        a.detail = other + ": an audit needs the hardware the run was made on";
    } else {
        a.verdict = a.comparison.reproduces ? "reproduces" : a.comparison.inconclusive ? "inconclusive" : "does_not_reproduce";
        a.detail.clear();
        if (a.comparison.inconclusive) {
            int n = 0;
            double most = 0;
            for (const auto& r : a.comparison.rows)
                if (r.loaded()) ++n, most = std::max(most, r.slower_load);
            a.detail = fmt::format("{} of {} rows outside their factor, each where the slower run was measured while other processes "
                                   "used up to {:.2g} CPUs: audit again on a quiet node",
                                   n, a.comparison.rows.size(), most);
            return;
        }
        for (const auto& p : a.comparison.problems) a.detail += (a.detail.empty() ? "" : "; ") + p;
    }
}

namespace {
struct Counts {
    int reproduce = 0, not_reproduce = 0, inconclusive = 0, other_hardware = 0, not_audited = 0;
};
Counts count(const std::vector<Audited>& results) {
    Counts c;
    for (const auto& a : results) {
        c.reproduce += a.verdict == "reproduces";
        c.not_reproduce += a.verdict == "does_not_reproduce";
        c.inconclusive += a.verdict == "inconclusive";
        c.other_hardware += a.verdict == "other_hardware";
        c.not_audited += a.verdict == "not_audited";
    }
    return c;
}
}  // namespace

nlohmann::json audit_json(const std::vector<Audited>& results, const AuditSummary& s) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& a : results) {
        nlohmann::json cmp = nlohmann::json::array();
        for (const auto& r : a.comparison.rows)
            cmp.push_back({{"what", r.what}, {"submitted", r.submitted}, {"audited", r.audited}, {"ratio", r.ratio},
                           {"allowed", r.allowed}, {"within", r.within}});
        rows.push_back({{"folder", a.task.folder}, {"student", a.task.student}, {"lesson", a.task.lesson}, {"why", a.task.why_sampled},
                        {"verdict", a.verdict}, {"detail", a.detail}, {"seconds", a.seconds}, {"comparison", cmp}});
    }
    const Counts c = count(results);
    return {{"submissions", s.submissions}, {"audited", results.size()}, {"seed", s.seed}, {"tolerance", s.tolerance},
            {"where", s.where}, {"reproduce", c.reproduce}, {"do_not_reproduce", c.not_reproduce}, {"inconclusive", c.inconclusive},
            {"other_hardware", c.other_hardware}, {"not_audited", c.not_audited},
            {"results", rows}};
}

void print_audit(std::ostream& out, const std::vector<Audited>& results, const AuditSummary& s) {
    out << fmt::format("audited {} of {} submissions {} (sample seed {}; medians within x/÷ {:g} or their noise)\n\n", results.size(),
                       s.submissions, s.where, s.seed, s.tolerance);
    out << fmt::format("{:<20} {:<16} {:<20} {:<28} {}\n", "folder", "student", "verdict", "why audited", "detail");
    for (const auto& a : results) {
        std::string detail = a.detail;
        if (a.verdict == "reproduces")
            if (const AuditRow* w = a.comparison.worst()) detail = fmt::format("largest difference: {} {:.3g}x", w->what, w->ratio);
        out << fmt::format("{:<20} {:<16} {:<20} {:<28} {}\n", a.task.folder, a.task.student, a.verdict, a.task.why_sampled, detail);
    }
    const Counts c = count(results);
    // Each verdict that is neither says what to do about it (docs/gradescope.md, "Audits").
    out << fmt::format("\n{} reproduce, {} do not", c.reproduce, c.not_reproduce);
    if (c.inconclusive) out << fmt::format(", {} inconclusive (the audit ran beside other work: audit those again on a quiet node)", c.inconclusive);
    if (c.other_hardware) out << fmt::format(", {} recorded on other hardware (audit those where they were recorded)", c.other_hardware);
    if (c.not_audited) out << fmt::format(", {} not audited (see each row's detail)", c.not_audited);
    out << "\n";
}

int audit_exit_code(const std::vector<Audited>& results) { return count(results).not_reproduce > 0 ? 1 : 0; }

}  // namespace lab::cli
