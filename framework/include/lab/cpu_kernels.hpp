// CPU kernels that reach the machine's ceilings, chosen at run time for the running CPU
// (AVX-512, AVX2+FMA, or portable scalar code). The CPU backend calibrates with them and lessons
// use them as their CPU workloads, so a lesson's "FMA kernel" and the ceiling it is held against
// are the same code. Each kernel states its analytic FLOP and byte counts beside it.
//
// Every function takes the calling thread's index and the team size and does that thread's
// share, so it can be passed straight to Stream::launch.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lab/cpu_share.hpp"

namespace lab::cpu {

enum class Simd { scalar, avx2, avx512 };

inline const char* to_string(Simd s) {
    return s == Simd::avx512 ? "avx512" : s == Simd::avx2 ? "avx2" : "scalar";
}

// The widest vector ISA this CPU (and its OS) runs, whatever LAB_SIMD says. The avx512 kernels
// need only AVX-512F; the avx2 ones AVX2 and FMA.
inline Simd widest_simd() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Simd::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Simd::avx2;
    return Simd::scalar;
}

// Whether this CPU runs path `s` (every path up to the widest).
inline bool simd_supported(Simd s) { return static_cast<int>(s) <= static_cast<int>(widest_simd()); }

namespace detail {
struct SimdChoice {
    Simd simd;
    std::string note;  // "" when LAB_SIMD is unset or was honoured
};
// LAB_SIMD=scalar|avx2|avx512 picks a path this CPU supports. A path it lacks, or a value that
// names no path, falls back to the widest supported path, and the note says why.
inline SimdChoice choose_simd() {
    const Simd widest = widest_simd();
    const char* force = std::getenv("LAB_SIMD");
    if (!force || !*force) return {widest, ""};
    const std::string f = force;
    for (Simd s : {Simd::scalar, Simd::avx2, Simd::avx512}) {
        if (f != to_string(s)) continue;
        if (simd_supported(s)) return {s, ""};
        return {widest, "LAB_SIMD=" + f + " ignored: this CPU does not run " + f +
                            (s == Simd::avx512 ? " (no AVX-512F)" : " (no AVX2+FMA)") + "; using " +
                            to_string(widest)};
    }
    return {widest, "LAB_SIMD=" + f + " ignored: not one of scalar, avx2, avx512; using " + to_string(widest)};
}
}  // namespace detail

// The kernel variant to run: the widest this CPU runs, or the one LAB_SIMD=scalar|avx2|avx512
// names when the CPU runs it. Cheap enough to call per device: CPUID bits and one getenv.
inline Simd detect_simd() { return detail::choose_simd().simd; }

// Why detect_simd() did not follow LAB_SIMD ("" when it did, or LAB_SIMD is unset).
inline std::string simd_override_note() { return detail::choose_simd().note; }

// The fixed-size inner loops over accumulators carry `#pragma GCC unroll`: at -O2 GCC would
// otherwise keep the accumulators in a stack array, and store-to-load forwarding, not the FMA
// units, would set the pace.
// ---------------------------------------------------------------------------------------------
// FMA peak: kChains independent vector accumulators per thread, each updated acc = acc*x + y,
// `iterations` times. With FMA latency 4 cycles and two FMA ports, 8 chains keep both ports busy;
// 12 leave headroom. FLOP per thread = iterations * kChains * lanes * 2. Bytes: the final store of
// one value per thread. The constants keep the accumulators finite and normal.
inline constexpr int kFmaChains = 12;

