// Tests for the safetensors header reader (framework/src/safetensors.cpp): files written here,
// valid (every dtype upstream defines, metadata, any header order, empty and scalar tensors, a
// sparse file far larger than memory) and broken in each way REFERENCES.md lists, each refused
// with the file, the tensor and the fix named; sharded checkpoints with an index, valid and
// inconsistent.
#include <chrono>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include <fstream>

#include "errors.hpp"
#include "safetensors.hpp"
#include "safetensors_writer.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
namespace st = lab::safetensors;
using Catch::Matchers::Contains;
using lab_test::SafetensorsWriter;

// The InputError message reading `p` throws, or "" when it reads.
std::string error_of(const fs::path& p) {
    try {
        st::read_checkpoint(p);
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

SafetensorsWriter two_tensors() {
    SafetensorsWriter w;
    w.metadata("format", "pt").add("a.weight", "F32", {2, 3}).add("b.bias", "BF16", {4});
    return w;
}

}  // namespace

namespace {

// rchar of /proc/self/io: every byte this process has had from read() and the like.
unsigned long long bytes_read_by_this_process() {
    std::ifstream io("/proc/self/io");
    std::string key;
    unsigned long long value = 0;
    while (io >> key >> value)
        if (key == "rchar:") return value;
    return 0;
}

}  // namespace

TEST_CASE("a safetensors file: tensors, parameters, bytes by dtype and __metadata__", "[safetensors]") {
    lab_test::TempDir dir;
    const auto file = dir / "model.safetensors";
    two_tensors().write(file);
    const auto c = st::read_checkpoint(file);
    CHECK(c.path == file.string());
    CHECK_FALSE(c.index);
    REQUIRE(c.shards.size() == 1);
    REQUIRE(c.tensors.size() == 2);
    CHECK(c.tensors[0].name == "a.weight");
    CHECK(c.tensors[0].dtype == "F32");
    CHECK(c.tensors[0].shape == std::vector<std::uint64_t>{2, 3});
    CHECK(c.tensors[0].begin == 0);
    CHECK(c.tensors[0].end == 24);
    CHECK(c.tensors[0].shard == file.string());
    CHECK(c.tensors[1].numel == 4);
    CHECK(c.params == 10);
    CHECK(c.bytes == 32);
    CHECK(c.file_bytes == fs::file_size(file));
    CHECK(c.by_dtype.at("F32").tensors == 1);
    CHECK(c.by_dtype.at("F32").params == 6);
    CHECK(c.by_dtype.at("F32").bytes == 24);
    CHECK(c.by_dtype.at("BF16").bytes == 8);
    CHECK(c.metadata.at("format") == "pt");
    const auto top = st::largest(c, 1);
    REQUIRE(top.size() == 1);
    CHECK(top[0].name == "a.weight");
}

TEST_CASE("every dtype safetensors defines, with its bits; sub-byte dtypes must fill whole bytes", "[safetensors]") {
    // upstream's Dtype::bitsize (safetensors/src/tensor.rs)
    const std::map<std::string, unsigned> upstream = {
        {"BOOL", 8},        {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},   {"I8", 8},   {"F8_E5M2", 8},
        {"F8_E4M3", 8},     {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16}, {"U16", 16},
        {"F16", 16},        {"BF16", 16}, {"I32", 32},   {"U32", 32},   {"F32", 32}, {"C64", 64}, {"F64", 64},
        {"I64", 64},        {"U64", 64}};
    CHECK(st::dtype_names().size() == upstream.size());
    for (const auto& [d, bits] : upstream) CHECK(st::dtype_bits(d) == bits);
    CHECK_FALSE(st::dtype_bits("F12"));
    CHECK_FALSE(st::dtype_bits("bf16"));  // names are case-sensitive, as upstream's

    lab_test::TempDir dir;
    SafetensorsWriter w;
    std::uint64_t bytes = 0;
    for (const auto& [d, bits] : upstream) {
        w.add("t." + d, d, {4, 2});  // 8 elements: `bits` bytes
        bytes += bits;
    }
    w.write(dir / "all.safetensors");
    const auto c = st::read_checkpoint(dir / "all.safetensors");
    CHECK(c.tensors.size() == upstream.size());
    CHECK(c.bytes == bytes);
    CHECK(c.params == 8 * upstream.size());
    CHECK(c.by_dtype.at("F4").bytes == 4);
    CHECK(c.by_dtype.at("F6_E3M2").bytes == 6);

    // 3 F4 elements are 12 bits: upstream refuses it (MisalignedSlice), so does lab.
    SafetensorsWriter odd;
    odd.add_at("packed", "F4", {3}, 0, 2);
    odd.write(dir / "odd.safetensors");
    const std::string e = error_of(dir / "odd.safetensors");
    CHECK_THAT(e, Contains("'packed'"));
    CHECK_THAT(e, Contains("not a whole number of bytes"));
}

TEST_CASE("header order, empty headers, empty and scalar tensors are all valid", "[safetensors]") {
    lab_test::TempDir dir;
    SafetensorsWriter w;  // written in reverse order of offsets
    w.add_at("z.second", "F16", {2}, 8, 12).add_at("a.first", "F32", {2}, 0, 8).add_at("m.empty", "F32", {0, 5}, 12, 12)
        .add_at("s.scalar", "I64", {}, 12, 20);
    w.write(dir / "m.safetensors");
    const auto c = st::read_checkpoint(dir / "m.safetensors");
    REQUIRE(c.tensors.size() == 4);
    CHECK(c.tensors[0].name == "a.first");
    CHECK(c.tensors[1].name == "z.second");
    CHECK(c.tensors[2].name == "m.empty");
    CHECK(c.tensors[2].numel == 0);
    CHECK(c.tensors[3].numel == 1);
    CHECK(c.params == 2 + 2 + 0 + 1);

    SafetensorsWriter empty;
    empty.write(dir / "empty.safetensors");
    const auto e = st::read_checkpoint(dir / "empty.safetensors");
    CHECK(e.tensors.empty());
    CHECK(e.bytes == 0);
}

TEST_CASE("a 64 GB sparse checkpoint is read from its header alone", "[safetensors]") {
    lab_test::TempDir dir;
    SafetensorsWriter w;
    for (int i = 0; i < 16; ++i) w.add("layers." + std::to_string(i) + ".weight", "BF16", {32768, 65536});  // 4 GiB each
    w.write(dir / "big.safetensors");
    const auto read_before = bytes_read_by_this_process();
    const auto c = st::read_checkpoint(dir / "big.safetensors");
    const auto read = bytes_read_by_this_process() - read_before;
    CHECK(c.bytes == 16ull * 32768 * 65536 * 2);
    CHECK(c.params == 16ull * 32768 * 65536);
    // The headers only: the kernel's count of bytes read, not a wall time, which a busy machine
    // stretches (reading 64 GB of a sparse file's zeros would count 64 GB).
    CHECK(read < 64ull << 20);
}

TEST_CASE("a broken safetensors file is refused naming the file, the tensor and the fix", "[safetensors]") {
    lab_test::TempDir dir;
    const auto file = dir / "bad.safetensors";
    std::string tensor;  // the tensor the message must name, if any
    std::string expected;
    SECTION("shorter than the 8-byte length") {
        lab_test::write_file(file, "abc");
        expected = "shorter than the 8-byte header length";
    }
    SECTION("a header length over 100 MB") {
        SafetensorsWriter::write_raw(file, "{}      ", 0, 100'000'001);
        expected = "over safetensors' limit";
    }
    SECTION("a header length past the end of the file") {
        SafetensorsWriter::write_raw(file, "{}      ", 0, 4096);
        expected = "the header length says 4096 bytes but the file has only 8";
    }
    SECTION("a header that is not UTF-8") {
        SafetensorsWriter::write_raw(file, "{\"\xff\xfe\": 1}  ", 0);
        expected = "not valid UTF-8";
    }
    SECTION("a header that is not JSON") {
        SafetensorsWriter::write_raw(file, "{\"a\": {\"dtype\": ", 0);
        expected = "the header is not valid JSON";
    }
    // A fuzzing review: these said nlohmann's own "[json.exception...]" words.
    SECTION("a header holding a number beyond a double") {
        SafetensorsWriter::write_raw(file, "{\"w\": 1e400}  ", 0);
        expected = "byte 14 of the file: the number 1e400 is beyond the range of a double";
    }
    SECTION("a header cut inside its JSON, said without the parser's own words") {
        SafetensorsWriter::write_raw(file, "{\"a\": {\"dtype\": ", 0);
        expected = "the header is not valid JSON (byte";
    }
    SECTION("a header that is not an object") {
        SafetensorsWriter::write_raw(file, "[1, 2, 3]       ", 0);
        expected = "must be a JSON object";
    }
    SECTION("a name given twice") {
        SafetensorsWriter w;
        w.add("w", "F32", {2}).add("w", "F32", {2});
        w.write(file);
        expected = "names 'w' twice";
    }
    SECTION("__metadata__ with a value that is not a string") {
        SafetensorsWriter w;
        w.raw("__metadata__", R"({"step": 100})").add("w", "F32", {2});
        w.write(file);
        expected = "__metadata__ 'step' must be a string";
    }
    SECTION("an unknown dtype") {
        SafetensorsWriter w;
        w.add_at("w", "F12", {2}, 0, 3);
        w.write(file);
        tensor = "w";
        expected = "unknown dtype 'F12'";
    }
    SECTION("a missing key") {
        SafetensorsWriter w;
        w.raw("w", R"({"dtype": "F32", "data_offsets": [0, 8]})", 8);
        w.write(file);
        tensor = "w";
        expected = "key 'shape' is missing";
    }
    SECTION("a negative dimension") {
        SafetensorsWriter w;
        w.raw("w", R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})", 8);
        w.write(file);
        tensor = "w";
        expected = "shape must hold non-negative integers";
    }
    SECTION("data_offsets that are not a pair") {
        SafetensorsWriter w;
        w.raw("w", R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 4, 8]})", 8);
        w.write(file);
        tensor = "w";
        expected = "data_offsets must be [BEGIN, END]";
    }
    SECTION("data_offsets that end before they begin") {
        SafetensorsWriter w;
        w.add_at("w", "F32", {0}, 8, 4);
        w.write(file, 8);
        tensor = "w";
        expected = "end before they begin";
    }
    SECTION("a shape too large to count") {
        SafetensorsWriter w;
        w.add_at("w", "F32", {1ull << 40, 1ull << 40}, 0, 8);
        w.write(file);
        tensor = "w";
        expected = "more elements than 64 bits count";
    }
    SECTION("a size that is not dtype x shape") {
        SafetensorsWriter w;
        w.add("ok", "F32", {2}).add_at("w", "BF16", {3, 4}, 8, 30);
        w.write(file);
        tensor = "w";
        expected = "data_offsets [8, 30] hold 22 bytes, but BF16 [3, 4] needs 24";
    }
    SECTION("a first tensor that does not begin at 0") {
        SafetensorsWriter w;
        w.add_at("w", "F32", {2}, 4, 12);
        w.write(file);
        tensor = "w";
        expected = "the first tensor must begin at 0";
    }
    SECTION("a gap between tensors") {
        SafetensorsWriter w;
        w.add("a", "F32", {2}).add_at("w", "F32", {2}, 12, 20);
        w.write(file);
        tensor = "w";
        expected = "leave a gap after tensor 'a', which ends at 8";
    }
    SECTION("overlapping tensors") {
        SafetensorsWriter w;
        w.add("a", "F32", {2}).add_at("w", "F32", {2}, 4, 12);
        w.write(file);
        tensor = "w";
        expected = "overlap tensor 'a'";
    }
    SECTION("tensor data missing at the end of the file") {
        two_tensors().write(file, -5);
        expected = "tensor data is missing";
    }
    SECTION("bytes after the last tensor") {
        two_tensors().write(file, 3);
        expected = "there are bytes after the last tensor";
    }
    const std::string e = error_of(file);
    INFO(e);
    REQUIRE_FALSE(e.empty());
    CHECK_THAT(e, !Contains("json.exception"));
    CHECK_THAT(e, Contains(file.string()));
    if (!tensor.empty()) CHECK_THAT(e, Contains("tensor '" + tensor + "'"));
    CHECK_THAT(e, Contains(expected));
    CHECK_THAT(e, Contains("fix:"));
}

