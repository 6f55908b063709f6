/* gk_sgemm.cuh - gk fp32 GEMM v0.2: the SIMT ladder from a naive kernel to warp tiles fed by a
   cp.async pipeline, C = alpha A B + beta C in fp32 (no tensor cores, no TF32).

   Needs gk_core.cuh (same folder). In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_SGEMM_IMPLEMENTATION for this header alone)
       #include "gk_sgemm.cuh"

   PUBLIC FUNCTIONS (row-major NN; leading dimensions in elements; c is read only when beta != 0)
     gk_gemm_f32_naive(c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream)     one thread per C
     gk_gemm_f32_smem(...)        32 x 32 tiles through shared memory
     gk_gemm_f32_regtile(...)     128 x 128 tile, 8 x 8 outputs per thread, 16-byte loads, A stored
                                  transposed in shared memory
     gk_gemm_f32_warptile(...)    warp tiles over the block tile, each thread's outputs strided so a
                                  warp's shared-memory reads are broadcasts; double-buffered
     gk_gemm_f32_pipelined(...)   the warp tiles (128 x 256 block, 8 warps) fed by a 3-stage cp.async
                                  pipeline that also transposes A: no staging registers
     gk_gemm_f32(...)             the fastest of these (pipelined)
     gk_gemm_ledger(m, n, k, GK_F32, GK_F32, has_c, 0)   (gk_core.cuh) bytes and FLOPs of a call

   ARGUMENTS AND ERRORS
     m == 0 or n == 0 is a no-op (no pointer is inspected); k == 0 gives C = beta C (a and b are
     not read, and may be NULL). A null pointer, a negative size, a leading dimension smaller
     than its row, a pointer not aligned to 4 bytes, c overlapping a or b, or a size past 32-bit
     indexing returns cudaErrorInvalidValue before anything launches; gk_failure_reason() names
     the argument. Any M, N, K is computed (tails predicated); 16-byte loads where rows allow.

   MEASURED  H200, 4096^3: pipelined 48.9 TFLOP/s, 0.96x cuBLAS SGEMM without TF32 (warp-tiled
     40.7); gk_bench/RESULTS.md has the current figures.

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_sgemm.cuh"
       // a [m, k], b [k, n], c [m, n] fp32 on the device, row-major
       if (gk_gemm_f32(c, n, a, k, b, n, m, n, k, 1.0f, 0.0f, stream) != cudaSuccess)
           fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"

#ifndef GK_SGEMM_CUH
#define GK_SGEMM_CUH

/* ---------------------------------------------------------------- public API */

