// Host tests of gk_gemm.cuh: argument validation of every launcher (it runs before any CUDA
// call, so these pass on a machine without a GPU), the ledger, the shipped configurations'
// derived sizes and the rules the generator and the copy plan rely on, and the dispatcher's plan
// (configuration, K splits, workspace).
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
#include "gk/gk_sgemm.cuh"
#include "gk_tests/gk_test.h"

#include <algorithm>
#include <cmath>
#include <string>

// ------------------------------------------------------------------ validation, tensor-core launchers

// Device-looking addresses: never dereferenced, because every call below fails validation. A
// call that passed it would reach gk_sm_count and, on a GPU host, launch on these addresses; so
// an argument is shown accepted by making a check that runs after it fail instead (the bias
// alignment; only the workspace's alignment comes later).
static char *const kFake = (char *)0x20000000;
static const char *const kBadBias = "'bias'";

struct GemmArgs {
    int config = -1, splits = 0, in_dt = GK_BF16;
    void *d = kFake;
    int d_dt = GK_BF16;
    int64_t ldd = 33;
    const void *a = kFake + (64 << 20);
    int64_t lda = 65;
    int ta = 0;
    const void *b = kFake + (128 << 20);
    int64_t ldb = 33;
    int tb = 0;
    const void *c = kFake + (192 << 20);
    int64_t ldc = 33;
    const float *bias = (const float *)(kFake + (256 << 20));
    int64_t m = 17, n = 33, k = 65;
    float alpha = 1.0f, beta = 0.5f;
    int act = GK_ACT_NONE;
    void *ws = nullptr;
    size_t ws_bytes = 0;
};

typedef cudaError_t (*GemmCall)(const GemmArgs &g);

static cudaError_t call_bf16(const GemmArgs &g)
{
    return gk_gemm_bf16(g.d, g.d_dt, g.ldd, (const gk_bf16 *)g.a, g.lda, g.ta, (const gk_bf16 *)g.b, g.ldb, g.tb, g.c,
                        g.ldc, g.bias, g.m, g.n, g.k, g.alpha, g.beta, g.act, g.ws, g.ws_bytes, 0);
}
static cudaError_t call_f16(const GemmArgs &g)
{
    return gk_gemm_f16(g.d, g.d_dt, g.ldd, (const gk_f16 *)g.a, g.lda, g.ta, (const gk_f16 *)g.b, g.ldb, g.tb, g.c,
                       g.ldc, g.bias, g.m, g.n, g.k, g.alpha, g.beta, g.act, g.ws, g.ws_bytes, 0);
}
static cudaError_t call_ex(const GemmArgs &g)
{
    return gk_gemm_ex(g.config, g.splits, g.in_dt, g.d, g.d_dt, g.ldd, g.a, g.lda, g.ta, g.b, g.ldb, g.tb, g.c, g.ldc,
                      g.bias, g.m, g.n, g.k, g.alpha, g.beta, g.act, g.ws, g.ws_bytes, 0);
}

struct GemmCase {
    const char *name;
    GemmCall call;
    int in_dt;
    bool ex;
    const char *fn; // the public name the failure reason starts with
};

static const GemmCase kGemmCases[] = {
    {"bf16", call_bf16, GK_BF16, false, "gk_gemm_bf16: "},
    {"f16", call_f16, GK_F16, false, "gk_gemm_f16: "},
    {"ex_bf16", call_ex, GK_BF16, true, "gk_gemm_ex: "},
    {"ex_f16", call_ex, GK_F16, true, "gk_gemm_ex: "},
};

class GemmValidation : public ::testing::TestWithParam<int> {
  protected:
    const GemmCase &c() const { return kGemmCases[GetParam()]; }
    GemmArgs valid() const
    {
        GemmArgs g;
        g.in_dt = c().in_dt;
        return g;
    }
    // The call fails with cudaErrorInvalidValue and a reason that starts with the public name and
    // holds `needle`.
    void rejected(const GemmArgs &g, const char *needle, const char *what)
    {
        EXPECT_EQ(c().call(g), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find(needle), std::string::npos) << c().name << ": " << what << ": reason was \"" << r << "\"";
        EXPECT_EQ(r.rfind(c().fn, 0), 0u) << c().name << ": " << what << ": reason was \"" << r << "\"";
    }
    // The argument under test passes: the call gets as far as the (misaligned) bias.
    void accepted(GemmArgs g, const char *what)
    {
        g.bias = (const float *)(kFake + (256 << 20) + 2);
        rejected(g, kBadBias, what);
    }
};

TEST_P(GemmValidation, NullPointers)
{
    GemmArgs g;
    g = valid(); g.a = nullptr; rejected(g, "'a' is a null pointer", "a NULL");
    g = valid(); g.b = nullptr; rejected(g, "'b' is a null pointer", "b NULL");
    g = valid(); g.d = nullptr; rejected(g, "'d' is a null pointer", "d NULL");
    g = valid(); g.c = nullptr; rejected(g, "'c' is a null pointer", "c NULL with beta != 0");
    g = valid(); g.c = nullptr; g.beta = -1.0f; rejected(g, "'c' is a null pointer", "c NULL with beta < 0");
    g = valid(); g.c = nullptr; g.beta = NAN; rejected(g, "'c' is a null pointer", "c NULL with beta NaN");
    // beta == 0: c is not read, so NULL, a misaligned c and any ldc are fine
    g = valid(); g.c = nullptr; g.beta = 0.0f; accepted(g, "c NULL with beta == 0");
    g = valid(); g.c = kFake + 1; g.ldc = 0; g.beta = 0.0f; accepted(g, "c odd, ldc 0 with beta == 0");
    g = valid(); g.c = nullptr; g.beta = -0.0f; accepted(g, "c NULL with beta == -0");
    // bias is checked only when given (NULL is the common case, run by the GPU tests)
    g = valid(); g.bias = (const float *)(kFake + (256 << 20) + 1); rejected(g, kBadBias, "bias odd");
}

TEST_P(GemmValidation, Sizes)
{
    GemmArgs g;
    g = valid(); g.m = -4; rejected(g, "'m' is -4", "m -4");
    g = valid(); g.n = -1; rejected(g, "'n' is -1", "n -1");
    g = valid(); g.k = -65; rejected(g, "'k' is -65", "k -65");
    g = valid(); g.m = INT64_MIN; rejected(g, "'m' is", "m INT64_MIN");
    // an empty D is a no-op that inspects no pointer (an empty framework tensor may be NULL)
    for (int which = 0; which < 2; which++) {
        GemmArgs e;
        e.in_dt = c().in_dt;
        e.a = e.b = e.c = e.d = nullptr;
        e.bias = nullptr;
        e.lda = e.ldb = e.ldc = e.ldd = 0;
        (which ? e.n : e.m) = 0;
        EXPECT_EQ(c().call(e), cudaSuccess) << c().name << (which ? " n = 0" : " m = 0");
        EXPECT_STREQ(gk_failure_reason(), "") << "a successful call clears the reason";
    }
    // k == 0 computes D = act(beta C + bias): a and b are not read (NULL, any leading dimension)
    g = valid(); g.k = 0; accepted(g, "k 0");
    g = valid(); g.k = 0; g.a = nullptr; g.b = nullptr; g.lda = 0; g.ldb = 0; accepted(g, "k 0, a and b NULL");
    g = valid(); g.k = 0; g.d = nullptr; rejected(g, "'d' is a null pointer", "k 0, d NULL");
    g = valid(); g.k = 0; g.c = nullptr; rejected(g, "'c' is a null pointer", "k 0, c NULL with beta != 0");
    // 32-bit indexing: m, n, k < 2^31 (leading dimensions large enough, so the size is the reason)
    const int64_t big = (int64_t)1 << 31;
    g = valid(); g.m = big; g.ta = 1; g.lda = big; rejected(g, "'m' is 2147483648", "m 2^31");
    g = valid(); g.n = big; g.ldb = g.ldd = g.ldc = big; rejected(g, "'n' is 2147483648", "n 2^31");
    g = valid(); g.k = big; g.lda = big; rejected(g, "'k' is 2147483648", "k 2^31");
    g = valid(); g.k = big + 12345; g.lda = big + 12345; rejected(g, "'k' is 2147495993", "k 2^31 + 12345");
    g = valid(); g.k = INT64_MAX; g.lda = INT64_MAX; rejected(g, "'k'", "k INT64_MAX");
    // 2^31 - 1 is in range (the call then stops at the bias)
    g = valid(); g.k = big - 1; g.lda = big - 1; g.ta = 0; g.tb = 0; accepted(g, "k 2^31 - 1");
}

