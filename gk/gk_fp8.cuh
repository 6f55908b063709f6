/* gk_fp8.cuh - gk FP8 GEMM v0.1: e4m3 x e4m3 -> bf16, f16 or f32 with fp32 accumulation on
   Hopper's fp8 wgmma (sm_90a) or, elsewhere from compute capability 8.9 (Ada), on mma.sync
   m16n8k32 e4m3, with the scales real fp8 models use: per tensor, per row (token) of A and per
   row (output channel) of B, or DeepSeek-V3's blocks (1 x 128 for A, 128 x 128 for B; wgmma
   only), and the quantizer that makes those operands and scales from bf16, f16 or f32.

   Needs gk_core.cuh, gk_mma.cuh and gk_gemm.cuh with gk_gemm_sm90.cuh (same folder: the wgmma
   pipeline, the epilogue and the split-K sum are gk_gemm's, run on 1-byte values). In ONE .cu
   file: #define GK_IMPLEMENTATION (or GK_FP8_IMPLEMENTATION with GK_GEMM_IMPLEMENTATION and
   GK_CORE_IMPLEMENTATION where no other file defines them), then #include "gk_fp8.cuh". Build
   with -gencode arch=compute_90a,code=sm_90a for the wgmma kernels (H100 / H200), with sm_89
   for Ada's mma.sync ones (on Hopper those run too, but ptxas unpacks their e4m3 to f16 MMAs:
   slower than bf16). The W4A16 GEMM is gk_quant.cuh; the two are apart so that a project takes
   only the one it uses.

   THE MATH
     D[M, N] = act(alpha (sum_k A[m, k] B[n, k] sa sb) + beta C + bias), A [M][K] and B [N][K]
     e4m3 codes (both K-major, as fp8 wgmma reads them: B is a Linear's [out, in] weight), fp32
     accumulation, sa and sb the scales of the operands' values:
       GK_FP8_TENSOR  one float for the operand (scale NULL: 1)
       GK_FP8_ROW     one float a row: A's rows are tokens (what gk_quant_e4m3 and
                      gk_rmsnorm_quant_e4m3 of gk_reduce.cuh write), B's rows output channels
       GK_FP8_BLOCK   A: [M][ceil(K / 128)], one float a row and 128 k (1 x 128);
                      B: [ceil(N / 128)][ceil(K / 128)], one a 128 x 128 block. Both operands
                      or neither. Each 128-k tile's fp32 sums are scaled as they finish.
     Tensor and row scales multiply the fp32 sums once, on their way out, before alpha, C and
     bias. Scales are fp32 in device memory (a calibration on the GPU needs no copy back).

   PUBLIC FUNCTIONS
     gk_fp8_gemm(d, d_dtype, ldd, a, lda, scale_a, scale_a_mode, b, ldb, scale_b, scale_b_mode,
                 c, ldc, bias, m, n, k, alpha, beta, act, workspace, workspace_bytes, stream)
         the GEMM above; d, c [M][N] of d_dtype (GK_BF16, GK_F16, GK_F32) with gk_gemm's
         epilogue rules (c may be d; c is not read when beta == 0; bias fp32 [N] or NULL; act a
         gk_act). workspace (NULL or 256-byte aligned) lets K be split when M x N has too few
         tiles for the GPU (partials summed in a fixed order: deterministic).
     gk_fp8_gemm_ex(config, splits, ...the same...)   one configuration (-1: the dispatcher's)
                                             and K split count (0: the dispatcher's)
     gk_fp8_plan_for(m, n, k, block)         the dispatcher's choice (gk_gemm_plan's fields)
     gk_fp8_workspace_bytes(m, n, k, block)  the workspace it would use
     gk_fp8_config_count(), gk_fp8_config_info(config)
     gk_fp8_quantize(out, ldo, scales, scale_mode, block_rows, x, x_dtype, ldx, trans, rows, cols,
                     stream)
         out [rows][cols] e4m3 (K-major: rows = M or N, cols = K), stride ldo, from x of x_dtype
         (GK_F32, GK_BF16, GK_F16): x[r][c] (trans 0, stride ldx) or x[c][r] (trans 1: a [K][N]
         weight becomes [N][K]). The scales it writes are amax / 448 of each cell (1 where the
         cell is all zeros), codes = e4m3(x / scale) rounded to nearest: GK_FP8_TENSOR one float,
         GK_FP8_ROW [rows], GK_FP8_BLOCK [ceil(rows / block_rows)][ceil(cols / 128)] with
         block_rows 1 (activations) or 128 (weights). NaN codes as NaN and is left out of its
         cell's amax; the input must be otherwise finite. Three launches (the cells' amax by
         atomicMax of the bits of non-negative floats, which is order-free; the codes; the
         scales): for per-row activations on the hot path gk_quant_e4m3 (gk_reduce.cuh) is one.
     gk_fp8_scale_count(scale_mode, block_rows, rows, cols)   the floats of such scales
     Ledger: gk_gemm_ledger(m, n, k, GK_E4M3, d_dtype, has_c, has_bias) (gk_core.cuh).

   ARGUMENTS AND ERRORS
     m == 0 or n == 0 is a no-op; k == 0 gives act(beta C + bias). Refused before launch
     (cudaErrorInvalidValue; gk_failure_reason() names it): null pointers (scales only in
     GK_FP8_TENSOR mode may be NULL), a and b not 16-byte aligned or lda, ldb not multiples of
     16 (TMA reads rows of 16-byte multiples) or smaller than k, an unknown scale mode, block
     scales on one operand only, d overlapping a, b, a scale or bias, d partially overlapping
     c, sizes past 32-bit indexing; on the mma.sync kernels (no sm_90a here, or forced) an odd k.
     cudaErrorNotSupported: a GPU below compute capability 8.9; block scales without the sm_90a
     wgmma kernels. Any M, N, K (K even on mma.sync): tiles past the edges read zeros and are not
     stored. A NaN scale reaches exactly the outputs it scales.

   HOW IT RUNS
     The dispatcher takes the wgmma kernels where they can run, else the mma.sync ones.
     wgmma: gk_gemm_sm90.cuh's kernel on 1-byte values: a k-tile is 128 bytes of a row, 128 e4m3; one
     producer warp's TMA fills STAGES stages, two consumer warpgroups run wgmma m64nNk32 e4m3
     (four a k-tile) and store through shared memory, either both on one tile or (ping-pong) each
     on its own, in turn. Block scales: each k-tile's sums go to a
     second set of registers, waited on at once and added scaled (DeepSeek's promotion), which is
     why block-scaled tiles are 128 x 128 (two sets of 64 accumulators a thread).
     mma.sync: gk_gemm.cuh's cp.async kernel with both operands K-major, e4m3 pairs read as 16-bit
     values (the m16n8k16 fragments of pairs are the m16n8k32 e4m3 fragments: gk_mma.cuh), scales
     in the epilogue.

   GENERATOR
     GK_DEFINE_FP8_GEMM(name, BM, BN, STAGES, BLOCK, PERSIST, RATE) writes the wgmma kernel of a
     BM x BN x 128 tile (BM 128 or 256, BN 64, 128 or 256, at most 128 x 256; BLOCK 1: block
     scales, BM 128, BN 128 or 64) with STAGES TMA stages and its gk_fp8_config; PERSIST as
     gk_gemm_sm90.cuh's (1: a block per SM walks the tiles, 2: ping-pong, 128 x 128 at most, no
     block scales); RATE is its TFLOP/s at 8192^3 on the H200, the dispatcher's time model.
     GK_DEFINE_FP8_GEMM_MMA(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF) writes an mma.sync one
     (gk_gemm's GK_DEFINE_GEMM_MMA arguments, BK16 in e4m3 pairs).

   MEASURED   gk_bench/RESULTS.md, "FP8 GEMM".

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_fp8.cuh"
       // a Linear's weight w [4096][8192] bf16 to e4m3 once, a scale an output channel
       gk_fp8_quantize(w8, 8192, w_scales, GK_FP8_ROW, 1, w, GK_BF16, 8192, 0, 4096, 8192, stream);
       // then per step: x [tokens][8192] bf16 -> e4m3 with a scale a token, and the GEMM
       gk_quant_e4m3_bf16(x8, 8192, x_scales, x, 8192, tokens, 8192, stream);   // gk_reduce.cuh
       cudaError_t e = gk_fp8_gemm(y, GK_BF16, 4096, x8, 8192, x_scales, GK_FP8_ROW, w8, 8192,
                                   w_scales, GK_FP8_ROW, NULL, 0, NULL, tokens, 4096, 8192, 1.0f,
                                   0.0f, GK_ACT_NONE, ws, ws_bytes, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"
#include "gk_mma.cuh"
#include "gk_gemm.cuh"

#ifndef GK_FP8_CUH
#define GK_FP8_CUH

typedef enum gk_fp8_scale { GK_FP8_TENSOR = 0, GK_FP8_ROW = 1, GK_FP8_BLOCK = 2 } gk_fp8_scale;

typedef struct gk_fp8_config {
    const char *name;
    int bm, bn, bk, stages; /* bk in e4m3 values */
    int block;      /* 1: block scales (the only scales it takes), 0: tensor and row scales */
    int wgmma;      /* 1: sm_90a wgmma fed by TMA; 0: mma.sync m16n8k32 e4m3 (compute capability 8.9 on) */
    int threads;
    int smem_bytes;
    int rate;       /* wgmma: TFLOP/s at 8192^3 on the H200, the dispatcher's time model */
    int persistent; /* wgmma: 1 a block per SM walks the tiles; 2 as well, its consumers in ping-pong */
} gk_fp8_config;

