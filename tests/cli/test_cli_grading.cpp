// The grading commands as students and grading operators meet them: `lab answers` (a template
// bound to a run), `lab submit` (exit 0 graded, 1 not graded, 2 bad input; --results writes
// Gradescope's results.json, also on failure), `lab check-spec`, and `lab grade` over a folder of
// student folders whose files are found by content (gradebook CSV, summary, duplicate runs).
//
// The fixtures are --quick runs; the shipped specs refuse quick runs, so graded cases point
// LAB_CONFIG_DIR at a copy of configs/ holding tests/fixtures/grading/ (accept_quick: true).
// Expected values come from the lesson plugin's derivation of the fixture, never from here.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "course.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"
#include "derived_values.hpp"
#include "digest.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::run_lab;
using nlohmann::json;

namespace {

fs::path fixture_run_file() { return lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json"; }

const lab::LoadedLesson& lesson_02_05() {
    static const lab::LoadedLesson l = lab::load_lesson(lab_test::build_root() / "labs/02_05/lab_02_05.so");
    return l;
}

using lab_test::QuickConfigs;

// A run record with its derivation by the lesson's code.
struct Run {
    json record;
    lab::Derivation derived;
    explicit Run(json r) : record(std::move(r)) { refresh(); }
    void refresh() { derived = lesson_02_05().lesson->derivation(lab::record::raw_run_from_record(record)); }
    double number(const std::string& name) const { return lab_test::derived_number(derived, name); }
    std::string text(const std::string& name) const { return lab_test::derived_text(derived, name); }
    std::string digest() const { return record["digest"].get<std::string>(); }
    // The same measurements recorded under another student's name and seed, sealed.
    void restudent(const std::string& student) {
        lab::CourseConfig course = lab::load_course(lab_test::source_root() / "configs/course.yaml");
        record["student"] = student;
        record["seed"] = lab::student_seed(course, "02.05", student).hex;
        refresh();
        for (auto& [name, stored] : record["metrics"].items())
            if (const lab::MetricValue* m = derived.find(name)) stored["value"] = lab::record::to_json(*m)["value"];
        lab::record::seal(record);
    }
    void save(const fs::path& p) const { lab_test::write_file(p, record.dump(2)); }
};

Run fixture_run() { return Run(lab::record::read_record(fixture_run_file())); }

std::string num(double v) {
    std::ostringstream s;
    s.precision(5);
    s << v;
    return s.str();
}

// Every question of the test spec answered right (ridge scaled by `ridge_factor`).
std::string answers_for(const Run& run, double ridge_factor = 1.0) {
    std::string s = "lesson: \"02.05\"\nstudent: \"" + run.record["student"].get<std::string>() + "\"\nrun: \"" + run.digest() +
                    "\"\nanswers:\n";
    s += "  ridge_point: " + num(run.number("ridge_point") * ridge_factor) + " FLOP/B\n";
    s += "  attainable: " + num(run.number("attainable_flops_per_s") / 1e12) + " TFLOP/s\n";
    s += "  triad_side: bandwidth bound\n";
    s += "  fma_few_side: " + run.text("fma_few.predicted_regime") + "\n";
    s += "  fma_many_side: " + run.text("fma_many.predicted_regime") + "\n";
    s += "  sgemm_side: " + run.text("sgemm.predicted_regime") + "\n";
    s += "  triad_roof_fraction: " + num(100 * run.number("triad.roof_fraction")) + "%\n";
    return s;
}

// d/subs holding one folder, alice's: the fixture run and answers all right for it. Returns d/subs.
fs::path class_of_alice(const fs::path& d) {
    const fs::path subs = d / "subs";
    Run alice = fixture_run();
    fs::create_directories(subs / "alice");
    alice.save(subs / "alice" / "run.json");
    lab_test::write_file(subs / "alice" / "answers.yaml", answers_for(alice));
    return subs;
}

std::vector<std::string> spec_ids(const fs::path& spec) {
    std::vector<std::string> ids;
    for (const auto& q : YAML::LoadFile(spec.string())["questions"]) ids.push_back(q["id"].as<std::string>());
    return ids;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

TEST_CASE("lab answers prints a template with every question id and the run's digest", "[grading-cli][grading]") {
    Run run = fixture_run();
    auto r = run_lab({"answers", "02.05", "--run", fixture_run_file().string()});
    REQUIRE(r.exit_code == 0);
    YAML::Node t = YAML::Load(r.out);
    CHECK(t["lesson"].as<std::string>() == "02.05");
    CHECK(t["student"].as<std::string>() == "alice");
    CHECK(t["run"].as<std::string>() == run.digest());
    CHECK_THAT(r.out, Catch::Contains(run.digest()));
    REQUIRE(t["answers"].IsMap());
    const auto ids = spec_ids(lab_test::source_root() / "configs/grading/02.05.yaml");
    REQUIRE_FALSE(ids.empty());
    for (const auto& id : ids) {
        CAPTURE(id);
        CHECK(t["answers"][id]);
        CHECK_THAT(r.out, Catch::Contains("  " + id + ":"));
    }
    CHECK(t["answers"].size() == ids.size());
    // The fixture is a quick run and the shipped spec grades full runs only: said on stderr (the
    // template on stdout stays clean YAML), before the student fills in answers it will refuse.
    CHECK_THAT(r.err, Catch::Contains("note: this is a quick run, and lesson 02.05 grades full runs only"));
}

TEST_CASE("lab run --quick says, before measuring, when the lesson grades full runs only", "[grading-cli][grading]") {
    // --slurm --dry-run stops before anything is measured: the note comes first.
    lab_test::TempDir d;
    auto full_only = run_lab({"run", "02.05", "--quick", "--slurm", "--dry-run", "--out", (d / "r.json").string()});
    CHECK(full_only.exit_code == 0);
    CHECK_THAT(full_only.err, Catch::Contains("note: lesson 02.05 grades full runs only") && Catch::Contains("without --quick"));
    auto quick_ok = run_lab({"run", "02.02", "--quick", "--slurm", "--dry-run", "--out", (d / "r.json").string()});
    CHECK(quick_ok.exit_code == 0);
    CHECK_THAT(quick_ok.err, !Catch::Contains("grades full runs only"));
}

// The notes are for a run that goes ahead (this one's, and that the run is recorded as anonymous):
// an option that stops the run is the only message.
TEST_CASE("lab run --quick refused for a bad option says only why, not the full-runs note", "[grading-cli][grading]") {
    auto [args, error] = GENERATE(table<std::vector<std::string>, std::string>({
        {{"--out", "FOLDER"}, "is a folder: give a file name"},
        {{"--trace", "FOLDER"}, "is a folder: give a file name"},
        {{"--device", "tpu"}, "unknown device 'tpu'"},
        {{"--threads", "100000"}, "--threads 100000 exceeds the"},
        {{"--threads", "-1"}, "--threads must be positive"},
        {{"--device", "tpu", "--slurm", "--dry-run"}, "unknown device 'tpu'"},
    }));
    lab_test::TempDir d;
    std::vector<std::string> cmd = {"run", "02.05", "--quick"};
    for (const auto& a : args) cmd.push_back(a == "FOLDER" ? d.path().string() : a);
    if (std::find(args.begin(), args.end(), "--out") == args.end()) cmd.insert(cmd.end(), {"--out", (d / "r.json").string()});
    CAPTURE(cmd);
    auto r = run_lab(cmd);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(error));
    CHECK_THAT(r.err, !Catch::Contains("grades full runs only") && !Catch::Contains("recording as 'anonymous'"));
    CHECK_FALSE(fs::exists(d / "r.json"));
}

TEST_CASE("lab answers refuses a run of another lesson", "[grading-cli][grading]") {
    auto r = run_lab({"answers", "02.01", "--run", fixture_run_file().string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("02.05"));
    CHECK(r.out.empty());
}

// A run of another major version of the lesson (02.07 went to 2.0.0 when its questions changed):
// the template is still made, from the run's own values, but the student is told that submit
// will refuse the run, and why, before filling it in.
TEST_CASE("lab answers says a run of another major lesson version will be refused", "[grading-cli][grading]") {
    lab_test::TempDir d;
    Run run = fixture_run();
    auto r = run_lab({"answers", "02.05", "--run", fixture_run_file().string()});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, !Catch::Contains("recorded with lesson plugin"));
    run.record["lesson"]["plugin_version"] = "0.9.0";
    lab::record::seal(run.record);
    run.save(d / "old.json");
    r = run_lab({"answers", "02.05", "--run", (d / "old.json").string()});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("ridge_point"));
    CHECK_THAT(r.err, Catch::Contains("recorded with lesson plugin 0.9.0, but the installed plugin is " + lesson_02_05().info.version) &&
                          Catch::Contains("`lab submit` will refuse it; record the run again"));
}

TEST_CASE("lab submit --run --results grades, writes results.json and exits 0", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    Run run = fixture_run();
    lab_test::write_file(d / "answers.yaml", answers_for(run));
    auto r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", fixture_run_file().string(), "--results",
                      (d / "results.json").string()},
                     configs.env());
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Score: 10 / 10"));
    REQUIRE(fs::exists(d / "results.json"));
    json res = json::parse(lab_test::read_file(d / "results.json"));
    CHECK(res["score"] == 10.0);
    CHECK(res["execution_time"].is_number());
    CHECK(res["execution_time"].get<double>() >= 0);
    CHECK(res["visibility"] == "visible");
    CHECK(res["stdout_visibility"] == "hidden");
    const auto ids = spec_ids(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml");
    REQUIRE(res["tests"].size() == ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const json& t = res["tests"][i];
        CAPTURE(t.dump());
        CHECK_THAT(t["name"].get<std::string>(), Catch::StartsWith(ids[i] + ": "));
        CHECK(t["number"] == "1." + std::to_string(i + 1));
        CHECK(t["status"] == "passed");
        CHECK(t["score"] == t["max_score"]);
        CHECK(t["visibility"] == "visible");
    }

    SECTION("--json prints the same grade as one JSON document") {
        auto j = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", fixture_run_file().string(), "--json"},
                         configs.env());
        REQUIRE(j.exit_code == 0);
        json doc = json::parse(j.out);
        CHECK(doc["graded"] == true);
        CHECK(doc["score"] == 10.0);
        CHECK(doc["max_score"] == 10.0);
        CHECK(doc["student"] == "alice");
        CHECK(doc["run"] == run.digest());
        CHECK(doc["questions"].size() == ids.size());
    }
    SECTION("a wrong answer is still a successful grading: exit 0") {
        lab_test::write_file(d / "wrong.yaml", answers_for(run, 3.0));
        auto w = run_lab({"submit", "02.05", (d / "wrong.yaml").string(), "--run", fixture_run_file().string()}, configs.env());
        CHECK(w.exit_code == 0);
        CHECK_THAT(w.out, Catch::Contains("Score: 8 / 10"));
    }
}

