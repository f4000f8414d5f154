// Whether a run is graded at all: its digest, rates above their roofs, edited derived values,
// the binding of answers to a run, student, seed and lesson, quick runs, plugin versions, and
// the ceilings workloads are held against (bandwidth.best, in-run measurements).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include <regex>
#include <string>

#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "reports.hpp"
#include "run_record.hpp"

using namespace lab::grader;
using namespace lab_test::grading;

// ---------------------------------------------------------------------------------------------
// Runs: digest, binding, plausibility

TEST_CASE("a run record whose digest does not match its content is refused as bad input", "[grading]") {
    Grading g;
    json rec = lab::record::read_record(fixture_run_file("02.05-quick-reveal.json"));
    for (auto& w : rec["workloads"])
        if (w["name"] == "triad") w["time_s"]["median"] = w["time_s"]["median"].get<double>() / 2;
    fs::path p = g.write("tampered.json", rec.dump(2));
    std::string msg = input_error([&] { lab::record::read_record(p); });
    CHECK_THAT(msg, Catch::StartsWith(p.string()));
    CHECK_THAT(msg, Catch::Contains("digest"));
}

TEST_CASE("a rate above its roof makes the run implausible even with a valid digest: reported, not graded", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kTriadSide));
    Run run = fixture_run();
    const double bw = run.raw.ceilings.peak_bandwidth();
    const double peak = run.raw.ceilings.peak_flops("fp32.simt");
    SECTION("a triad faster than the DRAM roof") {
        json& w = run.workload("triad");
        w["time_s"]["median"] = w["bytes"].get<double>() / (3 * bw);
        run.reseal();
        fs::path p = g.write("faster.json", run.record.dump());
        REQUIRE_NOTHROW(lab::record::read_record(p));  // the digest is intact: only plausibility can tell
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}, {"triad_side", "memory_bound"}});
        CHECK_FALSE(r.graded);
        CHECK(r.score == 0);
        bool named = false;
        for (const auto& prob : r.problems)
            named = named || (prob.find("implausible") != std::string::npos && prob.find("'triad'") != std::string::npos &&
                              prob.find("DRAM roof") != std::string::npos);
        CHECK(named);
        std::string console = console_report(r);
        CHECK_THAT(console, Catch::Contains("Not graded"));
        CHECK_THAT(console, Catch::Contains("triad"));
        CHECK(json_report(r)["graded"] == false);
        CHECK(json_report(r)["score"] == 0);
        CHECK_FALSE(json_report(r)["problems"].empty());
    }
    SECTION("an FMA kernel faster than the fp32 roof") {
        json& w = run.workload("fma_many");
        w["time_s"]["median"] = w["flops"].get<double>() / (2 * peak);
        run.reseal();
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
        CHECK_FALSE(r.graded);
        bool named = false;
        for (const auto& prob : r.problems)
            named = named || (prob.find("'fma_many'") != std::string::npos && prob.find("fp32.simt roof") != std::string::npos);
        CHECK(named);
    }
}

TEST_CASE("a stored derived value edited and re-sealed makes the run implausible", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    Run run = fixture_run();
    REQUIRE(run.record["metrics"].contains("ridge_point"));
    run.record["metrics"]["ridge_point"]["value"] = run.number("ridge_point") * 1.5;
    run.reseal();
    // The grader grades the re-derived value, not the stored copy, and reports the edit.
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    CHECK(r.score == 0);
    REQUIRE(r.problems.size() == 1);
    CHECK_THAT(r.problems[0], Catch::Contains("ridge_point") && Catch::Contains("differs"));
}

// Deleting the stored values took the check above with them: a record of the installed lesson
// version must hold every metric that version stores (a red-team review halved triad's times and
// deleted the metrics). A record of another minor version may lack one it added since.
TEST_CASE("a record of this lesson version with a stored metric deleted is implausible", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    Run run = fixture_run();
    const std::string version = run.record["lesson"]["plugin_version"];
    REQUIRE(run.record["metrics"].contains("triad.time_s"));
    run.record["metrics"].erase("triad.time_s");
    run.reseal();
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    REQUIRE(r.problems.size() == 1);
    CHECK_THAT(r.problems[0], Catch::Contains("the record stores no triad.time_s, which lesson plugin " + version));
    // Another minor version of the same major: graded (it may not have stored it).
    run.record["lesson"]["plugin_version"] = version.substr(0, version.find('.')) + ".0.999";
    run.reseal();
    CHECK(g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}}).graded);
}

TEST_CASE("an unedited fixture is plausible", "[grading]") {
    // ...-before-conditions: recorded by lab 0.1 before ceilings carried their conditions and runs
    // their in-run ceiling measurements; such records still read, re-derive and grade.
    for (const char* f : {"02.05-quick-reveal.json", "02.01-quick.json", "02.05-quick-reveal-before-conditions.json"}) {
        CAPTURE(f);
        Run run = fixture_run(f);
        CHECK(plausibility_problems(run.record, run.raw, run.derived).empty());
    }
}

