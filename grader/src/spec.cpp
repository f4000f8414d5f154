// Grading specs: schema, loading, checking (see spec.hpp).
#include "spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "errors.hpp"
#include "yaml_file.hpp"
#include "lab/roofline.hpp"
#include "units.hpp"

namespace lab::grader {

const char* to_string(QuestionType t) {
    switch (t) {
        case QuestionType::number: return "number";
        case QuestionType::integer: return "integer";
        case QuestionType::choice: return "choice";
        case QuestionType::regime: return "regime";
        case QuestionType::boolean: return "bool";
    }
    return "?";
}

const std::vector<KeyDoc>& schema() {
    static const std::vector<KeyDoc> keys = {
        {"spec", "lesson", "the lesson ID this spec grades (must match the plugin)", "required"},
        {"spec", "accept_quick", "whether runs made with --quick are graded", "course.yaml's accept_quick"},
        {"spec", "show_expected", "when students see expected values: never, after_due_date, always",
         "course.yaml's show_expected"},
        {"spec", "due", "due date (YYYY-MM-DD, UTC) for show_expected: after_due_date", "none (expected never shown)"},
        {"spec", "questions", "the list of questions", "required"},
        {"question", "id", "a unique identifier: letters, digits, _ . -; the key in answers files", "required"},
        {"question", "prompt", "the question as the student reads it", "required"},
        {"question", "type", "number, integer, choice (with options), regime, bool", "number"},
        {"question", "options", "the allowed answers of a choice question", "required for choice"},
        {"question", "expected", "{metric: NAME} (derived from the run) or {value: CONSTANT}", "required"},
        {"question", "tolerance", "how close a number must be: {rel, abs} or {factor} or {steps, sweep|sweep_param}",
         "exact (rel 0, abs 0)"},
        {"question", "partial", "{within: W, credit: C}: C of the points within W times the tolerance", "no partial credit"},
        {"question", "near_ridge_either", "regime questions: either side passes when the AI is within x/÷ this factor of the ridge",
         "off"},
        {"question", "points", "points for a correct answer", "1"},
        {"question", "hidden", "hide the result from students until grades are published", "false"},
        {"question", "hint", "shown to the student when the answer is not correct", "none"},
        {"question", "unit", "the unit a bare number is read in (GB/s, us, %, ...); its dimension must match the metric's",
         "the metric's SI unit"},
        {"question", "applies_to", "device kinds the question applies to ([cpu], [cuda]); elsewhere it is void", "all"},
        {"tolerance", "rel", "relative tolerance (0.1 = 10%)", "0"},
        {"tolerance", "abs", "absolute tolerance, in the question's unit", "0"},
        {"tolerance", "factor", "within x/÷ factor of the expected value (> 1)", "none"},
        {"tolerance", "steps", "within N points of a sweep", "none"},
        {"tolerance", "sweep", "the sweep's points, in the question's unit", "none"},
        {"tolerance", "sweep_param", "a workload parameter whose values in the run form the sweep", "none"},
        {"partial", "within", "multiple of the tolerance that still earns partial credit (> 1)", "required"},
        {"partial", "credit", "fraction of the points given (0 < credit < 1)", "required"},
        {"expected", "metric", "a metric the lesson declares", "one of metric/value"},
        {"expected", "value", "a constant", "one of metric/value"},
    };
    return keys;
}

namespace {

struct Ctx {
    std::filesystem::path file;
    std::string at(const YAML::Node& n) const { return yaml_where(file, n); }
};

void check_keys(const Ctx& c, const YAML::Node& map, const char* where) {
    std::set<std::string> allowed;
    for (const auto& k : schema())
        if (std::string(k.where) == where) allowed.insert(k.key);
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    for (const auto& kv : map) {
        std::string key = kv.first.as<std::string>();
        if (!allowed.count(key))
            throw InputError(c.at(kv.first), std::string("unknown key '") + key + "' in a " + where,
                             std::string("allowed keys: ") + list);
    }
}

template <class T> T get(const Ctx& c, const YAML::Node& n, const char* what) {
    try {
        return n.as<T>();
    } catch (const YAML::Exception&) {
        throw InputError(c.at(n), std::string("'") + what + "' has a value of the wrong type");
    }
}

double non_negative(const Ctx& c, const YAML::Node& n, const char* what) {
    double v = get<double>(c, n, what);
    if (!std::isfinite(v) || v < 0) throw InputError(c.at(n), std::string("'") + what + "' must be a non-negative number");
    return v;
}

QuestionType parse_type(const Ctx& c, const YAML::Node& n) {
    std::string t = get<std::string>(c, n, "type");
    if (t == "number") return QuestionType::number;
    if (t == "integer") return QuestionType::integer;
    if (t == "choice") return QuestionType::choice;
    if (t == "regime") return QuestionType::regime;
    if (t == "bool") return QuestionType::boolean;
    throw InputError(c.at(n), "unknown question type '" + t + "'", "use number, integer, choice, regime or bool");
}

Question parse_question(const Ctx& c, const YAML::Node& q) {
    if (!q.IsMap()) throw InputError(c.at(q), "a question must be a mapping of keys");
    check_keys(c, q, "question");
    Question out;
    out.line = q.Mark().line + 1;
    if (!q["id"]) throw InputError(c.at(q), "a question without an 'id'");
    out.id = get<std::string>(c, q["id"], "id");
    static const std::regex id_ok("[A-Za-z0-9_.-]+");
    if (!std::regex_match(out.id, id_ok))
        throw InputError(c.at(q["id"]), "question id '" + out.id + "' has characters other than letters, digits, _ . -");
    if (!q["prompt"]) throw InputError(c.at(q), "question '" + out.id + "' has no 'prompt'");
    out.prompt = get<std::string>(c, q["prompt"], "prompt");
    if (q["type"]) out.type = parse_type(c, q["type"]);
    if (q["options"]) {
        if (!q["options"].IsSequence()) throw InputError(c.at(q["options"]), "'options' must be a list");
        for (const auto& o : q["options"]) out.options.push_back(get<std::string>(c, o, "options"));
    }
    if (out.type == QuestionType::choice && out.options.size() < 2)
        throw InputError(c.at(q), "choice question '" + out.id + "' needs 'options' (at least two)");
    if (!q["expected"]) throw InputError(c.at(q), "question '" + out.id + "' has no 'expected'");
    const YAML::Node& e = q["expected"];
    if (!e.IsMap()) throw InputError(c.at(e), "'expected' must be {metric: NAME} or {value: CONSTANT}");
    check_keys(c, e, "expected");
    if (e["metric"] && e["value"]) throw InputError(c.at(e), "'expected' has both 'metric' and 'value': keep one");
    if (e["metric"]) out.expected.metric = get<std::string>(c, e["metric"], "metric");
    else if (e["value"]) out.expected.value = get<std::string>(c, e["value"], "value");
    else throw InputError(c.at(e), "'expected' needs 'metric' or 'value'");
    if (q["unit"]) {
        out.unit = get<std::string>(c, q["unit"], "unit");
        if (!units::dimension_of(out.unit))
            throw InputError(c.at(q["unit"]), "unknown unit '" + out.unit + "'", "use SI units such as s, us, GB/s, TFLOP/s, FLOP/B, %");
    }
    if (q["tolerance"]) {
        const YAML::Node& t = q["tolerance"];
        if (!t.IsMap()) throw InputError(c.at(t), "'tolerance' must be a mapping such as {rel: 0.1}");
        check_keys(c, t, "tolerance");
        // Tolerances are written in the question's unit: convert absolute ones to SI once here.
        auto si = [&](double v) { return out.unit.empty() ? v : units::from_unit(v, out.unit); };
        if (t["rel"]) out.tolerance.rel = non_negative(c, t["rel"], "rel");
        if (t["abs"]) out.tolerance.abs = si(non_negative(c, t["abs"], "abs"));
        if (t["factor"]) {
            out.tolerance.factor = non_negative(c, t["factor"], "factor");
            if (*out.tolerance.factor < 1) throw InputError(c.at(t["factor"]), "'factor' must be at least 1 (x/÷ factor)");
        }
        if (t["steps"]) {
            double s = non_negative(c, t["steps"], "steps");
            out.tolerance.steps = static_cast<int>(s);
            if (t["sweep"]) {
                for (const auto& v : t["sweep"]) out.tolerance.sweep.push_back(si(get<double>(c, v, "sweep")));
            } else if (t["sweep_param"]) {
                out.tolerance.sweep_param = get<std::string>(c, t["sweep_param"], "sweep_param");
            } else {
                throw InputError(c.at(t), "'steps' needs the sweep: 'sweep: [...]' or 'sweep_param: NAME'");
            }
        }
        if ((out.tolerance.rel || out.tolerance.abs) && (out.tolerance.factor || out.tolerance.steps))
            throw InputError(c.at(t), "use one kind of tolerance: rel/abs, factor, or steps");
    }
    if (q["partial"]) {
        const YAML::Node& p = q["partial"];
        if (!p.IsMap()) throw InputError(c.at(p), "'partial' must be {within: W, credit: C}");
        check_keys(c, p, "partial");
        if (!p["within"] || !p["credit"]) throw InputError(c.at(p), "'partial' needs both 'within' and 'credit'");
        out.partial.within = non_negative(c, p["within"], "within");
        out.partial.credit = non_negative(c, p["credit"], "credit");
        if (out.partial.within <= 1) throw InputError(c.at(p["within"]), "'within' must be more than 1 (a multiple of the tolerance)");
        if (out.partial.credit <= 0 || out.partial.credit >= 1)
            throw InputError(c.at(p["credit"]), "'credit' must be between 0 and 1 (a fraction of the points)");
    }
    if (q["near_ridge_either"]) {
        out.near_ridge_either = non_negative(c, q["near_ridge_either"], "near_ridge_either");
        if (out.type != QuestionType::regime)
            throw InputError(c.at(q["near_ridge_either"]), "'near_ridge_either' applies to regime questions only");
        if (out.near_ridge_either < 1) throw InputError(c.at(q["near_ridge_either"]), "'near_ridge_either' is a factor: at least 1");
    }
    if (q["points"]) out.points = non_negative(c, q["points"], "points");
    if (q["hidden"]) out.hidden = get<bool>(c, q["hidden"], "hidden");
    if (q["hint"]) out.hint = get<std::string>(c, q["hint"], "hint");
    if (q["applies_to"]) {
        // `applies_to: cuda` means [cuda]: a scalar would otherwise iterate as nothing.
        YAML::Node list = q["applies_to"];
        if (list.IsScalar()) {
            YAML::Node seq(YAML::NodeType::Sequence);
            seq.push_back(list);
            list = seq;
        }
        for (const auto& d : list) {
            std::string kind = get<std::string>(c, d, "applies_to");
            if (kind != "cpu" && kind != "cuda")
                throw InputError(c.at(d), "unknown device kind '" + kind + "' in applies_to", "use cpu or cuda");
            out.applies_to.push_back(kind);
        }
    }
    if (out.expected.value) {
        // A constant answer must itself be a valid answer of the question's type.
        const std::string& v = *out.expected.value;
        if (out.type == QuestionType::regime && !roofline::parse_regime(v))
            throw InputError(c.at(e["value"]), "'" + v + "' is not a regime");
        if (out.type == QuestionType::choice)  // one option, or "A or B": either of two options
            for (std::size_t b = 0, end; b <= v.size(); b = end + 4) {
                end = std::min(v.find(" or ", b), v.size());
                if (std::find(out.options.begin(), out.options.end(), v.substr(b, end - b)) == out.options.end())
                    throw InputError(c.at(e["value"]), "'" + v + "' is not one of the options (or two of them joined by ' or ')");
            }
        if (out.type == QuestionType::number || out.type == QuestionType::integer) {
            try {
                units::parse_claim(v, out.unit);
            } catch (const units::UnitError& err) {
                throw InputError(c.at(e["value"]), err.what());
            }
        }
    }
    return out;
}

}  // namespace

GradingSpec load_spec(const std::filesystem::path& file, bool default_accept_quick, const std::string& default_show_expected) {
    Ctx c{file};
    YAML::Node root = load_yaml_mapping(file, "the grading spec", "check the path", "", "lesson, questions, ...");
    check_keys(c, root, "spec");
    GradingSpec s;
    s.file = file.string();
    s.accept_quick = default_accept_quick;
    s.show_expected = default_show_expected;
    if (!root["lesson"]) throw InputError(file.string(), "no 'lesson'", "add a line such as: lesson: \"02.05\"");
    s.lesson = get<std::string>(c, root["lesson"], "lesson");
    if (root["accept_quick"]) s.accept_quick = get<bool>(c, root["accept_quick"], "accept_quick");
    if (root["show_expected"]) s.show_expected = get<std::string>(c, root["show_expected"], "show_expected");
    if (s.show_expected != "never" && s.show_expected != "after_due_date" && s.show_expected != "always")
        throw InputError(c.at(root["show_expected"]), "show_expected must be never, after_due_date or always");
    if (root["due"]) {
        s.due = get<std::string>(c, root["due"], "due");
        static const std::regex date("[0-9]{4}-[0-9]{2}-[0-9]{2}");
        if (!std::regex_match(s.due, date)) throw InputError(c.at(root["due"]), "'due' must be a date, YYYY-MM-DD");
    }
    if (!root["questions"] || !root["questions"].IsSequence() || root["questions"].size() == 0)
        throw InputError(file.string(), "no 'questions' list", "add at least one question");
    std::set<std::string> ids;
    for (const auto& q : root["questions"]) {
        Question parsed = parse_question(c, q);
        if (!ids.insert(parsed.id).second)
            throw InputError(c.at(q), "two questions have the id '" + parsed.id + "'", "ids must be unique");
        s.questions.push_back(std::move(parsed));
    }
    return s;
}

void check_spec_against(const GradingSpec& spec, const LessonInfo& info) {
    if (spec.lesson != info.id)
        throw InputError(spec.file, "the spec is for lesson '" + spec.lesson + "' but the plugin is lesson '" + info.id + "'");
    for (const auto& q : spec.questions) {
        std::string where = spec.file + ":" + std::to_string(q.line);
        if (q.expected.metric.empty()) continue;
        const MetricDecl* m = nullptr;
        for (const auto& d : info.metrics)
            if (d.name == q.expected.metric) m = &d;
        if (!m)
            throw InputError(where, "question '" + q.id + "' names metric '" + q.expected.metric + "', which lesson " + info.id +
                                        " does not declare",
                             "see `lab info " + info.id + "` for its metrics");
        bool numeric = q.type == QuestionType::number || q.type == QuestionType::integer;
        if (numeric && m->kind == MetricKind::category)
            throw InputError(where, "question '" + q.id + "' is a " + to_string(q.type) + " question but metric '" + m->name +
                                        "' is a category");
        if (!numeric && m->kind != MetricKind::category && q.type != QuestionType::boolean)
            throw InputError(where, "question '" + q.id + "' is a " + to_string(q.type) + " question but metric '" + m->name +
                                        "' is a number");
        if (q.type == QuestionType::integer && m->kind != MetricKind::integer)
            throw InputError(where, "question '" + q.id + "' asks for an integer but metric '" + m->name + "' is not one");
        if (numeric) {
            auto metric_dim = units::dimension_of(m->unit);
            auto q_dim = units::dimension_of(q.unit.empty() ? m->unit : q.unit);
            if (!metric_dim || !q_dim || *metric_dim != *q_dim)
                throw InputError(where, "question '" + q.id + "' reads answers in '" + q.unit + "' but metric '" + m->name +
                                            "' is in '" + m->unit + "' (another dimension)",
                                 "use a unit of the metric's dimension");
        }
        for (const auto& kind : q.applies_to)
            if (std::find(m->devices.begin(), m->devices.end(), kind) == m->devices.end())
                throw InputError(where, "question '" + q.id + "' applies to " + kind + " but metric '" + m->name +
                                            "' is not produced there");
    }
}

}  // namespace lab::grader
