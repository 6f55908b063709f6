// Decode-like GEMM shapes (x[M, 8192] w[N, 8192]^T, M = 16 or 128): every wgmma configuration at
// a range of K splits, timed next to cuBLAS in the same process, each checked against cuBLAS
// first. These shapes are bound by the bytes of w, so the question is which tile and split
// count keep every SM streaming. Plain nvcc, so it builds anywhere:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_decode_sweep.cu -lcublas -o gemm_decode_sweep
//   ./gemm_decode_sweep             every configuration, then the skinny kernel
//   ./gemm_decode_sweep skinny      the skinny kernel only (M = 1 and 16), as built (-D GK_GEMM_SKINNY_*)
//   ./gemm_decode_sweep mid         64 < M <= 128, swapped tiles up to two tile rows included
// The candidates: the shipped wgmma configurations, then the ones under trial.
#define GK_GEMM_WG_CONFIGS(X)               \
    X(wg128x256x64_s4, 128, 256, 4, 0, 679) \
    X(wg256x128x64_s4, 256, 128, 4, 0, 670) \
    X(wg128x128x64_s6, 128, 128, 6, 0, 623) \
    X(wg128x128x64_s4_p, 128, 128, 4, 1, 622) \
    X(wg16x128x64_s8_p, 16, 128, 8, 1, 58)    \
    X(wg64x128x64_s7_p, 64, 128, 7, 1, 1)     \
    X(wg64x128x64_s8, 64, 128, 8, 0, 1)       \
    X(wg128x64x64_s8, 128, 64, 8, 0, 426)     \
    X(wg128x64x64_s6_p, 128, 64, 6, 1, 426)
// Rejected here: the 64 x 128 swapped tile not persistent (8 stages) and the 128 x 64 tile
// persistent (6 stages); logs gk_bench/results/2026-11-30/gemm_decode_sweep_*_box*.txt, in the tree
// at commit 5370d73.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
// The skinny kernel (M <= 16, NT) is a rejected candidate: the patch gk_bench/sweep/gemm_skinny_m16.patch,
// in the tree at commit 6a4dc67 (for the header at 0d1db38), builds it, and this sweep times it as
// configuration -2.
#ifndef GK_GEMM_SKINNY
#define GK_GEMM_SKINNY 1 // without the patch the loops start at configuration 1
#endif

#include <cmath>
#include <cstring>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s: cublas %d\n", #x, (int)s_); exit(1); } } while (0)

static cublasHandle_t handle;

// Row-major D[M, N] = x[M, K] w[N, K]^T through column-major cuBLAS: D^T = w x^T.
static int ldw_pad;
static cudaError_t cublas_nt(void *d, const void *x, const void *w, int m, int n, int k)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k + ldw_pad, x, CUDA_R_16BF, k,
                                    &zero, d, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

