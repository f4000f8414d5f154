// `lab report`, `lab run --report` and `lab grade --report` as students and instructors use
// them: where the page goes, what bad input does (exit 2, nothing written), --reveal as `lab
// show` allows it, and a class's pages: every link resolves to a page written beside it, every
// page is self-contained, and a student's name never becomes markup.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <filesystem>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "class_fixture.hpp"
#include "html_dom.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::HtmlDom;
using lab_test::run_lab;

namespace {

fs::path fixture(const std::string& name) { return lab_test::source_root() / "tests/fixtures/runs/cpu" / name; }

std::vector<fs::path> html_files(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".html") out.push_back(e.path());
    return out;
}

}  // namespace

TEST_CASE("lab report writes the page beside the run by default, or where --out says", "[report-cli]") {
    lab_test::TempDir d;
    fs::copy_file(fixture("02.01-quick.json"), d / "02.01 run.json");
    auto r = run_lab({"report", (d / "02.01 run.json").string()});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(fs::exists(d / "02.01 run.html"));
    CHECK(r.out == "report: " + (d / "02.01 run.html").string() + "\n");
    const std::string page = lab_test::read_file(d / "02.01 run.html");
    lab_test::check_self_contained(page);
    HtmlDom dom(page);
    CHECK(dom.count("//td[contains(@class, 'withheld')]") > 0);
    CHECK(dom.text("//pre[@class='commands']").find("--run '" + (d / "02.01 run.json").string() + "'") != std::string::npos);

    auto nested = run_lab({"report", fixture("02.03-quick-reveal.json").string(), "--out", (d / "pages/new/p.html").string()});
    REQUIRE(nested.exit_code == 0);
    CHECK(fs::exists(d / "pages/new/p.html"));
    // Nothing but the page itself is left behind (the atomic write's temporary is gone).
    CHECK(html_files(d / "pages").size() == 1);
    CHECK(std::distance(fs::directory_iterator(d / "pages/new"), fs::directory_iterator()) == 1);
}

// 02.05 asks for fma_few's predicted regime: its measured regime, which agrees away from the ridge,
// is withheld too, in the console table and on the page, and the '?' is explained.
TEST_CASE("a regime a question asks hides its twin in lab show and lab report", "[report-cli]") {
    const fs::path run = fixture("02.05-quick-reveal.json");
    auto show = run_lab({"show", run.string()});
    REQUIRE(show.exit_code == 0);
    std::string fma_few_row;
    std::istringstream lines(show.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("fma_few ", 0) == 0 && fma_few_row.empty()) fma_few_row = line;
    CAPTURE(show.out);
    CHECK(fma_few_row.size() > 2);
    CHECK(fma_few_row.substr(fma_few_row.size() - 2) == " ?");
    CHECK_THAT(fma_few_row, !Catch::Contains("bound"));
    CHECK_THAT(show.out, Catch::Contains("also ? (each would give an asked value away): fma_few.measured_regime"));
    // Revealed, the regime is back.
    auto revealed = run_lab({"show", run.string(), "--reveal"});
    CHECK_THAT(revealed.out, Catch::Contains("memory_bound"));

    lab_test::TempDir d;
    REQUIRE(run_lab({"report", run.string(), "--out", (d / "p.html").string()}).exit_code == 0);
    HtmlDom dom(lab_test::read_file(d / "p.html"));
    CHECK(dom.count("//td[@data-metric='fma_few.measured_regime' and contains(@class, 'withheld')]") == 1);
    CHECK(dom.count("//*[@data-metric='fma_few.measured_regime' and contains(., 'bound')]") == 0);
    CHECK_THAT(dom.text("//section[@id='answer']"), Catch::Contains("fma_few.measured_regime"));
}

