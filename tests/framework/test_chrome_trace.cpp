// The Chrome trace writer: where each event lands (process, thread, names), the µs conversion,
// the launch -> kernel flow arrows, and that an empty trace is still a document Perfetto opens.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "chrome_trace.hpp"

using namespace lab;
using nlohmann::json;

namespace {

TraceEvent event(std::string name, std::string category, double start_s, double duration_s, int track, bool host,
                 std::map<std::string, std::string> args = {}) {
    TraceEvent e;
    e.name = std::move(name);
    e.category = std::move(category);
    e.start_s = start_s;
    e.duration_s = duration_s;
    e.track = track;
    e.host = host;
    e.args = std::move(args);
    return e;
}

std::vector<json> with_phase(const json& doc, const std::string& ph) {
    std::vector<json> out;
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == ph) out.push_back(e);
    return out;
}

const json* find_named(const std::vector<json>& events, const std::string& name) {
    for (const auto& e : events)
        if (e["name"] == name) return &e;
    return nullptr;
}

// A launch on the host, its kernel on stream 7, a copy on stream 0 and a synchronisation.
std::vector<TraceEvent> sample() {
    return {
        event("cudaLaunchKernel", "runtime", 1.0e-6, 2.5e-6, 3, true, {{"correlation", "42"}}),
        event("vector_add(float*, float const*, int)", "kernel", 5.0e-6, 1.25e-6, 7, false,
              {{"correlation", "42"}, {"grid", "128,1,1"}}),
        event("memcpy HtoD", "memcpy", 0.5e-6, 3.0e-6, 0, false, {{"bytes", "4096"}}),
        event("synchronize", "sync", 4.0e-6, 3.0e-6, 3, true),
    };
}

}  // namespace

TEST_CASE("a trace document has the Chrome trace shape and the run's metadata", "[trace]") {
    TraceMetadata meta{"NVIDIA H200", "cuda", "02.05", 3};
    json doc = chrome_trace(sample(), meta);
    REQUIRE(doc["traceEvents"].is_array());
    // Not "ns", which made chrome://tracing show a 1.15 s kernel as 1,148,203,082 ns.
    CHECK(doc["displayTimeUnit"] == "ms");
    CHECK(doc["otherData"]["device"] == "NVIDIA H200");
    CHECK(doc["otherData"]["kind"] == "cuda");
    CHECK(doc["otherData"]["lesson"] == "02.05");
    CHECK(doc["otherData"]["dropped"] == 3);
    // It survives a round trip through text, as it will through a file.
    CHECK(json::parse(doc.dump()) == doc);
}

TEST_CASE("device work goes under the device's process, one thread per stream; host calls under 'host'", "[trace]") {
    json doc = chrome_trace(sample(), {"NVIDIA H200", "cuda", "02.05", 0});
    auto complete = with_phase(doc, "X");
    REQUIRE(complete.size() == 4);

    const json* kernel = find_named(complete, "vector_add(float*, float const*, int)");
    REQUIRE(kernel);
    CHECK((*kernel)["pid"] == 2);
    CHECK((*kernel)["tid"] == 7);
    CHECK((*kernel)["cat"] == "kernel");
    const json* launch = find_named(complete, "cudaLaunchKernel");
    REQUIRE(launch);
    CHECK((*launch)["pid"] == 1);
    CHECK((*launch)["tid"] == 3);
    CHECK((*launch)["cat"] == "runtime");
    const json* copy = find_named(complete, "memcpy HtoD");
    REQUIRE(copy);
    CHECK((*copy)["pid"] == 2);
    CHECK((*copy)["tid"] == 0);

    auto meta = with_phase(doc, "M");
    auto has = [&](const std::string& what, int pid, int tid, const std::string& name) {
        for (const auto& m : meta)
            if (m["name"] == what && m["pid"] == pid && m["tid"] == tid && m["args"]["name"] == name) return true;
        return false;
    };
    CHECK(has("process_name", 1, 0, "host"));
    CHECK(has("process_name", 2, 0, "NVIDIA H200"));
    CHECK(has("thread_name", 2, 7, "stream 7"));
    CHECK(has("thread_name", 2, 0, "stream 0"));
    CHECK(has("thread_name", 1, 3, "host thread 3: launches, copies, syncs"));
    // No event of any phase is in process 0, which Perfetto keeps for the idle "swapper".
    for (const auto& e : doc["traceEvents"]) CHECK(e["pid"] != 0);
}

