// CPU references for gk_paged.cuh in double: the RoPE + paged cache append (long double for the
// angles) and the decode attention over the cache, over the same gk_rope_append_params,
// gk_paged_decode_params, gk_rope and gk_paged_kv the launchers get. Written from the definitions
// in the header's manual, not from its code: the frequencies come from gk_ref_rope_freq below
// (Meta's Llama-3.1 apply_scaling, written out again), not gk_rope_freq; stored values are read
// with gk_rne.h's integer decoding, not gk_core's conversions.
//
//   pair j (< rotary_dim / 2) of a head: NeoX (j, j + rotary_dim / 2), GPT-J (2j, 2j + 1)
//   (x1, x2) -> (x1 cos a - x2 sin a, x2 cos a + x1 sin a), a = position freq_j,
//   freq_j = theta^(-2j / rotary_dim), Llama-3.1 scaled when factor > 0; with a cos_sin table
//   cos a = table[pos][j], sin a = table[pos][rotary_dim / 2 + j]. Dims past rotary_dim pass.
//   token t: slot < -1 or >= num_blocks block_size, or (with a table) a position outside
//   [0, max_position): skipped (q_out and the cache untouched, the flag set); slot -1: q_out only.
//   an fp8 cache stores value / scale, rounded to nearest even and saturated to +-448.
//
// Each expected value comes with eta, a bound on how far the kernel's fp32 value may be from it
// before the final rounding (the kernel's sines and cosines, its angle reduction, fp32 products);
// a stored result passes when it is what rounding some value within eta gives (gk_ref_paged_accept,
// with gk_rne.h's independent rounding): bit-exact wherever eta does not straddle a rounding
// boundary, which is nearly everywhere.
#ifndef GK_PAGED_REF_H
#define GK_PAGED_REF_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gk/gk_paged.cuh"
#include "gk_tests/gk_rne.h"

// The Llama-3.1 scaled frequency of pair j, as Meta's reference writes it:
//   freq = theta^(-2j / dim); wavelen = 2 pi / freq
//   wavelen < old / high_freq_factor: freq
//   wavelen > old / low_freq_factor:  freq / factor
//   otherwise: smooth = (old / wavelen - low) / (high - low); (1 - smooth) freq / factor + smooth freq
// (factor <= 0: no scaling).
inline long double gk_ref_rope_freq(double theta, int rotary_dim, int j, double factor, double low, double high,
                                    double old)
{
    const long double f = powl((long double)theta, -2.0L * j / rotary_dim);
    if (!(factor > 0)) return f;
    const long double two_pi = 6.283185307179586476925286766559005768L;
    const long double wavelen = two_pi / f;
    if (wavelen < (long double)old / high) return f;
    if (wavelen > (long double)old / low) return f / factor;
    const long double smooth = ((long double)old / wavelen - low) / ((long double)high - low);
    return (1 - smooth) * f / factor + smooth * f;
}

inline long double gk_ref_rope_freq(const gk_rope &r, int j)
{
    return gk_ref_rope_freq(r.theta, r.rotary_dim, j, r.factor, r.low_freq_factor, r.high_freq_factor,
                            r.original_max_position);
}

// The dims of pair j.
inline void gk_ref_rope_pair(const gk_rope &r, int j, int *i1, int *i2)
{
    if (r.style == GK_ROPE_GPTJ) {
        *i1 = 2 * j;
        *i2 = 2 * j + 1;
    } else {
        *i1 = j;
        *i2 = j + r.rotary_dim / 2;
    }
}

