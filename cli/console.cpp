// Console output (see console.hpp).
#include "console.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <streambuf>

#include <fmt/format.h>

#include "format.hpp"
#include "run_table.hpp"

namespace lab::cli {

namespace {
// Figures as every other lab output writes them (format::quantity).
std::string si(double v, const std::string& unit) { return format::quantity(v, unit); }
}  // namespace

int terminal_columns() {
    // COLUMNS first (set by shells for their children only when exported; tests and scripts can
    // set it), then the terminal itself; a pipe or a file gets whole lines (0: no wrapping), which
    // grep and diff read best.
    if (const char* env = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 40) return static_cast<int>(n);
    }
    winsize w{};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
    return 0;
}

std::string wrap_hanging(const std::string& line, std::size_t indent, int columns) {
    if (columns <= 0 || line.size() <= static_cast<std::size_t>(columns) || indent + 20 > static_cast<std::size_t>(columns)) return line;
    const std::size_t width = static_cast<std::size_t>(columns);
    // The first line keeps its own leading spaces (which may be fewer than the hanging indent:
    // "12 graded values ..." hangs by 2 under a first line that starts at column 0).
    std::size_t pos = std::min(line.find_first_not_of(' '), line.size());
    std::string out, current = line.substr(0, pos);
    bool first_word = true;
    while (pos < line.size()) {
        std::size_t end = line.find(' ', pos);
        if (end == std::string::npos) end = line.size();
        const std::string word = line.substr(pos, end - pos);
        pos = end + 1;
        if (word.empty()) continue;
        // A word that does not fit goes to the next line, indented under the first (a word longer
        // than a whole line stays whole: a path is not cut).
        if (!first_word && current.size() + 1 + word.size() > width) {
            out += current + "\n";
            current = std::string(indent, ' ') + word;
        } else {
            current += (first_word ? "" : " ") + word;
        }
        first_word = false;
    }
    return out + current;
}

void print_device(std::ostream& out, DeviceKind kind, const DeviceFacts& f) {
    out << fmt::format("device    {}: {}\n", to_string(kind), f.name);
    const std::string caches = caches_text(f);
    const int columns = terminal_columns();
    out << wrap_hanging(fmt::format("          {} cores, {} threads used, {} kernels; {}; memory {:.1f} GiB", f.compute_units,
                                    f.threads, f.simd.empty() ? "-" : f.simd, caches,
                                    static_cast<double>(f.memory_bytes) / (1ull << 30)),
                        10, columns)
        << "\n";
    // Why the figures may read lower than the machine's: a VM, a container's CPU quota or memory limit.
    for (std::string key : {"virtualised", "cpu_quota", "memory_limit"}) {
        auto v = f.extra.find(key);
        if (v == f.extra.end()) continue;
        std::replace(key.begin(), key.end(), '_', ' ');
        out << wrap_hanging("          " + key + ": " + v->second, 10, columns) << "\n";
    }
    if (auto b = f.extra.find("blas"); b != f.extra.end()) out << wrap_hanging("          BLAS: " + b->second, 16, columns) << "\n";
}

