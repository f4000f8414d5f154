// nvidia-smi captures, read back (see smi_capture.hpp). Each format is parsed by its own layout:
// the table by its cells, `-q` by indentation (4 spaces a level, or a tab), CSV by its header's
// field names, dmon by its '#' header. Numbers keep nvidia-smi's units (W, C, MiB, MHz, %).
#include "smi_capture.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "errors.hpp"
#include "input_file.hpp"
#include "text_encoding.hpp"

namespace lab::smi {

const char* to_string(Format f) {
    switch (f) {
        case Format::table: return "table";
        case Format::query: return "q";
        case Format::csv: return "csv";
        default: return "dmon";
    }
}

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}
std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}
// The leading number of "631.95 W", "59C", "19818MiB", "100 %"; absent for "N/A", "[N/A]", "-".
std::optional<double> number(const std::string& s) {
    const std::string t = trim(s);
    if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t[0])) || ((t[0] == '-' || t[0] == '.') && t.size() > 1))) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    return end == t.c_str() || !std::isfinite(v) ? std::nullopt : std::optional<double>(v);
}
std::string at(const std::filesystem::path& file, std::size_t line);

// What nvidia-smi itself writes where it has no value: these read as absent, everything else
// must be a number. (Reading all else as absent too showed 'abcMiB', 'nan MiB' and '1e400 MiB'
// as "-", as if the driver had said N/A.)
bool absent_marker(const std::string& t) {
    return t.empty() || t == "N/A" || t == "[N/A]" || t == "-" || t == "Not Supported" || t == "[Not Supported]" || t == "ERR!" ||
           t == "Unknown Error" || t == "[Unknown Error]" || t.rfind("[Requested", 0) == 0 || t.rfind("Requested functionality", 0) == 0;
}

// The range a reading must lie in: a percentage is 0 to 100, a size, power or clock is not
// negative (a capture's 250% GPU-Util or -5 MiB is edited or damaged, never the driver's).
enum class Range { any, non_negative, percent };

// A reading of `field` ("memory.used", "Utilization/GPU", dmon's "pwr"): nullopt for an absent
// marker; a number, with nvidia-smi's `unit` after it or no unit (nounits CSV, dmon); anything
// else, or a number out of `range`, is an InputError naming the file, line and field.
std::optional<double> reading(const std::string& s, const std::filesystem::path& file, std::size_t line, const std::string& field,
                              const std::string& unit, Range range) {
    const std::string t = trim(s);
    if (absent_marker(t)) return std::nullopt;
    const std::string fix = "pass the file nvidia-smi wrote, unedited (it writes a number, or N/A where it has none)";
    const char* start = t.c_str();
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    const std::string rest = end == start ? t : trim(std::string(end));
    const bool numeric = end != start && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' || t[0] == '.' || t[0] == '+') &&
                         t.find_first_of("xXnNiI") >= static_cast<std::size_t>(end - start);  // no hex, nan or inf
    if (!numeric || (!rest.empty() && rest != unit))
        throw InputError(at(file, line), fmt::format("{} is '{}', not a number{}", field, excerpt(t, 40), unit.empty() ? "" : " of " + unit), fix);
    if (!std::isfinite(v))
        throw InputError(at(file, line), fmt::format("{} is '{}', beyond the range of a number", field, excerpt(t, 40)), fix);
    if (range == Range::percent && (v < 0 || v > 100))
        throw InputError(at(file, line), fmt::format("{} is {}%: a percentage is between 0 and 100", field, v), fix);
    if (range == Range::non_negative && v < 0)
        throw InputError(at(file, line), fmt::format("{} is {}{}: it cannot be negative", field, v, unit.empty() ? "" : " " + unit), fix);
    return v;
}

