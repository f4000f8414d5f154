// `lab audit`'s decisions on constructed and recorded measurements (no timing is asserted): which
// ceilings decide a verdict (those a graded value depends on), how far a load on the slower run
// excuses a difference, and which submissions an audit leaves out because grading refuses them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "audit.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using nlohmann::json;
using lab_test::run_lab;

namespace {

const lab::LoadedLesson& lesson_02_01() {
    static const lab::LoadedLesson l = lab::load_lesson(lab_test::build_root() / "labs/02_01/lab_02_01.so");
    return l;
}

lab::RawRun fixture_02_01() {
    return lab::record::raw_run_from_record(lab::record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json"));
}

// The metrics configs/grading/02.01.yaml asks about (its questions' `expected: {metric: ...}`).
const std::vector<std::string> kGraded0201 = {"mystery_a.measured_regime", "mystery_b.measured_regime", "mystery_c.measured_regime",
                                              "mystery_c.doubling_ratio", "per_element_ratio"};

std::set<std::string> deciding_0201(const lab::RawRun& run) {
    return lab::cli::deciding_measurements(run, kGraded0201, [](const lab::RawRun& r) { return lesson_02_01().lesson->derivation(r); });
}

// `run` with every workload and ceiling measured quietly (no load), as a quiet audit machine.
lab::RawRun quiet(lab::RawRun run) {
    for (auto& m : run.measurements) m.load = 0;
    for (auto& [pipe, c] : run.ceilings.flops_per_s) c.load = 0, c.trusted = true;
    for (auto& [kernel, c] : run.ceilings.bandwidth_bytes_per_s) c.load = 0, c.trusted = true;
    return run;
}

lab::cli::Audited judged(const lab::RawRun& submitted, const lab::RawRun& again, const lab::cli::DecidingMeasurements& deciding) {
    lab::cli::Audited a;
    lab::cli::judge(a, submitted, again, lab::cli::kAuditTolerance, deciding);
    return a;
}

}  // namespace

TEST_CASE("a run flagged as a copy that reproduces is told not to say who made it", "[integrity-cli]") {
    const lab::RawRun run = quiet(fixture_02_01());
    lab::cli::Audited copy;
    copy.task.why_sampled = "flagged: near_copy:G1";
    lab::cli::judge(copy, run, run, lab::cli::kAuditTolerance, std::nullopt);
    REQUIRE(copy.verdict == "reproduces");
    CHECK_THAT(copy.detail, Contains("not who made the run"));
    lab::cli::Audited sampled;
    sampled.task.why_sampled = "random sample";
    lab::cli::judge(sampled, run, run, lab::cli::kAuditTolerance, std::nullopt);
    CHECK_THAT(sampled.detail, !Contains("who made"));
}

TEST_CASE("an audit's workload rows decide only for workloads a graded value depends on", "[integrity-cli]") {
    // 02.02's questions are arithmetic from the student's seed: no workload's time changes a
    // grade. A review's honest run on a busy 2-vCPU VM was 6.7x and 9.4x its re-measure on two
    // workloads, past what the recorded load excuses, and read does_not_reproduce (exit 1).
    static const lab::LoadedLesson l0202 = lab::load_lesson(lab_test::build_root() / "labs/02_02/lab_02_02.so");
    const lab::RawRun run = lab::record::raw_run_from_record(
        lab::record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.02-quick-reveal.json"));
    const std::vector<std::string> graded = {"question_flops", "question_weight_bytes", "dominant_short", "dominant_long"};
    const auto deciding = lab::cli::deciding_measurements(run, graded, [](const lab::RawRun& r) { return l0202.lesson->derivation(r); });
    CAPTURE(std::vector<std::string>(deciding.begin(), deciding.end()));
    CHECK(std::none_of(deciding.begin(), deciding.end(), [](const std::string& k) { return k.rfind("workload ", 0) == 0; }));
    lab::RawRun busy = run;
    for (auto& m : busy.measurements) m.time.median *= 9.4, m.load = 1.8;
    const auto a = judged(busy, quiet(run), deciding);
    CHECK(a.verdict == "reproduces");
    CHECK_THAT(a.comparison.notes.front(), Contains("no graded value depends on it"));
    // Without the spec's view every workload decides, and the same run does not reproduce.
    CHECK(judged(busy, quiet(run), std::nullopt).verdict == "does_not_reproduce");
    // 02.01's regimes are read from its workloads' times: those decide.
    const std::set<std::string> d0201 = deciding_0201(fixture_02_01());
    CHECK(d0201.count("workload mystery_a work=1.67772e+07"));
}

TEST_CASE("an audit's ceiling rows decide only for ceilings a graded value depends on", "[integrity-cli]") {
    const lab::RawRun run = fixture_02_01();
    REQUIRE(run.ceilings.flops_per_s.count("fp64.simt"));  // measured for 02.01's chain, which no question grades
    const std::set<std::string> deciding = deciding_0201(run);
    CAPTURE(std::vector<std::string>(deciding.begin(), deciding.end()));
    CHECK_FALSE(deciding.count("flops.fp64.simt"));
    // Its mystery kernels' regimes are judged against the fp32 and bandwidth roofs.
    CHECK(deciding.count("flops.fp32.simt"));
    CHECK(deciding.count("bandwidth.best"));
    // No graded metric: no ceiling decides.
    CHECK(lab::cli::deciding_measurements(run, {}, [](const lab::RawRun& r) { return lesson_02_01().lesson->derivation(r); }).empty());

    // The review's case: the submission's fp64 ceiling came from a calibration under load (not
    // trusted), 0.385x the re-measure's; every workload agrees.
    lab::RawRun submitted = run;
    lab::Ceiling& fp64 = submitted.ceilings.flops_per_s.at("fp64.simt");
    fp64.value *= 0.385, fp64.trusted = false, fp64.load = 0.69;
    const lab::RawRun again = quiet(run);

    const auto informed = judged(submitted, again, deciding);
    CHECK(informed.verdict == "reproduces");
    CHECK_THAT(informed.detail, Contains("ceiling fp64.simt: 0.385x") && Contains("no graded value depends on it: information, not a verdict"));

    SECTION("a deciding ceiling marked not trusted is excused where the submission's side was slower, and said so") {
        const auto excused = judged(submitted, again, std::nullopt);  // every ceiling decides
        CHECK(excused.verdict == "inconclusive");
        CHECK_THAT(excused.comparison.problems.back(), Contains("submission's record marks that ceiling not trusted") &&
                                                            Contains("0.69 CPUs"));
    }
    SECTION("a deciding ceiling above the re-measure is not excused by its own record's distrust") {
        lab::RawRun higher = run;
        lab::Ceiling& c = higher.ceilings.flops_per_s.at("fp64.simt");
        c.value *= 1 / 0.385, c.trusted = false, c.load = 0.69;
        CHECK(judged(higher, again, std::nullopt).verdict == "does_not_reproduce");
    }
    SECTION("a forged bandwidth ceiling still decides") {
        lab::RawRun forged = run;
        for (auto& [k, v] : forged.ceilings.bandwidth_bytes_per_s) v.value *= 10;
        CHECK(judged(forged, again, deciding).verdict == "does_not_reproduce");
        CHECK(judged(forged, again, std::nullopt).verdict == "does_not_reproduce");
    }
}

TEST_CASE("an audit compares the launch cost; in 02.01 the doubling test, not the launch, decides overhead", "[integrity-cli]") {
    const lab::RawRun run = fixture_02_01();
    REQUIRE(run.ceilings.launch_s.value > 0);
    // 02.01's overhead-bound mystery is told by its doubling ratio (x2 the work, about the same
    // time), which no launch figure moves: a launch difference there is information.
    CHECK_FALSE(deciding_0201(run).count("launch"));
    lab::RawRun again = quiet(run);
    again.ceilings.launch_s.load = 0, again.ceilings.launch_s.trusted = true, again.ceilings.launch_s.spread = 0.05;
    lab::RawRun submitted = again;
    auto launch_row = [](const lab::cli::Audited& a) {
        for (const auto& r : a.comparison.rows)
            if (r.what == "ceiling launch") return r;
        FAIL("no launch row");
        return lab::cli::AuditRow{};
    };
    SECTION("the same launch cost reproduces") {
        const auto a = judged(submitted, again, deciding_0201(run));
        CHECK(a.verdict == "reproduces");
        CHECK(launch_row(a).within);
    }
    SECTION("a launch cost forged 10x lower is said; it decides where every ceiling does (no spec)") {
        submitted.ceilings.launch_s.value /= 10;
        const auto informed = judged(submitted, again, deciding_0201(run));
        CHECK(informed.verdict == "reproduces");
        CHECK_THAT(informed.detail, Contains("ceiling launch: 0.1x the re-measure") && Contains("information, not a verdict"));
        const auto decided = judged(submitted, again, std::nullopt);
        CHECK(decided.verdict == "does_not_reproduce");
        CHECK_FALSE(launch_row(decided).submission_slower);
    }
    SECTION("an honest launch cost 3x higher under load is excused: the slower side is the submission's") {
        submitted.ceilings.launch_s.value *= 3, submitted.ceilings.launch_s.load = 1.0;
        const auto a = judged(submitted, again, std::nullopt);
        CHECK(a.verdict == "inconclusive");
        CHECK(launch_row(a).submission_slower);
    }
    SECTION("a noisy launch cost widens its own factor") {
        submitted.ceilings.launch_s.value *= 3, submitted.ceilings.launch_s.spread = 0.7;
        CHECK(launch_row(judged(submitted, again, std::nullopt)).within);  // allowed 1 + 3 x (0.7 + 0.05) = 3.25
    }
}

TEST_CASE("the load on the slower run excuses a difference only as far as that load can explain", "[integrity-cli]") {
    using lab::cli::load_explains_up_to;
    // (T + L) / T x kLoadMargin beyond the factor: the cases the constant was set from.
    CHECK(load_explains_up_to(2.5, 2, 0.96) > 5.32);   // honest: 02.01 per_element.small under 0.96 CPUs
    CHECK(load_explains_up_to(2.5, 2, 1.0) > 5.49);    // honest: 02.01 mystery_a_x2 under 1.0 CPUs
    CHECK(load_explains_up_to(2.5, 2, 0.7) > 3.4);     // honest: bench/audit_honesty.sh run 2, 0.7-1.2 CPUs
    CHECK(load_explains_up_to(2.5, 2, 0.67) < 6.44);   // forged: one workload's times doubled, resealed
    CHECK(load_explains_up_to(2.5, 0, 1) == load_explains_up_to(2.5, 1, 1));  // no thread count: one

    const lab::RawRun quiet_run = quiet(fixture_02_01());
    REQUIRE(quiet_run.ceilings.threads == 2);
    // `submitted`: the quiet run with workload `name` `factor` times slower under `load` CPUs.
    auto slowed = [&](const std::string& name, double factor, double load) {
        lab::RawRun r = quiet_run;
        for (auto& m : r.measurements)
            if (m.workload.name == name) m.time.median *= factor, m.time.noise = 0.05, m.load = load;
        for (auto& m : r.measurements) m.time.noise = 0.05;
        return r;
    };
    lab::RawRun again = quiet_run;
    for (auto& m : again.measurements) m.time.noise = 0.05;

    SECTION("an honest run on a busy 2-core machine is excused") {
        for (auto [factor, load] : {std::pair{3.0, 2.0}, std::pair{2.6, 0.7}, std::pair{5.3, 0.96}, std::pair{7.0, 2.0}}) {
            CAPTURE(factor, load);
            const auto a = judged(slowed("mystery_a", factor, load), again, std::nullopt);
            CHECK(a.verdict == "inconclusive");
            CHECK_THAT(a.comparison.problems[0], Contains("but the submission ran slower while other processes used"));
        }
    }
    SECTION("a slowdown the stated load cannot explain counts against the run, and says why") {
        const auto a = judged(slowed("mystery_a", 6.44, 0.67), again, std::nullopt);
        CHECK(a.verdict == "does_not_reproduce");
        CHECK_THAT(a.detail, Contains("6.44x the re-measure") && Contains("0.67 CPUs") && Contains("beside its 2 threads explains at most"));
        CHECK(judged(slowed("mystery_a", 1e4, 2.0), again, std::nullopt).verdict == "does_not_reproduce");
    }
    SECTION("a run of one host thread (a GPU's) is excused by less load") {
        lab::RawRun one = slowed("mystery_a", 5.0, 0.5), again1 = again;
        one.ceilings.threads = again1.ceilings.threads = 1;
        CHECK(judged(one, again1, std::nullopt).verdict == "inconclusive");       // 2.5 x 1.5 x 1.7 = 6.4
        one = slowed("mystery_a", 7.0, 0.5), one.ceilings.threads = 1;
        CHECK(judged(one, again1, std::nullopt).verdict == "does_not_reproduce");
    }
    SECTION("only the slower run is excused: a fast submission claiming load is caught by a quiet re-measure") {
        CHECK(judged(slowed("mystery_a", 1 / 3.0, 2.0), again, std::nullopt).verdict == "does_not_reproduce");
    }
}

TEST_CASE("an audit leaves out runs grading refuses, says which, and names what it samples", "[integrity-cli]") {
    lab_test::TempDir d;
    const fs::path subs = d / "subs";
    const std::map<std::string, std::string> env = {{"LAB_CONFIG_DIR", (lab_test::source_root() / "configs").string()},
                                                    {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}, {"HOME", d.path().string()}};
    // Quick 02.01 runs: configs/grading/02.01.yaml grades full runs only, so both are refused.
    for (const char* student : {"alice", "bob"}) {
        fs::create_directories(subs / student);
        fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json", subs / student / "run.json");
        auto t = run_lab({"answers", "02.01", "--run", (subs / student / "run.json").string()}, env);
        REQUIRE(t.exit_code == 0);
        lab_test::write_file(subs / student / "answers.yaml", t.out);
    }
    SECTION("here: nothing is re-measured, and the refused are listed with the reason") {
        auto r = run_lab({"audit", subs.string(), "--sample", "100%", "--seed", "1", "--json"}, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const json doc = json::parse(r.out);
        CHECK(doc["audited"] == 0);
        REQUIRE(doc["refused_not_sampled"].size() == 2);
        CHECK_THAT(doc["refused_not_sampled"][0]["reason"].get<std::string>(), Contains("quick"));
        CHECK_THAT(r.err, Contains("0 of 0 gradable submissions chosen") && Contains("left out, refused by grading"));
    }
    SECTION("--lesson leaves out runs of another lesson, as lab grade --lesson grades none of them") {
        // An operator's review: the audit sampled a 02.07 run that grading 02.08 refused.
        auto r = run_lab({"audit", subs.string(), "--lesson", "02.05", "--sample", "100%", "--seed", "1", "--json"}, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const json doc = json::parse(r.out);
        REQUIRE(doc["refused_not_sampled"].size() == 2);
        CHECK_THAT(doc["refused_not_sampled"][0]["reason"].get<std::string>(), Contains("a submission of lesson 02.01, not 02.05"));
        auto unknown = run_lab({"audit", subs.string(), "--lesson", "2.5"}, env);
        CHECK(unknown.exit_code == 2);
        CHECK_THAT(unknown.err, Contains("unknown lesson ID '2.5'"));
    }
    SECTION("an --out it cannot write is refused before anything is re-measured") {
        auto r = run_lab({"audit", subs.string(), "--sample", "100%", "--seed", "1", "--out", "/proc/audit.json"}, env);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("cannot write --out in this folder"));
    }
    SECTION("--slurm --dry-run queues none of them") {
        auto r = run_lab({"audit", subs.string(), "--sample", "100%", "--slurm", "--work", (d / "work").string(), "--dry-run"}, env);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, Contains("nothing to submit"));
        CHECK_THAT(r.err, Contains("alice: refused") && Contains("bob: refused"));
    }
}
