// A run record's internal consistency (see consistency.hpp).
#include "consistency.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

#include "errors.hpp"
#include "units.hpp"

namespace lab::grader {

namespace {

std::string rate(double v, const std::string& unit) { return units::format(v, unit); }

// The problems of one set of time statistics ("" when consistent). Relative slack absorbs the
// rounding of a JSON round trip.
std::string time_problem(const TimeStats& t) {
    auto finite = [](double v) { return std::isfinite(v); };
    if (!finite(t.median) || !finite(t.min) || !finite(t.max) || !finite(t.mean) || !finite(t.stddev) || !finite(t.noise))
        return "a time statistic that is not a finite number";
    if (t.samples < 1) return "no samples";
    if (t.batch < 1) return "a batch of fewer than one invocation";
    const double eps = 1e-9 * std::max(std::fabs(t.max), 1e-300);
    if (!(t.min > 0)) return "a minimum time that is not positive";
    if (t.min > t.median + eps || t.median > t.max + eps) return "min <= median <= max does not hold";
    if (t.mean < t.min - eps || t.mean > t.max + eps) return "a mean outside [min, max]";
    if (t.stddev < 0 || (t.samples == 1 && t.stddev > eps)) return "a standard deviation impossible for its samples";
    // A sample standard deviation of values in [min, max] is at most (max - min) / 2 * sqrt(n / (n - 1)).
    if (t.samples > 1 && t.stddev > 0.5 * (t.max - t.min) * std::sqrt(t.samples / (t.samples - 1.0)) * (1 + 1e-6) + eps)
        return "a standard deviation larger than its samples' range allows";
    if (t.mean > 0 && std::fabs(t.noise - t.stddev / t.mean) > 1e-6 * std::max(1.0, t.noise))
        return "a noise figure that is not stddev / mean";
    // Sampling took at least the samples themselves (total_s 0: not recorded).
    if (t.total_s > 0 && t.total_s < 0.99 * t.samples * t.batch * t.min)
        return "less time spent sampling than its samples take";
    return "";
}

// The major and minor of "MAJOR.MINOR.PATCH[-...]", or false.
bool semver(const std::string& v, int& major, int& minor) {
    static const std::regex re(R"(^(\d+)\.(\d+)\.(\d+)([-+][0-9A-Za-z.+-]*)?$)");
    std::smatch m;
    if (!std::regex_match(v, m, re)) return false;
    major = std::stoi(m[1]);
    minor = std::stoi(m[2]);
    return true;
}

}  // namespace

std::vector<std::string> consistency_problems(const nlohmann::json& record, const RawRun& raw) {
    std::vector<std::string> problems;
    const std::string again = "record the run again with `lab run " + raw.lesson_id + "`";

    // Written by a lab this grader knows: same major version, not newer.
    {
        const std::string v = record.contains("lab_version") && record["lab_version"].is_string() ? record["lab_version"].get<std::string>() : "";
        int major = 0, minor = 0, my_major = 0, my_minor = 0;
        semver(LAB_VERSION, my_major, my_minor);
        if (!semver(v, major, minor))
            problems.push_back("the record's lab_version '" + v + "' is not a version lab writes; " + again);
        else if (major != my_major || minor > my_minor)
            problems.push_back("the record was written by lab " + v + ", which this grader (lab " + std::string(LAB_VERSION) +
                               ") cannot vouch for; " + again + " with the course's lab");
    }

    const Ceilings& c = raw.ceilings_at_start;
    auto positive = [&](const std::string& name, double v) {
        if (!(v > 0) || !std::isfinite(v)) problems.push_back("the " + name + " ceiling is not a positive number; " + again);
    };
    for (const auto& [k, v] : c.flops_per_s) positive(k, v.value);
    for (const auto& [k, v] : c.bandwidth_bytes_per_s) positive("bandwidth." + k, v.value);
    if (c.clock_hz.value != 0) positive("clock", c.clock_hz.value);
    if (c.launch_s.value < 0 || !std::isfinite(c.launch_s.value)) problems.push_back("the launch cost is not a time; " + again);
    if (raw.device_kind == DeviceKind::cpu && c.clock_hz.value > kMaxCpuClockHz)
        problems.push_back("the record's clock of " + rate(c.clock_hz.value, "Hz") + " is beyond any CPU's (" +
                           rate(kMaxCpuClockHz, "Hz") + "); " + again);

    for (const auto& m : raw.measurements) {
        if (auto p = time_problem(m.time); !p.empty())
            problems.push_back("workload '" + m.workload.name + "' has " + p + " in its times; " + again);
        // A count no kernel has (a review printed "-53.6 FLOP/s" from an edited record).
        if (!(m.workload.flops >= 0) || !std::isfinite(m.workload.flops) || !(m.workload.bytes >= 0) || !std::isfinite(m.workload.bytes))
            problems.push_back("workload '" + m.workload.name + "' has a FLOP or byte count that is negative or not a number; " + again);
    }
    for (const auto& cm : raw.ceiling_measurements)
        if (cm.purpose != "evidence")
            if (auto p = time_problem(cm.measurement.time); !p.empty())
                problems.push_back("the in-run measurement of " + cm.ceiling + " has " + p + " in its times; " + again);

    return problems;
}

void require_consistent(const nlohmann::json& record, const RawRun& raw, const std::string& file) {
    const auto problems = consistency_problems(record, raw);
    if (problems.empty()) return;
    throw InputError(file, "an inconsistent run record (edited after lab wrote it?): " + problems.front() +
                               (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""),
                     "use the record exactly as `lab run` wrote it, or record the run again");
}

}  // namespace lab::grader
