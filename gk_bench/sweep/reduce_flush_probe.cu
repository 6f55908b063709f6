// How the timing method moves the small reduce shapes: each bf16 op (and a D2D copy of the same
// bytes) timed three ways, as % of the 1 GiB copy bandwidth:
//   cold_dirty: one launch after a 128 MiB memset (the benchmark harness's flush; the memset's
//               dirty lines are written back while the timed kernel evicts them);
//   cold_clean: one launch after the memset and a 256 MiB read (L2 full of clean lines);
//   steady:     launches back to back over buffer sets rotated through >= 512 MiB, one event
//               pair around them (each launch evicts earlier launches' dirty outputs).
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. gk_bench/sweep/reduce_flush_probe.cu -o probe
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"
#include "gk/gk_elementwise.cuh"

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/reduce_sweep_util.h"

#include <array>
#include <functional>

static __global__ void read_all(const int4 *p, size_t n, int *sink)
{
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) *sink = acc;
}

// f(k): one launch on buffer set k. mode 0 cold_dirty, 1 cold_clean, 2 steady (sets launches).
static double time_mode(int mode, int sets, const std::function<cudaError_t(int)> &f)
{
    static void *flush = nullptr, *rd = nullptr;
    if (!flush) {
        CK(cudaMalloc(&flush, 128 << 20));
        CK(cudaMalloc(&rd, 256 << 20));
        CK(cudaMemset(rd, 1, 256 << 20));
    }
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) CK(f(i % sets));
    std::vector<double> t;
    for (int i = 0; i < 15; i++) {
        if (mode < 2) CK(cudaMemsetAsync(flush, i, 128 << 20));
        if (mode == 1) read_all<<<1056, 512>>>((const int4 *)rd, (256 << 20) / 16, (int *)flush);
        const int n = mode == 2 ? 4 * sets : 1;
        cudaEventRecord(a);
        for (int k = 0; k < n; k++) CK(f(k % sets));
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1e-3 / n);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    const size_t G = (size_t)1 << 30;
    const RdBuffers m = rd_buffers();
    const double copy = 2.0 * G / median_s([&] { return cudaMemcpyAsync(m.o, m.x, G, cudaMemcpyDeviceToDevice); });
    const std::array<int64_t, 2> shapes[] = {{4096, 4096}, {65536, 128}, {1024, 65536}, {16384, 8192}, {64, 262144}};
    printf("copy %.0f GB/s; %% of copy; columns cold_dirty cold_clean steady\n", copy * 1e-9);
    for (const auto &s : shapes) {
        const int64_t R = s[0], C = s[1];
        const size_t n = (size_t)R * C * 2;
        const int sets = (int)std::min<size_t>(16, G / n);
        printf("[%lld, %lld] (%d sets)\n", (long long)R, (long long)C, sets);
        for (int k = -1; k < 6; k++) {
            const double bytes = k < 0 ? 2.0 * n : gk_reduce_ledger(rd_ops[k], GK_BF16, R, C).bytes;
            printf("  %-18s", k < 0 ? "copy_same_bytes" : rd_names[k]);
            for (int mode = 0; mode < 3; mode++) {
                const double t = time_mode(mode, sets, [&](int j) {
                    if (k < 0) return cudaMemcpyAsync(m.o + j * n, m.x + j * n, n, cudaMemcpyDeviceToDevice);
                    RdBuffers mj = m;
                    mj.x += j * n; mj.r += j * n; mj.o += j * n;
                    return rd_launch_bf16(rd_ops[k], mj, R, C);
                });
                printf(" %6.1f", 100.0 * bytes / t / copy);
            }
            printf("\n");
        }
    }
    return 0;
}
