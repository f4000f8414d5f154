// The plugin API version and toolchain ABI tag: the two facts the loader checks before it
// calls anything else in a plugin.
#pragma once

#include <cstddef>  // brings in the standard library's configuration macros tested below

namespace lab {

// Plugin API version. Bump rule:
//  - kApiMajor: incremented for any change that breaks a compiled plugin: a field added, removed
//    or reordered in a struct that crosses the boundary, a virtual function added or reordered in a
//    class that plugins implement (Lesson, Device, Stream, Event, Buffer), or a changed meaning.
//    The loader refuses a plugin whose major differs from the host's.
//  - kApiMinor: incremented when the host gains something an older plugin never calls (a virtual
//    function appended at the end of Session). A plugin built against a newer minor than the host
//    is refused (it may call what the host lacks); an older minor loads.
inline constexpr int kApiMajor = 4;  // 4: Ceilings::skipped; 3: declare-once lessons (placed workloads, derive(run, d)), skips, plan replay
inline constexpr int kApiMinor = 0;

// Standard-library types (std::string, std::vector, std::function) cross the plugin boundary, so
// host and plugin must agree on the C++ ABI: the Itanium ABI and the same standard library in
// the same dual-ABI mode. The tag names exactly those; the loader refuses a plugin whose tag
// differs ("rebuild the plugin with the host's toolchain").
#if defined(_LIBCPP_VERSION)
#define LAB_STDLIB_TAG "libc++"
#elif defined(__GLIBCXX__) && defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI
#define LAB_STDLIB_TAG "libstdc++.cxx11"
#elif defined(__GLIBCXX__)
#define LAB_STDLIB_TAG "libstdc++.cow"
#else
#define LAB_STDLIB_TAG "unknown-stdlib"
#endif
#if defined(__x86_64__)
#define LAB_ARCH_TAG "x86_64"
#elif defined(__aarch64__)
#define LAB_ARCH_TAG "aarch64"
#else
#define LAB_ARCH_TAG "unknown-arch"
#endif

inline constexpr const char* kAbiTag = "itanium/" LAB_STDLIB_TAG "/" LAB_ARCH_TAG;

}  // namespace lab
