// The device model every backend implements, CPU and CUDA alike: an asynchronous in-order
// stream on which kernels are enqueued, events that timestamp the stream, buffers, device
// operations (GEMM, cache flush), the device's facts and its measured ceilings. Because both
// backends share it, a timing, a trace gap or a synchronisation means the same thing on both.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lab/types.hpp"

namespace lab {

enum class DeviceKind { cpu, cuda };

inline const char* to_string(DeviceKind k) { return k == DeviceKind::cpu ? "cpu" : "cuda"; }

struct CacheLevel {
    int level = 0;               // 1, 2, 3
    std::string type;            // "Data", "Instruction", "Unified"
    std::uint64_t bytes = 0;     // per instance
    int shared_by = 1;           // logical CPUs (or SMs) sharing one instance
};

// What the device is, read from the system (sysfs/procfs, cudaDeviceGetAttribute), plus the
// core clock, which is measured because the reported figure is not the running clock.
struct DeviceFacts {
    std::string name;                        // "Intel(R) Xeon(R) Processor", "NVIDIA H200"
    std::string vendor;
    int compute_units = 0;                   // cores (CPU) or SMs (GPU)
    int threads = 0;                         // hardware threads used by this device handle
    std::vector<CacheLevel> caches;
    std::uint64_t memory_bytes = 0;
    std::vector<std::string> features;       // "avx2", "fma", "avx512f", "sm_90", ...
    std::string simd;                        // the kernel variant chosen at run time: "avx512", "avx2"
    std::map<std::string, std::string> extra; // anything else worth showing, as text

    std::uint64_t last_level_cache_bytes() const {
        std::uint64_t best = 0;
        int best_level = 0;
        for (const auto& c : caches)
            if (c.type != "Instruction" && c.level >= best_level) { best_level = c.level; best = c.bytes; }
        return best;
    }
};

// One thing that happened on a device, for Chrome/Perfetto traces. Times are seconds from an
// origin the device chooses (the same for all events of one trace).
struct TraceEvent {
    std::string name;                          // kernel name, "memcpy HtoD", "cudaLaunchKernel"
    std::string category;                      // kernel | memcpy | memset | runtime | sync | range
    double start_s = 0;
    double duration_s = 0;
    int track = 0;                             // the stream (device side) or thread (host side)
    bool host = false;                         // a host-side event (API call, range) vs device
    std::map<std::string, std::string> args;   // grid, block, bytes, correlation, ...
};

// One measured ceiling, with how, when and under which conditions it was measured (DESIGN.md,
// "Trusting ceilings").
struct Ceiling {
    double value = 0;
    std::string unit{};
    std::string method{};       // "8 independent avx512 FMA chains per thread, 2 threads"
    std::string measured_at{};  // ISO 8601 UTC
    // Conditions. The value is work / median sample time: the statistic workloads are judged by.
    double spread = 0;        // relative standard deviation of the samples (0: unknown)
    int samples = 0;          // samples behind the value (0: unknown, e.g. a derived ceiling)
    bool noise_met = true;    // the engine's noise target was reached
    double load = -1;         // other processes' CPU use while it was measured, in CPUs; -1 unknown
    bool trusted = true;      // false: missed its noise target or ran under load, even when retried
    std::string source{};     // "calibration", "re-measured in run", ... ("" = calibration)
};

// Measured ceilings, keyed as DESIGN.md says: FLOP/s by "dtype.pipe" ("fp32.simt",
// "bf16.tensor"), bandwidth by kernel ("read", "copy", "triad") with "best" the largest.
struct Ceilings {
    Ceiling clock_hz;
    Ceiling launch_s;                                // dispatch cost of an empty kernel
    Ceiling launch_graph_s;                          // per kernel replayed from a CUDA graph (0: none)
    std::map<std::string, Ceiling> flops_per_s;
    std::map<std::string, Ceiling> bandwidth_bytes_per_s;
    int threads = 0;
    bool quick = false;                              // measured with --quick settings
    // Ceilings the calibration tried and could not measure, by key ("flops.fp8.tensor",
    // "bandwidth.copy", "launch_graph"), with why: a device that lacks one ceiling still has the
    // others, and a reader sees the pipe was not forgotten.
    std::map<std::string, std::string> skipped;