TEST_CASE("lab report refuses bad input with exit 2 and writes nothing", "[report-cli]") {
    lab_test::TempDir d;
    SECTION("a missing run") {
        auto r = run_lab({"report", (d / "none.json").string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("none.json"));
    }
    SECTION("an edited run") {
        std::string text = lab_test::read_file(fixture("02.01-quick.json"));
        text.replace(text.find("\"alice\""), 7, "\"alicf\"");
        lab_test::write_file(d / "edited.json", text);
        auto r = run_lab({"report", (d / "edited.json").string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("digest"));
    }
    SECTION("--out a folder, or the run itself") {
        fs::copy_file(fixture("02.01-quick.json"), d / "run.json");
        auto folder = run_lab({"report", (d / "run.json").string(), "--out", d.path().string()});
        CHECK(folder.exit_code == 2);
        CHECK_THAT(folder.err, Catch::Contains("is a folder"));
        auto itself = run_lab({"report", (d / "run.json").string(), "--out", (d / "run.json").string()});
        CHECK(itself.exit_code == 2);
        CHECK_THAT(itself.err, Catch::Contains("run record itself"));
        CHECK(lab_test::read_file(d / "run.json") == lab_test::read_file(fixture("02.01-quick.json")));
    }
    CHECK(html_files(d.path()).empty());
}

TEST_CASE("lab report --reveal shows graded values where the course allows it or the run was revealed", "[report-cli]") {
    lab_test::TempDir d;
    fs::copy(lab_test::source_root() / "configs", d / "configs", fs::copy_options::recursive);
    std::string course = lab_test::read_file(d / "configs/course.yaml");
    course = std::regex_replace(course, std::regex("allow_reveal: true"), "allow_reveal: false");
    lab_test::write_file(d / "configs/course.yaml", course);
    const std::map<std::string, std::string> strict = {{"LAB_CONFIG_DIR", (d / "configs").string()}};

    auto refused = run_lab({"report", fixture("02.01-quick.json").string(), "--out", (d / "a.html").string(), "--reveal"}, strict);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("does not allow --reveal") && Catch::Contains("course.yaml)") && Catch::Contains("fix: leave out --reveal"));
    CHECK_FALSE(fs::exists(d / "a.html"));

    auto allowed = run_lab({"report", fixture("02.01-quick.json").string(), "--out", (d / "b.html").string(), "--reveal"});
    REQUIRE(allowed.exit_code == 0);
    CHECK(HtmlDom(lab_test::read_file(d / "b.html")).count("//td[contains(@class, 'withheld')]") == 0);

    // A run recorded with --reveal already holds every value.
    auto recorded = run_lab({"report", fixture("02.05-quick-reveal.json").string(), "--out", (d / "c.html").string(), "--reveal"},
                            strict);
    REQUIRE(recorded.exit_code == 0);
    HtmlDom c(lab_test::read_file(d / "c.html"));
    CHECK(c.count("//td[contains(@class, 'withheld')]") == 0);
    CHECK(c.text("//section[@id='answer']").find("recorded with --reveal") != std::string::npos);
}

TEST_CASE("lab run --report writes the page of the run it just measured, after its record", "[report-cli]") {
    lab_test::TempDir d;
    auto r = run_lab({"run", "02.05", "--quick", "--device", "cpu", "--student", "alice", "--out", (d / "run.json").string(),
                      "--report", (d / "page.html").string()});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("report: " + (d / "page.html").string()));
    const std::string page = lab_test::read_file(d / "page.html");
    lab_test::check_self_contained(page);
    HtmlDom dom(page);
    CHECK(dom.count("//section[@id='plots']/figure/svg") >= 1);
    const auto record = nlohmann::json::parse(lab_test::read_file(d / "run.json"));
    CHECK(dom.text("//footer").find(record["digest"].get<std::string>()) != std::string::npos);
    CHECK(dom.text("//pre[@class='commands']").find("--run " + (d / "run.json").string()) != std::string::npos);

    auto bad = run_lab({"run", "02.05", "--quick", "--device", "cpu", "--out", (d / "run2.json").string(), "--report", d.path().string()});
    CHECK(bad.exit_code == 2);
    CHECK_FALSE(fs::exists(d / "run2.json"));  // refused before measuring
}

