/* gk_gemm.cuh - gk tensor-core GEMM v0.2: bf16 / fp16 GEMM on mma.sync with a multi-stage
   cp.async pipeline, swizzled shared memory, block rasterization, split-K and a fused epilogue,
   and on Hopper (sm_90a) wgmma kernels fed by TMA with the same epilogue (gk_gemm_sm90.cuh),
   behind one dispatcher.

   Needs gk_core.cuh and gk_mma.cuh (same folder; gk_mma.cuh includes <cuda.h> from the CUDA
   toolkit for the TMA descriptor type, no -lcuda), and for Hopper builds gk_gemm_sm90.cuh. In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_GEMM_IMPLEMENTATION for this header alone)
       #include "gk_gemm.cuh"
   Build for sm_90a (-gencode arch=compute_90a,code=sm_90a) to get the wgmma kernels on H100 /
   H200; without it every problem runs on the mma.sync kernels. The fp32 SIMT GEMM is
   gk_sgemm.cuh.

   LAYOUTS (row-major views, leading dimensions in elements)
     op(A) is M x K: trans_a = 0 reads A[m * lda + k] (row-major), 1 reads A[k * lda + m].
     op(B) is K x N: trans_b = 0 reads B[k * ldb + n] (row-major), 1 reads B[n * ldb + k]
     (a [N, K] weight, as torch's Linear stores it). NN, NT, TN and TT are the four pairs.

   PUBLIC FUNCTIONS (T in bf16, f16; fp32 accumulation)
     gk_gemm_T(d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias,
               m, n, k, alpha, beta, act, workspace, workspace_bytes, stream)
         D = act(alpha * op(A) op(B) + beta * C + bias), D and C [M, N] of d_dtype (GK_BF16,
         GK_F16 or GK_F32) with strides ldd and ldc; C may be D (in place, ldc == ldd); c is not
         read when beta == 0 (it may be NULL); bias is fp32 [N] or NULL; act is a gk_act
         (GK_ACT_GELU is the tanh form; GK_ACT_SILU x / (1 + e^-x)).
         workspace (may be NULL, else 256-byte aligned) lets the dispatcher split K when M x N has
         too few tiles to fill the GPU, and repack operands whose rows are not 16-byte aligned
         (a leading dimension that is not a multiple of 8) so they take the cp.async / TMA path,
         and on the wgmma kernels large problems' operands whose rows are not 128-byte aligned
         (not a multiple of 64: TMA boxes straddling L2 lines run up to 1.5x slower):
         gk_gemm_workspace_bytes(m, n, k, trans_a, lda, trans_b, ldb) says how much it would use;
         with less it splits only by a second launch if its partials fit, else not at all, and
         unaligned operands take the element-wise-load kernels.
         Split-K partials are summed in a fixed order: results are deterministic.
     gk_gemm_plan_for(m, n, k, trans_a, lda, trans_b, ldb)
                                             the dispatcher's configuration, splits and workspace
     gk_gemm_ex(config, splits, in_dtype, ...the same arguments...)
         runs one configuration (0 .. gk_gemm_config_count() - 1, or -1: the dispatcher's pick)
         with a given number of K splits (0: the dispatcher's), for tuning and benchmarks.
     2 to 4 K splits on the cooperative TMA-store wgmma tiles of BM 128 (tiles at least half
         inside D) are summed in the kernel: each split writes its fp32 partial tile to the
         workspace and counts itself in the tile's counter; the block that counts last adds the
         tile's partials in split order, stores it and sets the counter back (no second launch,
         no wait, nothing cleared before: a counter holds a tag of the launch, so the workspace
         may hold anything, and a CUDA graph may replay the launch).
         Elsewhere, or with a workspace short of tiles x splits x (BM x BN x 4 + 8) bytes,
         a second launch sums splits x M x N fp32 partials
         (on compute capability 9.0 launched dependent on the GEMM: its blocks start while the
         GEMM's finish and wait for its partials).
         (Stream-K was measured and not kept: gk_bench/RESULTS.md.)
     gk_gemm_config_info(config)             a configuration's tile, warps, stages, threads, bytes
     gk_gemm_ledger(m, n, k, in_dtype, d_dtype, has_c, has_bias)   (gk_core.cuh) FLOPs = 2 M N K;
                                             bytes = A, B, bias read once, C read if beta != 0,
                                             D written once
     The dispatcher takes the wgmma kernels (any layout) when the build has sm_90a code, the GPU
     is compute capability 9.0 and operand rows are 16-byte aligned (or repacked); otherwise
     the mma.sync kernels. Tiny problems (at most 256 tiles of 64 x 8, or M <= 16 in 512 of 16 x
     32, K <= 128 with both operands K-contiguous, else K <= 16: gk_gemm_direct_pick) take a
     direct tile in any build: mma.sync fragments loaded straight from global memory, no shared
     memory, one launch. Whether the build has sm_90a code is read from the device once per
     device (a synchronous cudaMemcpyFromSymbol): make the first gk_gemm call (or
     gk_gemm_plan_for) on a device outside CUDA graph capture. Large problems (whole K, an even
     count of 128-row tiles, three waves of tiles or more) run the 128 x 256 tile in clusters of
     two blocks that load each B tile once for both (TMA multicast); on a GPU partition that
     holds none of those clusters, the same tile alone.

   ARGUMENTS AND ERRORS
     m == 0 or n == 0 is a no-op (no pointer is inspected); k == 0 gives D = act(beta C + bias)
     (a and b are not read and may be NULL). A null pointer (c only when beta != 0), a negative
     size, a leading dimension smaller than its row, trans flags other than 0 and 1, an unknown
     dtype, act or configuration, a pointer not aligned to its element, d overlapping a, b or
     bias, d partially overlapping c, or a size past 32-bit indexing (m, n, k < 2^31) returns
     cudaErrorInvalidValue before anything launches; gk_failure_reason() names the argument.
     Any M, N, K is computed: tails are predicated (zeros past the matrix; a chunk crossing its
     edge is read value by value, so no read leaves the operand's allocation), and operands
     whose rows are not 16-byte aligned are repacked into the workspace or, without one (or in a
     problem of M N <= 65536 and K <= 256, where one launch beats two), read by element-wise
     loads.

   CONFIGURATION MACROS
     GK_GEMM_GROUP_M (8)      tile rows per rasterization group: a group of 8 x N-tiles walks down
                              N so that its A and B panels stay in L2 (8, 16, 32 measured level)
     GK_GEMM_MAX_SPLITS (16)  the most K splits the dispatcher uses
     GK_GEMM_TUNED(X)         the dispatcher's table measured on the H200 (gk_gemm_sm90.cuh): for each
                              shape of gk_bench's GEMM suite, the configuration and K splits measured
                              fastest, or "model"; a problem near a suite shape takes its entry, any
                              other the time model's pick. Written by gk_bench/sweep/gemm_suite_sweep
                              and gemm_tuned_table.py; define it empty for the time model alone
     GK_GEMM_SM90             1: include gk_gemm_sm90.cuh (the wgmma kernels). Default: 1 when nvcc
                              targets compute capability 9.0 (GK_BUILD_HAS_SM90, gk_mma.cuh). Its
                              kernels have code only in sm_90a images: an sm_90 build without the
                              "a" features can define it 0 to leave them out.

   GENERATOR
     GK_DEFINE_GEMM_MMA(name, dt, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) writes one kernel
     per layout (name_nn, _nt, _tn, _tt) and its gk_gemm_config for a block tile BM x BN x BK, warp
     tile WM x WN, STAGES cp.async stages, registers budgeted for MINB blocks per SM, fragments
     double-buffered or not (DBUF), and cp.async (VEC 1) or element-wise (VEC 0) operand loads,
     or VEC 2: cp.async kernels and TMA-fed twins (name_nn_tma ..., built where nvcc targets
     compute capability 9.0, run where the GPU is 9.0); VEC is a literal 0, 1 or 2;
     threads, shared-memory bytes and swizzle follow from them and are checked at compile time
     in plain words. STAGES 0 writes a direct tile: BM 64 (4 warps of 16 x BN) or 16 (4 warps of
     16 x BN / 4), warps' WN 8..64, BK the k a warp loads ahead from global memory (16..64), no
     shared memory.
     GK_DEFINE_GEMM_WGMMA: gk_gemm_sm90.cuh.

   MEASURED   gk_bench/RESULTS.md has the current figures against cuBLAS in the same process.

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_gemm.cuh"
       // x: [tokens, 4096] bf16, w: [11008, 4096] bf16 (a Linear weight), y: [tokens, 11008] bf16
       cudaError_t e = gk_gemm_bf16(y, GK_BF16, 11008, x, 4096, 0, w, 4096, 1, NULL, 0, NULL,
                                    tokens, 11008, 4096, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"
#include "gk_mma.cuh"

#ifndef GK_GEMM_CUH
#define GK_GEMM_CUH

#ifndef GK_GEMM_GROUP_M
#define GK_GEMM_GROUP_M 8
#endif
#ifndef GK_GEMM_MAX_SPLITS
#define GK_GEMM_MAX_SPLITS 16
#endif
#ifndef GK_GEMM_SM90
#define GK_GEMM_SM90 GK_BUILD_HAS_SM90
#endif

typedef enum gk_act { GK_ACT_NONE = 0, GK_ACT_RELU = 1, GK_ACT_GELU = 2, GK_ACT_SILU = 3 } gk_act;

/* The dispatcher's plan for a problem (operand pointers assumed 256-byte aligned, as cudaMalloc
   gives): its configuration, K splits, and the workspace bytes it would use for the split-K
   partials (and the counters of splits summed in the kernel) and for repacking operands
   whose leading dimension is not a multiple of 8 (or, for large problems on the wgmma kernels,
   not a multiple of 64). */
typedef struct gk_gemm_plan {
    int config, splits;
    size_t split_bytes, pack_a_bytes, pack_b_bytes, workspace_bytes; /* workspace = the other three */
} gk_gemm_plan;

/* A tensor-core configuration, as the generator derives it. */
typedef struct gk_gemm_config {
    const char *name;
    int bm, bn, bk, wm, wn, stages;
    int min_blocks; /* blocks per SM the registers are budgeted for (__launch_bounds__) */
    int dbuf;       /* fragments double-buffered across k-steps */
    int threads;    /* (BM / WM) (BN / WN) warps of 32 */
    int smem_bytes; /* STAGES (BM + BN) BK 2 (VEC 2: + 1024 + 8 STAGES) */
    int vec;        /* 1: cp.async or TMA, operand rows must be 16-byte aligned; 0: element-wise loads;
                       2: as 1, TMA-fed (one elected lane issues a k-tile's boxes) where the image
                       has sm_90 code and the GPU is compute capability 9.0, cp.async otherwise */
    int wgmma;      /* 1: sm_90a wgmma fed by TMA (a producer warpgroup and two consumers) */
    int persistent; /* 1: one block per SM walks the tiles (the producer runs ahead into the next); 2:
                       ping-pong consumers; 3, 4: as 1, 2 with D handed to TMA stores; 5: as 3 in
                       2-block clusters sharing B by multicast (gk_gemm_sm90.cuh) */
    int rate;       /* wgmma: TFLOP/s measured at 8192^3 NT on the H200, the dispatcher's time model */
    int swap;       /* wgmma, BM 16 or 64: the MMAs compute D^T = op(B)^T op(A)^T (B's rows fill their M) */
} gk_gemm_config;

/* persistent 2 and 4: the two consumers take the block's tiles in turn */
#define GK_GEMM_PINGPONG(persistent) ((persistent) == 2 || (persistent) == 4)
/* blocks a cluster: persistent 5 pairs vertically adjacent tiles, one B tile loaded for both */
#define GK_GEMM_CLUSTER(persistent) ((persistent) == 5 ? 2 : 1)
/* wgmma tiles of BM 16 or 64 and BN 128 are swapped (the MMAs compute D^T, B's rows in their M);
   64 x 64 and 64 x 32 are not: their two consumers split the k-tiles (each the whole tile on
   every other one, the two sums added in the epilogue), B K-major only */
#define GK_GEMM_WG_SWAP(bm, bn) ((bm) < 128 && (bn) == 128)
#define GK_GEMM_WG_KSPLIT(bm, bn) ((bm) == 64 && ((bn) == 64 || (bn) == 32))
/* unswapped wgmma tiles built for B K-major only (NT, TT): 64 x 64, 64 x 32, and BN 160 (B's
   MN-major panels are 64 wide) */
#define GK_GEMM_WG_B_K_MAJOR(bm, bn) (GK_GEMM_WG_KSPLIT(bm, bn) || (bn) == 160)
/* The wgmma tiles whose K splits are summed in the kernel: the cooperative TMA-store tiles
   (PERSIST 3), not BM 256 (its consumers' two m64 slices leave no registers for the sum: it
   spilled). Not the swapped decode tiles (PERSIST 1) nor 128 x 64 (PERSIST 0): the code alone
   made them 4-10% slower unsplit on the H200, and split they were no faster than the sum's
   dependent second launch; a block-a-tile swapped 16 x 128 tile with it ran slower split than
   whole on small long-K problems (gk_bench/RESULTS.md). A build may define it (tuning sweeps). */
#ifndef GK_GEMM_SPLITS_IN_KERNEL
#define GK_GEMM_SPLITS_IN_KERNEL(persistent, bm) ((persistent) == 3 && (bm) != 256)
#endif

