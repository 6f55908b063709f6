/* gk_gemm_sm90.cuh - gk GEMM on Hopper v0.2: wgmma kernels fed by TMA, for gk_gemm.cuh's
   dispatcher. Part of gk_gemm.cuh, which includes it when GK_GEMM_SM90 is 1 (by default when
   nvcc targets compute capability 9.0): copy it beside gk_gemm.cuh and include gk_gemm.cuh.
   Its TMA maps come from gk_mma.cuh (CUtensorMap from <cuda.h>; the encoder is found through
   the runtime, no -lcuda). Its kernels have code in sm_90a images only (-gencode
   arch=compute_90a,code=sm_90a); the dispatcher uses them where the running image has it.

   HOW IT RUNS
     A block is a producer warpgroup (one thread issues the TMA copies) and two consumer
     warpgroups running wgmma with both operands in shared memory; STAGES k-tiles of 64 ring
     through shared memory with a "full" and an "empty" mbarrier each; the epilogue goes through
     shared memory into 16-byte stores (gk_gemm_wg_store). Swapped tiles (BM 16 or 64, BN 128)
     compute D^T so that decode-sized M fills the MMAs' N; 64 x 64 and 64 x 32 tiles give each
     consumer the whole tile on every other k-tile; persistent tiles walk the tiles with one
     block per SM; ping-pong tiles are persistent, and their two consumers take the block's tiles
     in turn, one storing while the other runs its MMAs; PERSIST 3 and 4 tiles hand D to TMA
     stores and go on; PERSIST 5 tiles do so in clusters of two blocks on vertically adjacent
     tiles, each block loading half of their shared B tile into both blocks' shared memory (TMA
     multicast); a last tile column at most half full runs the half-width wgmma. K splits
     of PERSIST 3 tiles of BM 128 are summed in the kernel by the last of a tile's splits to
     finish (gk_gemm_wg_split_fixup).

   GENERATOR
     GK_DEFINE_GEMM_WGMMA(name, dt, BM, BN, STAGES, PERSIST, RATE) writes the kernels (per
     layout) and the config of a BM x BN x 64 tile (BM 128 or 256, BN 64, 128 or 256, not both
     256, or 128 x 192; or 128 x 160, PERSIST 3, for B K-major only, D stored in staged passes;
     or BM 16 or 64, BN 128: a swapped tile, for A row-major only; or 64 x 64 or 64 x 32,
     PERSIST 0: its consumers split the k-tiles, for B K-major only) with STAGES TMA stages.
     PERSIST 0: a block a tile; 1: a persistent grid (a block per SM walks the tiles) with an
     epilogue buffer; 2: persistent ping-pong (BM 128, BN 64 or 128, a consumer holds a whole
     tile) with the buffer; 3 (BM 128 or 256) and 4 (ping-pong): persistent, D stored by TMA
     from 32 KB of staging where it can (16-bit D, 16-byte rows, N a multiple of 8, no C, no
     split, at most ReLU), else in staged passes; 5 (BM 128): as 3, in 2-block clusters sharing
     B (no K splits summed in the kernel). RATE is the tile's measured TFLOP/s (8192^3
     NT), which the dispatcher's time model divides by.
*/
/* A part of gk_gemm.cuh: included on its own, it brings gk_gemm.cuh, which includes it where it
   belongs. Its code is for nvcc only, and only where GK_GEMM_SM90 is 1. */
#include "gk_gemm.cuh"

#if defined(__CUDACC__) && GK_GEMM_SM90 && !defined(GK_GEMM_SM90_CUH)
#define GK_GEMM_SM90_CUH


/* ---------------------------------------------------------------- sm_90a: wgmma fed by TMA

   One block: a producer warpgroup (one thread issues the TMA copies) and two consumer
   warpgroups, each a BM / 2 x BN slice of the BM x BN tile (BM 128: one 64-row wgmma.m64nBNk16
   per k16, BM 256: two) with both
   operands read from shared memory (no fragment registers: the register-bound limit of the
   mma.sync kernels goes away). STAGES k-tiles of 64 ring through shared memory; each has a
   "full" mbarrier (TMA transaction bytes) and an "empty" one (one arrival per consumer when its
   wgmma on the tile has finished). Tiles are the TMA's 128-byte swizzle: K-major operands one
   [rows][64] box, MN-major operands [64][64] panels along MN. */
#define GK_GEMM_WG_BK 64
#define GK_GEMM_WG_THREADS 384
/* 1 KB of alignment slack, the stages and their two mbarriers, a ping-pong kernel's two turn
   mbarriers, and a persistent kernel's epilogue buffer (BM rows of BN + 8 floats), or for PERSIST
   3 and 4 the TMA store's staging: two 64 x 64 16-bit boxes a consumer */
#define gk_gemm_wg_epi_bytes_c(BM, BN) ((BM) * ((BN) + 8) * 4)
#define GK_GEMM_WG_OUT_BYTES 32768
#define gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST)                                                       \
    (1024 + (STAGES) * (((BM) + (BN)) * GK_GEMM_WG_BK * 2 + 16) + (GK_GEMM_PINGPONG(PERSIST) ? 16 : 0) +          \
     ((PERSIST) == 1 || (PERSIST) == 2 ? gk_gemm_wg_epi_bytes_c(BM, BN) : 0) +                                     \
     ((PERSIST) >= 3 ? GK_GEMM_WG_OUT_BYTES : 0))

/* A fragment's four accumulators a (rows r and r + 8, columns col and col + 1) through the
   column factors s0, s1 (alpha, times e4m3 column scales), the row factors r0, r1 (e4m3 row
   scales, else 1), bias and ReLU, packed into two 16-bit pairs of dt: *top row r's, *bottom
   row r + 8's. Columns past N read the last column's bias (their outputs are not stored). */
GK_DEV void gk_gemm_wg_pack4(const gk_gemm_args *p, const float *a, int col, float s0, float s1, float r0, float r1,
                             int dt, unsigned *top, unsigned *bottom)
{
    float b0 = 0.0f, b1 = 0.0f;
    if (p->bias) {
        b0 = p->bias[min(col, p->n - 1)];
        b1 = p->bias[min(col + 1, p->n - 1)];
    }
    float y[4] = {a[0] * r0 * s0 + b0, a[1] * r0 * s1 + b1, a[2] * r1 * s0 + b0, a[3] * r1 * s1 + b1};
    if (p->act == GK_ACT_RELU)
#pragma unroll
        for (int e = 0; e < 4; e++) y[e] = fmaxf(y[e], 0.0f);
    *top = gk_pack2_f32(y, dt);
    *bottom = gk_pack2_f32(y + 2, dt);
}

/* A ping-pong pass in 16-bit outputs, for D of bf16 or f16 rows 16-byte aligned, no C, no split
   and no activation but ReLU (GELU or SiLU inlined for each of 64 pairs would swell the loop
   past the instruction cache, as the register epilogue once did): slab ms of the accumulators (64 rows of D from row0, nb columns from
   col0) through the epilogue in registers, packed to pairs in `mine` (rows of nb / 2 + 4 words:
   a half warp's writes in 16 distinct banks), read back 16 bytes a thread. Half the shared-memory
   bytes of the fp32 pass, and no epilogue in the read-back loop: the other consumer's MMAs read
   their operands from the same shared memory meanwhile. */
GK_DEV void gk_gemm_wg_pass16(const gk_gemm_args *p, const float *acc, unsigned *mine, int wr, int bm, int nb, int ms0,
                              int row0, int col0, int scaled)
{
    const int t = threadIdx.x & 127, lane = t & 31, r = (t >> 5) * 16 + (lane >> 2), ldw = nb / 2 + 4;
    const float alpha = p->alpha;
    float ra0 = 1.0f, ra1 = 1.0f;
    if (scaled) {
        ra0 = gk_gemm_row_scale(p, row0 + r);
        ra1 = gk_gemm_row_scale(p, row0 + r + 8);
    }
#pragma unroll
    for (int ms = 0; ms < bm / 64; ms++) {
        if (ms != ms0) continue; /* ms is a constant here: the accumulators stay in registers */
#pragma unroll
        for (int j = 0; j < nb / 8; j++) {
            const int c = j * 8 + (lane & 3) * 2;
            float s0 = alpha, s1 = alpha;
            if (scaled) {
                s0 *= gk_gemm_col_scale(p, min(col0 + c, p->n - 1));
                s1 *= gk_gemm_col_scale(p, min(col0 + c + 1, p->n - 1));
            }
            gk_gemm_wg_pack4(p, acc + ms * (nb / 2) + 4 * j, col0 + c, s0, s1, ra0, ra1, p->d_dtype, &mine[r * ldw + c / 2],
                             &mine[(r + 8) * ldw + c / 2]);
        }
    }
    gk_named_barrier(2 + wr, 128);
    for (int i = t; i < 64 * nb / 8; i += 128) {
        const int row = i / (nb / 8), c8 = i % (nb / 8) * 8, grow = row0 + row, col = col0 + c8;
        if (grow >= p->m || col >= p->n) continue;
        const uint4 v = *(const uint4 *)(mine + row * ldw + c8 / 2);
        unsigned short *dst = (unsigned short *)p->d + (int64_t)grow * p->ldd + col;
        if (col + 8 <= p->n) {
            *(uint4 *)dst = v;
        } else {
            const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 8; e++)
                if (col + e < p->n) dst[e] = (unsigned short)(w[e / 2] >> (e % 2 * 16));
        }
    }
}

/* A consumer's accumulators (rows from row0, rows of them, nb columns from col0) out through
   TMA stores (PERSIST 3 and 4, p->tma_d: 16-bit D, no C, no split, at most ReLU): 64 x 64 boxes
   through two staging buffers of the consumer's (stg, 8 KB each, the 128-byte swizzle of D's
   map: a warp's writes in 32 distinct banks), alpha, bias and ReLU applied in registers. The
   store drains while the warpgroup goes on to its next tile; a buffer is written again once
   the group that read it is past (sc: this consumer's stores so far, returned updated). Rows
   and columns past D are not written by TMA. plain (a constant): bf16 D, no bias, no
   activation, alpha alone applied. */
