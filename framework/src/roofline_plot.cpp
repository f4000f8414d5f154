// Roofline pictures for students and instructors: an SVG document to open in a browser and an
// ASCII sketch for the terminal, both drawn from one RooflineChart. Both renderers share the
// same reading of the chart (which ceilings and points can be placed on log axes, which decades
// the axes span), so the two pictures never disagree; whatever cannot be placed is listed in a
// note rather than silently dropped. Labels are untrusted text (workload and student-chosen
// names), so they are cleaned before they reach XML or a terminal.

#include "roofline_plot.hpp"

#include <lab/roofline.hpp>

#include "format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

namespace lab::plot {
namespace {

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

// ---------------------------------------------------------------------------------------------
// Text

// One stray byte in a label would make the whole SVG unparseable, so invalid UTF-8, control
// characters and the two non-characters XML forbids become '?'.
std::string clean_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    auto cont = [&](std::size_t k) {
        return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
    };
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            out += (c < 0x20 || c == 0x7F) ? (c == '\t' ? ' ' : '?') : static_cast<char>(c);
            ++i;
            continue;
        }
        std::size_t len = 0;
        if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c >= 0xE0 && c <= 0xEF) len = 3;
        else if (c >= 0xF0 && c <= 0xF4) len = 4;
        bool ok = len > 0;
        for (std::size_t k = 1; ok && k < len; ++k) ok = cont(i + k);
        if (ok && len >= 3) {
            const auto c1 = static_cast<unsigned char>(s[i + 1]);
            // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) ||
                (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
                ok = false;
            // U+FFFE and U+FFFF are not XML characters.
            if (ok && c == 0xEF && c1 == 0xBF && static_cast<unsigned char>(s[i + 2]) >= 0xBE)
                ok = false;
        }
        if (!ok) {
            out += '?';
            ++i;
            continue;
        }
        out.append(s.substr(i, len));
        i += len;
    }
    return out;
}

std::string xml_escape(std::string_view raw) {
    const std::string s = clean_utf8(raw);
    std::string out;
    out.reserve(s.size() + 16);
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

// The terminal sketch promises bytes < 128: each non-ASCII character becomes one '?'.
std::string ascii_only(std::string_view raw) {
    const std::string s = clean_utf8(raw);
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x80) out += ch;
        else if (c >= 0xC0) out += '?';  // continuation bytes vanish with their lead byte
    }
    return out;
}

