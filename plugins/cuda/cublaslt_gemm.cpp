// cuBLASLt GEMM (see cublaslt_gemm.hpp).
#include "cublaslt_gemm.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "lab/cuda_check.hpp"

namespace lab::cuda {

namespace {

void check(cublasStatus_t s, const char* call, int line) {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed at " + __FILE__ + ":" + std::to_string(line) + ": " +
                                 cublasLtGetStatusName(s));
}

#define LAB_LT(call) check((call), #call, __LINE__)

struct Types {
    cudaDataType_t a, b, c;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    bool tn;  // needs B stored transposed (TN layout)
};

Types types_for(Dtype d) {
    switch (d) {
        case Dtype::fp64: return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, false};
        case Dtype::fp32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, false};
        case Dtype::tf32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, false};
        case Dtype::fp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, false};
        case Dtype::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, false};
        case Dtype::fp8_e4m3: return {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, true};
        case Dtype::int8: return {CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, true};
        default: break;  // e5m2, 4-bit and block-scaled types: no GEMM here
    }
    throw std::invalid_argument("unknown dtype");
}

}  // namespace

// Owns its descriptors, so a plan that fails half-way (a layout cuBLASLt refuses, no algorithm)
// destroys what it had created.
struct LtGemm::Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    Types types{};
    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() {
        for (cublasLtMatrixLayout_t l : {a, b, c})
            if (l) cublasLtMatrixLayoutDestroy(l);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

LtGemm::LtGemm() {
    LAB_LT(cublasLtCreate(&handle_));
    if (cudaError_t e = cudaMalloc(&workspace_, workspace_bytes_); e != cudaSuccess) {
        cublasLtDestroy(handle_);  // the destructor does not run for a constructor that throws
        LAB_CUDA(e);
    }
}

LtGemm::~LtGemm() {
    plans_.clear();  // before the handle they were made with
    if (workspace_) cudaFree(workspace_);
    if (handle_) cublasLtDestroy(handle_);
}

bool LtGemm::supports(Dtype d, int cc) {
    switch (d) {
        case Dtype::fp64:
        case Dtype::fp32:
        case Dtype::fp16:
        case Dtype::int8: return cc >= 75;
        case Dtype::tf32:
        case Dtype::bf16: return cc >= 80;
        case Dtype::fp8_e4m3: return cc >= 89;
        default: return false;
    }
}

const LtGemm::Plan& LtGemm::plan(const Gemm& g) {
    auto key = std::make_tuple(static_cast<int>(g.dtype), g.m, g.n, g.k);
    if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
    auto p = std::make_unique<Plan>();
    p->types = types_for(g.dtype);
    const Types& t = p->types;
    LAB_LT(cublasLtMatmulDescCreate(&p->op, t.compute, t.scale));
    // Column-major view: C^T[n,m] = op(B^T)[n,k] * A^T[k,m].
    cublasOperation_t opa = t.tn ? CUBLAS_OP_T : CUBLAS_OP_N, opb = CUBLAS_OP_N;
    LAB_LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    LAB_LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    // FP8: fast accumulation, as FP8 training and inference run it and as NVIDIA's FP8 peak is
    // quoted. Without it Hopper promotes the partial sums to fp32 every few k steps, extra work
    // that reads well below the tensor cores' FP8 rate.
    if (g.dtype == Dtype::fp8_e4m3) {
        const std::int8_t fast = 1;
        LAB_LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    // First operand: B. Stored row-major [k,n] it is column-major [n,k] (ld n); stored
    // transposed ([n,k] row-major) it is column-major [k,n] (ld k), read with op T.
    if (t.tn) LAB_LT(cublasLtMatrixLayoutCreate(&p->a, t.a, g.k, g.n, g.k));
    else LAB_LT(cublasLtMatrixLayoutCreate(&p->a, t.a, g.n, g.k, g.n));
    LAB_LT(cublasLtMatrixLayoutCreate(&p->b, t.b, g.k, g.m, g.k));   // A row-major [m,k] = col-major [k,m]
    LAB_LT(cublasLtMatrixLayoutCreate(&p->c, t.c, g.n, g.m, g.n));   // C row-major [m,n] = col-major [n,m]

    cublasLtMatmulPreference_t pref;
    LAB_LT(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t workspace_bytes = workspace_bytes_;  // the attribute is a uint64_t
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                             sizeof workspace_bytes);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(handle_, p->op, p->a, p->b, p->c, p->c, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        throw std::invalid_argument(std::string("cuBLASLt has no GEMM algorithm for ") + to_string(g.dtype) + " " +
                                    std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                                    " on this device");
    }
    p->algo = result.algo;
    return *(plans_[key] = std::move(p));
}

void LtGemm::run(cudaStream_t stream, const Gemm& g) {
    const Plan& p = plan(g);
    // alpha and beta in the scale type: double, float or int32.
    double ad = g.alpha, bd = g.beta;
    float af = static_cast<float>(g.alpha), bf = static_cast<float>(g.beta);
    int ai = static_cast<int>(g.alpha), bi = static_cast<int>(g.beta);
    const void* alpha = p.types.scale == CUDA_R_64F ? static_cast<const void*>(&ad)
                        : p.types.scale == CUDA_R_32I ? static_cast<const void*>(&ai) : static_cast<const void*>(&af);
    const void* beta = p.types.scale == CUDA_R_64F ? static_cast<const void*>(&bd)
                       : p.types.scale == CUDA_R_32I ? static_cast<const void*>(&bi) : static_cast<const void*>(&bf);
    LAB_LT(cublasLtMatmul(handle_, p.op, alpha, g.b, p.a, g.a, p.b, beta, g.c, p.c, g.c, p.c, &p.algo, workspace_,
                          workspace_bytes_, stream));
}

}  // namespace lab::cuda
