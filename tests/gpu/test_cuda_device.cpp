// The CUDA backend on a real GPU: facts, stream ordering and events, buffers, GEMM results at
// each dtype the card has, the sample bracket (clock ratio), calibration, traces, counters and
// telemetry (which may be refused, and must then say so). No speed is asserted.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpu_fixture.hpp"
#include "measure_engine.hpp"
#include "test_support.hpp"

using namespace lab;

namespace lab_gpu_test {

namespace {
std::filesystem::path backend_file() { return lab_test::build_root() / "plugins/cuda/labdevice_cuda.so"; }
}  // namespace

std::string why_no_gpu() {
    if (!std::filesystem::exists(backend_file())) return "this build has no CUDA backend";
    try {
        static LoadedBackend b = load_backend(backend_file());
        return b.backend->unavailable_reason();
    } catch (const std::exception& e) {
        return e.what();
    }
}

Gpu& gpu() {
    static Gpu g = [] {
        Gpu x{load_backend(backend_file()), nullptr};
        x.device = x.backend.backend->open({});
        return x;
    }();
    return g;
}

}  // namespace lab_gpu_test

using lab_gpu_test::gpu;

namespace {

void copy_to_device(Buffer& b, const void* host, std::size_t bytes) {
    REQUIRE(cudaMemcpy(b.data(), host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
}
void copy_to_host(void* host, Buffer& b, std::size_t bytes) {
    REQUIRE(cudaMemcpy(host, b.data(), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
}

}  // namespace

TEST_CASE("the CUDA device reports its facts", "[gpu]") {
    Device& d = *gpu().device;
    CHECK(d.kind() == DeviceKind::cuda);
    CHECK_FALSE(d.facts().name.empty());
    CHECK(d.facts().compute_units > 0);
    CHECK(d.facts().memory_bytes > (1ull << 30));
    CHECK(d.facts().last_level_cache_bytes() > 0);
    CHECK(d.facts().extra.count("compute_capability") == 1);
}

TEST_CASE("the CUDA stream runs host callbacks in order and events time it", "[gpu]") {
    Device& d = *gpu().device;
    std::vector<int> order;
    EventPtr a = d.create_event(), b = d.create_event();
    d.stream().record(*a);
    for (int i = 0; i < 4; ++i) d.stream().launch([&order, i](int, int) { order.push_back(i); });
    d.stream().record(*b);
    d.stream().synchronize();
    CHECK(order == std::vector<int>{0, 1, 2, 3});
    CHECK(b->seconds_since(*a) >= 0);
}

TEST_CASE("fp32 GEMM on the GPU matches a naive product", "[gpu]") {
    Device& d = *gpu().device;
    const int m = 64, n = 48, k = 32;
    std::vector<float> A(m * k), B(k * n), want(m * n, 0.0f);
    for (int i = 0; i < m * k; ++i) A[i] = static_cast<float>((i % 5) - 2);
    for (int i = 0; i < k * n; ++i) B[i] = static_cast<float>((i % 3) - 1);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
            for (int p = 0; p < k; ++p) want[i * n + j] += A[i * k + p] * B[p * n + j];
    BufferPtr a = d.allocate(m * k * 4), b = d.allocate(k * n * 4), c = d.allocate(m * n * 4);
    copy_to_device(*a, A.data(), A.size() * 4);
    copy_to_device(*b, B.data(), B.size() * 4);
    d.gemm(d.stream(), {Dtype::fp32, m, n, k, a->data(), b->data(), c->data(), 1.0, 0.0});
    d.stream().synchronize();
    std::vector<float> got(m * n);
    copy_to_host(got.data(), *c, got.size() * 4);
    for (int i = 0; i < m * n; ++i) CHECK(got[i] == Approx(want[i]));
}

TEST_CASE("calibration on the GPU yields every ceiling with its method", "[gpu]") {
    auto& g = gpu();
    Device& d = *g.device;
    EngineSettings s = engine_defaults(DeviceKind::cuda, true);
    MeasureFn measure = [&](const Workload& w, const Launch& l) { return measure_workload(d, w, l, s); };
    Ceilings c = g.backend.backend->calibrate(d, true, measure, [](const std::string&) {});
    CHECK(c.clock_hz.value > 1e8);
    CHECK(c.launch_s.value > 0);
    CHECK(c.launch_s.value < 1e-3);
    CHECK(c.launch_graph_s.value > 0);
    for (const char* k : {"fp32.simt", "fp64.simt", "fp16.simt"}) {
        INFO(k);
        REQUIRE(c.flops_per_s.count(k) == 1);
        CHECK(c.flops_per_s[k].value > 0);
        CHECK_FALSE(c.flops_per_s[k].method.empty());
    }
    for (const char* k : {"read", "copy", "triad", "memcpy", "best"}) {
        INFO(k);
        CHECK(c.bandwidth_bytes_per_s[k].value > 0);
    }
    CHECK(std::isfinite(d.last_sample_clock_ratio()));
}

TEST_CASE("a GPU trace holds kernels and the runtime calls that launched them", "[gpu]") {
    Device& d = *gpu().device;
    std::string note;
    if (!d.trace_begin(note)) {
        WARN("tracing refused: " << note);
        return;
    }
    BufferPtr b = d.allocate(1 << 20);
    d.gemm(d.stream(), {Dtype::fp32, 64, 64, 64, b->data(), b->data(), b->data(), 1.0, 0.0});
    d.stream().synchronize();
    auto events = d.trace_end();
    int kernels = 0, runtime = 0;
    for (const auto& e : events) {
        kernels += e.category == "kernel";
        runtime += e.category == "runtime";
    }
    CHECK(kernels >= 1);
    CHECK(runtime >= 1);
}

TEST_CASE("counters of a copy count its DRAM bytes, or say why they cannot", "[gpu]") {
    Device& d = *gpu().device;
    const std::size_t n = std::size_t{64} << 20;
    BufferPtr a = d.allocate(n), b = d.allocate(n);
    std::string note;
    auto values = d.measure_counters(
        [&] {
            REQUIRE(cudaMemcpyAsync(a->data(), b->data(), n, cudaMemcpyDeviceToDevice,
                                    static_cast<cudaStream_t>(d.stream().native_handle())) == cudaSuccess);
            d.stream().synchronize();
        },
        {"dram__bytes_read.sum", "dram__bytes_write.sum"}, note);
    if (values.empty()) {
        WARN("counters refused: " << note);
        CHECK_FALSE(note.empty());
        return;
    }
    CHECK(values["dram__bytes_read.sum"] == Approx(static_cast<double>(n)).epsilon(0.2));
}

TEST_CASE("telemetry samples while work runs, or is absent without NVML", "[gpu]") {
    Device& d = *gpu().device;
    d.telemetry_begin();
    BufferPtr b = d.allocate(std::size_t{256} << 20);
    for (int i = 0; i < 50; ++i) d.flush_caches(d.stream());
    d.stream().synchronize();
    auto t = d.telemetry_end();
    if (t.empty()) {
        WARN("no NVML telemetry on this machine");
        return;
    }
    CHECK(t.count("samples") == 1);
}
