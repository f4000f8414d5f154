// Every SIMD path of the CPU kernels (framework/include/lab/cpu_kernels.hpp) computes the same
// thing: for each path this CPU runs (scalar, avx2, avx512), each kernel is called directly with
// that path on small inputs, split over several "threads" (called one after another: the split
// is what is tested, not concurrency), and compared with the other paths and with a plain scalar
// reference computed here. Comparisons are exact where the arithmetic is exact (copies, fills,
// sums and triads of small integers, FLOP counts, a fused chain against std::fma) and otherwise
// within a stated relative tolerance: the vector paths fuse multiply and add (one rounding), the
// scalar path does not (two), and the paths sum in different orders. LAB_SIMD's effect on
// detect_simd() is checked too. No speed is asserted.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lab/cpu_kernels.hpp"

using namespace lab::cpu;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

const Simd kAllPaths[] = {Simd::scalar, Simd::avx2, Simd::avx512};

// The paths this CPU runs; a path it lacks is reported, not failed.
std::vector<Simd> supported_paths() {
    std::vector<Simd> out;
    for (Simd s : kAllPaths) {
        if (simd_supported(s)) out.push_back(s);
        else WARN("this CPU does not run the " << to_string(s) << " path: not tested here");
    }
    return out;
}

// Sizes that exercise the vector bodies and every remainder loop, and thread splits whose
// shares (64-item blocks) leave some threads without work.
const std::size_t kSizes[] = {1, 7, 64, 129, 1000, 4099};
const int kThreads[] = {1, 3, 8};

// A 64-byte aligned float array (the kernels use aligned loads) with a canary tail that no
// kernel may touch.
class Floats {
public:
    static constexpr std::size_t kCanary = 32;
    static constexpr float kCanaryValue = -12345.0f;
    explicit Floats(std::size_t n) : n_(n) {
        std::size_t bytes = ((n + kCanary) * sizeof(float) + 63) / 64 * 64;
        p_ = static_cast<float*>(std::aligned_alloc(64, bytes));
        REQUIRE(p_);
        for (std::size_t i = 0; i < n + kCanary; ++i) p_[i] = kCanaryValue;
    }
    ~Floats() { std::free(p_); }
    Floats(const Floats&) = delete;
    Floats& operator=(const Floats&) = delete;
    float* data() { return p_; }
    float& operator[](std::size_t i) { return p_[i]; }
    std::size_t size() const { return n_; }
    bool canary_intact() const {
        for (std::size_t i = n_; i < n_ + kCanary; ++i)
            if (p_[i] != kCanaryValue) return false;
        return true;
    }

private:
    std::size_t n_;
    float* p_ = nullptr;
};

// Sets LAB_SIMD for one scope (nullptr: unset) and restores it after.
class SimdEnv {
public:
    explicit SimdEnv(const char* value) {
        if (const char* old = std::getenv("LAB_SIMD")) old_ = old;
        if (value) ::setenv("LAB_SIMD", value, 1);
        else ::unsetenv("LAB_SIMD");
    }
    ~SimdEnv() {
        if (old_) ::setenv("LAB_SIMD", old_->c_str(), 1);
        else ::unsetenv("LAB_SIMD");
    }
    SimdEnv(const SimdEnv&) = delete;
    SimdEnv& operator=(const SimdEnv&) = delete;

private:
    std::optional<std::string> old_;
};

// The FMA-peak kernel's arithmetic in plain C++: kFmaChains chains, acc = acc*x + y, summed in
// chain order. fused: one rounding per step (as the vector paths' FMA instructions); otherwise
// two (as the scalar path).
template <class T> T fma_peak_reference(std::int64_t iterations, bool fused) {
    T acc[kFmaChains];
    for (int i = 0; i < kFmaChains; ++i) acc[i] = T(1) + T(i) * T(1e-3);
    const T x = detail::FmaConst<T>::x, y = detail::FmaConst<T>::y;
    for (std::int64_t k = 0; k < iterations; ++k)
        for (int i = 0; i < kFmaChains; ++i) acc[i] = fused ? std::fma(acc[i], x, y) : acc[i] * x + y;
    T s = 0;
    for (int i = 0; i < kFmaChains; ++i) s += acc[i];
    return s;
}

}  // namespace

