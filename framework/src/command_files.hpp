// The files one command reads, and the outputs a person named on its command line: an output
// that would replace one of the command's own inputs (`lab token roster.csv --key k --out k`
// replaced the course key with the tokens CSV) or another of its outputs is refused before
// anything is written. Files lab keeps for itself (the ceilings cache, a Slurm audit's state)
// are read and rewritten on purpose and do not pass through here.
#pragma once

#include <filesystem>
#include <string>

namespace lab {

// Remembers `file` as read by this command (read_input_file does it for every file a person
// hands lab; the roster and the course key readers too).
void note_input(const std::filesystem::path& file);

// UsageError when `out` (given with `flag`, "--out") is one of the files this command read, or
// an output it already wrote or reserved under another flag; then reserves `out` under `flag`.
void claim_output(const std::filesystem::path& out, const std::string& flag);

// Forgets every input and output (each test of a command run in-process starts afresh).
void reset_command_files();

}  // namespace lab
