/* gk_reduce.cuh - gk row reductions v0.1: RMSNorm, LayerNorm, softmax and log-softmax, fused
   residual add + RMSNorm, RMSNorm + fp8 e4m3 quantization and per-row fp8 quantization, for rows
   of 1 to 2^31 - 1 columns, at the memory-bandwidth limit.

   Needs gk_core.cuh (same folder). In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_REDUCE_IMPLEMENTATION for this header alone)
       #include "gk_reduce.cuh"

   PUBLIC FUNCTIONS (T in f32, bf16, f16: input, output, weight and bias share it; x is
   [rows, cols] with row stride ldx elements, out likewise with ldo; fp32 math; deterministic)
     gk_rmsnorm_T(out, ldo, x, ldx, weight, rows, cols, eps, stream)
         out = x / sqrt(mean(x^2) + eps) * weight          weight may be NULL (ones)
     gk_layernorm_T(out, ldo, x, ldx, weight, bias, rows, cols, eps, stream)
         out = (x - mean) / sqrt(var + eps) * weight + bias  (biased variance; either may be NULL)
     gk_softmax_T(out, ldo, x, ldx, rows, cols, scale, stream)
         out = exp(scale*x - max) / sum exp(scale*x - max)   (the max is subtracted: safe for any logits)
     gk_log_softmax_T(out, ldo, x, ldx, rows, cols, scale, stream)
         out = scale*x - max - log(sum exp(scale*x - max))
     gk_residual_rmsnorm_T(out, ldo, residual_out, residual, ldr, x, ldx, weight, rows, cols, eps, stream)
         h = round_T(residual + x); residual_out = h; out = rmsnorm(h) * weight. residual_out may be
         residual (in place); both use row stride ldr. The norm reads h as stored, so the fused
         result equals gk_residual_add then gk_rmsnorm exactly.
     gk_rmsnorm_quant_e4m3_T(out, ldo, scales, x, ldx, weight, rows, cols, eps, stream)
         y = rmsnorm(x) * weight (fp32; where the row is held, in registers for bf16 and f32 and
         in the streaming kernels' shared memory for bf16, it is held as x * weight rounded to T,
         so y and the scale can differ from the fp32 ones by one rounding of T);
         scales[r] = max|y| / 448 (1 if the row is all zero);
         out = e4m3(y / scales[r]), saturating at +-448: finite input never gives inf or NaN.
         Dequantize with out * scales[r]. out is gk_e4m3 (bytes), ldo in elements.
     gk_quant_e4m3_T(out, ldo, scales, x, ldx, rows, cols, stream)
         per-row (per-token) dynamic quantization alone: scales[r] = max|x| / 448.
     gk_reduce_ledger(op, dt, rows, cols)    fewest bytes and FLOPs of one call (gk_rd_op)

   SPECIAL VALUES
     A NaN in a row makes the norms' and softmax's output NaN for the whole row (the sums carry
     it). The fp8 forms take their scale from the row's max |y| by fmaxf, which passes over NaN:
     gk_quant_e4m3 codes a NaN as NaN (0x7f) and scales the row by its other values;
     gk_rmsnorm_quant_e4m3, whose whole row is then NaN, gives NaN codes and scale 1.
     Softmax of a row whose entries are all -inf is 0 everywhere (a fully masked row contributes
     nothing), and log-softmax of it is -inf; -inf entries in other rows give 0 (log: -inf).

   ARGUMENTS AND ERRORS
     rows == 0 or cols == 0 is a no-op (no pointer is inspected). A negative size, a stride
     smaller than cols, a null pointer (other than weight and bias), a pointer not aligned to its
     element size, an operand spanning past 2^63 bytes, or an output partially overlapping an
     input returns cudaErrorInvalidValue before anything launches; gk_failure_reason() names the
     function and the argument. out may equal x (in place) where they share a dtype and a stride.

   HOW IT RUNS (the dispatcher picks by width; v = cols / (16 bytes / sizeof(T)) vectors a row)
     v <= 128      a group of 1..32 lanes per row (32 / group rows per warp), the row in registers,
                   shuffle reductions only;
     v <= 1024     a block of 64..256 threads per row (the fewest that hold it), the row in
                   registers, warp shuffles then shared memory (bank-conflict-free: one word per
                   warp); the statistics reduce as pairs (sum and sum of squares about the first
                   element; softmax's online (max, sum)): one barrier round per row;
     v <= 2048     the same with 512 threads;
     wider         a block of 1024 threads per row, two passes over the row: statistics first
                   (online max and sum for softmax; sum and sum of squares about the row's first
                   element for LayerNorm), then the output. Where a block's share of shared
                   memory with two blocks an SM (~112 KB on sm_90) holds at least half of the
                   row, pass 1 fetches that much of it there by cp.async and pass 2 reads it
                   back (each thread its own consecutive 16-byte vectors: a warp's accesses are
                   conflict-free). Wider rows are split on sm_90 over a cluster of 2..8 such
                   blocks, the fewest whose parts the stash and one vector a thread hold: each
                   block takes an equal 16-byte-aligned part of the row as a row of its own, and
                   the parts' statistics combine through distributed shared memory after one
                   cluster barrier. Elsewhere (and f16 LayerNorm, whose split kernel spills) they
                   run one block an SM and read the row again from L2.
     Softmax takes a thread's max over all the values it holds, then one exp (ex2.approx) per
     value; in the register variants those exps replace the held values (rounded to T, at most
     one more rounding of T: within the tolerance), so the output pass only scales them. RMSNorm +
     fp8 (bf16, f32; bf16 in the stash too) likewise holds x * weight rounded to T, so it reads the
     weight once.
     Rows whose starts (of every operand) are 16-byte aligned move 16-byte vectors; otherwise
     every element moves alone, correct for any stride and offset. Rows of whole vectors (aligned,
     and cols a multiple of a vector) run copies of the register and stash kernels with no
     per-vector checks, where those measured faster (the shipped kernel list, in the
     implementation; RMSNorm + fp8 87% -> 94% of copy bandwidth at [16384, 8192] bf16).

   CONFIG MACROS
     GK_RD_SLOTS          16-byte vectors a thread holds in the register variants, default 4
     GK_RD_STREAM_BATCH   16-byte vectors a thread has in flight a round in the one-block streaming
                          kernel, default 2
     GK_RD_MIN_BLOCKS     resident 256-thread blocks per SM to compile the block-per-row kernels
                          for, default 5 (48 registers; f16 forms other than RMSNorm and quant: 4)
     GK_RD_STREAM_THREADS threads of a streaming block, default 1024
     GK_RD_SPLIT_MAX      most blocks a row too wide for one stash is split over, default 8

   THE LEDGER (per call; n = rows * cols, s = sizeof(T))
     rmsnorm n(2s) + cols s; layernorm n(2s) + 2 cols s; softmax n(2s); residual_rmsnorm n(4s)
     + cols s; rmsnorm_quant n(s + 1) + cols s + 4 rows; quant n(s + 1) + 4 rows.
     FLOPs per element: rmsnorm 4, layernorm 7, softmax 5, residual_rmsnorm 5, quant forms 6 / 3.

   DROP-IN EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_reduce.cuh"
       // x, out: [4096, 8192] bf16 on the device; w: [8192]
       cudaError_t e = gk_rmsnorm_bf16(out, 8192, x, 8192, w, 4096, 8192, 1e-6f, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"

#ifndef GK_REDUCE_CUH
#define GK_REDUCE_CUH

#ifndef GK_RD_SLOTS
#define GK_RD_SLOTS 4
#endif
/* Resident 256-thread blocks per SM the block-per-row kernels are compiled for: 5 (48 registers a
   thread) keeps more rows in flight for a row's serial phases (load, reduce, store): LayerNorm
   85% -> 90% of copy bandwidth at [16384, 8192] bf16. The f16 forms other than RMSNorm and
   quantization spill at 48 registers, so they get one block fewer. */
#ifndef GK_RD_MIN_BLOCKS
#define GK_RD_MIN_BLOCKS 5
#endif
#define GK_RD_ROW_BLOCKS(op, dt) \
    ((dt) == GK_F16 && (op) != GK_RD_RMSNORM && (op) != GK_RD_QUANT && GK_RD_MIN_BLOCKS > 1 ? GK_RD_MIN_BLOCKS - 1 \
                                                                                        : GK_RD_MIN_BLOCKS)
/* The group kernels spill at 48 registers: 4 blocks (64); softmax's at 64 on sm_80 (f16): 2. */
#define GK_RD_GROUP_BLOCKS(op) ((op) == GK_RD_SOFTMAX ? 2 : 4)
/* Vectors per thread in flight per round of the one-block streaming kernel (registers: 2 x 4 each). */
#ifndef GK_RD_STREAM_BATCH
#define GK_RD_STREAM_BATCH 2
#endif
/* Threads of a streaming block. Streaming rows run on one of two kernels: the stash kernel (two
   blocks an SM, 32 registers; pass 1 fetches as much of the row as the block's share of shared
   memory holds, ~112 KB on sm_90, by cp.async, all of it in flight at once, and pass 2 reads it
   back) where that holds at least half of the row, else the plain one (one block an SM,
   GK_RD_STREAM_BATCH vectors a round through registers; pass 2 reads the row again from L2).
   Two blocks an SM without a stash thrash L2; the stash took RMSNorm at [1024, 65536] bf16 from
   67.6 to 77.4% of copy bandwidth. */
#ifndef GK_RD_STREAM_THREADS
#define GK_RD_STREAM_THREADS 1024
#endif
/* Most blocks a row too wide for one stash is split over (a cluster; 8 is the portable most). */
#ifndef GK_RD_SPLIT_MAX
#define GK_RD_SPLIT_MAX 8
#endif
/* Bytes past the stash of a split block: its two statistics slots (a float pair each); as 16
   bytes of static shared memory they cost the stash kernels 2-4 points at [1024, 65536]. */
#define GK_RD_SPLIT_SLOTS 16
typedef enum gk_rd_op {
    GK_RD_RMSNORM = 0,
    GK_RD_LAYERNORM = 1,
    GK_RD_SOFTMAX = 2,
    GK_RD_LOG_SOFTMAX = 3,
    GK_RD_RESIDUAL_RMSNORM = 4,
    GK_RD_RMSNORM_QUANT = 5,
    GK_RD_QUANT = 6
} gk_rd_op;
#define GK_RD_NOPS 7