// One head row x[0 .. D) at position pos rotated: y and the bound eta of each dim. table: a host
// copy of r.cos_sin (r.cos_sin itself, a device pointer, is not read), or NULL for computed angles.
//
// eta of a rotated value: with a table, the fp32 products and difference (3 roundings of at most
// |x1| + |x2|); computed, also the kernel's cos and sin: __sincosf is within 2^-21.41 on [-pi, pi],
// and its argument is off by the float rounding of the reduced angle (2^-23 of pi) plus the
// double angle's error (position freq and its reduction mod 2 pi: a few ulps of |a|, 1e-15 |a|).
inline void gk_ref_rope_row(const gk_rope &r, const float *table, int64_t pos, const float *x, int D, double *y,
                            double *eta)
{
    const int rot = r.rotary_dim, half = rot / 2;
    for (int d = 0; d < D; d++) {
        y[d] = x[d];
        eta[d] = 0.0;
    }
    for (int j = 0; j < half; j++) {
        int i1, i2;
        gk_ref_rope_pair(r, j, &i1, &i2);
        long double c, s;
        double cs_err = 0.0;
        if (table) {
            c = table[pos * rot + j];
            s = table[pos * rot + half + j];
        } else {
            const long double a = (long double)pos * gk_ref_rope_freq(r, j);
            c = cosl(a);
            s = sinl(a);
            cs_err = 0x1p-21 + 0x1p-22 + 1e-15 * (double)fabsl(a);
        }
        const long double x1 = x[i1], x2 = x[i2];
        y[i1] = (double)(x1 * c - x2 * s);
        y[i2] = (double)(x2 * c + x1 * s);
        const double mag = std::fabs((double)x1) + std::fabs((double)x2);
        eta[i1] = eta[i2] = mag * (cs_err + 0x1p-22);
    }
}

// Fates of a token.
enum { GK_REF_TOKEN_WRITE = 0, GK_REF_TOKEN_NO_CACHE = 1, GK_REF_TOKEN_SKIP = 2 };

inline int gk_ref_paged_fate(const gk_rope &r, const gk_paged_kv &c, bool has_table, int64_t pos, int64_t slot)
{
    const int64_t slots = (int64_t)c.num_blocks * c.block_size;
    if (slot < -1 || slot >= slots) return GK_REF_TOKEN_SKIP;
    if (has_table && (pos < 0 || pos >= r.max_position)) return GK_REF_TOKEN_SKIP;
    return slot == -1 ? GK_REF_TOKEN_NO_CACHE : GK_REF_TOKEN_WRITE;
}

// The problem as the reference reads it: q, k, v are the values (widened to float) where the
// device pointers of the call point, so the params' strides apply as they are; positions and
// slots host copies ([tokens], positions widened to int64); cos_sin a host copy of the table or NULL.
struct GkPagedRefIn {
    gk_rope_append_params p;
    gk_rope r;
    gk_paged_kv c;
    const float *q, *k, *v;
    const int64_t *positions, *slots;
    const float *cos_sin;
};

// What the launch must leave: per token its fate; per element of q_out (from its pointer, q_out_elems
// of them), of the k cache and of the v cache (from their pointers): set (written), the value (an
// fp8 cache's in stored units, value / scale) and eta (likewise).
struct GkPagedRefOut {
    std::vector<int> fate;
    std::vector<char> q_set, k_set, v_set;
    std::vector<double> q, q_eta, k, k_eta, v, v_eta;
    bool any_skip = false;
};

