// Course mode's keyed student tokens (docs/gradescope.md, "Threat model"). An instructor holds a
// course key; `lab token` gives each student `student.` + the first 20 base32 characters of
// HMAC-SHA256(key, course|student). A student's run seeds its variant from the token's MAC, so a
// variant cannot be guessed, and a run cannot be renamed to another student, without the key or
// that student's token. Without a key everything runs in practice mode (seeds from the course
// salt, course.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "course.hpp"

namespace lab {

struct CourseKey {
    std::string secret;
    std::string file;
};

// The key file the grader was told of: `flag` (--key FILE), else $LAB_COURSE_KEY (a file path),
// else none (practice mode).
std::optional<std::filesystem::path> configured_key_file(const std::string& flag);

// Reads a key file (its trimmed content is the key). InputError when unreadable or shorter than
// kMinKeyChars, so a placeholder never becomes a course's key.
inline constexpr std::size_t kMinKeyChars = 16;
CourseKey load_course_key(const std::filesystem::path& file);

// A fresh random key (64 hex characters), for `lab token --new-key`.
std::string random_course_key();

struct Token {
    std::string student;   // normalised
    std::string mac;       // 20 base32 characters, upper case
};

// "alice.ABCDEFGHIJKLMNOPQRST" -> {alice, ABC...}; std::nullopt when it is not shaped like a
// token (the student part is split at the last '.'; base32 is read case-insensitively).
std::optional<Token> parse_token(const std::string& text);
std::string to_string(const Token& t);

// The token the key issues to `student` in `course`.
Token issue_token(const CourseKey& key, const std::string& course, const std::string& student);

// True when `token` is the one the key issues to its student.
bool token_verifies(const CourseKey& key, const std::string& course, const Token& token);

// A course-mode run's seed: SHA-256(MAC | lesson).
Seed token_seed(const Token& token, const std::string& lesson_id);

}  // namespace lab
