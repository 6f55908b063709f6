// gk benchmark harness: CUDA-event timing (warm-up, L2 flushed before every timed launch, median
// of many), the device's own ceilings measured in the same process (copy bandwidth: the best of
// cudaMemcpy device to device and a tuned copy kernel; FFMA rate; for binaries of tensor-core
// headers, which bring gk_mma.cuh, the mma.sync and wgmma rates), and the counters every gk
// benchmark row prints:
//   GB/s, TFLOP/s, bound_us (the roofline floor for this shape on this device), pct_roof
//   (floor / measured time) and vs_base (baseline time / measured time, > 1 is faster).
// C++ kept plain; one benchmark binary per header includes this once.
#ifndef GK_BENCH_H
#define GK_BENCH_H

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gk/gk_core.cuh"

struct GkBenchDevice {
    std::string name;
    int sms = 0;
    int l2_bytes = 0;
    int driver = 0, runtime = 0;
    double copy_bytes_per_s = 0;        // the memory roof: the best of the two below (bytes read + written)
    double memcpy_bytes_per_s = 0;      // cudaMemcpy device to device, 1 GiB
    double copy_kernel_bytes_per_s = 0; // the fastest of gk_bench's copy kernels, 1 GiB
    int copy_kernel = -1;               // which one (gk_bench_copy_kernels), -1 if none copied right
    double ffma_flops_per_s = 0;        // fp32 FMA from registers, 2 FLOPs each
};

#define GK_BENCH_CUDA(expr)                                                                         \
    do {                                                                                            \
        cudaError_t gk_e = (expr);                                                                  \
        if (gk_e != cudaSuccess) {                                                                  \
            fprintf(stderr, "gk_bench: %s failed: %s | %s\n", #expr, cudaGetErrorString(gk_e),      \
                    gk_failure_reason());                                                           \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

// ------------------------------------------------------------------ random device data

static __global__ void gk_bench_fill_kernel(void *p, int dt, int64_t n, uint64_t seed, float lo, float hi)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        float v = lo + (hi - lo) * (float)((z >> 40) * (1.0 / 16777216.0));
        if (dt == GK_F32) ((float *)p)[i] = v;
        else if (dt == GK_BF16) ((gk_bf16 *)p)[i] = gk_f32_to_bf16(v);
        else if (dt == GK_F16) ((gk_f16 *)p)[i] = gk_f32_to_f16(v);
        else ((unsigned char *)p)[i] = dt == GK_E4M3 ? gk_f32_to_e4m3(v) : gk_f32_to_e5m2(v);
    }
}

// Uniform random values in [lo, hi) (never an all-zero buffer), different for every call.
inline void gk_bench_fill_random(void *p, int dt, int64_t n, float lo = -4.0f, float hi = 4.0f)
{
    static uint64_t calls = 0;
    uint64_t seed = 0x5eed0000ull + 7919ull * ++calls;
    gk_bench_fill_kernel<<<1024, 256>>>(p, dt, n, seed, lo, hi);
    GK_BENCH_CUDA(cudaGetLastError());
}

// Benchmark buffers come from one arena allocated once per process and handed out in order:
// every case gets the same placement whatever ran before it. (With a cudaMalloc and cudaFree per
// case, bf16 residual add measured 90% of copy bandwidth after the 1 GiB cases and 99% alone.)
// gk_bench_arena_reset() at the start of each case returns everything.
static char *gk_bench_arena_base = nullptr;
static size_t gk_bench_arena_size = 0, gk_bench_arena_used = 0;

inline void gk_bench_arena_reset() { gk_bench_arena_used = 0; }