// op(A) is M x K: trans_a = 0 stores it [M][lda] (lda >= K), trans_a = 1 stores [K][lda] (lda >= M).
// op(B) is K x N: trans_b = 0 stores [K][ldb] (ldb >= N), trans_b = 1 stores [N][ldb] (ldb >= K).
// M = 17, N = 33, K = 65 are distinct, so a check of the wrong dimension shows.
TEST_P(GemmValidation, LeadingDimensionsPerLayout)
{
    GemmArgs g;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            const std::string layout = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
            const int64_t row_a = ta ? 17 : 65, row_b = tb ? 65 : 33;
            const int64_t other_a = ta ? 65 : 17, other_b = tb ? 33 : 65;
            const auto base = [&] {
                GemmArgs v = valid();
                v.ta = ta;
                v.tb = tb;
                v.lda = row_a;
                v.ldb = row_b;
                return v;
            };
            char needle[96];
            g = base(); g.lda = row_a - 1;
            snprintf(needle, sizeof needle, "lda = %lld is smaller than the row (%lld values)", (long long)(row_a - 1),
                     (long long)row_a);
            rejected(g, needle, (layout + " lda = row - 1").c_str());
            g = base(); g.lda = 0; rejected(g, "lda = 0", (layout + " lda = 0").c_str());
            g = base(); g.lda = -8; rejected(g, "lda = -8", (layout + " lda = -8").c_str());
            g = base(); g.ldb = row_b - 1;
            snprintf(needle, sizeof needle, "ldb = %lld is smaller than the row (%lld values)", (long long)(row_b - 1),
                     (long long)row_b);
            rejected(g, needle, (layout + " ldb = row - 1").c_str());
            // the row itself, and padding, pass
            g = base(); accepted(g, (layout + " lda, ldb = row").c_str());
            g = base(); g.lda = row_a + 3; g.ldb = row_b + 8; accepted(g, (layout + " lda, ldb padded").c_str());
            // the other dimension is not the row: lda between it and the row fails only when smaller
            // than the row, a large other dimension is irrelevant
            if (other_a < row_a) {
                g = base(); g.lda = other_a; rejected(g, "lda", (layout + " lda = the other dimension").c_str());
            } else {
                g = base(); g.lda = row_a; accepted(g, (layout + " lda = row < other dimension").c_str());
            }
            if (other_b < row_b) {
                g = base(); g.ldb = other_b; rejected(g, "ldb", (layout + " ldb = the other dimension").c_str());
            } else {
                g = base(); g.ldb = row_b; accepted(g, (layout + " ldb = row < other dimension").c_str());
            }
            // leading dimensions past 32-bit indexing
            g = base(); g.lda = (int64_t)1 << 31; rejected(g, "'lda' is 2147483648", (layout + " lda 2^31").c_str());
            g = base(); g.ldb = (int64_t)1 << 31; rejected(g, "'ldb' is 2147483648", (layout + " ldb 2^31").c_str());
        }
    // D and C rows are N wide whatever the layout
    g = valid(); g.ldd = 32; rejected(g, "ldd = 32 is smaller than n = 33", "ldd = n - 1");
    g = valid(); g.ldd = 0; rejected(g, "ldd = 0", "ldd = 0");
    g = valid(); g.ldc = 32; rejected(g, "ldc = 32 is smaller than n = 33", "ldc = n - 1");
    g = valid(); g.ldc = -1; rejected(g, "ldc = -1", "ldc = -1");
    g = valid(); g.ldd = 33; g.ldc = 33; accepted(g, "ldd, ldc = n");
    g = valid(); g.ldd = 1000; g.ldc = 35; accepted(g, "ldd, ldc padded");
    g = valid(); g.ldd = (int64_t)1 << 31; rejected(g, "'ldd' is 2147483648", "ldd 2^31");
    g = valid(); g.ldc = (int64_t)1 << 31; rejected(g, "'ldc' is 2147483648", "ldc 2^31");
    g = valid(); g.ldc = (int64_t)1 << 31; g.beta = 0.0f; accepted(g, "ldc 2^31 with beta == 0");
}

// The workspace (partials of a split K, repacked operands) must be 256-byte aligned when given,
// whatever its size.
TEST_P(GemmValidation, Workspace)
{
    GemmArgs g;
    for (int off : {2, 16, 128, 255}) {
        g = valid(); g.ws = kFake + (320 << 20) + off; g.ws_bytes = 1 << 20;
        rejected(g, "workspace is not 256-byte aligned", "workspace off 256 bytes");
        g = valid(); g.ws = kFake + (320 << 20) + off; g.ws_bytes = 0;
        rejected(g, "workspace is not 256-byte aligned", "workspace off 256 bytes, 0 bytes");
    }
    // the other checks come first
    g = valid(); g.ws = kFake + (320 << 20) + 16; g.ws_bytes = 1 << 20; g.m = -1;
    rejected(g, "'m' is -1", "m -1 with a misaligned workspace");
    // the workspace is written: it must not share a byte with an operand
    g = valid(); g.ws = kFake; g.ws_bytes = 256; rejected(g, "'workspace' and 'd' overlap", "workspace on d");
    g = valid(); g.ws = kFake + (64 << 20); g.ws_bytes = 4096; rejected(g, "'workspace' and 'a' overlap", "workspace on a");
    g = valid(); g.ws = kFake + (128 << 20) - 256; g.ws_bytes = 512; rejected(g, "'workspace' and 'b' overlap", "workspace on b");
    g = valid(); g.ws = kFake + (192 << 20); g.ws_bytes = 256; rejected(g, "'workspace' and 'c' overlap", "workspace on c");
    g = valid(); g.ws = kFake + (192 << 20); g.ws_bytes = 256; g.beta = 0.0f;
    accepted(g, "workspace on c with beta 0 (c not read)");
}

// D is written while A, B, bias (and C, unless it is D itself) are read: ranges that share bytes
// with it are refused, except C identical to D (same pointer, same leading dimension: in place).
TEST_P(GemmValidation, Aliasing)
{
    GemmArgs g;
    g = valid(); g.a = kFake + 64; rejected(g, "'d' and 'a' overlap", "a inside d");
    g = valid(); g.b = kFake; rejected(g, "'d' and 'b' overlap", "b on d");
    g = valid(); g.a = kFake - 64; rejected(g, "'d' and 'a' overlap", "a ending inside d");
    g = valid(); g.bias = (const float *)(kFake + 128); rejected(g, "'d' and 'bias' overlap", "bias inside d");
    g = valid(); g.c = kFake + 2; rejected(g, "'d' and 'c' overlap without being the same range", "c one value past d");
    g = valid(); g.c = kFake; g.ldc = 34; rejected(g, "'d' and 'c' overlap without being the same range", "c = d, ldc != ldd");
    g = valid(); g.c = kFake; g.ldc = g.ldd; accepted(g, "c = d, ldc = ldd (in place)");
    g = valid(); g.c = kFake; g.ldc = 34; g.beta = 0.0f; accepted(g, "c = d, ldc != ldd, beta 0 (c not read)");
    g = valid(); g.a = kFake + 64; g.k = 0; accepted(g, "a inside d with k 0 (a not read)");
}

TEST_P(GemmValidation, TransposeFlags)
{
    GemmArgs g;
    for (int t : {-1, 2, 7}) {
        char needle[48];
        snprintf(needle, sizeof needle, "trans_a = %d is not 0 or 1", t);
        g = valid(); g.ta = t; rejected(g, needle, "trans_a");
        snprintf(needle, sizeof needle, "trans_b = %d is not 0 or 1", t);
        g = valid(); g.tb = t; rejected(g, needle, "trans_b");
    }
}

TEST_P(GemmValidation, Alignment)
{
    GemmArgs g;
    // 16-bit operands on an odd byte address
    g = valid(); g.a = kFake + (64 << 20) + 1; rejected(g, "'a' (", "a odd");
    g = valid(); g.a = kFake + (64 << 20) + 1; rejected(g, "not aligned to 2 bytes", "a odd");
    g = valid(); g.b = kFake + (128 << 20) + 3; rejected(g, "'b' (", "b odd");
    // an even address that is not 16-byte aligned is fine (the element-wise load path)
    g = valid(); g.a = kFake + (64 << 20) + 2; g.b = kFake + (128 << 20) + 6; accepted(g, "a, b 2-byte aligned");
    for (int dt : {GK_BF16, GK_F16}) {
        g = valid(); g.d_dt = dt; g.d = kFake + 1; rejected(g, "'d' (", "d odd, 16-bit");
        g = valid(); g.d_dt = dt; g.c = kFake + (192 << 20) + 1; rejected(g, "'c' (", "c odd, 16-bit");
        g = valid(); g.d_dt = dt; g.d = kFake + 2; g.c = kFake + (192 << 20) + 2; accepted(g, "d, c 2-byte aligned");
    }
    // fp32 D and C: 4 bytes
    g = valid(); g.d_dt = GK_F32; g.d = kFake + 2; rejected(g, "not aligned to 4 bytes", "d 2 mod 4, f32");
    g = valid(); g.d_dt = GK_F32; g.c = kFake + (192 << 20) + 2; rejected(g, "'c' (", "c 2 mod 4, f32");
    g = valid(); g.d_dt = GK_F32; g.d = kFake + 4; g.c = kFake + (192 << 20) + 12; accepted(g, "d, c 4-byte aligned");
    // fp32 bias: 4 bytes
    g = valid(); g.bias = (const float *)(kFake + (256 << 20) + 2); rejected(g, "'bias' (", "bias 2 mod 4");
}

TEST_P(GemmValidation, DtypeActConfig)
{
    GemmArgs g;
    for (int dt : {-1, (int)GK_E4M3, (int)GK_E5M2, 7}) {
        char needle[64];
        snprintf(needle, sizeof needle, "d_dtype %d is not", dt);
        g = valid(); g.d_dt = dt; rejected(g, needle, "d_dtype");
    }
    for (int dt : {GK_F32, GK_BF16, GK_F16}) {
        g = valid(); g.d_dt = dt; accepted(g, "d_dtype");
    }
    for (int act : {-1, 4, 100}) {
        char needle[64];
        snprintf(needle, sizeof needle, "act %d is not a gk_act", act);
        g = valid(); g.act = act; rejected(g, needle, "act");
    }
    for (int act : {GK_ACT_NONE, GK_ACT_RELU, GK_ACT_GELU, GK_ACT_SILU}) {
        g = valid(); g.act = act; accepted(g, "act");
    }
    if (!c().ex) return;
    const int count = gk_gemm_config_count();
    for (int config : {-2, count, count + 7}) {
        char needle[64];
        snprintf(needle, sizeof needle, "config %d is not -1 or 0..%d", config, count - 1);
        g = valid(); g.config = config; rejected(g, needle, "config");
    }
    for (int config = -1; config < count; config++) {
        g = valid(); g.config = config; accepted(g, "config");
    }
    g = valid(); g.splits = -1; rejected(g, "splits = -1 is negative", "splits");
    for (int splits : {0, 1, 3, 1000}) {
        g = valid(); g.splits = splits; accepted(g, "splits");
    }
}

