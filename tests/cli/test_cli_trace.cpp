// `lab trace` as a user meets it: the --json keys of the contract (issue 14), whole kernel names in
// JSON, the text with units and short names, and a broken trace exiting 2 with nothing on stdout.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "test_support.hpp"

using Catch::Matchers::Contains;
using lab_test::run_lab;

TEST_CASE("lab trace --json gives the contract's keys", "[trace]") {
    const auto file = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", file.string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["device"]["name"] == "NVIDIA A100-PG509-200");
    CHECK(j["device"]["sms"] == 108);
    for (const char* k : {"span_us", "gpu_busy_us", "gpu_idle_us", "idle_fraction", "launch_latency_us"}) CHECK(j[k].is_number());
    CHECK(j["kernels"]["count"] == 79);
    CHECK(j["kernels"]["top"][0]["total_us"] >= j["kernels"]["top"][1]["total_us"]);
    for (const char* k : {"name", "count", "total_us", "mean_us"}) CHECK(j["kernels"]["top"][0].contains(k));
    CHECK(j["memcpy"]["count"] == 16);
    CHECK(j["memcpy"]["by_kind"]["HtoD"]["count"] == 16);
    CHECK(j["memset"]["count"] == 3);
    CHECK(j["syncs"]["count"] == 41);
    bool long_name = false;  // whole in JSON; shortened only in the table
    for (const auto& k : j["kernels"]["top"]) long_name = long_name || k["name"].get<std::string>().size() > 100;
    CHECK(long_name);
    auto plain = run_lab({"trace", file.string()});
    CHECK_THAT(plain.out, Contains("idle"));
}

// The text a student reads: units as lab writes them everywhere (not raw µs and bytes), the
// copies' bytes and time, per-stream busy time, the largest idle gap, the launch split, and
// kernels that share a template told apart.
TEST_CASE("lab trace's text gives units, streams, gaps and distinct kernel names", "[trace]") {
    const auto file = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", file.string()});
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("GPU span 16 s: busy 49.8 ms, idle 16 s (99.7% idle)"));
    CHECK_THAT(r.out, Contains("16 copies, 244 MB in 39.1 ms"));
    // The bandwidth is 02.10's question: the text gives bytes and time, not their ratio.
    CHECK_THAT(r.out, Contains("HtoD      16     244 MB in   39.1 ms"));
    CHECK_THAT(r.out, !Contains("GB/s"));
    CHECK_THAT(r.out, Contains("stream 7 "));
    CHECK_THAT(r.out, Contains("stream 20 "));
    CHECK_THAT(r.out, Contains("13.3 s at +2.42 s"));
    CHECK_THAT(r.out, Contains("aten::cudnn_convolution"));
    CHECK_THAT(r.out, Contains("onto an idle stream") && Contains("behind earlier work"));
    CHECK_THAT(r.out, Contains("the host blocked in them for 663 µs"));
    CHECK_THAT(r.out, Contains("5.37%  ampere_sgemm_32x32_sliced1x4_tn"));
    CHECK_THAT(r.out, !Contains(" us") && !Contains("bytes"));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("trace ", 0) != 0) CHECK(line.size() <= 104);  // 100 columns; a "µ" is 2 bytes

    const auto sync = lab_test::source_root() / "tests/fixtures/traces/a100_event_sync.json.gz";
    auto e = run_lab({"trace", sync.string()});
    CHECK_THAT(e.out, Contains("vectorized_elementwise_kernel<FillFunctor>\n"));
    CHECK_THAT(e.out, Contains("vectorized_elementwise_kernel<compare_scalar_kernel::lambda>\n"));
}

// What the host did in a gap is named only when an op covers a fair share of it (kHostOpMinShare,
// 10%): an op over 1% of the gap is no answer, one over 60% is, with its share. A call list too
// long for a line goes on the next, no name cut.
TEST_CASE("lab trace names a gap's host op only when it covers 10% of the gap", "[trace]") {
    const auto file = (lab_test::source_root() / "tests/fixtures/traces/gap_host_ops.json").string();
    auto r = run_lab({"trace", file});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("host   no traced op covers 10% of the gap\n"));
    CHECK_THAT(r.out, !Contains("brush"));
    CHECK_THAT(r.out, Contains("host   main (60% of the gap)\n"));
    CHECK_THAT(r.out, Contains("cudaStreamSynchronize 20 µs") && Contains("cudaMemcpyAsync 20 µs") && Contains("cudaLaunchKernel 20 µs"));
    CHECK_THAT(r.out, Contains("cudaMemcpyAsync 20 µs,\n"));  // the next call on the next line
    CHECK_THAT(r.out, !Contains("..."));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("trace ", 0) != 0) CHECK(line.size() <= 104);
    // --json keeps the op it found, with its overlap, for a script to judge.
    auto j = nlohmann::json::parse(run_lab({"trace", file, "--json"}).out);
    bool brushed = false;
    for (const auto& g : j["idle_gaps"]) brushed = brushed || (g["host_op"].is_object() && g["host_op"]["name"] == "brush");
    CHECK(brushed);
}

