// The ceilings cache (see ceilings_cache.hpp).
#include "ceilings_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "atomic_file.hpp"
#include "ceiling_trust.hpp"
#include "device_summary.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "json_input.hpp"
#include "lab/lesson.hpp"
#include "paths.hpp"
#include "run_record.hpp"

namespace lab {

namespace {
constexpr const char* kCacheSchema = "lab.ceilings/1";

// The cache is lab's own file, but it sits in the user's home where anything may have written
// it: read within limits (a real one is a few KB, nested four levels), and any problem with it
// is a reason to measure again.
constexpr int kCacheDepth = 16;
const JsonLimits kCacheLimits{.max_bytes = 1u << 20, .max_depth = kCacheDepth};
nlohmann::json read_cache_json(const std::filesystem::path& file) {
    return load_json_input(file, "the ceilings cache", kCacheLimits, "", "");  // problems are reported as "ignored; measuring again"
}

// The device identity a cache entry belongs to: name, SIMD variant, caches and memory. A new
// CPU model, a changed VM size or a different kernel variant measures again.
std::string identity(const DeviceFacts& f) {
    auto j = record::to_json(f);
    j.erase("extra");  // holds volatile readings (cpuinfo's MHz)
    return j.dump();
}

// "bandwidth.best" as the cache holds it: the best of the bandwidth kernels. A run may raise its
// own best to a workload's rate (evidence the kernels are stale), but that evidence is the run's:
// a cached best above every kernel would start later runs with a ceiling their records cannot
// justify, and the grader refuses such a record. So the cache keeps the kernels' best, on the way
// in (store) and on the way out (load: caches written before this rule are healed).
Ceilings with_kernel_best(Ceilings c) {
    set_best_bandwidth(c);
    return c;
}

// Bounds no device comes near, for a cache no configs describe (a CPU missing from
// configs/cpu_microarchitectures.yaml, a GPU without a datasheet): 100 PFLOP/s is ten times the
// densest tensor-core figure shipped (B200, FP4), 1 PB/s thirty times the aggregate L1 bandwidth
// of an H100. A value above them is a damaged or hand-edited file, not a fast machine.
constexpr double kMaxPlausibleFlops = 1e17, kMaxPlausibleBandwidth = 1e15;

// Why a cached ceiling is beyond belief ("" when it is not): above the physical bound, or above
// the device on paper by more than the grader allows (device_summary.hpp's slacks: the grader
// would refuse every record a run started with it).
std::string implausible(const char* table, const std::string& key, double value, const nlohmann::json& paper) {
    const bool flops = std::string(table) == "flops_per_s";
    const std::string unit = flops ? "FLOP/s" : "B/s";
    auto said = [&](const std::string& why) {
        return std::string("the ") + table + " ceiling '" + key + "' is " + format::quantity(value, unit) + ", " + why;
    };
    if (value > (flops ? kMaxPlausibleFlops : kMaxPlausibleBandwidth))
        return said("above what any device does (" + format::quantity(flops ? kMaxPlausibleFlops : kMaxPlausibleBandwidth, unit) + ")");
    const std::string kind = paper.value("kind", "none");
    if (kind == "none") return "";
    const std::string whose = kind == "datasheet" ? "the datasheet's " : "the theoretical peak's ";
    if (flops) {
        const auto& f = paper.value("flops_per_s", nlohmann::json::object());
        const double slack = kind == "datasheet" ? kPaperSlack : kMeasuredClockSlack;
        if (f.contains(key) && f[key].is_number() && f[key].get<double>() > 0 && value > slack * f[key].get<double>())
            return said("above " + whose + format::quantity(f[key].get<double>(), unit) + " by more than " +
                        fmt::format("{:.0f}%", (slack - 1) * 100));
    } else if ((key == "best" || is_bandwidth_roof_kernel(key)) && paper.contains("bandwidth_bytes_per_s") &&
               paper["bandwidth_bytes_per_s"].is_number() && paper["bandwidth_bytes_per_s"].get<double>() > 0) {
        // Only the DRAM roof kernels: a cache-level kernel may beat the DRAM datasheet honestly.
        const double bw = paper["bandwidth_bytes_per_s"].get<double>();
        if (value > kPaperSlack * bw)
            return said("above " + whose + "DRAM bandwidth " + format::quantity(bw, unit) + " by more than " +
                        fmt::format("{:.0f}%", (kPaperSlack - 1) * 100));
    }
    return "";
}

// The ceilings of a parsed cache file, refused (std::runtime_error saying why) unless sound.
Ceilings checked_ceilings(const nlohmann::json& j, DeviceKind kind, const DeviceFacts& facts) {
    if (j.value("schema", "") != kCacheSchema) throw std::runtime_error("unknown schema");
    // Every ceiling a run divides by must be a positive number: a hand-edited or damaged
    // value would silently zero a roof.
    const auto& c = j.at("ceilings");
    for (const char* table : {"flops_per_s", "bandwidth_bytes_per_s"})
        for (const auto& [k, v] : c.at(table).items())
            if (!v.at("value").is_number() || !(v.at("value").get<double>() > 0))
                throw std::runtime_error(std::string("the ") + table + " ceiling '" + k + "' is not a positive number");
    if (c.at("flops_per_s").empty() || c.at("bandwidth_bytes_per_s").empty())
        throw std::runtime_error("it holds no FLOP/s or no bandwidth ceiling");
    Ceilings ceilings = record::ceilings_from_json(c);
    // Nor may one be beyond belief: a damaged value would lift every roof (every workload read as
    // a small fraction of it) and be written into every run's record.
    nlohmann::json paper = {{"kind", "none"}};
    try {
        paper = device_spec_json(kind, facts, ceilings);
    } catch (const std::exception&) {
        // A broken configs/devices file is `lab device`'s to report; the physical bound still holds.
    }
    for (const char* table : {"flops_per_s", "bandwidth_bytes_per_s"})
        for (const auto& [k, v] : c.at(table).items())
            if (auto why = implausible(table, k, v.at("value").get<double>(), paper); !why.empty()) throw std::runtime_error(why);
    return with_kernel_best(std::move(ceilings));
}

std::string trimmed(std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
}

// Why the cache folder of `file` is not this user's to trust or write ("" when it is): the folder,
// or lab/ above it in the cache's own layout, owned by another user. Without HOME the cache sits
// in the shared temporary folder, where anyone may create the folders first and plant ceilings
// (or links) in them.
std::string foreign_folder(const std::filesystem::path& file) {
    struct stat st {};
    std::vector<std::filesystem::path> folders = {file.parent_path()};
    if (file.parent_path().parent_path() == paths::cache_dir()) folders.push_back(paths::cache_dir());
    for (const auto& p : folders)
        if (!p.empty() && ::stat(p.c_str(), &st) == 0 && st.st_uid != ::geteuid())
            return fmt::format("the folder {} belongs to another user (uid {})", p.string(), st.st_uid);
    return "";
}

// foreign_folder, or the file itself (or a link there) another user's.
std::string foreign_owner(const std::filesystem::path& file) {
    if (std::string why = foreign_folder(file); !why.empty()) return why;
    struct stat st {};
    if ((::lstat(file.c_str(), &st) == 0 && st.st_uid != ::geteuid()) || (::stat(file.c_str(), &st) == 0 && st.st_uid != ::geteuid()))
        return fmt::format("it belongs to another user (uid {})", st.st_uid);
    return "";
}

// Device names this machine has: its CPU model name, and the GPU models the NVIDIA driver lists.
std::set<std::string> devices_here() {
    std::set<std::string> names;
    auto field = [](const std::filesystem::path& file, const std::string& key) {
        std::ifstream f(file);
        std::string line;
        while (std::getline(f, line)) {
            auto colon = line.find(':');
            if (colon != std::string::npos && trimmed(line.substr(0, colon)) == key) return trimmed(line.substr(colon + 1));
        }
        return std::string();
    };
    if (auto cpu = field("/proc/cpuinfo", "model name"); !cpu.empty()) names.insert(cpu);
    std::error_code ec;
    for (const auto& gpu : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec))
        if (auto model = field(gpu.path() / "information", "Model"); !model.empty()) names.insert(model);
    return names;
}
}  // namespace