INSTANTIATE_TEST_SUITE_P(AllLaunchers, GemmValidation, ::testing::Range(0, (int)(sizeof kGemmCases / sizeof kGemmCases[0])),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kGemmCases[i.param].name); });

// gk_gemm_ex's own argument: the input dtype (named as gk_gemm_ex, there is no other name for it).
TEST(GemmValidationEx, InDtype)
{
    for (int dt : {(int)GK_F32, (int)GK_E4M3, -1, 9}) {
        GemmArgs g;
        g.in_dt = dt;
        EXPECT_EQ(call_ex(g), cudaErrorInvalidValue) << dt;
        const std::string r = gk_failure_reason();
        char needle[64];
        snprintf(needle, sizeof needle, "in_dtype %d is not GK_BF16 or GK_F16", dt);
        EXPECT_NE(r.find(needle), std::string::npos) << r;
        EXPECT_EQ(r.rfind("gk_gemm_ex: ", 0), 0u) << r;
    }
}

// ------------------------------------------------------------------ validation, fp32 ladder

typedef cudaError_t (*SgemmFn)(float *, int64_t, const float *, int64_t, const float *, int64_t, int64_t, int64_t,
                               int64_t, float, float, cudaStream_t);
struct SgemmCase {
    const char *name;
    SgemmFn fn;
};
static const SgemmCase kSgemmCases[] = {
    {"gk_gemm_f32_naive", gk_gemm_f32_naive},       {"gk_gemm_f32_smem", gk_gemm_f32_smem},
    {"gk_gemm_f32_regtile", gk_gemm_f32_regtile},   {"gk_gemm_f32_warptile", gk_gemm_f32_warptile},
    {"gk_gemm_f32_pipelined", gk_gemm_f32_pipelined}, {"gk_gemm_f32", gk_gemm_f32},
};

struct SgemmArgs {
    float *c = (float *)kFake;
    int64_t ldc = 33;
    const float *a = (const float *)(kFake + (64 << 20));
    int64_t lda = 65;
    const float *b = (const float *)(kFake + (128 << 20));
    int64_t ldb = 33;
    int64_t m = 17, n = 33, k = 65;
    float alpha = 1.0f, beta = 0.0f;
};

class SgemmValidation : public ::testing::TestWithParam<int> {
  protected:
    const SgemmCase &c() const { return kSgemmCases[GetParam()]; }
    cudaError_t call(const SgemmArgs &s) const
    {
        return c().fn(s.c, s.ldc, s.a, s.lda, s.b, s.ldb, s.m, s.n, s.k, s.alpha, s.beta, 0);
    }
    void rejected(const SgemmArgs &s, const char *needle, const char *what)
    {
        EXPECT_EQ(call(s), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find(needle), std::string::npos) << c().name << ": " << what << ": reason was \"" << r << "\"";
        EXPECT_EQ(r.rfind(std::string(c().name) + ": ", 0), 0u) << what << ": reason was \"" << r << "\"";
    }
    // Accepted: the call gets as far as the last check (ldc within 32 bits).
    void accepted(SgemmArgs s, const char *what)
    {
        s.ldc = ((int64_t)1 << 31) + 64;
        rejected(s, "'ldc' is 2147483712", what);
    }
};

TEST_P(SgemmValidation, RejectsBadInputBeforeLaunch)
{
    SgemmArgs s;
    const int64_t big = (int64_t)1 << 31;
    // c is the output: required even with beta == 0
    s = SgemmArgs(); s.c = nullptr; rejected(s, "'c' is a null pointer", "c NULL, beta 0");
    s = SgemmArgs(); s.c = nullptr; s.beta = 1.0f; rejected(s, "'c' is a null pointer", "c NULL, beta 1");
    s = SgemmArgs(); s.a = nullptr; rejected(s, "'a' is a null pointer", "a NULL");
    s = SgemmArgs(); s.b = nullptr; rejected(s, "'b' is a null pointer", "b NULL");
    s = SgemmArgs(); s.m = -1; rejected(s, "'m' is -1", "m -1");
    s = SgemmArgs(); s.n = -2; rejected(s, "'n' is -2", "n -2");
    s = SgemmArgs(); s.k = -3; rejected(s, "'k' is -3", "k -3");
    s = SgemmArgs(); s.m = big; rejected(s, "'m' is 2147483648", "m 2^31");
    s = SgemmArgs(); s.n = big; s.ldb = s.ldc = big; rejected(s, "'n' is 2147483648", "n 2^31");
    s = SgemmArgs(); s.k = big; s.lda = big; rejected(s, "'k' is 2147483648", "k 2^31");
    s = SgemmArgs(); s.c = (float *)(kFake + 2); rejected(s, "'c' (", "c 2 mod 4");
    s = SgemmArgs(); s.a = (const float *)(kFake + (64 << 20) + 1); rejected(s, "not aligned to 4 bytes", "a odd");
    s = SgemmArgs(); s.b = (const float *)(kFake + (128 << 20) + 2); rejected(s, "'b' (", "b 2 mod 4");
    // row-major NN: A [M][lda], lda >= K; B [K][ldb], ldb >= N; C [M][ldc], ldc >= N
    s = SgemmArgs(); s.lda = 64; rejected(s, "lda = 64 is smaller than k = 65", "lda = k - 1");
    s = SgemmArgs(); s.lda = 17; rejected(s, "lda = 17", "lda = m");
    s = SgemmArgs(); s.ldb = 32; rejected(s, "ldb = 32 is smaller than n = 33", "ldb = n - 1");
    s = SgemmArgs(); s.ldc = 32; rejected(s, "ldc = 32 is smaller than n = 33", "ldc = n - 1");
    s = SgemmArgs(); s.lda = big; rejected(s, "'lda' is 2147483648", "lda 2^31");
    s = SgemmArgs(); s.ldb = big; rejected(s, "'ldb' is 2147483648", "ldb 2^31");
    // what passes
    s = SgemmArgs(); accepted(s, "ld = row");
    s = SgemmArgs(); s.lda = 68; s.ldb = 35; s.alpha = -2.0f; s.beta = 0.5f; accepted(s, "padded, alpha, beta");
    s = SgemmArgs(); s.a = (const float *)(kFake + (64 << 20) + 4); accepted(s, "a 4-byte aligned, not 16");
    s = SgemmArgs(); s.k = big - 1; s.lda = big - 1; accepted(s, "k 2^31 - 1");
    // k == 0: C = beta C, a and b not read
    s = SgemmArgs(); s.k = 0; s.a = nullptr; s.b = nullptr; s.lda = 0; accepted(s, "k 0, a and b NULL");
    // c is written while a and b are read
    s = SgemmArgs(); s.a = (const float *)(kFake + 64); rejected(s, "'c' and 'a' overlap", "a inside c");
    s = SgemmArgs(); s.b = (const float *)kFake; rejected(s, "'c' and 'b' overlap", "b on c");
    // an empty C is a no-op that inspects no pointer
    for (int which = 0; which < 2; which++) {
        s = SgemmArgs(); s.c = nullptr; s.a = nullptr; s.b = nullptr; s.lda = s.ldb = s.ldc = 0;
        (which ? s.n : s.m) = 0;
        EXPECT_EQ(call(s), cudaSuccess) << c().name << (which ? " n = 0" : " m = 0");
        EXPECT_STREQ(gk_failure_reason(), "");
    }
}

INSTANTIATE_TEST_SUITE_P(AllRungs, SgemmValidation, ::testing::Range(0, (int)(sizeof kSgemmCases / sizeof kSgemmCases[0])),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kSgemmCases[i.param].name); });

// ------------------------------------------------------------------ ledger

TEST(GemmLedger, FlopsAndBytes)
{
    gk_ledger l = gk_gemm_ledger(4096, 4096, 4096, GK_BF16, GK_BF16, 0, 0);
    EXPECT_DOUBLE_EQ(l.flops, 2.0 * 4096 * 4096 * 4096);
    EXPECT_DOUBLE_EQ(l.bytes, 3.0 * 4096 * 4096 * 2);
    // M, N, K distinct: A is M K, B is K N, D is M N
    l = gk_gemm_ledger(16, 11008, 4096, GK_BF16, GK_BF16, 0, 0);
    EXPECT_DOUBLE_EQ(l.flops, 2.0 * 16 * 11008 * 4096);
    EXPECT_DOUBLE_EQ(l.bytes, (16.0 * 4096 + 4096.0 * 11008) * 2 + 16.0 * 11008 * 2);
    // fp32 D, C read (D's dtype), fp32 bias
    l = gk_gemm_ledger(3, 5, 7, GK_F16, GK_F32, 1, 1);
    EXPECT_DOUBLE_EQ(l.flops, 210.0);
    EXPECT_DOUBLE_EQ(l.bytes, (21.0 + 35.0) * 2 + 15.0 * 4 * 2 + 5 * 4);
    l = gk_gemm_ledger(3, 5, 7, GK_BF16, GK_F16, 1, 0);
    EXPECT_DOUBLE_EQ(l.bytes, (21.0 + 35.0) * 2 + 15.0 * 2 * 2);
    l = gk_gemm_ledger(3, 5, 7, GK_BF16, GK_BF16, 0, 1);
    EXPECT_DOUBLE_EQ(l.bytes, (21.0 + 35.0) * 2 + 15.0 * 2 + 20);
    // fp32 ladder shapes: 4-byte inputs
    l = gk_gemm_ledger(1000, 1000, 1000, GK_F32, GK_F32, 1, 0);
    EXPECT_DOUBLE_EQ(l.flops, 2e9);
    EXPECT_DOUBLE_EQ(l.bytes, 2e6 * 4 + 1e6 * 4 * 2);
    // past 2^31 elements per operand: no 32-bit overflow in the arithmetic
    l = gk_gemm_ledger(65536, 65536, 65536, GK_BF16, GK_F32, 0, 0);
    EXPECT_DOUBLE_EQ(l.flops, 2.0 * 65536.0 * 65536.0 * 65536.0);
    EXPECT_DOUBLE_EQ(l.bytes, 2.0 * 65536.0 * 65536.0 * 2 + 65536.0 * 65536.0 * 4);
}

