// Readability of the SVG plots, checked on the geometry the SVG states (element positions and
// the font's width estimate), never on pixels: no label lies on another label, on a point or
// across a roof line (nor across a drop line where the plot has room: where one must cross it,
// its halo breaks the line); each drop line rises from its point to the roof above it;
// regimes and series differ by marker shape as well as colour; reference
// lines take their series' colour; the y axis title clears the tick labels; nothing leaves the
// page; and every recorded lesson's plots keep these rules, crowded ones included.
#include <catch2/catch.hpp>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lesson_host.hpp"
#include "plot_labels.hpp"
#include "roofline_plot.hpp"
#include "run_plots.hpp"
#include "run_record.hpp"
#include "test_support.hpp"
#include "xy_plot.hpp"

namespace fs = std::filesystem;
using lab::plot::detail::Anchor;
using lab::plot::detail::Box;

namespace {

// The parsed SVG and the few things these tests read off its elements.
class Svg {
public:
    explicit Svg(const std::string& text)
        : doc_(xmlReadMemory(text.data(), static_cast<int>(text.size()), "plot.svg", nullptr,
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
               &xmlFreeDoc) {}
    bool ok() const { return doc_ != nullptr; }

    // Elements whose class attribute holds `cls` as one of its words ("" for any), of any name
    // when `element` is "".
    std::vector<xmlNode*> find(const std::string& element, const std::string& cls) const {
        std::vector<xmlNode*> out;
        walk(xmlDocGetRootElement(doc_.get()), element, cls, out);
        return out;
    }
    static std::string attr(xmlNode* n, const char* name) {
        xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
        std::string s = v ? reinterpret_cast<const char*>(v) : "";
        xmlFree(v);
        return s;
    }
    static double num(xmlNode* n, const char* name) { return std::stod(attr(n, name)); }
    static std::string content(xmlNode* n) {
        xmlChar* v = xmlNodeGetContent(n);
        std::string s = v ? reinterpret_cast<const char*>(v) : "";
        xmlFree(v);
        return s;
    }
    double width() const { return num(xmlDocGetRootElement(doc_.get()), "width"); }
    double height() const { return num(xmlDocGetRootElement(doc_.get()), "height"); }

private:
    static void walk(xmlNode* n, const std::string& element, const std::string& cls, std::vector<xmlNode*>& out) {
        for (; n; n = n->next) {
            if (n->type != XML_ELEMENT_NODE) continue;
            bool match = element.empty() || element == reinterpret_cast<const char*>(n->name);
            if (match && !cls.empty()) {
                std::istringstream words(attr(n, "class"));
                bool has = false;
                for (std::string w; words >> w;) has = has || w == cls;
                match = has;
            }
            if (match) out.push_back(n);
            walk(n->children, element, cls, out);
        }
    }
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc_;
};

// The box a <text> element takes, by the width estimate the renderers place with.
Box text_box(xmlNode* t) {
    const std::string a = Svg::attr(t, "text-anchor");
    const Anchor anchor = a == "end" ? Anchor::end : a == "middle" ? Anchor::middle : Anchor::start;
    const std::string size = Svg::attr(t, "font-size");
    const double fs = size.empty() ? lab::plot::detail::kFontSize : std::stod(size);
    return lab::plot::detail::text_box(Svg::num(t, "x"), Svg::num(t, "y"), anchor,
                                       lab::plot::detail::text_width(Svg::content(t), fs), fs);
}

// Boxes shrunk a little: labels that merely touch (a rounding apart) do not count as overlapping.
bool overlaps(const Box& a, const Box& b) {
    constexpr double e = 0.5;
    return std::min(a.x1, b.x1) - std::max(a.x0, b.x0) > e && std::min(a.y1, b.y1) - std::max(a.y0, b.y0) > e;
}

std::string describe(const Box& b) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "[%.1f,%.1f .. %.1f,%.1f]", b.x0, b.y0, b.x1, b.y1);
    return buf;
}

