/* gk_paged.cuh - gk paged KV cache v0.1: the cache layout vLLM and FlashInfer use, the fused
   RoPE + cache append of a decode or prefill step (q and k rotated, k and v written into their
   cache slots, converted to fp8 e4m3 where the cache is fp8, in one memory-bound pass), and
   split-K decode attention over the cache (FlashDecoding), 1 to 16 query tokens a sequence.

   Needs gk_core.cuh, gk_mma.cuh and gk_attention.cuh (same folder; the decode kernel shares the
   online softmax and the split combine of gk_attention.cuh). In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_PAGED_IMPLEMENTATION for this header alone, with
       #include "gk_paged.cuh"         GK_CORE_IMPLEMENTATION where no other file defines it)

   THE CACHE (NHD, as vLLM and FlashInfer lay it out; strides in elements)

       k_cache, v_cache: [num_blocks][block_size][Hkv][D]

       block b:  +----------------- block_size slots ------------------+
                 | slot 0: head 0 [D] | head 1 [D] | ... | head Hkv-1 [D] |
                 | slot 1: ...                                           |
                 +-------------------------------------------------------+
       flat slot s = b * block_size + i (slot i of block b); token t of a sequence lives in block
       block_table[seq][t / block_size], slot t % block_size. Element (b, i, h, d) of k_cache is at
       k_cache[b * k_block_stride + i * k_slot_stride + h * k_head_stride + d].

     The element type is bf16, f16 or fp8 e4m3. An fp8 cache stores value / scale (one fp32 scale
     for k, one for v), saturated to +-448.

   ROPE (rotary position embedding), in fp32
     pairs (x1, x2) of the first rotary_dim dims of a head become
       (x1 cos a - x2 sin a, x2 cos a + x1 sin a),  a = position * freq_j,  freq_j = theta^(-2j / rotary_dim)
     NeoX style pairs dim j with j + rotary_dim / 2 (halves); GPT-J style pairs 2j with 2j + 1
     (interleaved). Dims past rotary_dim pass through. a is formed and reduced mod 2 pi in double,
     so positions past 2^31 (int64) keep their accuracy. With a cos_sin cache (device fp32
     [max_position][rotary_dim]: the rotary_dim / 2 cosines, then the sines) the kernel reads it
     instead. Llama-3.1 frequency scaling (factor > 0) divides the low frequencies by factor and
     blends the middle band, as the reference implementation does.

   PUBLIC FUNCTIONS (T in bf16, f16: the dtype of q, k, v)
     gk_paged_kv gk_paged_kv_dense(k_cache, v_cache, dtype, num_blocks, block_size, Hkv, D)
         a cache of contiguous NHD blocks, scales 1
     gk_rope gk_rope_default(rotary_dim, theta)
         NeoX style, computed cos and sin, no scaling
     gk_rope_append_T(q_out, q, k, v, params, rope, cache, stream)
         for each token t < tokens: q_out[t] = rope(q[t]); cache slot slot_mapping[t] gets
         rope(k[t]) and v[t]. q_out may be q (in place), also where q, k and v are slices of one
         packed QKV row; k_cache and v_cache may interleave in one buffer (FlashInfer's [blocks][2]
         layout), each within its block stride. A slot of -1 is skipped (padding, as vLLM
         marks it); a slot outside [0, num_blocks block_size), or a position outside [0,
         max_position) when a cos_sin cache is given, skips the token (q_out and the cache untouched)
         and sets *params->error_flag to 1 (when not NULL), checked on the device.
     gk_rope_append_ledger(params, dtype, cache_dtype)
         bytes: q read and written, k and v read, k and v written to the cache, positions and
         slots read

   DECODE ATTENTION, for each sequence b (L = seq_lens[b] tokens in the cache, the new ones
   included), query token i < nq (at position p_i = L - nq + i), query head h:
       s_j   = scale q . k_j  (fp8: scale k_scale q . k_stored; scale 1/sqrt(D) unless set)
       s_j   = softcap tanh(s_j / softcap)     (softcap > 0)
       s_j  += alibi_slopes[h] (j - p_i)       (alibi_slopes not NULL)
       out   = sum_j softmax(s)_j v_j          (fp8: times v_scale)
       lse   = ln sum_j e^(s_j)                (fp32 [B][Hq][nq], optional)
     over the keys j in [max(0, p_i - window_left), p_i] (window_left < 0: from 0): the queries
     are causal among themselves (speculative decoding). A query that sees no key (p_i < 0, or
     L = 0) gets out 0 and lse -inf. q and out are [B][nq][Hq][D] with strides; k and v come from
     kv head h / (Hq / Hkv). Deterministic: no atomics, split partials merge in a fixed order.

     gk_paged_decode_params gk_paged_decode_params_dense(B, Hq, Hkv, D, nq, block_table,
         max_blocks_per_seq, seq_lens, max_seq_len)
         contiguous q and out, block_table [B][max_blocks_per_seq], no mask, default scale
     gk_paged_decode_T(out, lse, q, cache, params, workspace, workspace_bytes, stream)
         lse may be NULL. With a workspace (256-byte aligned; gk_paged_decode_plan_for says how
         many bytes) the keys of a sequence split over several blocks (FlashDecoding) and a
         combine kernel merges them; without one each (sequence, kv head) is one block.
     gk_paged_decode_plan_for(params, cache)   the configuration, key splits, keys a split and
                                               workspace bytes the dispatcher picks
     gk_paged_decode_ex(config, splits, dtype, ...the same arguments...)
         one configuration (-1: the dispatcher's) and split count (0: the dispatcher's), for
         benchmarks and tests; gk_paged_decode_config_count(), gk_paged_decode_config_info(i)
     gk_paged_decode_ledger(params, dtype, cache_dtype, host_seq_lens)
         bytes: q, out, the k and v rows read (host_seq_lens, or max_seq_len for every sequence
         when NULL) and the lengths; FLOPs 4 Hq D a (query, visible key) pair

     How it runs: a block takes one (sequence, kv head, 16 rows, key split): its rows are the nq
     query tokens times the Hq / Hkv heads of the kv head (more than 16 take more blocks), so
     each k and v byte of a split is read once for the whole group. Key tiles go by cp.async,
     gathered key by key through the block table (a warp access takes whole key rows, so the L2
     sees full lines), into a ring of STAGES buffers in which each warp loads and reads its own
     16 keys (32 with an fp8 cache) of every tile and waits for no other warp; S = Q K^T and O += P V run on m16n8k16
     with the online softmax of gk_attention.cuh, and the warps' partials merge through shared
     memory at the end. Key splits are chosen from a model of the schedule (rounds of resident
     blocks times the tiles a block streams; with host_seq_lens, from the real lengths); their
     combine is launched dependent (sm_90) so that it starts as the split blocks finish. An fp8
     cache is converted in registers (e4m3 pairs to fp16 pairs after ldmatrix) and multiplied in
     fp16: q must stay within fp16's range there.

   ARGUMENTS AND ERRORS
     RoPE + append: tokens == 0 is a no-op. Null pointers, Hq not a multiple of Hkv, D not a
     multiple of 8 or past 256, rotary_dim odd, past D, or not a multiple of 16 (NeoX) or 8
     (GPT-J), a cache dtype other than T's or e4m3, strides or pointers off 16 bytes (8 for an
     fp8 cache), q_out aliasing k, v or the cache, a non-positive theta or fp8 scale return
     cudaErrorInvalidValue before anything launches; gk_failure_reason() says which.
     Decode: B == 0 is a no-op. Null out, q, cache, params, block_table or seq_lens; B past
     65535; Hq not a multiple of Hkv; D not a multiple of 8 (16 with an fp8 cache) from 8 to 256;
     queries outside 1..16; a cache whose heads, D or dtype (q's or e4m3) differ, fp8 scales not
     > 0, block_size not a power of two up to 256; max_seq_len < 0 or block_table_stride under
     ceil(max_seq_len / block_size); q, out or cache pointers or strides off 16 bytes; out's
     strides putting two rows on one address, out overlapping q or lse; scale negative or not
     finite, softcap negative; a workspace off 256 bytes; in gk_paged_decode_ex an unknown
     configuration, one built for a smaller D or the other cache type, or splits outside
     0..GK_PAGED_MAX_SPLITS: cudaErrorInvalidValue before anything launches. Checked on the
     device (error_flag): a length outside [0, max_seq_len] (taken as clamped) and a block id
     outside the cache (its keys read as zeros). A plan for B == 0 reports config -1.

   HOW THE APPEND RUNS
     A block a token (grid-stride): each thread's first unit of the token's rows loads as soon as
     the token is known, under the token's cos and sin, which are formed once into shared memory;
     then the threads share the token's units of 16-byte chunks (8 values): per q head and per k
     head the rotary units (NeoX: a chunk of the first half with its partner in the second, so
     both of a pair's values are in registers; GPT-J: a chunk of 4 pairs) and the chunks past
     rotary_dim, per v head its chunks, stored into the slot.

   MEASURED   gk_bench/RESULTS.md.
*/
#include "gk_core.cuh"
#include "gk_mma.cuh"
#include "gk_attention.cuh"
#include <math.h> /* pow: gk_rope_freq is host code too */

#ifndef GK_PAGED_CUH
#define GK_PAGED_CUH

typedef enum gk_rope_style { GK_ROPE_NEOX = 0, GK_ROPE_GPTJ = 1 } gk_rope_style;

/* A paged K / V cache (see THE CACHE above). */
typedef struct gk_paged_kv {
    void *k_cache, *v_cache;
    int dtype;                    /* GK_BF16, GK_F16 or GK_E4M3 */
    int num_blocks, block_size;   /* block_size a power of two, 1 to 256 */
    int heads_kv, head_dim;
    int64_t k_block_stride, k_slot_stride, k_head_stride; /* elements */
    int64_t v_block_stride, v_slot_stride, v_head_stride;
    float k_scale, v_scale;       /* fp8: stored = value / scale; 16-bit caches ignore them */
} gk_paged_kv;

/* How to rotate (see ROPE above). */
typedef struct gk_rope {
    int style;                    /* GK_ROPE_NEOX or GK_ROPE_GPTJ */
    int rotary_dim;               /* <= D: the dims rotated, the rest pass through */
    float theta;                  /* base of the frequencies, e.g. 10000 or 500000 */
    const float *cos_sin;         /* optional device [max_position][rotary_dim] table, or NULL */
    int64_t max_position;         /* rows of cos_sin */
    float factor;                 /* Llama-3.1 scaling when > 0: factor, e.g. 8 */
    float low_freq_factor, high_freq_factor; /* e.g. 1 and 4 */
    int original_max_position;    /* e.g. 8192 */
} gk_rope;

/* The tokens of one step. Strides in elements; q, k, v may be slices of one packed QKV row. */
typedef struct gk_rope_append_params {
    int tokens, heads_q, heads_kv, head_dim;
    int64_t q_token_stride, q_head_stride;
    int64_t k_token_stride, k_head_stride;
    int64_t v_token_stride, v_head_stride;
    int64_t q_out_token_stride, q_out_head_stride;
    const void *positions;        /* device [tokens], int32 or int64 (positions_int64) */
    int positions_int64;
    const int64_t *slot_mapping;  /* device [tokens]: flat cache slot, -1 = skip */
    int *error_flag;              /* optional device int, set to 1 on a bad slot or position */
} gk_rope_append_params;

