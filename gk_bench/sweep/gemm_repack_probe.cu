// The odd shape's repack (4095 x 4093 and 4093 x 4097 bf16 operands to 16-byte aligned rows)
// against the driver's 2D copy of the same rows and a plain copy of the same bytes, each timed
// after the sweeps' memset flush:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_repack_probe.cu
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

#include <cstring>

/* A copy-like repack: a thread per 16-byte output word (PW words a thread, a row apart in the
   job's list of words), its two source words loaded directly (the second is the next lane's
   first: an L1 hit), no shuffles, every warp resident it can have. */
#ifndef V
#define V 0
#endif
#ifndef PW
#define PW 2
#endif
static __global__ void __launch_bounds__(256) pack_simple(gk_gemm_pack_job j0, gk_gemm_pack_job j1, int64_t w0, int64_t words,
                                                               unsigned m0, unsigned l0, unsigned m1, unsigned l1)
{
    const int64_t i0 = (int64_t)blockIdx.x * 256 * PW + threadIdx.x;
#pragma unroll
    for (int p = 0; p < PW; p++) {
        const int64_t iw = i0 + p * 256;
#if V == 2 /* every lane stays for the shuffles: one past the end redoes the last word, not stored */
        if (iw - (threadIdx.x & 31) >= words) return;
        const int64_t i = iw < words ? iw : words - 1;
#else
        if (iw >= words) return;
        const int64_t i = iw;
#endif
        const int second = i >= w0;
        const gk_gemm_pack_job j = second ? j1 : j0;
#if V == 3 /* division by multiply-high: q = (umulhi(n, m) + n) >> l, m and l from the host */
        const unsigned wi = (unsigned)(second ? i - w0 : i), wpr = (unsigned)(j.ldp / 8);
        const unsigned m = second ? m1 : m0, l = second ? l1 : l0;
        const unsigned rq = (__umulhi(wi, m) + wi) >> l;
        const int64_t r = rq, c = (int64_t)(wi - rq * wpr) * 8;
#elif V >= 1 /* 32-bit division: fewer instructions a word */
        const unsigned wi = (unsigned)(second ? i - w0 : i), wpr = (unsigned)(j.ldp / 8);
        const int64_t r = wi / wpr, c = (int64_t)(wi % wpr) * 8;
#else
        const int64_t wi = second ? i - w0 : i, wpr = j.ldp / 8;
        const int64_t r = wi / wpr, c = wi % wpr * 8;
#endif
        const char *row = (const char *)(j.src + r * j.ld), *end = row + 2 * (int64_t)j.cols;
        const int off = (int)((size_t)row & 15);
        const uint4 *word = (const uint4 *)(row - off + 2 * c);
#if V == 2 /* the second word from the next lane (same row: a row's words are 32-aligned in i) */
        const uint4 lo = (const char *)word < end ? gk_ld16_nc(word) : make_uint4(0, 0, 0, 0);
        const int lane = threadIdx.x & 31;
        uint4 hi = make_uint4(__shfl_down_sync(0xffffffffu, lo.x, 1), __shfl_down_sync(0xffffffffu, lo.y, 1),
                              __shfl_down_sync(0xffffffffu, lo.z, 1), __shfl_down_sync(0xffffffffu, lo.w, 1));
        if (lane == 31 || (wi + 1) % wpr == 0) hi = (const char *)(word + 1) < end ? gk_ld16_nc(word + 1) : make_uint4(0, 0, 0, 0);
#else
        const uint4 lo = (const char *)word < end ? word[0] : make_uint4(0, 0, 0, 0);
        const uint4 hi = (const char *)(word + 1) < end ? word[1] : make_uint4(0, 0, 0, 0);
#endif
        const unsigned x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        const int q = off >> 2, sh = (off & 3) * 8;
        unsigned y[5], o[4];
#pragma unroll
        for (int e = 0; e < 5; e++) y[e] = q == 0 ? x[e] : q == 1 ? x[e + 1] : q == 2 ? x[e + 2] : x[min(e + 3, 7)];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int64_t keep = j.cols - c - 2 * e;
            o[e] = __funnelshift_r(y[e], y[e + 1], sh);
            o[e] = keep >= 2 ? o[e] : keep == 1 ? o[e] & 0xffffu : 0u;
        }
        if (iw < words) *(uint4 *)(j.dst + r * j.ldp + c) = make_uint4(o[0], o[1], o[2], o[3]);
    }
}

