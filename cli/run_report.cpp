// Console report of a run (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>

#include "console.hpp"
#include "run_record.hpp"
#include "xy_plot.hpp"

namespace lab::cli {

namespace {

// A view made with --reveal: the lesson has values to withhold and none is withheld.
bool revealed(const RunView& v) {
    return v.withheld.empty() && !record::withheld_metrics(v.info, false, v.raw.device_kind).empty();
}

// The measured regime as the derivation states it, or "" when withheld.
std::string shown_regime(const RunView& v, const std::string& workload) {
    const std::string name = workload + ".measured_regime";
    if (v.withheld.count(name)) return "";
    const MetricValue* m = v.derivation.find(name);
    return m ? m->text : "";
}

}  // namespace

std::vector<std::string> withheld_graded(const RunView& v) {
    std::vector<std::string> out;
    for (const auto& d : v.info.metrics)
        if (d.graded && v.withheld.count(d.name)) out.push_back(d.name);
    return out;
}

plot::RooflineChart roofline_chart(const RunView& v) {
    plot::RooflineChart c;
    c.title = v.info.id + " " + v.info.title + " (" + v.raw.facts.name + ")";
    for (const auto& [pipe, ceiling] : v.raw.ceilings.flops_per_s) c.compute.push_back({pipe, ceiling.value});
    c.bandwidth_bytes_per_s = v.raw.ceilings.peak_bandwidth();
    c.bandwidth_label = "DRAM (best bandwidth kernel)";
    c.ridge_pipe = v.raw.ceilings.has_flops("fp32.simt") ? "fp32.simt" : "";
    // The fp32 ridge is a graded answer (02.05's ridge_point) and the same device has the same
    // ridge in every lesson, so every lesson's plot withholds its value unless --reveal.
    c.show_ridge_value = revealed(v);
    for (const auto& wd : v.derivation.workloads)
        c.points.push_back({wd.workload, wd.placement.ai, wd.placement.flops_per_s, shown_regime(v, wd.workload)});
    return c;
}

void print_run(std::ostream& out, const RunView& v) {
    out << fmt::format("lab run {} - {}{}   student: {}\n\n", v.info.id, v.info.title, v.raw.options.quick ? " (quick)" : "",
                       v.raw.options.student);
    print_device(out, v.raw.device_kind, v.raw.facts);
    print_ceilings(out, v.raw.ceilings);
    if (!v.ceilings_note.empty()) out << "          " << v.ceilings_note << "\n";
    out << "\n";
    print_workloads(out, v.raw, v.derivation, v.withheld);
    for (const auto& sk : v.raw.skipped) out << "  not measured: " << sk.workload << " (" << sk.reason << ")\n";
    if (v.info.roofline) out << "\n" << plot::render_terminal(roofline_chart(v));
    for (const auto& p : v.derivation.plots) out << "\n" << plot::render_plot_terminal(p, v.withheld);
    if (!v.derivation.teaching.empty()) {
        out << "\nWhat this shows\n";
        for (const auto& line : v.derivation.teaching)
            out << "  " << record::render_teaching(line, v.derivation, v.withheld) << "\n";
    }
    // Counted: the graded values, i.e. what `lab answers` asks (check.* helpers are withheld too,
    // but nobody is asked for them).
    const std::vector<std::string> asked = withheld_graded(v);
    if (!asked.empty()) {
        out << fmt::format("\n{} graded value{} shown as '?': work {} out from the measurements above.\n", asked.size(),
                           asked.size() == 1 ? " is" : "s are", asked.size() == 1 ? "it" : "them");
        // Which each '?' is (and those no line shows): the answers `lab answers ID` asks for.
        std::string line = "  withheld:";
        for (std::size_t i = 0; i < asked.size(); ++i) {
            const std::string item = " " + asked[i] + (i + 1 < asked.size() ? "," : "");
            if (line.size() + item.size() > 100) {
                out << line << "\n";
                line = "           ";
            }
            line += item;
        }
        out << line << "\n";
    }
}

}  // namespace lab::cli
