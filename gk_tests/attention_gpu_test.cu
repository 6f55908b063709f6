// GPU tests of gk_attention.cuh against the CPU reference in double (attention_ref.h). Skipped
// without a GPU.
//
// Inputs are fresh random values every run (q uniform in [-2, 2), k and v in [-1, 1), rounded to
// the dtype; the reference reads the rounded values). Gaps between the rows and heads of strided
// inputs, and the guard bytes past every input, hold NaN: a kernel that reads them turns its
// outputs into NaN, which never passes. out and lse are poisoned (all-ones bytes, a NaN no
// computation produces) before each launch and checked fully written; the gaps of a strided out
// and the guard bytes around out and lse must stay poisoned.
//
// Tolerance on out: |got - ref| <= atol + rtol |ref|. rtol covers the final rounding to bf16
// (2^-8 relative, 1.6e-2 as elsewhere) or f16 (2e-3). atol covers P rounded to the dtype before
// P V: each weight off by at most 2^-9 (bf16) or 2^-11 (f16) of itself, so out is off by at most
// that much of max |v| = 1: atol 4e-3 (bf16) and 1e-3 (f16), twice the bound. lse is fp32 math
// throughout: 1e-3 absolute (a sum of 2^17 exponentials accumulated in fp32) plus 1e-5 relative.
// A key tile of 64 missing from 1000 keys moves lse by about 0.07.
//
// Shapes with many rows check every output for being written and sampled rows against the
// reference (the reference costs Sq Sk D per head).
#define GK_IMPLEMENTATION
#include "gk/gk_attention.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/attention_ref.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

// ------------------------------------------------------------------ one run

enum Layout {
    kDense,  // [B, S, H, D] (gk_attention_params_dense's strides)
    kBHSD,   // [B, H, S, D]
    kPadded, // [B, S, H, D] with gaps: head stride D + 8, row stride H (D + 8) + 16, batch stride + 24
    kQKV     // q, k, v sliced from one packed [B, S, Hq + 2 Hkv, D] projection; out kPadded
};

enum Fill {
    kUniform,
    kLarge, // |q|, |k| up to 8192 on a grid where fp32 sums are exact: logits of 1e3 .. 1e9
    kNanKey // uniform, and one element of one key NaN
};

struct AttnRun {
    int dt = GK_BF16;
    int B = 1, Hq = 1, Hkv = 1, D = 64, Sq = 1, Sk = 1;
    int causal = 0, wl = -1, wr = -1;
    float scale = 0.0f, softcap = 0.0f;
    Layout layout = kDense;
    std::vector<int> lens_q, lens_k; // varlen when set (B entries each); Sq, Sk then bounds (0: the max)
    int config = -1, splits = 0;     // other than -1, 0: through gk_attention_ex
    size_t ws_bytes = 0;             // workspace handed over (none: 0)
    bool ws_plan = false;            // workspace of gk_attention_workspace_bytes (must be > 0)
    bool ws_written = false;         // the workspace must have been written (the keys were split)
    bool lse = true;
    Fill fill = kUniform;
    int64_t sample_rows = 0; // (b, i, h) rows checked against the reference (0: all)
};

static std::string describe(const AttnRun &p)
{
    static const char *const layouts[] = {"dense", "BHSD", "padded", "QKV"};
    static const char *const fills[] = {"uniform", "large", "NaN key"};
    std::string lens;
    for (size_t b = 0; b < p.lens_q.size(); b++)
        lens += (b ? "," : " lens ") + std::to_string(p.lens_q[b]) + "/" + std::to_string(p.lens_k[b]);
    char s[512];
    snprintf(s, sizeof s,
             "%s B=%d Hq=%d Hkv=%d D=%d Sq=%d Sk=%d causal=%d window=(%d,%d) scale=%g softcap=%g layout=%s fill=%s "
             "config=%d splits=%d ws=%zu%s lse=%d%s",
             gk_dtype_name(p.dt), p.B, p.Hq, p.Hkv, p.D, p.Sq, p.Sk, p.causal, p.wl, p.wr, p.scale, p.softcap,
             layouts[p.layout], fills[p.fill], p.config, p.splits, p.ws_bytes, p.ws_plan ? " (plan)" : "", p.lse,
             lens.c_str());
    return s;
}

static uint64_t run_salt(const AttnRun &p)
{
    uint64_t h = 0xa77e;
    for (int64_t v : {(int64_t)p.dt, (int64_t)p.B, (int64_t)p.Hq, (int64_t)p.Hkv, (int64_t)p.D, (int64_t)p.Sq,
                      (int64_t)p.Sk, (int64_t)p.causal, (int64_t)p.wl, (int64_t)p.wr, (int64_t)p.layout,
                      (int64_t)p.fill, (int64_t)p.config, (int64_t)p.splits})
        h = (h ^ (uint64_t)v) * 0x100000001b3ull + 0x9e37;
    for (size_t b = 0; b < p.lens_q.size(); b++) h = (h ^ (uint64_t)(p.lens_q[b] * 65537 + p.lens_k[b])) * 0x100000001b3ull;
    return h;
}

