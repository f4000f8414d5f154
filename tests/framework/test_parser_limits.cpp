// The limits a hostile file cannot pass in the readers of files lab is handed from elsewhere
// (traces, HF configs, safetensors headers, nvidia-smi captures, the ceilings cache): each refused
// with the limit named, before the memory or the stack is spent, and real files well inside them.
// (Answers, specs, course.yaml and run records: tests/grader/test_hostile_inputs.cpp.)
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "ceilings_cache.hpp"
#include "errors.hpp"
#include "gzip.hpp"
#include "input_file.hpp"
#include "json_input.hpp"
#include "model_config.hpp"
#include "safetensors.hpp"
#include "smi_capture.hpp"
#include "test_support.hpp"
#include "trace_summary.hpp"

using namespace lab;
using Catch::Matchers::Contains;

namespace {

template <class Read>
std::string refusal(Read read) {
    try {
        read();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

std::string nested(int levels, const std::string& inner = "1") {
    return std::string(static_cast<std::size_t>(levels), '[') + inner + std::string(static_cast<std::size_t>(levels), ']');
}

// A file of `bytes` bytes that takes no disk (sparse): a size limit must refuse it unread.
void sparse_file(const std::filesystem::path& p, std::uintmax_t bytes) {
    { std::ofstream(p) << "x"; }
    std::filesystem::resize_file(p, bytes);
}

}  // namespace

TEST_CASE("a gzip bomb is refused by its expansion ratio; real traces are far inside it", "[limits]") {
    lab_test::TempDir d;
    // 64 MiB of one repeated event compresses about 1000-fold, as a bomb does.
    std::string events = R"({"traceEvents": [)";
    const std::string ev = R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1},)";
    while (events.size() < (std::size_t{64} << 20)) events += ev;
    events += R"({"ph": "i"}]})";
    const std::string gz = gzip_compress(events);
    REQUIRE(events.size() / gz.size() > trace::kMaxGzipRatio);
    lab_test::write_file(d / "bomb.json.gz", gz);
    const std::string why = refusal([&] { trace::read(d / "bomb.json.gz"); });
    CHECK_THAT(why, Contains("bomb.json.gz"));
    CHECK_THAT(why, Contains("expands more than 200-fold") && !Contains("kMax"));

    // The same limits in gzip_decompress itself: the size bound, named.
    const GzipLimits small{1000, 1e9, 0};
    CHECK_THROWS_WITH(gzip_decompress(gzip_compress(std::string(5000, 'a')), small), Contains("expands past 1000 bytes"));
    CHECK(gzip_decompress(gzip_compress(std::string(900, 'a')), small) == std::string(900, 'a'));

    // The recorded A100 traces: 7 to 20-fold, read whole.
    for (const char* name : {"a100_simple_add.json.gz", "a100_cupti_counters.json.gz"})
        CHECK(trace::read(lab_test::source_root() / "tests/fixtures/traces" / name).events > 0);
}

TEST_CASE("a trace past its size or nesting limit is refused naming the limit", "[limits]") {
    lab_test::TempDir d;
    sparse_file(d / "huge.json", trace::kMaxTraceBytes + 1);
    // The limits in words and numbers, not by the names of lab's constants (a review).
    CHECK_THAT(refusal([&] { trace::read(d / "huge.json"); }), Contains("larger than 2 GiB, the limit for it") && !Contains("kMax"));
    lab_test::write_file(d / "deep.json", R"({"traceEvents": [{"args": )" + nested(100000) + "}]}");
    CHECK_THAT(refusal([&] { trace::read(d / "deep.json"); }), Contains("deeper than 64 levels") && !Contains("kMax"));
    // Numbers out of range as strings or as device facts are never cast.
    lab_test::write_file(d / "odd.json", R"({"deviceProperties": [{"name": "X", "numSms": 1e300}],
        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "1e400", "dur": "-1e999"}]})");
    const auto s = trace::read(d / "odd.json");
    CHECK(!s.sms);
    // An event whose times are no times is left out, and counted (lab trace says so).
    CHECK(s.kernel_count == 0);
    CHECK(s.events_left_out == 1);
}

TEST_CASE("a model config past its size or nesting limit is refused naming the limit", "[limits]") {
    lab_test::TempDir d;
    sparse_file(d / "config.json", kMaxModelConfigBytes + 1);
    CHECK_THAT(refusal([&] { read_model_config(d / "config.json"); }), Contains("larger than 4 MiB, the limit for it") && !Contains("kMax"));
    lab_test::write_file(d / "deep.json", R"({"model_type": "llama", "rope_scaling": )" + nested(100000) + "}");
    CHECK_THAT(refusal([&] { read_model_config(d / "deep.json"); }),
               Contains("nested deeper than " + std::to_string(kMaxModelConfigDepth) + " levels") && !Contains("kMax"));
    CHECK_THAT(refusal([&] { read_model_config(d / "deep.json"); }), Contains("deep.json"));
}

