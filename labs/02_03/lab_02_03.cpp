// Lesson 02.03, "The Memory Hierarchy": latency and bandwidth per level.
//
// A pointer chase (lab/pointer_chase.hpp, kernels and level detection included: a random cycle through 64 B lines, one line per hop, so
// every load waits for the one before) over working sets from 4 KiB to 1 GiB on a CPU (256 MiB,
// past 4x the last-level cache, with --quick; past 4x L2 on a GPU), and a read-bandwidth sweep
// over the same range on every thread. Plateaus of the latency curve are the levels: their
// latency (ns, and cycles at the measured clock) and capacity (where the latency crosses halfway,
// on a log scale, to the next plateau) are set beside what the device reports. Beyond the caches:
// a register-resident dependent chain against the L1-resident chase (and, on a GPU, a chase in
// shared memory). Questions: L1 and DRAM latency, L2 capacity, DRAM/L1 latency, the bandwidth
// ratio between the smallest and the largest working set.
#include <lab/cpu_pointer_chase.hpp>
#include <lab/lab.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <functional>

namespace {

using namespace lab;
using pointer_chase::Plateau;

constexpr std::size_t kLine = 64, kMinSet = 4096;
const char* kLevels[] = {"l1", "l2", "l3", "dram"};

std::string kib(std::size_t b) { return std::to_string(b / 1024) + "k"; }
std::string fixed(const char* f, double v) { char s[48]; std::snprintf(s, sizeof s, f, v); return s; }
std::size_t round_kib(double b) { return static_cast<std::size_t>(std::llround(b / 1024)) * 1024; }
// The largest working set: the power of two past 4x the last-level cache (L2 on a GPU); 1 GiB on
// a CPU unless --quick.
std::size_t largest_set(const Device& dev, bool quick) {
    std::size_t b = std::size_t{1} << 20;
    while (b <= 4 * dev.facts().last_level_cache_bytes()) b *= 2;
    return dev.kind() == DeviceKind::cpu && !quick ? std::max(b, std::size_t{1} << 30) : b;
}
class MemoryHierarchy : public Lesson {
public:
    LessonInfo info() const override {
        LessonInfo i{.id = "02.03", .title = "The Memory Hierarchy", .version = "4.0.0"};
        i.objectives = {"Measure each memory level's latency (ns and cycles) and capacity from where a pointer chase's latency steps up.",
                        "See how read bandwidth changes from level to level, and what crossing each level costs against a register."};
        i.experiments = {
            {"chase", "a pointer chase through a random cycle of 64 B lines, 4 KiB to 1 GiB on a CPU (256 MiB with --quick; past 4x L2 on a GPU)"},
            {"read", "every thread reads its share of the same working sets, over and over (on a GPU, a set is read whole by every "
                     "block, its bytes every block's, until it outnumbers the grid's threads and an SM's share is over twice its L1)"},
            {"register", "a dependent register-register add chain (and, on a GPU, a chase in shared memory)"}};
        for (const char* l : kLevels) {
            const std::string n = l;
            const std::vector<std::string> on = n == "l3" ? std::vector<std::string>{"cpu"} : std::vector<std::string>{"cpu", "cuda"};
            i.metrics.push_back({.name = n + ".latency_s", .unit = "s", .description = "latency of one load from " + n + ": the median over its plateau of each point's fastest time per hop", .graded = n == "l1" || n == "dram", .devices = on});
            i.metrics.push_back({.name = n + ".latency_cycles", .description = n + " latency in core cycles at the measured clock", .graded = n == "l1" || n == "dram", .devices = on});
            if (n == "dram") continue;
            i.metrics.push_back({.name = n + ".capacity_bytes", .unit = "B", .description = "where the latency leaves the " + n + " plateau (halfway to the next, log scale)", .graded = n == "l2", .devices = on});
            i.metrics.push_back({.name = n + ".reported_bytes", .unit = "B", .description = "the " + n + " size the device reports (per instance)",
                                 .devices = n == "l2" ? on : std::vector<std::string>{"cpu"}});
        }
        i.metrics.push_back({.name = "register.latency_s", .unit = "s", .description = "one dependent add in a register"});
        i.metrics.push_back({.name = "register.latency_cycles", .description = "the same, in cycles"});
        i.metrics.push_back({.name = "shared.latency_s", .unit = "s", .description = "one hop of a chase in shared memory", .devices = {"cuda"}});
        i.metrics.push_back({.name = "dram_over_l1", .unit = "ratio", .description = "DRAM latency / L1 latency", .graded = true});
        i.metrics.push_back({.name = "bandwidth_ratio", .unit = "ratio", .description = "read bandwidth (fastest sample) at the smallest / at the largest working set", .graded = true});
        i.metrics.push_back({.name = "levels_found", .kind = MetricKind::integer, .description = "levels found: L1 and DRAM, and each level between that formed a plateau (3 on a CPU: no L3 plateau, as on many VMs; 2 on a GPU: no L2 plateau)"});
        i.metrics.push_back({.name = "check.counts", .kind = MetricKind::integer, .description = "1 when every chase states 64 B per hop and every read reps x size (x passes on a GPU)"});
        i.expectations = {
            {.metric = "check.counts", .min = 1, .max = 1, .why = "each point's bytes follow from its hops or its size and passes"},
            // Two measured latencies: a chase through L1 preempted under load read 1000 cycles a hop.
            {.metric = "dram_over_l1", .min = 1, .performance = true, .why = "a load from DRAM is slower than one from L1"},
            {.metric = "levels_found", .min = 3, .performance = true, .why = "L1, L2 and DRAM show as plateaus"},
            {.metric = "l1.latency_cycles", .min = 2, .max = 8, .devices = {"cpu"}, .performance = true, .why = "an L1 hit takes 3-6 cycles"},
            {.metric = "l1.latency_cycles", .min = 20, .max = 60, .devices = {"cuda"}, .performance = true,
             .why = "a GPU's L1 hit takes ~30-40 cycles (Hopper: ~33)"},
            {.metric = "dram.latency_s", .min = 40e-9, .performance = true, .why = "DRAM is tens of ns away or more"},
            {.metric = "bandwidth_ratio", .min = 2, .performance = true,
             .why = "L1 reads are several times faster than DRAM's (on a GPU, every SM's L1 together against HBM)"},
        };
        i.budget_quick_s = 10, i.budget_full_s = 60;
        return i;
    }

