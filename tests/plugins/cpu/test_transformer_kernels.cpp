// The CPU side of lab::TransformerKernels (framework/include/lab/cpu_transformer_kernels.hpp)
// computes what its interface says: each kernel runs on the CPU device's team (so the split over
// threads is exercised) on small random inputs, and is compared with a plain double-precision
// reference written here from the interface's comments. Copies and gathers are exact; the rest
// within a relative 1e-5 (fp32 against fp64). Shapes are odd on purpose: grouped heads, a KV
// cache with a past, rows that do not divide by the team. No speed is asserted.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "lab/cpu_transformer_kernels.hpp"
#include "plugin_loader.hpp"
#include "test_support.hpp"

using namespace lab;

namespace {

struct Team {
    LoadedBackend backend = load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<Device> device = backend.backend->open({});
    cpu::TransformerKernelsCpu k{*device};
    void run(const Launch& l) {
        l(device->stream());
        device->stream().synchronize();
    }
};

Team& team() {
    static Team t;
    return t;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(gen);
    return v;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double rel = 1e-5) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": " << got[i] << " vs " << want[i]);
        CHECK(std::abs(got[i] - want[i]) <= rel * std::max(1.0, std::abs(want[i])));
    }
}

}  // namespace

TEST_CASE("embedding gathers rows exactly and cache_write copies rows to their positions", "[transformer_kernels]") {
    const int h = 13, vocab = 7, n = 5;
    const auto table = random_floats(std::size_t(vocab) * h, 1);
    const std::vector<std::int32_t> tokens = {3, 0, 6, 3, 1};
    std::vector<float> x(std::size_t(n) * h);
    team().run(team().k.embedding(tokens.data(), table.data(), x.data(), n, h));
    for (int i = 0; i < n; ++i) CHECK(std::memcmp(&x[std::size_t(i) * h], &table[std::size_t(tokens[i]) * h], sizeof(float) * h) == 0);

    std::vector<float> cache(std::size_t(9) * h, -7.0f);
    team().run(team().k.cache_write(x.data(), cache.data(), n, h, 2));
    for (int r = 0; r < 9; ++r)
        for (int j = 0; j < h; ++j) {
            const float want = (r >= 2 && r < 2 + n) ? x[std::size_t(r - 2) * h + j] : -7.0f;
            CHECK(cache[std::size_t(r) * h + j] == want);
        }
}

TEST_CASE("rms_norm, matmul, silu_gate and add against a double reference", "[transformer_kernels]") {
    const int n = 5, h = 37, out = 53;
    const auto x = random_floats(std::size_t(n) * h, 2), w = random_floats(h, 3), W = random_floats(std::size_t(h) * out, 4);

    std::vector<float> y(x.size());
    team().run(team().k.rms_norm(x.data(), w.data(), y.data(), n, h));
    std::vector<double> want(x.size());
    for (int i = 0; i < n; ++i) {
        double ss = 0;
        for (int j = 0; j < h; ++j) ss += double(x[i * h + j]) * x[i * h + j];
        const double inv = 1 / std::sqrt(ss / h + 1e-5);
        for (int j = 0; j < h; ++j) want[i * h + j] = x[i * h + j] * inv * w[j];
    }
    check_close(y, want);

    std::vector<float> z(std::size_t(n) * out, 99.0f);  // overwritten, not accumulated into
    team().run(team().k.matmul(x.data(), W.data(), z.data(), n, h, out));
    want.assign(z.size(), 0.0);
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < out; ++c)
            for (int k = 0; k < h; ++k) want[i * out + c] += double(x[i * h + k]) * W[k * out + c];
    check_close(z, want);

    const std::size_t e = 1031;
    const auto gate = random_floats(e, 5), up = random_floats(e, 6);
    std::vector<float> act(e);
    team().run(team().k.silu_gate(gate.data(), up.data(), act.data(), e));
    want.resize(e);
    for (std::size_t i = 0; i < e; ++i) want[i] = gate[i] / (1 + std::exp(-double(gate[i]))) * up[i];
    check_close(act, want);

    std::vector<float> sum = gate;
    team().run(team().k.add(sum.data(), up.data(), e));
    for (std::size_t i = 0; i < e; ++i) CHECK(sum[i] == gate[i] + up[i]);
}

TEST_CASE("rope rotates each pair by position times theta^(-2j/d), every head alike", "[transformer_kernels]") {
    const int n = 3, heads = 3, d = 8, first = 5;
    const auto q0 = random_floats(std::size_t(n) * heads * d, 7);
    std::vector<float> q = q0;
    team().run(team().k.rope(q.data(), n, heads, d, first));
    std::vector<double> want(q.size());
    for (int i = 0; i < n; ++i)
        for (int hd = 0; hd < heads; ++hd)
            for (int j = 0; j < d / 2; ++j) {
                const double angle = (first + i) * std::pow(10000.0, -2.0 * j / d);
                const std::size_t p = std::size_t(i) * heads * d + std::size_t(hd) * d + 2 * j;
                want[p] = q0[p] * std::cos(angle) - q0[p + 1] * std::sin(angle);
                want[p + 1] = q0[p] * std::sin(angle) + q0[p + 1] * std::cos(angle);
            }
    check_close(q, want);
    // Position 0 is no rotation at all.
    q = q0;
    team().run(team().k.rope(q.data(), 1, heads, d, 0));
    for (int e = 0; e < heads * d; ++e) CHECK(q[e] == q0[e]);
}

TEST_CASE("attention is causal softmax(q k / sqrt(d)) v over the cache, with grouped KV heads", "[transformer_kernels]") {
    const int n = 3, past = 4, heads = 4, kv_heads = 2, d = 8, ctx = past + n;
    const auto q = random_floats(std::size_t(n) * heads * d, 8);
    const auto kc = random_floats(std::size_t(ctx) * kv_heads * d, 9), vc = random_floats(std::size_t(ctx) * kv_heads * d, 10);
    std::vector<float> scores(std::size_t(heads) * n * ctx), out(std::size_t(n) * heads * d);
    team().run(team().k.attention(q.data(), kc.data(), vc.data(), scores.data(), out.data(), n, past, heads, kv_heads, d));
    std::vector<double> want(out.size(), 0.0);
    for (int i = 0; i < n; ++i)
        for (int hd = 0; hd < heads; ++hd) {
            const int g = hd / (heads / kv_heads), seen = past + i + 1;  // token i sees the past and itself
            std::vector<double> s(seen);
            double top = -1e300, total = 0;
            for (int t = 0; t < seen; ++t) {
                for (int j = 0; j < d; ++j) s[t] += double(q[(i * heads + hd) * d + j]) * kc[(t * kv_heads + g) * d + j];
                s[t] /= std::sqrt(double(d));
                top = std::max(top, s[t]);
            }
            for (auto& v : s) total += (v = std::exp(v - top));
            for (int t = 0; t < seen; ++t)
                for (int j = 0; j < d; ++j) want[(i * heads + hd) * d + j] += s[t] / total * vc[(t * kv_heads + g) * d + j];
        }
    check_close(out, want);
}
