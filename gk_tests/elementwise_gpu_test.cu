// GPU tests of gk_elementwise.cuh against CPU references in double. Skipped without a GPU.
// Fresh random inputs every run, outputs poisoned before each launch and checked fully written,
// the bytes around each output checked untouched, sizes on and off the 16-byte chunk grid, and
// pointers offset by 1 to 3 elements (together: head + vector body + tail; apart: scalar path).
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
#include "gk_tests/elementwise_cases.h"
#include "gk_tests/gk_ref.h"
#include "gk_tests/gk_rne.h"
#include "gk_tests/gk_test.h"

#include <algorithm>
#include <string>
#include <tuple>

struct Offsets {
    int out, a, b;
};

// How far an f32 SiLU or tanh-GELU output may be from the exact value at input x, relative to it.
// The kernels compute silu(x) = __fdividef(x, 1 + __expf(-x)) and gelu(x) = __fdividef(x, 1 +
// __expf(-2u)), u = 0.7978845608028654f * fmaf(0.044715f * x, x * x, x) (gk_core.cuh). With the
// CUDA programming guide's bounds, __expf(t) within 2 + floor(1.173 |t|) ulp and __fdividef(p, q)
// within 2 ulp for 2^-126 <= |q| <= 2^126, and an ulp at most 2^-23 of the value, each rounding
// 2^-24:
//   E = e^t (1 + d1), |d1| <= (2 + floor(1.173 |t|)) 2^-23, t = -x (SiLU) or -2u (GELU)
//   1 + E rounded: relative error <= |d1| s + 2^-24, s = e^t / (1 + e^t) (d1 is damped by s)
//   the division: 2 ulp, 2^-22; SwiGLU's product with up: 2^-24
//   GELU's u: the two constants rounded to fp32, x * x, 0.044715f * x, the fma and the product
//   with sqrt(2/pi): 6 roundings of 2^-24 (x and 0.044715 x^3 share a sign, so the sum does not
//   amplify them); e^(-2u) turns a relative error eta of u into |2u| eta: 6 |u| 2^-23, damped by s.
// So silu: ((2 + floor(1.173 |x|)) s + 3) 2^-23 (with the product), gelu: ((6 |u| + 2 +
// floor(2.346 |u|)) s + 2.5) 2^-23. Where 1 + e^t passes 2^126 __fdividef gives 0, and the exact
// value, |x| / (1 + e^t) < 88 2^-126, is inside fp32's atol: returns 1 there (the absolute
// tolerance decides). For x in [-4, 4] the bound stays under 6e-6: fp32's 1e-5 holds.
static double ew_fast_math_rtol(int op, double x)
{
    if (op != GK_EW_SWIGLU && op != GK_EW_GELU_TANH) return 0.0;
    const double u = op == GK_EW_SWIGLU ? 0.0 : std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    const double t = op == GK_EW_SWIGLU ? -x : -2.0 * u;
    if (!std::isfinite(t) || t > 87.0) return 1.0;
    const double s = 1.0 / (1.0 + std::exp(-t));
    const double ulps = op == GK_EW_SWIGLU ? (2 + std::floor(1.173 * std::fabs(t))) * s + 3.0
                                           : (6 * std::fabs(u) + 2 + std::floor(1.173 * std::fabs(t))) * s + 2.5;
    return ulps * 0x1p-23;
}

// The tolerance for case c's output at first input x: its output dtype's (gk_test_tol), and for
// f32 SiLU and GELU the larger of that and the fast-math bound above.
static GkTol ew_tol(const EwCase &c, double x)
{
    GkTol t = gk_test_tol(c.dt_out);
    if (c.dt_out == GK_F32) t.rtol = std::max(t.rtol, ew_fast_math_rtol(c.op, x));
    return t;
}

