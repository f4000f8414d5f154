// Comparing a submission with its re-measure (see audit.hpp).
#include "audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace lab::cli {

namespace {

// A workload's key among the deciding measurements ("workload triad n=1048576").
const std::string kWorkloadKey = "workload ";

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

// The threads a run's measurements shared the machine with others by: the calibration's team
// (a CPU's threads; 1 for a GPU, driven by one host thread), else the device's, else 1.
int threads_of(const RawRun& run) {
    if (run.ceilings.threads > 0) return run.ceilings.threads;
    if (run.device_kind == DeviceKind::cpu && run.facts.threads > 0) return run.facts.threads;
    return 1;
}

// A ceiling row, allowed x/÷ `allowed`: a rate, so the lower one is the slower run's, or (`time`:
// the launch cost) a time, so the larger is; its record's conditions travel.
AuditRow ceiling_row(const std::string& key, const Ceiling& submitted, const Ceiling& audited, const RawRun& s_run,
                     const RawRun& a_run, double allowed, const DecidingMeasurements& deciding, bool time = false) {
    const std::string name = key.rfind("flops.", 0) == 0 ? key.substr(6) : key;
    AuditRow r = row("ceiling " + name, submitted.value, audited.value, allowed);
    r.submission_slower = time ? r.ratio >= 1 : r.ratio > 0 && r.ratio < 1;
    const Ceiling& slower = r.submission_slower ? submitted : audited;
    r.slower_load = slower.load;
    r.slower_untrusted = !slower.trusted;
    r.slower_threads = threads_of(r.submission_slower ? s_run : a_run);
    r.decides = !deciding || deciding->count(key) > 0;
    return r;
}

double distance(const AuditRow& r) { return r.ratio > 0 ? std::fabs(std::log(r.ratio)) / std::log(r.allowed) : INFINITY; }

// A row outside its factor, said with what the load on the slower run does or cannot explain.
std::string problem_text(const AuditRow& r) {
    if (!(r.ratio > 0)) return r.what + ": not a positive number in one of the runs";
    std::string p = fmt::format("{}: {:.3g}x the re-measure (allowed x/÷ {:.2g})", r.what, r.ratio, r.allowed);
    if (!r.decides) return p + ", no graded value depends on it: information, not a verdict";
    if (!r.slower_under_load()) return p;
    const char* side = r.submission_slower ? "submission" : "re-measure";
    const std::string load = r.slower_load >= 0 ? fmt::format("other processes used {:.2g} CPUs", r.slower_load) : "its load unknown";
    const std::string why = r.slower_untrusted ? fmt::format("the {}'s record marks that ceiling not trusted ({})", side, load)
                                               : fmt::format("the {} ran slower while {}", side, load);
    if (r.loaded()) return p + ", but " + why;
    return p + fmt::format(", and {}, but that load beside its {} thread{} explains at most {:.3g}x: not this", why, r.slower_threads,
                           r.slower_threads == 1 ? "" : "s", r.load_limit());
}

}  // namespace

double load_explains_up_to(double allowed, int threads, double load_cpus) {
    const double t = std::max(1, threads);
    return allowed * (t + std::max(0.0, load_cpus)) / t * kLoadMargin;
}

const AuditRow* AuditComparison::worst() const {
    const AuditRow* w = nullptr;
    for (const auto& r : rows)
        if (r.decides && (!w || distance(r) > distance(*w))) w = &r;
    return w;
}

