// What `lab trace` adds to the totals so that it reads like a timeline viewer: short kernel names
// that stay distinct, busy time per stream, the largest idle gaps with the host's activity, and
// launch latency split into launches onto an idle stream and launches queued behind earlier work.
// Exact figures on a small trace written here; the recorded A100 trace's gaps as a viewer shows them.
#include <catch2/catch.hpp>

#include <set>

#include "chrome_trace.hpp"
#include "kernel_names.hpp"
#include "test_support.hpp"
#include "trace_summary.hpp"
#include "trace_windows.hpp"

using namespace lab;

namespace {

std::filesystem::path fixture(const std::string& name) { return lab_test::source_root() / "tests/fixtures/traces" / name; }

}  // namespace

TEST_CASE("kernel names are shortened to the function's name, and colliding ones stay apart", "[trace_summary]") {
    const std::vector<std::string> full = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, at::detail::Array<char*, 1> >"
        "(int, at::native::FillFunctor<c10::Half>, at::detail::Array<char*, 1>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::compare_scalar_kernel<c10::Half>(at::TensorIteratorBase&, "
        "at::native::(anonymous namespace)::OpType, c10::Half)::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, "
        "at::native::compare_scalar_kernel<c10::Half>(at::TensorIteratorBase&, at::native::(anonymous namespace)::OpType, "
        "c10::Half)::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)",
        "void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int)",
        "void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int)",
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<c10::Half>, at::detail::Array<char*, 3> >(int)",
        "void foo(int)",
        "void foo(float)",
        "triton_poi_fused_add_cos_sin_0",
        "matmul (64 x 64)",
        "sgemm 8 x 8 x 8",
        "ampere_sgemm_32x32_sliced1x4_tn",
    };
    const auto s = trace::short_kernel_names(full);
    REQUIRE(s.size() == full.size());
    // The functor that tells two instantiations of one template apart, the rest left out.
    CHECK(s[0] == "vectorized_elementwise_kernel<FillFunctor>");
    CHECK(s[1] == "vectorized_elementwise_kernel<compare_scalar_kernel::lambda>");
    // Only the arguments that differ.
    CHECK(s[2] == "fft2d_r2c_32x32<0u, false>");
    CHECK(s[3] == "fft2d_r2c_32x32<5u, true>");
    // Alone: return type, namespaces, template arguments and argument list all go.
    CHECK(s[4] == "max_pool_forward_nchw");
    // The functors alike too: their own template arguments come back.
    CHECK(s[5] == "vectorized_elementwise_kernel<AddFunctor<float>>");
    CHECK(s[6] == "vectorized_elementwise_kernel<AddFunctor<Half>>");
    // Overloads: nothing but the argument list differs.
    CHECK(s[7] == "foo #1");
    CHECK(s[8] == "foo #2");
    // Not C++ signatures: as they are.
    CHECK(s[9] == "triton_poi_fused_add_cos_sin_0");
    CHECK(s[10] == "matmul (64 x 64)");
    CHECK(s[11] == "sgemm 8 x 8 x 8");
    CHECK(s[12] == "ampere_sgemm_32x32_sliced1x4_tn");
    CHECK(std::set<std::string>(s.begin(), s.end()).size() == s.size());

    // Too long for the width: cut, still distinct, the distinguishing end kept.
    const std::string base = "void ns::a_very_long_kernel_name_that_goes_on_and_on_for_a_while<";
    const auto narrow = trace::short_kernel_names({base + "ns::FirstFunctor>(int)", base + "ns::SecondFunctor>(int)"}, 40);
    for (const auto& n : narrow) CHECK(n.size() <= 40);
    CHECK(narrow[0] != narrow[1]);
    CHECK(narrow[0].find("FirstFunctor>") != std::string::npos);
}

