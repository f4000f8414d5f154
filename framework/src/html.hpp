// The pieces every HTML page lab writes is made of (`lab report`'s run page, `lab grade
// --report`'s class page): escaping, inline SVG, plain-text tables and the page itself with its
// one stylesheet. A page is self-contained: styles and pictures inline, no script, and a Content
// Security Policy that lets the browser fetch nothing, so it reads the same offline, from a
// mail attachment or a course's file store, and text from a record can never become markup.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lab::html {

// Text for an element's content or a quoted attribute: & < > " ' as entities.
std::string escape(std::string_view text);

// An SVG document (as plot::render_svg and plot::render_plot_svg write it) as an element of a
// page: its XML declaration dropped and every id it defines (and refers to: url(#..), href="#..")
// prefixed with `scope`, so two plots on one page never share a clip path.
std::string inline_svg(std::string_view svg, std::string_view scope);

// A relative path as a link's target: every byte outside A-Z a-z 0-9 - . _ ~ / percent-encoded,
// so a file name with spaces or '#' still links to itself and never reads as a scheme.
std::string url_path(std::string_view path);

// One cell of a table: text (escaped when the table is written) and an optional class
// ("num" right-aligns figures; "withheld" marks a value the student must work out).
struct Cell {
    std::string text;
    std::string css_class{};
    std::string href{};    // a relative link the text points to, "" = none
    std::string data{};    // data-metric: the metric the cell shows, for readers and tests
    std::string markup{};  // markup the caller built (a small inline SVG), after the text
};

struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<Cell>> rows;
    std::string css_class{};
};

// A <table> with a <thead> (repeated on every printed page the table spans).
std::string table(const Table& t);

// A link list to the page's sections, in page order: each (id, name) as <a href="#id">name</a>.
struct TocEntry {
    std::string id;
    std::string name;
};
std::string toc(const std::vector<TocEntry>& entries);

// A section of reference material, collapsed until the reader opens it: <section id> around a
// <details> whose <summary> is the section's <h2> heading (`summary`, naming what is inside and
// how much). The page's print styles show its body on paper, open or not.
std::string reference_section(std::string_view id, std::string_view summary, std::string_view body);

// A whole page: <!doctype html>, UTF-8, viewport, the security policy, `title` (escaped), the
// stylesheet (screen and print) and `body` (already HTML).
std::string page(std::string_view title, std::string_view body);

}  // namespace lab::html
