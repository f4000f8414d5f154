// The lessons' derivations on recorded runs (tests/fixtures/runs/cpu): every metric produced is
// declared and every declared metric is produced; values follow from the raw measurements by the
// formulas the lessons state; per-student variants follow the seed.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <sstream>

#include "lab/transformer.hpp"
#include "lab/workloads.hpp"
#include "lesson_plan.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"
#include "test_support.hpp"

using namespace lab;
using Catch::Matchers::WithinRel;

namespace {

LoadedLesson lesson(const std::string& dir) {
    return load_lesson(lab_test::build_root() / "labs" / dir / ("lab_" + dir + ".so"));
}

RawRun fixture_run(const std::string& name) {
    return record::raw_run_from_record(record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu" / name));
}

bool runs_on(const MetricDecl& m, DeviceKind kind) {
    return std::find(m.devices.begin(), m.devices.end(), to_string(kind)) != m.devices.end();
}

void check_declared_matches_produced(const LessonInfo& info, const Derivation& d, const RawRun& run) {
    std::set<std::string> declared, produced;
    for (const auto& m : info.metrics)
        if (!run.options.quick || m.quick) declared.insert(m.name);
    for (const auto& m : d.metrics) produced.insert(m.name);
    for (const auto& p : produced) {
        INFO("produced but not declared: " << p);
        CHECK(declared.count(p) == 1);
    }
    for (const auto& m : info.metrics) {
        INFO("declared but not produced: " << m.name);
        // An AI is not produced when it is infinite (a kernel that moves no bytes); a metric of
        // another device kind is not produced on this one.
        if (m.name.size() > 3 && m.name.compare(m.name.size() - 3, 3, ".ai") == 0) continue;
        if (!runs_on(m, run.device_kind)) continue;
        CHECK(produced.count(m.name) == 1);
    }
}

}  // namespace

TEST_CASE("02.01 derives every metric it declares from a recorded run", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derivation(run);
    check_declared_matches_produced(l.info, d, run);
}

TEST_CASE("02.01's mysteries are the seed's permutation of the three regimes", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derivation(run);
    // The permutations, in the order the lesson documents; kinds 0 compute, 1 memory, 2 overhead.
    const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const char* expected[3] = {"compute_bound", "memory_bound", "overhead_bound"};
    const char* names[3] = {"mystery_a", "mystery_b", "mystery_c"};
    for (int m = 0; m < 3; ++m) {
        int kind = perms[run.options.seed % 6][m];
        INFO(names[m]);
        CHECK(d.find(std::string(names[m]) + ".measured_regime")->text == expected[kind]);
        // The compute kernel is the one that moves only its result (a few bytes per thread).
        CHECK((run.at(names[m]).workload.bytes < 1024) == (kind == 0));
    }
}

TEST_CASE("02.01's per-element ratio is (t(1)/1) / (t(n)/n)", "[lessons]") {
    auto l = lesson("02_01");
    RawRun run = fixture_run("02.01-quick.json");
    Derivation d = l.lesson->derivation(run);
    const auto& s = run.at("per_element.small");
    const auto& g = run.at("per_element.large");
    double n = g.workload.params.at(0).value;
    CHECK_THAT(d.find("per_element_ratio")->number, WithinRel((s.time.median / 1) / (g.time.median / n), 1e-12));
    CHECK(d.find("chain.measured_regime")->text == "latency_bound");
}

TEST_CASE("02.05 derives the ridge and the attainable FLOP/s from the recorded ceilings", "[lessons]") {
    auto l = lesson("02_05");
    RawRun run = fixture_run("02.05-quick-reveal.json");
    Derivation d = l.lesson->derivation(run);
    check_declared_matches_produced(l.info, d, run);
    double peak = run.ceilings.peak_flops("fp32.simt"), bw = run.ceilings.peak_bandwidth();
    CHECK_THAT(d.find("ridge_point")->number, WithinRel(peak / bw, 1e-12));
    double ai = d.find("question_ai")->number;
    CHECK(ai >= 0.3);
    CHECK(ai <= 32);
    CHECK_THAT(d.find("attainable_flops_per_s")->number, WithinRel(std::min(peak, ai * bw), 1e-12));
    CHECK(d.find("triad.predicted_regime")->text == "memory_bound");
    CHECK(d.find("sgemm.predicted_regime")->text == "compute_bound");
    CHECK(d.find("fma_few.predicted_regime")->text == "memory_bound");
}

TEST_CASE("re-deriving a revealed record reproduces the values it carries", "[lessons]") {
    auto l = lesson("02_05");
    auto rec = record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.05-quick-reveal.json");
    Derivation d = l.lesson->derivation(record::raw_run_from_record(rec));
    int compared = 0;
    for (const auto& m : d.metrics) {
        INFO(m.name);
        REQUIRE(rec["metrics"].contains(m.name));
        const auto& stored = rec["metrics"][m.name]["value"];
        if (m.kind == MetricKind::category) CHECK(stored.get<std::string>() == m.text);
        else if (stored.is_number()) CHECK(stored.get<double>() == m.number);
        ++compared;
    }
    CHECK(compared > 20);
}

// What a student is asked and what `lab run` withholds and counts as '?' are one set: a lesson's
// graded metric declarations (for each device kind) are exactly the metrics its grading spec's
// questions ask on that device. (Withheld `check.*` helpers are not graded: no question asks them.)
TEST_CASE("every lesson with a grading spec grades exactly the metrics its questions ask", "[lessons]") {
    int specs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(lab_test::source_root() / "configs/grading")) {
        if (entry.path().extension() != ".yaml") continue;
        const YAML::Node spec = YAML::LoadFile(entry.path().string());
        const std::string id = spec["lesson"].as<std::string>();
        INFO(entry.path().string() << " (lesson " << id << ")");
        const std::string dir = id.substr(0, 2) + "_" + id.substr(3);  // "02.05" -> "02_05"
        auto l = lesson(dir);
        ++specs;
        for (DeviceKind kind : {DeviceKind::cpu, DeviceKind::cuda}) {
            INFO("device " << to_string(kind));
            std::set<std::string> asked, graded;
            for (const auto& q : spec["questions"]) {
                if (!q["expected"] || !q["expected"]["metric"]) continue;
                bool applies = !q["applies_to"];
                if (q["applies_to"] && q["applies_to"].IsScalar()) applies = q["applies_to"].as<std::string>() == to_string(kind);
                else if (q["applies_to"])
                    for (const auto& k : q["applies_to"]) applies = applies || k.as<std::string>() == to_string(kind);
                const std::string metric = q["expected"]["metric"].as<std::string>();
                const auto decl = std::find_if(l.info.metrics.begin(), l.info.metrics.end(),
                                               [&](const MetricDecl& m) { return m.name == metric; });
                REQUIRE(decl != l.info.metrics.end());
                if (applies && runs_on(*decl, kind)) asked.insert(metric);
            }
            for (const auto& m : l.info.metrics)
                if (m.graded && runs_on(m, kind)) graded.insert(m.name);
            CHECK(graded == asked);
            // The run withholds the graded metrics, and the check.* helpers besides; nothing else.
            std::set<std::string> withheld = record::withheld_metrics(l.info, false, kind), expected = graded;
            for (const auto& m : l.info.metrics)
                if (record::is_check_helper(m.name) && runs_on(m, kind)) expected.insert(m.name);
            CHECK(withheld == expected);
            CHECK(record::withheld_metrics(l.info, true, kind).empty());
        }
        // A check.* helper is never graded: it is withheld without being asked.
        for (const auto& m : l.info.metrics) {
            INFO(m.name);
            if (record::is_check_helper(m.name)) CHECK_FALSE(m.graded);
        }
    }
    CHECK(specs >= 2);
}

