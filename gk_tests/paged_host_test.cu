// Host tests of gk_paged.cuh: gk_rope_freq against the Llama-3.1 formula written out again
// (paged_ref.h), the reference's rotation against the rotation's algebra, gk_paged_kv_dense's and
// gk_rope_default's fields, the ledger, and argument validation of the RoPE + append launchers;
// for decode attention, the paged reference against naive dense attention on a contiguous copy of
// the cache, the split-K combine algebra over the reference's partials, the params, plan, configs
// and ledger, and argument validation of every decode entry point (validation runs before any
// CUDA call, so these pass on a machine without a GPU).
//
// GK_PAGED_IMPLEMENTATION, not GK_IMPLEMENTATION: gk_paged.cuh includes gk_attention.cuh, whose
// kernels this file does not need (gk_attn_merge is in its header part).
#define GK_CORE_IMPLEMENTATION
#define GK_PAGED_IMPLEMENTATION
#include "gk/gk_paged.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/paged_ref.h"
#include "gk_tests/attention_ref.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

// ------------------------------------------------------------------ frequencies

struct Llama31 {
    float factor, low, high;
    int old;
};

// gk_rope_freq against gk_ref_rope_freq for every pair of many (theta, rotary_dim), without and with
// Llama-3.1 scaling, within a few ulps.
TEST(PagedRopeFreq, MatchesIndependentFormula)
{
    const Llama31 scalings[] = {{0, 0, 0, 0}, {8, 1, 4, 8192}, {32, 1, 4, 8192}, {4, 1, 4, 4096}, {16, 2, 8, 32768},
                                {8, 1, 2, 8192}};
    int n = 0;
    for (double theta : {10000.0, 500000.0, 1000000.0, 50000.0, 1.5, 1e9})
        for (int rot : {8, 16, 24, 32, 64, 96, 128, 256})
            for (const Llama31 &s : scalings) {
                gk_rope r = gk_rope_default(rot, (float)theta);
                r.factor = s.factor;
                r.low_freq_factor = s.low;
                r.high_freq_factor = s.high;
                r.original_max_position = s.old;
                for (int j = 0; j < rot / 2; j++) {
                    const double got = gk_rope_freq(&r, j), want = (double)gk_ref_rope_freq(r, j);
                    ASSERT_NEAR(got, want, 1e-14 * want) << "theta " << theta << " rotary_dim " << rot << " pair " << j
                                                          << " factor " << s.factor << " (" << s.low << ", " << s.high
                                                          << ", " << s.old << ")";
                    n++;
                }
            }
    EXPECT_GT(n, 10000);
}

// Llama 3.1 (theta 500000, 128 dims, factor 8, 1, 4, 8192): pairs in all three bands; the high
// frequencies unchanged, the low ones divided by 8, the band between strictly in between and
// falling with j; pair 0 is 1.
TEST(PagedRopeFreq, Llama31Bands)
{
    gk_rope r = gk_rope_default(128, 500000.0f);
    r.factor = 8;
    r.low_freq_factor = 1;
    r.high_freq_factor = 4;
    r.original_max_position = 8192;
    const double two_pi = 6.283185307179586476925;
    int kept = 0, divided = 0, blended = 0;
    double prev = 2.0;
    for (int j = 0; j < 64; j++) {
        const double f = std::pow(500000.0, -2.0 * j / 128), wavelen = two_pi / f, got = gk_rope_freq(&r, j);
        EXPECT_LT(got, prev) << "pair " << j << ": the frequencies fall with j";
        prev = got;
        if (wavelen < 8192.0 / 4) {
            kept++;
            EXPECT_NEAR(got, f, 1e-15 * f) << j;
        } else if (wavelen > 8192.0) {
            divided++;
            EXPECT_NEAR(got, f / 8, 1e-15 * f) << j;
        } else {
            blended++;
            EXPECT_GT(got, f / 8) << j;
            EXPECT_LT(got, f) << j;
        }
    }
    EXPECT_EQ(gk_rope_freq(&r, 0), 1.0);
    EXPECT_GT(kept, 0);
    EXPECT_GT(divided, 0);
    EXPECT_GT(blended, 0);
    // factor 0 (gk_rope_default): no scaling, the other fields unread
    r.factor = 0;
    r.low_freq_factor = r.high_freq_factor = -1;
    for (int j = 0; j < 64; j++) EXPECT_NEAR(gk_rope_freq(&r, j), std::pow(500000.0, -2.0 * j / 128), 1e-16) << j;
}

// The reference's rotation: position 0 (and a table of cos 1, sin 0) is the identity; each pair
// keeps its norm; NeoX and GPT-J pair the dims the manual says; the dims past rotary_dim pass.
TEST(PagedRef, RotationAlgebra)
{
    GkRng rng(7);
    for (int style : {GK_ROPE_NEOX, GK_ROPE_GPTJ})
        for (int rot : {0, 16, 32, 64}) {
            const int D = 64;
            gk_rope r = gk_rope_default(rot, 10000.0f);
            r.style = style;
            std::vector<float> x(D);
            for (float &e : x) e = rng.uniform(-2, 2);
            std::vector<double> y(D), eta(D);
            gk_ref_rope_row(r, nullptr, 0, x.data(), D, y.data(), eta.data());
            for (int d = 0; d < D; d++) EXPECT_EQ(y[d], (double)x[d]) << "position 0, dim " << d;
            for (int64_t pos : {(int64_t)1, (int64_t)777, ((int64_t)1 << 33) + 5}) {
                gk_ref_rope_row(r, nullptr, pos, x.data(), D, y.data(), eta.data());
                for (int j = 0; j < rot / 2; j++) {
                    const int i1 = style == GK_ROPE_NEOX ? j : 2 * j, i2 = style == GK_ROPE_NEOX ? j + rot / 2 : 2 * j + 1;
                    EXPECT_NEAR(y[i1] * y[i1] + y[i2] * y[i2], (double)x[i1] * x[i1] + (double)x[i2] * x[i2], 1e-12);
                    // pair 0 turns by the position itself (frequency 1)
                    if (j == 0) {
                        const double a = std::fmod((double)pos, 6.283185307179586476925);
                        EXPECT_NEAR(y[i1], x[i1] * std::cos(a) - x[i2] * std::sin(a), 1e-6);
                        EXPECT_NEAR(y[i2], x[i2] * std::cos(a) + x[i1] * std::sin(a), 1e-6);
                    }
                }
                for (int d = rot; d < D; d++) EXPECT_EQ(y[d], (double)x[d]) << "past rotary_dim";
            }
            // a table of cos 1, sin 0 at row 3
            std::vector<float> table(4 * (rot ? rot : 1), 0.0f);
            for (int j = 0; j < rot / 2; j++) table[3 * rot + j] = 1.0f;
            gk_ref_rope_row(r, table.data(), 3, x.data(), D, y.data(), eta.data());
            for (int d = 0; d < D; d++) EXPECT_EQ(y[d], (double)x[d]);
        }
}

// gk_ref_paged_accept: the roundings either side of want +- eta, NaN never.
TEST(PagedRef, Accept)
{
    // bf16 1 + 2^-7 is the next value after 1; 1 + 2^-8 is the tie between them (to even: 1)
    EXPECT_TRUE(gk_ref_paged_accept(0x3f80, kGkRneBf16, 1.0, 0.0));
    EXPECT_FALSE(gk_ref_paged_accept(0x3f81, kGkRneBf16, 1.0, 0.0));
    EXPECT_TRUE(gk_ref_paged_accept(0x3f80, kGkRneBf16, 1.0 + 0x1p-8, 0.0));
    EXPECT_FALSE(gk_ref_paged_accept(0x3f81, kGkRneBf16, 1.0 + 0x1p-8, 0.0));
    EXPECT_TRUE(gk_ref_paged_accept(0x3f81, kGkRneBf16, 1.0 + 0x1p-8, 1e-6));
    EXPECT_TRUE(gk_ref_paged_accept(0x3f80, kGkRneBf16, 1.0 + 0x1p-8, 1e-6));
    EXPECT_FALSE(gk_ref_paged_accept(0x7fc0, kGkRneBf16, 1.0, 1.0));
    // e4m3: 500 saturates to 448 (0x7e); 0x7f is NaN
    EXPECT_TRUE(gk_ref_paged_accept(0x7e, kGkRneE4m3, 500.0, 0.0));
    EXPECT_TRUE(gk_ref_paged_accept(0xfe, kGkRneE4m3, -1e6, 0.0));
    EXPECT_FALSE(gk_ref_paged_accept(0x7f, kGkRneE4m3, 500.0, 0.0));
    // e4m3 near 1: 1 (0x38), 1.125 (0x39)
    EXPECT_TRUE(gk_ref_paged_accept(0x38, kGkRneE4m3, 1.05, 1e-6));
    EXPECT_FALSE(gk_ref_paged_accept(0x39, kGkRneE4m3, 1.05, 1e-6));
    EXPECT_TRUE(gk_ref_paged_accept(0x39, kGkRneE4m3, 1.0625, 1e-6));
}

// ------------------------------------------------------------------ structs and ledger

TEST(PagedStructs, DenseAndDefault)
{
    void *k = (void *)0x1000, *v = (void *)0x2000;
    for (int dt : {GK_BF16, GK_F16, GK_E4M3}) {
        const gk_paged_kv c = gk_paged_kv_dense(k, v, dt, 1000, 16, 8, 128);
        EXPECT_EQ(c.k_cache, k);
        EXPECT_EQ(c.v_cache, v);
        EXPECT_EQ(c.dtype, dt);
        EXPECT_EQ(c.num_blocks, 1000);
        EXPECT_EQ(c.block_size, 16);
        EXPECT_EQ(c.heads_kv, 8);
        EXPECT_EQ(c.head_dim, 128);
        EXPECT_EQ(c.k_head_stride, 128);
        EXPECT_EQ(c.k_slot_stride, 8 * 128);
        EXPECT_EQ(c.k_block_stride, 16 * 8 * 128);
        EXPECT_EQ(c.v_head_stride, 128);
        EXPECT_EQ(c.v_slot_stride, 8 * 128);
        EXPECT_EQ(c.v_block_stride, 16 * 8 * 128);
        EXPECT_EQ(c.k_scale, 1.0f);
        EXPECT_EQ(c.v_scale, 1.0f);
    }
    // 64-bit strides: a block past 2^31 elements
    const gk_paged_kv big = gk_paged_kv_dense(k, v, GK_BF16, 4, 256, 64 * 1024, 256);
    EXPECT_EQ(big.k_block_stride, (int64_t)256 * 64 * 1024 * 256);
    const gk_rope r = gk_rope_default(64, 500000.0f);
    EXPECT_EQ(r.style, GK_ROPE_NEOX);
    EXPECT_EQ(r.rotary_dim, 64);
    EXPECT_EQ(r.theta, 500000.0f);
    EXPECT_EQ(r.cos_sin, nullptr);
    EXPECT_EQ(r.max_position, 0);
    EXPECT_EQ(r.factor, 0.0f);
    EXPECT_EQ(r.low_freq_factor, 0.0f);
    EXPECT_EQ(r.high_freq_factor, 0.0f);
    EXPECT_EQ(r.original_max_position, 0);
}

TEST(PagedLedger, Bytes)
{
    gk_rope_append_params p;
    memset(&p, 0, sizeof p);
    p.tokens = 37;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim = 128;
    for (int dt : {GK_BF16, GK_F16})
        for (int cdt : {dt, (int)GK_E4M3})
            for (int i64 : {0, 1}) {
                p.positions_int64 = i64;
                const gk_ledger l = gk_rope_append_ledger(&p, dt, cdt);
                const double cs = cdt == GK_E4M3 ? 1 : 2;
                // q read and written, k and v read (2 bytes), k and v written to the cache, positions, slots
                EXPECT_EQ(l.bytes, 37.0 * 128 * (2 * 32 * 2 + 2 * 8 * 2 + 2 * 8 * cs) + 37.0 * (i64 ? 8 : 4) + 37.0 * 8)
                    << gk_dtype_name(dt) << " cache " << gk_dtype_name(cdt) << " int64 " << i64;
                EXPECT_GE(l.flops, 0.0);
            }
    p.tokens = 0;
    EXPECT_EQ(gk_rope_append_ledger(&p, GK_BF16, GK_BF16).bytes, 0.0);
    const gk_ledger none = gk_rope_append_ledger(nullptr, GK_BF16, GK_BF16);
    EXPECT_EQ(none.bytes, 0.0);
    EXPECT_EQ(none.flops, 0.0);
}