/* ---------------------------------------------------------------- public API */

GK_EXTERN_C_BEGIN
GK_DECL cudaError_t gk_rmsnorm_f32(float *out, int64_t ldo, const float *x, int64_t ldx, const float *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_layernorm_f32(float *out, int64_t ldo, const float *x, int64_t ldx, const float *weight,
                                  const float *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_softmax_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_log_softmax_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_rmsnorm_f32(float *out, int64_t ldo, float *residual_out, const float *residual,
                                         int64_t ldr, const float *x, int64_t ldx, const float *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_rmsnorm_quant_e4m3_f32(gk_e4m3 *out, int64_t ldo, float *scales, const float *x, int64_t ldx,
                                           const float *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream);
GK_DECL cudaError_t gk_quant_e4m3_f32(gk_e4m3 *out, int64_t ldo, float *scales, const float *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream);

GK_DECL cudaError_t gk_rmsnorm_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_layernorm_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight,
                                  const gk_bf16 *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_softmax_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_log_softmax_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_rmsnorm_bf16(gk_bf16 *out, int64_t ldo, gk_bf16 *residual_out, const gk_bf16 *residual,
                                         int64_t ldr, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_rmsnorm_quant_e4m3_bf16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_bf16 *x, int64_t ldx,
                                           const gk_bf16 *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream);
GK_DECL cudaError_t gk_quant_e4m3_bf16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_bf16 *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream);

GK_DECL cudaError_t gk_rmsnorm_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, const gk_f16 *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_layernorm_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, const gk_f16 *weight,
                                  const gk_f16 *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_softmax_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_log_softmax_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_rmsnorm_f16(gk_f16 *out, int64_t ldo, gk_f16 *residual_out, const gk_f16 *residual,
                                         int64_t ldr, const gk_f16 *x, int64_t ldx, const gk_f16 *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream);
GK_DECL cudaError_t gk_rmsnorm_quant_e4m3_f16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_f16 *x, int64_t ldx,
                                           const gk_f16 *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream);
GK_DECL cudaError_t gk_quant_e4m3_f16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_f16 *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream);

/* Fewest bytes through device memory and the FLOPs of one call. */
GK_DECL gk_ledger gk_reduce_ledger(int op, int dt, int64_t rows, int64_t cols);
GK_EXTERN_C_END

GK_HD int gk_reduce_flops_per_elem(int op)
{
    switch (op) {
    case GK_RD_RMSNORM: return 4;
    case GK_RD_LAYERNORM: return 7;
    case GK_RD_SOFTMAX:
    case GK_RD_LOG_SOFTMAX: return 5;
    case GK_RD_RESIDUAL_RMSNORM: return 5;
    case GK_RD_RMSNORM_QUANT: return 6;
    default: return 3;
    }
}

#ifdef __CUDACC__

/* exp on the device's fast path (ex2.approx, about 2 ulp), exact-rounded libm on the host. */
GK_HD float gk_rd_exp(float v)
{
#ifdef __CUDA_ARCH__
    return __expf(v);
#else
    return expf(v);
#endif
}

/* Online softmax state (running max m, sum s of exp(v - m)): merging two partial states of any
   split of a row gives the state of the whole row. An empty part is (-inf, 0). */
GK_HD void gk_softmax_merge(float *m, float *s, float m2, float s2)
{
    const float mn = fmaxf(*m, m2);
    if (mn == -INFINITY) { /* both parts empty or all -inf: (-inf, 0) stays, a NaN sum too */
        *s += s2;
        return;
    }
    *s = *s * gk_rd_exp(*m - mn) + s2 * gk_rd_exp(m2 - mn);
    *m = mn;
}

/* One more value into an online softmax state. */
GK_HD void gk_softmax_push(float *m, float *s, float v)
{
    if (v > *m) {
        *s = *s * gk_rd_exp(*m - v) + 1.0f;
        *m = v;
    } else if (v != -INFINITY) {
        *s += gk_rd_exp(v - *m);
    }
}

/* ---------------------------------------------------------------- device building blocks */

typedef struct gk_rd_args {
    void *out;
    const void *x;
    const void *w, *b;        /* weight and bias, NULL: ones and zeros */
    void *res_out;            /* residual forms */
    const void *res;
    float *scales;            /* quant forms: one per row */
    int64_t ldo, ldx, ldr;    /* row strides in elements */
    int64_t rows;
    int64_t cols64;           /* as the caller gave it: validated, then narrowed to cols */
    int cols;
    float eps, scale;         /* scale: softmax input scale */
    int log;                  /* softmax: log-softmax */
    int vectorized;           /* every operand's row starts allow 16-byte vectors */
    int wvec;                 /* weight and bias allow 16-byte vectors */
    int group;                /* lanes per row in the group kernel */
    int stash;                /* streaming: vectors of a row pass 1 keeps in shared memory for pass 2 */
} gk_rd_args;

/* Rows of whole vectors: every operand aligned and cols a multiple of a vector, so a vector that
   starts inside the row ends inside it. Kernels for them pass whole = 1 and the helpers below
   get end = j0 + vec (the end of the row as their checks see it): no check is left. */
GK_DEV int gk_rd_end(int cols, int j0, int vec, int whole) { return whole ? j0 + vec : cols; }

/* Values of the vector at column j0 inside the row. */
GK_DEV int gk_rd_avail(int cols, int j0, int vec, int whole) { return whole ? (j0 < cols ? vec : 0) : cols - j0; }

/* vec elements from column j0 of a row into x: one 16-byte load when allowed, else one by one
   (columns past the row read as `pad`). */
GK_DEV void gk_rd_load(const void *row, int j0, int cols, int dt, int vec, int vectorized, float pad, float *x)
{
    if (vectorized && j0 + vec <= cols) {
        gk_unpack_f32(gk_ld16((const char *)row + (int64_t)j0 * gk_dtype_size(dt)), dt, vec, x);
        return;
    }
#pragma unroll
    for (int e = 0; e < vec; e++) x[e] = j0 + e < cols ? gk_load1_f32(row, j0 + e, dt) : pad;
}

GK_DEV void gk_rd_store(void *row, int j0, int cols, int dt, int vec, int vectorized, const float *y)
{
    if (vectorized && j0 + vec <= cols) {
        gk_st16((char *)row + (int64_t)j0 * gk_dtype_size(dt), gk_pack_f32(y, dt, vec));
        return;
    }
#pragma unroll
    for (int e = 0; e < vec; e++)
        if (j0 + e < cols) gk_store1_f32(row, j0 + e, dt, y[e]);
}

/* vec fp8 codes from y (already scaled; saturating), at column j0 of an e4m3 row. */
GK_DEV void gk_rd_store_e4m3(void *row, int j0, int cols, int vec, int vectorized, const float *y)
{
    const uint2 c = gk_pack_e4m3(y, vec);
    const unsigned lo = c.x, hi = c.y;
    unsigned char *p = (unsigned char *)row + j0;
    if (vectorized && j0 + vec <= cols) {
        if (vec == 4) *(unsigned *)p = lo;
        else *(uint2 *)p = make_uint2(lo, hi);
        return;
    }
#pragma unroll
    for (int e = 0; e < vec; e++)
        if (j0 + e < cols) p[e] = (unsigned char)((e < 4 ? lo >> (8 * e) : hi >> (8 * (e - 4))) & 0xffu);
}

/* The weight (ones if NULL) and bias (zeros) of vec columns from j0, for the ops that use them. */
GK_DEV void gk_rd_params(const gk_rd_args a, int op, int dt, int j0, int end, int vec, float *w, float *bias)
{
#pragma unroll
    for (int e = 0; e < vec; e++) {
        w[e] = 1.0f;
        bias[e] = 0.0f;
    }
    if (op == GK_RD_SOFTMAX || op == GK_RD_QUANT) return;
    if (a.w) gk_rd_load(a.w, j0, end, dt, vec, a.wvec, 1.0f, w);
    if (op == GK_RD_LAYERNORM && a.b) gk_rd_load(a.b, j0, end, dt, vec, a.wvec, 0.0f, bias);
}

/* How gk_rd_reduce_pair combines two threads' pairs (a, b). */
enum { GK_RD_PAIR_SUMS = 0, GK_RD_PAIR_SUM_MAX = 1, GK_RD_PAIR_SOFTMAX = 2 };

GK_DEV void gk_rd_combine(int kind, float *a, float *b, float a2, float b2)
{
    if (kind == GK_RD_PAIR_SOFTMAX) {
        gk_softmax_merge(a, b, a2, b2); /* online softmax state (m, s) */
        return;
    }
    *a += a2;
    *b = kind == GK_RD_PAIR_SUM_MAX ? fmaxf(*b, b2) : *b + b2;
}

/* The float at p in the shared memory of the cluster's block `rank`. */
GK_DEV float gk_rd_ld_cluster(const float *p, int rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(gk_cluster_map(p, rank)) : "memory");
    return v;
#else
    (void)rank;
    return *p;
#endif
}

/* The pair of an empty part: (-inf, 0) for softmax, (0, -inf) for a sum and a max, (0, 0) for sums. */
GK_DEV float gk_rd_empty_a(int kind) { return kind == GK_RD_PAIR_SOFTMAX ? -INFINITY : 0.0f; }
GK_DEV float gk_rd_empty_b(int kind) { return kind == GK_RD_PAIR_SUM_MAX ? -INFINITY : 0.0f; }

/* Lane i's pair combined with those of lanes i ^ 1 .. i ^ (width / 2): every lane of a width
   gets the same bits (each combine is symmetric). */
GK_DEV void gk_rd_butterfly(float *a, float *b, int kind, int width)
{
    for (int o = width >> 1; o > 0; o >>= 1)
        gk_rd_combine(kind, a, b, __shfl_xor_sync(0xffffffffu, *a, o), __shfl_xor_sync(0xffffffffu, *b, o));
}

/* Two values reduced at once over the threads of one row (a group of lanes, or the whole
   block), every thread getting the row's pair: sums, a sum and a max, or an online softmax
   state. One reduction instead of two halves the barriers of the block variants. */
