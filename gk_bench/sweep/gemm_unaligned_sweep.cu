// Rejected candidate (measured 2195 us against 286 us repacked; RESULTS.md, "The odd shape") for
// operands whose rows are not 16-byte aligned (a leading dimension that is not a multiple of 8):
// the wgmma kernel with a producer warpgroup that reads both operands with ordinary 16-byte loads
// and shifts them into the swizzled stages in registers, instead of the dispatcher's repack into
// the workspace. The repack inside the launch, the other rejected form, is
// gemm_pack_in_kernel.patch (it replaces this file with its own sweep). Checked against a CPU
// reference on odd shapes in NN and NT, then timed at 4095 x 4097 x 4093 next to the dispatcher
// (repacked) and the same shape with aligned leading dimensions. Plain nvcc:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_unaligned_sweep.cu -lcublas -o gemm_unaligned_sweep
//
// The producer: an operand tile is a list of 128-byte segments (a K-major row's 64 k values, or
// an MN-major k-row's 64 values of one panel), segment i landing at byte i * 128 of the stage
// with the 128-byte swizzle, exactly where TMA puts it. Segment i's source row is i mod 8 plus a
// multiple of 8 from the tile's first, so its offset within a 16-byte word, (row ld) mod 8
// values, is the same for every segment of one class i mod 8. Each producer warp takes two
// classes, so a warp's shift is uniform: a branch, then 4 funnel shifts per 16 bytes. Nine lanes
// per segment: lane j loads source word j (the ninth holds the spill past the 8th), takes word
// j + 1 from the lane above, and writes output chunk j. Words holding no value of the segment
// are not loaded (no read leaves the operand); values past K, M or N are written as zeros.
// Every producer thread arrives on the stage's full barrier after its stores and a proxy fence.
// No setmaxnreg: the producer needs registers for ~30 loads in flight, and the consumers fit in
// the launch's 168.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include <cmath>
#include <cstring>
#include <vector>
#include <cublas_v2.h>

#include "gk_bench/sweep/sweep_util.h"

#define UL_BM 256
#define UL_BN 128
#define UL_STAGES 4
#define UL_THREADS 384

/* A segment's source: the address of its first value, and how many of its 64 values lie inside
   the operand. */
struct UlSeg {
    const unsigned short *src;
    int cnt; /* values of the segment inside the operand (0..64) */
};

/* Segment i of a K-major tile (rows row0 + i, columns k .. k + 63) or an MN-major one (k-row
   k + i % 64, columns col0 + 64 (i / 64) .. + 63). */
static __device__ __forceinline__ UlSeg ul_seg(const unsigned short *x, int64_t ld, int kmaj, int i, int row0, int col0,
                                               int k, int rows, int cols, int kdim)
{
    UlSeg s;
    if (kmaj) {
        const int r = row0 + i;
        s.src = x + (int64_t)min(r, rows - 1) * ld + k;
        s.cnt = r < rows ? max(0, min(64, kdim - k)) : 0;
    } else {
        const int kr = k + i % 64, c = col0 + 64 * (i / 64);
        s.src = x + (int64_t)min(kr, kdim - 1) * ld + c;
        s.cnt = kr < kdim ? max(0, min(64, cols - c)) : 0;
    }
    return s;
}

/* Word j of a segment (the j-th aligned 16-byte word from the one holding its first value), or
   zeros when that word holds none of its values. */
static __device__ __forceinline__ uint4 ul_load(UlSeg s, int j, int live)
{
    const char *b = (const char *)s.src;
    const int off = (int)((size_t)b & 15);
    const uint4 *w = (const uint4 *)(b - off) + j;
    return live && s.cnt > 0 && (const char *)w < b + 2 * s.cnt ? *w : make_uint4(0, 0, 0, 0);
}

/* Output chunk j of segment i from words j (lo) and j + 1 (hi), shifted by the segment's offset
   in its word, values past s.cnt zeroed, at its swizzled place in the stage. */
static __device__ __forceinline__ void ul_store(char *dst, int i, UlSeg s, int j, int live, uint4 lo, uint4 hi)
{
    if (!live || j >= 8) return;
    const int off = (int)((size_t)s.src & 15), q = off >> 2, sh = (off & 3) * 8;
    const unsigned x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    unsigned o[4];
    switch (q) { /* uniform across the warp: one class */
    case 0:
        for (int e = 0; e < 4; e++) o[e] = __funnelshift_r(x[e], x[e + 1], sh);
        break;
    case 1:
        for (int e = 0; e < 4; e++) o[e] = __funnelshift_r(x[e + 1], x[e + 2], sh);
        break;
    case 2:
        for (int e = 0; e < 4; e++) o[e] = __funnelshift_r(x[e + 2], x[e + 3], sh);
        break;
    default:
        for (int e = 0; e < 4; e++) o[e] = __funnelshift_r(x[e + 3], x[min(e + 4, 7)], sh);
        break;
    }
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int keep = s.cnt - 8 * j - 2 * e;
        o[e] = keep >= 2 ? o[e] : keep == 1 ? o[e] & 0xffffu : 0u;
    }
    *(uint4 *)(dst + i * 128 + ((j ^ (i & 7)) << 4)) = make_uint4(o[0], o[1], o[2], o[3]);
}

