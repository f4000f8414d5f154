// Which files of a submission folder are run records (submission_folder.hpp): found by content,
// whatever their names, and also when cut short, so a truncated upload is reported as truncated
// rather than as no run at all.
#include <catch2/catch.hpp>

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
