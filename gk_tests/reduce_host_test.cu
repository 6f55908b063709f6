// Host tests of gk_reduce.cuh: the online-softmax merge algebra, the CPU references against known
// values, the ledger, and argument validation for every launcher (before any CUDA call).
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
#include "gk_tests/gk_rne.h"
#include "gk_tests/gk_test.h"
#include "gk_tests/reduce_cases.h"
#include "gk_tests/reduce_ref.h"

#include <string>
#include <vector>

// ------------------------------------------------------------------ online softmax algebra

static void one_pass(const std::vector<float> &v, size_t b, size_t e, float *m, float *s)
{
    *m = -INFINITY;
    *s = 0.0f;
    for (size_t i = b; i < e; i++) gk_softmax_push(m, s, v[i]);
}

TEST(SoftmaxMerge, AnySplitEqualsOnePass)
{
    GkRng rng(1);
    for (int trial = 0; trial < 50; trial++) {
        const size_t n = 1 + rng.next() % 300;
        std::vector<float> v(n);
        for (float &x : v) x = rng.uniform(-30, 30);
        float m, s;
        one_pass(v, 0, n, &m, &s);
        double ref_m = -INFINITY, ref_s = 0;
        for (float x : v) ref_m = std::max(ref_m, (double)x);
        for (float x : v) ref_s += std::exp((double)x - ref_m);
        EXPECT_EQ(m, (float)ref_m);
        EXPECT_NEAR(s, ref_s, 1e-5 * ref_s);
        for (size_t cut = 0; cut <= n; cut++) { // two parts, merged either way round
            float m1, s1, m2, s2;
            one_pass(v, 0, cut, &m1, &s1);
            one_pass(v, cut, n, &m2, &s2);
            float ma = m1, sa = s1, mb = m2, sb = s2;
            gk_softmax_merge(&ma, &sa, m2, s2);
            gk_softmax_merge(&mb, &sb, m1, s1);
            ASSERT_EQ(ma, m) << "cut " << cut;
            ASSERT_NEAR(sa, s, 1e-5 * s) << "cut " << cut;
            ASSERT_EQ(mb, m);
            ASSERT_NEAR(sb, s, 1e-5 * s);
        }
        // many parts merged as a tree
        const size_t parts = 1 + rng.next() % 17;
        std::vector<float> pm(parts), ps(parts);
        for (size_t p = 0; p < parts; p++) one_pass(v, p * n / parts, (p + 1) * n / parts, &pm[p], &ps[p]);
        for (size_t width = 1; width < parts; width *= 2)
            for (size_t p = 0; p + width < parts; p += 2 * width) gk_softmax_merge(&pm[p], &ps[p], pm[p + width], ps[p + width]);
        EXPECT_EQ(pm[0], m);
        EXPECT_NEAR(ps[0], s, 1e-5 * s);
    }
}

TEST(SoftmaxMerge, EmptyAndMaskedParts)
{
    float m = -INFINITY, s = 0.0f;
    gk_softmax_merge(&m, &s, -INFINITY, 0.0f); // empty with empty
    EXPECT_EQ(m, -INFINITY);
    EXPECT_EQ(s, 0.0f);
    gk_softmax_push(&m, &s, -INFINITY); // a masked value adds nothing
    EXPECT_EQ(s, 0.0f);
    gk_softmax_merge(&m, &s, 2.0f, 3.0f); // empty with something: the something
    EXPECT_EQ(m, 2.0f);
    EXPECT_EQ(s, 3.0f);
    gk_softmax_merge(&m, &s, -INFINITY, 0.0f);
    EXPECT_EQ(m, 2.0f);
    EXPECT_EQ(s, 3.0f);
    gk_softmax_push(&m, &s, NAN); // NaN poisons the sum: the row comes out NaN
    EXPECT_TRUE(std::isnan(s));
}

// ------------------------------------------------------------------ references

