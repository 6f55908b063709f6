// gk test shim: GPU detection and skip, fresh random inputs, poisoned outputs, tolerance compare.
// C++ kept plain; included by every test .cu after the gk header under test.
#ifndef GK_TEST_H
#define GK_TEST_H

#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gk/gk_core.cuh"

// ------------------------------------------------------------------ GPU presence

// True when a CUDA device can be used. Any error from the runtime (no driver, no device,
// a driver older than the runtime) counts as "no GPU", and *why says which.
inline bool gk_test_gpu_available(std::string *why)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
        cudaGetLastError();
        return false;
    }
    if (count == 0) {
        *why = "cudaGetDeviceCount found 0 devices";
        return false;
    }
    return true;
}

// GK_TEST_REQUIRE_GPU=1 in the environment (set where a GPU is expected, e.g. by run_all.sh): a
// test that would skip fails instead, with the same reason. A skip is never a pass there.
inline bool gk_test_require_gpu()
{
    const char *v = getenv("GK_TEST_REQUIRE_GPU");
    return v && *v && strcmp(v, "0") != 0;
}

// Skips and failures-instead-of-skips, by reason, for the line printed at the end of the run.
struct GkTestSkipLog {
    std::vector<std::pair<std::string, int>> reasons; // in order of first appearance
    int skipped = 0, refused = 0, ran = 0;             // refused: failed instead (GK_TEST_REQUIRE_GPU=1)
    void note(const std::string &why)
    {
        for (auto &r : reasons)
            if (r.first == why) {
                r.second++;
                return;
            }
        reasons.emplace_back(why, 1);
    }
};

inline GkTestSkipLog &gk_test_skip_log()
{
    static GkTestSkipLog log;
    return log;
}

// Skips the current test with `why`, or, under GK_TEST_REQUIRE_GPU=1, fails it with the same
// reason. Every skip in gk_tests goes through here; the listener below catches any other.
#define GK_TEST_SKIP(why_expr)                                                                        \
    do {                                                                                              \
        const std::string gk_skip_why = (why_expr);                                                   \
        if (gk_test_require_gpu()) {                                                                  \
            gk_test_skip_log().refused++;                                                             \
            gk_test_skip_log().note(gk_skip_why);                                                     \
            GTEST_FAIL() << "FAILED instead of skipping (GK_TEST_REQUIRE_GPU=1): " << gk_skip_why;    \
        }                                                                                             \
        GTEST_SKIP() << "SKIPPED: " << gk_skip_why;                                                   \
    } while (0)

#define GK_REQUIRE_GPU()                                                                              \
    do {                                                                                              \
        std::string gk_why;                                                                           \
        if (!gk_test_gpu_available(&gk_why))                                                          \
            GK_TEST_SKIP("this GPU test needs a CUDA device, and none is usable here (" + gk_why + ")"); \
    } while (0)

// Counts the test cases that ran and those skipped, with their reasons, and prints one line at the
// end of the run:
//   [gk_test] 12 of 40 test cases skipped (12: this GPU test needs a CUDA device, ...)
// Under GK_TEST_REQUIRE_GPU=1 it also fails a test skipped by any other means (a bare GTEST_SKIP).
class GkTestSkipListener : public ::testing::EmptyTestEventListener {
    std::string last_skip_;

  public:
    void OnTestStart(const ::testing::TestInfo &) override { last_skip_.clear(); }
    void OnTestPartResult(const ::testing::TestPartResult &r) override
    {
        if (r.skipped() && last_skip_.empty()) {
            last_skip_ = r.message();
            if (last_skip_.rfind("SKIPPED: ", 0) == 0) last_skip_ = last_skip_.substr(9);
            if (last_skip_.empty()) last_skip_ = "no reason given";
        }
    }
    void OnTestEnd(const ::testing::TestInfo &info) override
    {
        GkTestSkipLog &log = gk_test_skip_log();
        log.ran++;
        if (!info.result()->Skipped()) return;
        if (gk_test_require_gpu()) { // a skip that did not go through GK_TEST_SKIP
            log.refused++;
            log.note(last_skip_);
            ADD_FAILURE() << "FAILED instead of skipping (GK_TEST_REQUIRE_GPU=1): " << last_skip_;
            return;
        }
        log.skipped++;
        log.note(last_skip_);
    }
    void OnTestProgramEnd(const ::testing::UnitTest &) override
    {
        const GkTestSkipLog &log = gk_test_skip_log();
        std::string why;
        for (const auto &r : log.reasons)
            why += (why.empty() ? "" : "; ") + std::to_string(r.second) + ": " + r.first;
        if (log.refused)
            printf("[gk_test] %d of %d test cases skipped; %d failed instead of skipping (GK_TEST_REQUIRE_GPU=1: %s)\n",
                   log.skipped, log.ran, log.refused, why.c_str());
        else if (log.skipped)
            printf("[gk_test] %d of %d test cases skipped (%s)\n", log.skipped, log.ran, why.c_str());
        else
            printf("[gk_test] 0 of %d test cases skipped\n", log.ran);
        fflush(stdout);
    }
};

