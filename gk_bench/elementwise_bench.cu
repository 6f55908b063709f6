// //gk_bench:elementwise - gk_elementwise.cuh against the copy bandwidth measured in this process.
// Every op is memory-bound, so the floor is bytes / copy bandwidth (the best of cudaMemcpy and a
// tuned copy kernel: gk_bench.h); vs_base is the time cudaMemcpy takes for the kernel's bytes, at
// its 1 GiB rate, over the kernel's time.
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
#include "gk_bench/gk_bench.h"

#include <string>

struct EwBench {
    std::string name;
    int op, dt_out, dt_in, n_in;
    int64_t n;          // output elements
    int off_out, off_a, off_b; // pointer offsets in elements (unaligned starts)
};

static void run_ew(benchmark::State &state, EwBench b)
{
    gk_bench_arena_reset();
    const int so = gk_dtype_size(b.dt_out), si = gk_dtype_size(b.dt_in);
    const bool packed = b.name.rfind("swiglu_packed", 0) == 0;
    const int64_t n_in_elems = packed ? 2 * b.n : b.n;
    char *out = (char *)gk_bench_alloc((b.n + 8) * so);
    char *a = (char *)gk_bench_alloc((n_in_elems + 8) * si, false);
    char *bb = (char *)gk_bench_alloc((b.n + 8) * si, false);
    gk_bench_fill_random(a, b.dt_in, n_in_elems + 8);
    gk_bench_fill_random(bb, b.dt_in, b.n + 8);
    void *o = out + b.off_out * so;
    const void *x = a + b.off_a * si, *y = bb + b.off_b * si;
    const int64_t rows = 16384, d = b.n / rows;

    auto launch = [&](cudaStream_t s) -> cudaError_t {
        switch (b.op) {
        case GK_EW_ADD:
            if (b.dt_out == GK_F32) return gk_add_f32((float *)o, (const float *)x, (const float *)y, b.n, s);
            if (b.dt_out == GK_BF16) return gk_add_bf16((gk_bf16 *)o, (const gk_bf16 *)x, (const gk_bf16 *)y, b.n, s);
            return gk_add_f16((gk_f16 *)o, (const gk_f16 *)x, (const gk_f16 *)y, b.n, s);
        case GK_EW_AXPBY: return gk_axpby_bf16((gk_bf16 *)o, 0.5f, (const gk_bf16 *)x, -1.5f, (const gk_bf16 *)y, b.n, s);
        case GK_EW_RESIDUAL_ADD:
            if (b.dt_out == GK_F32) return gk_residual_add_f32_bf16((float *)o, (const gk_bf16 *)y, b.n, s);
            return gk_residual_add_bf16((gk_bf16 *)o, (const gk_bf16 *)y, b.n, s);
        case GK_EW_SWIGLU:
            if (packed) return gk_swiglu_packed_bf16((gk_bf16 *)o, d, (const gk_bf16 *)x, 2 * d, rows, d, s);
            return gk_swiglu_bf16((gk_bf16 *)o, (const gk_bf16 *)x, (const gk_bf16 *)y, b.n, s);
        case GK_EW_GELU_TANH:
            if (b.dt_out == GK_F32) return gk_gelu_tanh_f32((float *)o, (const float *)x, b.n, s);
            return gk_gelu_tanh_bf16((gk_bf16 *)o, (const gk_bf16 *)x, b.n, s);
        default:
            if (b.dt_out == GK_BF16) return gk_cast_f32_to_bf16((gk_bf16 *)o, (const float *)x, b.n, s);
            return gk_cast_bf16_to_f32((float *)o, (const gk_bf16 *)x, b.n, s);
        }
    };
    if (b.op == GK_EW_RESIDUAL_ADD) gk_bench_fill_random(out, b.dt_out, b.n + 8); // the residual is an input
    GK_BENCH_CUDA(launch(0));
    GK_BENCH_CUDA(cudaDeviceSynchronize());

    // residual add reads and writes the residual: n_in counts it once as input
    gk_ledger l = gk_elementwise_ledger(b.op, b.dt_out, b.dt_in, b.n_in, b.n);
    if (b.op == GK_EW_RESIDUAL_ADD) l.bytes = (double)b.n * (2 * so + si);
    for (auto _ : state) {
        double t = gk_bench_median_seconds(launch);
        gk_bench_report(state, t, l, gk_bench_device().ffma_flops_per_s, l.bytes / gk_bench_device().memcpy_bytes_per_s);
    }
    state.SetLabel(b.off_out || b.off_a || b.off_b
                       ? "offsets " + std::to_string(b.off_out) + "/" + std::to_string(b.off_a) + "/" +
                             std::to_string(b.off_b)
                       : "aligned");
}

static void register_all()
{
    const int64_t G_f32 = (int64_t)1 << 28, G_bf16 = (int64_t)1 << 29; // 1 GiB per operand
    const int64_t llm = 16384LL * 8192;                                  // [16384, 8192]
    const EwBench cases[] = {
        {"add_f32/1GiB", GK_EW_ADD, GK_F32, GK_F32, 2, G_f32, 0, 0, 0},
        {"add_bf16/1GiB", GK_EW_ADD, GK_BF16, GK_BF16, 2, G_bf16, 0, 0, 0},
        {"add_f16/1GiB", GK_EW_ADD, GK_F16, GK_F16, 2, G_bf16, 0, 0, 0},
        {"add_f32/1GiB/unaligned", GK_EW_ADD, GK_F32, GK_F32, 2, G_f32, 1, 1, 1},
        {"add_f32/1GiB/mismatched", GK_EW_ADD, GK_F32, GK_F32, 2, G_f32, 0, 1, 2},
        {"add_bf16/1GiB/unaligned", GK_EW_ADD, GK_BF16, GK_BF16, 2, G_bf16, 3, 3, 3},
        {"axpby_bf16/1GiB", GK_EW_AXPBY, GK_BF16, GK_BF16, 2, G_bf16, 0, 0, 0},
        {"residual_add_bf16/16384x8192", GK_EW_RESIDUAL_ADD, GK_BF16, GK_BF16, 1, llm, 0, 0, 0},
        {"residual_add_f32_bf16/16384x8192", GK_EW_RESIDUAL_ADD, GK_F32, GK_BF16, 1, llm, 0, 0, 0},
        {"swiglu_bf16/16384x8192", GK_EW_SWIGLU, GK_BF16, GK_BF16, 2, llm, 0, 0, 0},
        {"swiglu_packed_bf16/16384x8192", GK_EW_SWIGLU, GK_BF16, GK_BF16, 2, llm, 0, 0, 0},
        {"gelu_tanh_bf16/1GiB", GK_EW_GELU_TANH, GK_BF16, GK_BF16, 1, G_bf16, 0, 0, 0},
        {"gelu_tanh_f32/1GiB", GK_EW_GELU_TANH, GK_F32, GK_F32, 1, G_f32, 0, 0, 0},
        {"cast_f32_to_bf16/1GiB", GK_EW_CAST, GK_BF16, GK_F32, 1, G_f32, 0, 0, 0},
        {"cast_bf16_to_f32/1GiB", GK_EW_CAST, GK_F32, GK_BF16, 1, G_f32, 0, 0, 0},
    };
    gk_bench_register_copy_row();
    for (const EwBench &c : cases)
        benchmark::RegisterBenchmark(c.name.c_str(), run_ew, c)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
}

int main(int argc, char **argv) { return gk_bench_main(argc, argv, register_all); }
