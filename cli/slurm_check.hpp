// `lab check ID --slurm --partition A,B,...`: an instructor checks a lesson on every GPU type the
// cluster has before assigning it. One job per partition runs `lab check ID --json` there; lab
// waits for all of them and prints one combined report (exit 1 when any partition missed an
// expectation or its job failed).
#pragma once

#include <string>

#include "slurm.hpp"

namespace lab::cli {

struct CheckJobRequest {
    std::string id, device = "auto";
    bool quick = false, strict = false;
    int threads = 0;
    double timeout_s = 0;
    bool json = false;  // print the combined report as JSON
};

int check_on_cluster(const CheckJobRequest& request, const slurm::Request& cluster);

}  // namespace lab::cli
