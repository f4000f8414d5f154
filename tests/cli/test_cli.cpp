// The `lab` command line as a user meets it: the contract's commands and JSON keys, exit codes
// for bad usage and bad input (2) and for failing plugins (3), and that a failed run leaves no
// record behind.
#include <catch2/catch.hpp>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "run_record.hpp"
#include "lab/utc_time.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using lab_test::run_lab;
using nlohmann::json;

namespace {

using lab_test::PluginFolder;

int count_elements(xmlNode* node, const char* cls) {
    int n = 0;
    for (xmlNode* c = node; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE) {
            xmlChar* v = xmlGetProp(c, reinterpret_cast<const xmlChar*>("class"));
            if (v && std::string(reinterpret_cast<char*>(v)) == cls) ++n;
            xmlFree(v);
            n += count_elements(c->children, cls);
        }
    }
    return n;
}

}  // namespace

TEST_CASE("the repository's ./lab wrapper runs the built lab, also through a symlink", "[usage]") {
    // README's first command is `./lab run 02.05`: a broken wrapper breaks it while every test that
    // runs build/cli/lab passes. Without build/ beside it (another build folder), it must say so.
    lab_test::TempDir d;
    fs::create_symlink(lab_test::source_root() / "lab", d / "lab");
    const bool built = fs::exists(lab_test::source_root() / "build/cli/lab");
    for (const fs::path& wrapper : {lab_test::source_root() / "lab", d / "lab"}) {
        const std::string cmd = "timeout 30 " + wrapper.string() + " --version > " + (d / "out").string() + " 2>&1";
        const int rc = std::system(cmd.c_str());
        const std::string out = lab_test::read_file(d / "out");
        INFO(wrapper << ": " << out);
        if (built) {
            CHECK(rc == 0);
            CHECK_THAT(out, Catch::StartsWith("lab "));
        } else {
            CHECK(WEXITSTATUS(rc) == 2);
            CHECK_THAT(out, Catch::Contains("lab is not built yet"));
        }
    }
}

TEST_CASE("lab without a command prints usage and exits 2; --help exits 0", "[usage]") {
    auto r = run_lab({});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("usage: lab"));
    CHECK(run_lab({"--help"}).exit_code == 0);
    CHECK(run_lab({"run", "--help"}).exit_code == 0);
}

// The defaults a user would otherwise find only in the docs (a documentation review found them
// missing): --timeout's environment variable, and --work's folder, which differs for audits.
TEST_CASE("--help states the defaults that come from elsewhere: LAB_TIMEOUT, the Slurm work folder", "[usage]") {
    const std::string run = run_lab({"run", "--help"}).out;
    CHECK_THAT(run, Catch::Contains("$LAB_TIMEOUT"));
    CHECK_THAT(run, Catch::Contains("lab-slurm/ in the current folder"));
    CHECK_THAT(run_lab({"check", "--help"}).out, Catch::Contains("lab-slurm/ in the current folder"));
    CHECK_THAT(run_lab({"audit", "--help"}).out, Catch::Contains("lab-audit/ in the current folder"));
}

// The usage lines are the CLI's documentation: `lab --help` names every command, each command's
// usage line names every option its --help lists, and the docs mention every command.
TEST_CASE("every command's usage line names every option it has, and the docs name every command", "[usage]") {
    auto top = run_lab({"--help"});
    REQUIRE(top.exit_code == 0);
    std::vector<std::string> commands;
    std::istringstream lines(top.out);
    for (std::string line; std::getline(lines, line);)
        if (line.size() > 2 && line.rfind("  ", 0) == 0 && std::islower(static_cast<unsigned char>(line[2])))
            commands.push_back(line.substr(2, line.find(' ', 2) - 2));
    REQUIRE(commands.size() >= 19);
    std::string docs = lab_test::read_file(lab_test::source_root() / "README.md");
    for (const auto& e : fs::directory_iterator(lab_test::source_root() / "docs")) docs += lab_test::read_file(e.path());
    for (const auto& c : commands) {
        CAPTURE(c);
        auto help = run_lab({c, "--help"});
        REQUIRE(help.exit_code == 0);
        const std::string usage = help.out.substr(0, help.out.find('\n'));
        CHECK_THAT(usage, Catch::StartsWith("usage: lab " + c));
        std::istringstream options(help.out);
        for (std::string line; std::getline(options, line);) {
            if (line.rfind("  --", 0) != 0) continue;
            const std::string option = line.substr(2, line.find_first_of(" \t", 2) - 2);
            CAPTURE(option);
            CHECK(std::regex_search(usage, std::regex(option + "\\b")));
        }
        CHECK_THAT(docs, Catch::Contains("lab " + c + " "));
        // And `lab --help`'s lines for the command name them too (a documentation review found
        // eleven options missing there), a parenthesised aside of the usage (submit's autograder
        // refusal) aside.
        const std::size_t at = top.out.find("\n  " + c + " ");
        REQUIRE(at != std::string::npos);
        std::size_t end = at + 1;
        while ((end = top.out.find("\n  ", end + 1)) != std::string::npos && !std::islower(static_cast<unsigned char>(top.out[end + 3]))) {}
        const std::string block = top.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
        const std::string plain = std::regex_replace(usage, std::regex("\\([^)]*\\)"), "");
        const std::regex option_name("--[a-z-]+");
        for (std::sregex_iterator m(plain.begin(), plain.end(), option_name), e; m != e; ++m) {
            CAPTURE(m->str());
            CHECK(std::regex_search(block, std::regex(m->str() + "\\b")));
        }
    }
}

TEST_CASE("bad usage exits 2 with one clear message", "[usage]") {
    auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
        {{"frobnicate"}, "unknown command 'frobnicate'"},
        {{"run", "02.99", "--quick"}, "unknown lesson ID '02.99'"},
        {{"info", "nope"}, "unknown lesson ID 'nope'"},
        {{"run", "02.05", "--device", "tpu"}, "unknown device 'tpu'"},
        {{"device", "--device", "gpu0"}, "unknown device 'gpu0'"},
        {{"run", "02.05", "--frob"}, "unrecognised option '--frob'"},
        {{"run", "02.05", "--threads", "-1"}, "--threads must be positive"},
        {{"calibrate", "--threads", "many"}, "threads"},
        // The lesson first (a bad-input review): "" graded the answers' own lesson; "02.05 " and
        // "02.13" were said only as a mismatch with the run or the answers, or a missing spec file.
        {{"submit", "", "/nonexistent/answers.yaml"}, "unknown lesson ID ''"},
        {{"submit", "02.05 ", "/nonexistent/answers.yaml"}, "unknown lesson ID '02.05 '"},
        {{"answers", "02.13", "--run", "/nonexistent/run.json"}, "unknown lesson ID '02.13'"},
        {{"check-spec", "02.13"}, "unknown lesson ID '02.13'"},
        // A bad-input review: boost read -1 for an unsigned option as its largest value (every
        // tensor listed; seed 4294967295). Refused where every command's options are parsed.
        {{"checkpoint", "/nonexistent.safetensors", "--largest", "-1"}, "--largest is negative (-1): it takes a whole number, never below 0"},
        {{"audit", "/nonexistent", "--sample", "1", "--seed=-1"}, "--seed is negative (-1)"},
        {{"model", "llama-2-7b", "--context", " -5"}, "--context is negative ( -5)"},
    }));
    auto r = run_lab(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK(r.out.empty());
}

// boost::program_options reports a positional argument left out as a missing option ("the option
// '--id' is required but missing"), a flag no command has: the message names the argument as the
// usage line writes it.
TEST_CASE("a missing positional argument is named as the usage line names it, not as an option", "[usage]") {
    auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
        {{"run"}, "a lesson ID is required: lab run ID (`lab list` shows the lessons)"},
        {{"run", "--quick"}, "a lesson ID is required: lab run ID"},
        {{"info"}, "a lesson ID is required: lab info ID"},
        {{"answers", "--run", "r.json"}, "a lesson ID is required: lab answers ID"},
        {{"submit"}, "a lesson ID is required: lab submit ID"},
        {{"check", "--quick"}, "a lesson ID is required: lab check ID"},
        {{"new", "--title", "T"}, "ID is required (the new lesson's ID, NN.NN): lab new ID"},
        {{"show"}, "RUN.json is required (a run record written by `lab run`): lab show RUN.json"},
        {{"report"}, "RUN.json is required"},
        {{"grade"}, "SUBMISSIONS_DIR is required"},
        {{"audit"}, "SUBMISSIONS_DIR is required"},
        {{"validate"}, "PLUGIN.so|ID is required"},
        {{"model"}, "CONFIG.json|NAME is required"},
        {{"checkpoint"}, "FILE|DIR is required"},
        {{"smi"}, "FILE is required"},
        {{"trace"}, "TRACE.json[.gz] is required"},
    }));
    CAPTURE(args);
    auto r = run_lab(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("lab: " + message));
    CHECK_THAT(r.err, Catch::Contains("  usage: lab " + args[0]) && Catch::Contains("fix: see `lab " + args[0] + " --help`"));
    CHECK_THAT(r.err, !Catch::Contains("the option '--"));
    CHECK(r.out.empty());
}