GK_EXTERN_C_BEGIN
GK_DECL cudaError_t gk_fp8_gemm(void *d, int d_dtype, int64_t ldd, const gk_e4m3 *a, int64_t lda, const float *scale_a,
                                int scale_a_mode, const gk_e4m3 *b, int64_t ldb, const float *scale_b, int scale_b_mode,
                                const void *c, int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k,
                                float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                cudaStream_t stream);
GK_DECL cudaError_t gk_fp8_gemm_ex(int config, int splits, void *d, int d_dtype, int64_t ldd, const gk_e4m3 *a,
                                   int64_t lda, const float *scale_a, int scale_a_mode, const gk_e4m3 *b, int64_t ldb,
                                   const float *scale_b, int scale_b_mode, const void *c, int64_t ldc,
                                   const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta,
                                   int act, void *workspace, size_t workspace_bytes, cudaStream_t stream);
GK_DECL gk_gemm_plan gk_fp8_plan_for(int64_t m, int64_t n, int64_t k, int block);
GK_DECL size_t gk_fp8_workspace_bytes(int64_t m, int64_t n, int64_t k, int block);
GK_DECL int gk_fp8_config_count(void);
GK_DECL gk_fp8_config gk_fp8_config_info(int config); /* name NULL for an unknown index */
GK_DECL cudaError_t gk_fp8_quantize(gk_e4m3 *out, int64_t ldo, float *scales, int scale_mode, int block_rows,
                                    const void *x, int x_dtype, int64_t ldx, int trans, int64_t rows, int64_t cols,
                                    cudaStream_t stream);