// Memory used (and reserved) within the total, and a total that is more than 0: "19818 MiB of
// 0 MiB in use (inf%)" and 1e23 MiB used of 80 GB were shown as read.
void check_memory(const Gpu& g, const std::filesystem::path& file, std::size_t line) {
    const std::string fix = "pass the file nvidia-smi wrote, unedited";
    if (g.memory_total_mib && *g.memory_total_mib <= 0)
        throw InputError(at(file, line), fmt::format("the memory total is {} MiB: a GPU has more than 0", *g.memory_total_mib), fix);
    if (g.memory_total_mib && g.memory_used_mib && *g.memory_used_mib > *g.memory_total_mib)
        throw InputError(at(file, line), fmt::format("{} MiB of memory used, more than the total of {} MiB", *g.memory_used_mib, *g.memory_total_mib), fix);
    if (g.memory_total_mib && g.memory_reserved_mib && *g.memory_reserved_mib > *g.memory_total_mib)
        throw InputError(at(file, line), fmt::format("{} MiB of memory reserved, more than the total of {} MiB", *g.memory_reserved_mib, *g.memory_total_mib), fix);
}

// A process id: a whole number in a pid's range (a larger one would not fit the integer it goes in).
std::optional<long long> pid(const std::string& s) {
    const auto v = number(s);
    if (!v || *v < 0 || *v > 1e15 || *v != std::floor(*v)) return std::nullopt;
    return static_cast<long long>(*v);
}
std::optional<std::string> text(const std::string& s) {
    const std::string t = trim(s);
    if (t.empty() || t == "N/A" || t == "[N/A]" || t.rfind("[Requested", 0) == 0 || t.rfind("Requested functionality", 0) == 0) return std::nullopt;
    return t;
}
std::string at(const std::filesystem::path& file, std::size_t line) { return file.string() + ":" + std::to_string(line + 1); }

// ---- the default table ----------------------------------------------------------------------

// Element i, or "" where the row or line has fewer (a capture cut or edited mid-row).
std::string at_or_empty(const std::vector<std::string>& v, std::size_t i) { return i < v.size() ? v[i] : std::string(); }

std::vector<std::string> cells(const std::string& row) {
    std::vector<std::string> out;
    std::string cur;
    for (std::size_t i = 1; i < row.size(); ++i) {
        if (row[i] == '|') out.push_back(cur), cur.clear();
        else cur += row[i];
    }
    return out;
}

