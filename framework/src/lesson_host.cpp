// The lesson host (see lesson_host.hpp).
#include "lesson_host.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>

#include "errors.hpp"
#include "lesson_plan.hpp"
#include "machine_load.hpp"
#include "paths.hpp"
#include "suggest.hpp"

namespace lab {

LessonHost::LessonHost() : LessonHost(paths::plugin_dirs()) {}

LessonHost::LessonHost(const std::vector<std::filesystem::path>& dirs) : catalog_(discover(dirs)) {}

const LoadedLesson& LessonHost::lesson(const std::string& id) {
    auto it = lessons_.find(id);
    if (it == lessons_.end())
        it = lessons_.emplace(id, std::make_unique<LoadedLesson>(load_lesson(find_lesson(catalog_, id).file))).first;
    return *it->second;
}

Derivation derive_run(const LoadedLesson& lesson, const RawRun& raw, const std::string& what) {
    try {
        return lesson.lesson->derivation(raw);
    } catch (const std::exception& e) {
        // A record the lesson's plan does not give (a workload renamed, its parameters removed,
        // the digest sealed again) is the record's fault, not the plugin's: said as such.
        if (const auto differs = replay_plan(*lesson.lesson, raw); !differs.empty())
            throw InputError(what.empty() ? lesson.info.id : what,
                             "the run record does not hold what lesson " + lesson.info.id + " measures (" + differs.front() +
                                 (differs.size() > 1 ? "; and " + std::to_string(differs.size() - 1) + " more" : "") +
                                 "), so its values cannot be derived: " + e.what(),
                             "use the record `lab run " + lesson.info.id + "` wrote, unedited, or record the run again");
        throw PluginError(lesson.identity.file.string() + ": the lesson's derivation failed" + (what.empty() ? "" : " on " + what) +
                          ": " + e.what());
    }
}

bool same_plugin_major(const std::string& recorded, const std::string& installed) {
    return recorded.substr(0, recorded.find('.')) == installed.substr(0, installed.find('.'));
}

void check_plugin_version(const LoadedLesson& lesson, const nlohmann::json& record, const std::string& file) {
    const std::string recorded = record.at("lesson").value("plugin_version", "");
    const std::string installed = lesson.info.version;
    if (!same_plugin_major(recorded, installed))
        throw InputError(file, "recorded with lesson plugin " + recorded + ", but the installed plugin is " + installed +
                                   " (another major version derives differently)",
                         "install the lesson version the run was recorded with, or record the run again");
}

std::optional<double> ceiling_value(const Ceilings& c, const std::string& name) {
    if (name == "launch") return c.launch_s.value;
    if (name.rfind("bandwidth.", 0) == 0) {
        auto it = c.bandwidth_bytes_per_s.find(name.substr(10));
        if (it != c.bandwidth_bytes_per_s.end()) return it->second.value;
    }
    if (name.rfind("flops.", 0) == 0) {
        auto it = c.flops_per_s.find(name.substr(6));
        if (it != c.flops_per_s.end()) return it->second.value;
    }
    return std::nullopt;
}

bool gradable_standard_metric(const PlacedWorkload& w, const std::string& g) {
    return g == "time_s" || g == "flops_per_s" || g == "bytes_per_s" || g == "ai" || g == "roof_fraction" || g == "predicted_regime" ||
           g == "measured_regime" || (g == "doubling_ratio" && w.doubled);
}

std::vector<std::string> declaration_problems(const LessonInfo& i, const std::function<bool(const std::string&)>& known_unit) {
    std::vector<std::string> problems;
    static const std::regex id_ok("[0-9]{2}\\.[0-9]{2}"), name_ok("[a-z0-9_]+(\\.[a-z0-9_]+)*");
    static const std::regex ceiling_ok("launch|bandwidth\\.(read|copy|triad|update|best|memcpy)|flops\\.[a-z0-9]+\\.(simt|tensor)");
    if (!std::regex_match(i.id, id_ok)) problems.push_back("lesson ID '" + i.id + "' is not of the form NN.NN");
    if (i.title.empty()) problems.push_back("the title is empty");
    if (i.objectives.empty()) problems.push_back("no objectives: state what the lesson teaches");
    if (i.experiments.empty()) problems.push_back("no experiments declared");
    if (i.budget_quick_s <= 0 || i.budget_full_s <= 0) problems.push_back("time budgets must be positive");
    std::set<std::string> names;
    for (const auto& w : i.placed)
        for (const auto& g : w.graded)
            if (!gradable_standard_metric(w, g))
                problems.push_back("placed workload '" + w.name + "' grades '" + g +
                                   "', which is not one of its standard metrics (time_s, flops_per_s, bytes_per_s, ai, roof_fraction, "
                                   "predicted_regime, measured_regime; doubling_ratio where it doubles another)");
    for (const auto& m : i.metrics) {
        if (!names.insert(m.name).second) problems.push_back("metric '" + m.name + "' is declared twice");
        if (!std::regex_match(m.name, name_ok)) problems.push_back("metric name '" + m.name + "' is not dotted lower-case words");
        if (m.kind != MetricKind::category && !known_unit(m.unit))
            problems.push_back("metric '" + m.name + "' has unit '" + m.unit +
                               "', which is not an SI base unit lab knows (s, B, B/s, FLOP, FLOP/s, FLOP/B, Hz, W, J, ratio, or \"\" "
                               "for a count): declare GB/s as B/s and set the value in B/s, a percentage as a ratio (0.466, shown "
                               "as 46.6%); lab prints every value with its prefix, and the grader compares in these units");
        if (m.devices.empty()) problems.push_back("metric '" + m.name + "' is produced on no device");
    }
    for (const auto& m : i.metrics)
        if (m.graded && m.description.empty())
            problems.push_back("graded metric '" + m.name + "' has no description: `lab info` and the answers template show it to students");
    for (const auto& x : i.experiments)
        if (x.description.empty()) problems.push_back("experiment '" + x.name + "' has no description: say what it runs and why");
    std::vector<std::string> metric_names;
    for (const auto& m : i.metrics) metric_names.push_back(m.name);
    for (std::size_t k = 0; k < i.expectations.size(); ++k) {
        const Expectation& e = i.expectations[k];
        const std::string what = "expectation " + std::to_string(k) + " (on '" + e.metric + "')";
        auto m = std::find_if(i.metrics.begin(), i.metrics.end(), [&](const MetricDecl& d) { return d.name == e.metric; });
        if (m == i.metrics.end()) {
            problems.push_back("expectation " + std::to_string(k) + " is on '" + e.metric + "', which the lesson does not declare" +
                               did_you_mean_text(e.metric, metric_names));
            continue;
        }
        if (m->kind == MetricKind::category && e.equals.empty()) problems.push_back(what + " needs 'equals': the metric is a category");
        if (m->kind != MetricKind::category && !e.equals.empty()) problems.push_back(what + " uses 'equals' on a number; give min/max");
        // `lab check` compares a regime's text exactly: "memory-bound" would never be met.
        const std::string regime_suffix = "_regime";
        if (m->kind == MetricKind::category && !e.equals.empty() && e.equals.find(',') == std::string::npos &&
            e.metric.size() > regime_suffix.size() && e.metric.compare(e.metric.size() - regime_suffix.size(), regime_suffix.size(), regime_suffix) == 0)
            if (const auto r = roofline::parse_regime(e.equals); !r || roofline::to_string(*r) != e.equals)
                problems.push_back(what + " equals '" + e.equals + "', which is not a regime as lab writes it" +
                                   (r ? " (did you mean '" + std::string(roofline::to_string(*r)) + "'?)"
                                      : ": use compute_bound, memory_bound, overhead_bound or latency_bound"));
        if (m->kind != MetricKind::category && e.min > e.max)
            problems.push_back(what + " has min " + fmt::format("{:g}", e.min) + " above max " + fmt::format("{:g}", e.max) + ": no value meets it");
        // Bounds relative to a roof are fractions of it: a workload does not run at 50x its roof.
        // (Relative to launch they are multiples of the launch cost, which may well be 3x.)
        if ((e.relative_to.rfind("bandwidth.", 0) == 0 || e.relative_to.rfind("flops.", 0) == 0) && e.min > 2)
            problems.push_back(what + " asks for at least " + fmt::format("{:g}", e.min) + "x " + e.relative_to +
                               ": relative bounds are fractions of the ceiling (0.5 for 50%)");
        if (e.why.empty()) problems.push_back(what + " has no 'why': `lab check` shows it beside the result");
        if (!e.relative_to.empty() && !std::regex_match(e.relative_to, ceiling_ok))
            problems.push_back(what + " is relative to '" + e.relative_to + "': use launch, bandwidth.<kernel> or flops.<dtype>.<pipe>");
    }
    if (i.expectations.empty()) problems.push_back("no expected measurements declared (LessonInfo::expectations)");
    return problems;
}

namespace {

// Beyond this multiple of what the ceiling kernels measured in the same run, a workload's rate is
// not noise: its declared bytes or FLOPs exceed what it moves or computes, or its data is not
// where its level says (a "dram" workload that fits in cache). Three times: a VM's neighbour can
// take half its cores away between a workload and its re-measures, unseen by the load sampler.
constexpr double kImplausibleOverKernels = 3.0;

// A run raises a ceiling to a workload's own rate when re-measures stay below it ("evidence"):
// fair to a student, whose roof is what the machine did, but for the lesson's author it is the
// sign of a miscounted workload, which no expectation relative to the raised ceiling can catch.
// One row per raised ceiling: MISSED past kImplausibleOverKernels with the re-measures run on a
// quiet machine; "differs" otherwise (a busy machine slows a re-measure).
void check_rates_against_kernels(const RawRun& raw, ExpectationReport& out) {
    std::vector<CeilingMeasurement> kernels_only;
    for (const auto& cm : raw.ceiling_measurements)
        if (cm.purpose != "evidence") kernels_only.push_back(cm);
    const Ceilings kernels = effective_ceilings(raw.ceilings_at_start, kernels_only, raw.measurements);
    for (const auto& cm : raw.ceiling_measurements) {
        if (cm.purpose != "evidence" || cm.workloads.empty()) continue;
        const double rate = ceiling_rate(cm, raw.measurements);
        const std::optional<double> roof = ceiling_value(kernels, cm.ceiling);
        if (!(rate > 0) || !roof || !(*roof > 0)) continue;
        bool loaded = false;
        for (const auto& k : kernels_only)
            loaded = loaded || (k.purpose == "remeasure" && k.workloads == cm.workloads && k.measurement.load >= kLoadedMachineCpus);
        const double ratio = rate / *roof;
        const bool implausible = ratio > kImplausibleOverKernels && !loaded;
        const std::string what = cm.ceiling.rfind("flops.", 0) == 0 ? "FLOPs" : "bytes";
        ExpectationRow row{cm.workloads.front() + " (rate)",
                           implausible ? "MISSED" : "differs",
                           fmt::format("<= {:g}x {}", roofline::kRoofMargin, cm.ceiling),
                           fmt::format("{:.2f}x {}", ratio, cm.ceiling),
                           implausible ? "faster than the ceiling kernels measured beside it: does it count more " + what +
                                             " than it moves, or does its data fit in a cache its level does not name?"
                                       : "above the ceiling kernels measured beside it" +
                                             std::string(loaded ? ", which ran under load" : "") + ": noise, or a miscount",
                           !implausible};
        (implausible ? out.missed : out.differs)++;
        out.rows.push_back(row);
    }
}

}  // namespace

ExpectationReport check_expectations(const LessonInfo& info, const RawRun& raw, const Derivation& d,
                                     const std::function<std::string(double, const std::string&)>& format) {
    ExpectationReport out;
    const std::string kind = to_string(raw.device_kind);
    for (const auto& e : info.expectations) {
        if (std::find(e.devices.begin(), e.devices.end(), kind) == e.devices.end()) {
            ++out.other_devices;
            continue;
        }
        ExpectationRow row{e.metric, "", "", "", e.why, e.performance};
        const MetricValue* v = d.find(e.metric);
        bool ok = false;
        if (!e.equals.empty()) {
            row.expected = e.equals;
            row.measured = v ? v->text : "(not produced)";
            ok = v && v->text == e.equals;
            // A verdict the run could not decide, with the expected regime among its candidates; a
            // lesson's own category left open ("overhead_bound or throughput_bound") likewise.
            if (v && !ok) {
                auto candidates = roofline::regimes_in(v->text);
                auto want = roofline::parse_regime(e.equals);
                ok = candidates.size() > 1 && want && std::find(candidates.begin(), candidates.end(), *want) != candidates.end();
                if (!ok && v->text.find(" or ") != std::string::npos)
                    for (std::size_t b = 0, end = 0; !ok && end != std::string::npos; b = end + 4) {
                        end = v->text.find(" or ", b);
                        ok = v->text.substr(b, end == std::string::npos ? std::string::npos : end - b) == e.equals;
                    }
            }
        } else {
            double scale = 1;
            if (!e.relative_to.empty()) {
                auto c = ceiling_value(raw.ceilings, e.relative_to);
                if (!c) {
                    ++out.other_devices;  // the device has no such ceiling
                    continue;
                }
                scale = *c;
            }
            const std::string unit = v ? v->unit : "";
            auto bound = [&](double x) { return e.relative_to.empty() ? format(x, unit) : fmt::format("{:g}% of {}", 100 * x, e.relative_to); };
            row.expected = e.min > -1e300 && e.max < 1e300 ? bound(e.min) + " .. " + bound(e.max)
                           : e.min > -1e300                 ? ">= " + bound(e.min)
                                                            : "<= " + bound(e.max);
            row.measured = v ? (e.relative_to.empty() ? format(v->number, unit)
                                                      : fmt::format("{:.0f}% of {}", 100 * v->number / scale, e.relative_to))
                             : "(not produced)";
            ok = v && v->number >= e.min * scale && v->number <= e.max * scale;
        }
        row.result = ok ? "met" : e.performance ? "differs" : "MISSED";
        (ok ? out.met : e.performance ? out.differs : out.missed)++;
        out.rows.push_back(row);
    }
    check_rates_against_kernels(raw, out);
    return out;
}

}  // namespace lab
