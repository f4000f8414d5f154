// Loading a YAML file that must be a mapping, with the errors every input file gets: the file
// unreadable, malformed (with its line), or not a mapping. `what` names the file's role ("the
// course file", "the grading spec") and the fixes say what to do.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "errors.hpp"

namespace lab {

// "file:line" (1-based) of a node, or the file alone where yaml-cpp has no mark.
inline std::string yaml_where(const std::filesystem::path& file, const YAML::Node& node) {
    return node.Mark().line >= 0 ? file.string() + ":" + std::to_string(node.Mark().line + 1) : file.string();
}

inline YAML::Node load_yaml_mapping(const std::filesystem::path& file, const std::string& what,
                                    const std::string& unreadable_fix, const std::string& malformed_fix,
                                    const std::string& mapping_of) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(file.string());
    } catch (const YAML::BadFile&) {
        throw InputError(file.string(), "cannot read " + what, unreadable_fix);
    } catch (const YAML::ParserException& e) {
        throw InputError(file.string() + ":" + std::to_string(e.mark.line + 1), "malformed YAML: " + e.msg, malformed_fix);
    }
    if (!root.IsMap()) throw InputError(file.string(), what + " must be a mapping of keys (" + mapping_of + ")");
    return root;
}

}  // namespace lab