// A device buffer from the arena, 4 KiB aligned, poisoned with 0xff bytes (NaN in every float dtype).
inline void *gk_bench_alloc(size_t bytes, bool poison = true)
{
    if (!gk_bench_arena_base) {
        size_t free_b = 0, total_b = 0;
        GK_BENCH_CUDA(cudaMemGetInfo(&free_b, &total_b));
        gk_bench_arena_size = (size_t)8 << 30;
        if (gk_bench_arena_size > free_b / 2) gk_bench_arena_size = free_b / 2;
        GK_BENCH_CUDA(cudaMalloc((void **)&gk_bench_arena_base, gk_bench_arena_size));
    }
    const size_t start = (gk_bench_arena_used + 4095) & ~(size_t)4095;
    if (start + bytes > gk_bench_arena_size) {
        fprintf(stderr, "gk_bench: arena of %zu bytes exhausted\n", gk_bench_arena_size);
        exit(1);
    }
    gk_bench_arena_used = start + bytes;
    void *p = gk_bench_arena_base + start;
    if (poison) GK_BENCH_CUDA(cudaMemset(p, 0xff, bytes));
    return p;
}

// ------------------------------------------------------------------ timing

// L2 flush: writing a buffer twice the L2's size evicts everything the kernel could reuse.
inline void gk_bench_flush_l2(cudaStream_t s)
{
    static void *buf = nullptr;
    static size_t bytes = 0;
    if (!buf) {
        int dev = 0, l2 = 0;
        GK_BENCH_CUDA(cudaGetDevice(&dev));
        GK_BENCH_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
        GK_BENCH_CUDA(cudaMalloc(&buf, bytes));
    }
    GK_BENCH_CUDA(cudaMemsetAsync(buf, 0, bytes, s));
}

// Median seconds of `reps` timed calls of launch(), after `warmup` untimed ones. Each timed call
// is bracketed by its own events, with the L2 flushed before it (outside the bracket).
inline double gk_bench_median_seconds(const std::function<cudaError_t(cudaStream_t)> &launch, int warmup = 3,
                                      int reps = 25, bool flush_l2 = true)
{
    cudaStream_t s = 0;
    cudaEvent_t a, b;
    GK_BENCH_CUDA(cudaEventCreate(&a));
    GK_BENCH_CUDA(cudaEventCreate(&b));
    for (int i = 0; i < warmup; i++) GK_BENCH_CUDA(launch(s));
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        if (flush_l2) gk_bench_flush_l2(s);
        GK_BENCH_CUDA(cudaEventRecord(a, s));
        GK_BENCH_CUDA(launch(s));
        GK_BENCH_CUDA(cudaEventRecord(b, s));
        GK_BENCH_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        GK_BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1e-3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Median seconds of cudaMemcpy D2D of `bytes` between two buffers from the arena (the source
// random): the copy ceiling and the copy rows.
inline double gk_bench_copy_seconds(size_t bytes)
{
    void *src = gk_bench_alloc(bytes, false), *dst = gk_bench_alloc(bytes);
    gk_bench_fill_random(src, GK_F32, bytes / 4);
    return gk_bench_median_seconds(
        [&](cudaStream_t s) { return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s); });
}

// ------------------------------------------------------------------ copy kernels

// A tuned device-to-device copy: 16-byte loads (read-only path) and stores, a grid-stride loop,
// `unroll` loads in flight per thread before their stores (a literal after inlining, so v stays
// in registers). n counts 16-byte chunks.
static __device__ __forceinline__ void gk_bench_copy_body(const uint4 *src, uint4 *dst, int64_t n, int unroll)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * stride < n; i += unroll * stride) {
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < unroll; u++) v[u] = gk_ld16_nc(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < unroll; u++) gk_st16(dst + i + u * stride, v[u]);
    }
    for (; i < n; i += stride) gk_st16(dst + i, gk_ld16_nc(src + i));
}

static __global__ void __launch_bounds__(256) gk_bench_copy4_kernel(const uint4 *src, uint4 *dst, int64_t n)
{
    gk_bench_copy_body(src, dst, n, 4);
}

static __global__ void __launch_bounds__(256) gk_bench_copy8_kernel(const uint4 *src, uint4 *dst, int64_t n)
{
    gk_bench_copy_body(src, dst, n, 8);
}

