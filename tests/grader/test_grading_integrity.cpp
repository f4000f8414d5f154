// Grading integrity (issue 15): every forgery a tester scored with, rebuilt here with the
// project's own sealing code and graded through the whole pipeline (grade_files: plan replay,
// plausibility, identity), each expecting a refusal or a clear error; and the honest run expecting
// full marks in both modes. The run is 02.05's recorded quick fixture, graded with a copy of the
// shipped configs whose 02.05 spec accepts quick runs (tests/fixtures/grading/02.05.yaml).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "course.hpp"
#include "batch.hpp"
#include "consistency.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "run_record.hpp"
#include "submission.hpp"

using namespace lab_test::grading;
using lab::grader::GradeReport;
using lab::grader::GradingContext;

namespace {

const lab::CourseKey kKey{"test-course-key-0123456789abcdef", "test.key"};

// Configs for the pipeline: the shipped ones, with a 02.05 spec that grades quick runs.
struct Pipeline {
    lab_test::TempDir dir;
    std::unique_ptr<ScopedEnv> env;
    int files = 0;
    Pipeline() {
        fs::copy(lab_test::source_root() / "configs", dir / "configs", fs::copy_options::recursive);
        fs::copy_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml", dir / "configs/grading/02.05.yaml",
                      fs::copy_options::overwrite_existing);
        env = std::make_unique<ScopedEnv>("LAB_CONFIG_DIR", (dir / "configs").string());
    }
    lab::CourseConfig course() const { return lab::load_course(dir / "configs/course.yaml"); }

    // Every question answered right for this run (its own derivation).
    std::string right_answers(const Run& run) const {
        std::string s = fmt::format("lesson: \"02.05\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers:\n", run.raw.options.student, run.digest());
        auto side = [&](const char* w) {
            const lab::MetricValue* m = run.derived.find(std::string(w) + ".predicted_regime");
            return m ? m->text : std::string("memory_bound");
        };
        auto number = [&](const std::string& name) {
            const lab::MetricValue* m = run.derived.find(name);
            return m ? m->number : 1.0;
        };
        s += "  ridge_point: " + num(number("ridge_point")) + " FLOP/B\n";
        s += "  attainable: " + num(number("attainable_flops_per_s") / 1e9) + " GFLOP/s\n";
        s += "  triad_side: " + side("triad") + "\n  fma_few_side: " + side("fma_few") + "\n  fma_many_side: " + side("fma_many") +
             "\n  sgemm_side: " + side("sgemm") + "\n";
        s += "  triad_roof_fraction: " + num(100 * number("triad.roof_fraction")) + "%\n";
        return s;
    }
    GradeReport grade(const Run& run, std::optional<lab::CourseKey> key = std::nullopt,
                      std::optional<std::string> submitter = std::nullopt) {
        const std::string n = std::to_string(files++);
        fs::path rec = dir / ("run" + n + ".json"), ans = dir / ("answers" + n + ".yaml");
        lab_test::write_file(rec, run.record.dump(1));
        lab_test::write_file(ans, right_answers(run));
        GradingContext ctx(std::move(key));
        return lab::grader::grade_files(ctx, "02.05", ans, rec, submitter);
    }
};

// The run as `lab run --token` records it for `student`: their token, the seed it gives, sealed.
// (02.05's workloads do not depend on the seed, so the measurements stay the lesson's plan.)
void retoken(Run& run, const lab::CourseKey& key, const std::string& course, const std::string& student) {
    lab::Token t = lab::issue_token(key, course, student);
    run.record["student"] = t.student;
    run.record["token"] = lab::to_string(t);
    run.record["seed"] = lab::token_seed(t, "02.05").hex;
    run.record["revealed"] = false;
    run.refresh();
    run.restore_stored_values();
    run.reseal();
}

bool refused_with(const GradeReport& r, const std::string& words) {
    if (r.graded) return false;
    for (const auto& p : r.problems)
        if (p.find(words) != std::string::npos) return true;
    UNSCOPED_INFO("problems: " << fmt::format("{}", fmt::join(r.problems, " | ")));
    return false;
}

