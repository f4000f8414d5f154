// The limits a Linux control group puts on this process: a CPU quota (CPUs' worth of time per
// scheduling period) and a hard memory limit, as Docker's --cpus/--memory, Gradescope's
// autograder and a Slurm job's cgroup set them. sched_getaffinity and sysconf see the host's CPUs
// and memory, not these limits: a team of one thread per CPU is throttled every period, and a
// child allowed 80% of the host's memory is OOM-killed long before lab's watchdog stops it.
//
// Header-only, so that the CPU backend (which sees only the SDK) and the host (the memory limit
// of lesson children) read the limits one way. The parsers take texts and a root directory, so
// tests can build a fake /proc/self and cgroup tree; read_limits() reads the real ones. Nothing
// here throws: a file that is missing, unreadable or malformed is no limit.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace lab::cgroup {

// A CPU quota: `quota_us` of CPU time every `period_us`.
struct CpuQuota {
    std::uint64_t quota_us = 0;
    std::uint64_t period_us = 0;
    double cpus() const { return static_cast<double>(quota_us) / static_cast<double>(period_us); }
    // The threads the quota keeps running all the time, rounded down (at least 1): 2 threads on
    // 1.5 CPUs of time would both stop for the last quarter of every period, and a sample that
    // spans the stop reads a quarter of a period slow; 1 thread is never stopped. A steady rate
    // on fewer threads is what a measurement needs (the facts say why the team is that size).
    int whole_cpus() const {
        const std::uint64_t whole = quota_us / period_us;
        return static_cast<int>(std::clamp<std::uint64_t>(whole, 1, std::numeric_limits<int>::max()));
    }
};

struct Limits {
    std::optional<CpuQuota> cpu;
    std::optional<std::uint64_t> memory_bytes;
    std::string cpu_file, memory_file;  // where each limit was read, for the record
};

// One line of /proc/self/cgroup: "4:memory:/docker/abc", "1:cpu,cpuacct:/x" (v1) or "0::/x" (v2).
struct Membership {
    bool unified = false;
    std::vector<std::string> controllers;
    std::string path;
};

// A cgroup file system from /proc/self/mountinfo: the cgroup shown at `mount_point` is `root`.
struct Mount {
    bool unified = false;
    std::vector<std::string> options;  // v1: the controllers among the super options ("rw,cpu,cpuacct")
    std::string root, mount_point;
};