// Strides (elements) and extent of one tensor of B batches (1 with varlen) of S rows, H heads, D.
struct Span {
    int64_t bs = 0, rs = 0, hs = 0, elems = 0;
};

// cap: the rows a head holds in [B, H, S, D] (S, or with varlen a capacity: the header bounds
// the packed tokens by B seqlen_q when it checks that out's rows do not alias).
static Span make_span(Layout l, int64_t B, int64_t S, int64_t H, int64_t D, int64_t cap = 0)
{
    Span s;
    if (cap < S) cap = S;
    switch (l) {
    case kBHSD: s.rs = D; s.hs = cap * D; s.bs = H * cap * D; break;
    case kPadded: s.hs = D + 8; s.rs = H * s.hs + 16; s.bs = S * s.rs + 24; break;
    default: s.hs = D; s.rs = H * D; s.bs = S * H * D; break;
    }
    s.elems = B && S && H ? (B - 1) * s.bs + (S - 1) * s.rs + (H - 1) * s.hs + D : 0;
    return s;
}

// Marks the elements of every (b, s, h) row of a span in cov, from element `at`.
static void mark_rows(std::vector<char> *cov, const Span &s, int64_t at, int64_t B, int64_t S, int64_t H, int64_t D)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t r = 0; r < S; r++)
            for (int64_t h = 0; h < H; h++) {
                const int64_t o = at + b * s.bs + r * s.rs + h * s.hs;
                std::fill(cov->begin() + o, cov->begin() + o + D, 1);
            }
}

static void set_nan_bytes(HostTensor *h, size_t i) { memset(h->bytes.data() + i * gk_dtype_size(h->dt), 0xff, gk_dtype_size(h->dt)); }

// A quiet NaN of the dtype other than the poison pattern (so a kernel's copy of it would show).
static void set_quiet_nan(HostTensor *h, size_t i)
{
    const uint16_t bits = h->dt == GK_BF16 ? 0x7fc0 : 0x7e00;
    memcpy(h->bytes.data() + i * 2, &bits, 2);
}

static std::vector<float> to_float(const HostTensor &h)
{
    std::vector<float> f(h.n);
    gk_test_parallel_for(h.n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++) f[i] = (float)h.get(i);
    });
    return f;
}

struct AttnResult {
    std::vector<unsigned char> out, lse; // bytes, for determinism checks
};

