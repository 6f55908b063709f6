// GPU tests of gk_elementwise.cuh against CPU references in double. Skipped without a GPU.
// Fresh random inputs every run, outputs poisoned before each launch and checked fully written,
// the bytes around each output checked untouched, sizes on and off the 16-byte chunk grid, and
// pointers offset by 1 to 3 elements (together: head + vector body + tail; apart: scalar path).
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
#include "gk_tests/elementwise_cases.h"
#include "gk_tests/gk_ref.h"
#include "gk_tests/gk_test.h"

#include <string>
#include <tuple>

struct Offsets {
    int out, a, b;
};

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
    EXPECT_EQ(gk_test_compare(c.name, got, ref, gk_test_tol(c.dt_out)), 0u);
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
            if (std::isnan(want)) EXPECT_TRUE(std::isnan(g)) << "element " << i << " got " << g;
            else if (std::isinf(want)) EXPECT_EQ(g, want) << "element " << i;
            else EXPECT_NEAR(g, want, 1e-6 + 1.6e-2 * std::fabs(want)) << "element " << i;
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
            const GkTol tol = gk_test_tol(c.dt);
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