GK_DEV void gk_rd_reduce_pair(float *a, float *b, int kind, int block_level, int group, float *scratch)
{
    gk_rd_butterfly(a, b, kind, block_level ? 32 : group);
    if (!block_level) return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) {
        scratch[warp] = *a;
        scratch[32 + warp] = *b;
    }
    __syncthreads();
    *a = lane < nwarps ? scratch[lane] : gk_rd_empty_a(kind);
    *b = lane < nwarps ? scratch[32 + lane] : gk_rd_empty_b(kind);
    gk_rd_butterfly(a, b, kind, 32);
    __syncthreads();
}

/* A block's pair (the same in all its threads) combined over its cluster of n <= 32 blocks, each
   holding a part of the row: thread 0 puts it in slot (two floats of this block's shared memory),
   a cluster barrier, then every block combines all n slots in the same order, so all get the
   same bits. A row alternates between two slots: a slot is rewritten only after the next row's
   barrier, which no block passes before every block has read it. */
GK_DEV void gk_rd_cluster_pair(float *a, float *b, int kind, float *slot, int n)
{
    if (threadIdx.x == 0) {
        slot[0] = *a;
        slot[1] = *b;
    }
    gk_cluster_sync();
    const int lane = threadIdx.x & 31;
    *a = lane < n ? gk_rd_ld_cluster(slot, lane) : gk_rd_empty_a(kind);
    *b = lane < n ? gk_rd_ld_cluster(slot + 1, lane) : gk_rd_empty_b(kind);
    gk_rd_butterfly(a, b, kind, 32);
}

/* Per-row statistics, turned into what the output pass needs. */
typedef struct gk_rd_stats {
    float a; /* rmsnorm, layernorm: 1 / sqrt(. + eps); softmax: the max (0 for an all -inf row);
                quant forms: the whole factor to fp8 units, rstd * 448 / max|y| */
    float b; /* layernorm: mean; softmax: 1 / sum (log: log sum) */
} gk_rd_stats;

/* The output of one element. */
GK_DEV float gk_rd_out(int op, float x, gk_rd_stats st, float w, float bias, float scale, int log)
{
    switch (op) {
    case GK_RD_LAYERNORM: return (x - st.b) * st.a * w + bias;
    case GK_RD_SOFTMAX: {
        const float v = scale * x - st.a;
        return log ? v - st.b : __expf(v) * st.b;
    }
    case GK_RD_QUANT: return x * st.a;
    default: return x * st.a * w; /* rmsnorm forms (the quant form's st.a includes the fp8 scale) */
    }
}

/* From the row's sum of exp(v - max): 1 / sum, or log(sum) for log-softmax; an all -inf row has
   sum 0 (softmax 0, log-softmax -inf) and a NaN sum stays NaN. */
GK_DEV float gk_rd_softmax_norm(float s, int log)
{
    if (s != s) return s;
    if (log) return s > 0.0f ? logf(s) : INFINITY;
    return s > 0.0f ? 1.0f / s : 0.0f;
}

/* Accumulates one value into the per-thread statistics (sa, sb) of op (softmax: gk_rd_softmax_slots). */
GK_DEV void gk_rd_accumulate(int op, float v, float w, float pivot, float *sa, float *sb)
{
    if (op == GK_RD_LAYERNORM) {                                 /* deviations from the pivot */
        *sa += v - pivot;
        *sb += (v - pivot) * (v - pivot);
    } else if (op == GK_RD_QUANT) *sb = fmaxf(*sb, fabsf(v));   /* (unused, max|x|) */
    else {                                                       /* (sum x^2, max|x w|) */
        *sa += v * v;
        if (op == GK_RD_RMSNORM_QUANT) *sb = fmaxf(*sb, fabsf(v * w));
    }
}

/* The first n of vec values (weights w for RMSNorm + fp8) into the statistics; a full vector
   (n >= vec) pays no per-value bounds check. */
GK_DEV void gk_rd_accumulate_n(int op, const float *x, const float *w, int vec, int n, float pivot, float *sa, float *sb)
{
#pragma unroll
    for (int e = 0; e < 8; e++)
        if (e < vec && e < n) gk_rd_accumulate(op, x[e], op == GK_RD_RMSNORM_QUANT ? w[e] : 1.0f, pivot, sa, sb);
}

GK_DEV void gk_rd_accumulate_vec(int op, const float *x, const float *w, int vec, int n, float pivot, float *sa, float *sb)
{
    if (n >= vec) gk_rd_accumulate_n(op, x, w, vec, vec, pivot, sa, sb);
    else gk_rd_accumulate_n(op, x, w, vec, n, pivot, sa, sb);
}

/* The max of scale * x over the first n of vec values (n >= vec: all; a literal after inlining
   at the call below, so full vectors pay no per-value bounds check). */
GK_DEV float gk_rd_vmax(const float *x, int vec, int n, float scale, float m)
{
#pragma unroll
    for (int e = 0; e < 8; e++)
        if (e < vec && e < n) m = fmaxf(m, scale * x[e]);
    return m;
}

/* exp(scale * x - max) = 2^(x c - mc) of the first n of vec values into p (0 past n); their sum. */
GK_DEV float gk_rd_vexp(const float *x, int vec, int n, float c, float mc, float *p)
{
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        if (e >= vec) break;
        p[e] = e < n ? gk_ex2_approx(fmaf(x[e], c, -mc)) : 0.0f;
        s += p[e];
    }
    return s;
}

/* Softmax statistics of nk vectors a thread holds packed in raw (vector k at column j + k * step):
   their common max first, then one exp per value (no rescaling), merged once into the thread's
   state (m, s). With keep, the exps replace the values in raw (rounded to dt), so the output pass
   needs a multiply and no exp. A per-value online update (a branch, a rescale and an accurate exp
   per value) ran at 46% of copy bandwidth at [16384, 8192] bf16. */
GK_DEV void gk_rd_softmax_slots(uint4 *raw, int nk, int j, int step, int cols, int whole, int dt, int vec,
                                float scale, int keep, float *m, float *s)
{
    float mk = -INFINITY, sk = 0.0f;
#pragma unroll
    for (int k = 0; k < nk; k++) {
        const int n = gk_rd_avail(cols, j + k * step, vec, whole);
        float x[8];
        gk_unpack_f32(raw[k], dt, vec, x);
        mk = n >= vec ? gk_rd_vmax(x, vec, vec, scale, mk) : gk_rd_vmax(x, vec, n, scale, mk);
    }
    const float c = scale * GK_LOG2E, mc = (mk == -INFINITY ? 0.0f : mk) * GK_LOG2E;
#pragma unroll
    for (int k = 0; k < nk; k++) {
        const int n = gk_rd_avail(cols, j + k * step, vec, whole);
        float x[8], p[8];
        gk_unpack_f32(raw[k], dt, vec, x);
        sk += n >= vec ? gk_rd_vexp(x, vec, vec, c, mc, p) : gk_rd_vexp(x, vec, n, c, mc, p);
        if (keep) raw[k] = gk_pack_f32(p, dt, vec);
    }
    gk_softmax_merge(m, s, mk, sk);
}

/* Statistics' starting value: softmax's running max from -inf, everything else from 0. */
GK_DEV float gk_rd_init_a(int op) { return op == GK_RD_SOFTMAX ? -INFINITY : 0.0f; }

/* How op's per-thread statistics combine. */
GK_DEV int gk_rd_pair_kind(int op)
{
    return op == GK_RD_SOFTMAX ? GK_RD_PAIR_SOFTMAX : op == GK_RD_LAYERNORM ? GK_RD_PAIR_SUMS : GK_RD_PAIR_SUM_MAX;
}

/* The row's gk_rd_stats from its reduced pair; the quant forms also write the row's scale. */
GK_DEV gk_rd_stats gk_rd_derive(const gk_rd_args a, int op, float sa, float sb, float pivot, int64_t r, int writer)
{
    gk_rd_stats st;
    if (op == GK_RD_SOFTMAX) {
        st.a = sa == -INFINITY ? 0.0f : sa;
        st.b = gk_rd_softmax_norm(sb, a.log);
        return st;
    }
    if (op == GK_RD_LAYERNORM) {
        const float d = sa / a.cols;
        st.a = rsqrtf(fmaxf(sb / a.cols - d * d, 0.0f) + a.eps);
        st.b = pivot + d;
        return st;
    }
    st.a = op == GK_RD_QUANT ? 1.0f : rsqrtf(sa / a.cols + a.eps);
    st.b = 1.0f;
    if (op == GK_RD_QUANT || op == GK_RD_RMSNORM_QUANT) {
        const float amax = op == GK_RD_QUANT ? sb : sb * st.a; /* rstd > 0: max|x w| rstd = max|x rstd w| */
        st.a *= amax > 0.0f ? 448.0f / amax : 1.0f;
        if (writer) a.scales[r] = amax > 0.0f ? amax / 448.0f : 1.0f;
    }
    return st;
}

/* Reduces the per-thread statistics over the row into gk_rd_stats; the quant forms also write
   the row's scale (writer: one thread of the row). */
GK_DEV gk_rd_stats gk_rd_finish(const gk_rd_args a, int op, float sa, float sb, float pivot, int64_t r, int writer,
                                int block_level, int group, float *scratch)
{
    gk_rd_reduce_pair(&sa, &sb, gk_rd_pair_kind(op), block_level, group, scratch);
    return gk_rd_derive(a, op, sa, sb, pivot, r, writer);
}

/* vec elements of a row from column j0 as one packed register vector of dtype dt: a 16-byte
   load when allowed, else element by element (columns past the row are 0). Rows stay packed
   while held, half the registers of fp32 values, so more rows are in flight per SM. */
GK_DEV uint4 gk_rd_load_raw(const void *row, int j0, int cols, int dt, int vec, int vectorized)
{
    if (vectorized && j0 + vec <= cols) return gk_ld16((const char *)row + (int64_t)j0 * gk_dtype_size(dt));
    float x[8];
#pragma unroll
    for (int e = 0; e < vec; e++) x[e] = j0 + e < cols ? gk_load1_f32(row, j0 + e, dt) : 0.0f;
    return gk_pack_f32(x, dt, vec); /* exact: the values came from dt */
}

