// GPU tests of gk_fp8.cuh against a double-precision reference on the host. Skipped without a GPU
// (and, for the GEMM, without an sm_90a image on a compute capability 9.0 device: the GEMM has no
// other path yet, and says so with cudaErrorNotSupported, which is checked).
//
// Inputs are fresh random values every run: e4m3 codes of values uniform in [-1, 1) times a power of
// two (all finite codes but NaN occur), scales uniform in [0.5, 2), C and bias in [-1, 1). Outputs
// are poisoned (all-ones bytes: NaN in every float dtype) before each launch and checked fully
// written, the padding between rows untouched.
//
// GEMM tolerance: |got - ref| <= atol + rtol |ref| (the final rounding to D's dtype) plus
// 2^-10 |alpha| S sa sb, S = sum_k |a_k b_k|. e4m3 products are exact in fp32; Hopper's fp8 wgmma
// adds them with fewer bits than fp32 inside a k32 step (about 2^-13 of the running sum a step, so
// 2^-10 holds for the 128-k tiles that block scaling promotes and for the K used here). One missing
// or repeated 128-k tile errs by about sqrt(128) |a b| ~ 1% of S at these K: far past the bound.
// One wgmma tile of gk_gemm.cuh is built (gemm_gpu_test covers them all): gk_fp8.cuh runs its own.
#define GK_GEMM_WG_CONFIGS(X) X(wg128x256x64_s4, 128, 256, 4, 0, 679)
#define GK_IMPLEMENTATION
#include "gk/gk_fp8.cuh"
#include "gk/gk_reduce.cuh"
#include "gk_tests/gk_test.h"

#include <atomic>
#include <cmath>
#include <vector>

