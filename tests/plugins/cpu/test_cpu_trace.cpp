// Tracing on the CPU device, loaded as the host loads it: what a trace holds (kernels, GEMMs,
// event records on the stream; launches and synchronisations on the host), that launches pair
// with their tasks by correlation ID, that task starts follow their launches, and that each
// trace starts empty. No duration is asserted beyond being non-negative.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure_engine.hpp"
#include "plugin_loader.hpp"
#include "trace_label.hpp"
#include "trace_windows.hpp"
#include "test_support.hpp"

using namespace lab;

namespace {

struct Fixture {
    LoadedBackend backend = load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<Device> device = backend.backend->open({});
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

std::vector<const TraceEvent*> with(const std::vector<TraceEvent>& events, const std::string& category, bool host) {
    std::vector<const TraceEvent*> out;
    for (const auto& e : events)
        if (e.category == category && e.host == host) out.push_back(&e);
    return out;
}

// Three kernels, a GEMM, an event record, then a synchronisation.
std::vector<TraceEvent> traced_work(Device& d) {
    const int m = 16, n = 8, k = 4;
    BufferPtr a = d.allocate(m * k * 4), b = d.allocate(k * n * 4), c = d.allocate(m * n * 4);
    EventPtr ev = d.create_event();
    std::string note = "unchanged";
    REQUIRE(d.trace_begin(note));
    CHECK(note.empty());
    for (int i = 0; i < 3; ++i) d.stream().launch([](int, int) {});
    d.gemm(d.stream(), {Dtype::fp32, m, n, k, a->data(), b->data(), c->data(), 1.0, 0.0});
    d.stream().record(*ev);
    d.stream().synchronize();
    return d.trace_end();
}

}  // namespace

TEST_CASE("a CPU trace holds the stream's tasks and the host's launches and syncs", "[cputrace]") {
    Device& d = *fixture().device;
    auto events = traced_work(d);

    auto kernels = with(events, "kernel", false);
    auto gemms = with(events, "gemm", false);
    auto markers = with(events, "marker", false);
    auto launches = with(events, "runtime", true);
    auto syncs = with(events, "sync", true);
    REQUIRE(kernels.size() == 3);
    REQUIRE(gemms.size() == 1);
    REQUIRE(markers.size() == 1);
    CHECK(launches.size() == 5);  // every enqueue: 3 kernels, the GEMM, the record
    REQUIRE(syncs.size() == 1);

    CHECK(gemms[0]->name == "sgemm 16 x 8 x 4");
    CHECK(markers[0]->name == "event");
    CHECK(syncs[0]->name == "synchronize");
    // Each launch is named after what it enqueued; the number is the correlation, in args.
    std::multiset<std::string> launch_names;
    for (const auto* l : launches) launch_names.insert(l->name);
    CHECK(launch_names == std::multiset<std::string>{"launch host kernel", "launch host kernel", "launch host kernel",
                                                     "launch sgemm 16 x 8 x 4", "record event"});
    for (const auto* k : kernels) {
        CHECK(k->name == "host kernel");  // nothing was being measured: no workload to name it after
        CHECK(k->args.count("correlation") == 1);
        CHECK(k->track == 0);
    }
    for (const auto& e : events) {
        CHECK(e.duration_s >= 0);
        CHECK(e.start_s >= 0);
    }
    // The synchronisation waits for everything enqueued before it.
    for (const auto* k : kernels) CHECK(k->start_s <= syncs[0]->start_s + syncs[0]->duration_s);
    // trace_end hands events back in start order.
    for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i - 1].start_s <= events[i].start_s);
}

