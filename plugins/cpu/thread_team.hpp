// A team of pinned threads that runs one host kernel at a time on all of them (fork/join), and
// the in-order stream built on it. The stream thread is the team's thread 0, so a queued kernel
// starts without waking anyone when the team is busy; idle workers spin briefly, then sleep.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

// An in-order queue of tasks executed by one stream thread (the team's thread 0).
class TaskStream : public Stream {
public:
    explicit TaskStream(ThreadTeam& team);
    ~TaskStream() override;

    void launch(HostKernel kernel) override;
    void record(Event& event) override;
    void synchronize() override;
    void* native_handle() override { return nullptr; }

    // A task run by the stream thread alone (GEMM, timestamps).
    void enqueue(std::function<void()> task);

private:
    void loop();

    ThreadTeam& team_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> queue_;
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