// Whether the straight line from (x0, y0) to (x1, y1) passes through the inside of `b`.
bool crosses(double x0, double y0, double x1, double y1, const Box& b) {
    const double len = std::hypot(x1 - x0, y1 - y0);
    const int steps = std::max(1, static_cast<int>(len));
    for (int i = 0; i <= steps; ++i) {
        const double t = static_cast<double>(i) / steps, x = x0 + (x1 - x0) * t, y = y0 + (y1 - y0) * t;
        if (x > b.x0 + 0.5 && x < b.x1 - 0.5 && y > b.y0 + 0.5 && y < b.y1 - 0.5) return true;
    }
    return false;
}

struct Labelled {
    std::string what;
    Box box;
};

// Every label of a roofline, the legend's box and the markers, with what each is.
std::vector<Labelled> roofline_labels(const Svg& d) {
    std::vector<Labelled> out;
    for (const char* cls : {"point-label", "point-key", "ceiling-label", "ridge-label", "fp64-ridge-label"})
        for (xmlNode* t : d.find("text", cls)) out.push_back({std::string(cls) + " '" + Svg::content(t) + "'", text_box(t)});
    for (xmlNode* g : d.find("g", "legend"))
        for (xmlNode* r : d.find("rect", ""))
            if (r->parent == g)
                out.push_back({"legend", {Svg::num(r, "x"), Svg::num(r, "y"), Svg::num(r, "x") + Svg::num(r, "width"),
                                          Svg::num(r, "y") + Svg::num(r, "height")}});
    return out;
}

// The centre of a point's marker: a circle's cx/cy, a path's data-x/data-y.
std::pair<double, double> marker_centre(xmlNode* n) {
    if (!Svg::attr(n, "cx").empty()) return {Svg::num(n, "cx"), Svg::num(n, "cy")};
    return {Svg::num(n, "data-x"), Svg::num(n, "data-y")};
}

// Every unrotated text inside the page's width.
void check_texts_on_page(const Svg& d) {
    for (xmlNode* t : d.find("text", "")) {
        if (!Svg::attr(t, "transform").empty()) continue;
        const Box b = text_box(t);
        INFO(Svg::content(t) << " " << describe(b));
        CHECK(b.x0 >= 0);
        CHECK(b.x1 <= d.width());
    }
}

// Each drop line rises from its point's centre, in its colour, to the roof above it: its pipe's
// ceiling or the bandwidth slope (extended), whichever is lower there, within a pixel. None
// rises from a point whose AI is withheld.
void check_drop_lines(const Svg& d) {
    std::map<std::string, xmlNode*> points;
    for (xmlNode* p : d.find("", "point")) points[Svg::attr(p, "data-label")] = p;
    const auto slope = d.find("line", "bandwidth");
    for (xmlNode* l : d.find("line", "drop-line")) {
        const std::string label = Svg::attr(l, "data-label");
        INFO("the drop line of " << label << " against " << Svg::attr(l, "data-pipe"));
        REQUIRE(points.count(label) == 1);
        xmlNode* p = points[label];
        CHECK(Svg::attr(p, "data-ai") != "?");
        CHECK(Svg::attr(l, "stroke") == Svg::attr(p, "fill"));
        CHECK_FALSE(Svg::attr(l, "stroke-dasharray").empty());
        const auto [x, y] = marker_centre(p);
        CHECK(std::fabs(Svg::num(l, "x1") - x) <= 0.1);
        CHECK(std::fabs(Svg::num(l, "x2") - x) <= 0.1);
        CHECK(std::fabs(Svg::num(l, "y1") - y) <= 0.1);
        std::optional<double> roof;
        for (xmlNode* c : d.find("line", "ceiling"))
            if (Svg::attr(c, "data-name") == Svg::attr(l, "data-pipe")) roof = Svg::num(c, "y1");
        REQUIRE(roof);
        if (!slope.empty()) {
            const double x1 = Svg::num(slope[0], "x1"), y1 = Svg::num(slope[0], "y1");
            const double x2 = Svg::num(slope[0], "x2"), y2 = Svg::num(slope[0], "y2");
            roof = std::max(*roof, y1 + (x - x1) * (y2 - y1) / (x2 - x1));  // the lower roof: the larger y
        }
        CHECK(std::fabs(Svg::num(l, "y2") - *roof) <= 1);
        CHECK(Svg::num(l, "y2") < y);
    }
}

