// A profiler trace, summarised (see trace_summary.hpp). nlohmann's parser calls back at the end
// of each event object; the event is reduced to what the summary needs and discarded there, so
// memory holds the text and the compact records, never the whole document as a DOM.
#include "trace_summary.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "gzip.hpp"

namespace lab::trace {

namespace {

using json = nlohmann::json;

std::optional<double> num(const json& j) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end != s.c_str()) return v;
    }
    return std::nullopt;
}
std::optional<double> arg(const json& args, const char* key) {
    auto it = args.find(key);
    return it == args.end() ? std::nullopt : num(*it);
}
// "Memcpy HtoD (Pageable -> Device)", "memcpy DtoH": the direction token.
std::string copy_kind(const std::string& name) {
    for (std::size_t i = 0; i + 4 <= name.size(); ++i)
        if (std::isupper(static_cast<unsigned char>(name[i])) && name[i + 1] == 't' && name[i + 2] == 'o' &&
            std::isupper(static_cast<unsigned char>(name[i + 3])) && (i == 0 || name[i - 1] == ' '))
            return name.substr(i, 4);
    return "other";
}

struct Reader {
    Summary s;
    std::unordered_map<std::string, std::size_t> kernel_index;
    std::unordered_map<long long, double> launch_start;     // correlation -> runtime/driver call start
    std::vector<std::pair<long long, double>> kernel_start;  // correlation, kernel start
    std::vector<std::pair<double, double>> gpu;               // GPU event intervals
    bool saw_events = false, lab_format = false;

    void event(const json& e) {
        if (e.value("ph", "") != "X") return;
        ++s.events;
        const std::string cat = e.value("cat", ""), name = e.value("name", "");
        const double ts = num(e.value("ts", json())).value_or(0), dur = std::max(0.0, num(e.value("dur", json())).value_or(0));
        static const json none = json::object();
        const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : none;
        const std::optional<double> corr = arg(args, "correlation");
        if (cat == "kernel") {
            auto [it, fresh] = kernel_index.emplace(name, s.kernels.size());
            if (fresh) s.kernels.push_back({name, 0, 0});
            ++s.kernels[it->second].count, s.kernels[it->second].total_us += dur;
            ++s.kernel_count, s.kernel_total_us += dur;
            gpu.push_back({ts, ts + dur});
            if (corr) kernel_start.push_back({static_cast<long long>(*corr), ts});
        } else if (cat == "gpu_memcpy" || cat == "memcpy") {
            const double bytes = arg(args, "bytes").value_or(0);
            CopyStats& k = s.memcpy_by_kind[copy_kind(name)];
            ++k.count, k.bytes += bytes, k.total_us += dur;
            ++s.memcpy.count, s.memcpy.bytes += bytes, s.memcpy.total_us += dur;
            gpu.push_back({ts, ts + dur});
        } else if (cat == "gpu_memset" || cat == "memset") {
            ++s.memset_count;
            gpu.push_back({ts, ts + dur});
        } else if (cat == "cuda_sync" || cat == "sync") {
            ++s.sync_count;
            auto kind = args.find("cuda_sync_kind");
            ++s.syncs_by_kind[kind != args.end() && kind->is_string() ? kind->get<std::string>() : name];
        } else if ((cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") && corr) {
            launch_start.emplace(static_cast<long long>(*corr), ts);
        } else if (cat == "cuda_profiler_range") {
            auto c = [&](const char* op) { return arg(args, fmt::format("smsp__sass_thread_inst_executed_op_{}_pred_on.sum", op).c_str()).value_or(0); };
            CounterRange r{name, dur, 2 * c("ffma") + c("fadd") + c("fmul"), 2 * c("dfma") + c("dadd") + c("dmul"), 2 * c("hfma") + c("hadd") + c("hmul"), {}};
            const auto rd = arg(args, "dram__bytes_read.sum"), wr = arg(args, "dram__bytes_write.sum");
            if (rd || wr) r.dram_bytes = rd.value_or(0) + wr.value_or(0);
            s.counter_ranges.push_back(r);
        }
    }
    void device(const json& d) {
        if (!s.device_name.empty() || !d.is_object()) return;
        s.device_name = d.value("name", "");
        if (d.contains("numSms") && d["numSms"].is_number()) s.sms = d["numSms"].get<int>();
    }
    void finish() {
        std::sort(gpu.begin(), gpu.end());
        if (!gpu.empty()) {
            double first = gpu.front().first, last = 0, busy = 0, cur_start = gpu.front().first, cur_end = gpu.front().second;
            for (const auto& [a, b] : gpu) {
                last = std::max(last, b);
                if (a > cur_end) busy += cur_end - cur_start, cur_start = a, cur_end = b;
                else cur_end = std::max(cur_end, b);
            }
            busy += cur_end - cur_start;
            s.span_us = last - first, s.gpu_busy_us = busy;
        }
        std::vector<double> lat;
        for (const auto& [c, ts] : kernel_start)
            if (auto it = launch_start.find(c); it != launch_start.end()) lat.push_back(ts - it->second);
        s.launches_matched = lat.size();
        if (!lat.empty()) {
            std::sort(lat.begin(), lat.end());
            s.launch_latency_us = lat.size() % 2 ? lat[lat.size() / 2] : (lat[lat.size() / 2 - 1] + lat[lat.size() / 2]) / 2;
        }
        std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.total_us > b.total_us; });
        s.format = lab_format ? "lab" : "kineto";
    }
};

}  // namespace

