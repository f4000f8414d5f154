// Whose gradebook row a submission is (`lab grade`), as a grading operator's walkthrough found it
// going wrong: a copier who handed in a classmate's run got no row of his own, while the honest
// classmate got a second row (0 points) and the duplicate_student flag. A folder's owner (the
// export's metadata, or the roster student it is named for) owns its row: a classmate's run
// handed in there is refused in that row, the classmate's own row is untouched. Where nothing
// says whose a folder is, the answers' student owns it, and a copy of a run its student also
// handed in from their own folder is never a second row of theirs. (docs/gradescope.md, "Whose
// row it is".)
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "batch_class.hpp"
#include "class_report.hpp"
#include "course.hpp"
#include "html_dom.hpp"

using namespace lab_test::batch;

namespace {

bool flagged(const BatchEntry& e, const std::string& prefix) {
    return std::any_of(e.flags.begin(), e.flags.end(), [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
}

// The rows (missing ones included) the gradebook files under `student`.
long rows_for(const BatchResult& r, const std::string& student) {
    return std::count_if(r.entries.begin(), r.entries.end(), [&](const BatchEntry& e) { return lab::normalise_student(e.student) == student; });
}

long missing(const BatchResult& r) {
    return std::count_if(r.entries.begin(), r.entries.end(), [](const BatchEntry& e) { return e.missing; });
}

// A copier's own answers for a classmate's run: bound to it, naming the copier.
std::string answers_as(const Run& run, const std::string& student) {
    std::string a = right_answers(run);
    const std::string was = fmt::format("student: \"{}\"", run.raw.options.student);
    return a.replace(a.find(was), was.size(), fmt::format("student: \"{}\"", student));
}

const char* kMetadata =
    "submission_1001:\n  :submitters:\n  - :name: Alice A\n    :sid: S1\n    :email: alice@u.edu\n"
    "submission_1002:\n  :submitters:\n  - :name: Bob B\n    :sid: S2\n    :email: bob@u.edu\n"
    "submission_1004:\n  :submitters:\n  - :name: Ken K\n    :sid: S4\n    :email: ken@u.edu\n";

}  // namespace

TEST_CASE("a classmate's run in a roster student's folder is refused in that student's row, not filed under the classmate",
          "[grading][batch]") {
    Class c;
    const Run bob = as_student("bob");
    const Run alice = fixture_run();
    hand_in(c.subs / "bob", bob);
    hand_in(c.subs / "alice", alice);
    // ken hands in bob's run, with bob's answers or with answers of his own bound to it.
    const bool own_answers = GENERATE(false, true);
    CAPTURE(own_answers);
    hand_in(c.subs / "ken", bob, "run.json", own_answers ? answers_as(bob, "ken") : "");
    // paul hands in the repository's fixture, which is alice's run, with his own answers.
    hand_in(c.subs / "paul", alice, "run.json", answers_as(alice, "paul"));
    BatchOptions options;
    options.roster = {"alice", "bob", "ken", "paul"};
    const BatchResult r = c.grade(options);

    const BatchEntry& ken = row(r, "ken");
    CAPTURE(ken.reason());
    CHECK(ken.student == "ken");
    CHECK(ken.run_student == "bob");
    CHECK(ken.status() == "refused");   // readable files, another student's: not "could not be read"
    CHECK_THAT(ken.reason(), Catch::Contains("folder 'ken' is ken's") && Catch::Contains("recorded by bob") && Catch::Contains("fix:"));
    CHECK(flagged(ken, "same_digest:"));
    CHECK(has(ken, "folder_mismatch"));
    CHECK_FALSE(has(ken, "duplicate_student"));

    // bob's own row is as it would be without ken: graded, one row, told only that another folder holds his run.
    const BatchEntry& b = row(r, "bob");
    CHECK(b.student == "bob");
    CHECK(b.status() == "practice");
    CHECK(b.report.score == b.report.max_score);
    CHECK_FALSE(has(b, "duplicate_student"));
    CHECK_FALSE(flagged(b, "same_digest"));
    CHECK(flagged(b, "run_in_other_folder:"));
    CHECK(rows_for(r, "bob") == 1);

    const BatchEntry& paul = row(r, "paul");
    CHECK(paul.student == "paul");
    CHECK(paul.status() == "refused");
    CHECK_THAT(paul.reason(), Catch::Contains("folder 'paul' is paul's") && Catch::Contains("recorded by alice"));
    CHECK(rows_for(r, "alice") == 1);
    CHECK_FALSE(has(row(r, "alice"), "duplicate_student"));

    // ken and paul handed something in: neither is missing.
    CHECK(missing(r) == 0);
    const auto group = std::find_if(r.groups.begin(), r.groups.end(),
                                    [](const auto& g) { return std::find(g.folders.begin(), g.folders.end(), "ken") != g.folders.end(); });
    REQUIRE(group != r.groups.end());
    CHECK(group->kind == "same_digest");
    CHECK_THAT(group->evidence, Catch::Contains("bob's, from their folder 'bob'"));
    const std::string csv = lab::grader::gradebook_csv(r);
    CHECK_THAT(csv, Catch::Contains(fmt::format("\nken,ken,02.05,0,{:g},refused,", b.report.max_score)));
    CHECK_THAT(csv, Catch::Contains(fmt::format("\nbob,bob,02.05,{0:g},{0:g},practice,,run_in_other_folder:", b.report.max_score)));
    // The class page's "holds the run of" names whose run it is, not whose row.
    const lab::grader::ClassPage page{r, "Class report", "practice", {}, {}, {}};
    lab_test::HtmlDom dom(lab::grader::render_class_html(page));
    CHECK(dom.text("//table[@class='mismatches']/tbody/tr[td[1]='ken']/td[2]") == "bob");
}

TEST_CASE("a roster read by another column than the runs' IDs refuses no honest run", "[grading][batch]") {
    // Roster IDs are SIDs, folders are named bob_1002 and alice_1001, runs carry email names:
    // each folder names a roster ID that is not its run's student, yet the runs are their own.
    Class c;
    hand_in(c.subs / "alice_1001", fixture_run());
    hand_in(c.subs / "1002_bob", as_student("bob"));
    hand_in(c.subs / "carol", as_student("carol"));
    BatchOptions options;
    options.roster = {"1001", "1002", "1003"};
    const BatchResult r = c.grade(options);
    for (const char* folder : {"alice_1001", "1002_bob", "carol"}) {
        CAPTURE(folder, row(r, folder).reason());
        CHECK(row(r, folder).status() == "practice");
    }
}

TEST_CASE("in Gradescope's export a submission holding a classmate's run is its submitter's row, refused", "[grading][batch]") {
    Class c;
    const Run bob = as_student("bob");
    hand_in(c.subs / "submission_1001", fixture_run());
    hand_in(c.subs / "submission_1002", bob);
    hand_in(c.subs / "submission_1004", bob);   // ken's upload: bob's run and bob's answers
    lab_test::write_file(c.subs / "submission_metadata.yml", kMetadata);
    const bool roster = GENERATE(false, true);
    CAPTURE(roster);
    BatchOptions options;
    if (roster) options.roster = {"alice", "bob", "ken", "s9"};
    const BatchResult r = c.grade(options);

    const auto kens = rows_of(r, "submission_1004");
    REQUIRE(kens.size() == 1);   // ken's own row: no group_member copy of a row filed under bob
    const BatchEntry& ken = *kens[0];
    CAPTURE(ken.reason());
    CHECK(ken.student == "ken");   // the roster's form, else the email before @ (the autograder's default)
    CHECK(ken.run_student == "bob");
    CHECK(ken.status() == "refused");
    CHECK_THAT(ken.reason(), Catch::Contains("submission_metadata.yml lists ken as its submitter") && Catch::Contains("recorded by bob"));
    CHECK(has(ken, "folder_mismatch"));
    CHECK_FALSE(has(ken, "duplicate_student"));
    const BatchEntry& b = row(r, "submission_1002");
    CHECK(b.status() == "practice");
    CHECK_FALSE(has(b, "duplicate_student"));
    CHECK(flagged(b, "run_in_other_folder:"));
    CHECK(rows_for(r, "bob") == 1);
    if (roster) CHECK(missing(r) == 1);   // s9 only
}

TEST_CASE("a group's partner row does not carry the duplicate_student flag of the member whose run it is", "[grading][batch]") {
    Class c;
    hand_in(c.subs / "submission_2002", fixture_run());          // bob and alice's group: alice's run
    hand_in(c.subs / "submission_2003", rerun("alice"));        // alice again, on her own
    lab_test::write_file(c.subs / "submission_metadata.yml",
                         "submission_2002:\n  :submitters:\n  - :name: Bob B\n    :email: bob@u.edu\n"
                         "  - :name: Alice A\n    :email: alice@u.edu\n"
                         "submission_2003:\n  :submitters:\n  - :name: Alice A\n    :email: alice@u.edu\n");
    BatchOptions options;
    options.roster = {"alice", "bob"};
    const BatchResult r = c.grade(options);
    const auto rows = rows_of(r, "submission_2002");
    REQUIRE(rows.size() == 2);
    CHECK(has(*rows[0], "duplicate_student"));   // alice: two rows
    CHECK(rows[1]->student == "bob");
    CHECK(has(*rows[1], "group_member"));
    CHECK_FALSE(has(*rows[1], "duplicate_student"));
}

TEST_CASE("where no folder says whose it is, the answers' student owns a copier's row, never the run's", "[grading][batch]") {
    Class c;
    const Run bob = as_student("bob");
    SECTION("named folders, no roster") {
        hand_in(c.subs / "bob", bob);
        hand_in(c.subs / "ken", bob, "run.json", answers_as(bob, "ken"));
        const BatchResult r = c.grade();
        const BatchEntry& ken = row(r, "ken");
        CHECK(ken.student == "ken");
        CHECK(ken.status() == "refused");
        CHECK_THAT(ken.reason(), Catch::Contains("the answers are ken's, but the run was recorded by bob"));
        CHECK(has(ken, "folder_mismatch"));
        CHECK(rows_for(r, "bob") == 1);
        CHECK_FALSE(has(row(r, "bob"), "duplicate_student"));
        CHECK(flagged(row(r, "bob"), "run_in_other_folder:"));
    }
    SECTION("numbered folders: bob's own is not known to be his, so both keep same_digest") {
        hand_in(c.subs / "submission_1", bob);
        hand_in(c.subs / "submission_2", bob, "run.json", answers_as(bob, "ken"));
        const BatchResult r = c.grade();
        CHECK(row(r, "submission_2").student == "ken");
        CHECK(row(r, "submission_2").status() == "refused");
        CHECK(rows_for(r, "bob") == 1);
        CHECK_FALSE(has(row(r, "submission_1"), "duplicate_student"));
        CHECK(flagged(row(r, "submission_1"), "same_digest:"));
    }
}

TEST_CASE("a verbatim copy of a run its student handed in from their own folder is no second row of theirs", "[grading][batch]") {
    Class c;
    const Run bob = as_student("bob");
    hand_in(c.subs / "bob", bob);
    SECTION("in a folder named for nobody lab knows: the copy's row has no student, its grade kept, and a warning") {
        fs::copy(c.subs / "bob", c.subs / "eve");
        const BatchResult r = c.grade();
        const BatchEntry& eve = row(r, "eve");
        CHECK(eve.student.empty());
        CHECK(eve.run_student == "bob");
        CHECK(eve.status() == "practice");   // a copy lab cannot attribute is flagged, not refused: the operator decides
        CHECK(flagged(eve, "same_digest:"));
        CHECK(has(eve, "folder_mismatch"));
        CHECK(rows_for(r, "bob") == 1);
        CHECK_FALSE(has(row(r, "bob"), "duplicate_student"));
        CHECK(flagged(row(r, "bob"), "run_in_other_folder:"));
        REQUIRE(r.warnings.size() == 1);
        CHECK_THAT(r.warnings[0], Catch::Contains("folder 'eve' holds bob's run, which bob's own folder 'bob' holds too"));
        CHECK_THAT(lab::grader::gradebook_csv(r), Catch::Contains("\neve,,02.05,"));
    }
    SECTION("two numbered folders with the same files: nothing says which is his, so both are his rows, flagged") {
        lab_test::TempDir other;
        hand_in(other / "submission_1", bob);
        hand_in(other / "submission_2", bob);
        const BatchResult r = c.grade({}, other.path());
        CHECK(rows_for(r, "bob") == 2);
        for (const char* f : {"submission_1", "submission_2"}) {
            CHECK(has(row(r, f), "duplicate_student"));
            CHECK(flagged(row(r, f), "same_digest:"));
        }
        CHECK(r.warnings.empty());
    }
}

// An operator's review: heidi's folder was empty and her run and answers were in a folder named for
// nobody on the roster. The empty folder's row became heidi's only after duplicate_student was
// decided, so her two rows (a 0 and a full grade) went unflagged, and an import by student could
// take the 0.
TEST_CASE("a roster student's empty folder beside her run in another folder: both rows duplicate_student, the 0 naming the graded one",
          "[grading][batch]") {
    Class c;
    hand_in(c.subs / "alice", fixture_run());
    fs::create_directories(c.subs / "heidi");
    hand_in(c.subs / "xavier", as_student("heidi"));
    BatchOptions options;
    options.roster = {"alice", "heidi"};
    const BatchResult r = c.grade(options);
    const BatchEntry& empty = row(r, "heidi");
    const BatchEntry& held = row(r, "xavier");
    CAPTURE(empty.reason(), held.flags);
    REQUIRE(empty.student == "heidi");
    REQUIRE(held.student == "heidi");
    REQUIRE(held.status() == "practice");
    CHECK(has(empty, "duplicate_student"));
    CHECK(has(held, "duplicate_student"));
    CHECK_THAT(empty.reason(), Catch::StartsWith("no submission (empty folder); duplicate_student: heidi has another row for lesson 02.05: "
                                                 "folder 'xavier' (practice ") &&
                                   Catch::Contains(fmt::format("{:g}/{:g})", held.report.score, held.report.max_score)));
    CHECK_THAT(held.duplicate_note, Catch::Contains("folder 'heidi' (error)"));
    CHECK(held.reason().empty());   // a graded row's reason stays empty
    CHECK_FALSE(has(row(r, "alice"), "duplicate_student"));
    CHECK(missing(r) == 0);
}
