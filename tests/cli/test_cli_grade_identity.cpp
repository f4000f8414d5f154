// `lab grade`'s summary where the roster does not match the class, and where a student handed in
// a classmate's run (docs/gradescope.md, "Whose row it is"): a roster that matches none or only
// some of the students who handed in is warned about on stderr and in --json's `warnings`; the
// copier's row is refused and counted as refused (its files were read, not "could not be read"),
// and the summary says whose run the folder holds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::run_lab;
using nlohmann::json;

namespace {

using lab_test::QuickConfigs;

// alice's recorded run (the fixture), with answers naming `student` bound to it (left blank: a
// valid file whose answers each score 0); `with_run` false: the answers alone (a row in error).
void hand_in(const fs::path& folder, const std::string& student, bool with_run = true) {
    const fs::path run = lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json";
    fs::create_directories(folder);
    if (with_run) fs::copy_file(run, folder / "run.json");
    const std::string digest = json::parse(lab_test::read_file(run))["digest"];
    lab_test::write_file(folder / "answers.yaml", "lesson: \"02.05\"\nstudent: \"" + student + "\"\nrun: \"" + digest + "\"\nanswers: {}\n");
}

}  // namespace

TEST_CASE("lab grade warns when the roster matches none or only some of the students who handed in", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path subs = d / "submissions";
    hand_in(subs / "alice", "alice");
    hand_in(subs / "ken", "ken", false);   // ken's answers without a run: a row in error, still ken's
    const fs::path csv = d / "gradebook.csv";
    SECTION("a roster read by the wrong column: every student off it") {
        lab_test::write_file(d / "sids.csv", "First Name,Last Name,SID,Email\nAlice,A,1001,alice@u.edu\nKen,K,1011,ken@u.edu\n");
        auto w = run_lab({"grade", subs.string(), "--out", csv.string(), "--roster", (d / "sids.csv").string(), "--identity", "sid"},
                         configs.env());
        CAPTURE(w.out, w.err);
        REQUIRE(w.exit_code == 0);
        CHECK_THAT(w.err, Catch::Contains("warning: none of the 2 students who handed in is on the roster (read by column 'SID' (sid)): "
                                          "is it the right column?"));
    }
    SECTION("a roster of some of the class: the others named, also in --json") {
        lab_test::write_file(d / "some.csv", "student\nalice\n");
        auto j = run_lab({"grade", subs.string(), "--out", csv.string(), "--roster", (d / "some.csv").string(), "--json"}, configs.env());
        CAPTURE(j.out, j.err);
        REQUIRE(j.exit_code == 0);
        const std::string warning = "1 student who handed in is not on the roster (read by column 'student' (student)): ken";
        CHECK_THAT(j.err, Catch::Contains("warning: " + warning));
        CHECK(json::parse(j.out)["warnings"] == json::array({warning}));
    }
    SECTION("the whole class on the roster: no warning") {
        lab_test::write_file(d / "all.csv", "student\nalice\nken\ncarol\n");
        auto a = run_lab({"grade", subs.string(), "--out", csv.string(), "--roster", (d / "all.csv").string()}, configs.env());
        REQUIRE(a.exit_code == 0);
        CHECK_THAT(a.err, !Catch::Contains("warning:"));
    }
}

TEST_CASE("lab grade files a copier's refused row under the copier and says whose run his folder holds", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path subs = d / "submissions";
    hand_in(subs / "alice", "alice");
    hand_in(subs / "ken", "ken");   // ken hands in alice's run with answers of his own
    lab_test::write_file(d / "roster.csv", "student\nalice\nken\n");
    const fs::path csv = d / "gradebook.csv";

    auto r = run_lab({"grade", subs.string(), "--out", csv.string(), "--roster", (d / "roster.csv").string()}, configs.env());
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    // ken's files were read: refused, not "could not be read".
    CHECK_THAT(r.out, Catch::Contains("2 submissions") && Catch::Contains("1 graded, 1 not graded (implausible or refused), 0 could not be read"));
    CHECK_THAT(r.out, Catch::Contains("folder_mismatch: folder 'ken' holds the run of 'alice'"));
    CHECK_THAT(r.out, !Catch::Contains("duplicate_student"));
    CHECK_THAT(r.out, !Catch::Contains("handed in nothing"));
    CHECK_THAT(lab_test::read_file(csv), Catch::Contains("\nken,ken,02.05,0,10,refused,\"folder 'ken' is ken's"));
    CHECK_THAT(r.err, !Catch::Contains("warning:"));

    auto j = run_lab({"grade", subs.string(), "--out", csv.string(), "--roster", (d / "roster.csv").string(), "--json"}, configs.env());
    REQUIRE(j.exit_code == 0);
    const json s = json::parse(j.out);
    CHECK(s["not_graded"] == 1);
    CHECK(s["errors"].empty());
    REQUIRE(s["folder_mismatch"].size() == 1);
    CHECK(s["folder_mismatch"][0]["student"] == "alice");
}
