// Run-time loading of OpenBLAS (see openblas.hpp).
#include "openblas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace lab::cpu {

namespace {

template <class F> F symbol(void* lib, const char* name) {
    void* p = dlsym(lib, name);
    if (!p) throw std::runtime_error(std::string("OpenBLAS lacks ") + name);
    return reinterpret_cast<F>(p);
}

}  // namespace

const OpenBlas& openblas(Simd simd) {
    static std::once_flag once;
    static OpenBlas blas;
    static std::string error;
    std::call_once(once, [simd] {
        const char* user = std::getenv("OPENBLAS_CORETYPE");
        if (user && *user) {
            blas.how_chosen = "OPENBLAS_CORETYPE=" + std::string(user) + " set by the user";
        } else if (simd == Simd::avx512) {
            setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
            blas.how_chosen = "chosen by lab for AVX-512 (OPENBLAS_CORETYPE=SkylakeX)";
        } else if (simd == Simd::avx2) {
            setenv("OPENBLAS_CORETYPE", "Haswell", 0);
            blas.how_chosen = "chosen by lab for AVX2 (OPENBLAS_CORETYPE=Haswell)";
        } else {
            blas.how_chosen = "detected by OpenBLAS";
        }
        void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            error = std::string("OpenBLAS could not be loaded (") + dlerror() +
                    "); install libopenblas0 (Debian: apt-get install libopenblas0-pthread)";
            return;
        }
        try {
            blas.sgemm = symbol<OpenBlas::Sgemm>(lib, "cblas_sgemm");
            blas.dgemm = symbol<OpenBlas::Dgemm>(lib, "cblas_dgemm");
            blas.set_num_threads = symbol<void (*)(int)>(lib, "openblas_set_num_threads");
            blas.core = symbol<char* (*)()>(lib, "openblas_get_corename")();
            blas.config = symbol<char* (*)()>(lib, "openblas_get_config")();
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
    if (!error.empty()) throw std::runtime_error(error);
    return blas;
}

}  // namespace lab::cpu
