// Tests for the roofline pictures: the SVG is parsed with libxml2 and checked through its
// machine-readable structure (class and data-* attributes), never by comparing drawn pixels; the
// terminal sketch is checked for what a student reads off it (ASCII, grid size, legend).

#include "roofline_plot.hpp"

#include <catch2/catch.hpp>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using lab::plot::ComputeCeiling;
using lab::plot::Point;
using lab::plot::RooflineChart;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

RooflineChart sample_chart() {
    RooflineChart c;
    c.title = "CPU roofline (sample)";
    c.compute = {{"fp32.simt", 181e9}, {"fp64.simt", 90.5e9}};
    c.bandwidth_bytes_per_s = 19.5e9;
    c.bandwidth_label = "DRAM (best of read/copy/triad)";
    c.ridge_pipe = "fp32.simt";
    c.points = {{"saxpy", 2.0 / 12.0, 2.9e9, "memory_bound"},
                {"sgemm_256", 42.7, 120e9, "compute_bound"},
                {"tiny_launch", 0.25, 0.05e9, "overhead_bound"},
                {"pointer_chase", 0.125, 0.3e9, "latency_bound"}};
    return c;
}

struct XmlDoc {
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc{nullptr, &xmlFreeDoc};
};

// Parses strictly: no network, no entity expansion from outside, errors not printed (the test
// reports them by failing).
XmlDoc parse(const std::string& svg) {
    XmlDoc d;
    d.doc.reset(xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "roofline.svg", nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    return d;
}

std::optional<std::string> attr(xmlNode* n, const char* name) {
    xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
    if (!v) return std::nullopt;
    std::string s(reinterpret_cast<const char*>(v));
    xmlFree(v);
    return s;
}

std::string content(xmlNode* n) {
    xmlChar* v = xmlNodeGetContent(n);
    std::string s = v ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return s;
}

void collect(xmlNode* n, const std::string& element, const std::string& cls, std::vector<xmlNode*>& out) {
    for (; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE) {
            const bool name_ok = element.empty() || element == reinterpret_cast<const char*>(n->name);
            bool class_ok = cls.empty();
            if (!class_ok) {
                // class may hold several names ("tick x-tick").
                std::istringstream words(attr(n, "class").value_or(""));
                for (std::string w; words >> w;) class_ok = class_ok || w == cls;
            }
            if (name_ok && class_ok) out.push_back(n);
        }
        collect(n->children, element, cls, out);
    }
}

std::vector<xmlNode*> find(const XmlDoc& d, const std::string& element, const std::string& cls = "") {
    std::vector<xmlNode*> out;
    collect(xmlDocGetRootElement(d.doc.get()), element, cls, out);
    return out;
}