GK_EXTERN_C_BEGIN
GK_DECL cudaError_t gk_gemm_f32_naive(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                      int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f32_smem(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                     int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f32_regtile(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                        int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f32_warptile(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                         int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f32_pipelined(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                          int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f32(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream);
GK_EXTERN_C_END

#endif /* GK_SGEMM_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_SGEMM_IMPLEMENTATION)) && !defined(GK_SGEMM_IMPLEMENTED)
#define GK_SGEMM_IMPLEMENTED

typedef struct gk_sgemm_args {
    float *c;
    const float *a, *b;
    int64_t lda, ldb, ldc;
    int m, n, k;
    int vec; /* a, b rows 16-byte aligned: float4 loads */
    float alpha, beta;
} gk_sgemm_args;

GK_DEV void gk_sgemm_store(const gk_sgemm_args *p, int row, int col, float acc)
{
    if (row >= p->m || col >= p->n) return;
    float *q = p->c + (int64_t)row * p->ldc + col;
    *q = p->beta != 0.0f ? p->alpha * acc + p->beta * *q : p->alpha * acc;
}

/* Rung 1: one thread per output; a warp reads 32 consecutive B values and broadcasts one A. */
static __global__ void __launch_bounds__(256) gk_sgemm_naive_kernel(gk_sgemm_args p)
{
    const int col = blockIdx.x * 32 + (threadIdx.x & 31), row = blockIdx.y * 8 + (threadIdx.x >> 5);
    if (row >= p.m || col >= p.n) return;
    float acc = 0.0f;
    for (int k = 0; k < p.k; k++) acc = fmaf(p.a[(int64_t)row * p.lda + k], p.b[(int64_t)k * p.ldb + col], acc);
    gk_sgemm_store(&p, row, col, acc);
}

/* Rung 2: 32 x 32 tiles of A and B in shared memory, each value read from memory once per tile
   instead of once per output (intensity 32 / 4 bytes instead of 1 / 4). */
static __global__ void __launch_bounds__(1024) gk_sgemm_smem_kernel(gk_sgemm_args p)
{
    __shared__ float as[32][33], bs[32][32];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += 32) {
        as[ty][tx] = row < p.m && k0 + tx < p.k ? p.a[(int64_t)row * p.lda + k0 + tx] : 0.0f;
        bs[ty][tx] = k0 + ty < p.k && col < p.n ? p.b[(int64_t)(k0 + ty) * p.ldb + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 32; k++) acc = fmaf(as[ty][k], bs[k][tx], acc);
        __syncthreads();
    }
    gk_sgemm_store(&p, row, col, acc);
}

/* Four consecutive values of a row-major matrix at (r, c), zeros past (rows, cols). */
GK_DEV float4 gk_sgemm_ld4(const float *x, int64_t ld, int r, int c, int rows, int cols, int vec)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r >= rows) return v;
    const float *q = x + (int64_t)r * ld + c;
    if (vec && c + 3 < cols) return *(const float4 *)q;
    if (c < cols) v.x = q[0];
    if (c + 1 < cols) v.y = q[1];
    if (c + 2 < cols) v.z = q[2];
    if (c + 3 < cols) v.w = q[3];
    return v;
}

/* Rung 3: 128 x 128 x 8 block tile, 256 threads of 8 x 8 outputs. A's tile is stored transposed
   (as[k][m]) so a thread reads its 8 A values as two float4, like its 8 B values. */
static __global__ void __launch_bounds__(256) gk_sgemm_regtile_kernel(gk_sgemm_args p)
{
    __shared__ __align__(16) float as[8][128], bs[8][128];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;
    float acc[8][8] = {};
    for (int k0 = 0; k0 < p.k; k0 += 8) {
        const float4 va = gk_sgemm_ld4(p.a, p.lda, m0 + tid / 2, k0 + tid % 2 * 4, p.m, p.k, p.vec);
        as[tid % 2 * 4 + 0][tid / 2] = va.x;
        as[tid % 2 * 4 + 1][tid / 2] = va.y;
        as[tid % 2 * 4 + 2][tid / 2] = va.z;
        as[tid % 2 * 4 + 3][tid / 2] = va.w;
        *(float4 *)&bs[tid / 32][tid % 32 * 4] = gk_sgemm_ld4(p.b, p.ldb, k0 + tid / 32, n0 + tid % 32 * 4, p.k, p.n, p.vec);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 8; k++) {
            float ra[8], rb[8];
            *(float4 *)&ra[0] = *(const float4 *)&as[k][ty * 8];
            *(float4 *)&ra[4] = *(const float4 *)&as[k][ty * 8 + 4];
            *(float4 *)&rb[0] = *(const float4 *)&bs[k][tx * 8];
            *(float4 *)&rb[4] = *(const float4 *)&bs[k][tx * 8 + 4];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) gk_sgemm_store(&p, m0 + ty * 8 + i, n0 + tx * 8 + j, acc[i][j]);
}

/* Rung 4: 128 x 128 x 16 block tile, 4 warps of 64 x 64, each thread 8 x 16 outputs: per
   k-step a thread reads 8 A values (2 float4) and 4 groups of 4 B values 16 apart, so the 32
   lanes of a warp read 2 distinct A float4 rows (broadcast) and conflict-free B rows. The next
   tile is fetched into registers while this one is consumed (two shared buffers, one barrier). */
#define GK_SGEMM_WT_BM 128
#define GK_SGEMM_WT_BN 128
#define GK_SGEMM_WT_BK 16
static __global__ void __launch_bounds__(128) gk_sgemm_warptile_kernel(gk_sgemm_args p)
{
    __shared__ __align__(16) float as[2][GK_SGEMM_WT_BK][GK_SGEMM_WT_BM], bs[2][GK_SGEMM_WT_BK][GK_SGEMM_WT_BN];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.y * GK_SGEMM_WT_BM, n0 = blockIdx.x * GK_SGEMM_WT_BN;
    const int wm0 = warp / 2 * 64, wn0 = warp % 2 * 64;
    const int tr = lane / 4 * 8, tc = lane % 4 * 4; /* thread's rows tr..tr+7, cols tc + 16 j .. +3 */
    float acc[8][16] = {};
    float4 ra[4], rb[4];

    /* A tile 128 x 16: 512 float4, 4 per thread (row tid, 4 k-groups); B 16 x 128: 4 per thread */
#define GK_SGEMM_WT_FETCH(k0)                                                                                  \
    do {                                                                                                       \
        for (int i_ = 0; i_ < 4; i_++) {                                                                       \
            ra[i_] = gk_sgemm_ld4(p.a, p.lda, m0 + tid, (k0) + i_ * 4, p.m, p.k, p.vec);                       \
            rb[i_] = gk_sgemm_ld4(p.b, p.ldb, (k0) + i_ * 4 + tid / 32, n0 + tid % 32 * 4, p.k, p.n, p.vec);   \
        }                                                                                                      \
    } while (0)
#define GK_SGEMM_WT_STORE(buf)                                                                                 \
    do {                                                                                                       \
        for (int i_ = 0; i_ < 4; i_++) {                                                                       \
            as[buf][i_ * 4 + 0][tid] = ra[i_].x;                                                               \
            as[buf][i_ * 4 + 1][tid] = ra[i_].y;                                                               \
            as[buf][i_ * 4 + 2][tid] = ra[i_].z;                                                               \
            as[buf][i_ * 4 + 3][tid] = ra[i_].w;                                                               \
            *(float4 *)&bs[buf][i_ * 4 + tid / 32][tid % 32 * 4] = rb[i_];                                      \
        }                                                                                                      \
    } while (0)

    GK_SGEMM_WT_FETCH(0);
    GK_SGEMM_WT_STORE(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += GK_SGEMM_WT_BK) {
        const int more = k0 + GK_SGEMM_WT_BK < p.k;
        if (more) GK_SGEMM_WT_FETCH(k0 + GK_SGEMM_WT_BK);
#pragma unroll
        for (int k = 0; k < GK_SGEMM_WT_BK; k++) {
            float a8[8], b16[16];
            *(float4 *)&a8[0] = *(const float4 *)&as[buf][k][wm0 + tr];
            *(float4 *)&a8[4] = *(const float4 *)&as[buf][k][wm0 + tr + 4];
#pragma unroll
            for (int j = 0; j < 4; j++) *(float4 *)&b16[j * 4] = *(const float4 *)&bs[buf][k][wn0 + j * 16 + tc];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 16; j++) acc[i][j] = fmaf(a8[i], b16[j], acc[i][j]);
        }
        if (more) GK_SGEMM_WT_STORE(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }
#undef GK_SGEMM_WT_FETCH
#undef GK_SGEMM_WT_STORE
    /* row by row, stopping at the last row: 128 independent bounds checks spilled on sm_80 */
    const int row0 = m0 + wm0 + tr, col0 = n0 + wn0 + tc;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (row0 + i >= p.m) break;
#pragma unroll
        for (int j = 0; j < 16; j++) gk_sgemm_store(&p, row0 + i, col0 + j / 4 * 16 + j % 4, acc[i][j]);
    }
}


/* Rung 5: rung 4's warp tiles fed by a cp.async pipeline. A 128 x 256 x 16 block of 8 warps of
   64 x 64, each thread 8 x 16 outputs in 4 x 4 groups (rows 32 apart, columns 16 apart: every
   fragment read is one conflict-free LDS.128, broadcast across the lanes sharing it). Both
   operands go global -> shared by cp.async, 3 tiles in flight, with no staging registers and
   no st.shared:
   - A is transposed by the copy itself: 4-byte copies, 8 lanes reading one 32-byte sector of a
     row, into as[k][m] rows of BM + 4 floats (bank 4 k + m: no conflict);
   - B: one 16-byte copy per 4 columns when its rows are 16-byte aligned and N % 4 == 0 (vb),
     else 4-byte copies;
   - rows of A past M and columns of B past N are clamped, not zeroed (they feed outputs that are
     never stored); only a partial last k-tile zero-fills, so full tiles carry no predicates;
   - the wait and the barrier come before a tile's last k-step: the stage just read is refilled
     and the next tile's first fragments load while that step's FFMAs run.
   H200, 4096^3: 49.0 TFLOP/s, 0.95x cuBLAS SGEMM, where rung 4 (registers staging the next
   tile, 4 warps) reaches 40.7. */
#define GK_SGEMM_PL_BM 128
#define GK_SGEMM_PL_BN 256
#define GK_SGEMM_PL_BK 16
#define GK_SGEMM_PL_STAGES 3
#define GK_SGEMM_PL_SA (GK_SGEMM_PL_BM + 4) /* floats a row of the transposed A tile */
#define GK_SGEMM_PL_STAGE (GK_SGEMM_PL_BK * GK_SGEMM_PL_SA + GK_SGEMM_PL_BK * GK_SGEMM_PL_BN) /* floats */
#define GK_SGEMM_PL_SMEM (GK_SGEMM_PL_STAGES * GK_SGEMM_PL_STAGE * 4)

/* One k-tile's copies into stage s (full: k0 + BK <= K, a constant after inlining). Thread tid
   copies A rows am + 32 r (r < 4), k ak and ak + 8, and B k-rows bk + 4 i (i < 4), columns
   bcol .. bcol + 3; pa, pb: its A and B sources for this tile, moved on to the next. */
GK_DEV void gk_sgemm_pl_copy(const gk_sgemm_args *p, float *smem, int s, int k0, int full, int vb, const float **pa,
                             const int64_t *aoff, const float **pb, int bcol, int bc0)
{
    const int tid = threadIdx.x, ak = tid % 8, am = tid / 8, bk = tid / 64;
    /* this thread's first destinations, then constant steps: written so, the compiler spreads
       the fragment reads between the FFMAs; with each address computed from the stage base it
       issued them in pairs, 46.5 TFLOP/s against 48.9 */
    float *as = smem + s * GK_SGEMM_PL_STAGE + ak * GK_SGEMM_PL_SA + am;
    float *bs = smem + s * GK_SGEMM_PL_STAGE + GK_SGEMM_PL_BK * GK_SGEMM_PL_SA + bk * GK_SGEMM_PL_BN + tid % 64 * 4;
    const int64_t bstep = (int64_t)4 * p->ldb;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int g = 0; g < 2; g++) {
            const int ok = full || k0 + ak + 8 * g < p->k;
            gk_cp_async_4(as + 8 * g * GK_SGEMM_PL_SA + 32 * r, ok ? *pa + aoff[r] + 8 * g : p->a, ok ? 4 : 0);
        }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int ok = full || k0 + bk + 4 * i < p->k;
        const float *q = *pb + i * bstep;
        float *d = bs + 4 * i * GK_SGEMM_PL_BN;
        if (vb) gk_cp_async_16(d, ok ? q : p->b, ok ? 16 : 0);
        else
#pragma unroll
            for (int j = 0; j < 4; j++) gk_cp_async_4(d + j, ok ? q + (min(bcol + j, p->n - 1) - bc0) : p->b, ok ? 4 : 0);
    }
    *pa += GK_SGEMM_PL_BK;
    *pb += (int64_t)GK_SGEMM_PL_BK * p->ldb;
}