GK_DEV int gk_gemm_wg_store_tma_pass(const gk_gemm_args *p, const CUtensorMap *tmd, const float *acc, char *stg, int w,
                                     int rows, int nb, int row0, int col0, int sc, int plain)
{
    const int t = threadIdx.x & 127, lane = t & 31, r = (t >> 5) * 16 + (lane >> 2), cl = (lane & 3) * 2;
    const float alpha = p->alpha;
    const int dt = p->d_dtype == GK_BF16 ? GK_BF16 : GK_F16;
#pragma unroll
    for (int ms = 0; ms < rows / 64; ms++) {
        if (row0 + ms * 64 >= p->m) continue;
#pragma unroll
        for (int q = 0; q < nb / 64; q++, sc++) {
            char *buf = stg + (w * 2 + (sc & 1)) * 8192;
            if (t == 0) gk_bulk_wait_read_1();
            gk_named_barrier(2 + w, 128);
#pragma unroll
            for (int jl = 0; jl < 8; jl++) {
                const int j = q * 8 + jl;
                char *dst = buf + r * 128 + ((jl ^ (r & 7)) << 4) + (lane & 3) * 4;
                /* row r + 8 at dst + 1024: the same swizzle */
                const float *a = acc + ms * (nb / 2) + 4 * j;
                if (plain) {
                    const float y[4] = {a[0] * alpha, a[1] * alpha, a[2] * alpha, a[3] * alpha};
                    *(unsigned *)dst = gk_pack2_f32(y, GK_BF16);
                    *(unsigned *)(dst + 1024) = gk_pack2_f32(y + 2, GK_BF16);
                } else {
                    gk_gemm_wg_pack4(p, a, col0 + j * 8 + cl, alpha, alpha, 1.0f, 1.0f, dt, (unsigned *)dst,
                                     (unsigned *)(dst + 1024));
                }
            }
            gk_fence_proxy_async();
            gk_named_barrier(2 + w, 128);
            if (t == 0) {
                gk_tma_store_2d(tmd, buf, col0 + q * 64, row0 + ms * 64);
                gk_bulk_commit();
            }
        }
    }
    return sc;
}

/* The common epilogue (bf16 D, no bias, no activation) in its own copy of the loop: the general
   one issues the bias loads, ReLU and both conversions, predicated, at every value pair (4096^3:
   about 900 instructions a consumer warp a tile, issue-bound while no MMA runs). */
GK_DEV int gk_gemm_wg_store_tma(const gk_gemm_args *p, const CUtensorMap *tmd, const float *acc, char *stg, int w,
                                int rows, int nb, int row0, int col0, int sc)
{
    if (p->d_dtype == GK_BF16 && !p->bias && p->act == GK_ACT_NONE)
        return gk_gemm_wg_store_tma_pass(p, tmd, acc, stg, w, rows, nb, row0, col0, sc, 1);
    return gk_gemm_wg_store_tma_pass(p, tmd, acc, stg, w, rows, nb, row0, col0, sc, 0);
}

/* The same consumer's accumulators where TMA cannot store them (fp32 D, C, GELU / SiLU, a split's
   partials, rows off 16 bytes, N not a multiple of 8): through its 16 KB of the staging in
   passes of 64 rows x 32 columns (rows of 40 floats: a half warp's float2 writes in 32 distinct
   banks), each stored by gk_gemm_store_rows. The passes are a loop (one copy of the store
   code: unrolled, the kernel outgrew its instruction cache and spilled); each picks its
   accumulators by an unrolled test, their indices constant. */
GK_DEV void gk_gemm_wg_store_staged(const gk_gemm_args *p, const float *acc, char *stg, int w, int rows, int nb,
                                    int row0, int col0, int scaled, int split)
{
    const int t = threadIdx.x & 127, lane = t & 31, r = (t >> 5) * 16 + (lane >> 2), cl = (lane & 3) * 2;
    const int qn = nb / 32;
    float *mine = (float *)(stg + w * 16384);
#pragma unroll 1
    for (int pass = 0; pass < (rows / 64) * qn; pass++) {
        const int ms = pass / qn, q = pass % qn;
        if (row0 + ms * 64 >= p->m || col0 + q * 32 >= p->n) continue;
        gk_named_barrier(2 + w, 128); /* the last pass is read */
#pragma unroll
        for (int c = 0; c < (rows / 64) * qn; c++) {
            if (c != pass) continue;
#pragma unroll
            for (int jl = 0; jl < 4; jl++) {
                const float *a = acc + c / qn * (nb / 2) + 4 * (c % qn * 4 + jl);
                *(float2 *)(mine + r * 40 + jl * 8 + cl) = make_float2(a[0], a[1]);
                *(float2 *)(mine + (r + 8) * 40 + jl * 8 + cl) = make_float2(a[2], a[3]);
            }
        }
        gk_named_barrier(2 + w, 128);
        gk_gemm_store_rows(p, mine, 40, 64, 32, row0 + ms * 64, col0 + q * 32, scaled, split, threadIdx.x & 127, 128);
    }
}

/* Consumer warpgroup wr's accumulators out through shared memory: written as they sit
   in registers (rows of bn + 8 floats, so the float2 writes of a half warp, 4 rows by 4 lanes,
   fall in 32 distinct banks), then read back in rows of 8 values: 16-byte global stores, and
   one loop body instead of bn / 4 inlined epilogues, which missed the instruction cache (45% of
   stall cycles at 128 x 256). buf: the stages, free once every consumer is past its last wgmma
   (barrier 1), or a buffer of its own when the kernel is persistent (the producer is already
   filling the stages for the next tile). A cooperative tile (persistent 0 or 1) stores bm / 2 x
   bn a warpgroup in one pass; a ping-pong one (persistent 2) the whole bm x bn tile, 64 rows a
   pass, while the other warpgroup runs its MMAs.
   scaled (e4m3): the fp8 tensor or row / column scales go in on the way out, here rather than
   on the accumulators, where 128 more live values would spill. */
GK_DEV void gk_gemm_wg_store(const gk_gemm_args *p, const float *acc, float *buf, int persistent, int scaled,
                             int wr, int bm, int bn, int nb, int m0, int n0, int split)
{
    /* a swapped tile (bm 16 or 64): this warpgroup's 64 columns of D (its MMA rows) by bm rows of
       D, written transposed into [bm][68] (each write of a warp in 32 distinct banks). Otherwise
       nb columns (bn, or bn / 2 for a half-width tile) in rows of the tile's bn + 8: a ping-pong
       consumer stores a half-width tile while the other may store a whole one; a 64 x 64 or 64 x 32
       tile's consumers their sums of the whole tile, added before the stores. */
    const int swap = GK_GEMM_WG_SWAP(bm, bn), ns = GK_GEMM_WG_KSPLIT(bm, bn), pp = persistent == 2;
    const int t = threadIdx.x & 127, lane = t & 31;
    const int width = swap ? bn / 2 : nb, ld = swap ? width + 4 : bn + 8;
    const int rows = swap || pp || ns ? bm : bm / 2, pass_rows = pp ? 64 : rows;
    const int row0 = swap || pp || ns ? m0 : m0 + wr * rows, col0 = swap ? n0 + wr * width : n0;
    float *mine = buf + wr * pass_rows * ld;
    const int r = (t >> 5) * 16 + (lane >> 2);
    const int pass16 = pp && !p->partial && p->beta == 0.0f && p->d_dtype != GK_F32 && p->act <= GK_ACT_RELU &&
                       p->ldd % 8 == 0 && gk_is_aligned(p->d, 16);
#pragma unroll 1
    for (int pass = 0; pass < rows / pass_rows; pass++) {
        if (persistent) gk_named_barrier(2 + wr, 128); /* this warpgroup is done reading the last pass */
        else gk_named_barrier(1, 256);
        if (pass16) {
            gk_gemm_wg_pass16(p, acc, (unsigned *)mine, wr, bm, nb, pass, row0 + pass * 64, col0, scaled);
            continue;
        }
        if (swap) {
#pragma unroll
            for (int j = 0; j < bm / 8; j++)
#pragma unroll
                for (int i = 0; i < 4; i++) /* acc 4 j + i: MMA row r + 8 (i / 2), column 8 j + 2 (lane % 4) + i % 2 */
                    mine[(j * 8 + (lane & 3) * 2 + (i & 1)) * ld + r + 8 * (i >> 1)] = acc[4 * j + i];
        } else {
#pragma unroll
            for (int ms = 0; ms < rows / 64; ms++) {
                if (pp && ms != pass) continue; /* ping-pong: slab `pass` only (ms is a constant here) */
                const int mr = pp ? 0 : ms;
#pragma unroll
                for (int j = 0; j < width / 8; j++) {
                    const int c = j * 8 + (lane & 3) * 2;
                    const float *a = acc + ms * (width / 2) + 4 * j;
                    *(float2 *)(mine + (mr * 64 + r) * ld + c) = make_float2(a[0], a[1]);
                    *(float2 *)(mine + (mr * 64 + r + 8) * ld + c) = make_float2(a[2], a[3]);
                }
            }
        }
        if (ns) {
            /* a 64 x 64 or 64 x 32 tile: the consumers' sums over their k-tiles, added in the first's
               buffer, half the rows each (the same order whichever finishes first) */
            const int half = bm / 2; /* this consumer's rows of the sum */
            gk_named_barrier(1, 256);
            float4 *sum = (float4 *)(buf + wr * half * ld);
            const float4 *theirs = (const float4 *)(buf + (bm + wr * half) * ld); /* the second's buffer */
#pragma unroll
            for (int i = 0; i < half * bn / 4 / 128; i++) {
                const int e = (i * 128 + t) / (bn / 4) * (ld / 4) + (i * 128 + t) % (bn / 4);
                const float4 a = sum[e], b = theirs[e];
                sum[e] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
            }
            gk_named_barrier(2 + wr, 128);
            gk_gemm_store_rows(p, buf + wr * half * ld, ld, half, width, row0 + wr * half, col0, scaled, split, t, 128);
            continue;
        }
        gk_named_barrier(2 + wr, 128);
        gk_gemm_store_rows(p, mine, ld, pass_rows, width, row0 + pass * pass_rows, col0, scaled, split, threadIdx.x & 127,
                           128);
    }
}

/* K values in a k-tile: 128 bytes of a row, 64 16-bit values or 128 e4m3. */
#define gk_gemm_wg_bk(dt) ((dt) == GK_E4M3 ? 128 : 64)

/* A work item (split-major: item / tiles is its K split): its tile's origin, its first k and
   its k-tiles of bk values. In 2-block clusters (cl 2) an item is a pair of vertically adjacent
   tiles (tiles counts pairs), the block of rank r takes the pair's tile r. */
GK_DEV void gk_gemm_wg_item(const gk_gemm_args *p, int item, int tiles, int cl, int bm, int bn, int bk, int *m0,
                            int *n0, int *split, int *k_begin, int *ktiles)
{
    int tm, tn;
    if (cl == 2) {
        gk_gemm_raster(item % tiles, (p->tiles_m + 1) / 2, p->tiles_n, &tm, &tn);
        tm = 2 * tm + gk_cluster_sreg(0);
    } else {
        gk_gemm_tile_of(p, item % tiles, &tm, &tn);
    }
    *m0 = tm * bm;
    *n0 = tn * bn;
    *split = item / tiles;
    *k_begin = *split * p->k_per_split;
    *ktiles = (min(p->k, *k_begin + p->k_per_split) - *k_begin + bk - 1) / bk;
}

