// Profiler traces summarised (framework/src/trace_summary.hpp): the real A100 traces' counts as
// their README states them, every definition checked exactly on small traces written here, lab's
// own Chrome traces read back, and broken files refused with where they broke.
#include <catch2/catch.hpp>

#include "chrome_trace.hpp"
#include "errors.hpp"
#include "gzip.hpp"
#include "test_support.hpp"
#include "trace_summary.hpp"
#include "trace_windows.hpp"

using namespace lab;
using Catch::Matchers::Contains;

namespace {

std::filesystem::path fixture(const std::string& name) { return lab_test::source_root() / "tests/fixtures/traces" / name; }
std::string refusal(const std::filesystem::path& p) {
    try {
        trace::read(p);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the A100 traces hold what their README says", "[trace_summary]") {
    const auto add = trace::read(fixture("a100_simple_add.json.gz"));
    CHECK(add.format == "kineto");
    CHECK(add.device_name == "NVIDIA A100-PG509-200");
    CHECK(*add.sms == 108);
    CHECK(add.kernel_count == 79);
    CHECK(add.memcpy.count == 16);
    CHECK(add.memset_count == 3);
    CHECK(add.sync_count == 41);
    CHECK(add.launches_matched == 79);  // every kernel's launch call is in the trace
    CHECK(add.memcpy_by_kind.at("HtoD").count == 16);
    CHECK(add.gpu_busy_us <= add.span_us);
    CHECK(add.gpu_busy_us >= add.kernel_total_us * 0.999 - 1e-9);  // at least the kernels' own time (one stream here)
    for (std::size_t i = 1; i < add.kernels.size(); ++i) CHECK(add.kernels[i - 1].total_us >= add.kernels[i].total_us);

    const auto sync = trace::read(fixture("a100_event_sync.json.gz"));
    CHECK(sync.kernel_count == 4);
    // CUPTI records the cudaEventQuery poll as an Event Sync too: by its call's name it is a poll,
    // counted apart, and the host did not block in it (33 + 6 + 5 µs, not 46).
    CHECK(sync.syncs_by_kind.at("Event Sync") == 1);
    CHECK(sync.syncs_by_kind.at("Event Query (a poll)") == 1);
    CHECK(sync.sync_count == 4);
    CHECK_THAT(sync.sync_host_us, Catch::Matchers::WithinAbs(44.0, 1.5));
    CHECK(sync.memcpy.count == 1);

    const auto triton = trace::read(fixture("a100_triton_kernel.json.gz"));
    CHECK(triton.kernel_count == 1);
    CHECK(triton.launches_matched == 1);  // launched through the driver API (cuda_driver)
    CHECK(triton.kernels[0].name == "triton_poi_fused_add_cos_sin_0");

    const auto counters = trace::read(fixture("a100_cupti_counters.json.gz"));
    REQUIRE(counters.counter_ranges.size() == 77);
    const auto& r = counters.counter_ranges[0];
    CHECK(r.flop_fp32 == 2.0 * 38731776);  // FFMA count x 2
    CHECK(r.flop_fp16 == 2.0 * 4866048);
    CHECK(r.flop_fp64 == 0);
    CHECK_FALSE(r.dram_bytes);  // these counters hold no DRAM bytes: no AI
}

TEST_CASE("span, busy, idle and launch latency follow their definitions exactly", "[trace_summary]") {
    lab_test::TempDir d;
    // Two streams: kernels [10, 20) and [15, 30) overlap; a copy [40, 45); idle 30..40.
    // Launch calls at 5 and 12 (correlations 1 and 2): latencies 5 and 3; median 4.
    lab_test::write_file(d / "t.json", R"J({"deviceProperties": [{"name": "Test GPU", "numSms": 4}], "traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 2, "args": {"correlation": 1}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 12, "dur": 2, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 10, "args": {"correlation": 1, "stream": 7}},
      {"ph": "X", "cat": "kernel", "name": "b", "ts": 15, "dur": 15, "args": {"correlation": 2, "stream": 8}},
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "ts": 40, "dur": 5, "args": {"bytes": 4096}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "ts": 46, "dur": 1, "args": {"cuda_sync_kind": "Stream Sync"}},
      {"ph": "s", "cat": "ac2g", "id": 1, "ts": 5}, {"ph": "i", "name": "marker", "ts": 1}]})J");
    const auto s = trace::read(d / "t.json");
    CHECK(s.device_name == "Test GPU");
    CHECK(s.span_us == 35);      // 45 - 10
    CHECK(s.gpu_busy_us == 25);  // [10, 30) and [40, 45)
    CHECK(s.gpu_idle_us() == 10);
    CHECK(s.idle_fraction() == Approx(10.0 / 35));
    CHECK(*s.launch_latency_us == 4);
    CHECK(s.kernels[0].name == "b");  // 15 us before 10 us
    CHECK(s.memcpy_by_kind.at("DtoH").bytes == 4096);
    CHECK(s.sync_count == 1);
    CHECK(s.events == 6);  // complete events only

    // lab's own trace (`lab run --trace`), written by chrome_trace, read back the same way.
    std::vector<TraceEvent> ev = {{"cudaLaunchKernel", "runtime", 1e-6, 1e-6, 0, true, {{"correlation", "9"}}},
                                  {"triad", "kernel", 3e-6, 4e-6, 1, false, {{"correlation", "9"}}},
                                  {"memcpy HtoD", "memcpy", 10e-6, 2e-6, 1, false, {{"bytes", "1024"}}},
                                  {"sgemm 8 x 8 x 8", "gemm", 4e-6, 1e-6, 1, false, {}},  // BLAS calls count as kernels
                                  {"host kernel #3", "kernel", 5e-6, 1e-6, 1, false, {}},  // numbered tasks: one kernel
                                  {"host kernel #4", "kernel", 6e-6, 1e-6, 1, false, {}},
                                  // A library's own driver call (cuBLASLt's) launches its kernel too.
                                  {"cuLaunchKernelEx", "driver", 4e-6, 1e-6, 0, true, {{"correlation", "10"}}},
                                  {"nvjet_gemm", "kernel", 7e-6, 1e-6, 2, false, {{"correlation", "10"}}}};
    lab_test::write_file(d / "lab.json.gz", gzip_compress(chrome_trace(ev, {"Test CPU", "cpu", "02.05", 0}).dump()));
    const auto l = trace::read(d / "lab.json.gz");
    CHECK(l.format == "lab");
    CHECK(l.device_name == "Test CPU");
    CHECK(l.kernel_count == 5);
    CHECK(l.kernels.size() == 4);  // triad, sgemm, host kernel (x2), nvjet_gemm
    CHECK(*l.launch_latency_us == Approx(2.5));  // median of 2 (runtime) and 3 (driver)
    CHECK(l.launches_matched == 2);
    CHECK(l.memcpy_by_kind.at("HtoD").bytes == 1024);
    CHECK(l.span_us == Approx(9));
}

