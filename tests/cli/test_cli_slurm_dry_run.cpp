// `--slurm --dry-run`: the scripts lab would submit, printed and not submitted (no cluster
// needed); and the errors that come before any job: Slurm absent, --slurm's options alone.
#include <catch2/catch.hpp>

#include <filesystem>

#include "test_support.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using lab_test::run_lab;

namespace {

std::map<std::string, std::string> env_of(const lab_test::TempDir& d) {
    return {{"LAB_CONFIG_DIR", (lab_test::source_root() / "configs").string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""},
            {"HOME", d.path().string()}};
}

}  // namespace

TEST_CASE("lab audit --slurm --dry-run prints the job array it would submit, and writes nothing", "[slurm-dry]") {
    lab_test::TempDir d;
    // Configs whose 02.01 spec grades quick runs, so the recorded quick fixture is gradable.
    fs::copy(lab_test::source_root() / "configs", d / "configs", fs::copy_options::recursive);
    fs::copy_file(lab_test::source_root() / "tests/fixtures/grading/02.01.yaml", d / "configs/grading/02.01.yaml",
                  fs::copy_options::overwrite_existing);
    auto env = env_of(d);
    env["LAB_CONFIG_DIR"] = (d / "configs").string();
    const fs::path subs = d / "subs";
    for (const char* student : {"alice", "bob", "carol"}) {
        fs::create_directories(subs / student);
        fs::copy_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json", subs / student / "run.json");
        if (std::string(student) == "carol") continue;  // no answers: grading refuses it, the audit leaves it out
        auto t = run_lab({"answers", "02.01", "--run", (subs / student / "run.json").string()}, env);
        REQUIRE(t.exit_code == 0);
        lab_test::write_file(subs / student / "answers.yaml", t.out);
    }
    auto r = run_lab({"audit", subs.string(), "--sample", "100%", "--slurm", "--partition", "gpu_a100", "--account", "cs267",
                      "--throttle", "4", "--time", "20:00", "--work", (d / "work").string(), "--dry-run"},
                     env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("#SBATCH --array=0-1%4"));
    CHECK_THAT(r.out, Contains("#SBATCH --partition=gpu_a100"));
    CHECK_THAT(r.out, Contains("#SBATCH --account=cs267"));
    CHECK_THAT(r.out, Contains("#SBATCH --time=20:00"));
    CHECK_THAT(r.out, Contains("#SBATCH --exclusive"));  // a CPU run's re-measure has its node alone
    CHECK_THAT(r.out, Contains(" run \"$lesson\" --replay \"$run\""));
    CHECK_THAT(r.out, Contains("sbatch --parsable"));
    CHECK_THAT(r.out, Contains((subs / "alice/run.json").string()));
    CHECK_THAT(r.out, Contains("# alice: ") && Contains("# bob: "));  // each task says whose it is
    CHECK_THAT(r.out, !Contains("carol"));
    CHECK_THAT(r.err, Contains("2 of 2 gradable submissions chosen") && Contains("left out, refused by grading") && Contains("carol: "));
    CHECK(!fs::exists(d / "work"));

    SECTION("a damaged state.json in the work folder is refused with the file and what to do") {
        fs::create_directories(d / "work");
        const std::string subs_abs = fs::absolute(subs).lexically_normal().string();
        lab_test::write_file(d / "work/plan.json",
                             R"({"schema": "lab.audit-plan/1", "submissions": ")" + subs_abs + R"(", "seed": 1, "tasks": []})");
        lab_test::write_file(d / "work/state.json", R"({"attempts": [1, 2], "jobs": {}})");
        auto bad = run_lab({"audit", subs.string(), "--slurm", "--work", (d / "work").string(), "--dry-run"}, env);
        CHECK(bad.exit_code == 2);
        CHECK_THAT(bad.err, Contains("state.json") && Contains("not an audit state lab wrote") && Contains("fix:"));
    }
}

TEST_CASE("lab run and lab check --slurm --dry-run print their scripts", "[slurm-dry]") {
    lab_test::TempDir d;
    auto run = run_lab({"run", "02.05", "--quick", "--student", "ada", "--slurm", "--gres", "gpu:1", "--work", (d / "w").string(),
                        "--out", (d / "runs/r.json").string(), "--plots", (d / "plots").string(), "--dry-run"},
                       env_of(d));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK_THAT(run.out, Contains("#SBATCH --gres=gpu:1"));
    CHECK_THAT(run.out, Contains("'run' '02.05' '--device' 'auto' '--student' 'ada' '--quick' '--out'"));
    CHECK(!fs::exists(d / "w"));
    CHECK(!fs::exists(d / "runs"));
    CHECK(!fs::exists(d / "plots"));

    auto check = run_lab({"check", "02.05", "--slurm", "--partition", "a100,h100", "--dry-run"}, env_of(d));
    REQUIRE(check.exit_code == 0);
    CHECK_THAT(check.out, Contains("#SBATCH --partition=a100") && Contains("#SBATCH --partition=h100"));
    CHECK_THAT(check.out, Contains("'check' '02.05'"));
}

TEST_CASE("--slurm without Slurm, and --slurm's options alone, are refused before anything runs", "[slurm-dry]") {
    lab_test::TempDir d;
    auto env = env_of(d);
    env["PATH"] = d.path().string();  // no sbatch, squeue or scontrol anywhere
    auto r = run_lab({"run", "02.05", "--quick", "--slurm", "--work", (d / "w").string()}, env);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("not found on PATH") && Contains("sbatch"));
    CHECK(!fs::exists(d / "w"));

    auto alone = run_lab({"run", "02.05", "--quick", "--partition", "gpu"}, env_of(d));
    CHECK(alone.exit_code == 2);
    CHECK_THAT(alone.err, Contains("--partition goes with --slurm"));
    auto check = run_lab({"check", "02.05", "--slurm"}, env_of(d));
    CHECK(check.exit_code == 2);
    CHECK_THAT(check.err, Contains("needs --partition"));
}

// A fuzzing review: `--time abc` and `--partition ""` printed a script (exit 0) that sbatch would
// refuse, or send to the default partition.
TEST_CASE("--slurm refuses a --time Slurm cannot read and an empty partition, and takes each of Slurm's time formats", "[slurm-dry]") {
    lab_test::TempDir d;
    for (const char* t : {"abc", "", "1:2:3:4", "-5", "1-", "30m"}) {
        CAPTURE(t);
        auto r = run_lab({"run", "02.02", "--quick", "--slurm", "--time", t, "--work", (d / "w").string(), "--dry-run"}, env_of(d));
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Contains("--time") && Contains("fix:"));
    }
    for (const char* t : {"30", "30:00", "1:30:00", "2-12", "2-12:30", "2-12:30:00"}) {
        CAPTURE(t);
        auto r = run_lab({"run", "02.02", "--quick", "--slurm", "--time", t, "--work", (d / "w").string(), "--dry-run"}, env_of(d));
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Contains(std::string("#SBATCH --time=") + t));
    }
    for (const char* p : {"", ",", "a100,,h100"}) {
        CAPTURE(p);
        auto r = run_lab({"run", "02.02", "--quick", "--slurm", "--partition", p, "--work", (d / "w").string(), "--dry-run"}, env_of(d));
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Contains("--partition") && Contains("fix:"));
    }
}
