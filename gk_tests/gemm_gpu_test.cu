// GPU tests of gk_gemm.cuh against a CPU reference in double. Skipped without a GPU.
//
// Inputs are fresh random values every run (uniform in [-1, 1), rounded to the input dtype; the
// reference uses the rounded values). The padding between operand rows, and the guard bytes past
// each operand, hold NaN: a kernel that reads past a row or past the end (a tail not zero-filled)
// turns its outputs into NaN, which never passes. D is poisoned before each launch and checked
// fully written, its padding columns and guard bytes untouched.
//
// Tolerance: |got - ref| <= atol + rtol |ref| (gk_test_tol of D's dtype: the final rounding) plus
// the fp32 accumulation error, eps_acc |alpha| S with S = sum_k |a_k b_k| (and 2^-22 of the other
// epilogue terms), times 1.25 for the steepest slope of the activations. For inputs of random sign
// S ~ K / 4 ~ 0.75 sqrt(K) times the result's typical magnitude sqrt(K) / 3: the bound grows with
// sqrt(K) relative to the values. eps_acc is 2^-18 for the tensor-core GEMM (its adder may
// truncate) and 2^-20 for the fp32 ladder: at K = 4096 that is about 4e-3 and 1e-3, while one
// missing K value already errs by |a b| ~ 0.25 and one missing 32-deep K tile by ~2.
//
// Shapes of 2^24 outputs check every output for being written, the reference on sampled rows.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
#include "gk/gk_sgemm.cuh"
#include "gk_tests/gk_test.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

// ------------------------------------------------------------------ reference

static double ref_act(int act, double v)
{
    switch (act) {
    case GK_ACT_RELU: return v > 0 ? v : 0.0;
    case GK_ACT_GELU: return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case GK_ACT_SILU: return v / (1.0 + std::exp(-v));
    default: return v;
    }
}

static const char *act_name(int act)
{
    static const char *const names[] = {"none", "relu", "gelu", "silu"};
    return act >= 0 && act < 4 ? names[act] : "?";
}

typedef std::function<float(int64_t, int64_t)> MatFn;

struct RefSpec {
    int64_t m = 0, n = 0, k = 0;
    MatFn a;                  // op(A)(row, kk)
    MatFn b;                  // op(B)(kk, col)
    MatFn c;                  // C(row, col); read only when beta != 0
    const HostTensor *bias = nullptr;
    double alpha = 1, beta = 0;
    int act = GK_ACT_NONE;
    double eps_acc = 0x1p-18;
    GkTol tol{0, 0};
};

// Rows to check against the reference: all of them, or `sample` spread over the matrix (a random
// row in each of sample - 2 equal bands, plus the first and the last).
static std::vector<int64_t> pick_rows(int64_t m, int64_t sample, GkRng &rng)
{
    std::vector<int64_t> rows;
    if (sample <= 0 || sample >= m) {
        for (int64_t r = 0; r < m; r++) rows.push_back(r);
        return rows;
    }
    rows.push_back(0);
    rows.push_back(m - 1);
    const int64_t bands = sample - 2, width = m / bands;
    for (int64_t i = 0; i < bands; i++) rows.push_back(i * width + (int64_t)(rng.next() % (uint64_t)width));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

// Compares D (row stride ldd) on the given rows with the reference; returns the mismatches and
// prints the first few.
static int64_t compare_rows(const RefSpec &s, const std::vector<int64_t> &rows, const HostTensor &d, int64_t ldd)
{
    const int64_t n = s.n, k = s.k, nr = (int64_t)rows.size();
    std::vector<float> bt((size_t)(n * k)), at((size_t)(nr * k));
    gk_test_parallel_items(n, k, [&](size_t j0, size_t j1) {
        for (size_t j = j0; j < j1; j++)
            for (int64_t kk = 0; kk < k; kk++) bt[j * k + kk] = s.b(kk, j);
    });
    gk_test_parallel_items(nr, k, [&](size_t i0, size_t i1) {
        for (size_t i = i0; i < i1; i++)
            for (int64_t kk = 0; kk < k; kk++) at[i * k + kk] = s.a(rows[i], kk);
    });
    std::atomic<int64_t> bad(0);
    std::mutex mu;
    std::vector<std::string> first;
    gk_test_parallel_items(nr * n, k, [&](size_t e0, size_t e1) {
        int64_t local = 0;
        for (size_t e = e0; e < e1; e++) {
            const int64_t i = e / n, j = e % n, r = rows[i];
            const float *x = &at[i * k], *y = &bt[j * k];
            double dot = 0, sabs = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double p = (double)x[kk] * (double)y[kk];
                dot += p;
                sabs += std::fabs(p);
            }
            const double cv = s.beta != 0 ? s.beta * (double)s.c(r, j) : 0.0;
            const double bv = s.bias ? s.bias->get(j) : 0.0;
            const double pre = s.alpha * dot + cv + bv;
            const double ref = ref_act(s.act, pre);
            const double err_pre = s.eps_acc * std::fabs(s.alpha) * sabs +
                                   0x1p-22 * (std::fabs(s.alpha * dot) + std::fabs(cv) + std::fabs(bv));
            const double allowed = s.tol.atol + s.tol.rtol * std::fabs(ref) + 1.25 * err_pre;
            const double got = d.get(r * ldd + j);
            if (!(std::fabs(got - ref) <= allowed)) { // NaN fails
                local++;
                std::lock_guard<std::mutex> lock(mu);
                if (first.size() < 8) {
                    char line[200];
                    snprintf(line, sizeof line, "  row %lld col %lld: got %.9g want %.9g (|diff| %.3g, allowed %.3g)",
                             (long long)r, (long long)j, got, ref, std::fabs(got - ref), allowed);
                    first.push_back(line);
                }
            }
        }
        bad += local;
    });
    for (const std::string &line : first) printf("%s\n", line.c_str());
    if (bad) printf("  %lld of %lld checked outputs outside tolerance\n", (long long)bad.load(), (long long)(nr * n));
    return bad;
}

// ------------------------------------------------------------------ one tensor-core GEMM

struct MmaRun : GkEpilogue {
    int in_dt = GK_BF16, d_dt = GK_BF16;
    int64_t m = 1, n = 1, k = 1;
    int ta = 0, tb = 0;
    int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0; // 0: the row itself
    int a_off = 0, b_off = 0;                   // pointer offsets in elements (1: only 2-byte aligned)
    int config = -1, splits = 0; // other than -1, 0: through gk_gemm_ex
    // The workspace handed over (none when it comes to 0 bytes): gk_gemm_workspace_bytes (ws_plan),
    // the partials of ws_splits splits plus the plan's repacked operands, and ws_adjust more.
    bool ws_plan = false;
    int ws_splits = 0;
    bool ws_fixup = false; // + the partial tiles and counters of splits summed in the kernel (config, splits)
    int64_t ws_adjust = 0;
    int ws_expect = -1;      // 1: the workspace must be written, 0: it must stay untouched
    int64_t sample_rows = 0; // rows checked against the reference (0: all)
    bool poison_smem = false; // every SM's shared memory all NaN right before the GEMM launch
};

// Fills the block's whole dynamic shared memory with NaN (all-ones bytes). Shared memory is not
// cleared between kernels: a block of the next kernel on the SM finds these bytes.
static __global__ void poison_shared_memory(int bytes)
{
    extern __shared__ unsigned smem_words[];
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) smem_words[i] = 0xffffffffu;
}

