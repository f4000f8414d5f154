// The CUDA device: a dedicated non-blocking stream, CUDA events, device buffers, an L2 flush, the
// NVBench-style sample bracket (a stream-holding spin kernel for cold samples; SM clock over
// %globaltimer per sample to detect throttling), cuBLASLt GEMM, CUPTI traces and counters, NVML
// telemetry. Every CUDA call is checked.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <exception>

#include "cublaslt_gemm.hpp"
#include "lab/device.hpp"

namespace lab::cuda {

class ActivityTracer;
class RangeProfiler;
class NvmlTelemetry;

class CudaStream : public Stream {
public:
    CudaStream();
    ~CudaStream() override;
    void launch(HostKernel kernel) override;   // a host callback on the stream, run as kernel(0, 1)
    void record(Event& event) override;
    void synchronize() override;
    void* native_handle() override { return stream_; }
    cudaStream_t get() const { return stream_; }

    // Errors thrown by host callbacks, rethrown at the next synchronize().
    void store_error(std::exception_ptr e);

private:
    cudaStream_t stream_ = nullptr;
    std::mutex mutex_;
    std::exception_ptr error_;
};

class CudaDevice : public Device {
public:
    explicit CudaDevice(int index);
    ~CudaDevice() override;

    DeviceKind kind() const override { return DeviceKind::cuda; }
    const DeviceFacts& facts() const override { return facts_; }
    Stream& stream() override { return *stream_; }
    int threads() const override { return 1; }
    BufferPtr allocate(std::size_t bytes) override;
    BufferPtr allocate_host(std::size_t bytes) override;
    void copy(Stream& stream, void* dst, const void* src, std::size_t bytes) override;
    EventPtr create_event() override;
    void flush_caches(Stream& stream) override;
    bool supports(Dtype dtype) const override;
    void gemm(Stream& stream, const Gemm& g) override;
    void begin_sample(Stream& stream, TimingMode mode) override;
    void end_sample(Stream& stream, TimingMode mode) override;
    double last_sample_clock_ratio() override;
    std::map<std::string, double> measure_counters(const std::function<void()>& run,
                                                   const std::vector<std::string>& metrics, std::string& note) override;
    void telemetry_begin() override;
    std::map<std::string, double> telemetry_end() override;
    bool trace_begin(std::string& note) override;
    std::vector<TraceEvent> trace_end() override;

    int index() const { return index_; }
    int compute_capability() const { return cc_; }
    int sms() const { return sms_; }
    double nominal_clock_hz() const { return nominal_clock_hz_; }
    // The SM clock measured over the last sample (clock64 over %globaltimer), Hz; NaN if unknown.
    double last_sample_clock_hz();

private:
    int index_;
    int cc_ = 0;
    int sms_ = 0;
    double nominal_clock_hz_ = 0;
    std::size_t l2_bytes_ = 0;
    DeviceFacts facts_;
    std::unique_ptr<CudaStream> stream_;
    std::unique_ptr<LtGemm> gemm_;
    void* flush_ = nullptr;
    std::size_t flush_bytes_ = 0;
    int flush_value_ = 0;
    // Host-mapped memory shared with the sample-bracket kernels: the release flag, and per-SM
    // {clock64, globaltimer} at the start and end of a sample.
    int* flag_host_ = nullptr;
    int* flag_dev_ = nullptr;
    unsigned long long* clocks_host_ = nullptr;
    unsigned long long* clocks_dev_ = nullptr;
    bool sampled_ = false;
    std::unique_ptr<ActivityTracer> tracer_;
    std::unique_ptr<RangeProfiler> profiler_;
    std::unique_ptr<NvmlTelemetry> nvml_;
    std::string nvml_note_;
    bool nvml_tried_ = false;
};

}  // namespace lab::cuda
