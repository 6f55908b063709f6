/* gk_gemm.cuh - gk GEMM v0.1: the fp32 SIMT ladder (naive, shared-memory tiled, register-tiled,
   warp-tiled, cp.async-pipelined), bf16/fp16 tensor-core GEMM on mma.sync with a multi-stage
   cp.async pipeline, swizzled shared memory, block rasterization, split-K and a fused epilogue,
   and on Hopper (sm_90a) wgmma kernels fed by TMA with the same epilogue.

   Needs gk_core.cuh and gk_mma.cuh (same folder), and <cuda.h> from the CUDA toolkit (the TMA
   descriptor type; no -lcuda: the encoder is found through the runtime). In ONE .cu file of
   your program:
       #define GK_IMPLEMENTATION      (or GK_GEMM_IMPLEMENTATION for this header alone)
       #include "gk_gemm.cuh"
   Build for sm_90a (-gencode arch=compute_90a,code=sm_90a) to get the wgmma kernels on H100 /
   H200; without it (sm_80, sm_90) every problem runs on the mma.sync kernels.

   LAYOUTS (row-major views, leading dimensions in elements)
     op(A) is M x K: trans_a = 0 reads A[m * lda + k] (row-major), 1 reads A[k * lda + m].
     op(B) is K x N: trans_b = 0 reads B[k * ldb + n] (row-major), 1 reads B[n * ldb + k]
     (a [N, K] weight, as torch's Linear stores it). NN, NT, TN and TT are the four pairs.

   TENSOR-CORE GEMM (T in bf16, f16; fp32 accumulation)
     gk_gemm_T(d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias,
               m, n, k, alpha, beta, act, workspace, workspace_bytes, stream)
         D = act(alpha * op(A) op(B) + beta * C + bias), D and C [M, N] of d_dtype (GK_BF16,
         GK_F16 or GK_F32) with strides ldd and ldc; C may be D (in place); c is not read when
         beta == 0 (it may be NULL); bias is fp32 [N] or NULL; act is a gk_act (GK_ACT_GELU is
         the tanh form, gk_gelu_tanh_f32; GK_ACT_SILU x / (1 + e^-x)).
         workspace (may be NULL, else 256-byte aligned) lets the dispatcher split K when M x N has
         too few tiles to fill the GPU, and repack operands whose rows are not 16-byte aligned
         (a leading dimension that is not a multiple of 8) so they take the cp.async path:
         gk_gemm_workspace_bytes(m, n, k, trans_a, lda, trans_b, ldb) says how much it would use;
         with less it does not split, and unaligned operands take the element-wise-load kernels.
         Split-K partials are summed in a fixed order: results are deterministic.
     gk_gemm_plan_for(m, n, k, trans_a, lda, trans_b, ldb)
                                             the dispatcher's configuration, splits and workspace
     gk_gemm_ex(config, splits, in_dtype, ...the same arguments...)
         runs one configuration (0 .. gk_gemm_config_count() - 1, or -1: the dispatcher's pick)
         with a given number of K splits (0: the dispatcher's), for tuning and benchmarks.
     gk_gemm_config_info(config)             a configuration's tile, warps, stages, threads, bytes
     The dispatcher takes the wgmma kernels (any layout) when the build has sm_90a code, the GPU
     is compute capability 9.0 and operand rows are 16-byte aligned (or repacked); otherwise
     the mma.sync kernels. Whether the build has sm_90a code is read from the device once per
     device (a synchronous cudaMemcpyFromSymbol): make the first gk_gemm call (or
     gk_gemm_plan_for) on a device outside CUDA graph capture.

   FP32 SIMT LADDER (row-major NN: C = alpha A B + beta C; c is read only when beta != 0)
     gk_gemm_f32_naive(c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream)     one thread per C
     gk_gemm_f32_smem(...)        32 x 32 tiles through shared memory
     gk_gemm_f32_regtile(...)     128 x 128 tile, 8 x 8 outputs per thread, 16-byte loads, A stored
                                  transposed in shared memory
     gk_gemm_f32_warptile(...)    warp tiles over the block tile, each thread's outputs strided so a
                                  warp's shared-memory reads are broadcasts; double-buffered
     gk_gemm_f32_pipelined(...)   the warp tiles (128 x 256 block, 8 warps) fed by a 3-stage cp.async
                                  pipeline that also transposes A: no staging registers
     gk_gemm_f32(...)             the fastest of these (pipelined)

   LEDGER
     gk_gemm_ledger(m, n, k, in_dtype, d_dtype, has_c, has_bias)
         FLOPs = 2 M N K; bytes = A, B, bias read once, C read once if beta != 0, D written once.

   ARGUMENTS AND ERRORS
     A null pointer (c only when beta != 0), m, n or k <= 0, a leading dimension smaller than its
     row, an unknown dtype, act or configuration, a pointer not aligned to its element, or a
     size past 32-bit indexing (m, n, k < 2^31) returns cudaErrorInvalidValue before anything
     launches; gk_failure_reason() names the argument. Any M, N, K >= 1 is computed: tails are
     predicated (zeros past the matrix; a chunk crossing its edge is read value by value, so no
     read leaves the operand's allocation), and operands whose rows are not 16-byte
     aligned are repacked into the workspace or, without one, read by element-wise loads.

   MEASURED (H200, gk_bench/RESULTS.md; ceilings measured in the same process)
     bf16 on wgmma (sm_90a): 631 / 703 TFLOP/s at 4096^3 / 8192^3 NT, 66% / 73% of the
     measured wgmma rate (960) and 0.83x / 0.93x cuBLAS, its k-tiles at cuBLAS's rate and ~12 us
     a round of tiles in fill and epilogue against cuBLAS's ~2 (RESULTS.md); LLM shapes at
     M = 2048 0.91x / 0.92x;
     4095 x 4097 x 4093 with unaligned rows 263 us, 0.83x of 4096^3 (3.4x cuBLAS): the repack, a
     launch of its own at 96% of a cudaMemcpy of its bytes, is ~38 of those us; reading the
     rows in place and copying them inside the GEMM launch both measured slower (RESULTS.md,
     "The odd shape"). Decode, x[M, 8192] w[N, 8192]^T, bound by the bytes of w: M = 16 on the
     swapped 16 x 128 tile 46 / 130 us for N = 8192 / 28672 (68% / 85% of the copy bound, 0.96x /
     0.95x cuBLAS), M = 64 on the swapped 64 x 128 tile 49 / 135 us (sweep), M = 128 on the
     128 x 64 / 128 x 256 tiles 49 / 137 us (0.96x / 1.00x). bf16 on mma.sync
     (sm_80, sm_90 builds): 338 / 334, 52% of the register-only mma.sync rate (647). fp32
     4096^3: pipelined 48.9 TFLOP/s, 0.96x cuBLAS SGEMM without TF32 (warp-tiled 40.7).

   CONFIGURATION MACROS
     GK_GEMM_GROUP_M (8)      tile rows per rasterization group: a group of 8 x N-tiles walks down
                              N so that its A and B panels stay in L2
     GK_GEMM_MAX_SPLITS (16)  the most K splits the dispatcher uses

   GENERATOR
     GK_DEFINE_GEMM_MMA(name, dt, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) writes one kernel
     per layout (name_nn, _nt, _tn, _tt) and its gk_gemm_config for a block tile BM x BN x BK, warp
     tile WM x WN, STAGES cp.async stages, registers budgeted for MINB blocks per SM, fragments
     double-buffered or not (DBUF), and cp.async (VEC 1) or element-wise (VEC 0) operand loads;
     threads, shared-memory bytes and swizzle follow from them and are checked at compile time
     in plain words.
     GK_DEFINE_GEMM_WGMMA(name, dt, BM, BN, STAGES, PERSIST, RATE) writes the sm_90a kernels (per
     layout) and the config of a BM x BN x 64 tile (BM 128 or 256, BN 64, 128 or 256, not both
     256; or BM 16 or 64, BN 128: a swapped tile, whose MMAs compute D^T, for A row-major only)
     with STAGES TMA stages: a producer warpgroup and two wgmma consumer warpgroups, one block per SM (or a
     persistent grid of them, PERSIST). RATE is the tile's measured TFLOP/s (8192^3 NT), which
     the dispatcher's time model divides by. Tiles of a last column at most half full run the
     half-width wgmma (n = BN / 2).

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_gemm.cuh"
       // x: [tokens, 4096] bf16, w: [11008, 4096] bf16 (a Linear weight), y: [tokens, 11008] bf16
       cudaError_t e = gk_gemm_bf16(y, GK_BF16, 11008, x, 4096, 0, w, 4096, 1, NULL, 0, NULL,
                                    tokens, 11008, 4096, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#ifndef GK_GEMM_CUH
#define GK_GEMM_CUH

#include "gk_core.cuh"
#include "gk_mma.cuh"

#include <cuda.h> /* CUtensorMap: the TMA descriptors of the sm_90a kernels */


#ifndef GK_GEMM_GROUP_M
#define GK_GEMM_GROUP_M 8
#endif
#ifndef GK_GEMM_MAX_SPLITS
#define GK_GEMM_MAX_SPLITS 16
#endif

typedef enum gk_act { GK_ACT_NONE = 0, GK_ACT_RELU = 1, GK_ACT_GELU = 2, GK_ACT_SILU = 3 } gk_act;

/* ---------------------------------------------------------------- public API */

GK_DECL cudaError_t gk_gemm_bf16(void *d, int d_dtype, int64_t ldd, const gk_bf16 *a, int64_t lda, int trans_a,
                                 const gk_bf16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                 const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                 void *workspace, size_t workspace_bytes, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_f16(void *d, int d_dtype, int64_t ldd, const gk_f16 *a, int64_t lda, int trans_a,
                                const gk_f16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                void *workspace, size_t workspace_bytes, cudaStream_t stream);
GK_DECL cudaError_t gk_gemm_ex(int config, int splits, int in_dtype, void *d, int d_dtype, int64_t ldd, const void *a,
                               int64_t lda, int trans_a, const void *b, int64_t ldb, int trans_b, const void *c,
                               int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k, float alpha,
                               float beta, int act, void *workspace, size_t workspace_bytes, cudaStream_t stream);
/* The dispatcher's plan for a problem (operand pointers assumed 16-byte aligned, as cudaMalloc
   gives): its configuration, K splits, and the workspace bytes it would use for the split-K
   partials and for repacking operands whose leading dimension is not a multiple of 8. */
typedef struct gk_gemm_plan {
    int config, splits;
    size_t split_bytes, pack_a_bytes, pack_b_bytes, workspace_bytes; /* workspace = the other three */
} gk_gemm_plan;
GK_DECL gk_gemm_plan gk_gemm_plan_for(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                      int64_t ldb);
GK_DECL size_t gk_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                       int64_t ldb);

#define GK_GEMM_F32_DECLARE(variant)                                                                     \
    GK_DECL cudaError_t gk_gemm_f32##variant(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, \
                                             int64_t ldb, int64_t m, int64_t n, int64_t k, float alpha,        \
                                             float beta, cudaStream_t stream);
GK_GEMM_F32_DECLARE(_naive)
GK_GEMM_F32_DECLARE(_smem)
GK_GEMM_F32_DECLARE(_regtile)
GK_GEMM_F32_DECLARE(_warptile)
GK_GEMM_F32_DECLARE(_pipelined)
GK_GEMM_F32_DECLARE()

/* A tensor-core configuration, as the generator derives it. */
typedef struct gk_gemm_config {
    const char *name;
    int bm, bn, bk, wm, wn, stages;
    int min_blocks; /* blocks per SM the registers are budgeted for (__launch_bounds__) */
    int dbuf;       /* fragments double-buffered across k-steps */
    int threads;    /* (BM / WM) (BN / WN) warps of 32 */
    int smem_bytes; /* STAGES (BM + BN) BK 2 */
    int vec;        /* 1: cp.async or TMA, operand rows must be 16-byte aligned; 0: element-wise loads */
    int wgmma;      /* 1: sm_90a wgmma fed by TMA (a producer warpgroup and two consumers) */
    int persistent; /* 1: one block per SM walks the tiles (the producer runs ahead into the next) */
    int rate;       /* wgmma: TFLOP/s measured at 8192^3 NT on the H200, the dispatcher's time model */
    int swap;       /* wgmma, BM 16 or 64: the MMAs compute D^T = op(B)^T op(A)^T (B's rows fill their M) */
} gk_gemm_config;

