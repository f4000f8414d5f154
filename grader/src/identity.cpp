// A run's identity checks (see identity.hpp).
#include "identity.hpp"

namespace lab::grader {

std::vector<std::string> identity_problems(const nlohmann::json& record, const RawRun& raw, const CourseConfig& course,
                                           const std::optional<CourseKey>& key) {
    std::vector<std::string> problems;
    const std::string& lesson = raw.lesson_id;
    const std::string student = normalise_student(raw.options.student);
    const std::string token_text = record.contains("token") && record["token"].is_string() ? record["token"].get<std::string>() : "";
    const std::string again = "record your own run with `lab run " + lesson + " --token YOUR_TOKEN`";

    if (key) {
        if (student.empty() || student == "anonymous")
            problems.push_back("the run is anonymous: " + again);
        if (record.value("revealed", false))
            problems.push_back("the run was recorded with --reveal, which shows the graded values: " + again + " (without --reveal)");
    }
    if (token_text.empty()) {
        if (key) {
            problems.push_back("the run was recorded without a course token: " + again +
                               " (your instructor gave you the token; it may also be set as LAB_TOKEN or token: in ~/.config/lab/config.yaml)");
            return problems;
        }
        // Practice: the variant is the one the course salt gives this student.
        if (student_seed(course, lesson, raw.options.student).hex != raw.options.seed_hex)
            problems.push_back("implausible: the run's per-student variant (seed) is not " + raw.options.student + "'s: record your own run");
        return problems;
    }
    auto token = parse_token(token_text);
    if (!token) {
        problems.push_back("the run's course token is malformed: " + again);
        return problems;
    }
    if (token->student != student)
        problems.push_back("the run's course token is " + token->student + "'s, but the run is recorded for " + raw.options.student +
                           ": " + again);
    else if (key && !token_verifies(*key, course.course, *token))
        problems.push_back("the run's course token was not issued by this course's key to " + token->student +
                           ": check the token with your instructor, then " + again);
    if (token_seed(*token, lesson).hex != raw.options.seed_hex)
        problems.push_back("implausible: the run's per-student variant (seed) is not the one its token gives: " + again);
    return problems;
}

}  // namespace lab::grader
