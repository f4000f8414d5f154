// `lab grade`'s folders as grading operators hand them over (a review of real exports): a
// resubmission's several runs, a folder of two lessons, an export with one more level, a folder
// of several students' files, Gradescope's anonymous submission_NNNN folders, folder names that
// merely contain an ID, one student in two rows; and the gradebook's rows (max of a row not
// graded, one-line reasons, --lesson, a roster's missing students, question order). Runs are the
// recorded fixtures, sealed again with the project's own code where a test changes them.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "batch.hpp"
#include "batch_class.hpp"
#include "class_report.hpp"
#include "errors.hpp"
#include "grading_fixtures.hpp"
#include "run_record.hpp"
#include "submission.hpp"
#include "submission_folder.hpp"

using namespace lab_test::grading;
using namespace lab_test::batch;
using lab::grader::BatchEntry;
using lab::grader::BatchOptions;
using lab::grader::BatchResult;
using lab::grader::GradingContext;


TEST_CASE("a resubmission is graded against the run its answers are bound to, whatever sorts first", "[grading][batch]") {
    Class c;
    const Run older = fixture_run(), newer = rerun();
    REQUIRE(older.digest() != newer.digest());
    const fs::path lee = c.subs / "alice";
    fs::create_directories(lee / "runs");
    lab_test::write_file(lee / "runs/02.05-2026-12-01T16-40-05Z.json", older.record.dump(1));
    lab_test::write_file(lee / "runs/02.05-2026-12-01T16-41-30Z.json", newer.record.dump(1));

    SECTION("bound to the newer run, which sorts last") {
        lab_test::write_file(lee / "answers.yaml", right_answers(newer));
        const BatchResult r = c.grade();
        const BatchEntry& e = row(r, "alice");
        CAPTURE(e.reason());
        CHECK(e.status() == "practice");
        CHECK(e.report.score == e.report.max_score);
        CHECK(e.report.run_digest == newer.digest());
        CHECK(e.ignored == std::vector<std::string>{"runs/02.05-2026-12-01T16-40-05Z.json"});
    }
    SECTION("bound to the older run") {
        lab_test::write_file(lee / "answers.yaml", right_answers(older));
        const BatchResult r = c.grade();
        const BatchEntry& e = row(r, "alice");
        CHECK(e.status() == "practice");
        CHECK(e.report.run_digest == older.digest());
    }
    SECTION("two answers files, each with its run: one row, the latest submission, the other listed") {
        // The older answers file sorts last and is complete too: the run recorded last decides.
        Run latest = newer;
        latest.record["started_at"] = "2099-01-01T00:00:00Z";
        latest.reseal();
        lab_test::write_file(lee / "runs/02.05-2026-12-01T16-41-30Z.json", latest.record.dump(1));
        lab_test::write_file(lee / "answers.yaml", right_answers(latest));
        lab_test::write_file(lee / "zz-old-answers.yaml", right_answers(older));
        const BatchResult r = c.grade();
        const BatchEntry& e = row(r, "alice");
        CHECK(e.report.run_digest == latest.digest());
        CHECK_FALSE(has(e, "duplicate_student"));
        CHECK(std::find(e.ignored.begin(), e.ignored.end(), "zz-old-answers.yaml") != e.ignored.end());
        CHECK(std::find(e.ignored.begin(), e.ignored.end(), "runs/02.05-2026-12-01T16-40-05Z.json") != e.ignored.end());
    }
    // Two submissions, the run of answers.yaml recorded last by its clock (2099), for the tests of
    // the files' times below.
    auto two_submissions = [&] {
        Run later_clock = newer;
        later_clock.record["started_at"] = "2099-01-01T00:00:00Z";
        later_clock.reseal();
        lab_test::write_file(lee / "runs/02.05-2026-12-01T16-41-30Z.json", later_clock.record.dump(1));
        lab_test::write_file(lee / "answers.yaml", right_answers(later_clock));
        lab_test::write_file(lee / "zz-old-answers.yaml", right_answers(older));
        return later_clock;
    };
    SECTION("the runs' clocks and the files' times disagree on the latest: graded by the clock, and said") {
        // A laptop whose clock was set back recorded the resubmission as the older run.
        const Run later_clock = two_submissions();
        const fs::path newer_file = lee / "runs/02.05-2026-12-01T16-40-05Z.json";
        fs::last_write_time(newer_file, fs::last_write_time(newer_file) + std::chrono::hours(1));
        const BatchResult r = c.grade();
        const BatchEntry& e = row(r, "alice");
        CHECK(e.report.run_digest == later_clock.digest());
        CHECK_THAT(e.latest_doubt, Catch::Contains("02.05-2026-12-01T16-40-05Z.json") && Catch::Contains("is the newer file") &&
                                       Catch::Contains("check which submission the student meant"));
    }
    SECTION("clocks and file times that agree say nothing more") {
        two_submissions();
        const fs::path older_file = lee / "runs/02.05-2026-12-01T16-40-05Z.json";
        fs::last_write_time(older_file, fs::last_write_time(older_file) - std::chrono::hours(1));
        const BatchResult r = c.grade();
        CHECK(row(r, "alice").latest_doubt.empty());
    }
    SECTION("a later answers file that cannot be read gives way to the gradable pair: one row, not two") {
        // The newer pair's answers are indented with a tab. Its row had no student, so the
        // student had two rows (graded and error, flagged duplicate_student).
        Run latest = newer;
        latest.record["started_at"] = "2099-01-01T00:00:00Z";
        latest.reseal();
        lab_test::write_file(lee / "runs/02.05-2026-12-01T16-41-30Z.json", latest.record.dump(1));
        std::string broken = right_answers(latest);
        broken.replace(broken.find("\n  ") + 1, 2, "\t");
        lab_test::write_file(lee / "aa-answers.yaml", broken);
        lab_test::write_file(lee / "zz-answers.yaml", right_answers(older));
        const BatchResult r = c.grade();
        const auto rows = rows_of(r, "alice");
        REQUIRE(rows.size() == 1);
        const BatchEntry& e = *rows[0];
        CAPTURE(e.reason());
        CHECK(e.student == "alice");
        CHECK(e.status() == "practice");
        CHECK(e.report.run_digest == older.digest());
        CHECK_FALSE(has(e, "duplicate_student"));
        CHECK(std::find(e.ignored.begin(), e.ignored.end(), "aa-answers.yaml") != e.ignored.end());
    }
    SECTION("bound to neither: an error naming both files, not a grade against the wrong run") {
        lab_test::write_file(lee / "answers.yaml", right_answers(newer, "sha256:" + std::string(64, '0')));
        const BatchResult r = c.grade();
        const BatchEntry& e = row(r, "alice");
        CHECK(e.status() == "error");
        CHECK_THAT(e.reason(), Catch::Contains("none of the 2 run records here") && Catch::Contains("16-40-05Z.json") &&
                                   Catch::Contains("16-41-30Z.json") && Catch::Contains("; fix:"));
    }
}