int main()
{
    const int64_t M = 4095, N = 4097, K = 4093;
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)256 << 20);
    const void *a = m.a, *b = m.b;
    int64_t lda = K, ldb = N;
    char *ws = m.ws;
    gk_gemm_pack_job j[2];
    j[0] = gk_gemm_pack_job_of(&ws, &a, &lda, M, K, gk_gemm_pack_bytes(M, K, 0));
    j[1] = gk_gemm_pack_job_of(&ws, &b, &ldb, K, N, gk_gemm_pack_bytes(K, N, 0));
    int blocks;
    CK(gk_grid_size(j[0].units + j[1].units, 8, 4, &blocks));
    const double bytes = 2.0 * (M * K + K * N) * 2; /* read + write, unpadded */
    const double t_pack = median_s([&] { gk_gemm_pack<<<blocks, 256>>>(j[0], j[1]); return cudaGetLastError(); });
    const double t_2d = median_s([&] {
        cudaError_t e = cudaMemcpy2DAsync(j[0].dst, j[0].ldp * 2, m.a, K * 2, K * 2, M, cudaMemcpyDeviceToDevice);
        return e != cudaSuccess ? e : cudaMemcpy2DAsync(j[1].dst, j[1].ldp * 2, m.b, N * 2, N * 2, K, cudaMemcpyDeviceToDevice);
    });
    /* the same kernel and grid on rows that start aligned (lda 4096, ldb 4104): what the
       unaligned starts cost, apart from the kernel's structure */
    gk_gemm_pack_job ja[2] = {j[0], j[1]};
    ja[0].ld = 4096;
    ja[1].ld = 4104;
    const double t_pack_aligned = median_s([&] { gk_gemm_pack<<<blocks, 256>>>(ja[0], ja[1]); return cudaGetLastError(); });
    const double t_copy = median_s([&] { return cudaMemcpyAsync(m.d, m.a, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice); });
    /* the simple kernel into the second half of the workspace, checked against gk_gemm_pack */
    const int64_t w0 = j[0].rows * (j[0].ldp / 8), words = w0 + j[1].rows * (j[1].ldp / 8);
    gk_gemm_pack_job js[2] = {j[0], j[1]};
    const size_t ws_bytes = (size_t)(ws - m.ws);
    js[0].dst = (unsigned short *)((char *)j[0].dst + ws_bytes);
    js[1].dst = (unsigned short *)((char *)j[1].dst + ws_bytes);
    /* magic numbers for division by each job's words a row (d < 2^31, n < 2^31) */
    unsigned mg[2], lg[2];
    for (int q = 0; q < 2; q++) {
        const uint64_t d = (uint64_t)(j[q].ldp / 8);
        unsigned l = 0;
        while (((uint64_t)1 << l) < d) l++;
        mg[q] = (unsigned)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1);
        lg[q] = l;
        for (uint64_t n = 0; n < (uint64_t)j[q].rows * d; n++) /* every index this job uses */
            if (((((n * mg[q]) >> 32) + n) >> l) != n / d) { printf("magic division wrong at %llu\n", (unsigned long long)n); return 1; }
    }
    const unsigned sblocks = (unsigned)((words + 256 * PW - 1) / (256 * PW));
    const double t_simple = median_s([&] { pack_simple<<<sblocks, 256>>>(js[0], js[1], w0, words, mg[0], lg[0], mg[1], lg[1]); return cudaGetLastError(); });
    CK(cudaMemset(j[0].dst, 0xff, 2 * ws_bytes)); /* both copies poisoned, padding bytes too */
    gk_gemm_pack<<<blocks, 256>>>(j[0], j[1]);
    pack_simple<<<sblocks, 256>>>(js[0], js[1], w0, words, mg[0], lg[0], mg[1], lg[1]);
    CK(cudaDeviceSynchronize());
    std::vector<char> h0(ws_bytes), h1(ws_bytes);
    CK(cudaMemcpy(h0.data(), j[0].dst, ws_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h1.data(), js[0].dst, ws_bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(h0.data(), h1.data(), ws_bytes) == 0;
    printf("repack both operands, %.1f MB read + written\n", bytes * 1e-6);
    printf("  gk_gemm_pack (%d blocks)   %7.1f us  %6.0f GB/s\n", blocks, t_pack * 1e6, bytes / t_pack * 1e-9);
    printf("  gk_gemm_pack, aligned rows %7.1f us  %6.0f GB/s\n", t_pack_aligned * 1e6, bytes / t_pack_aligned * 1e-9);
    printf("  simple V%d, %d word(s) a thread %7.1f us  %6.0f GB/s  %s\n", V, PW, t_simple * 1e6, bytes / t_simple * 1e-9,
           same ? "bitwise equal to gk_gemm_pack" : "MISMATCH");
    printf("  cudaMemcpy2DAsync x 2      %7.1f us  %6.0f GB/s\n", t_2d * 1e6, bytes / t_2d * 1e-9);
    printf("  cudaMemcpyAsync same bytes %7.1f us  %6.0f GB/s\n", t_copy * 1e6, bytes / t_copy * 1e-9);
    return 0;
}