namespace {

bool fp8_gemm_ready(std::string *why)
{
    // the GEMM's own answer on this device: a 1 x 16 x 16 product through the dispatcher
    DeviceTensor a(GK_E4M3, 16), b(GK_E4M3, 16), d(GK_F32, 1);
    cudaMemset(a.ptr(), 0, 16);
    cudaMemset(b.ptr(), 0, 16);
    const cudaError_t e = gk_fp8_gemm(d.ptr(), GK_F32, 1, (const gk_e4m3 *)a.ptr(), 16, NULL, GK_FP8_TENSOR,
                                      (const gk_e4m3 *)b.ptr(), 16, NULL, GK_FP8_TENSOR, NULL, 0, NULL, 1, 1, 16, 1.0f,
                                      0.0f, GK_ACT_NONE, NULL, 0, 0);
    if (e == cudaErrorNotSupported) {
        *why = std::string("no fp8 GEMM on this device/build: ") + gk_failure_reason();
        return false;
    }
    EXPECT_EQ(e, cudaSuccess) << gk_failure_reason();
    return e == cudaSuccess;
}

#define GK_REQUIRE_FP8_GEMM()                                           \
    do {                                                                \
        GK_REQUIRE_GPU();                                               \
        std::string why_;                                               \
        if (!fp8_gemm_ready(&why_)) GK_TEST_SKIP(why_);                 \
    } while (0)

// Random e4m3 codes of values uniform in [-1, 1) 2^e (e in -2..2), NaN codes replaced.
void fill_codes(HostTensor *h, GkRng &rng)
{
    for (size_t i = 0; i < h->n; i++) {
        const int e = (int)(rng.next() % 5) - 2;
        h->set(i, std::ldexp(rng.uniform(-1.0f, 1.0f), e));
    }
}

void fill_uniform(std::vector<float> *v, size_t n, GkRng &rng, float lo, float hi)
{
    v->resize(n);
    for (float &x : *v) x = rng.uniform(lo, hi);
}

double act_ref(int act, double v)
{
    switch (act) {
    case GK_ACT_RELU: return v > 0 ? v : 0;
    case GK_ACT_GELU: return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case GK_ACT_SILU: return v / (1.0 + std::exp(-v));
    default: return v;
    }
}

struct Case {
    int64_t m, n, k;
    int mode_a, mode_b;
    int d_dtype = GK_BF16;
    int64_t lda_pad = 0, ldb_pad = 0, ldd_pad = 0;
    float alpha = 1.0f, beta = 0.0f;
    bool bias = false;
    int act = GK_ACT_NONE;
    int config = -1, splits = 0;
    bool workspace = true;
    // a NaN scale: operand 0 (a) or 1 (b), at scale index nan_at (-1: none)
    int nan_operand = 0;
    int64_t nan_at = -1;
};

int64_t scale_count(int mode, int block_rows, int64_t rows, int64_t k)
{
    return gk_fp8_scale_count(mode, block_rows, rows, k);
}

// Runs one case against the reference; the output as doubles in *outp (for determinism checks).
void run_case(const Case &c, GkRng &rng, std::vector<double> *outp = nullptr)
{
    const int64_t k16 = (c.k + 15) / 16 * 16; // rows of 16-byte multiples (TMA)
    const int64_t lda = k16 + c.lda_pad, ldb = k16 + c.ldb_pad, ldd = c.n + c.ldd_pad;
    HostTensor ha(GK_E4M3, (size_t)((c.m - 1) * lda + c.k)), hb(GK_E4M3, (size_t)((c.n - 1) * ldb + c.k));
    fill_codes(&ha, rng);
    fill_codes(&hb, rng);
    const int64_t kb = (c.k + 127) / 128;
    const int64_t na = scale_count(c.mode_a, 1, c.m, c.k), nb = scale_count(c.mode_b, 128, c.n, c.k);
    std::vector<float> sa, sb, bias, cvals;
    fill_uniform(&sa, (size_t)na, rng, 0.5f, 2.0f);
    fill_uniform(&sb, (size_t)nb, rng, 0.5f, 2.0f);
    if (c.nan_at >= 0) (c.nan_operand == 0 ? sa : sb)[(size_t)c.nan_at] = NAN;
    if (c.bias) fill_uniform(&bias, (size_t)c.n, rng, -1.0f, 1.0f);
    HostTensor hc(c.d_dtype, (size_t)((c.m - 1) * ldd + c.n));
    if (c.beta != 0.0f) gk_test_fill_strided(&hc, c.m, c.n, ldd, rng); // the padding stays NaN (all ones)

    DeviceTensor da(GK_E4M3, ha.n), db(GK_E4M3, hb.n), dsa(GK_F32, sa.size()), dsb(GK_F32, sb.size());
    DeviceTensor dbias(GK_F32, bias.size()), dd(c.d_dtype, hc.n);
    GK_CUDA_OK(da.upload(ha));
    GK_CUDA_OK(db.upload(hb));
    GK_CUDA_OK(cudaMemcpy(dsa.ptr(), sa.data(), sa.size() * 4, cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemcpy(dsb.ptr(), sb.data(), sb.size() * 4, cudaMemcpyHostToDevice));
    if (c.bias) GK_CUDA_OK(cudaMemcpy(dbias.ptr(), bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
    GK_CUDA_OK(dd.poison());
    if (c.beta != 0.0f) GK_CUDA_OK(dd.upload(hc)); // C is D, in place
    const int block = c.mode_a == GK_FP8_BLOCK;
    size_t ws_bytes = c.workspace ? (size_t)16 * c.m * c.n * 4 + 256 : 0;
    DeviceTensor ws(GK_E4M3, ws_bytes);
    const cudaError_t e = gk_fp8_gemm_ex(c.config, c.splits, dd.ptr(), c.d_dtype, ldd, (const gk_e4m3 *)da.ptr(), lda,
                                         (const float *)dsa.ptr(), c.mode_a, (const gk_e4m3 *)db.ptr(), ldb,
                                         (const float *)dsb.ptr(), c.mode_b, c.beta != 0.0f ? dd.ptr() : NULL, ldd,
                                         c.bias ? (const float *)dbias.ptr() : NULL, c.m, c.n, c.k, c.alpha, c.beta,
                                         c.act, c.workspace ? ws.ptr() : NULL, ws_bytes, 0);
    EXPECT_EQ(e, cudaSuccess) << gk_failure_reason();
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(c.d_dtype, hc.n);
    GK_CUDA_OK(dd.download(&got));
    EXPECT_EQ(dd.guard_damage(), 0u) << "writes outside D";
    gk_test_expect_written(got, c.m, c.n, ldd, true);

    // the reference
    std::vector<double> av(ha.n), bv(hb.n);
    for (size_t i = 0; i < ha.n; i++) av[i] = ha.get(i);
    for (size_t i = 0; i < hb.n; i++) bv[i] = hb.get(i);
    const GkTol tol = gk_test_tol(c.d_dtype);
    std::atomic<int64_t> bad(0);
    std::vector<double> scratch, &out = outp ? *outp : scratch;
    out.assign((size_t)(c.m * c.n), 0.0);
    gk_test_parallel_items((size_t)c.m, (size_t)(c.n * c.k), [&](size_t r0, size_t r1) {
        int64_t local_bad = 0;
        for (size_t r = r0; r < r1; r++)
            for (int64_t j = 0; j < c.n; j++) {
                double sum = 0.0, mag = 0.0;
                const double *ar = av.data() + r * lda, *br = bv.data() + j * ldb;
                if (block) {
                    for (int64_t q = 0; q < kb; q++) {
                        double part = 0.0, pmag = 0.0;
                        for (int64_t kk = q * 128; kk < c.k && kk < (q + 1) * 128; kk++) {
                            part += ar[kk] * br[kk];
                            pmag += std::fabs(ar[kk] * br[kk]);
                        }
                        const double s = (double)sa[r * kb + q] * sb[(j / 128) * kb + q];
                        sum += part * s;
                        mag += pmag * std::fabs(s);
                    }
                } else {
                    for (int64_t kk = 0; kk < c.k; kk++) {
                        sum += ar[kk] * br[kk];
                        mag += std::fabs(ar[kk] * br[kk]);
                    }
                    const double s = (double)sa[c.mode_a == GK_FP8_ROW ? r : 0] * sb[c.mode_b == GK_FP8_ROW ? j : 0];
                    sum *= s;
                    mag *= std::fabs(s);
                }
                double v = c.alpha * sum;
                if (c.beta != 0.0f) v += c.beta * hc.get(r * ldd + j);
                if (c.bias) v += bias[j];
                v = act_ref(c.act, v);
                const double g = got.get(r * ldd + j);
                out[r * c.n + j] = g;
                const double slack = std::ldexp(std::fabs(c.alpha) * mag, -10) * 1.25;
                bool ok;
                if (std::isnan(v)) ok = std::isnan(g);
                else ok = !std::isnan(g) && std::fabs(g - v) <= tol.atol + tol.rtol * std::fabs(v) + slack;
                if (!ok && local_bad++ < 3)
                    printf("  (%zu, %lld): got %.6g, want %.6g (slack %.3g)\n", r, (long long)j, g, v, slack);
            }
        bad += local_bad;
    });
    EXPECT_EQ(bad.load(), 0) << "m " << c.m << " n " << c.n << " k " << c.k << " modes " << c.mode_a << "/" << c.mode_b
                             << " d " << gk_dtype_name(c.d_dtype) << " config " << c.config << " splits " << c.splits;
}

} // namespace

TEST(Fp8Gpu, ShapesAndScales)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(1);
    const int64_t ms[] = {1, 3, 17, 129, 1000};
    const int modes[][2] = {{GK_FP8_TENSOR, GK_FP8_TENSOR}, {GK_FP8_ROW, GK_FP8_ROW}, {GK_FP8_ROW, GK_FP8_TENSOR},
                            {GK_FP8_TENSOR, GK_FP8_ROW}, {GK_FP8_BLOCK, GK_FP8_BLOCK}};
    int i = 0;
    for (int64_t m : ms)
        for (const auto &md : modes) {
            Case c;
            c.m = m;
            c.n = (i % 3 == 0) ? 333 : (i % 3 == 1) ? 257 : 72;
            c.k = (i % 5 == 4) ? 401 : (i % 2) ? 1040 : 400; // K past a 128 multiple (zero fill), odd K
            c.mode_a = md[0];
            c.mode_b = md[1];
            c.d_dtype = i % 3 == 0 ? GK_BF16 : i % 3 == 1 ? GK_F16 : GK_F32;
            run_case(c, rng);
            i++;
            if (HasFailure()) return;
        }
}

TEST(Fp8Gpu, EpilogueAndStrides)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(2);
    for (int block = 0; block < 2; block++) {
        Case c;
        c.m = 130;
        c.n = 300;
        c.k = 528;
        c.mode_a = c.mode_b = block ? GK_FP8_BLOCK : GK_FP8_ROW;
        c.lda_pad = 16;
        c.ldb_pad = 48;
        c.ldd_pad = 5;
        c.alpha = 0.75f;
        c.beta = -0.5f;
        c.bias = true;
        c.act = GK_ACT_SILU;
        c.d_dtype = block ? GK_F32 : GK_BF16;
        run_case(c, rng);
    }
}

TEST(Fp8Gpu, EveryConfigAndSplits)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(3);
    for (int cfg = 0; cfg < gk_fp8_config_count(); cfg++) {
        const gk_fp8_config f = gk_fp8_config_info(cfg);
        for (int splits : {1, 3}) {
            Case c;
            c.m = 200;
            c.n = 264 + 8 * cfg;
            c.k = 2000;
            c.mode_a = f.block ? GK_FP8_BLOCK : GK_FP8_ROW;
            c.mode_b = f.block ? GK_FP8_BLOCK : GK_FP8_TENSOR;
            c.config = cfg;
            c.splits = splits;
            c.d_dtype = GK_F32;
            run_case(c, rng);
            if (HasFailure()) return;
        }
    }
}

