// //gk_bench:quant - gk_quant.cuh's W4A16 GEMM (bf16 or f16 activations times prepacked int4
// weights with group scales) against the copy bandwidth over its bytes, the mma.sync / wgmma
// ceilings over its FLOPs, and cuBLAS's bf16 GEMM on the same weight dequantized, all measured in
// this process.
//
// THE PROBLEM. D[M][N] = X[M][K] W[N][K]^T (F.linear's layout), W = (u - z) s: u the 4-bit code,
// s the scale of (group, n), z its zero point, groups of G = 128 along K. bf16 (or f16) X and D,
// no bias, no C, no activation. Row names are w4a16_<dtype>_<zeros>_g128/m<M>_n<N>_k<K>/<kernel>:
//   dtype    bf16 (the main case), f16 (one row: M 1, N 28672, K 8192)
//   zeros    sym    GK_W4_SYMMETRIC: z = 8, codes read as signed int4 (the main case)
//            zint4  GK_W4_ZEROS_INT4: a 4-bit zero point a (group, n) (GPTQ, AWQ)
//            zflt   GK_W4_ZEROS_FLOAT: a bf16 / f16 zero point a (group, n) (HQQ style)
//   shapes   (N, K) = (28672, 8192) (Llama-3-70B's fused gate/up), (8192, 28672) (its down) and
//            (8192, 8192); M = 1, 16, 64, 128 (decode-sized) and 4096 (a prefill) for sym bf16;
//            zint4, zflt and f16 at M 1 on (28672, 8192) only
//   kernel   gk            gk_w4_gemm_bf16 (gk_w4_gemm_f16 for f16): the dispatcher, with a
//                          workspace of gk_w4_workspace_bytes(M, N, K) bytes (see WORKSPACE below);
//                          counters config, warps, slots, dequant: its plan (gk_w4_plan_for with that
//                          workspace); the label names the configuration
//            cublas        the baseline: cublasGemmEx on the weight dequantized once by
//                          gk_w4_dequant into a [N][K] matrix of X's dtype (transa T: cuBLAS's
//                          column-major D^T = W X^T), fp32 compute, CUBLAS_DEFAULT_MATH. Rows at
//                          every sym bf16 shape and M, and before the f16 row; a gk row with no
//                          cublas row of its dtype and M x N x K before it (zint4, zflt, the sweep
//                          when filtered alone) times cuBLAS in its own row
//            gk_gemm_bf16  M >= 1024 only: gk's own bf16 GEMM (gk_gemm_bf16, its dispatcher and
//                          gk_gemm_workspace_bytes' workspace) on the same dequantized weight: what
//                          the large-M path runs after dequantizing
//            gk_cfg<c>_<tile>_w<W>sm   M 1 (and w0sm at M 16, 64), (28672, 8192), sym bf16: gk_w4_gemm_ex forcing fused
//                          configuration c (0 .. gk_w4_config_count() - 1) on W x SMs working warps,
//                          W = 4, 8, 16, 24, 32 warps an SM, and w0sm: warps 0, the schedule's own
//                          count for that configuration (the tuning data: which configuration and
//                          how many warps the dispatcher should take), with a workspace large enough
//                          for any schedule's partials ((K / 64 + 1) M N 4 bytes, or
//                          gk_w4_workspace_bytes' if larger); the label says whether it is the
//                          dispatcher's pick
//   w4_dequant_<dtype>_sym_g128/n<N>_k<K>   gk_w4_dequant alone (the large-M path's first step),
//            each sym bf16 shape: codes and scales read, [N][K] bf16 written
// Inputs: canonical codes q [N][K / 2] of uniformly random bytes (every nibble uniform in 0..15),
// scales [K / G][N] of X's dtype uniform in [0.5, 1.5) x 1e-2, 4-bit zero points [K / G][N / 2]
// random bytes, float zero points [K / G][N] uniform in [4, 12) (code units); prepacked once by
// gk_w4_prepack (scales in X's dtype, as a checkpoint's are); X uniform in [-1, 1).
//
// NOTHING FROM L2. Every timed call (gk's, cuBLAS's, gk_gemm's) has the L2 flushed before it,
// outside its events (gk_bench_median_seconds: a memset of twice the L2's size), so the weight is
// read from device memory every call, even where it fits in L2 (8192 x 8192 in int4 with its
// scales: 34.6 MB; the H200's L2: 60 MB). X and D are flushed too. Warm-up 3 calls, the median of
// 25; 200 ms idle before each row's timing (as gemm_bench.cu does: the H200's clock recovers from
// the previous row).
//
//   ledger    gk_w4_ledger(M, N, K, 128, zero_mode, dtype, dtype, 0): FLOPs 2 M N K; bytes the
//             codes (N K / 2), the scale records (2 bytes a group and row, twice with zero
//             points), X and D once. cublas and gk_gemm_bf16 rows: gk_gemm_ledger (the bf16
//             weight, 2 N K bytes, X and D): their own work. w4_dequant rows: codes and scale
//             records read, 2 N K bytes written, no FLOPs
//   roof      bound_us = max(bytes / copy bandwidth, FLOPs / peak), pct_roof = 100 bound / time
//             (gk_bench_report): the copy bandwidth is gk_bench.h's (the best of cudaMemcpy D2D and
//             a tuned copy kernel, read + write bytes), the peak the mma.sync bf16 ceiling for the
//             fused kernels, and the wgmma ceiling (sm_90a build on a 9.0 GPU) for cuBLAS and for
//             gk_gemm when its plan takes a wgmma configuration (the gk rows on the dequantize +
//             GEMM path, gk_gemm_bf16), else mma.sync
//   counters  pct_copy_weights  100 x (the weight's bytes / copy bandwidth) / time: the percentage
//                          of the copy bandwidth the row reaches on the weight alone (gk rows: the
//                          codes and scale / zero records, gk_w4_ledger at M = 0; cublas and
//                          gk_gemm_bf16: the bf16 weight, 2 N K; w4_dequant: its ledger bytes).
//                          At M = 1 this is the measure of a weight-only GEMV
//             vs_cublas    cuBLAS's time / this row's time for the same dtype and M x N x K (> 1:
//                          faster than cuBLAS on the dequantized bf16 weight); vs_base is the same
//                          number (gk_bench_report's baseline); 0 on w4_dequant rows
//             vs_gk_bf16   M >= 1024: gk_gemm_bf16's time / this row's time; 0 elsewhere
//             config, warps, slots, dequant   gk rows: the plan (gk_w4_plan_for): the fused
//                          configuration, its working warps and the partials a (row group, token
//                          tile) pair may have (1: warps store whole pairs, no partials), or config
//                          gk_w4_config_count() with dequant 1: the dequantize + gk_gemm path;
//                          gk_cfg rows: the forced configuration and the working warps asked for
//                          (0: the schedule's), slots 0; -1, 0, 0, 0 on the others
//             err          max |D - cuBLAS's D| / max |cuBLAS's D| over the whole output (0 on the
//                          cublas and w4_dequant rows)
//             dq_err       the CPU check's largest |W - CPU| / (|CPU| + |z s|, float zero points
//                          only) over the sampled rows of the dequantized weight
//             cpu_err      the CPU check's largest |D - CPU| over its sampled outputs (of this
//                          row's kernel), relative to their largest |CPU|; 0 on w4_dequant rows
//
// WORKSPACE. The gk rows pass gk_w4_workspace_bytes(M, N, K) bytes, as the manual says a user
// would (the fused kernel's partials; at M >= 512 the dequantized weight and gk_gemm's workspace:
// 448 MiB at M 4096, N 28672, K 8192), from a buffer of its own outside the arena, grown as rows
// need; the label gives that size and what the plan uses of it. Where the allocation fails, the
// plan's own size for it is passed instead (the label says so).
//
// THE CHECK. Before a row is timed: (1) gk_w4_dequant's weight (into a poisoned buffer) has no
// NaN (every value written) and 8 rows of it (0, 1, 8, 15, 16, 17, N / 2 + 5, N - 1: both halves of
// a 16-row tile, a tile boundary, the last row) are recomputed on the CPU in double from the
// canonical codes, scales and zero points read back (codes with k even in the low nibble, signed
// nibbles when symmetric, unsigned 0..15 with zero points): within 2^-7 (|W| + |z s| for float zero
// points) of the CPU's; (2) the row's kernel runs once into a poisoned D, which must be finite
// everywhere; (3) D at tokens {0, M / 2, M - 1} x those 8 rows is recomputed on the CPU from the
// same X and weight (double), and the row's D and (on the other rows) cuBLAS's reference must be
// within 2^-7 (sum |x| (|w| + |z s|) + |ref|) of it, which allows the weight's rounding to bf16
// (cuBLAS's operand; each under 2^-8 |w|), the fp32 sums and D's rounding, with a margin; (4) the
// whole D within 2e-2 max |cuBLAS| + 1e-6 of cuBLAS's D (F.linear on the dequantized weight);
// (5) gk rows: the plan's configuration and working warps through gk_w4_gemm_ex give the
// dispatcher's bits (the plan says what runs). A refusal or a failed check says MISMATCH (or the
// error), the row is not timed, and after all rows ran the binary lists those rows and exits with
// status 1.
// A subset: --benchmark_filter=<regex on the row name>, e.g. '/m1_', 'n28672.*gk$', 'gk_cfg',
// 'zint4|zflt', '/cublas$', '^w4_dequant'.
#define GK_IMPLEMENTATION
#include "gk/gk_quant.cuh"
#include "gk_bench/gk_bench.h"

