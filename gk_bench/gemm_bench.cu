// //gk_bench:gemm - gk_gemm.cuh against cuBLAS and the device's own ceilings, all measured in this
// process. Row names are <in dtype>_<layout>/<M>x<N>x<K>/<kernel>; layout NN reads B as [K, N],
// NT as [N, K] (a Linear weight), TN and TT A as [K, M]. Rows named suite_... are the shape suite
// (gk_bench/gemm_suite.h, written by gk_bench/compare/gemm_suite.py): cuBLAS and the dispatcher
// on each shape, then one table of the suite with its geometric mean after every row ran. Every row runs once untimed, its output compared with cuBLAS's
// on the same inputs (counter err: max |gk - cuBLAS| / max |cuBLAS|, 0 on the reference rows),
// then is timed with the L2 flushed before each call; a row past the tolerance says MISMATCH, and
// after all rows ran the binary lists those rows and exits with status 1.
//   ceilings  mma.sync m16n8k16 bf16 -> fp32 from registers (the peak of the mma.sync rows),
//             wgmma m64n256k16 bf16 -> fp32 from shared memory (sm_90a builds on a compute
//             capability 9.0 GPU: the peak of the wgmma rows and of cuBLAS's), FFMA
//             (gk_bench_device(), the peak of every fp32 row), copy bandwidth (the byte side);
//             the mma.sync and wgmma ceilings are gk_bench.h's, shared with the attention bench
//   baseline  vs_base = cuBLAS time / this row's time for the same shape: cublasGemmEx bf16 in
//             and out, CUBLAS_COMPUTE_32F; cublasSgemm in CUBLAS_DEFAULT_MATH (no TF32, which
//             the startup check would see as a 100x larger error)
// A subset: --benchmark_filter=<regex on the row name>, e.g. 'bf16_nt/8192', '/cublas$', '^f32',
// '^suite' (the suite alone).
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
#include "gk/gk_sgemm.cuh"
#include "gk_bench/gk_bench.h"
#include "gk_bench/gemm_suite.h"

#include <cublas_v2.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>

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
    // Default math: fp32 GEMMs stay fp32 (no TF32 tensor cores); bf16 GEMMs use tensor cores anyway.
    GK_BENCH_CUDA(cublas_check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"));
    cublasMath_t mode;
    GK_BENCH_CUDA(cublas_check(cublasGetMathMode(h, &mode), "cublasGetMathMode"));
    if (mode != CUBLAS_DEFAULT_MATH) {
        fprintf(stderr, "gk_bench: cuBLAS math mode is %d, not CUBLAS_DEFAULT_MATH\n", (int)mode);
        exit(1);
    }
    return h;
}

// ------------------------------------------------------------------ one GEMM problem

struct Gemm {
    int dt;                   // input dtype: GK_BF16 (tensor cores, bf16 out) or GK_F32 (SIMT, fp32 out)
    int tb;                   // 1: B stored [N, K] (NT), 0: [K, N] (NN)
    int ta;                   // 1: A stored [K, M] (TN, TT; bf16 only), 0: [M, K]
    int64_t m, n, k;          // row-major C[M, N] = A[M, K] op(B)
    int64_t lda, ldb, ldd;
};

static Gemm gemm(int dt, int tb, int64_t m, int64_t n, int64_t k)
{
    return {dt, tb, 0, m, n, k, k, tb ? k : n, n};
}

// A bf16 problem in any of the four layouts.
static Gemm gemm_layout(int ta, int tb, int64_t m, int64_t n, int64_t k)
{
    return {GK_BF16, tb, ta, m, n, k, ta ? m : k, tb ? k : n, n};
}

static std::string shape_name(const Gemm &g)
{
    return std::string(g.dt == GK_F32 ? "f32" : "bf16") + (g.ta ? "_t" : "_n") + (g.tb ? "t/" : "n/") + std::to_string(g.m) + "x" +
           std::to_string(g.n) + "x" + std::to_string(g.k);
}

