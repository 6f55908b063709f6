/* gk_paged.cuh - gk paged KV cache v0.1: the cache layout vLLM and FlashInfer use, and the fused
   RoPE + cache append of a decode or prefill step: q and k rotated, k and v written into their
   cache slots (converted to fp8 e4m3 where the cache is fp8), in one memory-bound pass.

   Needs gk_core.cuh (same folder). In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_PAGED_IMPLEMENTATION for this header alone)
       #include "gk_paged.cuh"

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

   ARGUMENTS AND ERRORS
     tokens == 0 is a no-op. Null pointers, Hq not a multiple of Hkv, D not a multiple of 8 or
     past 256, rotary_dim odd, past D, or not a multiple of 16 (NeoX) or 8 (GPT-J), a cache dtype
     other than T's or e4m3, strides or pointers off 16 bytes (8 for an fp8 cache), q_out aliasing
     k, v or the cache, a non-positive theta or fp8 scale return cudaErrorInvalidValue before
     anything launches; gk_failure_reason() says which.

   HOW IT RUNS
     A block a token (grid-stride): the token's cos and sin, formed once into shared memory, then
     the threads share the token's units of 16-byte chunks (8 values): per q head and per k head
     the rotary units (NeoX: a chunk of the first half with its partner in the second, so both of
     a pair's values are in registers; GPT-J: a chunk of 4 pairs) and the chunks past
     rotary_dim, per v head its chunks, stored into the slot.

   MEASURED   gk_bench/RESULTS.md.
*/
#include "gk_core.cuh"
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

/* 8 values of a chunk, widened to fp32, and back (to dt: bf16, f16, or e4m3 / scale). */
GK_DEV void gk_rope_load8(const void *p, int dt, float *x) { gk_unpack_f32(gk_ld16(p), dt, 8, x); }

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

/* A block a token (grid-stride). The token's cos and sin (rotary_dim / 2 pairs) go to shared
   memory once: from the table, or formed in double (pos freq reduced to [-pi, pi]) and finished
   in fp32 (__sincosf: 2^-21 absolute there, no stack). Then every thread takes units of the
   token's work: per q head and per kv head's k, the rotary units (a NeoX unit is a chunk of 8
   of the first half and its partner in the second; a GPT-J unit a chunk of 4 pairs) and the
   pass-through chunks past rotary_dim, and per kv head the v chunks. */
static __global__ void __launch_bounds__(256) gk_rope_append_kernel(const __grid_constant__ gk_rope_args a)
{
    __shared__ float cs[2][128];
    const int D = a.p.head_dim, rot = a.r.rotary_dim, chunks = D / 8, neox = a.r.style == GK_ROPE_NEOX;
    const int ru = neox ? rot / 16 : rot / 8, pu = (D - rot) / 8, hu = ru + pu; /* units a rotated head */
    const int units = (a.p.heads_q + a.p.heads_kv) * hu + a.p.heads_kv * chunks;
    const int es = gk_dtype_size(a.c.dtype);
    for (int t = blockIdx.x; t < a.p.tokens; t += gridDim.x) {
        const int64_t pos = a.p.positions_int64 ? ((const int64_t *)a.p.positions)[t] : ((const int *)a.p.positions)[t];
        const int64_t slot = a.p.slot_mapping[t];
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
        for (int u = threadIdx.x; u < units; u += blockDim.x) {
            const char *src;
            char *dst;
            int dst_dt = a.dt, c;
            float scale = 1.0f;
            if (u < (a.p.heads_q + a.p.heads_kv) * hu) {
                const int item = u / hu;
                c = u % hu;
                if (item < a.p.heads_q) {
                    src = (const char *)a.q + 2 * (t * a.p.q_token_stride + item * a.p.q_head_stride);
                    dst = (char *)a.q_out + 2 * (t * a.p.q_out_token_stride + item * a.p.q_out_head_stride);
                } else {
                    if (slot < 0) continue; /* padding: no cache write */
                    const int h = item - a.p.heads_q;
                    src = (const char *)a.k + 2 * (t * a.p.k_token_stride + h * a.p.k_head_stride);
                    dst = (char *)a.c.k_cache + es * (blk * a.c.k_block_stride + in_blk * a.c.k_slot_stride + h * a.c.k_head_stride);
                    dst_dt = a.c.dtype;
                    scale = a.c.k_scale;
                }
                if (c >= ru) c = c - ru + rot / 8; /* a pass-through chunk */
            } else {
                if (slot < 0) continue;
                const int v = u - (a.p.heads_q + a.p.heads_kv) * hu, h = v / chunks;
                c = v % chunks;
                src = (const char *)a.v + 2 * (t * a.p.v_token_stride + h * a.p.v_head_stride);
                dst = (char *)a.c.v_cache + es * (blk * a.c.v_block_stride + in_blk * a.c.v_slot_stride + h * a.c.v_head_stride);
                dst_dt = a.c.dtype;
                scale = a.c.v_scale;
                float x[8];
                gk_rope_load8(src + c * 16, a.dt, x);
                gk_rope_store8(dst + c * 8 * es, dst_dt, x, scale);
                continue;
            }
            const int ob = gk_dtype_size(dst_dt); /* bytes a value at dst */
            float x[8], y[8];
            gk_rope_load8(src + c * 16, a.dt, x);
            if (c * 8 >= rot) { /* past the rotary dims */
                gk_rope_store8(dst + c * 8 * ob, dst_dt, x, scale);
            } else if (!neox) { /* pairs (2j, 2j + 1) within the chunk */
#pragma unroll
                for (int e = 0; e < 8; e += 2) {
                    const float co = cs[0][c * 4 + e / 2], si = cs[1][c * 4 + e / 2];
                    y[e] = x[e] * co - x[e + 1] * si;
                    y[e + 1] = x[e + 1] * co + x[e] * si;
                }
                gk_rope_store8(dst + c * 8 * ob, dst_dt, y, scale);
            } else { /* NeoX: chunk c of the first half and its partner c + rot / 16 */
                const int pc = c + rot / 16;
                float x2[8], y2[8];
                gk_rope_load8(src + pc * 16, a.dt, x2);
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float co = cs[0][c * 8 + e], si = cs[1][c * 8 + e];
                    y[e] = x[e] * co - x2[e] * si;
                    y2[e] = x2[e] * co + x[e] * si;
                }
                gk_rope_store8(dst + c * 8 * ob, dst_dt, y, scale);
                gk_rope_store8(dst + pc * 8 * ob, dst_dt, y2, scale);
            }
        }
    }
}

#endif /* __CUDACC__ */

#endif /* GK_PAGED_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_PAGED_IMPLEMENTATION)) && !defined(GK_PAGED_IMPLEMENTED)
#define GK_PAGED_IMPLEMENTED

#ifdef __CUDACC__

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
    GK_TRY(gk_grid_size(p->tokens, 1, 4, &grid)); /* 4 blocks of 256 threads an SM at its ~60 registers */
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

#endif /* __CUDACC__ */

#endif /* paged implementation */