TEST_CASE("per-stream busy time, idle gaps, sync time and the launch split follow their definitions", "[trace_summary]") {
    lab_test::TempDir d;
    // Stream 1: A [10, 30) launched at 0 onto an idle stream (latency 10); B [30, 40) launched at
    // 5 while A was still to run (queued: 25); C [55, 60) launched at 50 after B ended (idle: 5).
    // Stream 2 (no args.stream: its tid): D [8, 9) launched at 6 (idle: 2). Gaps: 9..10 and
    // 40..55, the host in aten::add inside a "step" annotation, syncing 41..50 then launching C.
    // Correlation ids as numbers and as strings, and any pid, match all the same.
    lab_test::write_file(d / "t.json", R"J({"traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 5, "tid": 5, "ts": 0, "dur": 100},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 0, "dur": 2, "args": {"correlation": 1}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 5, "dur": 1, "args": {"correlation": "2"}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 6, "dur": 1, "args": {"correlation": 4}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 5, "tid": 5, "ts": 38, "dur": 20},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 5, "tid": 5, "ts": 41, "dur": 9, "args": {"correlation": 5}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 9, "tid": 1, "ts": 41, "dur": 9, "args": {"correlation": 5, "cuda_sync_kind": "Stream Sync"}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 9, "tid": 1, "ts": 42, "dur": 3, "args": {"cuda_sync_kind": "Stream Wait Event"}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 50, "dur": 2, "args": {"correlation": "3"}},
      {"ph": "X", "cat": "kernel", "name": "A", "pid": 9, "tid": 1, "ts": 10, "dur": 20, "args": {"correlation": "1", "stream": 1}},
      {"ph": "X", "cat": "kernel", "name": "B", "pid": 9, "tid": 1, "ts": 30, "dur": 10, "args": {"correlation": 2, "stream": 1}},
      {"ph": "X", "cat": "kernel", "name": "C", "pid": 9, "tid": 1, "ts": 55, "dur": 5, "args": {"correlation": 3, "stream": "1"}},
      {"ph": "X", "cat": "kernel", "name": "D", "pid": "GPU", "tid": 2, "ts": 8, "dur": 1, "args": {"correlation": "4"}}]})J");
    const auto s = trace::read(d / "t.json");
    CHECK(s.span_us == 52);
    CHECK(s.gpu_busy_us == 36);

    REQUIRE(s.streams.size() == 2);
    CHECK(s.streams[0].stream == "1");
    CHECK(s.streams[0].busy_us == 35);
    CHECK(s.streams[0].kernels == 3);
    CHECK(s.streams[1].stream == "2");
    CHECK(s.streams[1].busy_us == 1);

    REQUIRE(s.idle_gaps.size() == 2);
    const auto& g = s.idle_gaps[0];
    CHECK(g.dur_us == 15);
    CHECK(g.offset_us == 32);  // 40 - 8
    CHECK(g.start_ts_us == 40);
    CHECK(g.after == "B");
    CHECK(g.before == "C");
    REQUIRE(g.host_op);
    CHECK(g.host_op->name == "aten::add");  // inside "step", which covers the gap too
    CHECK(g.host_op->overlap_us == 15);
    REQUIRE(g.host_calls.size() == 2);  // the sync once: its cuda_sync is its runtime call's
    CHECK(g.host_calls[0].name == "cudaStreamSynchronize");
    CHECK(g.host_calls[0].overlap_us == 9);
    CHECK(g.host_calls[1].name == "cudaLaunchKernel");
    CHECK(g.host_calls[1].overlap_us == 2);
    CHECK(s.idle_gaps[1].dur_us == 1);
    CHECK(s.idle_gaps[1].after == "D");
    CHECK(s.idle_gaps[0].dur_us + s.idle_gaps[1].dur_us == s.gpu_idle_us());

    CHECK(s.sync_count == 2);
    CHECK(s.sync_host_us == 9);  // the stream wait event does not block the host
    CHECK(s.sync_us_by_kind.at("Stream Wait Event") == 3);

    CHECK(s.launches_matched == 4);
    CHECK(*s.launch_latency_us == 7.5);  // the old figure: the median of 10, 25, 5 and 2
    CHECK(s.launch_idle.count == 3);
    CHECK(*s.launch_idle.median_us == 5);
    CHECK(*s.launch_idle.p90_us == 10);
    CHECK(s.launch_queued.count == 1);
    CHECK(*s.launch_queued.median_us == 25);
    CHECK(*s.launch_queued.p90_us == 25);
}

