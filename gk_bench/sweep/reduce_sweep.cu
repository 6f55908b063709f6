// Reduce tuning sweep: one configuration per build (-DGK_RD_MIN_BLOCKS=..., -DGK_RD_SLOTS=...,
// -DGK_RD_STREAM_BATCH=...), every bf16 op at the benchmark's shapes, timed against cudaMemcpy D2D
// in the same process. Plain nvcc, no Google Benchmark, so it builds on the GPU host itself:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. -DGK_RD_MIN_BLOCKS=3 gk_bench/sweep/reduce_sweep.cu -o sweep
// Prints one line per op: its % of copy bandwidth at each shape. Arguments, if any, replace the
// shapes: rows cols [rows cols ...].
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
#include "gk/gk_elementwise.cuh"

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/reduce_sweep_util.h"

#include <array>
#include <cstdlib>
#include <vector>

static __global__ void empty() {}

int main(int argc, char **argv)
{
    const size_t G = (size_t)1 << 30;
    const RdBuffers m = rd_buffers();
    const double copy = 2.0 * G / median_s([&] { return cudaMemcpyAsync(m.o, m.x, G, cudaMemcpyDeviceToDevice); });
    std::vector<std::array<int64_t, 2>> shapes = {{16384, 8192}, {4096, 4096}, {65536, 128}, {1024, 65536}, {64, 262144}};
    if (argc > 2) shapes.clear();
    for (int i = 1; i + 1 < argc; i += 2) shapes.push_back({atoll(argv[i]), atoll(argv[i + 1])});
    printf("copy %.0f GB/s; %% of copy at", copy * 1e-9);
    for (const auto &s : shapes) printf(" %lldx%lld", (long long)s[0], (long long)s[1]);
    printf("\n");
    for (int k = 0; k < 6; k++) {
        printf("%-18s", rd_names[k]);
        for (const auto &s : shapes) {
            const int64_t R = s[0], C = s[1];
            const double t = median_s([&] { return rd_launch_bf16(rd_ops[k], m, R, C); });
            printf(" %6.1f", 100.0 * gk_reduce_ledger(rd_ops[k], GK_BF16, R, C).bytes / t / copy);
        }
        printf("\n");
    }
    // What a call of this size can reach at all: a D2D copy of the same bytes (a launch, a ramp
    // and a tail of its own), and an empty launch.
    printf("%-18s", "copy_same_bytes");
    for (const auto &s : shapes) {
        const size_t n = (size_t)s[0] * s[1] * 2;
        printf(" %6.1f", 100.0 * 2 * n / median_s([&] { return cudaMemcpyAsync(m.o, m.x, n, cudaMemcpyDeviceToDevice); }) / copy);
    }
    // and gk's own 1-in-1-out streaming kernel (tanh-GELU, 99% of copy at 1 GiB) on the same bytes
    printf("\n%-18s", "gelu_same_bytes");
    for (const auto &s : shapes) {
        const size_t n = (size_t)s[0] * s[1];
        printf(" %6.1f", 100.0 * 4 * n / median_s([&] { return gk_gelu_tanh_bf16((gk_bf16 *)m.o, (const gk_bf16 *)m.x, (int64_t)n, 0); }) / copy);
    }
    printf("\nempty launch %.2f us\n", 1e6 * median_s([&] { empty<<<1, 32>>>(); return cudaGetLastError(); }));
    return 0;
}
