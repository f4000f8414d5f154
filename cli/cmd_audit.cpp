// `lab audit DIR --sample 10%`: re-measure a random sample of a class's submissions (and every
// flagged one) on this machine and report which reproduce (audit.hpp). Each submission is re-run
// as it was made (its student, seed, token, quick flag, device kind), in lab's child process like
// any run; one that cannot be re-run is reported, never fatal to the audit.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <random>
#include <set>

#include "atomic_file.hpp"
#include "audit.hpp"
#include "batch.hpp"
#include "commands.hpp"
#include "course_token.hpp"
#include "errors.hpp"
#include "lesson_session.hpp"
#include "options.hpp"
#include "progress_bar.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

// "10%" of `n` (at least one when there is any), or a count ("5").
std::size_t sample_size(const std::string& text, std::size_t n) {
    try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        const bool percent = used < text.size() && text.substr(used) == "%";
        if ((used != text.size() && !percent) || !(v >= 0) || (percent && v > 100)) throw std::invalid_argument(text);
        const double k = percent ? std::ceil(v / 100 * n) : std::floor(v);
        return std::min(n, static_cast<std::size_t>(k));
    } catch (const std::exception&) {
        throw UsageError("lab audit: --sample takes a share such as 10% or a count such as 5, not '" + text + "'");
    }
}

struct Audited {
    std::string folder, student, lesson, why_sampled, verdict, detail;
    AuditComparison comparison;
    double seconds = 0;
};

}  // namespace