// The variants tried at startup; the fastest that copies every byte right sets the kernel ceiling.
// A resident wave loops over the data; one pass launches a block per 256 x unroll chunks.
struct GkBenchCopyKernel {
    const char *name;
    void (*kernel)(const uint4 *, uint4 *, int64_t);
    int unroll;
    int one_pass;
};
static const GkBenchCopyKernel gk_bench_copy_kernels[] = {
    {"copy kernel: 16-byte vectors, 4 in flight a thread, one resident wave", gk_bench_copy4_kernel, 4, 0},
    {"copy kernel: 16-byte vectors, 8 in flight a thread, one resident wave", gk_bench_copy8_kernel, 8, 0},
    {"copy kernel: 16-byte vectors, 4 in flight a thread, one pass", gk_bench_copy4_kernel, 4, 1},
};
static const int gk_bench_num_copy_kernels = sizeof(gk_bench_copy_kernels) / sizeof(gk_bench_copy_kernels[0]);

// Copies bytes (a multiple of 16, 16-byte aligned pointers) with copy kernel v.
inline cudaError_t gk_bench_copy_kernel_launch(int v, const void *src, void *dst, size_t bytes, cudaStream_t s)
{
    const GkBenchCopyKernel &k = gk_bench_copy_kernels[v];
    const int64_t chunks = (int64_t)(bytes / 16), threads = 256;
    int64_t grid;
    if (k.one_pass) {
        grid = (chunks + threads * k.unroll - 1) / (threads * k.unroll);
    } else {
        int dev = 0, sms = 0, per_sm = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.kernel, (int)threads, 0);
        if (e != cudaSuccess) return e;
        grid = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    }
    if (grid < 1) grid = 1;
    if (grid > 0x7fffffff) grid = 0x7fffffff;
    k.kernel<<<(unsigned)grid, (unsigned)threads, 0, s>>>((const uint4 *)src, (uint4 *)dst, chunks);
    return cudaGetLastError();
}

static __global__ void gk_bench_diff_kernel(const uint4 *a, const uint4 *b, int64_t n, unsigned long long *bad)
{
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const uint4 x = a[i], y = b[i];
        c += x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w;
    }
    if (c) atomicAdd(bad, c);
}

// How many of the 16-byte chunks of two device buffers differ (bytes a multiple of 16, both
// 16-byte aligned): a bit-exact comparison on the device (copies, a deterministic kernel's reruns).
inline unsigned long long gk_bench_count_diff16(const void *a, const void *b, size_t bytes)
{
    static unsigned long long *bad_d = nullptr;
    if (!bad_d) GK_BENCH_CUDA(cudaMalloc((void **)&bad_d, sizeof(unsigned long long)));
    GK_BENCH_CUDA(cudaMemset(bad_d, 0, sizeof(unsigned long long)));
    gk_bench_diff_kernel<<<1024, 256>>>((const uint4 *)a, (const uint4 *)b, (int64_t)(bytes / 16), bad_d);
    GK_BENCH_CUDA(cudaGetLastError());
    unsigned long long bad = 0;
    GK_BENCH_CUDA(cudaMemcpy(&bad, bad_d, sizeof bad, cudaMemcpyDeviceToHost));
    return bad;
}

// Values of a device buffer (n of dtype dt: f32, bf16, f16 or e4m3) that are NaN or infinite, read
// from their bits: never written (outputs are poisoned with NaN) or a broken result.
static __global__ void gk_bench_nonfinite_kernel(const void *x, int dt, int64_t n, unsigned long long *count)
{
    unsigned long long c = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        if (dt == GK_E4M3) c += (((const unsigned char *)x)[i] & 0x7f) == 0x7f;
        else if (dt == GK_BF16) c += (((const unsigned short *)x)[i] & 0x7f80) == 0x7f80;
        else if (dt == GK_F16) c += (((const unsigned short *)x)[i] & 0x7c00) == 0x7c00;
        else c += (((const unsigned *)x)[i] & 0x7f800000u) == 0x7f800000u;
    }
    if (c) atomicAdd(count, c);
}

