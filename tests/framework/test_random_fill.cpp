// lab/random_fill.hpp: the pseudo-random GEMM operands lessons fill (tensor cores run faster on
// zeros): bounded, deterministic, different per seed, periodic as stated, rounded to nearest in
// each dtype, written over a whole buffer on the CPU device, and skipped while a plan replays.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "lab/random_fill.hpp"
#include "device_session.hpp"
#include "plugin_loader.hpp"
#include "test_support.hpp"

using namespace lab;
namespace rf = lab::random_fill;
namespace qz = lab::quantize;

namespace {

template <class T> std::vector<T> host_fill(std::size_t n, Dtype d, std::uint64_t seed, std::size_t first = 0) {
    std::vector<T> v(n);
    rf::fill_host(v.data(), first, n, d, seed);
    return v;
}

}  // namespace

TEST_CASE("a fill's floats lie in [-1, 1), differ per seed and element, and repeat after the period", "[random_fill]") {
    const std::size_t n = 4096;
    const auto a = host_fill<float>(n, Dtype::fp32, 1), b = host_fill<float>(n, Dtype::fp32, 2), again = host_fill<float>(n, Dtype::fp32, 1);
    CHECK(a == again);
    std::size_t same = 0, zeros = 0;
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        CHECK(a[i] >= -1.0f);
        CHECK(a[i] < 1.0f);
        same += a[i] == b[i], zeros += a[i] == 0, sum += a[i];
    }
    CHECK(same < 4);
    CHECK(zeros < 4);
    CHECK(std::set<float>(a.begin(), a.end()).size() > n - 8);  // 2^24 levels: few repeats among 4096
    CHECK(std::fabs(sum / n) < 0.05);                            // centred: mean 0, sd 1/sqrt(3) / 64 here
    // The period: element kPeriod + i is element i, so one period copied over a buffer is the fill.
    CHECK(host_fill<float>(n, Dtype::fp32, 1, rf::kPeriod) == a);
    CHECK(host_fill<float>(8, Dtype::fp32, 1, 100) == std::vector<float>(a.begin() + 100, a.begin() + 108));
    const auto d = host_fill<double>(n, Dtype::fp64, 1);
    for (double v : d) CHECK((v >= -1.0 && v < 1.0));
    CHECK(std::set<double>(d.begin(), d.end()).size() == n);
}

TEST_CASE("narrow dtypes hold the fill's floats rounded to nearest", "[random_fill]") {
    const std::size_t n = 2048;
    const auto f = host_fill<float>(n, Dtype::fp32, 7);
    const auto t = host_fill<float>(n, Dtype::tf32, 7);  // stored as fp32: the tensor core rounds
    CHECK(t == f);
    const auto h = host_fill<std::uint16_t>(n, Dtype::fp16, 7), b = host_fill<std::uint16_t>(n, Dtype::bf16, 7);
    const auto e = host_fill<std::uint8_t>(n, Dtype::fp8_e4m3, 7);
    const auto i8 = host_fill<std::int8_t>(n, Dtype::int8, 7);
    std::set<int> bytes;
    for (std::size_t i = 0; i < n; ++i) {
        INFO(i << ": " << f[i]);
        CHECK(h[i] == qz::half_bits(f[i]));
        CHECK(std::fabs(qz::half_value(h[i]) - f[i]) <= 0x1p-11f);     // half's rounding below 1
        CHECK(std::fabs(qz::bf16_value(b[i]) - f[i]) <= 0x1p-8f);      // bf16's: 8 significant bits
        CHECK(std::fabs(qz::e4m3_value(e[i]) - f[i]) <= 0x1p-4 + 1e-9);  // e4m3's: 4 significant bits
        CHECK(e[i] != 0x7F);
        CHECK(e[i] != 0xFF);  // never NaN
        bytes.insert(i8[i]);
    }
    CHECK(bytes.size() > 200);  // int8 spans its range
}

TEST_CASE("e4m3 rounds a value halfway between two codes to the even code, as the hardware does", "[random_fill]") {
    CHECK(qz::e4m3_value(0x38) == 1.0);
    CHECK(qz::e4m3_value(0x39) == 1.125);
    CHECK(qz::e4m3_code(1.0625) == 0x38);   // between 0x38 and 0x39: to 0x38
    CHECK(qz::e4m3_code(1.1875) == 0x3A);   // between 0x39 and 0x3A: to 0x3A
    CHECK(qz::e4m3_code(-1.1875) == 0xBA);
    CHECK(qz::e4m3_code(1.07) == 0x39);     // not a tie: nearest
}

TEST_CASE("fill_random writes the fill over a whole CPU buffer and does nothing while the plan replays", "[random_fill]") {
    LoadedBackend backend = load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<Device> dev = backend.backend->open({});
    // More than two periods and a partial third: every piece copied, the tail too.
    const std::size_t elements = 2 * rf::kPeriod + 1000;
    BufferPtr buf = dev->allocate(elements * 2);
    lab_test::DeviceSession running(*dev, false);
    fill_random(running, *buf, Dtype::bf16, 5);
    const auto period = host_fill<std::uint16_t>(rf::kPeriod, Dtype::bf16, 5);
    const auto* got = buf->as<std::uint16_t>();
    CHECK(std::memcmp(got, period.data(), period.size() * 2) == 0);
    CHECK(std::memcmp(got + rf::kPeriod, period.data(), period.size() * 2) == 0);
    CHECK(std::memcmp(got + 2 * rf::kPeriod, period.data(), 1000 * 2) == 0);

    BufferPtr untouched = dev->allocate(4096 * 4);
    lab_test::DeviceSession replaying(*dev, true);
    fill_random(replaying, *untouched, Dtype::fp32, 5);
    for (std::size_t i = 0; i < 4096; ++i) REQUIRE(untouched->as<float>()[i] == 0.0f);

    BufferPtr packed = dev->allocate(64);
    CHECK_THROWS_WITH(fill_random(running, *packed, Dtype::nvfp4, 1), Catch::Contains("no random fill for nvfp4"));
}