TEST_CASE("every path's FMA-peak kernel computes the same chains", "[simd]") {
    constexpr std::int64_t kIterations = 100;
    const auto paths = supported_paths();
    // Relative tolerances: an unfused step may drift one ulp from a fused one, so 100 steps stay
    // within 100 ulps (float 1.2e-5, double 2.2e-14) of each other.
    const double tol_float = 1e-4, tol_double = 1e-12;
    const float ref_f_fused = fma_peak_reference<float>(kIterations, true);
    const float ref_f_plain = fma_peak_reference<float>(kIterations, false);
    const double ref_d_fused = fma_peak_reference<double>(kIterations, true);
    const double ref_d_plain = fma_peak_reference<double>(kIterations, false);
    for (Simd s : paths) {
        INFO("path " << to_string(s));
        // Each lane of a vector path runs the same chains, and the kernel sums the lanes too.
        float out_f[4] = {0, 0, 0, 0};
        double out_d[4] = {0, 0, 0, 0};
        fma_peak<float>(s, kIterations, out_f, 2);
        fma_peak<double>(s, kIterations, out_d, 2);
        CHECK(out_f[0] == 0);  // only out[t] is written
        CHECK(out_f[3] == 0);
        const double per_lane_f = out_f[2] / lanes(s, sizeof(float));
        const double per_lane_d = out_d[2] / lanes(s, sizeof(double));
        const bool fused = s != Simd::scalar;
        CHECK_THAT(per_lane_f, WithinRel(static_cast<double>(fused ? ref_f_fused : ref_f_plain), 1e-6));  // lane sums
        CHECK_THAT(per_lane_d, WithinRel(fused ? ref_d_fused : ref_d_plain, 1e-14));
        CHECK_THAT(per_lane_f, WithinRel(static_cast<double>(ref_f_fused), tol_float));
        CHECK_THAT(per_lane_d, WithinRel(ref_d_fused, tol_double));
        CHECK(std::isfinite(out_f[2]));
        CHECK(std::isnormal(out_d[2]));
    }
}

TEST_CASE("the FMA-peak FLOP count and lane widths follow the path", "[simd]") {
    // Exact: 2 FLOP per FMA x iterations x chains x lanes x threads.
    CHECK(lanes(Simd::scalar, 4) == 1);
    CHECK(lanes(Simd::scalar, 8) == 1);
    CHECK(lanes(Simd::avx2, 4) == 8);
    CHECK(lanes(Simd::avx2, 8) == 4);
    CHECK(lanes(Simd::avx512, 4) == 16);
    CHECK(lanes(Simd::avx512, 8) == 8);
    for (Simd s : kAllPaths) {
        INFO("path " << to_string(s));
        CHECK(fma_peak_flops<float>(s, 1000, 3) == 2.0 * 1000 * kFmaChains * lanes(s, 4) * 3);
        CHECK(fma_peak_flops<double>(s, 1000, 3) == 2.0 * 1000 * kFmaChains * lanes(s, 8) * 3);
    }
    CHECK(fma_peak_flops<float>(Simd::avx512, 1, 1) == 2 * fma_peak_flops<float>(Simd::avx2, 1, 1));
    CHECK(fma_peak_flops<double>(Simd::avx2, 1, 1) == 4 * fma_peak_flops<double>(Simd::scalar, 1, 1));
}

TEST_CASE("the thread shares cover every item once, on 64-item boundaries", "[simd]") {
    for (std::size_t n : kSizes) {
        for (int threads : kThreads) {
            std::size_t next = 0;
            for (int t = 0; t < threads; ++t) {
                std::size_t b = 0, e = 0;
                share(n, t, threads, b, e);
                CHECK(b == next);
                CHECK(b <= e);
                CHECK((b % 64 == 0 || b == n));
                next = e;
            }
            CHECK(next == n);
        }
    }
}

TEST_CASE("every path's stream_read sums the same", "[simd]") {
    const auto paths = supported_paths();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (std::size_t n : kSizes) {
        Floats ints(n), reals(n);
        double ref_ints = 0, ref_reals = 0;
        for (std::size_t i = 0; i < n; ++i) {
            ints[i] = static_cast<float>(i % 7 + 1);  // small integers: every partial sum is exact
            reals[i] = unit(rng);
            ref_ints += ints[i];
            ref_reals += reals[i];
        }
        for (Simd s : paths)
            for (int threads : kThreads) {
                INFO("path " << to_string(s) << ", n " << n << ", threads " << threads);
                double sum_ints = 0, sum_reals = 0;
                for (int t = 0; t < threads; ++t) {
                    sum_ints += stream_read(s, ints.data(), n, t, threads);
                    sum_reals += stream_read(s, reals.data(), n, t, threads);
                }
                CHECK(sum_ints == ref_ints);
                // Float sums in another order: within 1e-5 relative (n <= 4099 terms in [0, 1)).
                CHECK_THAT(sum_reals, WithinRel(ref_reals, 1e-5));
            }
    }
}

