// Batch grading (see batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "answers.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;

namespace lab::grader {

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Finds the answers file and the run record of a folder by their content, not their names.
void find_files(const fs::path& folder, fs::path& answers, fs::path& run) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(folder))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        if (fs::file_size(f) > (64u << 20)) continue;
        std::string text = read_text(f);
        if (run.empty() && text.find("\"lab.run/1\"") != std::string::npos) {
            run = f;
            continue;
        }
        if (answers.empty() && text.find("answers") != std::string::npos && looks_like_answers(text)) answers = f;
    }
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

BatchResult grade_directory(GradingContext& ctx, const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(dir.string(), "not a folder of submissions", "give the folder holding one folder per student");
    std::vector<fs::path> folders;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory()) folders.push_back(e.path());
    std::sort(folders.begin(), folders.end());

    BatchResult result;
    std::map<std::string, std::vector<std::string>> by_measurements;
    std::map<std::string, std::pair<int, int>> missed;  // question -> (not correct, graded)
    for (const auto& folder : folders) {
        BatchEntry e;
        e.folder = folder.filename().string();
        fs::path answers, run;
        find_files(folder, answers, run);
        if (answers.empty() || run.empty()) {
            e.error = answers.empty() ? "no answers file found" : "no run record found";
            result.entries.push_back(e);
            continue;
        }
        try {
            e.report = grade_files(ctx, "", answers, run);
            e.ok = true;
            e.student = e.report.student;
            e.lesson = e.report.lesson;
            // Identical measurements from different students: same raw workloads, whoever recorded them.
            nlohmann::json rec = record::read_record(run);
            by_measurements[sha256_hex(rec["workloads"].dump())].push_back(e.student);
            if (e.report.graded)
                for (const auto& q : e.report.results) {
                    if (q.verdict == Verdict::void_question) continue;
                    auto& m = missed[q.question.id];
                    m.second++;
                    if (q.verdict != Verdict::correct) m.first++;
                }
        } catch (const std::exception& ex) {
            e.error = ex.what();
        }
        result.entries.push_back(std::move(e));
    }
    for (const auto& [hash, students] : by_measurements) {
        std::set<std::string> distinct(students.begin(), students.end());
        if (distinct.size() > 1) {
            std::string names;
            for (const auto& s : distinct) names += (names.empty() ? "" : ", ") + s;
            result.duplicates.push_back(names + ": identical measurements (sha256 " + hash.substr(0, 12) + ")");
        }
    }
    for (const auto& [q, m] : missed)
        if (m.second > 0) result.most_missed.push_back({q, static_cast<double>(m.first) / m.second});
    std::sort(result.most_missed.begin(), result.most_missed.end(),
              [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
    return result;
}

std::string gradebook_csv(const BatchResult& r) {
    std::vector<std::string> questions;
    std::set<std::string> seen;
    for (const auto& e : r.entries)
        for (const auto& q : e.report.results)
            if (seen.insert(q.question.id).second) questions.push_back(q.question.id);
    std::string out = "folder,student,lesson,score,max,status";
    for (const auto& q : questions) out += "," + csv_field(q);
    out += "\n";
    for (const auto& e : r.entries) {
        std::string status = !e.ok ? "error: " + e.error : e.report.graded ? "graded" : "not graded: " + e.report.problems.front();
        std::replace(status.begin(), status.end(), '\n', ' ');  // one row per student, whatever the message
        out += csv_field(e.folder) + "," + csv_field(e.student) + "," + csv_field(e.lesson) + "," +
               (e.ok ? fmt::format("{:g}", e.report.graded ? e.report.score : 0.0) : "0") + "," +
               (e.ok ? fmt::format("{:g}", e.report.max_score) : "") + "," + csv_field(status);
        for (const auto& q : questions) {
            std::string cell;
            for (const auto& res : e.report.results)
                if (res.question.id == q)
                    cell = res.verdict == Verdict::void_question ? "void" : fmt::format("{:g}", e.report.graded ? res.points : 0.0);
            out += "," + cell;
        }
        out += "\n";
    }
    return out;
}

}  // namespace lab::grader
