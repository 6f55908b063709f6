// Host tests of gk_core.cuh: conversions, packing, helpers, validation and the ledger.
// No CUDA call is made: these run on machines without a GPU.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_core.cuh"
#include "gk_tests/gk_rne.h"
#include "gk_tests/gk_test.h"

#include <cmath>
#include <cstring>
#include <string>

static uint16_t bits_bf16(gk_bf16 h) { uint16_t b; memcpy(&b, &h, 2); return b; }
static uint16_t bits_f16(gk_f16 h) { uint16_t b; memcpy(&b, &h, 2); return b; }

TEST(CoreDtype, SizesAndNames)
{
    EXPECT_EQ(gk_dtype_size(GK_F32), 4);
    EXPECT_EQ(gk_dtype_size(GK_BF16), 2);
    EXPECT_EQ(gk_dtype_size(GK_F16), 2);
    EXPECT_EQ(gk_dtype_size(GK_E4M3), 1);
    EXPECT_EQ(gk_dtype_size(GK_E5M2), 1);
    EXPECT_STREQ(gk_dtype_name(GK_BF16), "bf16");
    EXPECT_STREQ(gk_dtype_name(GK_E5M2), "e5m2");
}

TEST(CoreConvert, Bf16RoundsToNearestEven)
{
    // bf16 keeps 7 mantissa bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (odd): goes to 1.
    EXPECT_EQ(bits_bf16(gk_f32_to_bf16(1.0f + 0x1p-8f)), 0x3f80);
    // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up.
    EXPECT_EQ(bits_bf16(gk_f32_to_bf16(1.0f + 3 * 0x1p-8f)), 0x3f82);
    EXPECT_EQ(gk_bf16_to_f32(gk_f32_to_bf16(-2.5f)), -2.5f);
    EXPECT_TRUE(std::isnan(gk_bf16_to_f32(gk_f32_to_bf16(NAN))));
    EXPECT_TRUE(std::isinf(gk_bf16_to_f32(gk_f32_to_bf16(INFINITY))));
}

TEST(CoreConvert, F16RoundsAndOverflows)
{
    EXPECT_EQ(bits_f16(gk_f32_to_f16(1.0f)), 0x3c00);
    EXPECT_EQ(bits_f16(gk_f32_to_f16(65504.0f)), 0x7bff);       // largest finite
    EXPECT_TRUE(std::isinf(gk_f16_to_f32(gk_f32_to_f16(7e4f)))); // f16 casts overflow to inf
    EXPECT_EQ(gk_f16_to_f32(gk_f32_to_f16(0.1f)), 0.0999755859375f);
}

// OCP 8-bit floating point spec (v1.0) values.
TEST(CoreConvert, Fp8E4M3MatchesOcpSpec)
{
    EXPECT_EQ(gk_f32_to_e4m3(1.0f), 0x38);
    EXPECT_EQ(gk_f32_to_e4m3(448.0f), 0x7e);      // max normal S.1111.110
    EXPECT_EQ(gk_e4m3_to_f32(0x7e), 448.0f);
    EXPECT_EQ(gk_e4m3_to_f32(0x01), 0x1p-9f);     // min subnormal
    EXPECT_EQ(gk_e4m3_to_f32(0x08), 0x1p-6f);     // min normal
    EXPECT_EQ(gk_f32_to_e4m3(1e6f), 0x7e);        // satfinite: never inf (E4M3 has none)
    EXPECT_EQ(gk_f32_to_e4m3(-1e6f), 0xfe);
    EXPECT_TRUE(std::isnan(gk_e4m3_to_f32(0x7f)));
    EXPECT_EQ(gk_f32_to_e4m3(1.0625f), 0x38);     // halfway 1 and 1.125: ties to even (1)
    EXPECT_EQ(gk_f32_to_e4m3(1.1875f), 0x3a);     // halfway 1.125 and 1.25: even is 1.25
}

TEST(CoreConvert, Fp8E5M2MatchesOcpSpec)
{
    EXPECT_EQ(gk_f32_to_e5m2(1.0f), 0x3c);
    EXPECT_EQ(gk_e5m2_to_f32(0x7b), 57344.0f);    // max normal
    EXPECT_EQ(gk_f32_to_e5m2(1e9f), 0x7b);        // satfinite
    EXPECT_TRUE(std::isinf(gk_e5m2_to_f32(0x7c)));
    EXPECT_EQ(gk_e5m2_to_f32(0x01), 0x1p-16f);    // min subnormal
}

