// Text files' byte-order marks (framework/src/text_encoding.hpp): a UTF-8 mark dropped, UTF-16 of
// either byte order converted, damaged UTF-16 refused saying how to convert it. Readers that use
// it check their own files (tests/framework/test_smi_capture.cpp).
#include <catch2/catch.hpp>

#include "errors.hpp"
#include "text_encoding.hpp"

using namespace lab;
using Catch::Matchers::Contains;

TEST_CASE("a byte-order mark is dropped and UTF-16 becomes UTF-8", "[text_encoding]") {
    CHECK(utf8_text("plain text", "f.txt") == "plain text");
    CHECK(utf8_text("\xEF\xBB\xBFmarked", "f.txt") == "marked");
    // "µs" and U+1F600 (a surrogate pair in UTF-16), little- and big-endian.
    CHECK(utf8_text(std::string("\xFF\xFE\xB5\x00s\x00\x3D\xD8\x00\xDE", 10), "f.txt") == "\xC2\xB5s\xF0\x9F\x98\x80");
    CHECK(utf8_text(std::string("\xFE\xFF\x00\xB5\x00s\xD8\x3D\xDE\x00", 10), "f.txt") == "\xC2\xB5s\xF0\x9F\x98\x80");
    CHECK(utf8_text("\xFF\xFE", "f.txt").empty());
    // Damaged UTF-16: an odd byte count, a lone surrogate.
    CHECK_THROWS_WITH(utf8_text(std::string("\xFF\xFEh\x00i", 5), "f.txt"), Contains("f.txt") && Contains("odd number of bytes") &&
                                                                                 Contains("iconv -f UTF-16 -t UTF-8"));
    CHECK_THROWS_WITH(utf8_text(std::string("\xFF\xFE\x3D\xD8h\x00", 6), "f.txt"), Contains("lone surrogate") && Contains("iconv"));
    CHECK_THROWS_AS(utf8_text(std::string("\xFF\xFE\x00\xDE", 4), "f.txt"), InputError);
}
