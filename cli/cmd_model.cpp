// `lab model CONFIG.json|NAME`: the transformer calculator. Reads a HuggingFace config.json (or a
// built-in one from configs/models/) and prints, through lab/transformer.hpp (the arithmetic the
// lessons 02.02, 02.06 and 02.07 use), parameters, weight and KV-cache bytes, the FLOPs and bytes
// of a prefill and of a decode step op by op, the activation peak and, given a device (a
// datasheet spec, or the ceilings `lab calibrate` cached on this machine: `lab model` never
// measures), the decode lower bound, the ridge batch and the largest batch that fits. The JSON
// keys are a contract (issue 11). Conventions: docs/arithmetic.md.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "calc_text.hpp"
#include "commands.hpp"
#include "device_choice.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "lab/transformer.hpp"
#include "model_config.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "units.hpp"

namespace lab::cli {

namespace {

namespace tf = lab::transformer;
using json = nlohmann::json;

const char* kUsage =
    "lab model CONFIG.json|NAME [--batch B] [--seq S] [--context T] [--dtype D] [--kv-dtype D] "
    "[--device-spec NAME] [--memory SIZE] [--json]";

struct Inputs {
    std::string arg, file;
    tf::ModelConfig model;
    std::uint64_t batch = 1, seq = 512, context = 512;
    tf::Precision precision;
    std::optional<std::uint64_t> memory_flag;  // --memory, bytes
    std::string memory_text;
    std::string device_spec;
    bool json = false;
};

// The device figures the bound, the ridge batch and max_batch need.
struct DeviceFigures {
    std::string name;
    std::string source;            // "datasheet configs/devices/a100_40gb.yaml", "ceilings cached by lab calibrate: FILE"
    double bandwidth = 0;          // B/s
    bool bandwidth_trusted = true; // false: a cached ceiling measured under load or noisy
    std::string pipe;              // the FLOP/s ceiling the ridge uses: "fp16.tensor"
    double peak_flops = 0;
    std::uint64_t memory_bytes = 0;
    std::string note;              // why the pipe is not the dtype's own, when it is not
};

Dtype parse_dtype(const std::string& text, const std::string& flag) {
    const std::pair<const char*, Dtype> aliases[] = {{"float32", Dtype::fp32}, {"float16", Dtype::fp16}, {"half", Dtype::fp16},
                                                     {"bfloat16", Dtype::bf16}, {"fp8_e4m3", Dtype::fp8_e4m3}, {"float64", Dtype::fp64}};
    std::string names;
    for (Dtype d : {Dtype::fp64, Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2,
                    Dtype::int8, Dtype::int4, Dtype::mxfp4, Dtype::nvfp4}) {
        if (text == to_string(d)) return d;
        names += (names.empty() ? "" : ", ") + std::string(to_string(d));
    }
    for (const auto& [alias, d] : aliases)
        if (text == alias) return d;
    throw UsageError("unknown " + flag + " '" + text + "'\n  fix: use one of " + names);
}

// The FLOP/s ceiling a decode step's math runs on: that of the activation dtype (8- and 4-bit
// weights are dequantised into it), on tensor cores where the device has them.
std::vector<std::string> compute_pipes(Dtype activations) {
    const std::string d = to_string(activations);
    if (activations == Dtype::fp32) return {"fp32.simt"};
    if (activations == Dtype::fp64) return {"fp64.tensor", "fp64.simt"};
    if (activations == Dtype::tf32) return {"tf32.tensor", "fp32.simt"};
    return {d + ".tensor", d + ".simt", "fp32.simt"};
}

void pick_pipe(DeviceFigures& dev, const std::map<std::string, double>& flops, Dtype activations) {
    const auto pipes = compute_pipes(activations);
    for (const auto& p : pipes) {
        auto it = flops.find(p);
        if (it == flops.end() || !(it->second > 0)) continue;
        dev.pipe = p;
        dev.peak_flops = it->second;
        if (p != pipes.front())
            dev.note = "no " + pipes.front() + " ceiling on this device: the ridge batch uses " + p;
        return;
    }
    dev.note = "no FLOP/s ceiling for " + std::string(to_string(activations)) + " math on this device: no ridge batch";
}

std::optional<DeviceFigures> resolve_device(const Inputs& in, std::string& why_none) {
    const auto chosen = choose_device(in.device_spec, why_none);
    if (!chosen) return std::nullopt;
    DeviceFigures dev;
    dev.name = chosen->name;
    dev.source = chosen->source;
    dev.bandwidth = chosen->bandwidth;
    dev.bandwidth_trusted = chosen->bandwidth_trusted;
    dev.memory_bytes = chosen->memory_bytes;
    pick_pipe(dev, chosen->flops_per_s, in.precision.activations);
    return dev;
}

// The largest --memory read, far past any machine's; said in a unit --memory reads (it has no EB,
// so 1 EB is not what to say).
constexpr double kMaxMemoryBytes = 1e18;
const char* const kMaxMemoryText = "1000 PB";

Inputs read_inputs(const Args& args, bool& help) {
    po::options_description opts("options");
    opts.add_options()("model", po::value<std::string>()->required(), "a HuggingFace config.json (or its folder), or a built-in name")(
        "batch", po::value<std::uint64_t>()->default_value(1), "sequences decoded together (B)")(
        "seq", po::value<std::uint64_t>()->default_value(512), "prompt tokens per sequence the prefill computes (S)")(
        "context", po::value<std::uint64_t>(), "tokens in the KV cache at the decode step (T; default: S)")(
        "dtype", po::value<std::string>()->default_value("fp16"), "weight dtype: fp32, fp16, bf16, fp8, int8, int4, mxfp4, nvfp4, ...")(
        "kv-dtype", po::value<std::string>(), "KV-cache dtype (default: --dtype)")(
        "device-spec", po::value<std::string>(), "a datasheet spec of configs/devices (a100_40gb, h200_sxm, ...)")(
        "memory", po::value<std::string>(), "memory to fit (80GB, 80GiB, bytes; default: the device's)")(
        "json", "print one JSON document");
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    help = !parse("model", kUsage, args, opts, pos, vm);
    Inputs in;
    if (help) return in;
    in.arg = vm["model"].as<std::string>();
    in.batch = vm["batch"].as<std::uint64_t>();
    in.seq = vm["seq"].as<std::uint64_t>();
    in.context = vm.count("context") ? vm["context"].as<std::uint64_t>() : in.seq;
    if (in.batch == 0 || in.seq == 0)
        throw UsageError("--batch and --seq must be at least 1\n  fix: see `lab model --help`");
    // Past 2^32 no count is meant (a negative one is refused as the options are parsed).
    for (const auto& [flag, v] : {std::pair{"--batch", in.batch}, std::pair{"--seq", in.seq}, std::pair{"--context", in.context}})
        if (v > (std::uint64_t{1} << 32))
            throw UsageError(std::string(flag) + " " + std::to_string(v) +
                             " is more sequences or tokens than lab counts (at most 4294967296)\n  fix: give a whole number from 1 to 4294967296");
    const Dtype w = parse_dtype(vm["dtype"].as<std::string>(), "--dtype");
    std::optional<Dtype> kv;
    if (vm.count("kv-dtype")) kv = parse_dtype(vm["kv-dtype"].as<std::string>(), "--kv-dtype");
    in.precision = tf::precision(w, kv);
    in.json = vm.count("json") > 0;
    if (vm.count("device-spec")) in.device_spec = vm["device-spec"].as<std::string>();
    if (vm.count("memory")) {
        in.memory_text = vm["memory"].as<std::string>();
        const std::string fix = "\n  fix: write a size such as 80GB, 80GiB or 85899345920";
        // Said here in a memory size's terms: the claim reader's own words are a grader's ("out of
        // the range the grader can read"), and for -5G it suggested writing -5 GB.
        const std::size_t lead = in.memory_text.find_first_not_of(" \t");
        if (lead != std::string::npos && in.memory_text[lead] == '-')
            throw UsageError("--memory '" + in.memory_text + "': a memory size cannot be negative" + fix);
        if (const double v = std::strtod(in.memory_text.c_str(), nullptr); !std::isfinite(v))
            throw UsageError("--memory '" + in.memory_text + "': beyond any memory size (at most " + kMaxMemoryText + ")" + fix);
        try {
            const double b = units::parse_claim(in.memory_text, "B").value;
            if (!(b >= 1) || b > kMaxMemoryBytes)
                throw units::UnitError(std::string("not a memory size from 1 B to ") + kMaxMemoryText);
            in.memory_flag = static_cast<std::uint64_t>(b);
        } catch (const units::UnitError& e) {
            throw UsageError("--memory '" + in.memory_text + "': " + e.what() + fix);
        }
    }
    in.file = resolve_model_config(in.arg, paths::config_dir() / "models").string();
    in.model = read_model_config(in.file);
    return in;
}

// ---- The figures --------------------------------------------------------------------------------

json compute(const Inputs& in, const std::optional<DeviceFigures>& dev, const std::string& why_no_device) {
    const tf::ModelConfig& m = in.model;
    const tf::Precision& pr = in.precision;
    const auto prefill = tf::forward_ops(m, pr, tf::prefill(in.batch, in.seq));
    const auto decode = tf::forward_ops(m, pr, tf::decode(in.batch, in.context));
    const tf::Totals pt = tf::totals(prefill), dt = tf::totals(decode);
    const tf::ParamCounts pc = tf::param_counts(m);

    json ops = json::array();
    for (std::size_t i = 0; i < prefill.size(); ++i)
        ops.push_back({{"name", prefill[i].name}, {"repeats", prefill[i].repeats}, {"flops", prefill[i].flops()},
                       {"matmul_flops", prefill[i].matmul_flops}, {"elementwise_flops", prefill[i].elementwise_flops},
                       {"bytes", prefill[i].bytes()}, {"decode_flops", decode[i].flops()}, {"decode_bytes", decode[i].bytes()}});
    json notes = json::array();
    json out = {
        {"model", m.name}, {"config", in.file},
        {"architecture", {{"family", tf::to_string(m.family)}, {"model_type", m.model_type}, {"hidden", m.hidden},
                          {"intermediate", m.intermediate}, {"layers", m.layers}, {"heads", m.heads},
                          {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"vocab", m.vocab},
                          {"tied_embeddings", m.tied_embeddings}, {"qkv_bias", m.qkv_bias}, {"out_bias", m.out_bias},
                          {"mlp_bias", m.mlp_bias}, {"gated_mlp", m.gated_mlp}, {"norm", tf::to_string(m.norm)},
                          {"norm_bias", m.norm_bias}, {"n_positions", m.n_positions}, {"sliding_window", m.sliding_window}}},
        {"inputs", {{"batch", in.batch}, {"seq", in.seq}, {"context", in.context}, {"dtype", to_string(pr.weights)},
                    {"kv_dtype", to_string(pr.kv)}, {"activation_dtype", to_string(pr.activations)}}},
        {"params", pc.total()},
        {"params_by_kind", {{"embedding", pc.embedding}, {"attention", pc.attention}, {"mlp", pc.mlp}, {"norm", pc.norm},
                            {"lm_head", pc.lm_head}}},
        {"weight_bytes", tf::weight_bytes(m, pr.weights)},
        {"kv_bytes_per_token", tf::kv_bytes_per_token(m, pr.kv)},
        {"kv_cache_bytes", tf::kv_cache_bytes(m, pr.kv, in.batch, in.context)},
        {"prefill_flops", pt.flops()},
        {"prefill_matmul_flops", pt.matmul_flops},
        {"prefill_elementwise_flops", pt.elementwise_flops},
        {"prefill_flops_last_token_only", tf::prefill_flops_last_token_only(m, in.batch, in.seq)},
        {"prefill_bytes", pt.bytes},
        {"decode_flops_per_token", dt.flops() / in.batch},
        {"decode_step_flops", dt.flops()},
        {"decode_step_bytes", dt.bytes},
        {"ops", ops},
        {"activation_peak_bytes", tf::activation_peak_bytes(m, pr, in.batch, in.seq, in.context)},
    };
    if (m.n_positions > 0 && std::max(in.seq, in.context + 1) > m.n_positions)
        notes.push_back("S or T + 1 exceeds the model's " + std::to_string(m.n_positions) +
                        " learned positions: it cannot run that long; the figures extrapolate");
    if (m.sliding_window > 0 && in.context > m.sliding_window)
        notes.push_back("the KV cache holds the last " + std::to_string(m.sliding_window) + " tokens (sliding window)");

    std::optional<std::uint64_t> memory = in.memory_flag;
    if (dev) {
        out["device"] = {{"name", dev->name}, {"source", dev->source}, {"bandwidth_bytes_per_s", dev->bandwidth},
                         {"bandwidth_trusted", dev->bandwidth_trusted}, {"pipe", dev->pipe}, {"peak_flops_per_s", dev->peak_flops},
                         {"memory_bytes", dev->memory_bytes}};
        // A spec may leave the bandwidth out (configs/devices/README.md): then there is no bound
        // to state, rather than "0 B/s" and an infinite one.
        const bool bandwidth = dev->bandwidth > 0;
        out["decode_step_lower_bound_s"] =
            bandwidth ? json(tf::decode_step_lower_bound_s(m, pr, in.batch, in.context, dev->bandwidth)) : json(nullptr);
        const auto rb = bandwidth ? tf::ridge_batch(m, pr, in.context, dev->peak_flops, dev->bandwidth) : std::nullopt;
        out["ridge_batch"] = rb ? json(*rb) : json(nullptr);
        if (!dev->note.empty()) notes.push_back(dev->note);
        if (!bandwidth) notes.push_back(calc_text::kNoBandwidth + std::string(": no decode step lower bound and no ridge batch"));
        if (!rb && bandwidth && dev->peak_flops > 0)
            notes.push_back("no batch reaches the ridge at this context: the KV reads grow with the batch as fast as the FLOPs");
        if (!memory && dev->memory_bytes > 0) memory = dev->memory_bytes;
    } else {
        out["device_note"] = why_no_device;
    }
    if (memory) {
        out["memory_bytes"] = *memory;
        out["max_batch"] = tf::max_batch(m, pr, in.seq, in.context, *memory);
    }
    out["notes"] = notes;
    return out;
}

// ---- The table ------------------------------------------------------------------------------------

using calc_text::bandwidth_text;
using calc_text::bytes_text;
using calc_text::right;
using calc_text::row;
using calc_text::si;

void print_ops(std::ostream& o, const json& j) {
    o << "\nper op, all layers     " << right("prefill FLOP", 14) << right("prefill bytes", 14)
      << right("decode FLOP", 14) << right("decode bytes", 14) << "\n";
    auto line = [&](std::string name, const json& flops, const json& bytes, const json& dflops, const json& dbytes) {
        name = "  " + name;
        name.resize(24, ' ');
        o << name << right(si(flops.get<double>(), "FLOP"), 14) << right(si(bytes.get<double>(), "B"), 14)
          << right(si(dflops.get<double>(), "FLOP"), 14) << right(si(dbytes.get<double>(), "B"), 14) << "\n";
    };
    for (const auto& op : j["ops"])
        line(op["name"].get<std::string>(), op["flops"], op["bytes"], op["decode_flops"], op["decode_bytes"]);
    line("total", j["prefill_flops"], j["prefill_bytes"], j["decode_step_flops"], j["decode_step_bytes"]);
}

void print_model(std::ostream& o, const Inputs& in, const json& j) {
    const tf::ModelConfig& m = in.model;
    const auto& a = j["inputs"];
    o << m.name << " (" << in.file << ")\n  " << m.model_type << ": " << m.layers << " layers, hidden " << m.hidden << ", "
      << m.heads << " heads of " << m.head_dim << " (" << m.kv_heads << " KV heads), " << (m.gated_mlp ? "gated " : "")
      << "MLP " << m.intermediate << ", vocab " << m.vocab << (m.tied_embeddings ? ", tied head" : ", untied head")
      << (m.rotary() ? ", RoPE" : ", " + std::to_string(m.n_positions) + " learned positions")
      << (m.sliding_window ? ", window " + std::to_string(m.sliding_window) : "") << "\n";
    o << "  batch " << in.batch << ", prefill of " << in.seq << " tokens, decode step at context " << in.context
      << "; weights " << a["dtype"].get<std::string>() << ", KV cache " << a["kv_dtype"].get<std::string>()
      << ", activations " << a["activation_dtype"].get<std::string>() << "\n\n";
    auto count = [](const json& n) { return right(format::thousands(n.get<double>()), 13); };
    o << row("parameters", count(j["params"]));
    for (const char* k : {"embedding", "attention", "mlp", "norm", "lm_head"})
        o << row(std::string("  ") + k, count(j["params_by_kind"][k]));
    o << row("weights", bytes_text(j["weight_bytes"]));
    o << row("KV cache per token", bytes_text(j["kv_bytes_per_token"]));
    o << row("KV cache, " + std::to_string(in.batch) + " x " + std::to_string(in.context) + " tokens", bytes_text(j["kv_cache_bytes"]));
    o << row("activation peak", bytes_text(j["activation_peak_bytes"]));
    o << row("prefill FLOPs", si(j["prefill_flops"].get<double>(), "FLOP") + " (matmul " +
                                  si(j["prefill_matmul_flops"].get<double>(), "FLOP") + ", elementwise " +
                                  si(j["prefill_elementwise_flops"].get<double>(), "FLOP") + ")");
    o << row("  LM head on last token only", si(j["prefill_flops_last_token_only"].get<double>(), "FLOP"));
    o << row("decode FLOPs per token", si(j["decode_flops_per_token"].get<double>(), "FLOP"));
    print_ops(o, j);
}

void print_device(std::ostream& o, const Inputs& in, const json& j) {
    o << "\n";
    if (j.contains("device")) {
        const auto& d = j["device"];
        o << "device: " << d["name"].get<std::string>() << " (" << d["source"].get<std::string>() << ")\n";
        // A cached ceiling measured under load reads low (a review: 13.1 GB/s cached, 42.5 GB/s in
        // the run beside it, a decode bound 3x the run's): said beside the number.
        o << row("bandwidth", bandwidth_text(d["bandwidth_bytes_per_s"].get<double>()) +
                                  (d.value("bandwidth_trusted", true) ? "" : " (not trusted: measured under load or noisy; runs re-measure it)"));
        if (!d["pipe"].get<std::string>().empty())
            o << row("peak " + d["pipe"].get<std::string>(), si(d["peak_flops_per_s"].get<double>(), "FLOP/s"));
        if (!j["decode_step_lower_bound_s"].is_null())
            o << row("decode step lower bound", format::duration(j["decode_step_lower_bound_s"].get<double>()) +
                                                    " = (weights + KV cache) / bandwidth");
        // The cache moves with every run that re-measures a ceiling: a lesson's answer is worked
        // out with the roof its own run printed, which this may no longer be.
        if (d["source"].get<std::string>().rfind("ceilings cached", 0) == 0)
            o << "note: the bandwidth above is this machine's ceilings cache now, not a run's: for a lesson's answer, divide "
                 "the bytes by the bw.best your run printed\n";
        o << row("ridge batch", j["ridge_batch"].is_null() ? std::string("none (see the notes)")
                                                           : format::number(j["ridge_batch"].get<double>()));
        // 02.06's run predicts a ridge batch too, of one weight GEMM alone (ridge x e / 2): the
        // whole model's here also reads the KV cache, so the two differ, and a student sees both.
        if (!j["ridge_batch"].is_null())
            o << "note: the ridge batch is the whole decode step's at this context, its KV-cache reads included "
                 "(docs/arithmetic.md, section 7); one weight GEMM alone, as lesson 02.06 measures in its own dtype, reaches the "
                 "ridge near ridge x bytes per weight / 2, so the two differ\n";
    } else {
        o << j["device_note"].get<std::string>() << "\n";
    }
    if (j.contains("max_batch")) {
        const std::string given = in.memory_text.empty() ? "the device's" : "--memory " + in.memory_text;
        o << row("max batch in " + si(j["memory_bytes"].get<double>(), "B"),
                 format::thousands(j["max_batch"].get<double>()) + " (weights + KV cache + activation peak; " + given + ")");
    }
    for (const auto& n : j["notes"]) o << "note: " << n.get<std::string>() << "\n";
}

// Counts past what lab counts: the memory's to blame when they are so only for the largest batch
// it holds; the config's when they are so at batch 1 and one token (naming the key, its value and
// its line); else the flags'.
[[noreturn]] void refuse_too_large(const Inputs& in, const std::optional<DeviceFigures>& dev, const std::overflow_error& e) {
    std::string what = e.what();
    if (const auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);  // "transformer arithmetic: "
    std::optional<DeviceFigures> dev_without_memory = dev;
    if (dev_without_memory) dev_without_memory->memory_bytes = 0;
    auto too_large = [&](Inputs probe) {  // the figures without a largest batch
        probe.memory_flag.reset();
        try {
            compute(probe, dev_without_memory, "");
            return false;
        } catch (const std::overflow_error&) {
            return true;
        }
    };
    if (!too_large(in)) {
        const std::string memory = in.memory_flag ? "--memory " + in.memory_text : "the device's memory";
        throw UsageError(memory + " holds a batch of " + in.model.name + " too large for lab to count: " + what +
                         "\n  fix: give a smaller --memory, such as a device's (80GB)");
    }
    Inputs smallest = in;
    smallest.batch = smallest.seq = smallest.context = 1;
    if (!too_large(smallest))
        throw UsageError("--batch " + std::to_string(in.batch) + ", --seq " + std::to_string(in.seq) + " and --context " +
                         std::to_string(in.context) + " are too large for " + in.model.name + " (" + in.file + "): " + what +
                         "\n  fix: use a smaller --batch, --seq or --context");
    const auto key = size_key_to_blame(in.file, in.model, [&](const tf::ModelConfig& m) {
        Inputs probe = smallest;
        probe.model = m;
        return too_large(probe);
    });
    const std::string even = ", even at batch 1 and one token";
    if (!key) throw InputError(in.file, "the model's sizes are too large for lab to count: " + what + even, "correct the config's sizes");
    throw InputError(key->where, "key '" + key->key + "' (" + std::to_string(key->value) + ") makes the model too large for lab to count: " +
                                     what + even,
                     "correct \"" + key->key + "\" to the model's published value");
}

}  // namespace

int cmd_model(const Args& args) {
    bool help = false;
    Inputs in = read_inputs(args, help);
    if (help) return 0;
    std::string why_none;
    const auto dev = resolve_device(in, why_none);
    json out;
    try {
        out = compute(in, dev, why_none);
    } catch (const std::overflow_error& e) {
        refuse_too_large(in, dev, e);
    }
    if (in.json) {
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // an input's stray non-UTF-8 byte as U+FFFD, not a crash
    } else {
        print_model(std::cout, in, out);
        print_device(std::cout, in, out);
    }
    return 0;
}

}  // namespace lab::cli