TEST_CASE("a folder of two lessons gives one row per lesson, and a lesson without answers is said", "[grading][batch]") {
    Class c;
    const Run a05 = fixture_run();
    const Run a01(lab::record::read_record(fixture_run_file("02.01-quick.json")));
    hand_in(c.subs / "alice", a05, "02.05-run.json");
    hand_in(c.subs / "alice", a01, "02.01-run.json", blank_answers(a01));
    hand_in(c.subs / "bob", as_student("bob"), "02.05-run.json");
    Run b01 = a01;
    restudent(b01, "bob");
    hand_in(c.subs / "bob", b01, "02.01-run.json", "-");   // bob's 02.01 run, no answers for it

    const BatchResult r = c.grade();
    const auto alice = rows_of(r, "alice");
    REQUIRE(alice.size() == 2);
    CHECK(alice[0]->lesson != alice[1]->lesson);
    for (const auto* e : alice) CHECK(e->status() == "practice");
    const auto bob = rows_of(r, "bob");
    REQUIRE(bob.size() == 2);
    const auto bob01 = std::find_if(bob.begin(), bob.end(), [](const BatchEntry* e) { return e->lesson == "02.01"; });
    REQUIRE(bob01 != bob.end());
    CHECK((*bob01)->status() == "error");
    CHECK((*bob01)->reason() == "no answers file found for lesson 02.01");
    CHECK((*bob01)->report.max_score > 0);

    // Question columns by lesson, then each spec's order; named with their lesson.
    GradingContext ctx;
    std::vector<std::string> expected;
    for (const char* lesson : {"02.01", "02.05"})
        for (const auto& q : ctx.spec(lesson).questions) expected.push_back(std::string(lesson) + ":" + q.id);
    const std::string csv = lab::grader::gradebook_csv(r);
    CHECK(csv.substr(0, csv.find('\n')) == "folder,student,lesson,score,max,status,reason,flags," + fmt::format("{}", fmt::join(expected, ",")));
    // Two lessons of one student are not one student graded twice.
    for (const auto& e : r.entries) CHECK_FALSE(has(e, "duplicate_student"));
}

