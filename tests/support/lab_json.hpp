// Running `lab COMMAND ... --json` from a test and reading its one JSON document, and an empty
// ceilings cache for commands that would otherwise read this machine's (`lab model`, `lab
// checkpoint`), the CPU's model name, and a device spec with a key left out: shared by the
// calculator, checkpoint and lesson tests.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace lab_test {

// An empty ceilings cache, so no calibration of the machine running the tests leaks in.
struct EmptyCache {
    TempDir dir;
    std::map<std::string, std::string> env() const { return {{"XDG_CACHE_HOME", dir.path().string()}}; }
};

// The first CPU's model name, as the CPU backend names the device (and a calculator names the
// device whose cached ceilings it uses).
inline std::string cpu_model_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            std::string v = line.substr(line.find(':') + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            v.erase(v.find_last_not_of(" \t") + 1);
            return v;
        }
    return "";
}

// `lab COMMAND args... --json`, required to succeed.
inline nlohmann::json lab_json(const std::string& command, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> all = {command};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--json");
    auto r = run_lab(all, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

// The device spec configs/devices/<spec>.yaml of `configs` with its line of `key` left out (a spec
// may leave its bandwidth out: the calculators say what that leaves out).
inline void drop_spec_key(const QuickConfigs& configs, const std::string& spec, const std::string& key) {
    const std::filesystem::path file = configs.dir / "configs/devices" / (spec + ".yaml");
    std::string text = read_file(file);
    const std::size_t at = text.find(key + ":");
    REQUIRE(at != std::string::npos);
    text.erase(at, text.find('\n', at) + 1 - at);
    write_file(file, text);
}

}  // namespace lab_test
