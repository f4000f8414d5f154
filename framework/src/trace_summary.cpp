// A profiler trace, summarised (see trace_summary.hpp). nlohmann's parser calls back at the end
// of each event object; the event is reduced to what the summary needs and discarded there, so
// memory holds the text and the compact records, never the whole document as a DOM.
#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "gzip.hpp"
#include "input_file.hpp"
#include "kernel_names.hpp"
#include "trace_timeline.hpp"

namespace lab::trace {

namespace {

using json = nlohmann::json;

// A number written as a string ("ts": "1.5e3"); an overflowing one ("1e400") counts as absent.
std::optional<double> num(const std::string& t) {
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    return end == t.c_str() || !std::isfinite(v) ? std::nullopt : std::optional<double>(v);
}
// An id written as a number (Kineto: "correlation": 14) or a string (lab: "14", or any text),
// the same text either way, so a launch and its kernel match whichever way each was written.
std::string id_text(const std::string* text, std::optional<double> number) {
    if (number) return std::floor(*number) == *number ? fmt::format("{:.0f}", *number) : fmt::format("{}", *number);
    if (!text) return "";
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    return !text->empty() && *end == '\0' && std::isfinite(v) ? id_text(nullptr, v) : *text;
}
// "Memcpy HtoD (Pageable -> Device)", "memcpy DtoH": the direction token.
std::string copy_kind(const std::string& name) {
    for (std::size_t i = 0; i + 4 <= name.size(); ++i)
        if (std::isupper(static_cast<unsigned char>(name[i])) && name[i + 1] == 't' && name[i + 2] == 'o' &&
            std::isupper(static_cast<unsigned char>(name[i + 3])) && (i == 0 || name[i - 1] == ' '))
            return name.substr(i, 4);
    return "other";
}

// One complete event, as much of it as the summary reads.
struct Ev {
    std::string ph, cat, name, sync_kind, stream, tid, wait_on_stream, wait_record;
    double ts = 0, dur = 0;
    std::string bad_time;  // "dur -5", "ts \"x\"": a time field that is no time
    bool ts_read = false, dur_read = false, name_read = false;
    std::optional<std::string> correlation;
    std::optional<double> bytes;
    std::vector<std::pair<std::string, double>> counters;  // CUPTI metric values (smsp__*, dram__*)
};

struct Reader {
    Summary s;
    std::unordered_map<std::string, std::size_t> kernel_index;
    std::unordered_map<std::string, double> launch_start;          // correlation -> runtime/driver call start
    std::vector<std::pair<std::string, std::size_t>> kernel_launch;  // correlation, kernel (index into gpu)
    std::vector<std::pair<std::string, std::size_t>> copy_call;      // correlation, copy or memset (index into gpu)
    std::vector<StreamWait> waits;                                    // streams made to wait on another
    std::vector<std::string> wait_records;                            // each wait's cudaEventRecord correlation ("" unknown)
    std::vector<DeviceEvent> gpu;                                     // kernels, copies, memsets
    std::vector<DeviceEvent> setup;                                   // lab's first touch, cache flushes
    std::vector<HostEvent> host;                                      // ops, annotations, calls, syncs
    std::vector<std::pair<std::size_t, std::string>> sync_calls;      // host index, correlation
    Intervals untraced;                                               // lab's "untraced" ranges
    Intervals host_syncs;                                             // syncs that block the host
    std::vector<std::pair<double, double>> syncs;                     // every sync: start, host time blocked
    std::vector<std::string> names, streams;                          // held once, by index
    std::unordered_map<std::string, std::uint32_t> name_index, stream_index;
    std::vector<Ev> syncs_seen;                                       // sync records, read in finish()
    std::unordered_set<std::string> polls;                            // correlations of cuda*Query calls
    bool saw_events = false, lab_format = false;