    void run(Session& s) override {
        Device& dev = s.device();
        const bool quick = s.options().quick, gpu = dev.kind() == DeviceKind::cuda;
        auto k = s.kernels<ChaseKernels, cpu::ChaseKernelsCpu>();
        const std::size_t largest = largest_set(dev, quick);
        BufferPtr buf = dev.allocate(largest), cursor = dev.allocate(64);
        BufferPtr staging = gpu ? dev.allocate_host(largest) : nullptr;  // the cycle is written on the host
        const double max_time = quick ? 0.15 : 0.35;
        const std::vector<double> by2 = geometric_sweep(kMinSet, largest, 2);  // every 4th with --quick, down from the largest
        for (std::size_t i = 0; i < by2.size(); ++i) {
            if (quick && (by2.size() - 1 - i) % 4) continue;
            const std::size_t bytes = round_kib(by2[i]);
            const std::int64_t reps = std::max<std::int64_t>(1, (std::int64_t{32} << 20) / static_cast<std::int64_t>(bytes));
            s.measure(pointer_chase::read_workload(dev, "read_" + kib(bytes), bytes, reps, max_time),  // GPU: read_workload says how
                      k->read(buf->as<float>(), bytes / 4, reps));
        }
        const std::int64_t hops = gpu ? (quick ? 1 << 12 : 1 << 14) : (quick ? 1 << 16 : 1 << 18);
        for (double b : geometric_sweep(kMinSet, largest, quick ? 2 : std::sqrt(2.0))) {
            const std::size_t bytes = round_kib(b);
            // The cycle through the first `bytes`, and the cursor at its start.
            if (!s.replaying()) pointer_chase::place_cycle(dev, *buf, *cursor, staging.get(), bytes / kLine, kLine, bytes);
            s.measure({.name = "chase_" + kib(bytes), .description = "pointer chase, one 64 B line per hop",
                       .params = {param("bytes", bytes), param("hops", hops)}, .bytes = 1.0 * kLine * hops,
                       .level = pointer_chase::level_of(bytes, dev.facts(), 1), .max_time_s = max_time},
                      k->chase(static_cast<void**>(cursor->data()), hops));
        }
        const std::int64_t ops = gpu ? 1 << 16 : (quick ? 1 << 22 : 1 << 24);
        s.measure({.name = "register", .description = "a dependent add chain in a register", .params = {param("ops", ops)},
                   .max_time_s = max_time}, k->register_chain(ops));  // integer adds: no FLOP
        if (gpu) s.measure({.name = "shared_chase", .description = "pointer chase in shared memory", .params = {param("hops", hops)},
                            .bytes = 4.0 * hops, .level = "shared", .max_time_s = max_time}, k->shared_chase(hops));
        else s.skip("shared_chase", "a CPU has no shared memory: its nearest level is L1");
    }

