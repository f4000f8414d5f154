// The instructor's class page and the per-student pages beside it (see class_report.hpp).
// render_class_html lays out data it is given; write_class_report reads the runs, derives them
// and writes the files.
#include "class_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>

#include "format.hpp"
#include "html.hpp"
#include "lesson_host.hpp"
#include "run_html.hpp"
#include "run_record.hpp"
#include "xy_plot.hpp"

namespace fs = std::filesystem;

namespace lab::grader {

namespace {

using html::Cell;
using html::escape;

bool has_flag(const BatchEntry& e, const std::string& flag) {
    return std::find(e.flags.begin(), e.flags.end(), flag) != e.flags.end();
}

std::string joined(const std::vector<std::string>& items, const std::string& sep = ", ") {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
}

Cell folder_cell(const ClassPage& p, const BatchEntry& e) {
    const std::string key = row_key(p.result, e);
    auto it = p.links.find(key);
    return {e.missing ? "-" : key, "mono", it == p.links.end() ? "" : it->second};
}

std::string header_html(const ClassPage& p) {
    std::map<std::string, int> status;
    // The lessons graded: a submission of another lesson refused (`--lesson`) is not the class's
    // lesson. Where nothing was graded, every lesson handed in.
    std::set<std::string> lessons, handed_in;
    for (const auto& e : p.result.entries) {
        status[e.status()]++;
        if (e.lesson.empty()) continue;
        handed_in.insert(e.lesson);
        if (e.ok && e.report.graded) lessons.insert(e.lesson);
    }
    if (lessons.empty()) lessons = handed_in;
    std::string out = "<header>\n<h1>" + escape(p.title) + "</h1>\n<p class=\"meta\">";
    out += escape(fmt::format("{} submission{}: {} graded, {} practice, {} refused, {} could not be read", p.result.entries.size() - status["missing"],
                              p.result.entries.size() - status["missing"] == 1 ? "" : "s", status["graded"], status["practice"], status["refused"],
                              status["error"]));
    if (status["missing"]) out += escape(fmt::format("; {} on the roster handed in nothing", status["missing"]));
    out += " &middot; lesson " + escape(lessons.empty() ? "-" : joined({lessons.begin(), lessons.end()})) + " &middot; " +
           escape(p.mode == "course" ? "course mode (tokens checked)" : "practice mode (no course key: no token was checked)");
    out += "</p>\n";
    // Which spec graded the class: a page of a regrade with an edited spec reads differently.
    for (const auto& sp : p.result.specs) out += "<p class=\"meta spec\">Graded with " + escape(spec_used_text(sp)) + "</p>\n";
    out += "</header>\n<nav class=\"toc\"><a href=\"#scores\">Scores</a><a href=\"#questions\">Questions</a>"
           "<a href=\"#devices\">Devices</a><a href=\"#flags\">Flagged</a><a href=\"#students\">Submissions</a></nav>\n";
    return out;
}

std::string scores_html(const ClassPage& p) {
    std::vector<double> shares;
    for (const auto& e : p.result.entries)
        if (e.ok && e.report.graded && e.report.max_score > 0) shares.push_back(e.report.score / e.report.max_score);
    std::sort(shares.begin(), shares.end());
    std::string out = "<section id=\"scores\">\n<h2>Scores</h2>\n<figure class=\"plot\" id=\"histogram\">\n" +
                      html::inline_svg(score_histogram_svg(p.result), "histogram") + "</figure>\n";
    if (!shares.empty()) {
        double mean = 0;
        for (double s : shares) mean += s / static_cast<double>(shares.size());
        const std::size_t n = shares.size();
        const double median = n % 2 ? shares[n / 2] : (shares[n / 2 - 1] + shares[n / 2]) / 2;
        out += "<p>" + escape(fmt::format("Mean {}, median {}, lowest {}, highest {} of the maximum.", format::percent(mean),
                                          format::percent(median), format::percent(shares.front()), format::percent(shares.back()))) +
               "</p>\n";
    }
    return out + "</section>\n";
}

// How the graded submissions answered one question.
struct Tally {
    int right = 0, partial = 0, wrong = 0, missing = 0, unreadable = 0;
    int total() const { return right + partial + wrong + missing + unreadable; }
};

// A bar of the five shares, green to grey, with the numbers in its tooltip.
std::string share_bar(const Tally& t) {
    constexpr double W = 220, H = 14;
    const std::pair<int, const char*> parts[] = {{t.right, "#2e7d32"}, {t.partial, "#f2a900"}, {t.wrong, "#c62828"},
                                                 {t.missing, "#9e9e9e"}, {t.unreadable, "#6a1b9a"}};
    std::string svg = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"share\" width=\"{0}\" height=\"{1}\" "
                                  "viewBox=\"0 0 {0} {1}\"><title>{2} right, {3} partial, {4} wrong, {5} no answer, {6} unreadable"
                                  "</title><rect width=\"{0}\" height=\"{1}\" fill=\"#eee\"/>",
                                  W, H, t.right, t.partial, t.wrong, t.missing, t.unreadable);
    double x = 0;
    for (const auto& [n, colour] : parts) {
        const double w = t.total() ? W * n / t.total() : 0;
        if (w > 0) svg += fmt::format("<rect x=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", x, w, H, colour);
        x += w;
    }
    return svg + "</svg>";
}

std::string questions_html(const ClassPage& p) {
    std::map<std::string, Tally> tallies;
    for (const auto& e : p.result.entries) {
        if (!e.ok || !e.report.graded) continue;
        for (const auto& q : e.report.results) {
            Tally& t = tallies[q.question.id];
            switch (q.verdict) {
                case Verdict::correct: t.right++; break;
                case Verdict::partial: t.partial++; break;
                case Verdict::wrong: t.wrong++; break;
                case Verdict::missing: t.missing++; break;
                case Verdict::invalid: t.unreadable++; break;
                case Verdict::void_question: break;
            }
        }
    }
    auto share = [](int n, const Tally& t) { return fmt::format("{} ({})", n, format::percent(t.total() ? double(n) / t.total() : 0)); };
    html::Table table{{"question", "answered by", "right", "partial", "wrong", "no answer", "unreadable", ""}, {}, "questions"};
    // Most missed first, as `lab grade` lists them.
    for (const auto& [id, missed] : p.result.most_missed) {
        const Tally& t = tallies[id];
        if (t.total() == 0) continue;
        table.rows.push_back({{id, "mono"}, {std::to_string(t.total()), "num"}, {share(t.right, t), "num"}, {share(t.partial, t), "num"},
                              {share(t.wrong, t), "num"}, {share(t.missing, t), "num"}, {share(t.unreadable, t), "num"},
                              {"", "", "", "", share_bar(t)}});
    }
    std::string out = "<section id=\"questions\">\n<h2>Questions, most missed first</h2>\n";
    out += table.rows.empty() ? "<p>No submission was graded, so no question was answered.</p>\n" : html::table(table);
    return out + "<p class=\"note\">Shares of the graded submissions that answered each question (void questions left out). "
                 "Unreadable: a claim that could not be read (a wrong unit, not a number).</p>\n</section>\n";
}

std::string range(const std::vector<double>& v, const std::string& unit) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const std::string a = format::quantity(*lo, unit), b = format::quantity(*hi, unit);
    return a == b ? a : a + " to " + b;
}

