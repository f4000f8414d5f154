// `lab smi` as a user meets it: the --json keys of the contract (issue 14), null for what a
// format does not hold, and a broken file exiting 2 with the line named and nothing on stdout.
#include <catch2/catch.hpp>

#include <sstream>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "smi_captures.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using lab_test::run_lab;

TEST_CASE("lab smi --json gives the contract's keys for every capture", "[smi]") {
    const auto dir = lab_test::source_root() / "tests/fixtures/nvidia-smi";
    for (const char* f : {"h100_load_table.txt", "h100_load_q.txt", "h100_load_query_gpu.csv", "l40s_idle_table.txt"}) {
        INFO(f);
        auto r = run_lab({"smi", (dir / f).string(), "--json"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        REQUIRE(j["gpus"].size() == 1);
        for (const char* k : {"name", "driver_version", "cuda_version", "pstate", "temperature_c", "power_draw_w", "power_limit_w",
                              "power_draw_average_w", "power_draw_instant_w", "memory_used_mib", "memory_total_mib", "utilization_gpu_pct",
                              "utilization_memory_pct", "utilization_encoder_pct", "utilization_decoder_pct", "sm_clock_mhz", "memory_clock_mhz",
                              "processes"})
            CHECK(j["gpus"][0].contains(k));
        CHECK(j["explanation"].size() > 2);
    }
    const auto table = nlohmann::json::parse(run_lab({"smi", (dir / "h100_load_table.txt").string(), "--json"}).out);
    CHECK(table["gpus"][0]["sm_clock_mhz"].is_null());  // the table does not show clocks
    CHECK(table["gpus"][0]["processes"][2]["pid"] == 11345);
    const auto dmon = nlohmann::json::parse(run_lab({"smi", (dir / "l40s_load_dmon.txt").string(), "--json"}).out);
    CHECK(dmon["format"] == "dmon");
    CHECK(dmon["samples"].size() == 5);
    CHECK(dmon["samples"][0]["enc"] == 67);
    CHECK(dmon["samples"][0]["mtemp"].is_null());
    // dmon's columns in nvidia-smi's own order (a fidelity review: they were printed alphabetically).
    const std::vector<std::string> order = {"gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "jpg", "ofa", "mclk", "pclk"};
    CHECK(dmon.value("columns", nlohmann::json()) == order);
    const std::string dmon_text = run_lab({"smi", (dir / "l40s_load_dmon.txt").string()}).out;
    CHECK_THAT(dmon_text, Contains("\n    gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n"
                                   "      0    109     53      -     10      2     67      0      0      0   9001   2520\n"));
    auto plain = run_lab({"smi", (dir / "h100_load_q.txt").string()});
    CHECK_THAT(plain.out, Contains("GPU-Util 100%"));
    CHECK_THAT(plain.out, Contains("how many SMs"));
    // -q lists the driver's reservation apart from Used (479 + 19818 + 61263 = 81560 MiB): said so.
    CHECK_THAT(plain.out, Contains("19818 MiB of 81559 MiB in use") && Contains("the driver's own 479 MiB are reserved apart, not counted in it"));
    CHECK(nlohmann::json::parse(run_lab({"smi", (dir / "h100_load_q.txt").string(), "--json"}).out)["gpus"][0]["memory_reserved_mib"] == 479);
    CHECK_THAT(run_lab({"smi", (dir / "h100_load_table.txt").string()}).out, Contains("depends on the driver"));
    // A --query-gpu CSV lists it too, as memory.reserved (a fidelity review: it was null).
    const auto l40s_csv = run_lab({"smi", (dir / "l40s_load_query_gpu.csv").string(), "--json"});
    CHECK(nlohmann::json::parse(l40s_csv.out)["gpus"][0]["memory_reserved_mib"] == 609);
    CHECK_THAT(run_lab({"smi", (dir / "l40s_load_query_gpu.csv").string()}).out,
               Contains("the driver's own 609 MiB are reserved apart") && !Contains("depends on the driver"));
}

// A fidelity review: the L40S under load is NVENC at 60% while GPU-Util reads 9%; lab smi never
// mentioned the encoder.
TEST_CASE("lab smi shows the encoder's and decoder's utilisation and says when they, not the SMs, are busy", "[smi]") {
    const auto dir = lab_test::source_root() / "tests/fixtures/nvidia-smi";
    const auto j = nlohmann::json::parse(run_lab({"smi", (dir / "l40s_load_query_gpu.csv").string(), "--json"}).out);
    CHECK(j["gpus"][0].value("utilization_encoder_pct", nlohmann::json()) == 60);
    CHECK(j["gpus"][0].value("utilization_decoder_pct", nlohmann::json()) == 0);
    CHECK(j["gpus"][0]["utilization_gpu_pct"] == 9);  // as before
    const auto text = run_lab({"smi", (dir / "l40s_load_q.txt").string()}).out;
    CHECK_THAT(text, Contains("GPU-Util 9%   encoder 59%   decoder 0%"));
    CHECK_THAT(text, Contains("GPU-Util 9% but encoder 59%: the GPU's video engines (NVENC encodes, NVDEC decodes), not its SMs, are what is busy"));
    // The table does not show the engines: null, and no figure printed for them.
    const auto table = nlohmann::json::parse(run_lab({"smi", (dir / "l40s_load_table.txt").string(), "--json"}).out);
    CHECK(table["gpus"][0].value("utilization_encoder_pct", nlohmann::json(0)).is_null());
    CHECK_THAT(run_lab({"smi", (dir / "l40s_load_table.txt").string()}).out, !Contains("encoder"));
}

// A fidelity review: a two-GPU dmon (a loaded H100 and an idle one) read as one GPU at
// "10 samples, sm 50%, pwr 351 W".
TEST_CASE("lab smi reports a dmon capture's GPUs apart, in text and --json", "[smi]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "two.txt", lab_test::two_gpu_dmon());
    auto r = run_lab({"smi", (d / "two.txt").string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["samples"].size() == 10);  // every line, as before
    REQUIRE(j.value("per_gpu", nlohmann::json()).size() == 2);
    CHECK(j["per_gpu"][0]["gpu"] == 0);
    CHECK(j["per_gpu"][0]["samples"] == 5);
    CHECK(j["per_gpu"][0]["mean"]["sm"] == 100);
    CHECK(j["per_gpu"][0]["mean"]["pwr"].get<double>() == Approx(633.6));
    CHECK_FALSE(j["per_gpu"][0]["mean"].contains("gpu"));
    CHECK(j["per_gpu"][1]["gpu"] == 1);
    CHECK(j["per_gpu"][1]["samples"] == 5);
    CHECK(j["per_gpu"][1]["mean"]["sm"] == 0);
    CHECK(j["per_gpu"][1]["mean"]["pwr"] == 69);
    r = run_lab({"smi", (d / "two.txt").string()});
    CHECK_THAT(r.out, Contains("GPU 0: sm 100% on average") && Contains("GPU 1: sm 0% on average") && Contains("GPU 0: pwr 634 W") &&
                          Contains("GPU 1: pwr 69 W") && !Contains("sm 50%") && !Contains("10 samples"));
    // Each GPU's means, a row each, in the header's order.
    CHECK_THAT(r.out, Contains("mean of each GPU's samples\n"
                               "    gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk  samples\n"
                               "      0  633.6   63.8   58.2    100    9.4      0      0      0      0   2619   1980        5\n"
                               "      1     69     41   47.2      0      0      0      0      0      0   2619    345        5\n"));
    // One GPU's capture keeps its shape: one row of means, its sentences named GPU 0.
    const auto one = nlohmann::json::parse(run_lab({"smi", (lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_load_dmon.txt").string(), "--json"}).out);
    REQUIRE(one.value("per_gpu", nlohmann::json()).size() == 1);
    CHECK(one["per_gpu"][0]["samples"] == 5);
    CHECK_THAT(one["explanation"][0].get<std::string>(), Contains("GPU 0: 5 samples"));
}

// A byte that is not UTF-8 in a capture (a Latin-1 GPU name) was an internal error in --json.
TEST_CASE("lab smi --json writes a stray byte of a capture as U+FFFD", "[smi]") {
    lab_test::TempDir d;
    std::string table = lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_load_table.txt");
    table.replace(table.find("H100"), 1, "H\xe9");
    lab_test::write_file(d / "latin1.txt", table);
    auto r = run_lab({"smi", (d / "latin1.txt").string(), "--json"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("H\xef\xbf\xbd"));
    CHECK_THAT(r.err, !Contains("internal error"));
}

TEST_CASE("lab smi refuses a cut or foreign file with exit 2 and the line", "[smi]") {
    lab_test::TempDir d;
    const std::string table = lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_load_table.txt");
    lab_test::write_file(d / "cut.txt", table.substr(0, table.find("| N/A   59C")));
    auto r = run_lab({"smi", (d / "cut.txt").string(), "--json"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("cut.txt:9"));
    lab_test::write_file(d / "notes.txt", "my GPU was busy today\n");
    r = run_lab({"smi", (d / "notes.txt").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("not an nvidia-smi capture"));
    CHECK(run_lab({"smi", (d / "missing.txt").string()}).exit_code == 2);
    // A CSV cut just after a comma of its header (`head -c 4180` of the H100's): cut short, with
    // its line; not "headerless, name the columns".
    const std::string csv = lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_idle_query_gpu.csv");
    lab_test::write_file(d / "x.csv", csv.substr(0, 4180));
    REQUIRE(csv[4179] == ',');
    r = run_lab({"smi", (d / "x.csv").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("x.csv:1") && Contains("cut short in its header") && !Contains("--columns"));
    // Cut under the table's header, or a third of the way into -q output: both were read as a
    // capture with no GPU, or with every reading '-' (a robustness review).
    lab_test::write_file(d / "header_only.txt", table.substr(0, table.find('\n', table.find("|===")) + 1));
    r = run_lab({"smi", (d / "header_only.txt").string(), "--json"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("the table ends under its header, before any GPU's rows: the capture is cut short"));
    const std::string q = lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_load_q.txt");
    lab_test::write_file(d / "third.txt", q.substr(0, q.size() / 3));
    r = run_lab({"smi", (d / "third.txt").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("the capture ends inside GPU 0's section, before its Processes"));
    // `nvidia-smi -q -d MEMORY` prints neither a Product Name nor Processes: whole, and read.
    std::string memory_only;
    std::istringstream lines(q);
    for (std::string l; std::getline(lines, l);)
        if (l.find("Product Name") == std::string::npos && l.find("Processes") == std::string::npos) memory_only += l + "\n";
    lab_test::write_file(d / "memory.txt", memory_only);
    r = run_lab({"smi", (d / "memory.txt").string()});
    CHECK(r.exit_code == 0);
}

TEST_CASE("lab smi and lab trace read a file the lessons ship by its bare name, from any folder", "[smi]") {
    lab_test::TempDir elsewhere;
    const std::string cmd = "cd '" + elsewhere.path().string() + "' && '" + lab_test::lab_executable().string() +
                            "' smi h100_idle_query_gpu.csv --json > smi.json 2> smi.err && '" + lab_test::lab_executable().string() +
                            "' trace a100_simple_add.json.gz --json > trace.json 2> trace.err";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const auto smi = nlohmann::json::parse(lab_test::read_file(elsewhere / "smi.json"));
    CHECK_THAT(smi["file"].get<std::string>(), Catch::EndsWith("labs/02_09/captures/h100_idle_query_gpu.csv"));
    const auto trace = nlohmann::json::parse(lab_test::read_file(elsewhere / "trace.json"));
    CHECK(trace["kernels"]["count"].get<int>() > 0);
    // A name that is neither a file here nor a shipped one is still refused, naming it.
    auto missing = run_lab({"smi", "no_such_capture.csv"});
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Catch::Contains("no_such_capture.csv"));
}

// A fuzzing review: `--columns name` on a dmon capture was silently ignored. And a reading that
// is garbage exits 2 with the file, line, field and a fix, nothing on stdout.
TEST_CASE("lab smi refuses --columns on a capture that names its own columns, and garbage readings with exit 2", "[smi]") {
    const auto dir = lab_test::source_root() / "tests/fixtures/nvidia-smi";
    auto r = run_lab({"smi", (dir / "h100_load_dmon.txt").string(), "--columns", "name"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("--columns") && Contains("dmon") && Contains("fix:"));
    lab_test::TempDir d;
    std::string dmon = lab_test::read_file(dir / "h100_load_dmon.txt");
    dmon.replace(dmon.find("    631 "), 8, "    abc ");
    lab_test::write_file(d / "bad.txt", dmon);
    r = run_lab({"smi", (d / "bad.txt").string(), "--json"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("bad.txt:3") && Contains("pwr") && Contains("fix:"));
}

// A review: --columns with a misspelt field read its column past without a word, and the reading
// was shown as not in the capture.
TEST_CASE("lab smi refuses a --columns name near one it reads, and says which names it reads past", "[smi]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "noheader.csv", "2026/07/14 08:12:53.353, NVIDIA H100 80GB HBM3, P0, 100 %, 19818 MiB\n");
    const std::string file = (d / "noheader.csv").string();
    auto r = run_lab({"smi", file, "--columns", "timestamp,name,pstate,utilisation.gpu,memory.used"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("--columns 'utilisation.gpu' is not a field lab reads (did you mean 'utilization.gpu'?)") &&
                          Contains("fix: correct the name; lab reads name, driver_version, pstate"));
    r = run_lab({"smi", file, "--columns", "timestamp,name,pstate,utilization.gpu,memory.used [MiB]", "--json"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("note: --columns 'timestamp' is no field lab reads: read past (lab reads name,"));
    CHECK(nlohmann::json::parse(r.out)["gpus"][0]["utilization_gpu_pct"] == 100);
    r = run_lab({"smi", file, "--columns", "timestamp,name,,utilization.gpu,memory.used"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--columns has an empty field name"));
}
