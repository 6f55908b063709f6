// //gk_bench:fp8 - gk_fp8.cuh's FP8 GEMM (e4m3 x e4m3 -> bf16, fp32 accumulation) against the
// tensor-core ceiling over its FLOPs and the copy bandwidth over its bytes, with gk's own bf16 GEMM
// on the same shape as the in-process baseline (torch._scaled_mm: compare/compare_fp8.py).
//
// ROWS. fp8_<scales>/m<M>_n<N>_k<K>/<kernel>, D[M][N] = A[M][K] B[N][K]^T (F.linear's layout):
//   scales   tensor  one scale an operand; rowcol  a scale a row of A and a row of B (a token, an
//            output channel); block  1 x 128 blocks of A, 128 x 128 of B (DeepSeek-V3)
//   kernel   gk           gk_fp8_gemm (the dispatcher, with gk_fp8_workspace_bytes of workspace)
//            gk_cfg<c>    gk_fp8_gemm_ex forcing configuration c (the tuning data)
//            gk_bf16      gk_gemm_bf16 on bf16 operands of the same shape: the baseline (vs_base)
//   shapes   4096^3 and 8192^3 for every scale kind; the chain row below
// chain/rmsnorm_fp8_gemm/m4096_n28672_k8192: gk_rmsnorm_quant_e4m3_bf16 (RMSNorm + per-token e4m3,
// gk_reduce.cuh) then gk_fp8_gemm with row scales on a weight quantized once per channel, against
// chain/rmsnorm_bf16_gemm: gk_rmsnorm_bf16 then gk_gemm_bf16 (vs_base: bf16 time / fp8 time).
//
// Inputs uniform in [-1, 1) (fp8: converted once, on the GPU), scales in [0.5, 2). Every timed call
// has the L2 flushed before it; warm-up 3, median of 25 (gk_bench_median_seconds). Each gk row is
// checked first: 64 sampled outputs against a double sum on the host over the same codes and scales
// (|err| <= 2^-9 sum |a b| s + 1e-2 |ref|: bf16 output rounding and fp8 wgmma's accumulation).
//   ledger  gk_gemm_ledger(M, N, K, GK_E4M3, GK_BF16, 0, 0): 2 M N K FLOPs; A, B read once, D written
//   roof    peak = 2 x the measured bf16 wgmma ceiling (fp8 wgmma issues twice the k a cycle), memory
//           the copy bandwidth; pct_roof = 100 bound / time
#define GK_IMPLEMENTATION
#include "gk/gk_fp8.cuh"
#include "gk/gk_reduce.cuh"
#include "gk_bench/gk_bench.h"

#include <cmath>
#include <string>
#include <vector>

static std::vector<std::string> failed_rows;

static const char *scales_name(int mode) { return mode == GK_FP8_BLOCK ? "block" : mode == GK_FP8_ROW ? "rowcol" : "tensor"; }

struct F8 {
    int64_t m, n, k;
    int mode;
    void *a, *b, *sa, *sb, *d, *ws;
    size_t ws_bytes;
};

static F8 setup(int64_t m, int64_t n, int64_t k, int mode)
{
    gk_bench_arena_reset();
    F8 f = {m, n, k, mode, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0};
    f.a = gk_bench_alloc(m * k);
    f.b = gk_bench_alloc(n * k);
    const int64_t na = gk_fp8_scale_count(mode, 1, m, k), nb = gk_fp8_scale_count(mode, 128, n, k);
    f.sa = gk_bench_alloc(na * 4);
    f.sb = gk_bench_alloc(nb * 4);
    f.d = gk_bench_alloc(m * n * 2);
    gk_bench_fill_random(f.a, GK_E4M3, m * k, -1.0f, 1.0f);
    gk_bench_fill_random(f.b, GK_E4M3, n * k, -1.0f, 1.0f);
    gk_bench_fill_random(f.sa, GK_F32, na, 0.5f, 2.0f);
    gk_bench_fill_random(f.sb, GK_F32, nb, 0.5f, 2.0f);
    f.ws_bytes = gk_fp8_workspace_bytes(m, n, k, mode == GK_FP8_BLOCK);
    f.ws = f.ws_bytes ? gk_bench_alloc(f.ws_bytes) : nullptr;
    return f;
}