TEST_CASE("a truncated .gz, a cut JSON and a JSON that is no trace are refused", "[trace_summary]") {
    lab_test::TempDir d;
    const std::string gz = lab_test::read_file(fixture("a100_event_sync.json.gz"));
    lab_test::write_file(d / "cut.json.gz", gz.substr(0, gz.size() / 2));
    CHECK_THAT(refusal(d / "cut.json.gz"), Contains("does not decompress"));
    const std::string text = gzip_decompress(gz, GzipLimits{1u << 30, 1000, 0});
    lab_test::write_file(d / "cut.json", text.substr(0, 1000));
    CHECK_THAT(refusal(d / "cut.json"), Contains("cut.json: byte") && !Contains("decompressed"));
    // Whole gzip of a cut text: the offset is in the decompressed text, and said to be.
    lab_test::write_file(d / "cut-text.json.gz", gzip_compress(text.substr(0, 1000)));
    CHECK_THAT(refusal(d / "cut-text.json.gz"), Contains("cut-text.json.gz: byte") && Contains("of the decompressed text"));
    lab_test::write_file(d / "config.json", R"({"hidden_size": 4096})");
    CHECK_THAT(refusal(d / "config.json"), Contains("not a trace"));
    CHECK_THAT(refusal(d / "missing.json"), Contains("cannot read the trace"));
}

