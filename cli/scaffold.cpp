// Lesson scaffolding (see scaffold.hpp). The templates are the smallest complete lesson: every
// part an instructor must write, each with a comment saying what to change.
#include "scaffold.hpp"

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
    cuda_args: ['-std=c++17', '-gencode=arch=compute_75,code=sm_75', '-gencode=arch=compute_80,code=sm_80',
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

const char* kKernelsHeader = R"(// The GPU kernels of lesson {{ID}}, as its CPU code sees them: plain function pointers
// exported by the CUDA companion, so the lesson plugin itself holds no CUDA code.
#pragma once

#include <cstddef>

struct Lesson{{STEM}}CudaKernels {
    // b[i] = s * a[i] over n floats, on the given cudaStream_t.
    void (*scale)(void* stream, float* b, const float* a, float s, std::size_t n, unsigned blocks);
};

#define LESSON_{{STEM}}_KERNELS "lab_{{STEM}}_cuda_kernels"
)";

const char* kCuda = R"(// Lesson {{ID}}'s GPU kernels (its CUDA companion): loaded only by lab's CUDA backend.
#include <cuda_runtime.h>

#include <lab/cuda_check.hpp>

#include "kernels.hpp"

namespace {

__global__ void scale_kernel(float* b, const float* a, float s, std::size_t n) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        b[i] = s * a[i];
}

void scale(void* stream, float* b, const float* a, float s, std::size_t n, unsigned blocks) {
    scale_kernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(b, a, s, n);
    LAB_CUDA(cudaGetLastError());  // names the file, the line and the error
}

const Lesson{{STEM}}CudaKernels kKernels{scale};

}  // namespace

extern "C" __attribute__((visibility("default"))) const Lesson{{STEM}}CudaKernels* lab_{{STEM}}_cuda_kernels() {
    return &kKernels;
}
)";

const char* kLesson = R"(// Lesson {{ID}}, "{{TITLE}}".
//
// One workload to start from: scale, b[i] = s * a[i], over a working set of at least 4x the
// last-level cache, so it streams from DRAM. Change the workloads, their counts, the metrics,
// the expectations and the teaching text; keep the three parts: info(), run(), derive().
#include <lab/lab.hpp>

#include <algorithm>

#include "kernels.hpp"

namespace {

using namespace lab;

class Lesson{{STEM}} : public lab::Lesson {
public:
    // Static declarations: read by `lab info`, `lab validate` and the grader without running.
    LessonInfo info() const override {
        LessonInfo i;
        i.id = "{{ID}}";
        i.title = "{{TITLE}}";
        i.version = "1.0.0";
        i.objectives = {"Measure the bandwidth a streaming kernel reaches, and name its regime."};
        i.experiments = {{"scale", "b[i] = s * a[i] over at least 4x the last-level cache"}};
        // Standard per-workload metrics; bytes_per_s is this lesson's graded answer.
        declare_workload_metrics(i.metrics, "scale", {"bytes_per_s"});
        // What `lab check {{ID}}` verifies on a new device: what the counts decide (must hold),
        // and what the machine measures, a regime and a speed (reported; failures only with
        // --strict, since a busy machine moves them).
        i.expectations = {
            {"scale.predicted_regime", "memory_bound", -1e308, 1e308, "", {"cpu", "cuda"}, false,
             "its arithmetic intensity is left of the ridge"},
            {"scale.measured_regime", "memory_bound", -1e308, 1e308, "", {"cpu", "cuda"}, true,
             "a large scale streams from DRAM: memory bound"},
            {"scale.bytes_per_s", "", 0.5, 1e308, "bandwidth.best", {"cpu", "cuda"}, true,
             "scale reaches half the bandwidth ceiling"},
        };
        i.budget_quick_s = 10;
        i.budget_full_s = 60;
        return i;
    }

    // Measurement: runs in lab's child process on the student's device.
    void run(Session& s) override {
        Device& dev = s.device();
        const std::size_t llc = dev.facts().last_level_cache_bytes();
        const std::size_t n = std::max<std::size_t>(4 * llc / 8, std::size_t{1} << 24) / 64 * 64;
        BufferPtr a = dev.allocate(n * 4), b = dev.allocate(n * 4);
        float *pa = a->as<float>(), *pb = b->as<float>();

        Workload w;
        w.name = "scale";
        w.description = "b[i] = s * a[i]";
        w.flops = 1.0 * n;   // one multiply per element
        w.bytes = 8.0 * n;   // read a, write b (no write-allocate counted)
        w.pipe = "fp32.simt";
        w.params = {{"n", static_cast<double>(n)}};

        Launch launch;
        if (dev.kind() == DeviceKind::cuda) {
            const auto* k = &s.companion<Lesson{{STEM}}CudaKernels>(LESSON_{{STEM}}_KERNELS);
            const unsigned blocks = static_cast<unsigned>(std::max(1, dev.facts().compute_units)) * 8;
            launch = [=](Stream& st) { k->scale(st.native_handle(), pb, pa, 3.0f, n, blocks); };
        } else {
            // CPU: every thread of the device's team scales its share.
            launch = [=](Stream& st) {
                st.launch([=](int t, int threads) {
                    std::size_t lo, hi;
                    cpu::share(n, t, threads, lo, hi);
                    for (std::size_t i = lo; i < hi; ++i) pb[i] = 3.0f * pa[i];
                });
            };
        }
        s.measure(w, launch);
    }

    // Raw measurements -> metrics: the same code runs after `lab run` and in the grader.
    Derivation derive(const RawRun& run) const override {
        Derivation d;
        place_workload(run, "scale", d);
        d.teaching = {"scale moved {scale.bytes_per_s}: it is {scale.measured_regime}."};
        return d;
    }
};

}  // namespace

LAB_LESSON(Lesson{{STEM}}, "{{ID}}")
)";

const char* kSpec = R"(# Grading spec for lesson {{ID}}. Keys: `lab check-spec --keys`. Install it into lab's
# configs/grading/ (meson install does) or point LAB_CONFIG_DIR at a copy of configs holding it.
lesson: "{{ID}}"
accept_quick: true
show_expected: after_due_date
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
    LAB_PLUGIN_PATH=$PWD/build lab run {{ID}} --quick
    LAB_PLUGIN_PATH=$PWD/build lab check {{ID}} --quick

| file | what to change |
|---|---|
| `lab_{{STEM}}.cpp` | the lesson: info() (declarations), run() (workloads and their counts), derive() (metrics) |
| `kernels.hpp`, `lab_{{STEM}}_cuda.cu` | the GPU kernels (built when nvcc is found) |
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
    if (title.empty() || title.find('"') != std::string::npos || title.find('\\') != std::string::npos)
        throw UsageError("give a --title without quotes or backslashes");
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