TEST_CASE("an export with one more level is descended; a folder of several students' files is refused", "[grading][batch]") {
    Class c;
    const fs::path exported = c.subs / "assignment_77_export";
    for (const char* who : {"alice", "bob", "carol"}) hand_in(exported / who, as_student(who));
    const BatchResult r = c.grade();
    REQUIRE(r.entries.size() == 3);
    CHECK(row(r, "bob").student == "bob");
    CHECK(row(r, "bob").status() == "practice");
    CHECK(r.graded_dir == exported);
    REQUIRE(r.notes.size() == 1);
    CHECK_THAT(r.notes[0], Catch::Contains("assignment_77_export") && Catch::Contains("3 submission folders"));

    SECTION("one folder holding alice's and bob's files") {
        lab_test::TempDir other;
        hand_in(other / "merged", as_student("alice"), "a.json");
        hand_in(other / "merged", as_student("bob"), "b.json");
        hand_in(other / "carol", as_student("carol"));
        const BatchResult m = c.grade({}, other.path());
        const BatchEntry& e = row(m, "merged");
        CHECK(e.status() == "error");
        CHECK_THAT(e.reason(), Catch::Contains("'merged' holds the files of 2 students") && Catch::Contains("alice: a.json") &&
                                   Catch::Contains("bob: b.json"));
        CHECK(row(m, "carol").status() == "practice");
        CHECK(m.notes.empty());
    }
}

TEST_CASE("another student's run in one lesson of a folder is that lesson's problem: the student's other lessons are graded", "[grading][batch]") {
    // An instructor review: eve's folder held her own 02.05 run and answers, and frank's 02.01 run
    // under her 02.01 answers (a copy). The whole folder was refused as "the files of 2 students":
    // her honest 02.05 went ungraded, and the copy was never compared with frank's run.
    Class c;
    const Run a01(lab::record::read_record(fixture_run_file("02.01-quick.json")));
    Run frank01 = a01;
    restudent(frank01, "frank");
    Run eve05 = as_student("eve");
    hand_in(c.subs / "eve", eve05, "02.05-run.json");
    std::string copied = blank_answers(frank01);
    const std::string frank_line = "student: \"frank\"";
    copied.replace(copied.find(frank_line), frank_line.size(), "student: \"eve\"");
    hand_in(c.subs / "eve", frank01, "02.01-run.json", copied);
    hand_in(c.subs / "frank", frank01, "02.01-run.json", blank_answers(frank01));
    hand_in(c.subs / "frank", as_student("frank"), "02.05-run.json");

    const BatchResult r = c.grade();
    const auto eve = rows_of(r, "eve");
    REQUIRE(eve.size() == 2);
    const auto lesson_row = [&](const char* lesson) {
        const auto it = std::find_if(eve.begin(), eve.end(), [&](const BatchEntry* e) { return e->lesson == lesson; });
        REQUIRE(it != eve.end());
        return *it;
    };
    const BatchEntry* honest = lesson_row("02.05");
    CAPTURE(honest->reason());
    CHECK(honest->status() == "practice");
    CHECK(honest->report.score == honest->report.max_score);
    const BatchEntry* copy = lesson_row("02.01");
    CAPTURE(copy->reason());
    CHECK(copy->status() != "practice");
    CHECK_THAT(copy->reason(), Catch::Contains("frank"));
    CHECK(std::any_of(copy->flags.begin(), copy->flags.end(), [](const std::string& f) { return f.rfind("same_digest", 0) == 0; }));
    for (const auto* e : eve) CHECK_THAT(e->reason(), !Catch::Contains("holds the"));

    SECTION("several students' files of one lesson beside it: only that lesson is refused, and says which") {
        Run bob05 = as_student("bob");
        hand_in(c.subs / "eve", bob05, "bob-02.05-run.json");
        const BatchResult m = c.grade();
        const auto rows = rows_of(m, "eve");
        REQUIRE(rows.size() == 2);
        for (const auto* e : rows) {
            CAPTURE(e->lesson, e->reason());
            if (e->lesson == "02.05") {
                CHECK(e->status() == "error");
                CHECK_THAT(e->reason(), Catch::Contains("'eve' holds the lesson 02.05 files of 2 students") && Catch::Contains("bob: bob-02.05-run.json"));
                CHECK(e->report.max_score > 0);
            } else {
                CHECK(e->lesson == "02.01");
                CHECK_THAT(e->reason(), !Catch::Contains("holds the"));
            }
        }
    }
}