void print_ceilings(std::ostream& out, const Ceilings& c, CeilingDetail detail) {
    out << fmt::format("ceilings  clock {}   launch {}{}{}{}\n", si(c.clock_hz.value, "Hz"), format::duration(c.launch_s.value),
                       c.launch_graph_s.value > 0 ? "   graph launch " + format::duration(c.launch_graph_s.value) + " per kernel" : "",
                       c.threads > 1 ? fmt::format("   ({} threads)", c.threads) : "", c.quick ? "   (quick calibration)" : "");
    const std::string best_kernel = best_bandwidth_kernel(c);
    auto line = [&](const std::string& name, const std::string& value, const Ceiling& v, bool bandwidth) {
        const std::string head = fmt::format("          {:<12} {:>14}   ", name, value);
        const std::string why = ceiling_status(v);
        if (detail == CeilingDetail::full) {
            // Where the value comes from when it is not a trusted calibration, then how it was measured.
            out << wrap_hanging(head + (why.empty() ? "" : "[" + why + "] ") + v.method, head.size(), terminal_columns()) << "\n";
            return;
        }
        // A run's view: the value, how steady its samples were, and whether to trust it, in one
        // short line; the method is in `lab device` and the run's report.
        std::string stats;
        if (bandwidth && name == "bw.best" && !best_kernel.empty()) stats = "= bw." + best_kernel;
        else if (v.samples > 0) stats = fmt::format("{} samples, spread {}{}", v.samples, format::spread(v.spread), v.noise_met ? "" : "*");
        std::string status = why;
        if (!v.trusted && why.rfind("not trusted", 0) == 0) status = "not trusted (noisy, or measured under load)";
        std::string text = fmt::format("{}{:<25} {}", head, stats, status);
        text.erase(text.find_last_not_of(' ') + 1);
        // Too wide for the terminal (or, in a file, for 100 columns): the status goes on a line of
        // its own, under the samples, so every value still reads down one column.
        const int columns = terminal_columns();
        if (!status.empty() && text.size() > static_cast<std::size_t>(columns > 0 ? columns : 100)) {
            text = fmt::format("{}{}", head, stats);
            text.erase(text.find_last_not_of(' ') + 1);
            text += "\n" + wrap_hanging(std::string(head.size(), ' ') + status, head.size(), columns);
        }
        out << text << "\n";
    };
    for (const auto& [k, v] : c.flops_per_s) line(k, si(v.value, v.unit.empty() ? "FLOP/s" : v.unit), v, false);
    for (const auto& [k, v] : c.bandwidth_bytes_per_s) line("bw." + k, si(v.value, "B/s"), v, true);
    for (const auto& [k, why] : c.skipped) out << fmt::format("          {:<12} {:>14}   {}\n", k, "not measured", why);
    if (detail == CeilingDetail::full) {
        if (!c.clock_hz.measured_at.empty()) out << "          calibrated " << c.clock_hz.measured_at << " (a ceiling re-measured since says so)\n";
        return;
    }
    // The calibration's date, not every ceiling's: one re-measured in a later run says so beside it
    // ("re-measured in a run of lesson 02.07") and carries its own date in the record.
    out << wrap_hanging("          " + (c.clock_hz.measured_at.empty() ? "" : "calibrated " + c.clock_hz.measured_at + "; ") +
                            "* = noise target not met; how each was measured: lab report",
                        10, terminal_columns())
        << "\n";
}

void print_spec(std::ostream& out, const nlohmann::json& spec) {
    std::string kind = spec.value("kind", "none");
    if (kind == "none") {
        out << "spec      " << spec.value("note", "none") << "\n";
        return;
    }
    out << "spec      " << kind << ": ";
    bool first = true;
    const nlohmann::json flops = spec.value("flops_per_s", nlohmann::json::object());
    for (const auto& [k, v] : flops.items()) {
        out << (first ? "" : ", ") << k << " " << si(v.get<double>(), "FLOP/s");
        first = false;
    }
    if (spec.contains("bandwidth_bytes_per_s") && spec["bandwidth_bytes_per_s"].is_number())
        out << ", DRAM " << si(spec["bandwidth_bytes_per_s"].get<double>(), "B/s");
    out << "\n";
    if (spec.contains("basis")) out << wrap_hanging("          " + spec["basis"].get<std::string>(), 10, terminal_columns()) << "\n";
}