/* An operand of a stage: where it goes and what it reads. */
struct UlOp {
    char *dst;
    const unsigned short *x;
    int64_t ld;
    int kmaj, row0, col0, rows, cols;
};

/* A producer warp's share of class h of both operand tiles (classes 2 w + h; A of NA segments,
   B of NB): all loads first (rounds of 3 segments), then the shifts and stores. Two calls a
   stage (h = 0, 1) keep ~70 registers of loads in flight. */
#define UL_ROUNDS(nseg) (((nseg) / 8 + 2) / 3)
template <int NA, int NB>
static __device__ __forceinline__ void ul_class(UlOp oa, UlOp ob, int k, int kdim, int h)
{
    constexpr int RA = UL_ROUNDS(NA), RB = UL_ROUNDS(NB);
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3, g = lane / 9, j = lane % 9, c = 2 * w + h;
    uint4 va[RA], vb[RB]; /* only the loaded words stay live; a segment's address is recomputed */
#pragma unroll
    for (int r = 0; r < RA; r++) {
        const int n = 3 * r + g, live = g < 3 && n < NA / 8;
        va[r] = ul_load(ul_seg(oa.x, oa.ld, oa.kmaj, live ? c + 8 * n : c, oa.row0, oa.col0, k, oa.rows, oa.cols, kdim), j, live);
    }
#pragma unroll
    for (int r = 0; r < RB; r++) {
        const int n = 3 * r + g, live = g < 3 && n < NB / 8;
        vb[r] = ul_load(ul_seg(ob.x, ob.ld, ob.kmaj, live ? c + 8 * n : c, ob.row0, ob.col0, k, ob.rows, ob.cols, kdim), j, live);
    }
#pragma unroll
    for (int r = 0; r < RA; r++) {
        const int n = 3 * r + g, live = g < 3 && n < NA / 8, i = live ? c + 8 * n : c;
        const uint4 up = make_uint4(__shfl_down_sync(0xffffffffu, va[r].x, 1), __shfl_down_sync(0xffffffffu, va[r].y, 1),
                                    __shfl_down_sync(0xffffffffu, va[r].z, 1), __shfl_down_sync(0xffffffffu, va[r].w, 1));
        ul_store(oa.dst, i, ul_seg(oa.x, oa.ld, oa.kmaj, i, oa.row0, oa.col0, k, oa.rows, oa.cols, kdim), j, live, va[r], up);
    }
#pragma unroll
    for (int r = 0; r < RB; r++) {
        const int n = 3 * r + g, live = g < 3 && n < NB / 8, i = live ? c + 8 * n : c;
        const uint4 up = make_uint4(__shfl_down_sync(0xffffffffu, vb[r].x, 1), __shfl_down_sync(0xffffffffu, vb[r].y, 1),
                                    __shfl_down_sync(0xffffffffu, vb[r].z, 1), __shfl_down_sync(0xffffffffu, vb[r].w, 1));
        ul_store(ob.dst, i, ul_seg(ob.x, ob.ld, ob.kmaj, i, ob.row0, ob.col0, k, ob.rows, ob.cols, kdim), j, live, vb[r], up);
    }
}

