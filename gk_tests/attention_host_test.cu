// Host tests of gk_attention.cuh: the online-softmax merge algebra (gk_attn_merge), the key range
// a block of rows sees (gk_attn_key_range) against brute force over the mask's definition,
// gk_attention_params_dense's strides, the ledger, the shipped configurations, and argument
// validation of every entry point (it runs before any CUDA call, so these pass on a machine
// without a GPU).
#define GK_IMPLEMENTATION
#include "gk/gk_attention.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/attention_ref.h"

#include <algorithm>
#include <string>
#include <vector>

// ------------------------------------------------------------------ merge algebra

// The softmax result of a row's keys [j0, j1) in double: lse (natural log; -inf for no keys) and
// o = sum_j e^(s_j - lse) v_j (0 for no keys).
static void softmax_piece(const std::vector<double> &s, const std::vector<double> &v, int n, int j0, int j1,
                          double *lse, std::vector<double> *o)
{
    o->assign(n, 0.0);
    if (j0 >= j1) {
        *lse = -INFINITY;
        return;
    }
    double m = -INFINITY;
    for (int j = j0; j < j1; j++) m = std::max(m, s[j]);
    double sum = 0;
    for (int j = j0; j < j1; j++) sum += std::exp(s[j] - m);
    *lse = m + std::log(sum);
    for (int j = j0; j < j1; j++)
        for (int d = 0; d < n; d++) (*o)[d] += std::exp(s[j] - *lse) * v[(size_t)j * n + d];
}

// Random logits (spread `spread` around `center`) and values; the keys cut into pieces at random
// cut points (repeats make empty pieces), each piece's (lse, o) in float, merged in order with
// gk_attn_merge: the result equals the one-pass softmax over all keys.
TEST(AttentionMerge, AnySplitEqualsOnePass)
{
    GkRng rng(1);
    const double centers[] = {0.0, 30.0, -30.0, 1.0e4, -1.0e4};
    int trial = 0;
    for (double center : centers)
        for (int keys : {1, 2, 7, 64, 300})
            for (int rep = 0; rep < 20; rep++, trial++) {
                const int n = 1 + (int)(rng.next() % 24);
                const double spread = rep % 2 ? 1.0 : 20.0;
                std::vector<double> s(keys), v((size_t)keys * n);
                for (double &x : s) x = center + spread * rng.uniform(-1.0f, 1.0f);
                for (double &x : v) x = rng.uniform(-1.0f, 1.0f);
                // cut points (sorted, repeats allowed: empty pieces), possibly at 0 and at keys
                const int pieces = 1 + (int)(rng.next() % 6);
                std::vector<int> cuts = {0};
                for (int c = 1; c < pieces; c++) cuts.push_back((int)(rng.next() % (uint64_t)(keys + 1)));
                cuts.push_back(keys);
                std::sort(cuts.begin(), cuts.end());
                double want_lse;
                std::vector<double> want;
                softmax_piece(s, v, n, 0, keys, &want_lse, &want);

                float lse = -INFINITY;
                std::vector<float> o(n, 0.0f);
                for (size_t c = 0; c + 1 < cuts.size(); c++) {
                    double pl;
                    std::vector<double> po;
                    softmax_piece(s, v, n, cuts[c], cuts[c + 1], &pl, &po);
                    std::vector<float> pof(po.begin(), po.end());
                    gk_attn_merge(lse, o.data(), (float)pl, pof.data(), n, &lse, o.data()); // in place
                }
                SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(keys) + " keys in " +
                             std::to_string(cuts.size() - 1) + " pieces, center " + std::to_string(center));
                // a piece's lse in float is off by up to 2^-24 of its magnitude, and so is the weight
                // e^(lse_piece - lse) the merge gives it (relative); each merge adds a few roundings
                const double big = 1.2e-7 * std::fabs(want_lse);
                EXPECT_NEAR(lse, want_lse, 1e-5 + 4 * big);
                for (int d = 0; d < n; d++) EXPECT_NEAR(o[d], want[d], 2e-6 + 4 * big) << "d " << d;
                if (HasFailure()) return;
            }
}

