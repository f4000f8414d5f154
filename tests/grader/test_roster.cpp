// Class rosters read into student IDs (grader/src/roster.hpp): the column chosen as the
// autograder's LAB_IDENTITY chooses it, Gradescope's roster export read by its header, and the
// rows no token should be issued for refused with their line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "errors.hpp"
#include "roster.hpp"
#include "test_support.hpp"

using lab::grader::read_roster;

namespace {

std::vector<std::string> ids(const lab::grader::Roster& r) {
    std::vector<std::string> out;
    for (const auto& s : r.students) out.push_back(s.id);
    return out;
}

std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const lab::InputError& e) {
        return e.what();
    } catch (const lab::UsageError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a roster's IDs are read by the autograder's identity rule", "[roster]") {
    lab_test::TempDir d;
    // Gradescope's roster export: the email's local part is its default identity.
    const auto gs = d / "gradescope.csv";
    lab_test::write_file(gs, "\xEF\xBB\xBF" "First Name,Last Name,SID,Email,Role\r\nAlice,Smith,123,ASmith@u.edu,Student\r\n"
                             "\"Roux, Jr\",Élodie,124,eroux@u.edu,Student\r\n");
    CHECK(ids(read_roster(gs)) == std::vector<std::string>{"asmith", "eroux"});
    CHECK(ids(read_roster(gs, "email")) == std::vector<std::string>{"asmith@u.edu", "eroux@u.edu"});
    CHECK(ids(read_roster(gs, "sid")) == std::vector<std::string>{"123", "124"});
    // No student column: the student rule would give first names, which no autograder compares.
    CHECK_THAT(refusal([&] { read_roster(gs, "student"); }), Catch::Contains("gradescope.csv:1") && Catch::Contains("no student or id column"));
    // Staff rows (Role other than Student) get no token.
    const auto staff = d / "staff.csv";
    lab_test::write_file(staff, "Name,Email,Role\nAlice,alice@u.edu,Student\nTom,tom@u.edu,TA\nIvy,ivy@u.edu,Instructor\nBo,bo@u.edu,\n");
    CHECK(ids(read_roster(staff)) == std::vector<std::string>{"alice", "bo"});
    CHECK(read_roster(staff).staff_skipped == 2);
    CHECK_THAT(refusal([&] { read_roster(gs, "name"); }), Catch::Contains("gradescope.csv:3") && Catch::Contains("'Roux, Jr Élodie'"));
    CHECK_THAT(read_roster(gs).rule, Catch::Contains("'Email'") && Catch::Contains("email_local"));

    // A column headed student (or id) is the IDs; no header: the first column, as before.
    const auto plain = d / "plain.csv";
    lab_test::write_file(plain, "alice,alice@u.edu\n# a comment\n\nBob Jones\n");
    CHECK(ids(read_roster(plain)) == std::vector<std::string>{"alice", "bob_jones"});
    const auto headed = d / "headed.csv";
    lab_test::write_file(headed, "Email,Student\nx@u.edu,carol\n");
    CHECK(ids(read_roster(headed)) == std::vector<std::string>{"carol"});
    // No header: an email rule reads the first column; whole emails read as IDs are warned of.
    const auto emails = d / "emails.csv";
    lab_test::write_file(emails, "alice@u.edu,Alice\nbob@u.edu\n");
    CHECK(ids(read_roster(emails, "email_local")) == std::vector<std::string>{"alice", "bob"});
    CHECK(ids(read_roster(emails)) == std::vector<std::string>{"alice@u.edu", "bob@u.edu"});
    CHECK_THAT(read_roster(emails).warning, Catch::Contains("--identity email_local"));
    CHECK(read_roster(emails, "email_local").warning.empty());
    CHECK(read_roster(plain).warning.empty());
    const auto names = d / "names.csv";
    lab_test::write_file(names, "Full Name,Email\nAlice Smith,a@u.edu\n");
    CHECK(ids(read_roster(names, "name")) == std::vector<std::string>{"alice_smith"});
}