TEST(CoreConvert, Fp8RoundTripEveryCode)
{
    for (int b = 0; b < 256; b++) {
        float v = gk_e4m3_to_f32((gk_e4m3)b);
        if (!std::isnan(v)) EXPECT_EQ(gk_e4m3_to_f32(gk_f32_to_e4m3(v)), v) << "e4m3 code " << b;
        float w = gk_e5m2_to_f32((gk_e5m2)b);
        if (!std::isnan(w) && !std::isinf(w)) EXPECT_EQ(gk_e5m2_to_f32(gk_f32_to_e5m2(w)), w) << "e5m2 code " << b;
    }
}

// ------------------------------------------------------------------ bit-exact conversions
// gk's conversions against the independent round-to-nearest-even reference (gk_rne.h): bit for
// bit, NaN for NaN (payload and sign are not part of the contract).

// The reference itself, against codes worked out by hand from the formats' definitions.
TEST(CoreConvertExact, ReferenceKnownCodes)
{
    auto to = [](float v, GkRneFormat f) { return gk_rne_from_f32(gk_rne_bits(v), f); };
    // bf16: 8 significant bits
    EXPECT_EQ(to(1.0f, kGkRneBf16), 0x3f80u);
    EXPECT_EQ(to(1.0f + 0x1p-8f, kGkRneBf16), 0x3f80u);          // tie, to even (down)
    EXPECT_EQ(to(1.0f + 3 * 0x1p-8f, kGkRneBf16), 0x3f82u);      // tie, to even (up)
    EXPECT_EQ(to(1.0f + 0x1p-8f + 0x1p-23f, kGkRneBf16), 0x3f81u); // past the tie
    EXPECT_EQ(to(-0.0f, kGkRneBf16), 0x8000u);
    EXPECT_EQ(gk_rne_from_f32(0x7f7fffffu, kGkRneBf16), 0x7f80u); // largest fp32 rounds past bf16's: inf
    EXPECT_EQ(gk_rne_from_f32(0x7f7f7fffu, kGkRneBf16), 0x7f7fu); // below the tie: largest finite
    EXPECT_EQ(gk_rne_from_f32(0x00000001u, kGkRneBf16), 0x0000u); // smallest subnormal: below half of bf16's
    EXPECT_EQ(gk_rne_from_f32(0x00008000u, kGkRneBf16), 0x0000u); // exactly half of bf16's smallest: to even 0
    EXPECT_EQ(gk_rne_from_f32(0x00018000u, kGkRneBf16), 0x0002u); // 1.5 of it: to even 2
    EXPECT_EQ(gk_rne_from_f32(0x807fffffu, kGkRneBf16), 0x8080u); // largest subnormal carries into the normals
    // f16: 11 significant bits, 65504 largest, 2^-24 smallest subnormal
    EXPECT_EQ(to(65504.0f, kGkRneF16), 0x7bffu);
    EXPECT_EQ(to(65519.0f, kGkRneF16), 0x7bffu);
    EXPECT_EQ(to(65520.0f, kGkRneF16), 0x7c00u); // the tie above the largest: to even, which is inf
    EXPECT_EQ(to(-1e9f, kGkRneF16), 0xfc00u);
    EXPECT_EQ(to(0x1p-24f, kGkRneF16), 0x0001u);
    EXPECT_EQ(to(0x1p-25f, kGkRneF16), 0x0000u);
    EXPECT_EQ(to(0x1.000002p-25f, kGkRneF16), 0x0001u);
    EXPECT_EQ(to(3 * 0x1p-25f, kGkRneF16), 0x0002u);
    EXPECT_EQ(to(0x1p-14f, kGkRneF16), 0x0400u); // smallest normal
    EXPECT_EQ(to(0.1f, kGkRneF16), 0x2e66u);
    // e4m3: 448 largest, no inf; satfinite
    EXPECT_EQ(to(448.0f, kGkRneE4m3), 0x7eu);
    EXPECT_EQ(to(464.0f, kGkRneE4m3), 0x7eu); // tie between 448 (even) and 480 (not a number)
    EXPECT_EQ(to(500.0f, kGkRneE4m3), 0x7eu);
    EXPECT_EQ(to(INFINITY, kGkRneE4m3), 0x7eu);
    EXPECT_EQ(to(-INFINITY, kGkRneE4m3), 0xfeu);
    EXPECT_EQ(to(0x1p-9f, kGkRneE4m3), 0x01u);
    EXPECT_EQ(to(0x1p-10f, kGkRneE4m3), 0x00u);
    EXPECT_EQ(to(-0x1p-10f, kGkRneE4m3), 0x80u);
    EXPECT_EQ(to(0x1.000002p-10f, kGkRneE4m3), 0x01u);
    EXPECT_EQ(to(3 * 0x1p-10f, kGkRneE4m3), 0x02u);
    EXPECT_EQ(to(0x1p-6f, kGkRneE4m3), 0x08u);
    EXPECT_EQ(to(1.0625f, kGkRneE4m3), 0x38u);
    EXPECT_EQ(to(1.1875f, kGkRneE4m3), 0x3au);
    EXPECT_TRUE(gk_rne_is_nan_code(to(NAN, kGkRneE4m3), kGkRneE4m3));
    // e5m2: 57344 largest; satfinite
    EXPECT_EQ(to(57344.0f, kGkRneE5m2), 0x7bu);
    EXPECT_EQ(to(61440.0f, kGkRneE5m2), 0x7bu);
    EXPECT_EQ(to(INFINITY, kGkRneE5m2), 0x7bu);
    EXPECT_EQ(to(0x1p-16f, kGkRneE5m2), 0x01u);
    EXPECT_EQ(to(0x1p-17f, kGkRneE5m2), 0x00u);
    EXPECT_EQ(to(1.125f, kGkRneE5m2), 0x3cu); // tie between 1 (even) and 1.25
    EXPECT_TRUE(gk_rne_is_nan_code(to(NAN, kGkRneE5m2), kGkRneE5m2));
    // widening
    EXPECT_EQ(gk_rne_to_f32(0x0001u, kGkRneF16), gk_rne_bits(0x1p-24f));
    EXPECT_EQ(gk_rne_to_f32(0x03ffu, kGkRneF16), gk_rne_bits(1023 * 0x1p-24f));
    EXPECT_EQ(gk_rne_to_f32(0xfbffu, kGkRneF16), gk_rne_bits(-65504.0f));
    EXPECT_EQ(gk_rne_to_f32(0x7c00u, kGkRneF16), 0x7f800000u);
    EXPECT_EQ(gk_rne_to_f32(0x0001u, kGkRneBf16), 0x00010000u);
    EXPECT_EQ(gk_rne_to_f32(0x7eu, kGkRneE4m3), gk_rne_bits(448.0f));
    EXPECT_EQ(gk_rne_to_f32(0x81u, kGkRneE4m3), gk_rne_bits(-0x1p-9f));
    EXPECT_EQ(gk_rne_to_f32(0x7cu, kGkRneE5m2), 0x7f800000u);
    EXPECT_EQ(gk_rne_to_f32(0x7bu, kGkRneE5m2), gk_rne_bits(57344.0f));
    EXPECT_EQ(gk_rne_e4m3_half_step(1.0), 0.0625);
    EXPECT_EQ(gk_rne_e4m3_half_step(448.0), 16.0);
    EXPECT_EQ(gk_rne_e4m3_half_step(0x1p-7), 0x1p-10);
}