TEST_CASE("lab grade --report writes the class page and a page per readable run, every link resolving", "[report-cli]") {
    lab_test::ClassFixture cls;
    const fs::path out = cls / "out/class.html";
    auto r = run_lab({"grade", cls.submissions().string(), "--out", (cls / "gradebook.csv").string(), "--report", out.string()},
                     cls.env());
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("class report: " + out.string() + " (5 run pages in " + (cls / "out/class-reports").string()));
    REQUIRE(fs::exists(out));
    const auto pages = html_files(cls / "out");
    CHECK(pages.size() == 6);  // the class and five runs: dave handed in no run
    for (const auto& p : pages) {
        CAPTURE(p);
        lab_test::check_self_contained(lab_test::read_file(p));
    }

    const std::string page = lab_test::read_file(out);
    HtmlDom dom(page);
    // Every relative link resolves to a file written beside the page, and back.
    const auto hrefs = dom.texts("//a/@href[not(starts-with(., '#'))]");
    const std::set<std::string> links(hrefs.begin(), hrefs.end());
    CHECK(links.size() == 5);
    for (const auto& href : links) {
        CAPTURE(href);
        REQUIRE(fs::exists(out.parent_path() / href));
        HtmlDom student(lab_test::read_file(out.parent_path() / href));
        const std::string back = student.text("//a[1]/@href");
        CHECK(back == "../class.html");
        CHECK(fs::equivalent((out.parent_path() / href).parent_path() / back, out));
        CHECK(student.count("//section[@id='summary']") == 1);
        CHECK(student.count("//section[@id='answer']") == 0);
    }
    // The statuses the gradebook gives, each on the page; the name that is markup shown as text.
    CHECK(dom.count("//table[@class='submissions']/tbody/tr") == 6);
    CHECK(dom.count("//table[@class='refused']/tbody/tr") >= 1);
    CHECK(dom.count("//table[@class='groups']/tbody/tr") >= 1);
    CHECK(dom.count("//table[@class='mismatches']/tbody/tr[td[2]='" + std::string(lab_test::kScriptStudent) + "']") == 1);
    CHECK(page.find("<script") == std::string::npos);
    CHECK(dom.count("//i") == 0);
    // Two devices on the roofline: the class's machine and erin's slower laptop.
    CHECK(dom.count("//table[@class='devices']/tbody/tr") == 2);
    CHECK(dom.count("//figure[@id='devices-plot']/svg//g[@class='series']") == 4);  // each device: its runs' ridges and its roof
    CHECK(dom.count("//figure[@id='histogram']/svg") == 1);
    CHECK(lab_test::read_file(cls / "out/class-reports/mallory.html").find("<script") == std::string::npos);

    SECTION("--json names the page") {
        auto j = run_lab({"grade", cls.submissions().string(), "--out", (cls / "g2.csv").string(), "--report",
                          (cls / "again.html").string(), "--json"},
                         cls.env());
        REQUIRE(j.exit_code == 0);
        CHECK(nlohmann::json::parse(j.out)["report"] == (cls / "again.html").string());
    }
    SECTION("--report a folder is refused before grading") {
        auto bad = run_lab({"grade", cls.submissions().string(), "--out", (cls / "g3.csv").string(), "--report", (cls / "out").string()},
                           cls.env());
        CHECK(bad.exit_code == 2);
        CHECK_FALSE(fs::exists(cls / "g3.csv"));
    }
}

