// Fork/join team and in-order task stream of the CPU device (see thread_team.hpp).
#include "thread_team.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace lab::cpu {

namespace {

void pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    // Pinning can be refused (containers, cgroups); the team still works, only less steadily.
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

inline void cpu_relax() { __builtin_ia32_pause(); }

// Idle workers spin this long before sleeping: long enough to catch back-to-back kernels in a
// batch without a futex wake, short enough not to steal a core from OpenBLAS between kernels.
constexpr auto kSpin = std::chrono::microseconds(50);

double seconds(StreamTracer::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::atomic<TraceLabelSource> label_source{nullptr};

// A traced task's name, read on the launching thread: the host's label is that thread's.
std::string trace_name(const TaskLabel& label) {
    std::string name = label.name;
    if (label.launcher_named)
        if (TraceLabelSource source = label_source.load(std::memory_order_acquire))
            if (const char* launcher = source(); launcher && *launcher) name = launcher;
    if (label.dims[0] > 0)
        name += " " + std::to_string(label.dims[0]) + " x " + std::to_string(label.dims[1]) + " x " +
                std::to_string(label.dims[2]);
    return name;
}

// Host-side launches and synchronisations are on the host's track 0, device tasks on stream 0.
constexpr int kTrack = 0;

}  // namespace

void set_trace_label_source(TraceLabelSource source) { label_source.store(source, std::memory_order_release); }

void StreamTracer::begin() {
    std::lock_guard lock(mutex_);
    ++session_;
    correlation_ = 0;
    events_.clear();
    dropped_ = 0;
    origin_ = Clock::now();
    active_.store(true, std::memory_order_relaxed);
}

std::vector<TraceEvent> StreamTracer::end() {
    std::vector<TraceEvent> out;
    std::size_t dropped;
    {
        std::lock_guard lock(mutex_);
        active_.store(false, std::memory_order_relaxed);
        out.swap(events_);
        dropped = dropped_;
    }
    // The host and stream threads interleave their pushes; order by start as the device would.
    std::stable_sort(out.begin(), out.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.start_s < b.start_s; });
    if (dropped > 0) {
        TraceEvent d;
        d.name = "dropped " + std::to_string(dropped) + " events";
        d.category = "marker";
        d.track = kTrack;
        for (const auto& e : out) d.start_s = std::max(d.start_s, e.start_s + e.duration_s);
        d.args["dropped"] = std::to_string(dropped);
        out.push_back(std::move(d));
    }
    return out;
}

void StreamTracer::next_correlation(std::uint64_t& session, std::uint64_t& correlation) {
    std::lock_guard lock(mutex_);
    if (!active_.load(std::memory_order_relaxed)) {
        session = correlation = 0;
        return;
    }
    session = session_;
    correlation = ++correlation_;
}

void StreamTracer::push(TraceEvent e) {
    if (events_.size() >= kMaxEvents) {
        ++dropped_;
        return;
    }
    events_.push_back(std::move(e));
}

void StreamTracer::add(std::uint64_t session, const TaskLabel& label, const std::string& name, std::uint64_t correlation,
                       bool host, Clock::time_point start, Clock::time_point end) {
    std::lock_guard lock(mutex_);
    if (session != session_ || !active_.load(std::memory_order_relaxed)) return;
    TraceEvent e;
    if (host) {
        // Named after what it enqueued, so the host's track reads without following the arrows.
        e.name = (std::string(label.category) == "marker" ? "record " : "launch ") + name;
        e.category = "runtime";
    } else {
        e.name = name;
        e.category = label.category;
    }
    e.start_s = seconds(start - origin_);
    e.duration_s = seconds(end - start);
    e.track = kTrack;
    e.host = host;
    e.args["correlation"] = std::to_string(correlation);
    if (!host && label.bytes > 0) e.args["bytes"] = std::to_string(label.bytes);
    push(std::move(e));
}

void StreamTracer::add_sync(Clock::time_point start, Clock::time_point end) {
    std::lock_guard lock(mutex_);
    if (!active_.load(std::memory_order_relaxed)) return;
    TraceEvent e;
    e.name = "synchronize";
    e.category = "sync";
    e.start_s = seconds(start - origin_);
    e.duration_s = seconds(end - start);
    e.track = kTrack;
    e.host = true;
    push(std::move(e));
}

std::size_t StreamTracer::dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
}