TEST_CASE("fractions of a ceiling are shown in percent, other ratios as plain numbers", "[lessons]") {
    auto value = [](const std::string& name, double v, const std::string& unit) {
        return record::format_value(MetricValue{name, MetricKind::number, unit, v, {}});
    };
    CHECK(value("triad.roof_fraction", 0.292, "ratio") == "29.2%");
    CHECK(value("triad.roof_fraction", 1.0, "ratio") == "100%");
    CHECK(value("chain.roof_fraction", 0.00808, "ratio") == "0.808%");
    CHECK(value("check.memory_roof_fraction", 0.85, "ratio") == "85%");
    CHECK(value("mystery_c.doubling_ratio", 1.05, "ratio") == "1.05");
    CHECK(value("per_element_ratio", 1234.4, "ratio") == "1234");
    CHECK(value("ridge_point", 11.0, "FLOP/B") == "11 FLOP/B");
    // In teaching lines too, and in every lesson's table of metrics.
    Derivation d;
    d.number("triad.roof_fraction", 0.292, "ratio");
    CHECK(record::render_teaching("Triad achieves {triad.roof_fraction} of its roof.", d, {}) ==
          "Triad achieves 29.2% of its roof.");
    CHECK(record::render_teaching("Triad achieves {triad.roof_fraction} of its roof.", d, {"triad.roof_fraction"}) ==
          "Triad achieves ? of its roof.");
    for (const char* dir : {"02_01", "02_05"})
        for (const auto& m : lesson(dir).info.metrics) {
            INFO(m.name);
            if (m.name.find("fraction") != std::string::npos) CHECK(record::shown_as_percent(m.name, m.unit));
            if (m.name.find("_ratio") != std::string::npos) CHECK_FALSE(record::shown_as_percent(m.name, m.unit));
        }
}

