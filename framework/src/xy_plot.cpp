// Drawing a lesson's plots (see xy_plot.hpp), in the look every plot of lab shares
// (plot_style.hpp): the roofline's font, frame, ticks and axis titles, Okabe-Ito colours with a
// marker shape per series, margins measured from what they hold (the y tick labels, the legend)
// so that nothing overlaps or is cut off.
#include "xy_plot.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "plot_labels.hpp"
#include "plot_style.hpp"
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
        // Whole decades, and a tenth of one more where a point sits on the decade: a point on the
        // frame (02.06's batch 1, at 10^0) reads as part of the axis, not as data.
        const double data_lo = s.lo, data_hi = s.hi;
        s.lo = std::floor(s.lo), s.hi = std::ceil(s.hi);
        if (s.hi == s.lo) s.hi += 1;
        if (data_lo - s.lo < 0.02) s.lo -= 0.1;
        if (s.hi - data_hi < 0.02) s.hi += 0.1;
    } else {
        const double pad = s.hi > s.lo ? 0.05 * (s.hi - s.lo) : std::max(1.0, std::fabs(s.lo) * 0.1);
        s.lo -= pad, s.hi += pad;
    }
    return s;
}

std::string tick_label(double v, const std::string& unit) {
    return record::format_value(MetricValue{"", MetricKind::number, unit, v, {}});
}

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

namespace {

using detail::Anchor;
using detail::Box;

// A series' look: its colour and marker, or, for a reference line paired with a measured series
// by name ("fp32 roof" beside "fp32"), the measured series' colour, dashed and without markers,
// so that a reader sees at once which roof belongs to which sweep.
struct SeriesStyle {
    std::string colour;
    detail::Shape shape = detail::Shape::circle;
    bool reference = false;
};

// The measured series a reference line belongs to: "X roof", "X ceiling", "X bound" or
// "X model" pairs with a series named X.
const PlotSeries* paired_with(const Plot& p, const PlotSeries& s) {
    for (const char* suffix : {" roof", " ceiling", " bound", " model"}) {
        const std::string sfx(suffix);
        if (s.name.size() <= sfx.size() || s.name.compare(s.name.size() - sfx.size(), sfx.size(), sfx) != 0) continue;
        const std::string base = s.name.substr(0, s.name.size() - sfx.size());
        for (const auto& other : p.series)
            if (&other != &s && other.name == base) return &other;
    }
    return nullptr;
}

std::vector<SeriesStyle> series_styles(const Plot& p) {
    std::vector<SeriesStyle> out(p.series.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < p.series.size(); ++i)
        if (!paired_with(p, p.series[i])) {
            out[i] = {detail::series_colour(next), detail::series_shape(next), false};
            ++next;
        }
    for (std::size_t i = 0; i < p.series.size(); ++i)
        if (const PlotSeries* base = paired_with(p, p.series[i])) {
            out[i] = out[static_cast<std::size_t>(base - p.series.data())];
            out[i].reference = true;
        }
    return out;
}

// Words of `text` in lines no wider than `width` px (a word longer than that stays whole).
std::vector<std::string> wrap(const std::string& text, double width) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);
        const std::string longer = line.empty() ? word : line + " " + word;
        if (!line.empty() && detail::text_width(longer) > width) {
            lines.push_back(line);
            line = word;
        } else {
            line = longer;
        }
        at = end + 1;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

// Text with a white halo, so that it stays legible where it crosses a grid line or a series.
std::string text_el(double x, double y, Anchor a, const std::string& raw, const std::string& cls, const std::string& extra = "") {
    return fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" stroke=\"white\" stroke-width=\"3\" "
                       "paint-order=\"stroke\"{}{}>{}</text>",
                       cls, x, y, detail::anchor_name(a), extra.empty() ? "" : " ", extra, xml(raw));
}

constexpr double kLegendMaxText = 190;  // legend names wrap past this width (px)
constexpr double kMarkerRadius = 3.5;

}  // namespace

