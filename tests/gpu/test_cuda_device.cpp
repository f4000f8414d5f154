// The CUDA backend on a real GPU: facts, stream ordering and events, buffers, GEMM results at
// each dtype the card has, the sample bracket (clock ratio), calibration and probing one ceiling
// again, traces, counters and telemetry (which may be refused, and must then say so). No speed is
// asserted; a probe is held to calibration's workload, not its rate.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "ceiling_trust.hpp"
#include "device_session.hpp"
#include "gpu_fixture.hpp"
#include "lab/random_fill.hpp"
#include "lab/stream_kernels.hpp"
#include "measure_engine.hpp"
#include "test_support.hpp"
#include "trace_windows.hpp"

using namespace lab;

namespace lab_gpu_test {

const BackendLookup& cuda_backend() {
    static const BackendLookup found = find_cuda_backend(std::getenv("LAB_PLUGIN_PATH"), lab_test::build_root());
    return found;
}

bool from_plugin_path() {
    const char* p = std::getenv("LAB_PLUGIN_PATH");
    return p && *p;
}

std::string why_no_gpu() {
    if (cuda_backend().verdict != BackendLookup::Verdict::found) return cuda_backend().why;
    try {
        static LoadedBackend b = load_backend(cuda_backend().file);
        return b.backend->unavailable_reason();
    } catch (const std::exception& e) {
        return e.what();
    }
}

Gpu& gpu() {
    static Gpu g = [] {
        Gpu x{load_backend(cuda_backend().file), nullptr};
        x.device = x.backend.backend->open({});
        return x;
    }();
    return g;
}

}  // namespace lab_gpu_test

using lab_gpu_test::gpu;

