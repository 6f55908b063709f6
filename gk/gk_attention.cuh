/* gk_attention.cuh - gk attention v0.1: FlashAttention's forward pass (prefill and training
   forward) with online softmax, bf16 / fp16 in, fp32 softmax and accumulation. One dispatcher
   over an mma.sync kernel (sm_80 and newer) and, in sm_90a builds on Hopper, a wgmma kernel fed
   by TMA (gk_attention_sm90.cuh).

   Needs gk_core.cuh and gk_mma.cuh (same folder), and for Hopper builds gk_attention_sm90.cuh.
   In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_ATTENTION_IMPLEMENTATION for this header alone)
       #include "gk_attention.cuh"

   WHAT IT COMPUTES, for each batch b, query head h, query row i:
       s_j   = scale * q_i . k_j                   (scale: 1/sqrt(D) unless set)
       s_j   = softcap * tanh(s_j / softcap)       (only when softcap > 0, as Gemma 2 does)
       out_i = sum_j softmax(s)_j v_j   over the keys j that row i sees
       lse_i = ln sum_j e^(s_j)                    (natural log; -inf for a row that sees none)
     k and v come from kv head h / (Hq / Hkv) (GQA; MQA is Hkv = 1). Row i sees key j when
       j - (i + Sk - Sq) is in [-window_left, window_right]   (a window side < 0 is unbounded)
     and causal sets window_right to 0: the mask is aligned to the bottom-right corner, as
     FlashAttention 2.1 and later do when Sq != Sk. A row that sees no key gets out = 0 and
     lse = -inf. Results are deterministic (no atomics; split partials merge in a fixed order).

   LAYOUTS (strides in elements; the head dimension D is contiguous)
     q [B, Sq, Hq, D], k and v [B, Sk, Hkv, D], out like q: element (b, s, h, d) of q is at
       q[b * q_batch_stride + s * q_row_stride + h * q_head_stride + d]
     so [B, H, S, D] tensors, or q, k, v sliced from one packed QKV projection, need no copy.
     Strides and base addresses must be multiples of 8 elements (16 bytes: cp.async and TMA).
     out's strides must not alias (no two (b, s, h) rows on one address).
     lse (optional, fp32): [B, Hq, Sq] contiguous; with varlen, [total_q, Hq] (token-major).
   VARLEN
     cu_seqlens_q and cu_seqlens_k (device int32 [B + 1], both or neither): sequence b's tokens
     are rows cu_seqlens[b] .. cu_seqlens[b + 1] - 1 of the packed q, k, v, out (batch strides
     unused); zero-length sequences are allowed. seqlen_q and seqlen_k are then upper bounds on
     every sequence's lengths (as FlashAttention's max_seqlen): seqlen_q sizes the grid (a
     longer sequence is still computed, by fewer blocks), seqlen_k sizes the split partials.

   PUBLIC FUNCTIONS (T in bf16, f16)
     gk_attention_params gk_attention_params_dense(B, Hq, Hkv, D, Sq, Sk)
         parameters for contiguous [B, S, H, D] q, k, v and out, no mask, default scale
     gk_attention_fwd_T(out, q, k, v, lse, params, workspace, workspace_bytes, stream)
         lse may be NULL. workspace (may be NULL, else 256-byte aligned) lets the dispatcher
         split the keys over several blocks (FlashDecoding) when the query tiles alone do not
         fill the GPU (short Sq, long Sk): gk_attention_workspace_bytes(params) says how much.
     gk_attention_ex(config, splits, dtype, ...the same arguments...)
         one configuration (0 .. gk_attention_config_count() - 1, or -1: the dispatcher's) with a
         given number of key splits (0: the dispatcher's), for tuning and benchmarks.
     gk_attention_plan_for(params)    the dispatcher's configuration, key splits and workspace bytes
                                      (given a workspace), for tools and benchmarks
     gk_attention_config_info(config), gk_attention_ledger(params, dtype)
         FLOPs = 4 B Hq Sq Sk D (the visible fraction of it under a mask); bytes: q, k, v, out
         once each.

   HEAD DIMENSIONS
     Kernels are built for D = 64, 96, 128 and 256; any other multiple of 8 up to 256 runs on the
     next larger one (its extra columns zero-filled, never stored). Other D are refused.

   ARGUMENTS AND ERRORS
     B, Hq or Sq == 0 is a no-op; Sk == 0 leaves every row without keys (out 0, lse -inf). A null
     q, k, v or out, Hq not a multiple of Hkv, an unsupported D, a stride or pointer off 16
     bytes, aliasing out strides, out overlapping q, k, v or lse, a negative size or stride, a
     span past 2^63 bytes or a size past 32 bits return cudaErrorInvalidValue before anything
     launches; gk_failure_reason() says which.

   DISPATCH
     The wgmma kernel (gk_attention_sm90.cuh) where the build has sm_90a code, the GPU is compute
     capability 9.0, D is 64, 128 or 256, there are no cu_seqlens and no key split is wanted;
     otherwise the mma.sync configuration of the smallest kernel head dim >= D, its keys split
     over blocks when a workspace is given and the query tiles leave SMs idle.

   HOW IT RUNS (mma.sync)
     A block takes BM query rows of one (b, h), 16 or 32 a warp (one K or V fragment feeds two
     MMAs at 32). K and V tiles of BN keys go by cp.async into one buffer each of XOR-swizzled
     shared memory, read by ldmatrix (V with .trans): V of a tile loads under S = Q K^T and the
     softmax, K of the next under O += P V. S and O accumulate on m16n8k16; the online softmax
     works on S's accumulator fragments (logits scaled to log2 units, row max and sum over the 4
     lanes of a row, one exp2 a logit; a row's max moves only when a tile's passes it by more
     than 8, so O is rescaled rarely), and P goes to bf16 / fp16 A fragments in registers with
     no trip through shared memory. Key tiles a row range cannot see are
     skipped; only tiles that cross a mask edge or Sk are masked. Causal and windowed grids take
     the longest query tiles first. With a workspace and too few query tiles to fill the GPU,
     the keys split over blocks and a combine kernel merges their partials in a fixed order.

   GENERATOR
     GK_DEFINE_ATTENTION_MMA(name, dt, D, BM, BN, MW, QREG, MINB) writes the kernel of a BM x BN
     tile for head dimension D, MW m16 row tiles a warp (BM / 16 MW warps), Q fragments in
     registers (QREG 1) or read from shared memory at each use (QREG 0), registers budgeted for
     MINB blocks per SM. GK_DEFINE_ATTENTION_WGMMA: gk_attention_sm90.cuh.

   MEASURED   gk_bench/RESULTS.md has the figures against PyTorch's cuDNN and FlashAttention-2
              backends in the same process.

   EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_attention.cuh"
       // q [B, S, 32, 128], k and v [B, S, 8, 128] bf16 (GQA), causal
       gk_attention_params ap = gk_attention_params_dense(B, 32, 8, 128, S, S);
       ap.causal = 1;
       cudaError_t e = gk_attention_fwd_bf16(out, q, k, v, NULL, &ap, NULL, 0, stream);
       if (e != cudaSuccess) fprintf(stderr, "%s\n", gk_failure_reason());
*/
#include "gk_core.cuh"
#include "gk_mma.cuh"
#include <limits.h>
#include <math.h> /* INFINITY, expf, logf: gk_attn_merge is host code too */

#ifndef GK_ATTENTION_CUH
#define GK_ATTENTION_CUH

/* 1: include gk_attention_sm90.cuh (the wgmma kernel); default: when nvcc targets 9.0. */
#ifndef GK_ATTENTION_SM90
#define GK_ATTENTION_SM90 GK_BUILD_HAS_SM90
#endif
#ifndef GK_ATTENTION_MAX_SPLITS
#define GK_ATTENTION_MAX_SPLITS 32 /* at most GK_ATTN_COMBINE_MAX (256) */
#endif

