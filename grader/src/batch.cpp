// Batch grading (see batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "answers.hpp"
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
// Throws std::filesystem::filesystem_error for a folder that cannot be listed.
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

// A CSV cell: quoted when it holds a separator, and a leading ' where a spreadsheet would take
// the cell for a formula (OWASP's advice for CSV injection).
std::string csv_field(std::string s) {
    if (!s.empty() && std::string("=+-@\t\r").find(s[0]) != std::string::npos) s = "'" + s;
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// What a run looked like, for comparing runs across the class.
struct Fingerprint {
    std::size_t entry = 0;
    std::string student;   // normalised
    std::string digest;
    std::map<std::string, double> medians;   // by workload (name + params: a sweep's points differ)
};

Fingerprint fingerprint(const nlohmann::json& record, const RawRun& raw) {
    Fingerprint f;
    f.student = normalise_student(raw.options.student);
    f.digest = record.value("digest", "");
    for (const auto& m : raw.measurements) {
        std::string key = m.workload.name;
        for (const auto& p : m.workload.params) key += fmt::format(" {}={:g}", p.name, p.value);
        f.medians[key] = m.time.median;
    }
    return f;
}

// The largest relative difference of two runs' medians, workload by workload; infinity when
// their workloads differ.
double largest_difference(const Fingerprint& a, const Fingerprint& b, std::string& where) {
    if (a.medians.size() != b.medians.size() || a.medians.empty()) return INFINITY;
    double worst = 0;
    for (const auto& [k, va] : a.medians) {
        auto it = b.medians.find(k);
        if (it == b.medians.end()) return INFINITY;
        const double d = std::fabs(va - it->second) / std::max(std::fabs(va), std::fabs(it->second));
        if (!(d <= worst)) worst = d, where = k;   // NaN counts as different
    }
    return worst;
}

// A folder's name agrees with its run's student when it holds the student's ID ("alice_1234"
// for alice): Gradescope and LMS exports add numbers, never another student's name.
bool folder_agrees(const std::string& folder, const std::string& student) {
    const std::string f = normalise_student(folder);
    return !student.empty() && f.find(student) != std::string::npos;
}

std::vector<FlagGroup> flag_groups(std::vector<BatchEntry>& entries, const std::vector<Fingerprint>& prints) {
    std::vector<FlagGroup> groups;
    auto add_group = [&](const std::string& kind, const std::vector<std::size_t>& members, const std::string& evidence) {
        FlagGroup g{"G" + std::to_string(groups.size() + 1), kind, {}, evidence};
        for (std::size_t m : members) {
            g.folders.push_back(entries[prints[m].entry].folder);
            entries[prints[m].entry].flags.push_back(kind + ":" + g.id);
        }
        groups.push_back(g);
    };
    // The same run handed in more than once, whoever hands it in.
    std::map<std::string, std::vector<std::size_t>> by_digest;
    for (std::size_t i = 0; i < prints.size(); ++i) by_digest[prints[i].digest].push_back(i);
    for (const auto& [digest, members] : by_digest)
        if (members.size() > 1 && !digest.empty())
            add_group("same_digest", members, fmt::format("{} folders hold the same run ({}…)", members.size(), digest.substr(0, 19)));
    // Near-copies: runs of different students whose medians all agree within the tolerance.
    std::vector<std::size_t> parent(prints.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](std::size_t i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    };
    struct Link {
        std::size_t i, j;
        double difference;
        std::string where;
    };
    std::vector<Link> links;
    for (std::size_t i = 0; i < prints.size(); ++i)
        for (std::size_t j = i + 1; j < prints.size(); ++j) {
            if (prints[i].student == prints[j].student) continue;
            std::string where;
            const double d = largest_difference(prints[i], prints[j], where);
            if (!(d <= kNearCopyTolerance)) continue;
            parent[root(j)] = root(i);
            links.push_back({i, j, d, where});
        }
    // The evidence of a group: the largest difference among the pairs that joined it.
    std::map<std::size_t, const Link*> worst;
    for (const auto& l : links)
        if (const Link*& w = worst[root(l.i)]; !w || l.difference > w->difference) w = &l;
    std::map<std::size_t, std::vector<std::size_t>> clusters;
    for (std::size_t i = 0; i < prints.size(); ++i) clusters[root(i)].push_back(i);
    for (const auto& [r, members] : clusters) {
        if (members.size() < 2) continue;
        std::set<std::string> students;
        for (std::size_t m : members) students.insert(prints[m].student);
        if (students.size() < 2) continue;
        add_group("near_copy", members,
                  fmt::format("{} runs of {} students agree on every workload's median within {:g}% (largest difference {:.2g}%{})",
                              members.size(), students.size(), 100 * kNearCopyTolerance, 100 * worst.at(r)->difference,
                              worst.at(r)->where.empty() ? "" : ", on " + worst.at(r)->where));
    }
    // A folder holding another student's run.
    for (const auto& p : prints)
        if (!folder_agrees(entries[p.entry].folder, p.student)) entries[p.entry].flags.push_back("folder_mismatch");
    return groups;
}

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

}  // namespace

