// CPU reference for gk_attention.cuh in double, over the same gk_attention_params the kernels get:
// per-dimension strides, GQA, varlen (host copies of cu_seqlens), the bottom-right aligned causal
// and sliding-window masks, softcap, scale and lse. Written from the definition in the header's
// manual, not from its code: nothing here calls gk_attn_key_range or gk_attn_merge.
//
//   row i of a sequence of Sq queries and Sk keys sees key j (0 <= j < Sk) when
//       rel = j - (i + Sk - Sq) satisfies rel >= -window_left (if window_left >= 0)
//                                    and rel <= window_right (if >= 0; causal makes it 0)
//   s_j = scale q_i . k_j (scale 0: 1 / sqrt(D)), then softcap tanh(s_j / softcap) if softcap > 0
//   out_i = sum_j e^(s_j - m) v_j / sum_j e^(s_j - m), lse_i = m + ln sum_j e^(s_j - m)
//   no visible key: out 0, lse -inf; a NaN among the visible logits: out and lse NaN.
#ifndef GK_ATTENTION_REF_H
#define GK_ATTENTION_REF_H

#include <cmath>
#include <cstdint>
#include <vector>

#include "gk/gk_attention.cuh"

// The problem as the reference reads it. q, k, v point at the values (as stored, converted to
// float: bf16 and f16 are exact in float) where the device pointers of the call point, so the
// params' strides apply as they are.
struct GkAttnRef {
    gk_attention_params p;
    const float *q, *k, *v;
    const int *cu_q, *cu_k; // host copies of cu_seqlens_q / cu_seqlens_k ([B + 1]), or NULL
};

inline double gk_ref_attn_scale(const gk_attention_params &p)
{
    return p.scale > 0.0f ? (double)p.scale : 1.0 / std::sqrt((double)p.head_dim);
}

// Whether row i of a sequence of sq queries sees key j of its sk keys.
inline bool gk_ref_attn_visible(const gk_attention_params &p, int64_t i, int64_t j, int64_t sq, int64_t sk)
{
    if (j < 0 || j >= sk || i < 0 || i >= sq) return false;
    const int64_t rel = j - (i + sk - sq);
    const int64_t right = p.causal ? 0 : p.window_right;
    if (p.window_left >= 0 && rel < -(int64_t)p.window_left) return false;
    if (right >= 0 && rel > right) return false;
    return true;
}

// (row, key) pairs visible in one sequence of sq queries and sk keys, counted one by one.
inline double gk_ref_attn_pairs(const gk_attention_params &p, int64_t sq, int64_t sk)
{
    double n = 0;
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = 0; j < sk; j++) n += gk_ref_attn_visible(p, i, j, sq, sk);
    return n;
}

inline int gk_ref_attn_len_q(const GkAttnRef &r, int b) { return r.cu_q ? r.cu_q[b + 1] - r.cu_q[b] : r.p.seqlen_q; }
inline int gk_ref_attn_len_k(const GkAttnRef &r, int b) { return r.cu_k ? r.cu_k[b + 1] - r.cu_k[b] : r.p.seqlen_k; }

// Element offsets of (b, row, h, 0) in q (and out), k, v: varlen rows are packed tokens from
// cu_seqlens[b], batch strides unused.
inline int64_t gk_ref_attn_q_off(const GkAttnRef &r, int b, int64_t i, int h, int64_t bs, int64_t rs, int64_t hs)
{
    return r.cu_q ? (r.cu_q[b] + i) * rs + h * hs : b * bs + i * rs + h * hs;
}
inline int64_t gk_ref_attn_k_off(const GkAttnRef &r, int b, int64_t j, int hk, int64_t bs, int64_t rs, int64_t hs)
{
    return r.cu_k ? (r.cu_k[b] + j) * rs + hk * hs : b * bs + j * rs + hk * hs;
}
inline int64_t gk_ref_attn_out_off(const GkAttnRef &r, int b, int64_t i, int h)
{
    return gk_ref_attn_q_off(r, b, i, h, r.p.out_batch_stride, r.p.out_row_stride, r.p.out_head_stride);
}
// lse: [B, Hq, Sq] (Sq = seqlen_q), or [total_q, Hq] token-major with varlen.
inline int64_t gk_ref_attn_lse_off(const GkAttnRef &r, int b, int64_t i, int h)
{
    return r.cu_q ? (r.cu_q[b] + i) * r.p.heads_q + h : ((int64_t)b * r.p.heads_q + h) * r.p.seqlen_q + i;
}

// One output row: out[0 .. D) and *lse for query row i of sequence b, head h.
inline void gk_ref_attention_row(const GkAttnRef &r, int b, int64_t i, int h, double *out, double *lse)
{
    const gk_attention_params &p = r.p;
    const int D = p.head_dim, hk = h / (p.heads_q / p.heads_kv);
    const int64_t sq = gk_ref_attn_len_q(r, b), sk = gk_ref_attn_len_k(r, b);
    const double scale = gk_ref_attn_scale(p), cap = p.softcap;
    const float *qi = r.q + gk_ref_attn_q_off(r, b, i, h, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
    std::vector<double> s;
    std::vector<int64_t> keys;
    bool nan = false;
    for (int64_t j = 0; j < sk; j++) {
        if (!gk_ref_attn_visible(p, i, j, sq, sk)) continue;
        const float *kj = r.k + gk_ref_attn_k_off(r, b, j, hk, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
        double dot = 0;
        for (int d = 0; d < D; d++) dot += (double)qi[d] * (double)kj[d];
        double x = scale * dot;
        if (cap > 0) x = cap * std::tanh(x / cap);
        nan = nan || std::isnan(x);
        s.push_back(x);
        keys.push_back(j);
    }
    if (nan) {
        for (int d = 0; d < D; d++) out[d] = NAN;
        *lse = NAN;
        return;
    }
    if (keys.empty()) {
        for (int d = 0; d < D; d++) out[d] = 0.0;
        *lse = -INFINITY;
        return;
    }
    double m = -INFINITY;
    for (double x : s) m = x > m ? x : m;
    double sum = 0;
    for (int d = 0; d < D; d++) out[d] = 0.0;
    for (size_t n = 0; n < keys.size(); n++) {
        const double w = std::exp(s[n] - m);
        sum += w;
        const float *vj = r.v + gk_ref_attn_k_off(r, b, keys[n], hk, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
        for (int d = 0; d < D; d++) out[d] += w * (double)vj[d];
    }
    for (int d = 0; d < D; d++) out[d] /= sum;
    *lse = m + std::log(sum);
}

#endif // GK_ATTENTION_REF_H
