// Boost.Program_options glue shared by the subcommands: parse one subcommand's arguments, with
// every parse error turned into a UsageError that names the command and how to get help.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lab::cli {

namespace po = boost::program_options;

// Parses `args`; `--help` prints usage and returns false (the caller exits 0).
bool parse(const std::string& command, const std::string& usage, const std::vector<std::string>& args,
           const po::options_description& options, const po::positional_options_description& positional,
           po::variables_map& vm);

// The lesson's time limit in seconds: --timeout, else $LAB_TIMEOUT, else 0 (the lesson's budget
// x 3), both read by parse_time_limit (quantity_text.hpp): UsageError for one that is not a
// decimal number of seconds, below 0.1, negative, or past a week.
double timeout_seconds(const po::variables_map& vm);

// $LAB_TIMEOUT alone, checked as timeout_seconds checks it; nullopt when unset or empty.
std::optional<double> timeout_from_environment();

// UsageError (with its fix line) for a --threads below 0; 0 means all the CPUs this process may use.
void check_threads(int threads);

// The student: --student, else $LAB_STUDENT, else `student:` in ~/.config/lab/config.yaml, else "".
std::string resolve_student(const std::string& flag);

// The course token (course_token.hpp): --token, else $LAB_TOKEN, else `token:` in the user
// config, else "".
std::string resolve_token(const std::string& flag);

}  // namespace lab::cli
