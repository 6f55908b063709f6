// The 128 x 256 x 32 mma.sync tile fed by TMA instead of cp.async (the experiment that became
// gk_gemm.cuh's TMA-fed twins, VEC 2), beside the cp.async kernel at 4096^3 in the four layouts
// and 8192^3 NT (the sweeps' memset flush before each launch), with its output compared bit for
// bit with the cp.async kernel's (same k order, so the same sums) on
// the timed shapes and on an odd one whose edges TMA zero-fills. One thread of the block issues
// a k-tile's boxes after the barrier that frees its slot; every thread waits on the slot's
// mbarrier where the cp.async loop waits on its group. The tile layouts are gk_gemm_smem_off's:
// K-major rows of 64 bytes are TMA's 64-byte swizzle, MN-major [32][64] panels its 128-byte one.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_mma_tma_probe.cu
// -DTMA_STAGES=n: the pipeline depth (default 4). -DTWN=32: 16 warps of 64 x 32. -DTMA_EARLY: a
// k-tile's boxes issued at its first k-step instead of its second. Timing ablations (D wrong, so the bit check fails): -DTMA_NO_WAIT
// (no wait for the boxes but the first and last) and -DTMA_NO_BARRIER (no block barrier a k-tile).
#define GK_GEMM_WG_CONFIGS(X)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

#ifndef TMA_STAGES
#define TMA_STAGES 4
#endif
#ifndef TWN
#define TWN 64 /* warp tile 64 x TWN: 64 (8 warps) or 32 (16 warps, 4 a scheduler) */
#endif
#define TTHREADS (2 * (256 / TWN) * 32)
#define TBM 128
#define TBN 256
#define TBK 32
#define TSTAGE ((TBM + TBN) * TBK * 2)
#define TSMEM (TMA_STAGES * TSTAGE + 8 * TMA_STAGES)

// One k-tile's boxes into its slot (thread 0 alone).
static __device__ __forceinline__ void tma_issue(const CUtensorMap *ma, const CUtensorMap *mb, unsigned st, unsigned bar,
                                                 int kc, int m0, int n0, int a_kmaj, int b_kmaj)
{
    gk_mbar_arrive_expect_tx_s(bar, TSTAGE);
    if (a_kmaj) gk_tma_load_2d_s(st, ma, bar, kc, m0);
    else
        for (int q = 0; q < TBM / 64; q++) gk_tma_load_2d_s(st + q * TBK * 128, ma, bar, m0 + q * 64, kc);
    st += TBM * TBK * 2;
    if (b_kmaj) gk_tma_load_2d_s(st, mb, bar, kc, n0);
    else
        for (int q = 0; q < TBN / 64; q++) gk_tma_load_2d_s(st + q * TBK * 128, mb, bar, n0 + q * 64, kc);
}

