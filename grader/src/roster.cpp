// Reading a class roster into student IDs (see roster.hpp).
#include "roster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "course.hpp"
#include "command_files.hpp"
#include "errors.hpp"
#include "input_file.hpp"

namespace lab::grader {

namespace {

// The cells of one CSV line, split at `separator`: a quoted cell may hold separators and doubled
// quotes; cells are trimmed. `unclosed` is set when a quote opened is never closed on it.
std::vector<std::string> csv_cells(const std::string& line, char separator, bool* unclosed = nullptr) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
            else if (c == '"') quoted = false;
            else cells.back() += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == separator) {
            cells.emplace_back();
        } else {
            cells.back() += c;
        }
    }
    if (unclosed) *unclosed = quoted;
    for (auto& cell : cells) {
        const auto b = cell.find_first_not_of(" \t"), e = cell.find_last_not_of(" \t");
        cell = b == std::string::npos ? "" : cell.substr(b, e - b + 1);
    }
    return cells;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A header cell's meaning: "First Name" -> "first name", "E-mail" -> "email", "Student ID" -> "sid".
std::string column_kind(const std::string& cell) {
    std::string h = lower(cell);
    h.erase(std::remove(h.begin(), h.end(), '-'), h.end());
    std::replace(h.begin(), h.end(), '_', ' ');
    if (h == "student" || h == "id" || h == "student name" || h == "username" || h == "login") return "student";
    if (h == "email" || h == "email address") return "email";
    if (h == "sid" || h == "student id" || h == "student number") return "sid";
    if (h == "name" || h == "full name") return "name";
    if (h == "first name" || h == "given name") return "first name";
    if (h == "last name" || h == "surname" || h == "family name") return "last name";
    if (h == "role") return "role";
    return "";
}

// Column index of each kind a header row names; empty when the row is not a header.
std::map<std::string, std::size_t> header_columns(const std::vector<std::string>& cells) {
    std::map<std::string, std::size_t> columns;
    for (std::size_t i = 0; i < cells.size(); ++i)
        if (std::string k = column_kind(cells[i]); !k.empty() && !columns.count(k)) columns[k] = i;
    return columns;
}

}  // namespace

// Unicode's invisible format characters (U+200B, U+200E, U+200F, U+202A..U+202E, U+2060..U+206F:
// zero-width spaces, bidirectional overrides), which make one ID look like another, and print
// the rest of a message backwards.
bool has_invisible_format_char(const std::string& id) {
    for (std::size_t at = id.find('\xE2'); at != std::string::npos && at + 2 < id.size(); at = id.find('\xE2', at + 1)) {
        const char b = id[at + 1], c = id[at + 2];
        // U+200C and U+200D (zero-width non-joiner and joiner) are part of how Persian and Indic
        // names are written: kept.
        if (b == '\x80' && (c == '\x8B' || c == '\x8E' || c == '\x8F' || (c >= '\xAA' && c <= '\xAE'))) return true;
        if (b == '\x81' && c >= '\xA0' && c <= '\xAF') return true;
    }
    return false;
}

bool plausible_student_id(const std::string& id) {
    if (id.empty() || has_invisible_format_char(id)) return false;
    const auto first = static_cast<unsigned char>(id[0]);
    if (!(std::isalnum(first) || first == '_' || first >= 0x80)) return false;
    return std::all_of(id.begin(), id.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return std::isalnum(u) || u >= 0x80 || std::string_view("._-+@'").find(ch) != std::string_view::npos;
    });
}

