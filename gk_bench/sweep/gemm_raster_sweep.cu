// Block rasterization: the dispatcher's GEMM at large shapes with one GK_GEMM_GROUP_M (tile rows
// a rasterized group walks together), next to cuBLAS in the same process. One build per value:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -DGK_GEMM_GROUP_M=16 \
//        gk_bench/sweep/gemm_raster_sweep.cu -lcublas -o raster16
// Each row starts after 200 ms idle, as the benchmark's do (the GPU's clock near its power limit).
// Arguments, if any, replace the shapes: M N K [M N K ...]. GK_SWEEP_CONFIGS="3 5 9" also times
// those configurations (gk_gemm_ex, 1 split) beside the dispatcher.
// Configurations 3..8 are the shipped ones, 9 the rejected persistent 128 x 128; with
// -DGK_SWEEP_PERSISTENT_WIDE, against the header at 3d8583c with the patch
// gk_bench/sweep/gemm_persistent_128x256.patch (in the tree at commit f64835a) applied (an epilogue
// buffer of 32 / 16 columns a pass), 10..12 the persistent 128 x 128 with 6 stages, 128 x 256 and
// 256 x 128 (all rejected, RESULTS.md).
#ifdef GK_SWEEP_PERSISTENT_WIDE
#define GK_SWEEP_WIDE_P(X) \
    X(wg128x128x64_s6_p, 128, 128, 6, 1, 1) X(wg128x256x64_s4_p, 128, 256, 4, 1, 1) X(wg256x128x64_s4_p, 256, 128, 4, 1, 1)
#else
#define GK_SWEEP_WIDE_P(X)
#endif
#define GK_GEMM_WG_CONFIGS(X)                   \
    X(wg128x256x64_s4, 128, 256, 4, 0, 679)     \
    X(wg256x128x64_s4, 256, 128, 4, 0, 670)     \
    X(wg128x128x64_s6, 128, 128, 6, 0, 623)     \
    X(wg16x128x64_s8_p, 16, 128, 8, 1, 58)      \
    X(wg64x128x64_s7_p, 64, 128, 7, 1, 223)     \
    X(wg128x64x64_s8, 128, 64, 8, 0, 426)       \
    X(wg128x128x64_s4_p, 128, 128, 4, 1, 1)     \
    GK_SWEEP_WIDE_P(X)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <array>
#include <cmath>
#include <cublas_v2.h>
#include <unistd.h>
#include <vector>

#include "gk_bench/sweep/sweep_util.h"

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s: cublas %d\n", #x, (int)s_); exit(1); } } while (0)

int main(int argc, char **argv)
{
    cublasHandle_t handle;
    CB(cublasCreate(&handle));
    const size_t G = (size_t)1 << 30;
    const SweepGemmBuffers bufs = sweep_gemm_buffers(G);
    std::vector<std::array<int, 3>> shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {2048, 8192, 8192}, {2048, 28672, 8192}};
    if (argc > 3) shapes.clear();
    for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2])});
    printf("GK_GEMM_GROUP_M %d\n", GK_GEMM_GROUP_M);
    for (const auto &s : shapes) {
        const int m = s[0], n = s[1], k = s[2];
        const float one = 1.0f, zero = 0.0f;
        usleep(200000);
        const double tc = median_s([&] {
            return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, bufs.b, CUDA_R_16BF, k, bufs.a,
                                CUDA_R_16BF, k, &zero, bufs.d, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS
                       ? cudaSuccess
                       : cudaErrorUnknown;
        });
        usleep(200000);
        const double tg = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, bufs.d, GK_BF16, n, bufs.a, k, 0, bufs.b, k, 1, NULL, 0, NULL, m, n, k,
                              1.0f, 0.0f, GK_ACT_NONE, bufs.ws, G, 0);
        });
        const double f = 2.0 * m * n * k;
        printf("%dx%dx%d NT: cuBLAS %.1f us (%.1f TFLOP/s), gk %.1f us (%.1f TFLOP/s, %.3fx)", m, n, k, tc * 1e6,
               f / tc * 1e-12, tg * 1e6, f / tg * 1e-12, tc / tg);
        const char *cfgs = getenv("GK_SWEEP_CONFIGS");
        for (const char *c = cfgs; c && *c;) {
            char *end;
            const int cfg = (int)strtol(c, &end, 10);
            if (end == c) break;
            c = end;
            // checked first against cuBLAS's D (every 61st value, relative to 1 + |value|)
            std::vector<gk_bf16> hr((size_t)m * n), hd((size_t)m * n);
            CB(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, bufs.b, CUDA_R_16BF, k, bufs.a, CUDA_R_16BF,
                            k, &zero, bufs.d, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            CK(cudaMemcpy(hr.data(), bufs.d, hr.size() * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemset(bufs.d, 0xff, hr.size() * 2));
            CK(gk_gemm_ex(cfg, 1, GK_BF16, bufs.d, GK_BF16, n, bufs.a, k, 0, bufs.b, k, 1, NULL, 0, NULL, m, n, k, 1.0f,
                          0.0f, GK_ACT_NONE, bufs.ws, G, 0));
            CK(cudaMemcpy(hd.data(), bufs.d, hd.size() * 2, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (size_t i = 0; i < hd.size(); i += 61) {
                const double r = gk_bf16_to_f32(hr[i]), e = fabs(gk_bf16_to_f32(hd[i]) - r) / (1.0 + fabs(r));
                if (!(e <= worst)) worst = e;
            }
            usleep(200000);
            const double t = median_s([&] {
                return gk_gemm_ex(cfg, 1, GK_BF16, bufs.d, GK_BF16, n, bufs.a, k, 0, bufs.b, k, 1, NULL, 0, NULL, m, n,
                                  k, 1.0f, 0.0f, GK_ACT_NONE, bufs.ws, G, 0);
            });
            printf("; %s %.1f us%s", gk_gemm_config_info(cfg).name + 13, t * 1e6, worst < 2e-2 ? "" : " [FAIL]");
        }
        printf("\n");
    }
    return 0;
}