void print_workloads(std::ostream& out, const RawRun& run, const Derivation& d,
                     const std::set<std::string>& withheld) {
    const std::vector<WorkloadRow> rows = workload_rows(run, d, withheld);
    // Columns as wide as their contents (a roof fraction of "0.0565%" widens its column, not the
    // row). Parameters that would widen every row (02.07's seven sizes) are listed under the
    // table instead, one workload per line.
    constexpr std::size_t kParamsInTable = 24;
    // The roofline columns only where a workload is placed on the roofline: 02.03's latency and
    // bandwidth sweeps are not, and six empty columns only push the table past the terminal.
    const bool any_placed = std::any_of(rows.begin(), rows.end(), [](const WorkloadRow& r) { return r.regime.has_value(); });
    std::vector<std::string> heads = {"time", "noise", "FLOP", "bytes"};
    if (any_placed) heads.insert(heads.end(), {"FLOP/s", "B/s", "AI", "roof", "ref"});
    auto cells = [](const WorkloadRow& r) {
        std::vector<std::string> c = {r.time, r.noise + (r.noise_met ? "" : "*"), r.flops, r.bytes};
        if (r.regime)
            for (const auto* v : {&r.flops_per_s, &r.bytes_per_s, &r.ai, &r.roof_fraction, &r.reference_fraction}) c.push_back((*v)->text);
        return c;
    };
    std::vector<std::size_t> width;
    for (const auto& h : heads) width.push_back(std::max<std::size_t>(h.size(), 5));
    std::size_t name_w = 8, params_w = 6, regime_w = any_placed ? 6 : 0;
    for (const auto& r : rows) {
        name_w = std::max(name_w, r.name.size()), params_w = std::max(params_w, r.params.size());
        if (r.regime) regime_w = std::max(regime_w, r.regime->text.size());
        const auto c = cells(r);
        for (std::size_t k = 0; k < c.size(); ++k) width[k] = std::max(width[k], c[k].size());
    }
    // The widest row as it would be with the parameters in it: past the terminal's width (a file's:
    // 100 columns), the parameters go under the table, so a row is never folded by the terminal.
    std::size_t row_w = name_w + 1 + params_w + (any_placed ? 2 + regime_w : 0);
    for (const std::size_t w : width) row_w += w + 1;
    const int columns = terminal_columns();
    const bool params_below = params_w > kParamsInTable || row_w > static_cast<std::size_t>(columns > 0 ? columns : 100);
    auto line = [&](const std::string& name, const std::string& params, const std::vector<std::string>& values, const std::string& regime) {
        std::string text = params_below ? fmt::format("{:<{}}", name, name_w) : fmt::format("{:<{}} {:<{}}", name, name_w, params, params_w);
        for (std::size_t k = 0; k < values.size(); ++k) text += fmt::format(" {:>{}}", values[k], width[k]);
        if (!regime.empty()) text += "  " + regime;
        return text + "\n";
    };
    out << line("workload", "params", heads, any_placed ? "regime" : "");
    for (const WorkloadRow& r : rows) out << line(r.name, r.params, cells(r), r.regime ? r.regime->text : "");
    out << wrap_hanging(std::string("(time: median per invocation; noise: relative stddev, * = noise target not met in the time limit") +
                            (any_placed ? "; roof: of the ceilings above; ref: of the ceilings measured right after the kernel, which "
                                          "decide its regime)"
                                        : ")"),
                        1, columns > 0 ? columns : 100)
        << "\n";
    if (std::any_of(rows.begin(), rows.end(), [](const WorkloadRow& r) { return r.reference_above_roof; }))
        out << wrap_hanging(std::string("(") + kReferenceAboveRoofNote + ")", 1, terminal_columns()) << "\n";
    // The references themselves: with them the ref column, and so the regime, can be worked out
    // from what is shown (a launch measured under load decides an overhead verdict).
    bool any_reference = false;
    for (const WorkloadRow& r : rows) any_reference = any_reference || !r.references.empty();
    if (any_reference) {
        out << "ref ceilings (measured right after each kernel)\n";
        for (const WorkloadRow& r : rows)
            if (!r.references.empty()) out << wrap_hanging(fmt::format("  {:<{}}  {}", r.name, name_w, r.references), name_w + 4, columns) << "\n";
    }
    if (!params_below) return;
    out << "params\n";
    for (const WorkloadRow& r : rows) out << wrap_hanging(fmt::format("  {:<{}}  {}", r.name, name_w, r.params), name_w + 4, columns) << "\n";
}

namespace {

class ControlFilter : public std::streambuf {
public:
    explicit ControlFilter(std::streambuf* to) : to_(to) {}

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const auto u = static_cast<unsigned char>(traits_type::to_char_type(c));
        const char out = (u < 0x20 && u != '\n' && u != '\t') || u == 0x7f ? '?' : static_cast<char>(u);
        return to_->sputc(out) == traits_type::eof() ? traits_type::eof() : c;
    }
    int sync() override { return to_->pubsync(); }

private:
    std::streambuf* to_;
};

}  // namespace

void guard_standard_output() {
    static ControlFilter filter(std::cout.rdbuf());
    std::cout.rdbuf(&filter);
}

}  // namespace lab::cli
