// Running `lab COMMAND ... --json` from a test and reading its one JSON document, and an empty
// ceilings cache for commands that would otherwise read this machine's (`lab model`, `lab
// checkpoint`), and the CPU's model name: shared by the calculator, checkpoint and lesson tests.
#pragma once

#include <catch2/catch.hpp>

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

}  // namespace lab_test
