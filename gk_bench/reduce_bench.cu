// //gk_bench:reduce - gk_reduce.cuh on bf16 rows at five shapes, against the copy bandwidth measured
// in this process: the floor is the ledger's bytes / copy bandwidth (the best of cudaMemcpy and a
// tuned copy kernel: gk_bench.h); vs_base is the time cudaMemcpy takes for those bytes, at its
// 1 GiB rate, over the row's. The fused forms' vs_base is instead their unfused launch sequence's
// time (also a row) over theirs. The copy_same_bytes rows are cudaMemcpy of each shape's bf16
// bytes: what a call of that size reaches.
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
#include "gk/gk_elementwise.cuh"
#include "gk_bench/gk_bench.h"

#include <string>

struct RdBench {
    std::string name;
    int op;       // gk_rd_op: the kernel timed, and the ledger of the row
    bool unfused; // time the unfused launch sequence of a fused op instead
    int64_t rows, cols;
};

static void run_rd(benchmark::State &state, RdBench b)
{
    gk_bench_arena_reset();
    const int64_t rows = b.rows, cols = b.cols, n = rows * cols;
    const size_t bytes = n * sizeof(gk_bf16);
    const float eps = 1e-6f;
    gk_bf16 *x = (gk_bf16 *)gk_bench_alloc(bytes, false);
    gk_bf16 *res = (gk_bf16 *)gk_bench_alloc(bytes, false);
    gk_bf16 *w = (gk_bf16 *)gk_bench_alloc(cols * sizeof(gk_bf16), false);
    gk_bf16 *bias = (gk_bf16 *)gk_bench_alloc(cols * sizeof(gk_bf16), false);
    gk_bf16 *out = (gk_bf16 *)gk_bench_alloc(bytes);
    gk_bf16 *tmp = (gk_bf16 *)gk_bench_alloc(bytes);
    gk_e4m3 *q = (gk_e4m3 *)gk_bench_alloc(n);
    float *scales = (float *)gk_bench_alloc(rows * sizeof(float));
    gk_bench_fill_random(x, GK_BF16, n);
    gk_bench_fill_random(res, GK_BF16, n);
    gk_bench_fill_random(w, GK_BF16, cols, 0.5f, 1.5f);
    gk_bench_fill_random(bias, GK_BF16, cols);

    auto fused = [&](cudaStream_t s) -> cudaError_t {
        switch (b.op) {
        case GK_RD_RMSNORM: return gk_rmsnorm_bf16(out, cols, x, cols, w, rows, cols, eps, s);
        case GK_RD_LAYERNORM: return gk_layernorm_bf16(out, cols, x, cols, w, bias, rows, cols, eps, s);
        case GK_RD_SOFTMAX: return gk_softmax_bf16(out, cols, x, cols, rows, cols, 1.0f, s);
        case GK_RD_LOG_SOFTMAX: return gk_log_softmax_bf16(out, cols, x, cols, rows, cols, 1.0f, s);
        case GK_RD_RESIDUAL_RMSNORM:
            return gk_residual_rmsnorm_bf16(out, cols, res, res, cols, x, cols, w, rows, cols, eps, s);
        case GK_RD_RMSNORM_QUANT: return gk_rmsnorm_quant_e4m3_bf16(q, cols, scales, x, cols, w, rows, cols, eps, s);
        default: return gk_quant_e4m3_bf16(q, cols, scales, x, cols, rows, cols, s);
        }
    };
    // The same result in two launches: residual add then RMSNorm, or RMSNorm to bf16 then quantize.
    auto unfused = [&](cudaStream_t s) -> cudaError_t {
        cudaError_t e;
        if (b.op == GK_RD_RESIDUAL_RMSNORM) {
            e = gk_residual_add_bf16(res, x, n, s);
            return e != cudaSuccess ? e : gk_rmsnorm_bf16(out, cols, res, cols, w, rows, cols, eps, s);
        }
        e = gk_rmsnorm_bf16(tmp, cols, x, cols, w, rows, cols, eps, s);
        return e != cudaSuccess ? e : gk_quant_e4m3_bf16(q, cols, scales, tmp, cols, rows, cols, s);
    };
    const bool has_unfused = b.op == GK_RD_RESIDUAL_RMSNORM || b.op == GK_RD_RMSNORM_QUANT;
    if (!b.unfused) GK_BENCH_CUDA(fused(0));
    if (has_unfused) GK_BENCH_CUDA(unfused(0));
    GK_BENCH_CUDA(cudaDeviceSynchronize());

    // unfused rows keep the fused op's ledger: the same minimal bytes, so pct_roof compares
    const gk_ledger l = gk_reduce_ledger(b.op, GK_BF16, rows, cols);
    for (auto _ : state) {
        double t, base = l.bytes / gk_bench_device().memcpy_bytes_per_s;
        if (b.unfused) {
            t = gk_bench_median_seconds(unfused);
        } else {
            t = gk_bench_median_seconds(fused);
            if (has_unfused) base = gk_bench_median_seconds(unfused);
        }
        gk_bench_report(state, t, l, gk_bench_device().ffma_flops_per_s, base);
    }
    std::string label = std::to_string(rows) + "x" + std::to_string(cols);
    if (b.unfused)
        label += b.op == GK_RD_RESIDUAL_RMSNORM ? ", unfused: residual_add + rmsnorm" : ", unfused: rmsnorm + quant";
    else if (has_unfused)
        label += ", fused, vs unfused";
    state.SetLabel(label);
}