// Launches poison_shared_memory on every SM (two blocks of the largest opt-in size an SM).
static cudaError_t poison_every_sm()
{
    int dev, sms, bytes;
    GK_TRY(cudaGetDevice(&dev));
    GK_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GK_TRY(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    GK_TRY(cudaFuncSetAttribute(poison_shared_memory, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    poison_shared_memory<<<2 * sms, 1024, bytes>>>(bytes);
    return cudaGetLastError();
}

// A run of the given dtypes, shape and layout (trans_a = layout / 2, trans_b = layout % 2).
static MmaRun mma_run(int in_dt, int d_dt, int64_t m, int64_t n, int64_t k, int layout)
{
    MmaRun p;
    p.in_dt = in_dt;
    p.d_dt = d_dt;
    p.m = m;
    p.n = n;
    p.k = k;
    p.ta = layout >> 1;
    p.tb = layout & 1;
    return p;
}

static std::string describe(const MmaRun &p)
{
    char s[400];
    snprintf(s, sizeof s,
             "%s -> %s %s%s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld ldd=%lld a_off=%d b_off=%d alpha=%g "
             "beta=%g c=%s bias=%d act=%s config=%d splits=%d ws_plan=%d ws_splits=%d ws_fixup=%d ws_adjust=%lld",
             gk_dtype_name(p.in_dt), gk_dtype_name(p.d_dt), p.ta ? "T" : "N", p.tb ? "T" : "N", (long long)p.m,
             (long long)p.n, (long long)p.k, (long long)p.lda, (long long)p.ldb, (long long)p.ldc, (long long)p.ldd,
             p.a_off, p.b_off, p.alpha, p.beta,
             p.c_mode == kCNull ? "NULL" : p.c_mode == kCNaN ? "NaN" : p.c_mode == kCValues ? "values" : "D (in place)",
             p.bias, act_name(p.act), p.config, p.splits, p.ws_plan, p.ws_splits, p.ws_fixup, (long long)p.ws_adjust);
    return s;
}

static uint64_t run_salt(const MmaRun &p)
{
    uint64_t h = 0x51ed27;
    for (int64_t v : {(int64_t)p.in_dt, (int64_t)p.d_dt, p.m, p.n, p.k, (int64_t)p.ta, (int64_t)p.tb, p.lda, p.ldb,
                      p.ldc, p.ldd, (int64_t)p.c_mode, (int64_t)p.act, (int64_t)p.config, (int64_t)p.splits})
        h = (h ^ (uint64_t)v) * 0x100000001b3ull + 0x9e37;
    return h;
}

// Runs one GEMM and checks it; D's bytes go to *d_bytes when asked (determinism checks).
static void run_mma(const MmaRun &p, std::vector<unsigned char> *d_bytes = nullptr)
{
    SCOPED_TRACE(describe(p));
    const int64_t m = p.m, n = p.n, k = p.k;
    const int64_t rows_a = p.ta ? k : m, cols_a = p.ta ? m : k, rows_b = p.tb ? n : k, cols_b = p.tb ? k : n;
    const int64_t lda = p.lda ? p.lda : cols_a, ldb = p.ldb ? p.ldb : cols_b;
    const int64_t ldd = p.ldd ? p.ldd : n, ldc = p.c_mode == kCInPlace ? ldd : p.ldc ? p.ldc : n;
    const bool has_c = p.c_mode == kCValues || p.c_mode == kCInPlace;
    GkRng rng(run_salt(p));
    const gk_gemm_plan plan = gk_gemm_plan_for(m, n, k, p.ta, lda, p.tb, ldb);
    int64_t ws_bytes = p.ws_adjust + (p.ws_plan ? (int64_t)plan.workspace_bytes : 0);
    if (p.ws_splits > 1)
        ws_bytes += gk_round_up((int64_t)p.ws_splits * m * n * 4, 256) + plan.pack_a_bytes + plan.pack_b_bytes;
    if (p.ws_fixup) {
        const gk_gemm_config f = gk_gemm_config_info(p.config);
        ws_bytes += gk_round_up(gk_ceil_div(m, f.bm) * gk_ceil_div(n, f.bn) * ((int64_t)p.splits * f.bm * f.bn * 4 + 8), 256) +
                    plan.pack_a_bytes + plan.pack_b_bytes;
    }
    if (ws_bytes < 0) ws_bytes = 0;

    HostTensor ha(p.in_dt, (rows_a - 1) * lda + cols_a), hb(p.in_dt, (rows_b - 1) * ldb + cols_b), hbias(GK_F32, n);
    HostTensor hc(p.d_dt, has_c ? (m - 1) * ldc + n : 0);
    gk_test_fill_strided(&ha, rows_a, cols_a, lda, rng);
    gk_test_fill_strided(&hb, rows_b, cols_b, ldb, rng);
    hbias.fill_uniform(rng, -1.0f, 1.0f);
    if (has_c) gk_test_fill_strided(&hc, m, n, ldc, rng);

    DeviceTensor da(p.in_dt, ha.n, p.a_off), db(p.in_dt, hb.n, p.b_off), dbias(GK_F32, n);
    DeviceTensor dc(p.d_dt, p.c_mode == kCValues || p.c_mode == kCNaN ? (m - 1) * ldc + n : 0);
    DeviceTensor dd(p.d_dt, (m - 1) * ldd + n), dws(GK_F32, (ws_bytes + 3) / 4);
    ASSERT_TRUE(da.ok() && db.ok() && dbias.ok() && dc.ok() && dd.ok() && dws.ok());
    for (DeviceTensor *t : {&da, &db, &dbias, &dc, &dd, &dws}) GK_CUDA_OK(t->poison());
    GK_CUDA_OK(da.upload(ha)); // the guard bytes past A and B stay NaN
    GK_CUDA_OK(db.upload(hb));
    GK_CUDA_OK(dbias.upload(hbias));
    if (p.c_mode == kCValues) GK_CUDA_OK(dc.upload(hc));
    if (p.c_mode == kCInPlace) GK_CUDA_OK(dd.upload(hc));
    const void *c = p.c_mode == kCNull ? nullptr : p.c_mode == kCInPlace ? dd.ptr() : dc.ptr();
    const float *bias = p.bias ? (const float *)dbias.ptr() : nullptr;
    void *ws = ws_bytes ? dws.ptr() : nullptr; // cudaMalloc'ed: 256-byte aligned

    const gk_gemm_config pf = gk_gemm_config_info(p.config < 0 ? 0 : p.config);
    const bool b_mn_refused = pf.wgmma && GK_GEMM_WG_B_K_MAJOR(pf.bm, pf.bn) && !p.tb;
    if (p.config >= 0 && ((pf.swap && p.ta) || b_mn_refused)) {
        // a swapped tile reads A K-major only, the 64 x 64, 64 x 32 and BN 160 wgmma tiles B K-major only: refused
        // before anything launches, D untouched
        HostTensor before(p.d_dt, dd.n);
        GK_CUDA_OK(dd.download(&before));
        EXPECT_EQ(gk_gemm_ex(p.config, p.splits, p.in_dt, dd.ptr(), p.d_dt, ldd, da.ptr(), lda, p.ta, db.ptr(), ldb,
                             p.tb, c, ldc, bias, m, n, k, p.alpha, p.beta, p.act, ws, ws_bytes, 0),
                  cudaErrorInvalidValue);
        EXPECT_NE(std::string(gk_failure_reason()).find(b_mn_refused ? "trans_b = 1" : "trans_a = 0"), std::string::npos)
            << gk_failure_reason();
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor after(p.d_dt, dd.n);
        GK_CUDA_OK(dd.download(&after));
        EXPECT_TRUE(after.bytes == before.bytes) << "D written by a refused call";
        return;
    }
    if (p.poison_smem) GK_CUDA_OK(poison_every_sm());
    if (p.config != -1 || p.splits != 0)
        GK_CUDA_OK(gk_gemm_ex(p.config, p.splits, p.in_dt, dd.ptr(), p.d_dt, ldd, da.ptr(), lda, p.ta, db.ptr(), ldb,
                              p.tb, c, ldc, bias, m, n, k, p.alpha, p.beta, p.act, ws, ws_bytes, 0));
    else if (p.in_dt == GK_BF16)
        GK_CUDA_OK(gk_gemm_bf16(dd.ptr(), p.d_dt, ldd, (const gk_bf16 *)da.ptr(), lda, p.ta, (const gk_bf16 *)db.ptr(),
                                ldb, p.tb, c, ldc, bias, m, n, k, p.alpha, p.beta, p.act, ws, ws_bytes, 0));
    else
        GK_CUDA_OK(gk_gemm_f16(dd.ptr(), p.d_dt, ldd, (const gk_f16 *)da.ptr(), lda, p.ta, (const gk_f16 *)db.ptr(),
                               ldb, p.tb, c, ldc, bias, m, n, k, p.alpha, p.beta, p.act, ws, ws_bytes, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());

    HostTensor got(p.d_dt, dd.n);
    GK_CUDA_OK(dd.download(&got));
    EXPECT_EQ(dd.guard_damage(), 0u) << "bytes written outside D";
    EXPECT_EQ(dws.guard_damage(), 0u) << "bytes written outside the workspace";
    if (ws_bytes && p.ws_expect >= 0) {
        HostTensor w(GK_F32, dws.n);
        GK_CUDA_OK(dws.download(&w));
        const size_t untouched = gk_test_count_poison(w);
        if (p.ws_expect) EXPECT_LT(untouched, w.n) << "the workspace was never written (no split, no repack)";
        else EXPECT_EQ(untouched, w.n) << "the workspace was written though it is too small to use";
    }
    gk_test_expect_written(got, m, n, ldd, p.c_mode != kCInPlace);

    RefSpec s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.a = [&](int64_t r, int64_t kk) { return (float)ha.get(p.ta ? kk * lda + r : r * lda + kk); };
    s.b = [&](int64_t kk, int64_t j) { return (float)hb.get(p.tb ? j * ldb + kk : kk * ldb + j); };
    s.c = [&](int64_t r, int64_t j) { return (float)hc.get(r * ldc + j); };
    s.bias = p.bias ? &hbias : nullptr;
    s.alpha = p.alpha;
    s.beta = p.beta;
    s.act = p.act;
    s.eps_acc = 0x1p-18;
    s.tol = gk_test_tol(p.d_dt);
    EXPECT_EQ(compare_rows(s, pick_rows(m, p.sample_rows, rng), got, ldd), 0);
    if (d_bytes) *d_bytes = got.bytes;
}

// Leading-dimension variants: 0, the rows themselves; 1, rows padded to a multiple of 8 plus 8
// (16-byte aligned rows: cp.async, the last chunk zero-filled where the row is not a multiple of
// 8); 2, rows
// padded by 3 and A, B starting 2 bytes past a 16-byte boundary. Rows that are not 16-byte
// aligned are repacked into the workspace when there is one, else read element-wise.
static void set_padding(MmaRun *p, int q)
{
    const int64_t row_a = p->ta ? p->m : p->k, row_b = p->tb ? p->k : p->n;
    switch (q % 3) {
    case 0: p->lda = p->ldb = p->ldc = p->ldd = 0; p->a_off = p->b_off = 0; break;
    case 1:
        p->lda = gk_round_up(row_a, 8) + 8;
        p->ldb = gk_round_up(row_b, 8) + 8;
        p->ldc = p->ldd = gk_round_up(p->n, 8) + 8;
        p->a_off = p->b_off = 0;
        break;
    default:
        p->lda = row_a + 3;
        p->ldb = row_b + 3;
        p->ldc = p->n + 5;
        p->ldd = p->n + 3;
        p->a_off = p->b_off = 1;
        break;
    }
}

static const int kInDtypes[2] = {GK_BF16, GK_F16};
static const int kDDtypes[3] = {GK_BF16, GK_F16, GK_F32};

// Every input dtype, layout and D dtype, with the five epilogues, each under one of the three
// leading-dimension variants (rotated, so every layout meets every variant), through the
// dispatcher, every other run with gk_gemm_workspace_bytes of workspace (repacking unaligned
// rows, splitting long K), the others without.
static void all_combinations(int64_t m, int64_t n, int64_t k, int64_t sample_rows)
{
    for (int in_dt : kInDtypes)
        for (int layout = 0; layout < 4; layout++)
            for (int di = 0; di < 3; di++)
                for (int v = 0; v < 5; v++) {
                    MmaRun p = mma_run(in_dt, kDDtypes[di], m, n, k, layout);
                    p.sample_rows = sample_rows;
                    gk_test_set_epilogue(&p, v);
                    set_padding(&p, v + layout + di);
                    p.ws_plan = (v + layout + di + (in_dt == GK_F16)) % 2 == 0;
                    run_mma(p);
                    if (::testing::Test::HasFailure()) return;
                }
}

TEST(GemmGpu, Shape1x1x1)
{
    GK_REQUIRE_GPU();
    all_combinations(1, 1, 1, 0);
}

TEST(GemmGpu, Shape17x33x65)
{
    GK_REQUIRE_GPU();
    all_combinations(17, 33, 65, 0);
}

TEST(GemmGpu, Shape127x255x63)
{
    GK_REQUIRE_GPU();
    all_combinations(127, 255, 63, 0);
}

// 4096^3 (the 128 x 256 configuration, whole rasterization groups): every output checked
// written, 64 rows against the reference; each layout once, with a different dtype pair and
// epilogue each time.
TEST(GemmGpu, Shape4096Sampled)
{
    GK_REQUIRE_GPU();
    struct {
        int in_dt, d_dt, layout, epilogue, padding;
    } const runs[] = {
        {GK_BF16, GK_BF16, 0, 0, 0},
        {GK_F16, GK_F32, 1, 3, 0},
        {GK_BF16, GK_F16, 2, 2, 1},
        {GK_F16, GK_BF16, 3, 1, 0},
    };
    for (const auto &r : runs) {
        MmaRun p = mma_run(r.in_dt, r.d_dt, 4096, 4096, 4096, r.layout);
        p.sample_rows = 64;
        gk_test_set_epilogue(&p, r.epilogue);
        set_padding(&p, r.padding);
        run_mma(p);
        if (HasFailure()) return;
    }
}

// Decode-like M = 16, N = 512, K = 8192: the dispatcher splits K when given
// gk_gemm_workspace_bytes of workspace (the workspace must then be written); without a
// workspace, or with 256 bytes too few, it does not (and the short workspace stays untouched).
TEST(GemmGpu, SplitKThroughDispatcher)
{
    GK_REQUIRE_GPU();
    const int64_t m = 16, n = 512, k = 8192;
    const gk_gemm_plan plan = gk_gemm_plan_for(m, n, k, 0, k, 0, n);
    ASSERT_GT(plan.splits, 1) << "the dispatcher does not split K for 16 x 512 x 8192 on this GPU";
    ASSERT_GT(plan.workspace_bytes, 0u);
    int v = 0;
    for (int in_dt : kInDtypes)
        for (int layout = 0; layout < 4; layout++)
            for (int d_dt : kDDtypes) {
                MmaRun p = mma_run(in_dt, d_dt, m, n, k, layout);
                gk_test_set_epilogue(&p, v++);
                p.ws_plan = true; // every layout's rows are 16-byte aligned here: the partials only
                p.ws_expect = 1;
                run_mma(p);
                if (HasFailure()) return;
            }
    MmaRun p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.d_dt = GK_F32;
    gk_test_set_epilogue(&p, 3);
    run_mma(p); // no workspace
    p.ws_plan = true;
    p.ws_adjust = -256;
    p.ws_expect = 0;
    run_mma(p);
}

// gk_gemm_ex: each configuration with 1 and 3 K splits (K = 328: 3 splits of 128, 128, 72 for
// BK 32 and 64), every layout and input dtype: all the shipped kernels. M = 1030 is 9 tile rows
// of 128 and 17 of 64 (a full rasterization group of 8 and a partial one), N = 300 two or five
// tile columns with a tail. The workspace holds the partials and the repacked operands where
// rows are not 16-byte aligned (A transposed: rows of 1030).
TEST(GemmGpu, EveryConfigSplits1And3)
{
    GK_REQUIRE_GPU();
    const int64_t m = 1030, n = 300, k = 328;
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++)
        for (int splits : {1, 3})
            for (int in_dt : kInDtypes)
                for (int layout = 0; layout < 4; layout++) {
                    MmaRun p = mma_run(in_dt, kDDtypes[v % 3], m, n, k, layout);
                    p.config = config;
                    p.splits = splits;
                    gk_test_set_epilogue(&p, v);
                    set_padding(&p, v / 3 % 2); // rows as they are, or padded to 16-byte multiples
                    v++;
                    if (splits > 1) {
                        p.ws_splits = splits;
                        p.ws_expect = 1;
                    } else {
                        p.ws_plan = true; // only the repacking, if any
                    }
                    run_mma(p);
                    if (HasFailure()) return;
                }
}

// The TMA-fed kernels of the VEC 2 configuration against its cp.async kernels: the same MMAs in
// the same order, so the same D bit for bit (each run also against the reference). Edges in every
// dimension (296 x 520 x 200: 40 rows, 8 columns and 8 of K past the last whole tile, which TMA
// zero-fills), rows padded, splits summed by a second launch and K tiles of a split. On a 9.0 GPU
// with sm_90 code the TMA-fed kernels must run: their launches are counted.
TEST(GemmGpu, TmaFedTileMatchesItsCpAsyncKernel)
{
    GK_REQUIRE_GPU();
    int config = -1;
    for (int i = 0; i < gk_gemm_config_count(); i++)
        if (gk_gemm_config_info(i).vec == 2) config = i;
    ASSERT_GE(config, 0) << "no TMA-fed configuration in the list";
    int dev = 0, major = 0, minor = 0;
    GK_CUDA_OK(cudaGetDevice(&dev));
    GK_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    GK_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major != 9 || minor != 0) GTEST_SKIP() << "the TMA-fed kernels run on compute capability 9.0 only";
    ASSERT_TRUE(gk_gemm_tma_ready()) << "a 9.0 GPU and this test's sm_90 code: the TMA-fed kernels must be taken";
    int v = 0;
    for (int splits : {1, 3})
        for (int layout = 0; layout < 4; layout++)
            for (int padded = 0; padded < 2; padded++) {
                MmaRun p = mma_run(kInDtypes[v % 2], kDDtypes[v % 3], 296, 520, splits > 1 ? 1000 : 200, layout);
                p.config = config;
                p.splits = splits;
                gk_test_set_epilogue(&p, v);
                set_padding(&p, padded);
                if (splits > 1) p.ws_splits = splits;
                v++;
                std::vector<unsigned char> with_tma, with_cp_async;
                const unsigned launches = gk_gemm_tma_launches;
                run_mma(p, &with_tma);
                EXPECT_EQ(gk_gemm_tma_launches, launches + 1) << describe(p) << ": the TMA-fed kernel did not run";
                gk_gemm_tma_off = 1;
                run_mma(p, &with_cp_async);
                gk_gemm_tma_off = 0;
                EXPECT_EQ(gk_gemm_tma_launches, launches + 1) << describe(p);
                ASSERT_FALSE(HasFailure());
                EXPECT_TRUE(with_tma == with_cp_async) << describe(p) << ": D differs from the cp.async kernel's";
            }
}

// The split-K sum's two paths with enough splits for its unrolled loads (4 a pass) and a rest:
// D of 2^17 outputs or more with N % 4 == 0 (4 outputs a thread: 300 x 512) and N off a multiple
// of 4 (one a thread: 300 x 510), 5 and 9 splits on the small mma.sync tile (summed by a second
// launch), every epilogue variant and layout.
TEST(GemmGpu, SplitSumManySplits)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int64_t n : {512, 510})
        for (int splits : {5, 9})
            for (int layout = 0; layout < 4; layout++) {
                MmaRun p = mma_run(GK_BF16, kDDtypes[v % 3], 300, n, 64 * 9, layout);
                p.config = 1;
                p.splits = splits;
                gk_test_set_epilogue(&p, v);
                v++;
                p.ws_splits = splits;
                p.ws_expect = 1;
                run_mma(p);
                if (HasFailure()) return;
            }
}

