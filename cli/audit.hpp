// `lab audit`: re-measure a sample of a class's submissions on this machine and say which
// reproduce. A submission is re-run with its own student, seed, token and quick flag on its own
// device kind, and its medians are compared workload by workload (and its ceilings) with the
// re-measure, within the noise both runs measured. The grader never runs a kernel; the audit is
// a command that does, on hardware the instructor vouches for (docs/gradescope.md).
#pragma once

#include <string>
#include <vector>

#include "lab/lesson.hpp"

namespace lab::cli {

// Two runs of one machine agree within x/÷ this on each median, or within 1 + 3x their summed
// noise where that is larger. Generous: a busy machine moves timings by tens of percent, a forged
// or borrowed run is usually off by far more (docs/gradescope.md has the figures).
inline constexpr double kAuditTolerance = 1.5;

struct AuditRow {
    std::string what;        // a workload ("triad n=1048576") or a ceiling ("ceiling fp32.simt")
    double submitted = 0;    // seconds, or the ceiling's rate
    double audited = 0;
    double ratio = 0;        // submitted / audited
    double allowed = 0;      // x/÷ factor allowed
    bool within = false;
};

struct AuditComparison {
    bool reproduces = false;
    std::vector<AuditRow> rows;
    std::vector<std::string> problems;   // workloads in one run only; every row outside its factor
    const AuditRow* worst() const;
};

AuditComparison compare_runs(const RawRun& submitted, const RawRun& audited, double tolerance = kAuditTolerance);

// "" when the audit's machine can stand for the submission's: the same device kind and name.
std::string hardware_mismatch(const RawRun& submitted, const RawRun& audited);

}  // namespace lab::cli
