// Run records: what is written, what is withheld, the digest, and how readers refuse corrupt,
// edited, truncated and foreign records. (Hostile records, built to crash or stall a reader, are
// in tests/grader/test_hostile_inputs.cpp.)
#include <catch2/catch.hpp>

#include "digest.hpp"
#include "errors.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "test_support.hpp"

using namespace lab;
using nlohmann::json;

namespace {

record::RecordInputs sample_inputs(bool reveal) {
    record::RecordInputs in;
    in.info.id = "02.05";
    in.info.title = "The Roofline";
    declare_placed_metrics(in.info.metrics, {.name = "triad", .graded = {"measured_regime", "roof_fraction"}});
    in.info.metrics.push_back({"ridge_point", "FLOP/B", MetricKind::number, "ridge", true, true});
    in.raw.lesson_id = "02.05";
    in.raw.options = {true, "alice", 42, std::string(64, 'a')};
    in.raw.facts.name = "Test CPU";
    in.raw.ceilings.flops_per_s["fp32.simt"] = lab::Ceiling{.value = 300e9, .unit = "FLOP/s"};
    in.raw.ceilings.bandwidth_bytes_per_s["best"] = lab::Ceiling{.value = 30e9, .unit = "B/s"};
    in.raw.ceilings.launch_s = lab::Ceiling{.value = 2e-6, .unit = "s"};
    Measurement m;
    m.workload.name = "triad";
    m.workload.flops = 2e8;
    m.workload.bytes = 12e8;
    m.workload.params = {{"n", 1e8}};
    m.time.median = 0.04;
    m.time.samples = 10;
    in.raw.measurements = {m};
    place_workload(in.raw, "triad", in.derivation);
    in.derivation.declared = in.info.metrics;
    in.derivation.set("ridge_point", 10);
    in.derivation.teaching = {"ridge {ridge_point}, triad reaches {triad.bytes_per_s}"};
    in.reveal = reveal;
    in.started_at = "2026-01-01T00:00:00Z";
    return in;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a student's record leaves graded values out and says which", "[record]") {
    json r = record::make_record(sample_inputs(false));
    CHECK(r["schema"] == "lab.run/1");
    CHECK_FALSE(r["metrics"].contains("ridge_point"));
    CHECK_FALSE(r["metrics"].contains("triad.measured_regime"));
    CHECK(r["metrics"].contains("triad.bytes_per_s"));
    CHECK_FALSE(r["workloads"][0]["derived"].contains("measured_regime"));
    CHECK(r["workloads"][0]["derived"].contains("ai"));
    CHECK(r["withheld"].size() == 4);  // and the predicted regime, the graded measured one's twin
    CHECK_FALSE(r["workloads"][0]["derived"].contains("predicted_regime"));
    CHECK(r["teaching"][0].get<std::string>().find("ridge ?") == 0);
    CHECK(r["thresholds"].contains("substantial_roof_fraction"));
}

TEST_CASE("withholding a workload's regime withholds its twin, which would give it away", "[record]") {
    LessonInfo info;
    declare_placed_metrics(info.metrics, {.name = "fma_few", .graded = {"predicted_regime"}});
    declare_placed_metrics(info.metrics, {.name = "sgemm", .graded = {"measured_regime"}});
    declare_placed_metrics(info.metrics, {.name = "read", .graded = {"roof_fraction"}});
    const auto withheld = record::withheld_metrics(info, false, DeviceKind::cpu);
    CHECK(withheld == std::set<std::string>{"fma_few.predicted_regime", "fma_few.measured_regime", "sgemm.measured_regime",
                                            "sgemm.predicted_regime", "read.roof_fraction"});
    CHECK(record::withheld_metrics(info, true, DeviceKind::cpu).empty());
}

TEST_CASE("withholding a workload's doubling ratio withholds its measured regime, which the ratio decides", "[record]") {
    // 02.11: "what does the small update's ratio say it is" was answered by the table's regime
    // column (overhead_bound). The predicted regime, from the AI, stays shown.
    LessonInfo info;
    declare_placed_metrics(info.metrics, {.name = "small", .graded = {"doubling_ratio"}, .doubled = true});
    declare_placed_metrics(info.metrics, {.name = "empty"});
    const auto withheld = record::withheld_metrics(info, false, DeviceKind::cpu);
    CHECK(withheld == std::set<std::string>{"small.doubling_ratio", "small.measured_regime"});
}

TEST_CASE("a revealed record holds every derived value", "[record]") {
    json r = record::make_record(sample_inputs(true));
    CHECK(r["metrics"]["ridge_point"]["value"] == 10);
    CHECK(r["metrics"]["triad.measured_regime"]["value"] == "memory_bound");
    CHECK(r["metrics"]["triad.measured_regime"]["kind"] == "category");
    CHECK(r["withheld"].empty());
    CHECK(r["teaching"][0] == "ridge 10 FLOP/B, triad reaches 30 GB/s");
}

// A lesson cannot know where this lab keeps the files it ships (installed: share/lab/; from a build
// tree: the source tree's lesson folders): {shipped:X} says where it is found, by this lab.
TEST_CASE("{shipped:X} in a teaching line is the path this lab finds the shipped file X at", "[record]") {
    Derivation d;
    d.metrics.push_back({.name = "question_capture", .kind = MetricKind::category, .text = "l40s_load_q.txt"});
    d.metrics.push_back({.name = "secret", .kind = MetricKind::category, .text = "h100_idle_q.txt"});
    // The tests run from the build tree: the source tree's copies.
    const std::string capture = (lab_test::source_root() / "labs/02_09/captures/l40s_load_q.txt").lexically_normal().string();
    CHECK(record::render_teaching("read {shipped:question_capture}.", d, {}) == "read " + capture + ".");
    CHECK(record::render_teaching("read {shipped:l40s_load_q.txt}.", d, {}) == "read " + capture + ".");
    CHECK(record::render_teaching("{shipped:a100_simple_add.json.gz}", d, {}) ==
          (lab_test::source_root() / "labs/02_10/a100_simple_add.json.gz").lexically_normal().string());
    CHECK(record::render_teaching("{shipped:secret}", d, {"secret"}) == "?");
    CHECK(record::render_teaching("{shipped:nope.txt}", d, {}) == "nope.txt (not shipped with this lab)");
}

// An SDK review: a graded metric derive() left unset in a run was still listed as withheld and
// shown as '?', asking students to work out a value the run does not have.
TEST_CASE("a withheld metric the run lacks is shown as n/a and not asked for", "[record]") {
    LessonInfo info;
    info.metrics = {{.name = "bandwidth", .unit = "B/s", .description = "set", .graded = true},
                    {.name = "halving_stride", .kind = MetricKind::integer, .description = "left unset", .graded = true}};
    Derivation d;
    d.metrics.push_back({.name = "bandwidth", .kind = MetricKind::number, .unit = "B/s", .number = 8.8e9});
    const std::set<std::string> withheld = record::withheld_metrics(info, false, DeviceKind::cpu);
    REQUIRE(withheld.count("halving_stride"));
    CHECK(record::render_teaching("{bandwidth}, halving at stride {halving_stride}", d, withheld) == "?, halving at stride n/a");
    CHECK(withheld_graded(info, withheld, d) == std::vector<std::string>{"bandwidth"});
}

TEST_CASE("raw measurements survive the trip through a record unchanged", "[record]") {
    auto in = sample_inputs(false);
    json r = record::make_record(in);
    record::seal(r);
    RawRun raw = record::raw_run_from_record(json::parse(r.dump()));
    REQUIRE(raw.measurements.size() == 1);
    CHECK(raw.measurements[0].workload.flops == 2e8);
    CHECK(raw.measurements[0].workload.params[0].name == "n");
    CHECK(raw.measurements[0].time.median == 0.04);
    CHECK(raw.options.student == "alice");
    CHECK(raw.options.seed == 0xaaaaaaaaaaaaaaaaull);
    CHECK(raw.ceilings.peak_bandwidth() == 30e9);
    CHECK(raw.facts.name == "Test CPU");
    CHECK(raw.ceilings.skipped.empty());
    CHECK_FALSE(r["device"]["ceilings"].contains("skipped"));  // said only when something was skipped
}

TEST_CASE("ceilings the calibration skipped keep their reasons through a record", "[record]") {
    auto in = sample_inputs(false);
    in.raw.ceilings.skipped["flops.fp8.tensor"] = "cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED";
    json r = record::make_record(in);
    record::seal(r);
    CHECK(r["device"]["ceilings"]["skipped"]["flops.fp8.tensor"] == "cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED");
    RawRun raw = record::raw_run_from_record(json::parse(r.dump()));
    CHECK(raw.ceilings.skipped == in.raw.ceilings.skipped);
    CHECK_FALSE(raw.ceilings.has_flops("fp8.tensor"));
}

TEST_CASE("readers refuse corrupt, edited, truncated and foreign records with the file named", "[record]") {
    lab_test::TempDir d;
    json r = record::make_record(sample_inputs(false));
    record::seal(r);
    auto path = d / "run.json";

    lab_test::write_file(path, r.dump(2));
    CHECK_NOTHROW(record::read_record(path));

    SECTION("an edited value breaks the digest") {
        json edited = r;
        edited["workloads"][0]["time_s"]["median"] = 0.02;
        lab_test::write_file(path, edited.dump(2));
        CHECK_THAT(message_of([&] { record::read_record(path); }), Catch::Contains("run.json") && Catch::Contains("digest"));
    }
    SECTION("a truncated file is not valid JSON, and the line is named") {
        std::string text = r.dump(2);
        lab_test::write_file(path, text.substr(0, text.size() / 2));
        CHECK_THAT(message_of([&] { record::read_record(path); }), Catch::Contains("run.json:") && Catch::Contains("not valid JSON"));
    }
    SECTION("another schema is refused by name") {
        json foreign = r;
        foreign["schema"] = "lab.run/2";
        record::seal(foreign);
        lab_test::write_file(path, foreign.dump());
        CHECK_THAT(message_of([&] { record::read_record(path); }), Catch::Contains("lab.run/2"));
    }
    SECTION("a JSON file that is no run record says so") {
        lab_test::write_file(path, R"({"traceEvents": []})");
        CHECK_THAT(message_of([&] { record::read_record(path); }), Catch::Contains("not a run record"));
    }
    SECTION("a sealed record with a field of the wrong type names the file and the field") {
        json edited = r;
        edited["workloads"][0]["time_s"]["median"] = "fast";
        record::seal(edited);
        lab_test::write_file(path, edited.dump());
        CHECK_THAT(message_of([&] { record::read_record(path); }),
                   Catch::StartsWith(path.string() + ": ") &&
                       Catch::Contains("workloads[0].time_s.median is a string, where a number goes"));
    }
    SECTION("a wrong type deeper in the device part is named by its path") {
        json edited = r;
        edited["device"]["facts"]["caches"] = json::array({{{"level", "two"}}});
        record::seal(edited);
        lab_test::write_file(path, edited.dump());
        CHECK_THAT(message_of([&] { record::read_record(path); }),
                   Catch::Contains("device.facts.caches[0].level is a string, where a number goes"));
        edited = r;
        edited["device"]["ceilings"]["clock_hz"]["value"] = 1e9;
        edited["device"]["ceilings"]["clock_hz"]["method"] = 7;
        record::seal(edited);
        lab_test::write_file(path, edited.dump());
        CHECK_THAT(message_of([&] { record::read_record(path); }),
                   Catch::Contains("device.ceilings.clock_hz.method is a number, where a string goes"));
    }
    SECTION("a missing file is named") {
        CHECK_THAT(message_of([&] { record::read_record(d / "nope.json"); }), Catch::Contains("nope.json"));
    }
}

TEST_CASE("the digest is SHA-256 of the record's canonical dump without its digest", "[record]") {
    // compute_digest writes the dump member by member rather than copying the record; it must
    // stay byte for byte what a copy's dump() gives, or every record written before would break.
    json r = record::make_record(sample_inputs(true));
    r["notes"] = {"ünïcödé µs", "quote \" and backslash \\"};
    record::seal(r);
    json copy = r;
    copy.erase("digest");
    CHECK(record::compute_digest(r) == "sha256:" + sha256_hex(copy.dump()));
    CHECK(r["digest"] == record::compute_digest(r));
}

TEST_CASE("values are shown with SI prefixes and their units", "[record]") {
    auto fmt = [](double v, const char* unit) {
        MetricValue m;
        m.number = v;
        m.unit = unit;
        return record::format_value(m);
    };
    CHECK(fmt(1.23e9, "FLOP/s") == "1.23 GFLOP/s");
    CHECK(fmt(350e-9, "s") == "350 ns");
    CHECK(fmt(30e9, "B/s") == "30 GB/s");
    CHECK(fmt(9.3, "FLOP/B") == "9.3 FLOP/B");
    CHECK(fmt(0.83, "ratio") == "0.83");
}

TEST_CASE("a metric derive() sets twice has one value, the later, in the teaching text and the record", "[record]") {
    // Two entries of one name made every honest run "implausible": the grader re-derived the
    // later value and compared the earlier one with it.
    record::RecordInputs in = sample_inputs(true);
    in.derivation.set("ridge_point", 12);
    REQUIRE(std::count_if(in.derivation.metrics.begin(), in.derivation.metrics.end(),
                          [](const lab::MetricValue& v) { return v.name == "ridge_point"; }) == 1);
    CHECK(in.derivation.find("ridge_point")->number == 12);
    json r = record::make_record(in);
    CHECK(r["metrics"]["ridge_point"]["value"] == 12);
    CHECK_THAT(r["teaching"][0].get<std::string>(), Catch::StartsWith("ridge 12 FLOP/B"));
}

// A fuzzing review: "the run record's workloads[0] is missing a field or has one of the wrong
// type (cannot use at() with string)" named neither what was wrong nor which field.
TEST_CASE("a record part that is no object, or lacks a field, is said in the record's terms", "[record]") {
    json r = record::make_record(sample_inputs(false));
    const auto refusal = [](const json& j) {
        try {
            record::raw_run_from_record(j, "run.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    json not_object = r;
    not_object["workloads"][0] = "x";
    CHECK_THAT(refusal(not_object), Catch::Contains("run.json: the run record's workloads[0] is a string, where an object of fields goes") &&
                                        Catch::Contains("fix:") && !Catch::Contains("at()"));
    json no_field = r;
    no_field["workloads"][0].erase("flops");
    CHECK_THAT(refusal(no_field), Catch::Contains("the run record's workloads[0] has no 'flops' field"));
    // A review: a field read into that is no object said nlohmann's "cannot use at() with number".
    json number_for_object = r;
    number_for_object["workloads"][0]["time_s"] = 5;
    CHECK_THAT(refusal(number_for_object), Catch::Contains("run.json: the run record's workloads[0].time_s is a number, where an object goes") &&
                                               Catch::Contains("fix:") && !Catch::Contains("at()"));
    json string_for_object = r;
    string_for_object["device"]["facts"]["caches"][0] = "L1";
    CHECK_THAT(refusal(string_for_object), Catch::Contains("the run record's device.facts.caches[0] is a string, where an object goes") &&
                                               !Catch::Contains("at()") && !Catch::Contains("value()"));
}