    static std::uint32_t intern(const std::string& text, std::vector<std::string>& table, std::unordered_map<std::string, std::uint32_t>& index) {
        auto [it, fresh] = index.emplace(text, static_cast<std::uint32_t>(table.size()));
        if (fresh) table.push_back(text);
        return it->second;
    }
    void device(const Ev& e, double dur, GpuKind kind, std::vector<DeviceEvent>& into) {
        into.push_back({e.ts, e.ts + dur, intern(e.name, names, name_index), intern(e.stream.empty() ? e.tid : e.stream, streams, stream_index), kind});
    }
    void host_event(const Ev& e, double dur, bool call) { host.push_back({e.ts, e.ts + dur, intern(e.name, names, name_index), call}); }

    // Why a complete event cannot be read, or "": its times placed it and its name is what the
    // summary shows (a missing ts read as 0 put it at the epoch, a missing dur made it take no time).
    static std::string left_out_because(const Ev& e) {
        if (!e.bad_time.empty()) return e.bad_time;
        if (!e.ts_read) return "no ts";
        if (!e.dur_read) return "no dur";
        if (!e.name_read || e.name.empty()) return "no name (or one that is neither text nor a number)";
        return "";
    }
    void event(const Ev& e) {
        if (e.ph != "X") return;
        if (const std::string why = left_out_because(e); !why.empty()) {
            if (s.events_left_out++ == 0) s.first_left_out = (e.name.empty() ? "an event" : "'" + excerpt(e.name, 60) + "'") + ": " + why;
            return;
        }
        ++s.events;
        const std::string& cat = e.cat;
        const double ts = e.ts, dur = std::max(0.0, e.dur);
        auto counter = [&](const std::string& key) -> std::optional<double> {
            for (const auto& [k, v] : e.counters)
                if (k == key) return v;
            return std::nullopt;
        };
        if (cat == "kernel" || cat == "gemm") {  // lab's CPU traces name BLAS calls "gemm"
            auto [it, fresh] = kernel_index.emplace(e.name, s.kernels.size());
            if (fresh) s.kernels.push_back({e.name, 0, 0, {}});
            ++s.kernels[it->second].count, s.kernels[it->second].total_us += dur;
            ++s.kernel_count, s.kernel_total_us += dur;
            if (e.correlation) kernel_launch.push_back({*e.correlation, gpu.size()});
            device(e, dur, GpuKind::kernel, gpu);
        } else if (cat == "gpu_memcpy" || cat == "memcpy") {
            const double bytes = e.bytes.value_or(0);
            CopyStats& k = s.memcpy_by_kind[copy_kind(e.name)];
            ++k.count, k.bytes += bytes, k.total_us += dur;
            if (e.name.find("Pageable") != std::string::npos) ++k.pageable;
            else if (e.name.find("Pinned") != std::string::npos) ++k.pinned;
            if (e.correlation) copy_call.push_back({*e.correlation, gpu.size()});
            ++s.memcpy.count, s.memcpy.bytes += bytes, s.memcpy.total_us += dur;
            device(e, dur, GpuKind::copy, gpu);
        } else if (cat == "gpu_memset" || cat == "memset") {
            ++s.memset_count;
            if (e.correlation) copy_call.push_back({*e.correlation, gpu.size()});
            device(e, dur, GpuKind::memset, gpu);
        } else if (cat == "cuda_sync" || cat == "sync") {
            syncs_seen.push_back(e);  // read at the end, once every runtime call's name is known
        } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime" || cat == "driver") {
            if (e.correlation) launch_start.emplace(*e.correlation, ts);
            if (e.correlation && e.name.find("Query") != std::string::npos) polls.insert(*e.correlation);
            if (e.name.find("Synchronize") != std::string::npos)
                ++s.sync_calls_by_name[e.name], ++s.sync_call_count, s.sync_call_host_us += dur;
            if (e.name.find("Launch") != std::string::npos && e.name.find("HostFunc") == std::string::npos) ++s.launch_call_count;
            host_event(e, dur, true);
        } else if (cat == "cpu_op" || cat == "user_annotation" || cat == "python_function" || cat == "workload") {
            host_event(e, dur, false);
            if (cat == "workload") {
                Window w;
                w.name = e.name, w.start_ts_us = ts, w.dur_us = dur;
                s.windows.push_back(std::move(w));
            }
        } else if (cat == "setup") {  // lab's CPU traces: the device's own work, not the lesson's
            device(e, dur, GpuKind::setup, setup);
        } else if (cat == "untraced") {
            untraced.push_back({ts, ts + dur});
        } else if (cat == "cuda_profiler_range") {
            auto c = [&](const char* op) { return counter(fmt::format("smsp__sass_thread_inst_executed_op_{}_pred_on.sum", op)).value_or(0); };
            CounterRange r{e.name, ts, dur, 2 * c("ffma") + c("fadd") + c("fmul"), 2 * c("dfma") + c("dadd") + c("dmul"), 2 * c("hfma") + c("hadd") + c("hmul"), {}};
            const auto rd = counter("dram__bytes_read.sum"), wr = counter("dram__bytes_write.sum");
            if (rd || wr) r.dram_bytes = rd.value_or(0) + wr.value_or(0);
            s.counter_ranges.push_back(r);
        }
    }
    // A sync record. CUPTI records a cudaEventQuery (a poll that returns at once) as an Event Sync
    // too: by its runtime call's name it is told apart, counted as a poll, and blocks nothing.
    void sync(const Ev& e) {
        const double ts = e.ts, dur = std::max(0.0, e.dur);
        const bool poll = e.correlation && polls.count(*e.correlation);
        const std::string kind = poll ? "Event Query (a poll)" : e.sync_kind.empty() ? e.name : e.sync_kind;
        const bool blocks = !poll && host_waits(kind);
        ++s.sync_count;
        ++s.syncs_by_kind[kind], s.sync_us_by_kind[kind] += dur;
        syncs.push_back({ts, blocks ? dur : 0.0});
        if (!host_waits(kind) && !e.wait_on_stream.empty() && !e.stream.empty()) {
            waits.push_back({intern(e.stream, streams, stream_index), intern(e.wait_on_stream, streams, stream_index), ts, ts});
            wait_records.push_back(e.wait_record);
        }
        if (blocks) {  // host activity; a stream wait event is the device's
            s.sync_host_us += dur, host_syncs.push_back({ts, ts + dur});
            if (e.correlation) sync_calls.push_back({host.size(), *e.correlation});
            host_event(e, dur, true);
        }
    }
    // The setup time inside [first, last) that no GPU event or untraced stretch covers already (so
    // that no stretch leaves the span twice), and the setup tasks' names there, most time first.
    void setup_in_span(const Intervals& setup_time, double first, double last) {
        if (setup_time.empty()) return;
        Intervals taken = untraced;
        for (const auto& g : gpu) taken.push_back({g.start, g.end});
        taken = merged(std::move(taken));
        auto own = [&](double a, double b) {
            a = std::max(a, first), b = std::min(b, last);
            return b > a ? b - a - covered(taken, a, b) : 0.0;
        };
        for (const auto& [a, b] : setup_time) s.setup_us += own(a, b);
        std::map<std::string, double> by_name;
        for (const auto& e : setup) by_name[names[e.name]] += own(e.start, e.end);
        std::vector<std::pair<std::string, double>> order;
        for (const auto& [name, us] : by_name)
            if (us > 0) order.push_back({name, us});
        std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
        for (const auto& [name, us] : order) s.setup_names.push_back(name);
    }
    // Short names for the kernels, over all of them so that they do not change with --top; a gap's
    // neighbours take their kernel's (a copy's or memset's name is short already).
    void name_shorts() {
        std::vector<std::string> whole;
        for (const auto& k : s.kernels) whole.push_back(k.name);
        const auto shorts = short_kernel_names(whole);
        std::unordered_map<std::string, std::string> short_of;
        for (std::size_t i = 0; i < shorts.size(); ++i) s.kernels[i].short_name = shorts[i], short_of[whole[i]] = shorts[i];
        auto name = [&](IdleGap& g) {
            auto a = short_of.find(g.after), b = short_of.find(g.before);
            g.after_short = a == short_of.end() ? g.after : a->second;
            g.before_short = b == short_of.end() ? g.before : b->second;
        };
        for (auto& g : s.idle_gaps) name(g);
        for (auto& w : s.windows)
            for (auto& g : w.idle_gaps) name(g);
    }
    // Kineto's ranges from CUPTI's range profiler carry no time of their own: each gets the
    // profiler's span divided evenly, back to back. Two measured ranges are never that alike.
    void counter_durations() {
        const auto& r = s.counter_ranges;
        if (r.size() < 2) return;
        const double d = r.front().dur_us, slack = std::max(1.0, 1e-6 * d);
        bool even = d > 0;
        for (std::size_t i = 0; even && i < r.size(); ++i)
            even = std::fabs(r[i].dur_us - d) <= slack && (i == 0 || std::fabs(r[i].start_us - r[i - 1].start_us - d) <= slack);
        s.counter_durations_measured = !even;
    }
    // The syncs within the span, and within each workload window.
    void count_syncs() {
        if (!gpu.empty()) {
            const double first = gpu.front().start;
            double last = gpu.front().end;
            for (const auto& g : gpu) last = std::max(last, g.end);
            for (const auto& [ts, host_us] : syncs)
                if (ts >= first && ts <= last) ++s.sync_in_span_count, s.sync_in_span_host_us += host_us;
        }
        for (auto& w : s.windows)
            for (const auto& [ts, host_us] : syncs)
                if (ts >= w.start_ts_us && ts <= w.start_ts_us + w.dur_us) ++w.syncs, w.sync_host_us += host_us;
    }
    // Span, busy and idle time, per stream and in the largest gaps (and each workload window's),
    // lab's untraced stretches and device setup left out.
    void timeline() {
        std::stable_sort(gpu.begin(), gpu.end(), [](const DeviceEvent& a, const DeviceEvent& b) { return a.start < b.start; });
        Intervals setup_time;
        for (const auto& e : setup) setup_time.push_back({e.start, e.end});
        setup_time = merged(std::move(setup_time));
        if (!gpu.empty()) {
            double first = gpu.front().start, last = 0, busy = 0, cur_start = gpu.front().start, cur_end = gpu.front().end;
            for (const auto& g : gpu) {
                const double a = g.start, b = g.end;
                last = std::max(last, b);
                if (a > cur_end) busy += cur_end - cur_start, cur_start = a, cur_end = b;
                else cur_end = std::max(cur_end, b);
            }
            busy += cur_end - cur_start;
            // Untraced spans hold no traced GPU event: their overlap with the span is not idle time.
            double untraced_us = 0;
            for (const auto& [a, b] : untraced) untraced_us += std::max(0.0, std::min(b, last) - std::max(a, first));
            s.untraced_us = untraced_us;
            setup_in_span(setup_time, first, last);
            s.span_us = std::max(0.0, last - first - untraced_us - s.setup_us), s.gpu_busy_us = busy;
        }
        s.streams = stream_stats(gpu, streams);
        for (const auto& [a, b] : host_syncs) s.sync_host_setup_us += covered(setup_time, a, b);
        Intervals excluded = untraced;
        excluded.insert(excluded.end(), setup_time.begin(), setup_time.end());
        const Intervals left_out = merged(std::move(excluded)), blocking = merged(host_syncs);
        const GapContext context{left_out, host, names, blocking};
        s.idle_gaps = largest_gaps(gpu, context, kMaxIdleGaps);
        std::stable_sort(s.windows.begin(), s.windows.end(), [](const Window& a, const Window& b) { return a.start_ts_us < b.start_ts_us; });
        window_gaps(s.windows, gpu, context);
        count_syncs();
    }
    void finish() {
        for (const auto& e : syncs_seen) sync(e);
        std::vector<MatchedLaunch> matched;
        std::vector<double> lat;
        // In a lab trace, lab's own re-measuring of the ceilings (calibrate.*: hundreds of empty
        // kernels) would outvote the lesson's launches: the latency is the lesson's kernels'.
        auto lab_own = [&](std::size_t k) { return lab_format && names[gpu[k].name].rfind("calibrate.", 0) == 0; };
        bool lesson_launch = false;
        for (const auto& [c, k] : kernel_launch) lesson_launch |= launch_start.count(c) && !lab_own(k);
        for (const auto& [c, k] : kernel_launch)
            if (auto it = launch_start.find(c); it != launch_start.end()) {
                if (lesson_launch && lab_own(k)) {
                    ++s.launches_left_out;
                    continue;
                }
                matched.push_back({k, it->second}), lat.push_back(gpu[k].start - it->second);
            }
        s.launches_matched = lat.size();
        if (!lat.empty()) s.launch_latency_us = latency_stats(lat).median_us;
        std::vector<double> enqueued(gpu.size(), std::nan(""));
        for (const auto* calls : {&kernel_launch, &copy_call})
            for (const auto& [c, k] : *calls)
                if (auto it = launch_start.find(c); it != launch_start.end()) enqueued[k] = it->second;
        // A wait covers the work enqueued before the event it waits on was recorded, where the
        // trace names that record call.
        for (std::size_t w = 0; w < waits.size(); ++w)
            if (auto it = launch_start.find(wait_records[w]); !wait_records[w].empty() && it != launch_start.end())
                waits[w].covers_until = std::min(waits[w].ts, it->second);
        split_launches(gpu, enqueued, setup, waits, matched, s.launch_idle, s.launch_queued);
        counter_durations();
        // A sync whose runtime call is in the trace too (Kineto's cuda_sync beside its
        // cudaStreamSynchronize) is that call: the host activity in a gap names it once.
        std::vector<bool> duplicate(host.size(), false);
        for (const auto& [i, c] : sync_calls) duplicate[i] = launch_start.count(c) > 0;
        std::size_t kept = 0;
        for (std::size_t i = 0; i < host.size(); ++i)
            if (!duplicate[i]) host[kept++] = host[i];
        host.resize(kept);

        timeline();
        // lab numbered its CPU tasks before it named them after their workloads ("host kernel #12"):
        // in a trace written then, one kernel, many launches.
        if (lab_format) {
            std::vector<KernelStats> unnumbered;
            std::unordered_map<std::string, std::size_t> at;
            for (auto k : s.kernels) {
                if (auto h = k.name.rfind(" #"); h != std::string::npos && h + 2 < k.name.size() &&
                                                  k.name.find_first_not_of("0123456789", h + 2) == std::string::npos)
                    k.name.resize(h);
                auto [it, fresh] = at.emplace(k.name, unnumbered.size());
                if (fresh) unnumbered.push_back({k.name, 0, 0, {}});
                unnumbered[it->second].count += k.count, unnumbered[it->second].total_us += k.total_us;
            }
            s.kernels = std::move(unnumbered);
        }
        std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.total_us > b.total_us; });
        name_shorts();
        s.format = lab_format ? "lab" : "kineto";
    }
};

