// NVML telemetry, opened with dlopen (libnvidia-ml.so.1 ships with the driver; no header in the
// toolkit, so the few functions used are declared here). Read only: it never sets clocks, limits
// or modes. A background thread samples while a workload runs.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace lab::cuda {

class NvmlTelemetry {
public:
    // For the CUDA device with this PCI bus ID (cudaDeviceGetPCIBusId). nullptr with `note` set
    // when NVML is missing or the device is not found.
    static std::unique_ptr<NvmlTelemetry> open(const std::string& pci_bus_id, std::string& note);
    ~NvmlTelemetry();

    // Starts sampling every `period_s` seconds on a background thread.
    void begin(double period_s = 0.02);
    // Stops and returns summaries over the samples, in SI units:
    //   "utilization_gpu.mean" / ".max" (ratio 0..1: fraction of time a kernel ran, NOT of SMs busy),
    //   "utilization_memory.mean", "sm_clock_hz.mean" / ".min", "mem_clock_hz.mean",
    //   "power_w.mean" / ".max", "memory_used_bytes.max", "energy_j" (from the energy counter),
    //   "clock_event_reasons.any" (bitwise OR of nvmlClocksEventReasons seen), "samples".
    std::map<std::string, double> end();
    // Static facts: "driver_version", "name", "uuid", "power_limit_w", "max_sm_clock_hz", ...
    std::map<std::string, std::string> facts();

    NvmlTelemetry(const NvmlTelemetry&) = delete;
    NvmlTelemetry& operator=(const NvmlTelemetry&) = delete;

private:
    NvmlTelemetry();
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace lab::cuda
