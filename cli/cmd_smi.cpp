// `lab smi FILE`: what an nvidia-smi capture says (framework/src/smi_capture.hpp reads the
// default table, -q, --query-gpu CSV and dmon), as a table or with --json (the keys are a
// contract: docs/smi.md), and in words what it does and does not tell. Absent fields are null,
// never 0. A file that is no capture, or one cut short, exits 2 naming the line.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "smi_capture.hpp"
#include "suggest.hpp"

namespace lab::cli {

namespace {

using json = nlohmann::json;
const char* kUsage = "lab smi FILE [--columns LIST] [--json]";

template <class T> json value(const std::optional<T>& v) { return v ? json(*v) : json(nullptr); }

json to_json(const smi::Capture& c, const std::string& file) {
    json gpus = json::array();
    for (const auto& g : c.gpus) {
        json procs = json::array();
        for (const auto& p : g.processes) procs.push_back({{"pid", value(p.pid)}, {"name", p.name}, {"used_mib", value(p.used_mib)}});
        gpus.push_back({{"name", value(g.name)},
                        {"driver_version", value(g.driver_version)},
                        {"cuda_version", value(g.cuda_version)},
                        {"pstate", value(g.pstate)},
                        {"temperature_c", value(g.temperature_c)},
                        {"power_draw_w", value(g.power_draw_w)},
                        {"power_limit_w", value(g.power_limit_w)},
                        {"power_draw_average_w", value(g.power_draw_average_w)},
                        {"power_draw_instant_w", value(g.power_draw_instant_w)},
                        {"memory_used_mib", value(g.memory_used_mib)},
                        {"memory_total_mib", value(g.memory_total_mib)}, {"memory_reserved_mib", value(g.memory_reserved_mib)},
                        {"utilization_gpu_pct", value(g.utilization_gpu_pct)},
                        {"utilization_memory_pct", value(g.utilization_memory_pct)},
                        {"utilization_encoder_pct", value(g.utilization_encoder_pct)},
                        {"utilization_decoder_pct", value(g.utilization_decoder_pct)},
                        {"sm_clock_mhz", value(g.sm_clock_mhz)},
                        {"memory_clock_mhz", value(g.memory_clock_mhz)},
                        {"processes", g.processes_listed ? procs : json(nullptr)}});
    }
    json out = {{"file", file}, {"format", smi::to_string(c.format)}, {"gpus", gpus}, {"explanation", smi::explain(c)}};
    if (c.format == smi::Format::dmon) {
        json samples = json::array();
        for (const auto& s : c.samples) {
            json row = json::object();
            for (const auto& [k, v] : s.columns) row[k] = value(v);
            samples.push_back(row);
        }
        out["samples"] = samples;
        out["units"] = c.units;
        out["columns"] = c.columns;  // a JSON object's keys have no order; nvidia-smi's is here
        // dmon's GPUs apart (its lines interleave them): each one's sample count and means.
        json per_gpu = json::array();
        for (const auto& g : smi::dmon_gpus(c)) {
            json mean = json::object();
            for (const auto& [k, v] : g.means) mean[k] = value(v);
            per_gpu.push_back({{"gpu", value(g.index)}, {"samples", g.samples}, {"mean", mean}});
        }
        out["per_gpu"] = per_gpu;
    }
    return out;
}

std::string shown(const json& v, const char* unit) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    return fmt::format("{:g}{}", v.get<double>(), unit);
}

void print(std::ostream& o, const json& j) {
    o << "nvidia-smi capture " << j["file"].get<std::string>() << " (" << j["format"].get<std::string>() << ")\n";
    int i = 0;
    for (const auto& g : j["gpus"]) {
        o << "\nGPU " << i++ << "  " << shown(g["name"], "") << "   driver " << shown(g["driver_version"], "") << ", CUDA " << shown(g["cuda_version"], "") << "\n";
        o << fmt::format("  state {}   temperature {}   power {} of {}", shown(g["pstate"], ""), shown(g["temperature_c"], " C"),
                         shown(g["power_draw_w"], " W"), shown(g["power_limit_w"], " W"));
        if (!g["power_draw_instant_w"].is_null()) o << " (average; instantaneous " << shown(g["power_draw_instant_w"], " W") << ")";
        // The video engines only where the capture reads them (the table does not): beside
        // GPU-Util, which does not count their work.
        const bool engines = !g["utilization_encoder_pct"].is_null() || !g["utilization_decoder_pct"].is_null();
        o << fmt::format("\n  memory {} of {}   GPU-Util {}{}   memory util {}   SM clock {}   memory clock {}\n", shown(g["memory_used_mib"], " MiB"),
                         shown(g["memory_total_mib"], " MiB"), shown(g["utilization_gpu_pct"], "%"),
                         engines ? fmt::format("   encoder {}   decoder {}", shown(g["utilization_encoder_pct"], "%"), shown(g["utilization_decoder_pct"], "%"))
                                 : std::string(),
                         shown(g["utilization_memory_pct"], "%"), shown(g["sm_clock_mhz"], " MHz"), shown(g["memory_clock_mhz"], " MHz"));
        if (g["processes"].is_array())
            for (const auto& p : g["processes"]) o << "  process " << shown(p["pid"], "") << "  " << p["name"].get<std::string>() << "  " << shown(p["used_mib"], " MiB") << "\n";
    }
    if (j.contains("samples")) {
        o << "\n";
        // In the header's order, as nvidia-smi prints them (a sample's keys come out alphabetical).
        for (const auto& k : j["columns"]) o << fmt::format("{:>7}", k.get<std::string>());
        o << "\n";
        for (const auto& s : j["samples"]) {
            for (const auto& k : j["columns"]) {
                const auto& v = s.at(k.get<std::string>());
                o << fmt::format("{:>7}", v.is_null() ? "-" : fmt::format("{:g}", v.get<double>()));
            }
            o << "\n";
        }
        // Under the lines, each GPU's means (a line of its own per GPU, never pooled).
        o << "\nmean of each GPU's samples\n";
        for (const auto& k : j["columns"]) o << fmt::format("{:>7}", k.get<std::string>());
        o << fmt::format("{:>9}\n", "samples");
        for (const auto& g : j["per_gpu"]) {
            for (const auto& k : j["columns"]) {
                const json& v = k == "gpu" ? g["gpu"] : g["mean"].value(k.get<std::string>(), json());
                o << fmt::format("{:>7}", v.is_null() ? "-" : fmt::format("{:g}", std::round(v.get<double>() * 10) / 10));
            }
            o << fmt::format("{:>9}\n", g["samples"].get<std::size_t>());
        }
    }
    o << "\nWhat it says, and what it does not\n";
    for (const auto& e : j["explanation"]) o << "  " << e.get<std::string>() << "\n";
}

// --columns names a headerless CSV's fields, each column by its name: a name lab does not read
// reads its column past. One near a name it reads (utilisation.gpu) is a slip that would lose the
// reading unsaid: refused. Others (timestamp, index, uuid: nvidia-smi's fields lab has no use
// for) are said on stderr, not dropped silently.
void check_columns(const std::vector<std::string>& columns) {
    const std::vector<std::string>& read = smi::csv_fields_read();
    std::string known;
    for (const auto& f : read) known += (known.empty() ? "" : ", ") + f;
    std::vector<std::string> read_past;
    for (const auto& given : columns) {
        const std::string name = smi::field_name(given);
        if (std::find(read.begin(), read.end(), name) != read.end()) continue;
        if (name.empty())
            throw UsageError("--columns has an empty field name (two commas, or one at an end)\n  fix: give the list as --query-gpu was "
                             "given it, one name between each two commas");
        if (const std::string near = did_you_mean(name, read); !near.empty())
            throw UsageError("--columns '" + name + "' is not a field lab reads (did you mean '" + near + "'?): its column would be read past\n"
                             "  fix: correct the name; lab reads " + known);
        read_past.push_back(name);
    }
    if (!read_past.empty()) {
        std::string names;
        for (const auto& n : read_past) names += (names.empty() ? "'" : ", '") + n + "'";
        std::cerr << "note: --columns " << names << (read_past.size() == 1 ? " is no field" : " are no fields")
                  << " lab reads: read past (lab reads " << known << ")\n";
    }
}

}  // namespace