// Runs one attention forward and checks it against the reference.
static void run_attn(const AttnRun &p, AttnResult *result = nullptr)
{
    SCOPED_TRACE(describe(p));
    const bool varlen = !p.lens_q.empty();
    ASSERT_TRUE(!varlen || ((int)p.lens_q.size() == p.B && (int)p.lens_k.size() == p.B));
    ASSERT_TRUE(p.layout != kQKV || (!varlen && p.Sq == p.Sk)) << "packed QKV needs Sq == Sk";
    GkRng rng(run_salt(p));
    const int B = p.B, Hq = p.Hq, Hkv = p.Hkv, D = p.D;

    // sequence starts (varlen) and bounds
    std::vector<int> cu_q(B + 1, 0), cu_k(B + 1, 0);
    int Sq = p.Sq, Sk = p.Sk;
    if (varlen) {
        int mq = 0, mk = 0;
        for (int b = 0; b < B; b++) {
            cu_q[b + 1] = cu_q[b] + p.lens_q[b];
            cu_k[b + 1] = cu_k[b] + p.lens_k[b];
            mq = std::max(mq, p.lens_q[b]);
            mk = std::max(mk, p.lens_k[b]);
        }
        if (Sq == 0) Sq = mq;
        if (Sk == 0) Sk = mk;
    }
    const int64_t tq = varlen ? cu_q[B] : Sq, tk = varlen ? cu_k[B] : Sk, nb = varlen ? 1 : B;

    // layouts
    Span sq_, sk_, sv_, so_;
    int64_t k_at = 0, v_at = 0; // k and v's first element in their buffer (QKV: one buffer)
    if (p.layout == kQKV) {
        const Span all = make_span(kDense, nb, tq, Hq + 2 * Hkv, D);
        sq_ = sk_ = sv_ = all;
        k_at = (int64_t)Hq * D;
        v_at = (int64_t)(Hq + Hkv) * D;
        so_ = make_span(kPadded, nb, tq, Hq, D);
    } else {
        sq_ = make_span(p.layout, nb, tq, Hq, D, varlen ? (int64_t)B * Sq : 0);
        sk_ = make_span(p.layout, nb, tk, Hkv, D, varlen ? (int64_t)B * Sk : 0);
        sv_ = sk_;
        so_ = sq_;
    }
    if (varlen) sq_.bs = sk_.bs = sv_.bs = so_.bs = 0; // unused

    // host inputs: fill, then NaN in every element no row of q, k, v covers
    HostTensor hq(p.dt, sq_.elems); // with QKV: the whole packed buffer
    HostTensor hk(p.dt, p.layout == kQKV ? 0 : sk_.elems), hv(p.dt, p.layout == kQKV ? 0 : sv_.elems);
    HostTensor &hkk = p.layout == kQKV ? hq : hk;
    {
        std::vector<char> cq(hq.n, 0), ck(hk.n, 0), cv(hv.n, 0);
        mark_rows(&cq, sq_, 0, nb, tq, Hq, D);
        mark_rows(p.layout == kQKV ? &cq : &ck, sk_, k_at, nb, tk, Hkv, D);
        mark_rows(p.layout == kQKV ? &cq : &cv, sv_, v_at, nb, tk, Hkv, D);
        if (p.layout == kQKV) {
            hq.fill_uniform(rng, -1.0f, 1.0f);
        } else {
            hq.fill_uniform(rng, -2.0f, 2.0f);
            hk.fill_uniform(rng, -1.0f, 1.0f);
            hv.fill_uniform(rng, -1.0f, 1.0f);
        }
        for (size_t i = 0; i < hq.n; i++)
            if (!cq[i]) set_nan_bytes(&hq, i);
        for (size_t i = 0; i < hk.n; i++)
            if (!ck[i]) set_nan_bytes(&hk, i);
        for (size_t i = 0; i < hv.n; i++)
            if (!cv[i]) set_nan_bytes(&hv, i);
    }
    if (p.fill == kLarge) {
        // q = 128 m (even rows) or m / 64 (odd rows), k = 128 m, m an integer in [-64, 64]: every
        // product and every partial sum of q . k is exact in fp32 (at most 2^20 units of 2^14), so
        // the kernel's logits differ from the reference's only by the rounding of the scaling.
        for (int64_t b = 0; b < nb; b++)
            for (int64_t r = 0; r < tq; r++)
                for (int h = 0; h < Hq; h++)
                    for (int d = 0; d < D; d++) {
                        const float m = (float)((int64_t)(rng.next() % 129) - 64);
                        hq.set(b * sq_.bs + r * sq_.rs + h * sq_.hs + d, r % 2 == 0 ? 128.0f * m : m / 64.0f);
                    }
        for (int64_t b = 0; b < nb; b++)
            for (int64_t r = 0; r < tk; r++)
                for (int h = 0; h < Hkv; h++)
                    for (int d = 0; d < D; d++)
                        hkk.set(k_at + b * sk_.bs + r * sk_.rs + h * sk_.hs + d,
                                128.0f * (float)((int64_t)(rng.next() % 129) - 64));
        // every 4th row's q (of the first query head of each kv head) copied into key row % Sk: a
        // logit of scale |q|^2, up to D 2^26 scale log2(e) (1.5e9 at D 256) in log2 units, where
        // a float's ulp is 128
        const int group = Hq / Hkv;
        for (int64_t b = 0; b < nb && tk > 0; b++)
            for (int64_t r = 0; r < tq; r += 4)
                for (int hk_ = 0; hk_ < Hkv; hk_++)
                    for (int d = 0; d < D; d++)
                        hkk.set(k_at + b * sk_.bs + (r % tk) * sk_.rs + hk_ * sk_.hs + d,
                                (float)hq.get(b * sq_.bs + r * sq_.rs + (int64_t)hk_ * group * sq_.hs + d));
    }
    if (p.fill == kNanKey && tk > 0) {
        // one element (random d, kv head) of a key that some row sees: a random visible (row, key)
        // pair of a random sequence
        gk_attention_params mask;
        memset(&mask, 0, sizeof mask);
        mask.causal = p.causal;
        mask.window_left = p.wl;
        mask.window_right = p.wr;
        bool placed = false;
        for (int tries = 0; tries < 10000 && !placed; tries++) {
            const int b = (int)(rng.next() % (uint64_t)B);
            const int64_t lq = varlen ? p.lens_q[b] : Sq, lk = varlen ? p.lens_k[b] : Sk;
            if (lq == 0 || lk == 0) continue;
            const int64_t i = (int64_t)(rng.next() % (uint64_t)lq), j = (int64_t)(rng.next() % (uint64_t)lk);
            if (!gk_ref_attn_visible(mask, i, j, lq, lk)) continue;
            const int hk_ = (int)(rng.next() % (uint64_t)Hkv), d = (int)(rng.next() % (uint64_t)D);
            const int64_t row = varlen ? cu_k[b] + j : j, bb = varlen ? 0 : b;
            set_quiet_nan(&hkk, k_at + bb * sk_.bs + row * sk_.rs + hk_ * sk_.hs + d);
            placed = true;
        }
        ASSERT_TRUE(placed) << "no visible (row, key) pair found for the NaN (test setup)";
    }

    // device buffers (guard bytes stay poison: NaN past every input)
    const int64_t n_lse = varlen ? tq * Hq : (int64_t)B * Hq * Sq;
    DeviceTensor dq(p.dt, hq.n), dk(p.dt, hk.n), dv(p.dt, hv.n), dout(p.dt, so_.elems), dlse(GK_F32, n_lse);
    DeviceTensor dcu_q(GK_F32, varlen ? B + 1 : 0), dcu_k(GK_F32, varlen ? B + 1 : 0);
    gk_attention_params ap;
    memset(&ap, 0, sizeof ap);
    ap.batch = B;
    ap.heads_q = Hq;
    ap.heads_kv = Hkv;
    ap.head_dim = D;
    ap.seqlen_q = Sq;
    ap.seqlen_k = Sk;
    ap.q_batch_stride = sq_.bs; ap.q_row_stride = sq_.rs; ap.q_head_stride = sq_.hs;
    ap.k_batch_stride = sk_.bs; ap.k_row_stride = sk_.rs; ap.k_head_stride = sk_.hs;
    ap.v_batch_stride = sv_.bs; ap.v_row_stride = sv_.rs; ap.v_head_stride = sv_.hs;
    ap.out_batch_stride = so_.bs; ap.out_row_stride = so_.rs; ap.out_head_stride = so_.hs;
    ap.scale = p.scale;
    ap.softcap = p.softcap;
    ap.causal = p.causal;
    ap.window_left = p.wl;
    ap.window_right = p.wr;
    ap.cu_seqlens_q = varlen ? (const int *)dcu_q.ptr() : nullptr;
    ap.cu_seqlens_k = varlen ? (const int *)dcu_k.ptr() : nullptr;
    size_t ws_bytes = p.ws_bytes;
    if (p.ws_plan) {
        ws_bytes = gk_attention_workspace_bytes(&ap);
        ASSERT_GT(ws_bytes, 0u) << "gk_attention_workspace_bytes plans no key split here";
    }
    DeviceTensor dws(GK_F32, (ws_bytes + 3) / 4);
    ASSERT_TRUE(dq.ok() && dk.ok() && dv.ok() && dout.ok() && dlse.ok() && dcu_q.ok() && dcu_k.ok() && dws.ok());
    for (DeviceTensor *t : {&dq, &dk, &dv, &dout, &dlse, &dws}) GK_CUDA_OK(t->poison());
    GK_CUDA_OK(dq.upload(hq));
    GK_CUDA_OK(dk.upload(hk));
    GK_CUDA_OK(dv.upload(hv));
    if (varlen) {
        GK_CUDA_OK(cudaMemcpy(dcu_q.ptr(), cu_q.data(), (B + 1) * sizeof(int), cudaMemcpyHostToDevice));
        GK_CUDA_OK(cudaMemcpy(dcu_k.ptr(), cu_k.data(), (B + 1) * sizeof(int), cudaMemcpyHostToDevice));
    }
    const char *qb = (const char *)dq.ptr();
    const void *q = qb, *k = p.layout == kQKV ? qb + k_at * 2 : dk.ptr(), *v = p.layout == kQKV ? qb + v_at * 2 : dv.ptr();
    float *lse = p.lse ? (float *)dlse.ptr() : nullptr;
    void *ws = ws_bytes ? dws.ptr() : nullptr; // cudaMalloc'ed: 256-byte aligned

    if (p.config != -1 || p.splits != 0)
        GK_CUDA_OK(gk_attention_ex(p.config, p.splits, p.dt, dout.ptr(), q, k, v, lse, &ap, ws, ws_bytes, 0));
    else if (p.dt == GK_BF16)
        GK_CUDA_OK(gk_attention_fwd_bf16((gk_bf16 *)dout.ptr(), (const gk_bf16 *)q, (const gk_bf16 *)k,
                                         (const gk_bf16 *)v, lse, &ap, ws, ws_bytes, 0));
    else
        GK_CUDA_OK(gk_attention_fwd_f16((gk_f16 *)dout.ptr(), (const gk_f16 *)q, (const gk_f16 *)k, (const gk_f16 *)v,
                                        lse, &ap, ws, ws_bytes, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());

    HostTensor got(p.dt, dout.n), got_lse(GK_F32, dlse.n);
    GK_CUDA_OK(dout.download(&got));
    GK_CUDA_OK(dlse.download(&got_lse));
    EXPECT_EQ(dout.guard_damage(), 0u) << "bytes written outside out";
    EXPECT_EQ(dlse.guard_damage(), 0u) << "bytes written outside lse";
    EXPECT_EQ(dws.guard_damage(), 0u) << "bytes written outside the workspace";
    if (p.ws_written) {
        HostTensor w(GK_F32, dws.n);
        GK_CUDA_OK(dws.download(&w));
        EXPECT_LT(gk_test_count_poison(w), w.n) << "the workspace was never written (the keys were not split)";
    }

    // every out row written, the gaps untouched; lse written everywhere (or untouched without lse)
    {
        std::vector<char> co(got.n, 0);
        mark_rows(&co, so_, 0, nb, tq, Hq, D);
        int64_t unwritten = 0, gap_written = 0;
        for (size_t i = 0; i < got.n; i++) {
            const bool poison = gk_test_is_poison(got, i);
            if (co[i]) unwritten += poison;
            else gap_written += !poison;
        }
        EXPECT_EQ(unwritten, 0) << "out elements never written";
        EXPECT_EQ(gap_written, 0) << "out's gaps (between heads, rows, batches) written";
        const size_t lse_poison = gk_test_count_poison(got_lse);
        if (p.lse) EXPECT_EQ(lse_poison, 0u) << "lse entries never written";
        else EXPECT_EQ(lse_poison, got_lse.n) << "lse written though NULL was passed";
    }
    if (result) {
        result->out = got.bytes;
        result->lse = got_lse.bytes;
    }

    // rows (b, i, h) against the reference
    struct Row {
        int b, h;
        int64_t i;
    };
    std::vector<Row> rows;
    for (int b = 0; b < B; b++) {
        const int64_t len = varlen ? p.lens_q[b] : Sq;
        for (int64_t i = 0; i < len; i++)
            for (int h = 0; h < Hq; h++) rows.push_back({b, h, i});
    }
    if (p.sample_rows > 0 && (int64_t)rows.size() > p.sample_rows) {
        std::vector<Row> pick = {rows.front(), rows.back()};
        for (int64_t n = 2; n < p.sample_rows; n++) pick.push_back(rows[rng.next() % rows.size()]);
        rows.swap(pick);
    }
    const std::vector<float> fq = to_float(hq), fk = p.layout == kQKV ? std::vector<float>() : to_float(hk),
                             fv = p.layout == kQKV ? std::vector<float>() : to_float(hv);
    GkAttnRef ref;
    ref.p = ap;
    ref.q = fq.data();
    ref.k = p.layout == kQKV ? fq.data() + k_at : fk.data();
    ref.v = p.layout == kQKV ? fq.data() + v_at : fv.data();
    ref.cu_q = varlen ? cu_q.data() : nullptr;
    ref.cu_k = varlen ? cu_k.data() : nullptr;
    const GkTol tol = p.dt == GK_BF16 ? GkTol{4e-3, 1.6e-2} : GkTol{1e-3, 2e-3};
    const GkTol lse_tol = {1e-3, 1e-5};
    std::atomic<int64_t> bad(0), bad_lse(0), nan_rows(0);
    std::mutex mu;
    std::vector<std::string> first;
    gk_test_parallel_items(rows.size(), (size_t)std::max(Sk, 1) * D, [&](size_t r0, size_t r1) {
        std::vector<double> want(D);
        int64_t nbad = 0, nbad_lse = 0, nnan = 0;
        for (size_t n = r0; n < r1; n++) {
            const Row &w = rows[n];
            double want_lse = 0;
            gk_ref_attention_row(ref, w.b, w.i, w.h, want.data(), &want_lse);
            nnan += std::isnan(want_lse);
            const int64_t o = gk_ref_attn_out_off(ref, w.b, w.i, w.h);
            for (int d = 0; d < D; d++) {
                const double g = got.get(o + d);
                if (gk_test_close(g, want[d], tol)) continue;
                nbad++;
                std::lock_guard<std::mutex> lock(mu);
                if (first.size() < 10) {
                    char line[200];
                    snprintf(line, sizeof line, "  b %d row %lld head %d d %d: out %.9g want %.9g (|diff| %.3g)", w.b,
                             (long long)w.i, w.h, d, g, want[d], std::fabs(g - want[d]));
                    first.push_back(line);
                }
            }
            if (!p.lse) continue;
            const double gl = got_lse.get(gk_ref_attn_lse_off(ref, w.b, w.i, w.h));
            if (gk_test_close(gl, want_lse, lse_tol)) continue;
            nbad_lse++;
            std::lock_guard<std::mutex> lock(mu);
            if (first.size() < 10) {
                char line[200];
                snprintf(line, sizeof line, "  b %d row %lld head %d: lse %.9g want %.9g", w.b, (long long)w.i, w.h, gl,
                         want_lse);
                first.push_back(line);
            }
        }
        bad += nbad;
        bad_lse += nbad_lse;
        nan_rows += nnan;
    });
    for (const std::string &line : first) printf("%s\n", line.c_str());
    EXPECT_EQ(bad.load(), 0) << "out values outside tolerance, of " << rows.size() * D << " checked";
    EXPECT_EQ(bad_lse.load(), 0) << "lse values outside tolerance, of " << rows.size() << " checked";
    if (p.fill == kNanKey) EXPECT_GT(nan_rows.load(), 0) << "no checked row sees the NaN key (test setup)";
    else EXPECT_EQ(nan_rows.load(), 0) << "the reference has NaN rows (test setup)";
}

static AttnRun shape(int dt, int B, int Hq, int Hkv, int D, int Sq, int Sk)
{
    AttnRun p;
    p.dt = dt;
    p.B = B;
    p.Hq = Hq;
    p.Hkv = Hkv;
    p.D = D;
    p.Sq = Sq;
    p.Sk = Sk;
    return p;
}

static const int kDtypes[2] = {GK_BF16, GK_F16};

#define GK_ATTN_RUN(p)              \
    do {                            \
        run_attn(p);                \
        if (HasFailure()) return;   \
    } while (0)

// ------------------------------------------------------------------ tests

// No mask: lengths around and off the tiles (BM 128 or 64 rows, BN 64 keys), both dtypes.
TEST(AttentionGpu, NoMask)
{
    GK_REQUIRE_GPU();
    const int shapes[][2] = {{1, 1}, {7, 63}, {63, 7}, {65, 65}, {1, 1000}, {65, 1000}, {1000, 65}, {129, 127}};
    int n = 0;
    for (int dt : kDtypes)
        for (const auto &s : shapes) {
            AttnRun p = shape(dt, 2, 3, 3, n++ % 2 ? 128 : 64, s[0], s[1]);
            GK_ATTN_RUN(p);
        }
}

// Bottom-right causal: Sq < Sk (every row sees the keys before its diagonal), Sq > Sk (the first
// Sq - Sk rows see nothing: out 0, lse -inf), Sq == Sk.
TEST(AttentionGpu, Causal)
{
    GK_REQUIRE_GPU();
    const int shapes[][2] = {{1, 1}, {7, 63}, {63, 7}, {65, 1000}, {1000, 65}, {1000, 1000}, {200, 201}, {130, 1}};
    int n = 0;
    for (int dt : kDtypes)
        for (const auto &s : shapes) {
            AttnRun p = shape(dt, 2, 2, 2, n++ % 2 ? 64 : 128, s[0], s[1]);
            p.causal = 1;
            GK_ATTN_RUN(p);
        }
}

// GQA and MQA: Hq / Hkv = 1, 4, 8 (kv head h / group), with and without causal.
TEST(AttentionGpu, GroupedQueryHeads)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes)
        for (int hkv : {8, 2, 1})
            for (int causal : {0, 1}) {
                AttnRun p = shape(dt, 2, 8, hkv, n++ % 3 == 0 ? 128 : 64, 65, 130);
                p.causal = causal;
                GK_ATTN_RUN(p);
            }
}

