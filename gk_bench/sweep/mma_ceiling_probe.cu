// What the mma.sync 128 x 256 tile's warps can reach with nothing to wait for: 8 warps a block,
// one block an SM (2 warps a scheduler), each warp the 64 x 64 warp tile's 32 m16n8k16 MMAs a
// k-step on fragments that never change, plus in turn what the real k-loop adds to them:
//   mma       the MMAs alone (fragments loaded once)
//   ldsm      16 ldmatrix.x4 a k-tile of 2 k-steps, double-buffered like gk_gemm_mma_run
//   ldsm_bar  the same and a block barrier a k-tile
//   ldsm_bulk the ldmatrix loop while one elected lane of warp 0 brings a k-tile's 24 KB into the
//             slot three k-tiles ahead by bulk copies (from L2: a 6 MB buffer), as the TMA-fed
//             kernel does; only that lane waits, for the copy it reuses a slot of
//   ldsm_bulk_wait      and every warp waits on the slot's mbarrier before its reads (no barrier)
//   ldsm_bulk_wait_bar  and a block barrier a k-tile: the TMA-fed kernel's k-loop, shapes aside
//   mma_bulk  the MMAs alone while the copies land (are the copies' arrival the limit by themselves?)
//   ldsm_bulk8, mma_bulk8   ldsm_bulk and mma_bulk with 8 slots, 7 k-tiles in flight
// and the same tile as 16 warps of 64 x 32 (4 a scheduler, 64 accumulators a thread, 1.5x the
// ldmatrix bytes a MMA). Reported as TFLOP/s of the MMAs and the share of 646 (the H200's mma.sync ceiling, ANCHORS.md).
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/mma_ceiling_probe.cu
#define GK_GEMM_WG_CONFIGS(X)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

#define CEIL_SMEM (8 * 24576 + 64) /* one block an SM: up to 8 slots of 24 KB and their mbarriers */
#define CEIL_SRC_BYTES (6 << 20)

static __device__ __forceinline__ void ceil_frags(unsigned *af, unsigned *bf, const char *s, const int *oa, const int *ob,
                                                  int kk, int nfr)
{
    gk_gemm_frags(af, s, oa, 1, kk, 4);
    gk_gemm_frags(bf, s + 128 * 32 * 2, ob, 1, kk, nfr);
}