// ---- The plan: what a lesson measures, replayed without a device ----------------------------

namespace {

std::vector<std::filesystem::path> fixture_records() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(lab_test::source_root() / "tests/fixtures/runs"))
        if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

std::string dir_of(const std::string& id) { return id.substr(0, 2) + "_" + id.substr(3); }

}  // namespace

TEST_CASE("every recorded run, old or new, re-derives to the values it carries and replays its lesson's plan", "[lessons]") {
    int records = 0;
    for (const auto& file : fixture_records()) {
        INFO(file.string());
        const auto rec = record::read_record(file);
        const RawRun raw = record::raw_run_from_record(rec);
        auto l = lesson(dir_of(raw.lesson_id));
        const Derivation d = l.lesson->derivation(raw);
        // Every value the record shows is the one derived again (withheld ones it does not show).
        for (const auto& [name, stored] : rec["metrics"].items()) {
            INFO(name);
            const MetricValue* v = d.find(name);
            REQUIRE(v);
            if (v->kind == MetricKind::category) CHECK(stored["value"].get<std::string>() == v->text);
            else if (stored["value"].is_number()) CHECK(stored["value"].get<double>() == v->number);
        }
        CHECK(declared_vs_produced(l.info, d, raw).empty());
        // The lesson as built today requests exactly the recorded workloads, in order.
        const auto problems = replay_plan(*l.lesson, raw);
        std::string all;
        for (const auto& p : problems) all += p + "\n";
        INFO(all);
        CHECK(problems.empty());
        ++records;
    }
    CHECK(records >= 3);
}

TEST_CASE("a record that is not its lesson's plan is told apart, naming the first difference", "[lessons]") {
    auto l = lesson("02_05");
    const RawRun good = fixture_run("02.05-quick-reveal.json");
    REQUIRE(replay_plan(*l.lesson, good).empty());

    RawRun resized = good;  // a smaller triad than the lesson measures on this machine
    for (auto& m : resized.measurements)
        if (m.workload.name == "triad") m.workload.params.at(0).value /= 2;
    auto p = replay_plan(*l.lesson, resized);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("'triad'") != std::string::npos);

    RawRun swapped = good;  // two workloads in another order
    std::swap(swapped.measurements[0], swapped.measurements[1]);
    CHECK_FALSE(replay_plan(*l.lesson, swapped).empty());

    RawRun truncated = good;  // the last workload dropped
    truncated.measurements.pop_back();
    p = replay_plan(*l.lesson, truncated);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("the record ends") != std::string::npos);

    RawRun extra = good;  // a workload the lesson never measures
    extra.measurements.push_back(extra.measurements.back());
    extra.measurements.back().workload.name = "bonus";
    p = replay_plan(*l.lesson, extra);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("'bonus'") != std::string::npos);

    RawRun other_student = good;  // quick flipped: a full run's sizes differ
    other_student.options.quick = !good.options.quick;
    CHECK_FALSE(replay_plan(*l.lesson, other_student).empty());
}

