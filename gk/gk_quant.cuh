/* gk_quant.cuh - gk quantized-weight GEMM v0.1: W4A16, bf16 or f16 activations times int4
   weights with group scales (symmetric, int4 zero points or float zero points), the weight
   formats real checkpoints use (GPTQ, AWQ) converted once into one prepacked layout, and a
   kernel that streams that layout with one 16-byte load a lane, dequantizes in registers by bit
   tricks (no per-value cvt, no shared-memory round trip) and feeds mma.sync directly, or on
   sm_90a, past decode sizes, wgmma's register A operand. The FP8 GEMM (e4m3 weights and
   activations) is gk_fp8.cuh.

   Needs gk_core.cuh, gk_mma.cuh and gk_gemm.cuh (with gk_gemm_sm90.cuh; same folder: the
   epilogue, the split-K sum and, for large M, the bf16 / f16 GEMM). In ONE .cu file:
       #define GK_IMPLEMENTATION      (or GK_QUANT_IMPLEMENTATION with GK_GEMM_IMPLEMENTATION and
       #include "gk_quant.cuh"         GK_CORE_IMPLEMENTATION where no other file defines them)

   THE MATH
     D[M, N] = act(alpha X[M, K] W^T + beta C + bias), W[n, k] = (u - z) s: u the 4-bit code of
     (n, k) read as unsigned (0..15), s the scale of (group, n), z its zero point; group g covers
     k in [g G, (g + 1) G), G = 32, 64, 128 or K (one scale an output channel).
       GK_W4_SYMMETRIC    z = 8: the code is the signed int4 q = u - 8, W = q s
       GK_W4_ZEROS_INT4   z is a 4-bit code (0..15) of each (group, n)              (GPTQ, AWQ)
       GK_W4_ZEROS_FLOAT  z is a bf16 / f16 value of each (group, n) (HQQ style): W = u s - z s
     fp32 accumulation. With 4-bit zero points (or symmetric) the mma.sync kernels multiply exact
     integer codes (u - z) with X and apply s to each group's fp32 sum; with float zero points they
     form u s - z s in the activations' dtype (one rounding a weight), as Marlin does. The wgmma
     kernels and the dequantize + GEMM path round each weight once to the dtype in every mode:
     (u - z) s (u s + (-z s) with float zero points).

   CANONICAL FORM (what gk_w4_prepack reads; strides are the packed widths)
     q       gk_int4x2 [N][K / 2], k even in the low nibble. GK_W4_SYMMETRIC: signed nibbles
             (gk_int4x2's reading, -8..7); the zero-point modes: unsigned codes 0..15.
     scales  [K / G][N], bf16, f16 or f32 (scale_dtype), converted to the activations' dtype
     zeros   GK_W4_ZEROS_INT4: gk_int4x2 [K / G][N / 2], unsigned codes, n even in the low
             nibble; GK_W4_ZEROS_FLOAT: [K / G][N] of scale_dtype; NULL when symmetric.
     GPTQ and AWQ checkpoints keep scales [K / G][N] too: pass them straight to the prepack.

   PREPACKED FORM (gk_w4_prepack's output; gk_w4_packed_bytes says its size)
     Codes in 16-row tiles (rows past N are zeros) and 64-k units: for tile r and unit u, 32 lanes
     of 16 bytes, lane 4 i + j holding the 32 codes of its mma.m16n8k16 A fragments (rows i and
     i + 8) for the unit's four k16 steps, one 32-bit word a step, nibbles (e, e + 4) the two
     values of fragment register e, so that a dequantization takes a pair in one mask. The MMA's
     k order inside a unit is permuted (a sum does not care): lane j's fragment columns 2j, 2j + 1,
     2j + 8, 2j + 9 of step s are the unit's k 32 (s / 2) + 8 j + 4 (s % 2) + 0..3, so steps 0-1
     hold k 0-31 and steps 2-3 k 32-63 (a group of 32 is two steps), and a lane's X fragments
     for the unit are 2 x 16 contiguous bytes of a row of X (two 16-byte loads a token).
     Then the scales, [tile][group][i][row i, row i + 8] in the activations' dtype, one 32-bit
     load a lane a group; then, for the zero-point modes, the same records of 128 + z (bf16) /
     1024 + z (f16) for 4-bit zero points, of -z s for float ones. A 4-bit code becomes a bf16 by
     one mask and OR: (w >> 4 e) & 0x000F000F | 0x43004300 is the pair 128 + u (0x64006400,
     1024 + u for f16); one fma.x2 subtracts 128 + z exactly.

   PUBLIC FUNCTIONS (T in bf16, f16: the activations' dtype)
     gk_w4_packed_bytes(n, k, group, zero_mode)     bytes of the prepacked form
     gk_w4_prepack(packed, dtype, q, scales, scale_dtype, zeros, n, k, group, zero_mode, stream)
         canonical -> prepacked, on the GPU (run once, at load time)
     gk_w4_from_gptq(q, zeros, qweight, qzeros, host_g_idx, n, k, group, zero_offset, stream)
         GPTQ int32 qweight [K / 8][N] (k 8 i + e in bits 4 e of row i) and qzeros [K / G][N / 8]
         (n 8 j + e in bits 4 e) to the canonical q and 4-bit zeros; zero = stored + zero_offset
         (1 for the GPTQ v1 checkpoints most tools write, which store z - 1; 0 for v2), modulo 16.
         qzeros NULL (and zeros NULL): symmetric, q written as signed nibbles (u - 8). host_g_idx
         (int32 [K] on the host, or NULL) must be the identity order k / G: act-order
         checkpoints are refused (reorder K of the weight and the activations first).
     gk_w4_from_awq(q, zeros, qweight, qzeros, n, k, group, stream)
         AWQ int32 qweight [K][N / 8] and qzeros [K / G][N / 8], nibble e of a word holding column
         8 j + {0, 2, 4, 6, 1, 3, 5, 7}[e], to the canonical q (unsigned) and 4-bit zeros.
     gk_w4_dequant(dst, lddst, w, stream)   the prepacked weight as a [N][K] matrix of w's dtype,
         W = (u - z) s in fp32 rounded once (float zero points: u s + (-z s), in fp32)
     gk_w4_gemm_T(d, d_dtype, ldd, x, ldx, w, c, ldc, bias, m, alpha, beta, act, workspace,
                  workspace_bytes, stream)
         the GEMM above; x [M][K] rows 16-byte aligned (ldx a multiple of 8); d, c [M][N] of
         d_dtype (GK_BF16, GK_F16, GK_F32) with gk_gemm's epilogue rules (c may be d; c is not
         read when beta == 0; bias fp32 [N] or NULL; act a gk_act). The workspace (NULL or
         256-byte aligned) holds the partials of pairs that warps share (summed in a fixed order:
         results are deterministic; without it warps take whole pairs) and, for large M, W
         dequantized for gk_gemm.
     gk_w4_plan_for(m, n, k, group, zero_mode, workspace_bytes)   the dispatcher's choice
     gk_w4_workspace_bytes(m, n, k)         the workspace the dispatcher would use (it asks the
                                            current device, as gk_w4_plan_for does); 0 with
                                            gk_failure_reason() set on an error (m <= 0 included)
     gk_w4_gemm_ex(config, warps, ...)      one configuration (-1: the dispatcher's; config
                                            gk_w4_config_count() is the dequantize + GEMM path;
                                            a lean one, config_info's lean 1, refuses M past its
                                            8 NT, other groups and float zero points) on a number
                                            of working warps (0: the dispatcher's), for tuning and
                                            tests
     gk_w4_config_count(), gk_w4_config_info(config)
     gk_w4_ledger(m, n, k, group, zero_mode, x_dtype, d_dtype, has_bias)
         FLOPs 2 M N K; bytes: the codes (N K / 2), the scale records (2 bytes a group and row,
         twice with zero points), X, bias and D once (m = 0: the weight's bytes alone).

   WEIGHT DESCRIPTOR
     gk_w4_weight {packed, n, k, group, zero_mode, dtype}: what the prepack was called with.

   HOW IT RUNS
     The work is a line of positions (16 RW weight rows, 8 NT tokens, 64 k), row group outermost,
     then token tile, then k, cut into one contiguous range for each working warp of a grid that
     fills the GPU once (so no tail of blocks, and the ranges differ by one position at most).
     A warp streams its range through its own cp.async ring of PF slots (PF - 1 units of weights
     and scale records in flight), X fragments (16-byte loads, L2-resident) a position ahead in
     registers; it waits on no other warp. Where a range starts or ends inside a (row group,
     token tile) pair, the warp stores its part as a partial; a second kernel, launched dependent
     (PDL), adds each pair's partials in warp order and applies the epilogue (deterministic).
     Warps that get whole pairs store through the epilogue directly. The MMA computes D^T (weight
     rows as the 16-row operand), so M = 1 uses 1 / 8 of each MMA instead of 1 / 16; outputs
     leave as pairs along N (a shuffle).
     The lean decode kernels (the last configurations; the dispatcher's for M <= 8 and M <= 16 with
     groups of 128, symmetric or with 4-bit zero points) keep that schedule with one row tile and
     one or two token tiles a position (all of M), ranges cut at whole groups. A warp's codes are
     then one contiguous stream: 16-byte loads into registers, two groups ahead, with no ring,
     cursor or shared memory. For bf16 the codes enter the MMA as 128 + u and a second MMA of the
     same X fragment by -(128 + z) removes the offset, so a pair of values costs one lop3 (and a
     shift) and no fma.x2.
     The wgmma kernels (sm_90a builds on compute capability 9.0; the dispatcher's for
     GK_W4_WGMMA_M < M < GK_W4_WG_DEQUANT_M with the workspace for them) keep the schedule with a
     block as the worker: 4 WGS row tiles (a consumer warpgroup each 64 rows) and T tokens a
     position. X is first copied into the workspace in the codes' k order and the 128-byte swizzle
     (gk_w4_stage_x); a producer warp copies each unit's codes and records (TMA) and X's unit (one
     bulk copy) into a ring of stages; the consumers dequantize their lanes' codes to (u - z) s in
     the dtype (one rounding a weight, as the dequantize + GEMM path) straight into the register A
     operand of wgmma.m64nTk16, X the shared-memory B.

   ARGUMENTS AND ERRORS
     m == 0 is a no-op. Refused before launch (cudaErrorInvalidValue, gk_failure_reason()
     names it): null pointers, n not a positive multiple of 8, k not a positive multiple of 64
     and of the group, a group other than 32, 64, 128 or k, an unknown zero mode or dtype, x
     rows not 16-byte aligned, a weight of another dtype than x, d overlapping x, the packed
     weight or bias, d partially overlapping c, sizes past 32-bit indexing, an act-order g_idx;
     for a wgmma configuration forced through gk_w4_gemm_ex, a workspace too small for X's staged
     copy (cudaErrorInvalidValue) or a build or device without sm_90a (cudaErrorNotSupported).
     A zero point of GK_W4_ZEROS_FLOAT must be finite; NaN or inf in a scale reaches only the
     outputs of its row n.

   CONFIGURATION MACROS
     GK_W4_DEQUANT_M (128)    from this M on, with workspace for it, the dispatcher dequantizes W
                              and runs gk_gemm (its wgmma kernels) instead of the fused kernel;
     GK_W4_WG_DEQUANT_M (1024) the same where the wgmma kernels run
     GK_W4_WGMMA_M (16)       past this M (below GK_W4_WG_DEQUANT_M), where the wgmma kernels run and
                              the workspace holds X's staged copy, the dispatcher takes them
     GK_W4_CONFIGS(X), GK_W4_LEAN_CONFIGS(X), GK_W4_WG_CONFIGS(X)
                              the configurations compiled (a sweep may add some)

   GENERATOR
     GK_DEFINE_W4_LEAN(name, dt, NT, WARPS, P, MINB) writes the lean decode kernel for M <= 8 NT (NT
     1 or 2 token tiles, P groups of 128 in flight a warp): name_s128, name_z128 and its
     gk_w4_config (lean 1, prefetch 2 P units).
     GK_DEFINE_W4_WGMMA(name, dt, T, WGS, STAGES) writes the wgmma kernel of 64 WGS weight rows and
     T tokens a position (wgmma n = T), STAGES stages: name_sym, name_zint, name_zflt and its
     gk_w4_config (wgmma 1).
     GK_DEFINE_W4(name, dt, RW, NT, WARPS, PF, MINB) writes the fused kernel of 16 RW x 8 NT
     positions (weight rows x tokens), WARPS independent warps a block, a PF-slot ring a warp,
     registers for MINB blocks an SM: name_int (symmetric and 4-bit zero points, any group),
     name_flt (float zero points), name_s128 and name_z128 (groups of 128, symmetric or with 4-bit
     zero points: the group and the zero mode compiled in), and its gk_w4_config.

   MEASURED   gk_bench/RESULTS.md, "Quantized GEMM".

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_quant.cuh"
       // GPTQ 4-bit, group 128, v1 zeros, fp16 scales; a Linear of N = 11008, K = 4096, bf16 x
       gk_w4_from_gptq(q, z, qweight, qzeros, NULL, 11008, 4096, 128, 1, stream);
       gk_w4_prepack(packed, GK_BF16, q, gptq_scales, GK_F16, z, 11008, 4096, 128, GK_W4_ZEROS_INT4, stream);
       gk_w4_weight w = {packed, 11008, 4096, 128, GK_W4_ZEROS_INT4, GK_BF16};
       cudaError_t e = gk_w4_gemm_bf16(y, GK_BF16, 11008, x, 4096, &w, NULL, 0, NULL, tokens, 1.0f,
                                       0.0f, GK_ACT_NONE, ws, ws_bytes, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"
#include "gk_mma.cuh"
#include "gk_gemm.cuh"

#ifndef GK_QUANT_CUH
#define GK_QUANT_CUH

/* H200, N 28672, K 8192: at M = 128 the fused kernel takes 611 us, dequantizing 186 us and the
   bf16 GEMM ~130 (it is bound by the bf16 weight's bytes); at M = 64 they are even (314 / ~311) */
#ifndef GK_W4_DEQUANT_M
#define GK_W4_DEQUANT_M 128
#endif
/* past this M, where they run, the dispatcher takes the wgmma kernels, and dequantizes W for gk_gemm
   only from GK_W4_WG_DEQUANT_M on (H200, M = 16, 28672 x 8192: the lean kernel 67 us, wgmma 79; M
   = 128: wgmma 145 us, dequantize + GEMM 319; M = 256: 268 against ~320; M = 4096: 6582 against
   2821 before the wgmma kernels' warp index went through a shuffle; since, on an H100, M = 512: the
   w128 kernel 489-496 us against 558-569, and, twice its work, even at M = 1024 by estimate) */
#ifndef GK_W4_WGMMA_M
#define GK_W4_WGMMA_M 16
#endif
#ifndef GK_W4_WG_DEQUANT_M
#define GK_W4_WG_DEQUANT_M 1024
#endif

