// Finding and loading plugins with Boost.DLL. Every check that can refuse a plugin happens
// here, before any of its code runs beyond the C manifest: loadable, a lab plugin, the API
// version, the toolchain ABI tag, the kind, the entry point. Each refusal names the file, what is
// wrong and the fix. Loaded libraries are never unloaded (CUDA code must not be).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lab/backend.hpp"
#include "lab/lesson.hpp"

namespace lab {

struct PluginIdentity {
    std::filesystem::path file;
    std::string kind;      // "lesson" | "device"
    std::string name;      // lesson ID or device kind
    int api_major = 0;
    int api_minor = 0;
    std::string abi_tag;
};

// Reads and checks the manifest of one file. Throws InputError naming the file and the fix.
PluginIdentity inspect_plugin(const std::filesystem::path& file, const std::string& expected_kind);

struct LoadedLesson {
    PluginIdentity identity;
    std::unique_ptr<Lesson> lesson;
    LessonInfo info;   // Lesson::declarations(): every metric, placed workloads' included
};
LoadedLesson load_lesson(const std::filesystem::path& file);

struct LoadedBackend {
    PluginIdentity identity;
    std::unique_ptr<Backend> backend;
};
LoadedBackend load_backend(const std::filesystem::path& file);

// Lesson plugin files are lab_*.so (companions lab_*_cuda.so excluded); backends labdevice_*.so.
bool is_lesson_file_name(const std::string& name);
bool is_backend_file_name(const std::string& name);

// What discovery found across the plugin folders.
struct Catalog {
    std::map<std::string, PluginIdentity> lessons;    // by ID: the first found wins
    std::map<std::string, PluginIdentity> backends;   // by device kind
    std::vector<std::string> warnings;                // shadowed plugins, broken files
    std::map<std::string, std::string> conflicts;     // ID -> error: two plugins, one folder
    // ID its file name implies (lab_02_13.so -> 02.13) -> why the loader refused that file: asked
    // for that lesson, the user hears the reason rather than "unknown lesson".
    std::map<std::string, std::string> refused;
};

// Scans the folders in order. A folder that does not exist is skipped; one that exists but cannot
// be read throws InputError. Broken files become warnings (they name the file and the fix).
// Lessons are inspected (their manifests read) unless `lessons_too` is false: the child process
// needs only the backends, and its parent has already found the lesson.
Catalog discover(const std::vector<std::filesystem::path>& dirs, bool lessons_too = true);

// A symbol of a lesson's CUDA companion (lab_<ID>_cuda.so beside lab_<ID>.so), loaded on first
// use. InputError when the companion or the symbol is missing.
void* companion_symbol(const std::filesystem::path& lesson_file, const std::string& symbol);

// The lesson file for an ID, or a UsageError listing the known IDs; a conflict throws InputError.
const PluginIdentity& find_lesson(const Catalog& catalog, const std::string& id);

}  // namespace lab
