// Does an operand row pitch that is 16-byte but not 128-byte aligned cost the wgmma GEMM, and
// which operand's? Times gk_gemm_bf16 (dispatcher) and cuBLAS (NT, lda = ldb = K or K rounded up
// to 64) with both operands' rows on 128-byte lines, A or B alone off them, both off (no
// workspace: read in place), and both off with gk_gemm_workspace_bytes of workspace (the plan's
// repack), L2 flushed before each call. The L2 promotion experiment built this probe against
// copies of gk_mma.cuh with gk_tma_encode's promotion fixed (PROBE_NAME names the build).
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_pitch_probe.cu \
//        -lcublas -o gemm_pitch_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

#ifndef PROBE_NAME
#define PROBE_NAME "gk"
#endif

int main()
{
    const size_t bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    const int64_t shapes[][3] = {{8976, 1824, 11240}, {1959, 10552, 552}, {342, 8480, 776},
                                 {4096, 4096, 4040},  {2048, 2048, 2040},  {7613, 88, 3696},
                                 {8266, 10296, 144},  {15055, 1360, 96}};
    static const char *names[] = {"both padded", "A off 128 B", "B off 128 B", "both off", "both off, workspace"};
    for (int rep = 0; rep < 2; rep++)
        for (const auto &sh : shapes) {
            const int64_t m = sh[0], n = sh[1], k = sh[2], kp = (k + 63) / 64 * 64;
            for (int mode = 0; mode < 5; mode++) {
                const int64_t lda = mode == 0 || mode == 2 ? kp : k, ldb = mode == 0 || mode == 1 ? kp : k;
                void *ws = mode == 4 ? buf.ws : NULL;
                const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, 0, lda, 1, ldb);
                const double tg = median_s([&] {
                    return gk_gemm_bf16(buf.d, GK_BF16, n, (const gk_bf16 *)buf.a, lda, 0, (const gk_bf16 *)buf.b, ldb, 1,
                                        NULL, 0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws ? bytes : 0, 0);
                });
                const double tc = median_s([&] { return cublas_bf16(buf.d, buf.a, lda, 0, buf.b, ldb, 1, (int)m, (int)n, (int)k); });
                printf("%s %lldx%lldx%lld %s: gk %.1f us (%s), cuBLAS %.1f us: %.3fx\n", PROBE_NAME, (long long)m,
                       (long long)n, (long long)k, names[mode], tg * 1e6, gk_gemm_config_info(pl.config).name, tc * 1e6,
                       tc / tg);
            }
        }
    return 0;
}
