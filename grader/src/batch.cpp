// Batch grading (see batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "answers.hpp"
#include "course.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "roster.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;

namespace lab::grader {

namespace {

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
    bool own_folder = false;   // the folder is that student's own (its metadata lists them, or its name names them)
    std::string digest;
    std::map<std::string, double> medians;   // by workload (name + params: a sweep's points differ)
    std::string started_at;                  // to the second, as the record has it
    // Every time the run measured, as recorded: each workload's and each in-run ceiling
    // measurement's median, min, max, mean and deviation. Two honest runs never share one to the
    // last digit; a copy whose medians were jittered past near_copy often keeps the rest.
    std::set<double> measured;
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
    f.started_at = record.value("started_at", "");
    auto add = [&](const TimeStats& t) {
        for (double v : {t.median, t.min, t.max, t.mean, t.stddev})
            if (v > 0 && std::isfinite(v)) f.measured.insert(v);
    };
    for (const auto& m : raw.measurements) add(m.time);
    for (const auto& c : raw.ceiling_measurements) add(c.measurement.time);
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

// How many identical measured times make two students' runs one run's (flag_groups).
constexpr std::size_t kSharedMeasurements = 5;

bool named(const std::string& normalised) { return !normalised.empty() && normalised != "anonymous"; }

// Runs joined pair by pair into groups (union-find): a run joined to two others puts all three in
// one group.
struct RunGroups {
    std::vector<std::size_t> parent;
    explicit RunGroups(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
    std::size_t root(std::size_t i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    }
    void join(std::size_t i, std::size_t j) { parent[root(j)] = root(i); }
    // Each group's runs by its root, singletons included.
    std::map<std::size_t, std::vector<std::size_t>> members() {
        std::map<std::size_t, std::vector<std::size_t>> out;
        for (std::size_t i = 0; i < parent.size(); ++i) out[root(i)].push_back(i);
        return out;
    }
};

std::vector<FlagGroup> flag_groups(std::vector<BatchEntry>& entries, const std::vector<Fingerprint>& prints) {
    std::vector<FlagGroup> groups;
    // `informational`: the member whose row gets run_in_other_folder instead of the group's kind.
    auto add_group = [&](const std::string& kind, const std::vector<std::size_t>& members, const std::string& evidence,
                         std::optional<std::size_t> informational = std::nullopt) {
        FlagGroup g{"G" + std::to_string(groups.size() + 1), kind, {}, evidence};
        for (std::size_t m : members) {
            g.folders.push_back(entries[prints[m].entry].folder);
            entries[prints[m].entry].flags.push_back((m == informational ? std::string("run_in_other_folder") : kind) + ":" + g.id);
        }
        groups.push_back(g);
    };
    // The same run handed in more than once, whoever hands it in. Where one row is its student's,
    // from their own folder, and no other row is theirs (the others refused under their folders'
    // owners, or left without a student), that student only had their run taken: same_digest on
    // their row would read as if they had handed in a copy too, so it says that another folder
    // holds their run. Two rows of theirs (a resubmission) keep same_digest.
    std::map<std::string, std::vector<std::size_t>> by_digest;
    for (std::size_t i = 0; i < prints.size(); ++i) by_digest[prints[i].digest].push_back(i);
    for (const auto& [digest, members] : by_digest) {
        if (members.size() < 2 || digest.empty()) continue;
        std::vector<std::size_t> theirs;
        for (std::size_t m : members)
            if (named(prints[m].student) && normalise_student(entries[prints[m].entry].student) == prints[m].student) theirs.push_back(m);
        std::string evidence = fmt::format("{} folders hold the same run ({}…)", members.size(), digest.substr(0, 19));
        std::optional<std::size_t> own;
        if (theirs.size() == 1 && prints[theirs[0]].own_folder) {
            own = theirs[0];
            const BatchEntry& e = entries[prints[*own].entry];
            evidence += fmt::format(": {}'s, from their folder '{}'; no other of these rows is {}'s", e.run_student, e.folder, e.run_student);
        }
        add_group("same_digest", members, evidence, own);
    }
    // Near-copies: runs of different students whose medians all agree within the tolerance.
    RunGroups near_groups(prints.size());
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
            near_groups.join(i, j);
            links.push_back({i, j, d, where});
        }
    // The evidence of a group: the largest difference among the pairs that joined it.
    std::map<std::size_t, const Link*> worst;
    for (const auto& l : links)
        if (const Link*& w = worst[near_groups.root(l.i)]; !w || l.difference > w->difference) w = &l;
    for (const auto& [r, members] : near_groups.members()) {
        if (members.size() < 2) continue;
        std::set<std::string> students;
        for (std::size_t m : members) students.insert(prints[m].student);
        if (students.size() < 2) continue;
        add_group("near_copy", members,
                  fmt::format("{} runs of {} students agree on every workload's median within {:g}% (largest difference {:.2g}%{})",
                              members.size(), students.size(), 100 * kNearCopyTolerance, 100 * worst.at(r)->difference,
                              worst.at(r)->where.empty() ? "" : ", on " + worst.at(r)->where));
    }
    // Shared measurements: runs of different students holding many identical measured times, that
    // near_copy did not group already (a red-team review jittered a classmate's medians by 1-3% and
    // kept the in-run ceiling measurements, start time and notes: not flagged). Times are counted
    // in whole nanoseconds, so two honest runs of a class can share one or two by chance; at least
    // kSharedMeasurements, and a tenth of the smaller run's, they cannot. The same start second is
    // said when it is so too, never alone (a class running in one session shares seconds).
    std::set<std::pair<std::size_t, std::size_t>> near;
    for (const auto& l : links) near.insert({l.i, l.j});
    RunGroups shared_groups(prints.size());
    struct Shared {
        std::size_t i, same;
        bool same_start;
    };
    std::vector<Shared> pairs;
    for (std::size_t i = 0; i < prints.size(); ++i)
        for (std::size_t j = i + 1; j < prints.size(); ++j) {
            if (prints[i].student == prints[j].student || prints[i].digest == prints[j].digest || near.count({i, j})) continue;
            std::size_t same = 0;
            for (double v : prints[i].measured) same += prints[j].measured.count(v);
            const std::size_t smaller = std::min(prints[i].measured.size(), prints[j].measured.size());
            if (same < kSharedMeasurements || 10 * same < smaller) continue;
            shared_groups.join(i, j);
            pairs.push_back({i, same, !prints[i].started_at.empty() && prints[i].started_at == prints[j].started_at});
        }
    for (const auto& [r, members] : shared_groups.members()) {
        if (members.size() < 2) continue;
        std::set<std::string> students;
        for (std::size_t m : members) students.insert(prints[m].student);
        std::size_t fewest = SIZE_MAX;   // the fewest shared times between two runs that joined it
        bool same_start = false;
        for (const auto& p : pairs)
            if (shared_groups.root(p.i) == r) fewest = std::min(fewest, p.same), same_start = same_start || p.same_start;
        add_group("shared_measurement", members,
                  fmt::format("{} runs of {} students share measured times to the last digit (at least {} between runs of two of "
                              "them{}); honest runs share none but by chance, one or two",
                              members.size(), students.size(), fewest, same_start ? "; some started in the same second" : ""));
    }
    return groups;
}

bool has_flag(const BatchEntry& e, const std::string& flag) { return std::find(e.flags.begin(), e.flags.end(), flag) != e.flags.end(); }

// folder_mismatch: a folder named for one student holding another's run. Folders that carry no
// name (Gradescope's submission_NNNN, a folder with its own submission_metadata.json) are not
// compared, else every honest one is flagged and a real swap is lost among them; a Gradescope
// export's submission_metadata.yml names each folder's submitters, and those are compared.
void flag_folder_mismatches(std::vector<BatchEntry>& entries, const std::vector<Fingerprint>& prints, const fs::path& root,
                            const ExportSubmitters& submitters, std::vector<std::string>& notes) {
    bool unnamed = false;
    for (const auto& p : prints) {
        BatchEntry& e = entries[p.entry];
        if (p.student.empty()) continue;
        bool agrees = true;
        std::error_code ec;
        if (submitters.count(e.folder))
            agrees = lists_submitter(submitters, e.folder, p.student);
        else if (anonymous_folder_name(e.folder) || fs::exists(root / e.folder / "submission_metadata.json", ec))
            unnamed = true;
        else
            agrees = folder_names_student(e.folder, p.student);
        if (!agrees && !has_flag(e, "folder_mismatch")) e.flags.push_back("folder_mismatch");
    }
    if (!submitters.empty())
        notes.push_back("each run's student was compared with its folder's submitters in " + (root / "submission_metadata.yml").string());
    if (unnamed)
        notes.push_back("some folder names carry no student ID (e.g. submission_1001): their runs' students were not compared with "
                        "them (folder_mismatch); duplicate_student, same_digest and near_copy still apply");
}

// A row as the duplicate_student note names it: its folder and how it stands ("graded 6/6").
std::string row_standing(const BatchEntry& e) {
    const std::string status = e.status();
    if (e.ok && e.report.graded) return fmt::format("folder '{}' ({} {:g}/{:g})", e.folder, status, e.report.score, e.report.max_score);
    return fmt::format("folder '{}' ({})", e.folder, status);
}

// duplicate_student: one student in more than one row of a lesson (a resubmission in another
// folder, or a classmate's folder holding their run: one student graded twice). Each such row
// names the student's other rows and how they stand: an import keyed on the student takes one
// row, and the one it takes may be a 0 beside a graded submission.
void flag_duplicate_students(std::vector<BatchEntry>& entries) {
    std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> rows;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::string who = normalise_student(entries[i].student);
        if (!who.empty() && who != "anonymous") rows[{who, entries[i].lesson}].push_back(i);
    }
    for (const auto& [key, members] : rows) {
        if (members.size() < 2) continue;
        for (std::size_t i : members) {
            std::string others;
            for (std::size_t j : members)
                if (j != i) others += (others.empty() ? "" : ", ") + row_standing(entries[j]);
            BatchEntry& e = entries[i];
            e.flags.push_back("duplicate_student");
            e.duplicate_note = fmt::format("{} has {} for lesson {}: {}", key.first,
                                           members.size() == 2 ? std::string("another row") : fmt::format("{} other rows", members.size() - 1),
                                           key.second.empty() ? "-" : key.second, others);
        }
    }
}

// bound_to_other_folder: answers bound (run: digest) to a run that another folder of the class
// holds, not to the run beside them: made from a classmate's run (or handed into the wrong
// folder). The row was an error ("bound to another run") that named only a digest; it names the
// folder, since that is what the operator can look at. Never of a graded row: grading needs the
// answers' own run.
void flag_answers_bound_elsewhere(std::vector<BatchEntry>& entries, const std::vector<Fingerprint>& prints) {
    std::map<std::string, std::set<std::string>> holders;   // digest -> folders holding that run
    for (const auto& p : prints)
        if (!p.digest.empty()) holders[p.digest].insert(entries[p.entry].folder);
    std::map<std::size_t, std::string> own_digest;   // entry -> the digest of its run
    for (const auto& p : prints) own_digest[p.entry] = p.digest;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        BatchEntry& e = entries[i];
        if (e.answers_run.empty() || (e.ok && e.report.graded)) continue;
        if (auto own = own_digest.find(i); own != own_digest.end() && own->second == e.answers_run) continue;
        auto it = holders.find(e.answers_run);
        if (it == holders.end()) continue;
        std::string folders;
        for (const auto& f : it->second)
            if (f != e.folder) folders += (folders.empty() ? "" : ", ") + f + "/";
        if (folders.empty()) continue;
        const std::string note = fmt::format("the answers were made from the run in folder {}", folders);
        if (e.ok) e.report.problems.push_back(note);
        else e.error += "\n  note: " + note;
        e.flags.push_back("bound_to_other_folder");
    }
}

