// A small class of submissions for the class page's tests (`lab grade --report`), built from the
// recorded 02.05 and 02.03 fixture runs and sealed with the project's own code:
//   alice_1234  alice's run, every answer right                      graded 10/10
//   bob_5678    alice's measurements under bob's name, ridge wrong   graded, near-copy of alice
//   erin_3456   a slower laptop (every time doubled, its own name)   another device on the roofline
//   mallory     a student named <script>..., in a folder not hers    escaping; folder mismatch
//   frank_7890  a --quick 02.03 run, which that lesson's spec refuses refused
//   dave_1111   an answers file and no run                           error, no page
// Grading uses a copy of configs/ whose 02.05 spec accepts --quick runs (env()).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "test_support.hpp"

namespace lab_test {

// The student name that must never become markup.
inline constexpr const char* kScriptStudent = "<script>alert(\"x\")</script>";

class ClassFixture {
public:
    ClassFixture();
    const std::filesystem::path& submissions() const { return submissions_; }
    std::filesystem::path operator/(const std::string& name) const { return dir_ / name; }
    // LAB_CONFIG_DIR: the configs the class is graded with.
    std::map<std::string, std::string> env() const;

private:
    TempDir dir_;
    std::filesystem::path submissions_;
};

}  // namespace lab_test