// ------------------------------------------------------------------ validation

// Device-looking addresses, never dereferenced: every call below fails validation. A call that
// passed it would reach gk_sm_count and, on a GPU host, launch on these addresses; so an argument
// is shown accepted by giving the k and v caches one address, which the last check refuses
// ("'k_cache' and 'v_cache' overlap"): every other check ran and passed.
static char *const kFake = (char *)0x20000000;

struct RopeArgs {
    int dtype = GK_BF16;
    void *q_out = kFake;
    const void *q = kFake + (64 << 20), *k = kFake + (128 << 20), *v = kFake + (192 << 20);
    gk_rope_append_params p;
    gk_rope r;
    gk_paged_kv c;
    bool null_params = false, null_rope = false, null_cache = false;
    RopeArgs(int dt, int tokens = 5, int hq = 8, int hkv = 2, int d = 128) : dtype(dt)
    {
        memset(&p, 0, sizeof p);
        p.tokens = tokens;
        p.heads_q = hq;
        p.heads_kv = hkv;
        p.head_dim = d;
        p.q_head_stride = p.q_out_head_stride = d;
        p.q_token_stride = p.q_out_token_stride = (int64_t)hq * d;
        p.k_head_stride = p.v_head_stride = d;
        p.k_token_stride = p.v_token_stride = (int64_t)hkv * d;
        p.positions = kFake + (256 << 20);
        p.slot_mapping = (const int64_t *)(kFake + (260 << 20));
        p.error_flag = (int *)(kFake + (264 << 20));
        r = gk_rope_default(d, 10000.0f);
        c = gk_paged_kv_dense(kFake + (320 << 20), kFake + (384 << 20), dt, 8, 16, hkv, d);
    }
};

static cudaError_t call(const RopeArgs &a)
{
    const gk_rope_append_params *p = a.null_params ? nullptr : &a.p;
    const gk_rope *r = a.null_rope ? nullptr : &a.r;
    const gk_paged_kv *c = a.null_cache ? nullptr : &a.c;
    if (a.dtype == GK_BF16)
        return gk_rope_append_bf16((gk_bf16 *)a.q_out, (const gk_bf16 *)a.q, (const gk_bf16 *)a.k,
                                   (const gk_bf16 *)a.v, p, r, c, 0);
    return gk_rope_append_f16((gk_f16 *)a.q_out, (const gk_f16 *)a.q, (const gk_f16 *)a.k, (const gk_f16 *)a.v, p, r,
                              c, 0);
}

class PagedValidation : public ::testing::TestWithParam<int> {
  protected:
    int dt() const { return GetParam(); }
    const char *fn() const { return dt() == GK_BF16 ? "gk_rope_append_bf16: " : "gk_rope_append_f16: "; }
    RopeArgs valid() const { return RopeArgs(dt()); }
    // The call fails with cudaErrorInvalidValue and a reason that starts with the public name and
    // holds `needle`.
    void rejected(const RopeArgs &a, const std::string &needle, const std::string &what)
    {
        EXPECT_EQ(call(a), cudaErrorInvalidValue) << fn() << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find(needle), std::string::npos) << fn() << what << ": reason was \"" << r << "\", want \""
                                                    << needle << "\"";
        EXPECT_EQ(r.rfind(fn(), 0), 0u) << what << ": reason was \"" << r << "\"";
    }
    // Every check passes: the call gets as far as the last one (the k and v caches on one address).
    void accepted(RopeArgs a, const std::string &what)
    {
        a.c.v_cache = a.c.k_cache;
        rejected(a, "'k_cache' and 'v_cache' overlap", what + " (accepted: only the sentinel overlap refused)");
    }
};

TEST_P(PagedValidation, ValidArgumentsPass)
{
    RopeArgs a = valid();
    accepted(a, "the valid arguments");
    a = valid(); a.p.error_flag = nullptr; accepted(a, "error_flag NULL");
    a = valid(); a.p.positions_int64 = 1; accepted(a, "int64 positions");
    a = valid(); a.r.style = GK_ROPE_GPTJ; accepted(a, "GPT-J");
    for (int rot : {0, 16, 32, 64, 112}) {
        a = valid(); a.r.rotary_dim = rot; accepted(a, "NeoX rotary_dim " + std::to_string(rot));
    }
    for (int rot : {8, 24, 40, 120}) {
        a = valid(); a.r.style = GK_ROPE_GPTJ; a.r.rotary_dim = rot; accepted(a, "GPT-J rotary_dim " + std::to_string(rot));
    }
    a = valid(); a.r.theta = 500000.0f; a.r.factor = 8; a.r.low_freq_factor = 1; a.r.high_freq_factor = 4;
    a.r.original_max_position = 8192; accepted(a, "Llama-3.1 scaling");
    // a table replaces theta: any theta then
    a = valid(); a.r.cos_sin = (const float *)(kFake + (448 << 20)); a.r.max_position = 4096; a.r.theta = 0.0f;
    accepted(a, "cos_sin table, theta 0");
    a.r.theta = -5.0f; accepted(a, "cos_sin table, theta -5");
    // an fp8 cache with scales; a 16-bit cache ignores them
    a = valid(); a.c.dtype = GK_E4M3; a.c.k_scale = 0.02f; a.c.v_scale = 3.0f; accepted(a, "e4m3 cache");
    a = valid(); a.c.k_scale = 0.0f; a.c.v_scale = -1.0f; accepted(a, "16-bit cache, scales 0 and -1 ignored");
    // head dims, block sizes, GQA shapes
    for (int d : {8, 16, 64, 72, 128, 200, 256}) {
        a = RopeArgs(dt(), 5, 8, 2, d);
        a.r.rotary_dim = d / 16 * 16;
        accepted(a, "D " + std::to_string(d));
    }
    for (int bs : {1, 2, 16, 64, 256}) {
        a = valid(); a.c = gk_paged_kv_dense(a.c.k_cache, a.c.v_cache, dt(), 3, bs, 2, 128);
        accepted(a, "block_size " + std::to_string(bs));
    }
    a = RopeArgs(dt(), 5, 8, 8, 128); accepted(a, "Hq = Hkv");
    a = RopeArgs(dt(), 5, 8, 1, 128); accepted(a, "Hkv 1");
    a = RopeArgs(dt(), 1, 1, 1, 128); accepted(a, "one token, one head");
    // in place, and q, k, v sliced from one packed QKV row (q_out separate)
    a = valid(); a.q_out = (void *)a.q; accepted(a, "q_out = q");
    a = valid();
    a.k = (const char *)a.q + 2 * 8 * 128;
    a.v = (const char *)a.q + 2 * 10 * 128;
    a.p.q_token_stride = a.p.k_token_stride = a.p.v_token_stride = 12 * 128;
    accepted(a, "packed QKV");
    // padded strides (multiples of 8), and a padded cache
    a = valid();
    a.p.q_head_stride = a.p.k_head_stride = a.p.v_head_stride = a.p.q_out_head_stride = 136;
    a.p.q_token_stride = a.p.q_out_token_stride = 8 * 136 + 8;
    a.p.k_token_stride = a.p.v_token_stride = 2 * 136 + 24;
    a.c.k_head_stride = a.c.v_head_stride = 136;
    a.c.k_slot_stride = 2 * 136 + 8;
    a.c.v_slot_stride = 2 * 136;
    a.c.k_block_stride = a.c.v_block_stride = 16 * (2 * 136 + 8) + 64;
    accepted(a, "padded strides");
    // inputs may repeat rows (zero strides); positions at 4 bytes for int32
    a = valid(); a.p.k_head_stride = 0; a.p.v_token_stride = 0; accepted(a, "k head stride 0, v token stride 0");
    a = valid(); a.p.positions = (const char *)a.p.positions + 4; accepted(a, "int32 positions 4-byte aligned");
    // an fp8 cache needs 8 bytes, not 16
    a = valid(); a.c.dtype = GK_E4M3; a.c.k_cache = (char *)a.c.k_cache + 8; accepted(a, "e4m3 cache + 8 bytes");
}

TEST_P(PagedValidation, NullPointers)
{
    RopeArgs a = valid();
    a = valid(); a.null_params = true; rejected(a, "'params' is a null pointer", "params NULL");
    a = valid(); a.null_rope = true; rejected(a, "'rope' is a null pointer", "rope NULL");
    a = valid(); a.null_cache = true; rejected(a, "'cache' is a null pointer", "cache NULL");
    a = valid(); a.q_out = nullptr; rejected(a, "'q_out' is a null pointer", "q_out NULL");
    a = valid(); a.q = nullptr; rejected(a, "'q' is a null pointer", "q NULL");
    a = valid(); a.k = nullptr; rejected(a, "'k' is a null pointer", "k NULL");
    a = valid(); a.v = nullptr; rejected(a, "'v' is a null pointer", "v NULL");
    a = valid(); a.p.positions = nullptr; rejected(a, "'positions' is a null pointer", "positions NULL");
    a = valid(); a.p.slot_mapping = nullptr; rejected(a, "'slot_mapping' is a null pointer", "slot_mapping NULL");
    a = valid(); a.c.k_cache = nullptr; rejected(a, "'k_cache' is a null pointer", "k_cache NULL");
    a = valid(); a.c.v_cache = nullptr; rejected(a, "'v_cache' is a null pointer", "v_cache NULL");
}

TEST_P(PagedValidation, Sizes)
{
    RopeArgs a = valid();
    a = valid(); a.p.tokens = -1; rejected(a, "'tokens' is -1", "tokens -1");
    a = valid(); a.p.heads_q = 0; rejected(a, "'heads_q' is 0", "heads_q 0");
    a = valid(); a.p.heads_kv = 0; rejected(a, "'heads_kv' is 0", "heads_kv 0");
    a = valid(); a.p.heads_kv = -2; rejected(a, "'heads_kv' is -2", "heads_kv -2");
    a = valid(); a.p.heads_kv = a.c.heads_kv = 3; rejected(a, "heads_q (8) is not a multiple of heads_kv (3)", "Hq 8, Hkv 3");
    a = valid(); a.p.heads_kv = a.c.heads_kv = 16; rejected(a, "heads_q (8) is not a multiple of heads_kv (16)", "Hq 8, Hkv 16");
    for (int d : {0, -8, 4, 12, 100, 260, 264, 512}) {
        a = valid();
        a.p.head_dim = a.c.head_dim = d;
        rejected(a, "head_dim " + std::to_string(d) + " is not supported", "D " + std::to_string(d));
    }
    // the cache's heads and head dim must be the tokens'
    a = RopeArgs(dt(), 5, 8, 4, 128); a.c.heads_kv = 2;
    rejected(a, "the cache holds 2 heads of 128, the tokens 4 heads of 128", "cache Hkv 2, tokens Hkv 4");
    a = valid(); a.c.head_dim = 64; rejected(a, "the cache holds 2 heads of 64, the tokens 2 heads of 128", "cache D 64");
    // the cache's blocks
    a = valid(); a.c.num_blocks = 0; rejected(a, "'num_blocks' is 0", "num_blocks 0");
    a = valid(); a.c.num_blocks = -3; rejected(a, "'num_blocks' is -3", "num_blocks -3");
    for (int bs : {0, 3, 12, 512, -16, 1000}) {
        a = valid(); a.c.block_size = bs;
        rejected(a, "block_size " + std::to_string(bs) + " is not a power of two from 1 to 256", "block_size " + std::to_string(bs));
    }
}