/* Every field; gk_attention_params_dense fills them for contiguous tensors. */
typedef struct gk_attention_params {
    int batch;                    /* B; with cu_seqlens, the number of sequences */
    int heads_q, heads_kv;        /* Hq, Hkv; Hq % Hkv == 0 */
    int head_dim;                 /* D: a multiple of 8, at most 256 */
    int seqlen_q, seqlen_k;       /* Sq, Sk; with cu_seqlens, bounds on every sequence's */
    int64_t q_batch_stride, q_row_stride, q_head_stride;       /* elements */
    int64_t k_batch_stride, k_row_stride, k_head_stride;
    int64_t v_batch_stride, v_row_stride, v_head_stride;
    int64_t out_batch_stride, out_row_stride, out_head_stride;
    const int *cu_seqlens_q, *cu_seqlens_k; /* device int32 [B + 1], or both NULL */
    float scale;                  /* softmax scale; 0: 1 / sqrt(D) */
    float softcap;                /* > 0: logits pass through softcap * tanh(x / softcap) */
    int causal;                   /* 1: window_right = 0 (bottom-right aligned) */
    int window_left, window_right; /* keys a row sees either side of its diagonal; < 0: no bound */
} gk_attention_params;

/* A kernel configuration, as the generator derives it. */
typedef struct gk_attention_config {
    const char *name;
    int head_dim;   /* the D it is built for (smaller D run on it zero-padded) */
    int bm, bn;     /* query rows a block, keys a tile */
    int threads;
    int smem_bytes;
    int wgmma;      /* 1: the sm_90a kernel (TMA, wgmma, warp-specialized) */
} gk_attention_config;

/* The dispatcher's plan for a problem, given a workspace: the configuration it runs (an index for
   gk_attention_config_info), its key splits, and the workspace bytes the splits use. */
typedef struct gk_attention_plan {
    int config, splits;
    size_t workspace_bytes;
} gk_attention_plan;

GK_EXTERN_C_BEGIN
GK_DECL gk_attention_params gk_attention_params_dense(int batch, int heads_q, int heads_kv, int head_dim, int seqlen_q,
                                                      int seqlen_k);
GK_DECL cudaError_t gk_attention_fwd_bf16(gk_bf16 *out, const gk_bf16 *q, const gk_bf16 *k, const gk_bf16 *v,
                                          float *lse, const gk_attention_params *params, void *workspace,
                                          size_t workspace_bytes, cudaStream_t stream);
GK_DECL cudaError_t gk_attention_fwd_f16(gk_f16 *out, const gk_f16 *q, const gk_f16 *k, const gk_f16 *v, float *lse,
                                         const gk_attention_params *params, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream);
GK_DECL cudaError_t gk_attention_ex(int config, int splits, int dtype, void *out, const void *q, const void *k,
                                    const void *v, float *lse, const gk_attention_params *params, void *workspace,
                                    size_t workspace_bytes, cudaStream_t stream);
GK_DECL size_t gk_attention_workspace_bytes(const gk_attention_params *params);
GK_DECL gk_attention_plan gk_attention_plan_for(const gk_attention_params *params); /* config -1: bad params */
GK_DECL int gk_attention_config_count(void);
GK_DECL gk_attention_config gk_attention_config_info(int config); /* name NULL for an unknown index */
GK_DECL gk_ledger gk_attention_ledger(const gk_attention_params *params, int dtype);
GK_EXTERN_C_END

/* ---------------------------------------------------------------- what kernels see */

/* The checked problem, as every kernel reads it. Strides in elements. */
typedef struct gk_attn_args {
    void *out;
    const void *q, *k, *v;
    float *lse;
    int64_t q_bs, q_rs, q_hs, k_bs, k_rs, k_hs, v_bs, v_rs, v_hs, o_bs, o_rs, o_hs;
    const int *cu_q, *cu_k;
    int batch, hq, hkv, group; /* group = Hq / Hkv */
    int d;                     /* the real head dim (kernels may be built for more) */
    int sq, sk;                /* lengths, or their bounds with cu_q / cu_k */
    float sl2;                 /* log2 units: scale log2(e), or softcap log2(e) with a softcap */
    float softcap, cap_inv;    /* softcap and scale / softcap; 0 without */
    int left, right;           /* window sides, causal folded in; < 0 unbounded */
    int splits;                /* key splits; > 1 writes partials to part_o / part_lse */
    float *part_o;             /* [splits][batch sq][hq][d_kernel] fp32 */
    float *part_lse;           /* [splits][batch sq][hq] */
    int d_kernel;
    int dt;                    /* GK_BF16 or GK_F16 */
} gk_attn_args;

/* The key range [lo, hi) that rows [r0, r1) of a sequence see (off = Sk - Sq). */
GK_HD void gk_attn_key_range(int r0, int r1, int sq, int sk, int left, int right, int *lo, int *hi)
{
    const int off = sk - sq;
    long long a = 0, b = sk;
    if (left >= 0 && (long long)r0 + off - left > a) a = (long long)r0 + off - left;
    if (right >= 0 && (long long)r1 - 1 + off + right + 1 < b) b = (long long)r1 - 1 + off + right + 1;
    if (b < a) b = a;
    *lo = (int)a;
    *hi = (int)b;
}

/* Merging two partial softmax results of one row (lse in natural log, o normalized by its own
   sum): the result of the union of their keys. A side with lse -inf (no keys) weighs 0. The
   split-K combine and the host tests use it. */
GK_HD void gk_attn_merge(float lse_a, const float *o_a, float lse_b, const float *o_b, int n, float *lse, float *o)
{
    const float m = lse_a != lse_a ? lse_a : lse_a > lse_b ? lse_a : lse_b; /* NaN stays NaN */
    if (m == -INFINITY) {
        for (int i = 0; i < n; i++) o[i] = 0.0f;
        *lse = -INFINITY;
        return;
    }
    const float wa = expf(lse_a - m), wb = expf(lse_b - m), sum = wa + wb;
    for (int i = 0; i < n; i++) o[i] = (wa * o_a[i] + wb * o_b[i]) / sum;
    *lse = m + logf(sum);
}

#ifdef __CUDACC__ /* device code only: nothing here for C */

/* ---------------------------------------------------------------- mma.sync kernel */

/* 16-byte chunk c of row r in a tile of `chunks` chunks a row: XOR-swizzled within each
   128-byte group (gk_swizzle_chunk), or each 64-byte group when rows are 64 bytes past a
   multiple of 128 (D = 96), so that ldmatrix's 8 rows of one column fall in 8 bank groups. */
GK_DEV int gk_attn_chunk(int r, int c, int chunks)
{
    if (chunks % 8 == 0) return (c & ~7) | gk_swizzle_chunk(r, c & 7, 128);
    return (c & ~3) | gk_swizzle_chunk(r, c & 3, 64);
}

GK_DEV char *gk_attn_at(char *tile, int r, int c, int chunks) { return tile + (r * chunks + gk_attn_chunk(r, c, chunks)) * 16; }

/* ldmatrix addresses without a register each: a lane reads chunks 2 u + c of row r + 8 i (i, u
   constants), and the swizzle of chunk 2 u + c depends on r only through r % 8, so the G / 2
   offsets of one swizzle group (G = 8 or 4 chunks) are kept and the rest is a constant:
   gk_attn_lane_at(tile, off, 8 i, u, chunks) = gk_attn_at(tile, r + 8 i, 2 u + c, chunks). */
GK_DEV void gk_attn_lane_offsets(int r, int c, int chunks, int *off)
{
    const int half = chunks % 8 == 0 ? 4 : 2;
#pragma unroll
    for (int u = 0; u < 4; u++) off[u] = u < half ? (r * chunks + gk_attn_chunk(r, 2 * u + c, chunks)) * 16 : 0;
}

GK_DEV char *gk_attn_lane_at(char *tile, const int *off, int rows, int u, int chunks)
{
    const int half = chunks % 8 == 0 ? 4 : 2;
    return tile + rows * chunks * 16 + (u / half) * half * 32 + off[u % half];
}

/* rows [0, n) of a tile of `rows` rows, `chunks` 16-byte chunks each, from global rows of stride
   `ld` elements starting at src; chunks past valid_chunks and rows past n are zero-filled. When
   the threads cover whole rows, each thread keeps one chunk column and steps its global pointer
   (no 64-bit multiply a chunk). */
GK_DEV void gk_attn_load_tile(char *tile, const char *src, int64_t ld, int rows, int n, int chunks, int valid_chunks,
                              int threads)
{
    if (threads % chunks == 0 && rows % (threads / chunks) == 0) {
        const int c = threadIdx.x % chunks, step = threads / chunks, r0 = threadIdx.x / chunks;
        const char *g = src + ((int64_t)r0 * ld + c * 8) * 2;
        const int64_t gstep = (int64_t)step * ld * 2;
#pragma unroll 1
        for (int k = 0; k < rows / step; k++, g += gstep) {
            const int r = r0 + k * step, ok = r < n && c < valid_chunks;
            gk_cp_async_16(gk_attn_at(tile, r, c, chunks), ok ? g : src, ok ? 16 : 0);
        }
        return;
    }
    for (int i = threadIdx.x; i < rows * chunks; i += threads) {
        const int r = i / chunks, c = i % chunks;
        const int ok = r < n && c < valid_chunks;
        gk_cp_async_16(gk_attn_at(tile, r, c, chunks), ok ? src + ((int64_t)r * ld + c * 8) * 2 : src, ok ? 16 : 0);
    }
}