// Whether a point's label crosses any drop line.
bool crosses_a_drop_line(const Svg& d, const Box& label) {
    for (xmlNode* line : d.find("line", "drop-line"))
        if (crosses(Svg::num(line, "x1"), Svg::num(line, "y1"), Svg::num(line, "x2"), Svg::num(line, "y2"), label)) return true;
    return false;
}

// The checks every roofline must pass: labels clear of each other, of the markers and of the
// roof lines, and inside the page; each drop line on its roof, and every point's label on a
// white halo, so that a drop line it had to cross stops at its glyphs.
void check_roofline_readable(const std::string& svg) {
    const Svg d(svg);
    REQUIRE(d.ok());
    const auto labels = roofline_labels(d);
    for (std::size_t i = 0; i < labels.size(); ++i)
        for (std::size_t j = i + 1; j < labels.size(); ++j) {
            INFO(labels[i].what << " " << describe(labels[i].box) << " and " << labels[j].what << " " << describe(labels[j].box));
            CHECK_FALSE(overlaps(labels[i].box, labels[j].box));
        }
    // No label over a marker (the markers are 5 px around their centre).
    for (xmlNode* p : d.find("", "point")) {
        const auto [x, y] = marker_centre(p);
        const Box marker{x - 4, y - 4, x + 4, y + 4};
        for (const auto& l : labels) {
            if (l.what == "legend") continue;
            INFO(l.what << " over the point " << Svg::attr(p, "data-label"));
            CHECK_FALSE(overlaps(l.box, marker));
        }
    }
    // No point label across a roof: the ceilings, the slope, the ridges.
    std::vector<xmlNode*> lines;
    for (const char* cls : {"ceiling", "bandwidth", "ridge", "fp64-ridge"})
        for (xmlNode* l : d.find("line", cls)) lines.push_back(l);
    for (const auto& l : labels) {
        if (l.what.rfind("point-", 0) != 0) continue;
        for (xmlNode* line : lines) {
            INFO(l.what << " " << describe(l.box) << " across the line " << Svg::attr(line, "class") << " " << Svg::attr(line, "data-name"));
            CHECK_FALSE(crosses(Svg::num(line, "x1"), Svg::num(line, "y1"), Svg::num(line, "x2"), Svg::num(line, "y2"), l.box));
        }
    }
    for (const char* cls : {"point-label", "point-key"})
        for (xmlNode* t : d.find("text", cls)) {
            INFO(cls << " '" << Svg::content(t) << "'");
            CHECK(Svg::attr(t, "stroke") == "white");
            CHECK(Svg::attr(t, "paint-order") == "stroke");
        }
    check_drop_lines(d);
    check_texts_on_page(d);
}

// Points crowded like 02.02's decoder kernels on a CPU: GEMMs a few percent apart in AI and
// FLOP/s, norms at nearly the same spot, and the FMA-peak kernel off the right edge.
lab::plot::RooflineChart crowded_chart() {
    lab::plot::RooflineChart c;
    c.title = "crowded";
    c.compute = {{"fp32.simt", 181e9}, {"fp64.simt", 90.5e9}};
    c.bandwidth_bytes_per_s = 19.5e9;
    c.bandwidth_label = "DRAM (best bandwidth kernel)";
    c.ridge_pipe = "fp32.simt";
    c.points = {{"qkv", 0.5, 9.1e9, "memory_bound"},          {"attn_out", 0.5, 9.4e9, "memory_bound"},
                {"mlp_gate", 0.52, 9.8e9, "memory_bound"},    {"mlp_up", 0.52, 9.9e9, "memory_bound"},
                {"mlp_down", 0.51, 9.6e9, "memory_bound"},    {"lm_head", 0.49, 8.9e9, "memory_bound"},
                {"attn_norm", 0.25, 2.1e9, "memory_bound"},   {"final_norm", 0.25, 2.1e9, "memory_bound"},
                {"mlp_norm", 0.25, 2.05e9, "memory_bound"},   {"rope", 0.3, 1.2e9, "latency_bound"},
                {"fma_peak_fp32", 9.6e7, 170e9, "compute_bound"}, {"sgemm", 9.2, 160e9, "compute_bound"},
                {"fp64_k8", 4.4, 70e9, "compute_bound"},      {"fp64_k16", 4.7, 72e9, "undecided: compute_bound or memory_bound"}};
    return c;
}

}  // namespace

