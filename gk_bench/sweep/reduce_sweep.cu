// Reduce tuning sweep: one configuration per build (-DGK_RD_MIN_BLOCKS=..., -DGK_RD_SLOTS=...,
// -DGK_RD_STREAM_BATCH=...), every bf16 op at the benchmark's shapes, timed against cudaMemcpy D2D
// in the same process. Plain nvcc, no Google Benchmark, so it builds on the GPU host itself:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. -DGK_RD_MIN_BLOCKS=3 gk_bench/sweep/reduce_sweep.cu -o sweep
// Prints one line per op: its % of copy bandwidth at each shape.
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"

#include "gk_bench/sweep/sweep_util.h"

static __global__ void empty() {}

int main()
{
    const size_t G = (size_t)1 << 30;
    char *x, *r, *o, *w, *b;
    float *scales;
    CK(cudaMalloc(&x, G));
    CK(cudaMalloc(&r, G));
    CK(cudaMalloc(&o, G));
    CK(cudaMalloc(&w, 1 << 20));
    CK(cudaMalloc(&b, 1 << 20));
    CK(cudaMalloc(&scales, 1 << 20));
    fill<<<2048, 256>>>((unsigned *)x, G / 4, 1);
    fill<<<2048, 256>>>((unsigned *)r, G / 4, 2);
    fill<<<256, 256>>>((unsigned *)w, (1 << 20) / 4, 3);
    fill<<<256, 256>>>((unsigned *)b, (1 << 20) / 4, 4);
    CK(cudaDeviceSynchronize());
    const double copy = 2.0 * G / median_s([&] { return cudaMemcpyAsync(o, x, G, cudaMemcpyDeviceToDevice); });
    const int64_t shapes[][2] = {{16384, 8192}, {4096, 4096}, {65536, 128}, {1024, 65536}, {64, 262144}};
    const int ops[] = {GK_RD_RMSNORM, GK_RD_LAYERNORM, GK_RD_SOFTMAX, GK_RD_RESIDUAL_RMSNORM, GK_RD_RMSNORM_QUANT, GK_RD_QUANT};
    const char *names[] = {"rmsnorm", "layernorm", "softmax", "residual_rmsnorm", "rmsnorm_quant", "quant"};
    printf("copy %.0f GB/s; %% of copy at 16384x8192 4096x4096 65536x128 1024x65536 64x262144\n", copy * 1e-9);
    for (int k = 0; k < 6; k++) {
        printf("%-18s", names[k]);
        for (const auto &s : shapes) {
            const int64_t R = s[0], C = s[1];
            const gk_bf16 *xx = (const gk_bf16 *)x, *ww = (const gk_bf16 *)w, *bb = (const gk_bf16 *)b;
            auto launch = [&]() -> cudaError_t {
                switch (ops[k]) {
                case GK_RD_RMSNORM: return gk_rmsnorm_bf16((gk_bf16 *)o, C, xx, C, ww, R, C, 1e-6f, 0);
                case GK_RD_LAYERNORM: return gk_layernorm_bf16((gk_bf16 *)o, C, xx, C, ww, bb, R, C, 1e-6f, 0);
                case GK_RD_SOFTMAX: return gk_softmax_bf16((gk_bf16 *)o, C, xx, C, R, C, 1.0f, 0);
                case GK_RD_RESIDUAL_RMSNORM:
                    return gk_residual_rmsnorm_bf16((gk_bf16 *)o, C, (gk_bf16 *)r, (gk_bf16 *)r, C, xx, C, ww, R, C, 1e-6f, 0);
                case GK_RD_RMSNORM_QUANT: return gk_rmsnorm_quant_e4m3_bf16((gk_e4m3 *)o, C, scales, xx, C, ww, R, C, 1e-6f, 0);
                default: return gk_quant_e4m3_bf16((gk_e4m3 *)o, C, scales, xx, C, R, C, 0);
                }
            };
            const double t = median_s(launch);
            printf(" %6.1f", 100.0 * gk_reduce_ledger(ops[k], GK_BF16, R, C).bytes / t / copy);
        }
        printf("\n");
    }
    // What a call of this size can reach at all: a D2D copy of the same bytes (a launch, a ramp
    // and a tail of its own), and an empty launch.
    printf("%-18s", "copy_same_bytes");
    for (const auto &s : shapes) {
        const size_t n = (size_t)s[0] * s[1] * 2;
        printf(" %6.1f", 100.0 * 2 * n / median_s([&] { return cudaMemcpyAsync(o, x, n, cudaMemcpyDeviceToDevice); }) / copy);
    }
    printf("\nempty launch %.2f us\n", 1e6 * median_s([&] { empty<<<1, 32>>>(); return cudaGetLastError(); }));
    return 0;
}
