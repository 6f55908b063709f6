// GPU tests of gk_reduce.cuh against the CPU reference in double (reduce_ref.h). Skipped without
// a GPU. Fresh random rows every run; outputs (and the residual and scales) poisoned before each
// launch; written columns checked written and the padding between rows checked untouched.
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
#include "gk_tests/gk_rne.h"
#include "gk_tests/gk_test.h"
#include "gk_tests/reduce_cases.h"
#include "gk_tests/reduce_ref.h"

#include <string>
#include <vector>

enum Fill { kUniform, kLarge, kNegInf, kNanRow };

struct RdRun {
    int64_t rows, cols;
    int64_t pad_x = 0, pad_o = 0; // row strides cols + pad (elements)
    Fill fill = kUniform;
    bool in_place = false;        // out == x (residual form: residual_out == residual)
    bool no_params = false;       // weight and bias NULL
};

// The inputs of one call as the host holds them, for check_rd.
struct RdRef {
    const HostTensor &x;
    int64_t ldx;
    const HostTensor &res; // the residual form's residual (row stride ldr), else empty
    int64_t ldr;
    const HostTensor &w, &b;
    bool no_params; // weight and bias NULL
    int64_t rows, cols;
    float scale; // softmax input scale
};

// The per-element slack of the quant forms' fp8 codes beyond half an e4m3 step, relative to the
// value in units of the row's scale: the fp32 math before the cast (the row's rstd, which the
// norm tests hold to fp32's tolerance, and a few roundings of fp32), and where RMSNorm + fp8
// holds x * weight rounded to T (bf16; gk_reduce.cuh), one rounding of T.
static double rd_quant_rtol(int op, int dt)
{
    double r = gk_test_tol(GK_F32).rtol;
    if (op == GK_RD_RMSNORM_QUANT && dt == GK_BF16) r += 0x1p-8;
    return r;
}

