// Tests for the CPU's theoretical peak (framework/src/device_summary.cpp) and its table,
// configs/cpu_microarchitectures.yaml: the shipped table loads and maps cpuid family/model to the
// right microarchitecture; the peak counts FMA throughput per microarchitecture and SIMD path
// (a Zen 4 runs a 512-bit FMA as two 256-bit halves, so AVX-512 does not double its peak), counts
// physical cores rather than SMT threads, and is absent, with a reason, wherever the table does
// not know: an unknown model, a SKU-dependent FMA count, the scalar path, a broken or missing
// table. The spec objects `lab device` and run records carry validate against the record schema.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "device_summary.hpp"
#include "errors.hpp"
#include "test_support.hpp"

#ifndef LAB_SOURCE_ROOT
#error "LAB_SOURCE_ROOT must name the repository root (the build defines it)"
#endif

namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

const fs::path kConfigs = fs::path(LAB_SOURCE_ROOT) / "configs";
const fs::path kShippedTable = kConfigs / "cpu_microarchitectures.yaml";

// Points paths::config_dir() at `dir` for one test and restores the environment after it.
class ConfigDir {
public:
    explicit ConfigDir(const fs::path& dir) {
        if (const char* old = std::getenv("LAB_CONFIG_DIR")) old_ = old;
        ::setenv("LAB_CONFIG_DIR", dir.c_str(), 1);
    }
    ~ConfigDir() {
        if (old_) ::setenv("LAB_CONFIG_DIR", old_->c_str(), 1);
        else ::unsetenv("LAB_CONFIG_DIR");
    }
    ConfigDir(const ConfigDir&) = delete;
    ConfigDir& operator=(const ConfigDir&) = delete;

private:
    std::optional<std::string> old_;
};

// The microarchitecture table `text`, written in `dir`.
fs::path write_table(const lab_test::TempDir& dir, const std::string& text) {
    fs::path p = dir / "cpu_microarchitectures.yaml";
    std::ofstream(p) << text;
    return p;
}

// A CPU's facts as the CPU backend records them: cpuid identity in decimal, as /proc/cpuinfo
// prints it.
lab::DeviceFacts cpu(const std::string& vendor, int family, int model, const std::string& simd, int cores,
                     int threads) {
    lab::DeviceFacts f;
    f.name = "test CPU";
    f.vendor = vendor;
    f.compute_units = cores;
    f.threads = threads;
    f.simd = simd;
    f.extra["cpu_vendor_id"] = vendor;
    f.extra["cpu_family"] = std::to_string(family);
    f.extra["cpu_model"] = std::to_string(model);
    return f;
}

const std::string kAmd = "AuthenticAMD";
const std::string kIntel = "GenuineIntel";

// The message of the InputError loading `file` throws, or "" when it loads.
std::string load_error(const fs::path& file) {
    try {
        lab::load_cpu_microarchitectures(file);
    } catch (const lab::InputError& e) {
        return e.what();
    }
    return "";
}

// The record schema's definition of device.spec, parsed once.
const valijson::Schema& spec_schema() {
    static const std::unique_ptr<valijson::Schema> parsed = [] {
        std::ifstream in(LAB_SOURCE_ROOT "/framework/schema/lab.run-1.schema.json");
        REQUIRE(in.good());
        const nlohmann::json full = nlohmann::json::parse(in);
        const nlohmann::json doc = {{"definitions", full.at("definitions")}, {"$ref", "#/definitions/spec"}};
        auto s = std::make_unique<valijson::Schema>();
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::NlohmannJsonAdapter adapter(doc);
        parser.populateSchema(adapter, *s);
        return s;
    }();
    return *parsed;
}

std::string schema_errors(const nlohmann::json& spec) {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(spec);
    if (validator.validate(spec_schema(), adapter, &results)) return "";
    std::string out = "invalid";
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
        std::string path;
        for (const auto& part : e.context) path += (path.empty() ? "" : "/") + part;
        out += "\n" + path + ": " + e.description;
    }
    return out;
}

}  // namespace

