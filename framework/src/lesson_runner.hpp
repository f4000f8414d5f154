// What the child process does (`lab __child REQUEST`): open the device (falling back to the CPU
// with a stated reason), obtain its ceilings (cache, else calibrate), run a lesson or report the
// device, and stream the raw results to the parent. The parent side, `execute`, starts that child
// and turns its messages into a ChildResult.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/lesson.hpp"
#include "measure_engine.hpp"

namespace lab {

struct ChildRequest {
    std::string action;          // "run" | "calibrate" | "device"
    std::string lesson_file;     // for "run"
    std::string device = "auto"; // auto | cpu | cuda | cuda:N
    int threads = 0;
    bool quick = false;
    RunOptions options;
    double lesson_budget_s = 60; // the lesson's wall-clock budget once calibration is done
    double timeout_s = 0;        // the hard limit for the lesson (0: budget x kBudgetSlack)
    std::string trace_file;      // "run": write a Chrome trace of the lesson here ("" = none)
    std::string trace_final_name;  // the name it will be renamed to (its .gz says: compress)
};

nlohmann::json to_json(const ChildRequest& r);
ChildRequest child_request_from_json(const nlohmann::json& j);

// Child side: returns the process exit code.
int child_main(const ChildRequest& request);

struct ChildResult {
    DeviceKind kind = DeviceKind::cpu;
    DeviceFacts facts;
    Ceilings ceilings;                                     // at the start of the run
    std::vector<CeilingMeasurement> ceiling_measurements;  // measured during it
    std::vector<Measurement> measurements;
    std::vector<Skip> skipped;                             // what the lesson chose not to measure
    nlohmann::json engine;
    std::vector<std::string> notes;   // fallback reasons, cache problems
    bool calibrated_now = false;
};

// Parent side: runs the request in a child of this executable. Throws DeviceError (exit 3) when
// the child crashed, overran or failed, InputError/UsageError when it reported bad input.
// `on_device_open`, when given, is called once the child has opened the device with the request's
// options (--device, --threads accepted): from then on the run goes ahead.
ChildResult execute(const ChildRequest& request, const std::function<void()>& on_device_open = {});

// "auto", "cpu", "cuda", "cuda:N"; anything else is a UsageError.
void check_device_name(const std::string& device);

}  // namespace lab