// The major and minor of the lab that built this grader (LAB_VERSION, "MAJOR.MINOR.PATCH").
int version_part(int i) {
    int v[3] = {0, 0, 0};
    REQUIRE(std::sscanf(LAB_VERSION, "%d.%d.%d", &v[0], &v[1], &v[2]) == 3);
    return v[i];
}
int this_major() { return version_part(0); }
int this_minor() { return version_part(1); }
int this_patch() { return version_part(2); }

// The consistency problems of the recorded 02.05 fixture after `edit` (no seal involved: the
// checks read the record as it stands).
std::vector<std::string> consistency_after(const std::function<void(json&)>& edit) {
    json record = lab::record::read_record(fixture_run_file("02.05-quick-reveal.json"));
    edit(record);
    return lab::grader::consistency_problems(record, lab::record::raw_run_from_record(record));
}

bool has_problem(const std::vector<std::string>& problems, const std::string& words) {
    for (const auto& p : problems)
        if (p.find(words) != std::string::npos) return true;
    UNSCOPED_INFO("problems: " << fmt::format("{}", fmt::join(problems, " | ")));
    return false;
}

// An edit as a forger makes it: the stored display values deleted (so none can disagree) and
// the record sealed again.
void forge(Run& run, const std::function<void(json&)>& edit) {
    edit(run.record);
    run.record.erase("metrics");
    for (auto& w : run.record["workloads"]) w.erase("derived");
    run.reseal();
}

}  // namespace

TEST_CASE("an honest run scores full marks in practice mode and in course mode", "[grading][integrity]") {
    Pipeline p;
    Run practice = fixture_run();
    GradeReport r = p.grade(practice);
    INFO(fmt::format("{}", fmt::join(r.problems, " | ")));
    REQUIRE(r.graded);
    CHECK(r.mode == "practice");
    CHECK(r.score == r.max_score);

    Run course = fixture_run();
    retoken(course, kKey, p.course().course, "alice");
    GradeReport c = p.grade(course, kKey, "Alice");
    INFO(fmt::format("{}", fmt::join(c.problems, " | ")));
    REQUIRE(c.graded);
    CHECK(c.mode == "course");
    CHECK(c.score == c.max_score);
    // A token run graded without the key is practice, and still full marks.
    CHECK(p.grade(course).graded);
}

TEST_CASE("course mode refuses tokenless, anonymous, revealed and foreign-token runs", "[grading][integrity]") {
    Pipeline p;
    const std::string course = p.course().course;
    SECTION("no token (the repository's own fixture, or a practice run)") {
        Run run = fixture_run();
        CHECK(refused_with(p.grade(run, kKey), "without a course token"));
    }
    SECTION("anonymous") {
        Run run = fixture_run();
        restudent(run, "anonymous");
        CHECK(refused_with(p.grade(run, kKey), "anonymous"));
    }
    SECTION("revealed") {
        Run run = fixture_run();
        retoken(run, kKey, course, "alice");
        run.record["revealed"] = true;
        run.reseal();
        CHECK(refused_with(p.grade(run, kKey), "--reveal"));
    }
    SECTION("a token from another course's key") {
        Run run = fixture_run();
        retoken(run, lab::CourseKey{"another-course-key-fedcba9876543210", ""}, course, "alice");
        CHECK(refused_with(p.grade(run, kKey), "not issued by this course's key"));
    }
    SECTION("a classmate's run renamed, with the seed recomputed from the course salt") {
        Run run = fixture_run();
        retoken(run, kKey, course, "alice");
        run.record["student"] = "bob";
        run.record["seed"] = lab::student_seed(p.course(), "02.05", "bob").hex;
        run.reseal();
        CHECK(refused_with(p.grade(run, kKey), "token is alice's"));
    }
    SECTION("a classmate's run renamed with a made-up token") {
        Run run = fixture_run();
        retoken(run, kKey, course, "alice");
        lab::Token guess{"bob", "ABCDEFGHIJKLMNOPQRST"};
        run.record["student"] = "bob";
        run.record["token"] = lab::to_string(guess);
        run.record["seed"] = lab::token_seed(guess, "02.05").hex;
        run.reseal();
        CHECK(refused_with(p.grade(run, kKey), "not issued by this course's key"));
    }
    SECTION("a token whose seed was not used") {
        Run run = fixture_run();
        retoken(run, kKey, course, "alice");
        run.record["seed"] = lab::student_seed(p.course(), "02.05", "alice").hex;
        run.reseal();
        CHECK(refused_with(p.grade(run, kKey), "not the one its token gives"));
    }
}

