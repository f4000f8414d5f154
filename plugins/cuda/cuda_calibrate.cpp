// Calibration of a CUDA device: the SM clock (clock64 over %globaltimer during the FFMA peak), the
// launch cost (empty kernel back to back on a stream, and replayed from a CUDA graph), FLOP/s per
// pipe and dtype (FFMA/DFMA/HFMA2 kernels for the simt pipes; cuBLASLt GEMM on pseudo-random data
// for the tensor pipes) and DRAM bandwidth (read, copy and triad kernels with 16-byte accesses, and
// cudaMemcpy device-to-device for reference) over at least 4x the L2. Each ceiling says how it was
// measured; one that cannot be measured is skipped with its reason (Ceilings::skipped).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <string>

#include "cuda_calibrate.hpp"
#include "lab/cuda_check.hpp"
#include "device_kernels.hpp"

namespace lab::cuda {

namespace {

cudaStream_t native(Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

// After a ceiling's workload failed: did it break the device? A sticky error (an illegal address,
// a kernel trap, a lost device) poisons the context, and every later call fails with it, so the
// calibration stops with the error; anything else (cuBLASLt NOT_SUPPORTED, out of memory, every
// sample throttled) concerns that ceiling alone, and its error is cleared so that it does not
// surface from the next, unrelated call.
void check_not_sticky(const std::string& key) {
    cudaError_t synced = cudaDeviceSynchronize();
    cudaError_t last = cudaGetLastError();  // reads and clears a non-sticky error
    cudaError_t e = synced != cudaSuccess ? synced : last;
    if (e == cudaSuccess || cudaDeviceSynchronize() == cudaSuccess) return;
    throw std::runtime_error("calibration stopped: measuring " + key + " left the GPU in an unrecoverable error state (" +
                             cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                             "); every later CUDA call in this process would fail. Run again; if it happens again, "
                             "look for Xid errors in the kernel log (dmesg) and in nvidia-smi -q");
}

}  // namespace

Ceilings calibrate_cuda(CudaDevice& dev, bool quick, const MeasureFn& measure,
                        const std::function<void(const std::string&)>& progress) {
    Ceilings c;
    c.threads = dev.threads();
    c.quick = quick;
    const unsigned fma_blocks = static_cast<unsigned>(dev.sms()) * 8;  // 64 warps per SM
    const unsigned stream_blocks = static_cast<unsigned>(dev.sms()) * 8;

    // Each ceiling below is measured or skipped with its reason; only a broken device stops them.
    auto measured = [&](const std::string& key, const std::function<void()>& measure_it) {
        return measure_or_skip(c, key, measure_it, [&key] { check_not_sticky(key); }, progress);
    };

    // The launch cost is not skipped: a device that cannot run an empty kernel cannot run anything.
    progress("calibrating: launch cost");
    {
        Workload w;
        w.name = "calibrate.empty_kernel";
        Measurement m = measure(w, [](Stream& s) { launch_empty(native(s)); });
        c.launch_s = ceiling_from(m, 0, "s", "empty kernel <<<1,1>>> launched back to back on one stream");
    }
    measured("launch_graph", [&] {
        const int kernels = 100;
        cudaGraphExec_t graph = make_empty_kernel_graph(native(dev.stream()), kernels);
        Workload g;
        g.name = "calibrate.empty_graph";
        Measurement mg;
        try {
            mg = measure(g, [graph](Stream& s) { LAB_CUDA(cudaGraphLaunch(graph, native(s))); });
        } catch (...) {
            cudaGraphExecDestroy(graph);
            throw;
        }
        LAB_CUDA(cudaGraphExecDestroy(graph));
        c.launch_graph_s = ceiling_from(mg, 0, "s", "a CUDA graph of 100 empty kernels replayed back to back, per kernel");
        c.launch_graph_s.value /= kernels;
    });

    // SIMT FMA peaks; the fp32 one also measures the SM clock.
    BufferPtr out = dev.allocate(static_cast<std::size_t>(fma_blocks) * 256 * 8);
    struct Simt { const char* pipe; FmaType type; int min_cc; };
    const Simt simt[] = {{"fp32.simt", FmaType::fp32, 0}, {"fp64.simt", FmaType::fp64, 0},
                         {"fp16.simt", FmaType::fp16x2, 0}, {"bf16.simt", FmaType::bf16x2, 80}};
    for (const auto& p : simt) {
        if (dev.compute_capability() < p.min_cc) continue;
        progress(std::string("calibrating: ") + p.pipe + " FMA peak");
        // fp64 runs at 1/2 (datacentre) to 1/64 (consumer) of fp32: fewer iterations keep it short.
        long long it = quick ? 8192 : 32768;
        if (p.type == FmaType::fp64) it /= 4;
        Workload w;
        w.name = std::string("calibrate.fma_") + p.pipe;
        w.flops = fma_peak_flops(p.type, it, fma_blocks);
        w.bytes = fma_peak_bytes(p.type, fma_blocks);
        w.pipe = p.pipe;
        void* o = out->data();
        FmaType t = p.type;
        measured(std::string("flops.") + p.pipe, [&] {
            Measurement m = measure(w, [=](Stream& s) { launch_fma_peak(native(s), t, o, it, fma_blocks); });
            c.flops_per_s[p.pipe] = ceiling_from(m, w.flops, "FLOP/s",
                                                 std::to_string(stream_kernels::kGpuFmaChains) + " independent " + p.pipe +
                                                     " FMA chains per thread, " + std::to_string(fma_blocks) +
                                                     " blocks of " + std::to_string(stream_kernels::kGpuBlock) + " threads");
            if (p.type == FmaType::fp32) {
                double hz = dev.last_sample_clock_hz();
                if (std::isfinite(hz))
                    c.clock_hz = plain_ceiling(hz, "Hz", "SM clock during the fp32 FMA peak: clock64() over %globaltimer, median over SMs");
            }
        });
    }
    if (c.clock_hz.method.empty())
        c.clock_hz = plain_ceiling(dev.nominal_clock_hz(), "Hz", "cudaDevAttrClockRate (the clock could not be measured)");

    // Tensor pipes through cuBLASLt GEMM, square, large enough to fill the device.
    struct Tensor { const char* pipe; Dtype dtype; std::size_t in_bytes, out_bytes; const char* unit; };
    const Tensor tensor[] = {{"tf32.tensor", Dtype::tf32, 4, 4, "FLOP/s"},   {"fp16.tensor", Dtype::fp16, 2, 2, "FLOP/s"},
                             {"bf16.tensor", Dtype::bf16, 2, 2, "FLOP/s"},   {"fp8.tensor", Dtype::fp8_e4m3, 1, 2, "FLOP/s"},
                             {"int8.tensor", Dtype::int8, 1, 4, "OP/s"},     {"fp64.tensor", Dtype::fp64, 8, 8, "FLOP/s"}};
    for (const auto& t : tensor) {
        if (!dev.supports(t.dtype)) continue;
        // FP64 GEMM runs on tensor cores (DMMA) only on sm_80 and sm_90.
        if (t.dtype == Dtype::fp64 && dev.compute_capability() != 80 && dev.compute_capability() != 90) continue;
        progress(std::string("calibrating: ") + t.pipe + " GEMM");
        const int n = t.dtype == Dtype::fp64 ? (quick ? 2048 : 4096) : (quick ? 4096 : 8192);
        const std::size_t nn = static_cast<std::size_t>(n) * n;
        Workload w;
        w.name = std::string("calibrate.gemm_") + t.pipe;
        w.flops = 2.0 * n * static_cast<double>(n) * n;
        w.bytes = static_cast<double>(nn) * (2 * t.in_bytes + t.out_bytes);
        w.pipe = t.pipe;
        measured(std::string("flops.") + t.pipe, [&] {
            BufferPtr a = dev.allocate(nn * t.in_bytes), b = dev.allocate(nn * t.in_bytes), cc = dev.allocate(nn * t.out_bytes);
            // Bounded pseudo-random inputs, the same every run: on zeros the tensor cores run
            // ~13% faster than on any real data (bf16 8192^3 on an H200: 894 TFLOP/s on zeros,
            // 769-798 on random data).
            launch_fill_random(native(dev.stream()), a->data(), nn, t.dtype, 1);
            launch_fill_random(native(dev.stream()), b->data(), nn, t.dtype, 2);
            dev.stream().synchronize();
            Gemm g{t.dtype, n, n, n, a->data(), b->data(), cc->data(), 1.0, 0.0};
            Measurement m = measure(w, [&dev, g](Stream& s) { dev.gemm(s, g); });
            c.flops_per_s[t.pipe] = ceiling_from(m, w.flops, t.unit,
                                                 "cuBLASLt GEMM " + std::to_string(n) + "^3 in " + to_string(t.dtype) +
                                                     ", inputs pseudo-random in " +
                                                     (t.dtype == Dtype::int8 ? "[-128, 127]" : "[-1, 1)") +
                                                     (t.dtype == Dtype::fp8_e4m3 ? ", fast accumulation" : ""));
        });
    }

    // Bandwidth: one allocation; read streams all of it, copy halves it, triad thirds it, so
    // every kernel's working set is the whole buffer (>= 4x L2, >= 1 GiB).
    std::size_t l2 = dev.facts().last_level_cache_bytes();
    std::size_t total = std::max<std::size_t>(4 * l2, std::size_t{1} << 30);
    total = total / (3 * 64) * (3 * 64);
    progress("calibrating: bandwidth over " + std::to_string(total >> 20) + " MiB");
    BufferPtr buf = dev.allocate(total), sink = dev.allocate(256);
    float* base = buf->as<float>();
    float* sk = sink->as<float>();
    const std::size_t n = total / 4, half = n / 2, third = n / 3 / 4 * 4;
    auto bandwidth = [&](const char* name, double bytes, const Launch& launch, const std::string& how) {
        Workload w;
        w.name = std::string("calibrate.") + name;
        w.bytes = bytes;
        measured(std::string("bandwidth.") + name, [&] {
            Measurement m = measure(w, launch);
            c.bandwidth_bytes_per_s[name] = ceiling_from(m, bytes, "B/s",
                                                         how + " over " + std::to_string(total >> 20) +
                                                             " MiB; bytes the kernel asks for (no write-allocate)");
        });
    };
    bandwidth("read", 4.0 * n, [=](Stream& s) { launch_read(native(s), base, n, sk, stream_blocks); },
              "sum of a[i], 16-byte loads, " + std::to_string(kStreamLoadsInFlight) + " in flight per thread");
    bandwidth("copy", 8.0 * half, [=](Stream& s) { launch_copy(native(s), base, base + half, half, stream_blocks); },
              "a[i] = b[i], 16-byte accesses, " + std::to_string(kStreamLoadsInFlight) + " loads in flight per thread");
    bandwidth("triad", 12.0 * third,
              [=](Stream& s) { launch_triad(native(s), base, base + third, base + 2 * third, 0.5f, third, stream_blocks); },
              "a[i] = b[i] + s*c[i], 16-byte accesses, " + std::to_string(kStreamLoadsInFlight) + " loads in flight per thread");
    bandwidth("memcpy", 8.0 * half, [=](Stream& s) {
        LAB_CUDA(cudaMemcpyAsync(base, base + half, half * 4, cudaMemcpyDeviceToDevice, native(s)));
    }, "cudaMemcpyAsync device-to-device (the reference the copy kernel is compared with; not a roof)");

    set_best_bandwidth(c);  // read, copy and triad: memcpy is a reference, not a roof
    return c;
}

}  // namespace lab::cuda
