// Where a tiny GEMM's time goes, against cuBLAS, timed as the bench times it (the L2 flushed by a
// memset before each call, events around the call alone):
// - floors: an empty kernel with no, 16 KB, 64 KB and 225 KB of dynamic shared memory, one global
//   load and store;
// - the direct tile (64 x 8, fragments straight from global memory, no shared memory) against
//   the other tiles that could take the problem, each forced, and the dispatcher;
// on the suite's small shapes (NT) and on some of them in the other three layouts.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_tiny_probe.cu \
//        -lcublas -o gemm_tiny_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cmath>
#include <cstring>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

static __global__ void probe_empty(int *never)
{
    if (never && threadIdx.x == 1024) *never = 0;
}

static __global__ void probe_touch(const uint4 *src, uint4 *dst)
{
    if (threadIdx.x == 0) dst[blockIdx.x] = src[blockIdx.x * 64];
}

// max |x - y| / (max |y| + 1e-3) over two bf16 matrices [m, n]
static double probe_rel_diff(const void *x, const void *y, int64_t m, int64_t n)
{
    std::vector<unsigned short> hx(m * n), hy(m * n);
    CK(cudaMemcpy(hx.data(), x, m * n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), y, m * n * 2, cudaMemcpyDeviceToHost));
    double worst = 0, big = 1e-3;
    auto f = [](unsigned short h) {
        const unsigned u = (unsigned)h << 16;
        float v;
        memcpy(&v, &u, 4);
        return (double)v;
    };
    for (int64_t i = 0; i < m * n; i++) big = std::max(big, std::fabs(f(hy[i])));
    for (int64_t i = 0; i < m * n; i++) worst = std::max(worst, std::fabs(f(hx[i]) - f(hy[i])));
    return worst / big;
}

int main()
{
    SweepGemmBuffers buf = sweep_gemm_buffers((size_t)256 << 20);
    char *ref;
    CK(cudaMalloc(&ref, (size_t)256 << 20));
    const int big = 225 * 1024;
    CK(cudaFuncSetAttribute(probe_empty, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
    CK(cudaFuncSetAttribute(probe_touch, cudaFuncAttributeMaxDynamicSharedMemorySize, big));

    // floors, the L2 flushed by a memset before each (as the bench)
    struct Floor {
        const char *what;
        int blocks, threads, smem, touch;
    } floors[] = {{"empty 1 x 32", 1, 32, 0, 0},          {"empty 1 x 128, 16 KB", 1, 128, 16 << 10, 0},
                  {"empty 1 x 128, 64 KB", 1, 128, 64 << 10, 0}, {"empty 1 x 384, 225 KB", 1, 384, big, 0},
                  {"empty 132 x 384, 225 KB", 132, 384, big, 0}, {"touch 1 x 32", 1, 32, 0, 1},
                  {"touch 1 x 384, 225 KB", 1, 384, big, 1},     {"touch 132 x 32", 132, 32, 0, 1}};
    for (const Floor &f : floors) {
        auto launch = [&] {
            if (f.touch) probe_touch<<<f.blocks, f.threads, f.smem>>>((const uint4 *)buf.a, (uint4 *)buf.d);
            else probe_empty<<<f.blocks, f.threads, f.smem>>>(NULL);
            return cudaGetLastError();
        };
        printf("floor %-26s %.2f us\n", f.what, median_s(launch) * 1e6);
    }

    struct Shape {
        int m, n, k;
    } shapes[] = {{3, 8, 8},       {9, 13, 3},     {6, 8, 176},     {5, 200, 32},   {24, 32, 8},
                  {32, 64, 48},    {472, 24, 8},   {825, 64, 16},   {285, 16, 320}, {151, 56, 608},
                  {195, 64, 688},  {126, 160, 288}, {244, 880, 384}, {533, 8, 840},  {1161, 512, 32},
                  {3783, 1, 7},    {1, 1697, 1},   {4472, 8, 16},   {10922, 8, 8},  {16168, 8, 8},
                  {7284, 16, 40},  {9398, 8, 128}, {5181, 304, 24}, {4, 3008, 648}, {168, 8, 15832},
                  {556, 32, 5608}, {1063, 91, 11}, {3277, 1, 39}};
    const char *others[] = {"gk_gemm_bf16_wg128x128x64_s6_pt", "gk_gemm_bf16_wg128x64x64_s8", "gk_gemm_bf16_wg16x128x64_s8_p",
                            "gk_gemm_bf16_64x64x64_s4", "gk_gemm_bf16_64x64x64_s4_elem"};
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int layout : {1, 0, 2, 3})
        for (int i = 0; i < nshapes; i++) {
            const Shape &q = shapes[i];
            if (layout != 1 && (q.k > 16 || i % 2)) continue; // other layouts: half the shapes of K <= 16
            const int ta = layout >> 1, tb = layout & 1;
            const int64_t lda = ta ? q.m : q.k, ldb = tb ? q.k : q.n;
            auto gk = [&](int c) {
                return gk_gemm_ex(c, c < 0 ? 0 : 1, GK_BF16, buf.d, GK_BF16, q.n, buf.a, lda, ta, buf.b, ldb, tb, NULL, 0,
                                  NULL, q.m, q.n, q.k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws, (size_t)256 << 20, 0);
            };
            const double tc = median_s([&] { return cublas_bf16(ref, buf.a, lda, ta, buf.b, ldb, tb, q.m, q.n, q.k); });
            const double tg = median_s([&] { return gk(-1); });
            const gk_gemm_plan pl = gk_gemm_plan_for(q.m, q.n, q.k, ta, lda, tb, ldb);
            printf("shape %s %5d x %5d x %5d: cuBLAS %6.2f us, dispatcher %6.2f us %.3fx (%s)", layout == 0 ? "NN" : layout == 1 ? "NT" : layout == 2 ? "TN" : "TT",
                   q.m, q.n, q.k, tc * 1e6, tg * 1e6, tc / tg, gk_gemm_config_info(pl.config).name + 13);
            double best = 1e9;
            const char *best_name = "";
            for (int c = 0; c < gk_gemm_config_count(); c++) {
                const gk_gemm_config ci = gk_gemm_config_info(c);
                bool listed = ci.stages == 0;
                for (const char *o : others) listed |= strcmp(o, ci.name) == 0;
                if (!listed) continue;
                if (gk(c) != cudaSuccess) { // refused (a swapped tile with A transposed, unaligned rows on cp.async)
                    (void)cudaGetLastError();
                    continue;
                }
                CK(cudaMemset(buf.d, 0xff, (size_t)q.m * q.n * 2));
                const double t = median_s([&] { return gk(c); });
                CK(cudaDeviceSynchronize());
                const double err = probe_rel_diff(buf.d, ref, q.m, q.n);
                printf(" | %s %.2f%s", ci.name + 13, t * 1e6, err < 2e-2 ? "" : " WRONG");
                if (ci.stages != 0 && t < best) {
                    best = t;
                    best_name = ci.name + 13;
                }
            }
            printf(" | best other %s %.2f us\n", best_name, best * 1e6);
        }
    return 0;
}