// nlohmann's SAX interface: containers are counted (`depth`), the key of each open level kept, and
// an event's fields set as its scalars arrive; at the event's end it is handed to the Reader.
// Nothing but the one event in flight is held.
struct Sax : nlohmann::json_sax<json> {
    Reader& r;
    std::vector<std::string> keys{""};  // keys[d]: the last key read at depth d
    int depth = 0;
    bool top_array = false;
    Ev ev;
    std::size_t error_at = 0;
    std::string error;
    bool too_deep = false;
    explicit Sax(Reader& reader) : r(reader) {}

    int event_depth() const { return top_array ? 2 : 3; }
    bool in_events() const { return top_array || (keys.size() > 1 && keys[1] == "traceEvents"); }
    void scalar(const std::string* text, std::optional<double> number) {
        const std::string& k = keys[static_cast<std::size_t>(depth)];
        if (in_events() && depth == event_depth()) {
            if (k == "ts" || k == "dur") {
                // Kineto writes numbers; a number written as text is read too. Anything else, a
                // negative duration or one past 30 days (in µs) is no time: the event is left out.
                const std::optional<double> v = number ? number : text ? num(*text) : std::nullopt;
                const bool ok = v && std::isfinite(*v) && (k == "ts" || (*v >= 0 && *v <= 30 * 86400e6));
                if (!ok && ev.bad_time.empty())
                    ev.bad_time = k + " " + (number ? fmt::format("{}", *number) : text ? "\"" + excerpt(*text, 20) + "\"" : std::string("null"));
                (k == "ts" ? ev.ts : ev.dur) = ok ? *v : 0;
                (k == "ts" ? ev.ts_read : ev.dur_read) = true;
            }
            else if (text && k == "ph") ev.ph = *text;
            else if (text && k == "cat") ev.cat = *text;
            // A name written as a number ("name": 12) is its text, as an id is.
            else if ((text || number) && k == "name") ev.name = text ? *text : id_text(nullptr, number), ev.name_read = true;
            else if (k == "tid") ev.tid = id_text(text, number);
        } else if (in_events() && depth == event_depth() + 1 && keys[static_cast<std::size_t>(event_depth())] == "args") {
            const std::optional<double> v = number ? number : (text ? num(*text) : std::nullopt);
            if (k == "correlation" && !id_text(text, number).empty()) ev.correlation = id_text(text, number);
            else if (k == "stream") ev.stream = id_text(text, number);
            else if (k == "bytes") ev.bytes = v;
            else if (k == "cuda_sync_kind" && text) ev.sync_kind = *text;
            else if (k == "wait_on_stream") ev.wait_on_stream = id_text(text, number);
            else if (k == "wait_on_cuda_event_record_corr_id") ev.wait_record = id_text(text, number);
            else if (v && (k.rfind("smsp__", 0) == 0 || k.rfind("dram__", 0) == 0)) ev.counters.push_back({k, *v});
        } else if (depth == 3 && keys[1] == "deviceProperties") {
            if (k == "name" && text && r.s.device_name.empty()) r.s.device_name = *text;
            if (k == "numSms" && number && *number >= 1 && *number <= 1e6 && !r.s.sms) r.s.sms = static_cast<int>(*number);
        } else if (depth == 2 && keys[1] == "otherData") {
            if (k == "lesson") r.lab_format = true;
            if (k == "device" && text && r.s.device_name.empty()) r.s.device_name = *text;
        }
    }
    bool null() override { scalar(nullptr, std::nullopt); return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t v) override { scalar(nullptr, static_cast<double>(v)); return true; }
    bool number_unsigned(number_unsigned_t v) override { scalar(nullptr, static_cast<double>(v)); return true; }
    bool number_float(number_float_t v, const string_t&) override { scalar(nullptr, v); return true; }
    bool string(string_t& v) override { scalar(&v, std::nullopt); return true; }
    bool binary(binary_t&) override { return true; }
    bool key(string_t& k) override { keys[static_cast<std::size_t>(depth)] = k; return true; }
    bool start_object(std::size_t) override { return open(false); }
    bool start_array(std::size_t) override { return open(true); }
    bool open(bool array) {
        if (depth == 0 && array) top_array = true;
        if (depth >= kMaxTraceDepth) {
            too_deep = true;  // reported by read() with the limit's name
            return false;
        }
        ++depth;
        if (keys.size() <= static_cast<std::size_t>(depth)) keys.resize(static_cast<std::size_t>(depth) + 1);
        keys[static_cast<std::size_t>(depth)].clear();
        if (!array && in_events() && depth == event_depth()) ev = Ev{};
        return true;
    }
    bool end_object() override {
        if (in_events() && depth == event_depth()) r.saw_events = true, r.event(ev);
        --depth;
        return true;
    }
    bool end_array() override {
        if (depth == 2 && !top_array && keys[1] == "traceEvents") r.saw_events = true;  // an empty list is a trace too
        --depth;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        error_at = position, error = e.what();
        return false;
    }
};

}  // namespace