// The persistent unswapped configurations, where a block walks several tiles (ping-pong: its two
// consumers take turns) on more tiles than two rounds of the SMs and a partial last tile column:
// K of 2 k-tiles (fewer than the stages) and of 16, whole and in 3 splits (items of unequal
// k-tiles); epilogue variants 0 and 1 with D rows 16-byte aligned (ping-pong: the 16-bit pass
// when D is bf16 or f16 and not split) and variant 3 with D rows as they come (the fp32 pass).
TEST(GemmGpu, PersistentConfigsWalkManyTiles)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++) {
        const gk_gemm_config f = gk_gemm_config_info(config);
        if (!f.persistent || f.swap) continue;
        for (int64_t k : {100, 1000})
            for (int splits : {1, 3})
                for (int epilogue : {0, 1, 3}) {
                    MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], 1100, 4100, k, v % 4);
                    p.config = config;
                    p.splits = splits;
                    p.sample_rows = 96;
                    gk_test_set_epilogue(&p, epilogue);
                    if (epilogue != 3) p.ldd = 4104;
                    v++;
                    if (splits > 1) {
                        p.ws_splits = splits;
                        p.ws_expect = 1;
                    } else {
                        p.ws_plan = true;
                    }
                    run_mma(p);
                    if (HasFailure()) return;
                }
    }
}

