// Writing `lab grade`'s outputs as one set (see grading_outputs.hpp).
#include "grading_outputs.hpp"

#include <fcntl.h>
#include <stdio.h>      // renameat2, RENAME_EXCHANGE (glibc 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

#include "atomic_file.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "lab/utc_time.hpp"

namespace fs = std::filesystem;

namespace lab::grader {

namespace {

// The pages folder may hold the operator's own files too: lab knows the pages it wrote by this
// list, which it keeps in the folder. A page of a submission no longer in the class (withdrawn,
// its folder renamed) goes at the next --report instead of lingering beside the class page; a
// file lab did not write is kept, whatever its name.
constexpr const char* kPagesList = ".lab-pages";

// Where a pages folder is made before it is swapped in, and where the old one waits to be removed
// when the file system cannot swap two folders at once.
constexpr const char* kNewFolder = ".lab-new-";
constexpr const char* kOldFolder = ".lab-old-";

// write_file_atomically's and mkdtemp's temporary names end with six letters or digits.
constexpr std::size_t kTempSuffix = 6;

// A name the list may hold: a page's (letters, digits, - _ .; .html), in the folder itself (the
// list is a file anyone can edit: "../class.html" or "notes/" is never a page).
bool page_file_name(const std::string& name) {
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".html") != 0 || name[0] == '.') return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; });
}

bool temp_suffix(const std::string& s) {
    return s.size() == kTempSuffix && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

// `.NAME.XXXXXX`: write_file_atomically's temporary for NAME, left where a kill stopped it.
std::optional<std::string> temporary_of(const std::string& file) {
    if (file.size() < kTempSuffix + 3 || file[0] != '.' || file[file.size() - kTempSuffix - 1] != '.') return std::nullopt;
    if (!temp_suffix(file.substr(file.size() - kTempSuffix))) return std::nullopt;
    return file.substr(1, file.size() - kTempSuffix - 2);
}

std::set<std::string> pages_listed(const fs::path& dir) {
    std::set<std::string> names;
    std::ifstream in(dir / kPagesList);
    for (std::string line; std::getline(in, line);)
        if (page_file_name(line)) names.insert(line);
    return names;
}

bool regular_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(fs::symlink_status(p, ec));
}

std::size_t remove_if_regular(const fs::path& p) {
    std::error_code ec;
    return regular_file(p) && fs::remove(p, ec) && !ec ? 1 : 0;
}

// What a grading stopped half-way left: temporary files of the gradebook, the class page and the
// pages, and pages folders made aside. A pages folder moved aside with no folder in its place (a
// stop between the two renames of a file system that cannot swap) is put back first: it holds the
// operator's own files.
std::size_t remove_leftovers(const fs::path& gradebook, const ClassReportFiles* report) {
    std::size_t removed = 0;
    std::error_code ec;
    auto temporaries_in = [&](const fs::path& dir, auto&& is_ours) {
        for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
            const auto of = temporary_of(e.path().filename().string());
            if (of && is_ours(*of)) removed += remove_if_regular(e.path());
        }
        ec.clear();
    };
    const std::string book = gradebook.filename().string();
    temporaries_in(gradebook.parent_path(), [&](const std::string& of) { return of == book; });
    if (!report) return removed;
    const std::string page = report->out.filename().string(), pages = report->pages_dir.filename().string();
    temporaries_in(report->out.parent_path(), [&](const std::string& of) { return of == page; });
    if (fs::is_directory(report->pages_dir, ec))
        temporaries_in(report->pages_dir, [&](const std::string& of) { return of == kPagesList || page_file_name(of); });
    ec.clear();
    const fs::path dir = report->pages_dir.parent_path().empty() ? fs::path(".") : report->pages_dir.parent_path();
    std::vector<fs::path> aside_new, aside_old;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        for (auto [infix, list] : {std::pair{kNewFolder, &aside_new}, std::pair{kOldFolder, &aside_old}}) {
            const std::string prefix = "." + pages + infix;
            if (n.size() == prefix.size() + kTempSuffix && n.compare(0, prefix.size(), prefix) == 0 && temp_suffix(n.substr(prefix.size())) &&
                fs::is_directory(fs::symlink_status(e.path(), ec)))
                list->push_back(e.path());
        }
    }
    ec.clear();
    if (!fs::exists(fs::symlink_status(report->pages_dir, ec)) && aside_old.size() == 1) {
        fs::rename(aside_old.front(), report->pages_dir, ec);
        if (!ec) aside_old.clear();
    }
    for (const auto& list : {aside_new, aside_old})
        for (const auto& d : list) removed += fs::remove_all(d, ec) > 0;
    return removed;
}

void write_plain(const fs::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw InputError(file.string(), std::string("cannot write the page (") + std::strerror(errno) + ")", "free some space, or choose another --report");
}

// The operator's files in the pages folder, into the new one: hard links where the file system
// has them (nothing is copied twice), else copies. Pages the last report wrote are not carried:
// those written again are new, the rest are of submissions now gone.
void carry_operator_files(const fs::path& from, const fs::path& to, const std::set<std::string>& listed,
                          const std::set<std::string>& writing) {
    std::error_code ec;
    if (!fs::is_directory(from, ec)) return;
    for (const auto& e : fs::directory_iterator(from)) {
        const std::string n = e.path().filename().string();
        if (n == kPagesList || writing.count(n) || (listed.count(n) && regular_file(e.path()))) continue;
        const fs::path dest = to / n;
        const auto how = fs::copy_options::recursive | fs::copy_options::copy_symlinks;
        fs::copy(e.path(), dest, how | fs::copy_options::create_hard_links, ec);
        if (ec) {
            fs::remove_all(dest, ec);
            ec.clear();
            fs::copy(e.path(), dest, how, ec);
        }
        if (ec)
            throw InputError(e.path().string(), "cannot keep this file in the new pages folder (" + ec.message() + ")",
                             "move it out of " + from.string() + ", or free some space");
    }
}

