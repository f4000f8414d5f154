// Writing files so that a reader sees the old content or the new, never half of either:
// write a temporary file beside the target, flush it to disk, rename it over the target.
#pragma once

#include <filesystem>
#include <string>

namespace lab {

// Throws InputError naming the path when the folder cannot be created or written, or when the
// path is a folder. A symbolic link is followed (the file it names is replaced, the link kept); a
// device or a FIFO (/dev/null, /dev/stdout) is opened and written through, not replaced.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// /dev/stdout, /dev/fd/N, /proc/self/fd/N and the like: a stream already open (a terminal, a pipe,
// a file the shell opened), which write_file_atomically writes to as it is, never a file of its own.
bool names_a_stream(const std::filesystem::path& path);

// Whether `path` could be written, tried before the work that produces it (a class's grading) so
// that a bad second output (`--report /proc/x.html`) stops the command before the first (the
// gradebook) has replaced anything. Creates the folder, as writing would; throws InputError
// naming the folder and `flag` (the option that gave the path) when it cannot be written.
void check_writable(const std::filesystem::path& path, const std::string& flag);

}  // namespace lab
