// configs/course.yaml and per-student seeds: stable, normalised, and bad files rejected with a line.
#include <catch2/catch.hpp>

#include "course.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "test_support.hpp"

using namespace lab;

TEST_CASE("SHA-256 matches the published test vector", "[course]") {
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("a student's seed is SHA-256 of salt, lesson and normalised student ID", "[course]") {
    CourseConfig c;
    c.salt = "s";
    Seed a = student_seed(c, "02.01", "  Alice  Smith ");
    CHECK(a.hex == sha256_hex("s|02.01|alice_smith"));
    CHECK(a.value == std::stoull(a.hex.substr(0, 16), nullptr, 16));
    CHECK(student_seed(c, "02.01", "alice smith").hex == a.hex);
    CHECK(student_seed(c, "02.05", "alice smith").hex != a.hex);
    c.salt = "t";
    CHECK(student_seed(c, "02.01", "alice smith").hex != a.hex);
}

TEST_CASE("a student ID is normalised in the scripts names are written in, and its Unicode spaces are spaces", "[course]") {
    // A roster exported from a spreadsheet holds no-break spaces; "JOSÉ" and "josé" are one student.
    CHECK(normalise_student("Ada\u00a0Lovelace") == "ada_lovelace");
    CHECK(normalise_student("\u3000Ada \u202f\u2009 Lovelace\u00a0") == "ada_lovelace");
    CHECK(normalise_student("JOSÉ") == "josé");
    CHECK(normalise_student("ŁUKASZ ŻÓŁW") == "łukasz_żółw");
    CHECK(normalise_student("ΣΩΚΡΆΤΗΣ") == "σωκράτησ");  // Unicode's simple mapping: no final sigma
    CHECK(normalise_student("ΣΩΚΡΆΤΗΣ") != normalise_student("ΣΩΚΡΑΤΗΣ"));  // accents kept: only case folds
    CHECK(normalise_student("ΑΛΦΑ") == "αλφα");
    CHECK(normalise_student("ИВАН Ёлкин") == "иван_ёлкин");
    CHECK(normalise_student("İzmir") == "izmir");
    CHECK(normalise_student("Ÿves") == "ÿves");
    CHECK(normalise_student("山田 太郎") == "山田_太郎");  // no case: kept
    // A letter and its accent typed apart (macOS file names, some keyboards) are the one letter a
    // spreadsheet's roster holds: NFD and NFC name one student.
    CHECK(normalise_student("Jose\u0301") == normalise_student("José"));
    CHECK(normalise_student("JOSE\u0301") == "josé");
    CHECK(normalise_student("Zoe\u0308 Bjo\u0308rk") == "zoë_björk");
    CHECK(normalise_student("C\u030ce\u0301s\u030c") == "čéš");
    CHECK(normalise_student("S\u0326tefan T\u0326ugui") == "ștefan_țugui");
    CHECK(normalise_student("Ștefan") == "ștefan");
    CHECK(normalise_student("Franc\u0327ois Nun\u0303ez") == "françois_nuñez");
    // No precomposed letter: kept as written (a combining mark alone, after a space or a digit).
    CHECK(normalise_student("q\u0301") == "q\u0301");
    CHECK(normalise_student("a \u0301") == "a_\u0301");
    // Bytes that are not UTF-8 are kept as they are (a roster refuses them; a run's ID is what it is).
    CHECK(normalise_student(std::string("a\xff\xc3" "B")) == std::string("a\xff\xc3" "b"));
}

TEST_CASE("the shipped course file loads", "[course]") {
    CourseConfig c = load_course(lab_test::source_root() / "configs/course.yaml");
    CHECK_FALSE(c.salt.empty());
    CHECK((c.show_expected == "never" || c.show_expected == "after_due_date" || c.show_expected == "always"));
}

TEST_CASE("a course file with an unknown key is rejected with its file and line", "[course]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "course.yaml", "salt: x\nshow_expectd: always\n");
    try {
        load_course(d / "course.yaml");
        FAIL("accepted an unknown key");
    } catch (const InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("course.yaml:2") && Catch::Contains("show_expectd"));
    }
    lab_test::write_file(d / "course.yaml", "salt: [unclosed\n");
    CHECK_THROWS_AS(load_course(d / "course.yaml"), InputError);
    lab_test::write_file(d / "course.yaml", "course: no salt here\n");
    CHECK_THROWS_WITH(load_course(d / "course.yaml"), Catch::Contains("salt"));
}

// A fuzzing review: "'accept_quick' has a value of the wrong type" and "show_expected must be
// never, after_due_date or always" said nothing of what to write.
TEST_CASE("a course value of the wrong kind is refused with its line and what to write", "[course]") {
    lab_test::TempDir d;
    const auto refusal = [&](const std::string& text) {
        lab_test::write_file(d / "course.yaml", text);
        try {
            load_course(d / "course.yaml");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(refusal("salt: x\naccept_quick: maybe\n"),
               Catch::Contains("course.yaml:2") && Catch::Contains("'maybe'") && Catch::Contains("fix: write accept_quick: true or accept_quick: false"));
    CHECK_THAT(refusal("salt: x\nshow_expected: sometimes\n"),
               Catch::Contains("course.yaml:2") && Catch::Contains("'sometimes'") && Catch::Contains("fix: write show_expected: never"));
    CHECK_THAT(refusal("salt: [a, b]\n"), Catch::Contains("fix: write salt:"));
}