// An op that only brushes a gap is still the op covering most of it: the summary keeps it with
// its overlap (the text names it only from kHostOpMinShare of the gap on), so the overlap must be
// exact. The innermost op covering half the gap wins over a longer one around it.
TEST_CASE("a gap's host op is kept with its exact overlap, however small", "[trace_summary]") {
    // Gaps 10..110 and 120..220. "brush" covers 1 µs of the first (1%); "main" 60 µs of the
    // second (60%), inside "step", which covers all of it.
    const auto s = trace::read(fixture("gap_host_ops.json"));
    REQUIRE(s.idle_gaps.size() == 2);
    const auto& brushed = s.idle_gaps[0].after == "A" ? s.idle_gaps[0] : s.idle_gaps[1];
    const auto& covered = s.idle_gaps[0].after == "A" ? s.idle_gaps[1] : s.idle_gaps[0];
    REQUIRE(brushed.host_op);
    CHECK(brushed.host_op->name == "brush");
    CHECK(brushed.host_op->overlap_us / brushed.dur_us == Approx(0.01));
    CHECK(brushed.host_op->overlap_us / brushed.dur_us < trace::kHostOpMinShare);
    REQUIRE(covered.host_op);
    CHECK(covered.host_op->name == "main");
    CHECK(covered.host_op->overlap_us / covered.dur_us == Approx(0.6));
}

TEST_CASE("the recorded A100 trace's largest idle gaps, in order, with the host's activity", "[trace_summary]") {
    const auto s = trace::read(fixture("a100_simple_add.json.gz"));
    REQUIRE(s.idle_gaps.size() == trace::kMaxIdleGaps);
    const double expected[] = {13250121, 2354098, 178712, 71427, 25025};  // as Perfetto shows them, in µs
    for (std::size_t i = 0; i < 5; ++i) CHECK(s.idle_gaps[i].dur_us == expected[i]);
    const auto& g = s.idle_gaps[0];
    CHECK(g.after_short == "Memset (Device)");
    CHECK(g.before_short == "computeOffsetsKernel");
    CHECK(g.offset_us == 2422116);
    REQUIRE(g.host_op);
    CHECK(g.host_op->name == "aten::cudnn_convolution");
    REQUIRE_FALSE(g.host_calls.empty());
    CHECK(g.host_calls[0].name == "cudaFree");
    CHECK(s.idle_gaps[2].host_calls[0].name == "cudaMalloc");

    // Streams 7 and 20: each within the busy time, together at least it.
    REQUIRE(s.streams.size() == 2);
    CHECK(s.streams[0].stream == "7");
    CHECK(s.streams[0].kernels + s.streams[1].kernels == 79);
    CHECK(s.streams[0].busy_us + s.streams[1].busy_us >= s.gpu_busy_us);
    CHECK(s.streams[0].busy_us <= s.gpu_busy_us);

    CHECK(s.launch_idle.count + s.launch_queued.count == s.launches_matched);
    CHECK(*s.launch_queued.median_us > *s.launch_idle.median_us);
    CHECK(s.sync_host_us == 663);  // Stream Sync 581 + Context Sync 82; not the stream wait events' 8
}