TEST_CASE("a safetensors header nested past its limit is refused naming it", "[limits]") {
    lab_test::TempDir d;
    const std::string header = R"({"__metadata__": )" + nested(50000) + "}";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    lab_test::write_file(d / "deep.safetensors", bytes + header);
    CHECK_THAT(refusal([&] { safetensors::read_file(d / "deep.safetensors"); }),
               Contains("deeper than " + std::to_string(safetensors::kMaxHeaderDepth) + " levels") && !Contains("kMax"));
}

TEST_CASE("an nvidia-smi capture past its size limit is refused; a pid beyond any integer is left out", "[limits]") {
    lab_test::TempDir d;
    sparse_file(d / "huge.txt", smi::kMaxCaptureBytes + 1);
    CHECK_THAT(refusal([&] { smi::read(d / "huge.txt"); }), Contains("larger than 64 MiB, the limit for it") && !Contains("kMax"));
    // The -q capture under load lists three processes: give the first an id past 2^63.
    std::string odd = lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi" / "h100_load_q.txt");
    const auto at = odd.find("Process ID");
    REQUIRE(at != std::string::npos);
    const auto colon = odd.find(':', at), eol = odd.find('\n', at);
    odd.replace(colon + 1, eol - colon - 1, " 1e300");
    lab_test::write_file(d / "odd.txt", odd);
    const auto c = smi::read(d / "odd.txt");
    REQUIRE(c.gpus.size() == 1);
    REQUIRE(c.gpus[0].processes.size() == 3);
    CHECK(!c.gpus[0].processes[0].pid);
    CHECK(c.gpus[0].processes[1].pid == 11328);
    CHECK(c.gpus[0].processes[2].pid == 11345);
}

TEST_CASE("a ceilings cache past its limits is ignored with the reason, and measured again", "[limits]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "deep.json", R"({"schema": "lab.ceilings/1", "ceilings": )" + nested(10000) + "}");
    std::string problem;
    CHECK(!load_cached_ceilings(d / "deep.json", DeviceFacts{}, &problem));
    CHECK_THAT(problem, Contains("nested deeper than 16 levels"));
    sparse_file(d / "huge.json", (1u << 20) + 1);
    CHECK(!load_cached_ceilings(d / "huge.json", DeviceFacts{}, &problem));
    CHECK_THAT(problem, Contains("larger than 1 MiB"));
}

// JSON keeps the last of two values for one key, silently: a run record, a model config and a
// safetensors header each say which key is written twice, and where (a robustness review found
// `vocab_size` twice read as 5, and a record's `student` twice taking the last).
TEST_CASE("a key written twice in one JSON object is refused, with its line", "[limits]") {
    const std::string text = "{\n  \"a\": {\"b\": 1, \"c\": 2},\n  \"b\": 3,\n  \"d\": {\"b\": 4,\n    \"b\": 5}\n}\n";
    const auto dup = first_duplicate_key(text);
    REQUIRE(dup);
    CHECK(dup->key == "b");
    CHECK(line_of_offset(text, dup->offset) == 5);  // the second "b" of object d, not the b of a or the top level's
    CHECK_FALSE(first_duplicate_key(R"({"a": {"x": 1}, "b": {"x": 2}, "x": [{"x": 3}, {"x": 4}]})"));
    CHECK(nesting_depth(R"({"a": [[1], {"b": "[[[["}]})") == 3);

    lab_test::TempDir d;
    const JsonLimits limits{.max_bytes = 1 << 20, .max_depth = 16};
    lab_test::write_file(d / "run.json", text);
    CHECK_THAT(refusal([&] { load_json_input(d / "run.json", "the run record", limits, "", "record it again"); }),
               Contains("run.json:5: the run record names 'b' twice in one object (byte"));
    lab_test::write_file(d / "config.json", "{\"model_type\": \"llama\",\n \"vocab_size\": 32000,\n \"vocab_size\": 5}");
    CHECK_THAT(refusal([&] { read_model_config(d / "config.json"); }), Contains("config.json:3: 'vocab_size' is written twice in one object"));
}

// A NUL a file put into a message ended it there (what() is a C string: the fix line was lost),
// and an escape sequence drove the reader's terminal.
TEST_CASE("control characters from a file are written out in an error message, which keeps its fix", "[limits]") {
    const InputError e("roster.csv:2", std::string("the student ID 'al\0ice\x1b[2J' is odd", 34), "remove it");
    const std::string msg = e.what();
    CHECK(msg == "roster.csv:2: the student ID 'al\\x00ice\\x1b[2J' is odd\n  fix: remove it");
}