std::string render_plot_svg(const Plot& p, const std::set<std::string>& withheld, const std::string& subtitle) {
    using namespace detail;
    const Scale sx = fit(p, true, withheld), sy = fit(p, false, withheld);
    const std::vector<SeriesStyle> styles = series_styles(p);

    // The legend's names, wrapped, set the right margin: nothing in it is ever cut off.
    std::vector<std::vector<std::string>> legend_lines;
    double legend_text = 0;
    for (const auto& s : p.series) {
        legend_lines.push_back(wrap(s.name, kLegendMaxText));
        for (const auto& l : legend_lines.back()) legend_text = std::max(legend_text, text_width(l));
    }
    // The y tick labels set the left margin, and the y axis title goes left of the widest.
    const std::vector<double> yticks = sy.ticks(), xticks = sx.ticks();
    double widest_y = 0;
    for (double t : yticks) widest_y = std::max(widest_y, text_width(tick_label(t, p.y.unit)));
    constexpr double W = 760, H = 440, top = 50, bottom = 60;
    const double title_x = kAxisTitleSize + 2;  // the rotated title's baseline
    const double left = std::ceil(title_x + 4 + 6 + widest_y + 9);
    const double legend_w = legend_text + 36;
    const double right = legend_w + 30;
    const double pw = W - left - right, ph = H - top - bottom;
    auto X = [&](double v) { return left + pw * sx.to_unit(v); };
    auto Y = [&](double v) { return top + ph * (1 - sy.to_unit(v)); };

    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"{2}\" font-size=\"{3}\">\n<title>{4}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text class=\"title\" x=\"{5}\" y=\"28\" text-anchor=\"middle\" font-size=\"{6}\" font-weight=\"bold\">{4}</text>\n",
        W, H, kFontFamily, kFontSize, xml(p.title), W / 2, kTitleSize);
    if (!subtitle.empty())
        svg += fmt::format("<text class=\"subtitle\" x=\"{}\" y=\"44\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n", W / 2, xml(subtitle));
    // Grid, frame and ticks, as the roofline draws them.
    for (double t : xticks)
        svg += fmt::format("<g class=\"xtick\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{5}\"/>"
                           "<line x1=\"{0:.1f}\" y1=\"{2}\" x2=\"{0:.1f}\" y2=\"{6}\" stroke=\"{7}\"/>"
                           "<text class=\"tick x-tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text></g>\n",
                           X(t), top, top + ph, top + ph + 19, xml(tick_label(t, p.x.unit)), kGridColour, top + ph + kTickLength,
                           kFrameColour);
    for (double t : yticks)
        svg += fmt::format("<g class=\"ytick\"><line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{5}\"/>"
                           "<line x1=\"{6}\" y1=\"{1:.1f}\" x2=\"{0}\" y2=\"{1:.1f}\" stroke=\"{7}\"/>"
                           "<text class=\"tick y-tick\" x=\"{3}\" y=\"{8:.1f}\" text-anchor=\"end\">{4}</text></g>\n",
                           left, Y(t), left + pw, left - 9, xml(tick_label(t, p.y.unit)), kGridColour, left - kTickLength,
                           kFrameColour, Y(t) + 4);
    svg += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1\"/>\n",
                       left, top, pw, ph, kFrameColour);
    svg += fmt::format("<text class=\"xlabel axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\">{}</text>\n",
                       left + pw / 2, top + ph + 42, kAxisTitleSize, xml(axis_title(p.x.label, p.x.unit, p.x.log)));
    svg += fmt::format("<text class=\"ylabel axis-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" font-size=\"{}\" "
                       "transform=\"translate({} {}) rotate(-90)\">{}</text>\n",
                       kAxisTitleSize, title_x, top + ph / 2, xml(axis_title(p.y.label, p.y.unit, p.y.log)));

    // Series: reference lines first, under the measured ones.
    std::vector<Box> taken;
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < p.series.size(); ++i) {
            const PlotSeries& s = p.series[i];
            const SeriesStyle& st = styles[i];
            if (st.reference != (pass == 0)) continue;
            svg += fmt::format("<g class=\"series\" data-name=\"{}\" data-shape=\"{}\" fill=\"{}\" stroke=\"{}\">", xml(s.name),
                               st.reference ? "none" : shape_name(st.shape), st.colour, st.colour);
            std::string points, markers;
            for (std::size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
                if (!usable(s.x[k], p.x.log) || !usable(s.y[k], p.y.log)) continue;
                const double x = X(s.x[k]), y = Y(s.y[k]);
                points += fmt::format("{:.1f},{:.1f} ", x, y);
                if (!st.reference) {
                    markers += marker(st.shape, x, y, kMarkerRadius, "stroke=\"white\" stroke-width=\"0.8\"");
                    taken.push_back({x - 5, y - 5, x + 5, y + 5});
                }
            }
            if ((s.line || st.reference) && !points.empty())
                svg += fmt::format("<polyline fill=\"none\" stroke-width=\"{}\"{} points=\"{}\"/>", st.reference ? 1.5 : 1.8,
                                   st.reference ? " stroke-dasharray=\"6 4\"" : "", points);
            svg += markers + "</g>\n";
        }

    // The legend, right of the plot: a sample of each series' line and marker, and its name.
    const double lx = left + pw + 16;
    double ly = top + 4;
    svg += fmt::format("<g class=\"legend\"><rect class=\"legend-box\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                       "fill=\"white\" stroke=\"#bbb\"/>\n",
                       lx, top, legend_w, [&] {
                           double h = 8;
                           for (const auto& l : legend_lines) h += 14.0 * static_cast<double>(l.size()) + 4;
                           return h;
                       }());
    for (std::size_t i = 0; i < p.series.size(); ++i) {
        const SeriesStyle& st = styles[i];
        const double cy = ly + 10;
        if (p.series[i].line || st.reference)
            svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1.8\"{}/>", lx + 6,
                               cy, lx + 26, cy, st.colour, st.reference ? " stroke-dasharray=\"6 4\"" : "");
        if (!st.reference) svg += marker(st.shape, lx + 16, cy, kMarkerRadius + 0.5, fmt::format("fill=\"{}\" stroke=\"white\" stroke-width=\"0.8\"", st.colour));
        for (std::size_t k = 0; k < legend_lines[i].size(); ++k)
            svg += fmt::format("<text class=\"legend-label\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", lx + 32, cy + 4 + 14.0 * static_cast<double>(k),
                               xml(legend_lines[i][k]));
        svg += "\n";
        ly += 14.0 * static_cast<double>(legend_lines[i].size()) + 4;
    }
    svg += "</g>\n";

    // Marks: vertical ones labelled along the top, a label one row lower where it would run into
    // its neighbour's; marked points labelled where they touch nothing.
    std::vector<const PlotMark*> verticals, dots;
    for (const auto& m : p.marks) {
        if (!shown(m, withheld) || !usable(m.x, p.x.log) || (!m.vertical && !usable(m.y, p.y.log))) continue;
        (m.vertical ? verticals : dots).push_back(&m);
    }
    std::stable_sort(verticals.begin(), verticals.end(), [](const PlotMark* a, const PlotMark* b) { return a->x < b->x; });
    const Box plot_box{left, top, left + pw, top + ph};
    for (const PlotMark* m : verticals) {
        const double x = X(m->x), w = text_width(m->label);
        // Right of the line, else left of it where the plot ends first.
        const bool right_side = x + 4 + w <= left + pw - 2;
        Box b{};
        double y = top + 13;
        for (int row = 0; row < 12; ++row) {
            y = top + 13 + 14.0 * row;
            b = text_box(right_side ? x + 4 : x - 4, y, right_side ? Anchor::start : Anchor::end, w);
            if (std::none_of(taken.begin(), taken.end(), [&](const Box& o) { return intersects(b, o); })) break;
        }
        taken.push_back(b);
        svg += fmt::format("<g class=\"mark\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" "
                           "stroke-dasharray=\"4 3\"/>{3}</g>\n",
                           x, top, top + ph,
                           text_el(right_side ? x + 4 : x - 4, y, right_side ? Anchor::start : Anchor::end, m->label, "mark-label",
                                   "fill=\"#333\""));
    }
    for (const PlotMark* m : dots) {
        const double x = X(m->x), y = Y(m->y);
        const Placement at = place_label(x, y, text_width(m->label), ring_offsets(7, 3, x > left + pw * 0.7), taken, plot_box);
        taken.push_back(at.box);
        svg += fmt::format("<g class=\"mark\"><circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"black\" "
                           "stroke-width=\"1.5\"/>{}</g>\n",
                           x, y, text_el(at.x, at.y, at.anchor, m->label, "mark-label", "fill=\"#111\""));
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
    // A cell two series land on shows '=': the later series overwriting the earlier hid 5 of 02.04's
    // 8 fp32 points under its fp64 ones.
    // The legend names the series that share cells: 02.11's '=' was its measured points on its
    // model's line, which a reader could not tell from two measurements colliding.
    constexpr char kShared = '=';
    std::vector<std::string> legend;
    std::map<std::pair<int, int>, std::set<std::size_t>> series_at;  // (row, column) -> series drawn there
    for (std::size_t i = 0; i < p.series.size(); ++i) {
        const PlotSeries& s = p.series[i];
        const char c = kMarks[i % (sizeof kMarks - 1)];
        for (std::size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k)
            if (usable(s.x[k], p.x.log) && usable(s.y[k], p.y.log)) {
                const int r = row(s.y[k]), cl = col(s.x[k]);
                auto& here = series_at[{r, cl}];
                here.insert(i);
                grid[static_cast<std::size_t>(r)][static_cast<std::size_t>(cl)] = here.size() > 1 ? kShared : c;
            }
        legend.push_back(fmt::format("  {} {}", c, s.name));
    }
    std::set<std::size_t> sharing;
    for (const auto& [cell, here] : series_at)
        if (here.size() > 1) sharing.insert(here.begin(), here.end());
    if (!sharing.empty()) {
        std::vector<std::string> names;
        for (std::size_t i : sharing) names.push_back(p.series[i].name);
        legend.push_back(fmt::format("  {} points of more than one series ({})", kShared, fmt::join(names, ", ")));
    }
    // A point mark is a digit; a vertical line is '|' under a letter on the top row, the letter
    // naming it in the legend ("a| L1 found"): 02.03 draws six lines, alike without it.
    int number = 0, line_number = 0;
    for (const auto& m : p.marks) {
        if (!shown(m, withheld) || !usable(m.x, p.x.log) || (!m.vertical && !usable(m.y, p.y.log))) continue;
        const std::size_t c = static_cast<std::size_t>(col(m.x));
        if (m.vertical) {
            const char letter = static_cast<char>('a' + line_number++ % 26);
            for (auto& line : grid)
                if (line[c] == ' ') line[c] = '|';
            grid.front()[c] = letter;
            legend.push_back(fmt::format("  {}| {}", letter, m.label));
        } else {
            const char digit = static_cast<char>('1' + number++ % 9);
            grid[static_cast<std::size_t>(row(m.y))][c] = digit;
            legend.push_back(fmt::format("  {} {}", digit, m.label));
        }
    }
    auto value_at = [](const Scale& s, double unit_pos) { const double a = s.lo + unit_pos * (s.hi - s.lo); return s.log ? std::pow(10.0, a) : a; };
    // A log axis that fit() padded a tenth of a decade past a point on a decade is labelled at
    // that decade, on its row or column: "1", not the frame's "0.7943" (02.06's batch axis).
    auto end_value = [&](const Scale& s, bool high) {
        const double d = high ? std::floor(s.hi + 1e-9) : std::ceil(s.lo - 1e-9);
        const bool padded = s.log && std::fabs(d - (high ? s.hi : s.lo)) > 1e-9 && d > s.lo && d < s.hi;
        return padded ? std::pow(10.0, d) : value_at(s, high ? 1 : 0);
    };
    const double ytop_v = end_value(sy, true), ybottom_v = end_value(sy, false), xl_v = end_value(sx, false), xr_v = end_value(sx, true);
    const int top_row = row(ytop_v), bottom_row = row(ybottom_v);
    const std::string ytop = tick_label(ytop_v, p.y.unit), ybottom = tick_label(ybottom_v, p.y.unit);
    // A middle tick too: with only the ends labelled a reader cannot place a point in between. On
    // a log axis, the decade between the ends nearest the middle ("10 ms", not "11.9 ms").
    int mid_row = (height - 1) / 2;
    double mid_v = value_at(sy, 1 - static_cast<double>(mid_row) / (height - 1));
    if (sy.log) {
        std::optional<double> nearest;
        for (double d = std::ceil(std::log10(ybottom_v) + 1e-9); d < std::log10(ytop_v) - 1e-9; d += 1)
            if (!nearest || std::abs(row(std::pow(10.0, d)) - mid_row) < std::abs(row(*nearest) - mid_row)) nearest = std::pow(10.0, d);
        if (nearest) mid_v = *nearest, mid_row = row(*nearest);
    }
    const std::string ymid = height >= 7 && mid_row > top_row + 1 && mid_row < bottom_row - 1 ? tick_label(mid_v, p.y.unit) : "";
    const std::size_t margin = std::max({detail::code_points(ytop), detail::code_points(ybottom), detail::code_points(ymid)}) + 1;
    std::string out = p.title + "\n" + std::string(margin, ' ') + detail::axis_title(p.y.label, p.y.unit, p.y.log) + "\n";
    for (int r = 0; r < height; ++r) {
        const std::string label = r == top_row ? ytop : r == bottom_row ? ybottom : r == mid_row ? ymid : "";
        out += std::string(margin - detail::code_points(label) - 1, ' ') + label + " |" + grid[static_cast<std::size_t>(r)] + "\n";
    }
    out += std::string(margin, ' ') + "+" + std::string(static_cast<std::size_t>(width), '-') + "\n";
    // The x labels start (left) or end (right) under their column.
    const std::string xl = tick_label(xl_v, p.x.unit), xr = tick_label(xr_v, p.x.unit);
    const std::string title = detail::axis_title(p.x.label, p.x.unit, p.x.log);
    std::string axis = std::string(margin + 1 + static_cast<std::size_t>(col(xl_v)), ' ') + xl;
    const std::size_t room = margin + 1 + static_cast<std::size_t>(col(xr_v)) + 1;
    const std::size_t mid = std::max(axis.size() + 2, (room - title.size()) / 2);
    axis += std::string(mid > axis.size() ? mid - axis.size() : 1, ' ') + title;
    axis += std::string(room > axis.size() + xr.size() ? room - axis.size() - xr.size() : 2, ' ') + xr;
    out += axis + "\n";
    for (const auto& l : legend) out += l + "\n";
    return out;
}

}  // namespace lab::plot