static __device__ __forceinline__ void tma_run(const gk_gemm_args *p, const CUtensorMap *ma, const CUtensorMap *mb, int ta,
                                               int tb, float *acc)
{
    extern __shared__ uint4 gk_gemm_smem[];
    char *smem = (char *)gk_gemm_smem; /* 1024-aligned where the block has no static shared memory */
    const unsigned s0 = gk_smem_addr(smem), bars = s0 + TMA_STAGES * TSTAGE;
    const int stages = TMA_STAGES, bm = TBM, bn = TBN, bk = TBK, wm = 64, wn = TWN, mi = 4, ni = TWN / 8, ksteps = 2;
    const int warp = threadIdx.x >> 5, wm0 = warp / (bn / wn) * wm, wn0 = warp % (bn / wn) * wn;
    const int a_bytes = bm * bk * 2, a_kmaj = !ta, b_kmaj = tb;
    int tm, tn;
    gk_gemm_tile(p, &tm, &tn);
    const int m0 = tm * bm, n0 = tn * bn, split = blockIdx.y;
    const int k_begin = split * p->k_per_split, k_end = min(p->k, k_begin + p->k_per_split);
    const int ktiles = (k_end - k_begin + bk - 1) / bk;
    /* each operand's ldmatrix row addresses, as shared-memory addresses of slot 0 for k-step 0
       (ka) and 1 (kb): K-major fragments i at + i * 1024 (16 rows of 64 bytes), k-step 1 one XOR
       away (the base is 1024-aligned); MN-major ones 4 panels' chunks, k-step 1 16 rows of 128
       bytes on. Kept opaque: ptxas otherwise recomputes them from the thread index every k-tile. */
    int oa[8], ob[8];
    gk_gemm_frag_offsets(oa, a_kmaj, wm0, mi, 1, bk);
    gk_gemm_frag_offsets(ob, b_kmaj, wn0, ni / 2, 0, bk);
    unsigned aa[4], ab[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        aa[i] = s0 + oa[i];
        ab[i] = s0 + a_bytes + ob[i];
        asm volatile("mov.b32 %0, %0;" : "+r"(aa[i]));
        asm volatile("mov.b32 %0, %0;" : "+r"(ab[i]));
    }
    const unsigned ka0 = aa[0], ka1 = aa[0] ^ 32, kb0 = ab[0], kb1 = ab[0] ^ 32;
#pragma unroll
    for (int i = 0; i < mi * ni * 4; i++) acc[i] = 0.0f;
    if (threadIdx.x == 0) {
        if (s0 & 1023) __trap();
        for (int s = 0; s < stages; s++) gk_mbar_init(smem + stages * TSTAGE + 8 * s, 1);
        gk_mbar_init_fence();
        for (int s = 0; s < stages - 1 && s < ktiles; s++)
            tma_issue(ma, mb, s0 + s * TSTAGE, bars + 8 * s, k_begin + s * bk, m0, n0, a_kmaj, b_kmaj);
    }
    __syncthreads();
    gk_mbar_wait_s(bars, 0);
    unsigned af[2][4 * 8], bf[2][4 * 8];
#define TMA_FRAGS(f, g, so, ks)                                                                                    \
    do {                                                                                                           \
        _Pragma("unroll") for (int i = 0; i < 4; i++) {                                                            \
            if (a_kmaj) gk_ldmatrix_x4_s(f + i * 4, ((ks) ? ka1 : ka0) + (so) + i * 1024);                          \
            else gk_ldmatrix_x4_trans_s(f + i * 4, aa[i] + (so) + (ks) * 2048);                                     \
            if (i >= ni / 2) continue;                                                                             \
            if (b_kmaj) gk_ldmatrix_x4_s(g + i * 4, ((ks) ? kb1 : kb0) + (so) + i * 1024);                          \
            else gk_ldmatrix_x4_trans_s(g + i * 4, ab[i] + (so) + (ks) * 2048);                                     \
        }                                                                                                          \
    } while (0)
    TMA_FRAGS(af[0], bf[0], 0u, 0);
    for (int kt = 0; kt < ktiles; kt++) {
        const unsigned so = (unsigned)(kt % stages) * TSTAGE;
#pragma unroll
        for (int ks = 0; ks < ksteps; ks++) {
            const int cur = ks & 1, nxt = cur ^ 1;
#ifdef TMA_EARLY
            if (ks == 0 && warp == 0 && kt + stages - 1 < ktiles && gk_elect_one()) {
#else
            if (ks == 1 && warp == 0 && kt + stages - 1 < ktiles && gk_elect_one()) {
#endif
                /* into the slot of tile kt - 1, which every warp left before the last barrier */
                const int kl = kt + stages - 1;
                tma_issue(ma, mb, s0 + (kl % stages) * TSTAGE, bars + 8 * (kl % stages), k_begin + kl * bk, m0, n0,
                          a_kmaj, b_kmaj);
            }
            if (ks == ksteps - 1) {
                const int kn = kt + 1;
#ifdef TMA_NO_WAIT
                if (kn == ktiles - 1) /* the last boxes only: none in flight when the block ends */
#else
                if (kn < ktiles)
#endif
                    gk_mbar_wait_s(bars + 8 * (kn % stages), (kn / stages) & 1);
#ifndef TMA_NO_BARRIER
                __syncthreads(); /* every warp done with tile kt - 1's slot before it is refilled */
#endif
                TMA_FRAGS(af[nxt], bf[nxt], (unsigned)(kn % stages) * TSTAGE, 0);
            } else {
                TMA_FRAGS(af[nxt], bf[nxt], so, ks + 1);
            }
            gk_gemm_mma_tile(acc, af[cur], bf[cur], GK_BF16, mi, ni);
        }
    }
#undef TMA_FRAGS
    gk_gemm_mma_epilogue(p, acc, GK_BF16, bm, bn, wm, wn, TTHREADS, stages * TSTAGE, m0, n0, wm0, wn0, split);
}

#define TMA_KERNEL(name, TA, TB)                                                                                      \
    static __global__ void __launch_bounds__(TTHREADS, 1)                                                              \
        name(const __grid_constant__ gk_gemm_args p, const __grid_constant__ CUtensorMap ma,                           \
             const __grid_constant__ CUtensorMap mb)                                                                   \
    {                                                                                                                  \
        float acc[4 * (TWN / 8) * 4];                                                                                  \
        tma_run(&p, &ma, &mb, TA, TB, acc);                                                                            \
    }
TMA_KERNEL(tma_nn, 0, 0)
TMA_KERNEL(tma_nt, 0, 1)
TMA_KERNEL(tma_tn, 1, 0)
TMA_KERNEL(tma_tt, 1, 1)
typedef void (*tma_kernel)(gk_gemm_args, CUtensorMap, CUtensorMap);
static const tma_kernel tma_kernels[4] = {tma_nn, tma_nt, tma_tn, tma_tt};

// An operand's map: K-major (rows x K) boxes of 32 k by `rows` rows, 64-byte swizzle; MN-major
// (K x MN) boxes of 64 mn by 32 k, 128-byte swizzle.
static void tma_map(CUtensorMap *map, const void *x, int64_t mn, int64_t k, int64_t ld, int kmaj, int rows)
{
    const int64_t dims_k[2] = {k, mn}, dims_mn[2] = {mn, k}, strides[1] = {ld};
    const int box_k[2] = {TBK, rows}, box_mn[2] = {64, TBK};
    CK(gk_tma_encode("probe", map, x, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, kmaj ? dims_k : dims_mn, strides,
                     kmaj ? box_k : box_mn, kmaj ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B));
}

static cudaError_t tma_gemm(void *d, const void *a, const void *b, int64_t m, int64_t n, int64_t k, int ta, int tb)
{
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    gk_gemm_args p = gk_gemm_args_of(d, GK_BF16, n, NULL, 0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE);
    p.a = a;
    p.b = b;
    p.lda = lda;
    p.ldb = ldb;
    p.k_per_split = (int)gk_round_up(k, TBK);
    p.tiles_m = (int)gk_ceil_div(m, TBM);
    p.tiles_n = (int)gk_ceil_div(n, TBN);
    CUtensorMap ma, mb;
    tma_map(&ma, a, m, k, lda, !ta, TBM);
    tma_map(&mb, b, n, k, ldb, tb, TBN);
    const int layout = (ta ? 2 : 0) + (tb ? 1 : 0);
    static int set[4];
    if (!set[layout]) {
        CK(cudaFuncSetAttribute((const void *)tma_kernels[layout], cudaFuncAttributeMaxDynamicSharedMemorySize, TSMEM));
        set[layout] = 1;
    }
    tma_kernels[layout]<<<dim3((unsigned)(p.tiles_m * p.tiles_n), 1), TTHREADS, TSMEM>>>(p, ma, mb);
    return cudaGetLastError();
}

static cudaError_t shipped_gemm(int cfg, void *d, const void *a, const void *b, int64_t m, int64_t n, int64_t k, int ta,
                                int tb)
{
    gk_gemm_tma_off = 1; /* the cp.async kernel, where the configuration has a TMA-fed twin too */
    return gk_gemm_ex(cfg, 1, GK_BF16, d, GK_BF16, n, a, ta ? m : k, ta, b, tb ? k : n, tb, NULL, 0, NULL, m, n, k, 1.0f,
                      0.0f, GK_ACT_NONE, NULL, 0, 0);
}

// 1 when both kernels give the same bits on (m, n, k, layout); prints the first difference.
static int same_bits(const SweepGemmBuffers &b, int cfg, int64_t m, int64_t n, int64_t k, int ta, int tb)
{
    const size_t bytes = (size_t)m * n * 2;
    char *d2 = b.ws;
    CK(cudaMemset(b.d, 0xff, bytes));
    CK(cudaMemset(d2, 0x7f, bytes));
    CK(shipped_gemm(cfg, b.d, b.a, b.b, m, n, k, ta, tb));
    CK(tma_gemm(d2, b.a, b.b, m, n, k, ta, tb));
    CK(cudaDeviceSynchronize());
    unsigned short *h1 = (unsigned short *)malloc(bytes), *h2 = (unsigned short *)malloc(bytes);
    CK(cudaMemcpy(h1, b.d, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h2, d2, bytes, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (size_t i = 0; i < (size_t)m * n && ok; i++)
        if (h1[i] != h2[i]) {
            printf("MISMATCH %lldx%lldx%lld %c%c at row %lld col %lld: %04x vs %04x\n", (long long)m, (long long)n,
                   (long long)k, ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)(i / n), (long long)(i % n), h1[i], h2[i]);
            ok = 0;
        }
    free(h1);
    free(h2);
    return ok;
}

int main(int argc, char **argv)
{
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)8192 * 8192 * 2);
    const int cfg = config_named("128x256x32_w64x64");
    int bad = 0;
    for (int l = 0; l < 4; l++) {
        bad += !same_bits(m, cfg, 4096, 4096, 4096, l >> 1, l & 1);
        bad += !same_bits(m, cfg, 1000, 1304, 1000, l >> 1, l & 1);
    }
    printf("%s bit-identical to the shipped kernel: %s\n", argc > 1 ? argv[1] : "", bad ? "NO" : "yes (8 checks)");
    const struct {
        int64_t n;
        int ta, tb;
    } rows[] = {{4096, 0, 1}, {4096, 0, 0}, {4096, 1, 0}, {4096, 1, 1}, {8192, 0, 1}};
    for (const auto &r : rows) {
        const int64_t n = r.n;
        const double t0 = median_s([&] { return shipped_gemm(cfg, m.d, m.a, m.b, n, n, n, r.ta, r.tb); });
        const double t1 = median_s([&] { return tma_gemm(m.d, m.a, m.b, n, n, n, r.ta, r.tb); });
        printf("%s %c%c %5lld^3: shipped %8.1f us %6.1f TFLOP/s   tma s%d w64x%d %8.1f us %6.1f TFLOP/s  %.3fx\n",
               argc > 1 ? argv[1] : "", r.ta ? 'T' : 'N', r.tb ? 'T' : 'N', (long long)n, t0 * 1e6,
               2.0 * n * n * n / t0 * 1e-12, TMA_STAGES, TWN, t1 * 1e6, 2.0 * n * n * n / t1 * 1e-12, t0 / t1);
    }
    return bad ? 1 : 0;
}