// Registered once per binary before main runs (the tests link gtest_main).
inline bool gk_test_register_skip_listener()
{
    ::testing::UnitTest::GetInstance()->listeners().Append(new GkTestSkipListener);
    return true;
}
inline const bool gk_test_skip_listener_registered = gk_test_register_skip_listener();

#define GK_CUDA_OK(expr)                                                                    \
    do {                                                                                    \
        cudaError_t gk_e = (expr);                                                          \
        ASSERT_EQ(gk_e, cudaSuccess) << #expr << " -> " << cudaGetErrorString(gk_e) << " | " \
                                     << gk_failure_reason();                                \
    } while (0)

// ------------------------------------------------------------------ random inputs

// A fresh seed per process (printed, so a failure can be replayed with GK_TEST_SEED=<seed>).
inline uint64_t gk_test_seed()
{
    static uint64_t seed = 0;
    if (seed == 0) {
        const char *env = getenv("GK_TEST_SEED");
        if (env && *env) {
            seed = strtoull(env, nullptr, 0);
        } else {
            std::random_device rd;
            seed = ((uint64_t)rd() << 32) ^ rd() ^ 0x9e3779b97f4a7c15ull;
        }
        printf("[gk_test] random seed %llu (rerun with GK_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    }
    return seed;
}

// splitmix64: fast enough to fill 2^31 values on the host in seconds.
struct GkRng {
    uint64_t s;
    explicit GkRng(uint64_t salt) : s(gk_test_seed() ^ (salt * 0xbf58476d1ce4e5b9ull)) {}
    uint64_t next()
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi).
    float uniform(float lo, float hi) { return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0)); }
};

// Runs fn(begin, end) over [0, n) split across the host's cores: the 2^28- and 2^31-element
// tests spend their time in host loops (fill, reference, compare), not on the GPU.
inline void gk_test_parallel_for(size_t n, const std::function<void(size_t, size_t)> &fn)
{
    unsigned t = std::thread::hardware_concurrency();
    if (t < 2 || n < ((size_t)1 << 20)) {
        fn(0, n);
        return;
    }
    std::vector<std::thread> pool;
    const size_t per = (n + t - 1) / t;
    for (unsigned k = 0; k < t; k++) {
        size_t b = k * per, e = b + per < n ? b + per : n;
        if (b < e) pool.emplace_back(fn, b, e);
    }
    for (std::thread &th : pool) th.join();
}

// ------------------------------------------------------------------ typed host buffers

// Host-side values of one dtype, kept as raw bytes plus the exact values they hold as doubles.
struct HostTensor {
    int dt = GK_F32;
    size_t n = 0;
    std::vector<unsigned char> bytes;

    HostTensor(int dtype, size_t count) : dt(dtype), n(count), bytes(count * gk_dtype_size(dtype)) {}
    double get(size_t i) const
    {
        const unsigned char *p = bytes.data() + i * gk_dtype_size(dt);
        switch (dt) {
        case GK_F32: { float f; memcpy(&f, p, 4); return f; }
        case GK_BF16: { gk_bf16 h; memcpy(&h, p, 2); return gk_bf16_to_f32(h); }
        case GK_F16: { gk_f16 h; memcpy(&h, p, 2); return gk_f16_to_f32(h); }
        case GK_E4M3: return gk_e4m3_to_f32(*p);
        default: return gk_e5m2_to_f32(*p);
        }
    }
    void set(size_t i, float v)
    {
        unsigned char *p = bytes.data() + i * gk_dtype_size(dt);
        switch (dt) {
        case GK_F32: memcpy(p, &v, 4); break;
        case GK_BF16: { gk_bf16 h = gk_f32_to_bf16(v); memcpy(p, &h, 2); break; }
        case GK_F16: { gk_f16 h = gk_f32_to_f16(v); memcpy(p, &h, 2); break; }
        case GK_E4M3: *p = gk_f32_to_e4m3(v); break;
        default: *p = gk_f32_to_e5m2(v); break;
        }
    }
    // Each block of 2^16 elements has its own generator, seeded from rng: the same values
    // whatever the number of threads.
    void fill_uniform(GkRng &rng, float lo, float hi)
    {
        const uint64_t base = rng.next();
        const size_t block = (size_t)1 << 16;
        gk_test_parallel_for((n + block - 1) / block, [&](size_t b0, size_t b1) {
            for (size_t b = b0; b < b1; b++) {
                GkRng r(base ^ (b * 0x9e3779b97f4a7c15ull));
                for (size_t i = b * block; i < n && i < (b + 1) * block; i++) set(i, r.uniform(lo, hi));
            }
        });
    }
};

