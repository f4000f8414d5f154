// Loading YAML input files within limits (see yaml_file.hpp). The checks run on yaml-cpp's
// parser events, a first pass that builds nothing: an alias is counted, never expanded, and
// nesting is refused at its limit while the parser is still shallow. The tree is built only from
// text that passed.
#include "yaml_file.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace lab {

namespace {

// What the first pass found wrong, with the parser's mark.
struct Refusal {
    YAML::Mark mark;
    std::string what;
    std::string fix;
};

// The first pass: depth, keys and aliases, on the parser's events.
class LimitsCheck final : public YAML::EventHandler {
public:
    LimitsCheck(const YamlLimits& limits, const std::string& what, const std::string& text)
        : limits_(limits), what_(what), text_(text) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, Kind::null, nullptr); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, 0, Kind::alias, nullptr); }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
        if (tag == "!") closed_quote(mark);
        leaf(mark, anchor, Kind::scalar, &value);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
        open(mark, anchor, false);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
        open(mark, anchor, true);
    }
    void OnMapEnd() override { close(); }

private:
    enum class Kind { scalar, null, alias, container };
    struct Frame {
        bool map = false;
        bool at_key = true;                 // in a mapping: the next node is a key
        std::map<std::string, int> keys;    // the mapping's keys so far, with their lines
    };

    [[noreturn]] void refuse(const YAML::Mark& mark, std::string what, std::string fix) const {
        throw Refusal{mark, std::move(what), std::move(fix)};
    }

    void count_alias(const YAML::Mark& mark, const char* form) {
        if (limits_.max_aliases == 0)
            refuse(mark, std::string("an ") + form + " (&name / *name): " + what_ + " takes no anchors or aliases",
                   "write each value out in full");
        if (++aliases_ > limits_.max_aliases)
            refuse(mark, fmt::format("more than {} anchors and aliases (the limit for {})", limits_.max_aliases, what_),
                   "write the values out in full");
    }

    // yaml-cpp reads a quote never closed as a value running to the end of the file (every later
    // line folded into it: `ridge_point: "4.5` swallows the answers after it) instead of refusing
    // it. A quoted scalar starts at its mark; its closing quote must come before the end.
    void closed_quote(const YAML::Mark& mark) const {
        if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return;
        const char quote = text_[static_cast<std::size_t>(mark.pos)];
        if (quote != '"' && quote != '\'') return;
        for (std::size_t i = static_cast<std::size_t>(mark.pos) + 1; i < text_.size(); ++i) {
            if (quote == '"' && text_[i] == '\\') ++i;        // \" is a quote inside the text
            else if (text_[i] == quote) {
                if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') ++i;  // '' is one ' inside
                else return;
            }
        }
        refuse(mark, fmt::format("the {} quote opened on line {} is never closed: everything after it, to the end of the file, "
                                 "would be read as one value",
                                 quote == '"' ? "double" : "single", mark.line + 1),
               fmt::format("close the quote on line {} (or remove it)", mark.line + 1));
    }

    // A node starts: a key of the enclosing mapping must be a plain name, and not one seen before.
    void begin(const YAML::Mark& mark, YAML::anchor_t anchor, Kind kind, const std::string* scalar) {
        if (anchor != 0) count_alias(mark, "anchor");
        if (kind == Kind::alias) count_alias(mark, "alias");
        if (stack_.empty() || !stack_.back().map || !stack_.back().at_key) return;
        if (kind == Kind::container)
            refuse(mark, "a key that is a list or mapping ('? [a, b]': a complex key); lab reads keys as names",
                   "write the key as a plain name");
        if (kind == Kind::alias) refuse(mark, "a key that is an alias (*name)", "write the key as a plain name");
        if (kind == Kind::null)
            refuse(mark, "a key YAML reads as null (nothing, '~' or 'null' before the colon)", "write the key's name before its colon");
        auto [it, fresh] = stack_.back().keys.emplace(*scalar, mark.line + 1);
        if (!fresh)
            refuse(mark,
                   fmt::format("'{}' is written twice in the same mapping (lines {} and {}); only one of them would count",
                               excerpt(*scalar), it->second, mark.line + 1),
                   "keep one of them");
    }
    // A node ends: in a mapping, a key is followed by its value and a value by the next key.
    void end() {
        if (!stack_.empty() && stack_.back().map) stack_.back().at_key = !stack_.back().at_key;
    }
    void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, Kind kind, const std::string* scalar) {
        begin(mark, anchor, kind, scalar);
        end();
    }
    void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
        begin(mark, anchor, Kind::container, nullptr);
        if (static_cast<int>(stack_.size()) >= limits_.max_depth)
            refuse(mark, fmt::format("lists and mappings nested deeper than {} levels (the limit for {})", limits_.max_depth, what_),
                   "compare with the file's template: no lab file nests that deep");
        stack_.push_back(Frame{map, true, {}});
    }
    void close() {
        stack_.pop_back();
        end();
    }

    const YamlLimits& limits_;
    const std::string& what_;
    const std::string& text_;
    std::vector<Frame> stack_;
    int aliases_ = 0;
};