std::vector<std::string> texts(const XmlDoc& d, const std::string& cls) {
    std::vector<std::string> out;
    for (xmlNode* n : find(d, "text", cls)) out.push_back(content(n));
    return out;
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
    for (const auto& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

// A point's marker: a <circle> or, for the other regimes' shapes, a <path>.
xmlNode* point_circle(const XmlDoc& d, const std::string& label) {
    for (xmlNode* n : find(d, "", "point"))
        if (attr(n, "data-label") == label) return n;
    return nullptr;
}

// A marker's centre x: a circle's cx, a path's data-x.
double centre_x(xmlNode* n) { return std::stod(attr(n, "cx").value_or(attr(n, "data-x").value_or("nan"))); }

bool is_ascii(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 128; });
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("the roofline SVG is a well-formed standalone SVG document", "[plot]") {
    const std::string svg = render_svg(sample_chart());
    const auto d = parse(svg);
    REQUIRE(d.doc);
    xmlNode* root = xmlDocGetRootElement(d.doc.get());
    REQUIRE(std::string(reinterpret_cast<const char*>(root->name)) == "svg");
    REQUIRE(root->ns);
    CHECK(std::string(reinterpret_cast<const char*>(root->ns->href)) == "http://www.w3.org/2000/svg");
    CHECK(attr(root, "width") == "760");
    CHECK(attr(root, "height") == "520");

    const auto titles = find(d, "title");
    REQUIRE_FALSE(titles.empty());
    CHECK(content(titles.front()) == "CPU roofline (sample)");
    CHECK(any_contains(texts(d, "title"), "CPU roofline (sample)"));
}

TEST_CASE("the roofline SVG holds every ceiling as a labelled line", "[plot]") {
    const auto chart = sample_chart();
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    const auto ceilings = find(d, "", "ceiling");
    REQUIRE(ceilings.size() == chart.compute.size());
    for (const auto& c : chart.compute) {
        INFO(c.name);
        xmlNode* found = nullptr;
        for (xmlNode* n : ceilings)
            if (attr(n, "data-name") == c.name) found = n;
        REQUIRE(found);
        REQUIRE_THAT(std::stod(attr(found, "data-value").value()), WithinRel(c.flops_per_s, 1e-12));
    }
    const auto labels = texts(d, "ceiling-label");
    CHECK(any_contains(labels, "fp32.simt 181 GFLOP/s"));
    CHECK(any_contains(labels, "fp64.simt 90.5 GFLOP/s"));
}

TEST_CASE("the roofline SVG draws the bandwidth slope and marks the ridge", "[plot]") {
    const auto d = parse(render_svg(sample_chart()));
    REQUIRE(d.doc);
    const auto bw = find(d, "", "bandwidth");
    REQUIRE(bw.size() == 1);
    REQUIRE_THAT(std::stod(attr(bw[0], "data-value").value()), WithinRel(19.5e9, 1e-12));
    CHECK(any_contains(texts(d, "bandwidth-label"), "DRAM (best of read/copy/triad) 19.5 GB/s"));

    const auto ridge = find(d, "", "ridge");
    REQUIRE(ridge.size() == 1);
    CHECK(attr(ridge[0], "data-name") == "fp32.simt");
    REQUIRE_THAT(std::stod(attr(ridge[0], "data-value").value()), WithinRel(181.0 / 19.5, 1e-12));
    CHECK(any_contains(texts(d, "ridge-label"), "ridge 9.28 FLOP/B"));

    // The slope ends where the highest ceiling begins: at the ridge.
    const auto ceilings = find(d, "", "ceiling");
    for (xmlNode* c : ceilings) {
        if (attr(c, "data-name") != "fp32.simt") continue;
        CHECK(attr(c, "x1") == attr(bw[0], "x2"));
        CHECK(attr(c, "x1") == attr(ridge[0], "x1"));
    }
}

TEST_CASE("the ridge marker follows ridge_pipe and falls back to the first ceiling", "[plot]") {
    auto chart = sample_chart();
    chart.ridge_pipe = "fp64.simt";
    auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    CHECK(attr(find(d, "", "ridge").at(0), "data-name") == "fp64.simt");

    chart.ridge_pipe = "no.such.pipe";
    d = parse(render_svg(chart));
    REQUIRE(d.doc);
    CHECK(attr(find(d, "", "ridge").at(0), "data-name") == "fp32.simt");
}

TEST_CASE("the roofline SVG withholds the ridge value when asked", "[plot]") {
    auto chart = sample_chart();
    chart.show_ridge_value = false;
    const std::string svg = render_svg(chart);
    const auto d = parse(svg);
    REQUIRE(d.doc);
    const auto labels = texts(d, "ridge-label");
    REQUIRE(labels.size() == 1);
    CHECK(labels[0] == "ridge ? FLOP/B = peak / bandwidth");
    const auto ridge = find(d, "", "ridge");
    REQUIRE(ridge.size() == 1);
    CHECK_FALSE(attr(ridge[0], "data-value").has_value());
    CHECK(svg.find("9.28") == std::string::npos);
}

TEST_CASE("the roofline SVG draws every point as a circle with its label", "[plot]") {
    const auto chart = sample_chart();
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    CHECK(find(d, "", "point").size() == chart.points.size());
    const auto labels = texts(d, "point-label");
    for (const auto& p : chart.points) {
        INFO(p.label);
        xmlNode* c = point_circle(d, p.label);
        REQUIRE(c);
        REQUIRE_THAT(std::stod(attr(c, "data-ai").value()), WithinRel(p.ai, 1e-12));
        REQUIRE_THAT(std::stod(attr(c, "data-flops").value()), WithinRel(p.flops_per_s, 1e-12));
        CHECK(attr(c, "data-regime") == p.regime);
        CHECK(any_contains(labels, p.label));
    }
    // Four regimes, four colours, and a legend naming each in words.
    std::vector<std::string> fills;
    for (xmlNode* c : find(d, "", "point")) fills.push_back(attr(c, "fill").value_or(""));
    std::sort(fills.begin(), fills.end());
    CHECK(std::unique(fills.begin(), fills.end()) == fills.end());
    const auto legend = texts(d, "legend-label");
    for (const char* r : {"compute bound", "memory bound", "overhead bound", "latency bound"})
        CHECK(any_contains(legend, r));
}

TEST_CASE("a withheld regime is drawn in neutral grey", "[plot]") {
    auto chart = sample_chart();
    chart.points = {{"mystery", 1.0, 10e9, ""}};
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    xmlNode* c = point_circle(d, "mystery");
    REQUIRE(c);
    const std::string fill = attr(c, "fill").value();
    REQUIRE(fill.size() == 7);
    CHECK(fill.substr(1, 2) == fill.substr(3, 2));
    CHECK(fill.substr(3, 2) == fill.substr(5, 2));
}

TEST_CASE("the roofline SVG escapes markup in labels and still parses", "[plot]") {
    auto chart = sample_chart();
    chart.title = "A & B <test> \"quoted\"";
    chart.compute[0].name = "fp32<&>";
    chart.ridge_pipe = "fp32<&>";
    chart.bandwidth_label = "DRAM 'peak' & more";
    chart.points.push_back({"a<&>b", 3.0, 20e9, "memory_bound"});
    const std::string svg = render_svg(chart);
    CHECK(svg.find("<&>") == std::string::npos);
    CHECK(svg.find("a&lt;&amp;&gt;b") != std::string::npos);
    const auto d = parse(svg);
    REQUIRE(d.doc);
    CHECK(point_circle(d, "a<&>b"));
    CHECK(any_contains(texts(d, "point-label"), "a<&>b"));
    CHECK(content(find(d, "title").front()) == chart.title);
    bool ceiling_found = false;
    for (xmlNode* n : find(d, "", "ceiling")) ceiling_found = ceiling_found || attr(n, "data-name") == "fp32<&>";
    CHECK(ceiling_found);
}

TEST_CASE("the roofline SVG survives labels that are not valid UTF-8", "[plot]") {
    auto chart = sample_chart();
    chart.points.push_back({std::string("bad\xff\xfe name\x01"), 1.0, 5e9, "memory_bound"});
    chart.points.push_back({"caf\xc3\xa9", 2.0, 6e9, "memory_bound"});
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    CHECK(point_circle(d, "caf\xc3\xa9"));
}

TEST_CASE("the roofline SVG axes are log scaled with decade ticks in SI units", "[plot]") {
    const auto d = parse(render_svg(sample_chart()));
    REQUIRE(d.doc);
    const auto x = texts(d, "x-tick");
    for (const char* t : {"0.01", "0.1", "1", "10", "100", "1000"}) {
        INFO(t);
        CHECK(std::find(x.begin(), x.end(), t) != x.end());
    }
    const auto y = texts(d, "y-tick");
    CHECK(std::find(y.begin(), y.end(), "1 TFLOP/s") != y.end());
    CHECK(std::find(y.begin(), y.end(), "10 GFLOP/s") != y.end());
    // The lowest point, 50 MFLOP/s, lies inside the y axis.
    CHECK(std::find(y.begin(), y.end(), "10 MFLOP/s") != y.end());
    const auto titles = texts(d, "axis-title");
    CHECK(any_contains(titles, "arithmetic intensity (FLOP/B, log)"));
    CHECK(any_contains(titles, "performance (FLOP/s, log)"));
}

TEST_CASE("the x axis widens to cover kernels spread over many decades", "[plot]") {
    auto chart = sample_chart();
    // No gap wider than three decades between neighbours: every kernel matters, all are on scale.
    chart.points = {{"reduction", 1e-4, 1e9, "memory_bound"}, {"stream", 0.1, 5e9, "memory_bound"},
                    {"gemm", 1e3, 150e9, "compute_bound"}, {"dense", 5e5, 150e9, "compute_bound"}};
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    const auto x = texts(d, "x-tick");
    CHECK(std::find(x.begin(), x.end(), "1e-5") != x.end());
    CHECK(std::find(x.begin(), x.end(), "1e7") != x.end());
    CHECK(find(d, "", "off-scale").empty());
    for (xmlNode* c : find(d, "", "point")) CHECK_FALSE(attr(c, "data-off-scale").has_value());
}

// The FMA-peak kernel of 02.05 on a CPU: 12 chains x 16 lanes x 2 FLOP x 10^6 iterations per
// 4-byte result, an AI near 1e8, far right of everything else.
RooflineChart chart_with_outliers() {
    auto chart = sample_chart();
    chart.points.push_back({"fma_peak_fp32", 9.6e7, 170e9, "compute_bound"});
    chart.points.push_back({"gather", 2e-7, 1e7, "latency_bound"});
    return chart;
}

TEST_CASE("an outlier's AI does not stretch the x axis: it is drawn at the edge, marked", "[plot]") {
    const auto chart = chart_with_outliers();
    const std::string svg = render_svg(chart);
    const auto d = parse(svg);
    REQUIRE(d.doc);

    // The axis spans the kernels that matter (0.125 .. 42.7 FLOP/B) and the ridges, a decade of
    // margin each side, never narrower than 1e-2 .. 1e3: not 1e-8 .. 1e9.
    const auto x = texts(d, "x-tick");
    CHECK(std::find(x.begin(), x.end(), "0.01") != x.end());
    CHECK(std::find(x.begin(), x.end(), "1000") != x.end());
    for (const char* far : {"1e-3", "1e-4", "1e4", "1e5", "1e8"}) {
        INFO(far);
        CHECK(std::find(x.begin(), x.end(), far) == x.end());
    }

    // Every point is still drawn, the outliers on the frame's edges, with their real AI kept.
    CHECK(find(d, "", "point").size() == chart.points.size());
    const auto frame = find(d, "rect", "frame").at(0);
    const double left = std::stod(attr(frame, "x").value());
    const double right = left + std::stod(attr(frame, "width").value());
    xmlNode* peak = point_circle(d, "fma_peak_fp32");
    xmlNode* gather = point_circle(d, "gather");
    REQUIRE(peak);
    REQUIRE(gather);
    CHECK(attr(peak, "data-off-scale") == "right");
    CHECK(attr(gather, "data-off-scale") == "left");
    REQUIRE_THAT(centre_x(peak), WithinAbs(right, 0.05));
    REQUIRE_THAT(centre_x(gather), WithinAbs(left, 0.05));
    REQUIRE_THAT(std::stod(attr(peak, "data-ai").value()), WithinRel(9.6e7, 1e-12));
    REQUIRE(point_circle(d, "saxpy"));
    CHECK_FALSE(attr(point_circle(d, "saxpy"), "data-off-scale").has_value());

    // An arrow outside the frame for each, and a label naming the kernel and its AI.
    const auto arrows = find(d, "path", "off-scale");
    REQUIRE(arrows.size() == 2);
    for (xmlNode* a : arrows) {
        const bool is_peak = attr(a, "data-label") == "fma_peak_fp32";
        CHECK(attr(a, "data-side") == (is_peak ? "right" : "left"));
    }
    // Named beside the point, or, where no name fits (fma_peak_fp32 sits on the fp32 roof with
    // sgemm_256 under it), keyed by letter with the same facts in the key table.
    const auto labels = texts(d, "point-label"), keys = texts(d, "key-row");
    CHECK((any_contains(labels, "fma_peak_fp32 (AI 9.6e7 \u2192)") ||
           any_contains(keys, "fma_peak_fp32: AI 9.6e7 FLOP/B (off the axis \u2192)")));
    CHECK((any_contains(labels, "gather (\u2190 AI 2e-7)") || any_contains(keys, "gather: AI 2e-7 FLOP/B (off the axis \u2190)")));
}

TEST_CASE("a point whose AI and FLOP/s are graded answers is drawn where it lies, its numbers written '?'", "[plot]") {
    auto chart = chart_with_outliers();
    for (auto& p : chart.points) p.ai_shown = p.flops_shown = false;
    const std::string svg = render_svg(chart);
    const auto d = parse(svg);
    REQUIRE(d.doc);
    CHECK(find(d, "", "point").size() == chart.points.size());
    xmlNode* peak = point_circle(d, "fma_peak_fp32");
    REQUIRE(peak);
    CHECK(attr(peak, "data-ai") == "?");
    CHECK(attr(peak, "data-flops") == "?");
    CHECK(attr(peak, "data-off-scale") == "right");
    for (xmlNode* a : find(d, "path", "off-scale")) CHECK(attr(a, "data-ai") == "?");
    const auto labels = texts(d, "point-label"), keys = texts(d, "key-row");
    CHECK((any_contains(labels, "fma_peak_fp32 (AI ? \u2192)") || any_contains(keys, "fma_peak_fp32: AI ? FLOP/B")));
    CHECK((any_contains(labels, "gather (\u2190 AI ?)") || any_contains(keys, "gather: AI ? FLOP/B")));
    for (const char* number : {"9.6e7", "2e-7", "42.7"}) {
        INFO(number);
        CHECK(svg.find(number) == std::string::npos);
    }
    const std::string text = lab::plot::render_terminal(chart);
    CHECK(text.find("AI ? FLOP/B") != std::string::npos);
    CHECK(text.find("9.6e7") == std::string::npos);
}

TEST_CASE("the terminal sketch draws an outlier at the edge with an arrow and names its AI", "[plot]") {
    const auto chart = chart_with_outliers();
    const int width = 64, height = 16;
    const std::string t = render_terminal(chart, width, height);
    CHECK(is_ascii(t));
    const auto lines = lines_of(t);
    std::size_t axis = lines.size(), axis_col = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto pos = lines[i].find("+" + std::string(width, '-'));
        if (pos != std::string::npos) {
            axis = i;
            axis_col = pos;
            break;
        }
    }
    REQUIRE(axis < lines.size());
    // fma_peak_fp32 is the fifth point (E), gather the sixth (F).
    bool right_edge = false, left_edge = false;
    for (std::size_t i = axis - height; i < axis; ++i) {
        const std::string row = lines[i].substr(axis_col + 1);
        right_edge = right_edge || row.substr(row.size() - 2) == "E>";
        left_edge = left_edge || row.substr(0, 2) == "<F";
    }
    CHECK(right_edge);
    CHECK(left_edge);
    // The x labels stop at 1000 (not 1e8), and the legend says where the outliers really are.
    CHECK(lines[axis + 1].find("1e8") == std::string::npos);
    CHECK(lines[axis + 1].find("1000") != std::string::npos);
    auto has_line = [&](const std::string& prefix, const std::string& rest) {
        for (const auto& l : lines)
            if (l.rfind(prefix, 0) == 0 && l.find(rest) != std::string::npos) return true;
        return false;
    };
    CHECK(has_line("  E  fma_peak_fp32", "AI 9.6e7 FLOP/B (off scale >)"));
    CHECK(has_line("  F  gather", "AI 2e-7 FLOP/B (off scale <)"));
    CHECK(has_line("  A  saxpy", "AI 0.167 FLOP/B"));
    CHECK_FALSE(has_line("  A  saxpy", "off scale"));
}