// lab's own setup on the device (first touch) is neither busy nor idle: reported on a line of its
// own and left out of the span, so the idle fraction is the lesson's. lab's in-run ceiling
// re-measures are marked as not the lesson's kernels.
TEST_CASE("lab trace reports a lab trace's setup apart from idle time", "[trace]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "t.json", R"J({"otherData": {"device": "Test CPU", "kind": "cpu", "lesson": "02.10", "dropped": 0},
      "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "forward", "pid": 2, "tid": 0, "ts": 0, "dur": 10},
      {"ph": "X", "cat": "setup", "name": "first touch", "pid": 2, "tid": 0, "ts": 10, "dur": 30},
      {"ph": "X", "cat": "sync", "name": "synchronize", "pid": 1, "tid": 0, "ts": 10, "dur": 30},
      {"ph": "X", "cat": "kernel", "name": "calibrate.update", "pid": 2, "tid": 0, "ts": 50, "dur": 30}]})J");
    auto r = run_lab({"trace", (d / "t.json").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("device span 50 µs: busy 40 µs, idle 10 µs (20% idle)"));  // a CPU's, often
    CHECK_THAT(r.out, Contains("lab's own setup on the device, 30 µs: first touch;"));
    CHECK_THAT(r.out, Contains("   10 µs at +10 µs"));
    CHECK_THAT(r.out, Contains("calibrate.*: lab re-measuring"));
    // The syncs' scope said, the line folded before 100 columns (in a file; µ is two bytes).
    CHECK_THAT(r.out, Contains("syncs: 1 in the whole trace, all in the device span; the host blocked in them for 30 µs, 30 µs of\n"
                               "  it while lab's setup ran\n"));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("trace ", 0) != 0) CHECK(line.size() <= 104);
    // In an 80-column terminal every line fits 80 (counted in characters).
    auto narrow = run_lab({"trace", (d / "t.json").string()}, {{"COLUMNS", "80"}});
    std::istringstream narrow_lines(narrow.out);
    for (std::string line; std::getline(narrow_lines, line);) {
        INFO(line);
        CHECK(lab_test::display_columns(line) <= 80);
    }
    CHECK_THAT(narrow.out, Contains("syncs: 1 in the whole trace, all in the device span; the host blocked in them\n"
                                    "  for 30 µs, 30 µs of it while lab's setup ran\n"));
    auto j = nlohmann::json::parse(run_lab({"trace", (d / "t.json").string(), "--json"}).out);
    CHECK(j["setup_us"] == 30.0);
    CHECK(j["setup_names"] == nlohmann::json::array({"first touch"}));
    CHECK(j["span_us"] == 50.0);
    CHECK(j["gpu_idle_us"] == 10.0);
    CHECK(j["idle_gaps"][0]["host_calls"].empty());  // the host waited on the setup, not in the idle time
    CHECK(j["syncs"]["host_setup_us"] == 30.0);
}

// A quick run's busy time can be mostly lab's own ceiling re-measures: the busy-by-kind line says
// how much, so that the kernels' share is not read as the lesson's.
TEST_CASE("lab trace's busy-by-kind line names lab's calibrate.* time in a lab trace", "[trace]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "t.json", R"J({"otherData": {"device": "Test CPU", "kind": "cpu", "lesson": "02.10", "dropped": 0},
      "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "forward", "pid": 2, "tid": 0, "ts": 0, "dur": 10},
      {"ph": "X", "cat": "memcpy", "name": "memcpy HtoD", "pid": 2, "tid": 0, "ts": 10, "dur": 5, "args": {"bytes": 64}},
      {"ph": "X", "cat": "kernel", "name": "calibrate.update", "pid": 2, "tid": 0, "ts": 20, "dur": 30},
      {"ph": "X", "cat": "kernel", "name": "calibrate.fma_fp32", "pid": 2, "tid": 0, "ts": 50, "dur": 20}]})J");
    auto r = run_lab({"trace", (d / "t.json").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("(busy by kind, summed over events: kernels 60 µs (lab's calibrate.* 50 µs), copies 5 µs)"));
    auto j = nlohmann::json::parse(run_lab({"trace", (d / "t.json").string(), "--json"}).out);
    CHECK(j["kernels"]["calibrate_us"] == 50.0);
}