std::string at_line(const std::filesystem::path& file, const YAML::Mark& mark) {
    return mark.line >= 0 ? file.string() + ":" + std::to_string(mark.line + 1) : file.string();
}

// yaml-cpp's words ("end of map not found") do not say what to do; the usual causes do. A tab
// indenting a line up to the one after where the parser stopped: YAML indents with spaces only,
// and an editor shows a tab as spaces. Else, for a message about the file's structure (or when the
// caller has no fix of its own), the indentation, and a tab on the lines around it. "" when none.
std::string malformed_hint(const std::string& text, const std::string& msg, int line, bool generic) {
    int indent_tab = 0, near_tab = 0;  // the last line indented with a tab; the first nearby holding one
    int n = 1;
    for (std::size_t at = 0; at < text.size() && n <= line + 1; ++n) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::size_t indent_end = std::min(text.find_first_not_of(" \t", at), end);
        const std::size_t tab = static_cast<std::size_t>(std::find(text.begin() + at, text.begin() + end, '\t') - text.begin());
        if (tab < indent_end) indent_tab = n;
        if (tab < end && n >= line - 1 && near_tab == 0) near_tab = n;
        at = end + 1;
    }
    if (indent_tab)
        return fmt::format("line {} is indented with a tab: YAML indents with spaces only (an editor may show the tab as "
                           "spaces); replace it with spaces",
                           indent_tab);
    const std::string tab = near_tab ? fmt::format("line {} holds a tab, which an editor may show as spaces: write spaces instead", near_tab)
                                     : std::string();
    const bool structure = msg.find("map") != std::string::npos || msg.find("sequence") != std::string::npos ||
                           msg.find("indentation") != std::string::npos || msg.find("block") != std::string::npos;
    if (!structure && !generic) return tab;
    return fmt::format("check the indentation on line {} and the lines above it: the keys of one mapping start in the same "
                       "column, the '- ' of one list too; put text holding ': ' or ' #' in quotes{}",
                       line, tab.empty() ? "" : "; " + tab);
}

}  // namespace

// The innermost '[' or '{' still open at `end` (quoted text and comments skipped), with its
// 1-based line; none when every flow collection opened before `end` was closed.
static std::optional<std::pair<char, std::size_t>> unclosed_flow(const std::string& text, std::size_t end) {
    std::vector<std::pair<char, std::size_t>> open;
    std::size_t line = 1;
    char quote = 0;
    bool comment = false;
    for (std::size_t i = 0; i < std::min(end, text.size()); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            comment = false;
            continue;
        }
        if (comment) continue;
        if (quote) {
            if (c == '\\' && quote == '"') ++i;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) comment = true;
        else if (c == '[' || c == '{') open.push_back({c, line});
        else if ((c == ']' || c == '}') && !open.empty()) open.pop_back();
    }
    if (open.empty()) return std::nullopt;
    return open.back();
}