// Compares a call's outputs with the CPU reference in double: every output column written, at the
// tolerance of its dtype; the padding between output rows untouched (check_pad); the residual
// form's residual_out; the quant forms' per-row scales and fp8 codes. The codes must sit within
// half a step of the e4m3 grid (round to nearest) of the reference in units of the row's scale
// (saturated at +-448), plus the slack of the fp32 math before the cast (rd_quant_rtol). The codes
// are decoded by an independent reference (gk_rne.h), not by gk's own conversion.
static void check_rd(const RdCase &c, const RdRef &in, const HostTensor &got, int64_t ldo, bool check_pad,
                     const HostTensor &got_res, const HostTensor &got_scales)
{
    const bool quant = rd_is_quant(c.op), resid = c.op == GK_RD_RESIDUAL_RMSNORM;
    const int dt = c.dt, dto = quant ? GK_E4M3 : dt;
    const int64_t rows = in.rows, cols = in.cols, ldx = in.ldx, ldr = in.ldr;
    const GkTol tol = gk_test_tol(dt);
    const double q_rtol = rd_quant_rtol(c.op, dt);
    std::atomic<int64_t> bad(0), unwritten(0), pad_written(0), bad_res(0), bad_scale(0);
    gk_test_parallel_for(rows, [&](size_t r0, size_t r1) {
        std::vector<double> x(cols), w(cols), b(cols), y(cols);
        for (int64_t j = 0; j < cols; j++) {
            w[j] = in.w.get(j);
            b[j] = in.b.get(j);
        }
        HostTensor round1(dt, 1);
        for (size_t r = r0; r < r1; r++) {
            for (int64_t j = 0; j < cols; j++) {
                x[j] = in.x.get(r * ldx + j);
                if (resid) { // h = residual + x as stored in T
                    round1.set(0, (float)(in.res.get(r * ldr + j) + x[j]));
                    x[j] = round1.get(0);
                    if (!gk_test_close(got_res.get(r * ldr + j), x[j], tol)) bad_res++;
                }
            }
            // fp32 forms scale * x before subtracting the max: an absolute error of about an ulp of
            // the row's largest |scale * x|, which the tolerance of the softmax forms carries
            double big = 0;
            for (int64_t j = 0; j < cols; j++)
                if (std::isfinite(x[j])) big = std::max(big, std::fabs(in.scale * x[j]));
            const GkTol tol_row = c.op == GK_RD_LOG_SOFTMAX ? GkTol{4e-7 + big * 0x1p-21, tol.rtol}
                                                            : GkTol{1e-7, tol.rtol + big * 0x1p-21};
            double qscale = 0;
            gk_ref_row(c.op, x.data(), (int)cols, in.no_params ? nullptr : w.data(), in.no_params ? nullptr : b.data(),
                       1e-5, in.scale, y.data(), &qscale);
            const double s_got = quant ? got_scales.get(r) : 1.0;
            // the scale is max|y| / 448 in fp32: fp32's tolerance, plus one rounding of T where
            // RMSNorm + fp8 takes max|x * weight| of values rounded to T (bf16)
            if (quant && !(std::fabs(s_got - qscale) <= q_rtol * qscale)) {
                if (bad_scale++ < 4) printf("  row %zu scale %.9g want %.9g\n", r, s_got, qscale);
            }
            for (int64_t j = 0; j < ldo; j++) {
                const int64_t i = r * ldo + j;
                const unsigned char *byte = got.bytes.data() + i * gk_dtype_size(dto);
                bool poisoned = true;
                for (int k = 0; k < gk_dtype_size(dto); k++) poisoned = poisoned && byte[k] == 0xff;
                if (j >= cols) {
                    if (check_pad) pad_written += !poisoned;
                    continue;
                }
                unwritten += poisoned;
                bool ok;
                double shown;
                if (quant) {
                    // the code against the reference in units of the row's scale
                    const double code = gk_rne_value(*byte, kGkRneE4m3);
                    const double v = std::max(-448.0, std::min(448.0, y[j] / s_got));
                    const double allowed = gk_rne_e4m3_half_step(std::fabs(v) * (1 + q_rtol)) + q_rtol * std::fabs(v);
                    ok = std::isnan(y[j]) ? std::isnan(code) : std::fabs(code - v) <= allowed;
                    shown = code * s_got;
                } else {
                    shown = got.get(i);
                    ok = gk_test_close(shown, y[j], c.op == GK_RD_SOFTMAX || c.op == GK_RD_LOG_SOFTMAX ? tol_row : tol);
                }
                if (!ok && bad++ < 6)
                    printf("  row %zu col %lld: got %.9g want %.9g%s\n", r, (long long)j, shown, y[j],
                           quant ? " (fp8 code times the row's scale)" : "");
            }
        }
    });
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(unwritten.load(), 0) << "output columns never written";
    EXPECT_EQ(pad_written.load(), 0) << "padding between output rows was written";
    EXPECT_EQ(bad_res.load(), 0) << "residual_out differs from residual + x";
    EXPECT_EQ(bad_scale.load(), 0) << "per-row scales";
}

