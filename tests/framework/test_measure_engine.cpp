// The measurement engine on a scripted device: a stream whose clock advances only by what each
// invocation is told to cost, so stopping rules, batching, cold mode and statistics are checked
// exactly, without real timing.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <utility>
#include <chrono>
#include <thread>

#include "lab/backend.hpp"
#include "ceiling_trust.hpp"
#include "measure_engine.hpp"
#include "run_record.hpp"
#include "trace_windows.hpp"

using namespace lab;
using Catch::Matchers::WithinRel;

namespace {

class ScriptedEvent : public Event {
public:
    double seconds_since(const Event& start) const override {
        return t - static_cast<const ScriptedEvent&>(start).t;
    }
    double t = 0;
};

class ScriptedStream : public Stream {
public:
    void launch(HostKernel k) override { k(0, 1); }
    void record(Event& e) override { static_cast<ScriptedEvent&>(e).t = now; }
    void synchronize() override {}
    void* native_handle() override { return nullptr; }
    double now = 0;
};

class ScriptedDevice : public Device {
public:
    DeviceKind kind() const override { return DeviceKind::cpu; }
    const DeviceFacts& facts() const override { return facts_; }
    Stream& stream() override { return stream_; }
    int threads() const override { return 1; }
    BufferPtr allocate(std::size_t) override { return nullptr; }
    EventPtr create_event() override { return std::make_unique<ScriptedEvent>(); }
    void copy(Stream&, void*, const void*, std::size_t) override {}
    void flush_caches(Stream&) override { ++flushes; }
    bool supports(Dtype) const override { return false; }
    void gemm(Stream&, const Gemm&) override {}
    double last_sample_clock_ratio() override { return clock_ratio ? clock_ratio() : 1.0; }
    void begin_sample(Stream&, TimingMode) override { ++brackets; }

    // A GPU-like tracer: every launch while tracing is one device event named by the "GPU".
    bool trace_begin(std::string&) override { return tracing = true; }
    std::vector<TraceEvent> trace_end() override {
        tracing = false;
        return std::exchange(traced, {});
    }
    void traced_kernel(const std::string& name) {
        if (!tracing) return;
        TraceEvent e;
        e.name = name;
        e.category = "kernel";
        e.start_s = stream_.now;
        traced.push_back(e);
    }

    ScriptedStream stream_;
    DeviceFacts facts_;
    bool tracing = false;
    std::vector<TraceEvent> traced;
    int flushes = 0;
    int brackets = 0;  // samples begun
    std::function<double()> clock_ratio;
};

EngineSettings fast_settings() {
    EngineSettings s = engine_defaults(DeviceKind::cpu, false);
    s.min_time_s = 0;      // virtual time passes, wall time barely does
    s.max_time_s = 0.05;   // wall-clock limit for the noisy case
    return s;
}

}  // namespace

TEST_CASE("summary statistics of samples are exact", "[engine]") {
    TimeStats t = summarise({4, 1, 3, 2});
    CHECK(t.samples == 4);
    CHECK(t.min == 1);
    CHECK(t.max == 4);
    CHECK(t.median == 2.5);
    CHECK(t.mean == 2.5);
    CHECK_THAT(t.stddev, WithinRel(std::sqrt(5.0 / 3.0), 1e-12));
    CHECK_THAT(t.noise, WithinRel(std::sqrt(5.0 / 3.0) / 2.5, 1e-12));
    CHECK(summarise({7}).median == 7);
    CHECK(summarise({}).samples == 0);
}

TEST_CASE("a steady kernel stops at the minimum sample count with the noise target met", "[engine]") {
    ScriptedDevice dev;
    Workload w;
    w.name = "steady";
    w.mode = TimingMode::cold;
    int calls = 0;
    Measurement m = measure_workload(dev, w, [&](Stream&) { ++calls; dev.stream_.now += 1e-3; }, fast_settings());
    CHECK(m.time.noise_met);
    CHECK(m.time.samples == fast_settings().min_samples);
    CHECK_THAT(m.time.median, WithinRel(1e-3, 1e-9));
    CHECK(m.time.batch == 1);
    CHECK(dev.flushes == calls);  // cold: one flush per invocation, warm-up included
}

