// Grading specs: schema, loading, checking (see spec.hpp).
#include "spec.hpp"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "digest.hpp"
#include "errors.hpp"
#include "lesson_host.hpp"
#include "lesson_plan.hpp"
#include "suggest.hpp"
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
        {"spec", "due", "due date (YYYY-MM-DD, UTC; a real calendar date) for show_expected: after_due_date",
         "none (expected never shown)"},
        {"spec", "questions", "the list of questions", "required"},
        {"question", "id", "a unique identifier: letters, digits, _ . -; the key in answers files", "required"},
        {"question", "prompt", "the question as the student reads it", "required"},
        {"question", "type", "number, integer, choice (with options), regime, bool", "number"},
        {"question", "options",
         "the allowed answers of a choice question; of a regime question, the regimes it offers (when only some can be expected)",
         "required for choice; regime: memory_bound and compute_bound for a *.predicted_regime, else all four"},
        {"question", "expected", "{metric: NAME} (derived from the run) or {value: CONSTANT}", "required"},
        {"question", "tolerance", "how close a number must be: {rel, abs} or {factor} or {steps, sweep|sweep_param}",
         "exact (rel 0, abs 0): refused on a number question whose metric is a measured number"},
        {"question", "partial", "{within: W, credit: C}: C of the points within W times the tolerance (a factor's: x/÷ factor^W)", "no partial credit"},
        {"question", "near_ridge_either", "regime questions: either side passes when the AI is within x/÷ this factor of the ridge",
         "off"},
        {"question", "points", "points for a correct answer (0 to 1000)", "1"},
        {"question", "hidden", "hide the result from students until grades are published", "false"},
        {"question", "hint", "shown to the student when the answer is not correct", "none"},
        {"question", "unit", "the unit a bare number is read in (GB/s, us, %, ...); its dimension must match the metric's",
         "the metric's SI unit"},
        {"question", "noun", "count questions (integer, or number with no unit): what is counted, singular (token), or a list "
         "of words for it ([sync, event]); an answer may end with them or their plurals (12853 tokens, 41 sync events)",
         "none (a word after a count is refused with a message)"},
        {"question", "applies_to", "device kinds the question applies to ([cpu], [cuda]); elsewhere it is void", "all"},
        {"question", "carried_from",
         "number questions worked out from earlier ones: {ID: POWER, ...} (cycles from a latency: {l1_latency: 1}; a ratio: "
         "{dram_latency: 1, l1_latency: -1}); an answer within tolerance of the expected value x (the student's answer / its "
         "expected value)^POWER for each, each earlier answer within x/÷ 3 of its expected value, scores as correct, so an "
         "error is charged once, where it was made; not from a hidden question into a visible one, nor between sweep (steps) questions",
         "none (graded against the run alone)"},
        {"tolerance", "rel", "relative tolerance, a fraction below 1 (0.1 = 10%; wider: use factor)", "0"},
        {"tolerance", "abs", "absolute tolerance, in the question's unit (at most 100 in a % question)", "0"},
        {"tolerance", "factor", "within x/÷ factor of the expected value (> 1)", "none"},
        {"tolerance", "steps",
         "within N points of a sweep (a whole number, 0 or more); the answer and the expected value each count as their "
         "nearest point (on a log scale when the sweep is geometric), so a value between points, such as an interpolated "
         "crossover, scores as the point nearest to it, and the expected value itself, to the precision lab prints it, "
         "always scores",
         "none"},
        {"tolerance", "sweep", "the sweep's points, in the question's unit: a list of at least two numbers", "none"},
        {"tolerance", "sweep_param", "a workload parameter whose values in the run form the sweep", "none"},
        {"partial", "within", "multiple of the tolerance that still earns partial credit (> 1; with factor F the band is x/÷ F^W)", "required"},
        {"partial", "credit", "fraction of the points given (0 < credit < 1)", "required"},
        {"expected", "metric", "a metric the lesson declares", "one of metric/value"},
        {"expected", "value", "a constant", "one of metric/value"},
    };
    return keys;
}

std::string option_key(const std::string& s) {
    // Separators as they arrive pasted from a document: the blanks a claim's number may carry
    // (units::leading_blank: no-break, thin, narrow no-break spaces), the Unicode hyphens and the
    // en dash ("memory\u00a0bound", "compute\u2011bound").
    static const std::string_view dashes[] = {"\u2010", "\u2011", "\u2013"};
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        const char ch = s[i];
        std::size_t sep = ch == '-' || ch == '_' ? 1 : units::leading_blank(std::string_view(s).substr(i));
        for (std::string_view w : dashes)
            if (!sep && s.compare(i, w.size(), w) == 0) sep = w.size();
        if (sep) {
            if (!out.empty() && out.back() != '_') out += '_';
            i += sep;
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            ++i;
        }
    }
    if (!out.empty() && out.back() == '_') out.pop_back();
    return out;
}

std::string choice_key(const std::string& s) {
    std::string key = option_key(s);
    key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
    return key;
}