// Excel for Mac's "CSV" ends lines with a lone CR (RFC 4180 and YAML 1.2 count it a line break):
// read as one line it was "only its header", and the class got no tokens.
TEST_CASE("a roster with classic Mac line ends (a lone CR) reads its rows", "[roster]") {
    lab_test::TempDir d;
    const auto mac = d / "mac.csv";
    lab_test::write_file(mac, "Name,Email,Role\rAlice,alice@u.edu,Student\rBob,bob@u.edu,Student\r");
    CHECK(ids(read_roster(mac)) == std::vector<std::string>{"alice", "bob"});
    // A bad row is still pointed at by its line.
    lab_test::write_file(mac, "Name,Email,Role\rAlice,alice@u.edu,Student\r=cmd,x@u.edu,Student\r");
    CHECK_THAT(refusal([&] { read_roster(mac, "name"); }), Catch::Contains("mac.csv:3"));
}

// A review: a European Excel's "CSV" (semicolons, the comma being the decimal mark) was read as
// one column, and every row refused for the characters in its ID.
TEST_CASE("a roster whose header is separated by semicolons, not commas, is read by semicolons", "[roster]") {
    lab_test::TempDir d;
    const auto eu = d / "eu.csv";
    lab_test::write_file(eu, "\xEF\xBB\xBF" "id;name;email\r\nalice;\"Smith; Alice\";alice@u.edu\r\nbob;Bob, Jones;bob@u.edu\r\n");
    CHECK(ids(read_roster(eu)) == std::vector<std::string>{"alice", "bob"});
    CHECK(read_roster(eu).rule == "column 'id' (student)");
    CHECK(ids(read_roster(eu, "email")) == std::vector<std::string>{"alice@u.edu", "bob@u.edu"});
    // The same file as a UTF-16 "Unicode text" export (Excel's other CSV-like choice writes tabs;
    // a file converted by PowerShell 5 keeps its commas or semicolons).
    lab_test::write_file(eu, lab_test::utf16("id;name;email\r\nalice;\"Smith; Alice\";alice@u.edu\r\nbob;Bob, Jones;bob@u.edu\r\n", true));
    CHECK(ids(read_roster(eu)) == std::vector<std::string>{"alice", "bob"});
    // Gradescope's export saved again by such an Excel, a comment before it, and a row of empty cells.
    lab_test::write_file(eu, "# section 2\nFirst Name;Last Name;SID;Email;Role\nAlice;Smith;123;ASmith@u.edu;Student\n;;;;\n");
    CHECK(ids(read_roster(eu)) == std::vector<std::string>{"asmith"});
    // A header with commas stays comma-separated, a semicolon in a cell being part of it.
    lab_test::write_file(eu, "student,note\nalice,a;b\n");
    CHECK(ids(read_roster(eu)) == std::vector<std::string>{"alice"});
}

