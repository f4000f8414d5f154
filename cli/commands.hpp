// The subcommands of `lab`. Each takes its own arguments (after the subcommand's name) and
// returns the process exit code; errors are thrown (errors.hpp) and mapped to codes by main.
#pragma once

#include <string>
#include <vector>

namespace lab::cli {

using Args = std::vector<std::string>;

int cmd_list(const Args& args);
int cmd_info(const Args& args);
int cmd_device(const Args& args);
int cmd_calibrate(const Args& args);
int cmd_run(const Args& args);
int cmd_show(const Args& args);
int cmd_report(const Args& args);
int cmd_answers(const Args& args);
int cmd_submit(const Args& args);
int cmd_grade(const Args& args);
int cmd_check_spec(const Args& args);
int cmd_validate(const Args& args);
int cmd_check(const Args& args);
int cmd_new(const Args& args);
int cmd_model(const Args& args);
int cmd_checkpoint(const Args& args);
int cmd_smi(const Args& args);
int cmd_trace(const Args& args);
int cmd_token(const Args& args);
int cmd_audit(const Args& args);
int cmd_child(const Args& args);  // hidden: the child process of run/device/calibrate

}  // namespace lab::cli
