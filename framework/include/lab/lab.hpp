// The lesson SDK: include this one header in a lesson plugin. It brings the lesson interface,
// the device model, the roofline, the workload helpers and LAB_LESSON registration.
// Opt-in extras a lesson includes only when it needs them:
//   <lab/stream_kernels.hpp>      the shared streaming/FMA kernel interface (read, copy, triad,
//                                 k FMAs per element, FMA peak, a dependent chain) with its counts;
//   <lab/cpu_stream_kernels.hpp>  its CPU implementation (lab's AVX-512/AVX2/scalar kernels of
//                                 <lab/cpu_kernels.hpp>);
//   <lab/random_fill.hpp>         fill_random: bounded pseudo-random GEMM operands (tensor cores
//                                 run faster on the zeros a buffer starts with);
//   <lab/transformer.hpp>         transformer arithmetic (parameters, KV cache, per-op FLOPs and
//                                 bytes, decode bound), the one `lab model` uses (docs/arithmetic.md);
//   in a CUDA companion's .cu: <lab/companion.hpp> (LAB_COMPANION), <lab/cuda_check.hpp>
//                                 (LAB_CUDA), <lab/cuda_stream_kernels.cuh>, <lab/cuda_kernels.cuh>.
#pragma once

#include "lab/cpu_share.hpp"
#include "lab/device.hpp"
#include "lab/lesson.hpp"
#include "lab/register.hpp"
#include "lab/roofline.hpp"
#include "lab/types.hpp"
#include "lab/version.hpp"
#include "lab/workloads.hpp"