/* ---------------------------------------------------------------- public API */

GK_EXTERN_C_BEGIN
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
GK_DECL gk_gemm_plan gk_gemm_plan_for(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                      int64_t ldb);
GK_DECL size_t gk_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                       int64_t ldb);
GK_DECL int gk_gemm_config_count(void);
GK_DECL gk_gemm_config gk_gemm_config_info(int config); /* name NULL for an unknown index */
GK_EXTERN_C_END

#ifdef __CUDACC__

/* The output side of a GEMM-like call, checked the same way by every entry point: d [m, n] of
   d_dtype with stride ldd; c, read when beta != 0, either d itself (ldc == ldd) or apart from it;
   bias fp32 [n] or NULL; the inputs in[0 .. nin) apart from d; the workspace (NULL, or 256-byte
   aligned) apart from all of them. *workspace_bytes becomes 0 without a workspace. m, n > 0.
   Outside the implementation: gk_quant.cuh and gk_fp8.cuh check their calls with it. */
typedef struct gk_gemm_span {
    const char *name;
    const void *p;
    int64_t bytes;
} gk_gemm_span;

GK_HOST cudaError_t gk_gemm_check_outputs(const char *fn, const void *d, int d_dtype, int64_t ldd, const void *c,
                                         int64_t ldc, const float *bias, int64_t m, int64_t n, float beta,
                                         const gk_gemm_span *in, int nin, const void *workspace,
                                         size_t *workspace_bytes)
{
    const int es = gk_dtype_size(d_dtype);
    GK_TRY(gk_check_ptr(fn, "d", d));
    GK_TRY(gk_check_elem_aligned(fn, "d", d, es));
    if (ldd < n)
        return gk__fail(cudaErrorInvalidValue, fn, "ldd = %lld is smaller than n = %lld", (long long)ldd, (long long)n);
    GK_TRY(gk_check_fits_i32(fn, "ldd", ldd));
    int64_t d_bytes = 0, c_bytes = 0;
    GK_TRY(gk_check_span(fn, "d", m, n, ldd, es, &d_bytes));
    if (beta != 0.0f) {
        GK_TRY(gk_check_ptr(fn, "c", c));
        GK_TRY(gk_check_elem_aligned(fn, "c", c, es));
        if (ldc < n)
            return gk__fail(cudaErrorInvalidValue, fn, "ldc = %lld is smaller than n = %lld", (long long)ldc, (long long)n);
        GK_TRY(gk_check_fits_i32(fn, "ldc", ldc));
        GK_TRY(gk_check_span(fn, "c", m, n, ldc, es, &c_bytes));
        GK_TRY(gk_check_overlap(fn, "d", d, d_bytes, "c", c, c_bytes));
    }
    for (int i = 0; i < nin; i++) GK_TRY(gk_check_disjoint(fn, "d", d, d_bytes, in[i].name, in[i].p, in[i].bytes));
    if (bias) {
        GK_TRY(gk_check_elem_aligned(fn, "bias", bias, 4));
        GK_TRY(gk_check_disjoint(fn, "d", d, d_bytes, "bias", bias, n * 4));
    }
    if (workspace && !gk_is_aligned(workspace, 256))
        return gk__fail(cudaErrorInvalidValue, fn, "workspace is not 256-byte aligned");
    if (!workspace) *workspace_bytes = 0;
    if (*workspace_bytes) { /* scratch the call writes: apart from every operand */
        const int64_t w = (int64_t)*workspace_bytes;
        GK_TRY(gk_check_disjoint(fn, "workspace", workspace, w, "d", d, d_bytes));
        for (int i = 0; i < nin; i++)
            GK_TRY(gk_check_disjoint(fn, "workspace", workspace, w, in[i].name, in[i].p, in[i].bytes));
        if (beta != 0.0f) GK_TRY(gk_check_disjoint(fn, "workspace", workspace, w, "c", c, c_bytes));
        if (bias) GK_TRY(gk_check_disjoint(fn, "workspace", workspace, w, "bias", bias, n * 4));
    }
    return cudaSuccess;
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
    /* fp8 (gk_fp8.cuh): scales the e4m3 kernels multiply into their fp32 sums before the
       epilogue, one for the tensor (step 0) or one a row of D (scale_a) / column (scale_b)
       (step 1), NULL: none; or block scales the mainloop applies to each 128-k tile's sums,
       [M][kb] (1 x 128) and [ceil(N / 128)][kb] (128 x 128) */
    const float *scale_a, *scale_b, *block_a, *block_b;
    int scale_a_step, scale_b_step, kb;
    int tma_d; /* wgmma PERSIST 3 / 4: D's tensor map is valid, the epilogue stores through TMA */
    /* K splits summed in the kernel (GK_GEMM_SPLITS_IN_KERNEL): the partial tiles [tiles][splits]
       [BM BN] fp32, then a 64-bit counter a tile (gk_gemm_wg_split_fixup); NULL: none, or
       p->partial. fixup_tag: this launch's tag in the counters (48 bits, never 0) */
    float *fixup;
    unsigned long long fixup_tag;
} gk_gemm_args;

/* The arguments every GEMM of the kit shares (gk_gemm, gk_quant, gk_fp8), the rest zero; m, n, k
   already checked to fit an int. */
GK_HOST gk_gemm_args gk_gemm_args_of(void *d, int d_dtype, int64_t ldd, const void *c, int64_t ldc, const float *bias,
                                     int64_t m, int64_t n, int64_t k, float alpha, float beta, int act)
{
    gk_gemm_args p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.d = d;
    p.bias = bias;
    p.ldc = ldc;
    p.ldd = ldd;
    p.m = (int)m;
    p.n = (int)n;
    p.k = (int)k;
    p.d_dtype = d_dtype;
    p.act = act;
    p.alpha = alpha;
    p.beta = beta;
    return p;
}