TEST_CASE("an undecided regime has its own colour and legend entry", "[plot]") {
    auto chart = sample_chart();
    chart.points.push_back({"noisy", 3.0, 20e9, "undecided: memory_bound or latency_bound"});
    const auto d = parse(render_svg(chart));
    REQUIRE(d.doc);
    CHECK(any_contains(texts(d, "legend-label"), "undecided"));
    xmlNode* c = point_circle(d, "noisy");
    REQUIRE(c);
    CHECK(attr(c, "fill") != attr(point_circle(d, "saxpy"), "fill"));
    CHECK(attr(c, "fill") != attr(point_circle(d, "pointer_chase"), "fill"));
}

TEST_CASE("a point with infinite AI sits at the right edge and one with zero FLOP/s is listed",
          "[plot]") {
    auto chart = sample_chart();
    chart.points = {{"memset", kInf, 5e9, "memory_bound"},
                    {"copy", 0.0, 0.0, "memory_bound"},
                    {"saxpy", 2.0 / 12.0, 2.9e9, "memory_bound"}};
    const std::string svg = render_svg(chart);
    const auto d = parse(svg);
    REQUIRE(d.doc);

    xmlNode* inf = point_circle(d, "memset");
    REQUIRE(inf);
    CHECK(attr(inf, "data-ai") == "inf");
    // The right edge is where every ceiling ends.
    REQUIRE_THAT(centre_x(inf),
                 WithinAbs(std::stod(attr(find(d, "", "ceiling").at(0), "x2").value()), 0.01));
    CHECK(any_contains(texts(d, "point-label"), "memset (AI\u2192\u221E)"));

    CHECK_FALSE(point_circle(d, "copy"));
    const auto notes = texts(d, "not-drawn");
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("not drawn: copy (0 FLOP)") == 0);
    CHECK(point_circle(d, "saxpy"));
}

