// Helpers shared by the tests: temporary folders, running the `lab` executable as a user would,
// reading files.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lab_test {

// A fresh folder under /tmp, removed when the object goes.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
    std::filesystem::path path_;
};

struct LabResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// The ceilings cache every run_lab shares (XDG_CACHE_HOME), for a test that starts lab its own way.
std::filesystem::path shared_cache_dir();

// Runs the built `lab` with `args`; `env` entries are added to (or override) the environment.
// Every run shares one private ceilings cache so only the first calibrates.
LabResult run_lab(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
// The same, run in the folder `dir` (relative paths, runs/ and the like, are `dir`'s).
LabResult run_lab_in(const std::filesystem::path& dir, const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {});

std::string read_file(const std::filesystem::path& p);
// ASCII text as UTF-16 with its byte-order mark, as Windows PowerShell 5's `>` writes it.
inline std::string utf16(const std::string& ascii, bool little_endian) {
    std::string out = little_endian ? "\xFF\xFE" : "\xFE\xFF";
    for (char ch : ascii) out += little_endian ? std::string{ch, '\0'} : std::string{'\0', ch};
    return out;
}

// The columns a line of UTF-8 takes in a terminal: its code points ("µ" is one).
inline std::size_t display_columns(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

// An audit verdict that says the re-measure was compared with the run: reproduces,
// does_not_reproduce, or inconclusive (the slower run was measured beside other work). Which
// one an honest run gets is the machine's business, never asserted.
inline bool compared_verdict(const std::string& v) { return v == "reproduces" || v == "does_not_reproduce" || v == "inconclusive"; }
void write_file(const std::filesystem::path& p, const std::string& content);
std::string gunzip_file(const std::filesystem::path& p);

// The build folder of the fixture plugins, the built lab, the source root.
std::filesystem::path fixture_plugin(const std::string& name);  // "wrong_api" -> .../lab_wrong_api.so
std::filesystem::path lab_executable();
std::filesystem::path source_root();
std::filesystem::path build_root();

// A plugin folder holding just the given fixture plugin, for LAB_PLUGIN_PATH.
struct PluginFolder {
    TempDir dir;
    explicit PluginFolder(const std::string& fixture) {
        std::filesystem::copy_file(fixture_plugin(fixture), dir / ("lab_" + fixture + ".so"));
    }
    // LAB_TIMEOUT unset: these lessons are about the budget itself (bench/sanitize.sh raises it).
    std::map<std::string, std::string> env() const { return {{"LAB_PLUGIN_PATH", dir.path().string()}, {"LAB_TIMEOUT", ""}}; }
};

// A copy of configs/ whose 02.01 and 02.05 specs accept quick runs (the recorded fixtures are
// quick runs; the shipped specs refuse them), for LAB_CONFIG_DIR.
struct QuickConfigs {
    TempDir dir;
    QuickConfigs() {
        std::filesystem::copy(source_root() / "configs", dir / "configs", std::filesystem::copy_options::recursive);
        for (const char* id : {"02.01.yaml", "02.05.yaml"})
            std::filesystem::copy_file(source_root() / "tests/fixtures/grading" / id, dir / "configs/grading" / id,
                                       std::filesystem::copy_options::overwrite_existing);
    }
    std::map<std::string, std::string> env() const { return {{"LAB_CONFIG_DIR", (dir / "configs").string()}}; }
};

}  // namespace lab_test
