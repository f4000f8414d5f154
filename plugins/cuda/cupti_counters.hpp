// Hardware counters with the CUPTI Range Profiler (cupti_range_profiler.h + cupti_profiler_host.h;
// not the deprecated Event/Metric APIs): user ranges, user replay, one range per measurement.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lab::cuda {

// The metric names lessons ask for are in lab/counters.hpp.

class RangeProfiler {
public:
    // For CUDA device `device_index` (the current device of the calling thread's context).
    explicit RangeProfiler(int device_index);
    ~RangeProfiler();
    RangeProfiler(const RangeProfiler&) = delete;
    RangeProfiler& operator=(const RangeProfiler&) = delete;

    // Values of `metrics` over one invocation. `run` enqueues the work and synchronises; it is
    // called once per replay pass (several times when the metrics need several passes), each time
    // after `before_pass` (outside the profiled range: an L2 flush, so every pass starts alike).
    // Returns {} with `note` set when counters are unavailable (driver refuses: "ERR_NVGPUCTRPERM",
    // a virtual machine without profiling, an unknown metric name); never throws for those.
    std::map<std::string, double> measure(const std::function<void()>& run, const std::vector<std::string>& metrics,
                                          std::string& note, const std::function<void()>& before_pass = {});

private:
    struct State;
    std::unique_ptr<State> state_;
    int device_ = 0;
};

}  // namespace lab::cuda
