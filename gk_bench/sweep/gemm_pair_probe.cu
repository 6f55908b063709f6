// One GEMM shape, gk's dispatcher (or a configuration given) beside cuBLAS, timed two ways: after
// the bench's flush (a 128 MiB memset: L2 left full of dirty lines, written back while the GEMM
// reads) and after a clean flush (128 MiB read: L2 full of clean lines). Where gk loses more after
// the dirty flush, its DRAM traffic mixes worse with the write-back. Run under ncu with PAIR_ONCE=1
// for one call of each (after the same flush) to read their grids, bytes and times.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_pair_probe.cu \
//        -lcublas -o gemm_pair_probe
//   ./gemm_pair_probe M N K TA TB [CONFIG SPLITS] ...   (shapes one after another, 5 or 7 numbers each)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cstring>
#include <string>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main(int argc, char **argv)
{
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    char *ws, *flush;
    CK(cudaMalloc(&ws, ws_bytes));
    CK(cudaMalloc(&flush, 128 << 20));
    const bool once = getenv("PAIR_ONCE") != NULL;
    for (int i = 1; i + 4 < argc;) {
        const int64_t m = atoll(argv[i]), n = atoll(argv[i + 1]), k = atoll(argv[i + 2]);
        const int ta = atoi(argv[i + 3]), tb = atoi(argv[i + 4]);
        i += 5;
        int config = -1, splits = 0;
        if (i + 1 < argc && argv[i][0] == 'c') { // "cN sS": a configuration and splits
            config = atoi(argv[i] + 1);
            splits = atoi(argv[i + 1] + 1);
            i += 2;
        }
        const int64_t lda = ta ? m : k, ldb = tb ? k : n;
        auto gk = [&] {
            return gk_gemm_ex(config, splits, GK_BF16, buf.d, GK_BF16, n, buf.a, lda, ta, buf.b, ldb, tb, NULL, 0, NULL, m,
                              n, k, 1.0f, 0.0f, GK_ACT_NONE, ws, ws_bytes, 0);
        };
        auto cb = [&] { return cublas_bf16(buf.d, buf.a, lda, ta, buf.b, ldb, tb, (int)m, (int)n, (int)k); };
        const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, ta, lda, tb, ldb);
        const int shown = config >= 0 ? config : pl.config;
        const char *lay = ta ? (tb ? "TT" : "TN") : (tb ? "NT" : "NN");
        if (once) {
            CK(cb());
            CK(gk());
            CK(cudaDeviceSynchronize());
            CK(cudaMemsetAsync(flush, 3, 128 << 20));
            CK(cb());
            CK(cudaMemsetAsync(flush, 4, 128 << 20));
            CK(gk());
            CK(cudaDeviceSynchronize());
            printf("%s %lldx%lldx%lld: profiled once each after a memset flush (gk cfg %d %s, splits %d)\n", lay,
                   (long long)m, (long long)n, (long long)k, shown, gk_gemm_config_info(shown).name,
                   config >= 0 ? splits : pl.splits);
            continue;
        }
        const double cd = median_s(cb) * 1e6, gd = median_s(gk) * 1e6;
        const double cc = median_s(cb, SWEEP_FLUSH_CLEAN) * 1e6, gc = median_s(gk, SWEEP_FLUSH_CLEAN) * 1e6;
        printf("%s %lldx%lldx%lld gk cfg %d %s splits %d: dirty flush cuBLAS %.1f gk %.1f us (%.3fx); clean flush "
               "cuBLAS %.1f gk %.1f us (%.3fx)\n",
               lay, (long long)m, (long long)n, (long long)k, shown, gk_gemm_config_info(shown).name,
               config >= 0 ? splits : pl.splits, cd, gd, cd / gd, cc, gc, cc / gc);
        fflush(stdout);
    }
    return 0;
}
