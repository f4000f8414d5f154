// Time limits and memory sizes as people write them (quantity_text.hpp): one reading for an
// option and its environment variable, the units said, garbage refused.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "child_process.hpp"
#include "errors.hpp"
#include "quantity_text.hpp"

// `--timeout 1e3` was taken and `LAB_TIMEOUT=1e3` refused: two parsers for one value.
TEST_CASE("a time limit reads the same from the option and from LAB_TIMEOUT", "[quantity_text]") {
    CHECK(lab::parse_time_limit("1e3", "--timeout 1e3") == 1000);
    CHECK(lab::parse_time_limit("2.5", "x") == 2.5);
    CHECK(lab::parse_time_limit(".5", "x") == 0.5);
    CHECK(lab::parse_time_limit("0", "x") == 0);
    ::setenv("LAB_TIMEOUT", "1e3", 1);
    CHECK(lab::time_limit_from_environment() == 1000.0);
    ::setenv("LAB_TIMEOUT", "", 1);
    CHECK_FALSE(lab::time_limit_from_environment());
    ::unsetenv("LAB_TIMEOUT");

    for (const char* bad : {"0x10", "inf", "nan", "5s", " 5", "abc", "1e", ""}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH(lab::parse_time_limit(bad, std::string("LAB_TIMEOUT=") + bad),
                          Catch::Contains("is not a number of seconds") && Catch::Contains("fix:"));
    }
    for (const char* bad : {"-5", "0.01", "1e-9", "1e9"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH(lab::parse_time_limit(bad, std::string("--timeout ") + bad),
                          Catch::Contains("is not a time limit lab can keep") && Catch::Contains("at least 0.1"));
    }
}

// LAB_MEMORY_LIMIT=8GB and =8GiB were refused; only 8G, 512M and bytes were read.
TEST_CASE("a memory size takes binary and decimal units, each said which", "[quantity_text]") {
    constexpr std::uint64_t GiB = 1ull << 30;
    CHECK(lab::parse_memory_size("8G", "x") == 8 * GiB);
    CHECK(lab::parse_memory_size("8GiB", "x") == 8 * GiB);
    CHECK(lab::parse_memory_size("8 G", "x") == 8 * GiB);
    CHECK(lab::parse_memory_size("8GB", "x") == 8'000'000'000ull);
    CHECK(lab::parse_memory_size("512MiB", "x") == 512ull << 20);
    CHECK(lab::parse_memory_size("512M", "x") == 512ull << 20);
    CHECK(lab::parse_memory_size("512MB", "x") == 512'000'000ull);
    CHECK(lab::parse_memory_size("1.5K", "x") == 1536);
    CHECK(lab::parse_memory_size("4096", "x") == 4096);
    CHECK(lab::parse_memory_size("4096B", "x") == 4096);
    for (const char* bad : {"lots", "8 gigs", "0x10G", "1e400", "-1G", "0", "8Gb", "G", "8G8"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH(lab::parse_memory_size(bad, std::string("LAB_MEMORY_LIMIT='") + bad + "'"),
                          Catch::Contains("LAB_MEMORY_LIMIT='") && Catch::Contains("is not a size") && Catch::Contains("fix:"));
    }
    CHECK_THROWS_WITH(lab::parse_memory_size("99999999999999999999999", "x"), Catch::Contains("over 1 PiB"));
    CHECK_THROWS_WITH(lab::parse_memory_size("2048TB", "x"), Catch::Contains("over 1 PiB"));

    ::setenv("LAB_MEMORY_LIMIT", "8GiB", 1);
    CHECK(lab::child_memory_limit() == 8 * GiB);
    ::unsetenv("LAB_MEMORY_LIMIT");
}