ThreadTeam::ThreadTeam(std::vector<int> cpus) : cpus_(std::move(cpus)) {
    if (cpus_.empty()) throw std::invalid_argument("a thread team needs at least one CPU");
    for (int i = 1; i < size(); ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadTeam::~ThreadTeam() {
    stop_.store(true);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadTeam::pin_caller() const { pin_to(cpus_[0]); }

void ThreadTeam::run(const HostKernel& kernel) {
    job_ = &kernel;
    remaining_.store(size() - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    try {
        kernel(0, size());
    } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
    }
    while (remaining_.load(std::memory_order_acquire) != 0) cpu_relax();
    job_ = nullptr;
    std::lock_guard lock(error_mutex_);
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void ThreadTeam::worker(int index) {
    pin_to(cpus_[index]);
    std::uint64_t seen = 0;
    for (;;) {
        auto spin_until = std::chrono::steady_clock::now() + kSpin;
        std::uint64_t g = generation_.load(std::memory_order_acquire);
        while (g == seen && std::chrono::steady_clock::now() < spin_until) {
            cpu_relax();
            g = generation_.load(std::memory_order_acquire);
        }
        while (g == seen) {
            generation_.wait(seen, std::memory_order_acquire);
            g = generation_.load(std::memory_order_acquire);
        }
        seen = g;
        if (stop_.load()) return;
        try {
            (*job_)(index, size());
        } catch (...) {
            std::lock_guard lock(error_mutex_);
            if (!error_) error_ = std::current_exception();
        }
        remaining_.fetch_sub(1, std::memory_order_release);
    }
}

TaskStream::TaskStream(ThreadTeam& team) : team_(team), thread_([this] { loop(); }) {}

TaskStream::~TaskStream() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void TaskStream::enqueue(std::function<void()> task, const TaskLabel& label) {
    if (!tracer_.active()) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back({std::move(task), label});
            ++enqueued_;
        }
        wake_.notify_one();
        return;
    }
    // Traced: the launch's duration is what enqueuing costs the host (locking, waking the
    // stream thread), the CPU analogue of cudaLaunchKernel's time on the CPU.
    const auto start = StreamTracer::Clock::now();
    Task t{std::move(task), label};
    tracer_.next_correlation(t.session, t.correlation);
    const std::uint64_t session = t.session, correlation = t.correlation;
    std::string name;
    if (session != 0) t.name = name = trace_name(label);
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(t));
        ++enqueued_;
    }
    wake_.notify_one();
    if (session != 0) tracer_.add(session, label, name, correlation, true, start, StreamTracer::Clock::now());
}

// A lesson's kernel: "host kernel" only when nothing says what launched it.
void TaskStream::launch(HostKernel kernel) { launch(std::move(kernel), TaskLabel{"kernel", "host kernel", true}); }

void TaskStream::launch(HostKernel kernel, const TaskLabel& label) {
    enqueue([this, k = std::move(kernel)] { team_.run(k); }, label);
}

void TaskStream::record(Event& event) {
    auto* e = dynamic_cast<CpuEvent*>(&event);
    if (!e) throw std::invalid_argument("a CPU stream records only CPU events");
    enqueue(
        [e] {
            e->ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
        },
        TaskLabel{"marker", "event"});
}

void TaskStream::wait_for(std::uint64_t target) {
    for (std::uint64_t c = completed_.load(std::memory_order_acquire); c < target;
         c = completed_.load(std::memory_order_acquire))
        completed_.wait(c, std::memory_order_acquire);
}

void TaskStream::synchronize() {
    const bool traced = tracer_.active();
    const auto start = traced ? StreamTracer::Clock::now() : StreamTracer::Clock::time_point{};
    std::uint64_t target;
    {
        std::lock_guard lock(mutex_);
        target = enqueued_;
    }
    wait_for(target);
    if (traced) tracer_.add_sync(start, StreamTracer::Clock::now());
    std::lock_guard lock(mutex_);
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void TaskStream::trace_begin() { tracer_.begin(); }

std::vector<TraceEvent> TaskStream::trace_end() {
    std::uint64_t target;
    {
        std::lock_guard lock(mutex_);
        target = enqueued_;
    }
    wait_for(target);
    return tracer_.end();
}

void TaskStream::loop() {
    team_.pin_caller();
    for (;;) {
        Task task;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            task = std::move(queue_.front());
            queue_.pop_front();
        }
        // Whether to time was decided when the task was enqueued: nothing more is paid here
        // for untraced work.
        const auto start = task.session ? StreamTracer::Clock::now() : StreamTracer::Clock::time_point{};
        try {
            task.run();
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!error_) error_ = std::current_exception();
        }
        // Recorded before the task counts as completed, so a synchronize() followed by
        // trace_end() always finds it.
        if (task.session)
            tracer_.add(task.session, task.label, task.name, task.correlation, false, start, StreamTracer::Clock::now());
        completed_.fetch_add(1, std::memory_order_release);
        completed_.notify_all();
    }
}

double CpuEvent::seconds_since(const Event& start) const {
    auto* s = dynamic_cast<const CpuEvent*>(&start);
    if (!s) throw std::invalid_argument("CPU events can only be compared with CPU events");
    return static_cast<double>(ns - s->ns) * 1e-9;
}

}  // namespace lab::cpu
