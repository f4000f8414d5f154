// `lab checkpoint` as a user meets it: the JSON keys (docs/checkpoint.md) for a single file and a
// sharded folder, the decode lower bound from a datasheet spec (never a calibration), the table's
// units, and a bad file refused with exit 2, the file and the tensor named, nothing on stdout.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ceilings_cache.hpp"
#include "safetensors_writer.hpp"
#include "cached_cpu_ceilings.hpp"
#include "lab_json.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using lab_test::run_lab;
using lab_test::SafetensorsWriter;
using nlohmann::json;

namespace {

using lab_test::EmptyCache;

json checkpoint_json(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    return lab_test::lab_json("checkpoint", args, env);
}

// A 7B-shaped checkpoint without its data: 2 shards, BF16 weights and F32 norms, sparse.
void write_sharded(const fs::path& dir) {
    SafetensorsWriter a, b;
    a.metadata("format", "pt").add("model.embed_tokens.weight", "BF16", {32000, 4096}).add("model.norm.weight", "F32", {4096});
    b.metadata("format", "pt").add("lm_head.weight", "BF16", {32000, 4096}).add("model.layers.0.mlp.up_proj.weight", "BF16", {11008, 4096});
    a.write(dir / "model-00001-of-00002.safetensors");
    b.write(dir / "model-00002-of-00002.safetensors");
    lab_test::write_file(dir / "model.safetensors.index.json",
                         lab_test::safetensors_index({{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                                                      {"model.norm.weight", "model-00001-of-00002.safetensors"},
                                                      {"lm_head.weight", "model-00002-of-00002.safetensors"},
                                                      {"model.layers.0.mlp.up_proj.weight", "model-00002-of-00002.safetensors"}}));
}

}  // namespace

TEST_CASE("lab checkpoint FILE --json prints the documented keys", "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    SafetensorsWriter w;
    w.metadata("format", "pt").add("a.weight", "BF16", {64, 32}).add("a.bias", "F32", {64}).add("q.weight", "F8_E4M3", {16, 16});
    w.write(dir / "model.safetensors");
    const json j = checkpoint_json({(dir / "model.safetensors").string()}, cache.env());
    for (const char* key : {"file", "index", "shards", "tensors", "params", "bytes", "file_bytes", "by_dtype", "metadata", "largest",
                            "notes", "device_note"})
        CHECK(j.contains(key));
    CHECK(j["file"] == (dir / "model.safetensors").string());
    CHECK(j["index"].is_null());
    CHECK(j["shards"].size() == 1);
    CHECK(j["tensors"] == 3);
    CHECK(j["params"] == 64 * 32 + 64 + 256);
    CHECK(j["bytes"] == 64 * 32 * 2 + 64 * 4 + 256);
    CHECK(j["by_dtype"]["BF16"] == json({{"tensors", 1}, {"params", 2048}, {"bytes", 4096}, {"bits", 16}}));
    CHECK(j["by_dtype"]["F8_E4M3"]["bytes"] == 256);
    CHECK(j["metadata"] == json({{"format", "pt"}}));
    REQUIRE(j["largest"].size() == 3);
    CHECK(j["largest"][0] == json({{"name", "a.weight"}, {"dtype", "BF16"}, {"shape", {64, 32}}, {"params", 2048}, {"bytes", 4096},
                                   {"shard", (dir / "model.safetensors").string()}}));
    // No device: its keys are absent and the reason is given.
    CHECK_FALSE(j.contains("decode_step_lower_bound_s"));
    CHECK_FALSE(j.contains("device"));
    CHECK_THAT(j["device_note"].get<std::string>(), Contains("--device-spec"));
    CHECK(checkpoint_json({(dir / "model.safetensors").string(), "--largest", "1"}, cache.env())["largest"].size() == 1);
}

TEST_CASE("lab checkpoint DIR reads a sharded checkpoint and, with a datasheet spec, the decode lower bound", "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    write_sharded(dir.path());
    const json j = checkpoint_json({dir.path().string(), "--device-spec", "H200-SXM"}, cache.env());
    CHECK(j["index"] == (dir / "model.safetensors.index.json").string());
    CHECK(j["shards"].size() == 2);
    CHECK(j["tensors"] == 4);
    const std::uint64_t params = 2ull * 32000 * 4096 + 4096 + 11008ull * 4096;
    CHECK(j["params"] == params);
    CHECK(j["bytes"] == 2 * (params - 4096) + 4 * 4096);
    CHECK(j["by_dtype"]["F32"]["tensors"] == 1);
    CHECK(j["largest"][0]["name"] == "lm_head.weight");  // ties by name
    CHECK(j["device"]["name"] == "NVIDIA H200 SXM");
    CHECK_THAT(j["device"]["source"].get<std::string>(), Contains("datasheet"));
    const double bw = j["device"]["bandwidth_bytes_per_s"].get<double>();
    CHECK_THAT(bw, WithinRel(4.8e12, 1e-9));  // configs/devices/h200_sxm.yaml
    CHECK_THAT(j["decode_step_lower_bound_s"].get<double>(), WithinRel(j["bytes"].get<double>() / bw, 1e-12));
    CHECK_FALSE(j.contains("device_note"));
}

TEST_CASE("lab checkpoint uses this machine's cached ceilings when there is no spec, and never calibrates", "[checkpoint]") {
    const std::string cpu = lab_test::cpu_model_name();
    EmptyCache cache;
    lab_test::store_cpu_ceilings(cache);
    lab_test::TempDir dir;
    write_sharded(dir.path());
    const json j = checkpoint_json({dir.path().string()}, cache.env());
    CHECK(j["device"]["name"] == cpu);
    CHECK_THAT(j["device"]["source"].get<std::string>(), Contains("cached"));
    CHECK_THAT(j["decode_step_lower_bound_s"].get<double>(), WithinRel(j["bytes"].get<double>() / 2e10, 1e-12));
    // Nothing measured, nothing written.
    CHECK(std::distance(fs::directory_iterator(cache.dir / "lab" / "ceilings"), fs::directory_iterator()) == 1);
}

TEST_CASE("lab checkpoint's table states its units, in GB", "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    write_sharded(dir.path());
    auto r = run_lab({"checkpoint", dir.path().string(), "--device-spec", "a100_40gb"}, cache.env());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("1 GB = 10^9 B"));
    CHECK_THAT(r.out, Contains("614,481,920 B"));  // the tensor bytes, exact
    CHECK_THAT(r.out, Contains("614.5 MB"));
    CHECK_THAT(r.out, Contains("BF16"));
    CHECK_THAT(r.out, Contains("lm_head.weight                     BF16   [32000, 4096]    262.1 MB"));
    CHECK_THAT(r.out, Contains("format"));
    CHECK_THAT(r.out, Contains("decode step lower bound"));
    CHECK_FALSE(Contains("GiB").match(r.out));
    CHECK_FALSE(Contains("MiB").match(r.out));
    auto none = run_lab({"checkpoint", dir.path().string()}, cache.env());
    CHECK_THAT(none.out, Contains("no device: give --device-spec"));
}

