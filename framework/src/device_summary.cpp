// Device specs beside measurements (see device_summary.hpp). The CPU table is hand-written, so
// every check ends in a lab::InputError that points at the file and 1-based line and says how to
// fix it; cpu_theoretical_peak() turns any such error into "no figure, and why", because a
// grader asking for a physics bound must not crash on a broken table.
#include "device_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "device_specs.hpp"
#include "errors.hpp"
#include "paths.hpp"

namespace lab {

namespace {

namespace fs = std::filesystem;

constexpr const char* kTableName = "cpu_microarchitectures.yaml";
const std::vector<std::string> kRowKeys = {"name",     "vendor",           "family",
                                           "models",   "fma256_per_cycle", "fma512_per_cycle",
                                           "why",      "source"};
const std::vector<std::string> kRequiredKeys = {"name",   "vendor",           "family", "models",
                                                "fma256_per_cycle", "fma512_per_cycle", "source"};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

std::string at(const std::string& file, const YAML::Mark& mark) {
    if (mark.is_null() || mark.line < 0) return file;
    return file + ":" + std::to_string(mark.line + 1);
}

std::string describe(const YAML::Node& node) {
    if (!node.IsDefined() || node.IsNull()) return "nothing";
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a map";
    return "'" + node.Scalar() + "'";
}

// "0x19" -> 25. Hexadecimal with 0x only: /proc/cpuinfo prints decimal and vendor documents
// print hex, so a bare "25" or "19" would be ambiguous.
std::optional<int> parse_hex(const std::string& text) {
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
    int value = 0;
    const char* begin = text.data() + 2;
    const char* end = text.data() + text.size();
    auto [ptr, error] = std::from_chars(begin, end, value, 16);
    if (error != std::errc() || ptr != end) return std::nullopt;
    return value;
}

std::string hex(int v) { return fmt::format("0x{:X}", v); }

std::string read_scalar(const std::string& file, const YAML::Node& key, const YAML::Node& value) {
    if (!value.IsScalar() || value.Scalar().empty())
        throw InputError(at(file, key.Mark()),
                         key.Scalar() + " must be a non-empty string, got " + describe(value),
                         "write " + key.Scalar() + ": ...");
    return value.Scalar();
}

int read_family(const std::string& file, const YAML::Node& key, const YAML::Node& value) {
    auto v = value.IsScalar() ? parse_hex(value.Scalar()) : std::nullopt;
    if (!v || *v < 0 || *v > 0x10F)
        throw InputError(at(file, key.Mark()),
                         "family must be a cpuid display family in hexadecimal, got " + describe(value),
                         "write e.g. family: 0x19 (/proc/cpuinfo's \"cpu family\" prints it in decimal: 25)");
    return *v;
}

std::vector<std::pair<int, int>> read_models(const std::string& file, const YAML::Node& key,
                                             const YAML::Node& value) {
    const std::string fix =
        "write a list of hexadecimal models and inclusive ranges, e.g. models: [0x11, 0x60-0x7F] "
        "(/proc/cpuinfo's \"model\" prints decimal: 17 = 0x11)";
    if (!value.IsSequence() || value.size() == 0)
        throw InputError(at(file, key.Mark()), "models must be a non-empty list, got " + describe(value), fix);
    std::vector<std::pair<int, int>> out;
    for (const auto& item : value) {
        const std::string where = at(file, item.Mark().is_null() ? key.Mark() : item.Mark());
        if (!item.IsScalar()) throw InputError(where, "a model must be a hex number or range, got " + describe(item), fix);
        const std::string text = item.Scalar();
        const auto dash = text.find('-');
        auto lo = parse_hex(text.substr(0, dash));
        auto hi = dash == std::string::npos ? lo : parse_hex(text.substr(dash + 1));
        if (!lo || !hi)
            throw InputError(where, "model '" + text + "' is not a hexadecimal model or range", fix);
        if (*lo > *hi || *hi > 0xFF)
            throw InputError(where, "model range '" + text + "' is empty or beyond 0xFF", fix);
        out.emplace_back(*lo, *hi);
    }
    return out;
}

FmaPerCycle read_fma(const std::string& file, const YAML::Node& key, const YAML::Node& value,
                     bool unsupported_allowed) {
    const std::string name = key.Scalar();
    const std::string fix = std::string("write a positive number of FMA instructions per cycle per core, or unknown") +
                            (unsupported_allowed ? ", or unsupported" : "");
    if (!value.IsScalar())
        throw InputError(at(file, key.Mark()), name + " must be a number, got " + describe(value), fix);
    const std::string text = value.Scalar();
    FmaPerCycle out;
    if (text == "unknown") {
        out.kind = FmaPerCycle::Kind::unknown;
        return out;
    }
    if (text == "unsupported") {
        if (!unsupported_allowed)
            throw InputError(at(file, key.Mark()),
                             name + " cannot be unsupported: every CPU lab runs an avx2 path on has 256-bit FMA",
                             "write a number or unknown");
        out.kind = FmaPerCycle::Kind::unsupported;
        return out;
    }
    double v = 0;
    if (!YAML::convert<double>::decode(value, v) || !std::isfinite(v) || v <= 0 || v > 16)
        throw InputError(at(file, key.Mark()), name + " must be a positive number, got " + describe(value), fix);
    out.kind = FmaPerCycle::Kind::known;
    out.value = v;
    return out;
}

CpuMicroarchitecture read_row(const std::string& file, const YAML::Node& row) {
    if (!row.IsMap())
        throw InputError(at(file, row.Mark()), "each microarchitecture must be a map of keys, got " + describe(row),
                         "write - name: ..., vendor: ..., family: ..., models: [...], ...");
    CpuMicroarchitecture m;
    m.where = at(file, row.Mark());
    std::set<std::string> seen;
    for (const auto& entry : row) {
        const YAML::Node& key = entry.first;
        const YAML::Node& value = entry.second;
        const std::string name = key.IsScalar() ? key.Scalar() : describe(key);
        if (std::find(kRowKeys.begin(), kRowKeys.end(), name) == kRowKeys.end())
            throw InputError(at(file, key.Mark()), "unknown key '" + name + "'", "allowed keys: " + join(kRowKeys));
        if (!seen.insert(name).second)
            throw InputError(at(file, key.Mark()), "key '" + name + "' is given twice", "keep one of them");
        if (name == "name") m.name = read_scalar(file, key, value);
        else if (name == "vendor") m.vendor = read_scalar(file, key, value);
        else if (name == "family") m.family = read_family(file, key, value);
        else if (name == "models") m.models = read_models(file, key, value);
        else if (name == "fma256_per_cycle") m.fma256 = read_fma(file, key, value, false);
        else if (name == "fma512_per_cycle") m.fma512 = read_fma(file, key, value, true);
        else if (name == "why") m.why = read_scalar(file, key, value);
        else if (name == "source") m.source = read_scalar(file, key, value);
    }
    for (const auto& required : kRequiredKeys)
        if (!seen.count(required))
            throw InputError(m.where, "missing required key '" + required + "'" + (m.name.empty() ? "" : " in " + m.name),
                             "every row needs " + join(kRequiredKeys) + " (see the file's header)");
    if ((m.fma256.kind == FmaPerCycle::Kind::unknown || m.fma512.kind == FmaPerCycle::Kind::unknown) && m.why.empty())
        throw InputError(m.where, m.name + " marks a path unknown without saying why",
                         "add why: \"...\" (it is shown where the peak would have been)");
    return m;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path.string(), "cannot read the CPU microarchitecture table",
                         "check that configs/cpu_microarchitectures.yaml exists (or that LAB_CONFIG_DIR points at a "
                         "folder holding it)");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::optional<int> parse_decimal(const std::string& text) {
    int v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, error] = std::from_chars(text.data(), end, v, 10);
    if (text.empty() || error != std::errc() || ptr != end || v < 0) return std::nullopt;
    return v;
}

std::string extra(const DeviceFacts& f, const std::string& key) {
    auto it = f.extra.find(key);
    return it == f.extra.end() ? std::string() : it->second;
}

// Physical cores whose FMA units a team of `threads` threads can use. Two SMT threads of one core
// share that core's FMA units, so the peak counts cores, not threads. facts.compute_units counts
// the distinct cores among the facts.threads logical CPUs the device runs on (the CPU backend
// pins its team to exactly those, so normally threads == facts.threads and the answer is
// compute_units). A different team size is credited min(threads, compute_units): the most cores
// it could occupy, which keeps the figure an upper bound whichever CPUs the threads land on.
// Without topology (compute_units 0) each thread counts as a core, again an upper bound.
int cores_used(const DeviceFacts& f, int threads) {
    return f.compute_units > 0 ? std::min(threads, f.compute_units) : threads;
}

std::optional<CpuTheoreticalPeak> peak_or_why(const DeviceFacts& f, double clock_hz, int threads,
                                              std::string& why) {
    const bool avx512 = f.simd == "avx512";
    if (f.simd == "scalar") {
        why = "the scalar SIMD path is not a peak kernel, so it gets no theoretical figure";
        return std::nullopt;
    }
    if (!avx512 && f.simd != "avx2") {
        why = "SIMD path '" + f.simd + "' has no theoretical figure (only avx2 and avx512 do)";
        return std::nullopt;
    }
    std::string vendor = extra(f, "cpu_vendor_id");
    if (vendor.empty()) vendor = f.vendor;
    const auto family = parse_decimal(extra(f, "cpu_family"));
    const auto model = parse_decimal(extra(f, "cpu_model"));
    if (vendor.empty() || !family || !model) {
        why = "the device facts carry no cpuid vendor, family and model (extra.cpu_vendor_id, cpu_family, "
              "cpu_model), so the microarchitecture is unknown";
        return std::nullopt;
    }
    if (!std::isfinite(clock_hz) || clock_hz <= 0) {
        why = "no measured core clock to scale FLOP/cycle by";
        return std::nullopt;
    }
    if (threads < 1) {
        why = "no threads: the team size must be at least 1";
        return std::nullopt;
    }
    const fs::path file = paths::config_dir() / kTableName;
    std::vector<CpuMicroarchitecture> table;
    try {
        table = load_cpu_microarchitectures(file);
    } catch (const std::exception& e) {
        why = std::string("the CPU microarchitecture table cannot be used: ") + e.what();
        return std::nullopt;
    }
    const std::string cpu = fmt::format("{} family {} model {} (cpuid 0x{:X}/0x{:X})", vendor, *family, *model,
                                        *family, *model);
    const CpuMicroarchitecture* m = find_cpu_microarchitecture(table, vendor, *family, *model);
    if (!m) {
        why = cpu + " is not in " + file.string();
        return std::nullopt;
    }
    const FmaPerCycle& fma = avx512 ? m->fma512 : m->fma256;
    if (fma.kind == FmaPerCycle::Kind::unsupported) {
        why = m->name + " (" + cpu + ") has no AVX-512 according to " + file.string() +
              ", yet lab runs its avx512 path: one of them is wrong";
        return std::nullopt;
    }
    if (fma.kind == FmaPerCycle::Kind::unknown) {
        why = m->name + ": FMA throughput of the " + f.simd + " path unknown: " + m->why;
        return std::nullopt;
    }
    const int lanes32 = avx512 ? 16 : 8;
    const double flop_per_cycle = fma.value * lanes32 * 2.0;
    const int cores = cores_used(f, threads);
    CpuTheoreticalPeak p;
    p.fp32_flops_per_s = flop_per_cycle * clock_hz * cores;
    p.fp64_flops_per_s = p.fp32_flops_per_s / 2;
    p.microarchitecture = m->name;
    p.source = m->source;
    const std::string smt = threads > cores ? fmt::format(" ({} threads; SMT threads share a core's FMA units)", threads)
                                            : std::string();
    p.basis = fmt::format(
        "{}: {:g} FP32 FLOP/cycle/core on the {} path ({:g} x {}-bit FMA per cycle x {} lanes x 2 FLOP) x measured "
        "clock {:.3g} GHz x {} core{}{}; FP64 is half. An upper bound at that clock: the FMA peak was measured at "
        "another moment, and a core's clock moves a few percent (turbo) from one to the next; wide-vector code may "
        "also run below it. Table: {}",
        m->name, flop_per_cycle, f.simd, fma.value, avx512 ? 512 : 256, lanes32, clock_hz / 1e9, cores,
        cores == 1 ? "" : "s", smt, kTableName);
    return p;
}

nlohmann::json cpu_theoretical(const DeviceFacts& f, const Ceilings& c) {
    const int threads = f.threads > 0 ? f.threads : c.threads;
    std::string why;
    auto peak = cpu_theoretical_peak(f, c.clock_hz.value, threads, &why);
    if (!peak)
        return {{"kind", "none"},
                {"note", "no theoretical peak: " + why + ". The measured ceilings are all there is."}};
    nlohmann::json spec;
    spec["kind"] = "theoretical";
    spec["name"] = f.name;
    spec["basis"] = peak->basis + "; sources: " + peak->source + ". Not a datasheet figure.";
    spec["flops_per_s"] = {{"fp32.simt", peak->fp32_flops_per_s}, {"fp64.simt", peak->fp64_flops_per_s}};
    spec["bandwidth_bytes_per_s"] = nullptr;
    spec["bandwidth_note"] = "unknown: the memory configuration is not visible from here";
    return spec;
}

}  // namespace

