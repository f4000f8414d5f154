// The kernels on the SVG roofline (see roofline_svg_points.hpp).
#include "roofline_svg_points.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

// More points than this are keyed by letter outright: a plot with that many names on it is a
// word cloud whatever the placement.
constexpr std::size_t kMaxNamedPoints = 20;
// Markers closer than this (px) are one spot to a reader: they share one label.
constexpr double kSameSpot = 4;
// How many rings of spots a label tries around its point before it becomes a letter.
constexpr int kLabelRings = 4;
constexpr double kKeyRowHeight = 15;
constexpr double kKeyColumnWidth = (kWidth - 2 * kKeyLeft) / 2;
constexpr const char* kHalo = "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"";

// A point's AI as its labels write it: "?" while it is a graded answer, as the run's table does.
std::string ai_text(const Point& p) { return !p.ai_shown ? "?" : std::isinf(p.ai) ? "inf" : ai_number(p.ai); }

// What follows a point's name where the marker does not show the AI: "(AI 9.6e7 →)" off the
// right edge, "(← AI 2e-7)" off the left, "(AI→∞)" at infinite AI. A withheld AI is "(AI ?)" on
// every point, on the axis or off it, so that no label reads as if it gave one away.
std::string ai_suffix(const Point& p, int side) {
    if (std::isinf(p.ai) && p.ai_shown) return " (AI\u2192\u221E)";
    if (side > 0 || std::isinf(p.ai)) return " (AI " + ai_text(p) + " \u2192)";
    if (side < 0) return " (\u2190 AI " + ai_text(p) + ")";
    return p.ai_shown ? "" : " (AI ?)";
}

// Points on one spot, the first of them leading: the marker drawn last hides the others, so the
// group is labelled once, with every name.
struct Group {
    std::vector<std::size_t> members;
    double x = 0, y = 0;
};

std::vector<Group> group_points(const Svg& s, const Layout& m) {
    std::vector<Group> groups;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const double x = point_x(s, m, i), y = s.y_of(m.drawn[i]->flops_per_s);
        auto same = std::find_if(groups.begin(), groups.end(),
                                 [&](const Group& g) { return std::hypot(g.x - x, g.y - y) < kSameSpot; });
        if (same != groups.end()) same->members.push_back(i);
        else groups.push_back({{i}, x, y});
    }
    return groups;
}

std::string group_label(const Layout& m, const Group& g) {
    std::string names;
    for (std::size_t i : g.members) names += (names.empty() ? "" : ", ") + m.drawn[i]->label;
    const std::size_t lead = g.members.front();
    return names + ai_suffix(*m.drawn[lead], m.off_scale[lead]);
}

std::string group_letters(const Group& g) {
    std::string letters;
    for (std::size_t i : g.members) letters += (letters.empty() ? "" : ",") + std::string(1, point_letter(i));
    return letters;
}

// A thin line from the marker's edge to the nearest point of its label's box.
void draw_leader(Svg& s, double x, double y, const Box& b) {
    const auto [tx, ty] = leader_end(x, y, b);
    const double len = std::hypot(tx - x, ty - y);
    if (len <= kPointRadius + 2) return;
    const double sx = x + (tx - x) / len * (kPointRadius + 1), sy = y + (ty - y) / len * (kPointRadius + 1);
    s.put("<line class=\"leader\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#777\" "
          "stroke-width=\"0.8\"/>\n",
          sx, sy, tx, ty);
}

// One marker per point with its data and a tooltip; an off-scale point keeps its shape on the
// edge and gets an arrow just outside the frame, pointing the way its AI lies.
void draw_markers(Svg& s, const Layout& m) {
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const auto st = regime_style(p->regime);
        const double x = point_x(s, m, i), y = s.y_of(p->flops_per_s);
        const int side = m.off_scale[i];
        const std::string tip = fmt::format(
            "{}: AI {} FLOP/B{}, {}, {}", p->label, ai_text(*p), side ? " (off the axis, drawn at its edge)" : "",
            p->flops_shown ? si(p->flops_per_s, "FLOP/s", false) : "? FLOP/s", p->regime.empty() ? "regime not shown" : p->regime);
        const std::string attrs = fmt::format(
            "class=\"point\" data-label=\"{}\" data-key=\"{}\" data-ai=\"{}\" data-flops=\"{}\" data-regime=\"{}\"{} fill=\"{}\" "
            "stroke=\"white\" stroke-width=\"1\"",
            xml_escape(p->label), point_letter(i), p->ai_shown ? fmt::format("{}", p->ai) : "?",
            p->flops_shown ? fmt::format("{}", p->flops_per_s) : "?", xml_escape(p->regime),
            side ? fmt::format(" data-off-scale=\"{}\"", side < 0 ? "left" : "right") : std::string(), st.color);
        s.out() += marker(st.shape, x, y, kPointRadius, attrs, "<title>" + xml_escape(tip) + "</title>") + "\n";
        if (side) {
            const double tip_x = side < 0 ? kLeft - 15 : kRight + 15, base_x = side < 0 ? kLeft - 7 : kRight + 7;
            s.put("<path class=\"off-scale\" data-label=\"{}\" data-ai=\"{}\" data-side=\"{}\" "
                  "d=\"M {:.1f} {:.1f} L {:.1f} {:.1f} L {:.1f} {:.1f} Z\" fill=\"{}\"/>\n",
                  xml_escape(p->label), p->ai_shown ? fmt::format("{}", p->ai) : "?", side < 0 ? "left" : "right", base_x,
                  y - 5, tip_x, y, base_x, y + 5, st.color);
        }
    }
}