TEST_CASE("hot mode times a batch sized from the warm-up and reports time per invocation", "[engine]") {
    ScriptedDevice dev;
    Workload w;
    w.name = "tiny";
    EngineSettings s = fast_settings();
    s.hot_batch_s = 1e-3;
    Measurement m = measure_workload(dev, w, [&](Stream&) { dev.stream_.now += 2e-6; }, s);
    // about hot_batch_s per batch: between half of it and all of it
    CHECK(m.time.batch * 2e-6 >= 0.5e-3);
    CHECK(m.time.batch * 2e-6 <= 1e-3);
    CHECK_THAT(m.time.median, WithinRel(2e-6, 1e-6));
    CHECK(dev.flushes == 0);
}

namespace {

// A hot workload whose first call takes `first_s` and every later one 1 µs, batched at 1 ms.
Measurement measure_after_slow_first(double first_s) {
    ScriptedDevice dev;
    Workload w;
    w.name = "slow first call";
    EngineSettings s = fast_settings();
    s.hot_batch_s = 1e-3;
    int calls = 0;
    return measure_workload(dev, w, [&](Stream&) { dev.stream_.now += (calls++ == 0) ? first_s : 1e-6; }, s);
}

}  // namespace

TEST_CASE("a slow first invocation does not shrink the hot batch", "[engine]") {
    // The first call pays page faults (50 µs).
    Measurement m = measure_after_slow_first(50e-6);
    CHECK(m.time.batch >= 500);
    CHECK_THAT(m.time.median, WithinRel(1e-6, 1e-6));
}

TEST_CASE("a first invocation long enough to time alone is tried again before the batch is left at one", "[engine]") {
    // The first call waits out a preemption (5 ms, longer than a whole batch).
    Measurement m = measure_after_slow_first(5e-3);
    CHECK(m.time.batch >= 500);
    CHECK_THAT(m.time.median, WithinRel(1e-6, 1e-6));
    // A kernel that is long every time is still timed one call at a time.
    Workload w;
    w.name = "slow";
    EngineSettings s = fast_settings();
    s.hot_batch_s = 1e-3;
    ScriptedDevice slow_dev;
    Measurement slow = measure_workload(slow_dev, w, [&](Stream&) { slow_dev.stream_.now += 5e-3; }, s);
    CHECK(slow.time.batch == 1);
}

TEST_CASE("a noisy kernel samples until the time limit and says the noise target was not met", "[engine]") {
    ScriptedDevice dev;
    Workload w;
    w.name = "noisy";
    w.mode = TimingMode::cold;
    int i = 0;
    Measurement m = measure_workload(dev, w, [&](Stream&) { dev.stream_.now += (++i % 2) ? 1e-3 : 2e-3; }, fast_settings());
    CHECK_FALSE(m.time.noise_met);
    CHECK(m.time.samples > fast_settings().min_samples);
    CHECK(m.time.noise > 0.2);
    CHECK(m.time.total_s >= 0.05);
}

TEST_CASE("samples taken while the clock is throttled are discarded", "[engine]") {
    ScriptedDevice dev;
    int n = 0;
    dev.clock_ratio = [&] { return (++n % 3 == 0) ? 0.5 : 1.0; };  // every third sample throttled
    Workload w;
    w.name = "throttled";
    w.mode = TimingMode::cold;
    EngineSettings s = fast_settings();
    s.max_time_s = 30;  // the back-off sleeps between discarded samples take real time
    Measurement m = measure_workload(dev, w, [&](Stream&) { dev.stream_.now += 1e-3; }, s);
    CHECK(m.time.discarded > 0);
    CHECK(m.time.samples >= fast_settings().min_samples);
}

