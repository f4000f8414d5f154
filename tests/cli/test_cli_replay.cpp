// `lab run --replay RUN.json` (what `lab audit` and a Slurm audit job do) and `lab check --strict`:
// a replay measures again as the record was made, and refuses what would make it another run;
// `lab check` fails on a missed speed only under --strict.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using lab_test::run_lab_in;
using nlohmann::json;

namespace {

const fs::path& recorded_0202() {
    static const fs::path p = lab_test::source_root() / "tests/fixtures/runs/cpu/02.02-quick-reveal.json";
    return p;
}

json read_json(const fs::path& p) { return json::parse(lab_test::read_file(p)); }

}  // namespace

TEST_CASE("lab run --replay measures again with the recorded student, seed and quick flag", "[run]") {
    lab_test::TempDir d;
    const json recorded = read_json(recorded_0202());
    auto r = run_lab_in(d.path(), {"run", "02.02", "--replay", recorded_0202().string(), "--out", "again.json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json again = read_json(d / "again.json");
    CHECK(again.at("student") == recorded.at("student"));
    CHECK(again.at("seed") == recorded.at("seed"));
    CHECK(again.at("quick") == true);
    CHECK(again.at("lesson").at("id") == "02.02");
    // A fresh measurement, not a copy: its own start time.
    CHECK(again.at("started_at") != recorded.at("started_at"));
}

TEST_CASE("lab run --replay refuses what would make it another run, and a record it cannot read, before measuring", "[usage]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "truncated.json", lab_test::read_file(recorded_0202()).substr(0, 4000));
    const std::string rec = recorded_0202().string();
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const Case cases[] = {
        {{"run", "02.02", "--replay", rec, "--student", "mallory"}, "--replay takes the run's own --student"},
        {{"run", "02.02", "--replay", rec, "--token", "t0k"}, "--replay takes the run's own --token"},
        {{"run", "02.02", "--replay", rec, "--quick"}, "--replay takes the run's own --quick"},
        {{"run", "02.05", "--replay", rec}, "is a run of lesson 02.02, not 02.05"},
        {{"run", "02.02", "--replay", "truncated.json"}, "truncated.json"},
        {{"run", "02.02", "--replay", "missing.json"}, "missing.json"},
    };
    for (const auto& c : cases) {
        auto r = run_lab_in(d.path(), c.args);
        INFO(c.args.back() << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(c.says));
        CHECK_FALSE(fs::exists(d / "runs"));  // nothing measured, nothing written
    }
}

TEST_CASE("lab check counts a missed speed as a failure only under --strict; a met structural expectation passes", "[run]") {
    const lab_test::PluginFolder plugins("checked_lesson");
    lab_test::TempDir d;
    auto relaxed = run_lab_in(d.path(), {"check", "99.09", "--device", "cpu", "--json"}, plugins.env());
    INFO(relaxed.err);
    REQUIRE(relaxed.exit_code == 0);
    const json r = json::parse(relaxed.out);
    CHECK(r.at("met") == 1);
    CHECK(r.at("missed") == 0);
    CHECK(r.at("differs") == 1);
    CHECK(r.at("strict") == false);

    auto strict = run_lab_in(d.path(), {"check", "99.09", "--device", "cpu", "--strict"}, plugins.env());
    INFO(strict.err);
    CHECK(strict.exit_code == 1);
    CHECK_THAT(strict.out, Contains("--strict: each is a failure"));
    CHECK_THAT(strict.out, Contains("speed"));
}
