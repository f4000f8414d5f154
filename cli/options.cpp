// Command-line parsing helpers (see options.hpp).
#include "options.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "errors.hpp"
#include "paths.hpp"
#include "quantity_text.hpp"
#include "suggest.hpp"
#include "yaml_file.hpp"

namespace lab::cli {

namespace {

// The positional arguments' names, in order (boost repeats the last one for an unlimited count).
std::vector<std::string> positional_names(const po::positional_options_description& positional) {
    std::vector<std::string> names;
    for (unsigned i = 0; i < positional.max_total_count() && i < 16; ++i) names.push_back(positional.name_for_position(i));
    return names;
}

// The word of the usage line that stands for positional argument `index` ("lab run ID [...]": 0 is
// "ID"), or "" when the line does not have one there.
std::string usage_word(const std::string& usage, std::size_t index) {
    std::istringstream words(usage);
    std::string w;
    words >> w >> w;  // "lab", the command
    for (std::size_t i = 0; words >> w;) {
        if (w.empty() || w[0] == '[' || w[0] == '-' || w == "|") return "";
        if (i++ == index) return w;
    }
    return "";
}

// boost names a positional argument left out as an option ("the option '--id' is required but
// missing"), which no user can give: say what the argument is, as the usage line writes it.
std::string missing_positional(const std::string& command, const std::string& usage, const std::string& name, std::size_t index,
                               const po::options_description& options) {
    std::string word = usage_word(usage, index);
    if (word.empty()) {
        word = name;
        for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (name == "id" && command != "new") return "a lesson ID is required: lab " + command + " " + word + " (`lab list` shows the lessons)";
    const po::option_description* o = options.find_nothrow(name, false);
    const std::string what = o && !o->description().empty() ? " (" + o->description() + ")" : "";
    return word + " is required" + what + ": lab " + command + " " + word;
}

// Whether option `o` takes an unsigned number (a count, a seed).
bool takes_unsigned(const po::option_description& o) {
    const po::value_semantic* v = o.semantic().get();
    return dynamic_cast<const po::typed_value<unsigned>*>(v) || dynamic_cast<const po::typed_value<unsigned long>*>(v) ||
           dynamic_cast<const po::typed_value<unsigned long long>*>(v);
}

// Boost reads "-1" for an unsigned option as its type's largest value (--largest -1 listed every
// tensor, --seed -1 was 4294967295): refused here, for every command, from the text given.
void refuse_negative_unsigned(const std::string& command, const po::parsed_options& parsed, const po::options_description& all) {
    for (const po::option& given : parsed.options) {
        const po::option_description* o = given.string_key.empty() ? nullptr : all.find_nothrow(given.string_key, false);
        if (!o || !takes_unsigned(*o)) continue;
        for (const std::string& value : given.value) {
            const std::size_t lead = value.find_first_not_of(" \t");
            if (lead == std::string::npos || value[lead] != '-') continue;
            const std::string flag = "--" + o->long_name();
            // Not "0 or more": some (--batch) start at 1, and the command says so once the sign is right.
            throw UsageError(flag + " is negative (" + value + "): it takes a whole number, never below 0\n  fix: give " + flag +
                             " a whole number in its range; see `lab " + command + " --help`");
        }
    }
}

}  // namespace

bool parse(const std::string& command, const std::string& usage, const std::vector<std::string>& args,
           const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm) {
    po::options_description all = options;
    all.add_options()("help,h", "show this help");
    const std::vector<std::string> positionals = positional_names(positional);
    // main() says "lab: " first; the usage line names the command.
    auto usage_error = [&](const std::string& what) {
        return UsageError(what + "\n  usage: " + usage + "\n  fix: see `lab " + command + " --help`");
    };
    try {
        const po::parsed_options parsed = po::command_line_parser(args).options(all).positional(positional).run();
        refuse_negative_unsigned(command, parsed, all);
        po::store(parsed, vm);
        if (vm.count("help")) {
            // The positional arguments are in the usage line (ID, FILE); the list is the options.
            po::options_description shown("options");
            for (const auto& o : all.options())
                if (std::find(positionals.begin(), positionals.end(), o->long_name()) == positionals.end()) shown.add(o);
            std::cout << "usage: " << usage << "\n\n" << shown << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::required_option& e) {
        std::string name = e.get_option_name();
        name.erase(0, name.find_first_not_of('-'));
        const auto at = std::find(positionals.begin(), positionals.end(), name);
        if (at == positionals.end()) throw usage_error(e.what());
        throw usage_error(missing_positional(command, usage, name, static_cast<std::size_t>(at - positionals.begin()), options));
    } catch (const po::error& e) {
        throw usage_error(e.what());
    }
    return true;
}

namespace {

// A value of ~/.config/lab/config.yaml ($XDG_CONFIG_HOME/lab/config.yaml), "" when unset.
std::string user_config_value(const std::string& key) {
    const std::filesystem::path cfg = paths::user_config_file();
    if (cfg.empty() || !std::filesystem::exists(cfg)) return "";
    try {
        // Read as every input file is (a folder, a key written twice, not UTF-8: each said with
        // its line); a file of nothing but comments or blanks sets nothing.
        const YamlLimits limits{.max_bytes = 64 << 10, .max_depth = 4, .max_aliases = 0};
        const std::string text = read_input_text(cfg, "the user config", limits.max_bytes,
                                                 "it must be a file holding student: and token:, or absent");
        YAML::Node n = parse_yaml_text(text, cfg, "the user config", "fix or delete the file", limits);
        if (n.IsNull()) return "";
        if (!n.IsMap())
            throw InputError(yaml_where(cfg, n), "the user config must be a mapping of keys (student: NAME and token: TOKEN)",
                             "fix or delete the file");
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
        // yaml-cpp reads `student: "jane` (the closing quote missing) as jane, where the student
        // may have meant more: a quote opened on the value's line must close there.
        // The text as read (UTF-16 converted), not the file's bytes.
        std::istringstream in(text);
        std::string line;
        for (int l = 0; l <= n[key].Mark().line && std::getline(in, line);) ++l;
        if (const std::size_t q = line.find_first_not_of(" \t", line.find(':') + 1);
            q != std::string::npos && (line[q] == '"' || line[q] == '\'') && line.find(line[q], q + 1) == std::string::npos)
            throw InputError(cfg.string() + ":" + std::to_string(n[key].Mark().line + 1), "the quote opening '" + key + "' is never closed",
                             "close it on the same line: " + key + ": " + line.substr(q, line.find_last_not_of(" \t\r") + 1 - q) + line[q]);
        return n[key].as<std::string>();
    } catch (const YAML::Exception& e) {
        throw InputError(cfg.string() + ":" + std::to_string(e.mark.line + 1), "the user config is not valid YAML: " + e.msg,
                         "fix or delete the file");
    }
}

std::string from_flag_env_or_config(const std::string& flag, const char* env_name, const std::string& key) {
    const char* env = std::getenv(env_name);
    if (!flag.empty() || (env && *env)) {
        // Not needed this time, but read for its warnings: a misspelt key (studnet:) would
        // otherwise go unsaid until the day the flag is left off and the run is anonymous. Its
        // errors are for the command that needs the file.
        try {
            user_config_value(key);
        } catch (const std::exception&) {
        }
        return !flag.empty() ? flag : std::string(env);
    }
    return user_config_value(key);
}

}  // namespace

std::optional<double> timeout_from_environment() { return time_limit_from_environment(); }

double timeout_seconds(const po::variables_map& vm) {
    // One reading for --timeout and LAB_TIMEOUT (quantity_text.hpp): the option was a double
    // Boost read, taking 1e3 where the variable refused it.
    if (vm.count("timeout") && !vm["timeout"].defaulted()) {
        const std::string t = vm["timeout"].as<std::string>();
        return parse_time_limit(t, "--timeout " + t);
    }
    if (const auto t = timeout_from_environment()) return *t;
    return vm.count("timeout") ? parse_time_limit(vm["timeout"].as<std::string>(), "--timeout") : 0;
}

void check_threads(int threads) {
    if (threads < 0)
        throw UsageError("--threads must be positive, not " + std::to_string(threads) +
                         "\n  fix: give a number of CPU threads (--threads 2), or 0 (the default) for all the CPUs this process may use");
}

std::string resolve_student(const std::string& flag) { return from_flag_env_or_config(flag, "LAB_STUDENT", "student"); }

std::string resolve_token(const std::string& flag) { return from_flag_env_or_config(flag, "LAB_TOKEN", "token"); }

}  // namespace lab::cli
