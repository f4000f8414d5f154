// lab/pointer_chase.hpp: the cycle visits every line once before it returns, the same on every
// machine; following it lands where the order says; plateaus and capacities of a made-up curve.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <cstdint>
#include <set>
#include <vector>

#include "lab/cpu_pointer_chase.hpp"
#include "lab/pointer_chase.hpp"

namespace pc = lab::pointer_chase;

TEST_CASE("a chase cycle goes through every line once, from line 0, the same for a seed", "[pointer_chase]") {
    for (std::size_t lines : {1u, 2u, 3u, 64u, 1000u}) {
        const auto order = pc::cycle_order(lines, 42);
        REQUIRE(order.size() == lines);
        CHECK(order.front() == 0);
        CHECK(std::set<std::uint32_t>(order.begin(), order.end()).size() == lines);
        CHECK(order == pc::cycle_order(lines, 42));
    }
    CHECK(pc::cycle_order(1000, 1) != pc::cycle_order(1000, 2));
}

TEST_CASE("following the written cycle visits the lines in order and comes back", "[pointer_chase]") {
    const std::size_t lines = 257, stride = 64;
    std::vector<std::uint64_t> buf(lines * stride / 8);
    const auto base = reinterpret_cast<std::uintptr_t>(buf.data());
    pc::write_cycle(buf.data(), base, lines, stride, 7);
    const auto order = pc::cycle_order(lines, 7);
    const void* p = buf.data();
    for (std::size_t k = 1; k < lines; ++k) {
        p = pc::follow(p, 1);
        CHECK(reinterpret_cast<std::uintptr_t>(p) == base + order[k] * stride);
    }
    CHECK(pc::follow(p, 1) == buf.data());
    CHECK(pc::follow(buf.data(), static_cast<std::int64_t>(lines) * 3) == buf.data());
}