TEST(ReduceReference, KnownValues)
{
    double y[3], q = 0;
    const double a[2] = {3, 4};
    gk_ref_row(GK_RD_RMSNORM, a, 2, nullptr, nullptr, 0.0, 1.0, y, nullptr);
    EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-15);
    EXPECT_NEAR(y[1], 4 / std::sqrt(12.5), 1e-15);
    const double c[3] = {1, 2, 3};
    gk_ref_row(GK_RD_LAYERNORM, c, 3, nullptr, nullptr, 0.0, 1.0, y, nullptr);
    EXPECT_NEAR(y[0], -std::sqrt(1.5), 1e-12);
    EXPECT_NEAR(y[1], 0.0, 1e-15);
    EXPECT_NEAR(y[2], std::sqrt(1.5), 1e-12);
    const double d[2] = {0, std::log(2.0)};
    gk_ref_row(GK_RD_SOFTMAX, d, 2, nullptr, nullptr, 0, 1.0, y, nullptr);
    EXPECT_NEAR(y[0], 1.0 / 3, 1e-15);
    EXPECT_NEAR(y[1], 2.0 / 3, 1e-15);
    gk_ref_row(GK_RD_LOG_SOFTMAX, d, 2, nullptr, nullptr, 0, 1.0, y, nullptr);
    EXPECT_NEAR(y[0], std::log(1.0 / 3), 1e-15);
    const double masked[2] = {-INFINITY, -INFINITY};
    gk_ref_row(GK_RD_SOFTMAX, masked, 2, nullptr, nullptr, 0, 1.0, y, nullptr);
    EXPECT_EQ(y[0], 0.0);
    gk_ref_row(GK_RD_LOG_SOFTMAX, masked, 2, nullptr, nullptr, 0, 1.0, y, nullptr);
    EXPECT_EQ(y[1], -INFINITY);
    const double e[3] = {-896, 1, 2};
    gk_ref_row(GK_RD_QUANT, e, 3, nullptr, nullptr, 0, 1.0, y, &q);
    EXPECT_DOUBLE_EQ(q, 2.0); // 896 / 448
}

// The quantization contract: with scale = amax / 448 every value lands within e4m3's range, and
// each code is within half a step of the e4m3 grid at the value's magnitude (round to nearest).
TEST(ReduceReference, E4m3QuantizationRoundTrip)
{
    GkRng rng(3);
    std::vector<double> x(1000), y(1000);
    for (double &v : x) v = rng.uniform(-50, 50);
    x[17] = 0.0;
    double scale = 0;
    gk_ref_row(GK_RD_QUANT, x.data(), 1000, nullptr, nullptr, 0, 1, y.data(), &scale);
    for (int i = 0; i < 1000; i++) {
        const float v = (float)(y[i] / scale);
        gk_e4m3 c = gk_f32_to_e4m3(v);
        const double code = gk_rne_value(c, kGkRneE4m3), vc = std::max(-448.0, std::min(448.0, (double)v));
        EXPECT_LE(std::fabs(code), 448.0);
        EXPECT_LE(std::fabs(code - vc), gk_rne_e4m3_half_step(std::fabs(vc))) << i << ": " << v << " -> " << code;
    }
    // values past the range saturate to +-448, never inf or NaN
    EXPECT_EQ(gk_e4m3_to_f32(gk_f32_to_e4m3(449.0f)), 448.0f);
    EXPECT_EQ(gk_e4m3_to_f32(gk_f32_to_e4m3(-1e30f)), -448.0f);
}

// The streaming rows' stash: H200 (228 KB an SM, 227 KB a block) and A100 (164 / 163 KB) limits.
TEST(ReduceDispatch, StashVectors)
{
    int room = -1;
    // H200: a block's share with two an SM is 114 KB, less 2 KB: 7168 vectors
    EXPECT_EQ(gk_rd_stash_vectors(8192, 233472, 232448, &room), 7168); // 65536 bf16: most of the row
    EXPECT_EQ(room, 7168);
    EXPECT_EQ(gk_rd_stash_vectors(2049, 233472, 232448, &room), 2049);   // narrowest streaming row: all of it
    EXPECT_EQ(gk_rd_stash_vectors(14336, 233472, 232448, &room), 7168);  // exactly half: still stashed
    EXPECT_EQ(gk_rd_stash_vectors(14337, 233472, 232448, &room), 0);     // less than half: one-block kernel
    EXPECT_EQ(gk_rd_stash_vectors(32768, 233472, 232448, &room), 0);     // 262144 bf16
    // A100: 80 KB a block
    EXPECT_EQ(gk_rd_stash_vectors(8192, 167936, 166912, &room), 5120);
    EXPECT_EQ(room, 5120);
    // a per-block limit below half the SM's memory bounds the share (3072 vectors)
    EXPECT_EQ(gk_rd_stash_vectors(6000, 233472, 50 * 1024, &room), 3072);
    EXPECT_EQ(gk_rd_stash_vectors(8192, 233472, 50 * 1024, &room), 0);
    // no usable shared memory: never the stash kernel
    EXPECT_EQ(gk_rd_stash_vectors(8192, 2048, 2048, &room), 0);
}

