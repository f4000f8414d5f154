// The pages `lab report` and `lab grade --report` write, loaded in a real browser (headless
// Chromium): each loads without a single console message, the browser's own DOM holds the
// expected sections and plots, and its screenshot is not blank. Where no Chromium is installed
// the executable says so and exits 77 (meson counts a skip); scripts/setup.sh installs it.
//
// How console errors are caught: Chromium run with --enable-logging=stderr writes every console
// message of the page, its own errors included (a blocked fetch, a Content Security Policy
// violation, an uncaught exception), as a ":CONSOLE" line on stderr. The pages hold no script,
// so a correct page writes none: any such line fails the test. A control page that breaks the
// rules on purpose must produce such lines, so a browser that stopped logging them fails the
// test instead of passing it silently.
//
// How printing is checked: Chromium prints the page to PDF (--print-to-pdf), and the PDF's page
// count (its page tree's /Count) says how much was printed. A page whose reference sections are
// collapsed must print as many pages as the same page with every one of them open; the same
// page without its print rule for collapsed sections must print fewer, so the count is shown to
// see what a collapsed section leaves out.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "class_fixture.hpp"
#include "html_dom.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::HtmlDom;
using lab_test::run_lab;

namespace {

std::string g_chromium;  // the browser's command, found by main

// $LAB_CHROMIUM, else the first of Debian's and others' names on PATH; "" when none.
std::string find_chromium() {
    if (const char* env = std::getenv("LAB_CHROMIUM"); env && *env) return fs::exists(env) ? env : "";
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
        for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
            if (!dir.empty() && fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
    return "";
}

struct Loaded {
    int exit_code = -1;
    std::string dom;                     // the DOM after load, as Chromium serialises it
    std::vector<std::string> console;    // console lines the page caused
    fs::path screenshot;
};

// Loads `page` once: its DOM on stdout, its console on stderr, a 1280x2000 screenshot.
Loaded load(const fs::path& page, const fs::path& work) {
    static int n = 0;
    const std::string id = std::to_string(++n);
    Loaded l;
    l.screenshot = work / ("shot" + id + ".png");
    const fs::path err = work / ("console" + id + ".txt"), out = work / ("dom" + id + ".html");
    const std::string cmd = "timeout 120 '" + g_chromium + "' --headless --disable-gpu --no-sandbox --no-first-run " +
                            "--user-data-dir='" + (work / ("profile" + id)).string() + "' --enable-logging=stderr --v=0 " +
                            "--window-size=1280,2000 --screenshot='" + l.screenshot.string() + "' --dump-dom 'file://" +
                            fs::absolute(page).string() + "' >'" + out.string() + "' 2>'" + err.string() + "'";
    l.exit_code = std::system(cmd.c_str());
    l.dom = lab_test::read_file(out);
    std::istringstream lines(lab_test::read_file(err));
    for (std::string line; std::getline(lines, line);)
        if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) l.console.push_back(line);
    return l;
}

// How many pages Chromium prints `page` on: the largest /Count of the PDF's page tree (the root's).
int printed_pages(const fs::path& page, const fs::path& work) {
    static int n = 0;
    const std::string id = std::to_string(++n);
    const fs::path pdf = work / ("print" + id + ".pdf");
    const std::string cmd = "timeout 120 '" + g_chromium + "' --headless --disable-gpu --no-sandbox --no-first-run " +
                            "--user-data-dir='" + (work / ("print-profile" + id)).string() + "' --no-pdf-header-footer " +
                            "--print-to-pdf='" + pdf.string() + "' 'file://" + fs::absolute(page).string() + "' >/dev/null 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string text = lab_test::read_file(pdf);
    int pages = 0;
    for (std::size_t at = text.find("/Count "); at != std::string::npos; at = text.find("/Count ", at + 1))
        pages = std::max(pages, std::atoi(text.c_str() + at + 7));
    return pages;
}

// `text` with every `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
    return text;
}

// A PNG's pixels, 8-bit RGB or RGBA (what Chromium writes), row by row after unfiltering.
struct Image {
    std::uint32_t width = 0, height = 0, channels = 0;
    std::vector<std::uint8_t> pixels;
};

