// GEMM tuning sweep: every tensor-core configuration and layout checked against a CPU reference
// on small odd shapes, then timed at the benchmark's shapes next to cuBLAS in the same process;
// the fp32 ladder at 4096^3 next to cuBLAS SGEMM. Plain nvcc, so it builds on the GPU host:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. gk_bench/sweep/gemm_sweep.cu -lcublas -o gemm_sweep
// The candidates: the shipped configurations first (the dispatcher's large, medium and small
// tiles), then the ones under trial.
#define GK_GEMM_CONFIGS(X)                                          \
    X(128x128x32_w32x64, 128, 128, 32, 32, 64, 4, 2, 0, 1)          \
    X(64x64x64_s4, 64, 64, 64, 32, 32, 4, 3, 1, 1)                  \
    X(64x64x64_s4_elem, 64, 64, 64, 32, 32, 4, 3, 1, 0)             \
    X(128x128x32_w64x32, 128, 128, 32, 64, 32, 4, 1, 1, 1)          \
    X(128x128x32_w64x32_b2_single, 128, 128, 32, 64, 32, 4, 2, 0, 1) \
    X(128x128x64_w64x32_s3_b2_single, 128, 128, 64, 64, 32, 3, 2, 0, 1) \
    X(128x128x64_w64x32_s3, 128, 128, 64, 64, 32, 3, 1, 1, 1)       \
    X(128x256x32_s4_single, 128, 256, 32, 64, 64, 4, 1, 0, 1)       \
    X(128x256x32_s4, 128, 256, 32, 64, 64, 4, 1, 1, 1)              \
    X(128x128x32_s4_b2, 128, 128, 32, 64, 64, 4, 2, 1, 1)           \
    X(64x128x32_w32x32_b3, 64, 128, 32, 32, 32, 4, 3, 1, 1)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cmath>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s: cublas %d\n", #x, (int)s_); exit(1); } } while (0)

static cublasHandle_t handle;

// Row-major D = op(A) op(B) through column-major cuBLAS: D^T = op(B)^T op(A)^T.
static cudaError_t cublas_bf16(void *d, const void *a, int64_t lda, int ta, const void *b, int64_t ldb, int tb, int m,
                               int n, int k)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one,
                                    b, CUDA_R_16BF, (int)ldb, a, CUDA_R_16BF, (int)lda, &zero, d, CUDA_R_16BF, n,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

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


