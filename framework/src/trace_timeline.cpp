// Per-stream busy time, the largest idle gaps and the launch split (see trace_timeline.hpp).
#include "trace_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace lab::trace {

namespace {

double overlap(double a, double b, double from, double to) { return std::max(0.0, std::min(b, to) - std::max(a, from)); }

// The parts of [from, to) that the merged intervals leave uncovered.
Intervals uncovered(const Intervals& merged, double from, double to) {
    Intervals out;
    auto it = std::lower_bound(merged.begin(), merged.end(), from, [](const auto& m, double t) { return m.second <= t; });
    for (; it != merged.end() && it->first < to; ++it) {
        if (it->first > from) out.push_back({from, it->first});
        from = std::max(from, it->second);
    }
    if (from < to) out.push_back({from, to});
    return out;
}

// What the host did during a gap's idle stretches (`idle`: setup and untraced time left out, when
// the device was not waiting on the host): the innermost op covering at least half of it (an op
// inside an annotation inside another says most), else the op covering most of it; and the calls
// by name, most time first, those under 1% of the gap left out.
void host_during(IdleGap& gap, const Intervals& idle, const std::vector<HostEvent>& host, const std::vector<std::string>& names) {
    if (idle.empty()) return;
    const double a = idle.front().first, b = idle.back().second, len = gap.dur_us;
    const HostEvent* best = nullptr;
    double best_overlap = 0;
    std::map<std::uint32_t, HostShare> calls;
    for (const auto& h : host) {
        if (h.end <= a || h.start >= b) continue;
        double o = 0;
        for (const auto& [from, to] : idle) o += overlap(from, to, h.start, h.end);
        if (o <= 0) continue;
        if (h.call) {
            HostShare& c = calls[h.name];
            ++c.count, c.overlap_us += o;
            continue;
        }
        const bool covers = o >= len / 2, best_covers = best && best_overlap >= len / 2;
        const bool better = !best || (covers && !best_covers) ||
                            (covers && best_covers && (h.end - h.start < best->end - best->start ||
                                                       (h.end - h.start == best->end - best->start && o > best_overlap))) ||
                            (!covers && !best_covers && o > best_overlap);
        if (better) best = &h, best_overlap = o;
    }
    if (best) gap.host_op = HostShare{names[best->name], 1, best_overlap};
    for (auto& [name, c] : calls)
        if (c.overlap_us >= 0.01 * len) c.name = names[name], gap.host_calls.push_back(c);
    std::stable_sort(gap.host_calls.begin(), gap.host_calls.end(),
                     [](const HostShare& x, const HostShare& y) { return x.overlap_us > y.overlap_us; });
    if (gap.host_calls.size() > 3) gap.host_calls.resize(3);
}

}  // namespace

Intervals merged(Intervals v) {
    std::sort(v.begin(), v.end());
    Intervals out;
    for (const auto& [a, b] : v) {
        if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
        else out.push_back({a, b});
    }
    return out;
}

double covered(const Intervals& merged, double from, double to) {
    double total = to - from;
    for (const auto& [a, b] : uncovered(merged, from, to)) total -= b - a;
    return std::max(0.0, total);
}