#include <cublas_v2.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

// ------------------------------------------------------------------ cuBLAS

static cudaError_t cublas_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "gk_bench: %s failed: %s\n", what, cublasGetStatusString(st));
        return cudaErrorUnknown;
    }
    return cudaGetLastError();
}

static cublasHandle_t cublas()
{
    static cublasHandle_t h = nullptr;
    if (h) return h;
    GK_BENCH_CUDA(cublas_check(cublasCreate(&h), "cublasCreate"));
    GK_BENCH_CUDA(cublas_check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"));
    return h;
}

// D[M][N] = X[M][K] W[N][K]^T, row-major: cuBLAS's column-major D^T (N x M) = W (op T on the
// column-major K x N matrix that W [N][K] row-major is) times X^T (K x M).
static cudaError_t cublas_linear(int dt, int64_t m, int64_t n, int64_t k, const void *x, const void *w, void *d,
                                 cudaStream_t s)
{
    cublasHandle_t h = cublas();
    cublasStatus_t st = cublasSetStream(h, s);
    if (st != CUBLAS_STATUS_SUCCESS) return cublas_check(st, "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t t = dt == GK_F16 ? CUDA_R_16F : CUDA_R_16BF;
    return cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, w, t, (int)k, x, t,
                                     (int)k, &zero, d, t, (int)n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
}

// ------------------------------------------------------------------ rows

enum QKind { Q_GK, Q_EX, Q_CUBLAS, Q_GK_GEMM, Q_DEQUANT };

struct QCase {
    std::string name;
    int dt;        // GK_BF16 or GK_F16: X, D and the prepacked scales
    int64_t m, n, k;
    int group;
    int zero_mode; // gk_w4_zeros
    QKind kind;
    int config, warps; // Q_EX: the forced configuration and working warps (0: the schedule's)
};

static const int kGroup = 128;
static const char *zeros_name(int zm) { return zm == GK_W4_ZEROS_INT4 ? "zint4" : zm == GK_W4_ZEROS_FLOAT ? "zflt" : "sym"; }
static const char *dt_name(int dt) { return dt == GK_F16 ? "f16" : "bf16"; }

// The key of a problem's baselines (their time does not depend on the weight's values).
static std::string problem_key(const QCase &c)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s/%lldx%lldx%lld", dt_name(c.dt), (long long)c.m, (long long)c.n, (long long)c.k);
    return buf;
}

static std::map<std::string, double> cublas_seconds, gk_gemm_seconds; // by problem_key
static std::vector<std::string> failed_rows; // refused or wrong: the run fails at the end

// ------------------------------------------------------------------ random bytes

static __global__ void qb_fill_bytes_kernel(unsigned char *p, int64_t n, uint64_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = (unsigned char)(z >> 56);
    }
}

// Uniformly random bytes (both nibbles uniform in 0..15), different for every call.
static void qb_fill_bytes(void *p, int64_t n)
{
    static uint64_t calls = 0;
    qb_fill_bytes_kernel<<<1024, 256>>>((unsigned char *)p, n, 0xb17e5eedull + 104729ull * ++calls);
    GK_BENCH_CUDA(cudaGetLastError());
}

// ------------------------------------------------------------------ buffers

// The workspace the gk rows pass: gk_w4_workspace_bytes' size, from a buffer of its own (it can
// be larger than the arena), grown when a row needs more.
static void *qb_big_workspace(size_t bytes, bool *ok)
{
    static void *p = nullptr;
    static size_t have = 0;
    *ok = true;
    if (bytes <= have) return p;
    if (p) GK_BENCH_CUDA(cudaFree(p));
    p = nullptr;
    have = 0;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        p = nullptr;
        *ok = false;
        return nullptr;
    }
    have = bytes;
    return p;
}