TEST_CASE("a cold workload runs once outside the sample bracket before its first sample", "[engine]") {
    // A GPU holds a cold sample's stream behind a blocking kernel; a kernel launched there for
    // the first time would wait behind it for its module to load.
    ScriptedDevice dev;
    Workload w;
    w.name = "cold";
    w.mode = TimingMode::cold;
    int calls = 0, brackets_at_first_call = -1;
    Measurement m = measure_workload(dev, w, [&](Stream&) {
        if (calls++ == 0) brackets_at_first_call = dev.brackets;
        dev.stream_.now += 1e-3;
    }, fast_settings());
    CHECK(brackets_at_first_call == 0);
    CHECK(dev.brackets == calls - 1);  // every later invocation is a bracketed sample
    CHECK(m.time.samples == fast_settings().min_samples);
}

namespace {

// One calibration step as a backend runs it: measure `launch` with the engine, store the ceiling.
bool calibrate_step(ScriptedDevice& dev, Ceilings& c, const std::string& pipe, const Launch& launch,
                    const std::function<void()>& check_device, std::vector<std::string>& said) {
    EngineSettings s = fast_settings();
    s.max_time_s = 0.02;  // a throttled workload gives up after 4 of these (plus its back-off sleeps)
    return measure_or_skip(c, "flops." + pipe, [&] {
        Workload w;
        w.name = "calibrate." + pipe;
        w.flops = 1e9;
        w.pipe = pipe;
        c.flops_per_s[pipe] = ceiling_from(measure_workload(dev, w, launch, s), w.flops, "FLOP/s", "test kernel");
    }, check_device, [&](const std::string& line) { said.push_back(line); });
}

}  // namespace

TEST_CASE("a clock held below the throttle ratio through every back-off is the device's own: its samples are kept and said",
          "[engine]") {
    // A GPU at its power cap under a tensor-core GEMM, or an idle SM's clock under empty
    // launches: discarding forever would lose the workload (or a ceiling, and with it a lesson).
    ScriptedDevice dev;
    dev.clock_ratio = [] { return 0.6; };
    Workload w;
    w.name = "power_capped";
    EngineSettings s = fast_settings();
    s.max_time_s = 30;  // long enough for every back-off: the rule, not the time limit, decides
    Measurement m = measure_workload(dev, w, [&](Stream&) { dev.stream_.now += 1e-3; }, s);
    CHECK(m.time.clock_held_low);
    CHECK(m.time.discarded == 0);
    CHECK(m.time.samples >= s.min_samples);
    CHECK(m.time.median == Approx(1e-3));
    CHECK(m.time.noise_met);  // after 4.5 s of back-offs it sampled on as usual: the time limit did not end it
    CHECK_THAT(describe_samples(m), Catch::Contains("kept, as the clock the device holds under this load"));
    // The record says so, and only where it happened.
    CHECK(record::to_json(m)["time_s"]["clock_held_low"] == true);
    CHECK(record::measurement_from_json(record::to_json(m)).time.clock_held_low);
    dev.clock_ratio = nullptr;
    Measurement plain = measure_workload(dev, w, [&](Stream&) { dev.stream_.now += 1e-3; }, fast_settings());
    CHECK_FALSE(record::to_json(plain)["time_s"].contains("clock_held_low"));
    CHECK_THAT(describe_samples(plain), !Catch::Contains("kept"));
}

