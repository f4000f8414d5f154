// A submission folder's files and their pairing (see submission_folder.hpp).
#include "submission_folder.hpp"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "answers.hpp"
#include "course.hpp"
#include "errors.hpp"
#include "input_file.hpp"
#include "text_encoding.hpp"

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
    std::size_t at = text.find_first_not_of(" \t\r\n");
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
        const auto size = fs::file_size(f);
        if (size == 0) c.empty.push_back(f);
        if (size == 0 || size > kMaxScannedBytes) continue;
        // As the readers will read it: a byte-order mark dropped, UTF-16 made UTF-8 (an answers
        // file saved by Windows PowerShell 5's `>` is no less the student's answers).
        std::string text;
        try {
            text = with_line_feeds(utf8_text(read_text(f), f));
        } catch (const InputError& e) {
            // UTF-16 that does not decode (cut to an odd length): a YAML file is the student's
            // answers all the same, said as cut short, as `lab submit` says it; other files are
            // no text lab reads.
            if (const auto ext = f.extension(); ext == ".yaml" || ext == ".yml") c.answers.push_back({.file = f, .error = e.what(), .lesson = "", .student = "", .run = ""});
            continue;
        }
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
        // The recorded start is the student's clock: one set back (a reset laptop, a drifting VM)
        // makes the newer run look older. The files' own times are a second opinion.
        std::error_code e1, e2;
        if (keep.error.empty() && drop.error.empty() && !keep.run.empty() && !drop.run.empty() && started(keep) != started(drop)) {
            const auto kept_time = fs::last_write_time(keep.run, e1), dropped_time = fs::last_write_time(drop.run, e2);
            if (!e1 && !e2 && dropped_time - kept_time > std::chrono::seconds(1))
                keep.latest_doubt = "graded the run recorded last by the student's clock (" + keep.run.filename().string() + ", started " +
                                    started(keep) + "), but " + drop.run.filename().string() + " (started " + started(drop) +
                                    ") is the newer file: check which submission the student meant";
        }
        for (const auto& f : {drop.answers, drop.run})
            if (!f.empty()) keep.ignored.push_back(f);
        keep.ignored.insert(keep.ignored.end(), drop.ignored.begin(), drop.ignored.end());
        if (&keep == &p) *same = std::move(p);
    }
    return out;
}

}  // namespace

namespace {

// The row refusing a group of files (a folder's, or its files of one lesson) that name several
// students when there are more than two of them: which answers go with which run would be a
// guess. nullopt when they are one student's, or an answers file and a run (grading says whose
// run it is).
std::optional<Pairing> several_students(const FolderContents& c, const std::string& folder_name, const std::string& lesson) {
    const auto students = students_named(c);
    if (students.size() <= 1 || c.runs.size() + c.answers.size() <= 2) return std::nullopt;
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
    p.lesson = lesson;
    p.error = fmt::format("folder '{}' holds the {}files of {} students ({}): not graded, so no student is graded with another's files",
                          folder_name, lesson.empty() ? "" : "lesson " + lesson + " ", students.size(), what);
    p.error += "\n  fix: put each student's files in a folder of their own, then grade again";
    p.error_kind = "incomplete";
    return p;
}

std::vector<Pairing> pair_one_student(const FolderContents& c, const fs::path& folder);

}  // namespace