// lab's CPU traces name a kernel after the workload that launched it and put the device's own
// work (first touch, cache flushes) in the category "setup": not a kernel, not busy time, and not
// idle time either (the device was preparing, not waiting for the host): left out of the span.
TEST_CASE("a lab trace's setup tasks are neither kernels nor busy nor idle time", "[trace_summary]") {
    lab_test::TempDir d;
    std::vector<TraceEvent> ev = {{"launch read", "runtime", 0.5e-6, 0.5e-6, 0, true, {{"correlation", "2"}}},
                                  {"read", "kernel", 1e-6, 2e-6, 0, false, {{"correlation", "2"}}},
                                  {"first touch", "setup", 3e-6, 10e-6, 0, false, {{"correlation", "3"}}},
                                  {"flush caches", "setup", 13e-6, 1e-6, 0, false, {{"correlation", "4"}}},
                                  {"launch read", "runtime", 13e-6, 0.5e-6, 0, true, {{"correlation", "5"}}},
                                  {"read", "kernel", 14e-6, 1e-6, 0, false, {{"correlation", "5"}}},
                                  {"first touch", "setup", 15e-6, 20e-6, 0, false, {{"correlation", "6"}}}};
    lab_test::write_file(d / "t.json", chrome_trace(ev, {"Test CPU", "cpu", "02.05", 0}).dump());
    const auto s = trace::read(d / "t.json");
    CHECK(s.kernel_count == 2);
    REQUIRE(s.kernels.size() == 1);
    CHECK(s.kernels[0].name == "read");
    CHECK(s.kernels[0].count == 2);
    CHECK(s.gpu_busy_us == Approx(3));
    // 14 µs from the first kernel's start to the last one's end, 11 of them setup; the setup after
    // the last kernel is outside the span and counts nowhere.
    CHECK(s.setup_us == Approx(11));
    CHECK(s.span_us == Approx(3));
    CHECK(s.gpu_idle_us() == Approx(0).margin(1e-9));
    CHECK(s.idle_gaps.empty());
    CHECK(s.setup_names == std::vector<std::string>{"first touch", "flush caches"});  // most time first
    CHECK(s.launches_matched == 2);  // integer correlations pair as string ones did
    CHECK(*s.launch_latency_us == Approx(0.75));
    // The second read was launched while the flush ran on its stream: it waited behind it.
    CHECK(s.launch_idle.count == 1);
    CHECK(s.launch_queued.count == 1);
}

// Setup and untraced stretches inside one gap, setup overlapping untraced time and a kernel: the
// gap keeps only its idle time, the host's activity is what it did then, and nothing is taken
// out of the span twice. A Kineto trace has no setup: its figures cannot change.
TEST_CASE("setup inside the span is left out of the span and of the idle gaps, once", "[trace_summary]") {
    lab_test::TempDir d;
    std::vector<TraceEvent> ev = {{"a", "kernel", 0, 10e-6, 0, false, {}},
                                  {"first touch", "setup", 10e-6, 30e-6, 0, false, {}},
                                  {"synchronize", "sync", 10e-6, 30e-6, 0, true, {}},   // waiting on the setup
                                  {"launch b", "runtime", 45e-6, 4e-6, 0, true, {}},    // in the idle 40..50
                                  {"b", "kernel", 50e-6, 10e-6, 0, false, {}},
                                  {"measuring c (not traced)", "untraced", 60e-6, 40e-6, kLabTrack, true, {}},
                                  {"flush caches", "setup", 95e-6, 7e-6, 0, false, {}},  // over untraced, then c
                                  {"c", "kernel", 100e-6, 10e-6, 0, false, {}}};
    lab_test::write_file(d / "t.json", chrome_trace(ev, {"Test CPU", "cpu", "02.10", 0}).dump());
    const auto s = trace::read(d / "t.json");
    CHECK(s.untraced_us == Approx(40));
    CHECK(s.setup_us == Approx(30));  // the flush lies wholly in untraced time and in c
    CHECK(s.setup_names == std::vector<std::string>{"first touch"});
    CHECK(s.sync_host_setup_us == Approx(30));  // the host's whole sync waited on the setup
    CHECK(s.span_us == Approx(40));  // 110 - 40 - 30
    CHECK(s.gpu_busy_us == Approx(30));
    CHECK(s.idle_fraction() == Approx(0.25));
    REQUIRE(s.idle_gaps.size() == 1);  // 60..100 is all untraced
    const auto& g = s.idle_gaps[0];
    CHECK(g.dur_us == Approx(10));
    CHECK(g.offset_us == Approx(10));
    REQUIRE(g.host_calls.size() == 1);  // the synchronize waited on the setup, not in the idle time
    CHECK(g.host_calls[0].name == "launch b");
    CHECK(g.host_calls[0].overlap_us == Approx(4));
}