TEST_CASE("a traced copy carries its size in bytes, as CUPTI's copies do, so lab trace can total them", "[cputrace]") {
    Device& d = *fixture().device;
    BufferPtr a = d.allocate(65536), b = d.allocate(65536);
    std::string note;
    REQUIRE(d.trace_begin(note));
    d.copy(d.stream(), b->data(), a->data(), 65536);
    d.copy(d.stream(), b->data(), a->data(), 1000);
    d.stream().synchronize();
    const auto events = d.trace_end();
    const auto copies = with(events, "memcpy", false);
    REQUIRE(copies.size() == 2);
    CHECK(copies[0]->name == "memcpy HtoH");
    CHECK(copies[0]->args.at("bytes") == "65536");
    CHECK(copies[1]->args.at("bytes") == "1000");
    for (const auto* l : with(events, "runtime", true)) CHECK(l->args.count("bytes") == 0);
}

TEST_CASE("every launch pairs with one task by correlation, and the task starts after it", "[cputrace]") {
    Device& d = *fixture().device;
    auto events = traced_work(d);

    std::map<std::string, const TraceEvent*> launch_of, task_of;
    for (const auto& e : events) {
        auto c = e.args.find("correlation");
        if (c == e.args.end()) continue;
        auto& side = e.host ? launch_of : task_of;
        CHECK(side.emplace(c->second, &e).second);  // correlation IDs are unique per side
    }
    REQUIRE(launch_of.size() == 5);
    REQUIRE(task_of.size() == launch_of.size());
    for (const auto& [id, launch] : launch_of) {
        INFO("correlation " << id);
        REQUIRE(task_of.count(id) == 1);
        const TraceEvent* task = task_of.at(id);
        CHECK(task->start_s >= launch->start_s);
    }
    // The stream runs tasks in the order they were launched.
    std::vector<const TraceEvent*> by_launch;
    for (const auto& [id, launch] : launch_of) by_launch.push_back(launch);
    std::sort(by_launch.begin(), by_launch.end(),
              [](const TraceEvent* a, const TraceEvent* b) { return a->start_s < b->start_s; });
    for (std::size_t i = 1; i < by_launch.size(); ++i) {
        const TraceEvent* prev = task_of.at(by_launch[i - 1]->args.at("correlation"));
        const TraceEvent* next = task_of.at(by_launch[i]->args.at("correlation"));
        CHECK(prev->start_s + prev->duration_s <= next->start_s);
    }
}

TEST_CASE("each trace starts empty and work outside a trace is not recorded", "[cputrace]") {
    Device& d = *fixture().device;
    auto first = traced_work(d);
    REQUIRE_FALSE(first.empty());

    // Untraced work between traces leaves nothing behind.
    d.stream().launch([](int, int) {});
    d.stream().synchronize();

    std::string note;
    REQUIRE(d.trace_begin(note));
    auto empty = d.trace_end();
    CHECK(empty.empty());

    REQUIRE(d.trace_begin(note));
    d.stream().launch([](int, int) {});
    d.stream().synchronize();
    auto second = d.trace_end();
    REQUIRE(with(second, "kernel", false).size() == 1);
    CHECK(with(second, "runtime", true).size() == 1);
    CHECK(with(second, "sync", true).size() == 1);
    // Correlation IDs start again with the trace.
    CHECK(with(second, "kernel", false)[0]->args.at("correlation") == "1");
}

TEST_CASE("trace_end waits for work still queued, so no launch lacks its task", "[cputrace]") {
    Device& d = *fixture().device;
    std::string note;
    REQUIRE(d.trace_begin(note));
    for (int i = 0; i < 20; ++i) d.stream().launch([](int, int) {});
    auto events = d.trace_end();  // no synchronize
    CHECK(with(events, "kernel", false).size() == 20);
    CHECK(with(events, "runtime", true).size() == 20);
    d.stream().synchronize();
}