// The fp32 inputs every narrowing test uses: the probe set and 2^20 random bit patterns.
static const std::vector<uint32_t> &probe_f32()
{
    static const std::vector<uint32_t> v = gk_rne_probe_f32(gk_test_seed(), (size_t)1 << 20);
    return v;
}

// Counts inputs where got(bits) differs from the reference; prints the first few.
static int64_t count_narrow_mismatches(const char *what, const std::vector<uint32_t> &in, GkRneFormat f,
                                       uint32_t (*got)(uint32_t))
{
    int64_t bad = 0;
    for (uint32_t u : in) {
        const uint32_t g = got(u), w = gk_rne_from_f32(u, f);
        if (gk_rne_same(g, w, f)) continue;
        if (bad++ < 8) printf("  %s: f32 0x%08x (%.9g) -> got 0x%x, want 0x%x\n", what, u, gk_rne_float(u), g, w);
    }
    return bad;
}

static uint32_t narrow_bf16(uint32_t u) { return bits_bf16(gk_f32_to_bf16(gk_rne_float(u))); }
static uint32_t narrow_f16(uint32_t u) { return bits_f16(gk_f32_to_f16(gk_rne_float(u))); }
static uint32_t narrow_e4m3(uint32_t u) { return gk_f32_to_e4m3(gk_rne_float(u)); }
static uint32_t narrow_e5m2(uint32_t u) { return gk_f32_to_e5m2(gk_rne_float(u)); }