Capture parse_table(const std::vector<std::string>& lines, const std::filesystem::path& file) {
    Capture c;
    c.format = Format::table;
    std::optional<std::string> driver, cuda;
    std::size_t i = 0;
    for (; i < lines.size() && lines[i].find("NVIDIA-SMI") == std::string::npos; ++i) {}
    const std::string& head = lines[i];
    if (auto p = head.find("Driver Version:"); p != std::string::npos) driver = text(at_or_empty(words(head.substr(p + 15)), 0));
    if (auto p = head.find("CUDA Version:"); p != std::string::npos && !words(head.substr(p + 13)).empty()) cuda = text(words(head.substr(p + 13))[0]);
    // GPU rows follow the first "|===" line: three rows a GPU, then a "+---" border.
    for (; i < lines.size() && lines[i].rfind("|==", 0) != 0; ++i) {}
    if (i == lines.size()) throw InputError(file.string(), "an nvidia-smi table with no GPU rows (no '|===' line under its header)", "capture the whole output of `nvidia-smi`");
    for (++i; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) {
        const auto first = cells(lines[i]);
        if (i + 1 >= lines.size() || lines[i + 1].rfind("|", 0) != 0 || first.size() < 3)
            throw InputError(at(file, i), "the table is cut inside a GPU's rows (each GPU has a name row and a readings row)", "capture the whole output of `nvidia-smi`");
        const auto name = words(first[0]), readings = words(at_or_empty(cells(lines[i + 1]), 0));
        const auto memory = words(at_or_empty(cells(lines[i + 1]), 1)), util = words(at_or_empty(cells(lines[i + 1]), 2));
        if (name.size() < 3 || readings.size() < 5 || memory.size() < 3)
            throw InputError(at(file, i), "not a GPU row of nvidia-smi's table: expected 'index name persistence' and 'fan temp perf power / cap'");
        Gpu g;
        std::string n;
        for (std::size_t w = 1; w + 1 < name.size(); ++w) n += (w > 1 ? " " : "") + name[w];
        g.name = n, g.driver_version = driver, g.cuda_version = cuda;
        const std::size_t row = i + 1;
        g.temperature_c = reading(readings[1], file, row, "the temperature", "C", Range::any), g.pstate = text(readings[2]);
        g.power_draw_w = reading(readings[3], file, row, "the power draw", "W", Range::non_negative);
        g.power_limit_w = reading(readings[5 < readings.size() ? 5 : 4], file, row, "the power cap", "W", Range::non_negative);
        g.memory_used_mib = reading(memory[0], file, row, "the memory used", "MiB", Range::non_negative);
        g.memory_total_mib = reading(memory[2], file, row, "the memory total", "MiB", Range::non_negative);
        if (!util.empty()) g.utilization_gpu_pct = reading(util[0], file, row, "GPU-Util", "%", Range::percent);
        check_memory(g, file, row);
        c.gpus.push_back(g);
        for (i += 2; i < lines.size() && lines[i].rfind("|", 0) == 0 && lines[i].find("MiB") == std::string::npos &&
                     words(at_or_empty(cells(lines[i]), 0)).size() < 3;
             ++i) {}  // the MIG row
        if (i >= lines.size() || lines[i].rfind("+", 0) != 0)
            throw InputError(at(file, std::min(i, lines.size() - 1)), "the table is cut after a GPU's rows (no closing '+---' border)", "capture the whole output of `nvidia-smi`");
        if (i + 1 < lines.size() && lines[i + 1].rfind("|", 0) != 0) break;
    }
    if (c.gpus.empty())
        throw InputError(at(file, std::min(i, lines.size() - 1)), "the table ends under its header, before any GPU's rows: the capture is cut short",
                         "capture the whole output of `nvidia-smi`");
    // Processes: rows after the second "|===" line; "No running processes found" lists none.
    // nvidia-smi prints the box under every table ("No running processes found" when it lists
    // none): a table without it was cut after its GPUs' rows, and would read as "processes: null".
    const std::size_t gpus_end = i;
    for (; i < lines.size() && lines[i].find("Processes:") == std::string::npos; ++i) {}
    if (i == lines.size())
        throw InputError(at(file, std::min(gpus_end, lines.size() - 1)),
                         "the table ends after its GPUs' rows, before the Processes box nvidia-smi prints under them (\"No running "
                         "processes found\" when there are none): the capture is cut short",
                         "capture the whole output of `nvidia-smi`");
    // The list closes with a '+---' border as the GPUs' rows do: a capture cut among its rows
    // would otherwise list the processes before the cut as all there were.
    const std::string process_cut = "the table is cut inside its process list (no closing '+---' border under its rows)";
    const std::size_t processes_header = i;
    for (; i < lines.size() && lines[i].rfind("|==", 0) != 0; ++i) {}
    if (i == lines.size()) throw InputError(at(file, processes_header), process_cut, "capture the whole output of `nvidia-smi`");
    for (auto& g : c.gpus) g.processes_listed = true;
    for (++i; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) {
        const auto w = words(at_or_empty(cells(lines[i]), 0));
        if (w.size() < 7 || !number(w[0])) continue;  // "No running processes found"
        const std::size_t gpu = static_cast<std::size_t>(*number(w[0]));
        Process p{pid(w[3]), "", reading(w.back(), file, i, "a process's GPU memory usage", "MiB", Range::non_negative)};
        for (std::size_t k = 5; k + 1 < w.size(); ++k) p.name += (k > 5 ? " " : "") + w[k];
        if (gpu < c.gpus.size()) c.gpus[gpu].processes.push_back(p);
    }
    if (i == lines.size() || lines[i].rfind("+", 0) != 0)
        throw InputError(at(file, std::min(i, lines.size() - 1)), process_cut, "capture the whole output of `nvidia-smi`");
    return c;
}

