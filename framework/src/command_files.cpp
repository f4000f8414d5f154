// Inputs and named outputs of one command (see command_files.hpp).
#include "command_files.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace fs = std::filesystem;

namespace lab {

namespace {

struct Files {
    std::mutex lock;
    std::vector<fs::path> inputs;
    std::vector<std::pair<fs::path, std::string>> outputs;  // path, flag
};

Files& files() {
    static Files f;
    return f;
}

// The same file: the same path written two ways (dir/../x), or two names of one file (a link).
bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    if (fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec) && !ec) return true;
    ec.clear();
    return fs::equivalent(a, b, ec) && !ec;
}

}  // namespace

void note_input(const fs::path& file) {
    std::lock_guard<std::mutex> g(files().lock);
    files().inputs.push_back(file);
}

void claim_output(const fs::path& out, const std::string& flag) {
    std::lock_guard<std::mutex> g(files().lock);
    for (const auto& in : files().inputs)
        if (same_file(out, in))
            throw UsageError(flag + " " + out.string() + " is " + (in == out ? "" : in.string() + ", ") +
                             "a file this command reads: writing it would replace it\n  fix: give " + flag + " another path");
    for (const auto& [path, other] : files().outputs)
        if (other != flag && same_file(out, path))
            throw UsageError(flag + " " + out.string() + " is also the " + other + " file: one would replace the other\n  fix: give " + flag +
                             " another path");
    files().outputs.emplace_back(out, flag);
}

void reset_command_files() {
    std::lock_guard<std::mutex> g(files().lock);
    files().inputs.clear();
    files().outputs.clear();
}

}  // namespace lab