// A piece without keys (lse -inf, o 0) is the identity on either side, bit for bit; two empty
// pieces merge to an empty one (o 0, lse -inf), not to NaN.
TEST(AttentionMerge, EmptyPieces)
{
    const float o1[4] = {0.25f, -1.5f, 3.0f, 1e-30f}, zero[4] = {0, 0, 0, 0};
    float o[4], lse;
    for (float l1 : {0.0f, -3.5f, 88.0f, 1.0e4f, -1.0e4f, 1.0e30f}) {
        gk_attn_merge(l1, o1, -INFINITY, zero, 4, &lse, o);
        EXPECT_EQ(lse, l1);
        for (int d = 0; d < 4; d++) EXPECT_EQ(o[d], o1[d]) << "left, lse " << l1;
        gk_attn_merge(-INFINITY, zero, l1, o1, 4, &lse, o);
        EXPECT_EQ(lse, l1);
        for (int d = 0; d < 4; d++) EXPECT_EQ(o[d], o1[d]) << "right, lse " << l1;
    }
    const float junk[4] = {7, 7, 7, 7};
    gk_attn_merge(-INFINITY, junk, -INFINITY, junk, 4, &lse, o);
    EXPECT_EQ(lse, -INFINITY);
    for (int d = 0; d < 4; d++) EXPECT_EQ(o[d], 0.0f);
}

// Two pieces of equal lse weigh half each: lse + ln 2, the mean of o; merging is commutative.
TEST(AttentionMerge, EqualHalvesAndOrder)
{
    const float a[3] = {1.0f, -2.0f, 0.5f}, b[3] = {3.0f, 2.0f, -0.5f};
    float o[3], o2[3], lse, lse2;
    gk_attn_merge(5.0f, a, 5.0f, b, 3, &lse, o);
    EXPECT_NEAR(lse, 5.0 + std::log(2.0), 1e-6);
    for (int d = 0; d < 3; d++) EXPECT_NEAR(o[d], 0.5 * (a[d] + b[d]), 1e-7);
    gk_attn_merge(2.0f, a, -1.0f, b, 3, &lse, o);
    gk_attn_merge(-1.0f, b, 2.0f, a, 3, &lse2, o2);
    EXPECT_NEAR(lse, lse2, 1e-6);
    for (int d = 0; d < 3; d++) EXPECT_NEAR(o[d], o2[d], 1e-6);
    const double wa = 1.0 / (1.0 + std::exp(-3.0));
    for (int d = 0; d < 3; d++) EXPECT_NEAR(o[d], wa * a[d] + (1 - wa) * b[d], 1e-6);
    EXPECT_NEAR(lse, 2.0 + std::log1p(std::exp(-3.0)), 1e-6);
}

// ------------------------------------------------------------------ key range

// gk_attn_key_range(r0, r1, ...) against the union of the keys rows r0 .. r1 - 1 see under the
// mask's definition (attention_ref.h): exactly [first, last + 1) when some row sees a key (the
// union of the rows' windows has no holes), an empty range inside [0, Sk] otherwise.
TEST(AttentionKeyRange, BruteForce)
{
    int cases = 0;
    for (int sq = 1; sq <= 11; sq++)
        for (int sk = 0; sk <= 11; sk++)
            for (int left : {-1, 0, 1, 2, 5, 20})
                for (int right : {-1, 0, 1, 3, 20})
                    for (int r0 = 0; r0 < sq; r0++)
                        for (int r1 = r0 + 1; r1 <= sq; r1++) {
                            gk_attention_params p = gk_attention_params_dense(1, 1, 1, 64, sq, sk);
                            p.window_left = left;
                            p.window_right = right;
                            int first = -1, last = -1;
                            for (int i = r0; i < r1; i++)
                                for (int j = 0; j < sk; j++)
                                    if (gk_ref_attn_visible(p, i, j, sq, sk)) {
                                        if (first < 0 || j < first) first = j;
                                        last = std::max(last, j);
                                    }
                            int lo = -7, hi = -7;
                            gk_attn_key_range(r0, r1, sq, sk, left, right, &lo, &hi);
                            const std::string what = "sq " + std::to_string(sq) + " sk " + std::to_string(sk) +
                                                     " left " + std::to_string(left) + " right " +
                                                     std::to_string(right) + " rows [" + std::to_string(r0) + ", " +
                                                     std::to_string(r1) + ")";
                            if (first >= 0) {
                                ASSERT_EQ(lo, first) << what;
                                ASSERT_EQ(hi, last + 1) << what;
                            } else {
                                ASSERT_TRUE(0 <= lo && lo == hi && hi <= sk) << what << ": [" << lo << ", " << hi << ")";
                            }
                            cases++;
                        }
    EXPECT_GT(cases, 10000);
}

// The ranges of consecutive row blocks of a large problem, with causal (right 0) windows.
TEST(AttentionKeyRange, LargeBlocksCausal)
{
    const int sq = 1000, sk = 4097;
    for (int left : {-1, 0, 255})
        for (int bm : {64, 128})
            for (int r0 = 0; r0 < sq; r0 += bm) {
                const int r1 = std::min(sq, r0 + bm);
                int lo, hi;
                gk_attn_key_range(r0, r1, sq, sk, left, 0, &lo, &hi);
                const int off = sk - sq;
                EXPECT_EQ(lo, left < 0 ? 0 : std::max(0, r0 + off - left));
                EXPECT_EQ(hi, r1 - 1 + off + 1);
            }
}

