// The mma.sync configurations (0 and 1) at 4096^3, NT and NN, timed after the sweeps' memset
// flush: for comparing two builds of gk_gemm.cuh side by side.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_mma_sync_probe.cu
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

int main(int argc, char **argv)
{
    const int64_t n = 4096;
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)n * n * 4);
    for (int cfg = 0; cfg < 2; cfg++)
        for (int tb = 1; tb >= 0; tb--) {
            const double t = median_s([&] {
                return gk_gemm_ex(cfg, 1, GK_BF16, m.d, GK_BF16, n, m.a, n, 0, m.b, n, tb, NULL, 0, NULL, n, n, n, 1.0f, 0.0f,
                                  GK_ACT_NONE, NULL, 0, 0);
            });
            printf("%s cfg %d %s 4096^3: %7.1f us %6.1f TFLOP/s\n", argc > 1 ? argv[1] : "", cfg, tb ? "NT" : "NN", t * 1e6,
                   2.0 * n * n * n / t * 1e-12);
        }
    return 0;
}
