// lab/pointer_chase.hpp: the cycle visits every line once before it returns, the same on every
// machine; following it lands where the order says; plateaus and capacities of a made-up curve.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <cstdint>
#include <set>
#include <vector>

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
    CHECK(ps[2].latency == 85);  // the upper median of two
    // L1 -> L2: halfway (log scale) is 2.05, just past 32 (latency 2.0) on the way to 64.
    const double c1 = pc::level_capacity(size, lat, ps[0], ps[1].latency);
    CHECK(c1 > 32);
    CHECK(c1 < 33);
    CHECK(pc::level_capacity(size, lat, ps[1], ps[2].latency) == Approx(256 * std::exp(std::log(512.0 / 256) * std::log(std::sqrt(4.2 * 85) / 4.4) / std::log(30 / 4.4))));
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
    CHECK(s->latency == 185);  // 165, 175, 185, 203: the upper median
    CHECK(pc::shelf_from(size, lat, 64)->latency == 175);
    CHECK_FALSE(pc::shelf_from(size, lat, 1000));  // one point: no shelf
    CHECK_FALSE(pc::shelf_from(size, lat, 2000));
    CHECK_FALSE(pc::shelf_from({1, 2}, {1}, 0));  // mismatched lengths
}