TEST_P(PagedValidation, Rope)
{
    RopeArgs a = valid();
    for (int rot : {7, 9, 136, 256, -16, 24, 40, 8}) {
        a = valid(); a.r.rotary_dim = rot;
        rejected(a, "rotary_dim " + std::to_string(rot) + ":", "NeoX rotary_dim " + std::to_string(rot));
        EXPECT_NE(std::string(gk_failure_reason()).find("a multiple of 16"), std::string::npos) << gk_failure_reason();
    }
    for (int rot : {7, 12, 136, 4, -8}) {
        a = valid(); a.r.style = GK_ROPE_GPTJ; a.r.rotary_dim = rot;
        rejected(a, "rotary_dim " + std::to_string(rot) + ":", "GPT-J rotary_dim " + std::to_string(rot));
        EXPECT_NE(std::string(gk_failure_reason()).find("a multiple of 8"), std::string::npos) << gk_failure_reason();
    }
    a = RopeArgs(dt(), 5, 8, 2, 64); a.r.rotary_dim = 80; rejected(a, "rotary_dim 80: it must be <= head_dim (64)", "rotary_dim 80 > D 64");
    a = valid(); a.r.style = 2; rejected(a, "rope style 2 is not GK_ROPE_NEOX or GK_ROPE_GPTJ", "style 2");
    a = valid(); a.r.style = -1; rejected(a, "rope style -1", "style -1");
    a = valid(); a.r.theta = 0.0f; rejected(a, "theta 0 must be > 0", "theta 0");
    a = valid(); a.r.theta = -10000.0f; rejected(a, "theta -10000 must be > 0", "theta -10000");
    a = valid(); a.r.theta = NAN; rejected(a, "must be > 0", "theta NaN");
    a = valid(); a.r.cos_sin = (const float *)(kFake + (448 << 20)); a.r.max_position = 0;
    rejected(a, "max_position 0 must be > 0 with a cos_sin table", "table, max_position 0");
    a.r.max_position = -7; rejected(a, "max_position -7 must be > 0", "table, max_position -7");
    // Llama-3.1 scaling's parameters
    RopeArgs l = valid();
    l.r.factor = 8; l.r.low_freq_factor = 1; l.r.high_freq_factor = 4; l.r.original_max_position = 8192;
    a = l; a.r.high_freq_factor = 1; rejected(a, "Llama-3.1 scaling needs", "high = low");
    a = l; a.r.high_freq_factor = 0.5f; rejected(a, "Llama-3.1 scaling needs", "high < low");
    a = l; a.r.low_freq_factor = 0; a.r.high_freq_factor = 4; rejected(a, "Llama-3.1 scaling needs", "low 0");
    a = l; a.r.original_max_position = 0; rejected(a, "Llama-3.1 scaling needs", "original 0");
    a = l; a.r.factor = 0; a.r.high_freq_factor = 0.5f; accepted(a, "factor 0: the others unread");
}

TEST_P(PagedValidation, CacheDtypeAndScales)
{
    RopeArgs a = valid();
    const int other = dt() == GK_BF16 ? GK_F16 : GK_BF16;
    for (int cdt : {(int)GK_F32, other, (int)GK_E5M2, 9}) {
        a = valid(); a.c.dtype = cdt;
        rejected(a, std::string("cache dtype ") + gk_dtype_name(cdt), std::string("cache ") + gk_dtype_name(cdt));
    }
    a = valid(); a.c.dtype = GK_E4M3; a.c.k_scale = 0.0f; rejected(a, "an fp8 cache needs k_scale and v_scale > 0", "k_scale 0");
    a = valid(); a.c.dtype = GK_E4M3; a.c.v_scale = -1.0f; rejected(a, "k_scale and v_scale > 0", "v_scale -1");
    a = valid(); a.c.dtype = GK_E4M3; a.c.v_scale = NAN; rejected(a, "k_scale and v_scale > 0", "v_scale NaN");
}

TEST_P(PagedValidation, Alignment)
{
    RopeArgs a = valid();
    for (int off : {2, 8}) {
        const std::string o = " + " + std::to_string(off) + " bytes";
        a = valid(); a.q_out = (char *)a.q_out + off; rejected(a, "'q_out'", "q_out" + o);
        a = valid(); a.q = (const char *)a.q + off; rejected(a, "'q'", "q" + o);
        a = valid(); a.k = (const char *)a.k + off; rejected(a, "'k'", "k" + o);
        a = valid(); a.v = (const char *)a.v + off; rejected(a, "'v'", "v" + o);
        a = valid(); a.c.k_cache = (char *)a.c.k_cache + off; rejected(a, "'k_cache'", "k_cache" + o);
        a = valid(); a.c.v_cache = (char *)a.c.v_cache + off; rejected(a, "'v_cache'", "v_cache" + o);
        EXPECT_NE(std::string(gk_failure_reason()).find("16-byte aligned"), std::string::npos) << gk_failure_reason();
    }
    a = valid(); a.c.dtype = GK_E4M3; a.c.v_cache = (char *)a.c.v_cache + 4; rejected(a, "'v_cache'", "e4m3 v_cache + 4");
    EXPECT_NE(std::string(gk_failure_reason()).find("8-byte aligned"), std::string::npos) << gk_failure_reason();
    a = valid(); a.p.positions = (const char *)a.p.positions + 2; rejected(a, "'positions'", "int32 positions + 2");
    a = valid(); a.p.positions_int64 = 1; a.p.positions = (const char *)a.p.positions + 4;
    rejected(a, "'positions'", "int64 positions + 4");
    a = valid(); a.p.slot_mapping = (const int64_t *)((const char *)a.p.slot_mapping + 4); rejected(a, "'slot_mapping'", "slots + 4");
    a = valid(); a.p.error_flag = (int *)((char *)a.p.error_flag + 2); rejected(a, "'error_flag'", "error_flag + 2");
    a = valid(); a.r.cos_sin = (const float *)(kFake + (448 << 20) + 2); a.r.max_position = 16;
    rejected(a, "'cos_sin'", "cos_sin + 2");
}

TEST_P(PagedValidation, Strides)
{
    const char *names[8] = {"q_token_stride", "q_head_stride", "k_token_stride", "k_head_stride",
                            "v_token_stride", "v_head_stride", "q_out_token_stride", "q_out_head_stride"};
    for (int i = 0; i < 8; i++)
        for (int64_t delta : {4, 1, -1}) {
            RopeArgs a = valid();
            int64_t *s[8] = {&a.p.q_token_stride, &a.p.q_head_stride, &a.p.k_token_stride, &a.p.k_head_stride,
                             &a.p.v_token_stride, &a.p.v_head_stride, &a.p.q_out_token_stride, &a.p.q_out_head_stride};
            *s[i] += delta;
            rejected(a, "'" + std::string(names[i]) + "' is " + std::to_string(*s[i]) + ", not a multiple of 8",
                     std::string(names[i]) + " + " + std::to_string(delta));
        }
    for (int i = 0; i < 8; i++) {
        RopeArgs a = valid();
        int64_t *s[8] = {&a.p.q_token_stride, &a.p.q_head_stride, &a.p.k_token_stride, &a.p.k_head_stride,
                         &a.p.v_token_stride, &a.p.v_head_stride, &a.p.q_out_token_stride, &a.p.q_out_head_stride};
        *s[i] = -*s[i];
        rejected(a, "'" + std::string(names[i]) + "' is " + std::to_string(*s[i]) + "; it must be >= 0",
                 std::string(names[i]) + " negative");
    }
    const char *cnames[6] = {"k_block_stride", "k_slot_stride", "k_head_stride (cache)",
                             "v_block_stride", "v_slot_stride", "v_head_stride (cache)"};
    for (int i = 0; i < 6; i++)
        for (int e4m3 : {0, 1}) {
            RopeArgs a = valid();
            if (e4m3) a.c.dtype = GK_E4M3;
            int64_t *s[6] = {&a.c.k_block_stride, &a.c.k_slot_stride, &a.c.k_head_stride,
                             &a.c.v_block_stride, &a.c.v_slot_stride, &a.c.v_head_stride};
            *s[i] += 4; // 8 bytes in an fp8 cache, but a chunk of 8 values must stay whole
            rejected(a, "'" + std::string(cnames[i]) + "' is " + std::to_string(*s[i]) + ", not a multiple of 8",
                     std::string(cnames[i]) + (e4m3 ? " + 4 (e4m3)" : " + 4"));
            *s[i] = -(*s[i] - 4);
            rejected(a, "'" + std::string(cnames[i]) + "' is " + std::to_string(*s[i]) + "; it must be >= 0",
                     std::string(cnames[i]) + " negative");
        }
}

TEST_P(PagedValidation, Aliasing)
{
    RopeArgs a = valid();
    // q_out's own rows
    a = valid(); a.p.q_out_head_stride = 64; rejected(a, "heads would alias", "q_out head stride 64 < D");
    a = valid(); a.p.q_out_head_stride = 0; rejected(a, "heads would alias", "q_out head stride 0");
    a = valid(); a.p.q_out_token_stride = 7 * 128; rejected(a, "tokens would alias", "q_out token stride under Hq D");
    a = valid(); a.p.q_out_token_stride = 0; rejected(a, "tokens would alias", "q_out token stride 0");
    // one head, one token: the strides that do not move are no alias
    a = RopeArgs(dt(), 1, 1, 1, 128); a.p.q_out_head_stride = 0; a.p.q_out_token_stride = 0;
    accepted(a, "q_out strides 0 over one token and head");
    // q_out may be q, but must not overlap it otherwise, nor k, v or the caches
    a = valid(); a.q_out = (char *)a.q + 256; rejected(a, "'q_out' overlaps 'q' without being it", "q_out inside q");
    a = valid(); a.q = (const char *)a.q_out + 2 * 128 * 8 * 5 - 16; rejected(a, "'q_out' overlaps 'q'", "q at q_out's end");
    a = valid(); a.q = (const char *)a.q_out + 2 * 128 * 8 * 5; accepted(a, "q just past q_out");
    a = valid(); a.q_out = (void *)a.k; rejected(a, "'q_out' overlaps 'k'", "q_out = k");
    a = valid(); a.q_out = (char *)a.v + 512; rejected(a, "'q_out' overlaps 'v'", "q_out inside v");
    a = valid(); a.q_out = a.c.k_cache; rejected(a, "'q_out' and 'k_cache' overlap", "q_out = k_cache");
    a = valid(); a.q_out = (char *)a.c.v_cache + 4096; rejected(a, "'q_out' and 'v_cache' overlap", "q_out inside v_cache");
    a = valid(); a.c.v_cache = (char *)a.c.k_cache + 4096; rejected(a, "'k_cache' and 'v_cache' overlap", "v_cache inside k_cache");
    // in place needs q's own strides (another layout would read rows other tokens already wrote)
    a = valid(); a.q_out = (void *)a.q; a.p.q_out_token_stride = 2 * a.p.q_token_stride;
    rejected(a, "q_out is q with other strides", "q_out = q, token stride doubled");
    a = valid(); a.q_out = (void *)a.q; a.p.q_out_head_stride = 136; a.p.q_out_token_stride = 8 * 136;
    rejected(a, "q_out is q with other strides", "q_out = q, other head stride");
    a = RopeArgs(dt(), 1, 1, 1, 128); a.q_out = (void *)a.q; a.p.q_out_token_stride = 0; a.p.q_out_head_stride = 0;
    accepted(a, "q_out = q, strides that do not move (one token, one head) may differ");
    // in place: q_out = q; k or v over the same rows is still refused
    a = valid(); a.q_out = (void *)a.q; a.k = a.q; rejected(a, "'q_out' overlaps 'k'", "q_out = q = k");
    // in place on a packed QKV row [T][Hq + 2 Hkv][D]: q_out = q, k and v beside it in each row
    RopeArgs pk = valid();
    pk.q_out = (void *)pk.q;
    pk.k = (const char *)pk.q + 2 * 8 * 128;
    pk.v = (const char *)pk.q + 2 * 10 * 128;
    pk.p.q_token_stride = pk.p.k_token_stride = pk.p.v_token_stride = 12 * 128;
    pk.p.q_out_token_stride = 12 * 128;
    accepted(pk, "in place on packed QKV");
    a = pk; a.p.q_head_stride = a.p.q_out_head_stride = 136;
    a.k = (const char *)a.q + 2 * 8 * 136;
    a.v = (const char *)a.k + 2 * 2 * 128;
    a.p.q_token_stride = a.p.q_out_token_stride = a.p.k_token_stride = a.p.v_token_stride = 8 * 136 + 4 * 128;
    accepted(a, "in place on packed QKV, q heads apart");
    a = pk; a.k = (const char *)a.q + 2 * (8 * 128 - 8); rejected(a, "'q_out' overlaps 'k'", "packed: k over q's last 8 values");
    a = pk; a.v = (const char *)a.q + 2 * 11 * 128; rejected(a, "'q_out' overlaps 'v'", "packed: v past the row (the next token's q)");
    a = pk; a.p.q_out_head_stride = a.p.q_head_stride = 136; rejected(a, "'q_out' overlaps 'k'", "packed: q's heads spread over k");
    a = pk; a.k = (const char *)a.q + 2 * 12 * 128 * 5; a.p.k_token_stride = 2 * 128;
    accepted(a, "packed q and v, k in a buffer of its own after them");
    a = pk; a.p.k_token_stride = 16 * 128; rejected(a, "'q_out' overlaps 'k'", "packed: k's token stride differs");
    a = pk; a.p.tokens = 1; accepted(a, "in place on packed QKV, one token");
    a = pk; a.q_out = (char *)a.q + 16; a.p.tokens = 1; rejected(a, "'q_out' overlaps 'q' without being it", "q_out 8 values into q");
}

