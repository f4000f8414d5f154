// The CPU device, loaded as the host loads it: facts, stream ordering, buffers, GEMM results,
// and the robust facts of measurement (counts exact; a copy is memory bound; an FMA kernel with
// enough independent chains is compute bound). No speed is asserted.
#include <catch2/catch.hpp>

#include <chrono>

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "lab/cpu_kernels.hpp"
#include "measure_engine.hpp"
#include "plugin_loader.hpp"
#include "test_support.hpp"

using namespace lab;
using namespace lab::cpu;

namespace {

struct Fixture {
    LoadedBackend backend = load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<Device> device = backend.backend->open({});
};

Fixture& fixture() {
    static Fixture f;  // one team for all tests: threads are pinned and reused
    return f;
}

Simd simd_of(const Device& d) {
    return d.facts().simd == "avx512" ? Simd::avx512 : d.facts().simd == "avx2" ? Simd::avx2 : Simd::scalar;
}

}  // namespace

TEST_CASE("the CPU backend reads the machine's facts", "[cpu]") {
    Device& d = *fixture().device;
    const DeviceFacts& f = d.facts();
    CHECK(d.kind() == DeviceKind::cpu);
    CHECK_FALSE(f.name.empty());
    CHECK(f.threads == d.threads());
    CHECK(f.compute_units >= 1);
    CHECK(f.memory_bytes > (1ull << 28));
    CHECK(f.last_level_cache_bytes() > 0);
    CHECK((f.simd == "avx512" || f.simd == "avx2" || f.simd == "scalar"));
    CHECK(f.extra.count("blas") == 1);
    // The default team never outnumbers a container's CPU quota (container_limits.hpp).
    CHECK(f.extra.count("threads_over_quota") == 0);
}

TEST_CASE("the stream runs kernels in order and events timestamp it", "[cpu]") {
    Device& d = *fixture().device;
    Stream& s = d.stream();
    std::vector<int> order;
    EventPtr e0 = d.create_event(), e1 = d.create_event();
    s.record(*e0);
    for (int i = 0; i < 5; ++i)
        s.launch([&order, i](int t, int) {
            if (t == 0) order.push_back(i);
        });
    s.record(*e1);
    s.synchronize();
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(e1->seconds_since(*e0) >= 0);
}

TEST_CASE("every team thread runs its share of a host kernel exactly once", "[cpu]") {
    Device& d = *fixture().device;
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(d.threads()));
    std::vector<int> team_sizes(static_cast<std::size_t>(d.threads()), -1);
    d.stream().launch([&](int t, int n) {
        // Catch's assertions are for the test's own thread: what each team thread saw is checked after.
        team_sizes[static_cast<std::size_t>(t)] = n;
        hits[static_cast<std::size_t>(t)]++;
    });
    d.stream().synchronize();
    for (auto& h : hits) CHECK(h.load() == 1);
    for (const int n : team_sizes) CHECK(n == d.threads());
}

TEST_CASE("an exception in a kernel reaches the host at the next synchronisation", "[cpu]") {
    Device& d = *fixture().device;
    d.stream().launch([](int t, int) {
        if (t == 0) throw std::runtime_error("kernel failed");
    });
    CHECK_THROWS_WITH(d.stream().synchronize(), "kernel failed");
    d.stream().launch([](int, int) {});
    CHECK_NOTHROW(d.stream().synchronize());
}

TEST_CASE("buffers are zeroed and 64-byte aligned", "[cpu]") {
    Device& d = *fixture().device;
    BufferPtr b = d.allocate(1 << 20);
    CHECK(reinterpret_cast<std::uintptr_t>(b->data()) % 64 == 0);
    CHECK(b->bytes() == (1u << 20));
    const unsigned char* p = static_cast<const unsigned char*>(b->data());
    bool zero = true;
    for (std::size_t i = 0; i < b->bytes(); ++i) zero = zero && p[i] == 0;
    CHECK(zero);
}

TEST_CASE("the streaming kernels compute what they claim", "[cpu]") {
    Device& d = *fixture().device;
    const Simd simd = simd_of(d);
    const std::size_t n = 10'000;  // not a multiple of any vector width: the tails run too
    BufferPtr a = d.allocate(n * 4), b = d.allocate(n * 4), c = d.allocate(n * 4), sums = d.allocate(64 * 64);
    float *pa = a->as<float>(), *pb = b->as<float>(), *pc = c->as<float>(), *ps = sums->as<float>();
    for (std::size_t i = 0; i < n; ++i) {
        pb[i] = static_cast<float>(i % 7);
        pc[i] = 1.0f;
    }
    d.stream().launch([=](int t, int nt) { stream_triad(simd, pa, pb, pc, 2.0f, n, t, nt); });
    d.stream().launch([=](int t, int nt) { ps[16 * t] = stream_read(simd, pa, n, t, nt); });
    d.stream().synchronize();
    double expect = 0;
    for (std::size_t i = 0; i < n; ++i) {
        CHECK(pa[i] == pb[i] + 2.0f);
        expect += pb[i] + 2.0;
    }
    double got = 0;
    for (int t = 0; t < d.threads(); ++t) got += ps[16 * t];
    CHECK(got == Approx(expect));
    d.stream().launch([=](int t, int nt) { stream_copy(simd, pc, pb, n, t, nt); });
    d.stream().synchronize();
    for (std::size_t i = 0; i < n; ++i) CHECK(pc[i] == pb[i]);
}

