// Console report of a run (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>

#include "console.hpp"
#include "run_record.hpp"

namespace lab::cli {

plot::RooflineChart roofline_chart(const RunView& v) {
    plot::RooflineChart c;
    c.title = v.info.id + " " + v.info.title + " (" + v.raw.facts.name + ")";
    for (const auto& [pipe, ceiling] : v.raw.ceilings.flops_per_s) c.compute.push_back({pipe, ceiling.value});
    c.bandwidth_bytes_per_s = v.raw.ceilings.peak_bandwidth();
    c.bandwidth_label = "DRAM (best of read/copy/triad)";
    c.ridge_pipe = v.raw.ceilings.has_flops("fp32.simt") ? "fp32.simt" : "";
    c.show_ridge_value = !v.withheld.count("ridge_point");
    for (const auto& wd : v.derivation.workloads) {
        std::string regime =
            v.withheld.count(wd.workload + ".measured_regime") ? "" : roofline::to_string(wd.placement.measured);
        c.points.push_back({wd.workload, wd.placement.ai, wd.placement.flops_per_s, regime});
    }
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
    if (v.info.roofline) out << "\n" << plot::render_terminal(roofline_chart(v));
    if (!v.derivation.teaching.empty()) {
        out << "\nWhat this shows\n";
        for (const auto& line : v.derivation.teaching)
            out << "  " << record::render_teaching(line, v.derivation, v.withheld) << "\n";
    }
    if (!v.withheld.empty())
        out << fmt::format("\n{} graded values are shown as '?': work them out from the measurements above.\n",
                           v.withheld.size());
}

}  // namespace lab::cli