TEST_CASE("a ceiling whose workload fails is skipped with its reason; one run throttled throughout is kept, said", "[engine]") {
    ScriptedDevice dev;
    Ceilings c;
    std::vector<std::string> said;
    int checks = 0;
    auto healthy = [&] { ++checks; };
    auto steady = [&](Stream&) { dev.stream_.now += 1e-3; };

    CHECK(calibrate_step(dev, c, "fp32.simt", steady, healthy, said));
    // A GEMM cuBLASLt refuses: the workload throws.
    CHECK_FALSE(calibrate_step(dev, c, "fp8.tensor", [](Stream&) {
        throw std::runtime_error("cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED");
    }, healthy, said));
    // Every sample below the throttle ratio until the time limit: measured at that clock, said.
    dev.clock_ratio = [] { return 0.5; };
    CHECK(calibrate_step(dev, c, "bf16.tensor", steady, healthy, said));
    dev.clock_ratio = nullptr;
    CHECK(calibrate_step(dev, c, "fp64.simt", steady, healthy, said));

    CHECK(c.has_flops("fp32.simt"));
    CHECK(c.has_flops("fp64.simt"));
    CHECK_FALSE(c.has_flops("fp8.tensor"));
    REQUIRE(c.has_flops("bf16.tensor"));
    CHECK_THAT(c.flops_per_s["bf16.tensor"].method, Catch::Contains("below the throttle ratio"));
    CHECK(c.skipped.size() == 1);
    CHECK_THAT(c.skipped["flops.fp8.tensor"], Catch::Contains("CUBLAS_STATUS_NOT_SUPPORTED"));
    CHECK(checks == 1);  // the device was checked after the failure, and only then
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0], Catch::StartsWith("skipped flops.fp8.tensor: "));
}

TEST_CASE("a failure that broke the device stops the calibration with the device's error", "[engine]") {
    ScriptedDevice dev;
    Ceilings c;
    std::vector<std::string> said;
    auto sticky = [] { throw std::runtime_error("calibration stopped: cudaErrorIllegalAddress"); };
    CHECK_THROWS_WITH(calibrate_step(dev, c, "fp16.simt", [](Stream&) { throw std::runtime_error("launch failed"); }, sticky, said),
                      Catch::Contains("cudaErrorIllegalAddress"));
    CHECK(c.skipped.empty());
    CHECK(said.empty());
}

TEST_CASE("engine defaults differ per device and mode and quick runs are cheaper", "[engine]") {
    for (auto kind : {DeviceKind::cpu, DeviceKind::cuda}) {
        EngineSettings full = engine_defaults(kind, false), quick = engine_defaults(kind, true);
        CHECK(quick.max_time_s < full.max_time_s);
        CHECK(quick.min_samples <= full.min_samples);
        CHECK(full.min_samples >= 10);
        CHECK(to_json(full).at("name").get<std::string>() != to_json(quick).at("name").get<std::string>());
    }
}

namespace {

// A backend that measures no ceiling on its own: a run's roof-margin check raises a beaten roof
// to the workload's rate, since nothing can re-measure it.
class NoProbeBackend : public Backend {
public:
    std::string unavailable_reason() override { return ""; }
    std::unique_ptr<Device> open(const BackendOptions&) override { return nullptr; }
    Ceilings calibrate(Device&, bool, const MeasureFn&, const std::function<void(const std::string&)>&) override { return {}; }
};

Measurement streaming(const std::string& name, double bytes, double seconds) {
    Measurement m;
    m.workload.name = name;
    m.workload.bytes = bytes;
    m.workload.level = "dram";
    m.time.median = seconds;
    return m;
}

}  // namespace

TEST_CASE("a workload that fits in the last-level cache does not raise the DRAM roof it beats", "[engine]") {
    ScriptedDevice dev;
    dev.facts_.caches = {{3, "Unified", 32ull << 20, 2}};
    NoProbeBackend backend;
    Ceilings start;
    for (const char* k : {"update", "best"}) start.bandwidth_bytes_per_s[k] = {.value = 25e9, .unit = "B/s", .trusted = true};
    std::vector<std::string> notes;
    InRunCeilings run(backend, dev, start, [](const Workload&, const Launch&) { return Measurement{}; },
                      [&](const std::string& n) { notes.push_back(n); });
    // 02.02's embedding: 262 kB at 101 GB/s, from L2.
    const Measurement small = streaming("embedding", 262144, 262144 / 101e9);
    run.after_workload(small, {small});
    CHECK(run.current().peak_bandwidth() == 25e9);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("'embedding' ran at 101 GB/s") && Catch::Contains("so it ran from cache; the DRAM ceiling is left"));
    // Timed cold (caches flushed before each invocation) it cannot have run from the cache.
    Measurement cold = small;
    cold.workload.mode = TimingMode::cold;
    CHECK(held_to_dram_roof(cold.workload, dev.facts()));
    CHECK_FALSE(held_to_dram_roof(small.workload, dev.facts()));
    // One that streams 4x the cache at that rate does raise it: the ceiling was what was wrong.
    const Measurement large = streaming("big", 4.0 * (32ull << 20), 4.0 * (32ull << 20) / 101e9);
    run.after_workload(large, {small, large});
    CHECK(run.current().peak_bandwidth() > 100e9);
}