// Varlen: packed sequences of different q and k lengths, zero-length members (no q rows; no keys:
// rows of out 0 and lse -inf), with and without causal; seqlen_q and seqlen_k their maxima or
// looser bounds.
TEST(AttentionGpu, Varlen)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes)
        for (int causal : {0, 1})
            for (int bound : {0, 1}) {
                AttnRun p = shape(dt, 5, 4, 2, n++ % 2 ? 128 : 64, 0, 0);
                p.lens_q = {7, 0, 130, 65, 3};
                p.lens_k = {63, 5, 200, 0, 1};
                if (bound) {
                    p.Sq = 300;
                    p.Sk = 257;
                }
                p.causal = causal;
                GK_ATTN_RUN(p);
            }
}

// Head dimensions: the built ones (64, 96, 128, 256) and others that run zero-padded on the next
// larger kernel (8, 40, 200, 248): causal and not, padded layout (NaN between heads: a kernel that
// reads past D shows).
TEST(AttentionGpu, HeadDims)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes)
        for (int d : {64, 96, 128, 256, 8, 40, 200, 248})
            for (int causal : {0, 1}) {
                AttnRun p = shape(dt, 2, 4, 2, d, n % 3 == 0 ? 1 : 65, n % 2 ? 130 : 63);
                p.causal = causal;
                p.layout = n % 4 == 1 ? kPadded : kDense;
                n++;
                GK_ATTN_RUN(p);
            }
}

