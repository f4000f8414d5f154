// Reads the datasheet specs in configs/devices/*.yaml and picks the one that describes a device.
// The files are hand-written, so every check here ends in a lab::InputError that points at the
// file and 1-based line and says how to fix it: a spec that silently loads wrong numbers would
// show students a wrong datasheet peak beside their measurement.
#include "device_specs.hpp"
#include "suggest.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "errors.hpp"

namespace lab {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kAllowedKeys = {
    "name", "match", "memory_bytes", "sms", "flops_per_s",
    "bandwidth_bytes_per_s", "l2_bytes", "source", "notes"};

// Dtypes the rest of lab keys ceilings by; a typo such as "bf61.tensor" would otherwise load
// and never be shown beside anything.
const std::vector<std::string> kDtypes = {"fp64", "fp32", "tf32", "fp16", "bf16",
                                          "fp8",  "fp6",  "fp4",  "int8", "int4"};
const std::vector<std::string> kPipes = {"simt", "tensor"};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

// Where errors in one file point. yaml-cpp counts lines from 0; editors and people count from 1.
struct SpecFile {
    std::string path;

    std::string at(const YAML::Mark& mark) const {
        if (mark.is_null() || mark.line < 0) return path;
        return path + ":" + std::to_string(mark.line + 1);
    }