namespace detail {
template <class T> struct FmaConst;
template <> struct FmaConst<float> { static constexpr float x = 0.999999f, y = 1e-6f; };
template <> struct FmaConst<double> { static constexpr double x = 0.9999999999, y = 1e-10; };

// Horizontal sums of a 512-bit vector, through memory as a pairwise tree: GCC 12's
// _mm512_reduce_add_ps/pd trip -Wuninitialized inside its own headers.
__attribute__((target("avx512f"))) inline float hsum512(__m512 s) {
    alignas(64) float v[16];
    _mm512_store_ps(v, s);
    for (int w = 8; w > 0; w /= 2)
        for (int i = 0; i < w; ++i) v[i] += v[i + w];
    return v[0];
}
__attribute__((target("avx512f"))) inline double hsum512(__m512d s) {
    alignas(64) double v[8];
    _mm512_store_pd(v, s);
    for (int w = 4; w > 0; w /= 2)
        for (int i = 0; i < w; ++i) v[i] += v[i + w];
    return v[0];
}

__attribute__((target("avx512f"))) inline float fma_avx512(std::int64_t it, float) {
    __m512 acc[kFmaChains];
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm512_set1_ps(1.0f + i * 1e-3f);
    const __m512 x = _mm512_set1_ps(FmaConst<float>::x), y = _mm512_set1_ps(FmaConst<float>::y);
    for (std::int64_t k = 0; k < it; ++k)
        #pragma GCC unroll 16
        for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    __m512 s = acc[0];
    #pragma GCC unroll 16
    for (int i = 1; i < kFmaChains; ++i) s = _mm512_add_ps(s, acc[i]);
    return hsum512(s);
}
__attribute__((target("avx512f"))) inline double fma_avx512(std::int64_t it, double) {
    __m512d acc[kFmaChains];
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm512_set1_pd(1.0 + i * 1e-3);
    const __m512d x = _mm512_set1_pd(FmaConst<double>::x), y = _mm512_set1_pd(FmaConst<double>::y);
    for (std::int64_t k = 0; k < it; ++k)
        #pragma GCC unroll 16
        for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm512_fmadd_pd(acc[i], x, y);
    __m512d s = acc[0];
    #pragma GCC unroll 16
    for (int i = 1; i < kFmaChains; ++i) s = _mm512_add_pd(s, acc[i]);
    return hsum512(s);
}
__attribute__((target("avx2,fma"))) inline float fma_avx2(std::int64_t it, float) {
    __m256 acc[kFmaChains];
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm256_set1_ps(1.0f + i * 1e-3f);
    const __m256 x = _mm256_set1_ps(FmaConst<float>::x), y = _mm256_set1_ps(FmaConst<float>::y);
    for (std::int64_t k = 0; k < it; ++k)
        #pragma GCC unroll 16
        for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    __m256 s = acc[0];
    #pragma GCC unroll 16
    for (int i = 1; i < kFmaChains; ++i) s = _mm256_add_ps(s, acc[i]);
    alignas(32) float v[8];
    _mm256_store_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}
__attribute__((target("avx2,fma"))) inline double fma_avx2(std::int64_t it, double) {
    __m256d acc[kFmaChains];
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm256_set1_pd(1.0 + i * 1e-3);
    const __m256d x = _mm256_set1_pd(FmaConst<double>::x), y = _mm256_set1_pd(FmaConst<double>::y);
    for (std::int64_t k = 0; k < it; ++k)
        #pragma GCC unroll 16
        for (int i = 0; i < kFmaChains; ++i) acc[i] = _mm256_fmadd_pd(acc[i], x, y);
    __m256d s = acc[0];
    #pragma GCC unroll 16
    for (int i = 1; i < kFmaChains; ++i) s = _mm256_add_pd(s, acc[i]);
    alignas(32) double v[4];
    _mm256_store_pd(v, s);
    return v[0] + v[1] + v[2] + v[3];
}
template <class T> inline T fma_scalar(std::int64_t it) {
    T acc[kFmaChains];
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) acc[i] = T(1) + T(i) * T(1e-3);
    for (std::int64_t k = 0; k < it; ++k)
        #pragma GCC unroll 16
        for (int i = 0; i < kFmaChains; ++i) acc[i] = acc[i] * FmaConst<T>::x + FmaConst<T>::y;
    T s = 0;
    #pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) s += acc[i];
    return s;
}
}  // namespace detail

inline int lanes(Simd s, std::size_t elem_bytes) {
    std::size_t width = s == Simd::avx512 ? 64 : s == Simd::avx2 ? 32 : elem_bytes;
    return static_cast<int>(width / elem_bytes);
}

// FLOP of one fma_peak call on `threads` threads.
template <class T> double fma_peak_flops(Simd s, std::int64_t iterations, int threads) {
    return 2.0 * static_cast<double>(iterations) * kFmaChains * lanes(s, sizeof(T)) * threads;
}

// Runs thread t's share; writes one T to out[t] (the kernel's only memory traffic).
template <class T> void fma_peak(Simd s, std::int64_t iterations, T* out, int t) {
    T r;
    if (s == Simd::avx512) r = detail::fma_avx512(iterations, T{});
    else if (s == Simd::avx2) r = detail::fma_avx2(iterations, T{});
    else r = detail::fma_scalar<T>(iterations);
    out[t] = r;
}