TEST_CASE("the shipped CPU microarchitecture table loads, with a source for every row", "[summary]") {
    const auto table = lab::load_cpu_microarchitectures(kShippedTable);
    REQUIRE(table.size() >= 15);
    for (const auto& m : table) {
        INFO(m.name << " at " << m.where);
        CHECK(!m.source.empty());
        CHECK((m.vendor == kIntel || m.vendor == kAmd));
        // A typo in a count would put a row off every real core's rate: 256-bit paths retire 16 or
        // 32 FP32 FLOP/cycle/core on every CPU here, 512-bit paths 32 or 64.
        if (m.fma256.kind == lab::FmaPerCycle::Kind::known) {
            const double flop = m.fma256.value * 8 * 2;
            CHECK((flop == 16 || flop == 32));
        }
        if (m.fma512.kind == lab::FmaPerCycle::Kind::known) {
            const double flop = m.fma512.value * 16 * 2;
            CHECK((flop == 32 || flop == 64));
        }
        if (m.fma256.kind == lab::FmaPerCycle::Kind::unknown || m.fma512.kind == lab::FmaPerCycle::Kind::unknown)
            CHECK(!m.why.empty());
    }
}

TEST_CASE("cpuid family and model pick the right microarchitecture", "[summary]") {
    const auto table = lab::load_cpu_microarchitectures(kShippedTable);
    auto name = [&](const std::string& vendor, int family, int model) {
        const auto* m = lab::find_cpu_microarchitecture(table, vendor, family, model);
        return m ? m->name : std::string("(none)");
    };
    // AMD: 0x17 = 23, 0x19 = 25, 0x1A = 26 (cpuinfo prints decimal).
    CHECK(name(kAmd, 23, 0x01) == "AMD Zen/Zen+");    // Naples/Summit Ridge
    CHECK(name(kAmd, 23, 0x08) == "AMD Zen/Zen+");    // Pinnacle Ridge
    CHECK(name(kAmd, 23, 0x31) == "AMD Zen 2");       // Rome
    CHECK(name(kAmd, 23, 0x71) == "AMD Zen 2");       // Matisse
    CHECK(name(kAmd, 25, 0x01) == "AMD Zen 3");       // Milan
    CHECK(name(kAmd, 25, 0x21) == "AMD Zen 3");       // Vermeer
    CHECK(name(kAmd, 25, 17) == "AMD Zen 4");         // Genoa, 0x11
    CHECK(name(kAmd, 25, 0x61) == "AMD Zen 4");       // Raphael
    CHECK(name(kAmd, 25, 0xA0) == "AMD Zen 4");       // Bergamo (Zen 4c)
    CHECK(name(kAmd, 26, 0x44) == "AMD Zen 5 (512-bit datapath)");  // Granite Ridge
    CHECK(name(kAmd, 26, 0x24) == "(none)");          // Strix Point: datapath not confirmed
    CHECK(name(kAmd, 25, 0xF0) == "(none)");
    CHECK(name(kIntel, 25, 17) == "(none)");          // the vendor is part of the key
    // Intel family 6.
    CHECK(name(kIntel, 6, 0x3F) == "Intel Haswell");
    CHECK(name(kIntel, 6, 0x9E) == "Intel Kaby/Coffee/Whiskey/Amber/Comet Lake (Skylake core)");
    CHECK(name(kIntel, 6, 85) == "Intel Skylake-SP/Cascade Lake/Cooper Lake (and Skylake-X/W)");
    CHECK(name(kIntel, 6, 0x6A) == "Intel Ice Lake-SP (Sunny Cove server)");
    CHECK(name(kIntel, 6, 143) == "Intel Sapphire Rapids (Golden Cove server)");
    CHECK(name(kIntel, 6, 0xCF) == "Intel Emerald Rapids (Raptor Cove server)");
    CHECK(name(kIntel, 6, 0xAD) == "Intel Granite Rapids (Redwood Cove server)");
    CHECK(name(kIntel, 6, 0x2A) == "(none)");         // Sandy Bridge: no FMA
}

