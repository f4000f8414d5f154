// The plots of a run (see run_plots.hpp).
#include "run_plots.hpp"

#include <cmath>

#include "run_record.hpp"
#include "xy_plot.hpp"

namespace lab {

namespace {

// Whether the fp32 ridge's value may be printed on the plot. It is one of 02.05's answers and the
// device has the same ridge in every lesson, so it is withheld unless the view is revealed or the
// run shows it anyway: a shown metric of this run is that ridge (02.04's teaching prints it, and
// a "ridge ? FLOP/B" beside it read as a contradiction).
bool ridge_shown(const LessonInfo& info, const RawRun& raw, const Derivation& d, const std::set<std::string>& withheld,
                 const std::string& pipe) {
    if (withheld.empty() && !record::withheld_metrics(info, false, raw.device_kind).empty()) return true;  // --reveal
    const double peak = raw.ceilings.peak_flops(pipe), bw = raw.ceilings.peak_bandwidth();
    if (!(peak > 0 && bw > 0)) return false;
    const double ridge = peak / bw;
    for (const auto& m : d.metrics)
        if (!withheld.count(m.name) && m.kind != MetricKind::category && std::fabs(m.number - ridge) <= 1e-6 * ridge) return true;
    return false;
}

// The measured regime as the derivation states it, or "" when withheld.
std::string shown_regime(const Derivation& d, const std::set<std::string>& withheld, const std::string& workload) {
    const std::string name = workload + ".measured_regime";
    if (withheld.count(name)) return "";
    const MetricValue* m = d.find(name);
    return m ? m->text : "";
}

}  // namespace

plot::RooflineChart roofline_chart(const LessonInfo& info, const RawRun& raw, const Derivation& d,
                                   const std::set<std::string>& withheld) {
    plot::RooflineChart c;
    c.title = info.id + " " + info.title + " (" + raw.facts.name + ")";
    for (const auto& [pipe, ceiling] : raw.ceilings.flops_per_s) {
        // Raised to a workload's own rate, or not trusted: said on the roof (run_table's status
        // has the long form under the ceilings).
        std::string note;
        if (const std::string workload = raising_workload(ceiling); !workload.empty())
            note = "raised to the rate of " + workload;
        else if (!ceiling.trusted)
            note = "not trusted";
        c.compute.push_back({pipe, ceiling.value, note});
    }
    c.bandwidth_bytes_per_s = raw.ceilings.peak_bandwidth();
    c.bandwidth_label = "DRAM (best bandwidth kernel)";
    c.ridge_pipe = raw.ceilings.has_flops("fp32.simt") ? "fp32.simt" : "";
    c.show_ridge_value = ridge_shown(info, raw, d, withheld, c.ridge_pipe);
    for (const auto& wd : d.workloads)
        c.points.push_back({wd.workload, wd.placement.ai, wd.placement.flops_per_s, shown_regime(d, withheld, wd.workload),
                            !withheld.count(wd.workload + ".ai"), !withheld.count(wd.workload + ".flops_per_s"),
                            raw.at(wd.workload).workload.pipe, !withheld.count(wd.workload + ".roof_fraction")});
    return c;
}

std::vector<RunPlot> run_plots(const LessonInfo& info, const RawRun& raw, const Derivation& d,
                               const std::set<std::string>& withheld) {
    std::vector<RunPlot> out;
    const plot::RooflineChart roofline = roofline_chart(info, raw, d, withheld);
    const std::string why = plot::not_drawable(roofline);
    out.push_back({"roofline", roofline.title, why.empty() ? plot::render_svg(roofline) : "", why});
    // Each lesson plot says whose it is: a file saved with --plots is read on its own.
    const std::string subtitle = info.id + " " + info.title + " \u00b7 " + raw.facts.name + (raw.options.quick ? " \u00b7 quick run" : "");
    for (const auto& p : d.plots) out.push_back({p.name, p.title, plot::render_plot_svg(p, withheld, subtitle), ""});
    return out;
}

}  // namespace lab