GK_DECL int gk_gemm_config_count(void);
GK_DECL gk_gemm_config gk_gemm_config_info(int config); /* name NULL for an unknown index */

GK_API gk_ledger gk_gemm_ledger(int64_t m, int64_t n, int64_t k, int in_dtype, int d_dtype, int has_c, int has_bias)
{
    gk_ledger l;
    l.flops = 2.0 * m * n * k;
    l.bytes = (double)(m * k + k * n) * gk_dtype_size(in_dtype) + (double)m * n * gk_dtype_size(d_dtype) * (has_c ? 2 : 1) +
              (has_bias ? 4.0 * n : 0.0);
    return l;
}

/* Shared-memory bytes of a configuration: STAGES copies of the A and B tiles, 2 bytes a value. */
GK_HD int gk_gemm_smem_bytes(int bm, int bn, int bk, int stages) { return stages * (bm + bn) * bk * 2; }

/* ---------------------------------------------------------------- device building blocks */

typedef struct gk_gemm_args {
    const void *a, *b, *c;
    void *d;
    const float *bias;
    float *partial; /* split-K: [splits][M][N] fp32, NULL when K is not split */
    int64_t lda, ldb, ldc, ldd;
    int m, n, k;
    int k_per_split; /* a multiple of BK */
    int tiles_m, tiles_n;
    int d_dtype, act;
    float alpha, beta;
} gk_gemm_args;

GK_DEV float gk_gemm_act(int act, float v)
{
    switch (act) {
    case GK_ACT_RELU: return fmaxf(v, 0.0f);
    case GK_ACT_GELU: return gk_gelu_tanh_f32(v);
    case GK_ACT_SILU: return gk_silu_f32(v);
    default: return v;
    }
}

/* One output value through the epilogue: alpha acc + beta C + bias, the activation. */
GK_DEV float gk_gemm_epilogue(const gk_gemm_args *p, float acc, int row, int col)
{
    float v = p->alpha * acc;
    if (p->beta != 0.0f) v += p->beta * gk_load1_f32(p->c, (int64_t)row * p->ldc + col, p->d_dtype);
    if (p->bias) v += p->bias[col];
    return gk_gemm_act(p->act, v);
}

/* Where output (row, col) goes: the split's fp32 partials, or D, es bytes a value. */
GK_DEV char *gk_gemm_out(const gk_gemm_args *p, int row, int col, int split, int es)
{
    return p->partial ? (char *)(p->partial + ((int64_t)split * p->m + row) * p->n + col)
                      : (char *)p->d + ((int64_t)row * p->ldd + col) * es;
}

/* Two neighbouring outputs (row, col) and (row, col + 1), col + 1 may be past N: one paired
   store where D's row allows it. */
GK_DEV void gk_gemm_store2(const gk_gemm_args *p, int row, int col, float v0, float v1, int split)
{
    if (row >= p->m || col >= p->n) return;
    const int two = col + 1 < p->n;
    if (p->partial) {
        float *q = (float *)gk_gemm_out(p, row, col, split, 4);
        q[0] = v0;
        if (two) q[1] = v1;
        return;
    }
    float y[2];
    y[0] = gk_gemm_epilogue(p, v0, row, col);
    if (two) y[1] = gk_gemm_epilogue(p, v1, row, col + 1);
    const int64_t i = (int64_t)row * p->ldd + col;
    const int es = gk_dtype_size(p->d_dtype);
    if (two && gk_is_aligned((const char *)p->d + i * es, 2 * es)) {
        if (p->d_dtype == GK_F32) *(float2 *)((float *)p->d + i) = make_float2(y[0], y[1]);
        else *(unsigned *)((char *)p->d + i * 2) = gk_pack2_f32(y, p->d_dtype);
    } else {
        gk_store1_f32(p->d, i, p->d_dtype, y[0]);
        if (two) gk_store1_f32(p->d, i + 1, p->d_dtype, y[1]);
    }
}

/* Block tile of this block, in a rasterized order: groups of GK_GEMM_GROUP_M tile rows walk the
   N tiles column by column, so consecutive blocks share B panels and a group's A panels stay in
   L2 (launch order follows blockIdx.x). */
GK_DEV void gk_gemm_tile_of(const gk_gemm_args *p, int id, int *tm, int *tn)
{
    const int per_group = GK_GEMM_GROUP_M * p->tiles_n;
    const int first = id / per_group * GK_GEMM_GROUP_M;
    const int rows = min(p->tiles_m - first, GK_GEMM_GROUP_M);
    *tm = first + (id % per_group) % rows;
    *tn = (id % per_group) / rows;
}

GK_DEV void gk_gemm_tile(const gk_gemm_args *p, int *tm, int *tn) { gk_gemm_tile_of(p, blockIdx.x, tm, tn); }

/* Shared-memory byte offset of the 8-value chunk at (mn, k) of an operand tile.
   K-contiguous tiles (A not transposed, B transposed) are [BMN][BK], rows of BK * 2 bytes
   (32, 64 or 128), XOR-swizzled by row. MN-contiguous tiles are panels of 64 along MN, each
   [BK][64] with 128-byte rows swizzled by k. Either way the 8 rows an ldmatrix reads, and the
   8 chunks a quarter warp of cp.async writes, sit in 8 distinct bank groups. */
GK_DEV int gk_gemm_smem_off(int kmaj, int mn, int k, int bk)
{
    if (kmaj) return gk_swizzle_offset(mn, k >> 3, bk * 2);
    return (mn >> 6) * (bk * 128) + gk_swizzle_offset(k, (mn & 63) >> 3, 128);
}

/* One operand's copy plan for this thread, fixed for the whole kernel: which 16-byte chunks of
   the (BMN x BK) tile it copies (chunk i = threadIdx.x + i * threads), where they sit in shared
   memory, and where the first k-tile's sources are. Per k-tile only the source moves. */
typedef struct gk_gemm_ld {
    const char *g;    /* chunk 0's source at k-tile 0 (clamped into the matrix) */
    int64_t cstride;  /* bytes between this thread's chunks in global memory */
    int64_t kstride;  /* bytes from one k-tile to the next */
    int s[8];         /* chunk i's byte offset in the tile */
    int full[8];      /* values chunk i copies from a k-tile wholly inside K: 8, 0 past the
                         matrix's rows, or its columns left (MN-contiguous tail) */
    int k_first;      /* chunk 0's k within the tile */
    int k_step;       /* k between chunks (MN-contiguous), 0 when every chunk has the same k */
    int whole;        /* every chunk's full is 8: no chunk crosses the matrix's edge */
} gk_gemm_ld;

GK_DEV void gk_gemm_ld_init(gk_gemm_ld *l, const char *g, int64_t ld, int kmaj, int mn0, int mn_end, int k_begin,
                            int k_end, int bmn, int bk, int threads)
{
    const int tid = threadIdx.x, n = bmn * bk / 8 / threads;
    const int mn_first = kmaj ? tid / (bk / 8) : tid % (bmn / 8) * 8;
    l->k_first = kmaj ? tid % (bk / 8) * 8 : tid / (bmn / 8);
    const int mn_step = kmaj ? threads / (bk / 8) : 0;
    l->k_step = kmaj ? 0 : threads / (bmn / 8);
    l->whole = 1;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i >= n) break;
        const int mn = mn_first + i * mn_step, k = l->k_first + i * l->k_step;
        l->s[i] = gk_gemm_smem_off(kmaj, mn, k, bk);
        const int left = mn_end - (mn0 + mn);
        l->full[i] = left <= 0 ? 0 : kmaj || left > 8 ? 8 : left;
        l->whole = l->whole && l->full[i] == 8;
    }
    const int64_t gm = mn0 + mn_first < mn_end ? mn0 + mn_first : 0; /* clamped: never formed past the end */
    const int64_t gk = k_begin + l->k_first < k_end ? k_begin + l->k_first : k_begin; /* likewise */
    l->g = g + (kmaj ? gm * ld + gk : gk * ld + gm) * 2;
    l->cstride = (kmaj ? (int64_t)mn_step * ld : (int64_t)l->k_step * ld) * 2;
    l->kstride = (kmaj ? (int64_t)bk : (int64_t)bk * ld) * 2;
}

/* 16 bytes: the first vals 2-byte values at src (0-8), read value by value, then zeros. No
   byte past those values is read. */
GK_DEV uint4 gk_gemm_ld_values(const char *src, int vals)
{
    unsigned short v[8];
#pragma unroll
    for (int e = 0; e < 8; e++) v[e] = e < vals ? ((const unsigned short *)src)[e] : 0;
    return make_uint4(v[0] | (unsigned)v[1] << 16, v[2] | (unsigned)v[3] << 16, v[4] | (unsigned)v[5] << 16,
                      v[6] | (unsigned)v[7] << 16);
}

/* One 16-byte chunk of a tile holding `vals` values of the matrix (0-8), zeros after them:
   cp.async when all 8 are inside it, else loaded value by value and stored. A cp.async that
   zero-fills (src-size below 16) reads the whole 16 bytes as far as compute-sanitizer can tell,
   so at the end of an allocation it was reported out of bounds. src: a valid address. */
GK_DEV void gk_gemm_ld_chunk(char *dst, const char *src, int vals, int vec)
{
    if (vec && vals == 8) gk_cp_async_16(dst, src, 16);
    else *(uint4 *)dst = gk_gemm_ld_values(src, vals);
}

/* Copies k-tile kt of one operand into a stage: cp.async where rows are 16-byte aligned and a
   chunk lies wholly inside the matrix, element-wise loads otherwise. k_left: values of K left
   from the k-tile's start. A k-tile wholly inside K (every one but the last) takes the byte
   counts fixed at kernel start: per-tile predicate arithmetic was most of the mainloop's
   non-mma work; a tile none of whose chunks crosses the matrix's edge takes cp.async only. */
GK_DEV void gk_gemm_ld_tile(const gk_gemm_ld *l, char *stage, int kt, int k_left, int kmaj, int vec, int bmn, int bk,
                            int threads)
{
    const int n = bmn * bk / 8 / threads;
    const char *g = l->g + kt * l->kstride;
    if (vec && k_left >= bk && l->whole) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            if (i >= n) break;
            gk_cp_async_16(stage + l->s[i], g + i * l->cstride, 16);
        }
        return;
    }
    if (vec && k_left >= bk) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            if (i >= n) break;
            gk_gemm_ld_chunk(stage + l->s[i], l->full[i] ? g + i * l->cstride : l->g, l->full[i], 1);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i >= n) break;
        int vals;
        if (kmaj) {
            const int kl = k_left - l->k_first;
            vals = l->full[i] ? (kl < 0 ? 0 : kl > 8 ? 8 : kl) : 0;
        } else {
            vals = l->k_first + i * l->k_step < k_left ? l->full[i] : 0;
        }
        gk_gemm_ld_chunk(stage + l->s[i], vals ? g + i * l->cstride : l->g, vals, vec);
    }
}

/* This lane's ldmatrix row addresses for an operand, fixed for the kernel: fragment i of a
   k-step kk reads at off[i] ^ (kk * 2) (K-contiguous: the XOR moves to chunk kk / 8, which
   commutes with the swizzle because kk / 8 is even and the lane's own chunk is 0 or 1) or at
   off[i] + kk * 128 (MN-contiguous: k rows of 128 bytes). x4 matrix j of A is (rows + 8 if j
   odd, k + 8 if j >= 2); of B (k + 8 if j odd, n + 8 if j >= 2), two 8-wide B fragments. */