struct QBufs {
    void *q = nullptr, *scales = nullptr, *zeros = nullptr, *packed = nullptr;
    void *x = nullptr, *wd = nullptr, *d = nullptr, *ref = nullptr;
    void *ws = nullptr, *gemm_ws = nullptr;
    size_t ws_bytes = 0, ws_asked = 0, ws_manual = 0, gemm_ws_bytes = 0; // given, wanted, gk_w4_workspace_bytes
    bool ws_fallback = false;
    gk_w4_weight w;
    gk_w4_plan plan;
};

// Arena buffers for one row: canonical codes, scales and zero points random, prepacked once, the
// weight dequantized once (the baselines' operand), X random, D and the reference poisoned (NaN);
// the workspace gk_w4_workspace_bytes asks for; gk_gemm's for M >= 1024.
static QBufs setup(const QCase &c, std::string *why)
{
    gk_bench_arena_reset();
    QBufs f;
    const int64_t n = c.n, k = c.k, m = c.m, groups = k / c.group;
    const int es = gk_dtype_size(c.dt);
    f.q = gk_bench_alloc((size_t)(n * k / 2), false);
    f.scales = gk_bench_alloc((size_t)(groups * n * es), false);
    qb_fill_bytes(f.q, n * k / 2);
    gk_bench_fill_random(f.scales, c.dt, groups * n, 0.5e-2f, 1.5e-2f);
    if (c.zero_mode == GK_W4_ZEROS_INT4) {
        f.zeros = gk_bench_alloc((size_t)(groups * n / 2), false);
        qb_fill_bytes(f.zeros, groups * n / 2);
    } else if (c.zero_mode == GK_W4_ZEROS_FLOAT) {
        f.zeros = gk_bench_alloc((size_t)(groups * n * es), false);
        gk_bench_fill_random(f.zeros, c.dt, groups * n, 4.0f, 12.0f);
    }
    const size_t pb = gk_w4_packed_bytes(n, k, c.group, c.zero_mode);
    if (pb == 0) {
        *why = std::string("gk_w4_packed_bytes refused the shape: ") + gk_failure_reason();
        return f;
    }
    f.packed = gk_bench_alloc(pb); // poisoned: what the prepack does not write stays 0xff
    cudaError_t e = gk_w4_prepack(f.packed, c.dt, (const gk_int4x2 *)f.q, f.scales, c.dt, f.zeros, n, k, c.group,
                                  c.zero_mode, 0);
    if (e != cudaSuccess) {
        *why = std::string("gk_w4_prepack: ") + cudaGetErrorString(e) + ": " + gk_failure_reason();
        return f;
    }
    f.w.packed = f.packed;
    f.w.n = n;
    f.w.k = k;
    f.w.group = c.group;
    f.w.zero_mode = c.zero_mode;
    f.w.dtype = c.dt;
    f.wd = gk_bench_alloc((size_t)(n * k * es));
    e = gk_w4_dequant(f.wd, k, &f.w, 0);
    if (e != cudaSuccess) {
        *why = std::string("gk_w4_dequant: ") + cudaGetErrorString(e) + ": " + gk_failure_reason();
        return f;
    }
    if (c.kind != Q_DEQUANT) {
        f.x = gk_bench_alloc((size_t)(m * k * es), false);
        gk_bench_fill_random(f.x, c.dt, m * k, -1.0f, 1.0f);
        f.d = gk_bench_alloc((size_t)(m * n * es));
        f.ref = gk_bench_alloc((size_t)(m * n * es));
        if (m >= 1024) {
            f.gemm_ws_bytes = gk_gemm_workspace_bytes(m, n, k, 0, k, 1, k);
            f.gemm_ws = f.gemm_ws_bytes ? gk_bench_alloc(f.gemm_ws_bytes, false) : nullptr;
        }
    }
    if (c.kind == Q_GK || c.kind == Q_EX) {
        f.ws_asked = f.ws_manual = gk_w4_workspace_bytes(m, n, k);
        if (c.kind == Q_EX) // room for any schedule's partials: at most K / 64 + 1 a (row group, token tile) pair
            f.ws_asked = std::max(f.ws_asked, (size_t)((k / GK_W4_UNIT + 1) * m * n * 4));
        bool ok = true;
        f.ws = f.ws_asked ? qb_big_workspace(f.ws_asked, &ok) : nullptr;
        f.ws_bytes = f.ws ? f.ws_asked : 0;
        if (!ok) { // too large for this GPU: what the plan uses of it
            const gk_w4_plan pl = gk_w4_plan_for(m, n, k, c.group, c.zero_mode, f.ws_asked);
            f.ws = pl.workspace_bytes ? qb_big_workspace(pl.workspace_bytes, &ok) : nullptr;
            f.ws_bytes = f.ws ? pl.workspace_bytes : 0;
            f.ws_fallback = true;
        }
        f.plan = gk_w4_plan_for(m, n, k, c.group, c.zero_mode, f.ws_bytes);
        if (f.plan.config < 0) {
            *why = std::string("gk_w4_plan_for refused the problem: ") + gk_failure_reason();
            return f;
        }
    }
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    return f;
}

// One call of the row's kernel into d.
static cudaError_t launch(const QCase &c, const QBufs &f, void *d, cudaStream_t s)
{
    switch (c.kind) {
    case Q_GK:
        if (c.dt == GK_F16)
            return gk_w4_gemm_f16(d, c.dt, c.n, (const gk_f16 *)f.x, c.k, &f.w, NULL, 0, NULL, c.m, 1.0f, 0.0f,
                                  GK_ACT_NONE, f.ws, f.ws_bytes, s);
        return gk_w4_gemm_bf16(d, c.dt, c.n, (const gk_bf16 *)f.x, c.k, &f.w, NULL, 0, NULL, c.m, 1.0f, 0.0f,
                               GK_ACT_NONE, f.ws, f.ws_bytes, s);
    case Q_EX:
        return gk_w4_gemm_ex(c.config, c.warps, d, c.dt, c.n, f.x, c.k, &f.w, NULL, 0, NULL, c.m, 1.0f, 0.0f,
                             GK_ACT_NONE, f.ws, f.ws_bytes, s);
    case Q_CUBLAS: return cublas_linear(c.dt, c.m, c.n, c.k, f.x, f.wd, d, s);
    case Q_GK_GEMM:
        if (c.dt == GK_F16)
            return gk_gemm_f16(d, c.dt, c.n, (const gk_f16 *)f.x, c.k, 0, (const gk_f16 *)f.wd, c.k, 1, NULL, 0, NULL,
                               c.m, c.n, c.k, 1.0f, 0.0f, GK_ACT_NONE, f.gemm_ws, f.gemm_ws_bytes, s);
        return gk_gemm_bf16(d, c.dt, c.n, (const gk_bf16 *)f.x, c.k, 0, (const gk_bf16 *)f.wd, c.k, 1, NULL, 0, NULL,
                            c.m, c.n, c.k, 1.0f, 0.0f, GK_ACT_NONE, f.gemm_ws, f.gemm_ws_bytes, s);
    default: return gk_w4_dequant(d, c.k, &f.w, s);
    }
}