static cudaError_t run(const F8 &f, int config, cudaStream_t s)
{
    return gk_fp8_gemm_ex(config, 0, f.d, GK_BF16, f.n, (const gk_e4m3 *)f.a, f.k, (const float *)f.sa, f.mode,
                          (const gk_e4m3 *)f.b, f.k, (const float *)f.sb, f.mode, NULL, 0, NULL, f.m, f.n, f.k, 1.0f,
                          0.0f, GK_ACT_NONE, f.ws, f.ws_bytes, s);
}

// 64 sampled outputs against the host; returns false (with why) on a mismatch.
static bool check(const F8 &f, std::string *why)
{
    std::vector<uint8_t> a(f.m * f.k), b(f.n * f.k);
    const int64_t na = gk_fp8_scale_count(f.mode, 1, f.m, f.k), nb = gk_fp8_scale_count(f.mode, 128, f.n, f.k);
    std::vector<float> sa(na), sb(nb);
    std::vector<uint16_t> d(f.m * f.n);
    GK_BENCH_CUDA(cudaMemcpy(a.data(), f.a, a.size(), cudaMemcpyDeviceToHost));
    GK_BENCH_CUDA(cudaMemcpy(b.data(), f.b, b.size(), cudaMemcpyDeviceToHost));
    GK_BENCH_CUDA(cudaMemcpy(sa.data(), f.sa, na * 4, cudaMemcpyDeviceToHost));
    GK_BENCH_CUDA(cudaMemcpy(sb.data(), f.sb, nb * 4, cudaMemcpyDeviceToHost));
    GK_BENCH_CUDA(cudaMemcpy(d.data(), f.d, d.size() * 2, cudaMemcpyDeviceToHost));
    const int64_t kb = (f.k + 127) / 128;
    for (int t = 0; t < 64; t++) {
        const int64_t r = (t * 7919) % f.m, j = (t * 104729) % f.n;
        double sum = 0.0, mag = 0.0;
        for (int64_t q = 0; q < kb; q++) {
            double part = 0.0, pmag = 0.0;
            for (int64_t kk = q * 128; kk < f.k && kk < (q + 1) * 128; kk++) {
                const double p = (double)gk_e4m3_to_f32(a[r * f.k + kk]) * gk_e4m3_to_f32(b[j * f.k + kk]);
                part += p;
                pmag += std::fabs(p);
            }
            double s = 1.0;
            if (f.mode == GK_FP8_BLOCK) s = (double)sa[r * kb + q] * sb[(j / 128) * kb + q];
            else if (f.mode == GK_FP8_ROW) s = (double)sa[r] * sb[j];
            else s = (double)sa[0] * sb[0];
            sum += part * s;
            mag += pmag * s;
        }
        const uint32_t bits = (uint32_t)d[r * f.n + j] << 16; // bf16: the high half of an fp32
        float gf;
        memcpy(&gf, &bits, 4);
        const double g = gf;
        if (!(std::fabs(g - sum) <= std::ldexp(mag, -9) + 1e-2 * std::fabs(sum))) {
            char buf[160];
            snprintf(buf, sizeof buf, "output (%lld, %lld): %.6g, want %.6g", (long long)r, (long long)j, g, sum);
            *why = buf;
            return false;
        }
    }
    return true;
}

static double fp8_peak() { return 2.0 * gk_bench_wgmma_ceiling(); }

