// fp32 SIMT candidates for the warp-tiled rung, next to the shipped gk_gemm_f32_warptile and
// cublasSgemm (default math, no TF32) in one process: each checked against the shipped rung on
// odd and aligned shapes, then timed at 4096^3. Plain nvcc, so it builds on the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/sgemm_sweep.cu -lcublas -o sgemm_sweep
//
// Candidate "256x8x8": the classic layout for more resident warps than the shipped rung (4 warps
// of 8 x 16 outputs a thread, 243 registers, 2 warps a scheduler). A 128 x 128 x 8 block of 256
// threads, each 8 x 8 outputs as 4 + 4 rows 32 apart and 4 + 4 columns 16 apart (shared-memory
// reads are float4, broadcast across the lanes that share rows); A stored transposed; the next
// k-tile in registers while this one is computed, and the next k's fragments loaded before this
// k's FFMAs. Budgeted for 2 blocks per SM (128 registers): 16 warps, 4 a scheduler.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cmath>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"

#define SG_BM 128
#define SG_BN 128
#define SG_BK 8

static __global__ void __launch_bounds__(256, 2) sg_256x8x8_kernel(gk_sgemm_args p)
{
    __shared__ __align__(16) float as[2][SG_BK][SG_BM], bs[2][SG_BK][SG_BN];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.y * SG_BM, n0 = blockIdx.x * SG_BN;
    /* warps 2 (M) x 4 (N), each 64 x 32; a lane's rows r, r + 32 (4 each), columns c, c + 16 */
    const int wm0 = warp / 4 * 64, wn0 = warp % 4 * 32;
    const int r = wm0 + lane / 4 * 4, c = wn0 + lane % 4 * 4;
    float acc[8][8] = {};
    /* A: row tid / 2, k (tid % 2) * 4; B: k tid / 32, column (tid % 32) * 4 */
    const int ar = tid / 2, ak = tid % 2 * 4, bk = tid / 32, bc = tid % 32 * 4;
    float4 ra = gk_sgemm_ld4(p.a, p.lda, m0 + ar, ak, p.m, p.k, p.vec);
    float4 rb = gk_sgemm_ld4(p.b, p.ldb, bk, n0 + bc, p.k, p.n, p.vec);
    as[0][ak + 0][ar] = ra.x;
    as[0][ak + 1][ar] = ra.y;
    as[0][ak + 2][ar] = ra.z;
    as[0][ak + 3][ar] = ra.w;
    *(float4 *)&bs[0][bk][bc] = rb;
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += SG_BK) {
        const int more = k0 + SG_BK < p.k;
        if (more) {
            ra = gk_sgemm_ld4(p.a, p.lda, m0 + ar, k0 + SG_BK + ak, p.m, p.k, p.vec);
            rb = gk_sgemm_ld4(p.b, p.ldb, k0 + SG_BK + bk, n0 + bc, p.k, p.n, p.vec);
        }
        float fa[2][8], fb[2][8];
        *(float4 *)&fa[0][0] = *(const float4 *)&as[buf][0][r];
        *(float4 *)&fa[0][4] = *(const float4 *)&as[buf][0][r + 32];
        *(float4 *)&fb[0][0] = *(const float4 *)&bs[buf][0][c];
        *(float4 *)&fb[0][4] = *(const float4 *)&bs[buf][0][c + 16];
#pragma unroll
        for (int k = 0; k < SG_BK; k++) {
            const int cur = k & 1;
            if (k + 1 < SG_BK) {
                *(float4 *)&fa[cur ^ 1][0] = *(const float4 *)&as[buf][k + 1][r];
                *(float4 *)&fa[cur ^ 1][4] = *(const float4 *)&as[buf][k + 1][r + 32];
                *(float4 *)&fb[cur ^ 1][0] = *(const float4 *)&bs[buf][k + 1][c];
                *(float4 *)&fb[cur ^ 1][4] = *(const float4 *)&bs[buf][k + 1][c + 16];
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(fa[cur][i], fb[cur][j], acc[i][j]);
        }
        if (more) {
            as[buf ^ 1][ak + 0][ar] = ra.x;
            as[buf ^ 1][ak + 1][ar] = ra.y;
            as[buf ^ 1][ak + 2][ar] = ra.z;
            as[buf ^ 1][ak + 3][ar] = ra.w;
            *(float4 *)&bs[buf ^ 1][bk][bc] = rb;
        }
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int row = m0 + r + (i & 3) + (i >> 2) * 32;
#pragma unroll
        for (int j = 0; j < 8; j++) gk_sgemm_store(&p, row, n0 + c + (j & 3) + (j >> 2) * 16, acc[i][j]);
    }
}