TEST_CASE("lab checkpoint refuses a bad file with exit 2, naming the file and the tensor, and prints nothing on stdout",
          "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    const auto file = dir / "bad.safetensors";
    std::string expected;
    SECTION("a size that is not dtype x shape") {
        SafetensorsWriter w;
        w.add_at("model.norm.weight", "F32", {4096}, 0, 8192);
        w.write(file);
        expected = "tensor 'model.norm.weight': data_offsets [0, 8192] hold 8192 bytes, but F32 [4096] needs 16384";
    }
    SECTION("a gap") {
        SafetensorsWriter w;
        w.add("a", "F32", {4}).add_at("model.norm.weight", "F32", {4}, 20, 36);
        w.write(file);
        expected = "tensor 'model.norm.weight': data_offsets [20, 36] leave a gap after tensor 'a'";
    }
    SECTION("a truncated file") {
        SafetensorsWriter w;
        w.add("model.norm.weight", "F32", {4096});
        w.write(file, -100);
        expected = "tensor data is missing";
    }
    auto r = run_lab({"checkpoint", file.string(), "--json"}, cache.env());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains(file.string()));
    CHECK_THAT(r.err, Contains(expected));
    CHECK_THAT(r.err, Contains("fix:"));
}

TEST_CASE("lab checkpoint refuses a shard the index names but that is missing, with exit 2", "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    write_sharded(dir.path());
    fs::remove(dir / "model-00002-of-00002.safetensors");
    auto r = run_lab({"checkpoint", dir.path().string()}, cache.env());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains((dir / "model.safetensors.index.json").string()));
    CHECK_THAT(r.err, Contains("model-00002-of-00002.safetensors"));
    CHECK_THAT(r.err, Contains("fix: download the missing shard"));
}

TEST_CASE("lab checkpoint refuses bad usage with exit 2, and is listed by lab --help", "[checkpoint]") {
    EmptyCache cache;
    lab_test::TempDir dir;
    SafetensorsWriter w;
    w.add("x", "F32", {1});
    w.write(dir / "x.safetensors");
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"checkpoint"}, {"checkpoint", (dir / "missing").string()},
             {"checkpoint", (dir / "x.safetensors").string(), "--device-spec", "b300"},
             {"checkpoint", (dir / "x.safetensors").string(), "--largest", "many"}}) {
        auto r = run_lab(args, cache.env());
        INFO(args.size());
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Contains("fix:") || Contains("usage:"));
    }
    auto help = run_lab({"--help"});
    CHECK_THAT(help.out, Contains("checkpoint FILE|DIR"));
    auto own = run_lab({"checkpoint", "--help"});
    CHECK(own.exit_code == 0);
    CHECK_THAT(own.out, Contains("--device-spec"));
}

// A spec may leave its bandwidth out (configs/devices/README.md): the table says "not stated", not
// 0 B/s beside an infinite bound (lab model's test has its twin).
TEST_CASE("lab checkpoint with a device spec without a bandwidth says it is not stated and gives no bound", "[checkpoint]") {
    lab_test::QuickConfigs configs;
    lab_test::drop_spec_key(configs, "a100_40gb", "bandwidth_bytes_per_s");
    lab_test::TempDir dir;
    write_sharded(dir.path());
    const json j = checkpoint_json({dir.path().string(), "--device-spec", "a100_40gb"}, configs.env());
    CHECK_FALSE(j.contains("decode_step_lower_bound_s"));
    CHECK_THAT(j["notes"].dump(), Contains("the device states no bandwidth") && Contains("no decode step lower bound"));
    const auto out = run_lab({"checkpoint", dir.path().string(), "--device-spec", "a100_40gb"}, configs.env());
    REQUIRE(out.exit_code == 0);
    CHECK_THAT(out.out, Contains("not stated") && !Contains(" 0 B/s") && !Contains("inf s") && !Contains("decode step lower bound  "));
}