/* Counts a split into its tile's counter (word): p->fixup_tag << 16 | the splits counted so far,
   any other value read as none (nothing clears the workspace before the launch). Returns 1 for
   the tile's last split, whose block sets the word back to 0 (a CUDA graph replays the tag). */
GK_DEV int gk_gemm_wg_fixup_count(const gk_gemm_args *p, unsigned long long *word, int splits)
{
    const unsigned long long tag = p->fixup_tag;
    unsigned long long seen = 0;
    for (;;) {
        const int counted = seen >> 16 == tag ? (int)(seen & 0xffff) : 0;
        const unsigned long long was = atomicCAS(word, seen, tag << 16 | (unsigned long long)(counted + 1));
        if (was == seen) {
            if (counted + 1 < splits) return 0;
            *word = 0;
            return 1;
        }
        seen = was;
    }
}

/* K splits summed in the kernel (p->fixup): split `split` of tile `tile`, summed by both
   consumers (nacc accumulators a thread; w: the consumer; slot: BM BN floats), goes to its slot
   of the workspace as the registers hold it (coalesced 16-byte stores), and the block counts it
   in the tile's counter. The block that counts the tile's last split adds the tile's slots in
   split order (the same sum whichever block is last) and returns 0: it stores the tile. The
   others return 1. Items are split-major, so the splits of neighbouring tiles run in step and
   share their A and B panels in L2; no block waits for another. */
GK_DEV int gk_gemm_wg_split_fixup(const gk_gemm_args *p, float *acc, int nacc, int w, int slot, int tile, int split,
                                  int splits)
{
    const int t = threadIdx.x & 127, tiles = p->tiles_m * p->tiles_n;
    const float *first = p->fixup + (size_t)tile * splits * slot;
    unsigned long long *count = (unsigned long long *)(p->fixup + (size_t)tiles * splits * slot) + tile;
    float4 *mine = (float4 *)(first + (size_t)split * slot) + (size_t)w * (nacc / 4) * 128 + t;
#pragma unroll
    for (int i = 0; i < nacc / 4; i++) mine[i * 128] = make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
    __threadfence();
    gk_named_barrier(1, 256);
    int last = 0;
    if (threadIdx.x == 128) {
        last = gk_gemm_wg_fixup_count(p, count, splits);
        __threadfence(); /* the other splits' partials, counted before, are seen after this */
    }
    if (!gk_named_barrier_or(1, 256, last)) return 1;
#pragma unroll
    for (int i = 0; i < nacc; i++) acc[i] = 0.0f;
    for (int s = 0; s < splits; s++) {
        const float4 *theirs = (const float4 *)(first + (size_t)s * slot) + (size_t)w * (nacc / 4) * 128 + t;
#pragma unroll
        for (int i = 0; i < nacc / 4; i++) {
            const float4 v = __ldcg(theirs + i * 128);
            acc[4 * i] += v.x;
            acc[4 * i + 1] += v.y;
            acc[4 * i + 2] += v.z;
            acc[4 * i + 3] += v.w;
        }
    }
    return 0;
}

/* A consumer's arrival on a stage's empty barrier (its shared address): in 2-block clusters (cl
   2) on both blocks' (the stage of each holds half its B from the other block's copies). */
GK_DEV void gk_gemm_wg_release(unsigned empty, int cl)
{
    if (cl == 1) {
        gk_mbar_arrive_s(empty);
        return;
    }
    gk_mbar_arrive_cluster_s(empty, 0);
    gk_mbar_arrive_cluster_s(empty, 1);
}

/* A consumer warpgroup's k-tiles of one work item, nb columns of each B tile (wgmma n = nb; B's
   tile a_bytes into a stage), its rows of A tile rows wr bm / 2 .. (wr + 1) bm / 2 (ping-pong and
   64 x 64: wr 0, bm twice the tile's); kpar (64 x 64): the parity of the k-tiles it takes (the
   other consumer's counted in `it`, not waited for), -1 for all;
   `it` counts k-tiles over the block's items (stage it % stages, phase it / stages). Returns
   `it` past this item. bm, nb, dt, ta, tb, blocks must be constants after inlining.
   blocks (e4m3, bm 128, tiles of at most 128 columns inside one 128-column block of B): each
   k-tile's products go to tmp, which is scaled by its row's A block scale and the tile's B block
   scale into acc once the k-tile's wgmmas have finished (p->block_a, block_b; row0: the D row of
   this thread's first accumulator, kb0: the item's first 128-k block). turn (ping-pong): the
   other consumer's turn barrier, arrived on once this item's last stage is waited for. cl: blocks
   a cluster (gk_gemm_wg_release). */
GK_DEV int gk_gemm_wg_consume(char *smem, unsigned long long *full, unsigned long long *empty, int stage_bytes,
                              int a_bytes, int dt, int ta, int tb, int wr, int bm, int nb, int stages, int ktiles,
                              int it, float *acc, int blocks, float *tmp, const gk_gemm_args *p, int row0, int n0,
                              int kb0, unsigned long long *turn, int cl, int kpar)
{
    const int nacc = bm * nb / 256;
    /* a K-major tile steps 32 bytes per k16 (descriptor + 2), an MN-major one 16 rows (+ 128) */
    const int a_step = ta ? 128 : 2, b_step = tb ? 2 : 128;
    const float *sa0 = NULL, *sa1 = NULL, *sb = NULL;
    if (blocks) { /* rows past M read row M - 1's scales (their outputs are not stored) */
        sa0 = p->block_a + (int64_t)min(row0, p->m - 1) * p->kb + kb0;
        sa1 = p->block_a + (int64_t)min(row0 + 8, p->m - 1) * p->kb + kb0;
        sb = p->block_b + (int64_t)(n0 / 128) * p->kb + kb0;
    }
#pragma unroll
    for (int i = 0; i < nacc; i++) acc[i] = 0.0f;
    gk_wgmma_fence_regs(acc, nacc);
    if (blocks) {
#pragma unroll
        for (int i = 0; i < nacc; i++) tmp[i] = 0.0f;
        gk_wgmma_fence_regs(tmp, nacc);
    }
    /* shared addresses in registers, the stage and phase stepped (as the producer's) */
    const unsigned stage0 = gk_smem_addr(smem), full0 = gk_smem_addr(full), empty0 = gk_smem_addr(empty);
    int own = -1; /* the stage of this consumer's last k-tile, whose wgmmas may still run */
    for (int kt = 0, s = it % stages, phase = (it / stages) & 1; kt < ktiles;
         kt++, it++, s = s + 1 == stages ? 0 : s + 1, phase ^= s == 0) {
        if (kpar >= 0 && (kt & 1) != kpar) continue; /* the other consumer's k-tile */
        float scale0 = 0.0f, scale1 = 0.0f;
        if (blocks) { /* loaded before the wait: their latency hides behind it */
            const float b = sb[kt];
            scale0 = sa0[kt] * b;
            scale1 = sa1[kt] * b;
        }
        gk_mbar_wait_s(full0 + 8 * s, phase);
        const unsigned sa = stage0 + s * stage_bytes;
        const unsigned long long db = gk_wgmma_desc_sw128_s(sa + a_bytes, tb ? 16 : 8192);
        gk_wgmma_fence();
#pragma unroll
        for (int ms = 0; ms < bm / 128; ms++) {
            /* rows (wr bm / 128 + ms) 64: 8 KB apart in either layout (64 rows of 128 bytes,
               or a 64-wide MN panel) */
            const unsigned long long da = gk_wgmma_desc_sw128_s(sa + (wr * bm / 128 + ms) * 8192, ta ? 8192 : 16);
#pragma unroll
            for (int kk = 0; kk < 4; kk++) { /* 32 bytes of K a step: k16 of 16-bit values, k32 of e4m3 */
                const unsigned long long dak = gk_wgmma_desc_add(da, a_step * kk), dbk = gk_wgmma_desc_add(db, b_step * kk);
                if (dt == GK_E4M3) {
                    if (blocks) gk_wgmma_m64k32_e4m3(tmp, dak, dbk, nb, kk > 0);
                    else gk_wgmma_m64k32_e4m3(acc + ms * (nb / 2), dak, dbk, nb, 1);
                } else {
                    gk_wgmma_m64k16(acc + ms * (nb / 2), dak, dbk, dt, nb, ta, !tb, 1);
                }
            }
        }
        gk_wgmma_commit();
        if (blocks) {
            /* this k-tile's sums are needed now: its stage goes back at once */
            gk_wgmma_wait_0();
            gk_wgmma_fence_regs(tmp, nacc);
            if ((threadIdx.x & 127) == 0) gk_gemm_wg_release(empty0 + 8 * s, cl);
#pragma unroll
            for (int i = 0; i < nacc; i++) acc[i] += tmp[i] * (i & 2 ? scale1 : scale0);
            continue;
        }
        /* the previous k-tile's wgmma has finished: its stage goes back to the producer */
        gk_wgmma_wait_1();
        gk_wgmma_fence_regs(acc, nacc);
        if (own >= 0 && (threadIdx.x & 127) == 0) gk_gemm_wg_release(empty0 + 8 * own, cl);
        own = s;
    }
    /* ping-pong: every wait on this item's stages is past, the other consumer's turn */
    if (turn && (threadIdx.x & 31) == 0) gk_mbar_arrive(turn);
    if (blocks) return it;
    gk_wgmma_wait_0();
    gk_wgmma_fence_regs(acc, nacc);
    if (own >= 0 && (threadIdx.x & 127) == 0) gk_gemm_wg_release(empty0 + 8 * own, cl);
    return it;
}

/* A consumer's tile out by the kernel's kind: TMA stores or staged passes (PERSIST 3 and 4, the
   consumer's rows: the whole tile for ping-pong, its half otherwise), else gk_gemm_wg_store.
   Returns the consumer's TMA stores so far (sc). */
GK_DEV int gk_gemm_wg_out(const gk_gemm_args *p, const CUtensorMap *tmd, const float *acc, char *stg, float *epi,
                          int persistent, int scaled, int w, int bm, int bn, int nb, int m0, int n0, int split, int sc)
{
    if (persistent < 3) {
        gk_gemm_wg_store(p, acc, epi, persistent, scaled, w, bm, bn, nb, m0, n0, split);
        return sc;
    }
    const int pp = persistent == 4, rows = pp ? bm : bm / 2, row0 = pp ? m0 : m0 + w * rows;
    if (p->tma_d) return gk_gemm_wg_store_tma(p, tmd, acc, stg, w, rows, nb, row0, n0, sc);
    gk_gemm_wg_store_staged(p, acc, stg, w, rows, nb, row0, n0, scaled, split);
    return sc;
}