// mode 0: MMAs alone; 1: with the ldmatrix loads; 2: and a barrier a k-tile; 3: the loads and
// bulk copies into the slots; 4: and a wait on each slot; 5: and a barrier a k-tile; 6: the MMAs
// and the copies; 7, 8: 3 and 6 with 8 slots. WN: 64 or 32.
static __device__ __forceinline__ void ceil_body(int mode, int ktiles, float *out, int wn, const char *src)
{
    extern __shared__ uint4 smem4[];
    char *smem = (char *)smem4;
    const int threads = 128 / 64 * (256 / wn) * 32, ni = wn / 8;
    for (int i = threadIdx.x; i < 8 * 24576 / 16; i += threads) smem4[i] = make_uint4(i * 2654435761u, i, ~i, i ^ 0x5555u);
    char *bars = smem + 8 * 24576;
    const int copier = mode >= 3 && threadIdx.x < 32 && gk_elect_one();
    if (copier) {
        for (int s = 0; s < 8; s++) gk_mbar_init(bars + s * 8, 1);
        gk_mbar_init_fence();
    }
    __syncthreads();
    const int warp = threadIdx.x >> 5, wm0 = warp / (256 / wn) * 64, wn0 = warp % (256 / wn) * wn;
    int oa[8], ob[8];
    gk_gemm_frag_offsets(oa, 1, wm0, 4, 1, 32);
    gk_gemm_frag_offsets(ob, 1, wn0, ni / 2, 0, 32);
    float acc[128];
#pragma unroll
    for (int i = 0; i < 4 * ni * 4; i++) acc[i] = 0.0f;
    unsigned af[2][16], bf[2][16];
    ceil_frags(af[0], bf[0], smem, oa, ob, 0, ni / 2);
    ceil_frags(af[1], bf[1], smem, oa, ob, 16, ni / 2);
    if (mode >= 3) {
        /* slot (kt + ahead) % slots is filled at k-tile kt, as the kernel issues; the copier
           waits for the copy that last filled it before reusing it */
        const int slots = mode >= 7 ? 8 : 4, ahead = slots - 1, reads = mode != 6 && mode != 8;
        const char *from = src + (size_t)blockIdx.x * 24576 * 8 % (CEIL_SRC_BYTES - 24576 * 8);
#define CEIL_COPY(f)                                                                                   \
    do {                                                                                               \
        char *bar_ = bars + ((f) & (slots - 1)) * 8, *dst_ = smem + ((f) & (slots - 1)) * 24576;       \
        gk_mbar_arrive_expect_tx(bar_, 24576);                                                         \
        gk_bulk_load(dst_, from + ((f) & 7) * 24576, 8192, bar_);                                      \
        gk_bulk_load(dst_ + 8192, from + ((f) & 7) * 24576 + 8192, 16384, bar_);                       \
    } while (0)
        if (copier)
            for (int f = 0; f < ahead; f++) CEIL_COPY(f);
        for (int kt = 0; kt < ktiles; kt++) {
            if (copier) {
                const int f = kt + ahead;
                if (f >= slots) gk_mbar_wait(bars + (f & (slots - 1)) * 8, (f / slots - 1) & 1);
                CEIL_COPY(f);
            }
            if (!reads) {
                gk_gemm_mma_tile(acc, af[0], bf[0], GK_BF16, 4, ni);
                gk_gemm_mma_tile(acc, af[1], bf[1], GK_BF16, 4, ni);
                continue;
            }
            ceil_frags(af[1], bf[1], smem + (kt & (slots - 1)) * 24576, oa, ob, 16, ni / 2);
            gk_gemm_mma_tile(acc, af[0], bf[0], GK_BF16, 4, ni);
            if ((mode == 4 || mode == 5) && kt + 1 < ktiles) gk_mbar_wait(bars + ((kt + 1) & (slots - 1)) * 8, ((kt + 1) / slots) & 1);
            if (mode == 5) __syncthreads();
            ceil_frags(af[0], bf[0], smem + ((kt + 1) & (slots - 1)) * 24576, oa, ob, 0, ni / 2);
            gk_gemm_mma_tile(acc, af[1], bf[1], GK_BF16, 4, ni);
        }
#undef CEIL_COPY
        /* the copies still in flight land before the block leaves */
        if (copier)
            for (int f = ktiles; f < ktiles + ahead; f++) gk_mbar_wait(bars + (f & (slots - 1)) * 8, (f / slots) & 1);
    } else if (mode == 0) {
        for (int kt = 0; kt < ktiles; kt++) {
            gk_gemm_mma_tile(acc, af[0], bf[0], GK_BF16, 4, ni);
            gk_gemm_mma_tile(acc, af[1], bf[1], GK_BF16, 4, ni);
        }
    } else {
        for (int kt = 0; kt < ktiles; kt++) {
            const char *s = smem + (kt & 3) * 24576;
            ceil_frags(af[1], bf[1], s, oa, ob, 16, ni / 2);
            gk_gemm_mma_tile(acc, af[0], bf[0], GK_BF16, 4, ni);
            if (mode == 2) __syncthreads();
            ceil_frags(af[0], bf[0], smem + ((kt + 1) & 3) * 24576, oa, ob, 0, ni / 2);
            gk_gemm_mma_tile(acc, af[1], bf[1], GK_BF16, 4, ni);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 4 * ni * 4; i++) sum += acc[i];
    if (sum == 1234.5f) out[threadIdx.x] = sum; /* never: keeps the MMAs */
}

static __global__ void __launch_bounds__(256, 1) ceil_w64x64(int mode, int ktiles, float *out, const char *src)
{
    ceil_body(mode, ktiles, out, 64, src);
}
static __global__ void __launch_bounds__(512, 1) ceil_w64x32(int mode, int ktiles, float *out, const char *src)
{
    ceil_body(mode, ktiles, out, 32, src);
}

int main(int argc, char **argv)
{
    int sms;
    CK(gk_sm_count(&sms));
    float *out;
    CK(cudaMalloc(&out, 4096));
    char *src;
    CK(cudaMalloc(&src, CEIL_SRC_BYTES));
    CK(cudaMemset(src, 0x3c, CEIL_SRC_BYTES));
    CK(cudaFuncSetAttribute((const void *)ceil_w64x64, cudaFuncAttributeMaxDynamicSharedMemorySize, CEIL_SMEM));
    CK(cudaFuncSetAttribute((const void *)ceil_w64x32, cudaFuncAttributeMaxDynamicSharedMemorySize, CEIL_SMEM));
    const char *names[9] = {"mma",      "ldsm",       "ldsm_bar",  "ldsm_bulk", "ldsm_bulk_wait", "ldsm_bulk_wait_bar",
                            "mma_bulk", "ldsm_bulk8", "mma_bulk8"};
    const int ktiles = 4096;
    for (int w = 0; w < 2; w++)
        for (int mode = 0; mode < (w == 0 ? 9 : 3); mode++) {
            const double t = median_s([&] {
                if (w == 0) ceil_w64x64<<<sms, 256, CEIL_SMEM>>>(mode, ktiles, out, src);
                else ceil_w64x32<<<sms, 512, CEIL_SMEM>>>(mode, ktiles, out, src);
                return cudaGetLastError();
            });
            const double flops = 2.0 * 128 * 256 * 32 * ktiles * sms;
            printf("%s %s %-18s %8.1f us %6.1f TFLOP/s %5.1f%% of 646\n", argc > 1 ? argv[1] : "",
                   w ? "16 warps of 64 x 32" : "8 warps of 64 x 64 ", names[mode], t * 1e6, flops / t * 1e-12,
                   flops / t * 1e-12 / 646 * 100);
        }
    return 0;
}