TEST_CASE("a Zen 4 peaks at 32 FP32 FLOP/cycle/core with AVX-512 and with AVX2", "[summary]") {
    ConfigDir configs(kConfigs);
    // EPYC Genoa: family 25 model 17 (0x19/0x11); 3.69 GHz, 2 cores, no SMT.
    for (const char* simd : {"avx512", "avx2"}) {
        INFO(simd);
        std::string why = "stale";
        auto p = lab::cpu_theoretical_peak(cpu(kAmd, 25, 17, simd, 2, 2), 3.69e9, 2, &why);
        REQUIRE(p);
        CHECK(why.empty());
        CHECK_THAT(p->fp32_flops_per_s, WithinRel(236.16e9, 1e-12));  // not 473: 512-bit FMA is double-pumped
        CHECK_THAT(p->fp64_flops_per_s, WithinRel(118.08e9, 1e-12));
        CHECK(p->microarchitecture == "AMD Zen 4");
        CHECK_THAT(p->basis, Contains("32 FP32 FLOP/cycle/core") && Contains("3.69 GHz") && Contains("2 cores"));
        CHECK_THAT(p->source, Contains("Zen4"));
    }
}

TEST_CASE("Sapphire Rapids doubles its peak with AVX-512, Skylake-SP does not say", "[summary]") {
    ConfigDir configs(kConfigs);
    auto spr512 = lab::cpu_theoretical_peak(cpu(kIntel, 6, 143, "avx512", 4, 4), 2.0e9, 4);
    REQUIRE(spr512);
    CHECK_THAT(spr512->fp32_flops_per_s, WithinRel(512e9, 1e-12));  // 64 FLOP/cycle x 2 GHz x 4
    CHECK_THAT(spr512->fp64_flops_per_s, WithinRel(256e9, 1e-12));
    auto spr256 = lab::cpu_theoretical_peak(cpu(kIntel, 6, 143, "avx2", 4, 4), 2.0e9, 4);
    REQUIRE(spr256);
    CHECK_THAT(spr256->fp32_flops_per_s, WithinRel(256e9, 1e-12));  // 32 FLOP/cycle

    // Skylake-SP (0x55 = 85): one or two 512-bit FMA units depending on the SKU.
    std::string why;
    CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kIntel, 6, 85, "avx512", 4, 4), 2.0e9, 4, &why));
    CHECK_THAT(why, Contains("SKU"));
    auto skx256 = lab::cpu_theoretical_peak(cpu(kIntel, 6, 85, "avx2", 4, 4), 2.0e9, 4);
    REQUIRE(skx256);
    CHECK_THAT(skx256->fp32_flops_per_s, WithinRel(256e9, 1e-12));

    // Ice Lake client: one 512-bit FMA unit, so AVX-512 matches AVX2.
    auto icl = lab::cpu_theoretical_peak(cpu(kIntel, 6, 0x7E, "avx512", 4, 8), 3.0e9, 8);
    REQUIRE(icl);
    CHECK_THAT(icl->fp32_flops_per_s, WithinRel(32 * 3.0e9 * 4, 1e-12));
    // Zen 1: two 128-bit FMA pipes, 16 FLOP/cycle with AVX2.
    auto zen1 = lab::cpu_theoretical_peak(cpu(kAmd, 23, 1, "avx2", 8, 16), 3.0e9, 16);
    REQUIRE(zen1);
    CHECK_THAT(zen1->fp32_flops_per_s, WithinRel(16 * 3.0e9 * 8, 1e-12));
}