/* Vector j0 of a bf16 weight row (ones if there is none). */
GK_DEV uint4 gk_rd_weight_bf16(const gk_rd_args a, int j0, int end)
{
    return a.w ? gk_rd_load_raw(a.w, j0, end, GK_BF16, 8, a.wvec) : make_uint4(0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u);
}

/* One bf16 vector x replaced by x w on pairs, and m2, the running max|x w| on pairs. */
GK_DEV __nv_bfloat162 gk_rd_fold_vec_bf16x2(uint4 *raw, uint4 w, __nv_bfloat162 m2)
{
    unsigned *rv = (unsigned *)raw;
    const unsigned *wv = (const unsigned *)&w;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        __nv_bfloat162 p = __hmul2(*(const __nv_bfloat162 *)&rv[i], *(const __nv_bfloat162 *)&wv[i]);
        rv[i] = *(const unsigned *)&p;
        const unsigned ab = rv[i] & 0x7fff7fffu; /* |.| of both halves */
        m2 = __hmax2(m2, *(const __nv_bfloat162 *)&ab); /* NaN ignored, as fmaxf does */
    }
    return m2;
}

/* RMSNorm + fp8 statistics of bf16 rows held packed in raw (vector k at column j + k * step): sum
   x^2 into sa, raw replaced by x w on bf16 pairs (one rounding of the exact product: the same bits
   as the fp32 product rounded to bf16), and max|x w| taken on pairs too (returned). Half the
   instructions of widening x and w: the form was issue-bound (82% of issue slots busy). */
GK_DEV float gk_rd_fold_w_bf16x2(const gk_rd_args a, uint4 *raw, int nk, int j, int step, int whole, float *sa)
{
    const int cols = a.cols;
    __nv_bfloat162 m2 = __float2bfloat162_rn(0.0f);
#pragma unroll
    for (int k = 0; k < nk; k++) {
        const int j0 = j + k * step;
        if (j0 >= cols) continue;
        float x[8];
        gk_unpack_f32(raw[k], GK_BF16, 8, x);
        gk_rd_accumulate_vec(GK_RD_RMSNORM, x, x, 8, gk_rd_avail(cols, j0, 8, whole), 0.0f, sa, sa); /* zero padding adds 0 */
    }
#pragma unroll
    for (int k = 0; k < nk; k++) {
        const int j0 = j + k * step;
        if (j0 >= cols) continue;
        m2 = gk_rd_fold_vec_bf16x2(&raw[k], gk_rd_weight_bf16(a, j0, gk_rd_end(cols, j0, 8, whole)), m2);
    }
    return fmaxf(__low2float(m2), __high2float(m2));
}

/* Register variant: the row lives packed in raw[k], slot k covering vector k * G + t. */
GK_DEV void gk_rd_regs_rows(const gk_rd_args a, int op, int dt, int block_level, int whole)
{
    __shared__ float scratch[64];
    const int vec = 16 / gk_dtype_size(dt);
    const int G = block_level ? (int)blockDim.x : a.group;
    const int t = block_level ? (int)threadIdx.x : (int)(threadIdx.x % a.group);
    const int64_t per_block = block_level ? 1 : blockDim.x / a.group;
    const int64_t in_block = block_level ? 0 : threadIdx.x / a.group;
    const int64_t step = (int64_t)gridDim.x * per_block;
    const int cols = a.cols, quant = op == GK_RD_RMSNORM_QUANT || op == GK_RD_QUANT;
    /* RMSNorm + fp8 holds x w rounded to dt (far finer than fp8) instead of x; not for f16, whose
       range x w may leave */
    const int fold_w = op == GK_RD_RMSNORM_QUANT && dt != GK_F16, pairs_w = fold_w && dt == GK_BF16;

    /* Every lane of a warp runs the same number of rounds (shuffles need all 32): a group past
       the last row works on row rows-1 and stores nothing. */
    for (int64_t base = (int64_t)blockIdx.x * per_block; base < a.rows; base += step) {
        const int64_t r_want = base + in_block;
        const int live = r_want < a.rows;
        const int64_t r = live ? r_want : a.rows - 1;
        const void *xr = (const char *)a.x + r * a.ldx * gk_dtype_size(dt);
        uint4 raw[GK_RD_SLOTS];
#pragma unroll
        for (int k = 0; k < GK_RD_SLOTS; k++) {
            const int j0 = (k * G + t) * vec;
            raw[k] = j0 < cols ? gk_rd_load_raw(xr, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized) : make_uint4(0u, 0u, 0u, 0u);
        }
        if (op == GK_RD_RESIDUAL_RMSNORM) {
            const void *rr = (const char *)a.res + r * a.ldr * gk_dtype_size(dt);
            void *ro = (char *)a.res_out + r * a.ldr * gk_dtype_size(dt);
#pragma unroll
            for (int k = 0; k < GK_RD_SLOTS; k++) {
                const int j0 = (k * G + t) * vec;
                if (j0 < cols) {
                    float x[8], h[8];
                    gk_unpack_f32(raw[k], dt, vec, x);
                    gk_unpack_f32(gk_rd_load_raw(rr, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized), dt, vec, h);
#pragma unroll
                    for (int e = 0; e < vec; e++) h[e] = gk_round_f32(h[e] + x[e], dt); /* h as stored */
                    raw[k] = gk_pack_f32(h, dt, vec);
                    if (live) gk_rd_store(ro, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized, h);
                }
            }
        }

        const float pivot = op == GK_RD_LAYERNORM ? gk_load1_f32(xr, 0, dt) : 0.0f;
        float sa = gk_rd_init_a(op), sb = 0.0f;
        const int keep_exp = op == GK_RD_SOFTMAX && !a.log;
        if (op == GK_RD_SOFTMAX) gk_rd_softmax_slots(raw, GK_RD_SLOTS, t * vec, G * vec, cols, whole, dt, vec, a.scale, keep_exp, &sa, &sb);
        if (pairs_w) sb = gk_rd_fold_w_bf16x2(a, raw, GK_RD_SLOTS, t * vec, G * vec, whole, &sa);
#pragma unroll
        for (int k = 0; k < GK_RD_SLOTS; k++) {
            const int j0 = (k * G + t) * vec;
            if (j0 >= cols || op == GK_RD_SOFTMAX || pairs_w) continue;
            float x[8], w[8], unused[8];
            gk_unpack_f32(raw[k], dt, vec, x);
            if (op == GK_RD_RMSNORM_QUANT) gk_rd_params(a, op, dt, j0, gk_rd_end(cols, j0, vec, whole), vec, w, unused);
            gk_rd_accumulate_vec(op, x, w, vec, gk_rd_avail(cols, j0, vec, whole), pivot, &sa, &sb);
            if (fold_w) { /* hold x w: the output pass then reads no weight */
#pragma unroll
                for (int e = 0; e < vec; e++) x[e] *= w[e];
                raw[k] = gk_pack_f32(x, dt, vec);
            }
        }
        const float mt = sa; /* softmax: the thread's max, which its held exps are relative to */
        gk_rd_stats st = gk_rd_finish(a, op, sa, sb, pivot, r, live && t == 0, block_level, G, scratch);
        /* held exps scale by exp(mt - max) / sum (0 * (1 / sum) for a thread of -inf only: 0, or NaN) */
        if (keep_exp) st.a = (mt == -INFINITY ? 0.0f : __expf(mt - st.a)) * st.b;

        if (live) {
            void *orow = (char *)a.out + r * a.ldo * (quant ? 1 : gk_dtype_size(dt));
#pragma unroll
            for (int k = 0; k < GK_RD_SLOTS; k++) {
                const int j0 = (k * G + t) * vec, end = gk_rd_end(cols, j0, vec, whole);
                if (j0 >= cols) continue;
                float x[8], y[8], w[8], bias[8];
                gk_unpack_f32(raw[k], dt, vec, x);
                gk_rd_params(a, fold_w ? GK_RD_QUANT : op, dt, j0, end, vec, w, bias); /* folded: ones */
#pragma unroll
                for (int e = 0; e < vec; e++)
                    y[e] = keep_exp ? x[e] * st.a : gk_rd_out(op, x[e], st, w[e], bias[e], a.scale, a.log);
                if (quant) gk_rd_store_e4m3(orow, j0, end, vec, a.vectorized, y);
                else gk_rd_store(orow, j0, end, dt, vec, a.vectorized, y);
            }
        }
    }
}

/* whole: the launcher found the rows of whole vectors (gk_rd_end), so the loop needs no per-vector
   bounds and alignment checks. A kernel of its own, not a branch in one: both loops in one kernel
   spilled at 48 registers. */
GK_DEV void gk_rd_regs_run(const gk_rd_args a, int op, int dt, int block_level, int whole)
{
    gk_rd_args w = a;
    if (whole) w.vectorized = w.wvec = 1; /* as the launcher found them: a constant to fold */
    gk_rd_regs_rows(w, op, dt, block_level, whole);
}

/* Pass 1 of the streaming variant on nk held vectors (vector k at column j + k * step; columns
   from cols on are not counted). */
GK_DEV void gk_rd_stream_stats(const gk_rd_args a, int op, int dt, uint4 *raw, int nk, int j, int step, int cols,
                               int whole, float pivot, float *sa, float *sb)
{
    const int vec = 16 / gk_dtype_size(dt);
    if (op == GK_RD_SOFTMAX) {
        gk_rd_softmax_slots(raw, nk, j, step, cols, whole, dt, vec, a.scale, 0, sa, sb);
        return;
    }
#pragma unroll
    for (int k = 0; k < nk; k++) {
        const int j0 = j + k * step;
        if (j0 >= cols) continue;
        float x[8], w[8], unused[8];
        gk_unpack_f32(raw[k], dt, vec, x);
        if (op == GK_RD_RMSNORM_QUANT) gk_rd_params(a, op, dt, j0, gk_rd_end(a.cols, j0, vec, whole), vec, w, unused);
        gk_rd_accumulate_vec(op, x, w, vec, gk_rd_avail(cols, j0, vec, whole), pivot, sa, sb);
    }
}