GK_DECL int64_t gk_fp8_scale_count(int scale_mode, int block_rows, int64_t rows, int64_t cols);
GK_EXTERN_C_END

#ifdef __CUDACC__

/* ---------------------------------------------------------------- quantizer kernels

   A thread takes 8 consecutive values of one output row (a chunk): trans 0 walks chunks along
   the row (coalesced reads of x's rows), trans 1 walks rows first (coalesced reads of x's rows,
   which are the output's columns). */
typedef struct gk_fp8_quant_args {
    gk_e4m3 *out;
    float *cells; /* amax of each cell (bits of a non-negative float), then its scale */
    const void *x;
    int64_t ldo, ldx;
    int rows, cols, chunks; /* chunks = ceil(cols / 8) */
    int x_dtype, trans, mode, block_rows, kbs; /* kbs = ceil(cols / 128) */
} gk_fp8_quant_args;

GK_HD int gk_fp8_cell(const gk_fp8_quant_args *q, int r, int c)
{
    if (q->mode == GK_FP8_TENSOR) return 0;
    if (q->mode == GK_FP8_ROW) return r;
    return r / q->block_rows * q->kbs + c / 128;
}

/* Chunk i's row, first column and its values (past cols: 0). */
GK_DEV void gk_fp8_chunk(const gk_fp8_quant_args *q, int64_t i, int *r, int *c, float *v)
{
    *r = (int)(q->trans ? i % q->rows : i / q->chunks);
    *c = (int)(q->trans ? i / q->rows : i % q->chunks) * 8;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const int cc = *c + e;
        v[e] = cc < q->cols ? gk_load1_f32(q->x, q->trans ? (int64_t)cc * q->ldx + *r : (int64_t)*r * q->ldx + cc,
                                           q->x_dtype)
                            : 0.0f;
    }
}

static __global__ void __launch_bounds__(256) gk_fp8_amax_kernel(gk_fp8_quant_args q)
{
    const int64_t total = (int64_t)q.rows * q.chunks;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < total; i += (int64_t)gridDim.x * 256) {
        int r, c;
        float v[8], a = 0.0f;
        gk_fp8_chunk(&q, i, &r, &c, v);
#pragma unroll
        for (int e = 0; e < 8; e++) a = fmaxf(a, fabsf(v[e])); /* fmaxf drops a NaN */
        if (a > 0.0f) atomicMax((unsigned *)q.cells + gk_fp8_cell(&q, r, c), __float_as_uint(a));
    }
}

/* amax / 448, 1 for an all-zero cell: the same expression as the codes' kernel divides by */
GK_DEV float gk_fp8_scale_of(unsigned amax_bits)
{
    const float a = __uint_as_float(amax_bits);
    return a > 0.0f ? a / 448.0f : 1.0f;
}

static __global__ void __launch_bounds__(256) gk_fp8_code_kernel(gk_fp8_quant_args q)
{
    const int64_t total = (int64_t)q.rows * q.chunks;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < total; i += (int64_t)gridDim.x * 256) {
        int r, c;
        float v[8];
        gk_fp8_chunk(&q, i, &r, &c, v);
        const float s = gk_fp8_scale_of(((const unsigned *)q.cells)[gk_fp8_cell(&q, r, c)]);
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = v[e] / s;
        gk_e4m3 *o = q.out + (int64_t)r * q.ldo + c;
        if (c + 8 <= q.cols && gk_is_aligned(o, 8)) {
            *(uint2 *)o = gk_pack_e4m3(v, 8);
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                if (c + e < q.cols) o[e] = gk_f32_to_e4m3(v[e]);
        }
    }
}

static __global__ void __launch_bounds__(256) gk_fp8_scale_kernel(float *cells, int64_t count)
{
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < count; i += (int64_t)gridDim.x * 256)
        cells[i] = gk_fp8_scale_of(__float_as_uint(cells[i]));
}

/* ---------------------------------------------------------------- GEMM kernels (sm_90a) */

#if GK_GEMM_SM90
typedef void (*gk_fp8_kernel)(gk_gemm_args, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap);

