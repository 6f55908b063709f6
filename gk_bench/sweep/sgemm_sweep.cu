// fp32 SIMT candidates after the warp-tiled rung, next to the shipped gk_gemm_f32_warptile and
// cublasSgemm (default math, no TF32) in one process: each checked against the warp-tiled rung on
// odd, aligned, padded-ld and unaligned shapes, then timed at 4096^3. The winner, cp128x256k16,
// ships as gk_gemm_f32_pipelined (the "shipped_pipelined" row runs the header's copy, so a change
// to either shows up here). Plain nvcc, so it builds on the GPU host:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/sgemm_sweep.cu -lcublas -o sgemm_sweep
//   ./sgemm_sweep             all candidates
//   ./sgemm_sweep cp128x256   one (its checks, then cuBLAS, the shipped rung and it timed)
//
// Candidate "256x8x8": the classic layout for more resident warps than the shipped rung (4 warps
// of 8 x 16 outputs a thread, 243 registers, 2 warps a scheduler). A 128 x 128 x 8 block of 256
// threads, each 8 x 8 outputs as 4 + 4 rows 32 apart and 4 + 4 columns 16 apart (shared-memory
// reads are float4, broadcast across the lanes that share rows); A stored transposed; the next
// k-tile in registers while this one is computed, and the next k's fragments loaded before this
// k's FFMAs. Budgeted for 2 blocks per SM (128 registers): 16 warps, 4 a scheduler.
#define GK_IMPLEMENTATION
#include "gk/gk_sgemm.cuh"

#include <cmath>
#include <cstring>
#include <string>
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

/* ---------------------------------------------------------------- cp.async multistage family
   Candidates "cp*". The 256x8x8 k-loop body is 654 SASS instructions for 512 FFMAs (both load
   paths; 32 are LDS): the guarded float4 loads (64-bit index math, bound compares, branches) and
   5 STS, and the next tile held in registers. Here both operands go global -> shared by cp.async
   (no staging registers, no STS), STAGES tiles deep, so a full k-tile costs its copies, pointer
   bumps, one wait and one barrier.
   - A is transposed by the copy itself: 4-byte cp.async, lanes k-fastest (8 lanes read one
     32-byte sector of a row), written to as[k][m] with row stride BM + 4: bank 4 k + m, no conflict.
   - B: one 16-byte cp.async.cg per 4 columns; threads whose 4 columns cross N, or all threads when
     rows are not 16-byte aligned, copy 4 bytes at a time (columns clamped to N - 1).
   - Rows of A past M and columns of B past N are clamped, not zeroed: they feed only outputs that
     are never stored. Only the partial last k-tile zero-fills (src-size 0), so full tiles carry
     no predicates.
   - 8 warps; lanes LM (M) x 32/LM (N); a thread's TM x TN outputs are 4 x 4 groups spaced 4 LM
     rows and 4 * 32/LM columns apart, so each fragment read is one LDS.128 over a contiguous run
     (128 or 64 unique bytes a warp, the rest broadcast), conflict-free.
   - The wait and the barrier come before the last k-step of a tile: the stage just read is
     refilled and the next tile's first fragments load while that step's FFMAs run. */