TEST_CASE("lab submit does not grade a re-sealed run whose workloads are not the lesson's plan", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    Run run = fixture_run();
    // A triad a quarter the size the lesson measures on this device (faster, easier to make look
    // good), its stored values refreshed and the record sealed again.
    for (auto& w : run.record["workloads"])
        if (w["name"] == "triad") {
            w["params"]["n"] = w["params"]["n"].get<double>() / 4;
            w["bytes"] = w["bytes"].get<double>() / 4;
            w["flops"] = w["flops"].get<double>() / 4;
        }
    run.restudent("alice");
    run.save(d / "run.json");
    lab_test::write_file(d / "answers.yaml", answers_for(run));
    auto r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", (d / "run.json").string(), "--json"}, configs.env());
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 1);
    json doc = json::parse(r.out);
    CHECK(doc["graded"] == false);
    CHECK_THAT(doc["problems"].dump(), Catch::Contains("not what lesson 02.05 measures") && Catch::Contains("'triad'"));
}

TEST_CASE("lab submit exits 1 when the quick run is refused, and still writes results.json", "[grading-cli][grading]") {
    // The shipped spec (configs/grading/02.05.yaml) says accept_quick: false.
    lab_test::TempDir d;
    Run run = fixture_run();
    lab_test::write_file(d / "answers.yaml", answers_for(run));
    auto r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", fixture_run_file().string(), "--results",
                      (d / "results.json").string()});
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("Not graded"));
    CHECK_THAT(r.out, Catch::Contains("--quick"));
    REQUIRE(fs::exists(d / "results.json"));
    json res = json::parse(lab_test::read_file(d / "results.json"));
    CHECK(res["score"] == 0.0);
    CHECK_THAT(res["output"].get<std::string>(), Catch::Contains("--quick"));
    for (const auto& t : res["tests"]) CHECK(t["score"] == 0.0);
}

TEST_CASE("lab submit exits 2 on bad input, and with --results still writes results.json", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    Run run = fixture_run();
    fs::path answers = d / "answers.yaml", results = d / "results.json";
    fs::path run_file = fixture_run_file();
    std::string where;
    SECTION("a malformed answers file") {
        answers = lab_test::source_root() / "tests/fixtures/answers/02.05-malformed.yaml";
        where = answers.string() + ":";
    }
    SECTION("a run record edited after it was sealed") {
        json rec = run.record;
        rec["workloads"][0]["time_s"]["median"] = rec["workloads"][0]["time_s"]["median"].get<double>() / 2;
        run_file = d / "tampered.json";
        lab_test::write_file(run_file, rec.dump(2));
        lab_test::write_file(answers, answers_for(run));
        where = "digest";
    }
    SECTION("answers written for another student") {
        std::string text = answers_for(run);
        text.replace(text.find("\"alice\""), 7, "\"mallory\"");
        lab_test::write_file(answers, text);
        where = "mallory";
    }
    auto r = run_lab({"submit", "02.05", answers.string(), "--run", run_file.string(), "--results", results.string()},
                     configs.env());
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(where));
    REQUIRE(fs::exists(results));
    json res = json::parse(lab_test::read_file(results));
    CHECK(res["score"] == 0);
    CHECK(res["visibility"] == "visible");
    CHECK(res["output"].is_string());
    CHECK_FALSE(res["output"].get<std::string>().empty());
    // Each question at 0 of its points (the spec is readable here), then the diagnostic.
    const auto ids = spec_ids(configs.dir / "configs/grading/02.05.yaml");
    REQUIRE(res["tests"].size() == ids.size() + 1);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        CHECK_THAT(res["tests"][i]["name"].get<std::string>(), Catch::StartsWith(ids[i] + ": "));
        CHECK(res["tests"][i]["score"] == 0);
        CHECK(res["tests"][i]["max_score"].get<double>() > 0);
    }
    const json& diagnostic = res["tests"].back();
    CHECK(diagnostic["visibility"] == "hidden");
    CHECK_THAT(diagnostic["output"].get<std::string>(), Catch::Contains(where));
    CHECK(res["execution_time"].is_number());
    CHECK(res["extra_data"]["graded"] == false);
    CHECK(res["extra_data"]["problems"][0] == res["output"]);
    // The student sees their files by name, not the grading server's folders.
    CHECK_THAT(res["output"].get<std::string>(), !Catch::Contains(d.path().string() + "/"));
}

TEST_CASE("lab submit --results with a broken grading spec tells the student the autograder failed, the error only to instructors", "[grading-cli][grading]") {
    // An instructor review: a misspelt metric in the autograder's spec reached the student as
    // "Your submission could not be graded: <server path>/grading/02.05.yaml:N: question ... names
    // metric ...": their fault, the server's folders and what the spec asks, in the visible output.
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path spec_file = configs.dir / "configs/grading/02.05.yaml";
    std::string spec = lab_test::read_file(spec_file);
    const std::string metric = "metric: ridge_point";
    REQUIRE(spec.find(metric) != std::string::npos);
    spec.replace(spec.find(metric), metric.size(), "metric: ridge_pointt");
    lab_test::write_file(spec_file, spec);
    lab_test::write_file(d / "answers.yaml", answers_for(fixture_run()));
    auto r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--run", fixture_run_file().string(), "--results",
                      (d / "results.json").string()},
                     configs.env());
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("ridge_pointt"));  // the operator's terminal says what is wrong
    REQUIRE(fs::exists(d / "results.json"));
    const json res = json::parse(lab_test::read_file(d / "results.json"));
    const std::string seen = res["output"];
    CHECK_THAT(seen, Catch::StartsWith("The autograder failed"));
    CHECK_THAT(seen, !Catch::Contains("ridge_pointt") && !Catch::Contains(".yaml") && !Catch::Contains("Your submission could not be graded"));
    CHECK_THAT(res["extra_data"].dump(), !Catch::Contains("ridge_pointt"));
    const json& diagnostic = res["tests"].back();
    CHECK(diagnostic["visibility"] == "hidden");
    CHECK_THAT(diagnostic["output"].get<std::string>(), Catch::Contains("ridge_pointt") && Catch::Contains("not the submission"));
}

