// The shared reading of a roofline chart (see roofline_layout.hpp). Whatever cannot be placed
// on log axes is listed in not_drawn rather than silently dropped.
#include "roofline_layout.hpp"

#include <lab/roofline.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline_text.hpp"

namespace lab::plot::detail {
namespace {

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

// Clamped so that absurd inputs (1e-300 FLOP/B) give a wide but finite axis.
int decade_floor(double v) { return static_cast<int>(std::clamp(std::floor(v), -400.0, 400.0)); }
int decade_ceil(double v) { return static_cast<int>(std::clamp(std::ceil(v), -400.0, 400.0)); }

// The bandwidth and the compute ceilings that can be drawn, each with its ridge; which one the
// ridge marker uses (ridge_pipe, else the first) and which is highest.
void place_ceilings(const RooflineChart& chart, Layout& m) {
    if (positive_finite(chart.bandwidth_bytes_per_s)) m.bandwidth = chart.bandwidth_bytes_per_s;
    else m.not_drawn.push_back(fmt::format("bandwidth ceiling ({} B/s)", plain(chart.bandwidth_bytes_per_s)));

    for (const auto& c : chart.compute) {
        if (!positive_finite(c.flops_per_s)) {
            m.not_drawn.push_back(fmt::format("ceiling {} ({} FLOP/s)", c.name, plain(c.flops_per_s)));
            continue;
        }
        const double ridge = m.bandwidth > 0 ? c.flops_per_s / m.bandwidth : 0;
        m.ceilings.push_back({c.name, c.flops_per_s, positive_finite(ridge) ? ridge : 0, c.note});
    }
    for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
        const int ii = static_cast<int>(i);
        if (m.ridge_index < 0 && m.ceilings[i].name == chart.ridge_pipe) m.ridge_index = ii;
        if (m.top_index < 0 || m.ceilings[i].flops > m.ceilings[static_cast<std::size_t>(m.top_index)].flops)
            m.top_index = ii;
    }
    if (m.ridge_index < 0 && !m.ceilings.empty()) m.ridge_index = 0;
    // fp64 has its own ridge, further left: kernels between the two are compute bound in fp64
    // only. Marked for the fp64 counterpart of the ridge's pipe (fp64.simt beside fp32.simt),
    // else for the first fp64 ceiling.
    if (m.ridge_index >= 0) {
        const std::string& main = m.ceilings[static_cast<std::size_t>(m.ridge_index)].name;
        const std::string twin = main.rfind("fp32", 0) == 0 ? "fp64" + main.substr(4) : std::string();
        for (int pass = 0; pass < 2 && m.fp64_ridge_index < 0; ++pass)
            for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
                const auto& c = m.ceilings[i];
                const bool fits = pass == 0 ? c.name == twin : c.name.rfind("fp64", 0) == 0;
                if (fits && static_cast<int>(i) != m.ridge_index && c.ridge > 0 && m.fp64_ridge_index < 0)
                    m.fp64_ridge_index = static_cast<int>(i);
            }
    }
}

// The points a log-log plot can hold; each other one is noted with the reason.
void sift_points(const RooflineChart& chart, Layout& m) {
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
}

// x: the kernels that matter, a decade of margin, never narrower than 1e-2..1e3. Starting from
// the ridges (or, without any, the median point), the span takes in every point within
// kOutlierGap decades of it, again and again; a point further out than that from all of them
// (the FMA-peak kernel, whose AI of 1e8 would squeeze every other kernel into a corner) is off
// scale: drawn at the edge of the axis and marked with its AI.
void fit_x_axis(Layout& m) {
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
}

// y: the highest ceiling with room for its label above, the lowest point with margin below.
void fit_y_axis(Layout& m) {
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
}

}  // namespace

Layout lay_out(const RooflineChart& chart) {
    Layout m;
    place_ceilings(chart, m);
    sift_points(chart, m);
    fit_x_axis(m);
    fit_y_axis(m);
    return m;
}

int decade_step(int lo, int hi, int max_labels) {
    return std::max(1, (hi - lo + max_labels - 1) / max_labels);
}

bool on_step(int e, int step) { return ((e % step) + step) % step == 0; }

// Colours from Okabe-Ito, chosen so that the two regimes most often side by side (compute and
// memory bound) differ in hue and in lightness; shapes differ for every regime regardless.
RegimeStyle regime_style(const std::string& regime) {
    if (regime.empty()) return {"regime withheld", "withheld", kNeutralGrey, Shape::star, 7};
    // "undecided: compute_bound or latency_bound": the noise left the verdict open.
    if (regime.rfind("undecided", 0) == 0) return {"undecided", "undecided", "#000000", Shape::cross, 4};
    if (const auto r = roofline::parse_regime(regime)) {
        switch (*r) {
            case roofline::Regime::compute_bound: return {"compute_bound", "compute bound", "#D55E00", Shape::circle, 0};
            case roofline::Regime::memory_bound: return {"memory_bound", "memory bound", "#0072B2", Shape::square, 1};
            case roofline::Regime::overhead_bound: return {"overhead_bound", "overhead bound", "#CC79A7", Shape::diamond, 2};
            case roofline::Regime::latency_bound: return {"latency_bound", "latency bound", "#E69F00", Shape::triangle, 3};
            default: break;
        }
    }
    std::string words = regime;
    std::replace(words.begin(), words.end(), '_', ' ');
    return {regime, words, "#009E73", Shape::triangle_down, 5};
}

std::optional<Drop> drop_roof(const Layout& m, std::size_t i) {
    const Point& p = *m.drawn[i];
    if (!p.ai_shown || !p.roof_fraction_shown || m.off_scale[i] != 0 || std::isinf(p.ai)) return std::nullopt;
    const Ceiling* c = nullptr;
    if (p.pipe.empty()) {
        if (m.ridge_index >= 0) c = &m.ceilings[static_cast<std::size_t>(m.ridge_index)];
    } else {
        for (const auto& ceiling : m.ceilings)
            if (ceiling.name == p.pipe) c = &ceiling;
    }
    if (!c) return std::nullopt;
    return Drop{c, m.bandwidth > 0 ? roofline::roof(p.ai, c->flops, m.bandwidth) : c->flops};
}

char point_letter(std::size_t i) {
    if (i < 26) return static_cast<char>('A' + i);
    if (i < 52) return static_cast<char>('a' + (i - 26));
    return '*';
}

}  // namespace lab::plot::detail