// Runs one case at one size and pointer offsets; returns through gtest assertions.
static void run_case(const EwCase &c, int64_t n, Offsets off, float lo = -4.0f, float hi = 4.0f)
{
    SCOPED_TRACE(std::string(c.name) + " n=" + std::to_string(n) + " offsets out/a/b=" + std::to_string(off.out) +
                 "/" + std::to_string(off.a) + "/" + std::to_string(off.b));
    GkRng rng(0x1000 + (uint64_t)n * 31 + c.op * 7 + off.out);
    const int dt_a = c.in_place ? c.dt_out : c.dt0;
    HostTensor ha(dt_a, n), hb(c.dt1 >= 0 ? c.dt1 : GK_F32, c.dt1 >= 0 ? n : 0);
    ha.fill_uniform(rng, lo, hi);
    hb.fill_uniform(rng, lo, hi);
    const float alpha = rng.uniform(-2, 2), beta = rng.uniform(-2, 2);

    DeviceTensor dout(c.dt_out, n, off.out), da(dt_a, c.in_place ? 0 : n, off.a),
        db(c.dt1 >= 0 ? c.dt1 : GK_F32, hb.n, off.b);
    ASSERT_TRUE(dout.ok() && da.ok() && db.ok());
    GK_CUDA_OK(dout.poison());
    if (c.in_place) {
        GK_CUDA_OK(dout.upload(ha)); // the residual is read and written in place
    } else {
        GK_CUDA_OK(da.upload(ha));
    }
    if (hb.n) GK_CUDA_OK(db.upload(hb));

    GK_CUDA_OK(c.call(dout.ptr(), c.in_place ? dout.ptr() : da.ptr(), db.ptr(), alpha, beta, n));
    GK_CUDA_OK(cudaDeviceSynchronize());

    HostTensor got(c.dt_out, n);
    GK_CUDA_OK(dout.download(&got));
    if (!c.in_place) EXPECT_EQ(gk_test_count_poison(got), 0u) << "output elements never written";
    EXPECT_EQ(dout.guard_damage(), 0u) << "bytes written outside the output";

    std::vector<double> ref(n);
    gk_test_parallel_for(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++)
            ref[i] = c.op == GK_EW_CAST ? gk_ref_cast(ha.get(i), c.dt_out)
                                        : gk_ref_elementwise(c.op, ha.get(i), c.dt1 >= 0 ? hb.get(i) : 0.0, alpha, beta);
    });
    // the output dtype's tolerance; for f32 SiLU and GELU, at least the fast-math bound at the
    // inputs' extremes (it is largest at the most negative input; under fp32's 1e-5 for [-4, 4])
    GkTol tol = gk_test_tol(c.dt_out);
    for (float x : {lo, hi}) tol.rtol = std::max(tol.rtol, ew_tol(c, x).rtol);
    EXPECT_EQ(gk_test_compare(c.name, got, ref, tol), 0u);
}

class EwGpu : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

TEST_P(EwGpu, MatchesReferenceAtEveryOffset)
{
    GK_REQUIRE_GPU();
    const EwCase &c = kEwCases[std::get<0>(GetParam())];
    const int64_t n = std::get<1>(GetParam());
    const Offsets offs[] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {1, 0, 2}, {3, 2, 0}, {0, 3, 1}};
    for (const Offsets &o : offs) {
        run_case(c, n, o);
        if (HasFatalFailure()) return;
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, EwGpu,
                         ::testing::Combine(::testing::Range(0, kNumEwCases),
                                            ::testing::Values<int64_t>(1, 7, 4099, 65536 + 5)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int64_t>> &i) {
                             return std::string(kEwCases[std::get<0>(i.param)].name) + "_n" +
                                    std::to_string(std::get<1>(i.param));
                         });

// 2^28 elements (1 GiB of fp32 per operand): the grid-stride loop runs many rounds.
class EwGpuHuge : public ::testing::TestWithParam<int> {};

TEST_P(EwGpuHuge, TwoToThe28)
{
    GK_REQUIRE_GPU();
    const EwCase &c = kEwCases[GetParam()];
    run_case(c, (int64_t)1 << 28, Offsets{1, 1, 1});
}