// ------------------------------------------------------------------ params, ledger, configs

TEST(AttentionParams, Dense)
{
    const gk_attention_params p = gk_attention_params_dense(3, 32, 8, 128, 100, 300);
    EXPECT_EQ(p.batch, 3);
    EXPECT_EQ(p.heads_q, 32);
    EXPECT_EQ(p.heads_kv, 8);
    EXPECT_EQ(p.head_dim, 128);
    EXPECT_EQ(p.seqlen_q, 100);
    EXPECT_EQ(p.seqlen_k, 300);
    EXPECT_EQ(p.q_head_stride, 128);
    EXPECT_EQ(p.q_row_stride, 32 * 128);
    EXPECT_EQ(p.q_batch_stride, 100 * 32 * 128);
    EXPECT_EQ(p.out_head_stride, 128);
    EXPECT_EQ(p.out_row_stride, 32 * 128);
    EXPECT_EQ(p.out_batch_stride, 100 * 32 * 128);
    EXPECT_EQ(p.k_head_stride, 128);
    EXPECT_EQ(p.k_row_stride, 8 * 128);
    EXPECT_EQ(p.k_batch_stride, 300 * 8 * 128);
    EXPECT_EQ(p.v_head_stride, 128);
    EXPECT_EQ(p.v_row_stride, 8 * 128);
    EXPECT_EQ(p.v_batch_stride, 300 * 8 * 128);
    EXPECT_EQ(p.cu_seqlens_q, nullptr);
    EXPECT_EQ(p.cu_seqlens_k, nullptr);
    EXPECT_EQ(p.scale, 0.0f);
    EXPECT_EQ(p.softcap, 0.0f);
    EXPECT_EQ(p.causal, 0);
    EXPECT_LT(p.window_left, 0);
    EXPECT_LT(p.window_right, 0);
    // 64-bit strides: a batch past 2^31 elements
    const gk_attention_params big = gk_attention_params_dense(2, 64, 64, 256, 200000, 200000);
    EXPECT_EQ(big.q_batch_stride, (int64_t)200000 * 64 * 256);
}

TEST(AttentionLedger, FlopsAndBytes)
{
    gk_attention_params p = gk_attention_params_dense(2, 16, 4, 128, 1000, 3000);
    for (int dt : {GK_BF16, GK_F16}) {
        const gk_ledger l = gk_attention_ledger(&p, dt);
        EXPECT_EQ(l.flops, 4.0 * 2 * 16 * 1000 * 3000 * 128);
        // q and out: B Sq Hq D each; k and v: B Sk Hkv D each; 2 bytes an element
        EXPECT_EQ(l.bytes, 2.0 * 128 * 2 * (2.0 * 1000 * 16 + 2.0 * 3000 * 4));
    }
    // causal Sq = Sk = S: S (S + 1) / 2 visible pairs
    for (int s : {1, 2, 7, 1000, 4097}) {
        gk_attention_params c = gk_attention_params_dense(3, 8, 8, 64, s, s);
        c.causal = 1;
        EXPECT_EQ(gk_attention_ledger(&c, GK_BF16).flops, 4.0 * 3 * 8 * 64 * ((double)s * (s + 1) / 2)) << "S " << s;
    }
    // other masks: the visible pairs counted one by one from the definition
    struct {
        int sq, sk, causal, left, right;
    } const masks[] = {
        {100, 300, 1, -1, -1}, {300, 100, 1, -1, -1}, {257, 257, 0, 16, -1}, {257, 257, 0, 16, 5},
        {64, 500, 1, 31, 7},   {500, 64, 0, -1, 3},   {90, 90, 0, 0, 0},     {1, 1000, 1, 100, -1},
    };
    for (const auto &m : masks) {
        gk_attention_params c = gk_attention_params_dense(2, 4, 2, 96, m.sq, m.sk);
        c.causal = m.causal;
        c.window_left = m.left;
        c.window_right = m.right;
        const double pairs = gk_ref_attn_pairs(c, m.sq, m.sk);
        EXPECT_EQ(gk_attention_ledger(&c, GK_BF16).flops, 4.0 * 2 * 4 * 96 * pairs)
            << "sq " << m.sq << " sk " << m.sk << " causal " << m.causal << " window " << m.left << ", " << m.right;
    }
}