// FlashInfer's cache: [blocks][2][block_size][Hkv][D], the k and v halves of each block in one
// buffer. Accepted: shown where there is no GPU only (the k and v caches apart, no check after
// them fails; the call then stops at the CUDA runtime). Halves that meet are refused everywhere.
TEST_P(PagedValidation, InterleavedCaches)
{
    for (int e4m3 : {0, 1}) {
        RopeArgs a = valid();
        const int es = e4m3 ? 1 : 2;
        if (e4m3) a.c.dtype = GK_E4M3;
        const int64_t half = 16 * 2 * 128; // a block's k (or v) half, elements
        a.c.k_block_stride = a.c.v_block_stride = 2 * half;
        a.c.v_cache = (char *)a.c.k_cache + es * half;
        RopeArgs b = a;
        b.c.v_cache = (char *)a.c.k_cache + es * (half - 8);
        rejected(b, "'k_cache' and 'v_cache' overlap", e4m3 ? "e4m3 halves meet" : "halves meet");
        b = a;
        b.c.v_block_stride = 3 * half;
        rejected(b, "'k_cache' and 'v_cache' overlap", e4m3 ? "e4m3 v block stride differs" : "v block stride differs");
        std::string why;
        if (gk_test_gpu_available(&why)) continue; // a passing call would launch on fake addresses
        const cudaError_t err = call(a);
        const std::string r = gk_failure_reason();
        EXPECT_NE(err, cudaErrorInvalidValue) << "interleaved caches refused: " << r;
        EXPECT_NE(err, cudaSuccess) << "launched without a GPU?";
        EXPECT_EQ(r.rfind(fn(), 0), 0u) << "the CUDA error is named after the call: \"" << r << "\"";
    }
}

TEST_P(PagedValidation, NoTokens)
{
    RopeArgs e = valid();
    e.p.tokens = 0;
    e.q_out = nullptr;
    e.q = e.k = e.v = nullptr;
    e.p.positions = nullptr;
    e.p.slot_mapping = nullptr;
    e.p.error_flag = nullptr;
    e.c.k_cache = e.c.v_cache = nullptr;
    EXPECT_EQ(call(e), cudaSuccess) << gk_failure_reason();
    EXPECT_STREQ(gk_failure_reason(), "") << "a successful call clears the reason";
    // nothing else is inspected: shapes, rope, cache
    RopeArgs a = e;
    a.p.head_dim = 12; a.p.heads_kv = 3; a.r.rotary_dim = 7; a.r.theta = -1; a.c.dtype = GK_F32; a.c.block_size = 3;
    a.p.q_token_stride = 5;
    EXPECT_EQ(call(a), cudaSuccess) << gk_failure_reason();
    // after a refused call the reason is cleared by the next successful one
    a = valid(); a.p.heads_kv = 3; EXPECT_EQ(call(a), cudaErrorInvalidValue);
    EXPECT_STRNE(gk_failure_reason(), "");
    EXPECT_EQ(call(e), cudaSuccess);
    EXPECT_STREQ(gk_failure_reason(), "");
}

INSTANTIATE_TEST_SUITE_P(Dtype, PagedValidation, ::testing::Values((int)GK_BF16, (int)GK_F16),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(gk_dtype_name(i.param)); });

// ================================================================== decode attention

// ------------------------------------------------------------------ a problem on the host

// A decode problem in host memory: q [B][nq][Hq][D] dense (dtype dt); a dense cache (dtype cdt)
// whose blocks go to the sequences in a shuffled order, so a sequence's blocks are scattered over
// the cache. Values uniform (q in [-2, 2), k and v in [-1, 1) before an fp8 cache's scales);
// every slot no sequence holds (the tails of last blocks, the spare blocks) is NaN, and so are the
// block table's entries past a sequence's blocks point at spare blocks: a reference that reads
// past a sequence's keys turns NaN.
struct DecodeShape {
    int dt = GK_BF16, cdt = GK_BF16;
    int Hq = 4, Hkv = 2, D = 32, nq = 1, bs = 4;
    std::vector<int> lens = {9};
    float scale = 0.0f, softcap = 0.0f, k_scale = 1.0f, v_scale = 1.0f;
    int wl = -1;
    bool alibi = false;
};

struct HostDecode {
    gk_paged_decode_params p;
    gk_paged_kv c;
    int dt;
    HostTensor q, k, v;
    std::vector<int> table, lens;
    std::vector<float> alibi;
    HostDecode(int qdt, int cdt, size_t qn, size_t cn) : dt(qdt), q(qdt, qn), k(cdt, cn), v(cdt, cn) {}
    GkPagedDecodeRefIn in() const
    {
        GkPagedDecodeRefIn r;
        r.p = p;
        r.c = c;
        r.q_dtype = dt;
        r.q = q.bytes.data();
        r.k_cache = k.bytes.data();
        r.v_cache = v.bytes.data();
        r.block_table = table.data();
        r.seq_lens = lens.data();
        r.alibi = alibi.empty() ? nullptr : alibi.data();
        return r;
    }
};

static std::unique_ptr<HostDecode> make_decode(const DecodeShape &s, uint64_t salt)
{
    GkRng rng(salt);
    const int B = (int)s.lens.size(), bs = s.bs, D = s.D;
    int max_len = 0, used = 0;
    for (int L : s.lens) {
        max_len = std::max(max_len, L);
        used += (L + bs - 1) / bs;
    }
    const int stride = (max_len + bs - 1) / bs + 1, spare = 3, nb = used + spare;
    const size_t cn = (size_t)nb * bs * s.Hkv * D;
    std::unique_ptr<HostDecode> h(new HostDecode(s.dt, s.cdt, (size_t)B * s.nq * s.Hq * D, cn));
    h->p = gk_paged_decode_params_dense(B, s.Hq, s.Hkv, D, s.nq, nullptr, stride, nullptr, max_len);
    h->p.scale = s.scale;
    h->p.softcap = s.softcap;
    h->p.window_left = s.wl;
    h->c = gk_paged_kv_dense(nullptr, nullptr, s.cdt, nb, bs, s.Hkv, D);
    if (s.cdt == GK_E4M3) {
        h->c.k_scale = s.k_scale;
        h->c.v_scale = s.v_scale;
    }
    h->lens = s.lens;
    h->q.fill_uniform(rng, -2.0f, 2.0f);
    std::fill(h->k.bytes.begin(), h->k.bytes.end(), 0xff);
    std::fill(h->v.bytes.begin(), h->v.bytes.end(), 0xff);
    std::vector<int> perm(nb);
    for (int b = 0; b < nb; b++) perm[b] = b;
    for (int b = nb - 1; b > 0; b--) std::swap(perm[b], perm[rng.next() % (uint64_t)(b + 1)]);
    h->table.assign((size_t)B * stride, 0);
    int next = 0;
    const float ks = s.cdt == GK_E4M3 ? s.k_scale : 1.0f, vs = s.cdt == GK_E4M3 ? s.v_scale : 1.0f;
    for (int b = 0; b < B; b++) {
        const int nblk = (s.lens[b] + bs - 1) / bs;
        for (int t = 0; t < stride; t++)
            h->table[(size_t)b * stride + t] = t < nblk ? perm[next++] : perm[used + (int)(rng.next() % spare)];
        for (int j = 0; j < s.lens[b]; j++) {
            const int64_t blk = h->table[(size_t)b * stride + j / bs];
            for (int hk = 0; hk < s.Hkv; hk++)
                for (int d = 0; d < D; d++) {
                    const size_t o = (size_t)(blk * h->c.k_block_stride + (j % bs) * h->c.k_slot_stride + hk * h->c.k_head_stride + d);
                    h->k.set(o, rng.uniform(-1.0f, 1.0f) / ks);
                    h->v.set(o, rng.uniform(-1.0f, 1.0f) / vs);
                }
        }
    }
    if (s.alibi)
        for (int hh = 0; hh < s.Hq; hh++) h->alibi.push_back(std::exp2(-8.0f * (hh + 1) / s.Hq));
    return h;
}

// The cache gathered into contiguous per-token rows, values times the fp8 scales: k and v
// [total tokens][Hkv][D] in sequence order (float: every stored value times a power-of-two scale
// is exact), and the start of each sequence.
struct DenseCopy {
    std::vector<float> q, k, v;
    std::vector<int> cu_q, cu_k;
};

static DenseCopy dense_copy(const HostDecode &h)
{
    DenseCopy d;
    const gk_paged_decode_params &p = h.p;
    const int B = p.batch, D = p.head_dim, Hkv = p.heads_kv, bs = h.c.block_size;
    const bool fp8 = h.c.dtype == GK_E4M3;
    const double ks = fp8 ? h.c.k_scale : 1.0, vs = fp8 ? h.c.v_scale : 1.0;
    for (size_t i = 0; i < h.q.n; i++) d.q.push_back((float)h.q.get(i));
    d.cu_q.push_back(0);
    d.cu_k.push_back(0);
    for (int b = 0; b < B; b++) {
        d.cu_q.push_back(d.cu_q.back() + p.queries);
        d.cu_k.push_back(d.cu_k.back() + h.lens[b]);
        for (int j = 0; j < h.lens[b]; j++) {
            const int64_t blk = h.table[(size_t)b * p.block_table_stride + j / bs];
            for (int hk = 0; hk < Hkv; hk++)
                for (int e = 0; e < D; e++) {
                    const size_t o = (size_t)(blk * h.c.k_block_stride + (j % bs) * h.c.k_slot_stride + hk * h.c.k_head_stride + e);
                    d.k.push_back((float)(h.k.get(o) * ks));
                    d.v.push_back((float)(h.v.get(o) * vs));
                }
        }
    }
    return d;
}

// Naive attention over the dense copy, written from the manual's sentences again: query i of
// sequence b at position L - nq + i, keys from the window's start up to that position, ALiBi
// added after the softcap.
static void naive_row(const HostDecode &h, const DenseCopy &d, int b, int i, int hh, double *out, double *lse)
{
    const gk_paged_decode_params &p = h.p;
    const int D = p.head_dim, hk = hh / (p.heads_q / p.heads_kv);
    const int64_t L = h.lens[b], pos = L - p.queries + i;
    const double scale = p.scale != 0 ? p.scale : 1.0 / std::sqrt((double)D);
    std::vector<double> s, w;
    std::vector<int64_t> js;
    for (int64_t j = 0; j < L; j++) {
        if (j > pos) continue;                                  // causal among the queries
        if (p.window_left >= 0 && pos - j > p.window_left) continue; // the window
        double dot = 0;
        for (int e = 0; e < D; e++)
            dot += (double)d.q[(((size_t)b * p.queries + i) * p.heads_q + hh) * D + e] *
                   (double)d.k[(((size_t)d.cu_k[b] + j) * p.heads_kv + hk) * D + e];
        double x = scale * dot;
        if (p.softcap > 0) x = p.softcap * std::tanh(x / p.softcap);
        if (!h.alibi.empty()) x += h.alibi[hh] * (double)(j - pos);
        s.push_back(x);
        js.push_back(j);
    }
    for (int e = 0; e < D; e++) out[e] = 0;
    if (js.empty()) {
        *lse = -INFINITY;
        return;
    }
    const double m = *std::max_element(s.begin(), s.end());
    double sum = 0;
    for (double x : s) sum += std::exp(x - m);
    for (size_t n = 0; n < js.size(); n++)
        for (int e = 0; e < D; e++)
            out[e] += std::exp(s[n] - m) / sum * (double)d.v[(((size_t)d.cu_k[b] + js[n]) * p.heads_kv + hk) * D + e];
    *lse = m + std::log(sum);
}

static std::string describe(const DecodeShape &s)
{
    std::string lens;
    for (int L : s.lens) lens += (lens.empty() ? "" : ",") + std::to_string(L);
    char t[400];
    snprintf(t, sizeof t, "q %s cache %s Hq %d Hkv %d D %d nq %d block %d lens %s scale %g softcap %g window %d alibi %d",
             gk_dtype_name(s.dt), gk_dtype_name(s.cdt), s.Hq, s.Hkv, s.D, s.nq, s.bs, lens.c_str(), s.scale, s.softcap,
             s.wl, (int)s.alibi);
    return t;
}