int main(int argc, char **argv)
{
    CB(cublasCreate(&handle));
    const size_t G = (size_t)1 << 30;
    const SweepGemmBuffers bufs = sweep_gemm_buffers(G);
    char *x = bufs.a, *w = bufs.b, *d = bufs.d, *ws = bufs.ws;
    char *dref;
    CK(cudaMalloc(&dref, G / 4)); // D of the largest shape, 8192^2 bf16
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // copy bandwidth: a device-to-device copy of 512 MiB, read + write bytes
    const double copy = 2.0 * (G / 2) / median_s([&] { return cudaMemcpyAsync(d, ws, G / 2, cudaMemcpyDeviceToDevice); }) * 1e-9;
    printf("copy %.1f GB/s, %d SMs\n", copy, sms);
    // "one CFG SPLITS M N K": three launches, no timing (for ncu); CFG -3 is cuBLAS
    if (argc == 7 && !strcmp(argv[1], "one")) {
        const int cfg = atoi(argv[2]), sp = atoi(argv[3]), m = atoi(argv[4]), n = atoi(argv[5]), k = atoi(argv[6]);
        for (int i = 0; i < 3; i++)
            CK(cfg == -3 ? cublas_nt(d, x, w, m, n, k)
                         : gk_gemm_ex(cfg, sp, GK_BF16, d, GK_BF16, n, x, k, 0, w, k, 1, NULL, 0, NULL, m, n, k, 1.0f,
                                      0.0f, GK_ACT_NONE, ws, G, 0));
        CK(cudaDeviceSynchronize());
        return 0;
    }
    const int only_skinny = argc > 1 && !strcmp(argv[1], "skinny");
    // "pad": w's rows 128 bytes longer than K (ldb = K + 64), off a power-of-two stride
    const int pad = argc > 2 && !strcmp(argv[2], "pad") ? 64 : 0;
    printf("ldb = K + %d\n", pad);
    ldw_pad = pad;
#ifdef GK_GEMM_SKINNY_SMEM
    printf("skinny kernel: %d warps a block, %d row groups, %d chunks a step, %d stages, %d B shared memory\n",
           GK_GEMM_SKINNY_WARPS, GK_GEMM_SKINNY_NG, GK_GEMM_SKINNY_KU, GK_GEMM_SKINNY_STAGES, GK_GEMM_SKINNY_SMEM);
#endif
    const int mid = argc > 1 && !strcmp(argv[1], "mid");
    const int mid_shapes[][3] = {{128, 8192, 8192}, {96, 8192, 8192}, {65, 8192, 8192},  {128, 4096, 4096},
                                 {128, 14336, 4096}, {100, 28672, 8192}, {128, 28672, 8192}, {128, 1000, 8192},
                                 {256, 1024, 8192},  {256, 8192, 8192}};
    const int all_shapes[][3] = {{16, 8192, 8192}, {16, 28672, 8192}, {128, 8192, 8192}, {128, 28672, 8192},
                             {1, 8192, 8192},  {1, 28672, 8192},  {5, 4100, 1000},   {16, 1000, 65536},
                             {64, 8192, 8192}, {256, 8192, 8192}, {128, 1000, 8192}, {8192, 8192, 8192},
                             {32, 8192, 8192}, {32, 28672, 8192}, {64, 28672, 8192}, {48, 4100, 1000}};
    const int split_list[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 32};
    int bad = 0;
    const int nshape = mid ? 10 : 16;
    for (int si = 0; si < nshape; si++) {
        const int *s = mid ? mid_shapes[si] : all_shapes[si];
        const int m = s[0], n = s[1], k = s[2];
        if (only_skinny && m > 16) continue;
        const double bytes = 2.0 * ((double)m * k + (double)n * k + (double)m * n), bound = bytes / (copy * 1e9);
        const double tc = median_s([&] { return cublas_nt(d, x, w, m, n, k); });
        CK(cublas_nt(dref, x, w, m, n, k));
        std::vector<gk_bf16> hr((size_t)m * n), hd((size_t)m * n);
        CK(cudaMemcpy(hr.data(), dref, hr.size() * 2, cudaMemcpyDeviceToHost));
        gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, 0, k, 1, k + pad);
        const double td = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, n, x, k, 0, w, k + pad, 1, NULL, 0, NULL, m, n, k, 1.0f, 0.0f,
                              GK_ACT_NONE, ws, G, 0);
        });
        printf("\n%dx%dx%d NT: bound %.1f us; cuBLAS %.1f us (%.1f%% of bound); dispatcher (cfg %d, %d splits) %.1f us "
               "(%.1f%%, %.3fx)\n",
               m, n, k, bound * 1e6, tc * 1e6, 100 * bound / tc, pl.config, pl.splits, td * 1e6, 100 * bound / td,
               tc / td);
        for (int cfg = m <= 16 ? GK_GEMM_SKINNY : 1; cfg < gk_gemm_config_count(); cfg++) {
            if (gk_gemm_config_info(cfg).swap && gk_gemm_config_info(cfg).bm * (mid ? 2 : 1) < m) continue;
            if (cfg == -1 || cfg == 2) continue; // the dispatcher; the element-wise-load kernels
            if (cfg >= 0 && gk_gemm_config_info(cfg).stages == 0) continue; // the direct tile: tiny problems only
            if (only_skinny && cfg != GK_GEMM_SKINNY) break;
            printf("  cfg %d %-22s", cfg, cfg < 0 ? "skinny" : gk_gemm_config_info(cfg).name);
            for (int sp : split_list) {
                if (m >= 2048 && sp > 1) break; // large shapes: one split, for the tile's rate
                if (mid && sp > 8) break;
                CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
                CK(gk_gemm_ex(cfg, sp, GK_BF16, d, GK_BF16, n, x, k, 0, w, k + pad, 1, NULL, 0, NULL, m, n, k, 1.0f, 0.0f,
                              GK_ACT_NONE, ws, G, 0));
                CK(cudaMemcpy(hd.data(), d, hd.size() * 2, cudaMemcpyDeviceToHost));
                double worst = 0;
                for (size_t i = 0; i < hd.size(); i++) {
                    const double r = gk_bf16_to_f32(hr[i]), e = fabs(gk_bf16_to_f32(hd[i]) - r) / (1.0 + fabs(r));
                    if (!(e <= worst)) worst = e;
                }
                if (!(worst < 2e-2)) {
                    printf(" [FAIL %d splits: %g]", sp, worst);
                    bad++;
                }
                const double t = median_s([&] {
                    return gk_gemm_ex(cfg, sp, GK_BF16, d, GK_BF16, n, x, k, 0, w, k + pad, 1, NULL, 0, NULL, m, n, k, 1.0f,
                                      0.0f, GK_ACT_NONE, ws, G, 0);
                });
                printf(" %d:%.1f", sp, t * 1e6);
            }
            printf("  (us by splits)\n");
        }
    }
    printf("\n%d failures\n", bad);
    return bad != 0;
}
