// The roofline as a standalone SVG document (render_svg in roofline_plot.hpp), drawn from the
// shared Layout in the order a reader's eye needs it: page, axes, roofs, then labels placed
// around everything drawn before them, the legend, the points and their labels, and a note of
// what could not be placed. Every element carries class and data-* attributes, so tests and
// scripts read the picture without parsing pixels.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "roofline_layout.hpp"
#include "roofline_plot.hpp"
#include "roofline_svg_canvas.hpp"
#include "roofline_text.hpp"

namespace lab::plot {
namespace detail {
namespace {

constexpr Box kPlotArea{kLeft, kTop, kRight, kBottom};

// Notes for what could not be placed, wrapped so that a long list stays inside the page.
std::vector<std::string> wrap_notes(const std::vector<std::string>& not_drawn) {
    std::vector<std::string> note_lines;
    if (not_drawn.empty()) return note_lines;
    std::string line = "not drawn: ";
    for (std::size_t i = 0; i < not_drawn.size(); ++i) {
        const std::string item = not_drawn[i] + (i + 1 < not_drawn.size() ? "," : "");
        if (code_points(line) + code_points(item) > kNoteLineChars && line != "not drawn: ") {
            note_lines.push_back(line);
            line = "  ";
        }
        line += item + " ";
    }
    note_lines.push_back(line);
    return note_lines;
}

// The document's head: its size, title, the plot area's clip path, a white page.
void draw_page(Svg& s, const std::string& title, double height) {
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
}

// Every decade gets a grid line and a tick; on very wide axes (over 60 decades) only the
// labelled ones do. Labels come every `x`-th and `y`-th decade.
struct AxisSteps {
    int x, y;
};

void draw_grid(Svg& s, const Layout& m, AxisSteps step) {
    s.put("<g class=\"grid\" stroke=\"#dadada\" stroke-width=\"1\">\n");
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (m.xhi - m.xlo > 60 && !on_step(e, step.x)) continue;
        s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", s.px(e), kTop, kBottom);
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (m.yhi - m.ylo > 60 && !on_step(e, step.y)) continue;
        s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft, s.py(e), kRight);
    }
    s.put("</g>\n");
    s.put("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
          "stroke=\"#888\" stroke-width=\"1\"/>\n",
          kLeft, kTop, kRight - kLeft, kBottom - kTop);
}

// Decade ticks, with minor ticks at 2..9 where a decade is wide enough to hold them.
void draw_ticks(Svg& s, const Layout& m, AxisSteps step) {
    const bool minor_x = s.px_per_x_decade() >= 40 && m.xhi - m.xlo <= 40;
    const bool minor_y = s.px_per_y_decade() >= 40 && m.yhi - m.ylo <= 40;
    s.put("<g class=\"ticks\" stroke=\"#888\" stroke-width=\"1\">\n");
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (m.xhi - m.xlo > 60 && !on_step(e, step.x)) continue;
        s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", s.px(e), kBottom, kBottom + 6);
        for (int k = 2; minor_x && e < m.xhi && k <= 9; ++k) {
            const double x = s.px(e + std::log10(k));
            s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x, kBottom, kBottom + 3);
        }
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (m.yhi - m.ylo > 60 && !on_step(e, step.y)) continue;
        s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - 6, s.py(e), kLeft);
        for (int k = 2; minor_y && e < m.yhi && k <= 9; ++k) {
            const double y = s.py(e + std::log10(k));
            s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - 3, y, kLeft);
        }
    }
    s.put("</g>\n");
}

// Tick labels in SI units and the two axis titles.
void draw_tick_labels(Svg& s, const Layout& m, AxisSteps step) {
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (!on_step(e, step.x)) continue;
        s.text(s.px(e), kBottom + 19, Anchor::middle, plain(std::pow(10.0, e)), "tick x-tick");
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (!on_step(e, step.y)) continue;
        s.text(kLeft - 9, s.py(e) + 4, Anchor::end, si(std::pow(10.0, e), "FLOP/s", false), "tick y-tick");
    }
    s.text((kLeft + kRight) / 2, kBottom + 42, Anchor::middle, "Arithmetic intensity (FLOP/B)",
           "axis-title", "font-size=\"12\"");
    s.put("<text class=\"axis-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" font-size=\"12\" "
          "transform=\"translate(16 {:.1f}) rotate(-90)\">Performance (FLOP/s)</text>\n",
          (kTop + kBottom) / 2);
}

