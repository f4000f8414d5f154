// The error types the host distinguishes, each mapped to one exit code (DESIGN.md):
//   UsageError / InputError -> 2 (bad usage or bad input: the message says what, where, and what to do)
//   DeviceError / PluginError -> 3 (the device or a plugin failed)
#pragma once

#include <stdexcept>
#include <string>

namespace lab {

// Control characters a file put into a message, written out (\x00, \x1b): a NUL ended the message
// where it stood (what() is a C string, so its fix line was lost), an escape sequence drove the
// reader's terminal. Newlines, tabs and UTF-8 are kept.
inline std::string visible(const std::string& text) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) out += "\\x", out += hex[u >> 4], out += hex[u & 15];
        else out += c;
    }
    return out;
}

// Bad input: a file that is malformed, corrupt, foreign or inconsistent. `where` is "file:line"
// (or just the file) so the message can point at it.
class InputError : public std::runtime_error {
public:
    InputError(const std::string& where, const std::string& what, const std::string& fix = "")
        : std::runtime_error(compose(where, what, fix)) {}

private:
    static std::string compose(const std::string& where, const std::string& what, const std::string& fix) {
        std::string s = where.empty() ? visible(what) : visible(where) + ": " + visible(what);
        if (!fix.empty()) s += "\n  fix: " + visible(fix);
        return s;
    }
};

// Bad command-line usage: unknown lesson, unknown device, bad flag.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A plugin could not be loaded or misbehaved (crash, hang, bad answer).
class PluginError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The device failed (CUDA error, out of memory, a child that died).
class DeviceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace lab
