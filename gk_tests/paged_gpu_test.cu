// GPU tests of gk_paged.cuh against the CPU references in double (paged_ref.h): the RoPE + paged
// cache append, and the split-K decode attention over the cache. Skipped without a GPU.
//
// RoPE + APPEND
// Inputs are fresh random values every run (uniform in [-2, 2), rounded to the dtype; the reference
// reads the rounded values); positions and the slots (a random scattering over the cache, so
// neighbouring tokens land in different blocks) too. Gaps between the rows and heads of strided
// inputs hold NaN: a kernel that reads them writes NaN, which never passes. q_out and both caches
// are poisoned (all-ones bytes: NaN in bf16 and f16, the NaN code S.1111.111 in e4m3) before the
// launch; afterwards every element a token should write must hold its expected value, and every
// other byte (unwritten slots, gaps of strided layouts, the rows of skipped tokens, the guard
// bytes around each buffer) its poison, or for an in-place q its input. The inputs k and v (and q,
// or the packed QKV buffer, when q_out is separate) must come back unchanged.
//
// Layouts: q, k, v in buffers of their own or sliced from one packed QKV row (q_out separate, or
// q itself: in place inside the rows), with or without gaps; caches dense, with gaps, or k and v
// interleaved in one buffer (FlashInfer's [blocks][2][block_size][Hkv][D]); block sizes 1, 16, 256.
//
// Tolerance: gk_ref_paged_accept with 4 times the reference's eta: the stored value is what
// rounding to nearest even (gk_rne.h) gives for a value within that bound of the exact one. The
// bound covers fp32 sin and cos of a double-reduced angle, so it is near 1e-6 of |x1| + |x2|,
// ~1e-5 at positions of 2^33 (bf16's half step at 1 is 2e-3): the check is bit-exact almost
// everywhere, and the copies (v, dims past rotary_dim) are checked bit-exact.
//
// DECODE ATTENTION: see the section's own comment below.
//
// GK_PAGED_IMPLEMENTATION, not GK_IMPLEMENTATION: gk_paged.cuh includes gk_attention.cuh, whose
// kernels this file does not need.
#define GK_CORE_IMPLEMENTATION
#define GK_PAGED_IMPLEMENTATION
#include "gk/gk_paged.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/paged_ref.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// ------------------------------------------------------------------ one run

enum QLayout {
    kSeparate, // q, k, v in buffers of their own; q_out another
    kInPlace,  // q_out = q
    kPacked,   // q, k, v sliced from one packed [T][Hq + 2 Hkv][D] projection; q_out separate
    kPackedInPlace // packed, and q_out = q (rotated in place inside the QKV rows)
};

struct PagedRun {
    std::string name;
    int dt = GK_BF16;
    bool fp8 = false; // the cache e4m3 (else the tokens' dtype)
    int T = 33, Hq = 8, Hkv = 2, D = 128, rot = 128, style = GK_ROPE_NEOX;
    float theta = 10000.0f;
    float factor = 0.0f, low = 1.0f, high = 4.0f; // Llama-3.1 scaling when factor > 0
    int old = 8192;
    bool table = false;        // a cos/sin table of max_position rows
    float table_theta = 0.0f;  // the theta the table is built from (0: theta)
    int64_t max_position = 0;
    bool pos64 = false;
    int64_t pos_lo = 0, pos_hi = 4096; // positions uniform in [pos_lo, pos_hi)
    QLayout q = kSeparate;
    bool padded = false; // head stride D + 8, token stride + 16 for q, k, v; q_out too (other gaps)
    int block_size = 16, num_blocks = 0; // 0: enough for about 2 T slots
    bool padded_cache = false;
    bool interleaved = false; // k and v caches in one buffer, FlashInfer's [blocks][2][block_size][Hkv][D]
    float k_scale = 1.0f, v_scale = 1.0f;
    int no_cache = 0, bad_slots = 0, bad_positions = 0; // tokens with slot -1, a bad slot, a bad position
    bool flag = true;                                   // an error_flag given
};

static uint64_t run_salt(const PagedRun &r)
{
    uint64_t h = 0x9a6ed;
    for (char c : r.name) h = (h ^ (uint64_t)(unsigned char)c) * 0x100000001b3ull;
    return (h ^ (uint64_t)r.dt) * 0x100000001b3ull;
}

static std::string describe(const PagedRun &r)
{
    char s[512];
    snprintf(s, sizeof s,
             "%s %s cache=%s T=%d Hq=%d Hkv=%d D=%d rot=%d %s theta=%g factor=%g table=%d pos%s [%lld, %lld) "
             "layout=%d padded=%d block=%d padded_cache=%d interleaved=%d scales=%g,%g no_cache=%d bad_slots=%d bad_pos=%d flag=%d",
             r.name.c_str(), gk_dtype_name(r.dt), r.fp8 ? "e4m3" : gk_dtype_name(r.dt), r.T, r.Hq, r.Hkv, r.D, r.rot,
             r.style == GK_ROPE_NEOX ? "neox" : "gptj", r.theta, r.factor, (int)r.table, r.pos64 ? "64" : "32",
             (long long)r.pos_lo, (long long)r.pos_hi, (int)r.q, (int)r.padded, r.block_size, (int)r.padded_cache,
             (int)r.interleaved, r.k_scale, r.v_scale, r.no_cache, r.bad_slots, r.bad_positions, (int)r.flag);
    return s;
}

// A buffer: its host bytes and its device copy (with guard bytes).
struct Buf {
    HostTensor h;
    std::unique_ptr<DeviceTensor> d;
    Buf(int dt, size_t n) : h(dt, n), d(new DeviceTensor(dt, n)) {}
    char *ptr() const { return (char *)d->ptr(); }
};

static std::vector<float> widen(const HostTensor &h)
{
    std::vector<float> f(h.n);
    for (size_t i = 0; i < h.n; i++) f[i] = (float)h.get(i);
    return f;
}

// Marks the elements of [tokens][heads][D] rows from element `at` with token and head strides.
static void mark_rows(std::vector<char> *cov, int64_t at, int64_t tokens, int64_t ts, int64_t heads, int64_t hs,
                      int64_t D)
{
    for (int64_t t = 0; t < tokens; t++)
        for (int64_t h = 0; h < heads; h++) std::fill(cov->begin() + at + t * ts + h * hs, cov->begin() + at + t * ts + h * hs + D, 1);
}

static size_t count_bad(const char *what, const HostTensor &got, const std::vector<char> &set,
                        const std::vector<double> &want, const std::vector<double> &eta, const HostTensor *untouched_as,
                        GkRneFormat f, int max_print = 6)
{
    size_t bad = 0;
    int printed = 0;
    const size_t es = gk_dtype_size(got.dt);
    for (size_t i = 0; i < got.n; i++) {
        bool ok;
        if (set[i]) {
            ok = gk_ref_paged_accept(gk_ref_paged_code(got.bytes.data(), i, got.dt), f, want[i], 4 * eta[i]);
        } else if (untouched_as) {
            ok = memcmp(got.bytes.data() + i * es, untouched_as->bytes.data() + i * es, es) == 0;
        } else {
            ok = true;
            for (size_t b = 0; b < es; b++) ok = ok && got.bytes[i * es + b] == DeviceTensor::kPoison;
        }
        if (!ok) {
            if (printed++ < max_print) {
                if (set[i])
                    printf("  %s[%zu]: got %.9g (code 0x%x), want %.9g (eta %.3g)\n", what, i,
                           gk_rne_value(gk_ref_paged_code(got.bytes.data(), i, got.dt), f), gk_ref_paged_code(got.bytes.data(), i, got.dt),
                           want[i], eta[i]);
                else
                    printf("  %s[%zu]: written (code 0x%x), but no token writes it\n", what, i,
                           gk_ref_paged_code(got.bytes.data(), i, got.dt));
            }
            bad++;
        }
    }
    if (bad) printf("  %s: %zu of %zu elements wrong\n", what, bad, got.n);
    return bad;
}

static void PrintTo(const PagedRun &r, std::ostream *os) { *os << describe(r); }

// Device allocations freed at scope exit.
struct DeviceFrees {
    std::vector<void *> p;
    ~DeviceFrees()
    {
        for (void *x : p) cudaFree(x);
    }
};