TEST_CASE("answers to a question the spec does not ask are warned about once for the class, on stderr and the class page", "[grading][batch]") {
    // An instructor review: a question renamed in the spec ('units_used' -> 'units_share') zeroed it
    // for the whole class with no word in lab grade's summary or pages (lab submit said it).
    Class c;
    for (const char* who : {"alice", "bob"}) {
        const Run run = as_student(who);
        hand_in(c.subs / who, run, "run.json", right_answers(run) + "  old_question_id: 42\n");
    }
    hand_in(c.subs / "carol", as_student("carol"));
    const BatchResult r = c.grade();
    REQUIRE(r.entries.size() == 3);
    const auto warned = std::count_if(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.find("2 answers files of lesson 02.05 answer 'old_question_id', which the grading spec does not ask") != std::string::npos &&
               w.find("alice, bob") != std::string::npos;
    });
    CAPTURE(r.warnings);
    CHECK(warned == 1);
    for (const auto& e : r.entries) CHECK(e.status() == "practice");   // graded all the same
    const std::string page = lab::grader::render_class_html({r, "Class report", "practice", {}, {}, {}});
    const auto list = page.find("<ul id=\"warnings\">");
    REQUIRE(list != std::string::npos);
    CHECK(page.find("old_question_id", list) < page.find("</ul>", list));
}