// The shapes the reference tests sweep: the cache dtypes with their q dtypes, 1, 4 and 16 queries,
// blocks of 1, 4 and 16 slots, windows (none, the diagonal alone, 3, 20), softcap, ALiBi, GQA; the
// lengths 0, 1, 2 (fewer than the queries: the first queries see nothing), a block's length and
// either side of it, and longer.
static std::vector<DecodeShape> ref_shapes()
{
    std::vector<DecodeShape> v;
    const int dts[4][2] = {{GK_BF16, GK_BF16}, {GK_F16, GK_F16}, {GK_BF16, GK_E4M3}, {GK_F16, GK_E4M3}};
    int n = 0;
    for (const auto &dt : dts)
        for (int nq : {1, 4, 16})
            for (int bs : {1, 4, 16})
                for (int wl : {-1, 0, 3, 20}) {
                    DecodeShape s;
                    s.dt = dt[0];
                    s.cdt = dt[1];
                    s.nq = nq;
                    s.bs = bs;
                    s.wl = wl;
                    s.lens = {0, 1, 2, bs * 3, bs * 3 - 1, bs * 3 + 1, 40 + n % 7};
                    s.Hq = n % 3 == 0 ? 8 : 4;
                    s.Hkv = n % 3 == 0 ? 1 : n % 3 == 1 ? 2 : 4;
                    s.D = n % 2 ? 32 : 16;
                    s.softcap = n % 4 == 1 ? 5.0f : n % 4 == 3 ? 0.5f : 0.0f;
                    s.scale = n % 5 == 2 ? 0.75f : 0.0f;
                    s.alibi = n % 3 == 1;
                    s.k_scale = n % 2 ? 0.25f : 0.0625f; // powers of 2: the dense copy stays exact
                    s.v_scale = n % 2 ? 0.5f : 0.125f;
                    v.push_back(s);
                    n++;
                }
    return v;
}

// The paged reference against naive attention over a contiguous copy of the cache (every query,
// head and sequence), and, without ALiBi, against attention_ref.h's reference (another code, the
// bottom-right causal mask of FlashAttention with window_left): decode over the cache is causal
// attention with nq queries at the end of the L keys. Both in double: agreement to 1e-12.
TEST(PagedDecodeRef, MatchesDenseAttention)
{
    int rows = 0, empty = 0;
    for (const DecodeShape &s : ref_shapes()) {
        SCOPED_TRACE(describe(s));
        const std::unique_ptr<HostDecode> h = make_decode(s, 0xdec0de + rows);
        const DenseCopy d = dense_copy(*h);
        const GkPagedDecodeRefIn in = h->in();
        GkAttnRef ar;
        memset(&ar.p, 0, sizeof ar.p);
        ar.p.batch = h->p.batch;
        ar.p.heads_q = s.Hq;
        ar.p.heads_kv = s.Hkv;
        ar.p.head_dim = s.D;
        ar.p.seqlen_q = s.nq;
        ar.p.seqlen_k = h->p.max_seq_len;
        ar.p.q_row_stride = ar.p.out_row_stride = (int64_t)s.Hq * s.D;
        ar.p.q_head_stride = ar.p.out_head_stride = s.D;
        ar.p.k_row_stride = ar.p.v_row_stride = (int64_t)s.Hkv * s.D;
        ar.p.k_head_stride = ar.p.v_head_stride = s.D;
        ar.p.scale = s.scale;
        ar.p.softcap = s.softcap;
        ar.p.causal = 1;
        ar.p.window_left = s.wl;
        ar.p.window_right = -1;
        ar.q = d.q.data();
        ar.k = d.k.data();
        ar.v = d.v.data();
        ar.cu_q = d.cu_q.data();
        ar.cu_k = d.cu_k.data();
        std::vector<double> got(s.D), want(s.D), want2(s.D);
        for (int b = 0; b < h->p.batch; b++)
            for (int i = 0; i < s.nq; i++)
                for (int hh = 0; hh < s.Hq; hh++) {
                    double lse, want_lse, want_lse2;
                    EXPECT_FALSE(gk_ref_paged_decode_row(in, b, i, hh, got.data(), &lse)) << "no bad block here";
                    naive_row(*h, d, b, i, hh, want.data(), &want_lse);
                    rows++;
                    empty += want_lse == -INFINITY;
                    ASSERT_FALSE(std::isnan(lse)) << "the reference read a slot no key of the query holds";
                    if (want_lse == -INFINITY) EXPECT_EQ(lse, -INFINITY);
                    else EXPECT_NEAR(lse, want_lse, 1e-12 * (1 + std::fabs(want_lse)));
                    for (int e = 0; e < s.D; e++) EXPECT_NEAR(got[e], want[e], 1e-12) << "b " << b << " i " << i << " h " << hh;
                    if (!s.alibi) {
                        gk_ref_attention_row(ar, b, i, hh, want2.data(), &want_lse2);
                        if (want_lse2 == -INFINITY) EXPECT_EQ(lse, -INFINITY);
                        else EXPECT_NEAR(lse, want_lse2, 1e-12 * (1 + std::fabs(want_lse2)));
                        for (int e = 0; e < s.D; e++) EXPECT_NEAR(got[e], want2[e], 1e-12) << "attention_ref";
                    }
                    if (HasFailure()) return;
                }
    }
    EXPECT_GT(rows, 10000);
    EXPECT_GT(empty, 100) << "queries that see no key (L 0, or before the first key)";
}

// Hand-checked values: one key, a query at position 0 sees it alone (out = v, lse = s); ALiBi adds
// slope (j - p); a key whose block id is outside the cache reads as 0 and flags the row.
TEST(PagedDecodeRef, SmallCases)
{
    DecodeShape s;
    s.Hq = 2;
    s.Hkv = 1;
    s.D = 8;
    s.bs = 2;
    s.lens = {1, 3};
    s.alibi = true;
    std::unique_ptr<HostDecode> h = make_decode(s, 99);
    GkPagedDecodeRefIn in = h->in();
    const int64_t k0 = (int64_t)h->table[0] * h->c.k_block_stride; // sequence 0, token 0, head 0
    double out[8], lse;
    ASSERT_FALSE(gk_ref_paged_decode_row(in, 0, 0, 1, out, &lse));
    double dot = 0;
    for (int e = 0; e < 8; e++) dot += h->q.get(8 + e) * h->k.get(k0 + e);
    EXPECT_NEAR(lse, dot / std::sqrt(8.0), 1e-12) << "one key: lse is its logit (ALiBi adds slope 0 at j = p)";
    for (int e = 0; e < 8; e++) EXPECT_EQ(out[e], h->v.get(k0 + e)) << "one key: out is its v";
    // sequence 1 (3 keys), head 0: logits q . k_j / sqrt(8) + slope (j - 2)
    {
        double want[8] = {}, m = -INFINITY, sum = 0, sj[3];
        for (int j = 0; j < 3; j++) {
            const int64_t o = (int64_t)h->table[h->p.block_table_stride + j / 2] * h->c.k_block_stride + (j % 2) * h->c.k_slot_stride;
            double dt = 0;
            for (int e = 0; e < 8; e++) dt += h->q.get(16 + e) * h->k.get(o + e);
            sj[j] = dt / std::sqrt(8.0) + h->alibi[0] * (j - 2);
            m = std::max(m, sj[j]);
        }
        for (int j = 0; j < 3; j++) sum += std::exp(sj[j] - m);
        for (int j = 0; j < 3; j++) {
            const int64_t o = (int64_t)h->table[h->p.block_table_stride + j / 2] * h->c.v_block_stride + (j % 2) * h->c.v_slot_stride;
            for (int e = 0; e < 8; e++) want[e] += std::exp(sj[j] - m) / sum * h->v.get(o + e);
        }
        ASSERT_FALSE(gk_ref_paged_decode_row(in, 1, 0, 0, out, &lse));
        EXPECT_NEAR(lse, m + std::log(sum), 1e-12);
        for (int e = 0; e < 8; e++) EXPECT_NEAR(out[e], want[e], 1e-12);
    }
    // every block of sequence 1 outside the cache: its 3 keys read as 0 (logit 0 before ALiBi, v 0)
    h->alibi.clear();
    for (int bad : {-1, h->c.num_blocks, 1 << 30}) {
        h->table[h->p.block_table_stride] = h->table[h->p.block_table_stride + 1] = bad;
        in = h->in();
        EXPECT_TRUE(gk_ref_paged_decode_row(in, 1, 0, 0, out, &lse)) << "block id " << bad;
        EXPECT_NEAR(lse, std::log(3.0), 1e-15);
        for (int e = 0; e < 8; e++) EXPECT_EQ(out[e], 0.0);
        EXPECT_FALSE(gk_ref_paged_decode_row(in, 0, 0, 0, out, &lse)) << "sequence 0 does not read them";
    }
    // a window of 1 over sequence 1 with 2 queries (positions 1 and 2): keys 0..1 and 1..2
    int64_t lo, hi;
    gk_paged_decode_params p = h->p;
    p.queries = 2;
    p.window_left = 1;
    gk_ref_paged_decode_keys(p, 3, 0, &lo, &hi);
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 2);
    gk_ref_paged_decode_keys(p, 3, 1, &lo, &hi);
    EXPECT_EQ(lo, 1);
    EXPECT_EQ(hi, 3);
    gk_ref_paged_decode_keys(p, 1, 0, &lo, &hi); // position -1: none
    EXPECT_GE(lo, hi);
    p.window_left = -1;
    gk_ref_paged_decode_keys(p, 5000, 1, &lo, &hi);
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 5000);
}

// The split-K combine: a query's keys cut into pieces (random cuts, empty pieces included, and
// the plan's regular splits of split_keys keys), each piece's partial from the reference in
// float, merged in order with gk_attn_merge: the one-pass result, within float's roundings.
TEST(PagedDecodeRef, SplitPartialsMergeToOnePass)
{
    GkRng rng(12);
    int merged = 0;
    for (int v = 0; v < 8; v++) {
        DecodeShape s;
        s.dt = v % 2 ? GK_F16 : GK_BF16;
        s.cdt = v % 4 == 3 ? GK_E4M3 : s.dt;
        s.k_scale = 0.25f;
        s.v_scale = 0.5f;
        s.nq = v % 3 == 0 ? 4 : 1;
        s.bs = v % 2 ? 16 : 1;
        s.lens = {300, 17, 0, 64};
        s.wl = v == 5 ? 50 : -1;
        s.softcap = v == 6 ? 3.0f : 0.0f;
        s.alibi = v == 7;
        s.scale = v == 4 ? 1.5f : 0.0f; // peaky: lse near the top logit
        SCOPED_TRACE(describe(s));
        const std::unique_ptr<HostDecode> h = make_decode(s, 0x5b117 + v);
        const GkPagedDecodeRefIn in = h->in();
        std::vector<double> want(s.D), po(s.D);
        for (int b = 0; b < h->p.batch; b++)
            for (int i = 0; i < s.nq; i++)
                for (int hh = 0; hh < s.Hq; hh++) {
                    double want_lse;
                    gk_ref_paged_decode_row(in, b, i, hh, want.data(), &want_lse);
                    const int L = h->lens[b];
                    for (int cut_kind = 0; cut_kind < 2; cut_kind++) {
                        std::vector<int64_t> cuts = {0};
                        if (cut_kind == 0) {
                            const int pieces = 1 + (int)(rng.next() % 7);
                            for (int c = 1; c < pieces; c++) cuts.push_back((int64_t)(rng.next() % (uint64_t)(L + 1)));
                        } else {
                            const int64_t split_keys = 16 * (1 + (int64_t)(rng.next() % 4));
                            for (int64_t c = split_keys; c < L; c += split_keys) cuts.push_back(c);
                        }
                        cuts.push_back(L);
                        std::sort(cuts.begin(), cuts.end());
                        float lse = -INFINITY;
                        std::vector<float> o(s.D, 0.0f);
                        for (size_t c = 0; c + 1 < cuts.size(); c++) {
                            double pl;
                            gk_ref_paged_decode_row(in, b, i, hh, po.data(), &pl, cuts[c], cuts[c + 1]);
                            std::vector<float> pof(po.begin(), po.end());
                            gk_attn_merge(lse, o.data(), (float)pl, pof.data(), s.D, &lse, o.data());
                        }
                        merged++;
                        if (want_lse == -INFINITY) {
                            EXPECT_EQ(lse, -INFINITY);
                            for (int e = 0; e < s.D; e++) EXPECT_EQ(o[e], 0.0f);
                            continue;
                        }
                        const double big = 1.2e-7 * std::fabs(want_lse);
                        EXPECT_NEAR(lse, want_lse, 1e-5 + 4 * big) << "b " << b << " i " << i << " h " << hh;
                        for (int e = 0; e < s.D; e++) EXPECT_NEAR(o[e], want[e], 2e-6 + 4 * big) << "d " << e;
                        if (HasFailure()) return;
                    }
                }
    }
    EXPECT_GT(merged, 400);
}