// Decode-like shapes through the dispatcher (on sm_90a builds the swapped 16 x 128 or 64 x 128
// tile for NN and NT; for TN and TT the small mma.sync tile at M <= 16, the 128-row tiles
// above): M of 1, 7, 16, 33 and 64, N with a partial last tile of 128, K short, with a tail of
// 64, and long enough to split, with the workspace the plan asks for.
TEST(GemmGpu, DecodeShapesThroughDispatcher)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int64_t m : {1, 7, 16, 33, 64})
        for (int64_t n : {200, 1000})
            for (int64_t k : {40, 1000, 8200})
                for (int layout = 0; layout < 4; layout++) {
                    MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], m, n, k, layout);
                    gk_test_set_epilogue(&p, v++);
                    p.ws_plan = true;
                    run_mma(p);
                    if (HasFailure()) return;
                }
}

// Tiny problems, which the dispatcher gives the direct tile (fragments loaded straight from
// global memory, no shared memory): N of 1 and 8 (one n8 fragment, its second column past N),
// odd K and leading dimensions (value pairs read as two 16-bit loads), A or B a value past
// 4-byte alignment (the same), 16-byte rows (32-bit pair loads), a tail of a 64-value round, M
// past one block of 64 rows, every layout and epilogue variant; and M <= 16 beside an N too wide
// for the 64 x 8 tile, on the 16 x 32 tile (its warps along N, the last one's columns past N).
TEST(GemmGpu, TinyProblemsOnTheDirectTile)
{
    GK_REQUIRE_GPU();
    const struct {
        int64_t m, n, k;
    } shapes[] = {{3, 8, 8},     {9, 13, 3},     {1, 1697, 1},     {1063, 91, 11}, {16168, 8, 8}, {24, 32, 16},
                  {9398, 8, 128}, {65, 33, 72},  {3783, 1, 7},     {9, 11056, 24}, {12, 10768, 16},
                  {2, 4001, 13},  {16, 2085, 120}};
    int v = 0, direct = 0, narrow = 0;
    for (const auto &q : shapes)
        for (int layout = 0; layout < 4; layout++)
            for (int shift : {0, 1}) {
                MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], q.m, q.n, q.k, layout);
                if (shift) {
                    p.a_off = v % 4 < 2 ? 1 : 0; // one value past the allocation's alignment
                    p.b_off = v % 4 < 2 ? 0 : 1;
                    if (v % 3 == 0) p.lda = (p.ta ? q.m : q.k) + 3;
                }
                gk_test_set_epilogue(&p, v++);
                const gk_gemm_plan pl = gk_gemm_plan_for(q.m, q.n, q.k, p.ta, p.lda ? p.lda : (p.ta ? q.m : q.k), p.tb,
                                                         p.tb ? q.k : q.n);
                direct += strstr(gk_gemm_config_info(pl.config).name, "_direct") != nullptr;
                narrow += strstr(gk_gemm_config_info(pl.config).name, "_16x32x64_direct") != nullptr;
                run_mma(p);
                if (HasFailure()) return;
            }
    EXPECT_GE(direct, 60) << "the dispatcher should take a direct tile for most of these";
    EXPECT_GE(narrow, 12) << "the dispatcher should take the 16 x 32 direct tile for M <= 16 beside a wide N";
}

// A problem the dispatcher gives the direct tile (no copies: it reads rows as they are), with rows
// off 16 bytes (K = 11), run on every configuration with a workspace: the configurations that
// need 16-byte rows still repack A and B (the plan of the direct tile asks for no copies).
TEST(GemmGpu, EveryConfigRepacksWhereThePlanIsDirect)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++)
        for (int layout : {1, 0}) {
            MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], 1063, 91, 11, layout);
            p.config = config;
            p.splits = 1;
            p.ws_adjust = 1 << 20;
            gk_test_set_epilogue(&p, v++);
            run_mma(p);
            if (HasFailure()) return;
        }
}

// Split-K partials whose rows do not start on 16-byte boundaries (N = 37: rows of 148 bytes),
// every configuration: the epilogue stores those rows a value at a time.
TEST(GemmGpu, SplitPartialRowsOffSixteenBytes)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++)
        for (int layout = 0; layout < 4; layout++) {
            MmaRun p = mma_run(layout & 1 ? GK_F16 : GK_BF16, kDDtypes[v % 3], 65, 37, 1100, layout);
            p.config = config;
            p.splits = 3;
            p.ws_splits = 3;
            p.ws_expect = 1;
            gk_test_set_epilogue(&p, v++);
            run_mma(p);
            if (HasFailure()) return;
        }
}

// The wgmma kernels load only the rows of a tile inside the operand (TMA's zero fill of rows past
// its end is slow); the rest of the stage keeps whatever shared memory held, which may reach only
// D's rows past M and columns past N. Shared memory all NaN right before each launch, partial last
// tiles in M and N (M = 37: one partial tile row; M = 1030: 1030 = 8 x 128 + 6 = 4 x 256 + 6),
// every configuration and layout, K split or not: a stale value reaching D shows as NaN.
TEST(GemmGpu, StaleSharedMemoryStaysPastTheEdges)
{
    GK_REQUIRE_GPU();
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++)
        for (int64_t m : {37, 1030})
            for (int layout = 0; layout < 4; layout++) {
                MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], m, 300, 1100, layout);
                p.config = config;
                p.splits = v % 2 ? 3 : 1;
                if (p.splits > 1) p.ws_splits = p.splits;
                else p.ws_plan = true;
                p.poison_smem = true;
                gk_test_set_epilogue(&p, v++);
                run_mma(p);
                if (HasFailure()) return;
            }
}