TEST_CASE("the peak counts physical cores, not SMT threads", "[summary]") {
    ConfigDir configs(kConfigs);
    const auto f = cpu(kAmd, 25, 17, "avx2", 2, 4);  // 2 cores, 4 threads
    auto all = lab::cpu_theoretical_peak(f, 3e9, 4);
    REQUIRE(all);
    CHECK_THAT(all->fp32_flops_per_s, WithinRel(32 * 3e9 * 2, 1e-12));
    CHECK_THAT(all->basis, Contains("2 cores") && Contains("4 threads"));
    auto one = lab::cpu_theoretical_peak(f, 3e9, 1);
    REQUIRE(one);
    CHECK_THAT(one->fp32_flops_per_s, WithinRel(32 * 3e9, 1e-12));
    CHECK_THAT(one->basis, Contains("1 core;"));
    // No topology: each thread is taken as a core (an upper bound).
    auto no_topology = lab::cpu_theoretical_peak(cpu(kAmd, 25, 17, "avx2", 0, 3), 3e9, 3);
    REQUIRE(no_topology);
    CHECK_THAT(no_topology->fp32_flops_per_s, WithinRel(32 * 3e9 * 3, 1e-12));
}

TEST_CASE("no theoretical peak where the table does not know, and the reason says why", "[summary]") {
    ConfigDir configs(kConfigs);
    std::string why;
    SECTION("a model not in the table") {
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kAmd, 25, 0xF0, "avx2", 2, 2), 3e9, 2, &why));
        CHECK_THAT(why, Contains("family 25 model 240") && Contains("not in") &&
                            Contains("cpu_microarchitectures.yaml"));
    }
    SECTION("a hybrid Intel part") {
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kIntel, 6, 0x97, "avx2", 8, 16), 3e9, 16, &why));
        CHECK_THAT(why, Contains("hybrid"));
    }
    SECTION("the scalar path") {
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kAmd, 25, 17, "scalar", 2, 2), 3e9, 2, &why));
        CHECK_THAT(why, Contains("scalar"));
    }
    SECTION("facts without cpuid identity (a record from before lab read it)") {
        auto f = cpu(kAmd, 25, 17, "avx2", 2, 2);
        f.extra.erase("cpu_model");
        CHECK_FALSE(lab::cpu_theoretical_peak(f, 3e9, 2, &why));
        CHECK_THAT(why, Contains("cpu_model"));
    }
    SECTION("no clock, no threads") {
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kAmd, 25, 17, "avx2", 2, 2), 0, 2, &why));
        CHECK_THAT(why, Contains("clock"));
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kAmd, 25, 17, "avx2", 2, 2), 3e9, 0, &why));
        CHECK_THAT(why, Contains("threads"));
    }
    SECTION("a null why is allowed") {
        CHECK_FALSE(lab::cpu_theoretical_peak(cpu(kAmd, 25, 0xF0, "avx2", 2, 2), 3e9, 2));
    }
}

TEST_CASE("a broken or missing table gives no peak and says where, and never throws", "[summary]") {
    lab_test::TempDir dir;
    std::string why;
    const auto zen4 = cpu(kAmd, 25, 17, "avx512", 2, 2);
    SECTION("missing") {
        ConfigDir configs(dir.path());
        CHECK_FALSE(lab::cpu_theoretical_peak(zen4, 3e9, 2, &why));
        CHECK_THAT(why, Contains("cpu_microarchitectures.yaml") && Contains("cannot read"));
    }
    SECTION("malformed YAML") {
        write_table(dir, "microarchitectures:\n  - name: [unclosed\n");
        ConfigDir configs(dir.path());
        CHECK_FALSE(lab::cpu_theoretical_peak(zen4, 3e9, 2, &why));
        CHECK_THAT(why, Contains("cpu_microarchitectures.yaml:") && Contains("malformed YAML"));
    }
}