// ---- -q -------------------------------------------------------------------------------------

// nvidia-smi -q indents by 4 spaces a level and pads each key with spaces to its ' : '.
constexpr std::size_t kQueryIndentStep = 4;

// A -q line whose spaces were turned into tabs on the way (some copy-paste paths do, 4 spaces to
// a tab), as nvidia-smi wrote it: a leading tab is one indent step (to the next tab stop, where
// spaces and tabs are mixed); one inside the line is padding, a space.
std::string untabbed(const std::string& line) {
    std::string out;
    std::size_t i = 0;
    for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i)
        out.append(line[i] == ' ' ? 1 : kQueryIndentStep - out.size() % kQueryIndentStep, ' ');
    for (; i < line.size(); ++i) out += line[i] == '\t' ? ' ' : line[i];
    return out;
}

Capture parse_query(const std::vector<std::string>& lines, const std::filesystem::path& file) {
    Capture c;
    c.format = Format::query;
    std::optional<std::string> driver, cuda;
    std::vector<std::string> path;  // section and key names by level
    std::map<std::size_t, std::size_t> memory_line;  // each GPU's last FB Memory Usage line, for check_memory
    std::optional<std::size_t> attached;  // "Attached GPUs : N", and its line
    std::size_t attached_line = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string l = untabbed(lines[i]);
        if (trim(l).empty() || l.find("NVSMI LOG") != std::string::npos) continue;
        const std::size_t indent = l.find_first_not_of(' '), level = indent / kQueryIndentStep;
        const auto colon = l.find(" : ");
        const std::string key = trim(colon == std::string::npos ? l : l.substr(0, colon)), value = colon == std::string::npos ? "" : trim(l.substr(colon + 3));
        if (level == 0 && key.rfind("GPU ", 0) == 0 && colon == std::string::npos) {
            c.gpus.push_back({}), c.gpus.back().driver_version = driver, c.gpus.back().cuda_version = cuda;
            path.clear();
            continue;
        }
        path.resize(level);
        path.push_back(key);
        if (level == 0) {
            if (key == "Driver Version") driver = text(value);
            if (key == "CUDA Version") cuda = text(value);
            if (key == "Attached GPUs") {
                const auto n = number(value);
                if (!n || *n < 0 || *n != std::floor(*n))
                    throw InputError(at(file, i), fmt::format("'Attached GPUs' is '{}', not a count of GPUs", excerpt(value, 40)),
                                     "pass the file `nvidia-smi -q` wrote, unedited");
                attached = static_cast<std::size_t>(*n), attached_line = i;
            }
            continue;
        }
        if (c.gpus.empty()) throw InputError(at(file, i), "a GPU field before any 'GPU <bus id>' line: not nvidia-smi -q output, or cut at its top");
        Gpu& g = c.gpus.back();
        std::string p;
        for (std::size_t k = 1; k < path.size(); ++k) p += (k > 1 ? "/" : "") + path[k];
        auto read = [&](const char* unit, Range range) { return reading(value, file, i, "'" + key + "' (" + p + ")", unit, range); };
        if (p == "Product Name") g.name = text(value);
        else if (p == "Performance State") g.pstate = text(value);
        else if (p == "FB Memory Usage/Total") g.memory_total_mib = read("MiB", Range::non_negative), memory_line[c.gpus.size() - 1] = i;
        else if (p == "FB Memory Usage/Used") g.memory_used_mib = read("MiB", Range::non_negative), memory_line[c.gpus.size() - 1] = i;
        else if (p == "FB Memory Usage/Reserved") g.memory_reserved_mib = read("MiB", Range::non_negative), memory_line[c.gpus.size() - 1] = i;
        else if (p == "Utilization/GPU" || p == "Utilization/Gpu") g.utilization_gpu_pct = read("%", Range::percent);
        else if (p == "Utilization/Memory") g.utilization_memory_pct = read("%", Range::percent);
        else if (p == "Utilization/Encoder") g.utilization_encoder_pct = read("%", Range::percent);
        else if (p == "Utilization/Decoder") g.utilization_decoder_pct = read("%", Range::percent);
        else if (p == "Temperature/GPU Current Temp") g.temperature_c = read("C", Range::any);
        else if (p == "GPU Power Readings/Average Power Draw") g.power_draw_average_w = read("W", Range::non_negative);
        else if (p == "GPU Power Readings/Instantaneous Power Draw") g.power_draw_instant_w = read("W", Range::non_negative);
        else if (p == "GPU Power Readings/Power Draw" || p == "Power Readings/Power Draw") g.power_draw_w = read("W", Range::non_negative);
        else if (p == "GPU Power Readings/Current Power Limit" || p == "Power Readings/Power Limit" || p == "Power Readings/Current Power Limit")
            g.power_limit_w = read("W", Range::non_negative);
        else if (p == "Clocks/SM") g.sm_clock_mhz = read("MHz", Range::non_negative);
        else if (p == "Clocks/Memory") g.memory_clock_mhz = read("MHz", Range::non_negative);
        else if (p == "Processes") g.processes_listed = true;
        else if (p == "Processes/Process ID") g.processes.push_back({pid(value), "", {}});
        else if (p == "Processes/Process ID/Name" && !g.processes.empty()) g.processes.back().name = value;
        else if (p == "Processes/Process ID/Used GPU Memory" && !g.processes.empty()) g.processes.back().used_mib = read("MiB", Range::non_negative);
    }
    for (const auto& [gpu, line] : memory_line) check_memory(c.gpus[gpu], file, line);
    if (c.gpus.empty()) throw InputError(file.string(), "nvidia-smi -q output with no 'GPU <bus id>' section", "capture the whole output of `nvidia-smi -q`");
    // More sections than the GPUs nvidia-smi counted were not written by it (fewer are `-q -i`'s
    // one GPU of several): a layout misread would otherwise show GPUs that do not exist.
    if (attached && c.gpus.size() > *attached)
        throw InputError(at(file, attached_line), fmt::format("{} 'GPU <bus id>' sections where 'Attached GPUs' counts {}: the capture is edited, "
                                                              "or its indentation is not nvidia-smi's 4 spaces a level", c.gpus.size(), *attached),
                         "pass the file `nvidia-smi -q` wrote, unedited");
    // A whole `nvidia-smi -q` section opens with the Product Name and ends with the Processes: one
    // with the first and not the last was cut short, and lost readings with them. (`-q -d MEMORY`
    // and the like print neither; `-q -i 0` prints one GPU of several, so "Attached GPUs" is only
    // a most, checked above, not a count the sections must reach.)
    if (c.gpus.back().name && !c.gpus.back().processes_listed)
        throw InputError(at(file, lines.size() - 1), "the capture ends inside GPU " + std::to_string(c.gpus.size() - 1) +
                                                         "'s section, before its Processes (the last part of each GPU's -q output): it is cut short",
                         "capture the whole output of `nvidia-smi -q`");
    // Newer drivers report an average and an instantaneous draw; "power draw" (the table's and
    // the CSV's power.draw) is the average.
    for (auto& g : c.gpus)
        if (!g.power_draw_w) g.power_draw_w = g.power_draw_average_w;
    return c;
}