YAML::Node parse_yaml_text(const std::string& text, const std::filesystem::path& file, const std::string& what,
                           const std::string& malformed_fix, const YamlLimits& limits) {
    // YAML is Unicode text, and yaml-cpp reads it as UTF-8: any other encoding (Latin-1's µ,
    // a file saved as UTF-16) is refused with its line rather than read as something else.
    if (std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
        const std::size_t line = line_of_offset(text, bad);
        throw InputError(file.string() + ":" + std::to_string(line),
                         fmt::format("not UTF-8 text (byte 0x{:02X})", static_cast<unsigned char>(text[bad])), "save the file as UTF-8");
    }
    try {
        {
            std::istringstream in(text);
            YAML::Parser parser(in);
            LimitsCheck check(limits, what, text);
            try {
                parser.HandleNextDocument(check);
                // YAML::Load reads the first document only: a second one would be silently ignored.
                LimitsCheck rest(limits, what, text);
                if (parser.HandleNextDocument(rest))
                    throw InputError(file.string(), what + " holds more than one YAML document (a second '---')",
                                     "keep one document in the file");
            } catch (const Refusal& r) {
                // `a: [[[[` never closed: the parser hands over the inner '[' as a complex key before
                // it notices the flow is unclosed; the unclosed bracket is the fault (a fuzzing review).
                if (r.what.find("complex key") != std::string::npos)
                    if (auto opened = unclosed_flow(text, text.size()))
                        throw InputError(file.string() + ":" + std::to_string(opened->second),
                                         fmt::format("malformed YAML: the '{}' opened on line {} is never closed", opened->first, opened->second),
                                         fmt::format("close it with '{}' on line {}", opened->first == '[' ? ']' : '}', opened->second));
                throw InputError(at_line(file, r.mark), r.what, r.fix);
            }
        }
        return YAML::Load(text);
    } catch (const YAML::Exception& e) {
        // An unclosed '[' or '{' is noticed lines later, where the next key appears: point at
        // the line that opened it, which is where the fix goes.
        if (e.msg.find("flow") != std::string::npos && e.msg.find("not found") != std::string::npos)
            if (auto opened = unclosed_flow(text, e.mark.pos >= 0 ? static_cast<std::size_t>(e.mark.pos) : text.size()))
                throw InputError(file.string() + ":" + std::to_string(opened->second),
                                 fmt::format("malformed YAML: the '{}' opened on line {} is never closed (noticed on line {}: {})",
                                             opened->first, opened->second, e.mark.line + 1, e.msg),
                                 fmt::format("close it with '{}' on line {}", opened->first == '[' ? ']' : '}', opened->second));
        // Malformed YAML, and anything else yaml-cpp refuses (its own nesting guard included):
        // the likely cause first, then the caller's own fix.
        const std::string hint = malformed_hint(text, e.msg, e.mark.line + 1, malformed_fix.empty());
        const std::string fix = hint.empty() ? malformed_fix : malformed_fix.empty() ? hint : hint + "; " + malformed_fix;
        throw InputError(at_line(file, e.mark), "malformed YAML: " + e.msg, fix);
    }
}

YAML::Node load_yaml_mapping(const std::filesystem::path& file, const std::string& what, const std::string& unreadable_fix,
                             const std::string& malformed_fix, const std::string& mapping_of, const YamlLimits& limits) {
    const std::string text = read_input_text(file, what, limits.max_bytes, unreadable_fix);
    YAML::Node root = parse_yaml_text(text, file, what, malformed_fix, limits);
    const std::string fix = malformed_fix.empty() ? "write its keys, one `key: value` a line: " + mapping_of : malformed_fix;
    if (root.IsNull()) throw InputError(file.string(), what + " is empty (no keys, only blanks or comments)", fix);
    if (!root.IsMap()) throw InputError(yaml_where(file, root), what + " must be a mapping of keys (" + mapping_of + ")", fix);
    return root;
}

}  // namespace lab