std::vector<Pairing> pair_files(const FolderContents& c, const fs::path& folder) {
    const std::string folder_name = folder.filename().string();
    if (c.runs.empty() && c.answers.empty()) {
        Pairing p;
        p.error = c.files == 0 ? "no submission (empty folder)"
                               : fmt::format("no answers file and no run record among its {} file{}", c.files, c.files == 1 ? "" : "s");
        p.error_kind = "incomplete";
        return {p};
    }
    // Several students' files are judged lesson by lesson: a folder of one student's two lessons
    // with another student's run of one of them (a copy) was refused whole, so the student's
    // honest lesson went ungraded and the copy unflagged. Now only a lesson whose files name
    // several students, more than an answers file and a run, is refused; an answers file with
    // another's run is graded, which says whose run it is and fingerprints it.
    std::set<std::string> lessons;
    for (const auto& r : c.runs)
        if (!r.lesson.empty()) lessons.insert(r.lesson);
    for (const auto& a : c.answers)
        if (a.error.empty() && !a.lesson.empty()) lessons.insert(a.lesson);
    if (lessons.size() <= 1) {
        if (auto p = several_students(c, folder_name, "")) return {*p};
        return pair_one_student(c, folder);
    }
    FolderContents rest = c;
    rest.runs.clear(), rest.answers.clear();
    std::vector<Pairing> refused;
    for (const auto& lesson : lessons) {
        FolderContents part;
        std::copy_if(c.runs.begin(), c.runs.end(), std::back_inserter(part.runs), [&](const FoundRun& r) { return r.lesson == lesson; });
        std::copy_if(c.answers.begin(), c.answers.end(), std::back_inserter(part.answers),
                     [&](const FoundAnswers& a) { return a.error.empty() && a.lesson == lesson; });
        if (auto p = several_students(part, folder_name, lesson)) {
            refused.push_back(std::move(*p));
            continue;
        }
        rest.runs.insert(rest.runs.end(), part.runs.begin(), part.runs.end());
        rest.answers.insert(rest.answers.end(), part.answers.begin(), part.answers.end());
    }
    // Runs of no lesson and unreadable answers stay with the rest (pairing places them).
    std::copy_if(c.runs.begin(), c.runs.end(), std::back_inserter(rest.runs), [](const FoundRun& r) { return r.lesson.empty(); });
    std::copy_if(c.answers.begin(), c.answers.end(), std::back_inserter(rest.answers), [](const FoundAnswers& a) { return !a.error.empty(); });
    std::sort(rest.runs.begin(), rest.runs.end(), [](const FoundRun& a, const FoundRun& b) { return a.file < b.file; });
    std::sort(rest.answers.begin(), rest.answers.end(), [](const FoundAnswers& a, const FoundAnswers& b) { return a.file < b.file; });
    std::vector<Pairing> rows = rest.runs.empty() && rest.answers.empty() ? std::vector<Pairing>{} : pair_one_student(rest, folder);
    rows.insert(rows.end(), std::make_move_iterator(refused.begin()), std::make_move_iterator(refused.end()));
    return rows;
}

namespace {

// pair_files for files that are not several students' (or not in a way pairing could guess at).
std::vector<Pairing> pair_one_student(const FolderContents& c, const fs::path& folder) {
    std::vector<Pairing> rows;
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
        p.bound_run = a.run;
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
            // A run record saved or uploaded empty is the usual cause: name it rather than let
            // the student think the run was never handed in.
            std::string empties;
            for (const auto& e : c.empty) empties += (empties.empty() ? "" : ", ") + relative_name(e, folder);
            if (!empties.empty()) p.error += fmt::format(" ({} {} empty: 0 bytes)", empties, c.empty.size() == 1 ? "is" : "are");
            p.error += "\n  fix: hand in the run record `lab run " + (a.lesson.empty() ? std::string("ID") : a.lesson) +
                       "` wrote (runs/" + (a.lesson.empty() ? std::string("ID") : a.lesson) +
                       "-<time>.json, some kB) with the answers made for it";
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
            // Whose it is, from the run: the row is the student's (a roster finds it), and beside
            // a gradable pair of theirs it is one more submission, not a second row of the student.
            p.student = c.runs[*last].student;
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

}  // namespace

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

bool folder_names_student(const std::string& folder, const std::string& student) {
    const std::string f = normalise_student(folder), s = normalise_student(student);
    if (s.empty()) return false;
    // Any character but a letter or digit separates: _ - . a space, and an LMS's "Smith, Alice (alice)".
    auto separator = [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); };
    for (std::size_t pos = f.find(s); pos != std::string::npos; pos = f.find(s, pos + 1)) {
        const std::size_t end = pos + s.size();
        if ((pos == 0 || separator(f[pos - 1])) && (end == f.size() || separator(f[end]))) return true;
    }
    return false;
}

bool anonymous_folder_name(const std::string& folder) {
    static const std::regex re(R"(^(submission)?[ _.-]?\d+$)", std::regex::icase);
    return std::regex_match(folder, re);
}

std::vector<std::string> ExportSubmitter::ids() const {
    std::vector<std::string> out;
    for (const std::string* id : {&email_local, &sid, &name, &email})
        if (!id->empty() && std::find(out.begin(), out.end(), *id) == out.end()) out.push_back(*id);
    return out;
}

bool lists_submitter(const ExportSubmitters& submitters, const std::string& folder, const std::string& student) {
    const auto it = submitters.find(folder);
    return it != submitters.end() && std::any_of(it->second.begin(), it->second.end(), [&](const ExportSubmitter& s) {
               const auto ids = s.ids();
               return std::find(ids.begin(), ids.end(), student) != ids.end();
           });
}

