// write_file_atomically's file modes: the umask for a new file, the old file's own mode when one
// is replaced (a fixed 0644 made a private file, and a run record holding a course token,
// readable by every user of a shared machine).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "atomic_file.hpp"
#include "test_support.hpp"

namespace {

mode_t mode_of(const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

struct Umask {
    mode_t old;
    explicit Umask(mode_t m) : old(::umask(m)) {}
    ~Umask() { ::umask(old); }
};

}  // namespace

TEST_CASE("a file written atomically gets the umask's mode when new and keeps its mode when replaced", "[atomic-file]") {
    lab_test::TempDir d;
    {
        Umask m(077);
        lab::write_file_atomically(d / "private.json", "{}");
        CHECK(mode_of(d / "private.json") == 0600);
    }
    {
        Umask m(022);
        lab::write_file_atomically(d / "shared.json", "{}");
        CHECK(mode_of(d / "shared.json") == 0644);
        // Replaced under a looser umask, a private file stays private, and a file made
        // read-only for the group keeps that.
        lab::write_file_atomically(d / "private.json", "{\"new\": 1}");
        CHECK(mode_of(d / "private.json") == 0600);
        CHECK(lab_test::read_file(d / "private.json") == "{\"new\": 1}");
        ::chmod((d / "shared.json").c_str(), 0640);
        lab::write_file_atomically(d / "shared.json", "{}");
        CHECK(mode_of(d / "shared.json") == 0640);
    }
}
