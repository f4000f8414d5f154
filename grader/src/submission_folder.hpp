// What one submission folder of `lab grade` holds, and which of its files are graded together.
// Files are found by content, whatever their names: run records (they hold "lab.run/1", or open
// as one does, when cut short) and
// answers files (YAML with lesson: and answers:). A folder may hold resubmissions (several runs
// of one lesson) and several lessons; each answers file is graded against the run it names (its
// `run:` digest), never against whichever run sorts first, so a resubmission is graded fairly.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lab::grader {

// A run record found in a folder, with what a lenient read of it says (a record whose digest
// fails still names its lesson, student and digest; grading then says what is wrong with it).
struct FoundRun {
    std::filesystem::path file;
    bool parsed = false;    // the file is a JSON object
    std::string digest;     // "" when unknown
    std::string lesson;     // "" when unknown
    std::string student;    // as recorded
    std::string started_at; // ISO 8601, as recorded ("" when unknown): which run is the latest
};

struct FoundAnswers {
    std::filesystem::path file;
    std::string error;      // why load_answers refused it ("" when read)
    std::string lesson, student, run;
};

struct FolderContents {
    std::vector<FoundRun> runs;           // sorted by path
    std::vector<FoundAnswers> answers;    // sorted by path
    std::size_t files = 0;                // every regular file, recognised or not
    std::vector<std::filesystem::path> empty;   // files of 0 bytes: an upload that carried nothing
};

// Throws std::filesystem::filesystem_error for a folder that cannot be listed.
FolderContents scan_folder(const std::filesystem::path& folder);

// The students a folder's files name (normalised; anonymous and empty names left out).
std::vector<std::string> students_named(const FolderContents& c);

// The files of one gradebook row: an answers file and the run it is bound to, or why there is
// none. `run` is set whenever one run is the row's (also in error), so it is fingerprinted.
struct Pairing {
    std::string lesson;
    std::string student;                          // as the answers (else the run) name them, until the run is read
    std::filesystem::path answers, run;
    std::string bound_run;                        // the digest the answers name (their run:), "" when none
    std::string error;                            // "" when the row can be graded
    std::string error_kind;                       // unreadable | incomplete ("" when no error)
    std::vector<std::filesystem::path> ignored;   // other files of the lesson (older resubmissions)
    // Where the runs' own clocks and their files' times disagree on which submission is the
    // latest: said, so that a TA checks which one the student meant ("" when they agree).
    std::string latest_doubt;
};

// One pairing per answers file (and one per lesson whose runs have no answers file); a folder of
// several students' files is one refused row; an empty folder says so.
std::vector<Pairing> pair_files(const FolderContents& c, const std::filesystem::path& folder);

// Several lines ("what\n  fix: ...") as one CSV-friendly line: "what; fix: ...".
std::string one_line(const std::string& s);

// --- Whose folder it is -------------------------------------------------------------------------
// A run or answers file names whoever its writer chose: a student handing in a classmate's run
// hands in the classmate's name with it. What names a folder's owner from outside its files is
// the export's metadata and the folder's own name, so a folder's row belongs to that owner where
// lab can tell it (docs/gradescope.md, "Whose row it is").

// The folder name as a whole token: the student's ID equal to it, or one of its parts separated
// by _ - . a space or any other character that is not a letter or digit ("alice_1234" and
// "Smith, Alice (alice)" are alice's; "bobby_tables" is not bob's).
bool folder_names_student(const std::string& folder, const std::string& student);

// Folder names that carry no student ID: Gradescope's export (submission_1001) and LMS exports
// that number submissions.
bool anonymous_folder_name(const std::string& folder);

// One submitter of a folder of Gradescope's export, as its submission_metadata.yml lists them
// (normalised): a run of theirs may carry any of these IDs, as LAB_IDENTITY chose.
struct ExportSubmitter {
    std::string name, sid, email, email_local;
    std::vector<std::string> ids() const;   // the non-empty ones
};
using ExportSubmitters = std::map<std::string, std::vector<ExportSubmitter>>;   // folder -> its submitters

// Whether `folder`'s submitters include `student` (normalised).
bool lists_submitter(const ExportSubmitters& submitters, const std::string& folder, const std::string& student);

// Reads `root`/submission_metadata.yml (Gradescope's "Export Submissions"); empty when there is
// none. A file that cannot be read is said in `notes` and read as none.
ExportSubmitters read_export_submitters(const std::filesystem::path& root, std::vector<std::string>& notes);

// Who handed a folder in, as far as its metadata or its name tell. Unknown (no ids) for a folder
// named by number without metadata, and for a name that names no roster student.
struct FolderOwner {
    std::vector<std::string> ids;   // every ID that is the owner's, normalised (a group: every member's)
    std::string student;            // the owner's ID as the gradebook writes it (the roster's form where it has one)
    std::string how;                // how it is known, for a reason: "submission_metadata.yml lists ken as its submitter"
    bool from_metadata = false;     // Gradescope's own record of who uploaded, not a name matched against a roster
    bool known() const { return !ids.empty(); }
    bool holds(const std::string& student) const;   // `student` (any form) is one of the owner's IDs
};

// `roster`: the class's IDs (normalised; may be empty). `answers_student`: whom the folder's
// answers name, preferred among the owner's IDs when it is one (it is the form the class writes).
FolderOwner folder_owner(const std::string& folder, const ExportSubmitters& submitters, const std::vector<std::string>& roster,
                         const std::string& answers_student);

// Whose gradebook row a folder's submission is, and why it is refused when it pairs one
// student's run with another student's folder or answers.
struct RowIdentity {
    std::string student;   // the row's student: the folder's owner where known, else the answers'
    std::string refusal;   // "what\n  fix: ..."; "" when the row is graded as usual
};

// The owner decides where the metadata names them, or where the folder is named for a roster
// student and the run's student is on the roster too (a roster read by another column than the
// runs' IDs names nobody's folder, so it refuses no honest run). Where the owner is unknown, the
// answers' student, who wrote them, is the row's, rather than the run's, whose name a copied run
// carries. `answers_student`: whom the answers name ("" when there are none, or they cannot be
// read); `run_student`: whom the run was recorded for ("" when it could not be read).
RowIdentity row_identity(const FolderOwner& owner, const std::string& folder, const std::string& lesson,
                         const std::string& answers_student, const std::string& run_student, const std::vector<std::string>& roster);

}  // namespace lab::grader