// ------------------------------------------------------------------ configurations

// Every shipped configuration: what the generator derives (threads, shared bytes) and the rules
// it asserts at compile time, restated here from the numbers the header reports.
TEST(GemmConfig, DerivedSizesAndRules)
{
    const int count = gk_gemm_config_count();
    ASSERT_GE(count, 2);
    int vec_kinds = 0, wgmma_configs = 0, direct_configs = 0;
    for (int i = 0; i < count; i++) {
        const gk_gemm_config g = gk_gemm_config_info(i);
        ASSERT_NE(g.name, nullptr) << i;
        SCOPED_TRACE(g.name);
        EXPECT_EQ(std::string(g.name).rfind("gk_gemm_bf16_", 0), 0u);
        EXPECT_NE(std::string(g.name).find(std::to_string(g.bm) + "x" + std::to_string(g.bn)), std::string::npos);
        if (g.wgmma) {
            // a producer warpgroup and two consumers of BM / 2 x BN (one or two wgmma
            // m64nBNk16 a k-step), at most 128 fp32 accumulators a consumer thread; 64-wide
            // k-tiles (one 128-byte swizzle row); 1 KB of alignment slack and two 8-byte
            // mbarriers a stage besides the stages; a persistent grid adds an epilogue buffer
            // (BM rows of BN + 8 floats); TMA needs 16-byte aligned rows
            // (a swapped tile, BM 16 or 64 x BN 128: each consumer BM rows by 64 columns of D; the
            // unswapped 64 x 64 and 64 x 32 tiles, a block a tile: each consumer the whole tile on
            // every other k-tile, its 32 or 16 accumulators a thread summed with the other's in the
            // stages)
            EXPECT_EQ(g.threads, 384);
            EXPECT_EQ(g.swap, g.bm < 128 && g.bn == 128 ? 1 : 0);
            EXPECT_TRUE(g.bm == 128 || g.bm == 256 || ((g.bm == 16 || g.bm == 64) && g.bn == 128) ||
                        (g.bm == 64 && (g.bn == 64 || g.bn == 32) && g.persistent == 0))
                << g.bm;
            EXPECT_TRUE(g.bn == 64 || g.bn == 128 || g.bn == 256 || (g.bn == 192 && g.bm == 128) ||
                        (g.bn == 160 && g.bm == 128 && g.persistent == 3) || (g.bn == 32 && g.bm == 64))
                << g.bn;
            // ping-pong (persistent 2, or 4 with TMA stores): each consumer a whole tile of 128 x 64 or
            // 128 x 128, two more mbarriers (the consumers' turns); persistent 3 and 4 stage their
            // TMA stores in two 64 x 64 16-bit boxes a consumer (32 KB) instead of the buffer
            const int pp = g.persistent == 2 || g.persistent == 4, out = g.persistent >= 3;
            EXPECT_LE(g.bm * g.bn / (pp ? 128 : 256), 128);
            EXPECT_EQ(g.wm, g.bm < 128 || pp ? g.bm : g.bm / 2);
            const int ks = g.bm == 64 && (g.bn == 64 || g.bn == 32);
            EXPECT_EQ(g.wn, g.bm < 128 && !ks ? g.bn / 2 : g.bn);
            EXPECT_EQ(g.bk, 64);
            EXPECT_TRUE(g.persistent >= 0 && g.persistent <= 5) << g.persistent;
            if (pp) EXPECT_TRUE(g.bm == 128 && g.bn <= 128 && !g.swap);
            // persistent 5: persistent 3 in 2-block clusters, each block half of B's 64-wide panels
            if (g.persistent == 5) EXPECT_TRUE(g.bm == 128 && g.bn >= 128) << g.bn;
            EXPECT_EQ(GK_GEMM_CLUSTER(g.persistent), g.persistent == 5 ? 2 : 1);
            if (out) EXPECT_GE(g.bm, 128);
            EXPECT_EQ(g.smem_bytes, 1024 + g.stages * ((g.bm + g.bn) * g.bk * 2 + 16) + (pp ? 16 : 0) +
                                        (out ? 32768 : g.persistent ? g.bm * (g.bn + 8) * 4 : 0));
            if (!g.persistent) EXPECT_LE((ks ? 2 : 1) * g.bm * (g.bn + 8) * 4, g.stages * (g.bm + g.bn) * g.bk * 2);
            EXPECT_LE(g.smem_bytes, 227 * 1024);
            EXPECT_GE(g.stages, 2);
            EXPECT_EQ(g.min_blocks, 1);
            EXPECT_EQ(g.vec, 1);
            EXPECT_GT(g.rate, 0);
            wgmma_configs++;
            continue;
        }
        EXPECT_LT(i, GK_GEMM_NMMA) << "the mma.sync configurations come first";
        if (g.stages == 0) {
            // direct (tiny problems): 4 warps of 16 x WN, along M (64 x BN) or along N (16 x BN),
            // whose fragments come straight from global memory, BK / 16 k-steps a round
            // (gk_gemm_direct_run's arrays: 4 k-steps, 8 n8 fragments), no shared memory, any
            // alignment
            EXPECT_TRUE(g.bm == 64 || g.bm == 16) << g.name;
            EXPECT_EQ(g.wm, 16);
            EXPECT_EQ(g.wn, g.bm == 64 ? g.bn : g.bn / 4);
            EXPECT_EQ(g.wn % 8, 0);
            EXPECT_LE(g.wn, 64);
            EXPECT_EQ(g.bk % 16, 0);
            EXPECT_LE(g.bk, 64);
            EXPECT_EQ(g.threads, 128);
            EXPECT_EQ(g.smem_bytes, 0);
            EXPECT_EQ(g.vec, 0);
            EXPECT_EQ(g.dbuf, 0);
            EXPECT_GE(g.min_blocks, 1);
            direct_configs++;
            continue;
        }
        EXPECT_EQ(g.bm % g.wm, 0);
        EXPECT_EQ(g.bn % g.wn, 0);
        EXPECT_EQ(g.threads, (g.bm / g.wm) * (g.bn / g.wn) * 32);
        EXPECT_LE(g.threads, 1024);
        // the stages; TMA-fed tiles (VEC 2) also a 1024-byte alignment and an mbarrier a stage
        const int tma_extra = g.vec == 2 ? 1024 + 8 * g.stages : 0;
        EXPECT_EQ(g.smem_bytes, g.stages * (g.bm + g.bn) * g.bk * 2 + tma_extra);
        EXPECT_EQ(g.smem_bytes, gk_gemm_smem_bytes(g.bm, g.bn, g.bk, g.stages) + tma_extra);
        EXPECT_LE(g.smem_bytes, 227 * 1024);
        // warp tiles of whole m16n8k16 fragments, within the fragment arrays of gk_gemm_mma_run
        // (A: 4 x 8 registers, B: 2 x 16)
        EXPECT_EQ(g.wm % 16, 0);
        EXPECT_EQ(g.wn % 16, 0);
        EXPECT_LE(g.wm, 128);
        EXPECT_LE(g.wn, 128);
        EXPECT_TRUE(g.bk == 16 || g.bk == 32 || g.bk == 64) << g.bk;
        EXPECT_EQ(g.bm % 64, 0);
        EXPECT_EQ(g.bn % 64, 0);
        // each thread copies the same number of 16-byte chunks of the A and B tiles, at most 8
        // (the copy plan's arrays)
        EXPECT_EQ(g.bm * g.bk / 8 % g.threads, 0);
        EXPECT_EQ(g.bn * g.bk / 8 % g.threads, 0);
        EXPECT_GE(g.bm * g.bk / 8 / g.threads, 1);
        EXPECT_LE(g.bm * g.bk / 8 / g.threads, 8);
        EXPECT_LE(g.bn * g.bk / 8 / g.threads, 8);
        // the copy plan keeps a thread's chunks in one column of 8 values of an MN-contiguous tile
        // (and in one k chunk of a K-contiguous one): threads is a multiple of BMN / 8 and BK / 8
        EXPECT_EQ(g.threads % (g.bm / 8), 0);
        EXPECT_EQ(g.threads % (g.bn / 8), 0);
        EXPECT_EQ(g.threads % (g.bk / 8), 0);
        EXPECT_GE(g.stages, 2);
        EXPECT_LE(g.stages, 5);
        EXPECT_GE(g.min_blocks, 1);
        EXPECT_LE(g.min_blocks * g.smem_bytes, 227 * 1024);
        EXPECT_TRUE(g.vec == 0 || g.vec == 1 || g.vec == 2) << g.vec;
        if (g.vec == 2) { // TMA boxes: at most 256 rows; double-buffered fragments
            EXPECT_LE(g.bm, 256);
            EXPECT_LE(g.bn, 256);
            EXPECT_EQ(g.dbuf, 1);
        }
        vec_kinds |= 1 << g.vec;
    }
    // cp.async kernels (the large tile TMA-fed where it can be), and element-wise-load kernels
    // for operands that are not 16-byte aligned
    EXPECT_EQ(vec_kinds, 7);
    EXPECT_GE(direct_configs, 1);
    EXPECT_EQ(wgmma_configs, count - GK_GEMM_NMMA);
    EXPECT_GE(wgmma_configs, 1);
    EXPECT_EQ(gk_gemm_config_info(-1).name, nullptr);
    EXPECT_EQ(gk_gemm_config_info(-2).name, nullptr);
    EXPECT_EQ(gk_gemm_config_info(count).name, nullptr);
    EXPECT_EQ(gk_gemm_config_info(count + 100).name, nullptr);
    EXPECT_EQ(gk_gemm_config_info(count).threads, 0);
}