TEST_CASE("in a trace, the kernels of lab's own ceiling re-measures take the re-measure's name; a lesson's keep theirs", "[engine]") {
    // A GPU names its kernels itself (stream_read, cuBLASLt's): without this, the references a run
    // measures beside each workload sat among the lesson's kernels and outvoted its launches.
    ScriptedDevice dev;
    TraceWindows trace(dev);
    std::string why;
    REQUIRE(trace.begin(why));
    EngineSettings s = fast_settings();
    s.max_time_s = 0.01;
    auto kernel = [&](const char* name) {
        return [&dev, name](Stream&) { dev.stream_.now += 1e-3, dev.traced_kernel(name); };
    };
    // A probe's set-up (its buffer's memset, a GEMM's random fills) runs traced, just before the
    // reference's measuring pauses the tracer: it is the re-measure's too.
    dev.traced_kernel("fill_random");
    Workload reference;
    reference.name = "calibrate.read";
    measure_workload(dev, reference, kernel("stream_read"), s, &trace);
    Workload lesson;
    lesson.name = "triad";
    measure_workload(dev, lesson, kernel("triad_kernel"), s, &trace);
    int references = 0, lessons = 0;
    for (const TraceEvent& e : trace.finish()) {
        if (e.host) continue;
        if (e.name == "calibrate.read") {
            ++references;
            CHECK((e.args.at("kernel") == "stream_read" || e.args.at("kernel") == "fill_random"));
        } else {
            CHECK(e.name == "triad_kernel");
            CHECK(e.args.count("kernel") == 0);
            ++lessons;
        }
    }
    CHECK(references >= 2);  // the fill and at least one read
    CHECK(lessons >= 1);
}

namespace {

// A backend whose launch probe works once, then fails (a GPU short of memory beside the lesson).
class FailingAgainBackend : public Backend {
public:
    int probes = 0;
    std::string unavailable_reason() override { return ""; }
    std::unique_ptr<Device> open(const BackendOptions&) override { return nullptr; }
    Ceilings calibrate(Device&, bool, const MeasureFn&, const std::function<void(const std::string&)>&) override { return {}; }
    std::optional<Measurement> probe_ceiling(Device&, const std::string& key, const MeasureFn&) override {
        if (key != "launch" || ++probes > 1) return std::nullopt;
        Measurement m;
        m.workload.name = "calibrate.empty_kernel";
        m.time.median = 2e-6;
        return m;
    }
};

}  // namespace

TEST_CASE("a ceiling measured earlier in a run that cannot be measured again is said once, and asked again", "[engine]") {
    ScriptedDevice dev;
    FailingAgainBackend backend;
    Ceilings start;
    start.launch_s = {.value = 2e-6, .unit = "s", .trusted = true};
    std::vector<std::string> notes;
    InRunCeilings run(backend, dev, start, [](const Workload&, const Launch&) { return Measurement{}; },
                      [&](const std::string& n) { notes.push_back(n); });
    Measurement w;
    w.workload.name = "tiny";
    w.time.median = 1e-5;
    run.after_workload(w, {w});
    CHECK(notes.empty());
    for (int i = 0; i < 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // past the 1.5 s a reference is shared
        run.after_workload(w, {w});
    }
    CHECK(backend.probes == 3);  // a failed probe is not remembered as "no kernel": asked again
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("the launch ceiling, measured earlier in this run, could not be measured again"));
}