static unsigned long long gk_bench_count_nonfinite(const void *x, int dt, int64_t n)
{
    static unsigned long long *d = nullptr;
    if (!d) GK_BENCH_CUDA(cudaMalloc((void **)&d, sizeof(unsigned long long)));
    GK_BENCH_CUDA(cudaMemset(d, 0, sizeof(unsigned long long)));
    gk_bench_nonfinite_kernel<<<1024, 256>>>(x, dt, n, d);
    GK_BENCH_CUDA(cudaGetLastError());
    unsigned long long h = 0;
    GK_BENCH_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

// Median seconds of copy kernel v over `bytes` between two buffers from the arena (the source
// random, the destination poisoned first); false, with a message, if it did not copy every byte.
inline bool gk_bench_copy_kernel_seconds(int v, size_t bytes, double *seconds)
{
    void *src = gk_bench_alloc(bytes, false), *dst = gk_bench_alloc(bytes);
    gk_bench_fill_random(src, GK_F32, bytes / 4);
    GK_BENCH_CUDA(gk_bench_copy_kernel_launch(v, src, dst, bytes, 0));
    const unsigned long long bad = gk_bench_count_diff16(src, dst, bytes);
    if (bad) {
        fprintf(stderr, "gk_bench: %s copied %llu of %zu 16-byte chunks wrong: not used as a ceiling\n",
                gk_bench_copy_kernels[v].name, bad, bytes / 16);
        return false;
    }
    *seconds = gk_bench_median_seconds([&](cudaStream_t s) { return gk_bench_copy_kernel_launch(v, src, dst, bytes, s); });
    return true;
}

// ------------------------------------------------------------------ ceilings

// Register-only FFMA: 8 independent chains per thread keep the pipes full.
static __global__ void gk_bench_ffma_kernel(float *out, int iters, float b, float c)
{
    float x[8];
#pragma unroll
    for (int k = 0; k < 8; k++) x[k] = threadIdx.x * 1e-3f + k;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) x[k] = fmaf(x[k], b, c);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) s += x[k];
    if (s == 1234.5f) out[threadIdx.x] = s; // never true for these inputs; keeps the loop alive
}

// The ceilings of the current device, measured once per process.
inline const GkBenchDevice &gk_bench_device()
{
    static GkBenchDevice d;
    if (d.sms) return d;
    int dev = 0;
    cudaDeviceProp p;
    GK_BENCH_CUDA(cudaGetDevice(&dev));
    GK_BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
    d.name = p.name;
    d.sms = p.multiProcessorCount;
    d.l2_bytes = p.l2CacheSize;
    GK_BENCH_CUDA(cudaDriverGetVersion(&d.driver));
    GK_BENCH_CUDA(cudaRuntimeGetVersion(&d.runtime));

    // the memory roof: the best of cudaMemcpy and the copy kernels, so no kernel reads above 100%
    const size_t bytes = (size_t)1 << 30;
    gk_bench_arena_reset();
    double t = gk_bench_copy_seconds(bytes);
    d.memcpy_bytes_per_s = 2.0 * bytes / t;
    for (int v = 0; v < gk_bench_num_copy_kernels; v++) {
        gk_bench_arena_reset();
        double tk = 0;
        if (!gk_bench_copy_kernel_seconds(v, bytes, &tk)) continue;
        printf("gk_bench: %s: %.1f GB/s\n", gk_bench_copy_kernels[v].name, 2.0 * bytes / tk * 1e-9);
        if (2.0 * bytes / tk > d.copy_kernel_bytes_per_s) {
            d.copy_kernel_bytes_per_s = 2.0 * bytes / tk;
            d.copy_kernel = v;
        }
    }
    d.copy_bytes_per_s = std::max(d.memcpy_bytes_per_s, d.copy_kernel_bytes_per_s);
    gk_bench_arena_reset();

    float *out = (float *)gk_bench_alloc(1024 * sizeof(float));
    const int iters = 1 << 14, threads = 256, blocks = d.sms * 8;
    t = gk_bench_median_seconds([&](cudaStream_t s) {
        gk_bench_ffma_kernel<<<blocks, threads, 0, s>>>(out, iters, 0.999999f, 1e-7f);
        return cudaGetLastError();
    }, 2, 7, false);
    d.ffma_flops_per_s = 2.0 * 8 * iters * (double)threads * blocks / t;
    gk_bench_arena_reset();
    return d;
}