/* A thread's fragments of k-step k of stage s: 8 A values (rows tr + 0..3, tr + 32 + 0..3) and
   16 B values (columns tc + 16 h + 0..3). */
GK_DEV void gk_sgemm_pl_frags(const float *smem, int s, int k, int tr, int tc, float *fa, float *fb)
{
    const float *as = smem + s * GK_SGEMM_PL_STAGE, *bs = as + GK_SGEMM_PL_BK * GK_SGEMM_PL_SA;
#pragma unroll
    for (int g = 0; g < 2; g++) *(float4 *)&fa[4 * g] = *(const float4 *)&as[k * GK_SGEMM_PL_SA + tr + 32 * g];
#pragma unroll
    for (int h = 0; h < 4; h++) *(float4 *)&fb[4 * h] = *(const float4 *)&bs[k * GK_SGEMM_PL_BN + tc + 16 * h];
}

GK_DEV void gk_sgemm_pl_run(const gk_sgemm_args *p, int vb)
{
    extern __shared__ float4 gk_sgemm_pl_smem[];
    float *smem = (float *)gk_sgemm_pl_smem;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.y * GK_SGEMM_PL_BM, n0 = blockIdx.x * GK_SGEMM_PL_BN;
    const int am = tid / 8, bcol = n0 + tid % 64 * 4;
    int64_t aoff[4];
#pragma unroll
    for (int r = 0; r < 4; r++) aoff[r] = (int64_t)min(m0 + am + 32 * r, p->m - 1) * p->lda;
    const int bc0 = vb ? min(bcol, p->n - 4) : min(bcol, p->n - 1);
    const float *pa = p->a + tid % 8, *pb = p->b + (int64_t)(tid / 64) * p->ldb + bc0;
    const int ktiles = (p->k + GK_SGEMM_PL_BK - 1) / GK_SGEMM_PL_BK;
    /* STAGES tiles in flight; a group is committed even when empty so the wait counts hold */
#pragma unroll
    for (int s = 0; s < GK_SGEMM_PL_STAGES; s++) {
        if (s < ktiles) {
            if ((s + 1) * GK_SGEMM_PL_BK <= p->k) gk_sgemm_pl_copy(p, smem, s, s * GK_SGEMM_PL_BK, 1, vb, &pa, aoff, &pb, bcol, bc0);
            else gk_sgemm_pl_copy(p, smem, s, s * GK_SGEMM_PL_BK, 0, vb, &pa, aoff, &pb, bcol, bc0);
        }
        gk_cp_async_commit();
    }
    gk_cp_async_wait_2(); /* STAGES - 1 */
    __syncthreads();

    const int wm0 = warp / 4 * 64, wn0 = warp % 4 * 64, tr = wm0 + lane / 4 * 4, tc = wn0 + lane % 4 * 4;
    float acc[8][16];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 16; j++) acc[i][j] = 0.0f;
    float fa[2][8], fb[2][16];
    gk_sgemm_pl_frags(smem, 0, 0, tr, tc, fa[0], fb[0]);
    int rs = 0; /* the stage being read */
    for (int kt = 0; kt < ktiles; kt++) {
#pragma unroll
        for (int k = 0; k < GK_SGEMM_PL_BK; k++) {
            if (k < GK_SGEMM_PL_BK - 1) gk_sgemm_pl_frags(smem, rs, k + 1, tr, tc, fa[(k + 1) & 1], fb[(k + 1) & 1]);
            else {
                /* tile kt + 1 has landed for every thread and every thread has read tile kt:
                   refill this stage with tile kt + STAGES, then read the next tile's first
                   fragments */
                gk_cp_async_wait_1(); /* STAGES - 2 */
                __syncthreads();
                const int nt = kt + GK_SGEMM_PL_STAGES;
                if (nt < ktiles) {
                    if ((nt + 1) * GK_SGEMM_PL_BK <= p->k) gk_sgemm_pl_copy(p, smem, rs, nt * GK_SGEMM_PL_BK, 1, vb, &pa, aoff, &pb, bcol, bc0);
                    else gk_sgemm_pl_copy(p, smem, rs, nt * GK_SGEMM_PL_BK, 0, vb, &pa, aoff, &pb, bcol, bc0);
                }
                gk_cp_async_commit();
                rs = rs + 1 == GK_SGEMM_PL_STAGES ? 0 : rs + 1;
                gk_sgemm_pl_frags(smem, rs, 0, tr, tc, fa[0], fb[0]);
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 16; j++) acc[i][j] = fmaf(fa[k & 1][i], fb[k & 1][j], acc[i][j]);
        }
    }
    gk_cp_async_wait_0();
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int row = m0 + tr + i / 4 * 32 + i % 4;
        if (row >= p->m) continue;