// One student's run handed in by them in their own folder and again in a folder that lab cannot
// say is anyone's (no metadata, no roster student's name), under the same student: as it is,
// that student would have two rows, one a copy, and an import keyed on the student could take
// either. The second row is not counted as theirs: its student is left empty and its grade kept
// (who handed it in is the operator's to decide), and a warning says so.
void unname_copies(std::vector<BatchEntry>& entries, const std::vector<Fingerprint>& prints, std::vector<std::string>& warnings) {
    std::map<std::string, std::size_t> own;   // digest -> the print of its student's row from their own folder
    for (std::size_t i = 0; i < prints.size(); ++i)
        if (prints[i].own_folder && !prints[i].digest.empty() && named(prints[i].student) &&
            normalise_student(entries[prints[i].entry].student) == prints[i].student)
            own.emplace(prints[i].digest, i);
    for (const auto& p : prints) {
        BatchEntry& e = entries[p.entry];
        auto it = own.find(p.digest);
        if (p.own_folder || it == own.end() || prints[it->second].student != p.student || normalise_student(e.student) != p.student)
            continue;
        const BatchEntry& theirs = entries[prints[it->second].entry];
        warnings.push_back(fmt::format("folder '{}' holds {}'s run, which {}'s own folder '{}' holds too: that row is not counted as "
                                       "{}'s (its student is left empty, its grade kept); decide who handed it in",
                                       e.folder, e.run_student, e.run_student, theirs.folder, e.run_student));
        e.student.clear();
    }
}