TEST_CASE("skips are part of the plan: 02.05 skips the tensor-core GEMMs on a CPU and says why", "[lessons]") {
    auto l = lesson("02_05");
    RawRun cpu = synthetic_run(*l.lesson, "02.05", DeviceKind::cpu, true);
    REQUIRE(cpu.skipped.size() == 2);
    CHECK(cpu.skipped[0].workload == "tf32gemm");
    CHECK(cpu.skipped[1].workload == "bf16gemm");
    CHECK(cpu.skipped[0].reason.find("tf32") != std::string::npos);
    CHECK_FALSE(cpu.find("tf32gemm"));
    CHECK(replay_plan(*l.lesson, cpu).empty());
    RawRun missing = cpu;  // a record that says it skipped nothing
    missing.skipped.clear();
    CHECK_FALSE(replay_plan(*l.lesson, missing).empty());
    missing.skips_recorded = false;  // a record from before skips were recorded: not held against it
    CHECK(replay_plan(*l.lesson, missing).empty());
    RawRun gpu = synthetic_run(*l.lesson, "02.05", DeviceKind::cuda, false);
    CHECK(gpu.skipped.empty());
    CHECK(gpu.find("bf16gemm"));
}

namespace {

// An out-of-tree lesson in miniature: one placed workload, one metric of its own.
class TinyLesson : public Lesson {
public:
    bool set_own_metric = true;
    bool set_undeclared = false;
    LessonInfo info() const override {
        LessonInfo i{.id = "99.01", .title = "Tiny"};
        i.objectives = {"test"};
        i.experiments = {{"scale", "b = s a"}};
        i.placed = {{.name = "scale", .graded = {"bytes_per_s"}}};
        i.metrics = {{.name = "scale.gb_moved", .unit = "B", .description = "bytes moved"}};
        i.expectations = {{.metric = "scale.predicted_regime", .equals = "memory_bound", .why = "streams"}};
        return i;
    }
    void run(Session& s) override {
        const std::size_t n = s.device().facts().last_level_cache_bytes();
        BufferPtr a = s.device().allocate(n * 4);
        s.measure({.name = "scale", .params = {param("n", n)}, .flops = 1.0 * n, .bytes = 8.0 * n}, [](Stream&) {});
    }
    void derive(const RawRun& run, Derivation& d) const override {
        if (set_own_metric) d.set("scale.gb_moved", run.at("scale").workload.bytes);
        if (set_undeclared) d.set("scale.surprise", 1.0);
    }
};

}  // namespace

TEST_CASE("the plan check finds a declared metric never produced, and derive() cannot set an undeclared one", "[lessons]") {
    TinyLesson lesson;
    CHECK(check_plan(lesson, lesson.declarations()).empty());
    lesson.set_own_metric = false;
    auto problems = check_plan(lesson, lesson.declarations());
    REQUIRE(problems.size() == 4);  // model CPU and GPU, quick and full
    CHECK(problems[0].find("'scale.gb_moved' is declared for") != std::string::npos);
    lesson.set_own_metric = true;
    lesson.set_undeclared = true;
    problems = check_plan(lesson, lesson.declarations());
    REQUIRE_FALSE(problems.empty());
    CHECK(problems[0].find("'scale.surprise', which info() does not declare") != std::string::npos);

    Derivation d;
    d.declared = lesson.declarations().metrics;
    CHECK_THROWS_WITH(d.set("scale.gb_moved", std::string("many")), Catch::Contains("declares it a number"));
    d.set("scale.gb_moved", 3.0);
    CHECK(d.find("scale.gb_moved")->unit == "B");  // the unit comes from the declaration
}

