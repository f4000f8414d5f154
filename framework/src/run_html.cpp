// A run as an HTML page (see run_html.hpp). Each section is one function of the run; every
// piece of text from the record or the lesson goes through html::escape or html::table.
#include "run_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "format.hpp"
#include "run_plots.hpp"
#include "run_record.hpp"
#include "run_table.hpp"

namespace lab {

namespace {

using html::Cell;
using html::escape;
using nlohmann::json;

std::string text_of(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::string tag(const std::string& text, bool warn = false) {
    return "<span class=\"tag" + std::string(warn ? " warn" : "") + "\">" + escape(text) + "</span>";
}

std::string header_html(const RunPage& p) {
    std::string out;
    if (!p.back_href.empty())
        out += "<p class=\"meta\"><a href=\"" + escape(p.back_href) + "\">&larr; " + escape(p.back_label) + "</a></p>\n";
    out += "<header>\n<h1>" + escape(p.info.id + " " + p.info.title);
    if (p.raw.options.quick) out += tag("quick");
    if (p.record.value("revealed", false)) out += tag("revealed", true);
    out += "</h1>\n";
    out += "<p class=\"meta\">student <strong>" + escape(p.raw.options.student) + "</strong> &middot; " +
           escape(std::string(to_string(p.raw.device_kind)) + ": " + p.raw.facts.name) + " &middot; recorded " +
           escape(text_of(p.record, "started_at")) + "</p>\n";
    return out + "</header>\n";
}

std::string box_html(const PageBox& b) {
    std::string out = "<section class=\"box\" id=\"summary\">\n<h2>" + escape(b.title) + "</h2>\n<dl class=\"facts\">";
    for (const auto& [k, v] : b.facts) out += "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>";
    out += "</dl>\n";
    if (b.table) out += html::table(*b.table);
    return out + "</section>\n";
}

std::string facts_html(const RunPage& p) {
    const DeviceFacts& f = p.raw.facts;
    std::vector<std::pair<std::string, std::string>> rows = {
        {"device", std::string(to_string(p.raw.device_kind)) + ": " + f.name},
        {p.raw.device_kind == DeviceKind::cpu ? "cores" : "SMs", std::to_string(f.compute_units)},
        {"threads used", std::to_string(f.threads)},
        {"kernels", f.simd.empty() ? "-" : f.simd},
        {"caches", caches_text(f)},
        {"memory", fmt::format("{:.1f} GiB", static_cast<double>(f.memory_bytes) / (1ull << 30))}};
    for (std::string key : {"virtualised", "cpu_quota", "memory_limit", "blas"}) {
        auto it = f.extra.find(key);
        if (it == f.extra.end()) continue;
        std::replace(key.begin(), key.end(), '_', ' ');
        rows.push_back({key == "blas" ? "BLAS" : key, it->second});
    }
    for (const auto& n : p.record.value("notes", json::array()))
        if (n.is_string()) rows.push_back({"note", n.get<std::string>()});
    std::string out = "<dl class=\"facts\">";
    for (const auto& [k, v] : rows) out += "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>";
    return out + "</dl>\n";
}

// The datasheet (GPU) or theoretical peak (CPU) the record carries, or why there is none.
std::string spec_html(const json& spec) {
    if (!spec.is_object()) return "";
    const std::string kind = text_of(spec, "kind");
    if (kind.empty() || kind == "none")
        return "<h3>Datasheet</h3>\n<p>" + escape(text_of(spec, "note").empty() ? "none" : text_of(spec, "note")) + "</p>\n";
    std::string out = kind == "theoretical" ? "<h3>Theoretical peak</h3>\n<p>What this CPU could do at most (not a datasheet figure):</p>\n"
                                            : "<h3>Datasheet</h3>\n<p>The datasheet figures of this device:</p>\n";
    html::Table t{{"", "peak"}, {}, ""};
    if (spec.contains("flops_per_s") && spec["flops_per_s"].is_object())
        for (const auto& [k, v] : spec["flops_per_s"].items())
            if (v.is_number()) t.rows.push_back({{k, "mono"}, {format::quantity(v.get<double>(), "FLOP/s"), "num"}});
    if (spec.contains("bandwidth_bytes_per_s") && spec["bandwidth_bytes_per_s"].is_number())
        t.rows.push_back({{"DRAM bandwidth"}, {format::quantity(spec["bandwidth_bytes_per_s"].get<double>(), "B/s"), "num"}});
    else if (!text_of(spec, "bandwidth_note").empty())
        t.rows.push_back({{"DRAM bandwidth"}, {text_of(spec, "bandwidth_note")}});
    if (!t.rows.empty()) out += html::table(t);
    for (const char* key : {"basis", "note"})
        if (!text_of(spec, key).empty()) out += "<p class=\"note\">" + escape(text_of(spec, key)) + "</p>\n";
    return out;
}

std::vector<Cell> ceiling_row(const std::string& name, const Ceiling& c, const std::string& value) {
    const bool known = c.samples > 0 || c.spread > 0;
    const std::string status = ceiling_status(c);
    return {{name, "mono"},
            {value, "num"},
            {known ? format::spread(c.spread) : "-", "num"},
            {c.samples > 0 ? std::to_string(c.samples) : "-", "num"},
            {c.load >= 0 ? fmt::format("{:.2f}", c.load) : "-", "num"},
            {status.empty() ? (c.noise_met ? "calibrated" : "calibrated; noise target not met") : status},
            {c.method}};
}

// The ceilings the run's workloads are held against, with the conditions of each: its spread
// (relative stddev of its samples), how many samples, the machine's load, and whether to trust it.
html::Table ceilings_table(const Ceilings& c) {
    html::Table t{{"ceiling", "value", "spread", "samples", "load (CPUs)", "status", "how it was measured"}, {}, "ceilings"};
    t.rows.push_back(ceiling_row("clock", c.clock_hz, format::quantity(c.clock_hz.value, "Hz")));
    t.rows.push_back(ceiling_row("launch", c.launch_s, format::duration(c.launch_s.value)));
    if (c.launch_graph_s.value > 0)
        t.rows.push_back(ceiling_row("graph launch", c.launch_graph_s, format::duration(c.launch_graph_s.value) + " per kernel"));
    for (const auto& [k, v] : c.flops_per_s) t.rows.push_back(ceiling_row(k, v, format::quantity(v.value, "FLOP/s")));
    for (const auto& [k, v] : c.bandwidth_bytes_per_s) t.rows.push_back(ceiling_row("bw." + k, v, format::quantity(v.value, "B/s")));
    return t;
}

std::string ceilings_note(const Ceilings& c) {
    std::string note = c.threads > 0 ? fmt::format("Measured with {} thread{}", c.threads, c.threads == 1 ? "" : "s") : "";
    if (c.quick) note += std::string(note.empty() ? "Measured" : ",") + " with --quick settings";
    if (!c.clock_hz.measured_at.empty()) note += (note.empty() ? "Measured " : "; ") + std::string("at ") + c.clock_hz.measured_at;
    return note.empty() ? "" : "<p class=\"note\">" + escape(note) + ".</p>\n";
}

// Reference: the plots and tables above already place every workload against these ceilings.
std::string device_html(const RunPage& p) {
    const html::Table ceilings = ceilings_table(p.raw.ceilings);
    std::string body = facts_html(p) + "<h3>Ceilings</h3>\n" + html::table(ceilings) + ceilings_note(p.raw.ceilings);
    if (p.record.contains("device")) body += spec_html(p.record["device"].value("spec", json()));
    return html::reference_section("device", fmt::format("Device and measured ceilings ({} ceilings)", ceilings.rows.size()), body);
}

// Reference: what the lesson is for and what each experiment does, as `lab info` says it.
std::string experiments_html(const LessonInfo& info) {
    std::string out;
    if (!info.objectives.empty()) {
        out += "<p>What this lesson is for:</p>\n<ul>";
        for (const auto& o : info.objectives) out += "<li>" + escape(o) + "</li>";
        out += "</ul>\n";
    }
    out += "<ul class=\"experiments\">";
    for (const auto& e : info.experiments) out += "<li><strong>" + escape(e.name) + "</strong>: " + escape(e.description) + "</li>";
    out += "</ul>\n";
    const std::size_t n = info.experiments.size();
    return html::reference_section("experiments", fmt::format("Objectives and experiments ({} experiment{})", n, n == 1 ? "" : "s"), out);
}

Cell derived(const std::optional<DerivedCell>& c) {
    if (!c) return {""};
    return {c->text, c->withheld ? "num withheld" : "num", "", c->metric};
}

std::string measurements_html(const RunPage& p) {
    const std::vector<WorkloadRow> rows = workload_rows(p.raw, p.derivation, p.withheld);
    // The roofline columns only where a workload is placed on the roofline (not 02.03's sweeps).
    const bool any_placed = std::any_of(rows.begin(), rows.end(), [](const WorkloadRow& r) { return r.regime.has_value(); });
    html::Table t{{"workload", "params", "time", "noise", "FLOP", "bytes"}, {}, "workloads"};
    if (any_placed) t.header.insert(t.header.end(), {"FLOP/s", "B/s", "AI", "roof", "ref", "regime"});
    for (const WorkloadRow& r : rows) {
        std::vector<Cell> row = {{r.name, "mono"}, {r.params, "mono"}, {r.time, "num"}, {r.noise + (r.noise_met ? "" : "*"), "num"},
                                 {r.flops, "num"}, {r.bytes, "num"}};
        if (any_placed) {
            Cell regime = derived(r.regime);
            regime.css_class = r.regime && r.regime->withheld ? "withheld" : "";
            row.insert(row.end(), {derived(r.flops_per_s), derived(r.bytes_per_s), derived(r.ai), derived(r.roof_fraction),
                                   derived(r.reference_fraction), regime});
        }
        t.rows.push_back(std::move(row));
    }
    std::string refs;
    for (const WorkloadRow& r : rows)
        if (!r.references.empty()) refs += "<li><code>" + escape(r.name) + "</code>: " + escape(r.references) + "</li>";
    std::string out = "<section id=\"measurements\">\n<h2>Measurements</h2>\n" + html::table(t);
    out += std::string("<p class=\"note\">time: median per invocation; noise: relative standard deviation of the samples, * = the "
                       "noise target was not met within the time limit") +
           (any_placed ? "; roof: the fraction of the roof at the workload's arithmetic intensity, of the run's ceilings; ref: the same "
                         "fraction of the ceilings measured right after the workload, which its measured regime is decided by (on a busy "
                         "machine the two differ)"
                       : "") +
           ".</p>\n";
    if (!refs.empty()) out += "<p class=\"note\">The ceilings measured right after each workload (its ref):</p>\n<ul class=\"references\">" + refs + "</ul>\n";
    if (std::any_of(rows.begin(), rows.end(), [](const WorkloadRow& r) { return r.reference_above_roof; }))
        out += "<p class=\"note\">" + escape(std::string(1, std::toupper(kReferenceAboveRoofNote[0])) + (kReferenceAboveRoofNote + 1)) + ".</p>\n";
    if (const auto busy = busy_machine_note(p.raw)) out += "<p class=\"note\">" + escape(*busy) + "</p>\n";
    if (!p.raw.skipped.empty()) {
        out += "<p>Not measured:</p>\n<ul>";
        for (const auto& sk : p.raw.skipped) out += "<li><code>" + escape(sk.workload) + "</code>: " + escape(sk.reason) + "</li>";
        out += "</ul>\n";
    }
    return out + "</section>\n";
}

std::string plots_html(const RunPage& p) {
    std::string out = "<section id=\"plots\">\n<h2>Plots</h2>\n";
    int n = 0;
    for (const RunPlot& plot : run_plots(p.info, p.raw, p.derivation, p.withheld)) {
        const std::string scope = "plot" + std::to_string(++n);
        // A plot that is not drawn is said, so that a missing roofline is not taken for a bug.
        if (plot.svg.empty()) {
            out += "<p class=\"note\" data-plot=\"" + escape(plot.name) + "\">" + escape(plot.name) + " not drawn: " +
                   escape(plot.not_drawn) + ".</p>\n";
            continue;
        }
        // The roofline says how it is read: what a point, a line and a colour stand for, and why a
        // point may sit well under the roof drawn and still be judged near its own.
        const std::string caption =
            plot.name != "roofline"
                ? ""
                : "<figcaption>Each point is a workload at its arithmetic intensity (x) and the FLOP/s of its median sample (y). The "
                  "solid lines are this run's roofs: the best bandwidth (rising) and each FLOP/s peak (flat), meeting at the ridge. A "
                  "dotted line rises from a point to its own roof. Colour and shape give the regime measured against the ceilings "
                  "re-measured right after that workload (the table's <em>ref</em> column), so on a busy machine a point can sit "
                  "well under the roof drawn here and still run near its own.</figcaption>\n";
        out += "<figure class=\"plot\" id=\"" + scope + "\" data-plot=\"" + escape(plot.name) + "\">\n" +
               html::inline_svg(plot.svg, scope) + caption + "</figure>\n";
    }
    return out + "</section>\n";
}

// Teaching lines are written for a terminal: a line indented by two spaces continues the one
// before it. Paragraphs become <p>; one whose lines are aligned in columns stays preformatted.
std::string teaching_html(const RunPage& p) {
    std::vector<std::vector<std::string>> paragraphs;
    for (const auto& line : p.derivation.teaching) {
        const std::string text = record::render_teaching(line, p.derivation, p.withheld);
        if (paragraphs.empty() || text.rfind("  ", 0) != 0) paragraphs.emplace_back();
        paragraphs.back().push_back(text);
    }
    std::string out = "<section id=\"teaching\">\n<h2>What this shows</h2>\n<div class=\"teaching\">\n";
    for (const auto& para : paragraphs) {
        bool columns = false;
        for (const auto& l : para) columns = columns || l.find("   ", l.find_first_not_of(' ')) != std::string::npos;
        std::string joined;
        for (const auto& l : para)
            joined += columns ? l + "\n" : (joined.empty() ? "" : " ") + l.substr(l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' '));
        out += columns ? "<pre>" + escape(joined) + "</pre>\n" : "<p>" + escape(joined) + "</p>\n";
    }
    if (paragraphs.empty()) out += "<p class=\"note\">The lesson has no teaching text for this run.</p>\n";
    return out + "</div>\n</section>\n";
}

// A workload's standard values shown in the measurements table.
bool in_workload_table(const Derivation& d, const std::string& metric) {
    for (const auto& wd : d.workloads)
        for (const char* f : {"time_s", "flops_per_s", "bytes_per_s", "ai", "roof_fraction", "measured_regime"})
            if (metric == wd.workload + "." + f) return true;
    return false;
}

// The lesson's other derived values, in declaration order (`check.*` helpers are for `lab
// check`, not for people).
html::Table values_table(const RunPage& p) {
    html::Table t{{"metric", "value", "what it is"}, {}, "values"};
    for (const auto& decl : p.info.metrics) {
        if (record::is_check_helper(decl.name) || in_workload_table(p.derivation, decl.name)) continue;
        const MetricValue* v = p.derivation.find(decl.name);
        if (!v) continue;
        const bool hidden = p.withheld.count(decl.name) > 0;
        t.rows.push_back({{decl.name, "mono"},
                          {hidden ? "?" : record::format_value(*v), hidden ? "num withheld" : "num", "", decl.name},
                          {decl.description}});
    }
    return t;
}

// A short list of derived values is read with the measurements; a long one is reference
// material, collapsed at the foot of the page.
constexpr std::size_t kShortValues = 12;

bool values_are_long(const html::Table& t) { return t.rows.size() > kShortValues; }

std::string values_html(const html::Table& t) {
    if (values_are_long(t)) return html::reference_section("values", fmt::format("Derived values ({})", t.rows.size()), html::table(t));
    return "<section id=\"values\">\n<h2>Derived values</h2>\n" +
           (t.rows.empty() ? "<p class=\"note\">Every value of this run is in the measurements table.</p>\n" : html::table(t)) +
           "</section>\n";
}

std::string answer_html(const RunPage& p) {
    const std::vector<std::string> asked = withheld_graded(p.info, p.withheld, p.derivation);
    std::string out = "<section id=\"answer\">\n<h2>Answer and submit</h2>\n";
    if (!asked.empty()) {
        out += fmt::format("<p>{} graded value{} shown as <span class=\"withheld\">?</span>: work {} out from the page above "
                           "and the tools it names. They are (<code>lab answers</code> prints every question, those answered from the "
                           "lesson's text or the files and tools it names too):</p>\n<ul class=\"asked\">",
                           asked.size(), asked.size() == 1 ? " is" : "s are", asked.size() == 1 ? "it" : "them");
        for (const auto& name : asked) out += "<li><code>" + escape(name) + "</code></li>";
        out += "</ul>\n";
        if (const auto twins = withheld_twins(p.info, p.withheld); !twins.empty()) {
            out += "<p class=\"note\">Also <span class=\"withheld\">?</span>, since each would give an asked value away:";
            for (const auto& name : twins) out += " <code>" + escape(name) + "</code>";
            out += ".</p>\n";
        }
    }
    if (p.record.value("revealed", false))
        out += "<p class=\"note\">This run was recorded with --reveal: a course refuses it. Record it again without --reveal "
               "to submit it.</p>\n";
    const std::string id = shell_quote(p.info.id), run = shell_quote(p.run_file);
    out += "<pre class=\"commands\"><code>" + escape("lab answers " + id + " --run " + run + " > answers.yaml\n") +
           escape("# fill in answers.yaml, then\n") + escape("lab submit " + id + " answers.yaml --run " + run) +
           "</code></pre>\n";
    return out + "</section>\n";
}

std::string footer_html(const RunPage& p) {
    return "<footer>Made by lab " LAB_VERSION " from the run record" +
           (p.run_file.empty() ? std::string() : " <code>" + escape(p.run_file) + "</code>") + " (" +
           escape(text_of(p.record, "digest")) +
           "). Every value was derived again from its raw measurements by the lesson's own code.</footer>\n";
}

}  // namespace

std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_./-+:@%,=") == std::string::npos;
    if (plain) return arg;
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// What a student reads first comes first: the plots, the measurements, what they show and how
// to answer. The reference material after them (device, ceilings, experiments, a long list of
// derived values) is collapsed: ~2,800 px of it used to stand between the title and the plots.
std::string render_run_html(const RunPage& p) {
    struct Part {
        html::TocEntry entry;
        std::string markup;
    };
    const html::Table values = values_table(p);
    std::vector<Part> reading = {{{"plots", "Plots"}, plots_html(p)}, {{"measurements", "Measurements"}, measurements_html(p)}};
    std::vector<Part> reference = {{{"device", "Device and ceilings"}, device_html(p)},
                                   {{"experiments", "Experiments"}, experiments_html(p.info)}};
    (values_are_long(values) ? reference : reading).push_back({{"values", "Derived values"}, values_html(values)});
    reading.push_back({{"teaching", "What this shows"}, teaching_html(p)});
    if (!p.run_file.empty()) reading.push_back({{"answer", "Answer and submit"}, answer_html(p)});

    std::vector<html::TocEntry> toc;
    if (p.box) toc.push_back({"summary", p.box->title});
    for (const auto* parts : {&reading, &reference})
        for (const auto& part : *parts) toc.push_back(part.entry);
    std::string body = header_html(p) + html::toc(toc);
    if (p.box) body += box_html(*p.box);
    body += "<main>\n";
    for (const auto& part : reading) body += part.markup;
    body += "<p class=\"print-hint note\">This browser leaves collapsed sections out of print: open the ones below before "
            "printing.</p>\n";
    for (const auto& part : reference) body += part.markup;
    body += "</main>\n" + footer_html(p);
    return html::page(p.info.id + " " + p.info.title + " - " + p.raw.options.student, body);
}

}  // namespace lab
