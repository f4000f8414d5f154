// Console report of a run (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "atomic_file.hpp"
#include "console.hpp"
#include "errors.hpp"
#include "run_plots.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "xy_plot.hpp"

namespace lab::cli {

std::vector<std::string> withheld_graded(const RunView& v) { return lab::withheld_graded(v.info, v.withheld, v.derivation); }

plot::RooflineChart roofline_chart(const RunView& v) {
    return lab::roofline_chart(v.info, v.raw, v.derivation, v.withheld);
}

std::filesystem::path report_path(const std::string& flag, const std::filesystem::path& out, const std::filesystem::path& run) {
    namespace fs = std::filesystem;
    if (fs::is_directory(out)) throw UsageError(flag + " " + out.string() + " is a folder: give a file name, e.g. report.html");
    std::error_code ec;
    if (out.lexically_normal() == run.lexically_normal() || fs::equivalent(out, run, ec))
        throw UsageError(flag + " " + out.string() + " is the run record itself: give the page another name");
    return out;
}

std::vector<std::string> write_plot_files(const std::filesystem::path& dir, const RunView& v) {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(dir.string(), "cannot create the folder (" + ec.message() + ")", "choose another --plots path");
    std::vector<std::string> lines;
    for (const RunPlot& p : run_plots(v.info, v.raw, v.derivation, v.withheld)) {
        if (p.svg.empty()) {
            lines.push_back(p.name + " not drawn: " + p.not_drawn);
            continue;
        }
        const std::filesystem::path svg = dir / (p.name + "-" + v.info.id + ".svg");
        write_file_atomically(svg, p.svg);
        lines.push_back(svg.string());
    }
    return lines;
}

void check_plots_writable(const std::filesystem::path& dir) {
    // A file of the plots' kind, tried in the folder (check_writable creates it, as writing would).
    check_writable((dir.empty() ? std::filesystem::path(".") : dir) / "plot.svg", "--plots");
}

void print_run(std::ostream& out, const RunView& v) {
    out << fmt::format("lab run {} - {}{}   student: {}\n\n", v.info.id, v.info.title, v.raw.options.quick ? " (quick)" : "",
                       v.raw.options.student);
    print_device(out, v.raw.device_kind, v.raw.facts);
    print_ceilings(out, v.raw.ceilings, CeilingDetail::brief);
    if (!v.ceilings_note.empty()) out << wrap_hanging("          " + v.ceilings_note, 10, terminal_columns()) << "\n";
    out << "\n";
    print_workloads(out, v.raw, v.derivation, v.withheld);
    for (const auto& sk : v.raw.skipped) out << "  not measured: " << sk.workload << " (" << sk.reason << ")\n";
    if (const auto busy = busy_machine_note(v.raw)) out << wrap_hanging(*busy, 14, terminal_columns()) << "\n";
    if (v.info.roofline) out << "\n" << plot::render_terminal(roofline_chart(v));
    for (const auto& p : v.derivation.plots) out << "\n" << plot::render_plot_terminal(p, v.withheld);
    if (!v.derivation.teaching.empty()) {
        out << "\nWhat this shows\n";
        const int columns = terminal_columns();
        for (const auto& line : v.derivation.teaching) {
            const std::string text = "  " + record::render_teaching(line, v.derivation, v.withheld);
            // Prose is folded to the terminal under its own indent; a line with a run of spaces in
            // it is a table's row, which folding would break, so it stays whole.
            const std::size_t indent = text.find_first_not_of(' ');
            const bool table_row = indent != std::string::npos && text.find("  ", indent) != std::string::npos;
            out << (table_row ? text : wrap_hanging(text, indent == std::string::npos ? 0 : indent + 2, columns)) << "\n";
        }
    }
    // Counted: the graded values, i.e. what `lab answers` asks (check.* helpers are withheld too,
    // but nobody is asked for them).
    const std::vector<std::string> asked = withheld_graded(v);
    // Revealed (or a course that withholds nothing): the graded values, listed, since a lesson's
    // lines need not print each one (02.02's do not).
    std::vector<const MetricValue*> shown;
    for (const auto& decl : v.info.metrics)
        if (const MetricValue* m = v.derivation.find(decl.name); decl.graded && m && !v.withheld.count(decl.name)) shown.push_back(m);
    if (asked.empty() && !shown.empty()) {
        out << "\nGraded values (revealed)\n";
        std::size_t width = 0;
        for (const auto* m : shown) width = std::max(width, m->name.size());
        for (const auto* m : shown) out << fmt::format("  {:<{}}  {}\n", m->name, width, record::format_value(*m));
    }
    if (!asked.empty()) {
        out << "\n"
            << wrap_hanging(fmt::format("{} graded value{} withheld ('?' where a line above shows {}): work {} out from the lines "
                                        "above and the tools they name.",
                                        asked.size(), asked.size() == 1 ? " is" : "s are", asked.size() == 1 ? "it" : "one",
                                        asked.size() == 1 ? "it" : "them"),
                            2, terminal_columns())
            << "\n";
        // Which each '?' is (and those no line shows): the answers `lab answers ID` asks for.
        const int columns = terminal_columns();
        const std::size_t width = columns > 0 ? std::min(columns, 100) : 100;
        auto list = [&out, width](std::string line, const std::vector<std::string>& names) {
            const std::string indent(std::string("  withheld:").size(), ' ');  // both lists continue in one column
            for (std::size_t i = 0; i < names.size(); ++i) {
                const std::string item = " " + names[i] + (i + 1 < names.size() ? "," : "");
                if (line.size() + item.size() > width) {
                    out << line << "\n";
                    line = indent;
                }
                line += item;
            }
            out << line << "\n";
        };
        list("  withheld:", asked);
        if (const auto twins = lab::withheld_twins(v.info, v.withheld); !twins.empty())
            list("  also ? (each would give an asked value away):", twins);
    }
}

}  // namespace lab::cli