static cudaError_t sg_256x8x8(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int m,
                              int n, int k)
{
    const gk_sgemm_args p = gk_sgemm_args_of(c, ldc, a, lda, b, ldb, m, n, k, 1.0f, 0.0f);
    sg_256x8x8_kernel<<<dim3((unsigned)gk_ceil_div(n, SG_BN), (unsigned)gk_ceil_div(m, SG_BM)), 256>>>(p);
    return cudaGetLastError();
}

// Max |candidate - shipped| / max |shipped| over the whole output.
static double compare(int m, int n, int k, const float *a, const float *b, float *d1, float *d2)
{
    CK(cudaMemset(d1, 0xff, (size_t)m * n * 4));
    CK(cudaMemset(d2, 0xff, (size_t)m * n * 4));
    CK(gk_gemm_f32_warptile(d1, n, a, k, b, n, m, n, k, 1.0f, 0.0f, 0));
    CK(sg_256x8x8(d2, n, a, k, b, n, m, n, k));
    CK(cudaDeviceSynchronize());
    std::vector<float> h1((size_t)m * n), h2((size_t)m * n);
    CK(cudaMemcpy(h1.data(), d1, h1.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2.data(), d2, h2.size() * 4, cudaMemcpyDeviceToHost));
    double big = 0, diff = 0;
    for (size_t i = 0; i < h1.size(); i++) {
        big = std::max(big, (double)fabsf(h1[i]));
        const double e = fabs((double)h1[i] - h2[i]);
        if (!(e <= diff)) diff = e != e ? INFINITY : e;
    }
    return diff / (big + 1e-30);
}

int main()
{
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
    const size_t bytes = (size_t)4096 * 4096 * 4;
    float *a, *b, *d1, *d2;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    fill<<<2048, 256>>>((unsigned *)a, bytes / 4, 11);
    fill<<<2048, 256>>>((unsigned *)b, bytes / 4, 12);
    const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {127, 255, 63}, {1000, 300, 129}, {4096, 4096, 4096}};
    int bad = 0;
    for (const auto &s : shapes) {
        const double e = compare(s[0], s[1], s[2], a, b, d1, d2);
        printf("256x8x8 vs shipped %dx%dx%d: %.3g%s\n", s[0], s[1], s[2], e, e < 1e-5 ? "" : "  FAIL");
        bad += !(e < 1e-5);
    }
    const int n = 4096;
    const float one = 1.0f, zero = 0.0f;
    const double tc = median_s([&] {
        return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, d1, n) ==
                       CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    });
    const double ts = median_s([&] { return gk_gemm_f32_warptile(d1, n, a, n, b, n, n, n, n, 1.0f, 0.0f, 0); });
    const double t8 = median_s([&] { return sg_256x8x8(d2, n, a, n, b, n, n, n, n); });
    const double f = 2.0 * n * n * n * 1e-12;
    printf("cublasSgemm 4096^3: %.1f TFLOP/s\n", f / tc);
    printf("shipped warptile: %.1f TFLOP/s, %.3f of cuBLAS\n", f / ts, tc / ts);
    printf("256x8x8:          %.1f TFLOP/s, %.3f of cuBLAS\n", f / t8, tc / t8);
    return bad != 0;
}
