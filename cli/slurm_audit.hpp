// `lab audit DIR --sample 10% --slurm`: the re-measures as one Slurm job array per device kind,
// one task per sampled (and every flagged) submission, throttled (%N) so a class does not flood
// the queue. Each task runs `lab run ID --replay RUN.json` on a node and writes its record into
// the shared work folder; lab collects them and compares as a local audit does (audit.hpp).
//
// The work folder makes it resumable: plan.json (the sample, fixed at the first call), state.json
// (attempts per task, the jobs submitted), the scripts, logs/<task>.out and results/<task>.json.
// Running the same command again skips finished tasks and retries a failed one once; a task that
// fails is reported (not_audited, with the job's state and its log's last line), never fatal.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "audit.hpp"
#include "slurm.hpp"

namespace lab::cli {

inline constexpr int kAuditAttempts = 2;  // a failed task is tried once more, on the next call

struct ClusterAudit {
    bool ran = false;  // false after --dry-run
    std::vector<Audited> results;
    std::string where;  // "on the cluster (jobs 12, 13)"
};

ClusterAudit audit_on_cluster(const std::vector<AuditTask>& sample, const std::filesystem::path& submissions, unsigned seed,
                              const slurm::Request& cluster, double tolerance, const MeasurementsThatDecide& deciding);

}  // namespace lab::cli
