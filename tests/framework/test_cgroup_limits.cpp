// A container's CPU quota and memory limit (lab/cgroup_limits.hpp), read from a fake /proc/self
// and cgroup tree: cgroup v2 and v1, limits on ancestors, combined v1 mounts, a container's own
// cgroup shown as the mount's root, malformed files. And the memory limit lesson children get.
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "lab/cgroup_limits.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace lab;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

// The unified hierarchy alone, as a systemd machine or a Docker container with cgroup v2 mounts it.
const char* const kV2Mountinfo =
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

// v1 with cpu and cpuacct on one mount, as many distributions and Slurm nodes have it.
const char* const kV1Mountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:7 - cgroup cgroup rw,cpu,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

// The v1 "no limit": the largest page count times a 4 KiB page.
const char* const kV1Unlimited = "9223372036854771712\n";

struct FakeMachine {
    lab_test::TempDir root;
    void write(const std::string& relative, const std::string& text) const {
        fs::create_directories((root.path() / relative).parent_path());
        lab_test::write_file(root.path() / relative, text);
    }
    FakeMachine(const std::string& proc_self_cgroup, const std::string& mountinfo) {
        write("proc/self/cgroup", proc_self_cgroup);
        write("proc/self/mountinfo", mountinfo);
    }
    cgroup::Limits limits() const { return cgroup::read_limits(root.path()); }
};

}  // namespace

TEST_CASE("cgroup v2: cpu.max gives the CPUs of time, rounded down to whole threads (at least 1); max is none", "[cgroup]") {
    FakeMachine m("0::/user.slice/job\n", kV2Mountinfo);
    m.write("sys/fs/cgroup/user.slice/job/cpu.max", "150000 100000\n");
    auto l = m.limits();
    REQUIRE(l.cpu);
    CHECK(l.cpu->cpus() == Approx(1.5));
    CHECK(l.cpu->whole_cpus() == 1);
    CHECK_THAT(l.cpu_file, Catch::EndsWith("user.slice/job/cpu.max"));
    CHECK_FALSE(l.memory_bytes);

    m.write("sys/fs/cgroup/user.slice/job/cpu.max", "max 100000\n");
    CHECK_FALSE(m.limits().cpu);
}

TEST_CASE("cgroup v2: a limit on an ancestor holds, and the smallest of the chain wins", "[cgroup]") {
    FakeMachine m("0::/user.slice/job/step\n", kV2Mountinfo);
    m.write("sys/fs/cgroup/user.slice/job/step/cpu.max", "max 100000\n");
    m.write("sys/fs/cgroup/user.slice/cpu.max", "200000 100000\n");
    m.write("sys/fs/cgroup/user.slice/memory.max", std::to_string(4 * GiB) + "\n");
    m.write("sys/fs/cgroup/user.slice/job/memory.max", "max\n");
    auto l = m.limits();
    REQUIRE(l.cpu);
    CHECK(l.cpu->whole_cpus() == 2);
    CHECK(l.memory_bytes == 4 * GiB);

    m.write("sys/fs/cgroup/user.slice/job/step/cpu.max", "100000 100000\n");
    m.write("sys/fs/cgroup/user.slice/job/memory.max", std::to_string(2 * GiB) + "\n");
    l = m.limits();
    REQUIRE(l.cpu);
    CHECK(l.cpu->whole_cpus() == 1);
    CHECK(l.memory_bytes == 2 * GiB);
    CHECK_THAT(l.memory_file, Catch::EndsWith("user.slice/job/memory.max"));
}

TEST_CASE("cgroup v1: a combined cpu,cpuacct mount found through mountinfo; the huge limit is none", "[cgroup]") {
    FakeMachine m("12:memory:/slurm/job_7\n4:cpuset:/\n2:cpu,cpuacct:/slurm/job_7\n0::/\n", kV1Mountinfo);
    m.write("sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_quota_us", "250000\n");
    m.write("sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_period_us", "100000\n");
    m.write("sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes", kV1Unlimited);
    m.write("sys/fs/cgroup/memory/slurm/memory.limit_in_bytes", kV1Unlimited);
    m.write("sys/fs/cgroup/memory/memory.limit_in_bytes", kV1Unlimited);
    auto l = m.limits();
    REQUIRE(l.cpu);
    CHECK(l.cpu->whole_cpus() == 2);
    CHECK_FALSE(l.memory_bytes);

    m.write("sys/fs/cgroup/cpu,cpuacct/slurm/job_7/cpu.cfs_quota_us", "-1\n");
    m.write("sys/fs/cgroup/memory/slurm/memory.limit_in_bytes", std::to_string(6 * GiB) + "\n");
    l = m.limits();
    CHECK_FALSE(l.cpu);
    CHECK(l.memory_bytes == 6 * GiB);
}