TEST_CASE("a sharded checkpoint is read through its index", "[safetensors]") {
    lab_test::TempDir dir;
    SafetensorsWriter a, b;
    a.metadata("format", "pt").add("embed.weight", "BF16", {16, 8}).add("layers.0.w", "BF16", {8, 8});
    b.metadata("format", "pt").add("layers.1.w", "BF16", {8, 8}).add("lm_head.weight", "F32", {16, 8});
    a.write(dir / "model-00001-of-00002.safetensors");
    b.write(dir / "model-00002-of-00002.safetensors");
    const std::uint64_t total = 256 + 128 + 128 + 512;
    lab_test::write_file(dir / "model.safetensors.index.json",
                         lab_test::safetensors_index({{"embed.weight", "model-00001-of-00002.safetensors"},
                                                      {"layers.0.w", "model-00001-of-00002.safetensors"},
                                                      {"layers.1.w", "model-00002-of-00002.safetensors"},
                                                      {"lm_head.weight", "model-00002-of-00002.safetensors"}},
                                                     total));
    for (const fs::path& arg : {dir.path(), dir / "model.safetensors.index.json"}) {
        const auto c = st::read_checkpoint(arg);
        REQUIRE(c.index);
        CHECK(*c.index == (dir / "model.safetensors.index.json").string());
        REQUIRE(c.shards.size() == 2);
        CHECK(c.shards[0] == (dir / "model-00001-of-00002.safetensors").string());
        CHECK(c.tensors.size() == 4);
        CHECK(c.params == 128 + 64 + 64 + 128);
        CHECK(c.bytes == total);
        CHECK(c.by_dtype.at("BF16").tensors == 3);
        CHECK(c.by_dtype.at("F32").bytes == 512);
        CHECK(c.metadata.at("format") == "pt");
        CHECK(c.index_total_size == total);
        CHECK(c.notes.empty());
        CHECK(st::largest(c, 2)[0].shard == (dir / "model-00002-of-00002.safetensors").string());
    }
    // A total_size that disagrees is worth a note, not a refusal (writers disagree on it).
    lab_test::write_file(dir / "model.safetensors.index.json",
                         lab_test::safetensors_index({{"embed.weight", "model-00001-of-00002.safetensors"},
                                                      {"layers.0.w", "model-00001-of-00002.safetensors"},
                                                      {"layers.1.w", "model-00002-of-00002.safetensors"},
                                                      {"lm_head.weight", "model-00002-of-00002.safetensors"}},
                                                     total + 1));
    const auto c = st::read_checkpoint(dir.path());
    REQUIRE(c.notes.size() == 1);
    CHECK_THAT(c.notes[0], Contains("total_size"));
}