std::string devices_html(const ClassPage& p) {
    std::map<std::string, std::vector<const ClassDevice*>> by_device;
    for (const auto& d : p.devices) by_device[d.device].push_back(&d);
    std::string out = "<section id=\"devices\">\n<h2>The class's devices</h2>\n";
    out += "<p>" + escape(fmt::format("Drawn from every readable run ({} of {}), graded or refused.", p.devices.size(),
                                      p.result.entries.size())) + "</p>\n";
    if (p.devices.empty()) return out + "<p>No run could be read, so there is no device to draw.</p>\n</section>\n";
    out += "<figure class=\"plot\" id=\"devices-plot\">\n" + html::inline_svg(plot::render_plot_svg(class_devices_plot(p.devices)), "devices") +
           "<figcaption>Each line is a kind of device at its runs' median ceilings; each point is one run's ridge "
           "(its peak FLOP/s at its ridge point).</figcaption>\n</figure>\n";
    html::Table t{{"device", "runs", "peak FLOP/s", "DRAM bandwidth", "ridge", "folders"}, {}, "devices"};
    for (const auto& [device, runs] : by_device) {
        std::vector<double> peaks, bws, ridges;
        std::vector<std::string> folders, pipes;
        for (const ClassDevice* d : runs) {
            if (std::find(folders.begin(), folders.end(), d->folder) == folders.end()) folders.push_back(d->folder);   // once per folder of several lessons
            if (!(d->peak_flops > 0 && d->bandwidth > 0)) continue;
            peaks.push_back(d->peak_flops), bws.push_back(d->bandwidth), ridges.push_back(d->peak_flops / d->bandwidth);
            if (std::find(pipes.begin(), pipes.end(), d->peak_pipe) == pipes.end()) pipes.push_back(d->peak_pipe);
        }
        const bool known = !peaks.empty();
        t.rows.push_back({{device},
                          {std::to_string(runs.size()), "num"},
                          {known ? range(peaks, "FLOP/s") + " (" + joined(pipes) + ")" : "-", "num"},
                          {known ? range(bws, "B/s") : "-", "num"},
                          {known ? range(ridges, "FLOP/B") : "-", "num"},
                          {joined(folders), "mono"}});
    }
    return out + html::table(t) + "</section>\n";
}