std::vector<CpuMicroarchitecture> load_cpu_microarchitectures(const fs::path& file) {
    const std::string name = file.string();
    YAML::Node root;
    try {
        root = YAML::Load(read_text(file));
    } catch (const YAML::Exception& e) {
        throw InputError(at(name, e.mark), "malformed YAML: " + e.msg,
                         "fix the YAML syntax at that line (indentation, brackets, quotes)");
    }
    if (!root.IsMap() || !root["microarchitectures"])
        throw InputError(name + ":1", "the table must be a map with a microarchitectures: list",
                         "write microarchitectures: followed by - name: ... rows (see the file's header)");
    for (const auto& entry : root)
        if (!entry.first.IsScalar() || entry.first.Scalar() != "microarchitectures")
            throw InputError(at(name, entry.first.Mark()), "unknown top-level key " + describe(entry.first),
                             "the only top-level key is microarchitectures");
    const YAML::Node rows = root["microarchitectures"];
    if (!rows.IsSequence())
        throw InputError(at(name, rows.Mark()), "microarchitectures must be a list, got " + describe(rows),
                         "write - name: ... rows under it");
    std::vector<CpuMicroarchitecture> table;
    for (const auto& row : rows) {
        CpuMicroarchitecture m = read_row(name, row);
        // One model, one row: a CPU matching two rows would get whichever came first.
        for (const auto& other : table) {
            if (other.vendor != m.vendor || other.family != m.family) continue;
            for (const auto& [lo, hi] : m.models)
                for (const auto& [olo, ohi] : other.models)
                    if (lo <= ohi && olo <= hi)
                        throw InputError(m.where,
                                         m.name + " and " + other.name + " (" + other.where + ") both claim " +
                                             m.vendor + " family " + hex(m.family) + " model " +
                                             hex(std::max(lo, olo)),
                                         "give each model to one row");
        }
        table.push_back(std::move(m));
    }
    return table;
}

