// A class roster (see roster.hpp).
#include "roster.hpp"

#include <fstream>
#include <map>

#include "course.hpp"
#include "errors.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// One CSV line's first cell: a quoted cell may hold commas and doubled quotes.
std::string first_cell(const std::string& line) {
    std::string cell;
    if (!line.empty() && line[0] == '"') {
        for (std::size_t i = 1; i < line.size(); ++i) {
            if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') cell += '"', ++i;
            else if (line[i] == '"') break;
            else cell += line[i];
        }
        return cell;
    }
    return line.substr(0, line.find(','));
}

}  // namespace

std::vector<std::string> read_roster(const fs::path& roster) {
    std::ifstream in(roster);
    if (!in) throw InputError(roster.string(), "cannot read the roster", "give a CSV with one student per row: student[,email]");
    std::vector<std::string> students;
    std::map<std::string, int> seen;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);   // a spreadsheet's byte-order mark
        const std::string where = roster.string() + ":" + std::to_string(n);
        std::string cell = first_cell(line);
        const std::string student = normalise_student(cell);
        if (student.empty() || student[0] == '#') continue;
        if (students.empty() && student == "student") continue;   // the header
        if (student == "anonymous") throw InputError(where, "'anonymous' is not a student ID", "give the student's ID");
        if (student.find_first_of("\",") != std::string::npos)
            throw InputError(where, "the student ID '" + cell + "' holds a quote or comma", "use IDs of letters, digits, . _ -");
        if (auto it = seen.find(student); it != seen.end())
            throw InputError(where, "student '" + student + "' is listed twice (first on line " + std::to_string(it->second) + ")",
                             "list each student once");
        seen[student] = n;
        students.push_back(student);
    }
    if (students.empty()) throw InputError(roster.string(), "the roster lists no students", "one student per row: student[,email]");
    return students;
}

}  // namespace lab::cli