/* Streaming variant for rows too wide for registers: a block per row, two passes. Pass 1 reads
   the row once for its statistics (online max and sum for softmax, so one read suffices); pass 2
   reads it again (from the stash, else L2) and writes the output. Each thread touches the same
   columns in both passes, so what it stashed (or the residual it wrote) it reads back itself.
   stashed: the two-block kernel (a.stash vectors held), one vector a round through registers;
   else GK_RD_STREAM_BATCH. split: launched as clusters, each block on one part of every row. */
GK_DEV void gk_rd_stream_run(const gk_rd_args row, int op, int dt, int stashed, int split, int whole)
{
    __shared__ float scratch[64];
    extern __shared__ uint4 gk_rd_stash[]; /* vector j / vec of the row at [j / vec]; split: then GK_RD_SPLIT_SLOTS */
    const int vec = 16 / gk_dtype_size(dt), es = gk_dtype_size(dt);
    const int quant = op == GK_RD_RMSNORM_QUANT || op == GK_RD_QUANT, resid = op == GK_RD_RESIDUAL_RMSNORM;
    /* launched as clusters of n blocks (the stash kernel, rows too wide for one block's stash):
       block `rank` takes the rank-th of n equal 16-byte-aligned parts of every row, as a row of
       its own (a); the parts' statistics combine over the cluster */
    const int n = split ? gk_cluster_sreg(1) : 1;
    gk_rd_args a = row;
    if (whole) a.vectorized = a.wvec = 1; /* as the launcher found them: a constant to fold */
    if (n > 1) {
        const int part = (int)gk_round_up(gk_ceil_div(row.cols, n), vec);
        const int c0 = min(gk_cluster_sreg(0) * part, row.cols);
        a.cols = min(row.cols - c0, part);
        a.x = (const char *)row.x + (int64_t)c0 * es;
        a.out = (char *)row.out + (int64_t)c0 * (quant ? 1 : es);
        if (resid) {
            a.res = (const char *)row.res + (int64_t)c0 * es;
            a.res_out = (char *)row.res_out + (int64_t)c0 * es;
        }
        if (row.w) a.w = (const char *)row.w + (int64_t)c0 * es;
        if (row.b) a.b = (const char *)row.b + (int64_t)c0 * es;
    }
    const int G = blockDim.x, t = threadIdx.x, cols = a.cols;
    const int stash = a.stash * vec; /* columns below this: pass 2 reads the vector its own thread stashed */
    const int stride = G * vec;
    const int nb = stashed ? 1 : GK_RD_STREAM_BATCH; /* 32 registers hold one */
    int slot = 0;
    const int64_t first = split ? gk_cluster_sreg(2) : blockIdx.x, step = split ? gk_cluster_sreg(3) : gridDim.x;
    for (int64_t r = first; r < a.rows; r += step) {
        const void *xr = (const char *)a.x + r * a.ldx * es;
        const void *rr = resid ? (const char *)a.res + r * a.ldr * es : 0;
        void *ro = resid ? (char *)a.res_out + r * a.ldr * es : 0;
        void *orow = (char *)a.out + r * a.ldo * (quant ? 1 : es);
        /* LayerNorm sums deviations from the row's first element: no cancellation when the row
           sits far from zero (the whole row's, in every part) */
        const float pivot = op == GK_RD_LAYERNORM ? gk_load1_f32((const char *)row.x + r * row.ldx * es, 0, dt) : 0.0f;
        float sa = gk_rd_init_a(op), sb = 0.0f;
        /* the stashed part of the row comes by cp.async, all of it in flight at once and no
           register holding it; the rest (and every row that cannot) through registers */
        const int pre = a.vectorized && !resid ? min(a.stash, cols / vec) : 0; /* vectors */
        for (int v = t; v < pre; v += G) gk_cp_async_16(gk_rd_stash + v, (const char *)xr + (int64_t)v * 16, 16);
        gk_cp_async_commit();
        const int v0 = t + (pre > t ? (pre - t + G - 1) / G * G : 0); /* this thread's first vector past pre */
        /* the stash kernel keeps that vector in registers for pass 2 (65536 bf16 columns: the
           stash and one vector a thread are the whole row); f16 and the checked LayerNorm kernels
           spill holding it (LayerNorm without checks holds it: 70.8 -> 73.6% of copy at
           [1024, 65536] bf16) */
        const int hold = stashed && dt != GK_F16 && (op != GK_RD_LAYERNORM || whole);
        const int fold = stashed && op == GK_RD_RMSNORM_QUANT && dt == GK_BF16;
        uint4 held = make_uint4(0u, 0u, 0u, 0u);
        int held_j = -1;
        for (int j = v0 * vec; j < cols; j += nb * stride) {
            uint4 raw[GK_RD_STREAM_BATCH], rawr[GK_RD_STREAM_BATCH];
#pragma unroll
            for (int k = 0; k < nb; k++) {
                const int j0 = j + k * stride;
                raw[k] = make_uint4(0u, 0u, 0u, 0u);
                if (j0 < cols) {
                    raw[k] = gk_rd_load_raw(xr, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized);
                    if (resid) rawr[k] = gk_rd_load_raw(rr, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized);
                    else if (j0 < stash && !fold) gk_rd_stash[j0 / vec] = raw[k];
                }
            }
            if (resid) {
#pragma unroll
                for (int k = 0; k < nb; k++) {
                    const int j0 = j + k * stride;
                    if (j0 >= cols) continue;
                    float x[8], h[8];
                    gk_unpack_f32(raw[k], dt, vec, x);
                    gk_unpack_f32(rawr[k], dt, vec, h);
#pragma unroll
                    for (int e = 0; e < vec; e++) x[e] = gk_round_f32(h[e] + x[e], dt); /* h as stored */
                    gk_rd_store(ro, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized, x);
                    if (j0 < stash) gk_rd_stash[j0 / vec] = gk_pack_f32(x, dt, vec);
                    raw[k] = gk_pack_f32(x, dt, vec);
                }
            }
            if (fold) { /* x w in place of x, stashed or held */
                sb = fmaxf(sb, gk_rd_fold_w_bf16x2(a, raw, 1, j, stride, whole, &sa));
                if (j < stash) gk_rd_stash[j / vec] = raw[0];
                else if (held_j < 0) {
                    held = raw[0];
                    held_j = j;
                }
                continue;
            }
            if (hold && held_j < 0 && j >= stash) {
                held = raw[0];
                held_j = j;
            }
            gk_rd_stream_stats(a, op, dt, raw, nb, j, stride, cols, whole, pivot, &sa, &sb);
        }
        gk_cp_async_wait_all();
        /* RMSNorm + fp8 folds the stashed vectors with their weights, two vectors a step so two
           weight loads share one wait on L2 */
        if (fold) {
            __nv_bfloat162 m2 = __float2bfloat162_rn(0.0f);
#pragma unroll 1
            for (int j = t * vec; j < pre * vec; j += 2 * stride) {
                const int two = j + stride < pre * vec;
                uint4 w[2], raw[2];
                w[0] = gk_rd_weight_bf16(a, j, gk_rd_end(cols, j, vec, whole));
                if (two) w[1] = gk_rd_weight_bf16(a, j + stride, gk_rd_end(cols, j + stride, vec, whole));
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    if (k == 1 && !two) break;
                    const int jk = j + k * stride;
                    raw[k] = gk_rd_stash[jk / vec];
                    float x[8];
                    gk_unpack_f32(raw[k], GK_BF16, 8, x);
                    gk_rd_accumulate_n(GK_RD_RMSNORM, x, x, 8, 8, 0.0f, &sa, &sa); /* stashed vectors are whole */
                    m2 = gk_rd_fold_vec_bf16x2(&raw[k], w[k], m2);
                    gk_rd_stash[jk / vec] = raw[k]; /* the stash then holds x w: pass 2 reads no weight */
                }
            }
            sb = fmaxf(sb, fmaxf(__low2float(m2), __high2float(m2)));
        }
        for (int j = t * vec; j < (fold ? 0 : pre * vec); j += stride) { /* shared memory: one vector at a time */
            uint4 raw = gk_rd_stash[j / vec];
            gk_rd_stream_stats(a, op, dt, &raw, 1, j, stride, pre * vec, whole, pivot, &sa, &sb);
        }
        gk_rd_reduce_pair(&sa, &sb, gk_rd_pair_kind(op), 1, 0, scratch);
        if (n > 1) {
            gk_rd_cluster_pair(&sa, &sb, gk_rd_pair_kind(op), (float *)(gk_rd_stash + a.stash) + 2 * slot, n);
            slot ^= 1;
        }
        const gk_rd_stats st = gk_rd_derive(row, op, sa, sb, pivot, r, t == 0 && (n == 1 || gk_cluster_sreg(0) == 0));
        /* softmax: exp(scale x - max) / sum = 2^(x c - kc), the division folded into the exponent
           (1 / sum = 0 for an all -inf row gives kc = inf, output 0; NaN stays NaN) */
        const float c = a.scale * GK_LOG2E, kc = st.a * GK_LOG2E - __log2f(st.b);

        const void *src = resid ? (const void *)ro : xr;
        /* the stash kernel holds one vector a round: its weight loads go a vector ahead, so
           their L2 latency overlaps the current vector's work (RMSNorm at [1024, 65536] bf16:
           77.0 -> 78.7% of copy); the RMSNorm forms only: LayerNorm's bias as well spills */
        const int ahead = stashed && a.w && a.wvec && (op == GK_RD_RMSNORM || op == GK_RD_RESIDUAL_RMSNORM || (op == GK_RD_RMSNORM_QUANT && dt != GK_BF16));
        uint4 wn = make_uint4(0u, 0u, 0u, 0u);
        if (ahead && t * vec + vec <= cols) wn = gk_ld16((const char *)a.w + (int64_t)t * vec * es);
        for (int j = t * vec; j < cols; j += nb * stride) {
            uint4 raw[GK_RD_STREAM_BATCH];
            const uint4 wc = wn;
            if (ahead && j + stride + vec <= cols) wn = gk_ld16((const char *)a.w + (int64_t)(j + stride) * es);
#pragma unroll
            for (int k = 0; k < nb; k++) {
                const int j0 = j + k * stride;
                if (j0 < stash) raw[k] = gk_rd_stash[j0 / vec];
                else if (j0 == held_j) raw[k] = held;
                else if (j0 < cols) raw[k] = gk_rd_load_raw(src, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized);
            }
#pragma unroll
            for (int k = 0; k < nb; k++) {
                const int j0 = j + k * stride;
                if (j0 >= cols) continue;
                float x[8], y[8], w[8], bias[8];
                gk_unpack_f32(raw[k], dt, vec, x);
                if (fold && (j0 < stash || j0 == held_j)) { /* x w held: weight 1 */
#pragma unroll
                    for (int e = 0; e < 8; e++) w[e] = 1.0f, bias[e] = 0.0f;
                } else if (ahead && j0 + vec <= cols) { /* nb is 1 here: wc is j0's; no bias */
                    gk_unpack_f32(wc, dt, vec, w);
#pragma unroll
                    for (int e = 0; e < 8; e++) bias[e] = 0.0f;
                } else {
                    gk_rd_params(a, op, dt, j0, gk_rd_end(a.cols, j0, vec, whole), vec, w, bias);
                }
#pragma unroll
                for (int e = 0; e < vec; e++)
                    y[e] = op == GK_RD_SOFTMAX && !a.log ? gk_ex2_approx(fmaf(x[e], c, -kc))
                                                         : gk_rd_out(op, x[e], st, w[e], bias[e], a.scale, a.log);
                if (quant) gk_rd_store_e4m3(orow, j0, gk_rd_end(cols, j0, vec, whole), vec, a.vectorized, y);
                else gk_rd_store(orow, j0, gk_rd_end(cols, j0, vec, whole), dt, vec, a.vectorized, y);
            }
        }
    }
    if (n > 1) gk_cluster_sync(); /* no block leaves while another may still read its slots */
}

