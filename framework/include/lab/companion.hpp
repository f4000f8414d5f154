// A lesson's CUDA companion (lab_<ID>_cuda.so) exports its kernels with one line in its .cu:
//     LAB_COMPANION(lab::StreamKernels, lab::cuda::StreamKernelsGpu)
// `Interface` is the abstract kernel interface the lesson's CPU side also implements (it names
// itself in a static `kInterface` string); `Impl` implements it with CUDA launches and is
// constructed from the Device. Session::kernels<Interface, Cpu>() finds it, checks the
// interface name and owns the object. (C++17: nvcc compiles it.)
#pragma once

#include "lab/device.hpp"

#define LAB_COMPANION(INTERFACE, IMPL)                                                                  \
    extern "C" __attribute__((visibility("default"))) const char* lab_companion_interface() {          \
        return INTERFACE::kInterface;                                                                   \
    }                                                                                                   \
    extern "C" __attribute__((visibility("default"))) INTERFACE* lab_companion_create(::lab::Device& d) { \
        return new IMPL(d);                                                                             \
    }