// ------------------------------------------------------------------ device buffers

// Device allocation with guard room: `offset_elems` shifts the pointer handed to the kernel,
// so unaligned starts are tested; the bytes around the view are poisoned and checked too.
// GK_TEST_TAIL_GUARD=0 in the environment drops the 64 guard bytes after the view, so that a
// read past its end leaves the allocation and compute-sanitizer's memcheck reports it (the
// guard bytes would hide it; run_all.sh sets it for the memcheck runs).
inline size_t gk_test_tail_guard()
{
    const char *v = getenv("GK_TEST_TAIL_GUARD");
    return v && *v ? (size_t)strtoull(v, nullptr, 10) : 64;
}

struct DeviceTensor {
    void *base = nullptr;
    size_t base_bytes = 0;
    int dt = GK_F32;
    size_t n = 0;
    size_t offset_bytes = 0;

    static const unsigned char kPoison = 0xff; // NaN in f32, bf16 and f16; never produced by conversions

    DeviceTensor(int dtype, size_t count, int offset_elems = 0) : dt(dtype), n(count)
    {
        offset_bytes = (size_t)offset_elems * gk_dtype_size(dtype);
        base_bytes = offset_bytes + count * gk_dtype_size(dtype) + gk_test_tail_guard();
        if (!base_bytes) base_bytes = 16; /* an empty view without guard bytes: cudaMalloc(0) gives no pointer */
        if (cudaMalloc(&base, base_bytes) != cudaSuccess) base = nullptr;
    }
    ~DeviceTensor() { if (base) cudaFree(base); }
    DeviceTensor(const DeviceTensor &) = delete;
    DeviceTensor &operator=(const DeviceTensor &) = delete;

    bool ok() const { return base != nullptr; }
    void *ptr() const { return (char *)base + offset_bytes; }
    size_t bytes() const { return n * gk_dtype_size(dt); }
    cudaError_t upload(const HostTensor &h) { return cudaMemcpy(ptr(), h.bytes.data(), bytes(), cudaMemcpyHostToDevice); }
    cudaError_t poison() { return cudaMemset(base, kPoison, base_bytes); }
    cudaError_t download(HostTensor *h) const
    {
        return cudaMemcpy(h->bytes.data(), ptr(), bytes(), cudaMemcpyDeviceToHost);
    }
    // Bytes outside [ptr, ptr + bytes) that are no longer poison: an out-of-bounds write. Only the
    // guard bytes travel back (the view itself can be gigabytes).
    size_t guard_damage() const
    {
        const size_t tail = base_bytes - offset_bytes - bytes();
        std::vector<unsigned char> head(offset_bytes), back(tail);
        if (offset_bytes && cudaMemcpy(head.data(), base, offset_bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
            return (size_t)-1;
        if (tail && cudaMemcpy(back.data(), (char *)ptr() + bytes(), tail, cudaMemcpyDeviceToHost) != cudaSuccess)
            return (size_t)-1;
        size_t bad = 0;
        for (unsigned char b : head) bad += b != kPoison;
        for (unsigned char b : back) bad += b != kPoison;
        return bad;
    }
};

// fn(i0, i1) over [0, items), split across the host's cores by work (items x cost), so that a few
// long items (rows of a K = 4096 dot product) still spread over every core.
inline void gk_test_parallel_items(size_t items, size_t cost, const std::function<void(size_t, size_t)> &fn)
{
    if (cost < 1) cost = 1;
    gk_test_parallel_for(items * cost, [&](size_t b, size_t e) {
        const size_t i0 = (b + cost - 1) / cost, i1 = (e + cost - 1) / cost;
        if (i0 < i1) fn(i0, i1);
    });
}

// A rows x cols matrix of row stride ld in a tight buffer ((rows - 1) ld + cols values): random
// values in [-1, 1), NaN (all-ones bytes) in the padding between rows.
inline void gk_test_fill_strided(HostTensor *h, int64_t rows, int64_t cols, int64_t ld, GkRng &rng)
{
    h->fill_uniform(rng, -1.0f, 1.0f);
    const size_t es = gk_dtype_size(h->dt);
    if (ld > cols)
        for (int64_t r = 0; r + 1 < rows; r++)
            memset(h->bytes.data() + (size_t)(r * ld + cols) * es, 0xff, (size_t)(ld - cols) * es);
}

inline bool gk_test_is_poison(const HostTensor &h, size_t i)
{
    const size_t es = gk_dtype_size(h.dt);
    for (size_t b = 0; b < es; b++)
        if (h.bytes[i * es + b] != DeviceTensor::kPoison) return false;
    return true;
}

// D [m][ldd]: every output written (unless check_written is false: D started as C, in place), the
// padding between rows untouched.
inline void gk_test_expect_written(const HostTensor &d, int64_t m, int64_t n, int64_t ldd, bool check_written)
{
    std::atomic<int64_t> unwritten(0), pad_written(0);
    gk_test_parallel_items((size_t)m, (size_t)ldd, [&](size_t r0, size_t r1) {
        int64_t u = 0, w = 0;
        for (size_t r = r0; r < r1; r++) {
            const int64_t end = (int64_t)r + 1 < m ? ldd : n;
            for (int64_t j = 0; j < end; j++) {
                const bool p = gk_test_is_poison(d, r * ldd + j);
                if (j < n) u += check_written && p;
                else w += !p;
            }
        }
        unwritten += u;
        pad_written += w;
    });
    EXPECT_EQ(unwritten.load(), 0) << "outputs never written";
    EXPECT_EQ(pad_written.load(), 0) << "padding between rows of D written";
}

// Elements of h still holding the poison pattern: outputs the kernel never wrote.
inline size_t gk_test_count_poison(const HostTensor &h)
{
    const size_t es = gk_dtype_size(h.dt);
    std::atomic<size_t> bad(0);
    gk_test_parallel_for(h.n, [&](size_t b, size_t e) {
        size_t count = 0;
        for (size_t i = b; i < e; i++) {
            bool all = true;
            for (size_t k = 0; k < es; k++) all = all && h.bytes[i * es + k] == DeviceTensor::kPoison;
            count += all;
        }
        bad += count;
    });
    return bad;
}

// ------------------------------------------------------------------ tolerance

struct GkTol {
    double atol, rtol;
};

// The policy by output dtype: fp32 math rounded once to the output type.
inline GkTol gk_test_tol(int dt)
{
    switch (dt) {
    case GK_F32: return {1e-6, 1e-5};
    case GK_F16: return {1e-4, 2e-3};
    case GK_BF16: return {1e-3, 1.6e-2};
    default: return {1e-2, 1.3e-1}; // fp8
    }
}

// Mismatches of got against ref: |got - ref| > atol + rtol * |ref|. A NaN where the reference
// is finite fails, and so does a finite value where the reference is NaN. Prints the first few.
inline bool gk_test_close(double g, double r, GkTol tol)
{
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r)) return g == r;
    return !std::isnan(g) && std::fabs(g - r) <= tol.atol + tol.rtol * std::fabs(r);
}

