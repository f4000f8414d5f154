// Tests for the datasheet specs (framework/src/device_specs.cpp, configs/devices/*.yaml): the
// shipped files load, each GPU in REFERENCES.md's table finds its own file by the name and memory
// size CUDA reports, near-miss parts find none, and a broken file is refused with its name and the
// 1-based line a person would open it at.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "device_specs.hpp"
#include "errors.hpp"
#include "test_support.hpp"

#ifndef LAB_SOURCE_ROOT
#error "LAB_SOURCE_ROOT must name the repository root, e.g. -DLAB_SOURCE_ROOT='\"/path/to/lab\"'"
#endif

namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const fs::path kShippedSpecs = fs::path(LAB_SOURCE_ROOT) / "configs" / "devices";

// A folder of its own per test (lab_test::TempDir), so a broken file never sits beside the one
// being checked and parallel test runs do not share files.
void write_in(const lab_test::TempDir& dir, const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
}

// The message of the InputError that loading `dir` throws, or "" when it loads.
std::string load_error(const fs::path& dir) {
    try {
        lab::load_device_specs(dir);
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

const lab::DeviceSpec* find_id(const std::vector<lab::DeviceSpec>& specs, const std::string& id) {
    for (const auto& spec : specs)
        if (spec.id == id) return &spec;
    return nullptr;
}

lab::DeviceSpec hand_built(const std::string& id, const std::string& pattern,
                           std::uint64_t memory) {
    lab::DeviceSpec spec;
    spec.id = id;
    spec.name = id;
    spec.file = "/specs/" + id + ".yaml";
    spec.match = {pattern};
    spec.memory_bytes = memory;
    return spec;
}

}  // namespace

TEST_CASE("every shipped device spec loads with the keys lab shows", "[specs]") {
    const auto specs = lab::load_device_specs(kShippedSpecs);

    std::vector<std::string> ids;
    for (const auto& spec : specs) ids.push_back(spec.id);
    // Sorted by file name, and README.md is not taken for a spec.
    CHECK(ids == std::vector<std::string>{"a100_40gb", "a100_sxm_80gb", "h100_sxm5", "h200_sxm",
                                          "l4", "rtx_4090", "t4"});

    for (const auto& spec : specs) {
        INFO(spec.file);
        CHECK_FALSE(spec.name.empty());
        CHECK_FALSE(spec.match.empty());
        CHECK_FALSE(spec.source.empty());
        CHECK(spec.memory_bytes > 0);
        CHECK(spec.sms > 0);
        CHECK(spec.bandwidth_bytes_per_s > 0);
        CHECK(spec.l2_bytes > 0);
        CHECK(spec.flops_per_s.count("fp32.simt") == 1);
        CHECK(spec.flops_per_s.count("fp16.tensor") == 1);
        CHECK(fs::path(spec.file).parent_path() == kShippedSpecs);
    }
}

TEST_CASE("the shipped specs hold the datasheet figures of REFERENCES.md", "[specs]") {
    const auto specs = lab::load_device_specs(kShippedSpecs);
    const auto* h200 = find_id(specs, "h200_sxm");
    REQUIRE(h200 != nullptr);
    CHECK(h200->name == "NVIDIA H200 SXM");
    CHECK(h200->sms == 132);
    CHECK(h200->l2_bytes == 52428800u);
    CHECK_THAT(h200->bandwidth_bytes_per_s, Catch::Matchers::WithinRel(4.8e12, 1e-9));
    CHECK_THAT(h200->flops_per_s.at("bf16.tensor"), Catch::Matchers::WithinRel(989.4e12, 1e-9));
    CHECK_THAT(h200->flops_per_s.at("fp32.simt"), Catch::Matchers::WithinRel(66.9e12, 1e-9));

    // What a chip lacks is absent rather than zero, so nothing shows a fake 0 FLOP/s ceiling.
    const auto* t4 = find_id(specs, "t4");
    REQUIRE(t4 != nullptr);
    CHECK(t4->flops_per_s.count("bf16.tensor") == 0);
    CHECK(t4->flops_per_s.count("bf16.simt") == 0);
    CHECK(t4->flops_per_s.count("tf32.tensor") == 0);
    CHECK(t4->flops_per_s.count("fp8.tensor") == 0);
    const auto* a100 = find_id(specs, "a100_40gb");
    REQUIRE(a100 != nullptr);
    CHECK(a100->flops_per_s.count("fp8.tensor") == 0);
    CHECK_THAT(a100->bandwidth_bytes_per_s, Catch::Matchers::WithinRel(1.555e12, 1e-9));
}

TEST_CASE("each GPU in the datasheet table matches its own spec by CUDA name and memory size",
          "[specs]") {
    const auto specs = lab::load_device_specs(kShippedSpecs);
    // Names as cudaDeviceProp::name gives them, memory as totalGlobalMem roughly reports it.
    auto [device_name, memory, id] = GENERATE(table<std::string, std::uint64_t, std::string>({
        {"NVIDIA H200", 150'754'820'096ull, "h200_sxm"},
        {"NVIDIA H200", 150'000'000'000ull, "h200_sxm"},
        {"NVIDIA H100 80GB HBM3", 85'520'809'984ull, "h100_sxm5"},
        {"NVIDIA A100-SXM4-80GB", 85'198'045'184ull, "a100_sxm_80gb"},
        {"NVIDIA A100-SXM4-40GB", 42'505'273'344ull, "a100_40gb"},
        {"NVIDIA A100-PG509-200", 42'949'672'960ull, "a100_40gb"},
        {"NVIDIA A100-PG509-200", 42'297'524'224ull, "a100_40gb"},  // as in the testdata traces
        {"NVIDIA L4", 24'152'899'584ull, "l4"},
        {"NVIDIA GeForce RTX 4090", 25'757'220'864ull, "rtx_4090"},
        {"Tesla T4", 15'843'721'216ull, "t4"},
        {"Tesla T4", 17'179'869'184ull, "t4"},  // ECC off
    }));
    INFO(device_name << " with " << memory << " bytes");
    const auto spec = lab::match_device_spec(specs, device_name, memory);
    REQUIRE(spec.has_value());
    CHECK(spec->id == id);
}

TEST_CASE("a device that no shipped spec describes matches nothing", "[specs]") {
    const auto specs = lab::load_device_specs(kShippedSpecs);
    auto [device_name, memory] = GENERATE(table<std::string, std::uint64_t>({
        {"Intel(R) Xeon(R) Processor", 0ull},
        {"Intel(R) Xeon(R) Processor", 68'719'476'736ull},
        // Near misses: parts sharing a name stem whose peaks differ from the shipped files.
        {"NVIDIA H100 PCIe", 85'520'809'984ull},
        {"NVIDIA H100 NVL", 100'485'038'080ull},
        {"NVIDIA H200 NVL", 150'754'820'096ull},
        {"NVIDIA GH200 480GB", 150'754'820'096ull},
        {"NVIDIA A100 80GB PCIe", 85'198'045'184ull},
        {"NVIDIA L40S", 48'305'799'168ull},
        {"NVIDIA GeForce RTX 4090 D", 25'757'220'864ull},
        // A right name with a memory size far from the spec's: some other board.
        {"NVIDIA A100-SXM4-40GB", 64'424'509'440ull},
        // Memory unknown: no guess between the 40 GB and 80 GB A100.
        {"NVIDIA A100-SXM4-40GB", 0ull},
    }));
    INFO(device_name << " with " << memory << " bytes");
    CHECK_FALSE(lab::match_device_spec(specs, device_name, memory).has_value());
}

TEST_CASE("matching takes the first spec by file name and memory 0 in a spec accepts any size",
          "[specs]") {
    const std::vector<lab::DeviceSpec> specs = {
        hand_built("b_any", "gpu", 0),
        hand_built("a_big", "gpu", 80'000'000'000ull),
    };
    SECTION("a size within 10% picks the earlier file even when it is listed later") {
        const auto spec = lab::match_device_spec(specs, "Some GPU", 87'000'000'000ull);
        REQUIRE(spec.has_value());
        CHECK(spec->id == "a_big");
    }
    SECTION("a size outside 10% falls through to the spec that accepts any size") {
        const auto spec = lab::match_device_spec(specs, "Some GPU", 89'000'000'000ull);
        REQUIRE(spec.has_value());
        CHECK(spec->id == "b_any");
    }
    SECTION("patterns ignore case") {
        CHECK(lab::match_device_spec(specs, "SOME GPU", 0).has_value());
    }
    SECTION("a pattern that does not match leaves nothing") {
        CHECK_FALSE(lab::match_device_spec(specs, "Some accelerator", 0).has_value());
    }
}

TEST_CASE("a device spec turns into JSON with every field", "[specs]") {
    const auto specs = lab::load_device_specs(kShippedSpecs);
    const auto* h100 = find_id(specs, "h100_sxm5");
    REQUIRE(h100 != nullptr);
    const nlohmann::json json = lab::to_json(*h100);
    for (const char* key : {"id", "name", "file", "match", "memory_bytes", "sms", "flops_per_s",
                            "bandwidth_bytes_per_s", "l2_bytes", "source", "notes"})
        CHECK(json.contains(key));
    CHECK(json["id"] == "h100_sxm5");
    CHECK(json["memory_bytes"].get<std::uint64_t>() == h100->memory_bytes);
    CHECK(json["sms"] == 132);
    CHECK(json["flops_per_s"]["fp64.tensor"].get<double>() == h100->flops_per_s.at("fp64.tensor"));
    CHECK(json["match"].size() == h100->match.size());
    CHECK(json["notes"].is_array());
}

TEST_CASE("a spec file written with plain numbers in any spelling loads", "[specs]") {
    lab_test::TempDir dir;
    write_in(dir, "tiny.yaml",
              "name: Tiny GPU\n"
              "match:\n"
              "  - '^tiny'\n"
              "  - 'small\\s+gpu'\n"
              "memory_bytes: 141e9\n"
              "sms: 4\n"
              "flops_per_s: {fp32.simt: 1.5e12, int8.tensor: \"3e12\"}\n"
              "bandwidth_bytes_per_s: 100000000000\n");
    write_in(dir, "notes.txt", "not a spec");
    const auto specs = lab::load_device_specs(dir.path());
    REQUIRE(specs.size() == 1);
    CHECK(specs[0].id == "tiny");
    CHECK(specs[0].memory_bytes == 141'000'000'000ull);
    CHECK(specs[0].l2_bytes == 0);
    CHECK(specs[0].flops_per_s.at("int8.tensor") == 3e12);
    CHECK(lab::match_device_spec(specs, "A Small   GPU", 140'000'000'000ull).has_value());
}

TEST_CASE("a broken device spec is rejected with its file and 1-based line", "[specs]") {
    // Each file: a valid start, then one mistake on the line the error must name.
    const std::string head = "name: \"Broken GPU\"\nmatch: ['broken']\n";
    // what the file shows, its text, the line the error must name, what the message must say.
    using Case = std::tuple<std::string, std::string, int, std::string>;
    auto [what, text, line, says] = GENERATE_COPY(values<Case>({
        {"malformed YAML", head + "sms: 4\n  l2_bytes: 5\n", 4, "malformed YAML"},
        // yaml-cpp notices an unclosed list on the line after it.
        {"an unclosed flow list", head + "notes: ['a', 'b'\nsource: x\n", 4, "malformed YAML"},
        {"an unknown key", head + "sms: 4\nbandwith_bytes_per_s: 1e12\n", 4,
         "unknown key 'bandwith_bytes_per_s'"},
        {"a negative bandwidth", head + "sms: 4\nbandwidth_bytes_per_s: -3.35e12\n", 4,
         "must not be negative"},
        {"an infinite bandwidth", head + "bandwidth_bytes_per_s: .inf\n", 3, "must be finite"},
        // A peak of 0 made `lab model` print "decode step lower bound inf s" (a fuzzing review).
        {"a zero bandwidth", head + "sms: 4\nbandwidth_bytes_per_s: 0\n", 4, "must be more than 0"},
        {"a zero flops figure", head + "flops_per_s:\n  fp32.simt: 0.0\n", 4, "must be more than 0"},
        {"a bad regex in a flow list", "name: x\nsms: 1\nmatch: ['h100(']\n", 3,
         "not a valid regex"},
        {"a bad regex in a block list", "name: x\nmatch:\n  - 'ok'\n  - '[unclosed'\n", 4,
         "not a valid regex"},
        {"a flops key without a pipe", head + "flops_per_s:\n  fp32.simt: 1e12\n  fp16: 2e12\n", 5,
         "not shaped \"<dtype>.<pipe>\""},
        {"a flops key with an unknown pipe", head + "flops_per_s:\n  fp32.cuda: 1e12\n", 4,
         "pipe must be simt or tensor"},
        {"a flops key with an unknown dtype", head + "flops_per_s: {bf61.tensor: 1e12}\n", 3,
         "unknown dtype 'bf61'"},
        {"a string where a number goes", head + "sms: 4\nbandwidth_bytes_per_s: 3.35 TB/s\n", 4,
         "must be a number"},
        {"a string where a flops figure goes", head + "flops_per_s:\n  fp32.simt: fast\n", 4,
         "must be a number"},
        {"a fractional memory size", head + "memory_bytes: 80.5\n", 3, "whole number"},
        {"a list where a name goes", "match: ['x']\nname: [a, b]\n", 2, "name must be a string"},
        {"a string where the match list goes", "name: x\nmatch: h100\n", 2, "match must be a list"},
        {"an empty match list", "name: x\nmatch: []\n", 2, "match is empty"},
        {"a repeated key", head + "sms: 4\nsms: 5\n", 4, "given twice"},
        {"a missing name", "match: ['x']\nsms: 4\n", 1, "missing required key 'name'"},
        {"a missing match", "name: x\nsms: 4\n", 1, "missing required key 'match'"},
        {"an empty file", "# nothing yet\n", 1, "empty"},
        {"a list instead of a map", "- name: x\n", 1, "must be a map"},
    }));
    INFO(what);
    lab_test::TempDir dir;
    write_in(dir, "ok.yaml", "name: fine\nmatch: ['fine']\n");
    write_in(dir, "broken.yaml", text);
    const std::string message = load_error(dir.path());
    REQUIRE_FALSE(message.empty());
    CHECK_THAT(message, Contains("broken.yaml:" + std::to_string(line) + ": "));
    CHECK_THAT(message, Contains(says));
    CHECK_THAT(message, Contains("fix: "));
}

TEST_CASE("an unknown key names the keys that are allowed and the one it was likely meant as",
          "[specs]") {
    lab_test::TempDir dir;
    write_in(dir, "typo.yaml", "name: x\nmatch: ['x']\nl2_byte: 5\n");
    const std::string message = load_error(dir.path());
    CHECK_THAT(message, Contains("typo.yaml:3: unknown key 'l2_byte'"));
    CHECK_THAT(message, Contains("did you mean 'l2_bytes'?"));
    CHECK_THAT(message, Contains("allowed keys: name, match, memory_bytes, sms, flops_per_s"));
}

TEST_CASE("a missing spec folder is an input error naming the folder", "[specs]") {
    const fs::path missing = fs::temp_directory_path() / "lab_device_specs_no_such_folder";
    const std::string message = load_error(missing);
    CHECK_THAT(message, Contains(missing.string()));
    CHECK_THAT(message, Contains("does not exist"));
}