#pragma unroll
        for (int j = 0; j < 16; j++) gk_sgemm_store(p, row, n0 + tc + j / 4 * 16 + j % 4, acc[i][j]);
    }
}

/* vb: 16-byte B copies (see above); a kernel each so the copies carry no runtime choice */
static __global__ void __launch_bounds__(256, 1) gk_sgemm_pipelined_kernel(gk_sgemm_args p) { gk_sgemm_pl_run(&p, 0); }
static __global__ void __launch_bounds__(256, 1) gk_sgemm_pipelined_vb_kernel(gk_sgemm_args p) { gk_sgemm_pl_run(&p, 1); }

/* The fp32 rungs' arguments (validated by the caller); vec: A and B rows allow 16-byte loads. */
static gk_sgemm_args gk_sgemm_args_of(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                      int64_t m, int64_t n, int64_t k, float alpha, float beta)
{
    gk_sgemm_args p;
    p.c = c;
    p.a = a;
    p.b = b;
    p.lda = lda;
    p.ldb = ldb;
    p.ldc = ldc;
    p.m = (int)m;
    p.n = (int)n;
    p.k = (int)k;
    p.alpha = alpha;
    p.beta = beta;
    p.vec = gk_is_aligned(a, 16) && gk_is_aligned(b, 16) && lda % 4 == 0 && ldb % 4 == 0;
    return p;
}