template <int TB>
static __global__ void __launch_bounds__(UL_THREADS, 1) ul_kernel(const __grid_constant__ gk_gemm_args p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint4 ul_smem_raw[];
    char *smem = gk_smem_align_1024(ul_smem_raw);
    const int bm = UL_BM, bn = UL_BN, stages = UL_STAGES;
    const int a_bytes = bm * GK_GEMM_WG_BK * 2, stage_bytes = a_bytes + bn * GK_GEMM_WG_BK * 2;
    unsigned long long *full = (unsigned long long *)(smem + stages * stage_bytes), *empty = full + stages;
    const int tiles = p.tiles_m * p.tiles_n, items = tiles; /* no split-K here */
    const int wg = threadIdx.x >> 7;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            gk_mbar_init(full + s, 128);
            gk_mbar_init(empty + s, 2);
        }
        gk_mbar_init_fence();
    }
    __syncthreads();
    int it = 0;
    if (wg == 0) {
        for (int item = blockIdx.x; item < items; item += gridDim.x) {
            int m0, n0, split, k_begin, ktiles;
            gk_gemm_wg_item(&p, item, tiles, bm, bn, &m0, &n0, &split, &k_begin, &ktiles);
            for (int kt = 0; kt < ktiles; kt++, it++) {
                const int s = it % stages, k = k_begin + kt * GK_GEMM_WG_BK;
                if (it >= stages) gk_mbar_wait(empty + s, (it / stages - 1) & 1);
                char *sa = smem + s * stage_bytes, *sb = sa + a_bytes;
                const UlOp oa = {sa, (const unsigned short *)p.a, p.lda, 1, m0, 0, p.m, p.k};
                const UlOp ob = TB ? UlOp{sb, (const unsigned short *)p.b, p.ldb, 1, n0, 0, p.n, p.k}
                                   : UlOp{sb, (const unsigned short *)p.b, p.ldb, 0, 0, n0, p.k, p.n};
                for (int h = 0; h < 2; h++) ul_class<UL_BM, UL_BN>(oa, ob, k, p.k, h);
                gk_fence_proxy_async(); /* the stores, then wgmma's reads */
                gk_mbar_arrive(full + s);
            }
        }
        return;
    }
    /* the consumers: gk_gemm_wg_run's, A K-major */
    const int wr = wg - 1, nacc = bm * bn / 256;
    const int a_step = 2, b_step = TB ? 2 : 128;
    float acc[UL_BM * UL_BN / 256];
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
        int m0, n0, split, k_begin, ktiles;
        gk_gemm_wg_item(&p, item, tiles, bm, bn, &m0, &n0, &split, &k_begin, &ktiles);
#pragma unroll
        for (int i = 0; i < nacc; i++) acc[i] = 0.0f;
        gk_wgmma_fence_regs(acc, nacc);
        for (int kt = 0; kt < ktiles; kt++, it++) {
            const int s = it % stages;
            gk_mbar_wait(full + s, (it / stages) & 1);
            const char *sa = smem + s * stage_bytes, *sb = sa + a_bytes;
            const unsigned long long db = gk_wgmma_desc_sw128(sb, TB ? 16 : 8192);
            gk_wgmma_fence();
#pragma unroll
            for (int ms = 0; ms < bm / 128; ms++) {
                const unsigned long long da = gk_wgmma_desc_sw128(sa + (wr * bm / 128 + ms) * 8192, 16);
#pragma unroll
                for (int kk = 0; kk < GK_GEMM_WG_BK / 16; kk++)
                    gk_wgmma_m64k16(acc + ms * (bn / 2), da + a_step * kk, db + b_step * kk, GK_BF16, bn, 0, !TB);
            }
            gk_wgmma_commit();
            gk_wgmma_wait_1();
            gk_wgmma_fence_regs(acc, nacc);
            if (kt > 0 && (threadIdx.x & 127) == 0) gk_mbar_arrive(empty + (it - 1) % stages);
        }
        gk_wgmma_wait_0();
        gk_wgmma_fence_regs(acc, nacc);
        if ((threadIdx.x & 127) == 0) gk_mbar_arrive(empty + (it - 1) % stages);
        gk_gemm_wg_store(&p, acc, (float *)smem, 0, wr, bm, bn, m0, n0, split);
    }
#endif
}

static cudaError_t ul_gemm(void *d, const void *a, int64_t lda, const void *b, int64_t ldb, int tb, int m, int n, int k)
{
    gk_gemm_args p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.b = b;
    p.d = d;
    p.lda = lda;
    p.ldb = ldb;
    p.ldd = n;
    p.m = m;
    p.n = n;
    p.k = k;
    p.k_per_split = (int)gk_round_up(k, GK_GEMM_WG_BK);
    p.tiles_m = (int)gk_ceil_div(m, UL_BM);
    p.tiles_n = (int)gk_ceil_div(n, UL_BN);
    p.d_dtype = GK_BF16;
    p.act = GK_ACT_NONE;
    p.alpha = 1.0f;
    p.beta = 0.0f;
    const int smem = gk_gemm_wg_smem_bytes_c(UL_BM, UL_BN, UL_STAGES, 0);
    const void *kern = tb ? (const void *)ul_kernel<1> : (const void *)ul_kernel<0>;
    static int set[2];
    if (!set[tb]) {
        const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
        set[tb] = 1;
    }
    const unsigned grid = (unsigned)(p.tiles_m * p.tiles_n);
    if (tb) ul_kernel<1><<<grid, UL_THREADS, smem>>>(p);
    else ul_kernel<0><<<grid, UL_THREADS, smem>>>(p);
    return cudaGetLastError();
}

static float host_bf16(const void *q, int64_t i) { return gk_bf16_to_f32(((const gk_bf16 *)q)[i]); }

