// A class of submission folders for the batch-grading tests (test_batch_folders.cpp,
// test_batch_identity.cpp): a copy of configs/ whose 02.01 and 02.05 specs grade --quick runs (the
// fixtures are quick runs), runs handed in under any student's name (sealed with the project's
// own code), answers that get every question right, and the rows of a folder.
#pragma once

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "batch.hpp"
#include "grading_fixtures.hpp"
#include "submission.hpp"

namespace lab_test::batch {

using namespace lab_test::grading;
using lab::grader::BatchEntry;
using lab::grader::BatchOptions;
using lab::grader::BatchResult;
using lab::grader::GradingContext;

// Configs whose 02.01 and 02.05 specs grade --quick runs (the fixtures are quick runs).
struct Class {
    lab_test::TempDir dir;
    std::unique_ptr<ScopedEnv> env;
    fs::path subs;
    Class() : subs(dir / "subs") {
        fs::copy(lab_test::source_root() / "configs", dir / "configs", fs::copy_options::recursive);
        for (const char* spec : {"02.01.yaml", "02.05.yaml"})
            fs::copy_file(lab_test::source_root() / "tests/fixtures/grading" / spec, dir / "configs/grading" / spec,
                          fs::copy_options::overwrite_existing);
        env = std::make_unique<ScopedEnv>("LAB_CONFIG_DIR", (dir / "configs").string());
        fs::create_directories(subs);
    }
    BatchResult grade(const BatchOptions& options = {}, const fs::path& where = {}) {
        GradingContext ctx;
        return lab::grader::grade_directory(ctx, where.empty() ? subs : where, {}, options);
    }
};

// Every 02.05 question answered right for this run, bound to it (`bound_to` overrides the digest).
inline std::string right_answers(const Run& run, const std::string& bound_to = "") {
    auto side = [&](const char* w) { return run.text(std::string(w) + ".predicted_regime"); };
    return fmt::format("lesson: \"02.05\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers:\n", run.raw.options.student,
                       bound_to.empty() ? run.digest() : bound_to) +
           "  ridge_point: " + num(run.number("ridge_point")) + " FLOP/B\n" +
           "  attainable: " + num(run.number("attainable_flops_per_s") / 1e9) + " GFLOP/s\n" +
           "  triad_side: " + side("triad") + "\n  fma_few_side: " + side("fma_few") + "\n  fma_many_side: " + side("fma_many") +
           "\n  sgemm_side: " + side("sgemm") + "\n" + "  triad_roof_fraction: " + num(100 * run.number("triad.roof_fraction")) + "%\n";
}

// An answers file of another lesson, every answer blank (a valid file; each blank scores 0).
inline std::string blank_answers(const Run& run) {
    return fmt::format("lesson: \"{}\"\nstudent: \"{}\"\nrun: \"{}\"\nanswers: {{}}\n", run.raw.lesson_id, run.raw.options.student,
                       run.digest());
}

inline void hand_in(const fs::path& folder, const Run& run, const std::string& run_name = "run.json", const std::string& answers = "") {
    fs::create_directories((folder / run_name).parent_path());
    lab_test::write_file(folder / run_name, run.record.dump(1));
    if (answers != "-") lab_test::write_file(folder / (run_name + ".answers.yaml"), answers.empty() ? right_answers(run) : answers);
}

// alice's 02.05 run measured again: every time 3% slower, sealed (another honest run of hers).
inline Run rerun(const std::string& student = "alice", double factor = 1.03) {
    Run r = fixture_run();
    for (auto& w : r.record["workloads"])
        for (const char* k : {"median", "min", "max", "mean", "stddev", "total"}) w["time_s"][k] = w["time_s"][k].get<double>() * factor;
    restudent(r, student);
    return r;
}

inline Run as_student(const std::string& student) {
    Run r = fixture_run();
    restudent(r, student);
    return r;
}

inline std::vector<const BatchEntry*> rows_of(const BatchResult& r, const std::string& folder) {
    std::vector<const BatchEntry*> out;
    for (const auto& e : r.entries)
        if (e.folder == folder) out.push_back(&e);
    return out;
}

inline const BatchEntry& row(const BatchResult& r, const std::string& folder) {
    const auto rows = rows_of(r, folder);
    REQUIRE(rows.size() == 1);
    return *rows[0];
}

inline bool has(const BatchEntry& e, const std::string& flag) { return std::find(e.flags.begin(), e.flags.end(), flag) != e.flags.end(); }

}  // namespace lab_test::batch
