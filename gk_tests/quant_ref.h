// CPU references for gk_quant.cuh (W4A16), written from the header's manual, not from its code:
// the int4 nibble helpers, the GPTQ, AWQ and canonical packings (and their unpackings), the
// prepacked form byte for byte (from the manual's description and the mma.m16n8k16 A-fragment
// table of the PTX ISA), the dequantized weight in double, the exact value gk_w4_dequant stores,
// and the GEMM with gk_gemm's epilogue. Rounding to bf16 / f16 is gk_rne.h's integer rounding
// (round to nearest, ties to even), never gk_core's or CUDA's conversions. Plain C++, host only.
//
//   W[n][k] = (u - z) s     u the code of (n, k) read as unsigned 0..15, s the scale of (k / G, n)
//                           rounded to the activations' dtype (s_d), z = 8 (GK_W4_SYMMETRIC) or the
//                           4-bit zero point of (k / G, n) (GK_W4_ZEROS_INT4)
//   W[n][k] = u s_d + zneg  GK_W4_ZEROS_FLOAT: z a value of the scale dtype, zneg = the fp32 product
//                           -(z s_d) rounded to the activations' dtype
//   D = act(alpha X W^T + beta C + bias)
#ifndef GK_QUANT_REF_H
#define GK_QUANT_REF_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gk/gk_quant.cuh"
#include "gk_tests/gk_rne.h"

// ------------------------------------------------------------------ scalars

// The rounding format of a 16-bit dtype (GK_BF16 or GK_F16).
inline GkRneFormat gk_qref_fmt(int dt) { return dt == GK_F16 ? kGkRneF16 : kGkRneBf16; }

// Bits of v stored as dt (GK_F32: the float's bits; bf16 / f16: rounded to nearest even).
inline uint32_t gk_qref_encode(float v, int dt)
{
    return dt == GK_F32 ? gk_rne_bits(v) : gk_rne_from_f32(gk_rne_bits(v), gk_qref_fmt(dt));
}

// The value of bits stored as dt.
inline float gk_qref_decode(uint32_t bits, int dt)
{
    return dt == GK_F32 ? gk_rne_float(bits) : gk_rne_float(gk_rne_to_f32(bits, gk_qref_fmt(dt)));
}

// v (an fp32 value) rounded to dt, as a float.
inline float gk_qref_round(float v, int dt) { return gk_qref_decode(gk_qref_encode(v, dt), dt); }

// Bytes of one element of dt.
inline int gk_qref_size(int dt) { return dt == GK_F32 ? 4 : 2; }

// ------------------------------------------------------------------ int4 nibbles

// Nibble i of a byte array (element 2 j in the low nibble of byte j, 2 j + 1 in the high one).
inline unsigned gk_qref_nib(const uint8_t *b, int64_t i) { return (b[i >> 1] >> ((i & 1) * 4)) & 15u; }
inline void gk_qref_set_nib(uint8_t *b, int64_t i, unsigned v)
{
    const int sh = (int)(i & 1) * 4;
    b[i >> 1] = (uint8_t)((b[i >> 1] & ~(15u << sh)) | ((v & 15u) << sh));
}
// A nibble read as signed int4 (two's complement, -8..7), and an int -8..7 as a nibble.
inline int gk_qref_s4(unsigned nib) { return nib >= 8 ? (int)nib - 16 : (int)nib; }
inline unsigned gk_qref_to_nib(int v) { return (unsigned)v & 15u; }

// Nibble e (bits 4 e) of a 32-bit word.
inline unsigned gk_qref_word_nib(uint32_t w, int e) { return (w >> (4 * e)) & 15u; }

// AWQ's order: nibble e of a word holds column 8 j + kGkQrefAwqOrder[e].
static const int kGkQrefAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// ------------------------------------------------------------------ the problem