// A trace lab wrote before kernels were named and correlations became integers: host in process
// 0, correlations as strings, every task numbered ("host kernel #3") and first touch a kernel.
TEST_CASE("a lab trace written before kernels had names still reads, numbered names merged", "[trace_summary]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "old.json", R"({"displayTimeUnit": "ns",
      "otherData": {"device": "AMD EPYC", "dropped": 0, "kind": "cpu", "lesson": "02.05"},
      "traceEvents": [
      {"args": {"name": "host"}, "name": "process_name", "ph": "M", "pid": 0, "tid": 0},
      {"args": {"correlation": "1"}, "cat": "runtime", "dur": 1, "name": "launch", "ph": "X", "pid": 0, "tid": 0, "ts": 1},
      {"args": {"correlation": "1"}, "cat": "kernel", "dur": 10, "name": "first touch #1", "ph": "X", "pid": 1, "tid": 0, "ts": 2},
      {"args": {"correlation": "2"}, "cat": "runtime", "dur": 1, "name": "launch", "ph": "X", "pid": 0, "tid": 0, "ts": 12},
      {"cat": "launch", "id": 2, "name": "launch", "ph": "s", "pid": 0, "tid": 0, "ts": 12},
      {"args": {"correlation": "2"}, "cat": "kernel", "dur": 2, "name": "host kernel #2", "ph": "X", "pid": 1, "tid": 0, "ts": 14},
      {"args": {"correlation": "3"}, "cat": "runtime", "dur": 1, "name": "launch", "ph": "X", "pid": 0, "tid": 0, "ts": 16},
      {"args": {"correlation": "3"}, "cat": "kernel", "dur": 2, "name": "host kernel #3", "ph": "X", "pid": 1, "tid": 0, "ts": 18}]})");
    const auto s = trace::read(d / "old.json");
    CHECK(s.format == "lab");
    CHECK(s.device_name == "AMD EPYC");
    CHECK(s.kernel_count == 3);
    REQUIRE(s.kernels.size() == 2);
    CHECK(s.kernels[0].name == "first touch");
    CHECK(s.kernels[1].name == "host kernel");
    CHECK(s.kernels[1].count == 2);
    CHECK(s.launches_matched == 3);
    CHECK(*s.launch_latency_us == Approx(2));  // of 1, 2 and 2
    CHECK(s.gpu_busy_us == Approx(14));
}

// A fidelity review recomputed every figure from the raw A100 traces: these four were wrong or
// missing (counted here against the events themselves).
TEST_CASE("a wait on another stream queues a launch; pageable copies, sync calls and made-up range durations are said", "[trace_summary]") {
    const auto add = trace::read(fixture("a100_simple_add.json.gz"));
    // elementwise_kernel (correlation 5629) waited ~300 µs for stream 20's fft2d_c2r through a
    // Stream Wait Event on stream 7: queued, not 'onto an idle stream'. 38 + 41 = 79.
    CHECK(add.launch_idle.count == 38);
    CHECK(add.launch_queued.count == 41);
    CHECK(add.launch_queued.median_us == Approx(146));
    CHECK(add.memcpy_by_kind.at("HtoD").pageable == 16);  // Memcpy HtoD (Pageable -> Device)
    CHECK(add.memcpy_by_kind.at("HtoD").pinned == 0);
    CHECK(add.streams.size() == 2);  // the streams waited on name no new stream

    const auto counters = trace::read(fixture("a100_cupti_counters.json.gz"));
    // Every range 121431 µs, back to back: Kineto's even split of the profiler's span.
    CHECK_FALSE(counters.counter_durations_measured);
    CHECK(counters.sync_count == 0);
    CHECK(counters.sync_call_count == 21);
    CHECK(counters.sync_calls_by_name.at("cudaStreamSynchronize") == 16);
    CHECK(counters.sync_calls_by_name.at("cudaDeviceSynchronize") == 5);
    CHECK(counters.launch_call_count == 77);
    CHECK_FALSE(counters.has_device_events());
    CHECK(add.counter_durations_measured);  // no ranges: nothing made up

    lab_test::TempDir d;
    // Two ranges of measured, different lengths keep their rates.
    lab_test::write_file(d / "r.json", R"J({"traceEvents": [
      {"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": 0, "dur": 10, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 5}},
      {"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": 10, "dur": 12, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 5}}]})J");
    CHECK(trace::read(d / "r.json").counter_durations_measured);
}