std::size_t code_points(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

// ---------------------------------------------------------------------------------------------
// Numbers

// A plain number such as an arithmetic intensity: "0.01", "9.28", "1000", "1.5e7"; whole numbers
// up to a million keep every digit ("1024", not "1020").
std::string plain(double v) { return format::number(v, {.whole_below = 1e6}); }

// A value with a decimal SI prefix: "181 GFLOP/s", "19.5 GB/s", "1 TFLOP/s"; three digits are
// enough to read off a plot and short enough to fit beside a line.
std::string si(double v, std::string_view unit, bool ascii) {
    return format::si(v, unit, {.lowest_prefix = -24, .highest_prefix = 24, .min_exponent = 0, .ascii = ascii});
}

// ---------------------------------------------------------------------------------------------
// The shared reading of a chart

struct Ceiling {
    std::string name;
    double flops = 0;
    double ridge = 0;  // FLOP/B where the slope meets this ceiling; 0 without a bandwidth ceiling
};

struct Model {
    std::vector<Ceiling> ceilings;       // placeable ones, in the chart's order
    int ridge_index = -1;                // the ceiling whose ridge is marked
    int top_index = -1;                  // the highest ceiling: the slope ends at its ridge
    double bandwidth = 0;                // 0 when the chart has no usable bandwidth
    std::vector<const Point*> drawn;     // placeable points, in the chart's order
    std::vector<int> off_scale;          // per drawn point: -1 left of the x axis, +1 right of it, 0 on it
    std::vector<std::string> not_drawn;  // raw text: each renderer escapes it its own way
    int xlo = -2, xhi = 3;               // axis ranges in decades (log10)
    int ylo = 9, yhi = 13;
};

// Clamped so that absurd inputs (1e-300 FLOP/B) give a wide but finite axis.
int decade_floor(double v) { return static_cast<int>(std::clamp(std::floor(v), -400.0, 400.0)); }
int decade_ceil(double v) { return static_cast<int>(std::clamp(std::ceil(v), -400.0, 400.0)); }

Model read_chart(const RooflineChart& chart) {
    Model m;
    if (positive_finite(chart.bandwidth_bytes_per_s)) m.bandwidth = chart.bandwidth_bytes_per_s;
    else m.not_drawn.push_back(fmt::format("bandwidth ceiling ({} B/s)", plain(chart.bandwidth_bytes_per_s)));

    for (const auto& c : chart.compute) {
        if (!positive_finite(c.flops_per_s)) {
            m.not_drawn.push_back(fmt::format("ceiling {} ({} FLOP/s)", c.name, plain(c.flops_per_s)));
            continue;
        }
        const double ridge = m.bandwidth > 0 ? c.flops_per_s / m.bandwidth : 0;
        m.ceilings.push_back({c.name, c.flops_per_s, positive_finite(ridge) ? ridge : 0});
    }
    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const int ii = static_cast<int>(i);
        if (m.ridge_index < 0 && m.ceilings[i].name == chart.ridge_pipe) m.ridge_index = ii;
        if (m.top_index < 0 || m.ceilings[i].flops > m.ceilings[static_cast<std::size_t>(m.top_index)].flops)
            m.top_index = ii;
    }
    if (m.ridge_index < 0 && !m.ceilings.empty()) m.ridge_index = 0;

    for (const auto& p : chart.points) {
        std::string why;
        if (std::isnan(p.flops_per_s)) why = "FLOP/s undefined";
        else if (p.flops_per_s == 0) why = "0 FLOP";
        else if (p.flops_per_s < 0) why = "negative FLOP/s";
        else if (std::isinf(p.flops_per_s)) why = "infinite FLOP/s";
        else if (std::isnan(p.ai) || p.ai < 0) why = "AI undefined";
        else if (p.ai == 0) why = "AI 0";
        if (!why.empty()) m.not_drawn.push_back(fmt::format("{} ({})", p.label, why));
        else m.drawn.push_back(&p);
    }

    // x: the kernels that matter, a decade of margin, never narrower than 1e-2..1e3. Starting
    // from the ridges (or, without any, the median point), the span takes in every point within
    // kOutlierGap decades of it, again and again; a point further out than that from all of them
    // (the FMA-peak kernel, whose AI of 1e8 would squeeze every other kernel into a corner) is
    // off scale: drawn at the edge of the axis and marked with its AI.
    constexpr double kOutlierGap = 3;
    std::vector<double> ais;
    for (const Point* p : m.drawn)
        if (positive_finite(p->ai)) ais.push_back(std::log10(p->ai));
    std::sort(ais.begin(), ais.end());
    double xmin = HUGE_VAL, xmax = -HUGE_VAL;
    for (const auto& c : m.ceilings)
        if (positive_finite(c.ridge)) {
            xmin = std::min(xmin, std::log10(c.ridge));
            xmax = std::max(xmax, std::log10(c.ridge));
        }
    if (xmin > xmax && !ais.empty()) xmin = xmax = ais[ais.size() / 2];
    for (bool grew = true; grew && xmin <= xmax;) {
        grew = false;
        for (double a : ais)
            if ((a < xmin && xmin - a <= kOutlierGap) || (a > xmax && a - xmax <= kOutlierGap)) {
                xmin = std::min(xmin, a);
                xmax = std::max(xmax, a);
                grew = true;
            }
    }
    m.xlo = -2;
    m.xhi = 3;
    if (xmin <= xmax) {
        m.xlo = std::min(m.xlo, decade_floor(xmin) - 1);
        m.xhi = std::max(m.xhi, decade_ceil(xmax) + 1);
    }
    for (const Point* p : m.drawn) {
        int side = 0;
        if (positive_finite(p->ai)) {
            const double a = std::log10(p->ai);
            side = a < m.xlo ? -1 : a > m.xhi ? 1 : 0;
        }
        m.off_scale.push_back(side);
    }

    // y: the highest ceiling with room for its label above, the lowest point with margin below.
    double ymin = HUGE_VAL, ymax = -HUGE_VAL;
    auto take_y = [&](double v) {
        ymin = std::min(ymin, std::log10(v));
        ymax = std::max(ymax, std::log10(v));
    };
    for (const auto& c : m.ceilings) take_y(c.flops);
    for (const Point* p : m.drawn) take_y(p->flops_per_s);
    if (ymin <= ymax) {
        m.yhi = decade_ceil(ymax + 0.3);
        m.ylo = decade_floor(ymin - 0.3);
    } else if (m.bandwidth > 0) {
        m.ylo = decade_floor(std::log10(m.bandwidth)) - 1;
        m.yhi = m.ylo + 4;
    }
    // Fewer than three decades makes a log axis look like a linear one.
    if (m.yhi - m.ylo < 3) m.ylo = m.yhi - 3;
    return m;
}

// Labels every `step`-th decade so that at most about `max_labels` labels crowd an axis.
int decade_step(int lo, int hi, int max_labels) {
    return std::max(1, (hi - lo + max_labels - 1) / max_labels);
}