TEST_CASE("the roofline SVG never fails on degenerate charts", "[plot]") {
    RooflineChart chart;
    chart.compute = {{"fp32", 1e12}};
    chart.bandwidth_bytes_per_s = 1e11;

    SECTION("no points") {}
    SECTION("no title and no labels") { chart.points = {{"", 1.0, 1e9, ""}}; }
    SECTION("only unplaceable points") {
        chart.points = {{"zero", 1.0, 0.0, ""}, {"neg", 1.0, -5.0, ""}, {"nan", std::nan(""), 1e9, ""},
                        {"ai0", 0.0, 1e9, ""}, {"infflops", 1.0, kInf, ""}};
    }
    SECTION("values at the ends of the double range") {
        chart.compute = {{"huge", 1e300}, {"tiny", 1e-300}};
        chart.bandwidth_bytes_per_s = 1e-200;
        chart.points = {{"a", 1e-300, 1e-300, "compute_bound"}, {"b", 1e300, 1e300, "memory_bound"},
                        {"c", kInf, std::numeric_limits<double>::denorm_min(), "weird"}};
    }
    SECTION("no usable bandwidth or ceilings") {
        chart.compute = {{"broken", 0.0}};
        chart.bandwidth_bytes_per_s = 0;
        chart.points = {{"p", 1.0, 1e9, "memory_bound"}};
    }
    SECTION("no ceilings at all") {
        chart.compute.clear();
        chart.points = {{"p", 1.0, 1e9, "memory_bound"}};
    }
    SECTION("many points") {
        for (int i = 0; i < 80; ++i)
            chart.points.push_back({"k" + std::to_string(i), std::pow(10.0, i % 7 - 2), 1e9 + i * 1e8, "compute_bound"});
    }
    std::string svg;
    REQUIRE_NOTHROW(svg = render_svg(chart));
    const auto d = parse(svg);
    REQUIRE(d.doc);
    std::string t;
    REQUIRE_NOTHROW(t = render_terminal(chart));
    CHECK(is_ascii(t));
}

