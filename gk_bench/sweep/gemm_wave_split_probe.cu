// K splits on shapes of several waves whose last wave is part full: the sweep times splits only
// where a tile's blocks stay under 4 a SM, so these were never timed. A row: a suite shape, a
// configuration, its times whole and in 2, 3 and 4 splits (summed in the kernel on PERSIST 3
// tiles, by a dependent launch otherwise), cuBLAS's, in us. Plain nvcc, for the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_wave_split_probe.cu \
//        -lcublas -o gemm_wave_split_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main()
{
    const struct {
        int64_t m, n, k;
        const char *tile;
    } rows[] = {{8976, 1824, 11240, "wg128x192x64_s4_pt"}, {8976, 1824, 11240, "wg128x256x64_s4_pt"},
                {1959, 10552, 552, "wg128x128x64_s6_pt"},  {64, 57344, 8192, "wg64x128x64_s7_p"},
                {256, 57344, 8192, "wg128x128x64_s6_pt"},  {2048, 57344, 8192, "wg128x256x64_s4_pt"},
                {4096, 4096, 4096, "wg128x256x64_s4_pt"}};
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)2 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    char *ws;
    CK(cudaMalloc(&ws, ws_bytes));
    for (const auto &r : rows) {
        const int c = config_named(r.tile);
        const double t_cublas = median_s([&] { return cublas_bf16(buf.d, buf.a, r.k, 0, buf.b, r.k, 1, (int)r.m, (int)r.n, (int)r.k); });
        const double t_pick = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, buf.d, GK_BF16, r.n, buf.a, r.k, 0, buf.b, r.k, 1, NULL, 0, NULL, r.m, r.n,
                              r.k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws_bytes, 0);
        });
        printf("%lldx%lldx%lld NT %s: cuBLAS %.1f us, dispatcher %.1f", (long long)r.m, (long long)r.n, (long long)r.k,
               r.tile, t_cublas * 1e6, t_pick * 1e6);
        for (int s : {1, 2, 3, 4}) {
            auto run = [&] {
                return gk_gemm_ex(c, s, GK_BF16, buf.d, GK_BF16, r.n, buf.a, r.k, 0, buf.b, r.k, 1, NULL, 0, NULL, r.m, r.n,
                                  r.k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws_bytes, 0);
            };
            if (run() != cudaSuccess) {
                printf(", splits %d refused (%s)", s, gk_failure_reason());
                (void)cudaGetLastError();
                continue;
            }
            printf(", splits %d %.1f", s, median_s(run) * 1e6);
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