bool host_waits(const std::string& kind) {
    std::string k;
    for (char c : kind) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return k.find("wait event") == std::string::npos;
}

Summary read(const std::filesystem::path& file) {
    std::string text = read_input_file(file, "the trace", kMaxTraceBytes, "check the path");
    const bool gzipped = text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b;
    if (gzipped) {
        try {
            text = gzip_decompress(text, GzipLimits{kMaxTraceBytes, kMaxGzipRatio, kGzipRatioAfter});
        } catch (const GzipLimitExceeded& e) {
            throw InputError(file.string(), std::string("a gzip file lab will not expand: ") + e.what(),
                             "give the profiler's own trace; a real trace compresses about 10 to 30-fold");
        } catch (const std::exception& e) {
            throw InputError(file.string(), std::string("a gzip file that does not decompress (") + e.what() + ")",
                             "the file is truncated or damaged: copy or capture it again");
        }
    }
    Reader r;
    Sax sax(r);
    const bool parsed = json::sax_parse(text, &sax);
    if (sax.too_deep)
        throw InputError(file.string(), fmt::format("arrays and objects nested deeper than {} levels", kMaxTraceDepth),
                         "no profiler nests a trace that deep: capture it again");
    // The array form cut just before its closing ']' (after an event, a comma or whitespace): the
    // parser ran out of text with only the top-level array open, every event before it whole
    // and read. Chrome's importer (catapult) reads such a trace, since a writer that crashed
    // cannot close it. Nothing else cut short is read.
    r.s.unclosed_array = !parsed && sax.top_array && sax.depth == 1 && sax.error.find("unexpected end of input") != std::string::npos;
    if ((!parsed || !sax.error.empty()) && !r.s.unclosed_array) {
        // A number beyond a double (1e400) is nlohmann's out_of_range.406, "number overflow
        // parsing '1e400'": the text is whole, so not a trace cut short. Said as json_input.cpp
        // says it for run records: the number, the range, and that no profiler writes one.
        if (const auto q = sax.error.find("number overflow parsing '"); q != std::string::npos) {
            const std::size_t from = q + 25, to = sax.error.find('\'', from);
            throw InputError(fmt::format("{}: byte {}{}", file.string(), sax.error_at, gzipped ? " of the decompressed text" : ""),
                             fmt::format("the number {} is beyond the range of a double (about 1.8e308)",
                                         excerpt(sax.error.substr(from, to == std::string::npos ? std::string::npos : to - from), 40)),
                             "no profiler writes such a number: the trace was edited or damaged; capture it again");
        }
        // nlohmann's "[json.exception.parse_error.101] parse error at line 2, column 1: " says
        // again where the byte offset already does: the reason alone.
        const std::size_t reason = sax.error.find(": ", sax.error.find("column"));
        // In a .gz the offset is the decompressed text's: a reader looking at byte 152828 of a
        // 12 kB file would think the number wrong.
        throw InputError(fmt::format("{}: byte {}{}", file.string(), sax.error_at, gzipped ? " of the decompressed text" : ""),
                         "not valid JSON: " + (reason == std::string::npos ? sax.error : sax.error.substr(reason + 2)),
                         "a trace cut short (a profiler that did not finish writing?): capture it again");
    }
    if (!r.saw_events)
        throw InputError(file.string(), "JSON, but not a trace: no 'traceEvents' list (Kineto, Chrome) and not a list of events",
                         "pass a PyTorch profiler trace (export_chrome_trace / tensorboard_trace_handler) or `lab run --trace`'s file");
    r.finish();
    return r.s;
}

}  // namespace lab::trace