AuditComparison compare_runs(const RawRun& submitted, const RawRun& audited, double tolerance, const DecidingMeasurements& deciding) {
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
        r.submission_slower = r.ratio >= 1;
        r.slower_load = r.submission_slower ? m.load : it->second->load;
        r.slower_threads = threads_of(r.submission_slower ? submitted : audited);
        r.decides = !deciding || deciding->count(kWorkloadKey + key) > 0;
        c.rows.push_back(r);
        mine.erase(it);
    }
    for (const auto& [key, m] : mine) c.problems.push_back("workload '" + key + "' is in the re-measure but not in the submission");
    // The ceilings the run was judged against: a forged or borrowed ceiling lifts every roof.
    for (const auto& [pipe, ceiling] : submitted.ceilings.flops_per_s)
        if (auto it = audited.ceilings.flops_per_s.find(pipe); it != audited.ceilings.flops_per_s.end() && it->second.value > 0)
            c.rows.push_back(ceiling_row("flops." + pipe, ceiling, it->second, submitted, audited, tolerance, deciding));
    const auto& sb = submitted.ceilings.bandwidth_bytes_per_s;
    const auto& ab = audited.ceilings.bandwidth_bytes_per_s;
    if (auto s = sb.find("best"), a = ab.find("best"); s != sb.end() && a != ab.end() && s->second.value > 0 && a->second.value > 0)
        c.rows.push_back(ceiling_row("bandwidth.best", s->second, a->second, submitted, audited, tolerance, deciding));
    // The launch cost the run was judged against: a forged one moves the overhead_bound line
    // (a kernel within kOverheadLaunchFactor of it is overhead bound). Microsecond figures are
    // noisy, so the row also allows its samples' spread.
    if (const Ceiling &s = submitted.ceilings.launch_s, &a = audited.ceilings.launch_s; s.value > 0 && a.value > 0)
        c.rows.push_back(ceiling_row("launch", s, a, submitted, audited, std::max(tolerance, 1 + 3 * (s.spread + a.spread)), deciding, true));
    const bool structural = !c.problems.empty();
    bool unexplained = false;
    for (const auto& r : c.rows) {
        if (r.within) continue;
        if (!r.decides) {
            c.notes.push_back(problem_text(r));
            continue;
        }
        unexplained = unexplained || !r.loaded();
        c.problems.push_back(problem_text(r));
    }
    c.reproduces = c.problems.empty() && !c.rows.empty();
    c.inconclusive = !c.reproduces && !structural && !unexplained && !c.rows.empty();
    return c;
}

std::set<std::string> deciding_measurements(const RawRun& submitted, const std::vector<std::string>& graded_metrics,
                                        const std::function<Derivation(const RawRun&)>& derive) {
    // The graded values as text, exactly (a derivation is deterministic), "-" where absent.
    auto graded = [&](const RawRun& r) {
        const Derivation d = derive(r);
        std::vector<std::string> v;
        for (const auto& name : graded_metrics) {
            const MetricValue* m = d.find(name);
            v.push_back(!m ? "-" : m->kind == MetricKind::category ? m->text : fmt::format("{:.17g}", m->number));
        }
        return v;
    };
    const auto base = graded(submitted);
    std::set<std::string> out;
    auto probe = [&](const std::string& key, const std::function<void(RawRun&, double)>& scale) {
        for (double f : {10.0, 0.1}) {
            RawRun r = submitted;
            scale(r, f);
            try {
                if (graded(r) != base) return void(out.insert(key));
            } catch (const std::exception&) {
                return void(out.insert(key));  // the derivation needs it to be as it was: it decides
            }
        }
    };
    // A ceiling, and every in-run measurement of it (a workload's regime is judged against the
    // references measured right after it): their rates scaled by f, so their times by 1/f.
    auto scale_measured = [](RawRun& r, const std::function<bool(const std::string&)>& is_it, double f) {
        for (auto& cm : r.ceiling_measurements)
            if (cm.purpose != "evidence" && is_it(cm.ceiling)) cm.measurement.time.median /= f;
    };
    for (const auto& [pipe, ceiling] : submitted.ceilings.flops_per_s)
        probe("flops." + pipe, [&, key = "flops." + pipe, pipe = pipe](RawRun& r, double f) {
            r.ceilings.flops_per_s[pipe].value *= f;
            scale_measured(r, [&](const std::string& c) { return c == key; }, f);
        });
    if (submitted.ceilings.bandwidth_bytes_per_s.count("best"))
        probe("bandwidth.best", [&](RawRun& r, double f) {
            for (auto& [kernel, c] : r.ceilings.bandwidth_bytes_per_s) c.value *= f;
            scale_measured(r, [](const std::string& c) { return c.rfind("bandwidth.", 0) == 0; }, f);
        });
    if (submitted.ceilings.launch_s.value > 0)
        probe("launch", [&](RawRun& r, double f) {
            r.ceilings.launch_s.value /= f;  // a rate scaled by f is a time scaled by 1/f
            scale_measured(r, [](const std::string& c) { return c == "launch"; }, f);
        });
    // Each workload: its times scaled by 1/f (its rate by f).
    for (std::size_t i = 0; i < submitted.measurements.size(); ++i)
        probe(kWorkloadKey + workload_key(submitted.measurements[i].workload), [i](RawRun& r, double f) {
            TimeStats& t = r.measurements[i].time;
            for (double* v : {&t.median, &t.min, &t.max, &t.mean, &t.stddev}) *v /= f;
        });
    return out;
}

