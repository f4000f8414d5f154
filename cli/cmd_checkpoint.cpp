// `lab checkpoint FILE|DIR`: what a safetensors checkpoint holds, from its headers alone
// (framework/src/safetensors.hpp: the data is never read): tensors, parameters and bytes by dtype,
// __metadata__, the largest tensors and, given a device (a datasheet spec, or the ceilings
// `lab calibrate` cached on this machine, as `lab model` finds them: never a calibration), the
// decode lower bound: every weight byte read once per step at the device's peak bandwidth. A bad
// file is refused with exit 2, nothing on stdout. The JSON keys: docs/checkpoint.md.
#include <algorithm>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "calc_text.hpp"
#include "commands.hpp"
#include "device_choice.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "options.hpp"
#include "safetensors.hpp"

namespace lab::cli {

namespace {

namespace st = lab::safetensors;
using json = nlohmann::json;
using calc_text::bandwidth_text;
using calc_text::bytes_text;
using calc_text::kNoBandwidth;
using calc_text::right;
using calc_text::row;
using calc_text::si;

const char* kUsage = "lab checkpoint FILE|DIR [--device-spec NAME] [--largest N] [--json]";

struct Inputs {
    std::string arg;
    std::string device_spec;
    std::size_t largest = 10;
    bool json = false;
};

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

json compute(const st::Checkpoint& c, std::size_t largest, const std::optional<DeviceChoice>& dev, const std::string& why_none) {
    json by_dtype = json::object();
    for (const auto& [d, t] : c.by_dtype)
        by_dtype[d] = {{"tensors", t.tensors}, {"params", t.params}, {"bytes", t.bytes}, {"bits", *st::dtype_bits(d)}};
    json top = json::array();
    for (const auto& t : st::largest(c, largest))
        top.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"params", t.numel}, {"bytes", t.bytes()},
                       {"shard", t.shard}});
    json out = {
        {"file", c.path},
        {"index", c.index ? json(*c.index) : json(nullptr)},
        {"shards", c.shards},
        {"tensors", c.tensors.size()},
        {"params", c.params},
        {"bytes", c.bytes},
        {"file_bytes", c.file_bytes},
        {"by_dtype", by_dtype},
        {"metadata", c.metadata},
        {"largest", top},
    };
    if (c.index) out["index_total_size"] = c.index_total_size ? json(*c.index_total_size) : json(nullptr);
    json notes = c.notes;
    if (dev) {
        out["device"] = {{"name", dev->name}, {"source", dev->source}, {"bandwidth_bytes_per_s", dev->bandwidth}};
        if (dev->bandwidth > 0) out["decode_step_lower_bound_s"] = static_cast<double>(c.bytes) / dev->bandwidth;
        else notes.push_back(kNoBandwidth + std::string(": no decode step lower bound"));
    } else {
        out["device_note"] = why_none;
    }
    out["notes"] = notes;
    return out;
}

void print(std::ostream& o, const json& j) {
    const auto& shards = j["shards"];
    o << "checkpoint " << j["file"].get<std::string>();
    if (j["index"].is_null()) o << " (one file)\n";
    else o << " (index of " << shards.size() << " shard" << (shards.size() == 1 ? "" : "s") << ")\n";
    o << "  sizes in GB, MB, kB: powers of 10 (1 GB = 10^9 B)\n\n";
    o << row("tensors", format::thousands(j["tensors"].get<double>()));
    o << row("parameters", format::thousands(j["params"].get<double>()));
    o << row("tensor bytes", bytes_text(j["bytes"]));
    o << row("file bytes (headers too)", bytes_text(j["file_bytes"]));

    o << "\nby dtype      bits     tensors         parameters          bytes\n";
    for (const auto& [d, t] : j["by_dtype"].items()) {
        std::string name = "  " + d;
        name.resize(12, ' ');
        o << name << right(std::to_string(t["bits"].get<unsigned>()), 6) << right(format::thousands(t["tensors"].get<double>()), 12)
          << right(format::thousands(t["params"].get<double>()), 19) << right(si(t["bytes"].get<double>(), "B"), 15) << "\n";
    }

    o << "\n__metadata__";
    if (j["metadata"].empty()) o << ": none\n";
    else {
        o << "\n";
        for (const auto& [k, v] : j["metadata"].items()) o << row(k, v.get<std::string>());
    }

    if (!j["largest"].empty()) {
        // Columns as wide as their longest cell: name, dtype, shape, then the bytes right-aligned.
        std::size_t name_w = 4, dtype_w = 5, shape_w = 5;
        for (const auto& t : j["largest"]) {
            name_w = std::max(name_w, t["name"].get<std::string>().size());
            dtype_w = std::max(dtype_w, t["dtype"].get<std::string>().size());
            shape_w = std::max(shape_w, shape_text(t["shape"].get<std::vector<std::uint64_t>>()).size());
        }
        auto pad = [](std::string s, std::size_t w) {
            s.resize(std::max(s.size(), w), ' ');
            return s;
        };
        o << "\nlargest tensors\n  " << pad("name", name_w) << "  " << pad("dtype", dtype_w) << "  " << pad("shape", shape_w)
          << right("bytes", 12) << "\n";
        for (const auto& t : j["largest"])
            o << "  " << pad(t["name"].get<std::string>(), name_w) << "  " << pad(t["dtype"].get<std::string>(), dtype_w) << "  "
              << pad(shape_text(t["shape"].get<std::vector<std::uint64_t>>()), shape_w) << right(si(t["bytes"].get<double>(), "B"), 12)
              << "\n";
    }

    o << "\n";
    if (j.contains("device")) {
        const auto& d = j["device"];
        o << "device: " << d["name"].get<std::string>() << " (" << d["source"].get<std::string>() << ")\n";
        o << row("bandwidth", bandwidth_text(d["bandwidth_bytes_per_s"].get<double>()));
        if (j.contains("decode_step_lower_bound_s"))
            o << row("decode step lower bound", format::duration(j["decode_step_lower_bound_s"].get<double>()) +
                                                    " = tensor bytes / bandwidth (batch 1, KV cache not counted)");
    } else {
        o << j["device_note"].get<std::string>() << "\n";
    }
    for (const auto& n : j["notes"]) o << "note: " << n.get<std::string>() << "\n";
}

}  // namespace

int cmd_checkpoint(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("checkpoint", po::value<std::string>()->required(),
                       "a .safetensors file, a model.safetensors.index.json, or a folder holding either")(
        "device-spec", po::value<std::string>(), "a datasheet spec of configs/devices (a100_40gb, h200_sxm, ...)")(
        "largest", po::value<std::size_t>()->default_value(10), "how many of the largest tensors to list")(
        "json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("checkpoint", 1);
    po::variables_map vm;
    if (!parse("checkpoint", kUsage, args, opts, pos, vm)) return 0;
    Inputs in;
    in.arg = vm["checkpoint"].as<std::string>();
    if (vm.count("device-spec")) in.device_spec = vm["device-spec"].as<std::string>();
    in.largest = vm["largest"].as<std::size_t>();
    in.json = vm.count("json") > 0;

    std::string why_none;
    const auto dev = choose_device(in.device_spec, why_none);  // a bad --device-spec before any file is read
    const st::Checkpoint c = st::read_checkpoint(in.arg);
    const json out = compute(c, in.largest, dev, why_none);
    if (in.json) std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // an input's stray non-UTF-8 byte as U+FFFD, not a crash
    else print(std::cout, out);
    return 0;
}

}  // namespace lab::cli