// Every shipped configuration: a head dimension gk builds for, tiles of 16-row warps, shared memory
// within the opt-in limit; each of D = 64, 96, 128, 256 has one; unknown indices give name NULL.
TEST(AttentionConfigs, Shipped)
{
    const int n = gk_attention_config_count();
    ASSERT_GE(n, 4);
    bool has[257] = {};
    for (int c = 0; c < n; c++) {
        const gk_attention_config cfg = gk_attention_config_info(c);
        ASSERT_NE(cfg.name, nullptr) << c;
        SCOPED_TRACE(cfg.name);
        EXPECT_TRUE(cfg.head_dim == 64 || cfg.head_dim == 96 || cfg.head_dim == 128 || cfg.head_dim == 256);
        EXPECT_GT(cfg.bm, 0);
        EXPECT_EQ(cfg.bm % 16, 0);
        EXPECT_GT(cfg.bn, 0);
        EXPECT_EQ(cfg.bn % 16, 0);
        EXPECT_GT(cfg.threads, 0);
        EXPECT_EQ(cfg.threads % 32, 0);
        EXPECT_LE(cfg.threads, 1024);
        EXPECT_GT(cfg.smem_bytes, 0);
        EXPECT_LE(cfg.smem_bytes, 227 * 1024);
        if (!cfg.wgmma) EXPECT_LE(cfg.threads / 32 * 16, cfg.bm) << "mma.sync: at least 16 query rows a warp";
        EXPECT_GE(cfg.smem_bytes, (cfg.bm + 2 * cfg.bn) * cfg.head_dim * 2) << "a Q tile, a K tile and a V tile";
        has[cfg.head_dim] = true;
    }
    for (int d : {64, 96, 128, 256}) EXPECT_TRUE(has[d]) << "no configuration for D = " << d;
    EXPECT_EQ(gk_attention_config_info(-1).name, nullptr);
    EXPECT_EQ(gk_attention_config_info(n).name, nullptr);
}

// ------------------------------------------------------------------ validation

// Device-looking addresses, never dereferenced: every call below fails validation. A call that
// passed it would reach gk_sm_count and, on a GPU host, launch on these addresses; so an argument
// is shown accepted through gk_attention_ex with a configuration index past the last, which is
// checked after every argument (the call then fails naming the configuration).
static char *const kFake = (char *)0x20000000;

struct AttnArgs {
    int config = -1, splits = 0, dtype = GK_BF16;
    void *out = kFake;
    const void *q = kFake + (64 << 20), *k = kFake + (128 << 20), *v = kFake + (192 << 20);
    float *lse = (float *)(kFake + (256 << 20));
    gk_attention_params p = gk_attention_params_dense(2, 8, 2, 64, 33, 65);
    void *ws = nullptr;
    size_t ws_bytes = 0;
    bool null_params = false;
    const gk_attention_params *params() const { return null_params ? nullptr : &p; }
};

typedef cudaError_t (*AttnCall)(const AttnArgs &a);

static cudaError_t call_bf16(const AttnArgs &a)
{
    return gk_attention_fwd_bf16((gk_bf16 *)a.out, (const gk_bf16 *)a.q, (const gk_bf16 *)a.k, (const gk_bf16 *)a.v,
                                 a.lse, a.params(), a.ws, a.ws_bytes, 0);
}
static cudaError_t call_f16(const AttnArgs &a)
{
    return gk_attention_fwd_f16((gk_f16 *)a.out, (const gk_f16 *)a.q, (const gk_f16 *)a.k, (const gk_f16 *)a.v, a.lse,
                                a.params(), a.ws, a.ws_bytes, 0);
}
static cudaError_t call_ex(const AttnArgs &a)
{
    return gk_attention_ex(a.config, a.splits, a.dtype, a.out, a.q, a.k, a.v, a.lse, a.params(), a.ws, a.ws_bytes,
                           0);
}

struct AttnCase {
    const char *name;
    AttnCall call;
    int dtype;
    const char *fn; // the public name the failure reason starts with
};

static const AttnCase kAttnCases[] = {
    {"bf16", call_bf16, GK_BF16, "gk_attention_fwd_bf16: "},
    {"f16", call_f16, GK_F16, "gk_attention_fwd_f16: "},
    {"ex_bf16", call_ex, GK_BF16, "gk_attention_ex: "},
    {"ex_f16", call_ex, GK_F16, "gk_attention_ex: "},
};

