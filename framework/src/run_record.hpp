// The run record, `lab.run/1` (DESIGN.md, "Run record"): one JSON file per run holding the raw
// measurements and everything needed to re-derive its metrics, sealed with a SHA-256 digest.
// Its JSON Schema is framework/schema/lab.run-1.schema.json. Readers refuse other schemas and
// broken digests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"

namespace lab::record {

inline constexpr const char* kSchema = "lab.run/1";

nlohmann::json to_json(const DeviceFacts& f);
DeviceFacts facts_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j);
// A workload's parameters in the order a record gives them back: by name (the record keeps them
// as a JSON object). The engine and the plan replay put them in this order too, so a lesson's
// derive() sees one order in `lab run`, `lab show`, `lab validate` and the grader.
void order_params_as_recorded(Workload& w);
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CeilingMeasurement& c);
CeilingMeasurement ceiling_measurement_from_json(const nlohmann::json& j);
nlohmann::json to_json(const MetricValue& v);
nlohmann::json to_json(const MetricDecl& d);

// The named regime thresholds (lab/roofline.hpp), written into every record.
nlohmann::json thresholds_json();

// The metrics of the lesson that a student may not see in this run (none with --reveal):
//  - its graded metrics (MetricDecl::graded): exactly the ones its grading spec's questions ask;
//  - its `check.*` helpers: metrics `lab check` compares with the lesson's expectations, which
//    summarise a student's answers across the per-student variants (e.g. the roof fraction of
//    "the compute-bound mystery"), so reading one would give an answer away. They are withheld
//    without being graded: no question asks them, and no '?' is counted for them.
//  - the twin of a withheld regime: a workload's measured regime when its predicted one is
//    withheld, and the reverse (they agree but near the ridge, so one would give the other away).
// Only metrics the run's device produces count: a CPU run withholds no GPU-only metric.
std::set<std::string> withheld_metrics(const LessonInfo& info, bool reveal, DeviceKind kind);

// A `check.*` helper metric (see withheld_metrics).
bool is_check_helper(const std::string& name);

// The one display rule for fractions of a ceiling: a metric of unit "ratio" whose name ends in
// "fraction" ("triad.roof_fraction", "check.memory_roof_fraction") is shown in percent, "29.2%",
// wherever a person reads it; the record keeps the SI ratio (0.292). Other ratios (a doubling
// ratio of 1.05, a per-element ratio of 1200) are factors and stay plain numbers.
bool shown_as_percent(const std::string& name, const std::string& unit);

// "1.23 GFLOP/s", "350 ns", "1.05", "29.2%" (see shown_as_percent), "memory_bound": numbers as
// format::quantity writes them, fractions as format::percent.
std::string format_value(const MetricValue& v);

// `line` with each {name} placeholder replaced by value(name) (name as written between the
// braces, "shipped:" prefix included): the one reading of the placeholder syntax, for the text
// (render_teaching) and for the check of what it names (lab validate's plan replay).
std::string substitute_placeholders(const std::string& line, const std::function<std::string(const std::string&)>& value);

// Replaces {metric.name} placeholders by formatted values, or "?" when withheld, and
// {shipped:X} by the path where this lab finds X, a file the lessons ship for students to read
// (paths::shipped_file): X is a metric whose value is the file's name ({shipped:question_capture})
// or the name itself ({shipped:a100_simple_add.json.gz}).
std::string render_teaching(const std::string& line, const Derivation& d, const std::set<std::string>& withheld);

struct RecordInputs {
    LessonInfo info;
    RawRun raw;
    Derivation derivation;
    bool reveal = false;
    std::string started_at;
    double duration_s = 0;
    nlohmann::json spec;          // datasheet spec of the device, or null
    nlohmann::json engine;        // the engine settings used
    std::vector<std::string> notes;  // e.g. why the run fell back to the CPU
    std::string token;            // the course token the run was made with, "" = none (course_token.hpp)
};

// The record without its digest; withheld values are left out.
nlohmann::json make_record(const RecordInputs& in);

// Adds "digest": "sha256:<hex of the record's canonical dump without digest>".
void seal(nlohmann::json& record);
std::string compute_digest(const nlohmann::json& record);

// What a record file may be: lab's own records are well under a megabyte and about 8 levels
// deep, so these refuse only hostile or corrupted files, before anything recursive touches them.
inline constexpr std::uintmax_t kMaxRecordBytes = 64u << 20;   // "64 MiB"
inline constexpr int kMaxRecordDepth = 64;

// Parses and checks a record file: size and nesting (the limits above), JSON, schema id, digest,
// required fields and the types of every field lab reads. InputError, naming the file, otherwise.
nlohmann::json read_record(const std::filesystem::path& file);
// Checks an already parsed record; `where` names it in errors.
void check_record(const nlohmann::json& record, const std::string& where);

// The raw run a lesson's derive() works from. InputError (with `where`) on a field of the wrong
// type; read_record has decoded it once already, so a record it returned always decodes.
RawRun raw_run_from_record(const nlohmann::json& record, const std::string& where = "");

}  // namespace lab::record