TEST_CASE("a workload skipped with its reason, and counters a device did not read, are not missing metrics", "[lessons]") {
    struct Skipping : TinyLesson {
        LessonInfo info() const override {
            LessonInfo i = TinyLesson::info();
            i.placed.push_back({.name = "tensor", .devices = {"cuda"}, .counted = true});
            return i;
        }
        void run(Session& s) override {
            TinyLesson::run(s);
            if (s.device().facts().compute_units < 1000) s.skip("tensor", "this lesson's tensor kernel needs 1000 SMs");
            else s.measure({.name = "tensor", .flops = 1, .bytes = 1}, [](Stream&) {});
        }
    } lesson;
    CHECK(check_plan(lesson, lesson.declarations()).empty());
    RawRun gpu = synthetic_run(lesson, "99.01", DeviceKind::cuda, false);
    REQUIRE(gpu.skipped.size() == 1);
    CHECK(declared_vs_produced(lesson.declarations(), lesson.derivation(gpu), gpu).empty());
    gpu.skipped.clear();  // the same run claiming it skipped nothing: the metrics are missing
    CHECK_FALSE(declared_vs_produced(lesson.declarations(), lesson.derivation(gpu), gpu).empty());
}

TEST_CASE("placed workloads are declared once: their standard metrics, graded as asked, before the lesson's own", "[lessons]") {
    TinyLesson lesson;
    const LessonInfo i = lesson.declarations();
    std::vector<std::string> names;
    for (const auto& m : i.metrics) names.push_back(m.name);
    CHECK(names == std::vector<std::string>{"scale.time_s", "scale.flops_per_s", "scale.bytes_per_s", "scale.ai",
                                            "scale.roof_fraction", "scale.predicted_regime", "scale.measured_regime",
                                            "scale.gb_moved"});
    for (const auto& m : i.metrics) CHECK(m.graded == (m.name == "scale.bytes_per_s"));
}

TEST_CASE("02.01, 02.05 and 02.07 each fit the lesson budget of 250 non-blank lines", "[lessons]") {
    for (const char* dir : {"02_01", "02_05", "02_07"}) {
        int lines = 0;
        for (const auto& e : std::filesystem::directory_iterator(lab_test::source_root() / "labs" / dir)) {
            std::istringstream text(lab_test::read_file(e.path()));
            for (std::string line; std::getline(text, line);)
                lines += line.find_first_not_of(" \t") != std::string::npos;
        }
        INFO(dir << ": " << lines << " non-blank lines");
        CHECK(lines < 250);
    }
}

// ---- Workload helpers ------------------------------------------------------------------------

TEST_CASE("bytes per element of each dtype, block scales included", "[lessons]") {
    CHECK(bytes_per_element(Dtype::fp64) == 8);
    CHECK(bytes_per_element(Dtype::tf32) == 4);
    CHECK(bytes_per_element(Dtype::bf16) == 2);
    CHECK(bytes_per_element(Dtype::fp8_e5m2) == 1);
    CHECK(bytes_per_element(Dtype::int4) == 0.5);
    CHECK(bytes_per_element(Dtype::mxfp4) == 0.5 + 1.0 / 32);   // 4.25 bits
    CHECK(bytes_per_element(Dtype::nvfp4) == 0.5 + 1.0 / 16);   // 4.5 bits
    CHECK(storage_bytes(Dtype::nvfp4, 17) == 9 + 2);            // 17 nibbles -> 9 bytes, 2 blocks
    CHECK(storage_bytes(Dtype::int4, 3) == 2);
}

TEST_CASE("GEMM and GEMV counts: 2mnk FLOP, each operand moved once", "[lessons]") {
    const Counts g = gemm_counts(64, 32, 16, Dtype::bf16, Dtype::fp32);
    CHECK(g.flops == 2.0 * 64 * 32 * 16);
    CHECK(g.bytes == 2.0 * 64 * 16 + 2.0 * 16 * 32 + 4.0 * 64 * 32);
    CHECK(gemm_counts(8, 8, 8, Dtype::fp32, Dtype::fp32, true).bytes == 4.0 * (64 + 64 + 2 * 64));
    const Counts v = gemv_counts(4096, 4096, Dtype::int8, Dtype::fp16, 4);
    CHECK(v.flops == 2.0 * 4096 * 4096 * 4);
    CHECK(v.bytes == 4096.0 * 4096 + 4 * (2.0 * 4096 + 2.0 * 4096));
    CHECK(v.ai() < 8);  // decode: 2 FLOP per int8 weight byte per token in the batch, a little less with activations
}