// cuBLAS is column-major: gk's row-major D = A op(B) is cuBLAS's D^T = op(B)^T A^T, so the call
// is (N, M, K, B, ldb, A, lda, D, ldd). B stored [N, K] row-major is a column-major K x N matrix:
// that is op(B) itself, so op(B)^T is CUBLAS_OP_T on it.
static cudaError_t cublas_gemm(const Gemm &g, const void *a, const void *b, void *d, int d_dt, cudaStream_t s)
{
    cublasHandle_t h = cublas();
    cublasStatus_t st = cublasSetStream(h, s);
    if (st != CUBLAS_STATUS_SUCCESS) return cublas_check(st, "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t ob = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, oa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (g.dt == GK_F32)
        return cublas_check(cublasSgemm(h, ob, CUBLAS_OP_N, (int)g.n, (int)g.m, (int)g.k, &one, (const float *)b,
                                        (int)g.ldb, (const float *)a, (int)g.lda, &zero, (float *)d, (int)g.ldd),
                            "cublasSgemm");
    return cublas_check(cublasGemmEx(h, ob, oa, (int)g.n, (int)g.m, (int)g.k, &one, b, CUDA_R_16BF,
                                     (int)g.ldb, a, CUDA_R_16BF, (int)g.lda, &zero, d,
                                     d_dt == GK_F32 ? CUDA_R_32F : CUDA_R_16BF, (int)g.ldd, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
}

enum Kern { K_CUBLAS, K_GK, K_GK_CONFIG, K_F32_NAIVE, K_F32_SMEM, K_F32_REGTILE, K_F32_WARPTILE, K_F32_PIPELINED };

struct Bufs {
    void *a, *b, *d, *ref, *ws;
    size_t ws_bytes;
};

// Arena buffers for one problem: A and B random, D and the cuBLAS reference poisoned (NaN), the
// workspace the dispatcher asks for (split-K partials, repacked operands; bf16 only).
static Bufs setup(const Gemm &g)
{
    gk_bench_arena_reset();
    const int es = gk_dtype_size(g.dt);
    const int64_t na = (g.ta ? g.k : g.m) * g.lda, nb = (g.tb ? g.n : g.k) * g.ldb, nd = g.m * g.ldd;
    Bufs f;
    f.a = gk_bench_alloc(na * es, false);
    f.b = gk_bench_alloc(nb * es, false);
    f.d = gk_bench_alloc(nd * es);
    f.ref = gk_bench_alloc(nd * es);
    f.ws_bytes = g.dt == GK_F32 ? 0 : gk_gemm_workspace_bytes(g.m, g.n, g.k, g.ta, g.lda, g.tb, g.ldb);
    f.ws = f.ws_bytes ? gk_bench_alloc(f.ws_bytes, false) : nullptr;
    gk_bench_fill_random(f.a, g.dt, na);
    gk_bench_fill_random(f.b, g.dt, nb);
    return f;
}

// One call of a row's kernel; D is bf16 for bf16 inputs unless d_dt says otherwise.
static cudaError_t launch(const Gemm &g, Kern kern, int config, const Bufs &f, void *d, int d_dt, cudaStream_t s)
{
    const float *a = (const float *)f.a, *b = (const float *)f.b;
    float *c = (float *)d;
    switch (kern) {
    case K_CUBLAS: return cublas_gemm(g, f.a, f.b, d, d_dt, s);
    case K_GK:
        return gk_gemm_bf16(d, d_dt, g.ldd, (const gk_bf16 *)f.a, g.lda, g.ta, (const gk_bf16 *)f.b, g.ldb, g.tb, NULL, 0,
                            NULL, g.m, g.n, g.k, 1.0f, 0.0f, GK_ACT_NONE, f.ws, f.ws_bytes, s);
    case K_GK_CONFIG:
        return gk_gemm_ex(config, 0, GK_BF16, d, d_dt, g.ldd, f.a, g.lda, g.ta, f.b, g.ldb, g.tb, NULL, 0, NULL, g.m, g.n,
                          g.k, 1.0f, 0.0f, GK_ACT_NONE, f.ws, f.ws_bytes, s);
    case K_F32_NAIVE: return gk_gemm_f32_naive(c, g.ldd, a, g.lda, b, g.ldb, g.m, g.n, g.k, 1.0f, 0.0f, s);
    case K_F32_SMEM: return gk_gemm_f32_smem(c, g.ldd, a, g.lda, b, g.ldb, g.m, g.n, g.k, 1.0f, 0.0f, s);
    case K_F32_REGTILE: return gk_gemm_f32_regtile(c, g.ldd, a, g.lda, b, g.ldb, g.m, g.n, g.k, 1.0f, 0.0f, s);
    case K_F32_WARPTILE: return gk_gemm_f32_warptile(c, g.ldd, a, g.lda, b, g.ldb, g.m, g.n, g.k, 1.0f, 0.0f, s);
    default: return gk_gemm_f32_pipelined(c, g.ldd, a, g.lda, b, g.ldb, g.m, g.n, g.k, 1.0f, 0.0f, s);
    }
}

// ------------------------------------------------------------------ comparison on the device

// out[0] = max |x - ref|, out[1] = max |ref| over a [rows, cols] matrix of stride ld, as float
// bits (non-negative floats order like unsigned ints); a NaN anywhere makes out[0] NaN.
static __global__ void max_diff_kernel(const void *x, const void *ref, int dt, int64_t rows, int64_t cols, int64_t ld,
                                       unsigned *out)
{
    float dmax = 0.0f, rmax = 0.0f;
    bool nan = false;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * cols; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = i / cols * ld + i % cols;
        const float u = gk_load1_f32(x, j, dt), r = gk_load1_f32(ref, j, dt), d = fabsf(u - r);
        nan |= d != d || r != r;
        dmax = fmaxf(dmax, d);
        rmax = fmaxf(rmax, fabsf(r));
    }
    atomicMax(out, nan ? 0x7fc00000u : __float_as_uint(dmax));
    atomicMax(out + 1, __float_as_uint(rmax));
}

struct Diff {
    double max_abs, max_ref;
    double rel() const { return max_abs / max_ref; }
};

static Diff max_diff(const void *x, const void *ref, int dt, int64_t rows, int64_t cols, int64_t ld)
{
    static unsigned *buf = nullptr;
    if (!buf) GK_BENCH_CUDA(cudaMalloc((void **)&buf, 2 * sizeof(unsigned)));
    GK_BENCH_CUDA(cudaMemset(buf, 0, 2 * sizeof(unsigned)));
    max_diff_kernel<<<1024, 256>>>(x, ref, dt, rows, cols, ld, buf);
    GK_BENCH_CUDA(cudaGetLastError());
    unsigned h[2];
    GK_BENCH_CUDA(cudaMemcpy(h, buf, sizeof h, cudaMemcpyDeviceToHost));
    float f[2];
    memcpy(f, h, sizeof f);
    return {f[0], f[1]};
}

// Largest relative difference from cuBLAS a row may show: bf16 output rounds to 8 bits (two
// roundings of nearly the same fp32 sum differ by at most one bf16 step); fp32 sums in another
// order differ by ~1e-6.
static double tolerance(int dt) { return dt == GK_F32 ? 1e-4 : 1.0 / 64; }

// Startup: each cuBLAS mapping against gk on small shapes (M, N, K all different, so a swapped
// operand or dimension cannot pass), fp32 output for bf16 so the comparison is tight. fp32 also
// proves cuBLAS SGEMM is not using TF32 (10-bit mantissa: ~1e-4 relative instead of ~1e-6).
static void check_mappings()
{
    struct {
        const char *what;
        Gemm g;
        double tol;
    } cases[] = {
        {"bf16 NN", gemm(GK_BF16, 0, 200, 136, 264), 1e-3},
        {"bf16 NT", gemm(GK_BF16, 1, 200, 136, 264), 1e-3},
        {"bf16 NN, odd leading dimensions", gemm(GK_BF16, 0, 95, 97, 93), 1e-3},
        {"bf16 TN", gemm_layout(1, 0, 200, 136, 264), 1e-3},
        {"bf16 TT", gemm_layout(1, 1, 200, 136, 264), 1e-3},
        {"f32 NN (TF32 would show ~1e-4)", gemm(GK_F32, 0, 200, 136, 512), 1e-5},
    };
    for (const auto &c : cases) {
        const Bufs f = setup(c.g);
        const Kern k = c.g.dt == GK_F32 ? K_F32_NAIVE : K_GK;
        // bf16 cases compare fp32 outputs: the D buffers hold m * ldd floats
        Gemm g = c.g;
        void *d = gk_bench_alloc(g.m * g.ldd * 4), *ref = gk_bench_alloc(g.m * g.ldd * 4);
        GK_BENCH_CUDA(launch(g, k, -1, f, d, GK_F32, 0));
        GK_BENCH_CUDA(cublas_gemm(g, f.a, f.b, ref, GK_F32, 0));
        GK_BENCH_CUDA(cudaDeviceSynchronize());
        const Diff r = max_diff(d, ref, GK_F32, g.m, g.n, g.ldd);
        printf("gk_bench: cuBLAS mapping check %s %lldx%lldx%lld: max |gk - cuBLAS| %.3g (max |cuBLAS| %.3g, "
               "relative %.2g)\n",
               c.what, (long long)g.m, (long long)g.n, (long long)g.k, r.max_abs, r.max_ref, r.rel());
        if (!(r.rel() <= c.tol) || !(r.max_ref > 0)) {
            fprintf(stderr, "gk_bench: gk and cuBLAS disagree on %s (relative %.3g > %.1g): wrong operand mapping%s\n",
                    c.what, r.rel(), c.tol, g.dt == GK_F32 ? " or TF32 in cuBLAS" : "");
            exit(1);
        }
    }
    gk_bench_arena_reset();
}

// ------------------------------------------------------------------ rows

struct Row {
    std::string name;
    Gemm g;
    Kern kern;
    int config;          // K_GK_CONFIG: the configuration timed
    std::string aligned; // the odd shape: the row it is compared with
    int suite = -1;      // index in gk_gemm_suite for the suite's rows
};

// The suite's figures, by suite index: gk's and cuBLAS's seconds, the dispatcher's plan.
struct SuiteResult {
    double gk = 0, cublas = 0;
    gk_gemm_plan plan;
};
static std::map<int, SuiteResult> suite_results;

static std::map<std::string, double> cublas_seconds; // by shape_name
static std::map<std::string, double> row_seconds;    // by row name
static std::vector<std::string> mismatched_rows;      // past the tolerance: the run fails at the end

static double time_kernel(const Row &r, const Bufs &f)
{
    auto call = [&](cudaStream_t s) { return launch(r.g, r.kern, r.config, f, f.d, r.g.dt, s); };
    // the naive fp32 GEMM takes about a second at 4096^3: the untimed checked call is its warm-up
    return r.kern == K_F32_NAIVE ? gk_bench_median_seconds(call, 0, 3) : gk_bench_median_seconds(call);
}

// A configuration's tile, from its kernel name (gk_gemm_bf16_<tile>), else BM x BN x BK.
static std::string config_tile(int c)
{
    const gk_gemm_config i = gk_gemm_config_info(c);
    const std::string prefix = "gk_gemm_bf16_", name = i.name ? i.name : "";
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) return name.substr(prefix.size());
    return std::to_string(i.bm) + "x" + std::to_string(i.bn) + "x" + std::to_string(i.bk);
}

static std::string config_text(int c)
{
    const gk_gemm_config i = gk_gemm_config_info(c);
    char buf[160];
    snprintf(buf, sizeof buf, "cfg %d %s: %dx%dx%d, warp %dx%d, %d stages, %d threads, %d KB smem", c,
             config_tile(c).c_str(), i.bm, i.bn, i.bk, i.wm, i.wn, i.stages, i.threads, i.smem_bytes >> 10);
    return buf;
}

// The dispatcher's choice for a shape (configuration, K splits, operand repacking).
static std::string pick_text(const Gemm &g, int *config)
{
    const gk_gemm_plan pl = gk_gemm_plan_for(g.m, g.n, g.k, g.ta, g.lda, g.tb, g.ldb);
    *config = pl.config;
    int splits = pl.splits;
    if (splits > 1) {
        const gk_gemm_config i = gk_gemm_config_info(*config);
        const int64_t per = gk_round_up(gk_ceil_div(g.k, splits), i.bk);
        splits = (int)gk_ceil_div(g.k, per);
    }
    std::string s = config_text(*config);
    if (splits > 1) s += ", split-K " + std::to_string(splits);
    if (pl.pack_a_bytes || pl.pack_b_bytes) s += ", operands repacked to 128-byte rows";
    return s;
}

static void run_row(benchmark::State &state, Row r)
{
    const Gemm &g = r.g;
    const std::string shape = shape_name(g);
    Bufs f = setup(g);
    // one untimed call each, checked, and the output compared with cuBLAS's
    GK_BENCH_CUDA(launch(g, r.kern, r.config, f, f.d, g.dt, 0));
    if (r.kern != K_CUBLAS) GK_BENCH_CUDA(cublas_gemm(g, f.a, f.b, f.ref, g.dt, 0));
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    const double err = r.kern == K_CUBLAS ? 0.0 : max_diff(f.d, f.ref, g.dt, g.m, g.n, g.ldd).rel();

    const gk_ledger l = gk_gemm_ledger(g.m, g.n, g.k, g.dt, g.dt, 0, 0);
    // the matching ceiling: FFMA for fp32; for bf16 wgmma where the row runs on it (cuBLAS, the
    // wgmma configurations), else mma.sync
    int row_config = r.config;
    if (r.kern == K_GK) pick_text(g, &row_config);
    const bool on_wgmma = gk_bench_wgmma_ceiling() > 0 &&
                          (r.kern == K_CUBLAS || (row_config >= 0 && gk_gemm_config_info(row_config).wgmma));
    const double peak = g.dt == GK_F32 ? gk_bench_device().ffma_flops_per_s
                        : on_wgmma      ? gk_bench_wgmma_ceiling()
                                        : gk_bench_mma_ceiling();
    double t = 0;
    // 200 ms idle first: without it a row timed right after a fast one (the dispatcher's row
    // after cuBLAS's) measured up to 14% below the same kernel timed after slow rows (8192^3 NT:
    // 563 against 652 TFLOP/s, one process); our reading is that the H200 lowers its clock near
    // its power limit and recovers when idle
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (auto _ : state) {
        t = time_kernel(r, f);
        if (r.kern == K_CUBLAS) {
            cublas_seconds[shape] = t;
        } else if (!cublas_seconds.count(shape)) { // its cuBLAS row was filtered out
            cublas_seconds[shape] = gk_bench_median_seconds(
                [&](cudaStream_t s) { return cublas_gemm(g, f.a, f.b, f.ref, g.dt, s); });
        }
        gk_bench_report(state, t, l, peak, cublas_seconds[shape]);
        state.counters["err"] = err; // every row has the same counters: one table header
    }
    row_seconds[r.name] = t;
    if (r.suite >= 0 && r.kern == K_GK) {
        SuiteResult &sr = suite_results[r.suite];
        sr.gk = t;
        sr.cublas = cublas_seconds[shape];
        sr.plan = gk_gemm_plan_for(g.m, g.n, g.k, g.ta, g.lda, g.tb, g.ldb);
    }

    std::string label;
    int pick = -1;
    switch (r.kern) {
    case K_CUBLAS:
        label = g.dt == GK_F32 ? "baseline: cublasSgemm, default math (no TF32)"
                               : "baseline: cublasGemmEx bf16, fp32 compute (wgmma)";
        break;
    case K_GK: label = "gk_gemm_bf16, dispatcher: " + pick_text(g, &pick); break;
    case K_GK_CONFIG:
        pick_text(g, &pick);
        label = "gk_gemm_ex " + config_text(r.config) + (r.config == pick ? ", the dispatcher's pick" : ", not picked");
        break;
    case K_F32_NAIVE: label = "gk_gemm_f32_naive, median of 3"; break;
    case K_F32_SMEM: label = "gk_gemm_f32_smem"; break;
    case K_F32_REGTILE: label = "gk_gemm_f32_regtile"; break;
    case K_F32_WARPTILE: label = "gk_gemm_f32_warptile"; break;
    default: label = "gk_gemm_f32_pipelined (= gk_gemm_f32)"; break;
    }
    if (r.kern != K_CUBLAS && !(err <= tolerance(g.dt))) {
        label += ", MISMATCH vs cuBLAS";
        fprintf(stderr, "gk_bench: %s differs from cuBLAS: relative %.3g > %.3g\n", r.name.c_str(), err,
                tolerance(g.dt));
        char buf[64];
        snprintf(buf, sizeof buf, " (relative %.3g > %.3g)", err, tolerance(g.dt));
        mismatched_rows.push_back(r.name + buf);
    }
    if (!r.aligned.empty()) {
        if (!row_seconds.count(r.aligned)) { // the aligned row was filtered out: time it now
            Row a = r;
            a.name = r.aligned;
            a.g = gemm(g.dt, g.tb, 4096, 4096, 4096);
            a.aligned.clear();
            const Bufs fa = setup(a.g);
            GK_BENCH_CUDA(launch(a.g, a.kern, a.config, fa, fa.d, a.g.dt, 0));
            row_seconds[a.name] = time_kernel(a, fa);
        }
        const double ta = row_seconds[r.aligned], la = gk_gemm_ledger(4096, 4096, 4096, g.dt, g.dt, 0, 0).flops;
        char buf[160];
        snprintf(buf, sizeof buf, "; odd/aligned 4096^3: time %.3fx, TFLOP/s %.3fx", t / ta, (l.flops / t) / (la / ta));
        label += buf;
    }
    state.SetLabel(label);
}

static void add(const Row &r)
{
    benchmark::RegisterBenchmark(r.name.c_str(), run_row, r)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

static void register_all()
{
    int cublas_version = 0;
    GK_BENCH_CUDA(cublas_check(cublasGetVersion(cublas(), &cublas_version), "cublasGetVersion"));
    benchmark::AddCustomContext("cublas_version", std::to_string(cublas_version));
    printf("gk_bench: cuBLAS %d\n", cublas_version);
    check_mappings();
    gk_bench_register_tensor_ceilings(); // mma.sync and wgmma (gk_bench.h)

    // square bf16: cuBLAS, the dispatcher, then every configuration
    const struct {
        int tb;
        int64_t s;
    } squares[] = {{1, 4096}, {0, 4096}, {1, 8192}};
    for (const auto &q : squares) {
        const Gemm g = gemm(GK_BF16, q.tb, q.s, q.s, q.s);
        const std::string base = shape_name(g);
        add({base + "/cublas", g, K_CUBLAS, -1, ""});
        add({base + "/gk", g, K_GK, -1, ""});
        for (int c = 0; c < gk_gemm_config_count(); c++) {
            // for M <= 64: the decode rows below take the swapped tiles; the direct tiles are for tiny problems
            if (gk_gemm_config_info(c).swap || gk_gemm_config_info(c).stages == 0) continue;
            add({base + "/gk_cfg" + std::to_string(c) + "_" + config_tile(c), g, K_GK_CONFIG, c, ""});
        }
    }
    // LLM linear layers: x[M, K] w[N, K]^T, the dispatcher with its split-K workspace
    for (int64_t n : {8192, 28672})
        for (int64_t m : {16, 128, 2048}) {
            const Gemm g = gemm(GK_BF16, 1, m, n, 8192);
            add({shape_name(g) + "/cublas", g, K_CUBLAS, -1, ""});
            add({shape_name(g) + "/gk", g, K_GK, -1, ""});
        }
    // odd sizes: rows of A, B and D not 16-byte aligned
    {
        const Gemm g = gemm(GK_BF16, 0, 4095, 4097, 4093);
        add({shape_name(g) + "/cublas", g, K_CUBLAS, -1, ""});
        add({shape_name(g) + "/gk", g, K_GK, -1, shape_name(gemm(GK_BF16, 0, 4096, 4096, 4096)) + "/gk"});
    }
    // the shape suite (gk_bench/gemm_suite.h): suite_<shape name>/cublas and /gk
    for (int i = 0; i < (int)(sizeof gk_gemm_suite / sizeof gk_gemm_suite[0]); i++) {
        const GkGemmSuiteShape &q = gk_gemm_suite[i];
        const Gemm g = gemm_layout(q.ta, q.tb, q.m, q.n, q.k);
        add({"suite_" + shape_name(g) + "/cublas", g, K_CUBLAS, -1, "", i});
        add({"suite_" + shape_name(g) + "/gk", g, K_GK, -1, "", i});
    }
    // the fp32 SIMT ladder
    {
        const Gemm g = gemm(GK_F32, 0, 4096, 4096, 4096);
        const std::string base = shape_name(g);
        add({base + "/cublas_sgemm", g, K_CUBLAS, -1, ""});
        add({base + "/gk_naive", g, K_F32_NAIVE, -1, ""});
        add({base + "/gk_smem", g, K_F32_SMEM, -1, ""});
        add({base + "/gk_regtile", g, K_F32_REGTILE, -1, ""});
        add({base + "/gk_warptile", g, K_F32_WARPTILE, -1, ""});
        add({base + "/gk_pipelined", g, K_F32_PIPELINED, -1, ""});
    }
}

// The suite as one table: a shape a line, gk / cuBLAS speed, the dispatcher's tile, K splits,
// tiles and waves (tiles over SMs x the blocks a tile's configuration budgets an SM), then the
// geometric mean and the shapes under 0.9x.
static void print_suite()
{
    if (suite_results.empty()) return;
    const int sms = gk_bench_device().sms;
    printf("\ngk_bench: GEMM suite, bf16 in and out: gk_gemm_bf16 (dispatcher) against cublasGemmEx, same process\n");
    printf("%-18s %-6s %-19s %10s %10s %8s %8s  %-22s %6s %7s %6s\n", "shape", "layout", "M x N x K", "gk us",
           "cuBLAS us", "speed", "TFLOP/s", "tile", "splits", "tiles", "waves");
    double log_sum = 0;
    int count = 0, under = 0;
    double worst = 1e30;
    for (const auto &kv : suite_results) {
        const GkGemmSuiteShape &q = gk_gemm_suite[kv.first];
        const SuiteResult &r = kv.second;
        const double speed = r.cublas / r.gk;
        const gk_gemm_config c = gk_gemm_config_info(r.plan.config);
        const int64_t tiles = gk_ceil_div(q.m, c.bm) * gk_ceil_div(q.n, c.bn) * (r.plan.splits > 1 ? r.plan.splits : 1);
        const double waves = (double)tiles / (sms * (c.persistent ? 1 : c.min_blocks > 0 ? c.min_blocks : 1));
        char mnk[40];
        snprintf(mnk, sizeof mnk, "%lldx%lldx%lld", (long long)q.m, (long long)q.n, (long long)q.k);
        printf("%-18s %-6s %-19s %10.1f %10.1f %7.3fx %8.1f  %-22s %6d %7lld %6.2f%s\n", q.name,
               q.ta ? (q.tb ? "TT" : "TN") : (q.tb ? "NT" : "NN"), mnk, r.gk * 1e6, r.cublas * 1e6, speed,
               2.0 * q.m * q.n * q.k / r.gk * 1e-12, config_tile(r.plan.config).c_str(), r.plan.splits,
               (long long)tiles, waves, speed < 0.9 ? "  < 0.9x" : "");
        log_sum += log(speed);
        count++;
        under += speed < 0.9;
        worst = speed < worst ? speed : worst;
    }
    printf("gk_bench: suite: %d shapes, geometric mean gk / cuBLAS speed %.3fx, lowest %.3fx, %d under 0.9x\n", count,
           exp(log_sum / count), worst, under);
}

// Every row runs; then a mismatch with cuBLAS fails the run (exit status 1), listing the rows.
int main(int argc, char **argv)
{
    const int rc = gk_bench_main(argc, argv, register_all);
    print_suite();
    if (rc != 0 || mismatched_rows.empty()) return rc;
    fprintf(stderr, "gk_bench: FAILED: %zu row(s) differ from cuBLAS past the tolerance:\n", mismatched_rows.size());
    for (const std::string &r : mismatched_rows) fprintf(stderr, "  %s\n", r.c_str());
    return 1;
}