// A quantized weight as the tests build it: codes, zero points and scales in plain arrays.
struct GkQRefWeight {
    int64_t n = 0, k = 0;
    int group = 0;
    int zero_mode = GK_W4_SYMMETRIC;
    int dtype = GK_BF16;       // the activations' dtype (what the prepack converts the scales to)
    int scale_dtype = GK_BF16; // of the scales and float zero points as given to the prepack
    std::vector<uint8_t> u;       // [n][k], 0..15
    std::vector<uint8_t> zi;      // [k / group][n], 0..15 (GK_W4_ZEROS_INT4)
    std::vector<uint32_t> s_bits; // [k / group][n], bits of scale_dtype
    std::vector<uint32_t> z_bits; // [k / group][n], bits of scale_dtype (GK_W4_ZEROS_FLOAT)

    int64_t groups() const { return k / group; }
    unsigned code(int64_t row, int64_t kk) const { return u[(size_t)(row * k + kk)]; }
    // The scale of (group g, row) as the kernel holds it: rounded to the activations' dtype.
    float scale_d(int64_t g, int64_t row) const
    {
        return gk_qref_round(gk_qref_decode(s_bits[(size_t)(g * n + row)], scale_dtype), dtype);
    }
    // The 4-bit zero point (8 when symmetric).
    unsigned zero_int(int64_t g, int64_t row) const
    {
        return zero_mode == GK_W4_ZEROS_INT4 ? zi[(size_t)(g * n + row)] : 8u;
    }
    float zero_float(int64_t g, int64_t row) const { return gk_qref_decode(z_bits[(size_t)(g * n + row)], scale_dtype); }
    // -(z s_d): the fp32 product, rounded once to the activations' dtype.
    float zneg(int64_t g, int64_t row) const
    {
        const float p = zero_float(g, row) * scale_d(g, row);
        return gk_qref_round(-p, dtype);
    }
};

// ------------------------------------------------------------------ canonical form

// The canonical q: [n][k / 2] bytes, k even in the low nibble. Symmetric: the signed nibble
// u - 8 (two's complement); the zero-point modes: u itself.
inline std::vector<uint8_t> gk_qref_canonical_q(const std::vector<uint8_t> &u, int64_t n, int64_t k, int symmetric)
{
    std::vector<uint8_t> q((size_t)(n * k / 2), 0);
    for (int64_t r = 0; r < n; r++)
        for (int64_t kk = 0; kk < k; kk++) {
            const unsigned v = u[(size_t)(r * k + kk)];
            gk_qref_set_nib(q.data(), r * k + kk, symmetric ? gk_qref_to_nib((int)v - 8) : v);
        }
    return q;
}

// Back: the unsigned codes of a canonical q.
inline std::vector<uint8_t> gk_qref_canonical_q_unpack(const std::vector<uint8_t> &q, int64_t n, int64_t k,
                                                       int symmetric)
{
    std::vector<uint8_t> u((size_t)(n * k));
    for (int64_t i = 0; i < n * k; i++) {
        const unsigned nib = gk_qref_nib(q.data(), i);
        u[(size_t)i] = (uint8_t)(symmetric ? gk_qref_s4(nib) + 8 : (int)nib);
    }
    return u;
}

// The canonical 4-bit zero points: [groups][n / 2] bytes, n even in the low nibble.
inline std::vector<uint8_t> gk_qref_canonical_zeros(const std::vector<uint8_t> &z, int64_t groups, int64_t n)
{
    std::vector<uint8_t> out((size_t)(groups * n / 2), 0);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t c = 0; c < n; c++) gk_qref_set_nib(out.data(), g * n + c, z[(size_t)(g * n + c)]);
    return out;
}

inline std::vector<uint8_t> gk_qref_canonical_zeros_unpack(const std::vector<uint8_t> &zb, int64_t groups, int64_t n)
{
    std::vector<uint8_t> z((size_t)(groups * n));
    for (int64_t i = 0; i < groups * n; i++) z[(size_t)i] = (uint8_t)gk_qref_nib(zb.data(), i);
    return z;
}