INSTANTIATE_TEST_SUITE_P(All, EwGpuHuge, ::testing::Range(0, kNumEwCases),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(kEwCases[i.param].name); });

// Past 2^31 elements: 64-bit indexing. bf16 add over 2^31 + 9 elements (4 GiB per operand);
// the reference is computed on the fly to keep host memory at the three buffers.
TEST(EwGpuHuge, AddBf16Past2To31)
{
    GK_REQUIRE_GPU();
    const int64_t n = ((int64_t)1 << 31) + 9;
    size_t free_b = 0, total_b = 0;
    GK_CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < (size_t)(3 * n * 2 + (1 << 30))) GK_TEST_SKIP("needs 13 GiB of free device memory");
    GkRng rng(77);
    HostTensor ha(GK_BF16, n), hb(GK_BF16, n);
    ha.fill_uniform(rng, -4, 4);
    hb.fill_uniform(rng, -4, 4);
    DeviceTensor dout(GK_BF16, n, 1), da(GK_BF16, n, 1), db(GK_BF16, n, 1);
    ASSERT_TRUE(dout.ok() && da.ok() && db.ok());
    GK_CUDA_OK(dout.poison());
    GK_CUDA_OK(da.upload(ha));
    GK_CUDA_OK(db.upload(hb));
    GK_CUDA_OK(gk_add_bf16((gk_bf16 *)dout.ptr(), (const gk_bf16 *)da.ptr(), (const gk_bf16 *)db.ptr(), n, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(GK_BF16, n);
    GK_CUDA_OK(dout.download(&got));
    const GkTol tol = gk_test_tol(GK_BF16);
    std::atomic<int64_t> bad(0), first_bad(n);
    gk_test_parallel_for(n, [&](size_t b, size_t e) {
        int64_t c = 0;
        for (size_t i = b; i < e; i++)
            if (!gk_test_close(got.get(i), ha.get(i) + hb.get(i), tol)) {
                if (c++ == 0 && (int64_t)i < first_bad) first_bad = i; // a rough first: enough to start from
            }
        bad += c;
    });
    if (bad) printf("  first mismatch near %lld: got %g want %g\n", (long long)first_bad.load(),
                    got.get(first_bad), ha.get(first_bad) + hb.get(first_bad));
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(dout.guard_damage(), 0u);
}

// Casts over magnitudes that stress rounding and overflow: f32 -> f16 at or past 65520 becomes
// inf, as an IEEE round-to-nearest cast does (gk_ref_cast); f32 -> bf16 keeps range.
TEST(EwGpu, CastsOverWideRange)
{
    GK_REQUIRE_GPU();
    for (const EwCase &c : kEwCases) {
        if (c.op != GK_EW_CAST) continue;
        run_case(c, 100003, Offsets{0, 0, 0}, -7e4f, 7e4f);
        if (HasFatalFailure()) return;
    }
}

// The casts are exactly defined: each output is bit-exact against the independent round-to-
// nearest-even reference (gk_rne.h), NaN for NaN. From f32: the probe set (ties and their
// neighbours at every rounding position of every exponent, subnormals, overflow, +-0, +-inf,
// NaNs) and 2^20 random bit patterns; from bf16 and f16: every one of the 65536 codes, in both
// halves of a 32-bit word. Each runs with pointer offsets that take the vector body (gk_pack_f32
// and gk_unpack_f32, with a scalar head and tail) and offsets that never line up (all scalar:
// gk_store1_f32 and gk_load1_f32); the test checks that both paths ran. Each call runs twice, the
// output filled first with NaN bytes and then with zeros, so an element left unwritten is caught.
static GkRneFormat ew_rne_format(int dt) { return dt == GK_BF16 ? kGkRneBf16 : kGkRneF16; }

TEST(EwGpu, CastsBitExact)
{
    GK_REQUIRE_GPU();
    const std::vector<uint32_t> probe = gk_rne_probe_f32(gk_test_seed(), (size_t)1 << 20);
    for (const EwCase &c : kEwCases) {
        if (c.op != GK_EW_CAST) continue;
        SCOPED_TRACE(c.name);
        const int si = gk_dtype_size(c.dt0), so = gk_dtype_size(c.dt_out);
        // the input codes, and each one's exact fp32 value (bits)
        std::vector<uint32_t> in_codes, in_f32;
        if (c.dt0 == GK_F32) {
            in_codes = probe;
            in_f32 = probe;
        } else {
            for (int rep = 0; rep < 2; rep++) {
                if (rep) in_codes.push_back(0x3c00u); // shifts every code into the other half
                for (uint32_t k = 0; k < 65536; k++) in_codes.push_back(k);
            }
            for (uint32_t k : in_codes) in_f32.push_back(gk_rne_to_f32(k, ew_rne_format(c.dt0)));
        }
        const int64_t n = (int64_t)in_codes.size();
        std::vector<unsigned char> in_bytes(n * si);
        for (int64_t i = 0; i < n; i++) memcpy(&in_bytes[i * si], &in_codes[i], si); // little-endian: the low bytes
        std::vector<uint32_t> want(n);
        for (int64_t i = 0; i < n; i++)
            want[i] = c.dt_out == GK_F32 ? in_f32[i] : gk_rne_from_f32(in_f32[i], ew_rne_format(c.dt_out));

        const Offsets offs[] = {{0, 0, 0}, {3, 3, 0}, {1, 0, 0}, {0, 1, 0}, {1, 3, 0}};
        bool ran_vector = false, ran_scalar = false;
        for (const Offsets &o : offs) {
            SCOPED_TRACE("offsets out/in " + std::to_string(o.out) + "/" + std::to_string(o.a));
            DeviceTensor din(c.dt0, n, o.a), dout(c.dt_out, n, o.out);
            ASSERT_TRUE(din.ok() && dout.ok());
            GK_CUDA_OK(cudaMemcpy(din.ptr(), in_bytes.data(), in_bytes.size(), cudaMemcpyHostToDevice));
            const int64_t head = gk_ew_head(gk_ew_vec(c.dt_out, c.dt0, -1), dout.ptr(), c.dt_out, din.ptr(), c.dt0,
                                            nullptr, -1);
            (head >= 0 ? ran_vector : ran_scalar) = true;
            // twice, the output filled with 0xff bytes (NaN) and then 0x00 (+0) first: an element
            // left unwritten fails at least one run, whatever its NaN encoding or value
            for (int fill : {0xff, 0x00}) {
                GK_CUDA_OK(dout.poison());
                GK_CUDA_OK(cudaMemset(dout.ptr(), fill, dout.bytes()));
                GK_CUDA_OK(c.call(dout.ptr(), din.ptr(), nullptr, 1.0f, 1.0f, n));
                GK_CUDA_OK(cudaDeviceSynchronize());
                std::vector<unsigned char> out_bytes(n * so);
                GK_CUDA_OK(cudaMemcpy(out_bytes.data(), dout.ptr(), out_bytes.size(), cudaMemcpyDeviceToHost));
                EXPECT_EQ(dout.guard_damage(), 0u) << "bytes written outside the output";
                int64_t bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    uint32_t g = 0;
                    memcpy(&g, &out_bytes[i * so], so);
                    if (so == 4 ? gk_rne_same_f32(g, want[i]) : gk_rne_same(g, want[i], ew_rne_format(c.dt_out))) continue;
                    if (bad++ < 8)
                        printf("  %s element %lld: in 0x%0*x -> got 0x%0*x, want 0x%0*x\n", c.name, (long long)i,
                               2 * si, in_codes[i], 2 * so, g, 2 * so, want[i]);
                }
                EXPECT_EQ(bad, 0) << "of " << n << " elements (" << (head >= 0 ? "vector body" : "all scalar")
                                  << ", output filled with 0x" << std::hex << fill << " first)";
            }
        }
        EXPECT_TRUE(ran_vector && ran_scalar) << "the offsets did not take both the vector and the scalar path";
    }
}

