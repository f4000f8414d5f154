// A submission folder's files and their pairing (see submission_folder.hpp).
#include "submission_folder.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "answers.hpp"
#include "course.hpp"

namespace fs = std::filesystem;

namespace lab::grader {

namespace {

// Files over this are neither runs nor answers (a run of the largest lesson is a few MB).
constexpr std::uintmax_t kMaxScannedBytes = 64u << 20;

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

FoundRun lenient_run(const fs::path& file, std::string text) {
    FoundRun r;
    r.file = file;
    if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return r;
    r.parsed = true;
    auto str = [](const nlohmann::json& o, const char* k) { return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : ""; };
    r.digest = str(j, "digest");
    r.student = str(j, "student");
    r.started_at = str(j, "started_at");
    if (j.contains("lesson") && j["lesson"].is_object()) r.lesson = str(j["lesson"], "id");
    return r;
}

// A run record, whole or cut short: it holds its schema name, or it opens as one does (a JSON
// object whose first key is "declared_metrics": keys are written sorted, and "schema" comes near
// the end, so a truncated record loses it). A cut record is still the student's run: grading
// says it is truncated, rather than that no run was handed in.
bool looks_like_run(const std::string& text) {
    if (text.find("\"lab.run/1\"") != std::string::npos) return true;
    std::size_t at = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    at = text.find_first_not_of(" \t\r\n", at);
    if (at == std::string::npos || text[at] != '{') return false;
    at = text.find_first_not_of(" \t\r\n", at + 1);
    return at != std::string::npos && text.compare(at, 18, "\"declared_metrics\"") == 0;
}

std::string short_digest(const std::string& d) { return d.empty() ? "no digest" : d.substr(0, 19) + "…"; }

std::string relative_name(const fs::path& file, const fs::path& folder) {
    const fs::path rel = file.lexically_relative(folder);
    return rel.empty() ? file.string() : rel.string();
}

}  // namespace

FolderContents scan_folder(const fs::path& folder) {
    FolderContents c;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(folder))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    c.files = files.size();
    for (const auto& f : files) {
        if (fs::file_size(f) > kMaxScannedBytes) continue;
        std::string text = read_text(f);
        if (looks_like_run(text)) {
            c.runs.push_back(lenient_run(f, std::move(text)));
            continue;
        }
        if (text.find("answers") == std::string::npos || !looks_like_answers(text)) continue;
        FoundAnswers a;
        a.file = f;
        try {
            const AnswersFile read = load_answers(f);
            a.lesson = read.lesson, a.student = read.student, a.run = read.run;
        } catch (const std::exception& ex) {
            a.error = ex.what();
        }
        c.answers.push_back(std::move(a));
    }
    return c;
}

std::vector<std::string> students_named(const FolderContents& c) {
    std::set<std::string> s;
    auto add = [&](const std::string& who) {
        const std::string n = normalise_student(who);
        if (!n.empty() && n != "anonymous") s.insert(n);
    };
    for (const auto& r : c.runs) add(r.student);
    for (const auto& a : c.answers)
        if (a.error.empty()) add(a.student);
    return {s.begin(), s.end()};
}

namespace {

// One row per lesson and student in a folder: a student who handed in twice (two answers files,
// each with its run) is graded on the latest submission, as Gradescope grades the last upload;
// the others are listed as not graded. The latest is the pair whose run was recorded last
// (started_at; the file name breaks a tie). A row that cannot be graded gives way to one that can.
std::vector<Pairing> latest_submissions(std::vector<Pairing> rows, const FolderContents& c) {
    auto started = [&](const Pairing& p) {
        for (const auto& r : c.runs)
            if (r.file == p.run) return r.started_at;
        return std::string();
    };
    auto later = [&](const Pairing& a, const Pairing& b) {   // a is the later submission
        if (a.error.empty() != b.error.empty()) return a.error.empty();
        const std::string sa = started(a), sb = started(b);
        return sa != sb ? sa > sb : a.answers > b.answers;
    };
    std::vector<Pairing> out;
    for (auto& p : rows) {
        auto same = std::find_if(out.begin(), out.end(), [&](const Pairing& q) {
            return !p.lesson.empty() && q.lesson == p.lesson && normalise_student(q.student) == normalise_student(p.student) &&
                   !p.answers.empty() && !q.answers.empty();
        });
        if (same == out.end()) {
            out.push_back(std::move(p));
            continue;
        }
        Pairing& keep = later(p, *same) ? p : *same;
        Pairing& drop = &keep == &p ? *same : p;
        for (const auto& f : {drop.answers, drop.run})
            if (!f.empty()) keep.ignored.push_back(f);
        keep.ignored.insert(keep.ignored.end(), drop.ignored.begin(), drop.ignored.end());
        if (&keep == &p) *same = std::move(p);
    }
    return out;
}

}  // namespace