    // The line of a key's value. yaml-cpp marks an empty value ("key:") on the line after the
    // key, and a block list or map on its first item; the key's own line is the clearer place
    // for a value that is missing or of the wrong kind.
    std::string at_value(const YAML::Node& key, const YAML::Node& value) const {
        if (value.IsDefined() && value.IsScalar() && !value.Mark().is_null())
            return at(value.Mark());
        return at(key.Mark());
    }
};

std::string describe(const YAML::Node& node) {
    if (node.IsNull()) return "nothing";
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a map";
    return "'" + node.Scalar() + "'";
}

std::string read_string(const SpecFile& file, const YAML::Node& key, const YAML::Node& value) {
    if (!value.IsScalar())
        throw InputError(file.at_value(key, value),
                         key.Scalar() + " must be a string, got " + describe(value),
                         "write " + key.Scalar() + ": \"...\"");
    return value.Scalar();
}

std::vector<std::string> read_strings(const SpecFile& file, const YAML::Node& key,
                                      const YAML::Node& value) {
    if (!value.IsSequence())
        throw InputError(file.at_value(key, value),
                         key.Scalar() + " must be a list of strings, got " + describe(value),
                         "write " + key.Scalar() + ": [\"...\", \"...\"]");
    std::vector<std::string> out;
    for (const auto& item : value) {
        if (!item.IsScalar())
            throw InputError(
                file.at(item.Mark().is_null() ? key.Mark() : item.Mark()),
                "each item of " + key.Scalar() + " must be a string, got " + describe(item),
                "quote the item: \"...\"");
        out.push_back(item.Scalar());
    }
    return out;
}

// A figure: a plain, finite, non-negative number in SI units. Unit strings ("3.35 TB/s") are
// refused rather than guessed at, so every file means the same thing by a number.
double read_figure(const SpecFile& file, const std::string& what, const YAML::Node& key,
                   const YAML::Node& value, const std::string& unit) {
    double figure = 0;
    if (!value.IsScalar() || !YAML::convert<double>::decode(value, figure))
        throw InputError(file.at_value(key, value),
                         what + " must be a number (" + unit + "), got " + describe(value),
                         "write a plain number in SI units, e.g. 3.35e12, without a unit");
    if (!std::isfinite(figure))
        throw InputError(file.at_value(key, value),
                         what + " must be finite, got " + describe(value),
                         "write the datasheet figure, or leave the key out if it is unknown");
    if (figure < 0)
        throw InputError(file.at_value(key, value),
                         what + " must not be negative, got " + describe(value),
                         "write the datasheet figure as a positive number in " + unit);
    return figure;
}

// A peak (FLOP/s, bytes/s): a figure that is more than 0. A peak of 0 would divide every bound
// computed from it into infinity ("decode step lower bound inf s"); an unknown one is left out.
double read_peak(const SpecFile& file, const std::string& what, const YAML::Node& key,
                 const YAML::Node& value, const std::string& unit) {
    const double figure = read_figure(file, what, key, value, unit);
    if (figure == 0)
        throw InputError(file.at_value(key, value), what + " must be more than 0, got " + describe(value),
                         "write the datasheet figure as a positive number in " + unit + ", or leave the key out if it is unknown");
    return figure;
}

// A size or count. Plain digits are read exactly (a double loses bytes above 2^53); other
// spellings such as 141e9 are accepted when they name a whole number.
std::uint64_t read_count(const SpecFile& file, const std::string& what, const YAML::Node& key,
                         const YAML::Node& value, const std::string& unit) {
    if (value.IsScalar()) {
        const std::string& text = value.Scalar();
        std::uint64_t count = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
        if (error == std::errc() && end == text.data() + text.size()) return count;
    }
    const double figure = read_figure(file, what, key, value, unit);
    if (figure != std::floor(figure) || figure >= 18446744073709551616.0)
        throw InputError(file.at_value(key, value),
                         what + " must be a whole number of " + unit + ", got " + describe(value),
                         "write a whole number of " + unit + " in plain digits");
    return static_cast<std::uint64_t>(figure);
}

std::map<std::string, double> read_flops(const SpecFile& file, const YAML::Node& key,
                                         const YAML::Node& value) {
    if (!value.IsMap())
        throw InputError(
            file.at_value(key, value),
            "flops_per_s must be a map of \"<dtype>.<pipe>\" to FLOP/s, got " + describe(value),
            "write e.g. flops_per_s: {fp32.simt: 66.9e12, bf16.tensor: 989.4e12}");
    std::map<std::string, double> out;
    for (const auto& entry : value) {
        const YAML::Node& name = entry.first;
        const std::string where = file.at(name.Mark());
        if (!name.IsScalar())
            throw InputError(where,
                             "a flops_per_s key must be \"<dtype>.<pipe>\", got " + describe(name),
                             "write e.g. fp32.simt");
        const std::string text = name.Scalar();
        const std::string shape_fix = "write \"<dtype>.<pipe>\" with pipe one of " + join(kPipes) +
                                      ", e.g. fp32.simt or bf16.tensor";
        const auto dot = text.find('.');
        if (dot == std::string::npos || text.find('.', dot + 1) != std::string::npos)
            throw InputError(where,
                             "flops_per_s key '" + text + "' is not shaped \"<dtype>.<pipe>\"",
                             shape_fix);
        const std::string dtype = text.substr(0, dot);
        const std::string pipe = text.substr(dot + 1);
        if (std::find(kPipes.begin(), kPipes.end(), pipe) == kPipes.end())
            throw InputError(where,
                             "flops_per_s key '" + text + "' has pipe '" + pipe +
                                 "'; the pipe must be simt or tensor",
                             shape_fix);
        if (std::find(kDtypes.begin(), kDtypes.end(), dtype) == kDtypes.end())
            throw InputError(where,
                             "flops_per_s key '" + text + "' has unknown dtype '" + dtype + "'",
                             "use one of " + join(kDtypes) + " (lower case)");
        if (out.count(text))
            throw InputError(where, "flops_per_s key '" + text + "' is given twice",
                             "keep one figure per dtype and pipe");
        out[text] = read_peak(file, "flops_per_s." + text, name, entry.second, "FLOP/s");
    }
    return out;
}

std::vector<std::string> read_patterns(const SpecFile& file, const YAML::Node& key,
                                       const YAML::Node& value) {
    std::vector<std::string> patterns = read_strings(file, key, value);
    if (patterns.empty())
        throw InputError(
            file.at(key.Mark()), "match is empty, so no device would ever match",
            "add a pattern for the device name as CUDA reports it, e.g. ['\\bh200\\b']");
    // Compiled here, where a bad pattern can still be pinned to its line, rather than at match
    // time, when the file is long forgotten.
    std::size_t index = 0;
    for (const auto& item : value) {
        const std::string& pattern = patterns[index++];
        try {
            std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
        } catch (const std::regex_error& e) {
            throw InputError(
                file.at(item.Mark().is_null() ? key.Mark() : item.Mark()),
                "match pattern '" + pattern + "' is not a valid regex (" + e.what() + ")",
                "write an ECMAScript regex; put it in single quotes so YAML keeps "
                "backslashes, e.g. '\\bh100\\b'");
        }
    }
    return patterns;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path.string(), "cannot read the device spec file",
                         "check that the file exists and is readable");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

DeviceSpec load_one(const fs::path& path) {
    const SpecFile file{path.string()};
    YAML::Node root;
    try {
        root = YAML::Load(read_text(path));
    } catch (const YAML::Exception& e) {
        throw InputError(file.at(e.mark), "malformed YAML: " + e.msg,
                         "fix the YAML syntax at that line (indentation, brackets, quotes)");
    }
    if (!root.IsDefined() || root.IsNull())
        throw InputError(file.path + ":1", "the device spec file is empty",
                         "write at least name: and match: (see configs/devices/README.md)");
    if (!root.IsMap())
        throw InputError(file.at(root.Mark()),
                         "a device spec must be a map of keys, got " + describe(root),
                         "write key: value lines (see configs/devices/README.md)");

    DeviceSpec spec;
    spec.id = path.stem().string();
    spec.file = file.path;
    std::set<std::string> seen;
    for (const auto& entry : root) {
        const YAML::Node& key = entry.first;
        const YAML::Node& value = entry.second;
        const std::string where = file.at(key.Mark());
        const std::string name = key.IsScalar() ? key.Scalar() : describe(key);
        if (std::find(kAllowedKeys.begin(), kAllowedKeys.end(), name) == kAllowedKeys.end()) {
            std::string fix = "allowed keys: " + join(kAllowedKeys);
            if (const std::string nearest = did_you_mean(name, kAllowedKeys); !nearest.empty())
                fix = "did you mean '" + nearest + "'? " + fix;
            throw InputError(where, "unknown key '" + name + "'", fix);
        }
        // yaml-cpp keeps both copies of a repeated key and lookups see only one; refuse it so the
        // file cannot say two things.
        if (!seen.insert(name).second)
            throw InputError(where, "key '" + name + "' is given twice", "keep one of them");

        if (name == "name") {
            spec.name = read_string(file, key, value);
            if (spec.name.empty())
                throw InputError(file.at_value(key, value), "name is empty",
                                 "write the device's marketing name, e.g. \"NVIDIA H200 SXM\"");
        } else if (name == "match") {
            spec.match = read_patterns(file, key, value);
        } else if (name == "memory_bytes") {
            spec.memory_bytes = read_count(file, name, key, value, "bytes");
        } else if (name == "sms") {
            const std::uint64_t sms = read_count(file, name, key, value, "SMs");
            if (sms > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
                throw InputError(file.at_value(key, value), "sms is too large: " + describe(value),
                                 "write the number of streaming multiprocessors, e.g. 132");
            spec.sms = static_cast<int>(sms);
        } else if (name == "flops_per_s") {
            spec.flops_per_s = read_flops(file, key, value);
        } else if (name == "bandwidth_bytes_per_s") {
            spec.bandwidth_bytes_per_s = read_peak(file, name, key, value, "bytes/s");
        } else if (name == "l2_bytes") {
            spec.l2_bytes = read_count(file, name, key, value, "bytes");
        } else if (name == "source") {
            spec.source = read_string(file, key, value);
        } else if (name == "notes") {
            spec.notes = read_strings(file, key, value);
        }
    }

    for (const char* required : {"name", "match"}) {
        if (!seen.count(required))
            throw InputError(
                file.at(root.Mark()), std::string("missing required key '") + required + "'",
                std::string("add ") + required +
                    (std::string(required) == "name" ? ": \"NVIDIA ...\""
                                                     : ": ['pattern on the CUDA device name']"));
    }
    return spec;
}

bool memory_matches(std::uint64_t spec_bytes, std::uint64_t device_bytes) {
    if (spec_bytes == 0) return true;
    const double difference =
        std::fabs(static_cast<double>(device_bytes) - static_cast<double>(spec_bytes));
    return difference <= 0.1 * static_cast<double>(spec_bytes);
}

bool name_matches(const DeviceSpec& spec, const std::string& device_name) {
    for (const auto& pattern : spec.match) {
        std::regex re;
        try {
            re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
        } catch (const std::regex_error& e) {
            // Only a spec built in code gets here; loaded ones were checked line by line.
            throw InputError(
                spec.file.empty() ? spec.id : spec.file,
                "match pattern '" + pattern + "' is not a valid regex (" + e.what() + ")",
                "write an ECMAScript regex");
        }
        if (std::regex_search(device_name, re)) return true;
    }
    return false;
}

}  // namespace

std::vector<DeviceSpec> load_device_specs(const std::filesystem::path& dir) {
    std::error_code error;
    if (!fs::is_directory(dir, error))
        throw InputError(dir.string(), "the device spec folder does not exist",
                         "point at configs/devices (or the installed share/lab/configs/devices)");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() == ".yaml" && entry.is_regular_file())
            files.push_back(entry.path());
    }
    // Sorted so that "first match by file name" means the same on every file system.
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    std::vector<DeviceSpec> specs;
    specs.reserve(files.size());
    for (const auto& path : files) specs.push_back(load_one(path));
    return specs;
}