// Rows too wide for one stash split over the fewest blocks whose parts the stash (7168 vectors
// on H200) and one vector a thread (1024) hold.
TEST(ReduceDispatch, Split)
{
    EXPECT_EQ(gk_rd_part_vectors(262144, 4, 8), 8192);
    EXPECT_EQ(gk_rd_part_vectors(70001, 2, 8), 4376); // 35001 columns: the last vector partial
    EXPECT_EQ(gk_rd_part_vectors(7, 8, 8), 1);
    EXPECT_EQ(gk_rd_split(262144, 8, 7168, 1024), 4); // bf16: three parts are 10923 vectors
    EXPECT_EQ(gk_rd_split(262144, 4, 7168, 1024), 8); // f32
    EXPECT_EQ(gk_rd_split(300000, 8, 7168, 1024), 5);
    EXPECT_EQ(gk_rd_split(131072, 8, 7168, 1024), 2);
    EXPECT_EQ(gk_rd_split((int64_t)1 << 24, 8, 7168, 1024), GK_RD_SPLIT_MAX); // too wide for any: the most
}

TEST(ReduceLedger, Bytes)
{
    gk_ledger l = gk_reduce_ledger(GK_RD_RMSNORM, GK_BF16, 16384, 8192);
    EXPECT_DOUBLE_EQ(l.bytes, 16384.0 * 8192 * 4 + 8192 * 2);
    l = gk_reduce_ledger(GK_RD_RESIDUAL_RMSNORM, GK_BF16, 10, 100);
    EXPECT_DOUBLE_EQ(l.bytes, 10.0 * 100 * 8 + 200);
    l = gk_reduce_ledger(GK_RD_RMSNORM_QUANT, GK_BF16, 10, 100);
    EXPECT_DOUBLE_EQ(l.bytes, 10.0 * 100 * 3 + 200 + 40);
    l = gk_reduce_ledger(GK_RD_SOFTMAX, GK_F32, 2, 3);
    EXPECT_DOUBLE_EQ(l.bytes, 48.0);
}

// ------------------------------------------------------------------ validation

static char *const kFake = (char *)0x20000000;

class RdValidation : public ::testing::TestWithParam<int> {};

static RdArgs valid_args(const RdCase &c)
{
    RdArgs a;
    a.out = kFake;
    a.x = kFake + (64 << 20);
    a.w = kFake + (128 << 20);
    a.b = kFake + (129 << 20);
    a.res = kFake + (192 << 20);
    a.res_out = (void *)a.res;
    a.scales = (float *)(kFake + (256 << 20));
    a.rows = 8;
    a.cols = 1000;
    a.ldo = a.ldx = a.ldr = 1000;
    (void)c;
    return a;
}

static void expect_rejected(const RdCase &c, RdArgs a, const char *needle)
{
    EXPECT_EQ(c.call(a), cudaErrorInvalidValue) << c.name << " (" << needle << ")";
    EXPECT_NE(std::string(gk_failure_reason()).find(needle), std::string::npos)
        << c.name << ": reason was \"" << gk_failure_reason() << "\"";
}

