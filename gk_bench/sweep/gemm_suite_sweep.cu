// The GEMM suite (gk_bench/gemm_suite.h) on every configuration and a few K splits, against
// cuBLAS and the dispatcher's pick, to see what the shipped kernels could reach with a perfect
// choice and what the dispatcher leaves. Plain nvcc, so it builds for the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_suite_sweep.cu \
//        -lcublas -o gemm_suite_sweep
//   ./gemm_suite_sweep [FIRST [LAST]]       suite shapes FIRST .. LAST (default: all)
//   SWEEP_CONFIGS=12,13 ./gemm_suite_sweep  only those configurations (and cuBLAS and the dispatcher)
//   SWEEP_SPLIT_K=128 ./gemm_suite_sweep     splits down to 128 of K each (default 512, the dispatcher's bound)
// Prints a line per (shape, configuration, splits) that ran, "row ..." (times in us), then a line
// per shape "best ..." (cuBLAS, the dispatcher, the fastest run) and the suite's geometric means,
// then the dispatcher's table (GK_GEMM_TUNED in gk_gemm_sm90.cuh; gemm_tuned_table.py splices it in)
// between "table begin" and "table end": a shape's fastest configuration and splits where they beat
// the time model's pick (timed on its own, the table left out) by 5% or more, else "model". Problems of more than 5e10 FLOPs rest 150 ms before each timing: back to
// back, the H200's clock drifts with its power draw and the later run of two is slower.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <cublas_v2.h>

#include "gk_bench/gemm_suite.h"
#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"


