// `lab token`: an instructor's course key and the tokens it issues (course_token.hpp). A new key
// (--new-key FILE, written private, never over an existing one), and a roster of students turned
// into `student,token` rows to hand out (ROSTER.csv --key FILE, or with --new-key: a key made
// and used at once). Tokens are credentials: the file is written private too.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "atomic_file.hpp"
#include "command_files.hpp"
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

// `student,token` rows, one per roster student (roster.hpp: the IDs the autograder will compare
// runs with). Bad rows are refused with their line: a token handed out for a typo is worse than none.
std::string roster_tokens(const grader::Roster& roster, const CourseKey& key, const std::string& course) {
    std::string out = "student,token\n";
    for (const auto& s : roster.students) out += s.id + "," + to_string(issue_token(key, course, s.id)) + "\n";
    return out;
}

}  // namespace

int cmd_token(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("roster", po::value<std::string>(), "CSV of students, one per row, under a header naming its columns")(
        "identity", po::value<std::string>()->default_value(""),
        "which roster column is the student ID: student, email_local, email, sid, name (as the autograder's LAB_IDENTITY; "
        "default: a 'student' or 'id' column, else the email's part before @, else the first column)")(
        "key", po::value<std::string>()->default_value(""), "the course key file (default: $LAB_COURSE_KEY)")(
        "out", po::value<std::string>(), "write student,token here, private (default: standard output)")(
        "new-key", po::value<std::string>(), "write a new random course key to this file (private: mode 600)");
    po::positional_options_description pos;
    pos.add("roster", 1);
    po::variables_map vm;
    if (!parse("token", "lab token ROSTER.csv --key FILE [--identity COLUMN] [--out tokens.csv] | lab token [ROSTER.csv] --new-key FILE",
               args, opts, pos, vm))
        return 0;
    // Two outputs on one path would leave one of them (the new key under the tokens, say).
    if (vm.count("new-key")) claim_output(vm["new-key"].as<std::string>(), "--new-key");
    if (vm.count("out")) claim_output(vm["out"].as<std::string>(), "--out");
    // A roster is read before a new key is written: a roster refused leaves nothing behind.
    std::optional<grader::Roster> roster;
    if (vm.count("roster")) roster = grader::read_roster(vm["roster"].as<std::string>(), vm["identity"].as<std::string>());
    else if (!vm["identity"].as<std::string>().empty()) throw UsageError("--identity reads a roster: give ROSTER.csv");
    std::optional<fs::path> key_file;
    if (vm.count("new-key")) {
        const fs::path file = vm["new-key"].as<std::string>();
        if (fs::exists(file))
            throw UsageError(file.string() + " exists; a course key is never overwritten (every token it issued "
                             "would stop verifying)\n  fix: choose another file name");
        write_file_atomically(file, random_course_key() + "\n");
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
        (roster ? std::cerr : std::cout) << "wrote a new course key to " << file.string()
                                          << " (keep it private: whoever holds it can issue tokens)\n";
        if (!roster) return 0;
        key_file = file;
    } else {
        if (!roster) throw UsageError("give a roster CSV (and --key FILE), or --new-key FILE");
        key_file = configured_key_file(vm["key"].as<std::string>());
        if (!key_file) throw UsageError("no course key: give --key FILE or set LAB_COURSE_KEY\n  fix: make one with `lab token --new-key FILE`");
    }
    const CourseKey key = load_course_key(*key_file);
    const CourseConfig course = load_course(paths::config_dir() / "course.yaml");
    const std::string csv = roster_tokens(*roster, key, course.course);
    // Said every time: IDs read by another rule than the autograder's refuse the whole class.
    std::cerr << fmt::format("{} students; IDs read from {}: they must be what the autograder's LAB_IDENTITY gives "
                             "(email_local unless set), else use --identity\n",
                             roster->students.size(), roster->rule);
    if (!roster->warning.empty()) std::cerr << "warning: " << roster->warning << "\n";
    if (roster->staff_skipped)
        std::cerr << fmt::format("left out {} row{} whose Role is not Student (staff get no token)\n", roster->staff_skipped,
                                 roster->staff_skipped == 1 ? "" : "s");
    if (vm.count("out")) {
        const fs::path out = vm["out"].as<std::string>();
        claim_output(out, "--out");  // now that the roster and the key are read: --out KEY would replace the key
        write_file_atomically(out, csv);
        // Private when it is a file of its own; standard output (/dev/stdout, even sent to a file)
        // and a terminal or a pipe keep their mode.
        if (std::error_code ec; fs::is_regular_file(out, ec) && !names_a_stream(out))
            fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
        std::cerr << fmt::format("wrote {} tokens to {} (private: each token is a student's credential)\n", roster->students.size(),
                                 out.string());
    } else {
        std::cout << csv;
    }
    return 0;
}

}  // namespace lab::cli