// Sliding windows: left only, both sides, with causal (right 0), the diagonal alone (0, 0), wider
// than the sequence; Sq < Sk, Sq > Sk and Sq == Sk.
TEST(AttentionGpu, SlidingWindows)
{
    GK_REQUIRE_GPU();
    struct {
        int wl, wr, causal;
    } const windows[] = {{16, -1, 0}, {100, -1, 0}, {32, 8, 0}, {0, 70, 0}, {-1, 5, 0},
                         {64, -1, 1}, {0, 0, 0},    {0, -1, 1}, {5000, 5000, 0}};
    const int shapes[][2] = {{200, 1000}, {1000, 200}, {257, 257}, {7, 63}};
    int n = 0;
    for (int dt : kDtypes)
        for (const auto &w : windows) {
            const auto &s = shapes[n % 4];
            AttnRun p = shape(dt, 1, 4, 1, n % 3 == 2 ? 96 : 64, s[0], s[1]);
            p.wl = w.wl;
            p.wr = w.wr;
            p.causal = w.causal;
            n++;
            GK_ATTN_RUN(p);
        }
}

// Softcap (logits through softcap tanh(s / softcap)) and custom scales, with and without masks.
TEST(AttentionGpu, SoftcapAndScale)
{
    GK_REQUIRE_GPU();
    struct {
        float scale, softcap;
        int causal, wl;
    } const cases[] = {{0.0f, 1.0f, 0, -1}, {0.0f, 5.0f, 1, -1}, {0.5f, 2.0f, 0, 40},   {1.0f, 0.0f, 0, -1},
                       {3.0f, 0.0f, 1, -1}, {0.02f, 0.0f, 0, -1}, {2.0f, 30.0f, 1, 17}, {0.25f, 50.0f, 0, -1}};
    int n = 0;
    for (int dt : kDtypes)
        for (const auto &c : cases) {
            AttnRun p = shape(dt, 2, 4, 2, n % 2 ? 128 : 64, 65, n % 3 ? 300 : 65);
            p.scale = c.scale;
            p.softcap = c.softcap;
            p.causal = c.causal;
            p.wl = c.wl;
            n++;
            GK_ATTN_RUN(p);
        }
}