// ------------------------------------------------------------------ params, plan, configs

TEST(PagedDecodeParams, Dense)
{
    const int *bt = (const int *)0x1000, *sl = (const int *)0x2000;
    const gk_paged_decode_params p = gk_paged_decode_params_dense(3, 32, 8, 128, 4, bt, 77, sl, 5000);
    EXPECT_EQ(p.batch, 3);
    EXPECT_EQ(p.heads_q, 32);
    EXPECT_EQ(p.heads_kv, 8);
    EXPECT_EQ(p.head_dim, 128);
    EXPECT_EQ(p.queries, 4);
    EXPECT_EQ(p.q_head_stride, 128);
    EXPECT_EQ(p.q_row_stride, 32 * 128);
    EXPECT_EQ(p.q_batch_stride, 4 * 32 * 128);
    EXPECT_EQ(p.out_head_stride, 128);
    EXPECT_EQ(p.out_row_stride, 32 * 128);
    EXPECT_EQ(p.out_batch_stride, 4 * 32 * 128);
    EXPECT_EQ(p.block_table, bt);
    EXPECT_EQ(p.block_table_stride, 77);
    EXPECT_EQ(p.seq_lens, sl);
    EXPECT_EQ(p.max_seq_len, 5000);
    EXPECT_EQ(p.scale, 0.0f);
    EXPECT_EQ(p.softcap, 0.0f);
    EXPECT_LT(p.window_left, 0) << "no mask: every key up to the query's position";
    EXPECT_EQ(p.alibi_slopes, nullptr);
    EXPECT_EQ(p.error_flag, nullptr);
    // 64-bit strides
    const gk_paged_decode_params big = gk_paged_decode_params_dense(2, 65536, 1, 256, 16, bt, 1, sl, 1);
    EXPECT_EQ(big.q_batch_stride, (int64_t)16 * 65536 * 256);
}

// The plan of bad parameters: config -1 (no CUDA call needed to say so), the reason naming the
// problem. (A valid problem's plan asks the device for its SM count: the GPU test checks those.)
TEST(PagedDecodePlan, BadParams)
{
    const gk_paged_kv c = gk_paged_kv_dense(kFake, kFake + (64 << 20), GK_BF16, 100, 16, 2, 128);
    gk_paged_decode_params p = gk_paged_decode_params_dense(4, 8, 2, 128, 1, (const int *)(kFake + (128 << 20)), 8,
                                                            (const int *)(kFake + (130 << 20)), 128);
    EXPECT_EQ(gk_paged_decode_plan_for(nullptr, &c).config, -1);
    EXPECT_EQ(gk_paged_decode_plan_for(&p, nullptr).config, -1);
    struct {
        const char *what, *needle;
        std::function<void(gk_paged_decode_params *, gk_paged_kv *)> set;
    } const cases[] = {
        {"Hkv 3", "heads_q (8) is not a multiple of heads_kv (3)", [](gk_paged_decode_params *q, gk_paged_kv *k) { q->heads_kv = k->heads_kv = 3; }},
        {"D 12", "head_dim 12", [](gk_paged_decode_params *q, gk_paged_kv *k) { q->head_dim = k->head_dim = 12; }},
        {"queries 0", "queries 0", [](gk_paged_decode_params *q, gk_paged_kv *) { q->queries = 0; }},
        {"queries 17", "queries 17", [](gk_paged_decode_params *q, gk_paged_kv *) { q->queries = 17; }},
        {"batch -1", "'batch' is -1", [](gk_paged_decode_params *q, gk_paged_kv *) { q->batch = -1; }},
        {"block_size 3", "block_size 3", [](gk_paged_decode_params *, gk_paged_kv *k) { k->block_size = 3; }},
        {"table stride", "block_table_stride 7", [](gk_paged_decode_params *q, gk_paged_kv *) { q->block_table_stride = 7; q->max_seq_len = 113; }},
        {"cache e4m3 scale 0", "k_scale and v_scale > 0", [](gk_paged_decode_params *, gk_paged_kv *k) { k->dtype = GK_E4M3; k->k_scale = 0; }},
        {"softcap -1", "softcap", [](gk_paged_decode_params *q, gk_paged_kv *) { q->softcap = -1.0f; }},
    };
    for (const auto &cs : cases) {
        gk_paged_decode_params q = p;
        gk_paged_kv k = c;
        cs.set(&q, &k);
        const gk_paged_decode_plan pl = gk_paged_decode_plan_for(&q, &k);
        EXPECT_EQ(pl.config, -1) << cs.what;
        EXPECT_NE(std::string(gk_failure_reason()).find(cs.needle), std::string::npos)
            << cs.what << ": reason was \"" << gk_failure_reason() << "\"";
    }
}

// Every shipped configuration: a head dim of a multiple of 32 up to 256, 16 keys a warp, a ring of
// at least 2 tiles within the opt-in shared memory; every D the launcher accepts (multiples of 8,
// of 16 for an e4m3 cache, up to 256) has a configuration built for it or a larger D; unknown
// indices give name NULL.
TEST(PagedDecodeConfigs, Shipped)
{
    const int n = gk_paged_decode_config_count();
    ASSERT_GE(n, 2);
    for (int i = 0; i < n; i++) {
        const gk_paged_decode_config cfg = gk_paged_decode_config_info(i);
        ASSERT_NE(cfg.name, nullptr) << i;
        SCOPED_TRACE(cfg.name);
        EXPECT_GE(cfg.head_dim, 32);
        EXPECT_LE(cfg.head_dim, 256);
        EXPECT_EQ(cfg.head_dim % 32, 0);
        EXPECT_TRUE(cfg.fp8 == 0 || cfg.fp8 == 1);
        EXPECT_GT(cfg.keys, 0);
        EXPECT_EQ(cfg.keys % 16, 0);
        EXPECT_TRUE(cfg.threads == cfg.keys / 16 * 32 || cfg.threads == cfg.keys / 32 * 32)
            << "a warp takes 16 or 32 keys of a tile";
        EXPECT_GE(cfg.stages, 2);
        EXPECT_GT(cfg.smem_bytes, 0);
        EXPECT_LE(cfg.smem_bytes, 227 * 1024);
        EXPECT_GE(cfg.smem_bytes, cfg.stages * 2 * cfg.keys * cfg.head_dim * (cfg.fp8 ? 1 : 2))
            << "STAGES tiles of K and V";
        for (int j = 0; j < i; j++)
            EXPECT_STRNE(cfg.name, gk_paged_decode_config_info(j).name) << "two configurations of one name";
    }
    for (int fp8 : {0, 1})
        for (int d = fp8 ? 16 : 8; d <= 256; d += fp8 ? 16 : 8) {
            bool found = false;
            for (int i = 0; i < n && !found; i++) {
                const gk_paged_decode_config cfg = gk_paged_decode_config_info(i);
                found = cfg.fp8 == fp8 && cfg.head_dim >= d;
            }
            EXPECT_TRUE(found) << "no configuration runs D " << d << (fp8 ? " (e4m3 cache)" : "");
        }
    for (int bad : {-1, n, n + 1, 1 << 30, INT_MIN}) EXPECT_EQ(gk_paged_decode_config_info(bad).name, nullptr) << bad;
}

// The ledger: FLOPs 4 Hq D per (query, visible key) pair, counted here pair by pair over the mask;
// bytes q and out once each (16-bit), the k and v rows of every key (host lengths, or max_seq_len
// each without them) in the cache's dtype, and the lengths.
TEST(PagedDecodeLedger, FlopsAndBytes)
{
    const std::vector<int> lens = {0, 1, 3, 16, 17, 300, 5000};
    for (int dt : {GK_BF16, GK_F16})
        for (int cdt : {dt, (int)GK_E4M3})
            for (int nq : {1, 4, 16})
                for (int wl : {-1, 0, 5, 1000})
                    for (int host : {0, 1}) {
                        gk_paged_decode_params p = gk_paged_decode_params_dense((int)lens.size(), 32, 8, 128, nq, nullptr, 0,
                                                                                nullptr, 5000);
                        p.window_left = wl;
                        double pairs = 0, keys = 0;
                        for (int L : lens) {
                            const int len = host ? L : 5000;
                            keys += len;
                            for (int i = 0; i < nq; i++)
                                for (int j = 0; j < len; j++) {
                                    const int pos = len - nq + i;
                                    pairs += j <= pos && (wl < 0 || pos - j <= wl);
                                }
                        }
                        const gk_ledger l = gk_paged_decode_ledger(&p, dt, cdt, host ? lens.data() : nullptr);
                        const double cs = cdt == GK_E4M3 ? 1 : 2, B = (double)lens.size();
                        SCOPED_TRACE(std::string(gk_dtype_name(dt)) + " cache " + gk_dtype_name(cdt) + " nq " +
                                     std::to_string(nq) + " window " + std::to_string(wl) + " host lens " +
                                     std::to_string(host));
                        EXPECT_EQ(l.flops, 4.0 * pairs * 32 * 128);
                        EXPECT_EQ(l.bytes, keys * 8 * 128 * cs * 2 + 2.0 * B * nq * 32 * 128 * 2 + B * 4);
                    }
    const gk_ledger none = gk_paged_decode_ledger(nullptr, GK_BF16, GK_BF16, nullptr);
    EXPECT_EQ(none.flops, 0.0);
    EXPECT_EQ(none.bytes, 0.0);
    gk_paged_decode_params p = gk_paged_decode_params_dense(0, 32, 8, 128, 1, nullptr, 0, nullptr, 5000);
    EXPECT_EQ(gk_paged_decode_ledger(&p, GK_BF16, GK_BF16, nullptr).bytes, 0.0);
}

// ------------------------------------------------------------------ decode validation

// Every call below has fake device addresses (kFake) and fails validation. An argument is shown
// accepted through gk_paged_decode_ex with a configuration index past the last, which is checked
// after every argument (the call then fails naming the configuration).
struct DecodeArgs {
    int config = -1, splits = 0, dtype = GK_BF16;
    void *out = kFake;
    float *lse = (float *)(kFake + (64 << 20));
    const void *q = kFake + (128 << 20);
    gk_paged_kv c;
    gk_paged_decode_params p;
    void *ws = nullptr;
    size_t ws_bytes = 0;
    bool null_params = false, null_cache = false;
    DecodeArgs(int dt, int cache_dt = -1)
    {
        dtype = dt;
        c = gk_paged_kv_dense(kFake + (192 << 20), kFake + (256 << 20), cache_dt < 0 ? dt : cache_dt, 50, 16, 2, 128);
        if (c.dtype == GK_E4M3) {
            c.k_scale = 0.5f;
            c.v_scale = 0.25f;
        }
        p = gk_paged_decode_params_dense(3, 8, 2, 128, 2, (const int *)(kFake + (320 << 20)), 8,
                                         (const int *)(kFake + (324 << 20)), 100);
    }
    // Another shape: q, out, the cache and max_seq_len follow it.
    void shape(int B, int hq, int hkv, int d, int nq, int max_len = 100)
    {
        p = gk_paged_decode_params_dense(B, hq, hkv, d, nq, p.block_table, (max_len + c.block_size - 1) / c.block_size,
                                         p.seq_lens, max_len);
        c.heads_kv = hkv;
        c.head_dim = d;
        c.k_head_stride = c.v_head_stride = d;
        c.k_slot_stride = c.v_slot_stride = (int64_t)hkv * d;
        c.k_block_stride = c.v_block_stride = (int64_t)c.block_size * hkv * d;
    }
};

static cudaError_t decode_call_bf16(const DecodeArgs &a)
{
    return gk_paged_decode_bf16((gk_bf16 *)a.out, a.lse, (const gk_bf16 *)a.q, a.null_cache ? nullptr : &a.c,
                                a.null_params ? nullptr : &a.p, a.ws, a.ws_bytes, 0);
}
static cudaError_t decode_call_f16(const DecodeArgs &a)
{
    return gk_paged_decode_f16((gk_f16 *)a.out, a.lse, (const gk_f16 *)a.q, a.null_cache ? nullptr : &a.c,
                               a.null_params ? nullptr : &a.p, a.ws, a.ws_bytes, 0);
}
static cudaError_t decode_call_ex(const DecodeArgs &a)
{
    return gk_paged_decode_ex(a.config, a.splits, a.dtype, a.out, a.lse, a.q, a.null_cache ? nullptr : &a.c,
                              a.null_params ? nullptr : &a.p, a.ws, a.ws_bytes, 0);
}

