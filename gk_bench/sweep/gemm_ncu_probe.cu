// One GEMM for a profiler to read: gk's dispatcher (or configuration CONFIG) or cuBLAS, on
// bf16 operands filled as the sweeps fill them, launched 3 times (ncu picks the launches).
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_ncu_probe.cu \
//        -lcublas -o gemm_ncu_probe
//   ncu --metrics ... ./gemm_ncu_probe gk|cublas M N K TA TB [CONFIG]
//   GK_PROBE_NO_WORKSPACE=1: gk without a workspace (rows off 128-byte lines read in place)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cstring>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main(int argc, char **argv)
{
    if (argc < 7) {
        printf("usage: %s gk|cublas M N K TA TB [CONFIG]\n", argv[0]);
        return 2;
    }
    const bool gk = !strcmp(argv[1], "gk");
    const int64_t m = atoll(argv[2]), n = atoll(argv[3]), k = atoll(argv[4]);
    const int ta = atoi(argv[5]), tb = atoi(argv[6]), config = argc > 7 ? atoi(argv[7]) : -1;
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    const size_t bytes = (size_t)2 * std::max({m * k, n * k, m * n}); /* the largest operand's */
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    const bool no_ws = getenv("GK_PROBE_NO_WORKSPACE") != NULL;
    for (int i = 0; i < 3; i++) {
        if (gk)
            CK(gk_gemm_ex(config, config < 0 ? 0 : 1, GK_BF16, buf.d, GK_BF16, n, buf.a, lda, ta, buf.b, ldb, tb, NULL, 0,
                          NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, no_ws ? NULL : buf.ws, no_ws ? 0 : bytes, 0));
        else
            CK(cublas_bf16(buf.d, buf.a, lda, ta, buf.b, ldb, tb, (int)m, (int)n, (int)k));
    }
    CK(cudaDeviceSynchronize());
    printf("%s %lldx%lldx%lld ta %d tb %d: done\n", argv[1], (long long)m, (long long)n, (long long)k, ta, tb);
    return 0;
}