// The pages folder is the operator's too: a second --report removes the pages of submissions no
// longer in the class (they would stay, linked from nowhere, looking current), and nothing else.
TEST_CASE("lab grade --report again removes the pages of submissions now gone, and no file it did not write", "[report-cli]") {
    lab_test::ClassFixture cls;
    const fs::path out = cls / "out/class.html", pages = cls / "out/class-reports";
    auto grade = [&] {
        return run_lab({"grade", cls.submissions().string(), "--out", (cls / "gradebook.csv").string(), "--report", out.string()}, cls.env());
    };
    fs::create_directories(pages);
    lab_test::write_file(pages / "notes.html", "my notes\n");   // named as a page would be
    lab_test::write_file(pages / "todo.txt", "ask erin\n");
    lab_test::write_file(cls / "out/keep.html", "mine\n");
    auto first = grade();
    CAPTURE(first.out, first.err);
    REQUIRE(first.exit_code == 0);
    REQUIRE(fs::exists(pages / "erin_3456.html"));
    CHECK_THAT(first.out, !Catch::Contains("removed"));

    fs::remove_all(cls.submissions() / "erin_3456");   // withdrawn
    // The list of pages is a file anyone can edit: a name outside the folder is never removed.
    std::ofstream(pages / ".lab-pages", std::ios::app) << "../keep.html\n";
    auto again = grade();
    CAPTURE(again.out, again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_FALSE(fs::exists(pages / "erin_3456.html"));
    CHECK_THAT(again.out, Catch::Contains("(4 run pages in " + pages.string() + "; removed 1 page of the last report whose submission is gone)"));
    CHECK(fs::exists(pages / "alice_1234.html"));
    CHECK(lab_test::read_file(pages / "notes.html") == "my notes\n");
    CHECK(lab_test::read_file(pages / "todo.txt") == "ask erin\n");
    CHECK(lab_test::read_file(cls / "out/keep.html") == "mine\n");
    CHECK(html_files(cls / "out").size() == 7);   // the class, four runs, notes.html and keep.html
    CHECK(lab_test::read_file(out).find("erin_3456.html") == std::string::npos);

    auto third = grade();   // nothing gone since: nothing removed
    REQUIRE(third.exit_code == 0);
    CHECK_THAT(third.out, Catch::Contains("(4 run pages in ") && !Catch::Contains("removed"));
}

// A grading operator killed `lab grade --report` (kill -9) during a regrade: the run pages were
// of the new grading and the gradebook of the old, with nothing to say so, and half-written
// temporary files stayed in the pages folder. The next run removes what a stopped one left and
// says that it wrote the whole set again.
TEST_CASE("lab grade --report after a killed one removes its temporary files and marker, and says it wrote everything again",
          "[report-cli]") {
    lab_test::ClassFixture cls;
    const fs::path out = cls / "out/class.html", pages = cls / "out/class-reports", book = cls / "out/gradebook.csv";
    auto grade = [&] {
        return run_lab({"grade", cls.submissions().string(), "--out", book.string(), "--report", out.string()}, cls.env());
    };
    REQUIRE(grade().exit_code == 0);
    // What a kill left: write_file_atomically's temporaries, and the marker of a set half-written.
    lab_test::write_file(pages / ".alice_1234.html.Xy12Zw", "<html>half");
    lab_test::write_file(cls / "out/.gradebook.csv.Ab34Cd", "folder,stu");
    lab_test::write_file(cls / "out/.class.html.Ef56Gh", "<html>");
    lab_test::write_file(cls / "out/gradebook.csv.incomplete", "lab grade began writing ...\n");
    auto again = grade();
    CAPTURE(again.out, again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.err, Catch::Contains("note: an earlier `lab grade` stopped while writing " + book.string() +
                                          " and its class report: this one wrote them all again"));
    CHECK_FALSE(fs::exists(pages / ".alice_1234.html.Xy12Zw"));
    CHECK_FALSE(fs::exists(cls / "out/.gradebook.csv.Ab34Cd"));
    CHECK_FALSE(fs::exists(cls / "out/.class.html.Ef56Gh"));
    CHECK_FALSE(fs::exists(cls / "out/gradebook.csv.incomplete"));
    CHECK(fs::exists(pages / "alice_1234.html"));
    // The list of pages names the gradebook they were written with.
    CHECK_THAT(lab_test::read_file(pages / ".lab-pages"), Catch::Contains("# gradebook: " + book.string() + " sha256 "));
    // Nothing made aside is left beside the folder.
    for (const auto& e : fs::directory_iterator(cls / "out")) CHECK(e.path().filename().string().rfind(".class-reports", 0) != 0);
}