std::filesystem::path ceilings_cache_file(DeviceKind kind, const DeviceFacts& f, int threads, bool quick) {
    std::string slug;
    for (char c : f.name) slug += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    while (slug.find("--") != std::string::npos) slug.replace(slug.find("--"), 2, "-");
    std::string id = sha256_hex(identity(f)).substr(0, 12);
    return paths::cache_dir() / "ceilings" /
           (std::string(to_string(kind)) + "-" + slug + "-" + id + "-t" + std::to_string(threads) + (quick ? "-quick" : "") + ".json");
}

std::optional<Ceilings> load_cached_ceilings(const std::filesystem::path& file, const DeviceFacts& facts,
                                             std::string* problem, DeviceKind kind) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return std::nullopt;
    try {
        if (const std::string why = foreign_owner(file); !why.empty()) throw std::runtime_error(why);
        auto j = read_cache_json(file);
        if (j.value("schema", "") != kCacheSchema) throw std::runtime_error("unknown schema");
        if (j.at("device_identity").get<std::string>() != identity(facts))
            throw std::runtime_error("it belongs to another device");
        return checked_ceilings(j, kind, facts);
    } catch (const std::exception& e) {
        if (problem) *problem = file.string() + " ignored (" + e.what() + "); measuring again";
        return std::nullopt;
    }
}