// Read once per batch. A file that cannot be read leaves the folders compared by name, and the
// summary says why.
ExportSubmitters read_export_submitters(const fs::path& root, std::vector<std::string>& notes) {
    ExportSubmitters out;
    const fs::path file = root / "submission_metadata.yml";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return out;
    try {
        const YAML::Node doc = YAML::LoadFile(file.string());
        if (!doc.IsMap()) return out;
        for (const auto& kv : doc) {
            auto& folder = out[kv.first.as<std::string>()];
            const YAML::Node subs = kv.second[":submitters"];
            if (!subs || !subs.IsSequence()) continue;
            for (const auto& u : subs) {
                auto field = [&](const char* k) { return u[k] && u[k].IsScalar() ? normalise_student(u[k].as<std::string>()) : ""; };
                ExportSubmitter s{field(":name"), field(":sid"), field(":email"), ""};
                s.email_local = s.email.substr(0, s.email.find('@'));
                if (!s.ids().empty()) folder.push_back(std::move(s));
            }
        }
    } catch (const std::exception& e) {
        out.clear();
        notes.push_back(fmt::format("{} could not be read ({}): folders were compared with their runs' students by name only; "
                                    "fix: download the export again",
                                    file.string(), e.what()));
    }
    return out;
}

bool FolderOwner::holds(const std::string& student) const {
    const std::string s = normalise_student(student);
    return !s.empty() && std::find(ids.begin(), ids.end(), s) != ids.end();
}

FolderOwner folder_owner(const std::string& folder, const ExportSubmitters& submitters, const std::vector<std::string>& roster,
                         const std::string& answers_student) {
    FolderOwner o;
    const std::string answers = normalise_student(answers_student);
    auto on_roster = [&](const std::string& id) { return std::find(roster.begin(), roster.end(), id) != roster.end(); };
    if (auto it = submitters.find(folder); it != submitters.end() && !it->second.empty()) {
        // The ID the gradebook writes for a submitter: the roster's form of it (the class's IDs),
        // else the answers' (the form the class's files carry), else the autograder's default
        // LAB_IDENTITY (the email before @), else what there is.
        auto id_of = [&](const ExportSubmitter& s) {
            const std::vector<std::string> ids = s.ids();
            for (const auto& id : ids)
                if (on_roster(id)) return id;
            if (std::find(ids.begin(), ids.end(), answers) != ids.end()) return answers;
            return ids.front();
        };
        std::string who;
        for (const auto& s : it->second) {
            for (const auto& id : s.ids()) o.ids.push_back(id);
            who += (who.empty() ? "" : ", ") + id_of(s);
        }
        // A group's row is the member the answers name, else its first member (as run_autograder does).
        const auto named = std::find_if(it->second.begin(), it->second.end(), [&](const ExportSubmitter& s) {
            const auto ids = s.ids();
            return std::find(ids.begin(), ids.end(), answers) != ids.end();
        });
        o.student = id_of(named != it->second.end() ? *named : it->second.front());
        o.how = fmt::format("submission_metadata.yml lists {} as its submitter{}", who, it->second.size() == 1 ? "" : "s");
        o.from_metadata = true;
        return o;
    }
    // A numbered folder names nobody, whatever roster ID is a number.
    if (anonymous_folder_name(folder)) return o;
    for (const auto& who : roster)
        if (folder_names_student(folder, who)) o.ids.push_back(who);
    if (o.ids.empty()) return o;
    o.student = std::find(o.ids.begin(), o.ids.end(), answers) != o.ids.end() ? answers : o.ids.front();
    o.how = fmt::format("named for roster student {}", o.student);
    return o;
}

RowIdentity row_identity(const FolderOwner& owner, const std::string& folder, const std::string& lesson,
                         const std::string& answers_student, const std::string& run_student, const std::vector<std::string>& roster) {
    const std::string a = normalise_student(answers_student), r = normalise_student(run_student);
    auto named = [](const std::string& id) { return !id.empty() && id != "anonymous"; };
    auto on_roster = [&](const std::string& id) { return std::find(roster.begin(), roster.end(), id) != roster.end(); };
    const std::string fix = fmt::format("\n  fix: each student hands in their own run (`lab run {} --token THEIR_TOKEN`) and the answers "
                                        "made for it (`lab answers {} --run RUN`)",
                                        lesson.empty() ? "ID" : lesson, lesson.empty() ? "ID" : lesson);
    if (!named(r)) {
        // No run read (its error is the row's), or an anonymous one: the folder's owner where the
        // answers name someone else, so a classmate's unreadable copy is not filed under them.
        if (named(a) && owner.known() && (owner.from_metadata || on_roster(a)) && !owner.holds(a)) return {owner.student, ""};
        return {named(a) ? answers_student : run_student, ""};
    }
    const bool owner_decides = owner.known() && (owner.from_metadata || on_roster(r));
    if (owner_decides && !owner.holds(r))
        return {owner.student, fmt::format("folder '{}' is {}'s ({}), but the run in it was recorded by {}: another "
                                           "student's run is not graded",
                                           folder, owner.student, owner.how, run_student) +
                                   fix};
    if (named(a) && a != r)
        return {owner_decides ? run_student : answers_student,
                fmt::format("the answers are {}'s, but the run was recorded by {}: answers are graded only with their own "
                            "student's run",
                            answers_student, run_student) +
                    fix};
    return {run_student, ""};
}

}  // namespace lab::grader