bool on_step(int e, int step) { return ((e % step) + step) % step == 0; }

struct RegimeStyle {
    std::string key;     // what the legend says
    std::string color;
};

// One colour per regime, recognising the synonyms students may write ("bandwidth bound").
RegimeStyle regime_style(const std::string& regime) {
    if (regime.empty()) return {"regime not shown", "#8c8c8c"};
    // "undecided: compute_bound or latency_bound": the noise left the verdict open.
    if (regime.rfind("undecided", 0) == 0) return {"undecided", "#bcbd22"};
    if (const auto r = roofline::parse_regime(regime)) {
        switch (*r) {
            case roofline::Regime::compute_bound: return {"compute_bound", "#d62728"};
            case roofline::Regime::memory_bound: return {"memory_bound", "#1f77b4"};
            case roofline::Regime::overhead_bound: return {"overhead_bound", "#9467bd"};
            case roofline::Regime::latency_bound: return {"latency_bound", "#ff7f0e"};
            default: break;
        }
    }
    return {regime, "#2ca02c"};
}

// ---------------------------------------------------------------------------------------------
// SVG layout

constexpr double kWidth = 760;
constexpr double kHeight = 520;
constexpr double kLeft = 110;   // room for "100 GFLOP/s" and the axis title
constexpr double kRight = 728;  // points at infinite AI sit on this edge
constexpr double kTop = 50;
constexpr double kBottom = 442;
constexpr double kFontSize = 11;
constexpr double kCharWidth = 6.3;  // a typical sans-serif glyph at kFontSize
constexpr double kPointRadius = 5;
constexpr std::size_t kNoteLineChars = 112;

struct Box {
    double x0, y0, x1, y1;
};

double overlap(const Box& a, const Box& b) {
    const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    return (w > 0 && h > 0) ? w * h : 0;
}

double area(const Box& a) { return (a.x1 - a.x0) * (a.y1 - a.y0); }

enum class Anchor { start, middle, end };

std::string_view anchor_name(Anchor a) {
    switch (a) {
        case Anchor::start: return "start";
        case Anchor::middle: return "middle";
        case Anchor::end: return "end";
    }
    return "start";
}

double text_width(std::string_view s) { return static_cast<double>(code_points(s)) * kCharWidth; }

Box text_box(double x, double baseline, Anchor a, double width) {
    const double x0 = a == Anchor::start ? x : a == Anchor::end ? x - width : x - width / 2;
    return {x0, baseline - kFontSize * 0.8, x0 + width, baseline + kFontSize * 0.25};
}

struct Offset {
    double dx, dy;
    Anchor anchor;
};

struct Placement {
    double x, y;
    Anchor anchor;
    Box box;
};

// Greedy label placement: the first candidate that overlaps nothing, else the one that overlaps
// least. Good enough for a handful of kernels; a teaching plot has no more.
Placement place_label(double x, double y, double width, const std::vector<Offset>& candidates,
                      const std::vector<Box>& obstacles, const Box& bounds) {
    Placement best{x, y, Anchor::start, text_box(x, y, Anchor::start, width)};
    double best_score = HUGE_VAL;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        const Box b = text_box(x + c.dx, y + c.dy, c.anchor, width);
        double score = static_cast<double>(i);  // ties go to the earlier, preferred spot
        for (const auto& o : obstacles) score += overlap(b, o);
        score += 4 * (area(b) - overlap(b, bounds));
        if (score < best_score) {
            best_score = score;
            best = {x + c.dx, y + c.dy, c.anchor, b};
        }
    }
    return best;
}

class Svg {
public:
    explicit Svg(const Model& m) : m_(m) {}

    double px(double log_x) const {
        return kLeft + (log_x - m_.xlo) / (m_.xhi - m_.xlo) * (kRight - kLeft);
    }
    double py(double log_y) const {
        return kBottom - (log_y - m_.ylo) / (m_.yhi - m_.ylo) * (kBottom - kTop);
    }
    double x_of(double ai) const { return std::isinf(ai) ? kRight : px(std::log10(ai)); }
    double y_of(double flops) const { return py(std::log10(flops)); }
    double px_per_x_decade() const { return (kRight - kLeft) / (m_.xhi - m_.xlo); }
    double px_per_y_decade() const { return (kBottom - kTop) / (m_.yhi - m_.ylo); }

    template <typename... Args>
    void put(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(std::back_inserter(out_), f, std::forward<Args>(args)...);
    }

    void text(double x, double y, Anchor a, std::string_view raw, std::string_view cls,
              std::string_view extra = "") {
        put("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}{}>{}</text>\n", cls,
            x, y, anchor_name(a), extra.empty() ? "" : " ", extra, xml_escape(raw));
    }

