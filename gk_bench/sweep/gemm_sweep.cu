// GEMM tuning sweep: every tensor-core configuration and layout checked against a CPU reference
// on small odd shapes, then timed at the benchmark's shapes next to cuBLAS in the same process;
// the fp32 ladder at 4096^3 next to cuBLAS SGEMM. Plain nvcc, so it builds on the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_sweep.cu -lcublas -o gemm_sweep
//   ./gemm_sweep                         checks, then every row
//   ./gemm_sweep odd | odd2              checks, then only the unaligned shapes against 4096^3
//   ./gemm_sweep one CFG M N K TA TB     three launches of one configuration, no timing (for ncu)
// The candidates: the shipped configurations first (the dispatcher's large, medium and small
// tiles), then the ones under trial.
#define GK_GEMM_CONFIGS(X)                                 \
    X(128x256x32_w64x64, 128, 256, 32, 64, 64, 4, 1, 1, 1) \
    X(64x64x64_s4, 64, 64, 64, 32, 32, 4, 3, 1, 1)         \
    X(64x64x64_s4_elem, 64, 64, 64, 32, 32, 4, 3, 1, 0)
#define GK_GEMM_WG_CONFIGS(X)     \
    X(wg128x256x64_s4, 128, 256, 4, 0, 650) \
    X(wg256x128x64_s4, 256, 128, 4, 0, 640) \
    X(wg128x128x64_s6, 128, 128, 6, 0, 597) \
    X(wg256x128x64_s3, 256, 128, 3, 0, 600)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
#include "gk/gk_sgemm.cuh"

#include <cmath>
#include <cstring>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s: cublas %d\n", #x, (int)s_); exit(1); } } while (0)

static cublasHandle_t handle; // for the fp32 rows (cublasSgemm)

static float host_bf16(const void *p, int64_t i) { return gk_bf16_to_f32(((const gk_bf16 *)p)[i]); }

// Max relative error (to the row's magnitude) of a bf16 D against a double reference.
static double check(int config, int splits, int ta, int tb, int m, int n, int k, char *a, char *b, char *d, void *ws)
{
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
    CK(gk_gemm_ex(config, splits, GK_BF16, d, GK_BF16, n, a, lda, ta, b, ldb, tb, NULL, 0, NULL, m, n, k, 1.0f, 0.0f,
                  GK_ACT_NONE, gk_gemm_config_info(config).vec ? ws : NULL, (size_t)1 << 30, 0));
    CK(cudaDeviceSynchronize());
    std::vector<char> ha((size_t)m * k * 2), hb((size_t)k * n * 2), hd((size_t)m * n * 2);
    CK(cudaMemcpy(ha.data(), a, ha.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), b, hb.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int l = 0; l < k; l++) {
                const double x = host_bf16(ha.data(), ta ? (int64_t)l * lda + i : (int64_t)i * lda + l);
                const double y = host_bf16(hb.data(), tb ? (int64_t)j * ldb + l : (int64_t)l * ldb + j);
                s += x * y;
                mag += fabs(x * y);
            }
            const double got = host_bf16(hd.data(), (int64_t)i * n + j);
            const double e = fabs(got - s) / (mag + 1e-30);
            if (!(e <= worst)) worst = e != e ? INFINITY : e;
        }
    return worst;
}