TEST_CASE("lab submit of a run of another lesson is bad input (exit 2), not a plugin failure", "[grading-cli][grading]") {
    // grade_files derives the 02.05 run with the 02.01 plugin before checking the run's lesson:
    // the 02.01 plugin throws, and the student is told "the autograder failed" (exit 3).
    QuickConfigs configs;
    lab_test::TempDir d;
    lab_test::write_file(d / "answers.yaml", answers_for(fixture_run()));
    auto r = run_lab({"submit", "02.01", (d / "answers.yaml").string(), "--run", fixture_run_file().string(), "--results",
                      (d / "results.json").string()},
                     configs.env());
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("02.05"));
    REQUIRE(fs::exists(d / "results.json"));
    CHECK_THAT(json::parse(lab_test::read_file(d / "results.json"))["output"].get<std::string>(), !Catch::Contains("autograder failed"));
}

TEST_CASE("lab submit --results without --run is bad usage", "[grading-cli][grading]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "answers.yaml", answers_for(fixture_run()));
    auto r = run_lab({"submit", "02.05", (d / "answers.yaml").string(), "--results", (d / "results.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--run"));
    CHECK_THAT(r.err, Catch::Contains("--results"));
}

// Without --run, submit grades the record the answers are bound to (their run: digest), found where
// lab writes records: runs/ (lab run's default) or the current folder. A run made now could never
// be the one the answers name, so none is made: no record there is refused at once.
TEST_CASE("lab submit without --run grades the run the answers are bound to, found in runs/ or the current folder",
          "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const Run run = fixture_run();
    lab_test::write_file(d / "answers.yaml", answers_for(run));
    fs::create_directories(d / "runs");
    Run other = fixture_run();   // another run of the lesson: not the one the answers name
    other.restudent("bob");
    other.save(d / "runs/02.05-20261201T090000Z.json");
    lab_test::write_file(d / "runs/notes.json", "{\"not\": \"a run\"}");
    auto files_in = [](const fs::path& dir) {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
        return n;
    };

    SECTION("none there: refused before anything runs, saying the digest, where it looked and --run") {
        fs::create_directories(d / "runs/old");
        fs::copy_file(fixture_run_file(), d / "runs/old/run.json");   // a subfolder is not looked in
        auto r = lab_test::run_lab_in(d.path(), {"submit", "02.05", "answers.yaml"}, configs.env());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::StartsWith("lab: answers.yaml: no run record has the digest these answers are bound to (run: " +
                                            run.digest() + "); looked at the 1 run record in runs/ and the current folder"));
        CHECK_THAT(r.err, Catch::Contains("fix: pass --run RUN.json"));
        CHECK_THAT(r.err, !Catch::Contains("running lesson") && !Catch::Contains("calibrat"));
        CHECK(r.out.empty());
        CHECK(files_in(d / "runs") == 2);   // no run recorded
    }
    SECTION("in runs/, among other records") {
        fs::copy_file(fixture_run_file(), d / "runs/02.05-20261201T100000Z.json");
        auto r = lab_test::run_lab_in(d.path(), {"submit", "02.05", "answers.yaml"}, configs.env());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.err, Catch::Contains("no --run given: grading the run answers.yaml is bound to, runs/02.05-20261201T100000Z.json"));
        CHECK_THAT(r.out, Catch::Contains("Score: 10 / 10"));
        CHECK(files_in(d / "runs") == 3);
    }
    SECTION("in the current folder") {
        fs::copy_file(fixture_run_file(), d / "mine.json");
        auto r = lab_test::run_lab_in(d.path(), {"submit", "02.05", "answers.yaml", "--json"}, configs.env());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.err, Catch::Contains("grading the run answers.yaml is bound to, mine.json"));
        CHECK(json::parse(r.out)["score"] == 10.0);
    }
}

TEST_CASE("lab check-spec accepts a good spec and refuses a broken one with its file and line", "[grading-cli][grading]") {
    const fs::path dir = lab_test::source_root() / "tests/fixtures/grading";
    auto good = run_lab({"check-spec", (dir / "02.05.yaml").string()});
    CHECK(good.exit_code == 0);
    CHECK_THAT(good.out, Catch::Contains("lesson 02.05, 7 questions, 10 points"));

    auto shipped = run_lab({"check-spec", (lab_test::source_root() / "configs/grading/02.01.yaml").string()});
    CHECK(shipped.exit_code == 0);
    // A lesson ID checks the spec lab grades that lesson with.
    auto by_id = run_lab({"check-spec", "02.10"});
    CHECK(by_id.exit_code == 0);
    CHECK_THAT(by_id.out, Catch::Contains("configs/grading/02.10.yaml: lesson 02.10,"));

    auto [file, line, fragment] = GENERATE(table<std::string, int, std::string>({
        {"broken/02.05-wrong-dimension.yaml", 8, "another dimension"},  // at its `unit: GB/s`
        {"broken/02.05-unknown-key.yaml", 10, "unknown key 'tolerence'"},
    }));
    auto bad = run_lab({"check-spec", (dir / file).string()});
    CAPTURE(bad.err);
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains((dir / file).string() + ":" + std::to_string(line) + ":"));
    CHECK_THAT(bad.err, Catch::Contains(fragment));
    CHECK(bad.out.empty());
}