/* One operand's part of every k-tile of a work item: its tile's rows r0 .. r0 + rows of the MMAs'
   A or B, `in` of them inside the operand. K-major: one box of its rows (map; last: the box of
   the operand's last rows where fewer than the tile's); MN-major: its [64][64] panels that hold
   rows. cl 2: this block (rank) loads half of it (rows or panels) into both blocks' stages (TMA
   multicast), the maps' boxes then half the tile's rows. Out: the byte offset in the stage's
   part, the map, the first box's row, the count of boxes (K-major 0 or 1), the layout and
   whether the boxes go to both blocks. */
typedef struct gk_gemm_wg_part {
    const CUtensorMap *map;
    int off, row, boxes, mn_major, multicast;
} gk_gemm_wg_part;

GK_DEV gk_gemm_wg_part gk_gemm_wg_plan(const CUtensorMap *map, const CUtensorMap *last, int r0, int rows, int in,
                                       int mn_major, int cl, int rank)
{
    const int h = rows / cl;
    gk_gemm_wg_part q;
    q.mn_major = mn_major;
    q.multicast = cl == 2;
    if (mn_major) {
        const int p0 = rank * (h / 64);
        q.map = map;
        q.off = p0 * 8192;
        q.row = r0 + p0 * 64;
        q.boxes = max(0, min((in + 63) / 64, p0 + h / 64) - p0);
        return q;
    }
    const int hr = max(0, min(in - rank * h, h));
    q.map = hr < h ? last : map;
    q.off = rank * h * 128;
    q.row = r0 + rank * h;
    q.boxes = hr > 0;
    return q;
}

/* k-tile k of one operand's part (q) into the stage's part at dst (a shared-memory address),
   counted on bar */
GK_DEV void gk_gemm_wg_load(unsigned dst, const gk_gemm_wg_part *q, unsigned bar, int k)
{
    for (int i = 0; i < q->boxes; i++) {
        const unsigned d = dst + q->off + i * 8192;
        const int c0 = q->mn_major ? q->row + i * 64 : k, c1 = q->mn_major ? k : q->row;
        if (q->multicast) gk_tma_load_2d_multicast_s(d, q->map, bar, c0, c1, 3);
        else gk_tma_load_2d_s(d, q->map, bar, c0, c1);
    }
}

GK_DEV void gk_gemm_wg_run(const gk_gemm_args *p, const CUtensorMap *tma, const CUtensorMap *tmb,
                           const CUtensorMap *tma_last, const CUtensorMap *tmb_last, const CUtensorMap *tmd, int dt, int ta, int tb, int bm,
                           int bn, int stages, int persistent, int blocks, float *acc, float *tmp)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    gk_grid_launch_dependents(); /* the split-K sum's blocks start and wait (gk_gemm_reduce_launch) */
    extern __shared__ uint4 gk_gemm_smem[];
    char *smem = gk_smem_align_1024(gk_gemm_smem);
    /* the MMAs' tile: mm rows (operand A's), mn columns; a swapped tile (bm 16 or 64) puts B's
       bn rows in the MMAs' M and D's bm rows (A's) in their N, and ta / tb are then B's and A's */
    const int swap = GK_GEMM_WG_SWAP(bm, bn), mm = swap ? bn : bm, mn = swap ? bm : bn, pp = GK_GEMM_PINGPONG(persistent);
    const int a_bytes = mm * GK_GEMM_WG_BK * 2, stage_bytes = a_bytes + mn * GK_GEMM_WG_BK * 2;
    /* PERSIST 3 and 4: the TMA store's staging after the stages (1024-byte aligned, as its swizzle
       needs), the mbarriers after it */
    char *stg = smem + stages * stage_bytes;
    unsigned long long *full = (unsigned long long *)(stg + (persistent >= 3 ? GK_GEMM_WG_OUT_BYTES : 0)),
                       *empty = full + stages;
    /* ping-pong: consumer w waits on turn[w] before it waits on an item's stages, until the other
       has waited on all of its previous item's (a wait by parity is right only one phase ahead) */
    unsigned long long *turn = empty + stages;
    float *epi = persistent == 1 || pp ? (float *)(turn + (pp ? 2 : 0)) : (float *)smem;
    /* work items: (split, tile) pairs, split-major so that each split walks the rasterized
       tile order; a block takes items blockIdx .. step gridDim (one each when the grid has one
       block per item, several when it is persistent) */
    /* 2-block clusters (cl 2): a cluster takes pairs of tiles; each block copies half of the
       pair's B tile (rank r: rows or MN panels r mn / 2 ..) into both blocks' stages */
    const int cl = GK_GEMM_CLUSTER(persistent), rank = cl == 2 ? gk_cluster_sreg(0) : 0;
    const int tiles = (cl == 2 ? (p->tiles_m + 1) / 2 : p->tiles_m) * p->tiles_n;
    const int splits = (p->k + p->k_per_split - 1) / p->k_per_split;
    const int ea = swap ? p->n : p->m, eb = swap ? p->m : p->n; /* rows of the MMAs' A and B operands */
    const int first = cl == 2 ? gk_cluster_sreg(2) : blockIdx.y * gridDim.x + blockIdx.x;
    const int step = cl == 2 ? gk_cluster_sreg(3) : gridDim.x * gridDim.y, items = tiles * splits;
    /* the warpgroup known warp-uniform: the k-loops' descriptors and stage addresses stay in
       uniform registers (the 128 x 64 consumer: 53 instructions a k-tile, no R2UR; 74 with 8 R2UR
       and an S2UR computed from threadIdx) */
    const int wg = gk_warp_uniform((int)(threadIdx.x >> 7)), bk = gk_gemm_wg_bk(dt);
    const int fixup = GK_GEMM_SPLITS_IN_KERNEL(persistent, bm) && p->fixup != NULL;

    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            gk_mbar_init(full + s, 1);
            /* an arrival from each consumer that reads the stage, of each block */
            gk_mbar_init(empty + s, (pp || GK_GEMM_WG_KSPLIT(bm, bn) ? 1 : 2) * cl);
        }
        if (pp) {
            gk_mbar_init(turn, 4); /* an arrival from each warp of the other consumer */
            gk_mbar_init(turn + 1, 4);
        }
        gk_mbar_init_fence();
    }
    if (cl == 2) gk_cluster_sync(); /* the other block's barriers are initialized before any copy */
    else __syncthreads();

    /* it counts k-tiles over all of this block's items: stage it % stages, phase it / stages */
    int it = 0;
    if (wg == 0) {
        gk_setmaxnreg_dec_40();
        if (threadIdx.x != 0) return;
        /* one thread issues every copy: its k-loop kept short (40 instructions a k-tile, was 59):
           shared addresses stay in registers, the stage and its phase step instead of being
           divided out of `it`, and the first pass needs no branch, waiting by parity (a fresh
           barrier's phase before its first counts as done) */
        const unsigned full0 = gk_smem_addr(full), empty0 = gk_smem_addr(empty), stage0 = gk_smem_addr(smem);
        int s = 0, phase = 0;
        for (int item = first; item < items; item += step) {
            int m0, n0, split, k_begin, ktiles;
            gk_gemm_wg_item(p, item, tiles, cl, bm, bn, bk, &m0, &n0, &split, &k_begin, &ktiles);
            const int ra = swap ? n0 : m0, rb = swap ? m0 : n0; /* the MMAs' A and B tile rows */
            /* only rows inside the operand are loaded: TMA's zero fill of rows past its end is
               slow (H200, x[65, 8192] w[8192, 8192]^T on 128 x 64 tiles: 70.6 us with 63 of
               A's 128 box rows past M, 49.5 with them inside). A K-major operand's last tile
               row takes a map whose box is only its rows (*_last), an MN-major one loads only
               its panels that hold rows; the rest of the stage keeps stale values, which reach
               only D's rows and columns past M and N (never stored). Past K, zero fill stays.
               A cluster's second tile past M has no A rows: it runs on stale ones and stores
               nothing. */
            const int ra_in = max(0, min(ea - ra, mm)), rb_in = max(0, min(eb - rb, mn));
            const int tx = (ta ? (ra_in + 63) / 64 * 8192 : ra_in * 128) + (tb ? rb_in * 128 : (rb_in + 63) / 64 * 8192);
            const gk_gemm_wg_part qa = gk_gemm_wg_plan(tma, tma_last, ra, mm, ra_in, ta, 1, 0);
            const gk_gemm_wg_part qb = gk_gemm_wg_plan(tmb, tmb_last, rb, mn, rb_in, !tb, cl, rank);
            for (int k = k_begin, kt = 0; kt < ktiles; kt++, k += bk) {
                /* in a cluster: both blocks' consumers have freed the stage */
                gk_mbar_wait_s(empty0 + 8 * s, phase ^ 1);
                const unsigned st = stage0 + s * stage_bytes, bar = full0 + 8 * s;
                gk_mbar_arrive_expect_tx_s(bar, tx);
                gk_gemm_wg_load(st, &qa, bar, k);
                gk_gemm_wg_load(st + a_bytes, &qb, bar, k);
                if (++s == stages) {
                    s = 0;
                    phase ^= 1;
                }
            }
        }
        if (cl == 2) gk_cluster_sync(); /* stays until the other block is done with this one */
        return;
    }

    gk_setmaxnreg_inc_232();
    /* cooperative: both consumers on each item, a half of its rows each; ping-pong: the block's
       items in turn, so that one stores a tile while the other runs MMAs (each skips the other's
       k-tiles in `it`) */
    /* a 64 x 64 or 64 x 32 tile's consumer: the whole tile on every other k-tile (kpar: its parity) */
    const int ns = GK_GEMM_WG_KSPLIT(bm, bn), wr = pp || ns ? 0 : wg - 1, cb = pp || ns ? 2 * mm : mm;
    const int kpar = ns ? wg - 1 : -1;
    unsigned long long *other = pp ? turn + (2 - wg) : NULL;
    int sc = 0; /* TMA stores issued by this consumer */
    for (int item = first, j = 0, turns = 0; item < items; item += step, j++) {
        int m0, n0, split, k_begin, ktiles;
        gk_gemm_wg_item(p, item, tiles, cl, bm, bn, bk, &m0, &n0, &split, &k_begin, &ktiles);
        if (pp && (j & 1) != wg - 1) {
            it += ktiles;
            continue;
        }
        if (pp && j > 0) gk_mbar_wait(turn + (wg - 1), turns++ & 1);
        /* the row of this thread's first accumulator (unswapped tiles; block scales only) */
        const int row0 = m0 + (wg - 1) * 64 + (threadIdx.x >> 5 & 3) * 16 + (threadIdx.x & 31) / 4;
        /* a last tile column at most half full (N % BN in 1 .. BN / 2) runs the half-width
           wgmma, half the MMAs (the producer loads only the rows or panels inside N): 4095 x
           4097 on 128 x 256 tiles 243-246 us, was 284. Not for BN 192 (no n = 96 wgmma here)
           nor BN 64 (its half, n = 32, not measured there). */
        if (!swap && (bn == 128 || bn == 256) && p->n - n0 <= bn / 2) {
            it = gk_gemm_wg_consume(smem, full, empty, stage_bytes, a_bytes, dt, ta, tb, wr, cb, bn / 2, stages, ktiles,
                                    it, acc, blocks, tmp, p, row0, n0, k_begin / 128, other, cl, -1);
            if (m0 >= p->m) continue; /* a cluster's tile past M */
            if (fixup && gk_gemm_wg_split_fixup(p, acc, cb * (bn / 2) / 256, wg - 1, bm * bn, item % tiles, split, splits))
                continue;
            sc = gk_gemm_wg_out(p, tmd, acc, stg, epi, persistent, dt == GK_E4M3, wg - 1, bm, bn, bn / 2, m0, n0, split, sc);
        } else {
            it = gk_gemm_wg_consume(smem, full, empty, stage_bytes, a_bytes, dt, ta, tb, wr, cb, mn, stages, ktiles, it,
                                    acc, blocks, tmp, p, row0, n0, k_begin / 128, other, cl, kpar);
            if (m0 >= p->m) continue; /* a cluster's tile past M */
            if (fixup && gk_gemm_wg_split_fixup(p, acc, cb * mn / 256, wg - 1, bm * bn, item % tiles, split, splits))
                continue;
            sc = gk_gemm_wg_out(p, tmd, acc, stg, epi, persistent, dt == GK_E4M3, wg - 1, bm, bn, bn, m0, n0, split, sc);
        }
    }
    /* the staging must stay until the last TMA store has read it, and D be written at exit */
    if (persistent >= 3 && (threadIdx.x & 127) == 0) gk_bulk_wait_0();
    /* no block leaves while the other may still arrive on its barriers */
    if (cl == 2) gk_cluster_sync();
