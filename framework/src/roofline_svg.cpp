// The roofline as a standalone SVG document (render_svg in roofline_plot.hpp), drawn from the
// shared Layout in the order a reader's eye needs it: page, axes, roofs, each point's drop line
// up to its roof (roofline_svg_drops.cpp), then labels placed
// around everything drawn before them (lines included), the legend, the points with their labels
// or letter keys (roofline_svg_points.cpp), the key table, and a note of what could not be
// placed. Every element carries class and data-* attributes, so tests and scripts read the
// picture without parsing pixels.
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
#include "roofline_svg_drops.hpp"
#include "roofline_svg_points.hpp"
#include "roofline_text.hpp"

namespace lab::plot {
namespace detail {
namespace {

constexpr Box kPlotArea{kLeft, kTop, kRight, kBottom};
// Under the x axis's title: the key table, then the notes.
constexpr double kBelowAxis = kBottom + 58;

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

// The document's head: its size, title, the plot area's clip path, a white page. Written last,
// when the key table has said how tall the page is.
std::string page_head(const std::string& title, double height) {
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
                       "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\" font-size=\"{3}\">\n",
                       kWidth, height, kFontFamily, kFontSize);
    out += fmt::format("<title>{}</title>\n", xml_escape(title));
    out += fmt::format("<defs><clipPath id=\"plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                       "</clipPath></defs>\n",
                       kLeft, kTop, kRight - kLeft, kBottom - kTop);
    out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    out += fmt::format("<text class=\"title\" x=\"{:.1f}\" y=\"28.0\" text-anchor=\"middle\" font-size=\"{}\" "
                       "font-weight=\"bold\">{}</text>\n",
                       kWidth / 2, kTitleSize, xml_escape(title));
    return out;
}

// Every decade gets a grid line and a tick; on very wide axes (over 60 decades) only the
// labelled ones do. Labels come every `x`-th and `y`-th decade.
struct AxisSteps {
    int x, y;
};

void draw_grid(Svg& s, const Layout& m, AxisSteps step) {
    s.put("<g class=\"grid\" stroke=\"{}\" stroke-width=\"1\">\n", kGridColour);
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
          "stroke=\"{}\" stroke-width=\"1\"/>\n",
          kLeft, kTop, kRight - kLeft, kBottom - kTop, kFrameColour);
}

// Decade ticks, with minor ticks at 2..9 where a decade is wide enough to hold them.
void draw_ticks(Svg& s, const Layout& m, AxisSteps step) {
    const bool minor_x = s.px_per_x_decade() >= 40 && m.xhi - m.xlo <= 40;
    const bool minor_y = s.px_per_y_decade() >= 40 && m.yhi - m.ylo <= 40;
    s.put("<g class=\"ticks\" stroke=\"{}\" stroke-width=\"1\">\n", kFrameColour);
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (m.xhi - m.xlo > 60 && !on_step(e, step.x)) continue;
        s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", s.px(e), kBottom, kBottom + kTickLength);
        for (int k = 2; minor_x && e < m.xhi && k <= 9; ++k) {
            const double x = s.px(e + std::log10(k));
            s.put("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x, kBottom, kBottom + 3);
        }
    }
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (m.yhi - m.ylo > 60 && !on_step(e, step.y)) continue;
        s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - kTickLength, s.py(e), kLeft);
        for (int k = 2; minor_y && e < m.yhi && k <= 9; ++k) {
            const double y = s.py(e + std::log10(k));
            s.put("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>\n", kLeft - 3, y, kLeft);
        }
    }
    s.put("</g>\n");
}

