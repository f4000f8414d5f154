// The ceilings cache keeps "bandwidth.best" equal to the best bandwidth kernel. A run may raise
// its own best to a workload's rate (an in-place update can beat read, copy and triad), but a
// cache that kept that raised value would start every later run with a best above all of its
// kernels, a record the grader refuses as implausible: an honest student's run, ungraded.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ceiling_trust.hpp"
#include "ceilings_cache.hpp"
#include "plugin_loader.hpp"
#include "lab/lesson.hpp"
#include "test_support.hpp"

namespace {

lab::Ceilings raised_by_evidence() {
    lab::Ceilings c;
    c.threads = 2;
    c.flops_per_s["fp32.simt"].value = 2e11;
    c.bandwidth_bytes_per_s["read"].value = 5.2e10;
    c.bandwidth_bytes_per_s["copy"].value = 4.9e10;
    c.bandwidth_bytes_per_s["triad"].value = 4.2e10;
    lab::Ceiling& best = c.bandwidth_bytes_per_s["best"];
    best.value = 9.1e10;
    best.source = "raised to the rate of workload 'fma_few'";
    return c;
}

}  // namespace

TEST_CASE("the cache stores and loads the kernels' best bandwidth, never a run's raised one", "[ceilings_cache]") {
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test CPU";
    const auto file = dir / "cpu-test.json";
    lab::store_ceilings(file, facts, raised_by_evidence());
    std::string problem;
    auto loaded = lab::load_cached_ceilings(file, facts, &problem);
    INFO(problem);
    REQUIRE(loaded);
    CHECK(loaded->peak_bandwidth() == 5.2e10);
    CHECK(loaded->bandwidth_bytes_per_s.at("best").source.empty());
    CHECK(loaded->bandwidth_bytes_per_s.at("read").value == 5.2e10);

    // A cache written before the rule (the raised best on disk) is healed when read.
    auto j = nlohmann::json::parse(lab_test::read_file(file));
    j["ceilings"]["bandwidth_bytes_per_s"]["best"]["value"] = 9.1e10;
    lab_test::write_file(file, j.dump());
    loaded = lab::load_cached_ceilings(file, facts, &problem);
    REQUIRE(loaded);
    CHECK(loaded->peak_bandwidth() == 5.2e10);
}

TEST_CASE("the cache keeps the ceilings a calibration skipped, with their reasons", "[ceilings_cache]") {
    // `lab device` after `lab calibrate` reads the cache: a skipped pipe must still say why.
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test GPU";
    lab::Ceilings c = raised_by_evidence();
    c.skipped["flops.fp8.tensor"] = "cuBLASLt has no GEMM algorithm for fp8 8192x8192x8192 on this device";
    const auto file = dir / "cuda-test.json";
    lab::store_ceilings(file, facts, c);
    auto loaded = lab::load_cached_ceilings(file, facts);
    REQUIRE(loaded);
    CHECK(loaded->skipped == c.skipped);
}

