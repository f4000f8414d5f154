// The CUDA device (see cuda_device.hpp).
#include "cuda_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/cuda_check.hpp"
#include "cupti_counters.hpp"
#include "cupti_trace.hpp"
#include "device_kernels.hpp"
#include "driver_probe.hpp"
#include "nvml_telemetry.hpp"

namespace lab::cuda {

namespace {

// A cold sample's spin kernel gives up after this long, so a host that dies mid-sample cannot
// leave the GPU spinning.
constexpr unsigned long long kSpinTimeoutNs = 10'000'000'000ull;

int attribute(cudaDeviceAttr a, int device) {
    int v = 0;
    LAB_CUDA(cudaDeviceGetAttribute(&v, a, device));
    return v;
}

class DeviceBuffer : public Buffer {
public:
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        LAB_CUDA(cudaMalloc(&data_, std::max<std::size_t>(bytes, 256)));
        LAB_CUDA(cudaMemset(data_, 0, std::max<std::size_t>(bytes, 256)));
        // cudaMemset runs on the legacy stream, asynchronously to the host, and the device's
        // stream is non-blocking (it does not wait for the legacy stream): without this wait a
        // fill or kernel queued next could be overwritten by zeros still being written.
        LAB_CUDA(cudaStreamSynchronize(nullptr));
    }
    ~DeviceBuffer() override { cudaFree(data_); }  // no throw from a destructor; errors resurface on the next call
    void* data() override { return data_; }
    std::size_t bytes() const override { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_;
};

class PinnedBuffer : public Buffer {
public:
    explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
        LAB_CUDA(cudaHostAlloc(&data_, std::max<std::size_t>(bytes, 64), cudaHostAllocDefault));
        std::memset(data_, 0, std::max<std::size_t>(bytes, 64));
    }
    ~PinnedBuffer() override { cudaFreeHost(data_); }
    void* data() override { return data_; }
    std::size_t bytes() const override { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_;
};

class CudaEvent : public Event {
public:
    CudaEvent() { LAB_CUDA(cudaEventCreate(&event_)); }
    ~CudaEvent() override { cudaEventDestroy(event_); }
    double seconds_since(const Event& start) const override {
        float ms = 0;
        LAB_CUDA(cudaEventElapsedTime(&ms, static_cast<const CudaEvent&>(start).event_, event_));
        return ms * 1e-3;
    }
    cudaEvent_t event_ = nullptr;
};

struct HostCall {
    HostKernel kernel;
    CudaStream* stream;
};

void CUDART_CB run_host_call(void* p) {
    auto* call = static_cast<HostCall*>(p);
    try {
        call->kernel(0, 1);
    } catch (...) {
        call->stream->store_error(std::current_exception());
    }
    delete call;
}

}  // namespace

CudaStream::CudaStream() { LAB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

CudaStream::~CudaStream() {
    if (stream_) cudaStreamDestroy(stream_);
}

void CudaStream::store_error(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = e;
}

void CudaStream::launch(HostKernel kernel) {
    auto* call = new HostCall{std::move(kernel), this};
    cudaError_t e = cudaLaunchHostFunc(stream_, run_host_call, call);
    if (e != cudaSuccess) {
        delete call;
        throw_cuda_error(e, "cudaLaunchHostFunc", __FILE__, __LINE__);
    }
}

void CudaStream::record(Event& event) {
    auto* e = dynamic_cast<CudaEvent*>(&event);
    if (!e) throw std::invalid_argument("a CUDA stream records only CUDA events");
    LAB_CUDA(cudaEventRecord(e->event_, stream_));
}

void CudaStream::synchronize() {
    LAB_CUDA(cudaStreamSynchronize(stream_));
    std::lock_guard lock(mutex_);
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

CudaDevice::CudaDevice(int index) : index_(index) {
    int count = 0;
    LAB_CUDA(cudaGetDeviceCount(&count));
    if (index < 0 || index >= count)
        throw std::invalid_argument("--device cuda:" + std::to_string(index) + ": there are " + std::to_string(count) +
                                    " CUDA devices (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
    LAB_CUDA(cudaSetDevice(index));
    cudaDeviceProp p{};
    LAB_CUDA(cudaGetDeviceProperties(&p, index));
    cc_ = p.major * 10 + p.minor;
    sms_ = attribute(cudaDevAttrMultiProcessorCount, index);
    // CUDA 13 removed cudaDeviceProp's clock fields: attributes are in kHz.
    nominal_clock_hz_ = attribute(cudaDevAttrClockRate, index) * 1e3;
    l2_bytes_ = static_cast<std::size_t>(attribute(cudaDevAttrL2CacheSize, index));

    facts_.name = p.name;
    facts_.vendor = "NVIDIA";
    facts_.compute_units = sms_;
    facts_.threads = sms_ * attribute(cudaDevAttrMaxThreadsPerMultiProcessor, index);
    facts_.memory_bytes = p.totalGlobalMem;
    facts_.simd = "sm_" + std::to_string(cc_);
    facts_.features = {"sm_" + std::to_string(cc_), "tensor_cores"};
    // L1 per SM, as the runtime can state it: the most shared memory an SM gives (228 KiB on
    // H100/H200). L1 and shared memory are one array (256 KiB per SM there); whatever shared memory
    // does not take is L1, so a kernel with none (02.03's chase) may cache up to the whole array.
    // No attribute gives the array's size, and a table by compute capability would go stale: this
    // errs low. 02.03's level finding uses it as the size past which L2 is looked for
    // (pointer_chase::find_levels), where 228 or 256 KiB find the same plateau; its read sweep
    // splits a set across the grid only past twice it per SM (pointer_chase::read_grid), so the
    // low figure is covered there too.
    facts_.caches.push_back({1, "Data", static_cast<std::uint64_t>(attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, index)), 1});
    facts_.extra["l1_bytes_is"] = "max shared memory per SM (the L1/shared array is larger: 256 KiB per SM on H100/H200)";
    facts_.caches.push_back({2, "Unified", l2_bytes_, sms_});
    char bus[32] = {0};
    LAB_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, index));
    int runtime = 0;
    LAB_CUDA(cudaRuntimeGetVersion(&runtime));
    int driver = driver_cuda_version();
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    facts_.extra["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    facts_.extra["sm_clock_max_hz"] = std::to_string(nominal_clock_hz_);
    facts_.extra["memory_clock_hz"] = std::to_string(attribute(cudaDevAttrMemoryClockRate, index) * 1e3);
    facts_.extra["memory_bus_width_bits"] = std::to_string(attribute(cudaDevAttrGlobalMemoryBusWidth, index));
    facts_.extra["l2_bytes"] = std::to_string(l2_bytes_);
    facts_.extra["pci_bus_id"] = bus;
    facts_.extra["cuda_runtime"] = version(runtime);
    facts_.extra["cuda_driver"] = version(driver);
    // Memory bandwidth from the memory clock and bus width: DDR moves two words per clock.
    double theoretical = 2.0 * attribute(cudaDevAttrMemoryClockRate, index) * 1e3 *
                         attribute(cudaDevAttrGlobalMemoryBusWidth, index) / 8.0;
    facts_.extra["memory_bandwidth_from_clock_and_bus_bytes_per_s"] = std::to_string(theoretical);

    stream_ = std::make_unique<CudaStream>();
    gemm_ = std::make_unique<LtGemm>();
    flush_bytes_ = std::max<std::size_t>(2 * l2_bytes_, 8u << 20);
    LAB_CUDA(cudaMalloc(&flush_, flush_bytes_));

    LAB_CUDA(cudaHostAlloc(&flag_host_, sizeof(int), cudaHostAllocMapped));
    LAB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev_), flag_host_, 0));
    const std::size_t clock_bytes = 2 * kMaxSms * 2 * sizeof(unsigned long long);
    LAB_CUDA(cudaHostAlloc(&clocks_host_, clock_bytes, cudaHostAllocMapped));
    LAB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&clocks_dev_), clocks_host_, 0));
    std::memset(clocks_host_, 0, clock_bytes);
    *flag_host_ = 1;
}