TEST_CASE("a sweep's knee and crossover are found from the data", "[lessons]") {
    const auto ai = geometric_sweep(0.25, 64, 2);
    REQUIRE(ai.size() == 9);
    std::vector<double> flops;
    for (double x : ai) flops.push_back(std::min(100.0, 10.0 * x));  // a roofline with its ridge at 10
    auto knee = find_knee(ai, flops, 0.1);
    REQUIRE(knee);
    CHECK(knee->plateau == 100);
    CHECK_THAT(knee->x, WithinRel(10.0, 1e-9));  // the rising part extrapolated meets the plateau at the ridge
    CHECK_FALSE(find_knee(ai, std::vector<double>(ai.size(), 5.0)));  // flat from the start: no knee inside
    std::vector<double> up, down;
    for (double x : ai) up.push_back(x), down.push_back(16 / x);
    auto cross = find_crossover(ai, up, down);
    REQUIRE(cross);
    CHECK_THAT(*cross, WithinRel(4.0, 0.2));
    CHECK_FALSE(find_crossover(ai, up, std::vector<double>(ai.size(), 1000.0)));
}

TEST_CASE("rotation copies put consecutive invocations 4x the last-level cache apart", "[lessons]") {
    CHECK(rotation_copies(1 << 20, 32 << 20) == 128);
    CHECK(rotation_copies(std::size_t{1} << 30, 32 << 20) == 1);
    int calls[3] = {0, 0, 0};
    std::vector<Launch> each;
    for (int i = 0; i < 3; ++i) each.push_back([&calls, i](Stream&) { ++calls[i]; });
    Launch l = rotating(each);
    struct NullStream : Stream {
        void launch(HostKernel) override {}
        void record(Event&) override {}
        void synchronize() override {}
        void* native_handle() override { return nullptr; }
    } st;
    for (int k = 0; k < 7; ++k) l(st);
    CHECK(calls[0] == 3);
    CHECK(calls[1] == 2);
    CHECK(calls[2] == 2);
}

// ---- 02.06 ------------------------------------------------------------------------------------

TEST_CASE("02.06 states each GEMM's exact counts and finds the crossover from its own FLOP/s curve", "[lessons]") {
    auto l = lesson("02_06");
    const RawRun run = fixture_run("02.06-quick-reveal.json");
    const Derivation d = l.lesson->derivation(run);
    std::vector<double> batch, flops;
    for (const auto& m : run.measurements) {
        if (m.workload.name.rfind("gemm_b", 0) != 0) continue;
        const double b = m.workload.params.at(0).value, n = m.workload.params.at(1).value;
        INFO(m.workload.name);
        CHECK(m.workload.flops == 2 * b * n * n);                  // 2 m n k
        CHECK(m.workload.bytes == 4 * (n * n + 2 * b * n));        // fp32: W once, x and y once
        batch.push_back(b);
        flops.push_back(m.workload.flops / m.time.median);
    }
    REQUIRE(batch.size() == 9);  // --quick: 1 .. 256
    CHECK_THAT(d.find("gemm_b1.ai")->number, WithinRel(2 * 2048.0 * 2048 / (4 * (2048.0 * 2048 + 2 * 2048)), 1e-12));
    CHECK(d.find("gemm_b1.predicted_regime")->text == "memory_bound");
    auto knee = find_knee(batch, flops, 0.1);
    const double crossover = d.find("crossover_batch")->number;
    CHECK(crossover == (knee ? knee->x : batch.front()));
    CHECK(crossover >= 1);
    CHECK(crossover <= 256);
    // The prediction: the batch where 2Bd / (4 (d + 2B)) reaches the ridge.
    const double ridge = run.ceilings.peak_flops("fp32.simt") / run.ceilings.peak_bandwidth(), B = d.find("ridge_batch")->number;
    CHECK_THAT(2 * B * 2048 / (4 * (2048 + 2 * B)), WithinRel(ridge, 1e-9));
    // Llama-2-7B fp16 at batch 1 and the student's context: 13,476,831,232 B of weights plus
    // 524,288 B of KV cache per token, over the bandwidth roof.
    const double context = d.find("question_context")->number;
    CHECK(context == 512 * (1 + run.options.seed % 8));
    CHECK_THAT(d.find("decode_bound_7b_s")->number,
               WithinRel((13476831232.0 + context * 524288) / run.ceilings.peak_bandwidth(), 1e-12));
    // Two plots, the crossover marked (a graded value: its mark is tied to the metric).
    REQUIRE(d.plots.size() == 2);
    CHECK(d.plots[1].series[0].x == batch);
    CHECK(d.plots[1].marks[0].metric == "crossover_batch");
}

