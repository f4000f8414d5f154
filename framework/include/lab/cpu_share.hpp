// How a host kernel splits n items among the CPU team's threads: part of lab.hpp, so a lesson's
// own CPU loop (`st.launch([=](int t, int threads) { ... })`) needs nothing else. The vectorised
// ceiling kernels are opt-in: <lab/cpu_kernels.hpp>.
#pragma once

#include <cstddef>

namespace lab::cpu {

// [begin, end) of thread t's share of n items, split on 64-item boundaries (a cache line of
// doubles, a multiple of every vector width) so no two threads write the same line.
inline void share(std::size_t n, int t, int threads, std::size_t& begin, std::size_t& end) {
    std::size_t blocks = (n + 63) / 64;
    std::size_t b0 = blocks * static_cast<std::size_t>(t) / threads;
    std::size_t b1 = blocks * static_cast<std::size_t>(t + 1) / threads;
    begin = b0 * 64 < n ? b0 * 64 : n;
    end = b1 * 64 < n ? b1 * 64 : n;
}

}  // namespace lab::cpu
