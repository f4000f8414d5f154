// Test helpers (see test_support.hpp).
#include "test_support.hpp"

#include <fcntl.h>

#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace fs = std::filesystem;

namespace lab_test {

TempDir::TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lab-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const fs::path& p, const std::string& content) {
    std::ofstream out(p, std::ios::binary);
    out << content;
}

std::string gunzip_file(const fs::path& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot open " + p.string());
    std::string out;
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    gzclose(f);
    return out;
}

fs::path lab_executable() { return LAB_TEST_EXE; }
fs::path source_root() { return LAB_SOURCE_ROOT; }
fs::path build_root() { return LAB_BUILD_ROOT; }
fs::path fixture_plugin(const std::string& name) { return fs::path(LAB_TEST_FIXTURE_PLUGINS) / ("lab_" + name + ".so"); }

fs::path shared_cache_dir() {
    static TempDir shared_cache;
    return shared_cache.path();
}

LabResult run_lab(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) { return run_lab_in({}, args, env); }

LabResult run_lab_in(const fs::path& dir, const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    TempDir io;
    fs::path out = io / "stdout", err = io / "stderr";
    std::map<std::string, std::string> vars;
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    vars["XDG_CACHE_HOME"] = shared_cache_dir().string();
    // A developer's own settings never reach a test: their ~/.config/lab/config.yaml (a student
    // ID, a token) and LAB_* variables changed what tests saw. LAB_TIMEOUT, LAB_MEMORY_LIMIT and
    // LAB_SLURM_POLL_S pass: bench/sanitize.sh raises the time limit for a slower build.
    static TempDir empty_config;
    vars["XDG_CONFIG_HOME"] = empty_config.path().string();
    for (const char* own : {"LAB_PLUGIN_PATH", "LAB_STUDENT", "LAB_TOKEN", "LAB_COURSE_KEY", "LAB_CONFIG_DIR", "LAB_NO_PROGRESS",
                            "LAB_PROGRESS_AFTER", "LAB_SIMD"})
        vars.erase(own);
    for (const auto& [k, v] : env) vars[k] = v;
    std::vector<std::string> envs;
    for (const auto& [k, v] : vars) envs.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : envs) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> argv_s = {lab_executable().string()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!dir.empty()) posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + argv_s[0] + " (" + std::strerror(rc) + ")");
    int status = 0;
    waitpid(pid, &status, 0);
    LabResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

}  // namespace lab_test