int main(int argc, char **argv)
{
    handle = sweep_cublas();
    const size_t G = (size_t)1 << 30;
    const SweepGemmBuffers bufs = sweep_gemm_buffers(G);
    char *a = bufs.a, *b = bufs.b, *d = bufs.d, *ws = bufs.ws;

    // "gemm_sweep one CONFIG M N K TA TB": three launches of one configuration (for ncu)
    if (argc == 8 && !strcmp(argv[1], "one")) {
        const int cfg = atoi(argv[2]), m = atoi(argv[3]), n = atoi(argv[4]), k = atoi(argv[5]), ta = atoi(argv[6]),
                  tb = atoi(argv[7]);
        for (int i = 0; i < 3; i++)
            CK(gk_gemm_ex(cfg, 0, GK_BF16, d, GK_BF16, n, a, ta ? m : k, ta, b, tb ? k : n, tb, NULL, 0, NULL, m, n, k,
                          1.0f, 0.0f, GK_ACT_NONE, ws, G, 0));
        CK(cudaDeviceSynchronize());
        return 0;
    }

    printf("correctness (max error / sum|a b|, bf16 out: < 8e-3 passes)\n");
    const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {127, 255, 63}, {200, 300, 1000}};
    int bad = 0;
    for (int cfg = 0; cfg < gk_gemm_config_count(); cfg++)
        for (int l = 0; l < 4; l++)
            for (const auto &s : shapes)
                for (int splits = 1; splits <= 3; splits += 2) {
                    const double e = check(cfg, splits, l >> 1, l & 1, s[0], s[1], s[2], a, b, d, ws);
                    if (!(e < 8e-3)) {
                        printf("  FAIL cfg %d layout %d splits %d %dx%dx%d: %g\n", cfg, l, splits, s[0], s[1], s[2], e);
                        bad++;
                    }
                }
    printf("  %d failures\n", bad);

    printf("%-28s %-18s %9s %8s %8s\n", "kernel", "shape", "us", "TFLOP/s", "vs cuBLAS");
    auto row = [&](const char *name, int m, int n, int k, int ta, int tb, int config, int use_ws = 1) {
        const int64_t lda = ta ? m : k, ldb = tb ? k : n;
        const double tc = median_s([&] { return cublas_bf16(d, a, lda, ta, b, ldb, tb, m, n, k); });
        const double t = median_s([&] {
            return gk_gemm_ex(config, 0, GK_BF16, d, GK_BF16, n, a, lda, ta, b, ldb, tb, NULL, 0, NULL, m, n, k, 1.0f, 0.0f,
                              GK_ACT_NONE, use_ws ? ws : NULL, use_ws ? G : 0, 0);
        });
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d %s%s", m, n, k, ta ? "T" : "N", tb ? "T" : "N");
        printf("%-28s %-18s %9.1f %8.1f %8.3f   (cuBLAS %.1f)\n", name, shape, t * 1e6, 2.0 * m * n * k / t * 1e-12,
               tc / t, 2.0 * m * n * k / tc * 1e-12);
    };
    // "gemm_sweep odd2": after the checks, the odd NN / NT shape against 4096^3 NN, twice
    if (argc == 2 && !strcmp(argv[1], "odd2")) {
        for (int r = 0; r < 2; r++) {
            row("dispatch", 4096, 4096, 4096, 0, 0, -1);
            row("dispatch, unaligned", 4095, 4097, 4093, 0, 0, -1);
            row("dispatch, unaligned", 4095, 4097, 4093, 0, 1, -1);
        }
        return bad != 0;
    }
    // "gemm_sweep odd": after the checks, only the unaligned shapes against 4096^3
    if (argc == 2 && !strcmp(argv[1], "odd")) {
        for (int l = 0; l < 4; l++) row("dispatch", 4096, 4096, 4096, l >> 1, l & 1, -1);
        for (int l = 0; l < 4; l++) row("dispatch, unaligned", 4095, 4097, 4093, l >> 1, l & 1, -1);
        for (int l = 0; l < 4; l++) row("dispatch, unaligned", 2048, 28672, 8191, l >> 1, l & 1, -1);
        for (int cfg = 0; cfg < gk_gemm_config_count(); cfg++)
            if (gk_gemm_config_info(cfg).wgmma) row(gk_gemm_config_info(cfg).name, 4095, 4097, 4093, 0, 0, cfg);
        for (int l = 0; l < 2; l++) { // NN / NT with 16-byte aligned rows: the repack's cost is the difference
            const double t = median_s([&] {
                return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, 4097, a, 4096, 0, b, l ? 4096 : 4104, l, NULL, 0, NULL, 4095,
                                  4097, 4093, 1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
            });
            printf("%-28s 4095x4097x4093 N%s %9.1f %8.1f\n", "dispatch, aligned lds", l ? "T" : "N", t * 1e6,
                   2.0 * 4095 * 4097 * 4093 / t * 1e-12);
        }
        return bad != 0;
    }
    for (int cfg = 0; cfg < gk_gemm_config_count(); cfg++) {
        if (gk_gemm_config_info(cfg).stages == 0) continue; // the direct tile: tiny problems only
        row(gk_gemm_config_info(cfg).name, 4096, 4096, 4096, 0, 1, cfg);
        row(gk_gemm_config_info(cfg).name, 8192, 8192, 8192, 0, 1, cfg);
        if (gk_gemm_config_info(cfg).wgmma) {
            row(gk_gemm_config_info(cfg).name, 4096, 4096, 4096, 0, 0, cfg);
            row(gk_gemm_config_info(cfg).name, 8192, 8192, 8192, 0, 0, cfg);
            row(gk_gemm_config_info(cfg).name, 2048, 28672, 8192, 0, 1, cfg);
            const double t = median_s([&] {
                return gk_gemm_ex(cfg, 0, GK_BF16, d, GK_BF16, 4097, a, 4096, 0, b, 4104, 0, NULL, 0, NULL, 4095, 4097,
                                  4093, 1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
            });
            printf("%-28s %-18s %9.1f %8.1f\n", gk_gemm_config_info(cfg).name, "4095x4097x4093 NN al", t * 1e6,
                   2.0 * 4095 * 4097 * 4093 / t * 1e-12);
            for (int mm : {16, 128})
                for (int splits : {4, 8}) {
                    const int64_t lda = 8192, ldb = 8192;
                    const double t = median_s([&] {
                        return gk_gemm_ex(cfg, splits, GK_BF16, d, GK_BF16, 8192, a, lda, 0, b, ldb, 1, NULL, 0, NULL, mm,
                                          8192, 8192, 1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
                    });
                    printf("%-28s %dx8192x8192 NT splits %d: %.1f us, %.0f GB/s\n", gk_gemm_config_info(cfg).name, mm,
                           splits, t * 1e6, (8192.0 * 8192 * 2 + mm * 8192.0 * 4) / t * 1e-9);
                }
        }
    }
    row("dispatch", 4096, 4096, 4096, 0, 0, -1);
    row("dispatch", 4096, 4096, 4096, 1, 0, -1);
    row("dispatch", 4096, 4096, 4096, 1, 1, -1);
    row("dispatch, repacked", 4095, 4097, 4093, 0, 0, -1);
    row("dispatch, no workspace", 4095, 4097, 4093, 0, 0, -1, 0);
    {   // the same shape with 16-byte aligned rows (lda 4096, ldb 4104): the repack's cost is the difference
        const double t = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, 4097, a, 4096, 0, b, 4104, 0, NULL, 0, NULL, 4095, 4097, 4093,
                              1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
        });
        printf("%-28s %-18s %9.1f %8.1f\n", "dispatch, aligned lds", "4095x4097x4093 NN", t * 1e6,
               2.0 * 4095 * 4097 * 4093 / t * 1e-12);
    }
    const int llm[][2] = {{8192, 8192}, {8192, 28672}};
    for (int mm : {16, 128, 2048})
        for (const auto &kn : llm) row("dispatch", mm, kn[1], kn[0], 0, 1, -1);

    // fp32 ladder at 4096^3 (naive skipped here: a second per call)
    {
        const int n = 4096;
        const float one = 1.0f, zero = 0.0f;
        CB(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
        const float *fa = (const float *)a, *fb = (const float *)b;
        float *fd = (float *)d;
        const double tc = median_s([&] {
            return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, fb, n, fa, n, &zero, fd, n) ==
                           CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
        });
        printf("cublasSgemm 4096^3: %.1f TFLOP/s\n", 2.0 * n * n * n / tc * 1e-12);
        const char *names[] = {"smem", "regtile", "warptile"};
        cudaError_t (*fns[])(float *, int64_t, const float *, int64_t, const float *, int64_t, int64_t, int64_t, int64_t,
                             float, float, cudaStream_t) = {gk_gemm_f32_smem, gk_gemm_f32_regtile, gk_gemm_f32_warptile};
        for (int i = 0; i < 3; i++) {
            const double t = median_s([&] { return fns[i](fd, n, fa, n, fb, n, n, n, n, 1.0f, 0.0f, 0); });
            printf("f32 %-10s 4096^3: %.1f TFLOP/s, %.3f of cuBLAS\n", names[i], 2.0 * n * n * n / t * 1e-12, tc / t);
        }
    }
    return 0;
}
