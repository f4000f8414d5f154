// A class roster (CSV) read into student IDs, the same IDs the autograder will compare runs with.
//
// A student's ID is what their token names and what Gradescope's run_autograder passes as
// `--as` (LAB_IDENTITY: the email's local part by default, or the email, the SID, the name). A
// roster read by another rule than the autograder's would issue every student a token for an ID
// the autograder never sees, and refuse the whole class; so the roster's column is chosen by the
// same names: `student` (a column of IDs: the first column, or one headed "student"/"id"),
// `email_local`, `email`, `sid`, `name`. Gradescope's roster export (First Name, Last Name, SID,
// Email, ...) is read by its header.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lab::grader {

struct RosterStudent {
    std::string id;   // normalised (normalise_student), as tokens and grading compare it
    int line = 0;     // 1-based line in the roster file
};

struct Roster {
    std::vector<RosterStudent> students;
    std::string rule;     // how the IDs were read: "column 'Email', its part before @ (email_local)"
    std::string warning;  // "" or what would make the autograder refuse these IDs (whole emails read as IDs)
    int staff_skipped = 0;  // rows whose Role is not Student (instructors, TAs): no token
};

// The identities a roster can be read by: "" chooses (a "student"/"id" column, else an email
// column's local part, which is Gradescope's default, else the first column).
inline const char* kRosterIdentities = "student, email_local, email, sid, name";

// Reads `file`. InputError (with file:line and a fix) for an unreadable file, an identity whose
// column the header lacks, an empty ID, an ID with characters no ID has (quotes, commas, <, =),
// a student listed twice, and a roster with no students.
Roster read_roster(const std::filesystem::path& file, const std::string& identity = "");

// What the operator must hear before importing a gradebook whose students do not match the
// roster: none of them on it (most often a roster read by another column than the runs' IDs, so
// every roster student reads as missing), or some not on it (a late enrolment, a roster of one
// section), named. `roster`: the IDs read (normalised); `handed_in`: the students of the
// gradebook's rows (any form; empty and anonymous ones left out); `rule`: Roster::rule ("" when
// unknown). Empty when every student who handed in is on the roster.
std::vector<std::string> roster_mismatch_warnings(const std::vector<std::string>& roster, const std::vector<std::string>& handed_in,
                                                  const std::string& rule);

// Whether an ID holds only what a student ID may: letters (any script), digits and . _ - + @ ',
// starting with a letter, a digit or _ (a leading = + - @ makes a spreadsheet formula).
bool plausible_student_id(const std::string& id);

}  // namespace lab::grader