// ------------------------------------------------------------------ reporting

// Sets the row's manual time to `seconds` and its counters from the ledger. peak_flops is the
// ceiling of the unit the kernel uses (FFMA for SIMT, the tensor-core rate for mma kernels);
// baseline_seconds is the baseline measured in this run for the same work (0: none).
inline void gk_bench_report(benchmark::State &state, double seconds, gk_ledger l, double peak_flops,
                            double baseline_seconds)
{
    const GkBenchDevice &d = gk_bench_device();
    const double bound = gk_roofline_seconds(l, peak_flops, d.copy_bytes_per_s);
    state.SetIterationTime(seconds);
    state.counters["GB/s"] = l.bytes / seconds * 1e-9;
    state.counters["TFLOP/s"] = l.flops / seconds * 1e-12;
    state.counters["bound_us"] = bound * 1e6;
    state.counters["pct_roof"] = 100.0 * bound / seconds;
    if (baseline_seconds > 0) state.counters["vs_base"] = baseline_seconds / seconds;
}

// The baseline row every memory-bound benchmark binary starts with: cudaMemcpy D2D of 1 GiB.
inline void gk_bench_copy_row(benchmark::State &state)
{
    gk_bench_arena_reset();
    const size_t bytes = (size_t)1 << 30;
    gk_ledger l = {0.0, 2.0 * bytes};
    for (auto _ : state) {
        double t = gk_bench_copy_seconds(bytes);
        gk_bench_report(state, t, l, gk_bench_device().ffma_flops_per_s, t);
    }
    state.SetLabel("baseline: cudaMemcpy D2D 1 GiB");
}

// The other half of the memory roof: the fastest copy kernel, 1 GiB; vs_base against cudaMemcpy.
inline void gk_bench_copy_kernel_row(benchmark::State &state)
{
    gk_bench_arena_reset();
    const GkBenchDevice &d = gk_bench_device();
    const size_t bytes = (size_t)1 << 30;
    gk_ledger l = {0.0, 2.0 * bytes};
    for (auto _ : state) {
        double t = 0;
        if (d.copy_kernel < 0 || !gk_bench_copy_kernel_seconds(d.copy_kernel, bytes, &t)) {
            state.SkipWithError("no copy kernel copied every byte right");
            break;
        }
        gk_bench_report(state, t, l, d.ffma_flops_per_s, l.bytes / d.memcpy_bytes_per_s);
    }
    state.SetLabel(d.copy_kernel < 0 ? "no copy kernel" : std::string(gk_bench_copy_kernels[d.copy_kernel].name) + ", 1 GiB");
}