TEST_CASE("practice mode still refuses a renamed run", "[grading][integrity]") {
    Pipeline p;
    Run run = fixture_run();
    run.record["student"] = "bob";   // alice's seed kept
    run.reseal();
    CHECK(refused_with(p.grade(run), "seed"));
}

TEST_CASE("the submitter must be the run's student (the autograder's identity check)", "[grading][integrity]") {
    Pipeline p;
    Run run = fixture_run();
    CHECK_THAT(input_error([&] { p.grade(run, std::nullopt, "bob"); }), Catch::Contains("recorded for 'alice', but you are 'bob'"));
    CHECK_THAT(input_error([&] { p.grade(run, std::nullopt, ""); }), Catch::Contains("not told who submitted"));
    Run anon = fixture_run();
    restudent(anon, "anonymous");
    CHECK_THAT(input_error([&] { p.grade(anon, std::nullopt, "anonymous"); }), Catch::Contains("not told who submitted"));
    CHECK_THAT(input_error([&] { p.grade(anon, std::nullopt, "bob"); }), Catch::Contains("anonymous run"));
    CHECK(p.grade(run, std::nullopt, " ALICE ").graded);
}

TEST_CASE("tokens: issued per student and course, verified, parsed", "[grading][integrity]") {
    lab::Token a = lab::issue_token(kKey, "course", "Alice Smith");
    CHECK(a.student == "alice_smith");
    CHECK(a.mac.size() == 20);
    CHECK(lab::token_verifies(kKey, "course", a));
    CHECK_FALSE(lab::token_verifies(kKey, "another course", a));
    CHECK(lab::issue_token(kKey, "course", "bob").mac != a.mac);
    auto parsed = lab::parse_token(" alice_smith." + [&] { std::string m = a.mac; for (auto& c : m) c = static_cast<char>(std::tolower(c)); return m; }() + "\n");
    REQUIRE(parsed);
    CHECK(parsed->mac == a.mac);
    CHECK(lab::token_seed(*parsed, "02.05").hex == lab::token_seed(a, "02.05").hex);
    CHECK(lab::token_seed(a, "02.05").hex != lab::token_seed(a, "02.06").hex);
    CHECK_FALSE(lab::parse_token("alice"));
    CHECK_FALSE(lab::parse_token("alice.SHORT"));
    CHECK_FALSE(lab::parse_token(".ABCDEFGHIJKLMNOPQRST"));
    CHECK_FALSE(lab::parse_token("alice.ABCDEFGHIJKLMNOPQRS1"));   // 1 is not base32
    CHECK(lab::parse_token("j.smith.ABCDEFGHIJKLMNOPQRST")->student == "j.smith");
}

// An editor's UTF-8 byte-order mark on the key file (Windows Notepad) is not part of the key: read
// as key bytes, every token the class was issued failed to verify, each blamed on the student.
TEST_CASE("a course key file is read the same with a byte-order mark, CR LF or trailing blanks", "[grading][integrity]") {
    lab_test::TempDir d;
    const std::string secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    lab_test::write_file(d / "plain.key", secret + "\n");
    lab_test::write_file(d / "bom.key", "\xEF\xBB\xBF" + secret + "\r\n");
    lab_test::write_file(d / "blanks.key", secret + "  \r\n");
    const lab::CourseKey plain = lab::load_course_key(d / "plain.key");
    CHECK(plain.secret == secret);
    CHECK(lab::load_course_key(d / "bom.key").secret == secret);
    CHECK(lab::load_course_key(d / "blanks.key").secret == secret);
    CHECK(lab::issue_token(lab::load_course_key(d / "bom.key"), "course", "alice").mac == lab::issue_token(plain, "course", "alice").mac);
}

