// Lessons' plots (lab::Plot) drawn as SVG and in the terminal: what a reader needs is there
// (title, axes with their units, every series, the marks), withheld marks are not, and a plot
// that cannot be drawn is named.
#include <catch2/catch.hpp>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "roofline_text.hpp"
#include "xy_plot.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

using namespace lab;

namespace {

Plot latency_plot() {
    Plot p{.name = "latency", .title = "Load latency against working set",
           .x = {.label = "working set", .unit = "B", .log = true}, .y = {.label = "latency", .unit = "s", .log = true}};
    PlotSeries chase{.name = "pointer chase"};
    for (double kib : {4, 16, 64, 256, 1024, 4096, 16384, 65536}) {
        chase.x.push_back(kib * 1024);
        chase.y.push_back(kib <= 32 ? 1.2e-9 : kib <= 1024 ? 4e-9 : 8e-8);
    }
    p.series = {chase};
    p.marks = {{.label = "L1 capacity", .x = 48 * 1024, .vertical = true},
               {.label = "DRAM latency", .x = 65536 * 1024.0, .y = 8e-8, .metric = "dram.latency_s"}};
    return p;
}

int count(xmlDocPtr doc, const char* xpath) {
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
    int n = r && r->nodesetval ? r->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(r);
    xmlXPathFreeContext(ctx);
    return n;
}

}  // namespace

// A visual review: a plot saved with --plots did not say which lesson, device or run it was of.
TEST_CASE("a lesson's plot carries its subtitle under the title, and none when given none", "[plot]") {
    const std::string svg = plot::render_plot_svg(latency_plot(), {}, "02.03 The Memory Hierarchy \u00b7 AMD EPYC \u00b7 quick run");
    xmlDocPtr doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "plot.svg", nullptr, XML_PARSE_NONET);
    REQUIRE(doc);
    CHECK(count(doc, "//s:text[@class='subtitle']") == 1);
    xmlFreeDoc(doc);
    CHECK(svg.find(">02.03 The Memory Hierarchy \u00b7 AMD EPYC \u00b7 quick run</text>") != std::string::npos);
    CHECK(plot::render_plot_svg(latency_plot()).find("subtitle") == std::string::npos);
}

TEST_CASE("a lesson's plot is a well-formed SVG with its series, log ticks, units and marks", "[plot]") {
    const std::string svg = plot::render_plot_svg(latency_plot());
    xmlDocPtr doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "plot.svg", nullptr, XML_PARSE_NONET);
    REQUIRE(doc);
    CHECK(count(doc, "//s:g[@class='series']") == 1);
    CHECK(count(doc, "//s:g[@class='series']/s:circle") == 8);
    CHECK(count(doc, "//s:g[@class='xtick']") == 6);  // decades 10^3 .. 10^8 B: 1 kB .. 100 MB, one per decade
    CHECK(count(doc, "//s:g[@class='mark']") == 2);
    xmlFreeDoc(doc);
    CHECK(svg.find("working set (B, log)") != std::string::npos);
    CHECK(svg.find("pointer chase") != std::string::npos);
    CHECK(svg.find("DRAM latency") != std::string::npos);
    CHECK(svg.find("1 ns") != std::string::npos);  // a tick of the latency axis, in SI

    // The DRAM latency is a graded answer in this run: its mark is left out.
    const std::string hidden = plot::render_plot_svg(latency_plot(), {"dram.latency_s"});
    CHECK(hidden.find("DRAM latency") == std::string::npos);
    CHECK(hidden.find("L1 capacity") != std::string::npos);
}

TEST_CASE("a lesson's plot in the terminal: its points, ranges, legend and marks, in ASCII", "[plot]") {
    const std::string text = plot::render_plot_terminal(latency_plot(), {}, 40, 10);
    CHECK(text.find("Load latency against working set") == 0);
    CHECK(text.find("* pointer chase") != std::string::npos);
    CHECK(text.find("  a| L1 capacity") != std::string::npos);  // the letter tops its line
    {
        // The top row of the grid (third line: title, axis title, grid) holds the letter, the
        // rows below a '|' in its column.
        std::istringstream lines(text);
        std::string title, axis, top, next;
        std::getline(lines, title), std::getline(lines, axis), std::getline(lines, top), std::getline(lines, next);
        const std::size_t a = top.find('a', top.find('|') + 1);
        REQUIRE(a != std::string::npos);
        CHECK(next.at(a) == '|');
    }
    CHECK(text.find("1 DRAM latency") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '*') >= 5);  // points that share a cell draw once
    for (char c : text) CHECK(static_cast<unsigned char>(c) < 128);
    CHECK(plot::render_plot_terminal(latency_plot(), {"dram.latency_s"}, 40, 10).find("DRAM latency") == std::string::npos);
}

TEST_CASE("a linear plot has round ticks, and an undrawable plot is named with why", "[plot]") {
    Plot p{.name = "scaling", .title = "t", .x = {.label = "threads"}, .y = {.label = "bandwidth", .unit = "B/s"}};
    p.series = {{.name = "read", .x = {1, 2, 3, 4}, .y = {10e9, 19e9, 26e9, 30e9}}};
    CHECK(plot::plot_problems(p).empty());
    const std::string svg = plot::render_plot_svg(p);
    CHECK(svg.find(">20 GB/s<") != std::string::npos);

    Plot bad = p;
    bad.name = "Bad Name";
    bad.y.log = true;
    bad.series[0].y[1] = 0;
    bad.series.push_back({.name = "short", .x = {1, 2}, .y = {1}});
    const auto problems = plot::plot_problems(bad);
    REQUIRE(problems.size() == 3);
    CHECK(problems[0].find("'Bad Name'") != std::string::npos);
    CHECK(problems[1].find("point 1") != std::string::npos);
    CHECK(problems[2].find("2 x values and 1 y values") != std::string::npos);
}