std::vector<StreamStats> stream_stats(const std::vector<DeviceEvent>& events, const std::vector<std::string>& streams) {
    std::vector<StreamStats> out(streams.size());
    std::vector<Intervals> spans(streams.size());
    for (std::size_t i = 0; i < streams.size(); ++i) out[i].stream = streams[i];
    for (const auto& e : events) {
        StreamStats& s = out[e.stream];
        ++(e.kind == GpuKind::kernel ? s.kernels : e.kind == GpuKind::copy ? s.copies : s.memsets);
        spans[e.stream].push_back({e.start, e.end});
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        for (const auto& [a, b] : merged(std::move(spans[i]))) out[i].busy_us += b - a;
    // A stream named only by a wait (cudaStreamWaitEvent's `wait_on_stream`) ran nothing traced.
    std::erase_if(out, [](const StreamStats& s) { return s.kernels + s.copies + s.memsets == 0; });
    std::stable_sort(out.begin(), out.end(), [](const StreamStats& a, const StreamStats& b) { return a.busy_us > b.busy_us; });
    return out;
}

namespace {

// A gap before it is described: [from, to) between the event `after` (the latest-ending so far)
// and the event `before`, with `idle` µs of it neither excluded nor busy.
struct RawGap {
    double from, to, idle;
    std::size_t after, before;
};

// Every gap, in time order.
std::vector<RawGap> raw_gaps(const std::vector<DeviceEvent>& sorted, const Intervals& excluded) {
    std::vector<RawGap> gaps;
    // Walking the events by start: `last` is the event whose end is the latest so far, the one a
    // gap follows.
    std::size_t last = 0;
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        const double end = sorted[last].end;
        if (sorted[i].start > end) {
            const double idle = sorted[i].start - end - covered(excluded, end, sorted[i].start);
            if (idle > 0) gaps.push_back({end, sorted[i].start, idle, last, i});
        }
        if (sorted[i].end > end) last = i;
    }
    return gaps;
}

bool next_to_copy(const RawGap& g, const std::vector<DeviceEvent>& sorted) {
    return sorted[g.after].kind == GpuKind::copy || sorted[g.before].kind == GpuKind::copy;
}

// A host-blocking sync that returned during the gap (or as it began): the host waited for the
// device to drain, and the device then waited for the host's next launch. A sync the host sat in
// all through the gap did not make it: the host was waiting for the device, not the reverse.
bool next_to_sync(const RawGap& g, const Intervals& syncs) {
    auto it = std::lower_bound(syncs.begin(), syncs.end(), g.from, [](const auto& m, double t) { return m.second < t; });
    return it != syncs.end() && it->second <= g.to;
}

IdleGap describe(const RawGap& g, const std::vector<DeviceEvent>& sorted, const GapContext& c) {
    IdleGap gap;
    gap.start_ts_us = g.from, gap.offset_us = g.from - sorted.front().start, gap.dur_us = g.idle;
    gap.after = c.names[sorted[g.after].name], gap.before = c.names[sorted[g.before].name];
    host_during(gap, uncovered(c.excluded, g.from, g.to), c.host, c.names);
    gap.next_to_copy = next_to_copy(g, sorted), gap.next_to_sync = next_to_sync(g, c.host_syncs);
    return gap;
}

}  // namespace

std::vector<IdleGap> largest_gaps(const std::vector<DeviceEvent>& sorted, const GapContext& context, std::size_t count) {
    if (sorted.empty()) return {};
    std::vector<RawGap> gaps = raw_gaps(sorted, context.excluded);
    std::stable_sort(gaps.begin(), gaps.end(), [](const RawGap& a, const RawGap& b) { return a.idle > b.idle; });
    if (gaps.size() > count) gaps.resize(count);
    std::vector<IdleGap> out;
    for (const auto& g : gaps) out.push_back(describe(g, sorted, context));
    return out;
}

void window_gaps(std::vector<Window>& windows, const std::vector<DeviceEvent>& sorted, const GapContext& context) {
    if (windows.empty() || sorted.empty()) return;
    const std::vector<RawGap> gaps = raw_gaps(sorted, context.excluded);
    for (auto& w : windows) {
        const double from = w.start_ts_us, to = w.start_ts_us + w.dur_us;
        w.offset_us = from - sorted.front().start;
        auto first = std::lower_bound(sorted.begin(), sorted.end(), from, [](const DeviceEvent& e, double t) { return e.start < t; });
        for (auto e = first; e != sorted.end() && e->start <= to; ++e)
            ++(e->kind == GpuKind::kernel ? w.kernels : e->kind == GpuKind::copy ? w.copies : w.memsets);
        // Gaps in time order: from the first whose start is in the window, while its next event
        // starts in it too; the event before it must have started in the window as well.
        const RawGap *largest = nullptr, *caused = nullptr;
        auto g = std::lower_bound(gaps.begin(), gaps.end(), from, [](const RawGap& r, double t) { return r.from < t; });
        for (; g != gaps.end() && sorted[g->before].start <= to; ++g) {
            if (sorted[g->after].start < from) continue;
            ++w.gaps, w.idle_us += g->idle;
            if (!largest || g->idle > largest->idle) largest = &*g;
            if ((next_to_copy(*g, sorted) || next_to_sync(*g, context.host_syncs)) && (!caused || g->idle > caused->idle)) caused = &*g;
        }
        auto keep = [&](const RawGap* r) {
            if (!r || w.idle_gaps.size() >= kWindowGaps) return;
            IdleGap gap = describe(*r, sorted, context);
            gap.window_offset_us = r->from - from;
            w.idle_gaps.push_back(std::move(gap));
        };
        keep(largest);
        if (caused != largest) keep(caused);
    }
}