// Tick labels in SI units and the two axis titles, the y title left of the widest tick label.
void draw_tick_labels(Svg& s, const Layout& m, AxisSteps step) {
    for (int e = m.xlo; e <= m.xhi; ++e) {
        if (!on_step(e, step.x)) continue;
        s.text(s.px(e), kBottom + 19, Anchor::middle, plain(std::pow(10.0, e)), "tick x-tick");
    }
    double widest = 0;
    for (int e = m.ylo; e <= m.yhi; ++e) {
        if (!on_step(e, step.y)) continue;
        const std::string t = si(std::pow(10.0, e), "FLOP/s", false);
        widest = std::max(widest, text_width(t));
        s.text(kLeft - 9, s.py(e) + 4, Anchor::end, t, "tick y-tick");
    }
    s.text((kLeft + kRight) / 2, kBottom + 42, Anchor::middle, axis_title("arithmetic intensity", "FLOP/B", true),
           "axis-title", fmt::format("font-size=\"{}\"", kAxisTitleSize));
    // The title's baseline, rotated: its glyphs reach kAxisTitleSize * 0.8 left of it.
    const double title_x = std::max(kAxisTitleSize, kLeft - 9 - widest - 6);
    s.put("<text class=\"axis-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" font-size=\"{}\" "
          "transform=\"translate({:.1f} {:.1f}) rotate(-90)\">{}</text>\n",
          kAxisTitleSize, title_x, (kTop + kBottom) / 2, xml_escape(axis_title("performance", "FLOP/s", true)));
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
    struct Ridge {
        int ceiling = -1;               // index into Layout::ceilings
        double x = 0, top = 0;          // its line, from the axis up to y = top
    };
    std::vector<Ridge> ridges;          // the main one first, then fp64's
    std::vector<Box> lines;             // boxes covering every line drawn, for labels to avoid
};

// The bandwidth slope, one line per compute ceiling and the ridge markers (the main pipe's and
// fp64's), clipped to the plot so that extreme inputs cannot draw across the page.
Roofs draw_roofs(Svg& s, const Layout& m, const RooflineChart& chart) {
    Roofs r;
    s.put("<g clip-path=\"url(#plot-area)\">\n");
    r.bw_log = m.bandwidth > 0 ? std::log10(m.bandwidth) : 0;
    r.has_slope = m.bandwidth > 0 && m.top_index >= 0;
    auto cover = [&](double x0, double y0, double x1, double y1) {
        // Only what lies on the page: a slope from 1e-300 would make millions of pieces.
        const double cx0 = std::clamp(x0, kLeft, kRight), cx1 = std::clamp(x1, kLeft, kRight);
        if (cx1 <= cx0 && x1 > x0) return;
        const double t0 = x1 != x0 ? (cx0 - x0) / (x1 - x0) : 0, t1 = x1 != x0 ? (cx1 - x0) / (x1 - x0) : 1;
        const double ya = y0 + (y1 - y0) * t0, yb = y0 + (y1 - y0) * t1;
        for (const Box& b : line_boxes(cx0, std::clamp(ya, kTop, kBottom), cx1, std::clamp(yb, kTop, kBottom), kLinePad))
            r.lines.push_back(b);
    };
    if (r.has_slope) {
        const auto& top = m.ceilings[static_cast<std::size_t>(m.top_index)];
        r.slope_x0 = std::max<double>(m.xlo, m.ylo - r.bw_log);
        r.slope_x1 = std::log10(top.ridge);
        if (r.slope_x1 > r.slope_x0) {
            s.put("<line class=\"bandwidth\" data-name=\"{}\" data-value=\"{}\" x1=\"{:.1f}\" "
                  "y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-width=\"2\"/>\n",
                  xml_escape(chart.bandwidth_label), m.bandwidth, s.px(r.slope_x0),
                  s.py(r.slope_x0 + r.bw_log), s.px(r.slope_x1), s.py(r.slope_x1 + r.bw_log));
            cover(s.px(r.slope_x0), s.py(r.slope_x0 + r.bw_log), s.px(r.slope_x1), s.py(r.slope_x1 + r.bw_log));
        }
    }
    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const auto& c = m.ceilings[i];
        const bool main = static_cast<int>(i) == m.ridge_index;
        const double x0 = c.ridge > 0 ? s.x_of(c.ridge) : kLeft;
        s.put("<line class=\"ceiling\" data-name=\"{}\" data-value=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
              "x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
              xml_escape(c.name), c.flops, x0, s.y_of(c.flops), kRight, s.y_of(c.flops),
              main ? "#222" : "#666", main ? 2.5 : 1.5, c.note.empty() ? "" : " stroke-dasharray=\"8 4\"");
        cover(x0, s.y_of(c.flops), kRight, s.y_of(c.flops));
    }
    if (m.bandwidth > 0) {
        for (int idx : {m.ridge_index, m.fp64_ridge_index}) {
            if (idx < 0) continue;
            const auto& c = m.ceilings[static_cast<std::size_t>(idx)];
            if (c.ridge <= 0) continue;
            const bool main = idx == m.ridge_index;
            Roofs::Ridge ridge{idx, s.x_of(c.ridge), s.y_of(c.flops)};
            // The value is withheld from the attributes too when the lesson asks students for it
            // (the marked ridge's: fp64's is no question's answer, and lessons print it).
            const std::string value = chart.show_ridge_value || !main ? fmt::format(" data-value=\"{}\"", c.ridge) : std::string();
            s.put("<line class=\"{}\" data-name=\"{}\"{} x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" "
                  "y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"{}\" stroke-dasharray=\"{}\"/>\n",
                  main ? "ridge" : "fp64-ridge", xml_escape(c.name), value, ridge.x, kBottom, ridge.x, ridge.top,
                  main ? 1.2 : 1, main ? "5 4" : "2 3");
            cover(ridge.x, kBottom, ridge.x, ridge.top);
            r.ridges.push_back(ridge);
        }
    }
    s.put("</g>\n");
    return r;
}

