// `lab token`: an instructor's course key and the tokens it issues (course_token.hpp). A new key
// (--new-key FILE, written private, never over an existing one), and a roster of students turned
// into `student,token` rows to hand out (ROSTER.csv --key FILE).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "atomic_file.hpp"
#include "commands.hpp"
#include "course.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "roster.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// `student,token` rows, one per roster row (student[,email]; a header row and # comments are
// skipped). Bad rows are refused with their line: a token handed out for a typo is worse than none.
std::string roster_tokens(const fs::path& roster, const CourseKey& key, const std::string& course) {
    std::string out = "student,token\n";
    for (const auto& student : read_roster(roster)) out += student + "," + to_string(issue_token(key, course, student)) + "\n";
    return out;
}

}  // namespace

int cmd_token(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("roster", po::value<std::string>(), "CSV of students: student[,email] per row")(
        "key", po::value<std::string>()->default_value(""), "the course key file (default: $LAB_COURSE_KEY)")(
        "out", po::value<std::string>(), "write student,token here (default: standard output)")(
        "new-key", po::value<std::string>(), "write a new random course key to this file (private: mode 600)");
    po::positional_options_description pos;
    pos.add("roster", 1);
    po::variables_map vm;
    if (!parse("token", "lab token ROSTER.csv --key FILE [--out tokens.csv] | lab token --new-key FILE", args, opts, pos, vm))
        return 0;
    if (vm.count("new-key")) {
        const fs::path file = vm["new-key"].as<std::string>();
        if (fs::exists(file))
            throw UsageError("lab token: " + file.string() + " exists; a course key is never overwritten (every token it issued "
                             "would stop verifying)\n  fix: choose another file name");
        write_file_atomically(file, random_course_key() + "\n");
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
        std::cout << "wrote a new course key to " << file.string()
                  << " (keep it private: whoever holds it can issue tokens)\n";
        return 0;
    }
    if (!vm.count("roster")) throw UsageError("lab token: give a roster CSV (and --key FILE), or --new-key FILE");
    auto key_file = configured_key_file(vm["key"].as<std::string>());
    if (!key_file) throw UsageError("lab token: no course key: give --key FILE or set LAB_COURSE_KEY\n  fix: make one with `lab token --new-key FILE`");
    const CourseKey key = load_course_key(*key_file);
    const CourseConfig course = load_course(paths::config_dir() / "course.yaml");
    const std::string csv = roster_tokens(vm["roster"].as<std::string>(), key, course.course);
    if (vm.count("out")) {
        write_file_atomically(vm["out"].as<std::string>(), csv);
        std::cerr << fmt::format("wrote {} tokens to {}\n", std::count(csv.begin(), csv.end(), '\n') - 1, vm["out"].as<std::string>());
    } else {
        std::cout << csv;
    }
    return 0;
}

}  // namespace lab::cli