TEST_CASE("lab trace's launch latency of a lab trace is the lesson's kernels', lab's calibrate.* left out", "[trace]") {
    // A lab run's trace holds hundreds of empty calibrate kernels (the in-run references): their
    // 1 µs launches would outvote the lesson's own.
    lab_test::TempDir d;
    std::string events;
    auto launch = [&](const std::string& kernel, int correlation, double call, double start) {
        events += fmt::format(R"J({}{{"ph": "X", "cat": "runtime", "name": "launch {}", "pid": 1, "tid": 0, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},
          {{"ph": "X", "cat": "kernel", "name": "{}", "pid": 2, "tid": 0, "ts": {}, "dur": 5, "args": {{"correlation": {}}}}})J",
                              events.empty() ? "" : ",\n", kernel, call, correlation, kernel, start, correlation);
    };
    for (int i = 0; i < 3; ++i) launch("calibrate.empty_kernel", 1 + i, 100.0 * i, 100.0 * i + 1);
    launch("forward", 10, 1000, 1050);
    launch("forward", 11, 2000, 2050);
    lab_test::write_file(d / "t.json", R"J({"otherData": {"device": "Test CPU", "kind": "cpu", "lesson": "02.10", "dropped": 0},
      "traceEvents": [)J" + events + "]}");
    auto r = run_lab({"trace", (d / "t.json").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("launch latency (median of a kernel's start - its launch call's start): 50 µs over 2 kernels\n"
                               "  (over the lesson's kernels: 3 launches of lab's calibrate.*, re-measuring the ceilings, left out)"));
    auto j = nlohmann::json::parse(run_lab({"trace", (d / "t.json").string(), "--json"}).out);
    CHECK(j["launch_latency_us"] == 50.0);
    CHECK(j["launches_matched"] == 2);
    CHECK(j["launches_left_out_calibrate"] == 3);
}

TEST_CASE("lab trace --json adds keys and keeps the old ones raw", "[trace]") {
    const auto file = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", file.string(), "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["memcpy"]["bytes"] == 244403360.0);  // bytes and µs, as before
    CHECK(j["memcpy"]["total_us"] == 39080.0);
    CHECK(j["launch_latency_us"] == 25.0);  // the old figure, the old meaning
    CHECK(j["memcpy"]["by_kind"]["HtoD"]["bytes_per_s"].get<double>() == Approx(244403360.0 / 0.03908));
    CHECK(j["kernels"]["top"][0]["short_name"] == "ampere_sgemm_32x32_sliced1x4_tn");
    CHECK(j["kernels"]["top"][0]["busy_fraction"].get<double>() ==
          Approx(j["kernels"]["top"][0]["total_us"].get<double>() / j["gpu_busy_us"].get<double>()));
    CHECK(j["syncs"]["host_us"] == 663.0);
    CHECK(j["streams"].size() == 2);
    CHECK(j["setup_us"] == 0.0);  // a Kineto trace has no setup: its span is as it was
    CHECK(j["setup_names"].empty());
    CHECK(j["syncs"]["host_setup_us"] == 0.0);
    CHECK(j["idle_gaps"][0]["dur_us"] == 13250121.0);
    CHECK(j["idle_gaps"][0]["host_op"]["name"] == "aten::cudnn_convolution");
    CHECK(j["launch_latency_idle"]["count"].get<int>() + j["launch_latency_queued"]["count"].get<int>() == 79);
}