// Ceiling labels, highest first: near the right edge above the line, else below it, else at the
// line's left end, so that close ceilings (fp32 vs fp64) stay legible.
void label_ceilings(Svg& s, const Layout& m, std::vector<Box>& taken, const std::vector<Box>& drops) {
    std::vector<std::size_t> order(m.ceilings.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return m.ceilings[a].flops > m.ceilings[b].flops;
    });
    for (std::size_t i : order) {
        const auto& c = m.ceilings[i];
        const std::string label = fmt::format("{} {}{}", c.name, si(c.flops, "FLOP/s", false), c.note.empty() ? "" : " (" + c.note + ")");
        const double y = s.y_of(c.flops);
        const double x0 = c.ridge > 0 ? s.x_of(c.ridge) : kLeft;
        const double w = text_width(label);
        const double dx_left = x0 + 6 - (kRight - 6);
        const std::vector<Offset> cands = {{0, -5, Anchor::end},
                                           {0, 14, Anchor::end},
                                           {dx_left, -5, Anchor::start},
                                           {dx_left, 14, Anchor::start},
                                           {(dx_left) / 2, -5, Anchor::middle},
                                           {(dx_left) / 2, 14, Anchor::middle}};
        const auto p = place_label(kRight - 6, y, w, cands, taken, drops, kPlotArea);
        taken.push_back(p.box);
        s.text(p.x, p.y, p.anchor, label, "ceiling-label");
    }
}

// The slope's label runs along it, a little above: at the middle of its visible part, else
// nearer either end where that touches nothing.
void label_slope(Svg& s, const Layout& m, const RooflineChart& chart, const Roofs& r, std::vector<Box>& taken,
                 const std::vector<Box>& drops) {
    if (!r.has_slope || r.slope_x1 <= r.slope_x0) return;
    const std::string label = chart.bandwidth_label.empty()
                                  ? si(m.bandwidth, "B/s", false)
                                  : fmt::format("{} {}", chart.bandwidth_label, si(m.bandwidth, "B/s", false));
    const double angle = -std::atan2(s.px_per_y_decade(), s.px_per_x_decade());
    const double w = text_width(label);
    double best_x = 0, best_y = 0, best_score = HUGE_VAL;
    std::vector<Box> best_boxes;
    for (double f : {0.5, 0.62, 0.38, 0.75, 0.25}) {
        const double at = r.slope_x0 + f * (r.slope_x1 - r.slope_x0);
        const double x = s.px(at) + 7 * std::sin(angle);
        const double y = s.py(at + r.bw_log) - 7 * std::cos(angle);
        std::vector<Box> boxes = rotated_text_boxes(x, y, w, angle);
        double score = 0;
        for (const Box& b : boxes) {
            for (const Box& o : taken) score += overlap(b, o);
            for (const Box& o : drops) score += overlap(b, o);
            score += 4 * ((b.x1 - b.x0) * (b.y1 - b.y0) - overlap(b, kPlotArea));
        }
        if (score < best_score) best_x = x, best_y = y, best_score = score, best_boxes = std::move(boxes);
        if (score == 0) break;
    }
    s.put("<text class=\"bandwidth-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
          "transform=\"rotate({2:.2f} {0:.1f} {1:.1f})\">{3}</text>\n",
          best_x, best_y, angle * 180 / std::numbers::pi, xml_escape(label));
    taken.insert(taken.end(), best_boxes.begin(), best_boxes.end());
}

