// The instructor's class page from a batch result: the score histogram counts what was graded,
// questions are listed most missed first with each share, the class's devices share one
// roofline, every flag and refusal is there with its evidence, submissions link to their pages,
// and nothing a student wrote becomes markup.
#include <catch2/catch.hpp>

#include "class_report.hpp"
#include "html_dom.hpp"
#include "xy_plot.hpp"

using namespace lab;
using namespace lab::grader;
using lab_test::HtmlDom;

namespace {

QuestionResult answered(const std::string& id, Verdict v, double points, double max) {
    QuestionResult q;
    q.question.id = id;
    q.verdict = v;
    q.points = points;
    q.max_points = max;
    return q;
}

BatchEntry graded(const std::string& folder, const std::string& student, std::vector<Verdict> verdicts) {
    BatchEntry e;
    e.folder = folder;
    e.student = student;
    e.lesson = "02.05";
    e.ok = true;
    e.report.graded = true;
    e.report.mode = "practice";
    const char* ids[] = {"ridge_point", "triad_side", "attainable"};
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        const double pts = verdicts[i] == Verdict::correct ? 2 : verdicts[i] == Verdict::partial ? 1 : 0;
        e.report.results.push_back(answered(ids[i], verdicts[i], pts, 2));
        e.report.score += pts;
        e.report.max_score += 2;
    }
    return e;
}

BatchResult sample_class() {
    BatchResult r;
    r.entries.push_back(graded("alice_1", "alice", {Verdict::correct, Verdict::correct, Verdict::correct}));
    r.entries.push_back(graded("bob_2", "bob", {Verdict::wrong, Verdict::correct, Verdict::invalid}));
    r.entries.push_back(graded("mallory", "<script>alert(1)</script>", {Verdict::partial, Verdict::missing, Verdict::wrong}));
    r.entries.back().flags = {"near_copy:G1", "folder_mismatch"};
    r.entries.back().run_student = r.entries.back().student;   // the "holds the run of" column
    r.entries[1].flags = {"near_copy:G1"};
    BatchEntry refused;
    refused.folder = "frank <b>3</b>";
    refused.student = "frank";
    refused.lesson = "02.03";
    refused.ok = true;
    refused.report.problems = {"this run was made with --quick, which this lesson's spec does not accept"};
    r.entries.push_back(refused);
    BatchEntry error;
    error.folder = "dave";
    error.error = "no run record found";
    r.entries.push_back(error);
    r.groups.push_back({"G1", "near_copy", {"bob_2", "mallory"}, "2 runs of 2 students agree on every workload's median within 0.1%"});
    r.most_missed = {{"attainable", 2.0 / 3}, {"ridge_point", 2.0 / 3}, {"triad_side", 1.0 / 3}};
    return r;
}

ClassPage page_of(const BatchResult& r) {
    ClassPage p{r, "Class report: <subs>", "practice", {}, {}, {}};
    p.devices = {{"alice_1", "cpu: AMD EPYC", 230e9, "fp32.simt", 52e9},
                 {"bob_2", "cpu: AMD EPYC", 228e9, "fp32.simt", 51e9},
                 {"mallory", "cuda: <i>H200</i>", 60e12, "fp32.simt", 4.1e12},
                 {"frank <b>3</b>", "cpu: AMD EPYC", 231e9, "fp32.simt", 50e9}};
    p.links = {{"alice_1", "class-reports/alice_1.html"}, {"mallory", "class-reports/mallory.html"}};
    p.no_page = {{"dave", "no run record"}};
    return p;
}

}  // namespace

TEST_CASE("the score histogram counts each graded submission in its tenth of the maximum", "[class-report]") {
    const BatchResult r = sample_class();
    HtmlDom svg(score_histogram_svg(r));
    REQUIRE(svg.count("//g[@class='bin']") == 10);
    // alice 6/6 (100%: the last bin), bob 2/6 (33%), mallory 1/6 (16.7%); refused and errors are not scores.
    CHECK(svg.text("//g[@data-bin='9']/@data-count") == "1");
    CHECK(svg.text("//g[@data-bin='3']/@data-count") == "1");
    CHECK(svg.text("//g[@data-bin='1']/@data-count") == "1");
    int total = 0;
    for (const auto& c : svg.texts("//g[@class='bin']/@data-count")) total += std::stoi(c);
    CHECK(total == 3);
    CHECK(svg.text("//svg/text").find("3 graded submissions") != std::string::npos);

    HtmlDom none(score_histogram_svg(BatchResult{}));
    CHECK(none.count("//g[@class='bin']") == 10);
    CHECK(none.texts("//text").back() == "no submission was graded");
}

