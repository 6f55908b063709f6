// The stream-K tail against whole tiles on the suite's shapes whose last wave is part full: a
// row is a shape, the tile the dispatcher picks for it (or one with a tail beside a ping-pong pick,
// which has none: its rows say refused), and its times whole (splits 1), with the
// last wave's tiles shared by k-tiles among all blocks (GK_GEMM_SK_TAIL) and with those and a full
// wave (GK_GEMM_SK_TAIL_WAVE), and cuBLAS's, in us. Rounds of every row, the variants' order
// turned each round (a process's first-timed kernel can read high). On a tree without the tail
// (GK_GEMM_SK_TAIL undefined) it times whole tiles and cuBLAS only: the baseline beside a trial
// build (tools/trial_build.sh). Plain nvcc, for the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_sk_tail_probe.cu \
//        -lcublas -o gemm_sk_tail_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main(int argc, char **argv)
{
    const int rounds = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 2; // argv[1]: rounds, or a name (trial_build.sh)
    const struct {
        const char *name;
        int64_t m, n, k;
        int ta, tb;
        const char *tile;
    } rows[] = {{"square", 4096, 4096, 4096, 0, 0, "wg128x256x64_s4_ptc"},
                {"square", 4096, 4096, 4096, 0, 1, "wg128x256x64_s4_ptc"},
                {"square", 4096, 4096, 4096, 1, 0, "wg128x256x64_s4_ptc"},
                {"square", 4096, 4096, 4096, 1, 1, "wg128x256x64_s4_ptc"},
                {"square", 8192, 8192, 8192, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-8b qkv", 4096, 6144, 4096, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-8b o", 8192, 4096, 4096, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-8b down", 4096, 4096, 14336, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-70b o", 2048, 8192, 8192, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-8b gate/up", 1024, 28672, 4096, 0, 1, "wg128x256x64_s4_ptc"},
                {"llama3-8b gate/up", 256, 28672, 4096, 0, 1, "wg128x256x64_s4_pt"},
                {"random 8", 8976, 1824, 11240, 0, 1, "wg128x192x64_s4_pt"},
                {"random 8", 8976, 1824, 11240, 0, 1, "wg128x256x64_s4_pt"},
                {"random 11", 1959, 10552, 552, 0, 1, "wg128x128x64_s6_pt"},
                {"random 11", 1959, 10552, 552, 0, 1, "wg128x128x64_s6_ppt"}};
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
#ifdef GK_GEMM_SK_TAIL
    const int modes[3] = {1, GK_GEMM_SK_TAIL, GK_GEMM_SK_TAIL_WAVE}, nmodes = 3;
#else
    const int modes[3] = {1, 0, 0}, nmodes = 1;
#endif
    const char *mode_names[3] = {"whole", "tail", "tail+wave"};
    for (int round = 0; round < rounds; round++)
        for (const auto &r : rows) {
            const int c = config_named(r.tile);
            const int64_t lda = r.ta ? r.m : r.k, ldb = r.tb ? r.k : r.n;
            double t[4] = {0, -1e-6, -1e-6, 0};
            for (int i = 0; i < 4; i++) {
                const int v = (i + round) % 4; // 3: cuBLAS
                if (v != 3 && v >= nmodes) continue;
                if (v == 3) {
                    t[3] = median_s([&] {
                        return cublas_bf16(buf.d, buf.a, lda, r.ta, buf.b, ldb, r.tb, (int)r.m, (int)r.n, (int)r.k);
                    });
                    continue;
                }
                auto run = [&] {
                    return gk_gemm_ex(c, modes[v], GK_BF16, buf.d, GK_BF16, r.n, buf.a, lda, r.ta, buf.b, ldb, r.tb, NULL,
                                      0, NULL, r.m, r.n, r.k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws, ws_bytes, 0);
                };
                if (run() != cudaSuccess) {
                    printf("%s %s refused: %s\n", r.tile, mode_names[v], gk_failure_reason());
                    (void)cudaGetLastError();
                    t[v] = -1;
                    continue;
                }
                t[v] = median_s(run);
            }
            printf("round %d %s %s%s %lldx%lldx%lld %s: cuBLAS %.1f us, whole %.1f, tail %.1f, tail+wave %.1f; "
                   "cuBLAS / gk %.3f %.3f %.3f\n",
                   round, r.name, r.ta ? "T" : "N", r.tb ? "T" : "N", (long long)r.m, (long long)r.n, (long long)r.k,
                   r.tile, t[3] * 1e6, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[3] / t[0], t[3] / t[1], t[3] / t[2]);
            fflush(stdout);
        }
    return 0;
}
