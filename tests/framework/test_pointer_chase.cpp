// lab/pointer_chase.hpp: the cycle visits every line once before it returns, the same on every
// machine; following it lands where the order says; plateaus and capacities of a made-up curve.
#include <catch2/catch.hpp>

#include <cmath>
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