typedef enum gk_w4_zeros { GK_W4_SYMMETRIC = 0, GK_W4_ZEROS_INT4 = 1, GK_W4_ZEROS_FLOAT = 2 } gk_w4_zeros;

/* A prepacked int4 weight: the arguments gk_w4_prepack was called with. */
typedef struct gk_w4_weight {
    const void *packed;
    int64_t n, k;
    int group;     /* 32, 64, 128 or k */
    int zero_mode; /* gk_w4_zeros */
    int dtype;     /* GK_BF16 or GK_F16: the activations' dtype, that of the prepacked scales */
} gk_w4_weight;

/* The dispatcher's choice: a fused configuration and its schedule, or the dequantize + GEMM
   path; the workspace bytes it uses. */
typedef struct gk_w4_plan {
    int config;  /* a fused configuration, or gk_w4_config_count(): dequantize + GEMM */
    int warps;   /* the fused kernel's working warps */
    int slots;   /* partials a (row group, token tile) pair may have: 1 when warps store whole pairs */
    int dequant; /* 1: dequantize + GEMM */
    size_t workspace_bytes;
} gk_w4_plan;

typedef struct gk_w4_config {
    const char *name;
    int row_tiles;   /* RW: 16-row weight tiles a position */
    int token_tiles; /* NT: 8-token tiles a position */
    int warps;       /* independent warps a block */
    int prefetch;    /* PF: ring slots a warp (PF - 1 units of weights in flight) */
    int min_blocks;  /* blocks an SM the registers are budgeted for */
    int threads;
    int smem_bytes;  /* the warps' rings, PF RW 1 KB each */
    int lean;        /* 1: a lean decode kernel (M <= 8 NT, groups of 128, no float zero points):
                        PF units in flight in registers, no ring */
    int wgmma;       /* 1: the wgmma kernel (sm_90a; RW row tiles, a consumer warpgroup each 4, 8 NT
                        tokens a tile, a block a worker, PF stages); needs X's staged copy in the
                        workspace */
} gk_w4_config;

GK_EXTERN_C_BEGIN
GK_DECL size_t gk_w4_packed_bytes(int64_t n, int64_t k, int group, int zero_mode);
GK_DECL cudaError_t gk_w4_prepack(void *packed, int dtype, const gk_int4x2 *q, const void *scales, int scale_dtype,
                                  const void *zeros, int64_t n, int64_t k, int group, int zero_mode, cudaStream_t stream);
GK_DECL cudaError_t gk_w4_from_gptq(gk_int4x2 *q, gk_int4x2 *zeros, const int32_t *qweight, const int32_t *qzeros,
                                    const int32_t *host_g_idx, int64_t n, int64_t k, int group, int zero_offset,
                                    cudaStream_t stream);
GK_DECL cudaError_t gk_w4_from_awq(gk_int4x2 *q, gk_int4x2 *zeros, const int32_t *qweight, const int32_t *qzeros,
                                   int64_t n, int64_t k, int group, cudaStream_t stream);
GK_DECL cudaError_t gk_w4_dequant(void *dst, int64_t lddst, const gk_w4_weight *w, cudaStream_t stream);
GK_DECL cudaError_t gk_w4_gemm_bf16(void *d, int d_dtype, int64_t ldd, const gk_bf16 *x, int64_t ldx,
                                    const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias, int64_t m,
                                    float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                    cudaStream_t stream);
GK_DECL cudaError_t gk_w4_gemm_f16(void *d, int d_dtype, int64_t ldd, const gk_f16 *x, int64_t ldx,
                                   const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias, int64_t m,
                                   float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                   cudaStream_t stream);
GK_DECL cudaError_t gk_w4_gemm_ex(int config, int warps, void *d, int d_dtype, int64_t ldd, const void *x,
                                  int64_t ldx, const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias,
                                  int64_t m, float alpha, float beta, int act, void *workspace,
                                  size_t workspace_bytes, cudaStream_t stream);
GK_DECL gk_w4_plan gk_w4_plan_for(int64_t m, int64_t n, int64_t k, int group, int zero_mode,
                                  size_t workspace_bytes);
GK_DECL size_t gk_w4_workspace_bytes(int64_t m, int64_t n, int64_t k);
GK_DECL int gk_w4_config_count(void);
GK_DECL gk_w4_config gk_w4_config_info(int config); /* name NULL for an unknown index */
GK_DECL gk_ledger gk_w4_ledger(int64_t m, int64_t n, int64_t k, int group, int zero_mode, int x_dtype, int d_dtype,
                               int has_bias);
GK_EXTERN_C_END

/* k values of a unit: one 16-byte load a lane covers a 16-row tile's four k16 steps */
#define GK_W4_UNIT 64

/* The prepacked form's parts: codes, scale records, zero records (each 256-byte aligned). */
GK_HD int64_t gk_w4_tiles(int64_t n) { return (n + 15) / 16; }
GK_HD int64_t gk_w4_codes_bytes(int64_t n, int64_t k) { return gk_w4_tiles(n) * 16 * (k / 2); }
GK_HD int64_t gk_w4_records_bytes(int64_t n, int64_t k, int group)
{
    return (gk_w4_tiles(n) * (k / group) * 16 * 2 + 255) / 256 * 256;
}

/* The nibble of an AWQ int32 that holds column 8 j + c: AWQ packs columns {0, 2, 4, 6, 1, 3, 5, 7}
   in nibbles 0..7. */
GK_HD int gk_w4_awq_nibble(int c) { return (c >> 1) | ((c & 1) << 2); }

/* Where code (row, kk) of a tile's unit sits: lane, 32-bit word (the k16 step) and nibble; and
   the MMA column (0..15) of its step it is multiplied as. The host tests check it against the
   mma.m16n8k16 A-fragment table (gk_mma_a_pos). */
GK_HD void gk_w4_code_pos(int row, int kk, int *lane, int *word, int *nibble, int *mma_col)
{
    const int half = kk / 32, j = (kk % 32) / 8, s = 2 * half + (kk % 8) / 4, h = (kk % 4) / 2, hi = kk % 2;
    const int reg = (row >= 8) + 2 * h; /* a0: (i, 2j), a1: (i + 8, 2j), a2: (i, 2j + 8), a3: (i + 8, 2j + 8) */
    *lane = (row % 8) * 4 + j;
    *word = s;
    *nibble = reg + 4 * hi;
    *mma_col = 2 * j + 8 * h + hi;
}

/* Its inverse, which the prepack and the dequantization use: the tile row and unit k of nibble
   `nibble` of word `word` of lane `lane`. */
GK_HD void gk_w4_code_src(int lane, int word, int nibble, int *row, int *kk)
{
    const int e = nibble & 3, hi = nibble >> 2;
    *row = lane / 4 + 8 * (e & 1);
    *kk = 32 * (word / 2) + 8 * (lane % 4) + 4 * (word % 2) + 2 * (e >> 1) + hi;
}

/* The work of the fused kernel: positions x = (row group x token tiles + token tile) x units +
   unit, cut into one contiguous range a warp, [start(w), start(w + 1)), at multiples of chunk.
   A (row group, token tile) pair is summed by the warps whose ranges meet it, each storing its
   segment's partial under slot w - (the pair's first warp). */
GK_HD int64_t gk_w4_start(int64_t total, int64_t chunk, int64_t warps, int64_t w)
{
    return (total / chunk) * w / warps * chunk;
}

GK_HD int64_t gk_w4_warp_of(int64_t x, int64_t total, int64_t chunk, int64_t warps)
{
    /* start(w) <= x  <=>  T w / W < q + 1 (T = total / chunk, q = x / chunk): the last such w is
       ((q + 1) W - 1) / T. In double while (q + 1) W < 2^52: a quotient of such integers rounds to
       within 2^-48 of itself, never across an integer, so floor() is exact and the GPU does no
       64-bit division (the partials' sum takes this twice an output) */
    const double q = floor((double)x / (double)chunk), t = floor((double)total / (double)chunk);
    const double num = (q + 1.0) * (double)warps - 1.0;
    const int64_t w = num < 4503599627370496.0 ? (int64_t)floor(num / t) : ((x / chunk + 1) * warps - 1) / (total / chunk);
    return w < warps - 1 ? w : warps - 1;
}

#ifdef __CUDACC__

/* ---------------------------------------------------------------- device building blocks */

typedef struct gk_w4_args {
    gk_gemm_args g; /* the epilogue: d, c, bias, partial, ldc, ldd, m, n, d_dtype, act, alpha, beta; a = x, lda = ldx */
    const uint4 *codes;
    const unsigned *scales, *zeros; /* 32-bit records: (row i, row i + 8) of a tile and group */
    int tiles, units, groups;
    int group_log2;  /* 5, 6, 7; 0: one group (G = K) */
    int token_tiles; /* blocks of 8 NT tokens */
    int warps;       /* the grid's working warps */
    int chunk;       /* ranges cut at multiples of it: 1 (partials where g.partial is set) or units (whole pairs) */
    int64_t total;   /* row groups x token tiles x units */
} gk_w4_args;

/* Pair (e, e + 4) of the nibbles of w as two values 128 + u (bf16) or 1024 + u (f16). */
GK_DEV unsigned gk_w4_pair(unsigned w, int e, unsigned magic)
{
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(w >> (4 * e)), "n"(0x000F000F), "r"(magic)); /* (a & b) | c */
    return d;
}

/* The constant pairs of the dequantization in dt: the base OR-ed onto a code (128 + u in bf16, 1024 +
   u in f16), 1, -base, and -(base + 8) (the symmetric zero point). */
GK_DEV unsigned gk_w4_magic(int dt) { return dt == GK_BF16 ? 0x43004300u : 0x64006400u; }
GK_DEV unsigned gk_w4_one(int dt) { return dt == GK_BF16 ? 0x3F803F80u : 0x3C003C00u; }
GK_DEV unsigned gk_w4_neg_base(int dt) { return dt == GK_BF16 ? 0xC300C300u : 0xE400E400u; }
GK_DEV unsigned gk_w4_neg_sym(int dt) { return dt == GK_BF16 ? 0xC308C308u : 0xE408E408u; }

GK_DEV unsigned gk_w4_fma2(unsigned a, unsigned b, unsigned c, int dt)
{
    unsigned d;
    if (dt == GK_BF16) asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    else asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

GK_DEV float gk_w4_half_f32(unsigned h, int dt)
{
    return dt == GK_BF16 ? __uint_as_float(h << 16) : __half2float(__ushort_as_half((unsigned short)h));
}

/* (lo, lo) and (hi, hi) of a record word */
GK_DEV unsigned gk_w4_dup_lo(unsigned w) { return __byte_perm(w, 0, 0x1010); }
GK_DEV unsigned gk_w4_dup_hi(unsigned w) { return __byte_perm(w, 0, 0x3232); }

/* Where a warp's issue side stands: position (rg, tt, u), this lane's codes at (rg's first row
   tile, u) and its scale and zero records of rg's first row tile, the row tiles of rg inside N.
   Carried from position to position; rebuilt only when the pair changes. */
typedef struct gk_w4_cursor {
    int rg, tt, u, tiles_in;
    const uint4 *code;
    const unsigned *scale, *zero;
} gk_w4_cursor;

GK_DEV void gk_w4_cursor_at(const gk_w4_args *p, gk_w4_cursor *c, int rg, int tt, int u, int rw, int lane)
{
    const int rt = rg * rw, ri = rt * p->groups * 8 + (lane >> 2);
    c->rg = rg;
    c->tt = tt;
    c->u = u;
    c->tiles_in = min(rw, p->tiles - rt);
    c->code = p->codes + ((rt * p->units + u) * 32 + lane);
    c->scale = p->scales + ri;
    c->zero = p->zeros ? p->zeros + ri : NULL;
}

GK_DEV void gk_w4_cursor_next(const gk_w4_args *p, gk_w4_cursor *c, int rw, int lane)
{
    if (++c->u < p->units) {
        c->code += 32;
        return;
    }
    const int tt = c->tt + 1 < p->token_tiles ? c->tt + 1 : 0;
    gk_w4_cursor_at(p, c, tt ? c->rg : c->rg + 1, tt, 0, rw, lane);
}

/* The cursor's unit into a ring slot, by cp.async: a lane copies its own 16 bytes of codes a row
   tile and the scale (and zero) records of the unit's first and last group (one group unless
   G = 32), and reads back only what it copied, so no lane waits on another. Slot: per tile, 32
   lanes x 16 bytes of codes, then 32 x 16 of records (s first, s last, z first, z last): lanes 16
   bytes apart, conflict-free. Row tiles past N are zero-filled. */
GK_DEV void gk_w4_issue(const gk_w4_args *p, const gk_w4_cursor *c, char *slot, int rw, int lane, int variant)
{
    const int g128 = variant >= 2, glog2 = g128 ? 7 : p->group_log2;
    const int g8 = (glog2 ? (c->u * GK_W4_UNIT) >> glog2 : 0) * 8;
    const int two = !g128 && p->group_log2 == 5;
#pragma unroll
    for (int r = 0; r < rw; r++) {
        const int in = r < c->tiles_in, cr = in ? r : 0;
        char *code = slot + r * 1024 + lane * 16, *rec = code + 512;
        gk_cp_async_16(code, c->code + cr * p->units * 32, in ? 16 : 0);
        const unsigned *sp = c->scale + cr * p->groups * 8 + g8;
        gk_cp_async_4(rec, sp, in ? 4 : 0);
        if (two) gk_cp_async_4(rec + 4, sp + 8, in ? 4 : 0);
        if (variant == 3 || (variant < 2 && c->zero)) {
            const unsigned *zp = c->zero + cr * p->groups * 8 + g8;
            gk_cp_async_4(rec + 8, zp, in ? 4 : 0);
            if (two) gk_cp_async_4(rec + 12, zp + 8, in ? 4 : 0);
        }
    }
}

/* This lane's rows of X for token tile tt: token tt 8 nt + 8 t + lane / 4's row, at k 8 (lane % 4),
   or NULL past M. */
GK_DEV void gk_w4_x_rows(const gk_w4_args *p, int tt, int nt, int lane, const char **xrow)
{
#pragma unroll
    for (int t = 0; t < nt; t++) {
        const int tok = (tt * nt + t) * 8 + (lane >> 2);
        xrow[t] = tok < p->g.m ? (const char *)p->g.a + ((int64_t)tok * p->g.lda + (lane & 3) * 8) * 2 : NULL;
    }
}

/* X's B fragments of unit u from this lane's rows (gk_w4_x_rows): lane (i, j) takes its token's
   k 8 j .. 8 j + 7 and 32 + 8 j .. 32 + 8 j + 7 of the unit (two 16-byte loads); word 2 s + h is
   register h of step s's fragment. Tokens past M are zeros. */
GK_DEV void gk_w4_load_x(const char *const *xrow, int u, int nt, unsigned *xb)
{
#pragma unroll
    for (int t = 0; t < nt; t++) {
        uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
        if (xrow[t]) {
            const char *q = xrow[t] + u * (GK_W4_UNIT * 2);
            lo = gk_ld16_nc(q);
            hi = gk_ld16_nc(q + 64);
        }
        xb[t * 8 + 0] = lo.x;
        xb[t * 8 + 1] = lo.y;
        xb[t * 8 + 2] = lo.z;
        xb[t * 8 + 3] = lo.w;
        xb[t * 8 + 4] = hi.x;
        xb[t * 8 + 5] = hi.y;
        xb[t * 8 + 6] = hi.z;
        xb[t * 8 + 7] = hi.w;
    }
}

/* One unit: dequantize the four k16 steps of each row tile and run the MMAs. fzero 0 (symmetric,
   4-bit zero points): exact codes u - z into tmp, whose sum scales into acc at a group's end
   (after step 1 when G = 32, and after step 3 when the unit ends a group or the warp's run);
   fzero 1: u s - z s in the dtype, straight into acc. */
GK_DEV void gk_w4_unit(float *acc, float *tmp, const uint4 *wq, const unsigned *xb, const unsigned *rec, int dt,
                       int fzero, int has_zeros, int rw, int nt, int flush_mid, int flush_end)
{
    const unsigned magic = gk_w4_magic(dt), one = gk_w4_one(dt);
    const unsigned neg_base = gk_w4_neg_base(dt), neg_sym = gk_w4_neg_sym(dt);
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const int half = s >> 1;
#pragma unroll
        for (int r = 0; r < rw; r++) {
            const unsigned w = s == 0 ? wq[r].x : s == 1 ? wq[r].y : s == 2 ? wq[r].z : wq[r].w;
            const unsigned sr = rec[4 * r + half], zr = rec[4 * r + 2 + half];
            unsigned a[4];
            if (!fzero) {
                const unsigned nz_lo = has_zeros ? gk_w4_dup_lo(zr) ^ 0x80008000u : neg_sym;
                const unsigned nz_hi = has_zeros ? gk_w4_dup_hi(zr) ^ 0x80008000u : neg_sym;
#pragma unroll
                for (int e = 0; e < 4; e++) a[e] = gk_w4_fma2(gk_w4_pair(w, e, magic), one, (e & 1) ? nz_hi : nz_lo, dt);
            } else {
                const unsigned s_lo = gk_w4_dup_lo(sr), s_hi = gk_w4_dup_hi(sr);
                const unsigned z_lo = gk_w4_dup_lo(zr), z_hi = gk_w4_dup_hi(zr);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const unsigned u = gk_w4_fma2(gk_w4_pair(w, e, magic), one, neg_base, dt);
                    a[e] = gk_w4_fma2(u, (e & 1) ? s_hi : s_lo, (e & 1) ? z_hi : z_lo, dt);
                }
            }
#pragma unroll
            for (int t = 0; t < nt; t++) {
                float *c = (fzero ? acc : tmp) + (r * nt + t) * 4;
                if (dt == GK_BF16) gk_mma_m16n8k16_bf16(c, a, xb + t * 8 + s * 2, c);
                else gk_mma_m16n8k16_f16(c, a, xb + t * 8 + s * 2, c);
            }
        }
        if (!fzero && ((s == 1 && flush_mid) || (s == 3 && flush_end))) {
#pragma unroll
            for (int r = 0; r < rw; r++) {
                const unsigned sr = rec[4 * r + half];
                const float s_lo = gk_w4_half_f32(sr & 0xFFFFu, dt), s_hi = gk_w4_half_f32(sr >> 16, dt);
#pragma unroll
                for (int t = 0; t < nt; t++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int q = (r * nt + t) * 4 + e;
                        acc[q] = fmaf(tmp[q], e < 2 ? s_lo : s_hi, acc[q]);
                        tmp[q] = 0.0f;
                    }
            }
        }
    }
}