std::vector<Pairing> pair_files(const FolderContents& c, const fs::path& folder) {
    const std::string folder_name = folder.filename().string();
    std::vector<Pairing> rows;
    if (c.runs.empty() && c.answers.empty()) {
        Pairing p;
        p.error = c.files == 0 ? "no submission (empty folder)"
                               : fmt::format("no answers file and no run record among its {} file{}", c.files, c.files == 1 ? "" : "s");
        p.error_kind = "incomplete";
        return {p};
    }
    // Never one row of several students' files: which answers go with which run would be a guess.
    if (const auto students = students_named(c); students.size() > 1 && c.runs.size() + c.answers.size() > 2) {
        std::map<std::string, std::vector<std::string>> held;
        for (const auto& r : c.runs) held[normalise_student(r.student)].push_back(r.file.filename().string());
        for (const auto& a : c.answers) held[a.error.empty() ? normalise_student(a.student) : "?"].push_back(a.file.filename().string());
        std::string what;
        for (const auto& [who, files] : held) {
            std::string list;
            for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
            what += (what.empty() ? "" : "; ") + (who.empty() ? "no name" : who) + ": " + list;
        }
        Pairing p;
        p.error = fmt::format("folder '{}' holds the files of {} students ({}): not graded, so no student is graded with another's files",
                              folder_name, students.size(), what);
        p.error += "\n  fix: put each student's files in a folder of their own, then grade again";
        p.error_kind = "incomplete";
        return {p};
    }

    std::vector<bool> used(c.runs.size(), false);
    auto runs_of = [&](const std::string& lesson, bool unused_only) {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < c.runs.size(); ++i)
            if ((!unused_only || !used[i]) && (c.runs[i].lesson == lesson || c.runs[i].lesson.empty())) out.push_back(i);
        return out;
    };
    const bool one_of_each = c.runs.size() == 1 && c.answers.size() == 1;
    for (const auto& a : c.answers) {
        Pairing p;
        p.answers = a.file;
        if (!a.error.empty()) continue;   // below, once the readable ones have their runs
        p.lesson = a.lesson;
        p.student = a.student;
        std::vector<std::size_t> candidates = runs_of(a.lesson, false);
        // One answers file and one run: grading says what is wrong with them (another lesson's run).
        if (candidates.empty() && one_of_each) candidates = {0};
        std::optional<std::size_t> pick;
        for (std::size_t i : candidates)
            if (!pick && !a.run.empty() && c.runs[i].digest == a.run) pick = i;
        // A single run that is not the bound one: grading explains the binding mismatch.
        if (!pick && candidates.size() == 1) pick = candidates[0];
        if (pick) {
            p.run = c.runs[*pick].file;
            used[*pick] = true;
        } else if (candidates.empty()) {
            p.error = "no run record found" + (a.lesson.empty() ? std::string() : " of lesson " + a.lesson);
            p.error_kind = "incomplete";
        } else {
            std::string list;
            for (std::size_t i : candidates)
                list += (list.empty() ? "" : ", ") + relative_name(c.runs[i].file, folder) + " (" + short_digest(c.runs[i].digest) + ")";
            p.error = fmt::format("{}: the answers are bound to run {}, and none of the {} run records here is that run: {}",
                                  a.file.filename().string(), short_digest(a.run), candidates.size(), list);
            p.error += "\n  fix: ask for the run the answers were made for, or answers made for one of these runs (`lab answers " +
                       a.lesson + " --run RUN`)";
            p.error_kind = "incomplete";
        }
        rows.push_back(std::move(p));
    }
    // An answers file that cannot be read: its error is the row's; it takes the runs left when
    // they are of one lesson (so the run is still compared across the class).
    for (const auto& a : c.answers) {
        if (a.error.empty()) continue;
        Pairing p;
        p.answers = a.file;
        p.error = a.error;
        p.error_kind = "unreadable";
        std::set<std::string> lessons;
        std::optional<std::size_t> last;
        for (std::size_t i = 0; i < c.runs.size(); ++i)
            if (!used[i]) lessons.insert(c.runs[i].lesson), last = i;
        if (lessons.size() == 1) {
            p.lesson = *lessons.begin();
            p.run = c.runs[*last].file;
            for (std::size_t i = 0; i < c.runs.size(); ++i) used[i] = true;
        }
        rows.push_back(std::move(p));
    }
    // Runs no answers file took: a row per lesson without answers, else an older resubmission
    // beside the graded run (listed as ignored).
    std::map<std::string, std::vector<std::size_t>> left;
    for (std::size_t i = 0; i < c.runs.size(); ++i)
        if (!used[i]) left[c.runs[i].lesson].push_back(i);
    for (const auto& [lesson, runs] : left) {
        // By value: clang before 16 cannot capture a structured binding (bench/fuzz.sh builds with clang 14).
        auto row = std::find_if(rows.begin(), rows.end(), [id = lesson](const Pairing& p) { return p.lesson == id || id.empty(); });
        if (row != rows.end()) {
            for (std::size_t i : runs) row->ignored.push_back(c.runs[i].file);
            continue;
        }
        Pairing p;
        p.lesson = lesson;
        p.student = c.runs[runs.back()].student;
        p.run = c.runs[runs.back()].file;   // the newest by name (lab names runs by time)
        for (std::size_t k = 0; k + 1 < runs.size(); ++k) p.ignored.push_back(c.runs[runs[k]].file);
        p.error = "no answers file found" + (lesson.empty() ? std::string() : " for lesson " + lesson);
        p.error_kind = "incomplete";
        rows.push_back(std::move(p));
    }
    return latest_submissions(std::move(rows), c);
}

std::string one_line(const std::string& s) {
    std::string out, line;
    std::istringstream in(s);
    while (std::getline(in, line)) {
        const auto b = line.find_first_not_of(" \t\r");
        if (b == std::string::npos) continue;
        line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
        if (!out.empty()) out += (out.back() == ';' || out.back() == ':' ? " " : "; ");
        out += line;
    }
    return out;
}

}  // namespace lab::grader