inline void gk_ref_rope_append(const GkPagedRefIn &in, size_t q_out_elems, size_t kc_elems, size_t vc_elems,
                               GkPagedRefOut *out)
{
    const gk_rope_append_params &p = in.p;
    const gk_paged_kv &c = in.c;
    const int D = p.head_dim;
    const bool fp8 = c.dtype == GK_E4M3;
    const double ks = fp8 ? c.k_scale : 1.0, vs = fp8 ? c.v_scale : 1.0;
    out->fate.assign(p.tokens, GK_REF_TOKEN_SKIP);
    out->q_set.assign(q_out_elems, 0);
    out->q.assign(q_out_elems, 0.0);
    out->q_eta.assign(q_out_elems, 0.0);
    out->k_set.assign(kc_elems, 0);
    out->k.assign(kc_elems, 0.0);
    out->k_eta.assign(kc_elems, 0.0);
    out->v_set.assign(vc_elems, 0);
    out->v.assign(vc_elems, 0.0);
    out->v_eta.assign(vc_elems, 0.0);
    out->any_skip = false;
    std::vector<double> y(D), eta(D);
    for (int t = 0; t < p.tokens; t++) {
        const int64_t pos = in.positions[t], slot = in.slots[t];
        const int fate = gk_ref_paged_fate(in.r, c, in.cos_sin != nullptr, pos, slot);
        out->fate[t] = fate;
        if (fate == GK_REF_TOKEN_SKIP) {
            out->any_skip = true;
            continue;
        }
        for (int h = 0; h < p.heads_q; h++) {
            gk_ref_rope_row(in.r, in.cos_sin, pos, in.q + t * p.q_token_stride + h * p.q_head_stride, D, y.data(),
                            eta.data());
            const int64_t o = t * p.q_out_token_stride + h * p.q_out_head_stride;
            for (int d = 0; d < D; d++) {
                out->q_set[o + d] = 1;
                out->q[o + d] = y[d];
                out->q_eta[o + d] = eta[d];
            }
        }
        if (fate == GK_REF_TOKEN_NO_CACHE) continue;
        const int64_t blk = slot / c.block_size, in_blk = slot % c.block_size;
        for (int h = 0; h < p.heads_kv; h++) {
            gk_ref_rope_row(in.r, in.cos_sin, pos, in.k + t * p.k_token_stride + h * p.k_head_stride, D, y.data(),
                            eta.data());
            const int64_t ko = blk * c.k_block_stride + in_blk * c.k_slot_stride + h * c.k_head_stride;
            const int64_t vo = blk * c.v_block_stride + in_blk * c.v_slot_stride + h * c.v_head_stride;
            const float *vx = in.v + t * p.v_token_stride + h * p.v_head_stride;
            for (int d = 0; d < D; d++) {
                // value / scale in fp32: one more rounding (2^-24 of it) before the fp8 one
                const double kw = y[d] / ks, vw = (double)vx[d] / vs;
                out->k_set[ko + d] = 1;
                out->k[ko + d] = kw;
                out->k_eta[ko + d] = eta[d] / ks + (fp8 ? std::fabs(kw) * 0x1p-23 : 0.0);
                out->v_set[vo + d] = 1;
                out->v[vo + d] = vw;
                out->v_eta[vo + d] = fp8 ? std::fabs(vw) * 0x1p-23 : 0.0;
            }
        }
    }
}

// The rounding format of a stored dtype.
inline GkRneFormat gk_ref_paged_format(int dt)
{
    return dt == GK_BF16 ? kGkRneBf16 : dt == GK_F16 ? kGkRneF16 : kGkRneE4m3;
}

// The stored code (bf16 / f16 bits, or an e4m3 byte) at element i of raw bytes of dtype dt.
inline uint32_t gk_ref_paged_code(const unsigned char *bytes, size_t i, int dt)
{
    if (dt == GK_E4M3) return bytes[i];
    uint16_t h;
    memcpy(&h, bytes + 2 * i, 2);
    return h;
}

// Whether code (format f) is what rounding to nearest even gives for some value within eta of
// want: its value lies between the roundings of want - eta and want + eta (rounding is monotone;
// e4m3 saturates). NaN never passes.
inline bool gk_ref_paged_accept(uint32_t code, GkRneFormat f, double want, double eta)
{
    if (gk_rne_is_nan_code(code, f) || std::isnan(want)) return false;
    const double got = gk_rne_value(code, f);
    float lo = (float)(want - eta), hi = (float)(want + eta);
    if ((double)lo > want - eta) lo = std::nextafterf(lo, -INFINITY);
    if ((double)hi < want + eta) hi = std::nextafterf(hi, INFINITY);
    const double vlo = gk_rne_value(gk_rne_from_f32(gk_rne_bits(lo), f), f);
    const double vhi = gk_rne_value(gk_rne_from_f32(gk_rne_bits(hi), f), f);
    return got >= vlo && got <= vhi;
}

