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
                std::uint64_t x = sink[1];
                for (std::int64_t i = 0; i < ops; ++i) {
                    x += 0x9E37u;
                    asm volatile("" : "+r"(x));  // one add per op, in a register, each waiting on the last
                }
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
