// nvidia-smi captures read back (framework/src/smi_capture.hpp), on real captures: every format
// of both GPUs, the same GPU's figures agreeing across formats, absent fields absent (not 0), and
// each broken variant (derived here, in memory) refused with the line where it broke.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "errors.hpp"
#include "smi_capture.hpp"
#include "smi_captures.hpp"
#include "test_support.hpp"

using namespace lab;
using Catch::Matchers::Contains;

namespace {

std::filesystem::path capture(const std::string& name) { return lab_test::source_root() / "tests/fixtures/nvidia-smi" / name; }
smi::Capture read(const std::string& name, const std::vector<std::string>& columns = {}) {
    return smi::parse(lab_test::read_file(capture(name)), capture(name), columns);
}
std::string refusal(const std::string& text, const std::vector<std::string>& columns = {}) {
    try {
        smi::parse(text, "cut.txt", columns);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("every format of the H100 under load says the same about the same GPU", "[smi]") {
    const auto table = read("h100_load_table.txt"), q = read("h100_load_q.txt"), csv = read("h100_load_query_gpu.csv");
    CHECK(table.format == smi::Format::table);
    CHECK(q.format == smi::Format::query);
    CHECK(csv.format == smi::Format::csv);
    for (const auto* c : {&table, &q, &csv}) {
        INFO(smi::to_string(c->format));
        REQUIRE(c->gpus.size() == 1);
        const smi::Gpu& g = c->gpus[0];
        CHECK(*g.name == "NVIDIA H100 80GB HBM3");
        CHECK(*g.driver_version == "590.48.01");
        CHECK(*g.pstate == "P0");
        CHECK(*g.temperature_c == 59);
        CHECK(*g.memory_used_mib == 19818);
        CHECK(*g.memory_total_mib == 81559);
        CHECK(*g.utilization_gpu_pct == 100);
        CHECK(*g.power_limit_w == 700);
        CHECK(*g.power_draw_w == Approx(630).margin(3));  // each format sampled a moment apart
    }
    // What each format holds and the others do not: absent, never 0.
    CHECK(*table.gpus[0].cuda_version == "13.1");
    CHECK_FALSE(csv.gpus[0].cuda_version);
    CHECK_FALSE(table.gpus[0].sm_clock_mhz);
    CHECK_FALSE(table.gpus[0].utilization_memory_pct);
    CHECK_FALSE(table.gpus[0].power_draw_instant_w);
    CHECK(*q.gpus[0].sm_clock_mhz == 1980);
    CHECK(*q.gpus[0].memory_clock_mhz == 2619);
    CHECK(*q.gpus[0].utilization_memory_pct == 11);
    CHECK(*q.gpus[0].power_draw_average_w == 629.45);
    CHECK(*q.gpus[0].power_draw_instant_w == 588.39);
    CHECK(*q.gpus[0].power_draw_w == 629.45);  // "power draw" is the average
    CHECK(*csv.gpus[0].power_draw_instant_w == 625.68);
    CHECK(*csv.gpus[0].sm_clock_mhz == 1980);
    // The driver's reservation: -q's Reserved and the CSV's memory.reserved; the table has none.
    CHECK(q.gpus[0].memory_reserved_mib == 479.0);
    CHECK(csv.gpus[0].memory_reserved_mib == 479.0);
    CHECK_FALSE(table.gpus[0].memory_reserved_mib);
    // Processes: the table and -q list the same three; a CSV of GPU fields lists none.
    for (const auto* c : {&table, &q}) {
        REQUIRE(c->gpus[0].processes.size() == 3);
        CHECK(*c->gpus[0].processes[2].pid == 11345);
        CHECK(c->gpus[0].processes[2].name == "./gpu_burn");
        CHECK(*c->gpus[0].processes[2].used_mib == 15690);
    }
    CHECK_FALSE(csv.gpus[0].processes_listed);
}

TEST_CASE("the L40S captures, idle and loaded, and dmon's columns by their own names", "[smi]") {
    const auto idle = read("l40s_idle_table.txt"), loaded = read("l40s_load_q.txt");
    CHECK(*idle.gpus[0].name == "NVIDIA L40S");
    CHECK(*idle.gpus[0].cuda_version == "13.2");
    CHECK(idle.gpus[0].processes_listed);
    CHECK(idle.gpus[0].processes.empty());  // "No running processes found"
    CHECK(*loaded.gpus[0].utilization_gpu_pct == 9);
    REQUIRE(loaded.gpus[0].processes.size() == 2);
    CHECK(loaded.gpus[0].processes[0].name == "ffmpeg");

    for (const char* f : {"h100_idle_dmon.txt", "h100_load_dmon.txt", "l40s_idle_dmon.txt", "l40s_load_dmon.txt"}) {
        INFO(f);
        const auto d = read(f);
        CHECK(d.format == smi::Format::dmon);
        CHECK(d.gpus.empty());
        REQUIRE(d.samples.size() == 5);
        REQUIRE(d.samples[0].columns.size() == 12);
        CHECK(d.samples[0].columns[1].first == "pwr");
        CHECK(d.samples[0].columns[4].first == "sm");
        CHECK(d.units.at(1) == "W");
        CHECK(d.columns == std::vector<std::string>{"gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "jpg", "ofa", "mclk", "pclk"});
    }
    const auto l40s = read("l40s_idle_dmon.txt");
    CHECK_FALSE(l40s.samples[0].columns[3].second);  // mtemp "-": absent on an L40S
    CHECK(*read("h100_load_dmon.txt").samples[0].columns[4].second == 100);
    // Every capture parses, and its explanation says what GPU-Util is not.
    for (const char* f : {"h100_idle_table.txt", "h100_idle_q.txt", "h100_idle_query_gpu.csv", "l40s_idle_q.txt",
                          "l40s_idle_query_gpu.csv", "l40s_load_table.txt", "l40s_load_query_gpu.csv"}) {
        INFO(f);
        const auto c = read(f);
        REQUIRE(c.gpus.size() == 1);
        CHECK(c.gpus[0].utilization_gpu_pct);
    }
    bool says = false;
    for (const auto& line : smi::explain(read("h100_load_table.txt"))) says = says || line.find("how many SMs") != std::string::npos;
    CHECK(says);
}

// A fidelity review: lab pooled a two-GPU dmon's lines, a loaded H100 and an idle one read as
// "10 samples, sm 50%, pwr 351 W", true of neither.
TEST_CASE("dmon with two GPUs is read GPU by GPU, not pooled", "[smi]") {
    const auto c = smi::parse(lab_test::two_gpu_dmon(), "two.txt");
    CHECK(c.samples.size() == 10);  // every line kept, in the file's order
    const auto gpus = smi::dmon_gpus(c);
    REQUIRE(gpus.size() == 2);
    auto mean = [](const smi::DmonGpu& g, const std::string& column) {
        for (const auto& [k, v] : g.means)
            if (k == column) return v;
        FAIL("no column " << column);
        return std::optional<double>();
    };
    CHECK(gpus[0].index == 0.0);
    CHECK(gpus[0].samples == 5);
    CHECK(mean(gpus[0], "sm") == 100.0);
    CHECK_THAT(*mean(gpus[0], "pwr"), Catch::Matchers::WithinAbs(633.6, 1e-9));  // (631 + 634 + 633 + 634 + 636) / 5
    CHECK(gpus[1].index == 1.0);
    CHECK(gpus[1].samples == 5);
    CHECK(mean(gpus[1], "sm") == 0.0);
    CHECK(mean(gpus[1], "pwr") == 69.0);
    CHECK(gpus[0].means.front().first == "pwr");  // the header's order, the index left out
    std::string said;
    for (const auto& line : smi::explain(c)) said += line + "\n";
    CHECK_THAT(said, Contains("GPU 0: 5 samples") && Contains("GPU 0: sm 100% on average") && Contains("GPU 0: pwr 634 W on average") &&
                         Contains("GPU 1: 5 samples") && Contains("GPU 1: sm 0% on average") && Contains("GPU 1: pwr 69 W on average"));
    CHECK_THAT(said, !Contains("10 samples") && !Contains("sm 50%"));
    // One GPU: one of it, with all its lines; an absent reading stays absent in the mean.
    const auto one = smi::dmon_gpus(read("l40s_load_dmon.txt"));
    REQUIRE(one.size() == 1);
    CHECK(one[0].samples == 5);
    CHECK_FALSE(mean(one[0], "mtemp"));
    CHECK(mean(one[0], "enc") == 63.0);  // (67 + 59 + 63 + 59 + 67) / 5
    CHECK(smi::dmon_gpus(read("h100_load_q.txt")).empty());
}

// A fidelity review: the L40S "load" capture is NVENC at 59-67% while GPU-Util reads 9%, and
// lab smi never mentioned the encoder.
TEST_CASE("the video engines' utilisation is read, and a low GPU-Util beside a busy encoder is said to be theirs", "[smi]") {
    const auto q = read("l40s_load_q.txt"), csv = read("l40s_load_query_gpu.csv");
    CHECK(q.gpus[0].utilization_encoder_pct == 59.0);
    CHECK(q.gpus[0].utilization_decoder_pct == 0.0);
    CHECK(csv.gpus[0].utilization_encoder_pct == 60.0);
    CHECK(csv.gpus[0].utilization_decoder_pct == 0.0);
    CHECK(read("h100_load_query_gpu.csv").gpus[0].utilization_encoder_pct == 0.0);
    CHECK_FALSE(read("l40s_load_table.txt").gpus[0].utilization_encoder_pct);  // the table does not show it
    auto engine_lines = [](const smi::Capture& c) {
        std::vector<std::string> said;
        for (const auto& line : smi::explain(c))
            if (line.find("video engines") != std::string::npos) said.push_back(line);
        return said;
    };
    for (const char* f : {"l40s_load_q.txt", "l40s_load_query_gpu.csv", "l40s_load_dmon.txt"}) {
        INFO(f);
        const auto said = engine_lines(read(f));
        REQUIRE(said.size() == 1);  // one line
        CHECK_THAT(said[0], Contains("not its SMs, are what is busy"));
    }
    CHECK_THAT(engine_lines(read("l40s_load_q.txt"))[0], Contains("GPU-Util 9% but encoder 59%"));
    CHECK_THAT(engine_lines(read("l40s_load_dmon.txt"))[0], Contains("sm 9% but enc 63%"));
    // Engines idle: nothing said of them (the H100 under load, every idle capture).
    for (const char* f : {"h100_load_q.txt", "h100_load_query_gpu.csv", "h100_load_dmon.txt", "l40s_idle_q.txt", "l40s_idle_query_gpu.csv"}) {
        INFO(f);
        CHECK(engine_lines(read(f)).empty());
    }
    // An encoder busy beside kernels that are too: its share said, not that the SMs are idle.
    std::string both = lab_test::read_file(capture("l40s_load_q.txt"));
    const auto gpu_util = both.find("        GPU                                            : 9 %");
    REQUIRE(gpu_util != std::string::npos);
    both.replace(both.find("9 %", gpu_util), 3, "80 %");
    const auto said = engine_lines(smi::parse(both, "both.txt"));
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0], Contains("encoder 59%, decoder 0%") && !Contains("not its SMs"));
}

TEST_CASE("a capture cut short, a headerless CSV and a foreign file are refused where they break", "[smi]") {
    const std::string table = lab_test::read_file(capture("h100_load_table.txt"));
    const auto cut_at = [&](const std::string& marker) { return table.substr(0, table.find(marker)); };
    CHECK_THAT(refusal(cut_at("| N/A   59C")), Contains("cut inside a GPU's rows"));
    CHECK_THAT(refusal(cut_at("| N/A   59C")), Contains("cut.txt:9"));
    // Cut after the GPUs' box, before the Processes box: read as "processes: null", without a
    // word, where nvidia-smi always prints the box (a student review).
    const std::string before_processes = cut_at("+-----------------------------------------------------------------------------------------+\n| Processes:");
    REQUIRE(before_processes.size() < table.size());
    CHECK_THAT(refusal(before_processes), Contains("before the Processes box") && Contains("cut short"));
    CHECK_THAT(refusal(cut_at("|                                         |                        |             Disabled")),
               Contains("cut after a GPU's rows"));
    CHECK_THAT(refusal("hello world, 42\n"), Contains("without a header"));
    CHECK_THAT(refusal("name, pstate\n"), Contains("no GPU line"));
    CHECK_THAT(refusal("just some text\n"), Contains("not an nvidia-smi capture"));
    // A GPU's readings row edited down to a bare '|': refused with its line, not a crash.
    std::string edited = table;
    const std::size_t row = edited.find("| N/A   59C");
    edited.replace(row, edited.find('\n', row) - row, "|");
    CHECK_THAT(refusal(edited), Contains("cut.txt:9"));
    const std::string dmon = lab_test::read_file(capture("h100_load_dmon.txt"));
    CHECK_THAT(refusal(dmon.substr(0, dmon.size() - 20)), Contains("cut short"));

    // Headerless: its columns named on the command line, as given to --query-gpu.
    const std::string csv = "NVIDIA H100 80GB HBM3, P0, 100 %, 19818 MiB\n";
    CHECK_THAT(refusal(csv), Contains("--columns"));
    const auto c = smi::parse(csv, "h.csv", {"name", "pstate", "utilization.gpu", "memory.used"});
    CHECK(*c.gpus[0].utilization_gpu_pct == 100);
    CHECK(*c.gpus[0].memory_used_mib == 19818);
    CHECK_FALSE(c.gpus[0].memory_total_mib);
    CHECK_THAT(refusal(csv + "NVIDIA H100, P0\n", {"name", "pstate", "utilization.gpu", "memory.used"}), Contains("cut short"));
    // A headerless line of plain words is values, named by --columns, not a header of its own (a
    // review: `P0, Enabled` with --columns pstate,persistence_mode was refused as a header).
    CHECK(*smi::parse("P0, Enabled\n", "w.csv", {"pstate", "persistence_mode"}).gpus[0].pstate == "P0");
    // A line with more values than the header's columns is no line cut short (a student review).
    const std::string extra = refusal("name, pstate\nNVIDIA H100, P0, 7\n");
    CHECK_THAT(extra, Contains("cut.txt:2: 3 values where the header names 2 columns (more values than columns") && !Contains("cut short") &&
                          Contains("fix: capture it again, whole"));
    // The count is --columns', not a header's (there is none).
    CHECK_THAT(refusal(csv, {"name", "pstate"}), Contains("4 values where --columns names 2 columns") && !Contains("header"));

    // A CSV with its own header: --columns naming the same fields is no conflict; naming others was
    // read past without a word (the student believed their list was used), and is refused.
    const std::string headed = "name, pstate, utilization.gpu [%], memory.used [MiB]\n" + csv;
    CHECK(*smi::parse(headed, "h.csv", {"name", "pstate", "utilization.gpu", "memory.used"}).gpus[0].memory_used_mib == 19818);
    const std::string why = refusal(headed, {"name", "pstate", "memory.used", "utilization.gpu"});
    CHECK_THAT(why, Contains("cut.txt:1") && Contains("its own columns") && Contains("utilization.gpu,memory.used") &&
                        Contains("leave --columns out"));
}

// A fidelity review: `head -c 4180` of the H100's CSV ends its header just after a comma, and was
// told to name its columns with --columns (as if headerless); a header cut inside a name was
// already "a header and no GPU line".
TEST_CASE("a CSV whose header ends in a comma is cut short in its header, not headerless", "[smi]") {
    const std::string csv = lab_test::read_file(capture("h100_idle_query_gpu.csv"));
    const std::string header_cut = csv.substr(0, csv.find(',', 4100) + 1);
    REQUIRE(header_cut.find('\n') == std::string::npos);
    for (const std::string& cut : {header_cut, header_cut + " ", header_cut + "\n"}) {
        const std::string why = refusal(cut);
        CHECK_THAT(why, Contains("cut.txt:1") && Contains("ends in a comma") && Contains("cut short") && !Contains("--columns"));
        // Columns named on the command line do not make a cut header whole.
        CHECK_THAT(refusal(cut, {"name"}), Contains("cut short"));
    }
}

// `nvidia-smi dmon -o DT` stamps each line with a date and a time before the GPU's columns: a
// student who captured that way was told "not an nvidia-smi capture".
TEST_CASE("dmon with date and time columns (-o DT) reads as dmon, the stamps left out of the readings", "[smi]") {
    std::istringstream in(lab_test::read_file(lab_test::source_root() / "tests/fixtures/nvidia-smi/h100_load_dmon.txt"));
    std::string stamped;
    int n = 0;
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("# gpu", 0) == 0) stamped += "#Date       Time        " + l.substr(2) + "\n";
        else if (l.rfind("# Idx", 0) == 0) stamped += "#YYYYMMDD   HH:MM:SS    " + l.substr(2) + "\n";
        else if (!l.empty()) stamped += fmt::format(" 20261203   06:4{}:00    {}\n", n++, l);
    }
    const auto c = smi::parse(stamped, "dt.txt");
    REQUIRE(c.format == smi::Format::dmon);
    CHECK(c.columns.front() == "gpu");
    CHECK(c.units.front() == "Idx");
    REQUIRE(c.samples.size() == 5);
    CHECK(c.samples[0].columns.front().first == "gpu");
    const auto gpus = smi::dmon_gpus(c);
    REQUIRE(gpus.size() == 1);
    CHECK(gpus[0].samples == 5);
    CHECK_THAT(*gpus[0].means.front().second, Catch::Matchers::WithinAbs(633.6, 1e-9));  // pwr, as without stamps
}

// A fuzzing review: garbage where nvidia-smi writes a number was shown as "-" (as if the driver
// had said N/A), and numbers no GPU reports were shown as read: a total of 0 MiB ("inf%"), 250%
// GPU-Util, -5 MiB used, 1e23 MiB used of 80 GB. nvidia-smi's own markers stay absent.
TEST_CASE("garbage and out-of-range readings are refused with file, line and field; nvidia-smi's markers stay absent", "[smi]") {
    const auto edited = [&](const std::string& name, const std::string& from, const std::string& to) {
        std::string t = lab_test::read_file(capture(name));
        const std::size_t p = t.find(from);
        REQUIRE(p != std::string::npos);
        return t.replace(p, from.size(), to);
    };
    // The table: the H100 under load reads "19818MiB /  81559MiB" and "100%".
    CHECK_THAT(refusal(edited("h100_load_table.txt", "19818MiB", "abcMiB")), Contains("cut.txt:10") && Contains("memory used") && Contains("'abcMiB'"));
    CHECK_THAT(refusal(edited("h100_load_table.txt", "19818MiB", "-5MiB")), Contains("cut.txt:10") && Contains("cannot be negative"));
    CHECK_THAT(refusal(edited("h100_load_table.txt", "81559MiB", "0MiB")), Contains("memory total is 0"));
    CHECK_THAT(refusal(edited("h100_load_table.txt", "19818MiB", "99999999999999999999999MiB")), Contains("more than the total"));
    // -q
    CHECK_THAT(refusal(edited("h100_load_q.txt", ": 19818 MiB", ": -19818 MiB")), Contains("FB Memory Usage/Used") && Contains("negative"));
    CHECK_THAT(refusal(edited("h100_load_q.txt", ": 19818 MiB", ": nan MiB")), Contains("FB Memory Usage/Used") && Contains("'nan MiB'"));
    CHECK_THAT(refusal(edited("h100_load_q.txt", ": 19818 MiB", ": 1e400 MiB")), Contains("FB Memory Usage/Used") && Contains("beyond the range"));
    CHECK_THAT(refusal(edited("h100_load_q.txt", ": 81559 MiB", ": 0 MiB")), Contains("memory total is 0"));
    // CSV: a percentage past 100, a total of 0.
    const std::string csv = lab_test::read_file(capture("l40s_load_query_gpu.csv"));
    CHECK_THAT(refusal(edited("l40s_load_query_gpu.csv", "46068 MiB", "0 MiB")), Contains("cut.txt:2") && Contains("memory total is 0"));
    {
        // The L40S under load: utilization.gpu is the first percentage after memory.free's 44225 MiB.
        std::string t = csv;
        const std::size_t p = t.find(", 9 %,", t.find("44225 MiB"));
        REQUIRE(p != std::string::npos);
        t.replace(p, 6, ", 250 %,");
        CHECK_THAT(refusal(t), Contains("utilization.gpu") && Contains("between 0 and 100"));
    }
    // dmon: a word in the power column.
    CHECK_THAT(refusal(edited("h100_load_dmon.txt", "    631 ", "    abc ")), Contains("cut.txt:3") && Contains("pwr") && Contains("'abc'"));

    // nvidia-smi's own absent markers are still absent, in every form that has them.
    for (const char* marker : {"N/A", "[N/A]", "-"}) {
        INFO(marker);
        CHECK_FALSE(smi::parse(edited("h100_load_table.txt", "19818MiB", marker), "t.txt").gpus[0].memory_used_mib);
    }
    for (const char* marker : {"N/A", "[N/A]", "Not Supported", "[Not Supported]", "[Unknown Error]"}) {
        INFO(marker);
        CHECK_FALSE(smi::parse(edited("h100_load_q.txt", ": 19818 MiB", std::string(": ") + marker), "q.txt").gpus[0].memory_used_mib);
    }
}

// A bad-input review: the H100's table cut in its second process row (`head -c`) was read as
// listing 1 process of the 3; a table cut among its GPU rows was refused already.
TEST_CASE("a table cut inside its process list is refused with its line, not read as fewer processes", "[smi]") {
    const std::string table = lab_test::read_file(capture("h100_load_table.txt"));
    const std::size_t second_row = table.find("11328");
    REQUIRE(second_row != std::string::npos);
    const std::string mid_row = table.substr(0, second_row + 30), after_row = table.substr(0, table.find('\n', second_row) + 1);
    for (const std::string& cut : {mid_row, after_row}) {
        const std::string why = refusal(cut);
        CHECK_THAT(why, Contains("cut.txt:20") && Contains("cut inside its process list") && Contains("capture the whole output"));
    }
    // Cut between the Processes box's header and its '|===' line: no rows at all, not "none".
    CHECK_THAT(refusal(table.substr(0, table.find("|  GPU   GI"))), Contains("cut.txt:15") && Contains("process list"));
    // Whole, and with a blank line after the border: all three.
    CHECK(smi::parse(table + "\n", "t.txt").gpus[0].processes.size() == 3);
}

// nvidia-smi -q indents 4 spaces a level; with each 4 spaces turned into a tab (some copy-paste
// paths do) every line read as level 0, and the H100's one GPU became 10 GPUs of '-'.
TEST_CASE("-q output indented with tabs reads as the same capture; more GPU sections than 'Attached GPUs' are refused", "[smi]") {
    const std::string q = lab_test::read_file(capture("h100_load_q.txt"));
    std::string tabbed = q;
    for (std::size_t p = 0; (p = tabbed.find("    ", p)) != std::string::npos;) tabbed.replace(p, 4, "\t");
    REQUIRE(tabbed.find('\t') != std::string::npos);
    const auto spaces = smi::parse(q, "q.txt"), tabs = smi::parse(tabbed, "tabs.txt");
    REQUIRE(tabs.gpus.size() == 1);
    const smi::Gpu &a = spaces.gpus[0], &b = tabs.gpus[0];
    CHECK(b.name == a.name);
    CHECK(b.driver_version == a.driver_version);
    CHECK(b.pstate == a.pstate);
    CHECK(b.memory_used_mib == a.memory_used_mib);
    CHECK(b.memory_total_mib == a.memory_total_mib);
    CHECK(b.utilization_gpu_pct == a.utilization_gpu_pct);
    CHECK(b.power_draw_w == a.power_draw_w);
    CHECK(b.power_limit_w == a.power_limit_w);
    CHECK(b.sm_clock_mhz == a.sm_clock_mhz);
    CHECK(b.processes.size() == a.processes.size());

    // The GPU's section twice under 'Attached GPUs : 1': a GPU nvidia-smi did not count.
    const std::string section = q.substr(q.find("\nGPU ") + 1);
    CHECK_THAT(refusal(q + section), Contains("cut.txt:7") && Contains("2 'GPU <bus id>' sections where 'Attached GPUs' counts 1"));
    const auto attached_as = [](std::string text, const std::string& n) {
        const std::size_t count = text.find(": 1", text.find("Attached GPUs"));
        return text.replace(count, 3, ": " + n);
    };
    CHECK(smi::parse(attached_as(q + section, "2"), "two.txt").gpus.size() == 2);
    // Fewer sections than attached GPUs is `-q -i 0`: one GPU of several.
    CHECK(smi::parse(attached_as(q, "8"), "i0.txt").gpus.size() == 1);
    CHECK_THAT(refusal(attached_as(q, "x")), Contains("cut.txt:7") && Contains("not a count of GPUs"));
}

using lab_test::utf16;

// A bad-input review: dmon and CSV captures starting with a UTF-8 byte-order mark were "not an
// nvidia-smi capture" and "a CSV without a header line" (the table and -q were read), and UTF-16
// captures were refused as foreign files.
TEST_CASE("a capture with a byte-order mark, UTF-8 or UTF-16, reads as the same capture", "[smi]") {
    for (const char* name : {"h100_load_table.txt", "h100_load_q.txt", "h100_load_query_gpu.csv", "h100_load_dmon.txt"}) {
        INFO(name);
        const std::string text = lab_test::read_file(capture(name));
        const auto plain = smi::parse(text, name);
        for (const std::string& marked : {"\xEF\xBB\xBF" + text, utf16(text, true), utf16(text, false)}) {
            const auto c = smi::parse(marked, name);
            CHECK(c.format == plain.format);
            CHECK(c.gpus.size() == plain.gpus.size());
            CHECK(c.samples.size() == plain.samples.size());
            CHECK(c.columns == plain.columns);
            if (!plain.gpus.empty()) CHECK(c.gpus[0].memory_used_mib == plain.gpus[0].memory_used_mib);
        }
    }
    // UTF-16 cut to an odd number of bytes: refused saying what it is and how to convert it.
    const std::string cut = utf16(lab_test::read_file(capture("h100_load_dmon.txt")), true);
    CHECK_THAT(refusal(cut.substr(0, cut.size() - 1)), Contains("cut.txt") && Contains("UTF-16") && Contains("iconv -f UTF-16 -t UTF-8"));
}