// ---- --query-gpu CSV ------------------------------------------------------------------------

std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : line) {
        if (ch == ',') out.push_back(trim(cur)), cur.clear();
        else cur += ch;
    }
    out.push_back(trim(cur));
    return out;
}

}  // namespace

// "power.draw [W]" -> "power.draw"; nvidia-smi's aliases to one name.
std::string field_name(const std::string& header) {
    std::string f = trim(header.substr(0, header.find(" [")));
    static const std::map<std::string, std::string> alias = {{"clocks.current.sm", "clocks.sm"}, {"clocks.current.memory", "clocks.mem"},
                                                             {"gpu_name", "name"}, {"temperature.gpu", "temperature.gpu"}};
    auto a = alias.find(f);
    return a == alias.end() ? f : a->second;
}

const std::vector<std::string>& csv_fields_read() {
    // The names parse_csv reads below, as field_name gives them: kept beside it.
    static const std::vector<std::string> read = {
        "name", "driver_version", "pstate", "temperature.gpu", "power.draw", "power.draw.average", "power.draw.instant",
        "power.limit", "enforced.power.limit", "memory.used", "memory.total", "memory.reserved", "utilization.gpu",
        "utilization.memory", "utilization.encoder", "utilization.decoder", "clocks.sm", "clocks.mem"};
    return read;
}