// ---- 02.07 ------------------------------------------------------------------------------------

namespace {
double param_of(const Workload& w, const std::string& name) {
    for (const auto& p : w.params)
        if (p.name == name) return p.value;
    FAIL("workload " << w.name << " has no parameter " << name);
    return 0;
}
}  // namespace

TEST_CASE("02.07 accounts every allocation of the tiny model: weights and KV exactly, the activation peak within q", "[lessons]") {
    auto l = lesson("02_07");
    const RawRun run = fixture_run("02.07-quick-reveal.json");
    const Derivation d = l.lesson->derivation(run);
    CHECK(declared_vs_produced(l.info, d, run).empty());  // quick: the full-only points' metrics are not declared
    REQUIRE(run.measurements.size() == 3);  // --quick: (1, 128), (4, 128), (1, 512)
    double ratio_max = 0;
    for (const auto& m : run.measurements) {
        INFO(m.workload.name);
        const double B = param_of(m.workload, "batch"), T = param_of(m.workload, "context"), N = B * T;
        // 3,950,848 parameters in fp32; KV: B T tokens x 2 x 4 layers x 2 KV heads x 64 x 4 B.
        CHECK(param_of(m.workload, "weights_B") == 4.0 * 3'950'848);
        CHECK(param_of(m.workload, "kv_B") == N * 4096);
        // Elements live at the worst op: the LM head (x, its norm, logits: N (2h + V)) or the fused
        // attention (x, q, scores, output: N (h + 2 n_q d) + B n_q T^2); the calculator's attention
        // holds q or the output, not both: N (h + n_q d) + B n_q T^2.
        const double peak = 4 * std::max(N * (2 * 256 + 2048), N * (256 + 2 * 256) + B * 4 * T * T);
        const double calc = 4 * std::max(N * (2 * 256 + 2048), N * (256 + 256) + B * 4 * T * T);
        CHECK(param_of(m.workload, "act_peak_B") == peak);
        CHECK(double(transformer::activation_peak_bytes(transformer::tiny_model(), transformer::precision(Dtype::fp32),
                                                        transformer::prefill(std::uint64_t(B), std::uint64_t(T)))) == calc);
        CHECK(param_of(m.workload, "act_held_B") >= peak);  // the pool reuses a block only at its size
        CHECK(param_of(m.workload, "other_B") == 4 * N);     // the token ids
        // The counts are the calculator's prefill of B sequences of T tokens.
        const auto c = transformer::totals(transformer::forward_ops(transformer::tiny_model(), transformer::precision(Dtype::fp32),
                                                                    transformer::prefill(std::uint64_t(B), std::uint64_t(T))));
        CHECK(m.workload.flops == double(c.flops()));
        CHECK(m.workload.bytes == double(c.bytes));
        ratio_max = std::max(ratio_max, peak / calc);
    }
    CHECK(d.find("check.weights_exact")->number == 1);
    CHECK(d.find("check.kv_exact")->number == 1);
    CHECK(d.find("check.activations_within")->number == 1);
    CHECK_THAT(d.find("activations_ratio_max")->number, WithinRel(ratio_max, 1e-12));
    CHECK_THAT(ratio_max, WithinRel(1.1, 1e-12));  // (1, 512): (768 + 2048) / (512 + 2048)
    // The calculator: Llama-2-7B fp16 and Llama-3-8B's KV (8 KV heads).
    CHECK(d.find("weights_7b_bytes")->number == 13'476'831'232.0);
    CHECK(d.find("kv_per_token_7b_bytes")->number == 524'288);
    CHECK(d.find("kv_per_token_8b_bytes")->number == 131'072);
    CHECK(d.find("kv_exceeds_weights_7b_context")->number == 25'706);  // floor(13,476,831,232 / 524,288) + 1
    REQUIRE(d.plots.size() == 1);
    CHECK(d.plots[0].marks[0].x == 25'706);
    // Re-deriving the revealed record reproduces the values it carries.
    const auto rec = record::read_record(lab_test::source_root() / "tests/fixtures/runs/cpu/02.07-quick-reveal.json");
    for (const auto& m : d.metrics) {
        INFO(m.name);
        REQUIRE(rec["metrics"].contains(m.name));
        if (m.kind == MetricKind::category) CHECK(rec["metrics"][m.name]["value"].get<std::string>() == m.text);
        else CHECK(rec["metrics"][m.name]["value"].get<double>() == m.number);
    }
}

TEST_CASE("02.07's questions follow the seed: KV bytes, where the KV cache exceeds the weights, the largest batch", "[lessons]") {
    auto l = lesson("02_07");
    RawRun run = fixture_run("02.07-quick-reveal.json");
    const auto l2 = transformer::llama_2_7b();
    const auto fp16 = transformer::precision(Dtype::fp16);
    std::set<std::string> memories;
    for (std::uint64_t seed : {run.options.seed, std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{47}, std::uint64_t{48},
                               std::uint64_t{95}, std::uint64_t{96}, std::uint64_t{335}, std::uint64_t{12345678901}}) {
        run.options.seed = seed;
        INFO("seed " << seed);
        const Derivation d = l.lesson->derivation(run);
        auto num = [&](const char* name) { return d.find(name)->number; };
        auto text = [&](const char* name) { return d.find(name)->text; };
        // Llama-3-8B's KV cache: B T x 2 x 32 layers x 8 KV heads x 128 x bytes per element.
        const double B = num("question_kv_batch"), T = num("question_kv_context");
        CHECK(B == double(1 << (seed % 6)));
        CHECK(T == 1024.0 * (1 + (seed / 6) % 8));
        const std::string kv = text("question_kv_dtype");
        CHECK(kv == std::array<std::string, 3>{"fp16", "fp8", "fp32"}[(seed / 48) % 3]);
        const double e = kv == "fp8" ? 1 : kv == "fp16" ? 2 : 4;
        CHECK(num("question_kv_bytes") == B * T * 2 * 32 * 8 * 128 * e);
        // The smallest T with B T k > W, Llama-2-7B fp16 weights, k = 2 x 32 x 32 x 128 x e.
        const double b2 = num("question_overtake_batch");
        CHECK(b2 == double(2 << (seed % 5)));
        const std::string kv2 = text("question_overtake_kv_dtype");
        CHECK(kv2 == ((seed / 5) % 2 ? "fp8" : "fp16"));
        const std::uint64_t k = 2ull * 32 * 32 * 128 * (kv2 == "fp8" ? 1 : 2), w = 13'476'831'232ull;
        const double t2 = num("question_overtake_context");
        CHECK(t2 == double(w / (std::uint64_t(b2) * k) + 1));
        CHECK(b2 * t2 * double(k) > double(w));
        CHECK(b2 * (t2 - 1) * double(k) <= double(w));
        // The largest batch that fits: GB is 1e9 B, GiB 2^30 B.
        const std::string mem = text("question_memory");
        memories.insert(mem);
        const double size = std::stod(mem);
        const bool gib = mem.find("GiB") != std::string::npos;
        CHECK(num("question_memory_bytes") == size * (gib ? 1073741824.0 : 1e9));
        const std::uint64_t T3 = std::uint64_t(num("question_memory_context")), memory = std::uint64_t(num("question_memory_bytes"));
        CHECK(T3 == 1024 * (1 + (seed / 3) % 4));
        const auto b3 = std::uint64_t(num("question_max_batch"));
        CHECK(b3 >= 1);  // every variant fits at least one sequence
        CHECK(transformer::memory_needed_bytes(l2, fp16, b3, T3, T3) <= memory);
        CHECK(transformer::memory_needed_bytes(l2, fp16, b3 + 1, T3, T3) > memory);
    }
    CHECK(memories.size() > 3);
}
