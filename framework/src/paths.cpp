// Locations of plugins, configs and caches (see paths.hpp).
#include "paths.hpp"

#include "errors.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace lab::paths {

fs::path self_executable() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path{} : p;
}

bool running_from_build_tree() {
    std::string exe = self_executable().string();
    std::string root = LAB_BUILD_ROOT;
    return !exe.empty() && exe.rfind(root + "/", 0) == 0;
}

namespace {

// <prefix>/bin/lab -> <prefix>/<rel>, when that folder exists; else the configured absolute one.
fs::path installed(const char* rel, const char* absolute) {
    fs::path exe = self_executable();
    if (!exe.empty() && exe.parent_path().filename() == "bin") {
        fs::path p = exe.parent_path().parent_path() / rel;
        std::error_code ec;
        if (fs::is_directory(p, ec)) return p;
    }
    return absolute;
}

}  // namespace

fs::path config_dir() {
    if (const char* env = std::getenv("LAB_CONFIG_DIR"); env && *env) return env;
    if (running_from_build_tree()) return fs::path(LAB_SOURCE_ROOT) / "configs";
    return installed(LAB_REL_DATA_DIR, LAB_INSTALL_DATA_DIR) / "configs";
}

fs::path shipped_file(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos) return {};
    std::vector<fs::path> dirs;
    if (running_from_build_tree()) {
        std::error_code ec;
        for (const auto& lesson : fs::directory_iterator(fs::path(LAB_SOURCE_ROOT) / "labs", ec))
            if (lesson.is_directory(ec)) dirs.push_back(lesson.path()), dirs.push_back(lesson.path() / "captures");
        std::sort(dirs.begin(), dirs.end());
    } else {
        const fs::path data = installed(LAB_REL_DATA_DIR, LAB_INSTALL_DATA_DIR);
        dirs = {data / "nvidia-smi", data / "traces"};
    }
    for (const auto& d : dirs) {
        std::error_code ec;
        if (fs::is_regular_file(d / name, ec)) return d / name;
    }
    return {};
}

std::vector<fs::path> plugin_dirs() {
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("LAB_PLUGIN_PATH"); env && *env) {
        std::string s = env;
        std::size_t start = 0;
        while (start <= s.size()) {
            std::size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) {
                // The build and install folders may be absent and are skipped; a folder the user
                // named is meant to hold plugins, and one that is not there (a typo, an unmounted
                // share) would silently leave its lessons out.
                fs::path dir = s.substr(start, end - start);
                if (std::error_code ec; !fs::exists(dir, ec))
                    throw InputError(dir.string(), "LAB_PLUGIN_PATH names this folder, which does not exist",
                                     "correct the path, or remove it from LAB_PLUGIN_PATH (folders are separated by ':')");
                dirs.push_back(std::move(dir));
            }
            start = end + 1;
        }
    }
    if (running_from_build_tree()) {
        // Meson puts each target in its own subdir's build folder: every plugins/* and labs/*
        // folder is a plugin folder of its own.
        for (const char* top : {"plugins", "labs"}) {
            fs::path base = fs::path(LAB_BUILD_ROOT) / top;
            std::error_code ec;
            std::vector<fs::path> sub;
            for (const auto& e : fs::directory_iterator(base, ec))
                if (e.is_directory()) sub.push_back(e.path());
            std::sort(sub.begin(), sub.end());
            dirs.insert(dirs.end(), sub.begin(), sub.end());
        }
    }
    // The install prefix comes last, also for a lab running from its build tree (DESIGN.md's
    // order), so lessons installed with `meson install` are found either way.
    dirs.push_back(running_from_build_tree() ? fs::path(LAB_INSTALL_PLUGIN_DIR) : installed(LAB_REL_PLUGIN_DIR, LAB_INSTALL_PLUGIN_DIR));
    return dirs;
}

fs::path xdg_home(const char* variable) {
    // The XDG Base Directory spec: "If an implementation encounters a relative path in any of
    // these variables it should consider the path invalid and ignore it." Read against the
    // current folder, a relative one scattered caches and configs over every folder lab ran in.
    const char* value = std::getenv(variable);
    if (!value || !*value || !fs::path(value).is_absolute()) return {};
    return value;
}

fs::path user_config_file() {
    if (fs::path xdg = xdg_home("XDG_CONFIG_HOME"); !xdg.empty()) return xdg / "lab" / "config.yaml";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "lab" / "config.yaml";
    return {};
}

fs::path cache_dir() {
    if (fs::path xdg = xdg_home("XDG_CACHE_HOME"); !xdg.empty()) return xdg / "lab";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "lab";
    // Without HOME, a folder of this user's own in the shared temporary folder: one folder for
    // all let other users read root's ceilings, or plant their own, and once root had made it
    // no one else could write there. Made here, private (0700), so that no later create gives it
    // the umask's open mode; one that another user made first is refused by the cache's readers
    // and writers (ceilings_cache.cpp).
    fs::path dir = fs::temp_directory_path() / ("lab-cache-" + std::to_string(::geteuid()));
    ::mkdir(dir.c_str(), 0700);
    return dir;
}

}  // namespace lab::paths