class AttentionValidation : public ::testing::TestWithParam<int> {
  protected:
    const AttnCase &c() const { return kAttnCases[GetParam()]; }
    AttnArgs valid() const
    {
        AttnArgs a;
        a.dtype = c().dtype;
        return a;
    }
    // The call fails with cudaErrorInvalidValue and a reason that starts with the public name and
    // holds `needle`.
    void rejected(const AttnArgs &a, const char *needle, const std::string &what)
    {
        EXPECT_EQ(c().call(a), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find(needle), std::string::npos) << c().name << ": " << what << ": reason was \"" << r << "\"";
        EXPECT_EQ(r.rfind(c().fn, 0), 0u) << c().name << ": " << what << ": reason was \"" << r << "\"";
    }
    // Every argument passes: the call gets as far as the configuration index.
    void accepted(AttnArgs a, const std::string &what)
    {
        a.config = gk_attention_config_count();
        EXPECT_EQ(call_ex(a), cudaErrorInvalidValue) << c().name << ": " << what;
        const std::string r = gk_failure_reason();
        EXPECT_NE(r.find("configuration"), std::string::npos) << c().name << ": " << what << ": reason was \"" << r << "\"";
    }
    // An empty problem: success, the reason cleared, whatever the pointers.
    void empty_ok(const AttnArgs &a, const std::string &what)
    {
        EXPECT_EQ(c().call(a), cudaSuccess) << c().name << ": " << what << ": " << gk_failure_reason();
        EXPECT_STREQ(gk_failure_reason(), "") << "a successful call clears the reason";
    }
};

TEST_P(AttentionValidation, ValidArgumentsPass)
{
    accepted(valid(), "the valid arguments");
    AttnArgs a = valid();
    a.lse = nullptr;
    accepted(a, "lse NULL");
}

TEST_P(AttentionValidation, NullPointers)
{
    AttnArgs a;
    a = valid(); a.q = nullptr; rejected(a, "'q' is a null pointer", "q NULL");
    a = valid(); a.k = nullptr; rejected(a, "'k' is a null pointer", "k NULL");
    a = valid(); a.v = nullptr; rejected(a, "'v' is a null pointer", "v NULL");
    a = valid(); a.out = nullptr; rejected(a, "'out' is a null pointer", "out NULL");
    a = valid(); a.null_params = true; rejected(a, "'params' is a null pointer", "params NULL");
}

TEST_P(AttentionValidation, Sizes)
{
    AttnArgs a;
    a = valid(); a.p.batch = -1; rejected(a, "'batch' is -1", "batch -1");
    a = valid(); a.p.heads_q = -8; rejected(a, "'heads_q' is -8", "heads_q -8");
    a = valid(); a.p.heads_kv = -2; rejected(a, "'heads_kv' is -2", "heads_kv -2");
    a = valid(); a.p.seqlen_q = -33; rejected(a, "'seqlen_q' is -33", "seqlen_q -33");
    a = valid(); a.p.seqlen_k = -65; rejected(a, "'seqlen_k' is -65", "seqlen_k -65");
    a = valid(); a.p.heads_kv = 0; rejected(a, "'heads_kv' is 0", "heads_kv 0");
    a = valid(); a.p.heads_kv = 3; rejected(a, "heads_q (8) is not a multiple of heads_kv (3)", "Hq 8, Hkv 3");
    a = valid(); a.p.heads_kv = 16; rejected(a, "heads_q (8) is not a multiple of heads_kv (16)", "Hq 8, Hkv 16");
    // a negative size is refused even where another size makes the problem empty
    a = valid(); a.p.batch = 0; a.p.seqlen_k = -1; rejected(a, "'seqlen_k' is -1", "B 0, seqlen_k -1");
    // grid limits
    a = valid(); a.p = gk_attention_params_dense(65536, 1, 1, 64, 1, 1); rejected(a, "batch 65536", "batch 65536");
    a = valid(); a.p = gk_attention_params_dense(1, 65536, 1, 64, 1, 1); rejected(a, "heads_q 65536", "Hq 65536");
    a = valid(); a.p = gk_attention_params_dense(65535, 1, 1, 64, 1, 1); accepted(a, "batch 65535");
    // Hq = Hkv (MHA) and Hkv = 1 (MQA) pass
    a = valid(); a.p = gk_attention_params_dense(2, 8, 8, 64, 33, 65); accepted(a, "Hq = Hkv");
    a = valid(); a.p = gk_attention_params_dense(2, 8, 1, 64, 33, 65); accepted(a, "Hkv 1");
    // Sk = 0 is no error (every row sees no key)
    a = valid(); a.p = gk_attention_params_dense(2, 8, 2, 64, 33, 0); accepted(a, "Sk 0");
}