TEST_CASE("every path's stream_copy copies exactly and nothing more", "[simd]") {
    for (Simd s : supported_paths())
        for (std::size_t n : kSizes)
            for (int threads : kThreads) {
                INFO("path " << to_string(s) << ", n " << n << ", threads " << threads);
                Floats src(n), dst(n);
                for (std::size_t i = 0; i < n; ++i) src[i] = 0.1f * static_cast<float>(i) - 3.0f;
                for (int t = 0; t < threads; ++t) stream_copy(s, dst.data(), src.data(), n, t, threads);
                CHECK(std::memcmp(dst.data(), src.data(), n * sizeof(float)) == 0);
                CHECK(dst.canary_intact());
            }
}

TEST_CASE("every path's stream_triad computes b + q*c", "[simd]") {
    const auto paths = supported_paths();
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (std::size_t n : kSizes) {
        Floats b(n), c(n), rb(n), rc(n);
        for (std::size_t i = 0; i < n; ++i) {
            b[i] = static_cast<float>(static_cast<int>(i % 13) - 6);  // integers: b + 0.5*c is exact
            c[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
            rb[i] = unit(rng);
            rc[i] = unit(rng);
        }
        for (Simd s : paths)
            for (int threads : kThreads) {
                INFO("path " << to_string(s) << ", n " << n << ", threads " << threads);
                Floats a(n), ra(n);
                for (int t = 0; t < threads; ++t) {
                    stream_triad(s, a.data(), b.data(), c.data(), 0.5f, n, t, threads);
                    stream_triad(s, ra.data(), rb.data(), rc.data(), 3.7f, n, t, threads);
                }
                bool exact = true;
                for (std::size_t i = 0; i < n; ++i) exact = exact && a[i] == b[i] + 0.5f * c[i];
                CHECK(exact);
                // Fused on the vector paths (one rounding), unfused on the scalar one (two): within
                // 1e-6 of the operands' magnitude of the exact result (a float ulp is 1.2e-7 of it).
                std::size_t bad = 0;
                for (std::size_t i = 0; i < n; ++i) {
                    const double q = 3.7f;
                    const double want = static_cast<double>(rb[i]) + q * static_cast<double>(rc[i]);
                    if (std::fabs(ra[i] - want) > 1e-6 * (std::fabs(rb[i]) + q * std::fabs(rc[i]))) ++bad;
                }
                CHECK(bad == 0);
                CHECK(a.canary_intact());
                CHECK(ra.canary_intact());
            }
    }
}

TEST_CASE("every path's fma_per_element applies k FMAs to each element", "[simd]") {
    const auto paths = supported_paths();
    for (int k : {0, 1, 5, 16}) {
        for (std::size_t n : kSizes) {
            std::vector<double> ref(n);
            std::vector<float> start(n);
            for (std::size_t i = 0; i < n; ++i) {
                start[i] = 0.5f + 0.001f * static_cast<float>(i % 100);
                double v = start[i];
                for (int r = 0; r < k; ++r) v = v * static_cast<double>(0.999f) + static_cast<double>(0.001f);
                ref[i] = v;
            }
            std::vector<float> first_path;
            for (Simd s : paths)
                for (int threads : kThreads) {
                    INFO("path " << to_string(s) << ", k " << k << ", n " << n << ", threads " << threads);
                    Floats a(n);
                    std::memcpy(a.data(), start.data(), n * sizeof(float));
                    for (int t = 0; t < threads; ++t) fma_per_element(s, a.data(), n, k, t, threads);
                    // k float steps of a contracting map (|x| < 1): within k ulps of the exact
                    // result; 1e-5 relative is k <= 16 steps with room.
                    std::size_t bad = 0, differ = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        if (std::fabs(a[i] - ref[i]) > 1e-5 * std::fabs(ref[i])) ++bad;
                        if (!first_path.empty() && std::fabs(a[i] - first_path[i]) > 2e-5 * std::fabs(ref[i])) ++differ;
                    }
                    CHECK(bad == 0);
                    CHECK(differ == 0);
                    if (k == 0) CHECK(std::memcmp(a.data(), start.data(), n * sizeof(float)) == 0);
                    CHECK(a.canary_intact());
                    if (first_path.empty()) first_path.assign(a.data(), a.data() + n);
                }
        }
    }
}

