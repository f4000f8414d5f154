// Command-line parsing helpers (see options.hpp).
#include "options.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include "errors.hpp"
#include "suggest.hpp"

namespace lab::cli {

bool parse(const std::string& command, const std::string& usage, const std::vector<std::string>& args,
           const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm) {
    po::options_description all = options;
    all.add_options()("help,h", "show this help");
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
        if (vm.count("help")) {
            // The positional arguments are in the usage line (ID, FILE); the list is the options.
            std::set<std::string> positional_names;
            for (unsigned i = 0; i < positional.max_total_count() && i < 16; ++i) positional_names.insert(positional.name_for_position(i));
            po::options_description shown("options");
            for (const auto& o : all.options())
                if (!positional_names.count(o->long_name())) shown.add(o);
            std::cout << "usage: " << usage << "\n\n" << shown << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        // main() says "lab: " first; the usage line names the command.
        throw UsageError(std::string(e.what()) + "\n  usage: " + usage + "\n  fix: see `lab " + command + " --help`");
    }
    return true;
}

namespace {

// A value of ~/.config/lab/config.yaml ($XDG_CONFIG_HOME/lab/config.yaml), "" when unset.
std::string user_config_value(const std::string& key) {
    std::filesystem::path cfg;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) cfg = std::filesystem::path(xdg) / "lab/config.yaml";
    else if (const char* home = std::getenv("HOME"); home && *home) cfg = std::filesystem::path(home) / ".config/lab/config.yaml";
    if (cfg.empty() || !std::filesystem::exists(cfg)) return "";
    try {
        YAML::Node n = YAML::LoadFile(cfg.string());
        // A misspelt key would silently leave the run anonymous: say so, once per command.
        static bool warned = false;
        if (n.IsMap() && !warned) {
            warned = true;
            for (const auto& kv : n) {
                const std::string k = kv.first.Scalar();
                if (k != "student" && k != "token")
                    std::cerr << "warning: " << cfg.string() << ":" << kv.first.Mark().line + 1 << ": unknown key '" << k << "'"
                              << did_you_mean_text(k, {"student", "token"}) << ", ignored (the file holds student: and token:)\n";
            }
        }
        if (!n.IsMap() || !n[key]) return "";
        if (!n[key].IsScalar())
            throw InputError(cfg.string() + ":" + std::to_string(n[key].Mark().line + 1), "'" + key + "' must be a single value",
                             "write it as " + key + ": VALUE");
        return n[key].as<std::string>();
    } catch (const YAML::Exception& e) {
        throw InputError(cfg.string() + ":" + std::to_string(e.mark.line + 1), "the user config is not valid YAML: " + e.msg,
                         "fix or delete the file");
    }
}

std::string from_flag_env_or_config(const std::string& flag, const char* env_name, const std::string& key) {
    if (!flag.empty()) return flag;
    if (const char* env = std::getenv(env_name); env && *env) return env;
    return user_config_value(key);
}

}  // namespace

std::string resolve_student(const std::string& flag) { return from_flag_env_or_config(flag, "LAB_STUDENT", "student"); }

std::string resolve_token(const std::string& flag) { return from_flag_env_or_config(flag, "LAB_TOKEN", "token"); }

}  // namespace lab::cli