// NaN and infinities pass through every op as the reference says (NaN never passes as a number).
TEST(EwGpu, NanAndInfPropagate)
{
    GK_REQUIRE_GPU();
    const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, -1e30f, 3.0f};
    const int ns = sizeof(specials) / sizeof(specials[0]);
    for (const EwCase &c : kEwCases) {
        SCOPED_TRACE(c.name);
        const int64_t n = ns * ns;
        const int dt_a = c.in_place ? c.dt_out : c.dt0;
        HostTensor ha(dt_a, n), hb(c.dt1 >= 0 ? c.dt1 : GK_F32, n);
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < ns; j++) {
                ha.set(i * ns + j, specials[i]);
                hb.set(i * ns + j, specials[j]);
            }
        DeviceTensor dout(c.dt_out, n), da(dt_a, n), db(GK_F32, n);
        GK_CUDA_OK(dout.poison());
        GK_CUDA_OK(c.in_place ? dout.upload(ha) : da.upload(ha));
        if (c.dt1 >= 0) GK_CUDA_OK(cudaMemcpy(db.ptr(), hb.bytes.data(), hb.bytes.size(), cudaMemcpyHostToDevice));
        GK_CUDA_OK(c.call(dout.ptr(), c.in_place ? dout.ptr() : da.ptr(), db.ptr(), 1.0f, 1.0f, n));
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(c.dt_out, n);
        GK_CUDA_OK(dout.download(&got));
        for (int64_t i = 0; i < n; i++) {
            // the reference on the values as stored (f16 casts of 1e30 are inf, and so on)
            double r = gk_ref_elementwise(c.op, ha.get(i), c.dt1 >= 0 ? hb.get(i) : 0.0, 1.0, 1.0);
            HostTensor one(c.dt_out, 1);
            one.set(0, (float)r);
            double want = one.get(0), g = got.get(i);
            const GkTol tol = ew_tol(c, ha.get(i));
            if (std::isnan(want)) EXPECT_TRUE(std::isnan(g)) << "element " << i << " got " << g;
            else if (std::isinf(want)) EXPECT_EQ(g, want) << "element " << i;
            else EXPECT_NEAR(g, r, tol.atol + tol.rtol * std::fabs(r)) << "element " << i;
        }
    }
}

