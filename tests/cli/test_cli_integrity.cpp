// Course mode from the command line (issue 15): `lab token` makes a key and a roster's tokens,
// `lab run --token` records a run whose variant comes from the token, `lab submit --key` grades it
// in course mode, `lab audit` re-measures a class's sample, and Gradescope's run_autograder
// checks identity with lab itself and fails closed.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit.hpp"
#include "course.hpp"
#include "course_token.hpp"
#include "derived_values.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using lab_test::run_lab;

namespace {

const lab::LoadedLesson& lesson_02_05() {
    static const lab::LoadedLesson l = lab::load_lesson(lab_test::build_root() / "labs/02_05/lab_02_05.so");
    return l;
}

// configs/ with a 02.05 spec that grades quick runs, a course key and a roster's tokens.
struct Course {
    lab_test::TempDir dir;
    fs::path key = dir / "course.key";
    Course() {
        fs::copy(lab_test::source_root() / "configs", dir / "configs", fs::copy_options::recursive);
        fs::copy_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml", dir / "configs/grading/02.05.yaml",
                      fs::copy_options::overwrite_existing);
    }
    std::map<std::string, std::string> env() const {
        return {{"LAB_CONFIG_DIR", (dir / "configs").string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}};
    }
};

// Every question of the quick 02.05 spec answered right for `record`, from its own derivation.
std::string right_answers(const json& record) {
    const lab::Derivation d = lesson_02_05().lesson->derivation(lab::record::raw_run_from_record(record));
    auto num = [](double v) { return fmt::format("{:.5g}", v); };
    auto side = [&](const std::string& w) { return lab_test::derived_text(d, w + ".predicted_regime"); };
    return fmt::format("lesson: \"02.05\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers:\n", record["student"].get<std::string>(),
                       record["digest"].get<std::string>()) +
           "  ridge_point: " + num(lab_test::derived_number(d, "ridge_point")) + " FLOP/B\n" +
           "  attainable: " + num(lab_test::derived_number(d, "attainable_flops_per_s") / 1e9) + " GFLOP/s\n" +
           "  triad_side: " + side("triad") + "\n  fma_few_side: " + side("fma_few") + "\n  fma_many_side: " + side("fma_many") +
           "\n  sgemm_side: " + side("sgemm") + "\n" +
           "  triad_roof_fraction: " + num(100 * lab_test::derived_number(d, "triad.roof_fraction")) + "%\n";
}

std::map<std::string, std::string> tokens_of(const std::string& csv) {
    std::map<std::string, std::string> t;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);)
        if (auto comma = line.find(','); comma != std::string::npos && line.rfind("student,", 0) != 0)
            t[line.substr(0, comma)] = line.substr(comma + 1);
    return t;
}