GK_DEV void gk_gemm_frag_offsets(int *off, int kmaj, int w0, int frags, int rows_odd, int bk)
{
    const int lane = threadIdx.x & 31, j = lane >> 3, r = lane & 7;
    const int jmn = rows_odd ? (j & 1) : (j >> 1), jk = rows_odd ? (j >> 1) : (j & 1);
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i >= frags) break;
        const int mn = w0 + i * 16 + jmn * 8;
        off[i] = kmaj ? gk_gemm_smem_off(1, mn + r, jk * 8, bk) : gk_gemm_smem_off(0, mn, jk * 8 + r, bk);
    }
}

GK_DEV void gk_gemm_frags(unsigned *f, const char *s, const int *off, int kmaj, int kk, int frags)
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i >= frags) break;
        if (kmaj) gk_ldmatrix_x4(f + i * 4, s + (off[i] ^ (kk * 2)));
        else gk_ldmatrix_x4_trans(f + i * 4, s + off[i] + kk * 128);
    }
}

/* The warp tile's mma for one k-step: MI x NI m16n8k16 products. */
GK_DEV void gk_gemm_mma_tile(float *acc, const unsigned *af, const unsigned *bf, int dt, int mi, int ni)
{
#pragma unroll
    for (int i = 0; i < mi; i++)
#pragma unroll
        for (int j = 0; j < ni; j++) {
            float *cc = acc + (i * ni + j) * 4;
            if (dt == GK_BF16) gk_mma_m16n8k16_bf16(cc, af + i * 4, bf + j * 2, cc);
            else gk_mma_m16n8k16_f16(cc, af + i * 4, bf + j * 2, cc);
        }
}

GK_DEV void gk_gemm_cp_wait(int pending)
{
    switch (pending) {
    case 0: gk_cp_async_wait_0(); break;
    case 1: gk_cp_async_wait_1(); break;
    case 2: gk_cp_async_wait_2(); break;
    default: gk_cp_async_wait_3(); break;
    }
}

/* The whole tensor-core kernel body; sizes are literals after inlining (see the generator).
   Multi-stage pipeline: STAGES - 1 k-tiles in flight through cp.async. With DBUF, within a
   k-tile the fragments of step kk + 1 are loaded before the mma of step kk, and the first
   fragments of the next k-tile before the last mma of this one (after the barrier that makes
   that tile visible); without, each step loads its fragments and then multiplies. */
GK_DEV void gk_gemm_mma_run(const gk_gemm_args *p, int dt, int ta, int tb, int bm, int bn, int bk, int wm, int wn,
                            int stages, int dbuf, int vec, float *acc)
{
    extern __shared__ uint4 gk_gemm_smem[];
    char *smem = (char *)gk_gemm_smem;
    const int mi = wm / 16, ni = wn / 8, threads = (bm / wm) * (bn / wn) * 32, ksteps = bk / 16;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm0 = warp / (bn / wn) * wm, wn0 = warp % (bn / wn) * wn;
    const int a_bytes = bm * bk * 2, stage_bytes = (bm + bn) * bk * 2;
    const int a_kmaj = !ta, b_kmaj = tb;

    int tm, tn;
    gk_gemm_tile(p, &tm, &tn);
    const int m0 = tm * bm, n0 = tn * bn, split = blockIdx.y;
    const int k_begin = split * p->k_per_split, k_end = min(p->k, k_begin + p->k_per_split);
    const int ktiles = (k_end - k_begin + bk - 1) / bk;

    gk_gemm_ld la, lb;
    gk_gemm_ld_init(&la, (const char *)p->a, p->lda, a_kmaj, m0, p->m, k_begin, k_end, bm, bk, threads);
    gk_gemm_ld_init(&lb, (const char *)p->b, p->ldb, b_kmaj, n0, p->n, k_begin, k_end, bn, bk, threads);
    int oa[8], ob[8];
    gk_gemm_frag_offsets(oa, a_kmaj, wm0, mi, 1, bk);
    gk_gemm_frag_offsets(ob, b_kmaj, wn0, ni / 2, 0, bk);

#pragma unroll
    for (int i = 0; i < mi * ni * 4; i++) acc[i] = 0.0f;

#define GK_GEMM_LOAD_STAGE(kt)                                                                               \
    do {                                                                                                     \
        char *st_ = smem + ((kt) % stages) * stage_bytes;                                                    \
        const int left_ = k_end - k_begin - (kt) * bk;                                                       \
        gk_gemm_ld_tile(&la, st_, kt, left_, a_kmaj, vec, bm, bk, threads);                                  \
        gk_gemm_ld_tile(&lb, st_ + a_bytes, kt, left_, b_kmaj, vec, bn, bk, threads);                        \
    } while (0)

    for (int s = 0; s < stages - 1; s++) {
        if (s < ktiles) GK_GEMM_LOAD_STAGE(s);
        gk_cp_async_commit();
    }
    gk_gemm_cp_wait(stages - 2);
    __syncthreads();

    unsigned af[2][4 * 8], bf[2][4 * 8];
    if (!dbuf) {
        /* one fragment buffer: fewer registers, more resident warps to hide ldmatrix latency */
        for (int kt = 0; kt < ktiles; kt++) {
            const char *sa = smem + (kt % stages) * stage_bytes;
#pragma unroll
            for (int ks = 0; ks < ksteps; ks++) {
                if (ks == 0) { /* into the slot of tile kt - 1, which every warp has left */
                    if (kt + stages - 1 < ktiles) GK_GEMM_LOAD_STAGE(kt + stages - 1);
                    gk_cp_async_commit();
                }
                gk_gemm_frags(af[0], sa, oa, a_kmaj, ks * 16, mi);
                gk_gemm_frags(bf[0], sa + a_bytes, ob, b_kmaj, ks * 16, ni / 2);
                gk_gemm_mma_tile(acc, af[0], bf[0], dt, mi, ni);
            }
            gk_gemm_cp_wait(stages - 2);
            __syncthreads();
        }
    } else {
        gk_gemm_frags(af[0], smem, oa, a_kmaj, 0, mi);
        gk_gemm_frags(bf[0], smem + a_bytes, ob, b_kmaj, 0, ni / 2);
        for (int kt = 0; kt < ktiles; kt++) {
            const char *sa = smem + (kt % stages) * stage_bytes;
#pragma unroll
            for (int ks = 0; ks < ksteps; ks++) {
                const int cur = ks & 1, nxt = cur ^ 1;
                if (ks == 0) {
                    if (kt + stages - 1 < ktiles) GK_GEMM_LOAD_STAGE(kt + stages - 1);
                    gk_cp_async_commit();
                }
                if (ks == ksteps - 1) {
                    /* tile kt + 1 in shared memory and every warp done with tile kt - 1's slot */
                    gk_gemm_cp_wait(stages - 2);
                    __syncthreads();
                    const char *na = smem + ((kt + 1) % stages) * stage_bytes;
                    gk_gemm_frags(af[nxt], na, oa, a_kmaj, 0, mi);
                    gk_gemm_frags(bf[nxt], na + a_bytes, ob, b_kmaj, 0, ni / 2);
                } else {
                    gk_gemm_frags(af[nxt], sa, oa, a_kmaj, (ks + 1) * 16, mi);
                    gk_gemm_frags(bf[nxt], sa + a_bytes, ob, b_kmaj, (ks + 1) * 16, ni / 2);
                }
                gk_gemm_mma_tile(acc, af[cur], bf[cur], dt, mi, ni);
            }
        }
    }
#undef GK_GEMM_LOAD_STAGE
    gk_cp_async_wait_0();

    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < mi; i++)
#pragma unroll
        for (int j = 0; j < ni; j++) {
            const float *cc = acc + (i * ni + j) * 4;
            const int row = m0 + wm0 + i * 16 + g, col = n0 + wn0 + j * 8 + t * 2;
            gk_gemm_store2(p, row, col, cc[0], cc[1], split);
            gk_gemm_store2(p, row + 8, col, cc[2], cc[3], split);
        }
}


/* ---------------------------------------------------------------- sm_90a: wgmma fed by TMA

   One block: a producer warpgroup (one thread issues the TMA copies) and two consumer
   warpgroups, each a BM / 2 x BN slice of the BM x BN tile (BM 128: one 64-row wgmma.m64nBNk16
   per k16, BM 256: two) with both
   operands read from shared memory (no fragment registers: the register-bound limit of the
   mma.sync kernels goes away). STAGES k-tiles of 64 ring through shared memory; each has a
   "full" mbarrier (TMA transaction bytes) and an "empty" one (one arrival per consumer when its
   wgmma on the tile has finished). Tiles are the TMA's 128-byte swizzle: K-major operands one
   [rows][64] box, MN-major operands [64][64] panels along MN. */
#define GK_GEMM_WG_BK 64
#define GK_GEMM_WG_THREADS 384
/* 1 KB of alignment slack, the stages and their two mbarriers, and a persistent kernel's
   epilogue buffer (BM rows of BN + 8 floats) */
#define gk_gemm_wg_epi_bytes_c(BM, BN) ((BM) * ((BN) + 8) * 4)
#define gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST) \
    (1024 + (STAGES) * (((BM) + (BN)) * GK_GEMM_WG_BK * 2 + 16) + ((PERSIST) ? gk_gemm_wg_epi_bytes_c(BM, BN) : 0))

/* Outputs (row, col .. col + cnt - 1) of the wgmma epilogue that its inline path does not take
   (the N edge, fp32 rows off 16-byte alignment): a store each, out of line. The values come by
   value (an array's address would put it on the stack) and the arguments are copied once (read
   through the pointer, every field would be a load at every use). */
static __device__ __noinline__ void gk_gemm_wg_store_each(const gk_gemm_args *p, int row, int col, float4 lo, float4 hi,
                                                         int cnt, int split)
{
    const gk_gemm_args a = *p;
    const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    if (a.partial) {
        float *q = (float *)gk_gemm_out(&a, row, col, split, 4);
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (e < cnt) q[e] = v[e];
        return;
    }
    const int64_t i = (int64_t)row * a.ldd + col;
#pragma unroll
    for (int e = 0; e < 8; e++)
        if (e < cnt) gk_store1_f32(a.d, i + e, a.d_dtype, gk_gemm_epilogue(&a, v[e], row, col + e));
}

/* Consumer warpgroup wr's 64 x bn accumulators out through shared memory: written as they sit
   in registers (rows of bn + 8 floats, so the float2 writes of a half warp, 4 rows by 4 lanes,
   fall in 32 distinct banks), then read back in rows of 8 values: 16-byte global stores, and
   one loop body instead of bn / 4 inlined epilogues (that unrolled form
   missed the instruction cache: ncu, 45% of stall cycles at 128 x 256). buf: the stages, free
   once every consumer is past its last wgmma (barrier 1), or a buffer of its own when the
   kernel is persistent (the producer is already filling the stages for the next tile). */