TEST_P(RdValidation, RejectsBadInputBeforeLaunch)
{
    const RdCase &c = kRdCases[GetParam()];
    RdArgs a;
    a = valid_args(c); a.rows = -3; expect_rejected(c, a, "'rows' is -3");
    a = valid_args(c); a.cols = -1; expect_rejected(c, a, "'cols'");
    a = valid_args(c); a.rows = 2; a.ldx = INT64_MAX / 2; expect_rejected(c, a, "'x' spans more than 2^63 bytes");
    a = valid_args(c); a.cols = 3000000000LL; a.ldx = a.ldo = a.ldr = a.cols; expect_rejected(c, a, "'cols'");
    a = valid_args(c); a.out = nullptr; expect_rejected(c, a, "'out' is a null pointer");
    a = valid_args(c); a.x = nullptr; expect_rejected(c, a, "'x' is a null pointer");
    a = valid_args(c); a.ldx = 999; expect_rejected(c, a, "'ldx' is 999");
    a = valid_args(c); a.ldo = 10; expect_rejected(c, a, "'ldo' is 10");
    a = valid_args(c); a.x = kFake + (64 << 20) + 1; expect_rejected(c, a, "'x'");
    if (!rd_is_quant(c.op)) { // out has x's dtype: it must be aligned to it and may only be x itself
        a = valid_args(c); a.out = kFake + 1; expect_rejected(c, a, "'out' (");
        EXPECT_NE(std::string(gk_failure_reason()).find("not aligned"), std::string::npos) << gk_failure_reason();
        // out overlapping x without being x: rejected; out == x (same stride): in place, allowed
        a = valid_args(c); a.out = (char *)a.x + 64; expect_rejected(c, a, "overlap");
        if (c.op == GK_RD_RESIDUAL_RMSNORM) { // in place passes the aliasing checks: the next check (a null residual) fails
            a = valid_args(c); a.out = (void *)a.x; a.res = nullptr; expect_rejected(c, a, "'residual' is a null pointer");
        }
    } else { // out is e4m3 (bytes): any address is aligned, and a misaligned scales is caught
        a = valid_args(c); a.out = kFake + 1; a.scales = nullptr; expect_rejected(c, a, "'scales' is a null pointer");
        a = valid_args(c); a.scales = (float *)(kFake + (256 << 20) + 2); expect_rejected(c, a, "'scales' (");
        a = valid_args(c); a.scales = nullptr; expect_rejected(c, a, "'scales' is a null pointer");
        a = valid_args(c); a.out = (void *)a.x; expect_rejected(c, a, "overlap");
        a = valid_args(c); a.scales = (float *)a.x; expect_rejected(c, a, "overlap");
    }
    if (c.op == GK_RD_RMSNORM || c.op == GK_RD_LAYERNORM) {
        a = valid_args(c); a.w = kFake + (128 << 20) + 1; expect_rejected(c, a, "'weight'");
    }
    if (c.op == GK_RD_RESIDUAL_RMSNORM) {
        a = valid_args(c); a.res = nullptr; expect_rejected(c, a, "'residual' is a null pointer");
        a = valid_args(c); a.res_out = nullptr; expect_rejected(c, a, "'residual_out' is a null pointer");
        a = valid_args(c); a.ldr = 5; expect_rejected(c, a, "'ldr' is 5");
        a = valid_args(c); a.res_out = (char *)a.res + 64; expect_rejected(c, a, "overlap");
        a = valid_args(c); a.res_out = (void *)a.x; expect_rejected(c, a, "overlap");
        a = valid_args(c); a.out = a.res_out; expect_rejected(c, a, "overlap");
    }
    // the message names the public function
    a = valid_args(c);
    a.rows = -1;
    c.call(a);
    EXPECT_EQ(std::string(gk_failure_reason()).rfind(std::string("gk_") + c.name, 0), 0u) << gk_failure_reason();
}

// An empty problem (no rows or no columns) is a no-op that inspects no pointer, and clears the
// reason of an earlier failure.
TEST_P(RdValidation, EmptyIsNoOp)
{
    const RdCase &c = kRdCases[GetParam()];
    for (int which = 0; which < 2; which++) {
        RdArgs a = valid_args(c);
        a.rows = -1;
        c.call(a); /* leaves a reason */
        a = RdArgs();
        a.rows = which ? 5 : 0;
        a.cols = which ? 0 : 5;
        EXPECT_EQ(c.call(a), cudaSuccess) << c.name << (which ? " cols = 0" : " rows = 0");
        EXPECT_STREQ(gk_failure_reason(), "") << c.name;
    }
}

INSTANTIATE_TEST_SUITE_P(AllLaunchers, RdValidation, ::testing::Range(0, kNumRdCases),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kRdCases[i.param].name); });