std::vector<fs::path> subfolders(const fs::path& dir) {
    std::vector<fs::path> folders;
    try {
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_directory()) folders.push_back(e.path());
    } catch (const fs::filesystem_error& e) {
        throw InputError(dir.string(), std::string("cannot list the submissions: ") + e.code().message());
    }
    std::sort(folders.begin(), folders.end());
    return folders;
}

// True when `folder` is a level above the submissions (an export root: export/{alice,bob,...}):
// at least two of its subfolders hold runs or answers, and they name at least two students.
bool holds_submission_folders(const fs::path& folder) {
    std::vector<fs::path> subs;
    try {
        subs = subfolders(folder);
    } catch (const InputError&) {
        return false;
    }
    if (subs.size() < 2) return false;
    std::set<std::string> students;
    int with_files = 0;
    for (const auto& s : subs) {
        try {
            const FolderContents c = scan_folder(s);
            with_files += !c.runs.empty() || !c.answers.empty();
            for (const auto& who : students_named(c)) students.insert(who);
        } catch (const fs::filesystem_error&) {
        }
    }
    return with_files >= 2 && students.size() >= 2;
}

// The spec's maximum (every question's points), so a row not graded still has a denominator;
// 0 when the lesson has no spec here.
double spec_max(GradingContext& ctx, const std::string& lesson) {
    if (lesson.empty()) return 0;
    try {
        double m = 0;
        for (const auto& q : ctx.spec(lesson).questions) m += q.points;
        return m;
    } catch (const std::exception&) {
        return 0;
    }
}