// Strided layouts: [B, H, S, D]; rows, heads and batches with gaps (NaN in the inputs' gaps, out's
// gaps checked untouched); q, k and v sliced from one packed QKV projection (out padded); and
// varlen on padded layouts and [H, B Sq, D] (tokens packed at the start of each head's B Sq rows).
TEST(AttentionGpu, Layouts)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes) {
        for (Layout l : {kBHSD, kPadded, kQKV})
            for (int hkv : {4, 1}) {
                AttnRun p = shape(dt, 2, 4, hkv, n % 2 ? 128 : 64, 130, l == kQKV ? 130 : 300);
                p.layout = l;
                p.causal = n % 3 == 0;
                n++;
                GK_ATTN_RUN(p);
            }
        for (Layout l : {kBHSD, kPadded}) {
            AttnRun p = shape(dt, 3, 4, 2, 96, 0, 0);
            p.lens_q = {65, 0, 17};
            p.lens_k = {130, 9, 0};
            p.layout = l;
            p.causal = 1;
            GK_ATTN_RUN(p);
        }
        AttnRun p = shape(dt, 2, 8, 2, 64, 63, 63);
        p.layout = kQKV;
        p.wl = 20;
        GK_ATTN_RUN(p);
    }
}

// Large logits: |q|, |k| up to 8192 (logits up to about 1.5e9 in log2 units, where e^s overflows
// any float without the running max, and where the float ulp of the running max is 128: P must
// still stay at most 1, or f16's P overflows); even rows are one-hot (out = the top key's v), odd
// rows spread over the top keys around a logit of thousands. lse compared too.
TEST(AttentionGpu, LargeLogits)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes)
        for (int d : {64, 128, 256, 96})
            for (int causal : {0, 1}) {
                AttnRun p = shape(dt, 2, 2, 1, d, 65, n % 2 ? 1000 : 130);
                p.fill = kLarge;
                p.causal = causal;
                n++;
                GK_ATTN_RUN(p);
            }
    // the key split's partials and their merge
    for (int dt : kDtypes) {
        AttnRun p = shape(dt, 1, 2, 1, 128, 4, 1000);
        p.fill = kLarge;
        p.splits = 5;
        p.ws_bytes = 64u << 20;
        p.ws_written = true;
        GK_ATTN_RUN(p);
    }
}

