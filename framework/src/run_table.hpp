// A run as text for people, cell by cell: its workloads with their derived values (withheld
// values as "?"), how far each ceiling can be trusted, and which graded values a student must
// work out. The console (cli/console.cpp) and the HTML page (run_html.hpp) lay these out their
// own way, so what is withheld, and how a figure is written, is decided once.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lab/lesson.hpp"

namespace lab {

// A derived value of a workload: its text, or "?" when the metric is withheld.
struct DerivedCell {
    std::string text;
    std::string metric;     // "triad.ai"
    bool withheld = false;
};

struct WorkloadRow {
    std::string name, params, time, noise, flops, bytes;
    bool noise_met = true;
    // Only for workloads the derivation placed on the roofline.
    std::optional<DerivedCell> flops_per_s, bytes_per_s, ai, roof_fraction, regime;
    // The larger roof fraction against the ceilings measured right after the workload (its
    // references), which the measured regime is decided by; the roof fraction where the run
    // measured none. Withheld with the roof fraction.
    std::optional<DerivedCell> reference_fraction;
    // The ref fraction is above 100% (and shown): the kernel beat a ceiling measured right after
    // it, which the view explains rather than leave a reader to think the roof was broken.
    bool reference_above_roof = false;
    // Those references, as the verdict used them ("launch 8.2 µs, fp32.simt 150 GFLOP/s, bw.update
    // 20 GB/s"); "" where the run measured none (the ceilings above decide). Never withheld: a
    // student needs them to work out the ref fraction and the regime from what is shown.
    std::string references;
};

// A placed workload's roof fraction against the ceilings measured right after it (its
// references), the larger of its compute and memory shares; against the run's ceilings where it
// measured none. The `ref` column: what its measured regime is decided by.
double reference_roof_fraction(const RawRun& run, const std::string& workload, const roofline::Placement& p);
double reference_roof_fraction(const roofline::PlacementCeilings& pc, const roofline::Placement& p);

// One row per measured workload, in the order measured. Times are medians per invocation; the
// roof fraction is in percent (record::shown_as_percent); the regime as the derivation states it.
std::vector<WorkloadRow> workload_rows(const RawRun& run, const Derivation& d, const std::set<std::string>& withheld);

// Said under a table with a ref fraction above 100% (WorkloadRow::reference_above_roof).
extern const char* const kReferenceAboveRoofNote;

// Where a ceiling's value comes from when it is not a trusted calibration ("re-measured in this
// run", "not trusted: measured under load or noisy; runs re-measure it"); "" when it is.
std::string ceiling_status(const Ceiling& c);

// How many of a run's workloads were measured while other processes used the machine
// (machine_load.hpp: at least kLoadedMachineCpus CPUs), as a clause for a note: "5 of 40
// workloads ran while other processes used 0.3 CPUs or more (up to 1.9)"; nullopt when none did
// or the load is unknown. Their times are still what was measured; a busy machine lengthens them
// and blurs a sweep's steps, which a student should hear before learning figures from them.
std::optional<std::string> under_load(const RawRun& run);

// What a run's view says under its table when some workloads ran under load: the clause above,
// what it may have done to them, and what to do.
std::optional<std::string> busy_machine_note(const RawRun& run);

// The graded metrics a view withholds that `run` has, in declaration order: what `lab answers`
// asks for (the `check.*` helpers, withheld but never asked, are not among them; nor a metric
// the run lacks, which its lines show as n/a).
std::vector<std::string> withheld_graded(const LessonInfo& info, const std::set<std::string>& withheld, const Derivation& run);

// The withheld values no question asks: the twin regimes of asked ones (record::withheld_metrics),
// not check.* helpers. Said under the '?' list so a '?' in the regime column is explained.
std::vector<std::string> withheld_twins(const LessonInfo& info, const std::set<std::string>& withheld);

// The device's data caches, "L1 32 KiB, L2 1 MiB, L3 32 MiB (shared by 16)": each size in the
// largest binary unit that writes it whole (1536 KiB stays 1536 KiB), or "-" when none is known.
std::string caches_text(const DeviceFacts& facts);

}  // namespace lab
