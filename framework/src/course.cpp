// Loading configs/course.yaml and deriving per-student seeds.
#include "course.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <set>

#include "digest.hpp"
#include "errors.hpp"
#include "suggest.hpp"
#include "yaml_file.hpp"

namespace lab {

CourseConfig load_course(const std::filesystem::path& file) {
    YAML::Node root = load_yaml_mapping(file, "the course file",
                                        "check the path, or set LAB_CONFIG_DIR to the folder holding course.yaml", "",
                                        "course, salt, allow_reveal, ...");
    CourseConfig c;
    c.file = file.string();
    static const std::set<std::string> known{"course", "salt", "allow_reveal", "accept_quick",
                                             "show_expected"};
    for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        if (!known.count(key))
            throw InputError(yaml_where(file, kv.first),
                             "unknown key '" + key + "'" + did_you_mean_text(key, {known.begin(), known.end()}),
                             "allowed keys: course, salt, allow_reveal, accept_quick, show_expected");
        try {
            if (key == "course") c.course = kv.second.as<std::string>();
            else if (key == "salt") c.salt = kv.second.as<std::string>();
            else if (key == "allow_reveal") c.allow_reveal = kv.second.as<bool>();
            else if (key == "accept_quick") c.accept_quick = kv.second.as<bool>();
            else if (key == "show_expected") c.show_expected = kv.second.as<std::string>();
        } catch (const YAML::Exception&) {
            // What the key takes, written out: "the wrong type" alone left the instructor to guess.
            const bool flag = key == "allow_reveal" || key == "accept_quick";
            const std::string held = kv.second.IsScalar() ? " ('" + kv.second.Scalar() + "')" : "";
            throw InputError(yaml_where(file, kv.second),
                             "'" + key + "' has a value of the wrong type" + held + (flag ? ": it is true or false" : ": it is one line of text"),
                             flag ? "write " + key + ": true or " + key + ": false" : "write " + key + ": followed by one line of text, e.g. " + key + ": \"my-course-2026\"");
        }
    }
    if (c.salt.empty())
        throw InputError(file.string(), "no 'salt'", "add a line such as: salt: \"my-course-2026\"");
    if (c.show_expected != "never" && c.show_expected != "after_due_date" && c.show_expected != "always")
        throw InputError(yaml_where(file, root["show_expected"]),
                         "show_expected must be never, after_due_date or always, not '" + c.show_expected + "'",
                         "write show_expected: never (or after_due_date, or always)");
    return c;
}

void require_reveal_allowed(const std::filesystem::path& file) {
    if (load_course(file).allow_reveal) return;
    throw UsageError("this course does not allow --reveal (allow_reveal: false in " + file.string() +
                     ")\n  fix: leave out --reveal: graded values show as '?' until you submit, and `lab submit` grades your claims");
}

namespace {

// One UTF-8 code point at s[i] (advancing i); where the text is not UTF-8, the byte itself, with
// `utf8` false.
char32_t next_code_point(const std::string& s, std::size_t& i, bool& utf8) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    const int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    utf8 = n == 1;
    if (n <= 1 || i + n > s.size()) return b(i++);
    char32_t cp = c & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return b(i++);
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    i += n;
    utf8 = true;
    return cp;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
        out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
    else
        out += static_cast<char>(0xF0 | (cp >> 18)), out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
}

