// Loading a YAML file that must be a mapping, with the errors every input file gets: the file
// unreadable, too large, not UTF-8, malformed (with its line), or not a mapping. `what` names the
// file's role ("the course file", "the grading spec") and the fixes say what to do.
//
// Input files come from students and instructors, so loading also refuses what would crash or
// stall lab later (each refusal an InputError with the line and the limit's name): a file over
// its size limit, nesting deeper than any lab file needs, a key that is a list or mapping
// (`? [a, b]`, which no reader can name), a key written twice (yaml-cpp would silently keep one),
// more anchors and aliases than the file's kind allows, and a second document. These are checked
// on the parser's events, before the tree is built and before any reader walks it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "errors.hpp"
#include "input_file.hpp"

namespace lab {

// What one kind of YAML input may hold. The defaults fit configuration files (course.yaml, a
// grading spec): a few kilobytes, a handful of levels, anchors for shared tolerances at most.
struct YamlLimits {
    std::uintmax_t max_bytes = 1u << 20;  // checked on the file's size, before it is parsed
    int max_depth = 32;                   // nested lists and mappings; lab's files need about 6
    int max_aliases = 64;                 // anchors (&a) and aliases (*a); 0 refuses both
};

// "file:line" (1-based) of a node, or the file alone where yaml-cpp has no mark.
inline std::string yaml_where(const std::filesystem::path& file, const YAML::Node& node) {
    return node.Mark().line >= 0 ? file.string() + ":" + std::to_string(node.Mark().line + 1) : file.string();
}

// Parses YAML text (from `file`, for the messages) within `limits`. InputError on any problem.
YAML::Node parse_yaml_text(const std::string& text, const std::filesystem::path& file, const std::string& what,
                           const std::string& malformed_fix, const YamlLimits& limits);

YAML::Node load_yaml_mapping(const std::filesystem::path& file, const std::string& what, const std::string& unreadable_fix,
                             const std::string& malformed_fix, const std::string& mapping_of, const YamlLimits& limits = {});

}  // namespace lab