// A NaN in one element of one key: exactly the rows that see that key (its sequence, its kv
// head's query heads, the rows whose mask lets it in) get out and lse NaN; every other row is
// finite and correct. Masked, GQA, varlen and split runs.
TEST(AttentionGpu, NanKey)
{
    GK_REQUIRE_GPU();
    for (int dt : kDtypes)
        for (int v = 0; v < 6; v++) {
            AttnRun p = shape(dt, 2, 4, 2, v % 2 ? 128 : 64, 200, 300);
            p.fill = kNanKey;
            switch (v) {
            case 0: break;
            case 1: p.causal = 1; break;
            case 2: p.wl = 50; p.wr = 10; break;
            case 3: p.causal = 1; p.splits = 4; p.ws_bytes = 64u << 20; p.ws_written = true; break;
            case 4: p.lens_q = {100, 150}; p.lens_k = {300, 77}; p.Sq = p.Sk = 0; p.causal = 1; break;
            default: p.D = 40; p.layout = kPadded; p.wl = 30; break;
            }
            GK_ATTN_RUN(p);
        }
}

// Same inputs, same bits: two runs of each (dispatcher, key splits, varlen) compared byte for byte.
TEST(AttentionGpu, Deterministic)
{
    GK_REQUIRE_GPU();
    for (int dt : kDtypes)
        for (int v = 0; v < 3; v++) {
            AttnRun p = shape(dt, 2, 8, 2, 128, 300, 2000);
            p.causal = v == 1;
            if (v == 1) {
                p.splits = 6;
                p.ws_bytes = 64u << 20;
                p.ws_written = true;
            }
            if (v == 2) {
                p.lens_q = {300, 11};
                p.lens_k = {1500, 2000};
                p.Sq = p.Sk = 0;
            }
            p.sample_rows = 64;
            AttnResult a, b;
            run_attn(p, &a);
            if (HasFailure()) return;
            run_attn(p, &b);
            if (HasFailure()) return;
            EXPECT_TRUE(a.out == b.out) << describe(p) << ": out differs between two runs";
            EXPECT_TRUE(a.lse == b.lse) << describe(p) << ": lse differs between two runs";
        }
}

// Bytes of workspace enough for `splits` splits of any configuration (fp32 partials of up to 256
// columns and their lse, each rounded to 256 bytes).
static size_t split_ws(const AttnRun &p, int splits)
{
    int sq = p.Sq;
    for (int l : p.lens_q) sq = std::max(sq, l);
    return (size_t)splits * p.B * sq * p.Hq * (256 + 1) * 4 + 1024;
}