TEST_CASE("a crowded roofline keeps every label clear of the others, the points and the roofs", "[plot]") {
    const std::string svg = lab::plot::render_svg(crowded_chart());
    check_roofline_readable(svg);
    // Each point is named beside it or keyed by a letter that the key table explains.
    const Svg d(svg);
    std::string labels;
    for (xmlNode* t : d.find("text", "point-label")) labels += Svg::content(t) + "\n";
    std::string keys;
    for (xmlNode* t : d.find("text", "key-row")) keys += Svg::content(t) + "\n";
    for (const auto& p : crowded_chart().points) {
        INFO(p.label);
        CHECK((labels.find(p.label) != std::string::npos || keys.find(p.label + ":") != std::string::npos));
    }
}

TEST_CASE("a point below its roof has a drop line up to it, under the markers and labels; none on the roof or with AI withheld", "[plot]") {
    auto c = crowded_chart();
    c.points = {{"slow_stream", 0.5, 2e9, "memory_bound"},             // under the slope
                {"slow_gemm", 50, 20e9, "latency_bound"},              // under fp32.simt
                {"dgemm", 20, 30e9, "compute_bound", true, true, "fp64.simt"},  // under its own pipe's ceiling
                {"on_roof", 1, 19.3e9, "memory_bound"},                // 99% of its roof
                {"secret", 2, 5e9, "memory_bound", false, true},       // AI withheld
                {"peak", std::numeric_limits<double>::infinity(), 100e9, "compute_bound"},
                {"int8_kernel", 30, 10e9, "compute_bound", true, true, "int8.tensor"}};  // no such ceiling
    const std::string svg = lab::plot::render_svg(c);
    check_roofline_readable(svg);
    const Svg d(svg);
    std::set<std::string> dropped;
    for (xmlNode* l : d.find("line", "drop-line")) dropped.insert(Svg::attr(l, "data-label"));
    CHECK(dropped == std::set<std::string>{"slow_stream", "slow_gemm", "dgemm"});
    for (xmlNode* l : d.find("line", "drop-line"))
        CHECK(Svg::attr(l, "data-pipe") == (Svg::attr(l, "data-label") == "dgemm" ? "fp64.simt" : "fp32.simt"));
    // With room around the points, no label crosses a drop line.
    for (const auto& l : roofline_labels(d)) {
        INFO(l.what << " " << describe(l.box));
        CHECK_FALSE(crosses_a_drop_line(d, l.box));
    }
    // Drawn before (under) every marker and label.
    const auto first_drop = svg.find("class=\"drop-line\"");
    REQUIRE(first_drop != std::string::npos);
    for (const char* later : {"class=\"point\"", "class=\"point-label\"", "class=\"ceiling-label\""}) {
        INFO(later);
        CHECK(svg.find(later) > first_drop);
    }
}

TEST_CASE("points on one spot share a label, or the key says which point they coincide with", "[plot]") {
    auto chart = crowded_chart();
    const Svg d(lab::plot::render_svg(chart));
    REQUIRE(d.ok());
    std::string all;
    for (const char* cls : {"point-label", "key-row"})
        for (xmlNode* t : d.find("text", cls)) all += Svg::content(t) + "\n";
    // attn_norm is drawn first (G), final_norm on the same spot (H).
    const bool together = all.find("attn_norm, final_norm") != std::string::npos;
    const bool keyed = all.find("final_norm: ") != std::string::npos && all.find("(same point as G)") != std::string::npos;
    CHECK((together || keyed));
    // A point whose AI is withheld is not said to be the same point as one whose AI is shown:
    // 02.06's key read "gemv_b1: AI 0.5 FLOP/B ... (same point as A)", A being gemm_b1, AI withheld.
    for (auto& p : chart.points)
        if (p.label == "attn_norm") p.ai_shown = false;
    const Svg withheld(lab::plot::render_svg(chart));
    REQUIRE(withheld.ok());
    for (xmlNode* t : withheld.find("text", "key-row")) {
        const std::string row = Svg::content(t);
        if (row.find("attn_norm") != std::string::npos || row.find("final_norm") != std::string::npos)
            CHECK_THAT(row, !Catch::Contains("same point as"));
    }
}

