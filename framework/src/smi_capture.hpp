// nvidia-smi's output, read back: the default table, `-q` text, `--query-gpu=... --format=csv`
// (with or without units; a headerless CSV needs its columns named) and `dmon`, told apart by
// their own markers. What a capture does not hold is absent (std::nullopt), never 0. `lab smi`
// prints it and explains what it does and does not say; lesson 02.09 teaches from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lab::smi {

enum class Format { table, query, csv, dmon };
const char* to_string(Format f);  // "table", "q", "csv", "dmon"

struct Process {
    std::optional<long long> pid;
    std::string name;
    std::optional<double> used_mib;
};

struct Gpu {
    std::optional<std::string> name, driver_version, cuda_version, pstate;
    std::optional<double> temperature_c, power_draw_w, power_limit_w, power_draw_average_w, power_draw_instant_w;
    std::optional<double> memory_used_mib, memory_total_mib, utilization_gpu_pct, utilization_memory_pct;
    std::optional<double> memory_reserved_mib;   // -q's "Reserved", the CSV's memory.reserved: the driver's own, not in Used
    // NVENC's and NVDEC's busy shares (-q's Utilization, the CSV's utilization.encoder/decoder):
    // engines beside the SMs, whose work GPU-Util (time a kernel ran) does not count.
    std::optional<double> utilization_encoder_pct, utilization_decoder_pct;
    std::optional<double> sm_clock_mhz, memory_clock_mhz;
    std::vector<Process> processes;
    bool processes_listed = false;  // the capture has a process section (possibly empty)
};

// One dmon line: nvidia-smi's column names ("gpu", "pwr", "gtemp", "sm", ...) and their values
// ("-" is absent).
struct Sample {
    std::vector<std::pair<std::string, std::optional<double>>> columns;
};

struct Capture {
    Format format = Format::table;
    std::vector<Gpu> gpus;          // empty for dmon
    std::vector<Sample> samples;    // dmon only: every line, of every GPU, in the file's order
    std::vector<std::string> units; // dmon: each column's unit, as its second header line says
    std::vector<std::string> columns;  // dmon: the column names, in the header's order
};

// dmon prints one line per GPU per sample; the `gpu` column (the GPU's index) tells them apart.
// One GPU's lines, averaged column by column.
struct DmonGpu {
    std::optional<double> index;  // the `gpu` column's value (absent where it was "-")
    std::size_t samples = 0;
    // In the header's order, `gpu` left out; absent where every one of its lines had "-".
    std::vector<std::pair<std::string, std::optional<double>>> means;
};
// A dmon capture's GPUs, by index (none for the other formats).
std::vector<DmonGpu> dmon_gpus(const Capture& c);

// Parses `text` (read from `file`, named in errors). `csv_columns`: the field names of a CSV
// written with `noheader` (as given to --query-gpu). Throws InputError naming the file, the line
// and what was expected.
Capture parse(const std::string& text, const std::filesystem::path& file, const std::vector<std::string>& csv_columns = {});

// Reads `file` (at most kMaxCaptureBytes: a day of `dmon` at one line a second is a few MB) and
// parses it as above.
inline constexpr std::uintmax_t kMaxCaptureBytes = 64u << 20;
Capture read(const std::filesystem::path& file, const std::vector<std::string>& csv_columns = {});

// A --query-gpu CSV's field name as lab reads it: the unit dropped ("power.draw [W]" ->
// "power.draw"), nvidia-smi's aliases made one ("clocks.current.sm" -> "clocks.sm").
std::string field_name(const std::string& header);
// The fields lab reads from a --query-gpu CSV, by field_name; other columns are read past.
const std::vector<std::string>& csv_fields_read();

// What the capture says and does not say, in sentences.
std::vector<std::string> explain(const Capture& c);

}  // namespace lab::smi