int cmd_audit(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("dir", po::value<std::string>()->required(), "one folder per student, as for lab grade")(
        "sample", po::value<std::string>()->default_value("10%"), "how many to re-measure: a share (10%) or a count (5)")(
        "seed", po::value<unsigned>(), "the sample's random seed (default: a fresh one, printed)")(
        "tolerance", po::value<double>()->default_value(kAuditTolerance), "x/÷ factor a median may differ by (at least 1.05)")(
        "key", po::value<std::string>()->default_value(""), "the course key (default $LAB_COURSE_KEY), as for lab grade")(
        "out", po::value<std::string>(), "write the audit as JSON here")("json", "print the audit as JSON");
    po::positional_options_description pos;
    pos.add("dir", 1);
    po::variables_map vm;
    if (!parse("audit", "lab audit SUBMISSIONS_DIR [--sample 10%|N] [--seed N] [--tolerance F] [--key FILE] [--out audit.json] [--json]",
               args, opts, pos, vm))
        return 0;
    const double tolerance = vm["tolerance"].as<double>();
    if (!(tolerance >= 1.05)) throw UsageError("lab audit: --tolerance is a factor of at least 1.05 (1.5 means within x/÷ 1.5)");
    std::optional<CourseKey> key;
    if (auto file = configured_key_file(vm["key"].as<std::string>())) key = load_course_key(*file);
    grader::GradingContext ctx(key);
    stderr_progress().start("reading the submissions", 0);
    grader::BatchResult batch = grader::grade_directory(ctx, vm["dir"].as<std::string>(), [](const std::string& folder, std::size_t done, std::size_t total) {
        stderr_progress().update(folder, done, total);
    });
    stderr_progress().clear();

    // The sample: every flagged submission, and a random share of the other readable runs.
    std::vector<std::size_t> readable, chosen;
    std::map<std::size_t, std::string> why;
    for (std::size_t i = 0; i < batch.entries.size(); ++i) {
        const auto& e = batch.entries[i];
        if (e.run_file.empty() || e.lesson.empty()) continue;
        if (!e.flags.empty()) {
            std::string f;
            for (const auto& x : e.flags) f += (f.empty() ? "" : " ") + x;
            why[i] = "flagged: " + f;
        } else {
            readable.push_back(i);
        }
    }
    const unsigned seed = vm.count("seed") ? vm["seed"].as<unsigned>() : std::random_device{}();
    std::mt19937 rng(seed);
    std::shuffle(readable.begin(), readable.end(), rng);
    const std::size_t k = sample_size(vm["sample"].as<std::string>(), readable.size() + why.size());
    for (std::size_t i = 0; i < readable.size() && i < k; ++i) why[readable[i]] = "sampled";
    for (const auto& [i, w] : why) chosen.push_back(i);

    std::vector<Audited> results;
    int n = 0;
    for (std::size_t i : chosen) {
        const auto& e = batch.entries[i];
        Audited a{e.folder, e.student, e.lesson, why[i], "", "", {}, 0};
        // One line per re-measure (each run draws its own bar below it), with the audit's estimate.
        const double spent = std::accumulate(results.begin(), results.end(), 0.0, [](double s, const Audited& x) { return s + x.seconds; });
        std::cerr << fmt::format("audit {}/{}: re-measuring {} ({}, lesson {}){}\n", ++n, chosen.size(), e.folder, e.student, e.lesson,
                                 results.empty() ? "" : fmt::format(", about {:.0f} s left", spent / results.size() * (chosen.size() - results.size())));
        const auto t0 = std::chrono::steady_clock::now();
        try {
            nlohmann::json record = record::read_record(e.run_file);
            RawRun submitted = record::raw_run_from_record(record);
            LessonRequest req;
            req.id = submitted.lesson_id;
            req.device = to_string(submitted.device_kind);
            req.replay = submitted.options;
            req.replay_token = record.value("token", "");
            LessonOutcome again = run_lesson(req);
            a.comparison = compare_runs(submitted, again.raw, tolerance);
            if (std::string other = hardware_mismatch(submitted, again.raw); !other.empty()) {
                a.verdict = "other_hardware";
                a.detail = other + ": an audit needs the hardware the run was made on";
            } else {
                a.verdict = a.comparison.reproduces ? "reproduces" : "does_not_reproduce";
                for (const auto& p : a.comparison.problems) a.detail += (a.detail.empty() ? "" : "; ") + p;
            }
        } catch (const std::exception& ex) {
            a.verdict = "not_audited";
            a.detail = ex.what();
            std::replace(a.detail.begin(), a.detail.end(), '\n', ' ');
        }
        a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        results.push_back(std::move(a));
    }

    int reproduce = 0, not_reproduce = 0, other = 0;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& a : results) {
        reproduce += a.verdict == "reproduces";
        not_reproduce += a.verdict == "does_not_reproduce";
        other += a.verdict == "other_hardware" || a.verdict == "not_audited";
        nlohmann::json cmp = nlohmann::json::array();
        for (const auto& r : a.comparison.rows)
            cmp.push_back({{"what", r.what}, {"submitted", r.submitted}, {"audited", r.audited}, {"ratio", r.ratio},
                           {"allowed", r.allowed}, {"within", r.within}});
        rows.push_back({{"folder", a.folder}, {"student", a.student}, {"lesson", a.lesson}, {"why", a.why_sampled},
                        {"verdict", a.verdict}, {"detail", a.detail}, {"seconds", a.seconds}, {"comparison", cmp}});
    }
    const nlohmann::json doc = {{"submissions", batch.entries.size()}, {"audited", results.size()}, {"seed", seed},
                                {"tolerance", tolerance},           {"reproduce", reproduce}, {"do_not_reproduce", not_reproduce},
                                {"not_audited", other},             {"results", rows}};
    if (vm.count("out")) write_file_atomically(vm["out"].as<std::string>(), doc.dump(2) + "\n");
    if (vm.count("json")) {
        std::cout << doc.dump(2) << "\n";
    } else {
        std::cout << fmt::format("audited {} of {} submissions (sample seed {}; medians within x/÷ {:g} or their noise)\n\n",
                                 results.size(), batch.entries.size(), seed, tolerance);
        std::cout << fmt::format("{:<20} {:<16} {:<20} {:<28} {}\n", "folder", "student", "verdict", "why audited", "detail");
        for (const auto& a : results) {
            std::string detail = a.detail;
            if (a.verdict == "reproduces")
                if (const AuditRow* w = a.comparison.worst())
                    detail = fmt::format("largest difference: {} {:.3g}x", w->what, w->ratio);
            std::cout << fmt::format("{:<20} {:<16} {:<20} {:<28} {}\n", a.folder, a.student, a.verdict, a.why_sampled, detail);
        }
        std::cout << fmt::format("\n{} reproduce, {} do not, {} could not be audited here\n", reproduce, not_reproduce, other);
    }
    return not_reproduce > 0 ? 1 : 0;
}

}  // namespace lab::cli