std::uint32_t be32(const std::string& s, std::size_t at) {
    return (std::uint32_t(std::uint8_t(s[at])) << 24) | (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

Image decode_png(const fs::path& file) {
    const std::string png = lab_test::read_file(file);
    REQUIRE(png.size() > 8);
    REQUIRE(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    Image img;
    std::string idat;
    for (std::size_t pos = 8; pos + 8 <= png.size();) {
        const std::uint32_t len = be32(png, pos);
        const std::string type = png.substr(pos + 4, 4);
        if (type == "IHDR") {
            img.width = be32(png, pos + 8), img.height = be32(png, pos + 12);
            REQUIRE(png[pos + 16] == 8);  // bit depth
            const int colour = png[pos + 17];
            REQUIRE((colour == 2 || colour == 6));
            img.channels = colour == 2 ? 3 : 4;
        } else if (type == "IDAT") {
            idat += png.substr(pos + 8, len);
        }
        pos += 12 + len;
    }
    const std::size_t stride = std::size_t(img.width) * img.channels;
    std::vector<std::uint8_t> raw((stride + 1) * img.height);
    uLongf size = raw.size();
    REQUIRE(uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) == Z_OK);
    REQUIRE(size == raw.size());
    img.pixels.resize(stride * img.height);
    for (std::size_t y = 0; y < img.height; ++y) {
        const std::uint8_t filter = raw[y * (stride + 1)];
        const std::uint8_t* in = &raw[y * (stride + 1) + 1];
        std::uint8_t* row = &img.pixels[y * stride];
        const std::uint8_t* up = y ? &img.pixels[(y - 1) * stride] : nullptr;
        for (std::size_t x = 0; x < stride; ++x) {
            const int a = x >= img.channels ? row[x - img.channels] : 0, b = up ? up[x] : 0,
                      c = up && x >= img.channels ? up[x - img.channels] : 0;
            int predicted = 0;
            switch (filter) {
                case 1: predicted = a; break;
                case 2: predicted = b; break;
                case 3: predicted = (a + b) / 2; break;
                case 4: {
                    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
                    predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                    break;
                }
                default: break;
            }
            row[x] = std::uint8_t(in[x] + predicted);
        }
    }
    return img;
}

// How much a screenshot shows: the share of its pixels that are not white, and how many
// colours it has (counted up to 1000).
struct Paint {
    double inked = 0;
    std::size_t colours = 0;
};

Paint paint(const fs::path& shot) {
    REQUIRE(fs::exists(shot));
    const Image img = decode_png(shot);
    CHECK(img.width == 1280);
    std::size_t inked = 0;
    std::set<std::uint32_t> colours;
    for (std::size_t i = 0; i + 2 < img.pixels.size(); i += img.channels) {
        const std::uint32_t rgb = (std::uint32_t(img.pixels[i]) << 16) | (img.pixels[i + 1] << 8) | img.pixels[i + 2];
        if (rgb != 0xFFFFFF) ++inked;
        if (colours.size() < 1000) colours.insert(rgb);
    }
    return {double(inked) / (double(img.width) * img.height), colours.size()};
}

// A page that painted: text, rules and plots cover a good share of it, in more than a few colours.
void check_not_blank(const fs::path& shot) {
    const Paint p = paint(shot);
    INFO("share of non-white pixels " << p.inked << ", colours " << p.colours);
    CHECK(p.inked > 0.02);
    CHECK(p.colours > 16);
}

// What every page must do in a browser.
HtmlDom check_loads(const fs::path& page, const fs::path& work) {
    CAPTURE(page);
    const Loaded l = load(page, work);
    REQUIRE(l.exit_code == 0);
    std::string console;
    for (const auto& line : l.console) console += line + "\n";
    INFO("console:\n" << console);
    CHECK(l.console.empty());
    REQUIRE(!l.dom.empty());
    check_not_blank(l.screenshot);
    return HtmlDom(l.dom);
}

}  // namespace

TEST_CASE("the console check hears a page that fetches, runs script and throws", "[report-browser]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "broken.html",
                         "<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" "
                         "content=\"default-src 'none'\"></head><body><p>broken</p><img src=\"https://example.invalid/x.png\">"
                         "<script>undefinedFunction()</script></body></html>");
    const Loaded l = load(d / "broken.html", d.path());
    REQUIRE(l.exit_code == 0);
    CHECK(l.console.size() >= 2);  // the blocked image and the blocked script
}

