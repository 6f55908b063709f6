// GPU tests of gk_quant.cuh against quant_ref.h's independent references. Skipped without a GPU.
//
// Inputs are fresh random values every run: codes and 4-bit zero points uniform in 0..15, scales
// uniform in [0.5, 1.5) 2^-4 stored as bf16, f16 or f32 (the reference reads the stored values and
// rounds them to the activations' dtype with gk_rne.h's rounding), float zero points uniform in
// [0, 15), x uniform in [-1, 1) rounded to its dtype, C and bias uniform in [-1, 1). Gaps between
// the rows of strided operands hold NaN (a kernel that reads them writes NaN, which never passes);
// outputs are poisoned (all-ones bytes, NaN in every float dtype) before each launch and checked
// fully written, their gaps between rows and the guard bytes around them untouched.
//
//   converters  GPTQ (zero_offset 0 and 1, symmetric without qzeros) and AWQ packings built by the
//               reference -> gk_w4_from_gptq / gk_w4_from_awq -> q and zeros bit-exact against the
//               reference's canonical packing (outputs poisoned 0xff, then 0x00: every byte written)
//   prepack     the prepacked bytes against the manual's layout (quant_ref.h's gk_qref_prepack)
//   dequant     gk_w4_dequant bit-exact against the reference's value (fp32 math rounded once)
//   GEMM        against the double reference, every zero mode, x dtype, D dtype, epilogue and
//               stride variant, every configuration on forced numbers of warps, the dispatcher with and
//               without workspace (its large-M dequantize + gk_gemm path included); determinism;
//               NaN and inf scales confined to their output column; m == 0; refusals that need the
//               device (after the device query)
//
// GEMM tolerance: |got - ref| <= atol + rtol |ref| (gk_test_tol of D's dtype: the final rounding)
// plus 1.25 (the steepest slope of the activations) times the error before the epilogue:
//   2^-18 |alpha| S (S = sum_k |x_k w_k|: fp32 accumulation on the tensor cores, as gemm_gpu_test)
//   + 2^-22 (|alpha| S + |beta c| + |bias|) (the fp32 epilogue)
//   + |alpha| sqrt(K) max|x| max|w| 2^-8 (bf16) or 2^-11 (f16) where the weights are rounded to the
//     activations' dtype once each (float zero points: u s - z s formed in the dtype; the dequantize +
//     GEMM path: W stored in the dtype): K independent roundings of at most half a step each.
// (the wgmma kernel: every zero mode). With 4-bit zero points the mma.sync kernels multiply exact
// codes, so there the last term is 0. One
// missing 64-k unit errs by about 8 |x| |w| (|x w| ~ 0.3 each), far past these bounds.
#define GK_IMPLEMENTATION
#include "gk/gk_quant.cuh"
#include "gk_tests/gk_test.h"
#include "gk_tests/quant_ref.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// ------------------------------------------------------------------ helpers

// A device buffer of raw bytes (DeviceTensor of a 1-byte dtype: guard bytes, poison).
static std::unique_ptr<DeviceTensor> device_bytes(size_t bytes) { return std::unique_ptr<DeviceTensor>(new DeviceTensor(GK_E4M3, bytes)); }

static cudaError_t upload_bytes(DeviceTensor *t, const void *src, size_t bytes)
{
    return cudaMemcpy(t->ptr(), src, bytes, cudaMemcpyHostToDevice);
}

static std::vector<uint8_t> download_bytes(const DeviceTensor &t)
{
    std::vector<uint8_t> v(t.bytes());
    if (cudaMemcpy(v.data(), t.ptr(), v.size(), cudaMemcpyDeviceToHost) != cudaSuccess) v.assign(v.size(), 0xA5);
    return v;
}

// Failures recorded so far in the running test (each failed EXPECT is one part).
static int failures_now() { return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count(); }

// A test runs on past a failing case, up to a budget of failing cases (so that one broken
// combination neither hides the others nor floods the log); a fatal failure ends it.
struct FailBudget {
    int left;
    explicit FailBudget(int cases) : left(cases) {}
    bool spent(int before)
    {
        if (::testing::Test::HasFatalFailure()) return true;
        if (failures_now() > before) left--;
        return left <= 0;
    }
};

static std::vector<uint8_t> random_codes(size_t count, GkRng &rng)
{
    std::vector<uint8_t> v(count);
    for (uint8_t &e : v) e = (uint8_t)(rng.next() >> 60);
    return v;
}

static const char *zm_name(int zm)
{
    return zm == GK_W4_SYMMETRIC ? "symmetric" : zm == GK_W4_ZEROS_INT4 ? "int4 zeros" : "float zeros";
}

// A random weight of the given shape and modes.
static GkQRefWeight make_weight(int64_t n, int64_t k, int group, int zm, int dt, int sdt, GkRng &rng)
{
    GkQRefWeight w;
    w.n = n;
    w.k = k;
    w.group = group;
    w.zero_mode = zm;
    w.dtype = dt;
    w.scale_dtype = sdt;
    const int64_t groups = k / group;
    w.u = random_codes((size_t)(n * k), rng);
    w.zi = random_codes((size_t)(groups * n), rng);
    w.s_bits.resize((size_t)(groups * n));
    w.z_bits.resize((size_t)(groups * n));
    for (uint32_t &b : w.s_bits) b = gk_qref_encode(rng.uniform(0.5f, 1.5f) * 0.0625f, sdt);
    for (uint32_t &b : w.z_bits) b = gk_qref_encode(rng.uniform(0.0f, 15.0f), sdt);
    return w;
}

// The canonical inputs of a weight on the device, prepacked into a buffer of gk_w4_packed_bytes.
struct DevWeight {
    std::unique_ptr<DeviceTensor> packed;
    gk_w4_weight w;
};