// Values of dt bits as the bytes a device buffer holds (little endian).
inline std::vector<uint8_t> gk_qref_bytes_of(const std::vector<uint32_t> &bits, int dt)
{
    const int es = gk_qref_size(dt);
    std::vector<uint8_t> out(bits.size() * es);
    for (size_t i = 0; i < bits.size(); i++)
        for (int b = 0; b < es; b++) out[i * es + b] = (uint8_t)(bits[i] >> (8 * b));
    return out;
}

// ------------------------------------------------------------------ GPTQ

// GPTQ's qweight int32 [k / 8][n]: k = 8 i + e in bits 4 e of row i. u is [n][k].
inline std::vector<int32_t> gk_qref_gptq_qweight(const std::vector<uint8_t> &u, int64_t n, int64_t k)
{
    std::vector<int32_t> qw((size_t)(k / 8 * n), 0);
    for (int64_t i = 0; i < k / 8; i++)
        for (int64_t c = 0; c < n; c++) {
            uint32_t w = 0;
            for (int e = 0; e < 8; e++) w |= (uint32_t)(u[(size_t)(c * k + 8 * i + e)] & 15u) << (4 * e);
            qw[(size_t)(i * n + c)] = (int32_t)w;
        }
    return qw;
}

inline std::vector<uint8_t> gk_qref_gptq_qweight_unpack(const std::vector<int32_t> &qw, int64_t n, int64_t k)
{
    std::vector<uint8_t> u((size_t)(n * k));
    for (int64_t c = 0; c < n; c++)
        for (int64_t kk = 0; kk < k; kk++)
            u[(size_t)(c * k + kk)] = (uint8_t)gk_qref_word_nib((uint32_t)qw[(size_t)(kk / 8 * n + c)], (int)(kk % 8));
    return u;
}

// GPTQ's qzeros int32 [groups][n / 8]: n = 8 j + e in bits 4 e, storing (z - zero_offset) mod 16.
inline std::vector<int32_t> gk_qref_gptq_qzeros(const std::vector<uint8_t> &z, int64_t groups, int64_t n,
                                                int zero_offset)
{
    std::vector<int32_t> qz((size_t)(groups * n / 8), 0);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t j = 0; j < n / 8; j++) {
            uint32_t w = 0;
            for (int e = 0; e < 8; e++)
                w |= (uint32_t)(((int)z[(size_t)(g * n + 8 * j + e)] - zero_offset) & 15) << (4 * e);
            qz[(size_t)(g * n / 8 + j)] = (int32_t)w;
        }
    return qz;
}

inline std::vector<uint8_t> gk_qref_gptq_qzeros_unpack(const std::vector<int32_t> &qz, int64_t groups, int64_t n,
                                                       int zero_offset)
{
    std::vector<uint8_t> z((size_t)(groups * n));
    for (int64_t g = 0; g < groups; g++)
        for (int64_t c = 0; c < n; c++)
            z[(size_t)(g * n + c)] =
                (uint8_t)((gk_qref_word_nib((uint32_t)qz[(size_t)(g * n / 8 + c / 8)], (int)(c % 8)) + zero_offset) & 15);
    return z;
}

// ------------------------------------------------------------------ AWQ

// AWQ's qweight int32 [k][n / 8]: nibble e of word (kk, j) holds column 8 j + order[e]. u is [n][k].
inline std::vector<int32_t> gk_qref_awq_qweight(const std::vector<uint8_t> &u, int64_t n, int64_t k)
{
    std::vector<int32_t> qw((size_t)(k * n / 8), 0);
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n / 8; j++) {
            uint32_t w = 0;
            for (int e = 0; e < 8; e++) w |= (uint32_t)(u[(size_t)((8 * j + kGkQrefAwqOrder[e]) * k + kk)] & 15u) << (4 * e);
            qw[(size_t)(kk * n / 8 + j)] = (int32_t)w;
        }
    return qw;
}

inline std::vector<uint8_t> gk_qref_awq_qweight_unpack(const std::vector<int32_t> &qw, int64_t n, int64_t k)
{
    std::vector<uint8_t> u((size_t)(n * k));
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n / 8; j++)
            for (int e = 0; e < 8; e++)
                u[(size_t)((8 * j + kGkQrefAwqOrder[e]) * k + kk)] =
                    (uint8_t)gk_qref_word_nib((uint32_t)qw[(size_t)(kk * n / 8 + j)], e);
    return u;
}

