// Calibration of a CUDA device: the SM clock (clock64 over %globaltimer during the FFMA peak), the
// launch cost (empty kernel back to back on a stream, and replayed from a CUDA graph), FLOP/s per
// pipe and dtype (FFMA/DFMA/HFMA2 kernels for the simt pipes; cuBLASLt GEMM on pseudo-random data
// for the tensor pipes) and DRAM bandwidth (read, copy and triad kernels with 16-byte accesses, and
// cudaMemcpy device-to-device for reference) over at least 4x the L2. Each ceiling says how it was
// measured; one that cannot be measured is skipped with its reason (Ceilings::skipped).
// Each ceiling's kernel is a member of CeilingKernels, which Backend::probe_ceiling measures too,
// so a run measures a ceiling again (a reference beside a workload, a re-measure) by the very
// method calibration used: the empty kernel, every FLOP/s pipe and the read, copy and triad
// kernels. The graph launch cost, the SM clock and cudaMemcpy are calibration's alone.
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
void check_not_sticky(const std::string& key, const char* what_stops) {
    cudaError_t synced = cudaDeviceSynchronize();
    cudaError_t last = cudaGetLastError();  // reads and clears a non-sticky error
    cudaError_t e = synced != cudaSuccess ? synced : last;
    if (e == cudaSuccess || cudaDeviceSynchronize() == cudaSuccess) return;
    throw std::runtime_error(std::string(what_stops) + " stopped: measuring " + key + " left the GPU in an unrecoverable error state (" +
                             cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                             "); every later CUDA call in this process would fail. Run again; if it happens again, "
                             "look for Xid errors in the kernel log (dmesg) and in nvidia-smi -q");
}

// The GEMMs' size: square, large enough to fill the device; fp64 runs slower, so smaller.
int gemm_n(Dtype dtype, bool quick) { return dtype == Dtype::fp64 ? (quick ? 2048 : 4096) : (quick ? 4096 : 8192); }

// One allocation serves the read, copy and triad kernels: read streams all of it, copy halves it,
// triad thirds it, so every kernel's working set is the whole buffer (>= 4x L2, >= 1 GiB).
std::size_t bandwidth_bytes(const CudaDevice& dev) {
    std::size_t l2 = dev.facts().last_level_cache_bytes();
    std::size_t total = std::max<std::size_t>(4 * l2, std::size_t{1} << 30);
    return total / (3 * 64) * (3 * 64);
}

// A bandwidth ceiling's method: how its kernel moves the bytes, then over what.
std::string over_buffer(const std::string& how, std::size_t bytes) {
    return how + " over " + std::to_string(bytes >> 20) + " MiB; bytes the kernel asks for (no write-allocate)";
}

}  // namespace

CeilingKernels::CeilingKernels(CudaDevice& device)
    : dev_(device),
      device_index_(device.index()),
      blocks_(static_cast<unsigned>(device.sms()) * 8),  // 64 warps per SM
      stream_bytes_(bandwidth_bytes(device)) {
    // fp64 stores the widest value per thread of any FMA peak.
    fma_out_ = dev_.allocate(static_cast<std::size_t>(fma_peak_bytes(FmaType::fp64, blocks_)));
    sink_ = dev_.allocate(256);
}

bool CeilingKernels::measures(const std::string& c) const {
    return has_ceiling_kernel(c, dev_.compute_capability(), [this](Dtype d) { return dev_.supports(d); });
}

float* CeilingKernels::bandwidth_buffer() {
    if (!stream_) stream_ = dev_.allocate(stream_bytes_);
    return stream_->as<float>();
}

Measurement CeilingKernels::measure(const std::string& c, bool quick, const MeasureFn& measure) {
    if (!measures(c)) throw std::invalid_argument("the CUDA backend has no kernel for the ceiling '" + c + "' on this GPU");
    if (c == "launch") {
        Workload w;
        w.name = "calibrate.empty_kernel";
        return measure(w, [](Stream& s) { launch_empty(native(s)); });
    }
    if (c.rfind("bandwidth.", 0) == 0) return measure_bandwidth(c.substr(10), measure);
    const std::string pipe = c.substr(6);  // flops.<pipe>
    if (const SimtPipe* p = find_simt_pipe(pipe)) return measure_fma(*p, quick, measure);
    return measure_gemm(*find_tensor_pipe(pipe), quick, measure);
}

