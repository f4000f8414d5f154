// Plugin discovery and loading: each way a plugin can be wrong gets a message naming the file,
// what is wrong and the fix; shadowing warns; two plugins with one ID in one folder are an error.
#include <catch2/catch.hpp>

#include <filesystem>

#include "errors.hpp"
#include "elf_build_id.hpp"
#include "plugin_loader.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace lab;

namespace {

fs::path lesson_plugin(const std::string& id_underscored) {
    return lab_test::build_root() / "labs" / id_underscored / ("lab_" + id_underscored + ".so");
}

std::string load_error(const fs::path& file) {
    try {
        load_lesson(file);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a good lesson plugin loads and describes itself", "[loader]") {
    LoadedLesson l = load_lesson(lesson_plugin("02_05"));
    CHECK(l.info.id == "02.05");
    CHECK(l.identity.api_major == kApiMajor);
    CHECK(l.identity.abi_tag == kAbiTag);
    CHECK_FALSE(l.info.metrics.empty());
}

TEST_CASE("each broken plugin is refused with its file, the problem and the fix", "[loader]") {
    const std::string api = std::to_string(kApiMajor) + "." + std::to_string(kApiMinor);
    const std::string newer = std::to_string(kApiMajor) + "." + std::to_string(kApiMinor + 1);
    auto [fixture, problem, fix] = GENERATE_COPY(table<std::string, std::string, std::string>({
        {"wrong_api", "built for plugin API 99.0, but this lab supports plugin API " + api,
         "rebuild the plugin against this lab's SDK, whose plugin API version is " + api},
        {"newer_minor", "built for plugin API " + newer + ", but this lab supports plugin API " + api,
         "rebuild the plugin against this lab's SDK, whose plugin API version is " + api},
        {"wrong_abi", "built with toolchain ABI 'itanium/libc++/x86_64'", "same compiler family and standard library"},
        {"no_entry", "missing entry point 'lab_create_lesson'", "LAB_LESSON"},
        {"not_a_plugin", "not a lab plugin", "LAB_LESSON"},
        {"wrong_kind", "is a 'device' plugin where a 'lesson' plugin was expected", "labdevice_<kind>.so"},
    }));
    fs::path file = lab_test::fixture_plugin(fixture);
    std::string msg = load_error(file);
    INFO(msg);
    CHECK_THAT(msg, Catch::Contains(file.string()) && Catch::Contains(problem) && Catch::Contains("fix:") &&
                        Catch::Contains(fix));
    // "lab-sdk 4.0" read as the package's version (meson's 0.1.0): the API is named as the API.
    CHECK_THAT(msg, !Catch::Contains("lab-sdk " + api));
}

TEST_CASE("a file that is no shared library at all is refused with the loader's reason", "[loader]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "lab_garbage.so", "this is not ELF\n");
    std::string msg = load_error(d / "lab_garbage.so");
    CHECK_THAT(msg, Catch::Contains("lab_garbage.so") && Catch::Contains("not a loadable shared library"));
}

// A plugin cut short (an interrupted copy) was mapped past its end by dlopen, and the first touch
// of the missing pages killed every command with SIGBUS, before any message (a robustness review).
TEST_CASE("a plugin file cut short is refused before it is loaded, at any length", "[loader]") {
    const std::string whole = lab_test::read_file(lesson_plugin("02_02"));
    CHECK(elf_truncation(lesson_plugin("02_02")).empty());
    lab_test::TempDir d;
    for (std::size_t keep : {std::size_t{4096}, std::size_t{60000}, whole.size() / 2, whole.size() - 1}) {
        CAPTURE(keep);
        lab_test::write_file(d / "lab_02_02.so", whole.substr(0, keep));
        CHECK_THAT(load_error(d / "lab_02_02.so"), Catch::Contains("not a loadable shared library (the file is " + std::to_string(keep) +
                                                                   " bytes but its ELF headers reach byte") &&
                                                       Catch::Contains("it is cut short"));
    }
}

TEST_CASE("discovery skips broken files with a warning and keeps the good ones", "[loader]") {
    lab_test::TempDir d;
    fs::copy_file(lesson_plugin("02_01"), d / "lab_02_01.so");
    fs::copy_file(lab_test::fixture_plugin("wrong_api"), d / "lab_wrong_api.so");
    fs::copy_file(lab_test::fixture_plugin("crashing_lesson"), d / "lab_crashing_lesson_cuda.so");  // a companion: ignored
    Catalog c = discover({d.path()});
    CHECK(c.lessons.count("02.01") == 1);
    CHECK(c.lessons.count("98.01") == 0);
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("lab_wrong_api.so") && Catch::Contains("API 99.0"));
}

TEST_CASE("asking for a lesson whose plugin was refused gives the refusal, not 'unknown lesson'", "[loader]") {
    lab_test::TempDir d;
    fs::copy_file(lab_test::fixture_plugin("wrong_api"), d / "lab_98_01.so");
    Catalog c = discover({d.path()});
    try {
        find_lesson(c, "98.01");
        FAIL("a refused lesson was found");
    } catch (const InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("lesson 98.01's plugin was found but refused") && Catch::Contains("lab_98_01.so") &&
                                 Catch::Contains("API 99.0") && Catch::Contains("fix: "));
    }
    CHECK_THROWS_WITH(find_lesson(c, "98.02"), Catch::Contains("unknown lesson ID '98.02'"));
}