// ------------------------------------------------------------------ comparison on the device

// out[0] = max |x - ref|, out[1] = max |ref| over n values, as float bits (non-negative floats
// order like unsigned ints); a NaN anywhere makes out[0] NaN.
static __global__ void qb_max_diff_kernel(const void *x, const void *ref, int dt, int64_t n, unsigned *out)
{
    float dmax = 0.0f, rmax = 0.0f;
    bool nan = false;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float u = gk_load1_f32(x, i, dt), r = gk_load1_f32(ref, i, dt), d = fabsf(u - r);
        nan |= d != d || r != r;
        dmax = fmaxf(dmax, d);
        rmax = fmaxf(rmax, fabsf(r));
    }
    atomicMax(out, nan ? 0x7fc00000u : __float_as_uint(dmax));
    atomicMax(out + 1, __float_as_uint(rmax));
}

struct QDiff {
    double max_abs, max_ref;
};

static QDiff max_diff(const void *x, const void *ref, int dt, int64_t n)
{
    static unsigned *buf = nullptr;
    if (!buf) GK_BENCH_CUDA(cudaMalloc((void **)&buf, 2 * sizeof(unsigned)));
    GK_BENCH_CUDA(cudaMemset(buf, 0, 2 * sizeof(unsigned)));
    qb_max_diff_kernel<<<1024, 256>>>(x, ref, dt, n, buf);
    GK_BENCH_CUDA(cudaGetLastError());
    unsigned h[2];
    GK_BENCH_CUDA(cudaMemcpy(h, buf, sizeof h, cudaMemcpyDeviceToHost));
    float v[2];
    memcpy(v, h, sizeof v);
    return {v[0], v[1]};
}

// ------------------------------------------------------------------ the CPU check

