// Answers files (see answers.hpp).
#include "answers.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <sstream>

#include "errors.hpp"
#include "prompt_fill.hpp"
#include "run_record.hpp"
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

// An answers file is a short list of claims written from a template: a few kilobytes. It takes no
// anchors or aliases (nothing in it repeats), so no alias can be expanded while it is read.
YamlLimits answers_limits() {
    YamlLimits l;
    l.max_bytes = kMaxAnswersBytes;
    l.max_depth = 8;
    l.max_aliases = 0;
    return l;
}

const char* const kTemplateFix = "compare with the template `lab answers ID --run RUN.json` prints";

AnswersFile read_answers(const std::filesystem::path& file, const YAML::Node& root) {
    AnswersFile a;
    a.file = file.string();
    for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        if (key != "lesson" && key != "student" && key != "run" && key != "answers")
            throw InputError(yaml_where(file, kv.first), "unknown key '" + excerpt(key) + "'", "an answers file has lesson, student, run and answers");
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
    if (!ans.IsMap()) {
        // One answer with no space after its colon (`max_batch:6`) is one word to YAML, so
        // `answers` is that word rather than a mapping: name the missing space.
        std::string why;
        if (ans.IsScalar()) {
            const std::string word = ans.as<std::string>();
            if (const std::size_t colon = word.find(':'); colon != std::string::npos && colon > 0 && colon + 1 < word.size())
                why = ": '" + excerpt(word) + "' needs a space after ':' (" + excerpt(word.substr(0, colon)) + ": " +
                      excerpt(word.substr(colon + 1)) + ")";
        }
        throw InputError(yaml_where(file, ans), "'answers' must be a mapping of question id: claim" + why);
    }
    for (const auto& kv : ans) {
        std::string id = kv.first.as<std::string>();
        Claim c;
        // A key with no value (`max_batch:22`, YAML's one key) has no mark of its own: its key's line.
        c.line = (kv.second.Mark().line >= 0 ? kv.second.Mark() : kv.first.Mark()).line + 1;
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

// An answer line with no space after its colon (`  ridge_point:6.3`) is one plain word to YAML;
// followed by another answer it makes the whole file malformed ("end of map not found"), and the
// message talks of indentation. Such lines, indented under `answers:` and not comments, with the
// space put in: the text to read again, and a note per line mended ("" lines: none mended).
std::string with_space_after_colons(const std::string& text, std::vector<std::string>& notes) {
    std::istringstream in(text);
    std::string out, line;
    for (int n = 1; std::getline(in, line); ++n) {
        const std::size_t key = line.find_first_not_of(" \t");
        const std::size_t colon = line.find(':');
        const bool cr = !line.empty() && line.back() == '\r';
        const std::string body = cr ? line.substr(0, line.size() - 1) : line;
        bool mend = key != std::string::npos && key > 0 && body[key] != '#' && colon != std::string::npos && colon > key &&
                    colon + 1 < body.size() && body[colon + 1] != ' ' && body[colon + 1] != '\t' && body[colon + 1] != ':';
        for (std::size_t k = key; mend && k < colon; ++k)
            mend = std::isalnum(static_cast<unsigned char>(body[k])) || body[k] == '_' || body[k] == '.' || body[k] == '-';
        if (mend) {
            notes.push_back("line " + std::to_string(n) + ": '" + excerpt(body.substr(key)) + "' read as " + body.substr(key, colon - key) +
                            ": " + excerpt(body.substr(colon + 1)) + " (YAML needs a space after ':')");
            line = body.substr(0, colon + 1) + " " + body.substr(colon + 1) + (cr ? "\r" : "");
        }
        out += line + "\n";
    }
    return out;
}

}  // namespace

namespace {

AnswersFile read_answers_text(const std::filesystem::path& file, const std::string& text) {
    const YAML::Node root = parse_yaml_text(text, file, "the answers file", kTemplateFix, answers_limits());
    // An empty file is most often a template written to the wrong place, or never written.
    if (root.IsNull())
        throw InputError(file.string(), "the answers file is empty (no lesson, student, run or answers)",
                         "write your run's template into it (lab answers ID --run RUN.json > " + file.string() +
                             "), then fill in the answers");
    if (!root.IsMap())
        throw InputError(yaml_where(file, root), "the answers file must be a mapping of keys (lesson, student, run, answers)", kTemplateFix);
    try {
        return read_answers(file, root);
    } catch (const YAML::Exception& e) {
        // The limits above leave no key or value yaml-cpp cannot convert; should one remain, it is
        // still the file's fault, not the grader's.
        throw InputError(e.mark.line >= 0 ? file.string() + ":" + std::to_string(e.mark.line + 1) : file.string(),
                         "cannot read the answers file: " + e.msg, kTemplateFix);
    }
}

}  // namespace

AnswersFile load_answers(const std::filesystem::path& file) {
    const YamlLimits limits = answers_limits();
    const std::string text =
        read_input_text(file, "the answers file", limits.max_bytes, "check the path");
    try {
        return read_answers_text(file, text);
    } catch (const InputError&) {
        // Refused only for want of a space after a colon (malformed YAML, or `answers` one word):
        // read with the spaces put in, and say so. Refused for another reason too: that error, at
        // the same line (only spaces were put in).
        std::vector<std::string> mended;
        const std::string spaced = with_space_after_colons(text, mended);
        if (mended.empty()) throw;
        AnswersFile a = read_answers_text(file, spaced);
        a.notes = std::move(mended);
        return a;
    }
}

bool looks_like_answers(const std::string& text) {
    // Plainly meant as answers (a top-level lesson and answers key): take it, so that loading it
    // says what is wrong and where when it is malformed, too large or not UTF-8. Only a file that
    // could be read is parsed, within the answers file's own limits.
    auto top_level_key = [&](const std::string& key) {
        return text.compare(0, key.size() + 1, key + ":") == 0 || text.find("\n" + key + ":") != std::string::npos;
    };
    const bool plainly = top_level_key("lesson") && top_level_key("answers");
    if (text.size() > kMaxAnswersBytes || first_invalid_utf8(text) != std::string::npos) return plainly;
    try {
        YAML::Node n = parse_yaml_text(text, "answers", "the answers file", "", answers_limits());
        return (n.IsMap() && n["lesson"] && n["answers"]) || plainly;
    } catch (const InputError&) {
        return plainly;
    }
}

namespace {

// "cycle" -> "cycles", "entry" -> "entries", "pass" -> "passes": the noun as a count's unit.
std::string plural(const std::string& noun) {
    const auto ends = [&](const std::string& tail) { return noun.size() > tail.size() && noun.compare(noun.size() - tail.size(), tail.size(), tail) == 0; };
    if (ends("y") && std::string("aeiou").find(noun[noun.size() - 2]) == std::string::npos) return noun.substr(0, noun.size() - 1) + "ies";
    if (ends("s") || ends("x") || ends("ch") || ends("sh")) return noun + "es";
    return noun + "s";
}

}  // namespace

std::string answers_template(const GradingSpec& spec, const nlohmann::json& record) {
    std::ostringstream out;
    out << "# Answers for lesson " << spec.lesson << ", bound to the run recorded at " << record.value("started_at", "")
        << ".\n# Write each answer after its colon. Numbers may carry units (1.2 TB/s, 350 ns, 6.5 GiB, 80%);\n"
        << "# a bare number is read in the unit the comment names. Leave none blank: a blank scores 0.\n"
        << "lesson: " << quoted(spec.lesson) << "\n"
        << "student: " << quoted(record.value("student", "")) << "\n"
        << "run: " << quoted(record.value("digest", "")) << "\n"
        << "answers:\n";
    // The run's own variant in the prompts (question_seq -> 2048), from the values the record
    // shows: a withheld (graded) value is not among them.
    auto shown = [&](const std::string& name) -> std::optional<std::string> {
        const auto& metrics = record.contains("metrics") && record["metrics"].is_object() ? record["metrics"] : nlohmann::json::object();
        if (!metrics.contains(name) || !metrics[name].is_object() || !metrics[name].contains("value")) return std::nullopt;
        const auto& m = metrics[name];
        MetricValue v;
        v.name = name;
        v.unit = m.value("unit", "");
        const std::string kind = m.value("kind", "number");
        if (m["value"].is_string()) v.kind = MetricKind::category, v.text = m["value"].get<std::string>();
        else if (m["value"].is_number()) v.kind = kind == "integer" ? MetricKind::integer : MetricKind::number, v.number = m["value"].get<double>();
        else return std::nullopt;
        return record::format_value(v);
    };
    for (const auto& q : spec.questions) {
        out << "  # " << fill_prompt(q.prompt, shown);
        if (!q.unit.empty()) out << " [" << q.unit << "]";
        // A count's noun: "567 cycles" is read as 567, and the student should know it may be written.
        else if (!q.noun.empty()) out << " [" << plural(q.noun) << "]";
        if (q.type == QuestionType::choice) {
            out << " (one of:";
            for (const auto& o : q.options) out << " " << o;
            out << ")";
        }
        // A side of the ridge: two choices, not four.
        if (q.type == QuestionType::regime) out << " (" << or_list(regime_choices(q)) << ")";
        if (q.type == QuestionType::boolean) out << " (yes or no)";
        out << "\n  " << q.id << ":\n";
    }
    return out.str();
}

}  // namespace lab::grader