// Each ridge's value at the foot of its marker: the main one right of it where there is room,
// fp64's left of it (it lies left of the main one).
void label_ridges(Svg& s, const Layout& m, const RooflineChart& chart, const Roofs& r, std::vector<Box>& taken,
                  const std::vector<Box>& drops) {
    for (const auto& ridge : r.ridges) {
        const auto& c = m.ceilings[static_cast<std::size_t>(ridge.ceiling)];
        const bool main = ridge.ceiling == m.ridge_index;
        // A withheld ridge says how it is found, so that its '?' does not read as a value lab lost.
        const bool withheld = !chart.show_ridge_value && main;
        const std::string value = withheld ? std::string("?") : ai_number(c.ridge);
        const std::string label = withheld ? "ridge ? FLOP/B = peak / bandwidth"
                                  : main   ? fmt::format("ridge {} FLOP/B", value)
                                           : fmt::format("{} ridge {} FLOP/B", c.name, value);
        const double w = text_width(label);
        const Anchor near = main ? Anchor::start : Anchor::end, other = main ? Anchor::end : Anchor::start;
        const double dx = main ? 5 : -5;
        std::vector<Offset> cands;
        for (double lift : {0.0, 14.0, 28.0, 42.0})
            for (const auto& [off, a] : {std::pair{dx, near}, std::pair{-dx, other}}) cands.push_back({off, -7 - lift, a});
        const auto p = place_label(ridge.x, kBottom, w, cands, taken, drops, kPlotArea);
        s.text(p.x, p.y, p.anchor, label, main ? "ridge-label" : "fp64-ridge-label", "fill=\"#444\"");
        taken.push_back(p.box);
    }
}

// The regimes the points use, each once, in their conventional order; unknown names and
// "not shown" last.
std::vector<RegimeStyle> regimes_used(const Layout& m) {
    std::vector<RegimeStyle> used;
    for (const Point* p : m.drawn) {
        auto st = regime_style(p->regime);
        if (std::none_of(used.begin(), used.end(), [&](const RegimeStyle& u) { return u.key == st.key; }))
            used.push_back(std::move(st));
    }
    std::stable_sort(used.begin(), used.end(), [](const RegimeStyle& a, const RegimeStyle& b) { return a.rank < b.rank; });
    return used;
}

