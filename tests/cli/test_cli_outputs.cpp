// Outputs a person names on the command line never replace the command's own inputs or each
// other (a robustness review: `lab token roster.csv --key k --out k` turned the course key into
// the tokens CSV, `lab submit --results run.json` replaced the run it graded, `lab run --out a.json
// --trace a.json` kept only the trace), and a link, a device or a FIFO given as an output is
// written through, not replaced by a regular file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::run_lab;

namespace {

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("an output path that is one of the command's inputs, or another of its outputs, is refused before anything is written",
          "[integrity-cli]") {
    lab_test::TempDir d;
    const fs::path key = d / "course.key", roster = d / "roster.csv";
    REQUIRE(run_lab({"token", "--new-key", key.string()}).exit_code == 0);
    write(roster, "student\nalice\nbob\n");
    const std::string key_text = lab_test::read_file(key);

    SECTION("lab token --out KEY") {
        const auto r = run_lab({"token", roster.string(), "--key", key.string(), "--out", key.string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--out " + key.string() + " is a file this command reads: writing it would replace it") &&
                              Catch::Contains("fix: give --out another path"));
        CHECK(lab_test::read_file(key) == key_text);
    }
    SECTION("lab token --new-key and --out on one path") {
        const auto r = run_lab({"token", roster.string(), "--new-key", (d / "k2").string(), "--out", (d / "k2").string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("is also the --new-key file"));
        CHECK_FALSE(fs::exists(d / "k2"));
    }
    SECTION("lab submit --results over the run it grades, or over the key") {
        const fs::path run = d / "run.json", answers = d / "answers.yaml";
        fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json", run);
        write(answers, "lesson: \"02.05\"\n");
        const std::string before = lab_test::read_file(run);
        auto r = run_lab({"submit", "02.05", answers.string(), "--run", run.string(), "--results", run.string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--results " + run.string() + " is a file this command reads"));
        CHECK(lab_test::read_file(run) == before);
        r = run_lab({"submit", "02.05", answers.string(), "--run", run.string(), "--results", key.string(), "--key", key.string()});
        CHECK(r.exit_code == 2);
        CHECK(lab_test::read_file(key) == key_text);
    }
    SECTION("lab grade --out over the roster, or over a submitted run it read") {
        fs::create_directories(d / "class/alice");
        fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json", d / "class/alice/run.json");
        const std::string run_text = lab_test::read_file(d / "class/alice/run.json");
        auto r = run_lab({"grade", (d / "class").string(), "--roster", roster.string(), "--out", roster.string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--out " + roster.string() + " is a file this command reads"));
        CHECK(lab_test::read_file(roster) == "student\nalice\nbob\n");
        r = run_lab({"grade", (d / "class").string(), "--out", (d / "class/alice/run.json").string()});
        CHECK(r.exit_code == 2);
        CHECK(lab_test::read_file(d / "class/alice/run.json") == run_text);
    }
    SECTION("lab run --out and --trace on one path, refused before measuring") {
        const auto r = run_lab({"run", "02.05", "--quick", "--out", (d / "x.json").string(), "--trace", (d / "x.json").string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--trace " + (d / "x.json").string() + " is also the --out file"));
        CHECK_FALSE(fs::exists(d / "x.json"));
    }
}

TEST_CASE("an output through a link replaces the file it names; a FIFO is written through", "[integrity-cli]") {
    lab_test::TempDir d;
    const fs::path key = d / "course.key", roster = d / "roster.csv";
    REQUIRE(run_lab({"token", "--new-key", key.string()}).exit_code == 0);
    write(roster, "student\nalice\n");
    fs::create_symlink("tokens.csv", d / "link.csv");
    REQUIRE(run_lab({"token", roster.string(), "--key", key.string(), "--out", (d / "link.csv").string()}).exit_code == 0);
    CHECK(fs::is_symlink(fs::symlink_status(d / "link.csv")));
    CHECK_THAT(lab_test::read_file(d / "tokens.csv"), Catch::StartsWith("student,token\nalice,alice."));

    // A FIFO stays a FIFO: its reader (here the shell's cat) receives the CSV.
    const fs::path fifo = d / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const fs::path got = d / "got.csv";
    REQUIRE(std::system(("cat '" + fifo.string() + "' > '" + got.string() + "' &").c_str()) == 0);
    REQUIRE(run_lab({"token", roster.string(), "--key", key.string(), "--out", fifo.string()}).exit_code == 0);
    for (int i = 0; i < 100 && lab_test::read_file(got).empty(); ++i) ::usleep(20000);
    CHECK(fs::is_fifo(fs::status(fifo)));
    CHECK_THAT(lab_test::read_file(got), Catch::StartsWith("student,token\nalice,alice."));

    // /dev/stdout is the stream already open (here a pipe to the test): written to, never a file
    // made beside it (a code review: through /proc/self/fd it was "cannot write in this folder").
    const auto r = run_lab({"token", roster.string(), "--key", key.string(), "--out", "/dev/stdout"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("student,token\nalice,alice."));
}

TEST_CASE("a run that fails leaves none of the folders it made for its outputs", "[integrity-cli]") {
    lab_test::TempDir d;
    // The fixture lesson that never ends: it fails at its time limit on any machine, however fast.
    fs::create_directories(d / "plugins");
    fs::copy_file(lab_test::fixture_plugin("hanging_lesson"), d / "plugins/lab_hanging_lesson.so");
    const auto r = run_lab({"run", "99.02", "--quick", "--student", "s", "--timeout", "1", "--plots", (d / "new/plots").string(), "--out",
                            (d / "new/records/run.json").string()},
                           {{"LAB_PLUGIN_PATH", (d / "plugins").string()}, {"LAB_TIMEOUT", ""}});
    CHECK(r.exit_code == 3);
    CHECK_FALSE(fs::exists(d / "new"));
}

// A folder lab may not write in (/proc: even root cannot make a file there) is said before the
// lesson runs: found after it, a full run's minute and its table were lost (a bad-input review).
// The fixture lesson never ends, so a check after the run would be its time limit (exit 3).
TEST_CASE("a run's --out, --report or --trace in a folder lab cannot write in is refused before it measures", "[integrity-cli]") {
    lab_test::TempDir d;
    fs::create_directories(d / "plugins");
    fs::copy_file(lab_test::fixture_plugin("hanging_lesson"), d / "plugins/lab_hanging_lesson.so");
    const std::map<std::string, std::string> env{{"LAB_PLUGIN_PATH", (d / "plugins").string()}, {"LAB_TIMEOUT", ""}};
    const std::string out = (d / "run.json").string();
    for (const auto& [flag, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"--out", {"--out", "/proc/run.json"}},
             {"--report", {"--out", out, "--report", "/proc/run.html"}},
             {"--trace", {"--out", out, "--trace", "/proc/trace.json.gz"}}}) {
        CAPTURE(flag);
        std::vector<std::string> argv{"run", "99.02", "--quick", "--student", "s", "--timeout", "5"};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = run_lab(argv, env);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("cannot write " + flag + " in this folder") && Catch::Contains("/proc"));
        CHECK_FALSE(fs::exists(out));
    }
}

// A robustness review's unclear messages, each said plainly now.
TEST_CASE("bad input says what is wrong in words: a folder for a file, a reason for an unreadable file, a lost zero", "[integrity-cli]") {
    lab_test::TempDir d;
    fs::create_directories(d / "dir");
    auto r = run_lab({"token", (d / "dir").string(), "--key", (d / "dir").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("the roster is a folder, not a file"));
    write(d / "roster.csv", "student\nalice\n");
    r = run_lab({"token", (d / "roster.csv").string(), "--key", (d / "dir").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("the course key is a folder, not a file"));
    r = run_lab({"submit", "02.05", (d / "missing.yaml").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("(No such file or directory)"));
    r = run_lab({"grade", d.path().string(), "--out", (d / "dir").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--out " + (d / "dir").string() + " is a folder: give the gradebook a file name"));
    r = run_lab({"model", "llama-2-7b", "--batch", "-1"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--batch is negative (-1): it takes a whole number") && Catch::Contains("fix: give --batch a whole number"));
    write(d / "cut.json", "{\"traceEvents\": [\n");
    r = run_lab({"trace", (d / "cut.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("not valid JSON: syntax error") && !Catch::Contains("json.exception"));
    fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json", d / "run.json");
    write(d / "answers.yaml", "lesson: 2.05\nstudent: x\nrun: y\nanswers:\n  ridge_point: 1\n");
    r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", (d / "run.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("fix: write the lesson as lab does, in quotes: lesson: \"02.05\""));
}

TEST_CASE("lab audit refuses a sample of none and an infinite tolerance", "[integrity-cli]") {
    lab_test::TempDir d;
    for (const char* sample : {"0", "0%", "nan"}) {
        CAPTURE(sample);
        const auto r = run_lab({"audit", d.path().string(), "--sample", sample});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--sample takes a share such as 10% or a count such as 5 (more than 0)"));
    }
    const auto r = run_lab({"audit", d.path().string(), "--tolerance", "inf"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--tolerance is a factor of at least 1.05 and finite"));
}

// A robustness review named a submission folder with an escape sequence: lab grade's summary
// cleared the reader's terminal. Other people's control characters reach standard output as '?'.
TEST_CASE("a folder name's escape sequence reaches standard output as a '?'", "[integrity-cli]") {
    lab_test::TempDir d;
    const std::string name = "al\x1b[2Jice";
    fs::create_directories(d / "class" / name);
    fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json", d / "class" / name / "run.json");
    const auto r = run_lab({"grade", (d / "class").string(), "--out", (d / "g.csv").string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("al?[2Jice") && !Catch::Contains("\x1b"));
}

TEST_CASE("output that cannot be written ends in exit 2 with the reason, not 0 or an internal error", "[integrity-cli]") {
    // `lab token roster.csv --key k > tokens.csv` on a full disk ended 0 with an empty file; a
    // name too long for the file system was "internal error ... please report it" (exit 3).
    lab_test::TempDir d;
    const std::string err = (d / "err").string();
    const std::string lab = lab_test::lab_executable().string();
    int status = std::system((lab + " list > /dev/full 2> " + err).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(lab_test::read_file(err), Catch::Contains("cannot write the output (No space left on device)") && Catch::Contains("fix: "));
    status = std::system((lab + " --version >&- 2> " + err).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    status = std::system((lab + " --help | head -1 > /dev/null 2> " + err).c_str());
    CHECK(lab_test::read_file(err).empty());  // a reader that stopped early is no failure

    const fs::path run = lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json";
    const std::string long_name = std::string(300, 'a') + ".html";
    const auto r = lab_test::run_lab_in(d.path(), {"report", run.string(), "--out", long_name});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("File name too long") && Catch::Contains("fix: use a shorter path") &&
                          !Catch::Contains("internal error"));
}