/* ---------------------------------------------------------------- generator macros */

/* GK_RD_IF(flag, ...): the arguments when flag is the literal 1, nothing when 0; GK_RD_OR_NULL
   likewise gives a kernel or NULL. */
#define GK_RD_IF_0(...)
#define GK_RD_IF_1(...) __VA_ARGS__
#define GK_RD_IF_(flag, ...) GK_RD_IF_##flag(__VA_ARGS__)
#define GK_RD_IF(flag, ...) GK_RD_IF_(flag, __VA_ARGS__)
#define GK_RD_OR_NULL_0(k) NULL
#define GK_RD_OR_NULL_1(k) k
#define GK_RD_OR_NULL_(flag, k) GK_RD_OR_NULL_##flag(k)
#define GK_RD_OR_NULL(flag, k) GK_RD_OR_NULL_(flag, k)

/* The kernels of one op and dtype and name##_launch, which picks one by the row width: a group
   of lanes per row, a block of 256 or 512 per row with the row in registers, streaming blocks
   of GK_RD_STREAM_THREADS (one an SM; two with the stash; with SPLIT, two with the stash split
   over a cluster). The flags (literal 0 or 1) WG, W256, W512, WST add copies without per-vector
   checks for rows of whole vectors (gk_rd_end) of the group, 256, 512 and stash (and split)
   kernels. Softmax and log-softmax share kernels (a.log). */