// Rows 16- but not 128-byte aligned on large problems (K = 11240 and 4040, NT): the plan repacks
// B alone (8976 x 1824 x 11240, the tile's wider side) or nothing (4096 x 4096 x 4040, the
// cluster tile); A's rows then reach TMA off the L2 line. Every output checked written, 48 rows
// against the reference, with the plan's workspace, which must be written where it repacks.
TEST(GemmGpu, RowsOffTheLineOneOperandRepacked)
{
    GK_REQUIRE_GPU();
    if (!gk_gemm_wg_ready()) GTEST_SKIP() << "no sm_90a code or not compute capability 9.0: no wgmma tiles";
    const int64_t shapes[][3] = {{8976, 1824, 11240}, {4096, 4096, 4040}};
    for (const auto &sh : shapes) {
        const gk_gemm_plan pl = gk_gemm_plan_for(sh[0], sh[1], sh[2], 0, sh[2], 1, sh[2]);
        EXPECT_EQ(pl.pack_a_bytes, 0u);
        MmaRun p = mma_run(GK_BF16, GK_BF16, sh[0], sh[1], sh[2], 1);
        p.sample_rows = 48;
        p.ws_plan = true;
        p.ws_expect = pl.workspace_bytes > 0;
        run_mma(p);
        if (HasFailure()) return;
    }
}

// Leading dimensions past the row by 3, 8 and 64 for A, B, C and D at once, every layout.
TEST(GemmGpu, PaddedLeadingDimensions)
{
    GK_REQUIRE_GPU();
    for (int64_t pad : {3, 8, 64})
        for (int layout = 0; layout < 4; layout++) {
            MmaRun p = mma_run(layout & 1 ? GK_F16 : GK_BF16, kDDtypes[(pad + layout) % 3], 100, 70, 90, layout);
            gk_test_set_epilogue(&p, 2);
            p.lda = (p.ta ? p.m : p.k) + pad;
            p.ldb = (p.tb ? p.k : p.n) + pad;
            p.ldc = p.n + pad;
            p.ldd = p.n + 2 * pad;
            run_mma(p);
            if (HasFailure()) return;
        }
}

// The configuration that reads operands element-wise (any alignment), -1 if none ships.
static int elementwise_config()
{
    for (int i = 0; i < gk_gemm_config_count(); i++)
        if (!gk_gemm_config_info(i).vec) return i;
    return -1;
}

// Rows that are not 16-byte aligned: K = 13 with lda = 13 (NN), odd sizes in every layout, and
// leading dimensions that are multiples of 8 on a pointer 2 bytes past a 16-byte boundary. Without
// a workspace the dispatcher takes the element-wise-load kernels (and so does the element-wise
// configuration when forced); with gk_gemm_workspace_bytes of workspace the rows are repacked
// and the cp.async kernels run (pointer-only misalignment is not in the plan: element-wise),
// except in a tiny problem (37 x 29 x 13), which asks for none and leaves a workspace unread.
TEST(GemmGpu, UnalignedRows)
{
    GK_REQUIRE_GPU();
    const int elem = elementwise_config();
    ASSERT_GE(elem, 0) << "no element-wise-load configuration";
    for (int in_dt : kInDtypes)
        for (int mode = 0; mode < 3; mode++) // dispatcher; the element-wise config; dispatcher + workspace
            for (int64_t k : {13, 301}) {
                MmaRun p;
                p.in_dt = in_dt;
                p.d_dt = GK_F32;
                p.m = 37;
                p.n = 29;
                p.k = k;
                p.config = mode == 1 ? elem : -1;
                p.ws_plan = mode == 2;
                gk_test_set_epilogue(&p, 3);
                for (int layout = 0; layout < 4; layout++) {
                    p.ta = layout >> 1;
                    p.tb = layout & 1;
                    p.lda = p.ldb = 0; // rows of 13, 301, 37 or 29 values
                    p.a_off = p.b_off = 0;
                    p.ws_expect = mode == 2 ? (k > 256 ? 1 : 0) : -1;
                    p.ws_adjust = mode == 2 && k <= 256 ? 4096 : 0;
                    run_mma(p);
                    p.ws_adjust = 0;
                    p.lda = gk_round_up(p.ta ? p.m : p.k, 8);
                    p.ldb = gk_round_up(p.tb ? p.k : p.n, 8);
                    p.a_off = p.b_off = 1;
                    p.ws_expect = -1;
                    run_mma(p);
                    if (HasFailure()) return;
                }
            }
}

// The repack alone, against a host copy: two operands whose rows start at every even byte
// offset, in one launch and cut into launches of a few rows (the launcher's path for operands
// past 2^30 words). Every value lands in its row and the padding to 64 values is zero.
TEST(GemmGpu, RepackInPieces)
{
    GK_REQUIRE_GPU();
    GkRng rng(0x9ac4u);
    const int64_t rows[2] = {37, 19}, cols[2] = {65, 130}, ld[2] = {67, 133};
    for (int64_t most : {(int64_t)1 << 30, (int64_t)24, (int64_t)64}) {
        std::vector<unsigned short> src[2], want[2];
        unsigned short *d_src[2], *d_dst[2];
        gk_gemm_pack_job j[2];
        for (int q = 0; q < 2; q++) {
            const int64_t ldp = gk_round_up(cols[q], 64), n = (rows[q] - 1) * ld[q] + cols[q];
            src[q].resize(n);
            for (auto &v : src[q]) v = (unsigned short)(rng.next() & 0xffff);
            want[q].assign(rows[q] * ldp, 0);
            for (int64_t r = 0; r < rows[q]; r++)
                for (int64_t c = 0; c < cols[q]; c++) want[q][r * ldp + c] = src[q][r * ld[q] + c];
            GK_CUDA_OK(cudaMalloc(&d_src[q], n * 2));
            GK_CUDA_OK(cudaMalloc(&d_dst[q], want[q].size() * 2));
            GK_CUDA_OK(cudaMemcpy(d_src[q], src[q].data(), n * 2, cudaMemcpyHostToDevice));
            GK_CUDA_OK(cudaMemset(d_dst[q], 0xff, want[q].size() * 2));
            char *ws = (char *)d_dst[q];
            const void *x = d_src[q];
            int64_t l = ld[q];
            j[q] = gk_gemm_pack_job_of(&ws, &x, &l, rows[q], cols[q], want[q].size() * 2);
            EXPECT_EQ(l, ldp);
        }
        GK_CUDA_OK(gk_gemm_pack_launch("test", j[0], j[1], most, 0));
        GK_CUDA_OK(cudaDeviceSynchronize());
        for (int q = 0; q < 2; q++) {
            std::vector<unsigned short> got(want[q].size());
            GK_CUDA_OK(cudaMemcpy(got.data(), d_dst[q], got.size() * 2, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < got.size(); i++)
                if (got[i] != want[q][i]) {
                    ADD_FAILURE() << "operand " << q << ", " << most << " words a launch: value " << i << " is "
                                  << got[i] << ", want " << want[q][i];
                    break;
                }
            cudaFree(d_src[q]);
            cudaFree(d_dst[q]);
        }
        if (HasFailure()) return;
    }
}

// 16-byte aligned rows whose length is not a multiple of 8: the last chunk of a row is read up
// to the row's end and zero-filled after it (value by value on the mma.sync path, by TMA's
// bounds on wgmma) (K = 13, lda = 16; M = 37 with A transposed, lda = 40; N = 29, ldb = 32).
// The padding holds NaN, so a chunk read whole would show. Through the dispatcher and every
// configuration.
TEST(GemmGpu, RowTailsZeroFilled)
{
    GK_REQUIRE_GPU();
    for (int in_dt : kInDtypes)
        for (int config = -1; config < gk_gemm_config_count(); config++)
            for (int64_t k : {13, 77})
                for (int layout = 0; layout < 4; layout++) {
                    MmaRun p = mma_run(in_dt, layout & 1 ? GK_F32 : GK_BF16, 37, 29, k, layout);
                    p.config = config;
                    gk_test_set_epilogue(&p, 1 + layout % 2);
                    p.lda = gk_round_up(p.ta ? p.m : p.k, 8);
                    p.ldb = gk_round_up(p.tb ? p.k : p.n, 8);
                    run_mma(p);
                    if (HasFailure()) return;
                }
}

// K splits summed in the kernel (GK_GEMM_SPLITS_IN_KERNEL tiles, at least half inside D, a
// workspace that holds their partial tiles), each such configuration, every layout, both input
// dtypes, the five epilogues and three D dtypes rotated, 2, 3 and 4 splits (K = 1000: splits of
// unequal k-tiles, the last partial), and 6 (summed by a second launch):
// - few tiles: 250 x 500, fewer items than SMs;
// - more items than SMs: 200 x 17900, several items a block, split-major, a tile summed by
//   whichever of its splits' blocks counts last;
// - 192 x 1100: the last tile column of 256-wide tiles at most half full (the half-width wgmma's
//   accumulators);
// - 1 x 3000: tiles mostly outside D, summed by a second launch whatever the workspace.
// With a workspace that holds only splits x M x N (the tiles padded past M and N need more), the
// splits go to a second launch instead; with none, K is not split. Then the same inputs twice:
// the same bits (the partials are added in split order, whichever block comes last).
TEST(GemmGpu, SplitsSummedInKernel)
{
    GK_REQUIRE_GPU();
    if (!gk_gemm_wg_ready()) GTEST_SKIP() << "no sm_90a kernels in this build or on this GPU: nothing sums splits in the kernel";
    int v = 0, tried = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++) {
        const gk_gemm_config f = gk_gemm_config_info(config);
        if (!f.wgmma || !GK_GEMM_SPLITS_IN_KERNEL(f.persistent, f.bm)) continue;
        tried++;
        const int64_t shapes[4][2] = {{250, 500}, {200, 17900}, {192, 1100}, {1, 3000}};
        for (const auto &sh : shapes)
            for (int layout = 0; layout < 4; layout++) {
                MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], sh[0], sh[1], 1000, layout);
                p.config = config;
                p.splits = 2 + v % 4 + (v % 4 == 3); // 2, 3, 4, 6
                p.sample_rows = 64;
                gk_test_set_epilogue(&p, v);
                set_padding(&p, v / 5 % 2);
                p.ws_fixup = true;
                p.ws_expect = 1;
                v++;
                run_mma(p);
                if (HasFailure()) return;
            }
        for (int ws : {1, 0}) { // the partials of a second launch; no workspace
            MmaRun p = mma_run(GK_BF16, GK_BF16, 250, 500, 1000, 1);
            p.config = config;
            p.splits = 3;
            p.ws_splits = ws ? 3 : 0;
            p.ws_expect = ws ? 1 : -1;
            run_mma(p);
        }
        MmaRun same = mma_run(GK_BF16, GK_F32, 200, 1000, 3000, 1);
        same.config = config;
        same.splits = 4;
        same.ws_fixup = true;
        std::vector<unsigned char> d1, d2;
        run_mma(same, &d1);
        run_mma(same, &d2);
        ASSERT_FALSE(HasFailure());
        EXPECT_TRUE(d1 == d2) << describe(same);
    }
    EXPECT_GE(tried, 1) << "no configuration sums its splits in the kernel";
}