CudaDevice::~CudaDevice() {
    // Release a held stream first: nothing may wait on the spin kernel once we are gone.
    if (flag_host_) *flag_host_ = 1;
    if (stream_) cudaStreamSynchronize(stream_->get());
    tracer_.reset();
    profiler_.reset();
    nvml_.reset();
    gemm_.reset();
    stream_.reset();
    if (flush_) cudaFree(flush_);
    if (flag_host_) cudaFreeHost(flag_host_);
    if (clocks_host_) cudaFreeHost(clocks_host_);
}

BufferPtr CudaDevice::allocate(std::size_t bytes) { return std::make_unique<DeviceBuffer>(bytes); }

BufferPtr CudaDevice::allocate_host(std::size_t bytes) { return std::make_unique<PinnedBuffer>(bytes); }

void CudaDevice::copy(Stream& s, void* dst, const void* src, std::size_t bytes) {
    // Unified addressing tells the driver which way the copy goes.
    LAB_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(s.native_handle())));
}

EventPtr CudaDevice::create_event() { return std::make_unique<CudaEvent>(); }

void CudaDevice::flush_caches(Stream& s) {
    // Writing twice the L2 with a changing value evicts whatever the last kernel left in it.
    flush_value_ = (flush_value_ + 1) & 0xff;
    LAB_CUDA(cudaMemsetAsync(flush_, flush_value_, flush_bytes_, static_cast<cudaStream_t>(s.native_handle())));
}

bool CudaDevice::supports(Dtype dtype) const { return gemm_supported(DeviceKind::cuda, facts_, dtype) && LtGemm::supports(dtype, cc_); }

void CudaDevice::gemm(Stream& s, const Gemm& g) {
    if (!supports(g.dtype))
        throw std::invalid_argument(std::string(to_string(g.dtype)) + " GEMM needs a newer GPU than compute capability " +
                                    std::to_string(cc_ / 10) + "." + std::to_string(cc_ % 10));
    gemm_->run(static_cast<cudaStream_t>(s.native_handle()), g);
}