    std::string& out() { return out_; }

private:
    const Model& m_;
    std::string out_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string render_svg(const RooflineChart& chart) {
    const Model m = read_chart(chart);
    Svg s(m);
    const std::string title = chart.title.empty() ? std::string("Roofline") : chart.title;

    // Notes for what could not be placed, wrapped so that a long list stays inside the page.
    std::vector<std::string> note_lines;
    if (!m.not_drawn.empty()) {
        std::string line = "not drawn: ";
        for (std::size_t i = 0; i < m.not_drawn.size(); ++i) {
            const std::string item = m.not_drawn[i] + (i + 1 < m.not_drawn.size() ? "," : "");
            if (code_points(line) + code_points(item) > kNoteLineChars && line != "not drawn: ") {
                note_lines.push_back(line);
                line = "  ";
            }
            line += item + " ";
        }
        note_lines.push_back(line);
    }
    const double height = kHeight + 14.0 * static_cast<double>(note_lines.size() > 0 ? note_lines.size() - 1 : 0);

    s.put("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.put("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
          "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
          "font-size=\"{2}\">\n",
          kWidth, height, kFontSize);
    s.put("<title>{}</title>\n", xml_escape(title));
    s.put("<defs><clipPath id=\"plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
          "</clipPath></defs>\n",
          kLeft, kTop, kRight - kLeft, kBottom - kTop);
    s.put("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    s.text(kWidth / 2, 28, Anchor::middle, title, "title", "font-size=\"15\" font-weight=\"bold\"");

    // Grid, ticks and tick labels. Every decade gets a tick; labels thin out on very wide axes.
    const int xstep = decade_step(m.xlo, m.xhi, 12);
    const int ystep = decade_step(m.ylo, m.yhi, 10);
    const bool minor_x = s.px_per_x_decade() >= 40 && m.xhi - m.xlo <= 40;
    const bool minor_y = s.px_per_y_decade() >= 40 && m.yhi - m.ylo <= 40;
    s.put("<g class=\"grid\" stroke=\"#dadada\" stroke-width=\"1\">\n");
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (m.xhi - m.xlo > 60 && !on_step(e, xstep)) continue;
        s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", s.px(e), kTop, kBottom);
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (m.yhi - m.ylo > 60 && !on_step(e, ystep)) continue;
        s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft, s.py(e), kRight);
    }
    s.put("</g>\n");
    s.put("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
          "stroke=\"#888\" stroke-width=\"1\"/>\n",
          kLeft, kTop, kRight - kLeft, kBottom - kTop);

    s.put("<g class=\"ticks\" stroke=\"#888\" stroke-width=\"1\">\n");
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (m.xhi - m.xlo > 60 && !on_step(e, xstep)) continue;
        s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", s.px(e), kBottom, kBottom + 6);
        for (int k = 2; minor_x && e < m.xhi && k <= 9; ++k) {
            const double x = s.px(e + std::log10(k));
            s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x, kBottom, kBottom + 3);
        }
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (m.yhi - m.ylo > 60 && !on_step(e, ystep)) continue;
        s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - 6, s.py(e), kLeft);
        for (int k = 2; minor_y && e < m.yhi && k <= 9; ++k) {
            const double y = s.py(e + std::log10(k));
            s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - 3, y, kLeft);
        }
    }
    s.put("</g>\n");
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (!on_step(e, xstep)) continue;
        s.text(s.px(e), kBottom + 19, Anchor::middle, plain(std::pow(10.0, e)), "tick x-tick");
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (!on_step(e, ystep)) continue;
        s.text(kLeft - 9, s.py(e) + 4, Anchor::end, si(std::pow(10.0, e), "FLOP/s", false), "tick y-tick");
    }
    s.text((kLeft + kRight) / 2, kBottom + 42, Anchor::middle, "Arithmetic intensity (FLOP/B)",
           "axis-title", "font-size=\"12\"");
    s.put("<text class=\"axis-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" font-size=\"12\" "
          "transform=\"translate(16 {:.1f}) rotate(-90)\">Performance (FLOP/s)</text>\n",
          (kTop + kBottom) / 2);

    // Everything a label must avoid, filled as things are drawn.
    std::vector<Box> taken;
    const Box plot_box{kLeft, kTop, kRight, kBottom};

    // Roof lines, clipped to the plot so that extreme inputs cannot draw across the page.
    s.put("<g clip-path=\"url(#plot-area)\">\n");
    const double bw_log = m.bandwidth > 0 ? std::log10(m.bandwidth) : 0;
    double slope_x0 = 0, slope_x1 = 0;  // visible part of the slope, in decades of AI
    const bool has_slope = m.bandwidth > 0 && m.top_index >= 0;
    if (has_slope) {
        const auto& top = m.ceilings[static_cast<std::size_t>(m.top_index)];
        slope_x0 = std::max<double>(m.xlo, m.ylo - bw_log);
        slope_x1 = std::log10(top.ridge);
        if (slope_x1 > slope_x0) {
            s.put("<line class=\"bandwidth\" data-name=\"{}\" data-value=\"{}\" x1=\"{:.1f}\" "
                  "y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-width=\"2\"/>\n",
                  xml_escape(chart.bandwidth_label), m.bandwidth, s.px(slope_x0),
                  s.py(slope_x0 + bw_log), s.px(slope_x1), s.py(slope_x1 + bw_log));
        }
    }
    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const auto& c = m.ceilings[i];
        const bool main = static_cast<int>(i) == m.ridge_index;
        const double x0 = c.ridge > 0 ? s.x_of(c.ridge) : kLeft;
        s.put("<line class=\"ceiling\" data-name=\"{}\" data-value=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
              "x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
              xml_escape(c.name), c.flops, x0, s.y_of(c.flops), kRight, s.y_of(c.flops),
              main ? "#222" : "#666", main ? 2.5 : 1.5);
    }
    double ridge_x = 0;
    bool has_ridge = false;
    if (m.ridge_index >= 0 && m.bandwidth > 0) {
        const auto& r = m.ceilings[static_cast<std::size_t>(m.ridge_index)];
        if (r.ridge > 0) {
            has_ridge = true;
            ridge_x = s.x_of(r.ridge);
            // The value is withheld from the attributes too when the lesson asks students for it.
            const std::string value =
                chart.show_ridge_value ? fmt::format(" data-value=\"{}\"", r.ridge) : std::string();
            s.put("<line class=\"ridge\" data-name=\"{}\"{} x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" "
                  "y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>\n",
                  xml_escape(r.name), value, ridge_x, kBottom, ridge_x, s.y_of(r.flops));
        }
    }
    s.put("</g>\n");

    // Where each point sits: at its AI, or on the edge of the x axis when it is off scale.
    auto point_x = [&](std::size_t i) {
        const int side = m.off_scale[i];
        return side < 0 ? kLeft : side > 0 ? kRight : s.x_of(m.drawn[i]->ai);
    };

    // Points are known before any label is placed, so that no label covers one.
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const double x = point_x(i), y = s.y_of(m.drawn[i]->flops_per_s);
        taken.push_back({x - kPointRadius, y - kPointRadius, x + kPointRadius, y + kPointRadius});
    }

    // Ceiling labels, highest first: near the right edge above the line, else below it, else at
    // the line's left end, so that close ceilings (fp32 vs fp64) stay legible.
    {
        std::vector<std::size_t> order(m.ceilings.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return m.ceilings[a].flops > m.ceilings[b].flops;
        });
        for (std::size_t i : order) {
            const auto& c = m.ceilings[i];
            const std::string label = fmt::format("{} {}", c.name, si(c.flops, "FLOP/s", false));
            const double y = s.y_of(c.flops);
            const double x0 = c.ridge > 0 ? s.x_of(c.ridge) : kLeft;
            const double w = text_width(label);
            const double dx_left = x0 + 6 - (kRight - 6);
            const std::vector<Offset> cands = {{0, -5, Anchor::end},
                                               {0, 14, Anchor::end},
                                               {dx_left, -5, Anchor::start},
                                               {dx_left, 14, Anchor::start}};
            const auto p = place_label(kRight - 6, y, w, cands, taken, plot_box);
            taken.push_back(p.box);
            taken.push_back({x0, y - 1.5, kRight, y + 1.5});
            s.text(p.x, p.y, p.anchor, label, "ceiling-label");
        }
    }

    // The slope's label runs along it, a little above, at the middle of its visible part.
    if (has_slope && slope_x1 > slope_x0) {
        const std::string label = chart.bandwidth_label.empty()
                                      ? si(m.bandwidth, "B/s", false)
                                      : fmt::format("{} {}", chart.bandwidth_label, si(m.bandwidth, "B/s", false));
        const double mid = (slope_x0 + slope_x1) / 2;
        const double angle = -std::atan2(s.px_per_y_decade(), s.px_per_x_decade());
        const double x = s.px(mid) + 7 * std::sin(angle);
        const double y = s.py(mid + bw_log) - 7 * std::cos(angle);
        s.put("<text class=\"bandwidth-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
              "transform=\"rotate({2:.2f} {0:.1f} {1:.1f})\">{3}</text>\n",
              x, y, angle * 180 / std::numbers::pi, xml_escape(label));
        // A rotated label is approximated by the box around the middle half of it.
        const double half = text_width(label) / 4;
        taken.push_back({x - half * std::cos(angle) - 6, y - half * -std::sin(angle) - 6,
                         x + half * std::cos(angle) + 6, y + half * -std::sin(angle) + 6});
        if (taken.back().y0 > taken.back().y1) std::swap(taken.back().y0, taken.back().y1);
    }

    if (has_ridge) {
        const auto& r = m.ceilings[static_cast<std::size_t>(m.ridge_index)];
        const std::string label = chart.show_ridge_value
                                      ? fmt::format("ridge {} FLOP/B", plain(r.ridge))
                                      : std::string("ridge ? FLOP/B");
        const double w = text_width(label);
        const bool room_right = ridge_x + 5 + w <= kRight - 4;
        const Anchor a = room_right ? Anchor::start : Anchor::end;
        const double x = room_right ? ridge_x + 5 : ridge_x - 5;
        s.text(x, kBottom - 7, a, label, "ridge-label", "fill=\"#444\"");
        taken.push_back(text_box(x, kBottom - 7, a, w));
    }

    // Legend of the regimes used, in the empty corner above the slope.
    std::vector<RegimeStyle> used;
    for (const Point* p : m.drawn) {
        auto st = regime_style(p->regime);
        if (std::none_of(used.begin(), used.end(), [&](const RegimeStyle& u) { return u.key == st.key; }))
            used.push_back(std::move(st));
    }
    if (!used.empty()) {
        // Regimes in their conventional order, unknown names and "not shown" last.
        auto rank = [](const RegimeStyle& st) {
            static constexpr std::array<std::string_view, 5> kOrder = {
                "compute_bound", "memory_bound", "overhead_bound", "latency_bound", "undecided"};
            const auto it = std::find(kOrder.begin(), kOrder.end(), st.key);
            if (it != kOrder.end()) return static_cast<int>(it - kOrder.begin());
            return st.key == "regime not shown" ? 6 : 5;
        };
        std::stable_sort(used.begin(), used.end(),
                         [&](const RegimeStyle& a, const RegimeStyle& b) { return rank(a) < rank(b); });
        double w = 0;
        for (const auto& u : used) w = std::max(w, text_width(u.key));
        const double bx = kLeft + 10, by = kTop + 10;
        const double bw = w + 34, bh = 16.0 * static_cast<double>(used.size()) + 8;
        s.put("<g class=\"legend\">\n<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" "
              "fill=\"white\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n",
              bx, by, bw, bh);
        for (std::size_t i = 0; i < used.size(); ++i) {
            const double y = by + 14 + 16.0 * static_cast<double>(i);
            s.put("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>\n", bx + 12, y - 4,
                  kPointRadius, used[i].color);
            s.text(bx + 24, y, Anchor::start, used[i].key, "legend-label");
        }
        s.put("</g>\n");
        taken.push_back({bx, by, bx + bw, by + bh});
    }

    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const auto st = regime_style(p->regime);
        const double x = point_x(i), y = s.y_of(p->flops_per_s);
        const int side = m.off_scale[i];
        const std::string tip = fmt::format(
            "{}: AI {} FLOP/B{}, {}, {}", p->label, std::isinf(p->ai) ? "inf" : plain(p->ai),
            side ? " (off the axis, drawn at its edge)" : "", si(p->flops_per_s, "FLOP/s", false),
            p->regime.empty() ? "regime not shown" : p->regime);
        s.put("<circle class=\"point\" data-label=\"{}\" data-ai=\"{}\" data-flops=\"{}\" "
              "data-regime=\"{}\"{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" stroke=\"white\" "
              "stroke-width=\"1\"><title>{}</title></circle>\n",
              xml_escape(p->label), p->ai, p->flops_per_s, xml_escape(p->regime),
              side ? fmt::format(" data-off-scale=\"{}\"", side < 0 ? "left" : "right") : std::string(), x, y,
              kPointRadius, st.color, xml_escape(tip));
        if (side) {
            // An arrow just outside the frame, pointing the way the point's AI lies.
            const double tip_x = side < 0 ? kLeft - 15 : kRight + 15, base_x = side < 0 ? kLeft - 7 : kRight + 7;
            s.put("<path class=\"off-scale\" data-label=\"{}\" data-ai=\"{}\" data-side=\"{}\" "
                  "d=\"M {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f} Z\" fill=\"{}\"/>\n",
                  xml_escape(p->label), p->ai, side < 0 ? "left" : "right", base_x, y - 5, tip_x, y, base_x, y + 5,
                  st.color);
        }
    }
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const double x = point_x(i), y = s.y_of(p->flops_per_s);
        const int side = m.off_scale[i];
        const std::string label = std::isinf(p->ai) ? p->label + " (AI\u2192\u221E)"
                                  : side > 0        ? p->label + " (AI " + plain(p->ai) + " \u2192)"
                                  : side < 0        ? p->label + " (\u2190 AI " + plain(p->ai) + ")"
                                                    : p->label;
        const double w = text_width(label);
        const std::vector<Offset> right_first = {
            {8, 4, Anchor::start},  {6, -7, Anchor::start}, {6, 15, Anchor::start},
            {-8, 4, Anchor::end},   {-6, -7, Anchor::end},  {-6, 15, Anchor::end},
            {0, -9, Anchor::middle}, {0, 17, Anchor::middle}};
        const std::vector<Offset> left_first = {
            {-8, 4, Anchor::end}, {-6, -7, Anchor::end}, {-6, 15, Anchor::end},
            {0, -9, Anchor::end}, {0, 17, Anchor::end}};
        const auto pl = place_label(x, y, w, std::isinf(p->ai) || side > 0 ? left_first : right_first, taken, plot_box);
        taken.push_back(pl.box);
        s.text(pl.x, pl.y, pl.anchor, label, "point-label", "fill=\"#222\"");
    }

    for (std::size_t i = 0; i < note_lines.size(); ++i)
        s.text(kLeft, kBottom + 64 + 14.0 * static_cast<double>(i), Anchor::start, note_lines[i],
               "not-drawn", "fill=\"#a33\"");

    s.put("</svg>\n");
    return std::move(s.out());
}