TEST_CASE("a launch behind a wait on another stream's unfinished work is queued; a wait on finished work is not", "[trace_summary]") {
    lab_test::TempDir d;
    // Stream 8 runs 'long' [10, 100), launched at 2. Stream 7 waits on stream 8 (call at 5), then
    // 'after' is launched at 20 and starts at 101: it waited for 'long'. A second wait on stream
    // 8 (at 150, after 'long' ended) and 'later' launched at 160 onto an idle stream.
    lab_test::write_file(d / "w.json", R"J({"traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 2, "dur": 1, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "long", "ts": 10, "dur": 90, "args": {"correlation": 1, "stream": 8}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 5, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "wait_on_stream": 8}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 20, "dur": 1, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": "after", "ts": 101, "dur": 5, "args": {"correlation": 2, "stream": 7}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 150, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "wait_on_stream": 8}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 160, "dur": 1, "args": {"correlation": 3}},
      {"ph": "X", "cat": "kernel", "name": "later", "ts": 165, "dur": 5, "args": {"correlation": 3, "stream": 7}}]})J");
    const auto s = trace::read(d / "w.json");
    CHECK(s.launch_queued.count == 1);
    CHECK(s.launch_queued.median_us == Approx(81));  // 'after': 101 - 20
    CHECK(s.launch_idle.count == 2);                 // 'long' (8) and 'later' (5)
    CHECK(s.launch_idle.median_us == Approx(6.5));
}

TEST_CASE("a wait covers the other stream's work enqueued before the event it names was recorded", "[trace_summary]") {
    lab_test::TempDir d;
    // The event is recorded on stream 8 at 1 (correlation 9), before 'long' is launched at 2: the
    // wait at 5 does not wait for 'long', so 'after' (launched at 20, started at 25) found its
    // stream idle. Without the record's correlation the wait covers everything enqueued before it.
    auto trace = [](const std::string& record_arg) {
        return R"J({"traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "ts": 1, "dur": 0.5, "args": {"correlation": 9}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 2, "dur": 1, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "long", "ts": 10, "dur": 90, "args": {"correlation": 1, "stream": 8}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 5, "dur": 1, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "wait_on_stream": 8)J" +
               record_arg + R"J(}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 20, "dur": 1, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": "after", "ts": 25, "dur": 5, "args": {"correlation": 2, "stream": 7}}]})J";
    };
    lab_test::write_file(d / "named.json", trace(R"J(, "wait_on_cuda_event_record_corr_id": 9)J"));
    lab_test::write_file(d / "unnamed.json", trace(""));
    CHECK(trace::read(d / "named.json").launch_queued.count == 0);
    CHECK(trace::read(d / "unnamed.json").launch_queued.count == 1);
}

// A bad-input review: `cat a.gz b.gz` (pigz, bgzip: a gzip file of several members) was refused
// as a trace cut short.
TEST_CASE("a .json.gz of several gzip members reads as the whole trace", "[trace_summary]") {
    lab_test::TempDir d;
    const std::string gz = lab_test::read_file(fixture("a100_event_sync.json.gz"));
    const std::string text = gzip_decompress(gz, GzipLimits{1u << 30, 1000, 0});
    const std::size_t half = text.size() / 2;
    lab_test::write_file(d / "members.json.gz", gzip_compress(text.substr(0, half)) + gzip_compress(text.substr(half)));
    const auto whole = trace::read(fixture("a100_event_sync.json.gz")), joined = trace::read(d / "members.json.gz");
    CHECK(joined.events == whole.events);
    CHECK(joined.kernel_count == whole.kernel_count);
    CHECK(joined.span_us == whole.span_us);
    // The second member cut short is still a trace cut short.
    const std::string second = gzip_compress(text.substr(half));
    lab_test::write_file(d / "cut.json.gz", gzip_compress(text.substr(0, half)) + second.substr(0, second.size() / 2));
    CHECK_THAT(refusal(d / "cut.json.gz"), Contains("does not decompress") && Contains("truncated"));
}