// AWQ's qzeros int32 [groups][n / 8], the same order, no offset.
inline std::vector<int32_t> gk_qref_awq_qzeros(const std::vector<uint8_t> &z, int64_t groups, int64_t n)
{
    std::vector<int32_t> qz((size_t)(groups * n / 8), 0);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t j = 0; j < n / 8; j++) {
            uint32_t w = 0;
            for (int e = 0; e < 8; e++) w |= (uint32_t)(z[(size_t)(g * n + 8 * j + kGkQrefAwqOrder[e])] & 15u) << (4 * e);
            qz[(size_t)(g * n / 8 + j)] = (int32_t)w;
        }
    return qz;
}

inline std::vector<uint8_t> gk_qref_awq_qzeros_unpack(const std::vector<int32_t> &qz, int64_t groups, int64_t n)
{
    std::vector<uint8_t> z((size_t)(groups * n));
    for (int64_t g = 0; g < groups; g++)
        for (int64_t j = 0; j < n / 8; j++)
            for (int e = 0; e < 8; e++)
                z[(size_t)(g * n + 8 * j + kGkQrefAwqOrder[e])] =
                    (uint8_t)gk_qref_word_nib((uint32_t)qz[(size_t)(g * n / 8 + j)], e);
    return z;
}

// ------------------------------------------------------------------ dequantization

// W[row][kk] in double, from the rounded scale (and zero point) the kernel holds.
inline double gk_qref_weight(const GkQRefWeight &w, int64_t row, int64_t kk)
{
    const int64_t g = kk / w.group;
    const double u = w.code(row, kk), s = w.scale_d(g, row);
    if (w.zero_mode == GK_W4_ZEROS_FLOAT) return u * s + (double)w.zneg(g, row);
    return (u - (double)w.zero_int(g, row)) * s;
}

// The value gk_w4_dequant stores for (row, kk): the fp32 result rounded once to the dtype.
//   symmetric, 4-bit zero points: (u - z) s_d in fp32;  float zero points: fmaf(u, s_d, zneg).
inline float gk_qref_dequant_value(const GkQRefWeight &w, int64_t row, int64_t kk)
{
    const int64_t g = kk / w.group;
    const float u = (float)w.code(row, kk), s = w.scale_d(g, row);
    float v;
    if (w.zero_mode == GK_W4_ZEROS_FLOAT) v = std::fma(u, s, w.zneg(g, row));
    else v = (u - (float)w.zero_int(g, row)) * s;
    return gk_qref_round(v, w.dtype);
}

inline uint32_t gk_qref_dequant_bits(const GkQRefWeight &w, int64_t row, int64_t kk)
{
    return gk_qref_encode(gk_qref_dequant_value(w, row, kk), w.dtype);
}

// The same, with each (group, row)'s rounded scale, zero point and zneg worked out once (the GPU
// tests dequantize millions of values): weight() and dequant_bits() give what gk_qref_weight and
// gk_qref_dequant_bits give.
struct GkQRefTable {
    const GkQRefWeight *w = nullptr;
    std::vector<float> s_d, zneg;
    std::vector<float> z; // the 4-bit zero point (8 when symmetric) as a float
    explicit GkQRefTable(const GkQRefWeight &weight) : w(&weight)
    {
        const size_t count = (size_t)(weight.groups() * weight.n);
        s_d.resize(count);
        zneg.resize(count);
        z.resize(count);
        for (int64_t g = 0; g < weight.groups(); g++)
            for (int64_t r = 0; r < weight.n; r++) {
                const size_t i = (size_t)(g * weight.n + r);
                s_d[i] = weight.scale_d(g, r);
                zneg[i] = weight.zero_mode == GK_W4_ZEROS_FLOAT ? weight.zneg(g, r) : 0.0f;
                z[i] = (float)weight.zero_int(g, r);
            }
    }
    double weight(int64_t row, int64_t kk) const
    {
        const size_t i = (size_t)(kk / w->group * w->n + row);
        const double u = w->code(row, kk);
        if (w->zero_mode == GK_W4_ZEROS_FLOAT) return u * (double)s_d[i] + (double)zneg[i];
        return (u - (double)z[i]) * (double)s_d[i];
    }
    uint32_t dequant_bits(int64_t row, int64_t kk) const
    {
        const size_t i = (size_t)(kk / w->group * w->n + row);
        const float u = (float)w->code(row, kk);
        const float v = w->zero_mode == GK_W4_ZEROS_FLOAT ? std::fma(u, s_d[i], zneg[i]) : (u - z[i]) * s_d[i];
        return gk_qref_encode(v, w->dtype);
    }
};

