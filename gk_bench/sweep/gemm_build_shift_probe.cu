// Why the suite's tiny rows move with the build: two builds of gemm_bench with the same kernels
// read 1-2% apart over the random and odd rows, gk's and cuBLAS's times moving together (1161 x
// 512 x 32: 5.6 and 5.4 us in one build, 6.4 and 6.2 in the other; gk_bench/RESULTS.md). Times
// gk_gemm_bf16 (dispatcher) and cuBLAS on rows that moved, and an empty kernel, with L2 left full
// of dirty lines before each call (as the bench does), full of clean lines, or as the call before
// left it. Build it twice, with PROBE_PAD 0 and, say, 1048576 (bytes of device data and of host
// data the build adds, which move what the linker places after them), run the two alternately in
// one call: rows that differ between the builds only under a flush would point at what a flush
// evicts (the kernels' code, parameters, page-table entries), not at the kernels.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -DPROBE_PAD=0 \
//        gk_bench/sweep/gemm_build_shift_probe.cu -lcublas -o gemm_build_shift_probe_0
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

#ifndef PROBE_PAD
#define PROBE_PAD 0
#endif
__device__ char probe_pad_device[PROBE_PAD + 1];
static char probe_pad_host[PROBE_PAD + 1];

static __global__ void probe_empty(int *never)
{
    if (never && threadIdx.x == 1024) *never = probe_pad_device[0];
}

int main()
{
    probe_pad_host[0] = 1;
    const size_t bytes = (size_t)256 << 20;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    const int64_t shapes[][3] = {{1161, 512, 32}, {126, 160, 288}, {9398, 8, 128}, {5, 200, 32},
                                 {1, 1697, 1},    {825, 64, 16},   {24, 32, 8},    {3, 8, 8},
                                 {9, 11056, 24},  {151, 56, 608},  {5181, 304, 24}, {2018, 2848, 368}};
    static const char *modes[] = {"dirty flush", "clean flush", "no flush"};
    printf("build PROBE_PAD %d (host pad at %p)\n", PROBE_PAD, (void *)probe_pad_host);
    for (int rep = 0; rep < 2; rep++)
        for (int mode = 0; mode < 3; mode++) {
            const double te = median_s([&] {
                probe_empty<<<1, 128>>>(NULL);
                return cudaGetLastError();
            }, mode);
            printf("rep %d %-11s empty kernel %.2f us\n", rep, modes[mode], te * 1e6);
            for (const auto &sh : shapes) {
                const int64_t m = sh[0], n = sh[1], k = sh[2];
                const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, 0, k, 1, k);
                const double tg = median_s([&] {
                    return gk_gemm_bf16(buf.d, GK_BF16, n, (const gk_bf16 *)buf.a, k, 0, (const gk_bf16 *)buf.b, k, 1,
                                        NULL, 0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws, bytes, 0);
                }, mode);
                const double tc = median_s([&] { return cublas_bf16(buf.d, buf.a, k, 0, buf.b, k, 1, (int)m, (int)n, (int)k); },
                                           mode);
                printf("rep %d %-11s %lldx%lldx%lld gk %.2f us (%s), cuBLAS %.2f us: %.3fx\n", rep, modes[mode],
                       (long long)m, (long long)n, (long long)k, tg * 1e6, gk_gemm_config_info(pl.config).name + 13,
                       tc * 1e6, tc / tg);
            }
        }
    return 0;
}
