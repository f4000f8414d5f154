// The plots of a run (see run_plots.hpp).
#include "run_plots.hpp"

#include <cmath>

#include "run_record.hpp"
#include "xy_plot.hpp"

namespace lab {

namespace {

// Whether the ridge's value may be printed on the plot: unless a withheld (graded) value is that
// ridge, as 02.05's ridge_point is. Hidden for every lesson that withholds anything, it read "?"
// beside teaching text that printed it (02.04), and in lessons that never ask it (02.10, 02.12).
bool ridge_shown(const RawRun& raw, const Derivation& d, const std::set<std::string>& withheld, const std::string& pipe) {
    const double peak = raw.ceilings.peak_flops(pipe), bw = raw.ceilings.peak_bandwidth();
    if (!(peak > 0 && bw > 0)) return true;
    const double ridge = peak / bw;
    for (const auto& name : withheld)
        if (const MetricValue* m = d.find(name); m && m->kind != MetricKind::category && std::fabs(m->number - ridge) <= 1e-6 * ridge)
            return false;
    return true;
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
        if (ceiling.source.rfind("raised to the rate of workload '", 0) == 0)
            note = "raised to the rate of " + ceiling.source.substr(32, ceiling.source.size() - 33);
        else if (!ceiling.trusted)
            note = "not trusted";
        c.compute.push_back({pipe, ceiling.value, note});
    }
    c.bandwidth_bytes_per_s = raw.ceilings.peak_bandwidth();
    c.bandwidth_label = "DRAM (best bandwidth kernel)";
    c.ridge_pipe = raw.ceilings.has_flops("fp32.simt") ? "fp32.simt" : "";
    c.show_ridge_value = ridge_shown(raw, d, withheld, c.ridge_pipe);
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
    for (const auto& p : d.plots) out.push_back({p.name, p.title, plot::render_plot_svg(p, withheld), ""});
    return out;
}

}  // namespace lab