namespace {

struct Ctx {
    std::filesystem::path file;
    // Set while parsing a node a question reaches through an alias (`tolerance: *t`): the line
    // of the question's key. The node's own marks point at its anchor, usually in an earlier
    // question, where the same tolerance may be fine (`abs: 150` in GB/s, not in %).
    int alias_line = 0;
    std::string at(const YAML::Node& n) const {
        if (alias_line <= 0 || n.Mark().line < 0) return yaml_where(file, n);
        return file.string() + ":" + std::to_string(alias_line) + ": through the alias of line " + std::to_string(n.Mark().line + 1);
    }
};

void check_keys(const Ctx& c, const YAML::Node& map, const char* where) {
    std::set<std::string> allowed;
    for (const auto& k : schema())
        if (std::string(k.where) == where) allowed.insert(k.key);
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    std::string previous_value;  // the scalar before this key, to spot a decimal comma
    for (const auto& kv : map) {
        std::string key = kv.first.as<std::string>();
        const bool digits = !key.empty() && std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        // `{rel: 0,05}`: in a flow mapping the comma ends `rel: 0` and `05` becomes a key.
        if (!allowed.count(key) && digits && !previous_value.empty() &&
            std::all_of(previous_value.begin(), previous_value.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            throw InputError(c.at(kv.first), "'" + previous_value + "," + key + "' in a " + std::string(where) +
                                                 " reads as " + previous_value + " and a key '" + key + "': a decimal comma",
                             "write a decimal point: " + previous_value + "." + key);
        previous_value = kv.second.IsScalar() ? kv.second.Scalar() : "";
        if (!allowed.count(key))
            throw InputError(c.at(kv.first),
                             std::string("unknown key '") + excerpt(key) + "' in " + (std::string("aeiou").find(where[0]) != std::string::npos ? "an " : "a ") + where +
                                 did_you_mean_text(key, std::vector<std::string>(allowed.begin(), allowed.end())),
                             std::string("allowed keys: ") + list);
    }
}

// What a key of type T holds, said in words for the refusal's fix.
template <class T> const char* expected_kind() {
    if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "a whole number";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "text";
}

template <class T> T get(const Ctx& c, const YAML::Node& n, const char* what) {
    try {
        return n.as<T>();
    } catch (const YAML::Exception&) {
        const std::string held = n.IsScalar() ? " ('" + excerpt(n.Scalar(), 40) + "')" : n.IsSequence() ? " (a list)" : n.IsMap() ? " (a mapping)" : "";
        throw InputError(c.at(n), std::string("'") + what + "' has a value of the wrong type" + held,
                         std::string("write ") + expected_kind<T>());
    }
}

// What a number key of the spec holds, with an example, for the fix of a value that is not one:
// "wrong type" alone leaves an instructor guessing whether 10% or 0.1 is meant.
std::string number_example(const std::string& key) {
    static const std::map<std::string, std::string> examples = {
        {"rel", "rel: 0.1 for 10%"},
        {"abs", "abs: 2, in the question's unit"},
        {"factor", "factor: 2 for within x/÷ 2"},
        {"steps", "steps: 1"},
        {"sweep", "sweep: [1, 2, 4, 8]"},
        {"within", "within: 2 for twice the tolerance"},
        {"credit", "credit: 0.5 for half the points"},
        {"points", "points: 2"},
        {"near_ridge_either", "near_ridge_either: 1.5"},
    };
    const auto it = examples.find(key);
    return it == examples.end() ? "a number" : "a number, e.g. " + it->second;
}

// A finite number. yaml-cpp reads .inf and .nan as numbers and refuses 1e400 as "not a number";
// both are said for what they are.
double finite(const Ctx& c, const YAML::Node& n, const char* what) {
    double v = 0;
    try {
        v = n.as<double>();
    } catch (const YAML::Exception&) {
        const std::string text = n.IsScalar() ? n.Scalar() : "";
        const bool numeric = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos &&
                             text.find_first_of("0123456789") != std::string::npos;
        if (numeric)
            throw InputError(c.at(n), fmt::format("'{}: {}' is beyond the range of a number", what, excerpt(text, 40)),
                             "write a number of ordinary size");
        const std::string held = n.IsScalar() ? " ('" + excerpt(text, 40) + "')" : n.IsSequence() ? " (a list)" : n.IsMap() ? " (a mapping)" : "";
        // "rel: 10%": a percentage where a fraction is read.
        std::string meant;
        if (std::string(what) == "rel" && text.size() > 1 && text.back() == '%') {
            char* end = nullptr;
            const double pct = std::strtod(text.c_str(), &end);
            if (end == text.c_str() + text.size() - 1 && std::isfinite(pct)) meant = fmt::format("; did you mean rel: {:g}?", pct / 100);
        }
        throw InputError(c.at(n), std::string("'") + what + "' has a value of the wrong type" + held + meant, "write " + number_example(what));
    }
    if (!std::isfinite(v))
        throw InputError(c.at(n), std::string("'") + what + "' must be a finite number, not " + excerpt(n.Scalar()), "write " + number_example(what));
    return v;
}

double non_negative(const Ctx& c, const YAML::Node& n, const char* what) {
    double v = finite(c, n, what);
    if (v < 0)
        throw InputError(c.at(n), std::string("'") + what + "' must be a non-negative number, not " + excerpt(n.Scalar(), 40),
                         "write " + number_example(what));
    return v;
}

// Question ids are keys of answers files and columns of gradebooks.
bool valid_id(const std::string& id) {
    return !id.empty() && std::all_of(id.begin(), id.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
    });
}

// YYYY-MM-DD naming a day of the calendar: due dates are compared as text, so 2026-13-45 would
// be "after" every real date of 2026 and silently never (or always) pass.
bool valid_date(const std::string& d) {
    if (d.size() != 10 || d[4] != '-' || d[7] != '-') return false;
    for (int i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (d[i] < '0' || d[i] > '9') return false;
    const int year = std::stoi(d.substr(0, 4)), month = std::stoi(d.substr(5, 2)), day = std::stoi(d.substr(8, 2));
    if (month < 1 || month > 12 || day < 1) return false;
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return day <= days[month - 1] + (month == 2 && leap ? 1 : 0);
}

// The tolerance's keys, each value checked for what an instructor may have meant by it.
void parse_tolerance(const Ctx& c, const YAML::Node& t, Question& out) {
    if (!t.IsMap())
        throw InputError(c.at(t), "'tolerance' must be a mapping", "write it as tolerance: {rel: 0.1} (10%), {abs: 2}, {factor: 2} or {steps: 1, sweep: [...]}");
    check_keys(c, t, "tolerance");
    // Tolerances are written in the question's unit: convert absolute ones to SI once here.
    auto si = [&](double v) { return out.unit.empty() ? v : units::from_unit(v, out.unit); };
    if (t["rel"]) {
        const double rel = non_negative(c, t["rel"], "rel");
        // rel is a fraction: "rel: 5" meant as 5% would accept 20 against 3.95. A tolerance of
        // 100% or more accepts nearly anything, so it is refused rather than guessed at.
        if (rel >= 1)
            throw InputError(c.at(t["rel"]),
                             fmt::format("rel: {} is {:g}%: rel is a fraction of the expected value; did you mean {:g}?",
                                         excerpt(t["rel"].Scalar()), rel * 100, rel / 100),
                             "write a fraction below 1 (rel: 0.05 is 5%); for a range of a decade or more use factor: F "
                             "(within x/÷ F)");
        out.tolerance.rel = rel;
    }
    if (t["abs"]) {
        const double abs = non_negative(c, t["abs"], "abs");
        // In a "%" question, 100 percentage points already accept every fraction from 0 to 100%.
        if (out.unit == "%" && abs > 100)
            throw InputError(c.at(t["abs"]),
                             fmt::format("abs: {} is {:g} percentage points: every answer from 0 to 100% would pass; did you mean "
                                         "{:g}?",
                                         excerpt(t["abs"].Scalar()), abs, abs / 100),
                             "write the tolerance in percentage points (abs: 3 is ±3%)");
        out.tolerance.abs = si(abs);
    }
    if (t["factor"]) {
        out.tolerance.factor = non_negative(c, t["factor"], "factor");
        // factor: 0.5 is most likely "from half to twice": the same band as factor: 2.
        if (const double f = *out.tolerance.factor; f < 1)
            throw InputError(c.at(t["factor"]),
                             "'factor' must be at least 1 (x/÷ factor)" + (f > 0 ? fmt::format("; did you mean factor: {:g}?", 1 / f) : std::string()),
                             "write a factor above 1: factor: 2 accepts from half to twice the expected value");
    }
    if (t["steps"]) {
        // A number of sweep points: 1.7 would be truncated to 1 without a word.
        const double steps = non_negative(c, t["steps"], "steps");
        if (steps != std::floor(steps) || steps > 1000)
            throw InputError(c.at(t["steps"]), "steps: " + excerpt(t["steps"].Scalar()) + " is not a whole number of sweep points (0 to 1000)",
                             "write a whole number, 0 or more (steps: 1 accepts the next point on either side)");
        out.tolerance.steps = static_cast<int>(steps);
        if (t["sweep"] && t["sweep_param"])
            throw InputError(c.at(t), "'steps' has both 'sweep' and 'sweep_param'", "keep one: the points, or the parameter that gives them");
        if (t["sweep"]) {
            // A scalar would iterate as nothing: an empty sweep marks every answer wrong.
            const YAML::Node& sweep = t["sweep"];
            if (!sweep.IsSequence() || sweep.size() < 2)
                throw InputError(c.at(sweep), "'sweep' must be a list of at least two numbers", "write it as sweep: [1, 2, 4, 8]");
            for (const auto& v : sweep) out.tolerance.sweep.push_back(si(finite(c, v, "sweep")));
            std::vector<double> distinct = out.tolerance.sweep;
            std::sort(distinct.begin(), distinct.end());
            if (std::unique(distinct.begin(), distinct.end()) - distinct.begin() < 2)
                throw InputError(c.at(sweep), "'sweep' must hold at least two different points", "write it as sweep: [1, 2, 4, 8]");
        } else if (t["sweep_param"]) {
            out.tolerance.sweep_param = get<std::string>(c, t["sweep_param"], "sweep_param");
        } else {
            throw InputError(c.at(t), "'steps' needs the sweep",
                             "add sweep: [1, 2, 4, 8] (the points, in the question's unit) or sweep_param: NAME (a workload parameter)");
        }
    } else if (t["sweep"] || t["sweep_param"]) {
        throw InputError(c.at(t["sweep"] ? t["sweep"] : t["sweep_param"]), "a sweep without 'steps' is never used",
                         "add steps: N (how many sweep points off an answer may be)");
    }
    if ((out.tolerance.rel || out.tolerance.abs) && (out.tolerance.factor || out.tolerance.steps))
        throw InputError(c.at(t), "a tolerance of two kinds: rel/abs and " + std::string(out.tolerance.factor ? "factor" : "steps"),
                         "use one kind of tolerance: rel/abs, factor, or steps");
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

// Where each key of `map` is written, under `parent.` (a nested mapping or list of a question). A
// nested node reached through an alias (`tolerance: *t`) was written at its anchor, in another
// question, usually: its keys are placed at the parent key's line here instead.
void record_key_lines(const YAML::Node& map, const std::string& parent, Question& out) {
    const int parent_line = parent.empty() ? out.line : out.key_lines[parent];
    auto put = [&](const std::string& key, const YAML::Node& at) {
        const int line = at.Mark().line + 1;
        out.key_lines[parent.empty() ? key : parent + "." + key] = line >= parent_line ? line : parent_line;
    };
    if (map.IsMap()) {
        for (const auto& kv : map)
            if (kv.first.IsScalar()) put(kv.first.Scalar(), kv.first);
    } else if (map.IsSequence()) {
        for (const auto& item : map)
            if (item.IsScalar()) put(item.Scalar(), item);
    }
}

Question parse_question(const Ctx& c, const YAML::Node& q) {
    if (!q.IsMap())
        throw InputError(c.at(q), "a question must be a mapping of keys", "write each question as - id: NAME, then prompt:, expected: and its other keys");
    check_keys(c, q, "question");
    Question out;
    out.line = q.Mark().line + 1;
    record_key_lines(q, "", out);
    if (!q["id"]) throw InputError(c.at(q), "a question without an 'id'", "add id: NAME (letters, digits, _ . -): the key of the answers file");
    out.id = get<std::string>(c, q["id"], "id");
    if (!valid_id(out.id))
        throw InputError(c.at(q["id"]), "question id '" + excerpt(out.id) + "' has characters other than letters, digits, _ . -",
                         "the id is the answers file's key: write it with _ for spaces (e.g. ridge_point)");
    const std::string write_prompt = "write the question as the student reads it, e.g. prompt: \"What bandwidth did the stride-1 read reach?\"";
    if (!q["prompt"]) throw InputError(c.at(q), "question '" + out.id + "' has no 'prompt'", "add one: " + write_prompt);
    // `prompt:` with nothing after it is null, not text: as empty as prompt: "", and said so.
    out.prompt = q["prompt"].IsNull() ? "" : get<std::string>(c, q["prompt"], "prompt");
    // The answers template shows the prompt as the question's comment: a blank one asks nothing.
    if (out.prompt.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(c.file.string() + ":" + std::to_string(out.line_of("prompt")), "question '" + out.id + "' has an empty 'prompt'",
                         write_prompt);
    if (q["type"]) out.type = parse_type(c, q["type"]);
    if (q["options"]) {
        if (!q["options"].IsSequence())
            throw InputError(c.at(q["options"]), "'options' must be a list", "write them as options: [first, second]");
        for (const auto& o : q["options"]) out.options.push_back(get<std::string>(c, o, "options"));
    }
    if (out.type == QuestionType::choice && out.options.size() < 2)
        throw InputError(c.at(q), "choice question '" + out.id + "' needs 'options' (at least two)",
                         "list the answers a student may give, e.g. options: [gemm, gemv]");
    if (out.type == QuestionType::regime && !out.options.empty()) {
        for (std::size_t i = 0; i < out.options.size(); ++i)
            if (!roofline::parse_regime(out.options[i]))
                throw InputError(c.at(q["options"][i]), "option '" + out.options[i] + "' of regime question '" + out.id + "' is not a regime",
                                 "list regimes: compute_bound, memory_bound, overhead_bound, latency_bound");
        if (out.options.size() < 2)
            throw InputError(c.at(q["options"]), "regime question '" + out.id + "' offers one regime: it needs two or more",
                             "list the regimes the answer can be, or leave 'options' out for all four");
        // Two names of one regime (left, memory_bound; bandwidth_bound, memory_bound) offer it once.
        for (std::size_t i = 0; i < out.options.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (roofline::parse_regime(out.options[i]) == roofline::parse_regime(out.options[j]))
                    throw InputError(c.at(q["options"][i]),
                                     "options '" + out.options[j] + "' and '" + out.options[i] + "' of regime question '" + out.id +
                                         "' are one regime (" + roofline::to_string(*roofline::parse_regime(out.options[i])) + ")",
                                     "list each regime once: compute_bound, memory_bound, overhead_bound, latency_bound");
    }
    for (std::size_t i = 0; i < out.options.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (choice_key(out.options[i]) == choice_key(out.options[j]))
                throw InputError(c.at(q["options"][i]),
                                 "options '" + out.options[j] + "' and '" + out.options[i] +
                                     "' are one answer to the grader (case, spaces, hyphens and underscores are not compared)",
                                 "make the options differ in a letter or a digit, or keep one of them");
    const std::string write_expected = "write expected: {metric: NAME} (a metric of the lesson: `lab info ID` lists them) or expected: {value: CONSTANT}";
    if (!q["expected"]) throw InputError(c.at(q), "question '" + out.id + "' has no 'expected'", write_expected);
    const YAML::Node& e = q["expected"];
    if (!e.IsMap()) throw InputError(c.at(e), "'expected' must be a mapping", write_expected);
    check_keys(c, e, "expected");
    record_key_lines(e, "expected", out);
    if (e["metric"] && e["value"])
        throw InputError(c.at(e), "'expected' has both 'metric' and 'value'", "keep one: the metric the answer is derived from, or a constant");
    if (e["metric"]) out.expected.metric = get<std::string>(c, e["metric"], "metric");
    else if (e["value"]) out.expected.value = get<std::string>(c, e["value"], "value");
    else throw InputError(c.at(e), "'expected' needs 'metric' or 'value'", write_expected);
    if (q["unit"]) {
        out.unit = get<std::string>(c, q["unit"], "unit");
        if (!units::dimension_of(out.unit)) {
            const std::string hint = units::unit_hint(out.unit);
            throw InputError(c.at(q["unit"]), "unknown unit '" + out.unit + "'" + (hint.empty() ? "" : ": " + hint),
                             "use SI units such as s, us, GB/s, TFLOP/s, FLOP/B, %");
        }
    }
    if (q["noun"]) {
        // One word, or a list of them: what a student may call the thing counted ("41 syncs",
        // "41 sync events"); the first is the one the answers template names.
        const YAML::Node& n = q["noun"];
        if (n.IsSequence()) {
            for (std::size_t i = 0; i < n.size(); ++i) out.nouns.push_back(get<std::string>(c, n[i], "noun"));
            if (out.nouns.empty()) throw InputError(c.at(n), "noun: an empty list", "write one word, such as noun: token, or a list of them");
        } else {
            out.nouns.push_back(get<std::string>(c, n, "noun"));
        }
        out.noun = out.nouns.front();
        for (const auto& word_text : out.nouns) {
            const bool word = !word_text.empty() && std::all_of(word_text.begin(), word_text.end(), [](char ch) {
                return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
            });
            if (!word) throw InputError(c.at(n), "noun: '" + excerpt(word_text) + "' is not one word of letters", "write it singular, such as noun: token");
        }
        if (out.type != QuestionType::number && out.type != QuestionType::integer)
            throw InputError(c.at(q["noun"]), "'noun' applies to count questions (integer or number) only",
                             "remove it, or make the question type: integer");
        if (!out.unit.empty() && units::dimension_of(out.unit) != "")
            throw InputError(c.at(q["noun"]), "'noun' applies to plain counts, not to a question in " + out.unit,
                             "remove it: an answer with a unit carries its unit");
    }
    if (q["tolerance"]) {
        // Anchors come before their aliases: a tolerance whose mark lies before this question was
        // written elsewhere and is used here through an alias.
        Ctx here = c;
        if (q["tolerance"].Mark().line + 1 < out.line) here.alias_line = out.key_lines["tolerance"];
        parse_tolerance(here, q["tolerance"], out);
        record_key_lines(q["tolerance"], "tolerance", out);
    }
    if (q["partial"]) {
        const YAML::Node& p = q["partial"];
        const std::string write_partial = "write partial: {within: 2, credit: 0.5} (half the points within twice the tolerance)";
        if (!p.IsMap()) throw InputError(c.at(p), "'partial' must be a mapping", write_partial);
        check_keys(c, p, "partial");
        if (!p["within"] || !p["credit"]) throw InputError(c.at(p), "'partial' needs both 'within' and 'credit'", write_partial);
        // Each checked for its whole range at once: credit: -0.5 and credit: 1.5 get the same words.
        out.partial.within = finite(c, p["within"], "within");
        out.partial.credit = finite(c, p["credit"], "credit");
        if (out.partial.within <= 1)
            throw InputError(c.at(p["within"]), "'within' must be more than 1 (a multiple of the tolerance), not " + excerpt(p["within"].Scalar(), 40),
                             "write a multiple above 1, e.g. within: 2 for twice the tolerance");
        if (out.partial.credit <= 0 || out.partial.credit >= 1)
            throw InputError(c.at(p["credit"]), "'credit' must be between 0 and 1 (a fraction of the points), not " + excerpt(p["credit"].Scalar(), 40),
                             "write 0.5 for half the points");
    }
    if (q["carried_from"]) {
        const YAML::Node& cf = q["carried_from"];
        const std::string write = "write carried_from: {l1_latency: 1} (an earlier question's id and the power its answer enters with)";
        if (!cf.IsMap() || cf.size() == 0) throw InputError(c.at(cf), "'carried_from' must be a mapping of earlier question ids to powers", write);
        if (out.type != QuestionType::number && out.type != QuestionType::integer)
            throw InputError(c.at(cf), "'carried_from' applies to number and integer questions only", "remove it, or make the question a number");
        for (const auto& kv : cf) {
            const std::string id = kv.first.as<std::string>();
            const double power = finite(c, kv.second, "carried_from");
            // A power of 0 carries nothing; past 3 no course formula goes (a volume is a cube).
            if (power == 0 || std::fabs(power) > 3)
                throw InputError(c.at(kv.second), "carried_from: " + excerpt(id) + ": " + excerpt(kv.second.Scalar(), 20) + " is not a power from -3 to 3 other than 0", write);
            out.carried_from.push_back({id, power});
        }
    }
    if (q["near_ridge_either"]) {
        out.near_ridge_either = non_negative(c, q["near_ridge_either"], "near_ridge_either");
        if (out.type != QuestionType::regime)
            throw InputError(c.at(q["near_ridge_either"]), "'near_ridge_either' applies to regime questions only",
                             "remove it, or make the question type: regime");
        if (out.near_ridge_either < 1)
            throw InputError(c.at(q["near_ridge_either"]), "'near_ridge_either' is a factor: at least 1",
                             "write " + number_example("near_ridge_either") + " (either side within x/÷ 1.5 of the ridge)");
    }
    if (q["points"]) {
        out.points = non_negative(c, q["points"], "points");
        // A spec's total is summed and written in results.json: 1e308 points made it infinite (null).
        if (out.points > 1000)
            throw InputError(c.at(q["points"]), "points: " + excerpt(q["points"].Scalar(), 40) + " is more than any question is worth (at most 1000)",
                             "write the question's points, e.g. points: 2");
    }
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
        record_key_lines(list, "applies_to", out);
    }
    if (out.expected.value) {
        // A constant answer must itself be a valid answer of the question's type.
        const std::string& v = *out.expected.value;
        if (out.type == QuestionType::regime && !roofline::parse_regime(v))
            throw InputError(c.at(e["value"]), "'" + v + "' is not a regime", "write compute_bound, memory_bound, overhead_bound or latency_bound");
        if (out.type == QuestionType::regime && !out.options.empty() &&
            std::none_of(out.options.begin(), out.options.end(), [&](const std::string& o) { return roofline::parse_regime(o) == roofline::parse_regime(v); }))
            throw InputError(c.at(e["value"]), "'" + v + "' is not one of the regimes the question offers (options)",
                             "add it to options, or expect one of them");
        if (out.type == QuestionType::choice)  // one option, or "A or B": either of two options
            for (std::size_t b = 0, end; b <= v.size(); b = end + 4) {
                end = std::min(v.find(" or ", b), v.size());
                if (std::none_of(out.options.begin(), out.options.end(),
                                 [&](const std::string& o) { return choice_key(o) == choice_key(v.substr(b, end - b)); }))
                    throw InputError(c.at(e["value"]), "'" + v + "' is not one of the options (or two of them joined by ' or ')",
                                     "expect one of the options, spelt as in options:");
            }
        if (out.type == QuestionType::number || out.type == QuestionType::integer) {
            try {
                units::parse_claim(v, out.unit);
            } catch (const units::UnitError& err) {
                throw InputError(c.at(e["value"]), err.what(), "write the value as an answer to this question would be written");
            }
        }
    }
    return out;
}

GradingSpec read_spec(const Ctx& c, const YAML::Node& root, bool default_accept_quick, const std::string& default_show_expected) {
    const std::filesystem::path& file = c.file;
    check_keys(c, root, "spec");
    GradingSpec s;
    s.file = file.string();
    s.accept_quick = default_accept_quick;
    s.show_expected = default_show_expected;
    if (!root["lesson"]) throw InputError(file.string(), "no 'lesson'", "add a line such as: lesson: \"02.05\"");
    s.lesson = get<std::string>(c, root["lesson"], "lesson");
    for (const auto& kv : root)
        if (kv.first.IsScalar() && kv.first.Scalar() == "lesson") s.lesson_line = kv.first.Mark().line + 1;
    if (root["accept_quick"]) s.accept_quick = get<bool>(c, root["accept_quick"], "accept_quick");
    if (root["show_expected"]) {
        s.show_expected = get<std::string>(c, root["show_expected"], "show_expected");
        s.show_expected_line = root["show_expected"].Mark().line + 1;
    }
    if (s.show_expected != "never" && s.show_expected != "after_due_date" && s.show_expected != "always")
        throw InputError(c.at(root["show_expected"]), "show_expected must be never, after_due_date or always",
                         "write one of them (after_due_date needs a due: date)");
    if (root["due"]) {
        s.due = get<std::string>(c, root["due"], "due");
        if (!valid_date(s.due))
            throw InputError(c.at(root["due"]), "due: " + excerpt(s.due) + " is not a date of the calendar",
                             "write it as YYYY-MM-DD with a month from 01 to 12 and a day that month has, such as 2026-03-31");
    }
    // Said at the `questions:` line where there is one: `questions: []` is written somewhere.
    std::string questions_at = file.string();
    for (const auto& kv : root)
        if (kv.first.IsScalar() && kv.first.Scalar() == "questions") questions_at += ":" + std::to_string(kv.first.Mark().line + 1);
    const std::string add_question = "add at least one question under questions:, as - id: NAME with its prompt: and expected: "
                                     "(lab check-spec --keys lists every key)";
    if (!root["questions"]) throw InputError(file.string(), "no 'questions' list", add_question);
    if (!root["questions"].IsSequence() && !root["questions"].IsNull())
        throw InputError(questions_at, "'questions' must be a list of questions", add_question);
    if (root["questions"].size() == 0) throw InputError(questions_at, "'questions' is empty: the spec grades nothing", add_question);
    std::set<std::string> ids;
    for (const auto& q : root["questions"]) {
        Question parsed = parse_question(c, q);
        if (!ids.insert(parsed.id).second)
            throw InputError(c.at(q), "two questions have the id '" + parsed.id + "'", "give each question its own id: ids are the answers file's keys");
        // Carried from a question graded before this one, as a number: the student's answer to it
        // is known when this one is graded.
        for (const auto& [from, power] : parsed.carried_from) {
            const auto earlier = std::find_if(s.questions.begin(), s.questions.end(), [&](const Question& e) { return e.id == from; });
            const std::string at = c.file.string() + ":" + std::to_string(parsed.line_of("carried_from"));
            if (earlier == s.questions.end()) {
                std::vector<std::string> before;
                for (const auto& e : s.questions) before.push_back(e.id);
                throw InputError(at, "carried_from names '" + excerpt(from) + "', which is no question before '" + parsed.id + "'" +
                                         did_you_mean_text(from, before),
                                 "name an earlier number question of this spec (questions are graded in order)");
            }
            if (earlier->type != QuestionType::number && earlier->type != QuestionType::integer)
                throw InputError(at, "carried_from names '" + from + "', which is not a number question", "carry only from a number or integer question");
            // A sweep answer counts as its nearest point, so its ratio to the expected value says
            // nothing of how far off it was.
            if (earlier->tolerance.steps || parsed.tolerance.steps)
                throw InputError(at, "carried_from on a sweep question ('" + (parsed.tolerance.steps ? parsed.id : from) + "', tolerance: steps)",
                                 "carry only between questions with a rel, abs or factor tolerance");
            // The visible verdict would depend on the hidden answer: resubmitting would read it.
            if (earlier->hidden && !parsed.hidden)
                throw InputError(at, "carried_from names '" + from + "', a hidden question, from '" + parsed.id + "', which students see",
                                 "hide '" + parsed.id + "' too, or carry from a question students see");
        }
        s.questions.push_back(std::move(parsed));
    }
    return s;
}

}  // namespace

GradingSpec load_spec(const std::filesystem::path& file, bool default_accept_quick, const std::string& default_show_expected) {
    // The input limits' defaults fit a spec (a few kilobytes; anchors for shared tolerances).
    YAML::Node root = load_yaml_mapping(file, "the grading spec", "check the path", "", "lesson, questions, ...");
    try {
        GradingSpec spec = read_spec(Ctx{file}, root, default_accept_quick, default_show_expected);
        // A regrade with an edited spec is told apart by this: the path alone is the same.
        std::ifstream in(file, std::ios::binary);
        spec.sha256 = sha256_hex(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
        return spec;
    } catch (const YAML::Exception& e) {
        // Every value is read through get() and finite(), which say what is wrong; anything
        // yaml-cpp still refuses is the file's fault too, not the grader's.
        throw InputError(e.mark.line >= 0 ? file.string() + ":" + std::to_string(e.mark.line + 1) : file.string(),
                         "cannot read the grading spec: " + e.msg);
    }
}

int Question::line_of(const std::string& key) const {
    for (std::string k = key;;) {
        if (const auto it = key_lines.find(k); it != key_lines.end() && it->second > 0) return it->second;
        const auto dot = k.rfind('.');
        if (dot == std::string::npos) return line;
        k.resize(dot);
    }
}

std::vector<std::string> regime_choices(const Question& q) {
    std::vector<std::string> out;
    for (const auto& o : q.options)
        if (auto r = roofline::parse_regime(o)) out.push_back(roofline::to_string(*r));
    if (!out.empty()) return out;
    const std::string side = ".predicted_regime";
    const std::string& m = q.expected.metric;
    if (m.size() > side.size() && m.compare(m.size() - side.size(), side.size(), side) == 0) return {"memory_bound", "compute_bound"};
    return {"compute_bound", "memory_bound", "overhead_bound", "latency_bound"};
}

std::string or_list(const std::vector<std::string>& items) {
    std::string s;
    for (std::size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
    return s;
}

bool has_tolerance(const Tolerance& t) {
    return t.rel.value_or(0) > 0 || t.abs.value_or(0) > 0 || t.factor.value_or(1) > 1 || t.steps.has_value();
}

std::vector<std::string> spec_warnings(const GradingSpec& spec, const LessonInfo& info) {
    std::vector<std::string> out;
    // Written out, after_due_date is meant to show the values some day: with no due date, never.
    if (spec.show_expected_line > 0 && spec.show_expected == "after_due_date" && spec.due.empty())
        out.push_back(spec.file + ":" + std::to_string(spec.show_expected_line) +
                      ": show_expected: after_due_date, but the spec has no due date, so expected values are never shown\n  fix: "
                      "add due: \"YYYY-MM-DD\" (UTC), or write show_expected: never");
    for (const auto& q : spec.questions) {
        auto at = [&](const std::string& key) { return spec.file + ":" + std::to_string(q.line_of(key)) + ": question '" + q.id + "'"; };
        for (const auto& d : info.metrics) {
            if (d.name != q.expected.metric || d.graded) continue;
            // A placed workload's standard metrics (scale.roof_fraction) are marked graded on the
            // placement, not by a MetricDecl of the lesson's own.
            // Another metric named after the workload (stride_2.useful_bytes_per_s) is the lesson's own.
            const auto placed = std::find_if(info.placed.begin(), info.placed.end(), [&](const PlacedWorkload& p) {
                return d.name.rfind(p.name + ".", 0) == 0 && gradable_standard_metric(p, d.name.substr(p.name.size() + 1));
            });
            const std::string how = placed != info.placed.end()
                                        ? "add \"" + d.name.substr(placed->name.size() + 1) + "\" to the placement's graded list (PlacedWorkload::graded of '" +
                                              placed->name + "')"
                                        : "mark it graded in the lesson's declarations (MetricDecl::graded)";
            out.push_back(at("expected.metric") + " grades metric '" + d.name + "', which lesson " + info.id +
                          " does not mark graded, so `lab run` shows its value to every student\n  fix: " + how + ", or ask another metric");
        }
        // A constant is compared exactly without a tolerance: one written to many figures (a third
        // as 0.3333333) marks 0.333 and 1/3 wrong alike.
        if (q.expected.value && q.type == QuestionType::number && !has_tolerance(q.tolerance))
            if (const char* text = q.expected.value->c_str(); *text) {
                char* end = nullptr;
                const double v = std::strtod(text, &end);
                // More than 4 significant figures: v x 10^(3 - its exponent) is no whole number.
                const double scaled = v != 0 && std::isfinite(v) ? v * std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v)))) : 0;
                if (end && *end == '\0' && std::fabs(scaled - std::round(scaled)) > 1e-6)
                    out.push_back(at("expected") + " compares the constant " + *q.expected.value +
                                  " exactly: an answer rounded to 3 or 4 figures is marked wrong\n  fix: add a tolerance, e.g. tolerance: {rel: 0.01}");
            }
        // A factor's partial band is the factor to the power W: `factor: 2, within: 4` is x/÷ 16,
        // partial credit for almost any guess (02.04's knee had it, its comment meaning 4x).
        if (q.tolerance.factor && q.partial.within > 0 && std::pow(*q.tolerance.factor, q.partial.within) >= 10)
            out.push_back(fmt::format("{}: its partial band is x/÷ {:g} (factor {:g} to the power within: {:g}): partial credit for an "
                                      "answer more than 10 times off\n  fix: a smaller within (within: 2 is x/÷ {:g})",
                                      at("partial"), std::pow(*q.tolerance.factor, q.partial.within), *q.tolerance.factor, q.partial.within,
                                      std::pow(*q.tolerance.factor, 2)));
        if (q.points == 0)
            out.push_back(at("points") + " is worth 0 points: it is graded and shown, but counts for nothing\n  fix: give it points, "
                                         "or remove it if that is not meant");
        if (q.type != QuestionType::choice && q.type != QuestionType::regime && !q.options.empty())
            out.push_back(at("options") + " lists options, which only choice and regime questions read: they are ignored\n  fix: remove "
                               "them, or make it type: choice");
    }
    return out;
}

void check_spec_sweeps(const GradingSpec& spec, Lesson& lesson) {
    std::optional<std::set<std::string>> names;
    for (const auto& q : spec.questions) {
        const std::string& name = q.tolerance.sweep_param;
        if (name.empty()) continue;
        if (!names) names = plan_param_names(lesson, spec.lesson);
        const std::set<std::string>& param_names = *names;
        if (param_names.count(name)) continue;
        std::string known;
        for (const auto& n : param_names) known += (known.empty() ? "" : ", ") + n;
        const std::string near = did_you_mean(name, std::vector<std::string>(param_names.begin(), param_names.end()));
        throw InputError(spec.file + ":" + std::to_string(q.line_of("tolerance.sweep_param")),
                         "question '" + q.id + "' reads its sweep from parameter '" + name + "', which no workload of lesson " +
                             spec.lesson + " has" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                         known.empty() ? "the lesson's workloads have no parameters: list the points with 'sweep: [...]'"
                                       : "the workloads' parameters: " + known);
    }
}

std::optional<std::filesystem::path> spec_beside_plugin(const std::filesystem::path& plugin_as_given, const std::string& id) {
    // Absolute first: `lab validate lab_02_13.so` from inside build/ has no parent to look in.
    const std::filesystem::path plugin = std::filesystem::absolute(plugin_as_given);
    for (const std::filesystem::path& dir : {plugin.parent_path(), plugin.parent_path().parent_path()}) {
        std::filesystem::path candidate = (dir.empty() ? std::filesystem::path(".") : dir) / (id + ".yaml");
        if (std::filesystem::exists(candidate)) return candidate;
    }
    return std::nullopt;
}

void check_spec_against(const GradingSpec& spec, const LessonInfo& info) {
    if (spec.lesson != info.id)
        throw InputError(spec.lesson_line > 0 ? spec.file + ":" + std::to_string(spec.lesson_line) : spec.file,
                         "the spec is for lesson '" + spec.lesson + "' but the plugin is lesson '" + info.id + "'",
                         "correct `lesson:`, or give the spec of lesson " + info.id);
    for (const auto& q : spec.questions) {
        // Each fault at the line of the key at fault; a key left out at the question's line.
        auto at = [&](const std::string& key) { return spec.file + ":" + std::to_string(q.line_of(key)); };
        if (q.expected.metric.empty()) continue;
        const MetricDecl* m = nullptr;
        for (const auto& d : info.metrics)
            if (d.name == q.expected.metric) m = &d;
        if (!m) {
            std::vector<std::string> declared;
            for (const auto& d : info.metrics) declared.push_back(d.name);
            throw InputError(at("expected.metric"), "question '" + q.id + "' names metric '" + q.expected.metric + "', which lesson " + info.id +
                                                        " does not declare" + did_you_mean_text(q.expected.metric, declared),
                             "see `lab info " + info.id + "` for its metrics");
        }
        bool numeric = q.type == QuestionType::number || q.type == QuestionType::integer;
        if (numeric && m->kind == MetricKind::category)
            throw InputError(at("type"), "question '" + q.id + "' is a " + to_string(q.type) + " question but metric '" + m->name +
                                             "' is a category",
                             m->name.size() > 7 && m->name.compare(m->name.size() - 7, 7, "_regime") == 0
                                 ? "use type: regime"
                                 : "use type: choice with the category's values as options");
        if (!numeric && m->kind != MetricKind::category && q.type != QuestionType::boolean)
            throw InputError(at("type"), "question '" + q.id + "' is a " + to_string(q.type) + " question but metric '" + m->name +
                                             "' is a number",
                             "use type: number (or integer) with a tolerance");
        // A regime is graded by the regime reader (any spelling, "A or B" verdicts); as a choice
        // or yes/no question its exact text would have to be written.
        const bool regime_metric = m->kind == MetricKind::category && m->name.size() > 7 && m->name.compare(m->name.size() - 7, 7, "_regime") == 0;
        if (regime_metric && (q.type == QuestionType::choice || q.type == QuestionType::boolean))
            throw InputError(at("type"), "question '" + q.id + "' is a " + to_string(q.type) + " question on regime '" + m->name + "'",
                             "use type: regime (options, if any, name regimes: memory_bound, compute_bound, overhead_bound, latency_bound)");
        // yes/no reads a number as yes when it is not zero: meant for flags (0 or 1), not for a
        // measured quantity, where every answer but one is yes.
        if (q.type == QuestionType::boolean && m->kind != MetricKind::category && !m->unit.empty())
            throw InputError(at("type"), "question '" + q.id + "' is a yes/no question on metric '" + m->name + "', a quantity in '" + m->unit +
                                             "': it would read yes for any value but zero",
                             "use type: number with a tolerance, or grade a flag metric (0 or 1, unit \"\")");
        if (q.type == QuestionType::integer && m->kind != MetricKind::integer)
            throw InputError(at("type"), "question '" + q.id + "' asks for an integer but metric '" + m->name + "' is not one",
                             "use type: number with a tolerance");
        if (!q.noun.empty() && units::dimension_of(q.unit.empty() ? m->unit : q.unit).value_or("?") != "")
            throw InputError(at("noun"), "question '" + q.id + "' has a noun ('" + q.noun + "') but asks for a quantity with a unit",
                             "give a noun to plain counts only; an answer with a unit carries its unit");
        // Values are compared in SI base units: a metric declared in GB/s or % would be graded
        // against its number read as B/s or as a ratio, a correct answer off by 10^9 or 100x.
        if (numeric && units::dimension_of(m->unit) && !units::is_base_unit(m->unit))
            throw InputError(at("expected.metric"), "question '" + q.id + "' grades metric '" + m->name + "', which lesson " + info.id +
                                                        " declares in '" + m->unit + "', not in its SI base unit '" +
                                                        *units::dimension_of(m->unit) + "': the grader compares values in base units",
                             "declare the metric in " + *units::dimension_of(m->unit) + " and set its value in it (lab prints prefixes and "
                             "percentages itself); `lab validate` names every such metric");
        if (numeric) {
            auto metric_dim = units::dimension_of(m->unit);
            auto q_dim = units::dimension_of(q.unit.empty() ? m->unit : q.unit);
            if (!metric_dim || !q_dim || *metric_dim != *q_dim)
                throw InputError(at("unit"), "question '" + q.id + "' reads answers in '" + q.unit + "' but metric '" + m->name +
                                                 "' is in '" + m->unit + "' (another dimension)",
                                 "use a unit of the metric's dimension");
        }
        for (const auto& kind : q.applies_to)
            if (std::find(m->devices.begin(), m->devices.end(), kind) == m->devices.end()) {
                std::string produced;
                for (const auto& d : m->devices) produced += (produced.empty() ? "" : " and ") + d;
                throw InputError(at("applies_to." + kind), "question '" + q.id + "' applies to " + kind + " but metric '" + m->name +
                                                               "' is not produced there",
                                 "remove " + kind + " from applies_to (the lesson produces it on " + (produced.empty() ? "no device" : produced) + ")");
            }
        // A measured number is never exactly the value a student reads off and rounds: without a
        // tolerance a correct 3.949 is wrong against 3.95. Integer and category metrics (counts
        // from the lesson's parameters, regimes) are exact by nature and need none. A tolerance
        // written as rel: 0 or factor: 1 is pointed at; one left out, at the question.
        if (q.type == QuestionType::number && m->kind == MetricKind::number && !has_tolerance(q.tolerance)) {
            std::vector<std::string> written;  // the zero tolerances written: one of them is the key at fault
            for (const char* k : {"rel", "abs", "factor"})
                if (q.key_lines.count(std::string("tolerance.") + k)) written.push_back(std::string("tolerance.") + k);
            throw InputError(at(written.size() == 1 ? written[0] : "tolerance"), "question '" + q.id + "' compares metric '" + m->name +
                                                  "' exactly, a number a student reads off rounded: a correct 3.949 would be marked wrong against 3.95",
                             "add a tolerance such as rel: 0.05");
        }
    }
}

}  // namespace lab::grader