LatencyStats latency_stats(std::vector<double> v) {
    LatencyStats s;
    s.count = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    s.median_us = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.p90_us = v[static_cast<std::size_t>(std::ceil(0.9 * double(n))) - 1];
    return s;
}

void split_launches(const std::vector<DeviceEvent>& work, const std::vector<double>& enqueued, const std::vector<DeviceEvent>& setup,
                    const std::vector<StreamWait>& waits, const std::vector<MatchedLaunch>& launches, LatencyStats& idle,
                    LatencyStats& queued) {
    // A stream runs its work in order: what had started on it before a kernel was enqueued
    // before it, and the latest end among that is when the stream became free for this kernel.
    // The launches index `work`, which comes first in `events`.
    std::vector<DeviceEvent> events = work;
    events.insert(events.end(), setup.begin(), setup.end());
    std::vector<std::size_t> order(events.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return events[a].stream != events[b].stream ? events[a].stream < events[b].stream : events[a].start < events[b].start;
    });
    std::vector<double> free_at(events.size(), -HUGE_VAL);
    for (std::size_t k = 1; k < order.size(); ++k) {
        const DeviceEvent &prev = events[order[k - 1]], &cur = events[order[k]];
        if (prev.stream == cur.stream) free_at[order[k]] = std::max(free_at[order[k - 1]], prev.end);
    }
    // (time, end) pairs by stream, sorted by time, each end raised to the latest so far: the
    // latest end of everything up to a time is then one binary search.
    using Timeline = std::map<std::uint32_t, std::vector<std::pair<double, double>>>;
    auto running_latest = [](Timeline& t) {
        for (auto& [stream, v] : t) {
            std::sort(v.begin(), v.end());
            for (std::size_t k = 1; k < v.size(); ++k) v[k].second = std::max(v[k].second, v[k - 1].second);
        }
    };
    Timeline by_enqueue;  // stream -> (enqueued, end)
    for (std::size_t i = 0; i < work.size(); ++i) {
        const double at = i < enqueued.size() && !std::isnan(enqueued[i]) ? enqueued[i] : work[i].start;
        by_enqueue[work[i].stream].push_back({at, work[i].end});
    }
    running_latest(by_enqueue);
    Timeline held;  // waiting stream -> (wait call's start, when the work it waits for ends)
    for (const auto& w : waits) {
        auto it = by_enqueue.find(w.on_stream);
        if (it == by_enqueue.end() || w.on_stream == w.stream) continue;
        const auto& v = it->second;
        auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(w.covers_until, HUGE_VAL));
        if (after != v.begin()) held[w.stream].push_back({w.ts, std::prev(after)->second});
    }
    running_latest(held);
    std::vector<double> on_idle, behind;
    for (const auto& l : launches) {
        const double latency = events[l.event].start - l.call_start;
        double free = free_at[l.event];
        if (auto it = held.find(events[l.event].stream); it != held.end()) {
            const auto& v = it->second;
            auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(l.call_start, -HUGE_VAL));
            if (after != v.begin()) free = std::max(free, std::prev(after)->second);
        }
        (free > l.call_start ? behind : on_idle).push_back(latency);
    }
    idle = latency_stats(std::move(on_idle)), queued = latency_stats(std::move(behind));
}

}  // namespace lab::trace