#endif
}

typedef void (*gk_gemm_wg_kernel)(gk_gemm_args, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap);

/* One wgmma configuration: a BM x BN x 64 tile, STAGES TMA stages, a block per tile or a
   persistent grid of one block per SM (PERSIST), kernels per layout. */
#define GK_DEFINE_GEMM_WGMMA(name, dt, BM, BN, STAGES, PERSIST, RATE)                                             \
    static_assert((BM) == 128 || (BM) == 256 || (((BM) == 16 || (BM) == 64) && (BN) == 128) ||               \
                      GK_GEMM_WG_KSPLIT(BM, BN),                                                               \
                  #name ": BM is 128 or 256 (one or two m64 slices a consumer), or 16 or 64 with BN 128 (swapped), " \
                  "or 64 x 64 or 64 x 32 (the consumers split the k-tiles)");                                    \
    static_assert((BN) == 64 || (BN) == 128 || (BN) == 256 || ((BN) == 192 && (BM) == 128) ||                 \
                      ((BN) == 160 && (BM) == 128 && (PERSIST) == 3) || ((BN) == 32 && (BM) == 64),            \
                  #name ": BN is 64, 128 or 256, 192 with BM 128, 160 with BM 128 and PERSIST 3, or 32 with BM " \
                  "64 (wgmma n; 16 rows of a swapped tile)");                                                  \
    static_assert(!GK_GEMM_WG_KSPLIT(BM, BN) || (PERSIST) == 0, #name ": a 64 x 64 or 64 x 32 tile is a block a tile"); \
    static_assert((BM) * (BN) <= 128 * 256, #name ": at most 128 accumulators a consumer thread");           \
    static_assert(!GK_GEMM_PINGPONG(PERSIST) || ((BM) == 128 && (BN) <= 128),                                  \
                  #name ": a ping-pong tile is 128 x 64 or 128 x 128 (a consumer holds all of it)");         \
    static_assert((PERSIST) != 3 || (BM) >= 128,                                                               \
                  #name ": a TMA-store tile (PERSIST 3) is cooperative, BM 128 or 256");                      \
    static_assert((PERSIST) != 5 || ((BM) == 128 && ((BN) == 128 || (BN) == 256)),                            \
                  #name ": a cluster tile (PERSIST 5) is 128 x 128 or 128 x 256 (halves of B in 64-wide panels)"); \
    static_assert((STAGES) >= 2, #name ": at least 2 stages");                                                 \
    static_assert(gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST) <= 227 * 1024,                              \
                  #name ": over 227 KB of shared memory");                                                     \
    static_assert((PERSIST) ||                                                                                \
                      gk_gemm_wg_epi_bytes_c((BM) * (GK_GEMM_WG_KSPLIT(BM, BN) + 1), BN) <=                  \
                          (STAGES) * ((BM) + (BN)) * GK_GEMM_WG_BK * 2,                                      \
                  #name ": the epilogue's accumulators must fit in the stages");                              \
    GK_GEMM_WG_ALL_LAYOUTS_##BM(GK_GEMM_WG_ALL_LAYOUTS_N##BN(                                                 \
        GK_GEMM_WG_KERNEL(name##_nn, dt, 0, 0, BM, BN, STAGES, PERSIST)))                                      \
    GK_GEMM_WG_KERNEL(name##_nt, dt, 0, 1, BM, BN, STAGES, PERSIST)                                            \
    GK_GEMM_WG_ALL_LAYOUTS_##BM(GK_GEMM_WG_ALL_LAYOUTS_N##BN(                                                 \
        GK_GEMM_WG_KERNEL(name##_tn, dt, 1, 0, BM, BN, STAGES, PERSIST)))                                      \
    GK_GEMM_WG_KERNEL(name##_tt, dt, 1, 1, BM, BN, STAGES, PERSIST)                                            \
    static const gk_gemm_wg_kernel name##_kernels[4] = {                                                       \
        GK_GEMM_WG_OR_NULL_##BM(GK_GEMM_WG_OR_NULL_N##BN(name##_nn)), name##_nt,                               \
        GK_GEMM_WG_OR_NULL_##BM(GK_GEMM_WG_OR_NULL_N##BN(name##_tn)), name##_tt};                              \
    static const gk_gemm_config name##_config = {#name, BM, BN, GK_GEMM_WG_BK,                                 \
                                                 (BM) < 128 || GK_GEMM_PINGPONG(PERSIST) ? (BM) : (BM) / 2,          \
                                                 (BM) < 128 && !GK_GEMM_WG_KSPLIT(BM, BN) ? (BN) / 2 : (BN), STAGES, 1, 0, \
                                                 GK_GEMM_WG_THREADS,                                                 \
                                                 gk_gemm_wg_smem_bytes_c(BM, BN, STAGES, PERSIST), 1, 1, PERSIST,   \
                                                 RATE, GK_GEMM_WG_SWAP(BM, BN)};

/* A swapped tile (BM 16 or 64 x 128) reads A K-major only: its MMAs' B operand is A, so it has no
   kernels for the layouts whose B operand would be MN-major (nn, tn; the dispatcher never picks
   them); 64 x 64 and 64 x 32 tiles are built for B K-major only (F.linear's weights; no suite
   shape with B MN-major is B-bound where they would win), the same kernels, and so is a tile of
   BN 160 (B's MN-major panels are 64 wide). BM and BN are literals here. */
#define GK_GEMM_WG_ALL_LAYOUTS_16(...)
#define GK_GEMM_WG_ALL_LAYOUTS_64(...)
#define GK_GEMM_WG_ALL_LAYOUTS_128(...) __VA_ARGS__
#define GK_GEMM_WG_ALL_LAYOUTS_256(...) __VA_ARGS__
#define GK_GEMM_WG_ALL_LAYOUTS_N32(...)
#define GK_GEMM_WG_ALL_LAYOUTS_N64(...) __VA_ARGS__
#define GK_GEMM_WG_ALL_LAYOUTS_N128(...) __VA_ARGS__
#define GK_GEMM_WG_ALL_LAYOUTS_N160(...)
#define GK_GEMM_WG_ALL_LAYOUTS_N192(...) __VA_ARGS__
#define GK_GEMM_WG_ALL_LAYOUTS_N256(...) __VA_ARGS__
#define GK_GEMM_WG_OR_NULL_16(k) NULL
#define GK_GEMM_WG_OR_NULL_64(k) NULL
#define GK_GEMM_WG_OR_NULL_128(k) k
#define GK_GEMM_WG_OR_NULL_256(k) k
#define GK_GEMM_WG_OR_NULL_N32(k) NULL
#define GK_GEMM_WG_OR_NULL_N64(k) k
#define GK_GEMM_WG_OR_NULL_N128(k) k
#define GK_GEMM_WG_OR_NULL_N160(k) NULL
#define GK_GEMM_WG_OR_NULL_N192(k) k
#define GK_GEMM_WG_OR_NULL_N256(k) k

#define GK_GEMM_WG_KERNEL(kname, dt, TA, TB, BM, BN, STAGES, PERSIST)                                          \
    static __global__ void __launch_bounds__(GK_GEMM_WG_THREADS, 1)                                            \
        kname(const __grid_constant__ gk_gemm_args p, const __grid_constant__ CUtensorMap tma,                  \
              const __grid_constant__ CUtensorMap tmb, const __grid_constant__ CUtensorMap tma_last,           \
              const __grid_constant__ CUtensorMap tmb_last, const __grid_constant__ CUtensorMap tmd)           \
    {                                                                                                          \
        float acc[(BM) * (BN) / (GK_GEMM_PINGPONG(PERSIST) || GK_GEMM_WG_KSPLIT(BM, BN) ? 128 : 256)];         \
        gk_gemm_wg_run(&p, &tma, &tmb, &tma_last, &tmb_last, &tmd, dt, TA, TB, BM, BN, STAGES, PERSIST, 0, acc, acc); \
    }

#endif /* GK_GEMM_SM90_CUH */

/* ================================================================ implementation */

#if defined(__CUDACC__) && GK_GEMM_SM90 && (defined(GK_IMPLEMENTATION) || defined(GK_GEMM_IMPLEMENTATION)) && \
    defined(GK_GEMM_IMPLEMENTED) && !defined(GK_GEMM_SM90_IMPLEMENTED)
#define GK_GEMM_SM90_IMPLEMENTED

/* The shipped wgmma configurations (sm_90a builds on compute capability 9.0 GPUs), as
   X(tile name, BM, BN, STAGES, PERSIST, RATE): RATE is the tile's TFLOP/s at 8192^3 NT on the
   H200, which the dispatcher's time model (waves x tile FLOPs / RATE) divides by to pick among
   the unswapped tiles; a swapped tile (BM 16 or 64), taken for M <= 64, has its TFLOP/s at
   N = 28672 and M = BM there, unused. Figures: H200, gk_bench/RESULTS.md.
   - 128 x 256 x 64, 4 stages (192 KB) and 32 KB of TMA-store staging, persistent (PERSIST 3):
     the large shapes. Its consumers hand each tile to TMA stores and go on to the next, whose
     stages the producer has filled meanwhile: 4096^3 NT 169 us (cuBLAS 166), 8192^3 1282 (1294);
     a block a tile storing through shared memory took 205 / 1420.
   - 256 x 128 x 64, the same: fewer waves where N leaves a thin last tile column (4095 x 4097:
     528 tiles in 4 waves, against 544 in 5 for 128 x 256).
   - 128 x 128 x 64, 6 stages, the same: twice the tiles, for shapes of one wave or less of
     128 x 256 tiles (Llama-3-70B o, M = 256: 128 tiles in one wave).
   - 16 x 128 x 64 swapped (the MMAs compute D^T: 128 rows of B in their M, D's 16 rows in
     n = 16), 8 stages of 18 KB, persistent: decode, bound by the bytes of B, where 128-row tiles
     are mostly padding: x[16, 8192] w[28672, 8192]^T 129.2 us (cuBLAS 127.8; the 64 x 64
     mma.sync tile 147.1).
   - 64 x 128 x 64 swapped (n = 64), 7 stages of 24 KB, persistent, for 16 < M <= 64: M = 64,
     N = 8192 49.5 us (cuBLAS 46.2; the best unswapped tile and split 53.8).
   - 128 x 64 x 64, 8 stages of 24 KB: twice the blocks of 128 x 128 where both fill one wave,
     for B-bound shapes of 64 < M <= 128: M = 128, N = 8192 48.1 us (128 x 128 55.8; cuBLAS
     44.8). 426 TFLOP/s at 8192^3 (its B tile reused half as often), so the time model leaves it
     out of larger M.
   - 128 x 128 x 64 ping-pong with TMA stores (PERSIST 4), 6 stages: each consumer a whole tile,
     its epilogue under the other's MMAs; where the tiles outnumber the SMs and 128 x 256 leaves
     a wave part full (Llama-3-8B qkv M = 4096: 1.04x the 4-stage ping-pong storing through
     shared memory, which the FP8 kernels keep).
   - 128 x 256 x 64 in 2-block clusters (PERSIST 5): the first tile's kernel with each B tile
     loaded once for two vertically adjacent tiles, half by each block (TMA multicast). The
     dispatcher's twin of the first for whole K on an even count of tile rows and 3 waves of
     tiles or more: 8192^3 NT 1438 us (alone 1454), 4096^3 182 (183); with one tile row half
     its blocks would idle (128 x 28672 x 4096: 96.0 us against 71.6).
   - 128 x 192 x 64, 4 stages, as the first: three quarters of its work a tile, for shapes whose
     128 x 256 tiles leave a wave part full: Llama-3-70B qkv, M = 256, 108 tiles in one wave
     instead of 80, 70.8 us against 84.4 (cuBLAS 63.2); Llama-3-8B qkv, M = 512, 128 tiles
     instead of 96, 38.8 against 45.5 (cuBLAS 38.0). 840 TFLOP/s at 8192^3.
   - 64 x 64 x 64, 12 stages of 16 KB, a block a tile, B K-major only: each consumer the whole
     tile (m64n64) on every other k-tile, the two sums added through shared memory at the end
     (columns split, m64n32 each, each consumer reading all of A: up to 6% slower). Only where the
     measured table names it (299 TFLOP/s at 8192^3): B-bound
     shapes whose 128 x 64 tiles leave SMs idle or hold fewer bytes in flight, Llama-3-8B o at M =
     128 (128 blocks instead of 64) 20.6 us against 22.9 (cuBLAS 18.6); x[16, 4096] w[6144,
     4096]^T 23.2 against 24.7 (12 stages of 16 KB in flight a block, not 8 of the 128 x 64
     tile's 24, of which 8 KB of A rows past M are not loaded).
   - 128 x 160 x 64, 5 stages, as the first, B K-major only (B's MN-major panels are 64 wide),
     D in staged passes (TMA's boxes here are 64 columns): five eighths of its work a tile, for
     N = 10240 (64 columns of tiles) where 128 x 192 leaves a wave part full. Only where the
     measured table names it (766 TFLOP/s at 8192^3): Llama-3-70B qkv M = 256, 128 tiles in one
     wave, 64.4-65.5 us against 70.5-71.0 on 128 x 192 (cuBLAS 62.8-63.8); M = 512, 256 tiles in
     two, 115.0-115.9 against 129.2 (cuBLAS 109.6-110.0).
   - 128 x 64 x 64 ping-pong with TMA stores (PERSIST 4), 8 stages: one consumer runs a whole tile
     (8 HGMMAs a k-tile, as cuBLAS's 128 x 64 kernels do); with a tile a block the other consumer
     idles. The dispatcher's twin of the 128 x 64 tile for whole K in one wave (gk_gemm_plan_impl;
     in gemm_bench 1024^3 NT 9.7 us against 10.3, TT 9.7 against 10.8; in the sweep TN 10.0
     against 11.5 (cuBLAS 8.9), NN 10.8 against 12.0 on the swapped 64 x 128 the table named,
     1161 x 512 x 32 5.6-5.9 against 6.1-6.3). 418 TFLOP/s at 8192^3, so the time model, which
     leaves ping-pong tiles out of one wave, takes it only as that twin; the measured table also
     names it (Llama-3-70B down, M = 64: 128 tiles whole K, 1.08x cuBLAS in the sweep).
   - 64 x 32 x 64, 16 stages of 12 KB, as the 64 x 64 (the consumers split the k-tiles, wgmma
     m64n32), B K-major only: twice its blocks on the same bytes in flight. Only where the
     measured table names it (233 TFLOP/s at 8192^3): Llama-3-8B o and down at M = 16 and 64,
     128 blocks for N = 4096 where 64 x 64 runs 64 (in gemm_bench: o, M = 16, 18.5-18.6 us
     against 18.7-19.3 on the swapped 16 x 128; down, M = 64, 42.2-42.3 against 45.0-45.3 on
     64 x 128; cuBLAS runs 64 x 32 tiles there too, in clusters of two). */
#ifndef GK_GEMM_WG_CONFIGS
#define GK_GEMM_WG_CONFIGS(X)               \
    X(wg128x256x64_s4_pt, 128, 256, 4, 3, 858)  \
    X(wg256x128x64_s4_pt, 256, 128, 4, 3, 846)  \
    X(wg128x128x64_s6_pt, 128, 128, 6, 3, 653)  \
    X(wg16x128x64_s8_p, 16, 128, 8, 1, 58)      \
    X(wg64x128x64_s7_p, 64, 128, 7, 1, 223)     \
    X(wg128x64x64_s8, 128, 64, 8, 0, 426)       \
    X(wg128x128x64_s6_ppt, 128, 128, 6, 4, 779) \
    X(wg128x256x64_s4_ptc, 128, 256, 4, 5, 858) \
    X(wg128x192x64_s4_pt, 128, 192, 4, 3, 840)  \
    X(wg64x64x64_s12, 64, 64, 12, 0, 299)       \
    X(wg128x160x64_s5_pt, 128, 160, 5, 3, 766)  \
    X(wg128x64x64_s8_ppt, 128, 64, 8, 4, 418)   \
    X(wg64x32x64_s16, 64, 32, 16, 0, 233)
#endif
/* GK_GEMM_TUNED begin: written by gk_bench/sweep/gemm_tuned_table.py from gemm_suite_sweep (H200, 2026-12-04);
   X(M, N, K, trans_a, trans_b, tile or model, splits), then the speed against cuBLAS of the
   time model's pick -> of this entry's, each the mean of two rounds of the whole suite
   (gemm_table_merge.py --mean against the model's picks): an entry where it beat the pick by 5%.
   Seven entries of the table before it ("kept") stay where they still beat the pick at all, and
   four of splits under 512 of K (from its run with SWEEP_SPLIT_K=128, 2026-12-03), which these
   rounds did not time. Three rows the sweep named went back where gemm_bench, the table before
   and after in one call, ran them slower (gk_bench/RESULTS.md). Its picks are final: the twin
   rules of gk_gemm_plan_impl do not apply. */
#ifndef GK_GEMM_TUNED
#define GK_GEMM_TUNED(X) \
    X(1, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.969x cuBLAS */ \
    X(16, 6144, 4096, 0, 1, wg64x64x64_s12, 1) /* llama3-8b qkv NT: 0.894x -> 0.927x cuBLAS, kept */ \
    X(64, 6144, 4096, 0, 1, wg64x64x64_s12, 1) /* llama3-8b qkv NT: 0.813x -> 0.943x cuBLAS */ \
    X(128, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.964x cuBLAS */ \
    X(256, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.909x cuBLAS */ \
    X(512, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.961x cuBLAS */ \
    X(1024, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 1.003x cuBLAS */ \
    X(2048, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.988x cuBLAS */ \
    X(4096, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.991x cuBLAS */ \
    X(8192, 6144, 4096, 0, 1, model, 0) /* llama3-8b qkv NT: 0.985x cuBLAS */ \
    X(1, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.975x cuBLAS */ \
    X(16, 4096, 4096, 0, 1, wg64x32x64_s16, 1) /* llama3-8b o NT: 0.952x cuBLAS; 64 x 32 1.050x faster in the sweep, 1.02x in the bench */ \
    X(64, 4096, 4096, 0, 1, wg64x32x64_s16, 1) /* llama3-8b o NT: 0.841x -> 0.886x cuBLAS on 64 x 64; 64 x 32 1.04x faster in the sweep, 1.015x in the bench */ \
    X(128, 4096, 4096, 0, 1, wg64x64x64_s12, 1) /* llama3-8b o NT: 0.834x -> 0.933x cuBLAS */ \
    X(256, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 1.054x cuBLAS */ \
    X(512, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.961x cuBLAS */ \
    X(1024, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.986x cuBLAS */ \
    X(2048, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.991x cuBLAS */ \
    X(4096, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.994x cuBLAS */ \
    X(8192, 4096, 4096, 0, 1, model, 0) /* llama3-8b o NT: 0.988x cuBLAS */ \
    X(1, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 0.992x cuBLAS */ \
    X(16, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 1.004x cuBLAS */ \
    X(64, 28672, 4096, 0, 1, wg128x256x64_s4_pt, 1) /* llama3-8b gate/up NT: 0.988x -> 0.991x cuBLAS, kept */ \
    X(128, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 1.022x cuBLAS */ \
    X(256, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 0.991x cuBLAS */ \
    X(512, 28672, 4096, 0, 1, wg128x128x64_s6_ppt, 1) /* llama3-8b gate/up NT: 0.905x -> 0.969x cuBLAS */ \
    X(1024, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 0.999x cuBLAS */ \
    X(2048, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 0.997x cuBLAS */ \
    X(4096, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 0.993x cuBLAS */ \
    X(8192, 28672, 4096, 0, 1, model, 0) /* llama3-8b gate/up NT: 1.000x cuBLAS */ \
    X(1, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 1.047x cuBLAS */ \
    X(16, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 0.958x cuBLAS */ \
    X(64, 4096, 14336, 0, 1, wg64x32x64_s16, 1) /* llama3-8b down NT: 0.970x cuBLAS; 64 x 32 1.06x faster in the sweep, 1.07x in the bench */ \
    X(128, 4096, 14336, 0, 1, wg64x64x64_s12, 1) /* llama3-8b down NT: 0.863x -> 0.991x cuBLAS */ \
    X(256, 4096, 14336, 0, 1, wg128x128x64_s6_pt, 2) /* llama3-8b down NT: 0.990x -> 1.002x cuBLAS, kept */ \
    X(512, 4096, 14336, 0, 1, wg128x128x64_s6_ppt, 1) /* llama3-8b down NT: 0.980x -> 0.994x cuBLAS, kept */ \
    X(1024, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 0.997x cuBLAS */ \
    X(2048, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 0.990x cuBLAS */ \
    X(4096, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 0.997x cuBLAS */ \
    X(8192, 4096, 14336, 0, 1, model, 0) /* llama3-8b down NT: 0.990x cuBLAS */ \
    X(1, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 1.099x cuBLAS */ \
    X(16, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 1.054x cuBLAS */ \
    X(64, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 0.967x cuBLAS */ \
    X(128, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 0.982x cuBLAS */ \
    X(256, 10240, 8192, 0, 1, wg128x160x64_s5_pt, 1) /* llama3-70b qkv NT: 0.862x -> 0.934x cuBLAS */ \
    X(512, 10240, 8192, 0, 1, wg128x160x64_s5_pt, 1) /* llama3-70b qkv NT: 0.867x -> 0.958x cuBLAS */ \
    X(1024, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 0.987x cuBLAS */ \
    X(2048, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 1.011x cuBLAS */ \
    X(4096, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 1.005x cuBLAS */ \
    X(8192, 10240, 8192, 0, 1, model, 0) /* llama3-70b qkv NT: 1.003x cuBLAS */ \
    X(1, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 1.045x cuBLAS */ \
    X(16, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 0.983x cuBLAS */ \
    X(64, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 0.977x cuBLAS */ \
    X(128, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 0.972x cuBLAS */ \
    X(256, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 0.971x cuBLAS */ \
    X(512, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 1.009x cuBLAS */ \
    X(1024, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 0.999x cuBLAS */ \
    X(2048, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 1.004x cuBLAS */ \
    X(4096, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 1.000x cuBLAS */ \
    X(8192, 8192, 8192, 0, 1, model, 0) /* llama3-70b o NT: 1.006x cuBLAS */ \
    X(1, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 0.999x cuBLAS */ \
    X(16, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 1.008x cuBLAS */ \
    X(64, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 0.972x cuBLAS */ \
    X(128, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 1.012x cuBLAS */ \
    X(256, 57344, 8192, 0, 1, wg128x128x64_s6_ppt, 1) /* llama3-70b gate/up NT: 0.906x -> 0.946x cuBLAS, kept */ \
    X(512, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 0.996x cuBLAS */ \
    X(1024, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 1.010x cuBLAS */ \
    X(2048, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 0.979x cuBLAS */ \
    X(4096, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 1.021x cuBLAS */ \
    X(8192, 57344, 8192, 0, 1, model, 0) /* llama3-70b gate/up NT: 1.009x cuBLAS */ \
    X(1, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.044x cuBLAS */ \
    X(16, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 0.996x cuBLAS */ \
    X(64, 8192, 28672, 0, 1, wg128x64x64_s8_ppt, 1) /* llama3-70b down NT: 1.039x -> 1.083x cuBLAS, kept */ \
    X(128, 8192, 28672, 0, 1, wg64x128x64_s7_p, 1) /* llama3-70b down NT: 0.974x -> 1.024x cuBLAS */ \
    X(256, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.010x cuBLAS */ \
    X(512, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.010x cuBLAS */ \
    X(1024, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.004x cuBLAS */ \
    X(2048, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.007x cuBLAS */ \
    X(4096, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 0.951x cuBLAS (the old entry's 128 x 256 alone 0.977x in the sweep, 5% slower than the model's cluster tile in the bench) */ \
    X(8192, 8192, 28672, 0, 1, model, 0) /* llama3-70b down NT: 1.003x cuBLAS (128 x 256 alone 1.102x in the sweep, 2.5% slower than the model's cluster tile in the bench) */ \
    X(1024, 1024, 1024, 0, 0, model, 0) /* square nn NN: 1.191x cuBLAS */ \
    X(1024, 1024, 1024, 0, 1, model, 0) /* square nt NT: 1.053x cuBLAS */ \
    X(1024, 1024, 1024, 1, 0, model, 0) /* square tn TN: 0.942x cuBLAS */ \
    X(1024, 1024, 1024, 1, 1, model, 0) /* square tt TT: 0.950x cuBLAS */ \
    X(2048, 2048, 2048, 0, 0, model, 0) /* square nn NN: 0.968x cuBLAS */ \
    X(2048, 2048, 2048, 0, 1, model, 0) /* square nt NT: 0.974x cuBLAS */ \
    X(2048, 2048, 2048, 1, 0, model, 0) /* square tn TN: 0.971x cuBLAS */ \
    X(2048, 2048, 2048, 1, 1, model, 0) /* square tt TT: 0.965x cuBLAS */ \
    X(4096, 4096, 4096, 0, 0, model, 0) /* square nn NN: 0.988x cuBLAS */ \
    X(4096, 4096, 4096, 0, 1, model, 0) /* square nt NT: 0.989x cuBLAS */ \
    X(4096, 4096, 4096, 1, 0, model, 0) /* square tn TN: 0.992x cuBLAS */ \
    X(4096, 4096, 4096, 1, 1, model, 0) /* square tt TT: 0.987x cuBLAS */ \
    X(8192, 8192, 8192, 0, 0, model, 0) /* square nn NN: 1.013x cuBLAS */ \
    X(8192, 8192, 8192, 0, 1, model, 0) /* square nt NT: 1.009x cuBLAS */ \
    X(8192, 8192, 8192, 1, 0, model, 0) /* square tn TN: 1.010x cuBLAS */ \
    X(8192, 8192, 8192, 1, 1, model, 0) /* square tt TT: 1.014x cuBLAS */ \
    X(16384, 16384, 16384, 0, 0, model, 0) /* square nn NN: 1.012x cuBLAS */ \
    X(16384, 16384, 16384, 0, 1, model, 0) /* square nt NT: 1.003x cuBLAS */ \
    X(16384, 16384, 16384, 1, 0, model, 0) /* square tn TN: 0.988x cuBLAS */ \
    X(16384, 16384, 16384, 1, 1, model, 0) /* square tt TT: 1.024x cuBLAS */ \
    X(10922, 8, 8, 0, 1, model, 0) /* random 0 NT: 0.970x cuBLAS */ \
    X(16168, 8, 8, 0, 1, model, 0) /* random 1 NT: 0.992x cuBLAS */ \
    X(556, 32, 5608, 0, 1, wg64x64x64_s12, 8) /* random 2 NT: 0.873x -> 0.986x cuBLAS */ \
    X(9, 11056, 24, 0, 1, model, 0) /* random 3 NT: 0.821x cuBLAS */ \
    X(342, 8480, 776, 0, 1, model, 0) /* random 4 NT: 0.890x cuBLAS */ \
    X(7825, 968, 8, 0, 1, wg256x128x64_s4_pt, 1) /* random 5 NT: 0.961x -> 1.036x cuBLAS, kept (the cluster tile 1.075x in the sweep, 3% slower in the bench) */ \
    X(5181, 304, 24, 0, 1, model, 0) /* random 6 NT: 0.870x cuBLAS */ \
    X(6, 3816, 288, 0, 1, model, 0) /* random 7 NT: 1.045x cuBLAS (64 x 32 ahead in the sweep, 4% slower in the bench) */ \
    X(8976, 1824, 11240, 0, 1, model, 0) /* random 8 NT: 0.872x cuBLAS */ \
    X(244, 880, 384, 0, 1, model, 0) /* random 9 NT: 0.818x cuBLAS */ \
    X(12, 10768, 24, 0, 1, model, 0) /* random 10 NT: 0.876x cuBLAS */ \
    X(1959, 10552, 552, 0, 1, wg128x128x64_s6_ppt, 1) /* random 11 NT: 0.804x -> 0.824x cuBLAS, kept */ \
    X(4, 3008, 648, 0, 1, model, 0) /* random 12 NT: 0.841x cuBLAS */ \
    X(6, 8, 176, 0, 1, model, 0) /* random 13 NT: 0.894x cuBLAS */ \
    X(1, 7920, 136, 0, 1, model, 0) /* random 14 NT: 0.853x cuBLAS */ \
    X(151, 56, 608, 0, 1, model, 0) /* random 15 NT: 0.884x cuBLAS */ \
    X(7284, 16, 40, 0, 1, model, 0) /* random 16 NT: 0.982x cuBLAS */ \
    X(285, 16, 320, 0, 1, model, 0) /* random 17 NT: 0.871x cuBLAS */ \
    X(195, 64, 688, 0, 1, model, 0) /* random 18 NT: 0.832x cuBLAS */ \
    X(168, 8, 15832, 0, 1, wg64x64x64_s12, 16) /* random 19 NT: 0.910x -> 0.981x cuBLAS */ \
    X(32, 64, 48, 0, 1, model, 0) /* random 20 NT: 0.919x cuBLAS */ \
    X(8266, 10296, 144, 0, 1, model, 0) /* random 21 NT: 1.030x cuBLAS */ \
    X(49, 8, 5944, 0, 1, wg16x128x64_s8_p, 16) /* random 22 NT: splits under 512 of K, kept from 2026-12-03 (0.817x -> 0.985x) */ \
    X(5, 200, 32, 0, 1, model, 0) /* random 23 NT: 1.065x cuBLAS */ \
    X(24, 32, 8, 0, 1, model, 0) /* random 24 NT: 1.140x cuBLAS */ \
    X(1, 184, 2264, 0, 1, wg16x128x64_s8_p, 16) /* random 25 NT: splits under 512 of K, kept from 2026-12-03 (0.897x -> 0.988x) */ \
    X(533, 8, 840, 0, 1, model, 0) /* random 26 NT: 0.840x cuBLAS */ \
    X(2, 56, 3088, 0, 1, wg16x128x64_s8_p, 16) /* random 27 NT: splits under 512 of K, kept from 2026-12-03 (0.964x -> 1.042x) */ \
    X(7613, 88, 3696, 0, 1, wg64x128x64_s7_p, 1) /* random 28 NT: 0.815x -> 0.857x cuBLAS */ \
    X(126, 160, 288, 0, 1, model, 0) /* random 29 NT: 1.017x cuBLAS */ \
    X(15055, 1360, 96, 0, 1, model, 0) /* random 30 NT: 1.280x cuBLAS */ \
    X(1161, 512, 32, 0, 1, model, 0) /* random 31 NT: 1.070x cuBLAS */ \
    X(2018, 2848, 368, 0, 1, wg128x128x64_s6_ppt, 1) /* random 32 NT: 0.938x -> 0.996x cuBLAS */ \
    X(9398, 8, 128, 0, 1, wg128x64x64_s8_ppt, 1) /* random 33 NT: 0.841x -> 0.969x cuBLAS (the direct tile's rule came before the table) */ \
    X(472, 24, 8, 0, 1, model, 0) /* random 34 NT: 1.134x cuBLAS */ \
    X(825, 64, 16, 0, 1, model, 0) /* random 35 NT: 1.080x cuBLAS */ \
    X(2, 11912, 32, 0, 1, model, 0) /* random 36 NT: 1.071x cuBLAS */ \
    X(3, 8, 8, 0, 1, model, 0) /* random 37 NT: 1.093x cuBLAS */ \
    X(4472, 8, 16, 0, 1, model, 0) /* random 38 NT: 1.149x cuBLAS */ \
    X(3, 96, 8, 0, 1, model, 0) /* random 39 NT: 1.090x cuBLAS */ \
    X(28, 1251, 7919, 0, 1, model, 0) /* odd 0 NT: 1.209x cuBLAS */ \
    X(3277, 1, 39, 0, 1, model, 0) /* odd 1 NT: 1.176x cuBLAS */ \
    X(3783, 1, 7, 0, 1, model, 0) /* odd 2 NT: 1.010x cuBLAS */ \
    X(116, 41, 1453, 0, 1, wg16x128x64_s8_p, 8) /* odd 3 NT: splits under 512 of K, kept from 2026-12-03 (0.742x -> 0.961x) */ \
    X(1063, 91, 11, 0, 1, model, 0) /* odd 4 NT: 1.545x cuBLAS */ \
    X(9, 13, 3, 0, 1, model, 0) /* odd 5 NT: 0.918x cuBLAS */ \
    X(639, 5, 5603, 0, 1, wg64x64x64_s12, 8) /* odd 6 NT: 1.000x -> 1.051x cuBLAS */ \
    X(528, 3, 127, 0, 1, model, 0) /* odd 7 NT: 1.266x cuBLAS */ \
    X(350, 3, 113, 0, 1, model, 0) /* odd 8 NT: 1.336x cuBLAS */ \
    X(1, 1697, 1, 0, 1, model, 0) /* odd 9 NT: 1.105x cuBLAS */
#endif
/* GK_GEMM_TUNED end */
#define GK_GEMM_WG_X_DEFINE(tile, BM, BN, STAGES, PERSIST, RATE)                   \
    GK_DEFINE_GEMM_WGMMA(gk_gemm_bf16_##tile, GK_BF16, BM, BN, STAGES, PERSIST, RATE) \
    GK_DEFINE_GEMM_WGMMA(gk_gemm_f16_##tile, GK_F16, BM, BN, STAGES, PERSIST, RATE)
#define GK_GEMM_WG_X_BF16(tile, BM, BN, STAGES, PERSIST, RATE) gk_gemm_bf16_##tile##_kernels,
#define GK_GEMM_WG_X_F16(tile, BM, BN, STAGES, PERSIST, RATE) gk_gemm_f16_##tile##_kernels,
#define GK_GEMM_WG_X_CONFIG(tile, BM, BN, STAGES, PERSIST, RATE) &gk_gemm_bf16_##tile##_config,
GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_DEFINE)

static const gk_gemm_wg_kernel *const gk_gemm_wg_kernel_table[2][64] = {{GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_BF16)},
                                                                        {GK_GEMM_WG_CONFIGS(GK_GEMM_WG_X_F16)}};

/* 1 in the image of a build that has sm_90a code (the wgmma kernels are empty otherwise). */
static __device__ int gk_gemm_wg_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif

/* The wgmma kernels can run: this build holds sm_90a code and the current device is compute
   capability 9.0. Asked once per device (the first 32; others every call). */
static int gk_gemm_wg_ready(void)
{
    static unsigned known, ready;
    return gk_sm90a_ready(&gk_gemm_wg_built, &known, &ready);
}

/* A [rows, cols] operand of dt values, stride ld (16 bytes' multiple, 16-byte aligned base), as
   a TMA tensor map of boxes 128 bytes wide (the 128-byte swizzle) and box_rows high, zero-filled
   past the edges. The driver's encoder is found through the runtime: no -lcuda. */
static cudaError_t gk_gemm_tensor_map(const char *fn, CUtensorMap *map, const void *x, int dt, int64_t rows,
                                      int64_t cols, int64_t ld, int box_rows)
{
    const int64_t dims[2] = {cols, rows}, strides[1] = {ld};
    const int box[2] = {128 / gk_dtype_size(dt), box_rows};
    return gk_tma_map(fn, map, x, dt, 2, dims, strides, box);
}

/* An MMA operand's tensor maps: K-major ([rows, K], tiles of tile_rows rows) boxes of tile_rows
   rows, and in *last boxes of the last tile row's rows (rows % tile_rows, when not 0), so that no
   box row lies past the operand (gk_gemm_wg_run); MN-major, [64][64] panels, *last unused. */
static cudaError_t gk_gemm_tensor_maps(const char *fn, CUtensorMap *map, CUtensorMap *last, const void *x, int dt,
                                       int64_t rows, int64_t cols, int64_t ld, int k_major, int tile_rows)
{
    GK_TRY(gk_gemm_tensor_map(fn, map, x, dt, rows, cols, ld, k_major ? tile_rows : 64));
    *last = *map;
    if (k_major && rows % tile_rows) GK_TRY(gk_gemm_tensor_map(fn, last, x, dt, rows, cols, ld, (int)(rows % tile_rows)));
    return cudaSuccess;
}

/* Clusters of wgmma configuration wg (cfg, 2 blocks a cluster) the GPU holds at once for layout,
   0 for none; asked once per kernel (its shared-memory opt-in first: the count depends on it). */
static unsigned gk_gemm_wg_attr_set[2][64][4]; /* the kernels' shared-memory opt-ins done (gk_smem_opt_in) */

static int gk_gemm_wg_clusters(const char *fn, int wg, const gk_gemm_config *cfg, int in_dtype, int layout)
{
    const void *kern = (const void *)gk_gemm_wg_kernel_table[in_dtype == GK_F16][wg][layout];
    static int fits[2][64][4];
    if (gk_smem_opt_in(fn, kern, cfg->smem_bytes, &gk_gemm_wg_attr_set[in_dtype == GK_F16][wg][layout]) != cudaSuccess)
        return 0;
    int *f = &fits[in_dtype == GK_F16][wg][layout];
    return gk_clusters_fit(kern, cfg->threads, cfg->smem_bytes, 2, f) ? *f : 0;
}

/* Launches wgmma configuration wg (cfg) for layout on the prepared arguments: its shared-memory
   opt-in, the operands' tensor maps, the kernel. */
static cudaError_t gk_gemm_wg_launch(const char *fn, int wg, const gk_gemm_config *cfg, int in_dtype, int layout,
                                     dim3 grid, gk_gemm_args p, int trans_a, int trans_b, int64_t rows_a,
                                     int64_t cols_a, int64_t rows_b, int64_t cols_b, cudaStream_t stream)
{
    const void *kern = (const void *)gk_gemm_wg_kernel_table[in_dtype == GK_F16][wg][layout];
    GK_TRY(gk_smem_opt_in(fn, kern, cfg->smem_bytes, &gk_gemm_wg_attr_set[in_dtype == GK_F16][wg][layout]));
    CUtensorMap ma, mb, ma_last, mb_last;
    const int cl = GK_GEMM_CLUSTER(cfg->persistent); /* a block of a 2-block cluster loads half of B's rows */
    if (cfg->swap) {
        GK_TRY(gk_gemm_tensor_maps(fn, &ma, &ma_last, p.b, in_dtype, rows_b, cols_b, p.ldb, trans_b, cfg->bn));
        GK_TRY(gk_gemm_tensor_maps(fn, &mb, &mb_last, p.a, in_dtype, rows_a, cols_a, p.lda, 1, cfg->bm));
    } else {
        GK_TRY(gk_gemm_tensor_maps(fn, &ma, &ma_last, p.a, in_dtype, rows_a, cols_a, p.lda, !trans_a, cfg->bm));
        GK_TRY(gk_gemm_tensor_maps(fn, &mb, &mb_last, p.b, in_dtype, rows_b, cols_b, p.ldb, trans_b, cfg->bn / cl));
    }
    /* PERSIST 3 and 4 store D through TMA where it is 16-bit, 16-byte aligned rows, no C, no split
       and at most ReLU; otherwise in staged passes */
    CUtensorMap md = ma;
    /* (TMA writes whole 16-byte pieces of a row: N a multiple of 8, or the last one would spill;
       its boxes are 64 columns: BN 160 stores in staged passes) */
    p.tma_d = cfg->persistent >= 3 && cfg->bn % 64 == 0 && !p.partial && p.beta == 0.0f && (p.d_dtype == GK_BF16 || p.d_dtype == GK_F16) &&
              p.act <= GK_ACT_RELU && p.ldd % 8 == 0 && p.n % 8 == 0 && gk_is_aligned(p.d, 16);
    if (p.tma_d) GK_TRY(gk_gemm_tensor_map(fn, &md, p.d, p.d_dtype, p.m, p.n, p.ldd, 64));
    if (cl == 2) {
        /* a cluster a pair of tiles (a split each), at most as many as are resident at once */
        const int fits = gk_gemm_wg_clusters(fn, wg, cfg, in_dtype, layout);
        if (!fits)
            return gk__fail(cudaErrorInvalidConfiguration, fn, "configuration %s: no cluster of 2 of its blocks fits this GPU",
                            cfg->name);
        const int64_t pairs = gk_ceil_div(p.tiles_m, 2) * p.tiles_n * gk_ceil_div(p.k, p.k_per_split);
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t lc =
            gk_cluster_launch_config(&attr, 2 * (pairs < fits ? pairs : fits), cfg->threads, cfg->smem_bytes, 2, stream);
        void *args[6] = {&p, &ma, &mb, &ma_last, &mb_last, &md};
        GK_TRY(cudaLaunchKernelExC(&lc, kern, args));
        return gk_check_launch(fn);
    }
    ((gk_gemm_wg_kernel)kern)<<<grid, cfg->threads, cfg->smem_bytes, stream>>>(p, ma, mb, ma_last, mb_last, md);
    return gk_check_launch(fn);
}

#endif /* gemm sm90 implementation */