// Runs a shell command line, returning its exit status.
int shell(const std::string& line) {
    int rc = std::system(line.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("lab token makes a private course key once and a roster's tokens", "[integrity-cli]") {
    Course c;
    auto made = run_lab({"token", "--new-key", c.key.string()}, c.env());
    REQUIRE(made.exit_code == 0);
    struct stat st {};
    REQUIRE(stat(c.key.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    const std::string first = lab_test::read_file(c.key);
    CHECK(first.size() >= lab::kMinKeyChars);
    // Never overwritten: every token it issued would stop verifying.
    auto again = run_lab({"token", "--new-key", c.key.string()}, c.env());
    CHECK(again.exit_code == 2);
    CHECK(lab_test::read_file(c.key) == first);

    lab_test::write_file(c.dir / "roster.csv", "\xEF\xBB\xBFstudent,email\r\nAlice Smith,alice@uni.edu\r\n\"bob\",bob@uni.edu\r\n\r\n# dropped\r\n");
    auto t = run_lab({"token", (c.dir / "roster.csv").string(), "--key", c.key.string()}, c.env());
    REQUIRE(t.exit_code == 0);
    const auto tokens = tokens_of(t.out);
    REQUIRE(tokens.size() == 2);
    CHECK_THAT(t.out, Catch::StartsWith("student,token\n"));
    const lab::CourseKey key = lab::load_course_key(c.key);
    const std::string course = lab::load_course(c.dir / "configs/course.yaml").course;
    for (const auto& [student, token] : tokens) {
        CAPTURE(student, token);
        auto parsed = lab::parse_token(token);
        REQUIRE(parsed);
        CHECK(parsed->student == student);
        CHECK(lab::token_verifies(key, course, *parsed));
    }
    CHECK(tokens.count("alice_smith"));

    SECTION("a roster listing a student twice is refused with the line") {
        lab_test::write_file(c.dir / "dup.csv", "alice\nbob\nAlice\n");
        auto d = run_lab({"token", (c.dir / "dup.csv").string(), "--key", c.key.string()}, c.env());
        CHECK(d.exit_code == 2);
        CHECK_THAT(d.err, Catch::Contains("dup.csv:3") && Catch::Contains("line 1"));
    }
    SECTION("a roster or the tokens file given as the key is refused, not read as a long key") {
        lab_test::write_file(c.dir / "tokens.csv", "student,token\nalice,alice.ABCDEFGHIJKLMNOP\n");
        for (const fs::path& wrong : {c.dir / "tokens.csv", c.dir / "roster.csv"}) {
            auto g = run_lab({"token", (c.dir / "roster.csv").string(), "--key", wrong.string()}, c.env());
            CHECK(g.exit_code == 2);
            CHECK_THAT(g.err, Catch::Contains("this is not a course key") && Catch::Contains("roster or the tokens file"));
        }
    }
    SECTION("a short key is refused") {
        lab_test::write_file(c.dir / "short.key", "secret\n");
        auto s = run_lab({"token", (c.dir / "roster.csv").string(), "--key", (c.dir / "short.key").string()}, c.env());
        CHECK(s.exit_code == 2);
        CHECK_THAT(s.err, Catch::Contains("at least 16"));
    }
    SECTION("lab run refuses a token that is not shaped like one, and a token of another student") {
        auto bad = run_lab({"run", "02.05", "--quick", "--token", "alice-XYZ"}, c.env());
        CHECK(bad.exit_code == 2);
        CHECK_THAT(bad.err, Catch::Contains("not shaped like one"));
        auto other = run_lab({"run", "02.05", "--quick", "--token", tokens.at("bob"), "--student", "alice_smith"}, c.env());
        CHECK(other.exit_code == 2);
        CHECK_THAT(other.err, Catch::Contains("token is bob's"));
    }
}

TEST_CASE("a run recorded with a token is graded in course mode, audited, and checked by run_autograder", "[integrity-cli]") {
    Course c;
    REQUIRE(run_lab({"token", "--new-key", c.key.string()}, c.env()).exit_code == 0);
    lab_test::write_file(c.dir / "roster.csv", "alice\nbob\n");
    const auto tokens = tokens_of(run_lab({"token", (c.dir / "roster.csv").string(), "--key", c.key.string()}, c.env()).out);

    // alice records her run with her token (from LAB_TOKEN, as a course would set it up).
    auto env = c.env();
    env["LAB_TOKEN"] = tokens.at("alice");
    const fs::path subs = c.dir / "subs";
    fs::create_directories(subs / "alice");
    auto ran = run_lab({"run", "02.05", "--quick", "--out", (subs / "alice/run.json").string()}, env);
    INFO(ran.err);
    REQUIRE(ran.exit_code == 0);
    json rec = lab::record::read_record(subs / "alice/run.json");
    CHECK(rec["student"] == "alice");
    CHECK(rec["token"] == tokens.at("alice"));
    CHECK(rec["seed"] == lab::token_seed(*lab::parse_token(tokens.at("alice")), "02.05").hex);
    lab_test::write_file(subs / "alice/answers.yaml", right_answers(rec));

    auto course_mode = run_lab({"submit", "02.05", (subs / "alice/answers.yaml").string(), "--run", (subs / "alice/run.json").string(),
                                "--key", c.key.string(), "--json"}, c.env());
    INFO(course_mode.out << course_mode.err);
    REQUIRE(course_mode.exit_code == 0);
    json graded = json::parse(course_mode.out);
    CHECK(graded["mode"] == "course");
    CHECK(graded["score"] == graded["max_score"]);
    auto practice = run_lab({"submit", "02.05", (subs / "alice/answers.yaml").string(), "--run", (subs / "alice/run.json").string()},
                            c.env());
    CHECK(practice.exit_code == 0);
    CHECK_THAT(practice.out, Catch::Contains("practice"));

    SECTION("lab grade with another course's key: every row refused, and the key named as the likely mistake") {
        const fs::path other = c.dir / "other.key";
        REQUIRE(run_lab({"token", "--new-key", other.string()}, c.env()).exit_code == 0);
        auto g = run_lab({"grade", subs.string(), "--out", (c.dir / "g.csv").string(), "--key", other.string()}, c.env());
        CHECK_THAT(g.err, Catch::Contains("warning: none of the 1 runs with a course token verified with this key"));
        auto right = run_lab({"grade", subs.string(), "--out", (c.dir / "g.csv").string(), "--key", c.key.string()}, c.env());
        CHECK_THAT(right.err, !Catch::Contains("verified with this key"));
        // Two runs, neither verifying: the key is the mistake, and nothing is written (it was a
        // gradebook of zeros, each row blaming its student, and exit 0).
        fs::copy(subs / "alice", subs / "alice_again");
        auto two = run_lab({"grade", subs.string(), "--out", (c.dir / "g2.csv").string(), "--key", other.string()}, c.env());
        CHECK(two.exit_code == 2);
        CHECK_THAT(two.err, Catch::Contains("none of the 2 runs that carry a course token verifies with this course key, so nothing was graded") &&
                                Catch::Contains("`lab token ROSTER.csv --key " + other.string() + "`"));
        CHECK_FALSE(fs::exists(c.dir / "g2.csv"));
    }
    SECTION("lab audit: a run whose times were edited does not reproduce") {
        // bob hands in alice's measurements, every time 10^4x slower (slower is always plausible;
        // no load makes an honest re-measure that far off).
        json bob = rec;
        bob["student"] = "bob";
        bob["token"] = tokens.at("bob");
        bob["seed"] = lab::token_seed(*lab::parse_token(tokens.at("bob")), "02.05").hex;
        for (auto& w : bob["workloads"])
            for (const char* k : {"median", "min", "max", "mean", "stddev", "total"}) w["time_s"][k] = w["time_s"][k].get<double>() * 1e4;
        bob.erase("metrics");
        for (auto& w : bob["workloads"]) w.erase("derived");
        lab::record::seal(bob);
        // The values the lesson stores, re-derived as `lab show --json` gives them: a record of
        // the installed lesson version without them is refused before any audit.
        lab_test::write_file(c.dir / "bob-draft.json", bob.dump(1));
        auto shown = run_lab({"show", (c.dir / "bob-draft.json").string(), "--json"}, c.env());
        REQUIRE(shown.exit_code == 0);
        bob["metrics"] = json::parse(shown.out)["metrics"];
        lab::record::seal(bob);
        fs::create_directories(subs / "bob");
        lab_test::write_file(subs / "bob/run.json", bob.dump(1));
        lab_test::write_file(subs / "bob/answers.yaml", right_answers(bob));

        auto a = run_lab({"audit", subs.string(), "--sample", "100%", "--seed", "7", "--key", c.key.string(), "--json",
                          "--out", (c.dir / "audit.json").string()}, c.env());
        INFO(a.err);
        CHECK(a.exit_code == 1);   // one does not reproduce
        json doc = json::parse(a.out);
        CHECK(doc["audited"] == 2);
        CHECK(json::parse(lab_test::read_file(c.dir / "audit.json")) == doc);
        for (const auto& r : doc["results"]) {
            CAPTURE(r.dump());
            // Timings are never asserted: alice's re-measure is compared, whatever its verdict.
            if (r["folder"] == "alice") CHECK(lab_test::compared_verdict(r["verdict"].get<std::string>()));
            if (r["folder"] == "bob") {
                CHECK(r["verdict"] == "does_not_reproduce");
                CHECK_THAT(r["detail"].get<std::string>(), Catch::Contains("x the re-measure"));
            }
            CHECK(r["comparison"].size() >= rec["workloads"].size());
        }
    }

    SECTION("run_autograder: identity read by lab, fails closed, needs the course key") {
        const fs::path root = c.dir / "autograder";
        fs::create_directories(root / "submission");
        fs::create_directories(root / "source");
        auto grade_as = [&](const std::string& email, const std::string& run_text, bool with_key, const std::string& answers_head = "") {
            fs::remove_all(root / "results");
            lab_test::write_file(root / "submission/run.json", run_text);
            lab_test::write_file(root / "submission/answers.yaml", answers_head + right_answers(rec));
            // "a@x,b@y": a group submission of both.
            json users = json::array();
            for (std::size_t b = 0, e; b <= email.size(); b = e + 1) {
                e = std::min(email.find(',', b), email.size());
                users.push_back({{"email", email.substr(b, e - b)}, {"name", "x"}});
            }
            lab_test::write_file(root / "submission_metadata.json", json{{"users", users}}.dump());
            if (with_key) fs::copy_file(c.key, root / "source/course.key", fs::copy_options::overwrite_existing);
            else fs::remove(root / "source/course.key");
            std::string line = "env -u LAB_COURSE_KEY -u LAB_PRACTICE AUTOGRADER_ROOT='" + root.string() + "' LAB_LESSON=02.05 LAB_CONFIG_DIR='" +
                               (c.dir / "configs").string() + "' PATH='" + lab_test::lab_executable().parent_path().string() +
                               ":/usr/bin:/bin' bash '" + (lab_test::source_root() / "grader/gradescope/run_autograder").string() +
                               "' >/dev/null 2>&1";
            REQUIRE(shell(line) == 0);
            return json::parse(lab_test::read_file(root / "results/results.json"));
        };
        const std::string run_text = lab_test::read_file(subs / "alice/run.json");
        json ok = grade_as("alice@uni.edu", run_text, true);
        CHECK(ok["score"] == graded["score"]);
        CHECK(ok["extra_data"]["mode"] == "course");
        // A group submission: the member whose run it is is the submitter, whatever their place.
        CHECK(grade_as("bob@uni.edu,Alice@uni.edu", run_text, true)["score"] == graded["score"]);
        CHECK(grade_as("bob@uni.edu,carol@uni.edu", run_text, true)["score"] == 0);
        // Answers saved with a byte-order mark (Notepad does) are found and graded alike.
        CHECK(grade_as("alice@uni.edu", run_text, true, "\xEF\xBB\xBF")["score"] == graded["score"]);
        // bob uploads alice's untouched run behind a byte-order mark: lab reads it, and refuses.
        json stolen = grade_as("bob@uni.edu", "\xEF\xBB\xBF" + run_text, true);
        CHECK(stolen["score"] == 0);
        CHECK_THAT(stolen["output"].get<std::string>(), Catch::Contains("recorded for 'alice', but you are 'bob'"));
        // No identity in the metadata: nothing is graded.
        CHECK(grade_as("", run_text, true)["score"] == 0);
        // No course key: refused for credit, with the reason for the instructor.
        json keyless = grade_as("alice@uni.edu", run_text, false);
        CHECK(keyless["score"] == 0);
        CHECK_THAT(keyless.dump(), Catch::Contains("no course key"));
    }

    SECTION("an autograder zip from make_autograder.sh works where Gradescope unpacks it") {
        // Gradescope unpacks the zip into /autograder/source: the repository lands in its source/
        // folder, the key beside it. Packed by hand as the docs once said, setup.sh found no
        // repository and run_autograder no key.
        const fs::path root = c.dir / "gs";
        const fs::path zip = c.dir / "autograder-02.05.zip";
        REQUIRE(shell("bash '" + (lab_test::source_root() / "grader/gradescope/make_autograder.sh").string() + "' 02.05 '" + zip.string() +
                      "' --key '" + c.key.string() + "' >/dev/null 2>&1") == 0);
        REQUIRE(shell("python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' '" + zip.string() + "' '" +
                      (root / "source").string() + "'") == 0);
        CHECK(fs::exists(root / "source/source/meson.build"));
        CHECK(fs::exists(root / "source/course.key"));
        CHECK(shell("AUTOGRADER_ROOT='" + root.string() + "' bash '" + (root / "source/setup.sh").string() + "' --check | grep -qx 'lab repository: " +
                    (root / "source/source").string() + "'") == 0);
        // The zip's own run_autograder: its lesson set by make_autograder.sh, the key found in the zip.
        fs::create_directories(root / "submission");
        fs::copy_file(subs / "alice/run.json", root / "submission/run.json");
        lab_test::write_file(root / "submission/answers.yaml", right_answers(rec));
        lab_test::write_file(root / "submission_metadata.json", R"({"users": [{"email": "alice@uni.edu", "name": "A"}]})");
        REQUIRE(shell("env -u LAB_COURSE_KEY -u LAB_PRACTICE -u LAB_LESSON AUTOGRADER_ROOT='" + root.string() + "' LAB_CONFIG_DIR='" +
                      (c.dir / "configs").string() + "' PATH='" + lab_test::lab_executable().parent_path().string() +
                      ":/usr/bin:/bin' bash '" + (root / "source/run_autograder").string() + "' >/dev/null 2>&1") == 0);
        const json zipped = json::parse(lab_test::read_file(root / "results/results.json"));
        CHECK(zipped["score"] == graded["score"]);
        CHECK(zipped["extra_data"]["mode"] == "course");

        // LAB_IDENTITY set to a field the tokens were not issued by: the student is refused (the
        // run is not theirs by that field), and the instructors are told which setting to fix.
        lab_test::write_file(root / "submission_metadata.json", R"({"users": [{"email": "alice@uni.edu", "name": "A", "sid": "1001"}]})");
        REQUIRE(shell("env -u LAB_COURSE_KEY -u LAB_PRACTICE -u LAB_LESSON LAB_IDENTITY=sid AUTOGRADER_ROOT='" + root.string() +
                      "' LAB_CONFIG_DIR='" + (c.dir / "configs").string() + "' PATH='" + lab_test::lab_executable().parent_path().string() +
                      ":/usr/bin:/bin' bash '" + (root / "source/run_autograder").string() + "' >/dev/null 2>&1") == 0);
        const json by_sid = json::parse(lab_test::read_file(root / "results/results.json"));
        CHECK(by_sid["score"] == 0);
        const json& last = by_sid["tests"].back();
        CHECK(last["visibility"] == "hidden");
        CHECK_THAT(last["output"].get<std::string>(), Catch::Contains("this submitter's email_local, while LAB_IDENTITY reads their sid") &&
                                                          Catch::Contains("set LAB_IDENTITY=email_local"));
    }
}

TEST_CASE("an audit's summary counts each verdict under its own name, with what to do about it", "[integrity-cli]") {
    auto row = [](const char* folder, const char* verdict) {
        lab::cli::Audited a;
        a.task.folder = folder, a.task.student = folder, a.verdict = verdict;
        return a;
    };
    const std::vector<lab::cli::Audited> results = {row("a", "reproduces"), row("b", "does_not_reproduce"), row("c", "inconclusive"),
                                                    row("d", "not_audited"), row("e", "not_audited"), row("f", "other_hardware")};
    std::ostringstream out;
    lab::cli::print_audit(out, results, {6, 1, lab::cli::kAuditTolerance, "here", {}});
    CHECK_THAT(out.str(), Catch::Contains("1 reproduce, 1 do not, 1 inconclusive (the audit ran beside other work") &&
                              Catch::Contains("1 recorded on other hardware") && Catch::Contains("2 not audited (see each row's detail)"));
    const json j = lab::cli::audit_json(results, {6, 1, lab::cli::kAuditTolerance, "here", {}});
    CHECK(j["inconclusive"] == 1);
    CHECK(j["not_audited"] == 2);
    CHECK(j["other_hardware"] == 1);
    CHECK(lab::cli::audit_exit_code(results) == 1);
}

TEST_CASE("an audit compares medians within the noise both runs measured, and the ceilings", "[integrity-cli]") {
    json rec = lab::record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    const lab::RawRun run = lab::record::raw_run_from_record(rec);
    auto same = lab::cli::compare_runs(run, run);
    CHECK(same.reproduces);
    CHECK(same.rows.size() == run.measurements.size() + run.ceilings.flops_per_s.size() + 2);  // + bandwidth.best, launch
    CHECK(lab::cli::hardware_mismatch(run, run).empty());

    lab::RawRun slower = run;
    for (auto& m : slower.measurements)
        if (m.workload.name == "triad") m.time.median *= 3;
    auto c = lab::cli::compare_runs(slower, run);
    CHECK_FALSE(c.reproduces);
    REQUIRE(c.problems.size() == 1);
    CHECK_THAT(c.problems[0], Catch::StartsWith("triad"));

    // A difference the load on the slower run explains is inconclusive, not a failure; only the
    // slower run is excused, so a fast submission claiming load is still caught by a quiet re-measure.
    lab::RawRun quiet = run, busy = run, claims_load = run;
    for (auto* r : {&quiet, &busy, &claims_load})
        for (auto& m : r->measurements) m.load = 0;
    for (auto& m : busy.measurements)
        if (m.workload.name == "triad") m.time.median *= 3, m.load = 1.2;
    for (auto& m : claims_load.measurements)
        if (m.workload.name == "triad") m.time.median /= 3, m.load = 1.2;
    auto b = lab::cli::compare_runs(quiet, busy);
    CHECK_FALSE(b.reproduces);
    CHECK(b.inconclusive);
    CHECK_THAT(b.problems[0], Catch::Contains("re-measure ran slower while other processes used 1.2 CPUs"));
    auto forged_fast = lab::cli::compare_runs(claims_load, quiet);
    CHECK_FALSE(forged_fast.reproduces);
    CHECK_FALSE(forged_fast.inconclusive);
    // Load slows a run a few times, not orders of magnitude: a 10^4x slower run claiming load is caught.
    lab::RawRun forged_slow = quiet;
    for (auto& m : forged_slow.measurements) m.time.median *= 1e4, m.load = 1.5;
    auto s = lab::cli::compare_runs(forged_slow, quiet);
    CHECK_FALSE(s.reproduces);
    CHECK_FALSE(s.inconclusive);

    lab::RawRun forged = run;
    for (auto& [k, v] : forged.ceilings.bandwidth_bytes_per_s) v.value *= 10;
    auto f = lab::cli::compare_runs(forged, run);
    CHECK_FALSE(f.reproduces);
    CHECK_THAT(f.problems.back(), Catch::Contains("ceiling bandwidth.best"));

    lab::RawRun fewer = run;
    fewer.measurements.pop_back();
    CHECK_FALSE(lab::cli::compare_runs(fewer, run).reproduces);

    lab::RawRun elsewhere = run;
    elsewhere.facts.name = "Another CPU";
    CHECK_THAT(lab::cli::hardware_mismatch(run, elsewhere), Catch::Contains("Another CPU"));
}