// The persistent configurations, where a block walks several tiles (ping-pong: its two consumers
// take turns): more tiles than two rounds of the SMs with a partial last tile column, K of 3
// k-tiles (fewer than the stages; 1 a split) and of 8, in 1, 3 and 2 splits.
TEST(Fp8Gpu, PersistentConfigsWalkManyTiles)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(5);
    int v = 0;
    for (int cfg = 0; cfg < gk_fp8_config_count(); cfg++) {
        const gk_fp8_config f = gk_fp8_config_info(cfg);
        if (!f.persistent) continue;
        const int64_t shapes[3][4] = {{1100, 4100, 300, 1}, {1100, 4100, 300, 3}, {700, 4100, 1000, 2}};
        for (const auto &sh : shapes) {
            Case c;
            c.m = sh[0];
            c.n = sh[1];
            c.k = sh[2];
            c.splits = (int)sh[3];
            c.mode_a = f.block ? GK_FP8_BLOCK : v % 2 ? GK_FP8_ROW : GK_FP8_TENSOR;
            c.mode_b = f.block ? GK_FP8_BLOCK : GK_FP8_ROW;
            c.config = cfg;
            c.d_dtype = v % 2 ? GK_F16 : GK_BF16;
            c.bias = v % 2 == 0;
            c.act = v % 2 ? GK_ACT_NONE : GK_ACT_RELU;
            c.ldd_pad = v % 3 ? 4 : 0; // 4104: rows 16-byte aligned (the ping-pong tile's 16-bit pass)
            v++;
            run_case(c, rng);
            if (HasFailure()) return;
        }
    }
}

