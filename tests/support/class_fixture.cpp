// A class of submissions for the class page's tests (see class_fixture.hpp).
#include "class_fixture.hpp"

#include <sstream>

#include <nlohmann/json.hpp>

#include "course.hpp"
#include "plugin_loader.hpp"
#include "run_record.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lab_test {

namespace {

const lab::LoadedLesson& lesson_02_05() {
    static const lab::LoadedLesson l = lab::load_lesson(build_root() / "labs/02_05/lab_02_05.so");
    return l;
}

json fixture(const std::string& name) { return lab::record::read_record(source_root() / "tests/fixtures/runs/cpu" / name); }

const lab::MetricValue& metric(const lab::Derivation& d, const std::string& name) {
    const lab::MetricValue* m = d.find(name);
    if (!m) throw std::runtime_error("the 02.05 fixture derives no " + name);
    return *m;
}

// The record's stored metrics made what its measurements now give, then sealed: what `lab run`
// would have written.
lab::Derivation reseal(json& record) {
    const lab::Derivation d = lesson_02_05().lesson->derivation(lab::record::raw_run_from_record(record));
    for (auto& [name, stored] : record["metrics"].items())
        if (const lab::MetricValue* m = d.find(name)) stored["value"] = lab::record::to_json(*m)["value"];
    lab::record::seal(record);
    return d;
}

void restudent(json& record, const std::string& student) {
    const lab::CourseConfig course = lab::load_course(source_root() / "configs/course.yaml");
    record["student"] = student;
    record["seed"] = lab::student_seed(course, record["lesson"]["id"].get<std::string>(), student).hex;
}

// The same lesson on a machine half as fast: every time doubled, every rate ceiling halved.
void slow_down(json& record, const std::string& device_name) {
    record["device"]["facts"]["name"] = device_name;
    auto slower = [](json& m) {
        for (const char* k : {"median", "min", "max", "mean", "stddev", "total"}) m["time_s"][k] = m["time_s"][k].get<double>() * 2;
    };
    for (auto& w : record["workloads"]) {
        slower(w);
        w.erase("derived");
    }
    for (auto& cm : record["device"]["ceiling_measurements"])
        if (cm.contains("measurement")) slower(cm["measurement"]);
    json& c = record["device"]["ceilings"];
    for (const char* table : {"flops_per_s", "bandwidth_bytes_per_s"})
        for (auto& [k, v] : c[table].items()) v["value"] = v["value"].get<double>() / 2;
    c["launch_s"]["value"] = c["launch_s"]["value"].get<double>() * 2;
}

std::string num(double v) {
    std::ostringstream s;
    s.precision(5);
    s << v;
    return s.str();
}

std::string yaml_quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// Every question of the test spec (tests/fixtures/grading/02.05.yaml) answered from the run's
// own derivation; the ridge scaled by `ridge_factor`.
std::string answers_02_05(const json& record, const lab::Derivation& d, double ridge_factor = 1.0) {
    std::string s = "lesson: \"02.05\"\nstudent: " + yaml_quoted(record["student"].get<std::string>()) + "\nrun: \"" +
                    record["digest"].get<std::string>() + "\"\nanswers:\n";
    s += "  ridge_point: " + num(metric(d, "ridge_point").number * ridge_factor) + " FLOP/B\n";
    s += "  attainable: " + num(metric(d, "attainable_flops_per_s").number / 1e12) + " TFLOP/s\n";
    s += "  triad_side: bandwidth bound\n";
    s += "  fma_few_side: " + metric(d, "fma_few.predicted_regime").text + "\n";
    s += "  fma_many_side: " + metric(d, "fma_many.predicted_regime").text + "\n";
    s += "  sgemm_side: " + metric(d, "sgemm.predicted_regime").text + "\n";
    s += "  triad_roof_fraction: " + num(100 * metric(d, "triad.roof_fraction").number) + "%\n";
    return s;
}

void hand_in(const fs::path& folder, const json& record, const std::string& answers) {
    fs::create_directories(folder);
    write_file(folder / "run.json", record.dump(2));
    if (!answers.empty()) write_file(folder / "answers.yaml", answers);
}

}  // namespace

ClassFixture::ClassFixture() : submissions_(dir_ / "submissions") {
    fs::copy(source_root() / "configs", dir_ / "configs", fs::copy_options::recursive);
    fs::copy_file(source_root() / "tests/fixtures/grading/02.05.yaml", dir_ / "configs/grading/02.05.yaml",
                  fs::copy_options::overwrite_existing);

    json alice = fixture("02.05-quick-reveal.json");
    hand_in(submissions_ / "alice_1234", alice, answers_02_05(alice, reseal(alice)));

    json bob = alice;
    restudent(bob, "bob");
    hand_in(submissions_ / "bob_5678", bob, answers_02_05(bob, reseal(bob), 2.0));

    json erin = alice;
    restudent(erin, "erin");
    slow_down(erin, "Laptop <i>i7</i> & co");
    hand_in(submissions_ / "erin_3456", erin, answers_02_05(erin, reseal(erin)));

    json mallory = alice;
    restudent(mallory, kScriptStudent);
    hand_in(submissions_ / "mallory", mallory, answers_02_05(mallory, reseal(mallory)));

    json frank = fixture("02.03-quick-reveal.json");
    restudent(frank, "frank");
    lab::record::seal(frank);
    hand_in(submissions_ / "frank_7890", frank,
            "lesson: \"02.03\"\nstudent: frank\nrun: \"" + frank["digest"].get<std::string>() + "\"\nanswers: {}\n");

    fs::create_directories(submissions_ / "dave_1111");
    write_file(submissions_ / "dave_1111" / "answers.yaml", "lesson: \"02.05\"\nstudent: dave\nrun: \"sha256:00\"\nanswers: {}\n");
}

std::map<std::string, std::string> ClassFixture::env() const { return {{"LAB_CONFIG_DIR", (dir_ / "configs").string()}}; }

}  // namespace lab_test
