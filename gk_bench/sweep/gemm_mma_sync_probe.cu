// The mma.sync configurations (the dispatcher's large and small tiles, 0 and 1) at 4096^3 in the
// four layouts and at 8192^3 NT, timed after the sweeps' memset flush: for comparing two builds
// of gk_gemm.cuh side by side, or candidate tiles given as GK_GEMM_CONFIGS. A TMA-fed
// configuration (VEC 2) runs twice: TMA-fed, then on its cp.async kernels (gk_gemm_tma_off).
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_mma_sync_probe.cu
// -DGK_PROBE_STAGES adds the large tile at 5, 6 and 8 stages (for a k-loop that takes more than 5),
// -DGK_PROBE_BK64 the large tile with k-tiles of 64 in 3 and 4 stages, -DGK_PROBE_TMA_BK64 the
// same TMA-fed, -DGK_PROBE_TMA_STAGES the 32-wide tile TMA-fed in 5 stages;
// -DGK_PROBE_CP_ASYNC_FIRST is argv[2] cp_async_first (below).
#ifdef GK_PROBE_STAGES
#define GK_PROBE_STAGES_X(X)                            \
    X(128x256x32_s5, 128, 256, 32, 64, 64, 5, 1, 1, 1) \
    X(128x256x32_s6, 128, 256, 32, 64, 64, 6, 1, 1, 1) \
    X(128x256x32_s8, 128, 256, 32, 64, 64, 8, 1, 1, 1)
#else
#define GK_PROBE_STAGES_X(X)
#endif
/* the large tile with k-tiles of 64 in 3 and 4 stages, fed by cp.async (VEC 1) or TMA (2) */
#define GK_PROBE_BK64_TILES(X, s3, s4, VEC)             \
    X(s3, 128, 256, 64, 64, 64, 3, 1, 1, VEC) X(s4, 128, 256, 64, 64, 64, 4, 1, 1, VEC)
#ifdef GK_PROBE_BK64
#define GK_PROBE_BK64_X(X) GK_PROBE_BK64_TILES(X, 128x256x64_s3, 128x256x64_s4, 1)
#else
#define GK_PROBE_BK64_X(X)
#endif
#ifdef GK_PROBE_TMA_BK64
#define GK_PROBE_TMA_BK64_X(X) GK_PROBE_BK64_TILES(X, 128x256x64_tma_s3, 128x256x64_tma_s4, 2)
#else
#define GK_PROBE_TMA_BK64_X(X)
#endif
#ifdef GK_PROBE_TMA_STAGES
#define GK_PROBE_TMA_STAGES_X(X) X(128x256x32_tma_s5, 128, 256, 32, 64, 64, 5, 1, 1, 2)
#else
#define GK_PROBE_TMA_STAGES_X(X)
#endif
#if defined(GK_PROBE_STAGES) || defined(GK_PROBE_BK64) || defined(GK_PROBE_TMA_BK64) || defined(GK_PROBE_TMA_STAGES)
#define GK_GEMM_CONFIGS(X)                                                                          \
    GK_GEMM_SHIPPED_CONFIGS(X) GK_PROBE_STAGES_X(X) GK_PROBE_BK64_X(X) GK_PROBE_TMA_BK64_X(X) \
    GK_PROBE_TMA_STAGES_X(X)
#endif
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

int main(int argc, char **argv)
{
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)8192 * 8192 * 2);
    const struct {
        int64_t n;
        int ta, tb;
    } rows[] = {{4096, 0, 1}, {4096, 0, 0}, {4096, 1, 0}, {4096, 1, 1}, {8192, 0, 1}};
    /* argv[2] "cp_async_first": the cp.async kernels of a TMA-fed configuration before the rest */
#ifdef GK_PROBE_CP_ASYNC_FIRST
    const int cp_first = 1;
#else
    const int cp_first = argc > 2 && strcmp(argv[2], "cp_async_first") == 0;
#endif
    /* row by row, each configuration in turn: timed one configuration after another, a process's
       later configurations read up to 16% below their figures timed first (H200) */
    for (const auto &r : rows)
        for (int i = 0; i < GK_GEMM_NMMA + 1; i++) {
            /* the configurations in turn; a TMA-fed one (VEC 2) also on its cp.async kernels, last */
            const int run = cp_first ? (i == 0 ? GK_GEMM_NMMA : i - 1) : i;
            const int cfg = run < GK_GEMM_NMMA ? run : 0;
            if (cfg == GK_GEMM_ELEM_CONFIG || gk_gemm_config_info(cfg).stages == 0) continue; /* not the direct tile: tiny problems */
            if (run == GK_GEMM_NMMA && gk_gemm_config_info(cfg).vec != 2) continue;
            gk_gemm_tma_off = run == GK_GEMM_NMMA;
            const char *feed = gk_gemm_config_info(cfg).vec != 2 ? "" : gk_gemm_tma_off ? " cp.async" : " TMA";
            const int64_t n = r.n;
            const double t = median_s([&] {
                return gk_gemm_ex(cfg, 1, GK_BF16, m.d, GK_BF16, n, m.a, n, r.ta, m.b, n, r.tb, NULL, 0, NULL, n, n, n,
                                  1.0f, 0.0f, GK_ACT_NONE, NULL, 0, 0);
            });
            printf("%s %-26s%-9s %c%c %5lld^3: %8.1f us %6.1f TFLOP/s\n", argc > 1 ? argv[1] : "",
                   gk_gemm_config_info(cfg).name, feed, r.ta ? 'T' : 'N', r.tb ? 'T' : 'N', (long long)n, t * 1e6,
                   2.0 * n * n * n / t * 1e-12);
        }
    return 0;
}
