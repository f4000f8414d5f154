// What the CPU is, read from procfs and sysfs, and its running core clock, measured.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "cpu_device.hpp"

namespace lab::cpu {

namespace {

std::string read_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// "48K", "2048K", "260M" -> bytes.
std::uint64_t parse_size(const std::string& s) {
    if (s.empty()) return 0;
    std::uint64_t v = std::stoull(s);
    char unit = s.back();
    if (unit == 'K') v <<= 10;
    else if (unit == 'M') v <<= 20;
    else if (unit == 'G') v <<= 30;
    return v;
}

// "0-1,4" -> number of CPUs listed.
int count_cpu_list(const std::string& list) {
    int n = 0;
    std::stringstream ss(list);
    std::string part;
    while (std::getline(ss, part, ',')) {
        auto dash = part.find('-');
        if (part.empty()) continue;
        if (dash == std::string::npos) ++n;
        else n += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
    return n;
}

// The first CPU's value of `key` in /proc/cpuinfo. The key must match whole ("model" is not
// "model name"); cpuinfo pads keys with tabs before the colon.
std::string cpuinfo_field(const std::string& key) {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string k = line.substr(0, colon);
        k.erase(k.find_last_not_of(" \t") + 1);
        if (k != key) continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t") + 1);
        return v;
    }
    return "";
}

}  // namespace

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; ++i)
            if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

DeviceFacts read_cpu_facts(const std::vector<int>& cpus, Simd simd) {
    DeviceFacts f;
    f.name = cpuinfo_field("model name");
    if (f.name.empty()) f.name = "unknown CPU";
    f.vendor = cpuinfo_field("vendor_id");
    f.threads = static_cast<int>(cpus.size());
    f.simd = to_string(simd);
    if (std::string note = simd_override_note(); !note.empty()) f.extra["simd_override"] = note;

    // Cores: distinct (package, core) pairs among the CPUs we run on.
    std::set<std::pair<std::string, std::string>> cores;
    for (int c : cpus) {
        std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
        cores.insert({read_line(base + "physical_package_id"), read_line(base + "core_id")});
    }
    f.compute_units = static_cast<int>(cores.size());
    f.extra["logical_cpus_used"] = std::to_string(cpus.size());

    for (int i = 0; i < 8; ++i) {
        std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpus[0]) + "/cache/index" +
                           std::to_string(i) + "/";
        std::string level = read_line(base + "level");
        if (level.empty()) break;
        CacheLevel c;
        c.level = std::stoi(level);
        c.type = read_line(base + "type");
        c.bytes = parse_size(read_line(base + "size"));
        c.shared_by = std::max(1, count_cpu_list(read_line(base + "shared_cpu_list")));
        f.caches.push_back(c);
    }

    std::string mem = [] {
        std::ifstream m("/proc/meminfo");
        std::string line;
        while (std::getline(m, line))
            if (line.rfind("MemTotal:", 0) == 0) return line;
        return std::string();
    }();
    if (!mem.empty()) f.memory_bytes = std::stoull(mem.substr(9)) * 1024;  // kB in meminfo

    std::stringstream flags(cpuinfo_field("flags"));
    std::string flag;
    static const std::set<std::string> interesting{"sse4_2", "avx", "avx2", "fma", "avx512f",
                                                   "avx512bw", "avx512_bf16", "avx512_fp16",
                                                   "amx_tile", "amx_bf16", "hypervisor"};
    while (flags >> flag)
        if (interesting.count(flag)) f.features.push_back(flag);
    f.extra["cpuinfo_mhz"] = cpuinfo_field("cpu MHz");
    // cpuid identity, decimal as cpuinfo prints it: picks the row of
    // configs/cpu_microarchitectures.yaml behind the theoretical peak (device_summary.cpp).
    if (!f.vendor.empty()) f.extra["cpu_vendor_id"] = f.vendor;
    for (const auto& [key, field] : {std::pair<const char*, const char*>{"cpu_family", "cpu family"},
                                     {"cpu_model", "model"},
                                     {"cpu_stepping", "stepping"}}) {
        std::string v = cpuinfo_field(field);
        if (!v.empty()) f.extra[key] = v;
    }
    if (std::find(f.features.begin(), f.features.end(), "hypervisor") != f.features.end())
        f.extra["virtualised"] = "yes (a VM: another guest can take cores away, so figures are noisy)";
    return f;
}

double measure_core_clock_hz() {
    // A chain of dependent integer adds retires one add per cycle on every x86 core since the
    // P6, so adds / seconds is the running clock, turbo and all (cpuinfo's MHz is not). The
    // addend is a register: Golden Cove and later fold `add $imm` chains at rename and would
    // read six times the clock.
    constexpr long kAddsPerBlock = 1000;
    constexpr long kBlocks = 5000;
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
        unsigned long x = 0, one = 1;
        auto t0 = std::chrono::steady_clock::now();
        for (long b = 0; b < kBlocks; ++b) {
            asm volatile(".rept 1000\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
        }
        auto t1 = std::chrono::steady_clock::now();
        double s = std::chrono::duration<double>(t1 - t0).count();
        if (x != static_cast<unsigned long>(kAddsPerBlock * kBlocks)) return 0;  // cannot happen
        best = std::max(best, kAddsPerBlock * kBlocks / s);
    }
    return best;
}

}  // namespace lab::cpu