namespace {

// cudaMemcpy from pageable memory may return before the copy lands, and it runs on the legacy
// stream, which the device's non-blocking stream does not wait for: wait here, before a kernel.
void copy_to_device(Buffer& b, const void* host, std::size_t bytes) {
    REQUIRE(cudaMemcpy(b.data(), host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}
void copy_to_host(void* host, Buffer& b, std::size_t bytes) {
    REQUIRE(cudaMemcpy(host, b.data(), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
}

// Small integers, pseudo-random and mostly non-zero: exact in bf16, and their products' sums
// exact in fp32 and int32, so a GEMM's result is compared exactly.
std::vector<int> small_ints(std::size_t n, int lo, int hi, std::uint32_t seed) {
    std::vector<int> v(n);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = lo + static_cast<int>((seed >> 8) % static_cast<std::uint32_t>(hi - lo + 1));
    }
    return v;
}

// bf16 is a float's upper half: exact for the small integers above.
std::uint16_t to_bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
    std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// A windowed trace started, or the reason the GPU refuses one said (nothing to check then).
bool trace_begins(TraceWindows& trace) {
    std::string why;
    if (trace.begin(why)) return true;
    WARN("tracing refused: " << why);
    return false;
}

// A small fp32 GEMM in place over one buffer: a kernel to find in a trace, its values unused.
Gemm gemm64(Buffer& b) { return {Dtype::fp32, 64, 64, 64, b.data(), b.data(), b.data(), 1.0, 0.0}; }

// The packed build's files, or the build folder's (backend_lookup.hpp).
std::filesystem::path lesson_file(const std::string& id_dir, const std::string& file) {
    auto found = lab_gpu_test::find_built_file(std::getenv("LAB_PLUGIN_PATH"), lab_test::build_root() / "labs" / id_dir, file);
    INFO(found.why);
    REQUIRE(found.verdict == lab_gpu_test::BackendLookup::Verdict::found);
    return found.file;
}

// The engine as a calibration runs it, with the quick settings.
MeasureFn quick_measure(Device& d) {
    return [&d](const Workload& w, const Launch& l) { return measure_workload(d, w, l, engine_defaults(DeviceKind::cuda, true)); };
}

// One quick calibration the tests share (it takes a GPU seconds), with the workloads it measured.
struct QuickCalibration {
    Ceilings ceilings;
    std::map<std::string, Workload> workloads;  // by name
};
const QuickCalibration& quick_calibration() {
    static const QuickCalibration calibrated = [] {
        QuickCalibration q;
        Device& d = *gpu().device;
        const MeasureFn engine = quick_measure(d);
        const MeasureFn recording = [&](const Workload& w, const Launch& l) {
            q.workloads[w.name] = w;
            return engine(w, l);
        };
        q.ceilings = gpu().backend.backend->calibrate(d, true, recording, [](const std::string&) {});
        return q;
    }();
    return calibrated;
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

TEST_CASE("bf16 GEMM on the GPU matches a host product of non-zero data", "[gpu]") {
    Device& d = *gpu().device;
    if (!d.supports(Dtype::bf16)) {
        WARN("no bf16 GEMM on this GPU");
        return;
    }
    const int m = 64, n = 48, k = 32;
    const std::vector<int> A = small_ints(m * k, -2, 2, 1), B = small_ints(k * n, -2, 2, 2);
    std::vector<std::uint16_t> a16(A.size()), b16(B.size());
    for (std::size_t i = 0; i < A.size(); ++i) a16[i] = to_bf16(static_cast<float>(A[i]));
    for (std::size_t i = 0; i < B.size(); ++i) b16[i] = to_bf16(static_cast<float>(B[i]));
    BufferPtr a = d.allocate(a16.size() * 2), b = d.allocate(b16.size() * 2), c = d.allocate(m * n * 2);
    copy_to_device(*a, a16.data(), a16.size() * 2);
    copy_to_device(*b, b16.data(), b16.size() * 2);
    d.gemm(d.stream(), {Dtype::bf16, m, n, k, a->data(), b->data(), c->data(), 1.0, 0.0});
    d.stream().synchronize();
    std::vector<std::uint16_t> got(m * n);
    copy_to_host(got.data(), *c, got.size() * 2);
    int nonzero = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            int want = 0;
            for (int p = 0; p < k; ++p) want += A[i * k + p] * B[p * n + j];  // |want| <= 128: exact in bf16
            nonzero += want != 0;
            INFO("C[" << i << "," << j << "]");
            CHECK(from_bf16(got[i * n + j]) == static_cast<float>(want));
        }
    CHECK(nonzero > m * n / 2);
}

TEST_CASE("fill_random puts the host's fill in GPU memory through pinned copies, every period and the tail", "[gpu]") {
    Device& d = *gpu().device;
    lab_test::DeviceSession session(d, false);
    for (Dtype dtype : {Dtype::bf16, Dtype::fp32, Dtype::int8}) {
        INFO(to_string(dtype));
        const std::size_t size = random_fill::element_bytes(dtype), elements = 2 * random_fill::kPeriod + 333;
        BufferPtr buf = d.allocate(elements * size);
        fill_random(session, *buf, dtype, 9);
        std::vector<unsigned char> got(elements * size), want(random_fill::kPeriod * size);
        copy_to_host(got.data(), *buf, got.size());
        random_fill::fill_host(want.data(), 0, random_fill::kPeriod, dtype, 9);
        CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
        CHECK(std::memcmp(got.data() + want.size(), want.data(), want.size()) == 0);
        CHECK(std::memcmp(got.data() + 2 * want.size(), want.data(), 333 * size) == 0);
    }
}

TEST_CASE("int8 GEMM on the GPU (B stored transposed) matches a host product in int32", "[gpu]") {
    Device& d = *gpu().device;
    const int m = 64, n = 48, k = 32;
    // B is given as stored transposed, [n,k]: the tensor cores' TN rule (lab/device.hpp).
    const std::vector<int> A = small_ints(m * k, -128, 127, 3), Bt = small_ints(n * k, -128, 127, 4);
    std::vector<std::int8_t> a8(A.begin(), A.end()), b8(Bt.begin(), Bt.end());
    BufferPtr a = d.allocate(a8.size()), b = d.allocate(b8.size()), c = d.allocate(m * n * 4);
    copy_to_device(*a, a8.data(), a8.size());
    copy_to_device(*b, b8.data(), b8.size());
    d.gemm(d.stream(), {Dtype::int8, m, n, k, a->data(), b->data(), c->data(), 1.0, 0.0});
    d.stream().synchronize();
    std::vector<std::int32_t> got(m * n);
    copy_to_host(got.data(), *c, got.size() * 4);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            std::int32_t want = 0;
            for (int p = 0; p < k; ++p) want += A[i * k + p] * Bt[j * k + p];
            INFO("C[" << i << "," << j << "]");
            CHECK(got[i * n + j] == want);
        }
}

TEST_CASE("the GPU streaming kernels copy and triad every element once, tails included", "[gpu]") {
    // The kernels a lesson's companion launches (02.05's), over a size that leaves a partial trip
    // of several loads in flight and a tail of single elements on some threads.
    Device& d = *gpu().device;
    auto create = reinterpret_cast<StreamKernels* (*)(Device&)>(
        companion_symbol(lesson_file("02_05", "lab_02_05.so"), "lab_companion_create"));
    std::unique_ptr<StreamKernels> k(create(d));
    const std::size_t stride = std::size_t{stream_kernels::gpu_blocks(d.facts())} * stream_kernels::kGpuBlock;
    const std::size_t n = 4 * (5 * stride + stride / 3 + 7);  // floats; n / 4 float4s
    std::vector<float> b(n), c(n);
    for (std::size_t i = 0; i < n; ++i) {
        b[i] = static_cast<float>(i % 1000);
        c[i] = static_cast<float>(i % 7) * 2;
    }
    BufferPtr da = d.allocate(n * 4), db = d.allocate(n * 4), dc = d.allocate(n * 4), sink = d.allocate(64);
    copy_to_device(*db, b.data(), n * 4);
    copy_to_device(*dc, c.data(), n * 4);
    std::vector<float> got(n);

    k->copy(da->as<float>(), db->as<float>(), n)(d.stream());
    d.stream().synchronize();
    copy_to_host(got.data(), *da, n * 4);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != b[i];
    CHECK(wrong == 0);

    REQUIRE(cudaMemset(da->data(), 0, n * 4) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);  // the memset ran on the legacy stream
    k->triad(da->as<float>(), db->as<float>(), dc->as<float>(), 0.5f, n)(d.stream());
    d.stream().synchronize();
    copy_to_host(got.data(), *da, n * 4);
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != b[i] + 0.5f * c[i];  // exact: small integers and halves
    CHECK(wrong == 0);

    // read stores nothing it computes; it must run through the tails without a fault.
    k->read(db->as<float>(), n, sink->as<float>())(d.stream());
    d.stream().synchronize();
}

TEST_CASE("calibration on the GPU yields every ceiling with its method", "[gpu]") {
    Device& d = *gpu().device;
    Ceilings c = quick_calibration().ceilings;
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
    // A skip is recorded with its reason; on a datacentre GPU none is expected.
    for (const auto& [key, why] : c.skipped) WARN("skipped " << key << ": " << why);
    CHECK(c.skipped.empty());
    if (d.supports(Dtype::bf16)) CHECK(c.flops_per_s.count("bf16.tensor") + c.skipped.count("flops.bf16.tensor") == 1);
}

TEST_CASE("a GPU ceiling probed on its own is measured by calibration's kernel and workload; a key without one is nullopt", "[gpu]") {
    // What a run measures beside a workload, or again when a workload beat the ceiling.
    auto& g = gpu();
    Device& d = *g.device;
    const QuickCalibration& calibrated = quick_calibration();
    Ceilings c = calibrated.ceilings;
    std::vector<std::string> keys = {"launch", "flops.fp32.simt", "bandwidth.read"};
    if (c.flops_per_s.count("bf16.tensor")) keys.push_back("flops.bf16.tensor");
    for (const auto& key : keys) {
        INFO(key);
        std::optional<Measurement> m = g.backend.backend->probe_ceiling(d, key, quick_measure(d));
        REQUIRE(m);
        const Workload& w = m->workload;
        REQUIRE(calibrated.workloads.count(w.name) == 1);
        const Workload& cw = calibrated.workloads.at(w.name);
        CHECK(w.pipe == cw.pipe);
        // This process calibrated quick, so its probes are quick too (probe_quick): the same work.
        CHECK(w.flops == cw.flops);
        CHECK(w.bytes == cw.bytes);
        // Only a gross mismatch (another kernel, another size) is caught: timings are noisy.
        const Ceiling* ceiling = find_ceiling(c, key);
        REQUIRE(ceiling);
        const double rate = ceiling_rate({key, "reference", {}, *m}, {});
        // A rate, not compared with calibration's: two timings of one kernel move apart with the
        // machine's load. Another kernel or size is caught by the workload's fields above.
        CHECK(rate > 0);
    }
    for (const char* key : {"flops.nonsense", "bandwidth.memcpy", "bandwidth.update", "launch_graph"}) {
        INFO(key);
        CHECK_FALSE(g.backend.backend->probe_ceiling(d, key, quick_measure(d)));
    }
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

TEST_CASE("a windowed GPU trace keeps every segment's kernels, timed, on one time axis, after counters too", "[gpu]") {
    // What `lab run --trace` does (trace_windows.hpp): the tracer stopped and started again
    // around each workload's measurement, which may read hardware counters in between. Each
    // segment's kernel must be there, with a duration, at the time it ran.
    Device& d = *gpu().device;
    TraceWindows trace(d);
    if (!trace_begins(trace)) return;
    BufferPtr b = d.allocate(1 << 20);
    auto gemm = [&] {
        d.gemm(d.stream(), gemm64(*b));
        d.stream().synchronize();
    };
    std::vector<std::pair<double, double>> segments;  // host times around each segment's kernel
    for (int segment = 0; segment < 3; ++segment) {
        const double from = trace.now();
        gemm();
        segments.emplace_back(from, trace.now());
        trace.pause();
        if (segment == 0) {
            std::string note;
            auto values = d.measure_counters(gemm, {"dram__bytes_read.sum"}, note);
            if (values.empty()) WARN("counters refused: " << note);
        }
        trace.resume();
    }
    std::vector<TraceEvent> events = trace.finish();
    std::vector<const TraceEvent*> kernels;
    for (const auto& e : events) {
        INFO(e.name);
        CHECK_FALSE(e.name.rfind("tracing stopped", 0) == 0);
        CHECK_FALSE(e.name.rfind("dropped ", 0) == 0);
        if (e.category == "kernel") kernels.push_back(&e);
    }
    // The GEMM's kernels of each segment (cuBLASLt may launch more than one), none untimed.
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const auto [from, to] = segments[i];
        INFO("segment " << i << ": " << from << " s to " << to << " s");
        int inside = 0;
        for (const TraceEvent* k : kernels)
            inside += k->start_s >= from - 1e-3 && k->start_s + k->duration_s <= to + 1e-3 && k->duration_s > 0;
        CHECK(inside >= 1);
    }
}

TEST_CASE("a measured workload leaves its traced window in a GPU trace", "[gpu]") {
    Device& d = *gpu().device;
    TraceWindows trace(d);
    if (!trace_begins(trace)) return;
    BufferPtr b = d.allocate(1 << 20);
    Workload w;
    w.name = "gemm64";
    w.flops = 2.0 * 64 * 64 * 64;
    EngineSettings s = engine_defaults(DeviceKind::cuda, true);
    measure_workload(d, w, [&](Stream& st) { d.gemm(st, gemm64(*b)); }, s, &trace);
    std::vector<TraceEvent> events = trace.finish();
    int windows = 0, kernels = 0;
    for (const auto& e : events) {
        windows += e.track == kLabTrack && e.name.find("gemm64") != std::string::npos;
        kernels += e.category == "kernel" && e.duration_s > 0;
    }
    CHECK(windows >= 1);
    CHECK(kernels >= 1);
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