// The probe set, and around every code of f the tie with the next (gk_rne_probe_grid).
static std::vector<uint32_t> probe_for(GkRneFormat f)
{
    std::vector<uint32_t> v = probe_f32(), grid = gk_rne_probe_grid(f);
    v.insert(v.end(), grid.begin(), grid.end());
    return v;
}

TEST(CoreConvertExact, F32ToBf16AndF16)
{
    EXPECT_EQ(count_narrow_mismatches("gk_f32_to_bf16", probe_for(kGkRneBf16), kGkRneBf16, narrow_bf16), 0);
    EXPECT_EQ(count_narrow_mismatches("gk_f32_to_f16", probe_for(kGkRneF16), kGkRneF16, narrow_f16), 0);
}

// Every code of each narrow format widened to fp32: exact.
TEST(CoreConvertExact, EveryCodeToF32)
{
    int64_t bad = 0;
    for (uint32_t k = 0; k < 65536; k++) {
        __nv_bfloat16_raw rb;
        __half_raw rh;
        rb.x = rh.x = (unsigned short)k;
        const gk_bf16 b(rb);
        const gk_f16 f(rh);
        const uint32_t gb = gk_rne_bits(gk_bf16_to_f32(b)), gf = gk_rne_bits(gk_f16_to_f32(f));
        const uint32_t wb = gk_rne_to_f32(k, kGkRneBf16), wf = gk_rne_to_f32(k, kGkRneF16);
        if (!gk_rne_same_f32(gb, wb) && bad++ < 8) printf("  bf16 0x%04x -> 0x%08x, want 0x%08x\n", k, gb, wb);
        if (!gk_rne_same_f32(gf, wf) && bad++ < 8) printf("  f16 0x%04x -> 0x%08x, want 0x%08x\n", k, gf, wf);
    }
    for (uint32_t k = 0; k < 256; k++) {
        const uint32_t g4 = gk_rne_bits(gk_e4m3_to_f32((gk_e4m3)k)), w4 = gk_rne_to_f32(k, kGkRneE4m3);
        const uint32_t g5 = gk_rne_bits(gk_e5m2_to_f32((gk_e5m2)k)), w5 = gk_rne_to_f32(k, kGkRneE5m2);
        if (!gk_rne_same_f32(g4, w4) && bad++ < 8) printf("  e4m3 0x%02x -> 0x%08x, want 0x%08x\n", k, g4, w4);
        if (!gk_rne_same_f32(g5, w5) && bad++ < 8) printf("  e5m2 0x%02x -> 0x%08x, want 0x%08x\n", k, g5, w5);
    }
    EXPECT_EQ(bad, 0);
}

TEST(CoreConvertExact, F32ToFp8)
{
    EXPECT_EQ(count_narrow_mismatches("gk_f32_to_e4m3", probe_for(kGkRneE4m3), kGkRneE4m3, narrow_e4m3), 0);
    EXPECT_EQ(count_narrow_mismatches("gk_f32_to_e5m2", probe_for(kGkRneE5m2), kGkRneE5m2, narrow_e5m2), 0);
}

TEST(CoreConvert, Int4PackUnpackEveryPair)
{
    for (int lo = -8; lo < 8; lo++)
        for (int hi = -8; hi < 8; hi++) {
            gk_int4x2 v = gk_int4x2_pack(lo, hi);
            EXPECT_EQ(gk_int4x2_lo(v), lo);
            EXPECT_EQ(gk_int4x2_hi(v), hi);
        }
    EXPECT_EQ(gk_int4x2_pack(1, -1), 0xf1); // low nibble first
}