static void run_rd(const RdCase &c, const RdRun &p)
{
    SCOPED_TRACE(std::string(c.name) + " rows=" + std::to_string(p.rows) + " cols=" + std::to_string(p.cols) +
                 " pad_x=" + std::to_string(p.pad_x) + " pad_o=" + std::to_string(p.pad_o) + " fill=" +
                 std::to_string(p.fill) + (p.in_place ? " in place" : "") + (p.no_params ? " no weight" : ""));
    const bool quant = rd_is_quant(c.op), resid = c.op == GK_RD_RESIDUAL_RMSNORM;
    const bool in_place = p.in_place && !quant;
    const int dt = c.dt, dto = quant ? GK_E4M3 : dt;
    const int64_t rows = p.rows, cols = p.cols, ldx = cols + p.pad_x;
    const int64_t ldo = in_place && !resid ? ldx : cols + p.pad_o, ldr = ldx;
    GkRng rng(0x7000 + cols * 13 + rows * 7 + c.op * 3 + dt + p.fill * 101);

    HostTensor hx(dt, rows * ldx), hres(dt, resid ? rows * ldr : 0), hw(dt, cols), hb(dt, cols);
    hx.fill_uniform(rng, p.fill == kLarge ? -1e4f : -4.0f, p.fill == kLarge ? 1e4f : 4.0f);
    hres.fill_uniform(rng, -4, 4);
    hw.fill_uniform(rng, 0.5f, 1.5f);
    hb.fill_uniform(rng, -1, 1);
    if (p.fill == kNegInf)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < cols; j++)
                if (r % 3 == 0 || j % 7 == 3) hx.set(r * ldx + j, -INFINITY);
    const int64_t nan_row = rows > 1 ? 1 : 0;
    if (p.fill == kNanRow) hx.set(nan_row * ldx + cols / 2, NAN);

    DeviceTensor dx(dt, hx.n), dres(dt, hres.n), dres_out(dt, resid && !in_place ? hres.n : 0), dw(dt, cols),
        db(dt, cols), dout(dto, in_place && !resid ? 0 : rows * ldo), dscales(GK_F32, rows);
    ASSERT_TRUE(dx.ok() && dres.ok() && dres_out.ok() && dw.ok() && db.ok() && dout.ok() && dscales.ok());
    GK_CUDA_OK(dx.upload(hx));
    if (resid) GK_CUDA_OK(dres.upload(hres));
    GK_CUDA_OK(dw.upload(hw));
    GK_CUDA_OK(db.upload(hb));
    GK_CUDA_OK(dout.poison());
    GK_CUDA_OK(dres_out.poison());
    GK_CUDA_OK(dscales.poison());

    RdArgs a;
    a.out = in_place && !resid ? dx.ptr() : dout.ptr();
    a.ldo = ldo;
    a.x = dx.ptr();
    a.ldx = ldx;
    a.w = p.no_params ? nullptr : dw.ptr();
    a.b = p.no_params ? nullptr : db.ptr();
    a.res = dres.ptr();
    a.res_out = in_place ? dres.ptr() : dres_out.ptr();
    a.ldr = ldr;
    a.scales = (float *)dscales.ptr();
    a.rows = rows;
    a.cols = cols;
    a.eps = 1e-5f;
    a.scale = c.op == GK_RD_SOFTMAX || c.op == GK_RD_LOG_SOFTMAX ? 0.75f : 1.0f;
    GK_CUDA_OK(c.call(a));
    GK_CUDA_OK(cudaDeviceSynchronize());

    HostTensor got(dto, rows * ldo), got_res(dt, resid ? rows * ldr : 0), got_scales(GK_F32, rows);
    if (in_place && !resid) GK_CUDA_OK(cudaMemcpy(got.bytes.data(), dx.ptr(), got.bytes.size(), cudaMemcpyDeviceToHost));
    else GK_CUDA_OK(dout.download(&got));
    if (resid) GK_CUDA_OK(cudaMemcpy(got_res.bytes.data(), a.res_out, got_res.bytes.size(), cudaMemcpyDeviceToHost));
    if (quant) GK_CUDA_OK(dscales.download(&got_scales));
    if (!(in_place && !resid)) EXPECT_EQ(dout.guard_damage(), 0u) << "bytes written outside out";

    RdRef ref = {hx, ldx, hres, ldr, hw, hb, p.no_params, rows, cols, a.scale};
    check_rd(c, ref, got, ldo, !(in_place && !resid), got_res, got_scales);
}

// Every op and dtype over the widths of the dispatcher's four variants and their edges, rows
// 1, 3 and 4096. The 4096-row matrices are capped at 2^22 elements (rows = 2^22 / cols past
// 1024 columns: 64 rows at 65536, 16 at 262144) to keep the host reference in seconds.
class RdGpu : public ::testing::TestWithParam<int> {};

TEST_P(RdGpu, WidthsAndRows)
{
    GK_REQUIRE_GPU();
    const RdCase &c = kRdCases[GetParam()];
    // 70001: a streaming row whose last vector is partial (the stash and registers share it)
    // 16000: a block of 512 on rows of whole 16-byte vectors (bf16, f16)
    const int64_t widths[] = {1, 7, 32, 100, 128, 1000, 1024, 4096, 8192, 12345, 16000, 65536, 70001, 262144};
    const int64_t row_counts[] = {1, 3, 4096};
    for (int64_t cols : widths)
        for (int64_t rows : row_counts) {
            const int64_t capped = rows * cols > (1 << 22) ? std::max<int64_t>(3, (1 << 22) / cols) : rows;
            RdRun p;
            p.rows = capped;
            p.cols = cols;
            run_rd(c, p);
            if (HasFatalFailure()) return;
        }
}

