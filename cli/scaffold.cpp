// Lesson scaffolding (see scaffold.hpp). The templates are the smallest complete lesson: every
// part an instructor must write, each with a comment saying what to change.
#include "scaffold.hpp"

#include <algorithm>
#include <regex>

#include "atomic_file.hpp"
#include "errors.hpp"

namespace fs = std::filesystem;

namespace lab::cli {

namespace {

const char* kMeson = R"(# Lesson {{ID}}: builds against the installed lab SDK (pkg-config lab-sdk). The CUDA companion
# is built when nvcc is found; the lesson runs on CPUs without it.
project('lab-lesson-{{STEM}}', 'cpp', version: '1.0.0', meson_version: '>= 1.0.1',
  default_options: ['cpp_std=c++20', 'buildtype=debugoptimized'])
fs = import('fs')
sdk = dependency('lab-sdk')
plugindir = sdk.get_variable(pkgconfig: 'plugindir')
shared_module('lab_{{STEM}}', 'lab_{{STEM}}.cpp', name_prefix: '', dependencies: [sdk],
  gnu_symbol_visibility: 'hidden', install: true, install_dir: plugindir)
if not get_option('gpu').disabled() and add_languages('cuda', required: get_option('gpu'), native: false)
  shared_module('lab_{{STEM}}_cuda', 'lab_{{STEM}}_cuda.cu', name_prefix: '', dependencies: [sdk],
    cuda_args: ['-gencode=arch=compute_75,code=sm_75', '-gencode=arch=compute_80,code=sm_80',
                '-gencode=arch=compute_90,code=sm_90', '-gencode=arch=compute_90,code=compute_90'],
    link_args: ['-cudart=shared'], gnu_symbol_visibility: 'hidden', install: true, install_dir: plugindir,
    # the toolkit's shared runtime, found beside nvcc
    build_rpath: fs.parent(fs.parent(find_program('nvcc').full_path())) / 'lib64',
    install_rpath: fs.parent(fs.parent(find_program('nvcc').full_path())) / 'lib64')
endif
install_data('{{ID}}.yaml', install_dir: sdk.get_variable(pkgconfig: 'gradingdir'))
)";

const char* kOptions = R"(option('gpu', type: 'feature', value: 'auto', description: 'Build the CUDA companion (needs nvcc)')
)";

const char* kKernelsHeader = R"(// Lesson {{ID}}'s kernels: one interface, implemented for CPUs in lab_{{STEM}}.cpp and for GPUs
// in lab_{{STEM}}_cuda.cu. Each call returns a Launch; counts are stated by the lesson, not here.
#pragma once

#include <lab/device.hpp>

struct ScaleKernels {
    static constexpr const char* kInterface = "lesson_{{STEM}}::ScaleKernels/1";
    virtual ~ScaleKernels() = default;
    virtual lab::Launch scale(float* b, const float* a, float s, std::size_t n) = 0;  // b = s * a
};
)";

const char* kCuda = R"(// Lesson {{ID}}'s GPU kernels (its CUDA companion): loaded only by lab's CUDA backend.
#include <lab/companion.hpp>
#include <lab/cuda_check.hpp>

#include "kernels.hpp"

__global__ void scale_kernel(float* b, const float* a, float s, std::size_t n) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        b[i] = s * a[i];
}

struct ScaleGpu : ScaleKernels {
    explicit ScaleGpu(lab::Device& d) : blocks(static_cast<unsigned>(d.facts().compute_units > 0 ? d.facts().compute_units : 1) * 8) {}
    lab::Launch scale(float* b, const float* a, float s, std::size_t n) override {
        const unsigned g = blocks;
        return [=](lab::Stream& st) {
            scale_kernel<<<g, 256, 0, static_cast<cudaStream_t>(st.native_handle())>>>(b, a, s, n);
            LAB_CUDA(cudaGetLastError());  // names the file, the line and the error
        };
    }
    unsigned blocks;
};