/* One decode step over the cache. Strides in elements; q and out [B][nq][Hq][D]. */
typedef struct gk_paged_decode_params {
    int batch;                    /* B sequences */
    int heads_q, heads_kv, head_dim;
    int queries;                  /* nq: 1 to 16 query tokens a sequence, its last nq positions */
    int64_t q_batch_stride, q_row_stride, q_head_stride;
    int64_t out_batch_stride, out_row_stride, out_head_stride;
    const int *block_table;       /* device int32 [B][block_table_stride]: cache blocks in order */
    int64_t block_table_stride;   /* >= ceil(max_seq_len / block_size) */
    const int *seq_lens;          /* device int32 [B]: tokens in the cache, 0 to max_seq_len */
    int max_seq_len;              /* a bound on every seq_lens[b]: sizes the key splits */
    float scale;                  /* 0: 1 / sqrt(D) */
    float softcap;                /* > 0: logits pass through softcap tanh(x / softcap) */
    int window_left;              /* >= 0: a query at p sees keys p - window_left .. p; < 0: all */
    const float *alibi_slopes;    /* optional device fp32 [Hq] */
    int *error_flag;              /* optional device int: set to 1 on a block id outside the cache
                                     or a length past max_seq_len (those keys read as 0) */
    const int *host_seq_lens;     /* optional host copy of seq_lens: the key splits then follow
                                     the real lengths (mixed lengths balance better) */
} gk_paged_decode_params;

/* A decode kernel configuration. */
typedef struct gk_paged_decode_config {
    const char *name;
    int head_dim;                 /* the D it is built for (smaller D run on it zero-padded) */
    int fp8;                      /* 1: for an e4m3 cache */
    int keys;                     /* keys a tile (16 a warp) */
    int stages;                   /* tiles in flight */
    int threads, smem_bytes;
} gk_paged_decode_config;

/* What the dispatcher does for a problem (config -1: bad params). */
typedef struct gk_paged_decode_plan {
    int config, splits;
    int split_keys;               /* keys a split: split s takes [s split_keys, (s + 1) split_keys) */
    size_t workspace_bytes;       /* what the splits need; 0 for one */
} gk_paged_decode_plan;

GK_EXTERN_C_BEGIN
GK_DECL gk_paged_kv gk_paged_kv_dense(void *k_cache, void *v_cache, int dtype, int num_blocks, int block_size,
                                      int heads_kv, int head_dim);
GK_DECL gk_rope gk_rope_default(int rotary_dim, float theta);
GK_DECL cudaError_t gk_rope_append_bf16(gk_bf16 *q_out, const gk_bf16 *q, const gk_bf16 *k, const gk_bf16 *v,
                                        const gk_rope_append_params *params, const gk_rope *rope,
                                        const gk_paged_kv *cache, cudaStream_t stream);
GK_DECL cudaError_t gk_rope_append_f16(gk_f16 *q_out, const gk_f16 *q, const gk_f16 *k, const gk_f16 *v,
                                       const gk_rope_append_params *params, const gk_rope *rope,
                                       const gk_paged_kv *cache, cudaStream_t stream);
GK_DECL gk_ledger gk_rope_append_ledger(const gk_rope_append_params *params, int dtype, int cache_dtype);
GK_DECL gk_paged_decode_params gk_paged_decode_params_dense(int batch, int heads_q, int heads_kv, int head_dim, int queries,
                                                            const int *block_table, int max_blocks_per_seq,
                                                            const int *seq_lens, int max_seq_len);
GK_DECL cudaError_t gk_paged_decode_bf16(gk_bf16 *out, float *lse, const gk_bf16 *q, const gk_paged_kv *cache,
                                         const gk_paged_decode_params *params, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream);
GK_DECL cudaError_t gk_paged_decode_f16(gk_f16 *out, float *lse, const gk_f16 *q, const gk_paged_kv *cache,
                                        const gk_paged_decode_params *params, void *workspace, size_t workspace_bytes,
                                        cudaStream_t stream);
GK_DECL cudaError_t gk_paged_decode_ex(int config, int splits, int dtype, void *out, float *lse, const void *q,
                                       const gk_paged_kv *cache, const gk_paged_decode_params *params, void *workspace,
                                       size_t workspace_bytes, cudaStream_t stream);
GK_DECL gk_paged_decode_plan gk_paged_decode_plan_for(const gk_paged_decode_params *params, const gk_paged_kv *cache);
GK_DECL int gk_paged_decode_config_count(void);
GK_DECL gk_paged_decode_config gk_paged_decode_config_info(int config); /* name NULL for an unknown index */
GK_DECL gk_ledger gk_paged_decode_ledger(const gk_paged_decode_params *params, int dtype, int cache_dtype,
                                         const int *host_seq_lens);
GK_EXTERN_C_END

/* The rotary frequency of pair j (of rotary_dim / 2), Llama-3.1 scaling included. Host and device
   (the tests' reference uses it too). */
GK_HD double gk_rope_freq(const gk_rope *r, int j)
{
    double f = 1.0 / pow((double)r->theta, 2.0 * j / r->rotary_dim);
    if (r->factor > 0.0f) {
        const double pi2 = 6.283185307179586, old = r->original_max_position;
        const double low_wavelen = old / r->low_freq_factor, high_wavelen = old / r->high_freq_factor;
        const double wavelen = pi2 / f;
        if (wavelen > low_wavelen) f = f / r->factor;
        else if (wavelen >= high_wavelen) {
            const double smooth = (old / wavelen - r->low_freq_factor) / (r->high_freq_factor - r->low_freq_factor);
            f = (1.0 - smooth) * f / r->factor + smooth * f;
        }
    }
    return f;
}

#ifdef __CUDACC__ /* device code only: nothing here for C */

/* What the kernel reads. */
typedef struct gk_rope_args {
    void *q_out;
    const void *q, *k, *v;
    gk_rope_append_params p;
    gk_rope r;
    gk_paged_kv c;
    int dt;
    int64_t slots;                /* num_blocks block_size */
    double freq[128];             /* gk_rope_freq of each pair, from the host */
} gk_rope_args;

/* 8 values of a chunk (fp32) stored as dt: bf16, f16, or e4m3 / scale. */

GK_DEV void gk_rope_store8(void *p, int dt, const float *x, float scale)
{
    if (dt != GK_E4M3) {
        gk_st16(p, gk_pack_f32(x, dt, 8));
        return;
    }
    float y[8];
#pragma unroll
    for (int e = 0; e < 8; e++) y[e] = x[e] / scale;
    gk_st8(p, gk_pack_e4m3(y, 8));
}

/* Unit u of token t (see the kernel): its kind (0 a q head, 1 a k head, 2 a v head), head, the
   chunk it reads and writes first and, for a NeoX rotary unit, its partner chunk (else -1); the
   source row is returned. */
GK_DEV const char *gk_rope_unit(const gk_rope_args *a, int64_t t, int u, int hu, int ru, int chunks, int *kind,
                                int *head, int *c0, int *c1)
{
    const int qk = (a->p.heads_q + a->p.heads_kv) * hu, rot = a->r.rotary_dim;
    *c1 = -1;
    if (u >= qk) {
        const int v = u - qk;
        *kind = 2;
        *head = v / chunks;
        *c0 = v % chunks;
        return (const char *)a->v + 2 * (t * a->p.v_token_stride + *head * a->p.v_head_stride);
    }
    const int item = u / hu, c = u % hu;
    *c0 = c < ru ? c : c - ru + rot / 8; /* past ru: a pass-through chunk */
    if (c < ru && a->r.style == GK_ROPE_NEOX) *c1 = c + rot / 16;
    if (item < a->p.heads_q) {
        *kind = 0;
        *head = item;
        return (const char *)a->q + 2 * (t * a->p.q_token_stride + item * a->p.q_head_stride);
    }
    *kind = 1;
    *head = item - a->p.heads_q;
    return (const char *)a->k + 2 * (t * a->p.k_token_stride + *head * a->p.k_head_stride);
}

/* A block a token (grid-stride). Every thread takes units of the token's work: per q head and per
   kv head's k, the rotary units (a NeoX unit is a chunk of 8 of the first half and its partner
   in the second; a GPT-J unit a chunk of 4 pairs) and the pass-through chunks past rotary_dim,
   and per kv head the v chunks. A thread's first unit loads as soon as the token is known,
   beside its position and slot (their addresses depend on the token alone), so that their
   latency passes under the angles and the barrier; the token's cos and sin (rotary_dim / 2
   pairs) go to shared memory once: from the table, or formed in double (pos freq reduced to
   [-pi, pi]) and finished in fp32 (__sincosf: 2^-21 absolute there, no stack). */
/* 4 blocks an SM (64 registers) where that compiles with no stack (sm_90); sm_80's code needs a
   stack frame at 64, so 3 there */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GK_ROPE_MINB 3
