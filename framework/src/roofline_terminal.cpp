// The roofline as a plain-text sketch for the terminal (render_terminal in roofline_plot.hpp),
// drawn from the shared Layout: a character grid with the roofs and a letter per point, axis
// labels, then a key of the ceilings and a table of the points. ASCII only, whatever the labels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "roofline_layout.hpp"
#include "roofline_plot.hpp"
#include "roofline_text.hpp"

namespace lab::plot {
namespace detail {
namespace {

// The plot area as rows of characters, with the layout's decades mapped onto cells. Cells are
// indexed through doubles clamped first: a far-off value must not overflow an int.
class Grid {
public:
    Grid(const Layout& m, int width, int height)
        : m_(m), w_(width), h_(height),
          rows_(static_cast<std::size_t>(height), std::string(static_cast<std::size_t>(width), ' ')) {}

    int width() const { return w_; }
    int height() const { return h_; }
    int col(double log_x) const {
        const double c = std::floor((log_x - m_.xlo) / (m_.xhi - m_.xlo) * w_);
        return static_cast<int>(std::clamp(c, 0.0, w_ - 1.0));
    }
    int row(double log_y) const {
        const double r = h_ - 1 - std::floor((log_y - m_.ylo) / (m_.yhi - m_.ylo) * h_);
        return static_cast<int>(std::clamp(r, 0.0, h_ - 1.0));
    }
    char& cell(int r, int c) { return rows_[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]; }
    const std::string& line(int r) const { return rows_[static_cast<std::size_t>(r)]; }

private:
    const Layout& m_;
    int w_, h_;
    std::vector<std::string> rows_;
};

// The letter of the i-th drawn point, as the SVG's key table writes it too.
char letter(std::size_t i) { return point_letter(i); }

// The ceiling whose ridge is marked, if any.
const Ceiling* ridge_ceiling(const Layout& m) {
    return m.ridge_index >= 0 ? &m.ceilings[static_cast<std::size_t>(m.ridge_index)] : nullptr;
}

// The slope as '/', each ceiling as '-' (the ridge's own as '='), the ridge as '|' below it.
void draw_roofs(Grid& g, const Layout& m) {
    const int W = g.width(), H = g.height();
    const double bw_log = m.bandwidth > 0 ? std::log10(m.bandwidth) : 0;
    if (m.bandwidth > 0 && m.top_index >= 0) {
        const double end = std::log10(m.ceilings[static_cast<std::size_t>(m.top_index)].ridge);
        const double step = (m.xhi - m.xlo) / (8.0 * W);
        for (double lx = m.xlo; lx <= end; lx += step) {
            if (lx + bw_log < m.ylo) continue;
            g.cell(g.row(lx + bw_log), g.col(lx)) = '/';
        }
    }
    auto draw_ceiling = [&](const Ceiling& c, char ch) {
        const int r = g.row(std::log10(c.flops));
        for (int x = c.ridge > 0 ? g.col(std::log10(c.ridge)) : 0; x < W; ++x) g.cell(r, x) = ch;
    };
    for (std::size_t i = 0; i < m.ceilings.size(); ++i)
        if (static_cast<int>(i) != m.ridge_index) draw_ceiling(m.ceilings[i], '-');
    if (const Ceiling* ridge = ridge_ceiling(m)) {
        draw_ceiling(*ridge, '=');
        if (ridge->ridge > 0) {
            const int c = g.col(std::log10(ridge->ridge));
            for (int r = g.row(std::log10(ridge->flops)) + 1; r < H; ++r)
                if (g.cell(r, c) == ' ') g.cell(r, c) = '|';
        }
    }
}

// A dotted drop line (':') from each point up to its roof, as the SVG draws: how far below its
// roof a kernel runs, read at a glance. Only in empty cells, so roofs, ridges and letters win;
// drawn before the letters. Whether any was drawn, for the key.
bool draw_drops(Grid& g, const Layout& m) {
    bool any = false;
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const auto drop = drop_roof(m, i);
        if (!drop || !(drop->roof > 0) || !(m.drawn[i]->flops_per_s > 0)) continue;
        const int c = g.col(std::log10(m.drawn[i]->ai));
        for (int r = g.row(std::log10(drop->roof)) + 1; r < g.row(std::log10(m.drawn[i]->flops_per_s)); ++r)
            if (g.cell(r, c) == ' ') g.cell(r, c) = ':', any = true;
    }
    return any;
}

// Each point's letter; off the x axis, the letter on the edge with an arrow outside it ("G>",
// "<H").
void draw_points(Grid& g, const Layout& m) {
    const int W = g.width();
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const int r = g.row(std::log10(p->flops_per_s));
        if (m.off_scale[i] > 0 && W >= 2) {
            g.cell(r, W - 2) = letter(i);
            g.cell(r, W - 1) = '>';
        } else if (m.off_scale[i] < 0 && W >= 2) {
            g.cell(r, 0) = '<';
            g.cell(r, 1) = letter(i);
        } else {
            g.cell(r, std::isinf(p->ai) ? W - 1 : g.col(std::log10(p->ai))) = letter(i);
        }
    }
}

// y labels, one per grid row or empty, on decades at least two rows apart so that they never run
// together.
std::vector<std::string> y_labels(const Grid& g, const Layout& m) {
    std::vector<std::string> labels(static_cast<std::size_t>(g.height()));
    const int step = decade_step(m.ylo, m.yhi, std::max(1, g.height() / 2));
    int last = -10;
    for (int e = m.yhi; e >= m.ylo; --e) {
        if (!on_step(e, step)) continue;
        const int ri = g.row(e);
        if (ri - last < 2) continue;
        labels[static_cast<std::size_t>(ri)] = si(std::pow(10.0, e), "FLOP/s", true);
        last = ri;
    }
    return labels;
}

// The x labels under the axis, centred on their decades, skipping any that would overlap.
std::string x_labels(const Layout& m, int W, std::size_t margin) {
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
    return xl;
}

// Collects the sketch line by line.
struct Text {
    std::string out;
    void line(std::string_view l) {
        out.append(l);
        out += '\n';
    }
};

// The title, the grid with its y labels, the axis line, the x labels and the axes' meaning.
void write_plot(Text& t, const RooflineChart& chart, const Layout& m, const Grid& g) {
    const std::vector<std::string> ylabels = y_labels(g, m);
    std::size_t margin = 0;
    for (const auto& l : ylabels) margin = std::max(margin, code_points(l));
    margin += 1;

    t.line(ascii_only(chart.title.empty() ? std::string("Roofline") : chart.title));
    for (int r = 0; r < g.height(); ++r) {
        const auto& l = ylabels[static_cast<std::size_t>(r)];
        t.line(std::string(margin - 1 - code_points(l), ' ') + l + " |" + g.line(r));
    }
    t.line(std::string(margin, ' ') + "+" + std::string(static_cast<std::size_t>(g.width()), '-'));
    t.line(x_labels(m, g.width(), margin));
    t.line(std::string(margin + 1, ' ') + "x: arithmetic intensity (FLOP/B), y: performance (FLOP/s), both log scale");
    t.line("");
}

// The key to the roofs: each ceiling, the bandwidth and the ridge, with their values.
void write_roof_key(Text& t, const RooflineChart& chart, const Layout& m, bool drops) {
    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const auto& c = m.ceilings[i];
        const bool main = static_cast<int>(i) == m.ridge_index;
        t.line(fmt::format("  {} {} {}{}", main ? '=' : '-', ascii_only(c.name), si(c.flops, "FLOP/s", true),
                           c.note.empty() ? "" : " (" + ascii_only(c.note) + ")"));
    }
    if (m.bandwidth > 0)
        t.line(fmt::format("  / {}{}{}", ascii_only(chart.bandwidth_label), chart.bandwidth_label.empty() ? "" : " ",
                           si(m.bandwidth, "B/s", true)));
    const Ceiling* ridge = ridge_ceiling(m);
    if (ridge && ridge->ridge > 0)
        t.line(fmt::format("  | ridge {} FLOP/B ({})", chart.show_ridge_value ? ai_number(ridge->ridge) : "?",
                           ascii_only(ridge->name)));
    if (m.fp64_ridge_index >= 0) {
        const Ceiling& r64 = m.ceilings[static_cast<std::size_t>(m.fp64_ridge_index)];
        t.line(fmt::format("    ridge {} FLOP/B ({})", ai_number(r64.ridge), ascii_only(r64.name)));  // no question asks it
    }
    if (drops) t.line("  : from a point up to its own roof: how far below it the kernel ran");
}