namespace {

// A header cell: a field name (letters, digits, '_' and '.', not starting with a digit), with
// its unit in brackets unless captured with 'nounits'. No value of a GPU line looks like that
// (numbers start with a digit; names, N/A and dates hold spaces or '/').
bool is_field_name(const std::string& f) {
    return !f.empty() && std::isalpha(static_cast<unsigned char>(f[0])) &&
           std::all_of(f.begin(), f.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_'; });
}

// Why a line holds another count of values than its columns: fewer, cut short; more, a value
// with a separator in it or another capture's line; either, a --columns list that is not the query's.
std::string miscount_cause(std::size_t values, std::size_t columns, bool named_by_option) {
    if (named_by_option) return values < columns ? "a line cut short, or a list longer than the query's" : "a list shorter than the query's";
    return values < columns ? "a line cut short" : "more values than columns: a line of another capture, or two lines run together";
}

Capture parse_csv(const std::vector<std::string>& lines, const std::filesystem::path& file, const std::vector<std::string>& columns) {
    Capture c;
    c.format = Format::csv;
    std::size_t i = 0;
    while (i < lines.size() && trim(lines[i]).empty()) ++i;
    std::vector<std::string> names;
    bool named_by_option = false;  // the names are --columns', not a header's
    const auto first = csv_fields(lines[i]);
    // nvidia-smi ends no line with a comma: a header of field names whose last is empty was cut
    // just after one (its values would be no names, so it is no headerless line to name with --columns).
    if (first.size() > 1 && first.back().empty() &&
        std::all_of(first.begin(), first.end() - 1, [](const std::string& f) { return is_field_name(field_name(f)); }))
        throw InputError(at(file, i), "the CSV's header line ends in a comma (an empty last column name): the capture is cut short in its header",
                         "capture it again, whole: `nvidia-smi --query-gpu=FIELDS --format=csv > FILE`");
    // With --columns given, a first line of plain words (`P0, Enabled`) is values, not a header:
    // a header names a field lab knows, or one with a dot or a [unit] (`persistence_mode` alone
    // could be either, and the list says which the student captured).
    const auto& known = csv_fields_read();
    const bool names_a_field = std::any_of(first.begin(), first.end(), [&](const std::string& f) {
        const std::string n = field_name(f);
        return f.find(" [") != std::string::npos || n.find('.') != std::string::npos || std::find(known.begin(), known.end(), n) != known.end();
    });
    if (std::all_of(first.begin(), first.end(), [](const std::string& f) { return is_field_name(field_name(f)); }) &&
        (columns.empty() || names_a_field)) {
        for (const auto& f : first) names.push_back(field_name(f));
        // --columns names a headerless CSV's fields; with a header of its own, a list that names other
        // fields would be read past without a word, and the student would think it was used.
        std::vector<std::string> given;
        for (const auto& f : columns) given.push_back(field_name(f));
        if (!columns.empty() && given != names)
            throw InputError(at(file, i), fmt::format("the CSV names its own columns in its header line ({}), and --columns names others ({})",
                                                      fmt::join(names, ","), fmt::join(given, ",")),
                             "leave --columns out: it names the columns of a CSV captured with 'noheader'");
        ++i;
    } else if (!columns.empty()) {
        for (const auto& f : columns) names.push_back(field_name(f));
        named_by_option = true;
    } else {
        throw InputError(at(file, i), "a --query-gpu CSV without a header line: its columns are unnamed",
                         "name them with --columns (the list given to --query-gpu), or capture without 'noheader'");
    }
    for (; i < lines.size(); ++i) {
        if (trim(lines[i]).empty()) continue;
        const auto v = csv_fields(lines[i]);
        if (v.size() != names.size())
            throw InputError(at(file, i), fmt::format("{} values where {} names {} columns ({})", v.size(), named_by_option ? "--columns" : "the header",
                                                      names.size(), miscount_cause(v.size(), names.size(), named_by_option)),
                             named_by_option ? "give --columns the list given to --query-gpu, in its order"
                                             : "capture it again, whole, from one query: `nvidia-smi --query-gpu=FIELDS --format=csv > FILE`");
        std::map<std::string, std::string> f;
        for (std::size_t k = 0; k < names.size(); ++k) f[names[k]] = v[k];
        auto get = [&](const char* k) { return f.count(k) ? f[k] : std::string(); };
        auto num = [&](const char* k, const char* unit, Range range) { return reading(get(k), file, i, k, unit, range); };
        Gpu g;
        g.name = text(get("name")), g.driver_version = text(get("driver_version")), g.pstate = text(get("pstate"));
        g.temperature_c = num("temperature.gpu", "", Range::any);
        g.power_draw_w = num("power.draw", "W", Range::non_negative), g.power_draw_average_w = num("power.draw.average", "W", Range::non_negative);
        g.power_draw_instant_w = num("power.draw.instant", "W", Range::non_negative);
        g.power_limit_w = num("power.limit", "W", Range::non_negative);
        if (const auto enforced = num("enforced.power.limit", "W", Range::non_negative); !g.power_limit_w) g.power_limit_w = enforced;
        g.memory_used_mib = num("memory.used", "MiB", Range::non_negative), g.memory_total_mib = num("memory.total", "MiB", Range::non_negative);
        g.memory_reserved_mib = num("memory.reserved", "MiB", Range::non_negative);
        g.utilization_gpu_pct = num("utilization.gpu", "%", Range::percent), g.utilization_memory_pct = num("utilization.memory", "%", Range::percent);
        g.utilization_encoder_pct = num("utilization.encoder", "%", Range::percent);
        g.utilization_decoder_pct = num("utilization.decoder", "%", Range::percent);
        g.sm_clock_mhz = num("clocks.sm", "MHz", Range::non_negative), g.memory_clock_mhz = num("clocks.mem", "MHz", Range::non_negative);
        check_memory(g, file, i);
        c.gpus.push_back(g);
    }
    if (c.gpus.empty()) throw InputError(file.string(), "a --query-gpu CSV with a header and no GPU line", "capture it again: each GPU writes one line");
    return c;
}

// ---- dmon -----------------------------------------------------------------------------------

Capture parse_dmon(const std::vector<std::string>& lines, const std::filesystem::path& file) {
    Capture c;
    c.format = Format::dmon;
    std::vector<std::string> names;
    // `dmon -o DT` (or -o D, -o T) puts a date and a time before the GPU's columns: a sample's
    // when, not a reading to average, so they are read past.
    auto stamp = [](const std::string& name) { return name == "Date" || name == "Time"; };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string t = trim(lines[i]);
        if (t.empty()) continue;
        if (t[0] == '#') {
            auto w = words(t.substr(1));
            if (names.empty()) {
                names = w;
                for (const auto& n : w)
                    if (!stamp(n)) c.columns.push_back(n);
            } else if (c.units.empty()) {
                for (std::size_t k = 0; k < w.size() && k < names.size(); ++k)
                    if (!stamp(names[k])) c.units.push_back(w[k]);
            }
            continue;
        }
        const auto w = words(t);
        if (names.empty()) throw InputError(at(file, i), "a dmon sample before the '# gpu ...' header line");
        if (w.size() != names.size())
            throw InputError(at(file, i), fmt::format("{} values where the header names {} columns ({})", w.size(), names.size(),
                                                      miscount_cause(w.size(), names.size(), false)),
                             "capture it again, whole: `nvidia-smi dmon -c N > FILE`");
        Sample s;
        for (std::size_t k = 0, unit = 0; k < w.size(); ++k) {
            if (stamp(names[k])) continue;
            // The units line says what each column holds: a % column is a percentage; W, MHz and
            // MiB are never negative; the rest (temperatures, the index, columns lab does not
            // know) are any number.
            const std::string u = unit < c.units.size() ? c.units[unit] : "";
            ++unit;
            const Range range = u == "%" ? Range::percent : (u == "W" || u == "MHz" || u == "MiB" || u == "Idx") ? Range::non_negative : Range::any;
            s.columns.push_back({names[k], reading(w[k], file, i, "dmon's " + names[k] + " column", "", range)});
        }
        c.samples.push_back(s);
    }
    if (c.samples.empty()) throw InputError(file.string(), "dmon output with no sample lines", "capture with `nvidia-smi dmon -c N`");
    return c;
}

}  // namespace