// What any call of this size reaches: cudaMemcpy D2D of the shape's bf16 bytes (its launch, ramp
// and tail included); vs_base against the 1 GiB cudaMemcpy, pct_roof against the memory roof.
static void run_copy_same_bytes(benchmark::State &state, int64_t rows, int64_t cols)
{
    gk_bench_arena_reset();
    const size_t bytes = (size_t)(rows * cols) * sizeof(gk_bf16);
    const gk_ledger l = {0.0, 2.0 * bytes};
    for (auto _ : state) {
        const double t = gk_bench_copy_seconds(bytes);
        gk_bench_report(state, t, l, gk_bench_device().ffma_flops_per_s, l.bytes / gk_bench_device().memcpy_bytes_per_s);
    }
    state.SetLabel(std::to_string(rows) + "x" + std::to_string(cols) + ", cudaMemcpy of the same bf16 bytes");
}

static void register_all()
{
    const int64_t shapes[][2] = {{16384, 8192}, {4096, 4096}, {65536, 128}, {1024, 65536}, {64, 262144}};
    const struct {
        const char *name;
        int op;
        bool unfused;
    } ops[] = {
        {"rmsnorm", GK_RD_RMSNORM, false},
        {"layernorm", GK_RD_LAYERNORM, false},
        {"softmax", GK_RD_SOFTMAX, false},
        {"log_softmax", GK_RD_LOG_SOFTMAX, false},
        {"residual_rmsnorm", GK_RD_RESIDUAL_RMSNORM, false},
        {"residual_rmsnorm_unfused", GK_RD_RESIDUAL_RMSNORM, true},
        {"rmsnorm_quant", GK_RD_RMSNORM_QUANT, false},
        {"rmsnorm_quant_unfused", GK_RD_RMSNORM_QUANT, true},
        {"quant", GK_RD_QUANT, false},
    };
    gk_bench_register_copy_row();
    for (const auto &sh : shapes)
        benchmark::RegisterBenchmark(("copy_same_bytes/" + std::to_string(sh[0]) + "x" + std::to_string(sh[1])).c_str(),
                                     run_copy_same_bytes, sh[0], sh[1])
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
    for (const auto &o : ops)
        for (const auto &sh : shapes) {
            RdBench c = {std::string(o.name) + "_bf16/" + std::to_string(sh[0]) + "x" + std::to_string(sh[1]), o.op,
                         o.unfused, sh[0], sh[1]};
            benchmark::RegisterBenchmark(c.name.c_str(), run_rd, c)
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kMicrosecond);
        }
}

int main(int argc, char **argv) { return gk_bench_main(argc, argv, register_all); }
