// `lab device` and `lab calibrate`: the device, its spec and its measured ceilings. Both run in
// a child process, because opening a device may initialise CUDA, which the parent never does.
#include <iostream>

#include "child_process.hpp"
#include "commands.hpp"
#include "console.hpp"
#include "device_summary.hpp"
#include "errors.hpp"
#include "lesson_runner.hpp"
#include "options.hpp"
#include "run_record.hpp"

namespace lab::cli {

namespace {

int report(const ChildResult& r, bool json) {
    nlohmann::json spec = device_spec_json(r.kind, r.facts, r.ceilings);
    if (json) {
        nlohmann::json out = {{"kind", to_string(r.kind)},
                              {"facts", record::to_json(r.facts)},
                              {"spec", spec},
                              {"ceilings", record::to_json(r.ceilings)},
                              {"calibrated_now", r.calibrated_now},
                              {"notes", r.notes}};
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    print_device(std::cout, r.kind, r.facts);
    print_spec(std::cout, spec);
    print_ceilings(std::cout, r.ceilings, CeilingDetail::full);
    return 0;
}

ChildRequest device_request(const po::variables_map& vm, const std::string& action) {
    ChildRequest req;
    req.action = action;
    req.device = vm["device"].as<std::string>();
    check_device_name(req.device);
    req.threads = vm["threads"].as<int>();
    check_threads(req.threads);
    req.quick = vm.count("quick") > 0;
    return req;
}

}  // namespace

int cmd_device(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all this process may use)")(
        "quick", "if no ceilings are cached, calibrate with --quick settings")("json", "print one JSON document");
    po::variables_map vm;
    if (!parse("device", "lab device [--device D] [--threads N] [--quick] [--json]", args, opts, {}, vm)) return 0;
    return report(execute(device_request(vm, "device")), vm.count("json") > 0);
}

int cmd_calibrate(const Args& args) {
    po::options_description opts("options");
    opts.add_options()("device", po::value<std::string>()->default_value("auto"), "auto, cpu, cuda or cuda:N")(
        "threads", po::value<int>()->default_value(0), "CPU threads (0 = all this process may use)")(
        "quick", "fewer samples: seconds instead of tens of seconds")("json", "print one JSON document");
    po::variables_map vm;
    if (!parse("calibrate", "lab calibrate [--device D] [--threads N] [--quick] [--json]", args, opts, {}, vm)) return 0;
    return report(execute(device_request(vm, "calibrate")), vm.count("json") > 0);
}

int cmd_child(const Args& args) {
    die_with_parent();
    if (args.size() != 1) throw UsageError("__child is internal: it takes one JSON request");
    return child_main(child_request_from_json(nlohmann::json::parse(args[0])));
}

}  // namespace lab::cli
