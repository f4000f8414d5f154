// make_submissions: builds N student submission folders from one recorded run, for
// bench/grade_1000.sh. Each student gets:
//   - the run re-recorded under their own name and per-student seed (SHA-256 of course salt |
//     lesson | student, as `lab run --student` does), its times slowed by a per-student factor
//     (so every student's measurements differ and every rate stays under its roof), the stored
//     display values re-derived by the lesson plugin, and the record re-sealed with the
//     framework's own record::seal (the digest must match compute_digest byte for byte, so this
//     is C++ on purpose: Python's json.dumps formats floats differently from nlohmann's dump);
//   - an answers file of their own, written from their derived values, in the units students
//     use, mostly right, some partly right, wrong, blank or of the wrong dimension.
// A few folders are deliberately broken (a malformed answers file, an edited record) and a few
// pairs hand in identical measurements, as a real class would. File names vary: batch grading
// finds files by content.
//
// usage: make_submissions FIXTURE.json LESSON.so COURSE.yaml OUT_DIR N
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "course.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string num(double v) {
    std::ostringstream s;
    s.precision(5);
    s << v;
    return s.str();
}

const lab::MetricValue& metric(const lab::Derivation& d, const std::string& name) {
    if (const lab::MetricValue* m = d.find(name)) return *m;
    throw std::runtime_error("the derivation has no " + name);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::cerr << "usage: make_submissions FIXTURE.json LESSON.so COURSE.yaml OUT_DIR N\n";
        return 2;
    }
    try {
        const json fixture = lab::record::read_record(argv[1]);
        const lab::LoadedLesson lesson = lab::load_lesson(argv[2]);
        const lab::CourseConfig course = lab::load_course(argv[3]);
        const fs::path out = argv[4];
        const int n = std::stoi(argv[5]);
        const std::string lesson_id = fixture["lesson"]["id"].get<std::string>();
        if (lesson_id != "02.05") throw std::runtime_error("the answers written here are those of lesson 02.05");
        fs::create_directories(out);

        for (int i = 0; i < n; ++i) {
            const std::string student = "student" + std::to_string(1000 + i).substr(1);
            json rec = fixture;
            rec["student"] = student;
            rec["seed"] = lab::student_seed(course, lesson_id, student).hex;
            // Slower by up to ~10%, one factor per student; every 100th student hands in the
            // measurements of the student before (a duplicate for the report to find).
            const int twin = (i % 100 == 99) ? i - 1 : i;
            const double slower = 1.0 + 1e-4 * twin;
            for (auto& w : rec["workloads"])
                for (const char* k : {"median", "min", "max", "mean", "stddev", "total"})
                    if (w["time_s"].contains(k)) w["time_s"][k] = w["time_s"][k].get<double>() * slower;
            const lab::RawRun raw = lab::record::raw_run_from_record(rec);
            const lab::Derivation d = lesson.lesson->derive(raw);
            // The display copies a record carries, as `lab run` would have written them.
            if (rec.contains("metrics"))
                for (auto& [name, stored] : rec["metrics"].items())
                    if (const lab::MetricValue* m = d.find(name)) stored["value"] = lab::record::to_json(*m)["value"];
            for (auto& w : rec["workloads"])
                if (w.contains("derived"))
                    for (auto& [key, stored] : w["derived"].items())
                        if (const lab::MetricValue* m = d.find(w["name"].get<std::string>() + "." + key))
                            stored = lab::record::to_json(*m)["value"];
            lab::record::seal(rec);
            const std::string digest = rec["digest"].get<std::string>();
            if (i % 333 == 332) rec["workloads"][0]["time_s"]["median"] = 1.0;  // edited after sealing

            const double ridge = metric(d, "ridge_point").number;
            const double attainable = metric(d, "attainable_flops_per_s").number;
            const double fraction = metric(d, "triad.roof_fraction").number;
            std::string a = "# answers for lesson 02.05\nlesson: \"02.05\"\nstudent: \"" + student + "\"\nrun: \"" + digest +
                            "\"\nanswers:\n";
            a += "  ridge_point: " + num(i % 10 == 3 ? ridge * 1.1 : ridge) + (i % 2 ? " FLOP/B" : "") + "\n";
            if (i % 13 == 5) a += "  attainable:\n";
            else if (i % 17 == 6) a += "  attainable: " + num(attainable / 1e9) + " GB/s\n";
            else a += "  attainable: " + num(attainable / 1e12) + " TFLOP/s\n";
            a += std::string("  triad_side: ") + (i % 7 == 2 ? "compute_bound" : "bandwidth bound") + "\n";
            a += "  fma_few_side: " + metric(d, "fma_few.predicted_regime").text + "\n";
            a += "  fma_many_side: " + metric(d, "fma_many.predicted_regime").text + "\n";
            a += "  sgemm_side: " + metric(d, "sgemm.predicted_regime").text + "\n";
            a += "  triad_roof_fraction: " + num(100 * fraction + (i % 5 == 1 ? 6 : 1)) + "%\n";
            if (i % 250 == 249) a += "  oops: [unclosed\n";

            const fs::path dir = out / (student + "_" + std::to_string(7919 * (i + 1) % 100000));
            fs::create_directories(dir);
            const bool odd = i % 2;
            write(dir / (odd ? "measurements-" + std::to_string(i) + ".dat" : std::string("run.json")), rec.dump(odd ? -1 : 2));
            write(dir / (odd ? "my_answers.yml" : "answers.yaml"), a);
            if (i % 3 == 0) write(dir / "README.txt", "submitted from the lab machine\n");
        }
        std::cerr << "make_submissions: " << n << " folders under " << out.string() << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "make_submissions: " << e.what() << "\n";
        return 1;
    }
}