Capture read(const std::filesystem::path& file, const std::vector<std::string>& csv_columns) {
    return parse(read_input_file(file, "the capture", kMaxCaptureBytes, "check the path"), file,
                 csv_columns);
}

Capture parse(const std::string& bytes, const std::filesystem::path& file, const std::vector<std::string>& csv_columns) {
    // A byte-order mark would stand before a CSV's header or dmon's '#'; UTF-16 (PowerShell 5's
    // `>`) hides every marker behind NUL bytes.
    const std::string text_in = utf8_text(bytes, file);
    const auto lines = lines_of(text_in);
    std::string first;
    for (const auto& l : lines)
        if (!trim(l).empty()) { first = trim(l); break; }
    if (text_in.find("NVSMI LOG") != std::string::npos) return parse_query(lines, file);
    if (text_in.find("NVIDIA-SMI ") != std::string::npos && text_in.find("+--") != std::string::npos) return parse_table(lines, file);
    // dmon's header: '# gpu pwr ...', or with -o DT '#Date Time gpu pwr ...'.
    if (!first.empty() && first[0] == '#') {
        const auto head = words(first.substr(1));
        if (std::find(head.begin(), head.end(), "gpu") != head.end()) return parse_dmon(lines, file);
    }
    if (std::count(first.begin(), first.end(), ',') >= 1 && first.find('|') == std::string::npos) return parse_csv(lines, file, csv_columns);
    throw InputError(file.string(), "not an nvidia-smi capture: expected its default table (an 'NVIDIA-SMI' header), -q output "
                                    "('==NVSMI LOG=='), a --query-gpu CSV (comma-separated values) or dmon output (a '# gpu' header)",
                     "pass the file nvidia-smi wrote, unedited");
}