static void gemm_row(benchmark::State &state, int64_t m, int64_t n, int64_t k, int mode, int config)
{
    const std::string row = std::string(scales_name(mode)) + " " + std::to_string(m) + "^3 config " + std::to_string(config);
    F8 f = setup(m, n, k, mode);
    std::string why;
    const cudaError_t e = run(f, config, 0);
    if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess || !check(f, &why)) {
        const std::string msg = e != cudaSuccess ? std::string("refused: ") + gk_failure_reason() : "wrong: " + why;
        failed_rows.push_back(row + ": " + msg);
        state.SkipWithError(msg.c_str());
        return;
    }
    const double t = gk_bench_median_seconds([&](cudaStream_t s) { return run(f, config, s); });
    // the baseline: gk's bf16 GEMM on bf16 operands of the same shape
    gk_bench_arena_reset();
    void *a = gk_bench_alloc(m * k * 2), *b = gk_bench_alloc(n * k * 2), *d = gk_bench_alloc(m * n * 2);
    gk_bench_fill_random(a, GK_BF16, m * k, -1.0f, 1.0f);
    gk_bench_fill_random(b, GK_BF16, n * k, -1.0f, 1.0f);
    const size_t wb = gk_gemm_workspace_bytes(m, n, k, 0, k, 1, k);
    void *w = wb ? gk_bench_alloc(wb) : nullptr;
    const double tb = gk_bench_median_seconds([&](cudaStream_t s) {
        return gk_gemm_bf16(d, GK_BF16, n, (const gk_bf16 *)a, k, 0, (const gk_bf16 *)b, k, 1, NULL, 0, NULL, m, n, k,
                            1.0f, 0.0f, GK_ACT_NONE, w, wb, s);
    });
    for (auto _ : state) {
    }
    gk_bench_report(state, t, gk_gemm_ledger(m, n, k, GK_E4M3, GK_BF16, 0, 0), fp8_peak(), tb);
    const gk_gemm_plan pl = gk_fp8_plan_for(m, n, k, mode == GK_FP8_BLOCK);
    const int c = config < 0 ? pl.config : config;
    state.counters["config"] = c;
    state.counters["splits"] = config < 0 ? pl.splits : 1;
    state.counters["bf16_us"] = tb * 1e6;
    state.SetLabel(std::string(gk_fp8_config_info(c).name) + (config < 0 ? " (dispatcher)" : "") +
                   "; vs_base: gk_gemm_bf16 at the same shape");
}