// Registers the copy rows: cudaMemcpy (the baseline) and the fastest copy kernel.
inline void gk_bench_register_copy_row()
{
    benchmark::RegisterBenchmark("copy_d2d/1GiB", gk_bench_copy_row)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("copy_kernel/1GiB", gk_bench_copy_kernel_row)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

// ------------------------------------------------------------------ tensor-core ceilings

// The peaks of the tensor-core benches (GEMM, attention), measured in their own process: the
// mma.sync rate from registers and, in sm_90a builds on a compute capability 9.0 GPU, the wgmma
// rate from shared memory. For binaries whose header brings gk_mma.cuh: include it (through that
// header) before this file.
#ifdef GK_MMA_CUH

// Register-only mma.sync: kGkBenchMmaChains independent accumulators per warp, fragments that
// never change. bf16 inputs 2^-6 and 2^-7 keep the sums finite for any iteration count used here.
constexpr int kGkBenchMmaChains = 8;

static __global__ void gk_bench_mma_ceiling_kernel(float *out, int iters)
{
    const unsigned v = 0x3c803c00u + (threadIdx.x & 7);
    const unsigned a[4] = {v, v ^ 1u, v ^ 2u, v ^ 3u}, b[2] = {v ^ 4u, v ^ 5u};
    float acc[kGkBenchMmaChains][4];
#pragma unroll
    for (int c = 0; c < kGkBenchMmaChains; c++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[c][j] = 0.0f;
#pragma unroll 4
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < kGkBenchMmaChains; c++) gk_mma_m16n8k16_bf16(acc[c], a, b, acc[c]);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < kGkBenchMmaChains; c++)
#pragma unroll
        for (int j = 0; j < 4; j++) s += acc[c][j];
    if (s == 1234.5f) out[threadIdx.x] = s; // never true; keeps the results live
}

struct GkBenchMmaRun {
    double seconds, flops;
};

// One timed configuration: `warps` per block, as many blocks as fit on every SM at once (one wave).
inline GkBenchMmaRun gk_bench_mma_ceiling_run(int warps)
{
    static float *out = nullptr;
    if (!out) GK_BENCH_CUDA(cudaMalloc((void **)&out, 1024 * sizeof(float)));
    const int threads = warps * 32, iters = 1 << 14;
    int per_sm = 0;
    GK_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gk_bench_mma_ceiling_kernel, threads, 0));
    const int blocks = gk_bench_device().sms * (per_sm > 0 ? per_sm : 1);
    const double t = gk_bench_median_seconds([&](cudaStream_t s) {
        gk_bench_mma_ceiling_kernel<<<blocks, threads, 0, s>>>(out, iters);
        return cudaGetLastError();
    }, 2, 7, false);
    return {t, 2.0 * 16 * 8 * 16 * kGkBenchMmaChains * (double)iters * warps * blocks};
}

// The mma.sync bf16 rate of this device (FLOP/s): the better of 8 and 16 warps per block.
inline double gk_bench_mma_ceiling()
{
    static double best = 0;
    if (best > 0) return best;
    for (int warps : {8, 16}) {
        const GkBenchMmaRun r = gk_bench_mma_ceiling_run(warps);
        printf("gk_bench: mma.sync m16n8k16 bf16, %d warps/block, %d chains/warp: %.1f TFLOP/s\n", warps,
               kGkBenchMmaChains, r.flops / r.seconds * 1e-12);
        best = std::max(best, r.flops / r.seconds);
    }
    return best;
}

// wgmma m64n256k16 bf16 -> fp32 from fixed shared-memory tiles (128-byte swizzled, filled with
// random bf16 of magnitude 2^-6 .. 2^-5), two consumer warpgroups a block as in the GEMM, one
// block per SM, each k-tile of 4 wgmma committed and the one before waited for: the rate wgmma
// kernels could reach with their operands already in shared memory. sm_90a only.
constexpr int kGkBenchWgSmem = 1024 + 2 * 8192 + 32768;

static __global__ void __launch_bounds__(256, 1) gk_bench_wgmma_ceiling_kernel(float *out, int iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint4 gk_bench_wg_smem[];
    char *sm = gk_smem_align_1024(gk_bench_wg_smem);
    for (int i = threadIdx.x; i < (2 * 8192 + 32768) / 2; i += blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u;
        h ^= h >> 15;
        ((unsigned short *)sm)[i] = (unsigned short)(0x3c80u | (h & 0x7fu) | (h >> 8 & 1u) << 15);
    }
    gk_fence_proxy_async();
    __syncthreads();
    const int wg = threadIdx.x >> 7;
    const unsigned long long da = gk_wgmma_desc_sw128(sm + wg * 8192, 16), db = gk_wgmma_desc_sw128(sm + 16384, 16);
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;
    gk_wgmma_fence_regs(acc, 128);
    for (int it = 0; it < iters; it++) {
        gk_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) gk_wgmma_m64k16(acc, da + 2 * kk, db + 2 * kk, GK_BF16, 256, 0, 0, 1);
        gk_wgmma_commit();
        gk_wgmma_wait_1();
        gk_wgmma_fence_regs(acc, 128);
    }
    gk_wgmma_wait_0();
    gk_wgmma_fence_regs(acc, 128);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) s += acc[i];
    if (s == 1234.5f) out[threadIdx.x] = s; // never true; keeps the results live
