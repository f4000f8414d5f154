// Loading configs/course.yaml and deriving per-student seeds.
#include "course.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <set>

#include "digest.hpp"
#include "errors.hpp"
#include "suggest.hpp"
#include "yaml_file.hpp"

namespace lab {

CourseConfig load_course(const std::filesystem::path& file) {
    YAML::Node root = load_yaml_mapping(file, "the course file",
                                        "check the path, or set LAB_CONFIG_DIR to the folder holding course.yaml", "",
                                        "course, salt, allow_reveal, ...");
    CourseConfig c;
    c.file = file.string();
    static const std::set<std::string> known{"course", "salt", "allow_reveal", "accept_quick",
                                             "show_expected"};
    for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        if (!known.count(key))
            throw InputError(yaml_where(file, kv.first),
                             "unknown key '" + key + "'" + did_you_mean_text(key, {known.begin(), known.end()}),
                             "allowed keys: course, salt, allow_reveal, accept_quick, show_expected");
        try {
            if (key == "course") c.course = kv.second.as<std::string>();
            else if (key == "salt") c.salt = kv.second.as<std::string>();
            else if (key == "allow_reveal") c.allow_reveal = kv.second.as<bool>();
            else if (key == "accept_quick") c.accept_quick = kv.second.as<bool>();
            else if (key == "show_expected") c.show_expected = kv.second.as<std::string>();
        } catch (const YAML::Exception&) {
            // What the key takes, written out: "the wrong type" alone left the instructor to guess.
            const bool flag = key == "allow_reveal" || key == "accept_quick";
            const std::string held = kv.second.IsScalar() ? " ('" + kv.second.Scalar() + "')" : "";
            throw InputError(yaml_where(file, kv.second),
                             "'" + key + "' has a value of the wrong type" + held + (flag ? ": it is true or false" : ": it is one line of text"),
                             flag ? "write " + key + ": true or " + key + ": false" : "write " + key + ": followed by one line of text, e.g. " + key + ": \"my-course-2026\"");
        }
    }
    if (c.salt.empty())
        throw InputError(file.string(), "no 'salt'", "add a line such as: salt: \"my-course-2026\"");
    if (c.show_expected != "never" && c.show_expected != "after_due_date" && c.show_expected != "always")
        throw InputError(yaml_where(file, root["show_expected"]),
                         "show_expected must be never, after_due_date or always, not '" + c.show_expected + "'",
                         "write show_expected: never (or after_due_date, or always)");
    return c;
}

void require_reveal_allowed(const std::filesystem::path& file) {
    if (load_course(file).allow_reveal) return;
    throw UsageError("this course does not allow --reveal (allow_reveal: false in " + file.string() +
                     ")\n  fix: leave out --reveal: graded values show as '?' until you submit, and `lab submit` grades your claims");
}

std::string normalise_student(const std::string& student) {
    std::string out;
    bool pending_space = false;
    for (char ch : student) {
        unsigned char u = static_cast<unsigned char>(ch);
        if (std::isspace(u)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) out += '_';
        pending_space = false;
        out += static_cast<char>(std::tolower(u));
    }
    return out;
}

Seed student_seed(const CourseConfig& course, const std::string& lesson_id, const std::string& student) {
    Seed s;
    s.hex = sha256_hex(course.salt + "|" + lesson_id + "|" + normalise_student(student));
    s.value = std::stoull(s.hex.substr(0, 16), nullptr, 16);
    return s;
}

}  // namespace lab
