// Where the odd shape's time goes (4095 x 4097 x 4093 NN, D ldd 4097): the repack alone, the
// GEMM alone on rows laid out as the repack leaves them (lda 4096, ldb 4160) or with other
// leading dimensions, and the repack followed by a GEMM on other buffers. Each row is the
// median of 21 launches after the memset flush (sweep_util.h), all rows run twice.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_odd_split_probe.cu
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

int main()
{
    const int M = 4095, N = 4097, K = 4093;
    const int c128x256 = config_named("wg128x256x64_s4_pt"), c256x128 = config_named("wg256x128x64_s4_pt");
    const size_t G = (size_t)160 << 20;
    SweepGemmBuffers x = sweep_gemm_buffers(G);
    char *a2, *b2;
    CK(cudaMalloc(&a2, G));
    CK(cudaMalloc(&b2, G));
    fill<<<2048, 256>>>((unsigned *)a2, G / 4, 3);
    fill<<<2048, 256>>>((unsigned *)b2, G / 4, 4);
    CK(cudaDeviceSynchronize());
    const double fl = 2.0 * M * N * K;
    auto gemm = [&](const void *a, int64_t lda, const void *b, int64_t ldb, int64_t ldd, int cfg) {
        return gk_gemm_ex(cfg, 0, GK_BF16, x.d, GK_BF16, ldd, a, lda, 0, b, ldb, 0, NULL, 0, NULL, M, N, K, 1.0f, 0.0f,
                          GK_ACT_NONE, x.ws, G, 0);
    };
    auto pack = [&]() {
        char *ws = x.ws;
        const void *pa = x.a, *pb = x.b;
        int64_t lda = K, ldb = N;
        gk_gemm_pack_job ja = gk_gemm_pack_job_of(&ws, &pa, &lda, M, K, gk_gemm_pack_bytes(M, K, 0));
        gk_gemm_pack_job jb = gk_gemm_pack_job_of(&ws, &pb, &ldb, K, N, gk_gemm_pack_bytes(K, N, 0));
        return gk_gemm_pack_launch("probe", ja, jb, (int64_t)1 << 30, 0);
    };
    auto show = [&](const char *what, double t, double flops) {
        printf("%-58s %8.1f us %7.1f TFLOP/s\n", what, t * 1e6, flops > 0 ? flops / t * 1e-12 : 0.0);
    };
    for (int r = 0; r < 2; r++) {
        show("4096^3 NN dispatcher", median_s([&] {
                 return gk_gemm_ex(-1, 0, GK_BF16, x.d, GK_BF16, 4096, x.a, 4096, 0, x.b, 4096, 0, NULL, 0, NULL, 4096,
                                   4096, 4096, 1.0f, 0.0f, GK_ACT_NONE, x.ws, G, 0);
             }), 2.0 * 4096 * 4096 * 4096);
        show("4096^3 NN 256x128", median_s([&] {
                 return gk_gemm_ex(c256x128, 0, GK_BF16, x.d, GK_BF16, 4096, x.a, 4096, 0, x.b, 4096, 0, NULL, 0, NULL, 4096,
                                   4096, 4096, 1.0f, 0.0f, GK_ACT_NONE, x.ws, G, 0);
             }), 2.0 * 4096 * 4096 * 4096);
        show("odd: repack + GEMM (lda 4093, ldb 4097, ldd 4097)", median_s([&] { return gemm(x.a, K, x.b, N, N, -1); }), fl);
        show("odd: repack alone", median_s(pack), 0);
        show("odd: GEMM alone, lda 4096 ldb 4160 ldd 4097 (repack's)", median_s([&] { return gemm(a2, 4096, b2, 4160, N, -1); }), fl);
        show("odd: GEMM alone, (4096, 4160, 4097), 128x256", median_s([&] { return gemm(a2, 4096, b2, 4160, N, c128x256); }), fl);
        show("odd: GEMM alone, (4096, 4160, 4097), 256x128", median_s([&] { return gemm(a2, 4096, b2, 4160, N, c256x128); }), fl);
        show("odd: repack + GEMM, 128x256", median_s([&] { return gemm(x.a, K, x.b, N, N, c128x256); }), fl);
        show("odd: GEMM alone, lda 4096 ldb 4104 ldd 4097", median_s([&] { return gemm(a2, 4096, b2, 4104, N, -1); }), fl);
        show("odd: GEMM alone, lda 4096 ldb 4160 ldd 4104", median_s([&] { return gemm(a2, 4096, b2, 4160, 4104, -1); }), fl);
        show("odd: GEMM alone, lda 4096 ldb 4104 ldd 4104", median_s([&] { return gemm(a2, 4096, b2, 4104, 4104, -1); }), fl);
        show("odd: repack, then GEMM on other rows (4096, 4160, 4097)", median_s([&] {
                 cudaError_t e = pack();
                 return e != cudaSuccess ? e : gemm(a2, 4096, b2, 4160, N, -1);
             }), fl);
    }
    return 0;
}
