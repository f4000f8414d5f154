// Which CUDA backend (and lesson files) the GPU tests load, and what to do when there is none. On a lent GPU machine
// the tests run from a packed build (../shared/gpu/pack.sh), away from the build folder compiled
// into them; its env.sh sets LAB_PLUGIN_PATH, and there a missing backend is a broken pack, so
// the tests fail instead of skipping (a skip there would read as "no GPU" and hide it).
// Plain C++ without CUDA, so its rules are tested on any machine (test_backend_lookup.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lab_gpu_test {

inline constexpr const char* kCudaBackendFile = "labdevice_cuda.so";

struct BackendLookup {
    enum class Verdict { found, skip, fail };
    Verdict verdict = Verdict::skip;
    std::filesystem::path file;  // when found
    std::string why;             // when not
};

// `plugin_path`: $LAB_PLUGIN_PATH (null or empty when unset), colon-separated folders searched in
// order for `file_name`; when set, only they are searched and a file missing from all of them
// fails. Unset, `build_dir` (the build folder's own) is used, and a build without it skips.
inline BackendLookup find_built_file(const char* plugin_path, const std::filesystem::path& build_dir,
                                     const std::string& file_name) {
    namespace fs = std::filesystem;
    BackendLookup r;
    std::error_code ec;
    if (plugin_path && *plugin_path) {
        const std::string path = plugin_path;
        for (std::size_t start = 0; start <= path.size();) {
            std::size_t end = path.find(':', start);
            if (end == std::string::npos) end = path.size();
            const fs::path candidate = fs::path(path.substr(start, end - start)) / file_name;
            if (end > start && fs::is_regular_file(candidate, ec)) {
                r.verdict = BackendLookup::Verdict::found;
                r.file = candidate;
                return r;
            }
            start = end + 1;
        }
        r.verdict = BackendLookup::Verdict::fail;
        r.why = "LAB_PLUGIN_PATH is set (" + path + ") but none of its folders holds " + file_name +
                ": the packed build lacks it (pack a build configured with -Dgpu=enabled), or LAB_PLUGIN_PATH "
                "points elsewhere (source .gpu-carry/env.sh)";
        return r;
    }
    const fs::path file = build_dir / file_name;
    if (fs::is_regular_file(file, ec)) {
        r.verdict = BackendLookup::Verdict::found;
        r.file = file;
    } else {
        r.why = "this build has no " + file_name + " (" + file.string() + ")";
    }
    return r;
}

inline BackendLookup find_cuda_backend(const char* plugin_path, const std::filesystem::path& build_root) {
    BackendLookup r = find_built_file(plugin_path, build_root / "plugins/cuda", kCudaBackendFile);
    if (r.verdict == BackendLookup::Verdict::skip) r.why = "this build has no CUDA backend (" + (build_root / "plugins/cuda" / kCudaBackendFile).string() + ")";
    return r;
}

}  // namespace lab_gpu_test
