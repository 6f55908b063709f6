// Host tests of gk_paged.cuh: gk_rope_freq against the Llama-3.1 formula written out again
// (paged_ref.h), the reference's rotation against the rotation's algebra, gk_paged_kv_dense's and
// gk_rope_default's fields, the ledger, and argument validation of both launchers (it runs before
// any CUDA call, so these pass on a machine without a GPU).
#define GK_IMPLEMENTATION
#include "gk/gk_paged.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/paged_ref.h"

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
