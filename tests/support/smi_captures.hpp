// nvidia-smi captures the real fixtures do not hold, derived from their own lines (the fixtures
// stay unedited): shared by the smi reader's tests and lab smi's.
#pragma once

#include <sstream>
#include <string>

#include "test_support.hpp"

namespace lab_test {

// A two-GPU `nvidia-smi dmon -c 5`, as dmon writes one: a line for each GPU at each sample, the
// `gpu` column telling them apart. GPU 0 is the H100 under load (sm 100%, 631-636 W), GPU 1 the
// same H100 idle (sm 0%, 69 W), relabelled.
inline std::string two_gpu_dmon() {
    const auto dir = source_root() / "tests/fixtures/nvidia-smi";
    std::istringstream load(read_file(dir / "h100_load_dmon.txt")), idle(read_file(dir / "h100_idle_dmon.txt"));
    std::string out;
    for (std::string l, i; std::getline(load, l) && std::getline(idle, i);) {
        if (l.rfind('#', 0) == 0) {  // the two header lines, once
            out += l + "\n";
            continue;
        }
        i[i.find_first_not_of(' ')] = '1';  // the gpu index, the line's first value ("0")
        out += l + "\n" + i + "\n";
    }
    return out;
}

}  // namespace lab_test