TEST(Fp8Gpu, LargeKDeterministic)
{
    GK_REQUIRE_FP8_GEMM();
    for (int block = 0; block < 2; block++) {
        Case c;
        c.m = 64;
        c.n = 136;
        c.k = 8192; // split by the dispatcher (few tiles)
        c.mode_a = c.mode_b = block ? GK_FP8_BLOCK : GK_FP8_ROW;
        c.d_dtype = GK_F32;
        GkRng r1(4 + block), r2(4 + block);
        std::vector<double> x, y;
        run_case(c, r1, &x);
        run_case(c, r2, &y);
        EXPECT_EQ(memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0) << "two runs differ";
    }
}

TEST(Fp8Gpu, NanScaleStaysInItsBlock)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(6);
    // the reference has NaN exactly where the scale reaches; run_case checks NaN against NaN and
    // finite against finite, so NaN anywhere else fails
    Case c;
    c.m = 40;
    c.n = 300;
    c.k = 384;
    c.d_dtype = GK_F32;
    c.mode_a = c.mode_b = GK_FP8_ROW;
    c.nan_operand = 0;
    c.nan_at = 7;
    run_case(c, rng);
    c.nan_operand = 1;
    c.nan_at = 299;
    run_case(c, rng);
    c.mode_a = c.mode_b = GK_FP8_BLOCK;
    c.nan_operand = 1;
    c.nan_at = 1 * 3 + 2; // B block (column block 1, k block 2)
    run_case(c, rng);
    c.nan_operand = 0;
    c.nan_at = 5 * 3 + 0; // A row 5, k block 0
    run_case(c, rng);
}