TEST_CASE("a workload with a negative FLOP or byte count is implausible", "[grading]") {
    auto problems_with = [](const std::function<void(lab::Workload&)>& edit) {
        Run run = fixture_run();
        auto triad = std::find_if(run.raw.measurements.begin(), run.raw.measurements.end(),
                                  [](const lab::Measurement& m) { return m.workload.name == "triad"; });
        REQUIRE(triad != run.raw.measurements.end());
        edit(triad->workload);
        std::string all;
        for (const auto& p : plausibility_problems(run.record, run.raw, run.derived)) all += p + " | ";
        return all;
    };
    CHECK_THAT(problems_with([](lab::Workload&) {}), !Catch::Contains("negative counts"));
    CHECK_THAT(problems_with([](lab::Workload& w) { w.flops = -w.flops - 1; }), Catch::Contains("workload 'triad' has negative counts"));
    CHECK_THAT(problems_with([](lab::Workload& w) { w.bytes = -w.bytes; }), Catch::Contains("workload 'triad' has negative counts"));
}

TEST_CASE("a workload beating the DRAM roof is implausible only when its bytes outgrow the last-level cache", "[grading]") {
    // A run leaves a cache-sized workload's rate out of the DRAM roof (it ran from the cache), so
    // the grader must not call such a record edited. 02.05's read: 268 MB, made 4x the DRAM roof.
    Run run = fixture_run();
    auto read = std::find_if(run.raw.measurements.begin(), run.raw.measurements.end(), [](const lab::Measurement& m) { return m.workload.name == "read"; });
    REQUIRE(read != run.raw.measurements.end());
    read->time.median = read->workload.bytes / (4 * run.raw.ceilings.peak_bandwidth());
    auto dram_roof_problem = [&] {
        for (const auto& p : plausibility_problems(run.record, run.raw, run.derived))
            if (p.find("above the DRAM roof") != std::string::npos) return true;
        return false;
    };
    run.raw.facts.caches = {{3, "Unified", 32ull << 20, 2}};
    CHECK(dram_roof_problem());
    run.raw.facts.caches = {{3, "Unified", 512ull << 20, 2}};   // the 268 MB fit: from the cache
    CHECK_FALSE(dram_roof_problem());
}

TEST_CASE("answers bound to another run, student or lesson are refused as bad input", "[grading]") {
    Grading g;
    Run run = fixture_run();
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    const std::string claim = num(run.number("ridge_point"));
    SECTION("another student's name") {
        AnswersFile a = g.answers(run, {{"ridge_point", claim}}, "bob");
        std::string msg = input_error([&] { g.grade_file(spec, run, a); });
        CHECK_THAT(msg, Catch::StartsWith(a.file));
        CHECK_THAT(msg, Catch::Contains("bob") && Catch::Contains("alice"));
    }
    SECTION("the same student written differently is the same student") {
        AnswersFile a = g.answers(run, {{"ridge_point", claim}}, "  Alice ");
        CHECK(g.grade_file(spec, run, a).graded);
    }
    SECTION("another run's digest") {
        std::string text = g.answers_text(run, {{"ridge_point", claim}});
        text = std::regex_replace(text, std::regex("sha256:[0-9a-f]+"), "sha256:" + std::string(64, '0'));
        AnswersFile a = load_answers(g.write("other-run.yaml", text));
        std::string msg = input_error([&] { g.grade_file(spec, run, a); });
        CHECK_THAT(msg, Catch::StartsWith(a.file));
        CHECK_THAT(msg, Catch::Contains("bound to run"));
    }
    SECTION("another lesson") {
        std::string text = g.answers_text(run, {{"ridge_point", claim}});
        text.replace(text.find("02.05"), 5, "02.01");
        AnswersFile a = load_answers(g.write("other-lesson.yaml", text));
        CHECK_THAT(input_error([&] { g.grade_file(spec, run, a); }), Catch::Contains("02.01"));
    }
}

TEST_CASE("a run recorded under another student's seed is not graded for this student", "[grading]") {
    // DESIGN.md: seed = SHA-256(course salt | lesson | student), re-derived by the grader. A
    // record whose student was changed (and re-sealed) keeps the other student's seed and
    // variant; the grader never compares the record's seed with the student's.
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable));
    Run run = fixture_run();
    run.record["student"] = "bob";
    run.reseal();
    bool refused = false;
    try {
        GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))},
                                            {"attainable", num(run.number("attainable_flops_per_s") / 1e9)}});
        refused = !r.graded;
    } catch (const lab::InputError&) {
        refused = true;
    }
    CHECK(refused);
}

TEST_CASE("a run recorded by another student with their own seed grades with that student's variant", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kAttainable));
    Run alice = fixture_run();
    Run bob = fixture_run();
    restudent(bob, "bob");
    CHECK(bob.record["seed"] != alice.record["seed"]);
    GradeReport r = g.grade(spec, bob, {{"ridge_point", num(bob.number("ridge_point"))},
                                        {"attainable", num(bob.number("attainable_flops_per_s") / 1e9)}});
    CHECK(r.graded);
    CHECK(r.student == "bob");
    CHECK(r.score == r.max_score);
}