// ------------------------------------------------------------------ dispatcher

// The dispatcher's rule for the direct tiles, restated: K <= 128 where A is row-major and B
// transposed (both K-contiguous, whatever their rows' alignment), K <= 16 otherwise; then at most
// 256 tiles of 64 x 8, or M <= 16 and at most 512 tiles of 16 x 32. The tile's name, or null.
static const char *direct_tile(int64_t m, int64_t n, int64_t k, int ta, int tb)
{
    if (k > (!ta && tb ? 128 : 16)) return nullptr;
    if (((m + 63) / 64) * ((n + 7) / 8) <= 256) return "gk_gemm_bf16_64x8x64_direct";
    if (m <= 16 && (n + 31) / 32 <= 512) return "gk_gemm_bf16_16x32x64_direct";
    return nullptr;
}

// Whether the measured table names a configuration for this shape in this process (it comes
// before the direct tile's rule; the plan reads it only where the wgmma kernels can run).
static bool table_names(int64_t m, int64_t n, int64_t k, int ta, int tb)
{
#ifdef GK_GEMM_TUNED
    int config = -1;
    int64_t splits = 1;
    return gk_gemm_wg_ready() && gk_gemm_tuned_pick(m, n, k, ta, tb, &config, &splits);
#else
    (void)m, (void)n, (void)k, (void)ta, (void)tb;
    return false;
#endif
}

// One plan (132 SMs assumed without a GPU, the device's own count with one): a shipped
// configuration, 1 .. GK_GEMM_MAX_SPLITS splits, a workspace that is the split-K partials plus
// the repacked operands, each rounded to 256 bytes; an operand is repacked when its rows are not
// 16-byte aligned (a leading dimension that is not a multiple of 8), never when they are 128-byte
// aligned (a multiple of 64), and in between only on the wgmma kernels (where the plan judges
// the repack worth it), into rows of 64-value multiples.
static gk_gemm_plan expect_plan_consistent(int64_t m, int64_t n, int64_t k, int ta, int64_t lda, int tb, int64_t ldb)
{
    const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, ta, lda, tb, ldb);
    char trace[160];
    snprintf(trace, sizeof trace, "plan m=%lld n=%lld k=%lld ta=%d lda=%lld tb=%d ldb=%lld: config %d, %d splits",
             (long long)m, (long long)n, (long long)k, ta, (long long)lda, tb, (long long)ldb, pl.config, pl.splits);
    SCOPED_TRACE(trace);
    EXPECT_GE(pl.config, 0);
    EXPECT_LT(pl.config, gk_gemm_config_count());
    EXPECT_GE(pl.splits, 1);
    EXPECT_LE(pl.splits, GK_GEMM_MAX_SPLITS);
    if (pl.splits > 1) EXPECT_GE(k / pl.splits, 256) << "splits of K too short to pay for their partials";
    EXPECT_EQ(pl.workspace_bytes, pl.split_bytes + pl.pack_a_bytes + pl.pack_b_bytes);
    EXPECT_EQ(gk_gemm_workspace_bytes(m, n, k, ta, lda, tb, ldb), pl.workspace_bytes);
    const gk_gemm_config cfg = gk_gemm_config_info(pl.config);
    if (pl.splits == 1)
        EXPECT_EQ(pl.split_bytes, 0u);
    else if (gk_gemm_splits_in_kernel(&cfg, pl.splits, m, n)) // a partial tile a split, a counter a tile
        EXPECT_EQ(pl.split_bytes, (size_t)gk_round_up(gk_ceil_div(m, cfg.bm) * gk_ceil_div(n, cfg.bn) *
                                                          ((int64_t)pl.splits * cfg.bm * cfg.bn * 4 + 8),
                                                      256));
    else
        EXPECT_GE(pl.split_bytes, (size_t)pl.splits * m * n * 4);
    EXPECT_EQ(pl.split_bytes % 256, 0u);
    const int64_t rows_a = ta ? k : m, cols_a = ta ? m : k, rows_b = tb ? n : k, cols_b = tb ? k : n;
    const size_t whole_a = (size_t)gk_round_up(rows_a * gk_round_up(cols_a, 64) * 2, 256),
                 whole_b = (size_t)gk_round_up(rows_b * gk_round_up(cols_b, 64) * 2, 256);
    if (direct_tile(m, n, k, ta, tb) && !table_names(m, n, k, ta, tb)) { // tiny: a direct tile, any alignment, one launch
        EXPECT_STREQ(cfg.name, direct_tile(m, n, k, ta, tb));
        EXPECT_EQ(pl.splits, 1);
        EXPECT_EQ(pl.workspace_bytes, 0u);
        return pl;
    }
    if ((lda % 8 || ldb % 8) && m * n <= 65536 && k <= 256) { // tiny: the element-wise kernel, one launch
        EXPECT_EQ(pl.config, GK_GEMM_ELEM_CONFIG);
        EXPECT_EQ(pl.workspace_bytes, 0u);
        return pl;
    }
    if (lda % 64 == 0) EXPECT_EQ(pl.pack_a_bytes, 0u);
    else if (lda % 8 != 0 || !gk_gemm_wg_ready()) EXPECT_EQ(pl.pack_a_bytes, lda % 8 ? whole_a : 0u);
    else EXPECT_TRUE(pl.pack_a_bytes == 0 || pl.pack_a_bytes == whole_a);
    if (ldb % 64 == 0) EXPECT_EQ(pl.pack_b_bytes, 0u);
    else if (ldb % 8 != 0 || !gk_gemm_wg_ready()) EXPECT_EQ(pl.pack_b_bytes, ldb % 8 ? whole_b : 0u);
    else EXPECT_TRUE(pl.pack_b_bytes == 0 || pl.pack_b_bytes == whole_b);
    EXPECT_EQ(pl.pack_a_bytes % 256, 0u);
    EXPECT_EQ(pl.pack_b_bytes % 256, 0u);
    return pl;
}

TEST(GemmDispatch, PlanIsConsistent)
{
    for (int64_t m : {1, 16, 100, 1030, 4096})
        for (int64_t n : {1, 33, 512, 4096})
            for (int64_t k : {1, 65, 1000, 1024, 8192})
                for (int layout = 0; layout < 4; layout++) {
                    const int ta = layout >> 1, tb = layout & 1;
                    const int64_t row_a = ta ? m : k, row_b = tb ? k : n;
                    for (int64_t pad : {0, 3, 8}) {
                        expect_plan_consistent(m, n, k, ta, row_a + pad, tb, row_b + pad);
                        if (HasFailure()) return;
                    }
                }
}

// The dispatcher's time model as on an H200 (132 SMs), called directly so that it runs without a
// GPU, the measured table left out (GemmDispatch.MeasuredTable checks it): with the sm_90a
// kernels (wg) and A row-major, M <= 64 on a swapped tile; otherwise the wgmma tile
// with the least waves x tile FLOPs / measured rate, K split only when the tiles would leave two
// thirds of the SMs idle. Without them, or with A transposed, M <= 16 on the small mma.sync tile.
static gk_gemm_plan wg_plan(int64_t m, int64_t n, int64_t k, int a_row_major = 1, int wg = 1)
{
    gk_gemm_plan pl = {};
    gk_gemm_plan_impl(m, n, k, a_row_major ? m : k, a_row_major ? k : m, gk_gemm_row_align(NULL, a_row_major ? k : m), n,
                      k, gk_gemm_row_align(NULL, k), 132, wg, a_row_major, 1, 0, &pl);
    return pl;
}

static std::string wg_name(const gk_gemm_plan &pl) { return gk_gemm_config_info(pl.config).name; }

// The configuration (its name past "gk_gemm_bf16_") and split count of one plan.
static void expect_pick(int64_t m, int64_t n, int64_t k, int a_row_major, int wg, const char *tile, int splits)
{
    const gk_gemm_plan pl = wg_plan(m, n, k, a_row_major, wg);
    EXPECT_EQ(wg_name(pl), std::string("gk_gemm_bf16_") + tile) << m << " x " << n << " x " << k;
    EXPECT_EQ(pl.splits, splits) << m << " x " << n << " x " << k;
    EXPECT_GE(pl.split_bytes, splits > 1 ? (size_t)splits * m * n * 4 : 0) << m << " x " << n << " x " << k;
}