GK_DEV void gk_attn_mma(float *d, const unsigned *a, const unsigned *b, int dt)
{
    if (dt == GK_BF16) gk_mma_m16n8k16_bf16(d, a, b, d);
    else gk_mma_m16n8k16_f16(d, a, b, d);
}

/* The online softmax on accumulator fragments, shared by the mma.sync and wgmma kernels. A
   thread holds n values of S (and no of O) in the m16n8k16 / wgmma accumulator layout: value
   4 j + i at row g + 8 (i / 2) (g = lane / 4 of the warp's 16 rows), column 8 j + 2 (lane % 4)
   + i % 2. The 4 lanes of a row hold all its columns. */

/* Whether key tile [n0, n0 + bn) crosses an edge for query rows [m0, m0 + bm): Sk or a mask. */
GK_DEV int gk_attn_tile_edge(const gk_attn_args *p, int m0, int bm, int n0, int bn, int sk_len, int off)
{
    return n0 + bn > sk_len || (p->left >= 0 && n0 < m0 + bm - 1 + off - p->left) ||
           (p->right >= 0 && n0 + bn - 1 > m0 + off + p->right);
}

/* S to logits in log2 units: scale log2(e) s, or softcap log2(e) tanh(scale s / softcap)
   (tanh(x) = 1 - 2 / (e^2x + 1): exact at both ends, its cancellation near 0 far under the
   logits' rounding), then -inf where masked (edge tiles only). row: the query row of this
   thread's values i % 4 < 2; col: the key of value 0. The mask is a visible key range a row,
   tested without branches. Scaling here, not inside the exponent's FFMA, keeps the softmax
   exact at any magnitude: the max is taken over the very values it is subtracted from, so the
   row's largest P is 2^0 = 1 (at logits of 1e9, where a float's ulp is 128, the folded form
   let P reach 2^64 or vanish). */
GK_DEV void gk_attn_logits(const gk_attn_args *p, float *s, int n, int edge, int row, int col, int sk_len, int off)
{
    if (p->softcap != 0.0f) {
#pragma unroll
        for (int i = 0; i < n; i++)
            s[i] = p->sl2 * (1.0f - __fdividef(2.0f, gk_ex2_approx(s[i] * p->cap_inv * (2.0f * GK_LOG2E)) + 1.0f));
    } else {
#pragma unroll
        for (int i = 0; i < n; i++) s[i] *= p->sl2;
    }
    if (edge) {
        int lo[2], hi[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int d = row + 8 * r + off; /* the row's diagonal key */
            lo[r] = p->left >= 0 ? d - p->left : INT_MIN;
            hi[r] = p->right >= 0 ? min(sk_len - 1, d + p->right) : sk_len - 1;
        }
#pragma unroll
        for (int i = 0; i < n; i++) {
            const int c = col + (i >> 2) * 8 + (i & 1), r = (i >> 1) & 1;
            s[i] = c >= lo[r] && c <= hi[r] ? s[i] : -INFINITY;
        }
    }
}

/* One tile of the online softmax for the thread's two rows (logits in log2 units): the row max
   (over the 4 lanes), S to P = 2^(x - max), the running sum, and alpha[r], the factor O's row
   must be rescaled by (gk_attn_rescale; 1: none). The max a row subtracts moves only when the
   tile's exceeds it by more than GK_ATTN_RESCALE_AT (8: P stays under 2^8, exact in fp32 and in
   range in bf16 and fp16), so most tiles leave O alone: the result is the same softmax, since O
   and the sum share the max's scale. A row with every key so far masked keeps max -inf and
   subtracts 0 (no inf - inf). fmaxf drops NaN: a NaN logit reaches P, and its row's O, through
   the ex2. Returns whether any alpha is not 1. */
#define GK_ATTN_RESCALE_AT 8.0f
GK_DEV int gk_attn_softmax(float *s, int n, float *row_max, float *row_sum, float *alpha)
{
    int moved = 0;
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < n / 4; i++) mx = fmaxf(mx, fmaxf(s[4 * i + 2 * r], s[4 * i + 2 * r + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const int move = mx > row_max[r] + GK_ATTN_RESCALE_AT; /* -inf + 8 is -inf: the first keys move it */
        alpha[r] = move ? gk_ex2_approx(row_max[r] - mx) : 1.0f;
        if (move) row_max[r] = mx;
        moved |= move;
        const float base = row_max[r] == -INFINITY ? 0.0f : row_max[r];
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < n / 4; i++) {
            s[4 * i + 2 * r] = gk_ex2_approx(s[4 * i + 2 * r] - base);
            s[4 * i + 2 * r + 1] = gk_ex2_approx(s[4 * i + 2 * r + 1] - base);
            sum += s[4 * i + 2 * r] + s[4 * i + 2 * r + 1];
        }
        row_sum[r] = row_sum[r] * alpha[r] + sum;
    }
    return moved;
}

/* O's two rows times alpha (no values a thread). */
GK_DEV void gk_attn_rescale(float *o, int no, const float *alpha)
{
#pragma unroll
    for (int i = 0; i < no; i++) o[i] *= alpha[(i >> 1) & 1];
}

/* P's values of two n8 tiles (8 floats) as the A fragment of a k16 step: the accumulator layout
   is the A layout, so no data moves between lanes. */
GK_DEV void gk_attn_pack_p(const float *s8, int dt, unsigned *pa)
{
    pa[0] = gk_pack2_f32(s8, dt);
    pa[1] = gk_pack2_f32(s8 + 2, dt);
    pa[2] = gk_pack2_f32(s8 + 4, dt);
    pa[3] = gk_pack2_f32(s8 + 6, dt);
}

/* The rows' end: sums over the 4 lanes, O / sum, lse = (max + log2 sum) ln 2 (-inf and O = 0 for
   a row that saw no key). */
GK_DEV void gk_attn_finish(float *o, int no, const float *row_max, const float *row_sum, float *lse_row)
{
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float l = row_sum[r];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        /* l NaN (a NaN logit): lse NaN too, not -inf */
        lse_row[r] = l > 0.0f || l != l ? (row_max[r] + log2f(l)) * 0.6931471805599453f : -INFINITY;
#pragma unroll
        for (int i = 0; i < no / 4; i++) {
            o[4 * i + 2 * r] *= inv;
            o[4 * i + 2 * r + 1] *= inv;
        }
    }
}

/* One (b, h, query tile, key split) per block and grid-stride over query tiles. A warp owns
   MW m16 row tiles (16 MW rows): every K or V fragment it loads feeds MW MMAs. Per thread: qf
   (MW x D / 16 x 4 registers, QREG), o (MW x D / 2 accumulators), s (MW x BN / 2). K and V have
   one buffer each, loaded in turn as FlashAttention-2 does: V of tile j lands under S = Q K^T
   and the softmax, K of tile j + 1 under O += P V. All sizes are constants after inlining. */
