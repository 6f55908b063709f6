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

static __global__ void pair_read(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x ^= p[i].x ^ p[i].w;
    if (x == 0x12345678u) *sink = x;
}

template <class F> static double pair_median_us(F f, bool dirty, char *flush, unsigned *sink)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) CK(f());
    std::vector<double> t;
    for (int i = 0; i < 21; i++) {
        if (dirty)
            CK(cudaMemsetAsync(flush, i, 128 << 20));
        else
            pair_read<<<1056, 256>>>((const uint4 *)flush, (128 << 20) / 16, sink);
        cudaEventRecord(a);
        CK(f());
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1e3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return sweep_median(t);
}

int main(int argc, char **argv)
{
    const size_t bytes = (size_t)1 << 30, ws_bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    char *ws, *flush;
    unsigned *sink;
    CK(cudaMalloc(&ws, ws_bytes));
    CK(cudaMalloc(&flush, 128 << 20));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(flush, 1, 128 << 20));
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
        const double cd = pair_median_us(cb, true, flush, sink), gd = pair_median_us(gk, true, flush, sink);
        const double cc = pair_median_us(cb, false, flush, sink), gc = pair_median_us(gk, false, flush, sink);
        printf("%s %lldx%lldx%lld gk cfg %d %s splits %d: dirty flush cuBLAS %.1f gk %.1f us (%.3fx); clean flush "
               "cuBLAS %.1f gk %.1f us (%.3fx)\n",
               lay, (long long)m, (long long)n, (long long)k, shown, gk_gemm_config_info(shown).name,
               config >= 0 ? splits : pl.splits, cd, gd, cd / gd, cc, gc, cc / gc);
        fflush(stdout);
    }
    return 0;
}