std::string hardware_mismatch(const RawRun& submitted, const RawRun& audited) {
    if (submitted.device_kind != audited.device_kind)
        return std::string("the run was made on a ") + to_string(submitted.device_kind) + " device, this audit ran on a " +
               to_string(audited.device_kind);
    if (submitted.facts.name != audited.facts.name)
        return "the run was made on '" + submitted.facts.name + "', this machine is '" + audited.facts.name + "'";
    return "";
}

void judge(Audited& a, const RawRun& submitted, const RawRun& again, double tolerance, const DecidingMeasurements& deciding) {
    a.comparison = compare_runs(submitted, again, tolerance, deciding);
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
                                   "used up to {:.2g} CPUs (or its ceiling is marked not trusted), by no more than that load explains: "
                                   "audit again on a quiet node",
                                   n, a.comparison.rows.size(), std::max(0.0, most));
        } else {
            for (const auto& p : a.comparison.problems) a.detail += (a.detail.empty() ? "" : "; ") + p;
        }
    }
    for (const auto& n : a.comparison.notes) a.detail += (a.detail.empty() ? "" : "; ") + n;
    // A copy reproduces as well as its original: for a run flagged as one, the verdict says the
    // device runs it so, not who made it.
    const std::string& why = a.task.why_sampled;
    if (a.verdict == "reproduces" && (why.find("near_copy") != std::string::npos || why.find("same_digest") != std::string::npos))
        a.detail += std::string(a.detail.empty() ? "" : "; ") +
                    "reproducing says this hardware runs it so, not who made the run: a copy reproduces as its original does";
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
                           {"allowed", r.allowed}, {"within", r.within}, {"decides", r.decides}, {"excused_by_load", r.loaded()}});
        rows.push_back({{"folder", a.task.folder}, {"student", a.task.student}, {"lesson", a.task.lesson}, {"why", a.task.why_sampled},
                        {"verdict", a.verdict}, {"detail", a.detail}, {"seconds", a.seconds}, {"comparison", cmp}});
    }
    nlohmann::json refused = nlohmann::json::array();
    for (const auto& [folder, why] : s.refused) refused.push_back({{"folder", folder}, {"reason", why}});
    const Counts c = count(results);
    return {{"submissions", s.submissions}, {"refused_not_sampled", refused}, {"audited", results.size()}, {"seed", s.seed}, {"tolerance", s.tolerance},
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
            if (const AuditRow* w = a.comparison.worst())
                detail = fmt::format("largest difference: {} {:.3g}x", w->what, w->ratio) + (detail.empty() ? "" : "; " + detail);
        out << fmt::format("{:<20} {:<16} {:<20} {:<28} {}\n", a.task.folder, a.task.student, a.verdict, a.task.why_sampled, detail);
    }
    if (!s.refused.empty()) {
        out << fmt::format("\nnot sampled, refused by grading (a re-measure cannot change their grade): {}\n", s.refused.size());
        for (const auto& [folder, why] : s.refused) out << fmt::format("  {:<20} {}\n", folder, why);
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
