// lab::ChaseKernels on a CPU (pointer_chase.hpp): the chase and the register chain on the team's
// first thread, the read on every thread (the SIMD variant the device chose).
#pragma once

#include <stdexcept>
#include <string>

#include "lab/cpu_kernels.hpp"
#include "lab/pointer_chase.hpp"

namespace lab::cpu {

class ChaseKernelsCpu : public ChaseKernels {
public:
    explicit ChaseKernelsCpu(Device& dev)
        : simd_(dev.facts().simd == "avx512" ? Simd::avx512 : dev.facts().simd == "avx2" ? Simd::avx2 : Simd::scalar),
          sink_(dev.allocate(64 * 64)) {}
    Launch chase(void** cursor, std::int64_t hops) override {
        return [=](Stream& st) {
            st.launch([=](int t, int) { if (t == 0) *cursor = const_cast<void*>(pointer_chase::follow(*cursor, hops)); });
        };
    }
    Launch read(const float* a, std::size_t n, std::int64_t reps) override {
        const Simd s = simd_;
        float* sink = sink_->as<float>();
        return [=](Stream& st) {
            st.launch([=](int t, int nt) {
                float sum = 0;
                for (std::int64_t r = 0; r < reps; ++r) {
                    sum += stream_read(s, a, n, t, nt);
                    asm volatile("" ::: "memory");  // each pass reads the array again
                }
                sink[16 * (t % 64)] = sum;  // one line per thread
            });
        };
    }
    Launch register_chain(std::int64_t ops) override {
        auto* sink = sink_->as<std::uint64_t>();
        return [=](Stream& st) {
            st.launch([=](int t, int) {
                if (t != 0) return;
                // x += y, y in a register: an `add $imm` chain is folded at rename on Golden Cove and
                // later (it read below a cycle there; plugins/cpu/cpu_facts.cpp measures the clock the
                // same way), and a constant lets the compiler merge adds. 32 adds per asm block: the
                // loop's counter and branch (off the chain) are a small share, and even a debug
                // build keeps x in a register across them.
                std::uint64_t x = sink[1];
                const std::uint64_t y = sink[2] | 1;
                std::int64_t i = 0;
                for (; i + 32 <= ops; i += 32) {
#if defined(__x86_64__)
                    asm volatile(".rept 32\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(y));
#elif defined(__aarch64__)
                    asm volatile(".rept 32\n\tadd %0, %0, %1\n\t.endr" : "+r"(x) : "r"(y));
#else
                    for (int u = 0; u < 32; ++u) { x += y; asm volatile("" : "+r"(x)); }
#endif
                }
                for (; i < ops; ++i) { x += y; asm volatile("" : "+r"(x)); }
                sink[1] = x;
            });
        };
    }
    Launch shared_chase(std::int64_t) override {  // thrown when run, not when planned
        return [](Stream&) { throw std::invalid_argument("a CPU has no shared memory"); };
    }

private:
    Simd simd_;
    BufferPtr sink_;
};

}  // namespace lab::cpu
