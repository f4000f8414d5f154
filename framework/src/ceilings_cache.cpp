// The ceilings cache (see ceilings_cache.hpp).
#include "ceilings_cache.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "atomic_file.hpp"
#include "digest.hpp"
#include "paths.hpp"
#include "run_record.hpp"

namespace lab {

namespace {
constexpr const char* kCacheSchema = "lab.ceilings/1";

// The device identity a cache entry belongs to: name, SIMD variant, caches and memory. A new
// CPU model, a changed VM size or a different kernel variant measures again.
std::string identity(const DeviceFacts& f) {
    auto j = record::to_json(f);
    j.erase("extra");  // holds volatile readings (cpuinfo's MHz)
    return j.dump();
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
                                             std::string* problem) {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    try {
        std::stringstream ss;
        ss << in.rdbuf();
        auto j = nlohmann::json::parse(ss.str());
        if (j.value("schema", "") != kCacheSchema) throw std::runtime_error("unknown schema");
        if (j.at("device_identity").get<std::string>() != identity(facts))
            throw std::runtime_error("it belongs to another device");
        // Every ceiling a run divides by must be a positive number: a hand-edited or damaged
        // value would silently zero a roof.
        const auto& c = j.at("ceilings");
        for (const char* table : {"flops_per_s", "bandwidth_bytes_per_s"})
            for (const auto& [k, v] : c.at(table).items())
                if (!v.at("value").is_number() || !(v.at("value").get<double>() > 0))
                    throw std::runtime_error(std::string("the ") + table + " ceiling '" + k + "' is not a positive number");
        if (c.at("flops_per_s").empty() || c.at("bandwidth_bytes_per_s").empty())
            throw std::runtime_error("it holds no FLOP/s or no bandwidth ceiling");
        return record::ceilings_from_json(c);
    } catch (const std::exception& e) {
        if (problem) *problem = file.string() + " ignored (" + e.what() + "); measuring again";
        return std::nullopt;
    }
}

void store_ceilings(const std::filesystem::path& file, const DeviceFacts& facts, const Ceilings& c) {
    nlohmann::json j = {{"schema", kCacheSchema},
                        {"device_identity", identity(facts)},
                        {"ceilings", record::to_json(c)}};
    write_file_atomically(file, j.dump(2) + "\n");
}

}  // namespace lab