TEST_CASE("the table loader refuses mistakes with file and line", "[summary]") {
    lab_test::TempDir dir;
    const std::string head = "microarchitectures:\n";
    const std::string zen4 =
        "  - name: Zen 4\n"
        "    vendor: AuthenticAMD\n"
        "    family: 0x19\n"
        "    models: [0x10-0x1F]\n"
        "    fma256_per_cycle: 2\n"
        "    fma512_per_cycle: 1\n"
        "    source: a document\n";
    SECTION("a valid table loads") {
        auto table = lab::load_cpu_microarchitectures(write_table(dir, head + zen4));
        REQUIRE(table.size() == 1);
        CHECK(table[0].family == 0x19);
        CHECK(table[0].models == std::vector<std::pair<int, int>>{{0x10, 0x1F}});
    }
    SECTION("a decimal family is refused: cpuinfo's 25 and the documents' 0x19 must not be confused") {
        std::string text = zen4;
        text.replace(text.find("0x19"), 4, "25");
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains(":4:") && Contains("hexadecimal"));
    }
    SECTION("a model that is not hex") {
        std::string text = zen4;
        text.replace(text.find("0x10-0x1F"), 9, "17");
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains(":5:") && Contains("'17'"));
    }
    SECTION("two rows claiming one model") {
        std::string other = zen4;
        other.replace(other.find("Zen 4"), 5, "Zen 4 again");
        other.replace(other.find("0x10-0x1F"), 9, "0x1F");
        CHECK_THAT(load_error(write_table(dir, head + zen4 + other)), Contains(":9:") && Contains("both claim") &&
                                                                     Contains("model 0x1F"));
    }
    SECTION("unknown without a reason") {
        std::string text = zen4;
        text.replace(text.find("fma512_per_cycle: 1"), 19, "fma512_per_cycle: unknown");
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains(":2:") && Contains("why"));
    }
    SECTION("a misspelt key, a missing key, a bad count") {
        std::string text = zen4;
        text.replace(text.find("source"), 6, "sources");
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains(":8:") && Contains("unknown key 'sources'"));
        text = zen4;
        text.erase(text.find("    source"));
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains("missing required key 'source'"));
        text = zen4;
        text.replace(text.find("fma256_per_cycle: 2"), 19, "fma256_per_cycle: -2");
        CHECK_THAT(load_error(write_table(dir, head + text)), Contains(":6:") && Contains("positive"));
    }
    SECTION("not a table at all") {
        CHECK_THAT(load_error(write_table(dir, "- just a list\n")), Contains("microarchitectures"));
        CHECK_THAT(load_error(dir.path() / "absent.yaml"), Contains("cannot read"));
    }
}

TEST_CASE("the CPU spec is theoretical with its basis, or none with a note, and fits the record schema",
          "[summary]") {
    ConfigDir configs(kConfigs);
    lab::Ceilings c;
    c.clock_hz.value = 3.69e9;
    c.threads = 2;
    const auto spec = lab::device_spec_json(lab::DeviceKind::cpu, cpu(kAmd, 25, 17, "avx512", 2, 2), c);
    CHECK(spec.at("kind") == "theoretical");
    CHECK_THAT(spec.at("flops_per_s").at("fp32.simt").get<double>(), WithinRel(236.16e9, 1e-12));
    CHECK_THAT(spec.at("flops_per_s").at("fp64.simt").get<double>(), WithinRel(118.08e9, 1e-12));
    const std::string basis = spec.at("basis");
    CHECK_THAT(basis, Contains("AMD Zen 4") && Contains("32 FP32 FLOP/cycle/core") && Contains("3.69 GHz") &&
                          Contains("2 cores") && Contains("Software Optimization Guide"));
    CHECK(schema_errors(spec) == "");

    const auto none = lab::device_spec_json(lab::DeviceKind::cpu, cpu(kAmd, 25, 0xF0, "avx512", 2, 2), c);
    CHECK(none.at("kind") == "none");
    CHECK_THAT(none.at("note").get<std::string>(), Contains("no theoretical peak") && Contains("not in"));
    CHECK(schema_errors(none) == "");

    const auto scalar = lab::device_spec_json(lab::DeviceKind::cpu, cpu(kAmd, 25, 17, "scalar", 2, 2), c);
    CHECK(scalar.at("kind") == "none");
    CHECK(schema_errors(scalar) == "");
}