// Splits summed in the kernel need no cleared workspace: each tile's counter holds the launch's
// tag, and the block that sums the tile sets it back. Each such configuration on a workspace of
// random bytes, then the same call captured in a CUDA graph and replayed twice on that workspace
// (the same tag every replay): the same bits each time, every output written (D poisoned before
// each run). SplitsSummedInKernel checks the values.
TEST(GemmGpu, SplitsSummedInKernelReplayed)
{
    GK_REQUIRE_GPU();
    if (!gk_gemm_wg_ready()) GTEST_SKIP() << "no sm_90a kernels in this build or on this GPU: nothing sums splits in the kernel";
    int tried = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++) {
        const gk_gemm_config f = gk_gemm_config_info(config);
        if (!f.wgmma || !GK_GEMM_SPLITS_IN_KERNEL(f.persistent, f.bm)) continue;
        tried++;
        const int64_t m = 200, n = 300, k = 2000, splits = 3;
        SCOPED_TRACE(f.name);
        GkRng rng(0x5eed0000 + config);
        const size_t ws_bytes = gk_round_up(gk_ceil_div(m, f.bm) * gk_ceil_div(n, f.bn) * (splits * f.bm * f.bn * 4 + 8), 256);
        HostTensor ha(GK_BF16, m * k), hb(GK_BF16, n * k), hw(GK_F32, ws_bytes / 4);
        ha.fill_uniform(rng, -1.0f, 1.0f);
        hb.fill_uniform(rng, -1.0f, 1.0f);
        for (size_t i = 0; i < hw.bytes.size(); i++) hw.bytes[i] = (unsigned char)rng.next();
        DeviceTensor da(GK_BF16, m * k), db(GK_BF16, n * k), dd(GK_BF16, m * n), dws(GK_F32, ws_bytes / 4);
        ASSERT_TRUE(da.ok() && db.ok() && dd.ok() && dws.ok());
        GK_CUDA_OK(da.upload(ha));
        GK_CUDA_OK(db.upload(hb));
        GK_CUDA_OK(dws.upload(hw));
        cudaStream_t st;
        GK_CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        auto call = [&] {
            return gk_gemm_ex(config, (int)splits, GK_BF16, dd.ptr(), GK_BF16, n, da.ptr(), k, 0, db.ptr(), k, 1, NULL, 0,
                              NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, dws.ptr(), ws_bytes, st);
        };
        std::vector<HostTensor> got;
        GK_CUDA_OK(dd.poison());
        GK_CUDA_OK(call());
        GK_CUDA_OK(cudaStreamSynchronize(st));
        got.emplace_back(GK_BF16, m * n);
        GK_CUDA_OK(dd.download(&got.back()));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        GK_CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        const cudaError_t captured = call();
        GK_CUDA_OK(cudaStreamEndCapture(st, &graph));
        GK_CUDA_OK(captured);
        GK_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int r = 0; r < 2; r++) {
            GK_CUDA_OK(dd.poison());
            GK_CUDA_OK(cudaGraphLaunch(exec, st));
            GK_CUDA_OK(cudaStreamSynchronize(st));
            got.emplace_back(GK_BF16, m * n);
            GK_CUDA_OK(dd.download(&got.back()));
        }
        GK_CUDA_OK(cudaGraphExecDestroy(exec));
        GK_CUDA_OK(cudaGraphDestroy(graph));
        GK_CUDA_OK(cudaStreamDestroy(st));
        EXPECT_EQ(gk_test_count_poison(got[0]), 0u) << "outputs not written by the first call";
        EXPECT_TRUE(got[1].bytes == got[0].bytes) << "the first replay differs from the call";
        EXPECT_TRUE(got[2].bytes == got[0].bytes) << "the second replay differs from the call";
        if (HasFailure()) return;
    }
    EXPECT_GE(tried, 1) << "no configuration sums its splits in the kernel";
}

// Same inputs, same bits: with K split (partials summed in a fixed order) and without.
TEST(GemmGpu, Deterministic)
{
    GK_REQUIRE_GPU();
    MmaRun split = mma_run(GK_BF16, GK_F32, 16, 512, 8192, 0);
    split.ws_plan = true;
    split.ws_expect = 1;
    MmaRun whole = mma_run(GK_F16, GK_F32, 300, 300, 1000, 0);
    gk_test_set_epilogue(&whole, 3);
    for (const MmaRun &p : {split, whole}) {
        std::vector<unsigned char> d1, d2;
        run_mma(p, &d1);
        run_mma(p, &d2);
        ASSERT_FALSE(HasFailure());
        EXPECT_TRUE(d1 == d2) << describe(p);
    }
}

