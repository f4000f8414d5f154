// Plugin discovery and loading (see plugin_loader.hpp).
#include "plugin_loader.hpp"

#include <boost/dll/shared_library.hpp>
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <system_error>

#include "elf_build_id.hpp"
#include "errors.hpp"
#include "trace_label.hpp"

namespace fs = std::filesystem;

namespace lab {

namespace {

// Libraries stay loaded for the life of the process: objects they created may outlive any
// owner we could give them, and CUDA modules must never be unloaded.
std::shared_ptr<boost::dll::shared_library> keep_loaded(const fs::path& given) {
    // An absolute path: dlopen searches the system's library folders for a bare file name.
    const fs::path file = fs::absolute(given);
    static std::mutex mutex;
    static auto* libs = new std::map<std::string, std::shared_ptr<boost::dll::shared_library>>();
    std::lock_guard lock(mutex);
    std::string key = fs::weakly_canonical(file).string();
    auto it = libs->find(key);
    if (it != libs->end()) return it->second;
    if (const std::string cut = elf_truncation(file); !cut.empty())
        throw InputError(file.string(), "not a loadable shared library (" + cut + ")",
                         "rebuild or reinstall the plugin (meson compile, meson install), or remove it from the plugin folder");
    boost::dll::fs::error_code ec;
    auto lib = std::make_shared<boost::dll::shared_library>();
    lib->load(boost::dll::fs::path(file), ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    if (ec) {
        // Boost's error code drops the loader's reason; dlerror() has it ("undefined symbol: ...",
        // "libcublasLt.so.13: cannot open shared object file").
        std::string reason = ec.message();
        if (void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) dlclose(h);
        else if (const char* e = dlerror()) reason = e;
        throw InputError(file.string(), "not a loadable shared library (" + reason + ")",
                         "remove the file from the plugin folder, or rebuild it for this machine "
                         "(an undefined symbol means it was linked against a library that is missing here)");
    }
    libs->emplace(key, lib);
    return lib;
}

std::string version_text(int major, int minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace

bool is_lesson_file_name(const std::string& n) {
    auto ends = [&](const std::string& s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
    return n.rfind("lab_", 0) == 0 && ends(".so") && !ends("_cuda.so");
}

bool is_backend_file_name(const std::string& n) {
    return n.rfind("labdevice_", 0) == 0 && n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0;
}

PluginIdentity inspect_plugin(const fs::path& file, const std::string& expected_kind) {
    auto lib = keep_loaded(file);
    if (!lib->has("lab_plugin_manifest"))
        throw InputError(file.string(), "not a lab plugin: it exports no lab_plugin_manifest",
                         "build it with LAB_LESSON(YourLesson, \"ID\") at the bottom of its source "
                         "(#include <lab/lab.hpp>), or remove it from the plugin folder");
    using ManifestFn = const PluginManifest*();
    const PluginManifest* m = lib->get<ManifestFn>("lab_plugin_manifest")();
    PluginIdentity id;
    id.file = file;
    id.api_major = m->api_major;
    id.api_minor = m->api_minor;
    id.abi_tag = m->abi_tag ? m->abi_tag : "";
    id.kind = m->kind ? m->kind : "";
    id.name = m->name ? m->name : "";
    if (id.api_major != kApiMajor || id.api_minor > kApiMinor)
        throw InputError(file.string(),
                         "built for plugin API " + version_text(id.api_major, id.api_minor) +
                             ", but this lab supports plugin API " + version_text(kApiMajor, kApiMinor) +
                             (id.api_major == kApiMajor ? " (a plugin may not be newer than its host)" : ""),
                         // The plugin API version, not the package's (`pkg-config --modversion lab-sdk`).
                         "rebuild the plugin against this lab's SDK, whose plugin API version is " + version_text(kApiMajor, kApiMinor) +
                             " (`pkg-config --variable=api_major lab-sdk`), or install the lab it was built for");
    if (id.abi_tag != kAbiTag)
        throw InputError(file.string(),
                         "built with toolchain ABI '" + id.abi_tag + "', but this lab was built with '" +
                             kAbiTag + "'",
                         "rebuild the plugin with the same compiler family and standard library as lab");
    if (id.kind != expected_kind)
        throw InputError(file.string(),
                         "is a '" + id.kind + "' plugin where a '" + expected_kind + "' plugin was expected",
                         "lesson plugins are named lab_<ID>.so, device backends labdevice_<kind>.so");
    const char* entry = expected_kind == "lesson" ? "lab_create_lesson" : "lab_create_backend";
    if (!lib->has(entry))
        throw InputError(file.string(), std::string("missing entry point '") + entry + "'",
                         expected_kind == "lesson"
                             ? "end the plugin's source with LAB_LESSON(YourLesson, \"ID\")"
                             : "end the backend's source with LAB_DEVICE_BACKEND(YourBackend, \"kind\")");
    return id;
}

namespace {

// A name declared twice is refused wherever the plugin loads, not only by `lab validate`: the
// record, the grader and the answers template key everything by name, so one of the two would
// silently win (a graded metric shown as its own leak, a question graded against either).
void refuse_duplicate_declarations(const fs::path& file, const LessonInfo& info) {
    std::set<std::string> seen;
    for (const auto& w : info.placed)
        if (!seen.insert(w.name).second)
            throw InputError(file.string(), "lesson " + info.id + " places workload '" + w.name + "' twice",
                             "give each placed workload its own name (LessonInfo::placed)");
    seen.clear();
    for (const auto& m : info.metrics)
        if (!seen.insert(m.name).second)
            throw InputError(file.string(), "lesson " + info.id + " declares metric '" + m.name + "' twice",
                             "declare each metric once (LessonInfo::metrics; a placed workload's standard metrics, such as "
                             "'NAME.ai', are declared for it)");
}

}  // namespace

LoadedLesson load_lesson(const fs::path& file) {
    LoadedLesson out;
    out.identity = inspect_plugin(file, "lesson");
    auto lib = keep_loaded(file);
    using Factory = std::unique_ptr<Lesson>();
    try {
        out.lesson = lib->get_alias<Factory>("lab_create_lesson")();
        out.info = out.lesson->declarations();
    } catch (const std::exception& e) {
        throw PluginError(file.string() + ": the lesson plugin failed while describing itself: " + e.what());
    }
    if (out.info.id != out.identity.name)
        throw InputError(file.string(),
                         "its manifest says lesson '" + out.identity.name + "' but info() says '" + out.info.id + "'",
                         "make LAB_LESSON's ID and LessonInfo::id the same");
    refuse_duplicate_declarations(file, out.info);
    return out;
}

LoadedBackend load_backend(const fs::path& file) {
    LoadedBackend out;
    out.identity = inspect_plugin(file, "device");
    auto lib = keep_loaded(file);
    using Factory = std::unique_ptr<Backend>();
    out.backend = lib->get_alias<Factory>("lab_create_backend")();
    // A backend that names unnamed kernels after the workload being measured asks this
    // library's label (trace_label.hpp): it cannot see it otherwise, being built against the SDK.
    if (lib->has(kTraceLabelSourceSymbol))
        lib->get<void(TraceLabelSource)>(kTraceLabelSourceSymbol)(&current_trace_label);
    return out;
}

namespace {

// A plugin's version for comparing two copies: a lesson's own version and title (two lessons
// may share an ID and a version), a backend's API version.
std::string plugin_version(const fs::path& file, bool lesson) {
    try {
        if (lesson) {
            const LoadedLesson l = load_lesson(file);
            return "version " + l.info.version + ", \"" + l.info.title + "\"";
        }
        PluginIdentity id = inspect_plugin(file, "device");
        return "API " + version_text(id.api_major, id.api_minor);
    } catch (const std::exception& e) {
        return std::string("unreadable: ") + e.what();
    }
}

}  // namespace

Catalog discover(const std::vector<fs::path>& dirs, bool lessons_too) {
    Catalog cat;
    for (const auto& dir : dirs) {
        std::error_code ec;
        if (!fs::exists(dir, ec)) continue;
        fs::directory_iterator it(dir, ec);
        if (ec)
            throw InputError(dir.string(), "cannot read the plugin folder (" + ec.message() + ")",
                             "fix its permissions, or remove it from LAB_PLUGIN_PATH");
        std::vector<fs::path> files;
        for (const auto& e : it)
            if (e.is_regular_file(ec)) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        std::map<std::string, fs::path> in_this_folder;
        for (const auto& f : files) {
            std::string name = f.filename().string();
            bool lesson = is_lesson_file_name(name), backend = is_backend_file_name(name);
            if ((!lesson || !lessons_too) && !backend) continue;
            PluginIdentity id;
            if (backend) {
                // Backends are catalogued by name only: loading one may pull in the CUDA runtime,
                // which only the child process may touch. The child checks them on loading.
                id.file = f;
                id.kind = "device";
                id.name = name.substr(10, name.size() - 10 - 3);
            } else {
                try {
                    id = inspect_plugin(f, "lesson");
                } catch (const InputError& e) {
                    cat.warnings.push_back(std::string("skipped ") + e.what());
                    // lab_02_13.so -> "02.13"; the first refusal of an ID is the one reported.
                    std::string implied = name.substr(4, name.size() - 4 - 3);
                    std::replace(implied.begin(), implied.end(), '_', '.');
                    cat.refused.emplace(implied, e.what());
                    continue;
                }
            }
            auto& table = lesson ? cat.lessons : cat.backends;
            std::string key = (lesson ? "lesson:" : "device:") + id.name;
            if (auto prev = in_this_folder.find(key); prev != in_this_folder.end()) {
                cat.conflicts[key] = "two plugins for " + std::string(lesson ? "lesson " : "device ") + id.name +
                                     " in one folder: " + prev->second.string() + " and " + f.string() +
                                     "\n  fix: remove one of them";
                continue;
            }
            in_this_folder[key] = f;
            // A refused build earlier on the path shadows this one as an accepted build would: an
            // instructor testing a stale build must hear the refusal, not run the installed copy.
            if (auto refused = cat.refused.find(id.name); lesson && refused != cat.refused.end() && !table.count(id.name)) {
                cat.warnings.push_back(f.string() + " (lesson " + id.name + ") is shadowed by a build of it the loader refused, found "
                                       "earlier on the plugin path\n  fix: rebuild that one, or remove its folder from LAB_PLUGIN_PATH");
                continue;
            }
            if (auto existing = table.find(id.name); existing != table.end()) {
                // One build found twice (a build tree beside its installed copy: one GNU build ID)
                // is no news; two builds are, even of one version (a rebuilt lesson keeps
                // "1.0.0"): the user may be running the one they did not mean.
                if (!same_build(f, existing->second.file)) {
                    const std::string mine = plugin_version(f, lesson), theirs = plugin_version(existing->second.file, lesson);
                    // Same version, same title: a rebuild; a different title under one ID is another lesson.
                    const std::string builds = mine == theirs ? ", another build of the same version" : "";
                    cat.warnings.push_back(f.string() + " (" + id.kind + " " + id.name + " " + mine + ") is shadowed by " +
                                           existing->second.file.string() + " (" + theirs + builds +
                                           "), found earlier on the plugin path\n  fix: remove the copy you do not mean, or "
                                           "reorder LAB_PLUGIN_PATH");
                }
                continue;
            }
            table[id.name] = id;
        }
    }
    return cat;
}

const PluginIdentity& find_lesson(const Catalog& cat, const std::string& id) {
    if (auto c = cat.conflicts.find("lesson:" + id); c != cat.conflicts.end())
        throw InputError("", c->second);
    auto it = cat.lessons.find(id);
    if (it != cat.lessons.end()) return it->second;
    if (auto r = cat.refused.find(id); r != cat.refused.end())
        throw InputError("", "lesson " + id + "'s plugin was found but refused: " + r->second);
    std::string known;
    for (const auto& [k, v] : cat.lessons) known += (known.empty() ? "" : ", ") + k;
    throw UsageError("unknown lesson ID '" + id + "'; lessons found: " + (known.empty() ? "none" : known) +
                     "\n  fix: run `lab list`, or add the plugin's folder to LAB_PLUGIN_PATH");
}

}  // namespace lab

namespace lab {

void* companion_symbol(const fs::path& lesson_file, const std::string& symbol) {
    std::string stem = lesson_file.stem().string();
    fs::path companion = lesson_file.parent_path() / (stem + "_cuda.so");
    if (!fs::exists(companion))
        throw InputError(companion.string(), "the lesson has no CUDA companion, so it cannot run on a GPU",
                         "run it with --device cpu, or build the lesson's companion (" + companion.filename().string() +
                             ") with nvcc");
    auto lib = keep_loaded(companion);
    if (!lib->has(symbol))
        throw InputError(companion.string(), "the CUDA companion lacks '" + symbol + "'",
                         symbol.rfind("lab_companion_", 0) == 0
                             ? "export the lesson's kernels with LAB_COMPANION(Interface, Impl) in its .cu (lab/companion.hpp)"
                             : "rebuild the lesson and its companion together");
    return reinterpret_cast<void*>(&lib->get<void()>(symbol));
}

}  // namespace lab
