// `lab new`: the files of a new lesson that builds out of tree against the installed SDK
// (pkg-config lab-sdk): a plugin with one workload (CPU kernel and CUDA kernel), its analytic
// counts, its expectations, a grading spec with one question, a meson.build and a README.
#pragma once

#include <filesystem>
#include <string>

namespace lab::cli {

// "02.13" -> "02_13".
std::string scaffold_stem(const std::string& id);

// Creates DIR/lesson_<stem>/ and returns it. UsageError for a bad ID; InputError when the folder
// exists or cannot be written.
std::filesystem::path scaffold_lesson(const std::string& id, const std::string& title, const std::filesystem::path& dir);

}  // namespace lab::cli
