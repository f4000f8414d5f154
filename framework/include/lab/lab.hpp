// The lesson SDK: include this one header in a lesson plugin. Opt-in extras: <lab/cpu_kernels.hpp>
// (lab's vectorised CPU ceiling kernels, AVX-512/AVX2/scalar) and, in a CUDA companion's .cu files,
// <lab/cuda_check.hpp> and <lab/cuda_kernels.cuh>.
#pragma once

#include <boost/dll/alias.hpp>

#include "lab/cpu_share.hpp"
#include "lab/device.hpp"
#include "lab/lesson.hpp"
#include "lab/roofline.hpp"
#include "lab/types.hpp"
#include "lab/version.hpp"