inline size_t gk_test_compare(const char *what, const HostTensor &got, const std::vector<double> &ref, GkTol tol,
                              int max_print = 8)
{
    std::atomic<size_t> count(0);
    gk_test_parallel_for(got.n, [&](size_t b, size_t e) {
        size_t c = 0;
        for (size_t i = b; i < e; i++) c += !gk_test_close(got.get(i), ref[i], tol);
        count += c;
    });
    const size_t bad = count;
    int printed = 0;
    for (size_t i = 0; i < got.n && bad && printed < max_print; i++) {
        double g = got.get(i), r = ref[i];
        if (!gk_test_close(g, r, tol)) {
            printf("  %s mismatch at %zu: got %.9g, want %.9g (|diff| %.3g, allowed %.3g)\n", what, i, g, r,
                   std::fabs(g - r), tol.atol + tol.rtol * std::fabs(r));
            printed++;
        }
    }
    if (bad) printf("  %s: %zu of %zu elements outside tolerance (atol %g, rtol %g)\n", what, bad, got.n, tol.atol,
                    tol.rtol);
    return bad;
}

#ifdef GK_GEMM_CUH
// ------------------------------------------------------------------ GEMM epilogue variants

// Where C comes from: none, a buffer of NaN with beta = 0 (C must not be read), values, or D
// itself (in place).
enum CMode { kCNull, kCNaN, kCValues, kCInPlace };

// The epilogue of one GEMM run (gk_gemm, gk_quant, gk_fp8): alpha, beta with C, bias, activation.
struct GkEpilogue {
    float alpha = 1.0f, beta = 0.0f;
    CMode c_mode = kCNull;
    bool bias = false;
    int act = GK_ACT_NONE;
};

// Epilogue variants, v % 5: plain; NaN C with beta = 0, bias, ReLU; C, GELU; C, bias, SiLU; in
// place with bias.
inline void gk_test_set_epilogue(GkEpilogue *p, int v)
{
    static const GkEpilogue kVariants[5] = {
        {1.0f, 0.0f, kCNull, false, GK_ACT_NONE},  {0.5f, 0.0f, kCNaN, true, GK_ACT_RELU},
        {-1.5f, 0.75f, kCValues, false, GK_ACT_GELU}, {2.0f, -1.0f, kCValues, true, GK_ACT_SILU},
        {1.0f, 1.0f, kCInPlace, true, GK_ACT_NONE},
    };
    *p = kVariants[v % 5];
}
#endif

#endif // GK_TEST_H