    void derive(const RawRun& run, Derivation& d) const override {
        const double clock = run.ceilings.clock_hz.value;
        // Each point's fastest sample: on a shared machine, the one least disturbed by others
        // (docs/student.md). The run table shows medians: the teaching table prints these.
        std::vector<double> size, lat, bsize, bw;
        bool counts = true;
        for (const auto& m : run.measurements) {
            const auto& w = m.workload;
            if (w.name.rfind("chase_", 0) == 0) {
                size.push_back(w.param("bytes")), lat.push_back(m.time.min / w.param("hops"));
                counts = counts && w.bytes == kLine * w.param("hops");
            } else if (w.name.rfind("read_", 0) == 0) {
                bsize.push_back(w.param("bytes")), bw.push_back(w.bytes / m.time.min);
                counts = counts && pointer_chase::read_bytes_stated(w, run.device_kind);
            }
        }
        d.set("check.counts", counts);
        auto set_latency = [&](const std::string& n, double s) {
            d.set(n + ".latency_s", s);
            d.set(n + ".latency_cycles", s * clock);
        };
        Plot lp{.name = "latency", .title = "Latency of one load against working set (each point its fastest sample)",
                .x = {.label = "working set", .unit = "B", .log = true}, .y = {.label = "latency", .unit = "s", .log = true},
                .series = {{.name = "pointer chase", .x = size, .y = lat}}};
        Plot bp{.name = "bandwidth", .title = "Read bandwidth against working set (each point its fastest sample)",
                .x = {.label = "working set", .unit = "B", .log = true}, .y = {.label = "read", .unit = "B/s", .log = true},
                .series = {{.name = "read, every thread", .x = bsize, .y = bw}}};
        // The levels: pointer_chase::find_levels states the rule and why (a busy machine's L1 points
        // alternate; a 2x step missed a Zen 4's L2; Hopper's L2 is only 2-3x faster than its HBM).
        if (lat.empty()) return;
        const bool cpu = run.device_kind == DeviceKind::cpu;
        const pointer_chase::Levels lv = pointer_chase::find_levels(
            size, lat, {.l1 = double(pointer_chase::reported_cache(run.facts, 1)), .l2 = double(pointer_chase::reported_cache(run.facts, 2)), .l3 = double(pointer_chase::reported_cache(run.facts, 3)),
                        .llc = double(run.facts.last_level_cache_bytes())}, run.device_kind);
        std::vector<std::pair<std::string, Plateau>> levels{{"l1", lv.l1}, {"l2", lv.l2}};
        if (cpu) levels.push_back({"l3", lv.l3});
        levels.push_back({"dram", lv.dram});
        d.set("levels_found", 2.0 + lv.l2_plateau + lv.l3_plateau);
        for (std::size_t l = 0; l < levels.size(); ++l) {
            const auto& [name, p] = levels[l];
            set_latency(name, p.latency);
            const std::string up = name == "dram" ? "DRAM" : std::string(1, static_cast<char>(std::toupper(name[0]))) + name[1];
            lp.marks.push_back({.label = up, .x = std::sqrt(size[p.first] * size[p.last]), .y = p.latency, .metric = name + ".latency_s"});
            if (l + 1 == levels.size()) continue;
            const double cap = pointer_chase::level_capacity(size, lat, p, levels[l + 1].second.latency);
            d.set(name + ".capacity_bytes", cap);
            for (Plot* pl : {&lp, &bp}) pl->marks.push_back({.label = up + " found", .x = cap, .vertical = true, .metric = name + ".capacity_bytes"});
        }
        for (int l = 1; l <= 3; ++l) {
            const double r = static_cast<double>(pointer_chase::reported_cache(run.facts, l));
            if (run.device_kind == DeviceKind::cuda && l != 2) continue;  // a GPU's facts state its L2
            d.set(std::string(kLevels[l - 1]) + ".reported_bytes", r);
            if (r > 0)
                for (Plot* pl : {&lp, &bp}) pl->marks.push_back({.label = "L" + std::to_string(l) + " reported", .x = r, .vertical = true});
        }
        if (const auto* l1 = d.find("l1.latency_s"); l1 && d.find("dram.latency_s")) d.set("dram_over_l1", d.find("dram.latency_s")->number / l1->number);
        if (!bw.empty()) d.set("bandwidth_ratio", bw.front() / bw.back());
        if (const Measurement* r = run.find("register")) set_latency("register", r->time.min / r->workload.param("ops"));
        if (const Measurement* sh = run.find("shared_chase")) d.set("shared.latency_s", sh->time.min / sh->workload.param("hops"));
        d.plots = {lp, bp};
        auto ws = [](double b) { return fixed(b < 1048576 ? "%.0f KiB" : "%.4g MiB", b / (b < 1048576 ? 1024 : 1048576)); };
        auto reported_kib = [&](int l) { const double r = double(pointer_chase::reported_cache(run.facts, l)); return r > 0 ? ws(r) : std::string("not reported"); };
        // Read bandwidth's shape, said as measured: the smallest set is often not the fastest (its
        // passes are too short to hide each one's start), so the graded ratio (smallest / largest, as
        // the syllabus asks) is not said to be a fall from the first point.
        std::string bw_shape = ".";   // the end of the ratio's line, then, when it peaks past the first, a line of its own
        std::string bw_peak;
        if (!bw.empty()) {
            const auto peak = std::max_element(bw.begin(), bw.end()) - bw.begin();
            const bool falls = std::is_sorted(bw.begin() + peak, bw.end(), std::greater<>());
            if (peak) bw_peak = "  It peaks at " + ws(bsize[peak]) + " (" + fixed("%.4g", bw[peak] / 1e9) + " GB/s), not at the smallest (too short to hide each pass's start)";
            bw_shape = !peak ? (falls ? "; it falls level by level." : "; it does not fall steadily (the table).") : ".";
            if (peak) bw_peak += falls ? ", then falls level by level." : "; then it does not fall steadily.";
        }
        d.teaching = {
            "Each hop of the chase waits for the load before it: time per hop is the latency of the level the cycle fits in.",
            "L1: {l1.latency_s} ({l1.latency_cycles} cycles at the measured clock); L2: {l2.latency_s} ({l2.latency_cycles} cycles);",
            "  DRAM: {dram.latency_s} ({dram.latency_cycles} cycles), {dram_over_l1} times L1.",
            pointer_chase::reported_cache(run.facts, 1) ? "Levels, from the chase column below: L1 its fastest point up to the reported L1 size (other work only adds time);"
                                                        : "Levels, from the chase column below: L1 its first plateau (the device reports no L1 size);",
            "  a plateau is points within 25% of its first; L2 the first plateau 1.3x L1's latency or more with a working set",
            "  between the reported L1 and L2 sizes; DRAM the points at or past 4x the LLC (their lower median).",
            std::string("Capacity: where the chase first reaches halfway (log scale: the geometric mean) to the next level's latency") +
                (cpu ? " (L2's: to L3's):" : " (L2's: to DRAM's):"),
            "  L1 {l1.capacity_bytes} (reported " + reported_kib(1) + "), L2 {l2.capacity_bytes} (reported " + reported_kib(2) +
                ", per core); kB are 1000 B, the table's KiB 1024 B.",
            "A register holds its value for the next add in {register.latency_cycles} cycles ({register.latency_s});",
            "  the L1-resident chase pays {l1.latency_cycles} cycles: even the nearest cache costs several registers' worth.",
            "Read bandwidth: {bandwidth_ratio} times more at the smallest working set than at the largest" + bw_shape,
            "Buffers are 2 MiB aligned and asked for huge pages (madvise MADV_HUGEPAGE); granted when",
            "  /sys/kernel/mm/transparent_hugepage/enabled says [always] or [madvise]. Without them, the DRAM latency",
            "  keeps climbing past the TLB's reach (each hop also walks the page table).",
        };
        auto after = [&](const char* start) {  // just past the teaching line that starts so
            return std::find_if(d.teaching.begin(), d.teaching.end(), [&](const std::string& t) { return t.rfind(start, 0) == 0; }) + 1;
        };
        if (!bw_peak.empty()) d.teaching.insert(after("Read bandwidth:"), bw_peak);
        if (run.device_kind == DeviceKind::cuda) {
            d.teaching.push_back("On a GPU, a chase in shared memory takes {shared.latency_s} per hop: between a register and L1.");
            const pointer_chase::ReadGrid g = pointer_chase::read_grid(run.facts);
            d.teaching.push_back("The read: a working set under " + ws(16.0 * g.split_from) + " (fewer 16 B elements than the grid's " +
                                 std::to_string(g.blocks * pointer_chase::kReadThreads) + " threads, or an SM's share at most twice its reported L1) is read whole by each of the " +
                                 std::to_string(g.blocks) + " blocks,");
            d.teaching.push_back("  and every block's bytes count: its bandwidth is all SMs' L1 (or L2) together; a larger set is split across the grid");
            d.teaching.push_back("  (split at a smaller size, each SM would re-read a share its L1 holds, and the curve would go back from L2 to L1).");
        }
        // Which levels were plateaus, and where a missing one was read instead (after the capacities).
        std::vector<std::string> found{std::string("{levels_found} levels were found: L1, DRAM and each level between that formed a plateau") +
                                       (lv.l2_plateau ? "." : "; L2 formed none, so it was read at half its reported size.")};
        if (run.device_kind == DeviceKind::cpu)
            found.insert(found.end(), {lv.l3_plateau ? "L3 is reported as {l3.reported_bytes}; its plateau: {l3.latency_s}, up to {l3.capacity_bytes}."
                                          : "L3 is reported as {l3.reported_bytes}; no L3 plateau was found, so it was read at twice the "
                                            "reported L2: {l3.latency_s}, up to {l3.capacity_bytes}.",
                                       "  A VM's guest may own only part of a shared L3 and its neighbours evict it: the latency then climbs",
                                       "  from a few MiB, not the reported size. L3 is not graded."});
        d.teaching.insert(after("  L1 {l1.capacity_bytes}"), found.begin(), found.end());
        // The numbers the levels are read from: each point's fastest sample, per hop and per byte.
        std::map<double, std::pair<double, double>> points;  // working set -> (s per hop, read B/s); 0: not measured
        for (std::size_t i = 0; i < size.size(); ++i) points[size[i]].first = lat[i];
        for (std::size_t i = 0; i < bsize.size(); ++i) points[bsize[i]].second = bw[i];
        d.teaching.push_back("Each point's fastest sample (the run table above shows medians), the numbers the levels are read from:");
        d.teaching.push_back("     working set    chase, ns per hop    read, GB/s");
        for (const auto& [b, p] : points)
            d.teaching.push_back(std::string(16 - std::min<std::size_t>(16, ws(b).size()), ' ') + ws(b) +
                                 (p.first > 0 ? fixed("%21.3f", p.first * 1e9) : std::string(21, ' ')) + (p.second > 0 ? fixed("%14.4g", p.second / 1e9) : ""));
    }
};

}  // namespace

LAB_LESSON(MemoryHierarchy, "02.03")