// A placed label and its leader line become obstacles for the labels placed after them.
void take_label(std::vector<Box>& taken, const Placement& at, double x, double y) {
    taken.push_back(at.box);
    if (!at.far) return;
    const auto [tx, ty] = leader_end(x, y, at.box);
    const double len = std::hypot(tx - x, ty - y);
    if (len <= kPointRadius * 2) return;
    const double sx = x + (tx - x) / len * kPointRadius * 2, sy = y + (ty - y) / len * kPointRadius * 2;
    for (const Box& b : line_boxes(sx, sy, tx, ty, 1)) taken.push_back(b);
}

struct Label {
    Placement at;
    std::string text;
    bool key = false;
    double px = 0, py = 0;  // the point it labels
};

// Where each point's name or letter goes.
struct Labelling {
    std::vector<Label> labels;
    std::vector<const Group*> keyed;  // the groups keyed by letter, in the points' order
    std::vector<Box> taken;           // the obstacles, and every label placed
    double overlap = 0;               // what the letters could not help covering
};

// Names first, each where it touches nothing; a point none fits is keyed by letter after. The
// points with the fewest free spots choose first: those on the right edge (their labels can only
// go left), then the most crowded.
Labelling label_points(const Layout& m, const std::vector<Group>& groups, std::vector<Box> taken, const std::vector<Box>& faint) {
    const bool all_keys = groups.size() > kMaxNamedPoints;
    const Box bounds{kLeft, kTop, kRight, kBottom};
    std::vector<std::pair<double, double>> centres;
    for (const Group& g : groups) centres.push_back({g.x, g.y});
    Labelling out;
    std::vector<std::size_t> order(groups.size());
    std::vector<int> crowd(groups.size(), 0);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        order[i] = i;
        for (const Group& o : groups) crowd[i] += std::hypot(o.x - groups[i].x, o.y - groups[i].y) < 60;
    }
    auto on_right_edge = [&](const Group& g) {
        const std::size_t lead = g.members.front();
        return m.off_scale[lead] > 0 || std::isinf(m.drawn[lead]->ai);
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const bool ea = on_right_edge(groups[a]), eb = on_right_edge(groups[b]);
        return ea != eb ? ea : crowd[a] > crowd[b];
    });
    for (std::size_t gi : order) {
        const Group& g = groups[gi];
        const std::string text = group_label(m, g);
        Placement at{};
        if (!all_keys)
            at = place_label(g.x, g.y, text_width(text), ring_offsets(kPointRadius, kLabelRings, on_right_edge(g)), taken, faint,
                             bounds, centres);
        if (all_keys || at.overlap > 0) {
            out.keyed.push_back(&g);
            continue;
        }
        take_label(taken, at, g.x, g.y);
        out.labels.push_back({at, text, false, g.x, g.y});
    }
    // Letters are small: they find room where names did not, or overlap least.
    std::sort(out.keyed.begin(), out.keyed.end());  // in the points' order: A before B
    for (const Group* g : out.keyed) {
        const std::string text = group_letters(*g);
        const Placement at = place_label(g->x, g->y, text_width(text) + 1, ring_offsets(kPointRadius, kLabelRings, on_right_edge(*g)),
                                         taken, faint, bounds, centres);
        take_label(taken, at, g->x, g->y);
        out.labels.push_back({at, text, true, g->x, g->y});
        out.overlap += at.overlap;
    }
    out.taken = std::move(taken);
    return out;
}