// A rejected call launches nothing: D and the workspace stay poisoned. Checked here where a call
// that passed would run: a workspace off a 256-byte boundary, a cp.async configuration forced on
// rows that are not 16-byte aligned without a workspace to repack them (found after the device
// query), and a leading dimension short of its row.
TEST(GemmGpu, RejectedCallWritesNothing)
{
    GK_REQUIRE_GPU();
    const int64_t m = 16, n = 512, k = 8192;
    DeviceTensor a(GK_BF16, m * (k + 1)), b(GK_BF16, k * n), d(GK_F32, m * n), ws(GK_F32, 4 * m * n + 1024);
    ASSERT_TRUE(a.ok() && b.ok() && d.ok() && ws.ok());
    for (DeviceTensor *t : {&a, &b, &d, &ws}) GK_CUDA_OK(t->poison());
    EXPECT_EQ(gk_gemm_ex(-1, 4, GK_BF16, d.ptr(), GK_F32, n, a.ptr(), k, 0, b.ptr(), n, 0, nullptr, 0, nullptr, m, n, k,
                         1.0f, 0.0f, GK_ACT_NONE, (char *)ws.ptr() + 16, ws.bytes() - 16, 0),
              cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("workspace is not 256-byte aligned"), std::string::npos)
        << gk_failure_reason();
    int vec_config = -1;
    for (int i = 0; i < gk_gemm_config_count() && vec_config < 0; i++)
        if (gk_gemm_config_info(i).vec) vec_config = i;
    ASSERT_GE(vec_config, 0);
    EXPECT_EQ(gk_gemm_ex(vec_config, 1, GK_BF16, d.ptr(), GK_F32, n, a.ptr(), k + 1, 0, b.ptr(), n, 0, nullptr, 0,
                         nullptr, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, nullptr, 0, 0),
              cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("16-byte aligned"), std::string::npos) << gk_failure_reason();
    EXPECT_EQ(gk_gemm_bf16(d.ptr(), GK_F32, n, (const gk_bf16 *)a.ptr(), k - 1, 0, (const gk_bf16 *)b.ptr(), n, 0,
                           nullptr, 0, nullptr, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, ws.ptr(), ws.bytes(), 0),
              cudaErrorInvalidValue);
    GK_CUDA_OK(cudaDeviceSynchronize());
    GK_CUDA_OK(cudaGetLastError());
    HostTensor got(GK_F32, d.n), w(GK_F32, ws.n);
    GK_CUDA_OK(d.download(&got));
    GK_CUDA_OK(ws.download(&w));
    EXPECT_EQ(gk_test_count_poison(got), got.n);
    EXPECT_EQ(gk_test_count_poison(w), w.n);
}

// ------------------------------------------------------------------ fp32 SIMT ladder

typedef cudaError_t (*SgemmFn)(float *, int64_t, const float *, int64_t, const float *, int64_t, int64_t, int64_t,
                               int64_t, float, float, cudaStream_t);
struct SgemmRung {
    const char *name;
    SgemmFn fn;
};
static const SgemmRung kRungs[] = {
    {"naive", gk_gemm_f32_naive},       {"smem", gk_gemm_f32_smem}, {"regtile", gk_gemm_f32_regtile},
    {"warptile", gk_gemm_f32_warptile}, {"pipelined", gk_gemm_f32_pipelined}, {"f32", gk_gemm_f32},
};

struct SgRun {
    int64_t m, n, k;
    int64_t pad_a = 0, pad_b = 0, pad_c = 0; // lda = k + pad_a, ldb = n + pad_b, ldc = n + pad_c
    int a_off = 0;                           // A's pointer 4 bytes past a 16-byte boundary
    float alpha = 1.0f, beta = 0.0f;
    int64_t sample_rows = 0;
};

static void run_sgemm(const SgemmRung &rung, const SgRun &p)
{
    char trace[200];
    const int64_t m = p.m, n = p.n, k = p.k, lda = k + p.pad_a, ldb = n + p.pad_b, ldc = n + p.pad_c;
    snprintf(trace, sizeof trace, "%s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld a_off=%d alpha=%g beta=%g",
             rung.name, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
             p.a_off, p.alpha, p.beta);
    SCOPED_TRACE(trace);
    GkRng rng(0x5e3a + (uint64_t)m * 131 + n * 7 + k * 3 + lda * 1013 + ldb * 37 + p.a_off + (p.beta != 0) * 17 +
              (uint64_t)(&rung - kRungs) * 100003);
    HostTensor ha(GK_F32, (m - 1) * lda + k), hb(GK_F32, (k - 1) * ldb + n), hc(GK_F32, (m - 1) * ldc + n);
    gk_test_fill_strided(&ha, m, k, lda, rng);
    gk_test_fill_strided(&hb, k, n, ldb, rng);
    if (p.beta != 0) gk_test_fill_strided(&hc, m, n, ldc, rng);
    else memset(hc.bytes.data(), 0xff, hc.bytes.size()); // C is only written: all NaN before

    DeviceTensor da(GK_F32, ha.n, p.a_off), db(GK_F32, hb.n), dc(GK_F32, hc.n);
    ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
    for (DeviceTensor *t : {&da, &db, &dc}) GK_CUDA_OK(t->poison());
    GK_CUDA_OK(da.upload(ha));
    GK_CUDA_OK(db.upload(hb));
    GK_CUDA_OK(dc.upload(hc));
    GK_CUDA_OK(rung.fn((float *)dc.ptr(), ldc, (const float *)da.ptr(), lda, (const float *)db.ptr(), ldb, m, n, k,
                       p.alpha, p.beta, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(GK_F32, hc.n);
    GK_CUDA_OK(dc.download(&got));
    EXPECT_EQ(dc.guard_damage(), 0u) << "bytes written outside C";
    gk_test_expect_written(got, m, n, ldc, p.beta == 0);

    RefSpec s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.a = [&](int64_t r, int64_t kk) { return (float)ha.get(r * lda + kk); };
    s.b = [&](int64_t kk, int64_t j) { return (float)hb.get(kk * ldb + j); };
    s.c = [&](int64_t r, int64_t j) { return (float)hc.get(r * ldc + j); };
    s.alpha = p.alpha;
    s.beta = p.beta;
    s.eps_acc = 0x1p-20;
    s.tol = gk_test_tol(GK_F32);
    EXPECT_EQ(compare_rows(s, pick_rows(m, p.sample_rows, rng), got, ldc), 0);
}

class SgemmGpu : public ::testing::TestWithParam<int> {};

// Each rung at 1 x 1 x 1, 17 x 33 x 65, 127 x 255 x 63 and 1000^3 (160 sampled rows), three ways:
// strides equal to the rows, alpha = 1, beta = 0 with C all NaN; strides padded to multiples of 4
// (16-byte rows: float4 loads, with tails where K or N is not a multiple of 4), alpha and beta;
// strides padded by odd counts and A 4 bytes off a 16-byte boundary (scalar loads), alpha and beta.
TEST_P(SgemmGpu, Shapes)
{
    GK_REQUIRE_GPU();
    const SgemmRung &rung = kRungs[GetParam()];
    const int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {127, 255, 63}, {1000, 1000, 1000}};
    for (const auto &sh : shapes) {
        SgRun p;
        p.m = sh[0];
        p.n = sh[1];
        p.k = sh[2];
        p.sample_rows = p.m >= 1000 ? 160 : 0;
        run_sgemm(rung, p);
        p.pad_a = gk_round_up(p.k, 4) - p.k + 4;
        p.pad_b = gk_round_up(p.n, 4) - p.n + 8;
        p.pad_c = 5;
        p.alpha = -0.75f;
        p.beta = 1.5f;
        run_sgemm(rung, p);
        p.pad_a = 3;
        p.pad_b = 1;
        p.pad_c = 2;
        p.a_off = 1;
        p.alpha = 2.0f;
        p.beta = -0.5f;
        run_sgemm(rung, p);
        if (HasFailure()) return;
    }
}

INSTANTIATE_TEST_SUITE_P(AllRungs, SgemmGpu, ::testing::Range(0, (int)(sizeof kRungs / sizeof kRungs[0])),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kRungs[i.param].name); });

// gk_gemm_f32 at 4096^3, strides padded, alpha and beta: every output checked written (C all NaN
// first, beta = 0) and 64 rows against the reference, then alpha and beta with C.
TEST(SgemmGpuLarge, Gemm4096Sampled)
{
    GK_REQUIRE_GPU();
    SgRun p;
    p.m = p.n = p.k = 4096;
    p.pad_a = 4;
    p.pad_b = 12;
    p.pad_c = 3;
    p.alpha = 1.25f;
    p.sample_rows = 64;
    run_sgemm(kRungs[4], p);
    p.beta = 0.5f;
    run_sgemm(kRungs[4], p);
}