/* A warp's sums of one (row group, token tile) pair out: to D through the epilogue when the warp
   holds the whole pair, else as partial slot sl. Pairs along N (lanes i and i ^ 1 trade a value). */
GK_DEV void gk_w4_store(const gk_w4_args *p, const float *acc, int rg, int tt, int sl, int rw, int nt, int lane)
{
    const int i = lane >> 2, j = lane & 3, odd = i & 1;
#pragma unroll
    for (int r = 0; r < rw; r++)
#pragma unroll
        for (int t = 0; t < nt; t++) {
            const float *c = acc + (r * nt + t) * 4;
            /* c: (row i, token 2j), (row i, 2j + 1), (row i + 8, 2j), (row i + 8, 2j + 1) */
            const float r0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[1], 4);
            const float r1 = __shfl_xor_sync(0xffffffffu, odd ? c[2] : c[3], 4);
            const int n0 = (rg * rw + r) * 16 + (i & ~1), tok = (tt * nt + t) * 8 + 2 * j + odd;
            gk_gemm_store2(&p->g, tok, n0, odd ? r0 : c[0], odd ? c[1] : r0, sl);
            gk_gemm_store2(&p->g, tok, n0 + 8, odd ? r1 : c[2], odd ? c[3] : r1, sl);
        }
}

/* One position of this warp's range (the consumer cursor c): issue the position pf - 1 ahead
   (cursor ic) into the ring, load the next position's X fragments (xn), wait for this one,
   dequantize and multiply it (X in xb); at a pair's end or the range's, store the pair's sums.
   xrow: this lane's X rows for c's token tile (moved to the next tile's at a pair's end). */
GK_DEV void gk_w4_step(const gk_w4_args *p, char *ring, int *slot, int64_t pos, int64_t end, gk_w4_cursor *ic,
                       gk_w4_cursor *c, const char **xrow, int lane, int warp_id, int dt, int variant,
                       int rw, int nt, int pf, float *acc, float *tmp, const unsigned *xb, unsigned *xn)
{
    const int s_now = *slot, s_ahead = s_now == 0 ? pf - 1 : s_now - 1; /* (slot + pf - 1) % pf */
    if (pos + pf - 1 < end) {
        gk_w4_issue(p, ic, ring + s_ahead * rw * 1024, rw, lane, variant);
        gk_w4_cursor_next(p, ic, rw, lane);
    }
    gk_cp_async_commit();
    const int pair_end = c->u == p->units - 1 || pos == end - 1;
    if (pos + 1 < end) {
        if (c->u + 1 < p->units) gk_w4_load_x(xrow, c->u + 1, nt, xn);
        else { /* the next position opens the next pair: its token tile's rows */
            const char *nrow[8];
            gk_w4_x_rows(p, c->tt + 1 < p->token_tiles ? c->tt + 1 : 0, nt, lane, nrow);
            gk_w4_load_x(nrow, 0, nt, xn);
        }
    }
    gk_gemm_cp_wait(pf - 1);
    const char *sp = ring + s_now * rw * 1024;
    *slot = s_now + 1 == pf ? 0 : s_now + 1;
    const int g128 = variant >= 2, two = !g128 && p->group_log2 == 5;
    uint4 wq[4];
    unsigned rec[16];
#pragma unroll
    for (int r = 0; r < rw; r++) {
        wq[r] = *(const uint4 *)(sp + r * 1024 + lane * 16);
        const uint4 q = *(const uint4 *)(sp + r * 1024 + 512 + lane * 16);
        rec[4 * r + 0] = q.x;
        rec[4 * r + 1] = two ? q.y : q.x;
        rec[4 * r + 2] = q.z;
        rec[4 * r + 3] = two ? q.w : q.z;
    }
    /* a group ends with this unit (G = 32, 64: every unit; 128: odd units), or the segment does */
    const int glog2 = g128 ? 7 : p->group_log2;
    const int flush_end = (glog2 && glog2 < 7) || (glog2 == 7 && (c->u & 1)) || pair_end;
    const int has_zeros = variant == 3 || (variant < 2 && c->zero != NULL);
    gk_w4_unit(acc, tmp, wq, xb, rec, dt, variant == 1, has_zeros, rw, nt, two, flush_end);
    if (pair_end) {
        int sl = 0;
        if (p->g.partial) {
            const int64_t first = ((int64_t)c->rg * p->token_tiles + c->tt) * p->units;
            sl = warp_id - (int)gk_w4_warp_of(first, p->total, p->chunk, p->warps);
        }
        gk_w4_store(p, acc, c->rg, c->tt, sl, rw, nt, lane);
#pragma unroll
        for (int q = 0; q < rw * nt * 4; q++) acc[q] = 0.0f;
    }
    gk_w4_cursor_next(p, c, rw, lane);
    if (pair_end) gk_w4_x_rows(p, c->tt, nt, lane, xrow);
}

/* A warp: its range of positions streamed through its own cp.async ring of pf slots (pf - 1
   units in flight), X a position ahead in registers. Warps share nothing but the block's shared
   memory, cut into their rings: no barrier. */
GK_DEV void gk_w4_run(const gk_w4_args *p, int dt, int variant, int rw, int nt, int warps, int pf, unsigned *xa,
                      unsigned *xb, float *acc, float *tmp, const char **xrow, char *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int w = blockIdx.x * warps + warp;
    gk_grid_launch_dependents(); /* the partials' sum may start its blocks; it waits for this grid */
    if (w >= p->warps) return;
    const int64_t begin = gk_w4_start(p->total, p->chunk, p->warps, w);
    const int64_t end = gk_w4_start(p->total, p->chunk, p->warps, w + 1);
    if (begin >= end) return;
    char *ring = smem + warp * pf * rw * 1024;
    const int64_t pair = begin / p->units;
    const int rg = (int)(pair / p->token_tiles), tt = (int)(pair % p->token_tiles), u = (int)(begin % p->units);
    gk_w4_cursor c, ic;
    gk_w4_cursor_at(p, &c, rg, tt, u, rw, lane);
    ic = c;
    gk_w4_x_rows(p, tt, nt, lane, xrow);
    int slot = 0;
#pragma unroll
    for (int q = 0; q < rw * nt * 4; q++) acc[q] = tmp[q] = 0.0f;

    for (int s = 0; s < pf - 1; s++) {
        if (begin + s < end) {
            gk_w4_issue(p, &ic, ring + s * rw * 1024, rw, lane, variant);
            gk_w4_cursor_next(p, &ic, rw, lane);
        }
        gk_cp_async_commit();
    }
    gk_w4_load_x(xrow, u, nt, xa);
    for (int64_t pos = begin; pos < end; pos += 2) {
        gk_w4_step(p, ring, &slot, pos, end, &ic, &c, xrow, lane, w, dt, variant, rw, nt, pf, acc, tmp, xa, xb);
        if (pos + 1 < end)
            gk_w4_step(p, ring, &slot, pos + 1, end, &ic, &c, xrow, lane, w, dt, variant, rw, nt, pf, acc, tmp, xb, xa);
    }
    gk_cp_async_wait_0();
}

/* One group of the lean kernel's stream into registers (codes of its two units, scale and zero
   records) when load is set; the stream's pointers step to the next group either way. */
GK_DEV void gk_w4_lean_fetch(uint4 *cw, unsigned *cs, unsigned *cz, const char **cp, const unsigned **sp,
                             const unsigned **zp, int load, int zeros)
{
    if (load) {
        cw[0] = gk_ld16_cs(*cp);
        cw[1] = gk_ld16_cs(*cp + 512);
        *cs = __ldg(*sp);
        if (zeros) *cz = __ldg(*zp);
    }
    *cp += 1024;
    *sp += 8;
    if (zeros) *zp += 8;
}

/* The lean decode kernel: one 16-row tile and NT 8-token tiles a position (M <= 8 NT), groups of 128,
   symmetric or 4-bit zero points. Position x's codes are then lane x * 32 + lane of the prepacked
   codes and its scale record word (x >> 1) * 8 + row, so a warp's range is one contiguous stream,
   cut at group boundaries (chunk 2): P groups of codes and records in flight in registers (no
   ring, no cursor, no shared memory), X fragments from L1. The codes enter the MMA as 128 + u
   (one lop3 a pair) and, for bf16, a second MMA of the same X fragment by -(128 + z) a row removes
   the offset: two MMAs a k16 step instead of four fma.x2 (products exact in fp32; the sums carry
   the offset's magnitude, ~2^-22 of sum |x w| a group; f16's 1024 would carry 8 times that, so f16
   subtracts by fma.x2). cw, cs, cz: P groups of codes (two units a group), scale and zero records. */