const CpuMicroarchitecture* find_cpu_microarchitecture(const std::vector<CpuMicroarchitecture>& table,
                                                      const std::string& vendor, int family, int model) {
    for (const auto& m : table) {
        if (m.vendor != vendor || m.family != family) continue;
        for (const auto& [lo, hi] : m.models)
            if (model >= lo && model <= hi) return &m;
    }
    return nullptr;
}

std::optional<CpuTheoreticalPeak> cpu_theoretical_peak(const DeviceFacts& facts, double clock_hz, int threads,
                                                       std::string* why) {
    std::string reason;
    std::optional<CpuTheoreticalPeak> peak;
    try {
        peak = peak_or_why(facts, clock_hz, threads, reason);
    } catch (const std::exception& e) {  // e.g. bad_alloc, a filesystem error: still no crash
        reason = std::string("the theoretical peak could not be computed: ") + e.what();
        peak.reset();
    }
    if (why) *why = peak ? std::string() : reason;
    return peak;
}

nlohmann::json device_spec_json(DeviceKind kind, const DeviceFacts& facts, const Ceilings& ceilings) {
    if (kind == DeviceKind::cpu) return cpu_theoretical(facts, ceilings);
    auto specs = load_device_specs(paths::config_dir() / "devices");
    if (auto s = match_device_spec(specs, facts.name, facts.memory_bytes)) {
        auto j = to_json(*s);
        j["kind"] = "datasheet";
        return j;
    }
    return {{"kind", "none"},
            {"note", "no datasheet in configs/devices matches '" + facts.name +
                         "': the measured ceilings are all there is"}};
}

}  // namespace lab