TEST_CASE("a ceiling a run re-measured says so with the re-measure's statistics, and the cache says which run", "[ceilings_cache]") {
    lab::Ceilings start;
    lab::Ceiling& copy = start.bandwidth_bytes_per_s["copy"];
    copy.value = 1e10, copy.unit = "B/s", copy.samples = 22, copy.spread = 0.15, copy.noise_met = false;
    copy.method = "a[i] = b[i] over 256 MiB, 2 threads; median of 22 samples of 2 back-to-back invocations, spread 15.0% (noise target not met)";
    copy.measured_at = "2026-12-01T10:32:00Z";
    lab::CeilingMeasurement cm;
    cm.ceiling = "bandwidth.copy", cm.purpose = "reference";
    cm.measurement.workload.bytes = 2e10;
    cm.measurement.time.median = 1.0, cm.measurement.time.samples = 5, cm.measurement.time.batch = 4;
    cm.measurement.time.noise = 0.002, cm.measurement.time.noise_met = true;
    const lab::Ceilings now = lab::effective_ceilings(start, {cm}, {});
    const lab::Ceiling& raised = now.bandwidth_bytes_per_s.at("copy");
    REQUIRE(raised.value == 2e10);
    CHECK(raised.source == "re-measured in this run (reference)");
    // The kernel's description stays; the statistics are the re-measure's, as its fields say.
    CHECK(raised.method == "a[i] = b[i] over 256 MiB, 2 threads; median of 5 samples of 4 back-to-back invocations, spread 0.2%");
    CHECK(raised.samples == 5);

    const lab::CacheUpdate cached = lab::ceilings_for_cache(start, now, "02.05", "2026-12-01T13:22:00Z");
    CHECK(cached.ceilings.bandwidth_bytes_per_s.at("copy").source == "re-measured in a run of lesson 02.05 (reference)");
    CHECK(cached.ceilings.bandwidth_bytes_per_s.at("copy").measured_at == "2026-12-01T13:22:00Z");
    CHECK(cached.ceilings.bandwidth_bytes_per_s.at("copy").value == 2e10);
    CHECK(cached.kept == std::vector<std::string>{"bandwidth.copy 20 GB/s"});
    CHECK(cached.left_out.empty());
    // A workload's rate that raised the best (evidence on bandwidth.best) stays the run's.
    lab::Ceilings with_evidence = now;
    lab::Ceiling& best = with_evidence.bandwidth_bytes_per_s["best"];
    best.value = 9e10, best.unit = "B/s", best.source = "raised to the rate of workload 'stream_big'";
    const lab::CacheUpdate b = lab::ceilings_for_cache(start, with_evidence, "02.05", "2026-12-01T13:22:00Z");
    CHECK(b.ceilings.peak_bandwidth() == 2e10);  // the copy kernel's re-measure, kept
    REQUIRE(b.left_out.size() == 1);
    CHECK_THAT(b.left_out[0], Catch::Contains("bandwidth.best 90 GB/s (it is a workload's own rate"));
}

// A review found the cache ratcheting: each run's highest re-measure, however noisy or loaded,
// became every later run's starting ceiling (76 GB/s at 36% spread, marked trusted), so later
// roof fractions read low. Only a quiet re-measure that met its noise target is cached.
TEST_CASE("the cache keeps a run's raise only from a quiet re-measure that met its noise target", "[ceilings_cache]") {
    lab::Ceilings start;
    for (const char* k : {"read", "update"}) {
        lab::Ceiling& c = start.bandwidth_bytes_per_s[k];
        c.value = 1e10, c.unit = "B/s", c.samples = 22, c.noise_met = true, c.source = "calibration";
    }
    lab::Ceiling& fp32 = start.flops_per_s["fp32.simt"];
    fp32.value = 1e11, fp32.unit = "FLOP/s", fp32.source = "calibration";
    auto remeasure = [](const char* ceiling, double bytes, bool noise_met, double load) {
        lab::CeilingMeasurement cm;
        cm.ceiling = ceiling, cm.purpose = "reference";
        cm.measurement.workload.bytes = bytes;
        cm.measurement.time.median = 1.0, cm.measurement.time.samples = 5;
        cm.measurement.time.noise = noise_met ? 0.01 : 0.36, cm.measurement.time.noise_met = noise_met;
        cm.measurement.load = load;
        return cm;
    };
    lab::Measurement fma;
    fma.workload.name = "fma_many", fma.workload.flops = 3e11, fma.workload.pipe = "fp32.simt";
    fma.time.median = 1.0;
    lab::CeilingMeasurement evidence;
    evidence.ceiling = "flops.fp32.simt", evidence.purpose = "evidence", evidence.workloads = {"fma_many"};
    for (bool noise_met : {true, false})
        for (double load : {0.0, 1.2}) {
            CAPTURE(noise_met, load);
            const lab::Ceilings end =
                lab::effective_ceilings(start, {remeasure("bandwidth.update", 7.6e10, noise_met, load), evidence}, {fma});
            REQUIRE(end.bandwidth_bytes_per_s.at("update").value == 7.6e10);  // the run itself holds its workloads to it
            REQUIRE(end.flops_per_s.at("fp32.simt").value == 3e11);
            const lab::CacheUpdate u = lab::ceilings_for_cache(start, end, "02.09", "2026-12-03T06:00:00Z");
            const bool quiet = noise_met && load < 0.3;
            CHECK(u.ceilings.bandwidth_bytes_per_s.at("update").value == (quiet ? 7.6e10 : 1e10));
            // The roof every fraction divides by follows the kernels kept (a review found the
            // run's best, 76 GB/s, handed on when its update was left out).
            CHECK(u.ceilings.peak_bandwidth() == (quiet ? 7.6e10 : 1e10));
            CHECK(u.ceilings.bandwidth_bytes_per_s.at("update").source == (quiet ? "re-measured in a run of lesson 02.09 (reference)" : "calibration"));
            // A workload's own rate (a lesson's FLOP count) is never cached: a miscount would
            // raise the machine's roof for every lesson.
            CHECK(u.ceilings.flops_per_s.at("fp32.simt").value == 1e11);
            CHECK(u.kept.size() == (quiet ? 1u : 0u));
            REQUIRE(u.left_out.size() == (quiet ? 1u : 2u));
            std::string said;
            for (const auto& l : u.left_out) said += l + "\n";
            CHECK_THAT(said, Catch::Contains("flops.fp32.simt 300 GFLOP/s (it is a workload's own rate"));
            if (!quiet) CHECK_THAT(said, Catch::Contains("bandwidth.update 76 GB/s (") &&
                                             Catch::Contains(noise_met ? "other processes used 1.2 CPUs" : "missed the noise target"));
        }
}