std::vector<DmonGpu> dmon_gpus(const Capture& c) {
    struct Sums {
        std::size_t lines = 0;
        std::vector<std::pair<double, int>> by_column;  // sum and count of each column's values
    };
    std::map<std::optional<double>, Sums> gpus;  // by index; an absent one sorts first
    for (const auto& s : c.samples) {
        std::optional<double> index;
        for (const auto& [k, v] : s.columns)
            if (k == "gpu") index = v;
        Sums& g = gpus[index];
        ++g.lines;
        g.by_column.resize(s.columns.size());
        for (std::size_t k = 0; k < s.columns.size(); ++k)
            if (const auto& v = s.columns[k].second) g.by_column[k].first += *v, ++g.by_column[k].second;
    }
    std::vector<DmonGpu> out;
    for (const auto& [index, sums] : gpus) {
        DmonGpu g{.index = index, .samples = sums.lines, .means = {}};
        for (std::size_t k = 0; k < c.columns.size() && k < sums.by_column.size(); ++k) {
            if (c.columns[k] == "gpu") continue;
            const auto& [sum, n] = sums.by_column[k];
            g.means.push_back({c.columns[k], n ? std::optional<double>(sum / n) : std::nullopt});
        }
        out.push_back(g);
    }
    return out;
}

}  // namespace lab::smi