namespace {

// A lab trace as 02.10 makes one, times in µs: five long gaps while the model loads (990 to 4990
// µs), then two workloads, each measured untraced and then run in a traced window. "forward":
// gaps of 2 and 5 µs, lab's own sync after. "forward_sync_copy": a 10 µs gap, then the lesson's
// copy and sync (the host blocked 30039..30045 while the device drained at 30044, launched the
// next kernel at 30046, which started at 30050: a 6 µs gap), a 1 µs gap, lab's sync. One more
// sync after the last device event, outside the span.
std::vector<TraceEvent> lab_02_10_trace() {
    auto dev = [](const char* name, const char* cat, double from, double to) {
        return TraceEvent{name, cat, from * 1e-6, (to - from) * 1e-6, 0, false, {}};
    };
    auto host = [](const char* name, const char* cat, double from, double to, int track = 0) {
        return TraceEvent{name, cat, from * 1e-6, (to - from) * 1e-6, track, true, {}};
    };
    std::vector<TraceEvent> ev = {dev("load", "kernel", 0, 10), dev("memcpy HtoD", "memcpy", 1000, 1010), dev("load", "kernel", 3000, 3010),
                                  dev("load", "kernel", 6000, 6010), dev("load", "kernel", 10000, 10010), dev("load", "kernel", 15000, 15010),
                                  host("measuring forward (not traced)", "untraced", 15100, 20000, kLabTrack),
                                  host("forward", "workload", 20000, 20100, kLabTrack),
                                  dev("forward", "kernel", 20010, 20020), dev("forward", "kernel", 20022, 20030),
                                  dev("forward", "kernel", 20035, 20040), host("synchronize", "sync", 20040, 20045),
                                  host("measuring forward_sync_copy (not traced)", "untraced", 20100, 30000, kLabTrack),
                                  host("forward_sync_copy", "workload", 30000, 30200, kLabTrack),
                                  dev("forward_sync_copy", "kernel", 30010, 30020), dev("forward_sync_copy", "kernel", 30030, 30040),
                                  dev("memcpy HtoD", "memcpy", 30040, 30044), host("synchronize", "sync", 30039, 30045),
                                  host("launch forward_sync_copy", "runtime", 30046, 30048),
                                  dev("forward_sync_copy", "kernel", 30050, 30060), dev("forward_sync_copy", "kernel", 30061, 30070),
                                  host("synchronize", "sync", 30070, 30075), host("synchronize", "sync", 40000, 40005)};
    ev[1].args["bytes"] = "4096";
    ev[16].args["bytes"] = "4096";
    return ev;
}

}  // namespace

// The whole trace's five largest gaps are all the model's loading: a workload's own gaps, the one
// its sync and copy leave among them, are found per workload window, between device events that
// both start inside it (not the gap before its first event: the tracer starting, lab's work).
TEST_CASE("a lab trace's workload windows keep their own largest gap and the one next to a sync or copy", "[trace_summary]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "t.json", chrome_trace(lab_02_10_trace(), {"Test CPU", "cpu", "02.10", 0}).dump());
    const auto s = trace::read(d / "t.json");
    REQUIRE(s.idle_gaps.size() == trace::kMaxIdleGaps);
    for (const auto& g : s.idle_gaps) CHECK(g.dur_us >= 990);  // loading only: the windows' gaps are not among them

    REQUIRE(s.windows.size() == 2);
    const auto& f = s.windows[0];
    CHECK(f.name == "forward");
    CHECK(f.start_ts_us == 20000);
    CHECK(f.dur_us == 100);
    CHECK(f.kernels == 3);
    CHECK(f.copies == 0);
    CHECK(f.syncs == 1);
    CHECK(f.gaps == 2);  // not the 100 µs before its first kernel (90 of them traced)
    CHECK(f.idle_us == 7);
    REQUIRE(f.idle_gaps.size() == 1);  // no gap of its own is next to a copy or sync
    CHECK(f.idle_gaps[0].dur_us == 5);
    CHECK(f.idle_gaps[0].window_offset_us == 30);
    CHECK_FALSE(f.idle_gaps[0].next_to_copy);
    CHECK_FALSE(f.idle_gaps[0].next_to_sync);

    const auto& w = s.windows[1];
    CHECK(w.name == "forward_sync_copy");
    CHECK(w.kernels == 4);
    CHECK(w.copies == 1);
    CHECK(w.syncs == 2);
    CHECK(w.sync_host_us == 11);
    CHECK(w.gaps == 3);
    CHECK(w.idle_us == 17);
    REQUIRE(w.idle_gaps.size() == 2);
    CHECK(w.idle_gaps[0].dur_us == 10);  // the largest first, though no sync or copy made it
    CHECK(w.idle_gaps[0].window_offset_us == 20);
    CHECK_FALSE(w.idle_gaps[0].next_to_sync);
    const auto& caused = w.idle_gaps[1];  // the lesson's: after its copy, the host in its sync
    CHECK(caused.dur_us == 6);
    CHECK(caused.start_ts_us == 30044);
    CHECK(caused.offset_us == 30044);
    CHECK(caused.window_offset_us == 44);
    CHECK(caused.after == "memcpy HtoD");
    CHECK(caused.before == "forward_sync_copy");
    CHECK(caused.next_to_copy);
    CHECK(caused.next_to_sync);
    REQUIRE(caused.host_op);
    CHECK(caused.host_op->name == "forward_sync_copy");  // the window itself
    REQUIRE(caused.host_calls.size() == 2);
    CHECK(caused.host_calls[0].name == "launch forward_sync_copy");
    CHECK(caused.host_calls[1].name == "synchronize");
    CHECK(caused.host_calls[1].overlap_us == 1);

    // Syncs: the whole trace's four, three of them in the span (the last comes after the last
    // device event).
    CHECK(s.sync_count == 4);
    CHECK(s.sync_in_span_count == 3);
    CHECK(s.sync_in_span_host_us == 16);
    CHECK(s.sync_host_us == 21);
}