TEST_CASE("a folder names a student as a whole token, and folders without names are not flagged", "[grading][batch]") {
    CHECK(lab::grader::folder_names_student("alice_1234", "alice"));
    CHECK(lab::grader::folder_names_student("Smith, Alice - alice.smith", "alice.smith"));
    CHECK(lab::grader::folder_names_student("1234-bob", "bob"));
    CHECK(lab::grader::folder_names_student("Smith, Bob (bob)", "bob"));
    CHECK(lab::grader::folder_names_student("bob", "bob"));
    CHECK_FALSE(lab::grader::folder_names_student("bobby_tables", "bob"));
    CHECK_FALSE(lab::grader::folder_names_student("jacob", "bob"));
    CHECK_FALSE(lab::grader::folder_names_student("submission_1001", "alice"));

    Class c;
    SECTION("bobby_tables/ holding bob's run is flagged; bob_1234/ is not") {
        hand_in(c.subs / "bobby_tables", as_student("bob"));
        hand_in(c.subs / "carol_1234", as_student("carol"));
        const BatchResult r = c.grade();
        CHECK(has(row(r, "bobby_tables"), "folder_mismatch"));
        CHECK_FALSE(has(row(r, "carol_1234"), "folder_mismatch"));
    }
    SECTION("Gradescope's submission_NNNN folders: no folder_mismatch, said once; a swap shows as duplicate_student") {
        hand_in(c.subs / "submission_1001", as_student("alice"));
        hand_in(c.subs / "submission_1002", as_student("bob"));
        hand_in(c.subs / "submission_1003", rerun("alice"));   // alice's second run, in carol's submission
        const BatchResult r = c.grade();
        for (const auto& e : r.entries) CHECK_FALSE(has(e, "folder_mismatch"));
        REQUIRE(r.notes.size() == 1);
        CHECK_THAT(r.notes[0], Catch::Contains("carry no student ID"));
        CHECK(has(row(r, "submission_1001"), "duplicate_student"));
        CHECK(has(row(r, "submission_1003"), "duplicate_student"));
        CHECK_FALSE(has(row(r, "submission_1002"), "duplicate_student"));
    }
    SECTION("Gradescope's submission_metadata.yml names each folder's submitter: a swapped run is flagged, in bob's row") {
        hand_in(c.subs / "submission_1001", as_student("alice"));
        hand_in(c.subs / "submission_1002", as_student("alice"));   // bob's submission holds alice's run
        lab_test::write_file(c.subs / "submission_metadata.yml",
                             "submission_1001:\n  :submitters:\n  - :name: Alice A\n    :sid: S1\n    :email: alice@u.edu\n"
                             "submission_1002:\n  :submitters:\n  - :name: Bob B\n    :sid: S2\n    :email: bob@u.edu\n");
        const BatchResult r = c.grade();
        CHECK_FALSE(has(row(r, "submission_1001"), "folder_mismatch"));
        CHECK(has(row(r, "submission_1002"), "folder_mismatch"));
        // The row is bob's, who uploaded it (refused: the run is alice's), not a second row of alice's.
        CHECK(row(r, "submission_1002").student == "bob");
        CHECK(row(r, "submission_1002").status() == "refused");
        CHECK_FALSE(has(row(r, "submission_1002"), "duplicate_student"));
        CHECK_FALSE(has(row(r, "submission_1001"), "duplicate_student"));
    }
    SECTION("a submission_metadata.yml that cannot be read is said, not silently ignored") {
        hand_in(c.subs / "submission_1001", as_student("alice"));
        lab_test::write_file(c.subs / "submission_metadata.yml", "submission_1001:\n  :submitters: [\n");
        const BatchResult r = c.grade();
        CHECK(row(r, "submission_1001").status() == "practice");
        CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
            return n.find("submission_metadata.yml could not be read") != std::string::npos && n.find("fix:") != std::string::npos;
        }));
    }
    SECTION("a group's partner on the roster shares the group's grade, flagged group_member, never missing") {
        hand_in(c.subs / "submission_2002", as_student("alice"));
        lab_test::write_file(c.subs / "submission_metadata.yml",
                             "submission_2002:\n  :submitters:\n  - :name: Bob B\n    :email: bob@u.edu\n"
                             "  - :name: Alice A\n    :email: alice@u.edu\n");
        BatchOptions options;
        options.roster = {"alice", "bob", "carol"};
        const BatchResult r = c.grade(options);
        const auto rows = rows_of(r, "submission_2002");
        REQUIRE(rows.size() == 2);
        const BatchEntry& alice = *rows[0];
        const BatchEntry& bob = *rows[1];
        CHECK(alice.student == "alice");
        CHECK(bob.student == "bob");
        CHECK(has(bob, "group_member"));
        CHECK(bob.report.score == alice.report.score);
        CHECK(bob.status() == alice.status());
        const auto missing = std::count_if(r.entries.begin(), r.entries.end(), [](const BatchEntry& e) { return e.missing; });
        CHECK(missing == 1);   // carol
    }
}

