// The class page's pictures (see class_report.hpp): the devices roofline is a lab::Plot drawn by
// the same code as every lesson's plots; the score histogram is a small SVG of its own (a plot
// of points and lines cannot draw bars).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "class_report.hpp"

namespace lab::grader {

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A roofline as a line of three points: the slope from `lo`, the ridge, the flat roof to `hi`.
PlotSeries roofline_series(const std::string& name, double peak, double bandwidth, double lo, double hi) {
    const double ridge = peak / bandwidth;
    return {name, {lo, ridge, hi}, {lo * bandwidth, peak, peak}, true};
}

// "cpu: AMD EPYC (4 runs)", short enough for the plot's legend (the devices table under the plot
// names each device in full).
std::string legend_name(const std::string& device, std::size_t runs) {
    constexpr std::size_t kMaxChars = 26;  // what the legend beside the plot holds at 12 px
    const std::string count = fmt::format(" ({} run{})", runs, runs == 1 ? "" : "s");
    std::string name = device;
    if (name.size() + count.size() > kMaxChars) {
        name.resize(kMaxChars - count.size() - 3);
        while (!name.empty() && (static_cast<unsigned char>(name.back()) & 0xC0) == 0x80) name.pop_back();  // whole characters
        if (!name.empty() && static_cast<unsigned char>(name.back()) >= 0xC0) name.pop_back();
        name += "...";
    }
    return name + count;
}

}  // namespace

ClassDevice class_device(const std::string& folder, const RawRun& raw) {
    ClassDevice d{folder, std::string(to_string(raw.device_kind)) + ": " + raw.facts.name, 0, "", raw.ceilings.peak_bandwidth()};
    if (raw.ceilings.has_flops("fp32.simt")) {
        d.peak_flops = raw.ceilings.peak_flops("fp32.simt");
        d.peak_pipe = "fp32.simt";
    } else {
        for (const auto& [pipe, c] : raw.ceilings.flops_per_s)
            if (c.value > d.peak_flops) d.peak_flops = c.value, d.peak_pipe = pipe;
    }
    return d;
}

Plot class_devices_plot(const std::vector<ClassDevice>& devices) {
    Plot p{.name = "class_devices", .title = "The class's devices: each run's ridge, and each device's median roofline (dashed)",
           .x = {.label = "arithmetic intensity", .unit = "FLOP/B", .log = true},
           .y = {.label = "attainable", .unit = "FLOP/s", .log = true}};
    std::map<std::string, std::vector<const ClassDevice*>> by_device;
    double lo = INFINITY, hi = 0;
    for (const auto& d : devices) {
        if (!(d.peak_flops > 0) || !(d.bandwidth > 0) || !std::isfinite(d.peak_flops) || !std::isfinite(d.bandwidth)) continue;
        by_device[d.device].push_back(&d);
        const double ridge = d.peak_flops / d.bandwidth;
        lo = std::min(lo, ridge / 64), hi = std::max(hi, ridge * 64);
    }
    // Each device's runs as points at their ridges, and its median roofline as a dashed line in
    // their colour, without markers ("X roof" pairs with "X": xy_plot.cpp): a roof is no sample.
    // The most common devices first; past seven the palette would repeat, so the rest share one
    // series of points.
    std::vector<std::pair<std::string, std::vector<const ClassDevice*>>> order(by_device.begin(), by_device.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    PlotSeries others{.name = "other devices' runs (ridge)", .line = false};
    for (std::size_t i = 0; i < order.size(); ++i) {
        PlotSeries runs{.name = legend_name(order[i].first, order[i].second.size()), .line = false};
        std::vector<double> peaks, bandwidths;
        for (const ClassDevice* d : order[i].second) {
            peaks.push_back(d->peak_flops), bandwidths.push_back(d->bandwidth);
            PlotSeries& into = i < 7 ? runs : others;
            into.x.push_back(d->peak_flops / d->bandwidth), into.y.push_back(d->peak_flops);
        }
        if (i >= 7) continue;
        p.series.push_back(runs);
        p.series.push_back(roofline_series(runs.name + " roof", median(peaks), median(bandwidths), lo, hi));
    }
    if (!others.x.empty()) p.series.push_back(others);
    return p;
}

std::string score_histogram_svg(const BatchResult& r) {
    constexpr double W = 640, H = 260, left = 52, right = 16, top = 40, bottom = 46;
    const double pw = W - left - right, ph = H - top - bottom;
    std::array<int, 10> bins{};
    int graded = 0;
    for (const auto& e : r.entries) {
        if (!e.ok || !e.report.graded || !(e.report.max_score > 0)) continue;
        const double share = std::clamp(e.report.score / e.report.max_score, 0.0, 1.0);
        bins[static_cast<std::size_t>(std::min(9, static_cast<int>(std::floor(share * 10))))]++;
        ++graded;
    }
    const int top_count = std::max(1, *std::max_element(bins.begin(), bins.end()));
    std::string svg = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"histogram\" width=\"{0}\" height=\"{1}\" "
                                  "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
                                  "<title>Score distribution</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
                                  "<text x=\"{2}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Scores of {3} graded "
                                  "submission{4} (share of the maximum)</text>\n",
                                  W, H, left, graded, graded == 1 ? "" : "s");
    std::set<int> ticks{0, (top_count + 1) / 2, top_count};  // a set: a count of 1 has two ticks, not three
    for (int t : ticks) {
        const double y = top + ph * (1 - static_cast<double>(t) / top_count);
        svg += fmt::format("<g class=\"ytick\"><line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                           "<text x=\"{3}\" y=\"{1:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{4}</text></g>\n",
                           left, y, left + pw, left - 6, t);
    }
    const double bw = pw / 10;
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const double h = ph * bins[i] / top_count, x = left + bw * static_cast<double>(i);
        svg += fmt::format("<g class=\"bin\" data-bin=\"{0}\" data-count=\"{1}\"><rect class=\"bar\" x=\"{2:.1f}\" y=\"{3:.1f}\" "
                           "width=\"{4:.1f}\" height=\"{5:.1f}\" fill=\"#1f77b4\"><title>{6}-{7}%: {1}</title></rect>",
                           i, bins[i], x + 2, top + ph - h, bw - 4, h, 10 * i, 10 * i + 10);
        if (bins[i] > 0)
            svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", x + bw / 2, top + ph - h - 4, bins[i]);
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}%</text></g>\n", x + bw / 2, top + ph + 16,
                           i == 9 ? "90-100" : fmt::format("{}-{}", 10 * i, 10 * i + 10));
    }
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", left, top + ph, left + pw);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">score, as a share of the maximum</text>\n",
                       left + pw / 2, H - 8);
    if (graded == 0)
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#a4262c\">no submission was graded</text>\n",
                           left + pw / 2, top + ph / 2);
    return svg + "</svg>\n";
}

}  // namespace lab::grader
