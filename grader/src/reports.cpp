// Grade reporters (see reports.hpp).
#include "reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <optional>
#include <vector>

#include "prompt_fill.hpp"

namespace lab::grader {

namespace {

std::string points(double p) { return fmt::format("{:g}", std::round(p * 100) / 100); }

std::string shown_expected(const GradeReport& r, const QuestionResult& q) {
    if (!r.show_expected || q.question.hidden || q.expected.empty()) return "";
    return q.expected;
}

// A run that is not graded (a quick run the spec does not accept, an implausible run) has no
// verdicts: "correct 0/2" would read as a mark. Its rows say "not graded" and keep only what
// does not depend on the run's values: why an answer is unreadable or a question void, a
// misspelt id. Hints and unit-slip advice would tell right from wrong without grading.
bool judged(const GradeReport& r, const QuestionResult& q) { return r.graded || q.verdict == Verdict::void_question; }

std::string verdict_text(const GradeReport& r, const QuestionResult& q) {
    return judged(r, q) ? to_string(q.verdict) : "not graded";
}

std::string feedback_text(const GradeReport& r, const QuestionResult& q) {
    if (judged(r, q) || q.verdict == Verdict::invalid || (q.verdict == Verdict::missing && q.advises)) return q.feedback;
    return "";
}

std::string hint_text(const GradeReport& r, const QuestionResult& q) {
    return judged(r, q) && q.verdict != Verdict::correct ? q.question.hint : "";
}

// What a student may see of the total: hidden questions' points stay out of it, or their
// verdicts could be read off by subtraction.
struct Visible {
    double score = 0, max = 0;
    int hidden = 0;
};
Visible visible_totals(const GradeReport& r) {
    Visible v;
    for (const auto& q : r.results) {
        if (q.question.hidden) {
            v.hidden += q.max_points > 0;
            continue;
        }
        v.max += q.max_points;
        if (r.graded) v.score += q.points;
    }
    return v;
}

// Console cells: one line each, padded by what a terminal shows (UTF-8 code points, so "350 µs"
// is six columns), and cut with "…" past `max` columns; the caller says where the full text goes.
std::size_t columns(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

std::string one_line(const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    return out;
}

std::string cut(const std::string& s, std::size_t max) {
    if (columns(s) <= max) return s;
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool lead = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
        if (lead && ++n > max - 1) break;
        out += s[i];
    }
    return out + "\u2026";
}

std::string pad(const std::string& s, std::size_t width) {
    const std::size_t n = columns(s);
    return n >= width ? s : s + std::string(width - n, ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
    const std::size_t n = columns(s);
    return n >= width ? s : std::string(width - n, ' ') + s;
}

std::string notes_text(const GradeReport& r) {
    std::string s;
    for (const auto& n : r.notes) s += "\nNote: " + n;
    return s;
}

std::string status_line(const GradeReport& r) {
    if (r.graded) {
        Visible v = visible_totals(r);
        return fmt::format("Score: {} / {}", points(v.score), points(v.max)) +
               (v.hidden ? fmt::format(" (+ {} hidden question{}, graded when results are published)", v.hidden,
                                       v.hidden > 1 ? "s" : "")
                         : "") +
               (r.mode == "practice" ? " (practice: graded without the course key, so no token was checked)" : "");
    }
    std::string s = "Not graded:";
    for (const auto& p : r.problems) s += "\n  - " + p;
    return s;
}

}  // namespace

std::string console_report(const GradeReport& r) {
    // Columns as wide as their widest cell, within limits: a question ID or an answer longer than
    // its limit is cut with "…" and the answer is given in full in the notes, so the verdict and
    // points columns stay aligned whatever a student writes.
    constexpr std::size_t kMaxId = 28, kMaxAnswer = 32;
    struct Row {
        std::string id, answer, verdict, points, notes;
    };
    std::vector<Row> rows;
    for (const auto& q : r.results) {
        Row row;
        const std::string claim = one_line(q.claim);
        row.id = cut(one_line(q.question.id), kMaxId);
        row.answer = claim.empty() ? "-" : cut(claim, kMaxAnswer);
        const bool cut_answer = row.answer != "-" && row.answer != claim;
        if (q.question.hidden) {
            row.verdict = "hidden";
            row.points = "?/" + points(q.max_points);
            row.notes = "graded when results are published";
        } else {
            std::string notes;
            // Said whenever it tells the student something: why void or unreadable, a unit slip
            // ("0.296 was read as 0.296%"), a misspelt id, how an answer off a sweep was placed.
            if (q.verdict == Verdict::void_question || q.verdict == Verdict::invalid || q.advises) notes = feedback_text(r, q);
            if (notes.empty() && !hint_text(r, q).empty()) notes = "hint: " + hint_text(r, q);
            std::string exp = shown_expected(r, q);
            if (!exp.empty() && q.verdict != Verdict::void_question) notes = "expected " + exp + (notes.empty() ? "" : "; " + notes);
            row.verdict = judged(r, q) ? to_string(q.verdict) : "\u2014";
            row.points = q.verdict == Verdict::void_question ? "void"
                         : judged(r, q)                      ? points(q.points) + "/" + points(q.max_points)
                                                             : "\u2014/" + points(q.max_points);
            row.notes = notes;
        }
        if (cut_answer) row.notes = "your answer: " + claim + (row.notes.empty() ? "" : "; " + row.notes);
        rows.push_back(std::move(row));
    }
    std::size_t w_id = columns("question"), w_answer = columns("your answer"), w_verdict = 17, w_points = 9;
    for (const auto& row : rows) {
        w_id = std::max(w_id, columns(row.id));
        w_answer = std::max(w_answer, columns(row.answer));
        w_verdict = std::max(w_verdict, columns(row.verdict));
        w_points = std::max(w_points, columns(row.points));
    }
    w_id = std::max<std::size_t>(w_id, 22);
    w_answer = std::max<std::size_t>(w_answer, 18);
    auto line = [&](const std::string& id, const std::string& answer, const std::string& verdict, const std::string& pts,
                    const std::string& notes) {
        std::string l = pad(id, w_id) + " " + pad(answer, w_answer) + " " + pad(verdict, w_verdict) + " " +
                        pad_left(pts, w_points) + "  " + notes;
        while (!l.empty() && l.back() == ' ') l.pop_back();
        return l + "\n";
    };

    std::string out = fmt::format("lesson {}   student {}   run {}\ndevice {}\n\n", r.lesson, r.student,
                                  r.run_digest.substr(0, 19) + "…", r.device);
    out += line("question", "your answer", "verdict", "points", "notes");
    for (const auto& row : rows) out += line(row.id, row.answer, row.verdict, row.points, row.notes);
    for (const auto& n : r.notes) out += "note: " + n + "\n";
    out += "\n" + status_line(r) + "\n";
    return out;
}

nlohmann::json json_report(const GradeReport& r) {
    nlohmann::json qs = nlohmann::json::array();
    for (const auto& q : r.results) {
        nlohmann::json j = {{"id", q.question.id},
                            {"prompt", q.question.prompt},
                            {"claim", q.claim},
                            {"verdict", q.question.hidden ? "hidden" : verdict_text(r, q)},
                            {"points", q.question.hidden ? nlohmann::json(nullptr) : nlohmann::json(r.graded ? q.points : 0.0)},
                            {"max_points", q.max_points},
                            {"feedback", q.question.hidden ? "" : feedback_text(r, q)},
                            {"hint", q.question.hidden ? "" : hint_text(r, q)}};
        std::string exp = shown_expected(r, q);
        if (!exp.empty()) j["expected"] = exp;
        qs.push_back(j);
    }
    Visible v = visible_totals(r);
    return {{"lesson", r.lesson},   {"student", r.student},     {"run", r.run_digest}, {"device", r.device},
            {"graded", r.graded},   {"mode", r.mode},           {"problems", r.problems},   {"notes", r.notes},   {"score", v.score},
            {"max_score", v.max},   {"hidden_questions", v.hidden}, {"questions", qs}};
}

nlohmann::json gradescope_results(const GradeReport& r, double execution_time_s) {
    nlohmann::json tests = nlohmann::json::array();
    int n = 0;
    for (const auto& q : r.results) {
        ++n;
        if (q.verdict == Verdict::void_question) continue;
        std::string output = "Your answer: " + (q.claim.empty() ? std::string("(none)") : q.claim) + "\nVerdict: " +
                             verdict_text(r, q);
        const std::string feedback = feedback_text(r, q);
        if (!feedback.empty() && (q.verdict != Verdict::missing || q.advises)) output += "\n" + feedback;
        if (const std::string hint = hint_text(r, q); !hint.empty()) output += "\nHint: " + hint;
        std::string exp = r.show_expected && !q.expected.empty() ? q.expected : "";
        if (!exp.empty()) output += "\nExpected: " + exp;
        double score = r.graded ? q.points : 0;
        tests.push_back({{"name", q.question.id + ": " + q.question.prompt},
                         {"number", "1." + std::to_string(n)},
                         {"score", score},
                         {"max_score", q.max_points},
                         {"status", q.verdict == Verdict::correct && r.graded ? "passed" : "failed"},
                         {"output", output},
                         {"output_format", "text"},
                         {"visibility", q.question.hidden ? "after_published" : "visible"}});
    }
    std::string summary = status_line(r);
    // With hidden questions the top-level score is left out: Gradescope then sums the tests and
    // keeps the hidden ones' points back until results are published.
    nlohmann::json out = {
            {"execution_time", execution_time_s},
            // A refused run was not graded against: the first line says which of the two it was.
            {"output", "Lesson " + r.lesson + (r.graded ? " graded against your run on " : " not graded: your run on ") + r.device + ".\n" +
                           summary + notes_text(r)},
            {"output_format", "text"},
            {"visibility", "visible"},
            {"stdout_visibility", "hidden"},
            {"tests", tests},
            {"extra_data", {{"run", r.run_digest}, {"student", r.student}, {"graded", r.graded}, {"mode", r.mode}, {"problems", r.problems}}}};
    if (visible_totals(r).hidden == 0 || !r.graded) out["score"] = r.graded ? r.score : 0.0;
    return out;
}

nlohmann::json gradescope_failure(const std::string& student_message, const std::string& diagnostic, double execution_time_s,
                                  const GradingSpec* spec) {
    nlohmann::json tests = nlohmann::json::array();
    if (spec) {
        int n = 0;
        for (const auto& q : spec->questions)
            // No run was graded: a student's own parameters ("question_seq") are not known here.
            tests.push_back({{"name", q.id + ": " + fill_prompt(q.prompt, [](const std::string&) { return std::optional<std::string>("(your run's value)"); })},
                             {"number", "1." + std::to_string(++n)},
                             {"score", 0},
                             {"max_score", q.points},
                             {"status", "failed"},
                             {"output", "Not graded: your submission could not be graded (see above)."},
                             {"output_format", "text"},
                             {"visibility", q.hidden ? "after_published" : "visible"}});
    }
    tests.push_back({{"name", "autograder diagnostic (instructors only)"},
                     {"score", 0},
                     {"max_score", 0},
                     {"status", "failed"},
                     {"output", diagnostic},
                     {"visibility", "hidden"}});
    return {{"score", 0},
            {"execution_time", execution_time_s},
            {"output", student_message},
            {"output_format", "text"},
            {"visibility", "visible"},
            {"stdout_visibility", "hidden"},
            {"tests", tests},
            {"extra_data", {{"graded", false}, {"problems", {student_message}}}}};
}

}  // namespace lab::grader