TEST_CASE("a container's own cgroup is the mount's root: its files are the mount point's", "[cgroup]") {
    SECTION("v2 without a cgroup namespace: the path in /proc/self/cgroup is not under the mount") {
        FakeMachine m("0::/system.slice/docker-0123abcd.scope\n", kV2Mountinfo);
        m.write("sys/fs/cgroup/cpu.max", "200000 100000\n");
        m.write("sys/fs/cgroup/memory.max", std::to_string(4 * GiB) + "\n");
        auto l = m.limits();
        REQUIRE(l.cpu);
        CHECK(l.cpu->whole_cpus() == 2);
        CHECK(l.memory_bytes == 4 * GiB);
    }
    SECTION("v1: mountinfo names the container's cgroup as the mount's root") {
        FakeMachine m("9:memory:/docker/0123abcd\n3:cpu,cpuacct:/docker/0123abcd\n",
                      "35 31 0:32 /docker/0123abcd /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
                      "32 31 0:29 /docker/0123abcd /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n");
        m.write("sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(3 * GiB) + "\n");
        m.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
        m.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        auto l = m.limits();
        REQUIRE(l.cpu);
        CHECK(l.cpu->cpus() == Approx(0.5));
        CHECK(l.cpu->whole_cpus() == 1);
        CHECK(l.memory_bytes == 3 * GiB);
    }
}

TEST_CASE("mountinfo's escaped blanks in a mount point are read back", "[cgroup]") {
    FakeMachine m("0::/\n", "30 23 0:26 / /sys/fs/my\\040cgroups rw - cgroup2 cgroup2 rw\n");
    m.write("sys/fs/my cgroups/memory.max", std::to_string(5 * GiB) + "\n");
    CHECK(m.limits().memory_bytes == 5 * GiB);
}

TEST_CASE("malformed or missing cgroup files are no limit, never an error", "[cgroup]") {
    for (const char* cpu_max : {"lots 100000", "150000", "150000 0", "0 100000", "-5 100000", "150000 100000 9", "", "1.5 1"}) {
        CAPTURE(cpu_max);
        CHECK_FALSE(cgroup::parse_cpu_max(cpu_max));
    }
    for (const char* memory : {"12 GiB", "-1", "", "0", "max", "0x100000", "18446744073709551616", kV1Unlimited}) {
        CAPTURE(memory);
        CHECK_FALSE(cgroup::parse_memory_limit(memory));
    }
    CHECK_FALSE(cgroup::parse_cfs("-1\n", "100000\n"));
    CHECK_FALSE(cgroup::parse_cfs("100000\n", "\n"));

    SECTION("garbage in the files") {
        FakeMachine m("0::/job\n", kV2Mountinfo);
        m.write("sys/fs/cgroup/job/cpu.max", "\x01\x02garbage");
        m.write("sys/fs/cgroup/job/memory.max", "a lot\n");
        auto l = m.limits();
        CHECK_FALSE(l.cpu);
        CHECK_FALSE(l.memory_bytes);
    }
    SECTION("garbage in /proc/self/cgroup and mountinfo") {
        FakeMachine m("nonsense\n::\n0:", "- cgroup2\n30 23 - cgroup2\n");
        auto l = m.limits();
        CHECK_FALSE(l.cpu);
        CHECK_FALSE(l.memory_bytes);
    }
    SECTION("no /proc at all") {
        lab_test::TempDir empty;
        auto l = cgroup::read_limits(empty.path());
        CHECK_FALSE(l.cpu);
        CHECK_FALSE(l.memory_bytes);
    }
}

TEST_CASE("this machine's cgroup limits read without an error", "[cgroup]") {
    cgroup::Limits l;
    REQUIRE_NOTHROW(l = cgroup::read_limits());
    if (l.cpu) CHECK(l.cpu->cpus() > 0);
    if (l.memory_bytes) CHECK(*l.memory_bytes > 0);
}

TEST_CASE("lesson children get 80% of the smaller of physical memory and the cgroup's limit", "[cgroup]") {
    const std::uint64_t physical = 64 * GiB;
    CHECK(default_child_memory_limit(physical, std::nullopt) == static_cast<std::uint64_t>(0.8 * static_cast<double>(physical)));
    CHECK(default_child_memory_limit(physical, 4 * GiB) == static_cast<std::uint64_t>(0.8 * static_cast<double>(4 * GiB)));
    CHECK(default_child_memory_limit(physical, 128 * GiB) == default_child_memory_limit(physical, std::nullopt));
    CHECK(default_child_memory_limit(0, 4 * GiB) == default_child_memory_limit(4 * GiB, std::nullopt));
    CHECK(default_child_memory_limit(0, std::nullopt) == 0);
}

TEST_CASE("of two mounts of one hierarchy, the one whose root holds the cgroup is read; a path above the mount reads nothing", "[cgroup]") {
    SECTION("a bind mount of another subtree comes first in mountinfo") {
        FakeMachine m("4:memory:/slurm/job_7\n",
                      "36 31 0:32 /other /mnt/other-memory rw - cgroup cgroup rw,memory\n"
                      "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
        m.write("mnt/other-memory/memory.limit_in_bytes", std::to_string(1 * GiB) + "\n");  // another job's
        m.write("sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes", std::to_string(6 * GiB) + "\n");
        CHECK(m.limits().memory_bytes == 6 * GiB);
    }
    SECTION("a process outside its cgroup namespace's root") {
        FakeMachine m("0::/../sibling\n", kV2Mountinfo);
        m.write("sys/fs/cgroup/memory.max", std::to_string(2 * GiB) + "\n");  // the namespace root's, not its own
        CHECK_FALSE(m.limits().memory_bytes);
    }
}