TEST_P(AttentionValidation, HeadDims)
{
    for (int d : {0, -8, 4, 12, 60, 100, 257, 264, 512}) {
        AttnArgs a = valid();
        a.p = gk_attention_params_dense(2, 8, 2, d > 0 ? d : 64, 33, 65);
        a.p.head_dim = d;
        char needle[64];
        snprintf(needle, sizeof needle, "head_dim %d is not supported", d);
        rejected(a, needle, "D " + std::to_string(d));
    }
    for (int d : {8, 16, 40, 64, 72, 96, 104, 128, 200, 248, 256}) {
        AttnArgs a = valid();
        a.p = gk_attention_params_dense(2, 8, 2, d, 33, 65);
        accepted(a, "D " + std::to_string(d));
    }
}

TEST_P(AttentionValidation, Flags)
{
    AttnArgs a;
    a = valid(); a.p.causal = 2; rejected(a, "causal is 2", "causal 2");
    a = valid(); a.p.causal = -1; rejected(a, "causal is -1", "causal -1");
    a = valid(); a.p.scale = -0.5f; rejected(a, "scale", "scale -0.5");
    a = valid(); a.p.scale = NAN; rejected(a, "scale", "scale NaN");
    a = valid(); a.p.scale = INFINITY; rejected(a, "scale", "scale inf");
    a = valid(); a.p.softcap = -30.0f; rejected(a, "softcap", "softcap -30");
    a = valid(); a.p.softcap = NAN; rejected(a, "softcap", "softcap NaN");
    a = valid(); a.p.softcap = INFINITY; rejected(a, "softcap", "softcap inf");
    // the ordinary values pass
    a = valid(); a.p.causal = 1; accepted(a, "causal 1");
    a = valid(); a.p.scale = 0.01f; a.p.softcap = 50.0f; accepted(a, "scale 0.01, softcap 50");
    a = valid(); a.p.window_left = 0; a.p.window_right = 0; accepted(a, "window 0, 0");
    a = valid(); a.p.window_left = -5; a.p.window_right = 1000000; accepted(a, "window -5, 10^6");
    if (c().call == call_ex) {
        a = valid(); a.dtype = GK_F32; rejected(a, "dtype", "dtype f32");
        a = valid(); a.dtype = GK_E4M3; rejected(a, "dtype", "dtype e4m3");
        a = valid(); a.config = -2; rejected(a, "configuration -2", "config -2");
        a = valid(); a.config = gk_attention_config_count(); rejected(a, "configuration", "config count");
        a = valid(); a.splits = -1; rejected(a, "splits is -1", "splits -1");
        // a configuration built for a smaller D than the problem's (a wgmma one runs its own D only,
        // and without cu_seqlens)
        for (int cfg = 0; cfg < gk_attention_config_count(); cfg++) {
            const gk_attention_config info = gk_attention_config_info(cfg);
            const char *needle = info.wgmma ? "runs D =" : "is built for D <=";
            if (info.head_dim < 256) {
                a = valid();
                a.p = gk_attention_params_dense(2, 8, 2, info.head_dim + 8, 33, 65);
                a.config = cfg;
                rejected(a, needle, std::string("config ") + info.name + ", D + 8");
            }
            if (info.wgmma) {
                a = valid();
                a.p = gk_attention_params_dense(2, 8, 2, info.head_dim - 8, 33, 65);
                a.config = cfg;
                rejected(a, needle, std::string("config ") + info.name + ", D - 8");
                a = valid();
                a.p = gk_attention_params_dense(2, 8, 2, info.head_dim, 33, 65);
                a.p.cu_seqlens_q = a.p.cu_seqlens_k = (const int *)(kFake + (320 << 20));
                a.config = cfg;
                rejected(a, needle, std::string("config ") + info.name + ", varlen");
                a = valid();
                a.p = gk_attention_params_dense(2, 8, 2, info.head_dim, 33, 65);
                a.config = cfg;
                a.splits = 2;
                rejected(a, "do not split keys", std::string("config ") + info.name + ", 2 splits");
            }
        }
    }
}

