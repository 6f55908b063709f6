// Host tests of gk_core.cuh: conversions, packing, helpers, validation and the ledger.
// No CUDA call is made: these run on machines without a GPU.
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_core.cuh"
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