// Bad input writes nothing: the poisoned output stays poisoned and no error is left behind.
TEST(EwGpu, RejectedCallWritesNothing)
{
    GK_REQUIRE_GPU();
    const int64_t n = 4096;
    DeviceTensor out(GK_F32, n), a(GK_F32, n);
    GK_CUDA_OK(out.poison());
    // out overlaps a shifted view of itself: partial aliasing
    EXPECT_EQ(gk_add_f32((float *)out.ptr(), (const float *)out.ptr() + 3, (const float *)a.ptr(), n, 0),
              cudaErrorInvalidValue);
    EXPECT_EQ(gk_add_f32((float *)out.ptr(), (const float *)a.ptr(), (const float *)a.ptr(), -n, 0),
              cudaErrorInvalidValue);
    GK_CUDA_OK(cudaDeviceSynchronize());
    GK_CUDA_OK(cudaGetLastError());
    HostTensor got(GK_F32, n);
    GK_CUDA_OK(out.download(&got));
    EXPECT_EQ(gk_test_count_poison(got), (size_t)n);
}

// Packed SwiGLU: gate and up are the two halves of each row of x; strided rows, widths on and
// off the vector grid, and the padding between output rows must stay untouched.
struct PackedShape {
    int64_t rows, d, ldx_pad, ldo_pad;
};