// bf16 and f16 decoded from their bits here, not through gk's conversions.
static double half_bits_to_double(uint16_t b, int dt)
{
    if (dt == GK_BF16) {
        const uint32_t u = (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    const int s = b >> 15, e = (b >> 10) & 31, mant = b & 1023;
    double v;
    if (e == 31) v = mant ? NAN : INFINITY;
    else if (e == 0) v = std::ldexp((double)mant, -24);
    else v = std::ldexp(1.0 + mant / 1024.0, e - 15);
    return s ? -v : v;
}

// the dequantized weight: one rounding to 16 bits (under 2^-8 relative in bf16) and, for float zero
// points, -z s's (under 2^-8 |z s|): 2^-7 leaves a margin; a wrong code or scale is off by O(|W|)
static const double kWeightRtol = 1.0 / 128;
static const double kOutRtol = 1.0 / 128;          // sampled D against the CPU: see THE CHECK
static const double kRelTol = 2e-2, kAbsTol = 1e-6; // the whole D against cuBLAS's

struct QCheck {
    double err = 0;     // max |D - cuBLAS| / max |cuBLAS|
    double dq_err = 0;  // the dequantized weight's largest |gk - CPU| / (|CPU| + |z s|) (sampled rows)
    double cpu_err = 0; // sampled D: max |D - CPU| / max |CPU|
    int rows = 0, outputs = 0;
};

// The weight rows the CPU recomputes: both halves of a 16-row tile, a tile boundary, the last row.
static std::vector<int64_t> sample_rows(int64_t n)
{
    std::vector<int64_t> r = {0, 1, 8, 15, 16, 17, n / 2 + 5, n - 1};
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    while (!r.empty() && r.back() >= n) r.pop_back();
    return r;
}

// The CPU's weight rows (double) from the canonical codes, scales and zero points read back; each
// row's |z s| too (the float zero points' rounding budget). Checks gk_w4_dequant's rows against
// them and its whole output for NaN (the buffer was poisoned: every value must be written).
static void cpu_weight_rows(const QCase &c, const QBufs &f, const std::vector<int64_t> &rows,
                            std::vector<std::vector<double>> *w, std::vector<std::vector<double>> *zs, QCheck *chk,
                            std::string *why)
{
    const int64_t n = c.n, k = c.k, groups = k / c.group;
    const int es = gk_dtype_size(c.dt);
    const unsigned long long nf = gk_bench_count_nonfinite(f.wd, c.dt, n * k);
    if (nf) {
        char buf[160];
        snprintf(buf, sizeof buf, "gk_w4_dequant left %llu of %lld weights non-finite (unwritten); ", nf,
                 (long long)(n * k));
        *why += buf;
    }
    std::vector<unsigned char> qh((size_t)(k / 2)), zb((size_t)groups);
    std::vector<uint16_t> sh((size_t)groups), zh((size_t)groups), wh((size_t)k);
    std::string first;
    double worst = 0;
    for (int64_t r : rows) {
        GK_BENCH_CUDA(cudaMemcpy(qh.data(), (const char *)f.q + r * (k / 2), (size_t)(k / 2), cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy2D(sh.data(), es, (const char *)f.scales + r * es, (size_t)(n * es), es, (size_t)groups,
                                   cudaMemcpyDeviceToHost));
        if (c.zero_mode == GK_W4_ZEROS_INT4)
            GK_BENCH_CUDA(cudaMemcpy2D(zb.data(), 1, (const char *)f.zeros + r / 2, (size_t)(n / 2), 1, (size_t)groups,
                                       cudaMemcpyDeviceToHost));
        else if (c.zero_mode == GK_W4_ZEROS_FLOAT)
            GK_BENCH_CUDA(cudaMemcpy2D(zh.data(), es, (const char *)f.zeros + r * es, (size_t)(n * es), es,
                                       (size_t)groups, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(wh.data(), (const char *)f.wd + r * k * es, (size_t)(k * es), cudaMemcpyDeviceToHost));
        std::vector<double> row((size_t)k), zrow((size_t)k);
        for (int64_t kk = 0; kk < k; kk++) {
            const int64_t g = kk / c.group;
            // k even in the low nibble; symmetric: a signed nibble q, read here as u = q + 8 (offset binary)
            const unsigned nib = (qh[kk / 2] >> (4 * (kk & 1))) & 15u;
            const unsigned u = c.zero_mode == GK_W4_SYMMETRIC ? nib ^ 8u : nib;
            const double s = half_bits_to_double(sh[g], c.dt);
            double z;
            if (c.zero_mode == GK_W4_ZEROS_INT4) z = (zb[g] >> (4 * (r & 1))) & 15u; // n even in the low nibble
            else if (c.zero_mode == GK_W4_ZEROS_FLOAT) z = half_bits_to_double(zh[g], c.dt);
            else z = 8.0; // symmetric: W = q s = (u - 8) s
            row[kk] = ((double)u - z) * s;
            zrow[kk] = c.zero_mode == GK_W4_ZEROS_FLOAT ? std::fabs(z * s) : 0.0;
            const double got = half_bits_to_double(wh[kk], c.dt), diff = std::fabs(got - row[kk]);
            const double bound = kWeightRtol * (std::fabs(row[kk]) + zrow[kk]);
            const double scale = std::fabs(row[kk]) + zrow[kk];
            if (scale > 0 && !(diff / scale <= worst)) worst = diff / scale; // NaN sticks
            if (!(diff <= bound) && first.empty()) {
                char buf[200];
                snprintf(buf, sizeof buf, "dequantized weight (%lld, %lld): gk %.6g, CPU %.6g (code %u, z %g, s %.6g); ",
                         (long long)r, (long long)kk, got, row[kk], u, z, s);
                first = buf;
            }
        }
        w->push_back(row);
        zs->push_back(zrow);
    }
    chk->dq_err = worst;
    chk->rows = (int)rows.size();
    *why += first;
}

// D at tokens {0, M / 2, M - 1} x the sampled rows against the CPU (double) from the same X and
// the CPU's weight rows: out is an [M][N] output of c.dt already computed; who names it. Returns
// max |out - CPU| / max |CPU| over the samples.
static double cpu_outputs(const QCase &c, const QBufs &f, const void *out, const std::vector<int64_t> &rows,
                          const std::vector<std::vector<double>> &w, const std::vector<std::vector<double>> &zs,
                          const char *who, int *outputs, std::string *why)
{
    const int64_t n = c.n, k = c.k;
    const int es = gk_dtype_size(c.dt);
    std::vector<int64_t> toks = {0, c.m / 2, c.m - 1};
    std::sort(toks.begin(), toks.end());
    toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
    std::vector<uint16_t> xh((size_t)k), dh((size_t)n);
    std::string first;
    double worst = 0, ref_max = 0;
    for (int64_t t : toks) {
        GK_BENCH_CUDA(cudaMemcpy(xh.data(), (const char *)f.x + t * k * es, (size_t)(k * es), cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(dh.data(), (const char *)out + t * n * es, (size_t)(n * es), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < rows.size(); i++) {
            double ref = 0, budget = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double xv = half_bits_to_double(xh[kk], c.dt);
                ref += xv * w[i][kk];
                budget += std::fabs(xv) * (std::fabs(w[i][kk]) + zs[i][kk]);
            }
            const double got = half_bits_to_double(dh[rows[i]], c.dt), diff = std::fabs(got - ref);
            ref_max = std::max(ref_max, std::fabs(ref));
            if (!(diff <= worst)) worst = diff; // NaN sticks
            if (!(diff <= kOutRtol * (budget + std::fabs(ref)) + kAbsTol) && first.empty()) {
                char buf[240];
                snprintf(buf, sizeof buf, "%s D(%lld, %lld): %.6g, CPU %.6g (allowed %.3g); ", who, (long long)t,
                         (long long)rows[i], got, ref, kOutRtol * (budget + std::fabs(ref)) + kAbsTol);
                first = buf;
            }
            ++*outputs;
        }
    }
    *why += first;
    return ref_max > 0 ? worst / ref_max : worst;
}

// The row's check (THE CHECK in the header comment): the dequantized weight against the CPU, one
// call of the row's kernel into the poisoned D, D finite, sampled against the CPU and whole
// against cuBLAS's, and for gk rows the plan run through gk_w4_gemm_ex. *why says what is wrong
// (empty: nothing).
static QCheck run_and_check(const QCase &c, QBufs &f, std::string *why)
{
    QCheck chk;
    const std::vector<int64_t> rows = sample_rows(c.n);
    std::vector<std::vector<double>> w, zs;
    cpu_weight_rows(c, f, rows, &w, &zs, &chk, why);
    if (c.kind == Q_DEQUANT || !why->empty()) return chk;

    const int es = gk_dtype_size(c.dt);
    const int64_t nd = c.m * c.n;
    // cuBLAS's D on the dequantized weight: the reference of the whole output
    cudaError_t e = cublas_linear(c.dt, c.m, c.n, c.k, f.x, f.wd, f.ref, 0);
    if (e != cudaSuccess) {
        *why = std::string("cuBLAS refused the reference: ") + cudaGetErrorString(e);
        return chk;
    }
    void *out = c.kind == Q_CUBLAS ? f.ref : f.d;
    if (c.kind != Q_CUBLAS) {
        e = launch(c, f, f.d, 0);
        if (e != cudaSuccess) {
            *why = std::string(cudaGetErrorString(e)) + ": " + gk_failure_reason();
            return chk;
        }
    }
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    char buf[256];
    const unsigned long long nf = gk_bench_count_nonfinite(out, c.dt, nd);
    if (nf) {
        snprintf(buf, sizeof buf, "%llu of %lld outputs not finite (NaN: never written); ", nf, (long long)nd);
        *why += buf;
    }
    int outputs = 0;
    chk.cpu_err = cpu_outputs(c, f, out, rows, w, zs, c.kind == Q_CUBLAS ? "cuBLAS" : "the row's kernel", &chk.outputs, why);
    if (c.kind != Q_CUBLAS) {
        cpu_outputs(c, f, f.ref, rows, w, zs, "cuBLAS (the reference)", &outputs, why);
        const QDiff d = max_diff(f.d, f.ref, c.dt, nd);
        chk.err = d.max_ref > 0 ? d.max_abs / d.max_ref : d.max_abs;
        if (!(d.max_abs <= kRelTol * d.max_ref + kAbsTol) || !(d.max_ref > 0)) {
            snprintf(buf, sizeof buf, "max |D - cuBLAS| %.4g > %.2g max |cuBLAS| (%.4g) + %.0e; ", d.max_abs, kRelTol,
                     d.max_ref, kAbsTol);
            *why += buf;
        }
    }
    if (c.kind == Q_GK && why->empty()) { // the plan through gk_w4_gemm_ex: the dispatcher's bits
        void *d2 = gk_bench_alloc((size_t)(nd * es));
        e = gk_w4_gemm_ex(f.plan.config, f.plan.warps, d2, c.dt, c.n, f.x, c.k, &f.w, NULL, 0, NULL, c.m, 1.0f, 0.0f,
                          GK_ACT_NONE, f.ws, f.ws_bytes, 0);
        if (e != cudaSuccess) {
            *why = std::string("gk_w4_gemm_ex with the plan's configuration and warps: ") + gk_failure_reason();
            return chk;
        }
        GK_BENCH_CUDA(cudaDeviceSynchronize());
        const unsigned long long diff = gk_bench_count_diff16(d2, f.d, (size_t)(nd * es)); // N % 8 == 0: whole chunks
        if (diff) {
            snprintf(buf, sizeof buf, "the plan's configuration %d and %d warps through gk_w4_gemm_ex differ from the "
                     "dispatcher in %llu 16-byte chunks of D", f.plan.config, f.plan.warps, diff);
            *why += buf;
        }
    }
    return chk;
}

// ------------------------------------------------------------------ labels

// A configuration's tile, from its kernel name (gk_w4_bf16_<tile>), else RW x NT.
static std::string config_tile(int c)
{
    const gk_w4_config i = gk_w4_config_info(c);
    const std::string prefix = "gk_w4_bf16_", name = i.name ? i.name : "";
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) return name.substr(prefix.size());
    return "r" + std::to_string(i.row_tiles) + "t" + std::to_string(i.token_tiles);
}

static std::string config_text(int c)
{
    if (c == gk_w4_config_count()) return "cfg " + std::to_string(c) + ": dequantize into the workspace + gk_gemm";
    const gk_w4_config i = gk_w4_config_info(c);
    char buf[200];
    snprintf(buf, sizeof buf, "cfg %d %s: %d x 16 weight rows x %d x 8 tokens a position, %d warps a block, ring of %d, "
             "%d blocks/SM budgeted, %d threads, %d KB smem", c, config_tile(c).c_str(), i.row_tiles, i.token_tiles,
             i.warps, i.prefetch, i.min_blocks, i.threads, i.smem_bytes >> 10);
    return buf;
}

// gk_gemm's configuration for this problem (the large-M path and the gk_gemm_bf16 rows), and
// whether it runs on wgmma.
static int gemm_config(const QCase &c, bool *wgmma)
{
    const gk_gemm_plan pl = gk_gemm_plan_for(c.m, c.n, c.k, 0, c.k, 1, c.k);
    *wgmma = pl.config >= 0 && gk_gemm_config_info(pl.config).wgmma && gk_bench_wgmma_ceiling() > 0;
    return pl.config;
}

// ------------------------------------------------------------------ one row

static void run_row(benchmark::State &state, QCase c)
{
    std::string why;
    QBufs f = setup(c, &why);
    QCheck chk;
    if (why.empty()) chk = run_and_check(c, f, &why);
    if (!why.empty()) {
        fprintf(stderr, "gk_bench: %s failed: %s\n", c.name.c_str(), why.c_str());
        failed_rows.push_back(c.name + " (" + why + ")");
        state.SkipWithError(("MISMATCH or error: " + why).c_str());
        return;
    }
    const std::string key = problem_key(c);
    const bool gk_w4 = c.kind == Q_GK || c.kind == Q_EX;
    // the ledger and the weight's bytes: gk's int4 form, or the bf16 weight the baselines read
    const gk_ledger w4 = gk_w4_ledger(c.m, c.n, c.k, c.group, c.zero_mode, c.dt, c.dt, 0);
    const double w4_weight_bytes = gk_w4_ledger(0, c.n, c.k, c.group, c.zero_mode, c.dt, c.dt, 0).bytes;
    gk_ledger l;
    double weight_bytes;
    if (c.kind == Q_DEQUANT) {
        l = {0.0, w4_weight_bytes + (double)c.n * c.k * gk_dtype_size(c.dt)};
        weight_bytes = l.bytes;
    } else if (gk_w4) {
        l = w4;
        weight_bytes = w4_weight_bytes;
    } else {
        l = gk_gemm_ledger(c.m, c.n, c.k, c.dt, c.dt, 0, 0);
        weight_bytes = (double)c.n * c.k * gk_dtype_size(c.dt);
    }
    // the FLOP ceiling of the unit the row runs on
    bool gemm_wgmma = false;
    const int gemm_cfg = c.kind == Q_DEQUANT ? -1 : gemm_config(c, &gemm_wgmma);
    const bool dequant_path = (c.kind == Q_GK && f.plan.dequant) || (c.kind == Q_EX && c.config == gk_w4_config_count());
    bool on_wgmma = false;
    if (c.kind == Q_CUBLAS) on_wgmma = gk_bench_wgmma_ceiling() > 0;
    else if (c.kind == Q_GK_GEMM || dequant_path) on_wgmma = gemm_wgmma;
    const double peak = on_wgmma ? gk_bench_wgmma_ceiling() : gk_bench_mma_ceiling();

    auto call = [&](cudaStream_t s) { return launch(c, f, c.kind == Q_DEQUANT ? f.wd : c.kind == Q_CUBLAS ? f.ref : f.d, s); };
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double t = 0, t_cublas = 0, t_gemm = 0;
    for (auto _ : state) {
        t = gk_bench_median_seconds(call);
        if (c.kind == Q_CUBLAS) cublas_seconds[key] = t;
        if (c.kind == Q_GK_GEMM) gk_gemm_seconds[key] = t;
        if (c.kind != Q_DEQUANT) {
            if (!cublas_seconds.count(key)) // no cublas row of this problem ran before: time it here
                cublas_seconds[key] = gk_bench_median_seconds(
                    [&](cudaStream_t s) { return cublas_linear(c.dt, c.m, c.n, c.k, f.x, f.wd, f.ref, s); });
            t_cublas = cublas_seconds[key];
            if (c.m >= 1024 && !gk_gemm_seconds.count(key)) {
                QCase g = c;
                g.kind = Q_GK_GEMM;
                gk_gemm_seconds[key] = gk_bench_median_seconds([&](cudaStream_t s) { return launch(g, f, f.ref, s); });
            }
            if (c.m >= 1024) t_gemm = gk_gemm_seconds[key];
        }
        gk_bench_report(state, t, l, peak, t_cublas);
        if (t_cublas <= 0) state.counters["vs_base"] = 0.0; // every row has the same counters: one table header
        state.counters["pct_copy_weights"] = 100.0 * (weight_bytes / gk_bench_device().copy_bytes_per_s) / t;
        state.counters["vs_cublas"] = t_cublas > 0 ? t_cublas / t : 0.0;
        state.counters["vs_gk_bf16"] = t_gemm > 0 ? t_gemm / t : 0.0;
        state.counters["config"] = c.kind == Q_GK ? f.plan.config : c.kind == Q_EX ? c.config : -1;
        state.counters["warps"] = c.kind == Q_GK ? f.plan.warps : c.kind == Q_EX ? c.warps : 0;
        state.counters["slots"] = c.kind == Q_GK ? f.plan.slots : 0;
        state.counters["dequant"] = c.kind == Q_GK ? f.plan.dequant : dequant_path ? 1 : 0;
        state.counters["err"] = chk.err;
        state.counters["dq_err"] = chk.dq_err;
        state.counters["cpu_err"] = chk.cpu_err;
    }

    char buf[900];
    std::string label;
    const double mib = 1.0 / 1048576.0;
    switch (c.kind) {
    case Q_GK:
    case Q_EX: {
        const int cfg = c.kind == Q_GK ? f.plan.config : c.config;
        const int warps = c.kind == Q_GK ? f.plan.warps : c.warps;
        const int sms = gk_bench_device().sms;
        std::string how;
        if (cfg == gk_w4_config_count()) {
            snprintf(buf, sizeof buf, "%s (gk_gemm cfg %d%s%s)", config_text(cfg).c_str(), gemm_cfg,
                     gemm_cfg >= 0 && gk_gemm_config_info(gemm_cfg).name ? " " : "",
                     gemm_cfg >= 0 && gk_gemm_config_info(gemm_cfg).name ? gk_gemm_config_info(gemm_cfg).name : "");
            how = buf;
        } else if (c.kind == Q_GK) {
            snprintf(buf, sizeof buf, "%s; %d working warps (%.1f an SM), %s", config_text(cfg).c_str(), warps,
                     (double)warps / sms, f.plan.slots > 1 ? ("up to " + std::to_string(f.plan.slots) +
                                                             " partials a pair, summed by a second kernel").c_str()
                                                           : "whole pairs a warp, no partials");
            how = buf;
        } else if (warps == 0) {
            snprintf(buf, sizeof buf, "%s; warps 0: the schedule's own count", config_text(cfg).c_str());
            how = buf;
        } else {
            snprintf(buf, sizeof buf, "%s; %d working warps asked (%d an SM)", config_text(cfg).c_str(), warps,
                     warps / sms);
            how = buf;
        }
        if (c.kind == Q_GK)
            label = std::string(c.dt == GK_F16 ? "gk_w4_gemm_f16" : "gk_w4_gemm_bf16") + ", dispatcher: " + how;
        else
            label = "gk_w4_gemm_ex " + how + (cfg != f.plan.config ? ", not the dispatcher's configuration"
                                              : warps == 0 || warps == f.plan.warps ? ", the dispatcher's pick"
                                                                                    : ", the dispatcher's configuration");
        snprintf(buf, sizeof buf, "; workspace %.2f MiB given (%s %.2f MiB%s; gk_w4_workspace_bytes %.2f MiB), the plan "
                 "uses %.2f MiB", f.ws_bytes * mib, c.kind == Q_EX ? "room for any schedule's partials" : "wanted",
                 f.ws_asked * mib, f.ws_fallback ? ", could not be allocated" : "", f.ws_manual * mib,
                 f.plan.workspace_bytes * mib);
        label += buf;
        break;
    }
    case Q_CUBLAS:
        label = std::string("baseline: cublasGemmEx ") + dt_name(c.dt) + " on the weight dequantized by gk_w4_dequant, "
                "fp32 compute";
        break;
    case Q_GK_GEMM:
        snprintf(buf, sizeof buf, "gk_gemm_%s on the dequantized weight (cfg %d %s)", dt_name(c.dt), gemm_cfg,
                 gemm_cfg >= 0 && gk_gemm_config_info(gemm_cfg).name ? gk_gemm_config_info(gemm_cfg).name : "?");
        label = buf;
        break;
    default: label = "gk_w4_dequant alone: the prepacked weight as [N][K] " + std::string(dt_name(c.dt)); break;
    }
    if (c.kind == Q_CUBLAS || c.kind == Q_GK_GEMM)
        snprintf(buf, sizeof buf, "; reads the dequantized 16-bit weight, %.1f MB (int4 form: %.1f MB); check: %d weight "
                 "rows and %d outputs vs CPU", weight_bytes * 1e-6, w4_weight_bytes * 1e-6, chk.rows, chk.outputs);
    else
        snprintf(buf, sizeof buf, "; weight %.1f MB int4 (codes and scale / zero records); check: %d weight rows and %d "
                 "outputs vs CPU", w4_weight_bytes * 1e-6, chk.rows, chk.outputs);
    label += buf;
    if (c.kind != Q_DEQUANT) {
        snprintf(buf, sizeof buf, "; cuBLAS %.1f us", t_cublas * 1e6);
        label += buf;
        if (t_gemm > 0) {
            snprintf(buf, sizeof buf, ", gk_gemm %.1f us", t_gemm * 1e6);
            label += buf;
        }
    }
    state.SetLabel(label);
}

// ------------------------------------------------------------------ registration

static void add(const QCase &c)
{
    benchmark::RegisterBenchmark(c.name.c_str(), run_row, c)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

static std::string problem_name(int dt, int zm, int64_t m, int64_t n, int64_t k)
{
    char buf[128];
    snprintf(buf, sizeof buf, "w4a16_%s_%s_g%d/m%lld_n%lld_k%lld", dt_name(dt), zeros_name(zm), kGroup, (long long)m,
             (long long)n, (long long)k);
    return buf;
}

static QCase qcase(const std::string &name, int dt, int zm, int64_t m, int64_t n, int64_t k, QKind kind, int config = -1,
                   int warps = 0)
{
    QCase c;
    c.name = name;
    c.dt = dt;
    c.m = m;
    c.n = n;
    c.k = k;
    c.group = kGroup;
    c.zero_mode = zm;
    c.kind = kind;
    c.config = config;
    c.warps = warps;
    return c;
}

static void register_all()
{
    int cublas_version = 0;
    GK_BENCH_CUDA(cublas_check(cublasGetVersion(cublas(), &cublas_version), "cublasGetVersion"));
    benchmark::AddCustomContext("cublas_version", std::to_string(cublas_version));
    printf("gk_bench: cuBLAS %d\n", cublas_version);
    gk_bench_register_copy_row();
    gk_bench_register_tensor_ceilings(); // mma.sync and wgmma (gk_bench.h)
    printf("gk_bench: %d fused W4A16 configurations:", gk_w4_config_count());
    for (int i = 0; i < gk_w4_config_count(); i++) printf(" %s", config_tile(i).c_str());
    printf("\n");

    const struct {
        int64_t n, k;
    } shapes[] = {{28672, 8192}, {8192, 28672}, {8192, 8192}};
    const int64_t ms[] = {1, 16, 64, 128, 4096};
    // symmetric G128 bf16: cuBLAS, gk_gemm (M >= 1024), then gk's dispatcher
    for (const auto &s : shapes)
        for (int64_t m : ms) {
            const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, m, s.n, s.k);
            add(qcase(base + "/cublas", GK_BF16, GK_W4_SYMMETRIC, m, s.n, s.k, Q_CUBLAS));
            if (m >= 1024) add(qcase(base + "/gk_gemm_bf16", GK_BF16, GK_W4_SYMMETRIC, m, s.n, s.k, Q_GK_GEMM));
            add(qcase(base + "/gk", GK_BF16, GK_W4_SYMMETRIC, m, s.n, s.k, Q_GK));
        }
    // zero points (AWQ / GPTQ style and float), and f16 activations: decode on the gate/up shape
    add(qcase(problem_name(GK_BF16, GK_W4_ZEROS_INT4, 1, 28672, 8192) + "/gk", GK_BF16, GK_W4_ZEROS_INT4, 1, 28672, 8192, Q_GK));
    add(qcase(problem_name(GK_BF16, GK_W4_ZEROS_FLOAT, 1, 28672, 8192) + "/gk", GK_BF16, GK_W4_ZEROS_FLOAT, 1, 28672, 8192, Q_GK));
    add(qcase(problem_name(GK_F16, GK_W4_SYMMETRIC, 1, 28672, 8192) + "/cublas", GK_F16, GK_W4_SYMMETRIC, 1, 28672, 8192, Q_CUBLAS));
    add(qcase(problem_name(GK_F16, GK_W4_SYMMETRIC, 1, 28672, 8192) + "/gk", GK_F16, GK_W4_SYMMETRIC, 1, 28672, 8192, Q_GK));
    // the tuning sweep: every fused configuration on 0 (its schedule's own count), 4 .. 32 working
    // warps an SM, at M 1 on the gate/up shape
    {
        const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, 1, 28672, 8192);
        const int sms = gk_bench_device().sms;
        for (int cfg = 0; cfg < gk_w4_config_count(); cfg++)
            for (int per_sm : {0, 4, 8, 16, 24, 32})
                if (!gk_w4_config_info(cfg).wgmma) // a block a worker: its own rows below
                    add(qcase(base + "/gk_cfg" + std::to_string(cfg) + "_" + config_tile(cfg) + "_w" +
                                  std::to_string(per_sm) + "sm",
                              GK_BF16, GK_W4_SYMMETRIC, 1, 28672, 8192, Q_EX, cfg, per_sm * sms));
    }
    // and at M 16 and 64 on the schedule's own warp count (the dispatcher's choice by M)
    for (int64_t m : {16, 64}) {
        const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, m, 28672, 8192);
        for (int cfg = 0; cfg < gk_w4_config_count(); cfg++)
            if (!gk_w4_config_info(cfg).lean || m <= 8 * gk_w4_config_info(cfg).token_tiles) // lean: M <= 8 NT
            add(qcase(base + "/gk_cfg" + std::to_string(cfg) + "_" + config_tile(cfg) + "_w0sm", GK_BF16,
                      GK_W4_SYMMETRIC, m, 28672, 8192, Q_EX, cfg, 0));
    }
    // the wgmma configurations at M 1 to 32 (the lean and ring kernels' range), 128, 256 and 4096
    // (where the dispatcher dequantizes W for gk_gemm)
    for (int64_t m : {1, 8, 32}) {
        const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, m, 28672, 8192);
        for (int cfg = 0; cfg < gk_w4_config_count(); cfg++)
            if (gk_w4_config_info(cfg).wgmma && 8 * gk_w4_config_info(cfg).token_tiles <= 64)
                add(qcase(base + "/gk_cfg" + std::to_string(cfg) + "_" + config_tile(cfg) + "_w0sm", GK_BF16,
                          GK_W4_SYMMETRIC, m, 28672, 8192, Q_EX, cfg, 0));
    }
    for (int64_t m : {256, 512}) { // around GK_W4_WG_DEQUANT_M: the dispatcher's pick on the gate/up shape
        const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, m, 28672, 8192);
        add(qcase(base + "/cublas", GK_BF16, GK_W4_SYMMETRIC, m, 28672, 8192, Q_CUBLAS));
        add(qcase(base + "/gk", GK_BF16, GK_W4_SYMMETRIC, m, 28672, 8192, Q_GK));
    }
    for (const auto &s : shapes)
        for (int64_t m : {128, 256, 512, 4096}) {
            const std::string base = problem_name(GK_BF16, GK_W4_SYMMETRIC, m, s.n, s.k);
            for (int cfg = 0; cfg < gk_w4_config_count(); cfg++)
                if (gk_w4_config_info(cfg).wgmma)
                    add(qcase(base + "/gk_cfg" + std::to_string(cfg) + "_" + config_tile(cfg) + "_w0sm", GK_BF16,
                              GK_W4_SYMMETRIC, m, s.n, s.k, Q_EX, cfg, 0));
        }
    // the large-M path's first step alone
    for (const auto &s : shapes) {
        char buf[96];
        snprintf(buf, sizeof buf, "w4_dequant_bf16_sym_g%d/n%lld_k%lld", kGroup, (long long)s.n, (long long)s.k);
        add(qcase(buf, GK_BF16, GK_W4_SYMMETRIC, 0, s.n, s.k, Q_DEQUANT));
    }
}

// Every row runs; then a refused or wrong result fails the run (exit status 1), listing the rows.
int main(int argc, char **argv)
{
    const int rc = gk_bench_main(argc, argv, register_all);
    if (rc != 0 || failed_rows.empty()) return rc;
    fprintf(stderr, "gk_bench: FAILED: %zu row(s) refused or differ from cuBLAS / the CPU past the tolerance:\n",
            failed_rows.size());
    for (const std::string &r : failed_rows) fprintf(stderr, "  %s\n", r.c_str());
    return 1;
}
