// GEMM at every dtype the card has, through cuBLASLt: the CUDA device's Device::gemm. Row-major
// C[m,n] = alpha A[m,k] B[k,n] + beta C is computed as the column-major C^T = B^T A^T, so no data
// is transposed. FP8 and INT8 need cuBLASLt's "TN" layout; for them B is read as stored
// transposed ([n,k]) and C is bf16 (fp8) or int32 (int8), as lab/device.hpp's Gemm documents.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <tuple>

#include "lab/device.hpp"

namespace lab::cuda {

class LtGemm {
public:
    LtGemm();
    ~LtGemm();
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    // Whether cuBLASLt runs this dtype on a device of compute capability `cc` (86 = 8.6).
    static bool supports(Dtype dtype, int cc);
    void run(cudaStream_t stream, const Gemm& g);

private:
    struct Plan;
    const Plan& plan(const Gemm& g);

    cublasLtHandle_t handle_ = nullptr;
    void* workspace_ = nullptr;
    std::size_t workspace_bytes_ = 32u << 20;
    std::map<std::tuple<int, int, int, int>, std::unique_ptr<Plan>> plans_;
};

}  // namespace lab::cuda