std::string flags_html(const ClassPage& p) {
    std::string out = "<section id=\"flags\">\n<h2>Flagged for the instructor</h2>\n<p class=\"note\">A flag never changes a "
                      "score: you decide.</p>\n";
    // The grading's warnings (answers to a question the spec does not ask, a roster's doubts):
    // `lab grade` says them on stderr, which a page read later does not show.
    if (!p.result.warnings.empty()) {
        out += "<h3>Warnings</h3>\n<ul id=\"warnings\">\n";
        for (const auto& w : p.result.warnings) out += "<li>" + escape(w) + "</li>\n";
        out += "</ul>\n";
    }
    const std::string what_to_do =
        "<div class=\"note\" id=\"what-to-do\"><p>What you can do with a flagged submission:</p><ul>"
        "<li>Re-measure it: <code>lab audit SUBMISSIONS_DIR --sample 10%</code> re-runs every flagged submission (and a sample of the "
        "others) as it was made, on this machine or with <code>--slurm</code> on the cluster, and says which reproduce.</li>"
        "<li>Ask the student for a live re-run: <code>lab run ID</code> in front of you, on the machine they used.</li>"
        "<li>Ask who handed in what: a folder holding another student's run, or one student in two rows, is often a mix-up.</li>"
        "<li>Change the score yourself once you have decided: the flag never does.</li></ul></div>\n";
    if (!p.result.groups.empty()) {
        html::Table t{{"group", "kind", "folders", "evidence"}, {}, "groups"};
        for (const auto& g : p.result.groups) t.rows.push_back({{g.id, "mono"}, {g.kind}, {joined(g.folders), "mono"}, {g.evidence}});
        out += "<h3>Near-copies and repeated runs</h3>\n" + html::table(t);
    }
    html::Table mismatch{{"folder", "holds the run of"}, {}, "mismatches"}, duplicate{{"folder", "student", "lesson", "status", "other rows"}, {}, "duplicates"},
        refused{{"folder", "why it was refused"}, {}, "refused"}, tampered{{"folder", "why it could not be graded"}, {}, "tampered"},
        unreadable{{"folder", "why it could not be graded"}, {}, "unreadable"}, errors{{"folder", "why it could not be graded"}, {}, "errors"};
    for (const auto& e : p.result.entries) {
        if (has_flag(e, "folder_mismatch")) mismatch.rows.push_back({folder_cell(p, e), {e.run_student, "mono"}});
        if (has_flag(e, "duplicate_student"))
            duplicate.rows.push_back({folder_cell(p, e), {e.student, "mono"}, {e.lesson}, {e.status()}, {e.duplicate_note, "note"}});
        if (e.status() == "refused") refused.rows.push_back({folder_cell(p, e), {e.reason()}});
        if (e.status() == "error")
            (e.error_kind == "tampered" ? tampered : e.error_kind == "unreadable" ? unreadable : errors)
                .rows.push_back({folder_cell(p, e), {e.reason()}});
    }
    const bool flagged = !p.result.groups.empty() || !mismatch.rows.empty() || !duplicate.rows.empty();
    if (!mismatch.rows.empty()) out += "<h3>Folders holding another student's run</h3>\n" + html::table(mismatch);
    if (!duplicate.rows.empty()) out += "<h3>Students with more than one row (graded or not)</h3>\n" + html::table(duplicate);
    if (flagged) out += what_to_do;
    if (!refused.rows.empty()) out += "<h3>Refused runs</h3>\n" + html::table(refused);
    if (!tampered.rows.empty())
        out += "<h3>Tampered runs (digest mismatch)</h3>\n<p class=\"note\">The run's content no longer matches its digest: it was "
               "edited after <code>lab run</code> wrote it (or damaged in transit). Ask the student for the file as written, or a live "
               "re-run.</p>\n" + html::table(tampered);
    if (!unreadable.rows.empty())
        out += "<h3>Unreadable or corrupt files</h3>\n<p class=\"note\">A file that cannot be read (not JSON or YAML, cut short, "
               "a malformed answers file): ask the student to upload it again.</p>\n" + html::table(unreadable);
    if (!errors.rows.empty()) out += "<h3>Submissions that could not be graded</h3>\n" + html::table(errors);
    if (!flagged && p.result.warnings.empty() && refused.rows.empty() && tampered.rows.empty() && unreadable.rows.empty() && errors.rows.empty())
        out += "<p>Nothing flagged.</p>\n";
    return out + "</section>\n";
}