// ------------------------------------------------------------------ decode attention
//
// Sequence b holds L = seq_lens[b] tokens; token j lives in cache block
// block_table[b * block_table_stride + j / block_size], slot j % block_size. Query i < nq sits at
// position p = L - nq + i and sees the keys j with max(0, p - window_left) <= j <= p (from 0 when
// window_left < 0); none when p < 0. For query head h and kv head h / (Hq / Hkv):
//   s_j = scale q . k_j                 (scale 0: 1 / sqrt(D); fp8: scale k_scale q . k_stored)
//   s_j = softcap tanh(s_j / softcap)   (softcap > 0)
//   s_j += alibi[h] (j - p)             (alibi not NULL)
//   out = sum_j e^(s_j - lse) v_j       (fp8: v_scale v_stored), lse = ln sum_j e^(s_j)
// No key: out 0, lse -inf; a NaN among the logits or the values read: out and lse NaN.
// A key whose block id is outside [0, num_blocks) reads as 0 (k and v), and the row is flagged.

// The problem as the reference reads it: raw bytes where the call's pointers point, so the
// params' and the cache's strides apply as they are. q of dtype q_dtype; k_cache and v_cache of
// c.dtype (c's own pointers are not read); block_table [B][block_table_stride] and seq_lens [B]
// host copies; alibi a host copy of the slopes [Hq] or NULL (p.alibi_slopes is not read).
struct GkPagedDecodeRefIn {
    gk_paged_decode_params p;
    gk_paged_kv c;
    int q_dtype;
    const unsigned char *q, *k_cache, *v_cache;
    const int *block_table, *seq_lens;
    const float *alibi;
};

// The exact value of element i of raw bytes of dtype dt (bf16, f16, e4m3, f32).
inline double gk_ref_paged_value(const unsigned char *bytes, size_t i, int dt)
{
    if (dt == GK_F32) {
        float f;
        memcpy(&f, bytes + 4 * i, 4);
        return f;
    }
    return gk_rne_value(gk_ref_paged_code(bytes, i, dt), gk_ref_paged_format(dt));
}

inline double gk_ref_paged_decode_scale(const gk_paged_decode_params &p)
{
    return p.scale != 0.0f ? (double)p.scale : 1.0 / std::sqrt((double)p.head_dim);
}

// The keys query i of a sequence of L tokens sees: j in [*lo, *hi) (empty when *lo >= *hi).
inline void gk_ref_paged_decode_keys(const gk_paged_decode_params &p, int64_t L, int i, int64_t *lo, int64_t *hi)
{
    const int64_t pos = L - p.queries + i;
    *hi = pos + 1;
    *lo = p.window_left >= 0 && pos - p.window_left > 0 ? pos - p.window_left : 0;
    if (*hi < *lo) *hi = *lo;
}

// Element offset of (b, i, h, 0) in q and in out.
inline int64_t gk_ref_paged_q_off(const gk_paged_decode_params &p, int b, int i, int h)
{
    return b * p.q_batch_stride + i * p.q_row_stride + h * p.q_head_stride;
}
inline int64_t gk_ref_paged_out_off(const gk_paged_decode_params &p, int b, int i, int h)
{
    return b * p.out_batch_stride + i * p.out_row_stride + h * p.out_head_stride;
}
// lse: fp32 [B][Hq][nq].
inline int64_t gk_ref_paged_lse_off(const gk_paged_decode_params &p, int b, int i, int h)
{
    return ((int64_t)b * p.heads_q + h) * p.queries + i;
}

