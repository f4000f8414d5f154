// Other processes' CPU use (see machine_load.hpp).
#include "machine_load.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace lab {

namespace {

// Busy ticks of all CPUs from /proc/stat's first line, -1 when unreadable.
double machine_busy_ticks() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double user, nice, system, idle, iowait, irq, softirq, steal = 0;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || cpu != "cpu") return -1;
    in >> steal;  // absent on very old kernels
    return user + nice + system + irq + softirq + steal;
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
