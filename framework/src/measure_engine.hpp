// The measurement engine (DESIGN.md, "Measurement"): warm up; sample until a minimum sample
// count and time are reached and the relative noise is under target, or a time limit; cold
// samples flush caches first, hot samples time a batch of back-to-back invocations. One engine
// serves every device: it only uses the Device interface.
#pragma once

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab {

struct EngineSettings {
    std::string name;            // "cpu.full", "cuda.quick", ...
    int warmup = 1;              // invocations before sampling (hot: batches)
    int min_samples = 10;
    double min_time_s = 0.25;    // sampling time before the noise test may stop it
    double noise_target = 0.02;  // relative standard deviation
    double max_time_s = 3;       // per workload, unless the workload sets its own
    double hot_batch_s = 0.01;   // a hot sample's batch is sized to about this long
    double throttle_ratio = 0.75;  // discard samples whose clock ratio is below this
};

// Defaults per device and mode, documented in docs/measurement.md.
EngineSettings engine_defaults(DeviceKind kind, bool quick);

class TraceWindows;

// Measures one workload on `device`'s stream. With a trace running, the warm-up and the timed
// samples are not traced; one window of invocations after them is (trace_windows.hpp).
Measurement measure_workload(Device& device, const Workload& workload, const Launch& launch,
                             const EngineSettings& settings, TraceWindows* trace = nullptr);

// Median, min, max, mean, stddev and noise of samples (seconds per invocation).
TimeStats summarise(std::vector<double> samples);

nlohmann::json to_json(const EngineSettings& s);

}  // namespace lab