static void prepack(const GkQRefWeight &hw, DevWeight *out)
{
    const int64_t n = hw.n, k = hw.k, groups = hw.groups();
    const std::vector<uint8_t> q = gk_qref_canonical_q(hw.u, n, k, hw.zero_mode == GK_W4_SYMMETRIC);
    const std::vector<uint8_t> s = gk_qref_bytes_of(hw.s_bits, hw.scale_dtype);
    std::vector<uint8_t> z;
    if (hw.zero_mode == GK_W4_ZEROS_INT4) z = gk_qref_canonical_zeros(hw.zi, groups, n);
    if (hw.zero_mode == GK_W4_ZEROS_FLOAT) z = gk_qref_bytes_of(hw.z_bits, hw.scale_dtype);
    auto dq = device_bytes(q.size()), ds = device_bytes(s.size()), dz = device_bytes(z.size());
    const size_t pb = gk_w4_packed_bytes(n, k, hw.group, hw.zero_mode);
    ASSERT_EQ((int64_t)pb, gk_qref_packed_bytes(n, k, hw.group, hw.zero_mode)) << gk_failure_reason();
    out->packed = device_bytes(pb);
    ASSERT_TRUE(dq->ok() && ds->ok() && dz->ok() && out->packed->ok());
    GK_CUDA_OK(out->packed->poison());
    GK_CUDA_OK(upload_bytes(dq.get(), q.data(), q.size()));
    GK_CUDA_OK(upload_bytes(ds.get(), s.data(), s.size()));
    if (!z.empty()) GK_CUDA_OK(upload_bytes(dz.get(), z.data(), z.size()));
    GK_CUDA_OK(gk_w4_prepack(out->packed->ptr(), hw.dtype, (const gk_int4x2 *)dq->ptr(), ds->ptr(), hw.scale_dtype,
                             z.empty() ? nullptr : dz->ptr(), n, k, hw.group, hw.zero_mode, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(out->packed->guard_damage(), 0u) << "the prepack wrote outside gk_w4_packed_bytes";
    out->w.packed = out->packed->ptr();
    out->w.n = n;
    out->w.k = k;
    out->w.group = hw.group;
    out->w.zero_mode = hw.zero_mode;
    out->w.dtype = hw.dtype;
}

// Groups valid for k: those of 32, 64, 128 that divide it, and k itself.
static std::vector<int> groups_for(int64_t k)
{
    std::vector<int> g;
    for (int c : {32, 64, 128})
        if (k % c == 0) g.push_back(c);
    if (k > 128) g.push_back((int)k);
    return g;
}

// ------------------------------------------------------------------ converters

enum ConvKind { kGptqV2, kGptqV1, kGptqSymmetric, kAwq };

static const char *conv_name(int c)
{
    static const char *const names[] = {"gptq zero_offset 0", "gptq zero_offset 1", "gptq symmetric", "awq"};
    return names[c];
}

static void run_convert(int kind, int64_t n, int64_t k, int group, GkRng &rng)
{
    SCOPED_TRACE(std::string(conv_name(kind)) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " group=" +
                 std::to_string(group));
    const int64_t groups = k / group;
    const std::vector<uint8_t> u = random_codes((size_t)(n * k), rng), z = random_codes((size_t)(groups * n), rng);
    std::vector<int32_t> qw, qz;
    if (kind == kAwq) {
        qw = gk_qref_awq_qweight(u, n, k);
        qz = gk_qref_awq_qzeros(z, groups, n);
    } else {
        qw = gk_qref_gptq_qweight(u, n, k);
        if (kind != kGptqSymmetric) qz = gk_qref_gptq_qzeros(z, groups, n, kind == kGptqV1 ? 1 : 0);
    }
    const bool sym = kind == kGptqSymmetric;
    const std::vector<uint8_t> want_q = gk_qref_canonical_q(u, n, k, sym);
    const std::vector<uint8_t> want_z = gk_qref_canonical_zeros(z, groups, n);
    auto dqw = device_bytes(qw.size() * 4), dqz = device_bytes(qz.size() * 4);
    auto q = device_bytes((size_t)(n * k / 2)), zo = device_bytes((size_t)(groups * n / 2));
    ASSERT_TRUE(dqw->ok() && dqz->ok() && q->ok() && zo->ok());
    GK_CUDA_OK(upload_bytes(dqw.get(), qw.data(), qw.size() * 4));
    if (!qz.empty()) GK_CUDA_OK(upload_bytes(dqz.get(), qz.data(), qz.size() * 4));
    for (int pass = 0; pass < 2; pass++) { // poison 0xff, then 0x00 (inside the views; guards stay 0xff)
        GK_CUDA_OK(q->poison());
        GK_CUDA_OK(zo->poison());
        if (pass == 1) {
            GK_CUDA_OK(cudaMemset(q->ptr(), 0, q->bytes()));
            GK_CUDA_OK(cudaMemset(zo->ptr(), 0, zo->bytes()));
        }
        const int32_t *qzp = qz.empty() ? nullptr : (const int32_t *)dqz->ptr();
        gk_int4x2 *zp = sym ? nullptr : (gk_int4x2 *)zo->ptr();
        if (kind == kAwq)
            GK_CUDA_OK(gk_w4_from_awq((gk_int4x2 *)q->ptr(), zp, (const int32_t *)dqw->ptr(), qzp, n, k, group, 0));
        else
            GK_CUDA_OK(gk_w4_from_gptq((gk_int4x2 *)q->ptr(), zp, (const int32_t *)dqw->ptr(), qzp, nullptr, n, k, group,
                                       kind == kGptqV1 ? 1 : 0, 0));
        GK_CUDA_OK(cudaDeviceSynchronize());
        const std::vector<uint8_t> got_q = download_bytes(*q), got_z = download_bytes(*zo);
        size_t bad = 0;
        for (size_t i = 0; i < got_q.size(); i++)
            if (got_q[i] != want_q[i] && bad++ < 4)
                ADD_FAILURE() << "pass " << pass << ": q byte " << i << " (row " << i / (k / 2) << ", k "
                              << 2 * (i % (k / 2)) << "): got 0x" << std::hex << (int)got_q[i] << ", want 0x"
                              << (int)want_q[i];
        EXPECT_EQ(bad, 0u) << "q bytes differ";
        bad = 0;
        for (size_t i = 0; i < got_z.size(); i++) {
            const uint8_t want = sym ? (pass ? 0x00 : 0xff) : want_z[i]; // symmetric: zeros untouched
            if (got_z[i] != want && bad++ < 4)
                ADD_FAILURE() << "pass " << pass << ": zeros byte " << i << " (group " << i / (n / 2) << ", n "
                              << 2 * (i % (n / 2)) << "): got 0x" << std::hex << (int)got_z[i] << ", want 0x"
                              << (int)want;
        }
        EXPECT_EQ(bad, 0u) << "zero-point bytes differ";
        EXPECT_EQ(q->guard_damage(), 0u) << "bytes written outside q";
        EXPECT_EQ(zo->guard_damage(), 0u) << "bytes written outside zeros";
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(QuantGpuConvert, GptqAndAwqMatchTheCanonicalPacking)
{
    GK_REQUIRE_GPU();
    GkRng rng(101);
    FailBudget budget(6);
    for (int64_t n : {24, 200, 1000})
        for (int64_t k : {64, 192, 4160})
            for (int group : groups_for(k))
                for (int kind : {kGptqV2, kGptqV1, kGptqSymmetric, kAwq}) {
                    const int before = failures_now();
                    run_convert(kind, n, k, group, rng);
                    if (budget.spent(before)) return;
                }
    run_convert(kGptqV1, 8, 512, 128, rng); // group 128, one 8-column word a row
    run_convert(kAwq, 8, 512, 128, rng);
}

// A GPTQ checkpoint with the identity g_idx converts as without one.
TEST(QuantGpuConvert, GptqIdentityGIdx)
{
    GK_REQUIRE_GPU();
    GkRng rng(102);
    const int64_t n = 40, k = 256;
    const int group = 64;
    const std::vector<uint8_t> u = random_codes((size_t)(n * k), rng), z = random_codes((size_t)(k / group * n), rng);
    const std::vector<int32_t> qw = gk_qref_gptq_qweight(u, n, k), qz = gk_qref_gptq_qzeros(z, k / group, n, 1);
    std::vector<int32_t> g_idx(k);
    for (int64_t i = 0; i < k; i++) g_idx[i] = (int32_t)(i / group);
    auto dqw = device_bytes(qw.size() * 4), dqz = device_bytes(qz.size() * 4);
    auto q = device_bytes((size_t)(n * k / 2)), zo = device_bytes((size_t)(k / group * n / 2));
    ASSERT_TRUE(dqw->ok() && dqz->ok() && q->ok() && zo->ok());
    GK_CUDA_OK(upload_bytes(dqw.get(), qw.data(), qw.size() * 4));
    GK_CUDA_OK(upload_bytes(dqz.get(), qz.data(), qz.size() * 4));
    GK_CUDA_OK(q->poison());
    GK_CUDA_OK(zo->poison());
    GK_CUDA_OK(gk_w4_from_gptq((gk_int4x2 *)q->ptr(), (gk_int4x2 *)zo->ptr(), (const int32_t *)dqw->ptr(),
                               (const int32_t *)dqz->ptr(), g_idx.data(), n, k, group, 1, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(download_bytes(*q) == gk_qref_canonical_q(u, n, k, 0));
    EXPECT_TRUE(download_bytes(*zo) == gk_qref_canonical_zeros(z, k / group, n));
    // act order: refused, nothing written
    std::swap(g_idx[3], g_idx[200]);
    GK_CUDA_OK(q->poison());
    EXPECT_EQ(gk_w4_from_gptq((gk_int4x2 *)q->ptr(), (gk_int4x2 *)zo->ptr(), (const int32_t *)dqw->ptr(),
                              (const int32_t *)dqz->ptr(), g_idx.data(), n, k, group, 1, 0),
              cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("g_idx"), std::string::npos) << gk_failure_reason();
    GK_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<uint8_t> after = download_bytes(*q);
    EXPECT_EQ(std::count(after.begin(), after.end(), (uint8_t)0xff), (long)after.size()) << "q written by a refused call";
}

// ------------------------------------------------------------------ prepack layout

TEST(QuantGpuPrepack, LayoutMatchesTheManual)
{
    GK_REQUIRE_GPU();
    GkRng rng(201);
    FailBudget budget(6);
    struct {
        int64_t n, k;
    } const shapes[] = {{8, 64}, {40, 192}, {24, 512}, {1000, 4160}, {16, 128}};
    int v = 0;
    for (const auto &sh : shapes)
        for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
            for (int dt : {GK_BF16, GK_F16})
                for (int sdt : {GK_BF16, GK_F16, GK_F32}) {
                    const std::vector<int> gs = groups_for(sh.k);
                    const int group = gs[(size_t)(v++) % gs.size()];
                    SCOPED_TRACE(std::string(zm_name(zm)) + " " + gk_dtype_name(dt) + " scales " + gk_dtype_name(sdt) +
                                 " n=" + std::to_string(sh.n) + " k=" + std::to_string(sh.k) + " group=" +
                                 std::to_string(group));
                    const int before = failures_now();
                    const GkQRefWeight hw = make_weight(sh.n, sh.k, group, zm, dt, sdt, rng);
                    DevWeight dw;
                    prepack(hw, &dw);
                    if (HasFatalFailure()) return;
                    std::vector<uint8_t> want, defined;
                    gk_qref_prepack(hw, &want, &defined);
                    const std::vector<uint8_t> got = download_bytes(*dw.packed);
                    ASSERT_EQ(got.size(), want.size());
                    const int64_t cb = gk_qref_codes_bytes(sh.n, sh.k);
                    size_t bad = 0;
                    for (size_t i = 0; i < got.size(); i++)
                        if (defined[i] && got[i] != want[i] && bad++ < 4)
                            ADD_FAILURE() << ((int64_t)i < cb ? "code" : "record") << " byte " << i << ": got 0x"
                                          << std::hex << (int)got[i] << ", want 0x" << (int)want[i];
                    EXPECT_EQ(bad, 0u);
                    if (budget.spent(before)) return;
                }
}

// ------------------------------------------------------------------ dequantization

static void run_dequant(int64_t n, int64_t k, int group, int zm, int dt, int sdt, int64_t lddst, int dst_off,
                        bool nan_scale, GkRng &rng)
{
    SCOPED_TRACE(std::string(zm_name(zm)) + " " + gk_dtype_name(dt) + " scales " + gk_dtype_name(sdt) + " n=" +
                 std::to_string(n) + " k=" + std::to_string(k) + " group=" + std::to_string(group) + " lddst=" +
                 std::to_string(lddst) + (nan_scale ? " (a NaN scale)" : ""));
    GkQRefWeight hw = make_weight(n, k, group, zm, dt, sdt, rng);
    int64_t nan_g = -1, nan_row = -1;
    if (nan_scale) {
        nan_g = (int64_t)(rng.next() % (uint64_t)hw.groups());
        nan_row = (int64_t)(rng.next() % (uint64_t)n);
        hw.s_bits[(size_t)(nan_g * n + nan_row)] = gk_qref_encode(NAN, sdt);
    }
    DevWeight dw;
    prepack(hw, &dw);
    if (::testing::Test::HasFatalFailure()) return;
    DeviceTensor dst(dt, (size_t)((n - 1) * lddst + k), dst_off);
    ASSERT_TRUE(dst.ok());
    GK_CUDA_OK(dst.poison());
    GK_CUDA_OK(gk_w4_dequant(dst.ptr(), lddst, &dw.w, 0));
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(dt, dst.n);
    GK_CUDA_OK(dst.download(&got));
    EXPECT_EQ(dst.guard_damage(), 0u) << "bytes written outside dst";
    const GkQRefTable t(hw);
    const GkRneFormat f = gk_qref_fmt(dt);
    std::atomic<int64_t> bad(0), gaps(0), nan_count(0);
    std::mutex mu;
    std::vector<std::string> first;
    gk_test_parallel_items((size_t)n, (size_t)lddst, [&](size_t r0, size_t r1) {
        int64_t b = 0, gp = 0, nn = 0;
        for (size_t r = r0; r < r1; r++) {
            const int64_t end = (int64_t)r + 1 < n ? lddst : k;
            for (int64_t c = 0; c < end; c++) {
                uint16_t code;
                memcpy(&code, &got.bytes[(size_t)(r * lddst + c) * 2], 2);
                if (c >= k) {
                    gp += code != 0xffff;
                    continue;
                }
                const uint32_t want = t.dequant_bits((int64_t)r, c);
                nn += gk_rne_is_nan_code(code, f);
                if (!gk_rne_same(code, want, f)) {
                    b++;
                    std::lock_guard<std::mutex> lock(mu);
                    if (first.size() < 6) {
                        char line[160];
                        snprintf(line, sizeof line, "  row %zu k %lld: got 0x%04x (%g), want 0x%04x (%g)", r,
                                 (long long)c, code, gk_rne_value(code, f), want, gk_rne_value(want, f));
                        first.push_back(line);
                    }
                }
            }
        }
        bad += b;
        gaps += gp;
        nan_count += nn;
    });
    for (const std::string &s : first) printf("%s\n", s.c_str());
    EXPECT_EQ(bad.load(), 0) << "dequantized values not bit-exact";
    EXPECT_EQ(gaps.load(), 0) << "the gaps between dst's rows written";
    EXPECT_EQ(nan_count.load(), nan_scale ? (int64_t)group : 0) << "NaN outputs: only the NaN scale's group of its row";
}

TEST(QuantGpuDequant, BitExact)
{
    GK_REQUIRE_GPU();
    GkRng rng(301);
    FailBudget budget(6);
    struct {
        int64_t n, k;
    } const shapes[] = {{8, 64}, {40, 192}, {1000, 4160}, {8, 4160}, {1000, 64}, {40, 512}, {24, 128}};
    int v = 0;
    for (const auto &sh : shapes)
        for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
            for (int dt : {GK_BF16, GK_F16})
                for (int sdt : {GK_BF16, GK_F16, GK_F32}) {
                    const std::vector<int> gs = groups_for(sh.k);
                    const int group = gs[(size_t)v % gs.size()];
                    const int64_t ld = v % 3 == 0 ? sh.k : v % 3 == 1 ? sh.k + 8 : sh.k + 3;
                    const int before = failures_now();
                    run_dequant(sh.n, sh.k, group, zm, dt, sdt, ld, v % 4 == 3 ? 1 : 0, v % 5 == 4, rng);
                    v++;
                    if (budget.spent(before)) return;
                }
}

// ------------------------------------------------------------------ GEMM

enum WsMode { kWsNone, kWsMax, kWsPlan, kWsGenerous, kWsBytes };

struct W4Run : GkEpilogue {
    int64_t m = 1, n = 8, k = 64;
    int group = 64, zm = GK_W4_ZEROS_INT4, dt = GK_BF16, sdt = GK_BF16, d_dt = GK_BF16;
    int64_t ldx = 0, ldd = 0, ldc = 0; // 0: the row itself
    int x_off = 0, d_off = 0;          // pointer offsets in elements
    bool ex = false; // through gk_w4_gemm_ex (config, warps)
    int config = -1, warps = 0;
    WsMode ws = kWsNone;
    size_t ws_bytes = 0;      // kWsBytes
    int64_t sample_rows = 0;  // rows checked against the reference (0: all)
    float bad_scale = 0.0f;   // NaN or inf: one scale set to it before the prepack
    int repeat = 1;           // 2: run twice, the two results bit-identical
};

static std::string describe(const W4Run &p)
{
    char s[400];
    snprintf(s, sizeof s,
             "x %s -> d %s, %s, scales %s, m=%lld n=%lld k=%lld group=%d ldx=%lld ldd=%lld ldc=%lld x_off=%d "
             "d_off=%d alpha=%g beta=%g c=%s bias=%d act=%d %s config=%d warps=%d ws=%d bad_scale=%g",
             gk_dtype_name(p.dt), gk_dtype_name(p.d_dt), zm_name(p.zm), gk_dtype_name(p.sdt), (long long)p.m,
             (long long)p.n, (long long)p.k, p.group, (long long)p.ldx, (long long)p.ldd, (long long)p.ldc, p.x_off,
             p.d_off, p.alpha, p.beta,
             p.c_mode == kCNull ? "NULL" : p.c_mode == kCNaN ? "NaN" : p.c_mode == kCValues ? "values" : "D (in place)",
             p.bias, p.act, p.ex ? "ex" : "dispatcher", p.config, p.warps, (int)p.ws, p.bad_scale);
    return s;
}

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

// A workspace for any schedule: W as the dtype ([N][K], 256-byte rounded) and what gk_gemm would
// use for the rest (the dequantize + GEMM path whatever M), or the partials of as many warps as
// could meet one (row group, token tile) pair: one a unit, plus one (the fused path with any
// number of working warps).
static size_t generous_workspace(int64_t m, int64_t n, int64_t k, int64_t ldx)
{
    const size_t dq = (size_t)gk_round_up(n * k * 2, 256) + gk_gemm_workspace_bytes(m, n, k, 0, ldx, 1, k);
    const size_t partials = (size_t)(k / 64 + 1) * (size_t)(m * n) * 4;
    // the wgmma kernel: its partials, then X staged in tiles of up to 128 tokens
    const size_t staged = partials + 256 + (size_t)gk_round_up(gk_ceil_div(m, 128) * 128 * k * 2, 256);
    return std::max(dq, staged);
}

static uint64_t run_salt(const W4Run &p)
{
    uint64_t h = 0x4a4b7;
    for (int64_t v : {p.m, p.n, p.k, (int64_t)p.group, (int64_t)p.zm, (int64_t)p.dt, (int64_t)p.sdt, (int64_t)p.d_dt,
                      p.ldx, p.ldd, (int64_t)p.c_mode, (int64_t)p.act, (int64_t)p.config, (int64_t)p.warps,
                      (int64_t)p.ws})
        h = (h ^ (uint64_t)v) * 0x100000001b3ull + 0x9e37;
    return h;
}

// Runs one W4A16 GEMM and checks it; D's bytes go to *d_bytes when asked.
static void run_w4(const W4Run &p, std::vector<unsigned char> *d_bytes = nullptr)
{
    SCOPED_TRACE(describe(p));
    const int64_t m = p.m, n = p.n, k = p.k;
    const int64_t ldx = p.ldx ? p.ldx : k, ldd = p.ldd ? p.ldd : n;
    const int64_t ldc = p.c_mode == kCInPlace ? ldd : p.ldc ? p.ldc : n;
    const bool has_c = p.c_mode == kCValues || p.c_mode == kCInPlace;
    GkRng rng(run_salt(p));

    GkQRefWeight hw = make_weight(n, k, p.group, p.zm, p.dt, p.sdt, rng);
    int64_t bad_g = -1, bad_row = -1;
    if (p.bad_scale != 0.0f) {
        bad_g = (int64_t)(rng.next() % (uint64_t)hw.groups());
        bad_row = (int64_t)(rng.next() % (uint64_t)n);
        hw.s_bits[(size_t)(bad_g * n + bad_row)] = gk_qref_encode(p.bad_scale, p.sdt);
    }
    DevWeight dw;
    prepack(hw, &dw);
    if (::testing::Test::HasFatalFailure()) return;

    size_t ws_bytes = 0;
    switch (p.ws) {
    case kWsMax: ws_bytes = gk_w4_workspace_bytes(m, n, k); break;
    case kWsPlan: ws_bytes = gk_w4_plan_for(m, n, k, p.group, p.zm, (size_t)1 << 40).workspace_bytes; break;
    case kWsGenerous: ws_bytes = generous_workspace(m, n, k, ldx); break;
    case kWsBytes: ws_bytes = p.ws_bytes; break;
    default: break;
    }

    HostTensor hx(p.dt, (size_t)((m - 1) * ldx + k)), hbias(GK_F32, (size_t)n);
    HostTensor hc(p.d_dt, has_c ? (size_t)((m - 1) * ldc + n) : 0);
    gk_test_fill_strided(&hx, m, k, ldx, rng);
    hbias.fill_uniform(rng, -1.0f, 1.0f);
    if (has_c) gk_test_fill_strided(&hc, m, n, ldc, rng);

    DeviceTensor dx(p.dt, hx.n, p.x_off), dbias(GK_F32, (size_t)n);
    DeviceTensor dc(p.d_dt, p.c_mode == kCValues || p.c_mode == kCNaN ? (size_t)((m - 1) * ldc + n) : 0);
    DeviceTensor dd(p.d_dt, (size_t)((m - 1) * ldd + n), p.d_off), dws(GK_F32, (ws_bytes + 3) / 4);
    ASSERT_TRUE(dx.ok() && dbias.ok() && dc.ok() && dd.ok() && dws.ok());
    for (DeviceTensor *t : {&dx, &dbias, &dc, &dws}) GK_CUDA_OK(t->poison());
    GK_CUDA_OK(dx.upload(hx)); // the guard bytes past X stay NaN
    GK_CUDA_OK(dbias.upload(hbias));
    if (p.c_mode == kCValues) GK_CUDA_OK(dc.upload(hc));
    const void *c = p.c_mode == kCNull ? nullptr : p.c_mode == kCInPlace ? dd.ptr() : dc.ptr();
    const float *bias = p.bias ? (const float *)dbias.ptr() : nullptr;
    void *ws = ws_bytes ? dws.ptr() : nullptr;

    std::vector<unsigned char> previous;
    HostTensor got(p.d_dt, dd.n);
    // the lean decode kernel refuses what it does not take, the wgmma kernel a workspace too small
    // for X's staged copy, before anything is written
    const gk_w4_config forced = gk_w4_config_info(p.ex ? p.config : -1);
    const bool lean_refuses =
        forced.lean && (m > 8 * forced.token_tiles || gk_w4_variant(p.group, p.zm) < 2);
    const bool wg_refuses = forced.wgmma && (!gk_w4_wg_ready() || ws_bytes < gk_w4_wg_x_bytes(m, k, 8 * forced.token_tiles));
    if (lean_refuses || wg_refuses) {
        GK_CUDA_OK(dd.poison());
        EXPECT_EQ(gk_w4_gemm_ex(p.config, p.warps, dd.ptr(), p.d_dt, ldd, dx.ptr(), ldx, &dw.w, c, ldc, bias, m,
                                p.alpha, p.beta, p.act, ws, ws_bytes, 0),
                  forced.wgmma && !gk_w4_wg_ready() ? cudaErrorNotSupported : cudaErrorInvalidValue);
        EXPECT_NE(strstr(gk_failure_reason(), lean_refuses ? "the lean decode kernel" : "the wgmma kernel"), nullptr)
            << gk_failure_reason();
        GK_CUDA_OK(cudaDeviceSynchronize());
        GK_CUDA_OK(dd.download(&got));
        for (size_t i = 0; i < got.n; i++)
            if (!gk_test_is_poison(got, i)) {
                ADD_FAILURE() << "element " << i << " of D written by a refused call";
                break;
            }
        return;
    }
    for (int rep = 0; rep < p.repeat; rep++) {
        GK_CUDA_OK(dd.poison());
        if (p.c_mode == kCInPlace) GK_CUDA_OK(dd.upload(hc));
        if (p.ex)
            GK_CUDA_OK(gk_w4_gemm_ex(p.config, p.warps, dd.ptr(), p.d_dt, ldd, dx.ptr(), ldx, &dw.w, c, ldc, bias, m,
                                     p.alpha, p.beta, p.act, ws, ws_bytes, 0));
        else if (p.dt == GK_BF16)
            GK_CUDA_OK(gk_w4_gemm_bf16(dd.ptr(), p.d_dt, ldd, (const gk_bf16 *)dx.ptr(), ldx, &dw.w, c, ldc, bias, m,
                                       p.alpha, p.beta, p.act, ws, ws_bytes, 0));
        else
            GK_CUDA_OK(gk_w4_gemm_f16(dd.ptr(), p.d_dt, ldd, (const gk_f16 *)dx.ptr(), ldx, &dw.w, c, ldc, bias, m,
                                      p.alpha, p.beta, p.act, ws, ws_bytes, 0));
        EXPECT_STREQ(gk_failure_reason(), "");
        GK_CUDA_OK(cudaDeviceSynchronize());
        GK_CUDA_OK(dd.download(&got));
        if (rep > 0) EXPECT_TRUE(got.bytes == previous) << "run " << rep + 1 << " differs from run 1 (not deterministic)";
        previous = got.bytes;
    }
    EXPECT_EQ(dd.guard_damage(), 0u) << "bytes written outside D";
    EXPECT_EQ(dws.guard_damage(), 0u) << "bytes written outside the workspace";
    EXPECT_EQ(dw.packed->guard_damage(), 0u) << "bytes written past the packed weight";
    gk_test_expect_written(got, m, n, ldd, p.c_mode != kCInPlace);

    // the reference
    const GkQRefTable t(hw);
    std::vector<double> W((size_t)(n * k));
    gk_test_parallel_items((size_t)n, (size_t)k, [&](size_t r0, size_t r1) {
        for (size_t r = r0; r < r1; r++)
            for (int64_t kk = 0; kk < k; kk++) W[r * k + kk] = t.weight((int64_t)r, kk);
    });
    double max_w = 0, max_x = 0;
    for (double w : W)
        if (std::isfinite(w)) max_w = std::max(max_w, std::fabs(w));
    for (int64_t r = 0; r < m; r++)
        for (int64_t kk = 0; kk < k; kk++) max_x = std::max(max_x, std::fabs(hx.get((size_t)(r * ldx + kk))));
    // the weights rounded once each to the dtype: float zero points, or the dequantize + GEMM path
    // the dequantize + GEMM path and the wgmma kernel form (u - z) s in the dtype (what the dispatcher
    // picked, when it picked)
    const int ran = p.ex && p.config >= 0 ? p.config : gk_w4_plan_for(m, n, k, p.group, p.zm, ws_bytes).config;
    const bool rounded_w = p.zm == GK_W4_ZEROS_FLOAT || ran == gk_w4_config_count() || gk_w4_config_info(ran).wgmma;
    const double w_round = rounded_w ? std::sqrt((double)k) * max_x * max_w * (p.dt == GK_BF16 ? 0x1p-8 : 0x1p-11) : 0.0;
    const GkTol tol = gk_test_tol(p.d_dt);

    const std::vector<int64_t> rows = pick_rows(m, p.sample_rows, rng);
    const int64_t nr = (int64_t)rows.size();
    std::vector<float> xr((size_t)(nr * k));
    for (int64_t i = 0; i < nr; i++)
        for (int64_t kk = 0; kk < k; kk++) xr[(size_t)(i * k + kk)] = (float)hx.get((size_t)(rows[i] * ldx + kk));
    std::atomic<int64_t> bad(0), nonfinite(0);
    std::mutex mu;
    std::vector<std::string> first;
    gk_test_parallel_items((size_t)(nr * n), (size_t)k, [&](size_t e0, size_t e1) {
        int64_t local = 0, nf = 0;
        for (size_t e = e0; e < e1; e++) {
            const int64_t i = (int64_t)e / n, j = (int64_t)e % n, r = rows[i];
            const double cv = has_c ? hc.get((size_t)(r * ldc + j)) : 0.0;
            const double bv = p.bias ? hbias.get((size_t)j) : 0.0;
            double sabs = 0;
            const double ref = gk_qref_gemm_one(&xr[(size_t)(i * k)], &W[(size_t)(j * k)], k, p.alpha, p.beta, cv, bv,
                                                p.act, &sabs, nullptr);
            const double g = got.get((size_t)(r * ldd + j));
            bool ok;
            double allowed = 0;
            if (j == bad_row) { // a NaN scale: NaN; an inf one: not finite
                ok = std::isnan(p.bad_scale) ? std::isnan(g) : !std::isfinite(g);
                nf += !std::isfinite(g);
            } else {
                const double err_pre = std::fabs(p.alpha) * (0x1p-18 * sabs + w_round) +
                                       0x1p-22 * (std::fabs(p.alpha) * sabs + std::fabs(p.beta * cv) + std::fabs(bv));
                allowed = tol.atol + tol.rtol * std::fabs(ref) + 1.25 * err_pre;
                ok = std::fabs(g - ref) <= allowed; // NaN fails
            }
            if (!ok) {
                local++;
                std::lock_guard<std::mutex> lock(mu);
                if (first.size() < 8) {
                    char line[200];
                    snprintf(line, sizeof line, "  row %lld col %lld: got %.9g want %.9g (|diff| %.3g, allowed %.3g)",
                             (long long)r, (long long)j, g, ref, std::fabs(g - ref), allowed);
                    first.push_back(line);
                }
            }
        }
        bad += local;
        nonfinite += nf;
    });
    for (const std::string &line : first) printf("%s\n", line.c_str());
    EXPECT_EQ(bad.load(), 0) << bad.load() << " of " << nr * n << " checked outputs outside tolerance";
    if (bad_row >= 0) EXPECT_EQ(nonfinite.load(), nr) << "column " << bad_row << " (the bad scale's row n) all tokens";
    if (d_bytes) *d_bytes = got.bytes;
}

// Stride variants: 0, rows tight; 1, x rows padded by 8 (16 bytes) and x 16 bytes past the
// allocation's start, D and C rows padded; 2, x rows padded by 64, D rows by 3 (odd) and D one
// element off its alignment (no paired stores), C rows by 5.
static void set_padding(W4Run *p, int q)
{
    switch (q % 3) {
    case 0: p->ldx = p->ldd = p->ldc = 0; p->x_off = p->d_off = 0; break;
    case 1: p->ldx = p->k + 8; p->ldd = p->n + 8; p->ldc = p->n + 16; p->x_off = 8; p->d_off = 0; break;
    default: p->ldx = p->k + 64; p->ldd = p->n + 3; p->ldc = p->n + 5; p->x_off = 0; p->d_off = 1; break;
    }
}

static const int kDtypes[2] = {GK_BF16, GK_F16};
static const int kDDtypes[3] = {GK_BF16, GK_F16, GK_F32};
static const int kSDtypes[3] = {GK_BF16, GK_F16, GK_F32};

// Every zero mode, x dtype and D dtype through the dispatcher, each with one of the five epilogues,
// three stride variants, the groups valid for K, the three scale dtypes and with or without
// gk_w4_workspace_bytes of workspace (rotated so that they meet each other).
static void all_combinations(int64_t m, int64_t n, int64_t k, int64_t sample_rows, int salt)
{
    const std::vector<int> gs = groups_for(k);
    FailBudget budget(6);
    int v = 0;
    for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
        for (int dt : kDtypes)
            for (int ddt : kDDtypes) {
                W4Run p;
                p.m = m;
                p.n = n;
                p.k = k;
                p.zm = zm;
                p.dt = dt;
                p.d_dt = ddt;
                p.group = gs[(size_t)(v + salt) % gs.size()];
                p.sdt = kSDtypes[(v + 2 * salt) % 3];
                gk_test_set_epilogue(&p, v + salt);
                set_padding(&p, v + 2 * salt + zm);
                p.ws = (v + salt) % 2 ? kWsMax : kWsNone;
                p.sample_rows = sample_rows;
                const int before = failures_now();
                run_w4(p);
                v++;
                if (budget.spent(before)) return;
            }
}

TEST(QuantGpuGemm, M1N8K64)
{
    GK_REQUIRE_GPU();
    all_combinations(1, 8, 64, 0, 0);
}

TEST(QuantGpuGemm, M3N200K192)
{
    GK_REQUIRE_GPU();
    all_combinations(3, 200, 192, 0, 1);
}

TEST(QuantGpuGemm, M17N1032K64)
{
    GK_REQUIRE_GPU();
    all_combinations(17, 1032, 64, 0, 2);
}

TEST(QuantGpuGemm, M129N200K4160)
{
    GK_REQUIRE_GPU();
    all_combinations(129, 200, 4160, 0, 3);
}

TEST(QuantGpuGemm, M1000N1000K192)
{
    GK_REQUIRE_GPU();
    all_combinations(1000, 1000, 192, 48, 4);
}

TEST(QuantGpuGemm, M1N1000K4160)
{
    GK_REQUIRE_GPU();
    all_combinations(1, 1000, 4160, 0, 5);
}

TEST(QuantGpuGemm, M3N8K4160)
{
    GK_REQUIRE_GPU();
    all_combinations(3, 8, 4160, 0, 6);
}

TEST(QuantGpuGemm, M17N200K512)
{
    GK_REQUIRE_GPU();
    all_combinations(17, 200, 512, 0, 7);
}

TEST(QuantGpuGemm, M129N1032K192)
{
    GK_REQUIRE_GPU();
    all_combinations(129, 1032, 192, 0, 8);
}

TEST(QuantGpuGemm, M1000N200K512)
{
    GK_REQUIRE_GPU();
    all_combinations(1000, 200, 512, 48, 9);
}

// Group 32: two groups a 64-k unit, each group's scale (and zero point) on its own 32 k. Every
// zero mode and dtype, one token tile and several, the fused configurations and the dequantize +
// GEMM path.
TEST(QuantGpuGemm, Group32)
{
    GK_REQUIRE_GPU();
    FailBudget budget(12);
    int v = 0;
    for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
        for (int dt : kDtypes)
            for (int cfg = -1; cfg <= gk_w4_config_count(); cfg++) {
                W4Run p;
                p.m = v % 2 ? 1 : 17;
                p.n = 40;
                p.k = 192;
                p.group = 32;
                p.zm = zm;
                p.dt = dt;
                p.d_dt = GK_F32;
                p.sdt = kSDtypes[v % 3];
                p.ex = cfg >= 0;
                p.config = cfg;
                p.ws = kWsGenerous;
                const int before = failures_now();
                run_w4(p);
                v++;
                if (budget.spent(before)) return;
            }
}

// A run of shape (m, n, k, group, zm) with its dtypes, epilogue and padding varied by v.
static W4Run varied_run(int64_t m, int64_t n, int64_t k, int group, int zm, int v)
{
    W4Run p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.group = group;
    p.zm = zm;
    p.dt = kDtypes[v % 2];
    p.d_dt = kDDtypes[v % 3];
    p.sdt = kSDtypes[(v / 2) % 3];
    gk_test_set_epilogue(&p, v);
    set_padding(&p, v / 3);
    return p;
}

struct ForcedShape {
    int64_t m, n, k;
    int group;
};

// Each configuration of `configs` through gk_w4_gemm_ex on each shape, zero mode and number of
// working warps (0: the dispatcher's), varied by a running count v; every no_ws_every-th run has
// no workspace (whole pairs, or refused where the kernel needs one), the others a workspace for
// any schedule. The dequantize + GEMM index (gk_w4_config_count()) runs once a shape and zero mode
// (it has no warps of its own) and always with a workspace. Rows past sample_over are sampled.
// extra_two_tiles is added to M > 1 for configurations of two token tiles (M past the first).
static void sweep_forced(const std::vector<int> &configs, const std::vector<ForcedShape> &shapes,
                         const std::vector<int> &zms, const std::vector<int> &warps_list, int no_ws_every,
                         int64_t sample_over, int64_t extra_two_tiles)
{
    const int count = gk_w4_config_count();
    FailBudget budget(8);
    int v = 0;
    for (int cfg : configs)
        for (const ForcedShape &sh : shapes)
            for (int zm : zms)
                for (int warps : warps_list) {
                    if (cfg == count && warps > 0) continue;
                    const bool two = cfg < count && gk_w4_config_info(cfg).token_tiles == 2;
                    const int64_t m = two && sh.m != 1 ? sh.m + extra_two_tiles : sh.m;
                    W4Run p = varied_run(m, sh.n, sh.k, sh.group, zm, v);
                    p.ex = true;
                    p.config = cfg;
                    p.warps = warps;
                    p.ws = cfg == count || v % no_ws_every != no_ws_every - 1 ? kWsGenerous : kWsNone;
                    p.sample_rows = m > sample_over ? 48 : 0;
                    const int before = failures_now();
                    run_w4(p);
                    v++;
                    if (budget.spent(before)) return;
                }
}

// The configurations of a kind: 0 the mma.sync fused kernels, 1 the lean decode kernels, 2 the wgmma kernels.
static std::vector<int> configs_of_kind(int kind)
{
    std::vector<int> out;
    for (int c = 0; c < gk_w4_config_count(); c++) {
        const gk_w4_config ci = gk_w4_config_info(c);
        if ((ci.lean ? 1 : ci.wgmma ? 2 : 0) == kind) out.push_back(c);
    }
    return out;
}

// Every configuration through gk_w4_gemm_ex on 1, 2, 3, 7, 64 and 100000 working warps forced and
// the dispatcher's number (0), with a workspace for any schedule (few warps store whole pairs,
// many share pairs through partials) and without one (whole pairs always); and index
// gk_w4_config_count(): the dequantize + GEMM path.
TEST(QuantGpuGemm, EveryConfigAndWarps)
{
    GK_REQUIRE_GPU();
    std::vector<int> all;
    for (int cfg = 0; cfg <= gk_w4_config_count(); cfg++) all.push_back(cfg);
    sweep_forced(all, {{17, 200, 4160, 64}, {3, 1032, 192, 32}, {129, 40, 512, 128}, {1, 8, 4160, 4160}, {40, 24, 256, 128}},
                 {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT}, {0, 1, 2, 3, 7, 64, 100000}, 4, 1 << 30, 0);
}

// The lean decode kernels (the last configurations, 1 and 2 token tiles): M up to 8 NT, groups of
// 128, symmetric and 4-bit zero points, both dtypes, N not a multiple of 16, K from one group to
// 33, on working warps from 1 (a warp walks every pair) to more than the positions (a warp a
// unit), with partials and without.
TEST(QuantGpuGemm, LeanDecodeKernel)
{
    GK_REQUIRE_GPU();
    const std::vector<int> leans = configs_of_kind(1);
    ASSERT_FALSE(leans.empty());
    // M past one token tile where the kernel holds two (16, 9 and 13 rows)
    sweep_forced(leans, {{1, 200, 4224, 128}, {3, 1032, 128, 128}, {8, 8, 384, 128}, {5, 40, 1152, 128}, {2, 4104, 256, 128}},
                 {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4}, {0, 1, 2, 3, 7, 64, 100000}, 4, 1 << 30, 8);
}

// The wgmma kernels (sm_90a; elsewhere refused, checked in run_w4): M within one token tile and
// past it (T 64 and 128: partial last tiles, M 1 and 1000), N off the 128-row block and off 16,
// every group (32 records two a unit) and zero mode, K of one unit to 65, on working blocks from 1
// (a block walks every pair) to more than the positions (a block a unit), with partials and
// without (no workspace: refused).
TEST(QuantGpuGemm, WgmmaKernel)
{
    GK_REQUIRE_GPU();
    const std::vector<int> wgs = configs_of_kind(2);
    if (wgs.empty()) GTEST_SKIP() << "this build has no wgmma kernels (GK_GEMM_SM90 0)";
    sweep_forced(wgs, {{17, 200, 4160, 64}, {64, 1032, 192, 32}, {129, 40, 512, 128}, {1, 136, 4160, 4160}, {100, 24, 64, 64},
                       {1000, 264, 384, 128}},
                 {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT}, {0, 1, 3, 100000}, 8, 200, 0);
}

// The dispatcher (config -1, warps 0, through gk_w4_gemm_ex and the typed calls) with and without
// workspace, and its plan: within the workspace given and gk_w4_workspace_bytes; partials (slots
// > 1) only with workspace for them; the dequantize + GEMM path from GK_W4_DEQUANT_M on with
// enough workspace, never without.
TEST(QuantGpuGemm, Dispatcher)
{
    GK_REQUIRE_GPU();
    const int count = gk_w4_config_count();
    FailBudget budget(6);
    int v = 0;
    for (int64_t m : {1, 3, 12, 17, 129, 600, 1000})
        for (int64_t n : {200, 1032})
            for (int64_t k : {192, 4224})
                for (WsMode ws : {kWsNone, kWsMax, kWsPlan}) {
                    const int group = groups_for(k)[(size_t)v % groups_for(k).size()];
                    const int zm = v % 3;
                    const size_t max_ws = gk_w4_workspace_bytes(m, n, k);
                    if (m >= GK_W4_DEQUANT_M) ASSERT_GT(max_ws, 0u) << "m " << m << ": " << gk_failure_reason();
                    const size_t wsb = ws == kWsNone ? 0 : max_ws;
                    const gk_w4_plan pl = gk_w4_plan_for(m, n, k, group, zm, wsb);
                    ASSERT_STREQ(gk_failure_reason(), "");
                    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                 " workspace " + std::to_string(wsb) + ": plan config " + std::to_string(pl.config) +
                                 " warps " + std::to_string(pl.warps) + " slots " + std::to_string(pl.slots) +
                                 " dequant " + std::to_string(pl.dequant) + " bytes " + std::to_string(pl.workspace_bytes));
                    EXPECT_GE(pl.config, 0);
                    EXPECT_LE(pl.config, count);
                    EXPECT_EQ(pl.dequant, pl.config == count ? 1 : 0);
                    const bool lean = pl.config >= 0 && pl.config < count && gk_w4_config_info(pl.config).lean;
                    EXPECT_EQ(lean, m <= 16 && group == 128 && zm != GK_W4_ZEROS_FLOAT)
                        << "a lean decode kernel where one applies, and only there";
                    if (lean) EXPECT_EQ(gk_w4_config_info(pl.config).token_tiles, m <= 8 ? 1 : 2) << "the fewest token tiles";
                    const bool wg = pl.config >= 0 && pl.config < count && gk_w4_config_info(pl.config).wgmma;
                    const int64_t dq_m = gk_w4_wg_ready() && m > GK_W4_WGMMA_M ? GK_W4_WG_DEQUANT_M : GK_W4_DEQUANT_M;
                    const bool wg_applies = gk_w4_wg_ready() && m > GK_W4_WGMMA_M && m < dq_m;
                    if (wg) EXPECT_TRUE(wg_applies) << "the wgmma kernel only where it applies";
                    if (wg_applies && wsb == max_ws) EXPECT_TRUE(wg) << "the wgmma kernel where it applies";
                    EXPECT_LE(pl.workspace_bytes, wsb);
                    EXPECT_LE(pl.workspace_bytes, max_ws);
                    if (m < dq_m || wsb == 0) EXPECT_EQ(pl.dequant, 0);
                    if (m >= dq_m && wsb) EXPECT_EQ(pl.dequant, 1) << "gk_w4_workspace_bytes is enough for it";
                    if (!pl.dequant) {
                        EXPECT_GE(pl.warps, 1);
                        EXPECT_GE(pl.slots, 1);
                        if (wsb == 0) EXPECT_EQ(pl.slots, 1) << "partials without a workspace";
                        if (pl.slots > 1) EXPECT_GE(pl.workspace_bytes, (size_t)pl.slots * (size_t)(m * n) * 4);
                        else if (!wg) EXPECT_EQ(pl.workspace_bytes, 0u);
                    }
                    // run a spread of them (every m, each workspace mode), m = 1000 all
                    if ((v++ % 4) != 0 && m != 1000) continue;
                    W4Run p = varied_run(m, n, k, group, zm, v);
                    p.ex = v % 3 == 0;
                    p.ws = ws;
                    p.sample_rows = m >= 600 ? 32 : 0;
                    const int before = failures_now();
                    run_w4(p);
                    if (budget.spent(before)) return;
                }
}

// The same inputs twice give the same bits: the partials' paths (warps sharing pairs, summed in a
// fixed order), forced and through the dispatcher, and the dequantize + GEMM path.
TEST(QuantGpuGemm, Deterministic)
{
    GK_REQUIRE_GPU();
    const int count = gk_w4_config_count();
    struct {
        int64_t m;
        int config, warps;
        WsMode ws;
    } const runs[] = {{1, 0, 1000, kWsGenerous}, {3, -1, 0, kWsMax}, {17, 1, 77, kWsGenerous},
                      {129, count - 1, 0, kWsGenerous}, {600, -1, 0, kWsMax}, {33, count, 0, kWsGenerous},
                      {9, 2, 5, kWsGenerous}};
    FailBudget budget(4);
    for (const auto &r : runs)
        for (int zm : {GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT}) {
            W4Run p;
            p.m = r.m;
            p.n = 1032;
            p.k = 4160;
            p.group = 64;
            p.zm = zm;
            p.dt = zm == GK_W4_ZEROS_INT4 ? GK_BF16 : GK_F16;
            p.d_dt = GK_F32;
            p.ex = true;
            p.config = r.config;
            p.warps = r.warps;
            p.ws = r.ws;
            p.repeat = 2;
            p.sample_rows = 16;
            gk_test_set_epilogue(&p, 3);
            const int before = failures_now();
            run_w4(p);
            if (budget.spent(before)) return;
        }
}

// NaN (and inf) in one scale reaches the outputs of its row n only: column n of D for every token,
// nothing else; through the fused kernels (the dispatcher's warps, and many warps sharing pairs
// through partials), the dispatcher, the dequantize + GEMM path; with each zero mode.
TEST(QuantGpuGemm, NonFiniteScaleStaysInItsColumn)
{
    GK_REQUIRE_GPU();
    const int count = gk_w4_config_count();
    FailBudget budget(6);
    int v = 0;
    for (float bad : {NAN, INFINITY})
        for (int zm : {GK_W4_SYMMETRIC, GK_W4_ZEROS_INT4, GK_W4_ZEROS_FLOAT})
            for (int path = 0; path < 4; path++) {
                W4Run p;
                p.m = path == 3 ? 600 : path == 0 ? 1 : 17;
                p.n = 200;
                p.k = 4160;
                p.group = v % 2 ? 32 : 64;
                p.zm = zm;
                p.dt = kDtypes[v % 2];
                p.sdt = kSDtypes[v % 3];
                p.d_dt = kDDtypes[(v + 1) % 3];
                p.bad_scale = bad;
                p.ex = path != 3;
                p.config = path == 0 ? 0 : path == 1 ? count - 1 : path == 2 ? count : -1;
                p.warps = path == 1 ? 1000 : 0;
                p.ws = path == 3 ? kWsMax : kWsGenerous;
                p.bias = v % 2 == 1;
                p.sample_rows = p.m > 100 ? 24 : 0;
                const int before = failures_now();
                run_w4(p);
                v++;
                if (budget.spent(before)) return;
            }
}

// m == 0 is a no-op: D untouched.
TEST(QuantGpuGemm, MZeroLeavesDUntouched)
{
    GK_REQUIRE_GPU();
    GkRng rng(601);
    for (int dt : kDtypes) {
        const GkQRefWeight hw = make_weight(200, 192, 64, GK_W4_ZEROS_INT4, dt, GK_F16, rng);
        DevWeight dw;
        prepack(hw, &dw);
        if (HasFatalFailure()) return;
        DeviceTensor dd(GK_F32, 4 * 200), dx(dt, 4 * 192);
        ASSERT_TRUE(dd.ok() && dx.ok());
        GK_CUDA_OK(dd.poison());
        GK_CUDA_OK(dx.poison());
        if (dt == GK_BF16)
            EXPECT_EQ(gk_w4_gemm_bf16(dd.ptr(), GK_F32, 200, (const gk_bf16 *)dx.ptr(), 192, &dw.w, nullptr, 0, nullptr, 0,
                                      1.0f, 0.0f, GK_ACT_NONE, nullptr, 0, 0),
                      cudaSuccess);
        else
            EXPECT_EQ(gk_w4_gemm_f16(dd.ptr(), GK_F32, 200, (const gk_f16 *)dx.ptr(), 192, &dw.w, nullptr, 0, nullptr, 0,
                                     1.0f, 0.0f, GK_ACT_NONE, nullptr, 0, 0),
                      cudaSuccess);
        for (int cfg = -1; cfg <= gk_w4_config_count(); cfg++)
            EXPECT_EQ(gk_w4_gemm_ex(cfg, 3, dd.ptr(), GK_F32, 200, dx.ptr(), 192, &dw.w, dd.ptr(), 200, nullptr, 0, 1.0f,
                                    1.0f, GK_ACT_SILU, nullptr, 0, 0),
                      cudaSuccess)
                << "config " << cfg << ": " << gk_failure_reason();
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(GK_F32, dd.n);
        GK_CUDA_OK(dd.download(&got));
        EXPECT_EQ(gk_test_count_poison(got), got.n) << "D written with m == 0";
        EXPECT_EQ(dd.guard_damage(), 0u);
    }
}

// A refusal that comes after the device query: the dequantize + GEMM path without enough
// workspace. Nothing is written.
TEST(QuantGpuGemm, RefusedAfterTheDeviceQuery)
{
    GK_REQUIRE_GPU();
    GkRng rng(701);
    const int64_t m = 17, n = 200, k = 192;
    const GkQRefWeight hw = make_weight(n, k, 64, GK_W4_ZEROS_INT4, GK_BF16, GK_BF16, rng);
    DevWeight dw;
    prepack(hw, &dw);
    if (HasFatalFailure()) return;
    DeviceTensor dd(GK_BF16, (size_t)(m * n)), dx(GK_BF16, (size_t)(m * k)), dws(GK_F32, (size_t)1 << 22);
    ASSERT_TRUE(dd.ok() && dx.ok() && dws.ok());
    GK_CUDA_OK(dd.poison());
    GK_CUDA_OK(dx.poison());
    GK_CUDA_OK(dws.poison());
    // W alone ([N][K] of 2 bytes) does not fit in n k 2 - 256 bytes
    EXPECT_EQ(gk_w4_gemm_ex(gk_w4_config_count(), 0, dd.ptr(), GK_BF16, n, dx.ptr(), k, &dw.w, nullptr, 0, nullptr, m,
                            1.0f, 0.0f, GK_ACT_NONE, dws.ptr(), (size_t)(n * k * 2 - 256), 0),
              cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("workspace"), std::string::npos) << gk_failure_reason();
    EXPECT_EQ(gk_w4_gemm_ex(gk_w4_config_count(), 0, dd.ptr(), GK_BF16, n, dx.ptr(), k, &dw.w, nullptr, 0, nullptr, m,
                            1.0f, 0.0f, GK_ACT_NONE, nullptr, 0, 0),
              cudaErrorInvalidValue);
    EXPECT_NE(std::string(gk_failure_reason()).find("workspace"), std::string::npos) << gk_failure_reason();
    GK_CUDA_OK(cudaDeviceSynchronize());
    HostTensor got(GK_BF16, dd.n), w(GK_F32, dws.n);
    GK_CUDA_OK(dd.download(&got));
    GK_CUDA_OK(dws.download(&w));
    EXPECT_EQ(gk_test_count_poison(got), got.n) << "D written by a refused call";
    EXPECT_EQ(gk_test_count_poison(w), w.n) << "the workspace written by a refused call";
}

// From a GPTQ checkpoint to the GEMM: the converters' output prepacked and multiplied matches the
// reference built from the same codes.
TEST(QuantGpuGemm, FromGptqAndAwqEndToEnd)
{
    GK_REQUIRE_GPU();
    GkRng rng(801);
    for (int kind : {kGptqV1, kGptqSymmetric, kAwq}) {
        SCOPED_TRACE(conv_name(kind));
        const int64_t m = 5, n = 200, k = 512;
        const int group = 128, zm = kind == kGptqSymmetric ? GK_W4_SYMMETRIC : GK_W4_ZEROS_INT4;
        const GkQRefWeight hw = make_weight(n, k, group, zm, GK_F16, GK_F16, rng);
        const int64_t groups = k / group;
        std::vector<int32_t> qw, qz;
        if (kind == kAwq) {
            qw = gk_qref_awq_qweight(hw.u, n, k);
            qz = gk_qref_awq_qzeros(hw.zi, groups, n);
        } else {
            qw = gk_qref_gptq_qweight(hw.u, n, k);
            if (kind == kGptqV1) qz = gk_qref_gptq_qzeros(hw.zi, groups, n, 1);
        }
        auto dqw = device_bytes(qw.size() * 4), dqz = device_bytes(qz.size() * 4 + 4);
        auto q = device_bytes((size_t)(n * k / 2)), z = device_bytes((size_t)(groups * n / 2));
        const std::vector<uint8_t> s = gk_qref_bytes_of(hw.s_bits, GK_F16);
        auto ds = device_bytes(s.size());
        const size_t pb = gk_w4_packed_bytes(n, k, group, zm);
        auto packed = device_bytes(pb);
        ASSERT_TRUE(dqw->ok() && dqz->ok() && q->ok() && z->ok() && ds->ok() && packed->ok());
        GK_CUDA_OK(upload_bytes(dqw.get(), qw.data(), qw.size() * 4));
        if (!qz.empty()) GK_CUDA_OK(upload_bytes(dqz.get(), qz.data(), qz.size() * 4));
        GK_CUDA_OK(upload_bytes(ds.get(), s.data(), s.size()));
        gk_int4x2 *zp = zm == GK_W4_SYMMETRIC ? nullptr : (gk_int4x2 *)z->ptr();
        if (kind == kAwq)
            GK_CUDA_OK(gk_w4_from_awq((gk_int4x2 *)q->ptr(), zp, (const int32_t *)dqw->ptr(), (const int32_t *)dqz->ptr(),
                                      n, k, group, 0));
        else
            GK_CUDA_OK(gk_w4_from_gptq((gk_int4x2 *)q->ptr(), zp, (const int32_t *)dqw->ptr(),
                                       qz.empty() ? nullptr : (const int32_t *)dqz->ptr(), nullptr, n, k, group, 1, 0));
        GK_CUDA_OK(gk_w4_prepack(packed->ptr(), GK_F16, (const gk_int4x2 *)q->ptr(), ds->ptr(), GK_F16, zp, n, k, group,
                                 zm, 0));
        const gk_w4_weight w = {packed->ptr(), n, k, group, zm, GK_F16};
        HostTensor hx(GK_F16, (size_t)(m * k));
        hx.fill_uniform(rng, -1.0f, 1.0f);
        DeviceTensor dx(GK_F16, hx.n), dd(GK_F32, (size_t)(m * n));
        ASSERT_TRUE(dx.ok() && dd.ok());
        GK_CUDA_OK(dx.upload(hx));
        GK_CUDA_OK(dd.poison());
        GK_CUDA_OK(gk_w4_gemm_f16(dd.ptr(), GK_F32, n, (const gk_f16 *)dx.ptr(), k, &w, nullptr, 0, nullptr, m, 1.0f,
                                  0.0f, GK_ACT_NONE, nullptr, 0, 0));
        GK_CUDA_OK(cudaDeviceSynchronize());
        HostTensor got(GK_F32, dd.n);
        GK_CUDA_OK(dd.download(&got));
        const GkQRefTable t(hw);
        std::vector<double> W((size_t)(n * k));
        for (int64_t r = 0; r < n; r++)
            for (int64_t kk = 0; kk < k; kk++) W[(size_t)(r * k + kk)] = t.weight(r, kk);
        std::vector<float> x((size_t)(m * k));
        for (size_t i = 0; i < x.size(); i++) x[i] = (float)hx.get(i);
        int64_t bad = 0;
        for (int64_t r = 0; r < m; r++)
            for (int64_t j = 0; j < n; j++) {
                double sabs = 0;
                const double ref = gk_qref_gemm_one(&x[(size_t)(r * k)], &W[(size_t)(j * k)], k, 1.0, 0.0, 0.0, 0.0,
                                                    GK_ACT_NONE, &sabs, nullptr);
                const double g = got.get((size_t)(r * n + j));
                if (!(std::fabs(g - ref) <= 1e-6 + 1e-5 * std::fabs(ref) + 0x1p-17 * sabs) && bad++ < 4)
                    ADD_FAILURE() << "token " << r << " n " << j << ": got " << g << ", want " << ref;
            }
        EXPECT_EQ(bad, 0);
    }
}

// A workspace too small for any partials (256, 1000 and 4096 bytes) is not written past its end:
// the dispatcher and the fused configurations then store whole pairs. K = 64 (one unit a pair)
// and K = 192; guard bytes after the workspace, and the results, checked as everywhere. Last in
// the file: a kernel writing far past a small allocation can leave a sticky CUDA error.
TEST(QuantGpuGemm, SmallWorkspaceIsNotOverrun)
{
    GK_REQUIRE_GPU();
    FailBudget budget(4);
    int v = 0;
    for (int64_t k : {64, 192})
        for (int64_t m : {17, 129, 300})
            for (size_t bytes : {(size_t)256, (size_t)1000, (size_t)4096})
                for (int cfg = -1; cfg < gk_w4_config_count(); cfg += 2) {
                    W4Run p;
                    p.m = m;
                    p.n = 1032;
                    p.k = k;
                    p.group = 64;
                    p.zm = v % 3;
                    p.dt = kDtypes[v % 2];
                    p.d_dt = kDDtypes[v % 3];
                    p.ex = cfg >= 0;
                    p.config = cfg;
                    p.ws = kWsBytes;
                    p.ws_bytes = bytes;
                    gk_test_set_epilogue(&p, v);
                    const int before = failures_now();
                    run_w4(p);
                    v++;
                    if (budget.spent(before)) return;
                }
}