void CudaDevice::begin_sample(Stream& s, TimingMode mode) {
    cudaStream_t st = static_cast<cudaStream_t>(s.native_handle());
    std::memset(clocks_host_, 0, 2 * kMaxSms * 2 * sizeof(unsigned long long));
    if (mode == TimingMode::cold) {
        // NVBench's blocking kernel: the stream waits behind it while the host enqueues the timed
        // work, so the start event is not delayed by launch latency. The engine has run the
        // workload once outside this bracket, so its kernels' modules are loaded: with CUDA's lazy
        // loading a first launch would wait behind the spinner until it timed out (nvbench #240).
        *reinterpret_cast<volatile int*>(flag_host_) = 0;
        launch_spin_until_released(st, flag_dev_, kSpinTimeoutNs);
    }
    // The clock is read after the spinner, as nvbench does, so the sample's clock window covers the
    // timed work and not the time the host took to enqueue it.
    launch_clock_sample(st, clocks_dev_, 0, static_cast<unsigned>(sms_));
}

void CudaDevice::end_sample(Stream& s, TimingMode mode) {
    cudaStream_t st = static_cast<cudaStream_t>(s.native_handle());
    if (mode == TimingMode::cold) *reinterpret_cast<volatile int*>(flag_host_) = 1;
    launch_clock_sample(st, clocks_dev_, 1, static_cast<unsigned>(sms_));
    sampled_ = true;
}

double CudaDevice::last_sample_clock_hz() {
    if (!sampled_) return std::nan("");
    std::vector<double> rates;
    const volatile unsigned long long* c = clocks_host_;
    for (int sm = 0; sm < kMaxSms; ++sm) {
        unsigned long long c0 = c[(0 * kMaxSms + sm) * 2], t0 = c[(0 * kMaxSms + sm) * 2 + 1];
        unsigned long long c1 = c[(1 * kMaxSms + sm) * 2], t1 = c[(1 * kMaxSms + sm) * 2 + 1];
        if (t0 && t1 > t0 && c1 > c0) rates.push_back(static_cast<double>(c1 - c0) / (static_cast<double>(t1 - t0) * 1e-9));
    }
    if (rates.empty()) return std::nan("");
    std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
    return rates[rates.size() / 2];
}

double CudaDevice::last_sample_clock_ratio() {
    double hz = last_sample_clock_hz();
    return std::isfinite(hz) && nominal_clock_hz_ > 0 ? hz / nominal_clock_hz_ : std::nan("");
}

std::map<std::string, double> CudaDevice::measure_counters(const std::function<void()>& run,
                                                           const std::vector<std::string>& metrics, std::string& note) {
    if (!profiler_) profiler_ = std::make_unique<RangeProfiler>(index_);
    // Every replay pass starts from a cold L2, as nvbench's do: without it a pass finds in the L2
    // (50-60 MB on an H100/H200) what the previous pass or the timed samples left there, and DRAM
    // bytes read low. The flush writes 2x the L2; a read of the same buffer then evicts its dirty
    // lines before the range opens, so their write-back is not counted as the workload's.
    auto cold_l2 = [this] {
        flush_caches(*stream_);
        float* buffer = static_cast<float*>(flush_);  // also the read's sink: it is never written
        launch_read(stream_->get(), buffer, flush_bytes_ / 4, buffer, static_cast<unsigned>(sms_) * 8);
        stream_->synchronize();
    };
    return profiler_->measure(run, metrics, note, cold_l2);
}

void CudaDevice::telemetry_begin() {
    if (!nvml_tried_) {
        nvml_tried_ = true;
        nvml_ = NvmlTelemetry::open(facts_.extra["pci_bus_id"], nvml_note_);
        if (nvml_)
            for (const auto& [k, v] : nvml_->facts()) facts_.extra["nvml_" + k] = v;
        else
            facts_.extra["telemetry"] = "unavailable: " + nvml_note_;
    }
    if (nvml_) nvml_->begin();
}

std::map<std::string, double> CudaDevice::telemetry_end() {
    if (!nvml_) return {};
    return nvml_->end();
}

bool CudaDevice::trace_begin(std::string& note) {
    if (!tracer_) tracer_ = std::make_unique<ActivityTracer>();
    return tracer_->start(note);
}

std::vector<TraceEvent> CudaDevice::trace_end() {
    if (!tracer_) return {};
    // CUPTI's flush does not wait for the GPU, and a record of work still running when the flush
    // hands its buffer back is never completed: wait for the device first, as the CPU device's
    // trace_end waits for its queue. An error here resurfaces on the next CUDA call.
    cudaDeviceSynchronize();
    std::size_t dropped = 0, untimed = 0;
    auto events = tracer_->stop(&dropped, &untimed);
    auto marker = [&](std::size_t n, const char* why) {
        TraceEvent e;
        e.name = "dropped " + std::to_string(n) + " events (" + why + ")";
        e.category = "marker";
        e.host = true;
        events.push_back(e);
    };
    if (dropped) marker(dropped, "trace buffer full");
    if (untimed) marker(untimed, "CUPTI recorded no start or end time");
    return events;
}

}  // namespace lab::cuda