struct DecodeCase {
    const char *name;
    cudaError_t (*call)(const DecodeArgs &);
    int dtype;
    const char *fn; // the public name the failure reason starts with
};

static const DecodeCase kDecodeCases[] = {
    {"bf16", decode_call_bf16, GK_BF16, "gk_paged_decode_bf16: "},
    {"f16", decode_call_f16, GK_F16, "gk_paged_decode_f16: "},
    {"ex_bf16", decode_call_ex, GK_BF16, "gk_paged_decode_ex: "},
    {"ex_f16", decode_call_ex, GK_F16, "gk_paged_decode_ex: "},
};

class PagedDecodeValidation : public ::testing::TestWithParam<int> {
  protected:
    const DecodeCase &c() const { return kDecodeCases[GetParam()]; }
    bool ex() const { return c().call == decode_call_ex; }
    DecodeArgs valid(int cache_dt = -1) const { return DecodeArgs(c().dtype, cache_dt); }
    DecodeArgs fp8() const { return DecodeArgs(c().dtype, GK_E4M3); }
    // The call fails with cudaErrorInvalidValue and a reason that starts with the public name and
    // holds `needle`.
    void rejected(const DecodeArgs &a, const std::string &needle, const std::string &what)
    {
        EXPECT_EQ(c().call(a), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find(needle), std::string::npos) << c().name << ": " << what << ": reason was \"" << r
                                                    << "\", want \"" << needle << "\"";
        EXPECT_EQ(r.rfind(c().fn, 0), 0u) << c().name << ": " << what << ": reason was \"" << r << "\"";
    }
    // Every argument passes: the call gets as far as the configuration index.
    void accepted(DecodeArgs a, const std::string &what)
    {
        a.config = gk_paged_decode_config_count();
        EXPECT_EQ(decode_call_ex(a), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find("configuration " + std::to_string(a.config)), std::string::npos)
            << c().name << ": " << what << " (accepted: only the configuration index refused): reason was \"" << r << "\"";
    }
};

TEST_P(PagedDecodeValidation, ValidArgumentsPass)
{
    DecodeArgs a = valid();
    accepted(a, "the valid arguments");
    a = valid(); a.lse = nullptr; accepted(a, "lse NULL");
    a = valid(); a.p.alibi_slopes = (const float *)(kFake + (328 << 20)); a.p.error_flag = (int *)(kFake + (332 << 20));
    accepted(a, "ALiBi slopes and an error flag");
    a = valid(); a.p.host_seq_lens = (const int *)&a; accepted(a, "host lengths");
    a = valid(); a.p.softcap = 50.0f; a.p.scale = 0.01f; a.p.window_left = 0; accepted(a, "softcap 50, scale 0.01, window 0");
    a = valid(); a.p.window_left = 1 << 30; accepted(a, "window 2^30");
    a = fp8(); accepted(a, "e4m3 cache");
    a = valid(); a.c.k_scale = 0.0f; a.c.v_scale = -1.0f; accepted(a, "16-bit cache, scales 0 and -1 ignored");
    for (int d : {8, 16, 40, 64, 72, 96, 128, 200, 248, 256}) {
        a = valid(); a.shape(3, 8, 2, d, 2); accepted(a, "D " + std::to_string(d));
    }
    for (int d : {16, 48, 64, 80, 128, 240, 256}) {
        a = fp8(); a.shape(3, 8, 2, d, 2); accepted(a, "e4m3 cache, D " + std::to_string(d));
    }
    for (int bs : {1, 2, 16, 64, 256}) {
        a = valid(); a.c.block_size = bs;
        a.c.k_block_stride = a.c.v_block_stride = (int64_t)bs * 2 * 128;
        a.p.block_table_stride = (100 + bs - 1) / bs;
        accepted(a, "block_size " + std::to_string(bs));
    }
    for (int nq : {1, 3, 16}) {
        a = valid(); a.shape(3, 8, 2, 128, nq); accepted(a, "queries " + std::to_string(nq));
    }
    a = valid(); a.shape(3, 8, 8, 128, 2); accepted(a, "Hq = Hkv");
    a = valid(); a.shape(3, 8, 1, 128, 2); accepted(a, "Hkv 1");
    a = valid(); a.shape(1, 64, 1, 128, 16); accepted(a, "a group of 64 with 16 queries: 1024 rows a kv head");
    a = valid(); a.shape(65535, 1, 1, 64, 1); accepted(a, "batch 65535");
    a = valid(); a.p.max_seq_len = 0; a.p.block_table_stride = 0; accepted(a, "max_seq_len 0, table stride 0");
    a = valid(); a.p.block_table_stride = 1000; accepted(a, "a wider block table");
    a = valid(); a.c.num_blocks = 1; accepted(a, "one cache block");
    // padded q, out and cache strides (16 bytes: 8 elements, 16 in an fp8 cache)
    a = valid();
    a.p.q_head_stride = a.p.out_head_stride = 136;
    a.p.q_row_stride = 8 * 136 + 8;
    a.p.out_row_stride = 8 * 136 + 16;
    a.p.q_batch_stride = 2 * a.p.q_row_stride + 24;
    a.p.out_batch_stride = 2 * a.p.out_row_stride + 8;
    a.c.k_head_stride = 136;
    a.c.k_slot_stride = 2 * 136 + 8;
    a.c.k_block_stride = 16 * (2 * 136 + 8) + 64;
    a.c.v_slot_stride = 2 * 128 + 24;
    a.c.v_block_stride = 16 * (2 * 128 + 24);
    accepted(a, "padded strides");
    a = fp8(); a.c.k_head_stride = a.c.v_head_stride = 144; a.c.k_slot_stride = a.c.v_slot_stride = 2 * 144 + 16;
    a.c.k_block_stride = a.c.v_block_stride = 16 * (2 * 144 + 16);
    accepted(a, "padded e4m3 cache");
    // q may repeat rows (zero strides); out's strides that do not move over one row and head
    a = valid(); a.p.q_head_stride = 0; a.p.q_row_stride = 0; accepted(a, "q head and row strides 0");
    a = valid(); a.shape(1, 1, 1, 128, 1);
    a.p.out_head_stride = a.p.out_row_stride = a.p.out_batch_stride = 0;
    accepted(a, "out strides 0 over one sequence, query and head");
    // k and v caches may share a buffer (FlashInfer's [blocks][2][block_size][Hkv][D])
    a = valid(); a.c.v_cache = (char *)a.c.k_cache + 2 * 16 * 2 * 128;
    a.c.k_block_stride = a.c.v_block_stride = 2 * 16 * 2 * 128;
    accepted(a, "interleaved k and v caches");
    // lse at 4 bytes, q and out at 16
    a = valid(); a.lse = (float *)((char *)a.lse + 4); a.q = (const char *)a.q + 16; a.out = (char *)a.out + 48;
    accepted(a, "lse + 4, q + 16, out + 48 bytes");
    // a workspace (256-byte aligned) of any size
    a = valid(); a.ws = kFake + (400 << 20); a.ws_bytes = 1; accepted(a, "a workspace of 1 byte");
}

// Through gk_paged_decode_ex, every configuration on its own D and cache type, with 3 splits and a
// workspace, passes every check. Shown where there is no GPU only: the call then stops at the CUDA
// runtime, with another error than cudaErrorInvalidValue (a GPU host would launch on the fake
// addresses).
TEST_P(PagedDecodeValidation, EveryConfigOnItsOwnD)
{
    std::string why;
    if (!ex() || gk_test_gpu_available(&why)) return;
    for (int cfg = 0; cfg < gk_paged_decode_config_count(); cfg++) {
        const gk_paged_decode_config info = gk_paged_decode_config_info(cfg);
        DecodeArgs a = info.fp8 ? fp8() : valid();
        a.shape(3, 8, 2, info.head_dim, 2);
        a.config = cfg;
        a.splits = 3;
        a.ws = kFake + (400 << 20);
        a.ws_bytes = 1 << 20;
        const cudaError_t err = decode_call_ex(a);
        const std::string r = gk_failure_reason();
        EXPECT_NE(err, cudaErrorInvalidValue) << info.name << " refused: " << r;
        EXPECT_NE(err, cudaSuccess) << info.name << ": launched without a GPU?";
        EXPECT_EQ(r.rfind(c().fn, 0), 0u) << "the CUDA error is named after the call: \"" << r << "\"";
    }
}

TEST_P(PagedDecodeValidation, NullPointers)
{
    DecodeArgs a = valid();
    a = valid(); a.null_params = true; rejected(a, "'params' is a null pointer", "params NULL");
    a = valid(); a.null_cache = true; rejected(a, "'cache' is a null pointer", "cache NULL");
    a = valid(); a.out = nullptr; rejected(a, "'out' is a null pointer", "out NULL");
    a = valid(); a.q = nullptr; rejected(a, "'q' is a null pointer", "q NULL");
    a = valid(); a.c.k_cache = nullptr; rejected(a, "'k_cache' is a null pointer", "k_cache NULL");
    a = valid(); a.c.v_cache = nullptr; rejected(a, "'v_cache' is a null pointer", "v_cache NULL");
    a = valid(); a.p.block_table = nullptr; rejected(a, "'block_table' is a null pointer", "block_table NULL");
    a = valid(); a.p.seq_lens = nullptr; rejected(a, "'seq_lens' is a null pointer", "seq_lens NULL");
}

TEST_P(PagedDecodeValidation, Sizes)
{
    DecodeArgs a = valid();
    a = valid(); a.p.batch = -1; rejected(a, "'batch' is -1", "batch -1");
    a = valid(); a.shape(65536, 1, 1, 64, 1); rejected(a, "batch 65536", "batch 65536");
    a = valid(); a.p.heads_q = 0; rejected(a, "'heads_q' is 0", "heads_q 0");
    a = valid(); a.p.heads_q = -8; rejected(a, "'heads_q' is -8", "heads_q -8");
    a = valid(); a.p.heads_kv = a.c.heads_kv = 0; rejected(a, "'heads_kv' is 0", "heads_kv 0");
    a = valid(); a.p.heads_kv = a.c.heads_kv = -2; rejected(a, "'heads_kv' is -2", "heads_kv -2");
    a = valid(); a.p.heads_kv = a.c.heads_kv = 3; rejected(a, "heads_q (8) is not a multiple of heads_kv (3)", "Hq 8, Hkv 3");
    a = valid(); a.p.heads_kv = a.c.heads_kv = 16; rejected(a, "heads_q (8) is not a multiple of heads_kv (16)", "Hq 8, Hkv 16");
    for (int nq : {0, -1, 17, 64}) {
        a = valid(); a.p.queries = nq; rejected(a, "queries " + std::to_string(nq), "queries " + std::to_string(nq));
    }
    a = valid(); a.p.max_seq_len = -1; rejected(a, "'max_seq_len' is -1", "max_seq_len -1");
    a = valid(); a.p.block_table_stride = 6; rejected(a, "block_table_stride 6", "table stride 6 < ceil(100 / 16)");
    a = valid(); a.p.block_table_stride = 7; accepted(a, "table stride 7 = ceil(100 / 16)");
    a = valid(); a.p.max_seq_len = 129; rejected(a, "block_table_stride 8 is under ceil(max_seq_len / block_size) = 9", "max_seq_len 129 over 8 blocks of 16");
    a = valid(); a.p.max_seq_len = 128; accepted(a, "max_seq_len 128 over 8 blocks of 16");
    a = valid(); a.p.block_table_stride = -1; a.p.max_seq_len = 0; rejected(a, "block_table_stride -1", "table stride -1");
    a = valid(); a.c.num_blocks = 0; rejected(a, "'num_blocks' is 0", "num_blocks 0");
    a = valid(); a.c.num_blocks = -3; rejected(a, "'num_blocks' is -3", "num_blocks -3");
    for (int bs : {0, 3, 12, 512, -16, 1000}) {
        a = valid(); a.c.block_size = bs;
        rejected(a, "block_size " + std::to_string(bs) + " is not a power of two from 1 to 256", "block_size " + std::to_string(bs));
    }
    // the grid's y extent: kv heads times blocks of 16 rows
    a = valid(); a.shape(1, 70000, 70000, 64, 1); accepted(a, "Hkv 70000 (the grid takes the kv heads in x)");
    a = valid(); a.shape(1, 65535, 65535, 64, 1); accepted(a, "Hkv 65535");
}