TEST_CASE("a folder: the index, else model.safetensors, else its only .safetensors file", "[safetensors]") {
    lab_test::TempDir dir;
    CHECK_THAT(error_of(dir.path()), Contains("no model.safetensors.index.json, no model.safetensors"));
    CHECK_THAT(error_of(dir / "missing.safetensors"), Contains("no such file or folder"));
    two_tensors().write(dir / "weights.safetensors");
    CHECK(st::read_checkpoint(dir.path()).tensors.size() == 2);
    two_tensors().write(dir / "other.safetensors");
    CHECK_THAT(error_of(dir.path()), Contains("several .safetensors files"));
    SafetensorsWriter one;
    one.add("x", "F32", {1});
    one.write(dir / "model.safetensors");
    CHECK(st::read_checkpoint(dir.path()).tensors.size() == 1);
}

TEST_CASE("an inconsistent sharded checkpoint is refused naming the index or shard, the tensor and the fix", "[safetensors]") {
    lab_test::TempDir dir;
    const auto index = dir / "model.safetensors.index.json";
    const std::string s1 = "model-00001-of-00002.safetensors", s2 = "model-00002-of-00002.safetensors";
    SafetensorsWriter a, b;
    a.add("x", "F32", {2}).add("y", "F32", {2});
    b.add("z", "F32", {2});
    a.write(dir / s1);
    b.write(dir / s2);
    std::string where = index.string(), tensor, expected;
    SECTION("a shard that does not exist") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", "model-00003-of-00002.safetensors"}}));
        tensor = "z";
        expected = "names shard 'model-00003-of-00002.safetensors'";
    }
    SECTION("a shard outside the folder") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", "../" + s2}}));
        tensor = "z";
        expected = "not a file name inside the checkpoint's folder";
    }
    SECTION("a tensor in two shards") {
        SafetensorsWriter b2;
        b2.add("z", "F32", {2}).add("y", "F32", {2});
        b2.write(dir / s2);
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", s2}}));
        where = (dir / s2).string();
        tensor = "y";
        expected = "is also in " + (dir / s1).string();
    }
    SECTION("a tensor the index maps twice") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", s2}, {"y", s2}}));
        expected = "names 'y' twice";
    }
    SECTION("a tensor in another shard than the index says") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s2}, {"z", s2}}));
        where = (dir / s1).string();
        tensor = "y";
        expected = "the index (" + index.string() + ") puts it in '" + s2 + "'";
    }
    SECTION("a shard tensor the index does not name") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"z", s2}}));
        where = (dir / s1).string();
        tensor = "y";
        expected = "not in the index's weight_map";
    }
    SECTION("an index tensor no shard holds") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", s2}, {"w", s2}}));
        tensor = "w";
        expected = "that shard's header has no such tensor";
    }
    SECTION("an index that is not JSON") {
        lab_test::write_file(index, "{\"weight_map\": {");
        expected = "the index is not valid JSON";
    }
    SECTION("an index holding a number beyond a double") {
        lab_test::write_file(index, R"({"metadata": {"total_size": 1e400}, "weight_map": {}})");
        expected = "the number 1e400 is beyond the range of a double";
    }
    SECTION("an index without a weight_map") {
        lab_test::write_file(index, R"({"metadata": {"total_size": 24}})");
        expected = "with a \"weight_map\"";
    }
    SECTION("a broken shard") {
        lab_test::write_file(index, lab_test::safetensors_index({{"x", s1}, {"y", s1}, {"z", s2}}));
        SafetensorsWriter bad;
        bad.add_at("z", "F32", {2}, 0, 12);
        bad.write(dir / s2);
        where = (dir / s2).string();
        tensor = "z";
        expected = "hold 12 bytes, but F32 [2] needs 8";
    }
    const std::string e = error_of(dir.path());
    INFO(e);
    REQUIRE_FALSE(e.empty());
    CHECK_THAT(e, !Contains("json.exception"));
    CHECK_THAT(e, Contains(where + ":"));
    if (!tensor.empty()) CHECK_THAT(e, Contains("'" + tensor + "'"));
    CHECK_THAT(e, Contains(expected));
    CHECK_THAT(e, Contains("fix:"));
}