// A persistent 3 tile and its persistent 5 twin (the same tile in 2-block clusters) name each
// other; every other configuration is its own twin.
TEST(GemmDispatch, ClusterTwins)
{
    int pairs = 0;
    for (int c = 0; c < gk_gemm_config_count(); c++) {
        const gk_gemm_config f = gk_gemm_config_info(c);
        SCOPED_TRACE(f.name);
        const int two = gk_gemm_cluster_twin(c, 2), one = gk_gemm_cluster_twin(c, 1);
        if (!f.wgmma || (f.persistent != 3 && f.persistent != 5)) {
            EXPECT_EQ(two, c);
            EXPECT_EQ(one, c);
            continue;
        }
        const gk_gemm_config t = gk_gemm_config_info(f.persistent == 3 ? two : one);
        if ((f.persistent == 3 ? two : one) == c) continue; /* no twin */
        EXPECT_EQ(t.bm, f.bm);
        EXPECT_EQ(t.bn, f.bn);
        EXPECT_EQ(t.stages, f.stages);
        EXPECT_EQ(t.persistent, f.persistent == 3 ? 5 : 3);
        EXPECT_EQ(gk_gemm_cluster_twin(f.persistent == 3 ? two : one, f.persistent == 3 ? 1 : 2), c);
        pairs++;
    }
    if (GK_GEMM_NCONFIG > GK_GEMM_NMMA) EXPECT_GE(pairs, 2) << "the 128 x 256 tile and its cluster twin";
}

// A block-a-tile tile's ping-pong twin (PERSIST 4, the same tile and stages); every other
// configuration, and a tile without one, is its own.
TEST(GemmDispatch, PingPongTwins)
{
    int pairs = 0;
    for (int c = 0; c < gk_gemm_config_count(); c++) {
        const gk_gemm_config f = gk_gemm_config_info(c);
        SCOPED_TRACE(f.name);
        const int twin = gk_gemm_pingpong_twin(c);
        if (twin == c) continue;
        const gk_gemm_config t = gk_gemm_config_info(twin);
        EXPECT_TRUE(f.wgmma && f.persistent == 0 && !f.swap);
        EXPECT_EQ(t.bm, f.bm);
        EXPECT_EQ(t.bn, f.bn);
        EXPECT_EQ(t.stages, f.stages);
        EXPECT_EQ(t.persistent, 4);
        EXPECT_EQ(gk_gemm_pingpong_twin(twin), twin);
        pairs++;
    }
    if (GK_GEMM_NCONFIG > GK_GEMM_NMMA) EXPECT_GE(pairs, 1) << "the 128 x 64 tile and its ping-pong twin";
}

TEST(GemmDispatch, WgmmaTilesByWaves)
{
    const struct {
        int64_t m, n, k;
        int a_row_major, wg;
        const char *tile;
        int splits;
    } picks[] = {
        // 4096^2: 512 tiles of 128 x 256 or 256 x 128 (4 waves each), 1024 of 128 x 128 (8 waves);
        // whole K on 128 x 256 in 32 tile rows and 3.9 waves: its twin in 2-block clusters
        {4096, 4096, 4096, 1, 1, "wg128x256x64_s4_ptc", 1},
        // 4095 x 4097: 544 tiles of 128 x 256 (5 waves), 528 of 256 x 128 (4 waves)
        {4095, 4097, 4093, 1, 1, "wg256x128x64_s4_pt", 1},
        // M = 128, N = 28672: 112 tiles of 128 x 256 in one (partial) wave beat 224 of 128 x 128
        {128, 28672, 8192, 1, 1, "wg128x256x64_s4_pt", 1},
        // 8192 x 4096: 1024 tiles of 128 x 256 (32 tile rows): the twin; M = 1152 (9 tile rows,
        // 1152 tiles): the tile alone (a pair's second tile past M would leave its block idle)
        {8192, 4096, 4096, 1, 1, "wg128x256x64_s4_ptc", 1},
        {1152, 32768, 4096, 1, 1, "wg128x256x64_s4_pt", 1},
        // M = 128, N = 8192: 128 tiles of 128 x 64 (one wave, at 426 against 64 of 128 x 128 at
        // 653 and 32 of 128 x 256 at 858): not split, so its ping-pong twin (one consumer a tile)
        {128, 8192, 8192, 1, 1, "wg128x64x64_s8_ppt", 1},
        // 1024^3 NT and TT, 128 tiles of 128 x 64: the twin by the same rule (every layout, with
        // the table and without: PingPongTwinInOneWave)
        {1024, 1024, 1024, 1, 1, "wg128x64x64_s8_ppt", 1},
        {1024, 1024, 1024, 0, 1, "wg128x64x64_s8_ppt", 1},
        // M = 256, N = 1024: 32 tiles of 128 x 64, K split into one wave of 4 x 32 blocks
        {256, 1024, 8192, 1, 1, "wg128x64x64_s8", 4},
        // M = 256, N = 8192: 128 tiles of 128 x 128 in one wave beat 256 of 128 x 64 in two (not
        // ping-pong: one tile a block, nothing to overlap)
        {256, 8192, 8192, 1, 1, "wg128x128x64_s6_pt", 1},
        // 3072 x 2048: 264 tiles of 128 x 192 in 2 waves beat 384 of 128 x 128 in 3 (ping-pong) and
        // 192 of 128 x 256 in 2; 6144 x 1024: 384 tiles of 128 x 128 in 3 waves, ping-pong, beat 288
        // of 128 x 192 in 3 and 192 of 128 x 256 in 2
        {3072, 2048, 4096, 1, 1, "wg128x192x64_s4_pt", 1},
        {6144, 1024, 4096, 1, 1, "wg128x128x64_s6_ppt", 1},
        // Llama-3-70B qkv, M = 256: 108 tiles of 128 x 192 in one wave beat 80 of 128 x 256 (a
        // wave part full, each tile a third more work) and 160 of 128 x 128 in two
        {256, 10240, 8192, 1, 1, "wg128x192x64_s4_pt", 1},
        // decode, A row-major: the swapped 16 x 128 tile, K split only until 64 blocks stream B
        // (N = 8192: 64 tiles, none; N = 1000: 8 tiles, 8 splits)
        {16, 8192, 8192, 1, 1, "wg16x128x64_s8_p", 1},
        {1, 28672, 8192, 1, 1, "wg16x128x64_s8_p", 1},
        {16, 1000, 65536, 1, 1, "wg16x128x64_s8_p", 8},
        // 16 < M <= 64: the swapped 64 x 128 tile
        {17, 8192, 8192, 1, 1, "wg64x128x64_s7_p", 1},
        {64, 28672, 8192, 1, 1, "wg64x128x64_s7_p", 1},
        // A transposed, or no wgmma kernels: the small mma.sync tile (3 blocks an SM, 396
        // resident), 3 splits for N = 8192 (128 tiles: one wave of 384 blocks) and for N = 28672
        // (448 tiles: 1344 blocks of a third of K each, 4 waves)
        {16, 8192, 8192, 0, 1, "64x64x64_s4", 3},
        {1, 28672, 8192, 0, 1, "64x64x64_s4", 3},
        {16, 8192, 8192, 1, 0, "64x64x64_s4", 3},
        // short K is not split; one tile is one block
        {16, 8192, 512, 1, 1, "wg16x128x64_s8_p", 1},
        {17, 33, 200, 1, 1, "wg64x128x64_s7_p", 1},
        // a tiny problem past M = 64 (K < 1024, its tiles under a quarter of the SMs): the swapped
        // 16 x 128 tile too, whole K; past a quarter, or with K >= 1024, the unswapped tiles
        {65, 33, 200, 1, 1, "wg16x128x64_s8_p", 1},
        {300, 40, 200, 1, 1, "wg16x128x64_s8_p", 1},
        {300, 40, 2000, 1, 1, "wg128x64x64_s8", 3},
        {2000, 1000, 200, 1, 1, "wg128x128x64_s6_pt", 1},
        // a tiny problem with rows off 16 bytes past the direct tile (K = 201; 37 x 33 x 65 with A
        // transposed): the element-wise kernel, one launch
        {17, 33, 201, 1, 1, "64x64x64_s4_elem", 1},
        {37, 33, 65, 0, 1, "64x64x64_s4_elem", 1},
        // tinier (256 tiles of 64 x 8 at most, K <= 128 with both operands K-contiguous, rows of
        // 16-byte multiples or not, K <= 16 otherwise): the direct tile, with or without the wgmma
        // kernels, A transposed or not
        {17, 33, 72, 1, 1, "64x8x64_direct", 1},
        {16168, 8, 8, 1, 1, "64x8x64_direct", 1},
        {9398, 8, 128, 1, 1, "64x8x64_direct", 1},
        {9398, 8, 128, 1, 0, "64x8x64_direct", 1},
        {1063, 91, 11, 1, 1, "64x8x64_direct", 1},
        {24, 32, 16, 0, 1, "64x8x64_direct", 1},
        {6, 8, 176, 1, 1, "wg16x128x64_s8_p", 1},
        {24, 32, 24, 0, 1, "wg128x64x64_s8_ppt", 1},
        {3277, 1, 39, 1, 1, "64x8x64_direct", 1},
        {528, 3, 127, 1, 1, "64x8x64_direct", 1},
        {16168, 16, 8, 1, 1, "wg128x64x64_s8_ppt", 1},
        // M <= 16 beside an N too wide for 256 tiles of 64 x 8: the 16 x 32 direct tile (past 512
        // of its tiles, or past 16 of M, not)
        {9, 11056, 24, 1, 1, "16x32x64_direct", 1},
        {12, 10768, 24, 1, 0, "16x32x64_direct", 1},
        {2, 11912, 32, 1, 1, "16x32x64_direct", 1},
        {16, 16384, 128, 1, 1, "16x32x64_direct", 1},
        {16, 16448, 128, 1, 1, "wg16x128x64_s8_p", 1},
        {17, 8192, 24, 1, 1, "wg64x128x64_s7_p", 1},
    };
    for (const auto &c : picks) expect_pick(c.m, c.n, c.k, c.a_row_major, c.wg, c.tile, c.splits);
    gk_gemm_plan pl;
    // every pick is a wgmma configuration, with 1 .. GK_GEMM_MAX_SPLITS splits, swapped at M <= 64
    // and for tiny problems (K < 1024, fewer than 33 tiles of 128 x 64), unswapped elsewhere (rows
    // of K = 1 are off 16 bytes: tiny problems take the element-wise kernel)
    for (int64_t m : {1, 16, 17, 64, 65, 100, 1030, 4096, 16384})
        for (int64_t n : {1, 300, 4097, 28672})
            for (int64_t k : {1, 1000, 8192}) {
                pl = wg_plan(m, n, k);
                if (direct_tile(m, n, k, 0, 1)) {
                    EXPECT_STREQ(gk_gemm_config_info(pl.config).name, direct_tile(m, n, k, 0, 1)) << m << " " << n << " " << k;
                    continue;
                }
                if (k == 1 && m * n <= 65536) {
                    EXPECT_EQ(pl.config, GK_GEMM_ELEM_CONFIG) << m << " " << n << " " << k;
                    continue;
                }
                EXPECT_EQ(gk_gemm_config_info(pl.config).wgmma, 1) << m << " " << n << " " << k;
                const bool tiny = k < 1024 && ((m + 127) / 128) * ((n + 63) / 64) * 4 <= 132;
                EXPECT_EQ(gk_gemm_config_info(pl.config).swap, m <= 64 || tiny ? 1 : 0) << m << " " << n << " " << k;
                EXPECT_GE(pl.splits, 1);
                EXPECT_LE(pl.splits, GK_GEMM_MAX_SPLITS);
            }
}

