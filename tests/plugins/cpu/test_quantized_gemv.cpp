// The CPU side of lab::QuantizedGemv (<lab/cpu_quantized_gemv.hpp>) computes y = W x with every
// weight as lab::quantize::decode reads it: for each format, in the SIMD variant the device chose
// (LAB_SIMD=avx2 or scalar picks another), on the CPU device's team, against a double-precision
// sum of the decoded weights.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "lab/cpu_quantized_gemv.hpp"
#include "plugin_loader.hpp"
#include "test_support.hpp"

using namespace lab;

TEST_CASE("the CPU quantized GEMV reads every layout as decode() does", "[quantized_gemv]") {
    LoadedBackend backend = load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<Device> dev = backend.backend->open({});
    cpu::QuantizedGemvCpu k(*dev);
    const int rows = 37, cols = 320;
    std::mt19937 gen(3);
    std::normal_distribution<float> normal(0, 0.05f);
    std::vector<float> w(std::size_t(rows) * cols), x(cols), y(rows);
    for (auto& v : w) v = normal(gen);
    for (auto& v : x) v = normal(gen) * 20;
    for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::int8, Dtype::fp8_e4m3, Dtype::mxfp4, Dtype::nvfp4}) {
        if (d == Dtype::fp8_e4m3) continue;  // a GPU format in lesson 02.08: the CPU kernel has no fp8 path
        INFO(to_string(d));
        const quantize::Encoded e = quantize::encode(d, w.data(), rows, cols);
        std::fill(y.begin(), y.end(), -1.0f);
        k.gemv({e.data.data(), e.scales.data(), e.global, rows, cols, d}, x.data(), y.data())(dev->stream());
        dev->stream().synchronize();
        for (int r = 0; r < rows; ++r) {
            double want = 0, size = 0;
            for (int j = 0; j < cols; ++j) want += quantize::decode(e, r, j) * x[j], size += std::fabs(quantize::decode(e, r, j) * x[j]);
            INFO("row " << r << ": " << y[r] << " vs " << want);
            CHECK(std::fabs(y[r] - want) <= 1e-5 * size);
        }
    }
}
