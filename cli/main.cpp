// `lab`: the entry point. Dispatches to a subcommand and maps errors to the exit codes of the
// command-line contract: 0 success, 1 a check failed, 2 bad usage or input, 3 device or plugin
// failure.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "console.hpp"
#include "errors.hpp"
#include "progress_bar.hpp"

namespace {

// Each command's line names every option its own `--help` usage names (a test holds them to it).
const char* kUsage =
    "usage: lab COMMAND [ARGS]\n"
    "\n"
    "  list [--json]                    lessons found on the plugin path\n"
    "  info ID [--json]                 objectives, experiments, metrics of a lesson\n"
    "  device [--device D] [--threads N] [--quick] [--json]   the device, its spec and its measured ceilings\n"
    "  calibrate [--device D] [--threads N] [--quick] [--json]   measure the ceilings and cache them\n"
    "  run ID [--device D] [--threads N] [--quick] [--student NAME | --token TOKEN] [--out RUN.json] [--json]\n"
    "         [--plots DIR] [--trace FILE[.gz]] [--report FILE.html] [--timeout S] [--reveal] [--replay RUN.json]\n"
    "         [--slurm [--partition P] [--gres G] [--account A] [--time T] [--work DIR] [--dry-run]]   (--slurm: as a cluster job)\n"
    "  show RUN.json [--reveal] [--json] [--plots DIR]   a recorded run, re-derived from its raw measurements\n"
    "  report RUN.json [--out FILE.html] [--reveal]   a recorded run as one self-contained HTML page\n"
    "  answers ID --run RUN.json [--spec SPEC.yaml]\n"
    "                                   a YAML answers template bound to that run\n"
    "  submit ID ANSWERS.yaml [--run RUN.json] [--results results.json] [--key FILE] [--as STUDENT] [--spec SPEC.yaml] [--json]\n"
    "                                   grade your claims (course mode with a course key, else practice)\n"
    "         | ID --refuse REASON [--diagnostic TEXT] --results results.json   an autograder's own refusal, every question at 0\n"
    "  grade SUBMISSIONS_DIR [--out gradebook.csv] [--report class.html] [--key FILE] [--lesson ID] [--spec SPEC.yaml]\n"
    "        [--roster ROSTER.csv [--identity COLUMN]] [--json]\n"
    "                                   grade a class's recorded runs (one folder per submission)\n"
    "  audit SUBMISSIONS_DIR [--lesson ID] [--sample 10%|N] [--seed N] [--tolerance F] [--key FILE] [--out audit.json] [--json]\n"
    "        [--slurm [--partition P] [--gres G] [--account A] [--time T] [--throttle N] [--share-nodes] [--work DIR] [--dry-run]]\n"
    "                                   re-measure a sample of submissions (here, or as a Slurm job array): do they reproduce?\n"
    "  token ROSTER.csv --key FILE [--identity COLUMN] [--out tokens.csv] | [ROSTER.csv] --new-key FILE\n"
    "                                   course keys and students' tokens\n"
    "  check-spec FILE|ID [--run RUN.json ...] | --keys\n"
    "                                   validate a grading spec against its lesson (and recorded runs of it)\n"
    "  new ID --title TITLE [--dir DIR] scaffold a lesson plugin + grading YAML\n"
    "  validate PLUGIN.so|ID [--spec FILE]   load a plugin, check its API version, metadata, metrics, spec\n"
    "  check ID [--device D] [--threads N] [--quick] [--timeout S] [--strict] [--json]\n"
    "        [--slurm --partition A,B [--gres G] [--account A] [--time T] [--work DIR] [--dry-run]]\n"
    "                                   run a lesson and compare with the expectations it declares\n"
    "                                   (on each partition's nodes with --slurm)\n"
    "  model CONFIG.json|NAME [--batch B] [--seq S] [--context T] [--dtype D] [--kv-dtype D]\n"
    "        [--device-spec NAME] [--memory SIZE] [--json]   parameters, bytes and FLOPs of a transformer\n"
    "  checkpoint FILE|DIR [--device-spec NAME] [--largest N] [--json]   what a safetensors checkpoint holds\n"
    "  smi FILE [--columns LIST] [--json]   what an nvidia-smi capture (table, -q, CSV, dmon) says, and does not\n"
    "  trace TRACE.json[.gz] [--device-spec NAME] [--top N] [--json]   a profiler trace (Kineto or lab's) summarised\n"
    "\n"
    "`lab COMMAND --help` describes a command. Exit codes: 0 ok, 1 a check failed, 2 bad usage or\n"
    "input, 3 the device or a plugin failed.\n";

// A command's exit code once what it printed is out: `lab token ... > tokens.csv` on a full disk
// (or with the output closed) must not end 0 with an empty file. A reader that stopped early (a
// broken pipe, `| head`) is no failure.
int output_written(int exit_code, const std::string& command) {
    if (command == "__child") return exit_code;  // its output is its parent's to read
    errno = 0;
    std::cout.flush();
    // What went through stdio (fmt::print) is checked too: cout and stdout share one stream.
    const bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
    const int error = errno;
    if (!failed || error == EPIPE) return exit_code;
    std::cerr << "lab: cannot write the output" << (error ? std::string(" (") + std::strerror(error) + ")" : std::string())
              << "\n  fix: "
              << (error == ENOSPC || error == EDQUOT ? "make room on the disk the output goes to, or send it elsewhere"
                  : error == EBADF                   ? "the output was closed: send it to a file or a terminal"
                                                     : "send the output elsewhere (a file on another disk, a terminal)")
              << "\n";
    return exit_code == 0 ? 2 : exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace lab;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return output_written(args.empty() ? 2 : 0, "help");
    }
    if (args[0] == "--version") {
        std::cout << "lab " << LAB_VERSION << "\n";
        return output_written(0, "--version");
    }
    static const std::map<std::string, int (*)(const cli::Args&)> commands = {
        {"list", cli::cmd_list},       {"info", cli::cmd_info}, {"device", cli::cmd_device},
        {"calibrate", cli::cmd_calibrate}, {"run", cli::cmd_run}, {"show", cli::cmd_show}, {"report", cli::cmd_report},
        {"answers", cli::cmd_answers}, {"submit", cli::cmd_submit}, {"grade", cli::cmd_grade},
        {"check-spec", cli::cmd_check_spec}, {"validate", cli::cmd_validate}, {"check", cli::cmd_check},
        {"new", cli::cmd_new},         {"model", cli::cmd_model}, {"checkpoint", cli::cmd_checkpoint}, {"smi", cli::cmd_smi}, {"trace", cli::cmd_trace},
        {"token", cli::cmd_token}, {"audit", cli::cmd_audit},
        {"__child", cli::cmd_child},
    };
    // The child's standard output is its parent's to read as it is.
    if (args[0] != "__child") {
        cli::guard_standard_output();
        // Only where a bar may be drawn: piped or with bars off, the variable changes nothing.
        if (const std::string p = progress_after_problem(); !p.empty() && progress_possible()) std::cerr << "warning: " << visible(p) << "\n";
    }
    auto it = commands.find(args[0]);
    try {
        if (it == commands.end())
            throw UsageError("unknown command '" + args[0] + "'\n  fix: run `lab --help` for the commands");
        return output_written(it->second(cli::Args(args.begin() + 1, args.end())), args[0]);
    } catch (const UsageError& e) {
        // Every message through visible(): paths and IDs in them come from other people's files.
        std::cerr << "lab: " << visible(e.what()) << "\n";
        return 2;
    } catch (const InputError& e) {
        std::cerr << "lab: " << e.what() << "\n";
        return 2;
    } catch (const PluginError& e) {
        std::cerr << "lab: plugin failure: " << visible(e.what()) << "\n";
        return 3;
    } catch (const DeviceError& e) {
        std::cerr << "lab: device failure: " << visible(e.what()) << "\n";
        return 3;
    } catch (const std::filesystem::filesystem_error& e) {
        // A path the system refused (too long, a loop of links, a folder where a file goes): the
        // command line's or the environment's, not a fault of lab's.
        std::cerr << "lab: " << visible(e.path1().string()) << ": " << e.code().message() << "\n  fix: "
                  << (e.code() == std::errc::filename_too_long ? "use a shorter path (at most 255 bytes a name, 4096 in all)"
                                                               : "check the path and the permissions of the folders on it")
                  << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "lab: internal error: " << visible(e.what()) << "\n  please report it with the command you ran\n";
        return 3;
    }
}