// Rows of magnitude 1e4, a NaN row (it must come out NaN), -inf entries and all -inf rows
// (softmax), strided rows (cols + 3: scalar path; cols + 8: vector path), in place, no weight.
TEST_P(RdGpu, SpecialRowsStridesInPlace)
{
    GK_REQUIRE_GPU();
    const RdCase &c = kRdCases[GetParam()];
    const bool softmax = c.op == GK_RD_SOFTMAX || c.op == GK_RD_LOG_SOFTMAX;
    // 300001: split over a cluster (sm_90), the last part shorter and its last vector partial
    for (int64_t cols : {7, 100, 1000, 4096, 12345, 65536, 300001}) {
        const int64_t rows = cols > 10000 ? 5 : 37;
        RdRun p;
        p.rows = rows;
        p.cols = cols;
        p.fill = kLarge;
        run_rd(c, p);
        p.fill = kNanRow;
        run_rd(c, p);
        if (softmax) {
            p.fill = kNegInf;
            run_rd(c, p);
        }
        p.fill = kUniform;
        p.pad_x = 3;
        p.pad_o = 5;
        run_rd(c, p);
        p.pad_x = 8;
        p.pad_o = 8;
        run_rd(c, p);
        p.pad_x = 0;
        p.pad_o = 0;
        p.in_place = true;
        run_rd(c, p);
        p.in_place = false;
        p.no_params = true;
        run_rd(c, p);
        if (HasFatalFailure()) return;
    }
}

// Rows of whole 16-byte vectors run kernels without per-vector checks (GK_RD_WHOLE_ROWS): their
// output is compared with the CPU reference at every width. The same call with the rows one
// element off alignment (register kernels: the same order of sums) or with the weight and bias
// one element off (every kernel) takes the checked kernels: the bits must match. (Softmax and the
// fp8 quantization have no weight, and rows one element off take other kernels past the register
// widths, so from 65536 columns on the reference alone checks them.)
TEST_P(RdGpu, WholeRowsMatchChecked)
{
    GK_REQUIRE_GPU();
    const RdCase &c = kRdCases[GetParam()];
    const bool quant = rd_is_quant(c.op), resid = c.op == GK_RD_RESIDUAL_RMSNORM;
    const bool weighted = c.op != GK_RD_SOFTMAX && c.op != GK_RD_LOG_SOFTMAX && c.op != GK_RD_QUANT;
    const int dt = c.dt, dto = quant ? GK_E4M3 : dt;
    // 65536: the stash kernel; 262144: split over a cluster (sm_90)
    for (int64_t cols : {128, 1000, 8192, 16000, 65536, 262144}) {
        const int64_t rows = cols > 16000 ? 8 : 64, n = rows * cols;
        GkRng rng(0x5100 + cols + c.op * 7 + dt);
        HostTensor hx(dt, n), hres(dt, n), hw(dt, cols), hb(dt, cols);
        hx.fill_uniform(rng, -4, 4);
        hres.fill_uniform(rng, -4, 4);
        hw.fill_uniform(rng, 0.5f, 1.5f);
        hb.fill_uniform(rng, -1, 1);
        // mode 0: aligned; 1: rows one element off; 2: weight and bias one element off
        HostTensor got[3] = {HostTensor(dto, n), HostTensor(dto, n), HostTensor(dto, n)};
        HostTensor res[3] = {HostTensor(dt, n), HostTensor(dt, n), HostTensor(dt, n)};
        HostTensor sc[3] = {HostTensor(GK_F32, rows), HostTensor(GK_F32, rows), HostTensor(GK_F32, rows)};
        for (int mode = 0; mode < 3; mode++) {
            if ((mode == 1 && cols > 16000) || (mode == 2 && !weighted)) continue;
            SCOPED_TRACE(std::string(c.name) + " cols=" + std::to_string(cols) + " mode=" + std::to_string(mode));
            const int off = mode == 1, woff = mode == 2;
            DeviceTensor dx(dt, n, off), dres(dt, n, off), dres_out(dt, n, off), dout(dto, n, off), dsc(GK_F32, rows);
            DeviceTensor dw(dt, cols, woff), db(dt, cols, woff);
            ASSERT_TRUE(dx.ok() && dres.ok() && dres_out.ok() && dout.ok() && dsc.ok() && dw.ok() && db.ok());
            GK_CUDA_OK(dx.upload(hx));
            GK_CUDA_OK(dres.upload(hres));
            GK_CUDA_OK(dw.upload(hw));
            GK_CUDA_OK(db.upload(hb));
            GK_CUDA_OK(dout.poison());
            GK_CUDA_OK(dres_out.poison());
            GK_CUDA_OK(dsc.poison());
            RdArgs a;
            a.out = dout.ptr();
            a.ldo = a.ldx = a.ldr = cols;
            a.x = dx.ptr();
            a.w = dw.ptr();
            a.b = db.ptr();
            a.res = dres.ptr();
            a.res_out = dres_out.ptr();
            a.scales = (float *)dsc.ptr();
            a.rows = rows;
            a.cols = cols;
            a.scale = 0.75f;
            GK_CUDA_OK(c.call(a));
            GK_CUDA_OK(cudaDeviceSynchronize());
            GK_CUDA_OK(dout.download(&got[mode]));
            if (resid) GK_CUDA_OK(dres_out.download(&res[mode]));
            if (quant) GK_CUDA_OK(dsc.download(&sc[mode]));
            if (mode == 0) { // against the CPU reference, at every width
                const RdRef ref = {hx, cols, hres, cols, hw, hb, false, rows, cols, a.scale};
                check_rd(c, ref, got[0], cols, true, res[0], sc[0]);
                continue;
            }
            EXPECT_TRUE(got[0].bytes == got[mode].bytes) << "outputs differ";
            EXPECT_TRUE(res[0].bytes == res[mode].bytes) << "residual outputs differ";
            EXPECT_TRUE(sc[0].bytes == sc[mode].bytes) << "scales differ";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, RdGpu, ::testing::Range(0, kNumRdCases),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kRdCases[i.param].name); });