TEST_CASE("times are microseconds, exact to the nanosecond", "[trace]") {
    json doc = chrome_trace(sample(), {"dev", "cpu", "", 0});
    auto complete = with_phase(doc, "X");
    const json* kernel = find_named(complete, "vector_add(float*, float const*, int)");
    REQUIRE(kernel);
    CHECK((*kernel)["ts"].get<double>() == 5.0);
    CHECK((*kernel)["dur"].get<double>() == 1.25);
    const json* copy = find_named(complete, "memcpy HtoD");
    REQUIRE(copy);
    CHECK((*copy)["ts"].get<double>() == 0.5);
    CHECK((*copy)["dur"].get<double>() == 3.0);

    // Sub-microsecond precision survives, and a second-scale offset does not lose it.
    json late = chrome_trace({event("k", "kernel", 12.000001234, 0.000000001, 0, false)}, {"dev", "cpu", "", 0});
    auto one = with_phase(late, "X");
    REQUIRE(one.size() == 1);
    CHECK(one[0]["ts"].get<double>() == 12000001.234);
    CHECK(one[0]["dur"].get<double>() == 0.001);
}

TEST_CASE("timed events are sorted by start time", "[trace]") {
    json doc = chrome_trace(sample(), {"dev", "cuda", "", 0});
    double last = -1;
    bool seen_timed = false, metadata_after_timed = false;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "M") {
            metadata_after_timed = metadata_after_timed || seen_timed;
            continue;
        }
        seen_timed = true;
        CHECK(e["ts"].get<double>() >= last);
        last = e["ts"].get<double>();
    }
    CHECK_FALSE(metadata_after_timed);
}

TEST_CASE("a launch and its kernel are linked by a flow with the correlation as ID", "[trace]") {
    json doc = chrome_trace(sample(), {"dev", "cuda", "", 0});
    auto starts = with_phase(doc, "s");
    auto finishes = with_phase(doc, "f");
    REQUIRE(starts.size() == 1);
    REQUIRE(finishes.size() == 1);
    const json& s = starts[0];
    const json& f = finishes[0];
    CHECK(s["id"] == f["id"]);
    CHECK(s["id"] == 42);
    CHECK(s["cat"] == "launch");
    CHECK(f["cat"] == "launch");
    // The start sits in the host launch, the end binds to the enclosing kernel slice.
    CHECK(s["pid"] == 1);
    CHECK(s["tid"] == 3);
    CHECK(s["ts"].get<double>() == 1.0);
    CHECK(f["pid"] == 2);
    CHECK(f["tid"] == 7);
    CHECK(f["ts"].get<double>() == 5.0);
    CHECK(f["bp"] == "e");
}

TEST_CASE("a correlation seen on one side only draws no arrow", "[trace]") {
    auto events = sample();
    events.push_back(event("cudaMalloc", "runtime", 9e-6, 1e-6, 3, true, {{"correlation", "43"}}));
    events.push_back(event("orphan", "kernel", 11e-6, 1e-6, 7, false, {{"correlation", "44"}}));
    json doc = chrome_trace(events, {"dev", "cuda", "", 0});
    CHECK(with_phase(doc, "s").size() == 1);
    CHECK(with_phase(doc, "f").size() == 1);
}