TEST_CASE("a trace keeps at most 200000 events and ends with a note of how many it dropped", "[cputrace]") {
    Device& d = *fixture().device;
    EventPtr ev = d.create_event();
    std::string note;
    REQUIRE(d.trace_begin(note));
    // Each record is two events (its launch and the task): 10 pairs past the cap.
    for (int i = 0; i < 100'010; ++i) d.stream().record(*ev);
    d.stream().synchronize();  // one more host event, dropped too
    auto events = d.trace_end();
    REQUIRE(events.size() == 200'001);
    CHECK(events.back().name == "dropped 21 events");
    CHECK(events.back().args.at("dropped") == "21");
    CHECK(events.back().duration_s == 0);
}

// The loader hands the backend the host's trace label (lab/backend.hpp, TraceLabelSource): a
// kernel launched without a name is named after the workload being measured.
TEST_CASE("a kernel launched under a trace label is named after it; labels nest and unwind", "[cputrace]") {
    Device& d = *fixture().device;
    std::string note;
    REQUIRE(d.trace_begin(note));
    {
        const TraceLabelScope outer("triad");
        d.stream().launch([](int, int) {});
        try {
            const TraceLabelScope inner("calibrate.read");
            d.stream().launch([](int, int) {});
            throw std::runtime_error("a workload that fails");
        } catch (const std::runtime_error&) {
        }
        d.stream().launch([](int, int) {});  // the inner label ended with the exception
    }
    d.stream().launch([](int, int) {});  // outside every label
    d.stream().synchronize();
    const auto events = d.trace_end();
    std::vector<std::string> kernels, launches;
    for (const auto* k : with(events, "kernel", false)) kernels.push_back(k->name);
    for (const auto* l : with(events, "runtime", true)) launches.push_back(l->name);
    CHECK(kernels == std::vector<std::string>{"triad", "calibrate.read", "triad", "host kernel"});
    CHECK(launches == std::vector<std::string>{"launch triad", "launch calibrate.read", "launch triad", "launch host kernel"});
    CHECK(current_trace_label() == nullptr);
}

TEST_CASE("a named task keeps its own name under a trace label", "[cputrace]") {
    Device& d = *fixture().device;
    BufferPtr a = d.allocate(16 * 16 * 4), b = d.allocate(16 * 16 * 4), c = d.allocate(16 * 16 * 4);
    std::string note;
    REQUIRE(d.trace_begin(note));
    {
        const TraceLabelScope label("sgemm_workload");
        d.gemm(d.stream(), {Dtype::fp32, 16, 16, 16, a->data(), b->data(), c->data(), 1.0, 0.0});
        d.copy(d.stream(), b->data(), a->data(), 1024);
    }
    d.stream().synchronize();
    const auto events = d.trace_end();
    REQUIRE(with(events, "gemm", false).size() == 1);
    CHECK(with(events, "gemm", false)[0]->name == "sgemm 16 x 16 x 16");
    REQUIRE(with(events, "memcpy", false).size() == 1);
    CHECK(with(events, "memcpy", false)[0]->name == "memcpy HtoH");
}

// First touch (page faults of a new buffer) and cache flushes are the device's own work: in a
// trace they are "setup", so lab trace counts neither as a kernel nor as device busy time.
TEST_CASE("first touch and cache flushes are setup tasks, not kernels", "[cputrace]") {
    Device& d = *fixture().device;
    std::string note;
    REQUIRE(d.trace_begin(note));
    BufferPtr buf = d.allocate(1 << 20);
    d.flush_caches(d.stream());
    d.stream().synchronize();
    const auto events = d.trace_end();
    CHECK(with(events, "kernel", false).empty());
    std::set<std::string> setup;
    for (const auto* e : with(events, "setup", false)) setup.insert(e->name);
    CHECK(setup.count("first touch") == 1);
    CHECK(setup.count("flush caches") == 1);
    for (const auto& e : events) CHECK(e.name.find('#') == std::string::npos);
}

namespace {

// Few samples, no time floor: the trace tests look at windows, not at figures.
EngineSettings fast_trace_settings() { return {"test", 1, 2, 0.0, 1.0, 0.05, 0.0005, 0.0}; }

// Begins `trace` on `d` and measures one hot workload, "spin_hot" (an empty host kernel), in it.
void begin_with_spin_hot(Device& d, TraceWindows& trace) {
    std::string why;
    REQUIRE(trace.begin(why));
    Workload hot;
    hot.name = "spin_hot";
    measure_workload(d, hot, [](Stream& s) { s.launch([](int, int) {}); }, fast_trace_settings(), &trace);
}

}  // namespace

// The engine sets the label: a workload's traced window holds kernels named after it, a cold
// one's flushes as setup, and the label ends with the measurement.
TEST_CASE("the engine names a workload's kernels after the workload", "[cputrace]") {
    Device& d = *fixture().device;
    const EngineSettings fast = fast_trace_settings();
    TraceWindows trace(d);
    begin_with_spin_hot(d, trace);
    Workload cold;
    cold.name = "spin_cold";
    cold.mode = TimingMode::cold;
    measure_workload(d, cold, [](Stream& s) { s.launch([](int, int) {}); }, fast, &trace);
    CHECK(current_trace_label() == nullptr);
    d.stream().launch([](int, int) {});
    d.stream().synchronize();
    const auto events = trace.finish();
    std::map<std::string, int> kernels;
    int flushes = 0;
    for (const auto& e : events) {
        if (e.category == "kernel") ++kernels[e.name];
        if (e.category == "setup" && e.name == "flush caches") ++flushes;
    }
    CHECK(kernels.size() == 3);
    CHECK(kernels["spin_hot"] >= 1);
    CHECK(kernels["spin_cold"] == 1);  // a cold window: one cold sample
    CHECK(kernels["host kernel"] == 1);
    CHECK(flushes >= 1);
}

// Where lab stopped the device's tracer and started it again with nothing said (after a window,
// for its own measuring; inside one, between the first invocation and the rest), the trace says
// so with an untraced range: otherwise `lab trace` took that stretch for the workload's idle time,
// the largest gap in its window, ahead of the one its own sync or copy left. No device event lies
// in any untraced range, and the explicit ones ("measuring NAME") are not doubled.
TEST_CASE("the tracer's stops between a workload's traced segments are marked untraced", "[cputrace]") {
    Device& d = *fixture().device;
    TraceWindows trace(d);
    begin_with_spin_hot(d, trace);
    d.stream().launch([](int, int) {});
    d.stream().synchronize();
    const auto events = trace.finish();
    const TraceEvent* window = nullptr;
    std::vector<const TraceEvent*> stopped, measuring;
    for (const auto& e : events) {
        if (e.category == "workload") window = &e;
        if (e.category == "untraced") (e.name == "tracer stopped (not traced)" ? stopped : measuring).push_back(&e);
    }
    REQUIRE(window);
    REQUIRE(measuring.size() == 1);
    // After the window, lab's own work (the engine's bookkeeping) ran untraced until tracing
    // resumed: a range from the window's last stop, which the window's own end follows.
    const double window_end = window->start_s + window->duration_s;
    auto end = [](const TraceEvent* u) { return u->start_s + u->duration_s; };
    CHECK(std::count_if(stopped.begin(), stopped.end(), [&](const TraceEvent* u) { return end(u) > window_end; }) == 1);
    // A window of more than one invocation was traced in two segments: the stop between them too.
    const bool two_segments = window->args.at("traced invocations") != "1";
    CHECK(std::count_if(stopped.begin(), stopped.end(), [&](const TraceEvent* u) {
              return u->start_s > window->start_s && end(u) < window_end;
          }) == (two_segments ? 1 : 0));
    for (const auto* u : stopped) CHECK(u->start_s >= end(measuring[0]));  // not doubled
    // No traced device work inside (100 µs either side allowed: each segment is placed on the
    // host's clock as read just after the tracer started).
    for (const auto* u : stopped)
        for (const auto& e : events)
            if (!e.host) {
                INFO(e.name << " at " << e.start_s << " in " << u->start_s << ".." << end(u));
                CHECK_FALSE((e.start_s > u->start_s + 1e-4 && e.start_s < end(u) - 1e-4));
            }
}
