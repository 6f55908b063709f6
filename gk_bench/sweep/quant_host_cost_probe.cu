// Host time of one W4A16 call: gk_w4_gemm_bf16 (argument checks, plan, launches; on the wgmma
// path X's staging, three TMA descriptors encoded and the dependent launches) against
// cublasGemmEx on the bf16 weight of the same shape, each call timed on the CPU alone. The calls
// are enqueued on a stream held back by a spin kernel, so that no call waits for the GPU. The
// weight's bytes are zeros: only the host path is measured.
//   nvcc -std=c++17 -O3 -I. -gencode arch=compute_90a,code=sm_90a -cudart static \
//        -o quant_host_cost_probe gk_bench/sweep/quant_host_cost_probe.cu -lcublas
#define GK_IMPLEMENTATION
#include "gk/gk_quant.cuh"

#include <chrono>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main()
{
    const int64_t shapes[][3] = {{1, 8192, 8192}, {16, 8192, 8192}, {64, 8192, 8192}, {128, 28672, 8192}};
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasSetStream(sweep_cublas(), s);
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
            sweep_spin<<<1, 1, 0, s>>>(2000000000LL); // ~1 s: every call below only enqueues
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
                t0 = std::chrono::steady_clock::now();
                (void)cublas_bf16(d, x, k, 0, wb, k, 1, (int)m, (int)n, (int)k);
                t1 = std::chrono::steady_clock::now();
                tc.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            cudaStreamSynchronize(s);
        }
        printf("M=%lld N=%lld K=%lld (%s, %d warps, %s partials): host us a call, median of %zu: gk_w4_gemm_bf16 "
               "%.2f, cublasGemmEx %.2f\n",
               (long long)m, (long long)n, (long long)k, gk_w4_config_info(pl.config).name ? gk_w4_config_info(pl.config).name : "dequantize + GEMM",
               pl.warps, pl.slots > 1 ? "with" : "no", tg.size(), sweep_median(tg), sweep_median(tc));
    }
    return 0;
}