static __device__ __forceinline__ void sg_cp4(unsigned dst, const float *src, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void sg_cp16(unsigned dst, const float *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void sg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> static __device__ __forceinline__ void sg_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* NT threads (NT / 32 warps). VB: every B copy is 16 bytes (rows 16-byte aligned and N % 4 == 0,
   so a thread's 4 columns are all in or all out; out ones are clamped to N - 4); otherwise the
   generic 4-byte path. SWZ > 0: blocks walk SWZ block rows at a time, column by column, so the
   blocks resident together share A rows and B columns in L2. Left 0 below: at 4096^3 the grid is
   16-32 blocks wide and the resident blocks all walk the same k-slab, so L2 reuse is not short. */
template <int NT, int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, int MINB, int SWZ, int VB>
static __global__ void __launch_bounds__(NT, MINB) sg_cp_kernel(gk_sgemm_args p)
{
    constexpr int LN = 32 / LM, WM = TM * LM, WN = TN * LN, WARPS_N = BN / WN;
    constexpr int SA = BM + 4, STAGE = BK * SA + BK * BN;             /* floats */
    constexpr int AROWS = BM * 8 / NT, AKG = BK / 8;                  /* a thread's A rows, k groups */
    constexpr int BCH = BK * BN / 4 / NT, BKSTEP = NT * 4 / BN;       /* its B float4s, k rows apart */
    static_assert((BM / WM) * WARPS_N == NT / 32 && BN % WN == 0 && BK % 8 == 0 && BCH >= 1, "warps tile the block");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && STAGES >= 2 && BM % (NT / 8) == 0, "4 x 4 groups");
    extern __shared__ __align__(16) float sg_smem[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    int bm = blockIdx.y, bn = blockIdx.x;
    if (SWZ > 0) {
        const int tn = gridDim.x, id = blockIdx.y * tn + blockIdx.x;
        const int first = id / (SWZ * tn) * SWZ, rows = min((int)gridDim.y - first, SWZ), in = id % (SWZ * tn);
        bm = first + in % rows;
        bn = in / rows;
    }
    const int m0 = bm * BM, n0 = bn * BN;

    /* copy roles: A (row am + NT / 8 * r, k ak + 8 g); B (k bk + BKSTEP i, columns bcol .. + 3) */
    const int ak = tid % 8, am = tid / 8, bk = tid / (BN / 4), bcol = n0 + tid % (BN / 4) * 4;
    const float *pa = p.a + ak;
    int64_t aoff[AROWS];
#pragma unroll
    for (int r = 0; r < AROWS; r++) aoff[r] = (int64_t)min(m0 + am + NT / 8 * r, p.m - 1) * p.lda;
    const int bc0 = VB ? min(bcol, p.n - 4) : min(bcol, p.n - 1);
    const float *pb = p.b + (int64_t)bk * p.ldb + bc0;
    const int64_t bstep = (int64_t)BKSTEP * p.ldb, bnext = (int64_t)BK * p.ldb;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(sg_smem);
    const unsigned adst = sbase + (ak * SA + am) * 4, bdst = sbase + (BK * SA + bk * BN + tid % (BN / 4) * 4) * 4;

    /* full: k0 + BK <= K; a constant once inlined into each branch below */
    auto copy_tile = [&](int k0, int s, int full) {
        const unsigned so = s * STAGE * 4;
#pragma unroll
        for (int r = 0; r < AROWS; r++)
#pragma unroll
            for (int g = 0; g < AKG; g++) {
                const int ok = full || k0 + ak + 8 * g < p.k;
                sg_cp4(adst + so + (8 * g * SA + NT / 8 * r) * 4, ok ? pa + aoff[r] + 8 * g : p.a, ok ? 4 : 0);
            }
#pragma unroll
        for (int i = 0; i < BCH; i++) {
            const int ok = full || k0 + bk + i * BKSTEP < p.k;
            const float *q = pb + i * bstep;
            const unsigned d = bdst + so + i * BKSTEP * BN * 4;
            if (VB) sg_cp16(d, ok ? q : p.b, ok ? 16 : 0);
            else
#pragma unroll
                for (int j = 0; j < 4; j++) sg_cp4(d + 4 * j, ok ? q + (min(bcol + j, p.n - 1) - bc0) : p.b, ok ? 4 : 0);
        }
        pa += BK;
        pb += bnext;
    };

    const int ktiles = (p.k + BK - 1) / BK;
    /* STAGES tiles in flight; a group is committed even when empty so wait_group counts hold */
#pragma unroll
    for (int s = 0; s < STAGES; s++) {
        if (s < ktiles) {
            if ((s + 1) * BK <= p.k) copy_tile(s * BK, s, 1);
            else copy_tile(s * BK, s, 0);
        }
        sg_cp_commit();
    }
    sg_cp_wait<STAGES - 1>();
    __syncthreads();

    const int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * WN;
    const int tr = wm0 + lane / LN * 4, tc = wn0 + lane % LN * 4;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    float fa[2][TM], fb[2][TN];
#define SG_CP_FRAGS(dst, st, k)                                                                                     \
    do {                                                                                                            \
        _Pragma("unroll") for (int g_ = 0; g_ < TM / 4; g_++)                                                       \
            *(float4 *)&fa[dst][4 * g_] = *(const float4 *)&sg_smem[(st) * STAGE + (k) * SA + tr + g_ * 4 * LM];    \
        _Pragma("unroll") for (int h_ = 0; h_ < TN / 4; h_++)                                                       \
            *(float4 *)&fb[dst][4 * h_] = *(const float4 *)&sg_smem[(st) * STAGE + BK * SA + (k) * BN + tc + h_ * 4 * LN]; \
    } while (0)
    SG_CP_FRAGS(0, 0, 0);
    int rs = 0; /* stage being read */
    for (int kt = 0; kt < ktiles; kt++) {
#pragma unroll
        for (int k = 0; k < BK; k++) {
            if (k < BK - 1) SG_CP_FRAGS((k + 1) & 1, rs, k + 1);
            else {
                /* tile kt + 1 has landed for every thread and every thread has read tile kt: refill
                   this stage with tile kt + STAGES, then read the next tile's first fragments */
                sg_cp_wait<STAGES - 2>();
                __syncthreads();
                const int nt = kt + STAGES;
                if (nt < ktiles) {
                    if ((nt + 1) * BK <= p.k) copy_tile(nt * BK, rs, 1);
                    else copy_tile(nt * BK, rs, 0);
                }
                sg_cp_commit();
                rs = rs + 1 == STAGES ? 0 : rs + 1;
                SG_CP_FRAGS(0, rs, 0);
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(fa[k & 1][i], fb[k & 1][j], acc[i][j]);
        }
    }
#undef SG_CP_FRAGS
    sg_cp_wait<0>();
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = m0 + tr + i / 4 * 4 * LM + i % 4;
        if (row >= p.m) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) gk_sgemm_store(&p, row, n0 + tc + j / 4 * 4 * LN + j % 4, acc[i][j]);
    }
}

template <int NT, int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, int MINB, int SWZ, int VB>
static cudaError_t sg_cp_launch(const gk_sgemm_args &p)
{
    const int smem = STAGES * (BK * (BM + 4) + BK * BN) * 4;
    auto kern = sg_cp_kernel<NT, BM, BN, BK, TM, TN, LM, STAGES, MINB, SWZ, VB>;
    static bool init = false;
    if (!init) {
        /* over 48 KiB needs the opt-in; all shared so MINB blocks fit */
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
        if (e != cudaSuccess) return e;
        init = true;
    }
    kern<<<dim3((unsigned)gk_ceil_div(p.n, BN), (unsigned)gk_ceil_div(p.m, BM)), NT, smem>>>(p);
    return cudaGetLastError();
}

template <int NT, int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, int MINB, int SWZ>
static cudaError_t sg_cp(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb, int m, int n,
                         int k)
{
    const gk_sgemm_args p = gk_sgemm_args_of(c, ldc, a, lda, b, ldb, m, n, k, 1.0f, 0.0f);
    if (p.vec && n % 4 == 0) return sg_cp_launch<NT, BM, BN, BK, TM, TN, LM, STAGES, MINB, SWZ, 1>(p);
    return sg_cp_launch<NT, BM, BN, BK, TM, TN, LM, STAGES, MINB, SWZ, 0>(p);
}

static cudaError_t sg_shipped_pipelined(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                        int m, int n, int k)
{
    return gk_gemm_f32_pipelined(c, ldc, a, lda, b, ldb, m, n, k, 1.0f, 0.0f, 0);
}

/* ---------------------------------------------------------------- checks and timing */
typedef cudaError_t (*sg_fn)(float *, int64_t, const float *, int64_t, const float *, int64_t, int, int, int);
static const struct {
    const char *name;
    sg_fn fn;
} sg_cands[] = {
    {"256x8x8", sg_256x8x8},
    /* the shipped rung (gk_gemm_f32_pipelined): cp128x256k16 below, in the header */
    {"shipped_pipelined", sg_shipped_pipelined},
    /* 128 x 128 x 8, 8 warps of 64 x 32, 8 x 8 a thread, 4 stages, 2 blocks an SM (128 registers) */
    {"cp128x128", sg_cp<256, 128, 128, 8, 8, 8, 8, 4, 2, 0>},
    /* same with BK 16: half the barriers and copy overhead a FFMA, 3 stages */
    {"cp128x128k16", sg_cp<256, 128, 128, 16, 8, 8, 8, 3, 2, 0>},
    /* the shipped rung's shape on cp.async: 128 x 128 x 8, 4 warps of 64 x 64, 8 x 16 a thread,
       2 blocks an SM, 6 LDS.128 a 128 FFMAs */
    {"cp128x128w4", sg_cp<128, 128, 128, 8, 8, 16, 8, 4, 2, 0>},
    /* 128 x 256 x 8, 8 warps of 64 x 64, 8 x 16 a thread, 1 block an SM */
    {"cp128x256", sg_cp<256, 128, 256, 8, 8, 16, 8, 4, 1, 0>},
    /* same with BK 16, 3 stages (74 KiB) */
    {"cp128x256k16", sg_cp<256, 128, 256, 16, 8, 16, 8, 3, 1, 0>},
    /* 256 x 128 x 8, 16 x 8 a thread, lanes 4 x 8 (warps 64 x 64), 1 block an SM */
    {"cp256x128", sg_cp<256, 256, 128, 8, 16, 8, 4, 4, 1, 0>},
};

/* m, n, k, lda, ldb, ldc (0: packed), offsets of a and b in elements (nonzero: unaligned rows) */
static const int sg_shapes[][8] = {
    {1, 1, 1, 0, 0, 0, 0, 0},           {17, 33, 65, 0, 0, 0, 0, 0},       {127, 255, 63, 0, 0, 0, 0, 0},
    {1000, 300, 129, 0, 0, 0, 0, 0},    {1000, 300, 128, 0, 0, 0, 0, 0},   {129, 260, 36, 0, 0, 0, 0, 0},
    {1000, 301, 130, 132, 304, 305, 0, 0}, {333, 517, 259, 260, 520, 517, 1, 3}, {4096, 4096, 4096, 0, 0, 0, 0, 0},
};

/* Max |candidate - shipped| / max |shipped| over the m x n output; padding past n must stay untouched. */
static double compare(sg_fn fn, const int *s, const float *a, const float *b, float *d1, float *d2)
{
    const int m = s[0], n = s[1], k = s[2];
    const int64_t lda = s[3] ? s[3] : k, ldb = s[4] ? s[4] : n, ldc = s[5] ? s[5] : n;
    a += s[6];
    b += s[7];
    CK(cudaMemset(d1, 0xff, (size_t)m * ldc * 4));
    CK(cudaMemset(d2, 0xff, (size_t)m * ldc * 4));
    CK(gk_gemm_f32_warptile(d1, ldc, a, lda, b, ldb, m, n, k, 1.0f, 0.0f, 0));
    CK(fn(d2, ldc, a, lda, b, ldb, m, n, k));
    CK(cudaDeviceSynchronize());
    std::vector<float> h1((size_t)m * ldc), h2((size_t)m * ldc);
    CK(cudaMemcpy(h1.data(), d1, h1.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2.data(), d2, h2.size() * 4, cudaMemcpyDeviceToHost));
    double big = 0, diff = 0;
    for (int i = 0; i < m; i++)
        for (int64_t j = 0; j < ldc; j++) {
            const size_t x = (size_t)i * ldc + j;
            if (j >= n) {
                unsigned u;
                memcpy(&u, &h2[x], 4);
                if (u != 0xffffffffu) diff = INFINITY;
                continue;
            }
            big = std::max(big, (double)fabsf(h1[x]));
            const double e = fabs((double)h1[x] - h2[x]);
            if (!(e <= diff)) diff = e != e ? INFINITY : e;
        }
    return diff / (big + 1e-30);
}

/* With no argument every candidate is checked and timed; with a name, only that one (for ncu:
   ncu -k regex:sg_ bundle_sweep/sgemm_sweep2 cp128x256). */
int main(int argc, char **argv)
{
    const int nc = (int)(sizeof sg_cands / sizeof sg_cands[0]);
    const char *only = argc > 1 ? argv[1] : nullptr;
    if (only) {
        int found = 0;
        for (int c = 0; c < nc; c++) found |= !strcmp(only, sg_cands[c].name);
        if (!found) {
            printf("unknown candidate %s; one of:", only);
            for (int c = 0; c < nc; c++) printf(" %s", sg_cands[c].name);
            printf("\n");
            return 2;
        }
    }
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
    const size_t bytes = (size_t)4096 * 4096 * 4;
    float *a, *b, *d1, *d2;
    CK(cudaMalloc(&a, bytes + 64));
    CK(cudaMalloc(&b, bytes + 64));
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    fill<<<2048, 256>>>((unsigned *)a, bytes / 4 + 16, 11);
    fill<<<2048, 256>>>((unsigned *)b, bytes / 4 + 16, 12);
    int bad = 0;
    for (int c = 0; c < nc; c++) {
        if (only && strcmp(only, sg_cands[c].name)) continue;
        for (const auto &s : sg_shapes) {
            const double e = compare(sg_cands[c].fn, s, a, b, d1, d2);
            printf("%-13s vs shipped %dx%dx%d ld %d,%d,%d off %d,%d: %.3g%s\n", sg_cands[c].name, s[0], s[1], s[2],
                   s[3], s[4], s[5], s[6], s[7], e, e < 1e-5 ? "" : "  FAIL");
            bad += !(e < 1e-5);
        }
    }
    const int n = 4096;
    const float one = 1.0f, zero = 0.0f;
    const double f = 2.0 * n * n * n * 1e-12;
    const double tc = median_s([&] {
        return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, d1, n) ==
                       CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    });
    const double ts = median_s([&] { return gk_gemm_f32_warptile(d1, n, a, n, b, n, n, n, n, 1.0f, 0.0f, 0); });
    printf("cublasSgemm 4096^3:     %.1f TFLOP/s\n", f / tc);
    printf("%-22s  %.1f TFLOP/s, %.3f of cuBLAS\n", "shipped warptile:", f / ts, tc / ts);
    for (int c = 0; c < nc; c++) {
        if (only && strcmp(only, sg_cands[c].name)) continue;
        const double t = median_s([&] { return sg_cands[c].fn(d2, n, a, n, b, n, n, n, n); });
        printf("%-22s  %.1f TFLOP/s, %.3f of cuBLAS\n", (std::string(sg_cands[c].name) + ":").c_str(), f / t, tc / t);
    }
    return bad != 0;
}