TEST_CASE("a roofline with more points than can be named keys them by letter, with a table under the plot", "[plot]") {
    auto chart = crowded_chart();
    for (int i = 0; i < 30; ++i)
        chart.points.push_back({"k" + std::to_string(i), std::pow(10.0, (i % 9) / 3.0 - 1), 1e9 + i * 3e9, "memory_bound"});
    const std::string svg = lab::plot::render_svg(chart);
    check_roofline_readable(svg);
    const Svg d(svg);
    CHECK(d.find("text", "point-label").empty());
    CHECK(d.find("text", "key-row").size() == chart.points.size());
    CHECK(d.find("text", "point-key").size() >= 20);
    // The table lies under the plot, inside the page, which grew to hold it.
    CHECK(d.height() > 520);
    for (xmlNode* t : d.find("text", "key-row")) {
        CHECK(Svg::num(t, "y") > 442);
        CHECK(Svg::num(t, "y") < d.height());
    }
}

TEST_CASE("each regime has its own marker shape and an Okabe-Ito colour; the legend names them in words", "[plot]") {
    lab::plot::RooflineChart c = crowded_chart();
    c.points = {{"a", 1, 1e9, "compute_bound"}, {"b", 2, 2e9, "memory_bound"}, {"c", 4, 4e9, "latency_bound"},
                {"d", 8, 8e9, "overhead_bound"}, {"e", 0.5, 5e8, "undecided: compute_bound or latency_bound"}, {"f", 0.2, 3e8, ""}};
    const Svg d(lab::plot::render_svg(c));
    REQUIRE(d.ok());
    std::set<std::string> shapes, colours;
    for (xmlNode* p : d.find("", "point")) {
        shapes.insert(Svg::attr(p, "data-shape"));
        colours.insert(Svg::attr(p, "fill"));
    }
    CHECK(shapes.size() == c.points.size());
    CHECK(colours.size() == c.points.size());
    const std::set<std::string> okabe_ito = {"#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#8c8c8c"};
    for (const auto& col : colours) CHECK(okabe_ito.count(col) == 1);
    const auto titles = d.find("text", "legend-title");
    REQUIRE(titles.size() == 1);
    CHECK(Svg::content(titles[0]) == "measured regime");
    std::set<std::string> legend;
    for (xmlNode* t : d.find("text", "legend-label")) legend.insert(Svg::content(t));
    for (const char* words : {"compute bound", "memory bound", "latency bound", "overhead bound", "undecided", "withheld"}) {
        INFO(words);
        CHECK(legend.count(words) == 1);
    }
    // The legend's markers are the points' shapes.
    std::set<std::string> legend_shapes;
    for (xmlNode* m : d.find("", "legend-marker")) legend_shapes.insert(Svg::attr(m, "data-shape"));
    CHECK(legend_shapes == shapes);
}

TEST_CASE("an off-scale point keeps its regime's shape on the edge, with its arrow", "[plot]") {
    auto c = crowded_chart();
    c.points = {{"fma_peak_fp32", 9.6e7, 170e9, "memory_bound"}, {"saxpy", 0.17, 2.9e9, "memory_bound"}};
    const Svg d(lab::plot::render_svg(c));
    REQUIRE(d.ok());
    for (xmlNode* p : d.find("", "point")) CHECK(Svg::attr(p, "data-shape") == "square");
    CHECK(d.find("path", "off-scale").size() == 1);
}

