// Where lab keeps its cache and looks for the user config (paths.hpp): the XDG variables only
// when absolute, and without HOME a cache of this user's own.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "paths.hpp"

namespace {

// Sets (or, with nullopt, unsets) environment variables for one test, and puts them back after.
class ScopedEnv {
public:
    explicit ScopedEnv(const std::map<std::string, std::optional<std::string>>& vars) {
        for (const auto& [k, v] : vars) {
            const char* was = std::getenv(k.c_str());
            saved_[k] = was ? std::optional<std::string>(was) : std::nullopt;
            set(k, v);
        }
    }
    ~ScopedEnv() {
        for (const auto& [k, v] : saved_) set(k, v);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    static void set(const std::string& k, const std::optional<std::string>& v) {
        if (v) ::setenv(k.c_str(), v->c_str(), 1);
        else ::unsetenv(k.c_str());
    }
    std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace

// Relative values were read against the current folder: a cache (and a config) per folder lab
// ran in. The XDG Base Directory spec says to ignore them.
TEST_CASE("a relative XDG_CACHE_HOME or XDG_CONFIG_HOME is ignored, an absolute one used", "[paths]") {
    ScopedEnv env({{"HOME", "/home/ada"}, {"XDG_CACHE_HOME", "cache"}, {"XDG_CONFIG_HOME", "./config"}});
    CHECK(lab::paths::cache_dir() == "/home/ada/.cache/lab");
    CHECK(lab::paths::user_config_file() == "/home/ada/.config/lab/config.yaml");
    CHECK(lab::paths::xdg_home("XDG_CACHE_HOME").empty());

    ScopedEnv absolute({{"XDG_CACHE_HOME", "/srv/cache"}, {"XDG_CONFIG_HOME", "/srv/config"}});
    CHECK(lab::paths::cache_dir() == "/srv/cache/lab");
    CHECK(lab::paths::user_config_file() == "/srv/config/lab/config.yaml");
}

// One /tmp/lab-cache for everyone let another user read root's ceilings or plant their own, and
// once root had made it, no one else could cache at all.
TEST_CASE("without HOME the cache is a private folder of this user's own in the temporary folder", "[paths]") {
    ScopedEnv env({{"HOME", std::nullopt}, {"XDG_CACHE_HOME", std::nullopt}});
    const std::filesystem::path dir = lab::paths::cache_dir();
    CHECK(dir == std::filesystem::temp_directory_path() / ("lab-cache-" + std::to_string(::geteuid())));
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK(st.st_uid == ::geteuid());
    CHECK((st.st_mode & 077) == 0);
}
