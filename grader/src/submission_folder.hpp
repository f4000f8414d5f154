// What one submission folder of `lab grade` holds, and which of its files are graded together.
// Files are found by content, whatever their names: run records (they hold "lab.run/1", or open
// as one does, when cut short) and
// answers files (YAML with lesson: and answers:). A folder may hold resubmissions (several runs
// of one lesson) and several lessons; each answers file is graded against the run it names (its
// `run:` digest), never against whichever run sorts first, so a resubmission is graded fairly.
#pragma once

#include <cstddef>
#include <filesystem>
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
    std::string error;                            // "" when the row can be graded
    std::string error_kind;                       // unreadable | incomplete ("" when no error)
    std::vector<std::filesystem::path> ignored;   // other files of the lesson (older resubmissions)
};

// One pairing per answers file (and one per lesson whose runs have no answers file); a folder of
// several students' files is one refused row; an empty folder says so.
std::vector<Pairing> pair_files(const FolderContents& c, const std::filesystem::path& folder);

// Several lines ("what\n  fix: ...") as one CSV-friendly line: "what; fix: ...".
std::string one_line(const std::string& s);

}  // namespace lab::grader
