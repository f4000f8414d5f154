// The one lesson host: what `lab run`, `lab show`, `lab check`, `lab validate` and the grader do
// with a lesson plugin, in one place. It discovers the plugin folders once, loads each lesson
// once (manifest, API version and ABI checked by the loader), derives runs with the lesson's own
// code, checks a record against the installed plugin's version, checks a lesson's declarations
// and compares a run with the lesson's expectations.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"
#include "plugin_loader.hpp"

namespace lab {

class LessonHost {
public:
    LessonHost();  // the plugin path (paths::plugin_dirs)
    explicit LessonHost(const std::vector<std::filesystem::path>& dirs);
    const Catalog& catalog() const { return catalog_; }
    // Shadowed and broken plugins found by discovery ("warning: ..." lines for the console).
    const std::vector<std::string>& warnings() const { return catalog_.warnings; }
    // The lesson of this ID, loaded on first use; UsageError for an unknown ID.
    const LoadedLesson& lesson(const std::string& id);

private:
    Catalog catalog_;
    std::map<std::string, std::unique_ptr<LoadedLesson>> lessons_;
};

// The lesson's derivation of a raw run. PluginError naming the plugin (and `what`, e.g. the
// record's file) when the lesson's code throws.
Derivation derive_run(const LoadedLesson& lesson, const RawRun& raw, const std::string& what = "");

// A record made by another major version of the lesson plugin derives differently: InputError
// naming `file` and the fix.
void check_plugin_version(const LoadedLesson& lesson, const nlohmann::json& record, const std::string& file);

// Whether a run recorded by lesson plugin `recorded` ("1.2.0") derives as `installed` does: the
// same major version.
bool same_plugin_major(const std::string& recorded, const std::string& installed);

// Problems with a lesson's declarations, each one line: its ID, title, objectives, experiments,
// budgets, metric names (unique, dotted lower-case) and units (`known_unit`), expectations on
// declared metrics and named ceilings.
// Whether a placed workload may mark this standard metric (its name after "workload.") graded:
// the SDK's standard metrics, and the doubling ratio of a workload that is doubled.
bool gradable_standard_metric(const PlacedWorkload& w, const std::string& suffix);

std::vector<std::string> declaration_problems(const LessonInfo& info, const std::function<bool(const std::string&)>& known_unit);

// A run compared with the lesson's expectations (`lab check`).
struct ExpectationRow {
    std::string metric, result, expected, measured, why;  // result: met | MISSED | differs
    bool performance = false;
};
struct ExpectationReport {
    std::vector<ExpectationRow> rows;
    int met = 0, missed = 0, differs = 0, other_devices = 0;
};
// `format(value, unit)` writes a number as the console does. Fractions of a ceiling read as
// percentages of it. A measured regime the run could not decide meets an expectation that is
// one of its candidates.
ExpectationReport check_expectations(const LessonInfo& info, const RawRun& raw, const Derivation& d,
                                     const std::function<std::string(double, const std::string&)>& format);

// A ceiling named as expectations name them ("bandwidth.best", "flops.fp32.simt", "launch").
std::optional<double> ceiling_value(const Ceilings& c, const std::string& name);

}  // namespace lab