TEST_CASE("forged records: each refused", "[grading][integrity]") {
    Pipeline p;
    Run run = fixture_run();
    auto workload_index = [&](const std::string& name) {
        auto& ws = run.record["workloads"];
        for (std::size_t i = 0; i < ws.size(); ++i)
            if (ws[i]["name"] == name) return i;
        FAIL("no workload " << name);
        return std::size_t{0};
    };
    SECTION("workload names swapped") {
        const auto a = workload_index("triad"), b = workload_index("sgemm");
        forge(run, [&](json& r) { std::swap(r["workloads"][a]["name"], r["workloads"][b]["name"]); });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("workloads deleted") {
        forge(run, [&](json& r) {
            json kept = json::array();
            for (auto& w : r["workloads"])
                if (w["name"] != "triad" && w["name"] != "sgemm") kept.push_back(w);
            r["workloads"] = kept;
        });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("a workload's FLOP count doubled") {
        const auto a = workload_index("sgemm");
        forge(run, [&](json& r) { r["workloads"][a]["flops"] = r["workloads"][a]["flops"].get<double>() * 2; });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("an extra workload") {
        const auto a = workload_index("triad");
        forge(run, [&](json& r) { r["workloads"].push_back(r["workloads"][a]); });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("a quick run passed off as a full one") {
        forge(run, [&](json& r) { r["quick"] = false; });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("device kind changed") {
        forge(run, [&](json& r) { r["device"]["kind"] = "cuda"; });
        CHECK(refused_with(p.grade(run), "not what lesson 02.05 measures"));
    }
    SECTION("fp32 ceiling x100 with the record's datasheet spec removed") {
        forge(run, [&](json& r) {
            auto& c = r["device"]["ceilings"]["flops_per_s"]["fp32.simt"];
            c["value"] = c["value"].get<double>() * 100;
            r["device"]["spec"] = {{"kind", "none"}};
        });
        CHECK(refused_with(p.grade(run), "fp32"));
    }
    SECTION("a CPU clock no CPU has (a CPU's theoretical peak is computed from it)") {
        forge(run, [&](json& r) { r["device"]["ceilings"]["clock_hz"]["value"] = 3.7e11; });
        CHECK(refused_with(p.grade(run), "beyond any CPU's"));
    }
    SECTION("a clock read at half the core's speed: the fp32 ceiling is 2x the peak it gives, refused") {
        forge(run, [&](json& r) { r["device"]["ceilings"]["clock_hz"]["value"] = r["device"]["ceilings"]["clock_hz"]["value"].get<double>() / 2; });
        CHECK(refused_with(p.grade(run), "exceeds the theoretical peak's"));
    }
    SECTION("a clock read 20% low at calibration (turbo, load): an honest run is still graded") {
        const json metrics = run.record["metrics"];
        forge(run, [&](json& r) { r["device"]["ceilings"]["clock_hz"]["value"] = r["device"]["ceilings"]["clock_hz"]["value"].get<double>() / 1.2; });
        // As an honest record holds them (the clock moves no derived value).
        run.record["metrics"] = metrics;
        run.reseal();
        const auto g = p.grade(run);
        INFO((g.problems.empty() ? std::string() : g.problems.front()));
        CHECK(g.graded);
    }
    SECTION("non-positive ceilings") {
        forge(run, [&](json& r) {
            for (auto& [k, c] : r["device"]["ceilings"]["flops_per_s"].items()) c["value"] = 0.0;
        });
        CHECK(refused_with(p.grade(run), "ceiling is not a positive number"));
    }
    SECTION("time statistics out of order") {
        const auto t = workload_index("triad");
        forge(run, [&](json& r) {
            auto& ts = r["workloads"][t]["time_s"];
            ts["min"] = ts["median"].get<double>() * 2;
        });
        CHECK(refused_with(p.grade(run), "min <= median <= max does not hold"));
    }
    SECTION("a lab version this grader does not know") {
        forge(run, [&](json& r) { r["lab_version"] = "9.0.0"; });
        CHECK(refused_with(p.grade(run), "cannot vouch for"));
    }
    SECTION("a lab version one minor release newer than this grader") {
        forge(run, [&](json& r) { r["lab_version"] = fmt::format("{}.{}.0", this_major(), this_minor() + 1); });
        CHECK(refused_with(p.grade(run), "cannot vouch for"));
    }
}

TEST_CASE("consistency: each impossible set of time statistics is refused by its own check", "[grading][integrity]") {
    // The first workload's times, edited one statistic at a time so that every other check still
    // holds (the noise kept stddev / mean), so each check alone must refuse its edit.
    auto times = [](json& r) -> json& { return r["workloads"][0]["time_s"]; };
    auto d = [](const json& t, const char* k) { return t[k].get<double>(); };
    REQUIRE(consistency_after([](json&) {}).empty());
    const std::string name = lab::record::read_record(fixture_run_file("02.05-quick-reveal.json"))["workloads"][0]["name"];
    SECTION("a mean below the minimum") {
        const auto p = consistency_after([&](json& r) {
            json& t = times(r);
            t["mean"] = 0.9 * d(t, "min");
            t["noise"] = d(t, "stddev") / d(t, "mean");
        });
        CHECK(has_problem(p, "workload '" + name + "' has a mean outside [min, max]"));
    }
    SECTION("a mean above the maximum") {
        const auto p = consistency_after([&](json& r) {
            json& t = times(r);
            t["mean"] = 1.1 * d(t, "max");
            t["noise"] = d(t, "stddev") / d(t, "mean");
        });
        CHECK(has_problem(p, "a mean outside [min, max]"));
    }
    SECTION("a noise figure that is not stddev / mean") {
        const auto p = consistency_after([&](json& r) { times(r)["noise"] = 2 * d(times(r), "stddev") / d(times(r), "mean"); });
        CHECK(has_problem(p, "workload '" + name + "' has a noise figure that is not stddev / mean"));
    }
    SECTION("less time spent sampling than the samples themselves take") {
        const auto p = consistency_after([&](json& r) {
            json& t = times(r);
            t["total"] = 0.5 * d(t, "samples") * d(t, "batch") * d(t, "min");
        });
        CHECK(has_problem(p, "workload '" + name + "' has less time spent sampling than its samples take"));
    }
    SECTION("sampling that took exactly its samples' time, or was not recorded, is consistent") {
        CHECK(consistency_after([&](json& r) {
                  json& t = times(r);
                  t["total"] = d(t, "samples") * d(t, "batch") * d(t, "min");
              }).empty());
        CHECK(consistency_after([&](json& r) { times(r)["total"] = 0.0; }).empty());
    }
}

TEST_CASE("consistency: a record of a newer minor lab release is refused; one of a newer patch or older minor is not", "[grading][integrity]") {
    auto with_version = [](const std::string& v) {
        CAPTURE(v);
        return consistency_after([&](json& r) { r["lab_version"] = v; });
    };
    const int major = this_major(), minor = this_minor(), patch = this_patch();
    CHECK(with_version(LAB_VERSION).empty());
    CHECK(has_problem(with_version(fmt::format("{}.{}.0", major, minor + 1)), "cannot vouch for"));
    CHECK(has_problem(with_version(fmt::format("{}.{}.0", major + 1, minor)), "cannot vouch for"));
    // A patch release writes the same records.
    CHECK(with_version(fmt::format("{}.{}.{}", major, minor, patch + 1)).empty());
    if (minor > 0) CHECK(with_version(fmt::format("{}.{}.9", major, minor - 1)).empty());
    if (major > 0) CHECK(has_problem(with_version(fmt::format("{}.{}.0", major - 1, minor)), "cannot vouch for"));
}

TEST_CASE("every recorded run fixture is consistent (the checks refuse no honest record)", "[grading][integrity]") {
    for (const auto& e : fs::directory_iterator(lab_test::source_root() / "tests/fixtures/runs/cpu")) {
        CAPTURE(e.path().filename().string());
        json record = lab::record::read_record(e.path());
        CHECK(lab::grader::consistency_problems(record, lab::record::raw_run_from_record(record)).empty());
    }
}

namespace {

// One folder per submission: the run and the answers that get every question right.
void hand_in(Pipeline& p, const fs::path& folder, const Run& run) {
    fs::create_directories(folder);
    lab_test::write_file(folder / "run.json", run.record.dump(1));
    lab_test::write_file(folder / "answers.yaml", p.right_answers(run));
}

const lab::grader::BatchEntry& entry(const lab::grader::BatchResult& r, const std::string& folder) {
    for (const auto& e : r.entries)
        if (e.folder == folder) return e;
    FAIL("no entry " << folder);
    throw;
}

bool flagged(const lab::grader::BatchEntry& e, const std::string& prefix) {
    return std::any_of(e.flags.begin(), e.flags.end(), [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
}

}  // namespace

TEST_CASE("lab grade flags a class of near-copies, a run handed in twice and a folder of another student's run", "[grading][integrity]") {
    Pipeline p;
    const fs::path subs = p.dir / "subs";
    Run alice = fixture_run();
    hand_in(p, subs / "alice", alice);
    // 28 classmates: alice's run under their names and seeds, every median nudged by 1 ppm.
    for (int i = 0; i < 28; ++i) {
        Run copy = fixture_run();
        for (auto& w : copy.record["workloads"])
            for (const char* k : {"median", "min", "max", "mean", "stddev", "total"})
                w["time_s"][k] = w["time_s"][k].get<double>() * (1 + 1e-6 * (i + 1));
        restudent(copy, fmt::format("student{:02d}", i));
        hand_in(p, subs / fmt::format("student{:02d}", i), copy);
    }
    // eve hands in alice's files verbatim; bob hands in an honest run of his own (other timings).
    fs::copy(subs / "alice", subs / "eve");
    // mallory hands in alice's run with every workload's times jittered by 5%: no near-copy, but
    // the in-run ceiling measurements are alice's to the last digit (a red-team review's forgery).
    auto jittered = [](Run run, double by, bool ceilings_too) {
        auto scale = [by](json& t) {
            for (const char* k : {"median", "min", "max", "mean", "stddev", "total"}) t[k] = t[k].get<double>() * by;
        };
        for (auto& w : run.record["workloads"]) scale(w["time_s"]);
        if (ceilings_too)
            for (auto& c : run.record["device"]["ceiling_measurements"])
                if (c.contains("measurement") && c["measurement"].contains("time_s")) scale(c["measurement"]["time_s"]);
        return run;
    };
    Run bob = jittered(fixture_run(), 1.03, true);
    restudent(bob, "bob");
    hand_in(p, subs / "bob", bob);
    Run mallory = jittered(fixture_run(), 1.05, false);
    restudent(mallory, "mallory");
    hand_in(p, subs / "mallory", mallory);

    GradingContext ctx;
    auto r = lab::grader::grade_directory(ctx, subs);
    REQUIRE(r.entries.size() == 32);
    // Flags never change a score: everyone is graded, full marks.
    for (const auto& e : r.entries) {
        CAPTURE(e.folder, e.error, e.reason());
        CHECK(e.status() == "practice");
        CHECK(e.report.score == e.report.max_score);
    }
    const auto& near = std::find_if(r.groups.begin(), r.groups.end(), [](const auto& g) { return g.kind == "near_copy"; });
    REQUIRE(near != r.groups.end());
    CHECK(near->folders.size() == 30);   // alice, eve and the 28
    CHECK_THAT(near->evidence, Catch::Contains("within 0.1%"));
    CHECK_FALSE(flagged(entry(r, "bob"), "near_copy"));
    CHECK(flagged(entry(r, "student17"), "near_copy:" + near->id));
    // mallory's in-run measurements are alice's (and the 28's, and eve's): flagged with each run
    // that holds them; bob's own are his, and he is flagged with no one.
    CHECK_FALSE(flagged(entry(r, "mallory"), "near_copy"));
    CHECK(flagged(entry(r, "mallory"), "shared_measurement"));
    CHECK(flagged(entry(r, "alice"), "shared_measurement"));
    CHECK_FALSE(flagged(entry(r, "bob"), "shared_measurement"));
    const auto shared = std::find_if(r.groups.begin(), r.groups.end(), [](const auto& g) { return g.kind == "shared_measurement"; });
    REQUIRE(shared != r.groups.end());
    CHECK_THAT(shared->evidence, Catch::Contains("share measured times to the last digit"));
    CHECK(std::count_if(r.groups.begin(), r.groups.end(), [](const auto& g) { return g.kind == "shared_measurement"; }) == 1);
    // eve/ holds alice's run: the same digest twice, and a folder that is not its student's. On
    // alice's own row that is information (another folder holds her run), not a flag against her.
    CHECK(flagged(entry(r, "eve"), "same_digest"));
    CHECK(flagged(entry(r, "alice"), "run_in_other_folder"));
    CHECK(flagged(entry(r, "eve"), "folder_mismatch"));
    CHECK_FALSE(flagged(entry(r, "alice"), "folder_mismatch"));
    CHECK_FALSE(flagged(entry(r, "bob"), "folder_mismatch"));

    const std::string csv = lab::grader::gradebook_csv(r);
    CHECK_THAT(csv, Catch::StartsWith("folder,student,lesson,score,max,status,reason,flags,"));
    // eve's row keeps its grade but is not a second row of alice's (who handed it in is the instructor's to decide).
    CHECK_THAT(csv, Catch::Contains("\neve,,02.05,10,10,practice,,"));
}

TEST_CASE("the gradebook never holds a cell a spreadsheet would run as a formula", "[grading][integrity]") {
    Pipeline p;
    const fs::path subs = p.dir / "subs";
    for (const std::string who : {"=HYPERLINK('http://x','y')", "+cmd", "-2+3", "@SUM(A1)"}) {
        Run run = fixture_run();
        restudent(run, who);
        hand_in(p, subs / ("f" + std::to_string(p.files++)), run);
    }
    GradingContext ctx;
    const std::string csv = lab::grader::gradebook_csv(lab::grader::grade_directory(ctx, subs));
    for (const char* bad : {",=", ",+", ",-", ",@", ",\"=", ",\"+", ",\"-", ",\"@"}) CHECK(csv.find(bad) == std::string::npos);
    CHECK_THAT(csv, Catch::Contains(",\"'=HYPERLINK('http://x','y')\","));
    CHECK_THAT(csv, Catch::Contains(",'+cmd,"));
}

TEST_CASE("lab grade grades every other folder when one holds junk", "[grading][integrity]") {
    Pipeline p;
    const fs::path subs = p.dir / "subs";
    hand_in(p, subs / "alice", fixture_run());
    fs::create_directories(subs / "junk");
    lab_test::write_file(subs / "junk" / "run.json", "{\"schema\": \"lab.run/1\", \"digest\": 7, ");
    lab_test::write_file(subs / "junk" / "answers.yaml", "lesson: \"02.05\"\nanswers: {\n");
    fs::create_directories(subs / "empty");
    GradingContext ctx;
    auto r = lab::grader::grade_directory(ctx, subs);
    REQUIRE(r.entries.size() == 3);
    CHECK(entry(r, "alice").status() == "practice");
    CHECK(entry(r, "junk").status() == "error");
    CHECK_FALSE(entry(r, "junk").reason().empty());
    CHECK(entry(r, "empty").status() == "error");
}

// An operator's review: a wrong --key refused every row as a token "not issued by this course's
// key", wrote a gradebook of zeros and exited 0; only a warning said the key was the likelier
// mistake. Two runs or more, none verifying, now stop the batch as a missing spec does.
TEST_CASE("lab grade stops when no run's course token verifies with the key, and warns where one run alone does not",
          "[grading][integrity]") {
    Pipeline p;
    const fs::path subs = p.dir / "subs";
    const lab::CourseKey wrong{"another-course-key-0123456789abcdef", "wrong.key"};
    for (const std::string who : {"alice", "bob"}) {
        Run run = fixture_run();
        retoken(run, kKey, p.course().course, who);
        hand_in(p, subs / who, run);
    }
    SECTION("two runs, neither verifying: InputError naming the key and how to check it") {
        GradingContext ctx(wrong);
        try {
            lab::grader::grade_directory(ctx, subs);
            FAIL("graded with a key that verified no token");
        } catch (const lab::InputError& e) {
            CHECK_THAT(e.what(), Catch::StartsWith("wrong.key: none of the 2 runs that carry a course token verifies with this course key, "
                                                  "so nothing was graded") &&
                                     Catch::Contains("fix: check the key: `lab token ROSTER.csv --key wrong.key`") &&
                                     Catch::Contains("the one it prints for alice must be the \"token\" in the run in folder 'alice'"));
        }
    }
    SECTION("the right key grades both") {
        GradingContext ctx(kKey);
        const auto r = lab::grader::grade_directory(ctx, subs);
        CHECK(entry(r, "alice").status() == "graded");
        CHECK(entry(r, "bob").status() == "graded");
    }
    SECTION("one run alone: refused in its row, with the warning, as before") {
        fs::remove_all(subs / "bob");
        GradingContext ctx(wrong);
        const auto r = lab::grader::grade_directory(ctx, subs);
        CHECK(entry(r, "alice").status() == "refused");
        REQUIRE(r.warnings.size() == 1);
        CHECK_THAT(r.warnings[0], Catch::Contains("none of the 1 runs with a course token verified with this key"));
    }
}