GK_DEV void gk_attn_mma_run(const gk_attn_args *p, int dt, int DK, int BM, int BN_CONFIG, int MW, int QREG,
                            unsigned *qf, float *o, float *s)
{
    /* sm_80's register allocation spills the 64-key tile at D 128 (8 to 20 bytes however the
       code is arranged); there the tile is 32 keys (shared memory and s sized for 64, half used) */
#if __CUDA_ARCH__ < 900
    const int BN = DK == 128 && MW == 2 && BN_CONFIG > 32 ? 32 : BN_CONFIG;
#else
    const int BN = BN_CONFIG;
#endif
    extern __shared__ uint4 gk_attn_smem[];
    const int threads = BM * 2 / MW, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, chunks = DK / 8;
    const int g = lane >> 2, t4 = lane & 3, wr = warp * 16 * MW; /* the warp's first row in the tile */
    char *sq = (char *)gk_attn_smem, *skt = sq + BM * DK * 2, *svt = skt + BN * DK * 2;
    const int h = blockIdx.y, b = blockIdx.z / p->splits, split = blockIdx.z % p->splits, hk = h / p->group;
    int qrow0 = 0, krow0 = 0; /* cu_seqlens are int32 */
    int sq_len = p->sq, sk_len = p->sk;
    if (p->cu_q) {
        qrow0 = p->cu_q[b];
        krow0 = p->cu_k[b];
        sq_len = p->cu_q[b + 1] - qrow0;
        sk_len = p->cu_k[b + 1] - krow0;
    }
    const char *qg = (const char *)p->q + 2 * ((p->cu_q ? (int64_t)qrow0 * p->q_rs : b * p->q_bs) + h * p->q_hs);
    const char *kg = (const char *)p->k + 2 * ((p->cu_q ? (int64_t)krow0 * p->k_rs : b * p->k_bs) + hk * p->k_hs);
    const char *vg = (const char *)p->v + 2 * ((p->cu_q ? (int64_t)krow0 * p->v_rs : b * p->v_bs) + hk * p->v_hs);
    const int valid = p->d / 8, mtiles = (sq_len + BM - 1) / BM, off = sk_len - sq_len;
    const int masked_grid = p->left >= 0 || p->right >= 0;
    /* this lane's ldmatrix rows and chunks: Q (A fragments) and V (.trans) take row lq, chunk
       lane / 16; K (rows = keys) row lk, chunk lane / 8 % 2 */
    const int lq = (lane & 7) + ((lane >> 3) & 1) * 8, lk = (lane >> 4) * 8 + (lane & 7);
    int offk[4], offv[4]; /* Q's are V's, wr rows down (wr % 8 == 0) */
    gk_attn_lane_offsets(lk, (lane >> 3) & 1, chunks, offk);
    gk_attn_lane_offsets(lq, lane >> 4, chunks, offv);

    for (int t = blockIdx.x; t < mtiles; t += gridDim.x) {
        const int m0 = (masked_grid ? mtiles - 1 - t : t) * BM;
        int lo, hi;
        gk_attn_key_range(m0, min(m0 + BM, sq_len), sq_len, sk_len, p->left, p->right, &lo, &hi);
        int jb = lo / BN, je = hi > lo ? (hi + BN - 1) / BN : jb;
        if (p->splits > 1) {
            const int per = (je - jb + p->splits - 1) / p->splits;
            jb = min(je, jb + split * per);
            je = min(je, jb + per);
        }
        __syncthreads(); /* the last query tile's readers of shared memory are done */
        gk_attn_load_tile(sq, qg + 2 * (int64_t)m0 * p->q_rs, p->q_rs, BM, sq_len - m0, chunks, valid, threads);
        if (jb < je)
            gk_attn_load_tile(skt, kg + 2 * (int64_t)jb * BN * p->k_rs, p->k_rs, BN, sk_len - jb * BN, chunks, valid,
                              threads);
        gk_cp_async_commit();

        float row_max[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, row_sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int i = 0; i < MW * DK / 2; i++) o[i] = 0.0f;

        for (int j = jb; j < je; j++) {
            const int n0 = j * BN;
            gk_cp_async_wait_0();
            __syncthreads(); /* K of tile j is in; every warp is done with V of tile j - 1 */
            if (j == jb && QREG) {
#pragma unroll
                for (int mw = 0; mw < MW; mw++)
#pragma unroll
                    for (int kk = 0; kk < DK / 16; kk++)
                        gk_ldmatrix_x4(qf + (mw * DK / 16 + kk) * 4, gk_attn_lane_at(sq, offv, wr + mw * 16, kk, chunks));
            }
            gk_attn_load_tile(svt, vg + 2 * (int64_t)n0 * p->v_rs, p->v_rs, BN, sk_len - n0, chunks, valid, threads);
            gk_cp_async_commit();

            /* S = Q K^T: K rows are B's columns (ldmatrix without .trans) */
#pragma unroll
            for (int i = 0; i < MW * BN / 2; i++) s[i] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < DK / 16; kk++) {
                unsigned qa[2][4];
                if (!QREG)
#pragma unroll
                    for (int mw = 0; mw < MW; mw++)
                        gk_ldmatrix_x4(qa[mw], gk_attn_lane_at(sq, offv, wr + mw * 16, kk, chunks));
#pragma unroll
                for (int jj = 0; jj < BN / 16; jj++) {
                    unsigned kb[4];
                    gk_ldmatrix_x4(kb, gk_attn_lane_at(skt, offk, jj * 16, kk, chunks));
#pragma unroll
                    for (int mw = 0; mw < MW; mw++) {
                        const unsigned *a = QREG ? qf + (mw * DK / 16 + kk) * 4 : qa[mw];
                        gk_attn_mma(s + mw * BN / 2 + 8 * jj, a, kb, dt);
                        gk_attn_mma(s + mw * BN / 2 + 8 * jj + 4, a, kb + 2, dt);
                    }
                }
            }
#pragma unroll
            for (int mw = 0; mw < MW; mw++) {
                float alpha[2];
                const int r0 = m0 + wr + mw * 16;
                gk_attn_logits(p, s + mw * BN / 2, BN / 2, gk_attn_tile_edge(p, r0, 16, n0, BN, sk_len, off), r0 + g,
                               n0 + t4 * 2, sk_len, off);
                gk_attn_softmax(s + mw * BN / 2, BN / 2, row_max + 2 * mw, row_sum + 2 * mw, alpha);
                gk_attn_rescale(o + mw * DK / 2, DK / 2, alpha);
            }

            gk_cp_async_wait_0();
            __syncthreads(); /* V of tile j is in; every warp is done with K of tile j */
            if (j + 1 < je) {
                const int n1 = n0 + BN;
                gk_attn_load_tile(skt, kg + 2 * (int64_t)n1 * p->k_rs, p->k_rs, BN, sk_len - n1, chunks, valid, threads);
            }
            gk_cp_async_commit();

            /* O += P V: P's accumulators are A fragments already (two n8 tiles make a k16);
               V rows are B's rows (ldmatrix .trans) */
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++) {
                unsigned pa[2][4];
#pragma unroll
                for (int mw = 0; mw < MW; mw++) gk_attn_pack_p(s + mw * BN / 2 + 8 * kk, dt, pa[mw]);
#pragma unroll
                for (int jj = 0; jj < DK / 16; jj++) {
                    unsigned vb[4];
                    gk_ldmatrix_x4_trans(vb, gk_attn_lane_at(svt, offv, kk * 16, jj, chunks));
#pragma unroll
                    for (int mw = 0; mw < MW; mw++) {
                        gk_attn_mma(o + mw * DK / 2 + 8 * jj, pa[mw], vb, dt);
                        gk_attn_mma(o + mw * DK / 2 + 8 * jj + 4, pa[mw], vb + 2, dt);
                    }
                }
            }
        }
        gk_cp_async_wait_0();
        __syncthreads(); /* every thread's Q copies have landed (an empty key range passed no barrier
                            since): the epilogue reuses Q's rows */
        /* (b, h, split), the sequence's length and the output's row 0 derived again here (the
           block indices re-read, cu_q too) rather than held in registers through the key loop */
        int eh, eb, esplit, esq;
        {
            unsigned cy, cz;
            asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(cy));
            asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(cz));
            eh = (int)cy;
            eb = (int)cz / p->splits;
            esplit = (int)cz % p->splits;
            esq = p->cu_q ? p->cu_q[eb + 1] - p->cu_q[eb] : p->sq;
        }
        const int64_t orow0 = p->cu_q ? (int64_t)p->cu_q[eb] : 0;
        char *og = (char *)p->out + 2 * ((p->cu_q ? orow0 * p->o_rs : eb * p->o_bs) + eh * p->o_hs);

#pragma unroll
        for (int mw = 0; mw < MW; mw++) {
            float lse_row[2];
            float *om = o + mw * DK / 2;
            const int rw = wr + mw * 16; /* these 16 rows' first, in the tile */
            gk_attn_finish(om, DK / 2, row_max + 2 * mw, row_sum + 2 * mw, lse_row);
            if (p->splits > 1) {
                /* fp32 partials: [split][b sq + row][h][DK], and their lse */
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const int row = m0 + rw + g + 8 * r;
                    if (row >= esq) continue;
                    const int64_t pr = ((int64_t)esplit * p->batch * p->sq + (int64_t)eb * p->sq + row) * p->hq + eh;
                    float *po = p->part_o + pr * p->d_kernel;
#pragma unroll
                    for (int i = 0; i < DK / 8; i++)
                        *(float2 *)(po + i * 8 + t4 * 2) = make_float2(om[4 * i + 2 * r], om[4 * i + 2 * r + 1]);
                    if (t4 == 0) p->part_lse[pr] = lse_row[r];
                }
                continue;
            }
            /* out through these 16 rows of the Q tile (only this warp reads them): 16-byte stores */
            __syncwarp();
