// Where `lab` finds its plugins, configs and caches: in the build tree when it runs from there,
// else under the install prefix; environment variables override both.
#pragma once

#include <filesystem>
#include <vector>

namespace lab::paths {

// The running executable (/proc/self/exe).
std::filesystem::path self_executable();

// True when the running executable lives in the build tree it was configured in.
bool running_from_build_tree();

// configs/: $LAB_CONFIG_DIR, else the source tree's configs/ (build tree), else <datadir>/lab/configs.
std::filesystem::path config_dir();

// A file the lessons ship for students to read (02.09's nvidia-smi captures, 02.10's and 02.12's
// traces), by its bare name: <datadir>/lab/{nvidia-smi,traces}/NAME installed, the lessons'
// folders (labs/*/ and labs/*/captures/) of the source tree when running from the build tree.
// Empty when there is none.
std::filesystem::path shipped_file(const std::string& name);

// Plugin folders in discovery order: each folder of $LAB_PLUGIN_PATH (colon-separated), then the
// build tree's plugin and lesson folders (when running from it), then the install folder.
// InputError for a $LAB_PLUGIN_PATH folder that does not exist.
std::vector<std::filesystem::path> plugin_dirs();

// $VARIABLE (XDG_CACHE_HOME, XDG_CONFIG_HOME) when it is an absolute path; empty when unset,
// empty or relative (the XDG Base Directory spec: a relative one is invalid and ignored).
std::filesystem::path xdg_home(const char* variable);

// The user config: $XDG_CONFIG_HOME/lab/config.yaml, else ~/.config/lab/config.yaml; empty
// without either.
std::filesystem::path user_config_file();

// $XDG_CACHE_HOME/lab (default ~/.cache/lab; without HOME, <tmp>/lab-cache-UID, made private
// here); created on demand by writers.
std::filesystem::path cache_dir();

}  // namespace lab::paths
