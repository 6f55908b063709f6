// Host tests of gk_elementwise.cuh: argument validation for every public launcher (it runs before
// any CUDA call, so no GPU is needed), the ledger, and the CPU references against known values.
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
#include "gk_tests/elementwise_cases.h"
#include "gk_tests/gk_ref.h"
#include "gk_tests/gk_test.h"

#include <string>

// Fake device addresses: never dereferenced, since validation fails before anything launches.
static char *const kFake = (char *)0x10000000;

static std::string reason() { return gk_failure_reason(); }

static void expect_rejected(cudaError_t e, const char *fn_name, const char *needle)
{
    EXPECT_EQ(e, cudaErrorInvalidValue) << fn_name;
    EXPECT_NE(reason().find(needle), std::string::npos) << fn_name << ": reason was \"" << reason() << "\"";
}

class EwValidation : public ::testing::TestWithParam<int> {};

TEST_P(EwValidation, RejectsBadInputBeforeLaunch)
{
    const EwCase &c = kEwCases[GetParam()];
    const int so = gk_dtype_size(c.dt_out), s0 = gk_dtype_size(c.dt0);
    const int s1 = c.dt1 >= 0 ? gk_dtype_size(c.dt1) : 1;
    void *out = kFake;
    const void *a = c.in_place ? (const void *)kFake : (const void *)(kFake + (1 << 20));
    const void *b = kFake + (2 << 20);
    const int64_t n = 1000;

    expect_rejected(c.call(out, a, b, 1.0f, 1.0f, -1), c.name, "'n' is -1");
    expect_rejected(c.call(out, a, b, 1.0f, 1.0f, INT64_MAX), c.name, "more than 2^63 bytes");
    expect_rejected(c.call(nullptr, a, b, 1.0f, 1.0f, n), c.name, "is a null pointer");
    if (!c.in_place) expect_rejected(c.call(out, nullptr, b, 1.0f, 1.0f, n), c.name, "is a null pointer");
    if (c.dt1 >= 0) expect_rejected(c.call(out, a, nullptr, 1.0f, 1.0f, n), c.name, "is a null pointer");

    // pointers off their element alignment
    if (so > 1) expect_rejected(c.call(kFake + 1, c.in_place ? kFake + 1 : a, b, 1, 1, n), c.name, "not aligned");
    if (!c.in_place && s0 > 1) expect_rejected(c.call(out, (const char *)a + 1, b, 1, 1, n), c.name, "not aligned");
    if (c.dt1 >= 0 && s1 > 1) expect_rejected(c.call(out, a, (const char *)b + 1, 1, 1, n), c.name, "not aligned");

    // the output partially overlapping each input, starting 16 bytes after or before it (the
    // residual forms' first input is the output itself: only x can overlap it); the message names
    // the input that overlaps
    std::string overlap_a, overlap_b;
    for (int shift : {16, -16}) {
        if (!c.in_place) {
            expect_rejected(c.call((void *)((const char *)a + shift), a, b, 1, 1, n), c.name, "overlap");
            if (overlap_a.empty()) overlap_a = reason();
            EXPECT_EQ(reason(), overlap_a) << c.name;
        }
        if (c.dt1 >= 0) {
            expect_rejected(c.call((void *)((const char *)b + shift), a, b, 1, 1, n), c.name, "overlap");
            if (overlap_b.empty()) overlap_b = reason();
            EXPECT_EQ(reason(), overlap_b) << c.name;
        }
    }
    if (!c.in_place && c.dt1 >= 0) EXPECT_NE(overlap_a, overlap_b) << c.name << ": both overlaps reported alike";

    // n == 0 is a no-op that succeeds without inspecting pointers (empty tensors may be null)
    EXPECT_EQ(c.call(nullptr, nullptr, nullptr, 1, 1, 0), cudaSuccess) << c.name;

    // the message names the public function
    c.call(out, a, b, 1, 1, -7);
    EXPECT_EQ(reason().rfind(std::string("gk_") + c.name, 0), 0u) << reason();
}

INSTANTIATE_TEST_SUITE_P(AllLaunchers, EwValidation, ::testing::Range(0, kNumEwCases),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kEwCases[i.param].name); });

TEST(EwValidation, InPlaceOnlyWhereSameDtype)
{
    // same range and dtype: allowed by validation (it would launch, so only check the rule itself)
    EXPECT_EQ(gk_check_overlap("f", "out", kFake, 4000, "a", kFake, 4000), cudaSuccess);
    // a cast writing over its own input changes the element size: partial overlap, rejected
    expect_rejected(gk_cast_f32_to_bf16((gk_bf16 *)kFake, (const float *)kFake, 1000, 0), "cast", "overlap");
    expect_rejected(gk_cast_bf16_to_f32((float *)kFake, (const gk_bf16 *)kFake, 1000, 0), "cast", "overlap");
}