// Spaces a roster exported from a spreadsheet or a name pasted from a web page carries: the
// no-break spaces (U+00A0, U+202F), the typographic ones (U+2000-U+200A), U+3000.
bool is_space(char32_t cp) {
    return (cp < 0x80 && std::isspace(static_cast<int>(cp))) || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Lower case for the scripts names in a roster are mostly written in: Latin (ASCII, Latin-1,
// Latin Extended-A), Greek, Cyrillic; Unicode's simple mappings. Other scripts are kept as
// written (many have no case).
char32_t lower(char32_t c) {
    if (c < 0x80) return static_cast<char32_t>(std::tolower(static_cast<int>(c)));
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
    if (c == 0x130) return 'i';
    if (c == 0x178) return 0xFF;
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c | 1;  // even: capital
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return c % 2 ? c + 1 : c;  // odd: capital
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
    if (c == 0x386) return 0x3AC;  // Greek capitals with tonos
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x410 && c <= 0x42F) return c + 0x20;
    if (c >= 0x400 && c <= 0x40F) return c + 0x50;
    if (c >= 0x218 && c <= 0x21B) return c | 1;  // Romanian S and T with comma below
    return c;
}

// A letter and a combining accent typed apart (macOS file names and some keyboards give "e" +
// U+0301, a spreadsheet's roster gives "é"): the one precomposed letter Unicode's canonical
// composition makes of them, for the lower-case Latin letters of Latin-1, Latin Extended-A and
// the Romanian comma-below letters; 0 when there is none (the pair is kept as written).
char32_t composed(char32_t base, char32_t mark) {
    struct Mark {
        char32_t mark;
        const char* bases;          // ASCII lower-case letters taking the mark, in order...
        const char32_t* composed;   // ...and what each composes to
    };
    static const char32_t grave[] = {0xE0, 0xE8, 0xEC, 0xF2, 0xF9};
    static const char32_t acute[] = {0xE1, 0xE9, 0xED, 0xF3, 0xFA, 0xFD, 0x107, 0x13A, 0x144, 0x155, 0x15B, 0x17A};
    static const char32_t circumflex[] = {0xE2, 0xEA, 0xEE, 0xF4, 0xFB, 0x109, 0x11D, 0x125, 0x135, 0x15D, 0x175, 0x177};
    static const char32_t tilde[] = {0xE3, 0xF1, 0xF5, 0x129, 0x169};
    static const char32_t macron[] = {0x101, 0x113, 0x12B, 0x14D, 0x16B};
    static const char32_t breve[] = {0x103, 0x115, 0x11F, 0x12D, 0x14F, 0x16D};
    static const char32_t dot_above[] = {0x10B, 0x117, 0x121, 0x17C};
    static const char32_t diaeresis[] = {0xE4, 0xEB, 0xEF, 0xF6, 0xFC, 0xFF};
    static const char32_t ring[] = {0xE5, 0x16F};
    static const char32_t double_acute[] = {0x151, 0x171};
    static const char32_t caron[] = {0x10D, 0x10F, 0x11B, 0x13E, 0x148, 0x159, 0x161, 0x165, 0x17E};
    static const char32_t comma_below[] = {0x219, 0x21B};
    static const char32_t cedilla[] = {0xE7, 0x123, 0x137, 0x13C, 0x146, 0x157, 0x15F, 0x163};
    static const char32_t ogonek[] = {0x105, 0x119, 0x12F, 0x173};
    static const Mark marks[] = {{0x300, "aeiou", grave},           {0x301, "aeiouyclnrsz", acute},
                                 {0x302, "aeioucghjswy", circumflex}, {0x303, "anoiu", tilde},
                                 {0x304, "aeiou", macron},            {0x306, "aegiou", breve},
                                 {0x307, "cegz", dot_above},          {0x308, "aeiouy", diaeresis},
                                 {0x30A, "au", ring},                 {0x30B, "ou", double_acute},
                                 {0x30C, "cdelnrstz", caron},         {0x326, "st", comma_below},
                                 {0x327, "cgklnrst", cedilla},        {0x328, "aeiu", ogonek}};
    if (base >= 0x80) return 0;
    for (const Mark& m : marks)
        if (m.mark == mark)
            for (std::size_t k = 0; m.bases[k]; ++k)
                if (static_cast<char32_t>(m.bases[k]) == base) return m.composed[k];
    return 0;
}

}  // namespace

std::string normalise_student(const std::string& student) {
    std::string out;
    bool pending_space = false;
    for (std::size_t i = 0; i < student.size();) {
        bool utf8 = true;
        const char32_t cp = next_code_point(student, i, utf8);
        if (utf8 && is_space(cp)) {
            pending_space = !out.empty();
            continue;
        }
        // A combining accent after a letter (kept lower-case below, so one table serves both
        // cases) is written as the one letter it composes to.
        if (utf8 && !pending_space && !out.empty() && static_cast<unsigned char>(out.back()) < 0x80)
            if (const char32_t c = composed(static_cast<char32_t>(out.back()), cp)) {
                out.pop_back();
                append_utf8(out, c);
                continue;
            }
        if (pending_space) out += '_';
        pending_space = false;
        if (!utf8) out += static_cast<char>(cp);  // a byte of text that is not UTF-8: kept as it was
        else append_utf8(out, lower(cp));
    }
    return out;
}

Seed student_seed(const CourseConfig& course, const std::string& lesson_id, const std::string& student) {
    Seed s;
    s.hex = sha256_hex(course.salt + "|" + lesson_id + "|" + normalise_student(student));
    s.value = std::stoull(s.hex.substr(0, 16), nullptr, 16);
    return s;
}

}  // namespace lab