    bool has_flops(const std::string& pipe) const { return flops_per_s.count(pipe) != 0; }
    double peak_flops(const std::string& pipe) const {
        auto it = flops_per_s.find(pipe);
        return it == flops_per_s.end() ? 0.0 : it->second.value;
    }
    double peak_bandwidth() const {
        auto it = bandwidth_bytes_per_s.find("best");
        return it == bandwidth_bytes_per_s.end() ? 0.0 : it->second.value;
    }
};

class Buffer {
public:
    virtual ~Buffer() = default;
    virtual void* data() = 0;                 // device address (CUDA) or host address (CPU)
    virtual std::size_t bytes() const = 0;
    template <class T> T* as() { return static_cast<T*>(data()); }
    template <class T> std::size_t count() const { return bytes() / sizeof(T); }
};
using BufferPtr = std::unique_ptr<Buffer>;

// A timestamp recorded on a stream when the stream reaches it.
class Event {
public:
    virtual ~Event() = default;
    // Seconds from `start` to this event; both must have completed (synchronise first).
    virtual double seconds_since(const Event& start) const = 0;
};
using EventPtr = std::unique_ptr<Event>;

// A host kernel runs on every thread of the CPU device's team: `fn(thread, threads)`; each
// thread takes its share of the work. (On a CUDA device host kernels run as one host callback.)
using HostKernel = std::function<void(int thread, int threads)>;

class Stream {
public:
    virtual ~Stream() = default;
    virtual void launch(HostKernel kernel) = 0;    // enqueue; returns at once
    virtual void record(Event& event) = 0;         // enqueue a timestamp
    virtual void synchronize() = 0;                // wait until all enqueued work is done
    virtual void* native_handle() = 0;             // cudaStream_t on CUDA; nullptr on CPU
};

// Enqueues one invocation of a workload's kernel on the stream.
using Launch = std::function<void(Stream&)>;

// Element types. Block-scaled 4-bit types (MXFP4: 32 elements share an E8M0 scale byte; NVFP4:
// 16 share an E4M3 scale byte) count their scales in bytes_per_element (lab/workloads.hpp).
enum class Dtype { fp64, fp32, tf32, fp16, bf16, fp8_e4m3, int8, fp8_e5m2, int4, mxfp4, nvfp4 };

inline const char* to_string(Dtype d) {
    switch (d) {
        case Dtype::fp64: return "fp64";
        case Dtype::fp32: return "fp32";
        case Dtype::tf32: return "tf32";
        case Dtype::fp16: return "fp16";
        case Dtype::bf16: return "bf16";
        case Dtype::fp8_e4m3: return "fp8";
        case Dtype::int8: return "int8";
        case Dtype::fp8_e5m2: return "fp8_e5m2";
        case Dtype::int4: return "int4";
        case Dtype::mxfp4: return "mxfp4";
        case Dtype::nvfp4: return "nvfp4";
    }
    return "?";
}

// The compute capability a CUDA device's facts name ("sm_90" -> 90), 0 when none.
inline int compute_capability(const DeviceFacts& f) {
    for (const auto& feature : f.features)
        if (feature.rfind("sm_", 0) == 0) return std::atoi(feature.c_str() + 3);
    return 0;
}

// Whether Device::gemm runs `dtype` on a device of this kind and these facts: OpenBLAS has fp32
// and fp64; cuBLASLt fp64/fp32/fp16/int8 from sm_75, tf32/bf16 from sm_80, fp8 (e4m3) from sm_89.
// Stated from facts alone, so a lesson's plan replays without the device.
inline bool gemm_supported(DeviceKind kind, const DeviceFacts& f, Dtype dtype) {
    if (kind == DeviceKind::cpu) return dtype == Dtype::fp32 || dtype == Dtype::fp64;
    const int cc = compute_capability(f);
    switch (dtype) {
        case Dtype::fp64: case Dtype::fp32: case Dtype::fp16: case Dtype::int8: return cc >= 75;
        case Dtype::tf32: case Dtype::bf16: return cc >= 80;
        case Dtype::fp8_e4m3: return cc >= 89;
        default: return false;
    }
}

// C[m,n] = alpha * A[m,k] * B[k,n] + beta * C, row-major, all in `dtype` (fp32 accumulate for
// 16-bit types). fp8 and int8 follow the tensor cores' "TN" rule: B is given transposed (stored
// [n,k]) and C is bf16 (fp8) or int32 (int8).
struct Gemm {
    Dtype dtype = Dtype::fp32;
    int m = 0, n = 0, k = 0;
    const void* a = nullptr;
    const void* b = nullptr;
    void* c = nullptr;
    double alpha = 1, beta = 0;
};

class Device {
public:
    virtual ~Device() = default;
    virtual DeviceKind kind() const = 0;
    virtual const DeviceFacts& facts() const = 0;
    virtual Stream& stream() = 0;                        // the dedicated measurement stream
    virtual int threads() const = 0;                     // team size (CPU) or 1
    virtual BufferPtr allocate(std::size_t bytes) = 0;   // device memory, zero-filled
    // Host memory the device copies from and to at full speed (pinned on a GPU), zero-filled.
    virtual BufferPtr allocate_host(std::size_t bytes) { return allocate(bytes); }
    // Enqueue a copy of `bytes` from src to dst; either may be device or host memory.
    virtual void copy(Stream& stream, void* dst, const void* src, std::size_t bytes) = 0;
    virtual EventPtr create_event() = 0;
    // Enqueue work that evicts the caches (a write over more than the last-level cache on CPU,
    // an L2 memset on CUDA), so the next kernel starts cold.
    virtual void flush_caches(Stream& stream) = 0;
    virtual bool supports(Dtype dtype) const = 0;        // for gemm
    virtual void gemm(Stream& stream, const Gemm& g) = 0;
    // The engine brackets every timed sample: begin_sample before the start event, end_sample
    // after the stop event, before it synchronises. A GPU reads its SM clock at both ends (to
    // detect throttling) and, for cold samples, holds the stream behind a blocking kernel so
    // launch latency is not timed; the CPU needs neither.
    virtual void begin_sample(Stream&, TimingMode) {}
    virtual void end_sample(Stream&, TimingMode) {}
    // The core clock over the last sample relative to its nominal clock (1 when not throttled);
    // the engine discards samples below 0.75. NaN where the device cannot tell.
    virtual double last_sample_clock_ratio() { return std::numeric_limits<double>::quiet_NaN(); }

    // Hardware counters of one invocation (`run` enqueues it and synchronises), by metric name
    // (e.g. "dram__bytes_read.sum"). Empty with `note` saying why when the device or its driver
    // offers none.
    virtual std::map<std::string, double> measure_counters(const std::function<void()>& run,
                                                           const std::vector<std::string>& metrics,
                                                           std::string& note) {
        (void)run;
        (void)metrics;
        note = "this device offers no hardware counters";
        return {};
    }
    // Telemetry sampled in the background while a workload runs (utilisation, clocks, power):
    // begin starts the sampler, end stops it and returns summaries ("sm_clock_hz.mean", ...).
    virtual void telemetry_begin() {}
    virtual std::map<std::string, double> telemetry_end() { return {}; }

    // Tracing: between trace_begin and trace_end the device records what ran on it (kernels,
    // copies, memsets, synchronisations, host API calls) as TraceEvents.
    virtual bool trace_begin(std::string& note) {
        note = "this device cannot trace";
        return false;
    }
    virtual std::vector<TraceEvent> trace_end() { return {}; }
};

}  // namespace lab
