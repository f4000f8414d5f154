// `lab audit`: re-measure a sample of a class's submissions on this machine and say which
// reproduce. A submission is re-run with its own student, seed, token and quick flag on its own
// device kind, and its medians are compared workload by workload (and its ceilings) with the
// re-measure, within the noise both runs measured. The grader never runs a kernel; the audit is
// a command that does, on hardware the instructor vouches for (docs/gradescope.md).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"
#include "machine_load.hpp"

namespace lab::cli {

// Two runs of one machine agree within x/÷ this on each median, or within 1 + 3x their summed
// noise where that is larger. Set from a measurement (bench/audit_honesty.sh, docs/cluster.md):
// 60 honest quick runs of 02.05 on a 2-core VM, each audited on the same machine, moved by up to
// 1.99x on one workload between two runs minutes apart while their in-run noise was under 17%
// (the noise term does not cover it): at 1.5, 5 of 20 were flagged in one batch; 2.5 leaves a
// quarter above the largest honest difference seen. A forged or borrowed run is usually off by
// far more (an edited time, another machine's run).
inline constexpr double kAuditTolerance = 2.5;

// How much a load on the slower run can explain. With T threads of the run and L other CPUs busy
// beside it, a fair scheduler gives the run T / (T + L) of the CPU time it would have had alone:
// a slowdown of (T + L) / T past the factor that covers quiet run-to-run differences. The load is
// an average over the measurement; bursts, shared caches and memory bandwidth, and a woken thread
// waiting for a busy core (which dominates microsecond workloads) add more, so the excuse allows
// kLoadMargin times that. Set from recorded runs (docs/cluster.md, "Audit tolerance"): the
// busiest honest rows seen, 02.01 quick on a 2-vCPU VM, were 5.32x at 0.96 other CPUs and 5.49x
// at 1.0 (1.44x and 1.46x past the fair-share slowdown, beyond x/÷ 2.5); a forged row, one
// workload's times doubled, was 6.44x at 0.67 CPUs (1.93x past). 1.7 leaves honest rows 16%
// headroom and still catches that forgery. Only the slower run is ever excused.
inline constexpr double kLoadMargin = 1.7;

// The most a row outside its factor may be off and still be excused by a load of `load_cpus`
// beside a run of `threads` threads (at least 1): allowed * (T + L) / T * kLoadMargin.
double load_explains_up_to(double allowed, int threads, double load_cpus);

struct AuditRow {
    std::string what;        // a workload ("triad n=1048576") or a ceiling ("ceiling fp32.simt", "ceiling launch")
    double submitted = 0;    // seconds, or the ceiling's rate (the launch ceiling: seconds)
    double audited = 0;
    double ratio = 0;        // submitted / audited
    double allowed = 0;      // x/÷ factor allowed
    bool within = false;
    // A ceiling no graded value depends on (deciding_measurements): shown, never a verdict.
    bool decides = true;
    bool submission_slower = false;  // the submission's time was longer, or its ceiling lower
    // The slower run's conditions: other processes' CPUs while it was measured (-1 unknown), its
    // threads, and (ceilings) whether its record marks it not trusted.
    double slower_load = -1;
    int slower_threads = 1;
    bool slower_untrusted = false;
    double off() const { return ratio >= 1 ? ratio : 1 / ratio; }
    // Measured under load (or, for a ceiling, marked not trusted) on the slower side: the row
    // may be excused, up to what that load can explain.
    bool slower_under_load() const { return slower_load >= kLoadedMachineCpus || slower_untrusted; }
    double load_limit() const { return load_explains_up_to(allowed, slower_threads, std::max(0.0, slower_load)); }
    // Outside its factor, but the load on the slower of the two runs explains it: it says
    // nothing either way. Only the slower run is excused, so a forged fast run is still caught
    // by a quiet re-measure; and only by as much as that load can slow a run, so a forged slow
    // run claiming load is caught too.
    bool loaded() const { return !within && ratio > 0 && slower_under_load() && off() <= load_limit(); }
};

struct AuditComparison {
    bool reproduces = false;
    bool inconclusive = false;           // every deciding row outside its factor is loaded(), and nothing else is wrong
    std::vector<AuditRow> rows;
    std::vector<std::string> problems;   // workloads in one run only; every deciding row outside its factor
    std::vector<std::string> notes;      // rows outside their factor that do not decide (information)
    const AuditRow* worst() const;       // the deciding row furthest from its factor
};

// Ceilings and workloads by the keys deciding_measurements returns: "flops.<pipe>",
// "bandwidth.best", "launch", "workload <name> <param>=<v>...". nullopt: every row decides (no
// grading spec or derivation to tell which do).
using DecidingMeasurements = std::optional<std::set<std::string>>;

AuditComparison compare_runs(const RawRun& submitted, const RawRun& audited, double tolerance = kAuditTolerance,
                             const DecidingMeasurements& deciding = std::nullopt);

// The ceilings and workloads of `submitted` that a graded value depends on: re-deriving the run
// with that ceiling and its in-run measurements, or that workload's times, x10 and ÷10 (`derive`,
// the lesson's own derivation; all bandwidth kernels for "bandwidth.best") changes the value of
// one of `graded_metrics` (the metrics the lesson's grading spec asks about). A measurement no
// graded value reads cannot have earned a point, so a difference in it is information, not a
// verdict: 02.01 grades fp32 kernels, and its fp64 ceiling (measured for an ungraded chain) must
// not fail a run; 02.02's questions are arithmetic, and a busy laptop's slow workloads must not
// fail an honest student's run there.
std::set<std::string> deciding_measurements(const RawRun& submitted, const std::vector<std::string>& graded_metrics,
                                        const std::function<Derivation(const RawRun&)>& derive);

// "" when the audit's machine can stand for the submission's: the same device kind and name.
std::string hardware_mismatch(const RawRun& submitted, const RawRun& audited);

// One submission chosen for re-measuring.
struct AuditTask {
    std::string folder, student, lesson, why_sampled;
    std::string run_file;
};

// Its outcome: reproduces | does_not_reproduce | inconclusive (a difference the load on the
// slower run explains: audit again on a quiet node) | other_hardware | not_audited.
struct Audited {
    AuditTask task;
    std::string verdict, detail;
    AuditComparison comparison;
    double seconds = 0;  // the re-measure's own run time
};

// The ceilings and workloads that decide for one submission of `lesson` (cmd_audit: from its
// grading spec and the lesson's derivation).
using MeasurementsThatDecide = std::function<DecidingMeasurements(const std::string& lesson, const RawRun& submitted)>;

// The verdict on a submission measured again as `again`.
void judge(Audited& a, const RawRun& submitted, const RawRun& again, double tolerance, const DecidingMeasurements& deciding = std::nullopt);

// The audit as JSON (`--json`, `--out`), and as the console table; the exit code (1 when any
// submission does not reproduce).
struct AuditSummary {
    std::size_t submissions = 0;
    unsigned seed = 0;
    double tolerance = kAuditTolerance;
    std::string where;  // "here", or "on the cluster (jobs 12, 13)"
    // Submissions never sampled because grading refuses them (folder, why): re-measuring a run
    // that earns no points cannot change a grade.
    std::vector<std::pair<std::string, std::string>> refused;
};
nlohmann::json audit_json(const std::vector<Audited>& results, const AuditSummary& s);
void print_audit(std::ostream& out, const std::vector<Audited>& results, const AuditSummary& s);
int audit_exit_code(const std::vector<Audited>& results);

}  // namespace lab::cli
