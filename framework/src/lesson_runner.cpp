// The lesson runner: child and parent sides (see lesson_runner.hpp).
#include "lesson_runner.hpp"

#include <unistd.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <regex>

#include "atomic_file.hpp"
#include "ceiling_trust.hpp"
#include "ceilings_cache.hpp"
#include "chrome_trace.hpp"
#include "format.hpp"
#include "gzip.hpp"
#include "child_process.hpp"
#include "errors.hpp"
#include "lab/backend.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "progress_bar.hpp"
#include "quantity_text.hpp"
#include "run_record.hpp"
#include "trace_windows.hpp"

using nlohmann::json;

namespace lab {

namespace {

// Calibration is outside the lesson's budget, but not unbounded.
constexpr double kCalibrationAllowanceQuick_s = 60;
constexpr double kCalibrationAllowanceFull_s = 180;
// A lesson may overrun its stated budget by this factor before it is stopped: the budget is
// what a student should expect, the limit is what a hung plugin gets.
constexpr double kBudgetSlack = 3;

// The lesson's hard time limit: --timeout (LAB_TIMEOUT) when given, else its budget x the slack.
double lesson_limit(const ChildRequest& req) {
    if (req.timeout_s > 0) return req.timeout_s;
    // Read as the command line read it (atof took "0x10" as 0 and "1e3x" as 1000).
    if (const auto t = time_limit_from_environment(); t && *t > 0) return *t;
    return req.lesson_budget_s * kBudgetSlack;
}

// The bar on stderr (progress_bar.hpp): what the step is doing, and an estimate from the time
// the step is expected to take (a calibration: a quarter of its allowance; a lesson: its budget).
void progress_line(const std::string& line) { stderr_progress().update(line); }
void progress_done() { stderr_progress().clear(); }

void note(const std::string& text) { send_to_parent({{"type", "note"}, {"text", text}}); }

class ChildSession : public Session {
public:
    ChildSession(Device& d, InRunCeilings& c, RunOptions o, EngineSettings s, std::string lesson_file, TraceWindows& trace)
        : device_(d), ceilings_(c), options_(std::move(o)), settings_(std::move(s)),
          lesson_file_(std::move(lesson_file)), trace_(trace) {}
    Device& device() override { return device_; }
    const Ceilings& ceilings() const override { return ceilings_.current(); }
    const RunOptions& options() const override { return options_; }
    Measurement measure(const Workload& w, const Launch& launch) override {
        for (const auto& m : measurements_)
            if (m.workload.name == w.name) throw std::invalid_argument("workload '" + w.name + "' measured twice");
        progress_line("measuring " + w.name);
        // Named to the parent before it runs, so a crash inside its kernel names it too.
        current_workload_ = w.name;
        send_to_parent({{"type", "workload"}, {"name", w.name}});
        measurements_.push_back(measure_workload(device_, w, launch, settings_, &trace_));
        // Cleared before lab's own re-measures beside it: a failure there is not the lesson's.
        current_workload_.clear();
        send_to_parent({{"type", "workload"}, {"name", ""}});
        progress_line("measuring the ceilings beside " + w.name);
        ceilings_.after_workload(measurements_.back(), measurements_);
        // "Counters refused" is said once, not once per workload; the run goes on with timing.
        const std::string& why = measurements_.back().counters_note;
        if (!why.empty() && !counters_noted_) {
            note(why);
            counters_noted_ = true;
        }
        return measurements_.back();
    }
    void skip(const std::string& workload, const std::string& reason) override {
        skipped_.push_back({workload, reason});
    }
    void progress(const std::string& line) override { progress_line(line); }
    void* companion_symbol(const std::string& name) override {
        if (device_.kind() != DeviceKind::cuda) return nullptr;
        return lab::companion_symbol(lesson_file_, name);
    }
    bool replaying() const override { return false; }
    // The workload being measured when run() threw, or "" (run() threw between workloads).
    const std::string& current_workload() const { return current_workload_; }
    std::vector<Measurement>& measurements() { return measurements_; }
    const std::vector<Skip>& skipped() const { return skipped_; }

private:
    Device& device_;
    InRunCeilings& ceilings_;
    RunOptions options_;
    EngineSettings settings_;
    std::string lesson_file_;
    std::vector<Measurement> measurements_;
    std::vector<Skip> skipped_;
    std::string current_workload_;
    bool counters_noted_ = false;
    TraceWindows& trace_;
};

struct OpenedDevice {
    LoadedBackend backend;
    std::unique_ptr<Device> device;
};

OpenedDevice open_device(const ChildRequest& req) {
    Catalog cat = discover(paths::plugin_dirs(), false);
    auto load = [&](const std::string& kind) -> std::optional<LoadedBackend> {
        auto it = cat.backends.find(kind);
        if (it == cat.backends.end()) return std::nullopt;
        return load_backend(it->second.file);
    };
    bool want_cuda = req.device.rfind("cuda", 0) == 0;
    if (want_cuda || req.device == "auto") {
        std::string why;
        std::optional<LoadedBackend> cuda;
        try {
            cuda = load("cuda");
        } catch (const InputError& e) {
            // "GPU found, libcublasLt.so.13 missing": the backend would not load.
            std::string what = e.what();
            why = "the CUDA backend could not be loaded: " + what.substr(0, what.find('\n'));
        }
        if (cuda) {
            why = cuda->backend->unavailable_reason();
            if (why.empty()) {
                BackendOptions o;
                o.threads = req.threads;
                auto colon = req.device.find(':');
                if (colon != std::string::npos) o.device_index = std::stoi(req.device.substr(colon + 1));
                auto dev = cuda->backend->open(o);
                return {std::move(*cuda), std::move(dev)};
            }
        } else if (why.empty()) {
            why = "no CUDA backend (labdevice_cuda.so) on the plugin path";
        }
        if (want_cuda) throw DeviceError("no CUDA device: " + why);
        note("running on the CPU: " + why);
    }
    auto cpu = load("cpu");
    if (!cpu)
        throw InputError("", "the CPU backend (labdevice_cpu.so) was not found on the plugin path",
                         "rebuild lab, or point LAB_PLUGIN_PATH at the folder holding labdevice_cpu.so");
    BackendOptions o;
    o.threads = req.threads;
    auto dev = cpu->backend->open(o);
    return {std::move(*cpu), std::move(dev)};
}

}  // namespace


json to_json(const ChildRequest& r) {
    return {{"action", r.action},          {"lesson_file", r.lesson_file}, {"device", r.device},
            {"threads", r.threads},        {"quick", r.quick},             {"student", r.options.student},
            {"seed", r.options.seed},      {"seed_hex", r.options.seed_hex},
            {"lesson_budget_s", r.lesson_budget_s}, {"timeout_s", r.timeout_s}, {"trace_file", r.trace_file}, {"trace_final_name", r.trace_final_name}};
}

ChildRequest child_request_from_json(const json& j) {
    ChildRequest r;
    r.action = j.at("action").get<std::string>();
    r.lesson_file = j.value("lesson_file", "");
    r.device = j.value("device", "auto");
    r.threads = j.value("threads", 0);
    r.quick = j.value("quick", false);
    r.options.quick = r.quick;
    r.options.student = j.value("student", "");
    r.options.seed = j.value("seed", std::uint64_t{0});
    r.options.seed_hex = j.value("seed_hex", "");
    r.lesson_budget_s = j.value("lesson_budget_s", 60.0);
    r.timeout_s = j.value("timeout_s", 0.0);
    r.trace_file = j.value("trace_file", "");
    r.trace_final_name = j.value("trace_final_name", "");
    return r;
}

void check_device_name(const std::string& d) {
    static const std::regex ok("auto|cpu|cuda(:[0-9]+)?");
    if (!std::regex_match(d, ok))
        throw UsageError("unknown device '" + d + "'\n  fix: use --device auto, cpu, cuda or cuda:N");
}

int child_main(const ChildRequest& req) {
    try {
        OpenedDevice od = open_device(req);
        send_to_parent({{"type", "device_open"}});
        Device& dev = *od.device;
        // A LAB_SIMD the CPU backend did not follow (unknown, or a path this CPU lacks), or a
        // --threads above the container's CPU quota (plugins/cpu/container_limits.hpp): the facts
        // record why, and the student, who asked for it, is told at once.
        for (const char* key : {"simd_override", "threads_over_quota"})
            if (auto it = dev.facts().extra.find(key); it != dev.facts().extra.end()) note(it->second);
        const EngineSettings settings = engine_defaults(dev.kind(), req.quick);
        MeasureFn measure = [&](const Workload& w, const Launch& l) {
            progress_line("measuring " + w.name);
            return measure_workload(dev, w, l, settings);
        };

        // Ceilings: a full calibration serves quick runs too; a quick one serves only quick runs.
        // Quick and full calibrations are cached apart, so a quick one never replaces a full one.
        auto cache = ceilings_cache_file(dev.kind(), dev.facts(), dev.threads(), req.quick);
        std::string problem;
        std::optional<Ceilings> ceilings;
        if (req.action != "calibrate") {
            auto full = ceilings_cache_file(dev.kind(), dev.facts(), dev.threads(), false);
            ceilings = load_cached_ceilings(full, dev.facts(), &problem, dev.kind());
            if (ceilings) cache = full;
            if (!ceilings && req.quick) ceilings = load_cached_ceilings(cache, dev.facts(), &problem, dev.kind());
            if (!problem.empty()) note(problem);
        }
        bool calibrated_now = false;
        if (!ceilings) {
            send_to_parent({{"type", "phase"}, {"phase", "calibrate"},
                            {"limit_s", req.quick ? kCalibrationAllowanceQuick_s : kCalibrationAllowanceFull_s}});
            stderr_progress().start("calibrating " + std::string(to_string(dev.kind())) + (req.quick ? " (quick)" : ""),
                                    (req.quick ? kCalibrationAllowanceQuick_s : kCalibrationAllowanceFull_s) / 4);
            ceilings = calibrate_with_conditions(*od.backend.backend, dev, req.quick, measure, progress_line, note);
            // Measured either way: a cache that cannot be written is said, never a reason to stop.
            if (const std::string not_cached = cache_ceilings(cache, dev.facts(), *ceilings); !not_cached.empty()) note(not_cached);
            calibrated_now = true;
            progress_done();
        }

        json result = {{"type", "result"},
                       {"device_kind", to_string(dev.kind())},
                       {"facts", record::to_json(dev.facts())},
                       {"ceilings", record::to_json(*ceilings)},
                       {"ceilings_cache", cache.string()},
                       {"calibrated_now", calibrated_now},
                       {"engine", to_json(settings)},
                       {"measurements", json::array()}};

        if (req.action == "run") {
            LoadedLesson lesson = load_lesson(req.lesson_file);
            // References and re-measures use the quick settings: a few samples, close in time. They
            // keep samples at any clock: a reference describes the device as it is beside the
            // workload, and a run never lowers a roof, so one that reads low does no harm, while
            // waiting out a clock the GPU holds low (at its power cap under a GEMM) cost 2.6 s a
            // reference.
            EngineSettings reference_settings = engine_defaults(dev.kind(), true);
            reference_settings.throttle_ratio = 0;
            TraceWindows trace(dev);  // started below, when --trace asks for one
            InRunCeilings in_run(*od.backend.backend, dev, *ceilings,
                                 [&](const Workload& w, const Launch& l) { return measure_workload(dev, w, l, reference_settings, &trace); },
                                 note);
            // Cached ceilings not trusted are measured again first (a calibration made just now has
            // retried its own already). That is part of obtaining the ceilings, under the
            // calibration allowance, not the lesson's budget.
            if (!calibrated_now) {
                send_to_parent({{"type", "phase"}, {"phase", "calibrate"},
                                {"limit_s", req.quick ? kCalibrationAllowanceQuick_s : kCalibrationAllowanceFull_s}});
                stderr_progress().start("checking the cached ceilings", 0);
                in_run.recheck_untrusted();
                progress_done();
            }
            send_to_parent({{"type", "phase"}, {"phase", "lesson"}, {"limit_s", lesson_limit(req)}});
            ChildSession session(dev, in_run, req.options, settings, req.lesson_file, trace);
            stderr_progress().start("lesson " + lesson.info.id + (req.quick ? " (quick)" : ""), req.lesson_budget_s);
            bool tracing = false;
            if (!req.trace_file.empty()) {
                std::string why;
                tracing = trace.begin(why);
                if (!tracing) note("no trace written: " + why);
            }
            // A failure inside a workload names it: "stoi" alone said neither where nor whose.
            // Its kernel is the lesson's, the calls under it the device's: which failed, the
            // message cannot tell, so the fix names both.
            try {
                lesson.lesson->run(session);
            } catch (const std::invalid_argument& e) {
                if (session.current_workload().empty()) throw;  // the lesson refusing an option
                throw InputError(req.lesson_file, "while measuring workload '" + session.current_workload() + "': " + e.what(),
                                 "if it names an option you gave (--param, --threads), change it; otherwise the lesson's "
                                 "kernel refused its own request: tell the lesson's author, with this message");
            } catch (const std::exception& e) {
                const std::string during = session.current_workload().empty() ? "" : "while measuring workload '" + session.current_workload() + "': ";
                throw PluginError(req.lesson_file + ": " + during + e.what() +
                                  "\n  fix: the lesson's kernel or the device failed: if `lab device` works, tell the lesson's author, "
                                  "with this message");
            }
            dev.stream().synchronize();
            progress_done();
            if (tracing) {
                std::vector<TraceEvent> events = trace.finish();
                TraceMetadata meta{dev.facts().name, to_string(dev.kind()), lesson.info.id, 0};
                for (const auto& e : events)  // the tracer's "dropped N events" marker, if it filled up
                    if (e.category == "marker" && e.name.rfind("dropped ", 0) == 0)
                        meta.dropped = std::strtoull(e.name.c_str() + 8, nullptr, 10);
                std::string text = chrome_trace(events, meta).dump() + "\n";
                // A trace named *.gz is written gzip-compressed, as PyTorch writes its traces.
                const std::string& path = req.trace_final_name.empty() ? req.trace_file : req.trace_final_name;
                if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) text = gzip_compress(text);
                write_file_atomically(req.trace_file, text);
                result["trace_events"] = events.size();
            }
            for (const auto& m : session.measurements()) result["measurements"].push_back(record::to_json(m));
            result["skipped"] = json::array();
            for (const auto& sk : session.skipped()) result["skipped"].push_back({{"workload", sk.workload}, {"reason", sk.reason}});
            result["ceiling_measurements"] = json::array();
            for (const auto& cm : in_run.measurements()) result["ceiling_measurements"].push_back(record::to_json(cm));
            // A cached ceiling the run found stale (beaten by more than the margin) is replaced
            // where a quiet, steady re-measure earned it (ceilings_for_cache), so the next run
            // starts from what this machine was seen to do, and not from one noisy burst.
            if (in_run.raised_beyond_margin()) {
                const CacheUpdate update = ceilings_for_cache(*ceilings, in_run.current(), lesson.info.id, format::utc_iso8601(std::time(nullptr)));
                if (!update.kept.empty()) {
                    // The run's record is written either way; only the next run's start is lost.
                    if (const std::string not_cached = cache_ceilings(cache, dev.facts(), update.ceilings); !not_cached.empty())
                        note(not_cached);
                    else
                        note("updated the cached ceilings in " + cache.string() + " with the ones measured in this run: " + fmt::format("{}", fmt::join(update.kept, ", ")));
                }
                // Said, so that a student who sees a raised roof in this run knows why the next
                // run starts lower.
                if (!update.left_out.empty())
                    note("kept for this run only, not cached (a later run starts from the cached value): " + fmt::format("{}", fmt::join(update.left_out, "; ")));
            }
            result["facts"] = record::to_json(dev.facts());  // facts learnt while running (NVML's) included
        }
        send_to_parent(result);
        return 0;
    } catch (const UsageError& e) {
        send_to_parent({{"type", "error"}, {"exit", 2}, {"message", e.what()}});
        return 2;
    } catch (const InputError& e) {
        send_to_parent({{"type", "error"}, {"exit", 2}, {"message", e.what()}});
        return 2;
    } catch (const std::invalid_argument& e) {
        // Backends and lessons see only the SDK: they report bad options (--threads 99) this way.
        send_to_parent({{"type", "error"}, {"exit", 2}, {"message", e.what()}});
        return 2;
    } catch (const std::exception& e) {
        progress_done();
        send_to_parent({{"type", "error"}, {"exit", 3}, {"message", e.what()}});
        return 3;
    }
}