TEST(CoreHelpers, CeilDivRoundUpAligned)
{
    EXPECT_EQ(gk_ceil_div(0, 8), 0);
    EXPECT_EQ(gk_ceil_div(1, 8), 1);
    EXPECT_EQ(gk_ceil_div(16, 8), 2);
    EXPECT_EQ(gk_ceil_div(17, 8), 3);
    EXPECT_EQ(gk_ceil_div((int64_t)1 << 40, 3), 366503875926LL);
    EXPECT_EQ(gk_round_up(17, 16), 32);
    EXPECT_TRUE(gk_is_aligned((void *)0x1000, 16));
    EXPECT_FALSE(gk_is_aligned((void *)0x1004, 16));
    EXPECT_TRUE(gk_is_aligned((void *)0x1004, 4));
}

TEST(CoreValidate, MessagesNameTheArgument)
{
    EXPECT_EQ(gk_check_ptr("f", "x", (void *)0x10), cudaSuccess);
    EXPECT_EQ(gk_check_ptr("gk_demo", "weight", nullptr), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("gk_demo: 'weight' is a null pointer"), std::string::npos)
        << gk_failure_reason();

    EXPECT_EQ(gk_check_nonneg("f", "n", 0), cudaSuccess);
    EXPECT_EQ(gk_check_nonneg("gk_demo", "n", -5), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'n' is -5"), std::string::npos) << gk_failure_reason();

    EXPECT_EQ(gk_check_positive("gk_demo", "cols", 0), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'cols' is 0; it must be > 0"), std::string::npos);

    EXPECT_EQ(gk_check_elem_aligned("gk_demo", "out", (void *)0x1002, 4), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'out'"), std::string::npos);
    EXPECT_EQ(gk_check_elem_aligned("f", "out", (void *)0x1004, 4), cudaSuccess);

    EXPECT_EQ(gk_check_fits_i32("f", "m", 2147483647LL), cudaSuccess);
    EXPECT_EQ(gk_check_fits_i32("gk_demo", "m", 2147483648LL), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("32-bit"), std::string::npos);
}

TEST(CoreValidate, OverlapRules)
{
    char *p = (char *)0x10000;
    EXPECT_EQ(gk_check_overlap("f", "a", p, 64, "b", p, 64), cudaSuccess);       // same range: in place
    EXPECT_EQ(gk_check_overlap("f", "a", p, 64, "b", p + 64, 64), cudaSuccess);  // adjacent
    EXPECT_EQ(gk_check_overlap("f", "a", p + 64, 64, "b", p, 64), cudaSuccess);
    EXPECT_EQ(gk_check_overlap("gk_demo", "out", p, 64, "in", p + 4, 64), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'out' and 'in' overlap"), std::string::npos);
    EXPECT_EQ(gk_check_overlap("f", "a", p, 64, "b", p, 128), cudaErrorInvalidValue); // same start, other size
}

TEST(CoreValidate, TryReturnsFirstError)
{
    struct Local {
        static cudaError_t run(const void *a, int64_t n)
        {
            GK_TRY(gk_check_ptr("gk_two", "a", a));
            GK_TRY(gk_check_nonneg("gk_two", "n", n));
            return cudaSuccess;
        }
    };
    EXPECT_EQ(Local::run(nullptr, -1), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'a'"), std::string::npos);
    EXPECT_EQ(Local::run((void *)0x10, -1), cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("'n'"), std::string::npos);
    EXPECT_EQ(Local::run((void *)0x10, 3), cudaSuccess);
}

TEST(CoreLedger, RooflineTakesTheLargerTerm)
{
    gk_ledger l;
    l.flops = 2.0 * 4096 * 4096 * 4096;      // a 4096^3 GEMM
    l.bytes = 3.0 * 4096 * 4096 * 2;
    // compute-bound: 137.4 GFLOP at 600 TFLOP/s = 229 us; bytes 100.7 MB at 4 TB/s = 25 us
    EXPECT_NEAR(gk_roofline_seconds(l, 600e12, 4e12), l.flops / 600e12, 1e-12);
    l.flops = 1e6;
    l.bytes = 3.0 * (1 << 30);               // memory-bound
    EXPECT_NEAR(gk_roofline_seconds(l, 50e12, 4e12), l.bytes / 4e12, 1e-12);
}
