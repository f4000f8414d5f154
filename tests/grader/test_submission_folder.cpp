// Which files of a submission folder are run records (submission_folder.hpp): found by content,
// whatever their names, and also when cut short, so a truncated upload is reported as truncated
// rather than as no run at all.
#include <catch2/catch.hpp>

#include <algorithm>

#include "answers.hpp"
#include "errors.hpp"
#include "run_record.hpp"
#include "submission_folder.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("a run record cut short is still found as the folder's run, and a trace is not", "[grading][batch]") {
    const std::string whole = lab_test::read_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    // Keys are written sorted: the schema name sits near the end, so a cut at a third loses it.
    REQUIRE(whole.find("\"lab.run/1\"") > whole.size() / 3);
    lab_test::TempDir d;
    lab_test::write_file(d / "run.json", whole.substr(0, whole.size() / 3));
    lab_test::write_file(d / "bom.json", "\xEF\xBB\xBF{ \"declared_metrics\": [");
    lab_test::write_file(d / "trace.json", "{\"traceEvents\": [{\"name\": \"declared_metrics\"}]}");
    lab_test::write_file(d / "notes.txt", "declared_metrics {");
    const lab::grader::FolderContents c = lab::grader::scan_folder(d.path());
    REQUIRE(c.runs.size() == 2);
    CHECK(c.runs[0].file.filename() == "bom.json");
    CHECK(c.runs[1].file.filename() == "run.json");
    CHECK_FALSE(c.runs[1].parsed);  // grading reads it again, and says where it ends
    CHECK(c.files == 4);
}

// Windows PowerShell 5's `lab answers 02.05 > answers.yaml` writes UTF-16 with its mark: the
// folder's answers were not found ("no answers file"), and `lab submit` refused them as not UTF-8.
TEST_CASE("an answers file saved as UTF-16 is found in a folder and read as the same answers", "[grading][batch]") {
    lab_test::TempDir d;
    const std::string answers = "# Answers for lesson 02.05\nlesson: \"02.05\"\nstudent: \"alice\"\nrun: \"sha256:" + std::string(64, '0') +
                                "\"\nanswers:\n  ridge_point: 3.95\n";
    lab_test::write_file(d / "le.yaml", lab_test::utf16(answers, true));
    lab_test::write_file(d / "be.yaml", lab_test::utf16(answers, false));
    const lab::grader::FolderContents c = lab::grader::scan_folder(d.path());
    REQUIRE(c.answers.size() == 2);
    for (const auto& a : c.answers) {
        INFO(a.file.string() + ": " + a.error);
        CHECK(a.error.empty());
        CHECK(a.lesson == "02.05");
        CHECK(a.student == "alice");
    }
    const auto read = lab::grader::load_answers(d / "le.yaml");
    CHECK(read.answers.at("ridge_point").text == "3.95");
    CHECK(read.answers.at("ridge_point").line == 6);
    // A run record written by `lab run --json > run.json` there is the same record, its digest intact.
    const fs::path fixture = lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json";
    const std::string record = lab_test::read_file(fixture);
    REQUIRE(std::all_of(record.begin(), record.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; }));  // utf16() takes ASCII
    lab_test::write_file(d / "run.json", lab_test::utf16(record, true));
    const auto with_run = lab::grader::scan_folder(d.path());
    REQUIRE(with_run.runs.size() == 1);
    CHECK(with_run.runs[0].parsed);
    CHECK(lab::record::read_record(d / "run.json")["digest"] == lab::record::read_record(fixture)["digest"]);
    fs::remove(d / "run.json");
    // Cut to an odd number of bytes: refused, saying what it is and how to convert it; in a folder
    // it is still the student's answers file, said as cut short, not "no answers file".
    const std::string cut = lab_test::utf16(answers, true);
    lab_test::write_file(d / "cut.yaml", cut.substr(0, cut.size() - 1));
    const auto with_cut = lab::grader::scan_folder(d.path());
    REQUIRE(with_cut.answers.size() == 3);
    const auto cut_found = std::find_if(with_cut.answers.begin(), with_cut.answers.end(), [](const auto& a) { return a.file.filename() == "cut.yaml"; });
    REQUIRE(cut_found != with_cut.answers.end());
    CHECK_THAT(cut_found->error, Catch::Contains("UTF-16") && Catch::Contains("cut short"));
    try {
        lab::grader::load_answers(d / "cut.yaml");
        FAIL("a cut UTF-16 file was read");
    } catch (const lab::InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("cut.yaml") && Catch::Contains("UTF-16") && Catch::Contains("save it again as UTF-8"));
    }
}
