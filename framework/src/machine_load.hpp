// How busy the rest of the machine is: the CPU time other processes (and, on a VM, the
// hypervisor's other guests: steal time) used over an interval on the CPUs this process may run
// on (its affinity mask; other jobs on a shared node's other cores compete for none of them), in
// CPUs. A ceiling measured
// while others used a CPU is not trusted silently, and a workload's record says under what load
// it ran. Linux only (/proc/stat, /proc/self/stat); elsewhere the load is unknown (-1).
#pragma once

#include <chrono>

#include "lab/roofline.hpp"

namespace lab {

class LoadMeter {
public:
    LoadMeter();  // starts the interval
    // Other processes' CPU use since construction, in CPUs (1.0: one CPU kept busy); -1 when
    // unknown or the interval is too short for the kernel's tick counts to tell (< 50 ms).
    double others_cpus() const;

private:
    double busy_ticks_ = -1;   // all CPUs: user + nice + system + irq + softirq + steal
    double self_ticks_ = -1;   // this process: utime + stime
    std::chrono::steady_clock::time_point start_;
};

// Other processes using at least this many CPUs make a measurement "under load" (the SDK's
// constant: the regime verdict's doubt follows it too).
using roofline::kLoadedMachineCpus;

}  // namespace lab
