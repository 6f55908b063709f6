// GPU tests of gk_paged.cuh's RoPE + paged cache append against the CPU reference in double
// (paged_ref.h). Skipped without a GPU.
//
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
#define GK_IMPLEMENTATION
#include "gk/gk_paged.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/paged_ref.h"

#include <algorithm>
#include <memory>
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