TEST_CASE("lab trace refuses a broken trace with exit 2", "[trace]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "x.json", "{\"traceEvents\": [{\"ph\": \"X\", ");
    auto r = run_lab({"trace", (d / "x.json").string(), "--json"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("byte"));
}

// 02.12's trace questions have constant answers in its grading spec: they are what `lab trace`
// reads from the copy of the counter trace the lesson ships.
TEST_CASE("02.12's trace answers are what lab trace reads from the shipped trace", "[trace]") {
    const auto shipped = lab_test::source_root() / "labs/02_12/a100_cupti_counters.json.gz";
    CHECK(lab_test::read_file(shipped) == lab_test::read_file(lab_test::source_root() / "tests/fixtures/traces/a100_cupti_counters.json.gz"));
    auto r = run_lab({"trace", shipped.string(), "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    double f32 = 0, f16 = 0, all = 0;
    int zero = 0;
    for (const auto& range : j["counter_ranges"]) {
        f32 += range["flop_fp32"].get<double>(), f16 += range["flop_fp16"].get<double>(), all += range["flop"].get<double>();
        zero += range["flop"].get<double>() == 0;
    }
    const YAML::Node spec = YAML::LoadFile((lab_test::source_root() / "configs/grading/02.12.yaml").string());
    std::map<std::string, double> expected;
    for (const auto& q : spec["questions"])
        if (q["expected"]["value"]) expected[q["id"].as<std::string>()] = q["expected"]["value"].as<double>();
    CHECK(j["counter_ranges"].size() == 77);
    CHECK(expected.at("trace_fp32_share") == Approx(100 * f32 / all).epsilon(1e-6));
    CHECK(expected.at("trace_fp16_flop") == f16);
    CHECK(expected.at("trace_zero_flop_ranges") == zero);
    // The text says the count too, with the kernels: the lesson tells a student to read it there.
    auto text = run_lab({"trace", shipped.string()});
    CHECK_THAT(text.out, Contains(fmt::format("no FLOP counted in {} of 77 ranges: vectorized_elementwise_kernel x{}", zero, zero)));
}

// 02.10's trace questions: constant answers in its spec, which are what `lab trace` reads from the
// copy of a100_simple_add the lesson ships.
TEST_CASE("02.10's trace answers are what lab trace reads from the shipped trace", "[trace]") {
    const auto shipped = lab_test::source_root() / "labs/02_10/a100_simple_add.json.gz";
    CHECK(lab_test::read_file(shipped) == lab_test::read_file(lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz"));
    auto r = run_lab({"trace", shipped.string(), "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const YAML::Node spec = YAML::LoadFile((lab_test::source_root() / "configs/grading/02.10.yaml").string());
    std::map<std::string, std::string> expected;
    for (const auto& q : spec["questions"])
        if (q["expected"]["value"]) expected[q["id"].as<std::string>()] = q["expected"]["value"].as<std::string>();
    CHECK(std::stoi(expected.at("trace_syncs")) == j["syncs"]["count"].get<int>());
    CHECK(expected.at("trace_top_kernel") == j["kernels"]["top"][0]["name"].get<std::string>());
    CHECK(std::stod(expected.at("trace_idle")) == Approx(100 * j["idle_fraction"].get<double>()).margin(1e-3));
    CHECK(std::stod(expected.at("trace_memcpy_bandwidth")) ==
          Approx(j["memcpy"]["bytes"].get<double>() / (j["memcpy"]["total_us"].get<double>() * 1e-6) / 1e9).epsilon(1e-4));
}

namespace {

// 02.10's shape, times in µs: the model's loading leaves the whole trace's five largest gaps;
// then the workloads' windows, "forward_sync_copy" with a 10 µs gap and, after its copy and
// during its sync, a 6 µs one (test_trace_timeline.cpp reads the same trace exactly).
const char* kWindowsTrace = R"J({"otherData": {"device": "Test CPU", "kind": "cpu", "lesson": "02.10", "dropped": 0},
  "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "load", "pid": 2, "tid": 0, "ts": 0, "dur": 10},
  {"ph": "X", "cat": "memcpy", "name": "memcpy HtoD", "pid": 2, "tid": 0, "ts": 1000, "dur": 10, "args": {"bytes": "4096"}},
  {"ph": "X", "cat": "kernel", "name": "load", "pid": 2, "tid": 0, "ts": 3000, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "load", "pid": 2, "tid": 0, "ts": 6000, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "load", "pid": 2, "tid": 0, "ts": 10000, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "load", "pid": 2, "tid": 0, "ts": 15000, "dur": 10},
  {"ph": "X", "cat": "untraced", "name": "measuring forward (not traced)", "pid": 1, "tid": 1000, "ts": 15100, "dur": 4900},
  {"ph": "X", "cat": "workload", "name": "forward", "pid": 1, "tid": 1000, "ts": 20000, "dur": 100},
  {"ph": "X", "cat": "kernel", "name": "forward", "pid": 2, "tid": 0, "ts": 20010, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "forward", "pid": 2, "tid": 0, "ts": 20022, "dur": 8},
  {"ph": "X", "cat": "kernel", "name": "forward", "pid": 2, "tid": 0, "ts": 20035, "dur": 5},
  {"ph": "X", "cat": "sync", "name": "synchronize", "pid": 1, "tid": 0, "ts": 20040, "dur": 5},
  {"ph": "X", "cat": "untraced", "name": "measuring forward_sync_copy (not traced)", "pid": 1, "tid": 1000, "ts": 20100, "dur": 9900},
  {"ph": "X", "cat": "workload", "name": "forward_sync_copy", "pid": 1, "tid": 1000, "ts": 30000, "dur": 200},
  {"ph": "X", "cat": "kernel", "name": "forward_sync_copy", "pid": 2, "tid": 0, "ts": 30010, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "forward_sync_copy", "pid": 2, "tid": 0, "ts": 30030, "dur": 10},
  {"ph": "X", "cat": "sync", "name": "synchronize", "pid": 1, "tid": 0, "ts": 30039, "dur": 6},
  {"ph": "X", "cat": "memcpy", "name": "memcpy HtoD", "pid": 2, "tid": 0, "ts": 30040, "dur": 4, "args": {"bytes": "4096"}},
  {"ph": "X", "cat": "runtime", "name": "launch forward_sync_copy", "pid": 1, "tid": 0, "ts": 30046, "dur": 2},
  {"ph": "X", "cat": "kernel", "name": "forward_sync_copy", "pid": 2, "tid": 0, "ts": 30050, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "forward_sync_copy", "pid": 2, "tid": 0, "ts": 30061, "dur": 9},
  {"ph": "X", "cat": "sync", "name": "synchronize", "pid": 1, "tid": 0, "ts": 30070, "dur": 5},
  {"ph": "X", "cat": "sync", "name": "synchronize", "pid": 1, "tid": 0, "ts": 40000, "dur": 5}]})J";

}  // namespace

// The gap 02.10 is about, left by the sync and copy inside a workload, is listed under that
// workload's window with its cause, though the whole trace's largest gaps are all elsewhere; the
// whole-trace list says what it covers. A Kineto trace, with no windows, reads as it did.
TEST_CASE("lab trace lists each workload window's own gaps, with what caused them", "[trace]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "t.json", kWindowsTrace);
    auto r = run_lab({"trace", (d / "t.json").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("idle gaps in each workload's traced window"));
    CHECK_THAT(r.out, Contains("  forward: 100 µs traced, 3 kernels, 0 copies, 1 sync; idle 7 µs in 2 gaps\n"
                               "      5 µs at +30 µs     after  forward\n"));
    CHECK_THAT(r.out, Contains("  forward_sync_copy: 200 µs traced, 4 kernels, 1 copy, 2 syncs; idle 17 µs in 3 gaps\n"
                               "     10 µs at +20 µs     after  forward_sync_copy\n"));
    CHECK_THAT(r.out, Contains("      6 µs at +44 µs     after  memcpy HtoD\n"
                               "                         before forward_sync_copy\n"
                               "                         cause  a host sync and a copy beside it: the device waited for the host\n"
                               "                         calls  launch forward_sync_copy 2 µs, synchronize 1 µs\n"));
    // The windows' own gaps come before the whole trace's, which says it is the whole trace's.
    CHECK(r.out.find("traced window") < r.out.find("largest idle gaps in the whole trace"));
    CHECK_THAT(r.out, Contains("4.99 ms at +10 ms"));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("trace ", 0) != 0) CHECK(line.size() <= 104);
    const auto j = nlohmann::json::parse(run_lab({"trace", (d / "t.json").string(), "--json"}).out);
    REQUIRE(j["windows"].size() == 2);
    CHECK(j["windows"][1]["idle_gaps"][1]["window_offset_us"] == 44.0);
    CHECK(j["windows"][1]["idle_gaps"][1]["next_to_copy"] == true);
    CHECK(j["windows"][1]["idle_gaps"][1]["next_to_sync"] == true);

    const auto kineto = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto k = run_lab({"trace", kineto.string()});
    CHECK_THAT(k.out, Contains("\nlargest idle gaps (no kernel, copy or memset on any stream), with what the host was doing:\n"));
    CHECK_THAT(k.out, !Contains("traced window") && !Contains("cause "));
    CHECK(nlohmann::json::parse(run_lab({"trace", kineto.string(), "--json"}).out)["windows"].empty());
}

// The sync count is the whole trace's (02.10's question: "the trace holds"), the idle fraction
// the span's: the text says which, and how many syncs the span holds.
TEST_CASE("lab trace says its sync count is the whole trace's, and how many are in the span", "[trace]") {
    const auto file = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", file.string()});
    INFO(r.out);
    CHECK_THAT(r.out, Contains("syncs: 41 in the whole trace, 39 of them in the GPU span; the host blocked in them for 663 µs\n"));
    const auto j = nlohmann::json::parse(run_lab({"trace", file.string(), "--json"}).out);
    CHECK(j["syncs"]["count"] == 41);  // the graded figure, unchanged
    CHECK(j["syncs"]["in_span"]["count"] == 39);
    lab_test::TempDir d;
    lab_test::write_file(d / "t.json", kWindowsTrace);
    CHECK_THAT(run_lab({"trace", (d / "t.json").string()}).out, Contains("syncs: 4 in the whole trace, 3 of them in the device span;"));
}

// The split's "onto an idle stream" is a traced launch's delay from call to start, not what
// 02.11 measures as launch overhead (an empty kernel's time per launch, untraced): said so.
TEST_CASE("lab trace's launch latency says it is not 02.11's launch overhead", "[trace]") {
    const auto file = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", file.string()});
    INFO(r.out);
    CHECK_THAT(r.out, Contains("not `lab run 02.11`'s launch overhead"));
    CHECK_THAT(r.out, Contains("onto an idle stream") && Contains("call to start, nothing queued"));
    CHECK_THAT(r.out, !Contains("launch overhead (`lab run`'s launch)"));
}

// A robustness review gave kernels `"dur": "abc"` and `-5`: the trace read as one with no kernel
// and its gaps as idle time, with no word. Such events are left out, counted and said first.
TEST_CASE("lab trace says how many events it left out for a ts or dur that is no time", "[trace]") {
    lab_test::TempDir d;
    auto trace = nlohmann::json::parse(lab_test::gunzip_file(lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz"));
    int kernels = 0;
    for (auto& e : trace["traceEvents"])
        if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel") e["dur"] = kernels++ == 0 ? nlohmann::json("abc") : nlohmann::json(-5);
    REQUIRE(kernels > 1);
    lab_test::write_file(d / "bad.json", trace.dump());
    auto r = run_lab({"trace", (d / "bad.json").string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains(fmt::format("warning: {} events left out, whose ts or dur is not a time", kernels)) && Contains("dur \"abc\""));
    r = run_lab({"trace", (d / "bad.json").string(), "--json"});
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["events_left_out"]["count"] == kernels);
    // An intact trace leaves nothing out.
    r = run_lab({"trace", (lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz").string(), "--json"});
    CHECK(nlohmann::json::parse(r.out)["events_left_out"]["count"] == 0);
}

// A bad-input review: the JSON array form without its closing ']' (a writer that crashed) was
// refused, where Chrome's importer reads it; events without ts or dur were dropped unsaid.
TEST_CASE("lab trace reads an array trace missing its closing ']' with a note, and counts events without ts or dur", "[trace]") {
    lab_test::TempDir d;
    auto trace = nlohmann::json::parse(lab_test::gunzip_file(lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz"));
    const std::string array = trace["traceEvents"].dump();
    REQUIRE(array.back() == ']');
    lab_test::write_file(d / "whole.json", array);
    lab_test::write_file(d / "open.json", array.substr(0, array.size() - 1) + ",\n");
    auto whole = run_lab({"trace", (d / "whole.json").string(), "--json"}), open = run_lab({"trace", (d / "open.json").string(), "--json"});
    REQUIRE(open.exit_code == 0);
    const auto w = nlohmann::json::parse(whole.out), o = nlohmann::json::parse(open.out);
    CHECK_FALSE(w["unclosed_array"].get<bool>());
    CHECK(o["unclosed_array"].get<bool>());
    CHECK(o["events"] == w["events"]);
    CHECK(o["span_us"] == w["span_us"]);
    const auto text = run_lab({"trace", (d / "open.json").string()});
    CHECK_THAT(text.out, Contains("note: the trace's list of events has no closing ']'"));
    CHECK_THAT(run_lab({"trace", (d / "whole.json").string()}).out, !Contains("no closing ']'"));

    int kernels = 0;
    for (auto& e : trace["traceEvents"])
        if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel") e.erase(kernels++ == 0 ? "ts" : "dur");
    REQUIRE(kernels > 1);
    lab_test::write_file(d / "missing.json", trace.dump());
    const auto r = run_lab({"trace", (d / "missing.json").string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains(fmt::format("warning: {} events left out, whose ts or dur is not a time (or is missing)", kernels)) &&
                          Contains(": no ts"));
}

// A fidelity review's findings, as a reader meets them: the copies' host memory, busy time by
// kind, the synchronize calls of a trace without sync activity, no rate over a made-up range
// duration, and why a trace of launch calls has no latency.
TEST_CASE("lab trace says which host memory, what busy time was spent on, and what a counters trace cannot tell", "[trace]") {
    const auto add = lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz";
    auto r = run_lab({"trace", add.string()});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("HtoD      16     244 MB in   39.1 ms  all pageable host memory"));
    CHECK_THAT(r.out, Contains("busy by kind, summed over events: kernels 10.7 ms, copies 39.1 ms"));
    auto rj = run_lab({"trace", add.string(), "--json"});
    const auto a = nlohmann::json::parse(rj.out);
    CHECK(a["memcpy"]["by_kind"]["HtoD"]["pageable"] == 16);
    CHECK(a["launch_latency_idle"]["count"] == 38);

    const auto cupti = lab_test::source_root() / "tests/fixtures/traces/a100_cupti_counters.json.gz";
    auto c = run_lab({"trace", cupti.string()});
    REQUIRE(c.exit_code == 0);
    CHECK_THAT(c.out, Contains("the host called synchronize 21 times") && Contains("cudaStreamSynchronize 16"));
    CHECK_THAT(c.out, Contains("77 launch calls but no kernel records"));
    CHECK_THAT(c.out, Contains("no FLOP/s per range: the ranges' durations are not measured"));
    auto cj = run_lab({"trace", cupti.string(), "--json"});
    const auto j = nlohmann::json::parse(cj.out);
    CHECK(j["counter_durations_measured"] == false);
    CHECK(j["counter_ranges"][0]["flop_per_s"].is_null());  // was 1.93 GFLOP/s for a 66 µs FFT
    CHECK(j["idle_fraction"].is_null());                     // no device timeline: not "0% idle"
    CHECK(j["launch_calls"] == 77);
    CHECK(j["syncs"]["calls"]["count"] == 21);
}

// A fuzzing review's findings: a negative --top read as unsigned (every kernel listed), a list of
// things that are not events read as a trace of nothing without a word, and a number beyond a
// double called "a trace cut short" in the parser's own words.
TEST_CASE("lab trace refuses a --top below 1, says a trace holds no events, and names an overflowing number", "[trace]") {
    const auto file = (lab_test::source_root() / "tests/fixtures/traces/a100_simple_add.json.gz").string();
    for (const char* top : {"-5", "-2147483649", "0", "99999999999999999999"}) {
        auto r = run_lab({"trace", file, "--top", top});
        INFO(top << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Contains("--top"));
    }
    CHECK(run_lab({"trace", file, "--top", "3"}).exit_code == 0);

    lab_test::TempDir d;
    lab_test::write_file(d / "empty.json", R"({"traceEvents":[1,"x",null,{}]})");
    auto r = run_lab({"trace", (d / "empty.json").string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("holds no complete events") && Contains("fix:"));
    r = run_lab({"trace", (d / "empty.json").string(), "--json"});
    CHECK_THAT(r.err, Contains("holds no complete events"));
    CHECK(nlohmann::json::parse(r.out)["events"] == 0);

    lab_test::write_file(d / "big.json", R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1e400,"dur":1}]})");
    r = run_lab({"trace", (d / "big.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("the number 1e400 is beyond the range of a double") && Contains("byte"));
    CHECK_THAT(r.err, !Contains("json.exception") && !Contains("cut short"));
}
