// The committed JSON Schema of run records (framework/schema/lab.run-1.schema.json) is a contract
// for anyone reading records outside lab (course scripts, Gradescope glue). These tests keep the
// schema and the writer (framework/src/run_record.cpp) in step: records that `lab run` really
// wrote must validate, and the mistakes the schema exists to catch (a misspelt or foreign field,
// an impossible count, an unknown timing mode, a malformed digest, a missing section) must fail
// with an error that points at the offending part of the record.
//
// The fixtures under tests/fixtures/runs/cpu/ were recorded with
//   lab run 02.01 --quick --student alice
//   lab run 02.05 --quick --student alice --reveal
// and cover both a withheld record (derived values and graded metrics left out) and a revealed one.
// Mutated copies are not re-sealed: the schema checks the digest's form, not its content.

#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#ifndef LAB_SOURCE_ROOT
#error "LAB_SOURCE_ROOT must name the source tree (the build defines it)"
#endif

namespace {

using nlohmann::json;

json load_json(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());  // a missing fixture should fail loudly, not validate an empty document
    return json::parse(in);
}

json fixture(const std::string& name) { return load_json(LAB_SOURCE_ROOT "/tests/fixtures/runs/cpu/" + name); }

// Parsed once: the schema is large and every test case uses it. valijson::Schema cannot be
// copied or moved, hence the heap object.
const valijson::Schema& schema() {
    static const std::unique_ptr<valijson::Schema> parsed = [] {
        const json doc = load_json(LAB_SOURCE_ROOT "/framework/schema/lab.run-1.schema.json");
        auto s = std::make_unique<valijson::Schema>();
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::NlohmannJsonAdapter adapter(doc);
        parser.populateSchema(adapter, *s);
        return s;
    }();
    return *parsed;
}

struct Outcome {
    bool valid = false;
    std::string errors;  // one line per error: "<root>/[workloads]/[2]/[flops]: description"
};

Outcome validate(const json& record) {
    valijson::Validator validator;  // strict types: 1.0 is not an integer, "1" is not a number
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(record);
    Outcome out;
    out.valid = validator.validate(schema(), adapter, &results);
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
        std::string path;
        for (const auto& part : e.context) path += (path.empty() ? "" : "/") + part;
        out.errors += path + ": " + e.description + "\n";
    }
    return out;
}

// A revealed record carries every field the writer can produce, so mutations start from it.
json revealed() { return fixture("02.05-quick-reveal.json"); }

}  // namespace

TEST_CASE("the lab.run/1 schema parses as a draft-07 schema", "[record][schema]") {
    REQUIRE_NOTHROW(schema());
}

TEST_CASE("a recorded 02.01 run validates against the lab.run/1 schema", "[record][schema]") {
    const json record = fixture("02.01-quick.json");
    // The fixture must be the withheld kind, or the optional-field paths go untested.
    REQUIRE_FALSE(record.at("revealed").get<bool>());
    REQUIRE_FALSE(record.at("withheld").empty());
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK(out.valid);
}

TEST_CASE("a recorded 02.05 run with --reveal validates against the lab.run/1 schema", "[record][schema]") {
    const json record = revealed();
    REQUIRE(record.at("revealed").get<bool>());
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK(out.valid);
}

TEST_CASE("a record written before ceilings carried their conditions still validates", "[record][schema]") {
    const json record = fixture("02.05-quick-reveal-before-conditions.json");
    REQUIRE_FALSE(record.at("device").contains("ceiling_measurements"));
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK(out.valid);
}

TEST_CASE("the recorded runs carry their in-run ceiling measurements and each ceiling's conditions", "[record][schema]") {
    for (const char* name : {"02.01-quick.json", "02.05-quick-reveal.json"}) {
        CAPTURE(name);
        const json record = fixture(name);
        const json& device = record.at("device");
        REQUIRE(device.contains("ceiling_measurements"));
        CHECK_FALSE(device.at("ceiling_measurements").empty());
        for (const auto& [k, c] : device.at("ceilings").at("flops_per_s").items()) {
            CAPTURE(k);
            CHECK(c.contains("spread"));
            CHECK(c.contains("trusted"));
            CHECK(c.at("samples").get<int>() > 0);
        }
    }
}

TEST_CASE("an infinite metric, written as null, validates", "[record][schema]") {
    // JSON has no infinity, so the writer stores an unbounded number as null.
    json record = revealed();
    record["metrics"]["read.ai"]["value"] = nullptr;
    record["workloads"][0]["derived"]["ai"] = nullptr;
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK(out.valid);
}

TEST_CASE("a record with a misspelt top-level key fails validation", "[record][schema]") {
    json record = revealed();
    record["studnet"] = record.at("student");
    record.erase("student");
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("studnet"));  // the foreign name, so the typo is findable
}

TEST_CASE("a record with a foreign top-level key fails validation", "[record][schema]") {
    // Everything else correct: only additionalProperties can catch this one.
    json record = revealed();
    record["grade"] = 100;
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("grade"));
}

TEST_CASE("a workload with a negative flops count fails and the error names the workload", "[record][schema]") {
    json record = revealed();
    record["workloads"][2]["flops"] = -1.0;
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    // The report must lead a reader to the field, not just say "invalid".
    CHECK_THAT(out.errors, Catch::Contains("workloads") && Catch::Contains("[2]") && Catch::Contains("flops"));
}

TEST_CASE("a workload timed in mode \"warm\" fails validation", "[record][schema]") {
    json record = revealed();
    record["workloads"][0]["mode"] = "warm";
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("workloads") && Catch::Contains("mode"));
}

TEST_CASE("a workload with a misspelt field fails validation", "[record][schema]") {
    json record = revealed();
    record["workloads"][0]["noise_meet"] = record["workloads"][0].at("noise_met");
    record["workloads"][0].erase("noise_met");
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("workloads"));
}

TEST_CASE("a record whose digest is not sha256 and 64 hex digits fails validation", "[record][schema]") {
    json record = revealed();
    const std::string good = record.at("digest").get<std::string>();
    SECTION("no algorithm prefix") { record["digest"] = good.substr(7); }
    SECTION("upper-case hex") {
        std::string upper = good;
        for (std::size_t i = 7; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
        REQUIRE(upper != good);  // the fixture's digest has letters, so upper-casing changes it
        record["digest"] = upper;
    }
    SECTION("truncated") { record["digest"] = good.substr(0, good.size() - 1); }
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("digest"));
}

TEST_CASE("a record missing its workloads fails validation", "[record][schema]") {
    json record = revealed();
    record.erase("workloads");
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("workloads"));
}

TEST_CASE("a category metric holding a number fails validation", "[record][schema]") {
    // The value's JSON type must agree with the declared kind, or a reader misparses it.
    json record = revealed();
    REQUIRE(record.at("metrics").at("read.measured_regime").at("kind") == "category");
    record["metrics"]["read.measured_regime"]["value"] = 1.0;
    const Outcome out = validate(record);
    INFO(out.errors);
    CHECK_FALSE(out.valid);
    CHECK_THAT(out.errors, Catch::Contains("metrics"));
}

TEST_CASE("a record with a malformed lesson ID or seed fails validation", "[record][schema]") {
    json record = revealed();
    SECTION("lesson ID without the leading zero") { record["lesson"]["id"] = "2.05"; }
    SECTION("seed of 63 hex digits") {
        record["seed"] = record.at("seed").get<std::string>().substr(1);
    }
    SECTION("an unknown device kind") { record["device"]["kind"] = "gpu"; }
    CHECK_FALSE(validate(record).valid);
}