static void chain_row(benchmark::State &state, bool fp8)
{
    const int64_t m = 4096, n = 28672, k = 8192;
    gk_bench_arena_reset();
    void *x = gk_bench_alloc(m * k * 2), *g = gk_bench_alloc(k * 2), *d = gk_bench_alloc(m * n * 2);
    gk_bench_fill_random(x, GK_BF16, m * k, -1.0f, 1.0f);
    gk_bench_fill_random(g, GK_BF16, k, 0.5f, 1.5f);
    double t = 0.0;
    if (fp8) {
        void *w = gk_bench_alloc(n * k * 2), *w8 = gk_bench_alloc(n * k), *sw = gk_bench_alloc(n * 4);
        void *x8 = gk_bench_alloc(m * k), *sx = gk_bench_alloc(m * 4);
        gk_bench_fill_random(w, GK_BF16, n * k, -1.0f, 1.0f);
        GK_BENCH_CUDA(gk_fp8_quantize((gk_e4m3 *)w8, k, (float *)sw, GK_FP8_ROW, 1, w, GK_BF16, k, 0, n, k, 0));
        const size_t wb = gk_fp8_workspace_bytes(m, n, k, 0);
        void *ws = wb ? gk_bench_alloc(wb) : nullptr;
        t = gk_bench_median_seconds([&](cudaStream_t s) {
            cudaError_t e = gk_rmsnorm_quant_e4m3_bf16((gk_e4m3 *)x8, k, (float *)sx, (const gk_bf16 *)x, k,
                                                       (const gk_bf16 *)g, m, k, 1e-6f, s);
            if (e != cudaSuccess) return e;
            return gk_fp8_gemm(d, GK_BF16, n, (const gk_e4m3 *)x8, k, (const float *)sx, GK_FP8_ROW, (const gk_e4m3 *)w8,
                               k, (const float *)sw, GK_FP8_ROW, NULL, 0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, ws, wb,
                               s);
        });
    } else {
        void *w = gk_bench_alloc(n * k * 2), *xn = gk_bench_alloc(m * k * 2);
        gk_bench_fill_random(w, GK_BF16, n * k, -1.0f, 1.0f);
        const size_t wb = gk_gemm_workspace_bytes(m, n, k, 0, k, 1, k);
        void *ws = wb ? gk_bench_alloc(wb) : nullptr;
        t = gk_bench_median_seconds([&](cudaStream_t s) {
            cudaError_t e = gk_rmsnorm_bf16((gk_bf16 *)xn, k, (const gk_bf16 *)x, k, (const gk_bf16 *)g, m, k, 1e-6f, s);
            if (e != cudaSuccess) return e;
            return gk_gemm_bf16(d, GK_BF16, n, (const gk_bf16 *)xn, k, 0, (const gk_bf16 *)w, k, 1, NULL, 0, NULL, m, n,
                                k, 1.0f, 0.0f, GK_ACT_NONE, ws, wb, s);
        });
    }
    static double bf16_seconds = 0.0;
    if (!fp8) bf16_seconds = t;
    for (auto _ : state) {
    }
    gk_bench_report(state, t, gk_gemm_ledger(m, n, k, fp8 ? GK_E4M3 : GK_BF16, GK_BF16, 0, 0),
                    fp8 ? fp8_peak() : gk_bench_wgmma_ceiling(), fp8 ? bf16_seconds : 0.0);
    state.SetLabel(fp8 ? "gk_rmsnorm_quant_e4m3_bf16 + gk_fp8_gemm (row scales); vs_base: the bf16 chain's time"
                       : "gk_rmsnorm_bf16 + gk_gemm_bf16");
}

static void register_all()
{
    const int modes[] = {GK_FP8_TENSOR, GK_FP8_ROW, GK_FP8_BLOCK};
    for (int64_t s : {4096, 8192})
        for (int mode : modes) {
            const std::string base = std::string("fp8_") + scales_name(mode) + "/m" + std::to_string(s) + "_n" +
                                     std::to_string(s) + "_k" + std::to_string(s) + "/";
            benchmark::RegisterBenchmark((base + "gk").c_str(), [=](benchmark::State &st) { gemm_row(st, s, s, s, mode, -1); })
                ->UseManualTime()
                ->Iterations(1);
            for (int c = 0; c < gk_fp8_config_count(); c++) {
                if (gk_fp8_config_info(c).block != (mode == GK_FP8_BLOCK)) continue;
                benchmark::RegisterBenchmark((base + "gk_cfg" + std::to_string(c)).c_str(),
                                             [=](benchmark::State &st) { gemm_row(st, s, s, s, mode, c); })
                    ->UseManualTime()
                    ->Iterations(1);
            }
        }
    benchmark::RegisterBenchmark("chain/rmsnorm_bf16_gemm/m4096_n28672_k8192", [](benchmark::State &st) { chain_row(st, false); })
        ->UseManualTime()
        ->Iterations(1);
    benchmark::RegisterBenchmark("chain/rmsnorm_fp8_gemm/m4096_n28672_k8192", [](benchmark::State &st) { chain_row(st, true); })
        ->UseManualTime()
        ->Iterations(1);
}

int main(int argc, char **argv)
{
    const int rc = gk_bench_main(argc, argv, register_all);
    for (const std::string &f : failed_rows) fprintf(stderr, "gk_bench: FAILED %s\n", f.c_str());
    return rc != 0 ? rc : failed_rows.empty() ? 0 : 1;
}
