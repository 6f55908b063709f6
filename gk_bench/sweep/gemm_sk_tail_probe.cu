// The stream-K tail against whole tiles on the suite's shapes whose last wave is part full: a
// row is a shape, the tile the dispatcher picks for it (or one with a tail beside a ping-pong pick,
// which has none: its rows say refused), and its times whole (splits 1), with the
// last wave's tiles shared by k-tiles among all blocks (GK_GEMM_SK_TAIL) and with those and a full
// wave (GK_GEMM_SK_TAIL_WAVE), and cuBLAS's, in us. Rounds of every row, the variants' order
// turned each round (a process's first-timed kernel can read high). On a tree without the tail
// (GK_GEMM_SK_TAIL undefined) it times whole tiles and cuBLAS only: the baseline beside a trial
// build (tools/trial_build.sh); its last rows (a wave or less) time the k-loop of the tiles that
// sum splits in the kernel, whole, for trials of it. -DGK_SK_PROBE_SUITE (a tree with the tail): every suite row
// whose pick is a tile with a tail, whole K over more tiles than SMs, instead of the rows below,
// and the suite mean of those rows whole and at the best of the three. Plain nvcc, for the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_sk_tail_probe.cu \
//        -lcublas -o gemm_sk_tail_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cublas_v2.h>

#include <cmath>

#include "gk_bench/gemm_suite.h"
#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

struct SkRow {
    const char *name;
    int64_t m, n, k;
    int ta, tb;
    int config;
};

// One row: whole tiles, the tails (where the tree has them) and cuBLAS, in an order turned by
// `round`; the times in t[4] (whole, tail, tail + wave, cuBLAS; -1 where not timed: refused, or no
// tail in this tree).
static void time_row(const SkRow &r, int round, const SweepGemmBuffers &buf, size_t ws_bytes, double t[4])
{
#ifdef GK_GEMM_SK_TAIL
    const int modes[3] = {1, GK_GEMM_SK_TAIL, GK_GEMM_SK_TAIL_WAVE}, nmodes = 3;
#else
    const int modes[3] = {1, 0, 0}, nmodes = 1;
#endif
    const char *mode_names[3] = {"whole", "tail", "tail+wave"};
    const int64_t lda = r.ta ? r.m : r.k, ldb = r.tb ? r.k : r.n;
    t[0] = 0;
    t[1] = t[2] = -1;
    for (int i = 0; i < 4; i++) {
        const int v = (i + round) % 4; // 3: cuBLAS
        if (v != 3 && v >= nmodes) continue;
        if (v == 3) {
            t[3] = median_s([&] { return cublas_bf16(buf.d, buf.a, lda, r.ta, buf.b, ldb, r.tb, (int)r.m, (int)r.n, (int)r.k); });
            continue;
        }
        auto run = [&] {
            return gk_gemm_ex(r.config, modes[v], GK_BF16, buf.d, GK_BF16, r.n, buf.a, lda, r.ta, buf.b, ldb, r.tb, NULL, 0,
                              NULL, r.m, r.n, r.k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws, ws_bytes, 0);
        };
        if (run() != cudaSuccess) {
            printf("%s %s refused: %s\n", gk_gemm_config_info(r.config).name, mode_names[v], gk_failure_reason());
            (void)cudaGetLastError();
            t[v] = -1;
            continue;
        }
        t[v] = median_s(run);
    }
    char tail[2][48]; // a tail's time and cuBLAS / gk, or "-"
    for (int v = 1; v < 3; v++)
        if (t[v] > 0)
            snprintf(tail[v - 1], sizeof tail[0], "%.1f (%.3f)", t[v] * 1e6, t[3] / t[v]);
        else
            snprintf(tail[v - 1], sizeof tail[0], "-");
    printf("round %d %s %s%s %lldx%lldx%lld %s: cuBLAS %.1f us, whole %.1f (%.3f), tail %s, tail+wave %s "
           "(us, cuBLAS / gk)\n",
           round, r.name, r.ta ? "T" : "N", r.tb ? "T" : "N", (long long)r.m, (long long)r.n, (long long)r.k,
           gk_gemm_config_info(r.config).name + strlen("gk_gemm_bf16_"), t[3] * 1e6, t[0] * 1e6, t[3] / t[0], tail[0],
           tail[1]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 2; // argv[1]: rounds, or a name (trial_build.sh)
    std::vector<SkRow> rows;
#ifdef GK_SK_PROBE_SUITE
#ifndef GK_GEMM_SK_TAIL
#error "GK_SK_PROBE_SUITE times the stream-K tail: build it on a tree that has it"
#endif
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (const GkGemmSuiteShape &q : gk_gemm_suite) {
        const gk_gemm_plan pl = gk_gemm_plan_for(q.m, q.n, q.k, q.ta, q.ta ? q.m : q.k, q.tb, q.tb ? q.k : q.n);
        const gk_gemm_config f = gk_gemm_config_info(pl.config);
        if (!f.wgmma || !GK_GEMM_SK_TAKES(f.persistent, f.bm) || pl.splits > 1 ||
            gk_ceil_div(q.m, f.bm) * gk_ceil_div(q.n, f.bn) <= sms)
            continue;
        rows.push_back({q.name, q.m, q.n, q.k, q.ta, q.tb, pl.config});
    }
    printf("%zu suite rows on a tile with a tail, whole K, more tiles than SMs\n", rows.size());
#else
    const struct {
        const char *name;
        int64_t m, n, k;
        int ta, tb;
        const char *tile;
    } fixed[] = {{"square", 4096, 4096, 4096, 0, 0, "wg128x256x64_s4_ptc"},
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
                 {"random 11", 1959, 10552, 552, 0, 1, "wg128x128x64_s6_ppt"},
                 // one wave or less (no tail): the PERSIST 3 tiles' k-loop alone
                 {"llama3-8b qkv", 256, 6144, 4096, 0, 1, "wg128x128x64_s6_pt"},
                 {"random 4", 342, 8480, 776, 0, 1, "wg128x256x64_s4_pt"},
                 {"llama3-70b qkv", 512, 10240, 8192, 0, 1, "wg128x160x64_s5_pt"}};
    for (const auto &r : fixed) rows.push_back({r.name, r.m, r.n, r.k, r.ta, r.tb, config_named(r.tile)});
#endif
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    for (int round = 0; round < rounds; round++) {
        double log_whole = 0, log_best = 0;
        int faster = 0;
        for (const SkRow &r : rows) {
            double t[4];
            time_row(r, round, buf, ws_bytes, t);
            double best = t[0];
            for (int v = 1; v < 3; v++)
                if (t[v] > 0 && t[v] < best) best = t[v];
            log_whole += std::log(t[3] / t[0]);
            log_best += std::log(t[3] / best);
            faster += best < t[0] / 1.01;
        }
        printf("round %d: %zu rows, cuBLAS / gk geometric mean whole %.4f, at the best of whole and the tails %.4f; "
               "a tail 1%% faster on %d\n",
               round, rows.size(), std::exp(log_whole / rows.size()), std::exp(log_best / rows.size()), faster);
    }
    return 0;
}