std::string render_terminal(const RooflineChart& chart, int width, int height) {
    const Model m = read_chart(chart);
    const int W = std::clamp(width, 20, 400);
    const int H = std::clamp(height, 6, 200);
    std::vector<std::string> grid(static_cast<std::size_t>(H), std::string(static_cast<std::size_t>(W), ' '));

    // Cells are indexed through doubles clamped first: a far-off value must not overflow an int.
    auto col = [&](double log_x) {
        const double c = std::floor((log_x - m.xlo) / (m.xhi - m.xlo) * W);
        return static_cast<int>(std::clamp(c, 0.0, W - 1.0));
    };
    auto row = [&](double log_y) {
        const double r = H - 1 - std::floor((log_y - m.ylo) / (m.yhi - m.ylo) * H);
        return static_cast<int>(std::clamp(r, 0.0, H - 1.0));
    };
    auto cell = [&](int r, int c) -> char& {
        return grid[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
    };

    const double bw_log = m.bandwidth > 0 ? std::log10(m.bandwidth) : 0;
    if (m.bandwidth > 0 && m.top_index >= 0) {
        const double end = std::log10(m.ceilings[static_cast<std::size_t>(m.top_index)].ridge);
        const double step = (m.xhi - m.xlo) / (8.0 * W);
        for (double lx = m.xlo; lx <= end; lx += step) {
            if (lx + bw_log < m.ylo) continue;
            cell(row(lx + bw_log), col(lx)) = '/';
        }
    }
    auto draw_ceiling = [&](const Ceiling& c, char ch) {
        const int r = row(std::log10(c.flops));
        for (int x = c.ridge > 0 ? col(std::log10(c.ridge)) : 0; x < W; ++x) cell(r, x) = ch;
    };
    for (std::size_t i = 0; i < m.ceilings.size(); ++i)
        if (static_cast<int>(i) != m.ridge_index) draw_ceiling(m.ceilings[i], '-');
    const Ceiling* ridge = m.ridge_index >= 0 ? &m.ceilings[static_cast<std::size_t>(m.ridge_index)] : nullptr;
    if (ridge) {
        draw_ceiling(*ridge, '=');
        if (ridge->ridge > 0) {
            const int c = col(std::log10(ridge->ridge));
            for (int r = row(std::log10(ridge->flops)) + 1; r < H; ++r)
                if (cell(r, c) == ' ') cell(r, c) = '|';
        }
    }
    auto letter = [](std::size_t i) {
        if (i < 26) return static_cast<char>('A' + i);
        if (i < 52) return static_cast<char>('a' + (i - 26));
        return '*';
    };
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const int r = row(std::log10(p->flops_per_s));
        // Off the x axis: the letter on the edge with an arrow outside it ("G>", "<H").
        if (m.off_scale[i] > 0 && W >= 2) {
            cell(r, W - 2) = letter(i);
            cell(r, W - 1) = '>';
        } else if (m.off_scale[i] < 0 && W >= 2) {
            cell(r, 0) = '<';
            cell(r, 1) = letter(i);
        } else {
            cell(r, std::isinf(p->ai) ? W - 1 : col(std::log10(p->ai))) = letter(i);
        }
    }

    // y labels on decades at least two rows apart, so that they never run together.
    std::vector<std::string> ylabels(static_cast<std::size_t>(H));
    {
        const int step = decade_step(m.ylo, m.yhi, std::max(1, H / 2));
        int last = -10;
        for (int e = m.yhi; e >= m.ylo; --e) {
            if (!on_step(e, step)) continue;
            const int ri = row(e);
            if (ri - last < 2) continue;
            ylabels[static_cast<std::size_t>(ri)] = si(std::pow(10.0, e), "FLOP/s", true);
            last = ri;
        }
    }
    std::size_t margin = 0;
    for (const auto& l : ylabels) margin = std::max(margin, l.size());
    margin += 1;

    std::string out;
    auto line = [&](std::string_view l) {
        out.append(l);
        out += '\n';
    };
    line(ascii_only(chart.title.empty() ? std::string("Roofline") : chart.title));
    for (int r = 0; r < H; ++r) {
        const auto& l = ylabels[static_cast<std::size_t>(r)];
        line(std::string(margin - 1 - l.size(), ' ') + l + " |" + grid[static_cast<std::size_t>(r)]);
    }
    line(std::string(margin, ' ') + "+" + std::string(static_cast<std::size_t>(W), '-'));
    {
        std::string xl(margin + 1 + static_cast<std::size_t>(W) + 12, ' ');
        const int step = decade_step(m.xlo, m.xhi, std::max(1, W / 8));
        std::size_t free_from = 0;
        for (int e = m.xlo; e <= m.xhi; ++e) {
            if (!on_step(e, step)) continue;
            const std::string t = plain(std::pow(10.0, e));
            const double c = std::min<double>(W, std::floor((e - m.xlo) / double(m.xhi - m.xlo) * W));
            const double centre = static_cast<double>(margin + 1) + c;
            const auto start = static_cast<std::size_t>(std::max(0.0, centre - static_cast<double>(t.size() / 2)));
            if (start < free_from || start + t.size() > xl.size()) continue;
            xl.replace(start, t.size(), t);
            free_from = start + t.size() + 1;
        }
        while (!xl.empty() && xl.back() == ' ') xl.pop_back();
        line(xl);
    }
    line(std::string(margin + 1, ' ') + "x: arithmetic intensity (FLOP/B), y: performance (FLOP/s), both log scale");
    line("");

    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const auto& c = m.ceilings[i];
        const bool main = static_cast<int>(i) == m.ridge_index;
        line(fmt::format("  {} {} {}", main ? '=' : '-', ascii_only(c.name), si(c.flops, "FLOP/s", true)));
    }
    if (m.bandwidth > 0)
        line(fmt::format("  / {}{}{}", ascii_only(chart.bandwidth_label),
                         chart.bandwidth_label.empty() ? "" : " ", si(m.bandwidth, "B/s", true)));
    if (ridge && ridge->ridge > 0)
        line(fmt::format("  | ridge {} FLOP/B ({})", chart.show_ridge_value ? plain(ridge->ridge) : "?",
                         ascii_only(ridge->name)));

    if (!m.drawn.empty()) {
        // Columns padded to the widest entry, so the legend reads as a table.
        struct Row {
            std::string label, ai, flops, regime;
        };
        std::vector<Row> rows;
        std::size_t w[3] = {0, 0, 0};
        for (std::size_t i = 0; i < m.drawn.size(); ++i) {
            const Point* p = m.drawn[i];
            const int side = m.off_scale[i];
            Row r{ascii_only(p->label),
                  std::isinf(p->ai) ? std::string("AI -> inf")
                                    : fmt::format("AI {} FLOP/B{}", plain(p->ai),
                                                  side > 0 ? " (off scale >)" : side < 0 ? " (off scale <)" : ""),
                  si(p->flops_per_s, "FLOP/s", true),
                  p->regime.empty() ? std::string("(regime not shown)") : ascii_only(p->regime)};
            w[0] = std::max(w[0], std::min<std::size_t>(r.label.size(), 32));
            w[1] = std::max(w[1], r.ai.size());
            w[2] = std::max(w[2], r.flops.size());
            rows.push_back(std::move(r));
        }
        line("");
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& r = rows[i];
            line(fmt::format("  {}  {:<{}}  {:<{}}  {:>{}}  {}", letter(i), r.label, w[0], r.ai, w[1],
                             r.flops, w[2], r.regime));
        }
    }
    if (!m.not_drawn.empty()) {
        std::string note = "not drawn:";
        for (std::size_t i = 0; i < m.not_drawn.size(); ++i)
            note += (i ? ", " : " ") + ascii_only(m.not_drawn[i]);
        line("");
        line(note);
    }
    return out;
}

}  // namespace lab::plot
