// The CPU device: a pinned thread team behind an in-order stream, 2 MiB-aligned buffers
// first-touched by the threads that will use them, OpenBLAS for GEMM, and traces of what the
// stream ran (kernels, GEMMs, event records) and what the host asked (launches, syncs).
#pragma once

#include <memory>
#include <vector>

#include "lab/cpu_kernels.hpp"
#include "lab/device.hpp"
#include "proc_telemetry.hpp"
#include "thread_team.hpp"

namespace lab::cpu {

// Facts from sysfs and procfs (cpu_facts.cpp). `cpus` are the CPU ids the team runs on.
DeviceFacts read_cpu_facts(const std::vector<int>& cpus, Simd simd);

// The CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> allowed_cpus();

// The core clock from a dependent chain of integer adds (one per cycle), on the calling thread.
double measure_core_clock_hz();

class CpuDevice : public Device {
public:
    explicit CpuDevice(int threads);
    ~CpuDevice() override;

    DeviceKind kind() const override { return DeviceKind::cpu; }
    const DeviceFacts& facts() const override { return facts_; }
    Stream& stream() override { return *stream_; }
    int threads() const override { return team_->size(); }
    BufferPtr allocate(std::size_t bytes) override;
    EventPtr create_event() override;
    void copy(Stream& stream, void* dst, const void* src, std::size_t bytes) override;
    void flush_caches(Stream& stream) override;
    bool supports(Dtype dtype) const override { return gemm_supported(DeviceKind::cpu, facts_, dtype); }
    void gemm(Stream& stream, const Gemm& g) override;
    std::map<std::string, double> measure_counters(const std::function<void()>&, const std::vector<std::string>&,
                                                   std::string& note) override {
        note = "the CPU device reads no hardware counters (analytic counts only)";
        return {};
    }
    // Always available: the stream records its own tasks. Times are seconds from trace_begin.
    bool trace_begin(std::string& note) override;
    std::vector<TraceEvent> trace_end() override;
    // /proc's view of the cores and this process while a workload is timed (proc_telemetry.hpp).
    void telemetry_begin() override { telemetry_.begin(); }
    std::map<std::string, double> telemetry_end() override { return telemetry_.end(); }

    Simd simd() const { return simd_; }
    TaskStream& task_stream() { return *stream_; }

private:
    Simd simd_;
    DeviceFacts facts_;
    std::unique_ptr<ThreadTeam> team_;
    std::unique_ptr<TaskStream> stream_;
    BufferPtr flush_buffer_;
    ProcTelemetry telemetry_;
};

}  // namespace lab::cpu
