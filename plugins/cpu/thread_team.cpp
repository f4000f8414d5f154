// Fork/join team and in-order task stream of the CPU device (see thread_team.hpp).
#include "thread_team.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <stdexcept>

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

}  // namespace

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

void TaskStream::enqueue(std::function<void()> task) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(task));
        ++enqueued_;
    }
    wake_.notify_one();
}

void TaskStream::launch(HostKernel kernel) {
    enqueue([this, k = std::move(kernel)] { team_.run(k); });
}

void TaskStream::record(Event& event) {
    auto* e = dynamic_cast<CpuEvent*>(&event);
    if (!e) throw std::invalid_argument("a CPU stream records only CPU events");
    enqueue([e] {
        e->ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
    });
}

void TaskStream::synchronize() {
    std::uint64_t target;
    {
        std::lock_guard lock(mutex_);
        target = enqueued_;
    }
    for (std::uint64_t c = completed_.load(std::memory_order_acquire); c < target;
         c = completed_.load(std::memory_order_acquire))
        completed_.wait(c, std::memory_order_acquire);
    std::lock_guard lock(mutex_);
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void TaskStream::loop() {
    team_.pin_caller();
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            task = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            task();
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!error_) error_ = std::current_exception();
        }
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