TEST_CASE("every path's fp64 fma_per_element applies k FMAs to each element", "[simd]") {
    for (Simd s : supported_paths())
        for (int k : {0, 1, 7, 64})
            for (std::size_t n : kSizes)
                for (int threads : kThreads) {
                    INFO("path " << to_string(s) << ", k " << k << ", n " << n << ", threads " << threads);
                    // 64-byte aligned, as Device::allocate gives; a canary past the end.
                    std::vector<double> storage(n + 16 + 8, -3.0);
                    double* a = storage.data() + (8 - (reinterpret_cast<std::uintptr_t>(storage.data()) % 64) / 8) % 8;
                    for (std::size_t i = 0; i < n; ++i) a[i] = 0.5 + 0.001 * double(i % 100);
                    for (int t = 0; t < threads; ++t) fma_per_element(s, a, n, k, t, threads);
                    std::size_t bad = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        double v = 0.5 + 0.001 * double(i % 100);
                        for (int r = 0; r < k; ++r) v = v * 0.999 + 0.001;
                        if (std::fabs(a[i] - v) > 1e-13 * std::fabs(v)) ++bad;
                    }
                    CHECK(bad == 0);
                    CHECK(a[n] == -3.0);
                }
}

TEST_CASE("every path's dependent chain computes the same recurrence", "[simd]") {
    constexpr std::int64_t kIterations = 1000;
    double fused = 1.0, plain = 1.0;
    const double a = 0.9999999999, b = 1e-10;
    for (std::int64_t k = 0; k < kIterations; ++k) {
        fused = std::fma(fused, a, b);
        plain = plain * a + b;
    }
    for (Simd s : supported_paths()) {
        INFO("path " << to_string(s));
        const double x = dependent_chain(s, kIterations);
        if (s == Simd::scalar) {
            CHECK_THAT(x, WithinRel(plain, 1e-14));
        } else {
            CHECK(x == fused);  // one FMA instruction per step: IEEE fma, exactly as std::fma
        }
        // Fused and unfused drift at most one ulp per step apart: 1000 steps, 2.2e-13.
        CHECK_THAT(x, WithinRel(fused, 1e-12));
    }
    CHECK(dependent_chain(Simd::scalar, 0) == 1.0);
}

TEST_CASE("fill writes every thread's share and nothing more", "[simd]") {
    for (std::size_t n : kSizes)
        for (int threads : kThreads) {
            INFO("n " << n << ", threads " << threads);
            Floats a(n);
            for (int t = 0; t < threads; ++t) fill(a.data(), n, 2.5f, t, threads);
            bool all = true;
            for (std::size_t i = 0; i < n; ++i) all = all && a[i] == 2.5f;
            CHECK(all);
            CHECK(a.canary_intact());
        }
}

TEST_CASE("LAB_SIMD picks a supported path, and says why when it cannot", "[simd]") {
    const Simd widest = widest_simd();
    CHECK(simd_supported(Simd::scalar));
    CHECK(simd_supported(widest));
    SECTION("unset: the widest path") {
        SimdEnv env(nullptr);
        CHECK(detect_simd() == widest);
        CHECK(simd_override_note().empty());
    }
    SECTION("each supported path when asked for") {
        for (Simd s : kAllPaths) {
            SimdEnv env(to_string(s));
            INFO("LAB_SIMD=" << to_string(s));
            if (simd_supported(s)) {
                CHECK(detect_simd() == s);
                CHECK(simd_override_note().empty());
            } else {
                CHECK(detect_simd() == widest);
                CHECK_THAT(simd_override_note(), Contains(to_string(s)) && Contains("ignored"));
            }
        }
    }
    SECTION("setting LAB_SIMD changes the path") {
        {
            SimdEnv env("scalar");
            CHECK(detect_simd() == Simd::scalar);
        }
        if (widest != Simd::scalar) {
            SimdEnv env(nullptr);
            CHECK(detect_simd() != Simd::scalar);
        }
    }
    SECTION("a value that names no path") {
        SimdEnv env("avx1024");
        CHECK(detect_simd() == widest);
        CHECK_THAT(simd_override_note(), Contains("avx1024") && Contains("not one of"));
    }
    SECTION("an empty value is unset") {
        SimdEnv env("");
        CHECK(detect_simd() == widest);
        CHECK(simd_override_note().empty());
    }
}