// Element offset of token j's row (kv head hk) in the k (v: 0) or v (v: 1) cache, or -1 when its
// block id is outside [0, num_blocks).
inline int64_t gk_ref_paged_kv_off(const GkPagedDecodeRefIn &in, int b, int64_t j, int hk, int v)
{
    const gk_paged_kv &c = in.c;
    const int64_t blk = in.block_table[b * in.p.block_table_stride + j / c.block_size], slot = j % c.block_size;
    if (blk < 0 || blk >= c.num_blocks) return -1;
    return v ? blk * c.v_block_stride + slot * c.v_slot_stride + hk * c.v_head_stride
             : blk * c.k_block_stride + slot * c.k_slot_stride + hk * c.k_head_stride;
}

// One output row: out[0 .. D) and *lse for query i of sequence b, query head h, over the keys it
// sees within [key_begin, key_end) (the whole sequence by default; a part of it is a split's
// partial: its own softmax, o normalized by its own sum). Returns true when a key read had a
// block id outside the cache (read as 0).
inline bool gk_ref_paged_decode_row(const GkPagedDecodeRefIn &in, int b, int i, int h, double *out, double *lse,
                                    int64_t key_begin = 0, int64_t key_end = INT64_MAX)
{
    const gk_paged_decode_params &p = in.p;
    const int D = p.head_dim, hk = h / (p.heads_q / p.heads_kv);
    const bool fp8 = in.c.dtype == GK_E4M3;
    const double scale = gk_ref_paged_decode_scale(p) * (fp8 ? (double)in.c.k_scale : 1.0);
    const double vs = fp8 ? (double)in.c.v_scale : 1.0, cap = p.softcap;
    int64_t lo, hi;
    gk_ref_paged_decode_keys(p, in.seq_lens[b], i, &lo, &hi);
    if (lo < key_begin) lo = key_begin;
    if (hi > key_end) hi = key_end;
    const int64_t pos = (int64_t)in.seq_lens[b] - p.queries + i;
    std::vector<double> q(D);
    const int64_t qo = gk_ref_paged_q_off(p, b, i, h);
    for (int d = 0; d < D; d++) q[d] = gk_ref_paged_value(in.q, qo + d, in.q_dtype);
    bool bad = false, nan = false;
    std::vector<double> s;
    std::vector<int64_t> keys;
    for (int64_t j = lo; j < hi; j++) {
        const int64_t ko = gk_ref_paged_kv_off(in, b, j, hk, 0);
        double dot = 0;
        if (ko < 0) bad = true;
        else
            for (int d = 0; d < D; d++) dot += q[d] * gk_ref_paged_value(in.k_cache, ko + d, in.c.dtype);
        double x = scale * dot;
        if (cap > 0) x = cap * std::tanh(x / cap);
        if (in.alibi) x += (double)in.alibi[h] * (double)(j - pos);
        nan = nan || std::isnan(x);
        s.push_back(x);
        keys.push_back(j);
    }
    for (int d = 0; d < D; d++) out[d] = 0.0;
    if (keys.empty()) {
        *lse = -INFINITY;
        return bad;
    }
    double m = -INFINITY;
    for (double x : s) m = x > m ? x : m;
    double sum = 0;
    for (size_t n = 0; n < keys.size(); n++) {
        const double w = std::exp(s[n] - m);
        sum += w;
        const int64_t vo = gk_ref_paged_kv_off(in, b, keys[n], hk, 1);
        if (vo < 0) continue;
        for (int d = 0; d < D; d++) out[d] += w * gk_ref_paged_value(in.v_cache, vo + d, in.c.dtype);
    }
    for (int d = 0; d < D; d++) {
        out[d] = out[d] * vs / sum;
        nan = nan || std::isnan(out[d]);
    }
    *lse = m + std::log(sum);
    if (nan) {
        for (int d = 0; d < D; d++) out[d] = NAN;
        *lse = NAN;
    }
    return bad;
}

#endif // GK_PAGED_REF_H