#else
#define GK_ROPE_MINB 4
#endif
static __global__ void __launch_bounds__(256, GK_ROPE_MINB) gk_rope_append_kernel(const __grid_constant__ gk_rope_args a)
{
    __shared__ float cs[2][128];
    const int D = a.p.head_dim, rot = a.r.rotary_dim, chunks = D / 8, neox = a.r.style == GK_ROPE_NEOX;
    const int ru = neox ? rot / 16 : rot / 8, pu = (D - rot) / 8, hu = ru + pu; /* units a rotated head */
    const int units = (a.p.heads_q + a.p.heads_kv) * hu + a.p.heads_kv * chunks;
    const int es = gk_dtype_size(a.c.dtype);
    for (int t = blockIdx.x; t < a.p.tokens; t += gridDim.x) {
        const int64_t pos = a.p.positions_int64 ? ((const int64_t *)a.p.positions)[t] : ((const int *)a.p.positions)[t];
        const int64_t slot = a.p.slot_mapping[t];
        uint4 pre0 = make_uint4(0, 0, 0, 0), pre1 = make_uint4(0, 0, 0, 0);
        if ((int)threadIdx.x < units) {
            int kind, head, c0, c1;
            const char *src = gk_rope_unit(&a, t, threadIdx.x, hu, ru, chunks, &kind, &head, &c0, &c1);
            pre0 = gk_ld16(src + c0 * 16);
            if (c1 >= 0) pre1 = gk_ld16(src + c1 * 16);
        }
        if ((a.r.cos_sin && (pos < 0 || pos >= a.r.max_position)) || slot < -1 || slot >= a.slots) {
            if (threadIdx.x == 0 && a.p.error_flag) *a.p.error_flag = 1; /* the token is left alone */
            continue;
        }
        __syncthreads(); /* the last token's readers of cs are done */
        for (int j = threadIdx.x; j < rot / 2; j += blockDim.x) {
            float c, s;
            if (a.r.cos_sin) {
                c = a.r.cos_sin[pos * rot + j];
                s = a.r.cos_sin[pos * rot + rot / 2 + j];
            } else {
                const double pi2 = 6.283185307179586, inv_pi2 = 0.15915494309189535;
                double ang = (double)pos * a.freq[j];
                ang -= rint(ang * inv_pi2) * pi2;
                __sincosf((float)ang, &s, &c);
            }
            cs[0][j] = c;
            cs[1][j] = s;
        }
        __syncthreads();
        const int64_t blk = slot >= 0 ? slot / a.c.block_size : 0, in_blk = slot >= 0 ? slot % a.c.block_size : 0;
        int i = 0;
        for (int u = threadIdx.x; u < units; u += blockDim.x, i++) {
            int kind, head, c0, c1;
            const char *src = gk_rope_unit(&a, t, u, hu, ru, chunks, &kind, &head, &c0, &c1);
            uint4 r0 = pre0, r1 = pre1;
            if (i >= 1) {
                r0 = gk_ld16(src + c0 * 16);
                if (c1 >= 0) r1 = gk_ld16(src + c1 * 16);
            }
            if (kind > 0 && slot < 0) continue; /* padding: no cache write */
            char *dst;
            int dst_dt = a.c.dtype;
            float scale = kind == 2 ? a.c.v_scale : a.c.k_scale;
            if (kind == 0) {
                dst = (char *)a.q_out + 2 * (t * a.p.q_out_token_stride + head * a.p.q_out_head_stride);
                dst_dt = a.dt;
                scale = 1.0f;
            } else if (kind == 1) {
                dst = (char *)a.c.k_cache + es * (blk * a.c.k_block_stride + in_blk * a.c.k_slot_stride + head * a.c.k_head_stride);
            } else {
                dst = (char *)a.c.v_cache + es * (blk * a.c.v_block_stride + in_blk * a.c.v_slot_stride + head * a.c.v_head_stride);
            }
            const int ob = gk_dtype_size(dst_dt); /* bytes a value at dst */
            float x[8], y[8];
            gk_unpack_f32(r0, a.dt, 8, x);
            if (kind == 2 || c0 * 8 >= rot) { /* v, or past the rotary dims */
                gk_rope_store8(dst + c0 * 8 * ob, dst_dt, x, scale);
            } else if (!neox) { /* pairs (2j, 2j + 1) within the chunk */
#pragma unroll
                for (int e = 0; e < 8; e += 2) {
                    const float co = cs[0][c0 * 4 + e / 2], si = cs[1][c0 * 4 + e / 2];
                    y[e] = x[e] * co - x[e + 1] * si;
                    y[e + 1] = x[e + 1] * co + x[e] * si;
                }
                gk_rope_store8(dst + c0 * 8 * ob, dst_dt, y, scale);
            } else { /* NeoX: chunk c0 of the first half and its partner c1 = c0 + rot / 16 */
                float x2[8], y2[8];
                gk_unpack_f32(r1, a.dt, 8, x2);
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float co = cs[0][c0 * 8 + e], si = cs[1][c0 * 8 + e];
                    y[e] = x[e] * co - x2[e] * si;
                    y2[e] = x2[e] * co + x[e] * si;
                }
                gk_rope_store8(dst + c0 * 8 * ob, dst_dt, y, scale);
                gk_rope_store8(dst + c1 * 8 * ob, dst_dt, y2, scale);
            }
        }
    }
}

/* ---------------------------------------------------------------- decode attention */

/* What the decode kernels read. a carries what the softmax and the combine of gk_attention.cuh
   read: out and its strides, lse, batch = B, sq = nq, hq, group, d, sl2 / softcap / cap_inv,
   splits, part_o / part_lse, d_kernel, dt. */
typedef struct gk_pd_args {
    gk_attn_args a;
    gk_paged_kv c;
    const int *block_table, *seq_lens;
    int64_t bt_stride;
    const float *alibi;           /* slopes, or NULL */
    int *error_flag;
    int max_len, rchunks;         /* rchunks: blocks of 16 rows a kv head */
    int split_keys;               /* keys a split (a multiple of the tile) */
    int lbs;                      /* log2 block_size */
    int window_left;
    int kv_same;                  /* k and v caches share their strides */
    float v_scale;
} gk_pd_args;

/* Four e4m3 codes (low byte first) as two fp16 pairs, codes 0-1 in *lo and 2-3 in *hi:
   cvt.rn.f16x2.e4m3x2 on sm_89 and later, fed each half of the word as it is (no shift or mask
   to take the upper pair); before sm_89 the conversion library's software path. */
GK_DEV void gk_e4m3x4_to_f16x2(unsigned w, unsigned *lo, unsigned *hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm("{\n .reg .b16 a, b;\n mov.b32 {a, b}, %2;\n cvt.rn.f16x2.e4m3x2 %0, a;\n cvt.rn.f16x2.e4m3x2 %1, b;\n}"
        : "=r"(*lo), "=r"(*hi)
        : "r"(w));
#else
    const __half2_raw a = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w & 0xffffu), __NV_E4M3);
    const __half2_raw b = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w >> 16), __NV_E4M3);
    *lo = (unsigned)a.x | ((unsigned)a.y << 16);
    *hi = (unsigned)b.x | ((unsigned)b.y << 16);
#endif
}

/* The cache block of key j of the sequence (block table row bt), or INT_MIN past the split's
   end. Loaded a tile ahead and checked only where it is used (gk_pd_issue), so that nothing
   waits for the load in between. */
GK_DEV int gk_pd_page(const int *bt, int j, int hi, int lbs) { return j < hi ? __ldg(bt + (j >> lbs)) : INT_MIN; }

/* A warp's KW keys (16 or 32) of one tile (rows row0 .. row0 + KW - 1 of the K and V tiles), k
   and v of kv head hk. Lane l < KW turns the block id of key k0 + l (pg, loaded a tile ahead; INT_MIN past the
   split) into the byte offset of that key's rows, -1 for none (a block id outside the cache
   sets the flag and reads as zeros); each access then takes whole key rows of cpr 16-byte
   chunks (32 / cpr keys), so the L2 sees full 128-byte lines, the lanes of a key getting its
   offset by shuffle. kb, vb: the lane's chunk (lane % cpr) of kv head hk in block 0. */
GK_DEV void gk_pd_issue(const gk_pd_args *p, char *skt, char *svt, int row0, int pg, int k0, int KW, int cpr,
                        int es, const char *kb, const char *vb, int lane)
{
    const int kpi = 32 / cpr, c = lane % cpr, kl = lane / cpr, valid = c < (p->a.d * es + 15) / 16;
    if (pg != INT_MIN && (unsigned)pg >= (unsigned)p->c.num_blocks) {
        if (p->error_flag) *p->error_flag = 1;
        pg = INT_MIN;
    }
    const int64_t slot = (k0 + lane % KW) & ((1 << p->lbs) - 1);
    const int64_t ko = pg == INT_MIN ? -1 : ((int64_t)pg * p->c.k_block_stride + slot * p->c.k_slot_stride) * es;
    const int64_t vo = pg == INT_MIN ? -1 : ((int64_t)pg * p->c.v_block_stride + slot * p->c.v_slot_stride) * es;
#pragma unroll
    for (int i = 0; i < KW / kpi; i++) {
        const int key = kl + kpi * i;
        const int64_t k = __shfl_sync(0xffffffffu, ko, key), v = p->kv_same ? k : __shfl_sync(0xffffffffu, vo, key);
        const int ok = k >= 0 && valid;
        gk_cp_async_16(gk_attn_at(skt, row0 + key, c, cpr), ok ? kb + k : kb, ok ? 16 : 0);
        gk_cp_async_16(gk_attn_at(svt, row0 + key, c, cpr), ok ? vb + v : vb, ok ? 16 : 0);
    }
}

/* One (kv head, 16 rows, sequence, key split) a block; see "How it runs" above. Row r of the
   block's 16 is query i = (r0 + r) / group, head hk group + (r0 + r) % group. K and V tiles of
   BN = KW NW keys in a ring of STAGES buffers; warp w takes keys [KW w, KW w + KW) of each. Per
   thread: qf (the Q fragments, DK / 4 registers), o (DK / 2 accumulators). An fp8 cache (F8)
   multiplies in fp16: its K fragments take the four e4m3 codes a lane's ldmatrix brings (key g,
   dims 4 t4 .. 4 t4 + 3 of a 16-dim chunk) as the k positions 2 t4, 2 t4 + 1, 2 t4 + 8,
   2 t4 + 9 of a k16 step, and Q's fragments are gathered in the same order; V's ldmatrix .trans
   brings two keys of dims 2 g and 2 g + 1, which feed two n8 tiles (even and odd dims). */