int cmd_smi(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("capture", po::value<std::string>()->required(), "a file nvidia-smi wrote: its table, -q, --query-gpu CSV or dmon")(
        "columns", po::value<std::string>(), "a headerless CSV's fields, comma-separated, as given to --query-gpu")("json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("capture", 1);
    po::variables_map vm;
    if (!parse("smi", kUsage, args, opts, pos, vm)) return 0;
    std::string file = vm["capture"].as<std::string>();
    // A bare name the lessons mention ("read l40s_idle_query_gpu.csv with lab smi") is the shipped file.
    if (std::error_code ec; !std::filesystem::exists(file, ec))
        if (const auto shipped = paths::shipped_file(file); !shipped.empty()) file = shipped.string();
    std::vector<std::string> columns;
    if (vm.count("columns")) {
        std::istringstream in(vm["columns"].as<std::string>());
        for (std::string f; std::getline(in, f, ',');) columns.push_back(f);
    }
    const smi::Capture capture = smi::read(file, columns);
    // --columns names a headerless CSV's fields; any other form names its own, and a list given
    // for one of them would be silently ignored (the user believing it applied).
    if (!columns.empty() && capture.format != smi::Format::csv)
        throw UsageError(fmt::format("--columns is for a headerless --query-gpu CSV, and {} is nvidia-smi {} output, which names its own columns\n"
                                     "  fix: leave --columns out",
                                     file, capture.format == smi::Format::dmon ? "dmon" : capture.format == smi::Format::query ? "-q" : "table"));
    check_columns(columns);
    const json out = to_json(capture, file);
    if (vm.count("json")) std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // an input's stray non-UTF-8 byte as U+FFFD, not a crash
    else print(std::cout, out);
    return 0;
}

}  // namespace lab::cli