std::string pages_list_text(const std::set<std::string>& names, const GradingOutputs& o) {
    std::string text = "# The pages `lab grade --report` wrote here: the next report keeps every other file in this folder.\n";
    text += fmt::format("# gradebook: {} sha256 {}\n", o.gradebook.string(), sha256_hex(o.gradebook_csv));
    for (const auto& n : names) text += n + "\n";
    return text;
}

// The pages folder made aside, whole, with the operator's files kept; returns its path.
fs::path make_pages_folder(const GradingOutputs& o, std::size_t& stale) {
    const ClassReportFiles& r = *o.report;
    const fs::path dir = r.pages_dir.parent_path().empty() ? fs::path(".") : r.pages_dir.parent_path();
    fs::create_directories(dir);
    std::string tmpl = (dir / ("." + r.pages_dir.filename().string() + kNewFolder + std::string(kTempSuffix, 'X'))).string();
    if (!::mkdtemp(tmpl.data()))
        throw InputError(dir.string(), std::string("cannot make the pages folder here (") + std::strerror(errno) + ")", "choose another --report");
    const fs::path made = tmpl;
    try {
        // The mode a new folder gets (mkdtemp's is private), or the old one's.
        std::error_code ec;
        const fs::file_status old = fs::status(r.pages_dir, ec);
        const mode_t mask = ::umask(0);
        ::umask(mask);
        fs::permissions(made, fs::is_directory(old) ? old.permissions() : static_cast<fs::perms>(0777 & ~mask), ec);
        std::set<std::string> names;
        for (const auto& [name, html] : r.pages) {
            write_plain(made / name, html);
            names.insert(name);
        }
        write_plain(made / kPagesList, pages_list_text(names, o));
        const std::set<std::string> listed = pages_listed(r.pages_dir);
        carry_operator_files(r.pages_dir, made, listed, names);
        for (const auto& n : listed) stale += !names.count(n) && regular_file(r.pages_dir / n);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(made, ec);
        throw;
    }
    return made;
}

// The new pages folder in place of the old, in one step where the file system can swap two
// folders (Linux's RENAME_EXCHANGE), else in two renames (a stop between them is put right by
// remove_leftovers); then the old folder goes.
void swap_in(const fs::path& made, const fs::path& pages_dir) {
    std::error_code ec;
    auto fail = [&](const char* what) {
        throw InputError(pages_dir.string(), std::string(what) + " (" + std::strerror(errno) + ")", "check the folder's permissions");
    };
    if (!fs::exists(fs::symlink_status(pages_dir, ec))) {
        if (::rename(made.c_str(), pages_dir.c_str()) != 0) fail("cannot put the pages folder in place");
        return;
    }
    if (!fs::is_directory(pages_dir, ec))
        throw InputError(pages_dir.string(), "is not a folder, so the run pages cannot be written there", "move it away, or choose another --report");
    if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, pages_dir.c_str(), RENAME_EXCHANGE) == 0) {
        fs::remove_all(made, ec);   // the old folder, now under the made one's name
        return;
    }
    const std::string made_name = made.filename().string();
    const fs::path aside = made.parent_path() / ("." + pages_dir.filename().string() + kOldFolder + made_name.substr(made_name.size() - kTempSuffix));
    if (::rename(pages_dir.c_str(), aside.c_str()) != 0) fail("cannot move the old pages folder aside");
    if (::rename(made.c_str(), pages_dir.c_str()) != 0) fail("cannot put the pages folder in place");
    fs::remove_all(aside, ec);
}

std::string marker_text(const GradingOutputs& o) {
    return fmt::format(
        "lab grade began writing {}, {} and {}/ at {} and did not finish (stopped, or a disk full): they may be of two gradings, "
        "and disagree.\nRun the same `lab grade ... --report` again: it writes all three again and removes this file.\n",
        o.gradebook.string(), o.report->out.string(), o.report->pages_dir.string(), format::utc_iso8601(std::time(nullptr)));
}

}  // namespace

fs::path incomplete_marker(const fs::path& gradebook) { return gradebook.parent_path() / (gradebook.filename().string() + ".incomplete"); }

OutputsWritten write_grading_outputs(const GradingOutputs& o, const WriteStep& step) {
    auto at = [&](const char* name) {
        if (step) step(name);
    };
    OutputsWritten w;
    const fs::path marker = incomplete_marker(o.gradebook);
    w.earlier_interrupted = regular_file(marker);
    w.leftovers_removed = remove_leftovers(o.gradebook, o.report ? &*o.report : nullptr);
    if (!o.report) {
        // One file, replaced atomically: a marker of an earlier report stays until a report is
        // written again (its class page and pages are still the stopped grading's).
        at("gradebook");
        write_file_atomically(o.gradebook, o.gradebook_csv);
        return w;
    }
    write_file_atomically(marker, marker_text(o));
    at("pages");
    fs::path made;
    try {
        made = make_pages_folder(o, w.stale_removed);
    } catch (...) {
        // Nothing replaced yet: the old set stands as it was (with its own marker, if it had one).
        std::error_code ec;
        if (!w.earlier_interrupted) fs::remove(marker, ec);
        throw;
    }
    at("swap");
    swap_in(made, o.report->pages_dir);
    at("class page");
    write_file_atomically(o.report->out, o.report->class_html);
    at("gradebook");
    write_file_atomically(o.gradebook, o.gradebook_csv);
    at("done");
    std::error_code ec;
    fs::remove(marker, ec);
    w.student_pages = o.report->pages.size();
    return w;
}

}  // namespace lab::grader
