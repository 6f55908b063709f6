// Host time of one W4A16 call: gk_w4_gemm_bf16 (argument checks, plan, launches; on the wgmma
// path X's staging, three TMA descriptors encoded and the dependent launches) against
// cublasGemmEx on the bf16 weight of the same shape, each call timed on the CPU alone. The calls
// are enqueued on a stream held back by a spin kernel, so that no call waits for the GPU. The
// weight's bytes are zeros: only the host path is measured.
//   nvcc -std=c++17 -O3 -I. -gencode arch=compute_90a,code=sm_90a -cudart static \
//        -o quant_host_cost_probe gk_bench/sweep/quant_host_cost_probe.cu -lcublas
#define GK_IMPLEMENTATION
#include "gk/gk_quant.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

static __global__ void spin(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    const int64_t shapes[][3] = {{1, 8192, 8192}, {16, 8192, 8192}, {64, 8192, 8192}, {128, 28672, 8192}};
    cublasHandle_t h;
    cublasCreate(&h);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasSetStream(h, s);
    void *x, *wb, *d, *ws, *packed;
    const size_t big = (size_t)28672 * 8192 * 2;
    cudaMalloc(&x, (size_t)128 * 8192 * 2);
    cudaMalloc(&wb, big);
    cudaMalloc(&d, (size_t)128 * 28672 * 4);
    cudaMalloc(&packed, gk_w4_packed_bytes(28672, 8192, 128, GK_W4_SYMMETRIC));
    cudaMemset(x, 0, (size_t)128 * 8192 * 2);
    cudaMemset(wb, 0, big);
    cudaMemset(packed, 0, gk_w4_packed_bytes(28672, 8192, 128, GK_W4_SYMMETRIC));
    const size_t ws_bytes = gk_w4_workspace_bytes(128, 28672, 8192);
    cudaMalloc(&ws, ws_bytes);
    const int calls = 200;
    for (const auto &sh : shapes) {
        const int64_t m = sh[0], n = sh[1], k = sh[2];
        const gk_w4_weight w = {packed, n, k, 128, GK_W4_SYMMETRIC, GK_BF16};
        const gk_w4_plan pl = gk_w4_plan_for(m, n, k, 128, GK_W4_SYMMETRIC, ws_bytes);
        std::vector<double> tg, tc;
        for (int rep = 0; rep < 5; rep++) {
            spin<<<1, 1, 0, s>>>(2000000000LL); // ~1 s: every call below only enqueues
            for (int i = 0; i < calls; i++) {
                auto t0 = std::chrono::steady_clock::now();
                cudaError_t e = gk_w4_gemm_bf16(d, GK_BF16, n, (const gk_bf16 *)x, k, &w, NULL, 0, NULL, m, 1.0f, 0.0f,
                                                GK_ACT_NONE, ws, ws_bytes, s);
                auto t1 = std::chrono::steady_clock::now();
                if (e != cudaSuccess) {
                    printf("gk error %s\n", gk_failure_reason());
                    return 1;
                }
                tg.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                const float one = 1.0f, zero = 0.0f;
                t0 = std::chrono::steady_clock::now();
                cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, wb, CUDA_R_16BF, (int)k, x,
                             CUDA_R_16BF, (int)k, &zero, d, CUDA_R_16BF, (int)n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT);
                t1 = std::chrono::steady_clock::now();
                tc.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            cudaStreamSynchronize(s);
        }
        printf("M=%lld N=%lld K=%lld (%s, %d warps, %s partials): host us a call, median of %zu: gk_w4_gemm_bf16 "
               "%.2f, cublasGemmEx %.2f\n",
               (long long)m, (long long)n, (long long)k, gk_w4_config_info(pl.config).name ? gk_w4_config_info(pl.config).name : "dequantize + GEMM",
               pl.warps, pl.slots > 1 ? "with" : "no", tg.size(), median(tg), median(tc));
    }
    return 0;
}
