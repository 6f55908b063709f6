// Elementwise tuning sweep: one configuration per build (-DGK_EW_UNROLL=..., -DGK_EW_STREAMING=...,
// -DGK_EW_BLOCKS_PER_SM=..., -DGK_EW_THREADS=...), timed against cudaMemcpy D2D in the same process.
// Plain nvcc, no Google Benchmark, so it builds on the GPU host itself:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. -DGK_EW_UNROLL=2 gk_bench/sweep/elementwise_sweep.cu -o sweep
// Prints one line: each case's % of copy bandwidth. Used to pick the shipped defaults; the
// results are in gk_bench/RESULTS.md.
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"

#include "gk_bench/sweep/sweep_util.h"

// The anchor's plain kernel: one float4 per thread, one launch covering everything.
static __global__ void plain_add_f4(float4 *o, const float4 *a, const float4 *b, size_t n4)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        o[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

int main()
{
    const size_t G = (size_t)1 << 30;
    char *a, *b, *o;
    CK(cudaMalloc(&a, G + 64));
    CK(cudaMalloc(&b, G + 64));
    CK(cudaMalloc(&o, G + 64));
    fill<<<2048, 256>>>((unsigned *)a, (G + 64) / 4, 1);
    fill<<<2048, 256>>>((unsigned *)b, (G + 64) / 4, 2);
    CK(cudaDeviceSynchronize());
    const double copy = 2.0 * G / median_s([&] { return cudaMemcpyAsync(o, a, G, cudaMemcpyDeviceToDevice); });
    const int64_t nf = G / 4, nh = G / 2, llm = 16384LL * 8192;
    struct Row { const char *name; double bytes; double s; };
    std::vector<Row> rows;
    auto run = [&](const char *name, double bytes, auto f) { rows.push_back({name, bytes, median_s(f)}); };
    run("plain_f4_add", 3.0 * G, [&] { plain_add_f4<<<(nf / 4 + 255) / 256, 256>>>((float4 *)o, (float4 *)a, (float4 *)b, nf / 4); return cudaGetLastError(); });
    run("add_f32", 3.0 * G, [&] { return gk_add_f32((float *)o, (float *)a, (float *)b, nf, 0); });
    run("add_bf16", 3.0 * G, [&] { return gk_add_bf16((gk_bf16 *)o, (gk_bf16 *)a, (gk_bf16 *)b, nh, 0); });
    run("add_f32_unal", 3.0 * G, [&] { return gk_add_f32((float *)o + 1, (float *)a + 1, (float *)b + 1, nf - 4, 0); });
    run("add_f32_16B", 3.0 * G, [&] { return gk_add_f32((float *)o + 4, (float *)a + 4, (float *)b + 4, nf - 8, 0); });
    run("add_f32_mism", 3.0 * G, [&] { return gk_add_f32((float *)o, (float *)a + 1, (float *)b + 2, nf - 4, 0); });
    run("cast_bf16_f32", 1.5 * G, [&] { return gk_cast_bf16_to_f32((float *)o, (gk_bf16 *)a, nf, 0); });
    run("cast_f32_bf16", 1.5 * G, [&] { return gk_cast_f32_to_bf16((gk_bf16 *)o, (float *)a, nf, 0); });
    run("resid_f32_bf16", 10.0 * llm, [&] { return gk_residual_add_f32_bf16((float *)o, (gk_bf16 *)b, llm, 0); });
    run("resid_bf16", 6.0 * llm, [&] { return gk_residual_add_bf16((gk_bf16 *)o, (gk_bf16 *)b, llm, 0); });
    run("swiglu_bf16", 6.0 * llm, [&] { return gk_swiglu_bf16((gk_bf16 *)o, (gk_bf16 *)a, (gk_bf16 *)b, llm, 0); });
    run("swiglu_pk_bf16", 6.0 * llm, [&] { return gk_swiglu_packed_bf16((gk_bf16 *)o, 8192, (gk_bf16 *)a, 16384, 16384, 8192, 0); });
    run("gelu_bf16", 2.0 * G, [&] { return gk_gelu_tanh_bf16((gk_bf16 *)o, (gk_bf16 *)a, nh, 0); });
    {   // residual add with its two operands in allocations of their own, as the benchmark has them
        char *r, *x, *r2, *x2;
        CK(cudaMalloc(&r, 2 * llm + 16));
        CK(cudaMalloc(&x, 2 * llm + 16));
        fill<<<2048, 256>>>((unsigned *)r, llm / 2, 3);
        fill<<<2048, 256>>>((unsigned *)x, llm / 2, 4);
        run("resid_bf16_own", 6.0 * llm, [&] { return gk_residual_add_bf16((gk_bf16 *)r, (gk_bf16 *)x, llm, 0); });
        run("resid_bf16_own_swap", 6.0 * llm, [&] { return gk_residual_add_bf16((gk_bf16 *)x, (gk_bf16 *)r, llm, 0); });
        run("add_bf16_own_3", 6.0 * llm, [&] { return gk_add_bf16((gk_bf16 *)o, (gk_bf16 *)r, (gk_bf16 *)x, llm, 0); });
        run("add_bf16_own_inpl", 6.0 * llm, [&] { return gk_add_bf16((gk_bf16 *)r, (gk_bf16 *)r, (gk_bf16 *)x, llm, 0); });
        CK(cudaMalloc(&r2, 2 * llm + 16));
        CK(cudaMalloc(&x2, 2 * llm + 16));
        fill<<<2048, 256>>>((unsigned *)r2, llm / 2, 5);
        fill<<<2048, 256>>>((unsigned *)x2, llm / 2, 6);
        run("resid_bf16_own2", 6.0 * llm, [&] { return gk_residual_add_bf16((gk_bf16 *)r2, (gk_bf16 *)x2, llm, 0); });
        run("resid_bf16_mixed", 6.0 * llm, [&] { return gk_residual_add_bf16((gk_bf16 *)r, (gk_bf16 *)x2, llm, 0); });
        run("copy_256M", 4.0 * llm, [&] { return cudaMemcpyAsync(r2, x2, 2 * llm, cudaMemcpyDeviceToDevice); });
        printf("own allocations: r %p x %p r2 %p x2 %p o %p b %p\n", r, x, r2, x2, o, b);
    }
    printf("copy %.0f GB/s |", copy * 1e-9);
    for (const Row &r : rows) printf(" %s %.1f%%", r.name, 100.0 * r.bytes / r.s / copy);
    printf("\n");
    return 0;
}