static void run_paged(const PagedRun &R)
{
    GK_REQUIRE_GPU();
    SCOPED_TRACE(describe(R));
    GkRng rng(run_salt(R));
    const int T = R.T, Hq = R.Hq, Hkv = R.Hkv, D = R.D, dt = R.dt, cdt = R.fp8 ? (int)GK_E4M3 : dt;

    // ---- the token layouts (elements)
    const int64_t hs = R.padded ? D + 8 : D;
    gk_rope_append_params p;
    memset(&p, 0, sizeof p);
    p.tokens = T;
    p.heads_q = Hq;
    p.heads_kv = Hkv;
    p.head_dim = D;
    p.q_head_stride = p.k_head_stride = p.v_head_stride = hs;
    int64_t q_at = 0, k_at = 0, v_at = 0; // element offsets of q, k, v in their buffers
    size_t qn, kn, vn;                    // buffer sizes (elements)
    const bool packed = R.q == kPacked || R.q == kPackedInPlace, in_place = R.q == kInPlace || R.q == kPackedInPlace;
    if (packed) {
        const int64_t row = (Hq + 2 * Hkv) * hs + (R.padded ? 16 : 0);
        p.q_token_stride = p.k_token_stride = p.v_token_stride = row;
        k_at = Hq * hs;
        v_at = (Hq + Hkv) * hs;
        qn = kn = vn = (size_t)(T * row);
    } else {
        p.q_token_stride = Hq * hs + (R.padded ? 16 : 0);
        p.k_token_stride = p.v_token_stride = Hkv * hs + (R.padded ? 24 : 0);
        qn = (size_t)(T * p.q_token_stride);
        kn = vn = (size_t)(T * p.k_token_stride);
    }
    // q_out: q's layout in place; else dense, or with gaps of its own when padded
    size_t on;
    if (in_place) {
        p.q_out_token_stride = p.q_token_stride;
        p.q_out_head_stride = p.q_head_stride;
        on = qn;
    } else {
        p.q_out_head_stride = R.padded ? D + 16 : D;
        p.q_out_token_stride = Hq * p.q_out_head_stride + (R.padded ? 8 : 0);
        on = (size_t)(T * p.q_out_token_stride);
    }

    // ---- inputs: uniform values, NaN in the gaps
    std::unique_ptr<Buf> qb(new Buf(dt, qn)), kb, vb;
    qb->h.fill_uniform(rng, -2.0f, 2.0f);
    std::vector<char> qcov(qn, 0), kcov, vcov;
    mark_rows(&qcov, q_at, T, p.q_token_stride, Hq, p.q_head_stride, D);
    if (packed) {
        mark_rows(&qcov, k_at, T, p.k_token_stride, Hkv, p.k_head_stride, D);
        mark_rows(&qcov, v_at, T, p.v_token_stride, Hkv, p.v_head_stride, D);
    } else {
        kb.reset(new Buf(dt, kn));
        vb.reset(new Buf(dt, vn));
        kb->h.fill_uniform(rng, -2.0f, 2.0f);
        vb->h.fill_uniform(rng, -2.0f, 2.0f);
        kcov.assign(kn, 0);
        vcov.assign(vn, 0);
        mark_rows(&kcov, 0, T, p.k_token_stride, Hkv, p.k_head_stride, D);
        mark_rows(&vcov, 0, T, p.v_token_stride, Hkv, p.v_head_stride, D);
        for (size_t i = 0; i < kn; i++)
            if (!kcov[i]) memset(kb->h.bytes.data() + 2 * i, 0xff, 2);
        for (size_t i = 0; i < vn; i++)
            if (!vcov[i]) memset(vb->h.bytes.data() + 2 * i, 0xff, 2);
    }
    for (size_t i = 0; i < qn; i++)
        if (!qcov[i]) memset(qb->h.bytes.data() + 2 * i, 0xff, 2);
    Buf &kbuf = packed ? *qb : *kb, &vbuf = packed ? *qb : *vb;
    std::unique_ptr<Buf> ob;
    if (!in_place) ob.reset(new Buf(dt, on));

    // ---- the cache
    const int bs = R.block_size;
    const int nb = R.num_blocks > 0 ? R.num_blocks : (int)((2 * T + bs - 1) / bs) + 1;
    const int64_t slots = (int64_t)nb * bs;
    gk_paged_kv c = gk_paged_kv_dense(nullptr, nullptr, cdt, nb, bs, Hkv, D);
    if (R.padded_cache) { // gaps after each head, slot and block; k and v laid out differently
        c.k_head_stride = D + 8;
        c.k_slot_stride = Hkv * (D + 8) + 8;
        c.k_block_stride = bs * c.k_slot_stride + 16;
        c.v_head_stride = D;
        c.v_slot_stride = Hkv * D + 24;
        c.v_block_stride = bs * c.v_slot_stride + 8;
    }
    int64_t v_off = 0; // interleaved: v's offset in the one buffer (elements)
    if (R.interleaved) {
        v_off = (int64_t)bs * Hkv * D;
        c.k_block_stride = c.v_block_stride = 2 * v_off;
    }
    if (R.fp8) {
        c.k_scale = R.k_scale;
        c.v_scale = R.v_scale;
    }
    const size_t kcn = (size_t)((nb - 1) * c.k_block_stride + (bs - 1) * c.k_slot_stride + (Hkv - 1) * c.k_head_stride + D);
    const size_t vcn = (size_t)((nb - 1) * c.v_block_stride + (bs - 1) * c.v_slot_stride + (Hkv - 1) * c.v_head_stride + D);
    std::unique_ptr<Buf> kcb(new Buf(cdt, R.interleaved ? (size_t)(v_off + vcn) : kcn)), vcb;
    if (!R.interleaved) vcb.reset(new Buf(cdt, vcn));

    // ---- positions, slots, the table
    ASSERT_LE(T, slots) << "the cache needs a slot a token";
    std::vector<int64_t> pos(T), slot(T);
    const uint64_t range = (uint64_t)(R.pos_hi - R.pos_lo);
    for (int t = 0; t < T; t++) pos[t] = R.pos_lo + (int64_t)(rng.next() % range);
    {
        std::vector<int64_t> perm(slots);
        for (int64_t s = 0; s < slots; s++) perm[s] = s;
        for (int64_t s = slots - 1; s > 0; s--) std::swap(perm[s], perm[rng.next() % (uint64_t)(s + 1)]);
        for (int t = 0; t < T; t++) slot[t] = perm[t];
    }
    std::vector<int> order(T); // which tokens get -1, a bad slot, a bad position: distinct ones
    for (int t = 0; t < T; t++) order[t] = t;
    for (int t = T - 1; t > 0; t--) std::swap(order[t], order[rng.next() % (uint64_t)(t + 1)]);
    ASSERT_LT(R.no_cache + R.bad_slots + R.bad_positions, T);
    int at = 0;
    for (int i = 0; i < R.no_cache; i++) slot[order[at++]] = -1;
    const int64_t bad_slot_values[] = {slots, slots + 12345, INT64_MAX, -2, -1000, INT64_MIN, slots + 1};
    for (int i = 0; i < R.bad_slots; i++) slot[order[at++]] = bad_slot_values[i % 7];
    const int64_t bad_pos_values[] = {R.max_position, R.max_position + 7, -1, -1000, 2 * R.max_position};
    for (int i = 0; i < R.bad_positions; i++) pos[order[at++]] = bad_pos_values[i % 5];
    std::vector<float> table;
    if (R.table) {
        const int half = R.rot / 2;
        gk_rope tr = gk_rope_default(R.rot, R.table_theta > 0 ? R.table_theta : R.theta);
        table.resize((size_t)R.max_position * R.rot);
        for (int64_t m = 0; m < R.max_position; m++)
            for (int j = 0; j < half; j++) {
                const long double a = m * gk_ref_rope_freq(tr, j);
                table[m * R.rot + j] = (float)cosl(a);
                table[m * R.rot + half + j] = (float)sinl(a);
            }
    }

    // ---- device copies
    ASSERT_TRUE(qb->d->ok() && kbuf.d->ok() && vbuf.d->ok() && kcb->d->ok() && (!vcb || vcb->d->ok()) && (!ob || ob->d->ok()));
    for (Buf *b : {qb.get(), kb.get(), vb.get()})
        if (b) {
            GK_CUDA_OK(b->d->poison());
            GK_CUDA_OK(b->d->upload(b->h));
        }
    if (ob) GK_CUDA_OK(ob->d->poison());
    GK_CUDA_OK(kcb->d->poison());
    if (vcb) GK_CUDA_OK(vcb->d->poison());
    void *dpos = nullptr, *dslot = nullptr, *dflag = nullptr;
    float *dtable = nullptr;
    std::vector<int32_t> pos32(T);
    for (int t = 0; t < T; t++) pos32[t] = (int32_t)pos[t];
    if (!R.pos64)
        for (int t = 0; t < T; t++) ASSERT_EQ(pos32[t], pos[t]) << "int32 positions must fit";
    DeviceFrees frees;
    GK_CUDA_OK(cudaMalloc(&dpos, 8 * (size_t)T));
    frees.p.push_back(dpos);
    GK_CUDA_OK(cudaMalloc(&dslot, 8 * (size_t)T));
    frees.p.push_back(dslot);
    GK_CUDA_OK(cudaMalloc(&dflag, 4));
    frees.p.push_back(dflag);
    if (R.pos64) GK_CUDA_OK(cudaMemcpy(dpos, pos.data(), 8 * (size_t)T, cudaMemcpyHostToDevice));
    else GK_CUDA_OK(cudaMemcpy(dpos, pos32.data(), 4 * (size_t)T, cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemcpy(dslot, slot.data(), 8 * (size_t)T, cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemset(dflag, 0, 4));
    if (R.table) {
        GK_CUDA_OK(cudaMalloc((void **)&dtable, 4 * table.size()));
        frees.p.push_back(dtable);
        GK_CUDA_OK(cudaMemcpy(dtable, table.data(), 4 * table.size(), cudaMemcpyHostToDevice));
    }

    p.positions = dpos;
    p.positions_int64 = R.pos64;
    p.slot_mapping = (const int64_t *)dslot;
    p.error_flag = R.flag ? (int *)dflag : nullptr;
    gk_rope r = gk_rope_default(R.rot, R.theta);
    r.style = R.style;
    r.factor = R.factor;
    r.low_freq_factor = R.low;
    r.high_freq_factor = R.high;
    r.original_max_position = R.old;
    if (R.table) {
        r.cos_sin = dtable;
        r.max_position = R.max_position;
    }
    c.k_cache = kcb->ptr();
    c.v_cache = R.interleaved ? kcb->ptr() + gk_dtype_size(cdt) * v_off : vcb->ptr();
    char *q = qb->ptr() + 2 * q_at, *k = kbuf.ptr() + 2 * k_at, *v = vbuf.ptr() + 2 * v_at;
    char *qo = in_place ? q : ob->ptr();
    if (dt == GK_BF16)
        GK_CUDA_OK(gk_rope_append_bf16((gk_bf16 *)qo, (const gk_bf16 *)q, (const gk_bf16 *)k, (const gk_bf16 *)v, &p,
                                       &r, &c, 0));
    else
        GK_CUDA_OK(gk_rope_append_f16((gk_f16 *)qo, (const gk_f16 *)q, (const gk_f16 *)k, (const gk_f16 *)v, &p, &r,
                                      &c, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());

    // ---- the reference
    const std::vector<float> qf = widen(qb->h), kf = packed ? qf : widen(kb->h), vf = packed ? qf : widen(vb->h);
    GkPagedRefIn in;
    in.p = p;
    in.r = r;
    in.c = c;
    in.q = qf.data() + q_at;
    in.k = kf.data() + k_at;
    in.v = vf.data() + v_at;
    in.positions = pos.data();
    in.slots = slot.data();
    in.cos_sin = R.table ? table.data() : nullptr;
    GkPagedRefOut want;
    gk_ref_rope_append(in, on, kcn, vcn, &want);
    int written = 0;
    for (int t = 0; t < T; t++) written += want.fate[t] == GK_REF_TOKEN_WRITE;
    EXPECT_GT(written, 0) << "the run should write some cache slots";

    // ---- results
    const GkRneFormat tf = gk_ref_paged_format(dt), cf = gk_ref_paged_format(cdt);
    HostTensor qo_got(dt, on), kc_got(cdt, kcb->h.n);
    GK_CUDA_OK(in_place ? qb->d->download(&qo_got) : ob->d->download(&qo_got));
    GK_CUDA_OK(kcb->d->download(&kc_got));
    int flag = -1;
    GK_CUDA_OK(cudaMemcpy(&flag, dflag, 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(flag, R.flag && want.any_skip ? 1 : 0) << "the error flag";
    EXPECT_EQ(count_bad("q_out", qo_got, want.q_set, want.q, want.q_eta, in_place ? &qb->h : nullptr, tf), 0u);
    if (R.interleaved) { // one buffer: k's expectations, and v's from v_off on
        std::vector<char> set(want.k_set);
        std::vector<double> w(want.k), e(want.k_eta);
        set.resize(kc_got.n, 0);
        w.resize(kc_got.n, 0.0);
        e.resize(kc_got.n, 0.0);
        size_t both = 0;
        for (size_t i = 0; i < (size_t)vcn; i++)
            if (want.v_set[i]) {
                both += set[v_off + i];
                set[v_off + i] = 1;
                w[v_off + i] = want.v[i];
                e[v_off + i] = want.v_eta[i];
            }
        EXPECT_EQ(both, 0u) << "the test's interleaved layout puts a k and a v element on one address";
        EXPECT_EQ(count_bad("kv_cache", kc_got, set, w, e, nullptr, cf), 0u);
    } else {
        HostTensor vc_got(cdt, vcn);
        GK_CUDA_OK(vcb->d->download(&vc_got));
        EXPECT_EQ(count_bad("k_cache", kc_got, want.k_set, want.k, want.k_eta, nullptr, cf), 0u);
        EXPECT_EQ(count_bad("v_cache", vc_got, want.v_set, want.v, want.v_eta, nullptr, cf), 0u);
    }
    // the inputs unchanged (q too, unless it is q_out)
    for (Buf *b : {qb.get(), kb.get(), vb.get()}) {
        if (!b || (b == qb.get() && in_place)) continue;
        HostTensor back(dt, b->h.n);
        GK_CUDA_OK(b->d->download(&back));
        EXPECT_TRUE(back.bytes == b->h.bytes) << "an input buffer changed";
    }
    for (Buf *b : {qb.get(), kb.get(), vb.get(), ob.get(), kcb.get(), vcb.get()})
        if (b) EXPECT_EQ(b->d->guard_damage(), 0u) << "bytes written outside a buffer";
}

// ------------------------------------------------------------------ the runs

static std::vector<PagedRun> runs()
{
    std::vector<PagedRun> v;
    auto add = [&](const char *name, const std::function<void(PagedRun *)> &set) {
        PagedRun r;
        r.name = name;
        set(&r);
        v.push_back(r);
    };
    // styles, partial rotary, head dims
    add("neox_d128", [](PagedRun *) {});
    add("neox_d128_rot64", [](PagedRun *r) { r->rot = 64; });
    add("neox_d128_rot32", [](PagedRun *r) { r->rot = 32; });
    add("gptj_d128", [](PagedRun *r) { r->style = GK_ROPE_GPTJ; });
    add("gptj_d128_rot32", [](PagedRun *r) { r->style = GK_ROPE_GPTJ; r->rot = 32; });
    add("gptj_d128_rot64", [](PagedRun *r) { r->style = GK_ROPE_GPTJ; r->rot = 64; });
    add("neox_d64_mha", [](PagedRun *r) { r->D = r->rot = 64; r->Hq = r->Hkv = 4; });
    add("gptj_d64_mqa_rot24", [](PagedRun *r) { r->D = 64; r->rot = 24; r->style = GK_ROPE_GPTJ; r->Hq = 16; r->Hkv = 1; });
    add("neox_d256_block1", [](PagedRun *r) { r->D = r->rot = 256; r->Hq = 2; r->Hkv = 1; r->block_size = 1; });
    add("gptj_d256_rot128_block256", [](PagedRun *r) { r->D = 256; r->rot = 128; r->style = GK_ROPE_GPTJ; r->block_size = 256; });
    add("neox_d72_rot48", [](PagedRun *r) { r->D = 72; r->rot = 48; });
    add("neox_d64_rot0", [](PagedRun *r) { r->D = 64; r->rot = 0; });
    // theta 500000 and Llama-3.1 scaling (factor 8, 1, 4, 8192), positions to 128K
    add("llama31_neox", [](PagedRun *r) {
        r->theta = 500000.0f; r->factor = 8; r->Hq = 32; r->Hkv = 8; r->T = 20; r->pos_hi = 131072;
    });
    add("llama31_gptj_rot64", [](PagedRun *r) {
        r->theta = 500000.0f; r->factor = 8; r->style = GK_ROPE_GPTJ; r->rot = 64; r->pos_hi = 131072;
    });
    add("theta500k_unscaled", [](PagedRun *r) { r->theta = 500000.0f; r->pos_hi = 1 << 20; });
    // int64 positions: past 2^31 (the angle formed and reduced in double), and small ones
    add("pos64_past_2e31", [](PagedRun *r) { r->pos64 = true; r->pos_lo = (int64_t)1 << 31; r->pos_hi = ((int64_t)1 << 33) + 12345; });
    add("pos64_llama31_gptj", [](PagedRun *r) {
        r->pos64 = true; r->pos_lo = ((int64_t)1 << 31) - 100; r->pos_hi = (int64_t)3 << 31; r->theta = 500000.0f;
        r->factor = 8; r->style = GK_ROPE_GPTJ;
    });
    add("pos64_small", [](PagedRun *r) { r->pos64 = true; r->rot = 64; });
    add("pos32_max", [](PagedRun *r) { r->pos_lo = 2147483647LL - 5000; r->pos_hi = 2147483647LL; });
    // a cos/sin table (built from another theta, so that computing would not pass), bad positions
    add("table_neox", [](PagedRun *r) {
        r->table = true; r->max_position = 2048; r->pos_hi = 2048; r->theta = 0.0f; r->table_theta = 10000.0f;
    });
    add("table_gptj_rot64_other_theta", [](PagedRun *r) {
        r->table = true; r->max_position = 1000; r->pos_hi = 1000; r->style = GK_ROPE_GPTJ; r->rot = 64;
        r->table_theta = 30000.0f;
    });
    add("table_bad_positions", [](PagedRun *r) {
        r->table = true; r->max_position = 512; r->pos_hi = 512; r->bad_positions = 5; r->no_cache = 3; r->T = 40;
    });
    add("table_bad_positions_pos64", [](PagedRun *r) {
        r->table = true; r->max_position = 300; r->pos_hi = 300; r->bad_positions = 4; r->pos64 = true;
        r->style = GK_ROPE_GPTJ;
    });
    // q in place, packed QKV (strides), gaps everywhere
    add("in_place", [](PagedRun *r) { r->q = kInPlace; });
    add("in_place_padded_bad_slots", [](PagedRun *r) { r->q = kInPlace; r->padded = true; r->bad_slots = 4; r->no_cache = 2; });
    add("packed_qkv", [](PagedRun *r) { r->q = kPacked; r->rot = 64; });
    add("packed_qkv_padded_gptj", [](PagedRun *r) { r->q = kPacked; r->padded = true; r->style = GK_ROPE_GPTJ; });
    add("in_place_packed_qkv", [](PagedRun *r) { r->q = kPackedInPlace; r->rot = 64; r->no_cache = 2; r->bad_slots = 2; });
    add("in_place_packed_qkv_padded_gptj", [](PagedRun *r) { r->q = kPackedInPlace; r->padded = true; r->style = GK_ROPE_GPTJ; });
    add("interleaved_kv_cache", [](PagedRun *r) { r->interleaved = true; r->no_cache = 3; });
    add("interleaved_kv_cache_fp8_block1", [](PagedRun *r) {
        r->interleaved = true; r->fp8 = true; r->k_scale = 0.1f; r->v_scale = 0.02f; r->block_size = 1; r->q = kPackedInPlace;
    });
    add("padded_cache_block1", [](PagedRun *r) { r->padded_cache = true; r->block_size = 1; r->padded = true; });
    // slots: -1 (no cache write), out of range (flagged, the token left alone), no flag given
    add("no_cache_slots", [](PagedRun *r) { r->no_cache = 10; });
    add("bad_slots", [](PagedRun *r) { r->bad_slots = 7; r->no_cache = 3; r->block_size = 256; });
    add("bad_slots_no_flag", [](PagedRun *r) { r->bad_slots = 3; r->flag = false; });
    add("every_token_no_cache_but_one", [](PagedRun *r) { r->T = 9; r->no_cache = 8; });
    // fp8 e4m3 caches with scales (v's small scale saturates: |v| / 0.004 reaches 500 > 448)
    add("fp8_neox", [](PagedRun *r) { r->fp8 = true; r->k_scale = 0.02f; r->v_scale = 0.004f; });
    add("fp8_gptj_rot64_padded_cache", [](PagedRun *r) {
        r->fp8 = true; r->k_scale = 0.5f; r->v_scale = 1.0f; r->style = GK_ROPE_GPTJ; r->rot = 64; r->padded_cache = true;
        r->block_size = 1;
    });
    add("fp8_table_bad", [](PagedRun *r) {
        r->fp8 = true; r->k_scale = 3.0f; r->v_scale = 0.25f; r->table = true; r->max_position = 4096; r->pos_hi = 4096;
        r->bad_positions = 2; r->bad_slots = 2; r->no_cache = 2; r->block_size = 256;
    });
    add("fp8_pos64_llama31_d256", [](PagedRun *r) {
        r->fp8 = true; r->k_scale = 0.01f; r->v_scale = 0.01f; r->D = r->rot = 256; r->Hq = 4; r->Hkv = 2;
        r->pos64 = true; r->pos_lo = (int64_t)1 << 32; r->pos_hi = ((int64_t)1 << 32) + 1000000; r->theta = 500000.0f;
        r->factor = 8;
    });
    // many tokens: more (token, head) items than the grid has warps (grid-stride)
    add("many_tokens", [](PagedRun *r) { r->T = 1500; r->Hq = 32; r->Hkv = 8; r->block_size = 16; r->no_cache = 7; });
    add("many_tokens_fp8_block256", [](PagedRun *r) {
        r->T = 1100; r->Hq = 32; r->Hkv = 8; r->block_size = 256; r->fp8 = true; r->k_scale = 0.05f; r->v_scale = 0.05f;
        r->padded_cache = true;
    });
    std::vector<PagedRun> out;
    for (int dt : {GK_BF16, GK_F16})
        for (PagedRun r : v) {
            r.dt = dt;
            out.push_back(r);
        }
    return out;
}

class PagedGpu : public ::testing::TestWithParam<PagedRun> {};

TEST_P(PagedGpu, MatchesReference) { run_paged(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Runs, PagedGpu, ::testing::ValuesIn(runs()),
                         [](const ::testing::TestParamInfo<PagedRun> &i) {
                             return std::string(gk_dtype_name(i.param.dt)) + "_" + i.param.name;
                         });

// Tokens 0: nothing launched, nothing written, whatever the pointers (on the GPU host too).
TEST(PagedGpuEmpty, NoTokens)
{
    GK_REQUIRE_GPU();
    gk_rope_append_params p;
    memset(&p, 0, sizeof p);
    const gk_rope r = gk_rope_default(64, 10000.0f);
    const gk_paged_kv c = gk_paged_kv_dense(nullptr, nullptr, GK_BF16, 1, 16, 1, 64);
    GK_CUDA_OK(gk_rope_append_bf16(nullptr, nullptr, nullptr, nullptr, &p, &r, &c, 0));
    GK_CUDA_OK(gk_rope_append_f16(nullptr, nullptr, nullptr, nullptr, &p, &r, &c, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
}

// ================================================================== decode attention
//
// Each run builds a paged cache on the host and hands it to gk_paged_decode_bf16 / _f16 /
// _ex, then checks every output against paged_ref.h's reference in double.
//
// Inputs are fresh random values every run: q uniform in [-2, 2), k and v in [-1, 1) (an fp8
// cache stores value / scale; the reference reads the stored codes), rounded to their dtypes.
// The cache's blocks are dealt to the sequences in a shuffled order, so each sequence's blocks
// are scattered over the cache and out of order; every slot no sequence holds (the tail of a
// last block, the spare blocks, the gaps of a padded cache, the guard bytes past the cache) is
// NaN, and so are the gaps of a strided q: a kernel that reads a key it should not, or past D,
// turns its rows NaN, which never passes. Block table entries past a sequence's blocks point at
// those NaN blocks (or hold -1, which must not be read either: no flag). out, lse and the
// workspace are poisoned (all-ones bytes) before the launch; afterwards every out row and lse
// entry must be written, the gaps of a strided out and every guard byte still poison, q and the
// cache unchanged, and the error flag set exactly when a run plants an error.
//
// Tolerance on out: |got - ref| <= atol + rtol |ref|, as attention_gpu_test.cu chooses it: rtol
// covers the final rounding to bf16 (2^-8 relative, 1.6e-2 as elsewhere) or f16 (2e-3); atol
// covers P rounded to 16 bits before P V (each weight off by at most 2^-9 of itself in bf16,
// 2^-11 in f16 and in the fp8 path, which multiplies in fp16), so out is off by at most that much
// of max |v| (1; an fp8 value's rounding may reach 1 + 1/16): atol 4e-3 (bf16) and 1e-3 (f16 and
// fp8 into f16), about twice the bound. The logits themselves are fp32 products of exact 16-bit
// (or fp16-converted e4m3) values, off by ~1e-6 relative. lse is fp32 throughout: 1e-3 absolute
// (sums over 5000 keys and a merge of split partials) plus 1e-5 relative; 16 keys of 5000
// missing move lse by 3e-3, so a dropped tile shows in lse even where out barely moves.

enum DecodeWs {
    kWsNone, // no workspace: one block a (sequence, kv head, rows)
    kWsPlan, // gk_paged_decode_plan_for's workspace_bytes
    kWsBig   // enough for the run's forced split count (gk_paged_decode_ex)
};

struct DecodeRun {
    int dt = GK_BF16;
    bool fp8 = false;              // an e4m3 cache (else q's dtype)
    int Hq = 8, Hkv = 2, D = 128, nq = 1, bs = 16;
    std::vector<int> lens = {100}; // one per sequence (B = lens.size())
    int max_seq_len = 0;           // 0: the longest length
    int table_pad = 0;             // block table entries past ceil(max_seq_len / block_size)
    bool table_pad_invalid = false; // the entries past a sequence's blocks hold -1, not spare blocks
    float scale = 0.0f, softcap = 0.0f;
    int wl = -1;
    bool alibi = false;
    float k_scale = 0.05f, v_scale = 0.02f; // fp8
    bool padded = false;           // q and out with gaps between heads, rows and sequences
    bool padded_cache = false;     // the cache with gaps after each head, slot and block
    bool lse = true;
    DecodeWs ws = kWsNone;
    bool ex = false;               // through gk_paged_decode_ex(config, splits)
    int config = -1, splits = 0;
    bool plan_splits = false;      // ex with the plan's configuration and split count
    bool ws_written = false;       // the keys must have been split (the workspace written)
    bool flag = true;              // an error_flag given
    int bad_block = -1;            // this sequence's first block id is outside the cache
    int bad_block_id = 0;          //   the id it gets: num_blocks + this, when >= 0; else this
    int long_len = -1;             // this sequence's length is set past max_seq_len
    int neg_len = -1;              // this sequence's length is set negative
    bool host_lens = false;        // params.host_seq_lens given (the splits follow the real lengths)
    int64_t sample_rows = 0;       // (b, i, h) rows checked against the reference (0: all)
};

static std::string describe(const DecodeRun &r)
{
    std::string lens;
    for (size_t b = 0; b < r.lens.size() && b < 12; b++) lens += (b ? "," : "") + std::to_string(r.lens[b]);
    if (r.lens.size() > 12) lens += ",... (" + std::to_string(r.lens.size()) + ")";
    char s[700];
    snprintf(s, sizeof s,
             "decode %s cache=%s Hq=%d Hkv=%d D=%d nq=%d block=%d lens=%s max_seq_len=%d table_pad=%d%s scale=%g "
             "softcap=%g window=%d alibi=%d scales=%g,%g padded=%d padded_cache=%d lse=%d ws=%d ex=%d config=%d "
             "splits=%d plan_splits=%d flag=%d bad_block=%d(%d) long_len=%d neg_len=%d host_lens=%d",
             gk_dtype_name(r.dt), r.fp8 ? "e4m3" : gk_dtype_name(r.dt), r.Hq, r.Hkv, r.D, r.nq, r.bs, lens.c_str(),
             r.max_seq_len, r.table_pad, r.table_pad_invalid ? " (-1)" : "", r.scale, r.softcap, r.wl, (int)r.alibi,
             r.k_scale, r.v_scale, (int)r.padded, (int)r.padded_cache, (int)r.lse, (int)r.ws, (int)r.ex, r.config,
             r.splits, (int)r.plan_splits, (int)r.flag, r.bad_block, r.bad_block_id, r.long_len, r.neg_len,
             (int)r.host_lens);
    return s;
}

static uint64_t decode_salt(const DecodeRun &r)
{
    uint64_t h = 0xdec0de;
    for (int64_t v : {(int64_t)r.dt, (int64_t)r.fp8, (int64_t)r.Hq, (int64_t)r.Hkv, (int64_t)r.D, (int64_t)r.nq,
                      (int64_t)r.bs, (int64_t)r.wl, (int64_t)r.config, (int64_t)r.splits, (int64_t)r.padded,
                      (int64_t)r.padded_cache, (int64_t)r.alibi, (int64_t)(r.softcap * 16)})
        h = (h ^ (uint64_t)v) * 0x100000001b3ull + 0x9e37;
    for (int L : r.lens) h = (h ^ (uint64_t)L) * 0x100000001b3ull;
    return h;
}

struct DecodeResult {
    std::vector<unsigned char> out, lse; // bytes, for the determinism check
};

// Marks the D elements of every (b, i, h) row of a [B][nq][H][D] tensor with strides.
static void mark_decode_rows(std::vector<char> *cov, int B, int nq, int H, int D, int64_t bs, int64_t rs, int64_t hs)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < nq; i++)
            for (int h = 0; h < H; h++) {
                const int64_t o = b * bs + i * rs + h * hs;
                std::fill(cov->begin() + o, cov->begin() + o + D, 1);
            }
}

static bool all_poison(const HostTensor &h, size_t i)
{
    const size_t es = gk_dtype_size(h.dt);
    for (size_t k = 0; k < es; k++)
        if (h.bytes[i * es + k] != DeviceTensor::kPoison) return false;
    return true;
}

// Bytes of workspace for `splits` key splits of any configuration: fp32 partials of up to 256
// columns and their lse, each part rounded up to 256 bytes.
static size_t decode_split_ws(const DecodeRun &r, int splits)
{
    const size_t rows = (size_t)splits * r.lens.size() * r.nq * r.Hq;
    return rows * 256 * 4 + rows * 4 + 1024;
}

static void run_decode(const DecodeRun &R, DecodeResult *result = nullptr)
{
    SCOPED_TRACE(describe(R));
    GkRng rng(decode_salt(R));
    const int B = (int)R.lens.size(), Hq = R.Hq, Hkv = R.Hkv, D = R.D, nq = R.nq, bs = R.bs;
    const int dt = R.dt, cdt = R.fp8 ? (int)GK_E4M3 : dt;
    int max_len = R.max_seq_len;
    for (int L : R.lens) {
        ASSERT_GE(L, 0);
        if (R.max_seq_len == 0) max_len = std::max(max_len, L);
    }
    for (int L : R.lens) ASSERT_LE(L, max_len) << "test setup: a length past max_seq_len";
    const int64_t stride = (max_len + bs - 1) / bs + R.table_pad;

    // ---- the cache: blocks dealt to the sequences in a shuffled order, spare blocks NaN
    int used = 0;
    for (int L : R.lens) used += (L + bs - 1) / bs;
    const int spare = 2 + (int)(rng.next() % 3), nb = used + spare;
    gk_paged_kv c = gk_paged_kv_dense(nullptr, nullptr, cdt, nb, bs, Hkv, D);
    if (R.padded_cache) { // 16-byte gaps (an fp8 cache's are 16 elements); k and v laid out differently
        const int g = R.fp8 ? 16 : 8;
        c.k_head_stride = D + g;
        c.k_slot_stride = Hkv * c.k_head_stride + g;
        c.k_block_stride = bs * c.k_slot_stride + 2 * g;
        c.v_head_stride = D + 2 * g;
        c.v_slot_stride = Hkv * c.v_head_stride;
        c.v_block_stride = bs * c.v_slot_stride + g;
    }
    if (R.fp8) {
        c.k_scale = R.k_scale;
        c.v_scale = R.v_scale;
    }
    const size_t kcn = (size_t)((nb - 1) * c.k_block_stride + (bs - 1) * c.k_slot_stride + (Hkv - 1) * c.k_head_stride + D);
    const size_t vcn = (size_t)((nb - 1) * c.v_block_stride + (bs - 1) * c.v_slot_stride + (Hkv - 1) * c.v_head_stride + D);
    HostTensor hk(cdt, kcn), hv(cdt, vcn);
    std::fill(hk.bytes.begin(), hk.bytes.end(), 0xff);
    std::fill(hv.bytes.begin(), hv.bytes.end(), 0xff);
    std::vector<int> perm(nb), table((size_t)B * stride + 1, -1);
    for (int b = 0; b < nb; b++) perm[b] = b;
    for (int b = nb - 1; b > 0; b--) std::swap(perm[b], perm[rng.next() % (uint64_t)(b + 1)]);
    {
        int next = 0;
        const float ks = R.fp8 ? R.k_scale : 1.0f, vs = R.fp8 ? R.v_scale : 1.0f;
        for (int b = 0; b < B; b++) {
            const int nblk = (R.lens[b] + bs - 1) / bs;
            for (int64_t t = 0; t < stride; t++)
                table[b * stride + t] = t < nblk ? perm[next++]
                                                 : R.table_pad_invalid ? -1 : perm[used + (int)(rng.next() % spare)];
            for (int j = 0; j < R.lens[b]; j++) {
                const int64_t blk = table[b * stride + j / bs], slot = j % bs;
                for (int h = 0; h < Hkv; h++) {
                    const int64_t ko = blk * c.k_block_stride + slot * c.k_slot_stride + h * c.k_head_stride;
                    const int64_t vo = blk * c.v_block_stride + slot * c.v_slot_stride + h * c.v_head_stride;
                    for (int d = 0; d < D; d++) {
                        hk.set((size_t)(ko + d), rng.uniform(-1.0f, 1.0f) / ks);
                        hv.set((size_t)(vo + d), rng.uniform(-1.0f, 1.0f) / vs);
                    }
                }
            }
        }
    }
    std::vector<int> lens(R.lens), dev_lens(R.lens); // the reference's lengths; the device's (errors planted)
    if (R.bad_block >= 0) {
        ASSERT_GT(R.lens[R.bad_block], 0) << "test setup: the bad block's sequence needs keys";
        table[R.bad_block * stride] = R.bad_block_id >= 0 ? nb + R.bad_block_id : R.bad_block_id;
    }
    if (R.long_len >= 0) dev_lens[R.long_len] = max_len + 1 + (int)(rng.next() % 100);
    if (R.neg_len >= 0) dev_lens[R.neg_len] = -1 - (int)(rng.next() % 100);
    const bool planted = R.bad_block >= 0 || R.long_len >= 0 || R.neg_len >= 0;

    // ---- q and out: [B][nq][Hq][D], dense or with gaps (NaN in q's)
    gk_paged_decode_params p = gk_paged_decode_params_dense(B, Hq, Hkv, D, nq, nullptr, (int)stride, nullptr, max_len);
    if (R.padded) {
        p.q_head_stride = D + 8;
        p.q_row_stride = Hq * p.q_head_stride + 16;
        p.q_batch_stride = nq * p.q_row_stride + 24;
        p.out_head_stride = D + 16;
        p.out_row_stride = Hq * p.out_head_stride + 8;
        p.out_batch_stride = nq * p.out_row_stride + 40;
    }
    p.block_table_stride = stride;
    p.scale = R.scale;
    p.softcap = R.softcap;
    p.window_left = R.wl;
    const size_t qn = (size_t)((B - 1) * p.q_batch_stride + (nq - 1) * p.q_row_stride + (Hq - 1) * p.q_head_stride + D);
    const size_t on = (size_t)((B - 1) * p.out_batch_stride + (nq - 1) * p.out_row_stride + (Hq - 1) * p.out_head_stride + D);
    HostTensor hq(dt, qn);
    hq.fill_uniform(rng, -2.0f, 2.0f);
    std::vector<char> qcov(qn, 0), ocov(on, 0);
    mark_decode_rows(&qcov, B, nq, Hq, D, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
    mark_decode_rows(&ocov, B, nq, Hq, D, p.out_batch_stride, p.out_row_stride, p.out_head_stride);
    for (size_t i = 0; i < qn; i++)
        if (!qcov[i]) memset(hq.bytes.data() + 2 * i, 0xff, 2);
    std::vector<float> slopes;
    if (R.alibi) // ALiBi's geometric slopes 2^(-8 (h + 1) / Hq)
        for (int h = 0; h < Hq; h++) slopes.push_back(std::exp2(-8.0f * (h + 1) / Hq));

    // ---- device buffers (guard bytes poison: NaN past q and the cache)
    const size_t n_lse = (size_t)B * Hq * nq;
    DeviceTensor dq(dt, qn), dk(cdt, kcn), dv(cdt, vcn), dout(dt, on), dlse(GK_F32, n_lse);
    DeviceTensor dtable(GK_F32, table.size()), dlens(GK_F32, B), dalibi(GK_F32, slopes.size()), dflag(GK_F32, 1);
    ASSERT_TRUE(dq.ok() && dk.ok() && dv.ok() && dout.ok() && dlse.ok() && dtable.ok() && dlens.ok() && dalibi.ok() &&
                dflag.ok());
    for (DeviceTensor *t : {&dq, &dk, &dv, &dout, &dlse}) GK_CUDA_OK(t->poison());
    GK_CUDA_OK(dq.upload(hq));
    GK_CUDA_OK(dk.upload(hk));
    GK_CUDA_OK(dv.upload(hv));
    GK_CUDA_OK(cudaMemcpy(dtable.ptr(), table.data(), 4 * table.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemcpy(dlens.ptr(), dev_lens.data(), 4 * (size_t)B, cudaMemcpyHostToDevice));
    if (R.alibi) GK_CUDA_OK(cudaMemcpy(dalibi.ptr(), slopes.data(), 4 * slopes.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemset(dflag.ptr(), 0, 4));
    c.k_cache = dk.ptr();
    c.v_cache = dv.ptr();
    p.block_table = (const int *)dtable.ptr();
    p.seq_lens = (const int *)dlens.ptr();
    p.alibi_slopes = R.alibi ? (const float *)dalibi.ptr() : nullptr;
    p.error_flag = R.flag ? (int *)dflag.ptr() : nullptr;
    p.host_seq_lens = R.host_lens ? dev_lens.data() : nullptr;

    // ---- the plan, the workspace, the launch
    const gk_paged_decode_plan plan = gk_paged_decode_plan_for(&p, &c);
    ASSERT_GE(plan.config, 0) << "gk_paged_decode_plan_for refused the problem: " << gk_failure_reason();
    {
        const gk_paged_decode_config pc = gk_paged_decode_config_info(plan.config);
        ASSERT_NE(pc.name, nullptr);
        EXPECT_GE(pc.head_dim, D) << "the plan's configuration " << pc.name;
        EXPECT_EQ(pc.fp8, (int)R.fp8) << "the plan's configuration " << pc.name;
        EXPECT_GE(plan.splits, 1);
        EXPECT_GT(plan.split_keys, 0);
        EXPECT_EQ(plan.split_keys % pc.keys, 0) << "a split takes whole key tiles";
        EXPECT_GE((int64_t)plan.splits * plan.split_keys, (int64_t)max_len) << "the splits cover max_seq_len";
        EXPECT_LT((int64_t)(plan.splits - 1) * plan.split_keys, std::max(max_len, 1)) << "no split starts past max_seq_len";
        EXPECT_EQ(plan.workspace_bytes == 0, plan.splits == 1) << "workspace bytes " << plan.workspace_bytes;
    }
    size_t ws_bytes = 0;
    if (R.ws == kWsPlan) ws_bytes = plan.workspace_bytes;
    if (R.ws == kWsBig) ws_bytes = decode_split_ws(R, std::max(R.splits, 1));
    DeviceTensor dws(GK_F32, (ws_bytes + 3) / 4);
    ASSERT_TRUE(dws.ok());
    GK_CUDA_OK(dws.poison());
    void *ws = R.ws == kWsNone ? nullptr : dws.ptr(); // cudaMalloc'ed: 256-byte aligned
    float *lse = R.lse ? (float *)dlse.ptr() : nullptr;
    if (R.plan_splits)
        GK_CUDA_OK(gk_paged_decode_ex(plan.config, plan.splits, dt, dout.ptr(), lse, dq.ptr(), &c, &p, ws, ws_bytes, 0));
    else if (R.ex)
        GK_CUDA_OK(gk_paged_decode_ex(R.config, R.splits, dt, dout.ptr(), lse, dq.ptr(), &c, &p, ws, ws_bytes, 0));
    else if (dt == GK_BF16)
        GK_CUDA_OK(gk_paged_decode_bf16((gk_bf16 *)dout.ptr(), lse, (const gk_bf16 *)dq.ptr(), &c, &p, ws, ws_bytes, 0));
    else
        GK_CUDA_OK(gk_paged_decode_f16((gk_f16 *)dout.ptr(), lse, (const gk_f16 *)dq.ptr(), &c, &p, ws, ws_bytes, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());

    // ---- what the launch left
    HostTensor got(dt, on), got_lse(GK_F32, n_lse);
    GK_CUDA_OK(dout.download(&got));
    GK_CUDA_OK(dlse.download(&got_lse));
    int flag = -1;
    GK_CUDA_OK(cudaMemcpy(&flag, dflag.ptr(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(flag, R.flag && planted ? 1 : 0) << "the error flag";
    EXPECT_EQ(dout.guard_damage(), 0u) << "bytes written outside out";
    EXPECT_EQ(dlse.guard_damage(), 0u) << "bytes written outside lse";
    EXPECT_EQ(dws.guard_damage(), 0u) << "bytes written outside the workspace";
    if (R.ws_written) {
        HostTensor w(GK_F32, dws.n);
        GK_CUDA_OK(dws.download(&w));
        EXPECT_LT(gk_test_count_poison(w), w.n) << "the workspace was never written (the keys were not split)";
    }
    {
        HostTensor back_q(dt, qn), back_k(cdt, kcn), back_v(cdt, vcn);
        GK_CUDA_OK(dq.download(&back_q));
        GK_CUDA_OK(dk.download(&back_k));
        GK_CUDA_OK(dv.download(&back_v));
        EXPECT_TRUE(back_q.bytes == hq.bytes) << "q changed";
        EXPECT_TRUE(back_k.bytes == hk.bytes) << "the k cache changed";
        EXPECT_TRUE(back_v.bytes == hv.bytes) << "the v cache changed";
        EXPECT_EQ(dq.guard_damage() + dk.guard_damage() + dv.guard_damage(), 0u) << "bytes written past an input";
    }
    {
        // every row written (a sequence given a bad length may hold anything: even a NaN of the
        // poison's bits), the gaps never
        int64_t unwritten = 0, gap_written = 0, lse_unwritten = 0;
        for (size_t i = 0; i < on; i++)
            if (!ocov[i]) gap_written += !all_poison(got, i);
        for (int b = 0; b < B; b++) {
            if (b == R.long_len || b == R.neg_len) continue;
            for (int i = 0; i < nq; i++)
                for (int h = 0; h < Hq; h++) {
                    const int64_t o = gk_ref_paged_out_off(p, b, i, h);
                    for (int d = 0; d < D; d++) unwritten += all_poison(got, (size_t)(o + d));
                    lse_unwritten += all_poison(got_lse, (size_t)gk_ref_paged_lse_off(p, b, i, h));
                }
        }
        EXPECT_EQ(unwritten, 0) << "out elements never written";
        EXPECT_EQ(gap_written, 0) << "out's gaps (between heads, rows, sequences) written";
        if (R.lse) EXPECT_EQ(lse_unwritten, 0) << "lse entries never written";
        else EXPECT_EQ(gk_test_count_poison(got_lse), n_lse) << "lse written though NULL was passed";
    }
    if (result) {
        result->out = got.bytes;
        result->lse = got_lse.bytes;
    }

    // ---- rows (b, i, h) against the reference; a sequence given a bad length is left out (what it
    // holds is not defined beyond the flag), one with a bad block id reads that block's keys as 0
    struct Row {
        int b, i, h;
    };
    std::vector<Row> rows;
    for (int b = 0; b < B; b++) {
        if (b == R.long_len || b == R.neg_len) continue;
        for (int i = 0; i < nq; i++)
            for (int h = 0; h < Hq; h++) rows.push_back({b, i, h});
    }
    if (R.sample_rows > 0 && (int64_t)rows.size() > R.sample_rows) {
        std::vector<Row> pick = {rows.front(), rows.back()};
        for (int64_t n = 2; n < R.sample_rows; n++) pick.push_back(rows[rng.next() % rows.size()]);
        rows.swap(pick);
    }
    GkPagedDecodeRefIn in;
    in.p = p;
    in.c = c;
    in.q_dtype = dt;
    in.q = hq.bytes.data();
    in.k_cache = hk.bytes.data();
    in.v_cache = hv.bytes.data();
    in.block_table = table.data();
    in.seq_lens = lens.data();
    in.alibi = R.alibi ? slopes.data() : nullptr;
    const GkTol tol = dt == GK_BF16 ? GkTol{4e-3, 1.6e-2} : GkTol{1e-3, 2e-3};
    const GkTol lse_tol = {1e-3, 1e-5};
    std::atomic<int64_t> bad(0), bad_lse(0), nan_rows(0), flagged_rows(0);
    std::mutex mu;
    std::vector<std::string> first;
    const size_t cost = (size_t)std::max(max_len, 1) * D;
    gk_test_parallel_for(rows.size() * cost, [&](size_t lo, size_t hi) {
        const size_t r0 = (lo + cost - 1) / cost, r1 = (hi + cost - 1) / cost;
        std::vector<double> want(D);
        int64_t nbad = 0, nbad_lse = 0, nnan = 0, nflag = 0;
        for (size_t n = r0; n < r1; n++) {
            const Row &w = rows[n];
            double want_lse = 0;
            nflag += gk_ref_paged_decode_row(in, w.b, w.i, w.h, want.data(), &want_lse);
            nnan += std::isnan(want_lse);
            const int64_t o = gk_ref_paged_out_off(p, w.b, w.i, w.h);
            for (int d = 0; d < D; d++) {
                const double g = got.get(o + d);
                if (gk_test_close(g, want[d], tol)) continue;
                nbad++;
                std::lock_guard<std::mutex> lock(mu);
                if (first.size() < 10) {
                    char line[200];
                    snprintf(line, sizeof line, "  b %d query %d head %d d %d: out %.9g want %.9g (|diff| %.3g)", w.b,
                             w.i, w.h, d, g, want[d], std::fabs(g - want[d]));
                    first.push_back(line);
                }
            }
            if (!R.lse) continue;
            const double gl = got_lse.get(gk_ref_paged_lse_off(p, w.b, w.i, w.h));
            if (gk_test_close(gl, want_lse, lse_tol)) continue;
            nbad_lse++;
            std::lock_guard<std::mutex> lock(mu);
            if (first.size() < 10) {
                char line[200];
                snprintf(line, sizeof line, "  b %d query %d head %d: lse %.9g want %.9g", w.b, w.i, w.h, gl, want_lse);
                first.push_back(line);
            }
        }
        bad += nbad;
        bad_lse += nbad_lse;
        nan_rows += nnan;
        flagged_rows += nflag;
    });
    for (const std::string &line : first) printf("%s\n", line.c_str());
    EXPECT_EQ(bad.load(), 0) << "out values outside tolerance, of " << rows.size() * D << " checked";
    EXPECT_EQ(bad_lse.load(), 0) << "lse values outside tolerance, of " << rows.size() << " checked";
    EXPECT_EQ(nan_rows.load(), 0) << "the reference has NaN rows (test setup: it read a slot no key holds)";
    if (R.bad_block >= 0 && R.sample_rows == 0) EXPECT_GT(flagged_rows.load(), 0) << "no row sees the bad block (test setup)";
}

static DecodeRun decode_shape(int dt, int Hq, int Hkv, int D, int nq, int bs, std::vector<int> lens)
{
    DecodeRun r;
    r.dt = dt;
    r.Hq = Hq;
    r.Hkv = Hkv;
    r.D = D;
    r.nq = nq;
    r.bs = bs;
    r.lens = lens;
    return r;
}

static const int kDecodeDtypes[2] = {GK_BF16, GK_F16};

#define GK_DECODE_RUN(r)           \
    do {                           \
        run_decode(r);             \
        if (HasFailure()) return;  \
    } while (0)

// ------------------------------------------------------------------ decode tests

// Lengths around a block (15, 16, 17), one key, none, and long (5000: 79 key tiles of 64), mixed
// in one batch; one query and four (the first queries of a 1-key sequence see nothing).
TEST(PagedDecodeGpu, Lengths)
{
    GK_REQUIRE_GPU();
    for (int dt : kDecodeDtypes)
        for (int nq : {1, 4}) {
            DecodeRun r = decode_shape(dt, 8, 2, 128, nq, 16, {15, 1, 16, 0, 17, 5000, 33});
            GK_DECODE_RUN(r);
            r.ws = kWsPlan; // the dispatcher's splits, from max_seq_len, then from the host lengths
            GK_DECODE_RUN(r);
            r.host_lens = true;
            GK_DECODE_RUN(r);
        }
    // every length alone
    int n = 0;
    for (int L : {1, 15, 16, 17, 5000}) {
        DecodeRun r = decode_shape(kDecodeDtypes[n++ % 2], 8, 2, 64, 1, 16, {L});
        GK_DECODE_RUN(r);
    }
}

// Block sizes 1 (every key its own block: 5000 scattered blocks), 16 and 256 (the whole of a short
// sequence in one block, 5000 keys over 20), with mixed lengths.
TEST(PagedDecodeGpu, BlockSizes)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int bs : {1, 16, 256})
        for (int dt : kDecodeDtypes) {
            DecodeRun r = decode_shape(dt, 8, 2, n % 2 ? 64 : 128, n % 3 == 0 ? 4 : 1, bs, {1, 17, 300, 2, 0, 255, 257});
            n++;
            GK_DECODE_RUN(r);
        }
    for (int bs : {1, 256}) {
        DecodeRun r = decode_shape(bs == 1 ? GK_BF16 : GK_F16, 4, 1, 128, 4, bs, {5000, 16});
        GK_DECODE_RUN(r);
    }
}

// 1, 4 and 16 query tokens a sequence (speculative decoding: causal among themselves), lengths
// under, at and past the query count; 16 queries of a 16-head group make 256 rows a kv head (16
// blocks of rows).
TEST(PagedDecodeGpu, Queries)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDecodeDtypes)
        for (int nq : {1, 4, 16}) {
            DecodeRun r = decode_shape(dt, 8, 2, 128, nq, 16, {2, 16, 17, 1000, 0, 3});
            r.wl = n++ == 3 ? 40 : -1;
            GK_DECODE_RUN(r);
        }
    DecodeRun r = decode_shape(GK_BF16, 16, 1, 128, 16, 16, {700, 16, 5});
    GK_DECODE_RUN(r);
}

// GQA groups of 1 (MHA), 4, 8 and 16 (MQA-like) query heads a kv head, with 1 and 4 queries:
// 1 to 64 rows a kv head.
TEST(PagedDecodeGpu, GroupedQueryHeads)
{
    GK_REQUIRE_GPU();
    struct {
        int hq, hkv;
    } const groups[] = {{4, 4}, {16, 4}, {32, 4}, {16, 1}};
    int n = 0;
    for (const auto &g : groups)
        for (int nq : {1, 4}) {
            DecodeRun r = decode_shape(kDecodeDtypes[n % 2], g.hq, g.hkv, n % 3 == 2 ? 64 : 128, nq, 16, {300, 17, 1});
            n++;
            GK_DECODE_RUN(r);
        }
}

// Head dims 64, 128 and 256 (the built ones) and 8, 80, 96 and 200, which run zero-padded on the
// next larger configuration: with gaps in q (NaN between heads) and a padded cache (NaN after
// each head's D values), a kernel that reads past D shows.
TEST(PagedDecodeGpu, HeadDims)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int d : {64, 128, 256, 8, 80, 96, 200})
        for (int dt : kDecodeDtypes) {
            DecodeRun r = decode_shape(dt, 8, 2, d, n % 3 == 1 ? 4 : 1, 16, {200, 17, 64});
            r.padded = n % 2 == 0;
            r.padded_cache = d % 64 != 0 || n % 4 == 1;
            n++;
            GK_DECODE_RUN(r);
        }
}

// An fp8 e4m3 cache (value / scale stored, scales folded into the logits and the output): D 64,
// 128 (and 80 zero-padded), 1 and 4 queries, GQA, masks, a split run and a padded cache.
TEST(PagedDecodeGpu, Fp8Cache)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDecodeDtypes)
        for (int d : {64, 128, 80})
            for (int nq : {1, 4}) {
                DecodeRun r = decode_shape(dt, 8, 2, d, nq, n % 3 == 0 ? 1 : 16, {1000, 17, 0, 5});
                r.fp8 = true;
                r.k_scale = n % 2 ? 0.05f : 0.25f;
                r.v_scale = n % 2 ? 0.02f : 0.125f;
                r.padded_cache = n % 4 == 3;
                if (n % 5 == 1) r.softcap = 20.0f;
                if (n % 5 == 2) r.alibi = true;
                if (n % 5 == 3) r.wl = 100;
                if (n % 3 == 1) {
                    r.ex = true;
                    r.splits = 5;
                    r.ws = kWsBig;
                    r.ws_written = true;
                }
                n++;
                GK_DECODE_RUN(r);
            }
}

// Softcap, sliding windows (the diagonal alone, 7, 100, wider than the sequence), ALiBi, custom
// scales (a peaky softmax at 0.3), and their combinations, with 1 and 4 queries.
TEST(PagedDecodeGpu, Masks)
{
    GK_REQUIRE_GPU();
    struct {
        float scale, softcap;
        int wl;
        bool alibi;
    } const cases[] = {{0.0f, 30.0f, -1, false}, {0.0f, 0.0f, 0, false}, {0.0f, 0.0f, 7, false},
                       {0.0f, 0.0f, 100, false}, {0.0f, 0.0f, 6000, false}, {0.0f, 0.0f, -1, true},
                       {0.3f, 0.0f, -1, false},  {0.3f, 5.0f, 50, true},   {1.0f, 2.0f, -1, false},
                       {0.0f, 50.0f, 1000, true}};
    int n = 0;
    for (const auto &m : cases)
        for (int nq : {1, 4}) {
            DecodeRun r = decode_shape(kDecodeDtypes[n % 2], 8, 2, n % 3 == 2 ? 64 : 128, nq, 16, {5000, 17, 1, 200});
            r.scale = m.scale;
            r.softcap = m.softcap;
            r.wl = m.wl;
            r.alibi = m.alibi;
            if (n % 4 == 1) r.ws = kWsPlan;
            r.host_lens = n % 8 == 5;
            n++;
            GK_DECODE_RUN(r);
        }
}

// Layouts: q and out with gaps (NaN in q's, out's must stay poison), a padded cache, block table
// rows wider than needed, entries past a sequence's blocks at -1 (never read: no flag), lse NULL.
TEST(PagedDecodeGpu, Layouts)
{
    GK_REQUIRE_GPU();
    for (int dt : kDecodeDtypes)
        for (int v = 0; v < 5; v++) {
            DecodeRun r = decode_shape(dt, 8, 2, v == 4 ? 96 : 128, v % 2 ? 4 : 1, v == 3 ? 1 : 16, {300, 0, 17, 1000});
            r.padded = v == 0 || v == 2 || v == 4;
            r.padded_cache = v == 1 || v == 2;
            r.table_pad = v == 3 ? 5 : v == 2 ? 1 : 0;
            r.table_pad_invalid = v >= 2;
            r.lse = v != 1;
            r.max_seq_len = v == 3 ? 1500 : 0; // a bound looser than the longest length
            if (v == 2) r.ws = kWsPlan;
            GK_DECODE_RUN(r);
        }
}

// The dispatcher with gk_paged_decode_plan_for's workspace on one long sequence (B Hkv blocks
// alone leave most SMs idle): it splits the keys, and the workspace gets written; the same
// without a workspace runs one block a (sequence, kv head, rows).
TEST(PagedDecodeGpu, DispatcherSplits)
{
    GK_REQUIRE_GPU();
    for (int dt : kDecodeDtypes)
        for (int nq : {1, 4}) {
            DecodeRun r = decode_shape(dt, 8, 1, 128, nq, 16, {5000});
            r.ws = kWsPlan;
            r.ws_written = true;
            GK_DECODE_RUN(r);
            r.ws = kWsNone;
            r.ws_written = false;
            GK_DECODE_RUN(r);
        }
    // the plan's configuration and split count through gk_paged_decode_ex
    DecodeRun r = decode_shape(GK_F16, 16, 2, 64, 4, 16, {5000, 3000, 1});
    r.plan_splits = true;
    r.ws = kWsPlan;
    r.alibi = true;
    GK_DECODE_RUN(r);
    r = decode_shape(GK_BF16, 8, 2, 128, 1, 16, {5000});
    r.fp8 = true;
    r.plan_splits = true;
    r.ws = kWsPlan;
    GK_DECODE_RUN(r);
}

// Forced split counts through gk_paged_decode_ex (1, 2, 7, and the plan's), with a workspace large
// enough for them: long sequences (the workspace written), short ones (splits past the key tiles:
// fewer splits, or splits without keys), mixed lengths with masks and GQA. Any split count gives
// the reference's result within the tolerance.
TEST(PagedDecodeGpu, ForcedSplits)
{
    GK_REQUIRE_GPU();
    for (int splits : {1, 2, 7, -1}) // -1: the plan's configuration and split count
        for (int v = 0; v < 4; v++) {
            DecodeRun r;
            switch (v) {
            case 0: r = decode_shape(GK_BF16, 8, 2, 128, 1, 16, {5000}); break;
            case 1: r = decode_shape(GK_F16, 8, 2, 64, 4, 16, {15, 1, 0}); break;
            case 2:
                r = decode_shape(GK_BF16, 32, 4, 128, 4, 16, {5000, 17, 600, 0});
                r.wl = 300;
                r.alibi = true;
                break;
            default:
                r = decode_shape(GK_F16, 16, 2, 256, 1, 256, {2000, 129});
                r.softcap = 30.0f;
                break;
            }
            if (splits < 0) {
                r.plan_splits = true;
                r.ws = kWsPlan;
            } else {
                r.ex = true;
                r.splits = splits;
                r.ws = kWsBig;
                r.ws_written = splits > 1 && v != 1; // v 1: one key tile, so one split
            }
            GK_DECODE_RUN(r);
        }
}

// Every configuration once through gk_paged_decode_ex, on the D it is built for (an fp8 one with
// an e4m3 cache), its keys split over 3 blocks for every other one.
TEST(PagedDecodeGpu, EveryConfig)
{
    GK_REQUIRE_GPU();
    const int n = gk_paged_decode_config_count();
    ASSERT_GT(n, 0);
    for (int cfg = 0; cfg < n; cfg++) {
        const gk_paged_decode_config info = gk_paged_decode_config_info(cfg);
        ASSERT_NE(info.name, nullptr) << cfg;
        SCOPED_TRACE(info.name);
        DecodeRun r = decode_shape(kDecodeDtypes[cfg % 2], 8, 2, info.head_dim, cfg % 3 == 1 ? 4 : 1, 16, {1000, 17, 0});
        r.fp8 = info.fp8 != 0;
        r.ex = true;
        r.config = cfg;
        if (cfg % 2) {
            r.splits = 3;
            r.ws = kWsBig;
            r.ws_written = true;
        }
        GK_DECODE_RUN(r);
    }
}

// Same inputs, same bits: two runs of each (one block a row range, the dispatcher's splits, 7
// forced splits, an fp8 cache) compared byte for byte.
TEST(PagedDecodeGpu, Deterministic)
{
    GK_REQUIRE_GPU();
    for (int v = 0; v < 4; v++) {
        DecodeRun r = decode_shape(v % 2 ? GK_F16 : GK_BF16, 32, 4, 128, 4, 16, {5000, 17, 1200});
        r.alibi = v == 1;
        r.fp8 = v == 3;
        if (v == 1) r.ws = kWsPlan;
        if (v >= 2) {
            r.ex = true;
            r.splits = 7;
            r.ws = kWsBig;
            r.ws_written = true;
        }
        r.sample_rows = 64;
        DecodeResult a, b;
        run_decode(r, &a);
        if (HasFailure()) return;
        run_decode(r, &b);
        if (HasFailure()) return;
        EXPECT_TRUE(a.out == b.out) << describe(r) << ": out differs between two runs";
        EXPECT_TRUE(a.lse == b.lse) << describe(r) << ": lse differs between two runs";
    }
}

// The device error flag: a block id outside the cache (past it, and -1) sets it (those keys read
// as 0, the other sequences untouched); so does a length past max_seq_len or a negative one (the
// other sequences still right). Without an error_flag the same runs just complete.
TEST(PagedDecodeGpu, ErrorFlag)
{
    GK_REQUIRE_GPU();
    int n = 0;
    for (int dt : kDecodeDtypes)
        for (int v = 0; v < 5; v++) {
            DecodeRun r = decode_shape(dt, 8, 2, 128, v == 2 ? 4 : 1, 16, {300, 1000, 17, 40});
            switch (v) {
            case 0: r.bad_block = 1; r.bad_block_id = 3; break;     // num_blocks + 3
            case 1: r.bad_block = 2; r.bad_block_id = -1; break;    // -1
            case 2: r.long_len = 0; r.max_seq_len = 1000; break;    // the table exactly ceil(1000 / 16) wide
            case 3: r.neg_len = 3; break;
            default: r.bad_block = 0; r.bad_block_id = 0; r.flag = false; break; // num_blocks, no flag
            }
            if (n++ % 3 == 1) {
                r.ex = true;
                r.splits = 4;
                r.ws = kWsBig;
            }
            GK_DECODE_RUN(r);
        }
    // an fp8 cache with a bad block
    DecodeRun r = decode_shape(GK_BF16, 8, 2, 64, 1, 16, {300, 1000});
    r.fp8 = true;
    r.bad_block = 1;
    r.bad_block_id = 1 << 20;
    GK_DECODE_RUN(r);
}

// Nothing to do: batch 0 succeeds without looking at any pointer; sequences all of length 0 give
// out 0 and lse -inf, with and without a workspace.
TEST(PagedDecodeGpu, Empty)
{
    GK_REQUIRE_GPU();
    gk_paged_decode_params p = gk_paged_decode_params_dense(0, 8, 2, 128, 1, nullptr, 4, nullptr, 64);
    const gk_paged_kv c = gk_paged_kv_dense(nullptr, nullptr, GK_BF16, 1, 16, 2, 128);
    GK_CUDA_OK(gk_paged_decode_bf16(nullptr, nullptr, nullptr, &c, &p, nullptr, 0, 0));
    GK_CUDA_OK(gk_paged_decode_f16(nullptr, nullptr, nullptr, &c, &p, nullptr, 0, 0));
    GK_CUDA_OK(gk_paged_decode_ex(-1, 3, GK_BF16, nullptr, nullptr, nullptr, &c, &p, nullptr, 0, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    for (int dt : kDecodeDtypes)
        for (int ws : {0, 1}) {
            DecodeRun r = decode_shape(dt, 8, 2, 128, ws ? 4 : 1, 16, {0, 0, 0});
            r.max_seq_len = ws ? 100 : 0;
            r.ws = ws ? kWsPlan : kWsNone;
            GK_DECODE_RUN(r);
        }
}