TEST_CASE("lab check-spec names the spec's lesson: line when no lesson has that ID", "[grading-cli][grading]") {
    lab_test::TempDir d;
    std::string spec = lab_test::read_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml");
    const auto at = spec.find("\"02.05\"");
    REQUIRE(at != std::string::npos);
    spec.replace(at, 7, "\"02.31\"");
    lab_test::write_file(d / "typo.yaml", spec);
    auto r = run_lab({"check-spec", (d / "typo.yaml").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains((d / "typo.yaml").string() + ":4:") && Catch::Contains("lesson '02.31' is not one lab finds") &&
                          Catch::Contains("fix: correct `lesson:` in the spec"));
    // One fix, the spec's: the plugin loader's own (`lab list`, LAB_PLUGIN_PATH) is folded into it.
    CHECK(count_of(r.err, "fix:") == 1);
    CHECK_THAT(r.err, Catch::Contains("`lab list`") && Catch::Contains("LAB_PLUGIN_PATH"));
}

TEST_CASE("lab check-spec refuses a question whose prompt is empty, as one without a prompt", "[grading-cli][grading]") {
    lab_test::TempDir d;
    std::string spec = lab_test::read_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml");
    const auto at = spec.find("prompt: ");
    REQUIRE(at != std::string::npos);
    spec.replace(at, spec.find('\n', at) - at, "prompt: \"\"");
    const int line = static_cast<int>(std::count(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
    lab_test::write_file(d / "empty.yaml", spec);
    auto r = run_lab({"check-spec", (d / "empty.yaml").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains((d / "empty.yaml").string() + ":" + std::to_string(line) + ": ") &&
                          Catch::Contains("has an empty 'prompt'") && Catch::Contains("fix: write the question as the student reads it"));
    CHECK(r.out.empty());
}

// The model devices are no student's: 02.09's chase reaches most of a model's roof and 0.4% of a
// real one, so {abs: 1} (a percentage point, accepting 0%) passed check-spec. --run holds the spec
// against recorded runs too.
TEST_CASE("lab check-spec --run holds the tolerances against a recorded run's values", "[grading-cli][grading]") {
    lab_test::TempDir d;
    std::string spec = lab_test::read_file(lab_test::source_root() / "configs/grading/02.09.yaml");
    const auto at = spec.find("tolerance: {rel: 0.15}");
    REQUIRE(at != std::string::npos);
    spec.replace(at, 22, "tolerance: {abs: 1}");
    const int line = static_cast<int>(std::count(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
    lab_test::write_file(d / "02.09.yaml", spec);
    const fs::path runs = lab_test::source_root() / "tests/fixtures/runs/cpu";
    auto models_only = run_lab({"check-spec", (d / "02.09.yaml").string()});
    CHECK(models_only.exit_code == 0);
    CHECK_THAT(models_only.err, !Catch::Contains("chase_roof"));
    auto held = run_lab({"check-spec", (d / "02.09.yaml").string(), "--run", (runs / "02.09-quick-reveal.json").string()});
    CHECK(held.exit_code == 0);
    CHECK_THAT(held.err, Catch::Contains("warning: " + (d / "02.09.yaml").string() + ":" + std::to_string(line) +
                                         ": question 'chase_roof': its tolerance accepts an answer of 0 on the run given (on the run ") &&
                             Catch::Contains("fix: an abs below the value, or rel"));
    // The shipped spec, held against the same run, is not warned of.
    auto shipped = run_lab({"check-spec", "02.09", "--run", (runs / "02.09-quick-reveal.json").string()});
    CHECK(shipped.exit_code == 0);
    CHECK_THAT(shipped.err, !Catch::Contains("warning"));
    // A run of another lesson is refused, naming it.
    auto other = run_lab({"check-spec", "02.09", "--run", (runs / "02.08-quick-reveal.json").string()});
    CHECK(other.exit_code == 2);
    CHECK_THAT(other.err, Catch::Contains("02.08-quick-reveal.json: a run of lesson 02.08, where the spec grades lesson 02.09") &&
                              Catch::Contains("fix: give runs of lesson 02.09 with --run"));
}

// An SDK review: a question whose metric a run lacks passed check-spec --run, and the grader
// then voided it for every such run, its points gone without a word.
TEST_CASE("lab check-spec --run warns of a question whose metric the run lacks", "[grading-cli][grading]") {
    lab_test::TempDir d;
    const std::string question = R"(  - id: shared_latency
    prompt: "What is the latency of one hop in shared memory, in ns?"
    type: number
    unit: ns
    expected: {metric: shared.latency_s}
    tolerance: {rel: 0.15}
    points: 1
)";
    // Quick runs graded (the fixture is one); a spec grading full runs only refuses it instead.
    std::string spec = lab_test::read_file(lab_test::source_root() / "configs/grading/02.03.yaml");
    REQUIRE(spec.find("accept_quick: false") != std::string::npos);
    spec.replace(spec.find("accept_quick: false"), 19, "accept_quick: true ");
    lab_test::write_file(d / "02.03.yaml", spec + question);
    const int line = static_cast<int>(std::count(spec.begin(), spec.end(), '\n')) + 5;  // its `expected:` line
    const std::string run = (lab_test::source_root() / "tests/fixtures/runs/cpu/02.03-quick-reveal.json").string();
    auto r = run_lab({"check-spec", (d / "02.03.yaml").string(), "--run", run});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("warning: " + (d / "02.03.yaml").string() + ":" + std::to_string(line) +
                                      ": question 'shared_latency': the cpu run " + run + " has no value for metric 'shared.latency_s', "
                                      "so the grader voids the question for it") &&
                          Catch::Contains("fix: the lesson declares it for cuda runs only: add `applies_to: [cuda]` to the question"));
    // Said of the GPU runs it is for: no warning on a CPU run.
    std::string for_gpus = question;
    for_gpus.insert(for_gpus.find("    points: 1"), "    applies_to: [cuda]\n");
    lab_test::write_file(d / "02.03.yaml", spec + for_gpus);
    auto fixed = run_lab({"check-spec", (d / "02.03.yaml").string(), "--run", run});
    CHECK(fixed.exit_code == 0);
    CHECK_THAT(fixed.err, !Catch::Contains("has no value for metric"));
}

TEST_CASE("lab check-spec --keys lists every key with its meaning and default", "[grading-cli][grading]") {
    auto r = run_lab({"check-spec", "--keys"});
    REQUIRE(r.exit_code == 0);
    for (const char* key : {"accept_quick", "show_expected", "tolerance", "partial", "near_ridge_either", "applies_to", "sweep_param"})
        CHECK_THAT(r.out, Catch::Contains(key));
    CHECK_THAT(r.out, Catch::Contains("default"));
}

TEST_CASE("lab grade grades a folder of student folders found by content", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path subs = d / "submissions";
    Run alice = fixture_run();
    Run bob = fixture_run();
    bob.restudent("bob");  // the same measurements, handed in by another student
    Run carol = fixture_run();
    carol.restudent("carol");
    fs::create_directories(subs / "alice_1234");
    fs::create_directories(subs / "bob_5678" / "upload");
    fs::create_directories(subs / "carol_9012");
    alice.save(subs / "alice_1234" / "measurements.dat");
    lab_test::write_file(subs / "alice_1234" / "notes.txt", answers_for(alice));
    lab_test::write_file(subs / "alice_1234" / "README", "my lab work\n");
    bob.save(subs / "bob_5678" / "upload" / "x.json");
    lab_test::write_file(subs / "bob_5678" / "a.yml", answers_for(bob, 2.0));  // ridge wrong: 8 of 10
    carol.save(subs / "carol_9012" / "run.json");
    fs::copy_file(lab_test::source_root() / "tests/fixtures/answers/02.05-malformed.yaml", subs / "carol_9012" / "answers.yaml");

    const fs::path csv = d / "gradebook.csv";
    auto r = run_lab({"grade", subs.string(), "--out", csv.string()}, configs.env());
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("3 submissions"));
    CHECK_THAT(r.out, Catch::Contains("2 graded"));
    CHECK_THAT(r.out, Catch::Contains("0 not graded"));
    CHECK_THAT(r.out, Catch::Contains("1 could not be read"));
    CHECK_THAT(r.out, Catch::Contains("carol_9012"));
    CHECK_THAT(r.out, Catch::Contains("Most missed questions"));
    CHECK(std::regex_search(r.out, std::regex(R"(ridge_point\s+50% not correct)")));
    // bob's and carol's runs are alice's measurements under their names: one near-copy group,
    // carol's included though her answers could not be read.
    CHECK_THAT(r.out, Catch::Contains("Flagged for the instructor"));
    CHECK_THAT(r.out, Catch::Contains("G1 near_copy: alice_1234, bob_5678, carol_9012"));
    CHECK_THAT(r.out, Catch::Contains("practice mode"));

    REQUIRE(fs::exists(csv));
    auto rows = lines_of(lab_test::read_file(csv));
    REQUIRE(rows.size() == 4);
    std::string header = "folder,student,lesson,score,max,status,reason,flags";
    for (const auto& id : spec_ids(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml")) header += "," + id;
    CHECK(rows[0] == header);
    CHECK(rows[1] == "alice_1234,alice,02.05,10,10,practice,,near_copy:G1,2,2,1,1,1,1,2");
    CHECK(rows[2] == "bob_5678,bob,02.05,8,10,practice,,near_copy:G1,0,2,1,1,1,1,2");
    CHECK_THAT(rows[3], Catch::StartsWith("carol_9012,carol,02.05,0,10,error,"));   // the spec's max, for a percentage
    CHECK_THAT(rows[3], Catch::Contains("near_copy:G1"));

    SECTION("--json prints the summary as one document") {
        auto j = run_lab({"grade", subs.string(), "--out", (d / "g2.csv").string(), "--json"}, configs.env());
        REQUIRE(j.exit_code == 0);
        json s = json::parse(j.out);
        CHECK(s["submissions"] == 3);
        CHECK(s["graded"] == 2);
        CHECK(s["not_graded"] == 0);
        REQUIRE(s["errors"].size() == 1);
        CHECK(s["errors"][0]["folder"] == "carol_9012");
        REQUIRE(s["flags"].size() == 1);
        CHECK(s["flags"][0]["kind"] == "near_copy");
        CHECK(s["flags"][0]["folders"] == json::array({"alice_1234", "bob_5678", "carol_9012"}));
        CHECK(s["mode"] == "practice");
        CHECK(s["practice"] == 2);
        CHECK(s["seconds"].is_number());
        CHECK(lab_test::read_file(d / "g2.csv") == lab_test::read_file(csv));
    }
    SECTION("with the shipped specs the quick runs are listed as not graded") {
        auto q = run_lab({"grade", subs.string(), "--out", (d / "g3.csv").string()});
        REQUIRE(q.exit_code == 0);
        CHECK_THAT(q.out, Catch::Contains("0 graded, 2 not graded"));
        auto qrows = lines_of(lab_test::read_file(d / "g3.csv"));
        REQUIRE(qrows.size() == 4);
        CHECK_THAT(qrows[1], Catch::StartsWith("alice_1234,alice,02.05,0,10,refused,\"this run was made with --quick"));
    }
}

TEST_CASE("lab grade names the file and line of a malformed answers file", "[grading-cli][grading]") {
    // A folder whose answers file has a YAML error is reported as "no answers file found": the
    // content sniffing parses YAML, fails, and the operator never learns which file or line.
    QuickConfigs configs;
    lab_test::TempDir d;
    fs::create_directories(d / "subs" / "carol");
    fixture_run().save(d / "subs" / "carol" / "run.json");
    fs::copy_file(lab_test::source_root() / "tests/fixtures/answers/02.05-malformed.yaml", d / "subs" / "carol" / "answers.yaml");
    auto r = run_lab({"grade", (d / "subs").string(), "--out", (d / "g.csv").string()}, configs.env());
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("answers.yaml:6") || Catch::Contains("answers.yaml:7"));
}

TEST_CASE("lab grade with a --report it cannot write stops before grading, leaving the gradebook as it was", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    class_of_alice(d.path());
    lab_test::write_file(d / "g.csv", "the gradebook of last week\n");
    auto r = run_lab({"grade", (d / "subs").string(), "--out", (d / "g.csv").string(), "--report", "/proc/x.html"}, configs.env());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--report") && Catch::Contains("/proc"));
    CHECK(lab_test::read_file(d / "g.csv") == "the gradebook of last week\n");
}

TEST_CASE("lab grade: --help states the layout; an empty folder is bad input", "[grading-cli][grading]") {
    auto h = run_lab({"grade", "--help"});
    CHECK(h.exit_code == 0);
    CHECK_THAT(h.out, Catch::Contains("one folder per submission") && Catch::Contains("--roster") && Catch::Contains("--lesson"));
    lab_test::TempDir d;
    fs::create_directories(d / "empty");
    auto r = run_lab({"grade", (d / "empty").string(), "--out", (d / "g.csv").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no submission folders in"));
    CHECK_FALSE(fs::exists(d / "g.csv"));
}

TEST_CASE("lab grade --json lists every row; --roster adds the missing; --lesson refuses another lesson", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path subs = class_of_alice(d.path());
    lab_test::write_file(d / "roster.csv", "student,email\nalice,alice@u.edu\nbob,bob@u.edu\n");
    auto r = run_lab({"grade", subs.string(), "--out", (d / "g.csv").string(), "--json", "--roster", (d / "roster.csv").string(),
                      "--lesson", "02.05"}, configs.env());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json s = json::parse(r.out);
    CHECK(s["submissions"] == 1);
    CHECK(s["missing"] == 1);
    REQUIRE(s["rows"].size() == 2);
    CHECK(s["rows"][0]["folder"] == "alice");
    CHECK(s["rows"][0]["student"] == "alice");
    CHECK(s["rows"][0]["lesson"] == "02.05");
    CHECK(s["rows"][0]["score"] == 10);
    CHECK(s["rows"][0]["max"] == 10);
    CHECK(s["rows"][0]["status"] == "practice");
    CHECK(s["rows"][0]["flags"].is_array());
    CHECK(s["rows"][1]["student"] == "bob");
    CHECK(s["rows"][1]["status"] == "missing");
    CHECK(s["rows"][1]["max"] == 10);

    auto other = run_lab({"grade", subs.string(), "--out", (d / "g2.csv").string(), "--lesson", "02.01"}, configs.env());
    INFO(other.err);
    REQUIRE(other.exit_code == 0);
    CHECK_THAT(lab_test::read_file(d / "g2.csv"), Catch::Contains("alice,alice,02.05,0,") && Catch::Contains(",refused,\"a submission of lesson 02.05, not 02.01"));
    CHECK(run_lab({"grade", subs.string(), "--out", (d / "g3.csv").string(), "--roster", (d / "nope.csv").string()}, configs.env()).exit_code == 2);
    // An unknown --lesson is said as one (it was said as a grading spec to install), nothing written.
    auto unknown = run_lab({"grade", subs.string(), "--out", (d / "g4.csv").string(), "--lesson", "2.5"}, configs.env());
    CHECK(unknown.exit_code == 2);
    CHECK_THAT(unknown.err, Catch::Contains("unknown lesson ID '2.5'") && !Catch::Contains("grading spec"));
    CHECK_FALSE(fs::exists(d / "g4.csv"));
}

TEST_CASE("run_autograder grades the run the answers are bound to when a student uploads several", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path root = d / "autograder";
    fs::create_directories(root / "submission/runs");
    Run older = fixture_run(), newer = fixture_run();
    for (auto& w : newer.record["workloads"])
        for (const char* k : {"median", "min", "max", "mean", "stddev", "total"}) w["time_s"][k] = w["time_s"][k].get<double>() * 1.03;
    newer.record["started_at"] = "2099-01-01T00:00:00Z";  // recorded after the fixture (older)
    newer.restudent("alice");
    older.save(root / "submission/runs/02.05-2026-12-01T16-40-05Z.json");
    newer.save(root / "submission/runs/02.05-2026-12-01T16-41-30Z.json");
    lab_test::write_file(root / "submission_metadata.json", json{{"users", {{{"email", "alice@u.edu"}, {"name", "Alice"}}}}}.dump());
    auto grade = [&](const std::string& answers) {
        fs::remove_all(root / "results");
        lab_test::write_file(root / "submission/answers.yaml", answers);
        const std::string line = "env -u LAB_COURSE_KEY LAB_PRACTICE=1 AUTOGRADER_ROOT='" + root.string() + "' LAB_LESSON=02.05 LAB_CONFIG_DIR='" +
                                 configs.env().at("LAB_CONFIG_DIR") + "' PATH='" + lab_test::lab_executable().parent_path().string() +
                                 ":/usr/bin:/bin' bash '" + (lab_test::source_root() / "grader/gradescope/run_autograder").string() +
                                 "' >/dev/null 2>&1";
        REQUIRE(std::system(line.c_str()) == 0);
        return json::parse(lab_test::read_file(root / "results/results.json"));
    };
    // Bound to the newer run (which sorts last): graded against it, full marks.
    json bound = grade(answers_for(newer));
    CHECK(bound["score"] == 10);
    CHECK(bound["extra_data"]["run"] == newer.digest());
    CHECK(grade(answers_for(older))["extra_data"]["run"] == older.digest());
    // Saved by Windows PowerShell 5's `>` (UTF-16 with its mark), the answers and the run are
    // found and graded as lab grade grades them (an operator's review: "missing an answers file").
    auto utf16 = [](const std::string& ascii) {
        REQUIRE(std::all_of(ascii.begin(), ascii.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
        std::string out = "\xff\xfe";
        for (char c : ascii) out += c, out += '\0';
        return out;
    };
    const fs::path newer_file = root / "submission/runs/02.05-2026-12-01T16-41-30Z.json";
    const std::string newer_text = lab_test::read_file(newer_file);
    lab_test::write_file(newer_file, utf16(newer_text));
    json wide = grade(utf16(answers_for(newer)));
    CHECK(wide["score"] == 10);
    CHECK(wide["extra_data"]["run"] == newer.digest());
    lab_test::write_file(newer_file, newer_text);
    // Both answers files uploaded, each bound to its run: the latest run's pair is graded, as
    // lab grade picks, whichever answers file sorts first.
    lab_test::write_file(root / "submission/0-first answers.yaml", answers_for(older));
    lab_test::write_file(root / "submission/answers.yaml", answers_for(newer));
    {
        fs::remove_all(root / "results");
        const std::string line = "env -u LAB_COURSE_KEY LAB_PRACTICE=1 AUTOGRADER_ROOT='" + root.string() + "' LAB_LESSON=02.05 LAB_CONFIG_DIR='" +
                                 configs.env().at("LAB_CONFIG_DIR") + "' PATH='" + lab_test::lab_executable().parent_path().string() +
                                 ":/usr/bin:/bin' bash '" + (lab_test::source_root() / "grader/gradescope/run_autograder").string() +
                                 "' >/dev/null 2>&1";
        REQUIRE(std::system(line.c_str()) == 0);
        CHECK(json::parse(lab_test::read_file(root / "results/results.json"))["extra_data"]["run"] == newer.digest());
    }
    fs::remove(root / "submission/0-first answers.yaml");
    // Bound to neither: nothing graded against a guess; the message names the files.
    std::string stray = answers_for(newer);
    stray.replace(stray.find(newer.digest()), newer.digest().size(), "sha256:" + std::string(64, 'a'));
    json neither = grade(stray);
    CHECK(neither["score"] == 0);
    CHECK_THAT(neither["output"].get<std::string>(), Catch::Contains("none of the 2 run records") && Catch::Contains("16-41-30Z.json"));
    // Refused before lab grades, yet the student sees the assignment: every question at 0 of its
    // points, then the instructors' diagnostic.
    const std::size_t questions = YAML::LoadFile((configs.dir / "configs/grading/02.05.yaml").string())["questions"].size();
    REQUIRE(neither["tests"].size() == questions + 1);
    CHECK(neither["tests"][0]["score"] == 0);
    CHECK(neither["tests"][0]["max_score"].get<double>() > 0);
    CHECK(neither["extra_data"]["graded"] == false);
    std::string unbound = answers_for(newer);
    unbound.erase(unbound.find("run:"), unbound.find('\n', unbound.find("run:")) - unbound.find("run:") + 1);
    CHECK_THAT(grade(unbound)["output"].get<std::string>(), Catch::Contains("names no run") && Catch::Contains("2 run records"));
    // Two answers files (an old template sorting first, the finished one) and the older run
    // only: the answers bound to an uploaded run are graded, whatever the file names.
    fs::remove(root / "submission/runs/02.05-2026-12-01T16-41-30Z.json");
    lab_test::write_file(root / "submission/0-old answers.yaml", stray);
    json paired = grade(answers_for(older));
    CHECK(paired["score"] == 10);
    CHECK(paired["extra_data"]["run"] == older.digest());
    // A file missing: said, with every question at 0.
    fs::remove(root / "submission/runs/02.05-2026-12-01T16-40-05Z.json");
    json missing = grade(answers_for(older));
    CHECK_THAT(missing["output"].get<std::string>(), Catch::Contains("missing a run record") &&
                                                         Catch::Contains("; your answers file (") && Catch::Contains(") arrived"));
    CHECK(missing["tests"].size() == questions + 1);
    // An upload that carried nothing is named, so the student knows what to send again.
    lab_test::write_file(root / "submission/runs/02.05-run.json", "");
    CHECK_THAT(grade(answers_for(older))["output"].get<std::string>(),
               Catch::Contains("missing a run record") && Catch::Contains("02.05-run.json: empty, 0 bytes"));
}

TEST_CASE("lab submit --refuse writes a refused results.json for an autograder's own checks", "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path res = d / "results.json";
    auto r = run_lab({"submit", "02.05", "--refuse", "Your submission is missing a run record.", "--diagnostic", "no .json found", "--results",
                      res.string()},
                     configs.env());
    CHECK(r.exit_code == 1);
    const json j = json::parse(lab_test::read_file(res));
    CHECK(j["score"] == 0);
    CHECK(j["output"] == "Your submission is missing a run record.");
    CHECK(j["tests"].back()["output"] == "no .json found");
    CHECK(j["tests"].back()["visibility"] == "hidden");
    CHECK(j["tests"].size() == YAML::LoadFile((configs.dir / "configs/grading/02.05.yaml").string())["questions"].size() + 1);
    // Misuse is the operator's error: exit 2, nothing written.
    fs::remove(res);
    CHECK(run_lab({"submit", "02.05", "--refuse", "x"}, configs.env()).exit_code == 2);
    CHECK(run_lab({"submit", "02.05", "a.yaml", "--refuse", "x", "--results", res.string()}, configs.env()).exit_code == 2);
    CHECK(run_lab({"submit", "02.05", "--refuse", " ", "--results", res.string()}, configs.env()).exit_code == 2);
    CHECK(run_lab({"submit", "02.99", "--refuse", "x", "--results", res.string()}, configs.env()).exit_code == 2);
    CHECK(run_lab({"submit", "02.05", "--diagnostic", "x"}, configs.env()).exit_code == 2);
    CHECK_FALSE(fs::exists(res));
}

TEST_CASE("lab grade refuses a path that is not a folder", "[grading-cli][grading]") {
    auto r = run_lab({"grade", (lab_test::source_root() / "README.md").string(), "--out", "/dev/null"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("not a folder"));
}

// 02.02's answers are exact arithmetic about Llama-2-7B, so its shipped spec accepts a quick run:
// the student's answers, written the way `lab model llama-2-7b` prints them (TFLOP, GB), get full
// marks; the other op group or a 10x slip gets none, with the hint.
TEST_CASE("lab submit grades 02.02's arithmetic answers against the shipped spec", "[grading-cli][grading]") {
    const fs::path run_file = lab_test::source_root() / "tests/fixtures/runs/cpu/02.02-quick-reveal.json";
    const json record = lab::record::read_record(run_file);
    const json& m = record["metrics"];
    lab_test::TempDir d;
    auto answers = [&](double flops_scale, const std::string& long_group) {
        return "lesson: \"02.02\"\nstudent: \"" + record["student"].get<std::string>() + "\"\nrun: \"" +
               record["digest"].get<std::string>() + "\"\nanswers:\n  prefill_flops: " +
               num(m["question_flops"]["value"].get<double>() * flops_scale / 1e12) + " TFLOP\n  weight_bytes: " +
               num(m["question_weight_bytes"]["value"].get<double>() / 1e9) + " GB\n  dominant_short: mlp\n  dominant_long: " +
               long_group + "\n";
    };
    lab_test::write_file(d / "right.yaml", answers(1.0, "attention"));
    auto r = run_lab({"submit", "02.02", (d / "right.yaml").string(), "--run", run_file.string()});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Score: 6 / 6"));
    lab_test::write_file(d / "wrong.yaml", answers(10.0, "mlp"));
    auto w = run_lab({"submit", "02.02", (d / "wrong.yaml").string(), "--run", run_file.string()});
    CAPTURE(w.out, w.err);
    CHECK_THAT(w.out, Catch::Contains("Score: 3 / 6"));
    CHECK_THAT(w.out, Catch::Contains("grow with S^2"));
}

// 02.07's answers are exact arithmetic on the student's own inputs: right answers in the units
// `lab model` prints get full marks; a GiB figure written as GB (7% off) and a context 2% off do
// not (the context is worked by hand: 3 significant figures or one token off are accepted).
TEST_CASE("lab submit grades 02.07's memory-budget answers against the shipped spec", "[grading-cli][grading]") {
    const fs::path run_file = lab_test::source_root() / "tests/fixtures/runs/cpu/02.07-quick-reveal.json";
    const json record = lab::record::read_record(run_file);
    const json& m = record["metrics"];
    lab_test::TempDir d;
    auto answers = [&](const std::string& unit, double scale, int context_slip) {
        const double kv = m["question_kv_bytes"]["value"].get<double>() / scale;
        return "lesson: \"02.07\"\nstudent: \"" + record["student"].get<std::string>() + "\"\nrun: \"" +
               record["digest"].get<std::string>() + "\"\nanswers:\n  kv_cache_bytes: " + num(kv) + " " + unit +
               "\n  kv_exceeds_weights_context: " + std::to_string(m["question_overtake_context"]["value"].get<int>() + context_slip) +
               "\n  max_batch: " + std::to_string(m["question_max_batch"]["value"].get<int>()) + "\n";
    };
    lab_test::write_file(d / "right.yaml", answers("GiB", 1073741824.0, 0));
    auto r = run_lab({"submit", "02.07", (d / "right.yaml").string(), "--run", run_file.string()});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Score: 6 / 6"));
    const int two_percent = static_cast<int>(0.02 * m["question_overtake_context"]["value"].get<double>()) + 2;
    lab_test::write_file(d / "wrong.yaml", answers("GB", 1073741824.0, -two_percent));  // the GiB number, labelled GB
    auto w = run_lab({"submit", "02.07", (d / "wrong.yaml").string(), "--run", run_file.string()});
    CAPTURE(w.out, w.err);
    CHECK_THAT(w.out, Catch::Contains("Score: 2 / 6"));
}

// 02.11's answers are read off the student's own run: right answers, as lab run prints them, get
// full marks; the launch cost in ns written as µs and both verdicts flipped do not. The shipped
// spec refuses quick runs, so a copy of configs/ whose 02.11 spec accepts them grades the fixture.
TEST_CASE("lab submit grades 02.11's launch-overhead answers against the shipped spec", "[grading-cli][grading]") {
    const fs::path run_file = lab_test::source_root() / "tests/fixtures/runs/cpu/02.11-quick-reveal.json";
    const json record = lab::record::read_record(run_file);
    const json& m = record["metrics"];
    lab_test::TempDir d;
    fs::copy(lab_test::source_root() / "configs", d / "configs", fs::copy_options::recursive);
    std::string spec = lab_test::read_file(d / "configs/grading/02.11.yaml");
    REQUIRE(spec.find("accept_quick: false") != std::string::npos);
    spec.replace(spec.find("accept_quick: false"), 19, "accept_quick: true");
    lab_test::write_file(d / "configs/grading/02.11.yaml", spec);
    const std::map<std::string, std::string> env = {{"LAB_CONFIG_DIR", (d / "configs").string()}};
    auto v = [&](const char* k) { return num(m[k]["value"].get<double>()); };
    auto answers = [&](double launch_scale, bool flip) {
        // A verdict the run left open ("overhead_bound or throughput_bound": the fixture ran beside
        // other work) accepts either; a student writes one of them.
        auto verdict = [&](const char* k) {
            const std::string t = m[k]["value"].get<std::string>();
            const std::string one = t.substr(0, t.find(" or "));
            return flip ? (one == "overhead_bound" ? "throughput_bound" : "overhead_bound") : one;
        };
        return "lesson: \"02.11\"\nstudent: \"" + record["student"].get<std::string>() + "\"\nrun: \"" + record["digest"].get<std::string>() +
               "\"\nanswers:\n  launch_overhead: " + num(m["launch_overhead_s"]["value"].get<double>() * 1e6 * launch_scale) +
               " us\n  small_doubling_ratio: " + v("small.doubling_ratio") + "\n  small_verdict: " + verdict("small_verdict") +
               "\n  large_doubling_ratio: " + v("large.doubling_ratio") + "\n  large_verdict: " + verdict("large_verdict") +
               "\n  batched_speedup: " + v("batched_speedup") + "\n  threshold_elements: " + v("threshold_elements") + "\n";
    };
    lab_test::write_file(d / "right.yaml", answers(1.0, false));
    auto r = run_lab({"submit", "02.11", (d / "right.yaml").string(), "--run", run_file.string()}, env);
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Score: 10 / 10"));
    lab_test::write_file(d / "wrong.yaml", answers(1000.0, true));  // the time in ns, labelled µs
    auto w = run_lab({"submit", "02.11", (d / "wrong.yaml").string(), "--run", run_file.string()}, env);
    CAPTURE(w.out, w.err);
    // The launch cost's 2 points lost, and a point for each verdict the run decided, flipped.
    int decided = 0;
    for (const char* k : {"small_verdict", "large_verdict"}) decided += m[k]["value"].get<std::string>().find(" or ") == std::string::npos;
    CHECK_THAT(w.out, Catch::Contains("Score: " + std::to_string(8 - decided) + " / 10"));
}

// An instructor's draft spec, tried before it is installed: `lab answers` and `lab submit` read it
// with --spec instead of the configuration folder's copy.
TEST_CASE("lab answers and lab submit take a draft spec with --spec", "[grading-cli][grading]") {
    const fs::path run_file = lab_test::source_root() / "tests/fixtures/runs/cpu/02.02-quick-reveal.json";
    const json record = lab::record::read_record(run_file);
    lab_test::TempDir d;
    lab_test::write_file(d / "draft.yaml", R"(lesson: "02.02"
accept_quick: true
show_expected: always
questions:
  - id: draft_weights
    prompt: "How many bytes do the weights take?"
    unit: GB
    expected: {metric: question_weight_bytes}
    tolerance: {rel: 0.02}
    points: 3
)");
    auto t = run_lab({"answers", "02.02", "--run", run_file.string(), "--spec", (d / "draft.yaml").string()});
    CAPTURE(t.out, t.err);
    REQUIRE(t.exit_code == 0);
    CHECK_THAT(t.out, Catch::Contains("draft_weights:") && !Catch::Contains("prefill_flops"));
    const double gb = record["metrics"]["question_weight_bytes"]["value"].get<double>() / 1e9;
    lab_test::write_file(d / "a.yaml", "lesson: \"02.02\"\nstudent: \"" + record["student"].get<std::string>() + "\"\nrun: \"" +
                                           record["digest"].get<std::string>() + "\"\nanswers:\n  draft_weights: " + num(gb) + " GB\n");
    auto s = run_lab({"submit", "02.02", (d / "a.yaml").string(), "--run", run_file.string(), "--spec", (d / "draft.yaml").string()});
    CAPTURE(s.out, s.err);
    CHECK(s.exit_code == 0);
    CHECK_THAT(s.out, Catch::Contains("Score: 3 / 3"));
    // A draft that is not there is said as such, exit 2, not "lesson has no grading spec".
    auto missing = run_lab({"submit", "02.02", (d / "a.yaml").string(), "--run", run_file.string(), "--spec", (d / "nope.yaml").string()});
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Catch::Contains("nope.yaml") && Catch::Contains("no such grading spec"));
}

namespace {

// A copy of configs/ without any spec of lesson 02.05: a lesson installed without its spec.
struct ConfigsWithoutSpec {
    lab_test::TempDir dir;
    ConfigsWithoutSpec() {
        fs::copy(lab_test::source_root() / "configs", dir / "configs", fs::copy_options::recursive);
        fs::remove(dir / "configs/grading/02.05.yaml");
    }
    fs::path spec() const { return dir / "configs/grading/02.05.yaml"; }
    std::map<std::string, std::string> env() const { return {{"LAB_CONFIG_DIR", (dir / "configs").string()}}; }
};

}  // namespace

TEST_CASE("lab answers for a lesson without a spec says each way to point lab at one", "[grading-cli][grading]") {
    ConfigsWithoutSpec configs;
    auto r = run_lab({"answers", "02.05", "--run", fixture_run_file().string()}, configs.env());
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(configs.spec().string() + ": lesson 02.05 has no grading spec"));
    CHECK_THAT(r.err, Catch::Contains("fix: point lab at it: --spec FILE") && Catch::Contains("meson install") &&
                          Catch::Contains("LAB_CONFIG_DIR") && Catch::Contains("grading/02.05.yaml"));
    CHECK(count_of(r.err, "fix:") == 1);
}

TEST_CASE("lab answers and lab submit read a lesson's spec from its source folder where lab's configs have none", "[grading-cli][grading]") {
    // An instructor's lesson not yet installed: the plugin in src/build/ (on LAB_PLUGIN_PATH, as
    // the scaffold says), the spec in src/, where `lab validate` already found it.
    ConfigsWithoutSpec configs;
    lab_test::TempDir d;
    fs::create_directories(d / "src/build");
    fs::copy_file(lab_test::build_root() / "labs/02_05/lab_02_05.so", d / "src/build/lab_02_05.so");
    fs::copy_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml", d / "src/02.05.yaml");
    auto env = configs.env();
    env["LAB_PLUGIN_PATH"] = (d / "src/build").string();
    auto t = run_lab({"answers", "02.05", "--run", fixture_run_file().string()}, env);
    INFO(t.err);
    REQUIRE(t.exit_code == 0);
    CHECK_THAT(t.out, Catch::Contains("  ridge_point:"));
    lab_test::write_file(d / "a.yaml", t.out);
    auto r = run_lab({"submit", "02.05", (d / "a.yaml").string(), "--run", fixture_run_file().string()}, env);
    INFO(r.err);
    CHECK(r.exit_code != 2);  // graded (blank answers score 0), not refused for want of a spec
    CHECK_THAT(r.out, Catch::Contains("ridge_point"));
}

// A gradebook of zeros that blames the students ("could not be read") for the operator's missing
// or broken spec is worse than none: exit 2 and nothing written, with --lesson (as before) or
// without it.
TEST_CASE("lab grade stops, writing nothing, when a lesson handed in has no usable spec; --spec gives one", "[grading-cli][grading]") {
    ConfigsWithoutSpec configs;
    lab_test::TempDir d;
    const fs::path subs = class_of_alice(d.path());
    const fs::path csv = d / "g.csv", page = d / "class.html";
    const std::vector<std::string> grade = {"grade", subs.string(), "--out", csv.string(), "--report", page.string()};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = grade;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };

    SECTION("no spec, with or without --lesson") {
        for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--lesson", "02.05"}}) {
            auto r = run_lab(with(extra), configs.env());
            CAPTURE(r.out, r.err);
            CHECK(r.exit_code == 2);
            CHECK_THAT(r.err, Catch::Contains("lesson 02.05 has no grading spec") && Catch::Contains("fix: point lab at it: --spec FILE"));
            CHECK(count_of(r.err, "fix:") == 1);
            CHECK_FALSE(fs::exists(csv));
            CHECK_FALSE(fs::exists(page));
        }
        auto r = run_lab(grade, configs.env());
        CHECK_THAT(r.err, Catch::Contains("folder 'alice' holds a submission of lesson 02.05, whose grading spec cannot be used"));
    }
    SECTION("a spec with a mistake") {
        std::string spec = lab_test::read_file(lab_test::source_root() / "tests/fixtures/grading/02.05.yaml");
        const auto at = spec.find("metric: ridge_point");
        REQUIRE(at != std::string::npos);
        spec.replace(at, 19, "metric: ridge_pointt");
        const int line = static_cast<int>(std::count(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
        lab_test::write_file(configs.spec(), spec);
        auto r = run_lab(grade, configs.env());
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(configs.spec().string() + ":" + std::to_string(line) + ": question 'ridge_point' names metric "
                                                                                                "'ridge_pointt'"));
        CHECK(count_of(r.err, "fix:") == 1);
        CHECK_FALSE(fs::exists(csv));
        CHECK(r.out.empty());
    }
    SECTION("--spec FILE grades with that spec") {
        const fs::path draft = lab_test::source_root() / "tests/fixtures/grading/02.05.yaml";
        auto r = run_lab(with({"--spec", draft.string()}), configs.env());
        CAPTURE(r.out, r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(lab_test::read_file(csv), Catch::Contains("alice,alice,02.05,10,10,practice,"));
        // A spec of another lesson than --lesson, or one that is not there, is refused before grading.
        fs::remove(csv);
        auto other = run_lab(with({"--spec", draft.string(), "--lesson", "02.01"}), configs.env());
        CHECK(other.exit_code == 2);
        CHECK_THAT(other.err, Catch::Contains("the spec is for lesson 02.05, but --lesson is 02.01"));
        auto none = run_lab(with({"--spec", (d / "nope.yaml").string()}), configs.env());
        CHECK(none.exit_code == 2);
        CHECK_THAT(none.err, Catch::Contains("nope.yaml: no such grading spec"));
        CHECK_FALSE(fs::exists(csv));
    }
}

// A robustness review renamed a workload of an 02.10 record and sealed it again: its derivation
// failed, and `lab show` and `lab submit` blamed the plugin (exit 3). The lesson's plan says
// the record is not one it makes: a bad record for show (exit 2), implausible for submit (exit 1).
TEST_CASE("a sealed record whose workloads the lesson's plan does not give is the record's fault, not the plugin's",
          "[grading-cli][grading]") {
    lab_test::TempDir d;
    json rec = json::parse(lab_test::read_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.10-quick-reveal.json"));
    bool renamed = false;
    for (auto& w : rec["workloads"])
        if (w["name"] == "forward") w["name"] = "forwards", renamed = true;
    REQUIRE(renamed);
    lab::record::seal(rec);
    lab_test::write_file(d / "edited.json", rec.dump(2));
    auto r = run_lab({"show", (d / "edited.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("edited.json: the run record does not hold what lesson 02.10 measures") &&
                          Catch::Contains("fix: use the record `lab run 02.10` wrote, unedited") && !Catch::Contains("plugin failure"));
    lab_test::write_file(d / "answers.yaml", "lesson: \"02.10\"\nstudent: \"" + rec["student"].get<std::string>() + "\"\nrun: \"" +
                                                 rec["digest"].get<std::string>() + "\"\nanswers:\n  idle_fraction: 50%\n");
    r = run_lab({"submit", "02.10", (d / "answers.yaml").string(), "--run", (d / "edited.json").string()});
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out + r.err, !Catch::Contains("plugin failure"));
}

// A grading operator's review of `lab grade`'s console: refused rows were only a count (the
// unreadable ones were listed with their reasons); a refused resubmission's line said "graded
// second-run.json"; and a regrade with an edited spec read exactly as the first grading did.
TEST_CASE("lab grade lists each refused row with its reason, says 'graded' only of a graded row, and names the spec it graded with",
          "[grading-cli][grading]") {
    QuickConfigs configs;
    lab_test::TempDir d;
    const fs::path subs = class_of_alice(d.path());
    // dave hands in alice's run twice (a resubmission): his folder, her run, refused.
    Run later = fixture_run();
    later.record["started_at"] = "2099-01-01T00:00:00Z";
    lab::record::seal(later.record);
    fs::create_directories(subs / "dave");
    fixture_run().save(subs / "dave/first-run.json");
    lab_test::write_file(subs / "dave/first-answers.yaml", answers_for(fixture_run()));
    later.save(subs / "dave/second-run.json");
    lab_test::write_file(subs / "dave/second-answers.yaml", answers_for(later));
    lab_test::write_file(d / "roster.csv", "student\nalice\ndave\n");
    const fs::path spec = configs.dir / "configs/grading/02.05.yaml";
    auto grade = [&](const std::vector<std::string>& more = {}) {
        std::vector<std::string> args{"grade", subs.string(), "--out", (d / "g.csv").string(), "--roster", (d / "roster.csv").string()};
        args.insert(args.end(), more.begin(), more.end());
        return run_lab(args, configs.env());
    };
    auto r = grade({"--report", (d / "class.html").string()});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("  dave (02.05): refused: folder 'dave' is dave's"));
    CHECK_THAT(r.out, Catch::Contains("  dave: chose second-run.json (refused, not graded); not graded: first-answers.yaml, first-run.json"));
    CHECK_THAT(r.out, !Catch::Contains("graded second-run.json"));
    const std::string sha = lab::sha256_hex(lab_test::read_file(spec));
    const std::string spec_line = "graded with lesson 02.05: spec " + spec.string() + " (sha256 " + sha.substr(0, 12) + "), lesson plugin ";
    CHECK_THAT(r.out, Catch::Contains(spec_line));
    CHECK_THAT(lab_test::read_file(d / "class.html"), Catch::Contains("Graded with lesson 02.05: spec " + spec.string() + " (sha256 " + sha.substr(0, 12) + ")"));

    auto j = grade({"--json"});
    REQUIRE(j.exit_code == 0);
    const json s = json::parse(j.out);
    REQUIRE(s["specs"].size() == 1);
    CHECK(s["specs"][0]["lesson"] == "02.05");
    CHECK(s["specs"][0]["file"] == spec.string());
    CHECK(s["specs"][0]["sha256"] == sha);
    CHECK(s["specs"][0]["plugin_version"] == lesson_02_05().info.version);

    // The spec edited (a tolerance, a comment: any byte), the same path: the regrade says so.
    std::ofstream(spec, std::ios::app) << "# loosened after the deadline\n";
    auto again = grade();
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("graded with lesson 02.05: spec " + spec.string() + " (sha256 " +
                                          lab::sha256_hex(lab_test::read_file(spec)).substr(0, 12) + ")"));
    CHECK_THAT(again.out, !Catch::Contains(spec_line));
}