std::string BatchEntry::status() const {
    if (!ok) return "error";
    if (!report.graded) return "refused";
    return report.mode == "course" ? "graded" : "practice";
}

std::string BatchEntry::reason() const {
    if (!ok) return one_line(error);
    if (!report.graded) {
        std::string all;
        for (const auto& p : report.problems) all += (all.empty() ? "" : "; ") + p;
        return one_line(all);
    }
    return "";
}

BatchResult grade_directory(GradingContext& ctx, const fs::path& dir, const BatchProgress& progress) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(dir.string(), "not a folder of submissions", "give the folder holding one folder per student");
    std::vector<fs::path> folders;
    try {
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_directory()) folders.push_back(e.path());
    } catch (const fs::filesystem_error& e) {
        throw InputError(dir.string(), std::string("cannot list the submissions: ") + e.code().message());
    }
    std::sort(folders.begin(), folders.end());

    BatchResult result;
    std::vector<Fingerprint> prints;
    std::map<std::string, std::pair<int, int>> missed;  // question -> (not correct, graded)
    for (const auto& folder : folders) {
        if (progress) progress(folder.filename().string(), result.entries.size(), folders.size());
        BatchEntry e;
        e.folder = folder.filename().string();
        // Each folder on its own: whatever one holds, the others are graded.
        try {
            fs::path answers, run;
            find_files(folder, answers, run);
            e.run_file = run.string();
            // Read once: every readable run is compared across the class, graded or not, and
            // graded from the same copy.
            std::optional<std::pair<nlohmann::json, RawRun>> read;
            if (!run.empty()) {
                try {
                    nlohmann::json rec = record::read_record(run);
                    RawRun raw = record::raw_run_from_record(rec);
                    Fingerprint f = fingerprint(rec, raw);
                    f.entry = result.entries.size();
                    e.student = raw.options.student;
                    e.lesson = raw.lesson_id;
                    prints.push_back(std::move(f));
                    read.emplace(std::move(rec), std::move(raw));
                } catch (const std::exception&) {
                    // Reported below by grading, which reads it again and says what is wrong.
                }
            }
            if (answers.empty() || run.empty()) {
                e.error = answers.empty() ? "no answers file found" : "no run record found";
            } else {
                e.report = read ? grade_read_run(ctx, "", answers, read->first, read->second, run) : grade_files(ctx, "", answers, run);
                e.ok = true;
                e.student = e.report.student;
                e.lesson = e.report.lesson;
                if (e.report.graded)
                    for (const auto& q : e.report.results) {
                        if (q.verdict == Verdict::void_question) continue;
                        auto& m = missed[q.question.id];
                        m.second++;
                        if (q.verdict != Verdict::correct) m.first++;
                    }
            }
        } catch (const fs::filesystem_error& ex) {
            e.ok = false;
            e.error = "cannot read the folder: " + ex.code().message() + " (" + ex.path1().string() + ")";
        } catch (const std::exception& ex) {
            e.ok = false;
            e.error = ex.what();
        }
        result.entries.push_back(std::move(e));
    }
    result.groups = flag_groups(result.entries, prints);
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
    std::string out = "folder,student,lesson,score,max,status,reason,flags";
    for (const auto& q : questions) out += "," + csv_field(q);
    out += "\n";
    for (const auto& e : r.entries) {
        std::string flags;
        for (const auto& f : e.flags) flags += (flags.empty() ? "" : " ") + f;
        out += csv_field(e.folder) + "," + csv_field(e.student) + "," + csv_field(e.lesson) + "," +
               (e.ok ? fmt::format("{:g}", e.report.graded ? e.report.score : 0.0) : "0") + "," +
               (e.ok ? fmt::format("{:g}", e.report.max_score) : "") + "," + e.status() + "," + csv_field(e.reason()) + "," +
               csv_field(flags);
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
