// A student's answers file (YAML): lesson, student, run (the digest of the run it answers) and
// answers {question id: claim}. Claims keep their text and line; units are read at grading time.
// `answers_template` writes the file a student fills in, bound to one run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec.hpp"

namespace lab::grader {

struct Claim {
    std::string text;   // as written ("1.2 TB/s", "memory_bound", "42")
    int line = 0;
    bool empty = false; // left blank (null or "")
};

struct AnswersFile {
    std::string lesson;
    std::string student;
    std::string run;    // "sha256:..." of the run record
    std::map<std::string, Claim> answers;
    std::string file;
    // How the file was read where it was read leniently ("line 9: 'ridge_point:6.3' read as
    // ridge_point: 6.3 ..."): said to the student with the grade.
    std::vector<std::string> notes;
};

// An answers file is a few kilobytes; anything over this is refused unread (the limit is named in
// the message).
inline constexpr std::uintmax_t kMaxAnswersBytes = 1u << 20;  // 1 MiB

// InputError (file:line) on malformed YAML, missing keys, unknown keys, an answer that is a list,
// and on what the input limits refuse (yaml_file.hpp): a file over kMaxAnswersBytes, text that is
// not UTF-8, anchors or aliases, keys that are lists or written twice, deep nesting.
AnswersFile load_answers(const std::filesystem::path& file);
// True when the text looks like an answers file (has lesson and answers keys), for batch grading.
bool looks_like_answers(const std::string& yaml_text);

// The template for a run: one key per question, prompt and unit as a comment above it.
std::string answers_template(const GradingSpec& spec, const nlohmann::json& record);

}  // namespace lab::grader