TEST_CASE("GEMM through OpenBLAS matches a naive product", "[cpu]") {
    Device& d = *fixture().device;
    const int m = 37, n = 29, k = 41;
    BufferPtr a = d.allocate(m * k * 8), b = d.allocate(k * n * 8), c = d.allocate(m * n * 8);
    for (Dtype dt : {Dtype::fp32, Dtype::fp64}) {
        REQUIRE(d.supports(dt));
        auto at = [&](Buffer& buf, int i) -> double {
            return dt == Dtype::fp32 ? buf.as<float>()[i] : buf.as<double>()[i];
        };
        auto set = [&](Buffer& buf, int i, double v) {
            if (dt == Dtype::fp32) buf.as<float>()[i] = static_cast<float>(v);
            else buf.as<double>()[i] = v;
        };
        for (int i = 0; i < m * k; ++i) set(*a, i, (i % 5) - 2);
        for (int i = 0; i < k * n; ++i) set(*b, i, (i % 3) - 1);
        d.gemm(d.stream(), {dt, m, n, k, a->data(), b->data(), c->data(), 1.0, 0.0});
        d.stream().synchronize();
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double want = 0;
                for (int p = 0; p < k; ++p) want += at(*a, i * k + p) * at(*b, p * n + j);
                CHECK(at(*c, i * n + j) == Approx(want));
            }
    }
    CHECK_FALSE(d.supports(Dtype::bf16));
}

TEST_CASE("FMA-peak FLOP counts follow from chains, lanes, iterations and threads", "[cpu]") {
    CHECK(fma_peak_flops<float>(Simd::avx512, 1000, 2) == 2.0 * 1000 * kFmaChains * 16 * 2);
    CHECK(fma_peak_flops<double>(Simd::avx512, 1000, 2) == 2.0 * 1000 * kFmaChains * 8 * 2);
    CHECK(fma_peak_flops<float>(Simd::avx2, 1000, 1) == 2.0 * 1000 * kFmaChains * 8);
    CHECK(fma_peak_flops<double>(Simd::scalar, 10, 1) == 2.0 * 10 * kFmaChains);
}

TEST_CASE("calibration measures every ceiling, and kernels measured against them are placed", "[cpu]") {
    Fixture& f = fixture();
    Device& d = *f.device;
    const EngineSettings settings = engine_defaults(DeviceKind::cpu, true);
    MeasureFn measure = [&](const Workload& w, const Launch& l) { return measure_workload(d, w, l, settings); };
    Ceilings c = f.backend.backend->calibrate(d, true, measure, [](const std::string&) {});
    REQUIRE(c.peak_flops("fp32.simt") > 0);
    REQUIRE(c.peak_bandwidth() > 0);
    CHECK(c.clock_hz.value > 1e8);
    CHECK(c.launch_s.value > 0);

    const Simd simd = simd_of(d);
    std::size_t n = std::max<std::size_t>(4 * d.facts().last_level_cache_bytes() / 8, 1u << 24);
    BufferPtr a = d.allocate(n * 4), b = d.allocate(n * 4);
    float *pa = a->as<float>(), *pb = b->as<float>();
    Workload copy;
    copy.name = "copy";
    copy.bytes = 8.0 * n;
    Measurement mc = measure(copy, [=](Stream& s) { s.launch([=](int t, int nt) { stream_copy(simd, pa, pb, n, t, nt); }); });
    auto pc = roofline::place(0, copy.bytes, mc.time.median, c.peak_flops("fp32.simt"), c.peak_bandwidth(), c.launch_s.value);
    // Which regime a busy machine shows is not asserted (DESIGN.md, "Testing here"); that the
    // verdict names regimes and the counts place the kernel is.
    CHECK_FALSE(roofline::regimes_in(roofline::to_text(pc.measured)).empty());
    CHECK(pc.predicted == roofline::Regime::memory_bound);
    CHECK(pc.memory_fraction > 0);

    const std::int64_t it = 1'000'000;
    BufferPtr out = d.allocate(4096);
    float* po = out->as<float>();
    Workload fma;
    fma.name = "fma";
    fma.flops = fma_peak_flops<float>(simd, it, d.threads());
    fma.bytes = 4.0 * d.threads();
    Measurement mf = measure(fma, [=](Stream& s) { s.launch([=](int t, int) { fma_peak<float>(simd, it, po, t); }); });
    auto pf = roofline::place(fma.flops, fma.bytes, mf.time.median, c.peak_flops("fp32.simt"), c.peak_bandwidth(), c.launch_s.value);
    CHECK_FALSE(roofline::regimes_in(roofline::to_text(pf.measured)).empty());
    CHECK(pf.predicted == roofline::Regime::compute_bound);
    CHECK(pf.compute_fraction > 0);
}

