// Drawing a lesson's plots (see xy_plot.hpp).
#include "xy_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "roofline_text.hpp"
#include "run_record.hpp"

namespace lab::plot {

namespace {

// One axis: data range -> [0, 1], and its ticks.
struct Scale {
    bool log = false;
    double lo = 0, hi = 1;  // in axis units (log10 of the value on a log axis)
    double to_unit(double v) const {
        const double a = log ? std::log10(v) : v;
        return hi > lo ? (a - lo) / (hi - lo) : 0.5;
    }
    std::vector<double> ticks() const {
        std::vector<double> t;
        if (log) {
            const int step = hi - lo > 8 ? 2 : 1;
            for (int e = static_cast<int>(std::ceil(lo)); e <= static_cast<int>(std::floor(hi)); e += step) t.push_back(std::pow(10.0, e));
            return t;
        }
        const double raw = (hi - lo) / 5;
        const double mag = std::pow(10.0, std::floor(std::log10(raw)));
        const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
        for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) t.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
        return t;
    }
};

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

bool shown(const PlotMark& m, const std::set<std::string>& withheld) { return m.metric.empty() || !withheld.count(m.metric); }

// The axis fitted to every series value and shown mark on it (whole decades on a log axis, 5%
// padding on a linear one).
Scale fit(const Plot& p, bool x_axis, const std::set<std::string>& withheld) {
    const PlotAxis& axis = x_axis ? p.x : p.y;
    Scale s{axis.log, INFINITY, -INFINITY};
    auto take = [&](double v) {
        if (!usable(v, axis.log)) return;
        const double a = axis.log ? std::log10(v) : v;
        s.lo = std::min(s.lo, a), s.hi = std::max(s.hi, a);
    };
    for (const auto& series : p.series)
        for (double v : x_axis ? series.x : series.y) take(v);
    for (const auto& m : p.marks)
        if (shown(m, withheld) && (x_axis || !m.vertical)) take(x_axis ? m.x : m.y);
    if (!std::isfinite(s.lo)) s.lo = 0, s.hi = 1;
    if (axis.log) {
        s.lo = std::floor(s.lo), s.hi = std::ceil(s.hi);
        if (s.hi == s.lo) s.hi += 1;
    } else {
        const double pad = s.hi > s.lo ? 0.05 * (s.hi - s.lo) : std::max(1.0, std::fabs(s.lo) * 0.1);
        s.lo -= pad, s.hi += pad;
    }
    return s;
}

std::string tick_label(double v, const std::string& unit) {
    return record::format_value(MetricValue{"", MetricKind::number, unit, v, {}});
}

std::string axis_title(const PlotAxis& a) { return a.unit.empty() ? a.label : a.label + " [" + a.unit + "]"; }

std::string xml(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

}  // namespace

std::vector<std::string> plot_problems(const Plot& p) {
    std::vector<std::string> out;
    static const std::regex name_ok("[a-z0-9_]+");
    if (!std::regex_match(p.name, name_ok)) out.push_back("plot name '" + p.name + "' is not lower-case letters, digits and _");
    if (p.series.empty()) out.push_back("plot '" + p.name + "' has no series");
    for (const auto& s : p.series) {
        if (s.x.size() != s.y.size())
            out.push_back(fmt::format("plot '{}': series '{}' has {} x values and {} y values", p.name, s.name, s.x.size(), s.y.size()));
        for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
            if (!usable(s.x[i], p.x.log) || !usable(s.y[i], p.y.log)) {
                out.push_back(fmt::format("plot '{}': series '{}' point {} ({}, {}) cannot be drawn on {} axes", p.name, s.name, i,
                                          s.x[i], s.y[i], p.x.log || p.y.log ? "log" : "these"));
                break;
            }
    }
    return out;
}

std::string render_plot_svg(const Plot& p, const std::set<std::string>& withheld) {
    constexpr double W = 760, H = 440, left = 90, right = 190, top = 40, bottom = 60;
    const double pw = W - left - right, ph = H - top - bottom;
    const Scale sx = fit(p, true, withheld), sy = fit(p, false, withheld);
    auto X = [&](double v) { return left + pw * sx.to_unit(v); };
    auto Y = [&](double v) { return top + ph * (1 - sy.to_unit(v)); };
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{3}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{2}</text>\n",
        W, H, xml(p.title), left);
    // Axes, grid and ticks.
    svg += fmt::format("<g class=\"axes\" stroke=\"#333\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                       "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/></g>\n",
                       left, top + ph, left + pw, top);
    for (double t : sx.ticks())
        svg += fmt::format("<g class=\"xtick\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                           "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text></g>\n",
                           X(t), top, top + ph, top + ph + 18, xml(tick_label(t, p.x.unit)));
    for (double t : sy.ticks())
        svg += fmt::format("<g class=\"ytick\"><line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                           "<text x=\"{3}\" y=\"{1:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{4}</text></g>\n",
                           left, Y(t), left + pw, left - 6, xml(tick_label(t, p.y.unit)));
    svg += fmt::format("<text class=\"xlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, H - 16,
                       xml(axis_title(p.x) + (p.x.log ? " (log)" : "")));
    svg += fmt::format("<text class=\"ylabel\" transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                       top + ph / 2, xml(axis_title(p.y) + (p.y.log ? " (log)" : "")));
    // Series and legend.
    for (std::size_t i = 0; i < p.series.size(); ++i) {
        const PlotSeries& s = p.series[i];
        const char* colour = kColours[i % std::size(kColours)];
        svg += fmt::format("<g class=\"series\" data-name=\"{}\" fill=\"{}\" stroke=\"{}\">", xml(s.name), colour, colour);
        std::string points;
        for (std::size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
            if (!usable(s.x[k], p.x.log) || !usable(s.y[k], p.y.log)) continue;
            points += fmt::format("{:.1f},{:.1f} ", X(s.x[k]), Y(s.y[k]));
            svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>", X(s.x[k]), Y(s.y[k]));
        }
        if (s.line && !points.empty()) svg += fmt::format("<polyline fill=\"none\" stroke-width=\"1.5\" points=\"{}\"/>", points);
        svg += "</g>\n";
        const double ly = top + 10 + 18 * static_cast<double>(i);
        svg += fmt::format("<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                           "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
                           left + pw + 14, ly - 10, colour, left + pw + 32, ly, xml(s.name));
    }
    // Marks.
    for (const auto& m : p.marks) {
        if (!shown(m, withheld) || !usable(m.x, p.x.log) || (!m.vertical && !usable(m.y, p.y.log))) continue;
        if (m.vertical)
            svg += fmt::format("<g class=\"mark\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" "
                               "stroke-dasharray=\"4 3\"/><text x=\"{3:.1f}\" y=\"{4}\" fill=\"#333\">{5}</text></g>\n",
                               X(m.x), top, top + ph, X(m.x) + 4, top + 12, xml(m.label));
        else
            svg += fmt::format("<g class=\"mark\"><circle cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"6\" fill=\"none\" stroke=\"black\" "
                               "stroke-width=\"1.5\"/><text x=\"{2:.1f}\" y=\"{3:.1f}\" fill=\"#111\">{4}</text></g>\n",
                               X(m.x), Y(m.y), X(m.x) + 9, Y(m.y) - 8, xml(m.label));
    }
    return svg + "</svg>\n";
}

std::string render_plot_terminal(const Plot& p, const std::set<std::string>& withheld, int width, int height) {
    static const char kMarks[] = "*+ox#@%&";
    const Scale sx = fit(p, true, withheld), sy = fit(p, false, withheld);
    std::vector<std::string> grid(static_cast<std::size_t>(height), std::string(static_cast<std::size_t>(width), ' '));
    auto col = [&](double v) { return std::clamp(static_cast<int>(std::lround(sx.to_unit(v) * (width - 1))), 0, width - 1); };
    auto row = [&](double v) { return std::clamp(static_cast<int>(std::lround((1 - sy.to_unit(v)) * (height - 1))), 0, height - 1); };
    // Series first, marks over them (a mark is what the reader looks for).
    std::vector<std::string> legend;
    for (std::size_t i = 0; i < p.series.size(); ++i) {
        const PlotSeries& s = p.series[i];
        const char c = kMarks[i % (sizeof kMarks - 1)];
        for (std::size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k)
            if (usable(s.x[k], p.x.log) && usable(s.y[k], p.y.log)) grid[static_cast<std::size_t>(row(s.y[k]))][static_cast<std::size_t>(col(s.x[k]))] = c;
        legend.push_back(fmt::format("  {} {}", c, s.name));
    }
    int number = 0;
    for (const auto& m : p.marks) {
        if (!shown(m, withheld) || !usable(m.x, p.x.log) || (!m.vertical && !usable(m.y, p.y.log))) continue;
        char symbol = '|';
        if (m.vertical) {
            for (auto& line : grid)
                if (line[static_cast<std::size_t>(col(m.x))] == ' ') line[static_cast<std::size_t>(col(m.x))] = '|';
        } else {
            symbol = static_cast<char>('1' + number++ % 9);
            grid[static_cast<std::size_t>(row(m.y))][static_cast<std::size_t>(col(m.x))] = symbol;
        }
        legend.push_back(fmt::format("  {} {}", symbol, m.label));
    }
    auto value_at = [](const Scale& s, double unit_pos) { const double a = s.lo + unit_pos * (s.hi - s.lo); return s.log ? std::pow(10.0, a) : a; };
    const std::string ytop = tick_label(value_at(sy, 1), p.y.unit), ybottom = tick_label(value_at(sy, 0), p.y.unit);
    const std::size_t margin = std::max(detail::code_points(ytop), detail::code_points(ybottom)) + 1;
    std::string out = p.title + "\n" + std::string(margin, ' ') + axis_title(p.y) + (p.y.log ? " (log)" : "") + "\n";
    for (int r = 0; r < height; ++r) {
        const std::string label = r == 0 ? ytop : r == height - 1 ? ybottom : "";
        out += std::string(margin - detail::code_points(label) - 1, ' ') + label + " |" + grid[static_cast<std::size_t>(r)] + "\n";
    }
    out += std::string(margin, ' ') + "+" + std::string(static_cast<std::size_t>(width), '-') + "\n";
    const std::string xl = tick_label(value_at(sx, 0), p.x.unit), xr = tick_label(value_at(sx, 1), p.x.unit);
    const std::string title = axis_title(p.x) + (p.x.log ? " (log)" : "");
    std::string axis = std::string(margin + 1, ' ') + xl;
    const std::size_t room = margin + 1 + static_cast<std::size_t>(width);
    const std::size_t mid = std::max(axis.size() + 2, (room - title.size()) / 2);
    axis += std::string(mid > axis.size() ? mid - axis.size() : 1, ' ') + title;
    axis += std::string(room > axis.size() + xr.size() ? room - axis.size() - xr.size() : 2, ' ') + xr;
    out += axis + "\n";
    for (const auto& l : legend) out += l + "\n";
    return out;
}

}  // namespace lab::plot