void draw_axes(Svg& s, const Layout& m) {
    const AxisSteps step{decade_step(m.xlo, m.xhi, 12), decade_step(m.ylo, m.yhi, 10)};
    draw_grid(s, m, step);
    draw_ticks(s, m, step);
    draw_tick_labels(s, m, step);
}

// Where the roofs were drawn, for the labels placed after them.
struct Roofs {
    double bw_log = 0;                  // log10 of the bandwidth
    bool has_slope = false;
    double slope_x0 = 0, slope_x1 = 0;  // visible part of the slope, in decades of AI
    bool has_ridge = false;
    double ridge_x = 0;
};

// The bandwidth slope, one line per compute ceiling and the ridge marker, clipped to the plot so
// that extreme inputs cannot draw across the page.
Roofs draw_roofs(Svg& s, const Layout& m, const RooflineChart& chart) {
    Roofs r;
    s.put("<g clip-path=\"url(#plot-area)\">\n");
    r.bw_log = m.bandwidth > 0 ? std::log10(m.bandwidth) : 0;
    r.has_slope = m.bandwidth > 0 && m.top_index >= 0;
    if (r.has_slope) {
        const auto& top = m.ceilings[static_cast<std::size_t>(m.top_index)];
        r.slope_x0 = std::max<double>(m.xlo, m.ylo - r.bw_log);
        r.slope_x1 = std::log10(top.ridge);
        if (r.slope_x1 > r.slope_x0) {
            s.put("<line class=\"bandwidth\" data-name=\"{}\" data-value=\"{}\" x1=\"{:.1f}\" "
                  "y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-width=\"2\"/>\n",
                  xml_escape(chart.bandwidth_label), m.bandwidth, s.px(r.slope_x0),
                  s.py(r.slope_x0 + r.bw_log), s.px(r.slope_x1), s.py(r.slope_x1 + r.bw_log));
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
    if (m.ridge_index >= 0 && m.bandwidth > 0) {
        const auto& ridge = m.ceilings[static_cast<std::size_t>(m.ridge_index)];
        if (ridge.ridge > 0) {
            r.has_ridge = true;
            r.ridge_x = s.x_of(ridge.ridge);
            // The value is withheld from the attributes too when the lesson asks students for it.
            const std::string value =
                chart.show_ridge_value ? fmt::format(" data-value=\"{}\"", ridge.ridge) : std::string();
            s.put("<line class=\"ridge\" data-name=\"{}\"{} x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" "
                  "y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>\n",
                  xml_escape(ridge.name), value, r.ridge_x, kBottom, r.ridge_x, s.y_of(ridge.flops));
        }
    }
    s.put("</g>\n");
    return r;
}

// Where each point sits: at its AI, or on the edge of the x axis when it is off scale.
double point_x(const Svg& s, const Layout& m, std::size_t i) {
    const int side = m.off_scale[i];
    return side < 0 ? kLeft : side > 0 ? kRight : s.x_of(m.drawn[i]->ai);
}

// The boxes of the points: known before any label is placed, so that no label covers one.
std::vector<Box> point_boxes(const Svg& s, const Layout& m) {
    std::vector<Box> boxes;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const double x = point_x(s, m, i), y = s.y_of(m.drawn[i]->flops_per_s);
        boxes.push_back({x - kPointRadius, y - kPointRadius, x + kPointRadius, y + kPointRadius});
    }
    return boxes;
}

// Ceiling labels, highest first: near the right edge above the line, else below it, else at the
// line's left end, so that close ceilings (fp32 vs fp64) stay legible.
void label_ceilings(Svg& s, const Layout& m, std::vector<Box>& taken) {
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
        const auto p = place_label(kRight - 6, y, w, cands, taken, kPlotArea);
        taken.push_back(p.box);
        taken.push_back({x0, y - 1.5, kRight, y + 1.5});
        s.text(p.x, p.y, p.anchor, label, "ceiling-label");
    }
}