// A bad-input review: a trace in JSON array form without its closing ']' was refused, where
// Chrome's importer reads it (a writer that crashed cannot write it). Only that cut is read.
TEST_CASE("the array form missing its final ']' is read and said; other cuts are refused", "[trace_summary]") {
    lab_test::TempDir d;
    const std::string events = R"([
{"ph": "X", "cat": "kernel", "name": "a", "ts": 0, "dur": 5},
{"ph": "X", "cat": "kernel", "name": "b", "ts": 10, "dur": 5})";
    const auto read = [&](const std::string& text) {
        lab_test::write_file(d / "t.json", text);
        return trace::read(d / "t.json");
    };
    const auto whole = read(events + "]\n");
    CHECK_FALSE(whole.unclosed_array);
    CHECK(whole.kernel_count == 2);
    for (const char* tail_text : {"", "\n", ",", ",\n  \n"}) {
        const std::string tail = tail_text;
        INFO('"' + tail + '"');
        const auto s = read(events + tail);
        CHECK(s.unclosed_array);
        CHECK(s.kernel_count == 2);
        CHECK(s.span_us == whole.span_us);
    }
    // Cut inside an event, or in the object form: still a trace cut short.
    lab_test::write_file(d / "mid.json", events.substr(0, events.size() - 10));
    CHECK_THAT(refusal(d / "mid.json"), Contains("not valid JSON") && Contains("cut short"));
    lab_test::write_file(d / "object.json", R"({"traceEvents": )" + events + "]");
    CHECK_THAT(refusal(d / "object.json"), Contains("not valid JSON"));
    lab_test::write_file(d / "object-list.json", R"({"traceEvents": )" + events);
    CHECK_THAT(refusal(d / "object-list.json"), Contains("not valid JSON"));
}

// A bad-input review: complete events without ts or dur were dropped unsaid (a negative dur was
// counted), and "name": 12 printed a blank name.
TEST_CASE("complete events missing ts, dur or a name are counted as left out; a number name is its text", "[trace_summary]") {
    lab_test::TempDir d;
    const auto read = [&](const std::string& event) {
        lab_test::write_file(d / "t.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "kept", "ts": 0, "dur": 5}, )" + event + "]}");
        return trace::read(d / "t.json");
    };
    const std::vector<std::pair<std::string, std::string>> damaged = {
        {R"({"ph": "X", "cat": "kernel", "name": "k", "dur": 5})", "'k': no ts"},
        {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 10})", "'k': no dur"},
        {R"({"ph": "X", "cat": "kernel", "name": "k", "ts": {"at": 10}, "dur": 5})", "'k': no ts"},
        {R"({"ph": "X", "cat": "kernel", "ts": 10, "dur": 5})", "an event: no name"},
        {R"({"ph": "X", "cat": "kernel", "name": null, "ts": 10, "dur": 5})", "an event: no name"},
        {R"({"ph": "X", "cat": "kernel", "name": "", "ts": 10, "dur": 5})", "an event: no name"},
        {R"({"ph": "X", "cat": "kernel", "name": true, "ts": 10, "dur": 5})", "an event: no name"}};
    for (const auto& [event, first] : damaged) {
        INFO(event);
        const auto s = read(event);
        CHECK(s.events == 1);
        CHECK(s.events_left_out == 1);
        CHECK_THAT(s.first_left_out, Contains(first));
        CHECK(s.kernel_count == 1);
    }
    const auto numbered = read(R"({"ph": "X", "cat": "kernel", "name": 12, "ts": 10, "dur": 5})");
    CHECK(numbered.events_left_out == 0);
    REQUIRE(numbered.kernels.size() == 2);
    CHECK((numbered.kernels[0].name == "12" || numbered.kernels[1].name == "12"));
    // Events of other phases carry no dur: never left out for it.
    CHECK(read(R"({"ph": "i", "name": "Record Window End", "ts": 10})").events_left_out == 0);
}
