// The measurement engine (see measure_engine.hpp).
#include "measure_engine.hpp"

#include "machine_load.hpp"
#include "run_record.hpp"
#include "trace_label.hpp"
#include "trace_windows.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace lab {

EngineSettings engine_defaults(DeviceKind kind, bool quick) {
    EngineSettings s;
    if (kind == DeviceKind::cpu) {
        // A shared VM's noise is a few percent between samples: a tighter target only burns the
        // time limit. Quick runs settle for five samples and stop within 0.4 s. A hot sample lasts
        // at least 25 ms (50 ms full): several of the scheduler's time slices, so that when another
        // process shares a core with one of the team's threads, every sample sees about the same
        // share of that core instead of a kernel's time jumping with the slice it landed in.
        // The full noise target, 5% like the quick one, is what a quiet VM's streams reach (their
        // samples spread 2-7% here): at 10 samples or more the median is then known to about 2%. A
        // tighter target marked most quiet calibrations untrusted.
        s = quick ? EngineSettings{"cpu.quick", 1, 5, 0.02, 0.05, 0.4, 0.025, 0.75}
                  : EngineSettings{"cpu.full", 1, 10, 0.25, 0.05, 3.0, 0.05, 0.75};
    } else {
        // NVBench's rule (10 samples, 0.5 s, 0.5% noise) with a lesson-sized time limit.
        s = quick ? EngineSettings{"cuda.quick", 2, 5, 0.05, 0.02, 0.5, 0.005, 0.75}
                  : EngineSettings{"cuda.full", 3, 10, 0.5, 0.005, 3.0, 0.05, 0.75};
    }
    return s;
}

TimeStats summarise(std::vector<double> v) {
    TimeStats t;
    t.samples = static_cast<int>(v.size());
    if (v.empty()) return t;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    t.min = v.front();
    t.max = v.back();
    t.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    t.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    double ss = 0;
    for (double x : v) ss += (x - t.mean) * (x - t.mean);
    t.stddev = n > 1 ? std::sqrt(ss / (n - 1)) : 0;
    t.noise = t.mean > 0 ? t.stddev / t.mean : 0;
    return t;
}

namespace {

// Throttled samples in a row, none above, after which the low clock is taken as the device's own.
constexpr int kThrottledBeforeHeld = 8;

// The traced window after a workload's samples: one invocation (or cold sample), then as many
// more back to back as fit in kWindowEvents at the first one's count, at most a timed batch. On
// lab's track: the untraced measuring before it and the window itself, each saying what it was.
template <class Sample>
void trace_window(TraceWindows& trace, const Workload& w, double untraced_from, std::size_t kept_before, int batch, int samples,
                  Sample&& sample) {
    const double measured = trace.now();
    trace.add_range("measuring " + w.name + " (not traced)", "untraced", untraced_from, measured,
                    {{"timed samples", std::to_string(samples)}, {"invocations per sample", std::to_string(batch)}});
    trace.resume();
    sample(1);
    trace.pause();
    int invocations = 1;
    const std::size_t per = std::max<std::size_t>(1, trace.last_segment_events());
    const int more = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), TraceWindows::kWindowEvents / per)) - 1;
    if (more >= 1 && w.mode == TimingMode::hot) {
        trace.resume();
        sample(more);
        trace.pause();
        invocations += more;
    }
    // lab's own re-measure of a ceiling: its kernels take its name, so a trace and `lab trace`
    // set them apart from the lesson's (a CPU's are named after the workload already).
    // From before the pause that began its measuring: that pause took in its set-up too (a
    // probe's allocation memsets and random fills), traced since the workload before it.
    if (w.name.rfind("calibrate.", 0) == 0) trace.name_device_events_from(kept_before, w.name);
    trace.add_range(w.name, "workload", measured, trace.now(),
                    {{"traced invocations", std::to_string(invocations)},
                     {"note", "traced after its timed samples, which were not traced (tracing slows every launch)"}});
}

}  // namespace