// A lesson the class handed in, graded without its spec, would be a gradebook of zeros whose
// rows blame the students ("could not be read"). The spec is the operator's to give: a missing or
// broken one stops the batch before anything is written, as an unknown --lesson does. Asked only
// of a row whose answers and run agree on the lesson, so a student's typo in `lesson:` stays that
// row's error.
void require_spec(GradingContext& ctx, const std::string& lesson, const std::string& folder) {
    const std::string context =
        "folder '" + folder + "' holds a submission of lesson " + lesson + ", whose grading spec cannot be used, so nothing was graded: ";
    try {
        ctx.spec(lesson);
    } catch (const InputError& e) {
        throw InputError("", context + e.what());
    } catch (const UsageError& e) {   // the spec names a lesson no plugin here is
        throw InputError("", context + e.what());
    }
}

std::string error_kind_of(const std::string& message, bool run_unreadable) {
    if (message.find("digest does not match") != std::string::npos) return "tampered";
    return run_unreadable ? "unreadable" : "incomplete";
}

// How many runs whose tokens all fail the key make the key, not the class, the likelier mistake.
// One run alone is as likely a made-up token as a wrong key: it is refused in its row, and the
// summary warns.
constexpr int kRunsToDoubtTheKey = 2;

// The runs of the class that carry a course token, and how many of those the key verifies; the
// first one, to show the operator how to check the key against it.
struct TokenTally {
    int carried = 0, verified = 0;
    std::string example_student, example_folder;
    void count(const nlohmann::json& record, const GradingContext& ctx, const std::string& folder) {
        if (!ctx.key() || !record.contains("token") || !record["token"].is_string()) return;
        const auto token = parse_token(record["token"].get<std::string>());
        if (!token) return;
        ++carried;
        verified += token_verifies(*ctx.key(), ctx.course().course, *token);
        if (example_student.empty()) example_student = token->student, example_folder = folder;
    }
};