Measurement CeilingKernels::measure_fma(const SimtPipe& p, bool quick, const MeasureFn& measure) {
    // fp64 runs at 1/2 (datacentre) to 1/64 (consumer) of fp32: fewer iterations keep it short.
    long long it = quick ? 8192 : 32768;
    if (p.type == FmaType::fp64) it /= 4;
    Workload w;
    w.name = std::string("calibrate.fma_") + p.pipe;
    w.flops = fma_peak_flops(p.type, it, blocks_);
    w.bytes = fma_peak_bytes(p.type, blocks_);
    w.pipe = p.pipe;
    void* o = fma_out_->data();
    const FmaType t = p.type;
    const unsigned blocks = blocks_;
    return measure(w, [=](Stream& s) { launch_fma_peak(native(s), t, o, it, blocks); });
}

Measurement CeilingKernels::measure_gemm(const TensorPipe& t, bool quick, const MeasureFn& measure) {
    const int n = gemm_n(t.dtype, quick);
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    Workload w;
    w.name = std::string("calibrate.gemm_") + t.pipe;
    w.flops = 2.0 * n * static_cast<double>(n) * n;
    w.bytes = static_cast<double>(nn) * (2 * t.in_bytes + t.out_bytes);
    w.pipe = t.pipe;
    // Allocated and filled for this measurement and freed after it, as calibration always did: a
    // tf32 8192^3 GEMM's operands are 768 MiB the lesson may need.
    BufferPtr a = dev_.allocate(nn * t.in_bytes), b = dev_.allocate(nn * t.in_bytes), c = dev_.allocate(nn * t.out_bytes);
    // Bounded pseudo-random inputs, the same every run: on zeros the tensor cores run ~13% faster
    // than on any real data (bf16 8192^3 on an H200: 894 TFLOP/s on zeros, 769-798 on random data).
    launch_fill_random(native(dev_.stream()), a->data(), nn, t.dtype, 1);
    launch_fill_random(native(dev_.stream()), b->data(), nn, t.dtype, 2);
    dev_.stream().synchronize();
    Gemm g{t.dtype, n, n, n, a->data(), b->data(), c->data(), 1.0, 0.0};
    CudaDevice& dev = dev_;
    return measure(w, [&dev, g](Stream& s) { dev.gemm(s, g); });
}

Measurement CeilingKernels::measure_bandwidth(const std::string& kernel, const MeasureFn& measure) {
    float* base = bandwidth_buffer();
    float* sink = sink_->as<float>();
    const std::size_t n = stream_bytes_ / 4, half = n / 2, third = n / 3 / 4 * 4;
    const unsigned blocks = blocks_;
    Workload w;
    w.name = "calibrate." + kernel;
    if (kernel == "read") {
        w.bytes = 4.0 * n;
        return measure(w, [=](Stream& s) { launch_read(native(s), base, n, sink, blocks); });
    }
    if (kernel == "copy") {
        w.bytes = 8.0 * half;
        return measure(w, [=](Stream& s) { launch_copy(native(s), base, base + half, half, blocks); });
    }
    w.bytes = 12.0 * third;  // triad: measures() knows no other kernel
    return measure(w, [=](Stream& s) { launch_triad(native(s), base, base + third, base + 2 * third, 0.5f, third, blocks); });
}

Ceiling CeilingKernels::ceiling(const std::string& c, bool quick, const Measurement& m) const {
    if (c == "launch") return ceiling_from(m, 0, "s", "empty kernel <<<1,1>>> launched back to back on one stream");
    if (c.rfind("bandwidth.", 0) == 0) {
        const std::string kernel = c.substr(10), loads = std::to_string(kStreamLoadsInFlight);
        const std::string how = kernel == "read"   ? "sum of a[i], 16-byte loads, " + loads + " in flight per thread"
                                : kernel == "copy" ? "a[i] = b[i], 16-byte accesses, " + loads + " loads in flight per thread"
                                                   : "a[i] = b[i] + s*c[i], 16-byte accesses, " + loads + " loads in flight per thread";
        return ceiling_from(m, m.workload.bytes, "B/s", over_buffer(how, stream_bytes_));
    }
    const std::string pipe = c.substr(6);  // flops.<pipe>
    if (const SimtPipe* p = find_simt_pipe(pipe))
        return ceiling_from(m, m.workload.flops, "FLOP/s",
                            std::to_string(stream_kernels::kGpuFmaChains) + " independent " + p->pipe +
                                " FMA chains per thread, " + std::to_string(blocks_) + " blocks of " +
                                std::to_string(stream_kernels::kGpuBlock) + " threads");
    const TensorPipe& t = *find_tensor_pipe(pipe);
    return ceiling_from(m, m.workload.flops, t.unit,
                        "cuBLASLt GEMM " + std::to_string(gemm_n(t.dtype, quick)) + "^3 in " + to_string(t.dtype) +
                            ", inputs pseudo-random in " + (t.dtype == Dtype::int8 ? "[-128, 127]" : "[-1, 1)") +
                            (t.dtype == Dtype::fp8_e4m3 ? ", fast accumulation" : ""));
}