// The key table's rows for the lettered groups: each member's name, AI, FLOP/s and regime.
std::vector<KeyRow> key_rows(const Layout& m, const std::vector<const Group*>& keyed) {
    std::vector<KeyRow> rows;
    for (const Group* g : keyed) {
        const std::size_t lead = g->members.front();
        for (std::size_t i : g->members) {
            const Point* p = m.drawn[i];
            std::string row = fmt::format("{}: AI {} FLOP/B", p->label, ai_text(*p));
            if (m.off_scale[i]) row += m.off_scale[i] > 0 ? " (off the axis \u2192)" : " (off the axis \u2190)";
            row += fmt::format(", {}, {}", p->flops_shown ? si(p->flops_per_s, "FLOP/s", false) : "? FLOP/s",
                               regime_style(p->regime).label);
            // Not where either AI is withheld: "gemv_b1: AI 0.5 (same point as A)" would give A's away.
            if (i != lead && p->ai_shown && m.drawn[lead]->ai_shown) row += fmt::format(" (same point as {})", point_letter(lead));
            rows.push_back({i, row});
        }
    }
    std::sort(rows.begin(), rows.end(), [](const KeyRow& a, const KeyRow& b) { return a.point < b.point; });
    return rows;
}

}  // namespace

double point_x(const Svg& s, const Layout& m, std::size_t i) {
    const int side = m.off_scale[i];
    return side < 0 ? kLeft : side > 0 ? kRight : s.x_of(m.drawn[i]->ai);
}

std::vector<Box> point_boxes(const Svg& s, const Layout& m) {
    std::vector<Box> boxes;
    // A little wider than the marker: a triangle or a star reaches past the circle's radius.
    const double r = kPointRadius * 1.5;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const double x = point_x(s, m, i), y = s.y_of(m.drawn[i]->flops_per_s);
        boxes.push_back({x - r, y - r, x + r, y + r});
    }
    return boxes;
}

std::vector<KeyRow> draw_points(Svg& s, const Layout& m, std::vector<Box>& taken, const std::vector<Box>& faint) {
    const std::vector<Group> groups = group_points(s, m);
    // Labels keep off the drop lines only where that costs no point its name and puts no letter
    // on anything: greedy placement around the lines can take a neighbour's only spot (02.07's
    // three prefill kernels), and then the labels that ignore them win.
    Labelling l = label_points(m, groups, taken, faint);
    if (!faint.empty() && (!l.keyed.empty() || l.overlap > 0)) {
        Labelling ignoring = label_points(m, groups, taken, {});
        if (std::pair(ignoring.keyed.size(), ignoring.overlap) < std::pair(l.keyed.size(), l.overlap)) l = std::move(ignoring);
    }
    taken = std::move(l.taken);

    for (const auto& label : l.labels)
        if (label.at.far) draw_leader(s, label.px, label.py, label.at.box);
    draw_markers(s, m);
    // A white halo under each name and letter: where one crosses a faint drop line, the line
    // stops at its glyphs (as the x-y plots' labels cross their grid).
    for (const auto& label : l.labels)
        s.text(label.at.x, label.at.y, label.at.anchor, label.text, label.key ? "point-key" : "point-label",
               std::string(kHalo) + (label.key ? " fill=\"#222\" font-weight=\"bold\"" : " fill=\"#222\""));
    return key_rows(m, l.keyed);
}

// One column when any row is too long for half the page, else two, filled down then across.
double key_table_height(const std::vector<KeyRow>& rows) {
    if (rows.empty()) return 0;
    bool narrow = true;
    for (const auto& r : rows) narrow = narrow && text_width(r.text) + 34 <= kKeyColumnWidth;
    const std::size_t per_column = narrow ? (rows.size() + 1) / 2 : rows.size();
    return kKeyRowHeight * static_cast<double>(per_column + 1);
}

void draw_key_table(Svg& s, const Layout& m, const std::vector<KeyRow>& rows, double top) {
    if (rows.empty()) return;
    bool narrow = true;
    for (const auto& r : rows) narrow = narrow && text_width(r.text) + 34 <= kKeyColumnWidth;
    const std::size_t per_column = narrow ? (rows.size() + 1) / 2 : rows.size();
    s.put("<g class=\"key-table\">\n");
    s.text(kKeyLeft, top + 11, Anchor::start, "key to the lettered points:", "key-title", "fill=\"#444\"");
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const double x = kKeyLeft + (k < per_column ? 0 : kKeyColumnWidth);
        const double y = top + kKeyRowHeight * static_cast<double>(k % per_column + 1) + 11;
        const Point* p = m.drawn[rows[k].point];
        const auto st = regime_style(p->regime);
        s.text(x, y, Anchor::start, std::string(1, point_letter(rows[k].point)), "key-letter", "font-weight=\"bold\"");
        s.out() += marker(st.shape, x + 19, y - 4, 4, fmt::format("class=\"key-marker\" fill=\"{}\"", st.color)) + "\n";
        s.text(x + 30, y, Anchor::start, rows[k].text, "key-row");
    }
    s.put("</g>\n");
}

}  // namespace lab::plot::detail
