// Shared by the tuning sweeps: error check, random fill and median event timing, in plain nvcc
// (the GPU host has no Google Benchmark). Include after a gk header (gk_failure_reason).
#ifndef GK_SWEEP_UTIL_H
#define GK_SWEEP_UTIL_H

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s %s\n", #x, cudaGetErrorString(e_), gk_failure_reason()); exit(1); } } while (0)

// bf16 pairs uniform in [-4, 4) from a mixing hash of the index, as gk_bench fills its operands;
// valid as f32 too (in [-4, 4)) and as f16 pairs (magnitudes under 2.25). The tensor cores' power,
// and so the H200's clock on large GEMMs, follows the operands' bits: the earlier fill (magnitudes
// in [0.5, 1), bits linear in the index) ran 4096^3 and 8192^3 up to 12% faster than these values
// and made the layouts differ by up to 6% where with these they do not (gemm_layout_probe).
static __global__ void fill(unsigned *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned w = 0;
        for (int h = 0; h < 2; h++) {
            unsigned x = (unsigned)(2 * i + h) * 0x9e3779b9u ^ seed;
            x ^= x >> 16;
            x *= 0x85ebca6bu;
            x ^= x >> 13;
            x *= 0xc2b2ae35u;
            x ^= x >> 16;
            const float v = (float)(x >> 8) * (8.0f / 16777216.0f) - 4.0f;
            w |= (__float_as_uint(v) >> 16) << (16 * h);
        }
        p[i] = w;
    }
}

// Reads n 16-byte words: a flush that leaves L2 full of clean lines.
static __global__ void sweep_read(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x ^= p[i].x ^ p[i].w;
    if (x == 0x12345678u) *sink = x;
}

// How median_s leaves L2 before each timed call: 128 MiB written (full of dirty lines, as the
// bench does), 128 MiB read (full of clean lines), or as the call before left it.
enum SweepFlush { SWEEP_FLUSH_DIRTY = 0, SWEEP_FLUSH_CLEAN = 1, SWEEP_FLUSH_NONE = 2 };

// Median seconds of 21 timed calls after 3 warm-ups, L2 flushed before each as flush_mode says.
template <class F> static double median_s(F f, int flush_mode = SWEEP_FLUSH_DIRTY)
{
    static void *flush = nullptr;
    static unsigned *sink = nullptr;
    if (!flush) CK(cudaMalloc(&flush, 128 << 20));
    if (!sink) CK(cudaMalloc(&sink, 4));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) CK(f());
    std::vector<double> t;
    for (int i = 0; i < 21; i++) {
        if (flush_mode == SWEEP_FLUSH_CLEAN)
            sweep_read<<<1056, 256>>>((const uint4 *)flush, (128 << 20) / 16, sink);
        else if (flush_mode == SWEEP_FLUSH_DIRTY)
            CK(cudaMemsetAsync(flush, i, 128 << 20));
        cudaEventRecord(a);
        CK(f());
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1e-3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Holds a stream for `cycles` clock cycles: calls enqueued behind it are timed on the CPU alone.
static __global__ void sweep_spin(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static double sweep_median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The GEMM sweeps' device buffers, `bytes` each: a and b filled with random bits, d and ws not.
struct SweepGemmBuffers {
    char *a, *b, *d, *ws;
};
static SweepGemmBuffers sweep_gemm_buffers(size_t bytes)
{
    SweepGemmBuffers m;
    CK(cudaMalloc(&m.a, bytes));
    CK(cudaMalloc(&m.b, bytes));
    CK(cudaMalloc(&m.d, bytes));
    CK(cudaMalloc(&m.ws, bytes));
    fill<<<2048, 256>>>((unsigned *)m.a, bytes / 4, 1);
    fill<<<2048, 256>>>((unsigned *)m.b, bytes / 4, 2);
    CK(cudaDeviceSynchronize());
    return m;
}

#ifdef GK_GEMM_CUH
// A GEMM configuration's index by its tile's name ("wg128x256x64_s4_pt"); exits where none has it.
static int config_named(const char *tile)
{
    for (int c = 0; c < gk_gemm_config_count(); c++)
        if (strcmp(gk_gemm_config_info(c).name + strlen("gk_gemm_bf16_"), tile) == 0) return c;
    printf("no configuration %s\n", tile);
    exit(1);
}
#endif

#endif // GK_SWEEP_UTIL_H
