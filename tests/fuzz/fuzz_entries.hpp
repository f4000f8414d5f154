// The entry point the CLI uses for each kind of file lab is handed, by fuzz target name: the
// libFuzzer targets (fuzz_<name>.cpp) call them, and the normal test suite replays every saved
// finding through them (tests/grader/test_fuzz_regressions.cpp), so both exercise what ships.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "answers.hpp"
#include "ceilings_cache.hpp"
#include "course.hpp"
#include "input_file.hpp"
#include "model_config.hpp"
#include "run_record.hpp"
#include "safetensors.hpp"
#include "smi_capture.hpp"
#include "spec.hpp"
#include "trace_summary.hpp"

namespace lab_fuzz {

using Entry = std::function<void(const std::filesystem::path&)>;

inline const std::map<std::string, Entry>& entries() {
    static const std::map<std::string, Entry> e = {
        {"run_record", [](const auto& f) { lab::record::raw_run_from_record(lab::record::read_record(f)); }},
        {"answers", [](const auto& f) { lab::grader::load_answers(f); }},
        {"grading_spec", [](const auto& f) { lab::grader::load_spec(f, false, "after_due_date"); }},
        {"course", [](const auto& f) { lab::load_course(f); }},
        {"model_config", [](const auto& f) { lab::read_model_config(f); }},
        {"safetensors", [](const auto& f) { lab::safetensors::read_file(f); }},
        {"trace", [](const auto& f) { lab::trace::read(f); }},
        {"trace_gz", [](const auto& f) { lab::trace::read(f); }},
        {"smi", [](const auto& f) { lab::smi::read(f); }},
        {"ceilings_cache",
         [](const auto& f) {
             std::string problem;
             lab::load_cached_ceilings(f, lab::DeviceFacts{}, &problem);
         }},
    };
    return e;
}

// The file name suffix each kind is read under (the trace reader picks gzip by ".gz").
inline std::string suffix(const std::string& target) {
    static const std::map<std::string, std::string> s = {
        {"run_record", ".json"}, {"answers", ".yaml"}, {"grading_spec", ".yaml"}, {"course", ".yaml"},
        {"model_config", ".json"}, {"safetensors", ".safetensors"}, {"trace", ".json"}, {"trace_gz", ".json.gz"},
        {"smi", ".txt"}, {"ceilings_cache", ".json"}};
    return s.at(target);
}

}  // namespace lab_fuzz
