// A team of pinned threads that runs one host kernel at a time on all of them (fork/join), and
// the in-order stream built on it. The stream thread is the team's thread 0, so a queued kernel
// starts without waking anyone when the team is busy; idle workers spin briefly, then sleep.
// While tracing, the stream records what it ran and what the host asked of it, so a CPU trace
// reads like a GPU one: launches on the host linked to kernels on the stream.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lab/backend.hpp"
#include "lab/device.hpp"

namespace lab::cpu {

class ThreadTeam {
public:
    explicit ThreadTeam(std::vector<int> cpus);  // one thread per CPU id; cpus[0] is the caller's
    ~ThreadTeam();
    ThreadTeam(const ThreadTeam&) = delete;
    ThreadTeam& operator=(const ThreadTeam&) = delete;

    int size() const { return static_cast<int>(cpus_.size()); }
    // Runs kernel(t, size) on every thread; the calling thread is thread 0. Returns when all
    // are done; rethrows the first exception a thread raised.
    void run(const HostKernel& kernel);
    // Pins the calling thread to cpus[0] (the stream thread calls it once).
    void pin_caller() const;

private:
    void worker(int index);

    std::vector<int> cpus_;
    std::vector<std::thread> workers_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> remaining_{0};
    std::atomic<bool> stop_{false};
    const HostKernel* job_ = nullptr;
    std::mutex error_mutex_;
    std::exception_ptr error_;
};

// What a task is, for the trace. Static strings and numbers only, so labelling a task costs
// nothing when nobody traces; the name is spelled out only when the task is traced. Names carry
// no number (the correlation is in the event's args): a viewer's summary by name then has one
// row per kernel, not one per launch.
struct TaskLabel {
    const char* category = "task";  // kernel | gemm | memcpy | marker | setup | task
    const char* name = "task";
    // A lesson's kernel (Stream::launch without a name): named after what launched it, the
    // host's trace label (the workload the engine is measuring, set_trace_label_source), and
    // `name` only when there is none.
    bool launcher_named = false;
    int dims[3] = {0, 0, 0};        // when dims[0] > 0, append " m x n x k" ("sgemm 64 x 64 x 64")
    std::size_t bytes = 0;          // a copy's size, kept in the event's args (as CUPTI's copies have it)
};

// Where launcher-named tasks get their names: the host's current trace label (lab/backend.hpp,
// TraceLabelSource), handed over when the host loads this backend. Until then, and for a host
// that never hands one, such tasks keep their label's own name.
void set_trace_label_source(TraceLabelSource source);

// The events of one trace, fed by the host thread (launches, synchronisations) and the stream
// thread (tasks). Each trace is a session: an event stamped with an older session (a task that
// was enqueued during one trace and ran after it ended) is discarded rather than leaking into
// the next trace.
class StreamTracer {
public:
    static constexpr std::size_t kMaxEvents = 200000;
    using Clock = std::chrono::steady_clock;

    // The one check paid per task when not tracing.
    bool active() const { return active_.load(std::memory_order_relaxed); }
    void begin();
    // Ends the session; the events sorted by start, with a final "dropped N events" marker
    // when the cap was hit.
    std::vector<TraceEvent> end();
    // A session and correlation ID for a task about to be enqueued; session 0 when not tracing.
    void next_correlation(std::uint64_t& session, std::uint64_t& correlation);
    // A task (host: its launch) named `name`, the label's name as trace_name() spelled it.
    void add(std::uint64_t session, const TaskLabel& label, const std::string& name, std::uint64_t correlation,
             bool host, Clock::time_point start, Clock::time_point end);
    void add_sync(Clock::time_point start, Clock::time_point end);
    std::size_t dropped() const;  // of the current (or last) session

private:
    void push(TraceEvent e);  // mutex held

    std::atomic<bool> active_{false};
    mutable std::mutex mutex_;
    std::uint64_t session_ = 0;
    std::uint64_t correlation_ = 0;
    Clock::time_point origin_{};
    std::vector<TraceEvent> events_;
    std::size_t dropped_ = 0;
};

// An in-order queue of tasks executed by one stream thread (the team's thread 0).
class TaskStream : public Stream {
public:
    explicit TaskStream(ThreadTeam& team);
    ~TaskStream() override;

    void launch(HostKernel kernel) override;
    void record(Event& event) override;
    void synchronize() override;
    void* native_handle() override { return nullptr; }

    // A kernel the device itself launches (cache flush, first touch), named in traces.
    void launch(HostKernel kernel, const TaskLabel& label);
    // A task run by the stream thread alone (GEMM, timestamps).
    void enqueue(std::function<void()> task, const TaskLabel& label = {});

    // Tracing (CpuDevice::trace_begin/trace_end). trace_end first waits for the work enqueued
    // so far, so every launch in the trace has its task; a task's error stays for synchronize().
    void trace_begin();
    std::vector<TraceEvent> trace_end();
    std::size_t trace_dropped() const { return tracer_.dropped(); }

private:
    struct Task {
        std::function<void()> run;
        TaskLabel label;
        std::uint64_t session = 0;      // nonzero: traced
        std::uint64_t correlation = 0;
        std::string name{};             // traced tasks only: spelled out when enqueued
    };

    void loop();
    void wait_for(std::uint64_t target);

    ThreadTeam& team_;
    StreamTracer tracer_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Task> queue_;
    std::uint64_t enqueued_ = 0;
    std::atomic<std::uint64_t> completed_{0};
    bool stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;
};

// A stream timestamp: steady_clock read by the stream thread when it reaches the event.
class CpuEvent : public Event {
public:
    double seconds_since(const Event& start) const override;
    std::int64_t ns = 0;
};

}  // namespace lab::cpu