/* fp32 ladder: validation shared by every rung, then one launch. */
static cudaError_t gk_sgemm_launch_checked(const char *fn, int rung, float *c, int64_t ldc, const float *a, int64_t lda,
                                           const float *b, int64_t ldb, int64_t m, int64_t n, int64_t k, float alpha,
                                           float beta, cudaStream_t stream)
{
    GK_TRY(gk_check_mnk(fn, m, n, k));
    if (m == 0 || n == 0) return cudaSuccess; /* nothing to write; pointers not inspected */
    GK_TRY(gk_check_ptr(fn, "c", c));
    GK_TRY(gk_check_elem_aligned(fn, "c", c, 4));
    if (ldc < n) return gk__fail(cudaErrorInvalidValue, fn, "ldc = %lld is smaller than n = %lld", (long long)ldc, (long long)n);
    if (k > 0) { /* with k == 0, a and b are not read */
        GK_TRY(gk_check_ptr(fn, "a", a));
        GK_TRY(gk_check_ptr(fn, "b", b));
        GK_TRY(gk_check_elem_aligned(fn, "a", a, 4));
        GK_TRY(gk_check_elem_aligned(fn, "b", b, 4));
        if (lda < k)
            return gk__fail(cudaErrorInvalidValue, fn, "lda = %lld is smaller than k = %lld", (long long)lda, (long long)k);
        if (ldb < n)
            return gk__fail(cudaErrorInvalidValue, fn, "ldb = %lld is smaller than n = %lld", (long long)ldb, (long long)n);
        GK_TRY(gk_check_fits_i32(fn, "lda", lda));
        GK_TRY(gk_check_fits_i32(fn, "ldb", ldb));
    }
    GK_TRY(gk_check_fits_i32(fn, "ldc", ldc));
    if (k > 0) { /* c is written while a and b are read */
        int64_t c_bytes = 0, a_bytes = 0, b_bytes = 0; /* sizes and strides below 2^31: no overflow */
        GK_TRY(gk_check_span(fn, "c", m, n, ldc, 4, &c_bytes));
        GK_TRY(gk_check_span(fn, "a", m, k, lda, 4, &a_bytes));
        GK_TRY(gk_check_span(fn, "b", k, n, ldb, 4, &b_bytes));
        GK_TRY(gk_check_disjoint(fn, "c", c, c_bytes, "a", a, a_bytes));
        GK_TRY(gk_check_disjoint(fn, "c", c, c_bytes, "b", b, b_bytes));
    }
    if (k == 0) { /* C = beta C: the one-thread-an-output rung, with no k to loop over */
        const gk_sgemm_args p = gk_sgemm_args_of(c, ldc, a, lda, b, ldb, m, n, k, 0.0f, beta);
        gk_sgemm_naive_kernel<<<dim3((unsigned)gk_ceil_div(n, 32), (unsigned)gk_ceil_div(m, 8)), 256, 0, stream>>>(p);
        return gk_check_launch(fn);
    }
    const gk_sgemm_args p = gk_sgemm_args_of(c, ldc, a, lda, b, ldb, m, n, k, alpha, beta);
    const unsigned gm32 = (unsigned)gk_ceil_div(m, 32), gn32 = (unsigned)gk_ceil_div(n, 32);
    const unsigned gm128 = (unsigned)gk_ceil_div(m, 128), gn128 = (unsigned)gk_ceil_div(n, 128);
    switch (rung) {
    case 0: gk_sgemm_naive_kernel<<<dim3(gn32, (unsigned)gk_ceil_div(m, 8)), 256, 0, stream>>>(p); break;
    case 1: gk_sgemm_smem_kernel<<<dim3(gn32, gm32), 1024, 0, stream>>>(p); break;
    case 2: gk_sgemm_regtile_kernel<<<dim3(gn128, gm128), 256, 0, stream>>>(p); break;
    case 3: gk_sgemm_warptile_kernel<<<dim3(gn128, gm128), 128, 0, stream>>>(p); break;
    default: {
        /* 16-byte B copies need aligned rows and whole groups of 4 columns */
        const int vb = p.vec && n % 4 == 0;
        const void *kern = vb ? (const void *)gk_sgemm_pipelined_vb_kernel : (const void *)gk_sgemm_pipelined_kernel;
        static unsigned attr_set[2];
        GK_TRY(gk_smem_opt_in(fn, kern, GK_SGEMM_PL_SMEM, &attr_set[vb]));
        const dim3 grid((unsigned)gk_ceil_div(n, GK_SGEMM_PL_BN), (unsigned)gk_ceil_div(m, GK_SGEMM_PL_BM));
        if (vb) gk_sgemm_pipelined_vb_kernel<<<grid, 256, GK_SGEMM_PL_SMEM, stream>>>(p);
        else gk_sgemm_pipelined_kernel<<<grid, 256, GK_SGEMM_PL_SMEM, stream>>>(p);
    } break;
    }
    return gk_check_launch(fn);
}

static cudaError_t gk_sgemm_launch(const char *fn, int rung, float *c, int64_t ldc, const float *a, int64_t lda,
                                   const float *b, int64_t ldb, int64_t m, int64_t n, int64_t k, float alpha, float beta,
                                   cudaStream_t stream)
{
    gk__begin();
    return gk__end(fn, gk_sgemm_launch_checked(fn, rung, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream));
}

GK_EXTERN_C_BEGIN

GK_IMPL cudaError_t gk_gemm_f32_naive(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                      int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32_naive", 0, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_IMPL cudaError_t gk_gemm_f32_smem(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                     int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32_smem", 1, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_IMPL cudaError_t gk_gemm_f32_regtile(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                        int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32_regtile", 2, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_IMPL cudaError_t gk_gemm_f32_warptile(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                         int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32_warptile", 3, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_IMPL cudaError_t gk_gemm_f32_pipelined(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                          int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32_pipelined", 4, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_IMPL cudaError_t gk_gemm_f32(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, int64_t ldb,
                                int64_t m, int64_t n, int64_t k, float alpha, float beta, cudaStream_t stream)
{
    return gk_sgemm_launch("gk_gemm_f32", 4, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream);
}

GK_EXTERN_C_END

#endif /* sgemm implementation */