TEST_CASE("a roster row no token should be issued for is refused with its line and a fix", "[roster]") {
    lab_test::TempDir d;
    auto refused = [&](const std::string& text, const std::string& identity = "") {
        const auto f = d / "r.csv";
        lab_test::write_file(f, text);
        return refusal([&] { read_roster(f, identity); });
    };
    CHECK_THAT(refused("student\n<script>alert(1)</script>\n"), Catch::Contains("r.csv:2") && Catch::Contains("fix:"));
    CHECK_THAT(refused("student\n=cmd|calc\n"), Catch::Contains("r.csv:2"));
    CHECK_THAT(refused("alice\nbob\nAlice\n"), Catch::Contains("r.csv:3") && Catch::Contains("first on line 1"));
    CHECK_THAT(refused("Name,Phone\nA,1\n"), Catch::Contains("r.csv:1") && Catch::Contains("--identity"));
    CHECK_THAT(refused("alice,a@u.edu\n", "email"), Catch::Contains("r.csv:1") && Catch::Contains("'alice' in the first column is not an email"));
    CHECK_THAT(refused("Name,Phone\nA,1\n", "sid"), Catch::Contains("has no sid column"));
    CHECK_THAT(refused("Email\nnot-an-email\n"), Catch::Contains("r.csv:2") && Catch::Contains("not an email"));
    CHECK_THAT(refused("student\n"), Catch::Contains("only its header"));
    CHECK_THAT(refused("\n# nothing\n"), Catch::Contains("lists no students"));
    CHECK_THAT(refused("student\nanonymous\n"), Catch::Contains("'anonymous' is not a student ID"));
    CHECK_THAT(refused("student\nalice\n", "emial"), Catch::Contains("unknown roster identity 'emial'"));
    // A robustness review: each of these was issued a token.
    CHECK_THAT(refused("student\temail\nalice\ta@u.edu\n"), Catch::Contains("r.csv:1: the roster's columns are separated by tabs"));
    CHECK_THAT(refused("student\njos\xe9\n"), Catch::Contains("r.csv:2: the student ID in column 'student' is not UTF-8 text") && Catch::Contains("CSV UTF-8"));
    CHECK_THAT(refused("student\n\"alice\n"), Catch::Contains("r.csv:2: a quote opened on this line is never closed"));
    CHECK_THAT(refused("student\nal\xe2\x80\xaeice\n"), Catch::Contains("r.csv:2: the student ID on this line holds an invisible Unicode character"));
    CHECK_THAT(refused(std::string("student\nal\0ice\n", 17)), Catch::Contains("r.csv:2: the roster's line holds a NUL byte"));
    CHECK_FALSE(lab::grader::plausible_student_id("al\xe2\x80\x8bice"));  // a zero-width space
    // A code review: Excel's "CSV (Comma delimited)" is Windows-1252; accents in a name column are
    // no one's ID, and the email column the IDs come from is ASCII.
    const auto f = d / "cp1252.csv";
    lab_test::write_file(f, "First Name,Last Name,Email\nJos\xe9,N\xfa\xf1" "ez,jose@example.edu\n");
    CHECK(ids(read_roster(f, "email_local")) == std::vector<std::string>{"jose"});
    // Read by name, the same roster's names are the IDs, and are refused.
    CHECK_THAT(refusal([&] { read_roster(f, "name"); }), Catch::Contains("cp1252.csv:2: the student ID in") && Catch::Contains("is not UTF-8"));
    // The zero-width joiner and non-joiner are how some Persian and Indic names are written.
    CHECK(lab::grader::plausible_student_id("\xd9\x85\xe2\x80\x8c\xd8\xa7"));
    CHECK(lab::grader::plausible_student_id("o'brien"));
    CHECK(lab::grader::plausible_student_id("élodie"));
    CHECK_FALSE(lab::grader::plausible_student_id("-x"));
}

TEST_CASE("a roster that matches none or only some of the students who handed in is said, with the rule it was read by", "[roster]") {
    using lab::grader::roster_mismatch_warnings;
    const std::vector<std::string> sids = {"1001", "1002", "1003"};
    // Read by the wrong column: every student who handed in is off the roster.
    auto none = roster_mismatch_warnings(sids, {"alice", "Bob", "", "anonymous"}, "column 'SID' (sid)");
    REQUIRE(none.size() == 1);
    CHECK_THAT(none[0], Catch::StartsWith("none of the 2 students who handed in is on the roster (read by column 'SID' (sid)): "
                                          "is it the right column?"));
    CHECK_THAT(none[0], Catch::Contains("email_local"));
    auto one = roster_mismatch_warnings(sids, {"alice"}, "");
    REQUIRE(one.size() == 1);
    CHECK_THAT(one[0], Catch::StartsWith("the one student who handed in (alice) is not on the roster: is it the right column?"));
    // A roster of a subset: the others are named, a long list cut short.
    auto some = roster_mismatch_warnings({"alice"}, {"alice", "carol", "bob", "Bob"}, "column 'Email', its part before @ (email_local)");
    REQUIRE(some.size() == 1);
    CHECK(some[0] == "2 students who handed in are not on the roster (read by column 'Email', its part before @ (email_local)): bob, carol");
    std::vector<std::string> many = {"alice"};
    for (int i = 0; i < 25; ++i) many.push_back("s" + std::to_string(100 + i));
    auto cut = roster_mismatch_warnings({"alice"}, many, "");
    REQUIRE(cut.size() == 1);
    CHECK_THAT(cut[0], Catch::StartsWith("25 students who handed in are not on the roster: s100, s101,") && Catch::EndsWith("s119 and 5 more"));
    CHECK(roster_mismatch_warnings({"alice", "bob"}, {"alice", "BOB"}, "").empty());
    CHECK(roster_mismatch_warnings({}, {"alice"}, "").empty());   // no roster given
}