Ceilings calibrate_cuda(CeilingKernels& k, bool quick, const MeasureFn& measure,
                        const std::function<void(const std::string&)>& progress) {
    CudaDevice& dev = k.device();
    Ceilings c;
    c.threads = dev.threads();
    c.quick = quick;

    // Each ceiling below is measured or skipped with its reason; only a broken device stops them.
    auto measured = [&](const std::string& key, const std::function<void()>& measure_it) {
        return measure_or_skip(c, key, measure_it, [&key] { check_not_sticky(key, "calibration"); }, progress);
    };
    // A ceiling measured by its kernel, as a probe measures it.
    auto by_its_kernel = [&](const std::string& key) { return k.ceiling(key, quick, k.measure(key, quick, measure)); };

    // The launch cost is not skipped: a device that cannot run an empty kernel cannot run anything.
    progress("calibrating: launch cost");
    c.launch_s = by_its_kernel("launch");
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
    for (const auto& p : kSimtPipes) {
        if (!on_device(p, dev.compute_capability())) continue;
        progress(std::string("calibrating: ") + p.pipe + " FMA peak");
        const std::string key = std::string("flops.") + p.pipe;
        measured(key, [&] {
            c.flops_per_s[p.pipe] = by_its_kernel(key);
            if (p.type == FmaType::fp32) {
                double hz = dev.last_sample_clock_hz();
                if (std::isfinite(hz))
                    c.clock_hz = plain_ceiling(hz, "Hz", "SM clock during the fp32 FMA peak: clock64() over %globaltimer, median over SMs");
            }
        });
    }
    if (c.clock_hz.method.empty())
        c.clock_hz = plain_ceiling(dev.nominal_clock_hz(), "Hz", "cudaDevAttrClockRate (the clock could not be measured)");

    // Tensor pipes through cuBLASLt GEMM.
    for (const auto& t : kTensorPipes) {
        if (!on_device(t, dev.compute_capability(), dev.supports(t.dtype))) continue;
        progress(std::string("calibrating: ") + t.pipe + " GEMM");
        const std::string key = std::string("flops.") + t.pipe;
        measured(key, [&] { c.flops_per_s[t.pipe] = by_its_kernel(key); });
    }

    // Bandwidth over one buffer, allocated here: a GPU without the memory for it stops calibration.
    const std::size_t total = k.bandwidth_buffer_bytes();
    progress("calibrating: bandwidth over " + std::to_string(total >> 20) + " MiB");
    float* base = k.bandwidth_buffer();
    for (const char* kernel : kBandwidthKernels) {
        const std::string key = std::string("bandwidth.") + kernel;
        measured(key, [&] { c.bandwidth_bytes_per_s[kernel] = by_its_kernel(key); });
    }
    // cudaMemcpy of the copy kernel's halves: the reference it is compared with, calibration's alone.
    const std::size_t half = total / 4 / 2;
    Workload memcpy_w;
    memcpy_w.name = "calibrate.memcpy";
    memcpy_w.bytes = 8.0 * half;
    measured("bandwidth.memcpy", [&] {
        Measurement m = measure(memcpy_w, [=](Stream& s) {
            LAB_CUDA(cudaMemcpyAsync(base, base + half, half * 4, cudaMemcpyDeviceToDevice, native(s)));
        });
        c.bandwidth_bytes_per_s["memcpy"] =
            ceiling_from(m, memcpy_w.bytes, "B/s",
                         over_buffer("cudaMemcpyAsync device-to-device (the reference the copy kernel is compared with; not a roof)", total));
    });

    k.release_buffers();  // the lesson has the device's memory to itself
    k.calibrated(quick);
    set_best_bandwidth(c);  // read, copy and triad: memcpy is a reference, not a roof
    return c;
}

std::optional<Measurement> probe_cuda(CeilingKernels& k, const std::string& key, const MeasureFn& measure) {
    if (!k.measures(key)) return std::nullopt;
    struct Release {
        CeilingKernels& k;
        ~Release() { k.release_buffers(); }  // a probe leaves the lesson the device's memory
    } release{k};
    try {
        return k.measure(key, k.probe_quick(), measure);
    } catch (...) {
        check_not_sticky(key, "the run");  // a broken GPU stops the run with its own error
        // Anything else (out of memory beside the lesson's buffers, cuBLASLt NOT_SUPPORTED at
        // this size) concerns this reference alone: the run goes on with the calibrated ceiling,
        // as for a ceiling the device has no kernel for, rather than failing the workload it was
        // measured beside.
        return std::nullopt;
    }
}

}  // namespace lab::cuda