#pragma unroll
            for (int i = 0; i < DK / 8; i++)
#pragma unroll
                for (int r = 0; r < 2; r++)
                    *(unsigned *)(gk_attn_at(sq, rw + g + 8 * r, i, chunks) + t4 * 4) = gk_pack2_f32(om + 4 * i + 2 * r, dt);
            __syncwarp();
            for (int i = lane; i < 16 * valid; i += 32) {
                const int r = i / valid, c = i % valid, row = m0 + rw + r;
                if (row < esq)
                    gk_st16(og + 2 * ((int64_t)row * p->o_rs + c * 8), *(const uint4 *)gk_attn_at(sq, rw + r, c, chunks));
            }
            if (p->lse && t4 == 0) {
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const int row = m0 + rw + g + 8 * r;
                    if (row >= esq) continue;
                    const int64_t li = p->cu_q ? (orow0 + row) * p->hq + eh : ((int64_t)eb * p->hq + eh) * p->sq + row;
                    p->lse[li] = lse_row[r];
                }
            }
        }
    }
}

/* The key splits' partials of every (b, row, h) merged, a block of 8 warps a row: out = sum_s
   e^(lse_s - lse) o_s, lse = ln sum_s e^lse_s. Each warp takes the splits' lse 32 at a time (max
   and weights in parallel); the row's column groups of 8 times the splits go over the block's
   lanes, so every partial a lane reads is in flight at once; sums across lanes and warps run in
   a fixed order (deterministic). */
