// HTML pages (see html.hpp).
#include "html.hpp"

#include <cctype>
#include <regex>

namespace lab::html {

namespace {

// One stylesheet for every page: readable on a laptop (a measure of ~70 characters, wide tables
// scroll instead of squeezing), and printable to PDF: a plot, a code block or a short table never
// splits across pages, a long table repeats its header and never cuts a row, headings stay with
// what follows them, colours print as on screen.
constexpr const char* kStyle = R"css(
:root { --ink: #1d1d1f; --muted: #5b6168; --rule: #d5d9de; --soft: #f4f6f8; --accent: #1f5fa8; --warn: #a4262c; --ok: #2e7d32; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0 auto; max-width: 74rem; padding: 1.5rem 2rem 3rem; background: #fff; color: var(--ink);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .3rem; }
h2 { font-size: 1.25rem; margin: 2.2rem 0 .6rem; padding-bottom: .2rem; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
p, ul, ol, dl { max-width: 48rem; }
a { color: var(--accent); }
.meta { color: var(--muted); margin: 0 0 .2rem; }
.tag { display: inline-block; margin-left: .4rem; padding: 0 .45em; border: 1px solid currentColor; border-radius: .3em;
       font-size: .78rem; vertical-align: .15em; color: var(--muted); }
.tag.warn { color: var(--warn); }
nav.toc { margin: 1rem 0; font-size: .9rem; }
nav.toc a { margin-right: 1rem; }
section.reference { margin-top: 2.2rem; }
section.reference > details > summary { cursor: pointer; padding-bottom: .2rem; border-bottom: 1px solid var(--rule); }
section.reference > details > summary > h2 { display: inline; margin: 0; padding: 0; border: none; }
section.reference > details[open] > summary { margin-bottom: .6rem; }
.print-hint { display: none; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .4rem 0 1rem; font-size: .86rem; }
th, td { padding: .28rem .6rem; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.withheld, span.withheld { color: var(--warn); font-weight: 700; }
td.mono, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .82rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .4rem 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
figure.plot { margin: 1rem 0 1.6rem; }
figure.plot { overflow-x: auto; }
figure.plot svg { display: block; width: 100%; min-width: 560px; max-width: 760px; height: auto; border: 1px solid var(--rule); }
figcaption { color: var(--muted); font-size: .85rem; margin-top: .3rem; }
.teaching p { margin: .35rem 0; }
.teaching pre, pre.commands { background: var(--soft); padding: .6rem .8rem; border-radius: .3rem; overflow-x: auto;
       font: .82rem/1.45 "DejaVu Sans Mono", Menlo, Consolas, monospace; max-width: 100%; }
.box > h2:first-child { margin-top: .2rem; }
.box { border: 1px solid var(--rule); border-radius: .35rem; padding: .6rem 1rem; margin: 1rem 0; background: var(--soft); }
svg.share { vertical-align: middle; }
.note { color: var(--muted); font-size: .85rem; }
footer { margin-top: 2.5rem; padding-top: .5rem; border-top: 1px solid var(--rule); color: var(--muted); font-size: .8rem; }
@media (max-width: 700px) { body { padding: 1rem; } }
@media print {
  @page { margin: 14mm 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav.toc { display: none; }
  a { color: inherit; text-decoration: none; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 8pt; break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  tr, td, th { break-inside: avoid; page-break-inside: avoid; }
  th, td { padding: .15rem .35rem; }
  figure.plot, pre, .box, dl.facts { break-inside: avoid; page-break-inside: avoid; }
  pre, .teaching pre, pre.commands { overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
  figure.plot svg { max-width: 100%; border: none; }
  /* A closed <details> keeps its body in a ::details-content box the browser hides; showing that
     box prints the body, open or not (Chromium 131+ and Safari 18.4+, among others). Not the usual
     script on beforeprint that sets `open`: a page runs no script (its policy forbids it), so it
     prints the same from any viewer. Browsers without the box get a line saying to open them. */
  details::details-content { content-visibility: visible; display: block; }
  section.reference > details > summary { list-style: none; cursor: auto; }
  section.reference > details > summary::-webkit-details-marker { display: none; }
}
@supports not selector(::details-content) { @media print { .print-hint { display: block; } } }
)css";

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string url_path(std::string_view path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (char ch : path) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += ch;
        else out += {'%', hex[c >> 4], hex[c & 15]};
    }
    return out;
}

std::string inline_svg(std::string_view svg, std::string_view scope) {
    std::string s(svg);
    if (s.rfind("<?xml", 0) == 0) {
        const auto end = s.find("?>");
        s.erase(0, end == std::string::npos ? s.size() : end + 2);
        while (!s.empty() && (s.front() == '\n' || s.front() == '\r')) s.erase(0, 1);
    }
    // Element text is escaped by the renderers, so these patterns only ever match markup.
    const std::string prefix = std::string(scope) + "-";
    s = std::regex_replace(s, std::regex(R"re((\s)id="([^"]+)")re"), "$1id=\"" + prefix + "$2\"");
    s = std::regex_replace(s, std::regex(R"re(url\(#([^)]+)\))re"), "url(#" + prefix + "$1)");
    s = std::regex_replace(s, std::regex(R"re(href="#([^"]+)")re"), "href=\"#" + prefix + "$1\"");
    return s;
}

std::string table(const Table& t) {
    std::string out = "<div class=\"scroll\"><table" + (t.css_class.empty() ? "" : " class=\"" + escape(t.css_class) + "\"") +
                      ">\n<thead><tr>";
    for (const auto& h : t.header) out += "<th>" + escape(h) + "</th>";
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& row : t.rows) {
        out += "<tr>";
        for (const auto& c : row) {
            out += "<td";
            if (!c.css_class.empty()) out += " class=\"" + escape(c.css_class) + "\"";
            if (!c.data.empty()) out += " data-metric=\"" + escape(c.data) + "\"";
            out += ">";
            out += c.href.empty() ? escape(c.text) : "<a href=\"" + escape(c.href) + "\">" + escape(c.text) + "</a>";
            out += c.markup;
            out += "</td>";
        }
        out += "</tr>\n";
    }
    return out + "</tbody>\n</table></div>\n";
}

std::string toc(const std::vector<TocEntry>& entries) {
    std::string out = "<nav class=\"toc\">";
    for (const auto& e : entries) out += "<a href=\"#" + escape(e.id) + "\">" + escape(e.name) + "</a>";
    return out + "</nav>\n";
}

std::string reference_section(std::string_view id, std::string_view summary, std::string_view body) {
    std::string out = "<section class=\"reference\" id=\"" + escape(id) + "\">\n<details>\n<summary><h2>" + escape(summary) +
                      "</h2></summary>\n";
    out += body;
    return out + "</details>\n</section>\n";
}

std::string page(std::string_view title, std::string_view body) {
    std::string out = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                      // Nothing may be fetched and nothing run: the page is whole as written.
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
                      "img-src data:; base-uri 'none'; form-action 'none'\">\n"
                      "<meta name=\"generator\" content=\"lab " LAB_VERSION "\">\n<title>";
    out += escape(title);
    out += "</title>\n<style>";
    out += kStyle;
    out += "</style>\n</head>\n<body>\n";
    out += body;
    out += "</body>\n</html>\n";
    return out;
}

}  // namespace lab::html