TEST_CASE("a refused build earlier on the path shadows an accepted one later: asked for, the refusal is what the user hears", "[loader]") {
    // An instructor's stale build (another API) in LAB_PLUGIN_PATH before the installed copy.
    lab_test::TempDir stale, installed;
    fs::copy_file(lab_test::fixture_plugin("wrong_api"), stale / "lab_02_01.so");
    fs::copy_file(lesson_plugin("02_01"), installed / "lab_02_01.so");
    Catalog c = discover({stale.path(), installed.path()});
    CHECK(c.lessons.count("02.01") == 0);
    CHECK_THROWS_WITH(find_lesson(c, "02.01"), Catch::Contains("lesson 02.01's plugin was found but refused") && Catch::Contains("API 99.0"));
    REQUIRE(c.warnings.size() == 2);  // the refusal, and the installed copy it shadows
    CHECK_THAT(c.warnings[1], Catch::Contains((installed / "lab_02_01.so").string()) && Catch::Contains("shadowed by a build of it the loader refused"));
    // The other order: the accepted build comes first and is the one found.
    Catalog fine = discover({installed.path(), stale.path()});
    CHECK(find_lesson(fine, "02.01").file == installed / "lab_02_01.so");
}

TEST_CASE("a plugin found earlier on the path shadows a later one, with a warning naming both when they differ", "[loader]") {
    lab_test::TempDir first, second;
    fs::copy_file(lab_test::fixture_plugin("throwing_lesson"), first / "lab_99_03.so");
    fs::copy_file(lab_test::fixture_plugin("throwing_lesson_v2"), second / "lab_99_03.so");
    Catalog c = discover({first.path(), second.path()});
    CHECK(c.lessons.at("99.03").file == first / "lab_99_03.so");
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains((second / "lab_99_03.so").string()) &&
                                  Catch::Contains((first / "lab_99_03.so").string()) && Catch::Contains("shadowed") &&
                                  Catch::Contains("2.0.0"));
    // Each copy is named by its title too: two lessons may share an ID and a version.
    CHECK_THAT(c.warnings[0], Catch::Contains("\"Throws\"") && Catch::Contains("\"Throws, version 2\""));
}

TEST_CASE("a lesson that declares a metric twice is refused where it loads, naming the metric", "[loader]") {
    CHECK_THROWS_WITH(load_lesson(lab_test::fixture_plugin("duplicate_metric")),
                      Catch::Contains("declares metric 'time_ratio' twice") && Catch::Contains("declare each metric once"));
    CHECK_THROWS_AS(load_lesson(lab_test::fixture_plugin("duplicate_metric")), InputError);
}

TEST_CASE("the same version found twice (a build tree beside its install) shadows silently", "[loader]") {
    lab_test::TempDir first, second;
    fs::copy_file(lesson_plugin("02_01"), first / "lab_02_01.so");
    fs::copy_file(lesson_plugin("02_01"), second / "lab_02_01.so");
    Catalog c = discover({first.path(), second.path()});
    CHECK(c.lessons.at("02.01").file == first / "lab_02_01.so");
    CHECK(c.warnings.empty());
}

TEST_CASE("another build of the same version found later on the path is shadowed with a warning", "[loader]") {
    lab_test::TempDir first, second;
    fs::copy_file(lesson_plugin("02_01"), first / "lab_02_01.so");
    fs::copy_file(lesson_plugin("02_01"), second / "lab_02_01.so");
    // A rebuild of the same source keeps its version string but not its GNU build ID: change one
    // byte of the ID in the second copy.
    const std::string id = gnu_build_id(second / "lab_02_01.so");
    REQUIRE(id.size() >= 16);
    std::string bytes = lab_test::read_file(second / "lab_02_01.so");
    std::string raw;
    for (std::size_t i = 0; i < id.size(); i += 2) raw += static_cast<char>(std::stoi(id.substr(i, 2), nullptr, 16));
    const auto at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
    lab_test::write_file(second / "lab_02_01.so", bytes);
    CHECK(gnu_build_id(second / "lab_02_01.so") != id);
    CHECK_FALSE(same_build(first / "lab_02_01.so", second / "lab_02_01.so"));
    Catalog c = discover({first.path(), second.path()});
    CHECK(c.lessons.at("02.01").file == first / "lab_02_01.so");
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("shadowed") && Catch::Contains("another build of the same version") &&
                                  Catch::Contains("fix: "));
    CHECK(gnu_build_id(lab_test::source_root() / "README.md").empty());  // not ELF: no ID
}

TEST_CASE("two plugins with one lesson ID in one folder are an error naming both", "[loader]") {
    lab_test::TempDir d;
    fs::copy_file(lesson_plugin("02_01"), d / "lab_02_01.so");
    fs::copy_file(lesson_plugin("02_01"), d / "lab_02_01_copy.so");
    Catalog c = discover({d.path()});
    try {
        find_lesson(c, "02.01");
        FAIL("a duplicate ID was accepted");
    } catch (const InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("lab_02_01.so") && Catch::Contains("lab_02_01_copy.so") &&
                                 Catch::Contains("remove one"));
    }
}

TEST_CASE("an unknown lesson ID is a usage error listing the lessons found", "[loader]") {
    lab_test::TempDir d;
    fs::copy_file(lesson_plugin("02_05"), d / "lab_02_05.so");
    Catalog c = discover({d.path()});
    CHECK_THROWS_WITH(find_lesson(c, "02.99"), Catch::Contains("unknown lesson ID '02.99'") && Catch::Contains("02.05"));
}

TEST_CASE("a plugin folder that cannot be read is an input error; a missing one is skipped", "[loader]") {
    lab_test::TempDir d;
    lab_test::write_file(d / "not_a_folder", "x");
    CHECK_THROWS_AS(discover({d / "not_a_folder"}), InputError);
    CHECK_NOTHROW(discover({d / "does_not_exist"}));
}