// A device whose memory size is unknown (0) matches only specs that accept any size: guessing
// between the 40 GB and 80 GB A100 would show the wrong bandwidth, and REFERENCES.md asks for
// "no spec" over a wrong one.
std::optional<DeviceSpec> match_device_spec(const std::vector<DeviceSpec>& specs,
                                            const std::string& device_name,
                                            std::uint64_t memory_bytes) {
    const DeviceSpec* best = nullptr;
    for (const auto& spec : specs) {
        if (!memory_matches(spec.memory_bytes, memory_bytes) || !name_matches(spec, device_name))
            continue;
        // The list is normally sorted already; comparing file names keeps the rule when it is not.
        if (!best || fs::path(spec.file).filename() < fs::path(best->file).filename()) best = &spec;
    }
    if (!best) return std::nullopt;
    return *best;
}

nlohmann::json to_json(const DeviceSpec& spec) {
    nlohmann::json flops = nlohmann::json::object();
    for (const auto& [key, value] : spec.flops_per_s) flops[key] = value;
    return {
        {"id", spec.id},
        {"name", spec.name},
        {"file", spec.file},
        {"match", spec.match},
        {"memory_bytes", spec.memory_bytes},
        {"sms", spec.sms},
        {"flops_per_s", flops},
        {"bandwidth_bytes_per_s", spec.bandwidth_bytes_per_s},
        {"l2_bytes", spec.l2_bytes},
        {"source", spec.source},
        {"notes", spec.notes},
    };
}

}  // namespace lab