TEST_CASE("each ceiling is measured alone as calibration measures it, and carries its conditions", "[cpu]") {
    auto& f = fixture();
    Device& d = *f.device;
    const EngineSettings settings = engine_defaults(DeviceKind::cpu, true);
    MeasureFn measure = [&](const Workload& w, const Launch& l) { return measure_workload(d, w, l, settings); };
    for (const char* key : {"launch", "flops.fp32.simt", "flops.fp64.simt", "bandwidth.read", "bandwidth.copy",
                            "bandwidth.triad", "bandwidth.update"}) {
        INFO(key);
        std::optional<Measurement> m = f.backend.backend->probe_ceiling(d, key, measure);
        REQUIRE(m.has_value());
        CHECK(m->time.median > 0);
        // The engine's time limit may stop a slow (busy) kernel at two samples: never fewer.
        CHECK(m->time.samples >= 2);
        CeilingMeasurement cm{key, "reference", {}, *m};
        CHECK(ceiling_rate(cm, {}) > 0);
    }
    CHECK_FALSE(f.backend.backend->probe_ceiling(d, "flops.bf16.tensor", measure).has_value());

    Ceilings c = f.backend.backend->calibrate(d, true, measure, [](const std::string&) {});
    for (const auto* table : {&c.flops_per_s, &c.bandwidth_bytes_per_s})
        for (const auto& [key, ceiling] : *table) {
            INFO(key);
            CHECK(ceiling.value > 0);
            CHECK(ceiling.samples >= 2);  // the engine's floor when its time limit stops sampling
            CHECK(ceiling.spread >= 0);
            CHECK_FALSE(ceiling.measured_at.empty());
            if (key != "best") CHECK(ceiling.method.find("median of") != std::string::npos);  // best names its kernel
        }
    CHECK(c.peak_bandwidth() == std::max({c.bandwidth_bytes_per_s["read"].value, c.bandwidth_bytes_per_s["copy"].value,
                                          c.bandwidth_bytes_per_s["triad"].value, c.bandwidth_bytes_per_s["update"].value}));
}

TEST_CASE("copies on the CPU device land whole, in stream order", "[cpu]") {
    Device& d = *fixture().device;
    const std::size_t n = 1'000'003;  // not a multiple of a cache line
    BufferPtr src = d.allocate_host(n), dst = d.allocate(n);
    auto* s = static_cast<unsigned char*>(src->data());
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<unsigned char>(i * 7);
    d.copy(d.stream(), dst->data(), src->data(), n);
    d.stream().synchronize();
    CHECK(std::memcmp(dst->data(), src->data(), n) == 0);
}

// /proc's view while a workload runs: the keys lesson 02.09 reads, each within its range. (What
// they read depends on the machine's load: only their bounds are asserted.)
TEST_CASE("the CPU device's telemetry reports core and process utilisation from /proc", "[cpu]") {
    Device& d = *fixture().device;
    d.telemetry_begin();
    d.stream().launch([](int t, int) {
        if (t != 0) return;  // one thread spins, as 02.09's single chasing thread does
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
        volatile unsigned long spin = 0;
        while (std::chrono::steady_clock::now() < until) spin = spin + 1;
    });
    d.stream().synchronize();
    const auto m = d.telemetry_end();
    for (const char* k : {"cpu_busy_pct.max_core", "cpu_busy_pct.machine", "process_cpu_pct", "cores", "interval_s", "sampler_cost_s"}) {
        INFO(k);
        REQUIRE(m.count(k) == 1);
        CHECK(m.at(k) >= 0);
    }
    CHECK(m.at("interval_s") >= 0.4);
    CHECK(m.at("cores") >= 1);
    CHECK(m.at("cpu_busy_pct.max_core") <= 100.0 + 1e-9);
    CHECK(m.at("cpu_busy_pct.machine") <= m.at("cpu_busy_pct.max_core") + 1e-9);
    CHECK(m.at("process_cpu_pct") <= 100 * m.at("cores") * 1.1 + 10);  // one tick of slack
    CHECK(m.at("sampler_cost_s") < m.at("interval_s"));
}