GK_DEV void gk_gemm_wg_store(const gk_gemm_args *p, const float *acc, float *buf, int persistent, int wr, int bm, int bn,
                             int m0, int n0, int split)
{
    /* a swapped tile (bm 16 or 64): this warpgroup's 64 columns of D (its MMA rows) by bm rows of
       D, written transposed into [bm][68] (each write of a warp in 32 distinct banks) */
    const int swap = bm < 128, t = threadIdx.x & 127, lane = t & 31;
    const int width = swap ? bn / 2 : bn, ld = swap ? width + 4 : bn + 8, rows = swap ? bm : bm / 2;
    const int row0 = swap ? m0 : m0 + wr * rows, col0 = swap ? n0 + wr * width : n0;
    float *mine = buf + wr * rows * ld;
    const int r = (t >> 5) * 16 + (lane >> 2);
    if (persistent) gk_named_barrier(2 + wr, 128); /* this warpgroup is done reading the last tile's */
    else gk_named_barrier(1, 256);
    if (swap) {
#pragma unroll
        for (int j = 0; j < bm / 8; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) /* acc 4 j + i: MMA row r + 8 (i / 2), column 8 j + 2 (lane % 4) + i % 2 */
                mine[(j * 8 + (lane & 3) * 2 + (i & 1)) * ld + r + 8 * (i >> 1)] = acc[4 * j + i];
    } else {
#pragma unroll
        for (int ms = 0; ms < rows / 64; ms++)
#pragma unroll
            for (int j = 0; j < bn / 8; j++) {
                const int c = j * 8 + (lane & 3) * 2;
                const float *a = acc + ms * (bn / 2) + 4 * j;
                *(float2 *)(mine + (ms * 64 + r) * ld + c) = make_float2(a[0], a[1]);
                *(float2 *)(mine + (ms * 64 + r + 8) * ld + c) = make_float2(a[2], a[3]);
            }
    }
    gk_named_barrier(2 + wr, 128);
    /* inline, only what a whole chunk of 8 needs: a 16-byte store, or for 2-byte rows off 16-byte
       alignment (an ldd not a multiple of 8) four pairs or a value, three pairs and a value; the
       rest (the N edge, fp32 rows off 16 bytes) out of line. The epilogue runs between tiles
       with nothing to hide it: with the general store inline (every case in the loop), 4096^3
       NN took 233-234 us against 210-211 now, the odd shape's GEMM 243-244 against 219-220
       (RESULTS.md). */
    const int es = p->partial ? 4 : gk_dtype_size(p->d_dtype);
    for (int i = t; i < rows * width / 8; i += 128) {
        const int row = i / (width / 8), c8 = i % (width / 8) * 8, grow = row0 + row, col = col0 + c8;
        if (grow >= p->m || col >= p->n) continue;
        const float4 lo = *(const float4 *)(mine + row * ld + c8), hi = *(const float4 *)(mine + row * ld + c8 + 4);
        char *dst = gk_gemm_out(p, grow, col, split, es);
        const int aligned = gk_is_aligned(dst, 16);
        if (col + 8 > p->n || (es == 4 && !aligned)) {
            gk_gemm_wg_store_each(p, grow, col, lo, hi, min(8, p->n - col), split);
            continue;
        }
        if (p->partial) {
            ((float4 *)dst)[0] = lo;
            ((float4 *)dst)[1] = hi;
            continue;
        }
        const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        float y[8];
#pragma unroll
        for (int e = 0; e < 8; e++) y[e] = gk_gemm_epilogue(p, v[e], grow, col + e);
        if (es == 4) {
            ((float4 *)dst)[0] = make_float4(y[0], y[1], y[2], y[3]);
            ((float4 *)dst)[1] = make_float4(y[4], y[5], y[6], y[7]);
        } else if (aligned) {
            *(uint4 *)dst = make_uint4(gk_pack2_f32(y, p->d_dtype), gk_pack2_f32(y + 2, p->d_dtype),
                                       gk_pack2_f32(y + 4, p->d_dtype), gk_pack2_f32(y + 6, p->d_dtype));
        } else if (gk_is_aligned(dst, 4)) {
#pragma unroll
            for (int e = 0; e < 8; e += 2) *(unsigned *)(dst + e * 2) = gk_pack2_f32(y + e, p->d_dtype);
        } else {
            *(unsigned short *)dst = (unsigned short)gk_pack2_f32(y, p->d_dtype);
#pragma unroll
            for (int e = 1; e < 7; e += 2) *(unsigned *)(dst + e * 2) = gk_pack2_f32(y + e, p->d_dtype);
            *(unsigned short *)(dst + 14) = (unsigned short)(gk_pack2_f32(y + 6, p->d_dtype) >> 16);
        }
    }
}

/* A work item (split-major: item / tiles is its K split): its tile's origin, its first k and
   its k-tiles. */
GK_DEV void gk_gemm_wg_item(const gk_gemm_args *p, int item, int tiles, int bm, int bn, int *m0, int *n0, int *split,
                            int *k_begin, int *ktiles)
{
    int tm, tn;
    gk_gemm_tile_of(p, item % tiles, &tm, &tn);
    *m0 = tm * bm;
    *n0 = tn * bn;
    *split = item / tiles;
    *k_begin = *split * p->k_per_split;
    *ktiles = (min(p->k, *k_begin + p->k_per_split) - *k_begin + GK_GEMM_WG_BK - 1) / GK_GEMM_WG_BK;
}

/* A consumer warpgroup's k-tiles of one work item, nb columns of each B tile (wgmma n = nb);
   `it` counts k-tiles over the block's items (stage it % stages, phase it / stages). Returns
   `it` past this item. bm, nb, dt, ta, tb must be constants after inlining. */
GK_DEV int gk_gemm_wg_consume(char *smem, unsigned long long *full, unsigned long long *empty, int stage_bytes,
                              int a_bytes, int dt, int ta, int tb, int bm, int nb, int stages, int ktiles, int it,
                              float *acc)
{
    const int wr = (threadIdx.x >> 7) - 1, nacc = bm * nb / 256;
    /* a K-major tile steps 32 bytes per k16 (descriptor + 2), an MN-major one 16 rows (+ 128) */
    const int a_step = ta ? 128 : 2, b_step = tb ? 2 : 128;
#pragma unroll
    for (int i = 0; i < nacc; i++) acc[i] = 0.0f;
    gk_wgmma_fence_regs(acc, nacc);
    for (int kt = 0; kt < ktiles; kt++, it++) {
        const int s = it % stages;
        gk_mbar_wait(full + s, (it / stages) & 1);
        const char *sa = smem + s * stage_bytes, *sb = sa + a_bytes;
        const unsigned long long db = gk_wgmma_desc_sw128(sb, tb ? 16 : 8192);
        gk_wgmma_fence();
#pragma unroll
        for (int ms = 0; ms < bm / 128; ms++) {
            /* rows (wr bm / 128 + ms) 64: 8 KB apart in either layout (64 rows of 128 bytes,
               or a 64-wide MN panel) */
            const unsigned long long da = gk_wgmma_desc_sw128(sa + (wr * bm / 128 + ms) * 8192, ta ? 8192 : 16);
#pragma unroll
            for (int kk = 0; kk < GK_GEMM_WG_BK / 16; kk++)
                gk_wgmma_m64k16(acc + ms * (nb / 2), da + a_step * kk, db + b_step * kk, dt, nb, ta, !tb);
        }
        gk_wgmma_commit();
        /* the previous k-tile's wgmma has finished: its stage goes back to the producer */
        gk_wgmma_wait_1();
        gk_wgmma_fence_regs(acc, nacc);
        if (kt > 0 && (threadIdx.x & 127) == 0) gk_mbar_arrive(empty + (it - 1) % stages);
    }
    gk_wgmma_wait_0();
    gk_wgmma_fence_regs(acc, nacc);
    if ((threadIdx.x & 127) == 0) gk_mbar_arrive(empty + (it - 1) % stages);
    return it;
}

GK_DEV void gk_gemm_wg_run(const gk_gemm_args *p, const CUtensorMap *tma, const CUtensorMap *tmb,
                           const CUtensorMap *tma_last, const CUtensorMap *tmb_last, int dt, int ta, int tb, int bm,
                           int bn, int stages, int persistent, float *acc)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint4 gk_gemm_smem[];
    char *smem = gk_smem_align_1024(gk_gemm_smem);
    /* the MMAs' tile: mm rows (operand A's), mn columns; a swapped tile (bm 16 or 64) puts B's
       bn rows in the MMAs' M and D's bm rows (A's) in their N, and ta / tb are then B's and A's */
    const int swap = bm < 128, mm = swap ? bn : bm, mn = swap ? bm : bn;
    if (swap && !tb) return; /* never launched: a swapped tile reads A K-major only */
    const int a_bytes = mm * GK_GEMM_WG_BK * 2, stage_bytes = a_bytes + mn * GK_GEMM_WG_BK * 2;
    unsigned long long *full = (unsigned long long *)(smem + stages * stage_bytes), *empty = full + stages;
    float *epi = persistent ? (float *)(empty + stages) : (float *)smem;
    /* work items: (split, tile) pairs, split-major so that each split walks the rasterized
       tile order; a block takes items blockIdx .. step gridDim (one each when the grid has one
       block per item, several when it is persistent) */
    const int tiles = p->tiles_m * p->tiles_n, splits = (p->k + p->k_per_split - 1) / p->k_per_split;
    const int ea = swap ? p->n : p->m, eb = swap ? p->m : p->n; /* rows of the MMAs' A and B operands */
    const int first = blockIdx.y * gridDim.x + blockIdx.x, step = gridDim.x * gridDim.y, items = tiles * splits;
    const int wg = threadIdx.x >> 7;

    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            gk_mbar_init(full + s, 1);
            gk_mbar_init(empty + s, 2);
        }
        gk_mbar_init_fence();
    }
    __syncthreads();

    /* it counts k-tiles over all of this block's items: stage it % stages, phase it / stages */
    int it = 0;
    if (wg == 0) {
        gk_setmaxnreg_dec_40();
        if (threadIdx.x != 0) return;
        for (int item = first; item < items; item += step) {
            int m0, n0, split, k_begin, ktiles;
            gk_gemm_wg_item(p, item, tiles, bm, bn, &m0, &n0, &split, &k_begin, &ktiles);
            const int ra = swap ? n0 : m0, rb = swap ? m0 : n0; /* the MMAs' A and B tile rows */
            /* only rows inside the operand are loaded: TMA's zero fill of rows past its end is
               slow (H200, x[65, 8192] w[8192, 8192]^T on 128 x 64 tiles: 70.6 us with 63 of
               A's 128 box rows past M, 49.5 with them inside). A K-major operand's last tile
               row takes a map whose box is only its rows (*_last), an MN-major one loads only
               its panels that hold rows; the rest of the stage keeps stale values, which reach
               only D's rows and columns past M and N (never stored). Past K, zero fill stays. */
            const int la = ea - ra < mm, lb = eb - rb < mn;
            const int pa = la ? (ea - ra + 63) / 64 : mm / 64, pb = lb ? (eb - rb + 63) / 64 : mn / 64;
            const CUtensorMap *ma = la ? tma_last : tma, *mb = lb ? tmb_last : tmb;
            const int tx = (ta ? pa * 8192 : (la ? ea - ra : mm) * 128) + (tb ? (lb ? eb - rb : mn) * 128 : pb * 8192);
            for (int kt = 0; kt < ktiles; kt++, it++) {
                const int s = it % stages, k = k_begin + kt * GK_GEMM_WG_BK;
                if (it >= stages) gk_mbar_wait(empty + s, (it / stages - 1) & 1);
                char *sa = smem + s * stage_bytes, *sb = sa + a_bytes;
                gk_mbar_arrive_expect_tx(full + s, tx);
                if (!ta) gk_tma_load_2d(sa, ma, full + s, k, ra);
                else
                    for (int i = 0; i < pa; i++) gk_tma_load_2d(sa + i * 8192, tma, full + s, ra + i * 64, k);
                if (tb) gk_tma_load_2d(sb, mb, full + s, k, rb);
                else
                    for (int i = 0; i < pb; i++) gk_tma_load_2d(sb + i * 8192, tmb, full + s, rb + i * 64, k);
            }
        }
        return;
    }

    gk_setmaxnreg_inc_232();
    for (int item = first; item < items; item += step) {
        int m0, n0, split, k_begin, ktiles;
        gk_gemm_wg_item(p, item, tiles, bm, bn, &m0, &n0, &split, &k_begin, &ktiles);
        /* a last tile column at most half full (N % BN in 1 .. BN / 2) runs the half-width
           wgmma, half the MMAs (the producer loads only the rows or panels inside N). 4095 x
           4097 on 128 x 256 tiles: 243-246 us, was 284 (its 32 one-column tiles did a whole
           tile's MMAs); on 256 x 128: 244-246, was 246 (gk_bench/RESULTS.md). The GPU tests'
           1030 x 300 runs it on every configuration, layout and split count. Not for BN 64
           (no n = 32 wgmma here). */
        if (!swap && bn > 64 && p->n - n0 <= bn / 2) {
            it = gk_gemm_wg_consume(smem, full, empty, stage_bytes, a_bytes, dt, ta, tb, bm, bn / 2, stages, ktiles, it,
                                    acc);
            gk_gemm_wg_store(p, acc, epi, persistent, wg - 1, bm, bn / 2, m0, n0, split);
        } else {
            it = gk_gemm_wg_consume(smem, full, empty, stage_bytes, a_bytes, dt, ta, tb, mm, mn, stages, ktiles, it, acc);
            gk_gemm_wg_store(p, acc, epi, persistent, wg - 1, bm, bn, m0, n0, split);
        }
    }