#define GK_DEFINE_REDUCE(name, op, dt, WG, W256, W512, WST, SPLIT)                                          \
    static __global__ void __launch_bounds__(256, GK_RD_GROUP_BLOCKS(op)) name##_group(gk_rd_args a)        \
    { gk_rd_regs_run(a, op, dt, 0, 0); }                                                                    \
    static __global__ void __launch_bounds__(256, GK_RD_ROW_BLOCKS(op, dt)) name##_b256(gk_rd_args a)       \
    { gk_rd_regs_run(a, op, dt, 1, 0); }                                                                    \
    static __global__ void __launch_bounds__(512, 2) name##_b512(gk_rd_args a)                              \
    { gk_rd_regs_run(a, op, dt, 1, 0); }                                                                    \
    static __global__ void __launch_bounds__(GK_RD_STREAM_THREADS, 1) name##_stream(gk_rd_args a)           \
    { gk_rd_stream_run(a, op, dt, 0, 0, 0); }                                                               \
    static __global__ void __launch_bounds__(GK_RD_STREAM_THREADS, 2) name##_stash(gk_rd_args a)            \
    { gk_rd_stream_run(a, op, dt, 1, 0, 0); }                                                               \
    GK_RD_IF(SPLIT, static __global__ void __launch_bounds__(GK_RD_STREAM_THREADS, 2)                       \
             name##_split(gk_rd_args a) { gk_rd_stream_run(a, op, dt, 1, 1, 0); })                          \
    GK_RD_IF(WG, static __global__ void __launch_bounds__(256, GK_RD_GROUP_BLOCKS(op))                      \
             name##_group_whole(gk_rd_args a) { gk_rd_regs_run(a, op, dt, 0, 1); })                         \
    GK_RD_IF(W256, static __global__ void __launch_bounds__(256, GK_RD_ROW_BLOCKS(op, dt))                  \
             name##_b256_whole(gk_rd_args a) { gk_rd_regs_run(a, op, dt, 1, 1); })                          \
    GK_RD_IF(W512, static __global__ void __launch_bounds__(512, 2)                                         \
             name##_b512_whole(gk_rd_args a) { gk_rd_regs_run(a, op, dt, 1, 1); })                          \
    GK_RD_IF(WST, static __global__ void __launch_bounds__(GK_RD_STREAM_THREADS, 2)                         \
             name##_stash_whole(gk_rd_args a) { gk_rd_stream_run(a, op, dt, 1, 0, 1); })                    \
    GK_RD_IF(GK_RD_AND_##WST##SPLIT, static __global__ void __launch_bounds__(GK_RD_STREAM_THREADS, 2)      \
             name##_split_whole(gk_rd_args a) { gk_rd_stream_run(a, op, dt, 1, 1, 1); })                    \
    static cudaError_t name##_launch(const char *fn, gk_rd_args a, cudaStream_t stream)                     \
    {                                                                                                       \
        void (*k[11])(gk_rd_args) = {name##_group,                                                          \
                                     name##_b256,                                                           \
                                     name##_b512,                                                           \
                                     name##_stream,                                                         \
                                     name##_stash,                                                          \
                                     GK_RD_OR_NULL(SPLIT, name##_split),                                    \
                                     GK_RD_OR_NULL(WG, name##_group_whole),                                 \
                                     GK_RD_OR_NULL(W256, name##_b256_whole),                                \
                                     GK_RD_OR_NULL(W512, name##_b512_whole),                                \
                                     GK_RD_OR_NULL(WST, name##_stash_whole),                                \
                                     GK_RD_OR_NULL(GK_RD_AND_##WST##SPLIT, name##_split_whole)};            \
        return gk_rd_launch(fn, k, a, op, dt, stream);                                                      \
    }
/* Both flags: GK_RD_AND_##a##b. */
#define GK_RD_AND_00 0
#define GK_RD_AND_01 0
#define GK_RD_AND_10 0
#define GK_RD_AND_11 1

#endif /* __CUDACC__ */

#endif /* GK_REDUCE_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_REDUCE_IMPLEMENTATION)) && !defined(GK_REDUCE_IMPLEMENTED)
#define GK_REDUCE_IMPLEMENTED

/* The streaming rows' stash, in 16-byte vectors, for a row of nv of them (0: the one-block
   kernel), given the device's shared memory per SM and per block; room: the most any row gets
   (a block's share with two an SM, less 2 KB: the static scratch and the per-block reserve). The
   stash kernel takes rows it holds at least half of (holding 22% of a row at [64, 262144], it
   measured 2-10 points slower). */
static int gk_rd_stash_vectors(int64_t nv, int per_sm, int per_block, int *room)
{
    const int share = per_sm / 2 < per_block ? per_sm / 2 : per_block;
    *room = share > 2048 ? (share - 2048) / 16 : 0;
    if (*room == 0 || nv > 2 * (int64_t)*room) return 0;
    return (int)(nv < *room ? nv : *room);
}

static cudaError_t gk_rd_launch_clusters(const char *fn, void (*kernel)(gk_rd_args), gk_rd_args a, int64_t grid,
                                         int threads, int smem, int n, cudaStream_t stream)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = gk_cluster_launch_config(&attr, grid, threads, smem, n, stream);
    void *args[1] = {&a};
    GK_TRY(cudaLaunchKernelExC(&cfg, (const void *)kernel, args));
    return gk_check_launch(fn);
}

/* Vectors in each of the n parts of a row of cols (16-byte-aligned parts, as gk_rd_stream_run
   cuts them). */
static int64_t gk_rd_part_vectors(int64_t cols, int n, int vec)
{
    return gk_ceil_div(gk_ceil_div(cols, n), vec);
}

/* Blocks to split a row of cols over: the fewest (2..GK_RD_SPLIT_MAX) whose parts fit a stash of
   room vectors plus one vector a thread, else GK_RD_SPLIT_MAX. */
static int gk_rd_split(int64_t cols, int vec, int room, int threads)
{
    int n = 2;
    while (n < GK_RD_SPLIT_MAX && gk_rd_part_vectors(cols, n, vec) > (int64_t)room + threads) n++;
    return n;
}

/* Validates the arguments of op (the pointers a holds, the shape, the strides), then picks the
   kernel: k[0] group of lanes, k[1] block of 256, k[2] block of 512, k[3] streaming, k[4] streaming
   with the stash, k[5] the stash kernel split over a cluster; k[6..8] and k[9..10]: k[0..2] and
   k[4..5] for rows of whole vectors (gk_rd_end); NULL where the op has no such kernel. */
static cudaError_t gk_rd_launch_checked(const char *fn, void (*const *k)(gk_rd_args), gk_rd_args a, int op, int dt,
                                        cudaStream_t stream)
{
    const int s = gk_dtype_size(dt), quant = op == GK_RD_RMSNORM_QUANT || op == GK_RD_QUANT;
    const int so = quant ? 1 : s;
    GK_TRY(gk_check_nonneg(fn, "rows", a.rows));
    GK_TRY(gk_check_nonneg(fn, "cols", a.cols64));
    if (a.rows == 0 || a.cols64 == 0) return cudaSuccess; /* nothing to write; pointers not inspected */
    GK_TRY(gk_check_fits_i32(fn, "cols", a.cols64));
    a.cols = (int)a.cols64;
    GK_TRY(gk_check_ptr(fn, "out", a.out));
    GK_TRY(gk_check_ptr(fn, "x", a.x));
    if (a.ldx < a.cols) return gk__fail(cudaErrorInvalidValue, fn, "'ldx' is %lld, less than cols = %d", (long long)a.ldx, a.cols);
    if (a.ldo < a.cols) return gk__fail(cudaErrorInvalidValue, fn, "'ldo' is %lld, less than cols = %d", (long long)a.ldo, a.cols);
    GK_TRY(gk_check_elem_aligned(fn, "out", a.out, so));
    GK_TRY(gk_check_elem_aligned(fn, "x", a.x, s));
    if (a.w) GK_TRY(gk_check_elem_aligned(fn, "weight", a.w, s));
    if (a.b) GK_TRY(gk_check_elem_aligned(fn, "bias", a.b, s));
    int64_t out_bytes = 0, x_bytes = 0;
    GK_TRY(gk_check_span(fn, "out", a.rows, a.cols, a.ldo, so, &out_bytes));
    GK_TRY(gk_check_span(fn, "x", a.rows, a.cols, a.ldx, s, &x_bytes));
    if (quant) {
        GK_TRY(gk_check_ptr(fn, "scales", a.scales));
        GK_TRY(gk_check_elem_aligned(fn, "scales", a.scales, 4));
        GK_TRY(gk_check_disjoint(fn, "out", a.out, out_bytes, "x", a.x, x_bytes));
        GK_TRY(gk_check_disjoint(fn, "scales", a.scales, a.rows * 4, "x", a.x, x_bytes));
        GK_TRY(gk_check_disjoint(fn, "scales", a.scales, a.rows * 4, "out", a.out, out_bytes));
    } else {
        GK_TRY(gk_check_overlap(fn, "out", a.out, out_bytes, "x", a.x, x_bytes));
    }
    if (op == GK_RD_RESIDUAL_RMSNORM) {
        GK_TRY(gk_check_ptr(fn, "residual", a.res));
        GK_TRY(gk_check_ptr(fn, "residual_out", a.res_out));
        if (a.ldr < a.cols) return gk__fail(cudaErrorInvalidValue, fn, "'ldr' is %lld, less than cols = %d", (long long)a.ldr, a.cols);
        GK_TRY(gk_check_elem_aligned(fn, "residual", a.res, s));
        GK_TRY(gk_check_elem_aligned(fn, "residual_out", a.res_out, s));
        int64_t r_bytes = 0;
        GK_TRY(gk_check_span(fn, "residual", a.rows, a.cols, a.ldr, s, &r_bytes));
        GK_TRY(gk_check_overlap(fn, "residual_out", a.res_out, r_bytes, "residual", a.res, r_bytes));
        GK_TRY(gk_check_disjoint(fn, "residual_out", a.res_out, r_bytes, "x", a.x, x_bytes));
        GK_TRY(gk_check_disjoint(fn, "out", a.out, out_bytes, "residual_out", a.res_out, r_bytes));
        GK_TRY(gk_check_disjoint(fn, "out", a.out, out_bytes, "residual", a.res, r_bytes));
    }

    const int vec = 16 / s;
    int aligned = gk_is_aligned(a.x, 16) && (a.ldx * s) % 16 == 0 && gk_is_aligned(a.out, vec * so) && (a.ldo * so) % (vec * so) == 0;
    if (op == GK_RD_RESIDUAL_RMSNORM)
        aligned = aligned && gk_is_aligned(a.res, 16) && gk_is_aligned(a.res_out, 16) && (a.ldr * s) % 16 == 0;
    a.vectorized = aligned;
    a.wvec = (!a.w || gk_is_aligned(a.w, 16)) && (!a.b || gk_is_aligned(a.b, 16));
    const int whole = a.vectorized && a.wvec && a.cols % vec == 0;

    const int64_t nv = gk_ceil_div(a.cols, vec);
    const int64_t grid_cap = (int64_t)1 << 30; /* blocks loop over rows past this */
    int64_t grid;
    void (*kernel)(gk_rd_args);
    int threads;
    if (nv <= 32 * GK_RD_SLOTS) {
        int g = 1;
        while ((int64_t)g * GK_RD_SLOTS < nv) g <<= 1;
        a.group = g;
        kernel = whole && k[6] ? k[6] : k[0];
        threads = 256;
        grid = gk_ceil_div(a.rows, 256 / g);
    } else if (nv <= 256 * GK_RD_SLOTS) {
        kernel = whole && k[7] ? k[7] : k[1]; /* the fewest threads that hold the row: more rows resident per SM */
        threads = 64;
        while ((int64_t)threads * GK_RD_SLOTS < nv) threads <<= 1;
        grid = a.rows;
    } else if (nv <= 512 * GK_RD_SLOTS) {
        kernel = whole && k[8] ? k[8] : k[2];
        threads = 512;
        grid = a.rows;
    } else {
        threads = GK_RD_STREAM_THREADS;
        grid = a.rows;
        int dev = 0, per_sm = 0, per_block = 0;
        GK_TRY(cudaGetDevice(&dev));
        GK_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        GK_TRY(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        int room, major = 0;
        const int ws = whole && k[9]; /* the stash and split kernels for whole rows */
        a.stash = gk_rd_stash_vectors(nv, per_sm, per_block, &room);
        /* rows too wide for one block's stash: split over a cluster of n blocks (sm_90), the
           fewest whose parts the stash and a vector a thread hold whole */
        if (!a.stash && k[5]) GK_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        if (major >= 9) {
            const int n = gk_rd_split(a.cols, vec, room, GK_RD_STREAM_THREADS);
            a.stash = gk_rd_stash_vectors(gk_rd_part_vectors(a.cols, n, vec), per_sm, per_block, &room);
            if (a.stash) {
                /* the opt-in first: the count of resident clusters depends on it */
                static unsigned split_set[2][GK_RD_NOPS][3];
                static int fits[2][GK_RD_NOPS][3][GK_RD_SPLIT_MAX + 1];
                void (*const ks)(gk_rd_args) = k[ws ? 10 : 5];
                GK_TRY(gk_smem_opt_in(fn, (const void *)ks, room * 16 + GK_RD_SPLIT_SLOTS, &split_set[ws][op][dt]));
                const int smem = a.stash * 16 + GK_RD_SPLIT_SLOTS;
                if (gk_clusters_fit((const void *)ks, threads, smem, n, &fits[ws][op][dt][n])) {
                    const int64_t cap = ((int64_t)1 << 30) / n; /* clusters loop over rows past this */
                    return gk_rd_launch_clusters(fn, ks, a, (a.rows < cap ? a.rows : cap) * n, threads, smem, n, stream);
                }
            }
            a.stash = 0; /* no cluster of n fits (a partitioned GPU): the one-block kernel */
        }
        kernel = a.stash ? k[ws ? 9 : 4] : k[3];
        if (a.stash) {
            static unsigned set[2][GK_RD_NOPS][3];
            GK_TRY(gk_smem_opt_in(fn, (const void *)kernel, room * 16, &set[ws][op][dt]));
        }
    }
    if (grid > grid_cap) grid = grid_cap;
    kernel<<<(unsigned)grid, threads, a.stash * 16, stream>>>(a);
    return gk_check_launch(fn);
}

static cudaError_t gk_rd_launch(const char *fn, void (*const *k)(gk_rd_args), gk_rd_args a, int op, int dt,
                                cudaStream_t stream)
{
    gk__begin();
    return gk__end(fn, gk_rd_launch_checked(fn, k, a, op, dt, stream));
}

static gk_rd_args gk_rd_args_make(void *out, int64_t ldo, const void *x, int64_t ldx, int64_t rows, int64_t cols)
{
    gk_rd_args a;
    memset(&a, 0, sizeof a);
    a.out = out;
    a.ldo = ldo;
    a.x = x;
    a.ldx = ldx;
    a.rows = rows;
    a.cols64 = cols;
    a.scale = 1.0f;
    return a;
}

/* The shipped kernels, as GK_DEFINE_REDUCE(name, op, dt, WG, W256, W512, WST, SPLIT). A flag 1
   ships the copy without checks where it measured faster (bf16, % of copy, checked -> not):
   - WG, every op: LayerNorm 44.1 -> 51.9 at [65536, 128];
   - W256, LayerNorm and the quant forms: RMSNorm + fp8 87.4 -> 93.9 at [16384, 8192];
   - W512, all but softmax: LayerNorm 80.8 -> 88.3 at [8192, 16384];
   - WST, LayerNorm, residual and the quant forms: LayerNorm 63.9 -> 70.4 at [1024, 65536].
   SPLIT 0 for f16 LayerNorm: its split kernel spills (16 bytes at 32 registers). */
GK_DEFINE_REDUCE(gk_rd_rmsnorm_f32, GK_RD_RMSNORM, GK_F32, 1, 0, 1, 0, 1)
GK_DEFINE_REDUCE(gk_rd_layernorm_f32, GK_RD_LAYERNORM, GK_F32, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_softmax_f32, GK_RD_SOFTMAX, GK_F32, 1, 0, 0, 0, 1)
GK_DEFINE_REDUCE(gk_rd_residual_rmsnorm_f32, GK_RD_RESIDUAL_RMSNORM, GK_F32, 1, 0, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_rmsnorm_quant_f32, GK_RD_RMSNORM_QUANT, GK_F32, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_quant_f32, GK_RD_QUANT, GK_F32, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_rmsnorm_bf16, GK_RD_RMSNORM, GK_BF16, 1, 0, 1, 0, 1)
GK_DEFINE_REDUCE(gk_rd_layernorm_bf16, GK_RD_LAYERNORM, GK_BF16, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_softmax_bf16, GK_RD_SOFTMAX, GK_BF16, 1, 0, 0, 0, 1)
GK_DEFINE_REDUCE(gk_rd_residual_rmsnorm_bf16, GK_RD_RESIDUAL_RMSNORM, GK_BF16, 1, 0, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_rmsnorm_quant_bf16, GK_RD_RMSNORM_QUANT, GK_BF16, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_quant_bf16, GK_RD_QUANT, GK_BF16, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_rmsnorm_f16, GK_RD_RMSNORM, GK_F16, 1, 0, 1, 0, 1)
GK_DEFINE_REDUCE(gk_rd_layernorm_f16, GK_RD_LAYERNORM, GK_F16, 1, 1, 1, 1, 0)
GK_DEFINE_REDUCE(gk_rd_softmax_f16, GK_RD_SOFTMAX, GK_F16, 1, 0, 0, 0, 1)
GK_DEFINE_REDUCE(gk_rd_residual_rmsnorm_f16, GK_RD_RESIDUAL_RMSNORM, GK_F16, 1, 0, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_rmsnorm_quant_f16, GK_RD_RMSNORM_QUANT, GK_F16, 1, 1, 1, 1, 1)
GK_DEFINE_REDUCE(gk_rd_quant_f16, GK_RD_QUANT, GK_F16, 1, 1, 1, 1, 1)

typedef cudaError_t (*gk_rd_launch_fn)(const char *, gk_rd_args, cudaStream_t);

/* The public launchers' argument packing, one per form. */
static cudaError_t gk_rd_norm(gk_rd_launch_fn launch, const char *fn, void *out, int64_t ldo, const void *x,
                              int64_t ldx, const void *weight, const void *bias, int64_t rows, int64_t cols, float eps,
                              cudaStream_t stream)
{
    gk_rd_args a = gk_rd_args_make(out, ldo, x, ldx, rows, cols);
    a.w = weight;
    a.b = bias;
    a.eps = eps;
    return launch(fn, a, stream);
}

static cudaError_t gk_rd_softmax(gk_rd_launch_fn launch, const char *fn, void *out, int64_t ldo, const void *x,
                                 int64_t ldx, int64_t rows, int64_t cols, float scale, int log, cudaStream_t stream)
{
    gk_rd_args a = gk_rd_args_make(out, ldo, x, ldx, rows, cols);
    a.scale = scale;
    a.log = log;
    return launch(fn, a, stream);
}

static cudaError_t gk_rd_residual(gk_rd_launch_fn launch, const char *fn, void *out, int64_t ldo, void *residual_out,
                                  const void *residual, int64_t ldr, const void *x, int64_t ldx, const void *weight,
                                  int64_t rows, int64_t cols, float eps, cudaStream_t stream)
{
    gk_rd_args a = gk_rd_args_make(out, ldo, x, ldx, rows, cols);
    a.res_out = residual_out;
    a.res = residual;
    a.ldr = ldr;
    a.w = weight;
    a.eps = eps;
    return launch(fn, a, stream);
}

static cudaError_t gk_rd_quant(gk_rd_launch_fn launch, const char *fn, gk_e4m3 *out, int64_t ldo, float *scales,
                               const void *x, int64_t ldx, const void *weight, int64_t rows, int64_t cols, float eps,
                               cudaStream_t stream)
{
    gk_rd_args a = gk_rd_args_make(out, ldo, x, ldx, rows, cols);
    a.scales = scales;
    a.w = weight;
    a.eps = eps;
    return launch(fn, a, stream);
}

GK_EXTERN_C_BEGIN

/* Fewest bytes through device memory and the FLOPs of one call. */
GK_IMPL gk_ledger gk_reduce_ledger(int op, int dt, int64_t rows, int64_t cols)
{
    const double n = (double)rows * cols, s = gk_dtype_size(dt);
    gk_ledger l;
    l.flops = n * gk_reduce_flops_per_elem(op);
    switch (op) {
    case GK_RD_RMSNORM: l.bytes = n * 2 * s + cols * s; break;
    case GK_RD_LAYERNORM: l.bytes = n * 2 * s + 2 * cols * s; break;
    case GK_RD_RESIDUAL_RMSNORM: l.bytes = n * 4 * s + cols * s; break;
    case GK_RD_RMSNORM_QUANT: l.bytes = n * (s + 1) + cols * s + 4.0 * rows; break;
    case GK_RD_QUANT: l.bytes = n * (s + 1) + 4.0 * rows; break;
    default: l.bytes = n * 2 * s; break; /* softmax, log-softmax */
    }
    return l;
}

GK_IMPL cudaError_t gk_rmsnorm_f32(float *out, int64_t ldo, const float *x, int64_t ldx, const float *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_rmsnorm_f32_launch, "gk_rmsnorm_f32", out, ldo, x, ldx, weight, NULL, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_layernorm_f32(float *out, int64_t ldo, const float *x, int64_t ldx, const float *weight,
                                  const float *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_layernorm_f32_launch, "gk_layernorm_f32", out, ldo, x, ldx, weight, bias, rows, cols, eps,
                      stream);
}

GK_IMPL cudaError_t gk_softmax_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_f32_launch, "gk_softmax_f32", out, ldo, x, ldx, rows, cols, scale, 0, stream);
}

GK_IMPL cudaError_t gk_log_softmax_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_f32_launch, "gk_log_softmax_f32", out, ldo, x, ldx, rows, cols, scale, 1, stream);
}

GK_IMPL cudaError_t gk_residual_rmsnorm_f32(float *out, int64_t ldo, float *residual_out, const float *residual,
                                         int64_t ldr, const float *x, int64_t ldx, const float *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_residual(gk_rd_residual_rmsnorm_f32_launch, "gk_residual_rmsnorm_f32", out, ldo, residual_out, residual,
                          ldr, x, ldx, weight, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_rmsnorm_quant_e4m3_f32(gk_e4m3 *out, int64_t ldo, float *scales, const float *x, int64_t ldx,
                                           const float *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_rmsnorm_quant_f32_launch, "gk_rmsnorm_quant_e4m3_f32", out, ldo, scales, x, ldx, weight, rows,
                       cols, eps, stream);
}

GK_IMPL cudaError_t gk_quant_e4m3_f32(gk_e4m3 *out, int64_t ldo, float *scales, const float *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_quant_f32_launch, "gk_quant_e4m3_f32", out, ldo, scales, x, ldx, NULL, rows, cols, 0.0f,
                       stream);
}

GK_IMPL cudaError_t gk_rmsnorm_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_rmsnorm_bf16_launch, "gk_rmsnorm_bf16", out, ldo, x, ldx, weight, NULL, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_layernorm_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight,
                                  const gk_bf16 *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_layernorm_bf16_launch, "gk_layernorm_bf16", out, ldo, x, ldx, weight, bias, rows, cols, eps,
                      stream);
}

GK_IMPL cudaError_t gk_softmax_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_bf16_launch, "gk_softmax_bf16", out, ldo, x, ldx, rows, cols, scale, 0, stream);
}

GK_IMPL cudaError_t gk_log_softmax_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_bf16_launch, "gk_log_softmax_bf16", out, ldo, x, ldx, rows, cols, scale, 1, stream);
}

GK_IMPL cudaError_t gk_residual_rmsnorm_bf16(gk_bf16 *out, int64_t ldo, gk_bf16 *residual_out, const gk_bf16 *residual,
                                         int64_t ldr, const gk_bf16 *x, int64_t ldx, const gk_bf16 *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_residual(gk_rd_residual_rmsnorm_bf16_launch, "gk_residual_rmsnorm_bf16", out, ldo, residual_out, residual,
                          ldr, x, ldx, weight, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_rmsnorm_quant_e4m3_bf16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_bf16 *x, int64_t ldx,
                                           const gk_bf16 *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_rmsnorm_quant_bf16_launch, "gk_rmsnorm_quant_e4m3_bf16", out, ldo, scales, x, ldx, weight, rows,
                       cols, eps, stream);
}

GK_IMPL cudaError_t gk_quant_e4m3_bf16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_bf16 *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_quant_bf16_launch, "gk_quant_e4m3_bf16", out, ldo, scales, x, ldx, NULL, rows, cols, 0.0f,
                       stream);
}

GK_IMPL cudaError_t gk_rmsnorm_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, const gk_f16 *weight, int64_t rows,
                                int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_rmsnorm_f16_launch, "gk_rmsnorm_f16", out, ldo, x, ldx, weight, NULL, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_layernorm_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, const gk_f16 *weight,
                                  const gk_f16 *bias, int64_t rows, int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_norm(gk_rd_layernorm_f16_launch, "gk_layernorm_f16", out, ldo, x, ldx, weight, bias, rows, cols, eps,
                      stream);
}