std::optional<CachedCeilings> find_cached_ceilings_here(const std::filesystem::path& dir) {
    const std::set<std::string> here = devices_here();
    std::optional<CachedCeilings> best;
    // Preference order: GPU, full calibration, threads, newest (measured_at of the bandwidth).
    auto rank = [](const CachedCeilings& c) {
        auto bw = c.ceilings.bandwidth_bytes_per_s.find("best");
        const std::string when = bw == c.ceilings.bandwidth_bytes_per_s.end() ? "" : bw->second.measured_at;
        return std::make_tuple(c.kind == DeviceKind::cuda, !c.quick, c.ceilings.threads, when);
    };
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const std::string stem = entry.path().stem().string();
        if (entry.path().extension() != ".json" || !foreign_owner(entry.path()).empty()) continue;
        CachedCeilings c;
        if (stem.rfind("cuda-", 0) == 0) c.kind = DeviceKind::cuda;
        else if (stem.rfind("cpu-", 0) != 0) continue;
        try {
            const auto j = read_cache_json(entry.path());
            const auto facts = parse_json_input(j.at("device_identity").get<std::string>(), entry.path(), "the device identity",
                                                kCacheLimits, "");
            c.device_name = facts.at("name").get<std::string>();
            c.memory_bytes = facts.value("memory_bytes", std::uint64_t{0});
            if (!here.count(c.device_name)) continue;
            c.ceilings = checked_ceilings(j, c.kind, record::facts_from_json(facts));
        } catch (const std::exception&) {
            continue;  // unsound entries are `lab run`'s to report and replace
        }
        c.file = entry.path();
        c.quick = c.ceilings.quick;
        if (!best || rank(c) > rank(*best)) best = std::move(c);
    }
    return best;
}

CacheUpdate ceilings_for_cache(const Ceilings& start, const Ceilings& run_end, const std::string& lesson_id, const std::string& at) {
    CacheUpdate out;
    out.ceilings = run_end;
    auto rewrite = [&](std::string& text, const std::string& from, const std::string& to) {
        if (auto p = text.find(from); p != std::string::npos) text.replace(p, from.size(), to);
    };
    for (const char* table_name : {"flops.", "bandwidth."}) {
        const bool flops = std::string(table_name) == "flops.";
        auto& table = flops ? out.ceilings.flops_per_s : out.ceilings.bandwidth_bytes_per_s;
        const auto& before = flops ? start.flops_per_s : start.bandwidth_bytes_per_s;
        for (auto it = table.begin(); it != table.end();) {
            auto& [key, c] = *it;
            const bool remeasured = c.source.rfind("re-measured in this run", 0) == 0, raised = c.source.rfind(kRaisedSourcePrefix, 0) == 0;
            const std::string name = table_name + key;
            // "best" follows the kernels kept (set below); a workload's rate that raised it is
            // this run's evidence, said as the others are.
            if (key == "best" && raised)
                out.left_out.push_back(fmt::format("{} {} (it is a workload's own rate, this run's evidence only)", name, format::quantity(c.value, c.unit)));
            if (key == "best" || (!remeasured && !raised)) {
                ++it;
                continue;
            }
            // A raise the cache would keep for every later run, of every lesson: only a kernel's
            // re-measure that met its noise target on a quiet machine. A burst on a noisy
            // neighbour's VM, or a lesson's miscounted FLOPs (a workload's own rate), would
            // otherwise ratchet the ceiling up for good and every later roof fraction read low.
            std::string why = raised ? "it is a workload's own rate, this run's evidence only" : distrust_reason(c);
            if (!why.empty()) {
                out.left_out.push_back(fmt::format("{} {} ({})", name, format::quantity(c.value, c.unit), why));
                if (auto was = before.find(key); was != before.end()) {
                    c = was->second;
                    ++it;
                } else {
                    it = table.erase(it);
                }
                continue;
            }
            rewrite(c.source, "in this run", "in a run of lesson " + lesson_id);
            rewrite(c.method, "in this run", "in a run of lesson " + lesson_id);
            c.measured_at = at;
            c.trusted = true;
            out.kept.push_back(fmt::format("{} {}", name, format::quantity(c.value, c.unit)));
            ++it;
        }
    }
    // The roof is "best": the best of the kernels kept, never a raise just left out.
    set_best_bandwidth(out.ceilings);
    return out;
}

void store_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& c) {
    nlohmann::json j = {{"schema", kCacheSchema},
                        {"device_identity", identity(facts)},
                        {"ceilings", record::to_json(with_kernel_best(c))}};
    write_file_atomically(file, j.dump(2) + "\n");
}

std::string cache_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& c) {
    // Another user's file in this user's folder is replaced (renamed over); their folder is not used.
    std::string why = foreign_folder(file);
    if (why.empty()) {
        try {
            store_ceilings(file, facts, c);
            return "";
        } catch (const InputError& e) {
            why = e.what();
            why = why.substr(0, why.find('\n'));  // its fix line ("choose another path") names no way to choose one
        }
    }
    return "the ceilings were not cached (" + why + "); the next run measures them again\n"
           "  fix: set XDG_CACHE_HOME to a folder you can write (the cache goes to $XDG_CACHE_HOME/lab/ceilings)";
}

}  // namespace lab