// Every kernel at a small size, for the sanitizers (tools/run_all.sh runs racecheck, synccheck
// and initcheck on this test and two other small ones; the larger tests take tens of seconds each
// under racecheck). Each configuration, input dtype and layout (a swapped tile's TN and TT only
// checked refused) at 200 x 264 x 136: rows of 16-byte multiples, so every configuration takes
// every layout, and a partial last tile in M, N and K for every tile; on the unswapped wgmma tiles
// of BN 128 and 256 full tile columns and a last one at most half full (the half-width path). K
// whole or split in 2 (each configuration and layout meets both across the two dtypes), the five
// epilogues and two leading-dimension variants rotated. A persistent configuration also runs with
// N wide enough for more work items than SMs, so that blocks walk on to a second item and reuse
// their epilogue buffer. D is poisoned before each launch, every output checked written and
// against the reference.
TEST(GemmGpu, EveryConfigSmall)
{
    GK_REQUIRE_GPU();
    int sms = 0;
    GK_CUDA_OK(gk_sm_count(&sms));
    int v = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++) {
        const gk_gemm_config info = gk_gemm_config_info(config);
        for (int di = 0; di < 2; di++)
            for (int layout = 0; layout < 4; layout++)
                for (int wide = 0; wide <= (info.persistent ? 1 : 0); wide++) {
                    const int splits = 1 + ((layout + di) & 1);
                    int64_t n = 264;
                    if (wide) { // work items > SMs: ceil(200 / BM) ceil(N / BN) splits >= sms + 1
                        const int64_t tiles_m = (200 + info.bm - 1) / info.bm;
                        const int64_t want = (sms + splits * tiles_m) / (splits * tiles_m); // tile columns
                        n = want * info.bn - 56;
                    }
                    MmaRun p = mma_run(kInDtypes[di], kDDtypes[v % 3], 200, n, 136, layout);
                    p.config = config;
                    p.splits = splits;
                    if (splits > 1) {
                        p.ws_splits = splits; // the partials (nothing to repack)
                        p.ws_expect = 1;
                    }
                    gk_test_set_epilogue(&p, v);
                    set_padding(&p, v / 3 % 2);
                    v++;
                    run_mma(p);
                    if (HasFailure()) return;
                }
    }
}

// Swapped tiles on D of few columns (the second consumer's MMA rows all past N at N <= 64, its
// loads skipped), beside 65 columns (one row of it inside): N = 1, 8, 56, 64, 65; K of 1, 2, 3
// and 16 k-tiles, a partial last one (K = 24, 100, 150, 1000); M inside one tile and over
// several; A row-major, B either way; whole and in 3 splits (a second launch sums them); every D
// dtype and epilogue in turn; persistent walks of several tiles a block (M = 4000 at N = 56:
// more tiles than SMs). Leading dimensions past the rows, 16-byte aligned.
TEST(GemmGpu, SwappedTilesOnNarrowD)
{
    GK_REQUIRE_GPU();
    if (!gk_gemm_wg_ready()) GTEST_SKIP() << "no sm_90a kernels in this build or on this GPU: no swapped tile";
    int v = 0, tried = 0;
    for (int config = 0; config < gk_gemm_config_count(); config++) {
        const gk_gemm_config f = gk_gemm_config_info(config);
        if (!f.swap) continue;
        tried++;
        for (int64_t n : {1, 8, 56, 64, 65})
            for (int64_t k : {24, 100, 150, 1000})
                for (int64_t m : {(int64_t)f.bm - 3, (int64_t)3 * f.bm + 5}) {
                    MmaRun p = mma_run(v % 2 ? GK_F16 : GK_BF16, kDDtypes[v % 3], m, n, k, v % 2); // NN / NT: A row-major
                    p.config = config;
                    p.splits = k >= 1000 && v % 2 ? 3 : 1;
                    if (p.splits > 1) {
                        p.ws_splits = p.splits;
                        p.ws_expect = 1;
                    }
                    gk_test_set_epilogue(&p, v);
                    set_padding(&p, 1); // rows 16-byte aligned: TMA reads them in place
                    v++;
                    run_mma(p);
                    if (HasFailure()) return;
                }
        MmaRun walk = mma_run(GK_BF16, GK_BF16, 4000, 56, 200, 1);
        walk.config = config;
        walk.sample_rows = 300;
        run_mma(walk);
        if (HasFailure()) return;
    }
    EXPECT_GE(tried, 1) << "no swapped tile in this build";
}

// K = 0: D = act(beta C + bias), A and B never read (NULL here); for every D dtype, in place and
// not, through gk_gemm_bf16 and gk_gemm_f16; the fp32 ladder gives C = beta C. D is NaN before.
TEST(GemmGpu, KZeroIsTheEpilogue)
{
    GK_REQUIRE_GPU();
    const int64_t m = 37, n = 70, ldd = 75, ldc = 75;
    for (int d_dt : kDDtypes)
        for (int in_place = 0; in_place < 2; in_place++) {
            SCOPED_TRACE(std::string(gk_dtype_name(d_dt)) + (in_place ? " in place" : ""));
            GkRng rng(0x4b30 + d_dt * 2 + in_place);
            HostTensor hc(d_dt, (m - 1) * ldc + n), hbias(GK_F32, n);
            gk_test_fill_strided(&hc, m, n, ldc, rng);
            hbias.fill_uniform(rng, -1.0f, 1.0f);
            DeviceTensor dc(d_dt, hc.n), dd(d_dt, (m - 1) * ldd + n), dbias(GK_F32, n);
            ASSERT_TRUE(dc.ok() && dd.ok() && dbias.ok());
            for (DeviceTensor *t : {&dc, &dd, &dbias}) GK_CUDA_OK(t->poison());
            GK_CUDA_OK(dc.upload(hc));
            GK_CUDA_OK(dbias.upload(hbias));
            DeviceTensor &out = in_place ? dc : dd;
            const float beta = -0.75f;
            GK_CUDA_OK(gk_gemm_bf16(out.ptr(), d_dt, ldd, nullptr, 0, 0, nullptr, 0, 1, dc.ptr(), ldc,
                                    (const float *)dbias.ptr(), m, n, 0, 2.0f, beta, GK_ACT_SILU, nullptr, 0, 0));
            GK_CUDA_OK(cudaDeviceSynchronize());
            HostTensor got(d_dt, out.n);
            GK_CUDA_OK(out.download(&got));
            gk_test_expect_written(got, m, n, ldd, true);
            std::vector<double> ref(got.n);
            for (int64_t r = 0; r < m; r++)
                for (int64_t j = 0; j < ldd && r * ldd + j < (int64_t)got.n; j++)
                    ref[r * ldd + j] = j < n ? ref_act(GK_ACT_SILU, (double)beta * hc.get(r * ldc + j) + hbias.get(j))
                                             : got.get(r * ldd + j); // padding: checked by gk_test_expect_written
            EXPECT_EQ(gk_test_compare("D", got, ref, gk_test_tol(d_dt)), 0u);
        }
    // f16 inputs take the same path; the fp32 ladder: C = beta C
    HostTensor hc(GK_F32, 5 * 9);
    GkRng rng(0x4b3f);
    hc.fill_uniform(rng, -1.0f, 1.0f);
    DeviceTensor dc(GK_F32, hc.n), dd(GK_F16, hc.n);
    ASSERT_TRUE(dc.ok() && dd.ok());
    GK_CUDA_OK(dd.poison());
    GK_CUDA_OK(gk_gemm_f16(dd.ptr(), GK_F16, 9, nullptr, 0, 1, nullptr, 0, 0, nullptr, 0, nullptr, 5, 9, 0, 1.0f, 0.0f,
                           GK_ACT_NONE, nullptr, 0, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got16(GK_F16, dd.n);
    GK_CUDA_OK(dd.download(&got16));
    for (size_t i = 0; i < got16.n; i++) EXPECT_EQ(got16.get(i), 0.0) << "f16 D = 0 at " << i;
    for (int r = 0; r < 6; r++) {
        GK_CUDA_OK(dc.upload(hc));
        GK_CUDA_OK(kRungs[r].fn((float *)dc.ptr(), 9, nullptr, 0, nullptr, 0, 5, 9, 0, 1.0f, 0.5f, 0));
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(GK_F32, dc.n);
        GK_CUDA_OK(dc.download(&got));
        for (size_t i = 0; i < got.n; i++) EXPECT_EQ(got.get(i), 0.5 * hc.get(i)) << kRungs[r].name << " at " << i;
    }
}

// An empty problem launches nothing and writes nothing: D stays as it was.
TEST(GemmGpu, EmptyProblemWritesNothing)
{
    GK_REQUIRE_GPU();
    DeviceTensor dd(GK_BF16, 64);
    ASSERT_TRUE(dd.ok());
    GK_CUDA_OK(dd.poison());
    GK_CUDA_OK(gk_gemm_bf16(dd.ptr(), GK_BF16, 8, nullptr, 0, 0, nullptr, 0, 0, nullptr, 0, nullptr, 0, 8, 8, 1.0f, 0.0f,
                            GK_ACT_NONE, nullptr, 0, 0));
    GK_CUDA_OK(gk_gemm_bf16(dd.ptr(), GK_BF16, 8, nullptr, 8, 0, nullptr, 8, 0, nullptr, 0, nullptr, 8, 0, 8, 1.0f, 0.0f,
                            GK_ACT_NONE, nullptr, 0, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(GK_BF16, dd.n);
    GK_CUDA_OK(dd.download(&got));
    EXPECT_EQ(gk_test_count_poison(got), got.n);
}