TEST_CASE("the class's devices share one roofline: a line per kind of device and each run's ridge", "[class-report]") {
    const ClassPage p = page_of(sample_class());
    const Plot plot = class_devices_plot(p.devices);
    CHECK(plot::plot_problems(plot).empty());
    // Per device, the most common first: its runs' ridges as points, its median roof dashed.
    REQUIRE(plot.series.size() == 4);
    CHECK(plot.series[0].name == "cpu: AMD EPYC (3 runs)");
    CHECK_FALSE(plot.series[0].line);
    CHECK(plot.series[0].x.size() == 3);
    CHECK(plot.series[1].name == "cpu: AMD EPYC (3 runs) roof");
    CHECK(plot.series[2].name == "cuda: <i>H200</i> (1 run)");
    CHECK(plot.series[3].name == "cuda: <i>H200</i> (1 run) roof");
    // The CPU roof is at its runs' median ceilings: a slope, the ridge, the flat roof.
    REQUIRE(plot.series[1].y.size() == 3);
    CHECK_THAT(plot.series[1].y[1], Catch::Matchers::WithinRel(230e9, 1e-12));
    CHECK_THAT(plot.series[1].x[1], Catch::Matchers::WithinRel(230e9 / 51e9, 1e-12));
    // Drawn as a roof: dashed in its device's colour, no markers.
    const std::string svg = plot::render_plot_svg(plot);
    CHECK(svg.find("data-name=\"cpu: AMD EPYC (3 runs) roof\" data-shape=\"none\"") != std::string::npos);
    CHECK(plot.x.log);
    CHECK(plot.y.log);
    // A long name is cut for the legend beside the plot (the table names it in full).
    auto named = p.devices;
    named[2].device = "cuda: NVIDIA GeForce RTX 4090 Laptop GPU";
    const Plot cut = class_devices_plot(named);
    CHECK(cut.series[2].name == "cuda: NVIDIA Ge... (1 run)");
    // A run without ceilings is listed, not drawn.
    auto devices = p.devices;
    devices.push_back({"zed", "cpu: ?", 0, "", 0});
    CHECK(class_devices_plot(devices).series.size() == 4);
}

TEST_CASE("the class page shows scores, questions most missed first, devices, flags and every submission", "[class-report]") {
    const BatchResult r = sample_class();
    const ClassPage p = page_of(r);
    const std::string page = render_class_html(p);
    lab_test::check_self_contained(page);
    HtmlDom dom(page);
    for (const char* id : {"scores", "questions", "devices", "flags", "students"}) {
        CAPTURE(id);
        CHECK(dom.count(std::string("//section[@id='") + id + "']") == 1);
    }
    // The lesson graded: frank's refused 02.03 is not the class's lesson.
    const auto meta = dom.texts("//header/p[@class='meta']");
    REQUIRE(meta.size() == 1);
    CHECK_THAT(meta[0], Catch::Contains("lesson 02.05 ") && !Catch::Contains("02.03"));
    CHECK(dom.count("//figure[@id='histogram']/svg") == 1);
    CHECK(dom.count("//figure[@id='devices-plot']/svg") == 1);
    CHECK(dom.count("//figure[@id='devices-plot']/svg//g[@class='series']") == 4);  // two devices: their runs and their roofs

    // Questions in most_missed order, with their shares.
    const auto questions = dom.texts("//table[@class='questions']/tbody/tr/td[1]");
    CHECK(questions == std::vector<std::string>{"attainable", "ridge_point", "triad_side"});
    const std::string attainable = "//table[@class='questions']/tbody/tr[1]/td";
    CHECK(dom.texts(attainable) == std::vector<std::string>{"attainable", "3", "1 (33.3%)", "0 (0%)", "1 (33.3%)", "0 (0%)",
                                                             "1 (33.3%)", "1 right, 0 partial, 1 wrong, 0 no answer, 1 unreadable"});
    CHECK(dom.count("//table[@class='questions']//svg[@class='share']") == 3);

    // Devices: two kinds, with their runs.
    CHECK(dom.count("//table[@class='devices']/tbody/tr") == 2);
    CHECK(dom.text("//table[@class='devices']/tbody/tr[1]/td[2]") == "3");

    // Flags with their evidence, refusals and errors with their reasons.
    CHECK(dom.text("//table[@class='groups']/tbody/tr/td[4]").find("agree on every workload") != std::string::npos);
    CHECK(dom.text("//table[@class='mismatches']/tbody/tr/td[2]") == "<script>alert(1)</script>");
    CHECK(dom.text("//table[@class='refused']/tbody/tr/td[2]").find("--quick") != std::string::npos);
    CHECK(dom.text("//table[@class='errors']/tbody/tr/td[2]") == "no run record found");

    // Every submission, linked to its page where it has one.
    CHECK(dom.count("//table[@class='submissions']/tbody/tr") == 5);
    CHECK(dom.texts("//table[@class='submissions']//a/@href") ==
          std::vector<std::string>{"class-reports/alice_1.html", "class-reports/mallory.html"});
    CHECK(dom.text("//table[@class='submissions']/tbody/tr[5]/td[8]") == "none: no run record");

    // Names are text: no element came from a student's or a device's name.
    CHECK(dom.count("//b") == 0);
    CHECK(dom.count("//i") == 0);
    CHECK(page.find("<script") == std::string::npos);
    CHECK(dom.text("//h1") == "Class report: <subs>");
}