// Every token refused and none verified, over enough runs: a wrong key (or a wrong course:
// in configs/course.yaml) is the likelier mistake than a class of forged tokens. Graded, it
// was a gradebook of zeros, each row blaming its student, and exit 0; refused like a missing
// spec, nothing written.
void refuse_unverified_key(const TokenTally& t, const GradingContext& ctx) {
    if (t.carried < kRunsToDoubtTheKey || t.verified > 0) return;
    throw InputError(ctx.key()->file,
                     fmt::format("none of the {} runs that carry a course token verifies with this course key, so nothing was graded "
                                 "(every row would be refused as a token this course's key did not issue, a gradebook of zeros)",
                                 t.carried),
                     fmt::format("check the key: `lab token ROSTER.csv --key {}` prints the token it issues to each student; the one it "
                                 "prints for {} must be the \"token\" in the run in folder '{}'. Give the key the tokens were issued "
                                 "with (--key FILE or $LAB_COURSE_KEY), and check that configs/course.yaml's course: ({}) is this "
                                 "course's",
                                 ctx.key()->file, t.example_student, t.example_folder, ctx.course().course));
}

}  // namespace

std::string BatchEntry::status() const {
    if (missing) return "missing";
    if (!ok) return "error";
    if (!report.graded) return "refused";
    return report.mode == "course" ? "graded" : "practice";
}

std::string BatchEntry::reason() const {
    if (missing) return "no submission";
    // A row not graded beside another row of its student says where that one is: the reason is
    // what an import keyed on the student shows with the 0.
    const std::string duplicate = duplicate_note.empty() ? "" : "; duplicate_student: " + duplicate_note;
    if (!ok) return one_line(error) + duplicate;
    if (!report.graded) {
        std::string all;
        for (const auto& p : report.problems) all += (all.empty() ? "" : "; ") + p;
        return one_line(all) + duplicate;
    }
    return "";
}