// main() opens every error with "lab: ": a message that names its command again ("lab: lab model:
// unknown --dtype") says it twice.
TEST_CASE("a usage error says 'lab:' once", "[usage]") {
    // Each is refused before anything is read or written (--dry-run writes nothing).
    auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
        {{"run", "02.05", "--frob"}, "unrecognised option '--frob'"},
        {{"answers", "02.05"}, "'--run' is required"},
        {{"submit", "02.05"}, "the answers file is missing"},
        {{"check-spec"}, "give a spec file (or a lesson ID), or --keys"},
        {{"model", "tiny", "--dtype", "fp7"}, "unknown --dtype 'fp7'"},
        {{"model", "tiny", "--batch", "0"}, "--batch and --seq must be at least 1"},
        {{"model", "tiny", "--memory", "lots"}, "--memory 'lots'"},
        {{"model", "tiny", "--device-spec", "nope"}, "unknown --device-spec 'nope'"},
        {{"token"}, "give a roster CSV"},
        {{"token", "--identity", "sid"}, "--identity reads a roster"},
        {{"audit", "/nonexistent", "--throttle", "0"}, "--throttle is at least 1"},
        {{"run", "02.05", "--slurm", "--dry-run", "--partition", "a,b", "--out", "/nonexistent/r.json"}, "runs on one partition"},
        {{"check", "02.05", "--slurm", "--dry-run"}, "--slurm needs --partition"},
    }));
    CAPTURE(args);
    auto r = run_lab(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("lab: ") && Catch::Contains(message));
    CHECK_THAT(r.err, !Catch::Contains("lab: lab"));
}

TEST_CASE("an unreadable plugin folder exits 2 naming it", "[usage]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "plugins", "a file, not a folder");
    auto r = run_lab({"list"}, {{"LAB_PLUGIN_PATH", (d / "plugins").string()}});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains((d / "plugins").string()) && Catch::Contains("cannot read the plugin folder"));
}

TEST_CASE("a broken plugin on the path is reported by name, and the good lessons still list", "[usage]") {
    PluginFolder f("wrong_api");
    auto r = run_lab({"list"}, f.env());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("lab_wrong_api.so") && Catch::Contains("API 99.0") && Catch::Contains("fix:"));
    CHECK_THAT(r.out, Catch::Contains("02.01") && Catch::Contains("02.05"));
}

TEST_CASE("lab list and lab info speak JSON", "[usage]") {
    auto l = run_lab({"list", "--json"});
    REQUIRE(l.exit_code == 0);
    json lessons = json::parse(l.out);
    std::vector<std::string> ids;
    for (const auto& e : lessons) ids.push_back(e["id"]);
    CHECK(std::find(ids.begin(), ids.end(), "02.01") != ids.end());
    CHECK(std::find(ids.begin(), ids.end(), "02.05") != ids.end());

    auto i = run_lab({"info", "02.05", "--json"});
    REQUIRE(i.exit_code == 0);
    json info = json::parse(i.out);
    CHECK(info["title"] == "The Roofline");
    CHECK(info["objectives"].size() == 2);
    bool ridge_graded = false;
    for (const auto& m : info["metrics"])
        if (m["name"] == "ridge_point") ridge_graded = m["graded"] && m["unit"] == "FLOP/B";
    CHECK(ridge_graded);
}

TEST_CASE("a lesson that crashes is reported (exit 3) and leaves no run record", "[isolation]") {
    PluginFolder f("crashing_lesson");
    lab_test::TempDir out;
    auto r = run_lab({"run", "99.01", "--quick", "--student", "s", "--out", (out / "run.json").string()}, f.env());
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("lab_crashing_lesson.so") && Catch::Contains("crashed (signal SIGSEGV); no run record written"));
    CHECK_FALSE(fs::exists(out / "run.json"));

    // Inside a workload's kernel: the report names the workload (an SDK review: it named none).
    auto env = f.env();
    env["LAB_TEST_CRASH_IN_KERNEL"] = "1";
    auto k = run_lab({"run", "99.01", "--quick", "--student", "s", "--out", (out / "run.json").string()}, env);
    CHECK(k.exit_code == 3);
    CHECK_THAT(k.err, Catch::Contains("crashed (signal SIGSEGV) while measuring workload 'reckless'; no run record written"));
    CHECK_FALSE(fs::exists(out / "run.json"));
}

TEST_CASE("a lesson that hangs is stopped at its time budget (exit 3) and leaves no run record", "[isolation]") {
    PluginFolder f("hanging_lesson");
    lab_test::TempDir out;
    auto r = run_lab({"run", "99.02", "--quick", "--student", "s", "--out", (out / "run.json").string()}, f.env());
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("exceeded its time limit of ") && Catch::Contains(" s in all)") && Catch::Contains("fix: ") &&
                          Catch::Contains("--timeout S"));
    CHECK_FALSE(fs::exists(out / "run.json"));
}

// A student review: Ctrl-C (or a kill) during `lab run --out new/run.json` left `new/` behind
// empty, a destructor not running on a signal.
TEST_CASE("a run stopped by a signal leaves none of the folders it made for its outputs", "[isolation]") {
    PluginFolder f("hanging_lesson");
    lab_test::TempDir d;
    // The lesson hangs (given 120 s), so the signal comes while it measures, its folders made.
    const std::string line = "env XDG_CACHE_HOME='" + lab_test::shared_cache_dir().string() + "' LAB_PLUGIN_PATH='" + f.dir.path().string() +
                             "' LAB_TIMEOUT= timeout -s TERM 8 '" + lab_test::lab_executable().string() + "' run 99.02 --quick --student s --timeout 120 --out '" +
                             (d / "deep/er/run.json").string() + "' --plots '" + (d / "plots").string() + "' >/dev/null 2>&1";
    const int rc = std::system(line.c_str());
    REQUIRE(WIFEXITED(rc));
    CHECK(WEXITSTATUS(rc) == 124);  // stopped by the signal, not finished
    CHECK_FALSE(fs::exists(d / "deep"));
    CHECK_FALSE(fs::exists(d / "plots"));
}

TEST_CASE("a lesson that throws is reported with its message (exit 3)", "[isolation]") {
    PluginFolder f("throwing_lesson");
    lab_test::TempDir out;
    auto r = run_lab({"run", "99.03", "--quick", "--student", "s", "--out", (out / "run.json").string()}, f.env());
    CHECK(r.exit_code == 3);
    // The workload its kernel failed in, and what to do (an SDK review: neither was said).
    CHECK_THAT(r.err, Catch::Contains("lab_throwing_lesson.so: while measuring workload 'impatient': the kernel ran out of patience"));
    CHECK_THAT(r.err, Catch::Contains("fix: the lesson's kernel or the device failed"));
    CHECK_FALSE(fs::exists(out / "run.json"));

    // std::invalid_argument from a kernel ("stoi" alone): bad input, but said with its file,
    // workload and fix.
    auto env = f.env();
    env["LAB_TEST_THROW_INVALID"] = "1";
    auto i = run_lab({"run", "99.03", "--quick", "--student", "s", "--out", (out / "run.json").string()}, env);
    CHECK(i.exit_code == 2);
    CHECK_THAT(i.err, Catch::Contains("lab_throwing_lesson.so: while measuring workload 'impatient': stoi") &&
                          Catch::Contains("fix: if it names an option you gave"));
    CHECK_FALSE(fs::exists(out / "run.json"));
}