#else
    if (iters < 0) out[0] = 0.0f;
#endif
}

// 1 in the image of a build that has sm_90a code (the wgmma ceiling kernel is empty otherwise).
static __device__ int gk_bench_wg_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif

// Whether the wgmma ceiling (and wgmma kernels) can run: an sm_90a image on a 9.0 GPU.
inline bool gk_bench_wgmma_ready()
{
    static unsigned known, ready;
    return gk_sm90a_ready(&gk_bench_wg_built, &known, &ready) != 0;
}

// One timed run of the wgmma ceiling kernel; {0, 0} where wgmma cannot run.
inline GkBenchMmaRun gk_bench_wgmma_ceiling_run()
{
    static float *out = nullptr;
    if (!gk_bench_wgmma_ready()) return {0, 0};
    if (!out) GK_BENCH_CUDA(cudaMalloc((void **)&out, 1024 * sizeof(float)));
    GK_BENCH_CUDA(cudaFuncSetAttribute((const void *)gk_bench_wgmma_ceiling_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, kGkBenchWgSmem));
    const int iters = 1 << 13, blocks = gk_bench_device().sms;
    const double t = gk_bench_median_seconds([&](cudaStream_t s) {
        gk_bench_wgmma_ceiling_kernel<<<blocks, 256, kGkBenchWgSmem, s>>>(out, iters);
        return cudaGetLastError();
    }, 2, 7, false);
    return {t, 2.0 * 64 * 256 * 16 * 4 * (double)iters * 2 * blocks};
}

// The wgmma bf16 rate of this device (FLOP/s), 0 where the wgmma kernels cannot run.
inline double gk_bench_wgmma_ceiling()
{
    static double rate = -1;
    if (rate >= 0) return rate;
    const GkBenchMmaRun r = gk_bench_wgmma_ceiling_run();
    rate = r.seconds > 0 ? r.flops / r.seconds : 0.0;
    return rate;
}

// The ceiling rows: each ceiling remeasured and reported against itself (err 0: the tensor-core
// benches report err on every row, and every row has the same counters).
inline void gk_bench_mma_ceiling_row(benchmark::State &state)
{
    GkBenchMmaRun r = {0, 0};
    for (auto _ : state) {
        r = gk_bench_mma_ceiling_run(8);
        const GkBenchMmaRun r16 = gk_bench_mma_ceiling_run(16);
        if (r16.flops / r16.seconds > r.flops / r.seconds) r = r16;
        gk_bench_report(state, r.seconds, gk_ledger{r.flops, 0.0}, gk_bench_mma_ceiling(), r.seconds);
        state.counters["err"] = 0.0;
    }
    state.SetLabel("ceiling: mma.sync m16n8k16 bf16 -> fp32, registers only, " + std::to_string(kGkBenchMmaChains) +
                   " chains/warp, 8 or 16 warps/block; remeasured (the ceiling itself is measured at startup)");
}

inline void gk_bench_wgmma_ceiling_row(benchmark::State &state)
{
    for (auto _ : state) {
        const GkBenchMmaRun r = gk_bench_wgmma_ceiling_run();
        gk_bench_report(state, r.seconds, gk_ledger{r.flops, 0.0}, gk_bench_wgmma_ceiling(), r.seconds);
        state.counters["err"] = 0.0;
    }
    state.SetLabel("ceiling: wgmma m64n256k16 bf16 -> fp32 from shared memory, 2 warpgroups/block, 1 block/SM; "
                   "remeasured (the ceiling itself is measured at startup)");
}