LAB_COMPANION(ScaleKernels, ScaleGpu)
)";

const char* kLesson = R"(// Lesson {{ID}}, "{{TITLE}}".
//
// One workload to start from: scale, b[i] = s * a[i], over a working set of at least 4x the
// last-level cache, so it streams from DRAM. Change the workloads, their counts, the metrics,
// the expectations and the teaching text; keep the three parts: info(), run(), derive().
#include <lab/lab.hpp>

#include "kernels.hpp"

namespace {

using namespace lab;

// The CPU side of the kernels: every thread of the device's team scales its share.
struct ScaleCpu : ScaleKernels {
    explicit ScaleCpu(Device&) {}
    Launch scale(float* b, const float* a, float s, std::size_t n) override {
        return [=](Stream& st) {
            st.launch([=](int t, int threads) {
                std::size_t lo, hi;
                cpu::share(n, t, threads, lo, hi);
                for (std::size_t i = lo; i < hi; ++i) b[i] = s * a[i];
            });
        };
    }
};

class Lesson{{STEM}} : public lab::Lesson {
public:
    // Declarations, read without running. A placed workload gets its standard metrics
    // (scale.bytes_per_s, scale.measured_regime, ...) declared and derived by the SDK.
    LessonInfo info() const override {
        LessonInfo i{.id = "{{ID}}", .title = "{{TITLE}}", .version = "1.0.0"};
        i.objectives = {"Measure the bandwidth a streaming kernel reaches, and name its regime."};
        i.experiments = {{"scale", "b[i] = s * a[i] over at least 4x the last-level cache"}};
        i.placed = {{.name = "scale", .graded = {"bytes_per_s"}}};
        // `lab check {{ID}}`: what the counts decide must hold; what the machine measures is
        // reported (a failure only with --strict: a busy machine moves it).
        i.expectations = {
            {.metric = "scale.predicted_regime", .equals = "memory_bound", .why = "its AI is left of the ridge"},
            {.metric = "scale.measured_regime", .equals = "memory_bound", .performance = true, .why = "it streams from DRAM"},
            {.metric = "scale.bytes_per_s", .min = 0.5, .relative_to = "bandwidth.best", .performance = true,
             .why = "scale reaches half the bandwidth ceiling"},
        };
        return i;
    }

    // Measurement: runs in lab's child process on the student's device.
    void run(Session& s) override {
        Device& dev = s.device();
        auto k = s.kernels<ScaleKernels, ScaleCpu>();
        const std::size_t n = std::max<std::size_t>(dev.facts().last_level_cache_bytes() / 2, std::size_t{1} << 24) / 64 * 64;
        BufferPtr a = dev.allocate(n * 4), b = dev.allocate(n * 4);
        // One multiply per element; read a, write b (no write-allocate counted).
        s.measure({.name = "scale", .description = "b[i] = s * a[i]", .params = {param("n", n)}, .flops = 1.0 * n, .bytes = 8.0 * n},
                  k->scale(b->as<float>(), a->as<float>(), 3.0f, n));
    }

    // Raw measurements -> metrics: the same code runs after `lab run` and in the grader.
    void derive(const RawRun&, Derivation& d) const override {
        d.teaching = {"scale moved {scale.bytes_per_s}: it is {scale.measured_regime}."};
    }
};

}  // namespace

LAB_LESSON(Lesson{{STEM}}, "{{ID}}")
)";

const char* kSpec = R"(# Grading spec for lesson {{ID}}. Keys: `lab check-spec --keys`. Install it into lab's
# configs/grading/ (meson install does) or point LAB_CONFIG_DIR at a copy of configs holding it.
lesson: "{{ID}}"
accept_quick: true
# Expected values stay hidden; to show them to students after the due day (UTC), write
# show_expected: after_due_date and due: "YYYY-MM-DD".
show_expected: never
questions:
  - id: scale_bandwidth
    prompt: "What bandwidth did the scale kernel reach?"
    type: number
    unit: GB/s
    expected: {metric: scale.bytes_per_s}
    tolerance: {rel: 0.05}
    partial: {within: 3, credit: 0.5}
    points: 2
    hint: "Bandwidth = bytes moved / median time; scale moves 8 bytes per element."
)";

