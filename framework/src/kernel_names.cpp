// Short kernel names (see kernel_names.hpp). A demangled name is read as a small grammar:
// [return type] scope::scope::name<template args>(argument list), where <>, (), {} and [] nest.
// Only what sits at nesting depth 0 is cut apart; nothing inside a bracket is ever misread as a
// separator ("(anonymous namespace)" holds a space, a template argument holds "::" and ",").
#include "kernel_names.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

namespace lab::trace {

namespace {

bool opener(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
// The '>' of "->" (Kineto's "Pageable -> Device") closes nothing.
bool closer(std::string_view s, std::size_t i) {
    const char c = s[i];
    return c == ')' || c == '}' || c == ']' || (c == '>' && !(i > 0 && s[i - 1] == '-'));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
}

// The pieces of s between occurrences of sep at depth 0, trimmed.
std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (depth == 0 && s.compare(i, sep.size(), sep) == 0) {
            out.push_back(trim(s.substr(from, i - from)));
            from = i + sep.size(), i = from - 1;
        } else if (opener(s[i])) {
            ++depth;
        } else if (closer(s, i)) {
            depth = std::max(0, depth - 1);
        }
    }
    out.push_back(trim(s.substr(from)));
    return out;
}

// The index of the bracket that closes the one opened at `open`, or npos.
std::size_t matching(std::string_view s, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (opener(s[i])) ++depth;
        else if (closer(s, i) && --depth == 0) return i;
    }
    return std::string_view::npos;
}

// One scope of a qualified name: "uniform_kernel<T>(args)" -> its name, template arguments, and
// whether it is a function (an argument list follows).
struct Scope {
    std::string_view name;
    std::vector<std::string_view> targs;
    bool function = false;
};
Scope scope(std::string_view p) {
    Scope out;
    std::size_t k = p.find_first_of("<(");
    out.name = trim(p.substr(0, k));
    if (k != std::string_view::npos && p[k] == '<') {
        const std::size_t close = matching(p, k);
        if (close == std::string_view::npos) return out;
        out.targs = split(p.substr(k + 1, close - k - 1), ",");
        k = p.find('(', close);
    }
    out.function = k != std::string_view::npos;
    return out;
}

bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// A template argument as a reader names it: namespaces and enclosing classes dropped (kept: the
// last scope and functions, which say whose lambda it is), argument lists dropped, a lambda
// written "lambda". `depth` says how many levels of nested template arguments to keep, for names
// that still collide without them; `numbered` keeps the lambdas' numbers ("lambda#7").
std::string simplify(std::string_view arg, int depth, bool numbered) {
    const auto parts = split(arg, "::");
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string_view p = parts[i];
        const bool last = i + 1 == parts.size();
        if (p == "(anonymous namespace)" || p.rfind("operator()", 0) == 0) continue;
        if (p.rfind("{lambda", 0) == 0) {
            std::string l = "lambda";
            if (const auto h = p.rfind('#'); numbered && h != std::string_view::npos) l += p.substr(h, p.size() - 1 - h);
            if (kept.empty() || kept.back() != l) kept.push_back(l);  // lambda in lambda in lambda: one
            continue;
        }
        if (p.empty() || !identifier_start(p[0])) {  // a literal: 4, 0u, (cudnnKernelDataType_t)2
            if (last) kept.emplace_back(p);
            continue;
        }
        const Scope s = scope(p);
        if (!last && !s.function) continue;
        std::string text(s.name);
        if (depth > 0 && !s.targs.empty()) {
            text += '<';
            for (std::size_t a = 0; a < s.targs.size(); ++a) text += (a ? ", " : "") + simplify(s.targs[a], depth - 1, numbered);
            text += '>';
        }
        kept.push_back(text);
    }
    std::string out;
    for (const auto& k : kept) out += (out.empty() ? "" : "::") + k;
    return out;
}