TEST(EwPackedValidation, RejectsBadShapesAndStrides)
{
    for (const EwPackedCase &c : kEwPackedCases) {
        const int s = gk_dtype_size(c.dt);
        void *out = kFake;
        const void *x = kFake + (64 << 20);
        expect_rejected(c.call(out, 64, x, 128, -1, 64), c.name, "'rows' is -1");
        expect_rejected(c.call(out, 64, x, 128, 8, -2), c.name, "'d' is -2");
        expect_rejected(c.call(nullptr, 64, x, 128, 8, 64), c.name, "'out' is a null pointer");
        expect_rejected(c.call(out, 64, nullptr, 128, 8, 64), c.name, "'x' is a null pointer");
        expect_rejected(c.call(out, 64, x, 127, 8, 64), c.name, "'ldx' is 127");
        expect_rejected(c.call(out, 63, x, 128, 8, 64), c.name, "'ldo' is 63");
        expect_rejected(c.call((char *)x + 128 * s, 64, x, 128, 8, 64), c.name, "overlap");
        expect_rejected(c.call(kFake + 1, 64, x, 128, 8, 64), c.name, "not aligned");
        expect_rejected(c.call(out, 64, x, INT64_MAX / 2, 8, 64), c.name, "'x' spans more than 2^63 bytes");
        expect_rejected(c.call(out, 64, x, 128, 8, INT64_MAX / 2), c.name, "'d' is");
        EXPECT_EQ(c.call(nullptr, 0, nullptr, 0, 0, 64), cudaSuccess) << c.name;
        EXPECT_EQ(c.call(nullptr, 0, nullptr, 0, 5, 0), cudaSuccess) << c.name;
    }
}

TEST(EwLedger, BytesAndFlops)
{
    const int64_t n = (int64_t)1 << 28;
    gk_ledger add = gk_elementwise_ledger(GK_EW_ADD, GK_F32, GK_F32, 2, n);
    EXPECT_DOUBLE_EQ(add.bytes, 12.0 * n); // two 4-byte reads, one 4-byte write
    EXPECT_DOUBLE_EQ(add.flops, 1.0 * n);
    gk_ledger sw = gk_elementwise_ledger(GK_EW_SWIGLU, GK_BF16, GK_BF16, 2, 16384LL * 8192);
    EXPECT_DOUBLE_EQ(sw.bytes, 6.0 * 16384 * 8192);
    gk_ledger cast = gk_elementwise_ledger(GK_EW_CAST, GK_BF16, GK_F32, 1, 1000);
    EXPECT_DOUBLE_EQ(cast.bytes, 6000.0);
    EXPECT_DOUBLE_EQ(cast.flops, 0.0);
}

TEST(EwReference, KnownValues)
{
    // silu(1) = 1 / (1 + e^-1); gelu_tanh values from the closed form, computed independently
    EXPECT_NEAR(gk_ref_silu(1.0), 0.7310585786300049, 1e-15);
    EXPECT_NEAR(gk_ref_silu(-2.5), -0.18964545005310887, 1e-15);
    EXPECT_NEAR(gk_ref_gelu_tanh(1.0), 0.8411919906082768, 1e-15);
    EXPECT_NEAR(gk_ref_gelu_tanh(-3.0), -0.0036373920817729943, 1e-15);
    EXPECT_NEAR(gk_ref_gelu_tanh(2.0), 1.954597694087775, 1e-15);
    EXPECT_DOUBLE_EQ(gk_ref_elementwise(GK_EW_AXPBY, 2.0, 3.0, 0.5, -2.0), -5.0);
    EXPECT_DOUBLE_EQ(gk_ref_elementwise(GK_EW_SWIGLU, 1.0, 2.0, 0, 0), 2.0 * 0.7310585786300049);
}

// The vector-path geometry: the head that aligns every pointer, and when none exists.
TEST(EwGeometry, ChunkIs16BytesOfTheWidestDtype)
{
    EXPECT_EQ(gk_ew_vec(GK_F32, GK_F32, GK_F32), 4);
    EXPECT_EQ(gk_ew_vec(GK_BF16, GK_BF16, -1), 8);
    EXPECT_EQ(gk_ew_vec(GK_F32, GK_F32, GK_BF16), 4); // f32 residual += bf16: 16 bytes f32, 8 bytes bf16
    EXPECT_EQ(gk_ew_vec(GK_BF16, GK_F32, -1), 4);
    // all on one 128-byte line after the head: f32 at +4 needs 31 elements (+128)
    EXPECT_EQ(gk_ew_head(4, kFake + 4, GK_F32, kFake + 4, GK_F32, kFake + 260, GK_F32), 31);
    // offsets that agree only modulo 16 bytes: the best shared boundary is a 16-byte chunk
    EXPECT_EQ(gk_ew_head(4, kFake + 4, GK_F32, kFake + 4, GK_F32, kFake + 20, GK_F32), 3);
    EXPECT_EQ(gk_ew_head(4, kFake + 4, GK_F32, kFake + 4, GK_F32, kFake + 68, GK_F32), 15); // 64-byte boundary
    EXPECT_EQ(gk_ew_head(4, kFake, GK_F32, kFake, GK_F32, kFake, GK_F32), 0);
    EXPECT_EQ(gk_ew_head(4, kFake + 4, GK_F32, kFake + 8, GK_F32, kFake, GK_F32), -1); // never line up
    EXPECT_EQ(gk_ew_head(8, kFake + 2, GK_BF16, kFake + 2, GK_BF16, nullptr, -1), 63);
    EXPECT_EQ(gk_ew_head(8, kFake + 18, GK_BF16, kFake + 2, GK_BF16, nullptr, -1), 7);
    // f32 out at +8 bytes reaches a line after 30 elements; bf16 in at +4 then sits at +64: a
    // boundary of 8 chunks of 8 bytes
    EXPECT_EQ(gk_ew_head(4, kFake + 8, GK_F32, kFake + 4, GK_BF16, nullptr, -1), 30);
    // bf16 in at +2 never reaches even an 8-byte boundary together with f32 out at +8
    EXPECT_EQ(gk_ew_head(4, kFake + 8, GK_F32, kFake + 2, GK_BF16, nullptr, -1), -1);
}
