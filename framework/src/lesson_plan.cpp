// Replaying a lesson's run() without a device (see lesson_plan.hpp).
#include "lesson_plan.hpp"

#include <sys/mman.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <lab/random_bits.hpp>
#include "lesson_host.hpp"
#include "paths.hpp"
#include "run_record.hpp"
#include "suggest.hpp"
#include "xy_plot.hpp"

namespace lab {

namespace {

// Address space that is never touched unless the lesson writes to it outside a launch: reserved
// without backing memory, so a plan that "allocates" gigabytes costs nothing.
class PlanBuffer : public Buffer {
public:
    explicit PlanBuffer(std::size_t bytes) : bytes_(bytes) {
        void* p = mmap(nullptr, std::max<std::size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("the plan could not reserve " + std::to_string(bytes) + " bytes of address space");
        data_ = p;
    }
    ~PlanBuffer() override { munmap(data_, std::max<std::size_t>(bytes_, 1)); }
    void* data() override { return data_; }
    std::size_t bytes() const override { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_;
};

class PlanEvent : public Event {
public:
    double seconds_since(const Event&) const override { return 0; }
};

// Nothing enqueued on it ever runs.
class PlanStream : public Stream {
public:
    void launch(HostKernel) override {}
    void record(Event&) override {}
    void synchronize() override {}
    void* native_handle() override { return nullptr; }
};

class PlanDevice : public Device {
public:
    PlanDevice(DeviceKind kind, DeviceFacts facts) : kind_(kind), facts_(std::move(facts)) {}
    DeviceKind kind() const override { return kind_; }
    const DeviceFacts& facts() const override { return facts_; }
    Stream& stream() override { return stream_; }
    int threads() const override { return kind_ == DeviceKind::cpu ? std::max(1, facts_.threads) : 1; }
    BufferPtr allocate(std::size_t bytes) override { return std::make_unique<PlanBuffer>(bytes); }
    void copy(Stream&, void*, const void*, std::size_t) override {}
    EventPtr create_event() override { return std::make_unique<PlanEvent>(); }
    void flush_caches(Stream&) override {}
    bool supports(Dtype dtype) const override { return gemm_supported(kind_, facts_, dtype); }
    void gemm(Stream&, const Gemm&) override {}

private:
    DeviceKind kind_;
    DeviceFacts facts_;
    PlanStream stream_;
};

// A session whose measurements come from `answer` (the record, or the model): it keeps the
// requests and the skips, in order.
class PlanSession : public Session {
public:
    using Answer = std::function<Measurement(const Workload&, std::size_t index)>;
    using CeilingsAfter = std::function<const Ceilings&(std::size_t measured)>;
    PlanSession(Device& d, RunOptions o, CeilingsAfter c, Answer a)
        : device_(d), options_(std::move(o)), ceilings_(std::move(c)), answer_(std::move(a)) {}
    Device& device() override { return device_; }
    const Ceilings& ceilings() const override { return ceilings_(requests.size()); }
    const RunOptions& options() const override { return options_; }
    Measurement measure(const Workload& w, const Launch&) override {
        for (const auto& r : requests)
            if (r.name == w.name) throw std::invalid_argument("workload '" + w.name + "' measured twice");
        requests.push_back(w);
        return answer_(w, requests.size() - 1);
    }
    void skip(const std::string& workload, const std::string& reason) override { skipped.push_back({workload, reason}); }
    void progress(const std::string&) override {}
    void* companion_symbol(const std::string&) override { return nullptr; }
    bool replaying() const override { return true; }

    std::vector<Workload> requests;
    std::vector<Skip> skipped;

private:
    Device& device_;
    RunOptions options_;
    CeilingsAfter ceilings_;
    Answer answer_;
};

std::string describe(const Workload& w) {
    std::ostringstream s;
    s.precision(12);  // counts are integers up to ~1e15: show them whole
    s << "'" << w.name << "' (";
    // In name order, as a record keeps them: the two sides of a mismatch read alike.
    std::vector<Param> params = w.params;
    std::sort(params.begin(), params.end(), [](const Param& a, const Param& b) { return a.name < b.name; });
    for (const auto& p : params) s << p.name << " = " << p.value << ", ";
    s << w.flops << " FLOP, " << w.bytes << " B, " << w.pipe << ", " << w.level
      << (w.mode == TimingMode::cold ? ", cold" : "") << (w.doubles.empty() ? "" : ", doubles " + w.doubles) << ")";
    return s.str();
}

bool same_count(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

bool same_request(const Workload& a, const Workload& b) {
    if (a.name != b.name || a.pipe != b.pipe || a.level != b.level || a.mode != b.mode || a.doubles != b.doubles) return false;
    if (!same_count(a.flops, b.flops) || !same_count(a.bytes, b.bytes) || a.params.size() != b.params.size()) return false;
    // A record keeps parameters by name (a JSON object), not in the order they were given.
    for (const auto& p : a.params)
        if (std::none_of(b.params.begin(), b.params.end(), [&](const Param& q) { return q.name == p.name && same_count(q.value, p.value); }))
            return false;
    return true;
}

// The ceilings the lesson saw after `measured` workloads: those it started with, raised by the
// in-run measurements made beside the workloads measured so far.
Ceilings ceilings_after(const RawRun& run, std::size_t measured) {
    std::vector<Measurement> so_far(run.measurements.begin(), run.measurements.begin() + std::min(measured, run.measurements.size()));
    std::vector<CeilingMeasurement> in_run;
    for (const auto& cm : run.ceiling_measurements) {
        bool all_seen = true;
        for (const auto& w : cm.workloads)
            all_seen = all_seen && std::any_of(so_far.begin(), so_far.end(), [&](const Measurement& m) { return m.workload.name == w; });
        if (all_seen) in_run.push_back(cm);
    }
    return effective_ceilings(run.ceilings_at_start, in_run, so_far);
}

Ceiling ceiling(double value, const std::string& unit) {
    Ceiling c;
    c.value = value;
    c.unit = unit;
    c.method = "model device of lab validate";
    c.samples = 10;
    c.spread = 0.01;
    return c;
}

// A typical machine of each kind: a 2-core AVX2 laptop-class CPU, an H100-class GPU.
std::pair<DeviceFacts, Ceilings> model_device(DeviceKind kind) {
    DeviceFacts f;
    Ceilings c;
    if (kind == DeviceKind::cpu) {
        f.name = "model CPU (lab validate)";
        f.compute_units = 2;
        f.threads = 2;
        f.simd = "avx2";
        f.features = {"avx2", "fma"};
        f.caches = {{1, "Data", 48 << 10, 1}, {2, "Unified", 2 << 20, 1}, {3, "Unified", 32 << 20, 2}};
        f.memory_bytes = std::uint64_t{16} << 30;
        c.flops_per_s = {{"fp32.simt", ceiling(1.5e11, "FLOP/s")}, {"fp64.simt", ceiling(7.5e10, "FLOP/s")}};
        for (const char* k : {"read", "copy", "triad"}) c.bandwidth_bytes_per_s[k] = ceiling(2e10, "B/s");
        c.launch_s = ceiling(5e-6, "s");
        c.threads = 2;
    } else {
        f.name = "model GPU (lab validate)";
        f.compute_units = 132;
        f.threads = 132 * 2048;
        f.simd = "sm_90";
        f.features = {"sm_90", "tensor_cores"};
        f.caches = {{2, "Unified", 50 << 20, 132}};
        f.memory_bytes = std::uint64_t{80} << 30;
        c.flops_per_s = {{"fp32.simt", ceiling(6e13, "FLOP/s")},     {"fp64.simt", ceiling(3e13, "FLOP/s")},
                         {"fp64.tensor", ceiling(6e13, "FLOP/s")},   {"tf32.tensor", ceiling(4e14, "FLOP/s")},
                         {"fp16.tensor", ceiling(8e14, "FLOP/s")},   {"bf16.tensor", ceiling(8e14, "FLOP/s")},
                         {"fp8.tensor", ceiling(1.6e15, "FLOP/s")},  {"int8.tensor", ceiling(1.6e15, "FLOP/s")}};
        for (const char* k : {"read", "copy", "triad"}) c.bandwidth_bytes_per_s[k] = ceiling(3e12, "B/s");
        c.launch_s = ceiling(3e-6, "s");
        c.threads = 1;
    }
    set_best_bandwidth(c);
    return {f, c};
}

// Counter values a GPU would read for a workload of these counts (FFMA instructions, DRAM bytes).
std::map<std::string, double> model_counters(const Workload& w) {
    std::map<std::string, double> out;
    for (const auto& name : w.counters) out[name] = 0;
    if (out.count("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"))
        out["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] = w.flops / 2;
    if (out.count("dram__bytes_read.sum")) out["dram__bytes_read.sum"] = w.bytes;
    return out;
}

}  // namespace

std::vector<std::string> replay_plan(Lesson& lesson, const RawRun& run) {
    std::vector<std::string> problems;
    PlanDevice device(run.device_kind, run.facts);
    Ceilings seen;
    auto answer = [&](const Workload& w, std::size_t i) -> Measurement {
        if (i >= run.measurements.size()) {
            problems.push_back("request " + std::to_string(i + 1) + ": the lesson measures " + describe(w) +
                               ", but the record ends after " + std::to_string(run.measurements.size()) + " workloads");
            throw std::out_of_range("plan longer than the record");
        }
        const Measurement& m = run.measurements[i];
        if (!same_request(w, m.workload)) {
            problems.push_back("request " + std::to_string(i + 1) + ": the lesson measures " + describe(w) + ", the record " +
                               describe(m.workload));
            throw std::out_of_range("plan differs from the record");
        }
        return m;
    };
    PlanSession session(device, run.options, [&](std::size_t measured) -> const Ceilings& {
        seen = ceilings_after(run, measured);
        return seen;
    }, answer);
    try {
        lesson.run(session);
    } catch (const std::out_of_range&) {
        return problems;  // the first difference is the one that matters: later requests follow from it
    } catch (const std::exception& e) {
        problems.push_back(std::string("the lesson's run() failed while replayed: ") + e.what());
        return problems;
    }
    if (session.requests.size() < run.measurements.size())
        problems.push_back("the record holds " + std::to_string(run.measurements.size() - session.requests.size()) +
                           " workloads more than the lesson measures, from '" + run.measurements[session.requests.size()].workload.name + "'");
    if (run.skips_recorded) {
        auto key = [](const std::vector<Skip>& v) {
            std::vector<std::string> k;
            for (const auto& s : v) k.push_back(s.workload);
            return k;
        };
        if (key(session.skipped) != key(run.skipped)) {
            std::string planned, recorded;
            for (const auto& s : session.skipped) planned += " " + s.workload;
            for (const auto& s : run.skipped) recorded += " " + s.workload;
            problems.push_back("the lesson skips [" + planned + " ] but the record skipped [" + recorded + " ]");
        }
    }
    return problems;
}

namespace {

// A number in [0, 1) fixed by `key` (FNV-1a): the same on every machine and build.
double spread(const std::string& key) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// synthetic_run's model run; `varied`: each workload's time (up to 2x), telemetry (down to half)
// and counters (up to 1.5x) scaled by a factor of its own, as a real device's differ from the
// model's uniform ones: values a model gives two workloads alike (a latency per cache level,
// every workload's busy share) come apart, and values that are one quantity stay equal.
RawRun model_run(Lesson& lesson, const std::string& lesson_id, DeviceKind kind, bool quick, bool varied) {
    // Named variables, not a structured binding: lambdas below capture them (clang < 16 cannot
    // capture a binding, and the fuzzing build uses clang 14).
    const std::pair<DeviceFacts, Ceilings> model = model_device(kind);
    const DeviceFacts& facts = model.first;
    const Ceilings& ceilings = model.second;
    RawRun run;
    run.lesson_id = lesson_id;
    run.options.quick = quick;
    run.options.student = "lab-validate";
    run.options.seed = 0x0123456789abcdefULL;
    run.options.seed_hex = "0123456789abcdef";
    run.device_kind = kind;
    run.facts = facts;
    run.ceilings = run.ceilings_at_start = ceilings;
    PlanDevice device(kind, facts);
    auto answer = [&](const Workload& w, std::size_t) {
        Measurement m;
        m.workload = w;
        record::order_params_as_recorded(m.workload);
        const double peak = ceilings.peak_flops(w.pipe), bw = ceilings.peak_bandwidth();
        const double t = (std::max(peak > 0 ? w.flops / peak : 0.0, bw > 0 ? w.bytes / bw : 0.0) + ceilings.launch_s.value) *
                         (varied ? 1 + spread(w.name) : 1.0);
        m.time.median = m.time.min = m.time.max = m.time.mean = t;
        m.time.samples = 10;
        m.time.noise = 0.01;
        m.time.noise_met = true;
        m.time.total_s = 10 * t;
        if (kind == DeviceKind::cuda) m.counters = model_counters(w);
        // A model device's telemetry: the keys the real backends report, the work assumed to
        // keep what it runs on busy (a plan check, never shown as a measurement).
        if (w.telemetry)
            m.telemetry = kind == DeviceKind::cuda ? std::map<std::string, double>{{"utilization_gpu.mean", 1.0}, {"utilization_memory.mean", 0.5}}  // ratios, as NVML's telemetry reports them
                                                   : std::map<std::string, double>{{"cpu_busy_pct.max_core", 100}, {"cpu_busy_pct.machine", 100},
                                                                                   {"process_cpu_pct", 100}, {"interval_s", 1}};
        if (varied) {
            for (auto& [key, value] : m.telemetry) value *= 0.5 + 0.5 * spread(w.name + " " + key);
            for (auto& [key, value] : m.counters) value *= 1 + 0.5 * spread(w.name + " " + key);
        }
        m.load = 0;
        run.measurements.push_back(m);
        return m;
    };
    PlanSession session(device, run.options, [&](std::size_t) -> const Ceilings& { return ceilings; }, answer);
    lesson.run(session);
    run.skipped = session.skipped;
    return run;
}

}  // namespace

RawRun synthetic_run(Lesson& lesson, const std::string& lesson_id, DeviceKind kind, bool quick) {
    return model_run(lesson, lesson_id, kind, quick, false);
}

namespace {

// Whether declared metric `m` should be in `d`: declared for the run's device and run type, not
// set, and not excused. Excused, not produced and rightly: the metrics of a workload the run
// skipped (it says why), the counter metrics of a workload whose device read no counters (its
// note says why), the telemetry metrics of one whose device sampled none, and an AI (infinite
// for zero bytes).
bool missing_from(const MetricDecl& m, const Derivation& d, const RawRun& run) {
    if (std::find(m.devices.begin(), m.devices.end(), to_string(run.device_kind)) == m.devices.end() || (run.options.quick && !m.quick))
        return false;
    if (d.find(m.name)) return false;
    for (const auto& s : run.skipped)
        if (m.name.rfind(s.workload + ".", 0) == 0) return false;
    if (const auto t = m.name.rfind(".telemetry_"); t != std::string::npos) {
        const Measurement* w = run.find(m.name.substr(0, t));
        if (w && w->telemetry.empty()) return false;
    }
    if (const auto dot = m.name.rfind(".counted_"); dot != std::string::npos) {
        const Measurement* w = run.find(m.name.substr(0, dot));
        if (w && w->counters.empty()) return false;
    }
    return !(m.name.size() > 3 && m.name.compare(m.name.size() - 3, 3, ".ai") == 0);
}

}  // namespace

std::vector<std::string> declared_vs_produced(const LessonInfo& info, const Derivation& d, const RawRun& run) {
    std::vector<std::string> problems;
    for (const auto& m : d.metrics)
        if (std::none_of(info.metrics.begin(), info.metrics.end(), [&](const MetricDecl& x) { return x.name == m.name; }))
            problems.push_back("derive() produces '" + m.name + "', which info() does not declare");
    for (const auto& m : info.metrics)
        if (missing_from(m, d, run)) problems.push_back("'" + m.name + "' is declared for this device and run type, but derive() never sets it");
    return problems;
}

bool unset_by_lesson(const LessonInfo& info, const Derivation& d, const RawRun& run, const std::string& metric) {
    const auto m = std::find_if(info.metrics.begin(), info.metrics.end(), [&](const MetricDecl& x) { return x.name == metric; });
    return m != info.metrics.end() && missing_from(*m, d, run);
}

namespace {

// What the plan replay finds wrong in what run() measured, before anything is derived from it:
// the causes, which the derivation's problems (metrics never set) follow from.
std::vector<std::string> measured_problems(const LessonInfo& info, const RawRun& run, DeviceKind kind, bool quick) {
    std::vector<std::string> problems;
    for (const auto& w : info.placed) {
        const bool here = std::find(w.devices.begin(), w.devices.end(), to_string(kind)) != w.devices.end();
        const bool skipped = std::any_of(run.skipped.begin(), run.skipped.end(), [&](const Skip& s) { return s.workload == w.name; });
        const Measurement* m = run.find(w.name);
        if (here && (w.quick || !quick) && !m && !skipped)
            problems.push_back("placed workload '" + w.name + "' is neither measured nor skipped: call s.measure or s.skip for it in run()");
        // A roofline point needs the traffic: zero bytes is an infinite AI and 0 B/s, shown and
        // graded as if measured.
        if (m && m->workload.bytes <= 0)
            problems.push_back("placed workload '" + w.name + "' states no bytes (.bytes = 0): its AI would be infinite and its B/s 0; "
                               "state the least traffic it must move to its level");
    }
    for (const auto& m : run.measurements) {
        std::set<std::string> names;
        for (const auto& p : m.workload.params)
            if (!names.insert(p.name).second)
                problems.push_back("workload '" + m.workload.name + "' has two parameters named '" + p.name +
                                   "'; a run record keeps one value per name: give each its own name");
    }
    return problems;
}

// Graded values a student cannot write down: infinite or not a number in the replay.
std::vector<std::string> unanswerable_graded(const LessonInfo& info, const Derivation& d) {
    std::vector<std::string> problems;
    for (const auto& decl : info.metrics) {
        const MetricValue* v = decl.graded ? d.find(decl.name) : nullptr;
        if (v && v->kind != MetricKind::category && !std::isfinite(v->number))
            problems.push_back(fmt::format("graded metric '{}' is {} in the replay: no student can answer it; check the counts it is "
                                           "derived from",
                                           decl.name, v->number));
    }
    return problems;
}

// Teaching text placeholders that name no declared metric: render_teaching prints "n/a" for
// them, which reads as a metric this device lacks, so a misspelt {name} would pass unseen.
std::vector<std::string> declared_names(const LessonInfo& info) {
    std::vector<std::string> names;
    for (const auto& m : info.metrics) names.push_back(m.name);
    return names;
}

std::vector<std::string> unknown_placeholders(const LessonInfo& info, const Derivation& d) {
    const std::vector<std::string> known = declared_names(info);
    std::vector<std::string> problems;
    for (const auto& line : d.teaching)
        record::substitute_placeholders(line, [&](const std::string& written) {
            const bool shipped = written.rfind("shipped:", 0) == 0;
            const std::string name = shipped ? written.substr(8) : written;
            // {shipped:X} names a metric holding a file's name, or the file's name itself.
            if (std::find(known.begin(), known.end(), name) == known.end() && !(shipped && !paths::shipped_file(name).empty()))
                problems.push_back(fmt::format("teaching text \"{}\" names {{{}}}, which is {}: `lab run` would print {} there{}",
                                               line.size() > 60 ? line.substr(0, 57) + "..." : line, written,
                                               shipped ? "neither a declared metric nor a file lab ships" : "no metric info() declares",
                                               shipped ? "'" + name + " (not shipped with this lab)'" : "n/a", did_you_mean_text(name, known)));
            return std::string();
        });
    return problems;
}

// Graded values shown under another name: for each (graded, shown) pair of numbers, on how many
// replays they were equal, and whether any replay told them apart.
struct LeakTally {
    int equal = 0;
    bool differ = false;
};
using LeakKey = std::pair<std::string, std::string>;  // graded, shown

void tally_leaks(const LessonInfo& info, const Derivation& d, std::map<LeakKey, LeakTally>& tally) {
    auto number = [&](const MetricDecl& decl) -> const MetricValue* {
        const MetricValue* v = decl.kind == MetricKind::category ? nullptr : d.find(decl.name);
        return v && v->kind != MetricKind::category && std::isfinite(v->number) ? v : nullptr;
    };
    for (const auto& g : info.metrics) {
        const MetricValue* gv = g.graded ? number(g) : nullptr;
        if (!gv) continue;
        for (const auto& s : info.metrics) {
            if (s.graded || record::is_check_helper(s.name)) continue;
            const MetricValue* sv = number(s);
            if (!sv || (gv->number == 0 && sv->number == 0)) continue;  // both zero: nothing is given away
            LeakTally& t = tally[{g.name, s.name}];
            const bool equal = gv->number != 0 && sv->number != 0 &&
                               std::fabs(gv->number - sv->number) <= 1e-9 * std::max(std::fabs(gv->number), std::fabs(sv->number));
            if (equal) ++t.equal;
            else t.differ = true;
        }
    }
}

// The warning for one leak; `seed` names a student's seed when only some seeds show it.
std::string leak_warning(const LessonInfo& info, const LeakKey& key, std::optional<std::uint64_t> seed) {
    const auto& [graded, shown] = key;
    // A placed workload's standard metric is marked graded on its placement.
    std::string fix = "mark it graded too (MetricDecl::graded), or drop it";
    for (const auto& w : info.placed)
        if (shown.rfind(w.name + ".", 0) == 0 && gradable_standard_metric(w, shown.substr(w.name.size() + 1)))
            fix = "mark it graded too (add \"" + shown.substr(w.name.size() + 1) + "\" to PlacedWorkload::graded of '" + w.name +
                  "'), or grade another value";
    const std::string when = seed ? fmt::format("for some students: equal on every model replay derived with seed {:#018x}, "
                                                "a question variant the model's own seed does not pick",
                                                *seed)
                                  : std::string("equal on every model replay that produces both, each workload's times varied too");
    return "shown metric '" + shown + "' carries the value of graded metric '" + graded + "' (" + when +
           "), so `lab run` prints the answer beside its '?': " + fix;
}

// The pairs equal on at least two replays and told apart by none.
std::set<LeakKey> leaked(const std::map<LeakKey, LeakTally>& tally) {
    std::set<LeakKey> out;
    for (const auto& [key, t] : tally)
        if (!t.differ && t.equal >= 2) out.insert(key);
    return out;
}

// Seeds a question variant may depend on (seed % 5, (seed / 48) % 3, ...): enough that a variant
// one student in ten gets is met with near certainty (0.9^64 < 0.2%), fixed so validate is repeatable.
inline constexpr int kLeakSeeds = 64;

// Root causes first: a failing lesson, or a workload measured wrongly, explains the metrics that
// follow from it.
int problem_rank(const std::string& p) {
    if (p.find("the lesson failed") != std::string::npos) return 0;
    if (p.find("placed workload") != std::string::npos || p.find("parameters named") != std::string::npos) return 1;
    if (p.find("not repeatable") != std::string::npos) return 2;
    return 3;
}

}  // namespace

std::vector<std::string> check_plan(Lesson& lesson, const LessonInfo& info) { return check_plan_and_leaks(lesson, info).problems; }

PlanCheck check_plan_and_leaks(Lesson& lesson, const LessonInfo& info) {
    // Each problem once, with the model devices and run types it shows on: a lesson's mistake
    // usually shows on all four, and four copies of each bury the cause.
    std::vector<std::pair<std::string, std::vector<std::string>>> found;
    std::map<LeakKey, LeakTally> leaks;
    std::vector<RawRun> derived_runs;  // the replays that derived, for the seed sweep below
    auto add = [&](const std::string& where, const std::string& p) {
        auto it = std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == p; });
        if (it == found.end()) found.push_back({p, {}}), it = found.end() - 1;
        if (std::find(it->second.begin(), it->second.end(), where) == it->second.end()) it->second.push_back(where);
    };
    for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
        for (bool quick : {false, true}) {
            const std::string where = std::string(kind == DeviceKind::cpu ? "CPU" : "GPU") + (quick ? " --quick" : "");
            try {
                RawRun run = synthetic_run(lesson, info.id, kind, quick);
                for (const auto& p : replay_plan(lesson, run)) add(where, "the plan is not repeatable: " + p);
                for (const auto& p : measured_problems(info, run, kind, quick)) add(where, p);
                Derivation d = lesson.derivation(run);
                derived_runs.push_back(run);
                for (const auto& p : declared_vs_produced(info, d, run)) add(where, p);
                for (const auto& p : unanswerable_graded(info, d)) add(where, p);
                for (const auto& p : unknown_placeholders(info, d)) add(where, p);
                tally_leaks(info, d, leaks);
                std::set<std::string> plot_names;
                for (const auto& plot : d.plots) {
                    for (const auto& p : plot::plot_problems(plot)) add(where, p);
                    if (!plot_names.insert(plot.name).second) add(where, "two plots named '" + plot.name + "'");
                    // A mark is hidden while its metric is withheld: one naming no declared metric
                    // is always drawn, and gives a graded value away.
                    for (const auto& mark : plot.marks)
                        if (!mark.metric.empty() && std::none_of(info.metrics.begin(), info.metrics.end(), [&](const MetricDecl& m) { return m.name == mark.metric; }))
                            add(where, "plot '" + plot.name + "': mark '" + mark.label + "' names metric '" + mark.metric +
                                           "', which the lesson does not declare, so it is drawn even while that value is withheld" +
                                           did_you_mean_text(mark.metric, declared_names(info)));
                }
                if (d.teaching.empty()) add(where, "derive() writes no teaching text (Derivation::teaching): say what the run shows");
            } catch (const std::exception& e) {
                add(where, std::string("the lesson failed: ") + e.what());
            }
        }
    }
    // The same four runs again, each workload's measurements varied by a factor of its own: what
    // is equal only because the model times every workload alike is told apart here. A run that
    // fails so varied counts for nothing (the plain runs above report what fails).
    for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda})
        for (bool quick : {false, true}) {
            try {
                const RawRun run = model_run(lesson, info.id, kind, quick, true);
                tally_leaks(info, lesson.derivation(run), leaks);
                derived_runs.push_back(run);
            } catch (const std::exception&) {
            }
        }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return problem_rank(a.first) < problem_rank(b.first); });
    PlanCheck out;
    for (const auto& [p, wheres] : found) {
        std::string on;
        for (const auto& w : wheres) on += (on.empty() ? "" : ", ") + w;
        // "(on the model CPU: full and --quick runs)", "(on the model GPU's --quick run)".
        std::string where_text;
        for (const char* dev : {"CPU", "GPU"}) {
            std::vector<std::string> runs;
            for (const auto& w : wheres)
                if (w.rfind(dev, 0) == 0) runs.push_back(w.size() > 3 ? "--quick" : "full");
            if (runs.empty()) continue;
            where_text += std::string(where_text.empty() ? "" : "; ") + "the model " + dev + ": " +
                          (runs.size() == 2 ? "full and --quick runs" : runs[0] + " run");
        }
        out.problems.push_back(p + (wheres.size() == 4 ? " (on every model device and run type)" : " (on " + where_text + ")"));
    }
    const std::set<LeakKey> always = leaked(leaks);
    for (const auto& key : always) out.warnings.push_back(leak_warning(info, key, std::nullopt));
    // A question's variant follows the student's seed, so a value the lesson prints for everyone
    // can answer some students' variant (02.07's fp8 KV question at batch 2 held the bytes of the
    // batch-1 fp16 crossing the lesson prints): the variant table overlaps the worked example.
    // The same replays are derived again under other seeds; the plan is not run again, so a seed
    // that changes which workloads a lesson runs may fail to derive: that seed counts for nothing.
    // Only shown values the seed does not change count: two values that both follow the seed
    // (a question's batch of 4 and another's answer of 4) meet by the variant tables' chance, and
    // no student can tell that one is the other's answer.
    std::map<LeakKey, std::uint64_t> sometimes;
    std::map<std::pair<std::string, std::size_t>, double> first_value;  // (shown metric, replay) -> under the first seed
    std::set<std::string> follows_seed;
    std::uint64_t seed = 0;
    for (int i = 0; i < kLeakSeeds; ++i) {
        seed = random_fill::mix(seed + static_cast<std::uint64_t>(i));
        std::map<LeakKey, LeakTally> tally;
        for (std::size_t r = 0; r < derived_runs.size(); ++r) {
            RawRun run = derived_runs[r];
            run.options.seed = seed;
            run.options.seed_hex = fmt::format("{:016x}", seed);
            try {
                const Derivation d = lesson.derivation(run);
                tally_leaks(info, d, tally);
                for (const auto& m : info.metrics)
                    if (const MetricValue* v = m.graded ? nullptr : d.find(m.name); v && v->kind != MetricKind::category)
                        if (const auto [it, first] = first_value.emplace(std::pair{m.name, r}, v->number); !first && it->second != v->number)
                            follows_seed.insert(m.name);
            } catch (const std::exception&) {
            }
        }
        for (const auto& key : leaked(tally))
            if (!always.count(key)) sometimes.emplace(key, seed);
    }
    for (auto it = sometimes.begin(); it != sometimes.end();)
        it = follows_seed.count(it->first.second) ? sometimes.erase(it) : std::next(it);
    for (const auto& [key, s] : sometimes) out.warnings.push_back(leak_warning(info, key, s));
    return out;
}