// Key splits through gk_attention_ex (the dispatcher's configuration): 1, 3 and 8 splits, with
// splits that get no key tile (Sk of 2 tiles), masks, GQA and varlen; the workspace must be written
// when the keys are split.
TEST(AttentionGpu, KeySplits)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDtypes)
        for (int splits : {1, 3, 8})
            for (int v = 0; v < 4; v++) {
                AttnRun p = shape(dt, 2, 4, 2, n % 3 == 0 ? 96 : n % 3 == 1 ? 64 : 256, 65, 1000);
                switch (v) {
                case 0: break;
                case 1: p.causal = 1; p.Sq = 7; p.Sk = 4097; break;
                case 2: p.Sk = 100; p.wl = 20; break; // 2 key tiles: some splits empty
                default:
                    p.lens_q = {33, 0, 65};
                    p.lens_k = {1000, 50, 0};
                    p.B = 3;
                    p.Sq = p.Sk = 0;
                    p.causal = 1;
                    break;
                }
                p.splits = splits;
                p.ws_bytes = split_ws(p, splits);
                p.ws_written = splits > 1;
                n++;
                GK_ATTN_RUN(p);
            }
}

// The dispatcher with gk_attention_workspace_bytes of workspace on a short-Sq, long-Sk shape (the
// query tiles alone leave SMs idle): it splits the keys (the workspace gets written).
TEST(AttentionGpu, DispatcherSplitsShortQueries)
{
    GK_REQUIRE_GPU();
    for (int dt : kDtypes)
        for (int causal : {0, 1}) {
            AttnRun p = shape(dt, 1, 8, 2, causal ? 64 : 128, 3, 20000);
            p.causal = causal;
            p.ws_plan = true;
            p.ws_written = true;
            GK_ATTN_RUN(p);
        }
    // the same without a workspace: one pass over the keys
    AttnRun p = shape(GK_BF16, 1, 8, 2, 128, 3, 20000);
    GK_ATTN_RUN(p);
}

// Every configuration through gk_attention_ex, on the D it is built for and (mma.sync ones) a
// smaller D it runs zero-padded, with and without key splits. The wgmma configurations run only on
// a compute capability 9.0 GPU with an sm_90a build (skipped elsewhere, with a note).
TEST(AttentionGpu, EveryConfig)
{
    GK_REQUIRE_GPU();
    int dev = 0;
    cudaDeviceProp prop;
    GK_CUDA_OK(cudaGetDevice(&dev));
    GK_CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    int n = 0;
    for (int c = 0; c < gk_attention_config_count(); c++) {
        const gk_attention_config cfg = gk_attention_config_info(c);
        if (cfg.wgmma && !(prop.major == 9 && prop.minor == 0)) {
            printf("  configuration %s: wgmma, not run on compute capability %d.%d\n", cfg.name, prop.major,
                   prop.minor);
            continue;
        }
        for (int dt : kDtypes)
            for (int v = 0; v < (cfg.wgmma ? 2 : 4); v++) {
                AttnRun p = shape(dt, 2, 4, 2, cfg.head_dim, 130, 1000);
                p.config = c;
                p.causal = v % 2;
                if (v >= 2) {
                    p.D = cfg.head_dim - 24;
                    p.splits = 3;
                    p.ws_bytes = split_ws(p, 3);
                    p.ws_written = true;
                    p.layout = kPadded;
                }
                if (n++ % 3 == 2) p.Sq = 1;
                GK_ATTN_RUN(p);
            }
    }
}

// Long sequences: Sk = 2^17 keys for a few query rows against the fp64 reference (the fp32 running
// sum over 2048 key tiles), one pass and split; Sq = Sk = 4097 on sampled rows.
TEST(AttentionGpu, LongSequences)
{
    GK_REQUIRE_GPU();
    for (int dt : kDtypes)
        for (int v = 0; v < 3; v++) {
            AttnRun p = shape(dt, 1, 4, 1, 128, 4, 131072);
            p.causal = v == 2;
            if (v == 1) {
                p.ws_plan = true;
                p.ws_written = true;
            }
            GK_ATTN_RUN(p);
        }
    for (int dt : kDtypes)
        for (int causal : {0, 1}) {
            AttnRun p = shape(dt, 1, 2, 1, 64, 4097, 4097);
            p.causal = causal;
            p.sample_rows = 256;
            GK_ATTN_RUN(p);
        }
}

// No keys at all (Sk = 0): every row sees none, out 0 and lse -inf. And lse NULL: out alone
// written, the lse buffer untouched.
TEST(AttentionGpu, NoKeysAndNoLse)
{
    GK_REQUIRE_GPU();
    for (int dt : kDtypes) {
        AttnRun p = shape(dt, 2, 4, 2, 64, 65, 0);
        GK_ATTN_RUN(p);
        p = shape(dt, 2, 4, 2, 128, 65, 300);
        p.lse = false;
        p.causal = 1;
        GK_ATTN_RUN(p);
        p = shape(dt, 1, 4, 2, 64, 3, 5000);
        p.lse = false;
        p.splits = 4;
        p.ws_bytes = split_ws(p, 4);
        p.ws_written = true;
        GK_ATTN_RUN(p);
    }
}