// The slope's label runs along it, a little above, at the middle of its visible part.
void label_slope(Svg& s, const Layout& m, const RooflineChart& chart, const Roofs& r, std::vector<Box>& taken) {
    if (!r.has_slope || r.slope_x1 <= r.slope_x0) return;
    const std::string label = chart.bandwidth_label.empty()
                                  ? si(m.bandwidth, "B/s", false)
                                  : fmt::format("{} {}", chart.bandwidth_label, si(m.bandwidth, "B/s", false));
    const double mid = (r.slope_x0 + r.slope_x1) / 2;
    const double angle = -std::atan2(s.px_per_y_decade(), s.px_per_x_decade());
    const double x = s.px(mid) + 7 * std::sin(angle);
    const double y = s.py(mid + r.bw_log) - 7 * std::cos(angle);
    s.put("<text class=\"bandwidth-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
          "transform=\"rotate({2:.2f} {0:.1f} {1:.1f})\">{3}</text>\n",
          x, y, angle * 180 / std::numbers::pi, xml_escape(label));
    // A rotated label is approximated by the box around the middle half of it.
    const double half = text_width(label) / 4;
    taken.push_back({x - half * std::cos(angle) - 6, y - half * -std::sin(angle) - 6,
                     x + half * std::cos(angle) + 6, y + half * -std::sin(angle) + 6});
    if (taken.back().y0 > taken.back().y1) std::swap(taken.back().y0, taken.back().y1);
}

// The ridge's value at the foot of its marker, right of it where there is room.
void label_ridge(Svg& s, const Layout& m, const RooflineChart& chart, const Roofs& r, std::vector<Box>& taken) {
    if (!r.has_ridge) return;
    const auto& ridge = m.ceilings[static_cast<std::size_t>(m.ridge_index)];
    const std::string label = chart.show_ridge_value ? fmt::format("ridge {} FLOP/B", plain(ridge.ridge))
                                                     : std::string("ridge ? FLOP/B");
    const double w = text_width(label);
    const bool room_right = r.ridge_x + 5 + w <= kRight - 4;
    const Anchor a = room_right ? Anchor::start : Anchor::end;
    const double x = room_right ? r.ridge_x + 5 : r.ridge_x - 5;
    s.text(x, kBottom - 7, a, label, "ridge-label", "fill=\"#444\"");
    taken.push_back(text_box(x, kBottom - 7, a, w));
}

// The regimes the points use, each once, in their conventional order; unknown names and
// "regime not shown" last.
std::vector<RegimeStyle> regimes_used(const Layout& m) {
    std::vector<RegimeStyle> used;
    for (const Point* p : m.drawn) {
        auto st = regime_style(p->regime);
        if (std::none_of(used.begin(), used.end(), [&](const RegimeStyle& u) { return u.key == st.key; }))
            used.push_back(std::move(st));
    }
    auto rank = [](const RegimeStyle& st) {
        static constexpr std::array<std::string_view, 5> kOrder = {
            "compute_bound", "memory_bound", "overhead_bound", "latency_bound", "undecided"};
        const auto it = std::find(kOrder.begin(), kOrder.end(), st.key);
        if (it != kOrder.end()) return static_cast<int>(it - kOrder.begin());
        return st.key == "regime not shown" ? 6 : 5;
    };
    std::stable_sort(used.begin(), used.end(), [&](const RegimeStyle& a, const RegimeStyle& b) { return rank(a) < rank(b); });
    return used;
}

// Legend of the regimes used, in the empty corner above the slope.
void draw_legend(Svg& s, const Layout& m, std::vector<Box>& taken) {
    const std::vector<RegimeStyle> used = regimes_used(m);
    if (used.empty()) return;
    double w = 0;
    for (const auto& u : used) w = std::max(w, text_width(u.key));
    const double bx = kLeft + 10, by = kTop + 10;
    const double bw = w + 34, bh = 16.0 * static_cast<double>(used.size()) + 8;
    s.put("<g class=\"legend\">\n<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"white\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n",
          bx, by, bw, bh);
    for (std::size_t i = 0; i < used.size(); ++i) {
        const double y = by + 14 + 16.0 * static_cast<double>(i);
        s.put("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>\n", bx + 12, y - 4, kPointRadius,
              used[i].color);
        s.text(bx + 24, y, Anchor::start, used[i].key, "legend-label");
    }
    s.put("</g>\n");
    taken.push_back({bx, by, bx + bw, by + bh});
}

// A point's AI as its labels write it: "?" while it is a graded answer.
std::string ai_text(const Point& p) { return !p.ai_shown ? "?" : std::isinf(p.ai) ? "inf" : plain(p.ai); }