// Candidate fp32 rung: 128 x 128 x 16 tile, 8 warps of 32 x 64, each thread 8 x 8 outputs in
// two 4 x 4 groups (rows 16 apart, columns 32 apart) so every shared-memory read is a
// conflict-free float4; registers for 2 blocks per SM.
static __global__ void __launch_bounds__(256, 2) sweep_sgemm_w8(gk_sgemm_args p)
{
    __shared__ __align__(16) float as[2][16][128], bs[2][16][128];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;
    const int wm0 = warp / 2 * 32, wn0 = warp % 2 * 64, ty = lane / 8, tx = lane % 8;
    float acc[8][8] = {};
    float4 ra[2], rb[2];
#define W8_FETCH(k0)                                                                                        \
    do {                                                                                                    \
        for (int i_ = 0; i_ < 2; i_++) {                                                                    \
            ra[i_] = gk_sgemm_ld4(p.a, p.lda, m0 + tid % 128, (k0) + (tid / 128 + i_ * 2) * 4, p.m, p.k, p.vec); \
            rb[i_] = gk_sgemm_ld4(p.b, p.ldb, (k0) + (tid + i_ * 256) / 32, n0 + tid % 32 * 4, p.k, p.n, p.vec); \
        }                                                                                                   \
    } while (0)
#define W8_STORE(buf)                                                                                       \
    do {                                                                                                    \
        for (int i_ = 0; i_ < 2; i_++) {                                                                    \
            const int kq_ = (tid / 128 + i_ * 2) * 4;                                                        \
            as[buf][kq_ + 0][tid % 128] = ra[i_].x;                                                          \
            as[buf][kq_ + 1][tid % 128] = ra[i_].y;                                                          \
            as[buf][kq_ + 2][tid % 128] = ra[i_].z;                                                          \
            as[buf][kq_ + 3][tid % 128] = ra[i_].w;                                                          \
            *(float4 *)&bs[buf][(tid + i_ * 256) / 32][tid % 32 * 4] = rb[i_];                               \
        }                                                                                                   \
    } while (0)
    W8_FETCH(0);
    W8_STORE(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += 16) {
        const int more = k0 + 16 < p.k;
        if (more) W8_FETCH(k0 + 16);
#pragma unroll
        for (int k = 0; k < 16; k++) {
            float a[8], b[8];
            *(float4 *)&a[0] = *(const float4 *)&as[buf][k][wm0 + ty * 4];
            *(float4 *)&a[4] = *(const float4 *)&as[buf][k][wm0 + 16 + ty * 4];
            *(float4 *)&b[0] = *(const float4 *)&bs[buf][k][wn0 + tx * 4];
            *(float4 *)&b[4] = *(const float4 *)&bs[buf][k][wn0 + 32 + tx * 4];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) W8_STORE(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            gk_sgemm_store(&p, m0 + wm0 + i / 4 * 16 + ty * 4 + i % 4, n0 + wn0 + j / 4 * 32 + tx * 4 + j % 4, acc[i][j]);
}

// Candidate: the shipped warp-tiled rung with each thread's 8 rows as 4 + 4, 32 apart, so a
// warp's A reads are 8 distinct float4 in 128 bytes (the shipped 8 contiguous rows: 2-way).
static __global__ void __launch_bounds__(128) sweep_sgemm_cf(gk_sgemm_args p)
{
    __shared__ __align__(16) float as[2][GK_SGEMM_WT_BK][GK_SGEMM_WT_BM], bs[2][GK_SGEMM_WT_BK][GK_SGEMM_WT_BN];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.y * GK_SGEMM_WT_BM, n0 = blockIdx.x * GK_SGEMM_WT_BN;
    const int wm0 = warp / 2 * 64, wn0 = warp % 2 * 64;
    const int tr = lane / 4 * 4, tc = lane % 4 * 4; /* rows tr..tr+3 and tr+32..tr+35 */ /* thread's rows tr..tr+7, cols tc + 16 j .. +3 */
    float acc[8][16] = {};
    float4 ra[4], rb[4];

    /* A tile 128 x 16: 512 float4, 4 per thread (row tid, 4 k-groups); B 16 x 128: 4 per thread */
#define CF_FETCH(k0)                                                                                  \
    do {                                                                                                       \
        for (int i_ = 0; i_ < 4; i_++) {                                                                       \
            ra[i_] = gk_sgemm_ld4(p.a, p.lda, m0 + tid, (k0) + i_ * 4, p.m, p.k, p.vec);                       \
            rb[i_] = gk_sgemm_ld4(p.b, p.ldb, (k0) + i_ * 4 + tid / 32, n0 + tid % 32 * 4, p.k, p.n, p.vec);   \
        }                                                                                                      \
    } while (0)
#define CF_STORE(buf)                                                                                 \
    do {                                                                                                       \
        for (int i_ = 0; i_ < 4; i_++) {                                                                       \
            as[buf][i_ * 4 + 0][tid] = ra[i_].x;                                                               \
            as[buf][i_ * 4 + 1][tid] = ra[i_].y;                                                               \
            as[buf][i_ * 4 + 2][tid] = ra[i_].z;                                                               \
            as[buf][i_ * 4 + 3][tid] = ra[i_].w;                                                               \
            *(float4 *)&bs[buf][i_ * 4 + tid / 32][tid % 32 * 4] = rb[i_];                                      \
        }                                                                                                      \
    } while (0)

    CF_FETCH(0);
    CF_STORE(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += GK_SGEMM_WT_BK) {
        const int more = k0 + GK_SGEMM_WT_BK < p.k;
        if (more) CF_FETCH(k0 + GK_SGEMM_WT_BK);
#pragma unroll
        for (int k = 0; k < GK_SGEMM_WT_BK; k++) {
            float a8[8], b16[16];
            *(float4 *)&a8[0] = *(const float4 *)&as[buf][k][wm0 + tr];
            *(float4 *)&a8[4] = *(const float4 *)&as[buf][k][wm0 + tr + 32];
#pragma unroll
            for (int j = 0; j < 4; j++) *(float4 *)&b16[j * 4] = *(const float4 *)&bs[buf][k][wn0 + j * 16 + tc];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 16; j++) acc[i][j] = fmaf(a8[i], b16[j], acc[i][j]);
        }
        if (more) CF_STORE(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }
#undef CF_FETCH
#undef CF_STORE
    /* row by row, stopping at the last row: 128 independent bounds checks spilled on sm_80 */
    const int row0 = m0 + wm0 + tr, col0 = n0 + wn0 + tc;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int row = row0 + i % 4 + i / 4 * 32;
        if (row >= p.m) continue;
        float *crow = p.c + (int64_t)row * p.ldc;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int col = col0 + j / 4 * 16 + j % 4;
            if (col < p.n) crow[col] = p.beta != 0.0f ? p.alpha * acc[i][j] + p.beta * crow[col] : p.alpha * acc[i][j];
        }
    }
}