GK_DEV void gk_w4_lean(const gk_w4_args *p, int dt, int zeros, int nt, int warps, int P, uint4 *cw, unsigned *cs,
                       unsigned *cz)
{
    const int lane = threadIdx.x & 31, i = lane >> 2;
    const int w = blockIdx.x * warps + (threadIdx.x >> 5);
    gk_grid_launch_dependents(); /* the partials' sum may start its blocks; it waits for this grid */
    if (w >= p->warps) return;
    const int begin = (int)gk_w4_start(p->total, p->chunk, p->warps, w); /* even: chunk 2 or units */
    const int end = (int)gk_w4_start(p->total, p->chunk, p->warps, w + 1);
    if (begin >= end) return;
    const unsigned magic = gk_w4_magic(dt), neg_sym = gk_w4_neg_sym(dt);
    const int units = p->units;
    const char *cp = (const char *)(p->codes + lane) + (int64_t)begin * 512; /* a unit: 32 lanes x 16 bytes */
    const unsigned *sp = p->scales + i + (begin >> 1) * 8, *zp = zeros ? p->zeros + i + (begin >> 1) * 8 : NULL;
    /* this lane's token of each 8-token tile; tokens past M read token M - 1: their columns of the
       MMA are never stored */
    const char *xrow[2];
#pragma unroll
    for (int t = 0; t < nt; t++) {
        const int tok = 8 * t + i < p->g.m ? 8 * t + i : p->g.m - 1;
        xrow[t] = (const char *)p->g.a + ((int64_t)tok * p->g.lda + (lane & 3) * 8) * 2;
    }
#pragma unroll
    for (int g = 0; g < P; g++) gk_w4_lean_fetch(cw + 2 * g, cs + g, cz + g, &cp, &sp, &zp, begin + 2 * g < end, zeros);
    int u = begin % units, rg = begin / units, xoff = u * (GK_W4_UNIT * 2);
    /* the partial slot of the first pair; the warp opens every later pair it meets: slot 0 */
    int sl = p->g.partial ? w - (int)gk_w4_warp_of((int64_t)rg * units, p->total, p->chunk, p->warps) : 0;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int x = begin; x < end; x += 2 * P) {
#pragma unroll
        for (int g = 0; g < P; g++) {
            if (x + 2 * g >= end) break;
            const uint4 wq[2] = {cw[2 * g], cw[2 * g + 1]};
            const unsigned sr = cs[g], zr = zeros ? cz[g] : 0u;
            unsigned xb[2][16];
#pragma unroll
            for (int t = 0; t < nt; t++)
#pragma unroll
                for (int h = 0; h < 4; h++) {
                    const uint4 v = gk_ld16_nc(xrow[t] + xoff + 64 * h);
                    xb[t][4 * h] = v.x, xb[t][4 * h + 1] = v.y, xb[t][4 * h + 2] = v.z, xb[t][4 * h + 3] = v.w;
                }
            const unsigned nz_lo = zeros ? gk_w4_dup_lo(zr) ^ 0x80008000u : neg_sym;
            const unsigned nz_hi = zeros ? gk_w4_dup_hi(zr) ^ 0x80008000u : neg_sym;
            const unsigned nz[4] = {nz_lo, nz_hi, nz_lo, nz_hi};
            const unsigned one = gk_w4_one(dt);
            /* each token tile's sums of the codes and of the offset: independent chains of MMAs */
            float tc[2][4], cc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
            for (int s = 0; s < 8; s++) { /* unit s / 4, its k16 step s % 4; X: unit h's words 8 h + 2 (s % 4) */
                const uint4 q = wq[s >> 2];
                const unsigned wd = (s & 3) == 0 ? q.x : (s & 3) == 1 ? q.y : (s & 3) == 2 ? q.z : q.w;
                unsigned a[4];
                if (dt == GK_BF16) {
#pragma unroll
                    for (int e = 0; e < 4; e++) a[e] = gk_w4_pair(wd, e, magic);
#pragma unroll
                    for (int t = 0; t < nt; t++) {
                        const unsigned *b = xb[t] + 8 * (s >> 2) + 2 * (s & 3);
                        gk_mma_m16n8k16_bf16(tc[t], a, b, s ? tc[t] : zero);
                        gk_mma_m16n8k16_bf16(cc[t], nz, b, s ? cc[t] : zero);
                    }
                } else { /* f16: 1024 + u against values ~u would cost 2^-19 of sum |x w|: u - z exact by fma.x2 */
#pragma unroll
                    for (int e = 0; e < 4; e++) a[e] = gk_w4_fma2(gk_w4_pair(wd, e, magic), one, (e & 1) ? nz_hi : nz_lo, dt);
#pragma unroll
                    for (int t = 0; t < nt; t++)
                        gk_mma_m16n8k16_f16(tc[t], a, xb[t] + 8 * (s >> 2) + 2 * (s & 3), s ? tc[t] : zero);
                }
            }
            const float s_lo = gk_w4_half_f32(sr & 0xFFFFu, dt), s_hi = gk_w4_half_f32(sr >> 16, dt);
#pragma unroll
            for (int t = 0; t < nt; t++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[4 * t + e] = fmaf(tc[t][e] + cc[t][e], e < 2 ? s_lo : s_hi, acc[4 * t + e]);
            /* the group P ahead into the registers just used (loaded after their last use: no copies) */
            gk_w4_lean_fetch(cw + 2 * g, cs + g, cz + g, &cp, &sp, &zp, x + 2 * g + 2 * P < end, zeros);
            u += 2;
            xoff += 2 * GK_W4_UNIT * 2;
            if (u == units || x + 2 * g + 2 == end) { /* the pair ends, or the warp's part of it */
                gk_w4_store(p, acc, rg, 0, sl, 1, nt, lane);
                sl = 0;
#pragma unroll
                for (int e = 0; e < 8; e++) acc[e] = 0.0f;
                if (u == units) {
                    u = 0;
                    xoff = 0;
                    rg++;
                }
            }
        }
    }
}

/* The partials' sum: each output's pair, the warps that met it (slots 0 .. w1 - w0), added in
   slot order, through the epilogue. Launched dependent on the GEMM grid (PDL). A thread a column
   and 8 rows (one token tile's, one pair): the pair's first and last warps (gk_w4_warp_of, double
   divisions) once for 8 outputs. */
static __global__ void __launch_bounds__(256) gk_w4_reduce(gk_w4_args p, int rw, int nt)
{
    gk_grid_dependency_wait();
    const int64_t total = (int64_t)p.g.m * p.g.n;
    for (int r8 = blockIdx.y * 8; r8 < p.g.m; r8 += gridDim.y * 8)
        for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < p.g.n; col += gridDim.x * blockDim.x) {
            const int64_t pair = (int64_t)(col / (16 * rw)) * p.token_tiles + r8 / (8 * nt);
            const int slots = (int)(gk_w4_warp_of(pair * p.units + p.units - 1, p.total, p.chunk, p.warps) -
                                    gk_w4_warp_of(pair * p.units, p.total, p.chunk, p.warps)) + 1;
            float s[8];
#pragma unroll
            for (int r = 0; r < 8; r++) {
                const float *q = p.g.partial + (int64_t)(r8 + r) * p.g.n + col;
                s[r] = 0.0f;
                if (r8 + r < p.g.m)
                    for (int z = 0; z < slots; z++) s[r] += q[z * total];
            }
#pragma unroll
            for (int r = 0; r < 8; r++)
                if (r8 + r < p.g.m)
                    gk_store1_f32(p.g.d, (int64_t)(r8 + r) * p.g.ldd + col, p.g.d_dtype,
                                  gk_gemm_epilogue(&p.g, s[r], r8 + r, col));
        }
}

#if GK_GEMM_SM90
/* ---------------------------------------------------------------- sm_90a: the wgmma kernel

   Past decode sizes the tensor rate decides, and wgmma's is twice mma.sync's. A block is WGS
   consumer warpgroups of 64 weight rows (warp w: the prepacked row tile w of the block's RT = 4
   WGS, whose lanes' codes are the wgmma's register A fragments as they are mma.sync's) and a
   producer warp that copies each unit's codes and records (TMA boxes of the RT tiles) and X's
   unit (a bulk copy) into a ring of stages. X is first rewritten by gk_w4_stage_x into the codes'
   k order and the 128-byte swizzle, T rows a token tile, so that a stage's X is one contiguous
   copy that wgmma reads as its K-major B. A weight is dequantized to (u - z) s in the
   activations' dtype (u - z exact, one rounding by s, as the dequantize + GEMM path rounds): a
   lop3 and two fma.x2 a pair. Positions (16 RT weight rows, T tokens, 64 k) are cut into a range
   a block as the fused kernels' are, with partials summed by gk_w4_reduce. */
#define gk_w4_wg_threads_c(WGS) (128 * (WGS) + 32)
/* a stage, 1024-byte aligned: X's unit (T rows of 128 bytes), the RT row tiles' codes (512 bytes
   each), their scale records and zero records (32 bytes a tile, 64 when G = 32: two groups) */
#define gk_w4_wg_stage_bytes_c(T, RT) (((T) * 128 + (RT) * (512 + 128) + 1023) / 1024 * 1024)
#define gk_w4_wg_smem_bytes_c(T, RT, STAGES) (1024 + (STAGES) * (gk_w4_wg_stage_bytes_c(T, RT) + 16))

/* X [M][K] (row stride ldx) in the wgmma kernel's staged form: [token tile][unit][T rows][128
   bytes], a row's 64 values of the unit in the codes' k order (step s, MMA column c: gk_w4_code_src's
   k), its 16-byte chunks at chunk ^ (row % 8), rows past M zero. A thread a 16-byte chunk: columns
   8 (c % 2) .. + 7 of step c / 2, lane column j's pair the unit's word 16 (s / 2) + 4 j + 2 (s % 2)
   + c % 2. */
static __global__ void __launch_bounds__(256) gk_w4_stage_x(uint4 *xs, const unsigned *x, int64_t ldx, int m, int units,
                                                          int T, int64_t total)
{
    gk_grid_launch_dependents(); /* the GEMM may start its blocks; its producer waits for this grid */
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)(idx & 7), s = c >> 1;
        const int64_t ru = idx >> 3, row = ru / units;
        const int u = (int)(ru % units), r = (int)(row % T);
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (row < m) {
            const unsigned *q = x + (row * ldx + u * GK_W4_UNIT) / 2 + 16 * (s >> 1) + 2 * (s & 1) + (c & 1);
            v = make_uint4(__ldg(q), __ldg(q + 4), __ldg(q + 8), __ldg(q + 12));
        }
        xs[((row / T * units + u) * T + r) * 8 + (c ^ (r & 7))] = v;
    }
}

/* A unit's codes (this lane's 16 bytes) as the A registers of its four k16 steps: (u - z) s, u - z
   exact. rec: this lane's scale record of the unit's first group, zoff words on its zero record,
   two: a second group 8 words on (G = 32, steps 2-3); mode: 0 symmetric, 1 4-bit zero points
   (records 128 + z), 2 float zero points (records -z s). */
GK_DEV void gk_w4_wg_dequant(unsigned *a, uint4 cw, const unsigned *rec, int zoff, int two, int dt, int mode)
{
    const unsigned magic = gk_w4_magic(dt), one = gk_w4_one(dt);
    const unsigned neg_base = gk_w4_neg_base(dt), neg_sym = gk_w4_neg_sym(dt);
    unsigned sc[2][2], c1[2][2], c2[2][2]; /* [half][row i, i + 8]: t = pair + c1, weight t s + c2 */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const unsigned r = rec[h && two ? 8 : 0], z = mode ? rec[zoff + (h && two ? 8 : 0)] : 0u;
        sc[h][0] = gk_w4_dup_lo(r), sc[h][1] = gk_w4_dup_hi(r);
        c1[h][0] = c1[h][1] = mode == 2 ? neg_base : neg_sym;
        c2[h][0] = c2[h][1] = 0x80008000u; /* -0: t s + c2 = t s */
        if (mode == 1) c1[h][0] = gk_w4_dup_lo(z) ^ 0x80008000u, c1[h][1] = gk_w4_dup_hi(z) ^ 0x80008000u;
        if (mode == 2) c2[h][0] = gk_w4_dup_lo(z), c2[h][1] = gk_w4_dup_hi(z);
    }
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const unsigned w = s == 0 ? cw.x : s == 1 ? cw.y : s == 2 ? cw.z : cw.w;
        const int h = s >> 1;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const unsigned t = gk_w4_fma2(gk_w4_pair(w, e, magic), one, c1[h][e & 1], dt);
            a[4 * s + e] = gk_w4_fma2(t, sc[h][e & 1], c2[h][e & 1], dt);
        }
    }
}

/* A consumer warp's position at stage s (parity ph): wait for it, dequantize its unit into a,
   issue the warpgroup's four wgmmas; once the previous position's are done, free their A registers
   (prev) and hand their stage (*held, -1: none) back. */
GK_DEV void gk_w4_wg_step(char *smem, unsigned long long *full, unsigned long long *empty, int s, int ph, int T, int RT,
                          int tile, int lane, int two, int mode, int dt, float *acc, unsigned *a, unsigned *prev,
                          int *held)
{
    const char *st = smem + s * gk_w4_wg_stage_bytes_c(T, RT);
    gk_mbar_wait(full + s, ph);
    const uint4 cw = *(const uint4 *)(st + T * 128 + tile * 512 + lane * 16);
    /* records: a row of 8 words a tile (16 when G = 32), scales then zeros */
    const int rw = two ? 16 : 8;
    gk_w4_wg_dequant(a, cw, (const unsigned *)(st + T * 128 + RT * 512) + tile * rw + (lane >> 2), RT * rw, two, dt,
                     mode);
    const unsigned long long db = gk_wgmma_desc_sw128(st, 16);
    gk_wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; k++) gk_wgmma_m64k16_rs(acc, a + 4 * k, db + 2 * k, dt, T, 0);
    gk_wgmma_commit();
    gk_wgmma_wait_1();
    gk_wgmma_fence_regs(acc, T / 2);
    gk_wgmma_fence_uregs(prev, 16);
    if (*held >= 0 && lane == 0) gk_mbar_arrive(empty + *held);
    *held = s;
}

/* tmc, tms, tmz: TMA maps of the codes ([tiles][units x 128 words], boxes of 128 x RT tiles) and the
   scale and zero records ([tiles][groups x 8 words], boxes of a unit's groups x RT tiles) */
GK_DEV void gk_w4_wg(const gk_w4_args *p, const CUtensorMap *tmc, const CUtensorMap *tms, const CUtensorMap *tmz,
                     int dt, int mode, int T, int WGS, int stages, float *acc)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint4 gk_w4_wg_smem[];
    const int RT = 4 * WGS, sb = gk_w4_wg_stage_bytes_c(T, RT);
    char *smem = gk_smem_align_1024(gk_w4_wg_smem);
    unsigned long long *full = (unsigned long long *)(smem + stages * sb), *empty = full + stages;
    /* the warp index known warp-uniform (without it: 16 R2UR a position) */
    const int warp = gk_warp_uniform((int)(threadIdx.x >> 5)), lane = threadIdx.x & 31, w = blockIdx.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            gk_mbar_init(full + s, 1);
            gk_mbar_init(empty + s, RT); /* an arrival from each consumer warp */
        }
        gk_mbar_init_fence();
    }
    __syncthreads();
    gk_grid_launch_dependents(); /* the partials' sum may start its blocks; it waits for this grid */
    const int64_t begin = gk_w4_start(p->total, p->chunk, p->warps, w), end = gk_w4_start(p->total, p->chunk, p->warps, w + 1);
    if (w >= p->warps || begin >= end) return;
    const int units = p->units, two = p->group_log2 == 5, rw = two ? 16 : 8;
    const int64_t pair = begin / units;
    int rg = (int)(pair / p->token_tiles), tt = (int)(pair % p->token_tiles), u = (int)(begin % units);
    const int n = (int)(end - begin);

    if (warp == RT) { /* the producer: one thread, a TMA box of the RT row tiles' codes, one of their
                         scale (and zero) records, a bulk copy of X's unit */
        if (lane) return;
        gk_grid_dependency_wait(); /* X staged by the kernel before */
        const int tx = T * 128 + RT * 512 + RT * rw * 4 * (mode ? 2 : 1);
        for (int it = 0, s = 0, ph = 0; it < n; it++) {
            const int g = p->group_log2 ? (u * GK_W4_UNIT) >> p->group_log2 : 0;
            char *st = smem + s * sb;
            if (it >= stages) gk_mbar_wait(empty + s, ph ^ 1);
            gk_mbar_arrive_expect_tx(full + s, tx);
            gk_tma_load_2d(st + T * 128, tmc, full + s, u * 128, rg * RT);
            gk_tma_load_2d(st + T * 128 + RT * 512, tms, full + s, g * 8, rg * RT);
            if (mode) gk_tma_load_2d(st + T * 128 + RT * 512 + RT * rw * 4, tmz, full + s, g * 8, rg * RT);
            gk_bulk_load(st, (const char *)p->g.a + ((int64_t)tt * units + u) * T * 128, T * 128, full + s);
            if (++s == stages) s = 0, ph ^= 1;
            if (++u == units) {
                u = 0;
                if (++tt == p->token_tiles) tt = 0, rg++;
            }
        }
        return;
    }

    const int tile = warp;
    /* the partial slot of the first pair; the block opens every later pair it meets: slot 0 */
    int sl = p->g.partial ? w - (int)gk_w4_warp_of(pair * units, p->total, p->chunk, p->warps) : 0, held = -1;
    int s = 0, ph = 0;
    unsigned a0[16], a1[16];
    for (int it = 0; it < n;) { /* a pair's positions, then its store */
        const int last = it + min(n - it, units - u);
#pragma unroll
        for (int q = 0; q < T / 2; q++) acc[q] = 0.0f;
        gk_wgmma_fence_regs(acc, T / 2);
        for (; it + 1 < last; it += 2) {
            gk_w4_wg_step(smem, full, empty, s, ph, T, RT, tile, lane, two, mode, dt, acc, a0, a1, &held);
            if (++s == stages) s = 0, ph ^= 1;
            gk_w4_wg_step(smem, full, empty, s, ph, T, RT, tile, lane, two, mode, dt, acc, a1, a0, &held);
            if (++s == stages) s = 0, ph ^= 1;
        }
        if (it < last) {
            gk_w4_wg_step(smem, full, empty, s, ph, T, RT, tile, lane, two, mode, dt, acc, a0, a1, &held);
            if (++s == stages) s = 0, ph ^= 1;
            it++;
        }
        gk_wgmma_wait_0();
        gk_wgmma_fence_regs(acc, T / 2);
        gk_wgmma_fence_uregs(a0, 16);
        gk_wgmma_fence_uregs(a1, 16);
        if (lane == 0) gk_mbar_arrive(empty + held);
        held = -1;
        gk_w4_store(p, acc, rg * RT + tile, tt, sl, 1, T / 8, lane);
        sl = 0;
        u = 0;
        if (++tt == p->token_tiles) tt = 0, rg++;
    }