TEST(EwGpuPacked, MatchesReference)
{
    GK_REQUIRE_GPU();
    const PackedShape shapes[] = {{1, 1, 0, 0},   {3, 7, 1, 2},     {5, 64, 0, 0},   {33, 64, 8, 8},
                                  {17, 4099, 3, 1}, {257, 8, 0, 0},  {2, 2048, 16, 8}, {4096, 136, 8, 0}};
    for (const EwPackedCase &c : kEwPackedCases)
        for (const PackedShape &s : shapes) {
            SCOPED_TRACE(std::string(c.name) + " rows=" + std::to_string(s.rows) + " d=" + std::to_string(s.d) +
                         " ldx=2d+" + std::to_string(s.ldx_pad) + " ldo=d+" + std::to_string(s.ldo_pad));
            const int64_t ldx = 2 * s.d + s.ldx_pad, ldo = s.d + s.ldo_pad;
            GkRng rng(s.rows * 1000 + s.d);
            HostTensor hx(c.dt, s.rows * ldx);
            hx.fill_uniform(rng, -4, 4);
            DeviceTensor dx(c.dt, hx.n), dout(c.dt, s.rows * ldo);
            GK_CUDA_OK(dx.upload(hx));
            GK_CUDA_OK(dout.poison());
            GK_CUDA_OK(c.call(dout.ptr(), ldo, dx.ptr(), ldx, s.rows, s.d));
            GK_CUDA_OK(cudaDeviceSynchronize());
            HostTensor got(c.dt, dout.n);
            GK_CUDA_OK(dout.download(&got));
            const EwCase as_flat = {c.name, GK_EW_SWIGLU, c.dt, c.dt, c.dt, false, nullptr};
            size_t bad = 0, pad_written = 0, unwritten = 0;
            for (int64_t r = 0; r < s.rows; r++)
                for (int64_t j = 0; j < ldo; j++) {
                    HostTensor one(c.dt, 1);
                    memcpy(one.bytes.data(), got.bytes.data() + (r * ldo + j) * gk_dtype_size(c.dt),
                           gk_dtype_size(c.dt));
                    bool poisoned = gk_test_count_poison(one) == 1;
                    if (j >= s.d) {
                        pad_written += !poisoned;
                        continue;
                    }
                    unwritten += poisoned;
                    double want = gk_ref_silu(hx.get(r * ldx + j)) * hx.get(r * ldx + s.d + j), g = one.get(0);
                    const GkTol tol = ew_tol(as_flat, hx.get(r * ldx + j));
                    if (!(std::fabs(g - want) <= tol.atol + tol.rtol * std::fabs(want))) {
                        if (bad < 5) printf("  row %lld col %lld: got %g want %g\n", (long long)r, (long long)j, g, want);
                        bad++;
                    }
                }
            EXPECT_EQ(bad, 0u);
            EXPECT_EQ(unwritten, 0u);
            EXPECT_EQ(pad_written, 0u) << "padding between output rows was written";
            EXPECT_EQ(dout.guard_damage(), 0u);
        }
}

// Same input, same bits: no atomics, no order dependence.
TEST(EwGpu, Deterministic)
{
    GK_REQUIRE_GPU();
    const int64_t n = 1000003;
    GkRng rng(5);
    HostTensor ha(GK_BF16, n), hb(GK_BF16, n);
    ha.fill_uniform(rng, -4, 4);
    hb.fill_uniform(rng, -4, 4);
    DeviceTensor a(GK_BF16, n), b(GK_BF16, n), o1(GK_BF16, n), o2(GK_BF16, n);
    GK_CUDA_OK(a.upload(ha));
    GK_CUDA_OK(b.upload(hb));
    GK_CUDA_OK(gk_swiglu_bf16((gk_bf16 *)o1.ptr(), (const gk_bf16 *)a.ptr(), (const gk_bf16 *)b.ptr(), n, 0));
    GK_CUDA_OK(gk_swiglu_bf16((gk_bf16 *)o2.ptr(), (const gk_bf16 *)a.ptr(), (const gk_bf16 *)b.ptr(), n, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor g1(GK_BF16, n), g2(GK_BF16, n);
    GK_CUDA_OK(o1.download(&g1));
    GK_CUDA_OK(o2.download(&g2));
    EXPECT_EQ(memcmp(g1.bytes.data(), g2.bytes.data(), g1.bytes.size()), 0);
}
