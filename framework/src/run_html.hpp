// A run as one self-contained HTML page (`lab report`, `lab run --report`, and each student's
// page under `lab grade --report`), in the order a student reads it: a table of contents, the
// caller's box, every plot (run_plots.hpp: exactly what `lab run --plots` writes), the
// measurements, the lesson's own derived values, the teaching text and the commands to answer
// and submit; then, collapsed (printed whole), the reference: the device and its ceilings with
// their spread and method, the lesson's objectives and experiments, and the derived values when
// they are a long list. Withheld values read "?", as on the console. Nothing in it is
// lesson-specific: a lesson's page is whatever its declarations and derive() hold.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "html.hpp"
#include "lab/lesson.hpp"

namespace lab {

// A box near the top of the page for what the caller knows beyond the run (an instructor's
// page shows how the run was graded): label/value lines and an optional table, all plain text.
struct PageBox {
    std::string title;
    std::vector<std::pair<std::string, std::string>> facts;
    std::optional<html::Table> table;
};

struct RunPage {
    const LessonInfo& info;
    const RawRun& raw;
    const Derivation& derivation;          // the lesson's own derivation of `raw`
    const std::set<std::string>& withheld; // record::withheld_metrics for this view
    const nlohmann::json& record;          // the record read (started_at, digest, spec, notes, revealed)
    // The run file as the student names it, for the commands to answer and submit; "" leaves
    // the commands out (an instructor's copy of a student's page).
    std::string run_file;
    std::optional<PageBox> box = std::nullopt;
    std::string back_href = "";            // a relative link back (to the class page), "" = none
    std::string back_label = "";
};

std::string render_run_html(const RunPage& page);

// A command-line argument as a POSIX shell reads it back: unchanged when it is plain, else in
// single quotes ("runs/my run.json" -> 'runs/my run.json').
std::string shell_quote(const std::string& arg);

}  // namespace lab