TEST_CASE("a class page without a single readable run or graded submission still says so", "[class-report]") {
    BatchResult r;
    BatchEntry e;
    e.folder = "dave";
    e.error = "no run record found";
    r.entries.push_back(e);
    ClassPage p{r, "Class report: empty", "course", {}, {}, {}};
    const std::string page = render_class_html(p);
    lab_test::check_self_contained(page);
    HtmlDom dom(page);
    CHECK(dom.count("//figure[@id='histogram']/svg") == 1);
    CHECK(dom.count("//figure[@id='devices-plot']") == 0);
    CHECK(dom.text("//section[@id='devices']").find("No run could be read") != std::string::npos);
    CHECK(dom.text("//section[@id='questions']").find("No submission was graded") != std::string::npos);
    CHECK(dom.text("//header").find("course mode") != std::string::npos);
}

TEST_CASE("the class page tells tampered runs from unreadable files, and says what to do with a flag", "[class-report]") {
    BatchResult r = sample_class();
    BatchEntry tampered;
    tampered.folder = "gina";
    tampered.error = "run.json: the run record's digest does not match its content: the file was edited or corrupted\n  fix: record it again";
    tampered.error_kind = "tampered";
    r.entries.push_back(tampered);
    BatchEntry corrupt;
    corrupt.folder = "hank";
    corrupt.error = "answers.yaml:3: a YAML quote never closed";
    corrupt.error_kind = "unreadable";
    r.entries.push_back(corrupt);
    BatchEntry twice = graded("ivan", "alice", {Verdict::correct});
    twice.flags = {"duplicate_student"};
    r.entries.push_back(twice);
    const std::string page = render_class_html(page_of(r));
    HtmlDom dom(page);
    CHECK(dom.texts("//table[@class='tampered']/tbody/tr/td[1]") == std::vector<std::string>{"gina"});
    CHECK(dom.text("//table[@class='tampered']/tbody/tr/td[2]") ==
          "run.json: the run record's digest does not match its content: the file was edited or corrupted; fix: record it again");
    CHECK(dom.texts("//table[@class='unreadable']/tbody/tr/td[1]") == std::vector<std::string>{"hank"});
    CHECK(dom.texts("//table[@class='errors']/tbody/tr/td[1]") == std::vector<std::string>{"dave"});
    CHECK(dom.texts("//table[@class='duplicates']/tbody/tr/td[1]") == std::vector<std::string>{"ivan"});
    const std::string advice = dom.text("//div[@id='what-to-do']");
    CHECK_THAT(advice, Catch::Contains("lab audit") && Catch::Contains("live re-run") && Catch::Contains("never does"));
}

TEST_CASE("a folder of two lessons has a row, and a page, per lesson", "[class-report]") {
    BatchResult r;
    r.entries.push_back(graded("alice", "alice", {Verdict::correct}));
    r.entries.push_back(graded("alice", "alice", {Verdict::wrong}));
    r.entries.back().lesson = "02.01";
    r.entries.push_back(graded("bob", "bob", {Verdict::correct}));
    CHECK(lab::grader::row_key(r, r.entries[0]) == "alice 02.05");
    CHECK(lab::grader::row_key(r, r.entries[1]) == "alice 02.01");
    CHECK(lab::grader::row_key(r, r.entries[2]) == "bob");
}