Summary read(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file.string(), "cannot be read", "check the path");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b) {
        try {
            text = gzip_decompress(text);
        } catch (const std::exception& e) {
            throw InputError(file.string(), std::string("a gzip file that does not decompress (") + e.what() + ")",
                             "the file is truncated or damaged: copy or capture it again");
        }
    }
    Reader r;
    bool top_array = false, top_object = false;
    std::string top_key;  // the top-level key being read: "traceEvents", "deviceProperties", ...
    const auto callback = [&](int depth, json::parse_event_t ev, json& parsed) {
        if (depth == 0 && ev == json::parse_event_t::array_start) top_array = true;
        if (depth == 0 && ev == json::parse_event_t::object_start) top_object = true;
        if (depth == 1 && ev == json::parse_event_t::key) top_key = parsed.get<std::string>();
        const int event_depth = top_array ? 1 : 2;
        if (ev == json::parse_event_t::object_end && depth == event_depth) {
            if (top_array || top_key == "traceEvents") r.saw_events = true, r.event(parsed);
            else if (top_key == "deviceProperties") r.device(parsed);
            else return true;
            return false;  // reduced: drop it
        }
        if (ev == json::parse_event_t::object_end && depth == 1 && top_object && top_key == "otherData") {
            r.lab_format = parsed.contains("lesson");
            if (r.s.device_name.empty() && parsed.contains("device") && parsed["device"].is_string()) r.s.device_name = parsed["device"].get<std::string>();
            return false;
        }
        return !(depth == 1 && top_object && ev == json::parse_event_t::value && top_key != "traceEvents");
    };
    try {
        json::parse(text, callback);
    } catch (const json::parse_error& e) {
        throw InputError(fmt::format("{}: byte {}", file.string(), e.byte), std::string("not valid JSON: ") + e.what(),
                         "a trace cut short (a profiler that did not finish writing?): capture it again");
    }
    if (!r.saw_events)
        throw InputError(file.string(), "JSON, but not a trace: no 'traceEvents' list (Kineto, Chrome) and not a list of events",
                         "pass a PyTorch profiler trace (export_chrome_trace / tensorboard_trace_handler) or `lab run --trace`'s file");
    r.finish();
    return r.s;
}

}  // namespace lab::trace