TEST_CASE("plateaus and capacities of a latency curve", "[pointer_chase]") {
    //                        4K   8K   16K  32K  64K  128K 256K 512K  1M   2M
    const std::vector<double> size{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
    const std::vector<double> lat{1.0, 1.1, 1.0, 2.0, 4.0, 4.2, 4.4, 30, 80, 85};
    const auto ps = pc::plateaus(lat, 0.25);
    REQUIRE(ps.size() == 3);
    CHECK(ps[0].first == 0);
    CHECK(ps[0].last == 2);
    CHECK(ps[0].latency == 1.0);
    CHECK(ps[1].first == 4);
    CHECK(ps[1].last == 6);
    CHECK(ps[1].latency == 4.2);
    CHECK(ps[2].first == 8);
    CHECK(ps[2].latency == 80);  // the lower median of two: noise only adds time
    // L1 -> L2: halfway (log scale) is 2.05, just past 32 (latency 2.0) on the way to 64.
    const double c1 = pc::level_capacity(size, lat, ps[0], ps[1].latency);
    CHECK(c1 > 32);
    CHECK(c1 < 33);
    CHECK(pc::level_capacity(size, lat, ps[1], ps[2].latency) == Approx(256 * std::exp(std::log(512.0 / 256) * std::log(std::sqrt(4.2 * 80) / 4.4) / std::log(30 / 4.4))));
    CHECK(pc::level_capacity(size, lat, ps[2], 1000) == 2048);  // never leaves the last plateau
    CHECK(pc::plateaus({1, 2, 4, 8}, 0.25).empty());
    // A slow climb: 100, 120 | 130, 140, 150 split at 130 > 1.25 x 100, then merged (their
    // latencies, 120 and 140, are within 25%): one plateau, the median of all five.
    const auto climb = pc::plateaus({1, 1, 100, 120, 130, 140, 150}, 0.25);
    REQUIRE(climb.size() == 2);
    CHECK(climb[1].first == 2);
    CHECK(climb[1].last == 6);
    CHECK(climb[1].latency == 130);
}

namespace {

// Host memory standing in for device and pinned buffers.
class HostBuffer : public lab::Buffer {
public:
    explicit HostBuffer(std::size_t bytes) : bytes_(bytes) {}
    void* data() override { return bytes_store_.data(); }
    std::size_t bytes() const override { return bytes_; }

private:
    std::size_t bytes_;
    std::vector<std::uint64_t> bytes_store_ = std::vector<std::uint64_t>((bytes_ + 7) / 8);
};

// A stream whose copies read their source late, when it is synchronised: as a GPU's copy engine
// does with a cudaMemcpyAsync from pinned memory, some microseconds after the call returned.
class LateCopyStream : public lab::Stream {
public:
    void launch(lab::HostKernel) override {}
    void record(lab::Event&) override {}
    void synchronize() override {
        for (auto& c : pending) std::memcpy(c.dst, c.src, c.bytes);
        pending.clear();
    }
    void* native_handle() override { return nullptr; }
    struct Copy {
        void* dst;
        const void* src;
        std::size_t bytes;
    };
    std::vector<Copy> pending;
};

class LateCopyDevice : public lab::Device {
public:
    lab::DeviceKind kind() const override { return lab::DeviceKind::cuda; }
    const lab::DeviceFacts& facts() const override { return facts_; }
    lab::Stream& stream() override { return stream_; }
    int threads() const override { return 1; }
    lab::BufferPtr allocate(std::size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }
    void copy(lab::Stream& s, void* dst, const void* src, std::size_t bytes) override {
        static_cast<LateCopyStream&>(s).pending.push_back({dst, src, bytes});
    }
    lab::EventPtr create_event() override { return nullptr; }
    void flush_caches(lab::Stream&) override {}
    bool supports(lab::Dtype) const override { return false; }
    void gemm(lab::Stream&, const lab::Gemm&) override {}

    LateCopyStream stream_;
    lab::DeviceFacts facts_;
};

}  // namespace

TEST_CASE("a cycle placed through a staging buffer survives copies that read it late", "[pointer_chase]") {
    // The cursor was written into the staging buffer's first bytes while the cycle's copy from it
    // was still queued: line 0 then pointed at itself, and every GPU chase timed an L1 hit.
    LateCopyDevice dev;
    const std::size_t lines = 64, stride = 64;
    auto buf = dev.allocate(lines * stride), cursor = dev.allocate(64), staging = dev.allocate(lines * stride);
    pc::place_cycle(dev, *buf, *cursor, staging.get(), lines, stride, 5);
    CHECK(dev.stream_.pending.empty());
    const void* start = *static_cast<const void* const*>(cursor->data());
    CHECK(start == buf->data());
    // From the cursor, the chase visits every line once and comes back, as the order says.
    const auto order = pc::cycle_order(lines, 5);
    const void* p = start;
    for (std::size_t k = 1; k <= lines; ++k) {
        p = pc::follow(p, 1);
        CHECK(p == static_cast<const unsigned char*>(buf->data()) + order[k % lines] * stride);
    }
    // Without staging (a CPU), the cycle is written in place and nothing is copied.
    auto in_place = dev.allocate(lines * stride), cursor2 = dev.allocate(64);
    pc::place_cycle(dev, *in_place, *cursor2, nullptr, lines, stride, 5);
    CHECK(dev.stream_.pending.empty());
    CHECK(pc::follow(*static_cast<const void* const*>(cursor2->data()), lines) == in_place->data());
}

TEST_CASE("a shelf from a working set on is its points' median, however its latency climbs there", "[pointer_chase]") {
    // A walkthrough's CPU run past 4x its 32 MiB L3: 165 ns rising to 203 ns at 1 GiB (page walks).
    const std::vector<double> size = {64, 128, 256, 512, 1024}, lat = {160, 165, 175, 185, 203};
    const auto s = pc::shelf_from(size, lat, 128);
    REQUIRE(s);
    CHECK(s->first == 1);
    CHECK(s->last == 4);
    CHECK(s->latency == 175);  // 165, 175, 185, 203: the lower median (TLB misses and noise only add time)
    CHECK(pc::shelf_from(size, lat, 64)->latency == 175);
    CHECK_FALSE(pc::shelf_from(size, lat, 1000));  // one point: no shelf
    CHECK_FALSE(pc::shelf_from(size, lat, 2000));
    CHECK_FALSE(pc::shelf_from({1, 2}, {1}, 0));  // mismatched lengths
    // A --quick run has two points there: the lower, not the one TLB misses or noise slowed.
    CHECK(pc::shelf_from({128, 256}, {198, 448}, 128)->latency == 198);
}

namespace {

// A curve on working sets of 4 KiB, 8 KiB, ... doubling (bytes).
std::vector<double> doubling_sizes(std::size_t n) {
    std::vector<double> s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(4096.0 * double(std::size_t{1} << i));
    return s;
}

}  // namespace

TEST_CASE("levels of a Zen 4 VM's curve: L2 a 1.7x step over L1, not the 2x the L3 makes", "[pointer_chase]") {
    // 02.03's recorded fixture (fastest ns per hop, 4 KiB to 256 MiB): L1 32 KiB, L2 1 MiB, a VM's
    // part of a 32 MiB L3 (it leaves at 8 MiB). A 2x step over L1 took the L3's plateau as L2.
    const std::vector<double> lat{2.79, 4.01, 3.71, 3.65, 6.01, 7.12, 6.23, 7.75, 10.5, 15.9, 17.5, 113, 145, 158, 167, 174, 178};
    const auto size = doubling_sizes(lat.size());
    const pc::ReportedCaches r{.l1 = 32768, .l2 = 1048576, .l3 = 33554432, .llc = 33554432};
    const pc::Levels lv = pc::find_levels(size, lat, r, true);
    // L1: the fastest of the points up to the reported 32 KiB (the 4 KiB one; the 3.7-4.0 ns the
    // plateau rule took were slowed), its range every one of them (all below halfway to L2).
    CHECK(lv.l1.first == 0);
    CHECK(lv.l1.last == 3);
    CHECK(lv.l1.latency == 2.79);
    CHECK(lv.l2_plateau);
    CHECK(lv.l2.first == 4);  // 64 KiB
    CHECK(lv.l2.last == 6);   // 256 KiB
    CHECK(lv.l2.latency == 6.23);
    CHECK(lv.l3_plateau);
    CHECK(lv.l3.first == 9);  // 2 MiB
    CHECK(lv.l3.latency == 15.9);
    CHECK(lv.dram.first == 15);  // 128 MiB, past 4x the LLC
    CHECK(lv.dram.latency == 174);
    // L2's capacity: where the curve first reaches sqrt(6.23 x 15.9) = 9.95 ns, between 512 KiB and 1 MiB.
    const double cap = pc::level_capacity(size, lat, lv.l2, lv.l3.latency);
    CHECK(cap > 512 * 1024.0);
    CHECK(cap < 1024 * 1024.0);
    // Without reported sizes, L1 is the first plateau, and the first plateau a clear step above it is still L2.
    const pc::Levels unreported = pc::find_levels(size, lat, {}, true);
    CHECK(unreported.l1.first == 1);
    CHECK(unreported.l1.latency == 3.71);
    CHECK(unreported.l2.latency == 6.23);
}

TEST_CASE("levels of a busy machine's curve: L1 is the fastest point within the reported L1, though its points form no plateau", "[pointer_chase]") {
    // A full run beside other work (sqrt(2) steps, 4 KiB on): the L1 points alternate 1.2/1.9 ns,
    // so the first plateau was the L2's, and a plateau rule read L1 there (a quick run read 221 ns).
    const std::vector<double> size{4096, 6144, 8192, 11264, 16384, 23552, 32768, 46080, 65536, 92160, 131072, 184320, 262144, 368640, 524288,
                                   737280, 1048576, 1474560, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864, 134217728, 268435456};
    const std::vector<double> lat{1.3, 1.9, 1.2, 1.9, 1.2, 1.9, 1.25, 3.9, 4.0, 4.1, 4.0, 4.2, 4.1, 4.3, 4.4,
                                  6.0, 9.0, 14, 15, 15.5, 16, 60, 90, 95, 100, 110};
    const pc::ReportedCaches r{.l1 = 32768, .l2 = 524288, .l3 = 8388608, .llc = 8388608};
    REQUIRE(pc::plateaus(std::vector<double>(lat.begin(), lat.begin() + 7), 0.25).empty());  // no plateau among them
    const pc::Levels lv = pc::find_levels(size, lat, r, true);
    CHECK(lv.l1.latency == 1.2);
    CHECK(lv.l1.first == 0);
    CHECK(lv.l1.last == 6);  // 32 KiB: every one of them below sqrt(1.2 x 4.1) = 2.2 ns
    CHECK(lv.l2_plateau);
    CHECK(size[lv.l2.first] == 46080);
    CHECK(lv.l2.latency == 4.1);
    CHECK(lv.l3_plateau);
    CHECK(lv.l3.latency == 15);
    const double cap = pc::level_capacity(size, lat, lv.l1, lv.l2.latency);
    CHECK(cap > 32768);
    CHECK(cap < 46080);
    // The same on a GPU whose L1 holds less than it reports (the shared/L1 split): the points past
    // it read L2's latency, so L1's range ends before them and its capacity is found where it falls.
    const std::vector<double> gsize{4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608,
                                    16777216, 33554432, 67108864, 134217728, 268435456, 536870912};
    const std::vector<double> glat{20e-9, 22e-9, 20e-9, 21e-9, 130e-9, 135e-9, 140e-9, 138e-9, 142e-9, 140e-9, 145e-9, 150e-9,
                                   148e-9, 152e-9, 300e-9, 420e-9, 440e-9, 450e-9};
    const pc::Levels g = pc::find_levels(gsize, glat, {.l1 = 233472, .l2 = 52428800, .llc = 52428800}, lab::DeviceKind::cuda);
    CHECK(g.l1.latency == 20e-9);
    CHECK(g.l1.last == 3);  // 32 KiB; 64-128 KiB read L2's 130 ns, though within the 228 KiB reported
    CHECK(g.l2_plateau);
    CHECK(g.l2.latency > 100e-9);
    const double gcap = pc::level_capacity(gsize, glat, g.l1, g.l2.latency);
    CHECK(gcap > 32768);
    CHECK(gcap < 65536);
}

TEST_CASE("levels of a clean curve rise in latency and capacity", "[pointer_chase]") {
    // L1 32 KiB at 1 ns, L2 512 KiB at 4 ns, L3 8 MiB at 15 ns, DRAM 90 ns.
    const std::vector<double> lat{1, 1, 1, 1, 4, 4, 4, 4, 15, 15, 15, 15, 90, 90, 90, 90};
    const auto size = doubling_sizes(lat.size());
    const pc::Levels lv = pc::find_levels(size, lat, {.l1 = 32768, .l2 = 524288, .l3 = 8388608, .llc = 8388608}, true);
    CHECK(lv.l2_plateau);
    CHECK(lv.l3_plateau);
    CHECK(lv.l1.latency == 1);
    CHECK(lv.l2.latency == 4);
    CHECK(lv.l3.latency == 15);
    CHECK(lv.dram.latency == 90);
    CHECK(lv.l1.last < lv.l2.first);
    CHECK(lv.l2.last < lv.l3.first);
    const double c1 = pc::level_capacity(size, lat, lv.l1, lv.l2.latency), c2 = pc::level_capacity(size, lat, lv.l2, lv.l3.latency);
    CHECK(c1 > 32768);
    CHECK(c1 < 65536);
    CHECK(c2 > 524288);
    CHECK(c2 < 1048576);
    // A GPU's curve (no L3): L2 then DRAM.
    CHECK_FALSE(pc::find_levels(size, lat, {.l2 = 524288, .llc = 524288}, false).l3_plateau);
}

TEST_CASE("levels of a noisy curve: a bump inside L1 and a slow DRAM point are not levels", "[pointer_chase]") {
    //                         4K   8K   16K  32K  64K  128K 256K 512K 1M 2M  4M  8M  16M 32M 64M 128M 256M
    const std::vector<double> lat{1.0, 1.05, 2.1, 2.2, 4.0, 4.6, 4.3, 6.0, 9, 14, 15, 16, 60, 90, 95, 100, 180};
    const auto size = doubling_sizes(lat.size());
    const pc::ReportedCaches r{.l1 = 32768, .l2 = 524288, .l3 = 8388608, .llc = 8388608};
    const pc::Levels lv = pc::find_levels(size, lat, r, true);
    CHECK(lv.l1.latency == 1.0);
    // 16-32 KiB (2.1 ns) is a plateau 2x L1's, but all inside the reported L1: not L2.
    CHECK(lv.l2_plateau);
    CHECK(lv.l2.first == 4);
    CHECK(lv.l2.latency == 4.3);
    CHECK(lv.l3.first == 9);
    CHECK(lv.l3.latency == 15);
    CHECK(lv.dram.latency == 95);  // 90, 95, 100, 180: the lower median
    // L2 without a plateau (its points alternate): read at half its reported size, and L3 still found above it.
    std::vector<double> jumpy = lat;
    jumpy[4] = 3.0, jumpy[5] = 4.5, jumpy[6] = 3.0, jumpy[7] = 4.5;
    const pc::Levels j = pc::find_levels(size, jumpy, r, true);
    CHECK_FALSE(j.l2_plateau);
    CHECK(j.l2.first == 6);  // 256 KiB
    CHECK(j.l3_plateau);
    CHECK(j.l3.latency == 15);
}

TEST_CASE("the CPU register chain counts every add once, remainder included", "[pointer_chase]") {
    // A stream that runs the kernel on one thread, and a device that keeps its last buffer (the
    // kernels' sink, where the chain leaves its sum).
    struct RunStream : LateCopyStream {
        void launch(lab::HostKernel k) override { k(0, 1); }
    };
    struct RunDevice : LateCopyDevice {
        RunStream run;
        lab::Buffer* last = nullptr;
        lab::BufferPtr allocate(std::size_t bytes) override {
            auto b = std::make_unique<HostBuffer>(bytes);
            last = b.get();
            return b;
        }
    } dev;
    lab::cpu::ChaseKernelsCpu k(dev);
    auto* sink = static_cast<std::uint64_t*>(dev.last->data());
    sink[1] = 0, sink[2] = 6;  // adds 6 | 1 = 7 each
    k.register_chain(100)(dev.run);  // 3 blocks of 32 and 4 more
    CHECK(sink[1] == 700);
    k.register_chain(64)(dev.run);
    CHECK(sink[1] == 700 + 64 * 7);
}

namespace {

// An H200-like chase curve (cycles per hop at 1.98 GHz; only ratios matter to find_levels): L1
// hits at `l1` up to `l1_bytes`, L2 at `l2` up to 50 MiB, HBM at `hbm` beyond. Past a level's
// capacity a cycle still hits it now and then, a share falling as (capacity / working set)^3 (a
// cycle larger than a near-LRU cache mostly misses), so each step is a ramp over about one
// doubling; each point then carries up to +-`noise` (multiplicative, from a fixed seed).
std::vector<double> h200_curve(const std::vector<double>& size, double l1, double l1_bytes, double l2, double hbm, std::uint64_t seed,
                               double noise = 0.06) {
    const double l2_bytes = 50.0 * 1048576;
    std::vector<double> lat;
    for (double s : size) {
        const double h1 = std::pow(std::min(1.0, l1_bytes / s), 3), h2 = std::pow(std::min(1.0, l2_bytes / s), 3);
        const double beyond_l1 = h2 * l2 + (1 - h2) * hbm;
        const double u = double(pc::next_random(seed) >> 11) / double(1ull << 53);  // [0, 1)
        lat.push_back((h1 * l1 + (1 - h1) * beyond_l1) * (1 + noise * (2 * u - 1)));
    }
    return lat;
}

// 02.03's GPU sweeps: 4 KiB to 256 MiB (the power of two past 4x a 50 MiB L2), by 2 (--quick)
// or by sqrt(2) rounded to whole KiB.
std::vector<double> gpu_sweep(bool quick) {
    std::vector<double> s;
    for (double b = 4096; b <= 256.0 * 1048576 * 1.0001; b *= quick ? 2 : std::sqrt(2.0)) s.push_back(std::round(b / 1024) * 1024);
    return s;
}

}  // namespace

TEST_CASE("levels of H200-like curves: L2 a plateau 2-3.5x below HBM, found on a GPU's rule", "[pointer_chase]") {
    // The L1/shared array holds 256 KiB (228 KiB of it can be shared memory, as the SM reports):
    // L1 ends near there. L2 hits cost 200-300 cycles, HBM 480-700: a quarter of DRAM's latency
    // (the CPU's rule) is below every L2 here, and L2 came out no plateau in 8 of 9 such curves.
    struct Case {
        double l1, l1_bytes, l2, hbm;
    };
    const Case cases[] = {{33, 256 * 1024.0, 260, 600}, {30, 240 * 1024.0, 200, 480}, {38, 228 * 1024.0, 300, 700},
                          {33, 256 * 1024.0, 220, 650}, {35, 200 * 1024.0, 280, 560}, {32, 256 * 1024.0, 240, 520},
                          {33, 228 * 1024.0, 260, 700}, {36, 256 * 1024.0, 300, 600}, {31, 240 * 1024.0, 210, 560}};
    const pc::ReportedCaches r{.l1 = 228 * 1024.0, .l2 = 50 * 1048576.0, .llc = 50 * 1048576.0};
    int n = 0;
    for (bool quick : {true, false}) {
        const std::vector<double> size = gpu_sweep(quick);
        for (const Case& c : cases)
            for (std::uint64_t seed : {1u, 2u, 3u}) {
                const auto lat = h200_curve(size, c.l1, c.l1_bytes, c.l2, c.hbm, seed + 100 * std::uint64_t(n));
                INFO("case " << n << " (quick " << quick << ", L1 " << c.l1 << ", L2 " << c.l2 << ", HBM " << c.hbm << ", seed " << seed << ")");
                const pc::Levels lv = pc::find_levels(size, lat, r, lab::DeviceKind::cuda);
                CHECK(lv.l2_plateau);  // levels_found = 3: L1, L2, DRAM
                CHECK_FALSE(lv.l3_plateau);
                CHECK(lv.l1.first == 0);
                CHECK(lv.l1.latency == Approx(c.l1).epsilon(0.1));
                CHECK(lv.l2.latency == Approx(c.l2).epsilon(0.15));
                CHECK(lv.l2.first > lv.l1.last);
                CHECK(lv.dram.latency >= pc::kLevelStep * lv.l2.latency);
                // L2's capacity, read from the plateau's end (not at one point): about the 50 MiB
                // L2 (the geometric mean is reached on the ramp past it).
                const double cap = pc::level_capacity(size, lat, lv.l2, lv.dram.latency);
                CHECK(cap > 32 * 1048576.0);
                CHECK(cap < 128 * 1048576.0);
                // The CPU's rule (L2 at most a quarter of DRAM) finds no L2 plateau on these curves.
                CHECK_FALSE(pc::find_levels(size, lat, r, lab::DeviceKind::cpu).l2_plateau);
                ++n;
            }
    }
    CHECK(n == 54);
}

TEST_CASE("find_levels' old switch is the device kind: with_l3 a CPU's rule, without it a GPU's", "[pointer_chase]") {
    const std::vector<double> size = gpu_sweep(true);
    const auto lat = h200_curve(size, 33, 256 * 1024.0, 260, 600, 7);
    const pc::ReportedCaches r{.l1 = 228 * 1024.0, .l2 = 50 * 1048576.0, .llc = 50 * 1048576.0};
    CHECK(pc::find_levels(size, lat, r, false).l2.latency == pc::find_levels(size, lat, r, lab::DeviceKind::cuda).l2.latency);
    CHECK(pc::find_levels(size, lat, r, false).l2_plateau);
    CHECK_FALSE(pc::find_levels(size, lat, r, true).l2_plateau);
    CHECK(pc::dram_gap(lab::DeviceKind::cpu) == 4);
    CHECK(pc::dram_gap(lab::DeviceKind::cuda) == pc::kLevelStep);
}

namespace {

// Every thread of a grid of g.blocks x kReadThreads walks its share as the GPU read kernel does
// (read_walk, walk_reads): how often each element of a set of n4 is loaded, `reps` passes.
std::vector<std::uint32_t> loads_per_element(std::size_t n4, const pc::ReadGrid& g, long long reps) {
    std::vector<std::uint32_t> hits(n4);
    const unsigned threads = pc::kReadThreads;
    for (unsigned b = 0; b < unsigned(g.blocks); ++b)
        for (unsigned t = 0; t < threads; ++t)
            pc::walk_reads(pc::read_walk(n4, g.split_from, unsigned(g.blocks), threads, b, t), reps, [&](std::size_t i) { return ++hits.at(i), 1; },
                           [](int) {});
    return hits;
}
// The loads every thread of the grid issues over one rep of a set of n4 elements.
std::uint64_t loads_per_rep(std::size_t n4, const pc::ReadGrid& g) {
    std::uint64_t loads = 0;
    for (unsigned b = 0; b < unsigned(g.blocks); ++b)
        for (unsigned t = 0; t < unsigned(pc::kReadThreads); ++t)
            loads += pc::read_loads(pc::read_walk(n4, g.split_from, unsigned(g.blocks), pc::kReadThreads, b, t));
    return loads;
}
// A GPU's facts as the CUDA backend states them: L1 per SM (its most shared memory) and an L2
// shared by every SM.
lab::DeviceFacts gpu_facts(int sms, std::uint64_t l1, std::uint64_t l2) {
    lab::DeviceFacts f;
    f.compute_units = sms;
    f.caches = {{1, "Data", l1, 1}, {2, "Unified", l2, sms}};
    return f;
}

}  // namespace

TEST_CASE("a GPU read states exactly the bytes its kernel loads, for every set size", "[pointer_chase]") {
    // On a small grid, every element is loaded reps x read_passes times: the whole set per block
    // below where the grid splits it (the grid's threads, or further on where the L1 rule says), a
    // share of it from there; the sizes around the switch, odd ones, and remainders of the
    // four-at-a-time loop included.
    for (int blocks : {1, 3, 8}) {
        const std::size_t grid = std::size_t(blocks) * pc::kReadThreads;
        for (std::size_t split_from : {grid, 2 * grid + 12, 3 * grid})
            for (std::size_t n4 : {std::size_t{4}, std::size_t{256}, std::size_t{260}, grid - 4, grid, grid + 4, 2 * grid + 12, 3 * grid - 4, 3 * grid,
                                   7 * grid + 256})
                for (long long reps : {1, 2, 3, 5}) {
                    INFO(blocks << " blocks, split from " << split_from << ", " << n4 << " elements, " << reps << " reps");
                    const pc::ReadGrid g{blocks, split_from};
                    const auto hits = loads_per_element(n4, g, reps);
                    const std::int64_t passes = pc::read_passes(n4, g);
                    CHECK(passes == (n4 < split_from ? blocks : 1));
                    CHECK(std::all_of(hits.begin(), hits.end(), [&](std::uint32_t h) { return h == reps * passes; }));
                }
    }
    // The lesson's sets on H200 (132 SMs) and H100 PCIe (114): 4 KiB to 256 MiB, by 2 and by
    // sqrt(2) in whole KiB. The threads' loads add up to reps x set x passes: a 4 KiB set is
    // every one of the 528 blocks' (256 elements, one per thread), 256 MiB one pass over the grid.
    for (int sms : {132, 114}) {
        const pc::ReadGrid g = pc::read_grid(gpu_facts(sms, 228 << 10, 50 << 20));
        CHECK(g.blocks == 4 * sms);
        for (bool quick : {true, false})
            for (double bytes : gpu_sweep(quick)) {
                const std::size_t n4 = std::size_t(bytes) / 16;
                INFO(sms << " SMs, " << bytes << " B");
                REQUIRE(std::size_t(bytes) % 64 == 0);  // n, the floats, a multiple of 16 as ChaseKernels::read asks
                CHECK(16.0 * double(loads_per_rep(n4, g)) == bytes * double(pc::read_passes(n4, g)));
            }
        CHECK(pc::read_passes(4096 / 16, g) == g.blocks);
        CHECK(pc::read_passes((std::size_t{256} << 20) / 16, g) == 1);
    }
    // A thread's loads, four at a time and the rest one by one, are reps x its share, in order around it.
    const pc::ReadWalk w{3, 8, 45};  // elements 3, 11, 19, 27, 35, 43
    CHECK(pc::read_loads(w) == 6);
    std::vector<std::size_t> seen;
    pc::walk_reads(w, 3, [&](std::size_t i) { return seen.push_back(i), 0; }, [](int) {});
    const std::vector<std::size_t> share{3, 11, 19, 27, 35, 43};
    REQUIRE(seen.size() == 18);
    for (std::size_t k = 0; k < seen.size(); ++k) CHECK(seen[k] == share[k % 6]);
    CHECK(pc::read_loads(pc::ReadWalk{50, 8, 45}) == 0);  // a thread past the set loads nothing
}

TEST_CASE("02.03's GPU read sweep meets each level once: read whole per block until an SM's share is over twice its L1", "[pointer_chase]") {
    // Split from the grid's threads alone (~2 MiB on 132 SMs), each SM re-read its share of a
    // 2-30 MiB set, which its L1 held: the curve read L1 -> L2 -> L1 -> L2 -> HBM.
    const std::uint64_t l1 = 228 << 10, l2 = 50 << 20;
    const std::vector<std::string> outward{"l1", "l2", "l3", "cache", "dram"};  // the levels, nearest first
    for (int sms : {132, 114}) {
        LateCopyDevice dev;  // a GPU with an H200's (H100's) facts
        dev.facts_ = gpu_facts(sms, l1, l2);
        const pc::ReadGrid g = pc::read_grid(dev.facts_);
        for (bool quick : {true, false}) {
            int whole = 0, split = 0;
            std::size_t reached = 0;  // the farthest level so far (an index into outward)
            for (double bytes : gpu_sweep(quick)) {
                const std::size_t n4 = std::size_t(bytes) / 16;
                const std::int64_t reps = 3;
                INFO(sms << " SMs, " << bytes << " B, quick " << quick);
                const lab::Workload w = pc::read_workload(dev, "read", std::size_t(bytes), reps, 0.1);
                const bool is_whole = pc::read_whole_per_block(n4, g.split_from);
                // Whole per block up to twice the SMs' L1s together; split, one SM's share is over twice its L1.
                CHECK(is_whole == (bytes <= 2.0 * sms * double(l1)));
                if (!is_whole) CHECK(bytes / sms > 2.0 * double(l1));
                whole += is_whole, split += !is_whole;
                // The bytes stated are the loads the walk issues.
                CHECK(w.param("passes") == double(pc::read_passes(n4, g)));
                CHECK(w.bytes == 16.0 * double(loads_per_rep(n4, g)) * reps);
                CHECK(pc::read_bytes_stated(w, lab::DeviceKind::cuda));
                // The levels never come back nearer.
                const auto at = std::find(outward.begin(), outward.end(), w.level);
                REQUIRE(at != outward.end());
                CHECK(std::size_t(at - outward.begin()) >= reached);
                reached = std::max(reached, std::size_t(at - outward.begin()));
                if (is_whole) CHECK_THAT(w.description, Catch::Contains("every block reads all of it") && Catch::Contains("twice its L1"));
            }
            CHECK(whole > 0);
            CHECK(split > 0);
            CHECK(reached == outward.size() - 1);  // out to DRAM
        }
    }
    // The split's edge, exactly: the fewest elements whose set is over twice the SMs' L1s together.
    const std::size_t from = pc::read_split_from(1, 3, 10000);
    CHECK(from > std::size_t(pc::kReadThreads));  // the L1 rule's edge, not the threads'
    CHECK(16 * (from - 1) <= 2 * 3 * 10000);
    CHECK(16 * from > 2 * 3 * 10000);
    // The grid's threads still hold a set whole where the L1 rule alone would split it; without a
    // reported L1, they alone decide.
    CHECK(pc::read_split_from(8, 1, 1024) == 8 * std::size_t(pc::kReadThreads));
    lab::DeviceFacts no_l1 = gpu_facts(132, l1, l2);
    no_l1.caches.erase(no_l1.caches.begin());
    CHECK(pc::read_grid(no_l1).split_from == std::size_t(pc::read_blocks(132)) * pc::kReadThreads);
}
