// What an nvidia-smi capture says, and what it does not, in sentences (see smi_capture.hpp's
// explain): each GPU's utilisation, memory, power and processes, dmon's means GPU by GPU, and the
// video engines beside GPU-Util. The parsing is smi_capture.cpp's.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smi_capture.hpp"

namespace lab::smi {

namespace {

// GPU-Util (dmon: sm) is the time a kernel ran; NVENC and NVDEC encode and decode video on engines
// of their own, beside the SMs, so a GPU transcoding video reads a low GPU-Util while busy (the
// L40S capture under load: GPU-Util 9%, encoder 60%). Below kLowGpuUtilPct with an engine at
// kBusyEnginePct or more, it is the engines that are busy, and the sentence says so.
constexpr double kLowGpuUtilPct = 25, kBusyEnginePct = 25;

// The sentence on a GPU's video engines, where the capture reads them and either was busy at all.
// `util_name`: what the capture calls GPU-Util ("GPU-Util", dmon's "sm"); `enc_name`, `dec_name`:
// what it calls the engines.
std::optional<std::string> video_engines(const std::string& who, const char* util_name, std::optional<double> util, const char* enc_name,
                                         std::optional<double> enc, const char* dec_name, std::optional<double> dec) {
    if (enc.value_or(0) <= 0 && dec.value_or(0) <= 0) return std::nullopt;
    std::vector<std::string> busy;
    if (enc.value_or(0) >= kBusyEnginePct) busy.push_back(fmt::format("{} {:.0f}%", enc_name, *enc));
    if (dec.value_or(0) >= kBusyEnginePct) busy.push_back(fmt::format("{} {:.0f}%", dec_name, *dec));
    if (util && *util < kLowGpuUtilPct && !busy.empty())
        return fmt::format("{}: {} {:.0f}% but {}: the GPU's video engines (NVENC encodes, NVDEC decodes), not its SMs, are what is busy; "
                           "{} counts only the time a kernel ran.",
                           who, util_name, *util, fmt::join(busy, " and "), util_name);
    auto shown = [](std::optional<double> v) { return v ? fmt::format("{:.0f}%", *v) : std::string("-"); };
    return fmt::format("{}: {} {}, {} {}: the share of the period the video engines (NVENC, NVDEC) were busy; they are not SMs, and {} "
                       "does not count them.",
                       who, enc_name, shown(enc), dec_name, shown(dec), util_name);
}

}  // namespace

std::vector<std::string> explain(const Capture& c) {
    std::vector<std::string> out;
    auto pct = [](double v) { return fmt::format("{:g}%", v); };
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
        const Gpu& g = c.gpus[i];
        const std::string who = fmt::format("GPU {} ({})", i, g.name.value_or("unnamed"));
        if (g.utilization_gpu_pct) {
            const double u = *g.utilization_gpu_pct;
            out.push_back(u > 0 ? fmt::format("{}: GPU-Util {}: a kernel was running during {} of the sample period. It does not say how many "
                                              "SMs were busy, nor how close any of them came to a roof: one block on one SM reads 100%.",
                                              who, pct(u), u >= 99.5 ? "the whole" : pct(u))
                                : who + ": GPU-Util 0%: no kernel ran during the sample period.");
        }
        if (auto v = video_engines(who, "GPU-Util", g.utilization_gpu_pct, "encoder", g.utilization_encoder_pct, "decoder", g.utilization_decoder_pct))
            out.push_back(*v);
        if (g.utilization_memory_pct)
            out.push_back(fmt::format("{}: memory utilisation {}: the fraction of the period the memory controller was busy reading or writing, "
                                      "not the fraction of peak bandwidth in use.", who, pct(*g.utilization_memory_pct)));
        if (g.memory_used_mib && g.memory_total_mib)
            // Drivers that list a reservation (-q's Reserved, the CSV's memory.reserved) keep it
            // out of Used (used + reserved + free = total in every such capture here); the
            // table, and a CSV without that field, do not say.
            out.push_back(fmt::format("{}: {:g} MiB of {:g} MiB in use ({:.0f}%): allocated, not necessarily touched; {}", who, *g.memory_used_mib,
                                      *g.memory_total_mib, 100 * *g.memory_used_mib / *g.memory_total_mib,
                                      g.memory_reserved_mib ? fmt::format("the driver's own {:g} MiB are reserved apart, not counted in it.", *g.memory_reserved_mib)
                                                            : "whether the driver's own reservation is counted in it depends on the driver (where it is "
                                                              "not, nvidia-smi -q lists it apart as Reserved, and --query-gpu as memory.reserved)."));
        if (g.power_draw_w && g.power_limit_w)
            out.push_back(fmt::format("{}: drawing {:g} W of a {:g} W limit ({:.0f}%){}.", who, *g.power_draw_w, *g.power_limit_w,
                                      100 * *g.power_draw_w / *g.power_limit_w,
                                      g.power_draw_instant_w ? fmt::format("; {:g} W at the instant of the reading, the figure above being an average",
                                                                           *g.power_draw_instant_w)
                                                             : ""));
        if (g.pstate) out.push_back(fmt::format("{}: performance state {} ({}).", who, *g.pstate, *g.pstate == "P0" ? "the highest" : "P0 is the highest; larger numbers save power"));
        if (g.utilization_gpu_pct && *g.utilization_gpu_pct >= 99.5 && g.memory_used_mib && *g.memory_used_mib == 0)
            out.push_back(who + ": busy with no memory allocated in this context: another context (or MIG instance, or VM) may be running the work.");
        if (g.processes_listed)
            out.push_back(g.processes.empty() ? who + ": no processes listed (in a container or VM, other processes may be invisible)."
                                              : fmt::format("{}: {} process(es) listed.", who, g.processes.size()));
    }
    // Each GPU on its own: pooled, an H100 at 100% and one idle read as two at 50%.
    const auto dmon = dmon_gpus(c);
    if (dmon.size() > 1)
        out.push_back(fmt::format("{} GPUs: dmon prints a line for each GPU at each sample; each GPU's figures below are its own lines' means.", dmon.size()));
    for (const auto& g : dmon) {
        const std::string who = g.index ? fmt::format("GPU {:g}", *g.index) : std::string("GPU -");
        auto avg = [&](const char* k) {
            for (const auto& [name, v] : g.means)
                if (name == k) return v;
            return std::optional<double>();
        };
        out.push_back(fmt::format("{}: {} sample{} (one a second by default).", who, g.samples, g.samples == 1 ? "" : "s"));
        if (auto sm = avg("sm"))
            out.push_back(fmt::format("{}: sm {:.0f}% on average: the share of each period some kernel was running, as GPU-Util; not the share of SMs.", who, *sm));
        if (auto v = video_engines(who, "sm", avg("sm"), "enc", avg("enc"), "dec", avg("dec"))) out.push_back(*v);
        if (auto mem = avg("mem")) out.push_back(fmt::format("{}: mem {:.0f}% on average: memory controller busy time, not bandwidth.", who, *mem));
        if (auto pwr = avg("pwr")) out.push_back(fmt::format("{}: pwr {:.0f} W on average.", who, *pwr));
    }
    return out;
}

}  // namespace lab::smi