#define GK_ATTN_COMBINE_MAX 256
static_assert(GK_ATTENTION_MAX_SPLITS <= GK_ATTN_COMBINE_MAX, "the combine merges at most GK_ATTN_COMBINE_MAX splits");
static __global__ void __launch_bounds__(256) gk_attn_combine(const gk_attn_args p)
{
    __shared__ float wsm[8][GK_ATTN_COMBINE_MAX];
    __shared__ float4 osm[8][32][2];
    const int64_t rows = (int64_t)p.batch * p.sq * p.hq, w = blockIdx.x;
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int h = (int)(w % p.hq), row = (int)(w / p.hq % p.sq), b = (int)(w / p.hq / p.sq);
    int sq_len = p.sq;
    int64_t qrow0 = 0;
    if (p.cu_q) {
        qrow0 = p.cu_q[b];
        sq_len = p.cu_q[b + 1] - (int)qrow0;
    }
    if (row >= sq_len) return; /* the whole block */
    gk_grid_dependency_wait(); /* launched dependent on the split kernel: its partials are in */
    const int64_t stride = rows;
    float m = -INFINITY;
    for (int s = lane; s < p.splits; s += 32) m = fmaxf(m, p.part_lse[s * stride + w]);
    m = gk_warp_max(m);
    float part = 0.0f;
    for (int s = lane; s < p.splits; s += 32) {
        const float l = p.part_lse[s * stride + w];
        const float wgt = l == -INFINITY ? 0.0f : expf(l - m); /* a NaN partial (NaN logit) stays NaN */
        wsm[wi][s] = wgt;
        part += wgt;
    }
    const float total = gk_warp_sum(part);
    __syncwarp();
    /* lane: column group cg (8 columns), phase ph; warp wi and phase pick the splits */
    const int groups = (p.d + 7) / 8, gp = groups <= 8 ? 8 : groups <= 16 ? 16 : 32, phases = 32 / gp;
    const int cg = lane % gp, ph = lane / gp, c0 = cg * 8;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (cg < groups) {
        const float *po = p.part_o + w * p.d_kernel + c0;
        const int64_t step = stride * p.d_kernel;
#pragma unroll 2
        for (int s = wi * phases + ph; s < p.splits; s += 8 * phases) {
            const float wgt = wsm[wi][s];
            const float4 x0 = *(const float4 *)(po + s * step), x1 = *(const float4 *)(po + s * step + 4);
            acc[0] += wgt * x0.x; acc[1] += wgt * x0.y; acc[2] += wgt * x0.z; acc[3] += wgt * x0.w;
            acc[4] += wgt * x1.x; acc[5] += wgt * x1.y; acc[6] += wgt * x1.z; acc[7] += wgt * x1.w;
        }
    }
    for (int o = gp; o < 32; o *= 2)
#pragma unroll
        for (int e = 0; e < 8; e++) acc[e] += __shfl_xor_sync(0xffffffffu, acc[e], o);
    if (ph == 0) {
        osm[wi][cg][0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        osm[wi][cg][1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
    }
    __syncthreads();
    if (wi != 0) return;
    if (lane < groups) {
        float r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int k = 0; k < 8; k++) { /* warps in order */
            const float4 a0 = osm[k][lane][0], a1 = osm[k][lane][1];
            r[0] += a0.x; r[1] += a0.y; r[2] += a0.z; r[3] += a0.w;
            r[4] += a1.x; r[5] += a1.y; r[6] += a1.z; r[7] += a1.w;
        }
        const float inv = total > 0.0f ? 1.0f / total : 0.0f;
        for (int e = 0; e < 8; e++) r[e] *= inv;
        const int64_t orow = p.cu_q ? (qrow0 + row) * p.o_rs : (int64_t)b * p.o_bs + (int64_t)row * p.o_rs;
        gk_st16((char *)p.out + 2 * (orow + (int64_t)h * p.o_hs + lane * 8), gk_pack_f32(r, p.dt, 8));
    }
    if (p.lse && lane == 0) {
        const int64_t li = p.cu_q ? (qrow0 + row) * p.hq + h : ((int64_t)b * p.hq + h) * p.sq + row;
        p.lse[li] = total > 0.0f || total != total ? m + logf(total) : -INFINITY;
    }
}

typedef void (*gk_attn_kernel)(gk_attn_args);

/* shared memory: the Q tile, one K tile and one V tile */
#define gk_attn_mma_smem_c(D, BM, BN) (((BM) + 2 * (BN)) * (D) * 2)

#define GK_DEFINE_ATTENTION_MMA(name, dt, D, BM, BN, MW, QREG, MINB)                                                \
    static_assert((D) % 16 == 0 && (D) <= 256, #name ": D is a multiple of 16, at most 256");                    \
    static_assert((MW) == 1 || (MW) == 2, #name ": MW is 1 or 2 m16 tiles a warp");                              \
    static_assert((BM) % (16 * (MW)) == 0 && (BM) / (16 * (MW)) <= 16, #name ": BM is 16 MW rows a warp, 1 to 16 warps"); \
    static_assert((BN) % 16 == 0 && (BN) >= 16 && (BN) <= 128, #name ": BN is a multiple of 16, at most 128");    \
    static_assert(gk_attn_mma_smem_c(D, BM, BN) <= 227 * 1024, #name ": over 227 KB of shared memory");         \
    static __global__ void __launch_bounds__((BM) * 2 / (MW), MINB) name(const __grid_constant__ gk_attn_args p) \
    {                                                                                                            \
        unsigned qf[(QREG) ? (MW) * (D) / 4 : 1];                                                                \
        float o[(MW) * (D) / 2], s[(MW) * (BN) / 2];                                                             \
        gk_attn_mma_run(&p, dt, D, BM, BN, MW, QREG, qf, o, s);                                                  \
    }                                                                                                            \
    static const gk_attention_config name##_config = {#name, D, BM, BN, (BM) * 2 / (MW), gk_attn_mma_smem_c(D, BM, BN), 0};

#endif /* __CUDACC__ */

#endif /* GK_ATTENTION_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_ATTENTION_IMPLEMENTATION)) && !defined(GK_ATTENTION_IMPLEMENTED)
#define GK_ATTENTION_IMPLEMENTED

#ifdef __CUDACC__

/* The shipped mma.sync configurations, as X(name, D, BM, BN, MW, QREG, MINB). The dispatcher
   takes the first one built for the smallest D >= the problem's; figures in
   gk_bench/RESULTS.md. Two m16 tiles a warp (MW 2) beat one by 18-30% (each K and V fragment
   feeds two MMAs), and 64 keys a tile beat 48 and 32 at D 128 (320, 287, 264 TFLOP/s at B4 H32
   S4096 on the H200). D 256 keeps one m16 tile (its O alone is 128 registers). */
#ifndef GK_ATTENTION_MMA_CONFIGS
#define GK_ATTENTION_MMA_CONFIGS(X)             \
    X(mma_d64_128x64, 64, 128, 64, 2, 1, 2)   \
    X(mma_d96_128x64, 96, 128, 64, 2, 0, 2)   \
    X(mma_d128_128x64, 128, 128, 64, 2, 0, 2) \
    X(mma_d256_64x64, 256, 64, 64, 1, 0, 2)
#endif
#define GK_ATTN_X_DEFINE(tile, D, BM, BN, MW, QREG, MINB)                                  \
    GK_DEFINE_ATTENTION_MMA(gk_attention_bf16_##tile, GK_BF16, D, BM, BN, MW, QREG, MINB) \
    GK_DEFINE_ATTENTION_MMA(gk_attention_f16_##tile, GK_F16, D, BM, BN, MW, QREG, MINB)
#define GK_ATTN_X_BF16(tile, D, BM, BN, MW, QREG, MINB) gk_attention_bf16_##tile,
#define GK_ATTN_X_F16(tile, D, BM, BN, MW, QREG, MINB) gk_attention_f16_##tile,
#define GK_ATTN_X_CONFIG(tile, D, BM, BN, MW, QREG, MINB) &gk_attention_bf16_##tile##_config,
GK_ATTENTION_MMA_CONFIGS(GK_ATTN_X_DEFINE)

static const gk_attn_kernel gk_attn_mma_kernels[2][32] = {{GK_ATTENTION_MMA_CONFIGS(GK_ATTN_X_BF16)},
                                                           {GK_ATTENTION_MMA_CONFIGS(GK_ATTN_X_F16)}};
static const gk_attention_config *const gk_attn_mma_configs[] = {GK_ATTENTION_MMA_CONFIGS(GK_ATTN_X_CONFIG)};
#define GK_ATTN_NMMA ((int)(sizeof gk_attn_mma_configs / sizeof gk_attn_mma_configs[0]))

#if GK_ATTENTION_SM90
#include "gk_attention_sm90.cuh"
#else
#define GK_ATTN_NWG 0
static const gk_attention_config *const gk_attn_wg_configs[1] = {NULL};
static cudaError_t gk_attn_wg_launch(const char *fn, int, const gk_attn_args *, cudaStream_t)
{
    return gk__fail(cudaErrorInvalidValue, fn, "this build has no wgmma attention kernels");
}
#endif

GK_EXTERN_C_BEGIN

GK_IMPL gk_attention_params gk_attention_params_dense(int batch, int heads_q, int heads_kv, int head_dim, int seqlen_q,
                                                      int seqlen_k)
{
    gk_attention_params a;
    memset(&a, 0, sizeof a);
    a.batch = batch;
    a.heads_q = heads_q;
    a.heads_kv = heads_kv;
    a.head_dim = head_dim;
    a.seqlen_q = seqlen_q;
    a.seqlen_k = seqlen_k;
    a.q_head_stride = a.out_head_stride = head_dim;
    a.q_row_stride = a.out_row_stride = (int64_t)heads_q * head_dim;
    a.q_batch_stride = a.out_batch_stride = (int64_t)seqlen_q * heads_q * head_dim;
    a.k_head_stride = a.v_head_stride = head_dim;
    a.k_row_stride = a.v_row_stride = (int64_t)heads_kv * head_dim;
    a.k_batch_stride = a.v_batch_stride = (int64_t)seqlen_k * heads_kv * head_dim;
    a.window_left = a.window_right = -1;
    return a;
}

/* Visible (row, key) pairs of one sequence: the FLOPs' mask fraction. */
static double gk_attn_visible_pairs(const gk_attention_params *p)
{
    const int right = p->causal ? 0 : p->window_right;
    if (p->window_left < 0 && right < 0) return (double)p->seqlen_q * p->seqlen_k;
    double n = 0;
    for (int i = 0; i < p->seqlen_q; i++) {
        int lo, hi;
        gk_attn_key_range(i, i + 1, p->seqlen_q, p->seqlen_k, p->window_left, right, &lo, &hi);
        n += hi - lo;
    }
    return n;
}

GK_IMPL gk_ledger gk_attention_ledger(const gk_attention_params *p, int dtype)
{
    gk_ledger l;
    memset(&l, 0, sizeof l);
    if (!p) return l;
    const double es = gk_dtype_size(dtype), b = p->batch, d = p->head_dim;
    l.flops = 4.0 * b * p->heads_q * d * gk_attn_visible_pairs(p);
    l.bytes = es * d * b * (2.0 * p->seqlen_q * p->heads_q + 2.0 * p->seqlen_k * p->heads_kv);
    return l;
}

GK_EXTERN_C_END

/* Bytes spanned by a tensor of counts[4] elements along strides[4] (the last dense): refused
   past 2^63. */
static cudaError_t gk_attn_span(const char *fn, const char *arg, const int64_t *counts, const int64_t *strides, int64_t *bytes)
{
    double far = 0;
    int64_t last = 0;
    for (int i = 0; i < 4; i++) far += (double)(counts[i] - 1) * (double)strides[i];
    if (far + counts[3] > 4.0e18) return gk__fail(cudaErrorInvalidValue, fn, "'%s' spans more than 2^62 elements", arg);
    for (int i = 0; i < 4; i++) last += (counts[i] - 1) * strides[i]; /* no overflow: checked in double */
    *bytes = (last + 1) * 2;
    return cudaSuccess;
}

static int gk_attn_kernel_dim(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 256; }

/* The checks every entry point runs; fills *a (its pointers and splits are set by the caller).
   *empty: nothing to compute. */
static cudaError_t gk_attn_check_params(const char *fn, int dtype, const gk_attention_params *pp, gk_attn_args *a,
                                        int *empty)
{
    GK_TRY(gk_check_ptr(fn, "params", pp));
    const gk_attention_params p = *pp;
    *empty = 1;
    if (dtype != GK_BF16 && dtype != GK_F16)
        return gk__fail(cudaErrorInvalidValue, fn, "dtype %d is not GK_BF16 or GK_F16", dtype);
    GK_TRY(gk_check_nonneg(fn, "batch", p.batch));
    GK_TRY(gk_check_nonneg(fn, "heads_q", p.heads_q));
    GK_TRY(gk_check_nonneg(fn, "heads_kv", p.heads_kv));
    GK_TRY(gk_check_nonneg(fn, "seqlen_q", p.seqlen_q));
    GK_TRY(gk_check_nonneg(fn, "seqlen_k", p.seqlen_k));
    if (p.batch == 0 || p.heads_q == 0 || p.seqlen_q == 0) return cudaSuccess;
    *empty = 0;
    GK_TRY(gk_check_positive(fn, "heads_kv", p.heads_kv));
    if (p.heads_q % p.heads_kv)
        return gk__fail(cudaErrorInvalidValue, fn, "heads_q (%d) is not a multiple of heads_kv (%d)", p.heads_q, p.heads_kv);
    if (p.head_dim < 8 || p.head_dim > 256 || p.head_dim % 8)
        return gk__fail(cudaErrorInvalidValue, fn, "head_dim %d is not supported: a multiple of 8 from 8 to 256",
                        p.head_dim);
    if (p.heads_q > 65535) return gk__fail(cudaErrorInvalidValue, fn, "heads_q %d is past 65535", p.heads_q);
    if (p.batch > 65535) return gk__fail(cudaErrorInvalidValue, fn, "batch %d is past 65535", p.batch);
    if (!(p.scale >= 0.0f) || p.scale > 3.0e38f)
        return gk__fail(cudaErrorInvalidValue, fn, "scale %g is not finite and >= 0 (0: 1/sqrt(D))", (double)p.scale);
    if (!(p.softcap >= 0.0f) || p.softcap > 3.0e38f)
        return gk__fail(cudaErrorInvalidValue, fn, "softcap %g is not finite and >= 0 (0: none)", (double)p.softcap);
    if (p.causal != 0 && p.causal != 1) return gk__fail(cudaErrorInvalidValue, fn, "causal is %d, not 0 or 1", p.causal);
    if ((p.cu_seqlens_q == NULL) != (p.cu_seqlens_k == NULL))
        return gk__fail(cudaErrorInvalidValue, fn, "cu_seqlens_q and cu_seqlens_k come together (one is NULL)");
    /* strides */
    memset(a, 0, sizeof *a);
    a->q_bs = p.q_batch_stride; a->q_rs = p.q_row_stride; a->q_hs = p.q_head_stride;
    a->k_bs = p.k_batch_stride; a->k_rs = p.k_row_stride; a->k_hs = p.k_head_stride;
    a->v_bs = p.v_batch_stride; a->v_rs = p.v_row_stride; a->v_hs = p.v_head_stride;
    a->o_bs = p.out_batch_stride; a->o_rs = p.out_row_stride; a->o_hs = p.out_head_stride;
    a->cu_q = p.cu_seqlens_q;
    a->cu_k = p.cu_seqlens_k;
    a->batch = p.batch;
    a->hq = p.heads_q;
    a->hkv = p.heads_kv;
    a->group = p.heads_q / p.heads_kv;
    a->d = p.head_dim;
    a->d_kernel = gk_attn_kernel_dim(p.head_dim);
    a->sq = p.seqlen_q;
    a->sk = p.seqlen_k;
    const float scale = p.scale > 0.0f ? p.scale : 1.0f / sqrtf((float)p.head_dim);
    a->sl2 = scale * GK_LOG2E;
    if (p.softcap > 0.0f) {
        a->softcap = p.softcap;
        a->cap_inv = scale / p.softcap;
        a->sl2 = p.softcap * GK_LOG2E;
    }
    a->left = p.window_left < 0 ? -1 : p.window_left;
    a->right = p.causal ? 0 : (p.window_right < 0 ? -1 : p.window_right);
    a->splits = 1;
    a->dt = dtype;
    return cudaSuccess;
}

/* The tensors' checks: pointers, strides, spans and aliasing; sets a's pointers. */
static cudaError_t gk_attn_check_tensors(const char *fn, void *out, const void *q, const void *k, const void *v,
                                         float *lse, const gk_attention_params *pp, gk_attn_args *a)
{
    const gk_attention_params p = *pp;
    const int varlen = p.cu_seqlens_q != NULL;
    GK_TRY(gk_check_ptr(fn, "out", out));
    GK_TRY(gk_check_ptr(fn, "q", q));
    GK_TRY(gk_check_ptr(fn, "k", k));
    GK_TRY(gk_check_ptr(fn, "v", v));
    const char *names[4] = {"out", "q", "k", "v"};
    const void *ptrs[4] = {out, q, k, v};
    for (int i = 0; i < 4; i++)
        if (!gk_is_aligned(ptrs[i], 16)) return gk__fail(cudaErrorInvalidValue, fn, "'%s' (%p) is not 16-byte aligned", names[i], ptrs[i]);
    if (lse) GK_TRY(gk_check_elem_aligned(fn, "lse", lse, 4));
    if (varlen) {
        GK_TRY(gk_check_elem_aligned(fn, "cu_seqlens_q", p.cu_seqlens_q, 4));
        GK_TRY(gk_check_elem_aligned(fn, "cu_seqlens_k", p.cu_seqlens_k, 4));
    }
    const char *snames[12] = {"q_batch_stride", "q_row_stride", "q_head_stride", "k_batch_stride", "k_row_stride",
                              "k_head_stride", "v_batch_stride", "v_row_stride", "v_head_stride", "out_batch_stride",
                              "out_row_stride", "out_head_stride"};
    const int64_t st[12] = {p.q_batch_stride, p.q_row_stride, p.q_head_stride, p.k_batch_stride, p.k_row_stride,
                            p.k_head_stride, p.v_batch_stride, p.v_row_stride, p.v_head_stride, p.out_batch_stride,
                            p.out_row_stride, p.out_head_stride};
    for (int i = 0; i < 12; i++) {
        if (varlen && i % 3 == 0) continue; /* batch strides unused */
        GK_TRY(gk_check_stride(fn, snames[i], st[i], 8));
    }
    /* spans (varlen: B Sq rows bound the packed tokens) and aliasing */
    const int64_t bq = varlen ? 1 : p.batch, rq = varlen ? (int64_t)p.batch * p.seqlen_q : p.seqlen_q;
    const int64_t bk = varlen ? 1 : p.batch, rk = varlen ? (int64_t)p.batch * p.seqlen_k : p.seqlen_k;
    const int64_t cq[4] = {bq, rq, p.heads_q, p.head_dim}, ck[4] = {bk, rk > 0 ? rk : 1, p.heads_kv, p.head_dim};
    const int64_t sq_[4] = {varlen ? 0 : p.q_batch_stride, p.q_row_stride, p.q_head_stride, 1};
    const int64_t sk_[4] = {varlen ? 0 : p.k_batch_stride, p.k_row_stride, p.k_head_stride, 1};
    const int64_t sv_[4] = {varlen ? 0 : p.v_batch_stride, p.v_row_stride, p.v_head_stride, 1};
    const int64_t so_[4] = {varlen ? 0 : p.out_batch_stride, p.out_row_stride, p.out_head_stride, 1};
    int64_t nq, nk, nv, no;
    GK_TRY(gk_attn_span(fn, "q", cq, sq_, &nq));
    GK_TRY(gk_attn_span(fn, "k", ck, sk_, &nk));
    GK_TRY(gk_attn_span(fn, "v", ck, sv_, &nv));
    GK_TRY(gk_attn_span(fn, "out", cq, so_, &no));
    /* varlen: the packed rows' count is not known here; two rows at least are checked against
       the heads (B Sq would refuse a valid head-major out of fewer tokens) */
    const int64_t ci[4] = {cq[0], varlen ? (cq[1] > 1 ? 2 : 1) : cq[1], cq[2], cq[3]};
    GK_TRY(gk_check_injective(fn, "out", ci, so_));
    if (!varlen) {
        /* with varlen the packed extents are unknown here: only the strides are checked */
        const int64_t nl = (int64_t)p.batch * p.heads_q * p.seqlen_q * 4;
        GK_TRY(gk_check_disjoint(fn, "out", out, no, "q", q, nq));
        GK_TRY(gk_check_disjoint(fn, "out", out, no, "k", k, nk));
        GK_TRY(gk_check_disjoint(fn, "out", out, no, "v", v, nv));
        if (lse) {
            GK_TRY(gk_check_disjoint(fn, "lse", lse, nl, "out", out, no));
            GK_TRY(gk_check_disjoint(fn, "lse", lse, nl, "q", q, nq));
            GK_TRY(gk_check_disjoint(fn, "lse", lse, nl, "k", k, nk));
            GK_TRY(gk_check_disjoint(fn, "lse", lse, nl, "v", v, nv));
        }
    }

    a->out = out;
    a->q = q;
    a->k = k;
    a->v = v;
    a->lse = lse;
    return cudaSuccess;
}

/* The mma.sync configuration for a problem: the first built for its kernel head dim. */
static int gk_attn_mma_pick(const gk_attn_args *a)
{
    for (int c = 0; c < GK_ATTN_NMMA; c++)
        if (gk_attn_mma_configs[c]->head_dim == a->d_kernel) return c;
    return -1;
}

/* Key splits: only where the query tiles of every (b, h) leave SMs idle, and never so many that a
   split gets under 2 key tiles. */
static int gk_attn_splits_for(const gk_attn_args *a, int bm, int bn, int sms)
{
    const int64_t blocks = gk_ceil_div(a->sq, bm) * a->hq * a->batch;
    const int64_t ktiles = gk_ceil_div(a->sk, bn);
    if (blocks >= sms || ktiles < 4) return 1;
    int64_t s = gk_ceil_div(2 * (int64_t)sms, blocks);
    if (s > ktiles / 2) s = ktiles / 2;
    if (s > GK_ATTENTION_MAX_SPLITS) s = GK_ATTENTION_MAX_SPLITS;
    if (s * a->batch > 65535) s = 65535 / a->batch;
    return s < 1 ? 1 : (int)s;
}

static size_t gk_attn_split_bytes(const gk_attn_args *a, int splits)
{
    if (splits <= 1) return 0;
    const size_t rows = (size_t)splits * a->batch * a->sq * a->hq;
    return gk_round_up((int64_t)(rows * a->d_kernel * 4), 256) + gk_round_up((int64_t)(rows * 4), 256);
}

static cudaError_t gk_attn_launch_mma(const char *fn, int config, gk_attn_args a, void *workspace,
                                      size_t workspace_bytes, int splits, cudaStream_t stream)
{
    const gk_attention_config *cfg = gk_attn_mma_configs[config];
    if (cfg->head_dim < a.d)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s is built for D <= %d, not %d", cfg->name,
                        cfg->head_dim, a.d);
    a.d_kernel = cfg->head_dim;
    /* the caller's split count and workspace are checked before any CUDA call */
    if (splits > GK_ATTENTION_MAX_SPLITS || (int64_t)splits * a.batch > 65535)
        return gk__fail(cudaErrorInvalidValue, fn, "%d key splits: at most %d, and batch x splits <= 65535", splits,
                        GK_ATTENTION_MAX_SPLITS);
    if (workspace && !gk_is_aligned(workspace, 256))
        return gk__fail(cudaErrorInvalidValue, fn, "workspace (%p) is not 256-byte aligned", workspace);
    if (splits <= 0) {
        int sms = 0;
        GK_TRY(gk_sm_count(&sms));
        splits = workspace ? gk_attn_splits_for(&a, cfg->bm, cfg->bn, sms) : 1;
    }
    while (splits > 1 && gk_attn_split_bytes(&a, splits) > workspace_bytes) splits--;
    if (splits > 1) {
        const size_t rows = (size_t)splits * a.batch * a.sq * a.hq;
        a.part_o = (float *)workspace;
        a.part_lse = (float *)((char *)workspace + gk_round_up((int64_t)(rows * a.d_kernel * 4), 256));
    }
    a.splits = splits;
    const void *kern = (const void *)gk_attn_mma_kernels[a.dt == GK_F16][config];
    static unsigned attr_set[2][32];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[a.dt == GK_F16][config]));
    const int64_t mtiles = gk_ceil_div(a.sq, cfg->bm);
    const dim3 grid((unsigned)(mtiles < 2147483647 ? mtiles : 2147483647), (unsigned)a.hq, (unsigned)(a.batch * splits));
    ((gk_attn_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(a);
    GK_TRY(gk_check_launch(fn));
    if (splits > 1) {
        const int64_t rows = (int64_t)a.batch * a.sq * a.hq;
        gk_attn_combine<<<(unsigned)rows, 256, 0, stream>>>(a);
        GK_TRY(gk_check_launch(fn));
    }
    return cudaSuccess;
}

/* The wgmma configuration for a problem, or -1: D 64, 128 or 256, no varlen, no key splits
   wanted, an sm_90a image on a 9.0 GPU. */
static int gk_attn_wg_pick(const gk_attn_args *a, int splits)
{
#if GK_ATTENTION_SM90
    if (a->cu_q || a->sk == 0 || splits > 1 || !gk_attn_wg_ready()) return -1;
    for (int c = 0; c < GK_ATTN_NWG; c++)
        if (gk_attn_wg_configs[c]->head_dim == a->d) return c;
#else
    (void)a;
    (void)splits;
#endif
    return -1;
}

/* The dispatcher: the wgmma kernel for D 64, 128, 256 without varlen where no key split is
   wanted, else the mma.sync configuration of the kernel head dim, with the splits it wants when
   there is a workspace (splits > 0: the caller's). *config in the public numbering. */
static cudaError_t gk_attn_pick(const char *fn, const gk_attn_args *a, int have_workspace, int splits, int *config,
                                int *want)
{
    const int mc = gk_attn_mma_pick(a);
    int sms = 0;
    if (mc < 0) return gk__fail(cudaErrorInvalidValue, fn, "no mma.sync configuration is built for D %d", a->d_kernel);
    *want = splits;
    if (*want == 0) {
        GK_TRY(gk_sm_count(&sms));
        *want = have_workspace ? gk_attn_splits_for(a, gk_attn_mma_configs[mc]->bm, gk_attn_mma_configs[mc]->bn, sms) : 1;
    }
    const int wc = gk_attn_wg_pick(a, *want);
    *config = wc >= 0 ? GK_ATTN_NMMA + wc : mc;
    if (wc >= 0) *want = 1;
    return cudaSuccess;
}

static cudaError_t gk_attn_run(const char *fn, int config, int splits, int dtype, void *out, const void *q,
                               const void *k, const void *v, float *lse, const gk_attention_params *params,
                               void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    gk_attn_args a;
    int empty = 0;
    GK_TRY(gk_attn_check_params(fn, dtype, params, &a, &empty));
    if (empty) return cudaSuccess;
    GK_TRY(gk_attn_check_tensors(fn, out, q, k, v, lse, params, &a));
    if (config < -1 || config >= GK_ATTN_NMMA + GK_ATTN_NWG)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %d is not one of 0 .. %d (or -1)", config,
                        GK_ATTN_NMMA + GK_ATTN_NWG - 1);
    if (splits < 0) return gk__fail(cudaErrorInvalidValue, fn, "splits is %d; it must be >= 0", splits);
    if (config >= GK_ATTN_NMMA) {
        if (splits > 1) return gk__fail(cudaErrorInvalidValue, fn, "the wgmma configurations do not split keys");
        return gk_attn_wg_launch(fn, config - GK_ATTN_NMMA, &a, stream);
    }
    if (config < 0) {
        int want = 0;
        GK_TRY(gk_attn_pick(fn, &a, workspace != NULL, splits, &config, &want));
        if (config >= GK_ATTN_NMMA) return gk_attn_wg_launch(fn, config - GK_ATTN_NMMA, &a, stream);
    }
    return gk_attn_launch_mma(fn, config, a, workspace, workspace_bytes, splits, stream);
}

GK_EXTERN_C_BEGIN

GK_IMPL gk_attention_plan gk_attention_plan_for(const gk_attention_params *params)
{
    gk_attention_plan pl = {-1, 0, 0};
    gk_attn_args a;
    int empty = 0;
    gk__begin();
    if (gk_attn_check_params("gk_attention_plan_for", GK_BF16, params, &a, &empty) != cudaSuccess || empty) return pl;
    if (gk_attn_pick("gk_attention_plan_for", &a, 1, 0, &pl.config, &pl.splits) != cudaSuccess) {
        pl.config = -1;
        return pl;
    }
    if (pl.config < GK_ATTN_NMMA) pl.workspace_bytes = gk_attn_split_bytes(&a, pl.splits);
    return pl;
}

GK_IMPL size_t gk_attention_workspace_bytes(const gk_attention_params *params)
{
    return gk_attention_plan_for(params).workspace_bytes;
}

GK_IMPL int gk_attention_config_count(void) { return GK_ATTN_NMMA + GK_ATTN_NWG; }

GK_IMPL gk_attention_config gk_attention_config_info(int config)
{
    gk_attention_config c;
    memset(&c, 0, sizeof c);
    if (config >= 0 && config < GK_ATTN_NMMA) c = *gk_attn_mma_configs[config];
    else if (config >= GK_ATTN_NMMA && config < GK_ATTN_NMMA + GK_ATTN_NWG) c = *gk_attn_wg_configs[config - GK_ATTN_NMMA];
    return c;
}

GK_IMPL cudaError_t gk_attention_ex(int config, int splits, int dtype, void *out, const void *q, const void *k,
                                    const void *v, float *lse, const gk_attention_params *params, void *workspace,
                                    size_t workspace_bytes, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_attention_ex", gk_attn_run("gk_attention_ex", config, splits, dtype, out, q, k, v, lse, params,
                                                  workspace, workspace_bytes, stream));
}

GK_IMPL cudaError_t gk_attention_fwd_bf16(gk_bf16 *out, const gk_bf16 *q, const gk_bf16 *k, const gk_bf16 *v,
                                          float *lse, const gk_attention_params *params, void *workspace,
                                          size_t workspace_bytes, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_attention_fwd_bf16", gk_attn_run("gk_attention_fwd_bf16", -1, 0, GK_BF16, out, q, k, v, lse,
                                                        params, workspace, workspace_bytes, stream));
}

GK_IMPL cudaError_t gk_attention_fwd_f16(gk_f16 *out, const gk_f16 *q, const gk_f16 *k, const gk_f16 *v, float *lse,
                                         const gk_attention_params *params, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_attention_fwd_f16", gk_attn_run("gk_attention_fwd_f16", -1, 0, GK_F16, out, q, k, v, lse, params,
                                                       workspace, workspace_bytes, stream));
}

GK_EXTERN_C_END

#endif /* __CUDACC__ */

#endif /* attention implementation */