TEST_CASE("the terminal sketch is ASCII with a grid of the requested size and a legend",
          "[plot]") {
    auto chart = sample_chart();
    chart.points.push_back({"memset \xe2\x86\x92 fast", kInf, 5e9, "memory_bound"});
    chart.points.push_back({"copy", 0.0, 0.0, "memory_bound"});
    const int width = 64, height = 16;
    const std::string t = render_terminal(chart, width, height);
    CHECK(is_ascii(t));
    const auto lines = lines_of(t);

    // Grid rows: those above the axis line "+-----", with '|' in the axis column.
    std::size_t axis = lines.size();
    std::size_t axis_col = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto pos = lines[i].find("+" + std::string(width, '-'));
        if (pos != std::string::npos) {
            axis = i;
            axis_col = pos;
            break;
        }
    }
    REQUIRE(axis < lines.size());
    int rows = 0;
    for (std::size_t i = 0; i < axis; ++i)
        if (lines[i].size() == axis_col + 1 + width && lines[i][axis_col] == '|') ++rows;
    CHECK(rows == height);

    std::string grid;
    for (std::size_t i = axis - height; i < axis; ++i) grid += lines[i].substr(axis_col + 1);
    for (char c : {'A', 'B', 'C', 'D', 'E', '=', '-', '/', '|'}) {
        INFO(c);
        CHECK(grid.find(c) != std::string::npos);
    }
    CHECK(grid.find('F') == std::string::npos);  // "copy" cannot be placed

    auto has_line = [&](const std::string& prefix, const std::string& rest) {
        for (const auto& l : lines)
            if (l.rfind(prefix, 0) == 0 && l.find(rest) != std::string::npos) return true;
        return false;
    };
    CHECK(has_line("  A  saxpy", "memory_bound"));
    CHECK(has_line("  B  sgemm_256", "compute_bound"));
    CHECK(has_line("  C  tiny_launch", "overhead_bound"));
    CHECK(has_line("  D  pointer_chase", "latency_bound"));
    CHECK(has_line("  E  memset ? fast", "AI -> inf"));
    CHECK(has_line("  = fp32.simt", "181 GFLOP/s"));
    CHECK(has_line("  - fp64.simt", "90.5 GFLOP/s"));
    CHECK(has_line("  / DRAM", "19.5 GB/s"));
    CHECK(has_line("  | ridge 9.28 FLOP/B", "fp32.simt"));
    CHECK(has_line("not drawn:", "copy (0 FLOP)"));
}

