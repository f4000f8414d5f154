// Calibration of the CPU device: the running clock, the dispatch cost of an empty kernel, FMA
// peaks per dtype and streaming bandwidth (read, copy, triad) over working sets of at least
// 4x the last-level cache. Each ceiling is work / median sample time and says how it was
// measured (lab/backend.hpp, ceiling_from).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>

#include "cpu_calibrate.hpp"
#include "lab/cpu_kernels.hpp"

namespace lab::cpu {

namespace {

template <class T>
Measurement measure_fma(CpuDevice& dev, BufferPtr& sink, bool quick, const MeasureFn& measure, const char* dtype) {
    const Simd simd = dev.simd();
    const int threads = dev.threads();
    // About 10 ms per invocation (5 ms quick) at typical clocks: long enough to dwarf dispatch.
    const std::int64_t iterations = quick ? 1'500'000 : 3'000'000;
    T* o = sink->as<T>();
    Workload w;
    w.name = std::string("calibrate.fma_") + dtype;
    w.flops = fma_peak_flops<T>(simd, iterations, threads);
    w.bytes = sizeof(T) * threads;
    w.pipe = std::string(dtype) + ".simt";
    return measure(w, [=](Stream& s) { s.launch([=](int t, int) { fma_peak<T>(simd, iterations, o, t); }); });
}

}  // namespace

CeilingKernels::CeilingKernels(CpuDevice& device) : dev_(device) {
    sink_ = dev_.allocate(64 * sizeof(double) * std::max(1, dev_.threads()));
}

bool CeilingKernels::knows(const std::string& c) {
    return c == "launch" || c == "flops.fp32.simt" || c == "flops.fp64.simt" || c == "bandwidth.read" ||
           c == "bandwidth.copy" || c == "bandwidth.triad" || c == "bandwidth.update";
}

Measurement CeilingKernels::measure(const std::string& c, bool quick, const MeasureFn& measure) {
    const Simd simd = dev_.simd();
    if (c == "launch") {
        Workload w;
        w.name = "calibrate.empty_kernel";
        return measure(w, [](Stream& s) { s.launch([](int, int) {}); });
    }
    if (c == "flops.fp32.simt") return measure_fma<float>(dev_, sink_, quick, measure, "fp32");
    if (c == "flops.fp64.simt") return measure_fma<double>(dev_, sink_, quick, measure, "fp64");

    // One allocation serves all three kernels: read streams all of it, copy splits it in two,
    // triad in three, so each kernel's working set is the whole buffer.
    if (!stream_) {
        std::size_t llc = dev_.facts().last_level_cache_bytes();
        std::size_t total = std::max<std::size_t>(4 * llc, 256u << 20);
        total = (total + (3 << 12) - 1) / (3 << 12) * (3 << 12);  // divisible into 3 page-aligned parts
        stream_ = dev_.allocate(total);
        stream_bytes_ = total;
        float* base = stream_->as<float>();
        std::size_t n = total / sizeof(float);
        // Setup in a trace (an in-run re-measure is traced), not a kernel of the lesson's.
        dev_.task_stream().launch([=](int t, int nt) { fill(base, n, 1.0f, t, nt); }, TaskLabel{"setup", "fill ceiling buffer"});
    }
    float* base = stream_->as<float>();
    float* sink = sink_->as<float>();
    const std::size_t n = stream_bytes_ / sizeof(float), half = n / 2, third = n / 3;
    Workload w;
    w.name = "calibrate." + c.substr(c.find('.') + 1);
    if (c == "bandwidth.read") {
        w.bytes = 4.0 * n;
        return measure(w, [=](Stream& s) {
            s.launch([=](int t, int nt) { sink[16 * t] = stream_read(simd, base, n, t, nt); });
        });
    }
    if (c == "bandwidth.copy") {
        w.bytes = 8.0 * half;
        return measure(w, [=](Stream& s) {
            s.launch([=](int t, int nt) { stream_copy(simd, base, base + half, half, t, nt); });
        });
    }
    if (c == "bandwidth.triad") {
        w.bytes = 12.0 * third;
        return measure(w, [=](Stream& s) {
            s.launch([=](int t, int nt) {
                stream_triad(simd, base, base + third, base + 2 * third, 0.5f, third, t, nt);
            });
        });
    }
    if (c == "bandwidth.update") {
        // In place, one FMA per element: each line is read and written back while in cache, so
        // no write-allocate read is paid (what copy and triad pay uncounted).
        w.bytes = 8.0 * n;
        w.flops = 2.0 * n;
        return measure(w, [=](Stream& s) {
            s.launch([=](int t, int nt) { fma_per_element(simd, base, n, 1, t, nt); });
        });
    }
    throw std::invalid_argument("the CPU backend has no kernel for the ceiling '" + c + "'");
}

Ceiling CeilingKernels::ceiling(const std::string& c, const Measurement& m) const {
    const std::string threads = std::to_string(dev_.threads());
    const std::string simd = to_string(dev_.simd());
    if (c == "launch")
        return ceiling_from(m, 0, "s", "empty kernel on the " + threads + "-thread team, back to back on the stream");
    if (c.rfind("flops.", 0) == 0)
        return ceiling_from(m, m.workload.flops, "FLOP/s",
                            std::to_string(kFmaChains) + " independent " + simd + " " + c.substr(6, 4) +
                                " FMA chains per thread on " + threads + " threads");
    const std::string kernel = c.substr(10);
    const char* how = kernel == "read"   ? "sum += a[i]"
                      : kernel == "copy" ? "a[i] = b[i]"
                      : kernel == "update" ? "a[i] = a[i]*x + y, in place"
                                           : "a[i] = b[i] + s*c[i]";
    return ceiling_from(m, m.workload.bytes, "B/s",
                        std::string(how) + " over " + std::to_string(stream_bytes_ >> 20) + " MiB, " + threads +
                            " threads, " + simd + "; bytes the kernel asks for (no write-allocate)");
}

Ceilings calibrate_cpu(CeilingKernels& k, bool quick, const MeasureFn& measure,
                       const std::function<void(const std::string&)>& progress) {
    CpuDevice& dev = k.device();
    Ceilings c;
    c.threads = dev.threads();
    c.quick = quick;

    progress("calibrating: core clock");
    {
        // Measured on the stream thread, which is pinned like every kernel's thread 0.
        double hz = 0;
        dev.task_stream().enqueue([&hz] { hz = measure_core_clock_hz(); });
        dev.stream().synchronize();
        c.clock_hz = plain_ceiling(hz, "Hz", "dependent chain of 5,000,000 integer adds (one per cycle), best of 5, on thread 0");
    }
    progress("calibrating: dispatch cost");
    c.launch_s = k.ceiling("launch", k.measure("launch", quick, measure));
    for (const char* pipe : {"fp32.simt", "fp64.simt"}) {
        progress(std::string("calibrating: ") + pipe + " FMA peak");
        const std::string key = std::string("flops.") + pipe;
        c.flops_per_s[pipe] = k.ceiling(key, k.measure(key, quick, measure));
    }
    for (const char* kernel : {"read", "copy", "triad", "update"}) {
        progress(std::string("calibrating: ") + kernel + " bandwidth");
        const std::string key = std::string("bandwidth.") + kernel;
        c.bandwidth_bytes_per_s[kernel] = k.ceiling(key, k.measure(key, quick, measure));
    }
    set_best_bandwidth(c);
    return c;
}

}  // namespace lab::cpu