// Same input, same bits, in every variant (no atomics; fixed reduction order).
TEST(RdGpuMisc, Deterministic)
{
    GK_REQUIRE_GPU();
    for (int64_t cols : {128, 8192, 65536, 262144}) { // 262144: split over a cluster (sm_90)
        const int64_t rows = 64;
        GkRng rng(cols);
        HostTensor hx(GK_BF16, rows * cols);
        hx.fill_uniform(rng, -4, 4);
        DeviceTensor x(GK_BF16, hx.n), o1(GK_BF16, hx.n), o2(GK_BF16, hx.n);
        GK_CUDA_OK(x.upload(hx));
        for (int op = 0; op < 2; op++) {
            for (DeviceTensor *o : {&o1, &o2}) {
                if (op == 0) GK_CUDA_OK(gk_softmax_bf16((gk_bf16 *)o->ptr(), cols, (const gk_bf16 *)x.ptr(), cols, rows, cols, 1.0f, 0));
                else GK_CUDA_OK(gk_layernorm_bf16((gk_bf16 *)o->ptr(), cols, (const gk_bf16 *)x.ptr(), cols, nullptr, nullptr, rows, cols, 1e-5f, 0));
            }
            GK_CUDA_OK(cudaDeviceSynchronize());
            HostTensor g1(GK_BF16, hx.n), g2(GK_BF16, hx.n);
            GK_CUDA_OK(o1.download(&g1));
            GK_CUDA_OK(o2.download(&g2));
            EXPECT_EQ(memcmp(g1.bytes.data(), g2.bytes.data(), g1.bytes.size()), 0) << "cols " << cols << " op " << op;
        }
    }
}

// A rejected call launches nothing: the poisoned output stays poisoned.
TEST(RdGpuMisc, RejectedCallWritesNothing)
{
    GK_REQUIRE_GPU();
    DeviceTensor x(GK_BF16, 4096), out(GK_BF16, 4096);
    GK_CUDA_OK(out.poison());
    EXPECT_EQ(gk_rmsnorm_bf16((gk_bf16 *)out.ptr(), 64, (const gk_bf16 *)x.ptr(), 63, nullptr, 64, 64, 1e-5f, 0),
              cudaErrorInvalidValue);
    EXPECT_EQ(gk_softmax_bf16((gk_bf16 *)out.ptr() + 1, 64, (const gk_bf16 *)out.ptr(), 64, 64, 64, 1.0f, 0),
              cudaErrorInvalidValue);
    GK_CUDA_OK(cudaDeviceSynchronize());
    GK_CUDA_OK(cudaGetLastError());
    HostTensor got(GK_BF16, 4096);
    GK_CUDA_OK(out.download(&got));
    EXPECT_EQ(gk_test_count_poison(got), 4096u);
}