TEST_CASE("the fp64 ridge is marked beside the main one, its value said where the main one's is withheld", "[plot]") {
    // Only the fp32 ridge is a question's answer (02.05), and 02.05's own text prints the fp64
    // one: a legend saying '?' beside it contradicted the text.
    auto c = crowded_chart();
    const Svg d(lab::plot::render_svg(c));
    REQUIRE(d.ok());
    const auto r64 = d.find("line", "fp64-ridge");
    REQUIRE(r64.size() == 1);
    CHECK(Svg::attr(r64[0], "data-name") == "fp64.simt");
    const auto label = d.find("text", "fp64-ridge-label");
    REQUIRE(label.size() == 1);
    CHECK(Svg::content(label[0]) == "fp64.simt ridge 4.64 FLOP/B");
    c.show_ridge_value = false;
    const Svg hidden(lab::plot::render_svg(c));
    REQUIRE(hidden.ok());
    CHECK(Svg::content(hidden.find("text", "ridge-label").at(0)) == "ridge ? FLOP/B = peak / bandwidth");
    CHECK(Svg::attr(hidden.find("line", "ridge").at(0), "data-value").empty());
    CHECK(Svg::content(hidden.find("text", "fp64-ridge-label").at(0)) == "fp64.simt ridge 4.64 FLOP/B");
    const std::string sketch = lab::plot::render_terminal(c);
    CHECK(sketch.find("| ridge ? FLOP/B (fp32.simt)") != std::string::npos);
    CHECK(sketch.find("ridge 4.64 FLOP/B (fp64.simt)") != std::string::npos);
}

TEST_CASE("an AI in a label is written as the run's table writes it, and '?' wherever it is withheld", "[plot]") {
    auto c = crowded_chart();
    c.points = {{"mystery_1", 2.5e5, 9.3e8, "latency_bound"}, {"mystery_2", 0.25, 2.3e9, "memory_bound"}};
    std::string svg = lab::plot::render_svg(c);
    CHECK(svg.find("mystery_1 (AI 2.5e5 \u2192)") != std::string::npos);
    // Written for the reader as the table does; data-ai keeps the full number for scripts.
    const Svg d(svg);
    for (xmlNode* t : d.find("text", "")) CHECK(Svg::content(t).find("250000") == std::string::npos);
    for (auto& p : c.points) p.ai_shown = false;
    svg = lab::plot::render_svg(c);
    CHECK(svg.find("mystery_1 (AI ? \u2192)") != std::string::npos);
    CHECK(svg.find("2.5e5") == std::string::npos);
    CHECK(svg.find("0.25 FLOP/B") == std::string::npos);
}

TEST_CASE("a roofline with no point to place is not drawn, and says why", "[plot]") {
    auto c = crowded_chart();
    c.points = {{"chase_4k", 1.0, 0.0, ""}, {"read_4k", 0.0, 1e9, ""}};
    const std::string why = lab::plot::not_drawable(c);
    CHECK(why.find("chase_4k (0 FLOP)") != std::string::npos);
    CHECK(why.find("read_4k (AI 0)") != std::string::npos);
    c.points.push_back({"saxpy", 0.17, 2.9e9, "memory_bound"});
    CHECK(lab::plot::not_drawable(c).empty());
}

namespace {

lab::Plot cache_plot() {
    lab::Plot p{.name = "latency", .title = "Latency of one load against working set",
                .x = {.label = "working set", .unit = "B", .log = true}, .y = {.label = "latency", .unit = "s", .log = true}};
    lab::PlotSeries s{.name = "pointer chase"};
    for (double kib = 4; kib <= 262144; kib *= 2) {
        s.x.push_back(kib * 1024);
        s.y.push_back(kib <= 32 ? 1.2e-9 : kib <= 1024 ? 4e-9 : kib <= 16384 ? 1.5e-8 : 8e-8);
    }
    p.series = {s, {.name = "activation peak (prefill of T) with a name far too long for any legend column", .x = {4096, 1e8}, .y = {1e-9, 1e-7}}};
    // Levels found and reported close together, as 02.03 draws them on a CPU.
    p.marks = {{.label = "L1 reported", .x = 48 * 1024.0, .vertical = true}, {.label = "L1 found", .x = 40 * 1024.0, .vertical = true},
               {.label = "L2 reported", .x = 2048 * 1024.0, .vertical = true}, {.label = "L2 found", .x = 1536 * 1024.0, .vertical = true},
               {.label = "L3 found", .x = 3072 * 1024.0, .vertical = true}};
    return p;
}

std::vector<Box> texts_of(const Svg& d, const char* cls) {
    std::vector<Box> out;
    for (xmlNode* t : d.find("text", cls)) out.push_back(text_box(t));
    return out;
}

}  // namespace