// When the largest gap is the one a sync made, it is listed once. A sync the host sat in all
// through a gap (lab's own, after launching a whole pass: the device idled with work queued) did
// not make it.
TEST_CASE("a window's gap is next to a sync when the sync returned in it, and listed once", "[trace_summary]") {
    lab_test::TempDir d;
    const std::vector<TraceEvent> ev = {{"once", "workload", 100e-6, 100e-6, kLabTrack, true, {}},
                                        {"k", "kernel", 110e-6, 10e-6, 0, false, {}},
                                        {"synchronize", "sync", 115e-6, 7e-6, 0, true, {}},  // returns at 122, in 120..125
                                        {"k", "kernel", 125e-6, 10e-6, 0, false, {}},
                                        {"k", "kernel", 136e-6, 10e-6, 0, false, {}},
                                        {"spanned", "workload", 300e-6, 100e-6, kLabTrack, true, {}},
                                        {"k", "kernel", 300e-6, 10e-6, 0, false, {}},
                                        {"synchronize", "sync", 305e-6, 25e-6, 0, true, {}},  // all through 310..320
                                        {"k", "kernel", 320e-6, 5e-6, 0, false, {}}};
    lab_test::write_file(d / "t.json", chrome_trace(ev, {"Test CPU", "cpu", "02.10", 0}).dump());
    const auto s = trace::read(d / "t.json");
    REQUIRE(s.windows.size() == 2);
    CHECK(s.windows[0].gaps == 2);
    REQUIRE(s.windows[0].idle_gaps.size() == 1);
    CHECK(s.windows[0].idle_gaps[0].dur_us == 5);
    CHECK(s.windows[0].idle_gaps[0].next_to_sync);
    CHECK_FALSE(s.windows[0].idle_gaps[0].next_to_copy);
    REQUIRE(s.windows[1].idle_gaps.size() == 1);
    CHECK(s.windows[1].idle_gaps[0].dur_us == 10);
    CHECK_FALSE(s.windows[1].idle_gaps[0].next_to_sync);
}

TEST_CASE("a Kineto trace has no workload windows; its syncs in the span are counted apart", "[trace_summary]") {
    const auto s = trace::read(fixture("a100_simple_add.json.gz"));
    CHECK(s.windows.empty());
    CHECK(s.sync_count == 41);          // the whole trace's, as 02.10's question counts them
    CHECK(s.sync_in_span_count == 39);  // two before the first GPU event or after the last
}
