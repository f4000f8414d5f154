// Kernel names short enough for a table row. A demangled CUDA kernel name is a C++ signature
// ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, ...>
// (int, ...)") that runs to hundreds or thousands of characters; what a student recognises, and
// what Nsight Systems shows as a kernel's short name, is the function's own name
// ("vectorized_elementwise_kernel"). Many kernels share that name (one template, many
// instantiations), so where two would print alike the template arguments that tell them apart
// are added back, shortened the same way ("vectorized_elementwise_kernel<FillFunctor>").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lab::trace {

// One short name per full name, in the same order: distinct full names get distinct short names
// (the last resort is a " #2" suffix), none longer than `width` characters. A name that is not a
// C++ signature (no argument list right after the name: "triton_poi_fused_add_0", "sgemm 8 x 8")
// is kept as it is, cut to the width.
std::vector<std::string> short_kernel_names(const std::vector<std::string>& full, std::size_t width = 60);

}  // namespace lab::trace