// A reason as one line of the submissions table; the whole of it is under Flagged and on the
// run's page.
std::string shortened(const std::string& reason) {
    constexpr std::size_t kMax = 160;
    if (reason.size() <= kMax) return reason;
    std::size_t cut = reason.rfind(' ', kMax);
    if (cut == std::string::npos || cut < kMax / 2) cut = kMax;
    return reason.substr(0, cut) + " ...";
}

std::string students_html(const ClassPage& p) {
    html::Table t{{"folder", "student", "lesson", "score", "status", "flags", "reason", "page"}, {}, "submissions"};
    for (const auto& e : p.result.entries) {
        const bool scored = e.ok && e.report.graded;
        auto no_page = p.no_page.find(row_key(p.result, e));
        t.rows.push_back({folder_cell(p, e),
                          {e.student, "mono"},
                          {e.lesson},
                          {scored ? fmt::format("{:g} / {:g}", e.report.score, e.report.max_score) : "-", "num"},
                          {e.status()},
                          {joined(e.flags, " "), "mono"},
                          {shortened(e.reason())},
                          {no_page == p.no_page.end() ? "" : "none: " + no_page->second, "note"}});
    }
    return "<section id=\"students\">\n<h2>Submissions</h2>\n<p class=\"note\">A folder links to its run's page.</p>\n" +
           html::table(t) + "</section>\n";
}

// A file name for a folder's page: its name with anything outside [A-Za-z0-9._-] replaced, so
// the relative link needs no escaping; a number added where two folders would collide.
std::string page_name(const std::string& folder, std::set<std::string>& taken) {
    std::string base;
    for (char c : folder) base += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
    if (base.empty() || base[0] == '.') base = "s" + base;
    std::string name = base;
    for (int n = 2; !taken.insert(name).second; ++n) name = base + "-" + std::to_string(n);
    return name + ".html";
}