// A full name read as a C++ signature, when it is one.
struct Parsed {
    bool cpp = false;
    std::string whole;  // trimmed, for names that are not signatures
    std::string base;   // the function's own name
    std::vector<std::string_view> targs;
};
Parsed parse(const std::string& full) {
    Parsed out;
    const std::string_view s = trim(full);
    out.whole = std::string(s);
    // A signature ends in its argument list, opened right after the name ("f<T>(int)"); a label
    // such as "matmul (64 x 64)" has a space there and is left alone.
    if (s.empty() || s.back() != ')') return out;
    int depth = 0;
    std::size_t open = std::string_view::npos;
    for (std::size_t i = s.size(); i-- > 0;) {
        if (closer(s, i)) ++depth;
        else if (opener(s[i]) && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == std::string_view::npos || open == 0 || s[open] != '(' || s[open - 1] == ' ') return out;
    std::string_view head = s.substr(0, open);
    // The return type ("void") ends at the last space outside brackets.
    if (const auto spaces = split(head, " "); spaces.size() > 1) head = spaces.back();
    const Scope last = scope(split(head, "::").back());
    if (last.name.empty()) return out;
    out.cpp = true, out.base = std::string(last.name), out.targs = last.targs;
    return out;
}

// Too long: the start and the end kept, where a name and what tells it apart sit.
std::string fit(const std::string& s, std::size_t width) {
    if (s.size() <= width) return s;
    if (width < 8) return s.substr(0, width);
    const std::size_t head = (width - 3) * 2 / 3, tail = width - 3 - head;
    return s.substr(0, head) + "..." + s.substr(s.size() - tail);
}
// A name and the arguments that tell it apart, too long: the name is cut first (its start is
// enough to recognise it), then the arguments.
std::string fit(const std::string& base, const std::string& args, std::size_t width) {
    if (base.size() + args.size() <= width) return base + args;
    const std::size_t keep = std::max<std::size_t>(12, width > args.size() + 3 ? width - args.size() - 3 : 0);
    if (keep >= base.size()) return base + fit(args, width - std::min(width, base.size()));
    return base.substr(0, keep) + "..." + fit(args, width - std::min(width, keep + 3));
}

// Indices of distinct full names that share a short name, per shared short name.
std::vector<std::vector<std::size_t>> collisions(const std::vector<std::string>& shorts, const std::vector<std::string>& full) {
    std::map<std::string, std::vector<std::size_t>> by;
    for (std::size_t i = 0; i < shorts.size(); ++i) by[shorts[i]].push_back(i);
    std::vector<std::vector<std::size_t>> out;
    for (auto& [name, at] : by) {
        std::set<std::string> distinct;
        for (auto i : at) distinct.insert(full[i]);
        if (distinct.size() > 1) out.push_back(at);
    }
    return out;
}

}  // namespace

std::vector<std::string> short_kernel_names(const std::vector<std::string>& full, std::size_t width) {
    std::vector<Parsed> parsed;
    for (const auto& f : full) parsed.push_back(parse(f));
    std::vector<std::string> out, args_of(full.size());
    for (const auto& p : parsed) out.push_back(p.cpp ? p.base : p.whole);
    // Names alike: the template arguments in which they differ are added back, first each by its
    // own short name, then with its template arguments to one, two, three levels, then with the
    // lambdas' numbers.
    for (int level = 0; level <= 4; ++level) {
        for (const auto& group : collisions(out, full)) {
            std::vector<std::vector<std::string>> args;
            std::size_t arity = 0;
            for (auto i : group) {
                args.emplace_back();
                for (auto a : parsed[i].targs) args.back().push_back(simplify(a, std::min(level, 3), level == 4));
                arity = std::max(arity, args.back().size());
            }
            std::vector<std::size_t> differ;
            for (std::size_t a = 0; a < arity; ++a) {
                std::set<std::string> seen;
                for (auto& v : args) seen.insert(a < v.size() ? v[a] : "");
                if (seen.size() > 1) differ.push_back(a);
            }
            if (differ.empty()) continue;
            for (std::size_t g = 0; g < group.size(); ++g) {
                std::string s = "<";
                for (std::size_t d = 0; d < differ.size(); ++d)
                    s += (d ? ", " : "") + (differ[d] < args[g].size() ? args[g][differ[d]] : std::string("-"));
                args_of[group[g]] = s + '>';
                out[group[g]] = parsed[group[g]].base + args_of[group[g]];
            }
        }
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = args_of[i].empty() ? fit(out[i], width) : fit(parsed[i].base, args_of[i], width);
    // Still alike (overloads that differ only in their argument lists, or a cut that made two
    // alike): numbered in the order given.
    for (const auto& group : collisions(out, full)) {
        std::map<std::string, int> number;
        for (auto i : group) number.emplace(full[i], static_cast<int>(number.size()) + 1);
        for (auto i : group) {
            const std::string suffix = " #" + std::to_string(number[full[i]]);
            out[i] = fit(out[i], width > suffix.size() + 8 ? width - suffix.size() : 8) + suffix;
        }
    }
    return out;
}

}  // namespace lab::trace
