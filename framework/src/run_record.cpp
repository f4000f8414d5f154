// Run records: serialisation, withholding, digest, reading (see run_record.hpp).
#include "run_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "digest.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "input_file.hpp"
#include "json_input.hpp"
#include "paths.hpp"

using nlohmann::json;

namespace lab::record {

namespace {

const char* kind_name(MetricKind k) {
    return k == MetricKind::number ? "number" : k == MetricKind::integer ? "integer" : "category";
}

// JSON has no infinity: an unbounded value is written as null.
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double num_or(const json& j, double fallback) { return j.is_number() ? j.get<double>() : fallback; }

json ceiling_json(const Ceiling& c) {
    return {{"value", num(c.value)}, {"unit", c.unit},           {"method", c.method},       {"measured_at", c.measured_at},
            {"spread", num(c.spread)}, {"samples", c.samples}, {"noise_met", c.noise_met}, {"load", num(c.load)},
            {"trusted", c.trusted},   {"source", c.source}};
}
// Records and caches written before ceilings carried their conditions read as trusted, with
// unknown spread, samples and load.
Ceiling ceiling_from(const json& j) {
    Ceiling c;
    c.value = num_or(j.at("value"), 0);
    c.unit = j.value("unit", "");
    c.method = j.value("method", "");
    c.measured_at = j.value("measured_at", "");
    c.spread = num_or(j.value("spread", json(0.0)), 0);
    c.samples = j.value("samples", 0);
    c.noise_met = j.value("noise_met", true);
    c.load = num_or(j.value("load", json(-1.0)), -1);
    c.trusted = j.value("trusted", true);
    c.source = j.value("source", "");
    return c;
}

}  // namespace

json to_json(const DeviceFacts& f) {
    json caches = json::array();
    for (const auto& c : f.caches)
        caches.push_back({{"level", c.level}, {"type", c.type}, {"bytes", c.bytes}, {"shared_by", c.shared_by}});
    return {{"name", f.name},         {"vendor", f.vendor},   {"compute_units", f.compute_units},
            {"threads", f.threads},   {"caches", caches},     {"memory_bytes", f.memory_bytes},
            {"features", f.features}, {"simd", f.simd},       {"extra", f.extra}};
}

DeviceFacts facts_from_json(const json& j) {
    DeviceFacts f;
    f.name = j.value("name", "");
    f.vendor = j.value("vendor", "");
    f.compute_units = j.value("compute_units", 0);
    f.threads = j.value("threads", 0);
    for (const auto& c : j.value("caches", json::array()))
        f.caches.push_back({c.value("level", 0), c.value("type", ""), c.value("bytes", std::uint64_t{0}),
                            c.value("shared_by", 1)});
    f.memory_bytes = j.value("memory_bytes", std::uint64_t{0});
    f.features = j.value("features", std::vector<std::string>{});
    f.simd = j.value("simd", "");
    f.extra = j.value("extra", std::map<std::string, std::string>{});
    return f;
}

json to_json(const Ceilings& c) {
    json flops = json::object(), bw = json::object();
    for (const auto& [k, v] : c.flops_per_s) flops[k] = ceiling_json(v);
    for (const auto& [k, v] : c.bandwidth_bytes_per_s) bw[k] = ceiling_json(v);
    json j = {{"clock_hz", ceiling_json(c.clock_hz)},
              {"launch_s", ceiling_json(c.launch_s)},
              {"launch_graph_s", ceiling_json(c.launch_graph_s)},
              {"flops_per_s", flops},
              {"bandwidth_bytes_per_s", bw},
              {"threads", c.threads},
              {"quick", c.quick}};
    if (!c.skipped.empty()) j["skipped"] = c.skipped;  // absent when none: records before it read the same
    return j;
}

Ceilings ceilings_from_json(const json& j) {
    Ceilings c;
    c.clock_hz = ceiling_from(j.at("clock_hz"));
    c.launch_s = ceiling_from(j.at("launch_s"));
    if (j.contains("launch_graph_s")) c.launch_graph_s = ceiling_from(j.at("launch_graph_s"));
    for (const auto& [k, v] : j.at("flops_per_s").items()) c.flops_per_s[k] = ceiling_from(v);
    for (const auto& [k, v] : j.at("bandwidth_bytes_per_s").items()) c.bandwidth_bytes_per_s[k] = ceiling_from(v);
    c.threads = j.value("threads", 0);
    c.quick = j.value("quick", false);
    c.skipped = j.value("skipped", std::map<std::string, std::string>{});
    return c;
}

void order_params_as_recorded(Workload& w) {
    std::stable_sort(w.params.begin(), w.params.end(), [](const Param& a, const Param& b) { return a.name < b.name; });
}

json to_json(const Measurement& m) {
    const Workload& w = m.workload;
    json params = json::object();
    for (const auto& p : w.params) params[p.name] = p.value;
    const TimeStats& t = m.time;
    json j = {{"name", w.name},
            {"description", w.description},
            {"params", params},
            {"flops", w.flops},
            {"bytes", w.bytes},
            {"pipe", w.pipe},
            {"level", w.level},
            {"mode", w.mode == TimingMode::cold ? "cold" : "hot"},
            {"doubles", w.doubles},
            {"time_s",
             {{"median", t.median}, {"min", t.min}, {"max", t.max}, {"mean", t.mean}, {"stddev", t.stddev},
              {"noise", t.noise}, {"samples", t.samples}, {"batch", t.batch}, {"discarded", t.discarded},
              {"total", t.total_s}}},
            {"noise_met", t.noise_met},
            {"counters", m.counters},
            {"counters_note", m.counters_note},
            {"telemetry", m.telemetry},
            {"load", num(m.load)}};
    // Written only where it happened, so records without it read as they were written.
    if (t.clock_held_low) j["time_s"]["clock_held_low"] = true;
    return j;
}

Measurement measurement_from_json(const json& j) {
    Measurement m;
    Workload& w = m.workload;
    w.name = j.at("name").get<std::string>();
    w.description = j.value("description", "");
    const json params = j.value("params", json::object());  // items() must not outlive its json
    for (const auto& [k, v] : params.items()) w.params.push_back({k, v.get<double>()});
    w.flops = j.at("flops").get<double>();
    w.bytes = j.at("bytes").get<double>();
    w.pipe = j.at("pipe").get<std::string>();
    w.level = j.value("level", "dram");
    w.mode = j.value("mode", "hot") == "cold" ? TimingMode::cold : TimingMode::hot;
    w.doubles = j.value("doubles", "");
    const json& t = j.at("time_s");
    m.time.median = t.at("median").get<double>();
    m.time.min = t.value("min", 0.0);
    m.time.max = t.value("max", 0.0);
    m.time.mean = t.value("mean", 0.0);
    m.time.stddev = t.value("stddev", 0.0);
    m.time.noise = t.value("noise", 0.0);
    m.time.samples = t.value("samples", 0);
    m.time.batch = t.value("batch", 1);
    m.time.discarded = t.value("discarded", 0);
    m.time.total_s = t.value("total", 0.0);
    m.time.clock_held_low = t.value("clock_held_low", false);
    m.time.noise_met = j.value("noise_met", false);
    m.counters = j.value("counters", std::map<std::string, double>{});
    m.counters_note = j.value("counters_note", "");
    m.telemetry = j.value("telemetry", std::map<std::string, double>{});
    m.load = num_or(j.value("load", json(-1.0)), -1);
    return m;
}

json to_json(const CeilingMeasurement& c) {
    json j = {{"ceiling", c.ceiling}, {"purpose", c.purpose}, {"workloads", c.workloads}};
    if (c.purpose != "evidence") j["measurement"] = to_json(c.measurement);
    return j;
}

CeilingMeasurement ceiling_measurement_from_json(const json& j) {
    CeilingMeasurement c;
    c.ceiling = j.at("ceiling").get<std::string>();
    c.purpose = j.at("purpose").get<std::string>();
    c.workloads = j.value("workloads", std::vector<std::string>{});
    if (j.contains("measurement")) c.measurement = measurement_from_json(j.at("measurement"));
    return c;
}

json to_json(const MetricValue& v) {
    json j = {{"unit", v.unit}, {"kind", kind_name(v.kind)}};
    if (v.kind == MetricKind::category) j["value"] = v.text;
    else if (v.kind == MetricKind::integer && std::isfinite(v.number)) j["value"] = static_cast<long long>(std::llround(v.number));
    else j["value"] = num(v.number);
    return j;
}

json to_json(const MetricDecl& d) {
    return {{"name", d.name},     {"unit", d.unit},     {"kind", kind_name(d.kind)}, {"description", d.description},
            {"quick", d.quick},   {"graded", d.graded}, {"devices", d.devices}};
}

json thresholds_json() {
    return {{"overhead_launch_factor", roofline::kOverheadLaunchFactor},
            {"doubling_ratio_max", roofline::kDoublingRatioMax},
            {"substantial_roof_fraction", roofline::kSubstantialRoofFraction},
            {"decision_sigmas", roofline::kDecisionSigmas},
            {"min_relative_error", roofline::kMinRelativeError},
            {"roof_margin", roofline::kRoofMargin},
            {"loaded_machine_cpus", roofline::kLoadedMachineCpus}};
}

bool is_check_helper(const std::string& name) { return name.rfind("check.", 0) == 0; }

std::set<std::string> withheld_metrics(const LessonInfo& info, bool reveal, DeviceKind kind) {
    std::set<std::string> out;
    if (reveal) return out;
    for (const auto& d : info.metrics)
        if ((d.graded || is_check_helper(d.name)) &&
            std::find(d.devices.begin(), d.devices.end(), to_string(kind)) != d.devices.end())
            out.insert(d.name);
    // A workload's two regimes agree unless the run sits near its ridge or on overhead, so the
    // table's measured regime would answer a question on the predicted one (02.05's "which side
    // of the ridge is fma_few"), and the reverse: withholding one withholds its twin.
    std::set<std::string> twins;
    for (const auto& name : out)
        for (const auto& [mine, twin] : {std::pair{".predicted_regime", ".measured_regime"}, std::pair{".measured_regime", ".predicted_regime"}})
            if (const std::string m = mine; name.size() > m.size() && name.compare(name.size() - m.size(), m.size(), m) == 0)
                twins.insert(name.substr(0, name.size() - m.size()) + twin);
    // Where a workload doubles (02.11's doubling test), its measured regime is overhead_bound
    // exactly when its doubling ratio is below the test's threshold: the table's regime column
    // would answer "what does the small update's ratio say it is". Withholding the ratio withholds
    // the regime that states it (not the predicted one, which the ratio does not decide).
    const std::string ratio = ".doubling_ratio";
    for (const auto& name : out)
        if (name.size() > ratio.size() && name.compare(name.size() - ratio.size(), ratio.size(), ratio) == 0)
            twins.insert(name.substr(0, name.size() - ratio.size()) + ".measured_regime");
    out.insert(twins.begin(), twins.end());
    return out;
}

bool shown_as_percent(const std::string& name, const std::string& unit) {
    if (unit != "ratio") return false;
    const std::string last = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    const std::string suffix = "fraction";
    return last.size() >= suffix.size() && last.compare(last.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_value(const MetricValue& v) {
    if (v.kind == MetricKind::category) return v.text;
    if (v.kind == MetricKind::integer) return fmt::format("{}{}", std::llround(v.number), v.unit.empty() ? "" : " " + v.unit);
    if (shown_as_percent(v.name, v.unit)) return format::percent(v.number);
    return format::quantity(v.number, v.unit);
}

namespace {

// {shipped:X}: the installed share/lab/ folders or, in a build tree, the source tree's lesson
// folders: said as the folder found, since "in a build tree" is not where the file is.
std::string shipped_path(const std::string& x, const Derivation& d, const std::set<std::string>& withheld) {
    if (withheld.count(x)) return "?";
    const MetricValue* v = d.find(x);
    const std::string name = v ? format_value(*v) : x;
    const std::filesystem::path found = paths::shipped_file(name);
    return found.empty() ? name + " (not shipped with this lab)" : found.lexically_normal().string();
}

}  // namespace

std::string substitute_placeholders(const std::string& line, const std::function<std::string(const std::string&)>& value) {
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        std::size_t open = line.find('{', i);
        if (open == std::string::npos) break;
        std::size_t close = line.find('}', open);
        if (close == std::string::npos) break;
        out += line.substr(i, open - i) + value(line.substr(open + 1, close - open - 1));
        i = close + 1;
    }
    out += line.substr(i);
    return out;
}

std::string render_teaching(const std::string& line, const Derivation& d, const std::set<std::string>& withheld) {
    return substitute_placeholders(line, [&](const std::string& name) -> std::string {
        if (name.rfind("shipped:", 0) == 0) return shipped_path(name.substr(8), d, withheld);
        const MetricValue* v = d.find(name);
        // A metric this run does not have (one of another device kind, or one derive() left
        // unset): "n/a", withheld or not, never a raw {name} nor a '?' with nothing to work out.
        if (!v) return "n/a";
        if (withheld.count(name)) return "?";
        return format_value(*v);
    });
}

json make_record(const RecordInputs& in) {
    const std::set<std::string> withheld = withheld_metrics(in.info, in.reveal, in.raw.device_kind);
    json workloads = json::array();
    for (const auto& m : in.raw.measurements) {
        json w = to_json(m);
        for (const auto& d : in.derivation.workloads) {
            if (d.workload != m.workload.name) continue;
            const auto& p = d.placement;
            json derived = json::object();
            auto put = [&](const char* field, json value) {
                if (!withheld.count(m.workload.name + "." + field)) derived[field] = std::move(value);
            };
            put("flops_per_s", num(p.flops_per_s));
            put("bytes_per_s", num(p.bytes_per_s));
            put("ai", num(p.ai));
            put("roof_fraction", num(p.roof_fraction));
            put("predicted_regime", roofline::to_string(p.predicted));
            put("measured_regime", roofline::to_text(p.measured));
            if (!p.measured.reason.empty() && !withheld.count(m.workload.name + ".measured_regime"))
                derived["regime_reason"] = p.measured.reason;
            if (p.doubling_ratio) put("doubling_ratio", *p.doubling_ratio);
            w["derived"] = derived;
        }
        workloads.push_back(w);
    }
    json metrics = json::object();
    for (const auto& v : in.derivation.metrics)
        if (!withheld.count(v.name)) metrics[v.name] = to_json(v);
    json teaching = json::array();
    for (const auto& line : in.derivation.teaching) teaching.push_back(render_teaching(line, in.derivation, withheld));
    json declared = json::array();
    for (const auto& d : in.info.metrics) declared.push_back(to_json(d));
    // The ceilings as the run started, and what it measured of them while running (raw data):
    // readers recompute the ceilings the workloads were held against (effective_ceilings).
    const Ceilings& start = in.raw.ceiling_measurements.empty() ? in.raw.ceilings : in.raw.ceilings_at_start;
    json ceiling_measurements = json::array();
    for (const auto& cm : in.raw.ceiling_measurements) ceiling_measurements.push_back(to_json(cm));
    json skipped = json::array();
    for (const auto& sk : in.raw.skipped) skipped.push_back({{"workload", sk.workload}, {"reason", sk.reason}});

    return {{"schema", kSchema},
            {"lab_version", LAB_VERSION},
            {"lesson", {{"id", in.info.id}, {"title", in.info.title}, {"plugin_version", in.info.version},
                        {"api", std::to_string(kApiMajor) + "." + std::to_string(kApiMinor)}}},
            {"student", in.raw.options.student},
            {"token", in.token},
            {"seed", in.raw.options.seed_hex},
            {"quick", in.raw.options.quick},
            {"revealed", in.reveal},
            {"started_at", in.started_at},
            {"duration_s", in.duration_s},
            {"device", {{"kind", to_string(in.raw.device_kind)}, {"facts", to_json(in.raw.facts)},
                        {"spec", in.spec}, {"ceilings", to_json(start)}, {"ceiling_measurements", ceiling_measurements}}},
            {"engine", in.engine},
            {"thresholds", thresholds_json()},
            {"notes", in.notes},
            {"workloads", workloads},
            {"skipped", skipped},
            {"metrics", metrics},
            {"withheld", std::vector<std::string>(withheld.begin(), withheld.end())},
            {"declared_metrics", declared},
            {"teaching", teaching}};
}

// The canonical dump of the record without its digest, written member by member as
// nlohmann's dump() writes an object (keys sorted, no spaces), so no copy of the record is made:
// a copy would double a large record's memory and recurse through its whole depth once more.
std::string compute_digest(const json& record) {
    if (!record.is_object()) return "sha256:" + sha256_hex(record.dump());
    std::string text = "{";
    for (auto it = record.begin(); it != record.end(); ++it) {
        if (it.key() == "digest") continue;
        if (text.size() > 1) text += ',';
        text += json(it.key()).dump();
        text += ':';
        text += it.value().dump();
    }
    return "sha256:" + sha256_hex(text + "}");
}

void seal(json& record) { record["digest"] = compute_digest(record); }

namespace {

// The shapes of the fields anything in lab reads straight from a record (the grader, lab show,
// lab answers), checked once here so that no reader meets a field of the wrong type: a record is
// a file a student hands in, and its digest proves nothing against one edited and sealed again.
enum class Shape { string, boolean, number, object, array, object_or_null };

const char* shape_name(Shape s) {
    switch (s) {
        case Shape::string: return "a string";
        case Shape::boolean: return "true or false";
        case Shape::number: return "a number";
        case Shape::object: return "an object";
        case Shape::array: return "a list";
        case Shape::object_or_null: return "an object or null";
    }
    return "?";
}

bool fits(const json& v, Shape s) {
    switch (s) {
        case Shape::string: return v.is_string();
        case Shape::boolean: return v.is_boolean();
        case Shape::number: return v.is_number();
        case Shape::object: return v.is_object();
        case Shape::array: return v.is_array();
        case Shape::object_or_null: return v.is_object() || v.is_null();
    }
    return false;
}

const char* type_name(const json& v) {
    return v.is_null() ? "null" : v.is_boolean() ? "true/false" : v.is_number() ? "a number" : v.is_string() ? "a string"
         : v.is_array() ? "a list" : "an object";
}

struct FieldShape {
    const char* key;
    Shape shape;
    bool required;
};

void check_fields(const json& parent, const std::string& path, std::initializer_list<FieldShape> fields, const std::string& where) {
    for (const auto& f : fields) {
        const std::string name = path.empty() ? f.key : path + "." + f.key;
        if (!parent.contains(f.key)) {
            if (f.required)
                throw InputError(where, "the run record lacks \"" + name + "\"", "record the run again with `lab run`");
            continue;
        }
        const json& v = parent[f.key];
        if (!fits(v, f.shape))
            throw InputError(where, "the run record's \"" + name + "\" is " + type_name(v) + ", not " + shape_name(f.shape),
                             "use the record exactly as `lab run` wrote it, or record the run again");
    }
}

void check_shapes(const json& r, const std::string& where) {
    check_fields(r, "",
                 {{"lesson", Shape::object, true}, {"student", Shape::string, true}, {"token", Shape::string, false},
                  {"seed", Shape::string, true}, {"quick", Shape::boolean, true}, {"device", Shape::object, true}, {"workloads", Shape::array, true},
                  {"skipped", Shape::array, false}, {"metrics", Shape::object, false}, {"withheld", Shape::array, false},
                  {"declared_metrics", Shape::array, false}, {"teaching", Shape::array, false}, {"notes", Shape::array, false},
                  {"started_at", Shape::string, false}, {"duration_s", Shape::number, false}, {"revealed", Shape::boolean, false},
                  {"lab_version", Shape::string, false}, {"thresholds", Shape::object, false}},
                 where);
    check_fields(r["lesson"], "lesson",
                 {{"id", Shape::string, true}, {"title", Shape::string, false}, {"plugin_version", Shape::string, false},
                  {"api", Shape::string, false}},
                 where);
    const json& device = r["device"];
    check_fields(device, "device",
                 {{"kind", Shape::string, true}, {"facts", Shape::object, true}, {"ceilings", Shape::object, true},
                  {"ceiling_measurements", Shape::array, false}, {"spec", Shape::object_or_null, false}},
                 where);
    const std::string kind = device["kind"].get<std::string>();
    if (kind != "cpu" && kind != "cuda")
        throw InputError(where, "the run record's device kind is '" + excerpt(kind) + "', neither cpu nor cuda",
                         "use the record exactly as `lab run` wrote it, or record the run again");
    // The per-student seed: hexadecimal, as `lab run` writes it (readers take its first 16 digits).
    const std::string seed = r["seed"].get<std::string>();
    if (seed.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw InputError(where, "the run record's seed is not hexadecimal", "use the record exactly as `lab run` wrote it");
    // Stored metrics are compared with re-derived ones by their "value".
    if (r.contains("metrics"))
        for (const auto& [name, m] : r["metrics"].items())
            if (!m.is_object() || !m.contains("value"))
                throw InputError(where, "the run record's metric \"" + excerpt(name) + "\" is not an object with a \"value\"",
                                 "use the record exactly as `lab run` wrote it, or record the run again");
}

}  // namespace

void check_record(const json& r, const std::string& where) {
    if (!r.is_object()) throw InputError(where, "not a run record (the JSON is not an object)");
    if (!r.contains("schema") || !r["schema"].is_string())
        throw InputError(where, "not a run record: no \"schema\" field", "pass a file written by `lab run --out`");
    std::string schema = r["schema"].get<std::string>();
    if (schema != kSchema)
        throw InputError(where, "unknown run-record schema '" + excerpt(schema) + "' (this lab reads " + kSchema + ")",
                         "record the run again with this version of lab");
    if (!r.contains("digest") || !r["digest"].is_string())
        throw InputError(where, "the run record has no digest", "record the run again with `lab run`");
    if (r["digest"].get<std::string>() != compute_digest(r))
        throw InputError(where, "the run record's digest does not match its content: the file was edited or corrupted",
                         "use the record exactly as `lab run` wrote it, or record the run again");
    check_shapes(r, where);
}

json read_record(const std::filesystem::path& file) {
    const JsonLimits limits{.max_bytes = kMaxRecordBytes, .max_depth = kMaxRecordDepth};
    json r = load_json_input(file, "the run record", limits, "check the path", "record the run again");
    check_record(r, file.string());
    // Decoded once here, so a field of the wrong type deep inside is reported with the file's
    // name; readers decode it again (raw_run_from_record) knowing it will succeed.
    (void)raw_run_from_record(r, file.string());
    return r;
}

namespace {

// The first field of `actual` of JSON type `found` (nlohmann's name for what it met) whose kind
// differs from the same field of `written` (what lab writes there), as "path is a string, where a
// number goes"; empty where none does. Null and empty lists or objects in `written` say nothing
// of what goes there and are passed over; `found` passes over fields read leniently (a null
// where a number goes is how JSON writes an unbounded value).
std::string first_kind_difference(const json& actual, const json& written, const std::string& path, const std::string& found) {
    if (written.is_null()) return "";
    if (written.is_object() && actual.is_object()) {
        if (written.size() == 1 && written.contains("*")) {  // a map: every entry is written alike
            for (const auto& [k, v] : actual.items())
                if (auto d = first_kind_difference(v, written["*"], path.empty() ? k : path + "." + k, found); !d.empty()) return d;
            return "";
        }
        for (const auto& [k, v] : written.items())
            if (actual.contains(k))
                if (auto d = first_kind_difference(actual[k], v, path.empty() ? k : path + "." + k, found); !d.empty()) return d;
        return "";
    }
    if (written.is_array() && actual.is_array()) {
        if (written.empty()) return "";
        for (std::size_t i = 0; i < actual.size(); ++i)
            if (auto d = first_kind_difference(actual[i], written[0], path + "[" + std::to_string(i) + "]", found); !d.empty()) return d;
        return "";
    }
    if (type_name(actual) == std::string(type_name(written)) || actual.type_name() != found) return "";
    return path + " is " + type_name(actual) + ", where " + type_name(written) + " goes";
}

// The text after the last `marker` in `text`, or "" without one.
std::string after_last(const std::string& text, const std::string& marker) {
    const auto at = text.rfind(marker);
    return at == std::string::npos ? std::string() : text.substr(at + marker.size());
}

// Maps with names of their own (a workload's params, the ceilings by pipe) are written as {"*": entry}.
json as_map_of(const json& one_entry_map) { return {{"*", one_entry_map.begin().value()}}; }

std::string wrong_type_field(const json& node, const std::string& part, const std::string& found) {
    Measurement m;
    m.workload.params.push_back({"n", 1});
    json workload = to_json(m);
    workload["params"] = as_map_of(workload["params"]);
    if (part.rfind("workloads[", 0) == 0) return first_kind_difference(node, workload, "", found);
    if (part.rfind("device.ceiling_measurements[", 0) == 0) {
        CeilingMeasurement c;
        c.purpose = "reference";
        c.workloads = {"w"};
        json written = to_json(c);
        written["measurement"] = workload;
        return first_kind_difference(node, written, "", found);
    }
    if (part == "device.facts") {
        DeviceFacts f;
        f.caches.push_back({});
        return first_kind_difference(node, to_json(f), "", found);
    }
    if (part == "device.ceilings") {
        Ceilings c;
        c.flops_per_s["x"] = c.bandwidth_bytes_per_s["x"] = c.clock_hz;
        json written = to_json(c);
        written["flops_per_s"] = as_map_of(written["flops_per_s"]);
        written["bandwidth_bytes_per_s"] = as_map_of(written["bandwidth_bytes_per_s"]);
        return first_kind_difference(node, written, "", found);
    }
    return "";
}

}  // namespace

RawRun raw_run_from_record(const json& r, const std::string& where) {
    RawRun raw;
    std::string part = "the record";  // the part being read, for the message
    const json* node = &r;              // and its JSON, to say what is wrong with it
    try {
        raw.lesson_id = r.at("lesson").at("id").get<std::string>();
        raw.options.quick = r.at("quick").get<bool>();
        raw.options.student = r.at("student").get<std::string>();
        raw.options.seed_hex = r.at("seed").get<std::string>();
        raw.options.seed = 0;
        if (raw.options.seed_hex.size() >= 16 &&
            raw.options.seed_hex.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos)
            raw.options.seed = std::stoull(raw.options.seed_hex.substr(0, 16), nullptr, 16);
        const json& d = r.at("device");
        raw.device_kind = d.at("kind").get<std::string>() == "cuda" ? DeviceKind::cuda : DeviceKind::cpu;
        part = "device.facts", node = &d.at("facts");
        raw.facts = facts_from_json(*node);
        part = "device.ceilings", node = &d.at("ceilings");
        raw.ceilings_at_start = ceilings_from_json(*node);
        std::size_t i = 0;
        for (const auto& w : r.at("workloads")) {
            part = "workloads[" + std::to_string(i++) + "]", node = &w;
            raw.measurements.push_back(measurement_from_json(w));
        }
        i = 0;
        for (const auto& cm : d.value("ceiling_measurements", json::array())) {
            part = "device.ceiling_measurements[" + std::to_string(i++) + "]", node = &cm;
            raw.ceiling_measurements.push_back(ceiling_measurement_from_json(cm));
        }
        // Records written before skips were recorded say nothing of them (not: "none").
        raw.skips_recorded = r.contains("skipped");
        i = 0;
        for (const auto& sk : r.value("skipped", json::array())) {
            part = "skipped[" + std::to_string(i++) + "]", node = &sk;
            raw.skipped.push_back({sk.at("workload").get<std::string>(), sk.at("reason").get<std::string>()});
        }
        part = "the record", node = &r;
        raw.ceilings = effective_ceilings(raw.ceilings_at_start, raw.ceiling_measurements, raw.measurements);
    } catch (const json::exception& e) {
        // nlohmann's message names the type or key it missed; `part` says where in the record.
        std::string why = e.what();
        why = why.substr(why.find(']') == std::string::npos ? 0 : why.find(']') + 2);
        const std::string fix = "use the record exactly as `lab run` wrote it, or record the run again";
        // Said in the record's terms where nlohmann's words allow: a part that is no object
        // ("cannot use at() with string"), a field it lacks ("key 'flops' not found").
        if (!node->is_object() && part != "the record")
            throw InputError(where, "the run record's " + part + " is " + (node->is_null() ? "null" : std::string(node->is_array() ? "an " : "a ") + node->type_name()) +
                                        ", where an object of fields goes", fix);
        if (const auto k = why.find("key '"); e.id == 403 && k != std::string::npos)
            throw InputError(where, "the run record's " + part + " has no '" + why.substr(k + 5, why.find('\'', k + 5) - k - 5) + "' field", fix);
        // A value of the wrong type: nlohmann names the types, not the field ("type must be
        // number, but is string"; a field read into, "cannot use at() with number"). The field is
        // found by laying the part beside what `lab run` writes for it.
        const std::string found = e.id == 302                 ? after_last(why, "but is ")
                                  : e.id == 304 || e.id == 306 ? after_last(why, " with ")
                                                               : std::string();
        if (const auto field = found.empty() ? "" : wrong_type_field(*node, part, found); !field.empty())
            throw InputError(where, "the run record's " + part + "." + field, fix);
        if (!found.empty() && e.id != 302)
            throw InputError(where, "the run record's " + part + " has a field that is " + (found == "array" || found == "object" ? "an " : "a ") +
                                        found + ", where an object of fields goes", fix);
        throw InputError(where, "the run record's " + part + " is missing a field or has one of the wrong type (" + why + ")", fix);
    }
    return raw;
}

}  // namespace lab::record
