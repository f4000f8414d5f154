// Batch grading (`lab grade SUBMISSIONS_DIR`): one folder per student holding an answers file
// and a run record, found by content whatever their names; a CSV gradebook; the questions most
// students missed; identical measurements submitted by different students.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "submission.hpp"

namespace lab::grader {

struct BatchEntry {
    std::string folder;
    std::string student;
    std::string lesson;
    bool ok = false;              // graded (or reported not gradable) rather than failed
    std::string error;            // why it could not be graded at all
    GradeReport report;
};

struct BatchResult {
    std::vector<BatchEntry> entries;
    std::vector<std::string> duplicates;   // "alice, bob: identical measurements (sha256 ...)"
    std::vector<std::pair<std::string, double>> most_missed;  // question -> fraction of students not correct
};

BatchResult grade_directory(GradingContext& ctx, const std::filesystem::path& dir);

// student, lesson, score, max, then one column per question (points).
std::string gradebook_csv(const BatchResult& r);

}  // namespace lab::grader
