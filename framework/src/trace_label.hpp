// The name a trace gives a kernel that was launched without one.
//
// Lessons launch through Stream::launch(HostKernel), which carries no name, and the SDK's ABI
// cannot grow one. But the engine knows which workload it is measuring: it holds a
// TraceLabelScope around the workload's launches, and a backend that records its own trace
// events (the CPU's task stream) asks current_trace_label() when a launch has no name. The
// backend is a plugin built against the SDK alone, so it cannot see this library's state: the
// loader hands it current_trace_label through the optional C entry point that lab/backend.hpp
// names (kTraceLabelSourceSymbol), right after loading it.
#pragma once

#include <string>

namespace lab {

// Sets the calling thread's trace label for the scope's lifetime; the previous one comes back
// when it ends (scopes nest, and an exception unwinding through one restores the label).
class TraceLabelScope {
public:
    explicit TraceLabelScope(std::string label);
    ~TraceLabelScope();
    TraceLabelScope(const TraceLabelScope&) = delete;
    TraceLabelScope& operator=(const TraceLabelScope&) = delete;

private:
    std::string label_;
    const std::string* previous_;
};

// The calling thread's innermost label, or nullptr outside every scope. Per thread, because
// a launch is labelled by the thread that makes it: the engine's thread is the one that calls
// a workload's Launch. Valid until that scope ends; a reader copies it.
const char* current_trace_label();

}  // namespace lab