GK_DEV void gk_pd_run(const gk_pd_args *p, int dt, int F8, int DK, int NW, int KW, int STAGES, unsigned *qf, float *o)
{
    extern __shared__ uint4 gk_pd_smem[];
    const int BN = KW * NW, threads = 32 * NW, es = F8 ? 1 : 2, mdt = F8 ? GK_F16 : dt;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const int qchunks = DK / 8, kchunks = DK * es / 16, tile_bytes = BN * DK * es;
    char *sq = (char *)gk_pd_smem, *ring = sq + 16 * DK * 2;
    const int split = blockIdx.y, hk = blockIdx.x / p->rchunks, r0 = (blockIdx.x % p->rchunks) * 16, b = blockIdx.z;
    const int nq = p->a.sq, group = p->a.group, R = nq * group;
    /* without a window the split's first keys are known before its length: their block ids
       load beside the length (entries below max_len are in the table), one round trip less */
    const int *bt = p->block_table + b * p->bt_stride;
    const int lo0 = split * p->split_keys, wk0 = lo0 + KW * warp + lane % KW;
    const int pg0 = p->window_left < 0 && wk0 < p->max_len ? __ldg(bt + (wk0 >> p->lbs)) : INT_MIN;
    int L = p->seq_lens[b];
    if (L < 0 || L > p->max_len) {
        if (p->error_flag && threadIdx.x == 0) *p->error_flag = 1;
        L = L < 0 ? 0 : p->max_len;
    }
    /* the split's keys, cut to what the rows see: up to L - 1, from the first query's window */
    int lo = lo0, hi = min(L, lo + p->split_keys);
    if (p->window_left >= 0) lo = max(lo, L - nq - p->window_left);
    const int ntiles = hi > lo ? (hi - lo + BN - 1) / BN : 0;

    /* Q: the block's 16 rows (zeros past R and past D) */
    for (int i = threadIdx.x; i < 16 * qchunks; i += threads) {
        const int r = i / qchunks, c = i % qchunks, row = r0 + r, qi = row / group;
        const int ok = row < R && c < p->a.d / 8;
        const char *src = (const char *)p->a.q +
                          2 * (b * p->a.q_bs + (int64_t)qi * p->a.q_rs + (int64_t)(hk * group + row % group) * p->a.q_hs + c * 8);
        gk_cp_async_16(gk_attn_at(sq, r, c, qchunks), ok ? src : (const char *)p->a.q, ok ? 16 : 0);
    }

    /* the ring: each warp loads and reads only its own 16 keys of every tile, so after the first
       tile (whose group carries Q) the warps never wait for each other. Tiles 0 .. STAGES - 2
       now, each later one as the warp's oldest buffer frees; a lane's block id (key lane % 16 of
       the warp's slice) is loaded a tile ahead. */
    const int wk = lo + KW * warp + lane % KW; /* this lane's key in tile 0 */
    const char *kb = (const char *)p->c.k_cache + ((int64_t)hk * p->c.k_head_stride * es + (lane % kchunks) * 16);
    const char *vb = (const char *)p->c.v_cache + ((int64_t)hk * p->c.v_head_stride * es + (lane % kchunks) * 16);
    int pg = p->window_left < 0 ? (wk < hi ? pg0 : INT_MIN) : gk_pd_page(bt, wk, hi, p->lbs);
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ntiles) {
            char *st = ring + s * 2 * tile_bytes;
            gk_pd_issue(p, st, st + tile_bytes, KW * warp, pg, wk - lane % KW + s * BN, KW, kchunks, es, kb, vb, lane);
            pg = gk_pd_page(bt, wk + (s + 1) * BN, hi, p->lbs);
        }
        gk_cp_async_commit();
    }

    /* ldmatrix lanes: K (rows = keys) row lk, chunk lane / 8 % 2; Q and V (.trans) row lq,
       chunk lane / 16 */
    const int lq = (lane & 7) + ((lane >> 3) & 1) * 8, lk = (lane >> 4) * 8 + (lane & 7);
    int offk[4], offv[4], offq[4];
    gk_attn_lane_offsets(lk, (lane >> 3) & 1, kchunks, offk);
    gk_attn_lane_offsets(lq, lane >> 4, kchunks, offv);
    gk_attn_lane_offsets(lq, lane >> 4, qchunks, offq);

    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < DK / 2; i++) o[i] = 0.0f;

    /* rows of this thread (g, g + 8): query position and ALiBi slope */
    int pos[2], wlo[2];
    float slope[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int row = r0 + g + 8 * r, qi = row / group;
        pos[r] = row < R ? L - nq + qi : -1;
        wlo[r] = p->window_left >= 0 ? pos[r] - p->window_left : INT_MIN;
        slope[r] = p->alibi && row < R ? p->alibi[hk * group + row % group] * (float)GK_LOG2E : 0.0f;
    }
    const int min_pos = L - nq, max_wlo = p->window_left >= 0 ? L - 1 - p->window_left : INT_MIN;

    for (int it = 0; it < ntiles; it++) {
        if (STAGES == 2) gk_cp_async_wait_0();
        else if (STAGES == 3) gk_cp_async_wait_1();
        else gk_cp_async_wait_2();
        if (it == 0) __syncthreads(); /* Q (every warp's copies) is in */
        else __syncwarp();            /* the warp's slice of tile it is in; its reads of tile it - 1 are done */
        if (it == 0) {
            if (!F8) {
#pragma unroll
                for (int kk = 0; kk < DK / 16; kk++) gk_ldmatrix_x4(qf + kk * 4, gk_attn_lane_at(sq, offq, 0, kk, qchunks));
            } else {
                /* dims 16 kk + 4 t4 .. + 3 of rows g and g + 8, as fp16 pairs */
#pragma unroll
                for (int kk = 0; kk < DK / 16; kk++)
#pragma unroll
                    for (int r = 0; r < 2; r++) {
                        const int c = 2 * kk + (t4 >> 1);
                        const uint2 w = *(const uint2 *)(gk_attn_at(sq, g + 8 * r, c, qchunks) + (t4 & 1) * 8);
                        float x[4];
                        gk_unpack2_f32(w.x, dt, x);
                        gk_unpack2_f32(w.y, dt, x + 2);
                        qf[kk * 4 + r] = gk_pack2_f32(x, GK_F16);
                        qf[kk * 4 + 2 + r] = gk_pack2_f32(x + 2, GK_F16);
                    }
            }
        }
        {
            const int nx = it + STAGES - 1;
            if (nx < ntiles) {
                char *st = ring + (nx % STAGES) * 2 * tile_bytes;
                gk_pd_issue(p, st, st + tile_bytes, KW * warp, pg, wk - lane % KW + nx * BN, KW, kchunks, es, kb, vb, lane);
                pg = gk_pd_page(bt, wk + (nx + 1) * BN, hi, p->lbs);
            }
            gk_cp_async_commit();
        }
        const int k0 = lo + it * BN + KW * warp; /* this warp's first key */
        if (k0 >= hi) continue;
        const char *skt = ring + (it % STAGES) * 2 * tile_bytes, *svt = skt + tile_bytes;

        /* S = Q K^T over the warp's KW keys, 16 at a time (s + 8 g for keys 16 g ..) */
        float s[16];
#pragma unroll
        for (int i = 0; i < KW / 2; i++) s[i] = 0.0f;
#pragma unroll
        for (int kg = 0; kg < KW / 16; kg++) {
            const int rw = KW * warp + 16 * kg;
            if (!F8) {
#pragma unroll
                for (int kk = 0; kk < DK / 16; kk++) {
                    unsigned kb[4];
                    gk_ldmatrix_x4(kb, gk_attn_lane_at((char *)skt, offk, rw, kk, kchunks));
                    gk_attn_mma(s + 8 * kg, qf + kk * 4, kb, dt);
                    gk_attn_mma(s + 8 * kg + 4, qf + kk * 4, kb + 2, dt);
                }
            } else {
#pragma unroll
                for (int u = 0; u < DK / 32; u++) {
                    unsigned kb[4];
                    gk_ldmatrix_x4(kb, gk_attn_lane_at((char *)skt, offk, rw, u, kchunks));
#pragma unroll
                    for (int m = 0; m < 4; m++) { /* keys 8 (m / 2) .., k16 step 2 u + m % 2 */
                        unsigned bb[2];
                        gk_e4m3x4_to_f16x2(kb[m], bb, bb + 1);
                        gk_attn_mma(s + 8 * kg + 4 * (m >> 1), qf + (2 * u + (m & 1)) * 4, bb, GK_F16);
                    }
                }
            }
        }

        /* logits (log2 units), the rows' masks and ALiBi, the online softmax */
        gk_attn_logits(&p->a, s, KW / 2, 0, 0, 0, 0, 0);
        const int kc = k0 + 2 * t4;
        if (k0 + KW - 1 >= hi || k0 + KW - 1 > min_pos || k0 < max_wlo || p->alibi) {
#pragma unroll
            for (int i = 0; i < KW / 2; i++) {
                const int j = kc + (i >> 2) * 8 + (i & 1), r = (i >> 1) & 1;
                const float x = s[i] + slope[r] * (float)(j - pos[r]);
                s[i] = j < hi && j <= pos[r] && j >= wlo[r] ? x : -INFINITY;
            }
        }
        float alpha[2];
        if (gk_attn_softmax(s, KW / 2, row_max, row_sum, alpha)) gk_attn_rescale(o, DK / 2, alpha);

        /* O += P V, a k16 step a 16 keys */
#pragma unroll
        for (int kg = 0; kg < KW / 16; kg++) {
        const int rw = KW * warp + 16 * kg;
        unsigned pa[4];
        gk_attn_pack_p(s + 8 * kg, mdt, pa);
        if (!F8) {
#pragma unroll
            for (int jj = 0; jj < DK / 16; jj++) {
                unsigned vb[4];
                gk_ldmatrix_x4_trans(vb, gk_attn_lane_at((char *)svt, offv, rw, jj, kchunks));
                gk_attn_mma(o + 8 * jj, pa, vb, dt);
                gk_attn_mma(o + 8 * jj + 4, pa, vb + 2, dt);
            }
        } else {
#pragma unroll
            for (int u = 0; u < DK / 32; u++) {
                unsigned vb[4];
                gk_ldmatrix_x4_trans(vb, gk_attn_lane_at((char *)svt, offv, rw, u, kchunks));
#pragma unroll
                for (int cc = 0; cc < 2; cc++) { /* chunk 2 u + cc: keys 0-7 in vb[2 cc], 8-15 in vb[2 cc + 1] */
                    /* even dims (2 g) to the low pair, odd (2 g + 1) to the high one */
                    unsigned be[2], bo[2];
                    gk_e4m3x4_to_f16x2(__byte_perm(vb[2 * cc], 0, 0x3120), be, bo);
                    gk_e4m3x4_to_f16x2(__byte_perm(vb[2 * cc + 1], 0, 0x3120), be + 1, bo + 1);
                    const int c = 2 * u + cc;
                    gk_attn_mma(o + (2 * c) * 4, pa, be, GK_F16);
                    gk_attn_mma(o + (2 * c + 1) * 4, pa, bo, GK_F16);
                }
            }
        }
        }
    }

    /* the warps' partials through shared memory (the ring is free): per warp and row its max and
       sum (log2 units), and O unnormalized, rows DK + 4 floats apart */
    gk_cp_async_wait_0();
    gk_grid_launch_dependents(); /* the combine (launched dependent) may start its blocks */
    __syncthreads();
    const int ld = DK + 4;
    float *so = (float *)ring, *sm = so + NW * 16 * ld, *sl = sm + NW * 16;
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float l = row_sum[r];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        if (t4 == 0) {
            sm[warp * 16 + g + 8 * r] = row_max[r];
            sl[warp * 16 + g + 8 * r] = l;
        }
        float *orow = so + (warp * 16 + g + 8 * r) * ld;
        if (!F8) {
#pragma unroll
            for (int jt = 0; jt < DK / 8; jt++)
                *(float2 *)(orow + 8 * jt + 2 * t4) = make_float2(o[4 * jt + 2 * r], o[4 * jt + 2 * r + 1]);
        } else {
            /* tile 2 c + e holds dims 16 c + 4 t4 + e + {0, 2} */
#pragma unroll
            for (int c = 0; c < DK / 16; c++)
                *(float4 *)(orow + 16 * c + 4 * t4) = make_float4(o[8 * c + 2 * r], o[8 * c + 4 + 2 * r],
                                                                  o[8 * c + 2 * r + 1], o[8 * c + 4 + 2 * r + 1]);
        }
    }
    __syncthreads();

    /* merged in warp order: 8 columns a thread at a time */
    const int vc = (p->a.d + 7) / 8;
    const int64_t rows_all = (int64_t)p->a.batch * nq * p->a.hq;
    for (int task = threadIdx.x; task < 16 * vc; task += threads) {
        const int r = task / vc, c8 = task % vc, row = r0 + r;
        if (row >= R) continue;
        const int qi = row / group, h = hk * group + row % group;
        float m = -INFINITY;
#pragma unroll
        for (int w = 0; w < NW; w++) m = fmaxf(m, sm[w * 16 + r]);
        float l = 0.0f, acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
        for (int w = 0; w < NW; w++) {
            const float mw = sm[w * 16 + r];
            const float wgt = mw == -INFINITY ? 0.0f : gk_ex2_approx(mw - m);
            l += wgt * sl[w * 16 + r];
            const float4 x0 = *(const float4 *)(so + (w * 16 + r) * ld + c8 * 8);
            const float4 x1 = *(const float4 *)(so + (w * 16 + r) * ld + c8 * 8 + 4);
            acc[0] += wgt * x0.x; acc[1] += wgt * x0.y; acc[2] += wgt * x0.z; acc[3] += wgt * x0.w;
            acc[4] += wgt * x1.x; acc[5] += wgt * x1.y; acc[6] += wgt * x1.z; acc[7] += wgt * x1.w;
        }
        const float inv = l > 0.0f ? p->v_scale / l : 0.0f;
#pragma unroll
        for (int e = 0; e < 8; e++) acc[e] *= inv;
        /* l NaN (a NaN logit): lse NaN too, not -inf */
        const float lse = l > 0.0f || l != l ? (m + log2f(l)) * 0.6931471805599453f : -INFINITY;
        if (p->a.splits > 1) {
            const int64_t pr = (int64_t)split * rows_all + ((int64_t)b * nq + qi) * p->a.hq + h;
            float *po = p->a.part_o + pr * p->a.d_kernel + c8 * 8;
            *(float4 *)po = make_float4(acc[0], acc[1], acc[2], acc[3]);
            *(float4 *)(po + 4) = make_float4(acc[4], acc[5], acc[6], acc[7]);
            if (c8 == 0) p->a.part_lse[pr] = lse;
        } else {
            gk_st16((char *)p->a.out + 2 * (b * p->a.o_bs + (int64_t)qi * p->a.o_rs + (int64_t)h * p->a.o_hs + c8 * 8),
                    gk_pack_f32(acc, dt, 8));
            if (c8 == 0 && p->a.lse) p->a.lse[((int64_t)b * p->a.hq + h) * nq + qi] = lse;
        }
    }
}