TEST_CASE("event arguments are kept", "[trace]") {
    json doc = chrome_trace(sample(), {"dev", "cuda", "", 0});
    auto complete = with_phase(doc, "X");
    const json* kernel = find_named(complete, "vector_add(float*, float const*, int)");
    REQUIRE(kernel);
    CHECK((*kernel)["args"]["grid"] == "128,1,1");
    // Whole numbers (a correlation, bytes) are integers, as Kineto writes them; other arguments
    // stay as the device gave them.
    CHECK((*kernel)["args"]["correlation"] == 42);
    CHECK((*kernel)["args"]["correlation"].is_number_unsigned());
    const json* launch = find_named(complete, "cudaLaunchKernel");
    REQUIRE(launch);
    CHECK((*launch)["args"]["correlation"] == 42);
    const json* copy = find_named(complete, "memcpy HtoD");
    REQUIRE(copy);
    CHECK((*copy)["args"]["bytes"] == 4096);
    CHECK((*copy)["args"]["bytes"].is_number_unsigned());
    const json* sync = find_named(complete, "synchronize");
    REQUIRE(sync);
    CHECK((*sync)["args"].is_object());
    CHECK((*sync)["args"].empty());
}

TEST_CASE("an empty trace is a valid document with no timed events", "[trace]") {
    json doc = chrome_trace({}, {"Intel(R) Xeon(R) Processor", "cpu", "02.01", 0});
    REQUIRE(doc["traceEvents"].is_array());
    CHECK(with_phase(doc, "X").empty());
    CHECK(with_phase(doc, "s").empty());
    CHECK(with_phase(doc, "f").empty());
    CHECK(doc["otherData"]["dropped"] == 0);
    CHECK(json::parse(doc.dump())["displayTimeUnit"] == "ms");
}

TEST_CASE("a correlation that is not a number stays a string, in args and as the flow's ID", "[trace]") {
    json doc = chrome_trace({event("launch k", "runtime", 1e-6, 1e-6, 0, true, {{"correlation", "a7"}}),
                             event("k", "kernel", 2e-6, 1e-6, 0, false, {{"correlation", "a7"}})},
                            {"dev", "cpu", "", 0});
    const auto complete = with_phase(doc, "X");
    const json* kernel = find_named(complete, "k");
    REQUIRE(kernel);
    CHECK((*kernel)["args"]["correlation"] == "a7");
    auto starts = with_phase(doc, "s");
    REQUIRE(starts.size() == 1);
    CHECK(starts[0]["id"] == "a7");
}

// A visual review: 884 of a quick 02.06 trace's 1,004 device slices were lab's calibrate.* re-
// measures, on the lesson's own stream tracks. They go to a process of their own.
TEST_CASE("lab's ceiling re-measures go to a process of their own, with their launch arrows", "[trace]") {
    std::vector<TraceEvent> events = sample();
    events.push_back(event("cudaLaunchKernel", "runtime", 8.0e-6, 1.0e-6, 3, true, {{"correlation", "43"}}));
    events.push_back(event("calibrate.read", "kernel", 9.0e-6, 4.0e-6, 7, false, {{"correlation", "43"}}));
    const json doc = chrome_trace(events, {"dev", "cuda", "02.06", 0});
    const std::vector<json> slices = with_phase(doc, "X");
    const json* cal = find_named(slices, "calibrate.read");
    REQUIRE(cal);
    CHECK((*cal)["pid"] == 3);
    CHECK((*find_named(slices, "vector_add(float*, float const*, int)"))["pid"] == 2);
    bool named = false;
    for (const auto& m : with_phase(doc, "M"))
        if (m["name"] == "process_name" && m["pid"] == 3) named = m["args"]["name"].get<std::string>().find("calibrate") != std::string::npos;
    CHECK(named);
    for (const auto& f : with_phase(doc, "f"))
        if (f["id"] == 43) CHECK(f["pid"] == 3);
    // Without re-measures, no such process.
    for (const auto& m : with_phase(chrome_trace(sample(), {"dev", "cuda", "", 0}), "M")) CHECK(m["pid"] != 3);
}