#define GK_DEFINE_FP8_GEMM(name, BM, BN, STAGES, BLOCK, PERSIST, RATE)                                           \
    static_assert((BM) == 128 || (BM) == 256, #name ": BM is 128 or 256 (one or two m64 slices a consumer)");   \
    static_assert((BN) == 64 || (BN) == 128 || (BN) == 256, #name ": BN is 64, 128 or 256 (wgmma n)");         \
    static_assert((BM) * (BN) <= 128 * 256, #name ": at most 128 accumulators a consumer thread");            \
    static_assert(!(BLOCK) || ((BM) == 128 && (BN) <= 128),                                                     \
                  #name ": block scales need BM 128 and BN <= 128 (a second set of accumulators)");            \
    static_assert((STAGES) >= 2, #name ": at least 2 stages");                                                  \
    static_assert((PERSIST) != 2 || ((BM) == 128 && (BN) <= 128 && !(BLOCK)),                                  \
                  #name ": a ping-pong tile is 128 x 64 or 128 x 128 (a consumer holds all of it), no block scales"); \
    static_assert(gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST) <= 227 * 1024,                              \
                  #name ": over 227 KB of shared memory");                                                    \
    static_assert((PERSIST) || gk_gemm_wg_epi_bytes_c(BM, BN) <= (STAGES) * ((BM) + (BN)) * 128,               \
                  #name ": the epilogue's accumulators must fit in the stages");                               \
    static __global__ void __launch_bounds__(GK_GEMM_WG_THREADS, 1)                                             \
        name(const __grid_constant__ gk_gemm_args p, const __grid_constant__ CUtensorMap tma,                   \
             const __grid_constant__ CUtensorMap tmb, const __grid_constant__ CUtensorMap tma_last,            \
             const __grid_constant__ CUtensorMap tmb_last)                                                      \
    {                                                                                                           \
        float acc[(BM) * (BN) / ((PERSIST) == 2 ? 128 : 256)], tmp[(BLOCK) ? (BM) * (BN) / 256 : 1];            \
        gk_gemm_wg_run(&p, &tma, &tmb, &tma_last, &tmb_last, NULL, GK_E4M3, 0, 1, BM, BN, STAGES, PERSIST, BLOCK, acc,  \
                       tmp);                                                                                    \
    }                                                                                                           \
    static const gk_fp8_config name##_config = {#name, BM, BN, 128, STAGES, BLOCK, 1, GK_GEMM_WG_THREADS,       \
                                                gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST), RATE, PERSIST};
#endif

/* An mma.sync configuration: gk_gemm.cuh's kernel on K-major e4m3 operands read as 16-bit pairs
   (BK16 pairs a k-tile, 2 BK16 e4m3), m16n8k32 e4m3 MMAs, A row-major and B [N][K] only. */
#define GK_DEFINE_FP8_GEMM_MMA(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF)                                     \
    GK_GEMM_MMA_KERNEL(name, GK_E4M3, 0, 1, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF, 1)                           \
    static const gk_fp8_config name##_config = {#name, BM, BN, 2 * (BK16), STAGES, 0, 0,                        \
                                                (BM) / (WM) * ((BN) / (WN)) * 32,                                 \
                                                gk_gemm_smem_bytes_c(BM, BN, BK16, STAGES), 0, 0};

#endif /* __CUDACC__ */
#endif /* GK_FP8_CUH */

/* ================================================================ implementation */

#if defined(__CUDACC__) && (defined(GK_IMPLEMENTATION) || defined(GK_FP8_IMPLEMENTATION)) && \
    !defined(GK_FP8_IMPLEMENTED)
#define GK_FP8_IMPLEMENTED

#if !defined(GK_GEMM_IMPLEMENTED)
#error "gk_fp8.cuh's implementation needs gk_gemm.cuh's: define GK_GEMM_IMPLEMENTATION too (or GK_IMPLEMENTATION)"
#endif

/* The shipped configurations. mma.sync, X(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF): gk_gemm's
   two tiles (gk_gemm.cuh), the path of builds or GPUs without sm_90a (sm_89: Ada), tensor and row
   scales only; the 128 x 128 one budgeted for one block an SM (for sm_90 ptxas turns each e4m3
   MMA into conversions and f16 MMAs, which at two blocks' 128 registers spill). wgmma,
   X(name, BM, BN, STAGES, BLOCK, PERSIST, RATE), RATE in TFLOP/s at 8192^3 (H200,
   gk_bench/RESULTS.md, "FP8 GEMM"):
   - 128 x 256 x 128, 4 stages (192 KB), as gk_gemm's 128 x 256 (1234 TFLOP/s). 256 x 128 and 7
     stages of 128 x 128 measured no faster.
   - 128 x 128 x 128, 6 stages: twice the tiles (1118).
   - 128 x 128 x 128 ping-pong (PERSIST 2), 4 stages: a block per SM, its consumers on tiles of
     their own, one storing while the other runs MMAs: the large shapes (1303; 4096^3 135 us
     against 144 for 128 x 256).
   - 128 x 128 x 128, block scales, persistent (the producer fills the next tile's stages during
     the epilogue), 4 stages and the epilogue buffer (962; 6 stages not persistent: 8192^3 1161 us
     against 1143, 4096^3 181 against 175; 128 x 64: 659 TFLOP/s). Not ping-pong: a consumer
     drains its MMAs every k-tile to scale them, which the other's MMAs hide only when both
     run at once. */
#ifndef GK_FP8_MMA_CONFIGS
#define GK_FP8_MMA_CONFIGS(X)                                  \
    X(gk_fp8_mma128x128x64, 128, 128, 32, 32, 64, 4, 1, 0)     \
    X(gk_fp8_mma64x64x128_s4, 64, 64, 64, 32, 32, 4, 3, 1)
#endif
#ifndef GK_FP8_CONFIGS
#define GK_FP8_CONFIGS(X)                          \
    X(gk_fp8_128x256x128_s4, 128, 256, 4, 0, 0, 1234)       \
    X(gk_fp8_128x128x128_s6, 128, 128, 6, 0, 0, 1118)       \
    X(gk_fp8_128x128x128_s4_pp, 128, 128, 4, 0, 2, 1303)   \
    X(gk_fp8_128x128x128_s4_block_p, 128, 128, 4, 1, 1, 962)
#endif

#define GK_FP8_X_MMA_DEFINE(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF) \
    GK_DEFINE_FP8_GEMM_MMA(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF)
#define GK_FP8_X_MMA_KERNEL(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF) (const void *)name,
#define GK_FP8_X_MMA_CONFIG(name, BM, BN, BK16, WM, WN, STAGES, MINB, DBUF) &name##_config,
GK_FP8_MMA_CONFIGS(GK_FP8_X_MMA_DEFINE)
#if GK_GEMM_SM90
#define GK_FP8_X_DEFINE(name, BM, BN, STAGES, BLOCK, PERSIST, RATE) \
    GK_DEFINE_FP8_GEMM(name, BM, BN, STAGES, BLOCK, PERSIST, RATE)
#define GK_FP8_X_KERNEL(name, BM, BN, STAGES, BLOCK, PERSIST, RATE) (const void *)name,
#define GK_FP8_X_CONFIG(name, BM, BN, STAGES, BLOCK, PERSIST, RATE) &name##_config,
GK_FP8_CONFIGS(GK_FP8_X_DEFINE)
#else
#define GK_FP8_X_KERNEL(name, BM, BN, STAGES, BLOCK, PERSIST, RATE)
#define GK_FP8_X_CONFIG(name, BM, BN, STAGES, BLOCK, PERSIST, RATE)
#endif
/* the mma.sync configurations first, then the wgmma ones (where the build has them) */
static const void *const gk_fp8_kernel_table[] = {GK_FP8_MMA_CONFIGS(GK_FP8_X_MMA_KERNEL)
                                                      GK_FP8_CONFIGS(GK_FP8_X_KERNEL)};
static const gk_fp8_config *const gk_fp8_config_table[] = {GK_FP8_MMA_CONFIGS(GK_FP8_X_MMA_CONFIG)
                                                               GK_FP8_CONFIGS(GK_FP8_X_CONFIG)};
#define GK_FP8_NCONFIG ((int)(sizeof gk_fp8_config_table / sizeof gk_fp8_config_table[0]))

/* The wgmma kernels can run here (sm_90a code, a compute capability 9.0 device). */
static int gk_fp8_wg_ready(void)
{
#if GK_GEMM_SM90
    return gk_gemm_wg_ready();
#else
    return 0;
#endif
}

/* The mma.sync e4m3 kernels can run here: compute capability 8.9 or newer. */
static cudaError_t gk_fp8_mma_ready(int *ready)
{
    int dev = 0, major = 0, minor = 0;
    GK_TRY(cudaGetDevice(&dev));
    GK_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    GK_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    *ready = major * 10 + minor >= 89;
    return cudaSuccess;
}

/* The dispatcher. With the wgmma kernels (wg): among the configurations of the scales' kind, the
   least waves x tile FLOPs / rate (a partial wave counted whole). Without (mma.sync, tensor and row
   scales only): the 128 x 128 tile when its tiles fill every SM, else the 64 x 64 one. K split
   (from K >= 2048, 1024 of K a split at least) when the tiles would leave two thirds of the SMs
   idle, into as many splits as one wave holds. config -1: no configuration can take it here. */
static void gk_fp8_plan_impl(int64_t m, int64_t n, int64_t k, int block, int sms, int wg, gk_gemm_plan *pl)
{
    double best = 0.0;
    int64_t t_best = 1;
    memset(pl, 0, sizeof *pl);
    pl->config = -1;
    for (int c = 0; c < GK_FP8_NCONFIG; c++) {
        const gk_fp8_config *f = gk_fp8_config_table[c];
        if (f->block != (block != 0) || f->wgmma != (wg != 0)) continue;
        const int64_t t = gk_ceil_div(m, f->bm) * gk_ceil_div(n, f->bn);
        if (f->persistent == 2 && t <= sms) continue; /* ping-pong overlaps only a block's second tile */
        const double cost = wg ? (double)gk_ceil_div(t, sms) * f->bm * f->bn / f->rate : (t >= sms ? -f->bm : f->bm);
        if (pl->config < 0 || cost < best) {
            pl->config = c;
            best = cost;
            t_best = t;
        }
    }
    if (pl->config < 0) return;
    int64_t s = 1;
    if (k >= 2048 && t_best * 3 <= sms) s = sms / t_best;
    if (s > GK_GEMM_MAX_SPLITS) s = GK_GEMM_MAX_SPLITS;
    if (s > k / 1024) s = k / 1024;
    if (s < 1) s = 1;
    pl->splits = (int)s;
    pl->split_bytes = gk_gemm_split_bytes(s, m, n);
    pl->workspace_bytes = pl->split_bytes;
}

/* An e4m3 operand [rows][k] with stride ld, as TMA reads it. */
static cudaError_t gk_fp8_check_operand(const char *fn, const char *arg, const char *ld_arg, const void *x, int64_t ld,
                                        int64_t rows, int64_t k, gk_gemm_span *span)
{
    GK_TRY(gk_check_ptr(fn, arg, x));
    if (!gk_is_aligned(x, 16))
        return gk__fail(cudaErrorInvalidValue, fn, "%s is not 16-byte aligned (TMA reads its rows)", arg);
    if (ld < k) return gk__fail(cudaErrorInvalidValue, fn, "%s = %lld is smaller than k = %lld", ld_arg, (long long)ld, (long long)k);
    if (ld % 16)
        return gk__fail(cudaErrorInvalidValue, fn, "%s = %lld is not a multiple of 16 (TMA reads rows of 16-byte multiples)",
                        ld_arg, (long long)ld);
    GK_TRY(gk_check_fits_i32(fn, ld_arg, ld));
    span->name = arg;
    span->p = x;
    return gk_check_span(fn, arg, rows, k, ld, 1, &span->bytes);
}

/* An operand's scales: mode, pointer (NULL only for GK_FP8_TENSOR), span of floats. */
static cudaError_t gk_fp8_check_scales(const char *fn, const char *arg, const float *s, int mode, int64_t count,
                                       gk_gemm_span *span)
{
    if (mode != GK_FP8_TENSOR && mode != GK_FP8_ROW && mode != GK_FP8_BLOCK)
        return gk__fail(cudaErrorInvalidValue, fn, "%s mode %d is not GK_FP8_TENSOR, GK_FP8_ROW or GK_FP8_BLOCK", arg, mode);
    if (mode != GK_FP8_TENSOR) GK_TRY(gk_check_ptr(fn, arg, s));
    if (s) GK_TRY(gk_check_elem_aligned(fn, arg, s, 4));
    span->name = arg;
    span->p = s;
    span->bytes = s ? count * 4 : 0;
    return cudaSuccess;
}

static cudaError_t gk_fp8_run_checked(const char *fn, int config, int splits, void *d, int d_dtype, int64_t ldd,
                                      const gk_e4m3 *a, int64_t lda, const float *scale_a, int scale_a_mode,
                                      const gk_e4m3 *b, int64_t ldb, const float *scale_b, int scale_b_mode,
                                      const void *c, int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k,
                                      float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                      cudaStream_t stream)
{
    if (d_dtype != GK_BF16 && d_dtype != GK_F16 && d_dtype != GK_F32)
        return gk__fail(cudaErrorInvalidValue, fn, "d_dtype %d is not GK_BF16, GK_F16 or GK_F32", d_dtype);
    if (act < GK_ACT_NONE || act > GK_ACT_SILU) return gk__fail(cudaErrorInvalidValue, fn, "act %d is not a gk_act", act);
    if (config < -1 || config >= GK_FP8_NCONFIG)
        return gk__fail(cudaErrorInvalidValue, fn, "config %d is not -1 or 0..%d", config, GK_FP8_NCONFIG - 1);
    if (splits < 0) return gk__fail(cudaErrorInvalidValue, fn, "splits = %d is negative", splits);
    GK_TRY(gk_check_mnk(fn, m, n, k));
    const int block = scale_a_mode == GK_FP8_BLOCK;
    if ((scale_a_mode == GK_FP8_BLOCK) != (scale_b_mode == GK_FP8_BLOCK))
        return gk__fail(cudaErrorInvalidValue, fn, "block scales go on both operands or neither (scale_a_mode %d, "
                        "scale_b_mode %d)", scale_a_mode, scale_b_mode);
    if (config >= 0 && gk_fp8_config_table[config]->block != block)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s takes %s scales", gk_fp8_config_table[config]->name,
                        block ? "tensor or row" : "block");
    if (m == 0 || n == 0) return cudaSuccess; /* nothing to write; pointers not inspected */
    const int64_t kb = gk_ceil_div(k, 128);
    gk_gemm_span in[4] = {{"a", a, 0}, {"b", b, 0}, {"scale_a", scale_a, 0}, {"scale_b", scale_b, 0}};
    GK_TRY(gk_fp8_check_scales(fn, "scale_a", scale_a, scale_a_mode,
                               block ? m * kb : scale_a_mode == GK_FP8_ROW ? m : 1, &in[2]));
    GK_TRY(gk_fp8_check_scales(fn, "scale_b", scale_b, scale_b_mode,
                               block ? gk_ceil_div(n, 128) * kb : scale_b_mode == GK_FP8_ROW ? n : 1, &in[3]));
    if (k > 0) {
        GK_TRY(gk_fp8_check_operand(fn, "a", "lda", a, lda, m, k, &in[0]));
        GK_TRY(gk_fp8_check_operand(fn, "b", "ldb", b, ldb, n, k, &in[1]));
    }
    GK_TRY(gk_gemm_check_outputs(fn, d, d_dtype, ldd, c, ldc, bias, m, n, beta, in, 4, workspace, &workspace_bytes));

    gk_gemm_args p = gk_gemm_args_of(d, d_dtype, ldd, c, ldc, bias, m, n, k, alpha, beta, act);
    if (k == 0) return gk_gemm_no_k(fn, p, stream);
    if (block) {
        p.block_a = scale_a;
        p.block_b = scale_b;
        p.kb = (int)kb;
    } else {
        p.scale_a = scale_a;
        p.scale_b = scale_b;
        p.scale_a_step = scale_a_mode == GK_FP8_ROW;
        p.scale_b_step = scale_b_mode == GK_FP8_ROW;
    }
    const int wg = gk_fp8_wg_ready();
    int mma, sms;
    GK_TRY(gk_fp8_mma_ready(&mma));
    GK_TRY(gk_sm_count(&sms));
    if (config >= 0 && gk_fp8_config_table[config]->wgmma && !wg)
        return gk__fail(cudaErrorNotSupported, fn,
                        "configuration %s needs a build with sm_90a code running on a compute capability 9.0 GPU",
                        gk_fp8_config_table[config]->name);
    if (config >= 0 && !gk_fp8_config_table[config]->wgmma && !mma)
        return gk__fail(cudaErrorNotSupported, fn, "configuration %s needs compute capability 8.9 or newer (e4m3 mma.sync)",
                        gk_fp8_config_table[config]->name);
    gk_gemm_plan pl;
    gk_fp8_plan_impl(m, n, k, block, sms, wg, &pl);
    if (config < 0 && pl.config < 0)
        return gk__fail(cudaErrorNotSupported, fn, "%s",
                        block ? "block scales run on the sm_90a wgmma kernels only: build with -gencode "
                                "arch=compute_90a,code=sm_90a and run on a compute capability 9.0 GPU"
                        : mma ? "no FP8 GEMM configuration in this build"
                              : "the FP8 GEMM needs compute capability 8.9 or newer (e4m3 mma.sync), or 9.0 with "
                                "sm_90a code (wgmma)");
    if (config < 0) config = pl.config;
    const gk_fp8_config *cfg = gk_fp8_config_table[config];
    if (!cfg->wgmma && k % 2)
        return gk__fail(cudaErrorInvalidValue, fn,
                        "k = %lld is odd: the mma.sync kernels (%s; no sm_90a wgmma here) read e4m3 in pairs",
                        (long long)k, cfg->name);
    if (splits == 0) splits = config == pl.config ? pl.splits : 1;
    if (workspace_bytes < gk_gemm_split_bytes(splits, m, n)) splits = 1;
    /* the mma.sync kernels see pairs of e4m3 as 16-bit values: K, the strides and a k-tile halved */
    const int pairs = !cfg->wgmma, kv = (int)(pairs ? k / 2 : k);
    p.k = kv;
    p.k_per_split = (int)gk_round_up(gk_ceil_div(kv, splits), pairs ? cfg->bk / 2 : cfg->bk);
    splits = (int)gk_ceil_div(kv, p.k_per_split); /* no empty split */
    p.partial = splits > 1 ? (float *)workspace : NULL;
    p.a = a;
    p.b = b;
    p.lda = pairs ? lda / 2 : lda;
    p.ldb = pairs ? ldb / 2 : ldb;
    p.tiles_m = (int)gk_ceil_div(m, cfg->bm);
    p.tiles_n = (int)gk_ceil_div(n, cfg->bn);

    const void *kern = gk_fp8_kernel_table[config];
    static unsigned attr_set[GK_FP8_NCONFIG];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[config]));
    const dim3 grid = gk_gemm_grid(&p, splits, cfg->persistent, sms);
    if (cfg->wgmma) {
#if GK_GEMM_SM90
        CUtensorMap ma, mb, ma_last, mb_last;
        GK_TRY(gk_gemm_tensor_maps(fn, &ma, &ma_last, a, GK_E4M3, m, k, lda, 1, cfg->bm));
        GK_TRY(gk_gemm_tensor_maps(fn, &mb, &mb_last, b, GK_E4M3, n, k, ldb, 1, cfg->bn));
        ((gk_fp8_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p, ma, mb, ma_last, mb_last);
#endif
    } else {
        ((gk_gemm_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p);
    }
    GK_TRY(gk_check_launch(fn));
    if (splits > 1) GK_TRY(gk_gemm_reduce_launch(fn, p, splits, stream));
    return cudaSuccess;
}

static int64_t gk_fp8_scale_count_of(int mode, int block_rows, int64_t rows, int64_t cols)
{
    if (mode == GK_FP8_TENSOR) return 1;
    if (mode == GK_FP8_ROW) return rows;
    return gk_ceil_div(rows, block_rows) * gk_ceil_div(cols, 128);
}

static cudaError_t gk_fp8_quantize_checked(const char *fn, gk_e4m3 *out, int64_t ldo, float *scales, int mode,
                                           int block_rows, const void *x, int x_dtype, int64_t ldx, int trans,
                                           int64_t rows, int64_t cols, cudaStream_t stream)
{
    if (mode != GK_FP8_TENSOR && mode != GK_FP8_ROW && mode != GK_FP8_BLOCK)
        return gk__fail(cudaErrorInvalidValue, fn, "scale_mode %d is not GK_FP8_TENSOR, GK_FP8_ROW or GK_FP8_BLOCK", mode);
    if (mode == GK_FP8_BLOCK && block_rows != 1 && block_rows != 128)
        return gk__fail(cudaErrorInvalidValue, fn, "block_rows = %d is not 1 or 128", block_rows);
    if (mode != GK_FP8_BLOCK) block_rows = 1;
    if (x_dtype != GK_F32 && x_dtype != GK_BF16 && x_dtype != GK_F16)
        return gk__fail(cudaErrorInvalidValue, fn, "x_dtype %d is not GK_F32, GK_BF16 or GK_F16", x_dtype);
    if (trans != 0 && trans != 1) return gk__fail(cudaErrorInvalidValue, fn, "trans = %d is not 0 or 1", trans);
    GK_TRY(gk_check_nonneg(fn, "rows", rows));
    GK_TRY(gk_check_nonneg(fn, "cols", cols));
    GK_TRY(gk_check_fits_i32(fn, "rows", rows));
    GK_TRY(gk_check_fits_i32(fn, "cols", cols));
    if (rows == 0 || cols == 0) return cudaSuccess;
    GK_TRY(gk_check_ptr(fn, "out", out));
    GK_TRY(gk_check_ptr(fn, "scales", scales));
    GK_TRY(gk_check_ptr(fn, "x", x));
    GK_TRY(gk_check_elem_aligned(fn, "scales", scales, 4));
    const int es = gk_dtype_size(x_dtype);
    GK_TRY(gk_check_elem_aligned(fn, "x", x, es));
    const int64_t xr = trans ? cols : rows, xc = trans ? rows : cols;
    if (ldo < cols) return gk__fail(cudaErrorInvalidValue, fn, "ldo = %lld is smaller than cols = %lld", (long long)ldo, (long long)cols);
    if (ldx < xc) return gk__fail(cudaErrorInvalidValue, fn, "ldx = %lld is smaller than x's row (%lld)", (long long)ldx, (long long)xc);
    GK_TRY(gk_check_fits_i32(fn, "ldo", ldo));
    GK_TRY(gk_check_fits_i32(fn, "ldx", ldx));
    int64_t out_bytes = 0, x_bytes = 0;
    GK_TRY(gk_check_span(fn, "out", rows, cols, ldo, 1, &out_bytes));
    GK_TRY(gk_check_span(fn, "x", xr, xc, ldx, es, &x_bytes));
    const int64_t count = gk_fp8_scale_count_of(mode, block_rows, rows, cols);
    GK_TRY(gk_check_disjoint(fn, "out", out, out_bytes, "x", x, x_bytes));
    GK_TRY(gk_check_disjoint(fn, "scales", scales, count * 4, "x", x, x_bytes));
    GK_TRY(gk_check_disjoint(fn, "scales", scales, count * 4, "out", out, out_bytes));

    gk_fp8_quant_args q;
    q.out = out;
    q.cells = scales;
    q.x = x;
    q.ldo = ldo;
    q.ldx = ldx;
    q.rows = (int)rows;
    q.cols = (int)cols;
    q.chunks = (int)gk_ceil_div(cols, 8);
    q.x_dtype = x_dtype;
    q.trans = trans;
    q.mode = mode;
    q.block_rows = block_rows;
    q.kbs = (int)gk_ceil_div(cols, 128);
    int blocks, sblocks;
    GK_TRY(gk_grid_size(rows * q.chunks, 256, 8, &blocks));
    GK_TRY(gk_grid_size(count, 256, 8, &sblocks));
    GK_TRY(cudaMemsetAsync(scales, 0, (size_t)count * 4, stream));
    gk_fp8_amax_kernel<<<blocks, 256, 0, stream>>>(q);
    GK_TRY(gk_check_launch(fn));
    gk_fp8_code_kernel<<<blocks, 256, 0, stream>>>(q);
    GK_TRY(gk_check_launch(fn));
    gk_fp8_scale_kernel<<<sblocks, 256, 0, stream>>>(scales, count);
    return gk_check_launch(fn);
}

GK_EXTERN_C_BEGIN

GK_IMPL int gk_fp8_config_count(void) { return GK_FP8_NCONFIG; }

GK_IMPL gk_fp8_config gk_fp8_config_info(int config)
{
    gk_fp8_config none = {0};
    if (config < 0 || config >= GK_FP8_NCONFIG) return none;
    return *gk_fp8_config_table[config];
}

GK_IMPL gk_gemm_plan gk_fp8_plan_for(int64_t m, int64_t n, int64_t k, int block)
{
    gk_gemm_plan pl = {0};
    int sms = 132;
    if (gk_sm_count(&sms) != cudaSuccess) sms = 132;
    if (m <= 0 || n <= 0 || k <= 0) return pl;
    gk_fp8_plan_impl(m, n, k, block, sms, gk_fp8_wg_ready(), &pl);
    return pl;
}

GK_IMPL size_t gk_fp8_workspace_bytes(int64_t m, int64_t n, int64_t k, int block)
{
    return gk_fp8_plan_for(m, n, k, block).workspace_bytes;
}

GK_IMPL int64_t gk_fp8_scale_count(int scale_mode, int block_rows, int64_t rows, int64_t cols)
{
    if (rows <= 0 || cols <= 0 || scale_mode < GK_FP8_TENSOR || scale_mode > GK_FP8_BLOCK) return 0;
    if (scale_mode == GK_FP8_BLOCK && block_rows != 1 && block_rows != 128) return 0;
    return gk_fp8_scale_count_of(scale_mode, block_rows, rows, cols);
}

GK_IMPL cudaError_t gk_fp8_gemm_ex(int config, int splits, void *d, int d_dtype, int64_t ldd, const gk_e4m3 *a,
                                   int64_t lda, const float *scale_a, int scale_a_mode, const gk_e4m3 *b, int64_t ldb,
                                   const float *scale_b, int scale_b_mode, const void *c, int64_t ldc,
                                   const float *bias, int64_t m, int64_t n, int64_t k, float alpha, float beta,
                                   int act, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_fp8_gemm_ex",
                   gk_fp8_run_checked("gk_fp8_gemm_ex", config, splits, d, d_dtype, ldd, a, lda, scale_a, scale_a_mode, b,
                                      ldb, scale_b, scale_b_mode, c, ldc, bias, m, n, k, alpha, beta, act, workspace,
                                      workspace_bytes, stream));
}

GK_IMPL cudaError_t gk_fp8_gemm(void *d, int d_dtype, int64_t ldd, const gk_e4m3 *a, int64_t lda, const float *scale_a,
                                int scale_a_mode, const gk_e4m3 *b, int64_t ldb, const float *scale_b, int scale_b_mode,
                                const void *c, int64_t ldc, const float *bias, int64_t m, int64_t n, int64_t k,
                                float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_fp8_gemm", gk_fp8_run_checked("gk_fp8_gemm", -1, 0, d, d_dtype, ldd, a, lda, scale_a, scale_a_mode,
                                                     b, ldb, scale_b, scale_b_mode, c, ldc, bias, m, n, k, alpha, beta,
                                                     act, workspace, workspace_bytes, stream));
}

GK_IMPL cudaError_t gk_fp8_quantize(gk_e4m3 *out, int64_t ldo, float *scales, int scale_mode, int block_rows,
                                    const void *x, int x_dtype, int64_t ldx, int trans, int64_t rows, int64_t cols,
                                    cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_fp8_quantize", gk_fp8_quantize_checked("gk_fp8_quantize", out, ldo, scales, scale_mode, block_rows,
                                                              x, x_dtype, ldx, trans, rows, cols, stream));
}

GK_EXTERN_C_END

#endif /* fp8 implementation */
