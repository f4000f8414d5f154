// `lab audit`: re-measure a sample of a class's submissions on this machine and say which
// reproduce. A submission is re-run with its own student, seed, token and quick flag on its own
// device kind, and its medians are compared workload by workload (and its ceilings) with the
// re-measure, within the noise both runs measured. The grader never runs a kernel; the audit is
// a command that does, on hardware the instructor vouches for (docs/gradescope.md).
#pragma once

#include <ostream>
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

// How much further than its factor a run measured under load may be off and still be excused
// (see AuditRow::loaded). The busiest honest audit measured (others at 0.7-1.2 CPUs on 2 cores)
// re-measured 3.4x slower, 1.4x past x/÷ 2.5.
inline constexpr double kMaxLoadSlowdown = 4;

struct AuditRow {
    std::string what;        // a workload ("triad n=1048576") or a ceiling ("ceiling fp32.simt")
    double submitted = 0;    // seconds, or the ceiling's rate
    double audited = 0;
    double ratio = 0;        // submitted / audited
    double allowed = 0;      // x/÷ factor allowed
    bool within = false;
    // Outside its factor, but the slower of the two runs was measured while other processes used
    // at least kLoadedMachineCpus (the record's own `load`), and by no more than kMaxLoadSlowdown
    // beyond the factor: it says nothing either way. Only the slower run is excused, so a forged
    // fast run is still caught by a quiet re-measure; and a load slows a run by a few times, never
    // by orders of magnitude, so a forged slow run claiming load is caught too.
    double slower_load = -1;
    bool loaded() const {
        const double off = ratio >= 1 ? ratio : 1 / ratio;
        return !within && ratio > 0 && slower_load >= kLoadedMachineCpus && off <= allowed * kMaxLoadSlowdown;
    }
};

struct AuditComparison {
    bool reproduces = false;
    bool inconclusive = false;           // every row outside its factor is loaded(), and nothing else is wrong
    std::vector<AuditRow> rows;
    std::vector<std::string> problems;   // workloads in one run only; every row outside its factor
    const AuditRow* worst() const;
};

AuditComparison compare_runs(const RawRun& submitted, const RawRun& audited, double tolerance = kAuditTolerance);

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

// The verdict on a submission measured again as `again`.
void judge(Audited& a, const RawRun& submitted, const RawRun& again, double tolerance);

// The audit as JSON (`--json`, `--out`), and as the console table; the exit code (1 when any
// submission does not reproduce).
struct AuditSummary {
    std::size_t submissions = 0;
    unsigned seed = 0;
    double tolerance = kAuditTolerance;
    std::string where;  // "here", or "on the cluster (jobs 12, 13)"
};
nlohmann::json audit_json(const std::vector<Audited>& results, const AuditSummary& s);
void print_audit(std::ostream& out, const std::vector<Audited>& results, const AuditSummary& s);
int audit_exit_code(const std::vector<Audited>& results);

}  // namespace lab::cli
