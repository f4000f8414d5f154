// configs/course.yaml: the course salt and the course-wide grading defaults, and the per-student
// seed derived from them (DESIGN.md, "Per-student variants").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace lab {

struct CourseConfig {
    std::string course;
    std::string salt;
    bool allow_reveal = true;
    bool accept_quick = false;
    std::string show_expected = "after_due_date";
    std::string file;
};

// Throws InputError (file:line) on a malformed file, unknown key or bad value.
CourseConfig load_course(const std::filesystem::path& file);

// Throws UsageError when the course at `file` does not allow --reveal, naming the file and what
// to do instead.
void require_reveal_allowed(const std::filesystem::path& file);

// Trimmed, lower-cased (ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters); internal
// whitespace, Unicode's no-break and typographic spaces too, collapsed to one '_'.
std::string normalise_student(const std::string& student);

struct Seed {
    std::uint64_t value = 0;   // the digest's first 8 bytes, big-endian
    std::string hex;           // the whole SHA-256 in hex
};

// SHA-256 of "salt|lesson|normalised student".
Seed student_seed(const CourseConfig& course, const std::string& lesson_id, const std::string& student);

}  // namespace lab