Measurement measure_workload(Device& device, const Workload& w, const Launch& launch,
                             const EngineSettings& s, TraceWindows* trace) {
    // Kernels the workload launches without a name of their own are named after it in a trace
    // (the CPU device's): "read", not "host kernel". Scoped, so it ends however this returns.
    const TraceLabelScope label(w.name);
    using clock = std::chrono::steady_clock;
    Stream& stream = device.stream();
    EventPtr e0 = device.create_event(), e1 = device.create_event();
    const bool cold = w.mode == TimingMode::cold;
    const double max_time = w.max_time_s > 0 ? w.max_time_s : s.max_time_s;
    auto t_start = clock::now();
    const bool tracing = trace && trace->active();
    const double untraced_from = tracing ? trace->now() : 0;
    const std::size_t kept_before = tracing ? trace->events_kept() : 0;
    if (tracing) trace->pause();
    // Tracing resumes however this returns: a workload that throws (every sample throttled, a
    // failed launch the lesson catches) must not leave the rest of the lesson untraced.
    struct ResumeTrace {
        TraceWindows* trace;
        ~ResumeTrace() {
            try {
                if (trace) trace->resume();
            } catch (...) {
                // Out of memory restarting the tracer: the trace ends here; the run goes on.
            }
        }
    } resume_trace{tracing ? trace : nullptr};

    // One timed invocation (or batch): returns seconds per invocation.
    auto sample = [&](int batch) {
        if (cold) device.flush_caches(stream);
        device.begin_sample(stream, w.mode);
        stream.record(*e0);
        for (int i = 0; i < batch; ++i) launch(stream);
        stream.record(*e1);
        device.end_sample(stream, w.mode);
        stream.synchronize();
        return e1->seconds_since(*e0) / batch;
    };

    // Warm-up, which also sizes the hot batch: the first invocation pays page faults and cold
    // caches, so the batch grows from it (at most 16x a step) until one batch lasts about
    // hot_batch_s, rather than trusting that one slow invocation.
    int batch = 1;
    if (cold) {
        // A cold workload's first invocation runs outside the device's sample bracket: a GPU
        // loads a kernel's module at its first launch (CUDA's lazy loading), and behind the
        // blocking kernel that holds a cold sample's stream that load would wait until the
        // blocking kernel gave up (nvbench issues 240/241).
        device.flush_caches(stream);
        launch(stream);
        stream.synchronize();
    } else {
        // A first invocation that looks long enough to time alone is tried again: one preemption
        // or page-fault storm must not leave a microsecond kernel timed one call at a time
        // (02.12's mystery_1_x2 was, batch 1 at 509% noise, beside its x1 in batches of 3776, so
        // the doubling ratio compared two timing methods). The faster of the two sizes the batch.
        double per = sample(1);
        if (per >= 0.5 * s.hot_batch_s) per = std::min(per, sample(1));
        for (int step = 0; step < 12 && per * batch < 0.5 * s.hot_batch_s && batch < 1000000; ++step) {
            double want = s.hot_batch_s / std::max(per, 1e-9);
            batch = static_cast<int>(std::clamp(want, 1.0, std::min(16.0 * batch, 1e6)));
            per = sample(batch);
        }
    }
    for (int i = 1; i < s.warmup; ++i) sample(batch);

    std::vector<double> samples, throttled;
    int discarded = 0;
    bool clock_held_low = false;
    if (w.telemetry) device.telemetry_begin();
    const LoadMeter load;
    auto sampling_start = clock::now();
    auto backoff = std::chrono::milliseconds(50);
    bool met = false;
    for (;;) {
        double t = sample(batch);
        double ratio = device.last_sample_clock_ratio();
        if (!clock_held_low && std::isfinite(ratio) && ratio < s.throttle_ratio) {
            // A throttled clock measures the cooling, not the kernel: drop it and let it recover.
            ++discarded;
            throttled.push_back(t);
            std::this_thread::sleep_for(backoff);
            backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
            // Still low after every back-off (4.5 s of rests, the last ones a second each) and never
            // above: that is the clock this device holds under this load (a GPU at its power cap
            // under a tensor-core GEMM, an idle SM's clock under tiny launches), not a passing
            // state. Its samples are kept, and said, rather than the workload or a ceiling lost.
            if (samples.empty() && discarded >= kThrottledBeforeHeld) clock_held_low = true;
        } else {
            samples.push_back(t);
        }
        if (clock_held_low && discarded > 0) {
            samples.insert(samples.end(), throttled.begin(), throttled.end());
            discarded = 0;
        }
        double elapsed = std::chrono::duration<double>(clock::now() - sampling_start).count();
        int n = static_cast<int>(samples.size());
        if (n >= s.min_samples && elapsed >= s.min_time_s && summarise(samples).noise <= s.noise_target) {
            met = true;
            break;
        }
        // The time limit ends sampling once there is something to report; a kernel slower than
        // the whole limit still gets two samples (or four limits' worth, whichever comes first).
        if (elapsed >= max_time && (n >= std::min(2, s.min_samples) || elapsed >= 4 * max_time)) break;
    }
    if (samples.empty()) {
        // Out of time with every sample throttled: as above, the device's own clock.
        samples = throttled;
        discarded = 0;
        clock_held_low = true;
    }
    Measurement m;
    m.workload = w;
    record::order_params_as_recorded(m.workload);
    m.load = load.others_cpus();
    if (w.telemetry) m.telemetry = device.telemetry_end();
    if (tracing) trace_window(*trace, w, untraced_from, kept_before, batch, static_cast<int>(samples.size()), sample);
    if (!w.counters.empty())
        m.counters = device.measure_counters([&] { launch(stream); stream.synchronize(); }, w.counters, m.counters_note);
    m.time = summarise(samples);
    m.time.batch = batch;
    m.time.discarded = discarded;
    m.time.clock_held_low = clock_held_low;
    m.time.noise_met = met;
    m.time.total_s = std::chrono::duration<double>(clock::now() - t_start).count();
    return m;
}

nlohmann::json to_json(const EngineSettings& s) {
    return {{"name", s.name},
            {"warmup", s.warmup},
            {"min_samples", s.min_samples},
            {"min_time_s", s.min_time_s},
            {"noise_target", s.noise_target},
            {"max_time_s", s.max_time_s},
            {"hot_batch_s", s.hot_batch_s},
            {"throttle_ratio", s.throttle_ratio}};
}

}  // namespace lab