// The grid's rows, top first, without the y labels (the part right of the axis's '|').
std::vector<std::string> grid_rows(const std::string& t, int width) {
    const auto lines = lines_of(t);
    std::size_t axis = lines.size(), col = 0;
    for (std::size_t i = 0; i < lines.size() && axis == lines.size(); ++i)
        if (const auto pos = lines[i].find("+" + std::string(width, '-')); pos != std::string::npos) axis = i, col = pos;
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < axis; ++i)
        if (lines[i].size() == col + 1 + width && lines[i][col] == '|') rows.push_back(lines[i].substr(col + 1));
    return rows;
}

TEST_CASE("the terminal sketch draws a dotted drop line from a point up to its roof", "[plot]") {
    RooflineChart chart;
    chart.compute = {{"fp32.simt", 100e9}};
    chart.bandwidth_bytes_per_s = 10e9;
    chart.ridge_pipe = "fp32.simt";
    chart.points = {{"far_below", 100.0, 1e9, "compute_bound"}};  // 1% of its roof: two decades under it
    const int width = 64, height = 16;
    const auto rows = grid_rows(render_terminal(chart, width, height), width);
    REQUIRE(rows.size() == static_cast<std::size_t>(height));
    int point_row = -1, col = -1, roof_row = -1;
    for (int r = 0; r < height; ++r) {
        if (const auto c = rows[static_cast<std::size_t>(r)].find('A'); c != std::string::npos) point_row = r, col = static_cast<int>(c);
        if (rows[static_cast<std::size_t>(r)].find("===") != std::string::npos) roof_row = r;
    }
    REQUIRE(point_row > roof_row + 1);
    REQUIRE(roof_row >= 0);
    // Every cell between the roof and the point, in the point's column, is ':'.
    for (int r = roof_row + 1; r < point_row; ++r) {
        INFO("row " << r);
        CHECK(rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(col)] == ':');
    }
    CHECK_THAT(render_terminal(chart, width, height), Catch::Contains(": from a point up to its own roof"));

    SECTION("none where the AI is withheld: its line would end on the slope at AI x bandwidth") {
        chart.points = {{"asked", 0.5, 0.05e9, "memory_bound"}};
        chart.points[0].ai_shown = false;
        const std::string t = render_terminal(chart, width, height);
        for (const auto& r : grid_rows(t, width)) CHECK(r.find(':') == std::string::npos);
        CHECK_THAT(t, !Catch::Contains("from a point up to its own roof"));
    }
    SECTION("none where the roof fraction is withheld: the line's length is that fraction") {
        // 02.05's triad: a walkthrough measured 35.1% off the SVG's line for an answer of 35.0%.
        chart.points = {{"asked", 0.5, 0.05e9, "memory_bound"}};
        chart.points[0].roof_fraction_shown = false;
        const std::string t = render_terminal(chart, width, height);
        for (const auto& r : grid_rows(t, width)) CHECK(r.find(':') == std::string::npos);
        CHECK_THAT(t, !Catch::Contains("from a point up to its own roof"));
        CHECK_THAT(render_svg(chart), !Catch::Contains("drop-line"));
    }
}

TEST_CASE("the terminal sketch withholds the ridge value when asked", "[plot]") {
    auto chart = sample_chart();
    chart.show_ridge_value = false;
    const std::string t = render_terminal(chart);
    CHECK(t.find("ridge ? FLOP/B") != std::string::npos);
    CHECK(t.find("9.28") == std::string::npos);
}

TEST_CASE("the terminal sketch never fails on small grids and edge cases", "[plot]") {
    const auto [width, height] = GENERATE(table<int, int>({{64, 16}, {1, 1}, {0, -3}, {20, 6}, {400, 200}, {10000, 10000}}));
    RooflineChart chart;
    chart.compute = {{"only", 5e12}};
    chart.bandwidth_bytes_per_s = 2e12;
    chart.points = {{"x", kInf, 1e12, "compute_bound"}, {"y", 1e-9, 1e3, ""}, {"z", 1.0, 0.0, ""}};
    std::string t;
    REQUIRE_NOTHROW(t = render_terminal(chart, width, height));
    CHECK(is_ascii(t));
    CHECK(t.find("not drawn: z (0 FLOP)") != std::string::npos);
    CHECK(t.find("  A  x") != std::string::npos);
}