ChildResult execute(const ChildRequest& req, const std::function<void()>& on_device_open) {
    std::vector<std::string> argv = {paths::self_executable().string(), "__child", to_json(req).dump()};
    double first_limit = req.action == "run" ? lesson_limit(req) : 60;
    std::vector<std::string> notes;
    const std::uint64_t memory_limit = child_memory_limit();
    auto outcome = run_child(argv, first_limit, [&](const json& m) -> double {
        std::string type = m.value("type", "");
        if (type == "phase") return m.value("limit_s", 0.0);
        if (type == "device_open" && on_device_open) on_device_open();
        // The child's progress bar may hold the terminal's line: clear it first, where the child
        // may have drawn one (it reads the same terminal and environment); elsewhere the escape
        // is noise in a log or on a dumb terminal.
        if (type == "note") std::cerr << (progress_possible() ? "\r\033[K" : "") << "note: " << m.value("text", "") << "\n";
        return 0;
    }, memory_limit);
    std::string what = req.action == "run" ? "the lesson plugin " + req.lesson_file : "the device backend";
    std::string last_workload;  // the one being measured when the child stopped, if it stopped in one
    for (const auto& m : outcome.messages) {
        if (m.value("type", "") == "workload") last_workload = m.value("name", "");
        if (m.value("type", "") == "note") notes.push_back(m.value("text", ""));
        if (m.value("type", "") == "error") {
            std::string msg = m.value("message", "unknown error");
            if (m.value("exit", 3) == 2) throw InputError("", msg);
            throw DeviceError(msg);
        }
    }
    if (outcome.memory_exceeded)
        throw DeviceError(what + ": used more than its memory limit of " + std::to_string(memory_limit >> 20) + " MiB" +
                          (last_workload.empty() ? "" : " while measuring workload '" + last_workload + "'") + " and was stopped; no run record written (LAB_MEMORY_LIMIT sets the limit)");
    if (outcome.timed_out) {
        std::string phase = "the lesson";
        double limit_s = 0;
        for (const auto& m : outcome.messages)
            if (m.value("type", "") == "phase") {
                phase = m.value("phase", "") == "calibrate" ? "calibration" : "the lesson";
                limit_s = m.value("limit_s", 0.0);
            }
        const std::string budget = limit_s > 0 ? " of " + format::number(limit_s, {.whole_below = 1e9}) + " s" : "";
        const std::string in_workload = last_workload.empty() ? "" : " while measuring workload '" + last_workload + "'";
        throw DeviceError(what + ": " + phase + " exceeded its time limit" + budget + in_workload + " and was stopped (" +
                          std::to_string(static_cast<int>(outcome.wall_s)) + " s in all); no run record written\n"
                          "  fix: other programs busy on this machine slow every kernel: run it again when it is quieter, "
                          "or allow more time with --timeout S (or LAB_TIMEOUT)");
    }
    if (!outcome.exited || outcome.exit_code != 0)
        throw DeviceError(what + " " + outcome.describe() + (last_workload.empty() ? "" : " while measuring workload '" + last_workload + "'") +
                          "; no run record written");
    const json* result = nullptr;
    for (const auto& m : outcome.messages)
        if (m.value("type", "") == "result") result = &m;
    if (!result) throw DeviceError(what + " ended without sending its results; no run record written");
    ChildResult r;
    r.kind = result->at("device_kind").get<std::string>() == "cuda" ? DeviceKind::cuda : DeviceKind::cpu;
    r.facts = record::facts_from_json(result->at("facts"));
    r.ceilings = record::ceilings_from_json(result->at("ceilings"));
    for (const auto& m : result->at("measurements")) r.measurements.push_back(record::measurement_from_json(m));
    for (const auto& cm : result->value("ceiling_measurements", json::array()))
        r.ceiling_measurements.push_back(record::ceiling_measurement_from_json(cm));
    for (const auto& sk : result->value("skipped", json::array()))
        r.skipped.push_back({sk.at("workload").get<std::string>(), sk.at("reason").get<std::string>()});
    r.engine = result->at("engine");
    r.notes = notes;
    r.calibrated_now = result->value("calibrated_now", false);
    return r;
}

}  // namespace lab