TEST_CASE("lab device --json holds the contract's keys, in SI units", "[run]") {
    auto r = run_lab({"device", "--json", "--quick"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    json d = json::parse(r.out);
    for (const char* k : {"facts", "spec", "ceilings"}) CHECK(d.contains(k));
    const json& c = d["ceilings"];
    CHECK(c["clock_hz"]["value"].get<double>() > 1e8);
    CHECK(c["clock_hz"]["unit"] == "Hz");
    CHECK(c["launch_s"]["value"].get<double>() > 0);
    CHECK(c["launch_s"]["value"].get<double>() < 1e-2);
    CHECK(c["flops_per_s"]["fp32.simt"]["value"].get<double>() > 0);
    CHECK(c["flops_per_s"]["fp64.simt"]["value"].get<double>() > 0);
    for (const char* k : {"read", "copy", "triad", "update", "best"}) {
        CHECK(c["bandwidth_bytes_per_s"][k]["value"].get<double>() > 0);
        CHECK_FALSE(c["bandwidth_bytes_per_s"][k]["method"].get<std::string>().empty());
        CHECK_FALSE(c["bandwidth_bytes_per_s"][k]["measured_at"].get<std::string>().empty());
    }
    // A theoretical peak where the microarchitecture table knows this CPU, else none, saying why.
    const std::string spec_kind = d["spec"]["kind"];
    CHECK((spec_kind == "theoretical" || spec_kind == "none"));
    if (spec_kind == "none") CHECK_FALSE(d["spec"]["note"].get<std::string>().empty());
}

TEST_CASE("lab run --json prints the record it wrote, with graded values withheld", "[run]") {
    lab_test::TempDir out;
    auto r = run_lab({"run", "02.01", "--quick", "--json", "--student", "Alice", "--out", (out / "a.json").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    json printed = json::parse(r.out);
    json written = json::parse(lab_test::read_file(out / "a.json"));
    CHECK(printed == written);
    CHECK(written["schema"] == "lab.run/1");
    CHECK(written["student"] == "alice");
    CHECK(written["quick"] == true);
    CHECK_FALSE(written["metrics"].contains("per_element_ratio"));
    CHECK_FALSE(written["metrics"].contains("mystery_a.measured_regime"));
    // Shown, and a regime's name: which one is the machine's business (the lesson's own
    // expectation of latency_bound is a performance one).
    const std::string regime = written["metrics"]["chain.measured_regime"]["value"].get<std::string>();
    CHECK_THAT(regime, Catch::Matches("(compute|memory|overhead|latency)_bound|undecided.*"));
    CHECK(written["digest"].get<std::string>().rfind("sha256:", 0) == 0);
}

TEST_CASE("lab run 02.05 --plots writes a roofline SVG with the ceilings and kernels in it", "[run]") {
    lab_test::TempDir out;
    auto r = run_lab({"run", "02.05", "--quick", "--reveal", "--student", "bob", "--plots", out.path().string(),
                      "--out", (out / "r.json").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("ridge") && Catch::Contains("run record:"));
    std::string svg = lab_test::read_file(out / "roofline-02.05.svg");
    xmlDocPtr doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "roofline.svg", nullptr, XML_PARSE_NONET);
    REQUIRE(doc != nullptr);
    xmlNode* root = xmlDocGetRootElement(doc);
    CHECK(count_elements(root, "ceiling") >= 2);  // fp32.simt and fp64.simt
    CHECK(count_elements(root, "bandwidth") == 1);
    CHECK(count_elements(root, "ridge") >= 1);
    CHECK(count_elements(root, "point") >= 6);
    xmlFreeDoc(doc);
    json rec = json::parse(lab_test::read_file(out / "r.json"));
    CHECK(rec["metrics"].contains("ridge_point"));
    CHECK(rec["revealed"] == true);
    // 02.05 grades full runs only: a quick run that goes ahead says so, once.
    const auto note = r.err.find("note: lesson 02.05 grades full runs only");
    CHECK(note != std::string::npos);
    CHECK(r.err.find("note: lesson 02.05 grades full runs only", note + 1) == std::string::npos);
    // What a CPU does not measure is said, in the console and in the record, with why.
    CHECK_THAT(r.out, Catch::Contains("not measured: tf32gemm (tf32 GEMM needs a GPU's tensor cores)"));
    REQUIRE(rec["skipped"].size() == 2);
    CHECK(rec["skipped"][1]["workload"] == "bf16gemm");
    CHECK_THAT(rec["skipped"][1]["reason"].get<std::string>(), Catch::Contains("bf16"));
}

TEST_CASE("--out into a folder that cannot be created exits 2 before measuring", "[run]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "file", "x");
    auto r = run_lab({"run", "02.01", "--quick", "--student", "s", "--out", (d / "file/sub/run.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("file/sub"));
}

// A review: lab show printed the whole table, then failed to write a plot into a folder it cannot
// write in (/proc: there even for root). Said first, alone; lab run says it before measuring.
TEST_CASE("a --plots folder lab cannot write in is refused before the table is printed or a run measured", "[usage]") {
    const auto fixture = lab_test::source_root() / "tests/fixtures/runs/cpu/02.04-quick-reveal.json";
    auto r = run_lab({"show", fixture.string(), "--plots", "/proc"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("/proc: cannot write --plots in this folder") && Catch::Contains("fix: choose another --plots path"));
    r = run_lab({"run", "02.01", "--quick", "--student", "s", "--plots", "/proc"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("cannot write --plots"));
}

TEST_CASE("lab show re-derives a recorded run and withholds graded values", "[usage]") {
    auto fixture = lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json";
    auto r = run_lab({"show", fixture.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Mystery A is ?") && Catch::Contains("digest intact"));
    auto j = run_lab({"show", fixture.string(), "--json", "--reveal"});
    REQUIRE(j.exit_code == 0);
    CHECK(json::parse(j.out)["metrics"].contains("per_element_ratio"));
    // --plots writes the SVGs lab run --plots would, into a folder it makes.
    lab_test::TempDir d;
    auto p = run_lab({"show", (lab_test::source_root() / "tests/fixtures/runs/cpu/02.04-quick-reveal.json").string(), "--plots",
                      (d / "plots").string()});
    REQUIRE(p.exit_code == 0);
    CHECK_THAT(p.out, Catch::Contains("plot: " + (d / "plots/roofline-02.04.svg").string()));
    for (const char* svg : {"plots/roofline-02.04.svg", "plots/intensity-02.04.svg"})
        CHECK(lab_test::read_file(d / svg).find("<svg") != std::string::npos);
}

TEST_CASE("a run's view fits a 100-column terminal: parameters under the table, long statuses on their own line", "[usage]") {
    // 02.05's fixture: seven params-with-AI rows (108 columns with the parameters in them), ceilings
    // re-measured in the run, seven withheld names. Every line fits, counted in characters (µ is one).
    auto fixture = lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json";
    auto r = run_lab({"show", fixture.string()}, {{"COLUMNS", "100"}});
    REQUIRE(r.exit_code == 0);
    std::istringstream lines(r.out);
    std::size_t widest = 0;
    for (std::string line; std::getline(lines, line);) {
        const std::size_t chars = lab_test::display_columns(line);
        INFO(line);
        CHECK(chars <= 100);
        widest = std::max(widest, chars);
    }
    CHECK(widest > 90);  // the table still uses the width it has
    CHECK_THAT(r.out, Catch::Contains("\nparams\n  read ") && Catch::Contains("\n                                        re-measured in this run"));
    // In a file (no COLUMNS, not a terminal) the table keeps to 100 columns too.
    auto file = run_lab({"show", fixture.string()}, {{"COLUMNS", ""}});
    CHECK_THAT(file.out, Catch::Contains("\nparams\n  read "));
}

TEST_CASE("a run's table shows the roofline columns only where a workload is placed on the roofline", "[usage]") {
    // 02.03's sweeps are not placed: six empty columns (FLOP/s ... regime) pushed its table to 97
    // columns and its parameters under it. Without them it fits 80 columns, parameters in the rows.
    auto sweeps = run_lab({"show", (lab_test::source_root() / "tests/fixtures/runs/cpu/02.03-quick-reveal.json").string()}, {{"COLUMNS", "80"}});
    REQUIRE(sweeps.exit_code == 0);
    CHECK_THAT(sweeps.out, Catch::Matches("[\\s\\S]*\\nworkload +params +time +noise +FLOP +bytes\\n[\\s\\S]*"));
    CHECK_THAT(sweeps.out, Catch::Matches("[\\s\\S]*\\nread_4k +bytes=4096 reps=8192 +[0-9.]+ µs[\\s\\S]*"));
    CHECK_THAT(sweeps.out, !Catch::Contains("roof: of the ceilings above") && !Catch::Contains("\nparams\n"));
    // The legend is folded to the terminal's width.
    std::istringstream lines(sweeps.out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("(time:", 0) == 0) CHECK(line.size() <= 80);
    auto placed = run_lab({"show", (lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json").string()}, {{"COLUMNS", "100"}});
    CHECK_THAT(placed.out, Catch::Matches("[\\s\\S]*\\nworkload +time +noise +FLOP +bytes +FLOP/s +B/s +AI +roof +ref +regime\\n[\\s\\S]*"));
    CHECK_THAT(placed.out, Catch::Contains("roof: of the ceilings above"));
}

TEST_CASE("a run's view lists the ceilings measured right after each kernel, which decide its regime", "[usage]") {
    // 02.12's fixture: each mystery judged against a launch, FLOP/s and bandwidth re-measured after
    // it. Without them a student cannot work out the ref column or an overhead verdict from the
    // view (the header's launch is the cached one). The '?' count line keeps its space when folded.
    auto fixture = lab_test::source_root() / "tests/fixtures/runs/cpu/02.12-quick-reveal.json";
    auto r = run_lab({"show", fixture.string()}, {{"COLUMNS", "100"}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("\nref ceilings (measured right after each kernel)\n  mystery_1     launch "));
    CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*\\n  mystery_2     launch [0-9.]+ µs, fp[0-9]+\\.simt [0-9.]+ GFLOP/s, bw\\.update [0-9.]+ GB/s\\n[\\s\\S]*"));
    CHECK_THAT(r.out, Catch::Contains("\n12 graded values are withheld"));
    CHECK_THAT(r.out, !Catch::Contains("a ref above 100%"));  // graded roof fractions withheld: nothing to explain

    // 02.04's fixture (revealed): an in-place kernel beat the read reference measured after it
    // (122% ... 161%), which the view explains instead of leaving the roof looking broken.
    auto beat = run_lab({"show", (lab_test::source_root() / "tests/fixtures/runs/cpu/02.04-quick-reveal.json").string()}, {{"COLUMNS", "100"}});
    REQUIRE(beat.exit_code == 0);
    CHECK_THAT(beat.out, Catch::Contains("\n(a ref above 100%: the kernel ran faster than a ceiling measured right after it,"));
}

TEST_CASE("lab show refuses an edited, a truncated and a foreign run record with exit 2", "[usage]") {
    lab_test::TempDir d;
    std::string text = lab_test::read_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json");
    json rec = json::parse(text);
    rec["workloads"][0]["time_s"]["median"] = 1e-9;  // a faster kernel than was measured
    lab_test::write_file(d / "edited.json", rec.dump());
    lab_test::write_file(d / "truncated.json", text.substr(0, text.size() / 3));
    lab_test::write_file(d / "foreign.json", R"({"schemaVersion": 1, "traceEvents": []})");
    // Edited and re-sealed (a digest is no signature): a median of 0 s printed "inf FLOP/s".
    rec["workloads"][0]["time_s"]["median"] = 0.0;
    lab::record::seal(rec);
    lab_test::write_file(d / "resealed.json", rec.dump());
    auto [file, message] = GENERATE(table<std::string, std::string>({
        {"edited.json", "digest does not match"},
        {"resealed.json", "an inconsistent run record (edited after lab wrote it?)"},
        {"truncated.json", "not valid JSON"},
        {"foreign.json", "not a run record"},
        {"missing.json", "cannot read the run record"},
    }));
    auto r = run_lab({"show", (d / file).string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains(message));
    if (file == "resealed.json") {
        auto page = run_lab({"report", (d / file).string(), "--out", (d / "page.html").string()});
        CHECK(page.exit_code == 2);
        CHECK_THAT(page.err, Catch::Contains(message));
        CHECK_FALSE(fs::exists(d / "page.html"));
        // Nor a template to answer it with (a review: lab answers wrote one lab show refused).
        auto answers = run_lab({"answers", "02.01", "--run", (d / file).string()});
        CHECK(answers.exit_code == 2);
        CHECK_THAT(answers.err, Catch::Contains(message));
        CHECK(answers.out.empty());
    }
}

TEST_CASE("a resealed record with a negative FLOP count is refused as inconsistent", "[usage]") {
    lab_test::TempDir d;
    json rec = json::parse(lab_test::read_file(lab_test::source_root() / "tests/fixtures/runs/cpu/02.01-quick.json"));
    rec["workloads"][0]["flops"] = -1.0;  // a review saw "-53.6 FLOP/s" printed from one
    lab::record::seal(rec);
    lab_test::write_file(d / "negative.json", rec.dump());
    auto r = run_lab({"show", (d / "negative.json").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("a FLOP or byte count that is negative or not a number"));
}

TEST_CASE("lab run --trace writes a Chrome trace of the lesson, gzip-compressed when named .gz", "[run]") {
    lab_test::TempDir out;
    auto r = run_lab({"run", "02.05", "--quick", "--student", "t", "--trace", (out / "t.json.gz").string(), "--out",
                      (out / "r.json").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("trace: "));
    json trace = json::parse(lab_test::gunzip_file(out / "t.json.gz"));
    int kernels = 0, launches = 0, names = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel") ++kernels;
        if (e.value("ph", "") == "X" && e.value("cat", "") == "runtime") ++launches;
        if (e.value("ph", "") == "M") ++names;
    }
    CHECK(kernels > 8);
    CHECK(launches >= kernels);
    CHECK(names >= 2);
    CHECK(trace["otherData"]["lesson"] == "02.05");
    for (const auto& f : fs::directory_iterator(out.path())) CHECK(f.path().filename().string().find(".partial") == std::string::npos);

    // Windowed: every workload the run measured has its traced window on lab's track, the GEMMs
    // (last in the lesson) are in it, nothing was dropped, and a launch's correlation number
    // names one launch only, though the device's tracer restarts its numbering per window.
    const json record = json::parse(lab_test::read_file(out / "r.json"));
    std::set<std::string> windows, untraced, correlations;
    bool sgemm = false, duplicate = false;
    for (const auto& e : trace["traceEvents"]) {
        if (e.value("ph", "") != "X") continue;
        if (e.value("cat", "") == "workload") windows.insert(e["name"].get<std::string>());
        if (e.value("cat", "") == "untraced") untraced.insert(e["name"].get<std::string>());
        if (e.value("cat", "") == "gemm" && e["name"].get<std::string>().rfind("sgemm ", 0) == 0) sgemm = true;
        if (e.value("cat", "") == "runtime" && e["args"].contains("correlation"))
            duplicate |= !correlations.insert(e["args"]["correlation"].dump()).second;
    }
    for (const auto& w : record["workloads"]) {
        const std::string name = w["name"].get<std::string>();
        CHECK(windows.count(name) == 1);
        CHECK(untraced.count("measuring " + name + " (not traced)") == 1);
    }
    CHECK(sgemm);
    CHECK_FALSE(duplicate);
    CHECK(trace["otherData"]["dropped"] == 0);

    // Readable names: a kernel is named after the workload that launched it, with no number
    // (the correlation, an integer as Kineto writes it, is in its args); a launch after what it
    // launched; first touch and cache flushes are setup, not kernels; no process is pid 0.
    std::set<std::string> kernel_names, launch_names, setup_names;
    bool numbered = false, string_correlation = false, pid0 = false;
    for (const auto& e : trace["traceEvents"]) {
        pid0 |= e.value("pid", -1) == 0;
        if (e.value("ph", "") != "X") continue;
        const std::string cat = e.value("cat", ""), name = e["name"].get<std::string>();
        if (cat == "kernel") kernel_names.insert(name), numbered |= name.find(" #") != std::string::npos;
        if (cat == "runtime") launch_names.insert(name);
        if (cat == "setup") setup_names.insert(name);
        if (e.contains("args") && e["args"].contains("correlation")) string_correlation |= !e["args"]["correlation"].is_number_integer();
    }
    CHECK_FALSE(numbered);
    CHECK_FALSE(string_correlation);
    CHECK_FALSE(pid0);
    for (const char* w : {"read", "copy", "triad", "fma_few", "fma_many", "fma_peak_fp32"}) {
        INFO(w);
        CHECK(kernel_names.count(w) == 1);
        CHECK(launch_names.count(std::string("launch ") + w) == 1);
    }
    CHECK(kernel_names.count("first touch") == 0);
    CHECK(setup_names.count("first touch") == 1);
    CHECK(trace["displayTimeUnit"] != "ns");
    // On every track slices nest or follow one another, never half-overlap: Perfetto and
    // chrome://tracing draw a track's slices as a stack. (lab's own track had each "tracer
    // stopped" start a few µs before its workload's window ended.)
    std::map<std::pair<long long, long long>, std::vector<std::pair<double, double>>> tracks;
    for (const auto& e : trace["traceEvents"])
        if (e.value("ph", "") == "X")
            tracks[{e.value("pid", 0LL), e.value("tid", 0LL)}].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e.value("dur", 0.0)});
    int half_overlaps = 0;
    for (auto& [track, slices] : tracks) {
        std::stable_sort(slices.begin(), slices.end(), [](auto& a, auto& b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
        std::vector<double> open;  // ends of the slices that enclose the current one
        for (const auto& [begin, end] : slices) {
            while (!open.empty() && open.back() <= begin + 1e-3) open.pop_back();
            if (!open.empty() && end > open.back() + 1e-3) ++half_overlaps;
            open.push_back(end);
        }
    }
    CHECK(half_overlaps == 0);
    // lab trace leaves the untraced measuring out of the span it calls idle.
    auto summary = run_lab({"trace", (out / "t.json.gz").string(), "--json"});
    REQUIRE(summary.exit_code == 0);
    const json s = json::parse(summary.out);
    CHECK(s["untraced_us"].get<double>() > 0);
    CHECK((s["memcpy"]["count"].get<int>() == 0 || s["memcpy"]["bytes"].get<double>() > 0));
}

TEST_CASE("a failed run leaves no trace behind", "[isolation]") {
    PluginFolder f("crashing_lesson");
    lab_test::TempDir out;
    auto r = run_lab({"run", "99.01", "--quick", "--student", "s", "--trace", (out / "t.json").string(), "--out",
                      (out / "run.json").string()},
                     f.env());
    CHECK(r.exit_code == 3);
    CHECK(fs::is_empty(out.path()));
}

TEST_CASE("a lesson that eats memory is stopped at the memory limit (exit 3), no run record", "[isolation]") {
    PluginFolder f("memory_hog_lesson");
    lab_test::TempDir out;
    auto env = f.env();
    env["LAB_MEMORY_LIMIT"] = "768M";
    auto r = run_lab({"run", "99.04", "--quick", "--student", "s", "--out", (out / "run.json").string()}, env);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("memory limit of 768 MiB"));
    CHECK_FALSE(fs::exists(out / "run.json"));
}

TEST_CASE("--timeout stops a lesson sooner than its budget, and bad limits are usage errors", "[isolation]") {
    PluginFolder f("hanging_lesson");
    lab_test::TempDir out;
    auto r = run_lab({"run", "99.02", "--quick", "--timeout", "1", "--student", "s", "--out", (out / "run.json").string()},
                     f.env());
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("exceeded its time limit"));
    auto env = f.env();
    env["LAB_MEMORY_LIMIT"] = "lots";
    auto bad = run_lab({"run", "99.02", "--quick", "--student", "s"}, env);
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("LAB_MEMORY_LIMIT"));
    // A limit that is no number of seconds was an internal error (nan in the child's JSON), or
    // was ignored without a word (LAB_TIMEOUT=abc): a usage error naming it, before anything runs.
    for (const char* t : {"nan", "inf", "-1", "1e9"}) {
        CAPTURE(t);
        auto r2 = run_lab({"run", "99.02", "--quick", "--timeout", t, "--student", "s"}, f.env());
        CHECK(r2.exit_code == 2);
        CHECK_THAT(r2.err, Catch::Contains(std::string("--timeout ") + t) &&
                               (Catch::Contains("is not a time limit lab can keep") || Catch::Contains("is not a number of seconds")) &&
                               Catch::Contains("fix:") && !Catch::Contains("internal"));
    }
    for (const char* t : {"abc", "1e999", "5s"}) {
        CAPTURE(t);
        auto e = f.env();
        e["LAB_TIMEOUT"] = t;
        auto r2 = run_lab({"check", "99.02", "--quick"}, e);
        CHECK(r2.exit_code == 2);
        CHECK_THAT(r2.err, Catch::Contains(std::string("LAB_TIMEOUT=") + t));
    }
}

// lab validate replays the instructor's run() and derive(): a robustness review's crashing plugin
// took lab validate down (SIGSEGV, exit 139) and a hanging one hung it. In a child, as lab run.
TEST_CASE("lab validate reports a plugin that crashes, hangs or eats memory as a plugin failure", "[isolation]") {
    for (const char* fixture : {"crashing_lesson", "hanging_lesson", "memory_hog_lesson"}) {
        CAPTURE(fixture);
        PluginFolder f(fixture);
        auto env = f.env();
        env["LAB_TIMEOUT"] = "3";
        env["LAB_MEMORY_LIMIT"] = "1G";
        const auto r = run_lab({"validate", (f.dir / (std::string("lab_") + fixture + ".so")).string()}, env);
        CHECK(r.exit_code == 3);
        CHECK_THAT(r.err, Catch::Contains("plugin failure: lab validate stopped: the lesson plugin") &&
                              (Catch::Contains("crashed") || Catch::Contains("time limit") || Catch::Contains("memory limit")));
    }
    // LAB_TIMEOUT is read as lab run reads it: a value that is no time limit is a usage error
    // (it meant 5 minutes without a word before), and nothing is replayed.
    PluginFolder f("hanging_lesson");
    auto env = f.env();
    env["LAB_TIMEOUT"] = "3s";
    const auto r = run_lab({"validate", (f.dir / "lab_hanging_lesson.so").string()}, env);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("LAB_TIMEOUT=3s is not a number of seconds"));
}

TEST_CASE("after a plugin fails, the host and the grader keep working", "[isolation]") {
    PluginFolder f("crashing_lesson");
    CHECK(run_lab({"run", "99.01", "--quick", "--student", "s"}, f.env()).exit_code == 3);
    auto l = run_lab({"list"}, f.env());
    CHECK(l.exit_code == 0);
    CHECK_THAT(l.out, Catch::Contains("99.01") && Catch::Contains("02.05"));
    auto show = run_lab({"show", (lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json").string()});
    CHECK(show.exit_code == 0);
}

// `lab validate` takes a plugin's path or, as `lab run` does, a lesson ID it finds.
TEST_CASE("lab new refuses an ID lab already has; lab validate warns of a different lesson under a taken ID", "[usage]") {
    lab_test::TempDir d;
    auto r = run_lab({"new", "02.05", "--title", "Clash", "--dir", d.path().string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("lesson ID 02.05 is taken: \"The Roofline\"") && Catch::Contains("choose a free ID"));
    CHECK(fs::is_empty(d.path()));  // nothing half-written
    // 99.03 installed as "Throws"; validating another build titled "Throws, version 2".
    lab_test::TempDir installed, other;
    fs::copy_file(lab_test::fixture_plugin("throwing_lesson"), installed / "lab_99_03.so");
    fs::copy_file(lab_test::fixture_plugin("throwing_lesson_v2"), other / "lab_99_03.so");
    auto v = run_lab({"validate", (other / "lab_99_03.so").string()}, {{"LAB_PLUGIN_PATH", installed.path().string()}});
    CHECK_THAT(v.out, Catch::Contains("warning: lesson 99.03 is also \"Throws\"") && Catch::Contains("would replace"));
    // With the instructor's build folder first on the path, as authoring.md has it: this build
    // shadows the installed lesson, which is still another lesson under its ID.
    auto first = run_lab({"validate", (other / "lab_99_03.so").string()},
                         {{"LAB_PLUGIN_PATH", other.path().string() + ":" + installed.path().string()}});
    CHECK_THAT(first.out, Catch::Contains("warning: lesson 99.03 is also \"Throws\"") && Catch::Contains("would replace"));
    // A rebuild of the installed lesson itself is no warning.
    auto same = run_lab({"validate", (installed / "lab_99_03.so").string()}, {{"LAB_PLUGIN_PATH", installed.path().string()}});
    CHECK_THAT(same.out, !Catch::Contains("is also"));
}

TEST_CASE("lab run of a lesson whose plugin was refused says the refusal once", "[usage]") {
    lab_test::TempDir d;
    fs::copy_file(lab_test::fixture_plugin("wrong_api"), d / "lab_99_01.so");
    auto r = run_lab({"run", "99.01", "--quick", "--student", "s"}, {{"LAB_PLUGIN_PATH", d.path().string()}});
    CHECK(r.exit_code == 2);
    const std::string what = "built for plugin API 99.0";
    REQUIRE(r.err.find(what) != std::string::npos);
    CHECK(r.err.find(what, r.err.find(what) + 1) == std::string::npos);
}

TEST_CASE("a lesson declaring a metric twice is refused by lab run and lab info, not only by lab validate", "[usage]") {
    PluginFolder p("duplicate_metric");
    for (const std::vector<std::string>& args : {std::vector<std::string>{"info", "99.07"}, {"run", "99.07", "--quick", "--student", "s"}}) {
        auto r = run_lab(args, p.env());
        INFO(args[0] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("declares metric 'time_ratio' twice"));
    }
}

TEST_CASE("lab validate refuses a metric declared in a prefixed unit or in %, and says what to declare", "[usage]") {
    PluginFolder p("prefixed_unit");
    auto r = run_lab({"validate", "99.08"}, p.env());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("metric 'add_gbps' has unit 'GB/s', which is not an SI base unit") &&
                          Catch::Contains("metric 'share' has unit '%'") && Catch::Contains("declare GB/s as B/s"));
}

TEST_CASE("lab validate finds a lesson by its ID", "[usage]") {
    auto r = run_lab({"validate", "02.05"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith("\nvalid\n"));  // the verdict line, not "invalid" within one
    CHECK_THAT(r.out, Catch::Contains("grading spec"));
    r = run_lab({"validate", "09.99"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown lesson ID"));
    r = run_lab({"validate", "/nope/lab_09_99.so"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no such file"));
}

// The progress bar is for people at a terminal: under a pseudo-terminal (`script`) a run draws it,
// with what it is doing and an estimate; piped, its stderr holds no bar.
TEST_CASE("lab run draws a progress bar at a terminal, and none into a pipe", "[run]") {
    if (std::system("command -v script >/dev/null 2>&1") != 0) {
        WARN("no `script` (util-linux) to make a terminal: the terminal half is not checked");
    } else {
        lab_test::TempDir d;
        // LAB_PROGRESS_AFTER=0: the bar from the first step, however fast this machine runs the lesson.
        // As run_lab would: its cache, no developer's settings; a terminal that draws (CI's TERM may be unset or dumb).
        const std::string cmd = "env -u LAB_PLUGIN_PATH -u LAB_NO_PROGRESS -u LAB_STUDENT -u LAB_TOKEN -u LAB_CONFIG_DIR TERM=xterm "
                                "XDG_CONFIG_HOME='" + (d / "config").string() + "' XDG_CACHE_HOME='" + lab_test::shared_cache_dir().string() +
                                "' LAB_PROGRESS_AFTER=0 script -qfec \"'" + lab_test::lab_executable().string() + "' run 02.05 --quick --student tty --out '" +
                                (d / "run.json").string() + "' >/dev/null\" '" + (d / "typescript").string() + "' >/dev/null 2>&1";
        REQUIRE(std::system(cmd.c_str()) == 0);
        const std::string seen = lab_test::read_file(d / "typescript");
        CHECK_THAT(seen, Catch::Contains("lesson 02.05 (quick) [") && Catch::Contains("% measuring ") && Catch::Contains(" left"));
    }
    lab_test::TempDir d;
    auto piped = run_lab({"run", "02.05", "--quick", "--student", "pipe", "--out", (d / "run.json").string()});
    REQUIRE(piped.exit_code == 0);
    CHECK(piped.err.find("[#") == std::string::npos);
    CHECK(piped.err.find("\r") == std::string::npos);
}

// A misspelt key in the user config would leave every run anonymous without a word.
TEST_CASE("a misspelt key in the user config is named, with the key it was probably meant to be", "[run]") {
    lab_test::TempDir d;
    fs::create_directories(d / "lab");
    lab_test::write_file(d / "lab/config.yaml", "studnet: bob\n");
    auto r = run_lab({"run", "02.09", "--quick", "--out", (d / "run.json").string()},
                     {{"XDG_CONFIG_HOME", d.path().string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("config.yaml:1: unknown key 'studnet' (did you mean 'student'?)"));
    CHECK_THAT(r.err, Catch::Contains("anonymous"));
    // The note names the file lab read ($XDG_CONFIG_HOME's), not ~/.config, where it did not look.
    CHECK_THAT(r.err, Catch::Contains("$LAB_STUDENT or " + (d / "lab/config.yaml").string() + ")"));
}

// The user config is read as every input file is: a folder there was an internal error, a key
// written twice kept one of the two.
TEST_CASE("a user config that is a folder, or names the student twice, is refused with its line", "[run]") {
    lab_test::TempDir d;
    fs::create_directories(d / "lab/config.yaml");
    const std::map<std::string, std::string> env{{"XDG_CONFIG_HOME", d.path().string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}};
    const std::vector<std::string> run = {"run", "02.09", "--quick", "--out", (d / "run.json").string()};
    auto r = run_lab(run, env);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("config.yaml: the user config is a folder, not a file") && !Catch::Contains("internal"));
    fs::remove(d / "lab/config.yaml");
    lab_test::write_file(d / "lab/config.yaml", "student: ann\nstudent: bob\n");
    r = run_lab(run, env);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("config.yaml:2: 'student' is written twice"));
    CHECK_FALSE(fs::exists(d / "run.json"));
    // Only comments: it sets nothing, and the run goes on.
    lab_test::write_file(d / "lab/config.yaml", "# student: ada\n\n");
    r = run_lab({"run", "02.09", "--quick", "--student", "ada", "--out", (d / "run.json").string()}, env);
    CHECK(r.exit_code == 0);
}

// yaml-cpp reads an unclosed quote as if it were closed at the line's end: the ID may be cut short.
TEST_CASE("a student ID whose quote is never closed in the user config is refused with exit 2", "[run]") {
    lab_test::TempDir d;
    fs::create_directories(d / "lab");
    lab_test::write_file(d / "lab/config.yaml", "# mine\nstudent: \"jane\n");
    const std::map<std::string, std::string> env{{"XDG_CONFIG_HOME", d.path().string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}};
    const std::vector<std::string> run = {"run", "02.09", "--quick", "--out", (d / "run.json").string()};
    auto r = run_lab(run, env);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(fs::exists(d / "run.json"));
    CHECK_THAT(r.err, Catch::Contains("config.yaml:2: the double quote opened on line 2 is never closed") &&
                          Catch::Contains("fix: close the quote on line 2"));
    // Classic Mac line ends (a lone CR, a line break in YAML 1.2): read as one comment line, the
    // run was recorded as anonymous without a word.
    lab_test::write_file(d / "lab/config.yaml", "# mine\rstudent: \"jane doe\"  # closed\r");
    auto closed = run_lab(run, env);
    CHECK(closed.exit_code == 0);
    CHECK(lab_test::read_file(d / "run.json").find("\"student\": \"jane_doe\"") != std::string::npos);
}

// An out-of-tree lesson keeps its spec beside its sources and its plugin in build/: validate finds
// it from inside build/ too (a relative plugin path has no parent folder to look in).
TEST_CASE("lab validate finds the grading spec beside the plugin's folder, run from inside it", "[usage]") {
    lab_test::TempDir d;
    fs::create_directories(d / "02_05/build");
    fs::copy_file(lab_test::build_root() / "labs/02_05/lab_02_05.so", d / "02_05/build/lab_02_05.so");
    fs::copy_file(lab_test::source_root() / "configs/grading/02.05.yaml", d / "02_05/02.05.yaml");
    const std::string cmd = "cd '" + (d / "02_05/build").string() + "' && '" + lab_test::lab_executable().string() +
                            "' validate lab_02_05.so > out.txt 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK_THAT(lab_test::read_file(d / "02_05/build/out.txt"), Catch::Contains("grading spec " + (d / "02_05/02.05.yaml").string()));
}

// An instructor's review edited the spec beside the plugin after installing it: lab validate read
// the edited one, lab submit graded with the installed one, and nothing said so.
TEST_CASE("lab validate says when the spec beside the plugin differs from the one lab submit grades with", "[usage]") {
    lab_test::TempDir d;
    fs::copy_file(lab_test::build_root() / "labs/02_05/lab_02_05.so", d / "lab_02_05.so");
    const std::string installed = lab_test::read_file(lab_test::source_root() / "configs/grading/02.05.yaml");
    lab_test::write_file(d / "02.05.yaml", installed);
    auto r = run_lab({"validate", (d / "lab_02_05.so").string()});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, !Catch::Contains("differs from this spec"));
    lab_test::write_file(d / "02.05.yaml", installed + "# edited after installing\n");
    r = run_lab({"validate", (d / "lab_02_05.so").string()});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("warning: lab submit and lab check-spec 02.05 grade with " +
                                      (lab_test::source_root() / "configs/grading/02.05.yaml").lexically_normal().string() +
                                      ", which differs from this spec: install this one"));
}

// With no spec installed, lab submit and lab check-spec fall back to the one beside the plugin
// (a documentation review found the note saying they find none).
TEST_CASE("lab validate says that, with none installed, the spec beside the plugin is the one read", "[usage]") {
    lab_test::TempDir d;
    fs::create_directories(d / "plugin");
    fs::copy_file(lab_test::build_root() / "labs/02_05/lab_02_05.so", d / "plugin/lab_02_05.so");
    fs::copy_file(lab_test::source_root() / "configs/grading/02.05.yaml", d / "plugin/02.05.yaml");
    fs::copy(lab_test::source_root() / "configs", d / "configs", fs::copy_options::recursive);
    fs::remove(d / "configs/grading/02.05.yaml");
    const std::map<std::string, std::string> env = {{"LAB_CONFIG_DIR", (d / "configs").string()}, {"LAB_PLUGIN_PATH", (d / "plugin").string()}};
    auto r = run_lab({"validate", (d / "plugin/lab_02_05.so").string()}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("note: no spec of 02.05 is installed in ") &&
                          Catch::Contains(": lab submit and lab check-spec read this one, beside the plugin, until one is"));
    auto c = run_lab({"check-spec", "02.05"}, env);
    INFO(c.out << c.err);
    CHECK(c.exit_code == 0);
    CHECK_THAT(c.out, Catch::Contains((d / "plugin/02.05.yaml").string()));
}

// `./lab_02_05.so` has the folder `.` above it: the spec found beside it is named without it, and
// a --spec path with `..` in it is named as the file it is.
TEST_CASE("lab validate names the plugin and the spec by lexically normal paths", "[usage]") {
    lab_test::TempDir d;
    fs::create_directories(d / "sub");
    fs::copy_file(lab_test::build_root() / "labs/02_05/lab_02_05.so", d / "lab_02_05.so");
    fs::copy_file(lab_test::source_root() / "configs/grading/02.05.yaml", d / "02.05.yaml");
    const std::string lab = "'" + lab_test::lab_executable().string() + "'";
    REQUIRE(std::system(("cd '" + d.path().string() + "' && " + lab + " validate ./lab_02_05.so > found.txt 2>&1").c_str()) == 0);
    const std::string found = lab_test::read_file(d / "found.txt");
    INFO(found);
    CHECK_THAT(found, Catch::StartsWith("lab_02_05.so: lesson 02.05"));
    CHECK_THAT(found, Catch::Contains("grading spec " + (d / "02.05.yaml").string() + ":"));
    CHECK_THAT(found, !Catch::Contains("/./") && !Catch::Contains("./lab_02_05.so"));
    REQUIRE(std::system(("cd '" + d.path().string() + "' && " + lab + " validate sub/../lab_02_05.so --spec ./sub/../02.05.yaml > given.txt 2>&1").c_str()) == 0);
    const std::string given = lab_test::read_file(d / "given.txt");
    INFO(given);
    CHECK_THAT(given, Catch::StartsWith("lab_02_05.so: lesson 02.05") && Catch::Contains("grading spec 02.05.yaml:"));
    CHECK_THAT(given, !Catch::Contains("sub/..") && !Catch::Contains("./"));
}

TEST_CASE("lab validate with a spec that does not fit a sound plugin blames the spec, not the plugin", "[usage]") {
    lab_test::TempDir d;
    std::string spec = lab_test::read_file(lab_test::source_root() / "configs/grading/02.05.yaml");
    const auto at = spec.find("metric: ");
    REQUIRE(at != std::string::npos);
    spec.insert(at + 8, "no_such_");  // the first question's metric, misspelt
    lab_test::write_file(d / "02.05.yaml", spec);
    auto r = run_lab({"validate", (lab_test::build_root() / "labs/02_05/lab_02_05.so").string(), "--spec", (d / "02.05.yaml").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("every declared metric produced, none undeclared") && Catch::Contains("does not fit the lesson"));
    CHECK_THAT(r.out, !Catch::Contains("no grading spec found"));
    CHECK_THAT(r.err, Catch::Contains("the grading spec does not fit lesson 02.05") && Catch::Contains("02.05.yaml:") &&
                          Catch::Contains("no_such_") && !Catch::Contains("info()"));
}

// A fuzzing review of the environment: each of these was ignored or misread without a word.
TEST_CASE("environment variables lab cannot use are said: a missing plugin folder, hex or tiny timeouts, huge memory limits", "[usage]") {
    lab_test::TempDir d;
    auto r = run_lab({"list"}, {{"LAB_PLUGIN_PATH", (d / "doesnotexist").string()}});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains((d / "doesnotexist").string()) && Catch::Contains("does not exist") && Catch::Contains("fix:"));

    PluginFolder f("hanging_lesson");
    // The option's reading (quantity_text.hpp): 1e3 is taken from both, hexadecimal and
    // negative or too short limits refused from both.
    for (const char* t : {"0x10", "1e-9", "0.01", "-5"}) {
        CAPTURE(t);
        auto e = f.env();
        e["LAB_TIMEOUT"] = t;
        auto r2 = run_lab({"run", "99.02", "--quick", "--student", "s"}, e);
        CHECK(r2.exit_code == 2);
        CHECK_THAT(r2.err, Catch::Contains(std::string("LAB_TIMEOUT=") + t) && Catch::Contains("fix:"));
    }
    auto tiny = run_lab({"run", "99.02", "--quick", "--student", "s", "--timeout", "1e-9"}, f.env());
    CHECK(tiny.exit_code == 2);
    CHECK_THAT(tiny.err, Catch::Contains("at least 0.1"));
    for (const char* m : {"1e400", "99999999999999999999999", "0x10G"}) {
        CAPTURE(m);
        auto e = f.env();
        e["LAB_MEMORY_LIMIT"] = m;
        auto r2 = run_lab({"run", "99.02", "--quick", "--student", "s"}, e);
        CHECK(r2.exit_code == 2);
        CHECK_THAT(r2.err, Catch::Contains("LAB_MEMORY_LIMIT") && Catch::Contains("fix:"));
    }
    // Piped, no bar could be drawn, so a bad LAB_PROGRESS_AFTER changes nothing: it was warned
    // about on every command; at a terminal it is said (below, under `script`).
    auto progress = run_lab({"list"}, {{"LAB_PROGRESS_AFTER", "abc"}});
    CHECK(progress.exit_code == 0);
    CHECK(progress.err.find("LAB_PROGRESS_AFTER") == std::string::npos);
    if (std::system("command -v script >/dev/null 2>&1") != 0) {
        WARN("no `script` (util-linux) to make a terminal: the warning at a terminal is not checked");
        return;
    }
    auto at_terminal = [&](const std::string& env) {
        const std::string cmd = "env " + env + " script -qfec \"'" + lab_test::lab_executable().string() + "' list >/dev/null\" '" +
                                (d / "typescript").string() + "' >/dev/null 2>&1";
        REQUIRE(std::system(cmd.c_str()) == 0);
        return lab_test::read_file(d / "typescript");
    };
    CHECK_THAT(at_terminal("TERM=xterm LAB_PROGRESS_AFTER=abc"),
               Catch::Contains("warning: LAB_PROGRESS_AFTER=abc is not a number of seconds") && Catch::Contains("fix:"));
    CHECK(at_terminal("TERM=xterm LAB_PROGRESS_AFTER=0.5").find("LAB_PROGRESS_AFTER") == std::string::npos);
    CHECK(at_terminal("TERM=dumb LAB_PROGRESS_AFTER=abc").find("LAB_PROGRESS_AFTER") == std::string::npos);
    CHECK(at_terminal("TERM=xterm LAB_NO_PROGRESS=1 LAB_PROGRESS_AFTER=abc").find("LAB_PROGRESS_AFTER") == std::string::npos);
}

// A ceilings cache that cannot be written (a read-only HOME; HOME=/ under a container's random UID)
// failed the command with exit 2 after it had measured, the calibration thrown away.
TEST_CASE("a calibration whose cache cannot be written is kept, with a note on how to cache it", "[run]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "home", "a file, so no folder can be made in it (for root too)\n");
    const std::map<std::string, std::string> env{{"XDG_CACHE_HOME", (d / "home").string()}};
    auto r = run_lab({"calibrate", "--quick", "--device", "cpu", "--json"}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("note: the ceilings were not cached (" + (d / "home").string()) &&
                          Catch::Contains("fix: set XDG_CACHE_HOME to a folder you can write"));
    const json out = json::parse(r.out);
    CHECK(out["calibrated_now"] == true);
    CHECK(out["ceilings"]["flops_per_s"].size() > 0);
    CHECK_THAT(out["notes"].dump(), Catch::Contains("not cached"));

    // A note at a terminal clears the line a bar may hold; with TERM=dumb no bar is drawn, so no
    // escape sequence comes either.
    if (std::system("command -v script >/dev/null 2>&1") != 0) {
        WARN("no `script` (util-linux) to make a terminal: TERM=dumb is not checked");
        return;
    }
    const std::string cmd = "env TERM=dumb LAB_PROGRESS_AFTER=0 XDG_CACHE_HOME='" + (d / "home").string() + "' script -qfec \"'" +
                            lab_test::lab_executable().string() + "' calibrate --quick --device cpu >/dev/null\" '" +
                            (d / "typescript").string() + "' >/dev/null 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string seen = lab_test::read_file(d / "typescript");
    CHECK_THAT(seen, Catch::Contains("note: the ceilings were not cached"));
    CHECK(seen.find("\033[K") == std::string::npos);
    CHECK(seen.find("calibrating cpu") == std::string::npos);
}

// docs/measurement.md: an unknown LAB_SIMD "falls back to the widest supported path and the facts
// say why (simd_override)"; the run said nothing, so a student who asked for a path never knew.
TEST_CASE("an unknown LAB_SIMD is said on stderr, and the facts say why", "[run]") {
    auto r = run_lab({"device", "--quick", "--json"}, {{"LAB_SIMD", "bogus"}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("LAB_SIMD=bogus ignored"));
    CHECK_THAT(json::parse(r.out)["facts"]["extra"]["simd_override"].get<std::string>(), Catch::Contains("LAB_SIMD=bogus"));
}

// The misspelt key is said even when --student makes the file unneeded this time.
TEST_CASE("a misspelt key in the user config is named even when --student is given", "[usage]") {
    lab_test::TempDir d;
    fs::create_directories(d / "lab");
    lab_test::write_file(d / "lab/config.yaml", "studnet: bob\n");
    auto r = run_lab({"run", "02.09", "--quick", "--student", "x", "--out", (d / "run.json").string()},
                     {{"XDG_CONFIG_HOME", d.path().string()}, {"LAB_STUDENT", ""}, {"LAB_TOKEN", ""}});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("config.yaml:1: unknown key 'studnet'"));
}

// A fuzzing review: usage errors said what was wrong but not what to write.
TEST_CASE("--threads below 0 or past the CPUs, and an empty --title, say what to write", "[usage]") {
    auto r = run_lab({"run", "02.05", "--threads", "-1"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--threads must be positive") && Catch::Contains("fix:"));
    r = run_lab({"run", "02.02", "--quick", "--student", "s", "--threads", "99999"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("99999") && Catch::Contains("fix: give at most"));
    lab_test::TempDir d;
    r = run_lab({"new", "02.13", "--title", "", "--dir", d.path().string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--title is empty") && Catch::Contains("fix:") && !Catch::Contains("quotes"));
    CHECK(fs::is_empty(d.path()));
}

namespace {

// The pid of a `lab __child` whose parent is `parent`, or 0.
pid_t child_of(pid_t parent) {
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid != parent) continue;
        if (lab_test::read_file(e.path() / "cmdline").find("__child") != std::string::npos) return std::stoi(name);
    }
    return 0;
}

// The CPU time a process has used, in clock ticks (-1 when it is gone).
long cpu_ticks(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) return -1;
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 13; ++i) rest >> field;  // state .. cmajflt
    rest >> utime >> stime;
    return utime + stime;
}

// Running (not gone, not a zombie waiting for whoever adopted it).
bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) return false;
    return line[line.rfind(')') + 2] != 'Z';
}

}  // namespace

TEST_CASE("killing lab alone stops the child measuring for it", "[isolation]") {
    // A student's `kill PID` (or a closed terminal) reaches lab, not its child: the child must not
    // measure on unseen beside the next run, or hold the GPU.
    PluginFolder f("hanging_lesson");
    lab_test::TempDir out, cache;
    const std::string cmd = "LAB_PLUGIN_PATH=" + f.dir.path().string() + " LAB_TIMEOUT= XDG_CACHE_HOME=" + cache.path().string() + " " +
                            lab_test::lab_executable().string() + " run 99.02 --quick --student s --out " + (out / "run.json").string() +
                            " >/dev/null 2>&1 & echo $!";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    pid_t lab = 0;
    REQUIRE(fscanf(p, "%d", &lab) == 1);
    pclose(p);
    pid_t child = 0;
    for (int i = 0; i < 600 && !child; ++i) {
        child = child_of(lab);
        if (!child) usleep(50000);
    }
    REQUIRE(child != 0);
    // Wait for the lesson's silent hang (calibration keeps the child busy and talking, and a child
    // that writes to a dead parent's pipe dies of SIGPIPE anyway): its CPU time still for 1.5 s.
    long ticks = cpu_ticks(child);
    for (int still = 0, i = 0; still < 30 && i < 1200; ++i) {
        usleep(50000);
        const long now = cpu_ticks(child);
        still = now == ticks ? still + 1 : 0;
        ticks = now;
    }
    kill(lab, SIGKILL);
    bool stopped = false;
    for (int i = 0; i < 200 && !stopped; ++i) {
        stopped = !running(child);
        if (!stopped) usleep(50000);
    }
    if (!stopped) kill(child, SIGKILL);  // leave nothing behind either way
    CHECK(stopped);
    CHECK_FALSE(fs::exists(out / "run.json"));
}

TEST_CASE("a run's default record name never replaces a record already there", "[usage]") {
    // runs/<ID>-<time to the second>.json: two runs started in one second (a script, two
    // terminals) shared a name, and the second record silently replaced the first.
    lab_test::TempDir d;
    fs::create_directories(d / "runs");
    const std::time_t now = std::time(nullptr);
    std::set<std::string> placeholders;
    for (std::time_t t = now; t < now + 120; ++t) {  // every name the run could take in two minutes
        const std::string name = "02.01-" + lab::format::utc_stamp(t) + ".json";
        lab_test::write_file(d / "runs" / name, "someone else's record");
        placeholders.insert(name);
    }
    const auto r = lab_test::run_lab_in(d.path(), {"run", "02.01", "--quick", "--student", "s"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> written;
    for (const auto& e : fs::directory_iterator(d / "runs")) {
        const std::string name = e.path().filename().string();
        if (placeholders.count(name)) CHECK(lab_test::read_file(e.path()) == "someone else's record");
        else written.push_back(name);
    }
    REQUIRE(written.size() == 1);
    CHECK_THAT(written[0], Catch::Matches(R"(02\.01-\d{8}-\d{6}-2\.json)"));
    CHECK_THAT(r.out, Catch::Contains("run record: runs/" + written[0]));
}

TEST_CASE("an empty --student or --token is refused, not recorded as anonymous", "[usage]") {
    // `lab run 02.05 --token "$TOKEN"` with TOKEN unset recorded an anonymous run, graded for
    // practice only, and said nothing of the flag.
    for (const char* flag : {"--student", "--token"}) {
        lab_test::TempDir d;
        const auto r = run_lab({"run", "02.09", "--quick", flag, "", "--out", (d / "run.json").string()});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(std::string(flag) + " is empty") && Catch::Contains("fix: "));
        CHECK_FALSE(fs::exists(d / "run.json"));
    }
}
