// CPU telemetry from /proc (see proc_telemetry.hpp).
#include "proc_telemetry.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace lab::cpu {

ProcTelemetry::Snapshot ProcTelemetry::take() {
    Snapshot s;
    s.at = std::chrono::steady_clock::now();
    std::ifstream stat("/proc/stat");
    for (std::string line; std::getline(stat, line);) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] == ' ') continue;  // "cpuN", not the "cpu" total
        std::istringstream in(line.substr(line.find(' ')));
        double v[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        for (double& x : v) in >> x;
        // user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user.
        const double busy = v[0] + v[1] + v[2] + v[5] + v[6], total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
        s.cores.push_back({busy, total});
    }
    std::ifstream self("/proc/self/stat");
    std::string text;
    std::getline(self, text);
    // Fields after the command name (which may hold spaces, so read from its closing ')'):
    // state is field 3, utime 14 and stime 15.
    if (auto close = text.rfind(')'); close != std::string::npos) {
        std::istringstream in(text.substr(close + 2));
        std::string f;
        double utime = 0, stime = 0;
        for (int field = 3; field <= 15 && in >> f; ++field) {
            if (field == 14) utime = std::stod(f);
            if (field == 15) stime = std::stod(f);
        }
        s.process_ticks = utime + stime;
    }
    return s;
}

void ProcTelemetry::begin() {
    const auto t0 = std::chrono::steady_clock::now();
    start_ = take();
    cost_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::map<std::string, double> ProcTelemetry::end() {
    const auto t0 = std::chrono::steady_clock::now();
    const Snapshot stop = take();
    cost_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (start_.cores.empty() || stop.cores.size() != start_.cores.size() || start_.process_ticks < 0) return {};
    double max_core = 0, busy = 0, total = 0;
    for (std::size_t c = 0; c < stop.cores.size(); ++c) {
        const double b = stop.cores[c].first - start_.cores[c].first, t = stop.cores[c].second - start_.cores[c].second;
        if (t > 0) max_core = std::max(max_core, 100 * b / t);
        busy += b, total += t;
    }
    const double interval = std::chrono::duration<double>(stop.at - start_.at).count();
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    return {{"cpu_busy_pct.max_core", max_core},
            {"cpu_busy_pct.machine", total > 0 ? 100 * busy / total : 0},
            {"process_cpu_pct", interval > 0 && tick > 0 ? 100 * (stop.process_ticks - start_.process_ticks) / tick / interval : 0},
            {"cores", static_cast<double>(stop.cores.size())},
            {"interval_s", interval},
            {"sampler_cost_s", cost_s_}};
}

}  // namespace lab::cpu