TEST_P(AttentionValidation, Varlen)
{
    AttnArgs a;
    const int *cu = (const int *)(kFake + (320 << 20));
    a = valid(); a.p.cu_seqlens_q = cu; rejected(a, "cu_seqlens_q and cu_seqlens_k come together", "cu_q only");
    a = valid(); a.p.cu_seqlens_k = cu; rejected(a, "cu_seqlens_q and cu_seqlens_k come together", "cu_k only");
    a = valid(); a.p.cu_seqlens_q = cu; a.p.cu_seqlens_k = cu + 64; accepted(a, "both");
    a = valid(); a.p.cu_seqlens_q = (const int *)((const char *)cu + 2); a.p.cu_seqlens_k = cu;
    rejected(a, "'cu_seqlens_q'", "cu_q 2 bytes off");
    a = valid(); a.p.cu_seqlens_q = cu; a.p.cu_seqlens_k = (const int *)((const char *)cu + 1);
    rejected(a, "'cu_seqlens_k'", "cu_k 1 byte off");
    // with varlen the batch strides are unused: any value passes, the others are still checked
    a = valid(); a.p.cu_seqlens_q = cu; a.p.cu_seqlens_k = cu + 64;
    a.p.q_batch_stride = 3; a.p.k_batch_stride = -5; a.p.v_batch_stride = 1; a.p.out_batch_stride = 0;
    accepted(a, "varlen, odd batch strides");
    a.p.q_row_stride = 12; rejected(a, "'q_row_stride' is 12", "varlen, q_row_stride 12");
}

TEST_P(AttentionValidation, Strides)
{
    const char *names[12] = {"q_batch_stride", "q_row_stride", "q_head_stride", "k_batch_stride", "k_row_stride",
                             "k_head_stride", "v_batch_stride", "v_row_stride", "v_head_stride", "out_batch_stride",
                             "out_row_stride", "out_head_stride"};
    for (int i = 0; i < 12; i++)
        for (int64_t delta : {4, 1, -1}) {
            AttnArgs a = valid();
            int64_t *s[12] = {&a.p.q_batch_stride, &a.p.q_row_stride, &a.p.q_head_stride, &a.p.k_batch_stride,
                              &a.p.k_row_stride, &a.p.k_head_stride, &a.p.v_batch_stride, &a.p.v_row_stride,
                              &a.p.v_head_stride, &a.p.out_batch_stride, &a.p.out_row_stride, &a.p.out_head_stride};
            *s[i] += delta;
            char needle[96];
            snprintf(needle, sizeof needle, "'%s' is %lld", names[i], (long long)*s[i]);
            rejected(a, needle, std::string(names[i]) + " + " + std::to_string(delta));
        }
    for (int i = 0; i < 12; i++) {
        AttnArgs a = valid();
        int64_t *s[12] = {&a.p.q_batch_stride, &a.p.q_row_stride, &a.p.q_head_stride, &a.p.k_batch_stride,
                          &a.p.k_row_stride, &a.p.k_head_stride, &a.p.v_batch_stride, &a.p.v_row_stride,
                          &a.p.v_head_stride, &a.p.out_batch_stride, &a.p.out_row_stride, &a.p.out_head_stride};
        *s[i] = -*s[i];
        char needle[96];
        snprintf(needle, sizeof needle, "'%s' is %lld; it must be >= 0", names[i], (long long)*s[i]);
        rejected(a, needle, std::string(names[i]) + " negative");
    }
    // strides padded by multiples of 8 pass; [B, H, S, D] passes
    AttnArgs a = valid();
    a.p.q_head_stride = a.p.out_head_stride = 72;
    a.p.q_row_stride = a.p.out_row_stride = 8 * 72 + 16;
    a.p.q_batch_stride = a.p.out_batch_stride = 33 * (8 * 72 + 16) + 8;
    accepted(a, "padded q and out");
    a = valid();
    a.p.q_row_stride = a.p.out_row_stride = 64;
    a.p.q_head_stride = a.p.out_head_stride = 33 * 64;
    a.p.k_row_stride = a.p.v_row_stride = 64;
    a.p.k_head_stride = a.p.v_head_stride = 65 * 64;
    accepted(a, "[B, H, S, D]");
    // inputs may repeat rows (a broadcast k and v head); only out must not alias
    a = valid(); a.p.k_head_stride = 0; a.p.v_row_stride = 0; accepted(a, "k head stride 0, v row stride 0");
    // spans past 2^62 elements
    a = valid(); a.p.q_batch_stride = (int64_t)1 << 62; rejected(a, "'q' spans", "q batch stride 2^62");
    a = valid(); a.p.k_row_stride = (int64_t)1 << 56; rejected(a, "'k' spans", "k row stride 2^56 over 65 rows");
}