#ifdef GK_GEMM_TUNED
// The measured table: every entry names a configuration of this build or "model"; at an entry's
// own shape and layout the dispatcher takes its configuration and splits (its time model's pick
// for "model"); a shape within the table's reach takes the nearest entry's; one far from every
// entry, a build without the wgmma kernels, and a swapped tile with A transposed get the time
// model's pick.
static gk_gemm_plan tuned_plan(int64_t m, int64_t n, int64_t k, int ta, int tb, int wg = 1, int tuned = 1)
{
    gk_gemm_plan pl = {};
    gk_gemm_plan_impl(m, n, k, ta ? k : m, ta ? m : k, gk_gemm_row_align(NULL, ta ? m : k), tb ? n : k, tb ? k : n,
                      gk_gemm_row_align(NULL, tb ? k : n), 132, wg, !ta, tb, tuned, &pl);
    return pl;
}

// Whole K on the 128 x 64 tile in one wave: the model's pick goes to its ping-pong twin, the
// fastest there in the sweep and the bench (1024^3 in every layout, 1161 x 512 x 32), table or not.
TEST(GemmDispatch, PingPongTwinInOneWave)
{
    if (GK_GEMM_NCONFIG <= GK_GEMM_NMMA) GTEST_SKIP() << "no wgmma configurations in this build";
    const std::string twin = "gk_gemm_bf16_wg128x64x64_s8_ppt";
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int tuned = 0; tuned < 2; tuned++) {
                const gk_gemm_plan pl = tuned_plan(1024, 1024, 1024, ta, tb, 1, tuned);
                EXPECT_EQ(wg_name(pl), twin) << "1024^3 ta " << ta << " tb " << tb << " tuned " << tuned;
                EXPECT_EQ(pl.splits, 1);
            }
    EXPECT_EQ(wg_name(tuned_plan(1161, 512, 32, 0, 1)), twin);
    // 132 tiles of 128 x 64 are one wave; in K splits the cooperative tile stays
    EXPECT_EQ(wg_name(tuned_plan(128 * 33, 64 * 4, 4096, 0, 1, 1, 0)), twin);
    const gk_gemm_plan split = tuned_plan(256, 1024, 8192, 0, 1, 1, 0);
    EXPECT_EQ(wg_name(split), "gk_gemm_bf16_wg128x64x64_s8");
    EXPECT_EQ(split.splits, 4);
}

TEST(GemmDispatch, MeasuredTable)
{
    ASSERT_GT(GK_GEMM_NTUNED, 0);
    int measured = 0;
    for (int i = 0; i < GK_GEMM_NTUNED; i++) {
        const gk_gemm_tuned_entry &e = gk_gemm_tuned_table[i];
        SCOPED_TRACE(std::to_string(e.m) + " x " + std::to_string(e.n) + " x " + std::to_string(e.k) + " " + e.tile);
        const int c = gk_gemm_tuned_config(i);
        const gk_gemm_plan got = tuned_plan(e.m, e.n, e.k, e.trans_a, e.trans_b);
        const gk_gemm_plan model = tuned_plan(e.m, e.n, e.k, e.trans_a, e.trans_b, 1, 0);
        if (direct_tile(e.m, e.n, e.k, e.trans_a, e.trans_b) && std::string(e.tile) == "model") {
            EXPECT_STREQ(gk_gemm_config_info(got.config).name, direct_tile(e.m, e.n, e.k, e.trans_a, e.trans_b))
                << "a tiny problem left to the model: a direct tile";
            continue;
        }
        if (gk_gemm_tiny_unaligned(e.m, e.n, e.k, gk_gemm_row_align(NULL, e.trans_a ? e.m : e.k),
                                   gk_gemm_row_align(NULL, e.trans_b ? e.k : e.n))) {
            EXPECT_EQ(got.config, GK_GEMM_ELEM_CONFIG) << "a tiny problem with rows off 16 bytes: one launch first";
            continue;
        }
        if (std::string(e.tile) == "model") {
            EXPECT_EQ(c, -1);
            EXPECT_EQ(got.config, model.config);
            EXPECT_EQ(got.splits, model.splits);
            continue;
        }
        measured++;
        ASSERT_GE(c, 0) << "the table names a configuration this build lacks";
        EXPECT_GE(e.splits, 1);
        if ((gk_gemm_config_info(c).swap && e.trans_a) || (GK_GEMM_WG_B_K_MAJOR(gk_gemm_config_info(c).bm,
                                                                                 gk_gemm_config_info(c).bn) && !e.trans_b)) {
            EXPECT_EQ(got.config, model.config) << "a swapped tile never takes A transposed, 64 x 64, 64 x 32 or BN 160 B MN-major";
            continue;
        }
        // the entry's configuration as it is (the twin rules are the model's: the table was
        // measured with the twins among the tiles), splits of 128 of K at least
        const int64_t s = std::min<int64_t>(std::min<int64_t>(e.splits, GK_GEMM_MAX_SPLITS), std::max<int64_t>(e.k / 128, 1));
        EXPECT_EQ(got.config, c);
        EXPECT_EQ(got.splits, s);
        // a shape 10% off in each dimension is still this entry's, unless another is nearer
        const gk_gemm_plan near = tuned_plan(e.m + e.m / 10, e.n + e.n / 10, e.k + e.k / 10, e.trans_a, e.trans_b);
        EXPECT_GE(near.config, 0);
        // without the wgmma kernels, or without the table, the time model
        EXPECT_EQ(tuned_plan(e.m, e.n, e.k, e.trans_a, e.trans_b, 0).config,
                  tuned_plan(e.m, e.n, e.k, e.trans_a, e.trans_b, 0, 0).config);
    }
    EXPECT_GT(measured, 0);
    // far from every entry (M, N, K all 2^20 or more off the suite's range): the time model
    const gk_gemm_plan far = tuned_plan(1 << 20, 3, 1 << 22, 0, 1), far_model = tuned_plan(1 << 20, 3, 1 << 22, 0, 1, 1, 0);
    EXPECT_EQ(far.config, far_model.config);
    EXPECT_EQ(far.splits, far_model.splits);
    // Mitchell's log2: exact at powers of two, within 0.09 between
    for (int64_t x : {1, 2, 3, 5, 7, 100, 1000, 4095, 4096, 4097, 1 << 30})
        EXPECT_NEAR(gk_gemm_log2_approx(x), std::log2((double)x), 0.09) << x;
    EXPECT_EQ(gk_gemm_log2_approx(4096), 12.0);
}
#endif