TEST_CASE("an x-y plot's y axis title clears its tick labels, and its legend stays on the page", "[plot]") {
    const Svg d(lab::plot::render_plot_svg(cache_plot()));
    REQUIRE(d.ok());
    const auto ylabel = d.find("text", "ylabel");
    REQUIRE(ylabel.size() == 1);
    // The rotated title's glyphs span its baseline's x, minus the ascent, plus the descent.
    double tx = 0, ty = 0;
    REQUIRE(std::sscanf(Svg::attr(ylabel[0], "transform").c_str(), "translate(%lf %lf)", &tx, &ty) == 2);
    const double size = Svg::num(ylabel[0], "font-size");
    const Box title{tx - 0.8 * size, 0, tx + 0.25 * size, 1e9};
    for (const Box& tick : texts_of(d, "y-tick")) {
        INFO(describe(tick));
        CHECK_FALSE(overlaps(title, tick));
        CHECK(tick.x0 >= 0);
    }
    CHECK(tx - 0.8 * size >= 0);
    // Every legend line inside the page, the long name wrapped rather than cut.
    const auto legend = d.find("text", "legend-label");
    REQUIRE(legend.size() >= 3);
    std::string joined;
    for (xmlNode* t : legend) {
        const Box b = text_box(t);
        INFO(Svg::content(t) << " " << describe(b));
        CHECK(b.x1 <= d.width());
        joined += Svg::content(t) + " ";
    }
    CHECK(joined.find("activation peak (prefill of T) with a name") != std::string::npos);
    CHECK(joined.find("column") != std::string::npos);
}

TEST_CASE("an x-y plot's vertical marks have labels that do not run into each other", "[plot]") {
    const Svg d(lab::plot::render_plot_svg(cache_plot()));
    REQUIRE(d.ok());
    const auto marks = texts_of(d, "mark-label");
    REQUIRE(marks.size() == 5);
    for (std::size_t i = 0; i < marks.size(); ++i)
        for (std::size_t j = i + 1; j < marks.size(); ++j) {
            INFO(describe(marks[i]) << " and " << describe(marks[j]));
            CHECK_FALSE(overlaps(marks[i], marks[j]));
        }
}

TEST_CASE("an x-y plot gives each series a marker shape, and a roof its series' colour, dashed", "[plot]") {
    lab::Plot p{.name = "intensity", .title = "FLOP/s against arithmetic intensity",
                .x = {.label = "arithmetic intensity", .unit = "FLOP/B", .log = true}, .y = {.label = "achieved", .unit = "FLOP/s", .log = true}};
    p.series = {{.name = "fp32", .x = {0.25, 1, 4}, .y = {4e9, 15e9, 60e9}}, {.name = "fp32 roof", .x = {0.25, 1, 4}, .y = {5e9, 20e9, 80e9}},
                {.name = "fp64", .x = {0.125, 0.5, 2}, .y = {2e9, 8e9, 30e9}}, {.name = "fp64 roof", .x = {0.125, 0.5, 2}, .y = {2.5e9, 10e9, 40e9}}};
    const std::string svg = lab::plot::render_plot_svg(p);
    const Svg d(svg);
    REQUIRE(d.ok());
    std::map<std::string, xmlNode*> series;
    for (xmlNode* g : d.find("g", "series")) series[Svg::attr(g, "data-name")] = g;
    REQUIRE(series.size() == 4);
    CHECK(Svg::attr(series["fp32 roof"], "stroke") == Svg::attr(series["fp32"], "stroke"));
    CHECK(Svg::attr(series["fp64 roof"], "stroke") == Svg::attr(series["fp64"], "stroke"));
    CHECK(Svg::attr(series["fp32"], "stroke") != Svg::attr(series["fp64"], "stroke"));
    CHECK(Svg::attr(series["fp32"], "data-shape") != Svg::attr(series["fp64"], "data-shape"));
    CHECK(Svg::attr(series["fp32 roof"], "data-shape") == "none");
    // The roofs are dashed lines without markers.
    for (const char* roof : {"fp32 roof", "fp64 roof"}) {
        INFO(roof);
        xmlNode* g = series[roof];
        bool dashed = false, markers = false;
        for (xmlNode* c = g->children; c; c = c->next) {
            if (c->type != XML_ELEMENT_NODE) continue;
            const std::string name = reinterpret_cast<const char*>(c->name);
            dashed = dashed || (name == "polyline" && !Svg::attr(c, "stroke-dasharray").empty());
            markers = markers || name != "polyline";
        }
        CHECK(dashed);
        CHECK_FALSE(markers);
    }
    // The axis titles follow the roofline's convention.
    CHECK(svg.find(">arithmetic intensity (FLOP/B, log)<") != std::string::npos);
    CHECK(svg.find(">achieved (FLOP/s, log)<") != std::string::npos);
}

