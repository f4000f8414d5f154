// `lab run ID --slurm`: the run as one job on the course's cluster, for a student without a GPU.
// The job runs the same `lab run` there (the token and student resolved here, so the node's own
// config plays no part) into the shared work folder; lab waits, showing the queue, reads the
// record back (its digest checked) and carries on as if the run had been made here.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson_host.hpp"
#include "lesson_session.hpp"
#include "slurm.hpp"

namespace lab::cli {

struct ClusterRun {
    std::string job;
    nlohmann::json record;  // as the job wrote it, digest checked
    std::unique_ptr<LessonHost> host;  // keeps the lesson loaded
    const LoadedLesson* lesson = nullptr;
    RawRun raw;
    Derivation derivation;
};

// Submits the run and waits for it; nullopt after --dry-run (the script printed). A trace the
// job wrote is moved to request.trace_file. DeviceError when the job fails, is cancelled or
// runs out of time (with its log's last lines); UsageError when Slurm or the partition is missing.
std::optional<ClusterRun> run_on_cluster(const LessonRequest& request, const slurm::Request& cluster);

}  // namespace lab::cli
