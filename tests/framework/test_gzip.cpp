// gzip in memory (framework/src/gzip.hpp): a file of several members read whole, as gzip -d
// reads it (RFC 1952 2.2), with a member cut short still refused. The limits on what it may
// expand to: tests/framework/test_parser_limits.cpp.
#include <catch2/catch.hpp>

#include "gzip.hpp"
#include "input_file.hpp"

using namespace lab;
using Catch::Matchers::Contains;

namespace {
const GzipLimits kRoomy{1u << 20, 1e9, 0};
}

// A bad-input review: `cat a.gz b.gz` (and pigz's or bgzip's output) was refused as cut short,
// the reader stopping at the first member's end.
TEST_CASE("a gzip file of several members reads as all of them; one cut short is still refused", "[gzip]") {
    const std::string a(3000, 'a'), b = "the second member", c(5, 'c');
    const std::string members = gzip_compress(a) + gzip_compress(b) + gzip_compress(c);
    CHECK(gzip_decompress(members, kRoomy) == a + b + c);
    // Zeros after the last member (a block device's or a tape's padding) end it too.
    CHECK(gzip_decompress(members + std::string(512, '\0'), kRoomy) == a + b + c);
    CHECK(gzip_decompress(gzip_compress(a), kRoomy) == a);

    // The last member cut short, in its data or in its header: truncated, as for one member.
    const std::string last = gzip_compress(b);
    const std::string first = gzip_compress(a);
    CHECK_THROWS_WITH(gzip_decompress(first + last.substr(0, last.size() - 4), kRoomy), Contains("truncated"));
    CHECK_THROWS_WITH(gzip_decompress(first + last.substr(0, 5), kRoomy), Contains("truncated"));
    // Something after a member that is neither gzip nor padding is damage.
    CHECK_THROWS_WITH(gzip_decompress(first + "garbage after it", kRoomy), Contains("not valid gzip"));
    // The size limit counts every member's output together.
    const GzipLimits small{4096, 1e9, 0};
    CHECK_THROWS_WITH(gzip_decompress(first + first, small), Contains("expands past 4 KiB, the limit for it"));
}

TEST_CASE("a size limit is said as the binary unit it is a whole number of, else in bytes", "[gzip]") {
    // The messages' limits come from the constants themselves: "64 MiB" was written by hand
    // beside each one, free to drift from it.
    CHECK(byte_limit_text(64u << 20) == "64 MiB");
    CHECK(byte_limit_text(std::uintmax_t{2} << 30) == "2 GiB");
    CHECK(byte_limit_text(64u << 10) == "64 KiB");
    CHECK(byte_limit_text(1536u << 10) == "1536 KiB");
    CHECK(byte_limit_text(1000) == "1000 bytes");
    CHECK(byte_limit_text(0) == "0 bytes");
}