// Legend of the regimes used, each with its marker, under the title "measured regime": in the
// empty corner above the slope, else in whichever corner covers nothing.
void draw_legend(Svg& s, const Layout& m, std::vector<Box>& taken, const std::vector<Box>& drops) {
    const std::vector<RegimeStyle> used = regimes_used(m);
    if (used.empty()) return;
    const std::string title = "measured regime";
    double bw = text_width(title) + 16;
    for (const auto& u : used) bw = std::max(bw, text_width(u.label) + 34);
    const double bh = 16.0 * static_cast<double>(used.size() + 1) + 8;
    const std::array<std::pair<double, double>, 4> corners = {{{kLeft + 10, kTop + 10},
                                                               {kRight - 10 - bw, kBottom - 30 - bh},
                                                               {kLeft + 10, kBottom - 30 - bh},
                                                               {kRight - 10 - bw, kTop + 30}}};
    double bx = corners[0].first, by = corners[0].second, least = HUGE_VAL;
    for (const auto& [cx, cy] : corners) {
        const Box b{cx, cy, cx + bw, cy + bh};
        double shared = 0;
        for (const Box& o : taken) shared += overlap(b, o);
        for (const Box& o : drops) shared += overlap(b, o);
        if (shared < least) least = shared, bx = cx, by = cy;
        if (shared == 0) break;
    }
    s.put("<g class=\"legend\">\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"white\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n",
          bx, by, bw, bh);
    s.text(bx + 8, by + 14, Anchor::start, title, "legend-title", "fill=\"#444\"");
    for (std::size_t i = 0; i < used.size(); ++i) {
        const double y = by + 30 + 16.0 * static_cast<double>(i);
        s.out() += marker(used[i].shape, bx + 14, y - 4, kPointRadius,
                          fmt::format("class=\"legend-marker\" data-regime=\"{}\" fill=\"{}\"", xml_escape(used[i].key), used[i].color)) +
                   "\n";
        s.text(bx + 26, y, Anchor::start, used[i].label, "legend-label");
    }
    s.put("</g>\n");
    taken.push_back({bx, by, bx + bw, by + bh});
}

// At the page's left margin, as the key table: a wrapped line of kNoteLineChars fits from there.
void draw_notes(Svg& s, const std::vector<std::string>& note_lines, double top) {
    for (std::size_t i = 0; i < note_lines.size(); ++i)
        s.text(kKeyLeft, top + 6 + 14.0 * static_cast<double>(i), Anchor::start, note_lines[i], "not-drawn", "fill=\"#a33\"");
}

}  // namespace
}  // namespace detail

std::string not_drawable(const RooflineChart& chart) {
    const detail::Layout m = detail::lay_out(chart);
    if (!m.drawn.empty()) return "";
    if (chart.points.empty()) return "no workload of this run is placed on a roofline";
    std::string out = "no workload can be placed on its log axes:";
    std::size_t listed = 0;
    for (const auto& why : m.not_drawn) {
        // The roofs' own problems are not the reason; the points' are.
        if (why.rfind("ceiling ", 0) == 0 || why.rfind("bandwidth ceiling", 0) == 0) continue;
        if (listed == 3) {
            out += fmt::format(" and {} more", chart.points.size() - listed);
            break;
        }
        out += (listed++ ? ", " : " ") + why;
    }
    return out;
}

std::string render_svg(const RooflineChart& chart) {
    using namespace detail;
    const Layout m = lay_out(chart);
    Svg s(m);
    const std::vector<std::string> note_lines = wrap_notes(m.not_drawn);
    const std::string title = chart.title.empty() ? std::string("Roofline") : chart.title;

    draw_axes(s, m);
    const Roofs roofs = draw_roofs(s, m, chart);
    // Faint: a label avoids them where it can and crosses one rather than lose its spot.
    const std::vector<Box> drops = draw_drop_lines(s, m);
    // Everything a label must avoid, filled as things are drawn: the markers and every line
    // first, then each label as it is placed.
    std::vector<Box> taken = point_boxes(s, m);
    taken.insert(taken.end(), roofs.lines.begin(), roofs.lines.end());
    label_ceilings(s, m, taken, drops);
    label_slope(s, m, chart, roofs, taken, drops);
    label_ridges(s, m, chart, roofs, taken, drops);
    draw_legend(s, m, taken, drops);
    const std::vector<KeyRow> keys = draw_points(s, m, taken, drops);
    draw_key_table(s, m, keys, kBelowAxis);
    const double notes_top = kBelowAxis + key_table_height(keys) + (keys.empty() ? 0 : 6);
    draw_notes(s, note_lines, notes_top);
    const double content = notes_top + 14.0 * static_cast<double>(note_lines.size());
    const double height = std::max(kHeight, std::ceil(content + 6));
    return page_head(title, height) + s.out() + "</svg>\n";
}

}  // namespace lab::plot