TEST_CASE("a quick run where the spec does not accept quick runs is not graded, and says why", "[grading]") {
    Grading g;
    Run run = fixture_run();
    REQUIRE(run.raw.options.quick);
    const std::string yaml = "lesson: \"02.05\"\naccept_quick: false\nquestions:\n" + kRidge;
    GradingSpec spec = g.spec(yaml);
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    CHECK(r.score == 0);
    CHECK(r.max_score == 2);
    REQUIRE(r.problems.size() == 1);
    CHECK_THAT(r.problems[0], Catch::Contains("--quick") && Catch::Contains("lab run 02.05"));
    CHECK_THAT(console_report(r), Catch::Contains("--quick"));
    // The course default applies when the spec is silent.
    fs::path silent = g.write("silent.yaml", "lesson: \"02.05\"\nquestions:\n" + kRidge);
    CHECK_FALSE(load_spec(silent, false, "never").accept_quick);
    CHECK(load_spec(silent, true, "never").accept_quick);
}

TEST_CASE("a run of another major plugin version is not graded", "[grading]") {
    Grading g;
    Run run = fixture_run();
    run.record["lesson"]["plugin_version"] = "2.0.0";
    run.reseal();
    GradeReport r = g.grade(g.spec(spec_yaml(kRidge)), run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    REQUIRE_FALSE(r.problems.empty());
    CHECK_THAT(r.problems[0], Catch::Contains("2.0.0"));
}

// ---------------------------------------------------------------------------------------------
// Ceilings the workloads are held against

TEST_CASE("a record whose bandwidth.best is not the largest of its bandwidth ceilings is implausible", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge));
    Run run = fixture_run();
    auto& bw = run.record["device"]["ceilings"]["bandwidth_bytes_per_s"];
    bw["best"]["value"] = bw["best"]["value"].get<double>() * 2;
    run.reseal();
    GradeReport r = g.grade(spec, run, {{"ridge_point", num(run.number("ridge_point"))}});
    CHECK_FALSE(r.graded);
    bool named = false;
    for (const auto& prob : r.problems) named = named || prob.find("bandwidth.best") != std::string::npos;
    CHECK(named);
}

TEST_CASE("in-run ceiling measurements raise the roofs the grader holds workloads against", "[grading]") {
    Grading g;
    GradingSpec spec = g.spec(spec_yaml(kRidge + kTriadSide));
    Run run = fixture_run();
    // The run as if it had started from a stale cache (a calibration made under load: a third of
    // the fp32 ceiling) and measured nothing while running: its FMA kernels beat that roof.
    auto& fp32 = run.record["device"]["ceilings"]["flops_per_s"]["fp32.simt"];
    const double stale = fp32["value"].get<double>() / 3;
    fp32["value"] = stale;
    run.record["device"]["ceiling_measurements"] = json::array();
    run.refresh();
    run.restore_stored_values();
    run.reseal();
    const json& many = run.workload("fma_many");
    REQUIRE(many["flops"].get<double>() / many["time_s"]["median"].get<double>() > 1.1 * stale);
    auto claims = [&] {
        return std::vector<std::pair<std::string, std::string>>{{"ridge_point", num(run.number("ridge_point"))},
                                                                {"triad_side", "memory_bound"}};
    };
    CHECK_FALSE(g.grade(spec, run, claims()).graded);

    // What this lab does instead: the run measures the ceiling again and keeps that as raw data
    // (here the FMA peak kernel's own recorded measurement); the roofs follow it.
    json fma = run.workload("fma_peak_fp32");
    fma.erase("derived");
    run.record["device"]["ceiling_measurements"] =
        json::array({{{"ceiling", "flops.fp32.simt"}, {"purpose", "remeasure"}, {"workloads", {"fma_many"}}, {"measurement", fma}}});
    run.refresh();
    run.restore_stored_values();
    run.reseal();
    const double remeasured = fma["flops"].get<double>() / fma["time_s"]["median"].get<double>();
    CHECK(run.raw.ceilings.peak_flops("fp32.simt") == Approx(std::max(stale, remeasured)));
    CHECK(run.raw.ceilings_at_start.peak_flops("fp32.simt") == Approx(stale));
    GradeReport r = g.grade(spec, run, claims());
    std::string problems;
    for (const auto& prob : r.problems) problems += prob + "\n";
    INFO(problems);
    CHECK(r.graded);
    CHECK(r.score == r.max_score);

    // An evidence entry naming a workload the run does not hold is refused.
    run.record["device"]["ceiling_measurements"].push_back(
        {{"ceiling", "flops.fp32.simt"}, {"purpose", "evidence"}, {"workloads", {"no_such_kernel"}}});
    run.refresh();
    run.reseal();
    CHECK_FALSE(g.grade(spec, run, claims()).graded);
}