#endif
}

#define GK_W4_WG_KERNEL(kname, dt, MODE, T, WGS, STAGES)                                                        \
    static __global__ void __launch_bounds__(gk_w4_wg_threads_c(WGS), 1)                                        \
        kname(const __grid_constant__ gk_w4_args p, const __grid_constant__ CUtensorMap tmc,                    \
              const __grid_constant__ CUtensorMap tms, const __grid_constant__ CUtensorMap tmz)                 \
    {                                                                                                           \
        float acc[(T) / 2];                                                                                     \
        gk_w4_wg(&p, &tmc, &tms, &tmz, dt, MODE, T, WGS, STAGES, acc);                                          \
    }

/* The wgmma kernel of T tokens a tile (wgmma n = T: 16, 32, 64 or 128), WGS consumer warpgroups
   (RT = 4 WGS row tiles a block) and STAGES stages: name_sym, name_zint, name_zflt (by zero mode,
   any group) and its gk_w4_config (wgmma 1: RT row tiles, T / 8 token tiles, a block a worker). */
#define GK_DEFINE_W4_WGMMA(name, dt, T, WGS, STAGES)                                                       \
    static_assert((T) == 16 || (T) == 32 || (T) == 64 || (T) == 128, #name ": T is 16, 32, 64 or 128");   \
    static_assert((WGS) >= 1 && (WGS) <= 3, #name ": WGS (consumer warpgroups) is 1 to 3");                \
    static_assert(gk_w4_wg_smem_bytes_c(T, 4 * (WGS), STAGES) <= 227 * 1024,                                \
                  #name ": STAGES past 227 KB of shared memory");                                           \
    GK_W4_WG_KERNEL(name##_sym, dt, 0, T, WGS, STAGES)                                                      \
    GK_W4_WG_KERNEL(name##_zint, dt, 1, T, WGS, STAGES)                                                     \
    GK_W4_WG_KERNEL(name##_zflt, dt, 2, T, WGS, STAGES)                                                     \
    static const gk_w4_config name##_config = {#name, 4 * (WGS), (T) / 8, 1, STAGES, 1, gk_w4_wg_threads_c(WGS), \
                                               gk_w4_wg_smem_bytes_c(T, 4 * (WGS), STAGES), 0, 1};
#endif /* GK_GEMM_SM90 */

/* A kernel's entry in the tables below: the runtime's launch handle (kernels of two signatures,
   launched with cudaLaunchKernel / cudaLaunchKernelExC). */
#define GK_W4_FN(k) ((const void *)(k))

/* shared memory of a block: the warps' rings */
#define gk_w4_smem_bytes_c(RW, NT, WARPS, PF) ((WARPS) * (PF) * (RW) * 1024)

#define GK_W4_KERNEL(kname, dt, VARIANT, RW, NT, WARPS, PF, MINB)                                           \
    static __global__ void __launch_bounds__((WARPS) * 32, MINB) kname(gk_w4_args p)                       \
    {                                                                                                      \
        extern __shared__ __align__(16) char gk_w4_smem[];                                                 \
        unsigned xa[(NT) * 8], xb[(NT) * 8];                                                               \
        float acc[(RW) * (NT) * 4], tmp[(RW) * (NT) * 4];                                                  \
        const char *xrow[NT];                                                                              \
        gk_w4_run(&p, dt, VARIANT, RW, NT, WARPS, PF, xa, xb, acc, tmp, xrow, gk_w4_smem);                  \
    }

#define GK_DEFINE_W4(name, dt, RW, NT, WARPS, PF, MINB)                                                     \
    static_assert((PF) >= 2 && (PF) <= 8, #name ": PF (ring slots) must be 2 to 8");                      \
    static_assert((RW) >= 1 && (RW) <= 4, #name ": RW (row tiles) must be 1 to 4");                        \
    static_assert((NT) >= 1 && (NT) <= 8, #name ": NT (token tiles) must be 1 to 8");                      \
    static_assert((WARPS) >= 1 && (WARPS) <= 32, #name ": WARPS must be 1 to 32");                          \
    GK_W4_KERNEL(name##_int, dt, 0, RW, NT, WARPS, PF, MINB)                                                \
    GK_W4_KERNEL(name##_flt, dt, 1, RW, NT, WARPS, PF, MINB)                                                \
    GK_W4_KERNEL(name##_s128, dt, 2, RW, NT, WARPS, PF, MINB)                                               \
    GK_W4_KERNEL(name##_z128, dt, 3, RW, NT, WARPS, PF, MINB)                                               \
    static const gk_w4_config name##_config = {#name, RW, NT, WARPS, PF, MINB, (WARPS) * 32,               \
                                               gk_w4_smem_bytes_c(RW, NT, WARPS, PF), 0, 0};

#define GK_W4_LEAN_KERNEL(kname, dt, ZEROS, NT, WARPS, P, MINB)                                                \
    static __global__ void __launch_bounds__((WARPS) * 32, MINB) kname(gk_w4_args p)                       \
    {                                                                                                      \
        uint4 cw[2 * (P)];                                                                                 \
        unsigned cs[P], cz[P];                                                                             \
        gk_w4_lean(&p, dt, ZEROS, NT, WARPS, P, cw, cs, cz);                                                   \
    }

/* The lean decode kernel of WARPS warps a block and P groups (2 P units) in flight a warp:
   name_s128 and name_z128 (groups of 128, symmetric or 4-bit zero points; M <= 8) and its
   gk_w4_config (prefetch: the units in flight, 2 P). */
#define GK_DEFINE_W4_LEAN(name, dt, NT, WARPS, P, MINB)                                                     \
    static_assert((P) >= 1 && (P) <= 4, #name ": P (groups in flight) must be 1 to 4");                   \
    static_assert((NT) == 1 || (NT) == 2, #name ": NT (token tiles) must be 1 or 2");                     \
    static_assert((WARPS) >= 1 && (WARPS) <= 32, #name ": WARPS must be 1 to 32");                          \
    GK_W4_LEAN_KERNEL(name##_s128, dt, 0, NT, WARPS, P, MINB)                                               \
    GK_W4_LEAN_KERNEL(name##_z128, dt, 1, NT, WARPS, P, MINB)                                               \
    static const gk_w4_config name##_config = {#name, 1, NT, WARPS, 2 * (P), MINB, (WARPS) * 32, 0, 1, 0};

/* Canonical -> prepacked codes: a thread a lane's 16 bytes. */
static __global__ void __launch_bounds__(256) gk_w4_pack_codes(uint4 *dst, const gk_int4x2 *q, int n, int k,
                                                                int flip, int64_t total)
{
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int lane = (int)(id % 32), units = k / GK_W4_UNIT;
        const int64_t tu = id / 32;
        const int u = (int)(tu % units), rt = (int)(tu / units);
        unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int s = 0; s < 4; s++)
#pragma unroll
            for (int nib = 0; nib < 8; nib++) {
                int tr, tk;
                gk_w4_code_src(lane, s, nib, &tr, &tk);
                const int row = rt * 16 + tr, kk = u * GK_W4_UNIT + tk;
                unsigned v = 0u;
                if (row < n) {
                    const unsigned b = q[(int64_t)row * (k / 2) + kk / 2];
                    v = ((kk & 1) ? b >> 4 : b) & 15u;
                    if (flip) v ^= 8u; /* signed nibble -> offset binary u = q + 8 */
                }
                w[s] |= v << (4 * nib);
            }
        dst[id] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

/* Canonical scales and zero points -> their records: a thread a (tile, group, row). */
static __global__ void __launch_bounds__(256) gk_w4_pack_records(unsigned short *s_out, unsigned short *z_out, int dt,
                                                                  const void *scales, int scale_dtype, const void *zeros,
                                                                  int zero_mode, int n, int groups, int64_t total)
{
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int h = (int)(id % 2), i = (int)(id / 2 % 8);
        const int64_t tg = id / 16;
        const int g = (int)(tg % groups), rt = (int)(tg / groups);
        const int row = rt * 16 + i + 8 * h;
        float s = 0.0f, z = 0.0f;
        if (row < n) {
            s = gk_load1_f32(scales, (int64_t)g * n + row, scale_dtype);
            if (zero_mode == GK_W4_ZEROS_INT4) {
                const unsigned b = ((const gk_int4x2 *)zeros)[((int64_t)g * n + row) / 2];
                z = (float)(((row & 1) ? b >> 4 : b) & 15u);
            } else if (zero_mode == GK_W4_ZEROS_FLOAT) {
                z = gk_load1_f32(zeros, (int64_t)g * n + row, scale_dtype);
            }
        }
        const float sd = gk_round_f32(s, dt); /* the scale as the kernel holds it */
        unsigned short sb, zb = 0;
        if (dt == GK_BF16) sb = __bfloat16_as_ushort(__float2bfloat16_rn(sd));
        else sb = __half_as_ushort(__float2half_rn(sd));
        if (zero_mode != GK_W4_SYMMETRIC) {
            const float zv = zero_mode == GK_W4_ZEROS_INT4 ? (dt == GK_BF16 ? 128.0f : 1024.0f) + z : -(z * sd);
            zb = dt == GK_BF16 ? __bfloat16_as_ushort(__float2bfloat16_rn(zv)) : __half_as_ushort(__float2half_rn(zv));
        }
        s_out[id] = sb;
        if (z_out) z_out[id] = zb;
    }
}

/* Prepacked -> [N][K] of dt: a thread a lane's 16 bytes, the k 8 j .. 8 j + 7 and 32 + 8 j ..
   32 + 8 j + 7 of its two rows (gk_w4_code_pos), one group each chunk: a 16-byte store a chunk
   where ld allows, else a value at a time. */
static __global__ void __launch_bounds__(256) gk_w4_dequant_kernel(void *dst, int64_t ld, const uint4 *codes,
                                                                    const unsigned short *s_rec,
                                                                    const unsigned short *z_rec, int dt, int zero_mode,
                                                                    int n, int k, int group, int64_t total)
{
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int lane = (int)(id % 32), units = k / GK_W4_UNIT, groups = k / group;
        const int64_t tu = id / 32;
        const int u = (int)(tu % units), rt = (int)(tu / units);
        const int i = lane >> 2, j = lane & 3;
        const uint4 v = codes[id];
        const float base = dt == GK_BF16 ? 128.0f : 1024.0f;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = rt * 16 + i + 8 * h;
            if (row >= n) continue;
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int k0 = u * GK_W4_UNIT + 32 * half + 8 * j;
                const int64_t r = ((int64_t)rt * groups + k0 / group) * 16 + i * 2 + h;
                const float sc = gk_w4_half_f32(s_rec[r], dt);
                const float zr = zero_mode == GK_W4_SYMMETRIC ? 0.0f : gk_w4_half_f32(z_rec[r], dt);
                float val[8];
#pragma unroll
                for (int c = 0; c < 8; c++) {
                    int ln, word, nib, col;
                    gk_w4_code_pos(i + 8 * h, 32 * half + 8 * j + c, &ln, &word, &nib, &col);
                    const unsigned w = word == 0 ? v.x : word == 1 ? v.y : word == 2 ? v.z : v.w;
                    const float uu = (float)((w >> (4 * nib)) & 15u);
                    if (zero_mode == GK_W4_ZEROS_FLOAT) val[c] = fmaf(uu, sc, zr);
                    else val[c] = (uu - (zero_mode == GK_W4_SYMMETRIC ? 8.0f : zr - base)) * sc;
                }
                char *out = (char *)dst + ((int64_t)row * ld + k0) * 2;
                if (gk_is_aligned(out, 16)) gk_st16(out, gk_pack_f32(val, dt, 8));
                else
#pragma unroll
                    for (int c = 0; c < 8; c++) gk_store1_f32(dst, (int64_t)row * ld + k0 + c, dt, val[c]);
            }
        }
    }
}

/* GPTQ / AWQ int32 packings -> canonical codes (a thread an output byte: two k of a row) and
   4-bit zero points (a thread an output byte: two n of a group). awq: AWQ's orders. */
static __global__ void __launch_bounds__(256) gk_w4_convert_codes(gk_int4x2 *q, const int *qweight, int n, int k,
                                                                   int awq, int flip, int64_t total)
{
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int row = (int)(id / (k / 2)), k0 = (int)(id % (k / 2)) * 2;
        unsigned v[2];
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int kk = k0 + e;
            unsigned word, shift;
            if (awq) {
                word = (unsigned)qweight[(int64_t)kk * (n / 8) + row / 8];
                shift = 4 * gk_w4_awq_nibble(row % 8);
            } else {
                word = (unsigned)qweight[(int64_t)(kk / 8) * n + row];
                shift = 4 * (kk % 8);
            }
            v[e] = ((word >> shift) & 15u) ^ (flip ? 8u : 0u);
        }
        q[id] = (gk_int4x2)(v[0] | (v[1] << 4));
    }
}

static __global__ void __launch_bounds__(256) gk_w4_convert_zeros(gk_int4x2 *z, const int *qzeros, int n, int awq,
                                                                   int offset, int64_t total)
{
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int g = (int)(id / (n / 2)), c0 = (int)(id % (n / 2)) * 2;
        unsigned v[2];
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int c = c0 + e;
            const unsigned word = (unsigned)qzeros[(int64_t)g * (n / 8) + c / 8];
            v[e] = ((word >> (4 * (awq ? gk_w4_awq_nibble(c % 8) : c % 8))) + (unsigned)offset) & 15u;
        }
        z[id] = (gk_int4x2)(v[0] | (v[1] << 4));
    }
}

#endif /* __CUDACC__ */

#endif /* GK_QUANT_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_QUANT_IMPLEMENTATION)) && !defined(GK_QUANT_IMPLEMENTED)
#define GK_QUANT_IMPLEMENTED

/* The shipped configurations: (tile, RW, NT, WARPS, PF, MINB). Decode-sized M takes one token
   tile; larger M more token tiles a block (X fragments reused over the row tiles). The dispatcher
   picks the first four by index (gk_w4_schedule); a sweep may append others. */
#ifndef GK_W4_CONFIGS
#define GK_W4_CONFIGS(X)                 \
    X(r1t1, 1, 1, 4, 8, 6)               \
    X(r2t1, 2, 1, 4, 4, 5)               \
    X(r1t2, 1, 2, 4, 8, 4)               \
    X(r2t2, 2, 2, 4, 4, 4)
#endif

#define GK_W4_X_DEFINE(tile, RW, NT, WARPS, PF, MINB)                    \
    GK_DEFINE_W4(gk_w4_bf16_##tile, GK_BF16, RW, NT, WARPS, PF, MINB) \
    GK_DEFINE_W4(gk_w4_f16_##tile, GK_F16, RW, NT, WARPS, PF, MINB)
GK_W4_CONFIGS(GK_W4_X_DEFINE)
#define GK_W4_X_KERNELS(tile, RW, NT, WARPS, PF, MINB)                                  \
    {{GK_W4_FN(gk_w4_bf16_##tile##_int), GK_W4_FN(gk_w4_bf16_##tile##_flt), GK_W4_FN(gk_w4_bf16_##tile##_s128), \
      GK_W4_FN(gk_w4_bf16_##tile##_z128)},                                                                      \
     {GK_W4_FN(gk_w4_f16_##tile##_int), GK_W4_FN(gk_w4_f16_##tile##_flt), GK_W4_FN(gk_w4_f16_##tile##_s128),    \
      GK_W4_FN(gk_w4_f16_##tile##_z128)}},
#define GK_W4_X_CONFIG(tile, RW, NT, WARPS, PF, MINB) &gk_w4_bf16_##tile##_config,

/* The lean decode kernels (tile, NT, WARPS, P, MINB), the last configurations, by NT: the
   dispatcher's for M <= 8 NT with groups of 128 and no float zero points (H200, M = 1, 28672 x
   8192: P 2 on 20 warps an SM 42.6 us, on 24 43.2 but at 80 registers the 4-bit-zero kernel
   spills; P 4 on 16 45.5). */
#ifndef GK_W4_LEAN_CONFIGS
#define GK_W4_LEAN_CONFIGS(X) \
    X(l1t1, 1, 4, 2, 5)       \
    X(l1t2, 2, 4, 2, 4)
#endif
#define GK_W4_X_LEAN_DEFINE(tile, NT, WARPS, P, MINB)                          \
    GK_DEFINE_W4_LEAN(gk_w4_bf16_##tile, GK_BF16, NT, WARPS, P, MINB) \
    GK_DEFINE_W4_LEAN(gk_w4_f16_##tile, GK_F16, NT, WARPS, P, MINB)
GK_W4_LEAN_CONFIGS(GK_W4_X_LEAN_DEFINE)
#define GK_W4_X_LEAN_KERNELS(tile, NT, WARPS, P, MINB)                                    \
    {{NULL, NULL, GK_W4_FN(gk_w4_bf16_##tile##_s128), GK_W4_FN(gk_w4_bf16_##tile##_z128)}, \
     {NULL, NULL, GK_W4_FN(gk_w4_f16_##tile##_s128), GK_W4_FN(gk_w4_f16_##tile##_z128)}},
#define GK_W4_X_LEAN_CONFIG(tile, NT, WARPS, P, MINB) &gk_w4_bf16_##tile##_config,

/* The wgmma kernels (tile, T, WGS, STAGES), last, in sm_90a-capable builds (GK_GEMM_SM90): the
   dispatcher's for GK_W4_WGMMA_M < M < GK_W4_WG_DEQUANT_M on compute capability 9.0, T the fewest
   tokens that hold M. */
#if GK_GEMM_SM90
#ifndef GK_W4_WG_CONFIGS
#define GK_W4_WG_CONFIGS(X) \
    X(w16, 16, 3, 16)       \
    X(w32, 32, 3, 14)       \
    X(w64, 64, 3, 10)       \
    X(w128, 128, 2, 9)
#endif
#else
#undef GK_W4_WG_CONFIGS
#define GK_W4_WG_CONFIGS(X)
#endif
#define GK_W4_X_WG_DEFINE(tile, T, WGS, STAGES)                            \
    GK_DEFINE_W4_WGMMA(gk_w4_bf16_##tile, GK_BF16, T, WGS, STAGES) \
    GK_DEFINE_W4_WGMMA(gk_w4_f16_##tile, GK_F16, T, WGS, STAGES)
GK_W4_WG_CONFIGS(GK_W4_X_WG_DEFINE)
/* (a wgmma configuration's entries are by zero mode, not by variant) */
#define GK_W4_X_WG_KERNELS(tile, T, WGS, STAGES)                                                       \
    {{GK_W4_FN(gk_w4_bf16_##tile##_sym), GK_W4_FN(gk_w4_bf16_##tile##_zint), GK_W4_FN(gk_w4_bf16_##tile##_zflt), \
      GK_W4_FN(gk_w4_bf16_##tile##_sym)},                                                                  \
     {GK_W4_FN(gk_w4_f16_##tile##_sym), GK_W4_FN(gk_w4_f16_##tile##_zint), GK_W4_FN(gk_w4_f16_##tile##_zflt),    \
      GK_W4_FN(gk_w4_f16_##tile##_sym)}},
#define GK_W4_X_WG_CONFIG(tile, T, WGS, STAGES) &gk_w4_bf16_##tile##_config,

static const void *const gk_w4_kernel_table[][2][4] = {GK_W4_CONFIGS(GK_W4_X_KERNELS)
                                                            GK_W4_LEAN_CONFIGS(GK_W4_X_LEAN_KERNELS)
                                                                GK_W4_WG_CONFIGS(GK_W4_X_WG_KERNELS)};
static const gk_w4_config *const gk_w4_config_table[] = {GK_W4_CONFIGS(GK_W4_X_CONFIG)
                                                             GK_W4_LEAN_CONFIGS(GK_W4_X_LEAN_CONFIG)
                                                                 GK_W4_WG_CONFIGS(GK_W4_X_WG_CONFIG)};
#define GK_W4_NCONFIG ((int)(sizeof gk_w4_config_table / sizeof gk_w4_config_table[0]))

#if GK_GEMM_SM90
/* 1 in the image of a build that has sm_90a code (the wgmma kernels are empty otherwise). */
static __device__ int gk_w4_wg_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif
/* The wgmma kernels can run: sm_90a code in this build and a compute capability 9.0 device. */
static int gk_w4_wg_ready(void)
{
    static unsigned known, ready;
    return gk_sm90a_ready(&gk_w4_wg_built, &known, &ready);
}
#else
static int gk_w4_wg_ready(void) { return 0; }
#endif

/* The configuration of a kind (wgmma 1: the wgmma kernels; 0: the lean decode kernels) for M
   tokens: the fewest token tiles that hold them; where none does, the most for wgmma and -1 for
   the lean kernels (they refuse it); -1 where none of the kind is built. */
static int gk_w4_kind_for(int64_t m, int wgmma)
{
    int best = -1;
    for (int c = 0; c < GK_W4_NCONFIG; c++) {
        const gk_w4_config *cfg = gk_w4_config_table[c];
        if (wgmma ? !cfg->wgmma : !cfg->lean) continue;
        const int t = cfg->token_tiles, bt = best < 0 ? 0 : gk_w4_config_table[best]->token_tiles;
        if (best < 0 || (8 * bt < m ? t > bt : (8 * t >= m && t < bt))) best = c;
    }
    return !wgmma && best >= 0 && 8 * gk_w4_config_table[best]->token_tiles < m ? -1 : best;
}

/* The bytes of X's staged copy (gk_w4_stage_x) for a wgmma configuration of T tokens a tile */
static size_t gk_w4_wg_x_bytes(int64_t m, int64_t k, int T) { return (size_t)gk_round_up(gk_ceil_div(m, T) * T * k * 2, 256); }

/* The kernel variant of a weight: 4-bit zero points or symmetric, any group; float zero points;
   symmetric or 4-bit zero points with groups of 128, compiled for that case (H200, M = 1,
   28672 x 8192, symmetric: 57.8 us against 67.6 for the general variant). */
static int gk_w4_variant(int group, int zero_mode)
{
    return zero_mode == GK_W4_ZEROS_FLOAT ? 1 : group != 128 ? 0 : zero_mode == GK_W4_SYMMETRIC ? 2 : 3;
}

static cudaError_t gk_w4_check_shape(const char *fn, int64_t n, int64_t k, int group, int zero_mode)
{
    GK_TRY(gk_check_positive(fn, "n", n));
    GK_TRY(gk_check_positive(fn, "k", k));
    GK_TRY(gk_check_fits_i32(fn, "n", n));
    GK_TRY(gk_check_fits_i32(fn, "k", k));
    if (n % 8) return gk__fail(cudaErrorInvalidValue, fn, "n = %lld is not a multiple of 8", (long long)n);
    if (k % GK_W4_UNIT) return gk__fail(cudaErrorInvalidValue, fn, "k = %lld is not a multiple of 64", (long long)k);
    if (group != 32 && group != 64 && group != 128 && group != k)
        return gk__fail(cudaErrorInvalidValue, fn, "group = %d is not 32, 64, 128 or k (%lld)", group, (long long)k);
    if (k % group)
        return gk__fail(cudaErrorInvalidValue, fn, "k = %lld is not a multiple of group = %d", (long long)k, group);
    if (zero_mode < GK_W4_SYMMETRIC || zero_mode > GK_W4_ZEROS_FLOAT)
        return gk__fail(cudaErrorInvalidValue, fn, "zero_mode %d is not a gk_w4_zeros", zero_mode);
    /* codes and records are indexed in 32 bits of 16-byte lanes and 32-bit words */
    if (gk_w4_codes_bytes(n, k) / 16 > 2147483647LL)
        return gk__fail(cudaErrorInvalidValue, fn, "n x k = %lld x %lld is past the 32-bit indexing of the codes",
                        (long long)n, (long long)k);
    return cudaSuccess;
}

static size_t gk_w4_packed_bytes_of(int64_t n, int64_t k, int group, int zero_mode)
{
    return (size_t)(gk_w4_codes_bytes(n, k) + gk_w4_records_bytes(n, k, group) * (zero_mode == GK_W4_SYMMETRIC ? 1 : 2));
}

static cudaError_t gk_w4_launch_grid(int64_t items, int *blocks) { return gk_grid_size(items, 256, 8, blocks); }

/* The blocks of a configuration an SM holds (occupancy; the fewest of its four kernels, whose
   registers differ), cached per configuration. */
static cudaError_t gk_w4_blocks_per_sm(int config, int *out)
{
    static int cache[GK_W4_NCONFIG];
    if (cache[config] > 0) {
        *out = cache[config];
        return cudaSuccess;
    }
    int fewest = 1 << 30;
    for (int v = 0; v < 8; v++) {
        int b = 0;
        if (!gk_w4_kernel_table[config][v / 4][v % 4]) continue; /* the lean kernel's missing variants */
        GK_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, gk_w4_kernel_table[config][v / 4][v % 4],
                                                             gk_w4_config_table[config]->threads,
                                                             gk_w4_config_table[config]->smem_bytes));
        if (b < fewest) fewest = b;
    }
    cache[config] = fewest > 0 ? fewest : 1;
    *out = cache[config];
    return cudaSuccess;
}

/* The fused path's schedule for a configuration (-1: by M) and a number of working warps (0: as
   many as the GPU holds, each with at least 2 PF units): the positions cut evenly over the warps
   (chunk 1, partials in the workspace, summed after) or, when every warp would get 8 or more
   whole pairs anyway or the workspace is too small, at pair boundaries (stored directly). */
typedef struct gk_w4_sched {
    int config, warps, chunk, slots;
    int64_t total;
    size_t partial_bytes; /* at the workspace's start */
    size_t x_bytes;       /* the wgmma kernel's staged X, after the partials (256-byte aligned) */
} gk_w4_sched;

static void gk_w4_schedule(int config, int warps, int64_t m, int64_t n, int64_t k, int var, size_t ws, int sms,
                           const int *bpsm_of, gk_w4_sched *sc)
{
    /* by M: the lean kernel where it applies; else two 16-row weight tiles a position, one 8-token
       tile up to 8 tokens, two above (H200, N 28672, K 8192: M = 1 r2t1 67.4 us, r1t1 85.3; M = 16
       r2t2 96.2, r1t2 114) */
    const int lean = var >= 2 ? gk_w4_kind_for(m, 0) : -1;
    if (config < 0) config = lean >= 0 ? lean : m <= 8 ? 1 : 3;
    const gk_w4_config *cfg = gk_w4_config_table[config];
    const int64_t units = k / GK_W4_UNIT;
    const int64_t pairs = gk_ceil_div(gk_w4_tiles(n), cfg->row_tiles) * gk_ceil_div(m, 8 * cfg->token_tiles);
    const int64_t total = pairs * units;
    const int64_t step = cfg->lean ? 2 : 1; /* the lean kernel's ranges: whole groups of 128 */
    int64_t w = warps;
    if (w <= 0) {
        w = (int64_t)bpsm_of[config] * sms * cfg->warps;
        const int64_t most = gk_ceil_div(total, 2LL * cfg->prefetch);
        if (w > most) w = most;
    }
    if (w > total / step) w = total / step;
    if (w < 1) w = 1;
    sc->config = config;
    sc->total = total;
    const int64_t per = total >= 2 * step ? total / step / w * step : 1; /* the shortest range */
    const int64_t slots = (units - 1) / per + 2;
    const size_t pb = (size_t)(slots * m * n * 4);
    sc->x_bytes = cfg->wgmma ? gk_w4_wg_x_bytes(m, k, 8 * cfg->token_tiles) : 0;
    const size_t need = cfg->wgmma ? (size_t)gk_round_up((int64_t)pb, 256) + sc->x_bytes : pb; /* with X staged after */
    /* whole pairs a warp: when every warp would get 8 or more anyway, when the partials do not fit,
       or, for a lean kernel, when the pairs keep 5 / 6 of the warps busy (H200, M = 16, 28672 x
       8192: 1792 pairs on 2112 warps 65.1 us whole, 69.8 with partials; M = 1, 2640 warps: 46.1
       whole, 42.9 with partials) */
    if (pairs >= 8 * w || need > ws || (cfg->lean && 6 * pairs >= 5 * w)) {
        if (w > pairs) w = pairs;
        sc->chunk = (int)units;
        sc->slots = 1;
        sc->partial_bytes = 0;
    } else {
        sc->chunk = (int)step;
        sc->slots = (int)slots;
        sc->partial_bytes = pb;
    }
    sc->warps = (int)w;
}

static size_t gk_w4_dequant_ws(int64_t m, int64_t n, int64_t k)
{
    return (size_t)gk_round_up(n * k * 2, 256) + gk_gemm_workspace_bytes(m, n, k, 0, k, 1, k);
}

/* The workspace a schedule uses: the partials, then (wgmma) X's staged copy 256-byte aligned. */
static size_t gk_w4_sched_ws(const gk_w4_sched *sc)
{
    return sc->x_bytes ? (size_t)gk_round_up((int64_t)sc->partial_bytes, 256) + sc->x_bytes : sc->partial_bytes;
}

/* wg: the wgmma kernels can run (gk_w4_wg_ready) */
static void gk_w4_plan_impl(int64_t m, int64_t n, int64_t k, int var, size_t ws, int sms, const int *bpsm_of, int wg,
                            gk_w4_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const int wc = gk_w4_kind_for(m, 1);
    const int wg_ok = wg && wc >= 0 && m > GK_W4_WGMMA_M &&
                      ws >= gk_w4_wg_x_bytes(m, k, 8 * gk_w4_config_table[wc]->token_tiles);
    if (m >= (wg_ok ? GK_W4_WG_DEQUANT_M : GK_W4_DEQUANT_M) && ws >= gk_w4_dequant_ws(m, n, k)) {
        pl->config = GK_W4_NCONFIG;
        pl->dequant = 1;
        pl->workspace_bytes = gk_w4_dequant_ws(m, n, k);
        return;
    }
    const int config = wg_ok ? wc : -1;
    gk_w4_sched sc;
    gk_w4_schedule(config, 0, m, n, k, var, ws, sms, bpsm_of, &sc);
    pl->config = sc.config;
    pl->warps = sc.warps;
    pl->slots = sc.slots;
    pl->workspace_bytes = gk_w4_sched_ws(&sc);
}

static cudaError_t gk_w4_bpsm_all(int *bpsm)
{
    for (int c = 0; c < GK_W4_NCONFIG; c++) GK_TRY(gk_w4_blocks_per_sm(c, &bpsm[c]));
    return cudaSuccess;
}

static cudaError_t gk_w4_check_weight(const char *fn, const gk_w4_weight *w)
{
    GK_TRY(gk_check_ptr(fn, "w", w));
    GK_TRY(gk_check_ptr(fn, "w->packed", w->packed));
    if (!gk_is_aligned(w->packed, 256)) return gk__fail(cudaErrorInvalidValue, fn, "w->packed is not 256-byte aligned");
    if (w->dtype != GK_BF16 && w->dtype != GK_F16)
        return gk__fail(cudaErrorInvalidValue, fn, "w->dtype %d is not GK_BF16 or GK_F16", w->dtype);
    return gk_w4_check_shape(fn, w->n, w->k, w->group, w->zero_mode);
}

static cudaError_t gk_w4_dequant_run(const char *fn, void *dst, int64_t ld, const gk_w4_weight *w, cudaStream_t stream)
{
    const char *base = (const char *)w->packed;
    const int64_t cb = gk_w4_codes_bytes(w->n, w->k), rb = gk_w4_records_bytes(w->n, w->k, w->group);
    const int64_t total = cb / 16;
    int blocks;
    GK_TRY(gk_w4_launch_grid(total, &blocks));
    gk_w4_dequant_kernel<<<blocks, 256, 0, stream>>>(dst, ld, (const uint4 *)base, (const unsigned short *)(base + cb),
                                                   w->zero_mode ? (const unsigned short *)(base + cb + rb) : NULL,
                                                   w->dtype, w->zero_mode, (int)w->n, (int)w->k, w->group, total);
    return gk_check_launch(fn);
}

static cudaError_t gk_w4_gemm_checked(const char *fn, int config, int warps, int x_dtype, void *d, int d_dtype,
                                      int64_t ldd, const void *x, int64_t ldx, const gk_w4_weight *w, const void *c,
                                      int64_t ldc, const float *bias, int64_t m, float alpha, float beta, int act,
                                      void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    if (d_dtype != GK_BF16 && d_dtype != GK_F16 && d_dtype != GK_F32)
        return gk__fail(cudaErrorInvalidValue, fn, "d_dtype %d is not GK_BF16, GK_F16 or GK_F32", d_dtype);
    if (act < GK_ACT_NONE || act > GK_ACT_SILU) return gk__fail(cudaErrorInvalidValue, fn, "act %d is not a gk_act", act);
    if (config < -1 || config > GK_W4_NCONFIG)
        return gk__fail(cudaErrorInvalidValue, fn, "config %d is not -1 or 0..%d", config, GK_W4_NCONFIG);
    if (warps < 0) return gk__fail(cudaErrorInvalidValue, fn, "warps = %d is negative", warps);
    GK_TRY(gk_check_nonneg(fn, "m", m));
    GK_TRY(gk_check_fits_i32(fn, "m", m));
    GK_TRY(gk_w4_check_weight(fn, w));
    if (w->dtype != x_dtype)
        return gk__fail(cudaErrorInvalidValue, fn, "the weight was prepacked for %s activations, x is %s",
                        gk_dtype_name(w->dtype), gk_dtype_name(x_dtype));
    if (m == 0) return cudaSuccess;
    const int64_t n = w->n, k = w->k;
    GK_TRY(gk_check_ptr(fn, "x", x));
    if (!gk_is_aligned(x, 16) || ldx % 8)
        return gk__fail(cudaErrorInvalidValue, fn, "x rows must be 16-byte aligned (x aligned, ldx = %lld a multiple of 8)",
                        (long long)ldx);
    if (ldx < k) return gk__fail(cudaErrorInvalidValue, fn, "ldx = %lld is smaller than k = %lld", (long long)ldx, (long long)k);
    GK_TRY(gk_check_fits_i32(fn, "ldx", ldx));
    gk_gemm_span in[2] = {{"x", x, 0}, {"w->packed", w->packed, 0}};
    in[1].bytes = (int64_t)gk_w4_packed_bytes_of(n, k, w->group, w->zero_mode);
    GK_TRY(gk_check_span(fn, "x", m, k, ldx, 2, &in[0].bytes));
    GK_TRY(gk_gemm_check_outputs(fn, d, d_dtype, ldd, c, ldc, bias, m, n, beta, in, 2, workspace, &workspace_bytes));

    int sms, bpsm[GK_W4_NCONFIG];
    GK_TRY(gk_sm_count(&sms));
    GK_TRY(gk_w4_bpsm_all(bpsm));
    const int var = gk_w4_variant(w->group, w->zero_mode);
    gk_w4_plan pl;
    gk_w4_plan_impl(m, n, k, var, workspace_bytes, sms, bpsm, gk_w4_wg_ready(), &pl);
    if (config == GK_W4_NCONFIG && workspace_bytes < gk_w4_dequant_ws(m, n, k))
        return gk__fail(cudaErrorInvalidValue, fn, "the dequantize + GEMM path needs a workspace of %zu bytes (%zu given)",
                        gk_w4_dequant_ws(m, n, k), workspace_bytes);
    if (config < 0) config = pl.config;
    if (config < GK_W4_NCONFIG && gk_w4_config_table[config]->lean &&
        (var < 2 || m > 8 * gk_w4_config_table[config]->token_tiles))
        return gk__fail(cudaErrorInvalidValue, fn,
                        "config %d (%s, the lean decode kernel) takes m <= %d (m = %lld) and groups of 128 (group = %d), "
                        "symmetric or with 4-bit zero points (zero_mode = %d)",
                        config, gk_w4_config_table[config]->name, 8 * gk_w4_config_table[config]->token_tiles,
                        (long long)m, w->group, w->zero_mode);

    if (config == GK_W4_NCONFIG) { /* W dequantized into the workspace, then the bf16 / f16 GEMM */
        void *wd = workspace;
        const size_t wd_bytes = (size_t)gk_round_up(n * k * 2, 256);
        GK_TRY(gk_w4_dequant_run(fn, wd, k, w, stream));
        void *rest = (char *)workspace + wd_bytes;
        const size_t rest_bytes = workspace_bytes - wd_bytes;
        cudaError_t e = x_dtype == GK_BF16
                            ? gk_gemm_bf16(d, d_dtype, ldd, (const gk_bf16 *)x, ldx, 0, (const gk_bf16 *)wd, k, 1, c, ldc,
                                           bias, m, n, k, alpha, beta, act, rest, rest_bytes, stream)
                            : gk_gemm_f16(d, d_dtype, ldd, (const gk_f16 *)x, ldx, 0, (const gk_f16 *)wd, k, 1, c, ldc,
                                          bias, m, n, k, alpha, beta, act, rest, rest_bytes, stream);
        return e;
    }

    const gk_w4_config *cfg = gk_w4_config_table[config];
    if (cfg->wgmma && !gk_w4_wg_ready())
        return gk__fail(cudaErrorNotSupported, fn,
                        "config %d (%s, the wgmma kernel) needs sm_90a code in this build and a compute capability 9.0 "
                        "device", config, cfg->name);
    gk_w4_sched sc;
    gk_w4_schedule(config, warps, m, n, k, var, workspace_bytes, sms, bpsm, &sc);
    if (cfg->wgmma && workspace_bytes < gk_w4_sched_ws(&sc))
        return gk__fail(cudaErrorInvalidValue, fn,
                        "config %d (%s, the wgmma kernel) needs a workspace of %zu bytes for X's staged copy (%zu given)",
                        config, cfg->name, gk_w4_sched_ws(&sc), workspace_bytes);
    gk_w4_args p;
    memset(&p, 0, sizeof p);
    p.g = gk_gemm_args_of(d, d_dtype, ldd, c, ldc, bias, m, n, k, alpha, beta, act);
    p.g.a = x;
    p.g.lda = ldx;
    p.g.partial = sc.partial_bytes ? (float *)workspace : NULL;
    const char *base = (const char *)w->packed;
    const int64_t cb = gk_w4_codes_bytes(n, k), rb = gk_w4_records_bytes(n, k, w->group);
    p.codes = (const uint4 *)base;
    p.scales = (const unsigned *)(base + cb);
    p.zeros = w->zero_mode ? (const unsigned *)(base + cb + rb) : NULL;
    p.tiles = (int)gk_w4_tiles(n);
    p.units = (int)(k / GK_W4_UNIT);
    p.groups = (int)(k / w->group);
    p.group_log2 = w->group == 32 ? 5 : w->group == 64 ? 6 : w->group == 128 ? 7 : 0;
    p.token_tiles = (int)gk_ceil_div(m, 8 * cfg->token_tiles);
    p.warps = sc.warps;
    p.chunk = sc.chunk;
    p.total = sc.total;
    const int kv = cfg->wgmma ? w->zero_mode : var; /* a wgmma configuration's kernels are by zero mode */
    const void *const kern = gk_w4_kernel_table[config][x_dtype == GK_F16][kv];
    static unsigned attr_set[GK_W4_NCONFIG][2][4];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[config][x_dtype == GK_F16][kv]));
    const dim3 grid((unsigned)gk_ceil_div(sc.warps, cfg->warps));
#if GK_GEMM_SM90
    if (cfg->wgmma) { /* X staged after the partials, then the GEMM launched dependent on it */
        const int T = 8 * cfg->token_tiles;
        uint4 *xs = (uint4 *)((char *)workspace + gk_round_up((int64_t)sc.partial_bytes, 256));
        const int64_t chunks = (int64_t)p.token_tiles * T * p.units * 8;
        int blocks;
        GK_TRY(gk_grid_size(chunks, 256, 8, &blocks));
        gk_w4_stage_x<<<blocks, 256, 0, stream>>>(xs, (const unsigned *)x, ldx, (int)m, p.units, T, chunks);
        GK_TRY(gk_check_launch(fn));
        p.g.a = xs;
        /* the codes [tiles][units x 128 words], the records [tiles][groups x 8 words] */
        const int two = w->group == 32;
        const int64_t cdims[2] = {(int64_t)p.units * 128, p.tiles}, cstr[1] = {(int64_t)p.units * 128};
        const int64_t rdims[2] = {(int64_t)p.groups * 8, p.tiles}, rstr[1] = {(int64_t)p.groups * 8};
        const int cbox[2] = {128, cfg->row_tiles}, rbox[2] = {two ? 16 : 8, cfg->row_tiles};
        CUtensorMap tmc, tms, tmz;
        GK_TRY(gk_tma_map_words(fn, &tmc, p.codes, 2, cdims, cstr, cbox));
        GK_TRY(gk_tma_map_words(fn, &tms, p.scales, 2, rdims, rstr, rbox));
        tmz = tms;
        if (p.zeros) GK_TRY(gk_tma_map_words(fn, &tmz, p.zeros, 2, rdims, rstr, rbox));
        void *args[4] = {&p, &tmc, &tms, &tmz};
        GK_TRY(gk_launch_dependent(fn, kern, grid, dim3(cfg->threads), cfg->smem_bytes, args, stream));
    } else
#endif
    {
        void *args[1] = {&p};
        const cudaError_t e = cudaLaunchKernel(kern, grid, dim3(cfg->threads), args, cfg->smem_bytes, stream);
        if (e != cudaSuccess) {
            (void)cudaGetLastError(); /* cleared, as gk_check_launch clears it */
            return gk__fail(e, fn, "launch failed: %s", cudaGetErrorString(e));
        }
    }
    if (p.g.partial) { /* the partials' sum, launched dependent: its blocks start as the GEMM's finish */
        int rw = cfg->row_tiles, nt = cfg->token_tiles;
        void *args[3] = {&p, &rw, &nt};
        const int64_t r8 = gk_ceil_div(m, 8);
        GK_TRY(gk_launch_dependent(fn, (const void *)gk_w4_reduce,
                                   dim3((unsigned)gk_ceil_div(n, 256), (unsigned)(r8 < 65535 ? r8 : 65535)), dim3(256), 0,
                                   args, stream));
    }
    return cudaSuccess;
}

GK_EXTERN_C_BEGIN

GK_IMPL size_t gk_w4_packed_bytes(int64_t n, int64_t k, int group, int zero_mode)
{
    gk__begin();
    if (gk__end("gk_w4_packed_bytes", gk_w4_check_shape("gk_w4_packed_bytes", n, k, group, zero_mode)) != cudaSuccess)
        return 0;
    return gk_w4_packed_bytes_of(n, k, group, zero_mode);
}

GK_IMPL cudaError_t gk_w4_prepack(void *packed, int dtype, const gk_int4x2 *q, const void *scales, int scale_dtype,
                                  const void *zeros, int64_t n, int64_t k, int group, int zero_mode, cudaStream_t stream)
{
    const char *fn = "gk_w4_prepack";
    gk__begin();
    cudaError_t e = gk_w4_check_shape(fn, n, k, group, zero_mode);
    if (e == cudaSuccess && dtype != GK_BF16 && dtype != GK_F16)
        e = gk__fail(cudaErrorInvalidValue, fn, "dtype %d is not GK_BF16 or GK_F16", dtype);
    if (e == cudaSuccess && scale_dtype != GK_BF16 && scale_dtype != GK_F16 && scale_dtype != GK_F32)
        e = gk__fail(cudaErrorInvalidValue, fn, "scale_dtype %d is not GK_BF16, GK_F16 or GK_F32", scale_dtype);
    if (e == cudaSuccess) e = gk_check_ptr(fn, "packed", packed);
    if (e == cudaSuccess && !gk_is_aligned(packed, 256)) e = gk__fail(cudaErrorInvalidValue, fn, "packed is not 256-byte aligned");
    if (e == cudaSuccess) e = gk_check_ptr(fn, "q", q);
    if (e == cudaSuccess) e = gk_check_ptr(fn, "scales", scales);
    if (e == cudaSuccess) e = gk_check_elem_aligned(fn, "scales", scales, gk_dtype_size(scale_dtype));
    if (e == cudaSuccess && zero_mode != GK_W4_SYMMETRIC) e = gk_check_ptr(fn, "zeros", zeros);
    if (e == cudaSuccess && zero_mode == GK_W4_ZEROS_FLOAT) e = gk_check_elem_aligned(fn, "zeros", zeros, gk_dtype_size(scale_dtype));
    if (e == cudaSuccess && zero_mode == GK_W4_SYMMETRIC && zeros)
        e = gk__fail(cudaErrorInvalidValue, fn, "zeros is given but zero_mode is GK_W4_SYMMETRIC");
    if (e == cudaSuccess) {
        const int64_t pb = (int64_t)gk_w4_packed_bytes_of(n, k, group, zero_mode), groups = k / group;
        const int64_t zb = zero_mode == GK_W4_ZEROS_INT4 ? groups * n / 2 : groups * n * gk_dtype_size(scale_dtype);
        e = gk_check_disjoint(fn, "packed", packed, pb, "q", q, n * k / 2);
        if (e == cudaSuccess) e = gk_check_disjoint(fn, "packed", packed, pb, "scales", scales, groups * n * gk_dtype_size(scale_dtype));
        if (e == cudaSuccess && zeros) e = gk_check_disjoint(fn, "packed", packed, pb, "zeros", zeros, zb);
    }
    if (e == cudaSuccess) {
        char *base = (char *)packed;
        const int64_t cb = gk_w4_codes_bytes(n, k), rb = gk_w4_records_bytes(n, k, group);
        int blocks;
        e = gk_w4_launch_grid(cb / 16, &blocks);
        if (e == cudaSuccess) {
            gk_w4_pack_codes<<<blocks, 256, 0, stream>>>((uint4 *)base, q, (int)n, (int)k, zero_mode == GK_W4_SYMMETRIC,
                                                         cb / 16);
            e = gk_check_launch(fn);
        }
        const int64_t rec = gk_w4_tiles(n) * (k / group) * 16;
        if (e == cudaSuccess) e = gk_w4_launch_grid(rec, &blocks);
        if (e == cudaSuccess) {
            gk_w4_pack_records<<<blocks, 256, 0, stream>>>((unsigned short *)(base + cb),
                                                           zero_mode ? (unsigned short *)(base + cb + rb) : NULL, dtype,
                                                           scales, scale_dtype, zeros, zero_mode, (int)n,
                                                           (int)(k / group), rec);
            e = gk_check_launch(fn);
        }
    }
    return gk__end(fn, e);
}

static cudaError_t gk_w4_convert(const char *fn, gk_int4x2 *q, gk_int4x2 *zeros, const int32_t *qweight,
                                 const int32_t *qzeros, int64_t n, int64_t k, int group, int awq, int offset,
                                 cudaStream_t stream)
{
    GK_TRY(gk_w4_check_shape(fn, n, k, group, GK_W4_SYMMETRIC));
    GK_TRY(gk_check_ptr(fn, "q", q));
    GK_TRY(gk_check_ptr(fn, "qweight", qweight));
    GK_TRY(gk_check_elem_aligned(fn, "qweight", qweight, 4));
    if (awq || qzeros) {
        GK_TRY(gk_check_ptr(fn, "qzeros", qzeros));
        GK_TRY(gk_check_elem_aligned(fn, "qzeros", qzeros, 4));
        GK_TRY(gk_check_ptr(fn, "zeros", zeros));
    } else if (zeros) {
        return gk__fail(cudaErrorInvalidValue, fn, "zeros is given without qzeros (a symmetric weight has none)");
    }
    const int64_t groups = k / group;
    GK_TRY(gk_check_disjoint(fn, "q", q, n * k / 2, "qweight", qweight, n * k / 2));
    if (zeros) {
        GK_TRY(gk_check_disjoint(fn, "zeros", zeros, groups * n / 2, "qzeros", qzeros, groups * n / 2));
        GK_TRY(gk_check_disjoint(fn, "zeros", zeros, groups * n / 2, "q", q, n * k / 2));
        GK_TRY(gk_check_disjoint(fn, "zeros", zeros, groups * n / 2, "qweight", qweight, n * k / 2));
    }
    int blocks;
    GK_TRY(gk_w4_launch_grid(n * k / 2, &blocks));
    gk_w4_convert_codes<<<blocks, 256, 0, stream>>>(q, (const int *)qweight, (int)n, (int)k, awq, !awq && !qzeros,
                                                    n * k / 2);
    GK_TRY(gk_check_launch(fn));
    if (zeros) {
        GK_TRY(gk_w4_launch_grid(groups * n / 2, &blocks));
        gk_w4_convert_zeros<<<blocks, 256, 0, stream>>>(zeros, (const int *)qzeros, (int)n, awq, offset, groups * n / 2);
        GK_TRY(gk_check_launch(fn));
    }
    return cudaSuccess;
}

GK_IMPL cudaError_t gk_w4_from_gptq(gk_int4x2 *q, gk_int4x2 *zeros, const int32_t *qweight, const int32_t *qzeros,
                                    const int32_t *host_g_idx, int64_t n, int64_t k, int group, int zero_offset,
                                    cudaStream_t stream)
{
    const char *fn = "gk_w4_from_gptq";
    gk__begin();
    cudaError_t e = cudaSuccess;
    if (zero_offset != 0 && zero_offset != 1)
        e = gk__fail(cudaErrorInvalidValue, fn, "zero_offset = %d is not 0 (GPTQ v2) or 1 (v1)", zero_offset);
    if (e == cudaSuccess) e = gk_w4_check_shape(fn, n, k, group, GK_W4_SYMMETRIC);
    if (e == cudaSuccess && host_g_idx)
        for (int64_t i = 0; i < k; i++)
            if (host_g_idx[i] != (int32_t)(i / group)) {
                e = gk__fail(cudaErrorInvalidValue, fn,
                             "g_idx[%lld] = %d, not %lld: act-order checkpoints are not supported (permute the weight's "
                             "K and the activations into group order first)",
                             (long long)i, (int)host_g_idx[i], (long long)(i / group));
                break;
            }
    if (e == cudaSuccess) e = gk_w4_convert(fn, q, zeros, qweight, qzeros, n, k, group, 0, zero_offset, stream);
    return gk__end(fn, e);
}

GK_IMPL cudaError_t gk_w4_from_awq(gk_int4x2 *q, gk_int4x2 *zeros, const int32_t *qweight, const int32_t *qzeros,
                                   int64_t n, int64_t k, int group, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_w4_from_awq", gk_w4_convert("gk_w4_from_awq", q, zeros, qweight, qzeros, n, k, group, 1, 0, stream));
}

GK_IMPL cudaError_t gk_w4_dequant(void *dst, int64_t lddst, const gk_w4_weight *w, cudaStream_t stream)
{
    const char *fn = "gk_w4_dequant";
    gk__begin();
    cudaError_t e = gk_w4_check_weight(fn, w);
    if (e == cudaSuccess) e = gk_check_ptr(fn, "dst", dst);
    if (e == cudaSuccess) e = gk_check_elem_aligned(fn, "dst", dst, 2);
    if (e == cudaSuccess && lddst < w->k)
        e = gk__fail(cudaErrorInvalidValue, fn, "lddst = %lld is smaller than k = %lld", (long long)lddst, (long long)w->k);
    if (e == cudaSuccess) e = gk_check_fits_i32(fn, "lddst", lddst);
    int64_t db = 0;
    if (e == cudaSuccess) e = gk_check_span(fn, "dst", w->n, w->k, lddst, 2, &db);
    if (e == cudaSuccess)
        e = gk_check_disjoint(fn, "dst", dst, db, "w->packed", w->packed,
                              (int64_t)gk_w4_packed_bytes_of(w->n, w->k, w->group, w->zero_mode));
    if (e == cudaSuccess) e = gk_w4_dequant_run(fn, dst, lddst, w, stream);
    return gk__end(fn, e);
}

GK_IMPL cudaError_t gk_w4_gemm_bf16(void *d, int d_dtype, int64_t ldd, const gk_bf16 *x, int64_t ldx,
                                    const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias, int64_t m,
                                    float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                    cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_w4_gemm_bf16", gk_w4_gemm_checked("gk_w4_gemm_bf16", -1, 0, GK_BF16, d, d_dtype, ldd, x, ldx, w,
                                                         c, ldc, bias, m, alpha, beta, act, workspace, workspace_bytes,
                                                         stream));
}

GK_IMPL cudaError_t gk_w4_gemm_f16(void *d, int d_dtype, int64_t ldd, const gk_f16 *x, int64_t ldx,
                                   const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias, int64_t m,
                                   float alpha, float beta, int act, void *workspace, size_t workspace_bytes,
                                   cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_w4_gemm_f16", gk_w4_gemm_checked("gk_w4_gemm_f16", -1, 0, GK_F16, d, d_dtype, ldd, x, ldx, w, c,
                                                        ldc, bias, m, alpha, beta, act, workspace, workspace_bytes,
                                                        stream));
}

GK_IMPL cudaError_t gk_w4_gemm_ex(int config, int warps, void *d, int d_dtype, int64_t ldd, const void *x,
                                  int64_t ldx, const gk_w4_weight *w, const void *c, int64_t ldc, const float *bias,
                                  int64_t m, float alpha, float beta, int act, void *workspace,
                                  size_t workspace_bytes, cudaStream_t stream)
{
    const char *fn = "gk_w4_gemm_ex";
    gk__begin();
    cudaError_t e = gk_check_ptr(fn, "w", w);
    if (e == cudaSuccess)
        e = gk_w4_gemm_checked(fn, config, warps, w->dtype, d, d_dtype, ldd, x, ldx, w, c, ldc, bias, m, alpha, beta,
                               act, workspace, workspace_bytes, stream);
    return gk__end(fn, e);
}

GK_IMPL gk_w4_plan gk_w4_plan_for(int64_t m, int64_t n, int64_t k, int group, int zero_mode, size_t workspace_bytes)
{
    const char *fn = "gk_w4_plan_for";
    gk_w4_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.config = -1;
    gk__begin();
    cudaError_t e = gk_check_positive(fn, "m", m);
    if (e == cudaSuccess) e = gk_check_fits_i32(fn, "m", m);
    if (e == cudaSuccess) e = gk_w4_check_shape(fn, n, k, group, zero_mode);
    int sms = 0, bpsm[GK_W4_NCONFIG];
    if (e == cudaSuccess) e = gk_sm_count(&sms);
    if (e == cudaSuccess) e = gk_w4_bpsm_all(bpsm);
    if (e == cudaSuccess) gk_w4_plan_impl(m, n, k, gk_w4_variant(group, zero_mode), workspace_bytes, sms, bpsm, gk_w4_wg_ready(), &pl);
    gk__end(fn, e);
    return pl;
}

GK_IMPL size_t gk_w4_workspace_bytes(int64_t m, int64_t n, int64_t k)
{
    const char *fn = "gk_w4_workspace_bytes";
    int sms = 0, bpsm[GK_W4_NCONFIG];
    gk__begin();
    cudaError_t e = gk_check_positive(fn, "m", m);
    if (e == cudaSuccess) e = gk_check_fits_i32(fn, "m", m);
    if (e == cudaSuccess) e = gk_w4_check_shape(fn, n, k, GK_W4_UNIT, GK_W4_SYMMETRIC); /* the group does not matter */
    if (e == cudaSuccess) e = gk_sm_count(&sms);
    if (e == cudaSuccess) e = gk_w4_bpsm_all(bpsm);
    if (gk__end(fn, e) != cudaSuccess) return 0;
    gk_w4_sched sc, lean; /* the general kernels' partials and the lean kernel's */
    gk_w4_schedule(-1, 0, m, n, k, 0, (size_t)-1, sms, bpsm, &sc);
    gk_w4_schedule(-1, 0, m, n, k, 2, (size_t)-1, sms, bpsm, &lean);
    size_t most = sc.partial_bytes > lean.partial_bytes ? sc.partial_bytes : lean.partial_bytes;
    const int wc = gk_w4_kind_for(m, 1), wg = gk_w4_wg_ready() && wc >= 0 && m > GK_W4_WGMMA_M;
    if (wg && m < GK_W4_WG_DEQUANT_M) { /* X staged, and its partials */
        gk_w4_sched wsc;
        gk_w4_schedule(wc, 0, m, n, k, 0, (size_t)-1, sms, bpsm, &wsc);
        if (gk_w4_sched_ws(&wsc) > most) most = gk_w4_sched_ws(&wsc);
    }
    const size_t dq = m >= (wg ? GK_W4_WG_DEQUANT_M : GK_W4_DEQUANT_M) ? gk_w4_dequant_ws(m, n, k) : 0;
    return most > dq ? most : dq;
}

GK_IMPL int gk_w4_config_count(void) { return GK_W4_NCONFIG; }

GK_IMPL gk_w4_config gk_w4_config_info(int config)
{
    gk_w4_config c;
    memset(&c, 0, sizeof c);
    if (config >= 0 && config < GK_W4_NCONFIG) c = *gk_w4_config_table[config];
    return c;
}

GK_IMPL gk_ledger gk_w4_ledger(int64_t m, int64_t n, int64_t k, int group, int zero_mode, int x_dtype, int d_dtype,
                               int has_bias)
{
    gk_ledger l;
    const double groups = group > 0 ? (double)k / group : 0.0;
    l.flops = 2.0 * (double)m * n * k;
    l.bytes = (double)n * k / 2 + groups * n * 2 * (zero_mode == GK_W4_SYMMETRIC ? 1 : 2) +
              (double)m * k * gk_dtype_size(x_dtype) + (double)m * n * gk_dtype_size(d_dtype) + (has_bias ? n * 4.0 : 0.0);
    return l;
}

GK_EXTERN_C_END

#endif /* GK_QUANT_IMPLEMENTATION */
