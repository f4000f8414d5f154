// Answers files (see answers.hpp).
#include "answers.hpp"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <sstream>

#include "errors.hpp"
#include "yaml_file.hpp"

namespace lab::grader {

namespace {

// YAML strings need quotes when they could be read as something else.
std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

AnswersFile load_answers(const std::filesystem::path& file) {
    YAML::Node root = load_yaml_mapping(file, "the answers file", "check the path",
                                        "compare with the template `lab answers ID --run RUN.json` prints",
                                        "lesson, student, run, answers");
    AnswersFile a;
    a.file = file.string();
    for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        if (key != "lesson" && key != "student" && key != "run" && key != "answers")
            throw InputError(yaml_where(file, kv.first), "unknown key '" + key + "'", "an answers file has lesson, student, run and answers");
    }
    auto text = [&](const char* key, std::string& out) {
        if (!root[key]) throw InputError(file.string(), std::string("no '") + key + "'",
                                         "start from the template `lab answers ID --run RUN.json` prints");
        if (!root[key].IsScalar()) throw InputError(yaml_where(file, root[key]), std::string("'") + key + "' must be a single value");
        out = root[key].as<std::string>();
    };
    text("lesson", a.lesson);
    text("student", a.student);
    text("run", a.run);
    const YAML::Node& ans = root["answers"];
    if (!ans) throw InputError(file.string(), "no 'answers'", "add an 'answers:' mapping of question id: claim");
    if (ans.IsNull()) return a;
    if (!ans.IsMap()) throw InputError(yaml_where(file, ans), "'answers' must be a mapping of question id: claim");
    for (const auto& kv : ans) {
        std::string id = kv.first.as<std::string>();
        Claim c;
        c.line = kv.second.Mark().line + 1;
        if (kv.second.IsNull()) {
            c.empty = true;
        } else if (kv.second.IsScalar()) {
            c.text = kv.second.as<std::string>();
            c.empty = c.text.empty();
        } else {
            throw InputError(yaml_where(file, kv.second), "the answer to '" + id + "' is a list or mapping", "write one value, such as 1.2 TB/s");
        }
        if (!a.answers.emplace(id, c).second) throw InputError(yaml_where(file, kv.first), "'" + id + "' is answered twice");
    }
    return a;
}

bool looks_like_answers(const std::string& text) {
    try {
        YAML::Node n = YAML::Load(text);
        return n.IsMap() && n["lesson"] && n["answers"];
    } catch (const YAML::Exception&) {
        // Malformed, but plainly meant as answers: take it, so loading says what is wrong and where.
        static const std::regex lesson("(^|\n)lesson:"), answers("(^|\n)answers:");
        return std::regex_search(text, lesson) && std::regex_search(text, answers);
    }
}

std::string answers_template(const GradingSpec& spec, const nlohmann::json& record) {
    std::ostringstream out;
    out << "# Answers for lesson " << spec.lesson << ", bound to the run recorded at " << record.value("started_at", "")
        << ".\n# Write each answer after its colon. Numbers may carry units (1.2 TB/s, 350 ns, 6.5 GiB, 80%);\n"
        << "# a bare number is read in the unit the comment names. Leave none blank: a blank scores 0.\n"
        << "lesson: " << quoted(spec.lesson) << "\n"
        << "student: " << quoted(record.value("student", "")) << "\n"
        << "run: " << quoted(record.value("digest", "")) << "\n"
        << "answers:\n";
    for (const auto& q : spec.questions) {
        out << "  # " << q.prompt;
        if (!q.unit.empty()) out << " [" << q.unit << "]";
        if (q.type == QuestionType::choice) {
            out << " (one of:";
            for (const auto& o : q.options) out << " " << o;
            out << ")";
        }
        if (q.type == QuestionType::regime) out << " (compute_bound, memory_bound, overhead_bound or latency_bound)";
        if (q.type == QuestionType::boolean) out << " (yes or no)";
        out << "\n  " << q.id << ":\n";
    }
    return out.str();
}

}  // namespace lab::grader
