// Calibration of the CPU device: the running clock, the dispatch cost of an empty kernel, FMA
// peaks per dtype and streaming bandwidth (read, copy, triad) over working sets of at least
// 4x the last-level cache. Each ceiling says how it was measured.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>

#include "cpu_calibrate.hpp"
#include "lab/cpu_kernels.hpp"

namespace lab::cpu {

namespace {

// A ceiling comes from the best sample (see describe_samples in lab/backend.hpp).
double best_rate(double work, const Measurement& m) { return work / m.time.min; }

template <class T>
Ceiling fma_ceiling(CpuDevice& dev, bool quick, const MeasureFn& measure, const char* dtype) {
    const Simd simd = dev.simd();
    const int threads = dev.threads();
    // About 10 ms per invocation (5 ms quick) at typical clocks: long enough to dwarf dispatch.
    const std::int64_t iterations = quick ? 1'500'000 : 3'000'000;
    BufferPtr out = dev.allocate(64 * sizeof(T) * threads);
    T* o = out->as<T>();
    Workload w;
    w.name = std::string("calibrate.fma_") + dtype;
    w.flops = fma_peak_flops<T>(simd, iterations, threads);
    w.bytes = sizeof(T) * threads;
    w.pipe = std::string(dtype) + ".simt";
    Measurement m = measure(w, [=](Stream& s) {
        s.launch([=](int t, int) { fma_peak<T>(simd, iterations, o, t); });
    });
    Ceiling c;
    c.value = best_rate(w.flops, m);
    c.unit = "FLOP/s";
    c.method = std::to_string(kFmaChains) + " independent " + to_string(simd) + " " + dtype +
               " FMA chains per thread on " + std::to_string(threads) + " threads; " + describe_samples(m);
    c.measured_at = utc_now_iso();
    return c;
}

}  // namespace

Ceilings calibrate_cpu(CpuDevice& dev, bool quick, const MeasureFn& measure,
                       const std::function<void(const std::string&)>& progress) {
    Ceilings c;
    c.threads = dev.threads();
    c.quick = quick;
    const Simd simd = dev.simd();
    const int threads = dev.threads();

    progress("calibrating: core clock");
    {
        // Measured on the stream thread, which is pinned like every kernel's thread 0.
        double hz = 0;
        dev.task_stream().enqueue([&hz] { hz = measure_core_clock_hz(); });
        dev.stream().synchronize();
        c.clock_hz = {hz, "Hz", "dependent chain of 5,000,000 integer adds (one per cycle), best of 5, on thread 0",
                      utc_now_iso()};
    }

    progress("calibrating: dispatch cost");
    {
        Workload w;
        w.name = "calibrate.empty_kernel";
        Measurement m = measure(w, [](Stream& s) { s.launch([](int, int) {}); });
        c.launch_s = {m.time.median, "s",
                      "empty kernel on the " + std::to_string(threads) +
                          "-thread team, back to back on the stream; " + describe_samples(m, false),
                      utc_now_iso()};
    }

    progress("calibrating: fp32 FMA peak");
    c.flops_per_s["fp32.simt"] = fma_ceiling<float>(dev, quick, measure, "fp32");
    progress("calibrating: fp64 FMA peak");
    c.flops_per_s["fp64.simt"] = fma_ceiling<double>(dev, quick, measure, "fp64");

    // One allocation serves all three kernels: read streams all of it, copy splits it in two,
    // triad in three, so each kernel's working set is the whole buffer.
    std::size_t llc = dev.facts().last_level_cache_bytes();
    std::size_t total = std::max<std::size_t>(4 * llc, 256u << 20);
    total = (total + (3 << 12) - 1) / (3 << 12) * (3 << 12);  // divisible into 3 page-aligned parts
    progress("calibrating: bandwidth over " + std::to_string(total >> 20) + " MiB");
    BufferPtr buf = dev.allocate(total);
    float* base = buf->as<float>();
    std::size_t n = total / sizeof(float);
    float* sink = nullptr;
    BufferPtr sink_buf = dev.allocate(64 * sizeof(float) * threads);
    sink = sink_buf->as<float>();
    dev.stream().launch([=](int t, int nt) { fill(base, n, 1.0f, t, nt); });

    auto bandwidth = [&](const char* name, double bytes, const Launch& launch, const std::string& how) {
        Workload w;
        w.name = std::string("calibrate.") + name;
        w.bytes = bytes;
        w.flops = 0;
        Measurement m = measure(w, launch);
        c.bandwidth_bytes_per_s[name] = {best_rate(bytes, m), "B/s",
                                         how + " over " + std::to_string(total >> 20) + " MiB, " +
                                             std::to_string(threads) + " threads, " + to_string(simd) +
                                             "; bytes the kernel asks for (no write-allocate); " + describe_samples(m),
                                         utc_now_iso()};
    };
    bandwidth("read", 4.0 * n, [=](Stream& s) {
        s.launch([=](int t, int nt) { sink[16 * t] = stream_read(simd, base, n, t, nt); });
    }, "sum += a[i]");
    std::size_t half = n / 2;
    bandwidth("copy", 8.0 * half, [=](Stream& s) {
        s.launch([=](int t, int nt) { stream_copy(simd, base, base + half, half, t, nt); });
    }, "a[i] = b[i]");
    std::size_t third = n / 3;
    bandwidth("triad", 12.0 * third, [=](Stream& s) {
        s.launch([=](int t, int nt) { stream_triad(simd, base, base + third, base + 2 * third, 0.5f, third, t, nt); });
    }, "a[i] = b[i] + s*c[i]");

    Ceiling best;
    for (const auto& [k, v] : c.bandwidth_bytes_per_s)
        if (v.value > best.value) {
            best = v;
            best.method = "best sustained of read/copy/triad: " + k;
        }
    c.bandwidth_bytes_per_s["best"] = best;
    return c;
}

}  // namespace lab::cpu