Roster read_roster(const std::filesystem::path& file, const std::string& identity) {
    const std::string known = kRosterIdentities;
    if (!identity.empty() && identity != "student" && identity != "email_local" && identity != "email" && identity != "sid" &&
        identity != "name")
        throw UsageError("unknown roster identity '" + identity + "'\n  fix: one of " + known +
                         " (the autograder's LAB_IDENTITY: email_local unless you set it)");
    note_input(file);
    // Read as every input file is: a folder or an unreadable file said with the fix, and its size
    // bounded (a class of 100,000 students is a few MiB).
    std::istringstream in(read_input_text(file, "the roster", 64u << 20,
                                          "give the class's roster CSV (Gradescope: Roster, Download), one student per row "
                                          "under a header row naming its columns"));

    // Rows that hold something (not blank, not # comments), with their lines.
    std::vector<std::pair<int, std::vector<std::string>>> rows;
    // Commas, unless the first row has semicolons and no comma: the CSV a spreadsheet writes where
    // the decimal mark is a comma (a European Excel's "CSV").
    char separator = ',';
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const std::string where = file.string() + ":" + std::to_string(n);
        // A NUL on every line is a UTF-16 file without its byte-order mark, read as bytes (the checks of the ID's own bytes
        // are below: a name column in Windows-1252 is no one's ID).
        if (line.find('\0') != std::string::npos)
            throw InputError(where, "the roster's line holds a NUL byte: it is UTF-16 text, or not text", "save the roster as UTF-8 CSV");
        bool unclosed = false;
        std::vector<std::string> cells = csv_cells(line, separator, &unclosed);
        const bool comment = !cells[0].empty() && cells[0][0] == '#';
        if (rows.empty() && cells.size() == 1 && !comment)
            if (auto by_semicolons = csv_cells(line, ';', &unclosed); by_semicolons.size() > 1) {
                separator = ';';
                cells = std::move(by_semicolons);
            }
        if (unclosed) throw InputError(where, "a quote opened on this line is never closed", "close the quote, or remove it");
        if (rows.empty() && cells.size() == 1 && cells[0].find('\t') != std::string::npos)
            throw InputError(where, "the roster's columns are separated by tabs: lab reads CSV, whose columns are separated by commas",
                             "export the roster as CSV (comma-separated)");
        if (std::all_of(cells.begin(), cells.end(), [](const std::string& c) { return c.empty(); })) continue;
        if (!cells[0].empty() && cells[0][0] == '#') continue;
        rows.emplace_back(n, std::move(cells));
    }
    if (rows.empty()) throw InputError(file.string(), "the roster lists no students", "one student per row, under a header row naming the columns");

    const auto columns = header_columns(rows.front().second);
    const bool header = !columns.empty();
    const std::string header_text = [&] {
        std::string t;
        for (const auto& c : rows.front().second) t += (t.empty() ? "" : ", ") + c;
        return t;
    }();
    auto has = [&](const char* k) { return columns.count(k) > 0; };

    // Which rule reads the IDs.
    std::string rule = identity;
    if (rule.empty()) rule = !header || has("student") ? "student" : has("email") ? "email_local" : "";
    if (rule.empty())
        throw InputError(file.string() + ":" + std::to_string(rows.front().first),
                         "the roster's header (" + header_text + ") names no column of student IDs or emails",
                         "name the column of IDs 'student' (or 'email'), or give --identity (" + known + ")");
    // A header without a student column, read by the student rule, would give its first column
    // (first names, in Gradescope's export): no autograder identity is that.
    if (rule == "student" && header && !has("student"))
        throw InputError(file.string() + ":" + std::to_string(rows.front().first),
                         "the roster's header (" + header_text + ") has no student or id column, which --identity student reads",
                         "give --identity email_local, email, sid or name (as the autograder's LAB_IDENTITY), or name the column of IDs 'student'");
    const char* need = rule == "student" ? nullptr : rule == "sid" ? "sid" : rule == "name" ? "name" : "email";
    const bool first_last = rule == "name" && !has("name") && has("first name") && has("last name");
    // Without a header, an email rule reads the first column (each cell must be an email).
    const bool email_rule = rule == "email" || rule == "email_local";
    const bool headerless_email = !header && email_rule;
    if (need && !has(need) && !first_last && !headerless_email)
        throw InputError(file.string() + ":" + std::to_string(rows.front().first),
                         header ? "the roster's header (" + header_text + ") has no " + need + " column, which --identity " + rule + " reads"
                                : std::string("the roster has no header row, so no ") + need + " column for --identity " + rule,
                         "add a header row naming the columns (Gradescope's roster export has one), or use --identity student");
    const std::size_t column = rule == "student" || headerless_email ? (has("student") ? columns.at("student") : 0)
                               : first_last                          ? columns.at("first name")
                                                                     : columns.at(need);
    auto column_name = [&] { return header ? "column '" + rows.front().second[column] + "'" : std::string("the first column"); };

    Roster roster;
    roster.rule = rule == "student" ? (header && has("student") ? fmt::format("column '{}' (student)", rows.front().second[column])
                                                                : std::string("the first column (student)"))
                  : first_last ? fmt::format("columns '{}' and '{}' joined (name)", rows.front().second[column],
                                             rows.front().second[columns.at("last name")])
                  : rule == "email_local" ? fmt::format("{}, its part before @ (email_local)", column_name())
                                          : fmt::format("{} ({})", column_name(), rule);
    std::map<std::string, int> seen;
    for (std::size_t r = header ? 1 : 0; r < rows.size(); ++r) {
        const auto& [n, cells] = rows[r];
        const std::string where = file.string() + ":" + std::to_string(n);
        // Gradescope's roster lists staff too (Role: Instructor, TA): no token for them.
        if (has("role") && columns.at("role") < cells.size()) {
            const std::string role = lower(cells[columns.at("role")]);
            if (!role.empty() && role != "student") {
                ++roster.staff_skipped;
                continue;
            }
        }
        std::string raw = column < cells.size() ? cells[column] : "";
        if (first_last) {
            const std::size_t last = columns.at("last name");
            raw += " " + (last < cells.size() ? cells[last] : "");
        }
        // The ID's bytes as the autograder will compare them: UTF-8, no control characters.
        if (const std::size_t bad = first_invalid_utf8(raw); bad != std::string::npos)
            throw InputError(where, "the student ID in " + column_name() + " is not UTF-8 text (a roster saved as Windows-1252 or Latin-1?): "
                                    "its token would be for other bytes than the autograder's",
                             "save the roster as UTF-8 CSV (a spreadsheet's \"CSV UTF-8\")");
        if (std::any_of(raw.begin(), raw.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
            throw InputError(where, "the student ID in " + column_name() + " holds a control character", "retype the ID in the roster");
        if (email_rule && raw.find('@') == std::string::npos)
            throw InputError(where, "'" + raw + "' in " + column_name() + " is not an email", "give the student's email address");
        if (rule == "email_local") raw = raw.substr(0, raw.find('@'));
        const std::string id = normalise_student(raw);
        if (id.empty()) throw InputError(where, "this row has no student ID in " + roster.rule, "fill it in, or remove the row");
        if (id == "anonymous") throw InputError(where, "'anonymous' is not a student ID", "give the student's ID");
        if (has_invisible_format_char(id))
            throw InputError(where, "the student ID on this line holds an invisible Unicode character (a zero-width space or a text direction override)",
                             "retype the ID, or remove the character from the roster");
        if (!plausible_student_id(id))
            throw InputError(where, "the student ID '" + raw + "' holds characters a student ID does not (quotes, commas, <, =, ...)",
                             "use IDs of letters, digits and . _ - + @ ', starting with a letter or digit");
        if (auto it = seen.find(id); it != seen.end())
            throw InputError(where, "student '" + id + "' is listed twice (first on line " + std::to_string(it->second) + ")",
                             "list each student once");
        seen[id] = n;
        roster.students.push_back({id, n});
    }
    if (roster.students.empty())
        throw InputError(file.string(), "the roster lists no students (only its header)", "one student per row, under the header");
    // IDs that are whole emails, read by the student rule, are not what the autograder's default
    // (email_local) compares: said, since the tokens would all be refused.
    if (rule == "student" && std::all_of(roster.students.begin(), roster.students.end(),
                                         [](const RosterStudent& s) { return s.id.find('@') != std::string::npos; }))
        roster.warning = "the IDs are email addresses ('" + roster.students.front().id +
                         "'): the autograder compares the part before @ unless its LAB_IDENTITY is email; give --identity "
                         "email_local for that default, or set LAB_IDENTITY=email";
    return roster;
}

std::vector<std::string> roster_mismatch_warnings(const std::vector<std::string>& roster, const std::vector<std::string>& handed_in,
                                                  const std::string& rule) {
    std::set<std::string> students, absent;
    for (const auto& who : handed_in)
        if (const std::string id = normalise_student(who); !id.empty() && id != "anonymous") students.insert(id);
    for (const auto& id : students)
        if (std::find(roster.begin(), roster.end(), id) == roster.end()) absent.insert(id);
    if (roster.empty() || absent.empty()) return {};
    const std::string read_by = rule.empty() ? std::string() : " (read by " + rule + ")";
    if (absent.size() == students.size())
        return {fmt::format("{} on the roster{}: is it the right column? The gradebook's students do not match the roster's "
                            "IDs, and roster students read as missing; give --identity as the autograder's LAB_IDENTITY ({})",
                            students.size() == 1 ? "the one student who handed in (" + *students.begin() + ") is not"
                                                 : fmt::format("none of the {} students who handed in is", students.size()),
                            read_by, kRosterIdentities)};
    // Named, so the operator can tell a late enrolment from a typo; a long list is cut short.
    constexpr std::size_t kNamed = 20;
    std::string names;
    std::size_t n = 0;
    for (const auto& id : absent)
        if (n++ < kNamed) names += (names.empty() ? "" : ", ") + id;
    if (absent.size() > kNamed) names += fmt::format(" and {} more", absent.size() - kNamed);
    return {fmt::format("{} student{} who handed in {} not on the roster{}: {}", absent.size(), absent.size() == 1 ? "" : "s",
                        absent.size() == 1 ? "is" : "are", read_by, names)};
}

}  // namespace lab::grader