// One circle per point, with its data and a tooltip; an off-scale point also gets an arrow just
// outside the frame, pointing the way its AI lies.
void draw_points(Svg& s, const Layout& m) {
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const auto st = regime_style(p->regime);
        const double x = point_x(s, m, i), y = s.y_of(p->flops_per_s);
        const int side = m.off_scale[i];
        const std::string tip = fmt::format(
            "{}: AI {} FLOP/B{}, {}, {}", p->label, ai_text(*p),
            side ? " (off the axis, drawn at its edge)" : "", p->flops_shown ? si(p->flops_per_s, "FLOP/s", false) : "? FLOP/s",
            p->regime.empty() ? "regime not shown" : p->regime);
        s.put("<circle class=\"point\" data-label=\"{}\" data-ai=\"{}\" data-flops=\"{}\" "
              "data-regime=\"{}\"{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" stroke=\"white\" "
              "stroke-width=\"1\"><title>{}</title></circle>\n",
              xml_escape(p->label), p->ai_shown ? fmt::format("{}", p->ai) : "?",
              p->flops_shown ? fmt::format("{}", p->flops_per_s) : "?", xml_escape(p->regime),
              side ? fmt::format(" data-off-scale=\"{}\"", side < 0 ? "left" : "right") : std::string(), x, y,
              kPointRadius, st.color, xml_escape(tip));
        if (side) {
            const double tip_x = side < 0 ? kLeft - 15 : kRight + 15, base_x = side < 0 ? kLeft - 7 : kRight + 7;
            s.put("<path class=\"off-scale\" data-label=\"{}\" data-ai=\"{}\" data-side=\"{}\" "
                  "d=\"M {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f} Z\" fill=\"{}\"/>\n",
                  xml_escape(p->label), p->ai_shown ? fmt::format("{}", p->ai) : "?", side < 0 ? "left" : "right", base_x, y - 5, tip_x, y, base_x, y + 5,
                  st.color);
        }
    }
}

// Point labels, placed last around everything else; a point at infinite or off-scale AI says so.
void label_points(Svg& s, const Layout& m, std::vector<Box>& taken) {
    const std::vector<Offset> right_first = {
        {8, 4, Anchor::start},  {6, -7, Anchor::start}, {6, 15, Anchor::start},
        {-8, 4, Anchor::end},   {-6, -7, Anchor::end},  {-6, 15, Anchor::end},
        {0, -9, Anchor::middle}, {0, 17, Anchor::middle}};
    const std::vector<Offset> left_first = {
        {-8, 4, Anchor::end}, {-6, -7, Anchor::end}, {-6, 15, Anchor::end},
        {0, -9, Anchor::end}, {0, 17, Anchor::end}};
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const double x = point_x(s, m, i), y = s.y_of(p->flops_per_s);
        const int side = m.off_scale[i];
        const std::string label = std::isinf(p->ai) && p->ai_shown ? p->label + " (AI\u2192\u221E)"
                                  : side > 0 || std::isinf(p->ai) ? p->label + " (AI " + ai_text(*p) + " \u2192)"
                                  : side < 0        ? p->label + " (\u2190 AI " + ai_text(*p) + ")"
                                                    : p->label;
        const double w = text_width(label);
        const auto pl = place_label(x, y, w, std::isinf(p->ai) || side > 0 ? left_first : right_first, taken, kPlotArea);
        taken.push_back(pl.box);
        s.text(pl.x, pl.y, pl.anchor, label, "point-label", "fill=\"#222\"");
    }
}

void draw_notes(Svg& s, const std::vector<std::string>& note_lines) {
    for (std::size_t i = 0; i < note_lines.size(); ++i)
        s.text(kLeft, kBottom + 64 + 14.0 * static_cast<double>(i), Anchor::start, note_lines[i], "not-drawn",
               "fill=\"#a33\"");
}

}  // namespace
}  // namespace detail

std::string render_svg(const RooflineChart& chart) {
    using namespace detail;
    const Layout m = lay_out(chart);
    Svg s(m);
    const std::vector<std::string> note_lines = wrap_notes(m.not_drawn);
    const double height = kHeight + 14.0 * static_cast<double>(note_lines.size() > 0 ? note_lines.size() - 1 : 0);

    draw_page(s, chart.title.empty() ? std::string("Roofline") : chart.title, height);
    draw_axes(s, m);
    const Roofs roofs = draw_roofs(s, m, chart);
    // Everything a label must avoid, filled as things are drawn.
    std::vector<Box> taken = point_boxes(s, m);
    label_ceilings(s, m, taken);
    label_slope(s, m, chart, roofs, taken);
    label_ridge(s, m, chart, roofs, taken);
    draw_legend(s, m, taken);
    draw_points(s, m);
    label_points(s, m, taken);
    draw_notes(s, note_lines);
    s.put("</svg>\n");
    return std::move(s.out());
}

}  // namespace lab::plot