BatchResult grade_directory(GradingContext& ctx, const fs::path& dir, const BatchProgress& progress, const BatchOptions& options) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(dir.string(), "not a folder of submissions", "give the folder holding one folder per submission");
    BatchResult result;
    fs::path root = dir;
    std::vector<fs::path> folders = subfolders(root);
    // An export with one more level: descend, and say so (grading it as one student merged a class).
    while (folders.size() == 1 && holds_submission_folders(folders[0])) {
        root = folders[0];
        folders = subfolders(root);
        result.notes.push_back(fmt::format("{} holds a single folder, {}, that holds {} submission folders: graded those", dir.string(),
                                           root.lexically_relative(dir).string(), folders.size()));
    }
    if (folders.empty())
        throw InputError(dir.string(), "no submission folders in " + dir.string(),
                         "give the folder that holds one folder per submission (DIR/alice/, DIR/bob/, ...)");
    result.graded_dir = root;
    // An unknown --lesson is refused before any grading, as an unknown lesson ID ("2.9" was said as
    // a grading spec to install), then a lesson without a spec.
    if (!options.lesson.empty()) ctx.lesson(options.lesson), ctx.spec(options.lesson);
    const ExportSubmitters submitters = read_export_submitters(root, result.notes);

    std::vector<Fingerprint> prints;
    TokenTally tokens;
    std::map<std::string, std::pair<int, int>> missed;  // question -> (not correct, graded)
    std::size_t done = 0;
    for (const auto& folder : folders) {
        if (progress) progress(folder.filename().string(), done++, folders.size());
        std::vector<Pairing> rows;
        try {
            rows = pair_files(scan_folder(folder), folder);
        } catch (const fs::filesystem_error& ex) {
            Pairing p;
            p.error = "cannot read the folder: " + ex.code().message() + " (" + ex.path1().string() + ")";
            p.error_kind = "unreadable";
            rows = {p};
        }
        for (const auto& p : rows) {
            BatchEntry e;
            e.folder = folder.filename().string();
            e.lesson = p.lesson;
            e.student = p.student;
            e.run_file = p.run.string();
            e.answers_run = p.bound_run;
            const FolderOwner owner = folder_owner(e.folder, submitters, options.roster, p.student);
            for (const auto& f : p.ignored) e.ignored.push_back(f.lexically_relative(folder).string());
            e.latest_doubt = p.latest_doubt;
            bool run_unreadable = false;
            // Read once: every readable run is compared across the class, graded or not, and
            // graded from the same copy.
            std::optional<std::pair<nlohmann::json, RawRun>> read;
            if (!p.run.empty()) {
                try {
                    nlohmann::json rec = record::read_record(p.run);
                    RawRun raw = record::raw_run_from_record(rec);
                    Fingerprint f = fingerprint(rec, raw);
                    f.entry = result.entries.size();
                    f.own_folder = owner.from_metadata ? owner.holds(f.student)
                                                       : !anonymous_folder_name(e.folder) && folder_names_student(e.folder, f.student);
                    e.run_student = raw.options.student;
                    e.lesson = raw.lesson_id;
                    tokens.count(rec, ctx, e.folder);
                    prints.push_back(std::move(f));
                    read.emplace(std::move(rec), std::move(raw));
                } catch (const std::exception&) {
                    // Reported by grading, which reads it again and says what is wrong.
                    run_unreadable = true;
                }
            }
            // Whose row it is, decided before grading: a classmate's run is refused in the row of
            // whoever handed it in, never graded or filed under its own student.
            const RowIdentity who = row_identity(owner, e.folder, e.lesson, p.answers.empty() ? "" : p.student, e.run_student, options.roster);
            e.student = who.student;
            // Outside the row's try: the operator's mistake ends the batch (--lesson's spec was
            // asked for above).
            if (options.lesson.empty() && p.error.empty() && read && !e.lesson.empty() && e.lesson == p.lesson)
                require_spec(ctx, e.lesson, e.folder);
            // Each row on its own: whatever one holds, the others are graded.
            try {
                if (!options.lesson.empty() && !e.lesson.empty() && e.lesson != options.lesson) {
                    e.ok = true;
                    e.report.lesson = e.lesson;
                    e.report.student = e.student;
                    e.report.problems.push_back(fmt::format("a submission of lesson {}, not {}: not graded (lab grade --lesson {})",
                                                            e.lesson, options.lesson, options.lesson));
                } else if (!p.error.empty()) {
                    e.error = p.error;
                    e.error_kind = p.error_kind;
                } else if (!who.refusal.empty()) {
                    // Refused, not an error: the files were read, and they are someone else's.
                    e.ok = true;
                    e.report.lesson = e.lesson;
                    e.report.student = e.student;
                    e.report.problems.push_back(who.refusal);
                } else {
                    e.report = read ? grade_read_run(ctx, "", p.answers, read->first, read->second, p.run) : grade_files(ctx, "", p.answers, p.run);
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
                e.error_kind = "unreadable";
            } catch (const std::exception& ex) {
                e.ok = false;
                e.error = ex.what();
                e.error_kind = error_kind_of(e.error, run_unreadable);
            }
            result.entries.push_back(std::move(e));
        }
    }
    refuse_unverified_key(tokens, ctx);
    // An answer to a question the spec does not ask is said to the student, and to the operator
    // once for the class: a question renamed in the spec after the answers were written
    // ('units_used' -> 'units_share') otherwise zeroes it for everyone without a word.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> unasked;   // (lesson, key) -> folders
    for (const auto& e : result.entries)
        if (e.ok)
            for (const auto& key : std::set<std::string>(e.report.unasked.begin(), e.report.unasked.end()))
                unasked[{e.report.lesson, key}].push_back(e.folder);
    for (const auto& [what, folders] : unasked) {
        std::string list;
        for (std::size_t i = 0; i < folders.size() && i < 5; ++i) list += (i ? ", " : "") + folders[i];
        if (folders.size() > 5) list += fmt::format(" and {} more", folders.size() - 5);
        result.warnings.push_back(fmt::format("{} answers file{} of lesson {} answer '{}', which the grading spec does not ask: not graded "
                                              "({}); if a question was renamed in the spec, the students' answers to it are not read",
                                              folders.size(), folders.size() == 1 ? "" : "s", what.first, what.second, list));
    }
    unname_copies(result.entries, prints, result.warnings);
    result.groups = flag_groups(result.entries, prints);
    flag_folder_mismatches(result.entries, prints, root, submitters, result.notes);
    flag_answers_bound_elsewhere(result.entries, prints);
    // The lesson of rows that carry no lesson of their own (roster students who handed in nothing).
    std::set<std::string> lessons;
    for (const auto& e : result.entries)
        if (!e.lesson.empty()) lessons.insert(e.lesson);
    const std::string class_lesson = !options.lesson.empty() ? options.lesson : lessons.size() == 1 ? *lessons.begin() : "";
    // A row no file names a student or lesson for (an empty folder, a folder of two students'
    // files) is of the class's lesson, and the student of the roster its folder is named for,
    // when it names one: an import by the student column finds it, and that student is not also
    // "missing". Decided before the flags, so that it is one of that student's rows for
    // duplicate_student (heidi's empty folder beside heidi's run in another folder).
    for (auto& e : result.entries) {
        if (e.missing || e.ok) continue;
        if (e.lesson.empty()) e.lesson = class_lesson;
        if (!e.student.empty()) continue;
        std::vector<std::string> named;
        for (const auto& who : options.roster)
            if (folder_names_student(e.folder, who)) named.push_back(who);
        if (named.size() == 1) e.student = named.front();
    }
    flag_duplicate_students(result.entries);

    for (const auto& who : options.roster) {
        const bool handed_in = std::any_of(result.entries.begin(), result.entries.end(), [&](const BatchEntry& e) {
            return normalise_student(e.student) == who || folder_names_student(e.folder, who);
        });
        if (handed_in) continue;
        // A group member whose partner uploaded: Gradescope's export lists both among the folder's
        // submitters, and Gradescope gives both the group's grade; so does the gradebook, in a
        // row of their own flagged group_member (never "missing").
        std::optional<BatchEntry> group;
        for (const auto& e : result.entries)
            if (!e.missing && lists_submitter(submitters, e.folder, who)) {
                group = e;
                break;
            }
        if (group) {
            group->student = who;
            // duplicate_student was said of the partner's rows, not of this student's one.
            group->flags.erase(std::remove(group->flags.begin(), group->flags.end(), "duplicate_student"), group->flags.end());
            group->duplicate_note.clear();
            group->flags.push_back("group_member");
            result.entries.push_back(std::move(*group));
            continue;
        }
        BatchEntry m;
        m.missing = true;
        m.student = who;
        m.lesson = class_lesson;
        result.entries.push_back(std::move(m));
    }
    std::vector<std::string> handed_in;
    for (const auto& e : result.entries)
        if (!e.missing) handed_in.push_back(e.student);
    for (auto& w : roster_mismatch_warnings(options.roster, handed_in, options.roster_rule)) result.warnings.push_back(std::move(w));
    // Every token refused and none verified: the key (or the course's salt) is the likelier
    // mistake than a whole class of forged tokens, and each row's reason blames the student.
    int unverified = 0, graded = 0;
    for (const auto& e : result.entries) {
        graded += e.status() == "graded";
        unverified += e.reason().find("was not issued by this course's key") != std::string::npos;
    }
    if (unverified >= 1 && graded == 0)
        result.warnings.push_back(fmt::format("none of the {} runs with a course token verified with this key: is it this course's key "
                                              "(the one `lab token` issued the tokens with), and configs/course.yaml this course's?",
                                              unverified));

    // A row not graded still has the maximum, so score / max works in a spreadsheet.
    for (auto& e : result.entries)
        if (!(e.ok && e.report.graded) && e.report.max_score == 0)
            e.report.max_score = spec_max(ctx, !options.lesson.empty() ? options.lesson : !e.lesson.empty() ? e.lesson : class_lesson);

    // Question columns: by lesson, then the spec's order (else the order results came in).
    // The class's lesson has its columns even when no row was graded (an import expects them).
    std::set<std::string> graded_lessons;
    if (!class_lesson.empty()) graded_lessons.insert(class_lesson);
    for (const auto& e : result.entries)
        if (!e.report.results.empty()) graded_lessons.insert(e.report.lesson);
    for (const auto& lesson : graded_lessons) {
        std::vector<std::string> ids;
        try {
            for (const auto& q : ctx.spec(lesson).questions) ids.push_back(q.id);
        } catch (const std::exception&) {
        }
        for (const auto& e : result.entries)
            if (e.report.lesson == lesson)
                for (const auto& q : e.report.results)
                    if (std::find(ids.begin(), ids.end(), q.question.id) == ids.end()) ids.push_back(q.question.id);
        for (const auto& id : ids) result.questions.push_back({lesson, id});
        try {
            const GradingSpec& spec = ctx.spec(lesson);
            result.specs.push_back({lesson, spec.file, spec.sha256, ctx.lesson(lesson).info.version});
        } catch (const std::exception&) {
            // no spec here: its rows say so
        }
    }

    for (const auto& [q, m] : missed)
        if (m.second > 0) result.most_missed.push_back({q, static_cast<double>(m.first) / m.second});
    std::sort(result.most_missed.begin(), result.most_missed.end(),
              [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
    return result;
}

std::string spec_used_text(const SpecUsed& s) {
    return fmt::format("lesson {}: spec {} (sha256 {}), lesson plugin {}", s.lesson, s.file, s.sha256.substr(0, kShortSha256),
                       s.plugin_version.empty() ? "-" : s.plugin_version);
}

std::string gradebook_csv(const BatchResult& r) {
    std::set<std::string> lessons;
    for (const auto& [lesson, id] : r.questions) lessons.insert(lesson);
    const bool prefixed = lessons.size() > 1;
    std::string out = "folder,student,lesson,score,max,status,reason,flags";
    for (const auto& [lesson, id] : r.questions) out += "," + csv_field(prefixed ? lesson + ":" + id : id);
    out += "\n";
    for (const auto& e : r.entries) {
        std::string flags;
        for (const auto& f : e.flags) flags += (flags.empty() ? "" : " ") + f;
        const bool scored = e.ok && e.report.graded;
        out += csv_field(e.folder) + "," + csv_field(e.student) + "," + csv_field(e.lesson) + "," +
               fmt::format("{:g}", scored ? e.report.score : 0.0) + "," +
               (e.report.max_score > 0 ? fmt::format("{:g}", e.report.max_score) : "") + "," + e.status() + "," + csv_field(e.reason()) +
               "," + csv_field(flags);
        for (const auto& [lesson, id] : r.questions) {
            // A row not graded leaves its questions blank, as a missing one does: a 0 there would
            // read as a wrong answer where none was graded (its score column says 0).
            std::string cell;
            if (scored && e.report.lesson == lesson)
                for (const auto& res : e.report.results)
                    if (res.question.id == id)
                        cell = res.verdict == Verdict::void_question ? "void" : fmt::format("{:g}", res.points);
            out += "," + cell;
        }
        out += "\n";
    }
    return out;
}

}  // namespace lab::grader
