// Host time of one GEMM call: gk_gemm_bf16 (argument checks, plan, 2-4 TMA descriptors encoded,
// launch) against cublasGemmEx, each call timed on the CPU alone. The calls are enqueued on a
// stream held back by a spin kernel, so that no call waits for the GPU.
//   nvcc -std=c++17 -O3 -I. -gencode arch=compute_90a,code=sm_90a -cudart static \
//        -o gemm_host_cost_probe gk_bench/sweep/gemm_host_cost_probe.cu -lcublas
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <chrono>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main()
{
    const int64_t shapes[][3] = {{1, 4096, 4096}, {16, 8192, 8192}, {4096, 4096, 4096}};
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasSetStream(sweep_cublas(), s);
    void *a, *b, *d, *ws;
    cudaMalloc(&a, (size_t)8192 * 8192 * 2);
    cudaMalloc(&b, (size_t)8192 * 8192 * 2);
    cudaMalloc(&d, (size_t)8192 * 8192 * 2);
    const size_t ws_bytes = (size_t)64 << 20;
    cudaMalloc(&ws, ws_bytes);
    cudaMemset(a, 0, (size_t)8192 * 8192 * 2);
    cudaMemset(b, 0, (size_t)8192 * 8192 * 2);
    const int calls = 200;
    for (const auto &sh : shapes) {
        const int64_t m = sh[0], n = sh[1], k = sh[2];
        std::vector<double> tg, tc;
        for (int rep = 0; rep < 5; rep++) {
            sweep_spin<<<1, 1, 0, s>>>(2000000000LL); // ~1 s: every call below only enqueues
            for (int i = 0; i < calls; i++) {
                auto t0 = std::chrono::steady_clock::now();
                cudaError_t e = gk_gemm_bf16(d, GK_BF16, n, (const gk_bf16 *)a, k, 0, (const gk_bf16 *)b, k, 1, NULL, 0,
                                             NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws_bytes, s);
                auto t1 = std::chrono::steady_clock::now();
                if (e != cudaSuccess) {
                    printf("gk error %s\n", gk_failure_reason());
                    return 1;
                }
                tg.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                t0 = std::chrono::steady_clock::now();
                (void)cublas_bf16(d, a, k, 0, b, k, 1, (int)m, (int)n, (int)k);
                t1 = std::chrono::steady_clock::now();
                tc.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            cudaStreamSynchronize(s);
        }
        printf("M=%lld N=%lld K=%lld: host us a call, median of %zu: gk_gemm_bf16 %.2f, cublasGemmEx %.2f\n",
               (long long)m, (long long)n, (long long)k, tg.size(), sweep_median(tg), sweep_median(tc));
    }
    return 0;
}