namespace {

// A backend whose calibration measured the launch cost on a busy machine (20 µs, spread 85%,
// three other CPUs busy) and whose retry, once the burst passed, measures 2 µs.
class BusyLaunchBackend : public lab::Backend {
public:
    double retry_s = 2e-6;
    int probes = 0;
    std::string unavailable_reason() override { return ""; }
    std::unique_ptr<lab::Device> open(const lab::BackendOptions&) override { return nullptr; }
    lab::Ceilings calibrate(lab::Device&, bool, const lab::MeasureFn&, const std::function<void(const std::string&)>&) override {
        lab::Ceilings c;
        c.launch_s = lab::plain_ceiling(20e-6, "s", "an empty kernel, dispatched");
        c.launch_s.spread = 0.85;
        c.launch_s.noise_met = false;
        c.launch_s.load = 3.0;
        c.flops_per_s["fp32.simt"] = lab::plain_ceiling(2e11, "FLOP/s", "FMA chains");
        c.flops_per_s["fp32.simt"].load = 0.1;
        return c;
    }
    std::optional<lab::Measurement> probe_ceiling(lab::Device&, const std::string& key, const lab::MeasureFn&) override {
        if (key != "launch") return std::nullopt;
        ++probes;
        lab::Measurement m;
        m.workload.name = "calibrate.empty_kernel";
        m.time.median = retry_s;
        m.time.samples = 400;
        m.time.noise = 0.04;
        m.time.noise_met = true;
        m.load = 0.2;
        return m;
    }
};

}  // namespace

TEST_CASE("a launch cost calibrated under load is measured again, the lower kept, and marked untrusted if it still misses",
          "[ceilings_cache]") {
    lab::LoadedBackend cpu = lab::load_backend(lab_test::build_root() / "plugins/cpu/labdevice_cpu.so");
    std::unique_ptr<lab::Device> dev = cpu.backend->open({});
    BusyLaunchBackend busy;
    std::vector<std::string> notes;
    auto note = [&](const std::string& n) { notes.push_back(n); };
    auto progress = [](const std::string&) {};
    lab::MeasureFn measure = [](const lab::Workload&, const lab::Launch&) { return lab::Measurement{}; };

    lab::Ceilings c = lab::calibrate_with_conditions(busy, *dev, true, measure, progress, note);
    CHECK(busy.probes == 1);
    CHECK(c.launch_s.value == Approx(2e-6));  // a cost: the lower of the two
    CHECK(c.launch_s.trusted);
    CHECK(c.launch_s.source == "calibration (retried)");
    CHECK(notes.empty());

    // A retry that reads higher still (the burst went on) keeps the first, marked and said.
    busy.retry_s = 30e-6;
    notes.clear();
    c = lab::calibrate_with_conditions(busy, *dev, true, measure, progress, note);
    CHECK(c.launch_s.value == Approx(20e-6));
    CHECK_FALSE(c.launch_s.trusted);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("launch 20 µs") && Catch::Contains("other processes used 3.0 CPUs"));
    CHECK(c.flops_per_s["fp32.simt"].trusted);
}