typedef void (*gk_pd_kernel)(gk_pd_args);

/* shared memory: the Q tile (16-bit), STAGES K and V tiles; the warps' merge reuses the ring */
#define gk_pd_smem_c(D, F8, NW, KW, STAGES) (16 * (D) * 2 + (STAGES) * 2 * (KW) * (NW) * (D) * ((F8) ? 1 : 2))

#define GK_DEFINE_PAGED_DECODE(name, dt, F8, D, NW, KW, STAGES, MINB)                                             \
    static_assert((D) % 32 == 0 && (D) <= 256, #name ": D is a multiple of 32, at most 256");                   \
    static_assert((NW) == 2 || (NW) == 4 || (NW) == 8, #name ": 2, 4 or 8 warps");                             \
    static_assert((KW) == 16 || (KW) == 32, #name ": 16 or 32 keys a warp");                                    \
    static_assert((STAGES) >= 2 && (STAGES) <= 4, #name ": 2 to 4 stages");                                      \
    static_assert((STAGES) * 2 * (KW) * (NW) * (D) * ((F8) ? 1 : 2) >= (NW) * 16 * ((D) + 4) * 4 + (NW) * 128,  \
                  #name ": the ring holds the warps' merge");                                                    \
    static_assert(gk_pd_smem_c(D, F8, NW, KW, STAGES) <= 227 * 1024, #name ": over 227 KB of shared memory");   \
    static __global__ void __launch_bounds__((NW) * 32, MINB) name(const __grid_constant__ gk_pd_args p)      \
    {                                                                                                            \
        unsigned qf[(D) / 4];                                                                                    \
        float o[(D) / 2];                                                                                        \
        gk_pd_run(&p, dt, F8, D, NW, KW, STAGES, qf, o);                                                         \
    }                                                                                                            \
    static const gk_paged_decode_config name##_config = {#name, D, F8, (KW) * (NW), STAGES, (NW) * 32,            \
                                                         gk_pd_smem_c(D, F8, NW, KW, STAGES)};

#endif /* __CUDACC__ */

#endif /* GK_PAGED_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_PAGED_IMPLEMENTATION)) && !defined(GK_PAGED_IMPLEMENTED)
#define GK_PAGED_IMPLEMENTED

#ifdef __CUDACC__

/* The shipped decode configurations, as X(tile, D, F8, NW, KW, STAGES, MINB): 4 warps of KW keys
   (a tile of 4 KW keys), the ring as deep as two or three blocks an SM leave room for. fp8 caches
   take 32 keys a warp: half the softmax and copy-issue work a byte, their conversions making
   them instruction-bound where 16-bit caches are memory-bound. */
#ifndef GK_PAGED_DECODE_CONFIGS
#define GK_PAGED_DECODE_CONFIGS(X)   \
    X(d64, 64, 0, 4, 16, 4, 3)       \
    X(d128, 128, 0, 4, 16, 3, 2)     \
    X(d256, 256, 0, 4, 16, 2, 1)     \
    X(d64_fp8, 64, 1, 4, 32, 4, 3)   \
    X(d128_fp8, 128, 1, 4, 32, 3, 2) \
    X(d256_fp8, 256, 1, 4, 16, 3, 2)
#endif
#ifndef GK_PAGED_MAX_SPLITS
#define GK_PAGED_MAX_SPLITS 256
#endif
static_assert(GK_PAGED_MAX_SPLITS <= GK_ATTN_COMBINE_MAX, "the combine merges at most GK_ATTN_COMBINE_MAX splits");
#define GK_PD_X_DEFINE(tile, D, F8, NW, KW, STAGES, MINB)                                     \
    GK_DEFINE_PAGED_DECODE(gk_paged_decode_bf16_##tile, GK_BF16, F8, D, NW, KW, STAGES, MINB) \
    GK_DEFINE_PAGED_DECODE(gk_paged_decode_f16_##tile, GK_F16, F8, D, NW, KW, STAGES, MINB)
#define GK_PD_X_BF16(tile, D, F8, NW, KW, STAGES, MINB) gk_paged_decode_bf16_##tile,
#define GK_PD_X_F16(tile, D, F8, NW, KW, STAGES, MINB) gk_paged_decode_f16_##tile,
#define GK_PD_X_CONFIG(tile, D, F8, NW, KW, STAGES, MINB) &gk_paged_decode_bf16_##tile##_config,
#define GK_PD_X_MINB(tile, D, F8, NW, KW, STAGES, MINB) MINB,
GK_PAGED_DECODE_CONFIGS(GK_PD_X_DEFINE)

static const gk_pd_kernel gk_pd_kernels[2][32] = {{GK_PAGED_DECODE_CONFIGS(GK_PD_X_BF16)},
                                                  {GK_PAGED_DECODE_CONFIGS(GK_PD_X_F16)}};
static const gk_paged_decode_config *const gk_pd_configs[] = {GK_PAGED_DECODE_CONFIGS(GK_PD_X_CONFIG)};
static const int gk_pd_minb[] = {GK_PAGED_DECODE_CONFIGS(GK_PD_X_MINB)};
#define GK_PD_N ((int)(sizeof gk_pd_configs / sizeof gk_pd_configs[0]))

GK_EXTERN_C_BEGIN

GK_IMPL gk_paged_kv gk_paged_kv_dense(void *k_cache, void *v_cache, int dtype, int num_blocks, int block_size,
                                      int heads_kv, int head_dim)
{
    gk_paged_kv c;
    memset(&c, 0, sizeof c);
    c.k_cache = k_cache;
    c.v_cache = v_cache;
    c.dtype = dtype;
    c.num_blocks = num_blocks;
    c.block_size = block_size;
    c.heads_kv = heads_kv;
    c.head_dim = head_dim;
    c.k_head_stride = c.v_head_stride = head_dim;
    c.k_slot_stride = c.v_slot_stride = (int64_t)heads_kv * head_dim;
    c.k_block_stride = c.v_block_stride = (int64_t)block_size * heads_kv * head_dim;
    c.k_scale = c.v_scale = 1.0f;
    return c;
}

GK_IMPL gk_rope gk_rope_default(int rotary_dim, float theta)
{
    gk_rope r;
    memset(&r, 0, sizeof r);
    r.style = GK_ROPE_NEOX;
    r.rotary_dim = rotary_dim;
    r.theta = theta;
    return r;
}

GK_IMPL gk_ledger gk_rope_append_ledger(const gk_rope_append_params *p, int dtype, int cache_dtype)
{
    gk_ledger l;
    memset(&l, 0, sizeof l);
    if (!p) return l;
    const double t = p->tokens, d = p->head_dim, es = gk_dtype_size(dtype), cs = gk_dtype_size(cache_dtype);
    l.bytes = t * d * (2.0 * p->heads_q * es + 2.0 * p->heads_kv * es + 2.0 * p->heads_kv * cs) +
              t * (p->positions_int64 ? 8.0 : 4.0) + t * 8.0;
    return l;
}

GK_EXTERN_C_END

/* Whether two tensors of n outer rows (tokens or cache blocks; `stride` bytes apart, `inner`
   bytes of each used from its start) share a byte. Ranges apart do not; with one outer stride,
   slices of one packed row (q, k, v of a QKV projection; k and v halves of a FlashInfer block)
   do not either, when each slice fits within the stride and their offsets leave them apart. */
static int gk_rope_overlap(const void *a, int64_t a_stride, int64_t a_inner, const void *b, int64_t b_stride,
                           int64_t b_inner, int64_t n)
{
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    const int64_t na = (n - 1) * a_stride + a_inner, nb = (n - 1) * b_stride + b_inner;
    if (a0 + (uintptr_t)na <= b0 || b0 + (uintptr_t)nb <= a0) return 0;
    if (n <= 1 || a_stride != b_stride || a_inner > a_stride || b_inner > a_stride) return 1;
    int64_t d = (int64_t)(b0 - a0) % a_stride;
    if (d < 0) d += a_stride;
    return !(d >= a_inner && d + b_inner <= a_stride);
}

static cudaError_t gk_rope_append_run(const char *fn, int dt, void *q_out, const void *q, const void *k, const void *v,
                                      const gk_rope_append_params *pp, const gk_rope *rp, const gk_paged_kv *cp,
                                      cudaStream_t stream)
{
    GK_TRY(gk_check_ptr(fn, "params", pp));
    GK_TRY(gk_check_ptr(fn, "rope", rp));
    GK_TRY(gk_check_ptr(fn, "cache", cp));
    gk_rope_args a;
    memset(&a, 0, sizeof a);
    a.p = *pp;
    a.r = *rp;
    a.c = *cp;
    a.dt = dt;
    const gk_rope_append_params *p = &a.p;
    GK_TRY(gk_check_nonneg(fn, "tokens", p->tokens));
    if (p->tokens == 0) return cudaSuccess;
    GK_TRY(gk_check_positive(fn, "heads_q", p->heads_q));
    GK_TRY(gk_check_positive(fn, "heads_kv", p->heads_kv));
    if (p->heads_q % p->heads_kv)
        return gk__fail(cudaErrorInvalidValue, fn, "heads_q (%d) is not a multiple of heads_kv (%d)", p->heads_q, p->heads_kv);
    if (p->head_dim < 8 || p->head_dim > 256 || p->head_dim % 8)
        return gk__fail(cudaErrorInvalidValue, fn, "head_dim %d is not supported: a multiple of 8 from 8 to 256", p->head_dim);
    if (a.c.heads_kv != p->heads_kv || a.c.head_dim != p->head_dim)
        return gk__fail(cudaErrorInvalidValue, fn, "the cache holds %d heads of %d, the tokens %d heads of %d",
                        a.c.heads_kv, a.c.head_dim, p->heads_kv, p->head_dim);
    const int r = a.r.rotary_dim;
    if (a.r.style != GK_ROPE_NEOX && a.r.style != GK_ROPE_GPTJ)
        return gk__fail(cudaErrorInvalidValue, fn, "rope style %d is not GK_ROPE_NEOX or GK_ROPE_GPTJ", a.r.style);
    if (r < 0 || r > p->head_dim || r % (a.r.style == GK_ROPE_NEOX ? 16 : 8))
        return gk__fail(cudaErrorInvalidValue, fn,
                        "rotary_dim %d: it must be <= head_dim (%d) and a multiple of %d for this style", r,
                        p->head_dim, a.r.style == GK_ROPE_NEOX ? 16 : 8);
    if (!(a.r.theta > 0.0f) && !a.r.cos_sin)
        return gk__fail(cudaErrorInvalidValue, fn, "theta %g must be > 0", (double)a.r.theta);
    if (a.r.cos_sin && a.r.max_position <= 0)
        return gk__fail(cudaErrorInvalidValue, fn, "max_position %lld must be > 0 with a cos_sin table",
                        (long long)a.r.max_position);
    if (a.r.factor > 0.0f && !(a.r.high_freq_factor > a.r.low_freq_factor && a.r.low_freq_factor > 0.0f &&
                               a.r.original_max_position > 0))
        return gk__fail(cudaErrorInvalidValue, fn, "Llama-3.1 scaling needs high_freq_factor > low_freq_factor > 0 "
                                                   "and original_max_position > 0");
    if (a.c.dtype != dt && a.c.dtype != GK_E4M3)
        return gk__fail(cudaErrorInvalidValue, fn, "cache dtype %s: it must be the tokens' (%s) or e4m3",
                        gk_dtype_name(a.c.dtype), gk_dtype_name(dt));
    if (a.c.dtype == GK_E4M3 && (!(a.c.k_scale > 0.0f) || !(a.c.v_scale > 0.0f)))
        return gk__fail(cudaErrorInvalidValue, fn, "an fp8 cache needs k_scale and v_scale > 0");
    GK_TRY(gk_check_positive(fn, "num_blocks", a.c.num_blocks));
    if (a.c.block_size < 1 || a.c.block_size > 256 || (a.c.block_size & (a.c.block_size - 1)))
        return gk__fail(cudaErrorInvalidValue, fn, "block_size %d is not a power of two from 1 to 256", a.c.block_size);
    GK_TRY(gk_check_ptr(fn, "q_out", q_out));
    GK_TRY(gk_check_ptr(fn, "q", q));
    GK_TRY(gk_check_ptr(fn, "k", k));
    GK_TRY(gk_check_ptr(fn, "v", v));
    GK_TRY(gk_check_ptr(fn, "positions", p->positions));
    GK_TRY(gk_check_ptr(fn, "slot_mapping", p->slot_mapping));
    GK_TRY(gk_check_ptr(fn, "k_cache", a.c.k_cache));
    GK_TRY(gk_check_ptr(fn, "v_cache", a.c.v_cache));
    GK_TRY(gk_check_elem_aligned(fn, "positions", p->positions, p->positions_int64 ? 8 : 4));
    GK_TRY(gk_check_elem_aligned(fn, "slot_mapping", p->slot_mapping, 8));
    if (p->error_flag) GK_TRY(gk_check_elem_aligned(fn, "error_flag", p->error_flag, 4));
    if (a.r.cos_sin) GK_TRY(gk_check_elem_aligned(fn, "cos_sin", a.r.cos_sin, 4));
    const int ca = a.c.dtype == GK_E4M3 ? 8 : 16; /* a chunk of 8 cache values */
    const char *names[6] = {"q_out", "q", "k", "v", "k_cache", "v_cache"};
    const void *ptrs[6] = {q_out, q, k, v, a.c.k_cache, a.c.v_cache};
    for (int i = 0; i < 6; i++)
        if (!gk_is_aligned(ptrs[i], i < 4 ? 16 : ca))
            return gk__fail(cudaErrorInvalidValue, fn, "'%s' (%p) is not %d-byte aligned", names[i], ptrs[i], i < 4 ? 16 : ca);
    GK_TRY(gk_check_stride(fn, "q_token_stride", p->q_token_stride, 8));
    GK_TRY(gk_check_stride(fn, "q_head_stride", p->q_head_stride, 8));
    GK_TRY(gk_check_stride(fn, "k_token_stride", p->k_token_stride, 8));
    GK_TRY(gk_check_stride(fn, "k_head_stride", p->k_head_stride, 8));
    GK_TRY(gk_check_stride(fn, "v_token_stride", p->v_token_stride, 8));
    GK_TRY(gk_check_stride(fn, "v_head_stride", p->v_head_stride, 8));
    GK_TRY(gk_check_stride(fn, "q_out_token_stride", p->q_out_token_stride, 8));
    GK_TRY(gk_check_stride(fn, "q_out_head_stride", p->q_out_head_stride, 8));
    GK_TRY(gk_check_stride(fn, "k_block_stride", a.c.k_block_stride, 8));
    GK_TRY(gk_check_stride(fn, "k_slot_stride", a.c.k_slot_stride, 8));
    GK_TRY(gk_check_stride(fn, "k_head_stride (cache)", a.c.k_head_stride, 8));
    GK_TRY(gk_check_stride(fn, "v_block_stride", a.c.v_block_stride, 8));
    GK_TRY(gk_check_stride(fn, "v_slot_stride", a.c.v_slot_stride, 8));
    GK_TRY(gk_check_stride(fn, "v_head_stride (cache)", a.c.v_head_stride, 8));
    /* q_out: its rows must not alias; it may be q itself but must not touch k, v or the cache */
    if (p->q_out_head_stride < p->head_dim && p->heads_q > 1)
        return gk__fail(cudaErrorInvalidValue, fn, "q_out_head_stride %lld is under head_dim: heads would alias",
                        (long long)p->q_out_head_stride);
    if (p->tokens > 1 && p->q_out_token_stride < (p->heads_q - 1) * p->q_out_head_stride + p->head_dim)
        return gk__fail(cudaErrorInvalidValue, fn, "q_out_token_stride %lld is under a token's heads: tokens would alias",
                        (long long)p->q_out_token_stride);
    {
        const int es = gk_dtype_size(a.c.dtype), T = p->tokens, D = p->head_dim;
        const int64_t qo = ((int64_t)(p->heads_q - 1) * p->q_out_head_stride + D) * 2;
        const int64_t qi = ((int64_t)(p->heads_q - 1) * p->q_head_stride + D) * 2;
        const int64_t ki = ((int64_t)(p->heads_kv - 1) * p->k_head_stride + D) * 2;
        const int64_t vi = ((int64_t)(p->heads_kv - 1) * p->v_head_stride + D) * 2;
        const int64_t kc = ((int64_t)(a.c.block_size - 1) * a.c.k_slot_stride + (int64_t)(a.c.heads_kv - 1) * a.c.k_head_stride + D) * es;
        const int64_t vc = ((int64_t)(a.c.block_size - 1) * a.c.v_slot_stride + (int64_t)(a.c.heads_kv - 1) * a.c.v_head_stride + D) * es;
        const int64_t tso = p->q_out_token_stride * 2, tsq = p->q_token_stride * 2, tsk = p->k_token_stride * 2;
        const int64_t tsv = p->v_token_stride * 2, bsk = a.c.k_block_stride * es, bsv = a.c.v_block_stride * es;
        if (q_out == q && ((T > 1 && tso != tsq) || (p->heads_q > 1 && p->q_out_head_stride != p->q_head_stride)))
            return gk__fail(cudaErrorInvalidValue, fn, "q_out is q with other strides: in place needs q's");
        if (q_out != q && gk_rope_overlap(q_out, tso, qo, q, tsq, qi, T))
            return gk__fail(cudaErrorInvalidValue, fn, "'q_out' overlaps 'q' without being it");
        if (gk_rope_overlap(q_out, tso, qo, k, tsk, ki, T)) return gk__fail(cudaErrorInvalidValue, fn, "'q_out' overlaps 'k'");
        if (gk_rope_overlap(q_out, tso, qo, v, tsv, vi, T)) return gk__fail(cudaErrorInvalidValue, fn, "'q_out' overlaps 'v'");
        const int64_t no = (T - 1) * tso + qo, nkc = (a.c.num_blocks - 1) * bsk + kc, nvc = (a.c.num_blocks - 1) * bsv + vc;
        GK_TRY(gk_check_disjoint(fn, "q_out", q_out, no, "k_cache", a.c.k_cache, nkc));
        GK_TRY(gk_check_disjoint(fn, "q_out", q_out, no, "v_cache", a.c.v_cache, nvc));
        if (gk_rope_overlap(a.c.k_cache, bsk, kc, a.c.v_cache, bsv, vc, a.c.num_blocks))
            return gk__fail(cudaErrorInvalidValue, fn, "'k_cache' and 'v_cache' overlap");
    }
    a.q_out = q_out;
    a.q = q;
    a.k = k;
    a.v = v;
    a.slots = (int64_t)a.c.num_blocks * a.c.block_size;
    for (int j = 0; j < r / 2; j++) a.freq[j] = gk_rope_freq(&a.r, j);
    if (a.c.dtype != GK_E4M3) a.c.k_scale = a.c.v_scale = 1.0f;
    int grid = 0;
    GK_TRY(gk_grid_size(p->tokens, 1, 4, &grid)); /* 4 blocks of 256 threads an SM at 64 registers */
    gk_rope_append_kernel<<<grid, 256, 0, stream>>>(a);
    return gk_check_launch(fn);
}

GK_EXTERN_C_BEGIN

GK_IMPL cudaError_t gk_rope_append_bf16(gk_bf16 *q_out, const gk_bf16 *q, const gk_bf16 *k, const gk_bf16 *v,
                                        const gk_rope_append_params *params, const gk_rope *rope,
                                        const gk_paged_kv *cache, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_rope_append_bf16",
                   gk_rope_append_run("gk_rope_append_bf16", GK_BF16, q_out, q, k, v, params, rope, cache, stream));
}

GK_IMPL cudaError_t gk_rope_append_f16(gk_f16 *q_out, const gk_f16 *q, const gk_f16 *k, const gk_f16 *v,
                                       const gk_rope_append_params *params, const gk_rope *rope,
                                       const gk_paged_kv *cache, cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_rope_append_f16",
                   gk_rope_append_run("gk_rope_append_f16", GK_F16, q_out, q, k, v, params, rope, cache, stream));
}

GK_EXTERN_C_END

/* ---------------------------------------------------------------- decode attention: host side */

static int gk_pd_kernel_dim(int d) { return d <= 64 ? 64 : d <= 128 ? 128 : 256; }

/* The checked problem. *empty: B == 0, nothing to do. shapes_only (a plan): the pointers may be
   NULL, and q's and out's strides and aliasing go unchecked. */
static cudaError_t gk_pd_check(const char *fn, int dt, void *out, float *lse, const void *q, const gk_paged_kv *cp,
                               const gk_paged_decode_params *pp, int shapes_only, gk_pd_args *a, int *empty)
{
    GK_TRY(gk_check_ptr(fn, "params", pp));
    GK_TRY(gk_check_ptr(fn, "cache", cp));
    memset(a, 0, sizeof *a);
    const gk_paged_decode_params *p = pp;
    const gk_paged_kv *c = cp;
    *empty = 0;
    GK_TRY(gk_check_nonneg(fn, "batch", p->batch));
    if (p->batch > 65535) return gk__fail(cudaErrorInvalidValue, fn, "batch %d is past 65535", p->batch);
    if (p->batch == 0) {
        *empty = 1;
        return cudaSuccess;
    }
    GK_TRY(gk_check_positive(fn, "heads_q", p->heads_q));
    GK_TRY(gk_check_positive(fn, "heads_kv", p->heads_kv));
    if (p->heads_q % p->heads_kv)
        return gk__fail(cudaErrorInvalidValue, fn, "heads_q (%d) is not a multiple of heads_kv (%d)", p->heads_q, p->heads_kv);
    const int f8 = c->dtype == GK_E4M3, D = p->head_dim;
    if (D < 8 || D > 256 || D % (f8 ? 16 : 8))
        return gk__fail(cudaErrorInvalidValue, fn, "head_dim %d is not supported: a multiple of %d from %d to 256", D,
                        f8 ? 16 : 8, f8 ? 16 : 8);
    if (p->queries < 1 || p->queries > 16)
        return gk__fail(cudaErrorInvalidValue, fn, "queries %d: 1 to 16 query tokens a sequence", p->queries);
    if (c->heads_kv != p->heads_kv || c->head_dim != D)
        return gk__fail(cudaErrorInvalidValue, fn, "the cache holds %d heads of %d, the problem %d heads of %d",
                        c->heads_kv, c->head_dim, p->heads_kv, D);
    if ((dt != GK_BF16 && dt != GK_F16) || (c->dtype != dt && !f8))
        return gk__fail(cudaErrorInvalidValue, fn, "cache dtype %s: it must be q's (%s) or e4m3", gk_dtype_name(c->dtype),
                        gk_dtype_name(dt));
    if (f8 && (!(c->k_scale > 0.0f) || !(c->v_scale > 0.0f)))
        return gk__fail(cudaErrorInvalidValue, fn, "an fp8 cache needs k_scale and v_scale > 0");
    GK_TRY(gk_check_positive(fn, "num_blocks", c->num_blocks));
    if (c->block_size < 1 || c->block_size > 256 || (c->block_size & (c->block_size - 1)))
        return gk__fail(cudaErrorInvalidValue, fn, "block_size %d is not a power of two from 1 to 256", c->block_size);
    GK_TRY(gk_check_nonneg(fn, "max_seq_len", p->max_seq_len));
    if (p->block_table_stride < gk_ceil_div(p->max_seq_len, c->block_size))
        return gk__fail(cudaErrorInvalidValue, fn, "block_table_stride %lld is under ceil(max_seq_len / block_size) = %lld",
                        (long long)p->block_table_stride, (long long)gk_ceil_div(p->max_seq_len, c->block_size));
    if (p->softcap < 0.0f || p->softcap != p->softcap)
        return gk__fail(cudaErrorInvalidValue, fn, "softcap %g must be >= 0", (double)p->softcap);
    if (!(p->scale >= 0.0f) || p->scale == INFINITY)
        return gk__fail(cudaErrorInvalidValue, fn, "scale %g is not finite and >= 0 (0: 1/sqrt(D))", (double)p->scale);
    if (!shapes_only) {
        GK_TRY(gk_check_ptr(fn, "out", out));
        GK_TRY(gk_check_ptr(fn, "q", q));
        GK_TRY(gk_check_ptr(fn, "k_cache", c->k_cache));
        GK_TRY(gk_check_ptr(fn, "v_cache", c->v_cache));
        GK_TRY(gk_check_ptr(fn, "block_table", p->block_table));
        GK_TRY(gk_check_ptr(fn, "seq_lens", p->seq_lens));
    }
    GK_TRY(gk_check_elem_aligned(fn, "block_table", p->block_table, 4));
    GK_TRY(gk_check_elem_aligned(fn, "seq_lens", p->seq_lens, 4));
    if (lse) GK_TRY(gk_check_elem_aligned(fn, "lse", lse, 4));
    if (p->alibi_slopes) GK_TRY(gk_check_elem_aligned(fn, "alibi_slopes", p->alibi_slopes, 4));
    if (p->error_flag) GK_TRY(gk_check_elem_aligned(fn, "error_flag", p->error_flag, 4));
    const char *names[4] = {"out", "q", "k_cache", "v_cache"};
    const void *ptrs[4] = {out, q, c->k_cache, c->v_cache};
    for (int i = 0; i < 4; i++)
        if (!gk_is_aligned(ptrs[i], 16))
            return gk__fail(cudaErrorInvalidValue, fn, "'%s' (%p) is not 16-byte aligned", names[i], ptrs[i]);
    if (!shapes_only) {
        GK_TRY(gk_check_stride(fn, "q_batch_stride", p->q_batch_stride, 8));
        GK_TRY(gk_check_stride(fn, "q_row_stride", p->q_row_stride, 8));
        GK_TRY(gk_check_stride(fn, "q_head_stride", p->q_head_stride, 8));
        GK_TRY(gk_check_stride(fn, "out_batch_stride", p->out_batch_stride, 8));
        GK_TRY(gk_check_stride(fn, "out_row_stride", p->out_row_stride, 8));
        GK_TRY(gk_check_stride(fn, "out_head_stride", p->out_head_stride, 8));
    }
    const int cm = f8 ? 16 : 8; /* 16 bytes */
    GK_TRY(gk_check_stride(fn, "k_block_stride", c->k_block_stride, cm));
    GK_TRY(gk_check_stride(fn, "k_slot_stride", c->k_slot_stride, cm));
    GK_TRY(gk_check_stride(fn, "k_head_stride (cache)", c->k_head_stride, cm));
    GK_TRY(gk_check_stride(fn, "v_block_stride", c->v_block_stride, cm));
    GK_TRY(gk_check_stride(fn, "v_slot_stride", c->v_slot_stride, cm));
    GK_TRY(gk_check_stride(fn, "v_head_stride (cache)", c->v_head_stride, cm));
    /* out: rows must not alias, and must not touch q or lse */
    const int B = p->batch, nq = p->queries, Hq = p->heads_q;
    if (!shapes_only) {
        const int64_t counts[4] = {B, nq, Hq, D}, strides[3] = {p->out_batch_stride, p->out_row_stride, p->out_head_stride};
        GK_TRY(gk_check_injective(fn, "out", counts, strides));
        const int64_t ob = ((B - 1) * p->out_batch_stride + (nq - 1) * p->out_row_stride + (Hq - 1) * p->out_head_stride + D) * 2;
        const int64_t qb = ((B - 1) * p->q_batch_stride + (nq - 1) * p->q_row_stride + (Hq - 1) * p->q_head_stride + D) * 2;
        GK_TRY(gk_check_disjoint(fn, "out", out, ob, "q", q, qb));
        if (lse) GK_TRY(gk_check_disjoint(fn, "out", out, ob, "lse", lse, (int64_t)B * Hq * nq * 4));
        if (lse) GK_TRY(gk_check_disjoint(fn, "lse", lse, (int64_t)B * Hq * nq * 4, "q", q, qb));
    }

    gk_attn_args *t = &a->a;
    t->out = out;
    t->q = q;
    t->lse = lse;
    t->q_bs = p->q_batch_stride;
    t->q_rs = p->q_row_stride;
    t->q_hs = p->q_head_stride;
    t->o_bs = p->out_batch_stride;
    t->o_rs = p->out_row_stride;
    t->o_hs = p->out_head_stride;
    t->batch = B;
    t->hq = Hq;
    t->hkv = p->heads_kv;
    t->group = Hq / p->heads_kv;
    t->d = D;
    t->sq = nq;
    t->sk = p->max_seq_len;
    t->dt = dt;
    t->left = t->right = -1;
    const float scale = (p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)D)) * (f8 ? c->k_scale : 1.0f);
    if (p->softcap > 0.0f) {
        t->softcap = p->softcap;
        t->sl2 = p->softcap * (float)GK_LOG2E;
        t->cap_inv = scale / p->softcap;
    } else {
        t->sl2 = scale * (float)GK_LOG2E;
    }
    t->splits = 1;
    a->c = *c;
    a->block_table = p->block_table;
    a->seq_lens = p->seq_lens;
    a->bt_stride = p->block_table_stride;
    a->alibi = p->alibi_slopes;
    a->error_flag = p->error_flag;
    a->max_len = p->max_seq_len;
    a->rchunks = (int)gk_ceil_div((int64_t)nq * t->group, 16);
    a->window_left = p->window_left;
    a->v_scale = f8 ? c->v_scale : 1.0f;
    a->kv_same = c->k_block_stride == c->v_block_stride && c->k_slot_stride == c->v_slot_stride;
    int lbs = 0;
    while ((1 << lbs) < c->block_size) lbs++;
    a->lbs = lbs;
    if ((int64_t)p->heads_kv * a->rchunks > 2147483647)
        return gk__fail(cudaErrorInvalidValue, fn, "heads_kv x ceil(queries x group / 16) = %lld is past 2^31 - 1",
                        (long long)p->heads_kv * a->rchunks);
    return cudaSuccess;
}

/* The configuration for a problem: the first built for its kernel head dim and cache type. */
static int gk_pd_pick(const gk_pd_args *a)
{
    const int dk = gk_pd_kernel_dim(a->a.d), f8 = a->c.dtype == GK_E4M3;
    for (int i = 0; i < GK_PD_N; i++)
        if (gk_pd_configs[i]->head_dim == dk && gk_pd_configs[i]->fp8 == f8) return i;
    return -1;
}

static size_t gk_pd_split_bytes(const gk_pd_args *a, int splits, int dk)
{
    if (splits <= 1) return 0;
    const size_t rows = (size_t)splits * a->a.batch * a->a.sq * a->a.hq;
    return gk_round_up((int64_t)(rows * dk * 4), 256) + gk_round_up((int64_t)(rows * 4), 256);
}

/* Key splits from a model of the schedule: s splits of ceil(tiles / s) tiles each, over
   B Hkv rchunks (b, kv head, rows) and the SMs' resident blocks; the cost of s is the rounds of
   blocks times the tiles a block streams. With host lengths the blocks a sequence needs are
   counted from its own length. Among equal costs the fewer splits win (no partials to merge),
   and a split keeps at least 8 tiles. The counts that give a split the same tiles cost the
   same, so only the fewest of each is tried (about 2 sqrt(tiles) models, not smax: this runs
   on every call). */
static int gk_pd_splits_for(const gk_pd_args *a, const int *host_lens, int config, int sms)
{
    const gk_paged_decode_config *cfg = gk_pd_configs[config];
    const int64_t tiles = gk_ceil_div(a->max_len, cfg->keys);
    if (tiles <= 1) return 1;
    int per_sm = (228 * 1024) / (cfg->smem_bytes + 1024);
    if (per_sm > gk_pd_minb[config] + 1) per_sm = gk_pd_minb[config] + 1;
    if (per_sm < 1) per_sm = 1;
    const int64_t conc = (int64_t)sms * per_sm, heads = (int64_t)a->a.hkv * a->rchunks;
    int64_t smax = tiles / 8;
    if (smax > GK_PAGED_MAX_SPLITS) smax = GK_PAGED_MAX_SPLITS;
    int best = 1;
    double best_cost = 0.0;
    for (int64_t s = 1, next; s <= (smax > 1 ? smax : 1); s = next) {
        const int64_t per = gk_ceil_div(tiles, s); /* tiles a split */
        next = per > 1 ? gk_ceil_div(tiles, per - 1) : s + 1; /* the fewest splits of fewer tiles */
        int64_t blocks = 0;
        if (host_lens) {
            for (int b = 0; b < a->a.batch; b++) {
                const int64_t l = host_lens[b] < 0 ? 0 : host_lens[b] > a->max_len ? a->max_len : host_lens[b];
                blocks += gk_ceil_div(gk_ceil_div(l, cfg->keys), per);
            }
        } else {
            blocks = (int64_t)a->a.batch * gk_ceil_div(tiles, per);
        }
        blocks *= heads;
        const double cost = (double)gk_ceil_div(blocks > 0 ? blocks : 1, conc) * (double)per;
        if (s == 1 || cost < best_cost * 0.97) {
            best = (int)s;
            best_cost = cost;
        }
    }
    return best;
}

static cudaError_t gk_pd_run_host(const char *fn, int config, int splits, int dt, void *out, float *lse, const void *q,
                                  const gk_paged_kv *cache, const gk_paged_decode_params *params, void *workspace,
                                  size_t workspace_bytes, cudaStream_t stream, gk_paged_decode_plan *plan_only)
{
    gk_pd_args a;
    int empty = 0;
    GK_TRY(gk_pd_check(fn, dt, out, lse, q, cache, params, plan_only != NULL, &a, &empty));
    if (empty) return cudaSuccess;
    if (config < -1 || config >= GK_PD_N)
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %d is not one of 0 .. %d (or -1)", config, GK_PD_N - 1);
    if (splits < 0 || splits > GK_PAGED_MAX_SPLITS)
        return gk__fail(cudaErrorInvalidValue, fn, "splits is %d: 0 (the dispatcher's) to %d", splits, GK_PAGED_MAX_SPLITS);
    if (workspace && !gk_is_aligned(workspace, 256))
        return gk__fail(cudaErrorInvalidValue, fn, "workspace (%p) is not 256-byte aligned", workspace);
    if (config < 0) config = gk_pd_pick(&a);
    if (config < 0) return gk__fail(cudaErrorInvalidValue, fn, "no decode configuration is built for D %d", a.a.d);
    const gk_paged_decode_config *cfg = gk_pd_configs[config];
    if (cfg->head_dim < a.a.d || cfg->fp8 != (a.c.dtype == GK_E4M3))
        return gk__fail(cudaErrorInvalidValue, fn, "configuration %s is built for D <= %d and %s caches", cfg->name,
                        cfg->head_dim, cfg->fp8 ? "e4m3" : "16-bit");
    a.a.d_kernel = cfg->head_dim;
    if (splits == 0) {
        int sms = 0;
        if (plan_only || workspace) GK_TRY(gk_sm_count(&sms));
        splits = plan_only || workspace ? gk_pd_splits_for(&a, params->host_seq_lens, config, sms) : 1;
    }
    const int64_t tiles = gk_ceil_div(a.max_len, cfg->keys);
    if (splits > tiles) splits = tiles > 1 ? (int)tiles : 1;
    if ((int64_t)a.a.batch * a.a.sq * a.a.hq > 2147483647) splits = 1; /* the combine's grid: a block a row */
    if (!plan_only)
        while (splits > 1 && gk_pd_split_bytes(&a, splits, cfg->head_dim) > workspace_bytes) splits--;
    const int64_t per = gk_ceil_div(tiles > 0 ? tiles : 1, splits);
    splits = (int)gk_ceil_div(tiles > 0 ? tiles : 1, per); /* no split left empty by the rounding */
    a.split_keys = (int)(per * cfg->keys < 2147483647 ? per * cfg->keys : 2147483647);
    if (plan_only) {
        plan_only->config = config;
        plan_only->splits = splits;
        plan_only->split_keys = a.split_keys;
        plan_only->workspace_bytes = gk_pd_split_bytes(&a, splits, cfg->head_dim);
        return cudaSuccess;
    }
    if (splits > 1) {
        const size_t rows = (size_t)splits * a.a.batch * a.a.sq * a.a.hq;
        a.a.part_o = (float *)workspace;
        a.a.part_lse = (float *)((char *)workspace + gk_round_up((int64_t)(rows * cfg->head_dim * 4), 256));
    }
    a.a.splits = splits;
    const void *kern = (const void *)gk_pd_kernels[dt == GK_F16][config];
    static unsigned attr_set[2][32];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &attr_set[dt == GK_F16][config]));
    /* the kv heads of one split adjacent in launch order: they run together and read the same
       cache rows (NHD keeps a token's heads side by side) */
    const dim3 grid((unsigned)(a.a.hkv * a.rchunks), (unsigned)splits, (unsigned)a.a.batch);
    ((gk_pd_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(a);
    GK_TRY(gk_check_launch(fn));
    if (splits > 1) {
        /* a programmatic dependent launch on 9.0 and later: the combine's blocks start while the
           decode blocks finish, and wait for them (griddepcontrol.wait) */
        const int64_t rows = (int64_t)a.a.batch * a.a.sq * a.a.hq;
        void *args[1] = {&a.a};
        GK_TRY(gk_launch_dependent(fn, (const void *)gk_attn_combine, dim3((unsigned)rows), dim3(256), 0, args, stream));
    }
    return cudaSuccess;
}

GK_EXTERN_C_BEGIN

GK_IMPL gk_paged_decode_params gk_paged_decode_params_dense(int batch, int heads_q, int heads_kv, int head_dim, int queries,
                                                            const int *block_table, int max_blocks_per_seq,
                                                            const int *seq_lens, int max_seq_len)
{
    gk_paged_decode_params p;
    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.heads_q = heads_q;
    p.heads_kv = heads_kv;
    p.head_dim = head_dim;
    p.queries = queries;
    p.q_head_stride = p.out_head_stride = head_dim;
    p.q_row_stride = p.out_row_stride = (int64_t)heads_q * head_dim;
    p.q_batch_stride = p.out_batch_stride = (int64_t)queries * heads_q * head_dim;
    p.block_table = block_table;
    p.block_table_stride = max_blocks_per_seq;
    p.seq_lens = seq_lens;
    p.max_seq_len = max_seq_len;
    p.window_left = -1;
    return p;
}

GK_IMPL gk_paged_decode_plan gk_paged_decode_plan_for(const gk_paged_decode_params *params, const gk_paged_kv *cache)
{
    gk_paged_decode_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.config = -1;
    gk__begin();
    /* shapes only: q's dtype is the cache's (bf16 for an fp8 cache, which either q dtype plans alike) */
    const int dt = cache && cache->dtype != GK_E4M3 ? cache->dtype : GK_BF16;
    const cudaError_t e = gk_pd_run_host("gk_paged_decode_plan_for", -1, 0, dt, NULL, NULL, NULL, cache, params, NULL, 0,
                                         0, &pl);
    gk__end("gk_paged_decode_plan_for", e);
    if (e != cudaSuccess) pl.config = -1;
    return pl;
}

GK_IMPL int gk_paged_decode_config_count(void) { return GK_PD_N; }

GK_IMPL gk_paged_decode_config gk_paged_decode_config_info(int config)
{
    gk_paged_decode_config c;
    memset(&c, 0, sizeof c);
    if (config >= 0 && config < GK_PD_N) c = *gk_pd_configs[config];
    return c;
}

GK_IMPL gk_ledger gk_paged_decode_ledger(const gk_paged_decode_params *p, int dtype, int cache_dtype,
                                         const int *host_seq_lens)
{
    gk_ledger l;
    memset(&l, 0, sizeof l);
    if (!p || p->batch <= 0) return l;
    const double es = gk_dtype_size(dtype), cs = gk_dtype_size(cache_dtype), D = p->head_dim;
    double keys = 0.0, pairs = 0.0;
    for (int b = 0; b < p->batch; b++) {
        const double len = host_seq_lens ? host_seq_lens[b] : p->max_seq_len;
        keys += len;
        for (int i = 0; i < p->queries; i++) { /* keys query i sees */
            double pos = len - p->queries + i, lo = 0.0;
            if (pos < 0) continue;
            if (p->window_left >= 0 && pos - p->window_left > 0) lo = pos - p->window_left;
            pairs += pos - lo + 1;
        }
    }
    l.flops = 4.0 * pairs * p->heads_q * D;
    l.bytes = keys * p->heads_kv * D * cs * 2.0 + 2.0 * p->batch * p->queries * p->heads_q * D * es + p->batch * 4.0;
    return l;
}

GK_IMPL cudaError_t gk_paged_decode_ex(int config, int splits, int dtype, void *out, float *lse, const void *q,
                                       const gk_paged_kv *cache, const gk_paged_decode_params *params, void *workspace,
                                       size_t workspace_bytes, cudaStream_t stream)
{
    gk__begin();
    if (dtype != GK_BF16 && dtype != GK_F16)
        return gk__end("gk_paged_decode_ex", gk__fail(cudaErrorInvalidValue, "gk_paged_decode_ex",
                                                      "dtype %s: bf16 or f16", gk_dtype_name(dtype)));
    return gk__end("gk_paged_decode_ex", gk_pd_run_host("gk_paged_decode_ex", config, splits, dtype, out, lse, q, cache,
                                                        params, workspace, workspace_bytes, stream, NULL));
}

GK_IMPL cudaError_t gk_paged_decode_bf16(gk_bf16 *out, float *lse, const gk_bf16 *q, const gk_paged_kv *cache,
                                         const gk_paged_decode_params *params, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_paged_decode_bf16", gk_pd_run_host("gk_paged_decode_bf16", -1, 0, GK_BF16, out, lse, q, cache,
                                                          params, workspace, workspace_bytes, stream, NULL));
}

GK_IMPL cudaError_t gk_paged_decode_f16(gk_f16 *out, float *lse, const gk_f16 *q, const gk_paged_kv *cache,
                                        const gk_paged_decode_params *params, void *workspace, size_t workspace_bytes,
                                        cudaStream_t stream)
{
    gk__begin();
    return gk__end("gk_paged_decode_f16", gk_pd_run_host("gk_paged_decode_f16", -1, 0, GK_F16, out, lse, q, cache,
                                                         params, workspace, workspace_bytes, stream, NULL));
}

GK_EXTERN_C_END

#endif /* __CUDACC__ */

#endif /* paged implementation */