// Max error over the row's magnitude of D (bf16, [m, n]) against a double reference.
static double check(int tb, int m, int n, int k, int64_t lda, int64_t ldb, const char *a, const char *b, char *d)
{
    CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
    CK(ul_gemm(d, a, lda, b, ldb, tb, m, n, k));
    CK(cudaDeviceSynchronize());
    const size_t na = (size_t)(m - 1) * lda + k, nb = tb ? (size_t)(n - 1) * ldb + k : (size_t)(k - 1) * ldb + n;
    std::vector<unsigned short> ha(na), hb(nb), hd((size_t)m * n);
    CK(cudaMemcpy(ha.data(), a, na * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), b, nb * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hd.data(), d, hd.size() * 2, cudaMemcpyDeviceToHost));
    double worst = 0;
    const int step_i = m > 300 ? 97 : 1; // sampled rows for the large shape
    for (int i = 0; i < m; i += step_i)
        for (int jj = 0; jj < n; jj++) {
            double s = 0, mag = 0;
            for (int l = 0; l < k; l++) {
                const double x = host_bf16(ha.data(), (int64_t)i * lda + l);
                const double y = host_bf16(hb.data(), tb ? (int64_t)jj * ldb + l : (int64_t)l * ldb + jj);
                s += x * y;
                mag += fabs(x * y);
            }
            const double e = fabs(host_bf16(hd.data(), (int64_t)i * n + jj) - s) / (mag + 1e-30);
            if (!(e <= worst)) worst = e != e ? INFINITY : e;
        }
    return worst;
}

int main()
{
    const size_t G = (size_t)1 << 30;
    const SweepGemmBuffers bufs = sweep_gemm_buffers(G);
    char *a = bufs.a, *b = bufs.b, *d = bufs.d, *ws = bufs.ws;
    // m, n, k, lda, ldb (0: packed), tb, a offset in values (2-byte aligned base)
    const int shapes[][7] = {{1, 1, 1, 0, 0, 0, 0},        {17, 33, 65, 0, 0, 0, 0},     {17, 33, 65, 0, 0, 1, 1},
                             {127, 255, 63, 0, 0, 1, 0},   {300, 200, 1000, 1003, 0, 0, 3}, {300, 200, 1000, 0, 1001, 1, 0},
                             {257, 129, 130, 131, 133, 0, 5}, {4095, 4097, 4093, 0, 0, 0, 0}, {4095, 4097, 4093, 0, 0, 1, 0}};
    int bad = 0;
    for (const auto &s : shapes) {
        const int m = s[0], n = s[1], k = s[2], tb = s[5];
        const int64_t lda = s[3] ? s[3] : k, ldb = s[4] ? s[4] : (tb ? k : n);
        const double e = check(tb, m, n, k, lda, ldb, a + 2 * s[6], b, d);
        printf("%dx%dx%d %s lda %lld ldb %lld a+%d: %.3g%s\n", m, n, k, tb ? "NT" : "NN", (long long)lda, (long long)ldb,
               s[6], e, e < 8e-3 ? "" : "  FAIL");
        bad += !(e < 8e-3);
    }
    const double f = 2.0 * 4095 * 4097 * 4093;
    for (int tb = 0; tb < 2; tb++) {
        const int64_t lda = 4093, ldb = tb ? 4093 : 4097;
        const double tu = median_s([&] { return ul_gemm(d, a, lda, b, ldb, tb, 4095, 4097, 4093); });
        const double tr = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, 4097, a, lda, 0, b, ldb, tb, NULL, 0, NULL, 4095, 4097, 4093, 1.0f,
                              0.0f, GK_ACT_NONE, ws, G, 0);
        });
        const double ta = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, 4097, a, 4096, 0, b, tb ? 4096 : 4160, tb, NULL, 0, NULL, 4095,
                              4097, 4093, 1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
        });
        const double t4 = median_s([&] {
            return gk_gemm_ex(-1, 0, GK_BF16, d, GK_BF16, 4096, a, 4096, 0, b, 4096, tb, NULL, 0, NULL, 4096, 4096, 4096,
                              1.0f, 0.0f, GK_ACT_NONE, ws, G, 0);
        });
        const double f4 = 2.0 * 4096 * 4096 * 4096;
        printf("4095x4097x4093 N%c: in-kernel loads %.1f us %.1f TFLOP/s (%.3fx of 4096^3), repacked %.1f us %.1f, "
               "aligned lds %.1f us %.1f; 4096^3 %.1f us %.1f\n",
               tb ? 'T' : 'N', tu * 1e6, f / tu * 1e-12, (f / tu) / (f4 / t4), tr * 1e6, f / tr * 1e-12, ta * 1e6,
               f / ta * 1e-12, t4 * 1e6, f4 / t4 * 1e-12);
    }
    return bad != 0;
}