TEST_CASE("the screenshot check sees a blank page as blank", "[report-browser]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "blank.html", "<!doctype html><html><head><meta charset=\"utf-8\"></head><body></body></html>");
    const Loaded l = load(d / "blank.html", d.path());
    REQUIRE(l.exit_code == 0);
    const Paint p = paint(l.screenshot);
    CHECK(p.inked < 0.001);
    CHECK(p.colours <= 2);
}

TEST_CASE("every fixture run's page loads in Chromium without a console message, whole, and paints", "[report-browser]") {
    lab_test::TempDir d;
    std::vector<fs::path> runs;
    for (const auto& e : fs::directory_iterator(lab_test::source_root() / "tests/fixtures/runs/cpu")) runs.push_back(e.path());
    std::sort(runs.begin(), runs.end());
    for (const auto& run : runs) {
        const fs::path page = d / (run.stem().string() + ".html");
        auto r = run_lab({"report", run.string(), "--out", page.string()});
        REQUIRE(r.exit_code == 0);
        HtmlDom dom = check_loads(page, d.path());
        for (const char* id : {"device", "experiments", "measurements", "plots", "teaching", "values", "answer"}) {
            CAPTURE(run.filename(), id);
            CHECK(dom.count(std::string("//section[@id='") + id + "']") == 1);
        }
        // A plot, or the note that says why the roofline is not drawn (02.09 measures no FLOP).
        CHECK(dom.count("//section[@id='plots']/figure/svg") + dom.count("//section[@id='plots']/p[@data-plot]") >= 1);
        CHECK(dom.count("//table[@class='workloads']/tbody/tr") >= 1);
        CHECK(dom.count("//script") == 0);
    }
}

TEST_CASE("a run's page prints its collapsed reference sections whole", "[report-browser]") {
    lab_test::TempDir d;
    const fs::path run = lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json";
    REQUIRE(run_lab({"report", run.string(), "--out", (d / "closed.html").string()}).exit_code == 0);
    const std::string page = lab_test::read_file(d / "closed.html");
    REQUIRE(page.find("<details>") != std::string::npos);
    const std::string rule = "details::details-content { content-visibility: visible; display: block; }";
    REQUIRE(page.find(rule) != std::string::npos);
    lab_test::write_file(d / "open.html", replaced(page, "<details>", "<details open>"));
    lab_test::write_file(d / "no-rule.html", replaced(page, rule, ""));
    const int closed = printed_pages(d / "closed.html", d.path()), open = printed_pages(d / "open.html", d.path());
    const int without_rule = printed_pages(d / "no-rule.html", d.path());
    INFO("pages: collapsed " << closed << ", opened " << open << ", collapsed without the print rule " << without_rule);
    CHECK(closed >= 2);
    CHECK(closed == open);
    CHECK(without_rule < closed);
}

TEST_CASE("the class page and each run's page beside it load in Chromium without a console message, and paint", "[report-browser]") {
    lab_test::ClassFixture cls;
    lab_test::TempDir work;
    const fs::path out = cls / "out/class.html";
    auto r = run_lab({"grade", cls.submissions().string(), "--out", (cls / "gradebook.csv").string(), "--report", out.string()},
                     cls.env());
    REQUIRE(r.exit_code == 0);
    HtmlDom dom = check_loads(out, work.path());
    for (const char* id : {"scores", "questions", "devices", "flags", "students"}) {
        CAPTURE(id);
        CHECK(dom.count(std::string("//section[@id='") + id + "']") == 1);
    }
    CHECK(dom.count("//figure[@id='histogram']/svg") == 1);
    CHECK(dom.count("//figure[@id='devices-plot']/svg") == 1);
    CHECK(dom.count("//script") == 0);  // mallory's name stayed text
    CHECK(dom.text("//section[@id='students']").find(lab_test::kScriptStudent) != std::string::npos);
    for (const auto& e : fs::directory_iterator(cls / "out/class-reports")) {
        if (e.path().extension() != ".html") continue;   // .lab-pages: the list of the pages lab wrote
        HtmlDom page = check_loads(e.path(), work.path());
        CHECK(page.count("//section[@id='summary']") == 1);
        CHECK(page.count("//section[@id='plots']/figure/svg") >= 1);
        CHECK(page.count("//script") == 0);
    }
}

int main(int argc, char** argv) {
    g_chromium = find_chromium();
    if (g_chromium.empty()) {
        std::cout << "skipping the browser tests: no Chromium (install Debian's chromium, or set LAB_CHROMIUM)\n";
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
