// Folders a command made for its outputs, removed while still empty when the command is stopped
// by a signal (Ctrl-C, kill, a closed terminal) before it wrote into them: a destructor does not
// run then, and a stopped `lab run --out new/run.json` left `new/` behind.
#pragma once

#include <filesystem>
#include <vector>

namespace lab::cli {

// From now until forget_folders_on_signal(): on SIGINT, SIGTERM or SIGHUP, each of `folders`
// (outermost first) that is empty is removed, deepest first, and the signal then ends the
// process as it would have. Replaces any earlier set.
void remove_folders_on_signal(const std::vector<std::filesystem::path>& folders);

// The outputs are written (or the folders already cleaned): a signal removes nothing.
void forget_folders_on_signal();

}  // namespace lab::cli