TEST(Fp8Gpu, SaturatedCodesExact)
{
    GK_REQUIRE_FP8_GEMM();
    // +-448 codes (0x7e, 0xfe) everywhere: sums of 448^2 over K = 256 are exact in fp32
    const int64_t m = 5, n = 9, k = 256;
    DeviceTensor a(GK_E4M3, m * k), b(GK_E4M3, n * k), d(GK_F32, m * n);
    std::vector<uint8_t> ha(m * k), hb(n * k);
    for (int64_t i = 0; i < m * k; i++) ha[i] = (i / k) % 2 ? 0xfe : 0x7e;
    for (int64_t i = 0; i < n * k; i++) hb[i] = 0x7e;
    GK_CUDA_OK(cudaMemcpy(a.ptr(), ha.data(), ha.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(cudaMemcpy(b.ptr(), hb.data(), hb.size(), cudaMemcpyHostToDevice));
    GK_CUDA_OK(d.poison());
    ASSERT_EQ(gk_fp8_gemm(d.ptr(), GK_F32, n, (const gk_e4m3 *)a.ptr(), k, NULL, GK_FP8_TENSOR,
                          (const gk_e4m3 *)b.ptr(), k, NULL, GK_FP8_TENSOR, NULL, 0, NULL, m, n, k, 1.0f, 0.0f,
                          GK_ACT_NONE, NULL, 0, 0),
              cudaSuccess)
        << gk_failure_reason();
    HostTensor got(GK_F32, m * n);
    GK_CUDA_OK(d.download(&got));
    for (int64_t r = 0; r < m; r++)
        for (int64_t j = 0; j < n; j++) EXPECT_EQ(got.get(r * n + j), (r % 2 ? -1.0 : 1.0) * 448.0 * 448.0 * k);
}

// gk_fp8_quantize against the manual: scale = amax / 448 of the cell (float), code = e4m3(x / scale).
TEST(Fp8Gpu, Quantize)
{
    GK_REQUIRE_GPU();
    GkRng rng(7);
    struct Q {
        int mode, block_rows, dtype, trans;
        int64_t rows, cols, ld_pad;
    };
    const Q qs[] = {{GK_FP8_TENSOR, 1, GK_BF16, 0, 37, 300, 3},  {GK_FP8_ROW, 1, GK_F32, 0, 130, 257, 0},
                    {GK_FP8_ROW, 1, GK_F16, 1, 100, 72, 8},      {GK_FP8_BLOCK, 1, GK_BF16, 0, 50, 400, 0},
                    {GK_FP8_BLOCK, 128, GK_BF16, 1, 300, 200, 2}, {GK_FP8_BLOCK, 128, GK_F32, 0, 129, 129, 0}};
    for (const Q &q : qs) {
        const int64_t xr = q.trans ? q.cols : q.rows, xc = q.trans ? q.rows : q.cols, ldx = xc + q.ld_pad;
        const int64_t ldo = q.cols + 16;
        HostTensor hx(q.dtype, (size_t)((xr - 1) * ldx + xc));
        hx.fill_uniform(rng, -3.0f, 3.0f);
        hx.set(5, NAN); // NaN codes as NaN, left out of its cell's amax
        const int64_t count = gk_fp8_scale_count(q.mode, q.block_rows, q.rows, q.cols);
        DeviceTensor dx(q.dtype, hx.n), dout(GK_E4M3, (size_t)((q.rows - 1) * ldo + q.cols)), ds(GK_F32, (size_t)count);
        GK_CUDA_OK(dx.upload(hx));
        GK_CUDA_OK(dout.poison());
        GK_CUDA_OK(ds.poison());
        ASSERT_EQ(gk_fp8_quantize((gk_e4m3 *)dout.ptr(), ldo, (float *)ds.ptr(), q.mode, q.block_rows, dx.ptr(), q.dtype,
                                  ldx, q.trans, q.rows, q.cols, 0),
                  cudaSuccess)
            << gk_failure_reason();
        HostTensor out(GK_E4M3, dout.n);
        std::vector<float> sc((size_t)count);
        GK_CUDA_OK(dout.download(&out));
        GK_CUDA_OK(cudaMemcpy(sc.data(), ds.ptr(), sc.size() * 4, cudaMemcpyDeviceToHost));
        EXPECT_EQ(dout.guard_damage(), 0u);
        EXPECT_EQ(ds.guard_damage(), 0u);
        auto xval = [&](int64_t r, int64_t c) { return (float)hx.get((size_t)(q.trans ? c * ldx + r : r * ldx + c)); };
        auto cell = [&](int64_t r, int64_t c) -> int64_t {
            if (q.mode == GK_FP8_TENSOR) return 0;
            if (q.mode == GK_FP8_ROW) return r;
            return r / q.block_rows * ((q.cols + 127) / 128) + c / 128;
        };
        std::vector<float> amax((size_t)count, 0.0f);
        for (int64_t r = 0; r < q.rows; r++)
            for (int64_t c = 0; c < q.cols; c++) {
                const float v = std::fabs(xval(r, c));
                if (v > amax[cell(r, c)]) amax[cell(r, c)] = v; // NaN compares false: left out
            }
        int64_t bad_scales = 0, bad_codes = 0, maxed = 0;
        for (int64_t i = 0; i < count; i++) {
            const float want = amax[i] > 0.0f ? amax[i] / 448.0f : 1.0f;
            bad_scales += sc[i] != want;
        }
        for (int64_t r = 0; r < q.rows; r++)
            for (int64_t c = 0; c < q.cols; c++) {
                const float s = amax[cell(r, c)] > 0.0f ? amax[cell(r, c)] / 448.0f : 1.0f;
                const uint8_t want = gk_f32_to_e4m3(xval(r, c) / s), g = out.bytes[(size_t)(r * ldo + c)];
                if (g != want && bad_codes++ < 3)
                    printf("  (%lld, %lld): code 0x%02x, want 0x%02x\n", (long long)r, (long long)c, g, want);
                maxed += (g & 0x7f) == 0x7e; // +-448: each cell's amax lands on the top code
            }
        EXPECT_EQ(bad_scales, 0) << "mode " << q.mode;
        EXPECT_EQ(bad_codes, 0) << "mode " << q.mode;
        EXPECT_GE(maxed, 1) << "no value reached +-448";
        gk_test_expect_written(out, q.rows, q.cols, ldo, true);
    }
}

// The chain the scales were made for: gk_quant_e4m3 (per-token scales) straight into the GEMM.
TEST(Fp8Gpu, QuantThenGemm)
{
    GK_REQUIRE_FP8_GEMM();
    GkRng rng(8);
    const int64_t m = 33, n = 200, k = 512;
    HostTensor hx(GK_BF16, m * k), hw(GK_BF16, n * k);
    hx.fill_uniform(rng, -2.0f, 2.0f);
    hw.fill_uniform(rng, -0.5f, 0.5f);
    DeviceTensor dx(GK_BF16, hx.n), dw(GK_BF16, hw.n), x8(GK_E4M3, m * k), w8(GK_E4M3, n * k);
    DeviceTensor sx(GK_F32, m), sw(GK_F32, n), d(GK_F32, m * n);
    GK_CUDA_OK(dx.upload(hx));
    GK_CUDA_OK(dw.upload(hw));
    ASSERT_EQ(gk_quant_e4m3_bf16((gk_e4m3 *)x8.ptr(), k, (float *)sx.ptr(), (const gk_bf16 *)dx.ptr(), k, m, k, 0),
              cudaSuccess);
    ASSERT_EQ(gk_fp8_quantize((gk_e4m3 *)w8.ptr(), k, (float *)sw.ptr(), GK_FP8_ROW, 1, dw.ptr(), GK_BF16, k, 0, n, k, 0),
              cudaSuccess);
    GK_CUDA_OK(d.poison());
    ASSERT_EQ(gk_fp8_gemm(d.ptr(), GK_F32, n, (const gk_e4m3 *)x8.ptr(), k, (const float *)sx.ptr(), GK_FP8_ROW,
                          (const gk_e4m3 *)w8.ptr(), k, (const float *)sw.ptr(), GK_FP8_ROW, NULL, 0, NULL, m, n, k, 1.0f,
                          0.0f, GK_ACT_NONE, NULL, 0, 0),
              cudaSuccess)
        << gk_failure_reason();
    HostTensor got(GK_F32, m * n);
    GK_CUDA_OK(d.download(&got));
    // against the bf16 product: fp8 keeps 3 mantissa bits, so each term errs by up to 2^-4 relative;
    // over K random-sign terms the sum errs by ~2^-4 sqrt(K) |x w| (bound taken at 4 sigma)
    int64_t bad = 0;
    for (int64_t r = 0; r < m; r++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0.0, mag = 0.0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double p = hx.get(r * k + kk) * hw.get(j * k + kk);
                ref += p;
                mag += p * p;
            }
            const double g = got.get(r * n + j);
            bad += !(std::fabs(g - ref) <= 4.0 * 0.0625 * std::sqrt(mag) + 1e-3);
        }
    EXPECT_EQ(bad, 0);
}

TEST(Fp8Gpu, EmptyAndRefusals)
{
    GK_REQUIRE_GPU();
    DeviceTensor a(GK_E4M3, 64 * 64), b(GK_E4M3, 64 * 64), d(GK_F32, 64 * 64);
    GK_CUDA_OK(d.poison());
    // m == 0 and n == 0: nothing written
    EXPECT_EQ(gk_fp8_gemm(d.ptr(), GK_F32, 64, (const gk_e4m3 *)a.ptr(), 64, NULL, GK_FP8_TENSOR,
                          (const gk_e4m3 *)b.ptr(), 64, NULL, GK_FP8_TENSOR, NULL, 0, NULL, 0, 64, 64, 1.0f, 0.0f,
                          GK_ACT_NONE, NULL, 0, 0),
              cudaSuccess);
    HostTensor h(GK_F32, 64 * 64);
    GK_CUDA_OK(d.download(&h));
    EXPECT_EQ(gk_test_count_poison(h), h.n);
    // refused after the device query, nothing written: a configuration of the other scale kind; an
    // odd K on an mma.sync configuration (e4m3 read in pairs)
    for (int cfg = 0; cfg < gk_fp8_config_count(); cfg++) {
        const gk_fp8_config f = gk_fp8_config_info(cfg);
        EXPECT_EQ(gk_fp8_gemm_ex(cfg, 0, d.ptr(), GK_F32, 64, (const gk_e4m3 *)a.ptr(), 64, NULL, f.block ? GK_FP8_TENSOR : GK_FP8_BLOCK,
                                 (const gk_e4m3 *)b.ptr(), 64, NULL, f.block ? GK_FP8_TENSOR : GK_FP8_BLOCK, NULL, 0, NULL,
                                 64, 64, 64, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, 0),
                  cudaErrorInvalidValue)
            << f.name;
        if (!f.wgmma) {
            EXPECT_EQ(gk_fp8_gemm_ex(cfg, 0, d.ptr(), GK_F32, 64, (const gk_e4m3 *)a.ptr(), 64, NULL, GK_FP8_TENSOR,
                                     (const gk_e4m3 *)b.ptr(), 64, NULL, GK_FP8_TENSOR, NULL, 0, NULL, 64, 64, 63, 1.0f,
                                     0.0f, GK_ACT_NONE, NULL, 0, 0),
                      cudaErrorInvalidValue)
                << f.name;
            EXPECT_NE(std::string(gk_failure_reason()).find("is odd"), std::string::npos) << gk_failure_reason();
        }
    }
    GK_CUDA_OK(d.download(&h));
    EXPECT_EQ(gk_test_count_poison(h), h.n);
}