// Rows 16-byte but not 128-byte aligned: repacked on the wgmma kernels where the GEMM's time is
// at least 3x the repack's, its bytes and its launch (1959 x 10552 x 552: both operands, B's rows
// the tile's wider side; not 15055 x 1360 x 96 nor 5181 x 304 x 24, a few microseconds), the larger
// operand left as it is where the tile takes fewer of its rows (8976 x 1824 x 11240 on 128 x 192:
// B alone); not on the 2-block cluster tile (4096 x 4096 x 4040), not where the copy would take
// over a third of the GEMM (7613 x 88 x 3696, 342 x 8480 x 776), not for K <= 256, where writing
// D is the time (8266 x 10296 x 144; 8266 x 10296 x 264 repacked), never without the wgmma
// kernels, never for 128-byte rows.
TEST(GemmDispatch, RepacksRowsOffTheLineWhereItPays)
{
    auto plan = [](int64_t m, int64_t n, int64_t k, int64_t ld, int wg) {
        gk_gemm_plan pl = {};
        gk_gemm_plan_impl(m, n, k, m, k, gk_gemm_row_align(NULL, ld), n, k, gk_gemm_row_align(NULL, ld), 132, wg, 1, 1, 0,
                          &pl);
        return pl;
    };
    gk_gemm_plan pl = plan(8976, 1824, 11240, 11240, 1);
    ASSERT_LT(gk_gemm_config_table[pl.config]->bm, gk_gemm_config_table[pl.config]->bn);
    ASSERT_EQ(GK_GEMM_CLUSTER(gk_gemm_config_table[pl.config]->persistent), 1);
    EXPECT_EQ(pl.pack_a_bytes, 0u);
    EXPECT_EQ(pl.pack_b_bytes, (size_t)1824 * 11264 * 2);
    EXPECT_EQ(pl.workspace_bytes, pl.split_bytes + pl.pack_a_bytes + pl.pack_b_bytes);
    pl = plan(1959, 10552, 552, 552, 1);
    ASSERT_EQ(GK_GEMM_CLUSTER(gk_gemm_config_table[pl.config]->persistent), 1);
    EXPECT_EQ(pl.pack_a_bytes, (size_t)gk_round_up(1959 * 576 * 2, 256));
    EXPECT_EQ(pl.pack_b_bytes, (size_t)10552 * 576 * 2);
    pl = plan(4096, 4096, 4040, 4040, 1);
    EXPECT_EQ(GK_GEMM_CLUSTER(gk_gemm_config_table[pl.config]->persistent), 2);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(4096, 4096, 4040, 4040, 0);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(4096, 4096, 4040, 4096, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(7613, 88, 3696, 3696, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(342, 8480, 776, 776, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    // a GEMM of a few microseconds: the repack's launch alone would cost more than the rows off
    // the line (15055 x 1360 x 96: 27.3 us repacked, 22.7 in place)
    pl = plan(15055, 1360, 96, 96, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(5181, 304, 24, 24, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(8266, 10296, 144, 144, 1);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    pl = plan(8266, 10296, 264, 264, 1);
    EXPECT_GT(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    EXPECT_EQ(gk_gemm_row_align(NULL, 4040), 1);
    EXPECT_EQ(gk_gemm_row_align(NULL, 4096), 2);
    EXPECT_EQ(gk_gemm_row_align(NULL, 4093), 0);
    alignas(256) static char buf[512];
    EXPECT_EQ(gk_gemm_row_align(buf + 16, 4096), 1);
    EXPECT_EQ(gk_gemm_row_align(buf + 2, 4096), 0);
    EXPECT_EQ(gk_gemm_row_align(buf, 4096), 2);
}

// Where K splits are summed in the kernel (one launch) rather than by a second launch: the
// 128-row TMA-store tiles, 2 to 4 splits, tiles at least half inside D; the workspace it asks
// for then holds a partial tile a split and a 64-bit counter a tile.
TEST(GemmDispatch, SplitsSummedInKernelWhereTheyPay)
{
    int tiles_seen = 0;
    for (int c = 0; c < gk_gemm_config_count(); c++) {
        const gk_gemm_config f = gk_gemm_config_info(c);
        const bool has = f.wgmma && f.persistent == 3 && f.bm == 128;
        EXPECT_EQ(GK_GEMM_SPLITS_IN_KERNEL(f.persistent, f.bm) != 0, has) << f.name;
        if (!has) {
            EXPECT_EQ(gk_gemm_splits_in_kernel(gk_gemm_config_table[c], 2, 4096, 4096), 0) << f.name;
            continue;
        }
        tiles_seen++;
        const int64_t m = 2 * f.bm, n = 3 * f.bn, tiles = 6; // whole tiles
        for (int s = 1; s <= 6; s++) {
            const int in = gk_gemm_splits_in_kernel(gk_gemm_config_table[c], s, m, n);
            EXPECT_EQ(in, s >= 2 && s <= 4) << f.name << " " << s << " splits";
            EXPECT_EQ(gk_gemm_splits_bytes(gk_gemm_config_table[c], s, m, n),
                      in ? (size_t)gk_round_up(tiles * (s * f.bm * f.bn * 4 + 8), 256) : gk_gemm_split_bytes(s, m, n))
                << f.name << " " << s << " splits";
        }
        // half inside D sums in the kernel, less than half by a second launch
        EXPECT_EQ(gk_gemm_splits_in_kernel(gk_gemm_config_table[c], 2, f.bm / 2, f.bn), 1) << f.name;
        EXPECT_EQ(gk_gemm_splits_in_kernel(gk_gemm_config_table[c], 2, f.bm / 2 - 1, f.bn), 0) << f.name;
        EXPECT_EQ(gk_gemm_splits_in_kernel(gk_gemm_config_table[c], 2, 1, 4096), 0) << f.name;
    }
    if (GK_GEMM_NCONFIG > GK_GEMM_NMMA) EXPECT_GE(tiles_seen, 1) << "no tile sums its splits in the kernel";
}

TEST(GemmDispatch, SplitsLongKOfFewTilesOnly)
{
    // decode-like: 16 x 512 is a handful of tiles, K = 8192 long: K is split
    gk_gemm_plan pl = expect_plan_consistent(16, 512, 8192, 0, 8192, 1, 8192);
    EXPECT_GT(pl.splits, 1);
    EXPECT_GT(pl.split_bytes, 0u);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    // 4096^3 fills any GPU with tiles: no split, no workspace
    pl = expect_plan_consistent(4096, 4096, 4096, 0, 4096, 0, 4096);
    EXPECT_EQ(pl.splits, 1);
    EXPECT_EQ(pl.workspace_bytes, 0u);
    // short K: no split
    pl = expect_plan_consistent(16, 512, 512, 0, 512, 1, 512);
    EXPECT_EQ(pl.splits, 1);
    // rows not 16-byte aligned: A (K = 301) and B (N = 33) repacked
    pl = expect_plan_consistent(17, 33, 301, 0, 301, 0, 33);
    EXPECT_GT(pl.pack_a_bytes, 0u);
    EXPECT_GT(pl.pack_b_bytes, 0u);
    // the same shape with padded, aligned rows: nothing to repack
    pl = expect_plan_consistent(17, 33, 301, 0, 304, 0, 40);
    EXPECT_EQ(pl.pack_a_bytes + pl.pack_b_bytes, 0u);
    // a tiny problem (K = 65) with the same rows: the element-wise kernel, nothing to repack
    pl = expect_plan_consistent(17, 33, 65, 0, 65, 0, 33);
    EXPECT_EQ(pl.config, GK_GEMM_ELEM_CONFIG);
    EXPECT_EQ(pl.workspace_bytes, 0u);
    // an empty shape has no plan
    const int64_t empty[][3] = {{0, 512, 8192}, {16, -1, 8192}, {16, 512, 0}};
    for (const auto &s : empty) {
        pl = gk_gemm_plan_for(s[0], s[1], s[2], 0, 8192, 0, 8192);
        EXPECT_EQ(pl.workspace_bytes, 0u);
        EXPECT_EQ(gk_gemm_workspace_bytes(s[0], s[1], s[2], 0, 8192, 0, 8192), 0u);
    }
}

// The repack finds a word's row by multiply-high instead of a divide: exact for every index a
// launch uses (below 2^31), at every words-a-row count a row of 1 to 2^31 values gives.
TEST(GemmRepack, RowByMultiplyHighIsExactDivision)
{
    std::vector<uint32_t> ds = {1, 2, 3, 5, 7, 8, 9, 511, 512, 513, 520, 4096, 65535, 65536, 65537, 1000003};
    for (uint32_t l = 1; l <= 28; l++) ds.insert(ds.end(), {(1u << l) - 1, 1u << l, (1u << l) + 1});
    uint64_t z = 0x9e3779b97f4a7c15ull;
    for (uint32_t d : ds) {
        unsigned magic, shift;
        gk_gemm_pack_magic(d, &magic, &shift);
        std::vector<uint32_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, 0x7fffffffu, 0x7fffffffu - 1};
        for (uint32_t q : {3u, 1000u, 0x7fffffffu / d}) ns.insert(ns.end(), {q * d - 1, q * d});
        for (int i = 0; i < 2000; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            ns.push_back((uint32_t)(z >> 33)); // below 2^31
        }
        for (uint32_t n : ns) {
            if (n > 0x7fffffffu) continue;
            ASSERT_EQ(gk_gemm_pack_row(n, magic, shift), n / d) << "n = " << n << ", d = " << d;
        }
    }
}

// A repack launch takes whole rows up to its word budget; an operand that needs no repack (a job
// of 0 rows) takes nothing.
TEST(GemmRepack, TakeSplitsRowsByWords)
{
    gk_gemm_pack_job rest = {};
    rest.src = (const unsigned short *)0x10000;
    rest.dst = (unsigned short *)0x20000;
    rest.ld = 65;
    rest.ldp = 128; // 16 words a row
    rest.rows = 10;
    rest.cols = 65;
    int taken = 0;
    for (int launch = 0; launch < 4; launch++) {
        const gk_gemm_pack_job p = gk_gemm_pack_take(&rest, 48); // 3 rows of 16 words
        EXPECT_EQ(p.rows, launch < 3 ? 3 : 1);
        EXPECT_EQ(p.words, (unsigned)p.rows * 16);
        EXPECT_EQ(p.src, (const unsigned short *)0x10000 + (int64_t)taken * 65);
        EXPECT_EQ(p.dst, (unsigned short *)0x20000 + (int64_t)taken * 128);
        taken += p.rows;
    }
    EXPECT_EQ(rest.rows, 0);
    gk_gemm_pack_job none = {};
    const gk_gemm_pack_job p = gk_gemm_pack_take(&rest, 48), q = gk_gemm_pack_take(&none, 48);
    EXPECT_EQ(p.rows + q.rows, 0);
    EXPECT_EQ(p.words + q.words, 0u);
}
