// `lab grade`'s outputs written as one set (grading_outputs.hpp), as a grading operator's review
// found them after kill -9 during a regrade: per-student pages of the new grading beside a
// gradebook of the old one, and temporary files left in the pages folder. A grading is stopped
// here at each step by a child process that exits there (no destructor, no handler runs: a kill).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "grading_outputs.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using lab::grader::ClassReportFiles;
using lab::grader::GradingOutputs;

namespace {

// One grading's outputs, every file saying which grading it is of.
GradingOutputs grading(const fs::path& dir, const std::string& which, const std::vector<std::string>& pages) {
    ClassReportFiles r{dir / "class.html", dir / "class-reports", "class page " + which, {}};
    for (const auto& p : pages) r.pages.emplace_back(p, p + " " + which);
    return {dir / "gradebook.csv", "gradebook " + which + "\n", r};
}

// The folder's files by name (hidden ones included), with their text.
std::map<std::string, std::string> files_in(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) out[e.path().filename().string()] = lab_test::read_file(e.path());
    return out;
}

// The pages of one grading, the operator's own file beside them.
std::map<std::string, std::string> pages_of(const GradingOutputs& g, const fs::path& pages_dir) {
    std::map<std::string, std::string> out{{"notes.txt", "the operator's\n"}};
    for (const auto& [name, html] : g.report->pages) out[name] = html;
    auto listed = files_in(pages_dir);
    if (listed.count(".lab-pages")) out[".lab-pages"] = listed[".lab-pages"];   // compared apart
    return out;
}

// Runs write_grading_outputs in a child that exits at `stop`, as kill -9 would stop it there.
void write_stopped_at(const GradingOutputs& g, const std::string& stop) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        try {
            lab::grader::write_grading_outputs(g, [&](const std::string& step) {
                if (step == stop) _exit(0);
            });
        } catch (...) {
            _exit(2);
        }
        _exit(3);   // never reached the step
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST_CASE("a grading stopped at any step leaves the old set, or a marker; the next run writes the whole set and removes what was left",
          "[class-report]") {
    const std::string stop = GENERATE("pages", "swap", "class page", "gradebook", "done");
    CAPTURE(stop);
    lab_test::TempDir dir;
    const GradingOutputs old_set = grading(dir.path(), "old", {"alice.html", "carol.html"});
    const GradingOutputs new_set = grading(dir.path(), "new", {"alice.html", "bob.html"});
    lab::grader::write_grading_outputs(old_set);
    lab_test::write_file(dir / "class-reports/notes.txt", "the operator's\n");
    const auto old_pages = files_in(dir / "class-reports");

    write_stopped_at(new_set, stop);
    const fs::path marker = lab::grader::incomplete_marker(dir / "gradebook.csv");
    const auto pages = files_in(dir / "class-reports");
    // The pages folder is one grading's, whole, whenever it was stopped; the operator's file stays.
    const bool old_pages_there = pages == old_pages;
    CHECK((old_pages_there || pages == pages_of(new_set, dir / "class-reports")));
    CHECK(pages.at("notes.txt") == "the operator's\n");
    const std::string book = lab_test::read_file(dir / "gradebook.csv"), cls = lab_test::read_file(dir / "class.html");
    const bool all_old = old_pages_there && book == old_set.gradebook_csv && cls == old_set.report->class_html;
    const bool all_new = !old_pages_there && book == new_set.gradebook_csv && cls == new_set.report->class_html;
    // Either one grading's set, or the marker says the files may disagree.
    CHECK((all_old || all_new || fs::exists(marker)));
    if (stop == "pages" || stop == "swap" || stop == "class page" || stop == "gradebook") CHECK(fs::exists(marker));
    CHECK_THAT(lab_test::read_file(marker), Catch::Contains("did not finish") && Catch::Contains("Run the same `lab grade"));

    const auto again = lab::grader::write_grading_outputs(new_set);
    CHECK(again.earlier_interrupted);
    CHECK_FALSE(fs::exists(marker));
    CHECK(files_in(dir / "class-reports") == pages_of(new_set, dir / "class-reports"));
    CHECK(lab_test::read_file(dir / "gradebook.csv") == new_set.gradebook_csv);
    CHECK(lab_test::read_file(dir / "class.html") == new_set.report->class_html);
    // Nothing of the stopped grading is left: no folder made aside, no temporary file.
    for (const auto& e : fs::directory_iterator(dir.path()))
        CHECK(e.path().filename().string().rfind(".class-reports", 0) != 0);
}

TEST_CASE("temporary files a killed grading left beside the gradebook, the class page and in the pages folder are removed",
          "[class-report]") {
    lab_test::TempDir dir;
    const GradingOutputs g = grading(dir.path(), "new", {"alice.html"});
    fs::create_directories(dir / "class-reports");
    // write_file_atomically's names for files it had not yet renamed into place.
    for (const fs::path& left : {dir / ".gradebook.csv.Ab12Cd", dir / ".class.html.x9Y8z7", dir / "class-reports/.alice.html.QwE456",
                                 dir / "class-reports/..lab-pages.Zz0011"})
        lab_test::write_file(left, "half-written\n");
    // Not lab's: a hidden file of the operator's, and one named like a temporary of another file.
    lab_test::write_file(dir / "class-reports/.keep", "mine\n");
    lab_test::write_file(dir / ".notes.txt.Ab12Cd", "mine\n");
    const auto w = lab::grader::write_grading_outputs(g);
    CHECK(w.leftovers_removed == 4);
    CHECK_FALSE(fs::exists(dir / ".gradebook.csv.Ab12Cd"));
    CHECK_FALSE(fs::exists(dir / ".class.html.x9Y8z7"));
    CHECK_FALSE(fs::exists(dir / "class-reports/.alice.html.QwE456"));
    CHECK_FALSE(fs::exists(dir / "class-reports/..lab-pages.Zz0011"));
    CHECK(lab_test::read_file(dir / "class-reports/.keep") == "mine\n");
    CHECK(lab_test::read_file(dir / ".notes.txt.Ab12Cd") == "mine\n");
}

TEST_CASE("a pages folder moved aside where no swap was possible, stopped before the new one was put in place, is put back",
          "[class-report]") {
    lab_test::TempDir dir;
    const GradingOutputs g = grading(dir.path(), "new", {"alice.html"});
    // What the two renames leave when stopped between them: the old folder aside, the new one made.
    fs::create_directories(dir / ".class-reports.lab-old-aB3dE5");
    lab_test::write_file(dir / ".class-reports.lab-old-aB3dE5/notes.txt", "the operator's\n");
    fs::create_directories(dir / ".class-reports.lab-new-aB3dE5");
    lab_test::write_file(dir / ".class-reports.lab-new-aB3dE5/alice.html", "alice.html half\n");
    lab::grader::write_grading_outputs(g);
    CHECK(lab_test::read_file(dir / "class-reports/notes.txt") == "the operator's\n");
    CHECK(lab_test::read_file(dir / "class-reports/alice.html") == "alice.html new");
    CHECK_FALSE(fs::exists(dir / ".class-reports.lab-old-aB3dE5"));
    CHECK_FALSE(fs::exists(dir / ".class-reports.lab-new-aB3dE5"));
}