TEST_P(PagedDecodeValidation, HeadDimsAndCache)
{
    for (int d : {0, -8, 4, 12, 100, 260, 264, 512}) {
        DecodeArgs a = valid();
        a.p.head_dim = a.c.head_dim = d;
        rejected(a, "head_dim " + std::to_string(d) + " is not supported", "D " + std::to_string(d));
    }
    for (int d : {8, 24, 40, 72, 264}) { // an e4m3 cache needs multiples of 16
        DecodeArgs a = fp8();
        a.shape(3, 8, 2, d, 2);
        rejected(a, "head_dim " + std::to_string(d) + " is not supported", "e4m3 cache, D " + std::to_string(d));
    }
    // the cache's heads and head dim must be the problem's
    DecodeArgs a = valid();
    a = valid(); a.c.heads_kv = 1; rejected(a, "the cache holds 1 heads of 128, the problem 2 heads of 128", "cache Hkv 1");
    a = valid(); a.c.head_dim = 64; rejected(a, "the cache holds 2 heads of 64", "cache D 64");
    // the cache's dtype: q's or e4m3
    const int other = c().dtype == GK_BF16 ? GK_F16 : GK_BF16;
    for (int cdt : {(int)GK_F32, other, (int)GK_E5M2}) {
        a = valid(); a.c.dtype = cdt;
        rejected(a, std::string("cache dtype ") + gk_dtype_name(cdt), std::string("cache ") + gk_dtype_name(cdt));
    }
    a = valid(); a.c.dtype = 9; rejected(a, "cache dtype", "cache dtype 9");
    a = fp8(); a.c.k_scale = 0.0f; rejected(a, "an fp8 cache needs k_scale and v_scale > 0", "k_scale 0");
    a = fp8(); a.c.v_scale = -1.0f; rejected(a, "k_scale and v_scale > 0", "v_scale -1");
    a = fp8(); a.c.k_scale = NAN; rejected(a, "k_scale and v_scale > 0", "k_scale NaN");
}

TEST_P(PagedDecodeValidation, Flags)
{
    DecodeArgs a = valid();
    a = valid(); a.p.softcap = -30.0f; rejected(a, "softcap", "softcap -30");
    a = valid(); a.p.softcap = NAN; rejected(a, "softcap", "softcap NaN");
    a = valid(); a.p.scale = -0.5f; rejected(a, "scale -0.5 is not finite and >= 0", "scale -0.5");
    a = valid(); a.p.scale = INFINITY; rejected(a, "is not finite and >= 0", "scale inf");
    a = valid(); a.p.scale = NAN; rejected(a, "scale", "scale NaN");
    a = valid(); a.ws = kFake + (400 << 20) + 16; a.ws_bytes = 1 << 20; rejected(a, "workspace", "workspace + 16 bytes");
    a = valid(); a.ws = kFake + (400 << 20) + 128; a.ws_bytes = 1 << 20; rejected(a, "256-byte aligned", "workspace + 128 bytes");
    if (!ex()) return;
    a = valid(); a.dtype = GK_F32; rejected(a, "dtype", "dtype f32");
    a = valid(); a.dtype = GK_E4M3; rejected(a, "dtype", "dtype e4m3");
    a = valid(); a.config = -2; rejected(a, "configuration -2", "config -2");
    a = valid(); a.config = gk_paged_decode_config_count(); rejected(a, "configuration", "config count");
    a = valid(); a.splits = -1; rejected(a, "splits is -1", "splits -1");
    a = valid(); a.splits = 1 << 20; rejected(a, "splits is 1048576", "splits 2^20");
    // a configuration built for a smaller D, or for the other kind of cache
    for (int cfg = 0; cfg < gk_paged_decode_config_count(); cfg++) {
        const gk_paged_decode_config info = gk_paged_decode_config_info(cfg);
        if (info.head_dim < 256) {
            a = info.fp8 ? fp8() : valid();
            a.shape(3, 8, 2, info.head_dim + 16, 2);
            a.config = cfg;
            rejected(a, std::string("configuration ") + info.name + " is built for D <= " + std::to_string(info.head_dim),
                     std::string("config ") + info.name + ", D + 16");
        }
        a = info.fp8 ? valid() : fp8();
        a.shape(3, 8, 2, info.head_dim, 2);
        a.config = cfg;
        rejected(a, std::string("configuration ") + info.name + " is built for",
                 std::string("config ") + info.name + (info.fp8 ? ", a 16-bit cache" : ", an e4m3 cache"));
    }
}

TEST_P(PagedDecodeValidation, Strides)
{
    const char *names[6] = {"q_batch_stride", "q_row_stride", "q_head_stride", "out_batch_stride", "out_row_stride",
                            "out_head_stride"};
    for (int i = 0; i < 6; i++)
        for (int64_t delta : {4, 1, -1}) {
            DecodeArgs a = valid();
            int64_t *s[6] = {&a.p.q_batch_stride, &a.p.q_row_stride, &a.p.q_head_stride, &a.p.out_batch_stride,
                             &a.p.out_row_stride, &a.p.out_head_stride};
            *s[i] += delta;
            rejected(a, "'" + std::string(names[i]) + "' is " + std::to_string(*s[i]) + ", not a multiple of 8",
                     std::string(names[i]) + " + " + std::to_string(delta));
        }
    for (int i = 0; i < 6; i++) {
        DecodeArgs a = valid();
        int64_t *s[6] = {&a.p.q_batch_stride, &a.p.q_row_stride, &a.p.q_head_stride, &a.p.out_batch_stride,
                         &a.p.out_row_stride, &a.p.out_head_stride};
        *s[i] = -*s[i];
        rejected(a, "'" + std::string(names[i]) + "' is " + std::to_string(*s[i]) + "; it must be >= 0",
                 std::string(names[i]) + " negative");
    }
    const char *cnames[6] = {"k_block_stride", "k_slot_stride", "k_head_stride (cache)",
                             "v_block_stride", "v_slot_stride", "v_head_stride (cache)"};
    for (int i = 0; i < 6; i++)
        for (int e4m3 : {0, 1}) {
            DecodeArgs a = e4m3 ? fp8() : valid();
            int64_t *s[6] = {&a.c.k_block_stride, &a.c.k_slot_stride, &a.c.k_head_stride,
                             &a.c.v_block_stride, &a.c.v_slot_stride, &a.c.v_head_stride};
            *s[i] += e4m3 ? 8 : 4; // 8 bytes either way: half a 16-byte chunk
            rejected(a, "'" + std::string(cnames[i]) + "' is " + std::to_string(*s[i]) + ", not a multiple of " +
                            (e4m3 ? "16" : "8"),
                     std::string(cnames[i]) + (e4m3 ? " + 8 (e4m3)" : " + 4"));
            *s[i] = -(*s[i] - (e4m3 ? 8 : 4));
            rejected(a, "'" + std::string(cnames[i]) + "' is " + std::to_string(*s[i]) + "; it must be >= 0",
                     std::string(cnames[i]) + " negative");
        }
}

TEST_P(PagedDecodeValidation, Alignment)
{
    DecodeArgs a = valid();
    for (int off : {2, 8}) {
        const std::string o = " + " + std::to_string(off) + " bytes";
        a = valid(); a.out = (char *)a.out + off; rejected(a, "'out'", "out" + o);
        a = valid(); a.q = (const char *)a.q + off; rejected(a, "'q'", "q" + o);
        a = valid(); a.c.k_cache = (char *)a.c.k_cache + off; rejected(a, "'k_cache'", "k_cache" + o);
        a = valid(); a.c.v_cache = (char *)a.c.v_cache + off; rejected(a, "'v_cache'", "v_cache" + o);
        EXPECT_NE(std::string(gk_failure_reason()).find("16-byte aligned"), std::string::npos) << gk_failure_reason();
        a = fp8(); a.c.k_cache = (char *)a.c.k_cache + off; rejected(a, "'k_cache'", "e4m3 k_cache" + o);
        EXPECT_NE(std::string(gk_failure_reason()).find("16-byte aligned"), std::string::npos) << gk_failure_reason();
    }
    a = valid(); a.lse = (float *)((char *)a.lse + 2); rejected(a, "'lse'", "lse + 2 bytes");
    a = valid(); a.p.block_table = (const int *)((const char *)a.p.block_table + 2); rejected(a, "'block_table'", "block_table + 2");
    a = valid(); a.p.seq_lens = (const int *)((const char *)a.p.seq_lens + 1); rejected(a, "'seq_lens'", "seq_lens + 1");
    a = valid(); a.p.alibi_slopes = (const float *)(kFake + (328 << 20) + 2); rejected(a, "'alibi_slopes'", "alibi + 2");
    a = valid(); a.p.error_flag = (int *)(kFake + (332 << 20) + 2); rejected(a, "'error_flag'", "error_flag + 2");
}

TEST_P(PagedDecodeValidation, Aliasing)
{
    DecodeArgs a = valid();
    // out's rows on one address
    a = valid(); a.p.out_head_stride = 0; rejected(a, "out's strides alias", "out head stride 0");
    a = valid(); a.p.out_head_stride = 64; rejected(a, "out's strides alias", "out head stride 64 < D");
    a = valid(); a.p.out_row_stride = 7 * 128; rejected(a, "out's strides alias", "out row stride under Hq D");
    a = valid(); a.p.out_batch_stride = 128 * 8; rejected(a, "out's strides alias", "out batch stride under nq Hq D");
    // [B][Hq][nq][D] is a layout of distinct rows: accepted
    a = valid(); a.p.out_head_stride = 2 * 128; a.p.out_row_stride = 128; a.p.out_batch_stride = 8 * 2 * 128;
    accepted(a, "out as [B][Hq][nq][D]");
    // out overlapping q or lse
    a = valid(); a.out = (void *)a.q; rejected(a, "'out' and 'q' overlap", "out = q");
    a = valid(); a.out = (char *)a.q + 4096; rejected(a, "'out' and 'q' overlap", "out inside q");
    a = valid(); a.q = (const char *)a.out + 2 * 3 * 2 * 8 * 128; accepted(a, "q just past out");
    a = valid(); a.lse = (float *)a.out; rejected(a, "'out' and 'lse' overlap", "lse = out");
    a = valid(); a.lse = (float *)((char *)a.out + 2 * 3 * 2 * 8 * 128 - 16); rejected(a, "'out' and 'lse' overlap", "lse at out's end");
    a = valid(); a.lse = (float *)a.q; rejected(a, "'lse' and 'q' overlap", "lse = q");
}

TEST_P(PagedDecodeValidation, NoSequences)
{
    DecodeArgs e = valid();
    e.p.batch = 0;
    e.out = nullptr;
    e.q = nullptr;
    e.lse = nullptr;
    e.p.block_table = e.p.seq_lens = nullptr;
    e.c.k_cache = e.c.v_cache = nullptr;
    EXPECT_EQ(c().call(e), cudaSuccess) << gk_failure_reason();
    EXPECT_STREQ(gk_failure_reason(), "") << "a successful call clears the reason";
    // nothing past the batch is inspected: shapes, cache, flags
    DecodeArgs a = e;
    a.p.head_dim = 12; a.p.heads_kv = 3; a.p.queries = 40; a.c.dtype = GK_F32; a.c.block_size = 3; a.p.softcap = -1;
    a.p.q_row_stride = 5;
    EXPECT_EQ(c().call(a), cudaSuccess) << gk_failure_reason();
    // but params and cache must be there, and the batch not negative
    a = e; a.null_params = true; rejected(a, "'params' is a null pointer", "B 0, params NULL");
    a = e; a.null_cache = true; rejected(a, "'cache' is a null pointer", "B 0, cache NULL");
    // after a refused call the reason is cleared by the next successful one
    a = valid(); a.p.heads_kv = a.c.heads_kv = 3;
    EXPECT_EQ(c().call(a), cudaErrorInvalidValue);
    EXPECT_STRNE(gk_failure_reason(), "");
    EXPECT_EQ(c().call(e), cudaSuccess);
    EXPECT_STREQ(gk_failure_reason(), "");
}

INSTANTIATE_TEST_SUITE_P(Entry, PagedDecodeValidation, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kDecodeCases[i.param].name); });