// ------------------------------------------------------------------ the prepacked form

// The manual's sizes: codes in 16-row tiles (16 ceil(N / 16) rows of K / 2 bytes), then one part of
// scale records (2 bytes a tile row and group) rounded up to 256 bytes, twice with zero points.
inline int64_t gk_qref_tiles(int64_t n) { return (n + 15) / 16; }
inline int64_t gk_qref_codes_bytes(int64_t n, int64_t k) { return gk_qref_tiles(n) * 16 * k / 2; }
inline int64_t gk_qref_records_bytes(int64_t n, int64_t k, int group)
{
    const int64_t b = gk_qref_tiles(n) * (k / group) * 16 * 2;
    return (b + 255) / 256 * 256;
}
inline int64_t gk_qref_packed_bytes(int64_t n, int64_t k, int group, int zero_mode)
{
    return gk_qref_codes_bytes(n, k) + gk_qref_records_bytes(n, k, group) * (zero_mode == GK_W4_SYMMETRIC ? 1 : 2);
}

// Where the prepacked form keeps code (row, kk) of a tile's 64-k unit, from the manual and the
// m16n8k16 A fragment (PTX ISA: groupID = lane / 4, t = lane % 4; a0, a1 row groupID, columns
// 2t, 2t + 1; a2, a3 row groupID + 8; a4..a7 the same at columns + 8; register r holds values 2r,
// 2r + 1, low half first). The unit's k order is permuted: lane t's columns 2t, 2t + 1, 2t + 8,
// 2t + 9 of step s are the unit's k 32 (s / 2) + 8 t + 4 (s % 2) + 0..3 (steps 0-1 hold k 0-31,
// steps 2-3 k 32-63). So (row, kk) sits in lane 4 (row % 8) + t (t = (kk % 32) / 8), word
// s = 2 (kk / 32) + (kk % 8) / 4, nibbles (e, e + 4) the two halves of register e, and is
// multiplied as MMA column *mma_col of step s.
inline void gk_qref_code_pos(int row, int kk, int *lane, int *word, int *nibble, int *mma_col)
{
    const int t = (kk % 32) / 8, s = 2 * (kk / 32) + (kk % 8) / 4, q = kk % 4;
    const int col = 2 * t + (q % 2) + 8 * (q / 2);                      // the fragment column
    const int value = (col % 2) + (row >= 8 ? 2 : 0) + (col >= 8 ? 4 : 0); // a0..a7
    const int reg = value / 2, half = value % 2;
    *lane = 4 * (row % 8) + t;
    *word = s;
    *nibble = reg + 4 * half;
    *mma_col = col;
}

// The unit's k that step s's MMA column col stands for (the inverse, on the X side: lane t of the
// B fragment loads the token's k 8 t .. 8 t + 7 and 32 + 8 t .. 32 + 8 t + 7 of the unit, word
// 2 s + h being register h of step s).
inline int gk_qref_k_of(int step, int col)
{
    return 32 * (step / 2) + 8 * ((col % 8) / 2) + 4 * (step % 2) + 2 * (col / 8) + col % 2;
}