// The points as a table under their letters, columns padded to the widest entry.
void write_point_table(Text& t, const Layout& m) {
    if (m.drawn.empty()) return;
    struct Row {
        std::string label, ai, flops, regime;
    };
    std::vector<Row> rows;
    std::size_t w[3] = {0, 0, 0};
    for (std::size_t i = 0; i < m.drawn.size(); ++i) {
        const Point* p = m.drawn[i];
        const int side = m.off_scale[i];
        Row r{ascii_only(p->label),
              std::isinf(p->ai) && p->ai_shown ? std::string("AI -> inf")
                                : fmt::format("AI {} FLOP/B{}", p->ai_shown ? ai_number(p->ai) : "?",
                                              side > 0 ? " (off scale >)" : side < 0 ? " (off scale <)" : ""),
              p->flops_shown ? si(p->flops_per_s, "FLOP/s", true) : "? FLOP/s",
              p->regime.empty() ? std::string("(regime not shown)") : ascii_only(p->regime)};
        w[0] = std::max(w[0], std::min<std::size_t>(r.label.size(), 32));
        w[1] = std::max(w[1], r.ai.size());
        w[2] = std::max(w[2], r.flops.size());
        rows.push_back(std::move(r));
    }
    t.line("");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        t.line(fmt::format("  {}  {:<{}}  {:<{}}  {:>{}}  {}", letter(i), r.label, w[0], r.ai, w[1], r.flops, w[2],
                           r.regime));
    }
}

void write_not_drawn(Text& t, const Layout& m) {
    if (m.not_drawn.empty()) return;
    std::string note = "not drawn:";
    for (std::size_t i = 0; i < m.not_drawn.size(); ++i) note += (i ? ", " : " ") + ascii_only(m.not_drawn[i]);
    t.line("");
    t.line(note);
}

}  // namespace
}  // namespace detail

std::string render_terminal(const RooflineChart& chart, int width, int height) {
    using namespace detail;
    const Layout m = lay_out(chart);
    Grid g(m, std::clamp(width, 20, 400), std::clamp(height, 6, 200));
    draw_roofs(g, m);
    const bool drops = draw_drops(g, m);
    draw_points(g, m);

    Text t;
    write_plot(t, chart, m, g);
    write_roof_key(t, chart, m, drops);
    write_point_table(t, m);
    write_not_drawn(t, m);
    return std::move(t.out);
}

}  // namespace lab::plot