TEST_CASE("the gradebook: a max on every row, one-line reasons, --lesson, a roster's missing students", "[grading][batch]") {
    Class c;
    hand_in(c.subs / "alice", fixture_run());
    fs::create_directories(c.subs / "dave");   // handed in nothing
    Run carol = as_student("carol");
    hand_in(c.subs / "carol", carol);
    json edited = carol.record;
    edited["workloads"][0]["time_s"]["median"] = edited["workloads"][0]["time_s"]["median"].get<double>() * 1.5;   // not sealed again
    lab_test::write_file(c.subs / "carol/run.json", edited.dump(1));
    const Run e01(lab::record::read_record(fixture_run_file("02.01-quick.json")));
    Run erin = e01;
    restudent(erin, "erin");
    hand_in(c.subs / "erin", erin, "run.json", blank_answers(erin));

    BatchOptions options;
    options.lesson = "02.05";
    options.roster = {"alice", "carol", "dave", "erin", "frank"};
    const BatchResult r = c.grade(options);
    CHECK(row(r, "alice").status() == "practice");
    const BatchEntry& dave = row(r, "dave");
    CHECK(dave.reason() == "no submission (empty folder)");
    const BatchEntry& tampered = row(r, "carol");
    CHECK(tampered.status() == "error");
    CHECK(tampered.error_kind == "tampered");
    CHECK(tampered.reason().find('\n') == std::string::npos);
    CHECK_THAT(tampered.reason(), Catch::Contains("corrupted; fix: "));
    const BatchEntry& other = row(r, "erin");
    CHECK(other.status() == "refused");
    CHECK_THAT(other.reason(), Catch::Contains("lesson 02.01, not 02.05"));
    // frank is on the roster and handed in nothing; dave's empty folder names him, so he is not missing.
    const auto missing = std::count_if(r.entries.begin(), r.entries.end(), [](const BatchEntry& e) { return e.missing; });
    CHECK(missing == 1);
    const BatchEntry& frank = r.entries.back();
    CHECK(frank.student == "frank");
    CHECK(frank.status() == "missing");

    const std::string csv = lab::grader::gradebook_csv(r);
    const double max = row(r, "alice").report.max_score;
    CHECK_THAT(csv, Catch::Contains(fmt::format("\ncarol,carol,02.05,0,{:g},error,", max)));
    // dave's empty folder is his row, of the class's lesson: an import by student finds it.
    CHECK_THAT(csv, Catch::Contains(fmt::format("\ndave,dave,02.05,0,{:g},error,no submission (empty folder),", max)));
    CHECK_THAT(csv, Catch::Contains(fmt::format("\n,frank,02.05,0,{:g},missing,no submission,", max)));
    CHECK_THAT(csv, Catch::Contains(fmt::format("\nerin,erin,02.01,0,{:g},refused,", max)));
}

TEST_CASE("the gradebook leaves a refused row's questions blank and has --lesson's columns when nothing was graded", "[grading][batch]") {
    Class c;
    // The shipped 02.05 spec grades full runs only: alice's quick run is evaluated, then refused.
    fs::copy_file(lab_test::source_root() / "configs/grading/02.05.yaml", c.dir / "configs/grading/02.05.yaml",
                  fs::copy_options::overwrite_existing);
    hand_in(c.subs / "alice", fixture_run());
    BatchOptions options;
    options.lesson = "02.05";
    const BatchResult r = c.grade(options);
    const BatchEntry& alice = row(r, "alice");
    REQUIRE(alice.status() == "refused");
    REQUIRE_FALSE(alice.report.results.empty());   // what makes this row differ from a missing one

    // Every question of 02.05 has its column, though no row was graded.
    GradingContext ctx;
    std::vector<std::string> ids;
    for (const auto& q : ctx.spec("02.05").questions) ids.push_back(q.id);
    const std::string csv = lab::grader::gradebook_csv(r);
    CHECK(csv.substr(0, csv.find('\n')) == "folder,student,lesson,score,max,status,reason,flags," + fmt::format("{}", fmt::join(ids, ",")));
    // Not graded: its score is 0 and its questions blank, never a 0 that reads as a wrong answer.
    const std::string line = csv.substr(csv.find("\nalice,alice,02.05,0,") + 1);
    CHECK_THAT(line.substr(0, line.find('\n')), Catch::EndsWith("," + std::string(ids.size(), ',')));

    // Only another lesson's run handed in: nothing of 02.05 evaluated, its columns all the same.
    Class other;
    Run erin(lab::record::read_record(fixture_run_file("02.01-quick.json")));
    restudent(erin, "erin");
    hand_in(other.subs / "erin", erin, "run.json", blank_answers(erin));
    const std::string none = lab::grader::gradebook_csv(other.grade(options));
    CHECK(none.substr(0, none.find('\n')) == "folder,student,lesson,score,max,status,reason,flags," + fmt::format("{}", fmt::join(ids, ",")));
}

