// CPU telemetry from /proc, the counters `top` and `htop` read: each core's busy share of the
// interval (/proc/stat: user, nice, system, irq, softirq over all but guest time; steal counts as
// not busy: the hypervisor ran someone else) and this process's CPU time (/proc/self/stat). Like
// nvidia-smi's GPU-Util, "busy" means something was scheduled there, not that work got done:
// lesson 02.09 sets these beside the work a kernel did. Two reads per interval, at its ends; their
// cost is reported. The kernel's tick is 10 ms: intervals much shorter than a second are coarse.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace lab::cpu {

class ProcTelemetry {
public:
    void begin();
    // "cpu_busy_pct.max_core" (the busiest core), "cpu_busy_pct.machine" (all cores),
    // "process_cpu_pct" (this process's CPU time over the interval: 100 = one core), "cores",
    // "interval_s", "sampler_cost_s". Empty when /proc cannot be read.
    std::map<std::string, double> end();

private:
    struct Snapshot {
        std::vector<std::pair<double, double>> cores;  // busy, total ticks per core
        double process_ticks = -1;
        std::chrono::steady_clock::time_point at;
    };
    static Snapshot take();
    Snapshot start_;
    double cost_s_ = 0;
};

}  // namespace lab::cpu