TEST_CASE("a cached ceiling beyond belief is refused and measured again, as a non-positive one is", "[ceilings_cache]") {
    // A fuzzed cache with every bandwidth at 1e308 B/s was believed: `lab device` printed it and
    // runs recorded it as their ceilings, every roof fraction read as zero, with no note.
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test CPU";
    const auto file = dir / "cpu-test.json";
    lab::store_ceilings(file, facts, raised_by_evidence());
    auto j = nlohmann::json::parse(lab_test::read_file(file));
    for (auto& [k, v] : j["ceilings"]["bandwidth_bytes_per_s"].items()) v["value"] = 1e308;
    lab_test::write_file(file, j.dump());
    std::string problem;
    CHECK(!lab::load_cached_ceilings(file, facts, &problem));
    CHECK_THAT(problem, Catch::Contains("above what any device does") && Catch::Contains("measuring again"));

    // Against a datasheet: a GPU's fp32.simt ceiling ten times the A100's 19.5 TFLOP/s (below the
    // physical bound, above the paper peak by far more than the grader allows).
    lab::DeviceFacts gpu;
    gpu.name = "NVIDIA A100-SXM4-40GB";
    gpu.memory_bytes = 42505273344;
    lab::Ceilings c = raised_by_evidence();
    c.flops_per_s["fp32.simt"].value = 19.5e13;
    const auto gpu_file = dir / "cuda-test.json";
    lab::store_ceilings(gpu_file, gpu, c);
    problem.clear();
    CHECK(!lab::load_cached_ceilings(gpu_file, gpu, &problem, lab::DeviceKind::cuda));
    CHECK_THAT(problem, Catch::Contains("fp32.simt") && Catch::Contains("datasheet") && Catch::Contains("measuring again"));
    // At the datasheet's figure it is believed.
    c.flops_per_s["fp32.simt"].value = 19.0e12;
    lab::store_ceilings(gpu_file, gpu, c);
    problem.clear();
    CHECK(lab::load_cached_ceilings(gpu_file, gpu, &problem, lab::DeviceKind::cuda));
    CHECK(problem.empty());
}

// A read-only HOME (or HOME=/ under a container's random UID) failed every `lab run`, `lab
// calibrate` and `lab device` with exit 2 after measuring: the calibration was thrown away.
TEST_CASE("a cache that cannot be written is said in a note with its fix, never an error", "[ceilings_cache]") {
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test CPU";
    // A folder that cannot be made, for root too: its parent is a file.
    lab_test::write_file(dir / "home", "not a folder\n");
    const std::string note = lab::cache_ceilings(dir / "home" / "lab" / "ceilings" / "cpu-test.json", facts, raised_by_evidence());
    CHECK_THAT(note, Catch::StartsWith("the ceilings were not cached (") && Catch::Contains("home/lab/ceilings") &&
                         Catch::Contains("Not a directory") && Catch::Contains("fix: set XDG_CACHE_HOME to a folder you can write"));
    CHECK(note.find("choose another path") == std::string::npos);

    const auto file = dir / "cache" / "cpu-test.json";
    CHECK(lab::cache_ceilings(file, facts, raised_by_evidence()).empty());
    CHECK(lab::load_cached_ceilings(file, facts));
}

// Without HOME the cache sat in one /tmp/lab-cache for all: another user could plant ceilings
// that root's runs then trusted and recorded.
TEST_CASE("a cache another user owns is neither read nor written", "[ceilings_cache]") {
    lab_test::TempDir dir;
    lab::DeviceFacts facts;
    facts.name = "Test CPU";
    const auto file = dir / "ceilings" / "cpu-test.json";
    lab::store_ceilings(file, facts, raised_by_evidence());
    // Another user's file: root gives one away; anyone else finds root's (in /etc).
    std::filesystem::path theirs = "/etc/passwd", their_folder = "/etc/cpu-test.json";
    if (::geteuid() == 0) {
        REQUIRE(::chown(file.c_str(), 4242, 4242) == 0);
        theirs = file;
    }
    std::string problem;
    CHECK_FALSE(lab::load_cached_ceilings(theirs, facts, &problem));
    CHECK_THAT(problem, Catch::Contains("belongs to another user") && Catch::Contains("measuring again"));
    if (::geteuid() == 0) {
        // In this user's own folder, another user's file is replaced, and then trusted.
        CHECK(lab::cache_ceilings(file, facts, raised_by_evidence()).empty());
        CHECK(lab::load_cached_ceilings(file, facts));
        REQUIRE(::chown(file.parent_path().c_str(), 4242, 4242) == 0);
        their_folder = file;
    }
    CHECK_THAT(lab::cache_ceilings(their_folder, facts, raised_by_evidence()),
               Catch::Contains("not cached") && Catch::Contains("belongs to another user"));
}