#endif
}

/* ---------------------------------------------------------------- generator */

typedef void (*gk_gemm_kernel)(gk_gemm_args);

/* One configuration: a kernel per layout (NN, NT, TN, TT), its derived sizes checked here. */
#define GK_DEFINE_GEMM_MMA(name, dt, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                             \
    static_assert((BM) % (WM) == 0 && (BN) % (WN) == 0, #name ": the warp tile must divide the block tile");     \
    static_assert((WM) % 16 == 0 && (WN) % 16 == 0 && (WM) <= 128 && (WN) <= 128,                                 \
                  #name ": a warp tile is 16..128 by 16..128, in steps of 16");                                    \
    static_assert((BK) == 16 || (BK) == 32 || (BK) == 64, #name ": BK is 16, 32 or 64 (rows of 32, 64, 128 B)"); \
    static_assert((BM) % 64 == 0 && (BN) % 64 == 0, #name ": BM and BN are multiples of 64 (128-byte panels)"); \
    static_assert((BM) * (BK) / 8 % ((BM) / (WM) * (BN) / (WN) * 32) == 0 &&                                       \
                      (BN) * (BK) / 8 % ((BM) / (WM) * (BN) / (WN) * 32) == 0,                                     \
                  #name ": every thread copies the same number of 16-byte chunks of each tile");                 \
    static_assert((STAGES) >= 2 && (STAGES) <= 5, #name ": 2 to 5 pipeline stages");                             \
    static_assert(!(DBUF) || (BK) >= 32, #name ": double-buffered fragments need two k-steps per tile (BK >= 32)"); \
    static_assert(((BM) / (WM) * (BN) / (WN) * 32) % ((BM) / 8) == 0 &&                                           \
                      ((BM) / (WM) * (BN) / (WN) * 32) % ((BN) / 8) == 0,                                          \
                  #name ": the threads must cover whole 8-value columns of a tile row (threads % (BM/8, BN/8))"); \
    static_assert((MINB) * gk_gemm_smem_bytes_c(BM, BN, BK, STAGES) <= 227 * 1024,                                 \
                  #name ": MINB blocks per SM need MINB times the shared memory");                               \
    static_assert(gk_gemm_smem_bytes_c(BM, BN, BK, STAGES) <= 227 * 1024, #name ": over 227 KB of shared memory"); \
    GK_GEMM_MMA_KERNEL(name##_nn, dt, 0, 0, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_nt, dt, 0, 1, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_tn, dt, 1, 0, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_tt, dt, 1, 1, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    static const gk_gemm_kernel name##_kernels[4] = {name##_nn, name##_nt, name##_tn, name##_tt};               \
    static const gk_gemm_config name##_config = {#name, BM, BN, BK, WM, WN, STAGES, MINB, DBUF,                  \
                                                 (BM) / (WM) * ((BN) / (WN)) * 32,                                 \
                                                 gk_gemm_smem_bytes_c(BM, BN, BK, STAGES), VEC, 0, 0, 0, 0};

typedef void (*gk_gemm_wg_kernel)(gk_gemm_args, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap);

/* One wgmma configuration: a BM x BN x 64 tile, STAGES TMA stages, a block per tile or a
   persistent grid of one block per SM (PERSIST), kernels per layout. */
#define GK_DEFINE_GEMM_WGMMA(name, dt, BM, BN, STAGES, PERSIST, RATE)                                             \
    static_assert((BM) == 128 || (BM) == 256 || (((BM) == 16 || (BM) == 64) && (BN) == 128),                    \
                  #name ": BM is 128 or 256 (one or two m64 slices a consumer), or 16 or 64 with BN 128 (swapped)"); \
    static_assert((BN) == 64 || (BN) == 128 || (BN) == 256,                                                    \
                  #name ": BN is 64, 128 or 256 (wgmma n; 16 rows of a swapped tile)");                       \
    static_assert((BM) * (BN) <= 128 * 256, #name ": at most 128 accumulators a consumer thread");           \
    static_assert((STAGES) >= 2, #name ": at least 2 stages");                                                 \
    static_assert(gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST) <= 227 * 1024,                              \
                  #name ": over 227 KB of shared memory");                                                     \
    static_assert((PERSIST) || gk_gemm_wg_epi_bytes_c(BM, BN) <= (STAGES) * ((BM) + (BN)) * GK_GEMM_WG_BK * 2, \
                  #name ": the epilogue's accumulators must fit in the stages");                              \
    GK_GEMM_WG_KERNEL(name##_nn, dt, 0, 0, BM, BN, STAGES, PERSIST)                                            \
    GK_GEMM_WG_KERNEL(name##_nt, dt, 0, 1, BM, BN, STAGES, PERSIST)                                            \
    GK_GEMM_WG_KERNEL(name##_tn, dt, 1, 0, BM, BN, STAGES, PERSIST)                                            \
    GK_GEMM_WG_KERNEL(name##_tt, dt, 1, 1, BM, BN, STAGES, PERSIST)                                            \
    static const gk_gemm_wg_kernel name##_kernels[4] = {name##_nn, name##_nt, name##_tn, name##_tt};          \
    static const gk_gemm_config name##_config = {#name, BM, BN, GK_GEMM_WG_BK, (BM) < 128 ? (BM) : (BM) / 2,    \
                                                 (BM) < 128 ? (BN) / 2 : (BN), STAGES, 1, 0, GK_GEMM_WG_THREADS,     \
                                                 gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST), 1, 1, PERSIST,   \
                                                 RATE, (BM) < 128};

#define GK_GEMM_WG_KERNEL(kname, dt, TA, TB, BM, BN, STAGES, PERSIST)                                          \
    static __global__ void __launch_bounds__(GK_GEMM_WG_THREADS, 1)                                            \
        kname(const __grid_constant__ gk_gemm_args p, const __grid_constant__ CUtensorMap tma,                  \
              const __grid_constant__ CUtensorMap tmb, const __grid_constant__ CUtensorMap tma_last,           \
              const __grid_constant__ CUtensorMap tmb_last)                                                    \
    {                                                                                                          \
        float acc[(BM) * (BN) / 256];                                                                          \
        gk_gemm_wg_run(&p, &tma, &tmb, &tma_last, &tmb_last, dt, TA, TB, BM, BN, STAGES, PERSIST, acc);        \
    }

#define gk_gemm_smem_bytes_c(BM, BN, BK, STAGES) ((STAGES) * ((BM) + (BN)) * (BK) * 2)

#define GK_GEMM_MMA_KERNEL(kname, dt, TA, TB, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                      \
    static __global__ void __launch_bounds__((BM) / (WM) * ((BN) / (WN)) * 32, MINB) kname(gk_gemm_args p)         \
    {                                                                                                            \
        float acc[(WM) / 16 * ((WN) / 8) * 4];                                                                   \
        gk_gemm_mma_run(&p, dt, TA, TB, BM, BN, BK, WM, WN, STAGES, DBUF, VEC, acc);                                   \
    }

#endif /* GK_GEMM_CUH */

/* ---------------------------------------------------------------- implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_GEMM_IMPLEMENTATION)) && !defined(GK_GEMM_IMPLEMENTED)
#define GK_GEMM_IMPLEMENTED

/* Split-K: sums the splits' partials in split order and applies the epilogue. */
static __global__ void __launch_bounds__(256) gk_gemm_splitk_reduce(gk_gemm_args p, int splits)
{
    const int64_t total = (int64_t)p.m * p.n;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int z = 0; z < splits; z++) s += p.partial[z * total + i];
        const int row = (int)(i / p.n), col = (int)(i % p.n);
        gk_store1_f32(p.d, (int64_t)row * p.ldd + col, p.d_dtype, gk_gemm_epilogue(&p, s, row, col));
    }
}

/* ---------------------------------------------------------------- fp32 SIMT ladder */

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
   H200, 4096^3: 49.0 TFLOP/s, 0.95x cuBLAS SGEMM (//gk_bench:gemm), where rung 4 (registers
   staging the next tile, 4 warps) reaches 40.7. Rejected, same sweep (gk_bench/sweep/
   sgemm_sweep.cu, RESULTS.md): BK 8 with 4 stages 48.0; 128 x 128 tiles of 8 warps of 8 x 8 a
   thread (BK 8 or 16) 46.9; rung 4's 4 warps on cp.async 45.4; 256 x 128 tiles of 16 x 8 a
   thread 41.5 (255 registers). */
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

/* The shipped tensor-core configurations, as
   X(tile name, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC): MINB blocks per SM the registers
   are budgeted for, DBUF double-buffered fragments, VEC 0 element-wise loads. The dispatcher
   uses the first three as its large tile, its small tile and its element-wise-load tile; a
   build may replace the list (the tuning sweep adds candidates after them).
   - 128 x 128 x 32, 8 warps of 32 x 64, 4 stages, one fragment buffer, registers for 2 blocks
     per SM (16 warps): the fastest measured, 336-341 TFLOP/s at 4096^3 and 8192^3 on the H200.
     Rejected, same run (8192^3): 8 warps of 64 x 32 with double-buffered fragments at 1 block
     per SM 323 (340 in another run), 128 x 256 with 8 warps of 64 x 64 283, 4 warps of 64 x 64
     at 2 blocks per SM 283, 64 x 128 with 8 warps of 32 x 32 246; gk_bench/RESULTS.md has all.
   - 64 x 64 x 64, 4 warps of 32 x 32, 3 blocks per SM: 4x the blocks for small M x N. */
#ifndef GK_GEMM_CONFIGS
#define GK_GEMM_CONFIGS(X)                                 \
    X(128x128x32_w32x64, 128, 128, 32, 32, 64, 4, 2, 0, 1) \
    X(64x64x64_s4, 64, 64, 64, 32, 32, 4, 3, 1, 1)         \
    X(64x64x64_s4_elem, 64, 64, 64, 32, 32, 4, 3, 1, 0)
#endif

/* The shipped wgmma configurations (sm_90a builds on compute capability 9.0 GPUs), as
   X(tile name, BM, BN, STAGES, PERSIST, RATE: TFLOP/s at 8192^3 NT); the dispatcher picks among
   the unswapped ones by waves x tile FLOPs / RATE, and takes a swapped one for M <= 64.
   - 16 x 128 x 64 swapped (the MMAs compute D^T: 128 rows of B in their M, D's 16 rows in
     n = 16), 8 stages of 18 KB, persistent: for decode, bound by the bytes of B, where
     128-row tiles are mostly padding. H200, x[M, 8192] w[N, 8192]^T, 1 split: M = 16, N = 8192
     / 28672 45.9 / 129.2 us (cuBLAS 43.6 / 127.8; the 64 x 64 mma.sync tile 50.3 / 147.1, best
     split), M = 1 45.8 / 129.1; 12 stages and the same tile not persistent within 2 us of it
     (gk_bench/sweep/gemm_decode_sweep.cu; RESULTS.md).
   - 64 x 128 x 64 swapped (n = 64), 7 stages of 24 KB, persistent, for 16 < M <= 64: M = 32 /
     64, N = 8192 47.9 / 49.5 us (cuBLAS 44.0 / 46.2; the best unswapped tile and split 51.5 /
     53.8), N = 28672 134.4 / 134.8 (cuBLAS 130.9 / 127.4; unswapped 148.1 / 140.1); 8 stages
     not persistent within 2 us.
   A swapped tile's RATE is its TFLOP/s at N = 28672 and M = its BM (the time model does not
   use it).
   - 128 x 64 x 64, 8 stages of 24 KB: twice the blocks of 128 x 128 where both fill one wave,
     for B-bound shapes of 64 < M <= 128: x[M, 8192] w[8192, 8192]^T 47.3 / 47.6 / 48.1 us at
     M = 65 / 96 / 128 (128 x 128: 55.5 / 54.7 / 55.8; cuBLAS 43.7 / 44.3 / 44.8). 426 TFLOP/s
     at 8192^3 (its B tile reused half as often), so the time model leaves it out of larger M.
   Measured on the H200 (TFLOP/s at 4096^3 / 8192^3 NT, //gk_bench:gemm
   at commit 7ceb8c4; gk_bench/sweep/gemm_sweep.cu runs, without the bench's idle pause between
   rows, read up to 5% apart):
   At 9f9aa69 (the lean epilogue) the three read 636 / 704, 625-628 / 698 and 578-589 / 643, in
   the same order; RATE keeps the figures below.
   - 128 x 256 x 64, 4 stages (192 KB), one block of 3 warpgroups per SM: 569 / 679.
   - 256 x 128 x 64, 4 stages: 563 / 670; fewer waves where N leaves a thin last tile column
     (4095 x 4097: 528 tiles, 4 waves, against 544 and 5 for 128 x 256, whose 32 half-width
     last-column tiles make it level in practice: 243-246 us both).
   - 128 x 128 x 64, 6 stages: 535 / 623; twice the tiles for shapes like M = 128, N = 28672
     (224 tiles: 0.93x cuBLAS).
   Rejected: 128 x 256 with 3 stages 523 / 573; 256 x 128 with 3 stages 462 / 541; 128 x 128
   persistent (one block per SM walks the tiles, the producer running ahead into the next
   while the consumers store; 4 stages and an epilogue buffer) 536 / 622 against 539 / 627 for
   the same tile not persistent. Before the epilogue went through shared memory the 128 x 256
   tile ran at 273 / 403 (its 64 inlined store sequences per thread missed the instruction
   cache: ncu, 45% of stall cycles waiting for instruction fetch). */
#ifndef GK_GEMM_WG_CONFIGS
#define GK_GEMM_WG_CONFIGS(X)               \
    X(wg128x256x64_s4, 128, 256, 4, 0, 679) \
    X(wg256x128x64_s4, 256, 128, 4, 0, 670) \
    X(wg128x128x64_s6, 128, 128, 6, 0, 623) \
    X(wg16x128x64_s8_p, 16, 128, 8, 1, 58)  \
    X(wg64x128x64_s7_p, 64, 128, 7, 1, 223) \
    X(wg128x64x64_s8, 128, 64, 8, 0, 426)
#endif

#define GK_GEMM_X_DEFINE(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                           \
    GK_DEFINE_GEMM_MMA(gk_gemm_bf16_##tile, GK_BF16, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) \
    GK_DEFINE_GEMM_MMA(gk_gemm_f16_##tile, GK_F16, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)
#define GK_GEMM_X_BF16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) gk_gemm_bf16_##tile##_kernels,
#define GK_GEMM_X_F16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) gk_gemm_f16_##tile##_kernels,
#define GK_GEMM_X_CONFIG(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) &gk_gemm_bf16_##tile##_config,
#define GK_GEMM_X_ONE(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) 1,
#define GK_GEMM_WG_X_DEFINE(tile, BM, BN, STAGES, PERSIST, RATE)                   \
    GK_DEFINE_GEMM_WGMMA(gk_gemm_bf16_##tile, GK_BF16, BM, BN, STAGES, PERSIST, RATE) \
    GK_DEFINE_GEMM_WGMMA(gk_gemm_f16_##tile, GK_F16, BM, BN, STAGES, PERSIST, RATE)
#define GK_GEMM_WG_X_BF16(tile, BM, BN, STAGES, PERSIST, RATE) gk_gemm_bf16_##tile##_kernels,
#define GK_GEMM_WG_X_F16(tile, BM, BN, STAGES, PERSIST, RATE) gk_gemm_f16_##tile##_kernels,
#define GK_GEMM_WG_X_CONFIG(tile, BM, BN, STAGES, PERSIST, RATE) &gk_gemm_bf16_##tile##_config,
GK_GEMM_CONFIGS(GK_GEMM_X_DEFINE)
GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_DEFINE)

static const gk_gemm_kernel *const gk_gemm_kernel_table[2][64] = {{GK_GEMM_CONFIGS(GK_GEMM_X_BF16)},
                                                                  {GK_GEMM_CONFIGS(GK_GEMM_X_F16)}};
static const gk_gemm_wg_kernel *const gk_gemm_wg_kernel_table[2][64] = {{GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_BF16)},
                                                                        {GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_F16)}};
/* the mma.sync configurations, then the wgmma ones */
static const gk_gemm_config *const gk_gemm_config_table[] = {GK_GEMM_CONFIGS(GK_GEMM_X_CONFIG)
                                                                 GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_CONFIG)};
static const char gk_gemm_mma_ones[] = {GK_GEMM_CONFIGS(GK_GEMM_X_ONE)};
#define GK_GEMM_NCONFIG ((int)(sizeof gk_gemm_config_table / sizeof gk_gemm_config_table[0]))
#define GK_GEMM_NMMA ((int)sizeof gk_gemm_mma_ones)
#define GK_GEMM_ELEM_CONFIG 2

/* 1 in the image of a build that has sm_90a code (the wgmma kernels are empty otherwise). */
static __device__ int gk_gemm_wg_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif

/* The wgmma kernels can run: this build holds sm_90a code and the current device is compute
   capability 9.0. Asked once per device (the first 32; others every call). */
static int gk_gemm_wg_ready(void)
{
    static unsigned known, ready;
    int dev = 0, major = 0, minor = 0, built = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    if (dev < 32 && (known >> dev & 1u)) return ready >> dev & 1u;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        major = 0;
    if (major == 9 && minor == 0 && cudaMemcpyFromSymbol(&built, gk_gemm_wg_built, sizeof built) != cudaSuccess) {
        built = 0;
        (void)cudaGetLastError();
    }
    const int r = major == 9 && minor == 0 && built;
    if (dev < 32) {
        known |= 1u << dev;
        if (r) ready |= 1u << dev;
    }
    return r;
}

typedef CUresult (*gk_tensor_map_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                            const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                                            CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                            CUtensorMapFloatOOBfill);

/* A [rows, cols] operand of 2-byte values, stride ld (a multiple of 8, 16-byte aligned base), as
   a TMA tensor map of 64 x box_rows boxes (128 bytes wide: the 128-byte swizzle), zero-filled
   past the edges. The driver's encoder is found through the runtime: no -lcuda. */
static cudaError_t gk_gemm_tensor_map(const char *fn, CUtensorMap *map, const void *x, int dt, int64_t rows,
                                      int64_t cols, int64_t ld, int box_rows)
{
    static gk_tensor_map_encode_fn encode;
    if (!encode) {
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !f)
            return gk__fail(cudaErrorNotSupported, fn, "the driver has no cuTensorMapEncodeTiled");
        encode = (gk_tensor_map_encode_fn)f;
    }
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)ld * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)box_rows}, elem[2] = {1, 1};
    const CUresult r = encode(map, dt == GK_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                              (void *)x, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return gk__fail(cudaErrorInvalidValue, fn, "cuTensorMapEncodeTiled failed (CUresult %d)", (int)r);
    return cudaSuccess;
}

/* An MMA operand's tensor maps: K-major ([rows, K], tiles of tile_rows rows) boxes of tile_rows
   rows, and in *last boxes of the last tile row's rows (rows % tile_rows, when not 0), so that no
   box row lies past the operand (gk_gemm_wg_run); MN-major, [64][64] panels, *last unused. */
static cudaError_t gk_gemm_tensor_maps(const char *fn, CUtensorMap *map, CUtensorMap *last, const void *x, int dt,
                                       int64_t rows, int64_t cols, int64_t ld, int k_major, int tile_rows)
{
    GK_TRY(gk_gemm_tensor_map(fn, map, x, dt, rows, cols, ld, k_major ? tile_rows : 64));
    *last = *map;
    if (k_major && rows % tile_rows) GK_TRY(gk_gemm_tensor_map(fn, last, x, dt, rows, cols, ld, (int)(rows % tile_rows)));
    return cudaSuccess;
}

GK_IMPL int gk_gemm_config_count(void) { return GK_GEMM_NCONFIG; }

GK_IMPL gk_gemm_config gk_gemm_config_info(int config)
{
    gk_gemm_config none = {0};
    if (config < 0 || config >= GK_GEMM_NCONFIG) return none;
    return *gk_gemm_config_table[config]; /* named after the bf16 kernels; f16 has the same tiles */
}

/* One operand to repack: [rows, cols] 2-byte values at src, stride ld, to dst, stride ldp (a
   multiple of 64); words: the 16-byte words written, rows x ldp / 8, fewer than 2^31. The row
   of word n is (umulhi(n, magic) + n) >> shift: a division by ldp / 8 without a divide. */
typedef struct gk_gemm_pack_job {
    unsigned short *dst;
    const unsigned short *src;
    int64_t ld, ldp;
    int rows, cols;
    unsigned words, magic, shift;
} gk_gemm_pack_job;

/* n / d for n < 2^31 by the round-up method: shift = ceil(log2 d), magic = floor(2^32 (2^shift
   - d) / d) + 1 (gk_gemm_pack_magic); the sum cannot overflow, the high half being below n. */
GK_HD unsigned gk_gemm_pack_row(unsigned n, unsigned magic, unsigned shift)
{
    return ((unsigned)(((uint64_t)n * magic) >> 32) + n) >> shift;
}

static void gk_gemm_pack_magic(unsigned d, unsigned *magic, unsigned *shift)
{
    unsigned l = 0;
    while (((uint64_t)1 << l) < d) l++;
    *magic = (unsigned)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1);
    *shift = l;
}

/* The 16-byte source word at w (16-byte aligned), its bytes from end on as zeros. The word
   holding a row's last value is read only up to it, value by value: past the last row that
   would leave the operand's allocation (inside its page, but compute-sanitizer reports it). */
GK_DEV uint4 gk_gemm_pack_word(const char *w, const char *end)
{
    if (w + 16 <= end) return *(const uint4 *)w;
    return gk_gemm_ld_values(w, w < end ? (int)((end - w) / 2) : 0); /* end is even: whole values */
}

/* Copies one or two operands (one launch) to rows that start 16-byte aligned, for TMA. A thread
   writes one 16-byte word: it loads the two aligned source words holding its 8 values (the
   second is the next thread's first, an L1 hit) and shifts the pair into place (a source row
   starts at any even byte offset). Values past cols are written as zeros. For the odd shape's two
   operands (134 MB read + written) this took 36.9 us against 42.0 for a warp per 4 rows x 256
   values with the neighbour's word by shuffle; cudaMemcpy of the same bytes 35.4 (RESULTS.md). */
static __global__ void __launch_bounds__(256) gk_gemm_pack(gk_gemm_pack_job j0, gk_gemm_pack_job j1)
{
    const unsigned i = blockIdx.x * 256u + threadIdx.x;
    if (i >= j0.words + j1.words) return;
    const int second = i >= j0.words;
    const gk_gemm_pack_job j = second ? j1 : j0;
    const unsigned n = second ? i - j0.words : i, r = gk_gemm_pack_row(n, j.magic, j.shift);
    const int c = (int)(n - r * (unsigned)(j.ldp / 8)) * 8;
    const char *row = (const char *)(j.src + (int64_t)r * j.ld), *end = row + 2 * (int64_t)j.cols;
    const int off = (int)((size_t)row & 15);
    const char *word = row - off + 2 * c;
    const uint4 lo = gk_gemm_pack_word(word, end), hi = gk_gemm_pack_word(word + 16, end);
    const unsigned x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const int q = off >> 2, sh = (off & 3) * 8; /* off is even: sh is 0 or 16 */
    unsigned y[5], o[4];
#pragma unroll
    for (int e = 0; e < 5; e++) y[e] = q == 0 ? x[e] : q == 1 ? x[e + 1] : q == 2 ? x[e + 2] : x[min(e + 3, 7)];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int keep = j.cols - c - 2 * e; /* values of this pair inside the row */
        o[e] = __funnelshift_r(y[e], y[e + 1], sh);
        o[e] = keep >= 2 ? o[e] : keep == 1 ? o[e] & 0xffffu : 0u;
    }
    *(uint4 *)(j.dst + (int64_t)r * j.ldp + c) = make_uint4(o[0], o[1], o[2], o[3]);
}

/* The next rows of *rest that fit `most` words, as a job of their own; *rest keeps the others. */
static gk_gemm_pack_job gk_gemm_pack_take(gk_gemm_pack_job *rest, int64_t most)
{
    gk_gemm_pack_job j = *rest;
    const int64_t per_row = j.ldp / 8, n = j.rows <= 0 ? 0 : j.rows < most / per_row ? j.rows : most / per_row;
    j.rows = (int)n;
    j.words = (unsigned)(n * per_row);
    rest->src += n * rest->ld;
    rest->dst += n * rest->ldp;
    rest->rows -= (int)n;
    return j;
}

/* Repacks j0 and j1 (a job of 0 rows: none), in launches of whole rows and at most `most`
   words a job (gk_gemm_ex: 2^30, so a launch stays under 2^31). */
static cudaError_t gk_gemm_pack_launch(const char *fn, gk_gemm_pack_job j0, gk_gemm_pack_job j1, int64_t most,
                                       cudaStream_t stream)
{
    while (j0.rows > 0 || j1.rows > 0) {
        const gk_gemm_pack_job p0 = gk_gemm_pack_take(&j0, most), p1 = gk_gemm_pack_take(&j1, most);
        gk_gemm_pack<<<(unsigned)gk_ceil_div((int64_t)p0.words + p1.words, 256), 256, 0, stream>>>(p0, p1);
        GK_TRY(gk_check_launch(fn));
    }
    return cudaSuccess;
}

/* Workspace bytes of the split-K partials: splits x [M, N] fp32. */
static size_t gk_gemm_split_bytes(int64_t splits, int64_t m, int64_t n)
{
    return splits > 1 ? (size_t)gk_round_up(splits * m * n * 4, 256) : 0;
}

/* Workspace bytes of one repacked operand ([rows, cols], rows padded to 64 values). */
static size_t gk_gemm_pack_bytes(int64_t rows, int64_t cols, int aligned)
{
    return aligned ? 0 : (size_t)gk_round_up(rows * gk_round_up(cols, 64) * 2, 256);
}

/* Decode splits: for t tiles of a configuration with `slots` blocks resident at once, the K
   split count s (up to GK_GEMM_MAX_SPLITS, each split >= 512 of K) with the least
   ceil(t s / slots) (1 / s + 0.1): waves of blocks that each stream K / s, plus a fixed cost a
   block (its pipeline's fill and drain, its partials) of about a tenth of a whole-K block,
   fitted to the H200 sweep (gk_bench/sweep/gemm_decode_sweep.cu): M = 16, N = 8192 takes 3
   splits (49.9 us; 4 splits 67.0, one wave and a bit), N = 28672 takes 3 (149.3; the best,
   4, 144.5; 1 split 162.0). */
static int64_t gk_gemm_decode_splits(int64_t t, int64_t k, int64_t slots)
{
    int64_t best_s = 1;
    double best = 0.0;
    for (int64_t s = 1; s <= GK_GEMM_MAX_SPLITS && s <= k / 512; s++) {
        const double cost = (double)gk_ceil_div(t * s, slots) * (1.0 / s + 0.1);
        if (s == 1 || cost < best) {
            best = cost;
            best_s = s;
        }
    }
    return best_s;
}

/* The dispatcher.
   - M <= 64 (decode, small batches) with the wgmma kernels and A row-major: the swapped tile
     with the fewest rows that hold M (16 or 64 x 128), K split (from K >= 1024) only until 64
     blocks stream B: with 7-8 stages of 16 KB of B each, 64 blocks already reach the rate of
     132 (H200, M = 16, N = 8192: 64 tiles, 45.9 us unsplit, 48.2 in 2 splits; N = 1000,
     K = 65536: 8 tiles, 8 splits 48.3, 4 splits 67.2).
   - M <= 16 otherwise (A transposed, or no sm_90a code): the small mma.sync tile (64 x 64, 3
     blocks an SM), K split by gk_gemm_decode_splits. These shapes are bound by the bytes of B,
     and 3 blocks of 4 cp.async stages an SM keep more bytes in flight than one 128-row wgmma
     block of padding (H200, M = 16, N = 28672, K = 8192: 149 us, against 152 for the 128 x 256
     wgmma tile on 112 SMs and 197 for 128 x 128 in 1.7 waves; the swapped tile 129, cuBLAS
     120-128).
   - With the wgmma kernels (sm_90a build, compute capability 9.0): the tile with the least
     waves x tile FLOPs / its measured rate, a partial wave counted whole (4095 x 4097 takes
     256 x 128: 528 tiles, 4 waves, where 128 x 256 needs 544, 5 waves; M = 128, N = 28672
     takes 128 x 256: 112 tiles in one wave, 133 us against 140 for 224 of 128 x 128). K is
     split (from K >= 1024, each split >= 512 of K) only when the tiles would leave two
     thirds of the SMs idle, into as many splits as one wave holds (M = 128, N = 8192: 128
     tiles of 128 x 64 unsplit, 48 us; 128 x 128 unsplit 56, in 2 splits 58; 128 x 256 in 4
     splits 62).
   - Otherwise (mma.sync): the large tile when its tiles fill every SM at least once, else the
     small tile (4x the blocks), splitting K (same bounds) until 3 blocks per SM are resident:
     the resident blocks' cp.async stages are the bytes in flight.
   Operands whose rows are not 16-byte aligned are repacked into the workspace when it is large
   enough (gk_gemm_workspace_bytes), else run on the element-wise-load kernels. */
static void gk_gemm_plan_impl(int64_t m, int64_t n, int64_t k, int64_t rows_a, int64_t cols_a, int aligned_a,
                              int64_t rows_b, int64_t cols_b, int aligned_b, int sms, int wg, int a_row_major,
                              gk_gemm_plan *pl)
{
    int64_t s = 1;
    const gk_gemm_config *small = gk_gemm_config_table[1];
    const int64_t t_small = gk_ceil_div(m, small->bm) * gk_ceil_div(n, small->bn);
    int swap = -1; /* the swapped tile with the fewest rows that hold all of M */
    if (wg && a_row_major)
        for (int c = GK_GEMM_NMMA; c < GK_GEMM_NCONFIG; c++) {
            const gk_gemm_config *w = gk_gemm_config_table[c];
            if (w->swap && w->bm >= m && (swap < 0 || w->bm < gk_gemm_config_table[swap]->bm)) swap = c;
        }
    if (swap >= 0) {
        pl->config = swap;
        if (k >= 1024) s = gk_ceil_div(64, gk_ceil_div(n, gk_gemm_config_table[swap]->bn));
    } else if (m <= 16) {
        pl->config = 1;
        s = gk_gemm_decode_splits(t_small, k, (int64_t)small->min_blocks * sms);
    } else if (wg && GK_GEMM_NCONFIG > GK_GEMM_NMMA) {
        double best = 0.0;
        int64_t t_best = 0;
        pl->config = -1;
        for (int c = GK_GEMM_NMMA; c < GK_GEMM_NCONFIG; c++) {
            const gk_gemm_config *w = gk_gemm_config_table[c];
            if (w->swap) continue;
            const int64_t t = gk_ceil_div(m, w->bm) * gk_ceil_div(n, w->bn);
            const double cost = (double)gk_ceil_div(t, sms) * w->bm * w->bn / w->rate;
            if (pl->config < 0 || cost < best) {
                pl->config = c;
                best = cost;
                t_best = t;
            }
        }
        if (k >= 1024 && t_best * 3 <= sms) s = sms / t_best;
    } else {
        const gk_gemm_config *big = gk_gemm_config_table[0];
        const int64_t t_big = gk_ceil_div(m, big->bm) * gk_ceil_div(n, big->bn);
        pl->config = t_big >= sms ? 0 : 1;
        if (pl->config == 1 && k >= 1024 && t_small < (int64_t)small->min_blocks * sms)
            s = gk_ceil_div((int64_t)small->min_blocks * sms, t_small);
    }
    if (s > GK_GEMM_MAX_SPLITS) s = GK_GEMM_MAX_SPLITS;
    if (s > k / 512) s = k / 512;
    if (s < 1) s = 1;
    pl->splits = (int)s;
    pl->pack_a_bytes = gk_gemm_pack_bytes(rows_a, cols_a, aligned_a);
    pl->pack_b_bytes = gk_gemm_pack_bytes(rows_b, cols_b, aligned_b);
    pl->split_bytes = gk_gemm_split_bytes(s, m, n);
    pl->workspace_bytes = pl->split_bytes + pl->pack_a_bytes + pl->pack_b_bytes;
}

GK_IMPL gk_gemm_plan gk_gemm_plan_for(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                      int64_t ldb)
{
    gk_gemm_plan pl = {0};
    int sms = 132;
    if (gk_sm_count(&sms) != cudaSuccess) sms = 132;
    if (m <= 0 || n <= 0 || k <= 0) return pl;
    gk_gemm_plan_impl(m, n, k, trans_a ? k : m, trans_a ? m : k, lda % 8 == 0, trans_b ? n : k, trans_b ? k : n,
                      ldb % 8 == 0, sms, gk_gemm_wg_ready(), !trans_a, &pl);
    return pl;
}

GK_IMPL size_t gk_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                       int64_t ldb)
{
    return gk_gemm_plan_for(m, n, k, trans_a, lda, trans_b, ldb).workspace_bytes;
}

/* M, N, K: positive and within 32-bit indexing. */
static cudaError_t gk_gemm_check_sizes(const char *fn, int64_t m, int64_t n, int64_t k)
{
    GK_TRY(gk_check_positive(fn, "m", m));
    GK_TRY(gk_check_positive(fn, "n", n));
    GK_TRY(gk_check_positive(fn, "k", k));
    GK_TRY(gk_check_fits_i32(fn, "m", m));
    GK_TRY(gk_check_fits_i32(fn, "n", n));
    return gk_check_fits_i32(fn, "k", k);
}

/* An operand stored [rows, cols] row-major with stride ld. */
static cudaError_t gk_gemm_check_operand(const char *fn, const char *arg, const char *ld_arg, const void *x,
                                         int64_t ld, int64_t cols)
{
    GK_TRY(gk_check_ptr(fn, arg, x));
    GK_TRY(gk_check_elem_aligned(fn, arg, x, 2));
    if (ld < cols)
        return gk__fail(cudaErrorInvalidValue, fn, "%s = %lld is smaller than the row (%lld values)", ld_arg,
                        (long long)ld, (long long)cols);
    GK_TRY(gk_check_fits_i32(fn, ld_arg, ld));
    return cudaSuccess;
}

/* One operand's repack job into the workspace; points x and ld at the copy. */
static gk_gemm_pack_job gk_gemm_pack_job_of(char **ws, const void **x, int64_t *ld, int64_t rows, int64_t cols,
                                            size_t bytes)
{
    gk_gemm_pack_job j;
    j.dst = (unsigned short *)*ws;
    j.src = (const unsigned short *)*x;
    j.ld = *ld;
    j.ldp = gk_round_up(cols, 64); /* 128-byte rows: a TMA box row is one L2 line pair, not three */
    j.rows = (int)rows;
    j.cols = (int)cols;
    j.words = 0; /* set per launch (gk_gemm_pack_take) */
    gk_gemm_pack_magic((unsigned)(j.ldp / 8), &j.magic, &j.shift);
    *x = *ws;
    *ld = j.ldp;
    *ws += bytes;
    return j;
}

GK_IMPL cudaError_t gk_gemm_ex(int config, int splits, int in_dtype, void *d, int d_dtype, int64_t ldd, const void *a,
                               int64_t lda, int trans_a, const void *b, int64_t ldb, int trans_b, const void *c,
                               int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k, float alpha,
                               float beta, int act, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    const char *fn = in_dtype == GK_F16 ? "gk_gemm_f16" : "gk_gemm_bf16";
    if (in_dtype != GK_BF16 && in_dtype != GK_F16)
        return gk__fail(cudaErrorInvalidValue, "gk_gemm_ex", "in_dtype %d is not GK_BF16 or GK_F16", in_dtype);
    if (d_dtype != GK_BF16 && d_dtype != GK_F16 && d_dtype != GK_F32)
        return gk__fail(cudaErrorInvalidValue, fn, "d_dtype %d is not GK_BF16, GK_F16 or GK_F32", d_dtype);
    if (act < GK_ACT_NONE || act > GK_ACT_SILU) return gk__fail(cudaErrorInvalidValue, fn, "act %d is not a gk_act", act);
    if (config < -1 || config >= GK_GEMM_NCONFIG)
        return gk__fail(cudaErrorInvalidValue, fn, "config %d is not -1 or 0..%d", config, GK_GEMM_NCONFIG - 1);
    if (splits < 0) return gk__fail(cudaErrorInvalidValue, fn, "splits = %d is negative", splits);
    GK_TRY(gk_gemm_check_sizes(fn, m, n, k));
    const int64_t rows_a = trans_a ? k : m, cols_a = trans_a ? m : k, rows_b = trans_b ? n : k, cols_b = trans_b ? k : n;
    GK_TRY(gk_gemm_check_operand(fn, "a", "lda", a, lda, cols_a));
    GK_TRY(gk_gemm_check_operand(fn, "b", "ldb", b, ldb, cols_b));
    const int es = gk_dtype_size(d_dtype);
    GK_TRY(gk_check_ptr(fn, "d", d));
    GK_TRY(gk_check_elem_aligned(fn, "d", d, es));
    if (ldd < n)
        return gk__fail(cudaErrorInvalidValue, fn, "ldd = %lld is smaller than n = %lld", (long long)ldd, (long long)n);
    GK_TRY(gk_check_fits_i32(fn, "ldd", ldd));
    if (beta != 0.0f) {
        GK_TRY(gk_check_ptr(fn, "c", c));
        GK_TRY(gk_check_elem_aligned(fn, "c", c, es));
        if (ldc < n)
            return gk__fail(cudaErrorInvalidValue, fn, "ldc = %lld is smaller than n = %lld", (long long)ldc, (long long)n);
        GK_TRY(gk_check_fits_i32(fn, "ldc", ldc));
    }
    if (bias) GK_TRY(gk_check_elem_aligned(fn, "bias", bias, 4));
    if (workspace && !gk_is_aligned(workspace, 256))
        return gk__fail(cudaErrorInvalidValue, fn, "workspace is not 256-byte aligned");

    const int aligned_a = lda % 8 == 0 && gk_is_aligned(a, 16), aligned_b = ldb % 8 == 0 && gk_is_aligned(b, 16);
    if (!workspace) workspace_bytes = 0;
    const int repack = (!aligned_a || !aligned_b) && workspace_bytes >= gk_gemm_pack_bytes(rows_a, cols_a, aligned_a) +
                                                                         gk_gemm_pack_bytes(rows_b, cols_b, aligned_b);
    const int elementwise = (!aligned_a || !aligned_b) && !repack;
    if (config >= 0 && elementwise && gk_gemm_config_table[config]->vec)
        return gk__fail(cudaErrorInvalidValue, fn,
                        "configuration %s needs 16-byte aligned operand rows (lda and ldb multiples of 8); pass a "
                        "workspace of gk_gemm_workspace_bytes() bytes to repack them, or config -1",
                        gk_gemm_config_table[config]->name);

    int sms;
    GK_TRY(gk_sm_count(&sms));
    const int wg_ready = gk_gemm_wg_ready();
    if (config >= 0 && gk_gemm_config_table[config]->wgmma && !wg_ready)
        return gk__fail(cudaErrorInvalidValue, fn,
                        "configuration %s needs a build with sm_90a code running on a compute capability 9.0 GPU",
                        gk_gemm_config_table[config]->name);
    if (config >= 0 && gk_gemm_config_table[config]->swap && trans_a)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s needs A row-major (trans_a = 0)",
                        gk_gemm_config_table[config]->name);
    gk_gemm_plan pl;
    gk_gemm_plan_impl(m, n, k, rows_a, cols_a, aligned_a, rows_b, cols_b, aligned_b, sms, wg_ready && !elementwise,
                      !trans_a, &pl);
    if (config < 0) config = elementwise ? GK_GEMM_ELEM_CONFIG : pl.config;
    const gk_gemm_config *cfg = gk_gemm_config_table[config];
    if (splits == 0) splits = config == pl.config || (elementwise && pl.config == 1) ? pl.splits : 1;
    /* the partials come first in the workspace, the repacked operands after them */
    const size_t pack_bytes = repack ? pl.pack_a_bytes + pl.pack_b_bytes : 0;
    if (workspace_bytes < gk_gemm_split_bytes(splits, m, n) + pack_bytes) splits = 1;

    gk_gemm_args p;
    p.k_per_split = (int)gk_round_up(gk_ceil_div(k, splits), cfg->bk);
    splits = (int)gk_ceil_div(k, p.k_per_split); /* no empty split */
    char *ws = (char *)workspace;
    p.partial = splits > 1 ? (float *)ws : NULL;
    ws += gk_gemm_split_bytes(splits, m, n);
    if (repack) {
        gk_gemm_pack_job j[2] = {{0}, {0}};
        int nj = 0;
        if (!aligned_a) j[nj++] = gk_gemm_pack_job_of(&ws, &a, &lda, rows_a, cols_a, pl.pack_a_bytes);
        if (!aligned_b) j[nj++] = gk_gemm_pack_job_of(&ws, &b, &ldb, rows_b, cols_b, pl.pack_b_bytes);
        GK_TRY(gk_gemm_pack_launch(fn, j[0], j[1], (int64_t)1 << 30, stream));
    }
    p.a = a;
    p.b = b;
    p.c = c;
    p.d = d;
    p.bias = bias;
    p.lda = lda;
    p.ldb = ldb;
    p.ldc = ldc;
    p.ldd = ldd;
    p.m = (int)m;
    p.n = (int)n;
    p.k = (int)k;
    p.d_dtype = d_dtype;
    p.act = act;
    p.alpha = alpha;
    p.beta = beta;
    p.tiles_m = (int)gk_ceil_div(m, cfg->bm);
    p.tiles_n = (int)gk_ceil_div(n, cfg->bn);

    /* a swapped tile's MMAs take B as their A operand (MN-major when B is not transposed) and A
       as their B operand (K-major: A row-major) */
    const int layout = cfg->swap ? (trans_b ? 0 : 2) + 1 : (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
    const void *kern = cfg->wgmma ? (const void *)gk_gemm_wg_kernel_table[in_dtype == GK_F16][config - GK_GEMM_NMMA][layout]
                                  : (const void *)gk_gemm_kernel_table[in_dtype == GK_F16][config][layout];
    static unsigned attr_set[2][GK_GEMM_NCONFIG][4];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[in_dtype == GK_F16][config][layout]));
    dim3 grid((unsigned)((int64_t)p.tiles_m * p.tiles_n), (unsigned)splits);
    if (cfg->persistent) grid = dim3((unsigned)((int64_t)grid.x * splits < sms ? (int64_t)grid.x * splits : sms), 1);
    if (cfg->wgmma) {
        CUtensorMap ma, mb, ma_last, mb_last;
        if (cfg->swap) {
            GK_TRY(gk_gemm_tensor_maps(fn, &ma, &ma_last, b, in_dtype, rows_b, cols_b, ldb, trans_b, cfg->bn));
            GK_TRY(gk_gemm_tensor_maps(fn, &mb, &mb_last, a, in_dtype, rows_a, cols_a, lda, 1, cfg->bm));
        } else {
            GK_TRY(gk_gemm_tensor_maps(fn, &ma, &ma_last, a, in_dtype, rows_a, cols_a, lda, !trans_a, cfg->bm));
            GK_TRY(gk_gemm_tensor_maps(fn, &mb, &mb_last, b, in_dtype, rows_b, cols_b, ldb, trans_b, cfg->bn));
        }
        ((gk_gemm_wg_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p, ma, mb, ma_last, mb_last);
    } else {
        ((gk_gemm_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p);
    }
    GK_TRY(gk_check_launch(fn));
    if (splits > 1) {
        int blocks;
        GK_TRY(gk_grid_size((int64_t)m * n, 256, 4, &blocks));
        gk_gemm_splitk_reduce<<<blocks, 256, 0, stream>>>(p, splits);
        GK_TRY(gk_check_launch(fn));
    }
    return cudaSuccess;
}

GK_IMPL cudaError_t gk_gemm_bf16(void *d, int d_dtype, int64_t ldd, const gk_bf16 *a, int64_t lda, int trans_a,
                                 const gk_bf16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                 const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                 void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    return gk_gemm_ex(-1, 0, GK_BF16, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias, m, n, k, alpha,
                      beta, act, workspace, workspace_bytes, stream);
}

GK_IMPL cudaError_t gk_gemm_f16(void *d, int d_dtype, int64_t ldd, const gk_f16 *a, int64_t lda, int trans_a,
                                const gk_f16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    return gk_gemm_ex(-1, 0, GK_F16, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias, m, n, k, alpha,
                      beta, act, workspace, workspace_bytes, stream);
}

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
static cudaError_t gk_sgemm_launch(const char *fn, int rung, float *c, int64_t ldc, const float *a, int64_t lda,
                                   const float *b, int64_t ldb, int64_t m, int64_t n, int64_t k, float alpha, float beta,
                                   cudaStream_t stream)
{
    GK_TRY(gk_gemm_check_sizes(fn, m, n, k));
    GK_TRY(gk_check_ptr(fn, "c", c));
    GK_TRY(gk_check_ptr(fn, "a", a));
    GK_TRY(gk_check_ptr(fn, "b", b));
    GK_TRY(gk_check_elem_aligned(fn, "c", c, 4));
    GK_TRY(gk_check_elem_aligned(fn, "a", a, 4));
    GK_TRY(gk_check_elem_aligned(fn, "b", b, 4));
    if (lda < k) return gk__fail(cudaErrorInvalidValue, fn, "lda = %lld is smaller than k = %lld", (long long)lda, (long long)k);
    if (ldb < n) return gk__fail(cudaErrorInvalidValue, fn, "ldb = %lld is smaller than n = %lld", (long long)ldb, (long long)n);
    if (ldc < n) return gk__fail(cudaErrorInvalidValue, fn, "ldc = %lld is smaller than n = %lld", (long long)ldc, (long long)n);
    GK_TRY(gk_check_fits_i32(fn, "lda", lda));
    GK_TRY(gk_check_fits_i32(fn, "ldb", ldb));
    GK_TRY(gk_check_fits_i32(fn, "ldc", ldc));
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

#define GK_GEMM_F32_DEFINE(variant, rung)                                                                        \
    GK_IMPL cudaError_t gk_gemm_f32##variant(float *c, int64_t ldc, const float *a, int64_t lda, const float *b, \
                                             int64_t ldb, int64_t m, int64_t n, int64_t k, float alpha,        \
                                             float beta, cudaStream_t stream)                                  \
    { return gk_sgemm_launch("gk_gemm_f32" #variant, rung, c, ldc, a, lda, b, ldb, m, n, k, alpha, beta, stream); }
GK_GEMM_F32_DEFINE(_naive, 0)
GK_GEMM_F32_DEFINE(_smem, 1)
GK_GEMM_F32_DEFINE(_regtile, 2)
GK_GEMM_F32_DEFINE(_warptile, 3)
GK_GEMM_F32_DEFINE(_pipelined, 4)
GK_GEMM_F32_DEFINE(, 4)

#endif /* GK_GEMM_IMPLEMENTATION */