// ---------------------------------------------------------------------------------------------
// One dependent chain of scalar FMAs, x = x*a + b, on one thread: each FMA waits for the last,
// so the core runs one FMA per FMA-latency. FLOP = 2 * iterations; bytes = one stored double.
__attribute__((target("fma"))) inline double dependent_chain_fma(std::int64_t iterations) {
    __m128d x = _mm_set_sd(1.0), a = _mm_set_sd(0.9999999999), b = _mm_set_sd(1e-10);
    for (std::int64_t k = 0; k < iterations; ++k) x = _mm_fmadd_sd(x, a, b);
    return _mm_cvtsd_f64(x);
}
inline double dependent_chain_scalar(std::int64_t iterations) {
    volatile double a = 0.9999999999, b = 1e-10;
    double x = 1.0, av = a, bv = b;
    for (std::int64_t k = 0; k < iterations; ++k) x = x * av + bv;
    return x;
}
inline double dependent_chain(Simd s, std::int64_t iterations) {
    return s == Simd::scalar ? dependent_chain_scalar(iterations) : dependent_chain_fma(iterations);
}

// ---------------------------------------------------------------------------------------------
// Streaming kernels over float arrays of n elements (n a multiple of 64 recommended).
//   read:  sum += a[i]            FLOP n,  bytes 4n
//   copy:  a[i] = b[i]            FLOP 0,  bytes 8n
//   triad: a[i] = b[i] + s*c[i]   FLOP 2n, bytes 12n  (STREAM's triad; no write-allocate counted)
namespace detail {
__attribute__((target("avx512f"))) inline float read_avx512(const float* a, std::size_t b, std::size_t e) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    std::size_t i = b;
    for (; i + 64 <= e; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
    }
    float r = hsum512(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    for (; i < e; ++i) r += a[i];
    return r;
}
__attribute__((target("avx2"))) inline float read_avx2(const float* a, std::size_t b, std::size_t e) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    std::size_t i = b;
    for (; i + 32 <= e; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(a + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(a + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(a + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(a + i + 24));
    }
    alignas(32) float v[8];
    _mm256_store_ps(v, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    float r = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    for (; i < e; ++i) r += a[i];
    return r;
}
__attribute__((target("avx512f"))) inline void copy_avx512(float* a, const float* b, std::size_t s, std::size_t e) {
    std::size_t i = s;
    for (; i + 16 <= e; i += 16) _mm512_store_ps(a + i, _mm512_load_ps(b + i));
    for (; i < e; ++i) a[i] = b[i];
}
__attribute__((target("avx2"))) inline void copy_avx2(float* a, const float* b, std::size_t s, std::size_t e) {
    std::size_t i = s;
    for (; i + 8 <= e; i += 8) _mm256_store_ps(a + i, _mm256_load_ps(b + i));
    for (; i < e; ++i) a[i] = b[i];
}
__attribute__((target("avx512f"))) inline void triad_avx512(float* a, const float* b, const float* c,
                                                             float q, std::size_t s, std::size_t e) {
    const __m512 vq = _mm512_set1_ps(q);
    std::size_t i = s;
    for (; i + 16 <= e; i += 16)
        _mm512_store_ps(a + i, _mm512_fmadd_ps(vq, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
    for (; i < e; ++i) a[i] = b[i] + q * c[i];
}
__attribute__((target("avx2,fma"))) inline void triad_avx2(float* a, const float* b, const float* c,
                                                            float q, std::size_t s, std::size_t e) {
    const __m256 vq = _mm256_set1_ps(q);
    std::size_t i = s;
    for (; i + 8 <= e; i += 8)
        _mm256_store_ps(a + i, _mm256_fmadd_ps(vq, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
    for (; i < e; ++i) a[i] = b[i] + q * c[i];
}
}  // namespace detail

// Arrays must be 64-byte aligned (Device::allocate guarantees it).
inline float stream_read(Simd s, const float* a, std::size_t n, int t, int threads) {
    std::size_t b, e;
    share(n, t, threads, b, e);
    if (s == Simd::avx512) return detail::read_avx512(a, b, e);
    if (s == Simd::avx2) return detail::read_avx2(a, b, e);
    float r = 0;
    for (std::size_t i = b; i < e; ++i) r += a[i];
    return r;
}
inline void stream_copy(Simd s, float* a, const float* src, std::size_t n, int t, int threads) {
    std::size_t b, e;
    share(n, t, threads, b, e);
    if (s == Simd::avx512) return detail::copy_avx512(a, src, b, e);
    if (s == Simd::avx2) return detail::copy_avx2(a, src, b, e);
    for (std::size_t i = b; i < e; ++i) a[i] = src[i];
}
inline void stream_triad(Simd s, float* a, const float* b, const float* c, float q, std::size_t n,
                         int t, int threads) {
    std::size_t lo, hi;
    share(n, t, threads, lo, hi);
    if (s == Simd::avx512) return detail::triad_avx512(a, b, c, q, lo, hi);
    if (s == Simd::avx2) return detail::triad_avx2(a, b, c, q, lo, hi);
    for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + q * c[i];
}

// k fused multiply-adds per element loaded, in place: a[i] = (...((a[i]*x + y)*x + y)...), k
// times (mixbench's kernel). FLOP = 2kn; bytes = 8n (each element read once and written once),
// so AI = k/4 FLOP/B and one k sweeps a kernel across the ridge. Eight vectors are in flight at
// once so the FMA latency is hidden once k is large.
namespace detail {
__attribute__((target("avx512f"))) inline void fma_per_element_avx512(float* a, std::size_t s, std::size_t e, int k) {
    const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
    std::size_t i = s;
    for (; i + 128 <= e; i += 128) {
        __m512 v[8];
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) v[j] = _mm512_load_ps(a + i + 16 * j);
        for (int r = 0; r < k; ++r)
            #pragma GCC unroll 16
            for (int j = 0; j < 8; ++j) v[j] = _mm512_fmadd_ps(v[j], x, y);
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) _mm512_store_ps(a + i + 16 * j, v[j]);
    }
    for (; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999f + 0.001f;
}
__attribute__((target("avx2,fma"))) inline void fma_per_element_avx2(float* a, std::size_t s, std::size_t e, int k) {
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
    std::size_t i = s;
    for (; i + 64 <= e; i += 64) {
        __m256 v[8];
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) v[j] = _mm256_load_ps(a + i + 8 * j);
        for (int r = 0; r < k; ++r)
            #pragma GCC unroll 16
            for (int j = 0; j < 8; ++j) v[j] = _mm256_fmadd_ps(v[j], x, y);
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) _mm256_store_ps(a + i + 8 * j, v[j]);
    }
    for (; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999f + 0.001f;
}
// The same in fp64 (lesson 02.04 sweeps each dtype the device has): AI = k/8 FLOP/B.
__attribute__((target("avx512f"))) inline void fma_per_element_avx512(double* a, std::size_t s, std::size_t e, int k) {
    const __m512d x = _mm512_set1_pd(0.999), y = _mm512_set1_pd(0.001);
    std::size_t i = s;
    for (; i + 64 <= e; i += 64) {
        __m512d v[8];
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) v[j] = _mm512_load_pd(a + i + 8 * j);
        for (int r = 0; r < k; ++r)
            #pragma GCC unroll 16
            for (int j = 0; j < 8; ++j) v[j] = _mm512_fmadd_pd(v[j], x, y);
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) _mm512_store_pd(a + i + 8 * j, v[j]);
    }
    for (; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999 + 0.001;
}
__attribute__((target("avx2,fma"))) inline void fma_per_element_avx2(double* a, std::size_t s, std::size_t e, int k) {
    const __m256d x = _mm256_set1_pd(0.999), y = _mm256_set1_pd(0.001);
    std::size_t i = s;
    for (; i + 32 <= e; i += 32) {
        __m256d v[8];
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) v[j] = _mm256_load_pd(a + i + 4 * j);
        for (int r = 0; r < k; ++r)
            #pragma GCC unroll 16
            for (int j = 0; j < 8; ++j) v[j] = _mm256_fmadd_pd(v[j], x, y);
        #pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) _mm256_store_pd(a + i + 4 * j, v[j]);
    }
    for (; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999 + 0.001;
}
}  // namespace detail

inline void fma_per_element(Simd s, double* a, std::size_t n, int k, int t, int threads) {
    std::size_t b, e;
    share(n, t, threads, b, e);
    if (s == Simd::avx512) return detail::fma_per_element_avx512(a, b, e, k);
    if (s == Simd::avx2) return detail::fma_per_element_avx2(a, b, e, k);
    for (std::size_t i = b; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999 + 0.001;
}
inline void fma_per_element(Simd s, float* a, std::size_t n, int k, int t, int threads) {
    std::size_t b, e;
    share(n, t, threads, b, e);
    if (s == Simd::avx512) return detail::fma_per_element_avx512(a, b, e, k);
    if (s == Simd::avx2) return detail::fma_per_element_avx2(a, b, e, k);
    for (std::size_t i = b; i < e; ++i)
        for (int r = 0; r < k; ++r) a[i] = a[i] * 0.999f + 0.001f;
}

// Fills thread t's share of a with v: used to first-touch buffers on the thread that will use
// them, and to initialise inputs.
inline void fill(float* a, std::size_t n, float v, int t, int threads) {
    std::size_t b, e;
    share(n, t, threads, b, e);
    for (std::size_t i = b; i < e; ++i) a[i] = v;
}

}  // namespace lab::cpu