TEST_CASE("the terminal plot's y axis lines up when a tick label has a multi-byte unit (µs)", "[plot]") {
    Plot p{.name = "launch", .title = "Time against size", .x = {.label = "size", .unit = "B", .log = true},
           .y = {.label = "time", .unit = "s", .log = true}};
    p.series = {{.name = "kernel", .x = {1e3, 1e6, 1e9}, .y = {1e-6, 1e-4, 0.1}}};
    const std::string text = plot::render_plot_terminal(p, {}, 40, 10);
    std::vector<std::size_t> bars;  // the column of each row's axis bar, as a terminal shows it
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (auto at = line.find(" |"); at != std::string::npos) bars.push_back(plot::detail::code_points(line.substr(0, at)));
    REQUIRE(bars.size() == 10);
    CHECK(std::count(bars.begin(), bars.end(), bars.front()) == 10);
    CHECK(text.find("µs") != std::string::npos);
}

TEST_CASE("the terminal plot shows a cell two series share as '=' and labels the middle of its y axis", "[plot]") {
    // 02.04's fp64 points landed on its fp32 ones and hid them: a reader saw 3 of 8.
    Plot p{.name = "sweep", .title = "Rate against AI", .x = {.label = "AI", .unit = "FLOP/B", .log = true},
           .y = {.label = "rate", .unit = "FLOP/s", .log = true}};
    p.series = {{.name = "fp32", .x = {1, 10, 100}, .y = {1e9, 1e10, 1e11}}, {.name = "fp64", .x = {1, 100}, .y = {1e9, 5e10}}};
    const std::string text = plot::render_plot_terminal(p, {}, 40, 11);
    CHECK(std::count(text.begin(), text.end(), '=') == 2);  // the shared point, and its legend entry
    CHECK(text.find("  = points of more than one series (fp32, fp64)") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '*') == 1 + 2);  // fp32's own points left, and its legend entry
    CHECK(text.find("10 GFLOP/s |") != std::string::npos);       // the middle row's tick, 10^10 on 10^9..10^11
}

TEST_CASE("the terminal plot's legend names only the series that share a cell", "[plot]") {
    // 02.11: its measured points fell on its model's line; '=' alone did not say which two met.
    Plot p{.name = "launch", .title = "Time against n", .x = {.label = "n", .log = true}, .y = {.label = "time", .unit = "s", .log = true}};
    p.series = {{.name = "one update", .x = {1e2, 1e6}, .y = {1e-6, 1e-3}},
                {.name = "launch + c n", .x = {1e2, 1e6}, .y = {1e-6, 1e-3}},
                {.name = "empty kernel", .x = {1e4}, .y = {1e-5}}};
    const std::string text = plot::render_plot_terminal(p, {}, 40, 11);
    INFO(text);
    CHECK(text.find("  = points of more than one series (one update, launch + c n)\n") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '=') == 2 + 1);  // two shared cells, and the legend's
    CHECK(text.find("  o empty kernel") != std::string::npos);          // a series sharing nothing keeps its mark
}

TEST_CASE("the terminal plot labels a log axis padded past a point on a decade at that decade, not at its frame", "[plot]") {
    // 02.06's batch axis: batch 1 sits on 10^0, so the axis starts a tenth of a decade lower, and
    // its first label read "0.7943", a batch no one ran.
    Plot p{.name = "time", .title = "Time against batch", .x = {.label = "batch", .log = true}, .y = {.label = "time", .unit = "s", .log = true}};
    p.series = {{.name = "GEMM", .x = {1, 2, 4, 8, 16, 32, 64, 128, 256}, .y = {1e-3, 1e-3, 1.1e-3, 1.2e-3, 1.5e-3, 2e-3, 3e-3, 6e-3, 1e-2}}};
    const std::string text = plot::render_plot_terminal(p, {}, 64, 14);
    INFO(text);
    CHECK(text.find("0.7943") == std::string::npos);
    CHECK(text.find("0.794") == std::string::npos);
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    // The x axis: "1" under batch 1's column (the first point's), "1 k" at the right end (not padded).
    std::size_t axis = 0;
    while (axis < lines.size() && lines[axis].find("+---") == std::string::npos) ++axis;
    REQUIRE(axis + 1 < lines.size());
    const std::string& labels = lines[axis + 1];
    std::size_t point_col = std::string::npos;
    for (std::size_t r = 0; r < axis; ++r)
        if (auto at = lines[r].find(" |"); at != std::string::npos)
            if (auto star = lines[r].find('*', at + 2); star != std::string::npos) point_col = std::min(point_col, star);
    REQUIRE(point_col != std::string::npos);
    CHECK(labels.find_first_not_of(' ') == point_col);
    CHECK(labels.substr(point_col, 2) == "1 ");
    CHECK(labels.size() >= 3);
    CHECK(labels.substr(labels.size() - 3) == "1 k");
    // The y axis: 10 ms and 1 ms (the data's decades) on their rows, not the padded frame's values.
    CHECK(text.find("10 ms |") != std::string::npos);
    CHECK(text.find(" 1 ms |") != std::string::npos);
}
