// Other processes' CPU use (see machine_load.hpp).
#include "machine_load.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace lab {

namespace {

// Busy ticks of the CPUs this process may run on (its affinity mask: a Slurm job's cores, a
// taskset), summed from /proc/stat's per-CPU lines; all CPUs (the first line) when the mask is
// unknown. Other jobs on other cores of a shared node compete for none of ours. -1 when unreadable.
double machine_busy_ticks() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    const bool masked = sched_getaffinity(0, sizeof mask, &mask) == 0;
    std::ifstream in("/proc/stat");
    double total = 0;
    bool any = false;
    for (std::string line; std::getline(in, line) && line.rfind("cpu", 0) == 0;) {
        std::istringstream fields(line);
        std::string cpu;
        double user, nice, system, idle, iowait, irq, softirq, steal = 0;
        if (!(fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) return -1;
        fields >> steal;  // absent on very old kernels
        const double busy = user + nice + system + irq + softirq + steal;
        if (cpu == "cpu") {
            if (!masked) return busy;
            continue;
        }
        const int n = std::atoi(cpu.c_str() + 3);
        if (n >= 0 && n < CPU_SETSIZE && CPU_ISSET(n, &mask)) total += busy, any = true;
    }
    return any ? total : -1;
}

// This process's utime + stime from /proc/self/stat (fields 14 and 15), -1 when unreadable.
double self_ticks() {
    std::ifstream in("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t close = text.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) return -1;
    std::istringstream fields(text.substr(close + 2));
    std::string f;
    double utime = -1, stime = -1;
    for (int i = 3; i <= 15 && fields >> f; ++i) {
        if (i == 14) utime = std::stod(f);
        if (i == 15) stime = std::stod(f);
    }
    return utime < 0 || stime < 0 ? -1 : utime + stime;
}

}  // namespace

LoadMeter::LoadMeter()
    : busy_ticks_(machine_busy_ticks()), self_ticks_(self_ticks()), start_(std::chrono::steady_clock::now()) {}

double LoadMeter::others_cpus() const {
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (wall < 0.05 || busy_ticks_ < 0 || self_ticks_ < 0) return -1;
    double busy = machine_busy_ticks(), self = self_ticks();
    if (busy < 0 || self < 0) return -1;
    static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    double others = ((busy - busy_ticks_) - (self - self_ticks_)) / hz / wall;
    return others > 0 ? others : 0;  // tick rounding can dip a hair below zero
}

}  // namespace lab
