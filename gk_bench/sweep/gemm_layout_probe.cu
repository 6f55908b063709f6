// Does the layout cost the large wgmma tiles, and does it depend on the operands' values or row
// pitch? Times the dispatcher, the 128 x 256 tile alone and in 2-block clusters, and cuBLAS at
// 4096^3 and 8192^3 in the four layouts: operands as the sweeps filled them before this probe
// (bit patterns linear in the index, magnitudes in [0.5, 1)) or as sweep_util.h's fill does now
// (uniform in [-4, 4) from a mixing hash, as gk_bench fills them); leading dimensions exact
// (power-of-two row pitches) or 64 values longer. The L2 flushed and 150 ms of rest before each
// timing (back to back, the H200's clock falls with its power draw), two rounds. PROBE_NAME
// names the build.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_layout_probe.cu \
//        -lcublas -o gemm_layout_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <chrono>
#include <thread>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

// The sweeps' fill before gemm_layout_probe: bit patterns linear in the index, magnitudes in
// [0.5, 1) (valid as f32 and as bf16 / f16 pairs)
static __global__ void fill_patterned(unsigned *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = 0x3f003f00u | (((unsigned)(i * 2654435761u + seed) >> 7) & 0x807f807fu);
}

#ifndef PROBE_NAME
#define PROBE_NAME "gk"
#endif

int main()
{
    const size_t bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    static const char *tiles[] = {"wg128x256x64_s4_ptc", "wg128x256x64_s4_pt"};
    static const char *layouts[] = {"NN", "NT", "TN", "TT"};
    const int ntiles = 2, configs[2] = {config_named(tiles[0]), config_named(tiles[1])};
    auto rested = [&](auto f) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        return median_s(f);
    };
    for (int rep = 0; rep < 2; rep++)
        for (int data = 0; data < 2; data++) {
            if (data == 0) {
                fill_patterned<<<2048, 256>>>((unsigned *)buf.a, bytes / 4, 1);
                fill_patterned<<<2048, 256>>>((unsigned *)buf.b, bytes / 4, 2);
            } else {
                fill<<<2048, 256>>>((unsigned *)buf.a, bytes / 4, 11);
                fill<<<2048, 256>>>((unsigned *)buf.b, bytes / 4, 12);
            }
            CK(cudaDeviceSynchronize());
            for (int64_t s : {4096, 8192})
                for (int pad = 0; pad <= 64; pad += 64)
                    for (int layout = 0; layout < 4; layout++) {
                        const int ta = layout >> 1, tb = layout & 1;
                        const int64_t m = s, n = s, k = s, lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad;
                        const double tc = rested(
                            [&] { return cublas_bf16(buf.d, buf.a, lda, ta, buf.b, ldb, tb, (int)m, (int)n, (int)k); });
                        printf("%s %s %lld^3 %s pad %d: cuBLAS %.1f us", PROBE_NAME, data ? "uniform" : "sweep fill",
                               (long long)s, layouts[layout], pad, tc * 1e6);
                        for (int t = -1; t < ntiles; t++) { /* -1: the dispatcher */
                            const int c = t < 0 ? -1 : configs[t];
                            const double tg = rested([&] {
                                return gk_gemm_ex(c, c < 0 ? 0 : 1, GK_BF16, buf.d, GK_BF16, n, buf.a, lda, ta, buf.b,
                                                  ldb, tb, NULL, 0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws,
                                                  bytes, 0);
                            });
                            printf(", %s %.1f (%.3fx)", t < 0 ? "dispatcher" : tiles[t], tg * 1e6, tc / tg);
                        }
                        printf("\n");
                        fflush(stdout);
                    }
        }
    return 0;
}