int main(int argc, char **argv)
{
    const int count = (int)(sizeof gk_gemm_suite / sizeof gk_gemm_suite[0]);
    const int first = argc > 1 ? atoi(argv[1]) : 0, last = argc > 2 ? atoi(argv[2]) : count - 1;
    const std::string only_list = getenv("SWEEP_CONFIGS") ? std::string(",") + getenv("SWEEP_CONFIGS") + "," : "";
    const char *only = only_list.empty() ? NULL : only_list.c_str();
    const int64_t split_k = getenv("SWEEP_SPLIT_K") ? atoi(getenv("SWEEP_SPLIT_K")) : 512;
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)2 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    char *ws;
    CK(cudaMalloc(&ws, ws_bytes));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    double log_pick = 0, log_best = 0;
    int shapes = 0;
    std::string table;
    for (int i = first; i <= last && i < count; i++) {
        const GkGemmSuiteShape &q = gk_gemm_suite[i];
        const int64_t m = q.m, n = q.n, k = q.k, lda = q.ta ? m : k, ldb = q.tb ? k : n;
        if ((q.ta ? k : m) * lda * 2 > (int64_t)bytes || (q.tb ? n : k) * ldb * 2 > (int64_t)bytes ||
            m * n * 2 > (int64_t)bytes) {
            printf("skip %d %s: past the buffers\n", i, q.name);
            continue;
        }
        const bool rest = 2.0 * m * n * k > 5e10;
        auto timed = [&](auto f) {
            if (rest) std::this_thread::sleep_for(std::chrono::milliseconds(150));
            return median_s(f);
        };
        auto run = [&](int config, int splits) {
            return gk_gemm_ex(config, splits, GK_BF16, buf.d, GK_BF16, n, buf.a, lda, q.ta, buf.b, ldb, q.tb, NULL, 0,
                              NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws_bytes, 0);
        };
        const double t_cublas = timed([&] { return cublas_bf16(buf.d, buf.a, lda, q.ta, buf.b, ldb, q.tb, (int)m, (int)n, (int)k); });
        const double t_pick = timed([&] { return run(-1, 0); });
        const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, q.ta, lda, q.tb, ldb);
        /* the time model's pick (the table left out): the table's entries are measured against it */
        gk_gemm_plan mp;
        const int64_t rows_a = q.ta ? k : m, cols_a = q.ta ? m : k, rows_b = q.tb ? n : k, cols_b = q.tb ? k : n;
        gk_gemm_plan_impl(m, n, k, rows_a, cols_a, gk_gemm_row_align(buf.a, lda), rows_b, cols_b,
                          gk_gemm_row_align(buf.b, ldb), sms, gk_gemm_wg_ready(), !q.ta, q.tb, 0, &mp);
        const double t_model = mp.config == pl.config && mp.splits == pl.splits ? t_pick : timed([&] {
            return run(mp.config, mp.splits);
        });
        double t_best = t_pick;
        int best_c = pl.config, best_s = pl.splits;
        for (int c = 0; c < gk_gemm_config_count(); c++) {
            const gk_gemm_config ci = gk_gemm_config_info(c);
            if (!ci.vec && ci.stages) continue; // the element-wise-load kernel: only for unaligned rows without a workspace
            if (!ci.stages && 2.0 * m * n * k > 1e9) continue; // the direct tiles: tiny problems only
            if (only && !strstr(only, (std::string(",") + std::to_string(c) + ",").c_str())) continue;
            const int64_t tiles = gk_ceil_div(m, ci.bm) * gk_ceil_div(n, ci.bn);
            for (int s : {1, 2, 3, 4, 6, 8, 16}) {
                if (s > 1 && (k / s < split_k || tiles * s > 4 * sms || (size_t)(s * m * n * 4) > ws_bytes / 2)) continue;
                if (run(c, s) != cudaSuccess) { // refused (a swapped tile with A transposed): not a candidate
                    (void)cudaGetLastError();
                    break;
                }
                const double t = timed([&] { return run(c, s); });
                printf("row %d %s %s %lldx%lldx%lld cfg %d %s splits %d: %.1f us (cuBLAS %.1f)\n", i, q.name,
                       q.ta ? (q.tb ? "TT" : "TN") : (q.tb ? "NT" : "NN"), (long long)m, (long long)n, (long long)k, c,
                       ci.name, s, t * 1e6, t_cublas * 1e6);
                if (t < t_best) {
                    t_best = t;
                    best_c = c;
                    best_s = s;
                }
            }
        }
        if (lda % 8 || ldb % 8) { // rows not 16-byte aligned: also without a workspace (no repack)
            const double t = timed([&] {
                return gk_gemm_ex(-1, 0, GK_BF16, buf.d, GK_BF16, n, buf.a, lda, q.ta, buf.b, ldb, q.tb, NULL, 0, NULL, m,
                                  n, k, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, 0);
            });
            printf("row %d %s %s %lldx%lldx%lld no workspace (element-wise loads): %.1f us (cuBLAS %.1f)\n", i, q.name,
                   q.ta ? (q.tb ? "TT" : "TN") : (q.tb ? "NT" : "NN"), (long long)m, (long long)n, (long long)k, t * 1e6,
                   t_cublas * 1e6);
        }
        printf("best %d %s %s %lldx%lldx%lld: cuBLAS %.1f us, dispatcher %.1f (cfg %d %s, splits %d: %.3fx), fastest "
               "%.1f (cfg %d %s, splits %d: %.3fx)\n",
               i, q.name, q.ta ? (q.tb ? "TT" : "TN") : (q.tb ? "NT" : "NN"), (long long)m, (long long)n, (long long)k,
               t_cublas * 1e6, t_pick * 1e6, pl.config, gk_gemm_config_info(pl.config).name, pl.splits,
               t_cublas / t_pick, t_best * 1e6, best_c, gk_gemm_config_info(best_c).name, best_s, t_cublas / t_best);
        fflush(stdout);
        if (t_model < t_best) {
            t_best = t_model;
            best_c = mp.config;
            best_s = mp.splits;
        }
        const bool better = t_best < t_model / 1.05;
        const std::string tile = better ? std::string(gk_gemm_config_info(best_c).name).substr(strlen("gk_gemm_bf16_")) : "model";
        char entry[200];
        snprintf(entry, sizeof entry, "    X(%lld, %lld, %lld, %d, %d, %s, %d) /* %s %s: %.3fx -> %.3fx cuBLAS */ \\\n",
                 (long long)m, (long long)n, (long long)k, q.ta, q.tb, tile.c_str(), better ? best_s : 0, q.name,
                 q.ta ? (q.tb ? "TT" : "TN") : (q.tb ? "NT" : "NN"), t_cublas / t_model,
                 better ? t_cublas / t_best : t_cublas / t_model);
        table += entry;
        log_pick += log(t_cublas / t_pick);
        log_best += log(t_cublas / t_best);
        shapes++;
    }
    printf("table begin\n%stable end\n", table.c_str());
    if (shapes)
        printf("suite: %d shapes, geometric mean speed against cuBLAS: dispatcher %.3fx, fastest configuration %.3fx\n",
               shapes, exp(log_pick / shapes), exp(log_best / shapes));
    return 0;
}