const char* kReadme = R"(# Lesson {{ID}}: {{TITLE}}

Scaffolded by `lab new`. Build it against the installed lab SDK and run it:

    meson setup build && meson compile -C build
    LAB_PLUGIN_PATH=$PWD/build lab validate build/lab_{{STEM}}.so
    LAB_PLUGIN_PATH=$PWD/build lab run {{ID}} --quick --student you --out /tmp/{{STEM}}-run.json
    LAB_PLUGIN_PATH=$PWD/build lab check {{ID}} --quick

| file | what to change |
|---|---|
| `lab_{{STEM}}.cpp` | the lesson: info() (declarations), run() (workloads and their counts), derive() (metrics) |
| `kernels.hpp`, `lab_{{STEM}}_cuda.cu` | the kernel interface and its GPU side (the companion, built when nvcc is found) |
| `{{ID}}.yaml` | the grading spec: questions, tolerances, points |

`meson install` puts the plugins where lab finds them and the spec into lab's configs/grading/.
See lab's docs/authoring.md for the SDK reference.
)";

std::string fill(std::string t, const std::string& id, const std::string& stem, const std::string& title) {
    auto replace_all = [&](const std::string& from, const std::string& to) {
        for (std::size_t p = t.find(from); p != std::string::npos; p = t.find(from, p + to.size())) t.replace(p, from.size(), to);
    };
    replace_all("{{ID}}", id);
    replace_all("{{STEM}}", stem);
    replace_all("{{TITLE}}", title);
    return t;
}

}  // namespace

std::string scaffold_stem(const std::string& id) {
    std::string s = id;
    std::replace(s.begin(), s.end(), '.', '_');
    return s;
}

fs::path scaffold_lesson(const std::string& id, const std::string& title, const fs::path& dir) {
    static const std::regex ok("[0-9]{2}\\.[0-9]{2}");
    if (!std::regex_match(id, ok)) throw UsageError("lesson ID '" + id + "' is not of the form NN.NN (e.g. 02.13)");
    // The title lands in a C++ string literal and a YAML comment: one line of printable text.
    const bool control = std::any_of(title.begin(), title.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
    // An empty (or blank) title is its own problem, not a matter of quotes.
    if (title.find_first_not_of(" \t") == std::string::npos)
        throw UsageError("the --title is empty: the lesson needs one, shown by `lab list` and `lab info`\n  fix: give it, e.g. --title \"Cache blocking\"");
    if (title.find('"') != std::string::npos || title.find('\\') != std::string::npos || control)
        throw UsageError("the --title must be one line without double quotes (\"), backslashes or control characters: it goes "
                         "into a C++ string literal and the spec's YAML\n  fix: write it plainly, e.g. --title \"Cache blocking\" "
                         "(single quotes and apostrophes are fine)");
    const std::string stem = scaffold_stem(id);
    fs::path folder = dir / ("lesson_" + stem);
    if (fs::exists(folder)) throw InputError(folder.string(), "already exists", "choose another --dir, or remove it");
    const std::pair<const char*, const char*> files[] = {
        {"meson.build", kMeson}, {"meson_options.txt", kOptions}, {"kernels.hpp", kKernelsHeader},
        {"README.md", kReadme},  {"{{ID}}.yaml", kSpec},         {"lab_{{STEM}}.cpp", kLesson},
        {"lab_{{STEM}}_cuda.cu", kCuda},
    };
    for (const auto& [name, text] : files)
        write_file_atomically(folder / fill(name, id, stem, title), fill(text, id, stem, title));
    return folder;
}

}  // namespace lab::cli
