// A run's HTML page (`lab report`): every recorded fixture renders with each section, its plots
// inline exactly as `lab run --plots` draws them and its workloads' rows; the sections come in
// reading order, the reference material last and collapsed under a summary that names it, with
// a table of contents that links to each; withheld values read "?" and appear nowhere else;
// text from a record never becomes markup; the page fetches nothing and links nowhere outside
// itself; and it is laid out to print, collapsed sections included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "format.hpp"
#include "html.hpp"
#include "html_dom.hpp"
#include "lesson_host.hpp"
#include "run_html.hpp"
#include "roofline_plot.hpp"
#include "run_plots.hpp"
#include "run_record.hpp"
#include "run_table.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace lab;
using lab_test::HtmlDom;

namespace {

std::vector<fs::path> fixture_runs() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(lab_test::source_root() / "tests/fixtures/runs/cpu"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

LessonHost& host() {
    static LessonHost h;
    return h;
}

// A recorded run, its lesson and its derivation.
struct Recorded {
    nlohmann::json record;
    RawRun raw;
    const LoadedLesson* lesson = nullptr;
    Derivation derivation;
    explicit Recorded(const fs::path& file)
        : record(record::read_record(file)), raw(record::raw_run_from_record(record)), lesson(&host().lesson(raw.lesson_id)),
          derivation(derive_run(*lesson, raw)) {}
    std::string page(const std::set<std::string>& withheld, const std::string& run_file = "runs/run.json") const {
        return render_run_html(RunPage{lesson->info, raw, derivation, withheld, record, run_file});
    }
    std::set<std::string> withheld() const { return record::withheld_metrics(lesson->info, false, raw.device_kind); }
};

// Whether `text` shows the number `value` ("7 GB") as a whole number: not as the tail of another
// ("2.87 GB/s" does not show "7 GB").
bool shows_number(const std::string& text, const std::string& value) {
    for (std::size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + 1))
        if (at == 0 || !(std::isdigit(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '.')) return true;
    return false;
}

}  // namespace

TEST_CASE("every recorded fixture run renders as a page with each section and every plot inline", "[report]") {
    const auto files = fixture_runs();
    REQUIRE(files.size() >= 12);
    for (const auto& file : files) {
        CAPTURE(file.filename().string());
        const Recorded run(file);
        const std::string page = run.page(run.withheld());
        lab_test::check_self_contained(page);
        HtmlDom dom(page);
        for (const char* id : {"device", "experiments", "measurements", "plots", "teaching", "values", "answer"}) {
            CAPTURE(id);
            CHECK(dom.count(std::string("//section[@id='") + id + "']") == 1);
        }
        CHECK(dom.text("//h1").find(run.lesson->info.title) != std::string::npos);
        CHECK(dom.count("//table[@class='workloads']/tbody/tr") == static_cast<int>(run.raw.measurements.size()));
        // The roofline columns where a workload is placed on the roofline: not 02.03's sweeps.
        const int columns = dom.count("//table[@class='workloads']/thead/tr/th");
        CHECK(columns == (run.raw.lesson_id == "02.03" ? 6 : 12));
        // The ceilings each verdict was judged against, where the run measured them after its workloads.
        if (run.raw.lesson_id == "02.12") CHECK(dom.count("//ul[@class='references']/li[starts-with(., 'mystery_1: launch ')]") == 1);
        // 02.04's in-place kernels beat the read references measured after them: said, once.
        if (run.raw.lesson_id == "02.04") CHECK(dom.count("//p[@class='note'][starts-with(., 'A ref above 100%')]") == 1);
        CHECK(dom.count("//table[@class='ceilings']/tbody/tr") >= 3);
        // Each column of the derived values has its heading: the names', the values', the meanings'.
        if (dom.count("//table[@class='values']") == 1)
            CHECK(dom.texts("//table[@class='values']/thead/tr/th") == std::vector<std::string>{"metric", "value", "what it is"});
        CHECK(dom.count("//ul[@class='experiments']/li") == static_cast<int>(run.lesson->info.experiments.size()));
        // The roofline and each of the lesson's own plots, as `lab run --plots` draws them.
        const auto plots = run_plots(run.lesson->info, run.raw, run.derivation, run.withheld());
        // The fp32 ridge's value (one of 02.05's answers) is withheld in a student's view, but for
        // a lesson whose own shown values print it (02.04's teaching): "?" beside it contradicted it.
        if (!plots[0].svg.empty() && run.raw.ceilings.has_flops("fp32.simt")) {
            const bool hidden = plots[0].svg.find("ridge ? FLOP/B") != std::string::npos;
            CHECK(hidden == (run.raw.lesson_id != "02.04"));
            const auto revealed = run_plots(run.lesson->info, run.raw, run.derivation, {});
            CHECK(revealed[0].svg.find("ridge ? FLOP/B") == std::string::npos);
        }
        REQUIRE(plots.size() == 1 + run.derivation.plots.size());
        // A roofline with no point to place is said in a note instead of drawn empty.
        const auto drawn = std::count_if(plots.begin(), plots.end(), [](const RunPlot& p) { return !p.svg.empty(); });
        CHECK(dom.count("//section[@id='plots']/figure[@class='plot']/svg") == static_cast<int>(drawn));
        for (const auto& p : plots)
            if (p.svg.empty()) CHECK(dom.text("//section[@id='plots']/p[@data-plot='" + p.name + "']").find("not drawn") != std::string::npos);
        for (std::size_t i = 0; i < plots.size(); ++i) {
            CAPTURE(plots[i].name);
            CHECK(page.find(html::inline_svg(plots[i].svg, "plot" + std::to_string(i + 1))) != std::string::npos);
        }
        // Plots share a page, so no two elements share an id.
        auto ids = dom.texts("//@id");
        std::sort(ids.begin(), ids.end());
        CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
        CHECK(dom.count("//pre[@class='commands']") == 1);
        CHECK(dom.text("//pre[@class='commands']").find("lab answers " + run.raw.lesson_id + " --run runs/run.json > answers.yaml") !=
              std::string::npos);
        CHECK(dom.text("//pre[@class='commands']").find("lab submit " + run.raw.lesson_id + " answers.yaml --run runs/run.json") !=
              std::string::npos);
    }
}

// Every section of a run page, by id: links to them (a class page's, a bookmark) keep working.
const std::vector<std::string> kSectionIds = {"plots", "measurements", "values", "teaching", "answer", "device", "experiments"};

// Where `id` comes in `order`, or -1.
int position(const std::vector<std::string>& order, const std::string& id) {
    const auto at = std::find(order.begin(), order.end(), id);
    return at == order.end() ? -1 : static_cast<int>(at - order.begin());
}

TEST_CASE("a page reads in order: plots, measurements, what they show, how to answer; then the reference, collapsed", "[report]") {
    for (const auto& file : fixture_runs()) {
        CAPTURE(file.filename().string());
        const Recorded run(file);
        HtmlDom dom(run.page(run.withheld()));
        const std::vector<std::string> order = dom.texts("//main/section/@id");
        for (const auto& id : kSectionIds) {
            CAPTURE(id);
            CHECK(std::count(order.begin(), order.end(), id) == 1);
        }
        CHECK(order.size() == kSectionIds.size());
        // What a student needs, first, in this order; the reference after it.
        CHECK(position(order, "plots") == 0);
        CHECK(position(order, "measurements") == 1);
        CHECK(position(order, "teaching") > position(order, "measurements"));
        CHECK(position(order, "answer") == position(order, "teaching") + 1);
        CHECK(position(order, "device") == position(order, "answer") + 1);
        CHECK(position(order, "experiments") == position(order, "device") + 1);
        // The reference sections, and only they, are collapsed under a summary naming what is in them.
        const std::vector<std::string> reference = dom.texts("//main/section[@class='reference']/@id");
        for (const auto& id : order) {
            CAPTURE(id);
            const bool collapsed = std::find(reference.begin(), reference.end(), id) != reference.end();
            CHECK(collapsed == (position(order, id) > position(order, "answer")));
            const std::string details = "//main/section[@id='" + id + "']/details";
            CHECK(dom.count(details) == (collapsed ? 1 : 0));
            if (!collapsed) continue;
            CHECK(dom.count(details + "[@open]") == 0);
            CHECK(dom.count(details + "/summary/h2") == 1);
            CHECK(dom.count(details + "/*[1][self::summary]") == 1);  // the summary first, as a browser needs it
        }
        const std::string ceilings = std::to_string(dom.count("//section[@id='device']//table[@class='ceilings']/tbody/tr"));
        CHECK(dom.text("//section[@id='device']/details/summary") == "Device and measured ceilings (" + ceilings + " ceilings)");
        const auto experiments = run.lesson->info.experiments.size();
        CHECK(dom.text("//section[@id='experiments']/details/summary") ==
              "Objectives and experiments (" + std::to_string(experiments) + (experiments == 1 ? " experiment)" : " experiments)"));
        CHECK(dom.count("//section[@id='experiments']//ul[@class='experiments']/li") == static_cast<int>(experiments));
        // Derived values read with the measurements when a short list, else as reference, named with their count.
        const int values = dom.count("//table[@class='values']/tbody/tr");
        if (values > 12) {
            CHECK(position(order, "values") == static_cast<int>(order.size()) - 1);
            CHECK(dom.text("//section[@id='values']/details/summary") == "Derived values (" + std::to_string(values) + ")");
        } else {
            CHECK(position(order, "values") == 2);
            CHECK(dom.text("//section[@id='values']/h2") == "Derived values");
        }
    }
}

TEST_CASE("the table of contents links to every section, in the page's order", "[report]") {
    for (const auto& file : fixture_runs()) {
        CAPTURE(file.filename().string());
        const Recorded run(file);
        const auto withheld = run.withheld();
        for (bool with_box : {false, true}) {
            CAPTURE(with_box);
            RunPage page{run.lesson->info, run.raw, run.derivation, withheld, run.record, with_box ? "" : "runs/run.json"};
            if (with_box) page.box = PageBox{"How it was graded", {{"score", "7 / 10"}}, std::nullopt};
            HtmlDom dom(render_run_html(page));
            REQUIRE(dom.count("//nav[@class='toc']") == 1);
            std::vector<std::string> targets;
            for (const auto& href : dom.texts("//nav[@class='toc']/a/@href")) {
                CAPTURE(href);
                REQUIRE(href.rfind('#', 0) == 0);
                CHECK(dom.count("//*[@id='" + href.substr(1) + "']") == 1);
                targets.push_back(href.substr(1));
            }
            std::vector<std::string> sections = dom.texts("//section/@id");
            CHECK(targets == sections);
            CHECK(position(targets, "summary") == (with_box ? 0 : -1));
            CHECK(position(targets, "answer") == (with_box ? -1 : position(targets, "teaching") + 1));
            for (const auto& id : kSectionIds)
                if (id != "answer") CHECK(position(targets, id) >= 0);
        }
    }
}

TEST_CASE("a withheld value reads '?' wherever the page shows it, and its value appears nowhere", "[report]") {
    for (const auto& file : fixture_runs()) {
        CAPTURE(file.filename().string());
        const Recorded run(file);
        const auto withheld = run.withheld();
        const std::string page = run.page(withheld);
        HtmlDom dom(page);
        // Every cell that shows a withheld metric is a '?', marked as withheld.
        int marked = 0;
        for (const std::string& metric : dom.texts("//td[@data-metric]/@data-metric")) {
            CAPTURE(metric);
            const std::string cell = "//td[@data-metric='" + metric + "']";
            if (withheld.count(metric)) {
                CHECK(dom.text(cell) == "?");
                CHECK(dom.text(cell + "/@class").find("withheld") != std::string::npos);
                ++marked;
            } else {
                CHECK(dom.text(cell) != "?");
            }
        }
        CHECK(dom.count("//td[contains(@class, 'withheld')]") == marked);
        // Nor is a graded number written anywhere else: not in the plots (labels, tooltips, data
        // attributes), the teaching text or the derived values. The raw measurements and the
        // ceilings are shown as the console shows them, and may equal an answer a student reads
        // off them (02.11's launch cost is its empty kernel's time). A regime is a word any page
        // uses, so only numbers with a unit are looked for.
        const char* outside_raw = "[not(ancestor::table[@class='workloads' or @class='ceilings'])]";
        std::string derived_text;
        for (const auto& t : dom.texts(std::string("//text()") + outside_raw + " | //@*" + outside_raw)) derived_text += t + "\n";
        // (A value some shown metric also has is no leak: 02.06's GEMV and GEMM at batch 1 share
        // an AI, and only the GEMM's is asked.)
        std::set<std::string> shown_values;
        for (const auto& m : run.derivation.metrics)
            if (!withheld.count(m.name)) shown_values.insert(record::format_value(m));
        for (const auto& name : withheld) {
            const MetricValue* v = run.derivation.find(name);
            if (!v || v->kind == MetricKind::category || v->unit.empty() || v->unit == "ratio") continue;
            if (shown_values.count(record::format_value(*v))) continue;
            CAPTURE(name, record::format_value(*v));
            CHECK_FALSE(shows_number(derived_text, record::format_value(*v)));
        }
        // Which graded values `lab answers` asks for are listed.
        CHECK(dom.count("//ul[@class='asked']/li") ==
              static_cast<int>(std::count_if(run.lesson->info.metrics.begin(), run.lesson->info.metrics.end(),
                                             [&](const MetricDecl& d) { return d.graded && withheld.count(d.name); })));
        // ...as the withheld values, not as all `lab answers` asks: a spec may ask more (02.12's
        // trace questions), and a student's review counted 12 listed against 15 asked.
        CHECK_THAT(page, Catch::Contains("<code>lab answers</code> prints every question"));

        // Revealed: the same cells hold their values.
        HtmlDom revealed(run.page({}));
        CHECK(revealed.count("//td[contains(@class, 'withheld')]") == 0);
        CHECK(revealed.count("//ul[@class='asked']") == 0);
    }
}

TEST_CASE("a run measured on a busy machine says so under its table; a quiet one does not", "[report]") {
    const fs::path runs = lab_test::source_root() / "tests/fixtures/runs/cpu";
    Recorded busy(runs / "02.12-quick-reveal.json");   // recorded beside a build: every workload loaded
    CHECK_THAT(busy.page(busy.withheld()), Catch::Contains("busy machine: 8 of 8 workloads ran while other processes used 0.3 CPUs or more"));
    Recorded quiet(runs / "02.05-quick-reveal.json");  // none over 0.1 CPUs
    CHECK_THAT(quiet.page(quiet.withheld()), !Catch::Contains("busy machine:"));
}

TEST_CASE("a run in a container shows the CPU quota and memory limit behind its thread count and memory", "[report]") {
    Recorded run(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json");
    CHECK_THAT(run.page(run.withheld()), !Catch::Contains("cpu quota") && !Catch::Contains("memory limit"));
    run.raw.facts.extra["cpu_quota"] = "the cgroup CPU quota is 2 CPUs of time";
    run.raw.facts.extra["memory_limit"] = "the cgroup memory limit, 4.0 GiB, is the memory";
    HtmlDom dom(run.page(run.withheld()));
    CHECK(dom.text("//dl[@class='facts']/dt[.='cpu quota']/following-sibling::dd[1]") == "the cgroup CPU quota is 2 CPUs of time");
    CHECK(dom.text("//dl[@class='facts']/dt[.='memory limit']/following-sibling::dd[1]") == "the cgroup memory limit, 4.0 GiB, is the memory");
}

TEST_CASE("text from a record is shown as text, never as markup", "[report]") {
    Recorded run(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json");
    const std::string evil = "<script>alert(1)</script>";
    run.raw.options.student = evil;
    run.raw.facts.name = "<img src=x onerror=alert(2)>";
    run.raw.facts.extra["virtualised"] = "</dd><iframe src=//evil.example>";
    run.record["notes"] = {"<a href=\"https://evil.example\">click</a>"};
    run.record["started_at"] = "\"><b>bold</b>";
    run.raw.skipped.push_back({"<svg onload=alert(3)>", "it's <b>not</b> here & \"quoted\""});
    const std::string page = run.page(run.withheld(), "runs/<it's> & \"q\".json");
    lab_test::check_self_contained(page);
    HtmlDom dom(page);
    CHECK(dom.count("//b") == 0);
    CHECK(dom.count("//a[contains(@href, 'evil')]") == 0);
    CHECK(dom.text("//header").find(evil) != std::string::npos);  // shown as the text it is
    CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    CHECK(page.find("<script") == std::string::npos);
    CHECK(page.find("<img") == std::string::npos);
    CHECK(page.find("<iframe") == std::string::npos);
    // The run file is quoted for the shell, then escaped for the page.
    CHECK(dom.text("//pre[@class='commands']").find("--run 'runs/<it'\\''s> & \"q\".json'") != std::string::npos);
}

TEST_CASE("a page keeps its tables and plots whole when printed", "[report]") {
    const std::string page = html::page("t", "<p>x</p>");
    const auto print = page.find("@media print");
    REQUIRE(print != std::string::npos);
    const std::string css = page.substr(print);
    CHECK(css.find("figure.plot, pre, .box, dl.facts { break-inside: avoid;") != std::string::npos);
    CHECK(css.find("table { font-size: 8pt; break-inside: avoid;") != std::string::npos);
    CHECK(css.find("thead { display: table-header-group; }") != std::string::npos);
    CHECK(css.find("tr, td, th { break-inside: avoid;") != std::string::npos);
    CHECK(css.find("print-color-adjust: exact") != std::string::npos);
    // Collapsed sections print whole, and with no script: the page's policy runs none.
    CHECK(css.find("details::details-content { content-visibility: visible; display: block; }") != std::string::npos);
    CHECK(page.find("script-src") == std::string::npos);
    CHECK(css.find("@supports not selector(::details-content) { @media print { .print-hint { display: block; } } }") !=
          std::string::npos);
}

TEST_CASE("html helpers: escaping, relative links, inline SVG ids, shell quoting", "[report]") {
    CHECK(html::escape("a<b>&\"c\"'d'") == "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    CHECK(html::escape("µs 2^26") == "µs 2^26");
    CHECK(html::url_path("class-reports/alice_1.html") == "class-reports/alice_1.html");
    CHECK(html::url_path("../my class#1.html") == "../my%20class%231.html");
    CHECK(html::url_path("javascript:alert(1)") == "javascript%3Aalert%281%29");

    const std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">"
                            "<defs><clipPath id=\"plot-area\"><rect/></clipPath></defs><g clip-path=\"url(#plot-area)\">"
                            "<use href=\"#plot-area\"/><text data-id=\"x\">id=\"no\"</text></g></svg>\n";
    const std::string inlined = html::inline_svg(svg, "p1");
    CHECK(inlined.rfind("<svg", 0) == 0);
    CHECK(inlined.find("<?xml") == std::string::npos);
    CHECK(inlined.find("id=\"p1-plot-area\"") != std::string::npos);
    CHECK(inlined.find("url(#p1-plot-area)") != std::string::npos);
    CHECK(inlined.find("href=\"#p1-plot-area\"") != std::string::npos);
    CHECK(inlined.find("data-id=\"x\"") != std::string::npos);

    CHECK(shell_quote("runs/02.05-20260101.json") == "runs/02.05-20260101.json");
    CHECK(shell_quote("my runs/a.json") == "'my runs/a.json'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("") == "''");
}

TEST_CASE("a workload timed once says so in the noise column, rather than a spread of 0.0%", "[report]") {
    Recorded run(lab_test::source_root() / "tests/fixtures/runs/cpu/02.07-quick-reveal.json");
    REQUIRE_FALSE(run.raw.measurements.empty());
    run.raw.measurements[0].time.samples = 1;
    run.raw.measurements[0].time.noise = 0;
    const auto rows = workload_rows(run.raw, run.derivation, {});
    CHECK(rows[0].noise == "1 sample");
    CHECK(rows[1].noise.back() == '%');
    HtmlDom dom(run.page({}));
    CHECK_THAT(dom.text("//table[@class='workloads']/tbody/tr[1]/td[4]"), Catch::StartsWith("1 sample"));
}

TEST_CASE("a roof raised to a workload's rate or not trusted is drawn dashed and says so", "[report]") {
    // Drawn like a calibrated roof, fp64 'raised to dgemm' put dgemm on its own roof by
    // construction, and a roof measured under load looked authoritative.
    Recorded run(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    run.raw.ceilings.flops_per_s["fp64.simt"].source = "raised to the rate of workload 'dgemm'";
    run.raw.ceilings.flops_per_s["fp32.simt"].trusted = false;
    run.raw.ceilings.flops_per_s["fp32.simt"].source = "calibration";
    const plot::RooflineChart chart = roofline_chart(run.lesson->info, run.raw, run.derivation, {});
    const std::string svg = plot::render_svg(chart);
    CHECK_THAT(svg, Catch::Contains("(raised to the rate of dgemm)") && Catch::Contains("(not trusted)"));
    CHECK_THAT(svg, Catch::Matches("[\\s\\S]*class=\"ceiling\" data-name=\"fp64.simt\"[^>]*stroke-dasharray=[\\s\\S]*"));
    CHECK_THAT(plot::render_terminal(chart), Catch::Contains("fp64.simt") && Catch::Contains("(raised to the rate of dgemm)"));
    // A plain calibrated roof says nothing more.
    run.raw.ceilings.flops_per_s["fp32.simt"].trusted = true;
    CHECK_THAT(plot::render_svg(roofline_chart(run.lesson->info, run.raw, run.derivation, {})), !Catch::Contains("(not trusted)"));
}

TEST_CASE("cache sizes read in the largest binary unit that writes them whole", "[report]") {
    DeviceFacts f;
    f.caches = {{1, "Data", 32 << 10, 1}, {1, "Instruction", 32 << 10, 1}, {2, "Unified", 1536 << 10, 1}, {3, "Unified", 32 << 20, 16}};
    CHECK(caches_text(f) == "L1 32 KiB, L2 1536 KiB, L3 32 MiB (shared by 16)");
    CHECK(caches_text(DeviceFacts{}) == "-");
}

TEST_CASE("02.04's plotted roof bends at the ridge, not between two sampled intensities", "[report]") {
    const Recorded run(lab_test::source_root() / "tests/fixtures/runs/cpu/02.04-quick-reveal.json");
    const double ridge = run.raw.ceilings.peak_flops("fp32.simt") / run.raw.ceilings.peak_bandwidth();
    const auto plot = std::find_if(run.derivation.plots.begin(), run.derivation.plots.end(), [](const Plot& p) { return p.name == "intensity"; });
    REQUIRE(plot != run.derivation.plots.end());
    const auto roof = std::find_if(plot->series.begin(), plot->series.end(), [](const PlotSeries& s) { return s.name == "fp32 roof"; });
    REQUIRE(roof != plot->series.end());
    const auto at = std::find(roof->x.begin(), roof->x.end(), ridge);
    REQUIRE(at != roof->x.end());
    CHECK(roof->y[at - roof->x.begin()] == run.raw.ceilings.peak_flops("fp32.simt"));
    CHECK(std::is_sorted(roof->x.begin(), roof->x.end()));
}