TEST_CASE("the roofline and the x-y plots share their font, frame and axis-title wording", "[plot]") {
    const Svg r(lab::plot::render_svg(crowded_chart()));
    const Svg x(lab::plot::render_plot_svg(cache_plot()));
    REQUIRE(r.ok());
    REQUIRE(x.ok());
    auto root_attr = [](const Svg& s, const char* name) { return Svg::attr(s.find("svg", "").at(0), name); };
    CHECK(root_attr(r, "font-family") == root_attr(x, "font-family"));
    CHECK(root_attr(r, "font-size") == root_attr(x, "font-size"));
    const auto rf = r.find("rect", "frame"), xf = x.find("rect", "frame");
    REQUIRE(rf.size() == 1);
    REQUIRE(xf.size() == 1);
    CHECK(Svg::attr(rf[0], "stroke") == Svg::attr(xf[0], "stroke"));
    std::string titles;
    for (xmlNode* t : r.find("text", "axis-title")) titles += Svg::content(t) + "\n";
    CHECK(titles.find("arithmetic intensity (FLOP/B, log)") != std::string::npos);
    CHECK(titles.find("performance (FLOP/s, log)") != std::string::npos);
}

namespace {

lab::LessonHost& host() {
    static lab::LessonHost h;
    return h;
}

}  // namespace

TEST_CASE("every recorded lesson's plots are readable, revealed or not", "[plot]") {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(lab_test::source_root() / "tests/fixtures/runs/cpu"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 12);
    for (const auto& file : files) {
        CAPTURE(file.filename().string());
        const nlohmann::json record = lab::record::read_record(file);
        const lab::RawRun raw = lab::record::raw_run_from_record(record);
        const auto& lesson = host().lesson(raw.lesson_id);
        const lab::Derivation derivation = lab::derive_run(lesson, raw);
        for (bool reveal : {false, true}) {
            CAPTURE(reveal);
            const auto withheld = lab::record::withheld_metrics(lesson.info, reveal, raw.device_kind);
            for (const auto& p : lab::run_plots(lesson.info, raw, derivation, withheld)) {
                CAPTURE(p.name);
                if (p.svg.empty()) {
                    CHECK(p.name == "roofline");
                    CHECK_FALSE(p.not_drawn.empty());
                    continue;
                }
                if (p.name == "roofline") {
                    check_roofline_readable(p.svg);
                    continue;
                }
                const Svg d(p.svg);
                REQUIRE(d.ok());
                check_texts_on_page(d);
                const auto marks = texts_of(d, "mark-label");
                for (std::size_t i = 0; i < marks.size(); ++i)
                    for (std::size_t j = i + 1; j < marks.size(); ++j) CHECK_FALSE(overlaps(marks[i], marks[j]));
            }
        }
    }
}

TEST_CASE("02.03 measures no FLOP: its roofline is not drawn, and says why", "[plot]") {
    const auto file = lab_test::source_root() / "tests/fixtures/runs/cpu/02.03-quick-reveal.json";
    const nlohmann::json record = lab::record::read_record(file);
    const lab::RawRun raw = lab::record::raw_run_from_record(record);
    const auto& lesson = host().lesson(raw.lesson_id);
    const auto plots = lab::run_plots(lesson.info, raw, lab::derive_run(lesson, raw), {});
    REQUIRE_FALSE(plots.empty());
    CHECK(plots[0].name == "roofline");
    CHECK(plots[0].svg.empty());
    CHECK(plots[0].not_drawn.find("no workload") != std::string::npos);
}
