// The examples a unit message gives ("expected a size in bytes such as 9 GiB or 500 MB") are read
// by a student whose answer was misread: an example that is (or is close to) an answer a lesson
// asks tells them a value, or misleads them. Each example, against every number a shipped grading
// spec expects, over the per-student variants of each lesson's fixture run.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "grading_fixtures.hpp"
#include "run_record.hpp"
#include "spec.hpp"
#include "units.hpp"

namespace fs = std::filesystem;
using namespace lab_test::grading;

namespace {

// The examples of the dimension of `unit`, as the message for an empty answer gives them.
std::vector<std::string> examples_for(const std::string& unit) {
    std::string message;
    try {
        lab::units::parse_claim("", unit);
    } catch (const lab::units::UnitError& e) {
        message = e.what();
    }
    const std::string lead = "such as ";
    const auto at = message.find(lead);
    REQUIRE(at != std::string::npos);
    std::vector<std::string> out;
    std::string rest = message.substr(at + lead.size());
    for (std::size_t or_at; (or_at = rest.find(" or ")) != std::string::npos; rest.erase(0, or_at + 4)) out.push_back(rest.substr(0, or_at));
    out.push_back(rest);
    return out;
}

fs::path fixture_of(const std::string& id) {
    for (const auto& f : fs::directory_iterator(lab_test::source_root() / "tests/fixtures/runs/cpu")) {
        const std::string name = f.path().filename().string();
        if (name.rfind(id + "-quick", 0) == 0 && name.find("before") == std::string::npos) return f.path();
    }
    return {};
}

}  // namespace

TEST_CASE("no example in a unit message is within 5% of an answer a shipped spec expects", "[grading]") {
    int compared = 0;
    for (const auto& entry : fs::directory_iterator(lab_test::source_root() / "configs/grading")) {
        if (entry.path().extension() != ".yaml") continue;
        const lab::grader::GradingSpec spec = lab::grader::load_spec(entry.path(), true, "never");
        const fs::path fixture = fixture_of(spec.lesson);
        REQUIRE(!fixture.empty());
        lab::RawRun raw = lab::record::raw_run_from_record(lab::record::read_record(fixture));
        // The per-student variants: every lesson draws its questions from the seed's low digits.
        std::vector<lab::Derivation> variants;
        for (std::uint64_t seed = 0; seed < 300; ++seed) {
            raw.options.seed = seed;
            variants.push_back(lesson(spec.lesson).lesson->derivation(raw));
        }
        for (const auto& q : spec.questions) {
            if (q.type != lab::grader::QuestionType::number && q.type != lab::grader::QuestionType::integer) continue;
            std::vector<double> answers;
            if (q.expected.value) answers.push_back(lab::units::parse_claim(*q.expected.value, q.unit).value);
            for (const auto& d : variants)
                if (const lab::MetricValue* m = d.find(q.expected.metric)) answers.push_back(m->number);
            const std::string unit = q.unit.empty() && !q.expected.metric.empty() && variants.front().find(q.expected.metric)
                                         ? variants.front().find(q.expected.metric)->unit
                                         : q.unit;
            for (const auto& example : examples_for(unit)) {
                const double v = lab::units::parse_claim(example, unit).value;
                for (double a : answers) {
                    INFO(spec.lesson << " " << q.id << ": the example '" << example << "' against the answer " << a);
                    CHECK_FALSE(std::fabs(v - a) <= 0.05 * std::fabs(a));
                    ++compared;
                }
            }
        }
    }
    CHECK(compared > 1000);
}