TEST_P(AttentionValidation, Alignment)
{
    AttnArgs a;
    for (int off : {2, 8, 14}) {
        a = valid(); a.q = (const char *)a.q + off; rejected(a, "'q'", "q + " + std::to_string(off) + " bytes");
        a = valid(); a.k = (const char *)a.k + off; rejected(a, "'k'", "k + " + std::to_string(off) + " bytes");
        a = valid(); a.v = (const char *)a.v + off; rejected(a, "'v'", "v + " + std::to_string(off) + " bytes");
        a = valid(); a.out = (char *)a.out + off; rejected(a, "'out'", "out + " + std::to_string(off) + " bytes");
    }
    a = valid(); a.lse = (float *)((char *)a.lse + 2); rejected(a, "'lse'", "lse + 2 bytes");
    a = valid(); a.lse = (float *)((char *)a.lse + 4); accepted(a, "lse + 4 bytes (fp32 alignment is enough)");
    a = valid(); a.q = (const char *)a.q + 16; a.out = (char *)a.out + 48; accepted(a, "q + 16, out + 48 bytes");
}

TEST_P(AttentionValidation, Aliasing)
{
    AttnArgs a;
    // out's rows on one address
    a = valid(); a.p.out_head_stride = 0; rejected(a, "out's strides alias", "out head stride 0, Hq 8");
    a = valid(); a.p.out_row_stride = 64; rejected(a, "out's strides alias", "out row stride 64 < Hq D");
    a = valid(); a.p.out_batch_stride = 0; rejected(a, "out's strides alias", "out batch stride 0, B 2");
    a = valid(); a.p.out_head_stride = 32; rejected(a, "out's strides alias", "out head stride 32 < D");
    // a zero stride over a dimension of 1 is no alias
    a = valid(); a.p = gk_attention_params_dense(1, 1, 1, 64, 1, 65);
    a.p.out_head_stride = a.p.out_row_stride = a.p.out_batch_stride = 0; accepted(a, "out strides 0, B Hq Sq 1");
    // [B, H, S, D] out (strides in another order) is no alias
    a = valid(); a.p.out_row_stride = 64; a.p.out_head_stride = 33 * 64; accepted(a, "out [B, H, S, D]");
    // out overlapping an input or lse
    a = valid(); a.out = (void *)a.q; rejected(a, "'out' and 'q' overlap", "out = q");
    a = valid(); a.out = (char *)a.q + 4096; rejected(a, "'out' and 'q' overlap", "out inside q");
    a = valid(); a.out = (void *)a.k; rejected(a, "'out' and 'k' overlap", "out = k");
    a = valid(); a.out = (void *)a.v; rejected(a, "'out' and 'v' overlap", "out = v");
    a = valid(); a.lse = (float *)a.out; rejected(a, "'lse' and 'out' overlap", "lse = out");
    a = valid(); a.lse = (float *)a.q; rejected(a, "'lse' and 'q' overlap", "lse = q");
    // q, k and v may share a buffer (a packed QKV projection)
    a = valid(); a.k = a.q; a.v = a.q; accepted(a, "q = k = v");
}

TEST_P(AttentionValidation, EmptyProblems)
{
    AttnArgs e;
    e.dtype = c().dtype;
    e.out = nullptr;
    e.q = e.k = e.v = nullptr;
    e.lse = nullptr;
    AttnArgs a;
    a = e; a.p = gk_attention_params_dense(0, 8, 2, 64, 33, 65); empty_ok(a, "B 0, pointers NULL");
    a = e; a.p = gk_attention_params_dense(2, 0, 2, 64, 33, 65); empty_ok(a, "Hq 0, pointers NULL");
    a = e; a.p = gk_attention_params_dense(2, 8, 2, 64, 0, 65); empty_ok(a, "Sq 0, pointers NULL");
    // nothing else is inspected: D, strides, flags
    a = e; a.p = gk_attention_params_dense(0, 8, 3, 12, 33, 65); a.p.causal = 7; empty_ok(a, "B 0, Hkv 3, D 12");
    a = valid(); a.p.seqlen_q = 0; a.out = (char *)a.out + 2; empty_ok(a, "Sq 0, out misaligned");
}

INSTANTIATE_TEST_SUITE_P(Entry, AttentionValidation, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kAttnCases[i.param].name); });

// gk_attention_workspace_bytes: 0 for bad or empty problems (no CUDA call needed to say so).
TEST(AttentionWorkspace, BadOrEmpty)
{
    EXPECT_EQ(gk_attention_workspace_bytes(nullptr), 0u);
    gk_attention_params p = gk_attention_params_dense(0, 8, 2, 64, 3, 20000);
    EXPECT_EQ(gk_attention_workspace_bytes(&p), 0u);
    p = gk_attention_params_dense(1, 8, 3, 64, 3, 20000);
    EXPECT_EQ(gk_attention_workspace_bytes(&p), 0u);
    p = gk_attention_params_dense(1, 8, 2, 12, 3, 20000);
    EXPECT_EQ(gk_attention_workspace_bytes(&p), 0u);
}