TEST_CASE("a run record handed in empty is named, not taken for no run at all", "[grading][batch]") {
    Class c;
    const Run alice = fixture_run();
    hand_in(c.subs / "alice", alice);
    lab_test::write_file(c.subs / "alice/run.json", "");   // the upload carried nothing
    const BatchResult r = c.grade();
    const BatchEntry& e = row(r, "alice");
    CHECK(e.status() == "error");
    CHECK_THAT(e.reason(), Catch::StartsWith("no run record found of lesson 02.05 (run.json is empty: 0 bytes)") &&
                               Catch::Contains("fix: hand in the run record `lab run 02.05` wrote"));
}

TEST_CASE("an empty submissions folder is bad input, not an empty gradebook", "[grading][batch]") {
    Class c;
    const std::string err = input_error([&] { c.grade(); });
    CHECK_THAT(err, Catch::Contains("no submission folders in"));
}

TEST_CASE("a reason of several lines reads as one line in the gradebook", "[grading][batch]") {
    CHECK(lab::grader::one_line("run.json: the run record's digest does not match its content: the file was edited or corrupted\n"
                                "  fix: record the run again") ==
          "run.json: the run record's digest does not match its content: the file was edited or corrupted; fix: record the run again");
    CHECK(lab::grader::one_line("a;\n  b\n\n c") == "a; b; c");
}

TEST_CASE("a roster that matches none or only some of the students who handed in is warned about", "[grading][batch]") {
    Class c;
    hand_in(c.subs / "alice", fixture_run());
    hand_in(c.subs / "bob", as_student("bob"));
    BatchOptions options;
    options.roster_rule = "column 'SID' (sid)";
    SECTION("none: likely the wrong column") {
        options.roster = {"1001", "1002", "1003"};
        const BatchResult r = c.grade(options);
        REQUIRE(r.warnings.size() == 1);
        CHECK_THAT(r.warnings[0], Catch::StartsWith("none of the 2 students who handed in is on the roster (read by column 'SID' "
                                                    "(sid)): is it the right column?"));
    }
    SECTION("some: named") {
        options.roster = {"alice", "carol"};
        const BatchResult r = c.grade(options);
        REQUIRE(r.warnings.size() == 1);
        CHECK(r.warnings[0] == "1 student who handed in is not on the roster (read by column 'SID' (sid)): bob");
    }
    SECTION("all on it: nothing said") {
        options.roster = {"alice", "bob", "carol"};
        CHECK(c.grade(options).warnings.empty());
    }
}

// An operator's review: erin's answers were bound (run: digest) to bob's run, which bob's own
// folder held. Her row said only that the answers are bound to a run by digest; the folder is what
// the operator can look at.
TEST_CASE("answers bound to a run another folder holds name that folder and are flagged bound_to_other_folder", "[grading][batch]") {
    Class c;
    const Run bob = as_student("bob"), erin = rerun("erin");
    hand_in(c.subs / "bob", bob);
    hand_in(c.subs / "erin", erin, "run.json", right_answers(erin, bob.digest()));
    const BatchResult r = c.grade();
    const BatchEntry& e = row(r, "erin");
    CAPTURE(e.reason());
    CHECK(e.status() == "error");
    CHECK_THAT(e.reason(), Catch::Contains("the answers were made from the run in folder bob/"));
    CHECK(has(e, "bound_to_other_folder"));
    CHECK_FALSE(has(row(r, "bob"), "bound_to_other_folder"));
    CHECK(row(r, "bob").status() == "practice");

    SECTION("bound to a run no folder holds: no flag") {
        hand_in(c.subs / "erin", erin, "run.json", right_answers(erin, "sha256:" + std::string(64, '0')));
        const BatchResult again = c.grade();
        const BatchEntry& alone = row(again, "erin");
        CHECK_FALSE(has(alone, "bound_to_other_folder"));
        CHECK_THAT(alone.reason(), !Catch::Contains("made from the run in folder"));
    }
}