// What an instructor reads at the top of a student's page: how the run was graded.
PageBox grading_box(const BatchEntry& e) {
    PageBox b{"How it was graded", {{"folder", e.folder}, {"status", e.status()}}, std::nullopt};
    if (e.ok && e.report.graded) b.facts.push_back({"score", fmt::format("{:g} / {:g}", e.report.score, e.report.max_score)});
    if (!e.reason().empty()) b.facts.push_back({"reason", e.reason()});
    if (!e.flags.empty()) b.facts.push_back({"flags", joined(e.flags, " ")});
    if (!e.ok || e.report.results.empty()) return b;
    const bool expected = e.report.show_expected;
    html::Table t{{"question", "verdict", "points", "claim"}, {}, "grading"};
    if (expected) t.header.push_back("expected");
    for (const auto& q : e.report.results) {
        std::vector<Cell> row{{q.question.id, "mono"}, {to_string(q.verdict)},
                              {fmt::format("{:g} / {:g}", q.points, q.max_points), "num"}, {q.claim, "mono"}};
        if (expected) row.push_back({q.expected, "mono"});
        t.rows.push_back(std::move(row));
    }
    b.table = std::move(t);
    return b;
}

}  // namespace

std::string row_key(const BatchResult& r, const BatchEntry& e) {
    const auto same = std::count_if(r.entries.begin(), r.entries.end(), [&](const BatchEntry& o) { return o.folder == e.folder; });
    return same > 1 && !e.lesson.empty() ? e.folder + " " + e.lesson : e.folder;
}

std::string render_class_html(const ClassPage& p) {
    const std::string body = header_html(p) + "<main>\n" + scores_html(p) + questions_html(p) + devices_html(p) + flags_html(p) +
                             students_html(p) + "</main>\n<footer>Made by lab " LAB_VERSION " (<code>lab grade --report</code>). Each "
                             "run's page withholds what the grading spec does not show students now.</footer>\n";
    return html::page(p.title, body);
}

ClassReportFiles render_class_report(GradingContext& ctx, const BatchResult& r, const fs::path& submissions, const fs::path& out) {
    ClassPage page{r, "Class report: " + submissions.filename().string(), ctx.key() ? "course" : "practice", {}, {}, {}};
    if (page.title == "Class report: ") page.title += submissions.parent_path().filename().string();
    ClassReportFiles files;
    files.out = out;
    files.pages_dir = out.parent_path() / (out.stem().string() + "-reports");
    std::set<std::string> taken;
    for (const auto& e : r.entries) {
        if (e.missing) continue;
        const std::string key = row_key(r, e);
        if (e.run_file.empty()) {
            page.no_page[key] = "no run record";
            continue;
        }
        // Each run on its own, as grading does: one that cannot be read or derived has no page
        // (and one that cannot be read has no device either).
        std::string student_page;
        try {
            const nlohmann::json rec = record::read_record(e.run_file);
            const RawRun raw = record::raw_run_from_record(rec);
            page.devices.push_back(class_device(e.folder, raw));
            const LoadedLesson& lesson = ctx.lesson(raw.lesson_id);
            check_plugin_version(lesson, rec, e.run_file);
            const Derivation d = derive_run(lesson, raw, e.run_file);
            const auto withheld = record::withheld_metrics(lesson.info, e.ok && e.report.show_expected, raw.device_kind);
            student_page = render_run_html(RunPage{lesson.info, raw, d, withheld, rec, "", grading_box(e),
                                                   html::url_path("../" + out.filename().string()), "the class"});
        } catch (const std::exception& ex) {
            page.no_page[key] = ex.what();
            continue;
        }
        const std::string name = page_name(key, taken);
        files.pages.emplace_back(name, std::move(student_page));
        page.links[key] = html::url_path(files.pages_dir.filename().string() + "/" + name);
    }
    files.class_html = render_class_html(page);
    return files;
}

}  // namespace lab::grader