std::map<std::string, std::vector<ModelValue>> model_values(Lesson& lesson, const std::string& lesson_id) {
    std::map<std::string, std::vector<ModelValue>> out;
    for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda})
        for (bool quick : {false, true}) {
            const std::string where = std::string("a model ") + (kind == DeviceKind::cpu ? "CPU" : "GPU") + (quick ? " --quick" : "");
            // The plain model times every workload alike, which gives round ratios; the varied one
            // (each workload's times scaled by a factor of its own) gives values as a run does.
            for (bool varied : {false, true}) try {
                    for (const auto& v : lesson.derivation(model_run(lesson, lesson_id, kind, quick, varied)).metrics)
                        out[v.name].push_back({where + (varied ? " (times varied)" : ""), v});
                } catch (const std::exception&) {
                    // A plan that fails is check_plan's to report; the values found elsewhere still count.
                }
        }
    return out;
}

std::set<std::string> plan_param_names(Lesson& lesson, const std::string& lesson_id) {
    std::set<std::string> names;
    for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
        try {
            for (const auto& m : synthetic_run(lesson, lesson_id, kind, false).measurements)
                for (const auto& p : m.workload.params) names.insert(p.name);
        } catch (const std::exception&) {
            // A plan that fails is check_plan's to report; the names found elsewhere still count.
        }
    }
    return names;
}

}  // namespace lab
