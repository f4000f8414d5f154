// A lesson's plan: the workloads its run() requests, in order, and the ones it skips. run() is
// a pure function of the device's facts, the ceilings, the options and what it measured so far,
// so the host can replay it with no device and no kernel launched:
//  - against a recorded run (replay_plan): each request is answered with the next recorded
//    measurement (adaptive sweeps follow the recorded path) and must equal it; a record that
//    differs was not made by this lesson as it stands;
//  - against a model device (synthetic_run): answers are roofline-model times, and derive() on
//    them must produce every metric the lesson declares (`lab validate`, for any lesson).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lab/lesson.hpp"

namespace lab {

// What differs between the lesson's plan and the recorded run, in words ("request 3: the lesson
// measures 'triad' with n = 22369280, the record 'triad' with n = 1024"); empty when they agree.
std::vector<std::string> replay_plan(Lesson& lesson, const RawRun& run);

// The run the lesson's plan gives on a model device of `kind` (a typical machine's facts and
// ceilings), every workload timed by the roofline model: max(FLOP/peak, bytes/bandwidth) + launch.
RawRun synthetic_run(Lesson& lesson, const std::string& lesson_id, DeviceKind kind, bool quick);

// Declared vs produced for a run: a declared metric of its device kind (and, on a quick run,
// marked quick) that the derivation lacks, or a produced metric not declared. Not held against
// it: an infinite AI (a kernel that moves no bytes), the metrics of a workload the run skipped,
// and counter metrics where the device read no counters.
std::vector<std::string> declared_vs_produced(const LessonInfo& info, const Derivation& d, const RawRun& run);

// Whether `metric`, absent from `d`, is one derive() should have set in this run: declared for
// its device and run type, and not excused (a skipped workload, no counters or telemetry read, an
// infinite AI). False where the absence is the device's or the run type's, not the lesson's.
bool unset_by_lesson(const LessonInfo& info, const Derivation& d, const RawRun& run, const std::string& metric);

// `lab validate`'s plan check: the plan on a model CPU and a model GPU, quick and full, derived
// and compared with the declarations. Each problem once, causes first (a failing lesson, a
// workload measured wrongly, before the metrics that follow), naming the model devices and run
// types it shows on.
std::vector<std::string> check_plan(Lesson& lesson, const LessonInfo& info);

// The same replays, with what `lab validate` warns of without refusing: a graded value that a
// shown metric (neither graded nor a check.* helper) carries under another name, so `lab run`
// prints the answer beside its '?'. The four runs are replayed once more with each workload's
// time, telemetry and counters scaled by a factor of its own (the model times every workload
// alike, so a latency per cache level, or every workload's busy share, would otherwise look like
// one value). A pair is reported when both are finite numbers, not zero, and equal to 1e-9
// relative on every replay that produces both (at least two): a value equal on one model device
// only is a coincidence, not a leak. It is a warning, not a problem: the model devices are not
// the students', and two values may still meet there by the lesson's parameters or the model's
// seed alone where real devices and other students would tell them apart.
// The replays are then derived under 64 other seeds (the plan is not run again): a value the
// lesson prints for everyone that equals some students' graded answer is warned of too, with a
// seed that shows it. Values that both follow the seed (two questions' parameters) are not: they
// meet by chance, and no student can tell one is the other's answer.
struct PlanCheck {
    std::vector<std::string> problems;   // what check_plan returns
    std::vector<std::string> warnings;   // leaks of graded values, one line each with the fix
};
PlanCheck check_plan_and_leaks(Lesson& lesson, const LessonInfo& info);

// Each metric's values where the lesson derives it on the model devices (CPU and GPU, full and
// quick; each as modelled and with each workload's times varied), with where ("a model CPU
// --quick"): what `lab validate` and `lab check-spec` hold a
// grading spec's tolerances and options against. Replays that fail are left out.
struct ModelValue {
    std::string where;
    MetricValue value;
};
std::map<std::string, std::vector<ModelValue>> model_values(Lesson& lesson, const std::string& lesson_id);

// The parameter names the lesson's workloads carry in its plan on a model CPU and GPU (full
// runs): what a grading spec's `sweep_param` may name.
std::set<std::string> plan_param_names(Lesson& lesson, const std::string& lesson_id);

}  // namespace lab