// Measures both ceilings, adds them to the JSON context (mma_bf16_TFLOPs, wgmma_bf16_TFLOPs:
// tools/roofline.py reads them), prints them and registers their rows (ceiling/mma_sync_bf16,
// and ceiling/wgmma_bf16 where wgmma runs).
inline void gk_bench_register_tensor_ceilings()
{
    char buf[64];
    const double mma = gk_bench_mma_ceiling();
    snprintf(buf, sizeof buf, "%.1f", mma * 1e-12);
    benchmark::AddCustomContext("mma_bf16_TFLOPs", buf);
    printf("gk_bench: measured ceiling: mma.sync bf16 %.1f TFLOP/s\n", mma * 1e-12);
    benchmark::RegisterBenchmark("ceiling/mma_sync_bf16", gk_bench_mma_ceiling_row)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    const double wg = gk_bench_wgmma_ceiling();
    if (wg > 0) {
        snprintf(buf, sizeof buf, "%.1f", wg * 1e-12);
        benchmark::AddCustomContext("wgmma_bf16_TFLOPs", buf);
        printf("gk_bench: measured ceiling: wgmma m64n256k16 bf16 %.1f TFLOP/s\n", wg * 1e-12);
        benchmark::RegisterBenchmark("ceiling/wgmma_bf16", gk_bench_wgmma_ceiling_row)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    } else {
        printf("gk_bench: no wgmma ceiling (needs an sm_90a build on a compute capability 9.0 GPU)\n");
    }
}

#endif // GK_MMA_CUH

// Registers the device and its measured ceilings as JSON context, prints them, and runs.
inline int gk_bench_main(int argc, char **argv, void (*register_all)())
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "gk_bench: no CUDA device (%s); benchmarks need a GPU\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    const GkBenchDevice &d = gk_bench_device();
    char buf[64];
    benchmark::AddCustomContext("gpu", d.name);
    benchmark::AddCustomContext("sms", std::to_string(d.sms));
    benchmark::AddCustomContext("cuda_driver", std::to_string(d.driver));
    benchmark::AddCustomContext("cuda_runtime", std::to_string(d.runtime));
    snprintf(buf, sizeof buf, "%.1f", d.copy_bytes_per_s * 1e-9);
    benchmark::AddCustomContext("copy_GBps", buf); // the memory roof: the best of the two below
    snprintf(buf, sizeof buf, "%.1f", d.memcpy_bytes_per_s * 1e-9);
    benchmark::AddCustomContext("memcpy_GBps", buf);
    snprintf(buf, sizeof buf, "%.1f", d.copy_kernel_bytes_per_s * 1e-9);
    benchmark::AddCustomContext("copy_kernel_GBps", buf);
    benchmark::AddCustomContext("copy_kernel", d.copy_kernel < 0 ? "none" : gk_bench_copy_kernels[d.copy_kernel].name);
    snprintf(buf, sizeof buf, "%.2f", d.ffma_flops_per_s * 1e-12);
    benchmark::AddCustomContext("ffma_TFLOPs", buf);
    printf("gk_bench: %s, %d SMs, L2 %d MB, driver %d, runtime %d\n", d.name.c_str(), d.sms, d.l2_bytes >> 20,
           d.driver, d.runtime);
    printf("gk_bench: measured ceilings: copy %.1f GB/s (read + write; the best of cudaMemcpy D2D %.1f GB/s and "
           "the fastest copy kernel %.1f GB/s), FFMA %.2f TFLOP/s\n",
           d.copy_bytes_per_s * 1e-9, d.memcpy_bytes_per_s * 1e-9, d.copy_kernel_bytes_per_s * 1e-9,
           d.ffma_flops_per_s * 1e-12);
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

#endif // GK_BENCH_H