GK_IMPL cudaError_t gk_softmax_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_f16_launch, "gk_softmax_f16", out, ldo, x, ldx, rows, cols, scale, 0, stream);
}

GK_IMPL cudaError_t gk_log_softmax_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows, int64_t cols,
                                    float scale, cudaStream_t stream)
{
    return gk_rd_softmax(gk_rd_softmax_f16_launch, "gk_log_softmax_f16", out, ldo, x, ldx, rows, cols, scale, 1, stream);
}

GK_IMPL cudaError_t gk_residual_rmsnorm_f16(gk_f16 *out, int64_t ldo, gk_f16 *residual_out, const gk_f16 *residual,
                                         int64_t ldr, const gk_f16 *x, int64_t ldx, const gk_f16 *weight, int64_t rows,
                                         int64_t cols, float eps, cudaStream_t stream)
{
    return gk_rd_residual(gk_rd_residual_rmsnorm_f16_launch, "gk_residual_rmsnorm_f16", out, ldo, residual_out, residual,
                          ldr, x, ldx, weight, rows, cols, eps, stream);
}

GK_IMPL cudaError_t gk_rmsnorm_quant_e4m3_f16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_f16 *x, int64_t ldx,
                                           const gk_f16 *weight, int64_t rows, int64_t cols, float eps,
                                           cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_rmsnorm_quant_f16_launch, "gk_rmsnorm_quant_e4m3_f16", out, ldo, scales, x, ldx, weight, rows,
                       cols, eps, stream);
}

GK_IMPL cudaError_t gk_quant_e4m3_f16(gk_e4m3 *out, int64_t ldo, float *scales, const gk_f16 *x, int64_t ldx,
                                   int64_t rows, int64_t cols, cudaStream_t stream)
{
    return gk_rd_quant(gk_rd_quant_f16_launch, "gk_quant_e4m3_f16", out, ldo, scales, x, ldx, NULL, rows, cols, 0.0f,
                       stream);
}

GK_EXTERN_C_END

#endif /* reduce implementation */