// The prepacked form, byte for byte, with a mask of the bytes the manual defines (the records of
// rows past N and the padding to 256 bytes are not): codes (unsigned u; rows past N zero), then
// the scale records [tile][group][i][row i, row i + 8] as the dtype's bits, then for the
// zero-point modes the same records of 128 + z (bf16) / 1024 + z (f16), or of zneg.
inline void gk_qref_prepack(const GkQRefWeight &w, std::vector<uint8_t> *bytes, std::vector<uint8_t> *defined)
{
    const int64_t n = w.n, k = w.k, tiles = gk_qref_tiles(n), units = k / 64, groups = w.groups();
    const int64_t cb = gk_qref_codes_bytes(n, k), rb = gk_qref_records_bytes(n, k, w.group);
    bytes->assign((size_t)gk_qref_packed_bytes(n, k, w.group, w.zero_mode), 0);
    defined->assign(bytes->size(), 0);
    uint8_t *p = bytes->data(), *d = defined->data();
    for (int64_t c = 0; c < cb; c++) d[c] = 1;
    for (int64_t rt = 0; rt < tiles; rt++)
        for (int64_t un = 0; un < units; un++)
            for (int r = 0; r < 16; r++)
                for (int kk = 0; kk < 64; kk++) {
                    const int64_t row = rt * 16 + r;
                    if (row >= n) continue; // zeros
                    int lane, word, nib, col;
                    gk_qref_code_pos(r, kk, &lane, &word, &nib, &col);
                    const int64_t off = ((rt * units + un) * 32 + lane) * 16 + word * 4;
                    uint32_t v;
                    memcpy(&v, p + off, 4);
                    v |= (uint32_t)w.code(row, un * 64 + kk) << (4 * nib);
                    memcpy(p + off, &v, 4);
                }
    const int parts = w.zero_mode == GK_W4_SYMMETRIC ? 1 : 2;
    for (int part = 0; part < parts; part++)
        for (int64_t rt = 0; rt < tiles; rt++)
            for (int64_t g = 0; g < groups; g++)
                for (int i = 0; i < 8; i++)
                    for (int h = 0; h < 2; h++) {
                        const int64_t row = rt * 16 + i + 8 * h;
                        if (row >= n) continue;
                        float v;
                        if (part == 0) v = w.scale_d(g, row);
                        else if (w.zero_mode == GK_W4_ZEROS_INT4) v = (w.dtype == GK_BF16 ? 128.0f : 1024.0f) + (float)w.zero_int(g, row);
                        else v = w.zneg(g, row);
                        const uint32_t b = gk_qref_encode(v, w.dtype);
                        const int64_t off = cb + part * rb + ((rt * groups + g) * 16 + i * 2 + h) * 2;
                        p[off] = (uint8_t)b;
                        p[off + 1] = (uint8_t)(b >> 8);
                        d[off] = d[off + 1] = 1;
                    }
}

// ------------------------------------------------------------------ GEMM

inline double gk_qref_act(int act, double v)
{
    switch (act) {
    case GK_ACT_RELU: return v > 0 ? v : 0.0;
    case GK_ACT_GELU: return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case GK_ACT_SILU: return v / (1.0 + std::exp(-v));
    default: return v;
    }
}

// One output of D = act(alpha X W^T + beta C + bias): x the token's K values, wrow W's row (double,
// K values), c the C value (read only when beta != 0), bias the bias value (0 when none). *sabs gets
// sum_k |x_k w_k| (for the accumulation bound) and *pre the value before the activation.
inline double gk_qref_gemm_one(const float *x, const double *wrow, int64_t k, double alpha, double beta, double c,
                               double bias, int act, double *sabs, double *pre)
{
    double dot = 0, s = 0;
    for (int64_t kk = 0; kk < k; kk++) {
        const double p = (double)x[kk] * wrow[kk];
        dot += p;
        s += std::fabs(p);
    }
    const double v = alpha * dot + (beta != 0 ? beta * c : 0.0) + bias;
    if (sabs) *sabs = s;
    if (pre) *pre = v;
    return gk_qref_act(act, v);
}

#endif // GK_QUANT_REF_H