static cudaError_t sweep_sgemm_w8_launch(float *c, const float *a, const float *b, int n)
{
    gk_sgemm_args p;
    p.c = c; p.a = a; p.b = b; p.lda = p.ldb = p.ldc = n; p.m = p.n = p.k = n; p.vec = 1; p.alpha = 1.0f; p.beta = 0.0f;
    sweep_sgemm_w8<<<dim3(n / 128, n / 128), 256>>>(p);
    return cudaGetLastError();
}

int main()
{
    CB(cublasCreate(&handle));
    const size_t G = (size_t)1 << 30;
    char *a, *b, *d, *ws;
    CK(cudaMalloc(&a, G));
    CK(cudaMalloc(&b, G));
    CK(cudaMalloc(&d, G));
    CK(cudaMalloc(&ws, G));
    fill<<<2048, 256>>>((unsigned *)a, G / 4, 1);
    fill<<<2048, 256>>>((unsigned *)b, G / 4, 2);
    CK(cudaDeviceSynchronize());

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
    for (int cfg = 0; cfg < gk_gemm_config_count(); cfg++) {
        row(gk_gemm_config_info(cfg).name, 4096, 4096, 4096, 0, 1, cfg);
        row(gk_gemm_config_info(cfg).name, 8192, 8192, 8192, 0, 1, cfg);
    }
    row("dispatch", 4096, 4096, 4096, 0, 0, -1);
    row("dispatch", 4096, 4096, 4096, 1, 0, -1);
    row("dispatch", 4096, 4096, 4096, 1, 1, -1);
    row("dispatch, repacked", 4095, 4097, 4093, 0, 0, -1);
    row("dispatch, no workspace", 4095, 4097, 4093, 0, 0, -1, 0);
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
        {
            const double t = median_s([&] { return sweep_sgemm_w8_launch(fd, fa, fb, n); });
            printf("f32 %-10s 4096^3: %.1f TFLOP/s, %.3f of cuBLAS\n", "w8 cand", 2.0 * n * n * n / t * 1e-12, tc / t);
            gk_sgemm_args q;
            q.c = fd; q.a = fa; q.b = fb; q.lda = q.ldb = q.ldc = n; q.m = q.n = q.k = n; q.vec = 1; q.alpha = 1.0f; q.beta = 0.0f;
            const double t2 = median_s([&] { sweep_sgemm_cf<<<dim3(n / 128, n / 128), 128>>>(q); return cudaGetLastError(); });
            printf("f32 %-10s 4096^3: %.1f TFLOP/s, %.3f of cuBLAS\n", "cf cand", 2.0 * n * n * n / t2 * 1e-12, tc / t2);
            {
                const int c = 1000; // odd size: every tail
                float *d2 = fd + (size_t)2 * 1024 * 1024;
                gk_sgemm_args r = q;
                r.m = r.n = r.k = c; r.lda = r.ldb = r.ldc = c; r.vec = 0; r.c = fd;
                CK(gk_gemm_f32_warptile(d2, c, fa, c, fb, c, c, c, c, 1.0f, 0.0f, 0));
                sweep_sgemm_cf<<<dim3(8, 8), 128>>>(r);
                CK(cudaDeviceSynchronize());
                std::vector<float> h1((size_t)c * c), h2((size_t)c * c);
                CK(cudaMemcpy(h1.data(), fd, h1.size() * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(h2.data(), d2, h2.size() * 4, cudaMemcpyDeviceToHost));
                double worst = 0;
                for (size_t i = 0; i < h1.size(); i++) worst = std::max(worst, (double)fabsf(h1[i] - h2[i]) / (fabsf(h2[i]) + 1.0));
                printf("cf cand vs warptile at 1000^3: max diff %.3g\n", worst);
            }
            // check the candidate against the shipped warptile on a 1024^3 corner of the same inputs
            const int c = 1024;
            float *d2 = fd + (size_t)c * c;
            CK(gk_gemm_f32_warptile(d2, c, fa, c, fb, c, c, c, c, 1.0f, 0.0f, 0));
            CK(sweep_sgemm_w8_launch(fd, fa, fb, c));
            CK(cudaDeviceSynchronize());
            std::vector<float> h1((size_t)c * c), h2((size_t)c * c);
            CK(cudaMemcpy(h1.data(), fd, h1.size() * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h2.data(), d2, h2.size() * 4, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (size_t i = 0; i < h1.size(); i++) worst = std::max(worst, (double)fabsf(h1[i] - h2[i]) / (fabsf(h2[i]) + 1.0));
            printf("w8 cand vs warptile at 1024^3: max diff %.3g\n", worst);
        }
    }
    return 0;
}
