// lab::StreamKernels on a CPU (opt-in): lab's vectorised kernels (<lab/cpu_kernels.hpp>) run
// by the device's thread team, each thread on its share of the data.
#pragma once

#include "lab/cpu_kernels.hpp"
#include "lab/stream_kernels.hpp"

namespace lab::cpu {

static_assert(kFmaChains == stream_kernels::kCpuFmaChains, "the FMA peak's count states the CPU kernel's chains");

class StreamKernelsCpu : public StreamKernels {
public:
    // The kernel variant the device chose (its facts say which), so counts and code agree.
    explicit StreamKernelsCpu(Device& dev) : simd_(variant(dev.facts().simd)) {}

    Launch read(const float* a, std::size_t n, float* sink) override {
        const Simd s = simd_;
        return [=](Stream& st) { st.launch([=](int t, int nt) { sink[16 * t] = stream_read(s, a, n, t, nt); }); };
    }
    Launch copy(float* a, const float* b, std::size_t n) override {
        const Simd s = simd_;
        return [=](Stream& st) { st.launch([=](int t, int nt) { stream_copy(s, a, b, n, t, nt); }); };
    }
    Launch triad(float* a, const float* b, const float* c, float q, std::size_t n) override {
        const Simd s = simd_;
        return [=](Stream& st) { st.launch([=](int t, int nt) { stream_triad(s, a, b, c, q, n, t, nt); }); };
    }
    Launch fma_per_element(float* a, std::size_t n, int k) override {
        const Simd s = simd_;
        return [=](Stream& st) { st.launch([=](int t, int nt) { cpu::fma_per_element(s, a, n, k, t, nt); }); };
    }
    Launch fma_peak(float* out, std::int64_t iterations) override {
        const Simd s = simd_;
        return [=](Stream& st) { st.launch([=](int t, int) { cpu::fma_peak<float>(s, iterations, out, t); }); };
    }
    Launch dependent_chain(void* out, std::int64_t iterations) override {
        const Simd s = simd_;
        double* result = static_cast<double*>(out);
        return [=](Stream& st) {
            st.launch([=](int t, int) {
                if (t == 0) result[0] = cpu::dependent_chain(s, iterations);
            });
        };
    }

private:
    static Simd variant(const std::string& name) {
        for (Simd s : {Simd::avx512, Simd::avx2, Simd::scalar})
            if (name == to_string(s) && simd_supported(s)) return s;
        return detect_simd();
    }
    Simd simd_;
};

}  // namespace lab::cpu