namespace detail {

inline std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(sep, start);
        if (end == std::string_view::npos) end = text.size();
        parts.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

inline std::vector<std::string> words(std::string_view text) {
    std::istringstream in{std::string(text)};
    return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

inline std::optional<std::uint64_t> number(std::string_view text) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

// mountinfo writes a blank, tab, newline or backslash in a path as \040, \011, \012, \134.
inline std::string unescape(std::string_view s) {
    auto octal_digit = [](char c) { return c >= '0' && c <= '7'; };
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && octal_digit(s[i + 1]) && octal_digit(s[i + 2]) && octal_digit(s[i + 3])) {
            out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

// Without a trailing separator, so that walking up from a directory meets it.
inline std::filesystem::path normal(const std::filesystem::path& p) {
    std::filesystem::path n = p.lexically_normal();
    if (n.has_relative_path() && n.filename().empty()) n = n.parent_path();
    return n;
}

inline std::string read_text(const std::filesystem::path& file) {
    std::ifstream f(file);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline bool lists(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace detail

inline std::vector<Membership> parse_proc_cgroup(std::string_view text) {
    std::vector<Membership> out;
    for (const std::string& line : detail::split(text, '\n')) {
        const auto first = line.find(':');
        const auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        Membership m;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        m.unified = line.substr(0, first) == "0" && controllers.empty();
        if (!controllers.empty()) m.controllers = detail::split(controllers, ',');
        m.path = line.substr(second + 1);
        if (!m.path.empty() && m.path.front() == '/') out.push_back(std::move(m));
    }
    return out;
}

// Fields: id parent major:minor root mount-point options [optional...] - fstype source super-options.
inline std::vector<Mount> parse_cgroup_mounts(std::string_view mountinfo) {
    std::vector<Mount> out;
    for (const std::string& line : detail::split(mountinfo, '\n')) {
        const auto f = detail::words(line);
        const auto dash = std::find(f.begin(), f.end(), "-");
        if (dash == f.end() || dash - f.begin() < 6 || f.end() - dash < 4) continue;
        const std::string& type = *(dash + 1);
        if (type != "cgroup" && type != "cgroup2") continue;
        Mount m;
        m.unified = type == "cgroup2";
        m.root = detail::unescape(f[3]);
        m.mount_point = detail::unescape(f[4]);
        if (!m.unified) m.options = detail::split(*(dash + 3), ',');
        out.push_back(std::move(m));
    }
    return out;
}

// v2 cpu.max: "max 100000" (none) or "200000 100000".
inline std::optional<CpuQuota> parse_cpu_max(std::string_view text) {
    const auto w = detail::words(text);
    if (w.size() != 2) return std::nullopt;
    const auto quota = detail::number(w[0]), period = detail::number(w[1]);
    if (!quota || !period || *quota == 0 || *period == 0) return std::nullopt;
    return CpuQuota{*quota, *period};
}

// v1 cpu.cfs_quota_us ("-1": none) and cpu.cfs_period_us.
inline std::optional<CpuQuota> parse_cfs(std::string_view quota_text, std::string_view period_text) {
    const auto q = detail::words(quota_text), p = detail::words(period_text);
    if (q.size() != 1 || p.size() != 1) return std::nullopt;
    return parse_cpu_max(q[0] + " " + p[0]);
}

// v2 memory.max ("max": none) or v1 memory.limit_in_bytes. v1 writes "none" as the largest page
// count times the page size (9223372036854771712 with 4 KiB pages, less with 64 KiB ones): any
// figure from 2^62 bytes up (4 EiB, more than any machine holds) is that. 0 is no usable limit.
inline std::optional<std::uint64_t> parse_memory_limit(std::string_view text) {
    constexpr std::uint64_t kUnlimitedFrom = std::uint64_t{1} << 62;
    const auto w = detail::words(text);
    if (w.size() != 1) return std::nullopt;
    const auto v = detail::number(w[0]);
    if (!v || *v == 0 || *v >= kUnlimitedFrom) return std::nullopt;
    return v;
}

// The directories of this process's cgroup for one controller ("cpu", "memory"; "" for v2), its
// own first, then each ancestor up to the mount's root: a limit on any of them holds. Where the
// cgroup path is not under the mount (a container shows its own cgroup as the mount's root
// without a cgroup namespace), the mount point alone.
inline std::vector<std::filesystem::path> cgroup_dirs(const std::filesystem::path& root,
                                                      const std::vector<Membership>& memberships,
                                                      const std::vector<Mount>& mounts, const std::string& controller) {
    namespace fs = std::filesystem;
    const bool v2 = controller.empty();
    auto member = std::find_if(memberships.begin(), memberships.end(), [&](const Membership& m) {
        return v2 ? m.unified : detail::lists(m.controllers, controller);
    });
    if (member == memberships.end()) return {};
    // The hierarchy may be mounted more than once (a bind mount of a subtree): the mount whose
    // root holds this cgroup, the deepest such, else the first.
    auto holds = [&](const Mount& m) { return m.root == "/" || member->path == m.root || member->path.rfind(m.root + "/", 0) == 0; };
    auto mount = mounts.end();
    for (auto m = mounts.begin(); m != mounts.end(); ++m) {
        if (!(v2 ? m->unified : !m->unified && detail::lists(m->options, controller))) continue;
        if (mount == mounts.end() || (holds(*m) && (!holds(*mount) || m->root.size() > mount->root.size()))) mount = m;
    }
    if (mount == mounts.end()) return {};
    const fs::path top = detail::normal(root / fs::path(mount->mount_point).relative_path());
    std::string rel = member->path;
    if (mount->root != "/") {
        if (rel == mount->root) rel.clear();
        else if (rel.rfind(mount->root + "/", 0) == 0) rel.erase(0, mount->root.size());
    }
    const fs::path dir = detail::normal(top / fs::path(rel).relative_path());
    const fs::path below = dir.lexically_relative(top);
    std::error_code ec;
    // A path above the mount (a process outside its cgroup namespace's root) names no cgroup
    // here whose limits are its own: none are read.
    if (!below.empty() && *below.begin() == "..") return {};
    if (below.empty() || !fs::is_directory(dir, ec)) return {top};
    std::vector<fs::path> dirs;
    for (fs::path d = dir;; d = d.parent_path()) {
        dirs.push_back(d);
        if (d == top || d == d.parent_path()) break;
    }
    return dirs;
}

// The smallest CPU quota and memory limit over v2 and v1 hierarchies and every ancestor. `root`
// is prefixed to the mount points ("/" for the real system).
inline Limits read_limits(const std::filesystem::path& root, std::string_view proc_self_cgroup,
                          std::string_view mountinfo) {
    Limits limits;
    try {
        const auto memberships = parse_proc_cgroup(proc_self_cgroup);
        const auto mounts = parse_cgroup_mounts(mountinfo);
        auto take_cpu = [&](std::optional<CpuQuota> q, const std::filesystem::path& file) {
            if (q && (!limits.cpu || q->cpus() < limits.cpu->cpus())) limits.cpu = q, limits.cpu_file = file.string();
        };
        auto take_memory = [&](std::optional<std::uint64_t> m, const std::filesystem::path& file) {
            if (m && (!limits.memory_bytes || *m < *limits.memory_bytes)) limits.memory_bytes = m, limits.memory_file = file.string();
        };
        for (const auto& d : cgroup_dirs(root, memberships, mounts, "")) {
            take_cpu(parse_cpu_max(detail::read_text(d / "cpu.max")), d / "cpu.max");
            take_memory(parse_memory_limit(detail::read_text(d / "memory.max")), d / "memory.max");
        }
        for (const auto& d : cgroup_dirs(root, memberships, mounts, "cpu"))
            take_cpu(parse_cfs(detail::read_text(d / "cpu.cfs_quota_us"), detail::read_text(d / "cpu.cfs_period_us")),
                     d / "cpu.cfs_quota_us");
        for (const auto& d : cgroup_dirs(root, memberships, mounts, "memory"))
            take_memory(parse_memory_limit(detail::read_text(d / "memory.limit_in_bytes")), d / "memory.limit_in_bytes");
    } catch (const std::exception&) {
        return {};  // unreadable is no limit: the limits tune defaults, they never stop a run
    }
    return limits;
}

// The limits of the calling process, from /proc/self and the cgroup file systems under `root`.
inline Limits read_limits(const std::filesystem::path& root = "/") {
    try {
        return read_limits(root, detail::read_text(root / "proc/self/cgroup"), detail::read_text(root / "proc/self/mountinfo"));
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace lab::cgroup
