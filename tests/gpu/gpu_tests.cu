// GPU tests. They run only where a CUDA device works; elsewhere the executable exits 77, which
// meson reports as a skip. The CUDA backend's own tests arrive with it; this checks the probe
// every GPU test relies on and that a trivial kernel runs and returns the right answer.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

__global__ void add_one(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

}  // namespace

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("no CUDA device: skipping the GPU tests\n");
        return 77;
    }
    const int n = 1 << 20;
    int* d = nullptr;
    if (check(cudaMalloc(&d, n * sizeof(int)), "cudaMalloc")) return 1;
    if (check(cudaMemset(d, 0, n * sizeof(int)), "cudaMemset")) return 1;
    add_one<<<(n + 255) / 256, 256>>>(d, n);
    if (check(cudaGetLastError(), "kernel launch") || check(cudaDeviceSynchronize(), "kernel")) return 1;
    static int h[n];
    if (check(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy")) return 1;
    cudaFree(d);
    for (int i = 0; i < n; ++i)
        if (h[i] != 1) {
            std::fprintf(stderr, "element %d is %d, expected 1\n", i, h[i]);
            return 1;
        }
    std::printf("1 passed: a kernel ran on %d device(s)\n", count);
    return 0;
}