GK_DEV float gk_gemm_act(int act, float v)
{
    switch (act) {
    case GK_ACT_RELU: return fmaxf(v, 0.0f);
    case GK_ACT_GELU: return gk_gelu_tanh(v);
    case GK_ACT_SILU: return gk_silu(v);
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

/* fp8: the scale of A at D row `row` and of B at D column `col`, 1 where there is none. Rows
   and columns past D read the last one's (their outputs are not stored). Applied in the e4m3
   kernels only, so that every other GEMM's epilogue has no scale to check. */
GK_DEV float gk_gemm_row_scale(const gk_gemm_args *p, int row)
{
    return p->scale_a ? p->scale_a[(int64_t)min(row, p->m - 1) * p->scale_a_step] : 1.0f;
}

GK_DEV float gk_gemm_col_scale(const gk_gemm_args *p, int col)
{
    return p->scale_b ? p->scale_b[(int64_t)min(col, p->n - 1) * p->scale_b_step] : 1.0f;
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

/* Outputs (row, col .. col + cnt - 1) of a staged epilogue that its inline path does not take
   (the N edge, fp32 rows off 16-byte alignment): a store each, out of line. The values come by
   value (an array's address would put it on the stack); the arguments are read through p (a
   copy of gk_gemm_args, over 128 bytes, would be a stack frame). */
static __device__ __noinline__ void gk_gemm_store_each(const gk_gemm_args *p, int row, int col, float4 lo, float4 hi,
                                                      int cnt, int split)
{
    const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    if (p->partial) {
        float *q = (float *)gk_gemm_out(p, row, col, split, 4);
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (e < cnt) q[e] = v[e];
        return;
    }
    const int64_t i = (int64_t)row * p->ldd + col;
#pragma unroll
    for (int e = 0; e < 8; e++)
        if (e < cnt) gk_store1_f32(p->d, i + e, p->d_dtype, gk_gemm_epilogue(p, v[e], row, col + e));
}

/* Staged outputs (mine, rows x width floats, stride ld; width a multiple of 8) to D at (row0,
   col0) through the epilogue, or to the split's partials, by threads t = 0 .. nthreads - 1 in
   chunks of 8 of a row; scaled: the fp8 row and column scales first. */
GK_DEV void gk_gemm_store_rows(const gk_gemm_args *p, const float *mine, int ld, int rows, int width, int row0,
                               int col0, int scaled, int split, int t, int nthreads)
{
    const gk_gemm_args a = *p; /* its fields in registers where the compiler can */
    const int es = a.partial ? 4 : gk_dtype_size(a.d_dtype);
    if (!scaled && !a.partial && es == 2 && a.beta == 0.0f && (a.act == GK_ACT_NONE || a.act == GK_ACT_RELU) &&
        a.ldd % 8 == 0 && gk_is_aligned(a.d, 16)) {
        /* the common case, no C, no activation but ReLU, 16-byte rows of D: the same arithmetic
           as gk_gemm_epilogue with its tests hoisted out of the loop. Through the general loop
           below (a test and a branch each value) a 256 x 128 tile took 15 us on the H200. */
        const float alpha = a.alpha, *bias = a.bias;
        const int relu = a.act == GK_ACT_RELU, dt = a.d_dtype;
        for (int i = t; i < rows * width / 8; i += nthreads) {
            const int row = i / (width / 8), c8 = i % (width / 8) * 8, grow = row0 + row, col = col0 + c8;
            if (grow >= a.m || col >= a.n) continue;
            const float4 lo = *(const float4 *)(mine + row * ld + c8), hi = *(const float4 *)(mine + row * ld + c8 + 4);
            if (col + 8 > a.n) {
                gk_gemm_store_each(p, grow, col, lo, hi, a.n - col, split);
                continue;
            }
            float y[8] = {alpha * lo.x, alpha * lo.y, alpha * lo.z, alpha * lo.w,
                          alpha * hi.x, alpha * hi.y, alpha * hi.z, alpha * hi.w};
            if (bias) {
#pragma unroll
                for (int e = 0; e < 8; e++) y[e] += bias[col + e];
            }
            if (relu) {
#pragma unroll
                for (int e = 0; e < 8; e++) y[e] = fmaxf(y[e], 0.0f);
            }
            *(uint4 *)((char *)a.d + ((int64_t)grow * a.ldd + col) * 2) =
                make_uint4(gk_pack2_f32(y, dt), gk_pack2_f32(y + 2, dt), gk_pack2_f32(y + 4, dt), gk_pack2_f32(y + 6, dt));
        }
        return;
    }
    /* inline, only what a whole chunk of 8 needs: a 16-byte store, or for 2-byte rows off 16-byte
       alignment (an ldd not a multiple of 8) four pairs or a value, three pairs and a value; the
       rest (the N edge, fp32 rows off 16 bytes) out of line. The epilogue runs between tiles
       with nothing to hide it: every case inline made 4096^3 NN take 233-234 us, not 210-211. */
    for (int i = t; i < rows * width / 8; i += nthreads) {
        const int row = i / (width / 8), c8 = i % (width / 8) * 8, grow = row0 + row, col = col0 + c8;
        if (grow >= a.m || col >= a.n) continue;
        float4 lo = *(const float4 *)(mine + row * ld + c8), hi = *(const float4 *)(mine + row * ld + c8 + 4);
        if (scaled) {
            const float r = gk_gemm_row_scale(&a, grow);
            lo = make_float4(lo.x * r * gk_gemm_col_scale(&a, col), lo.y * r * gk_gemm_col_scale(&a, col + 1),
                             lo.z * r * gk_gemm_col_scale(&a, col + 2), lo.w * r * gk_gemm_col_scale(&a, col + 3));
            hi = make_float4(hi.x * r * gk_gemm_col_scale(&a, col + 4), hi.y * r * gk_gemm_col_scale(&a, col + 5),
                             hi.z * r * gk_gemm_col_scale(&a, col + 6), hi.w * r * gk_gemm_col_scale(&a, col + 7));
        }
        char *dst = gk_gemm_out(&a, grow, col, split, es);
        const int aligned = gk_is_aligned(dst, 16);
        if (col + 8 > a.n || (es == 4 && !aligned)) {
            gk_gemm_store_each(p, grow, col, lo, hi, min(8, a.n - col), split);
            continue;
        }
        if (a.partial) {
            ((float4 *)dst)[0] = lo;
            ((float4 *)dst)[1] = hi;
            continue;
        }
        const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        float y[8];
#pragma unroll
        for (int e = 0; e < 8; e++) y[e] = gk_gemm_epilogue(&a, v[e], grow, col + e);
        if (es == 4) {
            ((float4 *)dst)[0] = make_float4(y[0], y[1], y[2], y[3]);
            ((float4 *)dst)[1] = make_float4(y[4], y[5], y[6], y[7]);
        } else if (aligned) {
            *(uint4 *)dst = make_uint4(gk_pack2_f32(y, a.d_dtype), gk_pack2_f32(y + 2, a.d_dtype),
                                       gk_pack2_f32(y + 4, a.d_dtype), gk_pack2_f32(y + 6, a.d_dtype));
        } else if (gk_is_aligned(dst, 4)) {
#pragma unroll
            for (int e = 0; e < 8; e += 2) *(unsigned *)(dst + e * 2) = gk_pack2_f32(y + e, a.d_dtype);
        } else {
            *(unsigned short *)dst = (unsigned short)gk_pack2_f32(y, a.d_dtype);
#pragma unroll
            for (int e = 1; e < 7; e += 2) *(unsigned *)(dst + e * 2) = gk_pack2_f32(y + e, a.d_dtype);
            *(unsigned short *)(dst + 14) = (unsigned short)(gk_pack2_f32(y + 6, a.d_dtype) >> 16);
        }
    }
}

/* Tile id of a tiles_m x tiles_n grid, in a rasterized order: groups of GK_GEMM_GROUP_M tile
   rows walk the N tiles column by column, so consecutive blocks share B panels and a group's A
   panels stay in L2 (launch order follows blockIdx.x). gk_gemm_tile_of: p's tiles. */
GK_DEV void gk_gemm_raster(int id, int tiles_m, int tiles_n, int *tm, int *tn)
{
    const int per_group = GK_GEMM_GROUP_M * tiles_n;
    const int first = id / per_group * GK_GEMM_GROUP_M;
    const int rows = min(tiles_m - first, GK_GEMM_GROUP_M);
    *tm = first + (id % per_group) % rows;
    *tn = (id % per_group) / rows;
}

GK_DEV void gk_gemm_tile_of(const gk_gemm_args *p, int id, int *tm, int *tn)
{
    gk_gemm_raster(id, p->tiles_m, p->tiles_n, tm, tn);
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

/* k-tile kt's copies of this thread where every chunk lies inside the operand (l->whole, rows of
   16-byte multiples, kt wholly inside K), predicated on p rather than branched: in the k-loop of
   interior tiles they then schedule among the MMAs. */
GK_DEV void gk_gemm_ld_tile_whole(const gk_gemm_ld *l, char *stage, int kt, int p, int bmn, int bk, int threads)
{
    const int n = bmn * bk / 8 / threads;
    const char *g = l->g + kt * l->kstride;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i >= n) break;
        gk_cp_async_16_if(stage + l->s[i], g + i * l->cstride, p);
    }
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
        gk_gemm_ld_tile_whole(l, stage, kt, 1, bmn, bk, threads);
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

/* The warp tile's mma for one k-step: MI x NI m16n8k16 products. GK_E4M3 (gk_fp8.cuh): K-major
   e4m3 tiles read as 16-bit pairs, whose m16n8k16 fragments are the m16n8k32 e4m3 ones. */
GK_DEV void gk_gemm_mma_tile(float *acc, const unsigned *af, const unsigned *bf, int dt, int mi, int ni)
{
#pragma unroll
    for (int i = 0; i < mi; i++)
#pragma unroll
        for (int j = 0; j < ni; j++) {
            float *cc = acc + (i * ni + j) * 4;
            if (dt == GK_BF16) gk_mma_m16n8k16_bf16(cc, af + i * 4, bf + j * 2, cc);
            else if (dt == GK_E4M3) gk_mma_m16n8k32_e4m3(cc, af + i * 4, bf + j * 2, cc);
            else gk_mma_m16n8k16_f16(cc, af + i * 4, bf + j * 2, cc);
        }
}

/* cp.async.wait_group pending (0..7; more waits as 7) */
GK_DEV void gk_gemm_cp_wait(int pending)
{
    switch (pending) {
    case 0: gk_cp_async_wait_0(); break;
    case 1: gk_cp_async_wait_1(); break;
    case 2: gk_cp_async_wait_2(); break;
    case 3: gk_cp_async_wait_3(); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
}

/* The block's sums out through shared memory once the mainloop has left it: each warp parks its
   fragments as fp32 rows (bn + 8 floats apart: a half warp's float2 writes in 16 distinct bank
   pairs), then gk_gemm_store_rows takes them through the epilogue 8 columns a thread. Inlined for
   each fragment, the epilogue was most of the kernel's code, fetched afresh for every tile
   (H200: 14.6 us a 128 x 128 tile, about 60 with 64 x 64 warp tiles). Tiles taller than the shared memory holds
   go in passes of bm / 2^i rows (16 at least: a stage holds that many). */
GK_DEV void gk_gemm_mma_epilogue(const gk_gemm_args *p, const float *acc, int dt, int bm, int bn, int wm, int wn,
                                 int threads, int smem_bytes, int m0, int n0, int wm0, int wn0, int split)
{
    extern __shared__ uint4 gk_gemm_smem[];
    float *st = (float *)gk_gemm_smem;
    const int mi = wm / 16, ni = wn / 8, ld = bn + 8, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    int rows = bm;
    while (rows * ld * 4 > smem_bytes) rows >>= 1;
    for (int r0 = 0; r0 < bm; r0 += rows) {
        __syncthreads(); /* the mainloop's or the last pass's readers are done */
#pragma unroll
        for (int i = 0; i < mi; i++) {
            const int r = wm0 + i * 16 + g - r0;
            if (r < 0 || r >= rows) continue;
#pragma unroll
            for (int j = 0; j < ni; j++) {
                const float *cc = acc + (i * ni + j) * 4;
                float *q = st + r * ld + wn0 + j * 8 + t * 2;
                *(float2 *)q = make_float2(cc[0], cc[1]);
                *(float2 *)(q + 8 * ld) = make_float2(cc[2], cc[3]);
            }
        }
        __syncthreads();
        gk_gemm_store_rows(p, st, ld, rows, bn, m0 + r0, n0, dt == GK_E4M3, split, threadIdx.x, threads);
    }
}

/* The block's sums out once its mainloop is done with shared memory (stage_bytes of it from the
   start). */
GK_DEV void gk_gemm_mma_out(const gk_gemm_args *p, const float *acc, int dt, int bm, int bn, int wm, int wn,
                            int threads, int stage_bytes, int m0, int n0, int wm0, int wn0, int split)
{
    const int mi = wm / 16, ni = wn / 8;
    if (bm * bn > 64 * 64) {
        gk_gemm_mma_epilogue(p, acc, dt, bm, bn, wm, wn, threads, stage_bytes, m0, n0, wm0, wn0, split);
        return;
    }
    /* small tiles: each fragment's pairs straight to D. Their code is small enough to stay in the
       instruction cache, and staging would add two barriers to problems of one or two k-tiles
       (H200: 3783 x 1 x 7 0.75x cuBLAS this way, 0.61x staged). */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < mi; i++)
#pragma unroll
        for (int j = 0; j < ni; j++) {
            const float *cc = acc + (i * ni + j) * 4;
            const int row = m0 + wm0 + i * 16 + g, col = n0 + wn0 + j * 8 + t * 2;
            float r0 = 1.0f, r1 = 1.0f, c0 = 1.0f, c1 = 1.0f;
            if (dt == GK_E4M3) {
                r0 = gk_gemm_row_scale(p, row);
                r1 = gk_gemm_row_scale(p, row + 8);
                c0 = gk_gemm_col_scale(p, col);
                c1 = gk_gemm_col_scale(p, col + 1);
            }
            gk_gemm_store2(p, row, col, cc[0] * r0 * c0, cc[1] * r0 * c1, split);
            gk_gemm_store2(p, row + 8, col, cc[2] * r1 * c0, cc[3] * r1 * c1, split);
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
    const int warp = threadIdx.x >> 5;
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
        /* k-tiles wholly inside K of a tile wholly inside the operands: their copies predicated,
           issued after the first k-step's MMAs, among which the compiler schedules them (a
           branch between would leave both warps of a scheduler issuing copies, no MMA) */
        const int interleave = dt != GK_E4M3; /* (e4m3's 64 x 64 tile would spill at 168 registers) */
        const int kfull = (k_end - k_begin) / bk, whole = vec && la.whole && lb.whole;
        gk_gemm_frags(af[0], smem, oa, a_kmaj, 0, mi);
        gk_gemm_frags(bf[0], smem + a_bytes, ob, b_kmaj, 0, ni / 2);
        for (int kt = 0; kt < ktiles; kt++) {
            const char *sa = smem + (kt % stages) * stage_bytes;
#pragma unroll
            for (int ks = 0; ks < ksteps; ks++) {
                const int cur = ks & 1, nxt = cur ^ 1;
                if (!interleave && ks == 0) { /* into the slot of tile kt - 1, which every warp has left */
                    if (kt + stages - 1 < ktiles) GK_GEMM_LOAD_STAGE(kt + stages - 1);
                    gk_cp_async_commit();
                }
                if (interleave && ks == 1) {
                    const int kl = kt + stages - 1, pw = whole && kl < kfull;
                    char *st = smem + (kl % stages) * stage_bytes;
                    gk_gemm_ld_tile_whole(&la, st, kl, pw, bm, bk, threads);
                    gk_gemm_ld_tile_whole(&lb, st + a_bytes, kl, pw, bn, bk, threads);
                    if (!pw && kl < ktiles) GK_GEMM_LOAD_STAGE(kl);
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
    gk_gemm_mma_out(p, acc, dt, bm, bn, wm, wn, threads, stages * stage_bytes, m0, n0, wm0, wn0, split);
}

/* TMA-fed twin of gk_gemm_mma_run (VEC 2, double-buffered fragments; sm_90 and newer): one
   elected lane of warp 0 issues a k-tile's boxes (K-major: one box of BK x rows, TMA's swizzle of
   BK * 2 bytes; MN-major: [BK][64] panels, its 128-byte swizzle, gk_gemm_smem_off's layouts
   both) at the k-tile's first k-step into the slot the last barrier freed, and every thread waits
   on that slot's mbarrier where the cp.async loop waits on its group. TMA zero-fills past the
   operands' edges, so every tile takes the same path; same MMAs in the same order, so the same
   sums bit for bit. Fragment row addresses are shared-memory addresses kept in registers behind
   an opaque move (ptxas otherwise recomputes them from the thread index every k-tile); a K-major
   fragment i is fragment 0 plus 16 rows, its k-step one XOR away (the base is 1024-aligned).
   Shared memory: the stages from the first 1024-byte boundary, then an mbarrier a stage. */
GK_DEV void gk_gemm_mma_tma_run(const gk_gemm_args *p, const CUtensorMap *ma, const CUtensorMap *mb, int dt, int ta,
                                int tb, int bm, int bn, int bk, int wm, int wn, int stages, float *acc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ uint4 gk_gemm_smem[];
    char *smem = gk_smem_align_1024(gk_gemm_smem);
    const int mi = wm / 16, ni = wn / 8, threads = (bm / wm) * (bn / wn) * 32, ksteps = bk / 16;
    const int warp = threadIdx.x >> 5, wm0 = warp / (bn / wn) * wm, wn0 = warp % (bn / wn) * wn;
    const int a_bytes = bm * bk * 2, stage_bytes = (bm + bn) * bk * 2, row_bytes = bk * 2;
    const int a_kmaj = !ta, b_kmaj = tb;
    const unsigned s0 = gk_smem_addr(smem), bars = s0 + stages * stage_bytes;
    int tm, tn;
    gk_gemm_tile(p, &tm, &tn);
    const int m0 = tm * bm, n0 = tn * bn, split = blockIdx.y;
    const int k_begin = split * p->k_per_split, k_end = min(p->k, k_begin + p->k_per_split);
    const int ktiles = (k_end - k_begin + bk - 1) / bk;
    int oa[8], ob[8];
    gk_gemm_frag_offsets(oa, a_kmaj, wm0, mi, 1, bk);
    gk_gemm_frag_offsets(ob, b_kmaj, wn0, ni / 2, 0, bk);
    unsigned ra[8], rb[8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        ra[i] = s0 + (i < mi ? oa[i] : 0);
        rb[i] = s0 + a_bytes + (i < ni / 2 ? ob[i] : 0);
        asm volatile("mov.b32 %0, %0;" : "+r"(ra[i]));
        asm volatile("mov.b32 %0, %0;" : "+r"(rb[i]));
    }
#pragma unroll
    for (int i = 0; i < mi * ni * 4; i++) acc[i] = 0.0f;

#define GK_GEMM_TMA_ISSUE(kt)                                                                               \
    do {                                                                                                    \
        const unsigned st_ = s0 + ((kt) % stages) * stage_bytes, bar_ = bars + ((kt) % stages) * 8;         \
        const int kc_ = k_begin + (kt) * bk;                                                                \
        gk_mbar_arrive_expect_tx_s(bar_, stage_bytes);                                                      \
        if (a_kmaj) gk_tma_load_2d_s(st_, ma, bar_, kc_, m0);                                               \
        else                                                                                                \
            for (int q_ = 0; q_ < bm / 64; q_++) gk_tma_load_2d_s(st_ + q_ * bk * 128, ma, bar_, m0 + q_ * 64, kc_); \
        if (b_kmaj) gk_tma_load_2d_s(st_ + a_bytes, mb, bar_, kc_, n0);                                     \
        else                                                                                                \
            for (int q_ = 0; q_ < bn / 64; q_++)                                                            \
                gk_tma_load_2d_s(st_ + a_bytes + q_ * bk * 128, mb, bar_, n0 + q_ * 64, kc_);               \
    } while (0)
    /* fragments of k-step ks (0..ksteps-1) of the tile at slot offset so */
#define GK_GEMM_TMA_FRAGS(fa, fb, so, ks)                                                                   \
    do {                                                                                                    \
        _Pragma("unroll") for (int i_ = 0; i_ < 8; i_++) {                                                   \
            if (i_ < mi) {                                                                                  \
                if (a_kmaj) gk_ldmatrix_x4_s((fa) + i_ * 4, ((ra[0] ^ ((ks) * 32)) + (so)) + i_ * 16 * row_bytes); \
                else gk_ldmatrix_x4_trans_s((fa) + i_ * 4, ra[i_] + (so) + (ks) * 16 * 128);                 \
            }                                                                                               \
            if (i_ < ni / 2) {                                                                              \
                if (b_kmaj) gk_ldmatrix_x4_s((fb) + i_ * 4, ((rb[0] ^ ((ks) * 32)) + (so)) + i_ * 16 * row_bytes); \
                else gk_ldmatrix_x4_trans_s((fb) + i_ * 4, rb[i_] + (so) + (ks) * 16 * 128);                 \
            }                                                                                               \
        }                                                                                                   \
    } while (0)

    if (warp == 0 && gk_elect_one()) {
        for (int s = 0; s < stages; s++) gk_mbar_init(smem + stages * stage_bytes + s * 8, 1);
        gk_mbar_init_fence();
        for (int s = 0; s < stages - 1 && s < ktiles; s++) GK_GEMM_TMA_ISSUE(s);
    }
    __syncthreads();
    gk_mbar_wait_s(bars, 0);
    unsigned af[2][4 * 8], bf[2][4 * 8];
    GK_GEMM_TMA_FRAGS(af[0], bf[0], 0u, 0);
    for (int kt = 0; kt < ktiles; kt++) {
        const unsigned so = (unsigned)(kt % stages) * stage_bytes;
#pragma unroll
        for (int ks = 0; ks < ksteps; ks++) {
            const int cur = ks & 1, nxt = cur ^ 1;
            /* into the slot of tile kt - 1, which every warp left before the last barrier */
            if (ks == 0 && warp == 0 && kt + stages - 1 < ktiles && gk_elect_one()) GK_GEMM_TMA_ISSUE(kt + stages - 1);
            if (ks == ksteps - 1) {
                const int kn = kt + 1;
                if (kn < ktiles) gk_mbar_wait_s(bars + (kn % stages) * 8, (kn / stages) & 1);
                __syncthreads(); /* every warp done with tile kt - 1's slot before it is refilled */
                GK_GEMM_TMA_FRAGS(af[nxt], bf[nxt], (unsigned)(kn % stages) * stage_bytes, 0);
            } else {
                GK_GEMM_TMA_FRAGS(af[nxt], bf[nxt], so, ks + 1);
            }
            gk_gemm_mma_tile(acc, af[cur], bf[cur], dt, mi, ni);
        }
    }
#undef GK_GEMM_TMA_ISSUE
#undef GK_GEMM_TMA_FRAGS
    gk_gemm_mma_out(p, acc, dt, bm, bn, wm, wn, threads, stages * stage_bytes, m0, n0, wm0, wn0, split);
#endif
}

/* Operand value pair (k, k + 1) at row r of a [rows, k_end) view as one mma register, zeros past
   the edges: x is [rows][ld] (kmaj, K contiguous) or [K][ld]. One 32-bit load where `pairs` (K
   contiguous, ld even, x 4-byte aligned: every pair of an even k is), else two 16-bit loads.
   Predicated loads, no branch, the halves joined by a byte permute that the scheduler leaves
   after the round's loads: joined inside a branch, each pair waited on its own loads before the
   next pair's left (9 x 13 x 3 on the H200: 5.7 us, 4.7 without the wait). */
GK_DEV unsigned gk_gemm_direct_pair(const unsigned short *x, int64_t ld, int kmaj, int pairs, int r, int rows, int k,
                                    int k_end)
{
    const int lo_in = r < rows && k < k_end, hi_in = lo_in && k + 1 < k_end, word = pairs && hi_in;
    const unsigned short *q = kmaj ? x + (int64_t)r * ld + k : x + (int64_t)k * ld + r;
    const unsigned w = word ? __ldg((const unsigned *)q) : 0u;
    const unsigned lo = lo_in && !word ? (unsigned)__ldg(q) : 0u;
    const unsigned hi = hi_in && !word ? (unsigned)__ldg(kmaj ? q + 1 : q + ld) : 0u;
    return w | __byte_perm(lo, hi, 0x5410);
}

/* One round of the direct kernel's loads: U k-steps of a warp's A fragment (16 rows) and its NF
   B fragments (8 columns each), from k0. */
GK_DEV void gk_gemm_direct_load(unsigned *af, unsigned *bf, const gk_gemm_args *p, int a_kmaj, int b_kmaj, int pa,
                                int pb, int m0, int n0, int k0, int k_end, int nf, int u)
{
    const unsigned short *A = (const unsigned short *)p->a, *B = (const unsigned short *)p->b;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int s = 0; s < 4; s++) {
        if (s >= u) break;
        const int k = k0 + s * 16 + 2 * t;
        af[s * 4 + 0] = gk_gemm_direct_pair(A, p->lda, a_kmaj, pa, m0 + g, p->m, k, k_end);
        af[s * 4 + 1] = gk_gemm_direct_pair(A, p->lda, a_kmaj, pa, m0 + g + 8, p->m, k, k_end);
        af[s * 4 + 2] = gk_gemm_direct_pair(A, p->lda, a_kmaj, pa, m0 + g, p->m, k + 8, k_end);
        af[s * 4 + 3] = gk_gemm_direct_pair(A, p->lda, a_kmaj, pa, m0 + g + 8, p->m, k + 8, k_end);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            if (j >= nf) break;
            bf[(s * 8 + j) * 2 + 0] = gk_gemm_direct_pair(B, p->ldb, b_kmaj, pb, n0 + j * 8 + g, p->n, k, k_end);
            bf[(s * 8 + j) * 2 + 1] = gk_gemm_direct_pair(B, p->ldb, b_kmaj, pb, n0 + j * 8 + g, p->n, k + 8, k_end);
        }
    }
}

/* The direct kernels (STAGES 0), for tiny problems: no shared memory, no barrier, no pipeline
   to fill. 4 warps a block, each 16 rows x WN of D, stacked along M (64 x BN, WN = BN) or along
   N (16 x BN, WN = BN / 4: M <= 16 beside a wide N); a warp loads its m16n8k16 fragments straight
   from global memory, BK / 16 k-steps a round with the next round's loads in flight during this
   one's MMAs, and stores its pairs through the epilogue. */
GK_DEV void gk_gemm_direct_run(const gk_gemm_args *p, int dt, int ta, int tb, int bm, int bn, int wn, int bk,
                               float *acc)
{
    const int nf = wn / 8, u = bk / 16, a_kmaj = !ta, b_kmaj = tb, warp = threadIdx.x >> 5, wcols = bn / wn;
    int tm, tn;
    gk_gemm_tile(p, &tm, &tn);
    const int m0 = tm * bm + warp / wcols * 16, n0 = tn * bn + warp % wcols * wn, split = blockIdx.y;
    const int k_begin = split * p->k_per_split, k_end = min(p->k, k_begin + p->k_per_split);
    const int pa = a_kmaj && p->lda % 2 == 0 && gk_is_aligned(p->a, 4);
    const int pb = b_kmaj && p->ldb % 2 == 0 && gk_is_aligned(p->b, 4);
#pragma unroll
    for (int i = 0; i < nf * 4; i++) acc[i] = 0.0f;
    if (m0 >= p->m || n0 >= p->n) return;
    unsigned af[2][4 * 4], bf[2][4 * 8 * 2];
    gk_gemm_direct_load(af[0], bf[0], p, a_kmaj, b_kmaj, pa, pb, m0, n0, k_begin, k_end, nf, u);
    for (int k0 = k_begin; k0 < k_end; k0 += 2 * bk) {
        /* two rounds an iteration: the buffers swap by name, not by copies */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (k0 + h * bk >= k_end) break;
            if (k0 + (h + 1) * bk < k_end)
                gk_gemm_direct_load(af[h ^ 1], bf[h ^ 1], p, a_kmaj, b_kmaj, pa, pb, m0, n0, k0 + (h + 1) * bk, k_end,
                                    nf, u);
#pragma unroll
            for (int s = 0; s < 4; s++) {
                if (s >= u) break;
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    if (j >= nf) break;
                    if (dt == GK_BF16) gk_mma_m16n8k16_bf16(acc + j * 4, af[h] + s * 4, bf[h] + (s * 8 + j) * 2, acc + j * 4);
                    else gk_mma_m16n8k16_f16(acc + j * 4, af[h] + s * 4, bf[h] + (s * 8 + j) * 2, acc + j * 4);
                }
            }
        }
    }
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        if (j >= nf) break;
        const int col = n0 + j * 8 + t * 2;
        gk_gemm_store2(p, m0 + g, col, acc[j * 4 + 0], acc[j * 4 + 1], split);
        gk_gemm_store2(p, m0 + g + 8, col, acc[j * 4 + 2], acc[j * 4 + 3], split);
    }
}

/* ---------------------------------------------------------------- generator */

typedef void (*gk_gemm_kernel)(gk_gemm_args);

/* One configuration: a kernel per layout (NN, NT, TN, TT), its derived sizes checked here. */
#define GK_DEFINE_GEMM_MMA(name, dt, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                 \
    static_assert((STAGES) != 0 || ((((BM) == 64 && (WN) == (BN)) || ((BM) == 16 && (BN) == 4 * (WN))) &&          \
                                    (WM) == 16 && (WN) % 8 == 0 && (WN) <= 64 && (BK) % 16 == 0 && (BK) <= 64 &&    \
                                    !(DBUF) && !(VEC)),                                                           \
                  #name ": a direct tile (STAGES 0) is 64 x BN x BK or 16 x BN x BK, 4 warps of 16 x WN (WN = BN, "  \
                        "or BN / 4 for BM 16), WN 8..64 in steps of 8, BK 16..64 in steps of 16, DBUF 0, VEC 0");    \
    static_assert((STAGES) == 0 || ((BM) % (WM) == 0 && (BN) % (WN) == 0),                                        \
                  #name ": the warp tile must divide the block tile");                                           \
    static_assert((STAGES) == 0 || ((WM) % 16 == 0 && (WN) % 16 == 0 && (WM) <= 128 && (WN) <= 128),              \
                  #name ": a warp tile is 16..128 by 16..128, in steps of 16");                                    \
    static_assert((STAGES) == 0 || (BK) == 16 || (BK) == 32 || (BK) == 64,                                        \
                  #name ": BK is 16, 32 or 64 (rows of 32, 64, 128 B)");                                          \
    static_assert((STAGES) == 0 || ((BM) % 64 == 0 && (BN) % 64 == 0),                                            \
                  #name ": BM and BN are multiples of 64 (128-byte panels)");                                     \
    static_assert((STAGES) == 0 || ((BM) * (BK) / 8 % ((BM) / (WM) * (BN) / (WN) * 32) == 0 &&                    \
                                    (BN) * (BK) / 8 % ((BM) / (WM) * (BN) / (WN) * 32) == 0),                     \
                  #name ": every thread copies the same number of 16-byte chunks of each tile");                 \
    static_assert((STAGES) == 0 || ((STAGES) >= 2 && (STAGES) <= 5), #name ": 0 (direct) or 2 to 5 pipeline stages"); \
    static_assert(!(DBUF) || (BK) >= 32, #name ": double-buffered fragments need two k-steps per tile (BK >= 32)"); \
    static_assert((STAGES) == 0 || (((BM) / (WM) * (BN) / (WN) * 32) % ((BM) / 8) == 0 &&                         \
                                    ((BM) / (WM) * (BN) / (WN) * 32) % ((BN) / 8) == 0),                          \
                  #name ": the threads must cover whole 8-value columns of a tile row (threads % (BM/8, BN/8))"); \
    static_assert((MINB) * gk_gemm_smem_bytes_v(BM, BN, BK, STAGES, VEC) <= 227 * 1024,                           \
                  #name ": MINB blocks per SM need MINB times the shared memory");                               \
    static_assert(gk_gemm_smem_bytes_v(BM, BN, BK, STAGES, VEC) <= 227 * 1024, #name ": over 227 KB of shared memory"); \
    GK_GEMM_MMA_KERNEL(name##_nn, dt, 0, 0, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_nt, dt, 0, 1, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_tn, dt, 1, 0, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    GK_GEMM_MMA_KERNEL(name##_tt, dt, 1, 1, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                     \
    static_assert((VEC) != 2 || ((STAGES) >= 2 && (DBUF) && (BM) <= 256 && (BN) <= 256),                        \
                  #name ": TMA-fed tiles (VEC 2) are double-buffered, 2 to 5 stages, BM and BN at most 256 (a box)"); \
    GK_GEMM_MMA_TMA_KERNELS_I(VEC, name, dt, BM, BN, BK, WM, WN, STAGES, MINB)                                   \
    static const gk_gemm_kernel name##_kernels[4] = {name##_nn, name##_nt, name##_tn, name##_tt};               \
    static const gk_gemm_config name##_config = {#name, BM, BN, BK, WM, WN, STAGES, MINB, DBUF,                  \
                                                 (BM) / (WM) * ((BN) / (WN)) * 32,                                 \
                                                 gk_gemm_smem_bytes_v(BM, BN, BK, STAGES, VEC), VEC, 0, 0, 0, 0};

#define gk_gemm_smem_bytes_c(BM, BN, BK, STAGES) ((STAGES) * ((BM) + (BN)) * (BK) * 2)
/* VEC 2: the stages from a 1024-byte boundary (TMA's swizzle), then an mbarrier a stage */
#define gk_gemm_smem_bytes_v(BM, BN, BK, STAGES, VEC) \
    (gk_gemm_smem_bytes_c(BM, BN, BK, STAGES) + ((VEC) == 2 ? 1024 + 8 * (STAGES) : 0))

/* The TMA-fed kernels of a VEC 2 configuration (name_nn_tma .. name_tt_tma), built where nvcc
   targets compute capability 9.0; VEC is a literal 0, 1 or 2. */
typedef void (*gk_gemm_tma_kernel)(gk_gemm_args, CUtensorMap, CUtensorMap);
#define GK_GEMM_MMA_TMA_KERNELS_I(v, ...) GK_GEMM_MMA_TMA_KERNELS_##v(__VA_ARGS__)
#define GK_GEMM_MMA_TMA_KERNELS_0(...)
#define GK_GEMM_MMA_TMA_KERNELS_1(...)
#if GK_BUILD_HAS_SM90
#define GK_GEMM_MMA_TMA_KERNELS_2(name, dt, BM, BN, BK, WM, WN, STAGES, MINB)                                    \
    GK_GEMM_MMA_TMA_KERNEL(name##_nn_tma, dt, 0, 0, BM, BN, BK, WM, WN, STAGES, MINB)                          \
    GK_GEMM_MMA_TMA_KERNEL(name##_nt_tma, dt, 0, 1, BM, BN, BK, WM, WN, STAGES, MINB)                          \
    GK_GEMM_MMA_TMA_KERNEL(name##_tn_tma, dt, 1, 0, BM, BN, BK, WM, WN, STAGES, MINB)                          \
    GK_GEMM_MMA_TMA_KERNEL(name##_tt_tma, dt, 1, 1, BM, BN, BK, WM, WN, STAGES, MINB)                          \
    static const gk_gemm_tma_kernel name##_tma_kernels[4] = {name##_nn_tma, name##_nt_tma, name##_tn_tma,        \
                                                             name##_tt_tma};
#define GK_GEMM_TMA_ENTRY_2(name) name##_tma_kernels,
#else
#define GK_GEMM_MMA_TMA_KERNELS_2(...)
#define GK_GEMM_TMA_ENTRY_2(name) NULL,
#endif
#define GK_GEMM_TMA_ENTRY_I(v, name) GK_GEMM_TMA_ENTRY_##v(name)
#define GK_GEMM_TMA_ENTRY_0(name) NULL,
#define GK_GEMM_TMA_ENTRY_1(name) NULL,

#define GK_GEMM_MMA_TMA_KERNEL(kname, dt, TA, TB, BM, BN, BK, WM, WN, STAGES, MINB)                              \
    static __global__ void __launch_bounds__((BM) / (WM) * ((BN) / (WN)) * 32, MINB)                              \
        kname(const __grid_constant__ gk_gemm_args p, const __grid_constant__ CUtensorMap ma,                     \
              const __grid_constant__ CUtensorMap mb)                                                            \
    {                                                                                                            \
        float acc[(WM) / 16 * ((WN) / 8) * 4];                                                                   \
        gk_grid_launch_dependents();                                                                             \
        gk_gemm_mma_tma_run(&p, &ma, &mb, dt, TA, TB, BM, BN, BK, WM, WN, STAGES, acc);                          \
    }

#define GK_GEMM_MMA_KERNEL(kname, dt, TA, TB, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                                      \
    static __global__ void __launch_bounds__((BM) / (WM) * ((BN) / (WN)) * 32, MINB)                              \
        kname(const __grid_constant__ gk_gemm_args p)                                                            \
    {                                                                                                            \
        float acc[(WM) / 16 * ((WN) / 8) * 4];                                                                   \
        gk_grid_launch_dependents(); /* the split-K sum's blocks start and wait (gk_gemm_reduce_launch) */       \
        /* (a direct tile's dead branch still compiles: no stage count of 0 in it) */                         \
        if ((STAGES) == 0) gk_gemm_direct_run(&p, dt, TA, TB, BM, BN, WN, BK, acc);                              \
        else gk_gemm_mma_run(&p, dt, TA, TB, BM, BN, BK, WM, WN, (STAGES) ? (STAGES) : 2, DBUF, VEC, acc);       \
    }

/* Outputs a thread of the split-K sum: 4 where rows hold whole quads (one division and a 16-byte
   load a split for four) and D has 2^17 outputs or more, else 1: a small D summed over many
   splits waits on its loads' latency, which more threads hide (H200, 49 x 8 x 5944 in 16
   splits: 8.6 us with 4 a thread, 7.8 with 1). */
GK_HD int gk_gemm_reduce_width(int64_t m, int64_t n) { return n % 4 == 0 && m * n >= (1 << 17) ? 4 : 1; }

GK_DEV void gk_gemm_add4(float4 *s, float4 v)
{
    s->x += v.x;
    s->y += v.y;
    s->z += v.z;
    s->w += v.w;
}

/* D(row, col) of the splits' sum s, through the epilogue. */
GK_DEV void gk_gemm_reduce_out(const gk_gemm_args *p, float s, int row, int col)
{
    gk_store1_f32(p->d, (int64_t)row * p->ldd + col, p->d_dtype, gk_gemm_epilogue(p, s, row, col));
}

/* Split-K: sums the splits' partials in split order and applies the epilogue (gk_quant.cuh's
   split kernels end with it too). Launched dependent on the GEMM (gk_gemm_reduce_launch): its
   blocks start while the GEMM's finish and wait here for its partials. */
static __global__ void __launch_bounds__(256) gk_gemm_splitk_reduce(gk_gemm_args p, int splits)
{
    gk_grid_dependency_wait();
    const int64_t total = (int64_t)p.m * p.n;
    const int w = gk_gemm_reduce_width(p.m, p.n);
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < total / w; q += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = q * w;
        const int row = (int)(i / p.n), col = (int)(i % p.n);
        /* in split order; four splits' loads in flight at once (a many-split sum of a small
           D waits on them, not on bandwidth) */
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        int z = 0;
        if (w == 4) {
            const float4 *src = (const float4 *)(p.partial + i);
            const int64_t step = total / 4;
            for (; z + 4 <= splits; z += 4) {
                const float4 v0 = __ldcg(src + z * step), v1 = __ldcg(src + (z + 1) * step),
                             v2 = __ldcg(src + (z + 2) * step), v3 = __ldcg(src + (z + 3) * step);
                gk_gemm_add4(&s, v0);
                gk_gemm_add4(&s, v1);
                gk_gemm_add4(&s, v2);
                gk_gemm_add4(&s, v3);
            }
            for (; z < splits; z++) gk_gemm_add4(&s, __ldcg(src + z * step));
        } else {
            const float *src = p.partial + i;
            for (; z + 4 <= splits; z += 4) {
                const float v0 = __ldcg(src + z * total), v1 = __ldcg(src + (z + 1) * total),
                            v2 = __ldcg(src + (z + 2) * total), v3 = __ldcg(src + (z + 3) * total);
                s.x += v0;
                s.x += v1;
                s.x += v2;
                s.x += v3;
            }
            for (; z < splits; z++) s.x += __ldcg(src + z * total);
        }
        gk_gemm_reduce_out(&p, s.x, row, col);
        if (w == 4) {
            gk_gemm_reduce_out(&p, s.y, row, col + 1);
            gk_gemm_reduce_out(&p, s.z, row, col + 2);
            gk_gemm_reduce_out(&p, s.w, row, col + 3);
        }
    }
}

/* The split-K sum (or the k = 0 epilogue, splits 0) over p's M x N, launched dependent on the
   grid before it (the GEMM's kernels let it start from their first instruction), so that its
   launch is not paid after the GEMM's last block: H200, x[16, 4096] w[4096, 4096]^T in 2 splits
   19.9 -> 18.5 us (cuBLAS 17.8). */
static cudaError_t gk_gemm_reduce_launch(const char *fn, gk_gemm_args p, int splits, cudaStream_t stream)
{
    int blocks;
    GK_TRY(gk_grid_size((int64_t)p.m * p.n / gk_gemm_reduce_width(p.m, p.n), 256, 4, &blocks));
    void *args[2] = {&p, &splits};
    return gk_launch_dependent(fn, (const void *)gk_gemm_splitk_reduce, dim3((unsigned)blocks), dim3(256), 0, args,
                               stream);
}

#if GK_GEMM_SM90
#include "gk_gemm_sm90.cuh"
#endif

#endif /* __CUDACC__ */

#endif /* GK_GEMM_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_GEMM_IMPLEMENTATION)) && !defined(GK_GEMM_IMPLEMENTED)
#define GK_GEMM_IMPLEMENTED

#if GK_GEMM_SM90
#include "gk_gemm_sm90.cuh"
#else
#undef GK_GEMM_WG_CONFIGS /* a list given for sm_90a builds has no kernels here */
#define GK_GEMM_WG_CONFIGS(X)
static int gk_gemm_wg_ready(void) { return 0; }
static cudaError_t gk_gemm_wg_launch(const char *fn, int, const gk_gemm_config *, int, int, dim3, gk_gemm_args, int, int,
                                     int64_t, int64_t, int64_t, int64_t, cudaStream_t)
{
    return gk__fail(cudaErrorNotSupported, fn, "this build has no wgmma kernels (GK_GEMM_SM90 is 0)");
}
static int gk_gemm_wg_clusters(const char *, int, const gk_gemm_config *, int, int) { return 0; }
#endif

/* The shipped tensor-core configurations, as
   X(tile name, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC): MINB blocks per SM the registers
   are budgeted for, DBUF double-buffered fragments, VEC 0 element-wise loads. The dispatcher
   uses the first three as its large tile, its small tile and its element-wise-load tile; a
   build may replace the list (probes: GK_GEMM_SHIPPED_CONFIGS(X) and candidates after them).
   - 128 x 256 x 32, 8 warps of 64 x 64, 4 stages (96 KB: an A100 holds it too), fragments
     double-buffered, one block per SM: the fewest ldmatrix bytes a MMA a warp's registers allow.
     TMA-fed on compute capability 9.0 (H200, 4096^3: 1.05x its cp.async kernel, TN 0.99-1.05x,
     the same bits): the copies' address arithmetic and LDGSTS leave the k-loop.
   - 64 x 64 x 64, 4 warps of 32 x 32, 3 blocks per SM: 4x the blocks for small M x N.
   - the same with element-wise loads; 64 x 8 direct, 64 of K loaded ahead (tiny problems: N of
     one n8 fragment spreads M over the most blocks; 64 x 16 .. 64 x 64 were slower on every
     tiny shape measured), registers for 2 blocks an SM (its at most 256 tiles): a round's loads
     all in flight; 16 x 32 direct, its warps along N (one n8 fragment each), registers for 4
     blocks an SM, for M <= 16 where N is too wide for 256 tiles of 64 x 8 (9 x 11056 x 24: 346
     tiles, not 1382; H100, against the swapped 16 x 128 wgmma tile: 5.6 us against 6.6, where
     16 x 64 took 6.1 and 16 x 128 7.8). */
#define GK_GEMM_SHIPPED_CONFIGS(X)                          \
    X(128x256x32_w64x64, 128, 256, 32, 64, 64, 4, 1, 1, 2) \
    X(64x64x64_s4, 64, 64, 64, 32, 32, 4, 3, 1, 1)         \
    X(64x64x64_s4_elem, 64, 64, 64, 32, 32, 4, 3, 1, 0)   \
    X(64x8x64_direct, 64, 8, 64, 16, 8, 0, 2, 0, 0)       \
    X(16x32x64_direct, 16, 32, 64, 16, 8, 0, 4, 0, 0)
#ifndef GK_GEMM_CONFIGS
#define GK_GEMM_CONFIGS(X) GK_GEMM_SHIPPED_CONFIGS(X)
#endif
#define GK_GEMM_X_DEFINE(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)                           \
    GK_DEFINE_GEMM_MMA(gk_gemm_bf16_##tile, GK_BF16, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) \
    GK_DEFINE_GEMM_MMA(gk_gemm_f16_##tile, GK_F16, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC)
#define GK_GEMM_X_BF16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) gk_gemm_bf16_##tile##_kernels,
#define GK_GEMM_X_F16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) gk_gemm_f16_##tile##_kernels,
#define GK_GEMM_X_CONFIG(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) &gk_gemm_bf16_##tile##_config,
#define GK_GEMM_X_ONE(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) 1,
GK_GEMM_CONFIGS(GK_GEMM_X_DEFINE)

static const gk_gemm_kernel *const gk_gemm_kernel_table[2][64] = {{GK_GEMM_CONFIGS(GK_GEMM_X_BF16)},
                                                                  {GK_GEMM_CONFIGS(GK_GEMM_X_F16)}};
#define GK_GEMM_X_TMA_BF16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) GK_GEMM_TMA_ENTRY_I(VEC, gk_gemm_bf16_##tile)
#define GK_GEMM_X_TMA_F16(tile, BM, BN, BK, WM, WN, STAGES, MINB, DBUF, VEC) GK_GEMM_TMA_ENTRY_I(VEC, gk_gemm_f16_##tile)
/* a configuration's TMA-fed kernels, NULL where it has none in this build */
static const gk_gemm_tma_kernel *const gk_gemm_tma_kernel_table[2][64] = {{GK_GEMM_CONFIGS(GK_GEMM_X_TMA_BF16)},
                                                                          {GK_GEMM_CONFIGS(GK_GEMM_X_TMA_F16)}};

/* 1 in an image compiled for compute capability 9.0 or newer (where the TMA-fed kernels have code). */
static __device__ int gk_gemm_tma_built =
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    1;
#else
    0;
#endif

/* 1: VEC 2 configurations run their cp.async kernels; and the TMA-fed launches made (the tests
   compare the two kernels and check that the TMA-fed one ran). */
static int gk_gemm_tma_off;
static unsigned gk_gemm_tma_launches;

/* The TMA-fed kernels can run: the image loaded for this device is sm_90 code and the device is
   compute capability 9.0. Asked once per device (the first 32; others every call). */
static int gk_gemm_tma_ready(void)
{
    static unsigned known, ready;
    return gk_sm90a_ready(&gk_gemm_tma_built, &known, &ready);
}

/* An operand's map for the TMA-fed kernels: [rows, cols] stored with stride ld; K-major boxes of
   BK x tile_rows in the swizzle of BK * 2-byte rows, MN-major boxes of 64 x BK (128-byte swizzle). */
static cudaError_t gk_gemm_mma_tma_map(const char *fn, CUtensorMap *map, const void *x, int dt, int64_t rows,
                                       int64_t cols, int64_t ld, int k_major, int tile_rows, int bk)
{
    const int64_t dims[2] = {cols, rows}, strides[1] = {ld};
    const int box_k[2] = {bk, tile_rows}, box_mn[2] = {64, bk};
    const CUtensorMapSwizzle sw = !k_major || bk == 64 ? CU_TENSOR_MAP_SWIZZLE_128B
                                  : bk == 32           ? CU_TENSOR_MAP_SWIZZLE_64B
                                                       : CU_TENSOR_MAP_SWIZZLE_32B;
    return gk_tma_encode(fn, map, x, dt == GK_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                         2, dims, strides, k_major ? box_k : box_mn, sw);
}
/* the mma.sync configurations, then the wgmma ones */
static const gk_gemm_config *const gk_gemm_config_table[] = {GK_GEMM_CONFIGS(GK_GEMM_X_CONFIG)
                                                                 GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_CONFIG)};
static const char gk_gemm_mma_ones[] = {GK_GEMM_CONFIGS(GK_GEMM_X_ONE)};
#define GK_GEMM_NCONFIG ((int)(sizeof gk_gemm_config_table / sizeof gk_gemm_config_table[0]))
#define GK_GEMM_NMMA ((int)sizeof gk_gemm_mma_ones)
#define GK_GEMM_ELEM_CONFIG 2

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
   starts at any even byte offset). Values past cols are written as zeros. The odd shape's two
   operands (134 MB read + written) take 36.9 us, cudaMemcpy of the same bytes 35.4. */
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

/* Tiles of configuration c over an m x n D. */
static int64_t gk_gemm_tiles(const gk_gemm_config *c, int64_t m, int64_t n)
{
    return gk_ceil_div(m, c->bm) * gk_ceil_div(n, c->bn);
}

/* Workspace bytes of K splits summed in the kernel on tiles of bm x bn: a partial tile a split
   and a 64-bit counter a tile. */
static size_t gk_gemm_fixup_bytes(int64_t tiles, int64_t splits, int64_t bm, int64_t bn)
{
    return (size_t)gk_round_up(tiles * (splits * bm * bn * 4 + 8), 256);
}

/* 1 where configuration cfg sums `splits` K splits of an m x n problem in the kernel: a tile
   that has it, 2 to 4 splits, its tiles at least half inside D. The block that sums a tile reads
   every split's whole tile alone: against a second launch on the H200 suite, 2 splits took
   1 / 1.21 of the time, 4 1 / 1.04, 8 1 / 0.91, 16 1 / 0.76; 1 x 184 x 2264 on 128 x 256 in 4
   splits 19.3 us against 15.3. */
static int gk_gemm_splits_in_kernel(const gk_gemm_config *cfg, int64_t splits, int64_t m, int64_t n)
{
    return splits > 1 && splits <= 4 && cfg->wgmma && GK_GEMM_SPLITS_IN_KERNEL(cfg->persistent, cfg->bm) &&
           2 * m * n >= gk_gemm_tiles(cfg, m, n) * cfg->bm * cfg->bn;
}

/* A launch's tag in the counters of splits summed in the kernel: 48 bits of a hash of the calls
   so far, never 0 (a counter the kernel has set back) nor all ones (poisoned memory). */
static unsigned long long gk_gemm_fixup_tag(void)
{
    static unsigned long long calls;
    for (;;) {
        const unsigned long long t = (__atomic_add_fetch(&calls, 1ull, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull) >> 16;
        if (t != 0 && t != 0xffffffffffffull) return t;
    }
}

/* Workspace bytes of `splits` K splits of an m x n problem on configuration cfg. */
static size_t gk_gemm_splits_bytes(const gk_gemm_config *cfg, int64_t splits, int64_t m, int64_t n)
{
    if (gk_gemm_splits_in_kernel(cfg, splits, m, n))
        return gk_gemm_fixup_bytes(gk_gemm_tiles(cfg, m, n), splits, cfg->bm, cfg->bn);
    return gk_gemm_split_bytes(splits, m, n);
}

/* The launch grid of p's tiles in `splits` K splits: a block each, or for a persistent kernel at
   most a block an SM, each walking several. */
static dim3 gk_gemm_grid(const gk_gemm_args *p, int splits, int persistent, int sms)
{
    const int64_t items = (int64_t)p->tiles_m * p->tiles_n * splits;
    if (persistent) return dim3((unsigned)(items < sms ? items : sms), 1);
    return dim3((unsigned)((int64_t)p->tiles_m * p->tiles_n), (unsigned)splits);
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
   fitted to the H200 decode sweep (M = 16, N = 28672 takes 3 splits: 149.3 us, 1 split 162.0). */
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

/* An operand's rows: 0 not 16-byte aligned (ld not a multiple of 8, or x off 16 bytes), 1 16-byte
   aligned, 2 each row on a 128-byte line. x NULL: taken as allocated (256-byte aligned). */
static int gk_gemm_row_align(const void *x, int64_t ld)
{
    if (ld % 8 != 0 || (x && !gk_is_aligned(x, 16))) return 0;
    return ld % 64 == 0 && (!x || gk_is_aligned(x, 128)) ? 2 : 1;
}

/* The measured table (GK_GEMM_TUNED, gk_gemm_sm90.cuh): for sm_90a builds on compute capability
   9.0, the suite shape nearest (m, n, k) names a configuration and K splits measured faster
   there than the time model's pick (the table's comment says by how much), or "model".
   Nearest: the least |dm| + |dn| + |dk| in log2 units (Mitchell's approximation: the double's
   exponent and mantissa read as one number, within 0.09 of log2), plus 1/4 for another layout;
   a shape farther than 1 from every entry, or whose entry names a tile without kernels for the
   layout (gk_gemm_config_takes), gets the time model's pick.
   Off the suite the table gains less than on it: left out of the table of 2026-12-02, each
   suite shape took 0.985x the time model's time on average (geometric mean of the sweep's
   times; 0.947x on the suite itself). A trailing empty entry lets a build define
   GK_GEMM_TUNED(X) empty. */
/* 1 where configuration cfg has kernels for the layout: a swapped tile needs A row-major, the
   64 x 64, 64 x 32 and BN 160 wgmma tiles B K-major (GK_GEMM_WG_B_K_MAJOR: built for F.linear's
   weights only, as the swapped tiles) */
static int gk_gemm_config_takes(const gk_gemm_config *cfg, int trans_a, int trans_b)
{
    if (cfg->swap) return !trans_a;
    return !(cfg->wgmma && GK_GEMM_WG_B_K_MAJOR(cfg->bm, cfg->bn)) || trans_b;
}

#ifdef GK_GEMM_TUNED
typedef struct gk_gemm_tuned_entry {
    int64_t m, n, k;
    int trans_a, trans_b;
    const char *tile; /* the configuration's name past "gk_gemm_bf16_", or "model" */
    int splits;
} gk_gemm_tuned_entry;
#define GK_GEMM_TUNED_X(m, n, k, ta, tb, tile, splits) {m, n, k, ta, tb, #tile, splits},
static const gk_gemm_tuned_entry gk_gemm_tuned_table[] = {GK_GEMM_TUNED(GK_GEMM_TUNED_X){0, 0, 0, 0, 0, "", 0}};
#define GK_GEMM_NTUNED ((int)(sizeof gk_gemm_tuned_table / sizeof gk_gemm_tuned_table[0]) - 1)

static double gk_gemm_log2_approx(int64_t x)
{
    const double d = (double)x;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return (double)bits * (1.0 / 4503599627370496.0) - 1023.0;
}

/* Entry i's configuration index, or -1 for "model" or a name this build lacks; resolved once
   (each slot an int written whole: concurrent first calls write the same value). */
static int gk_gemm_tuned_config(int i)
{
    static int cache[GK_GEMM_NTUNED + 1]; /* configuration + 2; 0: not yet resolved */
    if (cache[i] == 0) {
        int c = -1;
        for (int j = 0; j < GK_GEMM_NCONFIG; j++) {
            const char *name = gk_gemm_config_table[j]->name;
            if (strlen(name) > 13 && strcmp(name + 13, gk_gemm_tuned_table[i].tile) == 0) c = j; /* "gk_gemm_bf16_" */
        }
        cache[i] = c + 2;
    }
    return cache[i] - 2;
}

/* 1 and the table's configuration and splits for (m, n, k) in this layout, else 0. */
static int gk_gemm_tuned_pick(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int *config, int64_t *splits)
{
    const double lm = gk_gemm_log2_approx(m), ln = gk_gemm_log2_approx(n), lk = gk_gemm_log2_approx(k);
    int best = -1;
    double best_d = 1.0;
    for (int i = 0; i < GK_GEMM_NTUNED; i++) {
        const gk_gemm_tuned_entry *e = &gk_gemm_tuned_table[i];
        const double dm = lm - gk_gemm_log2_approx(e->m), dn = ln - gk_gemm_log2_approx(e->n),
                     dk = lk - gk_gemm_log2_approx(e->k);
        const double d = (dm < 0 ? -dm : dm) + (dn < 0 ? -dn : dn) + (dk < 0 ? -dk : dk) +
                         (e->trans_a != trans_a || e->trans_b != trans_b ? 0.25 : 0.0);
        if (d <= best_d) {
            if (d < best_d || best < 0) best = i;
            best_d = d;
        }
    }
    if (best < 0) return 0;
    const int c = gk_gemm_tuned_config(best);
    if (c < 0 || !gk_gemm_config_takes(gk_gemm_config_table[c], trans_a, trans_b)) return 0;
    /* K splits fill the GPU with blocks: the entry's blocks (its tiles x splits) spread over this
       problem's tiles (copying the count measured 0.76x the time model in a leave-one-out test of
       the suite, M = 256 taking M = 128's two splits; spreading it, 0.93x at worst) */
    const gk_gemm_config *cfg = gk_gemm_config_table[c];
    const gk_gemm_tuned_entry *e = &gk_gemm_tuned_table[best];
    const int64_t te = gk_gemm_tiles(cfg, e->m, e->n), tq = gk_gemm_tiles(cfg, m, n);
    const int64_t s = (e->splits * te + tq / 2) / tq;
    *config = c;
    *splits = s > 1 ? s : 1;
    return 1;
}
#endif

/* The wgmma configuration of the same unswapped tile and stages as c with persistent kind p, or c
   where there is none. */
static int gk_gemm_twin(int c, int p)
{
    const gk_gemm_config *f = gk_gemm_config_table[c];
    for (int j = 0; j < GK_GEMM_NCONFIG; j++) {
        const gk_gemm_config *t = gk_gemm_config_table[j];
        if (t->wgmma && !t->swap && t->bm == f->bm && t->bn == f->bn && t->stages == f->stages && t->persistent == p)
            return j;
    }
    return c;
}

/* Configuration c's twin of `cluster` blocks a cluster (the same tile, stages and TMA stores: a
   persistent 3 tile and its persistent 5 twin), or c where it has none. */
static int gk_gemm_cluster_twin(int c, int cluster)
{
    const gk_gemm_config *f = gk_gemm_config_table[c];
    if (!f->wgmma || (f->persistent != 3 && f->persistent != 5)) return c;
    return gk_gemm_twin(c, cluster == 2 ? 5 : 3);
}

/* Configuration c's ping-pong twin with TMA stores (a block-a-tile tile and its PERSIST 4 twin:
   the same tile and stages), or c where it has none. */
static int gk_gemm_pingpong_twin(int c)
{
    const gk_gemm_config *f = gk_gemm_config_table[c];
    return f->wgmma && f->persistent == 0 && !f->swap ? gk_gemm_twin(c, 4) : c;
}

/* Tiny problems with an operand's rows off 16 bytes (M N <= 65536, K <= 256): the element-wise
   load kernel in one launch, not a repack launch and a TMA kernel (H200: 3783 x 1 x 7 6.6 us
   against 10.2, 528 x 3 x 127 8.4 against 9.3; 1063 x 91 x 11, past the bound, 11.6 against 10.0). */
static int gk_gemm_tiny_unaligned(int64_t m, int64_t n, int64_t k, int align_a, int align_b)
{
    return (align_a == 0 || align_b == 0) && m * n <= 65536 && k <= 256;
}

/* Tiny problems for the direct tile t: at most 128 MINB of its tiles (one wave of MINB blocks an
   SM), K <= 128 with both operands K-contiguous (kc: a value pair a 32-bit load in rows of
   16-byte multiples, else two 16-bit loads in flight together), K <= 16 otherwise; M <= 16 for
   the 16-row tile. One launch with no pipeline to fill, but each round of 64 of K is a trip to
   memory. H200, NT, against the dispatcher's pick before it: 3 x 8 x 8 4.6 us against 6.1, 16168
   x 8 x 8 (253 tiles) 5.7 against 6.7, 1063 x 91 x 11 6.4 against 10.4, 9398 x 8 x 128 7.1
   against 7.3; rows off 16 bytes against the element-wise kernel: 3277 x 1 x 39 4.9-5.1 against
   6.7-7.0, 528 x 3 x 127 6.8-6.9 against 8.9, 350 x 3 x 113 6.3-6.5 against 8.5-8.9; past the
   bounds slower: 6 x 8 x 176 7.0 against 5.1, 12 x 10768 x 24 (1346 tiles, M filling a quarter
   of the warps) 7.6 against 5.9. NN, TN and TT (MN-contiguous, K <= 16), 6 shapes each: the
   fastest tile on all 18, 0.85-1.30x cuBLAS (472 x 24 x 8 TT 5.4 us, the next tile 5.8). The 16
   x 32 tile takes M <= 16 beside an N too wide for 256 tiles of 64 x 8 (H100: 12 x 10768 x 24,
   337 tiles, 5.7 us against the swapped wgmma tile's 6.0; 2 x 11912 x 32 5.5 against 5.7-5.9). */
static int gk_gemm_direct_fits(const gk_gemm_config *t, int64_t m, int64_t n, int64_t k, int kc)
{
    return gk_gemm_tiles(t, m, n) <= 128 * t->min_blocks && k <= (kc ? 128 : 16) &&
           (t->bm == 64 || m <= t->bm);
}

/* The first direct configuration (STAGES 0) of the build that a problem fits, -1 if none. */
static int gk_gemm_direct_pick(int64_t m, int64_t n, int64_t k, int kc)
{
    for (int c = 0; c < GK_GEMM_NMMA; c++)
        if (gk_gemm_config_table[c]->stages == 0 && gk_gemm_direct_fits(gk_gemm_config_table[c], m, n, k, kc))
            return c;
    return -1;
}

/* The dispatcher.
   - M <= 64 (decode, small batches) with the wgmma kernels and A row-major: the swapped tile
     with the fewest rows that hold M (16 or 64 x 128), K split (from K >= 1024) only until 64
     blocks stream B: with 7-8 stages of 16 KB of B each, 64 blocks already reach the rate of
     132 (H200, M = 16, N = 8192: 64 tiles, 45.9 us unsplit, 48.2 in 2 splits).
   - M <= 16 otherwise (A transposed, or no sm_90a code): the small mma.sync tile (64 x 64, 3
     blocks an SM), K split by gk_gemm_decode_splits. These shapes are bound by the bytes of B,
     and 3 blocks of 4 cp.async stages an SM keep more bytes in flight than one 128-row wgmma
     block of padding (M = 16, N = 28672, K = 8192: 149 us against 152 for the 128 x 256 tile).
   - With the wgmma kernels (sm_90a build, compute capability 9.0): the tile with the least
     waves x tile FLOPs / its measured rate, a partial wave counted whole (M = 128, N = 28672
     takes 128 x 256: 112 tiles in one wave, 133 us against 140 for 224 of 128 x 128). K is
     split (from K >= 1024, each split >= 512 of K) only when the tiles would leave two
     thirds of the SMs idle, into as many splits as one wave holds. A tiny problem (K < 1024,
     its tiles under a quarter of the SMs) with A row-major takes the swapped 16-row tile whole.
     Whole K on the 128 x 256 tile over an even count of tile rows and three waves or more takes
     its twin in 2-block clusters; whole K on the 128 x 64 tile in one wave its ping-pong twin.
   - Otherwise (mma.sync): the large tile when its tiles fill every SM at least once, else the
     small tile (4x the blocks), splitting K (same bounds) until 3 blocks per SM are resident:
     the resident blocks' cp.async stages are the bytes in flight.
   With the wgmma kernels and `tuned`, the measured table above comes first: its pick where it has
   one, as it is (the twin rules are the time model's). Before the others (after the table), a
   problem that a direct tile fits takes it (gk_gemm_direct_pick). Operands whose rows are not
   16-byte aligned are repacked into the workspace when it is large enough
   (gk_gemm_workspace_bytes), else run on the element-wise-load kernels, as tiny problems always
   do (gk_gemm_tiny_unaligned). */
static void gk_gemm_plan_impl(int64_t m, int64_t n, int64_t k, int64_t rows_a, int64_t cols_a, int align_a,
                              int64_t rows_b, int64_t cols_b, int align_b, int sms, int wg, int a_row_major,
                              int trans_b, int tuned, gk_gemm_plan *pl)
{
    int64_t s = 1;
    int tuned_config = -1;
    int64_t tuned_splits = 1;
#ifdef GK_GEMM_TUNED
    if (!(wg && tuned && gk_gemm_tuned_pick(m, n, k, !a_row_major, trans_b, &tuned_config, &tuned_splits)))
        tuned_config = -1;
#else
    (void)trans_b;
    (void)tuned;
#endif
    const int direct = tuned_config < 0 ? gk_gemm_direct_pick(m, n, k, a_row_major && trans_b) : -1;
    if (direct >= 0) {
        memset(pl, 0, sizeof *pl); /* any alignment: nothing to repack, and no splits */
        pl->config = direct;
        pl->splits = 1;
        return;
    }
    const gk_gemm_config *small = gk_gemm_config_table[1];
    const int64_t t_small = gk_gemm_tiles(small, m, n);
    /* the swapped tile with the fewest rows that hold all of M, and the one of fewest rows */
    int swap = -1, fewest = -1;
    if (wg && a_row_major)
        for (int c = GK_GEMM_NMMA; c < GK_GEMM_NCONFIG; c++) {
            const gk_gemm_config *w = gk_gemm_config_table[c];
            if (!w->swap) continue;
            if (fewest < 0 || w->bm < gk_gemm_config_table[fewest]->bm) fewest = c;
            if (w->bm >= m && (swap < 0 || w->bm < gk_gemm_config_table[swap]->bm)) swap = c;
        }
    if (tuned_config >= 0) {
        pl->config = tuned_config;
        s = tuned_splits;
    } else if (swap >= 0) {
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
            /* a cluster tile: as its twin, below; 64 x 64, 64 x 32 and BN 160: where the measured
               table names them */
            if (w->swap || GK_GEMM_CLUSTER(w->persistent) > 1 || GK_GEMM_WG_B_K_MAJOR(w->bm, w->bn)) continue;
            const int64_t t = gk_gemm_tiles(w, m, n);
            if (GK_GEMM_PINGPONG(w->persistent) && t <= sms) continue; /* ping-pong overlaps only a block's second tile */
            const double cost = (double)gk_ceil_div(t, sms) * w->bm * w->bn / w->rate;
            if (pl->config < 0 || cost < best) {
                pl->config = c;
                best = cost;
                t_best = t;
            }
        }
        if (k >= 1024 && t_best * 3 <= sms) s = sms / t_best;
        /* a tiny problem (its tiles fill under a quarter of the SMs, K < 1024) with A row-major:
           the swapped tile of fewest rows, whole K: its blocks of 16 rows of D share the loads over
           more SMs (H200 sweep, 9 shapes of M 126 .. 1063: 5.3-9.8 us against 5.8-15.8 on the
           128 x 128 tile; gemm_suite_sweep_small_splits.txt) */
        if (fewest >= 0 && k < 1024 && t_best * 4 <= sms) {
            pl->config = fewest;
            s = 1;
        }
    } else {
        const gk_gemm_config *big = gk_gemm_config_table[0];
        const int64_t t_big = gk_gemm_tiles(big, m, n);
        pl->config = t_big >= sms ? 0 : 1;
        if (pl->config == 1 && k >= 1024 && t_small < (int64_t)small->min_blocks * sms)
            s = gk_ceil_div((int64_t)small->min_blocks * sms, t_small);
    }
    if (s > GK_GEMM_MAX_SPLITS) s = GK_GEMM_MAX_SPLITS;
    /* a split takes 512 of K at least, or 128 where the table names it (small problems) */
    if (s > k / (tuned_config >= 0 ? 128 : 512)) s = k / (tuned_config >= 0 ? 128 : 512);
    if (s < 1) s = 1;
    pl->splits = (int)s;
    /* whole K on a tile that has a twin in 2-block clusters (the same tile, B loaded once for two
       tiles), an even count of tile rows (a pair's second tile past M leaves its block idle:
       M <= 128 ran at half speed) and three waves of tiles at least: the twin. H200 suite, 128 x
       256: 1.00-1.02x at 8192^3 and over 3 waves, 0.98-1.00x from 1 to 3 waves, against 0.98-0.99x
       for the tile alone; the twin's K splits would take a second launch, the tile's are summed
       in it.
       Whole K on a block-a-tile tile in one wave: its ping-pong twin, one consumer running the
       whole tile (the 128 x 64 tile: 8 HGMMAs a k-tile, as cuBLAS's 128 x 64 kernels), the other
       idle. H200 gemm_bench, the cooperative 128 x 64 -> the twin: 1024^3 NT 10.3 -> 9.7 us, TT
       10.8 -> 9.7, Llama-3-8B qkv M = 128 24.7 -> 23.9, o M = 256 23.1 -> 22.3, 70B o M = 128
       47.0 -> 46.4; in 10 and 16 K splits 2-3% slower, so not there.
       Neither for the table's picks: it was measured with the twins among the tiles. */
    if (wg && s == 1 && tuned_config < 0) {
        const int cl = gk_gemm_cluster_twin(pl->config, 2);
        const gk_gemm_config *t = gk_gemm_config_table[cl];
        if (cl != pl->config && gk_ceil_div(m, t->bm) % 2 == 0 && gk_gemm_tiles(t, m, n) >= 3 * (int64_t)sms)
            pl->config = cl;
        const int pp = gk_gemm_pingpong_twin(pl->config);
        if (pp != pl->config && gk_gemm_tiles(gk_gemm_config_table[pp], m, n) <= sms) pl->config = pp;
    }
    /* rows 16-byte but not 128-byte aligned (align 1): the wgmma tiles' TMA boxes straddle L2
       lines, 1.45-1.55x slower with both operands off where the MMAs are the time (H200:
       8976 x 1824 x 11240 783 us against 509 with 128-byte rows, 1959 x 10552 x 552 72 against
       49). Repacked where the GEMM at 600 TFLOP/s takes at least 3x the repack: its bytes at
       3 TB/s (each read and written once) and 2 us for its launch, which stands in line before
       the GEMM whatever its size (5181 x 304 x 24 with B's 15 KB repacked: 10.3 us, in place
       7.9; 15055 x 1360 x 96 with both repacked 27.3, in place 22.7); not for the 2-block
       cluster tile, which loads half of B a block (4096 x 4096 x 4040: 1.03x off, and the
       repack costs 1.2x); nor for K <= 256, where writing D (2 bytes an output at 3 TB/s) takes
       longer than its MMAs (2 K FLOPs at 800 TFLOP/s) and the loads have room (H100: 8266 x 10296
       x 144 in place 112.7-114.0 us, repacked 119.4-119.9); and an operand off costs by its
       share of the tile's rows (8976 x 1824 x 11240 on 128 x 192: A off 1.02x, B off 1.21x), so
       the larger operand, where the tile takes fewer of its rows, stays as it is */
    int pack_a = align_a == 0, pack_b = align_b == 0;
    const gk_gemm_config *pc = gk_gemm_config_table[pl->config];
    if (wg && (align_a == 1 || align_b == 1) && GK_GEMM_CLUSTER(pc->persistent) == 1 && k > 256) {
        const double bytes_a = 4.0 * rows_a * cols_a, bytes_b = 4.0 * rows_b * cols_b;
        const double bytes = (align_a == 1 ? bytes_a : 0.0) + (align_b == 1 ? bytes_b : 0.0);
        if (2.0 * m * n * k / 600e12 >= 3.0 * (bytes / 3e12 + 2e-6)) {
            pack_a |= align_a == 1 && !(bytes_a > bytes_b && pc->bm < pc->bn);
            pack_b |= align_b == 1 && !(bytes_b > bytes_a && pc->bn < pc->bm);
        }
    }
    pl->pack_a_bytes = gk_gemm_pack_bytes(rows_a, cols_a, !pack_a);
    pl->pack_b_bytes = gk_gemm_pack_bytes(rows_b, cols_b, !pack_b);
    pl->split_bytes = gk_gemm_splits_bytes(gk_gemm_config_table[pl->config], s, m, n);
    if (gk_gemm_tiny_unaligned(m, n, k, align_a, align_b)) {
        pl->config = GK_GEMM_ELEM_CONFIG;
        pl->splits = 1;
        pl->split_bytes = pl->pack_a_bytes = pl->pack_b_bytes = 0;
    }
    pl->workspace_bytes = pl->split_bytes + pl->pack_a_bytes + pl->pack_b_bytes;
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

/* The k = 0 product: D = act(beta C + bias), through the split-K sum over no splits. */
static cudaError_t gk_gemm_no_k(const char *fn, gk_gemm_args p, cudaStream_t stream)
{
    p.alpha = 0.0f;
    p.partial = NULL;
    return gk_gemm_reduce_launch(fn, p, 0, stream);
}

static cudaError_t gk_gemm_run_checked(const char *fn, int config, int splits, int in_dtype, void *d, int d_dtype,
                                       int64_t ldd, const void *a, int64_t lda, int trans_a, const void *b, int64_t ldb,
                                       int trans_b, const void *c, int64_t ldc, const float *bias, int64_t m, int64_t n,
                                       int64_t k, float alpha, float beta, int act, void *workspace,
                                       size_t workspace_bytes, cudaStream_t stream)
{
    if (in_dtype != GK_BF16 && in_dtype != GK_F16)
        return gk__fail(cudaErrorInvalidValue, fn, "in_dtype %d is not GK_BF16 or GK_F16", in_dtype);
    if (d_dtype != GK_BF16 && d_dtype != GK_F16 && d_dtype != GK_F32)
        return gk__fail(cudaErrorInvalidValue, fn, "d_dtype %d is not GK_BF16, GK_F16 or GK_F32", d_dtype);
    if (act < GK_ACT_NONE || act > GK_ACT_SILU) return gk__fail(cudaErrorInvalidValue, fn, "act %d is not a gk_act", act);
    if (config < -1 || config >= GK_GEMM_NCONFIG)
        return gk__fail(cudaErrorInvalidValue, fn, "config %d is not -1 or 0..%d", config, GK_GEMM_NCONFIG - 1);
    if (splits < 0) return gk__fail(cudaErrorInvalidValue, fn, "splits = %d is negative", splits);
    if (trans_a != 0 && trans_a != 1) return gk__fail(cudaErrorInvalidValue, fn, "trans_a = %d is not 0 or 1", trans_a);
    if (trans_b != 0 && trans_b != 1) return gk__fail(cudaErrorInvalidValue, fn, "trans_b = %d is not 0 or 1", trans_b);
    GK_TRY(gk_check_mnk(fn, m, n, k));
    if (m == 0 || n == 0) return cudaSuccess; /* nothing to write; pointers not inspected */
    /* the spans of the operands (m, n, k and the strides are below 2^31: these cannot overflow) */
    const int64_t rows_a = trans_a ? k : m, cols_a = trans_a ? m : k, rows_b = trans_b ? n : k, cols_b = trans_b ? k : n;
    gk_gemm_span in[2] = {{"a", a, 0}, {"b", b, 0}};
    if (k > 0) { /* with k == 0, a and b are not read */
        GK_TRY(gk_gemm_check_operand(fn, "a", "lda", a, lda, cols_a));
        GK_TRY(gk_gemm_check_operand(fn, "b", "ldb", b, ldb, cols_b));
        GK_TRY(gk_check_span(fn, "a", rows_a, cols_a, lda, 2, &in[0].bytes));
        GK_TRY(gk_check_span(fn, "b", rows_b, cols_b, ldb, 2, &in[1].bytes));
    }
    GK_TRY(gk_gemm_check_outputs(fn, d, d_dtype, ldd, c, ldc, bias, m, n, beta, in, k > 0 ? 2 : 0, workspace,
                                 &workspace_bytes));

    gk_gemm_args p = gk_gemm_args_of(d, d_dtype, ldd, c, ldc, bias, m, n, k, alpha, beta, act);
    if (k == 0) return gk_gemm_no_k(fn, p, stream);

    const int align_a = gk_gemm_row_align(a, lda), align_b = gk_gemm_row_align(b, ldb);
    const int aligned_a = align_a > 0, aligned_b = align_b > 0;
    const int repack = (!aligned_a || !aligned_b) && !gk_gemm_tiny_unaligned(m, n, k, align_a, align_b) &&
                       workspace_bytes >= gk_gemm_pack_bytes(rows_a, cols_a, aligned_a) +
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
    if (config >= 0 && !gk_gemm_config_takes(gk_gemm_config_table[config], trans_a, trans_b))
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s needs %s", gk_gemm_config_table[config]->name,
                        gk_gemm_config_table[config]->swap ? "A row-major (trans_a = 0)" : "B K-major (trans_b = 1)");
    gk_gemm_plan pl;
    gk_gemm_plan_impl(m, n, k, rows_a, cols_a, align_a, rows_b, cols_b, align_b, sms, wg_ready && !elementwise,
                      !trans_a, trans_b, 1, &pl);
    if (config < 0) {
        config = elementwise && gk_gemm_config_table[pl.config]->vec ? GK_GEMM_ELEM_CONFIG : pl.config;
        /* the dispatcher's cluster tile where this GPU holds none of its clusters (a partition
           too small): its twin of one block */
        if (GK_GEMM_CLUSTER(gk_gemm_config_table[config]->persistent) > 1 &&
            !gk_gemm_wg_clusters(fn, config - GK_GEMM_NMMA, gk_gemm_config_table[config], in_dtype,
                                 (trans_a ? 2 : 0) + (trans_b ? 1 : 0)))
            config = pl.config = gk_gemm_cluster_twin(config, 1);
    }
    const gk_gemm_config *cfg = gk_gemm_config_table[config];
    if (splits == 0) splits = config == pl.config || (elementwise && pl.config == 1) ? pl.splits : 1;
    /* the operands to repack: the plan's (rows not 16-byte aligned, and rows not 128-byte aligned
       where it pays) when the workspace holds them, else those not 16-byte aligned alone */
    int pack_a = repack && !aligned_a && cfg->vec, pack_b = repack && !aligned_b && cfg->vec;
    /* (not where the plan is the direct tile, which reads rows as they are: a configuration
       given with rows off 16 bytes still needs its copies) */
    if (!elementwise && cfg->vec && gk_gemm_config_table[pl.config]->vec &&
        workspace_bytes >= pl.pack_a_bytes + pl.pack_b_bytes) {
        pack_a = pl.pack_a_bytes > 0;
        pack_b = pl.pack_b_bytes > 0;
    }
    const size_t copy_a = gk_gemm_pack_bytes(rows_a, cols_a, 0), copy_b = gk_gemm_pack_bytes(rows_b, cols_b, 0);
    /* the partials come first in the workspace, the repacked operands after them */
    const size_t pack_bytes = (pack_a ? copy_a : 0) + (pack_b ? copy_b : 0);
    /* splits summed in the kernel where the tile has it and the workspace holds its partial
       tiles, else by a second launch where it holds the partials, else none */
    const int in_kernel = gk_gemm_splits_in_kernel(cfg, splits, m, n) &&
                          workspace_bytes >= gk_gemm_splits_bytes(cfg, splits, m, n) + pack_bytes;
    if (!in_kernel && workspace_bytes < gk_gemm_split_bytes(splits, m, n) + pack_bytes) splits = 1;

    p.k_per_split = (int)gk_round_up(gk_ceil_div(k, splits), cfg->bk);
    splits = (int)gk_ceil_div(k, p.k_per_split); /* no empty split */
    char *ws = (char *)workspace;
    if (splits > 1 && in_kernel) {
        const int64_t tiles = gk_gemm_tiles(cfg, m, n);
        p.fixup = (float *)ws;
        p.fixup_tag = gk_gemm_fixup_tag();
        ws += gk_gemm_fixup_bytes(tiles, splits, cfg->bm, cfg->bn);
    } else {
        p.partial = splits > 1 ? (float *)ws : NULL;
        ws += gk_gemm_split_bytes(splits, m, n);
    }
    if (pack_a || pack_b) {
        gk_gemm_pack_job j[2] = {{0}, {0}};
        int nj = 0;
        if (pack_a) j[nj++] = gk_gemm_pack_job_of(&ws, &a, &lda, rows_a, cols_a, copy_a);
        if (pack_b) j[nj++] = gk_gemm_pack_job_of(&ws, &b, &ldb, rows_b, cols_b, copy_b);
        GK_TRY(gk_gemm_pack_launch(fn, j[0], j[1], (int64_t)1 << 30, stream));
    }
    p.a = a;
    p.b = b;
    p.lda = lda;
    p.ldb = ldb;
    p.tiles_m = (int)gk_ceil_div(m, cfg->bm);
    p.tiles_n = (int)gk_ceil_div(n, cfg->bn);

    /* a swapped tile's MMAs take B as their A operand (MN-major when B is not transposed) and A
       as their B operand (K-major: A row-major) */
    const int layout = cfg->swap ? (trans_b ? 0 : 2) + 1 : (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
    const dim3 grid = gk_gemm_grid(&p, splits, cfg->persistent, sms);
    if (cfg->wgmma) {
        GK_TRY(gk_gemm_wg_launch(fn, config - GK_GEMM_NMMA, cfg, in_dtype, layout, grid, p, trans_a, trans_b, rows_a,
                                 cols_a, rows_b, cols_b, stream));
    } else if (gk_gemm_tma_kernel_table[in_dtype == GK_F16][config] && !gk_gemm_tma_off && gk_gemm_tma_ready() &&
               gk_is_aligned(p.a, 16) && gk_is_aligned(p.b, 16) && p.lda % 8 == 0 && p.ldb % 8 == 0) {
        const gk_gemm_tma_kernel kern = gk_gemm_tma_kernel_table[in_dtype == GK_F16][config][layout];
        static unsigned tma_attr_set[2][GK_GEMM_NCONFIG][4];
        GK_TRY(gk_smem_opt_in(fn, (const void *)kern, cfg->smem_bytes, &tma_attr_set[in_dtype == GK_F16][config][layout]));
        CUtensorMap ma, mb;
        GK_TRY(gk_gemm_mma_tma_map(fn, &ma, p.a, in_dtype, rows_a, cols_a, p.lda, !trans_a, cfg->bm, cfg->bk));
        GK_TRY(gk_gemm_mma_tma_map(fn, &mb, p.b, in_dtype, rows_b, cols_b, p.ldb, trans_b, cfg->bn, cfg->bk));
        kern<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p, ma, mb);
        GK_TRY(gk_check_launch(fn));
        gk_gemm_tma_launches++;
    } else {
        const void *kern = (const void *)gk_gemm_kernel_table[in_dtype == GK_F16][config][layout];
        static unsigned attr_set[2][GK_GEMM_NCONFIG][4];
        GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[in_dtype == GK_F16][config][layout]));
        ((gk_gemm_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p);
        GK_TRY(gk_check_launch(fn));
    }
    if (p.partial) GK_TRY(gk_gemm_reduce_launch(fn, p, splits, stream));
    return cudaSuccess;
}

static cudaError_t gk_gemm_run(const char *fn, int config, int splits, int in_dtype, void *d, int d_dtype, int64_t ldd,
                               const void *a, int64_t lda, int trans_a, const void *b, int64_t ldb, int trans_b,
                               const void *c, int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k,
                               float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                               cudaStream_t stream)
{
    gk__begin();
    return gk__end(fn, gk_gemm_run_checked(fn, config, splits, in_dtype, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b,
                                           c, ldc, bias, m, n, k, alpha, beta, act, workspace, workspace_bytes, stream));
}

GK_EXTERN_C_BEGIN

GK_IMPL int gk_gemm_config_count(void) { return GK_GEMM_NCONFIG; }

GK_IMPL gk_gemm_config gk_gemm_config_info(int config)
{
    gk_gemm_config none = {0};
    if (config < 0 || config >= GK_GEMM_NCONFIG) return none;
    return *gk_gemm_config_table[config]; /* named after the bf16 kernels; f16 has the same tiles */
}

GK_IMPL gk_gemm_plan gk_gemm_plan_for(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                      int64_t ldb)
{
    gk_gemm_plan pl = {0};
    int sms = 132;
    if (gk_sm_count(&sms) != cudaSuccess) sms = 132;
    if (m <= 0 || n <= 0 || k <= 0) return pl;
    gk_gemm_plan_impl(m, n, k, trans_a ? k : m, trans_a ? m : k, gk_gemm_row_align(NULL, lda), trans_b ? n : k,
                      trans_b ? k : n, gk_gemm_row_align(NULL, ldb), sms, gk_gemm_wg_ready(), !trans_a, trans_b, 1, &pl);
    return pl;
}

GK_IMPL size_t gk_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int trans_a, int64_t lda, int trans_b,
                                       int64_t ldb)
{
    return gk_gemm_plan_for(m, n, k, trans_a, lda, trans_b, ldb).workspace_bytes;
}

GK_IMPL cudaError_t gk_gemm_ex(int config, int splits, int in_dtype, void *d, int d_dtype, int64_t ldd, const void *a,
                               int64_t lda, int trans_a, const void *b, int64_t ldb, int trans_b, const void *c,
                               int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k, float alpha,
                               float beta, int act, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    return gk_gemm_run("gk_gemm_ex", config, splits, in_dtype, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc,
                       bias, m, n, k, alpha, beta, act, workspace, workspace_bytes, stream);
}

GK_IMPL cudaError_t gk_gemm_bf16(void *d, int d_dtype, int64_t ldd, const gk_bf16 *a, int64_t lda, int trans_a,
                                 const gk_bf16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                 const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                 void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    return gk_gemm_run("gk_gemm_bf16", -1, 0, GK_BF16, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias, m,
                       n, k, alpha, beta, act, workspace, workspace_bytes, stream);
}

GK_IMPL cudaError_t gk_gemm_f16(void *d, int d_dtype, int64_t ldd, const gk_f16 *a, int64_t lda, int trans_a,
                                const gk_f16 *b, int64_t ldb, int trans_b, const void *c, int64_t ldc,
                                const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta, int act,
                                void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    return gk_gemm_run("gk_gemm_f16", -1, 0, GK_F16, d, d_dtype, ldd, a, lda, trans_a, b, ldb, trans_b, c, ldc, bias, m, n,
                       k, alpha, beta, act, workspace, workspace_bytes, stream);
}

GK_EXTERN_C_END

#endif /* gemm implementation */
